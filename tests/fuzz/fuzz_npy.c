/*
 * fuzz_npy.c -- fuzz target for the .npy reader.
 * Properties checked on every input:
 *   - parse_header and read_mem never crash; errors carry a code and message;
 *   - read_mem fails with the header's own error when the header is bad;
 *   - an accepted array has exactly the bytes its header announces, and
 *     re-encoding it (gs_npy_write_header + data) reads back bit-identical;
 *   - for 1 input in 8 (by hash) the file reader, fed the same bytes,
 *     returns the same error code and the same data as the memory reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_fuzz.h"
#include "npy.h"

#define FZ_MAX_ELEMS ((size_t)1 << 16)

const char *const gs_fuzz_target = "npy";
const char *const gs_fuzz_dict[] = {
    "\x93NUMPY", "'descr'", "'<f8'", "'>f8'", "'<f4'", "'|O'", "'fortran_order'", "True",
    "False", "'shape'", "(", ")", ",)", "(2, 3)", "(4000000000, 4000000000)", "()",
    "(1, 2, 3)", "{", "}", ": ", "\"", "'", "L", "\n", "        ", "[('a', '<f8')]", NULL};

static void check_error(gs_err rc, const gs_error *e)
{
    GS_FUZZ_ASSERT(rc > GS_OK && rc < GS_ERR__COUNT);
    GS_FUZZ_ASSERT(e->code == rc);
    GS_FUZZ_ASSERT(e->msg[0] != '\0');
    GS_FUZZ_ASSERT(memchr(e->msg, '\0', sizeof e->msg) != NULL);
}

static void check_file(const uint8_t *data, size_t size, gs_err rc_mem, const double *d_mem)
{
    char path[512];
    const char *dir = getenv("GS_TEST_TMP");
    snprintf(path, sizeof path, "%s/fuzz_npy_%ld.npy", dir && *dir ? dir : "/tmp", (long)getpid());
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return;
    int ok = fwrite(data, 1, size, fp) == size;
    if (fclose(fp) != 0 || !ok) {
        unlink(path);
        return;
    }
    double *d = NULL;
    gs_npy_info info;
    gs_error e;
    gs_err rc = gs_npy_read_file(path, FZ_MAX_ELEMS, &d, &info, &e);
    unlink(path);
    GS_FUZZ_ASSERT(rc == rc_mem);
    if (rc == GS_OK) {
        size_t n = info.shape[0] * info.shape[1];
        GS_FUZZ_ASSERT(memcmp(d, d_mem, n * sizeof *d) == 0);
    } else {
        check_error(rc, &e);
        GS_FUZZ_ASSERT(d == NULL);
    }
    free(d);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    gs_error e;
    gs_npy_info info, info2;
    size_t off;
    gs_err rh = gs_npy_parse_header(data, size, &info, &off, &e);
    if (rh == GS_OK) {
        GS_FUZZ_ASSERT(off <= size && off >= 10);
        GS_FUZZ_ASSERT(info.ndim == 1 || info.ndim == 2);
        GS_FUZZ_ASSERT(info.ndim == 2 || info.shape[1] == 1);
        GS_FUZZ_ASSERT(info.shape[1] == 0 || info.shape[0] <= SIZE_MAX / 8 / info.shape[1]);
    } else {
        check_error(rh, &e);
    }
    double *d = NULL;
    gs_err rc = gs_npy_read_mem(data, size, FZ_MAX_ELEMS, &d, &info2, &e);
    if (rh != GS_OK)
        GS_FUZZ_ASSERT(rc == rh);
    if (rc != GS_OK) {
        check_error(rc, &e);
        GS_FUZZ_ASSERT(d == NULL);
    } else {
        const size_t n = info2.shape[0] * info2.shape[1];
        GS_FUZZ_ASSERT(d != NULL && n <= FZ_MAX_ELEMS);
        GS_FUZZ_ASSERT(size == off + 8 * n);
        /* re-encode in C order and read back: bit-identical */
        uint8_t *img = malloc(GS_NPY_HEADER_CAP + 8 * n);
        GS_FUZZ_ASSERT(img != NULL);
        size_t hl;
        GS_FUZZ_ASSERT(gs_npy_write_header(img, GS_NPY_HEADER_CAP, info2.ndim, info2.shape, &hl,
                                           &e) == GS_OK);
        memcpy(img + hl, d, 8 * n); /* little-endian host */
        double *back = NULL;
        gs_npy_info info3;
        GS_FUZZ_ASSERT(gs_npy_read_mem(img, hl + 8 * n, n, &back, &info3, &e) == GS_OK);
        GS_FUZZ_ASSERT(info3.ndim == info2.ndim && info3.shape[0] == info2.shape[0] &&
                       info3.shape[1] == info2.shape[1] && !info3.fortran_order);
        GS_FUZZ_ASSERT(memcmp(back, d, 8 * n) == 0);
        free(back);
        free(img);
    }
    if (gs_fuzz_hash(data, size) % 8 == 0)
        check_file(data, size, rc, d);
    free(d);
    return rc == GS_OK;
}
