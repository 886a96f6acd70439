/*
 * buf.h -- growable byte buffer and the JSON writer of the daemon's responses.
 *
 * Owns: gsd_buf (append bytes, printf, JSON strings with escaping, exact
 * doubles). Allocation failure is sticky: the buffer records it (oom = 1),
 * later appends are no-ops, and the caller checks once at the end.
 * Doubles are written with %.17g (bit-exact round trip); 0 is written as "0"
 * without printf (most contact forces are zero); NaN / Inf as null (JSON
 * has no such numbers). Cost: O(bytes) amortized.
 */
#ifndef GSD_BUF_H
#define GSD_BUF_H

#include <stddef.h>

typedef struct {
    char *p;
    size_t len, cap;
    int oom;
} gsd_buf;

void gsd_buf_free(gsd_buf *b);
/* Take the bytes (NUL-terminated); the buffer is reset. NULL after oom. */
char *gsd_buf_take(gsd_buf *b, size_t *len);
int gsd_buf_reserve(gsd_buf *b, size_t extra);
void gsd_buf_add(gsd_buf *b, const void *data, size_t len);
void gsd_buf_puts(gsd_buf *b, const char *s);
void gsd_buf_printf(gsd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* JSON string literal with quotes and escapes. */
void gsd_buf_json_str(gsd_buf *b, const char *s);
/* One JSON number (exact), or null if not finite. */
void gsd_buf_json_num(gsd_buf *b, double v);
/* JSON array of n doubles / ints. */
void gsd_buf_json_nums(gsd_buf *b, const double *v, int n);
void gsd_buf_json_ints(gsd_buf *b, const int *v, int n);

#endif
