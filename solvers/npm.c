/*
 * npm.c -- Newton projection method (Bertsekas 1982) on the dual (2) and the
 * relative (3) formulation, and on the primal through the square change of
 * variables (4) (section "primal (4)" below, docs/solvers.md): the driver.
 * Owns the workspace, the start, the choice of the free set, the Newton
 * direction, the iteration and its termination, and the gradient of each
 * form. The reduced system is npm_linear.c, the step length npm_search.c,
 * the polish npm_polish.c, the primal's change of variables
 * core/square_cov.c; shared declarations and every constant in npm_impl.h.
 *
 * Problem. Dual:  min 1/2 lam'Q lam - p'lam, lam >= 0 (equality pairs free),
 * gradient w = Q lam - p (the residual gaps). Relative, written in the
 * residual gaps w = g - u >= 0 (u <= g):  min 1/2 (w + p)'Q^-1 (w + p),
 * gradient lam(w) = Q^-1 (w + p) = K~(u0' - u) (the contact forces); it is
 * (3) up to a constant. Equality pairs: lam free (dual), w = 0 (relative).
 *
 * Method. x(k+1) = P(x(k) + alpha d(k)), P = clamp at 0. I+ = variables
 * within eps_k of the bound whose gradient pushes outward (dual: lam_i <=
 * eps, w_i > 0; relative: w_i <= eps, lam_i > 0), eps_k = min(eps0,
 * ||x - P(x - D grad)||), D = diag(Q)^-1 (dual) / diag(Q) (relative) so the
 * units agree. On I+ the step is a diagonally scaled gradient step reaching
 * the bound at alpha = 1 (d_i = -x_i); on the rest F a Newton step.
 *   Dual: d_F = -(Q_FF)^-1 w_F; the linear system lives on S = F (the pairs
 *     in or entering contact).
 *   Relative: d_F = -(K~_FF)^-1 lam_F. Algebra (a), the Schur complement, is
 *     used: the minimizer over w_F with w_C fixed (C = I+, the contact set)
 *     has lam_F = 0, i.e. lam_C = Q_CC^-1 (w_C + p_C), w_F = Q_FC lam_C - p_F,
 *     so a Newton step costs one solve with Q_CC (k = |C|, small) plus one
 *     O(m k) product, against O(m^2) per CG product for (b). The linear
 *     system lives on S = C.
 *   So both forms solve Q_SS z = b with S changing by a few pairs per step:
 *   GS_NPM_LIN_CHOL: cset.h factor of Q_SS updated (append O(k^2), removal
 *     by rank-one update), one dpotrf (gs_cset_build) when more than half of
 *     S is new; GS_NPM_LIN_CG: CG on Q_SS with Jacobi preconditioning (unit
 *     diagonal scaling), relative tolerance min(1e-2, 0.1^(it+1), pg) tightened
 *     over the Newton iterations; GS_NPM_LIN_COMBINED: CG while every solve
 *     converges within 10 + sqrt(k) iterations; the first that needs more
 *     (CG slows) switches to the updated Cholesky factor for the rest of the
 *     solve. The polish always uses the factor (one dpotrf if CG ran alone).
 * Step length (opts.linesearch): exact minimization of the piecewise
 * quadratic along the projected path (Santin et al. 2016): breakpoints
 * sorted, on each segment the slope and curvature are updated as a component
 * hits its bound (npm_search.c). Dual: with L = supp(d), only q = Q_LL d_L is needed
 * (O(|L|^2)), each breakpoint costs O(|L|). Relative: the curvature is in
 * y = L_Q^-1 (w + p) space: ydir = L_Q^-1 d (one dtrsv, O(m^2)), each crossed
 * breakpoint one trailing forward solve. Golden section on log(alpha) over
 * [1e-10, 1] (the minimum is typically 1 or near 0), compared with alpha = 1;
 * Armijo backtracking (sigma = 1e-4, halving) along the projection arc
 * (the constants: npm_impl.h).
 * Termination: no violation (inequality pair with lam_i = 0 and w_i <
 * -tol_w), the set S unchanged and the last step full and unclipped -> polish
 * (re-solve Q_CC lam_C = p_C on the contact set with one refinement step,
 * drop negative multipliers and those at round-off level, the zero rule of
 * cset.h: a degenerate pair with w = lam = 0; npm_polish.c) and check
 * again; a polished point that still has violations restarts the iteration
 * from it, up to the stall cap, where GI relative finishes from the
 * polished contact set (gs_gi_relative_finish: the iteration can cycle).
 * Warm start: dual: lam from the solve on the warm set (+ equality pairs),
 * clipped at 0; relative: w = 0 on the warm set, w = Q lam - p (clipped)
 * elsewhere.
 * References: D.P. Bertsekas, Projected Newton methods for optimization
 * problems with simple constraints, SIAM J. Control Optim. 20 (1982)
 * 221-246; O. Santin, M. Jarosova, V. Havlena, Z. Dostal, Proportioning with
 * second-order information for model predictive control, Optim. Methods
 * Softw. 32 (2016); Stefanova et al., Optim. Eng. 21 (2020), sect. 3.3.
 * Invariants: x >= 0 on inequality pairs; g is the exact gradient at x
 * (recomputed every step, not accumulated); with the Cholesky variant cs
 * holds S and L L' = Q_SS.
 * Primal (4): the iterate is z = (w, x_U) over y = A~'x (A' plus unit rows
 * for the unmatched DOFs U, a forest in peel order: O(n) transforms); the
 * Newton point with C at its bound is x = K^-1 (f - A_C lam_C), Q_CC lam_C =
 * p_C + w_C (the Schur complement of H = A~^-1 K A~^-T: (H^-1)_CC = Q_CC), so
 * the same system machinery on S = C serves; gradient, exact line search and
 * Newton point cost one O(sum n_b^2) pass over the K blocks or factors each.
 * Cost per Newton iteration (k = |S|, m pairs): dual O(k^2) solve (+ O(k^2)
 * per set change, or k^3/3 on a rebuild) + O(m k) gradient + O(k^2 + k log k)
 * exact line search; relative the same linear algebra on C plus about three
 * dtrsv with L_Q (O(m^2)) for the gradient lam and the exact line search.
 * No allocation inside the iterations (workspace per solver, cset growth is
 * geometric).
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gi.h"
#include "npm_impl.h"

static void npm_free(void *p)
{
    npm_ws *ws = p;
    if (!ws)
        return;
    gs_cset_free(&ws->cs);
    gs_sqcov_free(&ws->sq);
    double **dv[] = {&ws->x, &ws->g, &ws->d, &ws->xn, &ws->z, &ws->b, &ws->r, &ws->pv, &ws->qv,
                     &ws->hv, &ws->q, &ws->gl, &ws->dl, &ws->y, &ws->yd, &ws->yt, &ws->v,
                     &ws->exv, &ws->px, &ws->pr, &ws->pf, &ws->pdx, &ws->pkdx, &ws->prt,
                     &ws->ptmp};
    for (size_t i = 0; i < sizeof dv / sizeof *dv; i++)
        free(*dv[i]);
    free(ws->L);
    free(ws->S);
    free(ws->spos);
    free(ws->list);
    free(ws->in);
    free(ws->bkeys);
    free(ws->cand);
    free(ws->exi);
    free(ws);
}

/* Workspace with iterate length nv (m, or n for the primal). */
static npm_ws *npm_alloc(gs_solver *s, int nv)
{
    npm_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    ws->nv = nv;
    ws->sq.bad = -1;
    const size_t m = (size_t)nv;
    double **dv[] = {&ws->x, &ws->g, &ws->d, &ws->xn, &ws->z, &ws->b, &ws->r, &ws->pv, &ws->qv,
                     &ws->hv, &ws->q, &ws->gl, &ws->dl, &ws->y, &ws->yd, &ws->yt, &ws->v};
    int ok = 1;
    for (size_t i = 0; i < sizeof dv / sizeof *dv; i++)
        ok &= (*dv[i] = calloc(m + 1, sizeof(double))) != NULL;
    ws->L = malloc((m + 1) * sizeof *ws->L);
    ws->S = malloc((m + 1) * sizeof *ws->S);
    ws->spos = malloc((m + 1) * sizeof *ws->spos);
    ws->list = malloc((m + 1) * sizeof *ws->list);
    ws->in = calloc(m + 1, 1);
    ws->bkeys = malloc((m + 1) * sizeof *ws->bkeys);
    ws->cand = malloc((m + 1) * sizeof *ws->cand);
    if (!ok || !ws->bkeys || !ws->cand || !ws->L || !ws->S || !ws->spos || !ws->list ||
        !ws->in || gs_cset_init(&ws->cs, s->pc, NULL) != GS_OK) {
        npm_free(ws);
        return NULL;
    }
    for (size_t i = 0; i < m; i++)
        ws->spos[i] = -1;
    return ws;
}

static void *npm_new(gs_solver *s)
{
    return npm_alloc(s, s->m);
}

/* Primal: iterate length n, the square change of variables (core/square_cov.h)
 * and the x-space vectors. */
static void *npm_primal_new(gs_solver *s)
{
    npm_ws *ws = npm_alloc(s, s->n);
    if (!ws)
        return NULL;
    const size_t n = (size_t)s->n + 1;
    int ok = (ws->exi = calloc(n + 1, sizeof(int))) != NULL;
    double **dv[] = {&ws->exv, &ws->px, &ws->pr, &ws->pf, &ws->pdx, &ws->pkdx, &ws->prt,
                     &ws->ptmp};
    for (size_t i = 0; i < sizeof dv / sizeof *dv; i++)
        ok &= (*dv[i] = calloc(n, sizeof(double))) != NULL;
    if (!ok || gs_sqcov_build(&ws->sq, s->pc->mdl, NULL) != GS_OK) {
        npm_free(ws);
        return NULL;
    }
    return ws;
}

/* ---- the objective of each form ------------------------------------------ */

void npm_dual_gradient(const gs_solver *s, const double *lam, double *g)
{
    const int m = s->m;
    for (int i = 0; i < m; i++)
        g[i] = -s->p[i];
    gs_sparse_mul(m, s->pc->Q, (size_t)m, lam, m, g);
}

void npm_lq_solve_L(const gs_solver *s, double *z)
{
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, s->m, s->pc->LQ, s->m, z,
                1);
}

void npm_rel_gradient(const gs_solver *s, const double *w, double *y, double *lam)
{
    for (int i = 0; i < s->m; i++)
        y[i] = w[i] + s->p[i];
    npm_lq_solve_L(s, y);
    memcpy(lam, y, (size_t)s->m * sizeof *lam);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, s->m, s->pc->LQ, s->m, lam,
                1);
}

/* Primal (4): the iterate is z = (w, x_U) over y = A~'x, w_k = g_k - y_k >= 0
 * on the pair rows (the bound is the same clamp at 0 as the relative form,
 * and the gradient on the pair rows is lam), x_j free on the unit rows. */

void npm_prim_x_of_z(const npm_ctx *c, const double *z, int affine, double *x)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m, n = c->s->n;
    double *y = ws->ptmp;
    for (int k = 0; k < m; k++)
        y[k] = (affine ? c->pb->g[k] : 0.0) - z[k];
    memcpy(y + m, z + m, (size_t)(n - m) * sizeof *y);
    gs_sqcov_solve_t(&ws->sq, y, x);
}

/* z = (g - A'x, x_U). O(n). */
static void prim_z_of_x(const npm_ctx *c, const double *x, double *z)
{
    const int m = c->s->m;
    gs_sqcov_mul_t(&c->ws->sq, x, z);
    for (int k = 0; k < m; k++)
        z[k] = c->pb->g[k] - z[k];
}

/* g = dphi/dz = (-(A~^-1 r)_pairs, (A~^-1 r)_U), r = K x - f: on the pair
 * rows the contact forces. */
void npm_prim_gradient(npm_ctx *c)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m, n = c->s->n;
    npm_prim_x_of_z(c, ws->x, 1, ws->px);
    gs_model_K_mul(c->s->pc->mdl, ws->px, ws->pr);
    for (int j = 0; j < n; j++) {
        ws->pr[j] -= ws->pf[j];
        ws->ptmp[j] = ws->pr[j];
    }
    gs_sqcov_solve(&ws->sq, ws->ptmp, ws->g);
    for (int k = 0; k < m; k++)
        ws->g[k] = -ws->g[k];
}

void npm_prim_point(npm_ctx *c, const double *lam, double *zt)
{
    npm_ws *ws = c->ws;
    memcpy(ws->px, ws->pf, (size_t)c->s->n * sizeof *ws->px);
    gs_model_A_add(c->s->pc->mdl, -1.0, lam, ws->px);
    (void)gs_precomp_kinv(c->s->pc, ws->px); /* NaN on failure: the iteration stops */
    prim_z_of_x(c, ws->px, zt);
}

/* ---- the iteration --------------------------------------------------------- */


/* Optimality measure ||x - P(x - D grad)||_inf in the units of x. */
static double proj_grad(const npm_ctx *c)
{
    const npm_ws *ws = c->ws;
    const double *qd = c->s->pc->qdiag;
    const int dual = c->form == GS_FORM_DUAL;
    double pg = 0.0;
    for (int i = 0; i < c->s->m; i++) {
        double sc = dual ? 1.0 / qd[i] : qd[i];
        double t = ws->x[i] - sc * ws->g[i];
        if (!gs_problem_is_eq(c->pb, i) && t < 0.0)
            t = 0.0;
        pg = fmax(pg, fabs(ws->x[i] - t));
    }
    return pg;
}

/* Bertsekas' eps_k = min(eps0, pg), eps0 = NPM_EPS0_REL of the largest
 * variable (npm_impl.h). */
static double npm_eps(const npm_ctx *c, double pg)
{
    double xmax = 0.0;
    for (int i = 0; i < c->s->m; i++)
        xmax = fmax(xmax, c->ws->x[i]);
    return fmin(NPM_EPS0_REL * xmax, pg);
}

/* 1 if the Newton step d (support ws->L[0..nsupp)) moves no residual gap
 * by more than tol_w: |d_i| mm on the relative and primal iterates (w, and
 * x_U), |d_i| Q_ii on the dual multipliers. O(nsupp). */
static int step_negligible(const npm_ctx *c, int nsupp)
{
    const npm_ws *ws = c->ws;
    const int dual = c->form == GS_FORM_DUAL;
    for (int a = 0; a < nsupp; a++) {
        int i = ws->L[a];
        double mv = fabs(ws->d[i]) * (dual ? c->s->pc->qdiag[i] : 1.0);
        if (!(mv <= c->s->tol_w))
            return 0;
    }
    return 1;
}

/* lam (m) of an iterate stopped before convergence (cap, cancel flag,
 * deadline): the current multipliers (dual: the iterate, relative and
 * primal: the gradient), clipped at 0 on the inequality pairs. */
static void stopped_lam(const npm_ctx *c, double *lam)
{
    const int m = c->s->m;
    memcpy(lam, c->form == GS_FORM_DUAL ? c->ws->x : c->ws->g, (size_t)m * sizeof *lam);
    for (int i = 0; i < m; i++)
        if (!gs_problem_is_eq(c->pb, i) && lam[i] < 0.0)
            lam[i] = 0.0;
}

static gs_err npm_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, gs_form form,
                        double *lam, gs_solve_info *info, gs_error *err)
{
    const int primal = form == GS_FORM_PRIMAL;
    npm_ws *ws = gs_solver_ws(s, GS_METHOD_NPM, form, primal ? npm_primal_new : npm_new,
                              npm_free, err);
    if (!ws)
        return GS_ERR_NOMEM;
    if (primal && ws->sq.bad >= 0)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "pairs",
                         "npm primal: no square A~ by unit rows: pair %d closes a cycle of "
                         "pairs over shared DOFs (use the dual or relative form)",
                         ws->sq.bad);
    const int m = s->m, max_iter = gs_solver_max_iter(s, o);
    const int dual = form == GS_FORM_DUAL, nv = ws->nv;
    npm_ctx c = {.ws = ws, .s = s, .pb = pb, .o = o, .form = form,
                 .chol = o->npm_linear == GS_NPM_LIN_CHOL, .stop = GS_STATUS_OPTIMAL};
    gs_cset *cs = &ws->cs;
    gs_cset_clear(cs);
    info->status = GS_STATUS_OPTIMAL;
    double *wv = ws->xn; /* scratch m for polish */

    /* start */
    memset(ws->x, 0, (size_t)nv * sizeof *ws->x);
    if (primal)
        gs_problem_load_vector(pb, ws->pf);
    int warm_ok = 0;
    if (o->warm && o->warm->n_act > 0) {
        /* the warm set + equality pairs, lam_C = Q_CC^-1 p_C clipped */
        int nl = 0;
        for (int i = 0; i < m; i++)
            if (gs_problem_is_eq(pb, i)) {
                ws->list[nl++] = i;
                ws->in[i] = 1;
            }
        for (int q = 0; q < o->warm->n_act; q++) {
            int i = o->warm->act[q];
            if (!ws->in[i]) {
                ws->in[i] = 1;
                ws->list[nl++] = i;
            }
        }
        for (int a = 0; a < nl; a++)
            ws->in[ws->list[a]] = 0;
        if (gs_cset_build(cs, ws->list, nl, NULL) == GS_OK) {
            for (int q = 0; q < cs->k; q++)
                ws->z[q] = s->p[cs->idx[q]];
            gs_cset_solve(cs, ws->z);
            int kept = 0;
            for (int q = 0; q < cs->k; q++) {
                int i = cs->idx[q];
                double v = ws->z[q];
                if (!gs_problem_is_eq(pb, i) && v < 0.0)
                    v = 0.0;
                else if (!gs_problem_is_eq(pb, i))
                    kept++;
                ws->x[i] = v;
            }
            warm_ok = 1;
            info->warm_used = 1;
            info->warm_kept = kept;
            if (!dual) { /* w = 0 on the warm set, Q lam - p (clipped) elsewhere */
                npm_dual_gradient(s, ws->x, ws->z);
                if (primal) /* x_U from x = K^-1 (f - A lam) */
                    npm_prim_point(&c, ws->x, ws->x);
                for (int i = 0; i < m; i++)
                    ws->x[i] = cs->pos[i] >= 0 || ws->z[i] < 0.0 ? 0.0 : ws->z[i];
            }
        }
        if (!c.chol)
            gs_cset_clear(cs);
    }
    if (dual) {
        npm_dual_gradient(s, ws->x, ws->g);
    } else if (primal) {
        /* primal: cold y = min(A~'x0, g), x0 = K^-1 f (w = max(g - A'x0, 0));
         * warm as relative, x_U from the warm multipliers */
        if (!warm_ok) {
            memset(ws->z, 0, (size_t)m * sizeof *ws->z);
            npm_prim_point(&c, ws->z, ws->x);
            for (int i = 0; i < m; i++)
                ws->x[i] = fmax(ws->x[i], 0.0);
        }
        for (int i = 0; i < m; i++)
            if (gs_problem_is_eq(pb, i))
                ws->x[i] = 0.0;
        npm_prim_gradient(&c);
    } else {
        /* relative: u = g (w = 0) cold; warm: w = 0 on the warm set, w = Q lam
         * - p (clipped) elsewhere */
        if (!warm_ok)
            memset(ws->x, 0, (size_t)m * sizeof *ws->x);
        for (int i = 0; i < m; i++)
            if (gs_problem_is_eq(pb, i))
                ws->x[i] = 0.0;
        npm_rel_gradient(s, ws->x, ws->y, ws->g);
    }

    int prev_ns = -1, stable = 0, stalls = 0, last_full = 0;
    double last_alpha = 1.0;
    int last_polish = 0; /* a polish every polish_every Newton steps at the latest */
    const int polish_every = dual ? NPM_POLISH_EVERY_DUAL : NPM_POLISH_EVERY;
    const int polish_early = dual ? NPM_POLISH_EVERY_DUAL : NPM_POLISH_EARLY;
    gs_err rc = GS_OK;
    for (;;) {
        double pg = proj_grad(&c);
        double eps = npm_eps(&c, pg);
        /* the system set: dual F (not in I+), relative C (= I+) */
        int nl = 0, changed = 0, viol = 0;
        for (int i = 0; i < m; i++) {
            const int eq = gs_problem_is_eq(pb, i);
            int ins;
            if (dual) {
                ins = eq || !(ws->x[i] <= eps && ws->g[i] > 0.0);
                if (ins && !eq && ws->x[i] == 0.0) {
                    /* at the bound, gradient inward: violated pairs enter in
                     * batches (below); within tolerance: stays fixed */
                    if (ws->g[i] < -s->tol_w)
                        ws->cand[viol++] = (gs_cand){!(pb->load && pb->load[i] > 0.0),
                                                     ws->g[i], i};
                    ins = 0;
                }
            } else {
                ins = eq || (ws->x[i] <= eps && ws->g[i] * s->pc->qdiag[i] > s->tol_w);
                if (!eq && ws->x[i] == 0.0 && ws->g[i] < 0.0 &&
                    ws->g[i] * s->pc->qdiag[i] < -s->tol_w)
                    viol++;
                if (!eq && ws->x[i] > 0.0 && ins)
                    viol++; /* not yet closed */
            }
            if (ins) {
                ws->list[nl++] = i;
                ws->in[i] = 1;
                int wasin = npm_in_system(&c, i);
                changed += !wasin;
            }
        }
        if (dual && viol > 0) {
            /* entering batch: the most violated (loaded pairs first), so
             * that the free set grows towards the contact set instead of
             * starting from every pair that penetrates at lam = 0 */
            int want = gs_cand_order_head(ws->cand, viol, NPM_BATCH_BASE + nl / NPM_BATCH_DIV);
            for (int q = 0; q < want; q++) {
                int i = ws->cand[q].i;
                ws->list[nl++] = i;
                ws->in[i] = 1;
                changed += !npm_in_system(&c, i);
            }
        }
        changed += (prev_ns >= 0 && nl != prev_ns);
        stable = (changed == 0 && prev_ns >= 0) ? stable + 1 : 0;
        /* converged on a stable set, or the line search found no descent
         * (round-off): polish and verify */
        if ((stable && viol == 0 && last_full) || last_alpha < NPM_ALPHA_NONE ||
            c.newton - last_polish >= (stalls < NPM_POLISH_EARLY_STALLS ? polish_early
                                                                        : polish_every)) {
            last_polish = c.newton;
            for (int a = 0; a < nl; a++)
                ws->in[ws->list[a]] = 0;
            /* converged on the set: polish and verify */
            int left = dual ? npm_polish(&c, ws->x, wv) : -2;
            if (!dual) {
                /* lam on C from the gradient; polish on C */
                memcpy(lam, ws->g, (size_t)m * sizeof *lam);
                for (int i = 0; i < m; i++)
                    if (!(ws->x[i] == 0.0 && (gs_problem_is_eq(pb, i) || lam[i] > 0.0)))
                        lam[i] = 0.0;
                left = npm_polish(&c, lam, wv);
            }
            if (left < 0)
                return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the contact set");
            if (dual)
                memcpy(lam, ws->x, (size_t)m * sizeof *lam);
            if (left == 0) {
                s->w_lam = wv; /* the polish's Q lam - p: the certificate's w */
                goto done;
            }
            if (++stalls >= (dual ? NPM_MAX_STALLS_DUAL : NPM_MAX_STALLS)) {
                /* the polished set and multipliers (the factor's) */
                rc = gs_gi_relative_finish(s, pb, o, cs->idx, cs->k, lam, lam, info, &c.newton,
                                           err);
                if (rc != GS_OK)
                    return rc;
                goto done;
            }
            npm_restart_from(&c, lam, wv);
            prev_ns = -1;
            last_alpha = 1.0;
            last_full = 0;
            continue;
        }
        gs_status stop = gs_solve_stop(o, c.newton, max_iter);
        if (stop != GS_STATUS_OPTIMAL) {
            for (int a = 0; a < nl; a++)
                ws->in[ws->list[a]] = 0;
            info->status = stop;
            stopped_lam(&c, lam);
            goto done;
        }
        rc = npm_set_system(&c, nl);
        for (int a = 0; a < nl; a++)
            ws->in[ws->list[a]] = 0;
        if (rc != GS_OK)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the Newton system");
        int k;
        const int *S = npm_sys_set(&c, &k);
        prev_ns = k;
        /* Newton step on S */
        for (int a = 0; a < k; a++)
            ws->b[a] = dual ? -ws->g[S[a]] : ws->x[S[a]] + s->p[S[a]];
        rc = npm_sys_solve(&c, ws->b, ws->z, fmax(pg, NPM_CG_RTOL_MIN));
        if (rc == GS_ERR_NOT_SPD) { /* a dependent pair left the set: redo */
            prev_ns = -1;
            continue;
        }
        if (rc != GS_OK)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the Newton system");
        if (c.stop != GS_STATUS_OPTIMAL) { /* cancelled inside CG: the step is not taken */
            info->status = c.stop;
            stopped_lam(&c, lam);
            goto done;
        }
        S = npm_sys_set(&c, &k);
        c.newton++;
        memset(ws->d, 0, (size_t)nv * sizeof *ws->d);
        int nsupp = 0;
        if (dual) {
            for (int a = 0; a < k; a++)
                ws->d[S[a]] = ws->z[a];
            for (int i = 0; i < m; i++)
                if (ws->x[i] > 0.0 && !npm_in_system(&c, i))
                    ws->d[i] = -ws->x[i];
        } else if (primal) {
            /* the minimizer with C at its bound: x = K^-1 (f - A_C lam_C)
             * (the Schur complement: the exact Newton step on the free rows,
             * (H_FF)^-1 from Q_CC^-1 and K^-1), O(sum n_b^2 + n) */
            memset(ws->hv, 0, (size_t)m * sizeof *ws->hv);
            for (int a = 0; a < k; a++)
                ws->hv[S[a]] = ws->z[a];
            npm_prim_point(&c, ws->hv, ws->yd);
            for (int i = 0; i < nv; i++) {
                int inC = i < m && npm_in_system(&c, i);
                ws->d[i] = inC ? -ws->x[i] : ws->yd[i] - ws->x[i];
            }
        } else {
            /* w_F target = Q[F, C] lam_C - p_F: one O(m k) product */
            for (int i = 0; i < m; i++)
                ws->hv[i] = -s->p[i];
            gs_cols_mul(m, s->pc->Q, (size_t)m, S, ws->z, k, ws->hv);
            for (int i = 0; i < m; i++) {
                int inC = npm_in_system(&c, i);
                ws->d[i] = inC ? -ws->x[i] : ws->hv[i] - ws->x[i];
            }
        }
        for (int i = 0; i < nv; i++)
            if (ws->d[i] != 0.0)
                ws->L[nsupp++] = i;
        if (nsupp == 0) {
            last_full = 1;
            continue;
        }
        double alpha = npm_step_length(&c, nsupp);
        /* the new point */
        for (int a = 0; a < nsupp; a++) {
            int i = ws->L[a];
            double t = ws->x[i] + alpha * ws->d[i];
            if (t < 0.0 && i < m && !(dual && gs_problem_is_eq(pb, i)))
                t = 0.0;
            ws->x[i] = t;
        }
        /* a full Newton step (clipping allowed), no move left, or a Newton
         * step below the answer's accuracy (round-off then decides the line
         * search's alpha): candidate */
        last_full = fabs(alpha - 1.0) < NPM_ALPHA_FULL_TOL || alpha < NPM_ALPHA_NONE ||
                    step_negligible(&c, nsupp);
        last_alpha = alpha;
        if (dual)
            npm_dual_gradient(s, ws->x, ws->g);
        else if (primal)
            npm_prim_gradient(&c);
        else
            npm_rel_gradient(s, ws->x, ws->y, ws->g);
    }
done:
    info->iterations = c.newton;
    info->cg_iterations = c.cg_its;
    return GS_OK;
}

const gs_method_ops gs_method_npm = {
    .name = "npm",
    .forms = (1u << GS_FORM_DUAL) | (1u << GS_FORM_RELATIVE) | (1u << GS_FORM_PRIMAL),
    .default_form = GS_FORM_DUAL,
    .solve = npm_solve,
};
