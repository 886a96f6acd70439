/*
 * precompute.h -- the once-per-assembly precomputation every solve reuses.
 *
 * From a validated model it builds, in this order (stage times recorded):
 *   1. L_b      lower Cholesky factor of each stiffness block K_b (dpotrf)
 *   2. Q        = A'K^-1 A (m x m, SPD, dense). Per part b, with A_b the rows
 *               of A in block b restricted to the m_b pairs touching b, the
 *               cheaper of: B_b = L_b^-1 A_b (dtrsm), Q += B_b'B_b (dsyrk,
 *               scattered), n_b^2 m_b + n_b m_b^2 flops; or K_b^-1 from L_b
 *               (dpotri, 2 n_b^3 / 3) and Q += A_b'K_b^-1 A_b gathered
 *               (4 m_b^2) -- 3x fewer flops on condensed junction blocks,
 *               where m_b ~ n_b; the dpotri run one part per thread with
 *               single-threaded BLAS (the result does not depend on the
 *               thread count). A has 1-2 nonzeros per column, so no n x m
 *               matrix is formed: the largest intermediate is n_b x max(n_b,
 *               m_b). Q's lower triangle is accumulated, then mirrored.
 *   3. u0       = A'K^-1 f_base, s0 = 1/2 f_base'K^-1 f_base
 *   4. L_Q      lower Cholesky factor of Q (dpotrf), the factor of K~ = Q^-1 =
 *               L_Q^-T L_Q^-1 that the dual GI, NPM and IPM use. Its failure is
 *               how linearly dependent pairs are found. It can be deferred
 *               (GS_PRECOMP_DEFER_LQ: gapsimd answers "ready" without it and
 *               computes it next), since GI relative never reads it.
 *   5. cond_1 estimates of K (over all blocks) and Q (dlansy + dpocon).
 * Stages 2 and 4 end with a check of what they made against the model, by
 * probes in gapsim's own loops (precomp_check.h; in their times): a BLAS
 * that computes wrong results fails the build (GS_ERR_CHECK) instead of
 * certifying wrong answers later.
 * Sparse parts (a whole FE mesh, gs_part.Ksp): stage 1 is CHOLMOD's sparse
 * Cholesky (core/spchol.h, kept for displacement recovery; one part per
 * thread, single-threaded BLAS), stage 2 takes (K_b^-1)[R, R] for the part's
 * contact DOFs R, from the Schur complement of R when the factor ordered R
 * last (|R|^2 < nnz(L_b) / 2: 2 |R|^3 / 3 flops) or by |R| sparse solves
 * (4 nnz(L_b) flops each, chunks of 64 on every core), and gathers Q's term
 * like the inverse route: no dense K_b, no dense inverse of the mesh;
 * memory nnz(L_b) + 2 |R|^2.
 * Cost (dense parts): sum_b (n_b^3/3 + min(n_b^2 m_b + n_b m_b^2, 2 n_b^3/3)) + m^3/3 flops, BLAS-3 /
 * blocked LAPACK; memory: K blocks + factors (2 sum n_b^2) + Q and L_Q (2 m^2).
 * The result is read-only and shared by all solver threads.
 */
#ifndef GS_PRECOMPUTE_H
#define GS_PRECOMPUTE_H

#include <stdatomic.h>

#include "gs_error.h"
#include "model.h"
#include "spchol.h"

typedef struct {
    double factor_K;  /* s, stage 1 */
    double build_Q;   /* s, stage 2 */
    double loads;     /* s, stage 3 */
    double factor_Q;  /* s, stage 4 */
    double cond;      /* s, stage 5 */
    double total;
} gs_precomp_times;

typedef struct {
    const gs_model *mdl; /* borrowed: must outlive the precomputation */
    int n, m;
    double **L;          /* per dense part: lower factor of K_b, ndof x ndof col-major
                            (NULL for a sparse part) */
    gs_spchol **F;       /* per sparse part: its CHOLMOD factor (NULL for a dense part) */
    double *Q;           /* m x m, both triangles, column-major (Q[:,j] contiguous) */
    double *LQ;          /* m x m, lower factor of Q, strict upper triangle zero; NULL
                            until gs_precomp_finish_lq when the build deferred it */
    double *qdiag;       /* diag(Q) */
    double *u0;          /* A'K^-1 f_base (m) */
    double s0;           /* 1/2 f_base'K^-1 f_base */
    double cond_K;       /* cond_1(K) estimate: max_b ||K_b||_1 * max_b ||K_b^-1||_1 */
    double cond_Q;       /* cond_1(Q) estimate (NaN until L_Q is there) */
    double *cond_block;  /* cond_1(K_b) estimate per part */
    double normK1;       /* max_b ||K_b||_1 */
    gs_precomp_times t;
    atomic_int lq_ready; /* 1 once LQ and cond_Q are set (gs_precomp_has_lq) */
    atomic_int parts_ready; /* 1 once every sparse part has its F[b]
                               (gs_precomp_has_part_factors) */
    double **taken;      /* during gs_precomp_build_taken only: blocks to factor in place */
    double **kdiag;      /* during a build only: diag(K_b) of each dense part before its
                            factorization, for the check (precomp_check.h) */
} gs_precomp;

/* Flags of gs_precomp_build_ex. */
enum {
    /* Stop after stage 3 (and cond_K): LQ stays NULL, cond_Q NaN, until
     * gs_precomp_finish_lq. What GI on the relative and primal forms, Lemke
     * and the reference solver need is complete without it: they never read
     * L_Q. The dual GI, NPM and IPM do (gs_method_needs_lq, solver.h). */
    GS_PRECOMP_DEFER_LQ = 1u,
    /* For gs_precomp_load_ex and gapsim-mpi's receiving ranks (a build
     * needs the factors for Q and keeps them): the sparse parts stay
     * unfactored (F[b] NULL) until gs_precomp_factor_sparse. Only
     * solves with K need them: displacements (want_x, the primal
     * certificate) and the primal forms (gs_method_needs_part_factors,
     * solver.h); gs_solve refuses those on such a precomputation. */
    GS_PRECOMP_DEFER_SPARSE = 2u,
};

/* Build the precomputation of a validated model. Errors: GS_ERR_NOT_SPD naming
 * "parts[b].K" (with the LAPACK info) for a non-SPD block; GS_ERR_SINGULAR for
 * a singular Q (linearly dependent contact pairs) naming the pair where the
 * factorization broke down; GS_ERR_NOMEM. */
gs_err gs_precomp_build(const gs_model *mdl, gs_precomp **out, gs_error *err);
/* gs_precomp_build with flags (GS_PRECOMP_DEFER_LQ); build = build_ex(0). */
gs_err gs_precomp_build_ex(const gs_model *mdl, unsigned flags, gs_precomp **out,
                           gs_error *err);
/* gs_precomp_build_ex on a model whose dense blocks the caller took
 * (gs_model_take_dense): blocks[b] is factored in place and becomes L[b]
 * (the precomputation's, freed with it), so the build holds each block once
 * instead of beside its copy; a block a failure never reached is freed.
 * Every blocks[b] is NULL on return; the array stays the caller's. The same
 * bits as gs_precomp_build_ex on the model before the take. blocks NULL
 * (nothing taken): gs_precomp_build_ex. mdl: released by the take. */
gs_err gs_precomp_build_taken(const gs_model *mdl, double **blocks, unsigned flags,
                              gs_precomp **out, gs_error *err);
/* The stage a build is in, for a watcher on another thread (gapsimd's
 * answer about a precomputing assembly): GS_STAGE_QUEUED until the build
 * starts, then each stage as it begins (the check: precomp_check.h). */
typedef enum {
    GS_STAGE_QUEUED = 0,
    GS_STAGE_FACTOR_K,
    GS_STAGE_BUILD_Q,
    GS_STAGE_CHECK,
    GS_STAGE_LOADS,
    GS_STAGE_FACTOR_Q,
    GS_STAGE__COUNT
} gs_precomp_stage;
/* "queued", "factor_K", "build_Q", "check", "loads", "factor_Q" (the
 * names of the stage times, precompute.times_s). */
const char *gs_precomp_stage_name(int stage);
/* gs_precomp_build_taken publishing its stage in *stage (relaxed stores;
 * NULL: none). */
gs_err gs_precomp_build_watched(const gs_model *mdl, double **blocks, unsigned flags,
                                atomic_int *stage, gs_precomp **out, gs_error *err);
/* Stages 4 and 5 for Q of a deferred build: L_Q, cond_Q, their times (added
 * to t.total); then gs_precomp_has_lq is 1 (a release store: readers that
 * see it see LQ). A no-op returning GS_OK when L_Q is there. Errors as the
 * build's (GS_ERR_SINGULAR naming the pair, GS_ERR_NOMEM); on error LQ stays
 * NULL. O(m^3 / 3). Not safe to call from two threads at once (the caller
 * serializes); safe while other threads solve with what pc already holds. */
gs_err gs_precomp_finish_lq(gs_precomp *pc, gs_error *err);
/* 1 if pc->LQ and cond_Q are set (an acquire load). */
int gs_precomp_has_lq(const gs_precomp *pc);
/* 1 if every sparse part has its factor (always, unless loaded or received
 * with GS_PRECOMP_DEFER_SPARSE and not yet gs_precomp_factor_sparse); an
 * acquire load, so that a solve may start beside that call. O(1). */
int gs_precomp_has_part_factors(const gs_precomp *pc);
void gs_precomp_free(gs_precomp *pc);
/* Bytes pc's arrays hold now (Q, L_Q once it is there, the parts' factors
 * once they are there, the vectors), for memory budgets; safe beside
 * gs_precomp_finish_lq and gs_precomp_factor_sparse (acquire loads), which
 * it counts only once they are done. O(n_parts). */
size_t gs_precomp_bytes(const gs_precomp *pc);
/* What gs_precomp_bytes says of mdl's complete precomputation (with L_Q),
 * known before building it: exact for dense parts; a sparse part's
 * factor (its fill is known only after the ordering) is not counted, so
 * for those it is a lower bound. O(n_parts). */
size_t gs_precomp_bytes_ahead(const gs_model *mdl);

/* In place b <- K^-1 b (n), part by part (two dtrsv on a dense part, a
 * CHOLMOD solve on a sparse one). O(sum n_b^2) dense, O(nnz(L_b)) sparse.
 * Returns 0, or -1 if a sparse solve found no memory or a sparse part has
 * no factor (GS_PRECOMP_DEFER_SPARSE; b is then NaN). */
int gs_precomp_kinv(const gs_precomp *pc, double *b);

/* In place B <- K_b^-1 B for part b (B: n_b x ncol, column-major, leading
 * dimension ldb). Dense: two dtrsm, O(n_b^2 ncol); sparse: O(nnz(L_b) ncol).
 * GS_ERR_NOMEM from a sparse solve; GS_ERR_INVALID for a sparse part
 * without its factor (GS_PRECOMP_DEFER_SPARSE). */
gs_err gs_precomp_part_solve(const gs_precomp *pc, int b, double *B, int ldb, int ncol,
                             gs_error *err);

/* Factor the sparse parts of a precomputation whose dense data was loaded
 * from a file (precomp_io: sparse factors are not stored). O(CHOLMOD).
 * One part per thread on up to `threads` threads (0: OpenBLAS's thread
 * count; the factors do not depend on it). Writes only the missing F[b],
 * then (release) the flag gs_precomp_has_part_factors reads: solves that do
 * not need them may run meanwhile (gapsimd); two calls at once may not. */
gs_err gs_precomp_factor_sparse(gs_precomp *pc, int threads, gs_error *err);

/* y = Q x for a vector x with support S (|S| = ns, x given on S: xs[i] for
 * index S[i]); y is m long. O(m ns) using contiguous columns of Q
 * (gs_cols_mul). With
 * S = NULL, x is dense (xs has m entries) and dsymv is used, O(m^2). */
void gs_precomp_Qx(const gs_precomp *pc, const int *S, int ns, const double *xs, double *y);

#endif
