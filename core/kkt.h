/*
 * kkt.h -- the KKT certificate carried by every result.
 *
 * Optimality of (x, lambda) for  min 1/2 x'Kx - f'x  s.t. A'x <= g  (with
 * permanently fastened pairs as equalities a_k'x = g_k, lambda_k free):
 *   Kx - f + A lambda = 0,  w = g - A'x >= 0,  lambda >= 0,  lambda_k w_k = 0.
 * Two ways to certify:
 *   gs_kkt_primal  from x and lambda, evaluating K: the independent check
 *                  (stationarity measured, not assumed). O(sum n_b^2 + m |S|),
 *                  S = support of lambda.
 *   gs_kkt_dual    from lambda alone: x = x(lambda) = K^-1(f - A lambda) is
 *                  exact by construction, w = Q lambda - p. O(m |S|): cheap
 *                  enough to attach to every solve.
 * Both report objective values of the primal and the dual and their gap
 * (= lambda'w at x(lambda)).
 */
#ifndef GS_KKT_H
#define GS_KKT_H

#include "problem.h"

typedef struct {
    int primal;             /* 1: from x with K; 0: dual certificate */
    double primal_infeas;   /* mm: max_k (a_k'x - g_k)+, |a_k'x - g_k| on equality pairs */
    double dual_infeas;     /* N: max_k (-lambda_k)+ over inequality pairs */
    double complementarity; /* N mm: max_k |lambda_k w_k| over inequality pairs */
    double stationarity;    /* ||Kx - f + A lambda||_inf / (||f||_inf + ||A lambda||_inf); 0 if dual */
    double obj_primal;      /* 1/2 x'Kx - f'x */
    double obj_dual;        /* -(1/2 lambda'Q lambda - p'lambda + s) */
    double gap;             /* obj_primal - obj_dual */
    double norm_g;          /* ||g||_inf, mm (scale of the tolerances) */
    double norm_lam;        /* ||lambda||_inf, N */
    double w_floor;         /* mm: 64 eps ||p||_inf, the round-off of w = Q lambda - p:
                               no residual gap is known more exactly than this (the
                               solvers' own tolerance floor); large under big loads
                               on a nearly singular part (docs/solvers.md) */
    int n_act;              /* pairs with lambda_k != 0 or equality */
} gs_kkt;

/* Full certificate from x (n) and lambda (m). w_out (m, optional) gets
 * g - A'x. Returns GS_ERR_NOMEM only. */
gs_err gs_kkt_primal(const gs_problem *pb, const double *x, const double *lam, double *w_out,
                     gs_kkt *out, gs_error *err);

/* w = Q lam - p as every dual certificate computes it: Q lam over the
 * support of lam in pair order (gs_sparse_mul), then minus p. O(m |S|). */
void gs_kkt_residual(const gs_precomp *pc, const double *p, const double *lam, double *w);

/* Does d (m) prove that no x has A'x <= g (a'_k x = g_k on equality pairs)?
 * Farkas: d finite, d >= 0 on inequality pairs, A d = 0 to the dependence
 * test of a pair on a set (its Schur complement below dep_tol Q_jj):
 * ||A d||_{K^-1} = sqrt(d'Qd) at most 2 sqrt(dep_tol) sum_i |d_i| sqrt(Q_ii),
 * and g'd below -tol_w sum_i |d_i| (the gaps contradict by more than the
 * violation each pair may keep). 1 if so. work: m. O(m |support of d|). */
int gs_kkt_farkas(const gs_problem *pb, const double *d, double dep_tol, double tol_w,
                  double *work);

/* Dual certificate from lambda (m). w_out (m, optional) gets Q lambda - p. */
gs_err gs_kkt_dual(const gs_problem *pb, const double *lam, double *w_out, gs_kkt *out,
                   gs_error *err);

/* The dual certificate from precomputed dual data p (m) and s of the problem
 * (gs_problem_dual_data), without allocation: for the solvers' hot path.
 * w (m) receives Q lam - p. */
void gs_kkt_dual_p(const gs_problem *pb, const double *p, double s, const double *lam, double *w,
                   gs_kkt *out);
/* gs_kkt_dual_p from w_lam (m) = Q lam - p already made at exactly this lam
 * by one full product (a solver's last residual refresh, not an update):
 * copied to w, the measures and objectives from it. O(m). */
void gs_kkt_dual_w(const gs_problem *pb, const double *p, double s, const double *lam,
                   const double *w_lam, double *w, gs_kkt *out);

/* The residual gaps' accuracy the certificate settles for when the rounding
 * of p allows no better than tol, relative to max(1, ||g||): 1e-8 mm on the
 * generated joints, a tenth of the 1e-7 mm to which solvers must agree. An
 * FE model whose parts move 1e5 mm under the fastener loads (far-field
 * supports, cond(K) 1e10) has w_floor 1.5e-9 mm, above tol = 1e-10 but an
 * answer right to it (its sparse and condensed forms agree to 3.4e-10 mm);
 * a part singular to 1e-10 under 500 N has 1e-3 mm, answers that are off. */
#define GS_KKT_W_FLOOR_MAX 1e-8

/* Pass/fail at relative tolerance tol: w_floor <= max(tol, GS_KKT_W_FLOOR_MAX)
 * max(1,||g||) (the residual gaps are known to the accuracy asked, or to
 * 1e-8 when the model's scale allows no better), primal_infeas <= tol max(1,||g||),
 * dual_infeas <= tol max(1,||lambda||), complementarity <= tol max(1,||g||)
 * max(1,||lambda||), stationarity <= tol. */
int gs_kkt_pass(const gs_kkt *k, double tol);

#endif
