/*
 * source.c -- gap sources of the runner: .npy file read row by row (a
 * Fortran-order file read whole), memory (runner.h); the first K gaps of a
 * source (--limit K). Cost per gap: one pread of m doubles and the O(m)
 * finiteness check, or one copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "numarg.h"
#include "runner.h"

typedef struct {
    int fd, m, k;
    size_t data_off;
    char *path;
    double *G; /* the whole cloud, C order, when the file is in Fortran order */
} npy_src;

/* A gap with a NaN or Inf cannot be solved: name the file, the row and the pair. */
static gs_err check_finite(const npy_src *s, int i, const double *g, gs_error *err)
{
    for (int j = 0; j < s->m; j++)
        if (!isfinite(g[j])) {
            char field[48];
            snprintf(field, sizeof field, "gaps[%d][%d]", i, j);
            return gs_errorf(err, GS_ERR_NONFINITE, field, "%s: gap %d, pair %d (rows and "
                             "columns counted from 0) is %g, not a finite number", s->path, i,
                             j, g[j]);
        }
    return GS_OK;
}

static gs_err npy_read(void *ctx, int i, double *g, gs_error *err)
{
    npy_src *s = ctx;
    size_t bytes = sizeof(double) * (size_t)s->m;
    if (s->G) {
        if (i < 0 || i >= s->k) /* as a read past the end of the file */
            return gs_errorf(err, GS_ERR_IO, "gaps", "%s: cannot read gap %d: the file holds %d",
                             s->path, i, s->k);
        memcpy(g, s->G + (size_t)i * (size_t)s->m, bytes);
        return check_finite(s, i, g, err);
    }
    off_t off = (off_t)(s->data_off + (size_t)i * bytes);
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = pread(s->fd, (char *)g + got, bytes - got, off + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return gs_errorf(err, GS_ERR_IO, "gaps", "%s: cannot read gap %d: %s", s->path, i,
                             n < 0 ? strerror(errno) : "file truncated");
        got += (size_t)n;
    }
    return check_finite(s, i, g, err);
}

static void npy_close(void *ctx)
{
    npy_src *s = ctx;
    if (s->fd >= 0)
        close(s->fd);
    free(s->G);
    free(s->path);
    free(s);
}

gs_err gs_gap_source_npy(const char *path, gs_gap_source *src, gs_error *err)
{
    memset(src, 0, sizeof *src);
    gs_npy_file f = {.fd = -1};
    gs_err rc = gs_npy_open(path, (size_t)-1 / 8, &f, err);
    size_t rows = f.info.ndim == 1 ? 1 : f.info.shape[0];
    size_t cols = f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1];
    if (rc == GS_OK && (rows > (size_t)0x7fffffff || cols > (size_t)0x7fffffff || cols == 0))
        rc = gs_errorf(err, GS_ERR_FORMAT, "gaps", "%s: not a k x m array of gaps (%zu x %zu)",
                       path, rows, cols);
    npy_src *s = NULL;
    if (rc == GS_OK) {
        s = calloc(1, sizeof *s);
        if (s) {
            s->fd = -1;
            s->path = strdup(path);
        }
        if (!s || !s->path)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    /* Fortran order (numpy's G.T of an m x k array): a row is strided over
     * the file, so the cloud is read whole and transposed once (O(k m)). */
    if (rc == GS_OK && f.info.fortran_order && rows > 1) {
        if (!(s->G = malloc(sizeof(double) * rows * cols)))
            rc = gs_errorf(err, GS_ERR_NOMEM, "gaps", "%s: no memory to read a Fortran-order "
                           "cloud of %zu x %zu whole; save it in C order "
                           "(numpy.ascontiguousarray) to stream it row by row", path, rows, cols);
        else
            rc = gs_npy_read_data(&f, s->G, GS_NPY_ROW_MAJOR, err);
    } else if (rc == GS_OK && (s->fd = dup(f.fd)) < 0) {
        rc = gs_errorf(err, GS_ERR_IO, "gaps", "%s: %s", path, strerror(errno));
    }
    gs_npy_close(&f);
    if (rc) {
        if (s)
            npy_close(s);
        return rc;
    }
    s->m = (int)cols;
    s->k = (int)rows;
    s->data_off = f.data_offset;
    *src = (gs_gap_source){.k = (int)rows, .m = (int)cols, .read = npy_read, .close = npy_close,
                           .ctx = s};
    return GS_OK;
}

gs_err gs_gap_source_limit(gs_gap_source *src, long limit, const char *path, gs_error *err)
{
    if (limit >= 1 && limit < src->k)
        src->k = (int)limit;
    if (src->k < 1)
        return gs_errorf(err, GS_ERR_INVALID, "gaps", "%s holds no gap vector", path);
    return GS_OK;
}

int gs_gap_limit_parse(const char *s, long *k)
{
    return gs_parse_long(s, 1, INT_MAX, k);
}

typedef struct {
    const double *G;
    int m;
} mem_src;

static gs_err mem_read(void *ctx, int i, double *g, gs_error *err)
{
    const mem_src *s = ctx;
    memcpy(g, s->G + (size_t)i * (size_t)s->m, sizeof(double) * (size_t)s->m);
    return GS_OK;
}

gs_err gs_gap_source_mem(const double *G, int k, int m, gs_gap_source *src, gs_error *err)
{
    mem_src *s = malloc(sizeof *s);
    if (!s)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    *s = (mem_src){.G = G, .m = m};
    *src = (gs_gap_source){.k = k, .m = m, .read = mem_read, .close = free, .ctx = s};
    return GS_OK;
}

void gs_gap_source_close(gs_gap_source *src)
{
    if (src->close)
        src->close(src->ctx);
    memset(src, 0, sizeof *src);
}
