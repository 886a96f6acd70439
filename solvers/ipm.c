/*
 * ipm.c -- primal-dual interior point method (Mehrotra predictor-corrector)
 * on the primal formulation (1):
 *     min 1/2 x'Kx - f'x   s.t.   A'x <= g   (a_k'x = g_k on fastened pairs)
 * and on the dual (2) over a working set of pairs (below: form dual).
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
 * Warm start: the primal form ignores it (IPMs warm-start poorly):
 * warm_used = 0. The dual form's working set starts with the warm contact
 * set (warm_kept of its pairs; 64 more chosen as usual when it has fewer),
 * and the first run from the warm multipliers where given (start_hint).
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
 * Dual form (opts.form = dual): the same iterations with the slack
 * y = w = Q lam - p itself (s2 = Q lam - p - y by one dsymv, no x, no s1, no
 * K), run on a working set S of pairs: the dual restricted to S (Q_SS, p_S,
 * lam = 0 outside) is solved and polished (the crossover only within S);
 * pairs outside S left violated join (the most violated first, skipping
 * those whose column of Q is nearly that of a pair joined in the same round:
 * shielded), and the run repeats on the larger S, from the last answer
 * (start_hint), until none is left violated: the whole problem's optimum.
 * Each run's iterations cost
 * O(|S|^3/3) instead of O(m^3/3); the section "the working set" below.
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
    double w; /* residual gap (mm): the most violated joins first */
    int i;    /* pair */
} ipm_key;

typedef struct {
    gs_cset cs;
    double *x, *dx, *f, *s1, *t; /* n */
    double *lam, *y, *dl, *dy, *dla, *dya, *s2, *u, *r, *hd, *dg; /* m */
    double *cr, *cz, *cp, *cq; /* m: PCG */
    double *lc, *wr;           /* m: polish */
    int *isE, *list, *list2;   /* m */
    double *Hf;                /* m x m: direct variant (lazy) */
    float *Lf, *rf;            /* m x m, m: split in single precision (lazy) */
    int Lf_full;               /* Lf holds the float copy of pc->LQ (not of a working set's) */
    gs_mixchol mc;             /* mixed: the factor of H (made on the first mixed solve) */
    /* the working set (dual form): its pairs, Q_SS, its Cholesky factor, diagonal and
     * p_S, gathered per round (cap x cap, grown geometrically, lazy) */
    int *S, ms;                /* m: the pairs, ms of them (sorted for each run) */
    unsigned char *inS, *blk;  /* m: member of S; shielded by a pair taken this round */
    ipm_key *keys;             /* m: candidates to join, by residual gap */
    double *sqd;               /* m: sqrt(diag(Q)) */
    double *Qs, *LQs, *qds, *ps;
    int cap, lcap;             /* orders Qs / qds / ps and LQs (only where used) hold */
    const double *hint_lam, *hint_w; /* m: a working set's previous run (start_hint), or NULL */
} ipm_ws;

/* The system one Mehrotra run works on: every pair (the primal form, and
 * the dual on all pairs), or a working set S of pairs (the dual form): Q_SS
 * and p_S. Position c of every per-pair vector of the run is pair idx[c].
 * Matrices are m x m, column-major, leading dimension m. */
typedef struct {
    int m;             /* positions */
    const double *Q;   /* Q_SS (lower triangle read) */
    const double *LQ;  /* its Cholesky factor (lower), or NULL where not needed */
    const double *qd;  /* diag(Q_SS) */
    const double *p;   /* p_S */
    const int *idx;    /* the pair at each position; NULL: position = pair */
} ipm_sys;

static int sys_pair(const ipm_sys *y, int c)
{
    return y->idx ? y->idx[c] : c;
}

/* The system of every pair: the precomputation's own Q, L_Q and p. */
static ipm_sys sys_all(const gs_solver *s)
{
    return (ipm_sys){.m = s->m, .Q = s->pc->Q, .LQ = s->pc->LQ, .qd = s->pc->qdiag, .p = s->p};
}

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
    free(ws->S);
    free(ws->inS);
    free(ws->blk);
    free(ws->keys);
    free(ws->sqd);
    free(ws->Qs);
    free(ws->LQs);
    free(ws->qds);
    free(ws->ps);
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
    ws->S = malloc(m * sizeof *ws->S);
    ws->inS = malloc(m);
    ws->blk = malloc(m);
    ws->keys = malloc(m * sizeof *ws->keys);
    ws->sqd = malloc(m * sizeof *ws->sqd);
    if (!ok || !ws->isE || !ws->list || !ws->list2 || !ws->S || !ws->inS || !ws->blk ||
        !ws->keys || !ws->sqd || gs_cset_init(&ws->cs, s->pc, NULL) != GS_OK) {
        ipm_free(ws);
        return NULL;
    }
    for (int i = 0; i < s->m; i++)
        ws->sqd[i] = sqrt(s->pc->qdiag[i]);
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

/* q = H v = Q v + hd .* v on the system. O(m^2). */
static void h_mul(const ipm_sys *y, const double *hd, const double *v, double *q)
{
    const int m = y->m;
    cblas_dsymv(CblasColMajor, CblasLower, m, 1.0, y->Q, y->m, v, 1, 0.0, q, 1);
    for (int i = 0; i < m; i++)
        q[i] += hd[i] * v[i];
}

/* z = P3^-1 r: (L_Q + D) z1 = r, (L_Q + D)' z = z1, the diagonal of L_Q read
 * as diag(L_Q) + D (dg = diag(L_Q) + D). O(m^2), columns contiguous. */
static void split_apply(const ipm_sys *y, const double *dg, const double *r, double *z)
{
    const int m = y->m;
    const double *L = y->LQ;
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
    const ipm_sys *sys;
} ipm_cg_ctx;

static void cg_h(void *ctx, const double *x, double *y)
{
    const ipm_cg_ctx *c = ctx;
    h_mul(c->sys, c->ws->hd, x, y);
}

/* z = P3^-1 r: in single precision with the float copy Lf whose diagonal
 * holds diag(L_Q) + D (prepare), else the double sweeps. */
static void cg_split(void *ctx, const double *r, double *z)
{
    const ipm_cg_ctx *c = ctx;
    if (c->ws->Lf)
        gs_llt_solve32(c->ws->Lf, c->sys->m, c->ws->rf, r, z);
    else
        split_apply(c->sys, c->ws->dg, r, z);
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
    for (int i = 0; i < c->sys->m; i++)
        z[i] = r[i] / c->ws->dg[i];
}

/* Prepare the normal-system solver for the current hd. 0, or -1 when the
 * direct (or mixed) factorization fails. */
static int prepare(ipm_ws *ws, const ipm_sys *y, gs_ipm_linear lin)
{
    const int m = y->m;
    if (lin == GS_IPM_PCG_SPLIT) {
        for (int i = 0; i < m; i++)
            ws->dg[i] = y->LQ[(size_t)i * m + i] + sqrt(ws->hd[i]);
        if (ws->Lf)
            for (int i = 0; i < m; i++)
                ws->Lf[(size_t)i * m + i] = (float)ws->dg[i];
    } else if (lin == GS_IPM_PCG_JACOBI) {
        for (int i = 0; i < m; i++)
            ws->dg[i] = y->qd[i] + ws->hd[i];
    } else if (lin == GS_IPM_MIXED) {
        gs_mixchol_resize(&ws->mc, m);
        return gs_mixchol_factor(&ws->mc, y->Q, y->m, ws->hd, NULL) == GS_OK ? 0 : -1;
    } else {
        return gs_chol_plus_diag(ws->Hf, m, y->Q, y->m, ws->hd, "", NULL) != GS_OK ? -1 : 0;
    }
    return 0;
}

/* Solve H x = b (x holds the initial guess for PCG). Returns the CG
 * iterations (0 for the direct variant), -1 on breakdown, or -2 when the
 * PCG was stopped by the cancel flag or the deadline (*stop says which). */
static int hsolve(ipm_ws *ws, const ipm_sys *y, const gs_solve_opts *o, gs_ipm_linear lin,
                  const double *b, double *x, double eta, gs_status *stop)
{
    const int m = y->m;
    if (lin == GS_IPM_DIRECT) {
        memcpy(x, b, (size_t)m * sizeof *x);
        gs_llt_solve64(ws->Hf, m, x);
        for (int i = 0; i < m; i++)
            if (!isfinite(x[i]))
                return -1;
        return 0;
    }
    ipm_cg_ctx ctx = {ws, y};
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
static int start_feasible(ipm_ws *ws, gs_solver *s, const ipm_sys *y, int dual, int nE,
                          double lam_floor, double delta)
{
    const gs_precomp *pc = s->pc;
    const int m = y->m;
    double *v = ws->dl, *lam0 = ws->dla, *qv = ws->u, *w0 = ws->r;
    /* v: direction (1 on I, -Q_EE^-1 Q_EI 1 on E); lam0: (0 on I, Q_EE^-1 p_E) */
    for (int i = 0; i < m; i++) {
        v[i] = ws->isE[i] ? 0.0 : 1.0;
        lam0[i] = 0.0;
    }
    if (nE > 0) {
        int k = 0; /* positions of E in list2, their pairs in list */
        for (int i = 0; i < m; i++)
            if (ws->isE[i]) {
                ws->list2[k] = i;
                ws->list[k++] = sys_pair(y, i);
            }
        if (gs_cset_build(&ws->cs, ws->list, k, NULL) != GS_OK)
            return -1;
        h_mul(y, ws->hd, v, qv); /* hd = 0 here: Q v */
        for (int c = 0; c < k; c++)
            ws->lc[c] = -qv[ws->list2[c]];
        gs_cset_solve(&ws->cs, ws->lc);
        for (int c = 0; c < k; c++)
            v[ws->list2[c]] = ws->lc[c];
        for (int c = 0; c < k; c++)
            ws->lc[c] = y->p[ws->list2[c]];
        gs_cset_solve(&ws->cs, ws->lc);
        for (int c = 0; c < k; c++)
            lam0[ws->list2[c]] = ws->lc[c];
    }
    h_mul(y, ws->hd, v, qv);
    h_mul(y, ws->hd, lam0, w0);
    for (int i = 0; i < m; i++)
        w0[i] -= y->p[i];
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
    if (dual) /* no x: the slack is Q lam - p itself */
        return 0;
    /* x = K^-1 (f - A lam) */
    memcpy(ws->x, ws->f, (size_t)s->n * sizeof *ws->x);
    gs_model_A_add(pc->mdl, -1.0, ws->lam, ws->x);
    return gs_precomp_kinv(pc, ws->x);
}

/* Mehrotra's complementarity-balancing shifts of a starting guess (lam, y)
 * in the workspace: 1/2 y'lam / sum(y) on lam, 1/2 y'lam / sum(lam) on y,
 * floored; y = 0 on fastened pairs. O(m). */
static void balance_start(ipm_ws *ws, int m, double lam_floor, double y_floor)
{
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

/* Infeasible start (header). */
static void start_infeasible(ipm_ws *ws, gs_solver *s, const ipm_sys *y, int dual,
                             double lam_floor, double y_floor)
{
    const int m = y->m;
    if (!dual) {
        memcpy(ws->x, ws->f, (size_t)s->n * sizeof *ws->x);
        (void)gs_precomp_kinv(s->pc, ws->x); /* NaN on failure: the first iteration stops */
    }
    /* lam_hat = Q^-1 p (two triangular solves with L_Q) */
    memcpy(ws->lam, y->p, (size_t)m * sizeof *ws->lam);
    gs_llt_solve64(y->LQ, m, ws->lam);
    for (int i = 0; i < m; i++) {
        ws->y[i] = fabs(y->p[i]);
        ws->lam[i] = fabs(ws->lam[i]);
    }
    balance_start(ws, m, lam_floor, y_floor);
}

/* A working set's later runs start from the previous run's answer (hint_lam,
 * pair-indexed: its exact multipliers, 0 on the pairs that joined) and its
 * residual gaps (hint_w, in absolute value), with the same shifts. Measured
 * (IPM iterations in all, 3 gaps; thread CPU time): lap joint 154 -> 118 at
 * 50% (147 -> 88 ms), 191 -> 158 at 100% (333 -> 280 ms); sandwich at 50%
 * 325 -> 239 (4.4 -> 2.9 s); no change at 10%. O(|S|). */
static void start_hint(ipm_ws *ws, const ipm_sys *y, double lam_floor, double y_floor)
{
    for (int i = 0; i < y->m; i++) {
        ws->lam[i] = fabs(ws->hint_lam[sys_pair(y, i)]);
        ws->y[i] = fabs(ws->hint_w[sys_pair(y, i)]);
    }
    balance_start(ws, y->m, lam_floor, y_floor);
}

/* ---- polish ------------------------------------------------------------- */

/* Identify C = E + {i : lam_i > y_i}, solve exactly on it with the zero rule
 * (cset.h gs_cset_settle), then a bounded crossover: pairs with w < -tol_w
 * outside C enter (most violated first), each followed by the settle again,
 * at most IPM_XOVER changes. 1: accepted (lam_out filled: lam_C >= tol_lam
 * on inequality pairs, w >= -tol_w outside C, lam = 0 there); 0: rejected
 * (the IPM goes on). On a working set (inS not NULL) only its pairs may
 * enter and only they are checked; ws->wr holds w on every pair. */
#define IPM_XOVER 32
static int polish(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const ipm_sys *y,
                  const unsigned char *inS, double *lam_out)
{
    const int m = s->m;
    gs_cset *cs = &ws->cs;
    int k = 0;
    for (int i = 0; i < y->m; i++)
        if (ws->isE[i] || ws->lam[i] > ws->y[i])
            ws->list[k++] = sys_pair(y, i);
    if (gs_cset_build(cs, ws->list, k, NULL) != GS_OK ||
        gs_cset_prune(cs, pb, s->p, ws->lc, ws->list2) != 0)
        return 0;
    for (int changes = 0;; changes++) {
        changes += gs_cset_settle(cs, pb, s->p, s->tol_lam, ws->lc, ws->cr, ws->wr, ws->list2);
        int viol = -1;
        for (int i = 0; i < m; i++)
            if (cs->pos[i] < 0 && (!inS || inS[i]) && !(ws->wr[i] >= -s->tol_w) &&
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

/* The residuals of the current iterate. Primal: s1 = f - Kx - A lam
 * (O(sum n_b^2)), s2 = g - A'x - y (O(m)). Dual: the slack is w = Q lam - p
 * itself, s2 = Q lam - p - y (one dsymv, O(m^2)); there is no x and no s1. */
static void residuals(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const ipm_sys *y,
                      int dual)
{
    const gs_model *mdl = s->pc->mdl;
    const int m = s->m;
    if (dual) {
        cblas_dsymv(CblasColMajor, CblasLower, y->m, 1.0, y->Q, y->m, ws->lam, 1, 0.0, ws->s2,
                    1);
        for (int i = 0; i < y->m; i++)
            ws->s2[i] -= y->p[i] + ws->y[i];
        return;
    }
    gs_model_K_mul(mdl, ws->x, ws->s1);
    for (int j = 0; j < s->n; j++)
        ws->s1[j] = ws->f[j] - ws->s1[j];
    gs_model_A_add(mdl, -1.0, ws->lam, ws->s1);
    gs_model_At(mdl, ws->x, ws->s2);
    for (int i = 0; i < m; i++)
        ws->s2[i] = pb->g[i] - ws->s2[i] - ws->y[i];
}

/* What every run of one solve shares: the full problem's scales (so that
 * each working set's run is measured alike), the options. */
typedef struct {
    int dual;                 /* the dual form: no x, no K */
    gs_ipm_linear lin;
    gs_ipm_start st;
    int max_iter;             /* IPM iterations per run */
    double gmax, pmax, ysc, lsc, y_floor, l_floor;
} ipm_par;

/* One Mehrotra run on the system y from the starting point, to an accepted
 * polish (1: lam_out is the answer on y's pairs) or a stop (0: info->status
 * says why, lam_out the iterate). Adds its iterations to info's. */
static int mehrotra(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                    const ipm_sys *y, const ipm_par *pr, const unsigned char *inS,
                    double *lam_out, gs_solve_info *info)
{
    const gs_precomp *pc = s->pc;
    const gs_model *mdl = pc->mdl;
    const int m = y->m, n = s->n;
    const gs_ipm_linear lin = pr->lin;
    int nE = 0;
    for (int i = 0; i < m; i++) {
        ws->isE[i] = gs_problem_is_eq(pb, sys_pair(y, i));
        nE += ws->isE[i];
        ws->hd[i] = 0.0;
    }
    const int mI = m - nE;
    if (lin == GS_IPM_PCG_SPLIT && ws->Lf && (y->idx || !ws->Lf_full)) {
        /* the float copy of the system's L_Q (lower triangle) */
        for (int j = 0; j < m; j++) {
            const double *lj = y->LQ + (size_t)j * m;
            float *fj = ws->Lf + (size_t)j * m;
            for (int i = j; i < m; i++)
                fj[i] = (float)lj[i];
        }
        ws->Lf_full = !y->idx;
    }
    if (ws->hint_lam) {
        start_hint(ws, y, 1e-2 * pr->lsc, 1e-2 * pr->ysc);
    } else if (pr->st == GS_IPM_START_FEASIBLE) {
        if (start_feasible(ws, s, y, pr->dual, nE, 1e-2 * pr->lsc,
                           fmax(1e-2 * pr->pmax, 1e-3 * fmax(1.0, pr->gmax))) != 0) {
            info->status = GS_STATUS_INFEASIBLE_EQ;
            memset(lam_out, 0, (size_t)s->m * sizeof *lam_out);
            return 0;
        }
    } else {
        start_infeasible(ws, s, y, pr->dual, 1e-2 * pr->lsc, 1e-2 * pr->ysc);
    }

    const double eps_p = IPM_ID_RES * fmax(1.0, pr->gmax);
    double mu0 = 0.0, mu_next = 0.0;
    int iters = 0, cg = 0;
    for (;;) {
        /* residuals: s2 = (the slack lam gives) - y, and on the primal
         * s1 = f - Kx - A lam */
        residuals(ws, s, pb, y, pr->dual);
        double ly = 0.0;
        for (int i = 0; i < m; i++)
            if (!ws->isE[i])
                ly += ws->lam[i] * ws->y[i];
        const double mu = mI > 0 ? ly / mI : 0.0;
        if (iters == 0) {
            mu0 = fmax(mu, DBL_MIN);
            mu_next = IPM_ID_MU * mu0;
        }
        const double r2 = norm_inf(ws->s2, m);
        const double fsc = fmax(norm_inf(ws->f, n), 1.0) + pr->lsc;
        const double r1 = pr->dual ? 0.0 : norm_inf(ws->s1, n);
        if (!isfinite(mu) || !isfinite(r1) || !isfinite(r2)) {
            info->status = GS_STATUS_NUMERICAL;
            break;
        }
        if (mu <= mu_next && r2 <= eps_p && r1 <= IPM_ID_RES * fsc) {
            if (polish(ws, s, pb, y, inS, lam_out)) {
                info->iterations += iters;
                info->cg_iterations += cg;
                return 1;
            }
            mu_next = mu * IPM_ID_NEXT;
        }
        if ((info->status = gs_solve_stop(o, iters, pr->max_iter)) != GS_STATUS_OPTIMAL)
            break;
        /* normal system of this iteration */
        for (int i = 0; i < m; i++)
            ws->hd[i] = ws->isE[i] ? 0.0 : ws->y[i] / ws->lam[i];
        if (prepare(ws, y, lin) != 0) {
            info->status = GS_STATUS_NUMERICAL;
            break;
        }
        const double eta = fmin(IPM_ETA_MAX, fmax(1e-10, mu / mu0));
        /* u = A'K^-1 s1 (the dual form has no s1) */
        if (pr->dual) {
            memset(ws->u, 0, (size_t)m * sizeof *ws->u);
        } else {
            memcpy(ws->t, ws->s1, (size_t)n * sizeof *ws->t);
            if (gs_precomp_kinv(pc, ws->t) != 0) {
                info->status = GS_STATUS_NUMERICAL; /* a sparse solve found no memory */
                break;
            }
            gs_model_At(mdl, ws->t, ws->u);
        }
        /* predictor: s3 = -lam y */
        for (int i = 0; i < m; i++) {
            ws->r[i] = ws->u[i] - ws->s2[i] - (ws->isE[i] ? 0.0 : ws->y[i]);
            ws->dla[i] = 0.0;
        }
        gs_status stop = GS_STATUS_NUMERICAL;
        int it = hsolve(ws, y, o, lin, ws->r, ws->dla, eta, &stop);
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
        it = hsolve(ws, y, o, lin, ws->r, ws->dl, eta, &stop);
        if (it < 0) {
            info->status = stop;
            break;
        }
        cg += it;
        for (int i = 0; i < m; i++)
            if (!ws->isE[i])
                ws->dy[i] = (ws->dy[i] - ws->y[i] * ws->dl[i]) / ws->lam[i];
        /* dx = K^-1 (s1 - A dlam) */
        if (!pr->dual) {
            memcpy(ws->dx, ws->s1, (size_t)n * sizeof *ws->dx);
            gs_model_A_add(mdl, -1.0, ws->dl, ws->dx);
            if (gs_precomp_kinv(pc, ws->dx) != 0) {
                info->status = GS_STATUS_NUMERICAL;
                break;
            }
        }
        double amax = fmin(max_step(ws->lam, ws->dl, ws->isE, m), max_step(ws->y, ws->dy, ws->isE, m));
        double tau = fmax(IPM_TAU, fmin(0.9999, 1.0 - mu / mu0));
        const double alpha = bound_mu_growth(ws, fmin(1.0, tau * amax), mu, mI, m);
        iters++;
        if (!pr->dual)
            cblas_daxpy(n, alpha, ws->dx, 1, ws->x, 1);
        for (int i = 0; i < m; i++) {
            ws->lam[i] += alpha * ws->dl[i];
            if (ws->isE[i])
                continue;
            ws->y[i] += alpha * ws->dy[i];
            if (ws->lam[i] < pr->l_floor)
                ws->lam[i] = pr->l_floor;
            if (ws->y[i] < pr->y_floor)
                ws->y[i] = pr->y_floor;
        }
        if (alpha < 1e-12) { /* stalled: last chance */
            if (polish(ws, s, pb, y, inS, lam_out)) {
                info->iterations += iters;
                info->cg_iterations += cg;
                return 1;
            }
            info->status = GS_STATUS_NUMERICAL;
            break;
        }
    }
    memset(lam_out, 0, (size_t)s->m * sizeof *lam_out);
    for (int i = 0; i < m; i++)
        lam_out[sys_pair(y, i)] = ws->lam[i];
    info->iterations += iters;
    info->cg_iterations += cg;
    return 0;
}

/* ---- the working set (the dual form) ---------------------------------------
 * The Mehrotra runs of the dual form work on a working set S of pairs: the
 * dual restricted to S (Q_SS, p_S; lambda = 0 elsewhere) is solved and
 * polished exactly; the pairs outside S that its answer leaves violated
 * (w_i < -tol_w, w from the polish's O(m k) product) join S, and the run is
 * repeated on the larger set, from the last answer (start_hint), until
 * none is.
 * The answer then satisfies the optimality conditions of the whole problem,
 * certified like every solve. Each run costs O(|S|^3/3) per iteration
 * instead of O(m^3/3): the contact set is a small part of m, and the pairs
 * it shields never enter. Joining: the most violated first, skipping pairs
 * whose column of Q is nearly that of a pair taken in the same round (they
 * are shielded by it, as neighbours are by a pair in contact), at least
 * IPM_WS_MIN_ADD and at most |S| per round; when the violated pairs are at
 * most half as many as S holds, all of them join (the shielding then only
 * costs rounds: lap joint 88 -> 47 ms at 50%, 280 -> 120 ms at 100%,
 * sandwich at 50% 2.9 -> 1.2 s); the first set is the fastened pairs, a
 * warm start's set, the loaded pairs (lap joint 6.9 / 53 / 155 -> 5.7 / 50 /
 * 106 ms at 10 / 50 / 100%, sandwich at 50 / 100% 1.36 / 3.35 -> 0.85 /
 * 2.0 s) and 64 more by the same choice on -p (the gaps at lambda = 0),
 * fewer when a warm start brought some. */
#define IPM_WS_SHIELD 0.95
#define IPM_WS_MIN_ADD 64
/* After this many rounds every pair joins (a safeguard: the run on all pairs
 * is the plain dual IPM). */
#define IPM_WS_MAX_ROUNDS 64

static int key_cmp(const void *a, const void *b)
{
    const ipm_key *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i); /* ties by index: the same set on every CPU */
}

static int int_cmp(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Pair i joins S unless it is there: 1 if it joined. O(1). */
static int ws_join(ipm_ws *ws, int i)
{
    if (ws->inS[i])
        return 0;
    ws->inS[i] = 1;
    ws->S[ws->ms++] = i;
    return 1;
}

/* Add to S up to cap of the n candidate pairs keys (by w, most violated
 * first), with shield: skipping pairs shielded by one taken in this call.
 * O(n log n) plus, with shield, O(m) per pair taken (its column of Q). */
static void ws_pick(ipm_ws *ws, const gs_precomp *pc, int n, int cap, int shield)
{
    const int m = pc->m;
    qsort(ws->keys, (size_t)n, sizeof *ws->keys, key_cmp);
    memset(ws->blk, 0, (size_t)m);
    for (int c = 0, added = 0; c < n && added < cap; c++) {
        const int j = ws->keys[c].i;
        if (ws->blk[j] || !ws_join(ws, j))
            continue;
        added++;
        if (!shield)
            continue;
        const double *qj = pc->Q + (size_t)j * m;
        const double t = IPM_WS_SHIELD * ws->sqd[j];
        for (int i = 0; i < m; i++)
            ws->blk[i] |= qj[i] > t * ws->sqd[i];
    }
}

/* The system of S (sorted here): Q_SS (lower triangle, ld |S|), its
 * diagonal, p_S and, for the split preconditioner and the infeasible start,
 * its Cholesky factor; every pair: the precomputation's own (gathered and
 * factored like a working set's while its L_Q is deferred and one is
 * needed: the dual form never waits for L_Q, gs_method_needs_lq). GS_OK, or
 * GS_ERR_NOMEM / GS_ERR_NOT_SPD (Q_SS not numerically SPD). O(|S|^2)
 * gather, O(|S|^3/3) factor. */
static gs_err ws_system(ipm_ws *ws, gs_solver *s, const ipm_par *pr, ipm_sys *y, gs_error *err)
{
    const gs_precomp *pc = s->pc;
    const int m = s->m, k = ws->ms;
    const int factor = pr->lin == GS_IPM_PCG_SPLIT || pr->st == GS_IPM_START_INFEASIBLE;
    if (k == m && (!factor || gs_precomp_has_lq(pc))) {
        *y = sys_all(s);
        return GS_OK;
    }
    qsort(ws->S, (size_t)k, sizeof *ws->S, int_cmp);
    if (k > ws->cap) {
        const int cap = k > 2 * ws->cap ? k : (2 * ws->cap > m ? m : 2 * ws->cap);
        const size_t kk = gs_mul_size((size_t)cap, (size_t)cap);
        double *Qs = realloc(ws->Qs, gs_mul_size(kk, sizeof *Qs));
        if (Qs)
            ws->Qs = Qs;
        double *qds = Qs ? realloc(ws->qds, (size_t)cap * sizeof *qds) : NULL;
        if (qds)
            ws->qds = qds;
        double *ps = qds ? realloc(ws->ps, (size_t)cap * sizeof *ps) : NULL;
        if (!ps)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a working set of %d pairs",
                             k);
        ws->ps = ps;
        ws->cap = cap;
    }
    for (int b = 0; b < k; b++) {
        const double *qb = pc->Q + (size_t)ws->S[b] * m;
        double *sb = ws->Qs + (size_t)b * k;
        for (int a = b; a < k; a++)
            sb[a] = qb[ws->S[a]];
        ws->qds[b] = pc->qdiag[ws->S[b]];
        ws->ps[b] = s->p[ws->S[b]];
    }
    *y = (ipm_sys){.m = k, .Q = ws->Qs, .LQ = NULL, .qd = ws->qds, .p = ws->ps, .idx = ws->S};
    if (factor) {
        if (k > ws->lcap) {
            double *LQs = realloc(ws->LQs, gs_mul_size(gs_mul_size((size_t)ws->cap,
                                                                   (size_t)ws->cap),
                                                       sizeof *LQs));
            if (!LQs)
                return gs_errorf(err, GS_ERR_NOMEM, "",
                                 "no memory for the factor of a working set of %d pairs", k);
            ws->LQs = LQs;
            ws->lcap = ws->cap;
        }
        if (gs_chol_plus_diag(ws->LQs, k, ws->Qs, k, NULL, "Q_SS", err) != GS_OK)
            return GS_ERR_NOT_SPD;
        y->LQ = ws->LQs;
    }
    return GS_OK;
}

/* ws->wr on S's pairs = Q_SS lam_S - p_S for a warm start's multipliers
 * (pair-indexed, m), their residual gaps on the working set alone (the
 * start needs no more). 1, or 0 when a value is not finite (the warm
 * multipliers are then not used). O(|S|^2). */
static int warm_residual(ipm_ws *ws, const ipm_sys *y, const double *lam)
{
    for (int c = 0; c < y->m; c++)
        ws->cz[c] = lam[sys_pair(y, c)];
    cblas_dsymv(CblasColMajor, CblasLower, y->m, 1.0, y->Q, y->m, ws->cz, 1, 0.0, ws->cq, 1);
    for (int c = 0; c < y->m; c++) {
        ws->wr[sys_pair(y, c)] = ws->cq[c] - y->p[c];
        if (!isfinite(ws->cq[c]))
            return 0;
    }
    return 1;
}

static gs_err working_set(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                          const ipm_par *pr, double *lam_out, gs_solve_info *info,
                          gs_error *err)
{
    const gs_precomp *pc = s->pc;
    const int m = s->m;
    memset(ws->inS, 0, (size_t)m);
    ws->ms = 0;
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(pb, i))
            ws_join(ws, i);
    /* a warm start's contact set joins first (its pairs were validated) */
    const gs_warm *wm = o->warm;
    for (int c = 0; wm && c < wm->n_act; c++)
        info->warm_kept += ws_join(ws, wm->act[c]);
    info->warm_used = info->warm_kept > 0;
    /* the loaded pairs (installed fasteners pull them into contact, as GI
     * takes them first) */
    for (int i = 0; pb->load && i < m; i++)
        if (pb->load[i] > 0.0)
            ws_join(ws, i);
    int n = 0;
    for (int i = 0; i < m; i++)
        if (!ws->inS[i])
            ws->keys[n++] = (ipm_key){-s->p[i], i};
    if (info->warm_kept < IPM_WS_MIN_ADD)
        ws_pick(ws, pc, n, IPM_WS_MIN_ADD - info->warm_kept, 1);
    for (int round = 1;; round++) {
        ipm_sys y;
        gs_err e = ws_system(ws, s, pr, &y, err);
        if (e == GS_ERR_NOMEM)
            return e;
        if (e != GS_OK) {
            info->status = GS_STATUS_NUMERICAL;
            memset(lam_out, 0, (size_t)m * sizeof *lam_out);
            return GS_OK;
        }
        /* from the second run on: from the last answer (its lam_out and w);
         * the first from a warm start's multipliers, where given */
        ws->hint_lam = round > 1 ? lam_out : NULL;
        ws->hint_w = round > 1 ? ws->wr : NULL;
        if (round == 1 && info->warm_used && wm->lam && warm_residual(ws, &y, wm->lam)) {
            ws->hint_lam = wm->lam;
            ws->hint_w = ws->wr;
        }
        const int solved = mehrotra(ws, s, pb, o, &y, pr, y.idx ? ws->inS : NULL, lam_out, info);
        ws->hint_lam = ws->hint_w = NULL;
        if (!solved || !y.idx)
            return GS_OK; /* stopped (info->status says why), or solved on every pair */
        n = 0;
        for (int i = 0; i < m; i++) {
            if (!isfinite(ws->wr[i])) {
                info->status = GS_STATUS_NUMERICAL;
                return GS_OK;
            }
            if (!ws->inS[i] && ws->wr[i] < -s->tol_w)
                ws->keys[n++] = (ipm_key){ws->wr[i], i};
        }
        if (n == 0)
            return GS_OK; /* optimal on every pair */
        if (round < IPM_WS_MAX_ROUNDS) {
            /* few violated pairs left (at most half the set): all of them */
            const int few = 2 * n <= ws->ms;
            ws_pick(ws, pc, n, few ? n : ws->ms > IPM_WS_MIN_ADD ? ws->ms : IPM_WS_MIN_ADD, !few);
        } else {
            for (int i = 0; i < m; i++)
                ws_join(ws, i);
        }
    }
}

static gs_err ipm_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, gs_form form,
                        double *lam_out, gs_solve_info *info, gs_error *err)
{
    const int dual = form == GS_FORM_DUAL;
    ipm_ws *ws = gs_solver_ws(s, GS_METHOD_IPM, GS_FORM_PRIMAL, ipm_new, ipm_free, err);
    if (!ws)
        return GS_ERR_NOMEM;
    const gs_precomp *pc = s->pc;
    const int m = s->m;
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
        /* the float copy of L_Q or of a working set's (lower triangle) */
        ws->Lf = malloc(gs_mul_size(mm, sizeof *ws->Lf));
        if (!ws->rf)
            ws->rf = malloc((size_t)m * sizeof *ws->rf);
        if (!ws->Lf || !ws->rf) {
            free(ws->Lf);
            ws->Lf = NULL;
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the float copy of L_Q");
        }
        ws->Lf_full = 0; /* filled by the run */
    }
    if (lin == GS_IPM_MIXED && !ws->mc.t && gs_mixchol_init(&ws->mc, m, err) != GS_OK)
        return GS_ERR_NOMEM;
    if (lin == GS_IPM_DIRECT && !ws->Hf && m > 0) {
        ws->Hf = malloc(gs_mul_size(mm, sizeof *ws->Hf));
        if (!ws->Hf)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the IPM normal matrix");
    }
    ipm_par pr = {.dual = dual, .lin = lin, .st = o->ipm_start,
                  .max_iter = gs_solver_max_iter(s, o)};
    if (pr.max_iter > IPM_MAX_ITER)
        pr.max_iter = IPM_MAX_ITER;
    info->warm_used = 0;
    info->warm_kept = 0;
    info->status = GS_STATUS_OPTIMAL;
    info->iterations = 0;
    info->cg_iterations = 0;
    pr.gmax = norm_inf(pb->g, m);
    pr.pmax = norm_inf(s->p, m);
    /* scales: gaps (mm), forces (N) ~ p / Q_ii */
    const double qmax = norm_inf(pc->qdiag, m);
    pr.ysc = fmax(fmax(pr.gmax, pr.pmax), 1e-3);
    pr.lsc = qmax > 0.0 ? pr.ysc / qmax : 1.0;
    pr.y_floor = 1e-16 * pr.ysc;
    pr.l_floor = 1e-16 * pr.lsc;
    if (pr.st == GS_IPM_START_AUTO)
        pr.st = pc->mdl->joint == GS_JOINT_SANDWICH ? GS_IPM_START_INFEASIBLE
                                                    : GS_IPM_START_FEASIBLE;
    gs_problem_load_vector(pb, ws->f);
    if (dual)
        return working_set(ws, s, pb, o, &pr, lam_out, info, err);
    const ipm_sys all = sys_all(s);
    (void)mehrotra(ws, s, pb, o, &all, &pr, NULL, lam_out, info);
    return GS_OK;
}

const gs_method_ops gs_method_ipm = {
    .name = "ipm",
    .forms = 1u << GS_FORM_PRIMAL | 1u << GS_FORM_DUAL,
    .default_form = GS_FORM_PRIMAL,
    .solve = ipm_solve,
};
