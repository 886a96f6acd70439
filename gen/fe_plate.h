/*
 * fe_plate.h -- thin-plate finite elements and static condensation.
 *
 * Owns: the 4-node bilinear Mindlin-Reissner plate elements (SRI, MITC4;
 * full integration for tests), structured rectangular plate meshes with jig
 * boundary conditions (clamped edges, support points), global assembly in
 * LAPACK lower band storage, and the static condensation (Guyan reduction) of a plate onto the normal
 * displacements w of chosen "junction" nodes -- the dense SPD stiffness block
 * one part contributes to a gapsim assembly model.
 *
 * Element (Hughes, The Finite Element Method, 1987, Sect. 5.5-5.6):
 *   DOFs per node (w, theta_x, theta_y); theta_x, theta_y are the rotations of
 *   the normal written as slopes: in the thin (Kirchhoff) limit
 *   theta_x = dw/dx, theta_y = dw/dy (in-plane displacement u = -z theta_x,
 *   v = -z theta_y). A rigid rotation is w = a x + b y, theta = (a, b).
 *   curvatures  kappa = (d theta_x/dx, d theta_y/dy, d theta_x/dy + d theta_y/dx)
 *   shear       gamma = (dw/dx - theta_x, dw/dy - theta_y)
 *   energy      1/2 int kappa' D_b kappa + 1/2 int gamma' D_s gamma
 *   D_b = E t^3 / (12 (1 - nu^2)) [1 nu 0; nu 1 0; 0 0 (1-nu)/2],
 *   D_s = k G t I, k = 5/6, G = E / (2 (1 + nu)).
 *   Bending is always 2x2 Gauss; the shear term is what the three elements
 *   (gs_fe_integration) differ in:
 *   GS_FE_SRI (the default): 1x1 Gauss for shear (no shear locking). The SRI
 *   element has rank 7: besides the 3 rigid-body modes it has 2 spurious
 *   zero-energy modes, the w hourglass (w = +1, -1, +1, -1 at the corners,
 *   theta = 0) and the theta twist (theta = (-y, x), w = 0). In an assembled
 *   structured mesh the twist is not communicable, but the hourglass is: a
 *   free SRI plate has 4 zero-energy modes, the 3 rigid ones and the
 *   checkerboard w = +-1 by node parity (i + j even / odd), theta = 0
 *   (equivalently: w constant on each of the two node colour classes). A jig
 *   must restrain all four: a clamped edge does; support points alone need
 *   >= 4 points that pin w = a + b x + c y + d (-1)^(i+j), i.e. non-collinear
 *   points of BOTH parities (four corner supports of a plate with even nx, ny
 *   leave the checkerboard free). Pinning it at a few points is not enough
 *   physically: away from the supports the checkerboard stays a
 *   near-mechanism, so a plate held by support points only (no clamped edge)
 *   is far too soft and its deflection alternates from node to node
 *   (docs/generator.md, "The SRI hourglass").
 *   GS_FE_MITC4 (Bathe & Dvorkin 1985, assumed covariant transverse shear):
 *   the covariant shear strains e_xi = dw/dxi - theta . dX/dxi and
 *   e_eta = dw/deta - theta . dX/deta are sampled at the edge midpoints,
 *   e_xi at C (0, -1) and A (0, +1), e_eta at B (-1, 0) and D (+1, 0), and
 *   interpolated linearly across: e_xi = (1 - eta)/2 e_C + (1 + eta)/2 e_A,
 *   e_eta = (1 - xi)/2 e_B + (1 + xi)/2 e_D; gamma = J^-1 (e_xi, e_eta) at
 *   each of the 2x2 Gauss points (J = [dx/dxi dy/dxi; dx/deta dy/deta]).
 *   Valid for any convex quad; rank 9 (only the 3 rigid-body zero modes, no
 *   hourglass), no shear locking in the thin limit: the physically faithful
 *   element for point-supported plates.
 *   GS_FE_FULL (2x2 shear; locks for thin plates) has exactly the 3 rigid-body
 *   zero modes; kept for tests.
 *
 * Mesh: nx x ny rectangular elements over [x0, x0+lx] x [y0, y0+ly]; nodes
 * numbered across the short direction first so the half bandwidth is
 * kd = 3 (min(nx, ny) + 2) + 2. DOF of (node, c) = 3 node + c.
 *
 * Condensation (gs_fe_plate_condense): K_red = K_rr - K_re K_ee^-1 K_er,
 * r = w of the junction nodes, e = every other free DOF, in three passes:
 *   1. the far field (DOFs of non-junction nodes, banded, N_f DOFs) onto the
 *      DOFs of the junction nodes on the junction's boundary (b of them);
 *   2. the rotations of interior junction nodes (banded, N_i DOFs) onto
 *      r + b_theta (w of all junction nodes + boundary rotations);
 *   3. the boundary rotations (dense b_theta x b_theta) onto r.
 * Passes 1-2 use a streaming blocked Schur complement: K_ee = L L' by dpbtrf;
 * Y = L^-1 K_er is formed block row by block row with dgemm (band coupling
 * to the previous kd rows) + dtrsm (diagonal block), keeping only a window
 * of kd + nb rows of Y, and each block's contribution -Y_blk' Y_blk goes into
 * the result by dsyrk restricted to the retained columns already reached by
 * the fill (columns are sorted by their first coupled row, so they form a
 * growing prefix). Cost ~ N_f b^2 / 3 + N_i (r + b_theta)^2 / 3 +
 * r^2 b_theta flops (BLAS-3), memory (r + b_theta)^2 + (kd + nb) r doubles.
 */
#ifndef GS_FE_PLATE_H
#define GS_FE_PLATE_H

#include "gs_error.h"
#include "spmat.h"

typedef enum { GS_FE_SRI = 0, GS_FE_FULL = 1, GS_FE_MITC4 = 2 } gs_fe_integration;
typedef enum { GS_FE_EDGE_X0 = 0, GS_FE_EDGE_X1, GS_FE_EDGE_Y0, GS_FE_EDGE_Y1 } gs_fe_edge;

#define GS_FE_KAPPA (5.0 / 6.0) /* shear correction factor */

/* Element stiffness (12 x 12, column-major, symmetric) of the bilinear
 * Mindlin quad with corner coordinates xy[4][2] in counterclockwise order.
 * GS_ERR_INVALID for non-positive E, t, nu outside (-1, 0.5), an unknown integ
 * or a degenerate / clockwise element (det J <= 0 at a Gauss point). O(1). */
gs_err gs_fe_plate_element(const double xy[4][2], double E, double nu, double t,
                           gs_fe_integration integ, double Ke[144], gs_error *err);
/* "sri", "full", "mitc4" ("unknown" otherwise). */
const char *gs_fe_integration_name(gs_fe_integration integ);
/* The generator's element choices: "sri" or "mitc4" into *integ; 0, or -1 for
 * anything else (GS_FE_FULL locks and is for tests only). */
int gs_fe_element_parse(const char *s, gs_fe_integration *integ);
/* Consistent nodal loads of a uniform pressure q (N/mm^2, +z) on the element:
 * fe[3i] = int N_i q dA, rotation entries 0. */
void gs_fe_plate_element_load(const double xy[4][2], double q, double fe[12]);

/* A structured rectangular plate with its jig. */
typedef struct {
    int nx, ny;          /* elements along x and y */
    int nnx, nny;        /* nodes along x and y */
    double x0, y0, hx, hy;
    double E, nu, t;
    gs_fe_integration integ;
    int n_nodes, ndof;   /* ndof = 3 n_nodes */
    int across_y;        /* 1: node (i,j) = i*nny + j (y numbered first) */
    int kd;              /* half bandwidth of the global matrix */
    unsigned char *fixed;/* ndof flags: 1 = DOF fixed to zero by the jig */
} gs_fe_plate;

/* Set up the mesh (no DOF fixed). integ defaults to SRI; change pl->integ
 * (e.g. to GS_FE_MITC4) before assembling if needed. */
gs_err gs_fe_plate_init(gs_fe_plate *pl, int nx, int ny, double x0, double y0, double lx,
                        double ly, double E, double nu, double t, gs_error *err);
void gs_fe_plate_free(gs_fe_plate *pl);
/* Node index of grid point (i, j), 0 <= i <= nx, 0 <= j <= ny. */
int gs_fe_plate_node(const gs_fe_plate *pl, int i, int j);
/* Coordinates of a node. */
void gs_fe_plate_node_xy(const gs_fe_plate *pl, int node, double *x, double *y);
/* Jig: clamp an edge (all three DOFs of its nodes fixed). */
void gs_fe_plate_clamp_edge(gs_fe_plate *pl, gs_fe_edge edge);
/* Jig: fix one DOF (c = 0 w, 1 theta_x, 2 theta_y) of a node; a support point
 * is gs_fe_plate_fix(pl, node, 0). Out-of-range arguments are ignored. */
void gs_fe_plate_fix(gs_fe_plate *pl, int node, int c);
/* Number of free DOFs. */
int gs_fe_plate_nfree(const gs_fe_plate *pl);

/* Assemble the global stiffness into LAPACK lower band storage
 * ab[(i - j) + j * ldab] = K(i, j), j <= i <= j + kd, ldab >= kd + 1 (ab is
 * zeroed first). apply_bc: fixed DOFs get an identity row/column (and rhs 0),
 * so the band matrix is SPD for a sufficient jig and dpbsv solves the
 * constrained problem. rhs (ndof, may be NULL) receives the consistent load of
 * a uniform pressure q. O(nx ny 144). */
gs_err gs_fe_plate_assemble(const gs_fe_plate *pl, int apply_bc, double q, double *ab,
                            int ldab, double *rhs, gs_error *err);

/* The stiffness of the free DOFs as a sparse matrix, uncondensed (what an FE
 * tool would export for the whole mesh): lower triangle (stype -1), rows in
 * DOF order with the fixed DOFs removed, row labels = FE node number + 1 and
 * components 3 (w, translation along z: Abaqus's and Nastran's DOF 3), 4
 * (theta_x = dw/dx) and 5 (theta_y = dw/dy): slopes, not Abaqus's or
 * Nastran's rotations about x and y (their DOF 4 is dw/dy, 5 is -dw/dx). row_of (ndof, may be NULL) receives each DOF's
 * row, -1 for a fixed DOF. The entries are the sums gs_fe_plate_assemble
 * forms, in the same order. O(nx ny 144 + nnz). */
gs_err gs_fe_plate_sparse(const gs_fe_plate *pl, gs_spmat *out, int *row_of, gs_error *err);

/* Timing and sizes of one condensation. */
typedef struct {
    int n_free;          /* free DOFs of the plate */
    int n_far;           /* pass 1: eliminated far-field DOFs */
    int n_bound;         /* pass 1: retained junction-boundary DOFs */
    int n_inner;         /* pass 2: eliminated interior junction rotations */
    int n_btheta;        /* pass 3: boundary rotations eliminated densely */
    int kd_far, kd_inner;/* half bandwidths of the two banded eliminations */
    double t_assemble, t_far, t_inner, t_bound; /* seconds */
} gs_fe_condense_stats;

/* Static condensation onto the w DOFs of ret_nodes (distinct, w free):
 * Kred (nret x nret, leading dim ldk >= nret, column-major, both triangles,
 * exactly symmetric) = K_rr - K_re K_ee^-1 K_er in the order of ret_nodes;
 * every other free DOF is eliminated, fixed DOFs are removed. Errors:
 * GS_ERR_INVALID / GS_ERR_RANGE / GS_ERR_DUPLICATE for bad input,
 * GS_ERR_NOT_SPD when the eliminated block is singular (insufficient jig),
 * GS_ERR_NOMEM. st may be NULL. Cost: see the header comment. */
gs_err gs_fe_plate_condense(const gs_fe_plate *pl, int nret, const int *ret_nodes,
                            double *Kred, int ldk, gs_fe_condense_stats *st, gs_error *err);

#endif
