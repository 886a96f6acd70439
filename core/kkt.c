/* kkt.c -- KKT certificates of a candidate solution (see kkt.h). */
#include "kkt.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

/* Residual-gap measures shared by both certificates. O(m). The running
 * maxima live in locals: through k they would be loads and stores in every
 * iteration, since k's doubles may alias lam and w (3% of a warm solve
 * at 10% on the lap joint, 1% at 50%, the same values). */
static void measure_w(const gs_problem *pb, const double *lam, const double *w, gs_kkt *k)
{
    const int m = pb->pc->m;
    const double *g = pb->g;
    double norm_g = k->norm_g, norm_lam = k->norm_lam, primal = k->primal_infeas,
           dual = k->dual_infeas, comp = k->complementarity;
    int n_act = 0;
    double nonfinite = 0.0; /* NaN once a w or lambda is not finite (the maxima skip NaN) */
    for (int i = 0; i < m; i++) {
        nonfinite += 0.0 * w[i] + 0.0 * lam[i];
        const double ag = fabs(g[i]), al = fabs(lam[i]);
        norm_g = ag > norm_g ? ag : norm_g;
        norm_lam = al > norm_lam ? al : norm_lam;
        if (gs_problem_is_eq(pb, i)) {
            n_act++;
            primal = fabs(w[i]) > primal ? fabs(w[i]) : primal;
            continue;
        }
        n_act += lam[i] != 0.0;
        primal = -w[i] > primal ? -w[i] : primal;
        dual = -lam[i] > dual ? -lam[i] : dual;
        const double c = fabs(lam[i] * w[i]);
        comp = c > comp ? c : comp;
    }
    if (isnan(nonfinite)) /* no certificate for a result that is not a number */
        primal = dual = comp = INFINITY;
    k->norm_g = norm_g;
    k->norm_lam = norm_lam;
    k->primal_infeas = primal;
    k->dual_infeas = dual;
    k->complementarity = comp;
    k->n_act = n_act;
}

/* w = Q lam - p over the support of lambda and the dual objective
 * -(1/2 lam'Q lam - p'lam + s). O(m |S|). */
/* w = Q lam over the support of lam, in pair order. O(m |S|). */
static void q_lam(const gs_precomp *pc, const double *lam, double *w)
{
    memset(w, 0, (size_t)pc->m * sizeof *w);
    gs_sparse_mul(pc->m, pc->Q, (size_t)pc->m, lam, pc->m, w);
}

void gs_kkt_residual(const gs_precomp *pc, const double *p, const double *lam, double *w)
{
    q_lam(pc, lam, w);
    for (int i = 0; i < pc->m; i++)
        w[i] -= p[i];
}

int gs_kkt_farkas(const gs_problem *pb, const double *d, double dep_tol, double tol_w,
                  double *work)
{
    const gs_precomp *pc = pb->pc;
    const int m = pc->m;
    double gd = 0.0, l1 = 0.0, scale = 0.0;
    memset(work, 0, (size_t)m * sizeof *work);
    for (int i = 0; i < m; i++) {
        if (d[i] == 0.0)
            continue;
        if (!isfinite(d[i]) || (d[i] < 0.0 && !gs_problem_is_eq(pb, i)))
            return 0;
        gd += pb->g[i] * d[i];
        l1 += fabs(d[i]);
        scale += fabs(d[i]) * sqrt(pc->qdiag[i]);
        cblas_daxpy(m, d[i], pc->Q + (size_t)i * (size_t)m, 1, work, 1); /* Q[:, i] d_i */
    }
    const double dqd = cblas_ddot(m, d, 1, work, 1);
    return l1 > 0.0 && sqrt(fmax(dqd, 0.0)) <= 2.0 * sqrt(dep_tol) * scale && gd < -tol_w * l1;
}

static double dual_objective(const gs_precomp *pc, const double *p, double s, const double *lam,
                             double *w)
{
    const int m = pc->m;
    q_lam(pc, lam, w);
    double quad = cblas_ddot(m, lam, 1, w, 1), lin = cblas_ddot(m, p, 1, lam, 1);
    for (int i = 0; i < m; i++)
        w[i] -= p[i];
    return -(0.5 * quad - lin + s);
}

/* 64 eps max|p_i| (gs_kkt.w_floor). O(m). */
static double w_floor(const double *p, int m)
{
    double pmax = 0.0;
    for (int i = 0; i < m; i++)
        pmax = fabs(p[i]) > pmax ? fabs(p[i]) : pmax;
    return 64.0 * DBL_EPSILON * pmax;
}

/* Dual side with its own dual data (allocates p). */
static gs_err dual_side(const gs_problem *pb, const double *lam, double *w, double *obj_dual,
                        double *floor_w, gs_error *err)
{
    const int m = pb->pc->m;
    double *p = malloc((size_t)m * sizeof *p), *work = malloc((size_t)m * sizeof *work);
    if (!p || !work) {
        free(p);
        free(work);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the certificate");
    }
    double s = 0.0;
    gs_problem_dual_data(pb, p, &s, work);
    *obj_dual = dual_objective(pb->pc, p, s, lam, w);
    *floor_w = w_floor(p, m);
    free(p);
    free(work);
    return GS_OK;
}

/* The residual-gap measures of (lam, w) and the primal objective and gap
 * from out->obj_dual already set; lw = lam'w. O(m). */
static void dual_measures(const gs_problem *pb, const double *lam, const double *w, double lw,
                          gs_kkt *out)
{
    measure_w(pb, lam, w, out);
    out->obj_primal = out->obj_dual + lw;
    out->gap = out->obj_primal - out->obj_dual;
}

void gs_kkt_dual_p(const gs_problem *pb, const double *p, double s, const double *lam, double *w,
                   gs_kkt *out)
{
    memset(out, 0, sizeof *out);
    out->obj_dual = dual_objective(pb->pc, p, s, lam, w);
    out->w_floor = w_floor(p, pb->pc->m);
    dual_measures(pb, lam, w, cblas_ddot(pb->pc->m, lam, 1, w, 1), out);
}

void gs_kkt_dual_w(const gs_problem *pb, const double *p, double s, const double *lam,
                   const double *w_lam, double *w, gs_kkt *out)
{
    const int m = pb->pc->m;
    memset(out, 0, sizeof *out);
    if (w != w_lam)
        memcpy(w, w_lam, (size_t)m * sizeof *w);
    /* lam'Q lam = lam'w + lam'p: the dual objective of dual_objective */
    const double lw = cblas_ddot(m, lam, 1, w, 1), lp = cblas_ddot(m, p, 1, lam, 1);
    out->obj_dual = -(0.5 * (lw + lp) - lp + s);
    out->w_floor = w_floor(p, m);
    dual_measures(pb, lam, w, lw, out);
}

gs_err gs_kkt_dual(const gs_problem *pb, const double *lam, double *w_out, gs_kkt *out,
                   gs_error *err)
{
    memset(out, 0, sizeof *out);
    const int m = pb->pc->m;
    double *w = w_out ? w_out : malloc((size_t)m * sizeof *w);
    if (!w)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the certificate");
    gs_err rc = dual_side(pb, lam, w, &out->obj_dual, &out->w_floor, err);
    if (rc == GS_OK)
        dual_measures(pb, lam, w, cblas_ddot(m, lam, 1, w, 1), out);
    if (!w_out)
        free(w);
    return rc;
}

gs_err gs_kkt_primal(const gs_problem *pb, const double *x, const double *lam, double *w_out,
                     gs_kkt *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    out->primal = 1;
    const gs_precomp *pc = pb->pc;
    const gs_model *mdl = pc->mdl;
    const int n = pc->n, m = pc->m;
    double *f = malloc((size_t)n * sizeof *f), *kx = malloc((size_t)n * sizeof *kx);
    double *al = calloc((size_t)n, sizeof *al), *w = malloc((size_t)m * sizeof *w);
    double *wd = malloc((size_t)m * sizeof *wd);
    gs_err rc = GS_OK;
    if (!f || !kx || !al || !w || !wd) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the certificate");
        goto done;
    }
    gs_problem_load_vector(pb, f);
    gs_model_A_add(mdl, 1.0, lam, al);
    /* Kx part by part with the original (unfactored) K: O(sum n_b^2) dense,
     * O(nnz) sparse */
    gs_model_K_mul(mdl, x, kx);
    double rmax = 0.0, fnrm = 0.0, amax = 0.0;
    for (int i = 0; i < n; i++) {
        double r = kx[i] - f[i] + al[i];
        rmax = fmax(rmax, fabs(r));
        fnrm = fmax(fnrm, fabs(f[i]));
        amax = fmax(amax, fabs(al[i]));
    }
    out->stationarity = (fnrm + amax) > 0.0 ? rmax / (fnrm + amax) : rmax;
    out->obj_primal = 0.5 * cblas_ddot(n, x, 1, kx, 1) - cblas_ddot(n, f, 1, x, 1);
    /* w = g - A'x from x itself */
    gs_model_At(mdl, x, w);
    for (int i = 0; i < m; i++)
        w[i] = pb->g[i] - w[i];
    measure_w(pb, lam, w, out);
    if ((rc = dual_side(pb, lam, wd, &out->obj_dual, &out->w_floor, err)) != GS_OK)
        goto done;
    out->gap = out->obj_primal - out->obj_dual;
    if (w_out)
        memcpy(w_out, w, (size_t)m * sizeof *w);
done:
    free(f);
    free(kx);
    free(al);
    free(w);
    free(wd);
    return rc;
}

int gs_kkt_pass(const gs_kkt *k, double tol)
{
    double sg = fmax(1.0, k->norm_g), sl = fmax(1.0, k->norm_lam);
    return k->w_floor <= fmax(tol, GS_KKT_W_FLOOR_MAX) * sg && k->primal_infeas <= tol * sg &&
           k->dual_infeas <= tol * sl &&
           k->complementarity <= tol * sg * sl && k->stationarity <= tol;
}
