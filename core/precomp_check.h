/*
 * precomp_check.h -- the precomputation checked against the model it came
 * from, by probes in gapsim's own loops (no BLAS, no LAPACK).
 *
 * Every result's certificate (kkt.h) is measured against Q = A'K^-1 A: a Q
 * that the BLAS computed wrong (a kernel that miscomputes on this CPU, a
 * fault) would certify wrong answers. So every build checks, with a probe
 * vector v (m entries of magnitude 1/2 to 1, fixed pseudo-random signs and
 * sizes), and t = A v:
 *   1. each part's factor solves its block: s_b = K_b^-1 t_b by the factor
 *      (a dense part: gapsim's own triangular solves; a sparse part:
 *      CHOLMOD's solve), and the residual r_b = K_b s_b - t_b with K_b as
 *      the model gives it (a dense block factored in place: its strict upper
 *      triangle, which dpotrf does not touch, and its diagonal kept before
 *      the factorization) is a Cholesky solve's backward error:
 *        |r_b|_inf <= GS_CHECK_BACKWARD (| |K_b| |s_b| |_inf + |t_b|_inf);
 *   2. Q v agrees with A's, two routes to the same product whose rounding
 *      is amplified by K's condition:
 *        |Q v - A's|_inf <= tol_Q | |Q| |v| |_inf,
 *        tol_Q = max(GS_CHECK_FORWARD, GS_CHECK_COND_EPS cond_1(K) eps);
 *   3. once L_Q is there, with another probe w:
 *        |L_Q (L_Q' w) - Q w|_inf <= GS_CHECK_BACKWARD | |Q| |w| |_inf.
 * A broken kernel's errors are of the order of the entries themselves; the
 * rounding of a correct build stays 10^7 (L_Q) to 10^10 (Q) times below
 * these bounds on the generated joints (docs/architecture.md). A failure is
 * GS_ERR_CHECK naming the part (parts[b].K) or "pairs", its message the
 * measured ratio, the bound and the OpenBLAS kernel.
 * Cost: O(sum_b n_b^2 + m^2), a few passes over the blocks and Q (memory
 * bound; the parts side by side), against the build's O(sum_b n_b^3 + m^3).
 */
#ifndef GS_PRECOMP_CHECK_H
#define GS_PRECOMP_CHECK_H

#include "precompute.h"

#define GS_CHECK_BACKWARD 1e-8
#define GS_CHECK_FORWARD 1e-8
#define GS_CHECK_COND_EPS 1e3

/* Checks 1 and 2 on a build whose factors and Q are complete, dense parts
 * with pc->kdiag[b] (the diagonal of K_b before its factorization) and
 * K_b's strict upper triangle still in pc->L[b]. *ratio_q (optional): the
 * measured |Q v - A's| / | |Q| |v| |. On threads (0: BLAS's count) for the
 * parts. GS_ERR_CHECK, or GS_ERR_NOMEM. */
gs_err gs_precomp_check_q(const gs_precomp *pc, int threads, double *ratio_q, gs_error *err);
/* Check 3 (pc->LQ set, its strict upper triangle zero). *ratio (optional):
 * the measured ratio. */
gs_err gs_precomp_check_lq(const gs_precomp *pc, double *ratio, gs_error *err);

#endif
