/* test_kkt.c -- KKT certificates on hand-made problems with exact solutions. */
#include <float.h>

#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "kkt.h"
#include "model_json.h"

/* Two springs k1 = 2, k2 = 3, fastener F = 6 installed, gap 2 mm:
 * Q = 5/6, u0 = 5, lambda = 3.6 N, x = (-1.2, 0.8), objectives -9.6 N mm. */
GS_TEST(two_springs_exact_solution_certifies)
{
    gs_model *mdl = tm_two_springs();
    gs_precomp *pc = ts_build(mdl);
    double g = 2.0, load = 6.0, lam = 3.6, x[2] = {-1.2, 0.8}, w;
    gs_problem pb = {.pc = pc, .g = &g, .load = &load};
    gs_kkt k;
    GS_CHECK_INT(gs_kkt_primal(&pb, x, &lam, &w, &k, NULL), GS_OK);
    GS_CHECK_NEAR(w, 0.0, 1e-15);
    GS_CHECK_NEAR(k.primal_infeas, 0.0, 1e-15);
    GS_CHECK_NEAR(k.dual_infeas, 0.0, 0.0);
    GS_CHECK_NEAR(k.complementarity, 0.0, 1e-14);
    GS_CHECK_NEAR(k.stationarity, 0.0, 1e-15);
    GS_CHECK_NEAR(k.obj_primal, -9.6, 1e-13);
    GS_CHECK_NEAR(k.obj_dual, -9.6, 1e-13);
    GS_CHECK_NEAR(k.gap, 0.0, 1e-13);
    GS_CHECK_INT(k.n_act, 1);
    GS_CHECK(gs_kkt_pass(&k, 1e-12));
    /* the dual certificate agrees */
    GS_CHECK_INT(gs_kkt_dual(&pb, &lam, &w, &k, NULL), GS_OK);
    GS_CHECK_NEAR(w, 0.0, 1e-14);
    GS_CHECK_NEAR(k.obj_dual, -9.6, 1e-13);
    GS_CHECK_NEAR(k.obj_primal, -9.6, 1e-13);
    GS_CHECK(gs_kkt_pass(&k, 1e-12));
    /* and so does the one from a w made by the solver: p = u0 + Q load - g =
     * 5 + 5 - 2 = 3, s = 1/2 f'K^-1 f = 15 (obj = -(1/2 lam'w - 1/2 lam'p + s)) */
    double p, s, work, w2 = w, w3 = 1.0;
    gs_problem_dual_data(&pb, &p, &s, &work);
    GS_CHECK_NEAR(p, 3.0, 1e-14);
    GS_CHECK_NEAR(s, 15.0, 1e-13);
    gs_kkt k2;
    gs_kkt_dual_w(&pb, &p, s, &lam, &w2, &w3, &k2);
    GS_CHECK(w3 == w2);
    GS_CHECK_NEAR(k2.obj_dual, -9.6, 1e-13);
    GS_CHECK_NEAR(k2.obj_primal, -9.6, 1e-13);
    GS_CHECK_NEAR(k2.gap, 0.0, 1e-13);
    GS_CHECK_INT(k2.n_act, 1);
    GS_CHECK(gs_kkt_pass(&k2, 1e-12));
    /* a w of 0.5 mm (the gap not closed): complementarity 3.6 * 0.5 = 1.8 */
    w2 = 0.5;
    gs_kkt_dual_w(&pb, &p, s, &lam, &w2, &w3, &k2);
    GS_CHECK_NEAR(k2.complementarity, 1.8, 1e-14);
    GS_CHECK_NEAR(k2.gap, 1.8, 1e-13);
    GS_CHECK(!gs_kkt_pass(&k2, 1e-6));
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(violations_are_measured)
{
    gs_model *mdl = tm_two_springs();
    gs_precomp *pc = ts_build(mdl);
    double g = 2.0, load = 6.0, lam = 0.0, x[2] = {-3.0, 2.0}, w; /* free deflection */
    gs_problem pb = {.pc = pc, .g = &g, .load = &load};
    gs_kkt k;
    gs_kkt_primal(&pb, x, &lam, &w, &k, NULL);
    GS_CHECK_NEAR(w, -3.0, 1e-15); /* penetration 3 mm */
    GS_CHECK_NEAR(k.primal_infeas, 3.0, 1e-15);
    GS_CHECK_NEAR(k.stationarity, 0.0, 1e-15);
    GS_CHECK(!gs_kkt_pass(&k, 1e-6));
    /* negative force, and a force with an open gap */
    lam = -1.0;
    gs_kkt_dual(&pb, &lam, &w, &k, NULL);
    GS_CHECK_NEAR(k.dual_infeas, 1.0, 0.0);
    GS_CHECK(!gs_kkt_pass(&k, 1e-6));
    g = 10.0;
    lam = 1.0; /* w = Q lam - p = 5/6 - (5 - 10) */
    gs_kkt_dual(&pb, &lam, &w, &k, NULL);
    GS_CHECK_NEAR(w, 5.0 / 6.0 + 5.0, 1e-14);
    GS_CHECK_NEAR(k.complementarity, 5.0 / 6.0 + 5.0, 1e-14);
    GS_CHECK_NEAR(k.gap, 5.0 / 6.0 + 5.0, 1e-13);
    /* a wrong x: stationarity residual relative to ||f|| + ||A lam|| */
    g = 2.0;
    lam = 3.6;
    double xb[2] = {-1.2, 0.9}; /* K x - f + A lam = (0, 0.3) ; ||f|| 6, ||A lam|| 3.6 */
    gs_kkt_primal(&pb, xb, &lam, &w, &k, NULL);
    GS_CHECK_NEAR(k.stationarity, 0.3 / 9.6, 1e-14);
    GS_CHECK(!gs_kkt_pass(&k, 1e-6));
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* No certificate for what is not a number, nor for residual gaps the
 * problem's scale leaves less exact than tol: on the two springs, a NaN or
 * an infinite force makes every measure infinite (the maxima used to skip
 * NaN and pass it); a fastener load of 6e12 N makes p = Q load - g =
 * 5e12 - 2, whose round-off 64 eps |p| = 0.07 mm is the accuracy of any w:
 * the exact answer (lambda = p / Q) fails at 1e-10, passes at 1e-1; at 6e5
 * N (64 eps |p| = 7e-9 mm) it passes at 1e-10: the certificate settles for
 * residual gaps known to 1e-8 max(1, |g|) (kkt.h GS_KKT_W_FLOOR_MAX). */
GS_TEST(no_certificate_for_nan_or_below_the_round_off)
{
    gs_model *mdl = tm_two_springs();
    gs_precomp *pc = ts_build(mdl);
    double g = 2.0, load = 6.0, w;
    gs_problem pb = {.pc = pc, .g = &g, .load = &load};
    gs_kkt k;
    const double bad[2] = {NAN, INFINITY};
    for (int i = 0; i < 2; i++) {
        double lam = bad[i];
        GS_CHECK_INT(gs_kkt_dual(&pb, &lam, &w, &k, NULL), GS_OK);
        GS_CHECK(isinf(k.primal_infeas) && isinf(k.dual_infeas) && isinf(k.complementarity));
        GS_CHECK(!gs_kkt_pass(&k, 1e-6));
    }
    double lam = 3.6;
    GS_CHECK_INT(gs_kkt_dual(&pb, &lam, &w, &k, NULL), GS_OK);
    GS_CHECK_NEAR(k.w_floor, 64.0 * DBL_EPSILON * 3.0, 1e-30); /* p = 3 */
    GS_CHECK(gs_kkt_pass(&k, 1e-12));
    /* a load of 6e5 N: p = 5e5 - 2, w_floor 7e-9 mm, above tol 1e-10 but
     * within the 1e-8 max(1, |g|) the certificate settles for (kkt.h) */
    double p, sd, work;
    load = 6e5;
    gs_problem_dual_data(&pb, &p, &sd, &work);
    lam = p / pc->Q[0];
    GS_CHECK_INT(gs_kkt_dual(&pb, &lam, &w, &k, NULL), GS_OK);
    GS_CHECK(k.w_floor > 1e-10 * 2.0 && k.w_floor <= GS_KKT_W_FLOOR_MAX * 2.0);
    GS_CHECK_MSG(gs_kkt_pass(&k, 1e-10), "floor %g pinf %g comp %g", k.w_floor, k.primal_infeas,
                 k.complementarity);
    load = 6e12;
    gs_problem_dual_data(&pb, &p, &sd, &work);
    GS_CHECK_NEAR(p, 5e12 - 2.0, 1e-2); /* Q load - g */
    lam = p / pc->Q[0];
    GS_CHECK_INT(gs_kkt_dual(&pb, &lam, &w, &k, NULL), GS_OK);
    GS_CHECK_NEAR(k.w_floor, 64.0 * DBL_EPSILON * p, 1e-9);
    GS_CHECK(!gs_kkt_pass(&k, 1e-10));
    GS_CHECK_MSG(gs_kkt_pass(&k, 1e-1), "floor %g pinf %g comp %g", k.w_floor, k.primal_infeas,
                 k.complementarity);
    /* the solver says so too: optimal at its round-off tolerance, and the
     * certificate at the tol asked fails */
    gs_solver *sv = gs_solver_new(pc, NULL);
    gs_solve_opts o;
    gs_solve_default_opts(&o);
    gs_solve_info info;
    double lam_s, w_s;
    GS_CHECK_INT(gs_solve(sv, &pb, &o, &lam_s, &w_s, NULL, &info, NULL), GS_OK);
    GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
    GS_CHECK(!gs_kkt_pass(&info.kkt, o.tol));
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* A pair whose coefficient is 1e-160: Q = 5e-321 (denormal), the exact force
 * for a negative gap overflows, and the methods' arithmetic makes NaN or Inf.
 * Whatever they make, a result with a non-finite force or residual gap is
 * never "optimal" (gs_solve marks it numerical), nor certified. */
GS_TEST(a_result_that_is_not_a_number_is_not_optimal)
{
    static const char text[] =
        "{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": [{\"ndof\": 1, \"K\": "
        "[[2.0]]}], \"nodes\": {\"part\": [0], \"dof\": [0]}, \"pairs\": {\"i\": [0], \"j\": "
        "[-1], \"ci\": [-1e-160]}}";
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_model_parse_json(text, sizeof text - 1, NULL, NULL, &mdl, &e), GS_OK);
    gs_precomp *pc = ts_build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    const struct {
        gs_method m;
        gs_form f;
    } v[] = {{GS_METHOD_GI, GS_FORM_RELATIVE}, {GS_METHOD_GI, GS_FORM_DUAL},
             {GS_METHOD_GI, GS_FORM_PRIMAL}, {GS_METHOD_LEMKE, GS_FORM_DEFAULT},
             {GS_METHOD_AUTO, GS_FORM_DEFAULT}};
    const double gaps[3] = {0.5, -0.1, 9e307};
    for (size_t a = 0; a < sizeof v / sizeof *v; a++)
        for (int t = 0; t < 3; t++) {
            double g = gaps[t], lam = 0.0, w = 0.0;
            gs_problem pb = {.pc = pc, .g = &g};
            gs_solve_opts o;
            gs_solve_default_opts(&o);
            o.method = v[a].m;
            o.form = v[a].f;
            gs_solve_info info;
            if (gs_solve(sv, &pb, &o, &lam, &w, NULL, &info, &e) != GS_OK)
                continue; /* refused (a method that needs what this model lacks) */
            if (info.status == GS_STATUS_OPTIMAL)
                GS_CHECK_MSG(isfinite(lam) && isfinite(w) && gs_kkt_pass(&info.kkt, o.tol),
                             "%s/%s g = %g: optimal with lambda %g, w %g",
                             gs_method_name(v[a].m), gs_form_name(v[a].f), g, lam, w);
            if (!isfinite(lam) || !isfinite(w))
                GS_CHECK(!gs_kkt_pass(&info.kkt, 1.0));
        }
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Chain of 3 against a jig, g = (1, 1.7, 1): lambda = (0.5, 0, 0.5),
 * x = (1, 1.5, 1), w = (0, 0.2, 0). */
GS_TEST(chain3_exact_solution)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = ts_build(mdl);
    double g[3] = {1, 1.7, 1}, lam[3] = {0.5, 0, 0.5}, x[3] = {1, 1.5, 1}, w[3];
    gs_problem pb = {.pc = pc, .g = g};
    gs_kkt k;
    GS_CHECK_INT(gs_kkt_primal(&pb, x, lam, w, &k, NULL), GS_OK);
    GS_CHECK_NEAR(w[0], 0, 1e-15);
    GS_CHECK_NEAR(w[1], 0.2, 1e-15);
    GS_CHECK_NEAR(w[2], 0, 1e-15);
    GS_CHECK_NEAR(k.stationarity, 0, 1e-15);
    GS_CHECK_NEAR(k.gap, 0, 1e-14);
    GS_CHECK_INT(k.n_act, 2);
    GS_CHECK(gs_kkt_pass(&k, 1e-13));
    /* x(lambda) by back substitution reproduces x */
    double xb[3];
    gs_problem_primal(&pb, lam, xb);
    for (int i = 0; i < 3; i++)
        GS_CHECK_NEAR(xb[i], x[i], 1e-14);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Same chain, middle pair permanently fastened: lambda = (0.7, -0.4, 0.7)
 * (free sign on the equality), x = g = (1, 1.7, 1). */
GS_TEST(chain3_equality_pair)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = ts_build(mdl);
    double g[3] = {1, 1.7, 1}, lam[3] = {0.7, -0.4, 0.7}, x[3] = {1, 1.7, 1}, w[3];
    unsigned char eq[3] = {0, 1, 0};
    gs_problem pb = {.pc = pc, .g = g, .eq = eq};
    gs_kkt k;
    gs_kkt_primal(&pb, x, lam, w, &k, NULL);
    GS_CHECK_NEAR(k.dual_infeas, 0, 0);
    GS_CHECK_NEAR(k.stationarity, 0, 1e-15);
    GS_CHECK(gs_kkt_pass(&k, 1e-13));
    GS_CHECK_INT(k.n_act, 3);
    /* without the equality flag the negative force is a violation */
    pb.eq = NULL;
    gs_kkt_primal(&pb, x, lam, w, &k, NULL);
    GS_CHECK_NEAR(k.dual_infeas, 0.4, 1e-15);
    /* an equality pair that is left open is a primal violation */
    pb.eq = eq;
    double lam2[3] = {0.5, 0, 0.5};
    gs_kkt_dual(&pb, lam2, w, &k, NULL);
    GS_CHECK_NEAR(k.primal_infeas, 0.2, 1e-14);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST_MAIN()
