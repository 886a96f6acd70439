/*
 * generator.c -- FE-built lap and sandwich joints and gap clouds (generator.h;
 * fastener patterns: pattern.c).
 *
 * Method: every part is a structured Mindlin plate (fe_plate.h; element SRI
 * or MITC4, gs_gen_params.element) spanning the junction stations it covers;
 * the junction is a shared grid of stations i = 0..nx-1 (x = i hx) and rows
 * r (y = y(r)), so paired nodes coincide in (x, y) by construction. Each
 * part is condensed onto the w of its junction nodes (gs_fe_plate_condense)
 * straight into its model block; local DOF of junction node (i, r) =
 * (i - i_lo) * r_n + (r - r_lo).
 * Cost: the condensation dominates (fe_plate.h); the condition estimates cost
 * ndof_b^3 / 3 per block; pairs, fasteners O(m). Gap clouds: O(m (modes +
 * bumps + 48)) per vector. No global state; the PRNG is splitmix64 on a
 * caller-provided seed.
 */
#include "generator.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe_plate.h"
#include "linalg.h"

/* ------------------------------------------------------------------------ */
/* parameters                                                                */

const char *gs_gen_kind_name(gs_gen_kind kind)
{
    switch (kind) {
    case GS_GEN_LAP: return "lap";
    case GS_GEN_SANDWICH: return "sandwich";
    case GS_GEN_LAP_FINE: return "lap-fine";
    }
    return "unknown";
}

int gs_gen_kind_parts(gs_gen_kind kind)
{
    return kind == GS_GEN_SANDWICH ? 4 : 2;
}

int gs_gen_kind_parse(const char *s, gs_gen_kind *kind)
{
    if (!s)
        return -1;
    if (strcmp(s, "lap") == 0)
        *kind = GS_GEN_LAP;
    else if (strcmp(s, "sandwich") == 0)
        *kind = GS_GEN_SANDWICH;
    else if (strcmp(s, "lap-fine") == 0 || strcmp(s, "lap_fine") == 0)
        *kind = GS_GEN_LAP_FINE;
    else
        return -1;
    return 0;
}

void gs_gen_default_params(gs_gen_kind kind, gs_gen_params *p)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->E = 70000.0;
    p->nu = 0.33;
    p->fast_lines = 2;
    p->fast_load = 500.0;
    p->compute_cond = 1;
    p->element = GS_FE_MITC4; /* SRI's hourglass mode: docs/generator.md */
    if (kind == GS_GEN_SANDWICH) {
        /* LJM-like: n = 121 * (3*11 + 2*9) = 6171, m = 121 * (2*11 + 2*9) = 4840 */
        p->nx = 121;
        p->ny_j = 11;
        p->ny_c = 9;
        p->length = 1200.0;
        p->hy = 10.0;
        p->t[0] = 6.0;  /* wing panel */
        p->t[1] = 4.0;  /* triform flange */
        p->t[2] = 3.0;  /* buttstraps */
        p->t[3] = 3.0;
        p->far_width[0] = 300.0; /* wing panel beyond the overlap */
        p->far_width[1] = 40.0;  /* triform beyond the CWB region, to its web */
        p->far_width[2] = 20.0;  /* buttstrap margins carrying the supports */
        p->far_width[3] = 20.0;
        p->clamp_far = 0;        /* the wing rests on support points only */
        p->n_support = 3;
        p->fast_every = 4;
    } else {
        /* UJM-like: n = 2 * 137 * 19 = 5206 (fine: 2 * 201 * 28 = 11256) */
        int fine = kind == GS_GEN_LAP_FINE;
        p->nx = fine ? 201 : 137;
        p->ny_j = fine ? 28 : 19;
        p->ny_c = 0;
        p->length = 1360.0;
        p->hy = fine ? 180.0 / 27.0 : 10.0;
        p->t[0] = 5.0; /* wing panel */
        p->t[1] = 3.0; /* cruciform flange */
        p->far_width[0] = 200.0;
        p->far_width[1] = 60.0;
        p->clamp_far = 1;
        p->n_support = 0;
        p->fast_every = fine ? 6 : 4;
    }
}

void gs_gen_small_params(gs_gen_kind kind, gs_gen_params *p)
{
    gs_gen_default_params(kind, p);
    p->fast_every = 3;
    if (kind == GS_GEN_SANDWICH) {
        p->nx = 13;
        p->ny_j = 3;
        p->ny_c = 3;
        p->length = 240.0;
        p->hy = 20.0;
        p->far_width[0] = 100.0;
        p->far_width[1] = 20.0;
        p->far_width[2] = 20.0;
        p->far_width[3] = 20.0;
        p->n_support = 3;
    } else if (kind == GS_GEN_LAP_FINE) {
        p->nx = 17;
        p->ny_j = 5;
        p->length = 240.0;
        p->hy = 15.0;
        p->far_width[0] = 90.0;
        p->far_width[1] = 30.0;
        p->fast_every = 4;
    } else {
        p->nx = 13;
        p->ny_j = 4;
        p->length = 240.0;
        p->hy = 20.0;
        p->far_width[0] = 100.0;
        p->far_width[1] = 40.0;
    }
}

/* lround(x), x >= 0, held within [0, 1e9] (no overflow of the int: a count
 * that large is refused by the ranges anyway). */
static int round_count(double x)
{
    return x < 1e9 ? (int)lround(x) : 1000000000;
}

void gs_gen_params_scale(gs_gen_params *p, double s)
{
    if (!(s > 0.0) || !isfinite(s))
        return;
    p->nx = round_count((p->nx - 1) * s) + 1;
    if (p->nx < 4)
        p->nx = 4;
    int nyj = round_count((p->ny_j - 1) * s) + 1;
    if (nyj < 2)
        nyj = 2;
    p->hy *= (double)(p->ny_j - 1) / (nyj - 1);
    p->ny_j = nyj;
    if (p->kind == GS_GEN_SANDWICH) {
        p->ny_c = round_count(p->ny_c * s);
        if (p->ny_c < 1)
            p->ny_c = 1;
    }
    p->fast_every = round_count(p->fast_every * s);
    if (p->fast_every < 1)
        p->fast_every = 1;
}

/* ------------------------------------------------------------------------ */
/* parts                                                                     */

typedef struct {
    char name[32];
    int i_lo, i_n;     /* junction stations covered */
    int r_lo, r_n;     /* junction rows retained */
    int row_off;       /* plate row of junction row r_lo */
    int nyel;          /* plate elements along y */
    double t, z;
    int clamp_y0, clamp_y1;
    int sup_row[2], n_sup_rows, n_sup; /* support points: plate rows, points per row */
    int node0;         /* first model node */
} part_desc;

/* Does the support set pin w = a + b x + c y + d (-1)^(i+j) (rigid + SRI
 * checkerboard)? Gram matrix of [1, i, j, parity] by Cholesky. */
static int supports_pin(const int *si, const int *sj, int ns)
{
    double G[16] = {0};
    for (int k = 0; k < ns; k++) {
        double v[4] = {1.0, si[k], sj[k], ((si[k] + sj[k]) & 1) ? -1.0 : 1.0};
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                G[a + 4 * b] += v[a] * v[b];
    }
    double scale = 0.0;
    for (int a = 0; a < 4; a++)
        scale = fmax(scale, G[a + 4 * a]);
    for (int j = 0; j < 4; j++) { /* unpivoted Cholesky, relative pivot test */
        double d = G[j + 4 * j];
        for (int k = 0; k < j; k++)
            d -= G[j + 4 * k] * G[j + 4 * k];
        if (!(d > 1e-9 * scale))
            return 0;
        d = sqrt(d);
        G[j + 4 * j] = d;
        for (int i = j + 1; i < 4; i++) {
            double s = G[i + 4 * j];
            for (int k = 0; k < j; k++)
                s -= G[i + 4 * k] * G[j + 4 * k];
            G[i + 4 * j] = s / d;
        }
    }
    return 1;
}

/* Place n_sup support points on each support row, evenly along x, then nudge
 * points by one node until the rigid + checkerboard modes are pinned. The
 * same points for every element: MITC4 has no checkerboard and would need
 * only the rigid modes pinned, but identical supports keep an SRI and a MITC4
 * model of the same parameters comparable node for node. Pinning the
 * checkerboard at the supports removes SRI's exact zero mode, not its
 * near-mechanism (fe_plate.h). A plate with a clamped edge (the LAP wing
 * panel's optional extra row) is restrained by the clamp already: its
 * points stay where they are placed (on one row they could never pin the
 * modes by themselves: every point has the same j). */
static gs_err place_supports(gs_fe_plate *pl, const part_desc *pd, gs_error *err)
{
    int ns = pd->n_sup_rows * pd->n_sup;
    if (ns == 0)
        return GS_OK;
    int si[64], sj[64];
    if (ns > 64 || pd->n_sup < 2)
        return gs_errorf(err, GS_ERR_INVALID, "n_support",
                         "%s: need 2..%d support points per row, got %d", pd->name,
                         64 / pd->n_sup_rows, pd->n_sup);
    int k = 0;
    for (int r = 0; r < pd->n_sup_rows; r++)
        for (int s = 0; s < pd->n_sup; s++) {
            si[k] = (int)lround((double)s * pl->nx / (pd->n_sup - 1));
            sj[k] = pd->sup_row[r];
            k++;
        }
    int ok = pd->clamp_y0 || pd->clamp_y1;
    for (int attempt = 0; attempt <= 2 * ns && !ok && !(ok = supports_pin(si, sj, ns)); attempt++) {
        int q = attempt % ns;
        si[q] += si[q] < pl->nx ? 1 : -1;
    }
    if (!ok)
        return gs_errorf(err, GS_ERR_INVALID, "n_support",
                         "%s: the support points do not restrain the plate (rigid-body and "
                         "checkerboard modes)", pd->name);
    for (k = 0; k < ns; k++)
        gs_fe_plate_fix(pl, gs_fe_plate_node(pl, si[k], sj[k]), 0);
    return GS_OK;
}

/* Model node of junction point (station i, row r) in part pd, -1 if not covered. */
static int part_node(const part_desc *pd, int i, int r)
{
    if (i < pd->i_lo || i >= pd->i_lo + pd->i_n || r < pd->r_lo || r >= pd->r_lo + pd->r_n)
        return -1;
    return pd->node0 + (i - pd->i_lo) * pd->r_n + (r - pd->r_lo);
}

/* Build, constrain and condense one part into block b of the model. */
static gs_err build_part(const gs_gen_params *p, gs_model *mdl, int b, const part_desc *pd,
                         double hx, const double *yrow, gs_gen_info *info, gs_error *err)
{
    double t0 = gs_now();
    gs_fe_plate pl;
    double y0 = yrow[pd->r_lo] - pd->row_off * p->hy;
    gs_err rc = gs_fe_plate_init(&pl, pd->i_n - 1, pd->nyel, pd->i_lo * hx, y0,
                                 (pd->i_n - 1) * hx, pd->nyel * p->hy, p->E, p->nu, pd->t, err);
    if (rc != GS_OK) {
        gs_error_prefix_field(err, pd->name);
        return rc;
    }
    pl.integ = p->element;
    if (pd->clamp_y0)
        gs_fe_plate_clamp_edge(&pl, GS_FE_EDGE_Y0);
    if (pd->clamp_y1)
        gs_fe_plate_clamp_edge(&pl, GS_FE_EDGE_Y1);
    rc = place_supports(&pl, pd, err);
    int nr = pd->i_n * pd->r_n;
    int *ret = malloc((size_t)nr * sizeof *ret);
    if (rc == GS_OK && !ret)
        rc = gs_errorf(err, GS_ERR_NOMEM, pd->name, "no memory");
    if (rc == GS_OK) {
        for (int i = 0; i < pd->i_n; i++)
            for (int r = 0; r < pd->r_n; r++)
                ret[i * pd->r_n + r] = gs_fe_plate_node(&pl, i, pd->row_off + r);
        if (!p->uncondensed)
            rc = gs_model_alloc_block(mdl, b, nr, err);
    }
    int *row_of = NULL; /* uncondensed: FE DOF -> row of the sparse K */
    if (rc == GS_OK && p->uncondensed) {
        gs_spmat sp;
        memcpy(mdl->parts[b].name, pd->name, sizeof pd->name);
        if (!(row_of = malloc((size_t)pl.ndof * sizeof *row_of)))
            rc = gs_errorf(err, GS_ERR_NOMEM, pd->name, "no memory");
        else if ((rc = gs_fe_plate_sparse(&pl, &sp, row_of, err)) == GS_OK)
            rc = gs_model_set_sparse_block(mdl, b, &sp, err);
        if (rc != GS_OK)
            gs_error_prefix_field(err, pd->name);
    } else if (rc == GS_OK) {
        memcpy(mdl->parts[b].name, pd->name, sizeof pd->name); /* 32 <= 64, NUL-terminated */
        rc = gs_fe_plate_condense(&pl, nr, ret, mdl->parts[b].K, nr, NULL, err);
        if (rc != GS_OK)
            gs_error_prefix_field(err, pd->name);
    }
    if (rc == GS_OK) {
        for (int i = 0; i < pd->i_n; i++)
            for (int r = 0; r < pd->r_n; r++) {
                gs_node *nd = &mdl->nodes[pd->node0 + i * pd->r_n + r];
                nd->part = b;
                nd->dof = row_of ? row_of[3 * ret[i * pd->r_n + r]] : i * pd->r_n + r;
                nd->xyz[0] = (pd->i_lo + i) * hx;
                nd->xyz[1] = yrow[pd->r_lo + r];
                nd->xyz[2] = pd->z;
            }
        if (info) {
            info->ndof[b] = mdl->parts[b].ndof;
            info->fe_ndof[b] = gs_fe_plate_nfree(&pl);
            info->fe_nodes[b] = pl.n_nodes;
            info->t_condense[b] = gs_now() - t0;
        }
    }
    free(ret);
    free(row_of);
    gs_fe_plate_free(&pl);
    return rc;
}

/* Rows of fastener line l of L over a region of nr rows. */
static int line_row(int l, int L, int nr)
{
    return (2 * l + 1) * nr / (2 * L);
}

/* x within [lo, hi] (NaN is not). */
static int within(double x, double lo, double hi)
{
    return x >= lo && x <= hi;
}

int gs_gen_far_rows(const gs_gen_params *p, int b)
{
    if (b < 0 || b >= GS_GEN_MAX_PARTS)
        return -1;
    const double r = p->far_width[b] / p->hy; /* checked before lround: 1e300 / 1e-300 */
    return r >= 0.0 && r < GS_GEN_ROWS_MAX + 0.5 ? (int)lround(r) : -1;
}

int gs_gen_far_rows_needed(const gs_gen_params *p, int b)
{
    if (p->kind == GS_GEN_SANDWICH)
        return b == 0 ? 2 : b < 4 ? 1 : 0; /* wing: supports on rows 0 and nf / 2 */
    if (b == 0) /* wing panel: its clamped edge, or support rows of their own */
        return p->clamp_far && p->n_support == 0 ? 1 : 2;
    return b == 1 ? 1 : 0; /* flange: its web line */
}

/* The ranges of generator.h and the jig's needs; 0 or the error. */
static int check_params(const gs_gen_params *p, gs_error *err)
{
    int sw = p->kind == GS_GEN_SANDWICH;
    if (p->kind != GS_GEN_LAP && p->kind != GS_GEN_SANDWICH && p->kind != GS_GEN_LAP_FINE)
        return gs_errorf(err, GS_ERR_INVALID, "kind", "unknown model kind %d", (int)p->kind);
    if (p->nx < (sw ? 4 : 3) || p->nx > GS_GEN_NX_MAX)
        return gs_errorf(err, GS_ERR_INVALID, "nx", "nx = %d out of range [%d, %d]", p->nx,
                         sw ? 4 : 3, GS_GEN_NX_MAX);
    if (p->ny_j < 2 || p->ny_j > GS_GEN_NY_MAX)
        return gs_errorf(err, GS_ERR_INVALID, "ny_j", "ny_j = %d out of range [2, %d]", p->ny_j,
                         GS_GEN_NY_MAX);
    if (sw && (p->ny_c < 1 || p->ny_c > GS_GEN_NY_MAX))
        return gs_errorf(err, GS_ERR_INVALID, "ny_c", "ny_c = %d out of range [1, %d]", p->ny_c,
                         GS_GEN_NY_MAX);
    if (!within(p->length, GS_GEN_LEN_MIN, GS_GEN_LEN_MAX) ||
        !within(p->hy, GS_GEN_LEN_MIN, GS_GEN_LEN_MAX))
        return gs_errorf(err, GS_ERR_INVALID, "length",
                         "bad dimensions (length %g, hy %g): each within [%g, %g] mm", p->length,
                         p->hy, GS_GEN_LEN_MIN, GS_GEN_LEN_MAX);
    const double hx = p->length / (p->nx - 1), hy = p->hy;
    if (!within(hx, GS_GEN_LEN_MIN, GS_GEN_LEN_MAX))
        return gs_errorf(err, GS_ERR_INVALID, "length",
                         "element size along x length / (nx - 1) = %g mm out of [%g, %g]", hx,
                         GS_GEN_LEN_MIN, GS_GEN_LEN_MAX);
    if (!within(hx / hy, 1.0 / GS_GEN_ASPECT_MAX, GS_GEN_ASPECT_MAX))
        return gs_errorf(err, GS_ERR_INVALID, "hy",
                         "element aspect ratio hx / hy = %g / %g out of [1/%g, %g]", hx, hy,
                         GS_GEN_ASPECT_MAX, GS_GEN_ASPECT_MAX);
    int np = gs_gen_kind_parts(p->kind);
    for (int b = 0; b < np; b++) {
        if (!within(p->t[b], GS_GEN_LEN_MIN, GS_GEN_LEN_MAX))
            return gs_errorf(err, GS_ERR_INVALID, "t", "thickness of part %d = %g out of [%g, %g] mm",
                             b, p->t[b], GS_GEN_LEN_MIN, GS_GEN_LEN_MAX);
        if (!(p->t[b] >= GS_GEN_THIN_MIN * fmax(hx, hy)))
            return gs_errorf(err, GS_ERR_INVALID, "t",
                             "thickness of part %d = %g mm below %g x the element size %g mm",
                             b, p->t[b], GS_GEN_THIN_MIN, fmax(hx, hy));
        if (!within(p->far_width[b], 0.0, GS_GEN_LEN_MAX) || gs_gen_far_rows(p, b) < 0)
            return gs_errorf(err, GS_ERR_INVALID, "far_width",
                             "far width of part %d = %g mm: within [0, %g] mm and at most %d "
                             "element rows of hy = %g mm", b, p->far_width[b], GS_GEN_LEN_MAX,
                             GS_GEN_ROWS_MAX, hy);
    }
    if (p->element != GS_FE_SRI && p->element != GS_FE_MITC4)
        return gs_errorf(err, GS_ERR_INVALID, "element",
                         "plate element %d: GS_FE_SRI or GS_FE_MITC4", (int)p->element);
    if (!(p->E > 0.0 && p->E <= GS_GEN_E_MAX) || !(p->nu > -1.0 && p->nu < 0.5))
        return gs_errorf(err, GS_ERR_INVALID, "E", "bad material E = %g, nu = %g", p->E, p->nu);
    if (p->fast_every < 1 || (p->fast_lines != 1 && p->fast_lines != 2))
        return gs_errorf(err, GS_ERR_INVALID, "fast_every",
                         "fastener spacing %d (>= 1) / lines %d (1 or 2)", p->fast_every,
                         p->fast_lines);
    if (!within(p->fast_load, 0.0, GS_GEN_LOAD_MAX))
        return gs_errorf(err, GS_ERR_INVALID, "fast_load", "fastener load %g out of [0, %g] N",
                         p->fast_load, GS_GEN_LOAD_MAX);
    if (p->n_support < 0 || p->n_support == 1 || p->n_support > GS_GEN_SUPPORTS_MAX)
        return gs_errorf(err, GS_ERR_INVALID, "n_support", "n_support = %d: 0 or 2..%d",
                         p->n_support, GS_GEN_SUPPORTS_MAX);
    if (!sw && !p->clamp_far && p->n_support < 2)
        return gs_errorf(err, GS_ERR_INVALID, "n_support",
                         "an unclamped wing panel needs n_support >= 2, got %d", p->n_support);
    if (sw && p->n_support < 2)
        return gs_errorf(err, GS_ERR_INVALID, "n_support", "sandwich: n_support = %d, need >= 2",
                         p->n_support);
    for (int b = 0; b < np; b++) {
        const int need = gs_gen_far_rows_needed(p, b);
        if (gs_gen_far_rows(p, b) < need) {
            char field[32];
            snprintf(field, sizeof field, "far_width[%d]", b);
            return gs_errorf(err, GS_ERR_INVALID, field,
                             "part %d needs >= %d element row%s beyond the junction (%s), got "
                             "far width %g mm / hy %g mm", b, need, need == 1 ? "" : "s",
                             sw ? (b == 0 ? "its support rows" : b == 1 ? "its web line"
                                                                        : "its support margin")
                                : (b == 1 ? "its web" : need == 1 ? "its clamped edge"
                                                                  : "its support rows"),
                             p->far_width[b], hy);
        }
    }
    return GS_OK;
}

/* The layout of a model: its parts, nodes, pairs and fastener candidates
 * (for parameters check_params accepted). */
typedef struct {
    part_desc pd[GS_GEN_MAX_PARTS];
    int np, n_nodes, m, n_fast;
    int nst, off, lines_j, lines_c; /* fastener stations and lines */
} gen_layout;

static void plan_layout(const gs_gen_params *p, gen_layout *L)
{
    int sw = p->kind == GS_GEN_SANDWICH;
    int nx = p->nx, nyj = p->ny_j, nyc = sw ? p->ny_c : 0;
    int nrow = nyj + nyc;
    int nf[GS_GEN_MAX_PARTS];
    for (int b = 0; b < GS_GEN_MAX_PARTS; b++)
        nf[b] = b < gs_gen_kind_parts(p->kind) ? gs_gen_far_rows(p, b) : 0;
    part_desc *pd = L->pd;
    memset(L, 0, sizeof *L);
    if (!sw) {
        L->np = 2;
        /* 0: wing panel, upper, y in [-far0, y_max], clamped at y = -far0 */
        pd[0] = (part_desc){.i_lo = 0, .i_n = nx, .r_lo = 0, .r_n = nyj, .row_off = nf[0],
                            .nyel = nyj - 1 + nf[0], .t = p->t[0],
                            .z = 0.5 * (p->t[0] + p->t[1]), .clamp_y0 = p->clamp_far != 0};
        snprintf(pd[0].name, sizeof pd[0].name, "wing_panel");
        if (!p->clamp_far || p->n_support > 0) {
            pd[0].n_sup = p->n_support;
            pd[0].sup_row[0] = nf[0] / 2;
            pd[0].sup_row[1] = 0;
            pd[0].n_sup_rows = p->clamp_far ? 1 : 2;
        }
        /* 1: cruciform flange, lower, y in [0, y_max + far1], clamped at its web */
        pd[1] = (part_desc){.i_lo = 0, .i_n = nx, .r_lo = 0, .r_n = nyj, .row_off = 0,
                            .nyel = nyj - 1 + nf[1], .t = p->t[1], .z = 0.0, .clamp_y1 = 1};
        snprintf(pd[1].name, sizeof pd[1].name, "cruciform_flange");
    } else {
        L->np = 4;
        /* 0: wing panel, middle layer z = 0, rows 0..nyj-1, supports (or clamp) far out */
        pd[0] = (part_desc){.i_lo = 0, .i_n = nx, .r_lo = 0, .r_n = nyj, .row_off = nf[0],
                            .nyel = nyj - 1 + nf[0], .t = p->t[0], .z = 0.0,
                            .clamp_y0 = p->clamp_far != 0};
        snprintf(pd[0].name, sizeof pd[0].name, "wing_panel");
        if (!p->clamp_far) {
            pd[0].n_sup = p->n_support;
            pd[0].n_sup_rows = 2;
            pd[0].sup_row[0] = 0;
            pd[0].sup_row[1] = nf[0] / 2;
        }
        /* 1: triform flange, top, all rows, clamped along its web line */
        pd[1] = (part_desc){.i_lo = 0, .i_n = nx, .r_lo = 0, .r_n = nrow, .row_off = 0,
                            .nyel = nrow - 1 + nf[1], .t = p->t[1],
                            .z = 0.5 * (p->t[0] + p->t[1]), .clamp_y1 = 1};
        snprintf(pd[1].name, sizeof pd[1].name, "triform");
        /* 2, 3: buttstraps, bottom, all rows, split along x, support points only */
        int nx1 = (nx + 1) / 2;
        for (int s = 0; s < 2; s++) {
            int b = 2 + s;
            pd[b] = (part_desc){.i_lo = s ? nx1 : 0, .i_n = s ? nx - nx1 : nx1, .r_lo = 0,
                                .r_n = nrow, .row_off = nf[b], .nyel = nrow - 1 + 2 * nf[b],
                                .t = p->t[b], .z = -0.5 * (p->t[0] + p->t[b]), .n_sup_rows = 2,
                                .n_sup = p->n_support};
            pd[b].sup_row[0] = 0;
            pd[b].sup_row[1] = nrow - 1 + 2 * nf[b];
            snprintf(pd[b].name, sizeof pd[b].name, "buttstrap_%d", s + 1);
        }
    }
    for (int b = 0; b < L->np; b++) {
        pd[b].node0 = L->n_nodes;
        L->n_nodes += pd[b].i_n * pd[b].r_n;
    }
    /* pairs */
    L->m = sw ? nx * (2 * nyj + 2 * nyc) : nx * nyj;
    /* fastener candidates: stations i = off + k * every, lines per region */
    int every = p->fast_every;
    L->off = ((nx - 1) % every) / 2;
    L->nst = (nx - 1 - L->off) / every + 1;
    L->lines_j = p->fast_lines < nyj ? p->fast_lines : nyj;
    L->lines_c = sw ? (p->fast_lines < nyc ? p->fast_lines : nyc) : 0;
    L->n_fast = sw ? L->nst * 2 * (L->lines_j + L->lines_c) : L->nst * L->lines_j;
}

gs_err gs_gen_plan(const gs_gen_params *p, gs_gen_plan_info *pi, gs_error *err)
{
    memset(pi, 0, sizeof *pi);
    gs_err rc = check_params(p, err);
    if (rc != GS_OK)
        return rc;
    gen_layout L;
    plan_layout(p, &L);
    pi->n_parts = L.np;
    pi->m = L.m;
    pi->n_fast = L.n_fast;
    double peak_part = 0.0, max_block = 0.0;
    for (int b = 0; b < L.np; b++) {
        const part_desc *pd = &L.pd[b];
        const long long nodes = (long long)pd->i_n * (pd->nyel + 1);
        const double r = (double)pd->i_n * pd->r_n, N = (double)nodes;
        pi->fe_nodes[b] = nodes;
        pi->far_rows[b] = gs_gen_far_rows(p, b);
        if (3 * nodes > 200000000LL || pd->nyel > 100000)
            return gs_errorf(err, GS_ERR_LIMIT, pd->name,
                             "%s: a plate of %lld nodes (%d x %d), beyond the FE mesh limit "
                             "(3 x nodes <= 2e8)", pd->name, nodes, pd->i_n, pd->nyel + 1);
        pi->ndof[b] = p->uncondensed ? (int)(3 * nodes) : (int)r;
        pi->n += pi->ndof[b];
        double block, work;
        if (p->uncondensed) { /* ~14 entries a row in the lower triangle, COO triplets first */
            block = 700.0 * N;
            work = 2400.0 * N;
        } else { /* the banded plate twice (whole, far field), the dense Schur
                    complement onto w + boundary rotations, its window */
            const double kd = 3.0 * (fmin(pd->i_n - 1, pd->nyel) + 2.0) + 2.0;
            const double rb = r + 4.0 * (pd->i_n + pd->r_n);
            block = 8.0 * r * r;
            work = 8.0 * (2.0 * 3.0 * N * (kd + 1.0) + rb * rb + (kd + 256.0) * rb);
            max_block = fmax(max_block, block);
        }
        pi->block_bytes += block;
        peak_part = fmax(peak_part, work);
    }
    if (p->compute_cond) /* gs_spd_cond_est factors a copy of each dense block */
        peak_part = fmax(peak_part, max_block);
    pi->peak_bytes = pi->block_bytes + peak_part;
    return GS_OK;
}

gs_err gs_gen_assembly(const gs_gen_params *p, gs_model **out, gs_gen_info *info,
                       gs_error *err)
{
    double t_start = gs_now();
    gs_gen_info info0;
    if (!info)
        info = &info0;
    memset(info, 0, sizeof *info);
    *out = NULL;
    gs_err rc = check_params(p, err);
    if (rc != GS_OK)
        return rc;
    int sw = p->kind == GS_GEN_SANDWICH;
    int nx = p->nx, nyj = p->ny_j, nyc = sw ? p->ny_c : 0;
    int nrow = nyj + nyc;
    double hx = p->length / (nx - 1);
    double yrow[2 * GS_GEN_NY_MAX + 1];
    for (int r = 0; r < nrow; r++)
        yrow[r] = sw ? (r - (nyj - 1)) * p->hy : r * p->hy;
    gen_layout L;
    plan_layout(p, &L);
    const part_desc *pd = L.pd;
    const int np = L.np, n_nodes = L.n_nodes, m = L.m, n_fast = L.n_fast;
    const int every = p->fast_every, off = L.off, nst = L.nst, lines_j = L.lines_j,
              lines_c = L.lines_c;

    gs_model *mdl = gs_model_new(np, n_nodes, m, n_fast, err);
    if (!mdl)
        return err ? err->code : GS_ERR_NOMEM;
    snprintf(mdl->name, sizeof mdl->name, "gen-%s nx=%d ny_j=%d%s", gs_gen_kind_name(p->kind),
             nx, nyj, sw ? " sandwich" : "");
    if (sw)
        snprintf(mdl->name, sizeof mdl->name, "gen-%s nx=%d ny_j=%d ny_c=%d",
                 gs_gen_kind_name(p->kind), nx, nyj, nyc);
    if (p->element != GS_FE_MITC4) { /* the default element's models keep their names */
        size_t len = strlen(mdl->name);
        snprintf(mdl->name + len, sizeof mdl->name - len, " %s",
                 gs_fe_integration_name(p->element));
    }
    mdl->joint = sw ? GS_JOINT_SANDWICH : GS_JOINT_SIMPLE;
    info->n_parts = np;

    double t_fe = gs_now();
    for (int b = 0; b < np && rc == GS_OK; b++)
        rc = build_part(p, mdl, b, &pd[b], hx, yrow, info, err);
    info->t_fe = gs_now() - t_fe;
    if (rc != GS_OK) {
        gs_model_free(mdl);
        return rc;
    }

    double t_model = gs_now();
    /* pair index of (station i, row r, interface s) for the fasteners */
    int k = 0, n_fixed = 0;
    int *pair_at = malloc((size_t)nx * (size_t)nrow * 2 * sizeof *pair_at);
    if (!pair_at) {
        gs_model_free(mdl);
        return gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory");
    }
    for (int i = 0; i < nx; i++)
        for (int r = 0; r < nrow; r++)
            for (int s = 0; s < 2; s++) {
                gs_pair *pr = &mdl->pairs[k];
                pair_at[((size_t)i * nrow + r) * 2 + s] = -1;
                if (!sw) {
                    if (s == 1)
                        continue;
                    pr->node[0] = part_node(&pd[0], i, r); /* panel, upper */
                    pr->node[1] = part_node(&pd[1], i, r); /* flange, lower */
                    pr->coef[0] = -1.0;
                    pr->coef[1] = 1.0;
                } else {
                    int bs = part_node(&pd[2], i, r) >= 0 ? 2 : 3;
                    if (r < nyj) {
                        if (s == 0) { /* triform over wing */
                            pr->node[0] = part_node(&pd[1], i, r);
                            pr->node[1] = part_node(&pd[0], i, r);
                        } else { /* wing over buttstrap */
                            pr->node[0] = part_node(&pd[0], i, r);
                            pr->node[1] = part_node(&pd[bs], i, r);
                        }
                        pr->coef[0] = -1.0;
                        pr->coef[1] = 1.0;
                    } else { /* against the rigid CWB skin */
                        pr->node[0] = part_node(&pd[s == 0 ? 1 : bs], i, r);
                        pr->node[1] = GS_FIXED;
                        pr->coef[0] = s == 0 ? -1.0 : 1.0; /* triform above, strap below */
                        pr->coef[1] = 0.0;
                        n_fixed++;
                    }
                }
                pair_at[((size_t)i * nrow + r) * 2 + s] = k;
                k++;
            }
    int nf_i = 0;
    for (int q = 0; q < nst; q++) {
        int i = off + q * every;
        for (int l = 0; l < lines_j; l++) {
            int r = line_row(l, lines_j, nyj);
            for (int s = 0; s < (sw ? 2 : 1); s++)
                mdl->fast[nf_i++] = (gs_fastener){pair_at[((size_t)i * nrow + r) * 2 + s],
                                                   p->fast_load};
        }
        for (int l = 0; l < lines_c; l++) {
            int r = nyj + line_row(l, lines_c, nyc);
            for (int s = 0; s < 2; s++)
                mdl->fast[nf_i++] = (gs_fastener){pair_at[((size_t)i * nrow + r) * 2 + s],
                                                   p->fast_load};
        }
    }
    free(pair_at);
    if (k != m || nf_i != n_fast) { /* internal consistency */
        gs_model_free(mdl);
        return gs_errorf(err, GS_ERR_INVALID, "pairs", "generator bug: %d/%d pairs, %d/%d fasteners",
                         k, m, nf_i, n_fast);
    }
    rc = gs_model_validate(mdl, err);
    if (rc != GS_OK) {
        gs_model_free(mdl);
        return rc;
    }
    /* nodes in two pairs */
    int *uses = calloc((size_t)n_nodes + 1, sizeof *uses);
    if (!uses) {
        gs_model_free(mdl);
        return gs_errorf(err, GS_ERR_NOMEM, "nodes", "no memory");
    }
    for (k = 0; k < m; k++)
        for (int s = 0; s < 2; s++)
            if (mdl->pairs[k].node[s] >= 0)
                uses[mdl->pairs[k].node[s]]++;
    for (int v = 0; v < n_nodes; v++)
        info->nodes_two_pairs += uses[v] >= 2;
    free(uses);
    info->n = mdl->n;
    info->m = m;
    info->n_fast = n_fast;
    info->n_fixed_pairs = n_fixed;
    info->t_model = gs_now() - t_model;

    double t_cond = gs_now();
    double max_norm = 0.0, max_inv = 0.0;
    for (int b = 0; b < np; b++) {
        const gs_part *pt = &mdl->parts[b];
        info->norm1[b] = pt->Ksp ? gs_spmat_norm1(pt->Ksp) : gs_sym_norm1(pt->K, pt->ndof, pt->ndof);
        max_norm = fmax(max_norm, info->norm1[b]);
        if (!p->compute_cond || pt->Ksp) /* a sparse part's estimate comes from its factor */
            continue;
        char field[64];
        snprintf(field, sizeof field, "parts[%d].K", b);
        rc = gs_spd_cond_est(mdl->parts[b].K, mdl->parts[b].ndof, &info->cond[b], field, err);
        if (rc != GS_OK) {
            gs_model_free(mdl);
            return rc;
        }
        max_inv = fmax(max_inv, info->cond[b] / info->norm1[b]);
    }
    info->cond_K = p->compute_cond && max_inv > 0.0 ? max_norm * max_inv : 0.0;
    info->t_cond = gs_now() - t_cond;
    info->t_total = gs_now() - t_start;
    *out = mdl;
    return GS_OK;
}

/* ------------------------------------------------------------------------ */
/* gap clouds                                                                */

void gs_gen_cloud_default(gs_gen_cloud_params *cp)
{
    cp->mean = 0.5;
    cp->peak = 2.5;
    cp->corr_len = 200.0;
    cp->spread = 0.2;
    cp->fixed_scale = 0.25;
    cp->n_modes = 8;
    cp->n_bumps = 3;
    cp->scatter = 1.0;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * 0x1.0p-53;
}

#define GS_GEN_MAX_TERMS 64

/* The raw smooth field of one interface at its pairs idx[0..cnt): val[c]. */
static void field_raw(const gs_model *mdl, const int *idx, int cnt, const double box[4],
                      const gs_gen_cloud_params *cp, uint64_t *rs, double *val)
{
    double kx[GS_GEN_MAX_TERMS], ky[GS_GEN_MAX_TERMS], amp[GS_GEN_MAX_TERMS],
        ph[GS_GEN_MAX_TERMS];
    double bx[GS_GEN_MAX_TERMS], by[GS_GEN_MAX_TERMS], br[GS_GEN_MAX_TERMS],
        ba[GS_GEN_MAX_TERMS];
    const double two_pi = 6.283185307179586;
    int nm = cp->n_modes, nb = cp->n_bumps;
    for (int q = 0; q < nm; q++) {
        double lam = cp->corr_len * (1.0 + 3.0 * unif(rs)); /* wavelength >= corr_len */
        double dir = two_pi * unif(rs);
        kx[q] = two_pi / lam * cos(dir);
        ky[q] = two_pi / lam * sin(dir);
        amp[q] = lam / cp->corr_len * (0.5 + 0.5 * unif(rs));
        ph[q] = two_pi * unif(rs);
    }
    for (int q = 0; q < nb; q++) {
        bx[q] = box[0] + (box[2] - box[0]) * unif(rs);
        by[q] = box[1] + (box[3] - box[1]) * unif(rs);
        br[q] = 0.5 * cp->corr_len * (0.5 + unif(rs));
        ba[q] = (unif(rs) < 0.7 ? 1.0 : -1.0) * (1.0 + 2.0 * unif(rs));
    }
    for (int c = 0; c < cnt; c++) {
        const double *xyz = mdl->nodes[mdl->pairs[idx[c]].node[0]].xyz;
        double x = xyz[0], y = xyz[1], v = 0.0;
        for (int q = 0; q < nm; q++)
            v += amp[q] * cos(kx[q] * x + ky[q] * y + ph[q]);
        for (int q = 0; q < nb; q++) {
            double dx = x - bx[q], dy = y - by[q];
            v += ba[q] * exp(-(dx * dx + dy * dy) / (2.0 * br[q] * br[q]));
        }
        val[c] = v;
    }
}

/* The field of one interface (the pairs idx[0..cnt)) as val[c] = log u_c:
 * the raw field of rs, mixed with the cloud's common field (scatter < 1;
 * common: cnt scratch), normalized to u = (v - vmin) / (vmax - vmin) in
 * [0, 1]. Returns 0, or -1 for a flat field (or one pair): no u. */
static int cloud_logu(const gs_model *mdl, const int *idx, int cnt, const double box[4],
                      const gs_gen_cloud_params *cp, uint64_t *rs, uint64_t rs_common,
                      double *val, double *common)
{
    field_raw(mdl, idx, cnt, box, cp, rs, val);
    if (cp->scatter < 1.0) {
        field_raw(mdl, idx, cnt, box, cp, &rs_common, common);
        for (int c = 0; c < cnt; c++)
            val[c] = cp->scatter * val[c] + (1.0 - cp->scatter) * common[c];
    }
    double vmin = INFINITY, vmax = -INFINITY;
    for (int c = 0; c < cnt; c++) {
        vmin = fmin(vmin, val[c]);
        vmax = fmax(vmax, val[c]);
    }
    if (!(vmax - vmin > 1e-12 * (fabs(vmax) + 1.0)))
        return -1;
    for (int c = 0; c < cnt; c++) {
        double u = (val[c] - vmin) / (vmax - vmin);
        val[c] = u > 0.0 ? log(u) : -INFINITY; /* log u */
    }
    return 0;
}

/* The bounds of the bisection on log(gamma) below: mean(u^gamma) reaches
 * [mean at gamma = e^CLOUD_LOG_GAMMA, mean at e^-CLOUD_LOG_GAMMA]. */
#define CLOUD_LOG_GAMMA 7.0

/* mean(u^gam) over the field logu[0..cnt). */
static double cloud_mean_pow(const double *logu, int cnt, double gam)
{
    double s = 0.0;
    for (int c = 0; c < cnt; c++)
        s += exp(gam * logu[c]);
    return s / cnt;
}

/* g[idx[c]] = peak * u_c^gamma with gamma chosen by bisection on log(gamma)
 * so that mean(u^gamma) = mean / peak; out of reach, gamma stops at its
 * bound (gs_gen_cloud_ratio_range tells the reach). */
static void cloud_map(const double *logu, const int *idx, int cnt, double mean, double peak,
                      double *g)
{
    double rho = mean / peak;
    double lo = -CLOUD_LOG_GAMMA, hi = CLOUD_LOG_GAMMA;
    for (int it = 0; it < 48; it++) {
        double mid = 0.5 * (lo + hi);
        if (cloud_mean_pow(logu, cnt, exp(mid)) > rho)
            lo = mid; /* too flat: raise gamma */
        else
            hi = mid;
    }
    double gam = exp(0.5 * (lo + hi));
    for (int c = 0; c < cnt; c++)
        g[idx[c]] = peak * exp(gam * logu[c]);
}

/* Narrow [range[0], range[1]], the nominal peak/mean ratios R that one
 * interface of one row can meet: its mean/peak is min(a / (b R), 1 / 1.05)
 * (a, b the row's spread draws of mean and peak; peak >= 1.05 mean), which
 * must lie in the reach [rlo, rhi] of mean(u^gamma). */
static void cloud_narrow(const double *logu, int cnt, double a, double b, double range[2])
{
    const double rlo = cloud_mean_pow(logu, cnt, exp(CLOUD_LOG_GAMMA));
    const double rhi = cloud_mean_pow(logu, cnt, exp(-CLOUD_LOG_GAMMA));
    const double clamp = 1.0 / 1.05;
    range[1] = rlo > clamp ? 0.0 : fmin(range[1], a / (b * rlo));
    if (rhi < clamp)
        range[0] = fmax(range[0], a / (b * rhi));
}

/* The rows of a cloud: with G, fill it (gs_gen_gap_cloud); without, narrow
 * range to the peak/mean ratios every row meets (gs_gen_cloud_ratio_range).
 * The random draws do not depend on cp->mean and cp->peak. */
static gs_err cloud_run(const gs_model *mdl, long long r0, int k, unsigned long long seed,
                        const gs_gen_cloud_params *cp_in, double *G, double range[2],
                        gs_error *err)
{
    gs_gen_cloud_params cp;
    if (cp_in)
        cp = *cp_in;
    else
        gs_gen_cloud_default(&cp);
    if (!mdl || k < 0 || r0 < 0 || (k > 0 && !G && !range))
        return gs_errorf(err, GS_ERR_INVALID, "gaps", "bad arguments (k = %d)", k);
    if (!(cp.mean >= GS_GEN_GAP_MIN) || !(cp.peak > cp.mean) || !(cp.peak <= GS_GEN_LEN_MAX) ||
        !within(cp.corr_len, GS_GEN_LEN_MIN, GS_GEN_CORR_MAX) ||
        !(cp.spread >= 0.0 && cp.spread <= 0.9) || !within(cp.fixed_scale, 1e-6, 1e6) ||
        cp.n_modes < 0 || cp.n_bumps < 0 ||
        cp.n_modes > GS_GEN_MAX_TERMS || cp.n_bumps > GS_GEN_MAX_TERMS ||
        cp.n_modes + cp.n_bumps < 1 || !(cp.scatter >= 0.0 && cp.scatter <= 1.0))
        return gs_errorf(err, GS_ERR_INVALID, "cloud",
                         "bad gap cloud parameters (mean %g >= %g, peak %g > mean and <= %g, "
                         "corr_len %g in [%g, %g], spread %g in [0, 0.9], fixed_scale %g in "
                         "[1e-6, 1e6], modes %d, bumps %d, scatter %g in [0, 1])",
                         cp.mean, GS_GEN_GAP_MIN, cp.peak, GS_GEN_LEN_MAX, cp.corr_len,
                         GS_GEN_LEN_MIN, GS_GEN_CORR_MAX, cp.spread, cp.fixed_scale, cp.n_modes,
                         cp.n_bumps, cp.scatter);
    int m = mdl->m;
    if (m < 1 || k == 0)
        return GS_OK;
    /* interfaces: pairs grouped by (part of node 0, part of node 1 or fixed) */
    int *grp = malloc((size_t)m * sizeof *grp), *order = malloc((size_t)m * sizeof *order);
    int *gstart = malloc(((size_t)m + 1) * sizeof *gstart);
    int *gkey = malloc((size_t)m * 2 * sizeof *gkey);
    double *val = malloc((size_t)m * sizeof *val), *common = malloc((size_t)m * sizeof *common);
    double *box = malloc((size_t)m * 4 * sizeof *box);
    if (!grp || !order || !gstart || !gkey || !val || !common || !box) {
        free(common);
        free(grp);
        free(order);
        free(gstart);
        free(gkey);
        free(val);
        free(box);
        return gs_errorf(err, GS_ERR_NOMEM, "gaps", "no memory");
    }
    gs_err rc = GS_OK;
    int ng = gs_model_interfaces(mdl, grp, gkey, err);
    if (ng < 0)
        rc = GS_ERR_RANGE;
    for (int g = 0; g < ng; g++) {
        box[4 * g] = box[4 * g + 1] = INFINITY;
        box[4 * g + 2] = box[4 * g + 3] = -INFINITY;
    }
    for (int q = 0; q < m && rc == GS_OK; q++) {
        int g = grp[q];
        const double *xyz = mdl->nodes[mdl->pairs[q].node[0]].xyz;
        box[4 * g] = fmin(box[4 * g], xyz[0]);
        box[4 * g + 1] = fmin(box[4 * g + 1], xyz[1]);
        box[4 * g + 2] = fmax(box[4 * g + 2], xyz[0]);
        box[4 * g + 3] = fmax(box[4 * g + 3], xyz[1]);
    }
    if (rc == GS_OK) {
        /* counting sort of pairs by group */
        memset(gstart, 0, ((size_t)ng + 1) * sizeof *gstart);
        for (int q = 0; q < m; q++)
            gstart[grp[q] + 1]++;
        for (int g = 0; g < ng; g++)
            gstart[g + 1] += gstart[g];
        int *fill = malloc(((size_t)ng + 1) * sizeof *fill);
        if (!fill) {
            rc = gs_errorf(err, GS_ERR_NOMEM, "gaps", "no memory");
        } else {
            memcpy(fill, gstart, ((size_t)ng + 1) * sizeof *fill);
            for (int q = 0; q < m; q++)
                order[fill[grp[q]]++] = q;
            free(fill);
            for (int r = 0; r < k; r++) {
                double *g = G ? G + (size_t)r * m : NULL;
                for (int gi = 0; gi < ng; gi++) {
                    uint64_t rs = (uint64_t)seed ^ ((uint64_t)(r0 + r + 1) * 0xD1B54A32D192ED03ULL) ^
                                  ((uint64_t)(gi + 1) * 0x8CB92BA72F3D8DD7ULL);
                    splitmix64(&rs);
                    double sc = gkey[2 * gi + 1] < 0 ? cp.fixed_scale : 1.0;
                    double a = 1.0 + cp.spread * (2.0 * unif(&rs) - 1.0);
                    double b = 1.0 + cp.spread * (2.0 * unif(&rs) - 1.0);
                    double mean = sc * cp.mean * a, peak = sc * cp.peak * b;
                    if (peak < 1.05 * mean)
                        peak = 1.05 * mean;
                    /* the common field: the same for every row (r = -1) */
                    uint64_t rs_common = (uint64_t)seed ^ ((uint64_t)(gi + 1) * 0x8CB92BA72F3D8DD7ULL);
                    splitmix64(&rs_common);
                    const int *idx = order + gstart[gi], cnt = gstart[gi + 1] - gstart[gi];
                    int flat = cloud_logu(mdl, idx, cnt, box + 4 * gi, &cp, &rs, rs_common, val,
                                          common);
                    for (int c = 0; flat && G && c < cnt; c++)
                        g[idx[c]] = mean;
                    if (!flat && G)
                        cloud_map(val, idx, cnt, mean, peak, g);
                    else if (!flat)
                        cloud_narrow(val, cnt, a, b, range);
                }
            }
        }
    }
    free(grp);
    free(order);
    free(gstart);
    free(gkey);
    free(val);
    free(common);
    free(box);
    return rc;
}

gs_err gs_gen_gap_cloud(const gs_model *mdl, int k, unsigned long long seed,
                        const gs_gen_cloud_params *cp, double *G, gs_error *err)
{
    return cloud_run(mdl, 0, k, seed, cp, G, NULL, err);
}

gs_err gs_gen_gap_cloud_rows(const gs_model *mdl, long long r0, int k, unsigned long long seed,
                             const gs_gen_cloud_params *cp, double *G, gs_error *err)
{
    return cloud_run(mdl, r0, k, seed, cp, G, NULL, err);
}

gs_err gs_gen_cloud_ratio_range(const gs_model *mdl, int k, unsigned long long seed,
                                const gs_gen_cloud_params *cp, double *r_min, double *r_max,
                                gs_error *err)
{
    double range[2] = {1.0, INFINITY};
    gs_err rc = cloud_run(mdl, 0, k, seed, cp, NULL, range, err);
    *r_min = range[0];
    *r_max = range[1];
    return rc;
}
