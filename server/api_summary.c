/*
 * api_summary.c -- GET /v1/jobs/{id}/summary (JSON, or exported as CSV / VTK
 * / HTML: export.h) and GET /v1/jobs/{id}/results?format=vtp&index=i.
 *
 * The request is checked on the connection thread, and an ended job's
 * summary found in the cache (summary.h) is answered there. Any other
 * summary is a pass over every stored result of the job (seconds to minutes
 * for a large cloud): the request is suspended and a reader thread
 * (app->readers, pool.h) computes it on its own store connection, answers
 * and resumes the connection. So a long summary holds neither a connection
 * thread nor the connection threads' store, and does not wait behind a
 * precomputation. A client that hangs up, or a daemon that stops, cancels
 * it at the next result.
 */
#define _GNU_SOURCE
#include "api.h"
#include "api_query_impl.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "assembly.h"
#include "export.h"
#include "jobs.h"
#include "json_numbers.h"
#include "json_parse.h"
#include "pool.h"
#include "spec.h"
#include "summary.h"

enum { F_JSON, F_CSV, F_VTP, F_HTML };

/* The installed candidates of a job (its stored options resolved on mdl). */
static int job_installed(const gsd_job_row *row, const gs_model *mdl, gsd_spec *sp)
{
    const char *opts = row->options_json ? row->options_json : "{}";
    cJSON *obj = gs_json_parse(opts, strlen(opts), NULL, NULL);
    gs_error e;
    int ok = obj && gsd_spec_parse(obj, mdl->n_fast, mdl->m, 1, sp, &e) == GS_OK;
    cJSON_Delete(obj);
    if (ok && gsd_spec_resolve(sp, mdl, &e) != GS_OK) {
        gsd_spec_free(sp);
        ok = 0;
    }
    return ok;
}

/* Answer the summary document sum (JSON text, taken) as format f on the
 * job's model; gap: one gap's vectors for vtp. */
static void reply_export(gsd_req *r, const gsd_job_row *row, int f, gs_buf *sum,
                         const gsd_export_gap *gap)
{
    static const char *const types[4] = {"", "text/csv; charset=utf-8", "application/xml",
                                         "text/html; charset=utf-8"};
    gs_error e = {0};
    cJSON *doc = gs_json_parse(sum->p, sum->len, NULL, NULL);
    gs_buf_free(sum);
    gsd_asm *a = gsd_registry_acquire(r->app->reg, row->assembly_id);
    if (!doc || !a)
        gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    if (!doc || !a || gsd_asm_model(r->app, a, &e)) {
        cJSON_Delete(doc);
        gsd_registry_release(r->app->reg, a);
        gsd_api_model_unreadable(r, row->assembly_id, &e);
        return;
    }
    gs_buf b = {0};
    if (f == F_CSV) {
        gsd_export_csv(gsd_asm_mdl(a), doc, &b);
    } else if (f == F_VTP) {
        gsd_export_vtp(gsd_asm_mdl(a), doc, gap, &b);
    } else {
        gsd_spec sp;
        int ok = job_installed(row, gsd_asm_mdl(a), &sp);
        gsd_export_html(gsd_asm_mdl(a), doc, row, ok ? sp.installed : NULL, ok ? sp.n_installed : 0, &b);
        if (ok)
            gsd_spec_free(&sp);
    }
    cJSON_Delete(doc);
    gsd_registry_release(r->app->reg, a);
    gsd_reply(r, 200, types[f], &b);
}

/* ---- the request: checked on the connection thread, computed on a reader ---- */

/* The per-pair arrays of the summary's "pairs" (cloudstats.c), in order; a
 * request may ask for some of them (?pairs=). p95_exact goes with p95. */
static const char *const pair_arrays[] = {"mean",        "std",         "max",   "p95",
                                          "share_above", "lambda_mean", "opened"};
#define N_PAIR_ARRAYS 7
#define ALL_PAIR_ARRAYS ((1u << N_PAIR_ARRAYS) - 1)

typedef struct {
    gsd_task t;
    gsd_req *r;
    gsd_job_row row; /* owned */
    int m, f;
    unsigned pairs; /* F_JSON: bit i keeps pair_arrays[i] */
    gsd_summary_opts o;
    char gaps_path[PATH_MAX];
    double *gap;     /* F_VTP with an index: its g, w, lambda (3 m), else NULL */
    int index;
    atomic_int cancel; /* the client hung up or the daemon stops */
} sum_req;

static void sum_req_free(sum_req *q)
{
    gsd_job_row_free(&q->row);
    free(q->gap);
    free(q);
}

/* The summary text without the per-pair arrays the request left out:
 * O(size), on the full text the cache holds. */
static void keep_pairs(gs_buf *sum, unsigned mask)
{
    const char *keep[N_PAIR_ARRAYS + 2];
    int n = 0;
    for (int i = 0; i < N_PAIR_ARRAYS; i++)
        if (mask & (1u << i)) {
            keep[n++] = pair_arrays[i];
            if (!strcmp(pair_arrays[i], "p95"))
                keep[n++] = "p95_exact";
        }
    keep[n] = NULL;
    size_t len = gsd_json_keep_members(sum->p, sum->len, "pairs", keep);
    if (len != (size_t)-1) /* our own text: always found */
        sum->len = len;
}

/* Answer the summary text sum (taken) in the request's format. */
static void answer(sum_req *q, gs_buf *sum)
{
    if (q->f == F_JSON) {
        if (q->pairs != ALL_PAIR_ARRAYS)
            keep_pairs(sum, q->pairs);
        gsd_reply_json(q->r, 200, sum);
        return;
    }
    gsd_export_gap gap = {.index = q->index, .g = q->gap};
    if (q->gap) {
        gap.w = q->gap + q->m;
        gap.lam = q->gap + 2 * (size_t)q->m;
    }
    reply_export(q->r, &q->row, q->f, sum, q->gap ? &gap : NULL);
}

static void sum_run(gsd_task *t, gsd_worker *w)
{
    sum_req *q = (sum_req *)t;
    gs_buf b = {0};
    gs_error e = {0};
    gs_err rc = gsd_summary(w->st, &q->row, q->m, &q->o, &b, &e);
    gsd_req_unwatch(q->r);
    if (rc && atomic_load(&q->cancel)) {
        gs_buf_free(&b);
        gsd_reply_error(q->r, 503, "unavailable", "", "%s",
                        atomic_load(&q->r->app->stopping) ? "the server is shutting down"
                                                          : "the summary was cancelled");
    } else if (rc) {
        gs_buf_free(&b);
        gsd_reply_gs_error(q->r, &e);
    } else {
        gsd_metrics_summary(&q->r->app->metrics, q->o.cached, q->o.computed);
        answer(q, &b);
    }
    gsd_req_finish(q->r);
    sum_req_free(q);
}

static void sum_cancel(gsd_task *t)
{
    sum_req *q = (sum_req *)t;
    gsd_req_abandon(q->r);
    sum_req_free(q);
}

/* Answer q (taken) from the cache right here, or hand it to a reader. */
static void dispatch(sum_req *q)
{
    gsd_req *r = q->r;
    q->o.gaps_path = q->gaps_path;
    q->o.cancel = &q->cancel;
    q->o.cache = gsd_jobs_quiet(r->app->jobs, q->row.id) ? r->app->sums : NULL;
    gs_buf b = {0};
    if (gsd_summary_lookup(&q->row, &q->o, &b)) {
        gsd_metrics_summary(&r->app->metrics, 1, 0);
        answer(q, &b);
        sum_req_free(q);
        return;
    }
    gs_buf_free(&b);
    q->t.run = sum_run;
    q->t.cancel = sum_cancel;
    gsd_req_suspend(r);
    gsd_req_watch(r, &q->cancel);
    if (gsd_pool_submit(r->app->readers, &q->t, GSD_PRIO_INTERACTIVE) != 0)
        sum_cancel(&q->t); /* answers 503 and resumes */
}

/* A request for row (taken) in format f; NULL after answering 503. */
static sum_req *sum_req_new(gsd_req *r, gsd_job_row *row, int m, int f)
{
    sum_req *q = calloc(1, sizeof *q);
    if (!q) {
        gsd_job_row_free(row);
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return NULL;
    }
    q->r = r;
    q->row = *row;
    q->m = m;
    q->f = f;
    q->pairs = ALL_PAIR_ARRAYS;
    q->o.bins = GSD_SUMMARY_BINS;
    gsd_jobs_gaps_path(r->app, row->id, q->gaps_path, sizeof q->gaps_path);
    return q;
}

typedef struct {
    double *w, *lam;
    int m, found;
} one_ctx;

static int copy_one(const gsd_result_row *res, void *ctx)
{
    one_ctx *c = ctx;
    if (res->w && res->lam && res->m == c->m) {
        memcpy(c->w, res->w, sizeof(double) * (size_t)c->m);
        memcpy(c->lam, res->lam, sizeof(double) * (size_t)c->m);
        c->found = 1;
    }
    return 1;
}

void gsd_api_gap_vtp(gsd_req *r, gsd_job_row *row, int m)
{
    long index;
    sum_req *q = sum_req_new(r, row, m, F_VTP);
    if (!q)
        return;
    if (!gsd_api_query_int(r, "index", -1, 0, q->row.total - 1, &index) ||
        !gsd_api_query_num(r, "threshold", GSD_SUMMARY_THRESHOLD, &q->o.threshold)) {
        sum_req_free(q);
        return;
    }
    if (index < 0) {
        gsd_reply_bad_query(r, "index",
                            "format=vtp needs index=i, the gap in [0, %d] (the cloud statistics "
                            "alone: GET /v1/jobs/%s/summary?format=vtp)",
                            q->row.total - 1, q->row.id);
        sum_req_free(q);
        return;
    }
    if (!(q->o.threshold >= 0)) {
        gsd_reply_bad_query(r, "threshold", "threshold must be >= 0 (mm)");
        sum_req_free(q);
        return;
    }
    q->index = (int)index;
    q->gap = malloc(sizeof(double) * 3 * (size_t)(m > 0 ? m : 1));
    if (!q->gap) {
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        sum_req_free(q);
        return;
    }
    one_ctx c = {.w = q->gap + m, .lam = q->gap + 2 * (size_t)m, .m = m};
    gs_error e;
    if (!gsd_api_gap_row(r, &q->row, index, q->gap, m)) {
        sum_req_free(q);
        return;
    }
    if (gsd_store_job_results(r->app->st, q->row.id, (int)index, 1, 1, copy_one, &c, &e)) {
        gsd_api_store_error(r, &e);
        sum_req_free(q);
        return;
    }
    if (!c.found) {
        gsd_reply_error(r, 409, "not_ready", "index", "gap %ld of %s is not solved yet", index,
                        q->row.id);
        sum_req_free(q);
        return;
    }
    dispatch(q);
}

/* ?pairs=NAME,NAME...: which per-pair arrays the JSON summary carries (all
 * when absent; none for "" or "none"). 1, or 0 after answering 422. */
static int query_pairs(gsd_req *r, int f, unsigned *mask)
{
    const char *v = gsd_query(r, "pairs");
    *mask = ALL_PAIR_ARRAYS;
    if (!v)
        return 1;
    if (f != F_JSON) {
        gsd_reply_bad_query(r, "pairs", "pairs goes with format=json");
        return 0;
    }
    const char *bad;
    size_t n;
    if (gsd_parse_pairs(v, mask, &bad, &n))
        return 1;
    gsd_reply_bad_query(r, "pairs",
                        "pairs lists mean, std, max, p95, share_above, lambda_mean, "
                        "opened (comma-separated) or none; got '%.*s'",
                        (int)(n < 40 ? n : 40), bad);
    return 0;
}

int gsd_parse_pairs(const char *v, unsigned *mask, const char **bad, size_t *bad_len)
{
    *mask = 0;
    if (!strcmp(v, "none"))
        return 1;
    for (const char *p = v; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int i = 0;
        while (i < N_PAIR_ARRAYS && (strlen(pair_arrays[i]) != n || memcmp(pair_arrays[i], p, n)))
            i++;
        if (i == N_PAIR_ARRAYS) {
            *bad = p;
            *bad_len = n;
            return 0;
        }
        *mask |= 1u << i;
        p += n + (e != NULL);
    }
    return 1;
}

void gsd_h_job_summary(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    double threshold;
    long bins;
    if (!gsd_api_query_num(r, "threshold", GSD_SUMMARY_THRESHOLD, &threshold) ||
        !gsd_api_query_int(r, "bins", GSD_SUMMARY_BINS, 1, 1000, &bins)) {
        gsd_job_row_free(&row);
        return;
    }
    if (threshold < 0) {
        gsd_job_row_free(&row);
        gsd_reply_bad_query(r, "threshold", "threshold must be >= 0 (mm)");
        return;
    }
    static const char *const formats[] = {"json", "csv", "vtp", "html"};
    int f;
    if (!gsd_api_query_enum(r, "format", formats, 4, F_JSON, &f)) {
        gsd_job_row_free(&row);
        return;
    }
    unsigned pairs;
    if (!query_pairs(r, f, &pairs)) {
        gsd_job_row_free(&row);
        return;
    }
    gsd_assembly_row arow;
    if (!gsd_api_job_assembly(r, &row, &arow))
        return;
    sum_req *q = sum_req_new(r, &row, arow.m, f);
    if (!q)
        return;
    q->o.threshold = threshold;
    q->o.bins = (int)bins;
    q->pairs = pairs;
    dispatch(q);
}
