/*
 * normals.h -- 3-D contact normals by nodal rotation.
 *
 * Owns: turning "node i has translations (u1, u2, u3) in its part's matrix
 * and pair k has the unit normal n_k" into gapsim's one-DOF-per-node form.
 * The column of pair k is ci n_k.u_i + cj n_k.u_j; rotating each contact
 * node's three translation rows and columns of K (and of the base load f)
 * onto an orthonormal basis (n, t1, t2) makes n.u the node's first rotated
 * DOF, so the column has one entry per node again, exactly as a *TRANSFORM
 * in the FE tool would. Q = A'K^-1 A, the gaps, contact forces and loads
 * are unchanged by the rotation; displacements x of those three rows come
 * out along (n, t1, t2).
 *
 * Rules: every node of a pair must have all three translation rows; a node
 * carries one normal: the normals of all its pairs must be parallel (within
 * 1e-9; an antiparallel normal flips that pair's coefficient); normals are
 * unit vectors within 1e-6 (they are normalized). t1 = normalize(e x n) with
 * e the axis of n's smallest component, t2 = n x t1 (deterministic).
 */
#ifndef GS_NORMALS_H
#define GS_NORMALS_H

#include <stdint.h>

#include "gs_error.h"
#include "model.h"

/* mdl: blocks (and f, if any) loaded, not yet validated. rows3[3v + c]: the
 * local row of translation c + 1 of node v in its part's block, or -1.
 * normal[3k + c]: component c of pair k's normal. On success every node in
 * a pair has nodes[v].dof = its normal row; nodes in no pair keep
 * rows3[3v] (unrotated). label[v]: node v's FE label, for the errors (NULL:
 * none). Errors name "pairs.nx[k]" or "nodes.label[v]", and the node by its
 * label and the translation that is not a row.
 * Cost O(n_nodes * ndof + m) (6 row/column updates per node). */
gs_err gs_model_apply_normals(gs_model *mdl, const int *rows3, const double *normal,
                              const int64_t *label, gs_error *err);

#endif
