/* test_gi_relative.c -- GI on the relative form: exact hand-made cases,
 * agreement with the reference oracle on generated models (1e-7 mm on x and
 * w), equality pairs, warm starts, option errors. Also covers the generic
 * solve layer (solver.c) and the contact-set factor (cset.c). */
#include "gs_test.h"
#include "test_models.h"

#include "cset.h"
#include "generator.h"
#include "refsolve.h"
#include "solver.h"

static gs_precomp *build(gs_model *mdl)
{
    gs_error e;
    if (!mdl->validated)
        GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_OK);
    return pc;
}

static gs_solve_opts gi_opts(void)
{
    gs_solve_opts o;
    gs_solve_default_opts(&o);
    o.method = GS_METHOD_GI;
    o.form = GS_FORM_RELATIVE;
    return o;
}

static void solve_ok(gs_solver *sv, const gs_problem *pb, const gs_solve_opts *o, double *lam,
                     double *w, double *x, gs_solve_info *info)
{
    gs_error e;
    GS_CHECK_INT(gs_solve(sv, pb, o, lam, w, x, info, &e), GS_OK);
    GS_CHECK_MSG(info->status == GS_STATUS_OPTIMAL, "status %s", gs_status_name(info->status));
    GS_CHECK_MSG(gs_kkt_pass(&info->kkt, 1e-9), "pinf %.3g dinf %.3g comp %.3g",
                 info->kkt.primal_infeas, info->kkt.dual_infeas, info->kkt.complementarity);
}

GS_TEST(chain3_exact_cases)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    gs_solve_opts o = gi_opts();
    gs_solve_info info;
    double lam[3], w[3], x[3];
    double g1[3] = {1, 1.7, 1}, g2[3] = {1, 1, 1}, g3[3] = {0, 0, 0}, g4[3] = {5, 5, 5};
    gs_problem pb = {.pc = pc, .g = g1};
    o.want_x = 1;
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_NEAR(lam[0], 0.5, 1e-14);
    GS_CHECK_NEAR(lam[1], 0.0, 0.0);
    GS_CHECK_NEAR(lam[2], 0.5, 1e-14);
    GS_CHECK_NEAR(x[1], 1.5, 1e-14);
    GS_CHECK_NEAR(w[1], 0.2, 1e-14);
    GS_CHECK_INT(info.n_act, 2);
    GS_CHECK_INT(info.method, GS_METHOD_GI);
    GS_CHECK_INT(info.form, GS_FORM_RELATIVE);
    pb.g = g2; /* ties: lam = (0, 1, 0), w = 0 */
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_NEAR(lam[0], 0.0, 1e-14);
    GS_CHECK_NEAR(lam[1], 1.0, 1e-14);
    GS_CHECK_NEAR(lam[2], 0.0, 1e-14);
    pb.g = g3; /* all zero: all in contact */
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    for (int i = 0; i < 3; i++)
        GS_CHECK_NEAR(lam[i], 1.0, 1e-14);
    GS_CHECK_INT(info.n_act, 3);
    pb.g = g4; /* no contact: no iteration at all */
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_INT(info.iterations, 0);
    GS_CHECK_INT(info.n_act, 0);
    GS_CHECK_NEAR(w[0], 3.5, 1e-14);
    unsigned char eq[3] = {0, 1, 0}; /* permanently fastened middle pair */
    pb.g = g1;
    pb.eq = eq;
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_NEAR(lam[0], 0.7, 1e-14);
    GS_CHECK_NEAR(lam[1], -0.4, 1e-14);
    GS_CHECK_NEAR(lam[2], 0.7, 1e-14);
    GS_CHECK_NEAR(x[1], 1.7, 1e-14);
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(two_springs_fastener)
{
    gs_model *mdl = tm_two_springs();
    gs_precomp *pc = build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    gs_solve_opts o = gi_opts();
    gs_solve_info info;
    double g = 2.0, load = 6.0, lam, w, x[2];
    gs_problem pb = {.pc = pc, .g = &g, .load = &load};
    o.primal_cert = 1;
    solve_ok(sv, &pb, &o, &lam, &w, x, &info);
    GS_CHECK_NEAR(lam, 3.6, 1e-14);
    GS_CHECK_NEAR(x[0], -1.2, 1e-14);
    GS_CHECK_NEAR(x[1], 0.8, 1e-14);
    GS_CHECK(info.kkt.primal);
    GS_CHECK_NEAR(info.kkt.obj_primal, -9.6, 1e-12);
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Solve a cloud on a generated model with GI and the oracle: x and w agree to
 * 1e-7 mm. Returns the summed GI iterations. */
static long agree_on(gs_gen_kind kind, double fraction, int ngaps, int with_eq)
{
    gs_gen_params gp;
    gs_gen_small_params(kind, &gp);
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &mdl, NULL, &e), GS_OK);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m, n = mdl->n;
    double *G = malloc((size_t)ngaps * m * sizeof *G), *load = malloc(m * sizeof *load);
    double *lam = malloc(m * sizeof *lam), *w = malloc(m * sizeof *w), *x = malloc(n * sizeof *x);
    double *lr = malloc(m * sizeof *lr), *wr = malloc(m * sizeof *wr), *xr = malloc(n * sizeof *xr);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1), *eq = calloc(m, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, ngaps, 7, NULL, G, &e), GS_OK);
    gs_gen_pattern(mdl, fraction, inst);
    gs_model_pattern_load(mdl, inst, load);
    if (with_eq) /* permanently fasten two candidates that carry no load */
        for (int i = 0, c = 0; i < mdl->n_fast && c < 2; i++)
            if (!inst[i]) {
                eq[mdl->fast[i].pair] = 1;
                c++;
            }
    gs_solver *sv = gs_solver_new(pc, &e);
    gs_solve_opts o = gi_opts();
    o.want_x = 1;
    long iters = 0;
    for (int r = 0; r < ngaps; r++) {
        gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load,
                         .eq = with_eq ? eq : NULL};
        gs_solve_info info;
        solve_ok(sv, &pb, &o, lam, w, x, &info);
        iters += info.iterations;
        gs_ref_info ri;
        GS_CHECK_INT(gs_ref_solve(&pb, NULL, lr, wr, &ri, &e), GS_OK);
        GS_CHECK_INT(ri.status, GS_STATUS_OPTIMAL);
        gs_problem_primal(&pb, lr, xr);
        double dx = 0, dw = 0;
        for (int i = 0; i < n; i++)
            dx = fmax(dx, fabs(x[i] - xr[i]));
        for (int i = 0; i < m; i++)
            dw = fmax(dw, fabs(w[i] - wr[i]));
        GS_CHECK_MSG(dx <= 1e-7 && dw <= 1e-7, "gap %d: |dx| %.3g |dw| %.3g mm", r, dx, dw);
        GS_CHECK_INT(info.n_act, ri.n_act);
    }
    gs_solver_free(sv);
    free(G); free(load); free(lam); free(w); free(x); free(lr); free(wr); free(xr);
    free(inst); free(eq);
    gs_precomp_free(pc);
    gs_model_free(mdl);
    return iters;
}

GS_TEST(agrees_with_oracle_lap)
{
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int f = 0; f < 4; f++)
        agree_on(GS_GEN_LAP, fr[f], 6, 0);
}

GS_TEST(agrees_with_oracle_sandwich)
{
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int f = 0; f < 4; f++)
        agree_on(GS_GEN_SANDWICH, fr[f], 6, 0);
}

GS_TEST(agrees_with_oracle_equality_pairs)
{
    agree_on(GS_GEN_LAP, 0.5, 4, 1);
    agree_on(GS_GEN_SANDWICH, 0.5, 4, 1);
}

/* Warm start from the solution of a neighbouring problem (one more fastener)
 * gives the cold answer in fewer iterations; from the same problem's own
 * solution it needs no GI step at all. */
GS_TEST(warm_start)
{
    gs_gen_params gp;
    gs_gen_small_params(GS_GEN_SANDWICH, &gp);
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &mdl, NULL, &e), GS_OK);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m;
    double *g = malloc(m * sizeof *g), *load = malloc(m * sizeof *load);
    double *l0 = malloc(m * sizeof *l0), *l1 = malloc(m * sizeof *l1), *l2 = malloc(m * sizeof *l2);
    double *w = malloc(m * sizeof *w);
    int *act = malloc(m * sizeof *act);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 1, 3, NULL, g, &e), GS_OK);
    gs_gen_pattern(mdl, 0.5, inst);
    gs_model_pattern_load(mdl, inst, load);
    gs_solver *sv = gs_solver_new(pc, &e);
    gs_solve_opts o = gi_opts();
    gs_problem pb = {.pc = pc, .g = g, .load = load};
    gs_solve_info i0, i1, i2;
    solve_ok(sv, &pb, &o, l0, w, NULL, &i0);
    int na = 0;
    for (int k = 0; k < m; k++)
        if (l0[k] != 0.0)
            act[na++] = k;
    GS_CHECK_INT(na, i0.n_act);
    /* same problem, warm: zero GI steps, same multipliers */
    gs_warm warm = {.n_act = na, .act = act, .lam = l0};
    o.warm = &warm;
    solve_ok(sv, &pb, &o, l1, w, NULL, &i1);
    GS_CHECK_INT(i1.warm_used, 1);
    GS_CHECK_INT(i1.warm_kept, na);
    GS_CHECK_INT(i1.iterations, 0);
    for (int k = 0; k < m; k++)
        GS_CHECK_NEAR(l1[k], l0[k], 1e-9 * (1 + fabs(l0[k])));
    /* neighbouring problem: one more fastener installed */
    for (int i = 0; i < mdl->n_fast; i++)
        if (!inst[i]) {
            inst[i] = 1;
            break;
        }
    gs_model_pattern_load(mdl, inst, load);
    o.warm = NULL;
    solve_ok(sv, &pb, &o, l1, w, NULL, &i1);
    o.warm = &warm;
    solve_ok(sv, &pb, &o, l2, w, NULL, &i2);
    for (int k = 0; k < m; k++)
        GS_CHECK_NEAR(l2[k], l1[k], 1e-8 * (1 + fabs(l1[k])));
    GS_CHECK_MSG(2 * i2.iterations <= i1.iterations, "warm %d vs cold %d iterations",
                 i2.iterations, i1.iterations);
    gs_solver_free(sv);
    free(g); free(load); free(l0); free(l1); free(l2); free(w); free(act); free(inst);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(iteration_limit_and_option_errors)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    gs_solve_opts o = gi_opts();
    gs_solve_info info;
    gs_error e;
    double g[3] = {0, 0, 0}, lam[3];
    gs_problem pb = {.pc = pc, .g = g};
    o.max_iter = 1;
    GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_OK);
    GS_CHECK_INT(info.status, GS_STATUS_MAX_ITER);
    GS_CHECK(!gs_kkt_pass(&info.kkt, 1e-9));
    o = gi_opts();
    o.tol = 0.0;
    GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "tol");
    o = gi_opts();
    o.form = (gs_form)17;
    GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "form");
    o = gi_opts();
    int bad = 5;
    gs_warm warm = {.n_act = 1, .act = &bad};
    o.warm = &warm;
    GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, NULL, NULL, &info, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "warm_start");
    gs_method me;
    gs_form fo;
    GS_CHECK_INT(gs_method_parse("gi", &me), 0);
    GS_CHECK_INT(me, GS_METHOD_GI);
    GS_CHECK_INT(gs_form_parse("relative", &fo), 0);
    GS_CHECK_INT(gs_method_parse("nope", &me), -1);
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* The contact-set factor after appends and removals equals a fresh Cholesky
 * of Q_CC. */
GS_TEST(cset_updates_match_fresh_factor)
{
    gs_model *mdl = tm_random(2, 12, 3, 77);
    gs_precomp *pc = build(mdl);
    gs_cset cs;
    GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
    double l[32];
    int order[8] = {3, 7, 1, 12, 0, 9, 14, 5};
    for (int a = 0; a < 8; a++) {
        double s = gs_cset_schur(&cs, order[a], l);
        GS_CHECK(s > 0);
        gs_cset_append(&cs, order[a], l, s);
    }
    gs_cset_remove(&cs, 2);
    gs_cset_remove(&cs, 0);
    gs_cset_remove(&cs, 5);
    GS_CHECK_INT(cs.k, 5);
    int expect[5] = {7, 12, 0, 9, 14};
    for (int c = 0; c < 5; c++) {
        GS_CHECK_INT(cs.idx[c], expect[c]);
        GS_CHECK_INT(cs.pos[expect[c]], c);
    }
    GS_CHECK_INT(cs.pos[3], -1);
    /* L L' == Q_CC */
    int m = pc->m;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b <= a; b++) {
            double acc = 0;
            for (int c = 0; c <= b; c++)
                acc += cs.f.L[a + c * cs.f.cap] * cs.f.L[b + c * cs.f.cap];
            GS_CHECK_NEAR(acc, pc->Q[(size_t)expect[b] * m + expect[a]], 1e-13);
        }
    /* QC columns follow the slot map, and the residual uses them */
    for (int c = 0; c < 5; c++) {
        GS_CHECK_INT(cs.owner[cs.slot[c]], c);
        GS_CHECK(cs.QC[(size_t)cs.slot[c] * m + 4] == pc->Q[(size_t)expect[c] * m + 4]);
    }
    double v[5] = {1, -2, 0.5, 3, -1}, wv[64];
    gs_cset_residual(&cs, v, NULL, wv);
    for (int i = 0; i < m; i++) {
        double acc = 0;
        for (int c = 0; c < 5; c++)
            acc += pc->Q[(size_t)expect[c] * m + i] * v[c];
        GS_CHECK_NEAR(wv[i], acc, 1e-13);
    }
    gs_cset_free(&cs);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST_MAIN()
