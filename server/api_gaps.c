/*
 * api_gaps.c -- GET /v1/jobs/{id}/gaps: a cloud's input gaps.
 *
 * Without parameters: the stored k x m .npy as submitted (streamed from the
 * file). With ?index=i: gap vector i as JSON {"job_id", "index", "g": [...]}.
 * The web page colours the junction by initial gap with it.
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

static void one_gap(gsd_req *r, const gsd_job_row *row, const char *path, long index)
{
    gs_npy_file f = {.fd = -1};
    gs_error e;
    if (gs_npy_open(path, (size_t)-1 / 8, &f, &e)) {
        gsd_reply_error(r, 500, "io_error", "", "cannot read the gaps of %s: %s", row->id, e.msg);
        return;
    }
    size_t m = f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1];
    double *g = malloc(sizeof(double) * (m > 0 ? m : 1));
    size_t bytes = sizeof(double) * m;
    if (!g || pread(f.fd, g, bytes, (off_t)(f.data_offset + (size_t)index * bytes)) !=
                  (ssize_t)bytes) {
        free(g);
        gs_npy_close(&f);
        gsd_reply_error(r, 500, "io_error", "", "cannot read gap %ld of %s", index, row->id);
        return;
    }
    gs_npy_close(&f);
    gs_buf b = {0};
    gs_buf_printf(&b, "{\"job_id\":\"%s\",\"index\":%ld,\"units\":\"mm\",\"g\":", row->id, index);
    gs_buf_json_nums(&b, g, (int)m);
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
        one_gap(r, &row, path, index);
        gsd_job_row_free(&row);
        return;
    }
    gsd_job_row_free(&row);
    gsd_reply_file(r, path, "application/x-npy");
}
