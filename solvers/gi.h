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

#include "solver_impl.h"

gs_err gs_gi_relative_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                            double *lam, gs_solve_info *info, gs_error *err);
gs_err gs_gi_dual_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, double *lam,
                        gs_solve_info *info, gs_error *err);
gs_err gs_gi_primal_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                          double *lam, gs_solve_info *info, gs_error *err);

#endif
