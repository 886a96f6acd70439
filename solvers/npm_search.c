/*
 * npm_search.c -- Newton projection: the step length alpha along the
 * projected path P(x + alpha d), P = clamp at 0 on the inequality pairs
 * (opts.linesearch), for each form:
 *   exact   the minimum of the piecewise quadratic (Santin et al. 2016):
 *           breakpoints a_i = x_i / -d_i sorted, on each segment the slope
 *           s1 and curvature s2 updated as a component hits its bound.
 *           Dual: with L = supp(d) only q = Q_LL d_L is needed (O(|L|^2)),
 *           O(|L|) per breakpoint. Relative: in y = L_Q^-1 (w + p) space,
 *           ydir = L_Q^-1 d (one dtrsv, O(m^2)), one trailing forward solve
 *           per crossed breakpoint. Primal: in x space (slope (Kx - f)'dx,
 *           curvature dx'K dx), a pair reaching its bound removes
 *           dy_k A~^-T e_k from dx and the matching columns of K from K dx.
 *   golden  golden section on log(alpha) over [NPM_GOLDEN_ALPHA_MIN, 1],
 *           compared with alpha = 1
 *   armijo  backtracking along the projection arc (NPM_ARMIJO_*)
 * golden and armijo evaluate the increment phi(P(x + alpha d)) - phi(x) of
 * the form (its *_phi_inc). The direction's support is ws->L[0..nl); every
 * evaluation leaves Delta = P(x + alpha d) - x on the support in ws->dl.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npm_impl.h"

/* phi(x + Delta) - phi(x) at alpha along the projected path. */
typedef double (*inc_fn)(npm_ctx *, int, double);

/* ---- dual --------------------------------------------------------------- */

/* O(|L|^2). */
static double dual_phi_inc(npm_ctx *c, int nl, double alpha)
{
    npm_ws *ws = c->ws;
    double lin = 0.0;
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        double t = ws->x[i] + alpha * ws->d[i];
        if (t < 0.0 && !gs_problem_is_eq(c->pb, i))
            t = 0.0;
        ws->dl[a] = t - ws->x[i];
        lin += ws->g[i] * ws->dl[a];
    }
    npm_qss_mult(c, ws->L, nl, ws->dl, ws->q);
    return lin + 0.5 * cblas_ddot(nl, ws->dl, 1, ws->q, 1);
}

static int bp_cmp(const void *pa, const void *pb)
{
    const npm_bp *a = pa, *b = pb;
    return (a->a > b->a) - (a->a < b->a);
}

/* Breakpoints of the projected path: a_i = x_i / -d_i over the support
 * positions with d_i < 0 (inequality pairs), sorted. Returns how many. */
static int breakpoints(npm_ctx *c, int nl, npm_bp *keys)
{
    npm_ws *ws = c->ws;
    int nb = 0;
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        if (ws->d[i] < 0.0 && i < c->s->m && !gs_problem_is_eq(c->pb, i))
            keys[nb++] = (npm_bp){ws->x[i] / -ws->d[i], a};
    }
    qsort(keys, (size_t)nb, sizeof *keys, bp_cmp);
    return nb;
}

/* One segment [acur, aend] of the projected path, on which the objective is
 * phi(acur) + s1 t + s2 t^2 / 2 (t = alpha - acur). Returns 1 with the step
 * in *alpha if the minimum along the path is on this segment (the slope is
 * no longer negative, the unconstrained minimizer falls inside, or the
 * segment is the unbounded tail), else 0: walk on to the next breakpoint. */
static int segment_min(double s1, double s2, double acur, double aend, double *alpha)
{
    if (s1 >= 0.0) {
        *alpha = acur;
        return 1;
    }
    if (s2 > 0.0 && acur - s1 / s2 <= aend) {
        *alpha = acur - s1 / s2;
        return 1;
    }
    if (aend == INFINITY) { /* s2 <= 0 on an empty tail: stay */
        *alpha = acur;
        return 1;
    }
    return 0;
}

static double dual_exact(npm_ctx *c, int nl, npm_bp *keys)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m;
    const double *Q = c->s->pc->Q;
    for (int a = 0; a < nl; a++) {
        ws->dl[a] = ws->d[ws->L[a]];
        ws->gl[a] = ws->g[ws->L[a]];
    }
    npm_qss_mult(c, ws->L, nl, ws->dl, ws->q);
    double s1 = cblas_ddot(nl, ws->gl, 1, ws->dl, 1), s2 = cblas_ddot(nl, ws->dl, 1, ws->q, 1);
    int nb = breakpoints(c, nl, keys);
    double acur = 0.0, amin;
    for (int bq = 0; bq <= nb; bq++) {
        double aend = bq < nb ? keys[bq].a : INFINITY;
        if (segment_min(s1, s2, acur, aend, &amin))
            return amin;
        double len = aend - acur;
        for (int a = 0; a < nl; a++)
            ws->gl[a] += len * ws->q[a];
        s1 += len * s2;
        /* component at support position e hits its bound */
        int e = keys[bq].i, i = ws->L[e];
        double de = ws->dl[e];
        s1 -= de * ws->gl[e];
        s2 += -2.0 * de * ws->q[e] + de * de * Q[(size_t)i * m + i];
        const double *qi = Q + (size_t)i * m;
        for (int a = 0; a < nl; a++)
            ws->q[a] -= de * qi[ws->L[a]];
        ws->dl[e] = 0.0;
        acur = aend;
    }
    return acur;
}

/* ---- golden section and Armijo (generic over the increment) --------------- */

static double golden(npm_ctx *c, int nl, inc_fn f)
{
    const double r = 0.5 * (sqrt(5.0) - 1.0); /* the golden ratio's inverse */
    double lo = log(NPM_GOLDEN_ALPHA_MIN), hi = 0.0;
    double t1 = hi - r * (hi - lo), t2 = lo + r * (hi - lo);
    double f1 = f(c, nl, exp(t1)), f2 = f(c, nl, exp(t2));
    for (int it = 0; it < NPM_GOLDEN_MAX_IT && hi - lo > NPM_GOLDEN_LOG_TOL; it++) {
        if (f1 <= f2) {
            hi = t2;
            t2 = t1;
            f2 = f1;
            t1 = hi - r * (hi - lo);
            f1 = f(c, nl, exp(t1));
        } else {
            lo = t1;
            t1 = t2;
            f1 = f2;
            t2 = lo + r * (hi - lo);
            f2 = f(c, nl, exp(t2));
        }
    }
    double a = exp(f1 <= f2 ? t1 : t2), fa = fmin(f1, f2);
    return f(c, nl, 1.0) <= fa ? 1.0 : a;
}

static double armijo(npm_ctx *c, int nl, inc_fn f)
{
    npm_ws *ws = c->ws;
    double a = 1.0;
    for (int it = 0; it < NPM_ARMIJO_MAX_IT; it++, a *= NPM_ARMIJO_SHRINK) {
        double inc = f(c, nl, a);
        double lin = 0.0; /* g'Delta along the arc (Delta in ws->dl) */
        for (int q = 0; q < nl; q++)
            lin += ws->g[ws->L[q]] * ws->dl[q];
        if (inc <= NPM_ARMIJO_SIGMA * lin)
            return a;
    }
    return 0.0;
}

/* ---- relative (y = L_Q^-1 (w + p) space for the objective) ------------- */

/* psi(w + Delta) - psi(w) at alpha: 1/2 |y + L^-1 Delta|^2 - 1/2 |y|^2. One
 * dtrsv. */
static double rel_phi_inc(npm_ctx *c, int nl, double alpha)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m;
    memset(ws->yt, 0, (size_t)m * sizeof *ws->yt);
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        double t = ws->x[i] + alpha * ws->d[i];
        if (t < 0.0)
            t = 0.0;
        ws->dl[a] = t - ws->x[i];
        ws->yt[i] = ws->dl[a];
    }
    npm_lq_solve_L(c->s, ws->yt);
    return cblas_ddot(m, ws->y, 1, ws->yt, 1) + 0.5 * cblas_ddot(m, ws->yt, 1, ws->yt, 1);
}

static double rel_exact(npm_ctx *c, int nl, npm_bp *keys)
{
    npm_ws *ws = c->ws;
    const gs_solver *s = c->s;
    const int m = s->m;
    memset(ws->yd, 0, (size_t)m * sizeof *ws->yd);
    for (int a = 0; a < nl; a++)
        ws->yd[ws->L[a]] = ws->d[ws->L[a]];
    npm_lq_solve_L(s, ws->yd);
    memcpy(ws->yt, ws->y, (size_t)m * sizeof *ws->yt);
    double s1 = cblas_ddot(m, ws->yt, 1, ws->yd, 1), s2 = cblas_ddot(m, ws->yd, 1, ws->yd, 1);
    int nb = breakpoints(c, nl, keys);
    double acur = 0.0, amin;
    for (int bq = 0; bq <= nb; bq++) {
        double aend = bq < nb ? keys[bq].a : INFINITY;
        if (segment_min(s1, s2, acur, aend, &amin))
            return amin;
        double len = aend - acur;
        cblas_daxpy(m, len, ws->yd, 1, ws->yt, 1);
        /* yd -= d_i L^-1 e_i: forward solve on the trailing block from row i */
        int i = ws->L[keys[bq].i];
        double di = ws->d[i];
        int nt = m - i;
        double *v = ws->v;
        memset(v, 0, (size_t)nt * sizeof *v);
        v[0] = 1.0;
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, nt,
                    s->pc->LQ + (size_t)i * m + i, m, v, 1);
        cblas_daxpy(nt, -di, v, 1, ws->yd + i, 1);
        s1 = cblas_ddot(m, ws->yt, 1, ws->yd, 1);
        s2 = cblas_ddot(m, ws->yd, 1, ws->yd, 1);
        acur = aend;
    }
    return acur;
}

/* ---- primal (4): in x space through the square change of variables ------ */

/* phi(P(z + alpha d)) - phi(z) = r'dx + 1/2 dx'K dx, dx = A~^-T dy.
 * O(sum n_b^2 + n). */
static double prim_phi_inc(npm_ctx *c, int nl, double alpha)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m, n = c->s->n;
    memset(ws->yt, 0, (size_t)n * sizeof *ws->yt);
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        double t = ws->x[i] + alpha * ws->d[i];
        if (t < 0.0 && i < m)
            t = 0.0;
        ws->dl[a] = t - ws->x[i];
        ws->yt[i] = ws->dl[a];
    }
    npm_prim_x_of_z(c, ws->yt, 0, ws->pdx);
    gs_model_K_mul(c->s->pc->mdl, ws->pdx, ws->pkdx);
    return cblas_ddot(n, ws->pr, 1, ws->pdx, 1) +
           0.5 * cblas_ddot(n, ws->pdx, 1, ws->pkdx, 1);
}

/* O(n + n_b |A~^-T e_k|) per breakpoint. */
static double prim_exact(npm_ctx *c, int nl, npm_bp *keys)
{
    npm_ws *ws = c->ws;
    const gs_model *mdl = c->s->pc->mdl;
    const int n = c->s->n;
    memset(ws->yt, 0, (size_t)n * sizeof *ws->yt);
    for (int a = 0; a < nl; a++)
        ws->yt[ws->L[a]] = ws->d[ws->L[a]];
    npm_prim_x_of_z(c, ws->yt, 0, ws->pdx);
    gs_model_K_mul(mdl, ws->pdx, ws->pkdx);
    memcpy(ws->prt, ws->pr, (size_t)n * sizeof *ws->prt);
    double s1 = cblas_ddot(n, ws->prt, 1, ws->pdx, 1);
    double s2 = cblas_ddot(n, ws->pdx, 1, ws->pkdx, 1);
    int nb = breakpoints(c, nl, keys);
    double acur = 0.0, amin;
    for (int bq = 0; bq <= nb; bq++) {
        double aend = bq < nb ? keys[bq].a : INFINITY;
        if (segment_min(s1, s2, acur, aend, &amin))
            return amin;
        cblas_daxpy(n, aend - acur, ws->pkdx, 1, ws->prt, 1);
        int k = ws->L[keys[bq].i];
        double dyk = -ws->d[k];
        int ne = gs_sqcov_col_t(&ws->sq, k, ws->exi, ws->exv);
        for (int h = 0; h < ne; h++) {
            int j = ws->exi[h];
            double v = dyk * ws->exv[h];
            ws->pdx[j] -= v;
            gs_model_K_col_axpy(mdl, j, -v, ws->pkdx);
        }
        s1 = cblas_ddot(n, ws->prt, 1, ws->pdx, 1);
        s2 = cblas_ddot(n, ws->pdx, 1, ws->pkdx, 1);
        acur = aend;
    }
    return acur;
}

/* ---- dispatch -------------------------------------------------------------- */

double npm_step_length(npm_ctx *c, int nl)
{
    const int dual = c->form == GS_FORM_DUAL, primal = c->form == GS_FORM_PRIMAL;
    inc_fn inc = dual ? dual_phi_inc : primal ? prim_phi_inc : rel_phi_inc;
    switch (c->o->linesearch) {
    case GS_LS_GOLDEN:
        return golden(c, nl, inc);
    case GS_LS_ARMIJO:
        return armijo(c, nl, inc);
    default:
        return dual     ? dual_exact(c, nl, c->ws->bkeys)
               : primal ? prim_exact(c, nl, c->ws->bkeys)
                        : rel_exact(c, nl, c->ws->bkeys);
    }
}
