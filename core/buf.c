/*
 * buf.c -- growable byte buffer and JSON writing (see buf.h).
 */
#include "buf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_g17.h"

void gs_buf_free(gs_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

char *gs_buf_take(gs_buf *b, size_t *len)
{
    if (b->oom || gs_buf_reserve(b, 1) != 0) {
        gs_buf_free(b);
        return NULL;
    }
    b->p[b->len] = '\0';
    char *p = b->p;
    if (len)
        *len = b->len;
    memset(b, 0, sizeof *b);
    return p;
}

int gs_buf_reserve(gs_buf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void gs_buf_add(gs_buf *b, const void *data, size_t len)
{
    if (gs_buf_reserve(b, len) != 0)
        return;
    memcpy(b->p + b->len, data, len);
    b->len += len;
}

void gs_buf_puts(gs_buf *b, const char *s)
{
    gs_buf_add(b, s, strlen(s));
}

void gs_buf_printf(gs_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0 || gs_buf_reserve(b, (size_t)need) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
}

void gs_buf_json_str(gs_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    gs_buf_add(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        switch (*c) {
        case '"': esc[1] = '"'; gs_buf_add(b, esc, 2); break;
        case '\\': esc[1] = '\\'; gs_buf_add(b, esc, 2); break;
        case '\n': esc[1] = 'n'; gs_buf_add(b, esc, 2); break;
        case '\r': esc[1] = 'r'; gs_buf_add(b, esc, 2); break;
        case '\t': esc[1] = 't'; gs_buf_add(b, esc, 2); break;
        default:
            if (*c < 0x20) {
                esc[1] = 'u';
                esc[2] = '0';
                esc[3] = '0';
                esc[4] = hex[*c >> 4];
                esc[5] = hex[*c & 15];
                gs_buf_add(b, esc, 6);
            } else {
                gs_buf_add(b, c, 1);
            }
        }
    }
    gs_buf_add(b, "\"", 1);
}

/* One JSON number at p (room for GS_FMT_G17_MAX bytes); returns its length. */
static size_t put_num(char *p, double v)
{
    if (v == 0.0 && !signbit(v)) { /* most contact forces */
        *p = '0';
        return 1;
    }
    if (!isfinite(v)) {
        memcpy(p, "null", 4);
        return 4;
    }
    return (size_t)gs_fmt_g17(v, p);
}

void gs_buf_json_num(gs_buf *b, double v)
{
    if (gs_buf_reserve(b, GS_FMT_G17_MAX) != 0)
        return;
    b->len += put_num(b->p + b->len, v);
}

/* One reservation for the whole array: O(n) with no per-number checks. */
void gs_buf_json_nums(gs_buf *b, const double *v, int n)
{
    if (gs_buf_reserve(b, (size_t)(n > 0 ? n : 0) * (GS_FMT_G17_MAX + 1) + 2) != 0)
        return;
    char *p = b->p + b->len, *start = p;
    *p++ = '[';
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        p += put_num(p, v[i]);
    }
    *p++ = ']';
    b->len += (size_t)(p - start);
}

void gs_buf_json_ints(gs_buf *b, const int *v, int n)
{
    gs_buf_add(b, "[", 1);
    for (int i = 0; i < n; i++)
        gs_buf_printf(b, i ? ",%d" : "%d", v[i]);
    gs_buf_add(b, "]", 1);
}
