/*
 * model.h -- the assembly model: what stays fixed for thousands of solves.
 *
 * Owns the in-memory description of an assembly after FE substructuring:
 *   parts     one SPD stiffness K_b each (K = blockdiag(K_b), n x n): a dense
 *             condensed block, or the sparse stiffness of a whole FE mesh
 *             (gs_model_set_sparse_block; factored by CHOLMOD, core/spchol.h)
 *   nodes     computational nodes: owning part, local DOF of the normal
 *             displacement inside that part's block, coordinates (mm)
 *   pairs     contact pairs = columns of A (n x m): entry coef[0] at the DOF of
 *             node[0], coef[1] at the DOF of node[1] (node[1] = GS_FIXED for a
 *             node against a fixed part / the jig: one nonzero). A'x is the
 *             relative displacement that closes the gap: residual w = g - A'x.
 *   fasteners candidate pairs that can carry a temporary-fastener load F >= 0;
 *             installed, it adds F * a_k to the load (presses the pair shut)
 *   f         base load vector (n), optional (NULL = no base load)
 * Sign convention and formulations: docs/math.md, docs/formats.md.
 *
 * Lifecycle: gs_model_new -> fill (gs_model_alloc_block for each K) ->
 * gs_model_validate (checks everything but positive definiteness, which the
 * precomputation's Cholesky reports; derives offsets, n and A's compact form)
 * -> use -> gs_model_free. A validated model is read-only and may be shared by
 * threads. A service that keeps a model beside its precomputation may free
 * the dense blocks once they are factored (gs_model_release_dense) and put
 * them back from a fresh read of the same files when a solve needs K itself
 * (gs_model_restore_dense).
 */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include <stdatomic.h>
#include <stddef.h>
#include "gs_error.h"
#include "spmat.h"

#define GS_FIXED (-1) /* pairs[k].node[1] for a node against a fixed part */

typedef enum {
    GS_JOINT_AUTO = -1,   /* derive: sandwich iff some node is in two pairs */
    GS_JOINT_SIMPLE = 0,  /* two parts, each node in at most one pair */
    GS_JOINT_SANDWICH = 1 /* 3+ parts stacked, some nodes in two pairs */
} gs_joint;

typedef struct {
    char name[64];
    int ndof;      /* block size */
    int offset;    /* first global DOF (set by gs_model_validate) */
    double *K;     /* dense part: ndof x ndof, column-major, both triangles
                      stored; NULL for a sparse part */
    gs_spmat *Ksp; /* sparse part: both triangles stored, exactly symmetric
                      (gs_spmat_symmetric_full); NULL for a dense part */
} gs_part;

typedef struct {
    int part;        /* owning part */
    int dof;         /* local DOF index within the part's block */
    double xyz[3];   /* coordinates, mm */
} gs_node;

typedef struct {
    int node[2];     /* node[1] == GS_FIXED: against a fixed part */
    double coef[2];  /* A entries; coef[1] ignored for fixed pairs */
} gs_pair;

typedef struct {
    int pair;        /* candidate pair index */
    double load;     /* N, >= 0 */
} gs_fastener;

typedef struct {
    char name[128];
    gs_joint joint;
    int n_parts, n_nodes, m, n_fast;
    gs_part *parts;
    gs_node *nodes;
    gs_pair *pairs;
    gs_fastener *fast;
    double *f;       /* base load (n) or NULL */

    /* derived by gs_model_validate */
    int n;           /* total DOFs */
    int validated;
    int *a_row;      /* 2m: global row of A's k-th column entries, -1 = none */
    double *a_val;   /* 2m: the entries */
    int *pair_parts; /* 2m: part of each entry, -1 = none */

    /* gs_model_release_dense: the dense blocks are freed (K == NULL) and
     * the content hash they had is kept for gs_model_hash (set before the
     * flag's release store; read after its acquire load) */
    _Atomic int dense_released;
    char released_hash[33]; /* GS_HASH_HEX (hash.h) */

    /* the files its blocks and f were read from (gs_model_read_json, as
     * resolved against the JSON's directory), n_files of them; NULL when
     * none: what a program using the model must not write over */
    char **files;
    int n_files;
} gs_model;

/* Allocate a model with zeroed arrays of the given sizes (blocks not allocated). */
gs_model *gs_model_new(int n_parts, int n_nodes, int m, int n_fast, gs_error *err);
/* Allocate (zeroed) the K block of part b with ndof DOFs. */
gs_err gs_model_alloc_block(gs_model *mdl, int b, int ndof, gs_error *err);
/* Make part b sparse with stiffness K (order = the part's DOFs): K is checked
 * (finite, symmetric within 1e-10 of its largest entry) and stored with both
 * triangles; its contents are taken (*K is emptied, also on failure).
 * O(nnz log(nnz / n)). */
gs_err gs_model_set_sparse_block(gs_model *mdl, int b, gs_spmat *K, gs_error *err);
/* Allocate the base load vector f (zeroed); call after all blocks are sized. */
gs_err gs_model_alloc_f(gs_model *mdl, gs_error *err);
void gs_model_free(gs_model *mdl);
/* Free the dense blocks (parts[b].K of the dense parts) once a
 * precomputation holds their factors: only the primal forms' K x products,
 * the primal certificate and a new precomputation read them, and those
 * refuse a released model (gs_model_dense_released). gs_model_hash answers
 * from then on with the hash the model had: `hash` when the caller knows
 * it (its gs_model_hash), else computed here (O(sum n_b^2)). Sparse parts
 * are kept. No-op if the model has no dense part or is already released.
 * Not thread-safe against readers of the blocks. */
void gs_model_release_dense(gs_model *mdl, const char *hash);
/* gs_model_release_dense that hands the blocks to the caller instead of
 * freeing them: returns n_parts pointers (parts[b].K, NULL for a sparse
 * part), the array and the blocks the caller's to free (a precomputation
 * may factor them in place: gs_precomp_build_taken). NULL, nothing taken,
 * if the model has no dense block, is already released, or without memory
 * for the array. */
double **gs_model_take_dense(gs_model *mdl, const char *hash);
/* 1 if gs_model_release_dense freed the dense blocks and they are not back. */
int gs_model_dense_released(const gs_model *mdl);
/* Put the dense blocks back into a released model from `from`, a freshly
 * read copy of the same model: its blocks are moved (from keeps none) once
 * its content hash is the one kept at the release; otherwise GS_ERR_FORMAT
 * (the files changed since) and nothing moves. O(sum n_b^2) for the hash. */
gs_err gs_model_restore_dense(gs_model *mdl, gs_model *from, gs_error *err);
/* Bytes the model's arrays hold (blocks, sparse matrices, nodes, pairs, A):
 * what freeing it returns, for memory budgets. O(n_parts). */
size_t gs_model_bytes(const gs_model *mdl);

/* Structural validation with precise errors; derives n, offsets, A's compact
 * form and the joint type (when GS_JOINT_AUTO). Symmetry tolerance: 1e-10 of
 * the block's largest entry. Cost O(sum ndof_b^2 + m log m). */
gs_err gs_model_validate(gs_model *mdl, gs_error *err);

/* 1 if two validated models carry bit-identical content: name, joint type,
 * parts (names, sizes, offsets, blocks), nodes, pairs, fasteners and base
 * load; 0 otherwise. O(sum ndof_b^2 + n_nodes + m). */
int gs_model_equal(const gs_model *a, const gs_model *b);

/* y = K x (x, y: n), part by part: dense blocks by dsymv, sparse parts by
 * their CSC. O(sum n_b^2) dense, O(nnz) sparse. Not on a released model
 * (gs_model_dense_released), nor K_col_axpy. */
void gs_model_K_mul(const gs_model *mdl, const double *x, double *y);
/* y += alpha K[:, j] for the global DOF j (y: n). O(n_b) dense, O(nnz_j) sparse. */
void gs_model_K_col_axpy(const gs_model *mdl, int j, double alpha, double *y);
/* 1 if some part is sparse. */
int gs_model_has_sparse(const gs_model *mdl);

/* u = A'x (x: n, u: m). O(m). */
void gs_model_At(const gs_model *mdl, const double *x, double *u);
/* y += alpha * A lam (lam: m, y: n). O(m). */
void gs_model_A_add(const gs_model *mdl, double alpha, const double *lam, double *y);
/* Global DOF of a node. */
static inline int gs_model_node_dof(const gs_model *mdl, int node)
{
    return mdl->parts[mdl->nodes[node].part].offset + mdl->nodes[node].dof;
}
/* Pair-space load vector of a fastener pattern: load[k] = F of the installed
 * candidate on pair k, else 0. installed[i] != 0 selects candidate i (NULL:
 * none). The load vector is f = f_base + A load. */
void gs_model_pattern_load(const gs_model *mdl, const unsigned char *installed, double *load);

#endif
