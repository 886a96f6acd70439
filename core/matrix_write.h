/*
 * matrix_write.h -- writing a symmetric stiffness matrix in the FE tools'
 * formats that core/matrix_io.h reads.
 *
 * Owns the writers: what gapsim-gen emits so that an engineer (and the
 * tests) can feed gapsim the files an Abaqus or Nastran run would produce,
 * and so that every reader is checked against a writer on the same data.
 *
 *   format                 written as                               needs labels
 *   matrix-market          coordinate real symmetric, lower triangle   no
 *   abaqus-coordinate      row, col, value (1-based, lower triangle)    no
 *   abaqus-matrix-input    node, dof, node, dof, value (lower)          yes
 *   nastran-dmig           free-field DMIG, IFO 6 (symmetric), one      yes
 *                          column entry per column, lower triangle
 *   abaqus-user-element    *USER ELEMENT (nodes, their DOF list) +      yes, every node
 *                          *MATRIX, TYPE=STIFFNESS dense lower triangle   with the same DOFs
 *                          row by row (small condensed blocks only)
 *
 * Values are printed with 17 significant digits (%.17g): every reader gives
 * back the same doubles. Only the lower triangle of a (stype -1, or the
 * entries with row >= column of a stype-0 matrix) is written. Files are
 * written to a temporary name and renamed (gs_wfile): never half a file.
 * Cost O(nnz) (abaqus-user-element: O(n^2)).
 */
#ifndef GS_MATRIX_WRITE_H
#define GS_MATRIX_WRITE_H

#include "gs_error.h"
#include "spmat.h"

/* Write a's lower triangle to path in format fmt (names above). Errors:
 * GS_ERR_UNSUPPORTED for an unknown format or one a cannot be written in
 * (labels missing, user element with unequal DOF lists), GS_ERR_NONFINITE,
 * GS_ERR_IO. */
gs_err gs_matrix_write_file(const char *path, const char *fmt, const gs_spmat *a,
                            gs_error *err);

/* 1 if fmt is a format gs_matrix_write_file writes. */
int gs_matrix_write_supported(const char *fmt);

#endif
