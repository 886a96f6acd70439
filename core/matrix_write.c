/*
 * matrix_write.c -- the FE matrix writers (formats and rules in
 * matrix_write.h): one function per format over the lower triangle.
 */
#include "matrix_write.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "fmt_g17.h"

/* Entries of the lower triangle (row >= column), column by column. */
static int64_t mw_lower_nnz(const gs_spmat *a)
{
    int64_t z = 0;
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            z += a->rowind[p] >= j;
    return z;
}

static void mw_matrix_market(FILE *fp, const gs_spmat *a)
{
    fprintf(fp, "%%%%MatrixMarket matrix coordinate real symmetric\n%% written by gapsim\n");
    fprintf(fp, "%" PRId64 " %" PRId64 " %" PRId64 "\n", a->n, a->n, mw_lower_nnz(a));
    char num[GS_FMT_G17_MAX];
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            if (a->rowind[p] >= j) {
                gs_fmt_g17(a->val[p], num);
                fprintf(fp, "%" PRId64 " %" PRId64 " %s\n", a->rowind[p] + 1, j + 1, num);
            }
}

static void mw_abaqus_coordinate(FILE *fp, const gs_spmat *a)
{
    char num[GS_FMT_G17_MAX];
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            if (a->rowind[p] >= j) {
                gs_fmt_g17(a->val[p], num);
                fprintf(fp, "%" PRId64 ",%" PRId64 ",%s\n", a->rowind[p] + 1, j + 1, num);
            }
}

static void mw_abaqus_matrix_input(FILE *fp, const gs_spmat *a)
{
    char num[GS_FMT_G17_MAX];
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            const int64_t i = a->rowind[p];
            if (i < j)
                continue;
            gs_fmt_g17(a->val[p], num);
            fprintf(fp, "%" PRId64 ",%d,%" PRId64 ",%d,%s\n", a->label[i], a->dof[i], a->label[j],
                    a->dof[j], num);
        }
}

/* Free field: the header (NAME, "0", IFO 6 symmetric, TIN 2 real double,
 * TOUT 0), then per column GJ, CJ and its (GI, CI, value) triples on
 * continuation lines. */
static void mw_nastran_dmig(FILE *fp, const gs_spmat *a)
{
    fputs("$ written by gapsim: DMIG KAAX, symmetric (IFO 6), lower triangle\n", fp);
    fputs("DMIG,KAAX,0,6,2,0\n", fp);
    char num[GS_FMT_G17_MAX];
    for (int64_t j = 0; j < a->n; j++) {
        int first = 1;
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            const int64_t i = a->rowind[p];
            if (i < j)
                continue;
            gs_fmt_g17(a->val[p], num);
            if (first)
                fprintf(fp, "DMIG,KAAX,%" PRId64 ",%d,,%" PRId64 ",%d,%s\n", a->label[j],
                        a->dof[j], a->label[i], a->dof[i], num);
            else
                fprintf(fp, ",%" PRId64 ",%d,%s\n", a->label[i], a->dof[i], num);
            first = 0;
        }
    }
}

/* Rows grouped by node with the same DOF list for every node (the user
 * element's one DOF line): 0, or -1 with a message. *per: DOFs per node. */
static gs_err mw_uel_layout(const gs_spmat *a, int *per, gs_error *err)
{
    int k = 1;
    while (k < a->n && a->label[k] == a->label[0])
        k++;
    if (a->n % k)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "abaqus-user-element: node %" PRId64
                         " has %d DOFs but the matrix has %" PRId64 " rows", a->label[0], k, a->n);
    for (int64_t r = 0; r < a->n; r++)
        if (a->dof[r] != a->dof[r % k] || a->label[r] != a->label[r - r % k] ||
            (r % k == 0 && r > 0 && a->label[r] == a->label[r - 1]))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "abaqus-user-element: every node needs "
                             "the same DOF list (%d DOFs), row %" PRId64 " (node %" PRId64
                             " dof %d) breaks it", k, r + 1, a->label[r], a->dof[r]);
    *per = k;
    return GS_OK;
}

static gs_err mw_abaqus_user_element(FILE *fp, const gs_spmat *a, gs_error *err)
{
    int per = 1;
    gs_err rc = mw_uel_layout(a, &per, err);
    if (rc != GS_OK)
        return rc;
    const size_t n = (size_t)a->n;
    double *K = malloc(n * n * sizeof *K); /* a small condensed block: dense, O(n^2) */
    if (!K)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a %zu x %zu user element", n, n);
    gs_spmat_to_dense(a, K);
    fprintf(fp, "** written by gapsim\n*USER ELEMENT, NODES=%" PRId64 ", TYPE=U1, LINEAR\n",
            a->n / per);
    for (int c = 0; c < per; c++)
        fprintf(fp, "%s%d", c ? ", " : "", a->dof[c]);
    fputs("\n*ELEMENT, TYPE=U1\n1", fp);
    for (int64_t v = 0; v < a->n / per; v++)
        fprintf(fp, ",%s%" PRId64, v % 10 == 9 ? "\n" : " ", a->label[v * per]);
    fputs("\n*MATRIX, TYPE=STIFFNESS\n", fp);
    size_t c = 0; /* the lower triangle row by row, four values a line */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
            gs_fput_g17(fp, K[j * n + i]);
            fputs(++c % 4 ? ", " : "\n", fp);
        }
    if (c % 4)
        fputc('\n', fp);
    free(K);
    return GS_OK;
}

int gs_matrix_write_supported(const char *fmt)
{
    static const char *const names[] = {"matrix-market", "abaqus-coordinate",
                                        "abaqus-matrix-input", "nastran-dmig",
                                        "abaqus-user-element"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(fmt, names[i]))
            return 1;
    return 0;
}

gs_err gs_matrix_write_file(const char *path, const char *fmt, const gs_spmat *a,
                            gs_error *err)
{
    if (!gs_matrix_write_supported(fmt))
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "cannot write format '%s' (writable: "
                         "matrix-market, abaqus-coordinate, abaqus-matrix-input, nastran-dmig, "
                         "abaqus-user-element)", fmt);
    const int labelled = strcmp(fmt, "matrix-market") && strcmp(fmt, "abaqus-coordinate");
    if (labelled && (!a->label || !a->dof))
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "format '%s' names FE nodes: the matrix "
                         "has no row labels", fmt);
    for (int64_t p = 0; p < a->nnz; p++)
        if (!isfinite(a->val[p]))
            return gs_errorf(err, GS_ERR_NONFINITE, "", "non-finite entry %g", a->val[p]);
    gs_wfile wf;
    gs_err rc = gs_wfile_open(&wf, path, err);
    if (rc != GS_OK)
        return rc;
    if (!strcmp(fmt, "matrix-market"))
        mw_matrix_market(wf.fp, a);
    else if (!strcmp(fmt, "abaqus-coordinate"))
        mw_abaqus_coordinate(wf.fp, a);
    else if (!strcmp(fmt, "abaqus-matrix-input"))
        mw_abaqus_matrix_input(wf.fp, a);
    else if (!strcmp(fmt, "nastran-dmig"))
        mw_nastran_dmig(wf.fp, a);
    else
        rc = mw_abaqus_user_element(wf.fp, a, err);
    if (rc != GS_OK) {
        gs_wfile_abort(&wf);
        return rc;
    }
    return gs_wfile_commit(&wf, err);
}
