/*
 * numarg.c -- whole-string numbers of command-line options (numarg.h).
 */
#include "numarg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text is a decimal number's characters only: strtol and strtod would
 * also skip leading blanks, and strtod read hexadecimal ("0x9" as 9, "0x1p-3"
 * as 0.125) and "infinity". */
static int decimal_chars(const char *s, const char *allowed)
{
    return s[strspn(s, allowed)] == '\0';
}

int gs_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s || !decimal_chars(s, "+-0123456789"))
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
    if (!s || !*s || !decimal_chars(s, "+-.0123456789eE"))
        return -1;
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(v) || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

int gs_arg_msg(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return 2;
}
