/*
 * ipm_start.c -- the interior point method's starting points (ipm_impl.h).
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
 */
#include <math.h>
#include <string.h>

#include "ipm_impl.h"
#include "linalg.h"

int ipm_start_feasible(ipm_ws *ws, gs_solver *s, const ipm_sys *y, int dual, int nE,
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
                ws->list[k++] = ipm_sys_pair(y, i);
            }
        if (gs_cset_build(&ws->cs, ws->list, k, NULL) != GS_OK)
            return -1;
        ipm_h_mul(y, ws->hd, v, qv); /* hd = 0 here: Q v */
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
    ipm_h_mul(y, ws->hd, v, qv);
    ipm_h_mul(y, ws->hd, lam0, w0);
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

void ipm_start_infeasible(ipm_ws *ws, gs_solver *s, const ipm_sys *y, int dual,
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
void ipm_start_hint(ipm_ws *ws, const ipm_sys *y, double lam_floor, double y_floor)
{
    for (int i = 0; i < y->m; i++) {
        ws->lam[i] = fabs(ws->hint_lam[ipm_sys_pair(y, i)]);
        ws->y[i] = fabs(ws->hint_w[ipm_sys_pair(y, i)]);
    }
    balance_start(ws, y->m, lam_floor, y_floor);
}

