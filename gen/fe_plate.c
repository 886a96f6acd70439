/*
 * fe_plate.c -- Mindlin plate elements (SRI, MITC4, full), structured plate
 * meshes, band assembly and static condensation onto junction normal
 * displacements (fe_plate.h).
 *
 * Method and cost: see fe_plate.h. The hot loops are the three BLAS-3 calls of
 * schur_stream (dgemm nb x kd x c, dtrsm nb x nb x c, dsyrk c x c x nb per
 * block of nb eliminated rows, c = retained columns reached by the fill) and
 * the dense pass 3 (dpotrf b^3/3, dtrsm b^2 r, dsyrk r^2 b). Everything else
 * is O(ndof kd).
 */
#include "fe_plate.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

/* ------------------------------------------------------------------------ */
/* element                                                                   */

static const double gs_fe_xi_[4] = {-1.0, 1.0, 1.0, -1.0};
static const double gs_fe_eta_[4] = {-1.0, -1.0, 1.0, 1.0};

/* Shape functions, their natural derivatives and the Jacobian
 * J = [dx/dxi dy/dxi; dx/deta dy/deta] (row-major j[4]) at (xi, eta);
 * returns det J. */
static double quad_nat(const double xy[4][2], double xi, double eta, double N[4], double dxi[4],
                       double deta[4], double j[4])
{
    for (int i = 0; i < 4; i++) {
        N[i] = 0.25 * (1.0 + xi * gs_fe_xi_[i]) * (1.0 + eta * gs_fe_eta_[i]);
        dxi[i] = 0.25 * gs_fe_xi_[i] * (1.0 + eta * gs_fe_eta_[i]);
        deta[i] = 0.25 * gs_fe_eta_[i] * (1.0 + xi * gs_fe_xi_[i]);
    }
    j[0] = j[1] = j[2] = j[3] = 0.0;
    for (int i = 0; i < 4; i++) {
        j[0] += dxi[i] * xy[i][0];
        j[1] += dxi[i] * xy[i][1];
        j[2] += deta[i] * xy[i][0];
        j[3] += deta[i] * xy[i][1];
    }
    return j[0] * j[3] - j[1] * j[2];
}

/* Shape functions and their x/y derivatives at (xi, eta); returns det J. */
static double quad_shape(const double xy[4][2], double xi, double eta, double N[4],
                         double Nx[4], double Ny[4])
{
    double dxi[4], deta[4], j[4];
    double det = quad_nat(xy, xi, eta, N, dxi, deta, j);
    if (!(det > 0.0))
        return det;
    for (int i = 0; i < 4; i++) {
        Nx[i] = (j[3] * dxi[i] - j[1] * deta[i]) / det;
        Ny[i] = (-j[2] * dxi[i] + j[0] * deta[i]) / det;
    }
    return det;
}

/* Ke += w * B' D B for an nr x 12 strain matrix B (row-major) and nr x nr D. */
static void add_btdb(double Ke[144], const double *B, const double *D, int nr, double w)
{
    double DB[3 * 12];
    for (int a = 0; a < nr; a++)
        for (int j = 0; j < 12; j++) {
            double s = 0.0;
            for (int b = 0; b < nr; b++)
                s += D[a * nr + b] * B[b * 12 + j];
            DB[a * 12 + j] = s;
        }
    for (int j = 0; j < 12; j++)
        for (int i = 0; i < 12; i++) {
            double s = 0.0;
            for (int a = 0; a < nr; a++)
                s += B[a * 12 + i] * DB[a * 12 + j];
            Ke[i + 12 * j] += w * s;
        }
}

/* Covariant transverse shear strain along natural direction d (0: xi,
 * 1: eta) at (xi, eta) as a row over the 12 element DOFs:
 * e_d = dw/dd - theta . dX/dd, X = (x, y) -- the Cartesian shear gamma
 * projected on the covariant base vector dX/dd. Zero for every rigid mode
 * on any quad (w = a x + b y, theta = (a, b) gives a.dX/dd - a.dX/dd). */
static void covariant_shear_row(const double xy[4][2], double xi, double eta, int d,
                                double row[12])
{
    double N[4], dxi[4], deta[4], j[4];
    quad_nat(xy, xi, eta, N, dxi, deta, j);
    const double *dn = d == 0 ? dxi : deta;
    const double gx = d == 0 ? j[0] : j[2], gy = d == 0 ? j[1] : j[3];
    for (int i = 0; i < 4; i++) {
        row[3 * i] = dn[i];
        row[3 * i + 1] = -N[i] * gx;
        row[3 * i + 2] = -N[i] * gy;
    }
}

/* MITC4 (Bathe & Dvorkin 1985) Cartesian shear strain matrix B (2 x 12,
 * row-major) at (xi, eta); returns det J. The covariant strains are tied at
 * the edge midpoints -- tie[0] = e_xi at C (0, -1), tie[1] = e_xi at
 * A (0, +1), tie[2] = e_eta at B (-1, 0), tie[3] = e_eta at D (+1, 0) -- and
 * interpolated e_xi = (1 - eta)/2 e_C + (1 + eta)/2 e_A, e_eta = (1 - xi)/2
 * e_B + (1 + xi)/2 e_D; gamma = J^-1 (e_xi, e_eta) since e = J gamma. Why
 * it has no hourglass: a tied strain involves only its edge's two nodes, so
 * the checkerboard (w = +-1 at alternate nodes, theta = 0) strains every
 * edge by (w2 - w1)/2 = +-1; SRI samples the centre, where the opposite
 * edges' differences cancel. Why it does not lock: on a straight edge the
 * tied strain of a Kirchhoff state (w quadratic, theta = grad w linear) is
 * exactly zero, so pure bending costs no shear energy. */
static double mitc4_shear_b(const double xy[4][2], const double tie[4][12], double xi,
                            double eta, double B[24])
{
    double N[4], dxi[4], deta[4], j[4];
    const double det = quad_nat(xy, xi, eta, N, dxi, deta, j);
    if (!(det > 0.0))
        return det;
    for (int k = 0; k < 12; k++) {
        const double exi = 0.5 * (1.0 - eta) * tie[0][k] + 0.5 * (1.0 + eta) * tie[1][k];
        const double eeta = 0.5 * (1.0 - xi) * tie[2][k] + 0.5 * (1.0 + xi) * tie[3][k];
        B[k] = (j[3] * exi - j[1] * eeta) / det;
        B[12 + k] = (-j[2] * exi + j[0] * eeta) / det;
    }
    return det;
}

/* Ke += the transverse shear stiffness of integration integ (Ds = k G t I). */
static gs_err add_shear(const double xy[4][2], gs_fe_integration integ, const double Ds[4],
                        double Ke[144], gs_error *err)
{
    const double g = 1.0 / sqrt(3.0);
    double N[4], Nx[4], Ny[4], B[2 * 12];
    if (integ == GS_FE_MITC4) { /* tied covariant strains, 2x2 Gauss */
        double tie[4][12];
        covariant_shear_row(xy, 0.0, -1.0, 0, tie[0]);
        covariant_shear_row(xy, 0.0, 1.0, 0, tie[1]);
        covariant_shear_row(xy, -1.0, 0.0, 1, tie[2]);
        covariant_shear_row(xy, 1.0, 0.0, 1, tie[3]);
        for (int p = 0; p < 4; p++) {
            double det = mitc4_shear_b(xy, tie, gs_fe_xi_[p] * g, gs_fe_eta_[p] * g, B);
            if (!(det > 0.0))
                return gs_errorf(err, GS_ERR_INVALID, "element",
                                 "degenerate or clockwise element (det J = %g)", det);
            add_btdb(Ke, B, Ds, 2, det);
        }
        return GS_OK;
    }
    /* 1x1 (SRI, weight 4) or 2x2 (full) Gauss of the pointwise strain */
    const int np = integ == GS_FE_FULL ? 4 : 1;
    for (int p = 0; p < np; p++) {
        double xi = np == 1 ? 0.0 : gs_fe_xi_[p] * g, eta = np == 1 ? 0.0 : gs_fe_eta_[p] * g;
        double det = quad_shape(xy, xi, eta, N, Nx, Ny);
        if (!(det > 0.0))
            return gs_errorf(err, GS_ERR_INVALID, "element",
                             "degenerate or clockwise element (det J = %g)", det);
        memset(B, 0, sizeof B);
        for (int i = 0; i < 4; i++) {
            B[0 * 12 + 3 * i] = Nx[i];
            B[0 * 12 + 3 * i + 1] = -N[i];
            B[1 * 12 + 3 * i] = Ny[i];
            B[1 * 12 + 3 * i + 2] = -N[i];
        }
        add_btdb(Ke, B, Ds, 2, det * (np == 1 ? 4.0 : 1.0));
    }
    return GS_OK;
}

gs_err gs_fe_plate_element(const double xy[4][2], double E, double nu, double t,
                           gs_fe_integration integ, double Ke[144], gs_error *err)
{
    if (!(E > 0.0) || !(t > 0.0) || !(nu > -1.0 && nu < 0.5) || !isfinite(E) || !isfinite(t))
        return gs_errorf(err, GS_ERR_INVALID, "material",
                         "invalid plate material: E = %g, nu = %g, t = %g", E, nu, t);
    if (integ != GS_FE_SRI && integ != GS_FE_FULL && integ != GS_FE_MITC4)
        return gs_errorf(err, GS_ERR_INVALID, "element", "unknown plate element %d", (int)integ);
    memset(Ke, 0, 144 * sizeof *Ke);
    double Dm = E * t * t * t / (12.0 * (1.0 - nu * nu));
    double Db[9] = {Dm, Dm * nu, 0.0, Dm * nu, Dm, 0.0, 0.0, 0.0, Dm * 0.5 * (1.0 - nu)};
    double G = E / (2.0 * (1.0 + nu));
    double Ds[4] = {GS_FE_KAPPA * G * t, 0.0, 0.0, GS_FE_KAPPA * G * t};
    const double g = 1.0 / sqrt(3.0);
    double N[4], Nx[4], Ny[4];
    /* bending: 2x2 Gauss */
    for (int p = 0; p < 4; p++) {
        double det = quad_shape(xy, gs_fe_xi_[p] * g, gs_fe_eta_[p] * g, N, Nx, Ny);
        if (!(det > 0.0))
            return gs_errorf(err, GS_ERR_INVALID, "element",
                             "degenerate or clockwise element (det J = %g)", det);
        double B[3 * 12] = {0};
        for (int i = 0; i < 4; i++) {
            B[0 * 12 + 3 * i + 1] = Nx[i];
            B[1 * 12 + 3 * i + 2] = Ny[i];
            B[2 * 12 + 3 * i + 1] = Ny[i];
            B[2 * 12 + 3 * i + 2] = Nx[i];
        }
        add_btdb(Ke, B, Db, 3, det);
    }
    gs_err rc = add_shear(xy, integ, Ds, Ke, err);
    if (rc != GS_OK)
        return rc;
    for (int j = 0; j < 12; j++) /* exact symmetry */
        for (int i = j + 1; i < 12; i++)
            Ke[j + 12 * i] = Ke[i + 12 * j];
    return GS_OK;
}

const char *gs_fe_integration_name(gs_fe_integration integ)
{
    switch (integ) {
    case GS_FE_SRI: return "sri";
    case GS_FE_FULL: return "full";
    case GS_FE_MITC4: return "mitc4";
    }
    return "unknown";
}

int gs_fe_element_parse(const char *s, gs_fe_integration *integ)
{
    if (s && !strcmp(s, "sri"))
        *integ = GS_FE_SRI;
    else if (s && !strcmp(s, "mitc4"))
        *integ = GS_FE_MITC4;
    else
        return -1;
    return 0;
}

void gs_fe_plate_element_load(const double xy[4][2], double q, double fe[12])
{
    memset(fe, 0, 12 * sizeof *fe);
    const double g = 1.0 / sqrt(3.0);
    double N[4], Nx[4], Ny[4];
    for (int p = 0; p < 4; p++) {
        double det = quad_shape(xy, gs_fe_xi_[p] * g, gs_fe_eta_[p] * g, N, Nx, Ny);
        for (int i = 0; i < 4; i++)
            fe[3 * i] += N[i] * q * det;
    }
}

/* ------------------------------------------------------------------------ */
/* structured plate                                                          */

gs_err gs_fe_plate_init(gs_fe_plate *pl, int nx, int ny, double x0, double y0, double lx,
                        double ly, double E, double nu, double t, gs_error *err)
{
    memset(pl, 0, sizeof *pl);
    if (nx < 1 || ny < 1 || nx > 100000 || ny > 100000)
        return gs_errorf(err, GS_ERR_INVALID, "plate", "bad element counts %d x %d", nx, ny);
    if (!(lx > 0.0) || !(ly > 0.0) || !isfinite(lx) || !isfinite(ly) || !isfinite(x0) ||
        !isfinite(y0))
        return gs_errorf(err, GS_ERR_INVALID, "plate", "bad plate dimensions %g x %g", lx, ly);
    if (!(E > 0.0) || !(t > 0.0) || !(nu > -1.0 && nu < 0.5))
        return gs_errorf(err, GS_ERR_INVALID, "plate",
                         "invalid plate material: E = %g, nu = %g, t = %g", E, nu, t);
    long long nn = (long long)(nx + 1) * (ny + 1);
    if (nn * 3 > 200000000LL)
        return gs_errorf(err, GS_ERR_LIMIT, "plate", "plate mesh too large (%lld nodes)", nn);
    pl->nx = nx;
    pl->ny = ny;
    pl->nnx = nx + 1;
    pl->nny = ny + 1;
    pl->x0 = x0;
    pl->y0 = y0;
    pl->hx = lx / nx;
    pl->hy = ly / ny;
    pl->E = E;
    pl->nu = nu;
    pl->t = t;
    pl->integ = GS_FE_SRI;
    pl->n_nodes = (int)nn;
    pl->ndof = 3 * (int)nn;
    pl->across_y = ny <= nx;
    pl->kd = 3 * ((pl->across_y ? ny : nx) + 2) + 2;
    pl->fixed = calloc((size_t)pl->ndof, 1);
    if (!pl->fixed)
        return gs_errorf(err, GS_ERR_NOMEM, "plate", "no memory for %d DOF flags", pl->ndof);
    return GS_OK;
}

void gs_fe_plate_free(gs_fe_plate *pl)
{
    if (!pl)
        return;
    free(pl->fixed);
    pl->fixed = NULL;
}

int gs_fe_plate_node(const gs_fe_plate *pl, int i, int j)
{
    return pl->across_y ? i * pl->nny + j : j * pl->nnx + i;
}

void gs_fe_plate_node_xy(const gs_fe_plate *pl, int node, double *x, double *y)
{
    int i = pl->across_y ? node / pl->nny : node % pl->nnx;
    int j = pl->across_y ? node % pl->nny : node / pl->nnx;
    *x = pl->x0 + i * pl->hx;
    *y = pl->y0 + j * pl->hy;
}

void gs_fe_plate_clamp_edge(gs_fe_plate *pl, gs_fe_edge edge)
{
    int horiz = edge == GS_FE_EDGE_Y0 || edge == GS_FE_EDGE_Y1; /* runs along x */
    int cnt = horiz ? pl->nnx : pl->nny;
    for (int k = 0; k < cnt; k++) {
        int i = horiz ? k : (edge == GS_FE_EDGE_X0 ? 0 : pl->nx);
        int j = horiz ? (edge == GS_FE_EDGE_Y0 ? 0 : pl->ny) : k;
        int nd = gs_fe_plate_node(pl, i, j);
        for (int c = 0; c < 3; c++)
            pl->fixed[3 * nd + c] = 1;
    }
}

void gs_fe_plate_fix(gs_fe_plate *pl, int node, int c)
{
    if (node >= 0 && node < pl->n_nodes && c >= 0 && c < 3)
        pl->fixed[3 * node + c] = 1;
}

int gs_fe_plate_nfree(const gs_fe_plate *pl)
{
    int k = 0;
    for (int g = 0; g < pl->ndof; g++)
        k += !pl->fixed[g];
    return k;
}

/* Corner nodes of element (i, j), counterclockwise. */
static void elem_nodes(const gs_fe_plate *pl, int i, int j, int nd[4])
{
    nd[0] = gs_fe_plate_node(pl, i, j);
    nd[1] = gs_fe_plate_node(pl, i + 1, j);
    nd[2] = gs_fe_plate_node(pl, i + 1, j + 1);
    nd[3] = gs_fe_plate_node(pl, i, j + 1);
}

gs_err gs_fe_plate_assemble(const gs_fe_plate *pl, int apply_bc, double q, double *ab,
                            int ldab, double *rhs, gs_error *err)
{
    if (ldab < pl->kd + 1)
        return gs_errorf(err, GS_ERR_INVALID, "ldab", "ldab %d < kd + 1 = %d", ldab, pl->kd + 1);
    memset(ab, 0, (size_t)ldab * (size_t)pl->ndof * sizeof *ab);
    if (rhs)
        memset(rhs, 0, (size_t)pl->ndof * sizeof *rhs);
    /* all elements are the same rectangle: one element matrix */
    double xy[4][2] = {{0, 0}, {pl->hx, 0}, {pl->hx, pl->hy}, {0, pl->hy}};
    double Ke[144], fe[12];
    gs_err rc = gs_fe_plate_element(xy, pl->E, pl->nu, pl->t, pl->integ, Ke, err);
    if (rc != GS_OK)
        return rc;
    gs_fe_plate_element_load(xy, q, fe);
    for (int i = 0; i < pl->nx; i++)
        for (int j = 0; j < pl->ny; j++) {
            int nd[4], dof[12];
            elem_nodes(pl, i, j, nd);
            for (int a = 0; a < 4; a++)
                for (int c = 0; c < 3; c++)
                    dof[3 * a + c] = 3 * nd[a] + c;
            for (int b = 0; b < 12; b++) {
                int gj = dof[b];
                for (int a = 0; a < 12; a++) {
                    int gi = dof[a];
                    if (gi >= gj)
                        ab[(size_t)(gi - gj) + (size_t)gj * (size_t)ldab] += Ke[a + 12 * b];
                }
                if (rhs)
                    rhs[gj] += fe[b];
            }
        }
    if (apply_bc) {
        for (int g = 0; g < pl->ndof; g++) {
            if (!pl->fixed[g])
                continue;
            for (int d = 0; d <= pl->kd; d++) {
                if (g + d < pl->ndof)
                    ab[(size_t)d + (size_t)g * (size_t)ldab] = 0.0; /* column g */
                if (g - d >= 0)
                    ab[(size_t)d + (size_t)(g - d) * (size_t)ldab] = 0.0; /* row g */
            }
            ab[(size_t)g * (size_t)ldab] = 1.0;
            if (rhs)
                rhs[g] = 0.0;
        }
    }
    return GS_OK;
}

gs_err gs_fe_plate_sparse(const gs_fe_plate *pl, gs_spmat *out, int *row_of, gs_error *err)
{
    memset(out, 0, sizeof *out);
    const int nfree = gs_fe_plate_nfree(pl);
    int *row = malloc((size_t)pl->ndof * sizeof *row);
    int64_t *label = malloc((size_t)(nfree ? nfree : 1) * sizeof *label);
    int *comp = malloc((size_t)(nfree ? nfree : 1) * sizeof *comp);
    gs_coo c;
    gs_coo_init(&c, SIZE_MAX);
    gs_err rc = GS_OK;
    if (!row || !label || !comp) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the sparse plate");
        goto fail;
    }
    for (int g = 0, r = 0; g < pl->ndof; g++) {
        row[g] = pl->fixed[g] ? -1 : r;
        if (!pl->fixed[g]) {
            label[r] = g / 3 + 1;
            comp[r++] = 3 + g % 3;
        }
    }
    double xy[4][2] = {{0, 0}, {pl->hx, 0}, {pl->hx, pl->hy}, {0, pl->hy}};
    double Ke[144];
    if ((rc = gs_fe_plate_element(xy, pl->E, pl->nu, pl->t, pl->integ, Ke, err)) != GS_OK ||
        (rc = gs_coo_reserve(&c, (size_t)pl->nx * (size_t)pl->ny * 78, err)) != GS_OK)
        goto fail;
    for (int i = 0; i < pl->nx; i++) /* the element order of gs_fe_plate_assemble */
        for (int j = 0; j < pl->ny; j++) {
            int nd[4], dof[12];
            elem_nodes(pl, i, j, nd);
            for (int a = 0; a < 4; a++)
                for (int k = 0; k < 3; k++)
                    dof[3 * a + k] = 3 * nd[a] + k;
            for (int b = 0; b < 12; b++)
                for (int a = 0; a < 12; a++) {
                    const int ri = row[dof[a]], rj = row[dof[b]];
                    if (ri >= rj && rj >= 0 &&
                        (rc = gs_coo_add(&c, ri, rj, Ke[a + 12 * b], err)) != GS_OK)
                        goto fail;
                }
        }
    rc = gs_coo_to_spmat(&c, nfree, GS_COO_SYMMETRIC, label, comp, out, err);
    label = NULL; /* taken (freed on failure) */
    comp = NULL;
    if (rc == GS_OK && row_of)
        memcpy(row_of, row, (size_t)pl->ndof * sizeof *row);
fail:
    gs_coo_free(&c);
    free(row);
    free(label);
    free(comp);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* condensation                                                              */

enum { CL_FIXED = 0, CL_RET = 1, CL_FAR = 2, CL_BTH = 3, CL_INNER = 4 };

/* K(gi, gj) from the full lower band (0 outside the band). */
static inline double band_get(const double *ab, int ldab, int kd, int gi, int gj)
{
    if (gi < gj) {
        int s = gi;
        gi = gj;
        gj = s;
    }
    if (gi - gj > kd)
        return 0.0;
    return ab[(size_t)(gi - gj) + (size_t)gj * (size_t)ldab];
}

/* An eliminated set E (global DOFs in increasing order) as its own band
 * matrix, plus the coupling K_E,P to a retained set P (column positions
 * pos[g] in P's sorted order, -1 = not in P) in CSR by E rows, and the sorted
 * order of P by first coupled row. */
typedef struct {
    int ne, kd, ldab;
    double *ab;              /* (kd+1) x ne lower band of K_EE */
    int *rp, *ci;            /* CSR of K_EP: rows = E, cols = P positions */
    double *cv;
    int *first_sorted;       /* np: first coupled E row of the P column at each position */
} gs_elim_set;

static void elim_free(gs_elim_set *s)
{
    free(s->ab);
    free(s->rp);
    free(s->ci);
    free(s->cv);
    free(s->first_sorted);
    memset(s, 0, sizeof *s);
}

/* Build the eliminated set's band and coupling. loc[g] = index of g in E or
 * -1; glist = E's global DOFs; pglist = P's global DOFs (any order, np);
 * on return pos_sorted[k] = position (in sorted P order) of pglist[k], and
 * the caller's P order is replaced by the sorted one via perm (perm[pos] = k).
 * ppos is a scratch map of size ndof filled with -1 on entry and exit. */
static gs_err elim_build(const double *ab, int ldab, int kd, int ndof, const int *loc,
                         const int *glist, int ne, const int *pglist, int np, int *ppos,
                         int *perm, gs_elim_set *s, gs_error *err)
{
    memset(s, 0, sizeof *s);
    s->ne = ne;
    /* band width of K_EE in E numbering */
    int kde = 0;
    for (int a = 0; a < ne; a++) {
        int g = glist[a];
        for (int d = 1; d <= kd && g + d < ndof; d++) {
            int b = loc[g + d];
            if (b >= 0 && ab[(size_t)d + (size_t)g * (size_t)ldab] != 0.0 && b - a > kde)
                kde = b - a;
        }
    }
    s->kd = kde;
    s->ldab = kde + 1;
    size_t nab = gs_mul_size((size_t)s->ldab, (size_t)(ne > 0 ? ne : 1));
    s->ab = nab ? calloc(nab, sizeof *s->ab) : NULL;
    s->rp = calloc((size_t)ne + 1, sizeof *s->rp);
    s->first_sorted = malloc(((size_t)np + 1) * sizeof *s->first_sorted);
    int *first = malloc(((size_t)np + 1) * sizeof *first);
    int *cnt = calloc((size_t)ne + 2, sizeof *cnt);
    if (!s->ab || !s->rp || !s->first_sorted || !first || !cnt) {
        free(first);
        free(cnt);
        elim_free(s);
        return gs_errorf(err, GS_ERR_NOMEM, "condense", "no memory for a %d-DOF band", ne);
    }
    for (int a = 0; a < ne; a++) {
        int g = glist[a];
        for (int d = 0; d <= kd && g + d < ndof; d++) {
            int b = loc[g + d];
            if (b >= 0)
                s->ab[(size_t)(b - a) + (size_t)a * (size_t)s->ldab] =
                    ab[(size_t)d + (size_t)g * (size_t)ldab];
        }
    }
    /* first coupled E row of each P column (in caller order k) */
    for (int k = 0; k < np; k++) {
        ppos[pglist[k]] = k;
        first[k] = ne;
    }
    int nnz = 0;
    for (int a = 0; a < ne; a++) {
        int g = glist[a];
        for (int d = -kd; d <= kd; d++) {
            int h = g + d;
            if (h < 0 || h >= ndof || ppos[h] < 0)
                continue;
            if (band_get(ab, ldab, kd, g, h) == 0.0)
                continue;
            int k = ppos[h];
            if (a < first[k])
                first[k] = a;
            nnz++;
        }
    }
    /* stable counting sort of P by first row */
    for (int k = 0; k < np; k++)
        cnt[first[k] + 1]++;
    for (int a = 0; a <= ne; a++)
        cnt[a + 1] += cnt[a];
    for (int k = 0; k < np; k++) {
        int pos = cnt[first[k]]++;
        perm[pos] = k;
        s->first_sorted[pos] = first[k];
    }
    for (int pos = 0; pos < np; pos++)
        ppos[pglist[perm[pos]]] = pos;
    free(first);
    free(cnt);
    s->ci = malloc(((size_t)nnz + 1) * sizeof *s->ci);
    s->cv = malloc(((size_t)nnz + 1) * sizeof *s->cv);
    if (!s->ci || !s->cv) {
        for (int k = 0; k < np; k++)
            ppos[pglist[k]] = -1;
        elim_free(s);
        return gs_errorf(err, GS_ERR_NOMEM, "condense", "no memory for the coupling");
    }
    nnz = 0;
    for (int a = 0; a < ne; a++) {
        int g = glist[a];
        s->rp[a] = nnz;
        for (int d = -kd; d <= kd; d++) {
            int h = g + d;
            if (h < 0 || h >= ndof || ppos[h] < 0)
                continue;
            double v = band_get(ab, ldab, kd, g, h);
            if (v == 0.0)
                continue;
            s->ci[nnz] = ppos[h];
            s->cv[nnz] = v;
            nnz++;
        }
    }
    s->rp[ne] = nnz;
    for (int k = 0; k < np; k++)
        ppos[pglist[k]] = -1;
    return GS_OK;
}

/* S (np x np, lower, lds) -= K_PE K_EE^-1 K_EP by the streaming blocked
 * Schur complement (fe_plate.h). Factors s->ab in place. */
static gs_err schur_stream(gs_elim_set *s, int np, double *S, int lds, const char *what,
                           gs_error *err)
{
    int ne = s->ne, kd = s->kd;
    if (ne == 0 || np == 0)
        return GS_OK;
    lapack_int info = LAPACKE_dpbtrf(LAPACK_COL_MAJOR, 'L', ne, kd, s->ab, s->ldab);
    if (info != 0) {
        gs_errorf(err, info > 0 ? GS_ERR_NOT_SPD : GS_ERR_INVALID, what,
                  "%s: banded Cholesky (dpbtrf) failed, info %d of %d (insufficient jig?)",
                  what, (int)info, ne);
        if (err)
            err->lapack_info = (int)info;
        return info > 0 ? GS_ERR_NOT_SPD : GS_ERR_INVALID;
    }
    int nb = kd < 96 ? 96 : (kd > 256 ? 256 : kd);
    if (nb > ne)
        nb = ne;
    int ldp = kd > 0 ? kd : 1;
    double *prev = calloc((size_t)ldp * (size_t)np, sizeof *prev); /* Y rows [i0-kd, i0) */
    double *cur = calloc((size_t)nb * (size_t)np, sizeof *cur);    /* Y rows [i0, i1) */
    double *Lp = malloc((size_t)nb * (size_t)ldp * sizeof *Lp);    /* L[i0:i1, i0-kd:i0) */
    double *Ld = malloc((size_t)nb * (size_t)nb * sizeof *Ld);     /* L[i0:i1, i0:i1) */
    if (!prev || !cur || !Lp || !Ld) {
        free(prev);
        free(cur);
        free(Lp);
        free(Ld);
        return gs_errorf(err, GS_ERR_NOMEM, what, "no memory for the Schur window (%d x %d)",
                         kd + nb, np);
    }
    const double *L = s->ab;
    int ldl = s->ldab;
    int c = 0; /* active prefix of retained columns */
    for (int i0 = 0; i0 < ne; i0 += nb) {
        int i1 = i0 + nb < ne ? i0 + nb : ne, bs = i1 - i0;
        while (c < np && s->first_sorted[c] < i1)
            c++;
        if (c == 0)
            continue; /* Y is still zero: nothing reached yet (prev stays 0) */
        /* right-hand side rows */
        for (int j = 0; j < c; j++)
            memset(cur + (size_t)j * nb, 0, (size_t)bs * sizeof *cur);
        for (int r = i0; r < i1; r++)
            for (int q = s->rp[r]; q < s->rp[r + 1]; q++)
                if (s->ci[q] < c)
                    cur[(size_t)(r - i0) + (size_t)s->ci[q] * nb] = s->cv[q];
        if (kd > 0 && i0 > 0) {
            /* cur -= L[i0:i1, i0-kd:i0) prev */
            memset(Lp, 0, (size_t)nb * (size_t)ldp * sizeof *Lp);
            for (int kk = 0; kk < kd; kk++) {
                int k = i0 - kd + kk;
                if (k < 0)
                    continue;
                for (int r = i0; r < i1 && r - k <= kd; r++)
                    Lp[(size_t)(r - i0) + (size_t)kk * nb] = L[(size_t)(r - k) + (size_t)k * ldl];
            }
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, bs, c, kd, -1.0, Lp, nb,
                        prev, ldp, 1.0, cur, nb);
        }
        /* cur = L[i0:i1, i0:i1)^-1 cur */
        for (int k = 0; k < bs; k++) {
            double *col = Ld + (size_t)k * nb;
            memset(col, 0, (size_t)bs * sizeof *col);
            for (int r = k; r < bs && r - k <= kd; r++)
                col[r] = L[(size_t)(r - k) + (size_t)(i0 + k) * ldl];
        }
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, bs, c,
                    1.0, Ld, nb, cur, nb);
        /* S[0:c, 0:c] -= cur' cur */
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, c, bs, -1.0, cur, nb, 1.0, S, lds);
        /* slide the window: prev = last kd rows of [prev; cur] */
        if (kd > 0 && i1 < ne) {
            for (int j = 0; j < c; j++) {
                double *pc = prev + (size_t)j * ldp, *cc = cur + (size_t)j * nb;
                if (bs >= kd) {
                    memcpy(pc, cc + (bs - kd), (size_t)kd * sizeof *pc);
                } else {
                    memmove(pc, pc + bs, (size_t)(kd - bs) * sizeof *pc);
                    memcpy(pc + (kd - bs), cc, (size_t)bs * sizeof *pc);
                }
            }
        }
    }
    free(prev);
    free(cur);
    free(Lp);
    free(Ld);
    return GS_OK;
}

static inline double sym_get(const double *S, int lds, int a, int b)
{
    return a >= b ? S[(size_t)a + (size_t)b * lds] : S[(size_t)b + (size_t)a * lds];
}

gs_err gs_fe_plate_condense(const gs_fe_plate *pl, int nret, const int *ret_nodes,
                            double *Kred, int ldk, gs_fe_condense_stats *st, gs_error *err)
{
    gs_fe_condense_stats st0;
    memset(&st0, 0, sizeof st0);
    if (!st)
        st = &st0;
    memset(st, 0, sizeof *st);
    if (nret < 1 || !ret_nodes || !Kred || ldk < nret)
        return gs_errorf(err, GS_ERR_INVALID, "condense", "bad retained set (%d nodes, ldk %d)",
                         nret, ldk);
    int ndof = pl->ndof, kd = pl->kd, ldab = kd + 1, nn = pl->n_nodes;
    double t0 = gs_now();
    gs_err rc = GS_OK;
    double *ab = NULL, *U1 = NULL, *S2 = NULL, *T = NULL, *Z = NULL;
    int *cls = NULL, *isj = NULL, *loc = NULL, *ppos = NULL, *lists = NULL, *perm1 = NULL,
        *perm2 = NULL, *p2pos = NULL;
    gs_elim_set e1, e2;
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);

    cls = calloc((size_t)ndof, sizeof *cls);
    loc = malloc((size_t)ndof * sizeof *loc);
    ppos = malloc((size_t)ndof * sizeof *ppos);
    isj = malloc((size_t)nn * sizeof *isj);
    lists = malloc((size_t)ndof * 2 * sizeof *lists);
    size_t nab = gs_mul_size((size_t)ldab, (size_t)ndof);
    ab = nab ? malloc(nab * sizeof *ab) : NULL;
    if (!cls || !loc || !ppos || !isj || !lists || !ab) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "condense", "no memory for a %d-DOF plate", ndof);
        goto done;
    }
    for (int i = 0; i < nn; i++)
        isj[i] = -1;
    for (int k = 0; k < nret; k++) {
        int nd = ret_nodes[k];
        if (nd < 0 || nd >= nn) {
            rc = gs_errorf(err, GS_ERR_RANGE, "ret_nodes", "retained node %d out of range [0, %d)",
                           nd, nn);
            goto done;
        }
        if (isj[nd] >= 0) {
            rc = gs_errorf(err, GS_ERR_DUPLICATE, "ret_nodes", "node %d retained twice", nd);
            goto done;
        }
        if (pl->fixed[3 * nd]) {
            rc = gs_errorf(err, GS_ERR_INVALID, "ret_nodes",
                           "retained node %d has its w fixed by the jig", nd);
            goto done;
        }
        isj[nd] = k;
    }
    rc = gs_fe_plate_assemble(pl, 0, 0.0, ab, ldab, NULL, err);
    if (rc != GS_OK)
        goto done;

    /* classify DOFs */
    for (int i = 0; i <= pl->nx; i++)
        for (int j = 0; j <= pl->ny; j++) {
            int nd = gs_fe_plate_node(pl, i, j);
            if (isj[nd] < 0) {
                for (int c = 0; c < 3; c++)
                    cls[3 * nd + c] = pl->fixed[3 * nd + c] ? CL_FIXED : CL_FAR;
                continue;
            }
            int bnd = 0; /* junction node next to a non-junction node with a free DOF */
            for (int di = -1; di <= 1 && !bnd; di++)
                for (int dj = -1; dj <= 1 && !bnd; dj++) {
                    int ii = i + di, jj = j + dj;
                    if (ii < 0 || jj < 0 || ii > pl->nx || jj > pl->ny)
                        continue;
                    int q = gs_fe_plate_node(pl, ii, jj);
                    if (isj[q] < 0 && !(pl->fixed[3 * q] && pl->fixed[3 * q + 1] &&
                                        pl->fixed[3 * q + 2]))
                        bnd = 1;
                }
            cls[3 * nd] = CL_RET;
            for (int c = 1; c < 3; c++)
                cls[3 * nd + c] = pl->fixed[3 * nd + c] ? CL_FIXED : (bnd ? CL_BTH : CL_INNER);
        }
    int n_far = 0, n_bth = 0, n_inner = 0;
    for (int g = 0; g < ndof; g++) {
        n_far += cls[g] == CL_FAR;
        n_bth += cls[g] == CL_BTH;
        n_inner += cls[g] == CL_INNER;
        ppos[g] = -1;
    }
    st->n_free = gs_fe_plate_nfree(pl);
    st->n_far = n_far;
    st->n_inner = n_inner;
    st->n_btheta = n_bth;
    st->t_assemble = gs_now() - t0;

    /* P2 = retained w (caller order) followed by boundary rotations */
    int np2 = nret + n_bth;
    int *p2g = lists;         /* P2 global DOFs */
    int *eg = lists + ndof;   /* an eliminated set's global DOFs */
    for (int k = 0; k < nret; k++)
        p2g[k] = 3 * ret_nodes[k];
    for (int g = 0, q = nret; g < ndof; g++)
        if (cls[g] == CL_BTH)
            p2g[q++] = g;
    p2pos = malloc((size_t)np2 * sizeof *p2pos); /* P2 caller index -> sorted position */
    perm2 = malloc((size_t)np2 * sizeof *perm2);
    size_t ns2 = gs_mul_size((size_t)np2, (size_t)np2);
    S2 = ns2 ? calloc(ns2, sizeof *S2) : NULL;
    if (!p2pos || !perm2 || !S2) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "condense",
                       "no memory for the %d x %d junction Schur complement", np2, np2);
        goto done;
    }

    /* ---- pass 2 set-up first (fixes the sorted order of P2) ---- */
    for (int g = 0; g < ndof; g++)
        loc[g] = -1;
    int ne2 = 0;
    for (int g = 0; g < ndof; g++)
        if (cls[g] == CL_INNER) {
            loc[g] = ne2;
            eg[ne2++] = g;
        }
    rc = elim_build(ab, ldab, kd, ndof, loc, eg, ne2, p2g, np2, ppos, perm2, &e2, err);
    if (rc != GS_OK)
        goto done;
    for (int pos = 0; pos < np2; pos++)
        p2pos[perm2[pos]] = pos;
    st->kd_inner = e2.kd;

    /* S2 = K_P2P2 (lower, sorted order) */
    for (int k = 0; k < np2; k++)
        ppos[p2g[k]] = p2pos[k];
    for (int k = 0; k < np2; k++) {
        int g = p2g[k], a = p2pos[k];
        for (int d = -kd; d <= kd; d++) {
            int h = g + d;
            if (h < 0 || h >= ndof || ppos[h] < 0)
                continue;
            int b = ppos[h];
            if (a >= b)
                S2[(size_t)a + (size_t)b * np2] = band_get(ab, ldab, kd, g, h);
        }
    }
    for (int k = 0; k < np2; k++)
        ppos[p2g[k]] = -1;

    /* ---- pass 1: far field onto the junction boundary ---- */
    double t1 = gs_now();
    if (n_far > 0) {
        for (int g = 0; g < ndof; g++)
            loc[g] = -1;
        int ne1 = 0;
        for (int g = 0; g < ndof; g++)
            if (cls[g] == CL_FAR) {
                loc[g] = ne1;
                eg[ne1++] = g;
            }
        /* P1 = P2 members coupled to the far field (caller order of P2) */
        int *p1k = malloc((size_t)np2 * sizeof *p1k), *p1g = malloc((size_t)np2 * sizeof *p1g);
        perm1 = malloc((size_t)np2 * sizeof *perm1);
        if (!p1k || !p1g || !perm1) {
            free(p1k);
            free(p1g);
            rc = gs_errorf(err, GS_ERR_NOMEM, "condense", "no memory");
            goto done;
        }
        int np1 = 0;
        for (int k = 0; k < np2; k++) {
            int g = p2g[k], coupled = 0;
            for (int d = -kd; d <= kd && !coupled; d++) {
                int h = g + d;
                if (h >= 0 && h < ndof && cls[h] == CL_FAR && band_get(ab, ldab, kd, g, h) != 0.0)
                    coupled = 1;
            }
            if (coupled) {
                p1k[np1] = k;
                p1g[np1] = g;
                np1++;
            }
        }
        st->n_bound = np1;
        rc = elim_build(ab, ldab, kd, ndof, loc, eg, ne1, p1g, np1, ppos, perm1, &e1, err);
        if (rc == GS_OK) {
            st->kd_far = e1.kd;
            size_t nu1 = gs_mul_size((size_t)np1, (size_t)np1);
            U1 = nu1 ? calloc(nu1, sizeof *U1) : NULL;
            if (np1 > 0 && !U1)
                rc = gs_errorf(err, GS_ERR_NOMEM, "condense", "no memory for %d x %d", np1, np1);
        }
        if (rc == GS_OK)
            rc = schur_stream(&e1, np1, U1, np1, "far field", err);
        if (rc == GS_OK) {
            /* S2 += U1, mapped: sorted P1 position -> caller P2 index -> sorted P2 position */
            for (int b = 0; b < np1; b++) {
                int pb = p2pos[p1k[perm1[b]]];
                for (int a = b; a < np1; a++) {
                    int pa = p2pos[p1k[perm1[a]]];
                    double v = U1[(size_t)a + (size_t)b * np1];
                    if (pa >= pb)
                        S2[(size_t)pa + (size_t)pb * np2] += v;
                    else
                        S2[(size_t)pb + (size_t)pa * np2] += v;
                }
            }
        }
        free(p1k);
        free(p1g);
        free(U1);
        U1 = NULL;
        elim_free(&e1);
        if (rc != GS_OK)
            goto done;
    }
    double t2 = gs_now();
    st->t_far = t2 - t1;

    /* ---- pass 2: interior junction rotations ---- */
    rc = schur_stream(&e2, np2, S2, np2, "junction rotations", err);
    elim_free(&e2);
    if (rc != GS_OK)
        goto done;
    double t3 = gs_now();
    st->t_inner = t3 - t2;

    /* ---- pass 3: boundary rotations, dense ---- */
    for (int j = 0; j < nret; j++) {
        int pj = p2pos[j];
        double *col = Kred + (size_t)j * ldk;
        for (int i = j; i < nret; i++)
            col[i] = sym_get(S2, np2, p2pos[i], pj);
    }
    if (n_bth > 0) {
        T = malloc((size_t)n_bth * (size_t)n_bth * sizeof *T);
        Z = malloc((size_t)n_bth * (size_t)nret * sizeof *Z);
        if (!T || !Z) {
            rc = gs_errorf(err, GS_ERR_NOMEM, "condense", "no memory for the boundary block");
            goto done;
        }
        for (int b = 0; b < n_bth; b++) {
            int pb = p2pos[nret + b];
            for (int a = 0; a < n_bth; a++)
                T[(size_t)a + (size_t)b * n_bth] = sym_get(S2, np2, p2pos[nret + a], pb);
            for (int j = 0; j < nret; j++)
                Z[(size_t)b + (size_t)j * n_bth] = sym_get(S2, np2, pb, p2pos[j]);
        }
        free(S2);
        S2 = NULL;
        lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n_bth, T, n_bth);
        if (info != 0) {
            rc = gs_errorf(err, info > 0 ? GS_ERR_NOT_SPD : GS_ERR_INVALID, "condense",
                           "boundary rotations: Cholesky (dpotrf) failed, info %d of %d",
                           (int)info, n_bth);
            if (err)
                err->lapack_info = (int)info;
            goto done;
        }
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n_bth,
                    nret, 1.0, T, n_bth, Z, n_bth);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, nret, n_bth, -1.0, Z, n_bth, 1.0,
                    Kred, ldk);
    }
    for (int j = 0; j < nret; j++) /* exact symmetry: lower -> upper */
        for (int i = j + 1; i < nret; i++)
            Kred[(size_t)j + (size_t)i * ldk] = Kred[(size_t)i + (size_t)j * ldk];
    for (int j = 0; j < nret; j++)
        for (int i = j; i < nret; i++)
            if (!isfinite(Kred[(size_t)i + (size_t)j * ldk])) {
                rc = gs_errorf(err, GS_ERR_NONFINITE, "condense",
                               "non-finite condensed stiffness at (%d, %d)", i, j);
                goto done;
            }
    st->t_bound = gs_now() - t3;

done:
    elim_free(&e1);
    elim_free(&e2);
    free(ab);
    free(U1);
    free(S2);
    free(T);
    free(Z);
    free(cls);
    free(isj);
    free(loc);
    free(ppos);
    free(lists);
    free(perm1);
    free(perm2);
    free(p2pos);
    return rc;
}
