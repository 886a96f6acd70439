/*
 * fuzz_mmio.c -- fuzz target for the Matrix Market reader.
 * Properties: no crash on any bytes; errors carry a code and message; an
 * accepted matrix respects the element limit; for 1 input in 8 (by hash) an
 * accepted matrix is written with gs_mm_write_file and read back identical
 * (NaNs compared as NaNs: their payload is not kept by text). The sparse
 * reader (gs_mm_read_sparse) on the same bytes: no crash, limits kept, and
 * when both accept a square matrix it is the dense one (equal values).
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

/* The sparse reader agrees with the dense one (d: rows x cols, or NULL). */
static void check_sparse(const uint8_t *data, size_t size, const double *d, int rows, int cols)
{
    gs_spmat a;
    gs_error e;
    gs_err rc = gs_mm_read_sparse((const char *)data, size, 64, FZ_MAX_ELEMS, &a, &e);
    if (rc != GS_OK) {
        check_error(rc, &e);
        GS_FUZZ_ASSERT(!d || rows != cols || rc == GS_ERR_LIMIT);
        return;
    }
    GS_FUZZ_ASSERT(a.n <= 64 && (size_t)a.nnz <= FZ_MAX_ELEMS && a.colptr[a.n] == a.nnz);
    if (d && rows == cols && a.n == rows) {
        double *s = malloc((size_t)a.n * (size_t)a.n * sizeof *s + 1);
        GS_FUZZ_ASSERT(s != NULL);
        gs_spmat_to_dense(&a, s); /* column-major; d is row-major */
        const size_t n = (size_t)rows;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                const double x = d[i * n + j], y = s[j * n + i];
                GS_FUZZ_ASSERT((isnan(x) && isnan(y)) || x == y);
            }
        free(s);
    }
    gs_spmat_free(&a);
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
        check_sparse(data, size, NULL, 0, 0);
        return 0;
    }
    check_sparse(data, size, d, rows, cols);
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
