/*
 * opts.h -- gapsimd's command line: its defaults, its reading, its help.
 *
 * Owns: the option table of the daemon (docs/operations.md lists every
 * option) and the range of each value. Reading is pure (no output, no
 * exit, no global state): the daemon (gapsimd_main.c) prints the message,
 * the fuzz target
 * tests/fuzz/fuzz_daemon_opts.c calls it as the daemon does. The struct
 * itself, gsd_opts, is in app.h.
 */
#ifndef GSD_OPTS_H
#define GSD_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "app.h"

/* The defaults: the fixed ones (docs/operations.md) and those read off the
 * machine: workers = online cores, max_loaded_mb = half the memory the
 * process may use (core/memlimit.h). */
void gsd_opts_defaults(gsd_opts *o);

/* Read argv[1..argc) (each option in full: --name value or --name=value;
 * -h) into o, set by gsd_opts_defaults: 0 go on (every value in its range,
 * --tls-cert and --tls-key together, --default-timeout <= --max-timeout),
 * 1 help (--help or -h met before any error), 2 error with msg (cap > 0
 * bytes; one line naming the word: an unknown option, a missing value, a
 * flag's value, a word that is no option, a value out of range). argv is
 * not changed. O(argc x options). */
int gsd_opts_parse(int argc, char **argv, gsd_opts *o, char *msg, size_t cap);

/* The --help text. */
void gsd_opts_usage(FILE *f);

#endif
