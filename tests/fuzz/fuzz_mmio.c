/*
 * fuzz_mmio.c -- fuzz target for the Matrix Market reader.
 * Properties: no crash on any bytes; errors carry a code and message; an
 * accepted matrix respects the element limit; for 1 input in 8 (by hash) an
 * accepted matrix is written with gs_mm_write_file and read back identical
 * (NaNs compared as NaNs: their payload is not kept by text).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_fuzz.h"
#include "mmio.h"

#define FZ_MAX_ELEMS ((size_t)4096)

const char *const gs_fuzz_target = "mmio";
const char *const gs_fuzz_dict[] = {
    "%%MatrixMarket", "matrix", "array", "coordinate", "real", "integer", "double", "complex",
    "pattern", "general", "symmetric", "skew-symmetric", "hermitian", "%", "\n", "\r\n", " ",
    "\t", "1e308", "-inf", "nan", "1e-400", "0", "-1", "2147483648", "4294967297", ".5", "e+",
    NULL};

static void check_error(gs_err rc, const gs_error *e)
{
    GS_FUZZ_ASSERT(rc > GS_OK && rc < GS_ERR__COUNT);
    GS_FUZZ_ASSERT(e->code == rc);
    GS_FUZZ_ASSERT(e->msg[0] != '\0');
}

static void check_roundtrip(const double *d, int rows, int cols)
{
    char path[512];
    const char *dir = getenv("GS_TEST_TMP");
    snprintf(path, sizeof path, "%s/fuzz_mmio_%ld.mtx", dir && *dir ? dir : "/tmp", (long)getpid());
    gs_error e;
    if (gs_mm_write_file(path, d, rows, cols, &e) != GS_OK)
        return; /* I/O trouble in the scratch dir is not the reader's fault */
    double *back = NULL;
    int r, c;
    gs_err rc = gs_mm_read_file(path, FZ_MAX_ELEMS, &back, &r, &c, &e);
    unlink(path);
    GS_FUZZ_ASSERT(rc == GS_OK && r == rows && c == cols);
    for (size_t k = 0; k < (size_t)rows * (size_t)cols; k++)
        GS_FUZZ_ASSERT((isnan(d[k]) && isnan(back[k])) || memcmp(&d[k], &back[k], 8) == 0);
    free(back);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    double *d = NULL;
    int rows = -1, cols = -1;
    gs_error e;
    gs_err rc = gs_mm_read_mem((const char *)data, size, FZ_MAX_ELEMS, &d, &rows, &cols, &e);
    if (rc != GS_OK) {
        check_error(rc, &e);
        GS_FUZZ_ASSERT(d == NULL && rows == 0 && cols == 0);
        return 0;
    }
    GS_FUZZ_ASSERT(d != NULL && rows >= 0 && cols >= 0);
    GS_FUZZ_ASSERT((size_t)rows * (size_t)cols <= FZ_MAX_ELEMS);
    volatile double sink = 0; /* touch every element: ASan checks the allocation size */
    for (size_t k = 0; k < (size_t)rows * (size_t)cols; k++)
        sink += d[k];
    (void)sink;
    if (gs_fuzz_hash(data, size) % 8 == 0)
        check_roundtrip(d, rows, cols);
    free(d);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gs_fuzz_one(data, size);
    return 0;
}
