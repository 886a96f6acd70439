/*
 * text.h -- text that came from a request, made safe to keep and to show.
 *
 * Owns, on the UTF-8 rules of core/utf8.h: (1) checking a value the daemon
 * stores (a cloud's label: gs_utf8_valid). (2) Repairing the JSON it answers: every invalid
 * sequence becomes U+FFFD, so bytes stored before the check existed, or a
 * path or id echoed in an error message, never make an answer that is not
 * UTF-8 (http.c calls it on every JSON reply; JSON's own syntax is ASCII, so
 * a repaired text stays the same JSON). (3) Escaping a log line: control
 * characters (C0, DEL, C1), a backslash and the bytes of invalid sequences
 * become \xNN (a backslash \\), so a request cannot forge or split log lines
 * nor send escape sequences to a terminal. (4) A clipped, displayable copy
 * of an over-long path segment for error messages. Cost: O(length), one
 * pass each; nothing allocated except by the repair of an invalid text.
 */
#ifndef GSD_TEXT_H
#define GSD_TEXT_H

#include <stddef.h>

#include "buf.h"
#include "utf8.h"

/* Replace each byte that starts no valid sequence in b by U+FFFD (EF BF BD).
 * b is untouched when valid. 0, or -1 out of memory (b untouched). */
int gsd_utf8_repair(gs_buf *b);
/* s as one log-safe line into out (always NUL-terminated, cut at a whole
 * character or escape when cap is short). */
void gsd_log_escape(char *out, size_t cap, const char *s);
/* At most max bytes of s (cut at a character boundary) into out, with
 * "..." appended when cut; cap >= max + 4. Invalid bytes are kept (the
 * reply repairs them). */
void gsd_text_clip(char *out, size_t cap, const char *s, size_t max);

#endif
