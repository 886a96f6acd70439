/*
 * metrics.c -- counters and their Prometheus rendering (see metrics.h).
 */
#include "metrics.h"

#include "summary.h"

static const double time_le[GSD_TIME_BUCKETS] = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                                  0.1,    0.2,   0.5,   1,     2,    5,    10};

void gsd_metrics_solve(gsd_metrics *mt, const gs_solve_info *info)
{
    const double seconds = info->time;
    int mi = (info->method >= 0 && info->method < GS_METHOD__COUNT) ? (int)info->method : 0;
    int si = ((int)info->status >= 0 && (int)info->status < GSD_STATUS_SLOTS) ? (int)info->status
                                                                             : 0;
    atomic_fetch_add(&mt->solves[mi][si], 1);
    if (info->crossover)
        atomic_fetch_add(&mt->crossovers[mi], 1);
    int b = 0;
    while (b < GSD_TIME_BUCKETS && seconds > time_le[b])
        b++;
    atomic_fetch_add(&mt->time_bucket[b], 1);
    atomic_fetch_add(&mt->time_sum_us, (long long)(seconds * 1e6));
}

void gsd_metrics_http(gsd_metrics *mt, unsigned code)
{
    unsigned c = code / 100;
    if (c >= 1 && c <= 5)
        atomic_fetch_add(&mt->http[c], 1);
}

void gsd_metrics_render(const gsd_metrics *mt, gs_buf *b, const gsd_gauges *g)
{
    gs_buf_puts(b, "# HELP gapsim_solves_total Solves by method that ran and status.\n"
                    "# TYPE gapsim_solves_total counter\n");
    for (int m = 0; m < GS_METHOD__COUNT; m++)
        for (int s = 0; s < GSD_STATUS_SLOTS; s++) {
            long long v = atomic_load(&mt->solves[m][s]);
            if (!v)
                continue;
            gs_buf_printf(b, "gapsim_solves_total{solver=\"%s\",status=\"%s\"} %lld\n",
                           gs_method_name((gs_method)m), gs_status_name((gs_status)s), v);
        }
    gs_buf_puts(b, "# HELP gapsim_solve_seconds Solve time (the solver's own time).\n"
                    "# TYPE gapsim_solve_seconds histogram\n");
    long long cum = 0;
    for (int i = 0; i <= GSD_TIME_BUCKETS; i++) {
        cum += atomic_load(&mt->time_bucket[i]);
        if (i < GSD_TIME_BUCKETS)
            gs_buf_printf(b, "gapsim_solve_seconds_bucket{le=\"%g\"} %lld\n", time_le[i], cum);
        else
            gs_buf_printf(b, "gapsim_solve_seconds_bucket{le=\"+Inf\"} %lld\n", cum);
    }
    gs_buf_printf(b, "gapsim_solve_seconds_sum %.6f\ngapsim_solve_seconds_count %lld\n",
                   1e-6 * (double)atomic_load(&mt->time_sum_us), cum);
    gs_buf_puts(b, "# HELP gapsim_solve_crossovers_total Solves that GI relative finished "
                    "because the method's own iteration did not finish, by method.\n"
                    "# TYPE gapsim_solve_crossovers_total counter\n");
    for (int m = 0; m < GS_METHOD__COUNT; m++) {
        long long v = atomic_load(&mt->crossovers[m]);
        if (v)
            gs_buf_printf(b, "gapsim_solve_crossovers_total{solver=\"%s\"} %lld\n",
                           gs_method_name((gs_method)m), v);
    }
    gs_buf_printf(b,
                   "# HELP gapsim_cache_hits_total Results served from the result cache.\n"
                   "# TYPE gapsim_cache_hits_total counter\ngapsim_cache_hits_total %lld\n"
                   "# HELP gapsim_cache_misses_total Cache lookups that had to solve.\n"
                   "# TYPE gapsim_cache_misses_total counter\ngapsim_cache_misses_total %lld\n",
                   atomic_load(&mt->cache_hits), atomic_load(&mt->cache_misses));
    gs_buf_printf(b,
                   "# HELP gapsim_summary_cache_hits_total Summaries of ended jobs served "
                   "from memory, not computed.\n"
                   "# TYPE gapsim_summary_cache_hits_total counter\n"
                   "gapsim_summary_cache_hits_total %lld\n"
                   "# HELP gapsim_summaries_computed_total Job summaries computed: full (every "
                   "statistic), counted (another threshold from the cached statistics).\n"
                   "# TYPE gapsim_summaries_computed_total counter\n"
                   "gapsim_summaries_computed_total{kind=\"full\"} %lld\n"
                   "gapsim_summaries_computed_total{kind=\"counted\"} %lld\n",
                   atomic_load(&mt->summary_hits), atomic_load(&mt->summaries_full),
                   atomic_load(&mt->summaries_counted));
    gs_buf_puts(b, "# HELP gapsim_http_responses_total HTTP responses by status class.\n"
                    "# TYPE gapsim_http_responses_total counter\n");
    for (int c = 1; c <= 5; c++)
        gs_buf_printf(b, "gapsim_http_responses_total{class=\"%dxx\"} %lld\n", c,
                       atomic_load(&mt->http[c]));
    gs_buf_printf(b,
                   "# HELP gapsim_assemblies_created_total Assemblies created.\n"
                   "# TYPE gapsim_assemblies_created_total counter\n"
                   "gapsim_assemblies_created_total %lld\n"
                   "# HELP gapsim_clouds_submitted_total Gap clouds submitted.\n"
                   "# TYPE gapsim_clouds_submitted_total counter\n"
                   "gapsim_clouds_submitted_total %lld\n"
                   "# HELP gapsim_results_retained_total Single-solve results deleted by "
                   "retention or the store quota.\n"
                   "# TYPE gapsim_results_retained_total counter\n"
                   "gapsim_results_retained_total %lld\n"
                   "# HELP gapsim_queue_depth Interactive and precompute tasks waiting.\n"
                   "# TYPE gapsim_queue_depth gauge\ngapsim_queue_depth %d\n"
                   "# HELP gapsim_summary_queue_depth Summaries and exports waiting for a "
                   "reader thread.\n"
                   "# TYPE gapsim_summary_queue_depth gauge\ngapsim_summary_queue_depth %d\n"
                   "# HELP gapsim_jobs_active Cloud jobs queued or running.\n"
                   "# TYPE gapsim_jobs_active gauge\ngapsim_jobs_active %d\n"
                   "# HELP gapsim_assemblies_loaded Assemblies with factors in memory.\n"
                   "# TYPE gapsim_assemblies_loaded gauge\ngapsim_assemblies_loaded %d\n"
                   "# HELP gapsim_assemblies_in_memory Assemblies in use or with a model "
                   "or factors in memory.\n"
                   "# TYPE gapsim_assemblies_in_memory gauge\ngapsim_assemblies_in_memory %d\n"
                   "# HELP gapsim_assemblies_bytes Bytes the assemblies in memory hold "
                   "(model, factors, factor cache) at the last count.\n"
                   "# TYPE gapsim_assemblies_bytes gauge\ngapsim_assemblies_bytes %lld\n"
                   "# HELP gapsim_assemblies_unloaded_total Idle assemblies unloaded for "
                   "--max-loaded-mb (loaded again when next used).\n"
                   "# TYPE gapsim_assemblies_unloaded_total counter\n"
                   "gapsim_assemblies_unloaded_total %ld\n"
                   "# HELP gapsim_factor_cache_hits_total Warm starts whose contact-set "
                   "factor was copied from the factor cache, not built.\n"
                   "# TYPE gapsim_factor_cache_hits_total counter\n"
                   "gapsim_factor_cache_hits_total %ld\n"
                   "# HELP gapsim_factor_cache_misses_total Warm starts that built their "
                   "contact-set factor (and stored it).\n"
                   "# TYPE gapsim_factor_cache_misses_total counter\n"
                   "gapsim_factor_cache_misses_total %ld\n"
                   "# HELP gapsim_factor_cache_bytes Bytes held by the factor caches of the "
                   "loaded assemblies.\n"
                   "# TYPE gapsim_factor_cache_bytes gauge\ngapsim_factor_cache_bytes %lld\n"
                   "# HELP gapsim_uptime_seconds Seconds since the daemon started.\n"
                   "# TYPE gapsim_uptime_seconds gauge\ngapsim_uptime_seconds %.3f\n",
                   atomic_load(&mt->assemblies_created), atomic_load(&mt->clouds_submitted),
                   atomic_load(&mt->results_retained),
                   g->queue_depth, g->summary_queue_depth, g->jobs_active,
                   g->assemblies_loaded, g->assemblies_in_memory, g->assemblies_bytes,
                   g->assemblies_unloaded,
                   g->fcache_hits, g->fcache_misses, g->fcache_bytes,
                   g->uptime);
}

void gsd_metrics_summary(gsd_metrics *mt, int cached, int computed)
{
    if (cached)
        atomic_fetch_add(&mt->summary_hits, 1);
    if (computed == GSD_SUMMARY_FULL)
        atomic_fetch_add(&mt->summaries_full, 1);
    if (computed == GSD_SUMMARY_COUNTED)
        atomic_fetch_add(&mt->summaries_counted, 1);
}
