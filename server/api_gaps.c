/*
 * api_gaps.c -- GET /v1/jobs/{id}/gaps: a cloud's input gaps.
 *
 * Without parameters: the stored k x m .npy as submitted (streamed from the
 * file). With ?index=i: gap vector i as JSON {"job_id", "index", "g": [...]}.
 * The web page colours the junction by initial gap with it. A job whose
 * gaps file is gone (it failed to resume after the data directory lost
 * it) answers both the same 409, naming the job's lost gaps.
 */
#define _GNU_SOURCE
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobs.h"
#include "npy.h"

/* The job exists but its gaps file does not: not a 404 (the job is
 * there) nor a 500 that hides why; the conflict of asking a job for
 * what it lost, as a cloud's gaps_from of such a job is. */
static void reply_lost_gaps(gsd_req *r, const char *id)
{
    gsd_reply_error(r, 409, "conflict", "id",
                    "the gaps of job %s are lost: its gaps file (jobs/%s/gaps.npy in the data "
                    "directory) is missing", id, id);
}

int gsd_api_gap_row(gsd_req *r, const gsd_job_row *row, long index, double *g, int m)
{
    char path[PATH_MAX];
    gsd_jobs_gaps_path(r->app, row->id, path, sizeof path);
    gs_npy_file f = {.fd = -1};
    gs_error e;
    if (gs_npy_open(path, (size_t)-1 / 8, &f, &e)) {
        struct stat sb;
        if (stat(path, &sb) != 0 && errno == ENOENT)
            reply_lost_gaps(r, row->id);
        else
            gsd_reply_error(r, 500, "io_error", "", "cannot read the gaps of %s: %s", row->id,
                            e.msg);
        return 0;
    }
    size_t cols = f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1];
    size_t bytes = sizeof(double) * (size_t)m;
    if (cols != (size_t)m ||
        pread(f.fd, g, bytes, (off_t)(f.data_offset + (size_t)index * bytes)) != (ssize_t)bytes) {
        gs_npy_close(&f);
        gsd_reply_error(r, 500, "io_error", "", "cannot read gap %ld of %s", index, row->id);
        return 0;
    }
    gs_npy_close(&f);
    return 1;
}

static void one_gap(gsd_req *r, const gsd_job_row *row, int m, long index)
{
    double *g = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    if (!g) {
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return;
    }
    if (!gsd_api_gap_row(r, row, index, g, m)) {
        free(g);
        return;
    }
    gs_buf b = {0};
    gs_buf_printf(&b, "{\"job_id\":\"%s\",\"index\":%ld,\"units\":\"mm\",\"g\":", row->id, index);
    gs_buf_json_nums(&b, g, m);
    gs_buf_puts(&b, "}");
    free(g);
    gsd_reply_json(r, 200, &b);
}

void gsd_h_job_gaps(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    char path[PATH_MAX];
    gsd_jobs_gaps_path(r->app, row.id, path, sizeof path);
    long index = -1;
    if (!gsd_api_query_int(r, "index", -1, 0, row.total - 1, &index)) {
        gsd_job_row_free(&row);
        return;
    }
    if (index >= 0) {
        gsd_assembly_row arow;
        int found = 0;
        gs_error e;
        if (gsd_store_assembly_get(r->app->st, row.assembly_id, &arow, &found, &e) || !found)
            gsd_reply_error(r, 404, "not_found", "id", "the assembly of job %s is gone", row.id);
        else
            one_gap(r, &row, arow.m, index);
        gsd_job_row_free(&row);
        return;
    }
    const int errnum = gsd_reply_file(r, path, "application/x-npy");
    if (errnum == ENOENT)
        reply_lost_gaps(r, row.id);
    else if (errnum)
        gsd_reply_io_error(r, errnum, "cannot read the gaps of %s", row.id);
    gsd_job_row_free(&row);
}
