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

/* A global option at argv[*a] (--server URL, --token T, --cacert F, --json;
 * a value also as --opt=VALUE) where gc_args does not read the line: before
 * the command (main) and between a group and its command (gapsim cloud
 * --json list). Applied to cx, *a moved past it and its value. 1 taken, 0
 * not a global option (*a unchanged), -1 after a usage error naming prog
 * (a missing value, an empty URL). */
int gc_global_opt(gc_ctx *cx, const char *prog, int argc, char **argv, int *a);

/* The longest id (assembly, job) the command sends: a longer one is no id
 * of the server's (a_ or j_ and 16 hex digits) and would not fit the
 * request's path; gc_arg_id refuses it (usage error, exit 2). */
#define GC_ID_MAX 100
int gc_arg_id(const char *prog, const char *what, const char *id);

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

/* The command word of a group (argv[0] is the group's word, prog "gapsim
 * cloud"): the global options before it applied (gc_global_opt), *sub its
 * index in argv. -1 to go on; else the exit code after the group's help
 * (-h, --help, help: stdout, 0; no command: stderr, 2) or a usage error. */
int gc_group_command(gc_ctx *cx, const char *prog, const char *help, int argc, char **argv,
                     int *sub);

#endif
