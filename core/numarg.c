/*
 * numarg.c -- whole-string numbers of command-line options (numarg.h).
 */
#include "numarg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int gs_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int gs_parse_double(const char *s, double lo, double hi, double *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v) || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}
