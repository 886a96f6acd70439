/* test_auto.c -- the auto method: what it reports, that its answers agree with
 * the oracle, its static first picks, the exploration budget, and option
 * errors. Works with whichever candidate methods are available. */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "solver_impl.h"

static gs_solve_opts auto_opts(void)
{
    gs_solve_opts o;
    gs_solve_default_opts(&o);
    o.want_x = 1;
    GS_CHECK_INT(o.method, GS_METHOD_AUTO);
    return o;
}

/* auto answers agree with the oracle and say what ran. */
static void agree(gs_gen_kind kind)
{
    ts_fixture f;
    ts_fx_generate(&f, kind, 0, 3, 21, 0.0);
    gs_solve_opts o = auto_opts();
    double fr[3] = {0.0, 0.5, 1.0};
    for (int fi = 0; fi < 3; fi++) {
        ts_fx_pattern(&f, fr[fi]);
        for (int r = 0; r < 3; r++) {
            gs_problem pb = ts_fx_problem(&f, r);
            gs_solve_info info;
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-8);
            GS_CHECK_INT(info.auto_chosen, 1);
            GS_CHECK(info.method != GS_METHOD_AUTO && info.method != GS_METHOD_REF);
            GS_CHECK(gs_method_supports(info.method, info.form));
            ts_fx_reference(&f, &pb);
            ts_check_matches_ref(&f, "auto");
        }
    }
    ts_fx_free(&f);
}

GS_TEST(agrees_with_oracle_lap)
{
    agree(GS_GEN_LAP);
}

GS_TEST(agrees_with_oracle_sandwich)
{
    agree(GS_GEN_SANDWICH);
}

/* The first pick on a sandwich joint is the static one: GI relative (the
 * paper's method for ill-conditioned sandwich joints), not an exploration. */
GS_TEST(first_pick_on_sandwich_is_gi_relative)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 3, 0.5);
    gs_solve_opts o = auto_opts();
    gs_problem pb = ts_fx_problem(&f, 0);
    gs_solve_info info;
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-8);
    GS_CHECK_INT(info.method, GS_METHOD_GI);
    GS_CHECK_INT(info.form, GS_FORM_RELATIVE);
    GS_CHECK_INT(info.auto_explored, 0);
    ts_fx_free(&f);
}

/* Over many solves the time spent on measurements stays within 10% of the
 * time auto spent, plus at most one measurement per candidate; every solve is
 * accounted in the stats; explored solves are reported. */
GS_TEST(exploration_budget)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 8, 5, 0.5);
    gs_solve_opts o = auto_opts();
    int solves = 0, explored = 0;
    double fr[3] = {0.1, 0.5, 1.0}, max_t = 0;
    for (int rep = 0; rep < 5; rep++)
        for (int fi = 0; fi < 3; fi++) {
            ts_fx_pattern(&f, fr[fi]);
            for (int r = 0; r < 8; r++) {
                gs_problem pb = ts_fx_problem(&f, r);
                gs_solve_info info;
                ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, NULL, &info, 1e-8);
                solves++;
                explored += info.auto_explored;
                max_t = fmax(max_t, info.time);
            }
        }
    const gs_auto_stats *st = &f.sv->auto_stats;
    int counted = 0;
    for (int b = 0; b < GS_AUTO_BINS; b++) {
        for (int c = 0; c < GS_AUTO_CANDS; c++)
            counted += st->trials[c][b];
        GS_CHECK(st->explored[b] <= 0.1 * st->spent[b] + GS_AUTO_CANDS * max_t);
        GS_CHECK(st->explored[b] <= st->spent[b]);
    }
    GS_CHECK_INT(counted, solves);
    GS_CHECK(explored <= GS_AUTO_CANDS * GS_AUTO_BINS);
    ts_fx_free(&f);
}

/* A precomputation whose L_Q is deferred (GS_PRECOMP_DEFER_LQ): GI on the
 * relative and primal forms, Lemke and IPM on the dual form (every
 * normal-system solver and start) solve as on the full one (GI relative to
 * the bit); a method that reads L_Q is refused naming "method"; auto
 * neither picks nor measures one, even when its budget says measure, until
 * gs_precomp_finish_lq: before, it measures the dual IPM (which needs
 * none) and then keeps to GI; after, NPM dual, which agrees with GI. */
GS_TEST(deferred_lq_keeps_auto_to_what_can_run)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 5, 0.5);
    gs_precomp *dpc = NULL;
    gs_error e;
    GS_CHECK_INT(gs_precomp_build_ex(f.mdl, GS_PRECOMP_DEFER_LQ, &dpc, &e), GS_OK);
    GS_CHECK(!gs_precomp_has_lq(dpc) && dpc->LQ == NULL && isnan(dpc->cond_Q));
    gs_solver *sv = gs_solver_new(dpc, &e);
    GS_CHECK(sv != NULL);
    const int m = f.m;
    double *lam = calloc((size_t)m, sizeof *lam), *w = calloc((size_t)m, sizeof *w);
    gs_problem pb = {.pc = dpc, .g = f.G, .load = f.load}, fpb = ts_fx_problem(&f, 0);
    gs_solve_info info;
    gs_solve_opts gi = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    gi.want_x = 0;
    ts_solve_ok(sv, &pb, &gi, lam, w, NULL, &info, 1e-8);
    ts_solve_ok(f.sv, &fpb, &gi, f.lam, f.w, NULL, &info, 1e-8);
    GS_CHECK(!memcmp(lam, f.lam, sizeof(double) * (size_t)m));
    const struct { gs_method m; gs_form f; gs_ipm_linear lin; gs_ipm_start st; } runs[] = {
        {GS_METHOD_GI, GS_FORM_PRIMAL, 0, 0},
        {GS_METHOD_LEMKE, GS_FORM_DUAL, 0, 0},
        {GS_METHOD_IPM, GS_FORM_DUAL, GS_IPM_MIXED, GS_IPM_START_FEASIBLE},
        {GS_METHOD_IPM, GS_FORM_DUAL, GS_IPM_DIRECT, GS_IPM_START_INFEASIBLE},
        {GS_METHOD_IPM, GS_FORM_DUAL, GS_IPM_PCG_SPLIT, GS_IPM_START_FEASIBLE},
        {GS_METHOD_IPM, GS_FORM_DUAL, GS_IPM_PCG_JACOBI, GS_IPM_START_INFEASIBLE}};
    const struct { gs_method m; gs_form f; } refused[] = {{GS_METHOD_GI, GS_FORM_DUAL},
                                                          {GS_METHOD_NPM, GS_FORM_DEFAULT},
                                                          {GS_METHOD_IPM, GS_FORM_DEFAULT},
                                                          {GS_METHOD_IPM, GS_FORM_PRIMAL}};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        gs_solve_opts o = ts_opts(runs[k].m, runs[k].f);
        o.want_x = 0;
        if (runs[k].m == GS_METHOD_IPM) {
            o.ipm_linear = runs[k].lin;
            o.ipm_start = runs[k].st;
        }
        ts_solve_ok(sv, &pb, &o, lam, w, NULL, &info, 1e-8);
        GS_CHECK(ts_max_diff(w, f.w, m) < 1e-7); /* residual gaps, mm */
    }
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
        gs_solve_opts o = ts_opts(refused[k].m, refused[k].f);
        GS_CHECK(gs_method_needs_lq(o.method, o.form));
        GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, w, NULL, &info, &e), GS_ERR_INVALID);
        GS_CHECK_STR(e.field, "method");
    }
    GS_CHECK(!gs_method_needs_lq(GS_METHOD_GI, GS_FORM_DEFAULT));
    GS_CHECK(!gs_method_needs_lq(GS_METHOD_IPM, GS_FORM_DUAL));
    /* GI measured in every bin, a budget that calls for measuring the next
     * candidates (NPM dual and IPM dual, expected at 5x and 15x GI's 1 us): */
    gs_auto_stats *st = &sv->auto_stats;
    memset(st, 0, sizeof *st);
    for (int b = 0; b < GS_AUTO_BINS; b++) {
        st->trials[0][b] = 100;
        st->mean[0][b] = 1e-6; /* below any real solve: nothing measured is picked over it */
        st->spent[b] = 100.0;
    }
    gs_solve_opts o = auto_opts();
    o.want_x = 0;
    ts_solve_ok(sv, &pb, &o, lam, w, NULL, &info, 1e-8); /* IPM dual measured */
    GS_CHECK_INT(info.method, GS_METHOD_IPM);
    GS_CHECK_INT(info.form, GS_FORM_DUAL);
    GS_CHECK_INT(info.auto_explored, 1);
    GS_CHECK(ts_max_diff(w, f.w, m) < 1e-7);
    ts_solve_ok(sv, &pb, &o, lam, w, NULL, &info, 1e-8); /* nothing else can run */
    GS_CHECK_INT(info.method, GS_METHOD_GI);
    GS_CHECK_INT(info.auto_explored, 0);
    GS_CHECK_INT(gs_precomp_finish_lq(dpc, &e), GS_OK);
    GS_CHECK(gs_precomp_has_lq(dpc));
    ts_solve_ok(sv, &pb, &o, lam, w, NULL, &info, 1e-8);
    GS_CHECK_INT(info.auto_explored, 1);
    GS_CHECK(gs_method_needs_lq(info.method, info.form));
    GS_CHECK(ts_max_diff(w, f.w, m) < 1e-7);
    free(lam);
    free(w);
    gs_solver_free(sv);
    gs_precomp_free(dpc);
    ts_fx_free(&f);
}

/* No pair closes (p <= 0, no permanently fastened pair): the answer is
 * lam = 0; auto takes Lemke's immediate exit and does not learn from it. With
 * a permanently fastened pair the same gaps are a real problem again. */
GS_TEST(no_closing_pair_picks_the_trivial_exit)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 5, 0.0);
    for (int i = 0; i < f.m; i++)
        f.G[i] += 100.0; /* every gap wide open: p = u0 - g < 0 */
    gs_solve_opts o = auto_opts();
    gs_problem pb = ts_fx_problem(&f, 0);
    gs_solve_info info;
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-8);
    GS_CHECK_INT(info.auto_chosen, 1);
    GS_CHECK_INT(info.method, GS_METHOD_LEMKE);
    GS_CHECK_INT(info.n_act, 0);
    for (int i = 0; i < f.m; i++)
        GS_CHECK(f.lam[i] == 0.0);
    const gs_auto_stats *st = &f.sv->auto_stats;
    for (int b = 0; b < GS_AUTO_BINS; b++) {
        GS_CHECK(st->spent[b] == 0.0);
        for (int c = 0; c < GS_AUTO_CANDS; c++)
            GS_CHECK_INT(st->trials[c][b], 0);
    }
    ts_fx_fasten_uninstalled(&f, 1);
    pb.eq = f.eq;
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-8);
    GS_CHECK(info.method != GS_METHOD_LEMKE);
    ts_fx_reference(&f, &pb);
    ts_check_matches_ref(&f, "auto, one pair fastened");
    ts_fx_free(&f);
}

/* A candidate measured much slower than its prior in one bin is not measured
 * again in another bin on the prior's word: NPM dual at 40x GI in bin 1 is not
 * explored in bin 2 with a budget that its prior (5x) would fit. */
GS_TEST(exploration_uses_the_ratio_measured_in_a_nearby_bin)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 5, 0.5);
    gs_solver *s = f.sv;
    for (int i = 0; i < s->m; i++) /* closing share 10%: bin 2 */
        s->p[i] = i < s->m / 10 ? 1.0 : -1.0;
    gs_problem pb = ts_fx_problem(&f, 0);
    gs_auto_stats *st = &s->auto_stats;
    memset(st, 0, sizeof *st);
    st->trials[0][2] = 100, st->mean[0][2] = 1e-3, st->spent[2] = 0.1; /* GI: budget 10 ms */
    gs_method m;
    gs_form fm;
    int cand, bin, explore;
    gs_auto_choose(s, &pb, &m, &fm, &cand, &bin, &explore);
    GS_CHECK_INT(bin, 2);
    int prior_explores = explore; /* NPM dual's prior 5 ms fits the 10 ms budget */
    GS_CHECK_INT(prior_explores, gs_methods[GS_METHOD_NPM] != NULL);
    st->trials[0][1] = 10, st->mean[0][1] = 1e-3;  /* bin 1: GI 1 ms, */
    st->trials[1][1] = 1, st->mean[1][1] = 40e-3;  /* NPM dual 40 ms */
    gs_auto_choose(s, &pb, &m, &fm, &cand, &bin, &explore);
    GS_CHECK_INT(explore, 0);
    GS_CHECK_INT(m, GS_METHOD_GI);
    ts_fx_free(&f);
}

GS_TEST(auto_with_a_formulation_is_rejected)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = ts_build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    double g[3] = {1, 1.7, 1}, lam[3];
    gs_problem pb = {.pc = pc, .g = g};
    gs_solve_opts o = auto_opts();
    o.form = GS_FORM_DUAL;
    gs_solve_info info;
    gs_error e;
    GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK_STR(e.field, "form");
    GS_CHECK(strstr(e.msg, "picks the formulation") != NULL);
    GS_CHECK(!gs_method_supports(GS_METHOD_AUTO, GS_FORM_RELATIVE));
    GS_CHECK(gs_method_supports(GS_METHOD_AUTO, GS_FORM_DEFAULT));
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* The generic layer range-checks every option, naming it. */
GS_TEST(option_ranges_checked_by_the_solve_layer)
{
    gs_solve_opts o;
    gs_error e;
    const char *names[4] = {"npm_linear", "linesearch", "ipm_linear", "ipm_start"};
    for (int i = 0; i < 4; i++) {
        gs_solve_default_opts(&o);
        GS_CHECK_INT(gs_solve_validate_opts(&o, &e), GS_OK);
        if (i == 0)
            o.npm_linear = (gs_npm_linear)7;
        else if (i == 1)
            o.linesearch = (gs_linesearch)-1;
        else if (i == 2)
            o.ipm_linear = (gs_ipm_linear)4;
        else
            o.ipm_start = (gs_ipm_start)9;
        GS_CHECK_INT(gs_solve_validate_opts(&o, &e), GS_ERR_INVALID);
        GS_CHECK_STR(e.field, names[i]);
    }
}

GS_TEST_MAIN()
