/*
 * ipm.c -- primal-dual interior point method (Mehrotra predictor-corrector)
 * on the primal formulation (1):
 *     min 1/2 x'Kx - f'x   s.t.   A'x <= g   (a_k'x = g_k on fastened pairs)
 * and on the dual (2) over a working set of pairs (below: form dual).
 * This file: the workspace, the Mehrotra iterations, the polish and the
 * method table entry; the normal system is in ipm_linear.c, the starting
 * points in ipm_start.c, the working set in ipm_wset.c (ipm_impl.h).
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
 * Normal system (opts.ipm_linear): mixed (default), split (the paper's
 * preconditioner P3), jacobi, direct; ipm_linear.c.
 * Fastened pairs (equality): multiplier free in sign, slack fixed at 0, so
 * their Lambda^-1 Y entry is 0 (H row = Q row), s3 = 0, dy = 0, and they take
 * no part in the step-length ratio test or in mu.
 * Starting points (opts.ipm_start): feasible, infeasible, auto; ipm_start.c.
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
 * Dependent pairs (Q_CC singular) are built into C one at a time, most
 * force first, one dependent on the others left out; a violated pair
 * dependent on C replaces the member GI's ratio test picks (polish).
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
 * and the first run from the warm multipliers where given and usable
 * (start_hint; ipm_wset.c warm_residual: finite and in proportion to the
 * data, else the run starts cold on the warm set).
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
 * O(|S|^3/3) instead of O(m^3/3); ipm_wset.c.
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

#include "gi.h"
#include "ipm_impl.h"
#include "linalg.h"

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
/* The split preconditioner in single precision: a float copy of L_Q per
 * workspace (made on the first split solve), its diagonal overwritten by
 * diag(L_Q) + D every IPM iteration, applied by two strsv (ipm_linear.c).
 * 0: the double sweeps over pc->LQ. */
#ifndef IPM_SPLIT_FP32
#define IPM_SPLIT_FP32 1
#endif

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

/* ---- polish ------------------------------------------------------------- */

/* Identify C = E + {i : lam_i > y_i}, solve exactly on it with the zero rule
 * (cset.h gs_cset_settle), then a bounded crossover: pairs with w < -tol_w
 * outside C enter (most violated first), each followed by the settle again,
 * at most IPM_XOVER changes. 1: accepted (lam_out filled: lam_C >= tol_lam
 * on inequality pairs, w >= -tol_w outside C, lam = 0 there); 0: rejected
 * (the IPM goes on). On a working set (inS not NULL) only its pairs may
 * enter and only they are checked; ws->wr holds w on every pair. */
#define IPM_XOVER 32

/* Most force first, ties by pair index. */
static int force_cmp(const void *a, const void *b)
{
    const ipm_key *x = a, *y = b;
    if (x->w != y->w)
        return x->w > y->w ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The identified set (k pairs in ws->list, their positions of y in
 * ws->list2) holds dependent pairs, so Q_CC is singular (the pairs' columns
 * of A in a loop of parts sum to zero, and with the gaps consistent the
 * iterates drift along that null space, every multiplier of the loop
 * growing): build C pair by pair instead, the fastened pairs first, then
 * the most force first, a pair dependent on those before it (its Schur
 * complement below GS_CSET_DEP_TOL Q_jj, GI's test) left out, as GI never
 * takes one in. 0, or -1 when a fastened pair is dependent on the others or
 * no memory. O(k^3/3 + k log k). */
static int build_independent(ipm_ws *ws, gs_solver *s, int k)
{
    gs_cset *cs = &ws->cs;
    for (int c = 0; c < k; c++) /* fastened pairs first (key +inf), then by force */
        ws->keys[c] = (ipm_key){ws->isE[ws->list2[c]] ? INFINITY : ws->lam[ws->list2[c]],
                                ws->list[c]};
    qsort(ws->keys, (size_t)k, sizeof *ws->keys, force_cmp);
    gs_cset_clear(cs);
    if (gs_cset_reserve(cs, k, NULL) != GS_OK)
        return -1;
    for (int c = 0; c < k; c++) {
        const int j = ws->keys[c].i, eq = ws->keys[c].w == INFINITY;
        double sch = gs_cset_schur(cs, j, ws->cz);
        if (sch > GS_CSET_DEP_TOL * s->pc->qdiag[j])
            gs_cset_append(cs, j, ws->cz, sch);
        else if (eq)
            return -1;
    }
    return 0;
}

/* A violated pair j dependent on C (Q (e_j - r) = 0 to GI's test, r =
 * Q_CC^-1 Q_Cj from l = L^-1 Q_Cj in ws->cz): as GI's partial step, the
 * member whose multiplier reaches zero first along lam_C - t r (gi.h's
 * ratio test) leaves, and j takes its place. 1, or 0 when no member blocks
 * (the gaps contradict: the IPM does not certify that, it goes on and ends
 * numerical_breakdown) or j stays dependent. O(k^2). */
static int exchange(ipm_ws *ws, gs_solver *s, const gs_problem *pb, int j)
{
    gs_cset *cs = &ws->cs;
    double *r = ws->cr, t;
    memcpy(r, ws->cz, (size_t)cs->k * sizeof *r);
    gs_cset_solve_Lt(cs, r);
    const int block = gs_gi_ratio_test(cs->k, ws->lc, r, 1.0, cs->idx, pb, &t);
    if (block < 0)
        return 0;
    gs_cset_remove(cs, block);
    double sch = gs_cset_schur(cs, j, ws->cz);
    if (!(sch > GS_CSET_DEP_TOL * s->pc->qdiag[j]))
        return 0;
    gs_cset_append(cs, j, ws->cz, sch);
    return 1;
}

static int polish(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const ipm_sys *y,
                  const unsigned char *inS, double *lam_out)
{
    const int m = s->m;
    gs_cset *cs = &ws->cs;
    int k = 0;
    for (int i = 0; i < y->m; i++)
        if (ws->isE[i] || ws->lam[i] > ws->y[i]) {
            ws->list2[k] = i;
            ws->list[k++] = ipm_sys_pair(y, i);
        }
    if (gs_cset_build(cs, ws->list, k, NULL) != GS_OK && build_independent(ws, s, k) != 0)
        return 0;
    if (gs_cset_prune(cs, pb, s->p, ws->lc, ws->list2) != 0)
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
        if (sch > GS_CSET_DEP_TOL * s->pc->qdiag[viol])
            gs_cset_append(cs, viol, ws->cz, sch);
        else if (!exchange(ws, s, pb, viol))
            return 0;
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

int ipm_mehrotra(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                 const ipm_sys *y, const ipm_par *pr, const unsigned char *inS,
                 double *lam_out, gs_solve_info *info)
{
    const gs_precomp *pc = s->pc;
    const gs_model *mdl = pc->mdl;
    const int m = y->m, n = s->n;
    const gs_ipm_linear lin = pr->lin;
    int nE = 0;
    for (int i = 0; i < m; i++) {
        ws->isE[i] = gs_problem_is_eq(pb, ipm_sys_pair(y, i));
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
        ipm_start_hint(ws, y, 1e-2 * pr->lsc, 1e-2 * pr->ysc);
    } else if (pr->st == GS_IPM_START_FEASIBLE || y->singular) {
        if (ipm_start_feasible(ws, s, y, pr->dual, nE, 1e-2 * pr->lsc,
                           fmax(1e-2 * pr->pmax, 1e-3 * fmax(1.0, pr->gmax))) != 0) {
            info->status = GS_STATUS_INFEASIBLE_EQ;
            memset(lam_out, 0, (size_t)s->m * sizeof *lam_out);
            return 0;
        }
    } else {
        ipm_start_infeasible(ws, s, y, pr->dual, 1e-2 * pr->lsc, 1e-2 * pr->ysc);
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
        if (ipm_prepare(ws, y, lin) != 0) {
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
        int it = ipm_hsolve(ws, y, o, lin, ws->r, ws->dla, eta, &stop);
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
        it = ipm_hsolve(ws, y, o, lin, ws->r, ws->dl, eta, &stop);
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
        lam_out[ipm_sys_pair(y, i)] = ws->lam[i];
    info->iterations += iters;
    info->cg_iterations += cg;
    return 0;
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
        ws->Lf = gs_alloc_matrix(mm, sizeof *ws->Lf, 0);
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
        ws->Hf = gs_alloc_matrix(mm, sizeof *ws->Hf, 0);
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
        return ipm_working_set(ws, s, pb, o, &pr, lam_out, info, err);
    const ipm_sys all = ipm_sys_all(s);
    (void)ipm_mehrotra(ws, s, pb, o, &all, &pr, NULL, lam_out, info);
    return GS_OK;
}

const gs_method_ops gs_method_ipm = {
    .name = "ipm",
    .forms = 1u << GS_FORM_PRIMAL | 1u << GS_FORM_DUAL,
    .default_form = GS_FORM_PRIMAL,
    .solve = ipm_solve,
};
