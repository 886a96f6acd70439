/*
 * text.c -- UTF-8 repair, log escaping, clipping (see text.h; validity is
 * core/utf8.h's).
 */
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gsd_utf8_repair(gs_buf *b)
{
    if (b->oom || gs_utf8_valid(b->p, b->len))
        return 0;
    gs_buf out = {0};
    if (gs_buf_reserve(&out, b->len + b->len / 2 + 16) != 0)
        return -1;
    for (size_t i = 0; i < b->len;) {
        size_t k = gs_utf8_seq(b->p + i, b->len - i);
        if (k) {
            gs_buf_add(&out, b->p + i, k);
            i += k;
        } else {
            gs_buf_add(&out, "\xef\xbf\xbd", 3);
            i++;
        }
    }
    if (out.oom) {
        gs_buf_free(&out);
        return -1;
    }
    gs_buf_free(b);
    *b = out;
    return 0;
}

/* The escape of the character at s (k bytes, 0: an invalid byte) into esc;
 * its length, 0 when the character is written as it is. */
static size_t log_esc(const unsigned char *s, size_t k, char esc[12])
{
    if (k == 1 && *s == '\\')
        return (size_t)snprintf(esc, 12, "\\\\");
    if (k == 0 || (k == 1 && (*s < 0x20 || *s == 0x7f)))
        return (size_t)snprintf(esc, 12, "\\x%02x", *s);
    if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0) /* C1 controls U+0080..U+009F */
        return (size_t)snprintf(esc, 12, "\\x%02x\\x%02x", s[0], s[1]);
    return 0;
}

void gsd_log_escape(char *out, size_t cap, const char *s)
{
    if (cap == 0)
        return;
    size_t w = 0, n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = gs_utf8_seq(s + i, n - i);
        char esc[12];
        size_t e = log_esc((const unsigned char *)s + i, k, esc);
        const char *src = e ? esc : s + i;
        size_t len = e ? e : k;
        if (w + len >= cap)
            break;
        memcpy(out + w, src, len);
        w += len;
        i += k ? k : 1;
    }
    out[w] = '\0';
}

void gsd_text_clip(char *out, size_t cap, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) {
        snprintf(out, cap, "%s", s);
        return;
    }
    size_t cut = max;
    /* back over continuation bytes to a character boundary (at most 3) */
    for (int i = 0; i < 3 && cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80; i++)
        cut--;
    snprintf(out, cap, "%.*s...", (int)cut, s);
}
