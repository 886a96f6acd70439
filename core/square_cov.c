/*
 * square_cov.c -- the square change of variables y = A~'x (square_cov.h):
 * the peeled matching of pairs to DOFs, and the O(n) products and solves
 * with A~' that it makes triangular.
 */
#include "square_cov.h"

#include <stdlib.h>
#include <string.h>

void gs_sqcov_free(gs_sqcov *sq)
{
    free(sq->pk);
    free(sq->qk);
    free(sq->ap);
    free(sq->aq);
    free(sq->order);
    free(sq->urow);
    free(sq->chs);
    free(sq->chp);
    memset(sq, 0, sizeof *sq);
}

/* The peeling (header): pk, qk, ap, aq, order, urow and the CSR chs/chp. */
static int sqcov_peel(gs_sqcov *sq, const gs_model *mdl)
{
    const int n = mdl->n, m = mdl->m;
    int *deg = calloc((size_t)n + 1, sizeof *deg), *adjs = calloc((size_t)n + 2, sizeof *adjs);
    int *adj = malloc((2 * (size_t)m + 1) * sizeof *adj);
    int *queue = malloc(((size_t)n + 1) * sizeof *queue);
    unsigned char *done = calloc((size_t)m + 1, 1), *matched = calloc((size_t)n + 1, 1);
    int ok = deg && adjs && adj && queue && done && matched;
    if (!ok)
        goto out;
    for (int k = 0; k < m; k++)
        for (int e = 0; e < 2; e++)
            if (mdl->a_row[2 * k + e] >= 0)
                adjs[mdl->a_row[2 * k + e] + 1]++;
    for (int j = 0; j < n; j++) {
        deg[j] = adjs[j + 1];
        adjs[j + 1] += adjs[j];
    }
    for (int k = 0; k < m; k++)
        for (int e = 0; e < 2; e++)
            if (mdl->a_row[2 * k + e] >= 0)
                adj[adjs[mdl->a_row[2 * k + e]] + --deg[mdl->a_row[2 * k + e]]] = k;
    int nq = 0, no = 0;
    for (int j = 0; j < n; j++) {
        deg[j] = adjs[j + 1] - adjs[j];
        if (deg[j] == 1)
            queue[nq++] = j;
    }
    for (int h = 0; h < nq; h++) {
        int j = queue[h];
        if (deg[j] != 1)
            continue;
        int k = -1;
        for (int a = adjs[j]; a < adjs[j + 1]; a++)
            if (!done[adj[a]])
                k = adj[a];
        int e = mdl->a_row[2 * k] == j ? 0 : 1;
        int q = mdl->a_row[2 * k + 1 - e];
        if (mdl->a_val[2 * k + e] == 0.0 || q == j)
            break; /* reported below as unmatched */
        done[k] = 1;
        matched[j] = 1;
        sq->pk[k] = j;
        sq->ap[k] = mdl->a_val[2 * k + e];
        sq->qk[k] = q;
        sq->aq[k] = q >= 0 ? mdl->a_val[2 * k + 1 - e] : 0.0;
        sq->order[no++] = k;
        deg[j]--;
        if (q >= 0 && --deg[q] == 1)
            queue[nq++] = q;
    }
    sq->bad = -1;
    for (int k = 0; k < m && sq->bad < 0; k++)
        if (!done[k])
            sq->bad = k;
    if (sq->bad < 0) {
        int t = 0;
        for (int j = 0; j < n; j++) {
            if (!matched[j])
                sq->urow[t++] = j;
            sq->chs[j] = 0;
        }
        sq->chs[n] = 0;
        for (int k = 0; k < m; k++)
            if (sq->qk[k] >= 0)
                sq->chs[sq->qk[k] + 1]++;
        for (int j = 0; j < n; j++)
            sq->chs[j + 1] += sq->chs[j];
        for (int j = 0; j <= n; j++)
            deg[j] = 0;
        for (int k = 0; k < m; k++)
            if (sq->qk[k] >= 0)
                sq->chp[sq->chs[sq->qk[k]] + deg[sq->qk[k]]++] = k;
    }
out:
    free(deg);
    free(adjs);
    free(adj);
    free(queue);
    free(done);
    free(matched);
    return ok;
}

gs_err gs_sqcov_build(gs_sqcov *sq, const gs_model *mdl, gs_error *err)
{
    memset(sq, 0, sizeof *sq);
    sq->mdl = mdl;
    sq->m = mdl->m;
    sq->n = mdl->n;
    sq->bad = -1;
    const size_t m = (size_t)mdl->m + 1, n = (size_t)mdl->n + 1;
    int ok = 1;
    int **im[] = {&sq->pk, &sq->qk, &sq->order, &sq->chp};
    for (size_t i = 0; i < sizeof im / sizeof *im; i++)
        ok &= (*im[i] = calloc(m, sizeof(int))) != NULL;
    int **in[] = {&sq->urow, &sq->chs};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        ok &= (*in[i] = calloc(n + 1, sizeof(int))) != NULL;
    double **dm[] = {&sq->ap, &sq->aq};
    for (size_t i = 0; i < sizeof dm / sizeof *dm; i++)
        ok &= (*dm[i] = calloc(m, sizeof(double))) != NULL;
    if (!ok || !sqcov_peel(sq, mdl)) {
        gs_sqcov_free(sq);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the square change of variables");
    }
    return GS_OK;
}

void gs_sqcov_mul_t(const gs_sqcov *sq, const double *x, double *y)
{
    const int m = sq->m, n = sq->n;
    gs_model_At(sq->mdl, x, y);
    for (int t = 0; t < n - m; t++)
        y[m + t] = x[sq->urow[t]];
}

void gs_sqcov_solve_t(const gs_sqcov *sq, const double *y, double *x)
{
    const int m = sq->m, n = sq->n;
    for (int t = 0; t < n - m; t++)
        x[sq->urow[t]] = y[m + t];
    for (int o = m - 1; o >= 0; o--) {
        int k = sq->order[o], q = sq->qk[k];
        x[sq->pk[k]] = (y[k] - (q >= 0 ? sq->aq[k] * x[q] : 0.0)) / sq->ap[k];
    }
}

void gs_sqcov_solve(const gs_sqcov *sq, double *r, double *v)
{
    const int m = sq->m, n = sq->n;
    for (int o = 0; o < m; o++) {
        int k = sq->order[o], q = sq->qk[k];
        double vk = r[sq->pk[k]] / sq->ap[k];
        if (q >= 0)
            r[q] -= sq->aq[k] * vk;
        v[k] = vk;
    }
    for (int t = 0; t < n - m; t++)
        v[m + t] = r[sq->urow[t]];
}

int gs_sqcov_col_t(const gs_sqcov *sq, int k, int *idx, double *val)
{
    /* x_p(k) = 1 / a_p, then the pairs hanging on it, breadth first */
    int ne = 1;
    idx[0] = sq->pk[k];
    val[0] = 1.0 / sq->ap[k];
    for (int h = 0; h < ne; h++) {
        int j = idx[h];
        for (int a = sq->chs[j]; a < sq->chs[j + 1]; a++) {
            int kk = sq->chp[a];
            idx[ne] = sq->pk[kk];
            val[ne++] = -sq->aq[kk] * val[h] / sq->ap[kk];
        }
    }
    return ne;
}
