/*
 * precomp_check.c -- the precomputation checked against its model by probes
 * (precomp_check.h: what is checked, the bounds, the cost).
 */
#include "precomp_check.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

/* A probe: entries of magnitude 1/2 to 1 with pseudo-random signs (a fixed
 * xorshift sequence from seed), so that every column of a matrix weighs in
 * and no cancellation is arranged. O(n). */
static void probe(double *v, int n, unsigned long long seed)
{
    unsigned long long x = seed;
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const double u = (double)(x >> 11) * 0x1.0p-53; /* [0, 1) */
        v[i] = (x & 1u) ? 0.5 + 0.5 * u : -0.5 - 0.5 * u;
    }
}

/* The largest |v_i|; NaN if any v_i is NaN (fmax would skip it, and the
 * check would pass a residual of NaN). */
static double max_abs(const double *v, int n)
{
    double a = 0.0;
    for (int i = 0; i < n; i++) {
        if (isnan(v[i]))
            return NAN;
        a = fmax(a, fabs(v[i]));
    }
    return a;
}

/* y = M x and ay = |M| |x| for a full n x n column-major M (ld n). O(n^2). */
static void full_mul(int n, const double *M, const double *x, double *y, double *ay)
{
    memset(y, 0, (size_t)n * sizeof *y);
    memset(ay, 0, (size_t)n * sizeof *ay);
    for (int j = 0; j < n; j++) {
        const double *c = M + (size_t)j * n;
        const double xj = x[j], aj = fabs(x[j]);
        for (int i = 0; i < n; i++) {
            y[i] += c[i] * xj;
            ay[i] += fabs(c[i]) * aj;
        }
    }
}

/* r = K s - t and ar = |K| |s| + |t| for a dense block factored in place:
 * K's strict upper triangle in A (ld n), its diagonal in d. O(n^2 / 2). */
static void dense_residual(int n, const double *A, const double *d, const double *s,
                           const double *t, double *r, double *ar)
{
    for (int i = 0; i < n; i++) {
        r[i] = d[i] * s[i] - t[i];
        ar[i] = fabs(d[i] * s[i]) + fabs(t[i]);
    }
    for (int j = 1; j < n; j++) {
        const double *c = A + (size_t)j * n; /* K[0..j-1, j] */
        const double sj = s[j], aj = fabs(s[j]);
        double dot = 0.0, adot = 0.0;
        for (int i = 0; i < j; i++) {
            r[i] += c[i] * sj;
            ar[i] += fabs(c[i]) * aj;
            dot += c[i] * s[i];
            adot += fabs(c[i] * s[i]);
        }
        r[j] += dot;
        ar[j] += adot;
    }
}

/* The same for a sparse block with every entry stored (stype 0). O(nnz). */
static void sparse_residual(const gs_spmat *K, const double *s, const double *t, double *r,
                            double *ar)
{
    const int n = (int)K->n;
    for (int i = 0; i < n; i++) {
        r[i] = -t[i];
        ar[i] = fabs(t[i]);
    }
    for (int j = 0; j < n; j++)
        for (int64_t p = K->colptr[j]; p < K->colptr[j + 1]; p++) {
            r[K->rowind[p]] += K->val[p] * s[j];
            ar[K->rowind[p]] += fabs(K->val[p] * s[j]);
        }
}

/* |r| / |ar| in the max norm (0 for a zero scale with a zero residual). */
static double ratio(const double *r, const double *ar, int n)
{
    const double num = max_abs(r, n), den = max_abs(ar, n);
    return num == 0.0 ? 0.0 : den > 0.0 ? num / den : INFINITY;
}

typedef struct {
    const gs_precomp *pc;
    const double *t; /* n: A v */
    double *s;       /* n: K^-1 A v, part by part */
} part_job;

/* gs_run_items' item b: part b's solve and its residual (check 1). */
static gs_err part_item(void *ctx, int b, gs_error *err)
{
    part_job *j = ctx;
    const gs_part *part = &j->pc->mdl->parts[b];
    const int nb = part->ndof, off = part->offset;
    char field[48];
    snprintf(field, sizeof field, "parts[%d].K", b);
    double *s = j->s + off;
    const double *t = j->t + off;
    double *r = malloc(2 * (size_t)nb * sizeof *r);
    if (!r)
        return gs_errorf(err, GS_ERR_NOMEM, field, "no memory for the precomputation's check");
    double *ar = r + nb;
    memcpy(s, t, (size_t)nb * sizeof *s);
    gs_err rc = GS_OK;
    if (part->Ksp) {
        if ((rc = gs_spchol_solve(j->pc->F[b], s, nb, 1, err)) == GS_OK)
            sparse_residual(part->Ksp, s, t, r, ar);
    } else {
        gs_trsv_l(nb, j->pc->L[b], (size_t)nb, s);
        gs_trsv_lt(nb, j->pc->L[b], (size_t)nb, s);
        dense_residual(nb, j->pc->L[b], j->pc->kdiag[b], s, t, r, ar);
    }
    const double q = rc == GS_OK ? ratio(r, ar, nb) : 0.0;
    free(r);
    if (rc != GS_OK)
        return rc;
    char kernel[96];
    if (!(q <= GS_CHECK_BACKWARD)) /* NaN fails too */
        return gs_errorf(err, GS_ERR_CHECK, field,
                         "the %s factor of part %d does not solve its block: residual %.3g of "
                         "|K||s| + |t| (at most %.0e); the BLAS may compute wrong results on this "
                         "CPU (OpenBLAS kernel %s; docs/operations.md, \"The BLAS kernel\")",
                         part->Ksp ? "sparse (CHOLMOD)" : "Cholesky", b, q, GS_CHECK_BACKWARD,
                         gs_blas_describe(kernel, sizeof kernel));
    return GS_OK;
}

gs_err gs_precomp_check_q(const gs_precomp *pc, int threads, double *ratio_q, gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    const int n = pc->n, m = pc->m;
    double *v = calloc((size_t)4 * m + 2 * (size_t)n + 1, sizeof *v);
    if (!v)
        return gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for the precomputation's check");
    double *y = v + m, *qv = y + m, *aq = qv + m, *t = aq + m, *s = t + n;
    probe(v, m, 0x9e3779b97f4a7c15ull);
    memset(t, 0, (size_t)n * sizeof *t);
    gs_model_A_add(mdl, 1.0, v, t); /* t = A v */
    part_job pj = {.pc = pc, .t = t, .s = s};
    gs_err rc = gs_run_items(threads > 0 ? threads : gs_blas_get_threads(), 1, mdl->n_parts,
                             part_item, &pj, err); /* CHOLMOD's solve calls the BLAS */
    if (rc == GS_OK) {
        gs_model_At(mdl, s, y); /* y = A's */
        full_mul(m, pc->Q, v, qv, aq);
        for (int k = 0; k < m; k++)
            qv[k] -= y[k];
        const double q = ratio(qv, aq, m);
        const double tol = fmax(GS_CHECK_FORWARD, GS_CHECK_COND_EPS * pc->cond_K * DBL_EPSILON);
        if (ratio_q)
            *ratio_q = q;
        char kernel[96];
        if (!(q <= tol))
            rc = gs_errorf(err, GS_ERR_CHECK, "pairs",
                           "Q = A'K^-1 A does not agree with the factors of K: |Qv - A'K^-1 Av| "
                           "is %.3g of |Q||v| (at most %.1e at cond_1(K) ~ %.2g); the BLAS may "
                           "compute wrong results on this CPU (OpenBLAS kernel %s; "
                           "docs/operations.md, \"The BLAS kernel\")",
                           q, tol, pc->cond_K, gs_blas_describe(kernel, sizeof kernel));
    }
    free(v);
    return rc;
}

gs_err gs_precomp_check_lq(const gs_precomp *pc, double *ratio_lq, gs_error *err)
{
    const int m = pc->m;
    double *w = calloc(5 * (size_t)m + 1, sizeof *w);
    if (!w)
        return gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for the precomputation's check");
    double *qw = w + m, *aq = qw + m, *z = aq + m, *y = z + m;
    probe(w, m, 0xd1b54a32d192ed03ull);
    full_mul(m, pc->Q, w, qw, aq);
    /* z = L_Q' w, then y = L_Q z, over the lower triangle: four columns at
     * a time from the top of their diagonal block (L_Q's upper triangle is
     * zero). Two half passes, O(m^2) in all. */
    memset(y, 0, (size_t)m * sizeof *y);
    for (int j = 0; j < m; j += 4) {
        const int b = m - j < 4 ? m - j : 4;
        gs_cols_dot(m - j, pc->LQ + j + (size_t)j * m, (size_t)m, b, w + j, z + j);
    }
    for (int j = 0; j < m; j += 4) {
        const int b = m - j < 4 ? m - j : 4;
        gs_sparse_mul(m - j, pc->LQ + j + (size_t)j * m, (size_t)m, z + j, b, y + j);
    }
    for (int i = 0; i < m; i++)
        y[i] -= qw[i];
    const double q = ratio(y, aq, m);
    free(w);
    if (ratio_lq)
        *ratio_lq = q;
    char kernel[96];
    if (!(q <= GS_CHECK_BACKWARD))
        return gs_errorf(err, GS_ERR_CHECK, "pairs",
                         "the Cholesky factor of Q does not reproduce Q: |L_Q L_Q'w - Qw| is "
                         "%.3g of |Q||w| (at most %.0e); the BLAS may compute wrong results on "
                         "this CPU (OpenBLAS kernel %s; docs/operations.md, \"The BLAS kernel\")",
                         q, GS_CHECK_BACKWARD, gs_blas_describe(kernel, sizeof kernel));
    return GS_OK;
}
