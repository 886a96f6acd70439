/*
 * fuzz_vecenc.c -- fuzz target for the stored form of the result vectors
 * (server/vecenc.h: raw w / lam BLOBs and their zstd + byte-shuffle frames),
 * the bytes a damaged or foreign database hands to gapsimd.
 * Input: byte 0 flags (bit 0 lam instead of w, bits 1-2 the encoding: raw,
 * zstd, an unknown code, raw; bit 3 encode mode), bytes 1-2 m - 1 (little
 * endian, below FZ_MAX_M), the rest the BLOB.
 * Properties:
 *   - decode: no crash; a refusal is GS_ERR_FORMAT naming the vector with a
 *     message (or GS_ERR_NOMEM); an accepted BLOB gives m doubles that
 *     encode and decode again to the same bits (raw and zstd alike), and a
 *     raw w BLOB is accepted only at exactly 8 m bytes;
 *   - encode mode: the BLOB's bytes as doubles (any bit patterns: NaN
 *     payloads, -0.0, denormals) encode as w and as lam and decode to the
 *     same bits.
 */
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"
#include "vecenc.h"

const char *const gs_fuzz_target = "vecenc";
const char *const gs_fuzz_dict[] = {"\x28\xb5\x2f\xfd", "\x00\x00\x00\x00\x00\x00\x00\x80",
                                    "\x00\x00\x00\x00\x00\x00\xf8\x7f", "\x01\x00\x00\x00",
                                    "\xff\xff\xff\x7f", "\x00\x00\x00\x00", NULL};

#define FZ_MAX_M 1024

static gsd_vecenc *codec(void)
{
    static gsd_vecenc *c; /* one codec for the run, as a store connection keeps one */
    if (!c) {
        c = gsd_vecenc_new();
        GS_FUZZ_ASSERT(c != NULL);
    }
    return c;
}

/* v (m doubles) encoded as `which` decodes to the same bits. */
static void check_roundtrip(int which, const double *v, int m)
{
    gsd_vecenc *c = codec();
    const void *p;
    size_t len;
    int enc;
    gs_error e;
    GS_FUZZ_ASSERT(gsd_vecenc_encode(c, which, v, m, &p, &len, &enc, &e) == GS_OK);
    GS_FUZZ_ASSERT(enc == GSD_VEC_RAW || enc == GSD_VEC_ZSTD_SHUFFLE);
    double *back = malloc((size_t)m * sizeof *back);
    GS_FUZZ_ASSERT(back != NULL);
    GS_FUZZ_ASSERT(gsd_vecenc_decode(c, which, enc, p, len, m, back, "r_fuzz", &e) == GS_OK);
    GS_FUZZ_ASSERT(memcmp(back, v, (size_t)m * sizeof *back) == 0);
    free(back);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    const int which = data[0] & 1 ? GSD_VEC_LAM : GSD_VEC_W;
    static const int encs[4] = {GSD_VEC_RAW, GSD_VEC_ZSTD_SHUFFLE, 7, GSD_VEC_RAW};
    const int enc = encs[(data[0] >> 1) & 3];
    const uint8_t *blob = data + 3;
    const size_t len = size - 3;
    if (data[0] & 8) { /* encode mode */
        int m = (int)(len / sizeof(double));
        if (m == 0)
            return 0;
        double *v = malloc((size_t)m * sizeof *v);
        GS_FUZZ_ASSERT(v != NULL);
        memcpy(v, blob, (size_t)m * sizeof *v);
        check_roundtrip(GSD_VEC_W, v, m);
        check_roundtrip(GSD_VEC_LAM, v, m); /* +0.0 is "absent", other bits are kept */
        free(v);
        return 1;
    }
    const int m = 1 + (int)((data[1] | (unsigned)data[2] << 8) % FZ_MAX_M);
    double *v = malloc((size_t)m * sizeof *v);
    GS_FUZZ_ASSERT(v != NULL);
    gs_error e;
    memset(&e, 0, sizeof e);
    gs_err rc = gsd_vecenc_decode(codec(), which, enc, len ? blob : NULL, len, m, v, "r_fuzz", &e);
    if (rc != GS_OK) {
        GS_FUZZ_ASSERT(rc == GS_ERR_FORMAT || rc == GS_ERR_NOMEM);
        GS_FUZZ_ASSERT(e.code == rc && e.msg[0] != '\0');
        if (rc == GS_ERR_FORMAT)
            GS_FUZZ_ASSERT(!strcmp(e.field, which == GSD_VEC_LAM ? "lam" : "w"));
        free(v);
        return 0;
    }
    GS_FUZZ_ASSERT(enc != 7);
    if (which == GSD_VEC_W && enc == GSD_VEC_RAW)
        GS_FUZZ_ASSERT(len == (size_t)m * sizeof(double));
    check_roundtrip(which, v, m);
    free(v);
    return 1;
}
