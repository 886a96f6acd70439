/* cset.c -- contact set with an updated Cholesky factor of Q_CC (see cset.h). */
#include "cset.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"
#include "problem.h"

gs_err gs_cset_init(gs_cset *cs, const gs_precomp *pc, gs_error *err)
{
    memset(cs, 0, sizeof *cs);
    cs->pc = pc;
    cs->m = pc->m;
    cs->idx = malloc((size_t)cs->m * sizeof *cs->idx);
    cs->pos = malloc((size_t)cs->m * sizeof *cs->pos);
    cs->mark = calloc((size_t)cs->m, 1);
    cs->ym = malloc((size_t)cs->m * sizeof *cs->ym);
    if (!cs->idx || !cs->pos || !cs->mark || !cs->ym) {
        gs_cset_free(cs);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a contact set");
    }
    for (int i = 0; i < cs->m; i++)
        cs->pos[i] = -1;
    cs->f.max = cs->m;
    return gs_cset_reserve(cs, 64 < cs->m ? 64 : cs->m, err);
}

void gs_cset_free(gs_cset *cs)
{
    free(cs->idx);
    free(cs->pos);
    free(cs->mark);
    free(cs->ym);
    gs_cholup_free(&cs->f);
    free(cs->tmp);
    memset(cs, 0, sizeof *cs);
}

void gs_cset_clear(gs_cset *cs)
{
    gs_wlist_clear(cs->idx, cs->pos, cs->k);
    cs->k = 0;
    cs->f.k = 0;
    cs->updates = 0;
}

gs_err gs_cset_reserve(gs_cset *cs, int k_new, gs_error *err)
{
    if (k_new <= cs->cap)
        return GS_OK;
    gs_err rc = gs_cholup_reserve(&cs->f, k_new, err);
    if (rc != GS_OK)
        return rc;
    const int cap = cs->f.cap;
    double *tmp = malloc((size_t)cap * sizeof *tmp);
    if (!tmp)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a contact set of %d pairs", cap);
    free(cs->tmp);
    cs->tmp = tmp;
    cs->cap = cap;
    return GS_OK;
}

double gs_cset_schur(const gs_cset *cs, int j, double *l)
{
    const double *qj = cs->pc->Q + (size_t)j * cs->m;
    for (int c = 0; c < cs->k; c++)
        l[c] = qj[cs->idx[c]];
    return gs_cset_schur_col(cs, j, l);
}

double gs_cset_schur_col(const gs_cset *cs, int j, double *l)
{
    const double qjj = cs->pc->Q[(size_t)j * cs->m + j];
    if (cs->k == 0)
        return qjj;
    gs_cholup_solve_L(&cs->f, l);
    return qjj - cblas_ddot(cs->k, l, 1, l, 1);
}

void gs_cset_append(gs_cset *cs, int j, const double *l, double s)
{
    const int k = cs->k;
    gs_cholup_append(&cs->f, l, sqrt(s));
    cs->idx[k] = j;
    cs->pos[j] = k;
    cs->k = k + 1;
    cs->updates++;
}

void gs_cset_remove(gs_cset *cs, int c)
{
    gs_cset_remove_carry(cs, c, NULL);
}

void gs_cset_remove_carry(gs_cset *cs, int c, double *l)
{
    gs_cset_remove_carry_n(cs, c, l, 0, l ? 1 : 0);
}

void gs_cset_remove_carry_n(gs_cset *cs, int c, double *V, size_t ldv, int n)
{
    const int k = cs->k;
    gs_cholup_remove_carry_n(&cs->f, c, V, ldv, n);
    gs_wlist_remove(cs->idx, cs->pos, k, c);
    cs->k = k - 1;
    cs->updates++;
}

void gs_cset_solve_L(const gs_cset *cs, double *z)
{
    gs_cholup_solve_L(&cs->f, z);
}

void gs_cset_solve_Lt(const gs_cset *cs, double *z)
{
    gs_cholup_solve_Lt(&cs->f, z);
}

void gs_cset_solve(const gs_cset *cs, double *z)
{
    gs_cset_solve_L(cs, z);
    gs_cset_solve_Lt(cs, z);
}

void gs_cset_qmul(const gs_cset *cs, const double *v, double *y)
{
    gs_cols_mul(cs->m, cs->pc->Q, (size_t)cs->m, cs->idx, v, cs->k, y);
}

void gs_cset_residual(const gs_cset *cs, const double *v, const double *p, double *w)
{
    const int m = cs->m;
    if (p)
        for (int i = 0; i < m; i++)
            w[i] = -p[i];
    else
        memset(w, 0, (size_t)m * sizeof *w);
    gs_cset_qmul(cs, v, w);
}

/* Members and positions of a factor just built or loaded in list order. */
static void install_list(gs_cset *cs, const int *list, int k)
{
    for (int c = 0; c < k; c++) {
        cs->idx[c] = list[c];
        cs->pos[list[c]] = c;
    }
    cs->k = cs->f.k = k;
    cs->updates = 0;
}

/* gs_cset_build on a cleared set with room for k (gs_cset_reserve). */
static gs_err build_reserved(gs_cset *cs, const int *list, int k, gs_error *err)
{
    const int m = cs->m, ld = cs->f.cap;
    const double *Q = cs->pc->Q;
    double *L = cs->f.L;
    for (int b = 0; b < k; b++) {
        const double *qb = Q + (size_t)list[b] * m;
        for (int a = b; a < k; a++)
            L[a + (size_t)b * ld] = qb[list[a]];
    }
    gs_error e2;
    if (k && gs_chol(L, k, ld, "Q_CC", &e2) != GS_OK)
        return gs_errorf(err, GS_ERR_NOT_SPD, "warm_start", "Q restricted to the set is singular");
    for (int c = 0; c < k; c++) {
        double d = L[c + (size_t)c * ld];
        if (d * d < GS_CSET_DEP_TOL * Q[(size_t)list[c] * m + list[c]])
            return gs_errorf(err, GS_ERR_NOT_SPD, "warm_start",
                             "pair %d is numerically dependent on the set", list[c]);
    }
    install_list(cs, list, k);
    return GS_OK;
}

gs_err gs_cset_build(gs_cset *cs, const int *list, int k, gs_error *err)
{
    gs_cset_clear(cs);
    gs_err rc = gs_cset_reserve(cs, k, err);
    return rc != GS_OK ? rc : build_reserved(cs, list, k, err);
}

/* gs_cset_build through the factor cache fc (fcache.h; NULL: none): a
 * cached factor of the list is copied, a new one is stored. */
static gs_err build_cached(gs_cset *cs, const int *list, int k, gs_fcache *fc, gs_error *err)
{
    if (!fc || k < GS_FCACHE_MIN_K)
        return gs_cset_build(cs, list, k, err);
    gs_cset_clear(cs);
    gs_err rc = gs_cset_reserve(cs, k, err);
    if (rc != GS_OK)
        return rc;
    if (gs_fcache_get(fc, list, k, cs->f.L, cs->f.cap)) {
        install_list(cs, list, k);
        return GS_OK;
    }
    rc = build_reserved(cs, list, k, err);
    if (rc == GS_OK)
        gs_fcache_put(fc, list, k, cs->f.L, cs->f.cap);
    return rc;
}

gs_err gs_cset_travel(gs_cset *cs, const int *list, int k, gs_fcache *fc, gs_error *err)
{
    for (int a = 0; a < k; a++)
        cs->mark[list[a]] = 1;
    /* the cost of each route, in flops (cset.h) */
    double inc = 0.0;
    int kept = 0, k0 = cs->k;
    for (int c = 0; c < k0; c++) {
        if (cs->mark[cs->idx[c]])
            kept++;
        else
            inc += (double)(k0 - c) * (k0 - c);
    }
    const int adds = k - kept, removals = k0 - kept;
    inc += (double)adds * ((double)k * k + cs->m);
    const double fresh = (double)k * k * k / 3.0 + (double)cs->m * k;
    if (k0 == 0 || inc >= fresh || cs->updates + removals + adds > GS_CSET_FRESH(k)) {
        for (int a = 0; a < k; a++)
            cs->mark[list[a]] = 0;
        return build_cached(cs, list, k, fc, err);
    }
    for (int c = k0 - 1; c >= 0; c--)
        if (!cs->mark[cs->idx[c]])
            gs_cset_remove(cs, c);
    gs_err rc = gs_cset_reserve(cs, k, err);
    for (int a = 0; a < k && rc == GS_OK; a++) {
        int j = list[a];
        if (cs->pos[j] >= 0)
            continue;
        double sch = gs_cset_schur(cs, j, cs->tmp);
        if (!(sch > GS_CSET_DEP_TOL * cs->pc->qdiag[j])) { /* let the fresh build decide */
            for (int b = 0; b < k; b++)
                cs->mark[list[b]] = 0;
            return build_cached(cs, list, k, fc, err);
        }
        gs_cset_append(cs, j, cs->tmp, sch);
    }
    for (int a = 0; a < k; a++)
        cs->mark[list[a]] = 0;
    return rc;
}

double gs_qdiag_max(const gs_precomp *pc)
{
    double qmax = 0.0;
    for (int i = 0; i < pc->m; i++)
        qmax = fmax(qmax, pc->qdiag[i]);
    return qmax;
}

double gs_zero_force(double qdiag_max, double tol_w)
{
    return 0.5 * tol_w / fmax(qdiag_max, DBL_MIN);
}

int gs_zero_rule(int k, const int *idx, const double *lc, const gs_problem *pb, double tol_lam,
                 int *out)
{
    int worst = -1, n = 0;
    for (int c = 0; c < k; c++)
        if (!gs_problem_is_eq(pb, idx[c]) && (worst < 0 || lc[c] < lc[worst]))
            worst = c;
    if (worst < 0 || !(lc[worst] < tol_lam))
        return 0;
    if (lc[worst] <= -tol_lam) {
        out[0] = worst;
        return 1;
    }
    for (int c = k - 1; c >= 0; c--)
        if (!gs_problem_is_eq(pb, idx[c]) && lc[c] < tol_lam)
            out[n++] = c;
    return n;
}

/* Above k = m / GS_CSET_GATHER_DIV the residual on C comes from the full
 * product: the gather reads k entries scattered over each of the k columns,
 * which at that size touches nearly every cache line of the column anyway,
 * one load at a time, while the product streams the columns eight at a time.
 * Measured (one thread, random Q, C in random / increasing pair order): at
 * m = 2,603 the two are level at k = 200-300, the product 2.3-3.5x faster
 * at k = 935; at m = 4,840 level at k = 300-330, 1.9-3.8x faster at 935. */
#define GS_CSET_GATHER_DIV 14

/* r (k, position order) = p_C - Q_CC lc, each r_c summed in position order
 * (no BLAS: the same rounding on every CPU) from p_c: by a gather of the
 * rows of C in the members' columns, O(k^2) scattered loads, or, for large
 * k, as -(Q[:, C] lc - p)_C by gs_cset_residual (O(m k) streamed), whose
 * sums are the same operations in the same order: bitwise the same r. */
static void residual_on_set(const gs_cset *cs, const double *p, const double *lc, double *r)
{
    const int k = cs->k;
    const size_t m = (size_t)cs->m;
    if ((size_t)k * GS_CSET_GATHER_DIV > m) {
        gs_cset_residual(cs, lc, p, cs->ym);
        for (int c = 0; c < k; c++)
            r[c] = -cs->ym[cs->idx[c]];
        return;
    }
    for (int c = 0; c < k; c++)
        r[c] = p[cs->idx[c]];
    for (int c2 = 0; c2 < k; c2++) {
        const double *col = cs->pc->Q + m * (size_t)cs->idx[c2];
        const double v = lc[c2];
        for (int c = 0; c < k; c++)
            r[c] -= col[cs->idx[c]] * v;
    }
}

/* lc = Q_CC^-1 p_C by the factor alone. O(k^2). */
static void solve_set(const gs_cset *cs, const double *p, double *lc)
{
    for (int c = 0; c < cs->k; c++)
        lc[c] = p[cs->idx[c]];
    gs_cset_solve(cs, lc);
}

/* One step of iterative refinement of lc = Q_CC^-1 p_C. O(k^2). */
static void refine_set(const gs_cset *cs, const double *p, double *lc, double *r)
{
    residual_on_set(cs, p, lc, r);
    gs_cset_solve(cs, r);
    for (int c = 0; c < cs->k; c++)
        lc[c] += r[c];
}

void gs_cset_solve_refined(const gs_cset *cs, const double *p, double *lc, double *r, double *w)
{
    solve_set(cs, p, lc);
    refine_set(cs, p, lc, r);
    gs_cset_residual(cs, lc, p, w);
}

int gs_cset_prune(gs_cset *cs, const gs_problem *pb, const double *p, double *lc, int *list)
{
    for (int pass = 0; pass < GS_CSET_PRUNE_PASSES; pass++) {
        solve_set(cs, p, lc); /* signs for a heuristic: no refinement */
        int neg = 0, k2 = 0;
        for (int c = 0; c < cs->k; c++) {
            if (!gs_problem_is_eq(pb, cs->idx[c]) && lc[c] < 0.0)
                neg++;
            else
                list[k2++] = cs->idx[c];
        }
        if (neg <= GS_CSET_PRUNE_MIN)
            return 0;
        if (gs_cset_build(cs, list, k2, NULL) != GS_OK)
            return -1;
    }
    return 0;
}

/* A solve by the factor alone errs by about cond(Q_CC) eps max|lc|: a
 * multiplier below -GS_CSET_SURE_NEG max_c |lc_c| is negative in the
 * refined solve too while cond(Q_CC) stays far below 1 / (GS_CSET_SURE_NEG
 * eps) ~ 5e9. Measured on the final sets of the lap and sandwich joints:
 * cond_1(Q_CC) 7e4-6e6 (so the error is 2e-11 to 1e-9 relative), and the
 * factor's (max_c L_cc / min_c L_cc)^2, a lower bound of cond_2(Q_CC), is
 * 300-800 times smaller (870-9,500). That bound, times GS_CSET_SURE_COND
 * eps, raises the threshold for an ill-conditioned set (1 and more: every
 * decision refined, as before). */
#define GS_CSET_SURE_NEG 1e-6
#define GS_CSET_SURE_COND 1e6

/* Position of the most negative inequality multiplier when it is below
 * -tol_lam and negative beyond the doubt of an unrefined solve, or -1. O(k). */
static int surely_negative(const gs_cset *cs, const gs_problem *pb, const double *lc,
                           double tol_lam)
{
    int worst = -1;
    double big = 0.0, dmax = 0.0, dmin = INFINITY;
    const size_t ld = (size_t)cs->f.cap;
    for (int c = 0; c < cs->k; c++) {
        big = fmax(big, fabs(lc[c]));
        const double d = cs->f.L[(size_t)c * (ld + 1)];
        dmax = fmax(dmax, d);
        dmin = fmin(dmin, d);
        if (!gs_problem_is_eq(pb, cs->idx[c]) && (worst < 0 || lc[c] < lc[worst]))
            worst = c;
    }
    if (worst < 0 || !(dmin > 0.0))
        return -1;
    const double ratio = dmax / dmin,
                 doubt = fmax(GS_CSET_SURE_NEG, GS_CSET_SURE_COND * DBL_EPSILON * ratio * ratio);
    return lc[worst] < -fmax(tol_lam, doubt * big) ? worst : -1;
}

/* The settle's rounds; solved: lc already holds refined multipliers on C.
 * The zero rule removes the most negative member alone, and a polish's set
 * often holds a dozen or more: those negative beyond doubt leave on
 * multipliers solved by the factor alone (two triangular solves a round),
 * the refinement (a gather of Q_CC or a product with Q[:, C]) is made
 * only when the rule is to decide on the rest; the same members leave in
 * the same order unless two negatives are within rounding of each other. */
static int settle_rounds(gs_cset *cs, const gs_problem *pb, const double *p, double tol_lam,
                         double *lc, double *r, double *w, int *out, int solved)
{
    int removed = 0, refined = solved;
    if (!solved)
        solve_set(cs, p, lc);
    for (;;) {
        const int c = surely_negative(cs, pb, lc, tol_lam);
        if (c >= 0) {
            gs_cset_remove(cs, c);
            removed++;
            solve_set(cs, p, lc);
            refined = 0;
            continue;
        }
        if (!refined)
            refine_set(cs, p, lc, r);
        const int n = gs_zero_rule(cs->k, cs->idx, lc, pb, tol_lam, out);
        if (n == 0) {
            gs_cset_residual(cs, lc, p, w); /* the full w once, for the settled set */
            return removed;
        }
        for (int q = 0; q < n; q++) /* decreasing positions */
            gs_cset_remove(cs, out[q]);
        removed += n;
        solve_set(cs, p, lc);
        refined = 0;
    }
}

int gs_cset_settle(gs_cset *cs, const gs_problem *pb, const double *p, double tol_lam, double *lc,
                   double *r, double *w, int *out)
{
    return settle_rounds(cs, pb, p, tol_lam, lc, r, w, out, 0);
}

/* The residual on C, -w_C, is at the rounding level of its own
 * computation: max_c |w_c| <= GS_CSET_NOISE eps max_c (|p_c| + Q_cc |lc_c|),
 * the size of the two terms every r_c = p_c - sum Q_cc' lc_c' sums at least.
 * A refinement from such a residual corrects rounding. O(k). */
static int residual_is_rounding(const gs_cset *cs, const double *p, const double *lc,
                                const double *w)
{
    double rmax = 0.0, scale = 0.0;
    for (int c = 0; c < cs->k; c++) {
        const int i = cs->idx[c];
        rmax = fmax(rmax, fabs(w[i]));
        scale = fmax(scale, fabs(p[i]) + cs->pc->qdiag[i] * fabs(lc[c]));
    }
    return rmax <= GS_CSET_NOISE * DBL_EPSILON * scale;
}

int gs_cset_settle_lazy(gs_cset *cs, const gs_problem *pb, const double *p, double tol_lam,
                        double tol_w, double qdiag_max, double *lc, double *r, double *w,
                        int *out, int *w_current)
{
    const int k = cs->k;
    *w_current = 1; /* unless the refinement below moves lc without a product */
    if (residual_is_rounding(cs, p, lc, w) && gs_zero_rule(k, cs->idx, lc, pb, tol_lam, out) == 0)
        return 0;
    /* one step of iterative refinement from the caller's multipliers, whose
     * residual on C, p_C - Q_CC lc = -w_C, w already holds: no fresh solve
     * and no residual of its own (refine_set's) */
    double d1 = 0.0;
    for (int c = 0; c < k; c++)
        r[c] = -w[cs->idx[c]];
    gs_cset_solve(cs, r);
    for (int c = 0; c < k; c++) {
        lc[c] += r[c];
        d1 += fabs(r[c]);
    }
    if (gs_zero_rule(k, cs->idx, lc, pb, tol_lam, out) == 0) {
        double margin = INFINITY;
        for (int i = 0; i < cs->m; i++)
            if (cs->pos[i] < 0)
                margin = fmin(margin, w[i] + tol_w);
        /* |Q_ij| <= max_i Q_ii (Q is SPD): no w_i moves by more than
         * qdiag_max ||d||_1 */
        if (qdiag_max * d1 < margin) {
            *w_current = 0;
            return 0;
        }
    }
    return settle_rounds(cs, pb, p, tol_lam, lc, r, w, out, 1);
}
