/* fe_text.c -- bounded lines, fields and Fortran-style numbers (fe_text.h). */
#include "fe_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gs_text_init(gs_text_cur *c, const void *buf, size_t len)
{
    c->p = buf;
    c->end = c->p + len;
    c->line = 0;
}

int gs_text_line(gs_text_cur *c, gs_text_span *line)
{
    if (c->p >= c->end)
        return 0;
    const char *s = c->p, *nl = memchr(s, '\n', (size_t)(c->end - s));
    const char *e = nl ? nl : c->end;
    c->p = nl ? nl + 1 : c->end;
    if (e > s && e[-1] == '\r')
        e--;
    line->s = s;
    line->n = (size_t)(e - s);
    c->line++;
    return 1;
}

static int tx_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

gs_text_span gs_text_trim(gs_text_span s)
{
    while (s.n && tx_blank(s.s[0])) {
        s.s++;
        s.n--;
    }
    while (s.n && tx_blank(s.s[s.n - 1]))
        s.n--;
    return s;
}

int gs_text_split(gs_text_span s, char sep, gs_text_span *f, int max)
{
    int nf = 0;
    const char *p = s.s, *end = s.s + s.n;
    for (;;) {
        const char *q = memchr(p, sep, (size_t)(end - p));
        const char *e = q ? q : end;
        if (nf == max)
            return max + 1;
        f[nf++] = gs_text_trim((gs_text_span){p, (size_t)(e - p)});
        if (!q)
            return nf;
        p = q + 1;
    }
}

static char tx_upper(char ch)
{
    return (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
}

int gs_text_is_word(gs_text_span s, const char *w)
{
    size_t k = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (tx_blank(s.s[i]))
            continue;
        while (w[k] == ' ')
            k++;
        if (!w[k] || tx_upper(s.s[i]) != tx_upper(w[k]))
            return 0;
        k++;
    }
    while (w[k] == ' ')
        k++;
    return w[k] == '\0';
}

static int tx_digits(const char *b, size_t *i)
{
    size_t n = 0;
    while (b[*i] >= '0' && b[*i] <= '9')
        (*i)++, n++;
    return (int)n;
}

int gs_text_real(gs_text_span s, int implicit, double *out)
{
    char b[80];
    if (s.n == 0 || s.n >= sizeof b - 1)
        return -1;
    memcpy(b, s.s, s.n);
    b[s.n] = '\0';
    size_t len = s.n; /* every byte must be read: a NUL inside the field is no end */
    size_t i = (b[0] == '+' || b[0] == '-') ? 1 : 0;
    int nd = tx_digits(b, &i);
    if (b[i] == '.') {
        i++;
        nd += tx_digits(b, &i);
    }
    if (nd == 0)
        return -1;
    if (b[i] == 'e' || b[i] == 'E' || b[i] == 'd' || b[i] == 'D') {
        b[i++] = 'e';
        if (b[i] == '+' || b[i] == '-')
            i++;
        if (!tx_digits(b, &i))
            return -1;
    } else if (implicit && (b[i] == '+' || b[i] == '-')) {
        /* 1.5+3 -> 1.5e+3: shift the exponent right by one */
        memmove(b + i + 1, b + i, s.n - i + 1);
        b[i] = 'e';
        len++;
        i += 2;
        if (!tx_digits(b, &i))
            return -1;
    }
    if (i != len)
        return -1;
    char *end;
    double v = strtod(b, &end);
    if (*end != '\0')
        return -1;
    if (isinf(v))
        return -2;
    *out = v;
    return 0;
}

int gs_text_int(gs_text_span s, int64_t lo, int64_t hi, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (s.n && (s.s[0] == '+' || s.s[0] == '-'))
        neg = s.s[i++] == '-';
    if (i >= s.n)
        return -1;
    uint64_t v = 0;
    int over = 0;
    for (; i < s.n; i++) {
        if (s.s[i] < '0' || s.s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s.s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    if (over || v > (uint64_t)INT64_MAX)
        return -2;
    int64_t x = neg ? -(int64_t)v : (int64_t)v;
    if (x < lo || x > hi)
        return -2;
    *out = x;
    return 0;
}

const char *gs_text_show(gs_text_span s, char *out, size_t cap)
{
    size_t n = s.n < cap - 4 ? s.n : cap - 4;
    for (size_t k = 0; k < n; k++) {
        unsigned char ch = (unsigned char)s.s[k];
        out[k] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (n < s.n)
        memcpy(out + n, "...", 4);
    else
        out[n] = '\0';
    return out;
}
