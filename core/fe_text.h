/*
 * fe_text.h -- the line and number scanning shared by the FE-tool text
 * readers (Abaqus matrix files, Nastran DMIG punch files).
 *
 * Owns: a bounded line cursor over a buffer that need not be NUL-terminated
 * (CRLF accepted, lines counted from 1), field trimming, Fortran-style reals
 * (1.5E+03, 1.5D+03, and Nastran's implicit exponent 1.5+3 when asked) and
 * integers with overflow checks, and printable copies of untrusted text for
 * messages. Parsing goes through strtod on a bounded local copy: the process
 * must keep the "C" numeric locale.
 */
#ifndef GS_FE_TEXT_H
#define GS_FE_TEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *p, *end;
    long line; /* number of the line last returned (1-based) */
} gs_text_cur;

/* A span of the input. */
typedef struct {
    const char *s;
    size_t n;
} gs_text_span;

void gs_text_init(gs_text_cur *c, const void *buf, size_t len);
/* Next line without its '\n' (and a trailing '\r'); 0 at end of input. */
int gs_text_line(gs_text_cur *c, gs_text_span *line);
/* Without leading and trailing blanks (space, tab). */
gs_text_span gs_text_trim(gs_text_span s);
/* Split s at every `sep` into at most max fields (trimmed); returns the
 * field count, or max + 1 when there are more. */
int gs_text_split(gs_text_span s, char sep, gs_text_span *f, int max);
/* 1 if s equals the word w ignoring case and blanks ("User Element" = "USERELEMENT"). */
int gs_text_is_word(gs_text_span s, const char *w);

/* Real literal: [+-]digits[.digits][(E|e|D|d)[+-]digits]; with `implicit`,
 * also [+-]digits[.digits](+|-)digits (Nastran). 0 ok, -1 syntax, -2 finite
 * literal beyond the double range. */
int gs_text_real(gs_text_span s, int implicit, double *out);
/* [+-]digits within [lo, hi]. 0 ok, -1 syntax, -2 out of [lo, hi]. */
int gs_text_int(gs_text_span s, int64_t lo, int64_t hi, int64_t *out);
/* Printable copy of s for messages (non-printables '?', long text cut "..."). */
const char *gs_text_show(gs_text_span s, char *out, size_t cap);

#endif
