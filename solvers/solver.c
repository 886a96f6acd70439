/*
 * solver.c -- the generic solve layer: option handling, method dispatch,
 * per-problem dual data, the residual gaps and the certificate, timing.
 * Methods live in their own files behind gs_method_ops (solver_impl.h).
 */
#include "solver_impl.h"

#include <cblas.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cset.h"
#include "linalg.h"

const gs_method_ops *const gs_methods[GS_METHOD__COUNT] = {
    [GS_METHOD_GI] = &gs_method_gi,
    [GS_METHOD_LEMKE] = &gs_method_lemke,
    [GS_METHOD_REF] = &gs_method_ref,
    [GS_METHOD_NPM] = &gs_method_npm,
    [GS_METHOD_IPM] = &gs_method_ipm,
};

static const char *const method_names[GS_METHOD__COUNT] = {
    [GS_METHOD_AUTO] = "auto", [GS_METHOD_GI] = "gi",   [GS_METHOD_LEMKE] = "lemke",
    [GS_METHOD_NPM] = "npm",   [GS_METHOD_IPM] = "ipm", [GS_METHOD_REF] = "ref",
};
static const char *const form_names[GS_FORM__COUNT] = {
    [GS_FORM_DEFAULT] = "default", [GS_FORM_DUAL] = "dual",
    [GS_FORM_RELATIVE] = "relative", [GS_FORM_PRIMAL] = "primal",
};

int gs_method_needs_lq(gs_method m, gs_form f)
{
    switch (m) {
    case GS_METHOD_GI:
        return f == GS_FORM_DUAL; /* the relative form takes J from Q_CC, the primal from K */
    case GS_METHOD_NPM:
        return 1;
    case GS_METHOD_IPM:
        return f != GS_FORM_DUAL; /* the dual form factors its working set's Q_SS */
    default:
        return 0;
    }
}

int gs_method_needs_part_factors(gs_method m, gs_form f)
{
    if (m < 0 || m >= GS_METHOD__COUNT || m == GS_METHOD_AUTO || !gs_methods[m])
        return 0;
    return (f == GS_FORM_DEFAULT ? gs_methods[m]->default_form : f) == GS_FORM_PRIMAL;
}

int gs_solve_reads_k(const gs_solve_opts *opts)
{
    return gs_method_needs_part_factors(opts->method, opts->form) || opts->primal_cert;
}

const char *gs_method_name(gs_method m)
{
    return (m >= 0 && m < GS_METHOD__COUNT) ? method_names[m] : "unknown";
}

const char *gs_form_name(gs_form f)
{
    return (f >= 0 && f < GS_FORM__COUNT) ? form_names[f] : "unknown";
}

int gs_method_parse(const char *s, gs_method *m)
{
    for (int i = 0; i < GS_METHOD__COUNT; i++)
        if (s && !strcmp(s, method_names[i])) {
            *m = (gs_method)i;
            return 0;
        }
    return -1;
}

int gs_form_parse(const char *s, gs_form *f)
{
    for (int i = 0; i < GS_FORM__COUNT; i++)
        if (s && !strcmp(s, form_names[i])) {
            *f = (gs_form)i;
            return 0;
        }
    return -1;
}

static const char *const npm_linear_names[] = {"combined", "chol", "cg"};
static const char *const linesearch_names[] = {"exact", "golden", "armijo"};
static const char *const ipm_linear_names[] = {"mixed", "split", "jacobi", "direct"};
static const char *const ipm_start_names[] = {"auto", "feasible", "infeasible"};
#define N_NAMES(t) ((int)(sizeof(t) / sizeof(t[0])))

static const char *name_of(int v, const char *const *names, int n)
{
    return (v >= 0 && v < n) ? names[v] : "unknown";
}

static int index_of(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

const char *gs_npm_linear_name(gs_npm_linear v)
{
    return name_of((int)v, npm_linear_names, N_NAMES(npm_linear_names));
}
const char *gs_linesearch_name(gs_linesearch v)
{
    return name_of((int)v, linesearch_names, N_NAMES(linesearch_names));
}
const char *gs_ipm_linear_name(gs_ipm_linear v)
{
    return name_of((int)v, ipm_linear_names, N_NAMES(ipm_linear_names));
}
const char *gs_ipm_start_name(gs_ipm_start v)
{
    return name_of((int)v, ipm_start_names, N_NAMES(ipm_start_names));
}

int gs_npm_linear_parse(const char *s, gs_npm_linear *v)
{
    int i = index_of(s, npm_linear_names, N_NAMES(npm_linear_names));
    if (i >= 0)
        *v = (gs_npm_linear)i;
    return i >= 0 ? 0 : -1;
}
int gs_linesearch_parse(const char *s, gs_linesearch *v)
{
    int i = index_of(s, linesearch_names, N_NAMES(linesearch_names));
    if (i >= 0)
        *v = (gs_linesearch)i;
    return i >= 0 ? 0 : -1;
}
int gs_ipm_linear_parse(const char *s, gs_ipm_linear *v)
{
    int i = index_of(s, ipm_linear_names, N_NAMES(ipm_linear_names));
    if (i >= 0)
        *v = (gs_ipm_linear)i;
    return i >= 0 ? 0 : -1;
}
int gs_ipm_start_parse(const char *s, gs_ipm_start *v)
{
    int i = index_of(s, ipm_start_names, N_NAMES(ipm_start_names));
    if (i >= 0)
        *v = (gs_ipm_start)i;
    return i >= 0 ? 0 : -1;
}

/* For option checks, auto stands for what it always has: GI (relative). */
static gs_method resolve_method(gs_method m)
{
    return m == GS_METHOD_AUTO ? GS_METHOD_GI : m;
}

int gs_method_supports(gs_method m, gs_form f)
{
    if (m < 0 || m >= GS_METHOD__COUNT || f < 0 || f >= GS_FORM__COUNT)
        return 0;
    if (m == GS_METHOD_AUTO) /* auto picks the formulation too */
        return f == GS_FORM_DEFAULT;
    const gs_method_ops *ops = gs_methods[resolve_method(m)];
    if (!ops)
        return 0;
    return f == GS_FORM_DEFAULT || (ops->forms >> f & 1u);
}

void gs_solve_default_opts(gs_solve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = GS_METHOD_AUTO;
    o->form = GS_FORM_DEFAULT;
    o->tol = 1e-10;
    o->fasteners_first = 1;
}

gs_err gs_solve_validate_opts(const gs_solve_opts *o, gs_error *err)
{
    if (o->method < 0 || o->method >= GS_METHOD__COUNT)
        return gs_errorf(err, GS_ERR_INVALID, "method", "unknown method %d", (int)o->method);
    if (!gs_methods[resolve_method(o->method)])
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "method", "method '%s' is not available",
                         gs_method_name(o->method));
    if (o->form < 0 || o->form >= GS_FORM__COUNT)
        return gs_errorf(err, GS_ERR_INVALID, "form", "unknown formulation %d", (int)o->form);
    if (!gs_method_supports(o->method, o->form))
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "form",
                         o->method == GS_METHOD_AUTO
                             ? "method '%s' picks the formulation itself: leave form at "
                               "'default' (got %s)"
                             : "method '%s' does not support the %s formulation",
                         gs_method_name(o->method), gs_form_name(o->form));
    if (!(o->tol > 0.0 && o->tol < 1.0))
        return gs_errorf(err, GS_ERR_INVALID, "tol", "tolerance must be in (0, 1), got %g", o->tol);
    if (o->max_iter < 0)
        return gs_errorf(err, GS_ERR_INVALID, "max_iter", "must be >= 0, got %d", o->max_iter);
    if ((unsigned)o->npm_linear > GS_NPM_LIN_CG)
        return gs_errorf(err, GS_ERR_INVALID, "npm_linear", "unknown value %d", (int)o->npm_linear);
    if ((unsigned)o->linesearch > GS_LS_ARMIJO)
        return gs_errorf(err, GS_ERR_INVALID, "linesearch", "unknown value %d", (int)o->linesearch);
    if ((unsigned)o->ipm_linear > GS_IPM_DIRECT)
        return gs_errorf(err, GS_ERR_INVALID, "ipm_linear", "unknown value %d", (int)o->ipm_linear);
    if ((unsigned)o->ipm_start > GS_IPM_START_INFEASIBLE)
        return gs_errorf(err, GS_ERR_INVALID, "ipm_start", "unknown value %d", (int)o->ipm_start);
    if (o->warm && (o->warm->n_act < 0 || (o->warm->n_act > 0 && !o->warm->act)))
        return gs_errorf(err, GS_ERR_INVALID, "warm_start", "malformed warm start");
    return GS_OK;
}

gs_solver *gs_solver_new(const gs_precomp *pc, gs_error *err)
{
    gs_solver *s = calloc(1, sizeof *s);
    if (!s)
        goto nomem;
    s->pc = pc;
    s->m = pc->m;
    s->n = pc->n;
    s->qdiag_max = gs_qdiag_max(pc);
    s->p = malloc((size_t)pc->m * sizeof *s->p);
    s->work = malloc(3 * (size_t)pc->m * sizeof *s->work);
    s->ul = malloc((size_t)pc->m * sizeof *s->ul);
    s->ul_load = malloc((size_t)pc->m * sizeof *s->ul_load);
    if (!s->p || !s->work || !s->ul || !s->ul_load)
        goto nomem;
    return s;
nomem:
    gs_solver_free(s);
    gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a solver workspace");
    return NULL;
}

void gs_solver_set_fcache(gs_solver *s, struct gs_fcache *fc)
{
    s->fcache = fc;
}

void gs_solver_free(gs_solver *s)
{
    if (!s)
        return;
    for (int i = 0; i < GS_METHOD__COUNT * GS_FORM__COUNT; i++)
        if (s->ws[i] && s->ws_free[i])
            s->ws_free[i](s->ws[i]);
    free(s->p);
    free(s->work);
    free(s->ul);
    free(s->ul_load);
    free(s);
}

void *gs_solver_ws(gs_solver *s, gs_method m, gs_form f, void *(*ctor)(gs_solver *),
                   void (*dtor)(void *), gs_error *err)
{
    int slot = (int)m * GS_FORM__COUNT + (int)f;
    if (!s->ws[slot]) {
        s->ws[slot] = ctor(s);
        s->ws_free[slot] = dtor;
        if (!s->ws[slot])
            gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the %s workspace", gs_method_name(m));
    }
    return s->ws[slot];
}

/* s->p and s->s of pb. The gaps of a cloud share their pattern's load:
 * u0 + Q load is made once per load (O(m nnz(load)), a product over the
 * loaded pairs' columns of Q), then p = ul - g, O(m) per gap, bitwise
 * gs_problem_dual_data's. */
static void dual_data(gs_solver *s, const gs_problem *pb)
{
    const size_t bytes = (size_t)s->m * sizeof(double);
    if (!pb->load) {
        gs_problem_dual_data(pb, s->p, &s->s, NULL);
        return;
    }
    if (!s->ul_valid || memcmp(s->ul_load, pb->load, bytes) != 0) {
        gs_problem_load_part(pb, s->ul, &s->ul_s, s->work);
        memcpy(s->ul_load, pb->load, bytes);
        s->ul_valid = 1;
    }
    for (int k = 0; k < s->m; k++)
        s->p[k] = s->ul[k] - pb->g[k];
    s->s = s->ul_s;
}

gs_err gs_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *opts, double *lam,
                double *w, double *x, gs_solve_info *info, gs_error *err)
{
    gs_solve_opts o;
    if (opts)
        o = *opts;
    else
        gs_solve_default_opts(&o);
    memset(info, 0, sizeof *info);
    info->status = GS_STATUS_NOT_RUN;
    gs_error_clear(err);
    if (pb->pc != s->pc)
        return gs_errorf(err, GS_ERR_INVALID, "assembly",
                         "the problem belongs to another precomputation than the solver");
    gs_err rc = gs_solve_validate_opts(&o, err);
    if (rc == GS_OK)
        rc = gs_problem_check(pb, err);
    if (rc != GS_OK)
        return rc;
    if (o.primal_cert && !x)
        return gs_errorf(err, GS_ERR_INVALID, "x", "the primal certificate needs an x buffer");
    const int m = s->m;
    if (o.warm)
        for (int c = 0; c < o.warm->n_act; c++)
            if (o.warm->act[c] < 0 || o.warm->act[c] >= m)
                return gs_errorf(err, GS_ERR_RANGE, "warm_start", "pair %d out of range [0, %d)",
                                 o.warm->act[c], m);
    double t0 = gs_now();
    dual_data(s, pb);
    int auto_cand = -1, auto_bin = 0, auto_explore = 0;
    if (o.method == GS_METHOD_AUTO) {
        gs_auto_choose(s, pb, &o.method, &o.form, &auto_cand, &auto_bin, &auto_explore);
        info->auto_chosen = 1;
        info->auto_explored = auto_explore;
    }
    const gs_method_ops *ops = gs_methods[o.method];
    if (o.form == GS_FORM_DEFAULT)
        o.form = ops->default_form;
    const gs_form form = o.form; /* resolved: o is what runs */
    info->method = o.method;
    info->form = form;
    if (gs_method_needs_lq(o.method, form) && !gs_precomp_has_lq(s->pc))
        return gs_errorf(err, GS_ERR_INVALID, "method",
                         "%s on the %s form needs L_Q, which this precomputation has not "
                         "computed yet", gs_method_name(o.method), gs_form_name(form));
    if (!gs_precomp_has_part_factors(s->pc)) {
        if (gs_method_needs_part_factors(o.method, form))
            return gs_errorf(err, GS_ERR_INVALID, "method",
                             "%s on the %s form solves with K, whose sparse parts this "
                             "precomputation has not factored", gs_method_name(o.method),
                             gs_form_name(form));
        if (o.want_x || o.primal_cert)
            return gs_errorf(err, GS_ERR_INVALID, "x",
                             "the displacements need the sparse parts' factors, which this "
                             "precomputation has not computed");
    }
    if (gs_model_dense_released(s->pc->mdl) && gs_solve_reads_k(&o))
        return gs_errorf(err, GS_ERR_INVALID, o.primal_cert ? "primal_cert" : "method",
                         "%s needs K itself, whose dense blocks this model has released "
                         "(gs_model_restore_dense)",
                         o.primal_cert ? "the primal certificate" : "the primal form");
    /* violation tolerance (mm): relative to the gaps, floored at the
     * round-off of w = Q lam - p (p can be large under fastener loads) */
    double gmax = 0.0, pmax = 0.0; /* finite: checked (g) and computed from finite data (p) */
    for (int i = 0; i < m; i++) {
        const double ag = fabs(pb->g[i]), ap = fabs(s->p[i]);
        gmax = ag > gmax ? ag : gmax;
        pmax = ap > pmax ? ap : pmax;
    }
    s->tol_w = fmax(o.tol * fmax(1.0, gmax), 64.0 * DBL_EPSILON * pmax);
    s->tol_lam = gs_zero_force(s->qdiag_max, s->tol_w);
    s->w_lam = NULL;
    const gs_status before = gs_solve_stop(&o, 0, INT_MAX); /* cancelled, or out of time */
    if (before != GS_STATUS_OPTIMAL) {
        memset(lam, 0, (size_t)m * sizeof *lam);
        info->status = before;
        auto_cand = -1; /* nothing measured */
    } else if ((rc = ops->solve(s, pb, &o, form, lam, info, err)) != GS_OK) {
        return rc;
    }
    /* a method's infeasible puts its proof d in lam: checked with GI's
     * dependence tolerance (gs_kkt_farkas) */
    if (info->status == GS_STATUS_INFEASIBLE &&
        !gs_kkt_farkas(pb, lam, GS_CSET_DEP_TOL, s->tol_w, s->work)) {
        memset(lam, 0, (size_t)m * sizeof *lam); /* not proved: no answer */
        info->status = GS_STATUS_NUMERICAL;
    }
    double *wv = w ? w : s->work;
    if (s->w_lam && info->status == GS_STATUS_OPTIMAL)
        gs_kkt_dual_w(pb, s->p, s->s, lam, s->w_lam, wv, &info->kkt); /* O(m) */
    else
        gs_kkt_dual_p(pb, s->p, s->s, lam, wv, &info->kkt); /* O(m |support|) */
    info->n_act = info->kkt.n_act;
    double t1 = gs_now();
    info->time = t1 - t0;
    if (auto_cand >= 0 && info->status != GS_STATUS_CANCELLED &&
        info->status != GS_STATUS_TIME_LIMIT) /* a cut-short time is no measurement */
        gs_auto_record(s, auto_cand, auto_bin, auto_explore, info->time);
    if (x && (o.want_x || o.primal_cert) && gs_problem_primal(pb, lam, x) != 0) {
        info->time_cert = gs_now() - t1;
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the displacements (sparse solve)");
    }
    if (o.primal_cert) {
        rc = gs_kkt_primal(pb, x, lam, NULL, &info->kkt, err);
        info->kkt.n_act = info->n_act;
    }
    if (info->status == GS_STATUS_OPTIMAL && !isfinite(info->kkt.primal_infeas))
        info->status = GS_STATUS_NUMERICAL; /* a NaN or Inf in lambda, w or x: no answer */
    info->time_cert = gs_now() - t1;
    return rc;
}
