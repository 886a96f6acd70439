/*
 * numarg.h -- numbers given as text on a command line: the whole string, in
 * range, or refused.
 *
 * Owns: gs_parse_long, gs_parse_double, the one parser of the numeric
 * options of every program (gapsimd, gapsim, gapsim-batch, gapsim-mpi,
 * gapsim-gen), and gs_arg_msg, the one-line message of a refused word. atol / atof read "0.5x" as 0.5 and "abc" as 0; these refuse
 * empty strings, blanks, trailing characters, hexadecimal, overflow,
 * non-finite values and values outside [lo, hi], so that a mistyped option
 * is an error naming it, not a silent other run.
 */
#ifndef GS_NUMARG_H
#define GS_NUMARG_H

#include <stddef.h>

/* A base-10 integer (an optional sign, digits) in [lo, hi]: 0 and *out set, or -1 and *out untouched. */
int gs_parse_long(const char *s, long lo, long hi, long *out);
/* A finite decimal number (an optional sign, digits with an optional point,
 * an optional exponent: strtod's decimal syntax) in [lo, hi]: 0 and *out set, or -1 and
 * *out untouched. */
int gs_parse_double(const char *s, double lo, double hi, double *out);

/* A usage message of a command line into msg (cap bytes, cap > 0):
 * printf-formatted, its control characters shown as '?' (the words it quotes
 * are the user's and may hold anything), so it stays one line. Returns 2,
 * the usage exit code. */
int gs_arg_msg(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
