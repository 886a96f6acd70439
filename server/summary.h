/*
 * summary.h -- statistics of a cloud's results (GET /v1/jobs/{id}/summary).
 *
 * Over the finished gaps of a job: per pair mean / std / max / p95 residual
 * gap, share above a threshold and mean contact force; per gap the largest residual (mean,
 * median, p95, max) and the share of gaps whose largest residual exceeds the
 * threshold; a histogram of all residual gaps; distributions of n_act and
 * of solve times (log-spaced bins); counts by status, by solver and of warm
 * starts. The residual histogram counts open pairs only; pairs in contact
 * (lambda > 0, w = 0 up to round-off) are counted apart. With the initial
 * gaps, pairs that open under fastening by more than the threshold
 * (w > g + threshold, at least 1e-9 mm: prying) are counted per pair and
 * per gap.
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
    double threshold;       /* mm */
    int bins;               /* histogram bins */
    const char *gaps_path;  /* the job's gaps.npy (w > g: pairs opened), or NULL */
} gsd_summary_opts;

gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                   gsd_buf *b, gs_error *err);

#endif
