/*
 * utf8.c -- UTF-8 validity (see utf8.h).
 */
#include "utf8.h"

size_t gs_utf8_seq(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return 0;
    if (u[0] < 0x80)
        return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (u[0] >= 0xc2 && u[0] <= 0xdf)
        len = 2;
    else if (u[0] >= 0xe0 && u[0] <= 0xef) {
        len = 3;
        if (u[0] == 0xe0)
            lo = 0xa0; /* overlong */
        else if (u[0] == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
        len = 4;
        if (u[0] == 0xf0)
            lo = 0x90; /* overlong */
        else if (u[0] == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0; /* a continuation byte, C0 / C1 (overlong) or F5..FF */
    }
    if (n < len || u[1] < lo || u[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (u[i] < 0x80 || u[i] > 0xbf)
            return 0;
    return len;
}

int gs_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        if ((unsigned char)s[i] < 0x80) { /* the common case: ASCII */
            i++;
            continue;
        }
        size_t k = gs_utf8_seq(s + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}
