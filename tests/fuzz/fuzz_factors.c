/*
 * fuzz_factors.c -- fuzz target for the saved precomputation (core/precomp_io.h,
 * an assembly's factors.bin and gapsim-mpi's --factors file): the bytes a
 * damaged data directory or a file of another model hands to the loader.
 * The file is made from the input and the valid file of a fixed two-part
 * model (tm_twin_chains, 1,040 bytes):
 *   byte 0 bit 0 set: the rest of the input is the whole file;
 *          bit 0 clear: the valid file, cut or extended (0x5a bytes) to the
 *          length in bytes 1-2 (little endian, modulo the valid length +
 *          64), then edited by the rest of the input in triples (offset u16
 *          little endian modulo that length, byte);
 *   byte 0 bit 1: the load expects the valid payload checksum (else none);
 *          bit 2: the load leaves L_Q in the file (GS_PRECOMP_DEFER_LQ).
 * Properties: no crash, no leak; a refusal is GS_ERR_FORMAT with a message
 * (the file is there: never an I/O error); an accepted file is the valid
 * file, byte for byte (its header words are all checked, its payload is
 * guarded by the checksum), and what was loaded saves back to it (L_Q
 * deferred: the load has none to save).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/test_models.h"
#include "gs_fuzz.h"
#include "precomp_io.h"

const char *const gs_fuzz_target = "factors";
const char *const gs_fuzz_dict[] = {"GSPRECMP", "GSPCDONE", "\x08\x07\x06\x05\x04\x03\x02\x01",
                                    "\x01\x00\x00\x00\x00\x00\x00\x00",
                                    "\x06\x00\x00\x00\x00\x00\x00\x00",
                                    "\x03\x00\x00\x00\x00\x00\x00\x00",
                                    "\xff\xff\xff\xff\xff\xff\xff\x7f", NULL};

#define FZ_MAX_FILE (1u << 16)

typedef struct {
    gs_model *mdl;
    uint8_t *bytes; /* the valid file */
    size_t len;
    unsigned long long sum;
} fz_valid;

static void fz_path(char *path, size_t cap, const char *what)
{
    const char *dir = getenv("GS_TEST_TMP");
    snprintf(path, cap, "%s/fuzz_factors_%s_%ld.bin", dir && *dir ? dir : "/tmp", what,
             (long)getpid());
}

static uint8_t *fz_read(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    GS_FUZZ_ASSERT(fp != NULL);
    uint8_t *b = malloc(FZ_MAX_FILE);
    GS_FUZZ_ASSERT(b != NULL);
    *len = fread(b, 1, FZ_MAX_FILE, fp);
    fclose(fp);
    return b;
}

/* The model, validated, and its precomputation's file: made once. */
static const fz_valid *fz_valid_file(void)
{
    static fz_valid v;
    if (v.mdl)
        return &v;
    gs_error e;
    char path[512];
    v.mdl = tm_twin_chains();
    GS_FUZZ_ASSERT(gs_model_validate(v.mdl, &e) == GS_OK);
    gs_precomp *pc = NULL;
    GS_FUZZ_ASSERT(gs_precomp_build(v.mdl, &pc, &e) == GS_OK);
    fz_path(path, sizeof path, "valid");
    GS_FUZZ_ASSERT(gs_precomp_save(pc, path, &v.sum, &e) == GS_OK);
    gs_precomp_free(pc);
    v.bytes = fz_read(path, &v.len);
    unlink(path);
    GS_FUZZ_ASSERT(v.len > 0 && v.len < FZ_MAX_FILE);
    return &v;
}

/* The file the input describes (header comment); *len its length. */
static uint8_t *fz_file(const fz_valid *v, const uint8_t *data, size_t size, size_t *len)
{
    if (data[0] & 1u) {
        *len = size - 1;
        uint8_t *f = malloc(*len + 1);
        GS_FUZZ_ASSERT(f != NULL);
        memcpy(f, data + 1, *len);
        return f;
    }
    size_t n = size >= 3 ? ((size_t)data[1] | (size_t)data[2] << 8) % (v->len + 64) : v->len;
    uint8_t *f = malloc(n + 1);
    GS_FUZZ_ASSERT(f != NULL);
    memcpy(f, v->bytes, n < v->len ? n : v->len);
    if (n > v->len)
        memset(f + v->len, 0x5a, n - v->len);
    for (size_t k = 3; n > 0 && k + 3 <= size; k += 3)
        f[((size_t)data[k] | (size_t)data[k + 1] << 8) % n] = data[k + 2];
    *len = n;
    return f;
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const fz_valid *v = fz_valid_file();
    size_t len;
    uint8_t *f = fz_file(v, data, size, &len);
    char path[512];
    fz_path(path, sizeof path, "in");
    FILE *fp = fopen(path, "wb");
    GS_FUZZ_ASSERT(fp != NULL);
    GS_FUZZ_ASSERT(fwrite(f, 1, len, fp) == len);
    GS_FUZZ_ASSERT(fclose(fp) == 0);
    const int defer = (data[0] & 4u) != 0;
    gs_precomp *pc = NULL;
    gs_error e;
    gs_err rc = gs_precomp_load_ex(v->mdl, path, (data[0] & 2u) ? v->sum : 0,
                                   defer ? GS_PRECOMP_DEFER_LQ : 0u, &pc, &e);
    unlink(path);
    if (rc != GS_OK) {
        GS_FUZZ_ASSERT(rc == GS_ERR_FORMAT);
        GS_FUZZ_ASSERT(e.code == rc && e.msg[0] != '\0');
        GS_FUZZ_ASSERT(memchr(e.msg, '\0', sizeof e.msg) != NULL);
        GS_FUZZ_ASSERT(pc == NULL);
        free(f);
        return 0;
    }
    GS_FUZZ_ASSERT(len == v->len && memcmp(f, v->bytes, len) == 0);
    if (!defer) {
        fz_path(path, sizeof path, "again");
        unsigned long long sum = 0;
        GS_FUZZ_ASSERT(gs_precomp_save(pc, path, &sum, &e) == GS_OK);
        size_t len2;
        uint8_t *again = fz_read(path, &len2);
        unlink(path);
        GS_FUZZ_ASSERT(sum == v->sum && len2 == len && memcmp(again, f, len) == 0);
        free(again);
    }
    gs_precomp_free(pc);
    free(f);
    return 1;
}
