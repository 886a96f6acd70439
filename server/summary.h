/*
 * summary.h -- a job's summary (GET /v1/jobs/{id}/summary): its stored
 * results fed to the cloud statistics (runner/cloudstats.h, shared with gapsim-mpi).
 *
 * What it holds and what it costs: runner/cloudstats.h (one or two passes
 * over the job's stored results, O(k m)).
 */
#ifndef GSD_SUMMARY_H
#define GSD_SUMMARY_H

#include "buf.h"
#include "store.h"

typedef struct {
    double threshold; /* mm */
    int bins;         /* histogram bins */
    const char *gaps_path; /* the job's gaps.npy (w > g: pairs opened), or NULL */
} gsd_summary_opts;

gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                   gs_buf *b, gs_error *err);

#endif
