/*
 * summary.h -- a job's summary (GET /v1/jobs/{id}/summary and the exports):
 * its stored results fed to the cloud statistics (runner/cloudstats.h,
 * shared with gapsim-mpi), and a memory cache of the summaries of ended jobs.
 *
 * What it holds and what it costs: runner/cloudstats.h (one or two passes
 * over the job's stored results, O(k m): seconds to minutes for a cloud of a
 * million gaps). An ended job's results never change (done, failed or
 * cancelled: no solve adds to them, retention deletes single solves only),
 * so its summary for a (threshold, bins) is computed once and then served
 * from the cache (a copy of the text, O(size)) until the least recently
 * used entries make room within the byte budget. The cache also keeps the
 * job's finished statistics for bins: a summary at another threshold is
 * then one O(k m) counting pass over w (and g), no sort, no selection,
 * the same bytes as a full computation.
 */
#ifndef GSD_SUMMARY_H
#define GSD_SUMMARY_H

#include <stdatomic.h>

#include "buf.h"
#include "store.h"

typedef struct gsd_summary_cache gsd_summary_cache;

/* The defaults of GET /v1/jobs/{id}/summary, the summary computed ahead for
 * a job that ends (jobs.c). */
#define GSD_SUMMARY_THRESHOLD 0.1 /* mm */
#define GSD_SUMMARY_BINS 20

typedef struct {
    double threshold; /* mm */
    int bins;         /* histogram bins */
    const char *gaps_path; /* the job's gaps.npy (w > g: pairs opened), or NULL */
    gsd_summary_cache *cache; /* ended jobs' summaries (NULL: always computed) */
    const atomic_int *cancel; /* set: the computation stops at the next result (NULL: none) */
    int ahead;        /* the task of a reservation (gsd_summary_reserve): computes and
                         caches the text (appended to b), never waits; nothing to do
                         (nothing appended) when a request took the reservation over */
    int cached;       /* out: 1 if the text came from the cache */
    int computed;     /* out: GSD_SUMMARY_FULL or GSD_SUMMARY_COUNTED if this call
                         computed it, else 0 */
} gsd_summary_opts;

enum { GSD_SUMMARY_FULL = 1, GSD_SUMMARY_COUNTED = 2 }; /* counted: from the statistics */

/* The summary of job as JSON text appended to b. Cancelled (o->cancel set
 * during the passes): GS_ERR_LIMIT, "summary cancelled", nothing appended.
 * An ended job's summary is computed once: a request for a summary that
 * another thread is computing waits for its text. */
gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, gsd_summary_opts *o,
                   gs_buf *b, gs_error *err);
/* The cached summary of an ended job appended to b: 1 (o->cached set), or 0
 * when o->cache is NULL, the job has not ended or the text is not cached.
 * O(entries + size), no store access: for the connection threads. */
int gsd_summary_lookup(const gsd_job_row *job, gsd_summary_opts *o, gs_buf *b);

/* Reserve the computation of (job, threshold, bins) for a task to come
 * (gsd_summary with o->ahead): 1, or 0 when it is cached or under way
 * already, the cache is off or out of memory. Until the task starts, the
 * first request for it computes it instead. gsd_summary_unreserve drops a
 * reservation whose task will not run. */
int gsd_summary_reserve(gsd_summary_cache *c, const char *job, double threshold, int bins);
void gsd_summary_unreserve(gsd_summary_cache *c, const char *job, double threshold, int bins);

/* Drop every cached text and statistics of the job (its assembly is being
 * deleted; a computation under way may still add its own). O(entries). */
void gsd_summary_forget(gsd_summary_cache *c, const char *job);

/* A cache holding at most budget bytes of summary text (0: caches nothing).
 * Thread-safe. NULL when out of memory. */
gsd_summary_cache *gsd_summary_cache_new(size_t budget);
void gsd_summary_cache_free(gsd_summary_cache *c);

#endif
