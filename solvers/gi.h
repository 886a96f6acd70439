/*
 * gi.h -- private: the Goldfarb-Idnani dual active-set method (Powell's
 * variant) on its three formulations, one file each, dispatched by gi.c:
 *   gi_relative.c  (3) u <= g: the active set is the contact set C, the
 *                  algebra is that of Q_CC (K~ = Q^-1, J = L_Q): default
 *   gi_dual.c      (2) lam >= 0: the active set is the set of pairs NOT in
 *                  contact (bounds lam_i = 0)
 *   gi_primal.c    (1) A'x <= g in x-space, with the block factors of K and
 *                  the 1-2 nonzeros per column of A (no Q needed)
 * All three share the conventions of solver_impl.h: s->p holds p, s->tol_w
 * the violation tolerance (mm); fill lam (m), info->status, iterations
 * (constraints added + dropped), warm_used, warm_kept. Pairs carrying a
 * fastener load enter first when o->fasteners_first; equality pairs enter
 * before everything and never leave.
 */
#ifndef GS_GI_H
#define GS_GI_H

#include <math.h>

#include "solver_impl.h"

/* The ratio test of a GI step, for all three forms: over the members c of
 * the active set (k of them, pair idx[c], multiplier lam[c]) whose
 * multiplier falls at rate dir r[c] > 0 per unit step, the first to reach
 * zero: t_c = max(lam_c, 0) / (dir r_c). Equality members never block (pb
 * NULL: none). Ties go to the smallest pair index, so the choice does not
 * depend on the order of the set. A t_c that is not finite (r_c denormal,
 * lam_c huge) cannot block. Returns the blocking position (*tpart its step)
 * or -1 (*tpart = +inf). O(k). */
static inline int gs_gi_ratio_test(int k, const double *lam, const double *r, double dir,
                                   const int *idx, const gs_problem *pb, double *tpart)
{
    int block = -1;
    double tmin = INFINITY;
    for (int c = 0; c < k; c++) {
        double rc = dir * r[c];
        if (!(rc > 0.0) || (pb && gs_problem_is_eq(pb, idx[c])))
            continue;
        /* max(lam_c, 0) as fmax(lam_c, 0.0) (0 for NaN too), without the
         * libm call fmax is on x86-64 */
        const double lp = lam[c] > 0.0 ? lam[c] : 0.0;
        /* cannot beat tmin by a margin above the rounding of the
         * product: no division (one per member otherwise) */
        if (block >= 0 && lp > tmin * rc * (1.0 + 0x1p-50))
            continue;
        double tc = lp / rc;
        if (!(tc < INFINITY))
            continue;
        if (block < 0 || tc < tmin || (tc == tmin && idx[c] < idx[block])) {
            tmin = tc;
            block = c;
        }
    }
    *tpart = tmin;
    return block;
}

/* The Farkas certificate of an infeasible problem into d (m), for the GI
 * forms whose active set algebra is that of Q_CC: pair j, violated, is
 * dependent on the set C (k members, pair idx[c]; Q_jj - l'l below
 * GS_CSET_DEP_TOL Q_jj, so Q (e_j - r) = 0 to that tolerance) and no member
 * blocks its step (r = Q_CC^-1 Q_Cj, r_c <= 0 on inequality members, a
 * round-off-sized positive one taken as 0). d = e_j - r scaled to max |d_i|
 * = 1: d >= 0 off the equality pairs, A d = 0, and with w_C = 0, w_j < 0,
 * g'd = w_j / scale < 0: no x has A'x <= g. The solve layer checks d
 * before the status GS_STATUS_INFEASIBLE stands (solver.c). O(m + k). */
static inline void gs_gi_farkas_ray(int m, int k, const int *idx, const double *r, int j,
                                    const gs_problem *pb, double *d)
{
    for (int i = 0; i < m; i++)
        d[i] = 0.0;
    double big = 1.0;
    d[j] = 1.0;
    for (int c = 0; c < k; c++) {
        double v = -r[c];
        if (v < 0.0 && !gs_problem_is_eq(pb, idx[c]))
            v = 0.0;
        d[idx[c]] = v;
        big = fabs(v) > big ? fabs(v) : big;
    }
    for (int c = 0; c < k; c++)
        d[idx[c]] /= big;
    d[j] /= big;
}

gs_err gs_gi_relative_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                            double *lam, gs_solve_info *info, gs_error *err);
/* The way out for a method whose own loop stops converging (NPM at its
 * stall cap, GI dual at its polish cap) or whose algebra breaks down (GI
 * dual on nearly dependent pairs): GI relative, warm from the set
 * act[0..k) with the multipliers lam_warm (m; members with a negative one
 * leave first), finishes the solve on Q itself. Fills lam (m; may be
 * lam_warm: GI reads the warm multipliers before it writes any of its
 * answer) and info->status, sets info->crossover, adds GI's iterations to
 * *iters. o as the method got it (its own warm start is replaced). */
gs_err gs_gi_relative_finish(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                             const int *act, int k, const double *lam_warm, double *lam,
                             gs_solve_info *info, int *iters, gs_error *err);
gs_err gs_gi_dual_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, double *lam,
                        gs_solve_info *info, gs_error *err);
gs_err gs_gi_primal_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                          double *lam, gs_solve_info *info, gs_error *err);

#endif
