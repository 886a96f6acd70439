/*
 * spmat.h -- square sparse matrices read from FE tools, with their DOF map.
 *
 * Owns: gs_spmat, a square matrix in compressed sparse column form (CSC)
 * with 64-bit indices and, when the file named them, the FE node label and
 * DOF (component) of every row; gs_coo, the triplet builder every matrix
 * reader fills (entries in any order, duplicates summed, either triangle of a
 * symmetric matrix); and the conversions the model needs (dense block, DOF
 * lookup).
 *
 * Layout is CHOLMOD's: colptr/rowind/val with n+1 column pointers, row
 * indices strictly increasing within a column, stype -1 for "lower triangle
 * of a symmetric matrix" and 0 for "every entry stored". A gs_spmat can be
 * wrapped as a cholmod_sparse (itype CHOLMOD_LONG, xtype CHOLMOD_REAL,
 * sorted, packed) without copying.
 *
 * Rows with labels are ordered as the file defines them (the user-element
 * node list, or (label, dof) ascending for entry-per-line formats); rows of
 * unlabelled formats are 0-based indices (label NULL).
 */
#ifndef GS_SPMAT_H
#define GS_SPMAT_H

#include <stddef.h>
#include <stdint.h>

#include "gs_error.h"

typedef struct {
    int64_t n;       /* order: rows = columns (<= INT_MAX) */
    int64_t nnz;     /* stored entries */
    int64_t *colptr; /* n + 1 */
    int64_t *rowind; /* nnz, strictly increasing within each column */
    double *val;     /* nnz */
    int stype;       /* -1: lower triangle of a symmetric matrix; 0: all entries stored */
    int64_t *label;  /* n: FE node label of each row, or NULL (rows are plain indices) */
    int *dof;        /* n: DOF / component of each row (1..6 translations and rotations;
                      * 0 for a scalar point), or NULL */
} gs_spmat;

/* How a builder's entries relate to symmetry. */
typedef enum {
    GS_COO_GENERAL = 0,  /* entries as given: both triangles stored (stype 0) */
    GS_COO_SYMMETRIC = 1 /* one triangle (either), or both with equal mirrored
                          * entries: folded into the lower triangle (stype -1) */
} gs_coo_sym;

/* Triplet builder: rows/cols 0-based. The capacity grows geometrically up to
 * max_nnz entries (GS_ERR_LIMIT beyond). */
typedef struct {
    int64_t *row, *col;
    double *val;
    size_t len, cap, max_nnz;
} gs_coo;

void gs_coo_init(gs_coo *c, size_t max_nnz);
/* Reserve room for `want` entries at once (checked against max_nnz). */
gs_err gs_coo_reserve(gs_coo *c, size_t want, gs_error *err);
gs_err gs_coo_add(gs_coo *c, int64_t row, int64_t col, double val, gs_error *err);
void gs_coo_free(gs_coo *c);

/* Build *out (n x n) from the triplets (all in [0, n)); duplicates summed.
 * GS_COO_SYMMETRIC with entries in both triangles requires every mirrored
 * pair to be equal (GS_ERR_NOT_SYMMETRIC naming the entry otherwise).
 * label / dof (n each, malloc'ed, or NULL) become out's row labels; they
 * are freed on failure. The builder is emptied. Cost O(nnz + n) (one pass
 * when the triplets come in CSC order, else two counting sorts). */
gs_err gs_coo_to_spmat(gs_coo *c, int64_t n, gs_coo_sym sym, int64_t *label, int *dof,
                       gs_spmat *out, gs_error *err);

void gs_spmat_free(gs_spmat *a);

/* Expand into a dense n x n column-major array (both triangles). O(n^2 + nnz). */
void gs_spmat_to_dense(const gs_spmat *a, double *colmajor);

/* Sparse copy of a dense row-major n x n array (exact zeros dropped, stype 0). */
gs_err gs_spmat_from_dense(const double *rowmajor, int64_t n, gs_spmat *out, gs_error *err);

/* The symmetric matrix a stands for, stored with both triangles (stype 0),
 * as a model's sparse part keeps it: from the lower triangle of a (stype -1),
 * or from a general a (stype 0) whose every entry equals its mirror within
 * rtol * max|a_ij| (GS_ERR_NOT_SYMMETRIC naming the entry otherwise; the
 * lower triangle is mirrored, so out is exactly symmetric). Non-finite
 * entries: GS_ERR_NONFINITE. a's labels are copied. O(nnz + n). */
gs_err gs_spmat_symmetric_full(const gs_spmat *a, double rtol, gs_spmat *out, gs_error *err);

/* y = A x for a matrix with every entry stored (stype 0). O(nnz). */
void gs_spmat_mul(const gs_spmat *a, const double *x, double *y);

/* y += alpha A[:, j] (stype 0). O(nnz_j). */
void gs_spmat_col_axpy(const gs_spmat *a, int64_t j, double alpha, double *y);

/* max_j sum_i |a_ij| of a stype-0 matrix (the 1-norm). O(nnz). */
double gs_spmat_norm1(const gs_spmat *a);

/* 1 if a and b are the same matrix: order, stype, pattern and values
 * (bitwise). Row labels are names, not content: not compared. O(nnz + n). */
int gs_spmat_equal(const gs_spmat *a, const gs_spmat *b);

/* "node 1203 dof 3" or "row 17" for messages about row r. */
void gs_spmat_row_name(const gs_spmat *a, int64_t r, char *out, size_t cap);

/* Row of (label, dof), or -1 (labels required). O(log n) when the labels are
 * ascending (entry-per-line formats), O(n) otherwise. */
int64_t gs_spmat_find_row(const gs_spmat *a, int64_t label, int dof);

#endif
