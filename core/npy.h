/*
 * npy.h -- NumPy .npy files of float64 (stiffness blocks, load vectors, gap
 * clouds, results).
 *
 * Owns: the .npy header (magic "\x93NUMPY", versions 1.0, 2.0 and 3.0, the
 * python-dict header with 'descr', 'fortran_order' and 'shape'), reading into
 * row-major (C order) or column-major memory, and writing.
 *
 * Reader contract (any bytes are safe to feed it):
 *   - accepted: descr '<f8' (little-endian IEEE float64) only; 1-D or 2-D
 *     shapes; C or Fortran order (always converted to the order asked for);
 *     keys in any order, any whitespace, trailing comma, (3,) (2, 4) (3L,).
 *   - GS_ERR_FORMAT: bad magic, truncated header, malformed dict, missing,
 *     unknown or repeated key, truncated data, bytes after the data.
 *   - GS_ERR_UNSUPPORTED: other dtypes ('>f8' big endian, '<f4', '<i8',
 *     complex, structured, object), ndim 0 or > 2, unknown version.
 *   - GS_ERR_LIMIT: header dict over GS_NPY_MAX_HEADER bytes, element count
 *     over the caller's max_elems (checked before anything is allocated) or
 *     a byte size that does not fit in size_t.
 *   - NaN and Inf values are read as they are: callers validate.
 *   - Empty arrays (a zero dimension) are accepted; *data is then a valid
 *     1-element allocation.
 * Writer contract: version 1.0 (2.0 only if the header needs it), '<f8',
 * header padded with spaces and ended by '\n' so the data starts at a
 * multiple of 64 bytes; files are written atomically (tmp + rename).
 * All functions are thread-safe (no shared state).
 */
#ifndef GS_NPY_H
#define GS_NPY_H

#include <stddef.h>

#include "fileio.h"
#include "gs_error.h"

/* Largest header dict the reader accepts (numpy writes < 128 bytes for f8). */
#define GS_NPY_MAX_HEADER 65536
/* A buffer of this many bytes always holds a header gs_npy_write_header builds. */
#define GS_NPY_HEADER_CAP 256

typedef struct {
    int ndim;         /* 1 or 2 */
    size_t shape[2];  /* shape[1] == 1 when ndim == 1 */
    int fortran_order;/* as stored in the file (data returned is converted) */
} gs_npy_info;

/* Memory order of the caller's destination array. */
typedef enum { GS_NPY_ROW_MAJOR = 0, GS_NPY_COL_MAJOR = 1 } gs_npy_order;

/* Parse magic, version, header length and dict of buf[0..len). On success
 * *data_offset is where the data starts; info->shape's product times 8 is
 * guaranteed to fit in size_t. buf need not hold the data. */
gs_err gs_npy_parse_header(const void *buf, size_t len, gs_npy_info *info,
                           size_t *data_offset, gs_error *err);

/* The header of an array of any dtype (for readers of other element types,
 * such as the integer index arrays of a SciPy .npz): ndim 0..2 (unused
 * dims are 1), the dtype text as written ('<i4', '|S3' ...), the order, the
 * element count (count * 64 fits in size_t) and where the data start.
 * GS_ERR_FORMAT / GS_ERR_LIMIT as gs_npy_parse_header; ndim > 2 is
 * GS_ERR_UNSUPPORTED. The caller checks descr and the data size. */
typedef struct {
    char descr[32];
    int ndim;
    size_t shape[2];
    int fortran_order;
    size_t count;
    size_t data_offset;
} gs_npy_any;
gs_err gs_npy_parse_any(const void *buf, size_t len, gs_npy_any *h, gs_error *err);

/* Decode a whole .npy image. *data: malloc'ed, row-major, caller frees. */
gs_err gs_npy_read_mem(const void *buf, size_t len, size_t max_elems, double **data,
                       gs_npy_info *info, gs_error *err);

/* Read a .npy file: header first, then exactly the data it announces (the
 * file size must match, checked with fstat before allocating). */
gs_err gs_npy_read_file(const char *path, size_t max_elems, double **data, gs_npy_info *info,
                        gs_error *err);

/* Two-step reading for callers that check the shape before allocating:
 * gs_npy_open (parses the header, checks the element count against max_elems
 * and the file size against the header), then gs_npy_read_data into a buffer
 * of info.shape[0] * info.shape[1] doubles in the order asked for, then
 * gs_npy_close (always, also after errors; a zeroed struct is fine). */
typedef struct {
    int fd;
    gs_npy_info info;
    size_t data_offset;
    char *path;
} gs_npy_file;
gs_err gs_npy_open(const char *path, size_t max_elems, gs_npy_file *f, gs_error *err);
gs_err gs_npy_read_data(gs_npy_file *f, double *dst, gs_npy_order order, gs_error *err);
void gs_npy_close(gs_npy_file *f);

/* Build a v1.0 (v2.0 if needed) '<f8' C-order header into buf[0..cap); *len
 * is its size, a multiple of 64 (the data follows it). ndim 1 or 2. */
gs_err gs_npy_write_header(void *buf, size_t cap, int ndim, const size_t *shape, size_t *len,
                           gs_error *err);

/* Write data (row-major, shape[0] x shape[1] or shape[0]) to path atomically. */
gs_err gs_npy_write_file(const char *path, const double *data, int ndim, const size_t *shape,
                         gs_error *err);
/* Same, data in the given memory order (GS_NPY_COL_MAJOR writes a
 * fortran_order file: no transposition needed for column-major arrays). */
gs_err gs_npy_write_file_order(const char *path, const double *data, int ndim,
                               const size_t *shape, gs_npy_order order, gs_error *err);
/* The same file into a gs_wfile the caller opened (and commits or aborts):
 * for programs that open their outputs before a long computation, so that
 * an unwritable path is found before the work, not after it. */
gs_err gs_npy_write_wfile(gs_wfile *wf, const double *data, int ndim, const size_t *shape,
                          gs_npy_order order, gs_error *err);

#endif
