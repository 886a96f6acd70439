/*
 * metrics.h -- the daemon's counters, exported at GET /metrics.
 *
 * Owns: lock-free counters (C11 atomics) updated by workers and connection
 * threads, and their Prometheus text rendering: solves by method and status,
 * a solve-time histogram, crossovers by method, cache hits and misses, HTTP
 * responses by status class. Gauges (queue depth, jobs) are read from their owners at render time.
 */
#ifndef GSD_METRICS_H
#define GSD_METRICS_H

#include <stdatomic.h>

#include "buf.h"
#include "gs_status.h"
#include "solver.h"

#define GSD_TIME_BUCKETS 14
#define GSD_STATUS_SLOTS 16

typedef struct {
    atomic_llong solves[GS_METHOD__COUNT][GSD_STATUS_SLOTS];
    atomic_llong time_bucket[GSD_TIME_BUCKETS + 1]; /* last: +Inf */
    atomic_llong time_sum_us;
    atomic_llong crossovers[GS_METHOD__COUNT]; /* solves GI relative finished, by method */
    atomic_llong cache_hits, cache_misses;
    atomic_llong summary_hits;    /* summaries served from the summary cache (summary.h) */
    atomic_llong summaries_full, summaries_counted; /* summaries computed (summary.h) */
    atomic_llong http[6]; /* 1xx..5xx by class, [0] unused */
    atomic_llong assemblies_created, clouds_submitted;
    atomic_llong results_retained; /* single solves deleted by retention or the quota */
} gsd_metrics;

/* One solve: its method, status, time and crossover (gs_solve_info). */
void gsd_metrics_solve(gsd_metrics *mt, const gs_solve_info *info);
void gsd_metrics_http(gsd_metrics *mt, unsigned code);
/* A summary answered: from the cache (cached), or computed (computed:
 * GSD_SUMMARY_FULL / GSD_SUMMARY_COUNTED of summary.h, 0: neither). */
void gsd_metrics_summary(gsd_metrics *mt, int cached, int computed);
/* The gauges read at render time. */
typedef struct {
    int queue_depth;         /* interactive and precompute tasks waiting for a worker */
    int summary_queue_depth; /* summaries and exports waiting for a reader */
    int jobs_active;
    int assemblies_loaded;
    int assemblies_in_memory;        /* registry entries: loaded, loading or held */
    long long assemblies_bytes;      /* their memory at the last count (registry.h) */
    long assemblies_unloaded;        /* unloaded for --max-loaded-mb: counter */
    long fcache_hits, fcache_misses; /* factor caches (fcache.h): counters */
    long long fcache_bytes;          /* their size now */
    double uptime;
} gsd_gauges;

/* Render counters plus the given gauges in Prometheus text format 0.0.4. */
void gsd_metrics_render(const gsd_metrics *mt, gs_buf *b, const gsd_gauges *g);

#endif
