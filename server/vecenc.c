/*
 * vecenc.c -- encodings of the result vectors (see vecenc.h).
 *
 * Encode: raw form -> shuffle -> ZSTD_compress2 at the codec's level; kept
 * only if smaller than the raw form. Decode: the frame's declared content
 * size must be exactly 8 m (w) or a multiple of 12 no larger than 12 m
 * (lam) before anything is allocated or decompressed, so a damaged BLOB can
 * neither overrun a buffer nor ask for an absurd allocation.
 */
#include "vecenc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vecenc.c stores vectors as host doubles: little-endian hosts only"
#endif

#define LAM_ENTRY 12 /* int32 index + double value */

struct gsd_vecenc {
    ZSTD_CCtx *cctx;
    ZSTD_DCtx *dctx;
    int level;
    unsigned char *raw[2], *out[2], *tmp; /* raw form, encoded BLOB (per vector), scratch */
    size_t raw_cap[2], out_cap[2], tmp_cap;
};

gsd_vecenc *gsd_vecenc_new(void)
{
    gsd_vecenc *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cctx = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    c->level = GSD_VEC_LEVEL;
    if (!c->cctx || !c->dctx) {
        gsd_vecenc_free(c);
        return NULL;
    }
    return c;
}

void gsd_vecenc_free(gsd_vecenc *c)
{
    if (!c)
        return;
    ZSTD_freeCCtx(c->cctx); /* NULL is a no-op */
    ZSTD_freeDCtx(c->dctx);
    for (int k = 0; k < 2; k++) {
        free(c->raw[k]);
        free(c->out[k]);
    }
    free(c->tmp);
    free(c);
}

void gsd_vecenc_set_level(gsd_vecenc *c, int level)
{
    c->level = level;
}

/* Make *p (capacity *cap) hold need bytes; 0 when out of memory (*p kept). */
static int reserve(unsigned char **p, size_t *cap, size_t need)
{
    if (need <= *cap && *p)
        return 1;
    size_t n = need > 4096 ? need : 4096;
    unsigned char *q = realloc(*p, n);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* dst[b * n + i] = src[i * size + b] (and back with unshuffle). */
static void shuffle(unsigned char *dst, const unsigned char *src, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < size; b++)
            dst[b * n + i] = src[i * size + b];
}

static void unshuffle_scalar(unsigned char *dst, const unsigned char *src, size_t i0, size_t n,
                             size_t size)
{
    for (size_t i = i0; i < n; i++)
        for (size_t b = 0; b < size; b++)
            dst[i * size + b] = src[b * n + i];
}

#ifdef __SSE2__
/* unshuffle of 8-byte elements (w), 16 elements per step: the 8 x 16 bytes
 * of their byte planes transposed by three rounds of interleaves (bytes,
 * pairs, quads). 1.3-1.9 us against 5-6 us for the byte loop at m = 2,603. */
static void unshuffle8(unsigned char *dst, const unsigned char *src, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i r[8];
        for (size_t b = 0; b < 8; b++)
            r[b] = _mm_loadu_si128((const __m128i *)(const void *)(src + b * n + i));
        const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpackhi_epi8(r[0], r[1]);
        const __m128i a2 = _mm_unpacklo_epi8(r[2], r[3]), a3 = _mm_unpackhi_epi8(r[2], r[3]);
        const __m128i a4 = _mm_unpacklo_epi8(r[4], r[5]), a5 = _mm_unpackhi_epi8(r[4], r[5]);
        const __m128i a6 = _mm_unpacklo_epi8(r[6], r[7]), a7 = _mm_unpackhi_epi8(r[6], r[7]);
        const __m128i b0 = _mm_unpacklo_epi16(a0, a2), b1 = _mm_unpackhi_epi16(a0, a2);
        const __m128i b2 = _mm_unpacklo_epi16(a1, a3), b3 = _mm_unpackhi_epi16(a1, a3);
        const __m128i b4 = _mm_unpacklo_epi16(a4, a6), b5 = _mm_unpackhi_epi16(a4, a6);
        const __m128i b6 = _mm_unpacklo_epi16(a5, a7), b7 = _mm_unpackhi_epi16(a5, a7);
        __m128i *o = (__m128i *)(void *)(dst + i * 8); /* elements i, i + 1 per store */
        _mm_storeu_si128(o + 0, _mm_unpacklo_epi32(b0, b4));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi32(b0, b4));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi32(b1, b5));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi32(b1, b5));
        _mm_storeu_si128(o + 4, _mm_unpacklo_epi32(b2, b6));
        _mm_storeu_si128(o + 5, _mm_unpackhi_epi32(b2, b6));
        _mm_storeu_si128(o + 6, _mm_unpacklo_epi32(b3, b7));
        _mm_storeu_si128(o + 7, _mm_unpackhi_epi32(b3, b7));
    }
    unshuffle_scalar(dst, src, i, n, 8);
}
#endif

static void unshuffle(unsigned char *dst, const unsigned char *src, size_t n, size_t size)
{
#ifdef __SSE2__
    if (size == 8) {
        unshuffle8(dst, src, n);
        return;
    }
#endif
    unshuffle_scalar(dst, src, 0, n, size);
}

/* The raw form of v in c->raw[which]; its length in *len. */
static gs_err raw_form(gsd_vecenc *c, int which, const double *v, int m, size_t *len,
                       gs_error *err)
{
    size_t cap = (size_t)m * (which == GSD_VEC_W ? 8 : LAM_ENTRY);
    if (!reserve(&c->raw[which], &c->raw_cap[which], cap + 1))
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory (%s)", which ? "lam" : "w");
    unsigned char *p = c->raw[which];
    if (which == GSD_VEC_W) {
        memcpy(p, v, cap);
        *len = cap;
        return GS_OK;
    }
    for (int j = 0; j < m; j++) {
        uint64_t bits;
        memcpy(&bits, &v[j], 8);
        if (!bits)
            continue;
        int32_t idx = j;
        memcpy(p, &idx, 4);
        memcpy(p + 4, &v[j], 8);
        p += LAM_ENTRY;
    }
    *len = (size_t)(p - c->raw[which]);
    return GS_OK;
}

gs_err gsd_vecenc_encode(gsd_vecenc *c, int which, const double *v, int m, const void **p,
                         size_t *len, int *enc, gs_error *err)
{
    size_t n = 0;
    gs_err e = raw_form(c, which, v, m, &n, err);
    if (e)
        return e;
    *p = c->raw[which];
    *len = n;
    *enc = GSD_VEC_RAW;
    const size_t size = which == GSD_VEC_W ? 8 : LAM_ENTRY;
    const size_t bound = ZSTD_compressBound(n);
    if (n < 64) /* a frame header and its block headers outweigh any gain */
        return GS_OK;
    if (!reserve(&c->tmp, &c->tmp_cap, n) || !reserve(&c->out[which], &c->out_cap[which], bound))
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory (%s)", which ? "lam" : "w");
    shuffle(c->tmp, c->raw[which], n / size, size);
    size_t z = ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, c->level);
    if (!ZSTD_isError(z))
        z = ZSTD_compress2(c->cctx, c->out[which], bound, c->tmp, n);
    if (ZSTD_isError(z))
        return gs_errorf(err, GS_ERR_IO, which ? "lam" : "w", "zstd compression: %s",
                         ZSTD_getErrorName(z));
    if (z < n) {
        *p = c->out[which];
        *len = z;
        *enc = GSD_VEC_ZSTD_SHUFFLE;
    }
    return GS_OK;
}

static gs_err corrupt(const char *id, int which, const char *why, gs_error *err)
{
    const char *name = which == GSD_VEC_W ? "w" : "lam";
    return gs_errorf(err, GS_ERR_FORMAT, name, "stored result '%.40s': corrupt %s (%s)", id, name,
                     why);
}

/* Raw form (p, len) into dst. */
static gs_err from_raw(int which, const unsigned char *p, size_t len, int m, double *dst,
                       const char *id, gs_error *err)
{
    if (which == GSD_VEC_W) {
        if (len != (size_t)m * 8)
            return corrupt(id, which, "length is not 8 m bytes", err);
        if (len)
            memcpy(dst, p, len);
        return GS_OK;
    }
    if (len % LAM_ENTRY)
        return corrupt(id, which, "length is not a multiple of 12", err);
    memset(dst, 0, (size_t)m * sizeof *dst);
    int32_t prev = -1;
    for (size_t k = 0; k < len / LAM_ENTRY; k++) {
        int32_t idx;
        memcpy(&idx, p + k * LAM_ENTRY, 4);
        if (idx <= prev || idx >= m)
            return corrupt(id, which, "index out of order or range", err);
        memcpy(&dst[idx], p + k * LAM_ENTRY + 4, 8);
        prev = idx;
    }
    return GS_OK;
}

gs_err gsd_vecenc_decode(gsd_vecenc *c, int which, int enc, const void *p, size_t len, int m,
                         double *dst, const char *id, gs_error *err)
{
    if (enc == GSD_VEC_RAW)
        return from_raw(which, p, len, m, dst, id, err);
    if (enc != GSD_VEC_ZSTD_SHUFFLE)
        return corrupt(id, which, "unknown encoding", err);
    const size_t size = which == GSD_VEC_W ? 8 : LAM_ENTRY;
    const size_t max = (size_t)m * size;
    unsigned long long n = ZSTD_getFrameContentSize(p, len);
    if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n > max || n % size)
        return corrupt(id, which, "not a zstd frame of the vector's size", err);
    if (!reserve(&c->tmp, &c->tmp_cap, (size_t)n + 1) ||
        !reserve(&c->raw[which], &c->raw_cap[which], (size_t)n + 1))
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory (%s)", which ? "lam" : "w");
    size_t got = ZSTD_decompressDCtx(c->dctx, c->tmp, (size_t)n, p, len);
    if (ZSTD_isError(got) || got != n)
        return corrupt(id, which, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short frame",
                       err);
    unshuffle(c->raw[which], c->tmp, (size_t)n / size, size);
    return from_raw(which, c->raw[which], (size_t)n, m, dst, id, err);
}
