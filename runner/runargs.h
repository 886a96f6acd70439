/*
 * runargs.h -- the command lines of the cloud runners gapsim-batch (cmd/)
 * and gapsim-mpi (mpi/): one table of their options, one reader.
 *
 * Owns: gs_run_args (what a command line asks of a run), the options the two
 * runners share (the model, --gaps, --out, --summary, --factors, --fraction,
 * --threshold, --limit, --threads, --method, --form, --tol, --chain,
 * --progress / --no-progress, --help) and those of one runner only
 * (gapsim-batch: --window; gapsim-mpi: --patterns, --chunk, --bins,
 * --shared-factors, --fresh, --sync), each read and range-checked in one
 * place, so the two programs refuse a value with the same words. Reading is
 * pure: no I/O, no global state; the caller prints the message (the
 * fuzz target tests/fuzz/fuzz_runargs.c calls it as the programs do).
 */
#ifndef GS_RUNARGS_H
#define GS_RUNARGS_H

#include <stddef.h>

#include "chain.h"
#include "solver.h"

typedef enum { GS_RUNNER_BATCH = 1, GS_RUNNER_MPI = 2 } gs_runner;

typedef struct {
    const char *model, *gaps, *out, *summary, *factors, *patterns; /* into argv, or NULL */
    double fraction, threshold;
    long limit;   /* -1: every gap */
    long threads; /* worker threads (gapsim-batch) or per rank (gapsim-mpi) */
    long window, chunk, bins;
    int progress, help, shared, fresh, sync;
    gs_chain_mode chain;
    gs_solve_opts sopts;
} gs_run_args;

/* The defaults of runner r: method auto, fraction 0, threshold 0.1 mm, every
 * gap, chain off, window 64, chunk 16, bins 20, threads 1 and no progress
 * (the programs then set threads and progress from the machine: cores, a
 * terminal on stderr). */
void gs_run_args_defaults(gs_runner r, gs_run_args *a);

/* Read argv[1..argc) of runner r into a (set by gs_run_args_defaults and the
 * caller's own defaults; msg: cap > 0 bytes): 0 go on (every value in range, the solver options
 * valid, the files the runner needs given), 1 help (-h or --help seen; the
 * rest not checked), 2 usage error with msg (one line, no newline, starting
 * with the option at fault, e.g. "--tol: '0' is not a number in (0, 1)").
 * Options are "--name value" (no "--name=value"); the first word not starting
 * with '-' is the model, a second one is an error. O(argc x options). */
int gs_run_args_parse(gs_runner r, int argc, char **argv, gs_run_args *a, char *msg,
                      size_t cap);

#endif
