/*
 * vecenc.h -- the on-disk encodings of the result vectors w and lam.
 *
 * Owns the bytes of the results table's w and lam BLOBs and of their
 * encoding columns w_enc / lam_enc (schema/004_result_encoding.sql):
 *
 *   raw form   w: m little-endian doubles (8 m bytes); lam: packed
 *              (int32 index, double value) little-endian pairs, 12 bytes
 *              each, for the entries whose bit pattern is not +0.0, indices
 *              strictly increasing (001_init.sql).
 *   enc 0      the raw form as it is (every database before migration 4, and
 *              vectors that compression does not shrink).
 *   enc 1      one zstd frame (with its content size) holding the raw form
 *              with its bytes shuffled: byte b of element i at b * n + i
 *              (n elements of 8 bytes for w, 12 for lam), so that the sign /
 *              exponent bytes and the high index bytes, which vary little,
 *              are contiguous.
 *
 * Both are lossless: the decoded doubles are the stored bit patterns (-0.0,
 * NaN payloads, denormals, infinities). A codec holds the zstd contexts and
 * scratch buffers of one store connection: not thread-safe, the store's
 * mutex serializes it.
 *
 * Errors: GS_ERR_NOMEM; GS_ERR_FORMAT naming the vector ("w" / "lam") when a
 * stored BLOB does not decode to a valid vector of m entries.
 */
#ifndef GSD_VECENC_H
#define GSD_VECENC_H

#include <stddef.h>

#include "gs_error.h"

enum { GSD_VEC_RAW = 0, GSD_VEC_ZSTD_SHUFFLE = 1 };
enum { GSD_VEC_W = 0, GSD_VEC_LAM = 1 };

typedef struct gsd_vecenc gsd_vecenc;

gsd_vecenc *gsd_vecenc_new(void); /* NULL when out of memory */
void gsd_vecenc_free(gsd_vecenc *c);
/* zstd level of new encodings (default GSD_VEC_LEVEL; tests measure others). */
void gsd_vecenc_set_level(gsd_vecenc *c, int level);
#define GSD_VEC_LEVEL 1

/* Encode vector `which` (m doubles) for storage: *p / *len / *enc describe
 * the BLOB, valid until the next encode of the same `which` on this codec. */
gs_err gsd_vecenc_encode(gsd_vecenc *c, int which, const double *v, int m, const void **p,
                         size_t *len, int *enc, gs_error *err);
/* Decode a stored BLOB (p, len, enc) of vector `which` into dst (m doubles;
 * lam's absent entries become +0.0). id names the result in errors. */
gs_err gsd_vecenc_decode(gsd_vecenc *c, int which, int enc, const void *p, size_t len, int m,
                         double *dst, const char *id, gs_error *err);

#endif
