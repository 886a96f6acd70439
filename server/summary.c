/*
 * summary.c -- a job's summary from the store (see summary.h): the stored
 * results fed to the cloud statistics (runner/cloudstats.h), one or two
 * passes over the job's rows; each row's initial gaps read from the job's
 * gaps file by its index (pread, O(m) per row) when the file is there.
 */
#include "summary.h"

#include <stdlib.h>
#include <unistd.h>

#include "cloudstats.h"
#include "npy.h"

typedef struct {
    gs_cstats *s;
    int pass;
    gs_err rc;
    gs_error *err;
    int gfd;      /* gaps.npy, or -1 */
    size_t goff;  /* its data offset */
    double *grow; /* m: the current row's initial gaps */
} feed_ctx;

static int feed(const gsd_result_row *r, void *ctx)
{
    feed_ctx *f = ctx;
    const size_t bytes = sizeof(double) * (size_t)r->m;
    int have_g = f->pass == 1 && f->gfd >= 0 && r->w && r->job_index >= 0 &&
                 pread(f->gfd, f->grow, bytes, (off_t)(f->goff + (size_t)r->job_index * bytes)) ==
                     (ssize_t)bytes;
    gs_cstats_row row = {.w = r->w, .lam = r->lam, .g = have_g ? f->grow : NULL, .m = r->m,
                         .time = r->time, .n_act = r->n_act, .iterations = r->iterations,
                         .warm_used = r->warm_used, .status = gs_status_name(r->status),
                         .method = gs_method_name(r->method), .form = gs_form_name(r->form)};
    if (f->pass == 2) {
        gs_cstats_add2(f->s, &row);
        return 0;
    }
    f->rc = gs_cstats_add(f->s, &row, f->err);
    return f->rc != GS_OK;
}

gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                   gs_buf *b, gs_error *err)
{
    gs_cstats *s = gs_cstats_new(m, job->total, o->threshold, o->bins, err);
    if (!s)
        return GS_ERR_NOMEM;
    feed_ctx f = {.s = s, .pass = 1, .err = err, .gfd = -1};
    f.grow = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    if (f.grow && o->gaps_path) { /* the initial gaps; absent: "opened" not reported */
        gs_npy_file nf = {.fd = -1};
        gs_error ge;
        if (gs_npy_open(o->gaps_path, (size_t)-1 / 8, &nf, &ge) == GS_OK &&
            (nf.info.ndim == 1 ? nf.info.shape[0] : nf.info.shape[1]) == (size_t)m) {
            f.gfd = nf.fd; /* kept open: read row by row */
            f.goff = nf.data_offset;
            nf.fd = -1;
        }
        gs_npy_close(&nf);
    }
    gs_err rc = f.grow ? gsd_store_job_results(st, job->id, 0, -1, 1, feed, &f, err)
                       : gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    if (!rc)
        rc = f.rc;
    if (!rc && gs_cstats_second_pass(s)) {
        f.pass = 2;
        rc = gsd_store_job_results(st, job->id, 0, -1, 1, feed, &f, err);
    }
    if (!rc)
        rc = gs_cstats_json(s, job->id, job->assembly_id, job->status, job->total, b, err);
    if (f.gfd >= 0)
        close(f.gfd);
    free(f.grow);
    gs_cstats_free(s);
    return rc;
}
