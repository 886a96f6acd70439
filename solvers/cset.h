/*
 * cset.h -- a contact set C with the Cholesky factor of Q_CC, updated as
 * pairs enter and leave. The linear algebra of every active-set method on
 * the dual/relative forms (GI, the Cholesky-updated Newton projection).
 *
 * Invariants: idx[0..k) lists the pairs of C in factor order, pos[i] is the
 * position of pair i or -1; f (cholup.h) holds the factor L L' = Q_CC in
 * that order. Q[:, C] v is read from the precomputed Q's columns idx[c]
 * (contiguous, m each) four at a time (gs_cset_qmul): no gathered copy of
 * them is kept, so a build copies only Q_CC and an append nothing of Q.
 * Costs (k = |C|, m pairs):
 *   schur (l = L^-1 Q_Cj, s = Q_jj - l'l)      O(k^2)   one triangular solve
 *   append (given l, s)                          O(k)     row of L
 *   remove at position c                         O((k-c)^2) rank-one update
 *                                                of the trailing factor (and
 *                                                O(k-c) to carry l along)
 *   solve Q_CC z = b                             O(k^2)   two triangular solves
 *   residual w = Q[:, C] v - p                   O(m k)   gs_cset_qmul
 *   build from a list (warm start)               O(k^3/3 + k^2) gather, dpotrf
 * Capacity grows geometrically (never in the steady state of a solve).
 */
#ifndef GS_CSET_H
#define GS_CSET_H

#include "cholup.h"
#include "fcache.h"
#include "precompute.h"
#include "problem.h"

typedef struct {
    const gs_precomp *pc;
    int m, k, cap;  /* members; capacity of tmp (= f.cap) */
    int *idx;     /* m */
    int *pos;     /* m */
    gs_cholup f;  /* the factor of Q_CC (f.k == k) */
    double *tmp;  /* cap scratch */
    unsigned char *mark; /* m scratch of gs_cset_travel, all zero between calls */
    double *ym;   /* m scratch of the residual on C by a product (cset.c) */
    long updates; /* appends and removals since the factor was last built fresh */
} gs_cset;

gs_err gs_cset_init(gs_cset *cs, const gs_precomp *pc, gs_error *err);
void gs_cset_free(gs_cset *cs);
/* Empty the set (O(k)). */
void gs_cset_clear(gs_cset *cs);
/* Make room for k_new members (geometric growth). */
gs_err gs_cset_reserve(gs_cset *cs, int k_new, gs_error *err);

/* l (k) = L^-1 Q[C, j]; returns s = Q_jj - l'l, the Schur complement of Q_CC
 * in Q_{C+j}: how fast w_j grows per unit lam_j when lam_C keeps w_C fixed. */
double gs_cset_schur(const gs_cset *cs, int j, double *l);
/* As gs_cset_schur, with l = Q[C, j] (position order) already gathered by
 * the caller (cpool.h). */
double gs_cset_schur_col(const gs_cset *cs, int j, double *l);
/* Append pair j given l and s from gs_cset_schur (s > 0). Reserve first. */
void gs_cset_append(gs_cset *cs, int j, const double *l, double s);
/* Remove the member at position c. */
void gs_cset_remove(gs_cset *cs, int c);
/* Remove the member at position c and carry l = L^-1 Q[C, j] of a pair j
 * outside C (gs_cset_schur) to the smaller set: l (k - 1 entries) =
 * L~^-1 Q[C without c, j], by the removal's own rotations (cholup.h):
 * O(k - c) instead of a new O(k^2) triangular solve. */
void gs_cset_remove_carry(gs_cset *cs, int c, double *l);
/* As gs_cset_remove_carry, for the n vectors V[:, q] (leading dim ldv). */
void gs_cset_remove_carry_n(gs_cset *cs, int c, double *V, size_t ldv, int n);
/* z (k, position order) <- Q_CC^-1 z. */
void gs_cset_solve(const gs_cset *cs, double *z);
/* z <- L^-1 z and z <- L^-T z. */
void gs_cset_solve_L(const gs_cset *cs, double *z);
void gs_cset_solve_Lt(const gs_cset *cs, double *z);
/* y += Q[:, C] v (v in position order): gs_cols_mul (linalg.h) over Q's
 * columns idx[0..k). O(m k). */
void gs_cset_qmul(const gs_cset *cs, const double *v, double *y);
/* w = Q[:, C] v - p (v in position order; p NULL: no shift). */
void gs_cset_residual(const gs_cset *cs, const double *v, const double *p, double *w);
/* Rebuild the set from a list of distinct pairs with one dpotrf. Returns
 * GS_ERR_NOT_SPD if Q restricted to the list is numerically singular (the
 * set is left empty). */
gs_err gs_cset_build(gs_cset *cs, const int *list, int k, gs_error *err);
/* Make C equal to the list of k distinct pairs, reusing the current factor
 * when that is cheaper: members not listed leave (from the last position
 * down), listed pairs not in C are appended. Cost O(sum over removals of
 * (k - c)^2 + appends (k^2 + m)), against O(k^3/3 + m k) for gs_cset_build,
 * which it calls instead when that is cheaper, when C is empty, or when the
 * factor has absorbed more than GS_CSET_FRESH(k) updates since it was built
 * (round-off accumulates in updates; a fresh dpotrf resets it). The order
 * of C afterwards is not the list's. Errors as gs_cset_build. This is how a
 * factor travels from one solve to the next (a warm start from the
 * workspace's previous solution). fc (NULL: none): where the route is a
 * build, a factor of the list cached there is copied instead (O(k^2)), and
 * a factor built is stored (fcache.h): for lists that other solves start
 * from too, such as a stored solution's contact set. */
gs_err gs_cset_travel(gs_cset *cs, const int *list, int k, gs_fcache *fc, gs_error *err);
#define GS_CSET_FRESH(k) (8L * (k) + 512)

/* Relative pivot threshold below which a pair counts as dependent on C. */
#define GS_CSET_DEP_TOL 1e-12

/* ---- the refined solve on C and the zero rule (every method's polish) ----
 *
 * The zero rule: a multiplier is zero to the accuracy of the answer when
 * its magnitude is below tol_lam = tol_w / (2 max_i Q_ii): removing such a
 * force from C moves no residual gap by more than tol_w / 2 (the Schur
 * complement of a pair is at most its Q_ii). An inequality multiplier is
 * never negative in a solution. When one is below -tol_lam, the most
 * negative leaves C alone (removing one pair changes the others); when none
 * is, every inequality member in the zero band (-tol_lam, tol_lam) leaves
 * together (degenerate contacts, w = lam = 0, whose multiplier is round-off
 * of either sign); then C is solved again. A pair that re-enters for a real
 * violation (w < -tol_w) gets lam >= tol_w / Q_ii >= 2 tol_lam, outside the
 * band, so the rule cannot cycle with the outer iteration. */

/* max_i Q_ii (a solver keeps it: gs_zero_force's input). O(m). */
double gs_qdiag_max(const gs_precomp *pc);
/* tol_lam of the zero rule (N) for the violation tolerance tol_w (mm), given
 * max_i Q_ii. O(1). */
double gs_zero_force(double qdiag_max, double tol_w);
/* The zero rule on multipliers lc (k, position order) of the members idx:
 * returns how many members leave and writes their positions, in decreasing
 * order (safe to remove one after another), to out (k). 0: none leaves. */
int gs_zero_rule(int k, const int *idx, const double *lc, const gs_problem *pb, double tol_lam,
                 int *out);
/* lc (k, position order) = Q_CC^-1 p_C with one step of iterative refinement
 * (its residual from the rows of C: O(k^2), or from a streamed product
 * above k = m / 14, bitwise the same); w (m) = Q[:, C] lc - p (one O(m k)
 * product). r: k scratch. */
void gs_cset_solve_refined(const gs_cset *cs, const double *p, double *lc, double *r, double *w);
/* Block pruning before gs_cset_settle, for a set identified roughly (an
 * interior point's or a projected iteration's guess): while more than
 * GS_CSET_PRUNE_MIN inequality members have a negative multiplier, all of
 * them leave at once and the set is factored afresh (gs_cset_build), at most
 * GS_CSET_PRUNE_PASSES times; the signs come from solves by the factor
 * alone (a heuristic: the settle refines); lc (k) is scratch (w is the
 * settle's to compute). O(k^3/3 + k^2) per pass, where removing n
 * members one at a time costs O(n (k^2 + ...)): an IPM's first guess on the
 * lap joint holds 2,278 pairs for an answer of 284. The settle and the
 * acceptance test of the caller follow unchanged. list: m ints of scratch.
 * 0, or -1 when out of memory (the set is then empty). */
#define GS_CSET_PRUNE_MIN 16
#define GS_CSET_PRUNE_PASSES 8
int gs_cset_prune(gs_cset *cs, const gs_problem *pb, const double *p, double *lc, int *list);
/* The zero rule until no member leaves: every inequality multiplier >=
 * tol_lam (lc, w as above for the final C). Members negative beyond the
 * doubt of an unrefined solve (below -1e-6 max |lc|, more on an
 * ill-conditioned factor: cset.c) leave one at a time on
 * solves by the factor alone; the rule decides on the rest from a refined
 * solve (gs_cset_solve_refined's). out: m ints of scratch.
 * Returns the pairs removed. O(k^2) per round (solves, removals), a
 * refinement O(k^2) (O(m k) above k = m / 14, cset.c) when the rule
 * decides, one O(m k) product for w at the end. */
int gs_cset_settle(gs_cset *cs, const gs_problem *pb, const double *p, double tol_lam, double *lc,
                   double *r, double *w, int *out);
/* gs_cset_settle for a caller whose w (m) is exactly Q[:, C] lc - p for the
 * lc it passes in, with no pair outside C below -tol_w. When the residual on
 * C, -w_C, is at the rounding level of its own computation (max_c |w_c| <=
 * GS_CSET_NOISE eps max_c (|p_c| + Q_cc |lc_c|)) and no member is at zero
 * force, a refinement would only correct rounding (measured on the lap
 * joint: it moved w by 3e-13 to 1e-12 mm and lc by 1e-12 relative): lc and
 * w stay as they are, O(k). Otherwise the refinement starts from that lc:
 * its residual on C is -w_C, so one solve gives lc + d without a fresh solve
 * or a residual of its own. When no member leaves and qdiag_max ||d||_1 is below
 * the least margin w_i + tol_w outside C, no pair outside C can have turned
 * violated (|Q_ij| <= max_i Q_ii), the O(m k) product is skipped and w is
 * left as it was, no longer current. Otherwise it settles as gs_cset_settle
 * from lc + d. *w_current: 1 when w is Q[:, C] lc - p for the lc returned
 * (made by a full product: the certificate may use it), 0 when not.
 * O(k), O(k^2 + m), or gs_cset_settle's cost. */
#define GS_CSET_NOISE 64.0
int gs_cset_settle_lazy(gs_cset *cs, const gs_problem *pb, const double *p, double tol_lam,
                        double tol_w, double qdiag_max, double *lc, double *r, double *w,
                        int *out, int *w_current);

#endif
