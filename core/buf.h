/*
 * buf.h -- growable byte buffer and the JSON writer (gapsimd responses, cloud summaries).
 *
 * Owns: gs_buf (append bytes, printf, JSON strings with escaping, exact
 * doubles). Allocation failure is sticky: the buffer records it (oom = 1),
 * later appends are no-ops, and the caller checks once at the end.
 * Doubles are written as %.17g writes them (bit-exact round trip) by
 * gs_fmt_g17 (fmt_g17.h, about 9x faster than printf); NaN / Inf as null
 * (JSON has no such numbers). Cost: O(bytes) amortized.
 */
#ifndef GS_BUF_H
#define GS_BUF_H

#include <stddef.h>

typedef struct {
    char *p;
    size_t len, cap;
    int oom;
} gs_buf;

void gs_buf_free(gs_buf *b);
/* Take the bytes (NUL-terminated); the buffer is reset. NULL after oom. */
char *gs_buf_take(gs_buf *b, size_t *len);
int gs_buf_reserve(gs_buf *b, size_t extra);
void gs_buf_add(gs_buf *b, const void *data, size_t len);
void gs_buf_puts(gs_buf *b, const char *s);
void gs_buf_printf(gs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* JSON string literal with quotes and escapes. */
void gs_buf_json_str(gs_buf *b, const char *s);
/* One JSON number (exact), or null if not finite. */
void gs_buf_json_num(gs_buf *b, double v);
/* JSON array of n doubles / ints. */
void gs_buf_json_nums(gs_buf *b, const double *v, int n);
void gs_buf_json_ints(gs_buf *b, const int *v, int n);

#endif
