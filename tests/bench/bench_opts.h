/*
 * bench_opts.h -- gapsim-bench's command line: its options, the variant list
 * of --methods and the help text.
 *
 * Owns: bench_args (every option, read whole and strictly: numbers through
 * core/numarg.h, a refused word named in a one-line message, exit status 2),
 * bench_variant (one METHOD[:FORM][:OPTION...][@K] of --methods, after '*'
 * and 'all' are expanded), the variant's label and solver options, and the
 * gaps it runs on.
 */
#ifndef GS_BENCH_OPTS_H
#define GS_BENCH_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "generator.h"
#include "solver.h"

/* One variant of --methods. */
typedef struct {
    gs_method method;
    gs_form form;
    gs_npm_linear npm_linear;
    gs_linesearch linesearch;
    gs_ipm_linear ipm_linear;
    gs_ipm_start ipm_start;
    int ngaps; /* @K; 0: every gap of the run */
} bench_variant;

#define BENCH_MAX_VARIANTS 64
#define BENCH_MAX_FRACTIONS 16

typedef struct {
    const char *model_path, *gaps_path, *csv_path, *json_path, *times_path;
    const char *methods; /* --methods as given (NULL: the default list) */
    const char *dump_dir; /* --dump-qp: Q, p and the reference lam as .npy for other solvers */
    gs_gen_kind kind;
    int small, sweep, warm_seq, cloud, dist, repeat, cpu_clock, no_ref, interleave, moves;
    int ngaps;       /* --ngaps K (default 50) */
    int ngaps_given; /* --ngaps was on the command line (with --gaps: the first K rows) */
    unsigned long long seed;
    double fraction, check_tol, scatter; /* check_tol 0: no --check */
    int nfrac;                            /* --fractions: count (0: not given) */
    double fracs[BENCH_MAX_FRACTIONS];
    bench_variant vars[BENCH_MAX_VARIANTS];
    int nv;
} bench_args;

/* Read argv into *a (defaults first). 0: run; 1: --help asked for (the help
 * is printed on stdout); 2: a bad command line, msg (cap bytes) holding one
 * line naming the option or the variant and what is wrong. */
int bench_parse_args(int argc, char **argv, bench_args *a, char *msg, size_t cap);

void bench_usage(FILE *f);

/* "method:form[:option:option]" (auto: "auto"), with the formulation that ran. */
void bench_variant_label(const bench_variant *v, gs_form ran, char *buf, size_t cap);
/* The solver options of a variant (cold start). */
void bench_variant_opts(const bench_variant *v, gs_solve_opts *o);
/* Gaps a variant runs on: its @K, at most the k of the run. */
int bench_variant_gaps(const bench_variant *v, int k);

#endif
