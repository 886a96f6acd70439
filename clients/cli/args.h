/*
 * args.h -- argument parsing for the `gapsim` commands: a table of long
 * options per command (flags and valued options, "--opt value" or
 * "--opt=value", an optional short alias), positional arguments, the global
 * options every command accepts (--server URL, --json, --help), and checked
 * conversions of option values. Usage errors print one line naming the
 * command and return GC_EUSAGE.
 */
#ifndef GC_ARGS_H
#define GC_ARGS_H

#include "cli.h"

typedef struct {
    const char *name;   /* "--wait" */
    const char *alias;  /* "-o", or NULL */
    const char **value; /* valued option: receives the argument; NULL: a flag */
    int *flag;          /* flag: set to 1 */
} gc_opt;

typedef struct {
    const char *prog;  /* "gapsim cloud submit" */
    const char *help;  /* the --help text (after the usage line) */
    const char *usage; /* the usage line, without "usage: " */
    int min_pos, max_pos;
} gc_cmd;

/* Parse argv[1..argc) (argv[0] is the command word) against opts (NULL
 * terminated by name). Positional arguments go to pos[0..*npos). Returns -1
 * to go on, 0 after printing --help, GC_EUSAGE after a usage error. */
int gc_args(gc_ctx *cx, const gc_cmd *cmd, const gc_opt *opts, int argc, char **argv,
            const char **pos, int *npos);

/* Print "PROG: message (see PROG --help)" on stderr; returns GC_EUSAGE. */
int gc_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checked conversions; on a bad value they print a usage error and return
 * GC_EUSAGE, else 0. */
int gc_arg_long(const char *prog, const char *opt, const char *s, long lo, long hi, long *out);
int gc_arg_double(const char *prog, const char *opt, const char *s, double lo, double hi,
                  double *out);
/* "i,j,k" of distinct-or-not non-negative integers -> malloc'ed array. */
int gc_arg_index_list(const char *prog, const char *opt, const char *s, int **out, int *n);

/* The usage text of a command group: "usage: ..." lines and a list of
 * subcommands; printed on --help (stdout) or a usage error (stderr). */
int gc_group_help(const char *text, int to_stderr);

#endif
