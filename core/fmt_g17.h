/*
 * fmt_g17.h -- a double as text, the exact bytes of printf("%.17g"), fast.
 *
 * Owns: gs_fmt_g17, the one formatter of doubles for bulk output (the
 * daemon's JSON and exports through gs_buf_json_num, the CLI's JSON, the
 * matrix and model writers). 17 significant digits round-trip every double
 * exactly; the output is byte for byte glibc's "%.17g" (round half to even
 * on the exact binary value, trailing zeros and a trailing point removed,
 * "e-05" exponents), so files and answers do not change, only the time to
 * write them: glibc's printf converts through multi-precision arithmetic
 * (about 450 ns per number here), this path through one 64 x 128-bit product
 * and 17 digit extractions.
 *
 * Method: |v| = M 2^E (M < 2^53). With x = floor(log10 |v|) and s = 16 - x,
 * the 17 digits are D = round(|v| 10^s) = round(M 5^s 2^(E+s)), 10^16 <= D <
 * 10^17: M 5^s is formed exactly in 192 bits (5^s < 2^128 for s <= 55) and
 * shifted right with round half to even on the discarded bits (exact). This
 * covers 0 <= s <= 55, i.e. 1e-39 <= |v| < 1e16 (residual gaps, forces,
 * coordinates, times); zero ("0", "-0") is written directly, other values
 * and non-finite ones go to snprintf. Cost O(1): two 64 x 64-bit products and 17 digits.
 */
#ifndef GS_FMT_G17_H
#define GS_FMT_G17_H

#include <stdio.h>

/* Room for any output of gs_fmt_g17 ("-1.2345678901234567e-308" and NUL). */
#define GS_FMT_G17_MAX 32

/* Writes v as printf("%.17g", v) would into out (NUL-terminated); returns
 * the length. */
int gs_fmt_g17(double v, char out[GS_FMT_G17_MAX]);

/* fputs of gs_fmt_g17's text. */
void gs_fput_g17(FILE *fp, double v);

#endif
