/*
 * npm_polish.c -- Newton projection: the polish and the restart from it.
 * The projected iteration identifies the contact set; the answer is then
 * computed exactly on it: factor the set (cset.h updates, or one dpotrf),
 * lam_C = Q_CC^-1 p_C with one step of iterative refinement and the zero
 * rule (gs_cset_settle: negative multipliers and those at round-off level,
 * degenerate pairs with w = lam = 0, leave C), then count the pairs outside
 * C that still penetrate (w < -tol_w). None: the solution, and w, one full
 * product at exactly its multipliers, is the certificate's (gs_solver.w_lam).
 * Some: the driver restarts the projected iteration from the polished point
 * (npm_restart_from; the dual form's gradient is that w) and polishes again
 * later (npm.c: at most NPM_MAX_STALLS times; then GI relative finishes
 * from the polished contact set, gs_gi_relative_finish).
 * After a polish the factor holds C (c->chol = 1 for the rest of the solve).
 * Cost: O(k^2) per settle round (cset.h: a refinement O(m k) above k = m /
 * 14), one O(m k) product for w, plus the factor's updates (k = |C|).
 */
#include <string.h>

#include "npm_impl.h"

int npm_polish(npm_ctx *c, double *lam, double *w)
{
    npm_ws *ws = c->ws;
    gs_solver *s = c->s;
    gs_cset *cs = &ws->cs;
    const int m = s->m;
    int nl = 0;
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(c->pb, i) || lam[i] > 0.0) {
            ws->list[nl++] = i;
            ws->in[i] = 1;
        }
    if (!c->chol) {
        for (int a = 0; a < c->ns; a++)
            ws->spos[ws->S[a]] = -1;
        c->ns = 0;
        gs_cset_clear(cs);
        c->chol = 1;
    }
    gs_err rc = npm_chol_sync(c, nl);
    for (int a = 0; a < nl; a++)
        ws->in[ws->list[a]] = 0;
    if (rc != GS_OK)
        return -1;
    /* a rough set sheds its negative multipliers in blocks first
     * (gs_cset_prune), then the refined solve with the zero rule: degenerate
     * pairs (w = lam = 0) leave the set like negative ones */
    if (gs_cset_prune(cs, c->pb, s->p, ws->z, ws->list) != 0)
        return -1;
    gs_cset_settle(cs, c->pb, s->p, s->tol_lam, ws->z, ws->r, w, ws->list);
    memset(lam, 0, (size_t)m * sizeof *lam);
    for (int q = 0; q < cs->k; q++)
        lam[cs->idx[q]] = ws->z[q];
    int viol = 0;
    for (int i = 0; i < m; i++)
        if (cs->pos[i] < 0 && w[i] < -s->tol_w)
            viol++;
    return viol;
}

void npm_restart_from(npm_ctx *c, const double *lam, const double *w)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m;
    if (c->form == GS_FORM_DUAL) {
        /* the dual gradient Q lam - p is the polish's w, made by one full
         * product at exactly these multipliers: not computed again */
        memcpy(ws->x, lam, (size_t)m * sizeof *lam);
        memcpy(ws->g, w, (size_t)m * sizeof *w);
    } else {
        if (c->form == GS_FORM_PRIMAL)
            npm_prim_point(c, lam, ws->x); /* x_U; the pair rows from w below */
        for (int i = 0; i < m; i++)
            ws->x[i] = (ws->cs.pos[i] >= 0 || w[i] < 0.0) ? 0.0 : w[i];
        if (c->form == GS_FORM_PRIMAL)
            npm_prim_gradient(c);
        else
            npm_rel_gradient(c->s, ws->x, ws->y, ws->g);
    }
}
