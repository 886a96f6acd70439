/*
 * numarg.h -- numbers given as text on a command line: the whole string, in
 * range, or refused.
 *
 * Owns: gs_parse_long, gs_parse_double, the one parser of the numeric
 * options of every program (gapsimd, gapsim, gapsim-batch, gapsim-mpi,
 * gapsim-gen). atol / atof read "0.5x" as 0.5 and "abc" as 0; these refuse
 * empty strings, blanks, trailing characters, hexadecimal, overflow,
 * non-finite values and values outside [lo, hi], so that a mistyped option
 * is an error naming it, not a silent other run.
 */
#ifndef GS_NUMARG_H
#define GS_NUMARG_H

/* A base-10 integer (an optional sign, digits) in [lo, hi]: 0 and *out set, or -1 and *out untouched. */
int gs_parse_long(const char *s, long lo, long hi, long *out);
/* A finite decimal number (an optional sign, digits with an optional point,
 * an optional exponent: strtod's decimal syntax) in [lo, hi]: 0 and *out set, or -1 and
 * *out untouched. */
int gs_parse_double(const char *s, double lo, double hi, double *out);

#endif
