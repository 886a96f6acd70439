/*
 * spchol.h -- sparse Cholesky of a part's FE stiffness (CHOLMOD).
 *
 * Owns: the factor P K P' = L L' of a sparse SPD stiffness matrix (a model's
 * sparse part, whole FE mesh, 10^4-10^6 DOFs), computed once by CHOLMOD
 * (fill-reducing ordering chosen by CHOLMOD's analysis: AMD or nested
 * dissection; supernodal factorization on BLAS-3), and the three things the
 * precomputation and the solvers ask of it:
 *   - K^-1 B for dense right-hand sides (displacement recovery, u0, GI primal);
 *   - (K^-1)[R, R] for a row set R (the part's contact DOFs): the part's
 *     term of Q = A'K^-1 A without a dense K or a dense inverse, from the
 *     Schur complement of R when the factor ordered R last, else by solves;
 *   - a condition estimate.
 * The factor is read-only after gs_spchol_factor: every call below may run
 * concurrently from many threads (each call has its own cholmod_common).
 *
 * Determinism: the ordering is fixed by the matrix (and the rows asked to
 * come last); the solves for (K^-1)[R, R] run in fixed chunks of columns,
 * each with single-threaded BLAS, so they do not depend on how the chunks
 * are spread over threads; the Schur route's dpotri runs single-threaded.
 * The factorization uses the BLAS threads in force (the precomputation
 * factors each part with one: the same bits on any thread count).
 * The supernodal factorization uses the BLAS threads in force and, like the
 * dense dpotrf of condensed blocks, may round differently with their count:
 * a precomputation file fixes Q and L_Q (and so every solve's lam and w);
 * only displacements x, from the factor recomputed on load, may differ in
 * the last bits between machines.
 */
#ifndef GS_SPCHOL_H
#define GS_SPCHOL_H

#include <stddef.h>

#include "gs_error.h"
#include "spmat.h"

typedef struct gs_spchol gs_spchol;

/* Factor K (both triangles stored, exactly symmetric: gs_spmat_symmetric_full;
 * only its lower triangle is read). Errors: GS_ERR_NOT_SPD naming `field`
 * and the row where the factorization broke down (err->lapack_info = that
 * 1-based column); GS_ERR_NOMEM. Cost: CHOLMOD's analysis + factorization,
 * O(flops(L)) ~ O(n^1.5) for 2-D meshes; memory nnz(L).
 * last[0..nlast) (ascending, distinct; NULL when nlast = 0): the rows whose
 * block of K^-1 gs_spchol_inv_sub will be asked for (the contact DOFs).
 * mode 1 orders them after all other rows (constrained AMD), so that the
 * block comes from the factor's trailing dense block (the Schur route,
 * below); mode 0 leaves CHOLMOD's ordering; mode -1 orders them last when
 * nlast^2 < nnz(L) / 2 under that ordering (a mesh much larger than its
 * junction: the Schur route's ~nlast^3 flops are then far fewer than
 * nlast solves' 4 nlast nnz(L)), else CHOLMOD's ordering. Any order gives
 * a factor of K for every use below. */
gs_err gs_spchol_factor(const gs_spmat *K, const char *field, const int *last, int nlast,
                        int mode, gs_spchol **out, gs_error *err);
void gs_spchol_free(gs_spchol *f);

/* B <- K^-1 B in place: n x ncol, column-major, leading dimension ldb >= n.
 * Cost 4 nnz(L) flops per column. */
gs_err gs_spchol_solve(const gs_spchol *f, double *B, int ldb, int ncol, gs_error *err);

/* W = (K^-1)[R, R]: nr x nr, column-major, both triangles (exactly
 * symmetric: the lower triangle mirrored), for the rows R[0..nr) (distinct,
 * 0-based). When R is the factor's `last` rows ordered last (the Schur
 * route): the trailing block L_RR of the factor is the Cholesky factor of
 * the Schur complement S of the other rows and W = S^-1 (dpotri on one
 * thread: 2 nr^3 / 3 flops; memory 2 nr^2). Otherwise nr solves
 * in chunks of 64 columns on up to `threads` threads: nr * 4 nnz(L) flops,
 * memory 64 n doubles per thread. GS_ERR_NOT_SPD if S is singular to
 * working precision, GS_ERR_NOMEM. */
gs_err gs_spchol_inv_sub(const gs_spchol *f, const int *R, int nr, double *W, int threads,
                         gs_error *err);

/* 1 when gs_spchol_inv_sub takes the Schur route for R (f ordered exactly
 * these rows last): one thread, O(nr^3), so that callers may run several
 * parts side by side. O(nr). */
int gs_spchol_schur_route(const gs_spchol *f, const int *R, int nr);

/* The reciprocal of the 1-norm condition number of K, estimated from its
 * factor as LAPACK's dpocon does for a dense one (Hager-Higham: dlacn2, a
 * few solves, usually 4-5: O(nnz(L)) each); anorm = ||K||_1
 * (gs_spmat_norm1). CHOLMOD's own estimate, (min/max diag(L))^2, was 1e2-1e7
 * times too large on chains and meshes (cond 4e3 for 8e6). *rcond 0 for a
 * singular K. GS_ERR_NOMEM, or a solve's error. */
gs_err gs_spchol_rcond1(const gs_spchol *f, double anorm, double *rcond, gs_error *err);

/* Bytes the factor holds: L's values and indices (supernodal or
 * simplicial), the permutation and column counts, the rows ordered last.
 * For memory budgets. O(1). */
size_t gs_spchol_bytes(const gs_spchol *f);

#endif
