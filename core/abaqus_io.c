/*
 * abaqus_io.c -- readers of the matrix files Abaqus/Standard writes.
 *
 *   abaqus-user-element  *SUBSTRUCTURE MATRIX OUTPUT, OUTPUT FILE=USER DEFINED:
 *                        "*USER ELEMENT, NODES=n, ..., LINEAR" with the
 *                        active DOFs (first line: DOFs of node 1; further
 *                        lines: node position, DOFs from there on), then
 *                        "*MATRIX, TYPE=STIFFNESS" with the lower triangle
 *                        row by row (k11, k21, k22, k31, ...), any count per
 *                        line. An optional "*ELEMENT" line (element number,
 *                        node labels) names the nodes; without it node
 *                        labels are their positions 1..n. TYPE=MASS
 *                        matrices and other keyword blocks are skipped.
 *   abaqus-matrix-input  *MATRIX OUTPUT, FORMAT=MATRIX INPUT: one entry
 *                        "row node, row dof, column node, column dof, value"
 *                        per line; rows are the (node, dof) pairs that occur,
 *                        ascending.
 *   abaqus-coordinate    *MATRIX OUTPUT, FORMAT=COORDINATE: "row, column,
 *                        value" per line with 1-based equation numbers.
 * Symmetric matrices come as the lower triangle, the upper triangle or both
 * with equal entries (what *MATRIX INPUT accepts); duplicates are summed.
 * "**" lines are comments. Numbers take E or D exponents.
 */
#include "matrix_io.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe_text.h"

#define ABQ_MAX_DOF 99          /* Abaqus DOF numbers are 1..30 today */
#define ABQ_SNIFF_LINES 64
#define ABQ_FIELDS 24           /* most comma-separated fields kept per line */

typedef enum { ABQ_BLANK, ABQ_COMMENT, ABQ_KEYWORD, ABQ_DATA } abq_kind;

static abq_kind abq_classify(gs_text_span line)
{
    gs_text_span t = gs_text_trim(line);
    if (t.n == 0)
        return ABQ_BLANK;
    if (t.s[0] == '*')
        return t.n >= 2 && t.s[1] == '*' ? ABQ_COMMENT : ABQ_KEYWORD;
    return ABQ_DATA;
}

/* Data fields of a line; a trailing comma adds no field. -1: too many. */
static int abq_fields(gs_text_span line, gs_text_span *f, int max)
{
    int nf = gs_text_split(gs_text_trim(line), ',', f, max);
    if (nf > max)
        return -1;
    if (nf > 1 && f[nf - 1].n == 0)
        nf--;
    return nf;
}

static gs_err abq_int(gs_text_span f, long line, const char *what, int64_t lo, int64_t hi,
                      int64_t *out, gs_error *err)
{
    char show[48];
    int r = gs_text_int(f, lo, hi, out);
    if (r == -1)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: %s '%s' is not an integer", line, what,
                         gs_text_show(f, show, sizeof show));
    if (r == -2)
        return gs_errorf(err, GS_ERR_RANGE, "", "line %ld: %s %s out of range [%" PRId64
                         ", %" PRId64 "]", line, what, gs_text_show(f, show, sizeof show), lo, hi);
    return GS_OK;
}

static gs_err abq_real(gs_text_span f, long line, double *out, gs_error *err)
{
    char show[48];
    int r = gs_text_real(f, 0, out);
    if (r == -2)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: number '%s' beyond the double range",
                         line, gs_text_show(f, show, sizeof show));
    if (r != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: invalid number '%s'", line,
                         gs_text_show(f, show, sizeof show));
    return GS_OK;
}

/* ---- sniffers --------------------------------------------------------------- */

/* Kind of the first non-comment line: the keyword line's span, or the data fields. */
static int abq_first_line(const unsigned char *buf, size_t len, gs_text_span *line)
{
    gs_text_cur c;
    gs_text_init(&c, buf, len);
    for (int k = 0; k < ABQ_SNIFF_LINES && gs_text_line(&c, line); k++) {
        abq_kind kind = abq_classify(*line);
        if (kind == ABQ_KEYWORD || kind == ABQ_DATA)
            return (int)kind;
    }
    return -1;
}

int gs_sniff_abaqus_uel(const unsigned char *buf, size_t len)
{
    gs_text_span line, f[2];
    if (abq_first_line(buf, len, &line) != ABQ_KEYWORD)
        return 0;
    gs_text_span t = gs_text_trim(line);
    t.s++, t.n--;
    gs_text_split(t, ',', f, 1);
    return gs_text_is_word(f[0], "USER ELEMENT");
}

/* 1 if the first data line has `want` fields: want - 1 integers and a real. */
static int abq_sniff_fields(const unsigned char *buf, size_t len, int want)
{
    gs_text_span line, f[8];
    if (abq_first_line(buf, len, &line) != ABQ_DATA)
        return 0;
    int nf = abq_fields(line, f, 7);
    if (nf != want)
        return 0;
    int64_t iv;
    double v;
    for (int k = 0; k < want - 1; k++)
        if (gs_text_int(f[k], INT64_MIN, INT64_MAX, &iv) != 0)
            return 0;
    return gs_text_real(f[want - 1], 0, &v) == 0;
}

int gs_sniff_abaqus_matrix_input(const unsigned char *buf, size_t len)
{
    return abq_sniff_fields(buf, len, 5);
}

int gs_sniff_abaqus_coordinate(const unsigned char *buf, size_t len)
{
    return abq_sniff_fields(buf, len, 3);
}

/* ---- entry-per-line formats --------------------------------------------------- */

/* A row key of the matrix-input format. */
typedef struct {
    int64_t label;
    int dof;
} abq_key;

static int abq_key_cmp(const void *a, const void *b)
{
    const abq_key *x = a, *y = b;
    if (x->label != y->label)
        return x->label < y->label ? -1 : 1;
    return (x->dof > y->dof) - (x->dof < y->dof);
}

static int64_t abq_key_find(const abq_key *keys, int64_t n, abq_key k)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (abq_key_cmp(&keys[mid], &k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sorted unique (label, dof) of the rows and columns of `c` (whose row and
 * col hold packed keys: label * 128 + dof), into *out labelled. */
static gs_err abq_labelled(gs_coo *c, const gs_matread_opts *o, gs_spmat *out, gs_error *err)
{
    const size_t nk = 2 * c->len;
    abq_key *keys = malloc((nk ? nk : 1) * sizeof *keys);
    if (!keys) {
        gs_coo_free(c);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %zu row keys", nk);
    }
    for (size_t k = 0; k < c->len; k++) {
        keys[2 * k] = (abq_key){c->row[k] / 128, (int)(c->row[k] % 128)};
        keys[2 * k + 1] = (abq_key){c->col[k] / 128, (int)(c->col[k] % 128)};
    }
    qsort(keys, nk, sizeof *keys, abq_key_cmp); /* O(nnz log nnz) */
    size_t n = 0;
    for (size_t k = 0; k < nk; k++)
        if (n == 0 || abq_key_cmp(&keys[n - 1], &keys[k]) != 0)
            keys[n++] = keys[k];
    if (n > o->max_n) {
        gs_coo_free(c);
        free(keys);
        return gs_errorf(err, GS_ERR_LIMIT, "", "%zu distinct (node, dof) rows exceed the limit of "
                         "%zu", n, o->max_n);
    }
    for (size_t k = 0; k < c->len; k++) {
        c->row[k] = abq_key_find(keys, (int64_t)n,
                                 (abq_key){c->row[k] / 128, (int)(c->row[k] % 128)});
        c->col[k] = abq_key_find(keys, (int64_t)n,
                                 (abq_key){c->col[k] / 128, (int)(c->col[k] % 128)});
    }
    int64_t *label = malloc((n ? n : 1) * sizeof *label);
    int *dof = malloc((n ? n : 1) * sizeof *dof);
    if (!label || !dof) {
        free(keys);
        free(label);
        free(dof);
        gs_coo_free(c);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %zu row labels", n);
    }
    for (size_t r = 0; r < n; r++) {
        label[r] = keys[r].label;
        dof[r] = keys[r].dof;
    }
    free(keys);
    return gs_coo_to_spmat(c, (int64_t)n, GS_COO_SYMMETRIC, label, dof, out, err);
}

/* Shared loop: want = 5 (matrix input) or 3 (coordinate). */
static gs_err abq_entries(const unsigned char *buf, size_t len, const gs_matread_opts *o, int want,
                          gs_spmat *out, gs_error *err)
{
    gs_text_cur c;
    gs_text_span line, f[8];
    gs_coo coo;
    gs_err rc = GS_OK;
    int64_t n = 0;
    const char *shape = want == 5 ? "'node, dof, node, dof, value'" : "'row, column, value'";
    gs_text_init(&c, buf, len);
    gs_coo_init(&coo, o->max_nnz);
    memset(out, 0, sizeof *out);
    /* labels are packed as label * 128 + dof: they must stay below 2^56 */
    const int64_t max_label = want == 5 ? ((int64_t)1 << 55) : (int64_t)o->max_n;
    while (gs_text_line(&c, &line)) {
        abq_kind kind = abq_classify(line);
        if (kind == ABQ_BLANK || kind == ABQ_COMMENT)
            continue;
        if (kind == ABQ_KEYWORD) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: keyword line in a matrix data file "
                           "(expected %s)", c.line, shape);
            goto fail;
        }
        int nf = abq_fields(line, f, 7);
        if (nf != want) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: expected %s, found %s%d field%s",
                           c.line, shape, nf < 0 ? "more than " : "", nf < 0 ? 7 : nf,
                           nf == 1 ? "" : "s");
            goto fail;
        }
        int64_t a, b, da = 0, db = 0;
        double v;
        if (want == 5) {
            if ((rc = abq_int(f[0], c.line, "row node", 0, max_label, &a, err)) != GS_OK ||
                (rc = abq_int(f[1], c.line, "row dof", 1, ABQ_MAX_DOF, &da, err)) != GS_OK ||
                (rc = abq_int(f[2], c.line, "column node", 0, max_label, &b, err)) != GS_OK ||
                (rc = abq_int(f[3], c.line, "column dof", 1, ABQ_MAX_DOF, &db, err)) != GS_OK ||
                (rc = abq_real(f[4], c.line, &v, err)) != GS_OK)
                goto fail;
            a = a * 128 + da;
            b = b * 128 + db;
        } else {
            if ((rc = abq_int(f[0], c.line, "row", 1, max_label, &a, err)) != GS_OK ||
                (rc = abq_int(f[1], c.line, "column", 1, max_label, &b, err)) != GS_OK ||
                (rc = abq_real(f[2], c.line, &v, err)) != GS_OK)
                goto fail;
            a--, b--;
            n = a + 1 > n ? a + 1 : n;
            n = b + 1 > n ? b + 1 : n;
        }
        if ((rc = gs_coo_add(&coo, a, b, v, err)) != GS_OK) {
            gs_errorf(err, rc, "", "line %ld: %s", c.line, err ? err->msg : "");
            goto fail;
        }
    }
    if (coo.len == 0) {
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "no matrix entries (expected lines %s)", shape);
        goto fail;
    }
    if (want == 5)
        return abq_labelled(&coo, o, out, err);
    return gs_coo_to_spmat(&coo, n, GS_COO_SYMMETRIC, NULL, NULL, out, err);
fail:
    gs_coo_free(&coo);
    return rc;
}

gs_err gs_read_abaqus_matrix_input(const unsigned char *buf, size_t len,
                                   const gs_matread_opts *o, gs_spmat *out, gs_error *err)
{
    return abq_entries(buf, len, o, 5, out, err);
}

gs_err gs_read_abaqus_coordinate(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                                 gs_spmat *out, gs_error *err)
{
    return abq_entries(buf, len, o, 3, out, err);
}

/* ---- user element ------------------------------------------------------------- */

/* A DOF list: the active DOFs from node position `from` on. */
typedef struct {
    int64_t from;
    int ndofs;
    int dofs[ABQ_FIELDS];
} uel_change;

typedef struct {
    int64_t nodes;          /* NODES= */
    int have_uel, have_k, have_elem;
    uel_change *chg;        /* DOF lists (grows; each comes from one input line) */
    int nchanges, cap;
    int64_t *labels;        /* nodes, from *ELEMENT (NULL: positions) */
    int64_t nlabels;
    int64_t elem_fields;    /* fields of the *ELEMENT data line read so far */
    int64_t n;              /* order, once the DOFs are known */
    int64_t kvals;          /* stiffness values read */
    int64_t ki, kj;         /* position of the next value (row, column <= row) */
    long k_line;            /* line of the *MATRIX keyword */
} uel_state;

typedef enum { UEL_SKIP, UEL_DOFS, UEL_K, UEL_ELEM } uel_block;

/* Value of a keyword parameter "NAME=value" (blanks and case ignored in NAME). */
static int uel_param(const gs_text_span *f, int nf, const char *name, gs_text_span *val)
{
    for (int k = 1; k < nf; k++) {
        const char *eq = memchr(f[k].s, '=', f[k].n);
        gs_text_span key = {f[k].s, eq ? (size_t)(eq - f[k].s) : f[k].n};
        if (gs_text_is_word(key, name)) {
            *val = eq ? gs_text_trim((gs_text_span){eq + 1, f[k].n - (size_t)(eq + 1 - f[k].s)})
                      : (gs_text_span){"", 0};
            return 1;
        }
    }
    return 0;
}

static gs_err uel_keyword(uel_state *u, gs_text_span line, long ln, const gs_matread_opts *o,
                          uel_block *blk, gs_error *err)
{
    gs_text_span t = gs_text_trim(line), f[ABQ_FIELDS], v;
    t.s++, t.n--;
    int nf = gs_text_split(t, ',', f, ABQ_FIELDS - 1);
    if (nf > ABQ_FIELDS - 1)
        nf = ABQ_FIELDS - 1;
    *blk = UEL_SKIP;
    if (gs_text_is_word(f[0], "USER ELEMENT")) {
        if (u->have_uel)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: a second *USER ELEMENT (one "
                             "substructure per file)", ln);
        if (!uel_param(f, nf, "NODES", &v))
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: *USER ELEMENT without NODES=", ln);
        gs_err rc = abq_int(v, ln, "NODES", 1, (int64_t)(o->max_n ? o->max_n : 1), &u->nodes, err);
        if (rc != GS_OK)
            return rc;
        if (uel_param(f, nf, "UNSYMM", &v))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "line %ld: UNSYMM user element: a "
                             "stiffness matrix must be symmetric", ln);
        if (!uel_param(f, nf, "LINEAR", &v))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "line %ld: *USER ELEMENT without "
                             "LINEAR carries no matrix", ln);
        u->have_uel = 1;
        *blk = UEL_DOFS;
    } else if (gs_text_is_word(f[0], "MATRIX")) {
        if (!uel_param(f, nf, "TYPE", &v))
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: *MATRIX without TYPE=", ln);
        if (!gs_text_is_word(v, "STIFFNESS"))
            return GS_OK; /* MASS: skipped */
        if (!u->have_uel || u->nchanges == 0)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: *MATRIX, TYPE=STIFFNESS before "
                             "the *USER ELEMENT and its DOF line", ln);
        if (u->have_k)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: a second stiffness matrix", ln);
        /* order: sum of the DOF counts of every node position */
        int64_t n = 0;
        for (int k = 0; k < u->nchanges; k++) {
            int64_t to = k + 1 < u->nchanges ? u->chg[k + 1].from : u->nodes + 1;
            n += (to - u->chg[k].from) * u->chg[k].ndofs;
        }
        if (n < 1 || (uint64_t)n > o->max_n)
            return gs_errorf(err, GS_ERR_LIMIT, "", "line %ld: %" PRId64 " DOFs exceed the limit "
                             "of %zu", ln, n, o->max_n);
        if ((uint64_t)n * ((uint64_t)n + 1) / 2 > o->max_nnz)
            return gs_errorf(err, GS_ERR_LIMIT, "", "line %ld: a full triangle of order %" PRId64
                             " exceeds the limit of %zu entries", ln, n, o->max_nnz);
        u->n = n;
        u->have_k = 1;
        u->k_line = ln;
        *blk = UEL_K;
    } else if (gs_text_is_word(f[0], "ELEMENT")) {
        if (!u->have_uel)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: *ELEMENT before *USER ELEMENT", ln);
        if (u->have_elem)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: a second *ELEMENT block", ln);
        u->have_elem = 1;
        u->labels = malloc((size_t)u->nodes * sizeof *u->labels);
        if (!u->labels)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %" PRId64 " labels", u->nodes);
        *blk = UEL_ELEM;
    }
    return GS_OK;
}

static gs_err uel_dofs(uel_state *u, const gs_text_span *f, int nf, long ln, gs_error *err)
{
    int64_t pos = 1, v;
    int k0 = 0;
    gs_err rc;
    if (u->nchanges == u->cap) {
        if (u->cap > INT_MAX / 4)
            return gs_errorf(err, GS_ERR_LIMIT, "", "line %ld: too many DOF lists", ln);
        int cap = u->cap ? 2 * u->cap : 8;
        uel_change *c = realloc(u->chg, (size_t)cap * sizeof *c);
        if (!c)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d DOF lists", cap);
        u->chg = c;
        u->cap = cap;
    }
    if (u->nchanges > 0) { /* "position, dof, dof, ..." */
        int64_t lo = u->chg[u->nchanges - 1].from + 1;
        if ((rc = abq_int(f[0], ln, "node position", lo, u->nodes, &pos, err)) != GS_OK)
            return rc;
        k0 = 1;
    }
    if (nf - k0 < 1)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: a DOF list needs at least one DOF", ln);
    int c = u->nchanges;
    u->chg[c].ndofs = 0;
    for (int k = k0; k < nf; k++) {
        if ((rc = abq_int(f[k], ln, "DOF", 1, ABQ_MAX_DOF, &v, err)) != GS_OK)
            return rc;
        for (int q = 0; q < u->chg[c].ndofs; q++)
            if (u->chg[c].dofs[q] == (int)v)
                return gs_errorf(err, GS_ERR_DUPLICATE, "", "line %ld: DOF %d listed twice", ln,
                                 (int)v);
        u->chg[c].dofs[u->chg[c].ndofs++] = (int)v;
    }
    u->chg[c].from = pos;
    u->nchanges++;
    return GS_OK;
}

static gs_err uel_values(uel_state *u, const gs_text_span *f, int nf, long ln, gs_coo *coo,
                         gs_error *err)
{
    for (int k = 0; k < nf; k++) {
        double v;
        gs_err rc = abq_real(f[k], ln, &v, err);
        if (rc != GS_OK)
            return rc;
        if (u->ki >= u->n)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: more than the %" PRId64
                             " values of a triangle of order %" PRId64, ln,
                             u->n * (u->n + 1) / 2, u->n);
        if ((rc = gs_coo_add(coo, u->ki, u->kj, v, err)) != GS_OK)
            return rc;
        if (++u->kj > u->ki) { /* row by row: k11, k21, k22, k31, ... */
            u->ki++;
            u->kj = 0;
        }
        u->kvals++;
    }
    return GS_OK;
}

static gs_err uel_element(uel_state *u, const gs_text_span *f, int nf, long ln, gs_error *err)
{
    for (int k = 0; k < nf; k++) {
        int64_t v;
        if (u->elem_fields == u->nodes + 1)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: *ELEMENT lists more than one "
                             "element of %" PRId64 " nodes", ln, u->nodes);
        gs_err rc = abq_int(f[k], ln, u->elem_fields ? "node label" : "element number", 0,
                            INT64_MAX, &v, err);
        if (rc != GS_OK)
            return rc;
        if (u->elem_fields)
            u->labels[u->nlabels++] = v;
        u->elem_fields++;
    }
    return GS_OK;
}

/* Row labels: node position (or *ELEMENT label) x active DOFs. */
static gs_err uel_labels(const uel_state *u, int64_t **label, int **dof, gs_error *err)
{
    *label = malloc((size_t)u->n * sizeof **label);
    *dof = malloc((size_t)u->n * sizeof **dof);
    if (!*label || !*dof) {
        free(*label);
        free(*dof);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %" PRId64 " row labels", u->n);
    }
    int64_t r = 0;
    for (int k = 0; k < u->nchanges; k++) {
        int64_t to = k + 1 < u->nchanges ? u->chg[k + 1].from : u->nodes + 1;
        for (int64_t p = u->chg[k].from; p < to; p++)
            for (int q = 0; q < u->chg[k].ndofs; q++, r++) {
                (*label)[r] = u->labels ? u->labels[p - 1] : p;
                (*dof)[r] = u->chg[k].dofs[q];
            }
    }
    /* rows are named by (label, dof): a node listed twice in *ELEMENT is ambiguous */
    abq_key *keys = malloc((size_t)u->n * sizeof *keys);
    gs_err rc = GS_OK;
    if (!keys)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %" PRId64 " row labels", u->n);
    for (int64_t i = 0; keys && i < u->n; i++)
        keys[i] = (abq_key){(*label)[i], (*dof)[i]};
    if (keys)
        qsort(keys, (size_t)u->n, sizeof *keys, abq_key_cmp); /* O(n log n) */
    for (int64_t i = 1; keys && rc == GS_OK && i < u->n; i++)
        if (abq_key_cmp(&keys[i - 1], &keys[i]) == 0)
            rc = gs_errorf(err, GS_ERR_DUPLICATE, "", "node %" PRId64 " appears twice in the "
                           "*ELEMENT node list (DOF %d would name two rows)", keys[i].label,
                           keys[i].dof);
    free(keys);
    if (rc != GS_OK) {
        free(*label);
        free(*dof);
    }
    return rc;
}

gs_err gs_read_abaqus_uel(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                          gs_spmat *out, gs_error *err)
{
    uel_state *u = calloc(1, sizeof *u);
    gs_text_cur c;
    gs_text_span line, f[ABQ_FIELDS];
    gs_coo coo;
    uel_block blk = UEL_SKIP;
    gs_err rc = GS_OK;
    memset(out, 0, sizeof *out);
    gs_coo_init(&coo, o->max_nnz);
    if (!u)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    gs_text_init(&c, buf, len);
    while (gs_text_line(&c, &line)) {
        abq_kind kind = abq_classify(line);
        if (kind == ABQ_BLANK || kind == ABQ_COMMENT)
            continue;
        if (kind == ABQ_KEYWORD) {
            if (blk == UEL_ELEM && u->elem_fields && u->elem_fields != u->nodes + 1) {
                rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: *ELEMENT gave %" PRId64
                               " node labels, NODES=%" PRId64, c.line, u->nlabels, u->nodes);
                goto done;
            }
            if ((rc = uel_keyword(u, line, c.line, o, &blk, err)) != GS_OK)
                goto done;
            if (blk == UEL_K && (rc = gs_coo_reserve(&coo, (size_t)(u->n * (u->n + 1) / 2),
                                                     err)) != GS_OK)
                goto done;
            continue;
        }
        if (blk == UEL_SKIP)
            continue;
        int nf = abq_fields(line, f, ABQ_FIELDS - 1);
        if (nf < 0) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: more than %d fields", c.line,
                           ABQ_FIELDS - 2);
            goto done;
        }
        if (blk == UEL_DOFS)
            rc = uel_dofs(u, f, nf, c.line, err);
        else if (blk == UEL_K)
            rc = uel_values(u, f, nf, c.line, &coo, err);
        else
            rc = uel_element(u, f, nf, c.line, err);
        if (rc != GS_OK)
            goto done;
    }
    if (!u->have_uel)
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "no *USER ELEMENT keyword");
    else if (!u->have_k)
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "no *MATRIX, TYPE=STIFFNESS block");
    else if (u->kvals != u->n * (u->n + 1) / 2)
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "the stiffness matrix (line %ld) has %" PRId64
                       " values; a lower triangle of order %" PRId64 " has %" PRId64
                       " (input ends at line %ld)", u->k_line, u->kvals, u->n,
                       u->n * (u->n + 1) / 2, c.line);
    else if (u->have_elem && u->nlabels != u->nodes)
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "*ELEMENT gave %" PRId64 " node labels, NODES=%"
                       PRId64, u->nlabels, u->nodes);
    int64_t *label;
    int *dof;
    if (rc == GS_OK && (rc = uel_labels(u, &label, &dof, err)) == GS_OK)
        rc = gs_coo_to_spmat(&coo, u->n, GS_COO_SYMMETRIC, label, dof, out, err);
done:
    gs_coo_free(&coo);
    free(u->labels);
    free(u->chg);
    free(u);
    return rc;
}
