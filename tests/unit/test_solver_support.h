/*
 * test_solver_support.h -- the scaffolding shared by the solver unit tests
 * (test_solvers_agree.c, test_gi_relative.c, test_gi_dual_primal.c,
 * test_lemke.c) and by the tests that only need a built model
 * (test_refsolve.c, test_kkt.c, test_precompute.c). It owns:
 *
 *   ts_build         validate (if not yet) + gs_precomp_build, checked;
 *   ts_opts          options for one method x formulation (want_x on);
 *   ts_solve         gs_solve checked to succeed and to run the requested
 *                    method/formulation; returns the status;
 *   ts_solve_ok      ts_solve + status optimal + KKT certificate at kkt_tol;
 *   ts_ref_solve_ok  the reference oracle, checked optimal;
 *   ts_fixture       a model (hand-made or generated: small or scaled, gap
 *                    cloud of ngaps vectors from a seed, fastener pattern of
 *                    a fraction) with its precomputation, a solver and
 *                    buffers; ts_fx_reference / ts_check_matches_ref: the
 *                    oracle's answer and x, w within TS_AGREE_MM of it;
 *   ts_max_diff, ts_contact_set;
 *   the exact hand-made cases of test_models.h for one variant:
 *   ts_check_exact_chain3 (the table ts_chain3: gaps, equality pair and the
 *   exact lam, x, w, n_act of each case) and ts_check_exact_two_springs,
 *   every value to 1e-14 (1e-13 where stated, exactly for a pair that never
 *   enters), KKT at TS_EXACT_KKT. test_solvers_agree.c runs them for every
 *   available variant; the method files keep only their method-specific
 *   checks on the same cases (iteration and pivot counts), solving them with
 *   ts_chain3_solve / ts_solve_ok.
 *
 * Include after gs_test.h and test_models.h. Everything is static inline, so
 * a test file pays only for what it uses. Failure messages of the helpers
 * start with ts_what (set it to name the case at hand; "" by default) and
 * the method/formulation.
 */
#ifndef GS_TEST_SOLVER_SUPPORT_H
#define GS_TEST_SOLVER_SUPPORT_H

#include <stdio.h>

#include "generator.h"
#include "refsolve.h"
#include "solver.h"

#define TS_AGREE_MM 1e-7  /* x and w against the oracle, mm */
#define TS_EXACT_KKT 1e-12 /* certificate on the exact hand-made cases */

/* Names the case at hand in the helpers' failure messages. */
static const char *ts_what __attribute__((unused)) = "";

/* |a - b| <= tol (NaN fails), the message prefixed by `what`. */
#define TS_NEAR(what, a, b, tol)                                                                  \
    do {                                                                                          \
        double ts_a_ = (double)(a), ts_b_ = (double)(b), ts_t_ = (double)(tol);                   \
        GS_CHECK_MSG(fabs(ts_a_ - ts_b_) <= ts_t_,                                                 \
                     "%s: %s ~ %s: %.17g vs %.17g (diff %.3g > tol %.3g)", what, #a, #b, ts_a_,   \
                     ts_b_, fabs(ts_a_ - ts_b_), ts_t_);                                          \
    } while (0)

#define TS_INT(what, a, b)                                                                        \
    do {                                                                                          \
        long long ts_a_ = (long long)(a), ts_b_ = (long long)(b);                                 \
        GS_CHECK_MSG(ts_a_ == ts_b_, "%s: %s == %s: %lld != %lld", what, #a, #b, ts_a_, ts_b_);   \
    } while (0)

/* flags: gs_precomp_build_ex's (GS_PRECOMP_DEFER_LQ for dependent pairs). */
static inline gs_precomp *ts_build_ex(gs_model *mdl, unsigned flags)
{
    gs_error e;
    if (!mdl->validated)
        GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build_ex(mdl, flags, &pc, &e), GS_OK);
    return pc;
}

static inline gs_precomp *ts_build(gs_model *mdl)
{
    return ts_build_ex(mdl, 0);
}

static inline gs_solve_opts ts_opts(gs_method method, gs_form form)
{
    gs_solve_opts o;
    gs_solve_default_opts(&o);
    o.method = method;
    o.form = form;
    o.want_x = 1;
    return o;
}

/* The formulation GS_FORM_DEFAULT runs on (solver.h's table); DEFAULT where
 * the test does not know it. */
static inline gs_form ts_default_form(gs_method m)
{
    switch (m) {
    case GS_METHOD_GI:
        return GS_FORM_RELATIVE;
    case GS_METHOD_LEMKE:
    case GS_METHOD_REF:
        return GS_FORM_DUAL;
    default:
        return GS_FORM_DEFAULT;
    }
}

/* Solves that finished with a crossover to GI (gs_solve_info.crossover),
 * by the method asked for, counted by ts_solve for the tests that report
 * them (ts_print_crossovers). */
static int ts_crossovers[GS_METHOD__COUNT];

static inline void ts_print_crossovers(void)
{
    int total = 0, shown = 0;
    for (int k = 0; k < GS_METHOD__COUNT; k++)
        total += ts_crossovers[k];
    printf("  crossovers to GI: %d", total);
    for (int k = 0; k < GS_METHOD__COUNT; k++)
        if (ts_crossovers[k])
            printf("%s%s %d", shown++ ? ", " : " (", gs_method_name((gs_method)k), ts_crossovers[k]);
    printf("%s\n", shown ? ")" : "");
}

/* gs_solve must succeed and run o's method on o's formulation (the method's
 * default for GS_FORM_DEFAULT). Returns the status. */
static inline gs_status ts_solve(gs_solver *sv, const gs_problem *pb, const gs_solve_opts *o,
                                 double *lam, double *w, double *x, gs_solve_info *info)
{
    gs_error e;
    const char *mn = gs_method_name(o->method), *fn = gs_form_name(o->form);
    gs_err rc = gs_solve(sv, pb, o, lam, w, x, info, &e);
    GS_CHECK_MSG(rc == GS_OK, "%s %s/%s: error %d at '%s': %s", ts_what, mn, fn, (int)rc, e.field,
                 e.msg);
    gs_form form = o->form == GS_FORM_DEFAULT ? ts_default_form(o->method) : o->form;
    if (o->method != GS_METHOD_AUTO)
        TS_INT(ts_what, info->method, o->method);
    if (form != GS_FORM_DEFAULT)
        TS_INT(ts_what, info->form, form);
    if (info->method >= 0 && info->method < GS_METHOD__COUNT)
        ts_crossovers[info->method] += info->crossover;
    return info->status;
}

/* ts_solve + status optimal + the KKT certificate passes at kkt_tol. */
static inline void ts_solve_ok(gs_solver *sv, const gs_problem *pb, const gs_solve_opts *o,
                               double *lam, double *w, double *x, gs_solve_info *info,
                               double kkt_tol)
{
    const char *mn = gs_method_name(o->method), *fn = gs_form_name(o->form);
    gs_status st = ts_solve(sv, pb, o, lam, w, x, info);
    GS_CHECK_MSG(st == GS_STATUS_OPTIMAL, "%s %s/%s: status %s", ts_what, mn, fn,
                 gs_status_name(st));
    GS_CHECK_MSG(gs_kkt_pass(&info->kkt, kkt_tol),
                 "%s %s/%s: certificate at %.0e: pinf %.3g dinf %.3g comp %.3g stat %.3g", ts_what,
                 mn, fn, kkt_tol, info->kkt.primal_infeas, info->kkt.dual_infeas,
                 info->kkt.complementarity, info->kkt.stationarity);
}

/* The oracle's answer to pb (status optimal). w may be NULL. */
static inline gs_ref_info ts_ref_solve_ok(const gs_problem *pb, double *lam, double *w)
{
    gs_ref_info ri;
    gs_error e;
    GS_CHECK_INT(gs_ref_solve(pb, NULL, lam, w, &ri, &e), GS_OK);
    GS_CHECK_MSG(ri.status == GS_STATUS_OPTIMAL, "%s oracle: status %s", ts_what,
                 gs_status_name(ri.status));
    return ri;
}

static inline double ts_max_diff(const double *a, const double *b, int n)
{
    double d = 0.0;
    for (int i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* The contact set of a solution: pairs with lam != 0, and equality pairs
 * (eq may be NULL). Returns its size; act holds m ints. */
static inline int ts_contact_set(const double *lam, const unsigned char *eq, int m, int *act)
{
    int k = 0;
    for (int i = 0; i < m; i++)
        if (lam[i] != 0.0 || (eq && eq[i]))
            act[k++] = i;
    return k;
}

/* ---- fixture ------------------------------------------------------------ */

/* A model with its precomputation, a solver and buffers. */
typedef struct {
    gs_model *mdl;
    gs_precomp *pc;
    gs_solver *sv;
    int m, n, ngaps;
    double *G;            /* ngaps x m gap vectors (row r at G + r m) */
    double *load;         /* m: pair loads of the fastener pattern inst */
    double *lam, *w, *x;  /* m, m, n: a solution */
    double *lr, *wr, *xr; /* m, m, n: the oracle's (ts_fx_reference) */
    unsigned char *inst;  /* n_fast + 1: installed fasteners */
    unsigned char *eq;    /* m: equality-fastened pairs */
    int *act;             /* m: a contact set (warm starts) */
} ts_fixture;

/* Takes mdl (freed by ts_fx_free): builds it (flags: ts_build_ex), makes a
 * solver and zeroed buffers for ngaps (>= 1) gap vectors. */
static inline void ts_fx_open_ex(ts_fixture *f, gs_model *mdl, int ngaps, unsigned flags)
{
    memset(f, 0, sizeof *f);
    f->mdl = mdl;
    f->pc = ts_build_ex(mdl, flags);
    f->m = mdl->m;
    f->n = mdl->n;
    f->ngaps = ngaps;
    const size_t m = (size_t)f->m, n = (size_t)f->n;
    f->G = calloc((size_t)ngaps * m, sizeof *f->G);
    f->load = calloc(m, sizeof *f->load);
    f->lam = calloc(m, sizeof *f->lam);
    f->w = calloc(m, sizeof *f->w);
    f->x = calloc(n, sizeof *f->x);
    f->lr = calloc(m, sizeof *f->lr);
    f->wr = calloc(m, sizeof *f->wr);
    f->xr = calloc(n, sizeof *f->xr);
    f->inst = calloc((size_t)mdl->n_fast + 1, 1);
    f->eq = calloc(m, 1);
    f->act = calloc(m, sizeof *f->act);
    gs_error e;
    f->sv = gs_solver_new(f->pc, &e);
    GS_CHECK(f->sv != NULL);
}

static inline void ts_fx_open(ts_fixture *f, gs_model *mdl, int ngaps)
{
    ts_fx_open_ex(f, mdl, ngaps, 0);
}

/* Install round(fraction * n_fast) fasteners (gs_gen_pattern) and set load. */
static inline void ts_fx_pattern(ts_fixture *f, double fraction)
{
    gs_error e;
    GS_CHECK_INT(gs_gen_pattern(f->mdl, fraction, f->inst, &e), GS_OK);
    gs_model_pattern_load(f->mdl, f->inst, f->load);
}

/* A generated assembly: the small model (scale <= 0) or the paper-size one
 * refined by scale (no condition estimates), ngaps gap vectors of the cloud
 * from seed, the pattern of `fraction`. */
static inline void ts_fx_generate(ts_fixture *f, gs_gen_kind kind, double scale, int ngaps,
                                  unsigned long long seed, double fraction)
{
    gs_gen_params gp;
    if (scale > 0) {
        gs_gen_default_params(kind, &gp);
        gs_gen_params_scale(&gp, scale);
        gp.compute_cond = 0;
    } else {
        gs_gen_small_params(kind, &gp);
    }
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &mdl, NULL, &e), GS_OK);
    ts_fx_open(f, mdl, ngaps);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, ngaps, seed, NULL, f->G, &e), GS_OK);
    ts_fx_pattern(f, fraction);
}

static inline void ts_fx_free(ts_fixture *f)
{
    gs_solver_free(f->sv);
    gs_precomp_free(f->pc);
    gs_model_free(f->mdl);
    free(f->G);
    free(f->load);
    free(f->lam);
    free(f->w);
    free(f->x);
    free(f->lr);
    free(f->wr);
    free(f->xr);
    free(f->inst);
    free(f->eq);
    free(f->act);
    memset(f, 0, sizeof *f);
}

/* Gap vector r with the pattern's load (no equality pairs). */
static inline gs_problem ts_fx_problem(const ts_fixture *f, int r)
{
    return (gs_problem){.pc = f->pc, .g = f->G + (size_t)r * f->m, .load = f->load};
}

/* Permanently fasten (eq) the first `count` candidates not installed;
 * returns how many were found. */
static inline int ts_fx_fasten_uninstalled(ts_fixture *f, int count)
{
    int c = 0;
    for (int i = 0; i < f->mdl->n_fast && c < count; i++)
        if (!f->inst[i]) {
            f->eq[f->mdl->fast[i].pair] = 1;
            c++;
        }
    return c;
}

/* The oracle's answer to pb in lr, wr and xr. */
static inline gs_ref_info ts_fx_reference(ts_fixture *f, const gs_problem *pb)
{
    gs_ref_info ri = ts_ref_solve_ok(pb, f->lr, f->wr);
    gs_problem_primal(pb, f->lr, f->xr);
    return ri;
}

/* x and w (the fixture's solution) within TS_AGREE_MM of xr and wr. */
static inline void ts_check_matches_ref(const ts_fixture *f, const char *what)
{
    double dx = ts_max_diff(f->x, f->xr, f->n), dw = ts_max_diff(f->w, f->wr, f->m);
    GS_CHECK_MSG(dx <= TS_AGREE_MM, "%s: max |x - x_ref| = %.3g mm", what, dx);
    GS_CHECK_MSG(dw <= TS_AGREE_MM, "%s: max |w - w_ref| = %.3g mm", what, dw);
}

/* ---- exact hand-made cases -------------------------------------------- */

/* The exact cases of tm_chain3 (Q = K^-1, u0 = (1.5, 2, 1.5)). */
typedef enum {
    TS_C3_TWO_CONTACTS, /* g = (1, 1.7, 1): pairs 0 and 2 in contact */
    TS_C3_TIES,         /* g = (1, 1, 1): degenerate, pairs 0 and 2 touch with lam = 0 */
    TS_C3_ALL_CONTACT,  /* g = 0: lam = K u0 */
    TS_C3_NO_CONTACT,   /* g = (5, 5, 5): x = u0, w = g - u0 */
    TS_C3_EQ_MIDDLE,    /* g = (1, 1.7, 1), middle pair fastened (equality) */
    TS_C3_EQ_ALONE,     /* g = (5, 5, 5), middle pair fastened: only it acts */
    TS_C3__COUNT
} ts_chain3_case;

/* A chain3 case: its data and exact solution. Every lam, x and w is checked
 * to tol; the lam marked in lam_exact (bit i: pair i never enters) exactly. */
typedef struct {
    const char *name;
    double g[3];
    int eq_middle;      /* the middle pair permanently fastened */
    double lam[3], x[3], w[3];
    int n_act;          /* -1: not checked (degenerate) */
    unsigned lam_exact;
    double tol;
} ts_chain3_data;

static inline const ts_chain3_data *ts_chain3(ts_chain3_case c)
{
    static const ts_chain3_data cases[TS_C3__COUNT] = {
        [TS_C3_TWO_CONTACTS] = {"two contacts", {1, 1.7, 1}, 0, {0.5, 0, 0.5}, {1, 1.5, 1},
                                {0, 0.2, 0}, 2, 0x2, 1e-14},
        [TS_C3_TIES] = {"ties", {1, 1, 1}, 0, {0, 1, 0}, {1, 1, 1}, {0, 0, 0}, -1, 0, 1e-14},
        [TS_C3_ALL_CONTACT] = {"all in contact", {0, 0, 0}, 0, {1, 1, 1}, {0, 0, 0}, {0, 0, 0},
                               3, 0, 1e-14},
        [TS_C3_NO_CONTACT] = {"no contact", {5, 5, 5}, 0, {0, 0, 0}, {1.5, 2, 1.5},
                              {3.5, 3, 3.5}, 0, 0x7, 1e-14},
        [TS_C3_EQ_MIDDLE] = {"equality middle pair", {1, 1.7, 1}, 1, {0.7, -0.4, 0.7},
                             {1, 1.7, 1}, {0, 0, 0}, 3, 0, 1e-14},
        /* x_1 = 5 needs lam_1 = (u0_1 - 5) / Q_11 = -3, so x_0 = x_2 =
         * 1.5 + 3 Q_01 = 3 and w_0 = w_2 = 2 */
        [TS_C3_EQ_ALONE] = {"equality pair alone", {5, 5, 5}, 1, {0, -3, 0}, {3, 5, 3},
                            {2, 0, 2}, 1, 0x5, 1e-13},
    };
    return &cases[c < TS_C3__COUNT ? c : 0];
}

static inline gs_problem ts_chain3_problem(const gs_precomp *pc, ts_chain3_case c)
{
    static const unsigned char eq_middle[3] = {0, 1, 0};
    const ts_chain3_data *d = ts_chain3(c);
    return (gs_problem){.pc = pc, .g = d->g, .eq = d->eq_middle ? eq_middle : NULL};
}

/* Solve chain3 case c on f (a ts_fx_open of tm_chain3) with o into f->lam,
 * f->w, f->x; optimal with the certificate at TS_EXACT_KKT. */
static inline void ts_chain3_solve(ts_fixture *f, const gs_solve_opts *o, ts_chain3_case c,
                                   gs_solve_info *info)
{
    gs_problem pb = ts_chain3_problem(f->pc, c);
    ts_what = ts_chain3(c)->name;
    ts_solve_ok(f->sv, &pb, o, f->lam, f->w, f->x, info, TS_EXACT_KKT);
    ts_what = "";
}

/* Every exact chain3 case on one variant (one solver for all of them, in
 * the order of ts_chain3_case). */
static inline void ts_check_exact_chain3(gs_method method, gs_form form)
{
    ts_fixture f;
    ts_fx_open(&f, tm_chain3(), 1);
    const gs_solve_opts o = ts_opts(method, form);
    gs_solve_info info;
    static char what[128];
    for (int c = 0; c < TS_C3__COUNT; c++) {
        const ts_chain3_data *d = ts_chain3((ts_chain3_case)c);
        snprintf(what, sizeof what, "%s/%s chain3 %s", gs_method_name(method), gs_form_name(form),
                 d->name);
        ts_chain3_solve(&f, &o, (ts_chain3_case)c, &info);
        for (int i = 0; i < 3; i++) {
            TS_NEAR(what, f.lam[i], d->lam[i], (d->lam_exact >> i & 1u) ? 0.0 : d->tol);
            TS_NEAR(what, f.x[i], d->x[i], d->tol);
            TS_NEAR(what, f.w[i], d->w[i], d->tol);
        }
        if (d->n_act >= 0)
            TS_INT(what, info.n_act, d->n_act);
    }
    ts_fx_free(&f);
}

/* tm_two_springs (Q = 5/6, u0 = 5) with its fastener of 6 N installed, for
 * fasteners first on and off and the dual and primal certificates: g = 2:
 * lam = 3.6 N, x = (-1.2, 0.8), objective -9.6 N mm; g = 7 (free deflection
 * x = (-3, 2), 5 mm): lam = 0, w = 2; no fastener: x = 0, w = 7. */
static inline void ts_check_exact_two_springs(gs_method method, gs_form form)
{
    ts_fixture f;
    ts_fx_open(&f, tm_two_springs(), 1);
    const double *lam = f.lam, *w = f.w, *x = f.x;
    gs_solve_info info;
    static char what[128];
    for (int ff = 1; ff >= 0; ff--)
        for (int cert = 0; cert < 2; cert++) {
            gs_solve_opts o = ts_opts(method, form);
            o.fasteners_first = ff;
            o.primal_cert = cert;
            snprintf(what, sizeof what, "%s/%s two springs (fasteners first %d, %s certificate)",
                     gs_method_name(method), gs_form_name(form), ff, cert ? "primal" : "dual");
            ts_what = what;
            f.G[0] = 2.0;
            f.load[0] = 6.0;
            gs_problem pb = {.pc = f.pc, .g = f.G, .load = f.load};
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, TS_EXACT_KKT);
            TS_NEAR(what, lam[0], 3.6, 1e-14);
            TS_NEAR(what, w[0], 0.0, 1e-14);
            /* spring 0 pushed down by 6 - 3.6 = 2.4 N: x0 = -1.2 mm */
            TS_NEAR(what, x[0], -1.2, 1e-14);
            TS_NEAR(what, x[1], 0.8, 1e-14);
            TS_INT(what, info.kkt.primal, cert);
            TS_NEAR(what, info.kkt.obj_primal, -9.6, 1e-12);
            f.G[0] = 7.0; /* no contact */
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, TS_EXACT_KKT);
            TS_NEAR(what, lam[0], 0.0, 0.0);
            TS_NEAR(what, w[0], 2.0, 1e-14);
            TS_NEAR(what, x[0], -3.0, 1e-14);
            TS_NEAR(what, x[1], 2.0, 1e-14);
            pb.load = NULL; /* no fastener: nothing closes */
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, TS_EXACT_KKT);
            TS_NEAR(what, lam[0], 0.0, 0.0);
            TS_NEAR(what, w[0], 7.0, 1e-14);
            TS_NEAR(what, x[0], 0.0, 0.0);
            TS_NEAR(what, x[1], 0.0, 0.0);
            ts_what = "";
        }
    ts_fx_free(&f);
}

/* ---- the degenerate families (every BLAS kernel) --------------------------
 * Gap vectors on which an active-set method meets ties and zero
 * multipliers: all gaps zero, all gaps equal, every pair in contact (gaps
 * far below the free deflection u0), exact ties (the gaps of pair i and of
 * its mirror m-1-i equal). Each is solved exact and with ulp jitter: every
 * gap (and installed load) moved by -2..+2 units in the last place, so the rounding
 * differences between OpenBLAS kernels (Prescott, Haswell, SkylakeX, Zen...)
 * are exercised on any CPU; at zero the jitter gives denormals. */
typedef enum {
    TS_DG_ZERO,      /* g = 0 */
    TS_DG_EQUAL,     /* g = c for every pair */
    TS_DG_CONTACT,   /* g = u0 - 1: every pair penetrates by 1 mm at lam = 0 */
    TS_DG_TIES,      /* g_i = g_{m-1-i} from a smooth profile */
    TS_DG__COUNT
} ts_degenerate;

static inline const char *ts_degenerate_name(ts_degenerate d)
{
    static const char *names[TS_DG__COUNT] = {"zero gaps", "equal gaps", "every pair in contact",
                                              "mirror ties"};
    return names[d];
}

/* v[i] moved by -2..+2 ulps, pseudo-random from seed (seed 0: unchanged). */
static inline void ts_ulp_jitter(double *v, int n, uint64_t seed)
{
    if (seed == 0)
        return;
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < n; i++) {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        int k = (int)(z % 5) - 2;
        for (; k > 0; k--)
            v[i] = nextafter(v[i], INFINITY);
        for (; k < 0; k++)
            v[i] = nextafter(v[i], -INFINITY);
    }
}

/* Fill g (m) with family d for the problem's precomputation and load
 * (u0 = the free deflection of pb->pc under pb->load), then jitter g and
 * load (if any, m) by seed. equal: the value c (mm). */
static inline void ts_degenerate_gaps(const gs_problem *pb, ts_degenerate d, double c, double *g,
                                      double *load, uint64_t seed)
{
    const int m = pb->pc->m;
    double *p = malloc((size_t)m * sizeof *p), *tmp = malloc((size_t)m * sizeof *tmp);
    GS_CHECK(p && tmp);
    for (int i = 0; i < m; i++)
        g[i] = 0.0;
    gs_problem_dual_data(pb, p, NULL, tmp); /* p = u0 - g with g = 0: u0 */
    for (int i = 0; i < m; i++) {
        switch (d) {
        case TS_DG_ZERO: g[i] = 0.0; break;
        case TS_DG_EQUAL: g[i] = c; break;
        case TS_DG_CONTACT: g[i] = p[i] - 1.0; break;
        default: g[i] = 0.1 + 0.05 * cos(0.37 * (i < m - 1 - i ? i : m - 1 - i)); break;
        }
    }
    free(p);
    free(tmp);
    ts_ulp_jitter(g, m, seed);
    for (int i = 0; load && i < m; i++) /* installed fasteners only: no load stays 0 */
        if (load[i] != 0.0)
            ts_ulp_jitter(load + i, 1, seed * 131 + (uint64_t)i);
}

#endif
