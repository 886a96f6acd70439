/*
 * utf8.h -- what valid UTF-8 is, for every reader of text gapsim keeps and
 * shows again: names in a model, a cloud's label (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). The daemon's repair of its
 * answers and the escaping of its log lines build on it (server/text.h).
 * Cost: O(length), one pass, nothing allocated.
 */
#ifndef GS_UTF8_H
#define GS_UTF8_H

#include <stddef.h>

/* Length (1..4) of the valid UTF-8 sequence at s[0..n), or 0 if none starts
 * there (n == 0 included). */
size_t gs_utf8_seq(const char *s, size_t n);
/* 1 if s[0..n) is valid UTF-8. */
int gs_utf8_valid(const char *s, size_t n);

#endif
