/*
 * refsolve.h -- the reference solver: a test oracle, not a product solver.
 *
 * Problem: the dual (2) of docs/math.md with equality pairs,
 *     min 1/2 lam'Q lam - p'lam   s.t. lam_k >= 0 (k not fastened), lam_E free.
 * Method: Lawson-Hanson primal active set on the dual (NNLS-style). The set C
 * holds the pairs in contact (plus all equality pairs); each outer step adds
 * the pair with the most negative residual gap w_j = (Q lam - p)_j, solves
 * Q_CC z = p_C and, while some z_i <= 0, steps back towards z and drops the
 * pairs whose multiplier reaches zero. At the end the equality system on the
 * final C is solved again from a fresh factorization with one step of
 * iterative refinement (the polish), and optimality is re-checked.
 * Degenerate problems (zero gaps, ties, dependent pairs) must end whatever
 * the rounding of the BLAS kernel:
 *   - zero rule: a polished multiplier in [-tol_lam, 0), tol_lam = tol /
 *     (2 max_i Q_ii), is a contact without force (it moves no gap by more
 *     than tol / 2): all such pairs leave C together; a more negative one
 *     leaves alone; either way it is blocked until the next full step;
 *   - a pair that would leave as soon as it entered, or is dependent on C,
 *     is blocked likewise;
 *   - anti-cycling: in exact arithmetic the sets reached after full steps
 *     never repeat (the objective decreases strictly); their hashes are
 *     kept, and a repeat switches to Bland's rule (the violated pair of
 *     smallest index enters, ratio-test ties leave by smallest index) and
 *     keeps the blocks. max_iter remains a last bound, never reached on the
 *     degenerate families of tests/unit/test_refsolve.c under any kernel.
 * Final check: the candidate optimum stands only if w = Q lam - p computed
 * as the certificate computes it (core/kkt.c) is >= -tol on every
 * inequality pair, those in C too (|w| <= tol on equality pairs), and lam
 * >= 0; otherwise the status is
 * GS_STATUS_INFEASIBLE when the multipliers' direction d = lam / max|lam_i|
 * is a Farkas certificate (d >= 0 off equality pairs, sqrt(d'Qd) <= 2
 * sqrt(1e-12) sum |d_i| sqrt(Q_ii), g'd < -tol sum |d_i|: gaps that
 * contradict over nearly dependent pairs, whose multipliers grow to ~1e12
 * N), and lam holds d; else GS_STATUS_NUMERICAL.
 * Reference: C. Lawson, R. Hanson, Solving Least Squares Problems (1974), ch. 23.
 * Invariants: L holds the Cholesky factor of Q_CC (appended in O(|C|^2) per
 * added pair; rebuilt from scratch, O(|C|^3), after drops); lam is zero
 * outside C and >= 0 on C \ E.
 * Cost per outer step: O(m |C|) for w, O(|C|^2) for the append and solves.
 * Chosen for simplicity and independence from the product solvers, not speed.
 */
#ifndef GS_REFSOLVE_H
#define GS_REFSOLVE_H

#include "gs_status.h"
#include "problem.h"

typedef struct {
    double tol;    /* optimality: w_j >= -max(tol max(1, ||g||_inf), 64 eps ||p||_inf)
                      mm; default 1e-11 */
    int max_iter;  /* outer + inner steps; default 4 m + 100 */
} gs_ref_opts;

typedef struct {
    gs_status status;
    int iterations;       /* outer steps (pairs added) */
    int drops;            /* pairs dropped in inner steps */
    int n_act;            /* |C| at the end, equality pairs included */
    double time;          /* s */
} gs_ref_info;

void gs_ref_default_opts(gs_ref_opts *o);

/* Solve; lam (m) gets the multipliers (status infeasible: the Farkas
 * certificate d), w (m, optional) the residual gaps Q lam - p. Returns an API error (bad data, no memory); the algorithmic
 * outcome is info->status. */
gs_err gs_ref_solve(const gs_problem *pb, const gs_ref_opts *opt, double *lam, double *w,
                    gs_ref_info *info, gs_error *err);

#endif
