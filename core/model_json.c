/*
 * model_json.c -- reading the "gapsim-model" JSON description.
 *
 * Reading runs in stages so that cheap mistakes are reported before anything
 * expensive happens and no allocation is driven by an unchecked number:
 *   1. cJSON parse (syntax errors with line and column), top-level keys,
 *      format, version, name, joint, units;
 *   2. array lengths of parts / nodes / pairs / fasteners against the limits,
 *      then gs_model_new with those counts;
 *   3. parts: ndof against the block limit; an inline K is checked row by row
 *      (count, length, numbers) before its block is allocated and filled; a
 *      file reference is only checked (relative, no "..", extension) here;
 *   4. nodes, pairs, fasteners, inline f: types and index ranges, each error
 *      naming the columnar path ("nodes.dof[17]"); nodes may instead be
 *      given by FE label (nodes.label + nodes.component);
 *   5. referenced files (.npy header checked against ndof before allocating;
 *      other formats through matrix_io.h, keeping their row labels; one
 *      file per thread: model_json_files.c), then
 *      5b: the row of every labelled node in its part's matrix;
 *   6. gs_model_validate (duplicates, symmetry, finiteness ...).
 * Arrays are walked through cJSON's linked list (never cJSON_GetArrayItem,
 * which is O(i) per call). Cost: O(JSON size + sum ndof^2 + m log m).
 * The writer is model_json_write.c.
 */
#include "model_json_impl.h"
#include "json_parse.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "matrix_io.h"
#include "normals.h"
#include "utf8.h"

static void mj_labels_free(mj_labels *lb, int np)
{
    free(lb->label);
    free(lb->comp);
    for (int b = 0; b < np && lb->rlabel; b++) {
        free(lb->rlabel[b]);
        free(lb->rdof[b]);
    }
    free(lb->rlabel);
    free(lb->rdof);
    free(lb->normal);
}

void gs_model_limits_default(gs_model_limits *lim)
{
    lim->max_block_elems = (size_t)20000 * 20000;
    lim->max_parts = 64;
    lim->max_nodes = 200000;
    lim->max_pairs = 100000;
}

/* ---- small helpers ------------------------------------------------------- */

static const char *mj_type(const cJSON *v)
{
    if (!v)
        return "nothing";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "an invalid value";
}

/* "got 1.5" / "got a string" */
static const char *mj_got(char *out, size_t cap, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        snprintf(out, cap, "%.17g", v->valuedouble);
    else
        snprintf(out, cap, "%s", mj_type(v));
    return out;
}

static const cJSON *mj_get(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static size_t mj_count(const cJSON *arr)
{
    size_t n = 0;
    for (const cJSON *it = arr->child; it; it = it->next)
        n++;
    return n;
}

/* Reject unknown and repeated keys of obj (at most 32 allowed keys). */
static gs_err mj_keys(const cJSON *obj, const char *path, const char *const *allowed,
                      gs_error *err)
{
    uint32_t seen = 0;
    char key[48], field[96];
    for (const cJSON *it = obj->child; it; it = it->next) {
        int k = -1;
        for (int a = 0; allowed[a]; a++)
            if (it->string && strcmp(it->string, allowed[a]) == 0) {
                k = a;
                break;
            }
        mj_show(key, sizeof key, it->string ? it->string : "");
        snprintf(field, sizeof field, "%s%s%s", path, *path ? "." : "", key);
        if (k < 0) {
            char list[200] = "";
            for (int a = 0; allowed[a]; a++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", a ? ", " : "", allowed[a]);
            }
            return gs_errorf(err, GS_ERR_INVALID, field, "unknown key '%s' (allowed: %s)", key,
                             list);
        }
        if (seen & (UINT32_C(1) << k))
            return gs_errorf(err, GS_ERR_INVALID, field, "duplicate key '%s'", key);
        seen |= UINT32_C(1) << k;
    }
    return GS_OK;
}

static gs_err mj_need_object(const cJSON *v, const char *field, gs_error *err)
{
    if (!v)
        return gs_errorf(err, GS_ERR_INVALID, field, "missing key '%s'", field);
    if (!cJSON_IsObject(v))
        return gs_errorf(err, GS_ERR_INVALID, field, "expected an object, got %s", mj_type(v));
    return GS_OK;
}

/* v must be an array of exactly `want` items (want < 0: any count <= max). */
static gs_err mj_array(const cJSON *v, const char *field, const char *what, long want, long max,
                       int *count, gs_error *err)
{
    if (!v)
        return gs_errorf(err, GS_ERR_INVALID, field, "missing key '%s'", field);
    if (!cJSON_IsArray(v))
        return gs_errorf(err, GS_ERR_INVALID, field, "expected an array of %s, got %s", what,
                         mj_type(v));
    size_t n = mj_count(v);
    if (want >= 0 && n != (size_t)want)
        return gs_errorf(err, GS_ERR_DIM, field, "expected an array of %ld %s, got %zu", want,
                         what, n);
    if (want < 0 && n > (size_t)max)
        return gs_errorf(err, GS_ERR_LIMIT, field, "%zu %s exceed the limit of %ld", n, what, max);
    if (count)
        *count = (int)n;
    return GS_OK;
}

static gs_err mj_num(const cJSON *v, const char *field, double *out, gs_error *err)
{
    if (!cJSON_IsNumber(v))
        return gs_errorf(err, GS_ERR_INVALID, field, "expected a number, got %s", mj_type(v));
    if (!isfinite(v->valuedouble))
        return gs_errorf(err, GS_ERR_NONFINITE, field, "number beyond the double range");
    *out = v->valuedouble;
    return GS_OK;
}

/* An integer in [lo, hi] (GS_ERR_RANGE outside, with `hint` appended). */
static gs_err mj_int(const cJSON *v, const char *field, long lo, long hi, const char *hint,
                     int *out, gs_error *err)
{
    char got[40];
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble != floor(v->valuedouble))
        return gs_errorf(err, GS_ERR_INVALID, field, "expected an integer, got %s",
                         mj_got(got, sizeof got, v));
    double d = v->valuedouble;
    if (d < (double)lo || d > (double)hi)
        return gs_errorf(err, GS_ERR_RANGE, field, "%.17g out of range [%ld, %ld]%s", d, lo, hi,
                         hint ? hint : "");
    *out = (int)d;
    return GS_OK;
}

static gs_err mj_string(const cJSON *v, const char *field, size_t cap, const char **out,
                        gs_error *err)
{
    if (!cJSON_IsString(v) || !v->valuestring)
        return gs_errorf(err, GS_ERR_INVALID, field, "expected a string, got %s", mj_type(v));
    const size_t len = strlen(v->valuestring);
    if (len >= cap)
        return gs_errorf(err, GS_ERR_INVALID, field, "string longer than %zu bytes", cap - 1);
    if (!gs_utf8_valid(v->valuestring, len)) /* names are shown again: JSON answers, files */
        return gs_errorf(err, GS_ERR_INVALID, field, "not valid UTF-8");
    *out = v->valuestring;
    return GS_OK;
}

/* 1-based line and column of position p in text (for syntax errors). */
static void mj_line_col(const char *text, size_t len, const char *p, long *line, long *col)
{
    *line = 1;
    *col = 1;
    if (!p || p < text || p > text + len)
        return;
    for (const char *q = text; q < p; q++) {
        if (*q == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* ---- file references ------------------------------------------------------ */

/* A file reference: "name" or {"file": "name", "format": "...", "matrix": "..."}
 * (matrix only with nastran-dmig; a vector takes npy or matrix-market only).
 * Checked here; loaded in stage 5. */
static gs_err mj_fileref(const mj_ctx *cx, const cJSON *v, const char *field, int vector,
                         mj_ref *out, gs_error *err)
{
    static const char *const keys[] = {"file", "format", "matrix", NULL};
    char sub[128], full[PATH_MAX], show[48];
    gs_err rc;
    out->format = out->matrix = NULL;
    if (cJSON_IsString(v)) {
        out->ref = v->valuestring;
        return gs_mj_resolve(cx, out->ref, field, full, err);
    }
    if ((rc = mj_keys(v, field, keys, err)) != GS_OK)
        return rc;
    snprintf(sub, sizeof sub, "%.96s.file", field);
    const cJSON *f = mj_get(v, "file");
    if (!f)
        return gs_errorf(err, GS_ERR_INVALID, sub, "missing key 'file'");
    if ((rc = mj_string(f, sub, PATH_MAX, &out->ref, err)) != GS_OK ||
        (rc = gs_mj_resolve(cx, out->ref, sub, full, err)) != GS_OK)
        return rc;
    snprintf(sub, sizeof sub, "%.96s.format", field);
    if ((f = mj_get(v, "format"))) {
        if ((rc = mj_string(f, sub, 64, &out->format, err)) != GS_OK)
            return rc;
        if (!gs_matfmt_find(out->format))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, sub, "unknown format '%s' (known: %s)",
                             mj_show(show, sizeof show, out->format), gs_matfmt_names());
        if (vector && strcmp(out->format, "npy") && strcmp(out->format, "matrix-market"))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, sub, "a vector is read from a npy or "
                             "matrix-market file, not %s", out->format);
    }
    snprintf(sub, sizeof sub, "%.96s.matrix", field);
    if ((f = mj_get(v, "matrix"))) {
        if ((rc = mj_string(f, sub, 9, &out->matrix, err)) != GS_OK)
            return rc;
        if (!out->format || strcmp(out->format, "nastran-dmig") != 0)
            return gs_errorf(err, GS_ERR_INVALID, sub, "'matrix' names a DMIG matrix: it needs "
                             "\"format\": \"nastran-dmig\"");
    }
    return GS_OK;
}

/* ---- stages ---------------------------------------------------------------- */

static gs_err mj_header(const cJSON *root, char *name, size_t name_cap, gs_joint *joint,
                        gs_error *err)
{
    static const char *const top[] = {"format", "version", "name",  "joint", "units", "parts",
                                       "nodes",  "pairs",   "fasteners", "f", "comment", NULL};
    static const char *const unit_keys[] = {"length", "force", NULL};
    char got[80];
    gs_err rc;
    const cJSON *v = mj_get(root, "format");
    if (!v)
        return gs_errorf(err, GS_ERR_INVALID, "format", "missing key 'format' "
                         "(expected \"gapsim-model\")");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, "gapsim-model") != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "format", "not a gapsim model: expected "
                         "\"gapsim-model\", got %s",
                         cJSON_IsString(v) ? mj_show(got, sizeof got, v->valuestring) : mj_type(v));
    int version;
    v = mj_get(root, "version");
    if (!v)
        return gs_errorf(err, GS_ERR_INVALID, "version", "missing key 'version' (expected 1)");
    if ((rc = mj_int(v, "version", INT_MIN, INT_MAX, NULL, &version, err)) != GS_OK)
        return rc;
    if (version != 1)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "version",
                         "model format version %d not supported (this build reads version 1)",
                         version);
    if ((rc = mj_keys(root, "", top, err)) != GS_OK)
        return rc;
    name[0] = '\0';
    if ((v = mj_get(root, "name"))) {
        const char *s = NULL;
        if ((rc = mj_string(v, "name", name_cap, &s, err)) != GS_OK)
            return rc;
        strcpy(name, s);
    }
    *joint = GS_JOINT_AUTO;
    if ((v = mj_get(root, "joint"))) {
        if (!cJSON_IsString(v))
            return gs_errorf(err, GS_ERR_INVALID, "joint", "expected \"simple\", \"sandwich\" or "
                             "\"auto\", got %s", mj_type(v));
        if (strcmp(v->valuestring, "simple") == 0)
            *joint = GS_JOINT_SIMPLE;
        else if (strcmp(v->valuestring, "sandwich") == 0)
            *joint = GS_JOINT_SANDWICH;
        else if (strcmp(v->valuestring, "auto") != 0)
            return gs_errorf(err, GS_ERR_INVALID, "joint", "expected \"simple\", \"sandwich\" or "
                             "\"auto\", got '%s'", mj_show(got, sizeof got, v->valuestring));
    }
    if ((v = mj_get(root, "units"))) {
        if ((rc = mj_need_object(v, "units", err)) != GS_OK ||
            (rc = mj_keys(v, "units", unit_keys, err)) != GS_OK)
            return rc;
        const cJSON *u = mj_get(v, "length");
        if (u && (!cJSON_IsString(u) || strcmp(u->valuestring, "mm") != 0))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, "units.length",
                             "length unit must be \"mm\", got %s",
                             cJSON_IsString(u) ? mj_show(got, sizeof got, u->valuestring)
                                               : mj_type(u));
        u = mj_get(v, "force");
        if (u && (!cJSON_IsString(u) || strcmp(u->valuestring, "N") != 0))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, "units.force",
                             "force unit must be \"N\", got %s",
                             cJSON_IsString(u) ? mj_show(got, sizeof got, u->valuestring)
                                               : mj_type(u));
    }
    return GS_OK;
}

/* Stage 3 for part b: name, ndof, inline K (checked, then filled) or a file
 * reference (checked only; loaded in stage 5). */
static gs_err mj_part(const mj_ctx *cx, const cJSON *pj, gs_model *mdl, int b, mj_ref *refs,
                      int *nrefs, gs_error *err)
{
    static const char *const keys[] = {"name", "ndof", "K", "storage", NULL};
    char path[48], field[96];
    snprintf(path, sizeof path, "parts[%d]", b);
    gs_err rc;
    if (!cJSON_IsObject(pj))
        return gs_errorf(err, GS_ERR_INVALID, path, "expected an object, got %s", mj_type(pj));
    if ((rc = mj_keys(pj, path, keys, err)) != GS_OK)
        return rc;
    gs_part *pt = &mdl->parts[b];
    const cJSON *v = mj_get(pj, "name");
    if (v) {
        const char *s = NULL;
        snprintf(field, sizeof field, "%s.name", path);
        if ((rc = mj_string(v, field, sizeof pt->name, &s, err)) != GS_OK)
            return rc;
        strcpy(pt->name, s);
    }
    int nd;
    snprintf(field, sizeof field, "%s.ndof", path);
    if (!(v = mj_get(pj, "ndof")))
        return gs_errorf(err, GS_ERR_INVALID, field, "missing key 'ndof'");
    if ((rc = mj_int(v, field, 1, INT_MAX, NULL, &nd, err)) != GS_OK)
        return rc;
    int storage = MJ_AUTO;
    snprintf(field, sizeof field, "%s.storage", path);
    if ((v = mj_get(pj, "storage"))) {
        const char *st = NULL;
        if ((rc = mj_string(v, field, 8, &st, err)) != GS_OK)
            return rc;
        if (!strcmp(st, "dense"))
            storage = MJ_DENSE;
        else if (!strcmp(st, "sparse"))
            storage = MJ_SPARSE;
        else if (strcmp(st, "auto"))
            return gs_errorf(err, GS_ERR_INVALID, field, "expected \"dense\", \"sparse\" or "
                             "\"auto\", got \"%s\"", st);
    }
    snprintf(field, sizeof field, "%s.K", path);
    const cJSON *K = mj_get(pj, "K");
    if (!K)
        return gs_errorf(err, GS_ERR_INVALID, field, "missing key 'K'");
    if (cJSON_IsString(K) || cJSON_IsObject(K)) {
        mj_ref *r = &refs[*nrefs];
        if ((rc = mj_fileref(cx, K, field, 0, r, err)) != GS_OK)
            return rc;
        r->part = b;
        r->storage = storage;
        pt->ndof = nd; /* block allocated in stage 5, once the file's header is checked */
        ++*nrefs;
        return GS_OK;
    }
    if (!cJSON_IsArray(K))
        return gs_errorf(err, GS_ERR_INVALID, field,
                         "expected %d rows of %d numbers, a file name or a file reference object, "
                         "got %s", nd, nd, mj_type(K));
    if (storage == MJ_SPARSE)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, field, "an inline K is dense: \"storage\": "
                         "\"sparse\" needs a sparse matrix file");
    if ((size_t)nd > cx->lim.max_block_elems / (size_t)nd) {
        snprintf(field, sizeof field, "%s.ndof", path);
        return gs_errorf(err, GS_ERR_LIMIT, field,
                         "a block of %d x %d exceeds the limit of %zu elements", nd, nd,
                         cx->lim.max_block_elems);
    }
    /* check every row before allocating ndof^2 doubles */
    if ((rc = mj_array(K, field, "rows", nd, 0, NULL, err)) != GS_OK)
        return rc;
    int i = 0;
    for (const cJSON *row = K->child; row; row = row->next, i++) {
        char rf[96];
        snprintf(rf, sizeof rf, "%.60s[%d]", field, i);
        if ((rc = mj_array(row, rf, "numbers", nd, 0, NULL, err)) != GS_OK)
            return rc;
        int j = 0;
        for (const cJSON *x = row->child; x; x = x->next, j++) {
            double d;
            char ef[96];
            snprintf(ef, sizeof ef, "%.60s[%d][%d]", field, i, j);
            if ((rc = mj_num(x, ef, &d, err)) != GS_OK)
                return rc;
        }
    }
    if ((rc = gs_model_alloc_block(mdl, b, nd, err)) != GS_OK)
        return rc;
    i = 0;
    for (const cJSON *row = K->child; row; row = row->next, i++) {
        int j = 0;
        for (const cJSON *x = row->child; x; x = x->next, j++)
            pt->K[(size_t)j * (size_t)nd + (size_t)i] = x->valuedouble;
    }
    return GS_OK;
}

/* nodes.label[v] / nodes.component[v]: integers checked here, matched to rows in stage 5b. */
static gs_err mj_node_labels(const cJSON *nj, int nn, mj_labels *lb, gs_error *err)
{
    char field[96];
    gs_err rc;
    const cJSON *lab = mj_get(nj, "label"), *cmp = mj_get(nj, "component");
    if (mj_get(nj, "dof"))
        return gs_errorf(err, GS_ERR_INVALID, "nodes.label", "give nodes.dof (rows) or "
                         "nodes.label with nodes.component (FE node labels), not both");
    if (lb->with_normals && cmp)
        return gs_errorf(err, GS_ERR_INVALID, "nodes.component", "with pair normals a node "
                         "uses its translations 1, 2, 3: leave out nodes.component");
    if (!cmp && !lb->with_normals)
        return gs_errorf(err, GS_ERR_INVALID, "nodes.component", "missing key 'component' "
                         "(the DOF of each labelled node: 1..6, 0 for a scalar point)");
    if ((rc = mj_array(lab, "nodes.label", "integers", nn, 0, NULL, err)) != GS_OK ||
        (cmp && (rc = mj_array(cmp, "nodes.component", "integers", nn, 0, NULL, err)) != GS_OK))
        return rc;
    lb->label = malloc((size_t)(nn ? nn : 1) * sizeof *lb->label);
    lb->comp = malloc((size_t)(nn ? nn : 1) * sizeof *lb->comp);
    if (!lb->label || !lb->comp)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d node labels", nn);
    const cJSON *l = lab->child, *c = cmp ? cmp->child : NULL;
    for (int v = 0; v < nn; v++, l = l->next, c = c ? c->next : NULL) {
        snprintf(field, sizeof field, "nodes.label[%d]", v);
        char got[40];
        if (!cJSON_IsNumber(l) || !isfinite(l->valuedouble) ||
            l->valuedouble != floor(l->valuedouble))
            return gs_errorf(err, GS_ERR_INVALID, field, "expected an integer, got %s",
                             mj_got(got, sizeof got, l));
        if (l->valuedouble < 0 || l->valuedouble > 9007199254740992.0)
            return gs_errorf(err, GS_ERR_RANGE, field, "%.17g out of range [0, 2^53]",
                             l->valuedouble);
        lb->label[v] = (int64_t)l->valuedouble;
        lb->comp[v] = 0;
        snprintf(field, sizeof field, "nodes.component[%d]", v);
        if (c && (rc = mj_int(c, field, 0, 99, NULL, &lb->comp[v], err)) != GS_OK)
            return rc;
    }
    return GS_OK;
}

/* Stage 5b: the row of every labelled node in its part's matrix; with pair
 * normals, the rows of its translations, rotated onto its normal
 * (normals.h). O(n_nodes * ndof) (a scan of the part's row labels per node). */
static gs_err mj_match_labels(gs_model *mdl, const mj_labels *lb, gs_error *err)
{
    char field[48];
    int *rows3 = NULL;
    if (lb->with_normals &&
        !(rows3 = malloc((size_t)(mdl->n_nodes ? mdl->n_nodes : 1) * 3 * sizeof *rows3)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d nodes", mdl->n_nodes);
    for (int v = 0; v < mdl->n_nodes; v++) {
        const int b = mdl->nodes[v].part, nd = mdl->parts[b].ndof;
        snprintf(field, sizeof field, "nodes.label[%d]", v);
        if (!lb->rlabel[b]) {
            free(rows3);
            return gs_errorf(err, GS_ERR_INVALID, field, "parts[%d].K names its rows by index, "
                             "not by node label (inline, npy, matrix-market, scipy-npz or "
                             "abaqus-coordinate): give nodes.dof instead", b);
        }
        int row = -1;
        if (lb->with_normals) { /* translations 1, 2, 3, rotated onto the normal below */
            for (int q = 0; q < 3; q++)
                rows3[3 * v + q] = -1;
            for (int r = 0; r < nd; r++)
                if (lb->rlabel[b][r] == lb->label[v] && lb->rdof[b][r] >= 1 &&
                    lb->rdof[b][r] <= 3)
                    rows3[3 * v + lb->rdof[b][r] - 1] = r;
            continue;
        }
        for (int r = 0; r < nd && row < 0; r++)
            if (lb->rlabel[b][r] == lb->label[v] && lb->rdof[b][r] == lb->comp[v])
                row = r;
        if (row < 0)
            return gs_errorf(err, GS_ERR_RANGE, field, "node %lld component %d is not a row of "
                             "parts[%d].K", (long long)lb->label[v], lb->comp[v], b);
        mdl->nodes[v].dof = row;
    }
    if (!rows3)
        return GS_OK;
    gs_err rc = gs_model_apply_normals(mdl, rows3, lb->normal, lb->label, err);
    free(rows3);
    return rc;
}

/* pairs.nx / ny / nz: m numbers each (all three or none). */
static gs_err mj_pair_normals(const cJSON *pj, int m, mj_labels *lb, gs_error *err)
{
    static const char *const key[3] = {"nx", "ny", "nz"};
    char field[48];
    gs_err rc;
    lb->normal = malloc((size_t)(m ? m : 1) * 3 * sizeof *lb->normal);
    if (!lb->normal)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d normals", m);
    for (int c = 0; c < 3; c++) {
        const cJSON *arr = mj_get(pj, key[c]);
        snprintf(field, sizeof field, "pairs.%s", key[c]);
        if (!arr)
            return gs_errorf(err, GS_ERR_INVALID, field, "missing key '%s': a pair normal has "
                             "the three components nx, ny, nz", key[c]);
        if ((rc = mj_array(arr, field, "numbers", m, 0, NULL, err)) != GS_OK)
            return rc;
        int k = 0;
        for (const cJSON *x = arr->child; x; x = x->next, k++) {
            snprintf(field, sizeof field, "pairs.%s[%d]", key[c], k);
            if ((rc = mj_num(x, field, &lb->normal[3 * k + c], err)) != GS_OK)
                return rc;
        }
    }
    if (!lb->label)
        return gs_errorf(err, GS_ERR_INVALID, "pairs.nx", "pair normals need the nodes given "
                         "by nodes.label (their translations 1, 2, 3 are found by label)");
    return GS_OK;
}

static gs_err mj_nodes(const cJSON *nj, gs_model *mdl, mj_labels *lb, gs_error *err)
{
    static const char *const coord[3] = {"x", "y", "z"};
    char field[96];
    gs_err rc;
    const int nn = mdl->n_nodes;
    const cJSON *part = mj_get(nj, "part"), *dof = mj_get(nj, "dof");
    const int by_label = mj_get(nj, "label") != NULL;
    if (by_label && (rc = mj_node_labels(nj, nn, lb, err)) != GS_OK)
        return rc;
    if (!by_label && mj_get(nj, "component"))
        return gs_errorf(err, GS_ERR_INVALID, "nodes.component", "nodes.component goes with "
                         "nodes.label");
    if (!by_label && (rc = mj_array(dof, "nodes.dof", "integers", nn, 0, NULL, err)) != GS_OK)
        return rc;
    const cJSON *p = part->child, *d = by_label ? NULL : dof->child;
    for (int v = 0; v < nn; v++, p = p->next, d = d ? d->next : NULL) {
        gs_node *nd = &mdl->nodes[v];
        snprintf(field, sizeof field, "nodes.part[%d]", v);
        if ((rc = mj_int(p, field, 0, mdl->n_parts - 1, " (a part index)", &nd->part, err)) != GS_OK)
            return rc;
        if (by_label)
            continue; /* the row comes from the label in stage 5b */
        snprintf(field, sizeof field, "nodes.dof[%d]", v);
        char hint[64];
        snprintf(hint, sizeof hint, " (a DOF of part %d, which has %d)", nd->part,
                 mdl->parts[nd->part].ndof);
        if ((rc = mj_int(d, field, 0, mdl->parts[nd->part].ndof - 1, hint, &nd->dof, err)) != GS_OK)
            return rc;
    }
    for (int c = 0; c < 3; c++) {
        const cJSON *arr = mj_get(nj, coord[c]);
        if (!arr)
            continue; /* coordinates default to 0 */
        char af[32];
        snprintf(af, sizeof af, "nodes.%s", coord[c]);
        if ((rc = mj_array(arr, af, "numbers", nn, 0, NULL, err)) != GS_OK)
            return rc;
        const cJSON *x = arr->child;
        for (int v = 0; v < nn; v++, x = x->next) {
            snprintf(field, sizeof field, "%s[%d]", af, v);
            if ((rc = mj_num(x, field, &mdl->nodes[v].xyz[c], err)) != GS_OK)
                return rc;
        }
    }
    return GS_OK;
}

static gs_err mj_pairs(const cJSON *pj, gs_model *mdl, gs_error *err)
{
    char field[96];
    gs_err rc;
    const int m = mdl->m;
    const cJSON *ai = mj_get(pj, "i"), *aj = mj_get(pj, "j");
    const cJSON *ci = mj_get(pj, "ci"), *cj = mj_get(pj, "cj");
    if ((rc = mj_array(aj, "pairs.j", "integers", m, 0, NULL, err)) != GS_OK ||
        (ci && (rc = mj_array(ci, "pairs.ci", "numbers", m, 0, NULL, err)) != GS_OK) ||
        (cj && (rc = mj_array(cj, "pairs.cj", "numbers", m, 0, NULL, err)) != GS_OK))
        return rc;
    const cJSON *x = ai->child, *y = aj->child, *cx = ci ? ci->child : NULL,
                *cy = cj ? cj->child : NULL;
    for (int k = 0; k < m; k++, x = x->next, y = y->next) {
        gs_pair *pr = &mdl->pairs[k];
        snprintf(field, sizeof field, "pairs.i[%d]", k);
        if ((rc = mj_int(x, field, 0, mdl->n_nodes - 1, " (a node index)", &pr->node[0], err)) !=
            GS_OK)
            return rc;
        snprintf(field, sizeof field, "pairs.j[%d]", k);
        if ((rc = mj_int(y, field, -1, mdl->n_nodes - 1, " (a node index, or -1 for a fixed part)",
                         &pr->node[1], err)) != GS_OK)
            return rc;
        pr->coef[0] = -1.0;
        pr->coef[1] = 1.0;
        if (cx) {
            snprintf(field, sizeof field, "pairs.ci[%d]", k);
            if ((rc = mj_num(cx, field, &pr->coef[0], err)) != GS_OK)
                return rc;
            if (pr->coef[0] == 0.0)
                return gs_errorf(err, GS_ERR_INVALID, field, "zero coefficient: node i of pair %d "
                                 "would not enter A", k);
            cx = cx->next;
        }
        if (cy) {
            snprintf(field, sizeof field, "pairs.cj[%d]", k);
            if ((rc = mj_num(cy, field, &pr->coef[1], err)) != GS_OK)
                return rc;
            if (pr->coef[1] == 0.0 && pr->node[1] != GS_FIXED)
                return gs_errorf(err, GS_ERR_INVALID, field, "zero coefficient: node j of pair %d "
                                 "would not enter A", k);
            cy = cy->next;
        }
    }
    return GS_OK;
}

static gs_err mj_fasteners(const cJSON *fj, gs_model *mdl, gs_error *err)
{
    char field[96];
    gs_err rc;
    const cJSON *pr = mj_get(fj, "pair"), *ld = mj_get(fj, "load");
    if ((rc = mj_array(ld, "fasteners.load", "numbers", mdl->n_fast, 0, NULL, err)) != GS_OK)
        return rc;
    const cJSON *x = pr->child, *y = ld->child;
    for (int i = 0; i < mdl->n_fast; i++, x = x->next, y = y->next) {
        gs_fastener *fs = &mdl->fast[i];
        snprintf(field, sizeof field, "fasteners.pair[%d]", i);
        if ((rc = mj_int(x, field, 0, mdl->m - 1, " (a pair index)", &fs->pair, err)) != GS_OK)
            return rc;
        snprintf(field, sizeof field, "fasteners.load[%d]", i);
        if ((rc = mj_num(y, field, &fs->load, err)) != GS_OK)
            return rc;
        if (fs->load < 0.0)
            return gs_errorf(err, GS_ERR_INVALID, field,
                             "load %.17g N < 0: a fastener presses its pair shut", fs->load);
    }
    return GS_OK;
}

/* Stages 2-6 on a parsed document. */
/* mdl->files: the referenced files (refs[0..nrefs), then f's when fref->ref),
 * resolved as stage 5 read them. O(nrefs). */
static gs_err mj_note_files(const mj_ctx *cx, gs_model *mdl, const mj_ref *refs, int nrefs,
                            const mj_ref *fref, gs_error *err)
{
    const int n = nrefs + (fref->ref != NULL);
    if (n == 0)
        return GS_OK;
    if (!(mdl->files = calloc((size_t)n, sizeof *mdl->files)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    for (int i = 0; i < n; i++) {
        char full[PATH_MAX];
        gs_err rc = gs_mj_resolve(cx, i < nrefs ? refs[i].ref : fref->ref, "", full, err);
        if (rc != GS_OK)
            return rc;
        if (!(mdl->files[i] = strdup(full)))
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
        mdl->n_files = i + 1;
    }
    return GS_OK;
}

static gs_err mj_build(const mj_ctx *cx, const cJSON *root, gs_model **out, gs_error *err)
{
    static const char *const node_keys[] = {"part", "dof", "label", "component", "x", "y", "z",
                                             NULL};
    static const char *const pair_keys[] = {"i", "j", "ci", "cj", "nx", "ny", "nz", NULL};
    static const char *const fast_keys[] = {"pair", "load", NULL};
    gs_model *mdl = NULL;
    mj_ref *refs = NULL;
    mj_labels lb = {0};
    int nrefs = 0;
    char name[sizeof mdl->name] = "";
    gs_joint joint = GS_JOINT_AUTO;
    gs_err rc;

    if (!cJSON_IsObject(root))
        return gs_errorf(err, GS_ERR_FORMAT, "", "a model is a JSON object, got %s",
                         mj_type(root));
    if ((rc = mj_header(root, name, sizeof name, &joint, err)) != GS_OK)
        return rc;

    /* stage 2: counts */
    const cJSON *parts = mj_get(root, "parts"), *nodes = mj_get(root, "nodes");
    const cJSON *pairs = mj_get(root, "pairs"), *fast = mj_get(root, "fasteners");
    const cJSON *fj = mj_get(root, "f");
    int np, nn, m, nf = 0;
    if ((rc = mj_array(parts, "parts", "parts", -1, cx->lim.max_parts, &np, err)) != GS_OK ||
        (rc = mj_need_object(nodes, "nodes", err)) != GS_OK ||
        (rc = mj_keys(nodes, "nodes", node_keys, err)) != GS_OK ||
        (rc = mj_array(mj_get(nodes, "part"), "nodes.part", "part indices", -1, cx->lim.max_nodes,
                       &nn, err)) != GS_OK ||
        (rc = mj_need_object(pairs, "pairs", err)) != GS_OK ||
        (rc = mj_keys(pairs, "pairs", pair_keys, err)) != GS_OK ||
        (rc = mj_array(mj_get(pairs, "i"), "pairs.i", "node indices", -1, cx->lim.max_pairs, &m,
                       err)) != GS_OK)
        return rc;
    if (np < 1)
        return gs_errorf(err, GS_ERR_INVALID, "parts", "a model needs at least one part");
    if (fast && ((rc = mj_need_object(fast, "fasteners", err)) != GS_OK ||
                 (rc = mj_keys(fast, "fasteners", fast_keys, err)) != GS_OK ||
                 (rc = mj_array(mj_get(fast, "pair"), "fasteners.pair", "pair indices", -1,
                                cx->lim.max_pairs, &nf, err)) != GS_OK))
        return rc;
    if (!(mdl = gs_model_new(np, nn, m, nf, err)))
        return err ? err->code : GS_ERR_NOMEM;
    refs = calloc((size_t)np + 2, sizeof *refs);
    lb.rlabel = calloc((size_t)np, sizeof *lb.rlabel);
    lb.rdof = calloc((size_t)np, sizeof *lb.rdof);
    if (!refs || !lb.rlabel || !lb.rdof) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
        goto fail;
    }
    snprintf(mdl->name, sizeof mdl->name, "%s", name);
    mdl->joint = joint;

    /* stage 3: parts */
    int b = 0;
    long long n = 0;
    for (const cJSON *pj = parts->child; pj; pj = pj->next, b++) {
        if ((rc = mj_part(cx, pj, mdl, b, refs, &nrefs, err)) != GS_OK)
            goto fail;
        n += mdl->parts[b].ndof;
        if (n > INT_MAX) {
            rc = gs_errorf(err, GS_ERR_LIMIT, "parts", "total DOF count %lld too large", n);
            goto fail;
        }
    }

    /* stage 4: nodes, pairs, fasteners, f */
    lb.with_normals = mj_get(pairs, "nx") || mj_get(pairs, "ny") || mj_get(pairs, "nz");
    if ((rc = mj_nodes(nodes, mdl, &lb, err)) != GS_OK || (rc = mj_pairs(pairs, mdl, err)) != GS_OK ||
        (lb.with_normals && (rc = mj_pair_normals(pairs, m, &lb, err)) != GS_OK) ||
        (fast && (rc = mj_fasteners(fast, mdl, err)) != GS_OK))
        goto fail;
    mj_ref fref = {-1, NULL, NULL, NULL, MJ_AUTO};
    if (fj) {
        if (cJSON_IsString(fj) || cJSON_IsObject(fj)) {
            if ((rc = mj_fileref(cx, fj, "f", 1, &fref, err)) != GS_OK)
                goto fail;
        } else if (!cJSON_IsArray(fj)) {
            rc = gs_errorf(err, GS_ERR_INVALID, "f",
                           "expected an array of %lld numbers or a file name, got %s", n,
                           mj_type(fj));
            goto fail;
        } else {
            if ((rc = mj_array(fj, "f", "numbers", (long)n, 0, NULL, err)) != GS_OK ||
                (rc = gs_model_alloc_f(mdl, err)) != GS_OK)
                goto fail;
            int i = 0;
            for (const cJSON *x = fj->child; x; x = x->next, i++) {
                char field[32];
                snprintf(field, sizeof field, "f[%d]", i);
                if ((rc = mj_num(x, field, &mdl->f[i], err)) != GS_OK)
                    goto fail;
            }
        }
    }

    /* stage 5: referenced files */
    if ((rc = gs_mj_load_blocks(cx, mdl, refs, nrefs, &lb, err)) != GS_OK) {
        gs_mj_cite_file(refs, nrefs, err);
        goto fail;
    }
    if ((fref.ref && (rc = gs_mj_load_f(cx, mdl, (int)n, &fref, err)) != GS_OK) ||
        (rc = mj_note_files(cx, mdl, refs, nrefs, &fref, err)) != GS_OK)
        goto fail;
    /* stage 5b: nodes given by FE label */
    if (lb.label && (rc = mj_match_labels(mdl, &lb, err)) != GS_OK)
        goto fail;

    /* stage 6 */
    if ((rc = gs_model_validate(mdl, err)) != GS_OK) {
        gs_mj_cite_file(refs, nrefs, err);
        goto fail;
    }
    free(refs);
    mj_labels_free(&lb, np);
    *out = mdl;
    return GS_OK;
fail:
    free(refs);
    mj_labels_free(&lb, mdl ? mdl->n_parts : 0);
    gs_model_free(mdl);
    return rc;
}

gs_err gs_model_parse_json(const char *text, size_t len, const char *base_dir,
                           const gs_model_limits *lim, gs_model **out, gs_error *err)
{
    *out = NULL;
    gs_error_clear(err);
    mj_ctx cx = {.base_dir = base_dir};
    if (lim)
        cx.lim = *lim;
    else
        gs_model_limits_default(&cx.lim);
    if (!text)
        return gs_errorf(err, GS_ERR_INVALID, "", "no model text");
    long line, col;
    size_t at = 0;
    int trailing = 0;
    cJSON *root = gs_json_parse(text, len, &at, &trailing);
    if (!root) {
        mj_line_col(text, len, text + at, &line, &col);
        if (trailing)
            return gs_errorf(err, GS_ERR_FORMAT, "", "unexpected data after the JSON value at "
                             "line %ld, column %ld", line, col);
        return gs_errorf(err, GS_ERR_FORMAT, "", "invalid JSON near line %ld, column %ld", line,
                         col);
    }
    gs_err rc = GS_OK;
    if (rc == GS_OK)
        rc = mj_build(&cx, root, out, err);
    cJSON_Delete(root);
    return rc;
}

gs_err gs_model_read_json(const char *path, const gs_model_limits *lim, gs_model **out,
                          gs_error *err)
{
    *out = NULL;
    char *text, dir[PATH_MAX];
    size_t len;
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) >= sizeof dir)
        return gs_errorf(err, GS_ERR_INVALID, "", "path '%s' too long", path);
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    gs_err rc = gs_file_read_all(path, GS_MODEL_JSON_MAX_BYTES, &text, &len, err);
    if (rc != GS_OK)
        return rc;
    rc = gs_model_parse_json(text, len, dir, lim, out, err);
    free(text);
    if (rc == GS_ERR_FORMAT && err && err->field[0] == '\0')
        gs_file_error_context(err, path);
    return rc;
}
