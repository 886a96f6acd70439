/*
 * summary.h -- a job's summary (GET /v1/jobs/{id}/summary): its stored
 * results fed to the cloud statistics (runner/cloudstats.h, shared with gapsim-mpi).
 *
 * Over the finished gaps of a job: per pair mean / std / max / p95 residual
 * gap and share above a threshold; per gap the largest residual (mean,
 * median, p95, max) and the share of gaps whose largest residual exceeds the
 * threshold; a histogram of all residual gaps; distributions of n_act and
 * of solve times; counts by status, by solver and of warm starts.
 * Cost: one pass over the stored results, O(k m) time. Memory: O(k m) when
 * k m <= 16M (exact p95 per pair by selection), else a second pass and
 * 256-bin per-pair histograms (p95 to 1/256 of the pair's range; the
 * response says which).
 */
#ifndef GSD_SUMMARY_H
#define GSD_SUMMARY_H

#include "buf.h"
#include "store.h"

typedef struct {
    double threshold; /* mm */
    int bins;         /* histogram bins */
} gsd_summary_opts;

gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                   gs_buf *b, gs_error *err);

#endif
