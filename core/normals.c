/* normals.c -- contact normals applied by rotating nodal translations (normals.h). */
#include "normals.h"

#include <math.h>
#include <stdint.h>
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

/* K <- T'KT for a sparse part, every rotated node at once: rot[r] >= 0 is
 * the index into Rs (9 doubles per node, R[a][b] at 3a + b) of the node
 * whose translation row r is, at[r] its a (0..2). Each stored entry expands
 * to at most 3 x 3; duplicates are summed and the lower triangle mirrored
 * (exact symmetry). O(9 nnz) entries, O(nnz log) to sort them. */
static gs_err nr_rotate_sparse(gs_part *pt, const int *rot, const int *at, const int *rows,
                               const double *Rs, gs_error *err)
{
    const gs_spmat *K = pt->Ksp;
    gs_coo c;
    gs_coo_init(&c, SIZE_MAX);
    gs_err rc = gs_coo_reserve(&c, (size_t)K->nnz * 2, err);
    for (int64_t j = 0; j < K->n && rc == GS_OK; j++)
        for (int64_t p = K->colptr[j]; p < K->colptr[j + 1] && rc == GS_OK; p++) {
            const int64_t i = K->rowind[p];
            int64_t ri[3] = {i}, cj[3] = {j};
            double vi[3] = {1.0}, vj[3] = {1.0};
            int ni = 1, nj = 1;
            if (rot[i] >= 0) /* row r_a -> rows r_b, weight R[a][b] */
                for (ni = 0; ni < 3; ni++) {
                    ri[ni] = rows[3 * rot[i] + ni];
                    vi[ni] = Rs[9 * rot[i] + 3 * at[i] + ni];
                }
            if (rot[j] >= 0)
                for (nj = 0; nj < 3; nj++) {
                    cj[nj] = rows[3 * rot[j] + nj];
                    vj[nj] = Rs[9 * rot[j] + 3 * at[j] + nj];
                }
            for (int a = 0; a < ni && rc == GS_OK; a++)
                for (int b = 0; b < nj && rc == GS_OK; b++)
                    if (vi[a] * vj[b] != 0.0)
                        rc = gs_coo_add(&c, ri[a], cj[b], vi[a] * vj[b] * K->val[p], err);
        }
    gs_spmat rotated, *full = NULL;
    if (rc == GS_OK && (rc = gs_coo_to_spmat(&c, K->n, GS_COO_GENERAL, NULL, NULL, &rotated,
                                             err)) == GS_OK) {
        /* the mirror of a rotated entry sums the same terms in another order */
        full = calloc(1, sizeof *full);
        if (!full)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
        else if ((rc = gs_spmat_symmetric_full(&rotated, 1e-12, full, err)) != GS_OK) {
            free(full);
            full = NULL;
        }
        gs_spmat_free(&rotated);
    }
    gs_coo_free(&c);
    if (rc != GS_OK)
        return rc;
    gs_spmat_free(pt->Ksp);
    free(pt->Ksp);
    pt->Ksp = full;
    return GS_OK;
}

gs_err gs_model_apply_normals(gs_model *mdl, const int *rows3, const double *normal,
                              const int64_t *label, gs_error *err)
{
    const int nn = mdl->n_nodes, m = mdl->m;
    double *nv = calloc((size_t)(nn ? nn : 1) * 3, sizeof *nv); /* each node's normal */
    int *owner = malloc((size_t)(nn ? nn : 1) * sizeof *owner);     /* pair that set it */
    double *unit = malloc((size_t)(m ? m : 1) * 3 * sizeof *unit);
    double *nv9 = malloc((size_t)(nn ? nn : 1) * 9 * sizeof *nv9); /* R per node (sparse) */
    gs_err rc = GS_OK;
    char field[64];
    if (!nv || !owner || !unit || !nv9) {
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
            char who[48]; /* the node as the FE model names it */
            if (label)
                snprintf(who, sizeof who, "node %lld", (long long)label[v]);
            else
                snprintf(who, sizeof who, "nodes[%d]", v);
            const int *r3 = rows3 + 3 * v;
            const int miss = r3[0] < 0 ? 1 : r3[1] < 0 ? 2 : r3[2] < 0 ? 3 : 0;
            if (miss && r3[0] < 0 && r3[1] < 0 && r3[2] < 0) {
                rc = gs_errorf(err, GS_ERR_INVALID, field, "%s is in pair %d, which has a "
                               "normal, but not a row of parts[%d].K: none of its "
                               "translations 1, 2, 3 is", who, k, mdl->nodes[v].part);
                break;
            }
            if (miss) {
                rc = gs_errorf(err, GS_ERR_INVALID, field, "%s is in pair %d, which has a "
                               "normal: it needs the translations 1, 2, 3 as rows of "
                               "parts[%d].K, and component %d is not one (fixed by a "
                               "boundary condition?)", who, k, mdl->nodes[v].part, miss);
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
                rc = gs_errorf(err, GS_ERR_INVALID, field, "%s has the normal of pair %d "
                               "and a different one in pair %d (n.n' = %.17g): a node carries "
                               "one contact normal", who, owner[v], k, d);
            else if (d < 0) /* antiparallel: the same axis, the other sign */
                mdl->pairs[k].coef[s] = -mdl->pairs[k].coef[s];
        }
    }
    if (rc != GS_OK)
        goto done;
    size_t off = 0;
    for (int b = 0; b < mdl->n_parts && rc == GS_OK; b++) {
        gs_part *pt = &mdl->parts[b];
        const size_t nd = (size_t)pt->ndof;
        int *rot = NULL, *at = NULL; /* sparse part: row -> rotated node, its axis */
        if (pt->Ksp) {
            rot = malloc(nd * sizeof *rot);
            at = malloc(nd * sizeof *at);
            if (!rot || !at) {
                free(rot);
                free(at);
                rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
                break;
            }
            for (size_t r = 0; r < nd; r++)
                rot[r] = -1;
        }
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
            if (pt->Ksp) { /* rotated below, all nodes in one pass */
                for (int a = 0; a < 3; a++) {
                    rot[rows3[3 * v + a]] = v;
                    at[rows3[3 * v + a]] = a;
                    memcpy(nv9 + 9 * (size_t)v + 3 * a, R[a], 3 * sizeof(double));
                }
            } else {
                nr_rotate_block(pt->K, nd, rows3 + 3 * v, R);
            }
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
        if (pt->Ksp) {
            char pf[48];
            snprintf(pf, sizeof pf, "parts[%d].K", b);
            if ((rc = nr_rotate_sparse(pt, rot, at, rows3, nv9, err)) != GS_OK)
                gs_error_prefix_field(err, pf);
        }
        free(rot);
        free(at);
        off += nd;
    }
done:
    free(nv9);
    free(nv);
    free(owner);
    free(unit);
    return rc;
}
