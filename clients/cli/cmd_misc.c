/*
 * cmd_misc.c -- `gapsim gen` (the FE generator, gen/gen_cli.h, the same code
 * as gapsim-gen: its option table read by gc_args like every command's, with
 * the global options; its failure exit 1 becomes 5, a local file/model
 * error; its report held until the run ends, printed only when it succeeded,
 * and the output directories it made removed when it failed, if empty) and
 * `gapsim health` (GET /healthz).
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "gen_cli.h"
#include "http.h"
#include "out.h"
#include "progress.h"

/* The directories of dir (each leading part, cut at a '/', and dir
 * itself) that this call creates, as mkdir -p would, recorded in *made
 * (malloc'ed names, *n_made of them, parents first): only those that
 * mkdir created, so a name that was there, also reached through "..", is
 * never recorded. Best effort: a part that cannot be made stops it (the
 * generator's own mkdir then reports why). */
static void make_dirs_recorded(const char *dir, char ***made, int *n_made)
{
    *made = NULL;
    *n_made = 0;
    char *buf = strdup(dir);
    const size_t len = buf ? strlen(buf) : 0;
    for (size_t i = 1; buf && i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        const char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) == 0) {
            char **grown = realloc(*made, (size_t)(*n_made + 1) * sizeof *grown);
            char *name = grown ? strdup(buf) : NULL;
            if (!name) { /* cannot record it: undo it now, the generator makes it again */
                (void)rmdir(buf);
                if (grown)
                    *made = grown;
                break;
            }
            *made = grown;
            (*made)[(*n_made)++] = name;
        } else if (errno != EEXIST) {
            break;
        }
        buf[i] = c;
    }
    free(buf);
}

/* After a failed run: the directories make_dirs_recorded made removed,
 * deepest first, with rmdir only: a directory that holds anything (a file
 * the run left, another process's) stays, and no file is ever deleted. */
static void remove_made(char **made, int n_made)
{
    for (int i = n_made - 1; i >= 0; i--)
        (void)rmdir(made[i]);
}

/* gs_gen_run with its report (stdout) held in memory until it ends: printed
 * only when the run succeeded, so that a failed one (exit 5: a full disk)
 * prints nothing on stdout. A closed stdout, or no memfd: not held. */
static int run_held(const char *prog, const gs_gen_args *ga)
{
    fflush(stdout);
    const int saved = dup(STDOUT_FILENO);
    const int mfd = saved >= 0 ? memfd_create("gapsim-gen-report", MFD_CLOEXEC) : -1;
    if (mfd < 0 || dup2(mfd, STDOUT_FILENO) < 0) {
        if (mfd >= 0)
            close(mfd);
        if (saved >= 0)
            close(saved);
        return gs_gen_run(prog, ga);
    }
    const int rc = gs_gen_run(prog, ga);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    if (rc == 0 && lseek(mfd, 0, SEEK_SET) == 0) {
        char buf[65536];
        ssize_t n;
        while ((n = read(mfd, buf, sizeof buf)) > 0)
            fwrite(buf, 1, (size_t)n, stdout);
    }
    close(mfd);
    return rc;
}

int gc_cmd_gen(gc_ctx *cx, int argc, char **argv)
{
    char usage[96];
    snprintf(usage, sizeof usage, "gapsim gen %s", gs_gen_usage);
    const gc_cmd cmd = {"gapsim gen", gs_gen_help, usage, 0, 0};
    gs_gen_args ga = {{0}, {0}};
    gc_opt opts[GS_GEN_NOPTS + 1] = {{0}}; /* the generator's table, read as every command's */
    int out_k = -1;
    for (int k = 0; k < GS_GEN_NOPTS; k++) {
        opts[k] = (gc_opt){gs_gen_opts[k].name, NULL,
                           gs_gen_opts[k].has_value ? &ga.value[k] : NULL,
                           gs_gen_opts[k].has_value ? NULL : &ga.flag[k]};
        if (!strcmp(gs_gen_opts[k].name, "--out"))
            out_k = k;
    }
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    const char *dir = out_k >= 0 && ga.value[out_k] ? ga.value[out_k] : ".";
    char **made;
    int n_made;
    make_dirs_recorded(dir, &made, &n_made); /* to take back what a failed run made */
    rc = run_held(cmd.prog, &ga);
    if (rc != 0) /* a failed run leaves no (empty) directory of its own behind */
        remove_made(made, n_made);
    for (int i = 0; i < n_made; i++)
        free(made[i]);
    free(made);
    return rc == 1 ? GC_EFILE : rc; /* 0 ok, 2 usage */
}

static void print_health(const gc_ctx *cx, const cJSON *h)
{
    char t[64];
    gc_kv("server", "%s", cx->server);
    gc_kv("status", "%s", gc_jstr(h, "status", "-"));
    gc_kv("version", "%s", gc_jstr(h, "version", "-"));
    gc_kv("uptime", "%s", gs_fmt_duration(gc_jnum(h, "uptime_s", 0), t, sizeof t));
    gc_kv("workers", "%d", gc_jint(h, "workers", 0));
    gc_kv("queue_depth", "%d", gc_jint(h, "queue_depth", 0));
    gc_kv("jobs_active", "%d", gc_jint(h, "jobs_active", 0));
    gc_kv("assemblies_loaded", "%d", gc_jint(h, "assemblies_loaded", 0));
    gc_kv("assemblies_mb", "%.1f", gc_jnum(h, "assemblies_mb", 0));
    gc_kv("disk_free_mb", "%.0f", gc_jnum(h, "disk_free_mb", -1));
    gc_kv("store_mb", "%.1f", gc_jnum(h, "store_mb", -1));
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(h, "reasons");
    const cJSON *r;
    cJSON_ArrayForEach(r, why)
        if (cJSON_IsString(r))
            gc_kv("degraded", "%s", r->valuestring);
    const cJSON *blas = cJSON_GetObjectItemCaseSensitive(h, "blas");
    gc_kv("blas_kernel", "%s%s", gc_jstr(blas, "kernel", "-"),
          gc_jbool(blas, "pinned", 0) ? " (chosen by OPENBLAS_CORETYPE)" : "");
}

int gc_cmd_health(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim health",
                        "Ask the server whether it is up (GET /healthz): version, uptime,\n"
                        "workers, queue depth, active jobs, assemblies in memory, disk and\n"
                        "store, why it is degraded, the BLAS kernel. Exit 3 when it cannot be\n"
                        "reached.\n",
                        "gapsim health [--server URL] [--json]", 0, 0};
    const gc_opt opts[] = {{0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    gc_req rq = {.method = "GET", .path = "/healthz"};
    return gc_call_print(cx, cmd.prog, &rq, print_health);
}
