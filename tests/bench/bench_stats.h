/*
 * bench_stats.h -- gapsim-bench's statistics of a sample of times, and the
 * bound it compares them with.
 *
 * Owns: the conventions of the figures gapsim-bench prints and writes. The
 * median of an even count is the midpoint of the two middle values (as
 * numpy.median and statistics.median, which tests/bench/cvxopt_compare.py
 * uses for CVXOPT's times); p95 and the deciles are nearest ranks, the
 * ceil(num n / den)-th smallest value, in integer arithmetic (0.1 * 3 * 10
 * is 3.0000000000000004 in floating point: its ceil is one rank too high).
 * And the bound of one gap: one Cholesky of Q_CC and one product Q[:, C] lam
 * on the final contact set C, timed.
 */
#ifndef GS_BENCH_STATS_H
#define GS_BENCH_STATS_H

#include "precompute.h"

/* Sort v[0..n) ascending. */
void bench_sort(double *v, int n);
/* Median of sorted v[0..n): the middle value, or the midpoint of the two
 * middle values for even n; NaN for n = 0. */
double bench_median(const double *sorted, int n);
/* Nearest rank of sorted v[0..n): the ceil(num n / den)-th smallest value
 * (at least the first), 0 <= num <= den; NaN for n = 0. */
double bench_rank(const double *sorted, int n, int num, int den);
/* The median of the values of v[0..n) that are not NaN (v is reordered:
 * those first, sorted); NaN when there is none. */
double bench_median_of(double *v, int n);

/* Seconds of the bound for one gap's multipliers lam (best of 3): dpotrf of
 * Q_CC, dgemv Q[:, C] lam on C = {i : lam_i != 0}; NaN when Q_CC is not
 * positive definite (dependent pairs in C). QCC, QC: m x m scratch,
 * C: m ints, y: m doubles. */
double bench_bound_time(const gs_precomp *pc, const double *lam, double *QCC, double *QC, int *C,
                        double *y);

#endif
