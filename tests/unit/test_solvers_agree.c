/* test_solvers_agree.c -- every available method x formulation against the
 * reference oracle: generated lap and sandwich models across fastener
 * fractions (x and w within 1e-7 mm, KKT certificates), and the degenerate
 * cases (all gaps zero, no contact, every pair in contact, duplicate gaps and
 * ties, a node in two pairs, equality-fastened pairs), warm = cold. Methods
 * added later are picked up through gs_method_supports. */
#include "gs_test.h"
#include "test_models.h"

#include "generator.h"
#include "refsolve.h"
#include "solver.h"

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

static gs_precomp *build(gs_model *mdl)
{
    gs_error e;
    if (!mdl->validated)
        GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_OK);
    return pc;
}

/* Solve pb with every variant and the oracle; compare x and w (mm). */
static void compare_all(gs_solver *sv, const gs_problem *pb, const char *what)
{
    const gs_precomp *pc = pb->pc;
    const int m = pc->m, n = pc->n;
    double *lr = malloc(m * sizeof *lr), *wr = malloc(m * sizeof *wr), *xr = malloc(n * sizeof *xr);
    double *l = malloc(m * sizeof *l), *w = malloc(m * sizeof *w), *x = malloc(n * sizeof *x);
    gs_error e;
    gs_ref_info ri;
    GS_CHECK_INT(gs_ref_solve(pb, NULL, lr, wr, &ri, &e), GS_OK);
    GS_CHECK_INT(ri.status, GS_STATUS_OPTIMAL);
    gs_problem_primal(pb, lr, xr);
    variant v[32];
    int nv = variants(v);
    GS_CHECK(nv >= 1);
    for (int i = 0; i < nv; i++) {
        gs_solve_opts o;
        gs_solve_default_opts(&o);
        o.method = v[i].m;
        o.form = v[i].f;
        o.want_x = 1;
        gs_solve_info info;
        GS_CHECK_INT(gs_solve(sv, pb, &o, l, w, x, &info, &e), GS_OK);
        GS_CHECK_MSG(info.status == GS_STATUS_OPTIMAL, "%s: %s/%s status %s", what,
                     gs_method_name(o.method), gs_form_name(o.form), gs_status_name(info.status));
        GS_CHECK_MSG(gs_kkt_pass(&info.kkt, 1e-8), "%s: %s/%s certificate", what,
                     gs_method_name(o.method), gs_form_name(o.form));
        double dx = 0, dw = 0;
        for (int k = 0; k < n; k++)
            dx = fmax(dx, fabs(x[k] - xr[k]));
        for (int k = 0; k < m; k++)
            dw = fmax(dw, fabs(w[k] - wr[k]));
        GS_CHECK_MSG(dx <= 1e-7 && dw <= 1e-7, "%s: %s/%s |dx| %.3g |dw| %.3g mm", what,
                     gs_method_name(o.method), gs_form_name(o.form), dx, dw);
    }
    free(lr); free(wr); free(xr); free(l); free(w); free(x);
}

static void cloud_case(gs_gen_kind kind, int ngaps, double scale)
{
    gs_gen_params gp;
    if (scale > 0) { /* the paper-size model, refined by `scale` */
        gs_gen_default_params(kind, &gp);
        gs_gen_params_scale(&gp, scale);
        gp.compute_cond = 0;
    } else {
        gs_gen_small_params(kind, &gp);
    }
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &mdl, NULL, &e), GS_OK);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m;
    double *G = malloc((size_t)ngaps * m * sizeof *G), *load = malloc(m * sizeof *load);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1), *eq = calloc(m, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, ngaps, 11, NULL, G, &e), GS_OK);
    gs_solver *sv = gs_solver_new(pc, &e);
    double fr[4] = {0.0, 0.1, 0.5, 1.0};
    for (int f = 0; f < 4; f++) {
        gs_gen_pattern(mdl, fr[f], inst);
        gs_model_pattern_load(mdl, inst, load);
        for (int r = 0; r < ngaps; r++) {
            gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
            compare_all(sv, &pb, gs_gen_kind_name(kind));
        }
    }
    /* equality-fastened pairs: two candidates without load */
    gs_gen_pattern(mdl, 0.5, inst);
    gs_model_pattern_load(mdl, inst, load);
    for (int i = 0, c = 0; i < mdl->n_fast && c < 2; i++)
        if (!inst[i]) {
            eq[mdl->fast[i].pair] = 1;
            c++;
        }
    gs_problem pb = {.pc = pc, .g = G, .load = load, .eq = eq};
    compare_all(sv, &pb, "equality pairs");
    gs_solver_free(sv);
    free(G); free(load); free(inst); free(eq);
    gs_precomp_free(pc);
    gs_model_free(mdl);
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
    gs_gen_params gp;
    gs_gen_small_params(GS_GEN_SANDWICH, &gp);
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &mdl, NULL, &e), GS_OK);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m;
    double *g = malloc(m * sizeof *g), *load = malloc(m * sizeof *load);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1);
    gs_gen_pattern(mdl, 1.0, inst);
    gs_model_pattern_load(mdl, inst, load);
    gs_solver *sv = gs_solver_new(pc, &e);
    gs_problem pb = {.pc = pc, .g = g, .load = load};
    for (int k = 0; k < m; k++) /* all gaps zero, all fasteners: contact everywhere loaded */
        g[k] = 0.0;
    compare_all(sv, &pb, "zero gaps");
    for (int k = 0; k < m; k++) /* duplicate gaps: one value for every pair -> ties */
        g[k] = 0.05;
    compare_all(sv, &pb, "equal gaps");
    for (int k = 0; k < m; k++) /* huge gaps: no contact at all */
        g[k] = 1e4;
    compare_all(sv, &pb, "no contact");
    pb.load = NULL; /* no load at all: nothing moves */
    for (int k = 0; k < m; k++)
        g[k] = 0.3;
    compare_all(sv, &pb, "no load");
    gs_solver_free(sv);
    free(g); free(load); free(inst);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Every pair in contact: the chain against the jig with zero gaps. */
GS_TEST(every_pair_in_contact_and_symmetric_ties)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = build(mdl);
    gs_solver *sv = gs_solver_new(pc, NULL);
    double g0[3] = {0, 0, 0}, g1[3] = {1, 1, 1}, g2[3] = {1, 1.7, 1};
    gs_problem pb = {.pc = pc, .g = g0};
    compare_all(sv, &pb, "all in contact");
    pb.g = g1; /* ties: lam = (0, 1, 0) with w = 0 everywhere */
    compare_all(sv, &pb, "ties");
    pb.g = g2; /* symmetric pair of contacts */
    compare_all(sv, &pb, "symmetric");
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Warm start from a neighbouring solution gives the cold answer. */
GS_TEST(warm_equals_cold)
{
    gs_gen_params gp;
    gs_gen_small_params(GS_GEN_LAP, &gp);
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&gp, &mdl, NULL, &e), GS_OK);
    gs_precomp *pc = build(mdl);
    const int m = mdl->m;
    double *G = malloc(2 * (size_t)m * sizeof *G), *load = malloc(m * sizeof *load);
    double *l0 = malloc(m * sizeof *l0), *l1 = malloc(m * sizeof *l1), *l2 = malloc(m * sizeof *l2);
    int *act = malloc(m * sizeof *act);
    unsigned char *inst = calloc(mdl->n_fast + 1, 1);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 2, 5, NULL, G, &e), GS_OK);
    gs_gen_pattern(mdl, 0.5, inst);
    gs_model_pattern_load(mdl, inst, load);
    gs_solver *sv = gs_solver_new(pc, &e);
    variant v[32];
    int nv = variants(v);
    for (int i = 0; i < nv; i++) {
        gs_solve_opts o;
        gs_solve_default_opts(&o);
        o.method = v[i].m;
        o.form = v[i].f;
        gs_solve_info info;
        gs_problem pb = {.pc = pc, .g = G, .load = load};
        GS_CHECK_INT(gs_solve(sv, &pb, &o, l0, NULL, NULL, &info, &e), GS_OK);
        int na = 0;
        for (int k = 0; k < m; k++)
            if (l0[k] != 0.0)
                act[na++] = k;
        gs_problem pb2 = {.pc = pc, .g = G + m, .load = load}; /* another gap */
        GS_CHECK_INT(gs_solve(sv, &pb2, &o, l1, NULL, NULL, &info, &e), GS_OK);
        gs_warm warm = {.n_act = na, .act = act, .lam = l0};
        o.warm = &warm;
        GS_CHECK_INT(gs_solve(sv, &pb2, &o, l2, NULL, NULL, &info, &e), GS_OK);
        GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
        for (int k = 0; k < m; k++)
            GS_CHECK_MSG(fabs(l1[k] - l2[k]) <= 1e-8 * (1 + fabs(l1[k])), "%s/%s pair %d",
                         gs_method_name(o.method), gs_form_name(o.form), k);
    }
    gs_solver_free(sv);
    free(G); free(load); free(l0); free(l1); free(l2); free(act); free(inst);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST_MAIN()
