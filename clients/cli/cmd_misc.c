/*
 * cmd_misc.c -- `gapsim gen` (the FE generator, gen/gen_cli.h, the same code
 * as gapsim-gen: its option table read by gc_args like every command's, with
 * the global options; its failure exit 1 becomes 5, a local file/model
 * error) and `gapsim health` (GET /healthz).
 */
#include <stdio.h>

#include "args.h"
#include "cli.h"
#include "gen_cli.h"
#include "http.h"
#include "out.h"
#include "progress.h"

int gc_cmd_gen(gc_ctx *cx, int argc, char **argv)
{
    char usage[96];
    snprintf(usage, sizeof usage, "gapsim gen %s", gs_gen_usage);
    const gc_cmd cmd = {"gapsim gen", gs_gen_help, usage, 0, 0};
    gs_gen_args ga = {{0}, {0}};
    gc_opt opts[GS_GEN_NOPTS + 1] = {{0}}; /* the generator's table, read as every command's */
    for (int k = 0; k < GS_GEN_NOPTS; k++)
        opts[k] = (gc_opt){gs_gen_opts[k].name, NULL,
                           gs_gen_opts[k].has_value ? &ga.value[k] : NULL,
                           gs_gen_opts[k].has_value ? NULL : &ga.flag[k]};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    rc = gs_gen_run(cmd.prog, &ga);
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
