/*
 * square_cov.h -- the square change of variables y = A~'x of the primal
 * constraints A'x <= g: A~' = [A'; E_U'], A' with n - m unit rows e_j'
 * appended for the DOFs U that no pair is matched to. A property of A
 * alone (the 1-2 nonzeros per column of gs_model), built once per user
 * (solvers/npm.c, form primal: the bounds A'x <= g become simple bounds on
 * y); nothing is factored or stored beyond O(n + m) integers and 2m values.
 *
 * Matching. Pair k is matched to one DOF p(k) of its column (the p(k)
 * distinct) by peeling: a DOF touched by exactly one remaining pair takes
 * that pair, which is then removed, and its other DOF q(k) may become the
 * next leaf. On the pair graph (DOFs as vertices, pairs as edges, a jig pair
 * a half-edge) this matches every pair iff no component holds a cycle; the
 * unmatched DOFs U get the unit rows. A pair closing a cycle (or a zero
 * entry at the DOF that would take it) leaves no triangular completion:
 * bad names it.
 *
 * Invariants (bad == -1): in peel order the matched DOFs form a forest,
 * x_p(k) depends on x_q(k) only, so y = A~'x, x = A~^-T y (reverse peel
 * order) and v = A~^-1 r (peel order) cost O(n) each, and a column of
 * A~^-T is p(k) plus the DOFs hanging on it (the CSR chs/chp lists the
 * pairs k' with q(k') = j). Row order of y and v: the m pair rows, then the
 * n - m unit rows in the order of urow.
 */
#ifndef GS_SQUARE_COV_H
#define GS_SQUARE_COV_H

#include "gs_error.h"
#include "model.h"

typedef struct {
    const gs_model *mdl; /* borrowed */
    int m, n;
    int bad;        /* -1: A~ built; else the first pair left unmatched */
    int *pk, *qk;   /* m: matched DOF p(k) of pair k, its other DOF or -1 */
    double *ap, *aq; /* m: the entries of A at p(k), q(k) */
    int *order;     /* m: peel order (A~^-1: forward, A~^-T: backward) */
    int *urow;      /* n - m: the DOF of unit row m + t */
    int *chs, *chp; /* n + 1, m: pairs k' with q(k') = DOF j (CSR) */
} gs_sqcov;

/* Build the matching of mdl (borrowed for the life of sq). GS_OK with
 * sq->bad = -1 (built) or the pair that cannot be matched; GS_ERR_NOMEM.
 * O(n + m). */
gs_err gs_sqcov_build(gs_sqcov *sq, const gs_model *mdl, gs_error *err);
void gs_sqcov_free(gs_sqcov *sq);

/* y (n) = A~'x: the pair rows a_k'x, then x on the unit rows. O(n + m). */
void gs_sqcov_mul_t(const gs_sqcov *sq, const double *x, double *y);
/* x (n) = A~^-T y (y: n, pair rows then unit rows). O(n). */
void gs_sqcov_solve_t(const gs_sqcov *sq, const double *y, double *x);
/* v (n) = A~^-1 r; r (n) is overwritten (scratch). O(n). */
void gs_sqcov_solve(const gs_sqcov *sq, double *r, double *v);
/* The column A~^-T e_k of pair k, sparse: writes its DOFs to idx and its
 * values to val (n each at most) and returns how many. O(its length). */
int gs_sqcov_col_t(const gs_sqcov *sq, int k, int *idx, double *val);

#endif
