/*
 * model_json_write.c -- writing the "gapsim-model" JSON description
 * (model_json.h; the reader is model_json.c).
 *
 * The JSON is printed directly (no cJSON tree: an inline 2600-DOF block
 * would be 6.8 million nodes) with %.17g for doubles; blocks go to .npy files
 * in Fortran order (gs_part.K is column-major), so nothing is transposed;
 * sparse parts to the matrix format asked for (matrix_write.h). The model is
 * checked first (sizes, finiteness), so that nothing is written for a model
 * that cannot be. Cost: O(JSON size + sum ndof^2).
 */
#include "model_json.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "fmt_g17.h"
#include "matrix_write.h"
#include "npy.h"

static void mj_put_string(FILE *fp, const char *s, size_t cap)
{
    fputc('"', fp);
    for (size_t k = 0; k < cap && s[k]; k++) {
        unsigned char ch = (unsigned char)s[k];
        if (ch == '"' || ch == '\\')
            fprintf(fp, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(fp, "\\u%04x", ch);
        else
            fputc(ch, fp);
    }
    fputc('"', fp);
}

/* Separator before element k of an inline array: 8 per line, then indent. */
static void mj_sep(FILE *fp, size_t k, const char *indent)
{
    if (k == 0)
        return;
    if (k % 8)
        fputs(", ", fp);
    else
        fprintf(fp, ",\n%s", indent);
}

static gs_err mj_nonfinite(const char *what, size_t k, gs_error *err)
{
    char field[96];
    snprintf(field, sizeof field, "%.60s[%zu]", what, k);
    return gs_errorf(err, GS_ERR_NONFINITE, field, "non-finite value cannot be written as JSON");
}

/* Structural sanity and finiteness of what goes into the JSON text. */
static gs_err mj_check_model(const gs_model *mdl, int inline_blocks, long long *n, gs_error *err)
{
    char field[96];
    if (mdl->n_parts < 0 || mdl->n_nodes < 0 || mdl->m < 0 || mdl->n_fast < 0 ||
        (mdl->n_parts && !mdl->parts) || (mdl->n_nodes && !mdl->nodes) || (mdl->m && !mdl->pairs) ||
        (mdl->n_fast && !mdl->fast))
        return gs_errorf(err, GS_ERR_INVALID, "", "inconsistent model sizes");
    *n = 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        const gs_part *pt = &mdl->parts[b];
        snprintf(field, sizeof field, "parts[%d].K", b);
        if (pt->ndof < 1 || (!pt->K && !pt->Ksp))
            return gs_errorf(err, GS_ERR_INVALID, field, "part %d has no stiffness block", b);
        *n += pt->ndof;
        if (pt->Ksp)
            continue; /* finite by construction (gs_model_set_sparse_block) */
        const size_t nn = (size_t)pt->ndof * (size_t)pt->ndof;
        for (size_t k = 0; inline_blocks && k < nn; k++)
            if (!isfinite(pt->K[k]))
                return gs_errorf(err, GS_ERR_NONFINITE, field,
                                 "non-finite entry (%zu, %zu) cannot be written as JSON",
                                 k % (size_t)pt->ndof, k / (size_t)pt->ndof);
    }
    for (int v = 0; v < mdl->n_nodes; v++)
        for (int c = 0; c < 3; c++)
            if (!isfinite(mdl->nodes[v].xyz[c])) {
                snprintf(field, sizeof field, "nodes.%c", "xyz"[c]);
                return mj_nonfinite(field, (size_t)v, err);
            }
    for (int k = 0; k < mdl->m; k++) {
        if (!isfinite(mdl->pairs[k].coef[0]))
            return mj_nonfinite("pairs.ci", (size_t)k, err);
        if (mdl->pairs[k].node[1] != GS_FIXED && !isfinite(mdl->pairs[k].coef[1]))
            return mj_nonfinite("pairs.cj", (size_t)k, err);
    }
    for (int i = 0; i < mdl->n_fast; i++)
        if (!isfinite(mdl->fast[i].load))
            return mj_nonfinite("fasteners.load", (size_t)i, err);
    for (long long i = 0; mdl->f && inline_blocks && i < *n; i++)
        if (!isfinite(mdl->f[i]))
            return mj_nonfinite("f", (size_t)i, err);
    return GS_OK;
}

/* File name suffix of a part written in format fmt. */
static const char *mj_suffix(const char *fmt)
{
    static const char *const map[][2] = {{"npy", "npy"},
                                         {"matrix-market", "mtx"},
                                         {"abaqus-matrix-input", "stif.mtx"},
                                         {"abaqus-coordinate", "coord.mtx"},
                                         {"nastran-dmig", "pch"},
                                         {"abaqus-user-element", "inp"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(fmt, map[i][0]))
            return map[i][1];
    return "txt";
}

/* The format part b is written in: npy for a dense block unless `want`
 * names another, matrix-market for a sparse part unless `want` names a
 * sparse format. */
static const char *mj_part_format(const gs_part *pt, const char *want)
{
    if (!want || !strcmp(want, "npy"))
        return pt->Ksp ? "matrix-market" : "npy";
    return want;
}

/* Write part b's matrix to path in fmt (not npy). A dense block becomes
 * sparse with rows labelled (row + 1, component 3) for the labelled formats. */
static gs_err mj_write_part_matrix(const gs_part *pt, const char *path, const char *fmt,
                                   gs_error *err)
{
    if (pt->Ksp)
        return gs_matrix_write_file(path, fmt, pt->Ksp, err);
    gs_spmat a;
    gs_err rc = gs_spmat_from_dense(pt->K, pt->ndof, &a, err); /* symmetric: row = column major */
    if (rc != GS_OK)
        return rc;
    a.label = malloc((size_t)pt->ndof * sizeof *a.label);
    a.dof = malloc((size_t)pt->ndof * sizeof *a.dof);
    if (!a.label || !a.dof) {
        gs_spmat_free(&a);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    }
    for (int r = 0; r < pt->ndof; r++) {
        a.label[r] = r + 1;
        a.dof[r] = 3;
    }
    rc = gs_matrix_write_file(path, fmt, &a, err);
    gs_spmat_free(&a);
    return rc;
}

gs_err gs_model_write_json(const gs_model *mdl, const char *dir, const char *basename,
                           int inline_blocks, gs_error *err)
{
    return gs_model_write_json_as(mdl, dir, basename, inline_blocks, NULL, err);
}

gs_err gs_model_write_json_as(const gs_model *mdl, const char *dir, const char *basename,
                              int inline_blocks, const char *matrix_format, gs_error *err)
{
    char path[PATH_MAX], ref[PATH_MAX];
    long long n = 0;
    gs_err rc;
    if (!mdl)
        return gs_errorf(err, GS_ERR_INVALID, "", "no model");
    if (!dir || !*dir)
        dir = ".";
    if (!basename || !*basename || strchr(basename, '/') || strcmp(basename, ".") == 0 ||
        strcmp(basename, "..") == 0)
        return gs_errorf(err, GS_ERR_INVALID, "", "invalid base name '%s': non-empty, no '/'",
                         basename ? basename : "(null)");
    if (strlen(dir) + strlen(basename) + 40 >= PATH_MAX)
        return gs_errorf(err, GS_ERR_INVALID, "", "output path too long");
    if ((rc = mj_check_model(mdl, inline_blocks, &n, err)) != GS_OK)
        return rc;
    if (matrix_format && strcmp(matrix_format, "npy") && !gs_matrix_write_supported(matrix_format))
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "cannot write matrices as '%s'",
                         matrix_format);
    for (int b = 0; b < mdl->n_parts && inline_blocks; b++)
        if (mdl->parts[b].Ksp)
            inline_blocks = 0; /* a sparse part is never inline */
    /* the matrix files first: the JSON never names a missing file */
    if (!inline_blocks) {
        for (int b = 0; b < mdl->n_parts; b++) {
            size_t shape[2] = {(size_t)mdl->parts[b].ndof, (size_t)mdl->parts[b].ndof};
            const char *fmt = mj_part_format(&mdl->parts[b], matrix_format);
            snprintf(path, sizeof path, "%s/%s.part%d.%s", dir, basename, b, mj_suffix(fmt));
            if (strcmp(fmt, "npy"))
                rc = mj_write_part_matrix(&mdl->parts[b], path, fmt, err);
            else
                rc = gs_npy_write_file_order(path, mdl->parts[b].K, 2, shape, GS_NPY_COL_MAJOR,
                                             err);
            if (rc != GS_OK) {
                char field[48];
                snprintf(field, sizeof field, "parts[%d].K", b);
                gs_error_prefix_field(err, field);
                return rc;
            }
        }
        if (mdl->f) {
            size_t shape[1] = {(size_t)n};
            snprintf(path, sizeof path, "%s/%s.f.npy", dir, basename);
            if ((rc = gs_npy_write_file(path, mdl->f, 1, shape, err)) != GS_OK) {
                gs_error_prefix_field(err, "f");
                return rc;
            }
        }
    }
    snprintf(path, sizeof path, "%s/%s.json", dir, basename);
    gs_wfile wf;
    if ((rc = gs_wfile_open(&wf, path, err)) != GS_OK)
        return rc;
    FILE *fp = wf.fp;
    fputs("{\n  \"format\": \"gapsim-model\",\n  \"version\": 1,\n  \"name\": ", fp);
    mj_put_string(fp, mdl->name, sizeof mdl->name);
    if (mdl->joint == GS_JOINT_SIMPLE || mdl->joint == GS_JOINT_SANDWICH)
        fprintf(fp, ",\n  \"joint\": \"%s\"", mdl->joint == GS_JOINT_SIMPLE ? "simple" : "sandwich");
    fputs(",\n  \"units\": {\"length\": \"mm\", \"force\": \"N\"},\n  \"parts\": [", fp);
    for (int b = 0; b < mdl->n_parts; b++) {
        const gs_part *pt = &mdl->parts[b];
        fputs(b ? ",\n    {\"name\": " : "\n    {\"name\": ", fp);
        mj_put_string(fp, pt->name, sizeof pt->name);
        fprintf(fp, ", \"ndof\": %d, ", pt->ndof);
        if (pt->Ksp)
            fputs("\"storage\": \"sparse\", ", fp);
        fputs("\"K\": ", fp);
        if (!inline_blocks) {
            const char *fmt = mj_part_format(pt, matrix_format);
            snprintf(ref, sizeof ref, "%s.part%d.%s", basename, b, mj_suffix(fmt));
            if (strcmp(fmt, "npy")) {
                fputs("{\"file\": ", fp);
                mj_put_string(fp, ref, sizeof ref);
                fprintf(fp, ", \"format\": \"%s\"}", fmt);
            } else {
                mj_put_string(fp, ref, sizeof ref);
            }
        } else {
            const size_t nd = (size_t)pt->ndof;
            fputc('[', fp);
            for (size_t i = 0; i < nd; i++) { /* row i of K: stride ndof in column-major */
                fputs(i ? "],\n      [" : "\n      [", fp);
                for (size_t j = 0; j < nd; j++) {
                    mj_sep(fp, j, "       ");
                    gs_fput_g17(fp, pt->K[j * nd + i]);
                }
            }
            fputs("]]", fp);
        }
        fputc('}', fp);
    }
    const char *ind = "             ";
    fputs("\n  ],\n  \"nodes\": {\n    \"part\": [", fp);
    for (int v = 0; v < mdl->n_nodes; v++) {
        mj_sep(fp, (size_t)v, ind);
        fprintf(fp, "%d", mdl->nodes[v].part);
    }
    fputs("],\n    \"dof\": [", fp);
    for (int v = 0; v < mdl->n_nodes; v++) {
        mj_sep(fp, (size_t)v, ind);
        fprintf(fp, "%d", mdl->nodes[v].dof);
    }
    for (int c = 0; c < 3; c++) {
        fprintf(fp, "],\n    \"%c\": [", "xyz"[c]);
        for (int v = 0; v < mdl->n_nodes; v++) {
            mj_sep(fp, (size_t)v, ind);
            gs_fput_g17(fp, mdl->nodes[v].xyz[c]);
        }
    }
    fputs("]\n  },\n  \"pairs\": {\n    \"i\": [", fp);
    for (int k = 0; k < mdl->m; k++) {
        mj_sep(fp, (size_t)k, ind);
        fprintf(fp, "%d", mdl->pairs[k].node[0]);
    }
    fputs("],\n    \"j\": [", fp);
    for (int k = 0; k < mdl->m; k++) {
        mj_sep(fp, (size_t)k, ind);
        fprintf(fp, "%d", mdl->pairs[k].node[1]);
    }
    fputs("],\n    \"ci\": [", fp);
    for (int k = 0; k < mdl->m; k++) {
        mj_sep(fp, (size_t)k, ind);
        gs_fput_g17(fp, mdl->pairs[k].coef[0]);
    }
    fputs("],\n    \"cj\": [", fp);
    for (int k = 0; k < mdl->m; k++) { /* a fixed pair's cj is ignored: non-finite -> 0 */
        double c = mdl->pairs[k].coef[1];
        mj_sep(fp, (size_t)k, ind);
        gs_fput_g17(fp, isfinite(c) ? c : 0.0);
    }
    fputs("]\n  }", fp);
    if (mdl->n_fast > 0) {
        fputs(",\n  \"fasteners\": {\n    \"pair\": [", fp);
        for (int i = 0; i < mdl->n_fast; i++) {
            mj_sep(fp, (size_t)i, ind);
            fprintf(fp, "%d", mdl->fast[i].pair);
        }
        fputs("],\n    \"load\": [", fp);
        for (int i = 0; i < mdl->n_fast; i++) {
            mj_sep(fp, (size_t)i, ind);
            gs_fput_g17(fp, mdl->fast[i].load);
        }
        fputs("]\n  }", fp);
    }
    if (mdl->f) {
        fputs(",\n  \"f\": ", fp);
        if (inline_blocks) {
            fputc('[', fp);
            for (long long i = 0; i < n; i++) {
                mj_sep(fp, (size_t)i, "        ");
                gs_fput_g17(fp, mdl->f[i]);
            }
            fputc(']', fp);
        } else {
            snprintf(ref, sizeof ref, "%s.f.npy", basename);
            mj_put_string(fp, ref, sizeof ref);
        }
    }
    fputs("\n}\n", fp);
    return gs_wfile_commit(&wf, err);
}
