/*
 * matrix_io.h -- one reader interface for the stiffness matrices of FE tools.
 *
 * Owns: the table of matrix file formats (name, sniffer, reader), the choice
 * of a format (an explicit name, else a sniff that is certain, never the file
 * name's extension), and reading a file or buffer into a gs_spmat (spmat.h).
 *
 *   name                  what                                          rows labelled
 *   npy                   NumPy .npy float64 n x n array (dense)        no
 *   matrix-market         %%MatrixMarket array / coordinate             no
 *   scipy-npz             scipy.sparse.save_npz (csr, csc, coo)         no
 *   abaqus-user-element   *SUBSTRUCTURE MATRIX OUTPUT, OUTPUT FILE=USER  yes (node list x DOFs)
 *                         DEFINED: *USER ELEMENT + *MATRIX,TYPE=STIFFNESS
 *   abaqus-matrix-input   *MATRIX OUTPUT, FORMAT=MATRIX INPUT:           yes ((node, dof) ascending)
 *                         node, dof, node, dof, value
 *   abaqus-coordinate     *MATRIX OUTPUT, FORMAT=COORDINATE: row, col, value  no
 *   nastran-dmig          DMIG entries of a punch / bulk file (small,     yes ((grid, comp) ascending)
 *                         large or free field; IFO 6 symmetric, 1 square)
 *
 * Sniffing (gs_matfmt_sniff) answers only when the first bytes are certain:
 * the .npy magic, a zip header, the Matrix Market banner, a *USER ELEMENT
 * keyword before any data, a DMIG entry as the first bulk line, or data
 * lines of exactly 5 (matrix input) or 3 (coordinate) comma-separated
 * integers-and-value fields. Anything else needs the format named.
 *
 * Every reader: any bytes are safe; sizes are checked against the options
 * before allocating; errors name the line (text formats) or the member
 * (npz); symmetric storage (one triangle, or both equal) gives stype -1.
 * Cost: O(input + nnz log nnz) (labels sorted), O(input + nnz) without.
 */
#ifndef GS_MATRIX_IO_H
#define GS_MATRIX_IO_H

#include <stddef.h>

#include "gs_error.h"
#include "spmat.h"

typedef struct {
    size_t max_n;      /* largest order accepted */
    size_t max_nnz;    /* most stored entries accepted (dense formats: n^2) */
    const char *name;  /* nastran-dmig: the matrix NAME to read (NULL: the file's only one) */
} gs_matread_opts;

typedef struct {
    const char *name;     /* the model JSON's "format" value */
    const char *what;     /* one line for messages and docs */
    /* 1 if buf (the whole input, or its first bytes) is certainly this format */
    int (*sniff)(const unsigned char *buf, size_t len);
    gs_err (*read)(const unsigned char *buf, size_t len, const gs_matread_opts *o, gs_spmat *out,
                   gs_error *err);
} gs_matfmt;

/* The table, ended by a zeroed entry. */
extern const gs_matfmt gs_matfmts[];

/* Format by name, or NULL. */
const gs_matfmt *gs_matfmt_find(const char *name);
/* The format the bytes certainly are, or NULL (unknown or ambiguous). */
const gs_matfmt *gs_matfmt_sniff(const unsigned char *buf, size_t len);
/* "npy, matrix-market, ..." for messages. */
const char *gs_matfmt_names(void);

/* Read buf[0..len) (need not be NUL-terminated) as `format` (NULL: sniff). */
gs_err gs_matrix_read_mem(const void *buf, size_t len, const char *format,
                          const gs_matread_opts *o, gs_spmat *out, gs_error *err);
/* Read a file (at most GS_MATRIX_MAX_FILE_BYTES). Errors name the file. */
#define GS_MATRIX_MAX_FILE_BYTES ((size_t)1 << 31)
gs_err gs_matrix_read_file(const char *path, const char *format, const gs_matread_opts *o,
                           gs_spmat *out, gs_error *err);

/* The readers behind the table (one file each: matrix_io.c, abaqus_io.c,
 * dmig_io.c, npz_io.c). */
gs_err gs_read_npy_matrix(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                          gs_spmat *out, gs_error *err);
gs_err gs_read_mm_matrix(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                         gs_spmat *out, gs_error *err);
gs_err gs_read_npz(const unsigned char *buf, size_t len, const gs_matread_opts *o, gs_spmat *out,
                   gs_error *err);
gs_err gs_read_abaqus_uel(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                          gs_spmat *out, gs_error *err);
gs_err gs_read_abaqus_matrix_input(const unsigned char *buf, size_t len,
                                   const gs_matread_opts *o, gs_spmat *out, gs_error *err);
gs_err gs_read_abaqus_coordinate(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                                 gs_spmat *out, gs_error *err);
gs_err gs_read_dmig(const unsigned char *buf, size_t len, const gs_matread_opts *o, gs_spmat *out,
                    gs_error *err);
int gs_sniff_abaqus_uel(const unsigned char *buf, size_t len);
int gs_sniff_abaqus_matrix_input(const unsigned char *buf, size_t len);
int gs_sniff_abaqus_coordinate(const unsigned char *buf, size_t len);
int gs_sniff_dmig(const unsigned char *buf, size_t len);

#endif
