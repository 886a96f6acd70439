/*
 * linalg.h -- thin, checked wrappers over BLAS/LAPACK used across gapsim.
 *
 * Owns: the Cholesky factorization with LAPACK info turned into a gs_error
 * naming the matrix, the condition estimate (dlansy + dpotrf + dpocon), and
 * the monotonic clock. All matrices are column-major, lower triangle
 * authoritative. Nothing here allocates in a hot loop.
 */
#ifndef GS_LINALG_H
#define GS_LINALG_H

#include <stddef.h>
#include "gs_error.h"

/* In-place lower Cholesky A = L L' (n x n, leading dim lda). On failure
 * returns GS_ERR_NOT_SPD (err->lapack_info = leading minor order) naming
 * `field`; a NaN or Inf in the lower triangle: GS_ERR_INVALID (or
 * GS_ERR_NOT_SPD where it turns a pivot negative first). The strict
 * upper triangle is left untouched. O(n^3/3), blocked. */
gs_err gs_chol(double *A, int n, int lda, const char *field, gs_error *err);

/* Cholesky passes a numerically singular matrix (a rigid-body mode, a
 * dependent pair) when round-off leaves a tiny positive pivot. A pivot with
 * L_ii^2 below GS_PIVOT_RTOL times the matrix's own diagonal entry a_ii
 * means row i depends on the rows before it (a valid FE block or Q with
 * cond 1e8 has ratios of 1e-8 or more). The one rule of the dense blocks,
 * Q (precompute.c) and the sparse parts (spchol.c). */
#define GS_PIVOT_RTOL 1e-13
/* The first row i of the factor L (n x n, lda) whose pivot is that small
 * against diag[i * dstride] (the diagonal before the factorization), or -1;
 * *ratio = L_ii^2 / a_ii there. O(n). */
int gs_chol_small_pivot(const double *L, int n, int lda, const double *diag, size_t dstride,
                        double *ratio);

/* 1-norm reciprocal condition estimate of an SPD matrix from its original
 * 1-norm `anorm` and its Cholesky factor L (dpocon, O(n^2)). */
gs_err gs_chol_rcond(const double *L, int n, int lda, double anorm, double *rcond,
                     const char *field, gs_error *err);

/* 1-norm of a symmetric matrix (lower triangle read), O(n^2). */
double gs_sym_norm1(const double *A, int n, int lda);

/* Condition estimate cond_1(K) of an SPD matrix, not modifying K (factors a
 * copy). O(n^3/3). */
gs_err gs_spd_cond_est(const double *K, int n, double *cond, const char *field, gs_error *err);

/* Threads OpenBLAS may use in the calling process (1 while a worker pool
 * solves one problem per core; all cores for the precomputation). The
 * setting is left alone when it is already n, so that code run on
 * gs_run_blas1_workers' threads may ask for 1 thread (and restore what it
 * found) without the workers rewriting OpenBLAS's global under each other. */
void gs_blas_set_threads(int n);
/* The BLAS thread count now in force. */
int gs_blas_get_threads(void);
/* The kernel OpenBLAS runs here ("Haswell", "SkylakeX", ...: it picks one
 * for the CPU when the library loads, or OPENBLAS_CORETYPE names it; *pinned
 * says the variable chose it) and its build line (version and options).
 * Results differ by kernel at round-off only; speeds by up to 1.7x
 * (docs/operations.md). */
const char *gs_blas_kernel(int *pinned, const char **build);
/* The kernel as the programs print it: "Haswell", or "Haswell, chosen by
 * OPENBLAS_CORETYPE" when pinned; into buf, returned. */
const char *gs_blas_describe(char *buf, size_t cap);

/* Run fn(arg) on `threads` threads at once (this one included; at most 64),
 * each with single-threaded BLAS, and wait for all; the BLAS thread count
 * is restored after. fn takes its share of the work from arg (a shared
 * counter): the result must not depend on which thread does what, so that
 * it does not depend on the thread count either. */
void gs_run_blas1_workers(int threads, void *(*fn)(void *), void *arg);
/* item(ctx, i, err) for the items i = 0..n-1, on up to `threads` threads
 * (gs_run_blas1_workers when blas1; else OpenBLAS's process-wide setting is
 * left alone, for work that calls no BLAS, such as reading files), handed out in
 * index order from a shared counter. The first failing item in index order
 * is returned (its error in *err), as running them in turn would: items
 * after a failure are not started (those before it were, and finish).
 * GS_ERR_NOMEM if the bookkeeping (n codes and errors) has no memory. */
gs_err gs_run_items(int threads, int blas1, int n,
                    gs_err (*item)(void *ctx, int i, gs_error *err), void *ctx, gs_error *err);

/* Seconds on a monotonic clock. */
double gs_now(void);
/* CPU seconds of the calling thread (time-slicing on a loaded machine does
 * not count: for comparing the cost of two ways of doing the same work). */
double gs_thread_cpu(void);

/* y += A[:, cols] v: the k columns cols[c] of A (m rows, leading dim lda)
 * times v (k), eight columns per sweep over y (then four, then one), each
 * y_i summed in the order of cols (no BLAS: the same rounding on every CPU
 * and every OpenBLAS kernel; on x86-64 an AVX2 clone without FMA is picked
 * at load time where the CPU has it and rounds exactly like the baseline
 * code). O(m k). */
void gs_cols_mul(int m, const double *A, size_t lda, const int *cols, const double *v, int k,
                 double *y);
/* y += A v over the nonzeros of v (n), in index order, four columns per
 * sweep (gs_cols_mul on each four). O(m nnz(v)). */
void gs_sparse_mul(int m, const double *A, size_t lda, const double *v, int n, double *y);

/* Triangular solves with a lower triangular L (k x k, leading dim ld,
 * non-unit diagonal): x <- L^-1 x (gs_trsv_l) and x <- L^-T x (gs_trsv_lt),
 * in place. Blocks of four columns (rows) per sweep, a fixed summation
 * order (no BLAS: the same rounding on every CPU and OpenBLAS kernel, AVX2
 * clone as gs_cols_mul). Written for the active-set factors of order up
 * to a few thousand that stay in cache: at k = 80 / 280 on this project's
 * machine 2.0 / 1.5x (L^-1) and 2.2 / 1.9x (L^-T) the speed of OpenBLAS's
 * dtrsv. O(k^2). */
void gs_trsv_l(int k, const double *L, size_t ld, double *x);
void gs_trsv_lt(int k, const double *L, size_t ld, double *x);
/* X <- L^-1 X for the n columns of X (leading dim ldx), each column rounded
 * exactly as gs_trsv_l would, L read once for all of them. O(k^2 n). */
void gs_trsm_l(int k, const double *L, size_t ld, double *X, size_t ldx, int n);

/* y[p] = B[0..k, p]' x for the n columns of B (leading dim ld): four
 * columns per sweep, each dot product in four lanes summed in a fixed
 * order (no BLAS; the rounding of gs_trsv_lt's dot products, AVX2 clone as
 * gs_cols_mul). O(k n). */
void gs_cols_dot(int k, const double *B, size_t ld, int n, const double *x, double *y);
/* The plane rotation that removes a member from an updated Cholesky factor
 * (solvers/cholup.h), over n rows: dst_i = c l_i + s x_i, then x_i = c x_i
 * - s l_i (dst may not overlap l or x). AVX2 clone without FMA as
 * gs_cols_mul (bitwise the baseline's results): at n = 50 / 200 / 600, 32 /
 * 90 / 224 ns against 49 / 150 / 398 ns for the SSE2 code. O(n). */
void gs_rotate(int n, double *dst, const double *l, double *x, double c, double s);
/* Overflow-checked size products for allocation: returns 0 on overflow. */
size_t gs_mul_size(size_t a, size_t b);
/* count elements of size bytes (at least one) for a large dense matrix
 * (stiffness blocks, factors, Q, L_Q, inverses, the solvers' m x m
 * workspaces), zeroed if zero; NULL on overflow or no memory; free with
 * free(). From GS_HUGE_MIN_BYTES on, the block starts on a 2 MiB boundary
 * and is advised to the kernel as transparent huge pages (madvise
 * MADV_HUGEPAGE; a no-op where THP is "never"): a first touch maps 2 MiB
 * at a time instead of 4 KiB (512x fewer page faults), and a sweep over
 * the matrix misses the TLB 512x less often. */
#define GS_HUGE_MIN_BYTES (8u << 20)
void *gs_alloc_matrix(size_t count, size_t size, int zero);

#endif
