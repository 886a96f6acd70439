/* test_npm.c -- Newton projection (solvers/npm.c): every reduced-system
 * solver x line search x formulation (dual, relative, primal through the
 * square change of variables) agrees with the oracle (1e-7 mm on x
 * and w, contact-set size) on small lap and sandwich models at fastener
 * fractions 0 / 0.1 / 0.5 / 1; inner CG iterations reported for cg and
 * combined; warm start equal to cold with fewer Newton iterations; the
 * iteration limit. (Exact cases, default options: test_solvers_agree.c.) */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#define KKT_TOL 1e-9

static const gs_npm_linear LIN[3] = {GS_NPM_LIN_COMBINED, GS_NPM_LIN_CHOL, GS_NPM_LIN_CG};
static const gs_linesearch LS[3] = {GS_LS_EXACT, GS_LS_GOLDEN, GS_LS_ARMIJO};
static const gs_form FORMS[3] = {GS_FORM_DUAL, GS_FORM_RELATIVE, GS_FORM_PRIMAL};
#define NFORMS 3

static void agree_all_variants(gs_gen_kind kind, int ngaps)
{
    static const double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int fi = 0; fi < 4; fi++) {
        ts_fixture f;
        ts_fx_generate(&f, kind, 0, ngaps, 11, fr[fi]);
        for (int r = 0; r < ngaps; r++) {
            gs_problem pb = ts_fx_problem(&f, r);
            gs_ref_info ri = ts_fx_reference(&f, &pb);
            for (int fo = 0; fo < NFORMS; fo++)
                for (int li = 0; li < 3; li++)
                    for (int si = 0; si < 3; si++) {
                        static char what[128];
                        snprintf(what, sizeof what, "%s fraction %.1f gap %d %s lin %d ls %d",
                                 gs_gen_kind_name(kind), fr[fi], r, gs_form_name(FORMS[fo]), li,
                                 si);
                        ts_what = what;
                        gs_solve_opts o = ts_opts(GS_METHOD_NPM, FORMS[fo]);
                        o.npm_linear = LIN[li];
                        o.linesearch = LS[si];
                        gs_solve_info info;
                        ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
                        ts_check_matches_ref(&f, what);
                        GS_CHECK_MSG(info.n_act == ri.n_act, "%s: n_act %d != %d", what,
                                     info.n_act, ri.n_act);
                        GS_CHECK(info.iterations >= (ri.n_act > 0 ? 1 : 0));
                        if (LIN[li] == GS_NPM_LIN_CG && ri.n_act > 0)
                            GS_CHECK_MSG(info.cg_iterations > 0, "%s: no CG iteration", what);
                        if (LIN[li] == GS_NPM_LIN_CHOL)
                            GS_CHECK_INT(info.cg_iterations, 0);
                    }
        }
        ts_what = "";
        ts_fx_free(&f);
    }
}

GS_TEST(all_variants_agree_lap) { agree_all_variants(GS_GEN_LAP, 3); }

GS_TEST(all_variants_agree_sandwich) { agree_all_variants(GS_GEN_SANDWICH, 3); }

/* combined reports its CG iterations (it starts with CG) */
GS_TEST(combined_reports_cg)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 5, 0.5);
    gs_problem pb = ts_fx_problem(&f, 0);
    for (int fo = 0; fo < NFORMS; fo++) {
        gs_solve_opts o = ts_opts(GS_METHOD_NPM, FORMS[fo]);
        gs_solve_info info;
        ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
        GS_CHECK(info.n_act > 0);
        GS_CHECK(info.cg_iterations > 0);
    }
    ts_fx_free(&f);
}

/* Warm start from the solution itself: same answer, used, all kept, and
 * fewer Newton iterations than cold; then from a neighbouring gap. */
GS_TEST(warm_start_equals_cold_fewer_iterations)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 2, 3, 0.5);
    for (int fo = 0; fo < NFORMS; fo++)
        for (int li = 0; li < 3; li++) {
            gs_solve_opts o = ts_opts(GS_METHOD_NPM, FORMS[fo]);
            o.npm_linear = LIN[li];
            gs_problem pb = ts_fx_problem(&f, 0);
            gs_solve_info cold, warm;
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &cold, KKT_TOL);
            GS_CHECK(cold.n_act > 0);
            ts_fx_reference(&f, &pb);
            int k = ts_contact_set(f.lam, NULL, f.m, f.act);
            gs_warm wm = {.n_act = k, .act = f.act, .lam = f.lam};
            o.warm = &wm;
            double *lam0 = malloc((size_t)f.m * sizeof *lam0);
            memcpy(lam0, f.lam, (size_t)f.m * sizeof *lam0);
            wm.lam = lam0;
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &warm, KKT_TOL);
            ts_check_matches_ref(&f, "warm from itself");
            GS_CHECK_INT(warm.warm_used, 1);
            GS_CHECK_INT(warm.warm_kept, k);
            GS_CHECK_MSG(warm.iterations < cold.iterations, "%s lin %d: warm %d >= cold %d",
                         gs_form_name(FORMS[fo]), li, warm.iterations, cold.iterations);
            /* neighbouring gap: warm = cold */
            pb = ts_fx_problem(&f, 1);
            ts_fx_reference(&f, &pb);
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &warm, KKT_TOL);
            ts_check_matches_ref(&f, "warm from the neighbour");
            GS_CHECK_INT(warm.warm_used, 1);
            free(lam0);
        }
    ts_fx_free(&f);
}

GS_TEST(max_iter)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 3, 1.0);
    gs_problem pb = ts_fx_problem(&f, 0);
    for (int fo = 0; fo < NFORMS; fo++) {
        gs_solve_opts o = ts_opts(GS_METHOD_NPM, FORMS[fo]);
        gs_solve_info info;
        ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
        GS_CHECK(info.iterations >= 2);
        o.max_iter = 1;
        GS_CHECK_INT(ts_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info), GS_STATUS_MAX_ITER);
        GS_CHECK_INT(info.iterations, 1);
        for (int i = 0; i < f.m; i++)
            GS_CHECK(f.lam[i] >= 0.0);
    }
    ts_fx_free(&f);
}

/* No contact: zero multipliers exactly (dual: no Newton system at all). */
GS_TEST(chain3_no_contact)
{
    ts_fixture f;
    ts_fx_open(&f, tm_chain3(), 1);
    for (int fo = 0; fo < NFORMS; fo++) {
        gs_solve_opts o = ts_opts(GS_METHOD_NPM, FORMS[fo]);
        gs_solve_info info;
        ts_chain3_solve(&f, &o, TS_C3_NO_CONTACT, &info);
        GS_CHECK_INT(info.n_act, 0);
        for (int i = 0; i < 3; i++)
            GS_CHECK(f.lam[i] == 0.0);
    }
    ts_fx_free(&f);
}

/* Primal (4) on random models whose pairs chain through three parts (nodes
 * in two pairs, jig pairs, a pair inside one part): the peeled matching and
 * the O(n) A~^-T / A~^-1 sweeps against the oracle, every option. */
GS_TEST(primal_random_three_parts)
{
    GS_CHECK(gs_method_supports(GS_METHOD_NPM, GS_FORM_PRIMAL));
    for (int seed = 1; seed <= 3; seed++) {
        ts_fixture f;
        ts_fx_open(&f, tm_random(3, 6, 3, (uint64_t)seed), 1);
        GS_CHECK(f.m < f.n);
        for (int k = 0; k < f.m; k++)
            f.G[k] = 0.2 * (tm_unif() - 0.3);
        ts_fx_pattern(&f, 0.5);
        gs_problem pb = ts_fx_problem(&f, 0);
        gs_ref_info ri = ts_fx_reference(&f, &pb);
        for (int li = 0; li < 3; li++)
            for (int si = 0; si < 3; si++) {
                gs_solve_opts o = ts_opts(GS_METHOD_NPM, GS_FORM_PRIMAL);
                o.npm_linear = LIN[li];
                o.linesearch = LS[si];
                o.primal_cert = li == 0; /* the independent certificate with x and K */
                gs_solve_info info;
                ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
                GS_CHECK_INT(info.form, GS_FORM_PRIMAL);
                ts_check_matches_ref(&f, "random three parts");
                GS_CHECK_INT(info.n_act, ri.n_act);
            }
        ts_fx_free(&f);
    }
}

/* Pairs closing a cycle over shared DOFs (m < n, Q nonsingular): no
 * triangular square completion, a clean unsupported error; the other forms
 * still solve it. */
GS_TEST(primal_cycle_unsupported)
{
    gs_model *mdl = gs_model_new(1, 4, 3, 0, NULL);
    gs_model_alloc_block(mdl, 0, 4, NULL);
    for (int i = 0; i < 4; i++) {
        mdl->parts[0].K[i * 5] = 2.0;
        mdl->nodes[i] = (gs_node){.part = 0, .dof = i, .xyz = {i, 0, 0}};
    }
    for (int k = 0; k < 3; k++)
        mdl->pairs[k] = (gs_pair){.node = {k, (k + 1) % 3}, .coef = {1.0, 1.0}};
    gs_model_alloc_f(mdl, NULL);
    for (int i = 0; i < 4; i++)
        mdl->f[i] = 1.0;
    ts_fixture f;
    ts_fx_open(&f, mdl, 1);
    gs_problem pb = ts_fx_problem(&f, 0);
    gs_solve_opts o = ts_opts(GS_METHOD_NPM, GS_FORM_PRIMAL);
    gs_solve_info info;
    gs_error e;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "cycle") != NULL);
    o = ts_opts(GS_METHOD_NPM, GS_FORM_DUAL);
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, KKT_TOL);
    GS_CHECK(info.n_act > 0);
    ts_fx_free(&f);
}

GS_TEST_MAIN()
