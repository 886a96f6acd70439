/*
 * test_generator.c -- FE-built assembly models, gap clouds and fastener
 * patterns (gen/generator.h).
 *
 * Asserts: the small lap / lap-fine / sandwich models validate and have the
 * documented n, m, fastener and fixed-pair counts, no (lap) or the expected
 * number of (sandwich) nodes in two pairs; paired nodes coincide in (x, y)
 * and the pair orientation matches the header (node[0] above node[1], coef
 * -1 / +1; fixed pairs' sign follows the side of the rigid part); blocks are
 * exactly symmetric and SPD with cond in a sensible range; the condensed
 * flexibility grows toward the free edge (the jig is in the matrix); the
 * paper-size defaults have n within 10% of 5206 / 11308 / 6190, and the
 * default lap joint (built in full) has cond(K) in 1e5..1e8; gap clouds are
 * deterministic per seed and per row, non-negative, touching somewhere,
 * spatially smooth, with mean and peak in the requested ranges (sandwich:
 * per interface, fixed pairs scaled); patterns (core/interfaces.h) install
 * exactly round(fraction * n_fast) candidates, every interface its
 * floor/ceil share, spread by position (exact sets on a hand-made model);
 * bad parameters fail. The peak/mean ratios a cloud can meet
 * (gs_gen_cloud_ratio_range) hold the defaults, do not depend on mean and
 * peak, stay below the pair count of the interface, and are tight: just
 * inside them every row's mean is the requested one to 1e-9, just beyond
 * the largest it is not. The lap wing panel clamped with extra support
 * points is built, the points there; values beyond generator.h's ranges
 * are GS_ERR_INVALID naming the field (also a clamped edge without an
 * element row, a correlation length the cloud cannot honour); rows of a
 * cloud alone equal those rows of the whole cloud; gs_gen_plan tells the
 * sizes gs_gen_assembly builds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "generator.h"
#include "gs_test.h"
#include "linalg.h"

static gs_model *build(gs_gen_kind kind, int small, gs_gen_info *info)
{
    gs_gen_params p;
    if (small)
        gs_gen_small_params(kind, &p);
    else
        gs_gen_default_params(kind, &p);
    gs_model *mdl = NULL;
    gs_error e;
    gs_err rc = gs_gen_assembly(&p, &mdl, info, &e);
    GS_CHECK_MSG(rc == GS_OK, "%s: %s", e.field, e.msg);
    GS_CHECK(mdl != NULL);
    return mdl;
}

/* Structure checks shared by every model. */
static void check_structure(const gs_model *mdl, const gs_gen_info *info)
{
    GS_CHECK(mdl->validated);
    GS_CHECK_INT(info->n, mdl->n);
    GS_CHECK_INT(info->m, mdl->m);
    GS_CHECK_INT(info->n_fast, mdl->n_fast);
    int sum = 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        const gs_part *pt = &mdl->parts[b];
        GS_CHECK_INT(pt->ndof, info->ndof[b]);
        sum += pt->ndof;
        for (int j = 0; j < pt->ndof; j++) {
            GS_CHECK(pt->K[j + (size_t)j * pt->ndof] > 0.0);
            for (int i = j + 1; i < pt->ndof; i++)
                GS_CHECK(pt->K[i + (size_t)j * pt->ndof] == pt->K[j + (size_t)i * pt->ndof]);
        }
        double cond = 0.0;
        gs_error e;
        GS_CHECK_INT(gs_spd_cond_est(pt->K, pt->ndof, &cond, "K", &e), GS_OK);
        GS_CHECK_NEAR(cond / info->cond[b], 1.0, 1e-6);
        GS_CHECK_MSG(cond > 1e2 && cond < 1e9, "part %d cond %g", b, cond);
        GS_CHECK(info->cond_K >= cond * (1 - 1e-12));
    }
    GS_CHECK_INT(sum, mdl->n);
    int fixed = 0;
    for (int k = 0; k < mdl->m; k++) {
        const gs_pair *pr = &mdl->pairs[k];
        const gs_node *a = &mdl->nodes[pr->node[0]];
        if (pr->node[1] == GS_FIXED) {
            fixed++;
            /* above the rigid part (z > 0) closes moving down: coef -1 */
            GS_CHECK(a->xyz[2] != 0.0);
            GS_CHECK(pr->coef[0] == (a->xyz[2] > 0.0 ? -1.0 : 1.0));
            continue;
        }
        const gs_node *b = &mdl->nodes[pr->node[1]];
        GS_CHECK(a->xyz[0] == b->xyz[0] && a->xyz[1] == b->xyz[1]); /* coincide in x, y */
        GS_CHECK(a->xyz[2] > b->xyz[2]);                           /* node[0] is the upper */
        GS_CHECK(a->part != b->part);
        GS_CHECK(pr->coef[0] == -1.0 && pr->coef[1] == 1.0);
    }
    GS_CHECK_INT(fixed, info->n_fixed_pairs);
    for (int i = 0; i < mdl->n_fast; i++) {
        GS_CHECK(mdl->fast[i].pair >= 0 && mdl->fast[i].pair < mdl->m);
        GS_CHECK(mdl->fast[i].load == 500.0);
    }
    /* nodes in two pairs, recounted */
    int *uses = calloc((size_t)mdl->n_nodes, sizeof *uses), two = 0;
    GS_CHECK(uses);
    for (int k = 0; k < mdl->m; k++)
        for (int s = 0; s < 2; s++)
            if (mdl->pairs[k].node[s] >= 0)
                uses[mdl->pairs[k].node[s]]++;
    for (int v = 0; v < mdl->n_nodes; v++) {
        GS_CHECK(uses[v] >= 1 && uses[v] <= 2);
        two += uses[v] == 2;
    }
    free(uses);
    GS_CHECK_INT(two, info->nodes_two_pairs);
}

GS_TEST(small_lap)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_LAP, 1, &info);
    check_structure(mdl, &info);
    GS_CHECK_INT(info.n, 104); /* 2 parts x 13 stations x 4 rows */
    GS_CHECK_INT(info.m, 52);
    GS_CHECK_INT(info.n_parts, 2);
    GS_CHECK_INT(info.nodes_two_pairs, 0);
    GS_CHECK_INT(info.n_fixed_pairs, 0);
    GS_CHECK_INT(info.n_fast, 10); /* stations 0,3,..,12 x 2 lines */
    GS_CHECK(mdl->joint == GS_JOINT_SIMPLE);
    GS_CHECK(info.cond_K > 1e4 && info.cond_K < 1e8);
    GS_CHECK(info.fe_ndof[0] > info.ndof[0] && info.fe_ndof[1] > info.ndof[1]);
    /* the jig is in the matrix: the panel (clamped at y = -far) is most
     * flexible at its free edge (last junction row), least at the first row */
    const gs_part *pt = &mdl->parts[0];
    int nd = pt->ndof;
    double *F = malloc(sizeof(double) * nd * nd);
    GS_CHECK(F);
    memcpy(F, pt->K, sizeof(double) * nd * nd);
    GS_CHECK_INT(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nd, F, nd), 0);
    GS_CHECK_INT(LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', nd, F, nd), 0);
    /* local dof = station * 4 + row; middle station 6 */
    double f_in = F[(6 * 4 + 0) * (nd + 1)], f_edge = F[(6 * 4 + 3) * (nd + 1)];
    GS_CHECK_MSG(f_edge > 1.5 * f_in, "flexibility edge %g vs inner %g", f_edge, f_in);
    /* flange (clamped at y = ymax + far): the opposite */
    pt = &mdl->parts[1];
    memcpy(F, pt->K, sizeof(double) * nd * nd);
    GS_CHECK_INT(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nd, F, nd), 0);
    GS_CHECK_INT(LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', nd, F, nd), 0);
    f_in = F[(6 * 4 + 3) * (nd + 1)];
    f_edge = F[(6 * 4 + 0) * (nd + 1)];
    GS_CHECK_MSG(f_edge > 1.5 * f_in, "flange flexibility edge %g vs inner %g", f_edge, f_in);
    free(F);
    gs_model_free(mdl);
}

GS_TEST(small_lap_fine_and_sandwich)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_LAP_FINE, 1, &info);
    check_structure(mdl, &info);
    GS_CHECK_INT(info.n, 170);
    GS_CHECK_INT(info.m, 85);
    GS_CHECK_INT(info.nodes_two_pairs, 0);
    gs_model_free(mdl);

    mdl = build(GS_GEN_SANDWICH, 1, &info);
    check_structure(mdl, &info);
    GS_CHECK_INT(info.n_parts, 4);
    GS_CHECK_INT(info.n, 195);             /* 13 x (3*3 + 2*3) */
    GS_CHECK_INT(info.m, 156);             /* 13 x (2*3 + 2*3) */
    GS_CHECK_INT(info.nodes_two_pairs, 39); /* every wing junction node */
    GS_CHECK_INT(info.n_fixed_pairs, 78);
    GS_CHECK_INT(info.n_fast, 40);
    GS_CHECK(mdl->joint == GS_JOINT_SANDWICH);
    /* every node in two pairs is a wing (part 0) node: above one, below one */
    int *up = calloc((size_t)mdl->n_nodes, sizeof *up), *down = calloc((size_t)mdl->n_nodes, sizeof *down);
    GS_CHECK(up && down);
    for (int k = 0; k < mdl->m; k++) {
        if (mdl->pairs[k].node[1] == GS_FIXED)
            continue;
        down[mdl->pairs[k].node[0]]++; /* node[0] has a part below it */
        up[mdl->pairs[k].node[1]]++;
    }
    for (int v = 0; v < mdl->n_nodes; v++)
        if (up[v] + down[v] == 2) {
            GS_CHECK_INT(mdl->nodes[v].part, 0);
            GS_CHECK(up[v] == 1 && down[v] == 1);
        }
    free(up);
    free(down);
    gs_model_free(mdl);
}

GS_TEST(default_sizes)
{
    const gs_gen_kind kinds[3] = {GS_GEN_LAP, GS_GEN_LAP_FINE, GS_GEN_SANDWICH};
    const double paper[3] = {5206, 11308, 6190};
    for (int q = 0; q < 3; q++) {
        gs_gen_params p;
        gs_gen_default_params(kinds[q], &p);
        double n = kinds[q] == GS_GEN_SANDWICH ? p.nx * (3.0 * p.ny_j + 2.0 * p.ny_c)
                                                : 2.0 * p.nx * p.ny_j;
        GS_CHECK_MSG(fabs(n / paper[q] - 1.0) < 0.10, "kind %d: n %g vs %g", q, n, paper[q]);
    }
    /* the full-size lap joint: n, m and cond(K) in the paper's range */
    gs_gen_info info;
    double t0 = gs_now();
    gs_model *mdl = build(GS_GEN_LAP, 0, &info);
    printf("  default lap: n %d m %d cond(K) %.3e (blocks %.3e, %.3e) in %.2f s\n", info.n,
           info.m, info.cond_K, info.cond[0], info.cond[1], gs_now() - t0);
    GS_CHECK_INT(info.n, 5206);
    GS_CHECK_INT(info.m, 2603);
    GS_CHECK(info.cond_K >= 1e5 && info.cond_K <= 1e8);
    GS_CHECK(mdl->validated);
    gs_model_free(mdl);
    /* scaling keeps the physical width: (ny_j - 1) hy constant */
    gs_gen_params p;
    gs_gen_small_params(GS_GEN_LAP, &p);
    double w = (p.ny_j - 1) * p.hy;
    gs_gen_params_scale(&p, 2.0);
    GS_CHECK_INT(p.nx, 25);
    GS_CHECK_INT(p.ny_j, 7);
    GS_CHECK_NEAR((p.ny_j - 1) * p.hy, w, 1e-9);
    GS_CHECK_INT(p.fast_every, 6);
}

GS_TEST(bad_params)
{
    gs_gen_params p;
    gs_model *mdl = NULL;
    gs_error e;
    gs_gen_small_params(GS_GEN_LAP, &p);
    p.nx = 2;
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_ERR_INVALID);
    GS_CHECK(mdl == NULL);
    gs_gen_small_params(GS_GEN_LAP, &p);
    p.t[1] = 0.0;
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_ERR_INVALID);
    gs_gen_small_params(GS_GEN_LAP, &p);
    p.far_width[1] = 0.0; /* the flange needs its web */
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_ERR_INVALID);
    gs_gen_small_params(GS_GEN_SANDWICH, &p);
    p.n_support = 1;
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_ERR_INVALID);
    gs_gen_small_params(GS_GEN_LAP, &p);
    p.clamp_far = 0; /* a free wing panel without supports */
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_ERR_INVALID);
    gs_gen_small_params(GS_GEN_LAP, &p);
    p.fast_lines = 3;
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_ERR_INVALID);
    GS_CHECK(mdl == NULL);
    /* the wing on support points only (no clamp) still gives an SPD model */
    gs_gen_small_params(GS_GEN_LAP, &p);
    p.clamp_far = 0;
    p.n_support = 3;
    gs_gen_info info;
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, &info, &e), GS_OK);
    GS_CHECK(info.cond[0] > 0.0 && info.cond[0] < 1e9);
    gs_model_free(mdl);
    gs_gen_kind k;
    GS_CHECK_INT(gs_gen_kind_parse("sandwich", &k), 0);
    GS_CHECK(k == GS_GEN_SANDWICH);
    GS_CHECK_INT(gs_gen_kind_parse("lap-fine", &k), 0);
    GS_CHECK(k == GS_GEN_LAP_FINE);
    GS_CHECK_INT(gs_gen_kind_parse("lapx", &k), -1);
    GS_CHECK_STR(gs_gen_kind_name(GS_GEN_LAP), "lap");
}

GS_TEST(gap_cloud_lap)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_LAP, 1, &info);
    const int k = 300, m = mdl->m;
    double *G = malloc(sizeof(double) * k * m), *G2 = malloc(sizeof(double) * k * m);
    GS_CHECK(G && G2);
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 42, NULL, G, NULL), GS_OK);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 42, &cp, G2, NULL), GS_OK);
    GS_CHECK(memcmp(G, G2, sizeof(double) * k * m) == 0); /* deterministic */
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 5, 42, &cp, G2, NULL), GS_OK);
    GS_CHECK(memcmp(G, G2, sizeof(double) * 5 * m) == 0); /* row r independent of k */
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 5, 43, &cp, G2, NULL), GS_OK);
    GS_CHECK(memcmp(G, G2, sizeof(double) * 5 * m) != 0); /* seed matters */
    double tot = 0.0, gmax = 0.0, d_near = 0.0, d_far = 0.0;
    for (int r = 0; r < k; r++) {
        const double *g = G + (size_t)r * m;
        double s = 0.0, mx = 0.0, mn = INFINITY;
        for (int q = 0; q < m; q++) {
            GS_CHECK(g[q] >= 0.0 && isfinite(g[q]));
            s += g[q];
            mx = fmax(mx, g[q]);
            mn = fmin(mn, g[q]);
        }
        GS_CHECK(mn == 0.0); /* the parts touch somewhere */
        double mean = s / m;
        GS_CHECK_MSG(mean >= cp.mean * (1 - cp.spread) - 1e-6 &&
                         mean <= cp.mean * (1 + cp.spread) + 1e-6, "row %d mean %g", r, mean);
        GS_CHECK_MSG(mx >= cp.peak * (1 - cp.spread) - 1e-9 && mx <= cp.peak * (1 + cp.spread) + 1e-9,
                     "row %d max %g", r, mx);
        tot += s;
        gmax = fmax(gmax, mx);
        /* smoothness: pairs are station-major (4 rows per station) */
        for (int q = 0; q + 4 < m; q++) {
            d_near += fabs(g[q + 4] - g[q]);                  /* next station, 20 mm */
            d_far += fabs(g[(q * 17 + 7) % m] - g[q]);        /* scattered */
        }
    }
    double mean_all = tot / ((double)k * m);
    printf("  lap cloud: mean %.3f mm, max %.3f mm, near/far difference ratio %.3f\n", mean_all,
           gmax, d_near / d_far);
    GS_CHECK(mean_all > 0.2 && mean_all < 1.0);
    GS_CHECK(gmax >= 2.0 && gmax <= 3.0);
    GS_CHECK(d_near < 0.5 * d_far);
    /* bad parameters */
    cp.peak = cp.mean;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 1, 1, &cp, G, NULL), GS_ERR_INVALID);
    gs_gen_cloud_default(&cp);
    cp.spread = 1.5;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 1, 1, &cp, G, NULL), GS_ERR_INVALID);
    gs_gen_cloud_default(&cp);
    cp.scatter = 1.01;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, 1, 1, &cp, G, NULL), GS_ERR_INVALID);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, -1, 1, NULL, G, NULL), GS_ERR_INVALID);
    free(G);
    free(G2);
    gs_model_free(mdl);
}

/* The largest relative error of the row means of a k x m cloud against mean,
 * and the largest relative error of the row maxima against peak. */
static void row_errors(const double *G, int k, int m, double mean, double peak, double *emean,
                       double *epeak)
{
    *emean = *epeak = 0.0;
    for (int r = 0; r < k; r++) {
        double s = 0.0, mx = 0.0;
        for (int q = 0; q < m; q++) {
            s += G[(size_t)r * m + q];
            mx = fmax(mx, G[(size_t)r * m + q]);
        }
        *emean = fmax(*emean, fabs(s / m - mean) / mean);
        *epeak = fmax(*epeak, fabs(mx - peak) / peak);
    }
}

GS_TEST(gap_cloud_ratio_range)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_LAP, 1, &info); /* one interface of 52 pairs */
    const int k = 40, m = mdl->m;
    double *G = malloc(sizeof(double) * k * m);
    GS_CHECK(G != NULL);
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    double rmin, rmax, rmin2, rmax2;
    gs_error e;
    GS_CHECK_INT(gs_gen_cloud_ratio_range(mdl, k, 3, &cp, &rmin, &rmax, &e), GS_OK);
    printf("  lap cloud: peak/mean in [%.4g, %.4g] (spread 0.2)\n", rmin, rmax);
    GS_CHECK(rmin <= cp.peak / cp.mean && cp.peak / cp.mean <= rmax); /* the defaults */
    GS_CHECK(rmax < m * (1.0 + cp.spread) / (1.0 - cp.spread));
    cp.mean = 0.1; /* the fields do not depend on mean and peak */
    cp.peak = 7.0;
    GS_CHECK_INT(gs_gen_cloud_ratio_range(mdl, k, 3, &cp, &rmin2, &rmax2, &e), GS_OK);
    GS_CHECK(rmin2 == rmin && rmax2 == rmax);
    /* spread 0: every row's mean is the requested one inside the range */
    cp.spread = 0.0;
    cp.mean = 0.5;
    GS_CHECK_INT(gs_gen_cloud_ratio_range(mdl, k, 3, &cp, &rmin, &rmax, &e), GS_OK);
    GS_CHECK(rmin == 1.0 && rmax > 5.0 && rmax < m); /* mean(u^gamma) >= 1 / 52 */
    double emean, epeak;
    cp.peak = cp.mean * rmax * (1.0 - 1e-6);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 3, &cp, G, &e), GS_OK);
    row_errors(G, k, m, cp.mean, cp.peak, &emean, &epeak);
    GS_CHECK_MSG(emean < 1e-9 && epeak < 1e-12, "inside: mean off by %.3g, peak by %.3g", emean,
                 epeak);
    cp.peak = cp.mean * rmax * 1.05; /* beyond: some row misses its mean */
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 3, &cp, G, &e), GS_OK);
    row_errors(G, k, m, cp.mean, cp.peak, &emean, &epeak);
    GS_CHECK_MSG(emean > 1e-3, "beyond: mean off by %.3g only", emean);
    /* bad parameters: the cloud's errors */
    cp.scatter = 2.0;
    GS_CHECK_INT(gs_gen_cloud_ratio_range(mdl, k, 3, &cp, &rmin, &rmax, &e), GS_ERR_INVALID);
    free(G);
    gs_model_free(mdl);

    /* small interfaces bound the ratio from below too: the sandwich's */
    mdl = build(GS_GEN_SANDWICH, 1, &info);
    gs_gen_cloud_default(&cp);
    GS_CHECK_INT(gs_gen_cloud_ratio_range(mdl, 50, 1, &cp, &rmin, &rmax, &e), GS_OK);
    printf("  sandwich cloud: peak/mean in [%.4g, %.4g]\n", rmin, rmax);
    GS_CHECK(rmin > 1.05 && rmin <= cp.peak / cp.mean && cp.peak / cp.mean <= rmax);
    gs_model_free(mdl);
    GS_CHECK_INT(gs_gen_kind_parts(GS_GEN_LAP), 2);
    GS_CHECK_INT(gs_gen_kind_parts(GS_GEN_LAP_FINE), 2);
    GS_CHECK_INT(gs_gen_kind_parts(GS_GEN_SANDWICH), 4);
}

/* Mean distance between consecutive rows of a k x m cloud. */
static double row_spread(const double *G, int k, int m)
{
    double d = 0.0;
    for (int r = 0; r + 1 < k; r++)
        for (int q = 0; q < m; q++)
            d += fabs(G[(size_t)(r + 1) * m + q] - G[(size_t)r * m + q]);
    return d / ((double)(k - 1) * m);
}

/* scatter: the share of each gap's own field. 0 with spread 0 gives one
 * shape for every row; 0.2 gives similar rows that still touch; 1 is the
 * independent cloud, unchanged (scatter enters only below 1). */
GS_TEST(gap_cloud_scatter)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_LAP, 1, &info);
    const int k = 40, m = mdl->m;
    double *G = malloc(sizeof(double) * k * m), *G2 = malloc(sizeof(double) * k * m);
    GS_CHECK(G && G2);
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 9, &cp, G, NULL), GS_OK);
    double d_indep = row_spread(G, k, m);
    cp.scatter = 0.2;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 9, &cp, G2, NULL), GS_OK);
    double d_similar = row_spread(G2, k, m);
    for (int r = 0; r < k; r++) {
        double mn = INFINITY;
        for (int q = 0; q < m; q++)
            mn = fmin(mn, G2[(size_t)r * m + q]);
        GS_CHECK_MSG(mn == 0.0, "row %d min %g", r, mn);
    }
    printf("  lap cloud: mean |g_r+1 - g_r| %.4f mm independent, %.4f mm at scatter 0.2\n",
           d_indep, d_similar);
    GS_CHECK(d_similar < 0.5 * d_indep);
    cp.scatter = 0.0;
    cp.spread = 0.0;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 9, &cp, G2, NULL), GS_OK);
    GS_CHECK(memcmp(G2, G2 + (size_t)(k - 1) * m, sizeof(double) * m) == 0);
    free(G);
    free(G2);
    gs_model_free(mdl);
}

GS_TEST(gap_cloud_sandwich_interfaces)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_SANDWICH, 1, &info);
    const int k = 200, m = mdl->m;
    double *G = malloc(sizeof(double) * k * m);
    GS_CHECK(G);
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    cp.mean = 0.4;
    cp.peak = 2.0;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 7, &cp, G, NULL), GS_OK);
    /* interfaces: triform/wing, wing/buttstrap 1, wing/buttstrap 2, fixed ones */
    double fmax_fixed = 0.0, fmax_free = 0.0;
    int upper_equals_lower = 0;
    for (int r = 0; r < k; r++) {
        const double *g = G + (size_t)r * m;
        for (int q = 0; q < m; q++) {
            GS_CHECK(g[q] >= 0.0);
            if (mdl->pairs[q].node[1] == GS_FIXED)
                fmax_fixed = fmax(fmax_fixed, g[q]);
            else
                fmax_free = fmax(fmax_free, g[q]);
        }
        /* upper and lower interfaces at the same wing node get different fields */
        for (int q = 0; q + 1 < m; q++)
            if (mdl->pairs[q].node[1] == mdl->pairs[q + 1].node[0] && g[q] == g[q + 1] &&
                g[q] > 0.0)
                upper_equals_lower++;
    }
    GS_CHECK(fmax_free <= cp.peak * (1 + cp.spread) + 1e-9 && fmax_free >= cp.peak);
    GS_CHECK(fmax_fixed <= cp.fixed_scale * cp.peak * (1 + cp.spread) + 1e-9);
    GS_CHECK(fmax_fixed >= cp.fixed_scale * cp.peak * (1 - cp.spread) - 1e-9);
    GS_CHECK_INT(upper_equals_lower, 0);
    free(G);
    gs_model_free(mdl);
}

/* Installed count per interface of a pattern; returns the number of interfaces. */
static int shares_of(const gs_model *mdl, const unsigned char *inst, int *cnt, int *on)
{
    int *iface = malloc(sizeof(int) * (size_t)mdl->m), *key = malloc(sizeof(int) * 2 * (size_t)mdl->m);
    GS_CHECK(iface && key);
    gs_error e;
    int ng = gs_model_interfaces(mdl, iface, key, &e);
    GS_CHECK(ng > 0);
    for (int g = 0; g < ng; g++)
        cnt[g] = on[g] = 0;
    for (int i = 0; i < mdl->n_fast; i++) {
        cnt[iface[mdl->fast[i].pair]]++;
        on[iface[mdl->fast[i].pair]] += inst[i];
    }
    free(iface);
    free(key);
    return ng;
}

GS_TEST(patterns_share_every_interface)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_SANDWICH, 1, &info);
    const int nf = mdl->n_fast; /* 40 */
    unsigned char inst[64];
    const double fr[9] = {0.0, 0.1, 0.25, 0.37, 0.5, 0.9, 1.0, 1.7, NAN};
    gs_error e;
    for (int t = 0; t < 9; t++) {
        memset(inst, 7, sizeof inst);
        GS_CHECK_INT(gs_gen_pattern(mdl, fr[t], inst, &e), GS_OK);
        int want = isnan(fr[t]) ? 0 : (fr[t] >= 1.0 ? nf : (int)lround(fr[t] * nf));
        GS_CHECK_INT(gs_gen_pattern_count(nf, fr[t]), want);
        int total = 0;
        for (int i = 0; i < nf; i++) {
            GS_CHECK(inst[i] == 0 || inst[i] == 1);
            total += inst[i];
        }
        GS_CHECK_INT(inst[nf], 7); /* nothing written past n_fast */
        GS_CHECK_INT(total, want);
        int cnt[8], on[8], ng = shares_of(mdl, inst, cnt, on);
        GS_CHECK(ng >= 3); /* triform/wing, wing/buttstraps, against the CWB */
        double f = isnan(fr[t]) ? 0 : fmin(fr[t], 1.0);
        for (int g = 0; g < ng; g++) { /* largest remainder: floor or ceil of the share */
            GS_CHECK_MSG(on[g] >= (int)floor(f * cnt[g]) && on[g] <= (int)ceil(f * cnt[g]),
                         "fraction %g interface %d: %d of %d", f, g, on[g], cnt[g]);
            if (f == 0.5 && cnt[g] >= 2)
                GS_CHECK(on[g] >= 1);
        }
    }
    GS_CHECK_INT(gs_gen_pattern_count(10, 0.25), 3); /* round(2.5) = 3 */
    GS_CHECK_INT(gs_gen_pattern_count(10, 0.24), 2);
    gs_model_free(mdl);
}

/* A hand-made model: interface A (part 0 on part 1) with 6 candidates at
 * x = 0..50 listed backwards, interface B (part 1 on the fixed part) with 4
 * candidates on 2 rows (y = 0, 5) at 2 stations (x = 0, 10). */
GS_TEST(patterns_by_position_hand_made)
{
    gs_error e;
    gs_model *mdl = gs_model_new(2, 16, 10, 10, &e);
    GS_CHECK(mdl != NULL);
    for (int q = 0; q < 6; q++) { /* pair q: node 2q (part 0) over node 2q+1 (part 1) */
        double x = 10.0 * (5 - q);
        mdl->nodes[2 * q] = (gs_node){.part = 0, .dof = q, .xyz = {x, 0, 0}};
        mdl->nodes[2 * q + 1] = (gs_node){.part = 1, .dof = q, .xyz = {x, 0, -1}};
        mdl->pairs[q] = (gs_pair){.node = {2 * q, 2 * q + 1}, .coef = {-1, 1}};
    }
    const double bx[4] = {0, 0, 10, 10}, by[4] = {0, 5, 0, 5};
    for (int r = 0; r < 4; r++) {
        mdl->nodes[12 + r] = (gs_node){.part = 1, .dof = 6 + r, .xyz = {bx[r], by[r], -2}};
        mdl->pairs[6 + r] = (gs_pair){.node = {12 + r, GS_FIXED}, .coef = {-1, 0}};
    }
    for (int i = 0; i < 10; i++)
        mdl->fast[i] = (gs_fastener){.pair = i, .load = 500};
    unsigned char inst[10];
    /* 50%: A gets 3 of 6 at x = 10, 30, 50 (pairs 4, 2, 0); B 2 of 4, one per
     * station, alternating rows: (0, 5) and (10, 0) (pairs 7 and 8) */
    GS_CHECK_INT(gs_gen_pattern(mdl, 0.5, inst, &e), GS_OK);
    const unsigned char want50[10] = {1, 0, 1, 0, 1, 0, 0, 1, 1, 0};
    for (int i = 0; i < 10; i++)
        GS_CHECK_MSG(inst[i] == want50[i], "50%%: candidate %d is %d", i, inst[i]);
    /* 30%: 3 in all; floors A 1 (1.8), B 1 (1.2), the extra one to A's larger
     * remainder: A at x = 20, 50 (pairs 3, 0); B at (10, 0) (pair 8) */
    GS_CHECK_INT(gs_gen_pattern(mdl, 0.3, inst, &e), GS_OK);
    const unsigned char want30[10] = {1, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    for (int i = 0; i < 10; i++)
        GS_CHECK_MSG(inst[i] == want30[i], "30%%: candidate %d is %d", i, inst[i]);
    /* a candidate on a pair out of range is an error naming the field */
    mdl->fast[3].pair = 10;
    GS_CHECK_INT(gs_gen_pattern(mdl, 0.5, inst, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "fasteners");
    gs_model_free(mdl);
}

/* ---- 2026-11-28 review: supports on a clamped panel, ranges, clouds ------ */

/* The lap joint's wing panel with its far edge clamped (the default) and
 * the optional support points: the model is built (the supports were
 * refused: one row of points can never pin the rigid and checkerboard
 * modes, which the clamp pins anyway), and the points are there: 3 w DOFs
 * fewer, the wing block stiffer (K1 - K0 positive semidefinite, not zero),
 * the flange's block the same to the bit. */
GS_TEST(lap_clamped_with_supports)
{
    gs_gen_params p;
    gs_gen_small_params(GS_GEN_LAP, &p);
    GS_CHECK_INT(p.clamp_far, 1);
    gs_model *m0 = NULL, *m1 = NULL;
    gs_gen_info i0, i1;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&p, &m0, &i0, &e), GS_OK);
    p.n_support = 3;
    gs_err rc = gs_gen_assembly(&p, &m1, &i1, &e);
    GS_CHECK_MSG(rc == GS_OK, "--supports 3 on the clamped panel: %s: %s", e.field, e.msg);
    if (!m0 || !m1) {
        gs_model_free(m0);
        gs_model_free(m1);
        return;
    }
    GS_CHECK(m1->validated);
    GS_CHECK_INT(i1.fe_ndof[0], i0.fe_ndof[0] - 3); /* three points, w fixed */
    GS_CHECK_INT(i1.fe_ndof[1], i0.fe_ndof[1]);
    const int n = m0->parts[0].ndof;
    GS_CHECK_INT(m1->parts[0].ndof, n);
    GS_CHECK(memcmp(m0->parts[1].K, m1->parts[1].K, (size_t)n * n * sizeof(double)) == 0);
    double *D = malloc((size_t)n * n * sizeof *D), *w = malloc((size_t)n * sizeof *w);
    for (size_t q = 0; q < (size_t)n * n; q++)
        D[q] = m1->parts[0].K[q] - m0->parts[0].K[q];
    GS_CHECK_INT(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, D, n, w), 0);
    const double scale = gs_sym_norm1(m0->parts[0].K, n, n);
    GS_CHECK_MSG(w[0] >= -1e-9 * scale, "lowest eigenvalue of K1 - K0 %g", w[0]);
    GS_CHECK_MSG(w[n - 1] > 1e-3 * scale, "largest eigenvalue of K1 - K0 %g", w[n - 1]);
    free(D);
    free(w);
    gs_model_free(m0);
    gs_model_free(m1);
}

/* Values beyond the ranges of generator.h: GS_ERR_INVALID naming the field,
 * not a LAPACK failure (not_spd, dpbtrf) or an overflowed row count blamed
 * on another part. */
GS_TEST(ranges_refused)
{
    static const struct {
        int what;
        double v;
        const char *field;
    } cases[] = {
        {0, 1e300, "t"},       {0, 1e-5, "t"},         {1, 0.01, "t"}, /* thin: 0.01 / 20 mm */
        {2, 1e-5, "length"},   {2, 1e-300, "length"},  {3, 1e-300, "length"},
        {3, 0.5, "hy"},        {4, 1e300, "far_width"}, {5, 1e300, "far_width"},
        {6, 1e308, "fast_load"}, {7, 1e300, "E"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gs_gen_params p;
        gs_gen_small_params(GS_GEN_LAP, &p);
        const double v = cases[c].v;
        switch (cases[c].what) {
        case 0: p.t[0] = v; break;
        case 1: p.t[1] = v; break;
        case 2: p.length = v; break;
        case 3: p.hy = v; break; /* 0.5: elements 20 x 0.5 mm, aspect 40 */
        case 4: p.far_width[0] = v; break;
        case 5: p.far_width[1] = v; break;
        case 6: p.fast_load = v; break;
        default: p.E = v; break;
        }
        gs_model *mdl = NULL;
        gs_error e;
        gs_error_clear(&e);
        gs_err rc = gs_gen_assembly(&p, &mdl, NULL, &e);
        GS_CHECK_MSG(rc == GS_ERR_INVALID && !strcmp(e.field, cases[c].field),
                     "case %zu (%g): %s at %s: %s", c, v, gs_err_name(rc), e.field, e.msg);
        gs_model_free(mdl);
    }
}

/* The clamped far edge of the lap wing panel needs one element row beyond
 * the junction: refused naming far_width[0] (was "retained node 0 has its
 * w fixed by the jig"). */
GS_TEST(clamped_edge_needs_a_row)
{
    gs_gen_params p;
    gs_gen_small_params(GS_GEN_LAP, &p);
    p.far_width[0] = 4.0; /* 0.2 rows of 20 mm */
    gs_model *mdl = NULL;
    gs_error e;
    gs_error_clear(&e);
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "far_width[0]");
    gs_model_free(mdl);
    p.far_width[0] = 10.0; /* 0.5 rows: one */
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_OK);
    gs_model_free(mdl);
}

/* A correlation length the cloud cannot honour (the field flat to double
 * precision: every row the constant mean) is refused; the largest allowed,
 * 1e6 mm, still gives rows from 0 to their peak. */
GS_TEST(gap_cloud_corr_range)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_LAP, 1, &info);
    const int k = 5, m = mdl->m;
    double *G = malloc((size_t)k * m * sizeof *G);
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    gs_error e;
    cp.corr_len = 1e300;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 1, &cp, G, &e), GS_ERR_INVALID);
    cp.corr_len = 1e6;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 1, &cp, G, &e), GS_OK);
    for (int r = 0; r < k; r++) {
        double mn = INFINITY, mx = 0.0;
        for (int q = 0; q < m; q++) {
            mn = fmin(mn, G[(size_t)r * m + q]);
            mx = fmax(mx, G[(size_t)r * m + q]);
        }
        GS_CHECK_MSG(mn == 0.0 && mx >= 2.0, "row %d: min %g max %g", r, mn, mx);
    }
    free(G);
    gs_model_free(mdl);
}

/* Rows r0 .. r0 + k - 1 alone (gapsim-gen writes its cloud in chunks) are
 * those rows of the whole cloud, bit for bit. */
GS_TEST(gap_cloud_rows_match)
{
    gs_gen_info info;
    gs_model *mdl = build(GS_GEN_SANDWICH, 1, &info);
    const int k = 7, m = mdl->m;
    double *G = malloc((size_t)k * m * sizeof *G), *H = malloc((size_t)k * m * sizeof *H);
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    cp.scatter = 0.3;
    gs_error e;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, k, 9, &cp, G, &e), GS_OK);
    GS_CHECK_INT(gs_gen_gap_cloud_rows(mdl, 2, 4, 9, &cp, H, &e), GS_OK);
    GS_CHECK(memcmp(G + (size_t)2 * m, H, (size_t)4 * m * sizeof *H) == 0);
    GS_CHECK_INT(gs_gen_gap_cloud_rows(mdl, 6, 1, 9, &cp, H, &e), GS_OK);
    GS_CHECK(memcmp(G + (size_t)6 * m, H, (size_t)m * sizeof *H) == 0);
    GS_CHECK_INT(gs_gen_gap_cloud_rows(mdl, -1, 1, 9, &cp, H, &e), GS_ERR_INVALID);
    free(G);
    free(H);
    gs_model_free(mdl);
}

/* gs_gen_plan tells the sizes gs_gen_assembly builds, and the memory, before
 * anything is built; a plate beyond the FE mesh limit is GS_ERR_LIMIT; far
 * widths far beyond the rows are -1 rows, not an overflowed int; a huge
 * --scale saturates the counts (refused), no overflow. */
GS_TEST(plan_matches_build)
{
    const gs_gen_kind kinds[3] = {GS_GEN_LAP, GS_GEN_LAP_FINE, GS_GEN_SANDWICH};
    for (int q = 0; q < 3; q++)
        for (int unc = 0; unc < 2; unc++) {
            gs_gen_params p;
            gs_gen_small_params(kinds[q], &p);
            p.uncondensed = unc;
            gs_gen_plan_info pi;
            gs_gen_info info;
            gs_model *mdl = NULL;
            gs_error e;
            GS_CHECK_INT(gs_gen_plan(&p, &pi, &e), GS_OK);
            GS_CHECK_INT(gs_gen_assembly(&p, &mdl, &info, &e), GS_OK);
            if (!mdl)
                continue;
            GS_CHECK_INT(pi.m, info.m);
            GS_CHECK_INT(pi.n_parts, info.n_parts);
            GS_CHECK_INT(pi.n_fast, info.n_fast);
            double blocks = 0.0;
            for (int b = 0; b < info.n_parts; b++) {
                GS_CHECK(pi.fe_nodes[b] == info.fe_nodes[b]);
                if (unc) {
                    GS_CHECK(pi.ndof[b] >= info.ndof[b]);
                } else {
                    GS_CHECK_INT(pi.ndof[b], info.ndof[b]);
                    blocks += 8.0 * info.ndof[b] * info.ndof[b];
                }
            }
            if (!unc) {
                GS_CHECK_INT(pi.n, info.n);
                GS_CHECK_NEAR(pi.block_bytes, blocks, 0.5);
            }
            GS_CHECK(pi.peak_bytes > pi.block_bytes && pi.block_bytes > 0.0);
            gs_model_free(mdl);
        }
    gs_gen_params p;
    gs_gen_default_params(GS_GEN_LAP, &p);
    p.nx = 20000;
    p.ny_j = 2000;
    p.length = 1e5; /* hx = 5 mm */
    p.hy = 5.0;
    gs_gen_plan_info pi;
    gs_error e;
    GS_CHECK_INT(gs_gen_plan(&p, &pi, &e), GS_OK); /* planned, never built: 4e7 DOFs */
    GS_CHECK(pi.peak_bytes > 1e16);
    p.far_width[0] = 1e5; /* 20000 rows: 20000 x 22000 plate nodes */
    GS_CHECK_INT(gs_gen_plan(&p, &pi, &e), GS_ERR_LIMIT);
    p.far_width[0] = 1e300;
    GS_CHECK_INT(gs_gen_far_rows(&p, 0), -1);
    GS_CHECK_INT(gs_gen_plan(&p, &pi, &e), GS_ERR_INVALID);
    gs_gen_small_params(GS_GEN_LAP, &p);
    gs_gen_params_scale(&p, 1e300);
    GS_CHECK(p.nx > GS_GEN_NX_MAX && p.ny_j > GS_GEN_NY_MAX);
    GS_CHECK_INT(gs_gen_plan(&p, &pi, &e), GS_ERR_INVALID);
}

GS_TEST_MAIN()
