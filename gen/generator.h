/*
 * generator.h -- synthetic but physically built assembly models for gapsim.
 *
 * Owns: the three test models of the paper rebuilt from real finite-element
 * plates (fe_plate.h) and their gap clouds (fastener patterns: pattern.h).
 *   GS_GEN_LAP       simple lap joint like the paper's UJM1: upper wing panel on a
 *                    cruciform flange, 2 parts, default n = 5206, m = 2603
 *   GS_GEN_LAP_FINE  the same joint on a finer mesh like UJM2: n = 11256, m = 5628
 *   GS_GEN_SANDWICH  sandwich joint like the paper's LJM: wing panel (middle
 *                    layer) between a triform flange (top) and two buttstraps
 *                    (bottom); beside the wing panel the triform and the
 *                    buttstraps lie against the rigid CWB skin (fixed pairs).
 *                    4 parts, default n = 6171, m = 4840, 1331 nodes in two pairs
 * Each part is a thin aluminium plate (Mindlin quad, SRI by default or MITC4:
 * gs_gen_params.element; E = 70000 N/mm^2, nu = 0.33) held by an assembly
 * jig (clamped edges / support points) and condensed statically onto the
 * normal displacements w of its junction nodes; the condensed matrix is the
 * part's dense SPD block K_b.
 *
 * Geometry (mm): x runs along the joint, y across it, z up (normal).
 * Pair orientation (model.h convention, A'x closes the gap, w = g - A'x >= 0):
 *   two parts:  node[0] = node of the UPPER part, coef[0] = -1
 *               node[1] = node of the LOWER part, coef[1] = +1
 *               A'x = w_lower - w_upper: the gap closes when the parts move
 *               toward each other (upper down, lower up).
 *   fixed part: node[0] = the part's node, node[1] = GS_FIXED,
 *               coef[0] = -1 if the node lies above the fixed part (closes
 *               moving down), +1 if below it (closes moving up).
 * A fastener of load F on pair k adds F * a_k to the load: it pushes the upper
 * node down and the lower node up by F each (presses the pair shut).
 *
 * Reference: Stefanova et al., Optim. Eng. 21 (2020), Sect. 5 and Table 12
 * (UJM1 5206, UJM2 11308, LJM 6190 unknowns, cond(K) 1e5..1e8); the models here
 * reproduce sizes and structure, not the Airbus geometry. Details, measured
 * sizes and condition numbers: docs/generator.md.
 */
#ifndef GS_GENERATOR_H
#define GS_GENERATOR_H

#include "fe_plate.h"
#include "gs_error.h"
#include "model.h"
#include "interfaces.h"

typedef enum { GS_GEN_LAP = 0, GS_GEN_SANDWICH = 1, GS_GEN_LAP_FINE = 2 } gs_gen_kind;

#define GS_GEN_MAX_PARTS 4

/* Parameters of a generated assembly. Fill with gs_gen_default_params or
 * gs_gen_small_params, then adjust. Part indices per kind:
 *   LAP / LAP_FINE: 0 = wing panel (upper), 1 = cruciform flange (lower)
 *   SANDWICH:       0 = wing panel (middle), 1 = triform flange (top),
 *                   2, 3 = buttstraps (bottom; stations [0, (nx+1)/2) and the rest)
 * The junction is a mesh of nx x (ny_j [+ ny_c]) nodes with spacing
 * hx = length / (nx - 1) along x and hy across; every junction node is a
 * computational node (one retained DOF: its normal displacement w). */
typedef struct {
    gs_gen_kind kind;
    int nx;            /* junction nodes along the joint (x), >= 3 */
    int ny_j;          /* LAP: nodes across the overlap strip;
                          SANDWICH: nodes across the wing panel's overlap, >= 2 */
    int ny_c;          /* SANDWICH: nodes across the CWB region (triform and
                          buttstraps against the rigid CWB skin), >= 1; LAP: 0 */
    double length;     /* mm, junction length along x */
    double hy;         /* mm, element size across the joint (y) */
    double t[GS_GEN_MAX_PARTS];         /* mm, thickness of each part */
    double far_width[GS_GEN_MAX_PARTS]; /* mm, extent of each part beyond the
                          junction (rounded to whole elements of size hy):
                          LAP: 0 panel toward the wing, 1 flange toward its web;
                          SANDWICH: 0 wing panel toward the wing, 1 triform
                          beyond the CWB region (its web line), 2/3 buttstrap
                          margin on each long side */
    gs_fe_integration element; /* plate element: GS_FE_MITC4 (the default
                          of gs_gen_default_params since 2026-11-28) or
                          GS_FE_SRI (before; its model names end in " sri").
                          SRI's checkerboard hourglass makes the parts held
                          by support points only (SANDWICH wing panel and
                          buttstraps, LAP with clamp_far = 0) far too soft;
                          MITC4 has no spurious mode (fe_plate.h,
                          docs/generator.md) */
    double E;          /* N/mm^2 (70000) */
    double nu;         /* Poisson ratio (0.33) */
    /* jig (the LAP flange and the SANDWICH triform are always clamped along
       their web line; the SANDWICH buttstraps always rest on support points) */
    int clamp_far;     /* 1: the wing panel's far edge is clamped (LAP default);
                          0: the wing panel rests on support points only
                          (SANDWICH default; needs n_support >= 2) */
    int n_support;     /* support points (w = 0) per row, 0 or >= 2; rows:
                          wing panel: 2 rows in its far region when not clamped,
                          1 extra row (optional, LAP) when clamped (the clamped
                          edge restrains the plate: the points are placed
                          evenly, not nudged to pin the rigid and checkerboard
                          modes as on a plate resting on points only);
                          buttstraps: 1 row on each long-side margin (>= 2) */
    /* fastener candidates */
    int fast_every;    /* a candidate every fast_every junction stations (x), >= 1 */
    int fast_lines;    /* candidate lines along x per region, 1 or 2 (LAP: the
                          overlap; SANDWICH: wing overlap and CWB region) */
    double fast_load;  /* N, load of every candidate (default 500 N) */
    int compute_cond;  /* 1: estimate cond_1 of every block (dpotrf+dpocon) */
    int uncondensed;   /* 1: each part keeps its whole FE plate stiffness, sparse
                          (free DOFs w, theta_x, theta_y of every node; labels =
                          FE node + 1, components 3, 4, 5: 4 and 5 the slopes
                          dw/dx, dw/dy, not an FE tool's rotations), instead of the block
                          condensed onto its junction nodes: the same Q, the
                          input an engineer exports from an FE tool */
} gs_gen_params;

/* The ranges gs_gen_assembly accepts (GS_ERR_INVALID outside them, naming
 * the field; gapsim-gen refuses the options that lead outside them, exit 2,
 * docs/generator.md "Ranges"). Outside them the plate stiffness over- or
 * underflows or the condensation loses its digits (LAPACK's not-SPD and
 * dpbtrf failures, NaN from dpotrf), or a count overflows:
 *   length, hy, the element size along x hx = length / (nx - 1) and every
 *   thickness t[b] within [GS_GEN_LEN_MIN, GS_GEN_LEN_MAX] mm, every
 *   far_width[b] within [0, GS_GEN_LEN_MAX] mm and at most GS_GEN_ROWS_MAX
 *   element rows of hy (the jig's needs: gs_gen_assembly);
 *   the element aspect ratio hx / hy within [1/GS_GEN_ASPECT_MAX,
 *   GS_GEN_ASPECT_MAX];
 *   t[b] >= GS_GEN_THIN_MIN * max(hx, hy) (a thinner plate's shear
 *   stiffness exceeds its bending stiffness by more than 1e6: the
 *   condensation fails below about 1e-6, measured);
 *   nx <= GS_GEN_NX_MAX, ny_j and ny_c <= GS_GEN_NY_MAX, n_support 0 or
 *   2..GS_GEN_SUPPORTS_MAX, fast_load within [0, GS_GEN_LOAD_MAX] N,
 *   E within (0, GS_GEN_E_MAX] N/mm^2.
 * Gap clouds (gs_gen_gap_cloud): mean and peak within [GS_GEN_GAP_MIN,
 * GS_GEN_LEN_MAX] mm, corr_len within [GS_GEN_LEN_MIN, GS_GEN_CORR_MAX] mm
 * (a longer correlation length makes the field flat to double precision
 * on an interface: no shape to map onto [0, peak]). */
#define GS_GEN_LEN_MIN 1e-3
#define GS_GEN_LEN_MAX 1e5
#define GS_GEN_ASPECT_MAX 20.0
#define GS_GEN_THIN_MIN 1e-3
#define GS_GEN_NX_MAX 20000
#define GS_GEN_NY_MAX 2000
#define GS_GEN_ROWS_MAX 20000
#define GS_GEN_SUPPORTS_MAX 32
#define GS_GEN_LOAD_MAX 1e6
#define GS_GEN_E_MAX 1e9
#define GS_GEN_GAP_MIN 1e-6
#define GS_GEN_CORR_MAX 1e6

/* What gs_gen_assembly built and how long it took. */
typedef struct {
    int n;                 /* total DOFs = sum of block sizes */
    int m;                 /* contact pairs */
    int n_parts;
    int n_fast;            /* fastener candidates */
    int n_fixed_pairs;     /* pairs against the fixed part (node[1] = GS_FIXED) */
    int nodes_two_pairs;   /* computational nodes that belong to two pairs */
    int ndof[GS_GEN_MAX_PARTS];    /* block size of each part (retained DOFs) */
    int fe_ndof[GS_GEN_MAX_PARTS]; /* free DOFs of each part's FE model */
    int fe_nodes[GS_GEN_MAX_PARTS];/* FE nodes of each part */
    double norm1[GS_GEN_MAX_PARTS];/* ||K_b||_1 */
    double cond[GS_GEN_MAX_PARTS]; /* cond_1(K_b) estimate (0 if not computed: no
                              compute_cond, or a sparse part with uncondensed) */
    double cond_K;         /* cond_1(K) estimate = max_b ||K_b||_1 * max_b ||K_b^-1||_1
                              over the dense parts (0 if none estimated) */
    double t_condense[GS_GEN_MAX_PARTS]; /* s, FE assembly + condensation per part */
    double t_fe;           /* s, all parts' FE assembly + condensation */
    double t_model;        /* s, nodes, pairs, fasteners, validation */
    double t_cond;         /* s, condition estimates */
    double t_total;        /* s */
} gs_gen_info;

/* Paper-size defaults: LAP n = 5206, LAP_FINE n = 11256, SANDWICH n = 6171. */
void gs_gen_default_params(gs_gen_kind kind, gs_gen_params *p);
/* Small versions for unit tests (milliseconds): LAP n = 2*13*4 = 104,
 * LAP_FINE n = 2*17*5 = 170, SANDWICH n = 13*(3*3+2*3) = 195 (39 in two pairs). */
void gs_gen_small_params(gs_gen_kind kind, gs_gen_params *p);
/* Refine the mesh by factor s (> 0): nx - 1, ny_j - 1, ny_c and the element
 * size hy scale so that the physical dimensions stay (approximately) fixed;
 * n grows ~ s^2. */
void gs_gen_params_scale(gs_gen_params *p, double s);

/* What gs_gen_assembly(p) will build, without building it: the sizes of
 * the model and the memory the build needs at its peak (bytes: the dense
 * blocks, the largest part's banded plate and condensation work space, the
 * condition estimate's copy of a block; an estimate, within a factor of
 * about 2). */
typedef struct {
    int n, m, n_parts, n_fast;
    int ndof[GS_GEN_MAX_PARTS];          /* block size of each part: its junction
                                            nodes, or (uncondensed) its free FE DOFs
                                            at most (3 per plate node) */
    long long fe_nodes[GS_GEN_MAX_PARTS];/* plate nodes of each part */
    int far_rows[GS_GEN_MAX_PARTS];      /* element rows beyond the junction */
    double block_bytes;                  /* the model's stiffness blocks */
    double peak_bytes;                   /* the build's peak, blocks included */
} gs_gen_plan_info;

/* Check p against the ranges above and the jig's needs (as gs_gen_assembly
 * does, the same errors) and fill *pi. GS_ERR_LIMIT when a part's plate
 * exceeds the FE mesh limit (3 x nodes <= 2e8). O(1). */
gs_err gs_gen_plan(const gs_gen_params *p, gs_gen_plan_info *pi, gs_error *err);

/* Element rows of part b beyond the junction: far_width[b] / hy rounded,
 * -1 when that is beyond GS_GEN_ROWS_MAX (or not a number). The rows the
 * jig needs: gs_gen_far_rows_needed. */
int gs_gen_far_rows(const gs_gen_params *p, int b);
/* The fewest element rows beyond the junction part b needs for its jig (1:
 * a clamped edge or a web line apart from the junction; 2: support points
 * on rows of their own), 0 for a part without a far region. */
int gs_gen_far_rows_needed(const gs_gen_params *p, int b);

/* Build the assembly: FE plates, jig, static condensation, nodes, pairs,
 * fasteners; validates the model (gs_model_validate) before returning it.
 * info may be NULL. Cost: dominated by the condensation, O(N_e r^2 / 3)
 * per part (r retained, N_e eliminated junction rotations), see
 * gs_fe_plate_condense. */
gs_err gs_gen_assembly(const gs_gen_params *p, gs_model **out, gs_gen_info *info,
                       gs_error *err);

/* Gap cloud model: per interface (a group of pairs with the same two parts or
 * the same part against the fixed part) an independent smooth random field
 * over the pair coordinates (x, y): n_modes plane waves with wavelengths >=
 * corr_len plus n_bumps Gaussian bumps of radius corr_len / 2, shifted to a
 * zero minimum and mapped by a power law u^gamma so that the vector's mean
 * and maximum hit mean * (1 + spread * u1) and peak * (1 + spread * u2),
 * u ~ U(-1, 1) (peak at least 1.05 x mean). The mean is met exactly when
 * the ratio is within the power law's reach: an interface of c pairs has a
 * mean of at least about peak / c (gamma is bounded to [e^-7, e^7]); out of
 * reach gamma stops at its bound and the mean is the nearest reachable -
 * gs_gen_cloud_ratio_range tells the peak/mean ratios a cloud meets.
 * Interfaces against the fixed part use fixed_scale * (mean, peak). Every gap is >= 0 and some pair of every interface touches (g = 0).
 * Ranges (GS_ERR_INVALID beyond): mean and peak within [GS_GEN_GAP_MIN,
 * GS_GEN_LEN_MAX] mm, corr_len within [GS_GEN_LEN_MIN, GS_GEN_CORR_MAX] mm
 * (longer: the field is flat to double precision over an interface and
 * every row would be the constant mean). An interface of one pair, or whose
 * pairs lie at one point, has no shape either: it gets the constant mean.
 * scatter < 1 makes the gaps of a cloud similar, like measured fields of one
 * production line: each raw field is scatter * (its own) + (1 - scatter) *
 * (one field common to the cloud) before the shift and the mapping (1: the
 * gaps are independent; 0: every gap has the same shape). */
typedef struct {
    double mean;        /* mm, target mean gap (default 0.5) */
    double peak;        /* mm, target maximum gap (default 2.5), > mean */
    double corr_len;    /* mm, correlation length (default 200) */
    double spread;      /* relative random variation of mean/peak per vector (0.2), in [0, 0.9] */
    double fixed_scale; /* scale of gaps against the fixed part (0.25), in [1e-6, 1e6] */
    int n_modes;        /* plane waves per field (8) */
    int n_bumps;        /* Gaussian bumps per field (3) */
    double scatter;     /* share of each gap's own field, in [0, 1] (1: independent gaps) */
} gs_gen_cloud_params;

void gs_gen_cloud_default(gs_gen_cloud_params *cp);

/* Fill G (k x m, row-major: row r is one gap vector over all m pairs) with k
 * gap vectors. cp NULL = defaults. Deterministic: row r depends only on
 * (seed, r, model), not on k (own splitmix64 PRNG, no global state).
 * Cost O(k m (n_modes + n_bumps + log-bisection)). */
gs_err gs_gen_gap_cloud(const gs_model *mdl, int k, unsigned long long seed,
                        const gs_gen_cloud_params *cp, double *G, gs_error *err);
/* Rows r0 .. r0 + k - 1 of the same cloud into G (k x m): for a cloud
 * written in chunks (gapsim-gen streams its K x m file), equal bit for bit
 * to those rows of gs_gen_gap_cloud(mdl, r0 + k, ...). r0 >= 0. */
gs_err gs_gen_gap_cloud_rows(const gs_model *mdl, long long r0, int k, unsigned long long seed,
                             const gs_gen_cloud_params *cp, double *G, gs_error *err);

/* The nominal ratios cp->peak / cp->mean for which every row of
 * gs_gen_gap_cloud(mdl, k, seed, cp) meets its mean exactly: [*r_min,
 * *r_max] (*r_max < *r_min: none; *r_min >= 1). They depend on the fields
 * (model, k, seed, corr_len, spread, scatter, modes, bumps), not on
 * cp->mean and cp->peak. Errors as gs_gen_gap_cloud's. Cost: the cloud's
 * fields without the mapping, O(k m (n_modes + n_bumps)). */
gs_err gs_gen_cloud_ratio_range(const gs_model *mdl, int k, unsigned long long seed,
                                const gs_gen_cloud_params *cp, double *r_min, double *r_max,
                                gs_error *err);

/* Fastener patterns (gs_gen_pattern, gs_gen_pattern_count) and the interface
 * grouping are in pattern.h. */

/* Parts of a kind: 2 (LAP, LAP_FINE) or 4 (SANDWICH). */
int gs_gen_kind_parts(gs_gen_kind kind);
/* "lap", "sandwich", "lap-fine". */
const char *gs_gen_kind_name(gs_gen_kind kind);
/* Parse a kind name; returns 0 on success, -1 if unknown. */
int gs_gen_kind_parse(const char *s, gs_gen_kind *kind);

#endif
