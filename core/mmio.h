/*
 * mmio.h -- Matrix Market (.mtx) dense and coordinate real matrices.
 *
 * Owns: reading "%%MatrixMarket matrix array|coordinate real|integer|double
 * general|symmetric" into a dense row-major array, and writing "array real
 * general". Banner words are case-insensitive; '%' comment lines and blank
 * lines may appear anywhere after the banner; CRLF line ends are accepted.
 *
 * Reader contract (any bytes are safe; the buffer need not be NUL-terminated):
 *   - array: one value per line, column by column (MM order); symmetric
 *     array lists the lower triangle column by column, n(n+1)/2 values.
 *   - coordinate: "i j value" per line, 1-based; symmetric files hold the
 *     lower triangle (i >= j; an entry above the diagonal is GS_ERR_FORMAT);
 *     duplicate entries are SUMMED (the MM convention); entries not listed
 *     are 0. The symmetric result has both triangles filled.
 *   - GS_ERR_UNSUPPORTED: pattern, complex, hermitian, skew-symmetric,
 *     objects other than "matrix". GS_ERR_LIMIT: rows*cols > max_elems or a
 *     dimension > INT_MAX (checked before allocating). GS_ERR_RANGE: an index
 *     out of range (message names the line). GS_ERR_FORMAT: everything else
 *     malformed, including too few or too many entries (with the line).
 *   - Numbers: decimal (strtod syntax without hex), "inf", "nan" accepted
 *     (callers validate finiteness); "integer" fields take integer literals;
 *     a finite literal beyond the double range is GS_ERR_FORMAT.
 *   - Parsing uses strtod: the process must run in the "C" numeric locale.
 */
#ifndef GS_MMIO_H
#define GS_MMIO_H

#include <stddef.h>

#include "gs_error.h"
#include "spmat.h"

/* Parse buf[0..len). *data: malloc'ed rows x cols row-major (caller frees). */
gs_err gs_mm_read_mem(const char *buf, size_t len, size_t max_elems, double **data, int *rows,
                      int *cols, gs_error *err);

/* Parse a square matrix into *out without a dense copy (the stiffness of a
 * whole FE mesh): symmetric files give the lower triangle (stype -1),
 * general ones every entry (stype 0); duplicates summed; an array file's
 * zeros are dropped, a coordinate file's explicit zeros kept. GS_ERR_DIM if not square; GS_ERR_LIMIT when the order
 * exceeds max_n or the declared entries max_nnz (checked before
 * allocating). O(len + nnz). */
gs_err gs_mm_read_sparse(const char *buf, size_t len, size_t max_n, size_t max_nnz,
                         gs_spmat *out, gs_error *err);

/* Read a file (size capped at GS_MM_MAX_FILE_BYTES) and parse it. */
#define GS_MM_MAX_FILE_BYTES ((size_t)1 << 31)
gs_err gs_mm_read_file(const char *path, size_t max_elems, double **data, int *rows, int *cols,
                       gs_error *err);

/* Write "array real general" (values column by column, %.17g: exact round
 * trip) atomically. */
gs_err gs_mm_write_file(const char *path, const double *rowmajor, int rows, int cols,
                        gs_error *err);

#endif
