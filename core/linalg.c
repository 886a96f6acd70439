/* linalg.c -- checked Cholesky, condition estimates, clock (see linalg.h). */
#include "linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

gs_err gs_chol(double *A, int n, int lda, const char *field, gs_error *err)
{
    if (n == 0)
        return GS_OK;
    /* the _work call skips LAPACKE's O(n^2) NaN scan of the input (a third
     * of the time of a warm start's factor at k = 280); a NaN or Inf in the
     * lower triangle reaches the diagonal of L instead (l_ii = sqrt(a_ii -
     * sum l_ik^2) takes in every entry of row i), which is checked in O(n) */
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, A, lda);
    if (info == 0) {
        for (int i = 0; i < n; i++)
            if (!isfinite(A[i + (size_t)i * lda]))
                return gs_errorf(err, GS_ERR_INVALID, field,
                                 "not finite: NaN or Inf in the matrix (Cholesky pivot %d of %d)",
                                 i + 1, n);
        return GS_OK;
    }
    if (info < 0)
        return gs_errorf(err, GS_ERR_INVALID, field, "dpotrf: illegal argument %d", (int)-info);
    gs_errorf(err, GS_ERR_NOT_SPD, field,
              "not positive definite: Cholesky (dpotrf) failed at leading minor %d of %d",
              (int)info, n);
    if (err)
        err->lapack_info = (int)info;
    return GS_ERR_NOT_SPD;
}

double gs_sym_norm1(const double *A, int n, int lda)
{
    if (n == 0)
        return 0.0;
    return LAPACKE_dlansy(LAPACK_COL_MAJOR, '1', 'L', n, A, lda);
}

gs_err gs_chol_rcond(const double *L, int n, int lda, double anorm, double *rcond,
                     const char *field, gs_error *err)
{
    *rcond = 1.0;
    if (n == 0)
        return GS_OK;
    lapack_int info = LAPACKE_dpocon(LAPACK_COL_MAJOR, 'L', n, L, lda, anorm, rcond);
    if (info != 0)
        return gs_errorf(err, GS_ERR_INVALID, field, "dpocon failed (info %d)", (int)info);
    return GS_OK;
}

gs_err gs_spd_cond_est(const double *K, int n, double *cond, const char *field, gs_error *err)
{
    size_t nn = gs_mul_size((size_t)n, (size_t)n);
    if (n > 0 && nn == 0)
        return gs_errorf(err, GS_ERR_LIMIT, field, "matrix too large");
    double *L = malloc(nn ? nn * sizeof *L : 1);
    if (!L)
        return gs_errorf(err, GS_ERR_NOMEM, field, "no memory for a %d x %d factor", n, n);
    memcpy(L, K, nn * sizeof *L);
    double anorm = gs_sym_norm1(K, n, n), rc = 0.0;
    gs_err rc_err = gs_chol(L, n, n, field, err);
    if (rc_err == GS_OK)
        rc_err = gs_chol_rcond(L, n, n, anorm, &rc, field, err);
    free(L);
    if (rc_err != GS_OK)
        return rc_err;
    *cond = rc > 0.0 ? 1.0 / rc : INFINITY;
    return GS_OK;
}

void gs_blas_set_threads(int n)
{
    openblas_set_num_threads(n > 0 ? n : 1);
}

int gs_blas_get_threads(void)
{
    int n = openblas_get_num_threads();
    return n > 0 ? n : 1;
}

void gs_run_blas1_workers(int threads, void *(*fn)(void *), void *arg)
{
    const int before = gs_blas_get_threads();
    gs_blas_set_threads(1);
    pthread_t th[64];
    int started = 0;
    for (; started < threads - 1 && started < 64; started++)
        if (pthread_create(&th[started], NULL, fn, arg) != 0)
            break; /* fewer threads: the work is shared all the same */
    fn(arg);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    gs_blas_set_threads(before);
}

double gs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double gs_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The sweeps are memory-bound only with 256-bit loads: GCC function
 * multiversioning picks an AVX2 clone at load time where the CPU has it.
 * AVX2 without FMA: no contraction, so every clone rounds alike (each y_i
 * the same sequence of products and sums; checked bitwise). Measured at
 * m = 2,603 and 315 columns: 0.24 ms baseline SSE2, 0.12 ms AVX2, as fast as
 * OpenBLAS's dgemv on a gathered copy of the columns. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GS_SIMD_CLONES
#endif

/* y += a0 x0 + a1 x1 + a2 x2 + a3 x3, left to right per element. O(m). */
GS_SIMD_CLONES static void axpy4(int m, const double *a, const double *x0, const double *x1,
                                 const double *x2, const double *x3, double *y)
{
    const double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    for (int i = 0; i < m; i++)
        y[i] = y[i] + a0 * x0[i] + a1 * x1[i] + a2 * x2[i] + a3 * x3[i];
}

/* y += a x. O(m). */
GS_SIMD_CLONES static void axpy1(int m, double a, const double *x, double *y)
{
    for (int i = 0; i < m; i++)
        y[i] = y[i] + a * x[i];
}

void gs_cols_mul(int m, const double *A, size_t lda, const int *cols, const double *v, int k,
                 double *y)
{
    int c = 0;
    for (; c + 4 <= k; c += 4)
        axpy4(m, v + c, A + (size_t)cols[c] * lda, A + (size_t)cols[c + 1] * lda,
              A + (size_t)cols[c + 2] * lda, A + (size_t)cols[c + 3] * lda, y);
    for (; c < k; c++)
        axpy1(m, v[c], A + (size_t)cols[c] * lda, y);
}

void gs_sparse_mul(int m, const double *A, size_t lda, const double *v, int n, double *y)
{
    int cols[4], nb = 0;
    double a[4];
    for (int j = 0; j < n; j++) {
        if (v[j] == 0.0)
            continue;
        cols[nb] = j;
        a[nb++] = v[j];
        if (nb == 4) {
            gs_cols_mul(m, A, lda, cols, a, 4, y);
            nb = 0;
        }
    }
    gs_cols_mul(m, A, lda, cols, a, nb, y);
}

size_t gs_mul_size(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    return a * b;
}
