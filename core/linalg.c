/* linalg.c -- checked Cholesky, condition estimates, clock (see linalg.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "linalg.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__linux__) && !defined(MADV_HUGEPAGE)
#error "MADV_HUGEPAGE not declared: gs_alloc_matrix would lose its huge pages silently"
#endif

int gs_chol_small_pivot(const double *L, int n, int lda, const double *diag, size_t dstride,
                        double *ratio)
{
    for (int i = 0; i < n; i++) {
        const double piv = L[i + (size_t)i * lda], aii = diag[(size_t)i * dstride];
        if (!(piv * piv >= GS_PIVOT_RTOL * aii)) {
            *ratio = aii > 0 ? piv * piv / aii : 0.0;
            return i;
        }
    }
    return -1;
}

gs_err gs_chol(double *A, int n, int lda, const char *field, gs_error *err)
{
    if (n == 0)
        return GS_OK;
    /* the _work call skips LAPACKE's O(n^2) NaN scan of the input (6-11% of
     * a warm start's factor at k = 80..280, one thread); a NaN or Inf in the
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
    if (n <= 0)
        n = 1;
    if (openblas_get_num_threads() != n)
        openblas_set_num_threads(n);
}

int gs_blas_get_threads(void)
{
    int n = openblas_get_num_threads();
    return n > 0 ? n : 1;
}

const char *gs_blas_kernel(int *pinned, const char **build)
{
    const char *core = openblas_get_corename();
    const char *env = getenv("OPENBLAS_CORETYPE");
    if (pinned) /* a name OpenBLAS does not know leaves its own pick */
        *pinned = env && core && !strcasecmp(env, core);
    if (build)
        *build = openblas_get_config();
    return core ? core : "unknown";
}

const char *gs_blas_describe(char *buf, size_t cap)
{
    int pinned;
    const char *k = gs_blas_kernel(&pinned, NULL);
    snprintf(buf, cap, "%s%s", k, pinned ? ", chosen by OPENBLAS_CORETYPE" : "");
    return buf;
}

/* fn(arg) on `threads` threads at once (this one included; at most 64). */
static void run_workers(int threads, void *(*fn)(void *), void *arg)
{
    pthread_t th[64];
    int started = 0;
    for (; started < threads - 1 && started < 64; started++)
        if (pthread_create(&th[started], NULL, fn, arg) != 0)
            break; /* fewer threads: the work is shared all the same */
    fn(arg);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

void gs_run_blas1_workers(int threads, void *(*fn)(void *), void *arg)
{
    const int before = gs_blas_get_threads();
    gs_blas_set_threads(1);
    run_workers(threads, fn, arg);
    gs_blas_set_threads(before);
}

typedef struct {
    gs_err (*item)(void *ctx, int i, gs_error *err);
    void *ctx;
    int n, next, failed; /* next, failed: under mu */
    gs_err *rc;
    gs_error *errs;
    pthread_mutex_t mu;
} items_job;

static void *items_worker(void *arg)
{
    items_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        const int i = j->failed ? j->n : j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n)
            return NULL;
        if ((j->rc[i] = j->item(j->ctx, i, &j->errs[i])) != GS_OK) {
            pthread_mutex_lock(&j->mu);
            j->failed = 1;
            pthread_mutex_unlock(&j->mu);
        }
    }
}

gs_err gs_run_items(int threads, int blas1, int n,
                    gs_err (*item)(void *ctx, int i, gs_error *err), void *ctx, gs_error *err)
{
    if (n <= 0)
        return GS_OK;
    items_job j = {.item = item, .ctx = ctx, .n = n};
    j.rc = calloc((size_t)n, sizeof *j.rc); /* GS_OK: not run, or run well */
    j.errs = calloc((size_t)n, sizeof *j.errs);
    if (!j.rc || !j.errs) {
        free(j.rc);
        free(j.errs);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d work items", n);
    }
    pthread_mutex_init(&j.mu, NULL);
    threads = threads < n ? threads : n;
    if (blas1)
        gs_run_blas1_workers(threads, items_worker, &j);
    else
        run_workers(threads, items_worker, &j);
    pthread_mutex_destroy(&j.mu);
    gs_err rc = GS_OK;
    for (int i = 0; i < n && rc == GS_OK; i++)
        if ((rc = j.rc[i]) != GS_OK && err)
            *err = j.errs[i];
    free(j.rc);
    free(j.errs);
    return rc;
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
 * OpenBLAS's dgemv on a gathered copy of the columns. Not under
 * ThreadSanitizer: the clones' resolver runs at relocation, before its
 * runtime starts, and crashes in the instrumented code. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
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

/* y += a0 x[0] + ... + a7 x[7], left to right per element: the same
 * operations in the same order as two axpy4, with y read and written once
 * instead of twice (2-7% less time at m = 2,603, k = 80..600). O(m). */
GS_SIMD_CLONES static void axpy8(int m, const double *a, const double *const x[8], double *y)
{
    const double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4], a5 = a[5], a6 = a[6],
                 a7 = a[7];
    const double *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3], *x4 = x[4], *x5 = x[5],
                 *x6 = x[6], *x7 = x[7];
    for (int i = 0; i < m; i++)
        y[i] = y[i] + a0 * x0[i] + a1 * x1[i] + a2 * x2[i] + a3 * x3[i] + a4 * x4[i] +
               a5 * x5[i] + a6 * x6[i] + a7 * x7[i];
}

/* The plane rotation of a removal from a Cholesky factor (solvers/
 * cholup.h): dst_i = c l_i + s x_i, x_i = c x_i - s l_i. O(n). */
GS_SIMD_CLONES static void rotate(int n, double *dst, const double *l, double *x, double c,
                                  double s)
{
    for (int i = 0; i < n; i++) {
        const double li = l[i], xi = x[i];
        dst[i] = c * li + s * xi;
        x[i] = c * xi - s * li;
    }
}

void gs_rotate(int n, double *dst, const double *l, double *x, double c, double s)
{
    rotate(n, dst, l, x, c, s);
}

void gs_cols_mul(int m, const double *A, size_t lda, const int *cols, const double *v, int k,
                 double *y)
{
    int c = 0;
    for (; c + 8 <= k; c += 8) {
        const double *x[8];
        for (int q = 0; q < 8; q++)
            x[q] = A + (size_t)cols[c + q] * lda;
        axpy8(m, v + c, x, y);
    }
    for (; c + 4 <= k; c += 4)
        axpy4(m, v + c, A + (size_t)cols[c] * lda, A + (size_t)cols[c + 1] * lda,
              A + (size_t)cols[c + 2] * lda, A + (size_t)cols[c + 3] * lda, y);
    for (; c < k; c++)
        axpy1(m, v[c], A + (size_t)cols[c] * lda, y);
}

/* Four doubles, unaligned loads and stores (GCC/Clang vector extension; on
 * the baseline x86-64 clone two SSE2 halves). Each lane is its own sum: no
 * reassociation, so every clone and optimization level rounds alike. */
typedef double gs_v4 __attribute__((vector_size(32), aligned(8), may_alias));

/* One block of four columns j..j+3 of x <- L^-1 x: the 4 x 4 diagonal
 * block (reciprocals r of its diagonal), then x[j+4 ..] -= L[j+4 .., j ..
 * j+3] x[j .. j+3] in one sweep, each x_i updated left to right. */
static inline __attribute__((always_inline)) void trsv_l_block(int k, int j, const double *c0,
                                                               size_t ld, const double r[4],
                                                               double *x)
{
    const double *c1 = c0 + ld, *c2 = c1 + ld, *c3 = c2 + ld;
    const double x0 = x[j] * r[0];
    const double x1 = (x[j + 1] - c0[j + 1] * x0) * r[1];
    const double x2 = (x[j + 2] - c0[j + 2] * x0 - c1[j + 2] * x1) * r[2];
    const double x3 = (x[j + 3] - c0[j + 3] * x0 - c1[j + 3] * x1 - c2[j + 3] * x2) * r[3];
    x[j] = x0;
    x[j + 1] = x1;
    x[j + 2] = x2;
    x[j + 3] = x3;
    const gs_v4 a0 = {x0, x0, x0, x0}, a1 = {x1, x1, x1, x1}, a2 = {x2, x2, x2, x2},
                a3 = {x3, x3, x3, x3};
    int i = j + 4;
    for (; i + 4 <= k; i += 4)
        *(gs_v4 *)(x + i) = *(gs_v4 *)(x + i) - *(const gs_v4 *)(c0 + i) * a0 -
                            *(const gs_v4 *)(c1 + i) * a1 - *(const gs_v4 *)(c2 + i) * a2 -
                            *(const gs_v4 *)(c3 + i) * a3;
    for (; i < k; i++)
        x[i] = x[i] - c0[i] * x0 - c1[i] * x1 - c2[i] * x2 - c3[i] * x3;
}

/* Reciprocals of the diagonal of the 4 x 4 block at row and column j (c0:
 * column j): four independent divisions off the dependent chain x0 -> x3
 * (a division's latency is four multiplications'); 30-40% faster at k <
 * 100. */
static inline __attribute__((always_inline)) void block_recip(int j, const double *c0, size_t ld,
                                                              double r[4])
{
    r[0] = 1.0 / c0[j];
    r[1] = 1.0 / c0[ld + j + 1];
    r[2] = 1.0 / c0[2 * ld + j + 2];
    r[3] = 1.0 / c0[3 * ld + j + 3];
}

/* The columns left over after the blocks of four, one at a time. */
static inline __attribute__((always_inline)) void trsv_l_tail(int k, int j, const double *L,
                                                              size_t ld, double *x)
{
    for (; j < k; j++) {
        const double *c = L + (size_t)j * ld, xj = x[j] / c[j];
        x[j] = xj;
        for (int i = j + 1; i < k; i++)
            x[i] = x[i] - c[i] * xj;
    }
}

/* x <- L^-1 x by columns in blocks of four (trsv_l_block). O(k^2). */
GS_SIMD_CLONES static void trsv_l(int k, const double *L, size_t ld, double *x)
{
    int j = 0;
    for (; j + 4 <= k; j += 4) {
        const double *c0 = L + (size_t)j * ld;
        double r[4];
        block_recip(j, c0, ld, r);
        trsv_l_block(k, j, c0, ld, r, x);
    }
    trsv_l_tail(k, j, L, ld, x);
}

/* X <- L^-1 X for the n columns of X (leading dim ldx): each block of four
 * columns of L is applied to every column of X while it sits in the L1
 * cache, so L is read from memory once for all n (the single solves are
 * bound by reading L). Each column rounds exactly as trsv_l. O(k^2 n). */
GS_SIMD_CLONES static void trsm_l(int k, const double *L, size_t ld, double *X, size_t ldx,
                                  int n)
{
    int j = 0;
    for (; j + 4 <= k; j += 4) {
        const double *c0 = L + (size_t)j * ld;
        double r[4];
        block_recip(j, c0, ld, r);
        for (int q = 0; q < n; q++)
            trsv_l_block(k, j, c0, ld, r, X + (size_t)q * ldx);
    }
    for (int q = 0; q < n; q++)
        trsv_l_tail(k, j, L, ld, X + (size_t)q * ldx);
}

/* Sum of the four lanes, in a fixed order. */
static inline double lanes_sum(const double s[4])
{
    return (s[0] + s[1]) + (s[2] + s[3]);
}

/* d[0..4) = the dot products of the four columns c0..c3 with x over rows
 * [q0, k): four lanes each over the blocks of four rows, the lanes summed
 * in a fixed order, then the rows left over, in order. */
static inline __attribute__((always_inline)) void dots4(int q0, int k, const double *c0,
                                                        const double *c1, const double *c2,
                                                        const double *c3, const double *x,
                                                        double d[4])
{
    gs_v4 s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
    int q = q0;
    for (; q + 4 <= k; q += 4) {
        const gs_v4 xv = *(const gs_v4 *)(x + q);
        s0 += *(const gs_v4 *)(c0 + q) * xv;
        s1 += *(const gs_v4 *)(c1 + q) * xv;
        s2 += *(const gs_v4 *)(c2 + q) * xv;
        s3 += *(const gs_v4 *)(c3 + q) * xv;
    }
    double t0[4], t1[4], t2[4], t3[4];
    memcpy(t0, &s0, sizeof t0);
    memcpy(t1, &s1, sizeof t1);
    memcpy(t2, &s2, sizeof t2);
    memcpy(t3, &s3, sizeof t3);
    d[0] = lanes_sum(t0);
    d[1] = lanes_sum(t1);
    d[2] = lanes_sum(t2);
    d[3] = lanes_sum(t3);
    for (; q < k; q++) {
        d[0] += c0[q] * x[q];
        d[1] += c1[q] * x[q];
        d[2] += c2[q] * x[q];
        d[3] += c3[q] * x[q];
    }
}

/* x <- L^-T x from the bottom in blocks of four rows: the four columns'
 * dot products with x below the block in one sweep (dots4), then the 4 x 4
 * block. O(k^2). */
GS_SIMD_CLONES static void trsv_lt(int k, const double *L, size_t ld, double *x)
{
    int i = k;
    for (; i >= 4; i -= 4) {
        const int b = i - 4;
        const double *c0 = L + (size_t)b * ld, *c1 = c0 + ld, *c2 = c1 + ld, *c3 = c2 + ld;
        double d[4];
        dots4(i, k, c0, c1, c2, c3, x, d);
        double r[4];
        block_recip(b, c0, ld, r);
        const double x3 = (x[b + 3] - d[3]) * r[3];
        const double x2 = (x[b + 2] - d[2] - c2[b + 3] * x3) * r[2];
        const double x1 = (x[b + 1] - d[1] - c1[b + 2] * x2 - c1[b + 3] * x3) * r[1];
        const double x0 =
            (x[b] - d[0] - c0[b + 1] * x1 - c0[b + 2] * x2 - c0[b + 3] * x3) * r[0];
        x[b] = x0;
        x[b + 1] = x1;
        x[b + 2] = x2;
        x[b + 3] = x3;
    }
    for (i = i - 1; i >= 0; i--) {
        const double *c = L + (size_t)i * ld;
        double d = 0.0;
        for (int q = i + 1; q < k; q++)
            d += c[q] * x[q];
        x[i] = (x[i] - d) / c[i];
    }
}

/* y[p] = B[0..k, p]' x for the n columns of B, four per sweep (dots4). */
GS_SIMD_CLONES static void cols_dot(int k, const double *B, size_t ld, int n, const double *x,
                                    double *y)
{
    int p = 0;
    for (; p + 4 <= n; p += 4) {
        const double *c0 = B + (size_t)p * ld;
        dots4(0, k, c0, c0 + ld, c0 + 2 * ld, c0 + 3 * ld, x, y + p);
    }
    for (; p < n; p++) {
        const double *c = B + (size_t)p * ld;
        double d[4];
        dots4(0, k, c, c, c, c, x, d);
        y[p] = d[0];
    }
}

void gs_cols_dot(int k, const double *B, size_t ld, int n, const double *x, double *y)
{
    cols_dot(k, B, ld, n, x, y);
}

void gs_trsv_l(int k, const double *L, size_t ld, double *x)
{
    trsv_l(k, L, ld, x);
}

void gs_trsv_lt(int k, const double *L, size_t ld, double *x)
{
    trsv_lt(k, L, ld, x);
}

void gs_trsm_l(int k, const double *L, size_t ld, double *X, size_t ldx, int n)
{
    trsm_l(k, L, ld, X, ldx, n);
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

void *gs_alloc_matrix(size_t count, size_t size, int zero)
{
    if (size == 0 || count > SIZE_MAX / size)
        return NULL;
    const size_t bytes = (count ? count : 1) * size;
    if (bytes < GS_HUGE_MIN_BYTES)
        return zero ? calloc(1, bytes) : malloc(bytes);
    const size_t huge = (size_t)2 << 20;
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0)
        return NULL;
#ifdef __linux__
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
    if (zero)
        memset(p, 0, bytes); /* the first touch, 2 MiB a fault */
    return p;
}
