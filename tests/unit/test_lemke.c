/* test_lemke.c -- Lemke's method on the dual LCP: exact hand-made cases
 * (degenerate ties, full contact, trivial exit, equality pair), agreement
 * with the reference oracle on generated models (1e-7 mm on x and w) across
 * fastener fractions, with equality pairs and with engineered degeneracy,
 * the pivot limit, and warm starts (same problem: 0 pivots; a neighbouring
 * problem: same answer as cold with fewer pivots; a poor warm set). */
#include "gs_test.h"
#include "test_models.h"

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

static gs_solve_opts lk_opts(void)
{
    gs_solve_opts o;
    gs_solve_default_opts(&o);
    o.method = GS_METHOD_LEMKE;
    o.want_x = 1;
    return o;
}

static void solve_ok(gs_solver *sv, const gs_problem *pb, const gs_solve_opts *o, double *lam,
                     double *w, double *x, gs_solve_info *info)
{
    gs_error e;
    GS_CHECK_INT(gs_solve(sv, pb, o, lam, w, x, info, &e), GS_OK);
    GS_CHECK_MSG(info->status == GS_STATUS_OPTIMAL, "status %s", gs_status_name(info->status));
    GS_CHECK_INT(info->method, GS_METHOD_LEMKE);
    GS_CHECK_INT(info->form, GS_FORM_DUAL);
    GS_CHECK_MSG(gs_kkt_pass(&info->kkt, 1e-8), "pinf %.3g dinf %.3g comp %.3g",
                 info->kkt.primal_infeas, info->kkt.dual_infeas, info->kkt.complementarity);
}

GS_TEST(method_table_and_forms)
{
    GS_CHECK(gs_method_supports(GS_METHOD_LEMKE, GS_FORM_DUAL));
    GS_CHECK(gs_method_supports(GS_METHOD_LEMKE, GS_FORM_DEFAULT));
    GS_CHECK(!gs_method_supports(GS_METHOD_LEMKE, GS_FORM_RELATIVE));
    GS_CHECK(!gs_method_supports(GS_METHOD_LEMKE, GS_FORM_PRIMAL));
    gs_solve_opts o = lk_opts();
    gs_error e;
    GS_CHECK_INT(gs_solve_validate_opts(&o, &e), GS_OK);
    o.form = GS_FORM_RELATIVE;
    GS_CHECK_INT(gs_solve_validate_opts(&o, &e), GS_ERR_UNSUPPORTED);
}

GS_TEST(chain3_exact_cases)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    gs_solve_opts o = lk_opts();
    gs_solve_info info;
    double lam[3], w[3], x[3];
    double g1[3] = {1, 1.7, 1}, g2[3] = {1, 1, 1}, g3[3] = {0, 0, 0}, g4[3] = {5, 5, 5};
    /* p = (0.5, 0.3, 0.5): pairs 0 and 2 tie for the first pivot */
    gs_problem pb = {.pc = pc, .g = g1};
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_NEAR(lam[0], 0.5, 1e-14);
    GS_CHECK_NEAR(lam[1], 0.0, 0.0);
    GS_CHECK_NEAR(lam[2], 0.5, 1e-14);
    GS_CHECK_NEAR(w[1], 0.2, 1e-14);
    GS_CHECK_NEAR(x[1], 1.5, 1e-14);
    GS_CHECK_INT(info.n_act, 2);
    /* degenerate: at z0 = 1 (z_1 = 1) w_0, w_2 and z0 all reach zero at
     * once; z0 leaves (the tie rule): z0 in, z_1 in, done */
    pb.g = g2;
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_NEAR(lam[0], 0.0, 0.0);
    GS_CHECK_NEAR(lam[1], 1.0, 1e-14);
    GS_CHECK_NEAR(lam[2], 0.0, 0.0);
    for (int i = 0; i < 3; i++)
        GS_CHECK_NEAR(w[i], 0.0, 1e-14);
    GS_CHECK_INT(info.iterations, 2);
    /* all gaps zero: every pair in contact, lam = K u0 = (1, 1, 1) */
    pb.g = g3;
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    for (int i = 0; i < 3; i++)
        GS_CHECK_NEAR(lam[i], 1.0, 1e-14);
    GS_CHECK_INT(info.n_act, 3);
    GS_CHECK(info.iterations >= 4); /* z0 and three z's enter */
    /* large gaps: p <= 0, trivial exit */
    pb.g = g4;
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_INT(info.iterations, 0);
    GS_CHECK_INT(info.n_act, 0);
    for (int i = 0; i < 3; i++)
        GS_CHECK_NEAR(lam[i], 0.0, 0.0);
    GS_CHECK_NEAR(w[0], 3.5, 1e-14);
    GS_CHECK_NEAR(w[1], 3.0, 1e-14);
    /* equality-fastened middle pair: lam = (0.7, -0.4, 0.7) */
    unsigned char eq[3] = {0, 1, 0};
    pb.g = g1;
    pb.eq = eq;
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_NEAR(lam[0], 0.7, 1e-14);
    GS_CHECK_NEAR(lam[1], -0.4, 1e-14);
    GS_CHECK_NEAR(lam[2], 0.7, 1e-14);
    GS_CHECK_NEAR(w[1], 0.0, 1e-14);
    GS_CHECK_NEAR(x[1], 1.7, 1e-14);
    /* equality pair with large gaps elsewhere: only the equality acts
     * (reduced LCP trivially feasible: 0 pivots). x_1 = 5 needs
     * lam_1 = (u0_1 - 5) / Q_11 = -3, so x_0 = 1.5 + 3 Q_01 = 3, w_0 = 2 */
    pb.g = g4;
    solve_ok(sv, &pb, &o, lam, w, x, &info);
    GS_CHECK_INT(info.iterations, 0);
    GS_CHECK_NEAR(lam[0], 0.0, 0.0);
    GS_CHECK_NEAR(lam[1], -3.0, 1e-13);
    GS_CHECK_NEAR(x[0], 3.0, 1e-13);
    GS_CHECK_NEAR(w[0], 2.0, 1e-13);
    GS_CHECK_NEAR(w[2], 2.0, 1e-13);
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(two_springs_fastener)
{
    gs_model *mdl = tm_two_springs();
    gs_precomp *pc = build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    gs_solve_opts o = lk_opts();
    gs_solve_info info;
    double g = 2.0, load = 6.0, lam, w, x[2];
    gs_problem pb = {.pc = pc, .g = &g, .load = &load};
    o.primal_cert = 1;
    solve_ok(sv, &pb, &o, &lam, &w, x, &info);
    GS_CHECK_NEAR(lam, 3.6, 1e-14);
    GS_CHECK_NEAR(x[0], -1.2, 1e-14);
    GS_CHECK_NEAR(x[1], 0.8, 1e-14);
    GS_CHECK_INT(info.iterations, 2);
    g = 7.0; /* free deflection 5 mm < 7 mm */
    solve_ok(sv, &pb, &o, &lam, &w, x, &info);
    GS_CHECK_NEAR(lam, 0.0, 0.0);
    GS_CHECK_INT(info.iterations, 0);
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* A generated model with its gap cloud, fastener load and buffers. */
typedef struct {
    gs_model *mdl;
    gs_precomp *pc;
    gs_solver *sv;
    int m, n, ngaps;
    double *G, *load, *lam, *w, *x, *lr, *wr, *xr;
    unsigned char *inst, *eq;
} fixture;

static void fx_open(fixture *f, gs_gen_kind kind, int ngaps, unsigned long long seed)
{
    memset(f, 0, sizeof *f);
    gs_gen_params gp;
    gs_gen_small_params(kind, &gp);
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &f->mdl, NULL, &e), GS_OK);
    f->pc = build(f->mdl);
    f->m = f->mdl->m;
    f->n = f->mdl->n;
    f->ngaps = ngaps;
    const size_t m = (size_t)f->m, n = (size_t)f->n;
    f->G = malloc((size_t)ngaps * m * sizeof *f->G);
    f->load = calloc(m, sizeof *f->load);
    f->lam = malloc(m * sizeof *f->lam);
    f->w = malloc(m * sizeof *f->w);
    f->x = malloc(n * sizeof *f->x);
    f->lr = malloc(m * sizeof *f->lr);
    f->wr = malloc(m * sizeof *f->wr);
    f->xr = malloc(n * sizeof *f->xr);
    f->inst = calloc((size_t)f->mdl->n_fast + 1, 1);
    f->eq = calloc(m, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(f->mdl, ngaps, seed, NULL, f->G, &e), GS_OK);
    f->sv = gs_solver_new(f->pc, &e);
    GS_CHECK(f->sv != NULL);
}

static void fx_close(fixture *f)
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
}

static void fx_pattern(fixture *f, double fraction)
{
    gs_gen_pattern(f->mdl, fraction, f->inst);
    gs_model_pattern_load(f->mdl, f->inst, f->load);
}

/* The oracle's answer to pb in lr, wr, xr. */
static void fx_reference(fixture *f, const gs_problem *pb)
{
    gs_ref_info ri;
    gs_error e;
    GS_CHECK_INT(gs_ref_solve(pb, NULL, f->lr, f->wr, &ri, &e), GS_OK);
    GS_CHECK_STR(gs_status_name(ri.status), "optimal");
    gs_problem_primal(pb, f->lr, f->xr);
}

static double maxdiff(const double *a, const double *b, int n)
{
    double d = 0.0;
    for (int i = 0; i < n; i++)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* Lemke (cold) against the oracle on pb: x and w within 1e-7 mm. Returns
 * the pivots. */
static int fx_agree(fixture *f, const gs_problem *pb)
{
    gs_solve_opts o = lk_opts();
    gs_solve_info info;
    solve_ok(f->sv, pb, &o, f->lam, f->w, f->x, &info);
    fx_reference(f, pb);
    double dx = maxdiff(f->x, f->xr, f->n), dw = maxdiff(f->w, f->wr, f->m);
    GS_CHECK_MSG(dx <= 1e-7, "max |x - x_ref| = %.3g mm", dx);
    GS_CHECK_MSG(dw <= 1e-7, "max |w - w_ref| = %.3g mm", dw);
    GS_CHECK_INT(info.warm_used, 0);
    return info.iterations;
}

static void agree_on(gs_gen_kind kind)
{
    const double fr[4] = {0.0, 0.1, 0.5, 1.0};
    fixture f;
    fx_open(&f, kind, 4, 7);
    int cases = 0, contacts = 0;
    for (int a = 0; a < 4; a++) {
        fx_pattern(&f, fr[a]);
        for (int r = 0; r < f.ngaps; r++) {
            gs_problem pb = {.pc = f.pc, .g = f.G + (size_t)r * f.m, .load = f.load};
            int piv = fx_agree(&f, &pb);
            int nact = 0;
            for (int i = 0; i < f.m; i++)
                nact += f.lr[i] != 0.0;
            /* z0 and every contact enter at least once; no contact: p <= 0 */
            if (nact > 0)
                GS_CHECK_MSG(piv >= nact + 1, "%d pivots for %d contacts", piv, nact);
            else
                GS_CHECK_INT(piv, 0);
            if (getenv("GS_TEST_VERBOSE"))
                printf("  fraction %.1f gap %d: %d pivots, %d contacts\n", fr[a], r, piv, nact);
            contacts += nact;
            cases++;
        }
    }
    GS_CHECK_INT(cases, 16);
    GS_CHECK(contacts > 0);
    fx_close(&f);
}

GS_TEST(agrees_with_reference_lap)
{
    agree_on(GS_GEN_LAP);
}

GS_TEST(agrees_with_reference_sandwich)
{
    agree_on(GS_GEN_SANDWICH);
}

static int contact_set(const double *lam, const unsigned char *eq, int m, int *act);

/* Permanently fastened pairs: every third candidate not carrying a load is
 * fastened (equality), on both generated kinds; the solution's contact set
 * (equality pairs included) warm-starts the same problem in 0 pivots. */
GS_TEST(equality_pairs_agree_with_reference)
{
    const gs_gen_kind kinds[2] = {GS_GEN_LAP, GS_GEN_SANDWICH};
    for (int kk = 0; kk < 2; kk++) {
        fixture f;
        fx_open(&f, kinds[kk], 3, 11);
        fx_pattern(&f, 0.5);
        int ne = 0;
        for (int i = 0; i < f.mdl->n_fast; i++)
            if (!f.inst[i] && i % 3 == 0) {
                f.eq[f.mdl->fast[i].pair] = 1;
                ne++;
            }
        GS_CHECK(ne >= 2);
        for (int r = 0; r < f.ngaps; r++) {
            gs_problem pb = {.pc = f.pc, .g = f.G + (size_t)r * f.m, .load = f.load, .eq = f.eq};
            fx_agree(&f, &pb);
            for (int i = 0; i < f.m; i++)
                if (f.eq[i])
                    GS_CHECK_NEAR(f.w[i], 0.0, 1e-9);
            int *act = malloc((size_t)f.m * sizeof *act);
            memcpy(f.lr, f.lam, (size_t)f.m * sizeof *f.lr);
            gs_warm wm = {.n_act = contact_set(f.lr, f.eq, f.m, act), .act = act, .lam = f.lr};
            gs_solve_opts o = lk_opts();
            o.warm = &wm;
            gs_solve_info info;
            solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info);
            GS_CHECK_INT(info.iterations, 0);
            GS_CHECK_INT(info.warm_used, 1);
            GS_CHECK_INT(info.warm_kept, wm.n_act);
            GS_CHECK(maxdiff(f.x, f.xr, f.n) <= 1e-7);
            free(act);
        }
        fx_close(&f);
    }
}

/* Random models (three kinds of pairs) against the oracle, with and without
 * an equality pair. */
GS_TEST(random_models_agree_with_reference)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        gs_model *mdl = tm_random(3, 6, 3, 500 + seed);
        gs_precomp *pc = build(mdl);
        const int m = mdl->m;
        gs_solver *sv = gs_solver_new(pc, NULL);
        double g[64], load[64], lam[64], w[64], x[64], lr[64], wr[64];
        unsigned char inst[64] = {0}, eq[64] = {0};
        GS_CHECK(m <= 64 && mdl->n <= 64);
        for (int i = 0; i < mdl->n_fast; i++)
            inst[i] = (unsigned char)(i % 2);
        gs_model_pattern_load(mdl, inst, load);
        for (int v = 0; v < 2; v++) {
            for (int k = 0; k < m; k++)
                g[k] = 0.3 * tm_unif();
            if (v == 1)
                eq[seed % m] = 1;
            gs_problem pb = {.pc = pc, .g = g, .load = load, .eq = v ? eq : NULL};
            gs_solve_opts o = lk_opts();
            gs_solve_info info;
            solve_ok(sv, &pb, &o, lam, w, x, &info);
            gs_ref_info ri;
            GS_CHECK_INT(gs_ref_solve(&pb, NULL, lr, wr, &ri, NULL), GS_OK);
            double sc = 1.0;
            for (int k = 0; k < m; k++)
                sc = fmax(sc, fabs(lr[k]));
            GS_CHECK_MSG(maxdiff(lam, lr, m) <= 1e-9 * sc, "lam diff %.3g", maxdiff(lam, lr, m));
            GS_CHECK(maxdiff(w, wr, m) <= 1e-9);
        }
        gs_solver_free(sv);
        gs_precomp_free(pc);
        gs_model_free(mdl);
    }
}

/* Ties and degeneracy: (a) equal gaps everywhere on the (symmetric)
 * generated joint, so that symmetric pairs tie in the ratio tests; (b) a
 * solution made degenerate on purpose: every open pair with w_i > 0 among
 * the first half gets its gap reduced by w_i, so it touches with lam_i = 0
 * (w_i = 0 and lam_i = 0 at the solution, which does not change). */
GS_TEST(ties_and_degenerate_solutions)
{
    const gs_gen_kind kinds[2] = {GS_GEN_LAP, GS_GEN_SANDWICH};
    for (int kk = 0; kk < 2; kk++) {
        fixture f;
        fx_open(&f, kinds[kk], 1, 3);
        const int m = f.m;
        double *g = malloc((size_t)m * sizeof *g);
        for (int a = 0; a < 3; a++) {
            fx_pattern(&f, a == 0 ? 0.0 : a == 1 ? 0.5 : 1.0);
            for (int i = 0; i < m; i++)
                g[i] = a == 0 ? 0.0 : 0.25; /* equal gaps */
            gs_problem pb = {.pc = f.pc, .g = g, .load = f.load};
            fx_agree(&f, &pb);
            /* degenerate variant of a cloud gap */
            memcpy(g, f.G, (size_t)m * sizeof *g);
            fx_reference(&f, &pb);
            int made = 0;
            for (int i = 0; i < m / 2; i++)
                if (f.lr[i] == 0.0 && f.wr[i] > 0.0) {
                    g[i] -= f.wr[i];
                    made++;
                }
            GS_CHECK(made > 0);
            double *lam0 = malloc((size_t)m * sizeof *lam0);
            memcpy(lam0, f.lr, (size_t)m * sizeof *lam0);
            fx_agree(&f, &pb);
            double sc = 1.0;
            for (int i = 0; i < m; i++)
                sc = fmax(sc, fabs(lam0[i]));
            GS_CHECK_MSG(maxdiff(f.lam, lam0, m) <= 1e-8 * sc, "lam moved by %.3g",
                         maxdiff(f.lam, lam0, m));
            for (int i = 0; i < m / 2; i++)
                if (lam0[i] == 0.0)
                    GS_CHECK(f.w[i] >= -1e-9);
            free(lam0);
        }
        free(g);
        fx_close(&f);
    }
}

GS_TEST(pivot_limit)
{
    fixture f;
    fx_open(&f, GS_GEN_LAP, 1, 5);
    fx_pattern(&f, 0.5);
    gs_problem pb = {.pc = f.pc, .g = f.G, .load = f.load};
    gs_solve_opts o = lk_opts();
    gs_solve_info info;
    gs_error e;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info, &e), GS_OK);
    GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
    const int need = info.iterations;
    GS_CHECK(need > 3);
    o.max_iter = 1;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info, &e), GS_OK);
    GS_CHECK_STR(gs_status_name(info.status), gs_status_name(GS_STATUS_MAX_ITER));
    GS_CHECK_INT(info.iterations, 1);
    o.max_iter = need - 1;
    GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, f.w, f.x, &info, &e), GS_OK);
    GS_CHECK_INT(info.status, GS_STATUS_MAX_ITER);
    GS_CHECK_INT(info.iterations, need - 1);
    o.max_iter = need; /* exactly enough */
    solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info);
    GS_CHECK_INT(info.iterations, need);
    fx_close(&f);
}

/* Contact set of a solution (lam != 0 or equality). */
static int contact_set(const double *lam, const unsigned char *eq, int m, int *act)
{
    int k = 0;
    for (int i = 0; i < m; i++)
        if (lam[i] != 0.0 || (eq && eq[i]))
            act[k++] = i;
    return k;
}

GS_TEST(warm_start_same_problem_zero_pivots)
{
    const gs_gen_kind kinds[2] = {GS_GEN_LAP, GS_GEN_SANDWICH};
    for (int kk = 0; kk < 2; kk++) {
        fixture f;
        fx_open(&f, kinds[kk], 3, 21);
        const int m = f.m;
        int *act = malloc((size_t)m * sizeof *act);
        double *lam0 = malloc((size_t)m * sizeof *lam0);
        fx_pattern(&f, 0.5);
        for (int r = 0; r < f.ngaps; r++) {
            gs_problem pb = {.pc = f.pc, .g = f.G + (size_t)r * m, .load = f.load};
            gs_solve_opts o = lk_opts();
            gs_solve_info info;
            solve_ok(f.sv, &pb, &o, lam0, f.w, f.x, &info);
            GS_CHECK(info.iterations > 1);
            memcpy(f.xr, f.x, (size_t)f.n * sizeof *f.x);
            gs_warm wm = {.n_act = contact_set(lam0, NULL, m, act), .act = act, .lam = lam0};
            GS_CHECK(wm.n_act > 0);
            o.warm = &wm;
            solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info);
            GS_CHECK_INT(info.iterations, 0);
            GS_CHECK_INT(info.warm_used, 1);
            GS_CHECK_INT(info.warm_kept, wm.n_act);
            GS_CHECK(maxdiff(f.x, f.xr, f.n) <= 1e-9);
            double sc = 1.0;
            for (int i = 0; i < m; i++)
                sc = fmax(sc, fabs(lam0[i]));
            GS_CHECK(maxdiff(f.lam, lam0, m) <= 1e-10 * sc);
        }
        free(act);
        free(lam0);
        fx_close(&f);
    }
}

/* Warm start from the solution of a neighbouring problem: the same gaps
 * with one more fastener installed (or an equality pair added). Same answer
 * as cold, fewer pivots. */
GS_TEST(warm_start_neighbour_fewer_pivots)
{
    const gs_gen_kind kinds[2] = {GS_GEN_LAP, GS_GEN_SANDWICH};
    int compared = 0;
    for (int kk = 0; kk < 2; kk++) {
        fixture f;
        fx_open(&f, kinds[kk], 3, 33);
        const int m = f.m;
        int *act = malloc((size_t)m * sizeof *act);
        double *lam0 = malloc((size_t)m * sizeof *lam0), *load1 = malloc((size_t)m * sizeof *load1);
        fx_pattern(&f, 0.3);
        int add = -1; /* a candidate not installed */
        for (int i = 0; i < f.mdl->n_fast && add < 0; i++)
            if (!f.inst[i] && i > f.mdl->n_fast / 3)
                add = i;
        GS_CHECK(add >= 0);
        f.inst[add] = 1;
        gs_model_pattern_load(f.mdl, f.inst, load1);
        for (int r = 0; r < f.ngaps; r++) {
            for (int variant = 0; variant < 2; variant++) {
                const double *g = f.G + (size_t)r * m;
                gs_problem p0 = {.pc = f.pc, .g = g, .load = f.load};
                gs_problem p1 = p0;
                memset(f.eq, 0, (size_t)m);
                if (variant == 0)
                    p1.load = load1;
                else {
                    f.eq[f.mdl->fast[add].pair] = 1;
                    p1.eq = f.eq;
                }
                gs_solve_opts o = lk_opts();
                gs_solve_info i0, ic, iw;
                solve_ok(f.sv, &p0, &o, lam0, f.w, f.x, &i0);
                solve_ok(f.sv, &p1, &o, f.lr, f.wr, f.xr, &ic); /* cold */
                gs_warm wm = {.n_act = contact_set(lam0, NULL, m, act), .act = act, .lam = lam0};
                o.warm = &wm;
                solve_ok(f.sv, &p1, &o, f.lam, f.w, f.x, &iw);
                GS_CHECK_INT(iw.warm_used, 1);
                GS_CHECK(iw.warm_kept > 0 && iw.warm_kept <= wm.n_act);
                GS_CHECK_MSG(iw.iterations < ic.iterations, "warm %d pivots, cold %d",
                             iw.iterations, ic.iterations);
                GS_CHECK_MSG(maxdiff(f.x, f.xr, f.n) <= 1e-7, "x diff %.3g",
                             maxdiff(f.x, f.xr, f.n));
                GS_CHECK(maxdiff(f.w, f.wr, m) <= 1e-7);
                compared++;
            }
        }
        free(act);
        free(lam0);
        free(load1);
        fx_close(&f);
    }
    GS_CHECK_INT(compared, 12);
}

/* A poor warm set (every other pair, duplicates, the pairs in contact at
 * zero gap) still gives the oracle's answer. */
GS_TEST(warm_start_poor_set_still_correct)
{
    fixture f;
    fx_open(&f, GS_GEN_SANDWICH, 2, 44);
    const int m = f.m;
    int *act = malloc((size_t)(2 * m) * sizeof *act);
    fx_pattern(&f, 0.1);
    for (int r = 0; r < f.ngaps; r++) {
        gs_problem pb = {.pc = f.pc, .g = f.G + (size_t)r * m, .load = f.load};
        int na = 0;
        for (int i = 0; i < m; i += 2)
            act[na++] = i;
        act[na++] = 0; /* duplicate */
        gs_warm wm = {.n_act = na, .act = act, .lam = NULL};
        gs_solve_opts o = lk_opts();
        o.warm = &wm;
        gs_solve_info info;
        solve_ok(f.sv, &pb, &o, f.lam, f.w, f.x, &info);
        GS_CHECK_INT(info.warm_used, 1);
        GS_CHECK(info.warm_kept > 0 && info.warm_kept <= na - 1);
        GS_CHECK(info.iterations > 0);
        fx_reference(&f, &pb);
        GS_CHECK(maxdiff(f.x, f.xr, f.n) <= 1e-7);
        GS_CHECK(maxdiff(f.w, f.wr, m) <= 1e-7);
    }
    free(act);
    fx_close(&f);
}

GS_TEST_MAIN()
