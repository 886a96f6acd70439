/*
 * api_jobs.c -- GET/DELETE /v1/jobs[/{id}], results (paged JSON or .npy,
 * chosen by ?format= or else the Accept header; one gap as VTK and the
 * summary: api_summary.c).
 */
#define _GNU_SOURCE
#include "api.h"
#include "api_query_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobs.h"
#include "jobwait.h"
#include "npy.h"
#include "render.h"

int gsd_api_job_assembly(gsd_req *r, gsd_job_row *row, gsd_assembly_row *arow)
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

void gsd_api_reply_jobs(gsd_req *r, const char *assembly_id)
{
    /* a typo must not look like "no such jobs" */
    static const char *const statuses[] = {"queued", "running", "done", "cancelled", "failed"};
    int s;
    if (!gsd_api_query_enum(r, "status", statuses, 5, -1, &s))
        return;
    gsd_job_row *rows = NULL;
    int count = 0;
    gs_error e;
    if (gsd_store_job_list(r->app->st, assembly_id, s < 0 ? NULL : statuses[s], &rows, &count,
                           &e)) {
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
    gsd_api_reply_jobs(r, gsd_query(r, "assembly"));
}

void gsd_api_job_reply(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    reply_job(r, &row, 200);
    gsd_job_row_free(&row);
}

/* GET /v1/jobs/{id}[?wait=S]: with S > 0 a job that has not ended is
 * answered when it ends or after S seconds (jobwait.h), whichever is first. */
void gsd_h_job_get(gsd_req *r)
{
    double wait = 0.0;
    if (!gsd_api_query_num(r, "wait", 0.0, &wait))
        return;
    if (!(wait >= 0.0 && wait <= GSD_JOBWAIT_MAX_S)) {
        gsd_reply_bad_query(r, "wait", "wait is in seconds, 0 to %g", GSD_JOBWAIT_MAX_S);
        return;
    }
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    /* a job cancelled or failed with chunks still running is held until they
     * have committed their gaps: its answer then has the final counts */
    if (wait > 0.0 && (!gsd_job_status_ended(row.status) || !gsd_jobs_quiet(r->app->jobs, r->id))) {
        gsd_job_row_free(&row);
        gsd_jobwait_add(r->app, r, wait);
        return;
    }
    if (wait > 0.0) {
        /* ended and quiet: read again, since the last chunk may have
         * committed and settled between the read above and the quiet check
         * (its answer had one gap too few); from here nothing changes */
        gsd_job_row_free(&row);
        if (!gsd_api_job(r, &row))
            return;
    }
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

int gsd_parse_fields(const char *f, unsigned *ret)
{
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
        else if (strcmp(t, "none"))
            return 0;
    }
    return 1;
}

static int parse_fields(gsd_req *r, unsigned *ret)
{
    if (gsd_parse_fields(gsd_query(r, "fields"), ret))
        return 1;
    gsd_reply_bad_query(r, "fields", "fields is a comma list of w, lambda (or none)");
    return 0;
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

/* ---- results: which format ------------------------------------------------------ */

/* How specifically the media range p[0..n) matches type ("a/b"): 3 the
 * type itself, 2 "a/" followed by a star, 1 the star range, 0 not at all
 * (compared without case). */
static int range_match(const char *p, size_t n, const char *type)
{
    const size_t tlen = strlen(type), major = (size_t)(strchr(type, '/') - type);
    if (n == tlen && !strncasecmp(p, type, n))
        return 3;
    if (n == major + 2 && !strncasecmp(p, type, major + 1) && p[n - 1] == '*')
        return 2;
    return n == 3 && !strncmp(p, "*/*", 3);
}

/* The q value an Accept header gives the media type `type`: that of the
 * most specific range that matches it (with exact, only the type itself
 * counts), or -1 if none does. Parameters other than q are ignored; a q
 * that is not a number counts as 1. O(length of the header). */
double gsd_accept_q(const char *accept, const char *type, int exact)
{
    double best_q = -1;
    int best = 0;
    for (const char *p = accept; p && *p;) {
        const char *end = strchr(p, ','), *stop = end ? end : p + strlen(p);
        while (p < stop && (*p == ' ' || *p == '\t'))
            p++;
        size_t n = 0;
        while (p + n < stop && p[n] != ';' && p[n] != ' ' && p[n] != '\t')
            n++;
        int spec = range_match(p, n, type);
        if (exact && spec < 3)
            spec = 0;
        double q = 1;
        for (const char *a = p + n; a < stop; a++) /* ";q=0.5" among the parameters */
            if (*a == ';') {
                const char *v = a + 1;
                while (v < stop && (*v == ' ' || *v == '\t'))
                    v++;
                if (stop - v > 2 && (v[0] == 'q' || v[0] == 'Q') && v[1] == '=') {
                    char *qe = NULL;
                    double x = strtod(v + 2, &qe);
                    q = qe == v + 2 || !(x >= 0) ? 1 : x > 1 ? 1 : x;
                }
            }
        if (spec > best) {
            best = spec;
            best_q = q;
        }
        p = end ? end + 1 : NULL;
    }
    return best_q;
}

enum { RES_JSON, RES_NPY, RES_VTP };
static const char *const res_formats[] = {"json", "npy", "vtp"};
/* The query parameters of each format: one another's would be ignored. */
static const char *const res_params[] = {"format, offset, limit, fields", "format, field",
                                         "format, index, threshold"};

/* 1 if the Accept header (NULL: none) names application/x-npy with a q
 * above 0 and at least that of application/json. */
int gsd_accepts_npy(const char *accept)
{
    if (!accept)
        return 0;
    const double npy = gsd_accept_q(accept, "application/x-npy", 1);
    const double json = gsd_accept_q(accept, "application/json", 0);
    return npy > 0 && npy >= json;
}

/* The format of GET .../results: ?format= (json, npy, vtp), else the .npy
 * when Accept asks for it, else JSON; a parameter of another format is
 * refused. -1 after answering 422. */
static int results_format(gsd_req *r)
{
    int f;
    if (!gsd_api_query_enum(r, "format", res_formats, 3, -1, &f))
        return -1;
    if (f < 0)
        f = gsd_accepts_npy(gsd_header(r, "Accept")) ? RES_NPY : RES_JSON;
    const char *other = gsd_query_other(r, res_params[f]);
    if (other) {
        gsd_reply_bad_query(r, other, "query parameter '%s' does not go with format=%s (it takes "
                            "%s)", other, res_formats[f], res_params[f]);
        return -1;
    }
    return f;
}

void gsd_h_job_results(gsd_req *r)
{
    gsd_job_row row;
    if (!gsd_api_job(r, &row))
        return;
    gsd_assembly_row arow;
    gs_error e;
    int format = results_format(r);
    if (format < 0) {
        gsd_job_row_free(&row);
        return;
    }
    if (!gsd_api_job_assembly(r, &row, &arow))
        return;
    if (format == RES_VTP) {
        gsd_api_gap_vtp(r, &row, arow.m); /* api_summary.c; takes row */
        return;
    }
    if (format == RES_NPY) {
        static const char *const fields[] = {"w", "lambda"};
        int lambda;
        if (gsd_api_query_enum(r, "field", fields, 2, 0, &lambda))
            reply_npy(r, &row, arow.m, lambda);
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
