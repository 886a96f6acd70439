/* test_solvers_agree.c -- every available method x formulation: the exact
 * hand-made cases (test_solver_support.h: chain3 and two springs, values to
 * 1e-14 or 1e-13), and against the reference oracle: generated lap and
 * sandwich models across fastener fractions (x and w within 1e-7 mm, KKT
 * certificates), and the degenerate cases (all gaps zero, no contact, every
 * pair in contact, duplicate gaps and ties, a node in two pairs,
 * equality-fastened pairs), many small clouds (more on demand:
 * GS_STRESS_SEEDS), warm = cold. Methods added later are picked up
 * through gs_method_supports (test_lemke.c and test_gi_dual_primal.c check
 * that it lists theirs). */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

typedef struct { gs_method m; gs_form f; } variant;

static int variants(variant *v)
{
    int nv = 0;
    for (int m = GS_METHOD_GI; m < GS_METHOD__COUNT; m++)
        for (int f = GS_FORM_DUAL; f < GS_FORM__COUNT; f++)
            if (m != GS_METHOD_REF && gs_method_supports((gs_method)m, (gs_form)f))
                v[nv++] = (variant){(gs_method)m, (gs_form)f};
    return nv;
}

static void each_variant(void (*check)(gs_method, gs_form))
{
    variant v[32];
    int nv = variants(v);
    GS_CHECK(nv >= 1);
    for (int i = 0; i < nv; i++)
        check(v[i].m, v[i].f);
}

GS_TEST(exact_chain3_every_variant)
{
    each_variant(ts_check_exact_chain3);
}

GS_TEST(exact_two_springs_every_variant)
{
    each_variant(ts_check_exact_two_springs);
}

/* Solve pb with every variant (into f's lam, w, x) and the oracle (lr, wr,
 * xr); compare x and w (mm). warm: NULL (cold), or every variant starts
 * from it. */
static void compare_all_from(ts_fixture *f, const gs_problem *pb, const char *what,
                             const gs_warm *warm)
{
    ts_what = what;
    ts_fx_reference(f, pb);
    variant v[32];
    int nv = variants(v);
    GS_CHECK(nv >= 1);
    for (int i = 0; i < nv; i++) {
        gs_solve_opts o = ts_opts(v[i].m, v[i].f);
        o.warm = warm;
        gs_solve_info info;
        ts_solve_ok(f->sv, pb, &o, f->lam, f->w, f->x, &info, 1e-8);
        char msg[96];
        snprintf(msg, sizeof msg, "%s: %s/%s%s", what, gs_method_name(o.method),
                 gs_form_name(o.form), warm ? " warm" : "");
        ts_check_matches_ref(f, msg);
    }
    ts_what = "";
}

static void compare_all(ts_fixture *f, const gs_problem *pb, const char *what)
{
    compare_all_from(f, pb, what, NULL);
}

/* The cloud of ngaps gaps (seed) of a generated model at every fraction,
 * then with equality-fastened pairs; the failure message names the seed,
 * the fraction and the gap. */
static void cloud_case_seed(gs_gen_kind kind, int ngaps, double scale, unsigned long long seed,
                            int warm_too)
{
    ts_fixture f;
    ts_fx_generate(&f, kind, scale, ngaps, seed, 0.0);
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    char what[96];
    double *prev = malloc((size_t)f.m * sizeof *prev);
    GS_CHECK(prev != NULL);
    int have_prev = 0;
    for (int a = 0; a < 4; a++) {
        ts_fx_pattern(&f, fr[a]);
        for (int r = 0; r < ngaps; r++) {
            gs_problem pb = ts_fx_problem(&f, r);
            snprintf(what, sizeof what, "%s seed %llu fraction %.1f gap %d",
                     gs_gen_kind_name(kind), seed, fr[a], r);
            compare_all(&f, &pb, what);
            /* warm from the previous problem's answer (another gap, or at
             * a new fraction another pattern: the daemon's move clouds) */
            if (warm_too && have_prev) {
                gs_warm warm = {.n_act = ts_contact_set(prev, NULL, f.m, f.act), .act = f.act,
                                .lam = prev};
                compare_all_from(&f, &pb, what, &warm);
            }
            memcpy(prev, f.lr, (size_t)f.m * sizeof *prev);
            have_prev = 1;
        }
    }
    free(prev);
    /* equality-fastened pairs: two candidates without load */
    ts_fx_pattern(&f, 0.5);
    ts_fx_fasten_uninstalled(&f, 2);
    gs_problem pb = ts_fx_problem(&f, 0);
    pb.eq = f.eq;
    snprintf(what, sizeof what, "equality pairs, %s seed %llu", gs_gen_kind_name(kind), seed);
    compare_all(&f, &pb, what);
    ts_fx_free(&f);
}

static void cloud_case(gs_gen_kind kind, int ngaps, double scale)
{
    cloud_case_seed(kind, ngaps, scale, 11, 0);
}

/* Many small clouds, each of two gaps, on the small models, each problem
 * cold and warm from the previous problem's answer: 8 by default, of the
 * lap and sandwich models; GS_STRESS_SEEDS=N (from GS_STRESS_START,
 * default 100) runs N, of the models GS_STRESS_KINDS names (comma-separated
 * generator kinds, e.g. "lap,sandwich,lap-fine") at GS_STRESS_SCALE (the
 * paper-size model refined by it, e.g. 0.3; default 0: the small models),
 * the way the IPM's cycling gaps were found (4 of 3,000: test_ipm). */
GS_TEST(many_small_clouds)
{
    const char *n_env = getenv("GS_STRESS_SEEDS"), *s_env = getenv("GS_STRESS_START"),
               *k_env = getenv("GS_STRESS_KINDS"), *sc_env = getenv("GS_STRESS_SCALE");
    const double scale = sc_env ? atof(sc_env) : 0.0;
    const int n = n_env ? (atoi(n_env) > 0 ? atoi(n_env) : 0) : 8;
    const unsigned long long s0 = s_env ? strtoull(s_env, NULL, 10) : 100;
    gs_gen_kind kinds[8];
    int nk = 0;
    char names[128];
    snprintf(names, sizeof names, "%s", k_env ? k_env : "lap,sandwich");
    for (char *save = NULL, *t = strtok_r(names, ",", &save); t && nk < 8;
         t = strtok_r(NULL, ",", &save)) {
        GS_CHECK_MSG(gs_gen_kind_parse(t, &kinds[nk]) == 0, "GS_STRESS_KINDS: no model '%s'", t);
        nk++;
    }
    memset(ts_crossovers, 0, sizeof ts_crossovers);
    for (unsigned long long sd = s0; sd < s0 + (unsigned long long)n; sd++)
        for (int k = 0; k < nk; k++)
            cloud_case_seed(kinds[k], 2, scale, sd, 1);
    ts_print_crossovers();
}

/* The clouds on which an iteration cycled until it gave up (no_progress):
 * the primal NPM on 3 of 3,000 small lap-fine ones (two contact sets, each
 * polish leaving violations of 4e-8 - 1e-7 mm), GI dual on a sandwich at
 * scale 0.3 at 0% (its polish rounds, M = Q^-1 rounded, one pair in and
 * out). With the crossover to GI relative at their caps
 * (gs_gi_relative_finish) every method is optimal and within 1e-7 mm of
 * the oracle, cold and warm. Whether a cycle occurs depends on the
 * rounding of the BLAS kernels (GI dual's: Zen and Haswell kernels, not
 * Prescott): the count is printed. */
GS_TEST(crossover_where_an_iteration_cycled)
{
    static const unsigned long long seeds[] = {695, 1799, 2106};
    memset(ts_crossovers, 0, sizeof ts_crossovers);
    for (int a = 0; a < 3; a++)
        cloud_case_seed(GS_GEN_LAP_FINE, 2, 0, seeds[a], 1);
    cloud_case_seed(GS_GEN_SANDWICH, 2, 0.3, 102, 1);
    ts_print_crossovers();
}

GS_TEST(lap_cloud_all_fractions)
{
    cloud_case(GS_GEN_LAP, 4, 0);
}

GS_TEST(sandwich_cloud_all_fractions_nodes_in_two_pairs)
{
    cloud_case(GS_GEN_SANDWICH, 4, 0);
}

/* Closer to production: the lap joint at half resolution (n ~ 1,300, cond(K)
 * ~ 1e6) and the sandwich at 0.4 (nodes in two pairs, jig pairs). */
GS_TEST(medium_models_all_fractions)
{
    cloud_case(GS_GEN_LAP, 2, 0.5);
    cloud_case(GS_GEN_SANDWICH, 2, 0.4);
}

/* Degenerate gap vectors on the small sandwich model. */
GS_TEST(degenerate_gaps)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 11, 1.0);
    const int m = f.m;
    double *g = f.G;
    gs_problem pb = {.pc = f.pc, .g = g, .load = f.load};
    for (int k = 0; k < m; k++) /* all gaps zero, all fasteners: contact everywhere loaded */
        g[k] = 0.0;
    compare_all(&f, &pb, "zero gaps");
    for (int k = 0; k < m; k++) /* duplicate gaps: one value for every pair -> ties */
        g[k] = 0.05;
    compare_all(&f, &pb, "equal gaps");
    for (int k = 0; k < m; k++) /* huge gaps: no contact at all */
        g[k] = 1e4;
    compare_all(&f, &pb, "no contact");
    pb.load = NULL; /* no load at all: nothing moves */
    for (int k = 0; k < m; k++)
        g[k] = 0.3;
    compare_all(&f, &pb, "no load");
    ts_fx_free(&f);
}

/* The degenerate families (test_solver_support.h) for every variant and auto
 * against the oracle, exact and under ulp jitter of gaps and loads (the rounding
 * differences of other BLAS kernels, exercised on any CPU): the lap joint at
 * 0.5 of the fasteners, the sandwich with all of them, and the twin chains
 * (duplicated geometry: exact ties across parts). */
static void degenerate_families(ts_fixture *f, double equal_gap, int seeds)
{
    const int m = f->m;
    double *load0 = malloc((size_t)m * sizeof *load0);
    memcpy(load0, f->load, (size_t)m * sizeof *load0);
    for (int d = 0; d < TS_DG__COUNT; d++)
        for (int seed = 0; seed < seeds; seed++) {
            memcpy(f->load, load0, (size_t)m * sizeof *load0);
            gs_problem pb = {.pc = f->pc, .g = f->G, .load = f->load};
            ts_degenerate_gaps(&pb, (ts_degenerate)d, equal_gap, f->G, f->load,
                               (uint64_t)seed);
            compare_all(f, &pb, ts_degenerate_name((ts_degenerate)d));
            gs_solve_opts o = ts_opts(GS_METHOD_AUTO, GS_FORM_DEFAULT); /* and auto */
            gs_solve_info info;
            ts_what = ts_degenerate_name((ts_degenerate)d);
            ts_solve_ok(f->sv, &pb, &o, f->lam, f->w, f->x, &info, 1e-8);
            ts_check_matches_ref(f, "auto");
            ts_what = "";
        }
    free(load0);
}

GS_TEST(degenerate_families_every_variant_every_rounding)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 1, 5, 0.5);
    degenerate_families(&f, 0.05, 6);
    ts_fx_free(&f);
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 5, 1.0);
    degenerate_families(&f, 0.05, 6);
    ts_fx_free(&f);
    ts_fx_open(&f, tm_twin_chains(), 1);
    degenerate_families(&f, 1.0, 6);
    ts_fx_free(&f);
}

/* Every pair in contact: the chain against the jig with zero gaps. */
GS_TEST(every_pair_in_contact_and_symmetric_ties)
{
    ts_fixture f;
    ts_fx_open(&f, tm_chain3(), 1);
    gs_problem pb = ts_chain3_problem(f.pc, TS_C3_ALL_CONTACT);
    compare_all(&f, &pb, "all in contact");
    pb = ts_chain3_problem(f.pc, TS_C3_TIES); /* lam = (0, 1, 0) with w = 0 everywhere */
    compare_all(&f, &pb, "ties");
    pb = ts_chain3_problem(f.pc, TS_C3_TWO_CONTACTS); /* symmetric pair of contacts */
    compare_all(&f, &pb, "symmetric");
    ts_fx_free(&f);
}

/* Warm start from a neighbouring solution gives the cold answer. */
GS_TEST(warm_equals_cold)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 2, 5, 0.5);
    const int m = f.m;
    double *l0 = malloc(m * sizeof *l0), *l1 = malloc(m * sizeof *l1), *l2 = malloc(m * sizeof *l2);
    gs_error e;
    variant v[32];
    int nv = variants(v);
    for (int i = 0; i < nv; i++) {
        gs_solve_opts o = ts_opts(v[i].m, v[i].f);
        o.want_x = 0;
        gs_solve_info info;
        gs_problem pb = ts_fx_problem(&f, 0);
        GS_CHECK_INT(gs_solve(f.sv, &pb, &o, l0, NULL, NULL, &info, &e), GS_OK);
        gs_problem pb2 = ts_fx_problem(&f, 1); /* another gap */
        GS_CHECK_INT(gs_solve(f.sv, &pb2, &o, l1, NULL, NULL, &info, &e), GS_OK);
        gs_warm warm = {.n_act = ts_contact_set(l0, NULL, m, f.act), .act = f.act, .lam = l0};
        o.warm = &warm;
        GS_CHECK_INT(gs_solve(f.sv, &pb2, &o, l2, NULL, NULL, &info, &e), GS_OK);
        GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
        for (int k = 0; k < m; k++)
            GS_CHECK_MSG(fabs(l1[k] - l2[k]) <= 1e-8 * (1 + fabs(l1[k])), "%s/%s pair %d",
                         gs_method_name(o.method), gs_form_name(o.form), k);
    }
    free(l0); free(l1); free(l2);
    ts_fx_free(&f);
}

/* The solver keeps u0 + Q load for the load it last saw (solver.c,
 * dual_data): gaps under two patterns taken alternately by one solver give
 * bitwise what a fresh solver gives for each, a load changed in place (the
 * same buffer) included, and so does a problem without load. */
GS_TEST(load_part_follows_the_load)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 2, 9, 0.5);
    const int m = f.m;
    double *load2 = malloc(m * sizeof *load2), *lf = malloc(m * sizeof *lf);
    double *lk = malloc(m * sizeof *lk);
    unsigned char *inst = malloc((size_t)f.mdl->n_fast);
    memcpy(inst, f.inst, (size_t)f.mdl->n_fast);
    for (int i = 0; i < f.mdl->n_fast; i++) /* one fastener moved */
        if (!inst[i]) {
            inst[i] = 1;
            break;
        }
    for (int i = 0; i < f.mdl->n_fast; i++)
        if (inst[i]) {
            inst[i] = 0;
            break;
        }
    gs_model_pattern_load(f.mdl, inst, load2);
    gs_error e;
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.want_x = 0;
    const double *loads[5] = {f.load, load2, f.load, NULL, load2};
    for (int q = 0; q < 5; q++) {
        gs_problem pb = ts_fx_problem(&f, q % 2);
        pb.load = loads[q];
        gs_solve_info ik, ifr;
        GS_CHECK_INT(gs_solve(f.sv, &pb, &o, lk, NULL, NULL, &ik, &e), GS_OK);
        gs_solver *fresh = gs_solver_new(f.pc, &e);
        GS_CHECK(fresh != NULL);
        GS_CHECK_INT(gs_solve(fresh, &pb, &o, lf, NULL, NULL, &ifr, &e), GS_OK);
        GS_CHECK_MSG(memcmp(lk, lf, (size_t)m * sizeof *lk) == 0, "solve %d", q);
        GS_CHECK(ik.kkt.obj_dual == ifr.kkt.obj_dual);
        gs_solver_free(fresh);
    }
    /* the same buffer, changed in place: a new load */
    memcpy(load2, f.load, (size_t)m * sizeof *load2);
    gs_problem pb = ts_fx_problem(&f, 0);
    pb.load = load2;
    gs_solve_info ik, ifr;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, lk, NULL, NULL, &ik, &e), GS_OK);
    pb.load = f.load;
    gs_solver *fresh = gs_solver_new(f.pc, &e);
    GS_CHECK_INT(gs_solve(fresh, &pb, &o, lf, NULL, NULL, &ifr, &e), GS_OK);
    GS_CHECK(memcmp(lk, lf, (size_t)m * sizeof *lk) == 0);
    gs_solver_free(fresh);
    free(load2); free(lf); free(lk); free(inst);
    ts_fx_free(&f);
}

/* Gaps that contradict (tm_loop3: three pairs around a loop whose gaps sum
 * to -0.1 mm, Q singular, L_Q deferred). GI relative, Lemke (its ray, then
 * GI from its contact set: a crossover) and auto end `infeasible` with the
 * Farkas certificate in lam: exactly d = (1, 1, 1, 0), A d = 0, g'd = -0.1,
 * and w, x those of lam = d (w = Q d - p = g - A'K^-1 f, x = K^-1 f); so
 * does GI on the primal form. Every other variant that runs without L_Q
 * ends not optimal. Then a feasible gap
 * on the same solvers, cold and warm: optimal and certified. */
GS_TEST(contradicting_gaps_are_infeasible)
{
    ts_fixture f;
    ts_fx_open_ex(&f, tm_loop3(0), 2, GS_PRECOMP_DEFER_LQ);
    const double g[2][4] = {{0.1, 0.1, -0.3, 0.5}, {0.1, 0.1, 0.3, 0.5}};
    memcpy(f.G, g, sizeof g);
    /* A'K^-1 f with K^-1 f = (1, 0, -1/4): pairs (1, 1/4, -5/4, 1) */
    const double atx[4] = {1.0, 0.25, -1.25, 1.0}, d[4] = {1.0, 1.0, 1.0, 0.0};
    const variant shows[4] = {{GS_METHOD_GI, GS_FORM_RELATIVE},
                              {GS_METHOD_GI, GS_FORM_PRIMAL},
                              {GS_METHOD_LEMKE, GS_FORM_DEFAULT},
                              {GS_METHOD_AUTO, GS_FORM_DEFAULT}};
    for (int i = 0; i < 4; i++) {
        gs_solve_opts o = ts_opts(shows[i].m, shows[i].f);
        gs_problem pb = ts_fx_problem(&f, 0);
        gs_solve_info info;
        gs_error e;
        GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info, &e), GS_OK);
        GS_CHECK_STR(gs_status_name(info.status), "infeasible");
        GS_CHECK_INT(info.crossover, shows[i].m == GS_METHOD_LEMKE);
        GS_CHECK_INT(info.n_act, 3);
        GS_CHECK(!gs_kkt_pass(&info.kkt, o.tol));
        for (int k = 0; k < 4; k++) {
            GS_CHECK_NEAR(f.lam[k], d[k], 1e-14);
            GS_CHECK_NEAR(f.w[k], g[0][k] - atx[k], 1e-14);
        }
        GS_CHECK_NEAR(f.x[0], 1.0, 1e-14);
        GS_CHECK_NEAR(f.x[1], 0.0, 1e-14);
        GS_CHECK_NEAR(f.x[2], -0.25, 1e-14);
        /* the same solver goes on, cold and warm from that contact set
         * (dependent: the warm start falls back to a cold one) */
        double dl[4];
        memcpy(dl, f.lam, sizeof dl);
        const gs_warm warm = {.n_act = ts_contact_set(dl, NULL, 4, f.act), .act = f.act,
                              .lam = dl};
        pb = ts_fx_problem(&f, 1);
        for (int wi = 0; wi < 2; wi++) {
            o.warm = wi ? &warm : NULL;
            ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-9);
            GS_CHECK_NEAR(f.x[0] - f.x[1], 0.1, 1e-12); /* pair 0 closed */
        }
    }
    variant v[32];
    const int nv = variants(v);
    for (int i = 0; i < nv; i++) {
        if (gs_method_needs_lq(v[i].m, v[i].f))
            continue;
        gs_solve_opts o = ts_opts(v[i].m, v[i].f);
        gs_problem pb = ts_fx_problem(&f, 0);
        gs_solve_info info;
        gs_error e;
        GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info, &e), GS_OK);
        GS_CHECK_MSG(info.status != GS_STATUS_OPTIMAL, "%s/%s: optimal on contradicting gaps",
                     gs_method_name(v[i].m), gs_form_name(v[i].f));
        if (getenv("GS_TEST_VERBOSE"))
            printf("  %s/%s: %s\n", gs_method_name(v[i].m), gs_form_name(v[i].f),
                   gs_status_name(info.status));
    }
    ts_fx_free(&f);
}

/* A fastened pair in the loop (tm_loop3 reversed: pair 2 is x0 - x2 = g2,
 * the sum of pairs 0 and 1): g0 + g1 = 0.2 < g2 = 0.3 cannot hold. The
 * certificate's equality component is free in sign: d = (1, 1, -1, 0).
 * With g2 = 0.15 the gaps are consistent: optimal. */
GS_TEST(contradicting_fastened_pair_is_infeasible)
{
    ts_fixture f;
    ts_fx_open_ex(&f, tm_loop3(1), 2, GS_PRECOMP_DEFER_LQ);
    const double g[2][4] = {{0.1, 0.1, 0.3, 0.5}, {0.1, 0.1, 0.15, 0.5}};
    memcpy(f.G, g, sizeof g);
    f.eq[2] = 1;
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    gs_problem pb = ts_fx_problem(&f, 0);
    pb.eq = f.eq;
    gs_solve_info info;
    gs_error e;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info, &e), GS_OK);
    GS_CHECK_STR(gs_status_name(info.status), "infeasible");
    const double d[4] = {1.0, 1.0, -1.0, 0.0};
    for (int k = 0; k < 4; k++)
        GS_CHECK_NEAR(f.lam[k], d[k], 1e-14);
    pb.g = f.G + 4;
    ts_solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info, 1e-9);
    GS_CHECK_NEAR(f.x[0] - f.x[2], 0.15, 1e-14);
    ts_fx_free(&f);
}

GS_TEST_MAIN()
