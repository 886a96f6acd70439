/*
 * ipm.c -- primal-dual interior point method (Mehrotra predictor-corrector)
 * on the primal formulation (1):
 *     min 1/2 x'Kx - f'x   s.t.   A'x <= g   (a_k'x = g_k on fastened pairs)
 *
 * Variables x (n), multipliers lam (m), slacks y = g - A'x (m). Perturbed KKT
 *     Kx - f + A lam = 0,   A'x - g + y = 0,   Lambda Y e = mu e.
 * Newton step with s1 = -(Kx - f + A lam), s2 = -(A'x - g + y),
 * s3 = -(Lambda Y e - sigma mu e), eliminated to the normal system (m x m,
 * SPD, dense):
 *     H dlam = r,  H = Q + Lambda^-1 Y,  r = A'K^-1 s1 + Lambda^-1 s3 - s2,
 *     dx = K^-1 (s1 - A dlam),  dy = Lambda^-1 (s3 - Y dlam).
 * K^-1 v uses the block factors (gs_precomp_kinv), Kx the stored blocks
 * (dsymv per part), A and A' the 1-2 nonzeros per column; Q is stored.
 * Sigma by Mehrotra's predictor-corrector, sigma = (mu_aff / mu)^3; a step
 * that would raise mu is cut to mu's minimizer along it; one step
 * length for x, lam and y (a QP: separate primal and dual steps would break
 * the stationarity row), fraction to the boundary tau = 0.995, raised to
 * 1 - mu/mu0 (at most 0.9999) late; lam and y clipped from below afterwards
 * (as HPIPM does) at 1e-16 of their scales.
 * Normal system (opts.ipm_linear):
 *   mixed (default): a Cholesky of H each iteration in single precision
 *     (spotrf on a float copy of the lower triangle of Q + Lambda^-1 Y: the
 *     flops of a double Cholesky at twice the rate, half its memory) as the
 *     preconditioner of a double PCG (flexible beta, two strsv per
 *     application), which converges in 2-4 iterations because the
 *     preconditioner is H up to float round-off; where spotrf fails (H too
 *     ill-conditioned for float) that iteration factors H in double instead
 *     and the PCG's first iteration solves it;
 *   split: PCG with the paper's preconditioner
 *     P3 = (L_Q + D)(L_Q + D)',  D = sqrt(Lambda^-1 Y),
 *     applied as two triangular solves with L_Q whose diagonal is read as
 *     diag(L_Q) + D (no refactorization, O(m^2)) in single precision: a float
 *     copy of L_Q per workspace (m^2 floats, made on the first split solve),
 *     its diagonal overwritten each iteration, two strsv per application
 *     (half the memory traffic of the double sweeps; only the preconditioner
 *     is inexact, the PCG stays double and uses the flexible Polak-Ribiere
 *     beta; IPM_SPLIT_FP32 0 restores the double sweeps);
 *   jacobi: PCG with diag(H);
 *   direct: a Cholesky of H each iteration in double (for comparison).
 * The PCG tolerance is
 * relative, eta = clamp(mu / mu0, 1e-10, 1e-3), so the steps are inexact early
 * and accurate late; the CG residual enters the next primal residual s2,
 * which the infeasible Newton step then removes. PCG is capped at 2m + 50
 * iterations; a capped solve is used as an inexact step. Predictor PCG
 * starts from 0, corrector PCG from the predictor's dlam. The PCG loop is
 * the solvers' shared one (pcg.h, also NPM's); it checks the cancel flag
 * every iteration and the deadline every GS_PCG_CLOCK_EVERY, so a solve
 * stops within one PCG iteration (status cancelled / time_limit, lam the
 * current iterate), or, with mixed and direct, after the factorization
 * under way (m^3/3 flops: 0.1 s at m = 2,603, 1 s at 5,628; the IPM loop
 * checks before each).
 * Fastened pairs (equality): multiplier free in sign, slack fixed at 0, so
 * their Lambda^-1 Y entry is 0 (H row = Q row), s3 = 0, dy = 0, and they take
 * no part in the step-length ratio test or in mu.
 * Starting points (opts.ipm_start):
 *   feasible: contact forces that push every pair open. lam_I = c e on the
 *     inequality pairs, lam_E = Q_EE^-1 (p_E - Q_EI lam_I) on the fastened
 *     ones, x = K^-1 (f - A lam): stationarity holds exactly, and the gaps
 *     y = w(lam) = Q lam - p are affine in c; c is the smallest value that
 *     opens every pair by at least delta (delta = 1e-2 ||p||_inf, floored),
 *     and at least a force of the order of the data. The equalities hold
 *     exactly unless some pair does not open under the uniform push (possible
 *     in sandwich joints: a node in two pairs), whose y is then clipped to
 *     delta (nearly feasible).
 *   infeasible (D'Apuzzo, De Simone, di Serafino 2010; Mehrotra 1992): x =
 *     K^-1 f (the free deflection, s1 = -A lam != 0), y = |p| (the gaps of
 *     the free deflection, in absolute value) and lam = |Q^-1 p| (the forces
 *     if every pair were in contact, in absolute value), then Mehrotra's
 *     complementarity-balancing shifts 1/2 y'lam / sum(y) on lam and
 *     1/2 y'lam / sum(lam) on y; floored at 1e-2 of the data scales.
 *   auto: feasible for simple joints, infeasible for sandwich joints (paper
 *     Table 4).
 * Stopping. The IPM only has to identify the contact set; the answer is
 * then computed exactly on it. Identification is tried once mu <= 1e-6 mu0,
 * ||s2||_inf <= 1e-6 max(1, ||g||_inf) mm and ||s1||_inf <= 1e-6 of the force
 * scale, and again after every further factor 10 in mu: C = E + {i : lam_i >
 * y_i}, lam_C = Q_CC^-1 p_C exactly (cset.h: one dpotrf, one step of
 * iterative refinement), lam = 0 elsewhere, then a bounded crossover (at most
 * 32 changes): an inequality pair with lam_i < 0 leaves C (most negative
 * first; when all negatives are above -tol_w / max Q_ii, the force that moves
 * a gap by tol_w, i.e. round-off on degenerate pairs, they leave at once),
 * else a pair outside C with w_i < -tol_w enters (most violated
 * first), re-solving each time. Pairs whose multiplier is at round-off level
 * (degenerate: w = 0 and lam = 0) are dropped if the set passes without them.
 * The answer is accepted iff lam_C >= 0 on inequality pairs and w = Q lam - p
 * >= -tol_w outside C (tol_w = the solver's residual-gap tolerance,
 * 1e-10 max(1, ||g||_inf) mm): the optimality conditions of the exact
 * solution, so x and w are as accurate as the active-set methods' (far
 * inside 1e-7 mm). Otherwise the IPM goes on to the next, 10 times smaller,
 * mu target. A step that makes no progress (alpha < 1e-12) triggers a last
 * attempt; failing that: GS_STATUS_NUMERICAL.
 * Warm start: ignored (IPMs warm-start poorly): warm_used = 0.
 * Status: GS_STATUS_MAX_ITER after min(gs_solver_max_iter, 200) IPM
 * iterations (lam = the current, unpolished, clipped multipliers);
 * GS_STATUS_NUMERICAL when H is not numerically SPD (p'Hp <= 0 in PCG,
 * dpotrf failure) or on non-finite values.
 * References: S. Mehrotra, SIAM J. Optim. 2 (1992) 575-601; M. D'Apuzzo,
 * V. De Simone, D. di Serafino, Comput. Optim. Appl. 45 (2010) 283-310 and
 * Optim. Lett. 4 (2010) 131-146; M. Stefanova et al., "Interior point method
 * for contact problems of compliant assembly" (2018) and Optim. Eng. 21 (2020)
 * sect. 3.1 (preconditioner P3, Tables 4-5).
 * Invariants: lam_I > 0 and y_I > 0 after every step; y_E = 0; the
 * workspace holds everything (no allocation in the iterations; the m x m
 * matrix of the direct variant is allocated on its first use, mixed's
 * float one too, and its double fallback on the first spotrf failure).
 * Cost per IPM iteration: O(sum n_b^2) (one Kx, two K^-1 solves) +
 * O(m) (A, A') + n_cg O(m^2) (one dsymv and two triangular sweeps per PCG
 * iteration, two PCG solves: predictor and corrector); the direct variant
 * O(m^3/3); mixed O(m^3/3) in float plus n_cg O(m^2) (a few iterations).
 * Polish: O(k^3/3 + m k) per attempt plus O(k^2 + m k) per crossover
 * change, k = |C|.
 */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cset.h"
#include "linalg.h"
#include "mixchol.h"
#include "pcg.h"
#include "solver_impl.h"

#define IPM_MAX_ITER 200
#define IPM_TAU 0.995
#ifndef IPM_ETA_MAX
#define IPM_ETA_MAX 1e-3
#endif
#ifndef IPM_ID_MU
#define IPM_ID_MU 1e-6
#define IPM_ID_RES 1e-6
#define IPM_ID_NEXT 1e-1
#endif
/* PCG cap: IPM_PCG_CAP_PER_PAIR m + IPM_PCG_CAP_BASE iterations (twice the
 * m of exact arithmetic plus a margin; a capped solve is an inexact step). */
#define IPM_PCG_CAP_PER_PAIR 2
#define IPM_PCG_CAP_BASE 50
/* The split preconditioner in single precision: a float copy of L_Q per
 * workspace (made on the first split solve), its diagonal overwritten by
 * diag(L_Q) + D every IPM iteration, applied by two strsv (header).
 * 0: the double sweeps over pc->LQ. */
#ifndef IPM_SPLIT_FP32
#define IPM_SPLIT_FP32 1
#endif
/* With the single-precision preconditioner: flexible (Polak-Ribiere) PCG. */
#ifndef IPM_PCG_FLEXIBLE
#define IPM_PCG_FLEXIBLE 1
#endif

typedef struct {
    gs_cset cs;
    double *x, *dx, *f, *s1, *t; /* n */
    double *lam, *y, *dl, *dy, *dla, *dya, *s2, *u, *r, *hd, *dg; /* m */
    double *cr, *cz, *cp, *cq; /* m: PCG */
    double *lc, *wr;           /* m: polish */
    int *isE, *list, *list2;   /* m */
    double *Hf;                /* m x m: direct variant (lazy) */
    float *Lf, *rf;            /* m x m, m: split in single precision (lazy) */
    gs_mixchol mc;             /* mixed: the factor of H (made on the first mixed solve) */
} ipm_ws;

static void ipm_free(void *p)
{
    ipm_ws *ws = p;
    if (!ws)
        return;
    gs_cset_free(&ws->cs);
    double **v[] = {&ws->x,  &ws->dx,  &ws->f,  &ws->s1, &ws->t,  &ws->lam, &ws->y,
                    &ws->dl, &ws->dy,  &ws->dla, &ws->dya, &ws->s2, &ws->u,  &ws->r,
                    &ws->hd, &ws->dg,  &ws->cr, &ws->cz, &ws->cp, &ws->cq, &ws->lc,
                    &ws->wr, &ws->Hf};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        free(*v[i]);
    free(ws->Lf);
    free(ws->rf);
    gs_mixchol_free(&ws->mc);
    free(ws->isE);
    free(ws->list);
    free(ws->list2);
    free(ws);
}

static void *ipm_new(gs_solver *s)
{
    ipm_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    const size_t m = (size_t)s->m + 1, n = (size_t)s->n + 1;
    double **vn[] = {&ws->x, &ws->dx, &ws->f, &ws->s1, &ws->t};
    double **vm[] = {&ws->lam, &ws->y,  &ws->dl, &ws->dy, &ws->dla, &ws->dya,
                     &ws->s2,  &ws->u,  &ws->r,  &ws->hd, &ws->dg,  &ws->cr,
                     &ws->cz,  &ws->cp, &ws->cq, &ws->lc, &ws->wr};
    int ok = 1;
    for (size_t i = 0; i < sizeof vn / sizeof vn[0]; i++)
        ok &= (*vn[i] = malloc(n * sizeof(double))) != NULL;
    for (size_t i = 0; i < sizeof vm / sizeof vm[0]; i++)
        ok &= (*vm[i] = malloc(m * sizeof(double))) != NULL;
    ws->isE = malloc(m * sizeof *ws->isE);
    ws->list = malloc(m * sizeof *ws->list);
    ws->list2 = malloc(m * sizeof *ws->list2);
    if (!ok || !ws->isE || !ws->list || !ws->list2 || gs_cset_init(&ws->cs, s->pc, NULL) != GS_OK) {
        ipm_free(ws);
        return NULL;
    }
    return ws;
}

static double norm_inf(const double *v, int n)
{
    double a = 0.0;
    for (int i = 0; i < n; i++)
        a = fmax(a, fabs(v[i]));
    return a;
}

/* ---- normal system ------------------------------------------------------ */

/* q = H v = Q v + hd .* v. O(m^2). */
static void h_mul(const gs_precomp *pc, const double *hd, const double *v, double *q)
{
    const int m = pc->m;
    cblas_dsymv(CblasColMajor, CblasLower, m, 1.0, pc->Q, m, v, 1, 0.0, q, 1);
    for (int i = 0; i < m; i++)
        q[i] += hd[i] * v[i];
}

/* z = P3^-1 r: (L_Q + D) z1 = r, (L_Q + D)' z = z1, the diagonal of L_Q read
 * as diag(L_Q) + D (dg = diag(L_Q) + D). O(m^2), columns contiguous. */
static void split_apply(const gs_precomp *pc, const double *dg, const double *r, double *z)
{
    const int m = pc->m;
    const double *L = pc->LQ;
    if (z != r)
        memcpy(z, r, (size_t)m * sizeof *z);
    for (int j = 0; j < m; j++) {
        const double *lj = L + (size_t)j * m;
        z[j] /= dg[j];
        if (j + 1 < m && z[j] != 0.0)
            cblas_daxpy(m - j - 1, -z[j], lj + j + 1, 1, z + j + 1, 1);
    }
    for (int j = m - 1; j >= 0; j--) {
        const double *lj = L + (size_t)j * m;
        double acc = j + 1 < m ? cblas_ddot(m - j - 1, lj + j + 1, 1, z + j + 1, 1) : 0.0;
        z[j] = (z[j] - acc) / dg[j];
    }
}

/* The PCG callbacks (pcg.h) on the workspace: the operator H, the split
 * preconditioner P3 and Jacobi (both read ws->dg, set by prepare). */
typedef struct {
    ipm_ws *ws;
    const gs_precomp *pc;
} ipm_cg_ctx;

static void cg_h(void *ctx, const double *x, double *y)
{
    const ipm_cg_ctx *c = ctx;
    h_mul(c->pc, c->ws->hd, x, y);
}

/* z = P3^-1 r: in single precision with the float copy Lf whose diagonal
 * holds diag(L_Q) + D (prepare), else the double sweeps. */
static void cg_split(void *ctx, const double *r, double *z)
{
    const ipm_cg_ctx *c = ctx;
    if (c->ws->Lf)
        gs_llt_solve32(c->ws->Lf, c->pc->m, c->ws->rf, r, z);
    else
        split_apply(c->pc, c->ws->dg, r, z);
}

/* z = H^-1 r with this iteration's factor (float, or double where float
 * failed: mixchol.h). O(m^2). */
static void cg_mixed(void *ctx, const double *r, double *z)
{
    const ipm_cg_ctx *c = ctx;
    gs_mixchol_solve(&c->ws->mc, r, z);
}

static void cg_jacobi(void *ctx, const double *r, double *z)
{
    const ipm_cg_ctx *c = ctx;
    for (int i = 0; i < c->pc->m; i++)
        z[i] = r[i] / c->ws->dg[i];
}

/* Prepare the normal-system solver for the current hd. 0, or -1 when the
 * direct (or mixed) factorization fails. */
static int prepare(ipm_ws *ws, const gs_precomp *pc, gs_ipm_linear lin)
{
    const int m = pc->m;
    if (lin == GS_IPM_PCG_SPLIT) {
        for (int i = 0; i < m; i++)
            ws->dg[i] = pc->LQ[(size_t)i * m + i] + sqrt(ws->hd[i]);
        if (ws->Lf)
            for (int i = 0; i < m; i++)
                ws->Lf[(size_t)i * m + i] = (float)ws->dg[i];
    } else if (lin == GS_IPM_PCG_JACOBI) {
        for (int i = 0; i < m; i++)
            ws->dg[i] = pc->qdiag[i] + ws->hd[i];
    } else if (lin == GS_IPM_MIXED) {
        return gs_mixchol_factor(&ws->mc, pc->Q, m, ws->hd, NULL) == GS_OK ? 0 : -1;
    } else {
        return gs_chol_plus_diag(ws->Hf, m, pc->Q, m, ws->hd, "", NULL) != GS_OK ? -1 : 0;
    }
    return 0;
}

/* Solve H x = b (x holds the initial guess for PCG). Returns the CG
 * iterations (0 for the direct variant), -1 on breakdown, or -2 when the
 * PCG was stopped by the cancel flag or the deadline (*stop says which). */
static int hsolve(ipm_ws *ws, const gs_precomp *pc, const gs_solve_opts *o, gs_ipm_linear lin,
                  const double *b, double *x, double eta, gs_status *stop)
{
    const int m = pc->m;
    if (lin == GS_IPM_DIRECT) {
        memcpy(x, b, (size_t)m * sizeof *x);
        gs_llt_solve64(ws->Hf, m, x);
        for (int i = 0; i < m; i++)
            if (!isfinite(x[i]))
                return -1;
        return 0;
    }
    ipm_cg_ctx ctx = {ws, pc};
    const gs_pcg cg = {.n = m, .op = cg_h,
                       .prec = lin == GS_IPM_PCG_SPLIT ? cg_split
                               : lin == GS_IPM_MIXED   ? cg_mixed
                                                       : cg_jacobi,
                       .ctx = &ctx, .rtol = eta,
                       .maxit = IPM_PCG_CAP_PER_PAIR * m + IPM_PCG_CAP_BASE, .x0 = 1,
                       .flexible = (lin == GS_IPM_PCG_SPLIT && ws->Lf && IPM_PCG_FLEXIBLE) ||
                                   lin == GS_IPM_MIXED,
                       .cancel = o->cancel, .deadline = o->deadline, .r = ws->cr, .z = ws->cz,
                       .p = ws->cp, .q = ws->cq};
    int it;
    switch (gs_pcg_solve(&cg, b, x, &it)) {
    case GS_PCG_BREAKDOWN:
        return -1;
    case GS_PCG_CANCELLED:
        *stop = GS_STATUS_CANCELLED;
        return -2;
    case GS_PCG_TIME_LIMIT:
        *stop = GS_STATUS_TIME_LIMIT;
        return -2;
    default: /* converged, or capped: an inexact step */
        return it;
    }
}

/* ---- starting points ---------------------------------------------------- */

/* Feasible start (header). Returns 0, or -1 if Q_EE is singular. */
static int start_feasible(ipm_ws *ws, gs_solver *s, int nE, double lam_floor, double delta)
{
    const gs_precomp *pc = s->pc;
    const int m = s->m;
    double *v = ws->dl, *lam0 = ws->dla, *qv = ws->u, *w0 = ws->r;
    /* v: direction (1 on I, -Q_EE^-1 Q_EI 1 on E); lam0: (0 on I, Q_EE^-1 p_E) */
    for (int i = 0; i < m; i++) {
        v[i] = ws->isE[i] ? 0.0 : 1.0;
        lam0[i] = 0.0;
    }
    if (nE > 0) {
        int k = 0;
        for (int i = 0; i < m; i++)
            if (ws->isE[i])
                ws->list[k++] = i;
        if (gs_cset_build(&ws->cs, ws->list, k, NULL) != GS_OK)
            return -1;
        h_mul(pc, ws->hd, v, qv); /* hd = 0 here: Q v */
        for (int c = 0; c < k; c++)
            ws->lc[c] = -qv[ws->list[c]];
        gs_cset_solve(&ws->cs, ws->lc);
        for (int c = 0; c < k; c++)
            v[ws->list[c]] = ws->lc[c];
        for (int c = 0; c < k; c++)
            ws->lc[c] = s->p[ws->list[c]];
        gs_cset_solve(&ws->cs, ws->lc);
        for (int c = 0; c < k; c++)
            lam0[ws->list[c]] = ws->lc[c];
    }
    h_mul(pc, ws->hd, v, qv);
    h_mul(pc, ws->hd, lam0, w0);
    for (int i = 0; i < m; i++)
        w0[i] -= s->p[i];
    double c = lam_floor;
    for (int i = 0; i < m; i++)
        if (!ws->isE[i] && qv[i] > 0.0)
            c = fmax(c, (delta - w0[i]) / qv[i]);
    for (int i = 0; i < m; i++) {
        ws->lam[i] = lam0[i] + c * v[i];
        if (ws->isE[i])
            ws->y[i] = 0.0;
        else
            ws->y[i] = fmax(w0[i] + c * qv[i], delta);
    }
    /* x = K^-1 (f - A lam) */
    memcpy(ws->x, ws->f, (size_t)s->n * sizeof *ws->x);
    gs_model_A_add(pc->mdl, -1.0, ws->lam, ws->x);
    return gs_precomp_kinv(pc, ws->x);
}

/* Infeasible start (header). */
static void start_infeasible(ipm_ws *ws, gs_solver *s, double lam_floor, double y_floor)
{
    const gs_precomp *pc = s->pc;
    const int m = s->m;
    memcpy(ws->x, ws->f, (size_t)s->n * sizeof *ws->x);
    (void)gs_precomp_kinv(pc, ws->x); /* NaN on failure: the first iteration stops */
    /* lam_hat = Q^-1 p (two triangular solves with L_Q) */
    memcpy(ws->lam, s->p, (size_t)m * sizeof *ws->lam);
    gs_llt_solve64(pc->LQ, m, ws->lam);
    for (int i = 0; i < m; i++) {
        ws->y[i] = fabs(s->p[i]);
        ws->lam[i] = fabs(ws->lam[i]);
    }
    double ly = 0.0, sum_l = 0.0, sum_y = 0.0;
    for (int i = 0; i < m; i++)
        if (!ws->isE[i]) {
            ly += ws->lam[i] * ws->y[i];
            sum_l += ws->lam[i];
            sum_y += ws->y[i];
        }
    double sl2 = sum_y > 0.0 ? 0.5 * ly / sum_y : 0.0;
    double sy2 = sum_l > 0.0 ? 0.5 * ly / sum_l : 0.0;
    for (int i = 0; i < m; i++) {
        if (ws->isE[i]) {
            ws->y[i] = 0.0;
            continue;
        }
        ws->lam[i] = fmax(ws->lam[i] + sl2, lam_floor);
        ws->y[i] = fmax(ws->y[i] + sy2, y_floor);
    }
}

/* ---- polish ------------------------------------------------------------- */

/* Identify C = E + {i : lam_i > y_i}, solve exactly on it with the zero rule
 * (cset.h gs_cset_settle), then a bounded crossover: pairs with w < -tol_w
 * outside C enter (most violated first), each followed by the settle again,
 * at most IPM_XOVER changes. 1: accepted (lam_out filled: lam_C >= tol_lam
 * on inequality pairs, w >= -tol_w outside C, lam = 0 there); 0: rejected
 * (the IPM goes on). */
#define IPM_XOVER 32
static int polish(ipm_ws *ws, gs_solver *s, const gs_problem *pb, double *lam_out)
{
    const int m = s->m;
    gs_cset *cs = &ws->cs;
    int k = 0;
    for (int i = 0; i < m; i++)
        if (ws->isE[i] || ws->lam[i] > ws->y[i])
            ws->list[k++] = i;
    if (gs_cset_build(cs, ws->list, k, NULL) != GS_OK ||
        gs_cset_prune(cs, pb, s->p, ws->lc, ws->list2) != 0)
        return 0;
    for (int changes = 0;; changes++) {
        changes += gs_cset_settle(cs, pb, s->p, s->tol_lam, ws->lc, ws->cr, ws->wr, ws->list2);
        int viol = -1;
        for (int i = 0; i < m; i++)
            if (cs->pos[i] < 0 && !(ws->wr[i] >= -s->tol_w) &&
                (viol < 0 || !(ws->wr[i] >= ws->wr[viol])))
                viol = i;
        if (viol < 0)
            break;
        if (changes >= IPM_XOVER)
            return 0;
        if (!isfinite(ws->wr[viol]) || gs_cset_reserve(cs, cs->k + 1, NULL) != GS_OK)
            return 0;
        double sch = gs_cset_schur(cs, viol, ws->cz);
        if (!(sch > GS_CSET_DEP_TOL * s->pc->qdiag[viol]))
            return 0;
        gs_cset_append(cs, viol, ws->cz, sch);
    }
    memset(lam_out, 0, (size_t)m * sizeof *lam_out);
    for (int c = 0; c < cs->k; c++)
        lam_out[cs->idx[c]] = ws->lc[c];
    return 1;
}

/* ---- the method --------------------------------------------------------- */

/* Largest alpha in (0, 1] with v + alpha dv >= 0 on the inequality pairs. */
static double max_step(const double *v, const double *dv, const int *isE, int m)
{
    double a = 1.0;
    for (int i = 0; i < m; i++)
        if (!isE[i] && dv[i] < 0.0)
            a = fmin(a, -v[i] / dv[i]);
    return a;
}

/* The complementarity after a step a along (dl, dy), times the number of
 * inequality pairs: sum over them of (lam + a dl)(y + a dy). O(m). */
static double complementarity(const ipm_ws *ws, const double *dl, const double *dy, double a,
                              int m)
{
    double c = 0.0;
    for (int i = 0; i < m; i++)
        if (!ws->isE[i])
            c += (ws->lam[i] + a * dl[i]) * (ws->y[i] + a * dy[i]);
    return c;
}

/* A step that would raise mu is cut to the minimizer of mu along the
 * direction. mu(a) mI = lam'y + a (lam'dy + y'dl) + a^2 dl'dy, and on a QP
 * dl'dy ~ dl'Q dl >= 0: after a poor affine direction (alpha_aff ~ 0.005,
 * sigma ~ 0.99) the quadratic term wins, mu rises four- to five-fold, and
 * Mehrotra's iterates can repeat with period four until the iteration
 * limit (4 of 3,000 small generated gap clouds). O(m). */
static double bound_mu_growth(const ipm_ws *ws, double alpha, double mu, int mI, int m)
{
    if (mI == 0 || complementarity(ws, ws->dl, ws->dy, alpha, m) <= mu * mI)
        return alpha;
    double a1 = 0.0, a2 = 0.0;
    for (int i = 0; i < m; i++)
        if (!ws->isE[i]) {
            a1 += ws->lam[i] * ws->dy[i] + ws->y[i] * ws->dl[i];
            a2 += ws->dl[i] * ws->dy[i];
        }
    return a1 < 0.0 && a2 > 0.0 ? fmin(alpha, -a1 / (2.0 * a2)) : alpha;
}

static gs_err ipm_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, gs_form form,
                        double *lam_out, gs_solve_info *info, gs_error *err)
{
    (void)form;
    ipm_ws *ws = gs_solver_ws(s, GS_METHOD_IPM, GS_FORM_PRIMAL, ipm_new, ipm_free, err);
    if (!ws)
        return GS_ERR_NOMEM;
    const gs_precomp *pc = s->pc;
    const gs_model *mdl = pc->mdl;
    const int m = s->m, n = s->n;
    const gs_ipm_linear lin = o->ipm_linear;
    if (lin != GS_IPM_PCG_SPLIT && lin != GS_IPM_PCG_JACOBI && lin != GS_IPM_DIRECT &&
        lin != GS_IPM_MIXED)
        return gs_errorf(err, GS_ERR_INVALID, "ipm_linear", "unknown IPM linear solver %d",
                         (int)lin);
    if (o->ipm_start != GS_IPM_START_AUTO && o->ipm_start != GS_IPM_START_FEASIBLE &&
        o->ipm_start != GS_IPM_START_INFEASIBLE)
        return gs_errorf(err, GS_ERR_INVALID, "ipm_start", "unknown IPM starting point %d",
                         (int)o->ipm_start);
    const size_t mm = gs_mul_size((size_t)m, (size_t)m);
    if (IPM_SPLIT_FP32 && lin == GS_IPM_PCG_SPLIT && !ws->Lf && m > 0) {
        /* the float copy of L_Q (lower triangle; the upper is never read) */
        ws->Lf = malloc(gs_mul_size(mm, sizeof *ws->Lf));
        if (!ws->rf)
            ws->rf = malloc((size_t)m * sizeof *ws->rf);
        if (!ws->Lf || !ws->rf) {
            free(ws->Lf);
            ws->Lf = NULL;
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the float copy of L_Q");
        }
        for (int j = 0; j < m; j++) {
            const double *lj = pc->LQ + (size_t)j * m;
            float *fj = ws->Lf + (size_t)j * m;
            for (int i = j; i < m; i++)
                fj[i] = (float)lj[i];
        }
    }
    if (lin == GS_IPM_MIXED && !ws->mc.t && gs_mixchol_init(&ws->mc, m, err) != GS_OK)
        return GS_ERR_NOMEM;
    if (lin == GS_IPM_DIRECT && !ws->Hf && m > 0) {
        ws->Hf = malloc(gs_mul_size(mm, sizeof *ws->Hf));
        if (!ws->Hf)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the IPM normal matrix");
    }
    int max_iter = gs_solver_max_iter(s, o);
    if (max_iter > IPM_MAX_ITER)
        max_iter = IPM_MAX_ITER;
    info->warm_used = 0;
    info->warm_kept = 0;
    info->status = GS_STATUS_OPTIMAL;
    info->iterations = 0;
    info->cg_iterations = 0;

    int nE = 0;
    for (int i = 0; i < m; i++) {
        ws->isE[i] = gs_problem_is_eq(pb, i);
        nE += ws->isE[i];
        ws->hd[i] = 0.0;
    }
    const int mI = m - nE;
    gs_problem_load_vector(pb, ws->f);
    const double gmax = norm_inf(pb->g, m), pmax = norm_inf(s->p, m);
    /* scales: gaps (mm), forces (N) ~ p / Q_ii */
    double qmax = norm_inf(pc->qdiag, m);
    const double ysc = fmax(fmax(gmax, pmax), 1e-3);
    const double lsc = qmax > 0.0 ? ysc / qmax : 1.0;
    const double y_floor = 1e-16 * ysc, l_floor = 1e-16 * lsc;

    gs_ipm_start st = o->ipm_start;
    if (st == GS_IPM_START_AUTO)
        st = mdl->joint == GS_JOINT_SANDWICH ? GS_IPM_START_INFEASIBLE : GS_IPM_START_FEASIBLE;
    if (st == GS_IPM_START_FEASIBLE) {
        if (start_feasible(ws, s, nE, 1e-2 * lsc, fmax(1e-2 * pmax, 1e-3 * fmax(1.0, gmax))) !=
            0) {
            info->status = GS_STATUS_INFEASIBLE_EQ;
            memset(lam_out, 0, (size_t)m * sizeof *lam_out);
            return GS_OK;
        }
    } else {
        start_infeasible(ws, s, 1e-2 * lsc, 1e-2 * ysc);
    }

    const double eps_p = IPM_ID_RES * fmax(1.0, gmax);
    double mu0 = 0.0, mu_next = 0.0;
    int iters = 0, cg = 0;
    for (;;) {
        /* residuals s1 = f - Kx - A lam, s2 = g - A'x - y */
        gs_model_K_mul(mdl, ws->x, ws->s1);
        for (int j = 0; j < n; j++)
            ws->s1[j] = ws->f[j] - ws->s1[j];
        gs_model_A_add(mdl, -1.0, ws->lam, ws->s1);
        gs_model_At(mdl, ws->x, ws->s2);
        double ly = 0.0;
        for (int i = 0; i < m; i++) {
            ws->s2[i] = pb->g[i] - ws->s2[i] - ws->y[i];
            if (!ws->isE[i])
                ly += ws->lam[i] * ws->y[i];
        }
        const double mu = mI > 0 ? ly / mI : 0.0;
        if (iters == 0) {
            mu0 = fmax(mu, DBL_MIN);
            mu_next = IPM_ID_MU * mu0;
        }
        const double r2 = norm_inf(ws->s2, m);
        const double fsc = fmax(norm_inf(ws->f, n), 1.0) + lsc;
        const double r1 = norm_inf(ws->s1, n);
        if (!isfinite(mu) || !isfinite(r1) || !isfinite(r2)) {
            info->status = GS_STATUS_NUMERICAL;
            break;
        }
        if (mu <= mu_next && r2 <= eps_p && r1 <= IPM_ID_RES * fsc) {
            if (polish(ws, s, pb, lam_out)) {
                info->iterations = iters;
                info->cg_iterations = cg;
                return GS_OK;
            }
            mu_next = mu * IPM_ID_NEXT;
        }
        if ((info->status = gs_solve_stop(o, iters, max_iter)) != GS_STATUS_OPTIMAL)
            break;
        /* normal system of this iteration */
        for (int i = 0; i < m; i++)
            ws->hd[i] = ws->isE[i] ? 0.0 : ws->y[i] / ws->lam[i];
        if (prepare(ws, pc, lin) != 0) {
            info->status = GS_STATUS_NUMERICAL;
            break;
        }
        const double eta = fmin(IPM_ETA_MAX, fmax(1e-10, mu / mu0));
        /* u = A'K^-1 s1 */
        memcpy(ws->t, ws->s1, (size_t)n * sizeof *ws->t);
        if (gs_precomp_kinv(pc, ws->t) != 0) {
            info->status = GS_STATUS_NUMERICAL; /* a sparse solve found no memory */
            break;
        }
        gs_model_At(mdl, ws->t, ws->u);
        /* predictor: s3 = -lam y */
        for (int i = 0; i < m; i++) {
            ws->r[i] = ws->u[i] - ws->s2[i] - (ws->isE[i] ? 0.0 : ws->y[i]);
            ws->dla[i] = 0.0;
        }
        gs_status stop = GS_STATUS_NUMERICAL;
        int it = hsolve(ws, pc, o, lin, ws->r, ws->dla, eta, &stop);
        if (it < 0) {
            info->status = stop;
            break;
        }
        cg += it;
        for (int i = 0; i < m; i++)
            ws->dya[i] = ws->isE[i] ? 0.0 : -ws->y[i] - ws->hd[i] * ws->dla[i];
        double aa = fmin(max_step(ws->lam, ws->dla, ws->isE, m), max_step(ws->y, ws->dya, ws->isE, m));
        double sigma = 0.0;
        if (mI > 0) {
            const double mua = complementarity(ws, ws->dla, ws->dya, aa, m) / mI;
            sigma = mu > 0.0 ? pow(fmax(mua, 0.0) / mu, 3) : 0.0;
            if (sigma > 1.0)
                sigma = 1.0;
        }
        /* corrector: s3 = -lam y - dlam_aff dy_aff + sigma mu, kept in dy */
        for (int i = 0; i < m; i++) {
            if (ws->isE[i]) {
                ws->r[i] = ws->u[i] - ws->s2[i];
                ws->dy[i] = 0.0;
                continue;
            }
            ws->dy[i] = -ws->lam[i] * ws->y[i] - ws->dla[i] * ws->dya[i] + sigma * mu;
            ws->r[i] = ws->u[i] - ws->s2[i] + ws->dy[i] / ws->lam[i];
        }
        memcpy(ws->dl, ws->dla, (size_t)m * sizeof *ws->dl);
        it = hsolve(ws, pc, o, lin, ws->r, ws->dl, eta, &stop);
        if (it < 0) {
            info->status = stop;
            break;
        }
        cg += it;
        for (int i = 0; i < m; i++)
            if (!ws->isE[i])
                ws->dy[i] = (ws->dy[i] - ws->y[i] * ws->dl[i]) / ws->lam[i];
        /* dx = K^-1 (s1 - A dlam) */
        memcpy(ws->dx, ws->s1, (size_t)n * sizeof *ws->dx);
        gs_model_A_add(mdl, -1.0, ws->dl, ws->dx);
        if (gs_precomp_kinv(pc, ws->dx) != 0) {
            info->status = GS_STATUS_NUMERICAL;
            break;
        }
        double amax = fmin(max_step(ws->lam, ws->dl, ws->isE, m), max_step(ws->y, ws->dy, ws->isE, m));
        double tau = fmax(IPM_TAU, fmin(0.9999, 1.0 - mu / mu0));
        const double alpha = bound_mu_growth(ws, fmin(1.0, tau * amax), mu, mI, m);
        iters++;
        cblas_daxpy(n, alpha, ws->dx, 1, ws->x, 1);
        for (int i = 0; i < m; i++) {
            ws->lam[i] += alpha * ws->dl[i];
            if (ws->isE[i])
                continue;
            ws->y[i] += alpha * ws->dy[i];
            if (ws->lam[i] < l_floor)
                ws->lam[i] = l_floor;
            if (ws->y[i] < y_floor)
                ws->y[i] = y_floor;
        }
        if (alpha < 1e-12) { /* stalled: last chance */
            if (polish(ws, s, pb, lam_out)) {
                info->iterations = iters;
                info->cg_iterations = cg;
                return GS_OK;
            }
            info->status = GS_STATUS_NUMERICAL;
            break;
        }
    }
    memcpy(lam_out, ws->lam, (size_t)m * sizeof *lam_out);
    info->iterations = iters;
    info->cg_iterations = cg;
    return GS_OK;
}

const gs_method_ops gs_method_ipm = {
    .name = "ipm",
    .forms = 1u << GS_FORM_PRIMAL,
    .default_form = GS_FORM_PRIMAL,
    .solve = ipm_solve,
};
