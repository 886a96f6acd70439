/*
 * npyio.h -- the .npy files of the `gapsim` command, on top of core/npy.h:
 * one gap vector out of a k x m cloud (without reading the whole cloud when
 * it is C order), a local shape check of a cloud before uploading it, and
 * writing a vector. Errors print "PROG: PATH: message" and return GC_EFILE.
 */
#ifndef GC_NPYIO_H
#define GC_NPYIO_H

#include <stddef.h>

/* Row `row` of the k x m (or 1-D m) array at path into a malloc'ed *g of
 * *m values; *k the number of rows. A row past the end is a usage error
 * (GC_EUSAGE, message names --row). */
int gc_npy_read_row(const char *prog, const char *path, long row, double **g, int *m,
                    size_t *k);

/* Header check of a cloud file: *k rows of *m values (a 1-D array is 1 x m). */
int gc_npy_shape(const char *prog, const char *path, size_t *k, size_t *m);

/* Write v[0..n) as a 1-D '<f8' .npy at path (atomically). */
int gc_npy_write_vec(const char *prog, const char *path, const double *v, size_t n);

#endif
