/* test_ipm.c -- the interior point method on the primal form and on the
 * dual form (its working set of pairs): every form x normal-system solver x
 * starting point agrees with the reference oracle (1e-7 mm on x and w,
 * contact-set size) on small lap and sandwich models across fastener
 * fractions and with equality-fastened pairs, and on the exact hand-made
 * cases; the working set on a model whose first set is a small part of the
 * pairs, and its warm starts; the split preconditioner P3 needs far fewer CG iterations than
 * Jacobi on an ill-conditioned model; the IPM iteration count hardly depends
 * on the fastener fraction; degenerate gaps; the iteration limit; warm
 * starts are ignored; unknown ipm_linear / ipm_start values are rejected;
 * nearly dependent pairs (cond(Q) 4e8) solved by every combination; gaps on
 * which Mehrotra's iterates used to cycle; the dual form on a
 * precomputation whose L_Q is deferred. */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#define KKT_TOL 1e-9
/* IPM iterations allowed on the small models (a cycle runs to ipm.c's 200) */
#define IPM_TEST_MAX_IT 60

#define N_LIN 4
static const gs_ipm_linear LIN[N_LIN] = {GS_IPM_MIXED, GS_IPM_PCG_SPLIT, GS_IPM_PCG_JACOBI,
                                         GS_IPM_DIRECT};
enum { L_MIXED, L_SPLIT, L_JACOBI, L_DIRECT };
static const gs_ipm_start START[3] = {GS_IPM_START_AUTO, GS_IPM_START_FEASIBLE,
                                      GS_IPM_START_INFEASIBLE};

static const gs_form FORM[2] = {GS_FORM_PRIMAL, GS_FORM_DUAL};

static gs_solve_opts ipm_form_opts(gs_form form, int l, int st)
{
    gs_solve_opts o = ts_opts(GS_METHOD_IPM, form);
    o.ipm_linear = LIN[l];
    o.ipm_start = START[st];
    return o;
}

static gs_solve_opts ipm_opts(int l, int st)
{
    return ipm_form_opts(GS_FORM_PRIMAL, l, st);
}

/* Gap r of f's cloud (pb) by every form x normal-system solver x start
 * against the oracle (ri): optimal, x and w within 1e-7 mm, the contact-set
 * size, the CG counts of the solver, at most IPM_TEST_MAX_IT IPM iterations
 * per run (the dual form's working set may take several runs). */
static void every_combination(ts_fixture *f, const gs_problem *pb, const gs_ref_info *ri,
                              const char *label)
{
    for (int c = 0; c < 2 * N_LIN * 3; c++) {
        const int fm = c / (3 * N_LIN), l = c / 3 % N_LIN, st = c % 3;
        static char what[128];
        snprintf(what, sizeof what, "%s %s lin %d start %d", label, gs_form_name(FORM[fm]), l,
                 st);
        ts_what = what;
        gs_solve_opts o = ipm_form_opts(FORM[fm], l, st);
        gs_solve_info info;
        ts_solve_ok(f->sv, pb, &o, f->lam, f->w, f->x, &info, KKT_TOL);
        ts_check_matches_ref(f, what);
        GS_CHECK_INT(info.n_act, ri->n_act);
        GS_CHECK(info.iterations > 0 || ri->n_act == 0);
        if (FORM[fm] == GS_FORM_PRIMAL)
            GS_CHECK(info.iterations <= IPM_TEST_MAX_IT);
        if (LIN[l] == GS_IPM_DIRECT)
            GS_CHECK_INT(info.cg_iterations, 0);
        else
            GS_CHECK(info.cg_iterations >= info.iterations);
    }
    ts_what = "";
}

/* Every combination on a cloud of a generated model, against the oracle. */
static void agree_on(gs_gen_kind kind, double fraction, int ngaps, int with_eq)
{
    ts_fixture f;
    ts_fx_generate(&f, kind, 0, ngaps, 7, fraction);
    if (with_eq)
        GS_CHECK_INT(ts_fx_fasten_uninstalled(&f, 2), 2);
    for (int r = 0; r < ngaps; r++) {
        gs_problem pb = ts_fx_problem(&f, r);
        pb.eq = with_eq ? f.eq : NULL;
        gs_ref_info ri = ts_fx_reference(&f, &pb);
        char label[96];
        snprintf(label, sizeof label, "%s fraction %.1f eq %d gap %d", gs_gen_kind_name(kind),
                 fraction, with_eq, r);
        every_combination(&f, &pb, &ri, label);
    }
    ts_fx_free(&f);
}

GS_TEST(agrees_with_oracle_lap)
{
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int a = 0; a < 4; a++)
        agree_on(GS_GEN_LAP, fr[a], 3, 0);
}

GS_TEST(agrees_with_oracle_sandwich)
{
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int a = 0; a < 4; a++)
        agree_on(GS_GEN_SANDWICH, fr[a], 3, 0);
}

GS_TEST(agrees_with_oracle_equality_pairs)
{
    agree_on(GS_GEN_LAP, 0.5, 2, 1);
    agree_on(GS_GEN_SANDWICH, 0.5, 2, 1);
}

/* Gaps on which Mehrotra's iterates repeated with period four until the
 * iteration limit (found by a stress run over 3,000 generated gap clouds,
 * 4 of them, all at 10% fasteners): mu rose four- to five-fold along a step
 * after a poor affine direction (ipm.c, bound_mu_growth). Every normal-
 * system solver and start converges on them and agrees with the oracle. */
GS_TEST(no_cycle_when_a_step_would_raise_mu)
{
    const unsigned long long seeds[4] = {975, 1356, 1671, 2338};
    for (int q = 0; q < 4; q++) {
        ts_fixture f;
        ts_fx_generate(&f, GS_GEN_LAP, 0, 2, seeds[q], 0.0);
        ts_fx_pattern(&f, 0.1);
        for (int r = 0; r < 2; r++) {
            gs_problem pb = ts_fx_problem(&f, r);
            gs_ref_info ri = ts_fx_reference(&f, &pb);
            char label[64];
            snprintf(label, sizeof label, "cloud seed %llu gap %d", seeds[q], r);
            every_combination(&f, &pb, &ri, label);
        }
        ts_fx_free(&f);
    }
}

/* The exact hand-made cases (test_solvers_agree.c runs the default options;
 * here every combination of normal-system solver and start). */
GS_TEST(exact_cases_every_combination)
{
    for (int l = 0; l < N_LIN; l++)
        for (int st = 0; st < 3; st++) {
            ts_fixture f;
            ts_fx_open(&f, tm_chain3(), 1);
            gs_solve_opts o = ipm_opts(l, st);
            for (int c = 0; c < TS_C3__COUNT; c++) {
                const ts_chain3_data *d = ts_chain3((ts_chain3_case)c);
                gs_solve_info info;
                ts_chain3_solve(&f, &o, (ts_chain3_case)c, &info);
                for (int i = 0; i < 3; i++) {
                    TS_NEAR(d->name, f.lam[i], d->lam[i],
                            (d->lam_exact >> i & 1u) ? 0.0 : d->tol);
                    TS_NEAR(d->name, f.x[i], d->x[i], d->tol);
                    TS_NEAR(d->name, f.w[i], d->w[i], d->tol);
                }
            }
            ts_fx_free(&f);
        }
}

/* The dual form needs no L_Q (gs_method_needs_lq): on a precomputation
 * whose L_Q is deferred (GS_PRECOMP_DEFER_LQ), every normal-system solver x
 * start solves the exact hand-made cases, including the split
 * preconditioner and the infeasible start, which factor their system: with
 * 3 pairs the first working set is every pair, whose system is then
 * gathered and factored like a working set's; the solves leave L_Q
 * deferred. */
GS_TEST(dual_form_on_a_deferred_lq)
{
    gs_model *mdl = tm_chain3();
    gs_error e;
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build_ex(mdl, GS_PRECOMP_DEFER_LQ, &pc, &e), GS_OK);
    gs_solver *sv = gs_solver_new(pc, &e);
    GS_CHECK(sv != NULL);
    double lam[3], w[3], x[3];
    for (int l = 0; l < N_LIN; l++)
        for (int st = 0; st < 3; st++) {
            gs_solve_opts o = ipm_form_opts(GS_FORM_DUAL, l, st);
            o.want_x = 1;
            for (int c = 0; c < TS_C3__COUNT; c++) {
                const ts_chain3_data *d = ts_chain3((ts_chain3_case)c);
                gs_problem pb = ts_chain3_problem(pc, (ts_chain3_case)c);
                gs_solve_info info;
                ts_what = d->name;
                ts_solve_ok(sv, &pb, &o, lam, w, x, &info, TS_EXACT_KKT);
                for (int i = 0; i < 3; i++) {
                    TS_NEAR(d->name, lam[i], d->lam[i], (d->lam_exact >> i & 1u) ? 0.0 : d->tol);
                    TS_NEAR(d->name, x[i], d->x[i], d->tol);
                    TS_NEAR(d->name, w[i], d->w[i], d->tol);
                }
            }
        }
    ts_what = "";
    GS_CHECK(!gs_precomp_has_lq(pc));
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Nearly dependent pairs: one DOF pair joined by two pairs whose rows of A'
 * are (1, 0) and (1, eps), K = I, so Q = [[1, 1], [1, 1 + eps^2]] (cond ~
 * 4 / eps^2 = 4e8 at eps = 1e-4: past what a float Cholesky of Q could
 * factor). With f = (1e4, 1) and g = (0.5, 0.5 + eps / 2) both pairs are in
 * contact: x = (0.5, 0.5), lam1 = 1 / (2 eps) = 5,000, lam0 = 1e4 - 0.5 -
 * 5,000 = 4,999.5 (KKT: x = f - A lam with both rows of A'x = g). Every
 * normal-system solver x start gets it to the accuracy the conditioning
 * allows (2e-7 relative on lam). Measured: mixed's float factor of H never
 * fails here (nor on any other model of the IPM and agreement tests): when
 * the polish identifies the set, Lambda^-1 Y on the contact pairs is still
 * ~2e-5 of Q's diagonal, so the scaled H is well inside float range; the
 * double fallback (solvers/mixchol.c, tested by test_mixchol) is the safety
 * net for a joint whose iterations go deeper on such a Q. */
GS_TEST(nearly_dependent_pairs_every_combination)
{
    const double eps = 1e-4;
    gs_model *mdl = tm_near_dependent(eps, 1e4, 1.0);
    ts_fixture f;
    ts_fx_open(&f, mdl, 1);
    f.G[0] = 0.5;
    f.G[1] = 0.5 + 0.5 * eps;
    gs_problem pb = ts_fx_problem(&f, 0);
    for (int c = 0; c < 3 * N_LIN; c++) {
        gs_solve_opts o = ipm_opts(c / 3, c % 3);
        gs_solve_info info;
        ts_what = gs_ipm_linear_name(LIN[c / 3]);
        ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
        GS_CHECK_INT(info.n_act, 2);
        TS_NEAR(ts_what, f.lam[1], 0.5 / eps, 1e-3);
        TS_NEAR(ts_what, f.lam[0], 1e4 - 0.5 - 0.5 / eps, 1e-3);
        TS_NEAR(ts_what, f.x[0], 0.5, 1e-12);
        TS_NEAR(ts_what, f.x[1], 0.5, 1e-7); /* eps x the lam error */
    }
    ts_what = "";
    ts_fx_free(&f);
}

/* Massive degeneracy (zero gaps, every fastener: many pairs with w = 0 and
 * lam = 0) and no contact at all, every combination. */
GS_TEST(degenerate_gaps_every_combination)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 11, 1.0);
    gs_problem pb = ts_fx_problem(&f, 0);
    const double gv[2] = {0.0, 1e4};
    for (int c = 0; c < 2; c++) {
        for (int k = 0; k < f.m; k++)
            f.G[k] = gv[c];
        ts_fx_reference(&f, &pb);
        for (int l = 0; l < N_LIN; l++)
            for (int st = 0; st < 3; st++) {
                static char what[64];
                snprintf(what, sizeof what, "gaps %g lin %d start %d", gv[c], l, st);
                ts_what = what;
                gs_solve_opts o = ipm_opts(l, st);
                gs_solve_info info;
                ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
                ts_check_matches_ref(&f, what);
            }
    }
    ts_what = "";
    ts_fx_free(&f);
}

/* Total CG iterations of one solve per preconditioner on an ill-conditioned
 * sandwich model (the paper-size one scaled down; cond(K) ~ 1e7). */
GS_TEST(split_preconditioner_beats_jacobi)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0.45, 1, 5, 0.5);
    gs_problem pb = ts_fx_problem(&f, 0);
    ts_fx_reference(&f, &pb);
    int cgs[2], its[2];
    for (int l = 0; l < 2; l++) {
        gs_solve_opts o = ipm_opts(l ? L_JACOBI : L_SPLIT, 0);
        gs_solve_info info;
        ts_what = l ? "jacobi" : "split";
        ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
        ts_check_matches_ref(&f, ts_what);
        cgs[l] = info.cg_iterations;
        its[l] = info.iterations;
    }
    ts_what = "";
    printf("sandwich m = %d n = %d: split %d CG (%d IPM), jacobi %d CG (%d IPM)\n", f.m, f.n,
           cgs[0], its[0], cgs[1], its[1]);
    GS_CHECK_MSG(cgs[1] >= 3 * cgs[0], "jacobi %d vs split %d CG iterations", cgs[1], cgs[0]);
    ts_fx_free(&f);
}

/* The IPM iteration count hardly depends on the fastener fraction (unlike
 * active-set methods, whose work follows the contact set). Measured on one
 * gap at fractions 0 / 0.1 / 0.5 / 1 (default options): lap 7..10,
 * sandwich 9..11 iterations; asserted: max <= 2 min. */
GS_TEST(iterations_nearly_independent_of_fraction)
{
    int lo_[2], hi_[2];
    for (int kind = 0; kind < 2; kind++) {
        ts_fixture f;
        ts_fx_generate(&f, (gs_gen_kind)kind, 0, 1, 9, 0.0);
        double fr[4] = {0.0, 0.1, 0.5, 1.0};
        int lo = 1 << 30, hi = 0;
        for (int a = 0; a < 4; a++) {
            ts_fx_pattern(&f, fr[a]);
            gs_problem pb = ts_fx_problem(&f, 0);
            gs_solve_opts o = ipm_opts(0, 0);
            gs_solve_info info;
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
            lo = info.iterations < lo ? info.iterations : lo;
            hi = info.iterations > hi ? info.iterations : hi;
        }
        printf("%s: IPM iterations %d..%d over fractions\n", gs_gen_kind_name((gs_gen_kind)kind),
               lo, hi);
        lo_[kind] = lo;
        hi_[kind] = hi;
        ts_fx_free(&f);
    }
    for (int kind = 0; kind < 2; kind++)
        GS_CHECK_MSG(hi_[kind] <= 2 * lo_[kind], "%s: %d..%d iterations",
                     gs_gen_kind_name((gs_gen_kind)kind), lo_[kind], hi_[kind]);
}

GS_TEST(iteration_limit_warm_ignored_option_errors)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 3, 0.5);
    gs_problem pb = ts_fx_problem(&f, 0);
    gs_solve_info info;
    for (int l = 0; l < N_LIN; l++) {
        gs_solve_opts o = ipm_opts(l, 0);
        o.max_iter = 2;
        GS_CHECK_INT(ts_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info), GS_STATUS_MAX_ITER);
        GS_CHECK_INT(info.iterations, 2);
    }
    /* warm start: accepted, ignored by the primal form, same answer */
    gs_solve_opts o = ipm_opts(0, 0);
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
    int na = ts_contact_set(f.lam, NULL, f.m, f.act);
    memcpy(f.lr, f.lam, (size_t)f.m * sizeof *f.lr);
    gs_warm warm = {.n_act = na, .act = f.act, .lam = f.lr};
    o.warm = &warm;
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
    GS_CHECK_INT(info.warm_used, 0);
    GS_CHECK(ts_max_diff(f.lam, f.lr, f.m) == 0.0);
    gs_error e;
    o = ipm_opts(0, 0);
    o.ipm_linear = (gs_ipm_linear)9;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, NULL, NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "ipm_linear");
    o = ipm_opts(0, 0);
    o.ipm_start = (gs_ipm_start)9;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, NULL, NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "ipm_start");
    GS_CHECK(gs_method_supports(GS_METHOD_IPM, GS_FORM_PRIMAL));
    GS_CHECK(gs_method_supports(GS_METHOD_IPM, GS_FORM_DUAL));
    GS_CHECK(!gs_method_supports(GS_METHOD_IPM, GS_FORM_RELATIVE));
    ts_fx_free(&f);
}

/* The dual form's working set on a model whose first set (the fastened and
 * loaded pairs and 64 more) is a small part of the pairs: at 10% fasteners the
 * contact set is a tenth of them, at 50% a third; the joined sets must end
 * with the whole problem's answer: the oracle's within 1e-7 mm, and the
 * primal form's (which factors every pair) within 1e-7 mm on w. */
GS_TEST(dual_working_set_agrees_on_a_larger_model)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0.45, 2, 21, 0.1);
    printf("lap scale 0.45: m = %d pairs\n", f.m);
    GS_CHECK(f.m >= 4 * 64);
    double fr[2] = {0.1, 0.5};
    double *w_primal = malloc((size_t)f.m * sizeof *w_primal);
    for (int a = 0; a < 2; a++) {
        ts_fx_pattern(&f, fr[a]);
        for (int r = 0; r < 2; r++) {
            gs_problem pb = ts_fx_problem(&f, r);
            gs_ref_info ri = ts_fx_reference(&f, &pb);
            gs_solve_info info;
            gs_solve_opts o = ipm_form_opts(GS_FORM_PRIMAL, L_MIXED, 0);
            ts_what = "primal";
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
            ts_check_matches_ref(&f, ts_what);
            memcpy(w_primal, f.w, (size_t)f.m * sizeof *w_primal);
            for (int l = 0; l < N_LIN; l++) {
                static char what[64];
                snprintf(what, sizeof what, "dual %s fraction %.1f gap %d",
                         gs_ipm_linear_name(LIN[l]), fr[a], r);
                ts_what = what;
                o = ipm_form_opts(GS_FORM_DUAL, l, 0);
                ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
                ts_check_matches_ref(&f, what);
                GS_CHECK_INT(info.n_act, ri.n_act);
                GS_CHECK(ts_max_diff(f.w, w_primal, f.m) <= 1e-7);
                if (l == 0 && r == 0)
                    printf("fraction %.1f: n_act %d, dual %d IPM iterations in all\n", fr[a],
                           info.n_act, info.iterations);
            }
        }
    }
    ts_what = "";
    free(w_primal);
    ts_fx_free(&f);
}

/* The dual form takes a warm start: the contact set of another gap's answer
 * joins its first working set and its multipliers start the first run;
 * warm_used and warm_kept say so, and the answer is the oracle's (1e-7 mm)
 * whatever the warm start: the gap's own answer, another gap's, the set
 * without multipliers, multipliers that are not finite (not used). */
GS_TEST(dual_warm_start)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0.45, 2, 21, 0.5);
    double *lam1 = malloc((size_t)f.m * sizeof *lam1);
    int *act1 = malloc((size_t)f.m * sizeof *act1);
    gs_problem pb1 = ts_fx_problem(&f, 1);
    gs_solve_info info;
    gs_solve_opts o = ipm_form_opts(GS_FORM_DUAL, L_MIXED, 0);
    ts_solve_ok(f.sv, &pb1, &o, lam1, f.w, f.x, &info, KKT_TOL);
    const int na1 = ts_contact_set(lam1, NULL, f.m, act1);
    GS_CHECK(na1 > 64);
    gs_problem pb = ts_fx_problem(&f, 0);
    ts_fx_reference(&f, &pb);
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
    ts_check_matches_ref(&f, "cold");
    GS_CHECK_INT(info.warm_used, 0);
    const int na0 = ts_contact_set(f.lam, NULL, f.m, f.act);
    double *lam0 = malloc((size_t)f.m * sizeof *lam0);
    memcpy(lam0, f.lam, (size_t)f.m * sizeof *lam0);
    struct {
        const char *what;
        gs_warm warm;
    } cases[4] = {{"own answer", {na0, f.act, lam0}},
                  {"other gap", {na1, act1, lam1}},
                  {"set only", {na1, act1, NULL}},
                  {"nan multipliers", {na1, act1, lam1}}};
    for (int c = 0; c < 4; c++) {
        if (c == 3)
            lam1[act1[0]] = NAN;
        ts_what = cases[c].what;
        o.warm = &cases[c].warm;
        for (int l = 0; l < N_LIN; l++) {
            o.ipm_linear = LIN[l];
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
            ts_check_matches_ref(&f, ts_what);
            GS_CHECK_INT(info.warm_used, 1);
            GS_CHECK_INT(info.warm_kept, cases[c].warm.n_act);
        }
    }
    ts_what = "";
    free(lam0);
    free(lam1);
    free(act1);
    ts_fx_free(&f);
}

/* A warm start whose multipliers are finite but out of all proportion (the
 * exact answer's times 1e20, 1e50, 1e300, and -1e50) must not make the dual
 * form fail or slow down: times 1e50 broke down at iteration 0 (mu ~ 1e100,
 * lam = inf, w = NaN), times 1e20 took many more iterations than a cold
 * start. Such multipliers are not used (ipm_wset.c warm_residual): the
 * first run starts cold on the warm set (warm_used, warm_kept as usual), at
 * most as many iterations as the cold solve, the exact answer (chain3, pairs
 * 0 and 2 in contact, lam = (0.5, 0, 0.5)) with every normal-system solver
 * and start. */
GS_TEST(dual_warm_start_huge_multipliers)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = ts_build(mdl);
    gs_error e;
    gs_solver *sv = gs_solver_new(pc, &e);
    const ts_chain3_data *d = ts_chain3(TS_C3_TWO_CONTACTS);
    gs_problem pb = ts_chain3_problem(pc, TS_C3_TWO_CONTACTS);
    double lam[3], w[3], x[3];
    const int act[2] = {0, 2};
    const double scale[4] = {1e20, 1e50, 1e300, -1e50};
    for (int l = 0; l < N_LIN; l++)
        for (int st = 0; st < 3; st++) {
            gs_solve_opts o = ipm_form_opts(GS_FORM_DUAL, l, st);
            gs_solve_info cold, info;
            ts_what = "cold";
            ts_solve_ok(sv, &pb, &o, lam, w, x, &cold, TS_EXACT_KKT);
            for (int c = 0; c < 4; c++) {
                double wl[3];
                for (int i = 0; i < 3; i++)
                    wl[i] = d->lam[i] * scale[c];
                const gs_warm warm = {.n_act = 2, .act = act, .lam = wl};
                o.warm = &warm;
                ts_what = "huge warm multipliers";
                ts_solve_ok(sv, &pb, &o, lam, w, x, &info, TS_EXACT_KKT);
                GS_CHECK_INT(info.warm_used, 1);
                GS_CHECK_INT(info.warm_kept, 2);
                GS_CHECK_MSG(info.iterations <= cold.iterations,
                             "%s/%d x %g: %d iterations warm, %d cold",
                             gs_ipm_linear_name(LIN[l]), st, scale[c], info.iterations,
                             cold.iterations);
                for (int i = 0; i < 3; i++) {
                    GS_CHECK_NEAR(lam[i], d->lam[i], 1e-9);
                    GS_CHECK_NEAR(w[i], d->w[i], 1e-9);
                }
            }
            o.warm = NULL;
        }
    ts_what = "";
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Dependent pairs with consistent gaps (tm_loop3: pairs 0, 1, 2 in a loop
 * of three parts, columns of A summing to zero; L_Q deferred, as
 * gapsim-batch loads such a model): the dual form ended numerical_breakdown
 * at iteration 0 (the infeasible start and the split preconditioner factor
 * the working set's Q_SS, singular here) or after many iterations (the
 * iterates drift along the null space of the loop, every pair's force
 * growing, and the polish could not factor the identified set). Now the
 * factor is regularized (it only makes a start and a preconditioner) and the
 * polish builds the identified set leaving out a pair dependent on the
 * others (exchanging one as GI's partial step does when it is violated):
 * optimal with every normal-system solver and start, x and w those of the
 * oracle (the forces are not unique: any multiple of (1, 1, 1, 0) may be
 * added), within 1e-9 mm. */
GS_TEST(dual_form_dependent_pairs_consistent_gaps)
{
    ts_fixture f;
    ts_fx_open_ex(&f, tm_loop3(0), 4, GS_PRECOMP_DEFER_LQ);
    const double g[4][4] = {{0.1, 0.1, 0.3, 0.5},
                            {0.1, 0.1, -0.2, 0.5},
                            {0.0, 0.0, 0.0, 0.0},
                            {-0.1, 0.05, 0.05, 2.0}};
    memcpy(f.G, g, sizeof g);
    for (int r = 0; r < 4; r++) {
        gs_problem pb = ts_fx_problem(&f, r);
        ts_what = "oracle";
        ts_fx_reference(&f, &pb);
        for (int l = 0; l < N_LIN; l++)
            for (int st = 0; st < 3; st++) {
                gs_solve_opts o = ipm_form_opts(GS_FORM_DUAL, l, st);
                gs_solve_info info;
                static char what[96];
                snprintf(what, sizeof what, "loop gap %d %s start %d", r,
                         gs_ipm_linear_name(LIN[l]), st);
                ts_what = what;
                ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-10);
                for (int i = 0; i < f.m; i++)
                    TS_NEAR(what, f.w[i], f.wr[i], 1e-9);
                for (int i = 0; i < f.n; i++)
                    TS_NEAR(what, f.x[i], f.xr[i], 1e-9);
            }
    }
    ts_what = "";
    GS_CHECK(!gs_precomp_has_lq(f.pc));
    ts_fx_free(&f);
}

GS_TEST_MAIN()
