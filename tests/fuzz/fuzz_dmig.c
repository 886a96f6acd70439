/*
 * fuzz_dmig.c -- fuzz target for the Nastran DMIG reader: each input is read
 * without a matrix name and with the name KAAX (properties in
 * fuzz_matrix.h); when the sniffer says DMIG, reading by sniff gives the
 * same outcome as naming the format.
 */
#include "fuzz_matrix.h"

const char *const gs_fuzz_target = "dmig";
const char *const gs_fuzz_dict[] = {
    "DMIG    ", "DMIG*   ", "DMIG,", "KAAX    ", "MAAX", "       0", "       6", "       1",
    "       2", "       3", "+A1     ", "*       ", "        ", "$ ", ",", ",,", "\t", "\n",
    "\r\n", "1.+5", "-2.5-3", "4.0D+00", "1.E999", "       7", "1099511627777", "GRID,1",
    "ENDDATA", NULL};

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    int a = fzm_run(data, size, "nastran-dmig", NULL, 1);
    int b = fzm_run(data, size, "nastran-dmig", "KAAX", 1);
    const gs_matfmt *f = gs_matfmt_sniff(data, size);
    if (f && !strcmp(f->name, "nastran-dmig"))
        GS_FUZZ_ASSERT(fzm_run(data, size, NULL, NULL, 1) == a);
    return a | b;
}
