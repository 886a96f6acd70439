/*
 * summary.c -- a job's summary from the store (see summary.h): the stored
 * results fed to the cloud statistics (runner/cloudstats.h), one or two
 * passes over the job's rows.
 */
#include "summary.h"

#include "cloudstats.h"

typedef struct {
    gs_cstats *s;
    int pass;
    gs_err rc;
    gs_error *err;
} feed_ctx;

static int feed(const gsd_result_row *r, void *ctx)
{
    feed_ctx *f = ctx;
    gs_cstats_row row = {.w = r->w, .m = r->m, .time = r->time, .n_act = r->n_act,
                         .iterations = r->iterations, .warm_used = r->warm_used,
                         .status = r->status, .method = r->method, .form = r->form};
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
    feed_ctx f = {.s = s, .pass = 1, .err = err};
    gs_err rc = gsd_store_job_results(st, job->id, 0, -1, 1, feed, &f, err);
    if (!rc)
        rc = f.rc;
    if (!rc && gs_cstats_second_pass(s)) {
        f.pass = 2;
        rc = gsd_store_job_results(st, job->id, 0, -1, 1, feed, &f, err);
    }
    if (!rc)
        rc = gs_cstats_json(s, job->id, job->assembly_id, job->status, job->total, b, err);
    gs_cstats_free(s);
    return rc;
}
