/*
 * api_misc.c -- GET /healthz (with the BLAS kernel in use), GET /metrics, and
 * the web page's static files (GET / and GET /web/<file> from --web-dir).
 */
#define _GNU_SOURCE
#include "api.h"
#include "integrity.h"

#include <stdio.h>
#include <string.h>

#include "ids.h"
#include "jobs.h"
#include "linalg.h"
#include "pool.h"
#include "registry.h"
#include "upkeep.h"

void gsd_h_healthz(gsd_req *r)
{
    gsd_app *app = r->app;
    gs_buf b = {0};
    const long long free_mb = gsd_disk_free_mb(app);
    char why[2][320];
    double used_mb = -1;
    const int n = gsd_upkeep_health(app, why, sizeof why[0], &used_mb);
    size_t asm_bytes;
    long unloaded;
    gsd_registry_memory(app->reg, &asm_bytes, &unloaded);
    gs_buf_printf(&b,
                   "{\"status\":\"%s\",\"version\":\"%s\",\"uptime_s\":%.3f,\"workers\":%d,"
                   "\"queue_depth\":%d,\"jobs_active\":%d,\"assemblies_loaded\":%d,"
                   "\"assemblies_mb\":%.3f,\"disk_free_mb\":%lld,\"store_mb\":%.3f,"
                   "\"reasons\":[",
                   n ? "degraded" : "ok", GAPSIM_VERSION, gsd_unix_now() - app->started,
                   app->o.workers, gsd_pool_depth(app->pool), gsd_jobs_active(app->jobs),
                   gsd_registry_loaded(app->reg), (double)asm_bytes / 1048576.0, free_mb,
                   used_mb);
    for (int i = 0; i < n; i++)
        gs_buf_printf(&b, "%s\"%s\"", i ? "," : "", why[i]); /* no quotes or backslashes */
    int pinned;
    const char *build;
    const char *kernel = gs_blas_kernel(&pinned, &build);
    gs_buf_puts(&b, "],\"blas\":{\"kernel\":");
    gs_buf_json_str(&b, kernel);
    gs_buf_printf(&b, ",\"pinned\":%s,\"build\":", pinned ? "true" : "false");
    gs_buf_json_str(&b, build);
    gs_buf_puts(&b, "}}");
    gsd_reply_json(r, 200, &b);
}

void gsd_h_metrics(gsd_req *r)
{
    gsd_app *app = r->app;
    gs_buf b = {0};
    gs_fcache_stats fc;
    gsd_registry_fcache_stats(app->reg, &fc);
    size_t asm_bytes;
    long unloaded;
    gsd_registry_memory(app->reg, &asm_bytes, &unloaded);
    const gsd_gauges g = {.queue_depth = gsd_pool_depth(app->pool),
                          .summary_queue_depth = gsd_pool_depth(app->readers),
                          .jobs_active = gsd_jobs_active(app->jobs),
                          .assemblies_loaded = gsd_registry_loaded(app->reg),
                          .assemblies_in_memory = gsd_registry_entries(app->reg),
                          .assemblies_bytes = (long long)asm_bytes,
                          .assemblies_unloaded = unloaded,
                          .fcache_hits = fc.hits,
                          .fcache_misses = fc.misses,
                          .fcache_bytes = (long long)fc.bytes,
                          .uptime = gsd_unix_now() - app->started};
    gsd_metrics_render(&app->metrics, &b, &g);
    gsd_reply(r, 200, "text/plain; version=0.0.4", &b);
}

static const char *mime_of(const char *path)
{
    static const char *const map[][2] = {
        {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},   {".svg", "image/svg+xml"},
        {".png", "image/png"},                 {".json", "application/json"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(dot, map[i][0]))
            return map[i][1];
    return "application/octet-stream";
}

static void serve_file(gsd_req *r, const char *rel)
{
    if (!r->app->o.web_dir[0]) {
        gsd_reply_error(r, 404, "not_found", "", "this server has no web page (--web-dir)");
        return;
    }
    /* names below the web directory only: no "..", no hidden files */
    for (const char *c = rel; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-' || *c == '/') ||
            (*c == '.' && (c == rel || c[-1] == '/'))) {
            gsd_reply_error(r, 404, "not_found", "", "no such file");
            return;
        }
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", r->app->o.web_dir, rel);
    if (gsd_reply_file(r, path, mime_of(path)))
        gsd_reply_error(r, 404, "not_found", "", "no such file");
}

void gsd_h_index(gsd_req *r)
{
    serve_file(r, "index.html");
}

void gsd_h_static(gsd_req *r)
{
    serve_file(r, r->rest);
}
