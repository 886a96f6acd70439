/* test_gi_dual_primal.c -- Goldfarb-Idnani on the dual (2) and primal (1)
 * formulations (solvers/gi_dual.c, gi_primal.c) through gs_solve: exact
 * hand-made cases, agreement with the reference oracle on generated lap and
 * sandwich models and on random models (pairs inside one part, against the
 * jig), equality-fastened pairs, warm start = cold start with fewer
 * iterations, fasteners first on/off, and the iteration limit. */
#include "gs_test.h"
#include "test_models.h"

#include "generator.h"
#include "refsolve.h"
#include "solver.h"

static const gs_form forms[2] = {GS_FORM_DUAL, GS_FORM_PRIMAL};

static gs_precomp *build(gs_model *mdl)
{
    gs_error e;
    if (!mdl->validated)
        GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_OK);
    return pc;
}

static void opts_for(gs_solve_opts *o, gs_form f)
{
    gs_solve_default_opts(o);
    o->method = GS_METHOD_GI;
    o->form = f;
    o->want_x = 1;
}

/* Solve with GI on form f; returns the status, fills lam, w, x, info. */
static gs_status solve_form(gs_solver *sv, const gs_problem *pb, const gs_solve_opts *o,
                            double *lam, double *w, double *x, gs_solve_info *info)
{
    gs_error e;
    GS_CHECK_INT(gs_solve(sv, pb, o, lam, w, x, info, &e), GS_OK);
    GS_CHECK_INT(info->form, o->form);
    GS_CHECK_INT(info->method, GS_METHOD_GI);
    return info->status;
}

GS_TEST(gi_supports_dual_and_primal)
{
    GS_CHECK(gs_method_supports(GS_METHOD_GI, GS_FORM_DUAL));
    GS_CHECK(gs_method_supports(GS_METHOD_GI, GS_FORM_PRIMAL));
    GS_CHECK(gs_method_supports(GS_METHOD_GI, GS_FORM_RELATIVE));
}

GS_TEST(chain3_exact_cases)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = build(mdl);
    gs_error e;
    gs_solver *sv = gs_solver_new(pc, &e);
    GS_CHECK(sv != NULL);
    double lam[3], w[3], x[3];
    gs_solve_info info;
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o;
        opts_for(&o, forms[fi]);
        const int dual = forms[fi] == GS_FORM_DUAL;
        /* non-degenerate: pairs 0 and 2 in contact, x = (1, 1.5, 1) */
        double g1[3] = {1, 1.7, 1};
        gs_problem pb = {.pc = pc, .g = g1};
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_OPTIMAL);
        GS_CHECK_NEAR(lam[0], 0.5, 1e-13);
        GS_CHECK_NEAR(lam[1], 0.0, 0.0);
        GS_CHECK_NEAR(lam[2], 0.5, 1e-13);
        GS_CHECK_NEAR(x[0], 1.0, 1e-13);
        GS_CHECK_NEAR(x[1], 1.5, 1e-13);
        GS_CHECK_NEAR(x[2], 1.0, 1e-13);
        GS_CHECK_NEAR(w[1], 0.2, 1e-13);
        GS_CHECK_INT(info.n_act, 2);
        /* dual: one bound (pair 1) enters; primal: pairs 0 and 2 enter */
        GS_CHECK(info.iterations >= (dual ? 1 : 2));
        GS_CHECK(gs_kkt_pass(&info.kkt, 1e-12));
        /* degenerate ties: g = 1 everywhere, lam = (0, 1, 0), w = 0 */
        double g2[3] = {1, 1, 1};
        pb.g = g2;
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_OPTIMAL);
        GS_CHECK_NEAR(lam[0], 0.0, 1e-13);
        GS_CHECK_NEAR(lam[1], 1.0, 1e-13);
        GS_CHECK_NEAR(lam[2], 0.0, 1e-13);
        for (int i = 0; i < 3; i++)
            GS_CHECK_NEAR(w[i], 0.0, 1e-13);
        /* all gaps zero: every pair in contact, lam = K u0 = (1, 1, 1); the
         * dual starts there (no step), the primal adds all three */
        double g3[3] = {0, 0, 0};
        pb.g = g3;
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_OPTIMAL);
        for (int i = 0; i < 3; i++) {
            GS_CHECK_NEAR(lam[i], 1.0, 1e-13);
            GS_CHECK_NEAR(x[i], 0.0, 1e-13);
        }
        GS_CHECK_INT(info.n_act, 3);
        if (dual)
            GS_CHECK_INT(info.iterations, 0);
        else
            GS_CHECK(info.iterations >= 3);
        /* large gaps: no contact, w = g - u0; the dual bounds all three */
        double g4[3] = {5, 5, 5};
        pb.g = g4;
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_OPTIMAL);
        for (int i = 0; i < 3; i++)
            GS_CHECK_NEAR(lam[i], 0.0, 0.0);
        GS_CHECK_NEAR(w[0], 3.5, 1e-13);
        GS_CHECK_NEAR(w[1], 3.0, 1e-13);
        GS_CHECK_NEAR(w[2], 3.5, 1e-13);
        GS_CHECK_NEAR(x[1], 2.0, 1e-13);
        GS_CHECK_INT(info.n_act, 0);
        if (dual)
            GS_CHECK(info.iterations >= 3);
        else
            GS_CHECK_INT(info.iterations, 0);
        /* equality-fastened middle pair: lam = (0.7, -0.4, 0.7) */
        unsigned char eq[3] = {0, 1, 0};
        pb.g = g1;
        pb.eq = eq;
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_OPTIMAL);
        GS_CHECK_NEAR(lam[0], 0.7, 1e-13);
        GS_CHECK_NEAR(lam[1], -0.4, 1e-13);
        GS_CHECK_NEAR(lam[2], 0.7, 1e-13);
        GS_CHECK_NEAR(w[1], 0.0, 1e-13);
        GS_CHECK_NEAR(x[1], 1.7, 1e-13);
        GS_CHECK(gs_kkt_pass(&info.kkt, 1e-12));
    }
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(two_springs_with_fastener)
{
    gs_model *mdl = tm_two_springs();
    gs_precomp *pc = build(mdl);
    gs_error e;
    gs_solver *sv = gs_solver_new(pc, &e);
    double g = 2.0, load = 6.0, lam, w, x[2];
    gs_solve_info info;
    for (int fi = 0; fi < 2; fi++)
        for (int ff = 0; ff < 2; ff++) {
            gs_solve_opts o;
            opts_for(&o, forms[fi]);
            o.fasteners_first = ff;
            g = 2.0;
            gs_problem pb = {.pc = pc, .g = &g, .load = &load};
            GS_CHECK_INT(solve_form(sv, &pb, &o, &lam, &w, x, &info), GS_STATUS_OPTIMAL);
            GS_CHECK_NEAR(lam, 3.6, 1e-13);
            GS_CHECK_NEAR(w, 0.0, 1e-13);
            /* spring 0 pushed down by 6 - 3.6 = 2.4 N: x0 = -1.2 mm; x1 = 0.8 */
            GS_CHECK_NEAR(x[0], -1.2, 1e-13);
            GS_CHECK_NEAR(x[1], 0.8, 1e-13);
            g = 7.0; /* free deflection 5 mm < 7 mm: no contact */
            GS_CHECK_INT(solve_form(sv, &pb, &o, &lam, &w, x, &info), GS_STATUS_OPTIMAL);
            GS_CHECK_NEAR(lam, 0.0, 0.0);
            GS_CHECK_NEAR(w, 2.0, 1e-13);
        }
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
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

/* Solve pb with both forms and compare with the oracle: x and w within
 * 1e-7 mm, OPTIMAL, KKT certificate at 1e-8 (the primal form is certified
 * with x and K, the dual form with its multipliers). */
static void compare_oracle(gs_solver *sv, const gs_problem *pb, int fasteners_first,
                           const char *what)
{
    const int m = pb->pc->m, n = pb->pc->n;
    double *lr = malloc(m * sizeof *lr), *wr = malloc(m * sizeof *wr), *xr = malloc(n * sizeof *xr);
    double *l = malloc(m * sizeof *l), *w = malloc(m * sizeof *w), *x = malloc(n * sizeof *x);
    gs_error e;
    gs_ref_info ri;
    GS_CHECK_INT(gs_ref_solve(pb, NULL, lr, wr, &ri, &e), GS_OK);
    GS_CHECK_INT(ri.status, GS_STATUS_OPTIMAL);
    gs_problem_primal(pb, lr, xr);
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o;
        opts_for(&o, forms[fi]);
        o.fasteners_first = fasteners_first;
        o.primal_cert = forms[fi] == GS_FORM_PRIMAL;
        gs_solve_info info;
        gs_status st = solve_form(sv, pb, &o, l, w, x, &info);
        GS_CHECK_MSG(st == GS_STATUS_OPTIMAL, "%s %s: status %s", what, gs_form_name(o.form),
                     gs_status_name(st));
        GS_CHECK_MSG(gs_kkt_pass(&info.kkt, 1e-8),
                     "%s %s: pinf %.3g dinf %.3g comp %.3g stat %.3g", what,
                     gs_form_name(o.form), info.kkt.primal_infeas, info.kkt.dual_infeas,
                     info.kkt.complementarity, info.kkt.stationarity);
        GS_CHECK_INT(info.kkt.primal, o.primal_cert);
        double dx = 0, dw = 0;
        for (int k = 0; k < n; k++)
            dx = fmax(dx, fabs(x[k] - xr[k]));
        for (int k = 0; k < m; k++)
            dw = fmax(dw, fabs(w[k] - wr[k]));
        GS_CHECK_MSG(dx <= 1e-7 && dw <= 1e-7, "%s %s: |dx| %.3g |dw| %.3g mm", what,
                     gs_form_name(o.form), dx, dw);
        /* the same contact set, up to degenerate pairs (w = 0 and a force at
         * the round-off level of the solution, e.g. on pairs with g = 0) */
        GS_CHECK_INT(significant(l, m), significant(lr, m));
    }
    free(lr); free(wr); free(xr); free(l); free(w); free(x);
}

static gs_model *small_model(gs_gen_kind kind)
{
    gs_gen_params gp;
    gs_gen_small_params(kind, &gp);
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &mdl, NULL, &e), GS_OK);
    return mdl;
}

static void oracle_cloud(gs_gen_kind kind)
{
    gs_model *mdl = small_model(kind);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m, ngaps = 3;
    gs_error e;
    double *G = malloc((size_t)ngaps * m * sizeof *G), *load = malloc(m * sizeof *load);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1), *eq = calloc(m, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, ngaps, 7, NULL, G, &e), GS_OK);
    gs_solver *sv = gs_solver_new(pc, &e);
    const double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int f = 0; f < 4; f++) {
        gs_gen_pattern(mdl, fr[f], inst);
        gs_model_pattern_load(mdl, inst, load);
        for (int r = 0; r < ngaps; r++) {
            gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
            compare_oracle(sv, &pb, 1, gs_gen_kind_name(kind));
            if (r == 0)
                compare_oracle(sv, &pb, 0, "fasteners not first");
        }
        /* gaps scaled down 100x: almost every pair in contact */
        double *g = malloc(m * sizeof *g);
        for (int k = 0; k < m; k++)
            g[k] = 0.01 * G[k];
        gs_problem pb = {.pc = pc, .g = g, .load = load};
        compare_oracle(sv, &pb, 1, "small gaps");
        free(g);
    }
    /* equality-fastened pairs: two candidates without a load, one with */
    gs_gen_pattern(mdl, 0.5, inst);
    gs_model_pattern_load(mdl, inst, load);
    int ne = 0;
    for (int i = 0; i < mdl->n_fast && ne < 2; i++)
        if (!inst[i]) {
            eq[mdl->fast[i].pair] = 1;
            ne++;
        }
    for (int i = 0; i < mdl->n_fast; i++)
        if (inst[i]) {
            eq[mdl->fast[i].pair] = 1;
            ne++;
            break;
        }
    GS_CHECK_INT(ne, 3);
    for (int r = 0; r < ngaps; r++) {
        gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load, .eq = eq};
        compare_oracle(sv, &pb, 1, "equality pairs");
    }
    gs_solver_free(sv);
    free(G); free(load); free(inst); free(eq);
    gs_precomp_free(pc);
    gs_model_free(mdl);
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
        gs_model *mdl = tm_random(parts, 6, 3, 300 + seed);
        gs_precomp *pc = build(mdl);
        const int m = mdl->m;
        gs_error e;
        gs_solver *sv = gs_solver_new(pc, &e);
        double *g = malloc(m * sizeof *g), *load = malloc(m * sizeof *load);
        unsigned char *inst = calloc(mdl->n_fast + 1, 1), *eq = calloc(m, 1);
        for (int v = 0; v < 4; v++) {
            for (int k = 0; k < m; k++)
                g[k] = (v == 3 ? 0.02 : 0.4) * tm_unif();
            for (int i = 0; i < mdl->n_fast; i++)
                inst[i] = (unsigned char)((i + v) % 2);
            gs_model_pattern_load(mdl, inst, load);
            if (v == 2)
                eq[(int)(seed % (uint64_t)m)] = 1;
            gs_problem pb = {.pc = pc, .g = g, .load = load, .eq = v == 2 ? eq : NULL};
            compare_oracle(sv, &pb, 1, "random model");
            cases++;
        }
        gs_solver_free(sv);
        free(g); free(load); free(inst); free(eq);
        gs_precomp_free(pc);
        gs_model_free(mdl);
    }
    GS_CHECK_INT(cases, 24);
}

/* Warm start from the solution of a neighbouring problem (the fastener
 * pattern changed by one fastener): same answer as the cold start, fewer
 * iterations, warm_used set; a warm start from the problem's own solution
 * needs no GI step at all. */
GS_TEST(warm_start_equals_cold_and_saves_iterations)
{
    gs_model *mdl = small_model(GS_GEN_LAP);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m, n = mdl->n;
    gs_error e;
    gs_solver *sv = gs_solver_new(pc, &e);
    double *G = malloc(2 * (size_t)m * sizeof *G), *load = malloc(m * sizeof *load);
    double *l0 = malloc(m * sizeof *l0), *lc = malloc(m * sizeof *lc), *lw = malloc(m * sizeof *lw);
    double *w = malloc(m * sizeof *w), *xc = malloc(n * sizeof *xc), *xw = malloc(n * sizeof *xw);
    int *act = malloc(m * sizeof *act);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 2, 5, NULL, G, &e), GS_OK);
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o;
        opts_for(&o, forms[fi]);
        gs_solve_info ic, iw;
        gs_gen_pattern(mdl, 0.5, inst);
        gs_model_pattern_load(mdl, inst, load);
        gs_problem pb = {.pc = pc, .g = G, .load = load};
        GS_CHECK_INT(solve_form(sv, &pb, &o, l0, w, xc, &ic), GS_STATUS_OPTIMAL);
        int k = 0;
        for (int i = 0; i < m; i++)
            if (l0[i] != 0.0)
                act[k++] = i;
        GS_CHECK(k > 0 && k < m);
        gs_warm warm = {.n_act = k, .act = act, .lam = l0};
        /* the same problem, warm: nothing left to do */
        gs_solve_opts ow = o;
        ow.warm = &warm;
        GS_CHECK_INT(solve_form(sv, &pb, &ow, lw, w, xw, &iw), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(iw.warm_used, 1);
        GS_CHECK_INT(iw.warm_kept, k);
        GS_CHECK_INT(iw.iterations, 0);
        for (int i = 0; i < m; i++)
            GS_CHECK_NEAR(lw[i], l0[i], 1e-9 * fmax(1.0, fabs(l0[i])));
        /* neighbouring problem: one fastener more (the first not installed) */
        int changed = -1;
        for (int i = 0; i < mdl->n_fast && changed < 0; i++)
            if (!inst[i])
                inst[changed = i] = 1;
        GS_CHECK(changed >= 0);
        gs_model_pattern_load(mdl, inst, load);
        GS_CHECK_INT(solve_form(sv, &pb, &o, lc, w, xc, &ic), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(ic.warm_used, 0);
        GS_CHECK_INT(solve_form(sv, &pb, &ow, lw, w, xw, &iw), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(iw.warm_used, 1);
        GS_CHECK(iw.warm_kept > 0);
        GS_CHECK(gs_kkt_pass(&iw.kkt, 1e-8));
        double dx = 0;
        for (int i = 0; i < n; i++)
            dx = fmax(dx, fabs(xw[i] - xc[i]));
        GS_CHECK_MSG(dx <= 1e-9, "%s: warm vs cold |dx| %.3g", gs_form_name(o.form), dx);
        GS_CHECK_INT(iw.n_act, ic.n_act);
        GS_CHECK_MSG(iw.iterations < ic.iterations, "%s: warm %d vs cold %d iterations",
                     gs_form_name(o.form), iw.iterations, ic.iterations);
        /* a warm set that is mostly wrong (the other gap vector's solution is
         * applied to a scaled-up gap): still the cold answer */
        double *g2 = malloc(m * sizeof *g2);
        for (int i = 0; i < m; i++)
            g2[i] = 3.0 * G[m + i];
        gs_problem pb2 = {.pc = pc, .g = g2, .load = load};
        GS_CHECK_INT(solve_form(sv, &pb2, &o, lc, w, xc, &ic), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(solve_form(sv, &pb2, &ow, lw, w, xw, &iw), GS_STATUS_OPTIMAL);
        dx = 0;
        for (int i = 0; i < n; i++)
            dx = fmax(dx, fabs(xw[i] - xc[i]));
        GS_CHECK_MSG(dx <= 1e-9, "%s: bad warm set |dx| %.3g", gs_form_name(o.form), dx);
        free(g2);
    }
    gs_solver_free(sv);
    free(G); free(load); free(l0); free(lc); free(lw); free(w); free(xc); free(xw); free(act);
    free(inst);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* The iteration cap ends in GS_STATUS_MAX_ITER; the default cap solves. */
GS_TEST(iteration_limit)
{
    gs_model *mdl = small_model(GS_GEN_LAP);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m, n = mdl->n;
    gs_error e;
    gs_solver *sv = gs_solver_new(pc, &e);
    double *g = malloc(m * sizeof *g), *lam = malloc(m * sizeof *lam), *w = malloc(m * sizeof *w);
    double *x = malloc(n * sizeof *x), *load = malloc(m * sizeof *load);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 1, 3, NULL, g, &e), GS_OK);
    gs_gen_pattern(mdl, 0.5, inst);
    gs_model_pattern_load(mdl, inst, load);
    gs_problem pb = {.pc = pc, .g = g, .load = load};
    for (int fi = 0; fi < 2; fi++) {
        gs_solve_opts o;
        opts_for(&o, forms[fi]);
        gs_solve_info info;
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_OPTIMAL);
        const int need = info.iterations;
        GS_CHECK(need > 3);
        o.max_iter = 3;
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_MAX_ITER);
        GS_CHECK(info.iterations >= 3 && info.iterations < need);
        o.max_iter = need + 1;
        GS_CHECK_INT(solve_form(sv, &pb, &o, lam, w, x, &info), GS_STATUS_OPTIMAL);
        GS_CHECK_INT(info.iterations, need);
    }
    gs_solver_free(sv);
    free(g); free(lam); free(w); free(x); free(load); free(inst);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST_MAIN()
