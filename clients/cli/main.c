/*
 * main.c -- `gapsim`, the command-line client of gapsimd: global options
 * (--server URL / GAPSIM_SERVER, --json, --help, --version), dispatch to the
 * command groups (cmd_*.c) and the exit code. docs/cli.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "args.h"
#include "cli.h"
#include "http.h"
#include "outfile.h"

static const char top_help[] =
    "usage: gapsim [--server URL] [--token T] [--cacert F] [--json] COMMAND [ARGS...]\n"
    "Command-line client of gapsimd (contact-QP solves on assemblies over HTTP).\n"
    "commands:\n"
    "  assembly upload MODEL.json [--wait]   upload a model (with its .npy files)\n"
    "  assembly list | show ID | delete ID   the server's assemblies\n"
    "  solve --assembly ID --gaps G.npy ...  one solve (--help for the options)\n"
    "  cloud submit --assembly ID --gaps GAPS.npy [--wait]   a gap cloud job\n"
    "  cloud list | status JOB | cancel JOB | summary JOB | results JOB -o W.npy\n"
    "  cloud export JOB --format csv|html|vtk -o FILE   files for ParaView, reports\n"
    "  gen --kind lap|sandwich|lap-fine ...  build an FE assembly model (offline)\n"
    "  pair --upper UP.csv --lower LO.csv    contact pairs from two node sets (offline)\n"
    "  health                                the server's /healthz\n"
    "global options (anywhere on the line; --opt=VALUE too):\n"
    "  --server URL   the daemon (default $GAPSIM_SERVER, else " GC_DEFAULT_SERVER ")\n"
    "  --token T      bearer token for a daemon with --token-file (default $GAPSIM_TOKEN)\n"
    "  --cacert F     PEM certificate(s) to trust for an https:// server (gapsimd\n"
    "                 --tls-cert; default $GAPSIM_CACERT, else the system's CAs)\n"
    "  --json         print the server's JSON answer as is instead of tables\n"
    "  -h, --help     help of gapsim or of any command (gapsim cloud submit --help)\n"
    "  --version      the client's version\n"
    "exit codes: 0 ok, 1 the server answered an error, 2 usage error, 3 cannot connect,\n"
    "            4 a waited-for job failed or was cancelled, 5 local file error\n";

static int run(int argc, char **argv)
{
    gc_ctx cx = {.server = getenv("GAPSIM_SERVER"), .token = getenv("GAPSIM_TOKEN"),
                 .cacert = getenv("GAPSIM_CACERT"), .tty = isatty(STDERR_FILENO)};
    if (!cx.server || !*cx.server)
        cx.server = GC_DEFAULT_SERVER;
    int a = 1;
    /* global options before the command (gc_args reads them after it) */
    while (a < argc && argv[a][0] == '-') {
        const char *s = argv[a];
        if (!strcmp(s, "-h") || !strcmp(s, "--help"))
            return gc_group_help(top_help, 0);
        if (!strcmp(s, "--version")) {
            printf("gapsim %s (libcurl %s)\n", GAPSIM_VERSION, curl_version_info(CURLVERSION_NOW)->version);
            return GC_OK;
        }
        const int g = gc_global_opt(&cx, "gapsim", argc, argv, &a);
        if (g < 0)
            return GC_EUSAGE;
        if (g == 0) {
            fprintf(stderr, "gapsim: unknown option %s (see gapsim --help)\n", s);
            return GC_EUSAGE;
        }
    }
    if (a >= argc) {
        fputs(top_help, stderr);
        return GC_EUSAGE;
    }
    const char *cmd = argv[a];
    int sub_argc = argc - a;
    char **sub_argv = argv + a;
    int rc;
    gc_catch_signals(); /* a signal removes the temporary file of an output (outfile.h) */
    gc_http_init();
    if (!strcmp(cmd, "assembly"))
        rc = gc_cmd_assembly(&cx, sub_argc, sub_argv);
    else if (!strcmp(cmd, "solve"))
        rc = gc_cmd_solve(&cx, sub_argc, sub_argv);
    else if (!strcmp(cmd, "cloud"))
        rc = gc_cmd_cloud(&cx, sub_argc, sub_argv);
    else if (!strcmp(cmd, "gen"))
        rc = gc_cmd_gen(&cx, sub_argc, sub_argv);
    else if (!strcmp(cmd, "pair"))
        rc = gc_cmd_pair(&cx, sub_argc, sub_argv);
    else if (!strcmp(cmd, "health"))
        rc = gc_cmd_health(&cx, sub_argc, sub_argv);
    else if (!strcmp(cmd, "help"))
        rc = gc_group_help(top_help, 0);
    else {
        fprintf(stderr, "gapsim: unknown command '%s' (see gapsim --help)\n", cmd);
        rc = GC_EUSAGE;
    }
    gc_http_cleanup();
    return rc;
}

/* What went to stdout (tables, --json answers, an answer streamed without
 * -o) must have reached it: a full disk or /dev/full is exit 5 with the
 * reason, as for -o FILE, not a silent 0 over a truncated or empty file.
 * Another failure already reported keeps its code. A stdout that was
 * closed (>&-) and never written to is not an error. */
static int finish_stdout(int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int saved = gc_stdout_errno() ? gc_stdout_errno() : errno;
    bad |= ferror(stdout) != 0;
    if (fclose(stdout) != 0 && !(errno == EBADF && !bad)) {
        if (!bad)
            saved = errno;
        bad = 1;
    }
    if (!bad)
        return rc;
    fprintf(stderr, "gapsim: cannot write the answer: %s\n", strerror(saved ? saved : EIO));
    return rc == GC_OK ? GC_EFILE : rc;
}

int main(int argc, char **argv)
{
    return finish_stdout(run(argc, argv));
}
