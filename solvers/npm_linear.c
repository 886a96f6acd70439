/*
 * npm_linear.c -- Newton projection: the reduced system Q_SS z = b on the
 * system set S (dual: the free set F; relative and primal: the contact set
 * C), which changes by a few pairs per Newton step. Three backends
 * (opts.npm_linear):
 *   chol      the cset.h factor of Q_SS, updated: removals by rank-one
 *             updates, appends O(k^2), one dpotrf (gs_cset_build) when more
 *             than half of S is new; pairs numerically dependent on S are
 *             left out
 *   cg        Jacobi-preconditioned CG (pcg.h; unit diagonal scaling) from
 *             z = 0, tolerance tightened over the Newton iterations
 *             (npm_impl.h NPM_CG_RTOL_*)
 *   combined  CG while every solve converges within NPM_COMBINED_CG_BASE +
 *             sqrt(k) iterations; the first that needs more switches to the
 *             factor for the rest of the solve
 * Invariants: with c->chol, cs holds S and L L' = Q_SS; without, ws->S[0..ns)
 * lists S and ws->spos its positions (-1 elsewhere).
 * Cost (k = |S|): factor solve O(k^2), per set change O(k^2) (k^3/3 on a
 * rebuild); CG O(k^2) per iteration (the product with Q_SS gathered from Q).
 */
#include <math.h>
#include <string.h>

#include "npm_impl.h"
#include "pcg.h"

void npm_qss_mult(const npm_ctx *c, const int *S, int k, const double *x, double *y)
{
    const int m = c->s->m;
    const double *Q = c->s->pc->Q;
    for (int a = 0; a < k; a++)
        y[a] = 0.0;
    for (int bb = 0; bb < k; bb++) {
        const double *qb = Q + (size_t)S[bb] * m;
        const double xb = x[bb];
        if (xb == 0.0)
            continue;
        for (int a = 0; a < k; a++)
            y[a] += qb[S[a]] * xb;
    }
}

/* The CG callbacks: the operator Q_SS and the Jacobi preconditioner on the
 * CG set ws->S[0..ns). */
static void cg_op(void *ctx, const double *x, double *y)
{
    const npm_ctx *c = ctx;
    npm_qss_mult(c, c->ws->S, c->ns, x, y);
}

static void cg_jacobi(void *ctx, const double *r, double *z)
{
    const npm_ctx *c = ctx;
    const double *qd = c->s->pc->qdiag;
    const int *S = c->ws->S;
    for (int a = 0; a < c->ns; a++)
        z[a] = r[a] / qd[S[a]];
}

gs_err npm_chol_sync(npm_ctx *c, int nl)
{
    npm_ws *ws = c->ws;
    gs_cset *cs = &ws->cs;
    for (int q = cs->k - 1; q >= 0; q--)
        if (!ws->in[cs->idx[q]])
            gs_cset_remove(cs, q);
    int nadd = nl - cs->k;
    if (nadd > 0 && nadd > cs->k) { /* more than half new: one dpotrf */
        if (gs_cset_build(cs, ws->list, nl, NULL) == GS_OK)
            return GS_OK;
        gs_cset_clear(cs); /* singular as a whole: append one by one */
    }
    if (gs_cset_reserve(cs, nl, NULL) != GS_OK)
        return GS_ERR_NOMEM;
    for (int a = 0; a < nl; a++) {
        int j = ws->list[a];
        if (cs->pos[j] >= 0)
            continue;
        double sch = gs_cset_schur(cs, j, ws->v);
        if (sch > GS_CSET_DEP_TOL * c->s->pc->qdiag[j])
            gs_cset_append(cs, j, ws->v, sch);
        else
            ws->in[j] = 0;
    }
    return GS_OK;
}

gs_err npm_set_system(npm_ctx *c, int nl)
{
    npm_ws *ws = c->ws;
    if (c->chol)
        return npm_chol_sync(c, nl);
    for (int a = 0; a < c->ns; a++)
        ws->spos[ws->S[a]] = -1;
    c->ns = nl;
    for (int a = 0; a < nl; a++) {
        ws->S[a] = ws->list[a];
        ws->spos[ws->S[a]] = a;
    }
    return GS_OK;
}

const int *npm_sys_set(const npm_ctx *c, int *k)
{
    *k = c->chol ? c->ws->cs.k : c->ns;
    return c->chol ? c->ws->cs.idx : c->ws->S;
}

/* Jacobi CG on Q_SS z = b from z = 0. Returns 1 if it converged (a
 * breakdown, p'Q_SS p <= 0, counts as not converged); adds its iterations
 * to c->cg_its; sets c->stop when cancelled. */
static int cg_solve(npm_ctx *c, const double *b, double *z, double rtol, int maxit)
{
    npm_ws *ws = c->ws;
    const gs_pcg cg = {.n = c->ns, .op = cg_op, .prec = cg_jacobi, .ctx = c, .rtol = rtol,
                       .maxit = maxit, .x0 = 0, .cancel = c->o->cancel,
                       .deadline = c->o->deadline, .r = ws->r, .z = ws->hv, .p = ws->pv,
                       .q = ws->qv};
    int it;
    gs_pcg_status st = gs_pcg_solve(&cg, b, z, &it);
    c->cg_its += it;
    if (st == GS_PCG_CANCELLED)
        c->stop = GS_STATUS_CANCELLED;
    else if (st == GS_PCG_TIME_LIMIT)
        c->stop = GS_STATUS_TIME_LIMIT;
    return st == GS_PCG_CONVERGED;
}

gs_err npm_sys_solve(npm_ctx *c, const double *b, double *z, double pg)
{
    npm_ws *ws = c->ws;
    int k;
    const int *S = npm_sys_set(c, &k);
    if (!c->chol) {
        double rtol = fmin(NPM_CG_RTOL_MAX, pow(NPM_CG_RTOL_RATE, c->newton + 1));
        rtol = fmax(NPM_CG_RTOL_MIN, fmin(rtol, pg));
        const int combined = c->o->npm_linear == GS_NPM_LIN_COMBINED;
        int limit = combined ? NPM_COMBINED_CG_BASE + (int)sqrt((double)k)
                             : NPM_CG_CAP_PER_UNKNOWN * k + NPM_CG_CAP_BASE;
        int conv = cg_solve(c, b, z, rtol, limit);
        if (conv || !combined || c->stop != GS_STATUS_OPTIMAL)
            return GS_OK;
        /* CG slowed: switch to the updated Cholesky factor of Q_SS */
        c->chol = 1;
        for (int a = 0; a < k; a++) {
            ws->list[a] = S[a];
            ws->in[S[a]] = 1;
        }
        for (int a = 0; a < c->ns; a++)
            ws->spos[ws->S[a]] = -1;
        gs_cset_clear(&ws->cs);
        gs_err rc = npm_chol_sync(c, k);
        for (int a = 0; a < k; a++)
            ws->in[ws->list[a]] = 0;
        if (rc != GS_OK)
            return rc;
        /* a dependent pair left out: the caller's b is in the old order */
        if (ws->cs.k != k)
            return GS_ERR_NOT_SPD;
        c->ns = 0;
    }
    memcpy(z, b, (size_t)ws->cs.k * sizeof *z);
    gs_cset_solve(&ws->cs, z);
    return GS_OK;
}
