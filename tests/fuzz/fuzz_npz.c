/*
 * fuzz_npz.c -- fuzz target for the SciPy .npz reader (libzip underneath):
 * properties in fuzz_matrix.h; a zip header is always sniffed as npz and
 * reading by sniff gives the same outcome.
 */
#include "fuzz_matrix.h"

const char *const gs_fuzz_target = "npz";
const char *const gs_fuzz_dict[] = {
    "PK\x03\x04", "PK\x01\x02", "PK\x05\x06", "format.npy", "shape.npy", "data.npy",
    "indices.npy", "indptr.npy", "row.npy", "col.npy", "_is_array.npy", "\x93NUMPY", "'<i4'",
    "'<i8'", "'<f8'", "'|S3'", "'<U3'", "csr", "csc", "coo", "dia", "(2,)", "()", NULL};

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    int a = fzm_run(data, size, "scipy-npz", NULL, 0);
    const gs_matfmt *f = gs_matfmt_sniff(data, size);
    if (f && !strcmp(f->name, "scipy-npz"))
        GS_FUZZ_ASSERT(fzm_run(data, size, NULL, NULL, 0) == a);
    return a;
}
