/*
 * npm_impl.h -- private: the Newton projection method's workspace, its
 * per-solve context, its named constants and the functions its files share.
 * The method is described in npm.c; the files:
 *   npm.c         the driver: workspace, start, free set, Newton direction,
 *                 iteration and termination, the gradient of each form, the
 *                 method table entry
 *   npm_linear.c  the reduced system Q_SS z = b: updated Cholesky (cset.h),
 *                 Jacobi CG (pcg.h), combined
 *   npm_search.c  the step length along the projected path: exact minimum
 *                 of the piecewise quadratic (per form), golden section,
 *                 Armijo
 *   npm_polish.c  the polish on the contact set and the restart from it
 *   core/square_cov.c  the square change of variables y = A~'x of the
 *                 primal form (a property of A, not of NPM)
 * Vectors are of length nv (m for the dual and relative forms, n for the
 * primal iterate z = (w, x_U)) unless marked m.
 */
#ifndef GS_NPM_IMPL_H
#define GS_NPM_IMPL_H

#include "candidates.h"
#include "cset.h"
#include "solver_impl.h"
#include "square_cov.h"

/* ---- constants --------------------------------------------------------- */

/* Bertsekas' eps_k = min(NPM_EPS0_REL * max_i x_i, ||x - P(x - D grad)||):
 * the width of the band of near-bound variables fixed at the bound.
 * Measured: 1e-2 .. 1 of the largest variable fixes pairs too early and
 * multiplies the Newton iterations by 6 on the lap joint. */
#define NPM_EPS0_REL 1e-6

/* Dual form: violated pairs join the free set in batches of the most
 * violated NPM_BATCH_BASE + |F| / NPM_BATCH_DIV (loaded pairs first): with
 * all of them at once the first free set is nearly every pair. Since the
 * polish follows every Newton step, a pair that joins and is then pruned
 * costs a factor append (O(k^2)) for nothing: 16 + |F|/4 instead of 32 +
 * |F|/2 takes 30-50% more Newton steps and is 15-25% faster at 50-100% on
 * both joints (equal at 10%; docs/solvers.md). */
#define NPM_BATCH_BASE 16
#define NPM_BATCH_DIV 4

/* A polish at the latest every NPM_POLISH_EVERY Newton steps: a block
 * active-set step on the current contact set (the exact minimizer on it,
 * negatives pruned) from which the projected iteration restarts. The dual
 * form polishes after every step (NPM_POLISH_EVERY_DUAL): measured on
 * 2026-11-26 (gapsim-bench --check 1e-7, thread CPU time), sandwich joint
 * 289 / 1,701 / 4,486 ms per gap at 10 / 50 / 100 % with a polish every 10
 * steps, 48 / 747 / 1,417 every 2, 23 / 239 / 682 every step (Newton steps
 * 60-88 -> 14-16); the lap joint unchanged (6.5-7.4 / 25-32 / 46-48 ms).
 * The relative and primal forms polish every NPM_POLISH_EARLY (2) steps
 * until NPM_POLISH_EARLY_STALLS (5) polishes have left violations, then
 * every NPM_POLISH_EVERY (10): polished every step, or every 2 steps
 * throughout, their iteration cycles between the polished set and the next
 * Newton step on some gaps until the stall cap (test_npm's lap 50 %
 * chol/Armijo variant, every 2); the switch to 10 breaks the cycle.
 * Measured 2026-11-26 (gapsim-bench --check 1e-7, thread CPU, mean ms per
 * gap, every 10 -> adaptive): lap relative combined/exact 804 / 563 / 220
 * -> 388 / 299 / 196 at 10 / 50 / 100 %, cg/golden 1,461 / 2,525 / 3,523 ->
 * 289 / 268 / 350, primal 535 / 601 / 690 -> 208 / 320 / 481; sandwich
 * relative combined/exact 16.4 / 14.2 s -> 7.2 / 7.9 s, primal 1.07 / 1.26
 * s -> 0.56 / 0.74 s at 10 / 50 %. */
#ifndef NPM_POLISH_EVERY
#define NPM_POLISH_EVERY 10
#endif
#ifndef NPM_POLISH_EVERY_DUAL
#define NPM_POLISH_EVERY_DUAL 1
#endif
#ifndef NPM_POLISH_EARLY
#define NPM_POLISH_EARLY 2
#endif
#ifndef NPM_POLISH_EARLY_STALLS
#define NPM_POLISH_EARLY_STALLS 5
#endif
/* Polishes that leave violations (each restarts the iteration) before the
 * solve crosses over to GI relative from the polished contact set
 * (gs_gi_relative_finish: its ratio tests keep the multipliers feasible, so
 * it cannot cycle as the restarts did). Measured 2026-11-26 over 2,600
 * relative and primal solves (test_solvers_agree's small lap, sandwich,
 * lap-fine clouds; the bench's lap and sandwich gaps at 10 / 50 / 100 %):
 * at most 6 polishes left violations; the ones that reached the former cap
 * of 50 (3 lap-fine primal gaps in 3,000 small clouds) cycled between two
 * contact sets whose polishes leave violations of 4e-8 and 1e-7 mm. The
 * dual form polishes after every Newton step, so its cap allows as many
 * Newton steps as the others' former one (500; the measured solves take
 * 11-17). */
#define NPM_MAX_STALLS 12
#define NPM_MAX_STALLS_DUAL 500
/* A step length below this is no move at all (the line search found no
 * descent at round-off level): polish and verify. */
#define NPM_ALPHA_NONE 1e-12
/* |alpha - 1| below this counts as a full Newton step (the exact search
 * returns 1 up to the rounding of -s1 / s2). */
#define NPM_ALPHA_FULL_TOL 1e-6

/* CG on Q_SS (npm_linear.c): relative tolerance
 * min(NPM_CG_RTOL_MAX, NPM_CG_RTOL_RATE^(newton + 1), ||projected gradient||),
 * floored at NPM_CG_RTOL_MIN: inexact early, tightened over the Newton
 * iterations (forcing sequence), never below what double precision
 * resolves on Q_SS. */
#define NPM_CG_RTOL_MAX 1e-2
#define NPM_CG_RTOL_RATE 0.1
#define NPM_CG_RTOL_MIN 1e-14
/* CG alone: at most NPM_CG_CAP_PER_UNKNOWN k + NPM_CG_CAP_BASE iterations
 * (well above the k of exact arithmetic; a capped solve is an inexact step). */
#define NPM_CG_CAP_PER_UNKNOWN 10
#define NPM_CG_CAP_BASE 50
/* combined: CG while every solve converges within NPM_COMBINED_CG_BASE +
 * sqrt(k) iterations; the first that needs more switches to the updated
 * Cholesky factor for the rest of the solve (CG slows: Q_SS is ill
 * conditioned, and the factor's O(k^2) update is cheaper than more CG). */
#define NPM_COMBINED_CG_BASE 10

/* Golden section on log(alpha) over [NPM_GOLDEN_ALPHA_MIN, 1] (the minimum
 * is typically at 1 or near 0): at most NPM_GOLDEN_MAX_IT reductions, until
 * the bracket is NPM_GOLDEN_LOG_TOL wide in log(alpha) (0.1% in alpha). */
#define NPM_GOLDEN_ALPHA_MIN 1e-10
#define NPM_GOLDEN_MAX_IT 40
#define NPM_GOLDEN_LOG_TOL 1e-3
/* Armijo backtracking: sufficient decrease NPM_ARMIJO_SIGMA g'Delta (the
 * usual 1e-4), alpha multiplied by NPM_ARMIJO_SHRINK, at most
 * NPM_ARMIJO_MAX_IT times (0.5^60 ~ 1e-18: no step is left), then 0. */
#define NPM_ARMIJO_SIGMA 1e-4
#define NPM_ARMIJO_SHRINK 0.5
#define NPM_ARMIJO_MAX_IT 60

/* ---- workspace and context --------------------------------------------- */

/* A breakpoint of the projected path: step a, support position i. */
typedef struct {
    double a;
    int i;
} npm_bp;

typedef struct {
    gs_cset cs;
    double *x, *g;      /* nv: iterate and gradient */
    double *d;          /* nv: direction */
    double *xn;         /* m: scratch (the polish's w) */
    double *z, *b;      /* m: solution / rhs of Q_SS z = b (position order) */
    double *r, *pv, *qv, *hv; /* m: CG vectors (hv also the Newton point) */
    double *q;          /* nv: Q_LL d_L (line search, support order) */
    double *gl;         /* nv: gradient on the support (line search) */
    double *dl;         /* nv: segment direction on the support */
    double *y, *yd, *yt, *v; /* nv: relative line search (y space), scratch */
    int *L;             /* nv: support of d */
    int *S;             /* m: the system set (CG mode) */
    int *spos;          /* m: position of a pair in S, or -1 */
    int *list;          /* m: scratch list */
    unsigned char *in;  /* m: membership marks */
    npm_bp *bkeys;      /* nv: breakpoints */
    gs_cand *cand;      /* m: violated pairs entering the free set (dual) */
    int nv;             /* length of the iterate: m (dual, relative), n (primal) */
    /* primal (4): the square change of variables y = A~'x */
    gs_sqcov sq;
    int *exi;           /* n: support of a column of A~^-T */
    double *exv;        /* n: its values */
    double *px, *pr, *pf, *pdx, *pkdx, *prt, *ptmp; /* n: x, Kx - f, f, scratch */
} npm_ws;

typedef struct {
    npm_ws *ws;
    gs_solver *s;
    const gs_problem *pb;
    const gs_solve_opts *o;
    gs_form form;
    int chol;   /* 1: the factor holds S (chol mode, or combined after the switch) */
    int ns;     /* |S| in CG mode */
    int cg_its; /* total inner CG iterations */
    int newton; /* Newton iterations */
    gs_status stop; /* set by a CG solve stopped by the cancel flag or the deadline */
} npm_ctx;

/* Whether pair i is in the system set S (the factor's set or CG's). */
static inline int npm_in_system(const npm_ctx *c, int i)
{
    return c->chol ? c->ws->cs.pos[i] >= 0 : c->ws->spos[i] >= 0;
}

/* ---- npm_linear.c: the reduced system Q_SS z = b ------------------------ */

/* y = Q_SS x over the index list S (k), O(k^2). */
void npm_qss_mult(const npm_ctx *c, const int *S, int k, const double *x, double *y);
/* Bring the factor to the set marked in ws->in (list ws->list[0..nl)).
 * GS_OK or GS_ERR_NOMEM. */
gs_err npm_chol_sync(npm_ctx *c, int nl);
/* Set S to the marked list (nl pairs). */
gs_err npm_set_system(npm_ctx *c, int nl);
/* S and its size. */
const int *npm_sys_set(const npm_ctx *c, int *k);
/* Solve Q_SS z = b (S order); pg tightens the CG tolerance. GS_OK,
 * GS_ERR_NOT_SPD (a dependent pair left S at the switch to the factor: redo
 * the step), GS_ERR_NOMEM; c->stop set when CG was cancelled. */
gs_err npm_sys_solve(npm_ctx *c, const double *b, double *z, double pg);

/* ---- npm.c: the objective of each form ---------------------------------- */

/* Dual: g = Q lam - p, O(m nnz(lam)). */
void npm_dual_gradient(const gs_solver *s, const double *lam, double *g);
/* Relative: y = L_Q^-1 (w + p), lam = L_Q^-T y. Two dtrsv, O(m^2). */
void npm_rel_gradient(const gs_solver *s, const double *w, double *y, double *lam);
/* z <- L_Q^-1 z (m). */
void npm_lq_solve_L(const gs_solver *s, double *z);
/* Primal: px = x(z), pr = K px - f, g = dphi/dz. O(sum n_b^2 + n). */
void npm_prim_gradient(npm_ctx *c);
/* Primal: px = K^-1 (f - A lam), zt = z(px). O(sum n_b^2 + n). */
void npm_prim_point(npm_ctx *c, const double *lam, double *zt);
/* Primal: x = A~^-T y, y = (g - z_pairs, z_U) (affine) or (-z_pairs, z_U). */
void npm_prim_x_of_z(const npm_ctx *c, const double *z, int affine, double *x);

/* ---- npm_search.c: the step length -------------------------------------- */

/* Step length along the projected path x + alpha d (support ws->L[0..nl))
 * by o->linesearch for the form. Fills ws->dl (Delta at the step taken by
 * the last evaluation). */
double npm_step_length(npm_ctx *c, int nl);

/* ---- npm_polish.c --------------------------------------------------------- */

/* Polish on the contact set of lam (m); lam and w (m) out. Returns the
 * violations left, or -1 on no memory. */
int npm_polish(npm_ctx *c, double *lam, double *w);
/* The iterate and its gradient from the polished (lam, w). */
void npm_restart_from(npm_ctx *c, const double *lam, const double *w);

#endif
