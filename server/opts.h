/*
 * opts.h -- gapsimd's command line: its defaults, its reading, its help.
 *
 * Owns: the option table of the daemon (docs/operations.md lists every
 * option) and the range of each value. Reading is pure apart from
 * getopt_long's own state, which it resets: no output, no exit; the daemon
 * (gapsimd_main.c) prints the message, the fuzz target
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

/* Read argv[1..argc) (getopt_long: --name value, --name=value, unambiguous
 * prefixes) into o, set by gsd_opts_defaults: 0 go on (every value in its
 * range, --tls-cert and --tls-key together, --default-timeout <= --max-timeout),
 * 1 help (--help or -h met before any error), 2 error with msg (one line, no
 * newline). getopt_long permutes argv (non-options last). Not thread-safe
 * (getopt's globals). O(argc x options). */
int gsd_opts_parse(int argc, char **argv, gsd_opts *o, char *msg, size_t cap);

/* The --help text. */
void gsd_opts_usage(FILE *f);

#endif
