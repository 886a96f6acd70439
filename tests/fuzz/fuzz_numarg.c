/*
 * fuzz_numarg.c -- fuzz target for the numbers of command-line options
 * (core/numarg.h). The first byte picks the range, the rest is the text.
 * Properties:
 *   - no crash; a refusal leaves the output untouched;
 *   - an accepted integer is in its range and the text is wholly one
 *     (a sign, digits and nothing else);
 *   - an accepted number is finite, in its range, and strtod reads the text
 *     to its end, and the text is a decimal number's characters; "%.17g" of it reads back to the same bits;
 *   - an integer accepted in a range is accepted as a number in the same
 *     range with the same value (below 2^53).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"
#include "numarg.h"

const char *const gs_fuzz_target = "numarg";
const char *const gs_fuzz_dict[] = {"0", "1", "-", "+", ".", "e", "E", "e-", "x", "0x", "p",
                                    "inf", "nan", " ", "9223372036854775807", "1e308", NULL};

static const struct {
    long lo, hi;
} ranges[] = {{0, 100}, {1, 1024}, {-1000000000L, 1000000000L}, {0, 65535}, {-5, 5}};

static int wholly_integer(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    while (isdigit((unsigned char)*s))
        s++;
    return *s == '\0';
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const long lo = ranges[data[0] % 5].lo, hi = ranges[data[0] % 5].hi;
    char *s = malloc(size);
    GS_FUZZ_ASSERT(s != NULL);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    long l = 12345;
    const int rl = gs_parse_long(s, lo, hi, &l);
    if (rl) {
        GS_FUZZ_ASSERT(rl == -1 && l == 12345);
    } else {
        GS_FUZZ_ASSERT(l >= lo && l <= hi && wholly_integer(s));
    }
    double d = -7.25;
    const int rd = gs_parse_double(s, (double)lo, (double)hi, &d);
    if (rd) {
        GS_FUZZ_ASSERT(rd == -1 && d == -7.25);
    } else {
        char *end = NULL;
        GS_FUZZ_ASSERT(isfinite(d) && d >= lo && d <= hi && strtod(s, &end) == d && !*end &&
                       s[strspn(s, "+-.0123456789eE")] == '\0');
        char txt[40];
        snprintf(txt, sizeof txt, "%.17g", d);
        double back = 0;
        GS_FUZZ_ASSERT(gs_parse_double(txt, (double)lo, (double)hi, &back) == 0);
        GS_FUZZ_ASSERT(memcmp(&back, &d, sizeof d) == 0);
    }
    if (!rl)
        GS_FUZZ_ASSERT(rd == 0 && d == (double)l);
    free(s);
    return !rl || !rd;
}
