/* normals.c -- contact normals applied by rotating nodal translations (normals.h). */
#include "normals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Orthonormal basis with R[.][0] = n: R[a][b] is component a of basis vector b. */
static void nr_basis(const double n[3], double R[3][3])
{
    int e = 0;
    for (int c = 1; c < 3; c++)
        if (fabs(n[c]) < fabs(n[e]))
            e = c;
    double ev[3] = {0, 0, 0}, t1[3], t2[3];
    ev[e] = 1;
    t1[0] = ev[1] * n[2] - ev[2] * n[1];
    t1[1] = ev[2] * n[0] - ev[0] * n[2];
    t1[2] = ev[0] * n[1] - ev[1] * n[0];
    double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
    for (int c = 0; c < 3; c++)
        t1[c] /= l;
    t2[0] = n[1] * t1[2] - n[2] * t1[1];
    t2[1] = n[2] * t1[0] - n[0] * t1[2];
    t2[2] = n[0] * t1[1] - n[1] * t1[0];
    for (int a = 0; a < 3; a++) {
        R[a][0] = n[a];
        R[a][1] = t1[a];
        R[a][2] = t2[a];
    }
}

/* K <- T'KT on rows/columns r[0..2] of a column-major nd x nd block, with T
 * the identity except T[r_a][r_b] = R[a][b]; then symmetrized. O(6 nd). */
static void nr_rotate_block(double *K, size_t nd, const int r[3], const double R[3][3])
{
    double v[3];
    for (size_t i = 0; i < nd; i++) { /* columns: K[i][r_b] = sum_a K[i][r_a] R[a][b] */
        for (int b = 0; b < 3; b++)
            v[b] = K[(size_t)r[0] * nd + i] * R[0][b] + K[(size_t)r[1] * nd + i] * R[1][b] +
                   K[(size_t)r[2] * nd + i] * R[2][b];
        for (int b = 0; b < 3; b++)
            K[(size_t)r[b] * nd + i] = v[b];
    }
    for (size_t j = 0; j < nd; j++) { /* rows: K[r_b][j] = sum_a R[a][b] K[r_a][j] */
        for (int b = 0; b < 3; b++)
            v[b] = R[0][b] * K[j * nd + (size_t)r[0]] + R[1][b] * K[j * nd + (size_t)r[1]] +
                   R[2][b] * K[j * nd + (size_t)r[2]];
        for (int b = 0; b < 3; b++)
            K[j * nd + (size_t)r[b]] = v[b];
    }
    for (int b = 0; b < 3; b++) /* exact symmetry of the touched rows and columns */
        for (size_t j = 0; j < nd; j++) {
            double s = 0.5 * (K[j * nd + (size_t)r[b]] + K[(size_t)r[b] * nd + j]);
            K[j * nd + (size_t)r[b]] = s;
            K[(size_t)r[b] * nd + j] = s;
        }
}

gs_err gs_model_apply_normals(gs_model *mdl, const int *rows3, const double *normal,
                              gs_error *err)
{
    const int nn = mdl->n_nodes, m = mdl->m;
    double *nv = calloc((size_t)(nn ? nn : 1) * 3, sizeof *nv); /* each node's normal */
    int *owner = malloc((size_t)(nn ? nn : 1) * sizeof *owner);     /* pair that set it */
    double *unit = malloc((size_t)(m ? m : 1) * 3 * sizeof *unit);
    gs_err rc = GS_OK;
    char field[64];
    if (!nv || !owner || !unit) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d node normals", nn);
        goto done;
    }
    for (int v = 0; v < nn; v++)
        owner[v] = -1;
    for (int k = 0; k < m && rc == GS_OK; k++) {
        const double *n = normal + 3 * (size_t)k;
        double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        snprintf(field, sizeof field, "pairs.nx[%d]", k);
        if (!isfinite(l) || fabs(l - 1) > 1e-6) {
            rc = gs_errorf(err, GS_ERR_INVALID, field, "the normal (%.17g, %.17g, %.17g) is not "
                           "a unit vector (|n| = %.17g)", n[0], n[1], n[2], l);
            break;
        }
        for (int c = 0; c < 3; c++)
            unit[3 * k + c] = n[c] / l;
        for (int s = 0; s < 2 && rc == GS_OK; s++) {
            int v = mdl->pairs[k].node[s];
            if (v == GS_FIXED)
                continue;
            snprintf(field, sizeof field, "nodes.label[%d]", v);
            if (rows3[3 * v] < 0 || rows3[3 * v + 1] < 0 || rows3[3 * v + 2] < 0) {
                rc = gs_errorf(err, GS_ERR_INVALID, field, "node %d is in pair %d, which has a "
                               "normal: it needs the translations 1, 2, 3 as rows of its part's "
                               "matrix", v, k);
                break;
            }
            if (owner[v] < 0) {
                owner[v] = k;
                memcpy(nv + 3 * v, unit + 3 * k, 3 * sizeof *nv);
                continue;
            }
            double d = nv[3 * v] * unit[3 * k] + nv[3 * v + 1] * unit[3 * k + 1] +
                       nv[3 * v + 2] * unit[3 * k + 2];
            if (fabs(fabs(d) - 1) > 1e-9)
                rc = gs_errorf(err, GS_ERR_INVALID, field, "node %d has the normal of pair %d "
                               "and a different one in pair %d (n.n' = %.17g): a node carries "
                               "one contact normal", v, owner[v], k, d);
            else if (d < 0) /* antiparallel: the same axis, the other sign */
                mdl->pairs[k].coef[s] = -mdl->pairs[k].coef[s];
        }
    }
    if (rc != GS_OK)
        goto done;
    size_t off = 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        const size_t nd = (size_t)mdl->parts[b].ndof;
        for (int v = 0; v < nn; v++) {
            if (mdl->nodes[v].part != b)
                continue;
            if (owner[v] < 0) {
                if (rows3[3 * v] >= 0)
                    mdl->nodes[v].dof = rows3[3 * v];
                continue;
            }
            double R[3][3];
            nr_basis(nv + 3 * v, R);
            nr_rotate_block(mdl->parts[b].K, nd, rows3 + 3 * v, R);
            if (mdl->f) { /* f <- T'f */
                double *f = mdl->f + off, w[3];
                const int *r = rows3 + 3 * v;
                for (int q = 0; q < 3; q++)
                    w[q] = R[0][q] * f[r[0]] + R[1][q] * f[r[1]] + R[2][q] * f[r[2]];
                for (int q = 0; q < 3; q++)
                    f[r[q]] = w[q];
            }
            mdl->nodes[v].dof = rows3[3 * v];
        }
        off += nd;
    }
done:
    free(nv);
    free(owner);
    free(unit);
    return rc;
}
