/*
 * model.c -- construction, validation and the sparse operator A of an
 * assembly model (see model.h for the data and its conventions).
 *
 * Validation reports the first problem found, naming the field the way the
 * JSON format does ("parts[1].K", "pairs[12].node[1]"). Checks, in order:
 * parts (sizes, finite and symmetric blocks), base load, nodes (part and dof
 * in range, finite coordinates, no dof claimed twice), pairs (nodes in range,
 * distinct, finite non-zero coefficients, no duplicate node pair), fasteners
 * (pair in range, finite load >= 0, one fastener per pair). Positive
 * definiteness is left to the precomputation's Cholesky (it factors anyway).
 */
#include "model.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "linalg.h"

#define GS_SYM_RTOL 1e-10

gs_model *gs_model_new(int n_parts, int n_nodes, int m, int n_fast, gs_error *err)
{
    if (n_parts < 0 || n_nodes < 0 || m < 0 || n_fast < 0) {
        gs_errorf(err, GS_ERR_INVALID, "", "negative model size");
        return NULL;
    }
    gs_model *mdl = calloc(1, sizeof *mdl);
    if (!mdl)
        goto nomem;
    mdl->joint = GS_JOINT_AUTO;
    mdl->n_parts = n_parts;
    mdl->n_nodes = n_nodes;
    mdl->m = m;
    mdl->n_fast = n_fast;
    mdl->parts = calloc((size_t)n_parts + 1, sizeof *mdl->parts);
    mdl->nodes = calloc((size_t)n_nodes + 1, sizeof *mdl->nodes);
    mdl->pairs = calloc((size_t)m + 1, sizeof *mdl->pairs);
    mdl->fast = calloc((size_t)n_fast + 1, sizeof *mdl->fast);
    if (!mdl->parts || !mdl->nodes || !mdl->pairs || !mdl->fast)
        goto nomem;
    return mdl;
nomem:
    gs_model_free(mdl);
    gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a model with %d nodes and %d pairs",
              n_nodes, m);
    return NULL;
}

gs_err gs_model_alloc_block(gs_model *mdl, int b, int ndof, gs_error *err)
{
    char field[48];
    snprintf(field, sizeof field, "parts[%d].ndof", b);
    if (b < 0 || b >= mdl->n_parts)
        return gs_errorf(err, GS_ERR_RANGE, "parts", "part %d out of range [0, %d)", b,
                         mdl->n_parts);
    if (ndof < 1)
        return gs_errorf(err, GS_ERR_INVALID, field, "a part needs at least 1 DOF, got %d", ndof);
    size_t nn = gs_mul_size((size_t)ndof, (size_t)ndof);
    if (nn == 0 || nn > SIZE_MAX / sizeof(double))
        return gs_errorf(err, GS_ERR_LIMIT, field, "block of %d DOFs too large", ndof);
    free(mdl->parts[b].K);
    if (mdl->parts[b].Ksp) {
        gs_spmat_free(mdl->parts[b].Ksp);
        free(mdl->parts[b].Ksp);
        mdl->parts[b].Ksp = NULL;
    }
    mdl->parts[b].K = gs_alloc_matrix(nn, sizeof(double), 1);
    if (!mdl->parts[b].K) {
        mdl->parts[b].ndof = 0;
        return gs_errorf(err, GS_ERR_NOMEM, field, "no memory for a %d x %d block", ndof, ndof);
    }
    mdl->parts[b].ndof = ndof;
    if (mdl->validated) /* a model being read is not: its blocks load side by side */
        mdl->validated = 0;
    return GS_OK;
}

gs_err gs_model_set_sparse_block(gs_model *mdl, int b, gs_spmat *K, gs_error *err)
{
    char field[48];
    snprintf(field, sizeof field, "parts[%d].K", b);
    gs_err rc = GS_OK;
    gs_spmat *full = calloc(1, sizeof *full);
    if (b < 0 || b >= mdl->n_parts)
        rc = gs_errorf(err, GS_ERR_RANGE, "parts", "part %d out of range [0, %d)", b,
                       mdl->n_parts);
    else if (K->n < 1 || K->n > INT_MAX)
        rc = gs_errorf(err, GS_ERR_INVALID, field, "a part needs 1 to %d DOFs, got %lld",
                       INT_MAX, (long long)K->n);
    else if (!full)
        rc = gs_errorf(err, GS_ERR_NOMEM, field, "no memory");
    else if ((rc = gs_spmat_symmetric_full(K, GS_SYM_RTOL, full, err)) != GS_OK)
        gs_error_prefix_field(err, field);
    gs_spmat_free(K);
    if (rc != GS_OK) {
        free(full);
        return rc;
    }
    gs_part *pt = &mdl->parts[b];
    free(pt->K);
    pt->K = NULL;
    if (pt->Ksp)
        gs_spmat_free(pt->Ksp);
    free(pt->Ksp);
    pt->Ksp = full;
    pt->ndof = (int)full->n;
    if (mdl->validated) /* as in gs_model_alloc_block */
        mdl->validated = 0;
    return GS_OK;
}

gs_err gs_model_alloc_f(gs_model *mdl, gs_error *err)
{
    size_t n = 0;
    for (int b = 0; b < mdl->n_parts; b++)
        n += (size_t)(mdl->parts[b].ndof > 0 ? mdl->parts[b].ndof : 0);
    free(mdl->f);
    mdl->f = calloc(n + 1, sizeof *mdl->f);
    if (!mdl->f)
        return gs_errorf(err, GS_ERR_NOMEM, "f", "no memory for the load vector");
    return GS_OK;
}

void gs_model_free(gs_model *mdl)
{
    if (!mdl)
        return;
    for (int i = 0; i < mdl->n_files; i++)
        free(mdl->files[i]);
    free(mdl->files);
    if (mdl->parts)
        for (int b = 0; b < mdl->n_parts; b++) {
            free(mdl->parts[b].K);
            if (mdl->parts[b].Ksp)
                gs_spmat_free(mdl->parts[b].Ksp);
            free(mdl->parts[b].Ksp);
        }
    free(mdl->parts);
    free(mdl->nodes);
    free(mdl->pairs);
    free(mdl->fast);
    free(mdl->f);
    free(mdl->a_row);
    free(mdl->a_val);
    free(mdl->pair_parts);
    free(mdl);
}

static int has_dense(const gs_model *mdl)
{
    for (int b = 0; b < mdl->n_parts; b++)
        if (mdl->parts[b].K)
            return 1;
    return 0;
}

/* Keep the model's hash (given, or computed while the blocks are there),
 * then move its dense blocks into out[] (or free them: out NULL) and flag
 * the model released. */
static void release(gs_model *mdl, const char *hash, double **out)
{
    if (hash)
        snprintf(mdl->released_hash, sizeof mdl->released_hash, "%s", hash);
    else
        gs_model_hash(mdl, mdl->released_hash);
    for (int b = 0; b < mdl->n_parts; b++) {
        if (out)
            out[b] = mdl->parts[b].K;
        else
            free(mdl->parts[b].K);
        mdl->parts[b].K = NULL;
    }
    atomic_store_explicit(&mdl->dense_released, 1, memory_order_release);
}

void gs_model_release_dense(gs_model *mdl, const char *hash)
{
    if (!gs_model_dense_released(mdl) && has_dense(mdl))
        release(mdl, hash, NULL);
}

double **gs_model_take_dense(gs_model *mdl, const char *hash)
{
    if (gs_model_dense_released(mdl) || !has_dense(mdl))
        return NULL;
    double **out = calloc((size_t)mdl->n_parts, sizeof *out);
    if (out)
        release(mdl, hash, out);
    return out;
}

int gs_model_dense_released(const gs_model *mdl)
{
    return atomic_load_explicit(&((gs_model *)mdl)->dense_released, memory_order_acquire);
}

gs_err gs_model_restore_dense(gs_model *mdl, gs_model *from, gs_error *err)
{
    if (!gs_model_dense_released(mdl))
        return GS_OK;
    int same = !gs_model_dense_released(from) && from->n_parts == mdl->n_parts;
    for (int b = 0; same && b < mdl->n_parts; b++) /* O(n_parts) */
        same = from->parts[b].ndof == mdl->parts[b].ndof &&
               !from->parts[b].Ksp == !mdl->parts[b].Ksp;
    char h[GS_HASH_HEX];
    if (same) {
        gs_model_hash(from, h);
        same = !strcmp(h, mdl->released_hash);
    }
    if (!same)
        return gs_errorf(err, GS_ERR_FORMAT, "parts",
                         "the model read again is not the one whose stiffness blocks were "
                         "released (content hash %s): its files changed", mdl->released_hash);
    for (int b = 0; b < mdl->n_parts; b++) {
        mdl->parts[b].K = from->parts[b].K;
        from->parts[b].K = NULL;
    }
    atomic_store_explicit(&mdl->dense_released, 0, memory_order_release);
    return GS_OK;
}

size_t gs_model_bytes(const gs_model *mdl)
{
    if (!mdl)
        return 0;
    size_t b = sizeof *mdl + (size_t)mdl->n_parts * sizeof(gs_part) +
               (size_t)mdl->n_nodes * sizeof(gs_node) + (size_t)mdl->m * sizeof(gs_pair) +
               (size_t)mdl->n_fast * sizeof(gs_fastener);
    if (mdl->f)
        b += (size_t)mdl->n * sizeof(double);
    if (mdl->a_row) /* a_row, a_val, pair_parts: 2m each */
        b += 2 * (size_t)mdl->m * (2 * sizeof(int) + sizeof(double));
    for (int p = 0; p < mdl->n_parts; p++) {
        const gs_part *pt = &mdl->parts[p];
        if (pt->K)
            b += (size_t)pt->ndof * (size_t)pt->ndof * sizeof(double);
        if (pt->Ksp) {
            const gs_spmat *k = pt->Ksp;
            b += sizeof *k + (size_t)(k->n + 1) * sizeof(int64_t) +
                 (size_t)k->nnz * (sizeof(int64_t) + sizeof(double));
            if (k->label)
                b += (size_t)k->n * sizeof(int64_t);
            if (k->dof)
                b += (size_t)k->n * sizeof(int);
        }
    }
    return b;
}

/* ---- validation ---------------------------------------------------------- */

static gs_err validate_parts(gs_model *mdl, gs_error *err)
{
    char field[48];
    if (mdl->n_parts < 1)
        return gs_errorf(err, GS_ERR_INVALID, "parts", "a model needs at least one part");
    long long n = 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        gs_part *pt = &mdl->parts[b];
        snprintf(field, sizeof field, "parts[%d].K", b);
        if (pt->ndof < 1 || (!pt->K && !pt->Ksp))
            return gs_errorf(err, GS_ERR_INVALID, field, "part %d has no stiffness block", b);
        pt->offset = (int)n;
        n += pt->ndof;
        if (n > 1000000000LL)
            return gs_errorf(err, GS_ERR_LIMIT, "parts", "total DOF count too large");
        if (pt->Ksp) { /* finite and symmetric by construction (set_sparse_block) */
            if (gs_spmat_norm1(pt->Ksp) == 0.0)
                return gs_errorf(err, GS_ERR_NOT_SPD, field, "matrix is all zeros");
            continue;
        }
        /* finiteness and the largest magnitude: one pass, O(ndof^2), without a
         * branch per entry (x - x is NaN exactly for an infinite or NaN x, and
         * the sums run in 4 lanes so the loop vectorizes); the entry is
         * looked for only when there is one */
        const int nd = pt->ndof;
        const size_t nn = (size_t)nd * (size_t)nd;
        double kmax = 0.0, lane_max[4] = {0, 0, 0, 0}, lane_bad[4] = {0, 0, 0, 0};
        size_t idx = 0;
        for (; idx + 4 <= nn; idx += 4)
            for (int q = 0; q < 4; q++) {
                const double v = pt->K[idx + q], a = fabs(v);
                lane_bad[q] += v - v;
                lane_max[q] = a > lane_max[q] ? a : lane_max[q];
            }
        for (int q = 0; q < 4; q++)
            kmax = lane_max[q] > kmax ? lane_max[q] : kmax;
        int bad = isnan(lane_bad[0] + lane_bad[1] + lane_bad[2] + lane_bad[3]);
        for (; idx < nn; idx++) {
            const double a = fabs(pt->K[idx]);
            bad |= !isfinite(pt->K[idx]);
            kmax = a > kmax ? a : kmax;
        }
        for (idx = 0; bad && idx < nn; idx++)
            if (!isfinite(pt->K[idx]))
                return gs_errorf(err, GS_ERR_NONFINITE, field,
                                 "non-finite entry %g at (%zu, %zu)", pt->K[idx],
                                 idx % (size_t)nd, idx / (size_t)nd);
        if (kmax == 0.0)
            return gs_errorf(err, GS_ERR_NOT_SPD, field, "block is all zeros");
        /* symmetry, tile by tile so that the transposed reads stay in cache */
        const double tol = GS_SYM_RTOL * kmax;
        enum { T = 64 };
        for (int jb = 0; jb < nd; jb += T)
            for (int ib = jb; ib < nd; ib += T)
                for (int j = jb; j < jb + T && j < nd; j++)
                    for (int i = (ib > j + 1 ? ib : j + 1); i < ib + T && i < nd; i++) {
                        double a = pt->K[(size_t)j * nd + i], c = pt->K[(size_t)i * nd + j];
                        if (fabs(a - c) > tol)
                            return gs_errorf(err, GS_ERR_NOT_SYMMETRIC, field,
                                             "K(%d,%d) = %.17g differs from K(%d,%d) = %.17g "
                                             "(tolerance %.3g)",
                                             i, j, a, j, i, c, tol);
                    }
    }
    mdl->n = (int)n;
    if (mdl->f)
        for (int i = 0; i < mdl->n; i++)
            if (!isfinite(mdl->f[i]))
                return gs_errorf(err, GS_ERR_NONFINITE, "f", "non-finite load %g at DOF %d",
                                 mdl->f[i], i);
    return GS_OK;
}

static gs_err validate_nodes(gs_model *mdl, gs_error *err)
{
    char field[48];
    int *owner = malloc((size_t)mdl->n * sizeof *owner);
    if (!owner)
        return gs_errorf(err, GS_ERR_NOMEM, "nodes", "no memory");
    for (int i = 0; i < mdl->n; i++)
        owner[i] = -1;
    gs_err rc = GS_OK;
    for (int v = 0; v < mdl->n_nodes && rc == GS_OK; v++) {
        const gs_node *nd = &mdl->nodes[v];
        if (nd->part < 0 || nd->part >= mdl->n_parts) {
            snprintf(field, sizeof field, "nodes[%d].part", v);
            rc = gs_errorf(err, GS_ERR_RANGE, field, "node %d: part %d out of range [0, %d)", v,
                           nd->part, mdl->n_parts);
            break;
        }
        if (nd->dof < 0 || nd->dof >= mdl->parts[nd->part].ndof) {
            snprintf(field, sizeof field, "nodes[%d].dof", v);
            rc = gs_errorf(err, GS_ERR_RANGE, field,
                           "node %d: dof %d out of range [0, %d) of part %d", v, nd->dof,
                           mdl->parts[nd->part].ndof, nd->part);
            break;
        }
        for (int c = 0; c < 3; c++)
            if (!isfinite(nd->xyz[c])) {
                snprintf(field, sizeof field, "nodes[%d].xyz", v);
                rc = gs_errorf(err, GS_ERR_NONFINITE, field, "node %d: non-finite coordinate", v);
                break;
            }
        if (rc != GS_OK)
            break;
        int g = gs_model_node_dof(mdl, v);
        if (owner[g] >= 0) {
            snprintf(field, sizeof field, "nodes[%d].dof", v);
            rc = gs_errorf(err, GS_ERR_DUPLICATE, field,
                           "node %d: dof %d of part %d already belongs to node %d", v, nd->dof,
                           nd->part, owner[g]);
            break;
        }
        owner[g] = v;
    }
    free(owner);
    return rc;
}

typedef struct { int lo, hi, k; } pair_key;

static int pair_key_cmp(const void *a, const void *b)
{
    const pair_key *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return x->k < y->k ? -1 : (x->k > y->k);
}

static gs_err validate_pairs(gs_model *mdl, gs_error *err)
{
    char field[48];
    if (mdl->m < 1)
        return gs_errorf(err, GS_ERR_INVALID, "pairs", "a model needs at least one contact pair");
    for (int k = 0; k < mdl->m; k++) {
        const gs_pair *pr = &mdl->pairs[k];
        for (int s = 0; s < 2; s++) { /* field names only for an error: O(1) per pair */
            int v = pr->node[s];
            if (s == 1 && v == GS_FIXED)
                continue;
            if (v < 0 || v >= mdl->n_nodes) {
                snprintf(field, sizeof field, "pairs[%d].node[%d]", k, s);
                return gs_errorf(err, GS_ERR_RANGE, field,
                                 "pair %d: node %d out of range [0, %d)%s", k, v, mdl->n_nodes,
                                 s == 1 ? " (use -1 for a fixed part)" : "");
            }
            if (!isfinite(pr->coef[s]) || pr->coef[s] == 0.0) {
                snprintf(field, sizeof field, "pairs[%d].coef[%d]", k, s);
                if (!isfinite(pr->coef[s]))
                    return gs_errorf(err, GS_ERR_NONFINITE, field,
                                     "pair %d: non-finite coefficient", k);
                return gs_errorf(err, GS_ERR_INVALID, field,
                                 "pair %d: zero coefficient (a pair's nodes must enter A)", k);
            }
        }
        if (pr->node[0] == pr->node[1]) {
            snprintf(field, sizeof field, "pairs[%d].node[1]", k);
            return gs_errorf(err, GS_ERR_INVALID, field, "pair %d joins node %d to itself", k,
                             pr->node[0]);
        }
    }
    /* duplicates: same unordered node set; O(m log m) */
    pair_key *keys = malloc((size_t)mdl->m * sizeof *keys);
    if (!keys)
        return gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory");
    for (int k = 0; k < mdl->m; k++) {
        int a = mdl->pairs[k].node[0], b = mdl->pairs[k].node[1];
        keys[k] = (pair_key){a < b ? a : b, a < b ? b : a, k};
    }
    qsort(keys, (size_t)mdl->m, sizeof *keys, pair_key_cmp);
    gs_err rc = GS_OK;
    for (int k = 1; k < mdl->m; k++)
        if (keys[k].lo == keys[k - 1].lo && keys[k].hi == keys[k - 1].hi) {
            snprintf(field, sizeof field, "pairs[%d]", keys[k].k);
            rc = gs_errorf(err, GS_ERR_DUPLICATE, field,
                           "pair %d joins the same nodes (%d, %d) as pair %d", keys[k].k,
                           mdl->pairs[keys[k].k].node[0], mdl->pairs[keys[k].k].node[1],
                           keys[k - 1].k);
            break;
        }
    free(keys);
    return rc;
}

static gs_err validate_fasteners(gs_model *mdl, gs_error *err)
{
    char field[48];
    unsigned char *seen = calloc((size_t)mdl->m, 1);
    if (!seen)
        return gs_errorf(err, GS_ERR_NOMEM, "fasteners", "no memory");
    gs_err rc = GS_OK;
    for (int i = 0; i < mdl->n_fast && rc == GS_OK; i++) {
        const gs_fastener *fs = &mdl->fast[i];
        if (fs->pair < 0 || fs->pair >= mdl->m) {
            snprintf(field, sizeof field, "fasteners[%d].pair", i);
            rc = gs_errorf(err, GS_ERR_RANGE, field, "fastener %d: pair %d out of range [0, %d)",
                           i, fs->pair, mdl->m);
        } else if (seen[fs->pair]) {
            snprintf(field, sizeof field, "fasteners[%d].pair", i);
            rc = gs_errorf(err, GS_ERR_DUPLICATE, field,
                           "fastener %d: pair %d already has a fastener", i, fs->pair);
        } else if (!isfinite(fs->load)) {
            snprintf(field, sizeof field, "fasteners[%d].load", i);
            rc = gs_errorf(err, GS_ERR_NONFINITE, field, "fastener %d: non-finite load", i);
        } else if (fs->load < 0.0) {
            snprintf(field, sizeof field, "fasteners[%d].load", i);
            rc = gs_errorf(err, GS_ERR_INVALID, field,
                           "fastener %d: load %g < 0 (a fastener presses the pair shut)", i,
                           fs->load);
        } else {
            seen[fs->pair] = 1;
        }
    }
    free(seen);
    return rc;
}

/* Compact A: 2 entries per column, and the joint type. O(m + n_nodes). */
static gs_err derive_operator(gs_model *mdl, gs_error *err)
{
    free(mdl->a_row);
    free(mdl->a_val);
    free(mdl->pair_parts);
    mdl->a_row = malloc(2 * (size_t)mdl->m * sizeof *mdl->a_row);
    mdl->a_val = malloc(2 * (size_t)mdl->m * sizeof *mdl->a_val);
    mdl->pair_parts = malloc(2 * (size_t)mdl->m * sizeof *mdl->pair_parts);
    int *uses = calloc((size_t)mdl->n_nodes + 1, sizeof *uses);
    if (!mdl->a_row || !mdl->a_val || !mdl->pair_parts || !uses) {
        free(uses);
        return gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory");
    }
    int shared = 0;
    for (int k = 0; k < mdl->m; k++)
        for (int s = 0; s < 2; s++) {
            int v = mdl->pairs[k].node[s];
            if (v == GS_FIXED) {
                mdl->a_row[2 * k + s] = -1;
                mdl->a_val[2 * k + s] = 0.0;
                mdl->pair_parts[2 * k + s] = -1;
                continue;
            }
            mdl->a_row[2 * k + s] = gs_model_node_dof(mdl, v);
            mdl->a_val[2 * k + s] = mdl->pairs[k].coef[s];
            mdl->pair_parts[2 * k + s] = mdl->nodes[v].part;
            if (++uses[v] == 2)
                shared++;
        }
    free(uses);
    if (mdl->joint == GS_JOINT_AUTO)
        mdl->joint = shared > 0 ? GS_JOINT_SANDWICH : GS_JOINT_SIMPLE;
    return GS_OK;
}

gs_err gs_model_validate(gs_model *mdl, gs_error *err)
{
    gs_error_clear(err);
    mdl->validated = 0;
    gs_err rc;
    if ((rc = validate_parts(mdl, err)) != GS_OK || (rc = validate_nodes(mdl, err)) != GS_OK ||
        (rc = validate_pairs(mdl, err)) != GS_OK || (rc = validate_fasteners(mdl, err)) != GS_OK ||
        (rc = derive_operator(mdl, err)) != GS_OK)
        return rc;
    mdl->validated = 1;
    return GS_OK;
}

int gs_model_equal(const gs_model *a, const gs_model *b)
{
    if (strcmp(a->name, b->name) || a->joint != b->joint || a->n_parts != b->n_parts ||
        a->n_nodes != b->n_nodes || a->m != b->m || a->n_fast != b->n_fast || a->n != b->n)
        return 0;
    for (int p = 0; p < a->n_parts; p++) {
        const gs_part *x = &a->parts[p], *y = &b->parts[p];
        if (strcmp(x->name, y->name) || x->ndof != y->ndof || x->offset != y->offset ||
            !x->Ksp != !y->Ksp)
            return 0;
        if (x->Ksp ? !gs_spmat_equal(x->Ksp, y->Ksp)
                   : memcmp(x->K, y->K, (size_t)x->ndof * (size_t)x->ndof * sizeof(double)) != 0)
            return 0;
    }
    for (int v = 0; v < a->n_nodes; v++)
        if (a->nodes[v].part != b->nodes[v].part || a->nodes[v].dof != b->nodes[v].dof ||
            memcmp(a->nodes[v].xyz, b->nodes[v].xyz, sizeof a->nodes[v].xyz))
            return 0;
    for (int k = 0; k < a->m; k++)
        if (memcmp(a->pairs[k].node, b->pairs[k].node, sizeof a->pairs[k].node) ||
            memcmp(a->pairs[k].coef, b->pairs[k].coef, sizeof a->pairs[k].coef))
            return 0;
    for (int i = 0; i < a->n_fast; i++)
        if (a->fast[i].pair != b->fast[i].pair ||
            memcmp(&a->fast[i].load, &b->fast[i].load, sizeof(double)))
            return 0;
    return !a->f == !b->f && (!a->f || !memcmp(a->f, b->f, (size_t)a->n * sizeof(double)));
}

/* ---- the operator A ---------------------------------------------------------- */

void gs_model_At(const gs_model *mdl, const double *x, double *u)
{
    const int *r = mdl->a_row;
    const double *a = mdl->a_val;
    for (int k = 0; k < mdl->m; k++) {
        double s = a[2 * k] * x[r[2 * k]];
        if (r[2 * k + 1] >= 0)
            s += a[2 * k + 1] * x[r[2 * k + 1]];
        u[k] = s;
    }
}

void gs_model_A_add(const gs_model *mdl, double alpha, const double *lam, double *y)
{
    const int *r = mdl->a_row;
    const double *a = mdl->a_val;
    for (int k = 0; k < mdl->m; k++) {
        double l = alpha * lam[k];
        y[r[2 * k]] += a[2 * k] * l;
        if (r[2 * k + 1] >= 0)
            y[r[2 * k + 1]] += a[2 * k + 1] * l;
    }
}

void gs_model_pattern_load(const gs_model *mdl, const unsigned char *installed, double *load)
{
    memset(load, 0, (size_t)mdl->m * sizeof *load);
    if (!installed)
        return;
    for (int i = 0; i < mdl->n_fast; i++)
        if (installed[i])
            load[mdl->fast[i].pair] += mdl->fast[i].load;
}

void gs_model_K_mul(const gs_model *mdl, const double *x, double *y)
{
    for (int b = 0; b < mdl->n_parts; b++) {
        const gs_part *pt = &mdl->parts[b];
        if (pt->Ksp)
            gs_spmat_mul(pt->Ksp, x + pt->offset, y + pt->offset);
        else
            cblas_dsymv(CblasColMajor, CblasLower, pt->ndof, 1.0, pt->K, pt->ndof,
                        x + pt->offset, 1, 0.0, y + pt->offset, 1);
    }
}

void gs_model_K_col_axpy(const gs_model *mdl, int j, double alpha, double *y)
{
    int b = 0;
    while (b + 1 < mdl->n_parts && mdl->parts[b + 1].offset <= j)
        b++;
    const gs_part *pt = &mdl->parts[b];
    if (pt->Ksp)
        gs_spmat_col_axpy(pt->Ksp, j - pt->offset, alpha, y + pt->offset);
    else
        cblas_daxpy(pt->ndof, alpha, pt->K + (size_t)(j - pt->offset) * pt->ndof, 1,
                    y + pt->offset, 1);
}

int gs_model_has_sparse(const gs_model *mdl)
{
    for (int b = 0; b < mdl->n_parts; b++)
        if (mdl->parts[b].Ksp)
            return 1;
    return 0;
}
