/*
 * cli.h -- what the `gapsim` command's files share: the exit codes a script
 * can rely on, the global options (server URL, --json, terminal or not) and
 * the entry point of each command group.
 *
 * Exit codes (docs/cli.md):
 *   0 ok
 *   1 the server answered an error (its message and field go to stderr)
 *   2 usage error (unknown option, missing or malformed argument)
 *   3 cannot connect to the server (or the connection broke)
 *   4 a waited-for job ended failed or cancelled
 *   5 local file error (missing, unreadable, malformed or unwritable file)
 */
#ifndef GC_CLI_H
#define GC_CLI_H

enum {
    GC_OK = 0,
    GC_ESERVER = 1,
    GC_EUSAGE = 2,
    GC_ECONNECT = 3,
    GC_EJOB = 4,
    GC_EFILE = 5,
};

#define GC_DEFAULT_SERVER "http://127.0.0.1:8600"

typedef struct {
    const char *server; /* base URL, no trailing '/' needed */
    const char *token;  /* bearer token ($GAPSIM_TOKEN or --token), or NULL */
    const char *cacert; /* CA file for an https:// server ($GAPSIM_CACERT or --cacert), or NULL */
    int json;           /* print the server's JSON as is */
    int tty;            /* stderr is a terminal: progress bar */
} gc_ctx;

/* Command groups: argv[0] is the group's word ("assembly", ...); each returns
 * an exit code. */
int gc_cmd_assembly(gc_ctx *cx, int argc, char **argv);
int gc_cmd_solve(gc_ctx *cx, int argc, char **argv);
int gc_cmd_cloud(gc_ctx *cx, int argc, char **argv);
/* gapsim pair (cmd_pair.c): contact pairs from two node sets, offline */
int gc_cmd_pair(gc_ctx *cx, int argc, char **argv);
/* gapsim cloud export (cmd_export.c) */
int gc_cloud_export(gc_ctx *cx, int argc, char **argv);
int gc_cmd_gen(gc_ctx *cx, int argc, char **argv);
int gc_cmd_health(gc_ctx *cx, int argc, char **argv);

#endif
