/* test_gi_dual_primal.c -- Goldfarb-Idnani on the dual (2) and primal (1)
 * formulations (solvers/gi_dual.c, gi_primal.c) through gs_solve: the
 * iteration counts of each form on the exact chain3 cases (their values, and
 * the two springs' with fasteners first on and off, are checked for every
 * variant in test_solvers_agree.c), agreement with the reference oracle on
 * generated lap and sandwich models and on random models (pairs inside one
 * part, against the jig), equality-fastened pairs, warm start = cold start
 * with fewer iterations, fasteners first on/off, and the iteration limit. */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "gi.h"

static const gs_form forms[2] = {GS_FORM_DUAL, GS_FORM_PRIMAL};

GS_TEST(gi_supports_dual_and_primal)
{
    GS_CHECK(gs_method_supports(GS_METHOD_GI, GS_FORM_DUAL));
    GS_CHECK(gs_method_supports(GS_METHOD_GI, GS_FORM_PRIMAL));
    GS_CHECK(gs_method_supports(GS_METHOD_GI, GS_FORM_RELATIVE));
}

/* Where each form starts: the dual at lam = 0 with every bound to add, the
 * primal at the unconstrained x with every violated pair to add. */
GS_TEST(chain3_iteration_counts)
{
    ts_fixture f;
    ts_fx_open(&f, tm_chain3(), 1);
    gs_solve_info info;
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o = ts_opts(GS_METHOD_GI, forms[fi]);
        const int dual = forms[fi] == GS_FORM_DUAL;
        /* pairs 0 and 2 in contact: the dual bounds pair 1, the primal adds
         * pairs 0 and 2 */
        ts_chain3_solve(&f, &o, TS_C3_TWO_CONTACTS, &info);
        GS_CHECK(info.iterations >= (dual ? 1 : 2));
        /* all in contact: the dual starts there (no step), the primal adds
         * all three */
        ts_chain3_solve(&f, &o, TS_C3_ALL_CONTACT, &info);
        if (dual)
            GS_CHECK_INT(info.iterations, 0);
        else
            GS_CHECK(info.iterations >= 3);
        /* no contact: the dual bounds all three, the primal has nothing to do */
        ts_chain3_solve(&f, &o, TS_C3_NO_CONTACT, &info);
        if (dual)
            GS_CHECK(info.iterations >= 3);
        else
            GS_CHECK_INT(info.iterations, 0);
    }
    ts_fx_free(&f);
}

/* Pairs whose force exceeds 1e-8 max(1, ||lam||). */
static int significant(const double *lam, int m)
{
    double mx = 1.0;
    for (int k = 0; k < m; k++)
        mx = fmax(mx, fabs(lam[k]));
    int c = 0;
    for (int k = 0; k < m; k++)
        c += fabs(lam[k]) > 1e-8 * mx;
    return c;
}

/* Solve pb with both forms (into f's lam, w, x) and compare with the oracle
 * (lr, wr, xr): x and w within 1e-7 mm, OPTIMAL, KKT certificate at 1e-8
 * (the primal form is certified with x and K, the dual form with its
 * multipliers). */
static void compare_oracle(ts_fixture *f, const gs_problem *pb, int fasteners_first,
                           const char *what)
{
    const int m = f->m;
    ts_what = what;
    ts_fx_reference(f, pb);
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o = ts_opts(GS_METHOD_GI, forms[fi]);
        o.fasteners_first = fasteners_first;
        o.primal_cert = forms[fi] == GS_FORM_PRIMAL;
        gs_solve_info info;
        ts_solve_ok(f->sv, pb, &o, f->lam, f->w, f->x, &info, 1e-8);
        GS_CHECK_INT(info.kkt.primal, o.primal_cert);
        char msg[96];
        snprintf(msg, sizeof msg, "%s %s", what, gs_form_name(o.form));
        ts_check_matches_ref(f, msg);
        /* the same contact set, up to degenerate pairs (w = 0 and a force at
         * the round-off level of the solution, e.g. on pairs with g = 0) */
        GS_CHECK_INT(significant(f->lam, m), significant(f->lr, m));
    }
    ts_what = "";
}

static void oracle_cloud(gs_gen_kind kind)
{
    const int ngaps = 3;
    ts_fixture f;
    ts_fx_generate(&f, kind, 0, ngaps, 7, 0.0);
    const int m = f.m;
    double *g = malloc(m * sizeof *g);
    const double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int a = 0; a < 4; a++) {
        ts_fx_pattern(&f, fr[a]);
        for (int r = 0; r < ngaps; r++) {
            gs_problem pb = ts_fx_problem(&f, r);
            compare_oracle(&f, &pb, 1, gs_gen_kind_name(kind));
            if (r == 0)
                compare_oracle(&f, &pb, 0, "fasteners not first");
        }
        /* gaps scaled down 100x: almost every pair in contact */
        for (int k = 0; k < m; k++)
            g[k] = 0.01 * f.G[k];
        gs_problem pb = {.pc = f.pc, .g = g, .load = f.load};
        compare_oracle(&f, &pb, 1, "small gaps");
    }
    free(g);
    /* equality-fastened pairs: two candidates without a load, one with */
    ts_fx_pattern(&f, 0.5);
    int ne = ts_fx_fasten_uninstalled(&f, 2);
    for (int i = 0; i < f.mdl->n_fast; i++)
        if (f.inst[i]) {
            f.eq[f.mdl->fast[i].pair] = 1;
            ne++;
            break;
        }
    GS_CHECK_INT(ne, 3);
    for (int r = 0; r < ngaps; r++) {
        gs_problem pb = ts_fx_problem(&f, r);
        pb.eq = f.eq;
        compare_oracle(&f, &pb, 1, "equality pairs");
    }
    ts_fx_free(&f);
}

GS_TEST(lap_agrees_with_oracle_all_fractions)
{
    oracle_cloud(GS_GEN_LAP);
}

GS_TEST(sandwich_agrees_with_oracle_all_fractions)
{
    oracle_cloud(GS_GEN_SANDWICH);
}

/* Random models: 2-3 parts, pairs across parts, against the jig and one
 * inside part 0 (both entries in one block of K). */
GS_TEST(random_models_agree_with_oracle)
{
    int cases = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        int parts = seed % 2 ? 2 : 3;
        ts_fixture f;
        ts_fx_open(&f, tm_random(parts, 6, 3, 300 + seed), 1);
        const int m = f.m;
        for (int v = 0; v < 4; v++) {
            for (int k = 0; k < m; k++)
                f.G[k] = (v == 3 ? 0.02 : 0.4) * tm_unif();
            for (int i = 0; i < f.mdl->n_fast; i++)
                f.inst[i] = (unsigned char)((i + v) % 2);
            gs_model_pattern_load(f.mdl, f.inst, f.load);
            if (v == 2)
                f.eq[(int)(seed % (uint64_t)m)] = 1;
            gs_problem pb = ts_fx_problem(&f, 0);
            pb.eq = v == 2 ? f.eq : NULL;
            compare_oracle(&f, &pb, 1, "random model");
            cases++;
        }
        ts_fx_free(&f);
    }
    GS_CHECK_INT(cases, 24);
}

/* Warm start from the solution of a neighbouring problem (the fastener
 * pattern changed by one fastener): same answer as the cold start, fewer
 * iterations, warm_used set; a warm start from the problem's own solution
 * needs no GI step at all. */
GS_TEST(warm_start_equals_cold_and_saves_iterations)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 2, 5, 0.5);
    const int m = f.m, n = f.n;
    double *l0 = malloc(m * sizeof *l0), *lc = malloc(m * sizeof *lc), *lw = malloc(m * sizeof *lw);
    double *w = f.w, *xc = malloc(n * sizeof *xc), *xw = malloc(n * sizeof *xw);
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o = ts_opts(GS_METHOD_GI, forms[fi]);
        gs_solve_info ic, iw;
        ts_fx_pattern(&f, 0.5);
        gs_problem pb = ts_fx_problem(&f, 0);
        GS_CHECK_INT(ts_solve(f.sv, &pb, &o, l0, w, xc, &ic), GS_STATUS_OPTIMAL);
        int k = ts_contact_set(l0, NULL, m, f.act);
        GS_CHECK(k > 0 && k < m);
        gs_warm warm = {.n_act = k, .act = f.act, .lam = l0};
        /* the same problem, warm: nothing left to do */
        gs_solve_opts ow = o;
        ow.warm = &warm;
        GS_CHECK_INT(ts_solve(f.sv, &pb, &ow, lw, w, xw, &iw), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(iw.warm_used, 1);
        GS_CHECK_INT(iw.warm_kept, k);
        GS_CHECK_INT(iw.iterations, 0);
        for (int i = 0; i < m; i++)
            GS_CHECK_NEAR(lw[i], l0[i], 1e-9 * fmax(1.0, fabs(l0[i])));
        /* neighbouring problem: one fastener more (the first not installed) */
        int changed = -1;
        for (int i = 0; i < f.mdl->n_fast && changed < 0; i++)
            if (!f.inst[i])
                f.inst[changed = i] = 1;
        GS_CHECK(changed >= 0);
        gs_model_pattern_load(f.mdl, f.inst, f.load);
        GS_CHECK_INT(ts_solve(f.sv, &pb, &o, lc, w, xc, &ic), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(ic.warm_used, 0);
        GS_CHECK_INT(ts_solve(f.sv, &pb, &ow, lw, w, xw, &iw), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(iw.warm_used, 1);
        GS_CHECK(iw.warm_kept > 0);
        GS_CHECK(gs_kkt_pass(&iw.kkt, 1e-8));
        double dx = ts_max_diff(xw, xc, n);
        GS_CHECK_MSG(dx <= 1e-9, "%s: warm vs cold |dx| %.3g", gs_form_name(o.form), dx);
        GS_CHECK_INT(iw.n_act, ic.n_act);
        GS_CHECK_MSG(iw.iterations < ic.iterations, "%s: warm %d vs cold %d iterations",
                     gs_form_name(o.form), iw.iterations, ic.iterations);
        /* a warm set that is mostly wrong (the other gap vector's solution is
         * applied to a scaled-up gap): still the cold answer */
        double *g2 = malloc(m * sizeof *g2);
        for (int i = 0; i < m; i++)
            g2[i] = 3.0 * f.G[m + i];
        gs_problem pb2 = {.pc = f.pc, .g = g2, .load = f.load};
        GS_CHECK_INT(ts_solve(f.sv, &pb2, &o, lc, w, xc, &ic), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(ts_solve(f.sv, &pb2, &ow, lw, w, xw, &iw), GS_STATUS_OPTIMAL);
        dx = ts_max_diff(xw, xc, n);
        GS_CHECK_MSG(dx <= 1e-9, "%s: bad warm set |dx| %.3g", gs_form_name(o.form), dx);
        free(g2);
    }
    free(l0); free(lc); free(lw); free(xc); free(xw);
    ts_fx_free(&f);
}

/* The iteration cap ends in GS_STATUS_MAX_ITER; the default cap solves. */
GS_TEST(iteration_limit)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 3, 0.5);
    gs_problem pb = ts_fx_problem(&f, 0);
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o = ts_opts(GS_METHOD_GI, forms[fi]);
        gs_solve_info info;
        GS_CHECK_INT(ts_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info), GS_STATUS_OPTIMAL);
        const int need = info.iterations;
        GS_CHECK(need > 3);
        o.max_iter = 3;
        GS_CHECK_INT(ts_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info), GS_STATUS_MAX_ITER);
        GS_CHECK(info.iterations >= 3 && info.iterations < need);
        o.max_iter = need + 1;
        GS_CHECK_INT(ts_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(info.iterations, need);
    }
    ts_fx_free(&f);
}

/* The GI family's one ratio test (gi.h): smallest step, ties to the
 * smallest pair index whatever the set order, equality members and
 * members whose multiplier does not fall never block, and a step length
 * that is not finite (denormal rate) never blocks: with no finite step the
 * answer is -1 and +inf, never an index read before the set. */
GS_TEST(ratio_test_ties_denormals_equalities)
{
    double t;
    int idx[3] = {7, 3, 5};
    double lam[3] = {1.0, 2.0, 0.5}, r[3] = {1.0, 2.0, -1.0};
    GS_CHECK_INT(gs_gi_ratio_test(3, lam, r, 1.0, idx, NULL, &t), 1); /* tie t = 1: pair 3 */
    GS_CHECK_NEAR(t, 1.0, 0.0);
    GS_CHECK_INT(gs_gi_ratio_test(3, lam, r, -1.0, idx, NULL, &t), 2); /* only pair 5 falls */
    GS_CHECK_NEAR(t, 0.5, 0.0);
    double rden[3] = {4.9e-324, 0.0, -0.0};
    GS_CHECK_INT(gs_gi_ratio_test(3, lam, rden, 1.0, idx, NULL, &t), -1);
    GS_CHECK(isinf(t) && t > 0);
    GS_CHECK_INT(gs_gi_ratio_test(0, lam, r, 1.0, idx, NULL, &t), -1);
    double lneg[3] = {-1e-300, 2.0, 0.5}; /* a round-off negative blocks at once */
    GS_CHECK_INT(gs_gi_ratio_test(3, lneg, r, 1.0, idx, NULL, &t), 0);
    GS_CHECK_NEAR(t, 0.0, 0.0);
    /* an equality member never blocks */
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = ts_build(mdl);
    double g[3] = {1, 1, 1};
    unsigned char eq[3] = {0, 1, 0};
    gs_problem pb = {.pc = pc, .g = g, .eq = eq};
    int idx3[2] = {1, 2};
    double l3[2] = {0.1, 3.0}, r3[2] = {1.0, 1.0};
    GS_CHECK_INT(gs_gi_ratio_test(2, l3, r3, 1.0, idx3, &pb, &t), 1);
    GS_CHECK_NEAR(t, 3.0, 0.0);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* GI dual on nearly dependent pairs: M = Q^-1 carries an error ~ eps
 * cond(Q) ~ 1e-2 relative, and its algebra broke down (the polish's Q_FF
 * numerically singular), which ended numerical_breakdown with lam[1] =
 * -0.0499 on an easy problem. GI relative now finishes (crossover): pair 0
 * alone in contact, lam = (98.24, 0, 0) exactly, x = (-0.38, -0.08, 0.1), w
 * = (0, 0.02, 0.03 + 3.8e-7); and on contradicting gaps (g2 = -0.6) the
 * verified Farkas certificate (status infeasible, d ~ (1, 1, 1)). */
GS_TEST(dual_near_dependent_pairs_hand_over_to_relative)
{
    ts_fixture f;
    ts_fx_open(&f, tm_near_loop(1e-6), 2);
    const double g[2][3] = {{0.3, 0.2, -0.45}, {0.3, 0.2, -0.6}};
    memcpy(f.G, g, sizeof g);
    f.load[0] = 100.0;
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_DUAL);
    gs_solve_info info;
    gs_problem pb = ts_fx_problem(&f, 0);
    ts_what = "near-dependent loop";
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-10);
    GS_CHECK_INT(info.crossover, 1);
    const double lam[3] = {98.24, 0.0, 0.0}, x[3] = {-0.38, -0.08, 0.1};
    const double w[3] = {0.0, 0.02, 0.03 + 3.8e-7};
    for (int i = 0; i < 3; i++) {
        GS_CHECK_NEAR(f.lam[i], lam[i], 1e-9);
        GS_CHECK_NEAR(f.x[i], x[i], 1e-9);
        GS_CHECK_NEAR(f.w[i], w[i], 1e-9);
    }
    pb = ts_fx_problem(&f, 1);
    GS_CHECK_INT(ts_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info), GS_STATUS_INFEASIBLE);
    GS_CHECK_INT(info.crossover, 1);
    double gd = 0.0;
    for (int i = 0; i < 3; i++) {
        GS_CHECK_NEAR(f.lam[i], 1.0, 1e-5);
        gd += g[1][i] * f.lam[i];
    }
    GS_CHECK_NEAR(gd, -0.1, 1e-5);
    ts_fx_free(&f);
}

GS_TEST_MAIN()
