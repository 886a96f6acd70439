/*
 * npyio.c -- .npy helpers of the `gapsim` command (see npyio.h).
 */
#include "npyio.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "npy.h"
#include "outfile.h"

/* Largest array the command reads whole (a Fortran-order cloud). */
#define GC_NPY_MAX_ELEMS ((size_t)1 << 31)

int gc_npy_read_row(const char *prog, const char *path, long row, double **g, int *m, size_t *k)
{
    gs_npy_file f = {.fd = -1};
    gs_error e;
    *g = NULL;
    if (gs_npy_open(path, GC_NPY_MAX_ELEMS, &f, &e)) {
        gs_file_error_context(&e, path); /* "PATH: " unless the message names it */
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        gs_npy_close(&f);
        return GC_EFILE;
    }
    size_t rows = f.info.ndim == 1 ? 1 : f.info.shape[0];
    size_t cols = f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1];
    *k = rows;
    if (cols == 0 || cols > 100000000) {
        fprintf(stderr, "%s: %s: %zu x %zu is not a gap array\n", prog, path, rows, cols);
        gs_npy_close(&f);
        return GC_EFILE;
    }
    if (row < 0 || (size_t)row >= rows) {
        fprintf(stderr, "%s: --row %ld is outside %s, which has %zu row%s (see %s --help)\n",
                prog, row, path, rows, rows == 1 ? "" : "s", prog);
        gs_npy_close(&f);
        return GC_EUSAGE;
    }
    double *v = malloc(sizeof(double) * cols);
    int rc = v ? GC_OK : GC_EFILE;
    if (v && (!f.info.fortran_order || rows == 1)) {
        size_t bytes = sizeof(double) * cols;
        off_t off = (off_t)(f.data_offset + (size_t)row * bytes);
        if (pread(f.fd, v, bytes, off) != (ssize_t)bytes) {
            fprintf(stderr, "%s: %s: cannot read row %ld\n", prog, path, row);
            rc = GC_EFILE;
        }
    } else if (v) {
        double *all = malloc(sizeof(double) * rows * cols);
        if (!all || gs_npy_read_data(&f, all, GS_NPY_ROW_MAJOR, &e)) {
            if (all)
                gs_file_error_context(&e, path);
            fprintf(stderr, "%s: %s\n", prog, all ? e.msg : "out of memory");
            rc = GC_EFILE;
        } else {
            for (size_t j = 0; j < cols; j++)
                v[j] = all[(size_t)row * cols + j];
        }
        free(all);
    } else {
        fprintf(stderr, "%s: out of memory\n", prog);
    }
    gs_npy_close(&f);
    if (rc) {
        free(v);
        return rc;
    }
    *g = v;
    *m = (int)cols;
    return GC_OK;
}

int gc_npy_shape(const char *prog, const char *path, size_t *k, size_t *m)
{
    gs_npy_file f = {.fd = -1};
    gs_error e;
    /* the element limit is the server's business: only the header is read */
    if (gs_npy_open(path, (size_t)-1 / 16, &f, &e)) {
        gs_file_error_context(&e, path);
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        gs_npy_close(&f);
        return GC_EFILE;
    }
    *k = f.info.ndim == 1 ? 1 : f.info.shape[0];
    *m = f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1];
    gs_npy_close(&f);
    return GC_OK;
}

int gc_npy_write_vec(const char *prog, const char *path, const double *v, size_t n)
{
    gs_error e;
    size_t shape[1] = {n};
    gs_wfile wf = {0};
    int rc = gc_out_open(prog, path, &wf); /* a signal removes its temporary file */
    if (rc != GC_OK)
        return rc;
    if (gs_npy_write_wfile(&wf, v, 1, shape, GS_NPY_ROW_MAJOR, &e)) {
        gs_file_error_context(&e, path);
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        gc_out_abort(&wf);
        return GC_EFILE;
    }
    return gc_out_commit(prog, &wf);
}
