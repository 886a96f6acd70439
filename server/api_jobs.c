/*
 * api_jobs.c -- GET/DELETE /v1/jobs[/{id}], results (paged JSON, .npy, or
 * one gap as VTK), summary (JSON, or exported as CSV / VTK / HTML: export.h).
 */
#define _GNU_SOURCE
#include "api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assembly.h"
#include "export.h"
#include "jobs.h"
#include "npy.h"
#include "spec.h"
#include "render.h"
#include "summary.h"

/* The assembly of a job; 0 after answering 404 / 500 (row released then). */
static int job_assembly(gsd_req *r, gsd_job_row *row, gsd_assembly_row *arow)
{
    int found = 0;
    gs_error e;
    if (gsd_store_assembly_get(r->app->st, row->assembly_id, arow, &found, &e) || !found) {
        gsd_job_row_free(row);
        gsd_reply_error(r, 404, "not_found", "id", "the assembly of job %s is gone", r->id);
        return 0;
    }
    return 1;
}

static void reply_job(gsd_req *r, gsd_job_row *row, unsigned code)
{
    gsd_job_progress p;
    int live = gsd_jobs_progress(r->app->jobs, row->id, &p);
    gs_buf b = {0};
    gsd_render_job(row, live ? &p : NULL, &b);
    gsd_reply_json(r, code, &b);
}

void gsd_api_reply_jobs(gsd_req *r, const char *assembly_id, const char *status)
{
    gsd_job_row *rows = NULL;
    int count = 0;
    gs_error e;
    if (gsd_store_job_list(r->app->st, assembly_id, status, &rows, &count, &e)) {
        gsd_api_store_error(r, &e);
        return;
    }
    gs_buf b = {0};
    gs_buf_puts(&b, "{\"jobs\":[");
    for (int i = 0; i < count; i++) {
        gsd_job_progress p;
        int live = gsd_jobs_progress(r->app->jobs, rows[i].id, &p);
        if (i)
            gs_buf_puts(&b, ",");
        gsd_render_job(&rows[i], live ? &p : NULL, &b);
        gsd_job_row_free(&rows[i]);
    }
    free(rows);
    gs_buf_puts(&b, "]}");
    gsd_reply_json(r, 200, &b);
}

void gsd_h_job_list(gsd_req *r)
{
    const char *status = gsd_query(r, "status");
    static const char *const statuses[] = {"queued", "running", "done", "cancelled", "failed"};
    int ok = !status;
    for (int i = 0; !ok && i < 5; i++)
        ok = !strcmp(status, statuses[i]);
    if (!ok) {
        gsd_reply_error(r, 400, "invalid", "status",
                        "status is one of queued, running, done, cancelled, failed");
        return;
    }
    gsd_api_reply_jobs(r, gsd_query(r, "assembly"), status);
}

void gsd_h_job_get(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    reply_job(r, &row, 200);
    gsd_job_row_free(&row);
}

void gsd_h_job_cancel(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    if (!gsd_jobs_cancel(r->app, r->id)) {
        gsd_reply_error(r, 409, "conflict", "id", "job %s is %s; only queued or running jobs can be "
                        "cancelled", r->id, row.status);
        gsd_job_row_free(&row);
        return;
    }
    gsd_job_row_free(&row);
    if (gsd_api_job(r, &row)) {
        reply_job(r, &row, 200);
        gsd_job_row_free(&row);
    }
}

/* ---- results: paged JSON ------------------------------------------------------- */

typedef struct {
    gs_buf *b;
    unsigned ret;
    int n;
} page_ctx;

static int page_row(const gsd_result_row *row, void *ctx)
{
    page_ctx *pc = ctx;
    if (pc->n++)
        gs_buf_puts(pc->b, ",");
    gsd_render_result(row, pc->ret, NULL, 0, -1, pc->b);
    return 0;
}

static int parse_fields(gsd_req *r, unsigned *ret)
{
    const char *f = gsd_query(r, "fields");
    *ret = GSD_RET_W | GSD_RET_KKT;
    if (!f)
        return 1;
    *ret = GSD_RET_KKT;
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%s", f);
    for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "w"))
            *ret |= GSD_RET_W;
        else if (!strcmp(t, "lambda"))
            *ret |= GSD_RET_LAMBDA;
        else if (strcmp(t, "none")) {
            gsd_reply_error(r, 400, "invalid", "fields",
                            "fields is a comma list of w, lambda (or none)");
            return 0;
        }
    }
    return 1;
}

/* ---- results: streamed .npy ------------------------------------------------------ */

#define NPY_PAGE 64

typedef struct {
    gsd_store *st;
    char job[GSD_ID_LEN];
    int k, m, lambda;
    char header[GS_NPY_HEADER_CAP];
    size_t header_len;
    double *page;     /* NPY_PAGE x m */
    int page_row0;    /* first row in page, -1 none */
    int page_rows;
} npy_stream;

static int fill_row(const gsd_result_row *row, void *ctx)
{
    npy_stream *s = ctx;
    const double *v = s->lambda ? row->lam : row->w;
    int i = row->job_index - s->page_row0;
    if (v && i >= 0 && i < s->page_rows)
        memcpy(s->page + (size_t)i * (size_t)s->m, v, sizeof(double) * (size_t)s->m);
    return 0;
}

static int load_page(npy_stream *s, int row0)
{
    s->page_row0 = row0;
    s->page_rows = s->k - row0 < NPY_PAGE ? s->k - row0 : NPY_PAGE;
    for (size_t i = 0; i < (size_t)s->page_rows * (size_t)s->m; i++)
        s->page[i] = NAN; /* gaps not (yet) solved */
    gs_error e;
    return gsd_store_job_results(s->st, s->job, row0, s->page_rows, 1, fill_row, s, &e) ? -1 : 0;
}

static ssize_t npy_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    npy_stream *s = cls;
    size_t done = 0;
    size_t row_bytes = sizeof(double) * (size_t)s->m;
    uint64_t total = s->header_len + (uint64_t)s->k * row_bytes;
    while (done < max && pos < total) {
        if (pos < s->header_len) {
            size_t n = s->header_len - (size_t)pos;
            n = n < max - done ? n : max - done;
            memcpy(buf + done, s->header + pos, n);
            done += n;
            pos += n;
            continue;
        }
        uint64_t off = pos - s->header_len;
        int row = (int)(off / row_bytes);
        if (s->page_row0 < 0 || row < s->page_row0 || row >= s->page_row0 + s->page_rows)
            if (load_page(s, row - row % NPY_PAGE) != 0)
                return MHD_CONTENT_READER_END_WITH_ERROR;
        uint64_t page_off = off - (uint64_t)s->page_row0 * row_bytes;
        uint64_t page_len = (uint64_t)s->page_rows * row_bytes;
        size_t n = (size_t)(page_len - page_off);
        n = n < max - done ? n : max - done;
        memcpy(buf + done, (char *)s->page + page_off, n);
        done += n;
        pos += n;
    }
    return done ? (ssize_t)done : MHD_CONTENT_READER_END_OF_STREAM;
}

static void npy_free(void *cls)
{
    npy_stream *s = cls;
    free(s->page);
    free(s);
}

static void reply_npy(gsd_req *r, const gsd_job_row *row, int m, int lambda)
{
    npy_stream *s = calloc(1, sizeof *s);
    if (s)
        s->page = malloc(sizeof(double) * NPY_PAGE * (size_t)m);
    if (!s || !s->page) {
        if (s)
            free(s);
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return;
    }
    s->st = r->app->st;
    snprintf(s->job, sizeof s->job, "%.18s", row->id);
    s->k = row->total;
    s->m = m;
    s->lambda = lambda;
    s->page_row0 = -1;
    size_t shape[2] = {(size_t)row->total, (size_t)m};
    gs_error e;
    if (gs_npy_write_header(s->header, sizeof s->header, 2, shape, &s->header_len, &e)) {
        npy_free(s);
        gsd_reply_gs_error(r, &e);
        return;
    }
    uint64_t size = s->header_len + (uint64_t)row->total * (uint64_t)m * sizeof(double);
    gsd_reply_stream(r, 200, "application/x-npy", size, npy_read, s, npy_free);
}

/* The installed candidates of a job (its stored options resolved on mdl). */
static int job_installed(const gsd_job_row *row, const gs_model *mdl, gsd_spec *sp)
{
    cJSON *obj = cJSON_Parse(row->options_json ? row->options_json : "{}");
    gs_error e;
    int ok = obj && gsd_spec_parse(obj, mdl->n_fast, mdl->m, 1, sp, &e) == GS_OK;
    cJSON_Delete(obj);
    if (ok && gsd_spec_resolve(sp, mdl, &e) != GS_OK) {
        gsd_spec_free(sp);
        ok = 0;
    }
    return ok;
}

/* The job's summary (from the cache for an ended job whose last chunk has
 * committed: summary.h). */
static gs_err job_summary(gsd_req *r, const gsd_job_row *row, int m, gsd_summary_opts *o,
                          gs_buf *b, gs_error *e)
{
    o->cache = gsd_jobs_quiet(r->app->jobs, row->id) ? r->app->sums : NULL;
    gs_err rc = gsd_summary(r->app->st, row, m, o, b, e);
    if (!rc && o->cached)
        atomic_fetch_add(&r->app->metrics.summary_hits, 1);
    return rc;
}

/* Answer the summary document sum (JSON text, taken) as format f (1 csv,
 * 2 vtp, 3 html) on the job's model; gap: one gap's vectors for vtp. */
static void reply_export(gsd_req *r, const gsd_job_row *row, int f, gs_buf *sum,
                         const gsd_export_gap *gap)
{
    static const char *const types[4] = {"", "text/csv; charset=utf-8", "application/xml",
                                         "text/html; charset=utf-8"};
    gs_error e = {0};
    cJSON *doc = cJSON_ParseWithLength(sum->p, sum->len);
    gs_buf_free(sum);
    gsd_asm *a = gsd_registry_acquire(r->app->reg, row->assembly_id);
    if (!doc || !a || gsd_asm_model(r->app, a, &e)) {
        cJSON_Delete(doc);
        gsd_registry_release(r->app->reg, a);
        gsd_reply_error(r, 500, "io_error", "", "cannot read the model of %s", row->assembly_id);
        return;
    }
    gs_buf b = {0};
    if (f == 1) {
        gsd_export_csv(gsd_asm_mdl(a), doc, &b);
    } else if (f == 2) {
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

/* GET .../results?format=vtp&index=i[&threshold=&bins=]: gap i (g, w,
 * lambda) and the cloud statistics on the junction, one .vtp. */
static void reply_gap_vtp(gsd_req *r, const gsd_job_row *row, int m)
{
    long index;
    gsd_summary_opts o = {.bins = 20};
    char gpath[PATH_MAX];
    gsd_jobs_gaps_path(r->app, row->id, gpath, sizeof gpath);
    o.gaps_path = gpath;
    if (!gsd_api_query_int(r, "index", -1, 0, row->total - 1, &index) ||
        !gsd_api_query_num(r, "threshold", 0.1, &o.threshold))
        return;
    if (index < 0) {
        gsd_reply_error(r, 400, "invalid", "index",
                        "format=vtp needs index=i, the gap in [0, %d] (the cloud statistics "
                        "alone: GET /v1/jobs/%s/summary?format=vtp)",
                        row->total - 1, row->id);
        return;
    }
    if (!(o.threshold >= 0)) {
        gsd_reply_error(r, 400, "invalid", "threshold", "threshold must be >= 0 (mm)");
        return;
    }
    double *v = malloc(sizeof(double) * 3 * (size_t)(m > 0 ? m : 1));
    if (!v) {
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return;
    }
    one_ctx c = {.w = v + m, .lam = v + 2 * (size_t)m, .m = m};
    gs_error e;
    if (!gsd_api_gap_row(r, row, index, v, m)) {
        free(v);
        return;
    }
    if (gsd_store_job_results(r->app->st, row->id, (int)index, 1, 1, copy_one, &c, &e)) {
        free(v);
        gsd_api_store_error(r, &e);
        return;
    }
    if (!c.found) {
        free(v);
        gsd_reply_error(r, 409, "not_ready", "index", "gap %ld of %s is not solved yet", index,
                        row->id);
        return;
    }
    gs_buf sum = {0};
    if (job_summary(r, row, m, &o, &sum, &e)) {
        free(v);
        gs_buf_free(&sum);
        gsd_reply_gs_error(r, &e);
        return;
    }
    gsd_export_gap gap = {.index = (int)index, .g = v, .w = c.w, .lam = c.lam};
    reply_export(r, row, 2, &sum, &gap);
    free(v);
}

void gsd_h_job_results(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    gsd_assembly_row arow;
    gs_error e;
    if (!job_assembly(r, &row, &arow))
        return;
    const char *accept = gsd_header(r, "Accept");
    const char *format = gsd_query(r, "format");
    if (format && !strcmp(format, "vtp")) {
        reply_gap_vtp(r, &row, arow.m);
        gsd_job_row_free(&row);
        return;
    }
    int npy = (format && !strcmp(format, "npy")) || (accept && strstr(accept, "application/x-npy"));
    if (npy) {
        const char *field = gsd_query(r, "field");
        if (field && strcmp(field, "w") && strcmp(field, "lambda")) {
            gsd_reply_error(r, 400, "invalid", "field", "field is w (residual gaps) or lambda");
        } else {
            reply_npy(r, &row, arow.m, field && !strcmp(field, "lambda"));
        }
        gsd_job_row_free(&row);
        return;
    }
    long offset, limit;
    unsigned ret;
    if (!gsd_api_query_int(r, "offset", 0, 0, row.total, &offset) ||
        !gsd_api_query_int(r, "limit", 100, 1, 1000, &limit) || !parse_fields(r, &ret)) {
        gsd_job_row_free(&row);
        return;
    }
    gs_buf b = {0};
    gs_buf_printf(&b, "{\"job_id\":\"%s\",\"total\":%d,\"offset\":%ld,\"limit\":%ld,\"results\":[",
                   row.id, row.total, offset, limit);
    page_ctx pc = {.b = &b, .ret = ret};
    /* vectors are always read: max_residual and contact need them */
    if (gsd_store_job_results(r->app->st, row.id, (int)offset, (int)limit, 1, page_row, &pc,
                              &e)) {
        gs_buf_free(&b);
        gsd_job_row_free(&row);
        gsd_api_store_error(r, &e);
        return;
    }
    gs_buf_puts(&b, "],\"next_offset\":");
    if (offset + limit < row.total)
        gs_buf_printf(&b, "%ld", offset + limit);
    else
        gs_buf_puts(&b, "null");
    gs_buf_puts(&b, "}");
    gsd_job_row_free(&row);
    gsd_reply_json(r, 200, &b);
}

void gsd_h_job_summary(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    gsd_assembly_row arow;
    gs_error e;
    gsd_summary_opts o = {0};
    long bins;
    char gpath[PATH_MAX];
    gsd_jobs_gaps_path(r->app, row.id, gpath, sizeof gpath);
    o.gaps_path = gpath;
    if (!gsd_api_query_num(r, "threshold", 0.1, &o.threshold) ||
        !gsd_api_query_int(r, "bins", 20, 1, 1000, &bins)) {
        gsd_job_row_free(&row);
        return;
    }
    if (o.threshold < 0) {
        gsd_job_row_free(&row);
        gsd_reply_error(r, 400, "invalid", "threshold", "threshold must be >= 0 (mm)");
        return;
    }
    o.bins = (int)bins;
    if (!job_assembly(r, &row, &arow))
        return;
    const char *format = gsd_query(r, "format");
    static const char *const formats[] = {"json", "csv", "vtp", "html"};
    int f = format ? -1 : 0;
    for (int i = 0; format && i < 4; i++)
        if (!strcmp(format, formats[i]))
            f = i;
    if (f < 0) {
        gsd_job_row_free(&row);
        gsd_reply_error(r, 400, "invalid", "format", "format is json, csv, vtp or html");
        return;
    }
    gs_buf b = {0};
    if (job_summary(r, &row, arow.m, &o, &b, &e)) {
        gs_buf_free(&b);
        gsd_reply_gs_error(r, &e);
    } else if (f == 0) {
        gsd_reply_json(r, 200, &b);
    } else {
        reply_export(r, &row, f, &b, NULL);
    }
    gsd_job_row_free(&row);
}
