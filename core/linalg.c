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
    lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, A, lda);
    if (info == 0)
        return GS_OK;
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

size_t gs_mul_size(size_t a, size_t b)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    return a * b;
}
