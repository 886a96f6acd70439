/*
 * bench_stats.c -- medians, nearest ranks and the bound's time
 * (bench_stats.h).
 */
#include "bench_stats.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *v, int n)
{
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, cmp_d);
}

double bench_median(const double *v, int n)
{
    if (n < 1)
        return NAN;
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_rank(const double *v, int n, int num, int den)
{
    if (n < 1)
        return NAN;
    const long long r = ((long long)num * n + den - 1) / den; /* ceil(num n / den) */
    return v[r < 1 ? 0 : (r > n ? n - 1 : r - 1)];
}

double bench_median_of(double *v, int n)
{
    int f = 0; /* NaN (a bound of no value) compares as equal to everything: set apart */
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[f++] = v[i];
    bench_sort(v, f);
    return bench_median(v, f);
}

double bench_bound_time(const gs_precomp *pc, const double *lam, double *QCC, double *QC, int *C,
                        double *y)
{
    const int m = pc->m;
    int k = 0;
    for (int i = 0; i < m; i++)
        if (lam[i] != 0.0)
            C[k++] = i;
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        for (int b = 0; b < k; b++) {
            memcpy(QC + (size_t)b * m, pc->Q + (size_t)C[b] * m, (size_t)m * sizeof *QC);
            for (int a = 0; a < k; a++)
                QCC[a + (size_t)b * k] = pc->Q[(size_t)C[b] * m + C[a]];
        }
        const double t0 = gs_now();
        if (k) {
            if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', k, QCC, k) != 0)
                return NAN; /* Q_CC not positive definite (dependent pairs): no bound */
            cblas_dgemv(CblasColMajor, CblasNoTrans, m, k, 1.0, QC, m, lam, 1, 0.0, y, 1);
        }
        const double t = gs_now() - t0;
        best = t < best ? t : best;
    }
    return best;
}
