/*
 * fuzz_abaqus.c -- fuzz target for the three Abaqus matrix readers (user
 * element, matrix input, coordinate). Every input goes to all three and to
 * the sniffer; properties in fuzz_matrix.h. A sniffed format must accept or
 * reject exactly as when it is named.
 */
#include "fuzz_matrix.h"

const char *const gs_fuzz_target = "abaqus";
const char *const gs_fuzz_dict[] = {
    "*USER ELEMENT", "*User Element", "NODES=", "TYPE=U1", "LINEAR", "UNSYMM", "*MATRIX",
    "TYPE=STIFFNESS", "TYPE=MASS", "*ELEMENT", "*HEADING", "**", "*", ",", ", ", "\n", "\r\n",
    "1.0E+00", "-2.5D-03", "1e999", "0", "-1", "99", "100", "36028797018963968", ".5", "e+",
    NULL};

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    static const char *const fmts[] = {"abaqus-user-element", "abaqus-matrix-input",
                                       "abaqus-coordinate"};
    int ok[3], any = 0;
    for (int k = 0; k < 3; k++)
        any |= ok[k] = fzm_run(data, size, fmts[k], NULL, k < 2);
    const gs_matfmt *f = gs_matfmt_sniff(data, size);
    for (int k = 0; f && k < 3; k++)
        if (!strcmp(f->name, fmts[k]))
            GS_FUZZ_ASSERT(fzm_run(data, size, NULL, NULL, k < 2) == ok[k]);
    return any;
}
