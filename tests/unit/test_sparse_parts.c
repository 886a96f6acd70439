/*
 * test_sparse_parts.c -- parts given as the sparse stiffness of a whole FE
 * mesh, condensed by gapsim (core/spchol.h, the sparse branch of
 * core/precompute.c).
 *
 * Asserts, on the small lap and sandwich assemblies generated twice - once
 * condensed by the generator (dense blocks), once uncondensed (each part's
 * whole plate stiffness, sparse, gs_gen_params.uncondensed):
 *   - Q = A'K^-1 A agrees to 1e-10 relative (max |dQ| / max |Q|), and the
 *     sparse Q is bit-identical on 1 and 2 threads (the factors and the
 *     Schur route run single-threaded, the solves in fixed chunks);
 *   - (K^-1)[R, R] of each part from the Schur complement (contact rows
 *     ordered last) equals that of the solves to 1e-10 relative;
 *   - the residual gaps of a gap cloud with fasteners agree to 1e-9 mm, for
 *     GI (relative, dual, primal), NPM dual and IPM; the primal certificate
 *     (K x from the sparse K, x from the CHOLMOD factor) passes;
 *   - a saved and reloaded precomputation (its sparse factors recomputed)
 *     gives bit-identical Q and displacements; loaded without them
 *     (GS_PRECOMP_DEFER_SPARSE) GI relative solves bitwise the same, and
 *     what solves with K is refused until they are computed;
 *   - the plate without its jig (rigid-body modes) is reported not SPD,
 *     naming the part;
 *   - a model JSON whose part is a Matrix Market file with
 *     "storage": "sparse" is kept sparse and gives the dense path's Q;
 *   - the generated models written in every FE format (core/matrix_write.h:
 *     the uncondensed one as Matrix Market, Abaqus coordinate and matrix
 *     input, Nastran DMIG; the condensed one also as an Abaqus user element)
 *     read back bit-identical (gs_model_equal), and the uncondensed files
 *     give the condensed model's Q to 1e-10 relative;
 *   - 3-D geometry: a two-part space truss (three translations per node,
 *     read from DMIG files with FE labels, pairs with normals) and its
 *     rigidly rotated and moved copy, built independently from the rotated
 *     coordinates (nothing axis-aligned), give the same residual gaps and
 *     contact forces to 1e-9 mm / 1e-9 relative, sparse and dense alike.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fe_plate.h"
#include "generator.h"
#include "linalg.h"
#include "matrix_io.h"
#include "matrix_write.h"
#include "gs_test.h"
#include "model_json.h"
#include "precomp_check.h"
#include "precomp_io.h"
#include "spchol.h"
#include "test_models.h"
#include "test_solver_support.h"

static gs_model *gen(gs_gen_kind kind, int uncondensed)
{
    gs_gen_params gp;
    gs_gen_small_params(kind, &gp);
    gp.uncondensed = uncondensed;
    gp.compute_cond = 0;
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_MSG(gs_gen_assembly(&gp, &mdl, NULL, &e) == GS_OK, "%s: %s", e.field, e.msg);
    return mdl;
}

static double max_abs(const double *a, size_t n)
{
    double v = 0.0;
    for (size_t i = 0; i < n; i++)
        v = fmax(v, fabs(a[i]));
    return v;
}

static double max_diff(const double *a, const double *b, size_t n)
{
    return ts_max_diff(a, b, (int)n);
}

/* Q of the condensed model d and of the sparse one s agree to what their
 * two routes' rounding allows: a relative 4 eps cond(K) (K^-1's forward
 * error), and 1e-10 at least. A fixed 1e-10 failed by 1.15e-10 on the far
 * field x4 lap (cond(K) 3.8e6, MITC4) under OpenBLAS's Sandybridge kernels
 * (2.9e-11 Haswell, 9.3e-11 Prescott; allowed now 3.4e-9); a wrong Q differs
 * by O(1). */
static void check_same_q(const gs_precomp *d, const gs_precomp *s, const char *what)
{
    const size_t mm = (size_t)d->m * (size_t)d->m;
    GS_CHECK_INT(d->m, s->m);
    const double rel = max_diff(d->Q, s->Q, mm) / max_abs(d->Q, mm);
    const double tol = fmax(1e-10, 4.0 * DBL_EPSILON * d->cond_K);
    GS_CHECK_MSG(rel <= tol, "%s: Q differs by %.3g relative (allowed %.3g, cond(K) %.3g)",
                 what, rel, tol, d->cond_K);
}

/* Residual gaps of `ngaps` gaps with 50% fasteners, method/form, on both. */
static void check_same_gaps(gs_gen_kind kind, gs_method method, gs_form form)
{
    ts_fixture d, s;
    const int ngaps = 3;
    ts_fx_generate(&d, kind, 0, ngaps, 7, 0.5);
    ts_fx_open(&s, gen(kind, 1), ngaps);
    GS_CHECK(gs_model_has_sparse(s.mdl) && !gs_model_has_sparse(d.mdl));
    memcpy(s.G, d.G, (size_t)ngaps * d.m * sizeof *d.G);
    memcpy(s.load, d.load, (size_t)d.m * sizeof *d.load);
    gs_solve_opts o = ts_opts(method, form);
    o.primal_cert = 1;
    for (int r = 0; r < ngaps; r++) {
        gs_solve_info id, is;
        gs_problem pd = ts_fx_problem(&d, r), ps = ts_fx_problem(&s, r);
        ts_solve_ok(d.sv, &pd, &o, d.lam, d.w, d.x, &id, 1e-7);
        ts_solve_ok(s.sv, &ps, &o, s.lam, s.w, s.x, &is, 1e-7);
        const double dw = max_diff(d.w, s.w, (size_t)d.m);
        GS_CHECK_MSG(dw <= 1e-9, "%s %s/%s gap %d: residual gaps differ by %.3g mm",
                     gs_gen_kind_name(kind), gs_method_name(method), gs_form_name(form), r, dw);
        GS_CHECK_MSG(max_diff(d.lam, s.lam, (size_t)d.m) <= 1e-7 * fmax(1.0, max_abs(d.lam, d.m)),
                     "gap %d: contact forces differ", r);
    }
    ts_fx_free(&d);
    ts_fx_free(&s);
}

/* The contact rows of part b (ascending) into R; returns their number. */
static int contact_rows(const gs_model *mdl, int b, int *R)
{
    const int nb = mdl->parts[b].ndof, off = mdl->parts[b].offset;
    char *mark = calloc((size_t)nb, 1);
    for (int k = 0; k < mdl->m; k++)
        for (int s = 0; s < 2; s++)
            if (mdl->pair_parts[2 * k + s] == b)
                mark[mdl->a_row[2 * k + s] - off] = 1;
    int nr = 0;
    for (int r = 0; r < nb; r++)
        if (mark[r])
            R[nr++] = r;
    free(mark);
    return nr;
}

GS_TEST(sparse_q_equals_condensed_q)
{
    const gs_gen_kind kinds[2] = {GS_GEN_LAP, GS_GEN_SANDWICH};
    for (int k = 0; k < 2; k++) {
        gs_model *md = gen(kinds[k], 0), *ms = gen(kinds[k], 1);
        GS_CHECK_INT(md->m, ms->m);
        GS_CHECK(ms->n > 3 * md->n); /* the whole mesh: many more DOFs */
        gs_precomp *pd = ts_build(md), *ps = ts_build(ms);
        check_same_q(pd, ps, gs_gen_kind_name(kinds[k]));
        GS_CHECK(ps->F[0] != NULL && ps->L[0] == NULL && pd->F[0] == NULL);
        /* the sparse solves on 2 threads: bit-identical Q (fixed chunks, each
         * with single-threaded BLAS) */
        const int before = gs_blas_get_threads();
        gs_blas_set_threads(2);
        gs_precomp *p2 = ts_build(ms);
        gs_blas_set_threads(before);
        GS_CHECK(memcmp(p2->Q, ps->Q, sizeof(double) * (size_t)ps->m * (size_t)ps->m) == 0);
        gs_precomp_free(p2);
        GS_CHECK(isfinite(ps->cond_K) && ps->cond_K > 1.0);
        gs_precomp_free(pd);
        gs_precomp_free(ps);
        gs_model_free(md);
        gs_model_free(ms);
    }
}


/* (K^-1)[R, R] two ways on each part of both uncondensed joints: the Schur
 * route (R ordered last, mode 1: the factor's trailing block inverted) and
 * nr solves (mode 0, CHOLMOD's ordering): equal to 1e-10 relative, exactly
 * symmetric; a row set other than the one ordered last falls back to the
 * solves, on the same factor; a mode-1 factor solves K x = b like any
 * other. */
/* Parts of precomputation p whose Q term takes the Schur route. */
static int schur_parts(const gs_precomp *p)
{
    int n = 0;
    for (int b = 0; b < p->mdl->n_parts; b++) {
        int *R = malloc(sizeof(int) * (size_t)p->mdl->parts[b].ndof);
        n += gs_spchol_schur_route(p->F[b], R, contact_rows(p->mdl, b, R));
        free(R);
    }
    return n;
}

/* A far field four times the default: each plate's mesh is then large
 * against its junction, the factor orders the contact rows last and Q's
 * terms come from the Schur complements, both parts side by side on two
 * threads (build_Q's inverse_terms): the same bits as one after the other,
 * Q of the condensed model to 1e-10. */
GS_TEST(schur_parts_side_by_side_same_bits)
{
    gs_gen_params gp;
    gs_gen_small_params(GS_GEN_LAP, &gp);
    gp.compute_cond = 0;
    for (int b = 0; b < 2; b++)
        gp.far_width[b] *= 4.0;
    gs_model *md = NULL, *ms = NULL;
    gs_error e;
    GS_CHECK(gs_gen_assembly(&gp, &md, NULL, &e) == GS_OK);
    gp.uncondensed = 1;
    GS_CHECK(gs_gen_assembly(&gp, &ms, NULL, &e) == GS_OK);
    const int before = gs_blas_get_threads();
    gs_blas_set_threads(1);
    gs_precomp *p1 = ts_build(ms);
    gs_blas_set_threads(2);
    gs_precomp *p2 = ts_build(ms);
    gs_blas_set_threads(before);
    GS_CHECK_INT(schur_parts(p1), 2);
    GS_CHECK_INT(schur_parts(p2), 2);
    GS_CHECK(memcmp(p1->Q, p2->Q, sizeof(double) * (size_t)p1->m * (size_t)p1->m) == 0);
    gs_precomp *pd = ts_build(md);
    check_same_q(pd, p2, "lap, far field x4");
    gs_precomp_free(p1);
    gs_precomp_free(p2);
    gs_precomp_free(pd);
    gs_model_free(md);
    gs_model_free(ms);
}

GS_TEST(schur_route_equals_the_solves)
{
    const gs_gen_kind kinds[2] = {GS_GEN_LAP, GS_GEN_SANDWICH};
    for (int k = 0; k < 2; k++) {
        gs_model *mdl = gen(kinds[k], 1);
        for (int b = 0; b < mdl->n_parts; b++) {
            const gs_spmat *K = mdl->parts[b].Ksp;
            GS_CHECK(K != NULL);
            const int nb = mdl->parts[b].ndof;
            int *R = malloc(sizeof(int) * (size_t)nb);
            const int nr = contact_rows(mdl, b, R);
            GS_CHECK(nr > 8 && nr < nb);
            gs_spchol *f0 = NULL, *f1 = NULL;
            gs_error e;
            GS_CHECK_INT(gs_spchol_factor(K, "K", R, nr, 0, &f0, &e), GS_OK);
            GS_CHECK_INT(gs_spchol_factor(K, "K", R, nr, 1, &f1, &e), GS_OK);
            const size_t nn = (size_t)nr * (size_t)nr;
            double *W0 = malloc(nn * sizeof *W0), *W1 = malloc(nn * sizeof *W1);
            GS_CHECK_INT(gs_spchol_inv_sub(f0, R, nr, W0, 2, &e), GS_OK);
            GS_CHECK_INT(gs_spchol_inv_sub(f1, R, nr, W1, 2, &e), GS_OK);
            const double rel = max_diff(W0, W1, nn) / max_abs(W0, nn);
            GS_CHECK_MSG(rel <= 1e-10, "%s part %d: Schur and solves differ by %.3g relative",
                         gs_gen_kind_name(kinds[k]), b, rel);
            for (int j = 0; j < nr; j++)
                for (int i = 0; i < j; i++)
                    GS_CHECK(W1[(size_t)j * nr + i] == W1[(size_t)i * nr + j]);
            /* R without its first row: not the rows ordered last -> solves */
            const int ns = nr - 1;
            double *Ws = malloc((size_t)ns * (size_t)ns * sizeof *Ws);
            GS_CHECK_INT(gs_spchol_inv_sub(f1, R + 1, ns, Ws, 1, &e), GS_OK);
            double d = 0.0;
            for (int j = 0; j < ns; j++)
                for (int i = 0; i < ns; i++)
                    d = fmax(d, fabs(Ws[(size_t)j * ns + i] - W0[(size_t)(j + 1) * nr + i + 1]));
            GS_CHECK_MSG(d <= 1e-10 * max_abs(W0, nn), "sub-block differs by %.3g", d);
            /* K x = e_r through the reordered factor: x_R is W's column */
            double *x = calloc((size_t)nb, sizeof *x);
            x[R[nr / 2]] = 1.0;
            GS_CHECK_INT(gs_spchol_solve(f1, x, nb, 1, &e), GS_OK);
            for (int i = 0; i < nr; i++)
                GS_CHECK(fabs(x[R[i]] - W0[(size_t)(nr / 2) * nr + i]) <=
                         1e-10 * max_abs(W0, nn));
            free(x);
            free(Ws);
            free(W0);
            free(W1);
            free(R);
            gs_spchol_free(f0);
            gs_spchol_free(f1);
        }
        gs_model_free(mdl);
    }
}

GS_TEST(sparse_residual_gaps_equal_condensed_lap)
{
    check_same_gaps(GS_GEN_LAP, GS_METHOD_GI, GS_FORM_RELATIVE);
    check_same_gaps(GS_GEN_LAP, GS_METHOD_GI, GS_FORM_PRIMAL);
    check_same_gaps(GS_GEN_LAP, GS_METHOD_IPM, GS_FORM_DEFAULT);
    check_same_gaps(GS_GEN_LAP, GS_METHOD_NPM, GS_FORM_DUAL);
}

GS_TEST(sparse_residual_gaps_equal_condensed_sandwich)
{
    check_same_gaps(GS_GEN_SANDWICH, GS_METHOD_GI, GS_FORM_DUAL);
    check_same_gaps(GS_GEN_SANDWICH, GS_METHOD_GI, GS_FORM_PRIMAL);
    check_same_gaps(GS_GEN_SANDWICH, GS_METHOD_AUTO, GS_FORM_DEFAULT);
}

GS_TEST(sparse_precomp_save_load_refactors)
{
    char path[512];
    gs_error e;
    gs_model *ms = gen(GS_GEN_LAP, 1);
    gs_precomp *ps = ts_build(ms), *pl = NULL;
    gs_test_tmp_path(path, sizeof path, "sparse.precomp");
    unsigned long long sum = 0;
    GS_CHECK_INT(gs_precomp_save(ps, path, &sum, &e), GS_OK);
    GS_CHECK_MSG(gs_precomp_load(ms, path, sum, &pl, &e) == GS_OK, "%s", e.msg);
    const size_t mm = (size_t)ps->m * (size_t)ps->m;
    GS_CHECK(memcmp(ps->Q, pl->Q, mm * sizeof *ps->Q) == 0);
    GS_CHECK(pl->F[0] != NULL);
    /* displacements through the recomputed factor: bit-identical */
    double *a = malloc((size_t)ms->n * sizeof *a), *b = malloc((size_t)ms->n * sizeof *b);
    for (int i = 0; i < ms->n; i++)
        a[i] = b[i] = sin(0.37 * i);
    GS_CHECK_INT(gs_precomp_kinv(ps, a), 0);
    GS_CHECK_INT(gs_precomp_kinv(pl, b), 0);
    GS_CHECK(memcmp(a, b, (size_t)ms->n * sizeof *a) == 0);
    /* and K (K^-1 v) = v */
    double *kv = malloc((size_t)ms->n * sizeof *kv), *v = malloc((size_t)ms->n * sizeof *v);
    for (int i = 0; i < ms->n; i++)
        v[i] = sin(0.37 * i);
    gs_model_K_mul(ms, a, kv);
    GS_CHECK_MSG(max_diff(kv, v, (size_t)ms->n) <= 1e-8, "K K^-1 v - v = %.3g",
                 max_diff(kv, v, (size_t)ms->n));
    free(a);
    free(b);
    free(kv);
    free(v);
    gs_precomp_free(ps);
    gs_precomp_free(pl);
    gs_model_free(ms);
}

/* GS_PRECOMP_DEFER_SPARSE: a loaded file's sparse parts stay unfactored;
 * GI relative solves bit-identically to the full load; what solves with K
 * (x, the primal certificate, the primal forms, K^-1 itself) is refused
 * until gs_precomp_factor_sparse (on two threads), after which x is bitwise
 * the full load's. */
GS_TEST(sparse_load_deferred_factors)
{
    char path[512];
    gs_error e;
    gs_model *ms = gen(GS_GEN_LAP, 1);
    gs_precomp *ps = ts_build(ms), *pf = NULL, *pd = NULL;
    gs_test_tmp_path(path, sizeof path, "sparse-defer.precomp");
    GS_CHECK_INT(gs_precomp_save(ps, path, NULL, &e), GS_OK);
    GS_CHECK_INT(gs_precomp_load_ex(ms, path, 0, 0, &pf, &e), GS_OK);
    GS_CHECK_INT(gs_precomp_load_ex(ms, path, 0, GS_PRECOMP_DEFER_SPARSE, &pd, &e), GS_OK);
    GS_CHECK(gs_precomp_has_part_factors(pf) && !gs_precomp_has_part_factors(pd));
    GS_CHECK(gs_precomp_has_lq(pd)); /* only the sparse factors are left out */
    const int m = ms->m, n = ms->n;
    GS_CHECK(memcmp(pf->Q, pd->Q, sizeof(double) * (size_t)m * m) == 0);
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = 1.0;
    GS_CHECK_INT(gs_precomp_kinv(pd, v), -1);
    GS_CHECK(isnan(v[0]) && isnan(v[n - 1]));
    GS_CHECK_INT(gs_precomp_part_solve(pd, 0, v, n, 1, &e), GS_ERR_INVALID);
    double *g = malloc(sizeof(double) * (size_t)m), *load = calloc((size_t)m, sizeof *load);
    double *lam[2], *w[2], *x[2];
    for (int t = 0; t < 2; t++) {
        lam[t] = malloc(sizeof(double) * (size_t)m);
        w[t] = malloc(sizeof(double) * (size_t)m);
        x[t] = malloc(sizeof(double) * (size_t)n);
    }
    for (int i = 0; i < m; i++)
        g[i] = 0.05 * sin(0.11 * i) - 0.02;
    for (int i = 0; i < m; i += 97)
        load[i] = 400.0;
    gs_solver *sf = gs_solver_new(pf, &e), *sd = gs_solver_new(pd, &e);
    GS_CHECK(sf && sd);
    gs_problem bf = {.pc = pf, .g = g, .load = load}, bd = {.pc = pd, .g = g, .load = load};
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.want_x = 0;
    gs_solve_info info;
    GS_CHECK_INT(gs_solve(sf, &bf, &o, lam[0], w[0], NULL, &info, &e), GS_OK);
    GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
    GS_CHECK_INT(gs_solve(sd, &bd, &o, lam[1], w[1], NULL, &info, &e), GS_OK);
    GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
    GS_CHECK(memcmp(w[0], w[1], sizeof(double) * (size_t)m) == 0);
    GS_CHECK(memcmp(lam[0], lam[1], sizeof(double) * (size_t)m) == 0);
    o.want_x = 1;
    GS_CHECK_INT(gs_solve(sd, &bd, &o, lam[1], w[1], x[1], &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "x");
    o.want_x = 0;
    o.primal_cert = 1;
    GS_CHECK_INT(gs_solve(sd, &bd, &o, lam[1], w[1], x[1], &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "x");
    gs_solve_opts op = ts_opts(GS_METHOD_GI, GS_FORM_PRIMAL);
    op.want_x = 0;
    GS_CHECK_INT(gs_solve(sd, &bd, &op, lam[1], w[1], NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "method");
    gs_solve_opts oi = ts_opts(GS_METHOD_IPM, GS_FORM_DEFAULT); /* its default: primal */
    oi.want_x = 0;
    GS_CHECK_INT(gs_solve(sd, &bd, &oi, lam[1], w[1], NULL, &info, &e), GS_ERR_INVALID);
    GS_CHECK(gs_method_needs_part_factors(GS_METHOD_IPM, GS_FORM_DEFAULT) &&
             !gs_method_needs_part_factors(GS_METHOD_IPM, GS_FORM_DUAL) &&
             !gs_method_needs_part_factors(GS_METHOD_AUTO, GS_FORM_PRIMAL));
    /* factored afterwards, the two plates side by side (the full load took
     * OpenBLAS's thread count): x bitwise the full load's */
    GS_CHECK_INT(gs_precomp_factor_sparse(pd, 2, &e), GS_OK);
    GS_CHECK(gs_precomp_has_part_factors(pd));
    o.primal_cert = 0;
    o.want_x = 1;
    GS_CHECK_INT(gs_solve(sf, &bf, &o, lam[0], w[0], x[0], &info, &e), GS_OK);
    GS_CHECK_INT(gs_solve(sd, &bd, &o, lam[1], w[1], x[1], &info, &e), GS_OK);
    GS_CHECK(memcmp(x[0], x[1], sizeof(double) * (size_t)n) == 0);
    for (int t = 0; t < 2; t++) {
        free(lam[t]);
        free(w[t]);
        free(x[t]);
    }
    free(g);
    free(load);
    free(v);
    gs_solver_free(sf);
    gs_solver_free(sd);
    gs_precomp_free(ps);
    gs_precomp_free(pf);
    gs_precomp_free(pd);
    gs_model_free(ms);
}

GS_TEST(sparse_part_without_jig_is_not_spd)
{
    gs_fe_plate pl;
    gs_error e;
    GS_CHECK_INT(gs_fe_plate_init(&pl, 6, 4, 0, 0, 60, 40, 70000, 0.33, 2.0, &e), GS_OK);
    gs_spmat sp;
    GS_CHECK_INT(gs_fe_plate_sparse(&pl, &sp, NULL, &e), GS_OK); /* no jig: free plate */
    GS_CHECK_INT((int)sp.n, 3 * pl.n_nodes);
    gs_model *mdl = gs_model_new(1, 1, 1, 0, &e);
    GS_CHECK(mdl != NULL);
    GS_CHECK_INT(gs_model_set_sparse_block(mdl, 0, &sp, &e), GS_OK);
    mdl->nodes[0] = (gs_node){.part = 0, .dof = 0};
    mdl->pairs[0] = (gs_pair){.node = {0, GS_FIXED}, .coef = {1.0, 0.0}};
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_ERR_NOT_SPD);
    GS_CHECK_STR(e.field, "parts[0].K");
    GS_CHECK_MSG(strstr(e.msg, "node ") != NULL, "names the node: %s", e.msg);
    gs_model_free(mdl);
    gs_fe_plate_free(&pl);
}

/* A sparse part read from a file that names its rows (Abaqus matrix
 * input): its not_spd error names the FE node and component where the
 * factorization broke down (the loader keeps the row labels in the sparse
 * block, not only for resolving nodes). The 3 x 3 tridiagonal [4 1; 1 0.1 1;
 * 1 4] of nodes 101-103, component 3, has its second pivot 0.1 - 1/4 < 0. */
GS_TEST(sparse_part_from_a_labelled_file_names_the_fe_node)
{
    char dir[512], path[700];
    gs_error e;
    gs_test_tmp_path(dir, sizeof dir, "sparse_label");
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/k.stif", dir);
    FILE *fp = fopen(path, "w");
    GS_CHECK(fp != NULL);
    fputs("101,3,101,3,4.0\n102,3,101,3,1.0\n102,3,102,3,0.1\n103,3,102,3,1.0\n"
          "103,3,103,3,4.0\n", fp);
    fclose(fp);
    static const char text[] =
        "{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": [{\"ndof\": 3, "
        "\"storage\": \"sparse\", \"K\": {\"file\": \"k.stif\", \"format\": "
        "\"abaqus-matrix-input\"}}, {\"ndof\": 1, \"K\": [[4]]}], \"nodes\": {\"part\": "
        "[0, 1], \"dof\": [1, 0]}, \"pairs\": {\"i\": [0], \"j\": [1]}}";
    gs_model *mdl = NULL;
    GS_CHECK_MSG(gs_model_parse_json(text, sizeof text - 1, dir, NULL, &mdl, &e) == GS_OK,
                 "%s: %s", e.field, e.msg);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_ERR_NOT_SPD);
    GS_CHECK_STR(e.field, "parts[0].K");
    GS_CHECK_MSG(strstr(e.msg, "node 102 dof 3") != NULL, "names the FE node: %s", e.msg);
    gs_model_free(mdl);
}

/* Matrix Market coordinate file of a lower triangle (symmetric). */
static void write_mm(const char *path, const gs_spmat *a)
{
    FILE *fp = fopen(path, "w");
    GS_CHECK(fp != NULL);
    fprintf(fp, "%%%%MatrixMarket matrix coordinate real symmetric\n%lld %lld %lld\n",
            (long long)a->n, (long long)a->n, (long long)a->nnz);
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            fprintf(fp, "%lld %lld %.17g\n", (long long)a->rowind[p] + 1, (long long)j + 1,
                    a->val[p]);
    fclose(fp);
}

GS_TEST(model_json_storage_sparse)
{
    char dir[512], path[700], text[1024];
    gs_error e;
    gs_test_tmp_path(dir, sizeof dir, "sparse_json");
    mkdir(dir, 0755);
    gs_fe_plate pl;
    GS_CHECK_INT(gs_fe_plate_init(&pl, 8, 4, 0, 0, 80, 40, 70000, 0.33, 2.0, &e), GS_OK);
    gs_fe_plate_clamp_edge(&pl, GS_FE_EDGE_Y0);
    gs_spmat sp;
    int *row = malloc((size_t)pl.ndof * sizeof *row);
    GS_CHECK_INT(gs_fe_plate_sparse(&pl, &sp, row, &e), GS_OK);
    snprintf(path, sizeof path, "%s/plate.mtx", dir);
    write_mm(path, &sp);
    /* three nodes of the free edge y = 40 against the jig */
    const int r0 = row[3 * gs_fe_plate_node(&pl, 2, 4)], r1 = row[3 * gs_fe_plate_node(&pl, 4, 4)],
              r2 = row[3 * gs_fe_plate_node(&pl, 6, 4)];
    gs_model *m[2] = {NULL, NULL};
    const char *storage[2] = {"dense", "sparse"};
    for (int k = 0; k < 2; k++) {
        int len = snprintf(text, sizeof text,
                           "{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": [{\"ndof\": "
                           "%lld, \"storage\": \"%s\", \"K\": \"plate.mtx\"}], \"nodes\": "
                           "{\"part\": [0, 0, 0], \"dof\": [%d, %d, %d]}, \"pairs\": {\"i\": "
                           "[0, 1, 2], \"j\": [-1, -1, -1], \"ci\": [1, 1, 1], \"cj\": [0, 0, 0]}}",
                           (long long)sp.n, storage[k], r0, r1, r2);
        GS_CHECK_MSG(gs_model_parse_json(text, (size_t)len, dir, NULL, &m[k], &e) == GS_OK,
                     "%s: %s: %s", storage[k], e.field, e.msg);
    }
    GS_CHECK(m[0]->parts[0].K != NULL && m[0]->parts[0].Ksp == NULL);
    GS_CHECK(m[1]->parts[0].Ksp != NULL && m[1]->parts[0].K == NULL);
    gs_precomp *pd = ts_build(m[0]), *ps = ts_build(m[1]);
    check_same_q(pd, ps, "storage");
    /* one condition estimate for both storages: the sparse factor's is the
     * same 1-norm estimator (spchol.h), not CHOLMOD's diagonal ratio, which
     * was 1e2-1e7 times lower */
    GS_CHECK_MSG(fabs(ps->cond_K / pd->cond_K - 1.0) < 1e-3, "cond_K sparse %.6g dense %.6g",
                 ps->cond_K, pd->cond_K);
    /* a bad storage value names the field */
    int len = snprintf(text, sizeof text,
                       "{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": [{\"ndof\": "
                       "%lld, \"storage\": \"csr\", \"K\": \"plate.mtx\"}], \"nodes\": "
                       "{\"part\": [0], \"dof\": [0]}, \"pairs\": {\"i\": [0], \"j\": [-1]}}",
                       (long long)sp.n);
    gs_model *bad = NULL;
    GS_CHECK_INT(gs_model_parse_json(text, (size_t)len, dir, NULL, &bad, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "parts[0].storage");
    gs_precomp_free(pd);
    gs_precomp_free(ps);
    gs_model_free(m[0]);
    gs_model_free(m[1]);
    gs_spmat_free(&sp);
    free(row);
    gs_fe_plate_free(&pl);
}

GS_TEST(generated_models_round_trip_every_format)
{
    static const char *const sparse_fmts[] = {"matrix-market", "abaqus-coordinate",
                                              "abaqus-matrix-input", "nastran-dmig"};
    static const char *const dense_fmts[] = {"abaqus-user-element", "nastran-dmig",
                                             "matrix-market", "npy"};
    char dir[512], path[700];
    gs_error e;
    gs_test_tmp_path(dir, sizeof dir, "sparse_formats");
    mkdir(dir, 0755);
    gs_model *md = gen(GS_GEN_SANDWICH, 0), *ms = gen(GS_GEN_SANDWICH, 1);
    gs_precomp *pd = ts_build(md);
    for (int u = 0; u < 2; u++) {
        gs_model *src = u ? ms : md;
        const char *const *fmts = u ? sparse_fmts : dense_fmts;
        for (int f = 0; f < 4; f++) {
            GS_CHECK_MSG(gs_model_write_json_as(src, dir, "m", 0, fmts[f], &e) == GS_OK,
                         "%s: %s: %s", fmts[f], e.field, e.msg);
            snprintf(path, sizeof path, "%s/m.json", dir);
            gs_model *back = NULL;
            GS_CHECK_MSG(gs_model_read_json(path, NULL, &back, &e) == GS_OK, "%s: %s: %s",
                         fmts[f], e.field, e.msg);
            GS_CHECK_MSG(gs_model_equal(src, back), "%s (%s): read back differs", fmts[f],
                         u ? "uncondensed" : "condensed");
            GS_CHECK(!back->parts[0].Ksp == !u);
            if (u && f == 3) { /* one full precomputation from the files */
                gs_precomp *pb = ts_build(back);
                check_same_q(pd, pb, fmts[f]);
                gs_precomp_free(pb);
            }
            gs_model_free(back);
        }
    }
    /* a format that names FE nodes refuses a matrix without labels */
    gs_spmat a;
    const double one[1] = {2.0};
    GS_CHECK_INT(gs_spmat_from_dense(one, 1, &a, &e), GS_OK);
    snprintf(path, sizeof path, "%s/nolabel.pch", dir);
    GS_CHECK_INT(gs_matrix_write_file(path, "nastran-dmig", &a, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "no row labels") != NULL);
    gs_spmat_free(&a);
    /* a user element needs the same DOF list at every node: node 1 has DOFs
     * 3 and 4, node 2 only 3 (a support fixed its rotation) */
    const double k3[9] = {4, 1, 0, 1, 4, 1, 0, 1, 4};
    GS_CHECK_INT(gs_spmat_from_dense(k3, 3, &a, &e), GS_OK);
    a.label = malloc(3 * sizeof *a.label);
    a.dof = malloc(3 * sizeof *a.dof);
    a.label[0] = a.label[1] = 1;
    a.label[2] = 2;
    a.dof[0] = a.dof[2] = 3;
    a.dof[1] = 4;
    snprintf(path, sizeof path, "%s/uel.inp", dir);
    GS_CHECK_INT(gs_matrix_write_file(path, "abaqus-user-element", &a, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK_MSG(strstr(e.msg, "abaqus-user-element: node 1 has 2 DOFs") != NULL, "%s", e.msg);
    gs_spmat_free(&a);
    const double k4[16] = {4, 1, 0, 0, 1, 4, 1, 0, 0, 1, 4, 1, 0, 0, 1, 4};
    GS_CHECK_INT(gs_spmat_from_dense(k4, 4, &a, &e), GS_OK); /* nodes 1 (3, 4), 2 (3, 5) */
    a.label = malloc(4 * sizeof *a.label);
    a.dof = malloc(4 * sizeof *a.dof);
    const int64_t lab4[4] = {1, 1, 2, 2};
    const int dof4[4] = {3, 4, 3, 5};
    memcpy(a.label, lab4, sizeof lab4);
    memcpy(a.dof, dof4, sizeof dof4);
    GS_CHECK_INT(gs_matrix_write_file(path, "abaqus-user-element", &a, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK_MSG(strstr(e.msg, "same DOF list") != NULL, "%s", e.msg);
    a.dof[3] = 4; /* now a valid user element: read back equal */
    GS_CHECK_INT(gs_matrix_write_file(path, "abaqus-user-element", &a, &e), GS_OK);
    gs_spmat b;
    gs_matread_opts o = {.max_n = 100, .max_nnz = 100};
    GS_CHECK_INT(gs_matrix_read_file(path, "abaqus-user-element", &o, &b, &e), GS_OK);
    double d4[16];
    gs_spmat_to_dense(&b, d4);
    GS_CHECK(memcmp(d4, k4, sizeof k4) == 0 && b.label[2] == 2 && b.dof[3] == 4);
    gs_spmat_free(&b);
    gs_spmat_free(&a);
    gs_precomp_free(pd);
    gs_model_free(md);
    gs_model_free(ms);
}

/* ---- a rigidly rotated space truss --------------------------------------------- */

#define TR_NX 5
#define TR_NY 4
#define TR_NODES (2 * TR_NX * TR_NY) /* two layers */

/* Node (i, j, layer) of a part: label base + 1.. */
static int tr_node(int i, int j, int l)
{
    return (l * TR_NX + i) * TR_NY + j;
}

/* x' = R x + t */
static void tr_place(const double R[9], const double t[3], const double x[3], double y[3])
{
    for (int a = 0; a < 3; a++)
        y[a] = R[3 * a] * x[0] + R[3 * a + 1] * x[1] + R[3 * a + 2] * x[2] + t[a];
}

/* The stiffness of one part: springs k e e' along every edge of a two-layer
 * lattice (grid, diagonals, between layers) from the placed coordinates, plus
 * isotropic springs to the ground (k0 I; 100 k0 on the edge i = 0). Rows
 * (label, component 1..3), labels base + node + 1. O(nodes). */
static void tr_part(double z0, const double R[9], const double t[3], int64_t base,
                    gs_spmat *out, double xyz[TR_NODES][3])
{
    gs_coo c;
    gs_error e;
    gs_coo_init(&c, SIZE_MAX);
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < TR_NX; i++)
            for (int j = 0; j < TR_NY; j++) {
                const double x[3] = {10.0 * i, 10.0 * j, z0 + 6.0 * l};
                tr_place(R, t, x, xyz[tr_node(i, j, l)]);
            }
    static const int nb[][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, -1, 0}, {0, 0, 1},
                                {1, 0, 1}, {0, 1, 1}, {-1, 0, 1}, {0, -1, 1}};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < TR_NX; i++)
            for (int j = 0; j < TR_NY; j++)
                for (size_t q = 0; q < sizeof nb / sizeof *nb; q++) {
                    const int i2 = i + nb[q][0], j2 = j + nb[q][1], l2 = l + nb[q][2];
                    if (i2 < 0 || i2 >= TR_NX || j2 < 0 || j2 >= TR_NY || l2 > 1)
                        continue;
                    const int a = tr_node(i, j, l), b = tr_node(i2, j2, l2);
                    double d[3], len = 0.0;
                    for (int k = 0; k < 3; k++) {
                        d[k] = xyz[b][k] - xyz[a][k];
                        len += d[k] * d[k];
                    }
                    len = sqrt(len);
                    const double k = 7e4 / len; /* EA / L */
                    for (int r = 0; r < 3; r++)
                        for (int s = 0; s < 3; s++) {
                            const double v = k * d[r] * d[s] / (len * len);
                            GS_CHECK_INT(gs_coo_add(&c, 3 * a + r, 3 * a + s, v, &e), GS_OK);
                            GS_CHECK_INT(gs_coo_add(&c, 3 * b + r, 3 * b + s, v, &e), GS_OK);
                            GS_CHECK_INT(gs_coo_add(&c, 3 * a + r, 3 * b + s, -v, &e), GS_OK);
                            GS_CHECK_INT(gs_coo_add(&c, 3 * b + r, 3 * a + s, -v, &e), GS_OK);
                        }
                }
    for (int v = 0; v < TR_NODES; v++) {
        const double k0 = v / TR_NY % TR_NX == 0 ? 5e3 : 50.0;
        for (int r = 0; r < 3; r++)
            GS_CHECK_INT(gs_coo_add(&c, 3 * v + r, 3 * v + r, k0, &e), GS_OK);
    }
    int64_t *label = malloc(3 * TR_NODES * sizeof *label);
    int *dof = malloc(3 * TR_NODES * sizeof *dof);
    for (int r = 0; r < 3 * TR_NODES; r++) {
        label[r] = base + r / 3 + 1;
        dof[r] = r % 3 + 1;
    }
    GS_CHECK_INT(gs_coo_to_spmat(&c, 3 * TR_NODES, GS_COO_GENERAL, label, dof, out, &e), GS_OK);
}

/* Residual gaps and forces of the truss joint placed by (R, t), parts stored
 * as `storage`: the lower part's top layer (z = 6) against the upper part's
 * bottom layer (z = 6.5), every node pair with the normal R e_z, gaps
 * 0.5 + g_k, 500 N fasteners at every other pair. */
static void tr_solve(const double R[9], const double t[3], const char *storage, double *w,
                     double *lam, int m)
{
    char dir[512], path[700];
    gs_error e;
    gs_test_tmp_path(dir, sizeof dir, "truss");
    mkdir(dir, 0755);
    double xl[TR_NODES][3], xu[TR_NODES][3];
    gs_spmat kl, ku;
    tr_part(0.0, R, t, 1000, &kl, xl);
    tr_part(6.5, R, t, 2000, &ku, xu);
    snprintf(path, sizeof path, "%s/lower.pch", dir);
    GS_CHECK_INT(gs_matrix_write_file(path, "nastran-dmig", &kl, &e), GS_OK);
    snprintf(path, sizeof path, "%s/upper.pch", dir);
    GS_CHECK_INT(gs_matrix_write_file(path, "nastran-dmig", &ku, &e), GS_OK);
    gs_spmat_free(&kl);
    gs_spmat_free(&ku);
    const double ez[3] = {0, 0, 1}, zero[3] = {0, 0, 0};
    double n[3];
    tr_place(R, zero, ez, n);
    /* the JSON: nodes 2k (upper, part 1) and 2k + 1 (lower, part 0) */
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
#define PUT(...) (len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__))
    PUT("{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": ["
        "{\"ndof\": %d, \"storage\": \"%s\", \"K\": {\"file\": \"lower.pch\", "
        "\"format\": \"nastran-dmig\"}}, {\"ndof\": %d, \"storage\": \"%s\", \"K\": "
        "{\"file\": \"upper.pch\", \"format\": \"nastran-dmig\"}}],\n",
        3 * TR_NODES, storage, 3 * TR_NODES, storage);
    const char *col[6] = {"part", "label", "i", "j", "ci", "cj"};
    for (int q = 0; q < 6; q++) {
        if (q == 0)
            PUT("\"nodes\": {");
        if (q == 2)
            PUT("}, \"pairs\": {");
        PUT("%s\"%s\": [", q == 0 || q == 2 ? "" : ", ", col[q]);
        for (int k = 0; k < m; k++) {
            const int i = k / TR_NY, j = k % TR_NY;
            const char *sep = k ? ", " : "";
            if (q == 0)
                PUT("%s1, 0", sep);
            else if (q == 1)
                PUT("%s%d, %d", sep, 2000 + tr_node(i, j, 0) + 1, 1000 + tr_node(i, j, 1) + 1);
            else
                PUT("%s%d", sep, q == 2 ? 2 * k : q == 3 ? 2 * k + 1 : q == 4 ? -1 : 1);
        }
        PUT("]");
    }
    for (int c = 0; c < 3; c++) {
        PUT(", \"n%c\": [", "xyz"[c]);
        for (int k = 0; k < m; k++)
            PUT("%s%.17g", k ? ", " : "", n[c]);
        PUT("]");
    }
    PUT("}, \"fasteners\": {\"pair\": [");
    for (int k = 0; k < m; k += 2)
        PUT("%s%d", k ? ", " : "", k);
    PUT("], \"load\": [");
    for (int k = 0; k < m; k += 2)
        PUT("%s500", k ? ", " : "");
    PUT("]}}\n");
#undef PUT
    GS_CHECK(len < cap);
    gs_model *mdl = NULL;
    GS_CHECK_MSG(gs_model_parse_json(text, len, dir, NULL, &mdl, &e) == GS_OK, "%s: %s", e.field,
                 e.msg);
    free(text);
    GS_CHECK_INT(mdl->m, m);
    gs_precomp *pc = ts_build(mdl);
    gs_solver *sv = gs_solver_new(pc, &e);
    double *g = malloc((size_t)m * sizeof *g), *load = calloc((size_t)m, sizeof *load);
    unsigned char inst[64];
    memset(inst, 1, sizeof inst);
    gs_model_pattern_load(mdl, inst, load);
    for (int k = 0; k < m; k++)
        g[k] = 0.5 + 0.3 * sin(0.9 * k);
    gs_problem pb = {.pc = pc, .g = g, .load = load};
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.primal_cert = 1;
    gs_solve_info info;
    double *x = malloc((size_t)mdl->n * sizeof *x);
    ts_solve_ok(sv, &pb, &o, lam, w, x, &info, 1e-8);
    GS_CHECK_MSG(info.n_act > 2 && info.n_act < m, "a contact problem: %d of %d in contact",
                 info.n_act, m);
    free(x);
    free(g);
    free(load);
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(rigidly_rotated_truss_same_residual_gaps)
{
    const int m = TR_NX * TR_NY;
    /* R: rotation by 0.7 rad about the unit axis (2, -1, 3)/sqrt(14) (Rodrigues) */
    double R[9], a[3] = {2.0 / sqrt(14.0), -1.0 / sqrt(14.0), 3.0 / sqrt(14.0)};
    const double th = 0.7, cs = cos(th), sn = sin(th);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            const double cross[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
            R[3 * r + c] = (r == c ? cs : 0.0) + (1 - cs) * a[r] * a[c] + sn * cross[3 * r + c];
        }
    const double ID[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, t0[3] = {0, 0, 0}, t1[3] = {250, -40, 75};
    double w0[TR_NX * TR_NY], l0[TR_NX * TR_NY], w1[TR_NX * TR_NY], l1[TR_NX * TR_NY];
    double w2[TR_NX * TR_NY], l2[TR_NX * TR_NY];
    tr_solve(ID, t0, "sparse", w0, l0, m);
    tr_solve(R, t1, "sparse", w1, l1, m);
    tr_solve(R, t1, "dense", w2, l2, m);
    const double lmax = max_abs(l0, (size_t)m);
    fprintf(stderr, "  rotated truss: max |dw| %.3g mm (sparse), %.3g mm (dense); max |dlam| %.3g "
            "of %.3g N\n", max_diff(w0, w1, (size_t)m), max_diff(w0, w2, (size_t)m),
            max_diff(l0, l1, (size_t)m), lmax);
    GS_CHECK(max_diff(w0, w1, (size_t)m) <= 1e-9 && max_diff(w0, w2, (size_t)m) <= 1e-9);
    GS_CHECK(max_diff(l0, l1, (size_t)m) <= 1e-9 * lmax && max_diff(l0, l2, (size_t)m) <= 1e-9 * lmax);
}

/* The memory count of a whole-mesh precomputation: what an upload's
 * estimate leaves out is exactly the parts' CHOLMOD factors, each at least
 * its diagonal's values and row indices. */
GS_TEST(sparse_factor_bytes_counted)
{
    gs_model *mdl = gen(GS_GEN_LAP, 1);
    gs_precomp *pc = ts_build(mdl); /* with L_Q */
    size_t fac = 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        GS_CHECK(mdl->parts[b].Ksp != NULL && pc->F[b] != NULL);
        const size_t bytes = gs_spchol_bytes(pc->F[b]);
        GS_CHECK(bytes >= (size_t)mdl->parts[b].ndof * (sizeof(double) + sizeof(int64_t)));
        fac += bytes;
    }
    GS_CHECK_INT((long long)(gs_precomp_bytes(pc) - gs_precomp_bytes_ahead(mdl)), (long long)fac);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* The build's check (precomp_check.h) on sparse parts: CHOLMOD's solve
 * against the part's sparse K, at rounding level on a correct build; an
 * entry of K changed after the factorization (the factor then no longer
 * solves the block, as a miscomputed factor would not) fails it, naming
 * the part. */
GS_TEST(sparse_build_check)
{
    gs_model *ms = gen(GS_GEN_LAP, 1);
    gs_precomp *ps = ts_build(ms);
    gs_error e;
    double rq = -1.0;
    GS_CHECK_INT(gs_precomp_check_q(ps, 2, &rq, &e), GS_OK);
    GS_CHECK_MSG(rq >= 0.0 && rq < 1e-13, "ratio %.3g", rq);
    gs_spmat *K = ms->parts[1].Ksp;
    double *d = &K->val[K->colptr[5]]; /* the first stored entry of column 5 */
    const double d0 = *d;
    *d = d0 * (1.0 + 1e-5);
    GS_CHECK_INT(gs_precomp_check_q(ps, 1, NULL, &e), GS_ERR_CHECK);
    GS_CHECK_STR(e.field, "parts[1].K");
    GS_CHECK(strstr(e.msg, "CHOLMOD") != NULL);
    *d = d0;
    GS_CHECK_INT(gs_precomp_check_q(ps, 1, NULL, &e), GS_OK);
    gs_precomp_free(ps);
    gs_model_free(ms);
}

GS_TEST_MAIN()
