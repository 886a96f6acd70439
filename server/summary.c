/*
 * summary.c -- a job's summary from the store (see summary.h): the stored
 * results fed to the cloud statistics (runner/cloudstats.h), one or two
 * passes over the job's rows; each row's initial gaps read from the job's
 * gaps file by its index (pread, O(m) per row) when the file is there.
 * And the cache of ended jobs' summaries: a list searched linearly (it
 * holds tens of entries: a summary is O(m) text, 0.3 MB at m = 2,603),
 * least recently used evicted first, one mutex.
 */
#include "summary.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudstats.h"
#include "npy.h"

typedef struct {
    gs_cstats *s;
    const atomic_int *cancel;
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
    if (f->cancel && atomic_load(f->cancel)) {
        f->rc = gs_errorf(f->err, GS_ERR_LIMIT, "", "summary cancelled");
        return 1;
    }
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

/* ---- the cache -------------------------------------------------------------- */

typedef struct sum_entry {
    struct sum_entry *next;
    char job[40]; /* as gsd_job_row.id */
    double threshold;
    int bins;
    unsigned long long used; /* tick of the last use */
    size_t len;
    char text[];
} sum_entry;

struct gsd_summary_cache {
    pthread_mutex_t mu;
    size_t budget, bytes;
    unsigned long long tick;
    sum_entry *head;
};

gsd_summary_cache *gsd_summary_cache_new(size_t budget)
{
    gsd_summary_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->budget = budget;
    return c;
}

void gsd_summary_cache_free(gsd_summary_cache *c)
{
    if (!c)
        return;
    for (sum_entry *e = c->head, *next; e; e = next) {
        next = e->next;
        free(e);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static int same_key(const sum_entry *e, const char *job, const gsd_summary_opts *o)
{
    return !strcmp(e->job, job) && e->threshold == o->threshold && e->bins == o->bins;
}

/* Append the cached text of (job, o) to b: 1, or 0 if absent. O(entries + size). */
static int cache_get(gsd_summary_cache *c, const char *job, const gsd_summary_opts *o,
                     gs_buf *b)
{
    int hit = 0;
    pthread_mutex_lock(&c->mu);
    for (sum_entry *e = c->head; e && !hit; e = e->next)
        if (same_key(e, job, o)) {
            e->used = ++c->tick;
            gs_buf_add(b, e->text, e->len); /* out of memory: the caller sees b->oom */
            hit = 1;
        }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

/* Keep a copy of text for (job, o), evicting the least recently used
 * entries beyond the budget; a text above a quarter of the budget is not
 * kept. Out of memory: not kept. O(entries^2) at worst, tens of entries. */
static void cache_put(gsd_summary_cache *c, const char *job, const gsd_summary_opts *o,
                      const char *text, size_t len)
{
    if (len > c->budget / 4)
        return;
    sum_entry *n = malloc(sizeof *n + len);
    if (!n)
        return;
    snprintf(n->job, sizeof n->job, "%s", job);
    n->threshold = o->threshold;
    n->bins = o->bins;
    n->len = len;
    memcpy(n->text, text, len);
    pthread_mutex_lock(&c->mu);
    for (sum_entry *e = c->head; e; e = e->next)
        if (same_key(e, job, o)) { /* computed meanwhile by another request */
            pthread_mutex_unlock(&c->mu);
            free(n);
            return;
        }
    while (c->head && c->bytes + len > c->budget) {
        sum_entry **old = &c->head;
        for (sum_entry **pp = &c->head; *pp; pp = &(*pp)->next)
            if ((*pp)->used < (*old)->used)
                old = pp;
        sum_entry *e = *old;
        *old = e->next;
        c->bytes -= e->len;
        free(e);
    }
    n->used = ++c->tick;
    n->next = c->head;
    c->head = n;
    c->bytes += len;
    pthread_mutex_unlock(&c->mu);
}

/* ---- the statistics ------------------------------------------------------------ */

static gs_err compute(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                      gs_buf *b, gs_error *err)
{
    gs_cstats *s = gs_cstats_new(m, job->total, o->threshold, o->bins, err);
    if (!s)
        return GS_ERR_NOMEM;
    feed_ctx f = {.s = s, .cancel = o->cancel, .pass = 1, .err = err, .gfd = -1};
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
        if (!rc)
            rc = f.rc;
    }
    if (!rc)
        rc = gs_cstats_json(s, job->id, job->assembly_id, job->status, job->total, b, err);
    if (f.gfd >= 0)
        close(f.gfd);
    free(f.grow);
    gs_cstats_free(s);
    return rc;
}

static int job_ended(const gsd_job_row *job)
{
    return !strcmp(job->status, "done") || !strcmp(job->status, "failed") ||
           !strcmp(job->status, "cancelled");
}

int gsd_summary_lookup(const gsd_job_row *job, gsd_summary_opts *o, gs_buf *b)
{
    o->cached = o->cache && job_ended(job) && cache_get(o->cache, job->id, o, b);
    return o->cached;
}

gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, gsd_summary_opts *o,
                   gs_buf *b, gs_error *err)
{
    if (gsd_summary_lookup(job, o, b))
        return GS_OK;
    size_t start = b->len;
    gs_err rc = compute(st, job, m, o, b, err);
    if (!rc && o->cache && job_ended(job) && !b->oom)
        cache_put(o->cache, job->id, o, b->p + start, b->len - start);
    return rc;
}
