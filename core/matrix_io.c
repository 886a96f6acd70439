/*
 * matrix_io.c -- the format table, format choice (explicit or certain sniff)
 * and the adapters of the two dense-first formats (.npy, Matrix Market).
 */
#include "matrix_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "mmio.h"
#include "npy.h"

static int sniff_npy(const unsigned char *b, size_t len)
{
    return len >= 6 && memcmp(b, "\x93NUMPY", 6) == 0;
}

static int sniff_zip(const unsigned char *b, size_t len)
{
    return len >= 4 && b[0] == 'P' && b[1] == 'K' &&
           ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6));
}

static int sniff_mm(const unsigned char *b, size_t len)
{
    static const char banner[] = "%%MatrixMarket";
    const size_t n = sizeof banner - 1;
    if (len < n)
        return 0;
    for (size_t k = 0; k < n; k++) {
        char c = (char)b[k];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        char w = banner[k] >= 'A' && banner[k] <= 'Z' ? (char)(banner[k] - 'A' + 'a') : banner[k];
        if (c != w)
            return 0;
    }
    return 1;
}

const gs_matfmt gs_matfmts[] = {
    {"npy", "NumPy .npy float64 n x n array", sniff_npy, gs_read_npy_matrix},
    {"matrix-market", "Matrix Market array or coordinate (%%MatrixMarket banner)", sniff_mm,
     gs_read_mm_matrix},
    {"scipy-npz", "scipy.sparse.save_npz file (csr, csc or coo)", sniff_zip, gs_read_npz},
    {"abaqus-user-element", "Abaqus *USER ELEMENT + *MATRIX, TYPE=STIFFNESS (substructure "
     "matrix output, OUTPUT FILE=USER DEFINED)", gs_sniff_abaqus_uel, gs_read_abaqus_uel},
    {"abaqus-matrix-input", "Abaqus *MATRIX OUTPUT, FORMAT=MATRIX INPUT (node, dof, node, dof, "
     "value)", gs_sniff_abaqus_matrix_input, gs_read_abaqus_matrix_input},
    {"abaqus-coordinate", "Abaqus *MATRIX OUTPUT, FORMAT=COORDINATE (row, col, value)",
     gs_sniff_abaqus_coordinate, gs_read_abaqus_coordinate},
    {"nastran-dmig", "Nastran DMIG entries (small, large or free field)", gs_sniff_dmig,
     gs_read_dmig},
    {NULL, NULL, NULL, NULL}};

const gs_matfmt *gs_matfmt_find(const char *name)
{
    for (const gs_matfmt *f = gs_matfmts; name && f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

const gs_matfmt *gs_matfmt_sniff(const unsigned char *buf, size_t len)
{
    const gs_matfmt *hit = NULL;
    for (const gs_matfmt *f = gs_matfmts; f->name; f++)
        if (f->sniff(buf, len)) {
            if (hit)
                return NULL; /* two candidates: ambiguous */
            hit = f;
        }
    return hit;
}

const char *gs_matfmt_names(void)
{
    static const char names[] = "npy, matrix-market, scipy-npz, abaqus-user-element, "
                                "abaqus-matrix-input, abaqus-coordinate, nastran-dmig";
    return names;
}

gs_err gs_matrix_read_mem(const void *buf, size_t len, const char *format,
                          const gs_matread_opts *o, gs_spmat *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    const gs_matfmt *f;
    if (format) {
        if (!(f = gs_matfmt_find(format))) {
            char show[40];
            snprintf(show, sizeof show, "%.32s", format);
            for (char *c = show; *c; c++)
                if (*c < 0x20 || *c > 0x7e)
                    *c = '?';
            return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "unknown matrix format '%s' (known: %s)",
                             show, gs_matfmt_names());
        }
    } else if (!(f = gs_matfmt_sniff(buf, len))) {
        return gs_errorf(err, GS_ERR_FORMAT, "", "cannot tell the matrix format from the "
                         "content: name it with \"format\" (one of %s)", gs_matfmt_names());
    }
    return f->read(buf, len, o, out, err);
}

gs_err gs_matrix_read_file(const char *path, const char *format, const gs_matread_opts *o,
                           gs_spmat *out, gs_error *err)
{
    char *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    gs_err rc = gs_file_read_all(path, GS_MATRIX_MAX_FILE_BYTES, &buf, &len, err);
    if (rc != GS_OK)
        return rc;
    rc = gs_matrix_read_mem(buf, len, format, o, out, err);
    free(buf);
    if (rc != GS_OK)
        gs_file_error_context(err, path);
    return rc;
}

/* A dense row-major n x n array into *out, with the order limit. */
static gs_err dense_square(double *d, size_t r, size_t c, const gs_matread_opts *o, gs_spmat *out,
                           gs_error *err)
{
    gs_err rc;
    if (r != c)
        rc = gs_errorf(err, GS_ERR_DIM, "", "a stiffness matrix is square, got %zu x %zu", r, c);
    else if (r > o->max_n)
        rc = gs_errorf(err, GS_ERR_LIMIT, "", "order %zu exceeds the limit of %zu", r, o->max_n);
    else
        rc = gs_spmat_from_dense(d, (int64_t)r, out, err);
    free(d);
    return rc;
}

gs_err gs_read_npy_matrix(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                          gs_spmat *out, gs_error *err)
{
    double *d;
    gs_npy_info info;
    gs_err rc = gs_npy_read_mem(buf, len, o->max_nnz, &d, &info, err);
    if (rc != GS_OK)
        return rc;
    if (info.ndim != 2) {
        free(d);
        return gs_errorf(err, GS_ERR_DIM, "", "a stiffness matrix is 2-D, got a 1-D array of %zu",
                         info.shape[0]);
    }
    return dense_square(d, info.shape[0], info.shape[1], o, out, err);
}

gs_err gs_read_mm_matrix(const unsigned char *buf, size_t len, const gs_matread_opts *o,
                         gs_spmat *out, gs_error *err)
{
    return gs_mm_read_sparse((const char *)buf, len, o->max_n, o->max_nnz, out, err);
}
