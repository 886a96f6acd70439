/*
 * api.c -- the route table and the helpers shared by the handlers (see api.h).
 */
#include "api.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "api_body_impl.h"
#include "integrity.h"
#include "json_parse.h"
#include "upkeep.h"

#define J (1u << GSD_BODY_JSON)
#define N (1u << GSD_BODY_NPY)
#define M (1u << GSD_BODY_MULTIPART)
#define T (1u << GSD_BODY_ARCHIVE)

/* The query lists are the parameters each handler reads (docs/api.md,
 * schema/openapi.json; tests/integration/test_openapi.py compares them). */
const gsd_route gsd_routes[] = {
    {"GET", "/healthz", gsd_h_healthz, 0, ""},
    {"GET", "/metrics", gsd_h_metrics, 0, ""},
    {"GET", "/", gsd_h_index, 0, NULL},
    {"GET", "/web/*", gsd_h_static, 0, NULL},
    {"GET", "/v1/assemblies", gsd_h_asm_list, 0, ""},
    {"POST", "/v1/assemblies", gsd_h_asm_create, J | M | T, "wait, model"},
    {"GET", "/v1/assemblies/{id}", gsd_h_asm_get, 0, ""},
    {"DELETE", "/v1/assemblies/{id}", gsd_h_asm_delete, 0, ""},
    {"GET", "/v1/assemblies/{id}/geometry", gsd_h_asm_geometry, 0, ""},
    {"GET", "/v1/assemblies/{id}/jobs", gsd_h_asm_jobs, 0, "status"},
    {"POST", "/v1/assemblies/{id}/solve", gsd_h_solve, J, ""},
    {"POST", "/v1/assemblies/{id}/clouds", gsd_h_cloud_create, J | N, NULL},
    {"GET", "/v1/jobs", gsd_h_job_list, 0, "assembly, status"},
    {"GET", "/v1/jobs/{id}", gsd_h_job_get, 0, "wait"},
    {"DELETE", "/v1/jobs/{id}", gsd_h_job_cancel, 0, ""},
    {"GET", "/v1/jobs/{id}/results", gsd_h_job_results, 0,
     "format, offset, limit, fields, field, index, threshold"},
    {"GET", "/v1/jobs/{id}/summary", gsd_h_job_summary, 0, "threshold, bins, format, pairs"},
    {"GET", "/v1/jobs/{id}/gaps", gsd_h_job_gaps, 0, "index"},
    {"GET", "/v1/results/{id}", gsd_h_result_get, 0, ""},
};
const int gsd_n_routes = (int)(sizeof gsd_routes / sizeof gsd_routes[0]);

cJSON *gsd_api_body(gsd_req *r)
{
    if (r->body_kind != GSD_BODY_JSON || r->body.len == 0) {
        gsd_reply_error(r, 400, "bad_format", "body", "a JSON object body is required");
        return NULL;
    }
    /* RFC 8259's tokens first, in the whole body: cJSON would take "1.",
     * "01" or a raw control byte, and the arrays taken below leave a
     * malformed element to it */
    size_t bad = gs_json_check_tokens(r->body.p, r->body.len);
    if (bad != (size_t)-1) {
        gsd_reply_error(r, 400, "bad_format", "body", "invalid JSON at byte %zu", bad);
        return NULL;
    }
    /* the big number arrays next, into doubles: the tree holds only the rest */
    static const char *const big[] = {"g", "gaps"};
    for (int k = 0; k < 2 && !r->nums_key[0]; k++) {
        gs_error e;
        int t = gsd_json_take_numbers(r->body.p, r->body.len, big[k], r->body.len, &r->nums, &e);
        if (t < 0) {
            gsd_reply_gs_error(r, &e);
            return NULL;
        }
        if (t > 0)
            snprintf(r->nums_key, sizeof r->nums_key, "%s", big[k]);
    }
    size_t at = 0;
    int trailing = 0;
    cJSON *root = gs_json_parse(r->body.p, r->body.len, &at, &trailing);
    if (!root) {
        gsd_reply_error(r, 400, "bad_format", "body", "%s at byte %zu",
                        trailing ? "unexpected data after the JSON value" : "invalid JSON", at);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        gsd_reply_error(r, 400, "bad_format", "body", "the body must be a JSON object");
        return NULL;
    }
    return root;
}

void gsd_api_scrub(gs_error *e, const char *dir)
{
    size_t n = strlen(dir);
    char *hit;
    while (n && (hit = strstr(e->msg, dir)) != NULL) {
        size_t cut = n + (hit[n] == '/');
        if (hit == e->msg && hit[cut] == ':' && hit[cut + 1] == ' ')
            cut += 2; /* "<path>: what" -> "what" */
        memmove(hit, hit + cut, strlen(hit + cut) + 1);
    }
}

void gsd_api_store_error(gsd_req *r, const gs_error *e)
{
    if (gsd_no_room(e->sys_errno))
        gsd_reply_no_room(r, "", e->msg);
    else
        gsd_reply_error(r, 500, "io_error", "", "store: %s", e->msg);
}

int gsd_api_asm_gone(gsd_req *r, gsd_store *st, const char *id)
{
    if (!gsd_store_assembly_gone(st, id))
        return 0;
    gsd_reply_error(r, 404, "not_found", "id", "assembly %s was deleted while this request ran",
                    id);
    return 1;
}

int gsd_api_assembly(gsd_req *r, gsd_assembly_row *row)
{
    gs_error e;
    int found = 0;
    if (!gsd_id_valid(r->id, 'a')) {
        gsd_reply_error(r, 404, "not_found", "id", "no assembly %s (ids look like a_0123456789abcdef)",
                        r->id_text);
        return 0;
    }
    if (gsd_store_assembly_get(r->app->st, r->id, row, &found, &e)) {
        gsd_api_store_error(r, &e);
        return 0;
    }
    if (!found) {
        gsd_reply_error(r, 404, "not_found", "id", "no assembly %s", r->id);
        return 0;
    }
    return 1;
}

/* The job row of r->id; 0 after answering 404 / 500. */
int gsd_api_job(gsd_req *r, gsd_job_row *row)
{
    int found = 0;
    gs_error e;
    if (!gsd_id_valid(r->id, 'j')) {
        gsd_reply_error(r, 404, "not_found", "id", "no job %s (ids look like j_0123456789abcdef)",
                        r->id_text);
        return 0;
    }
    if (gsd_store_job_get(r->app->st, r->id, row, &found, &e)) {
        gsd_api_store_error(r, &e);
        return 0;
    }
    if (!found) {
        gsd_reply_error(r, 404, "not_found", "id", "no job %s", r->id);
        return 0;
    }
    return 1;
}

int gsd_api_ready(gsd_req *r, const gsd_assembly_row *row)
{
    if (!strcmp(row->status, "ready"))
        return 1;
    if (!strcmp(row->status, "failed"))
        gsd_reply_error(r, 409, "not_ready", "id",
                        "assembly %s failed its precomputation (%s%s%s); fix the model and "
                        "upload it again",
                        row->id, row->err_field, row->err_field[0] ? ": " : "", row->err_msg);
    else
        gsd_reply_error(r, 409, "not_ready", "id",
                        "assembly %s is %s; poll GET /v1/assemblies/%s until it is ready",
                        row->id, row->status, row->id);
    return 0;
}

void gsd_api_model_unreadable(gsd_req *r, const char *asm_id, const gs_error *e)
{
    if (gsd_api_asm_gone(r, r->app->st, asm_id))
        return;
    if (e->code == GS_ERR_NOMEM) {
        gsd_reply_error(r, 503, "unavailable", "", "no memory to load the model of %s; try "
                        "again", asm_id);
    } else if (e->code == GS_ERR_IO || !e->code) { /* the server's: logged, an error id here */
        gsd_log(r->app, 0, "assembly %s: cannot read its model: %s", asm_id, e->msg);
        gsd_reply_error(r, 500, "io_error", "", "cannot read the model of %s", asm_id);
    } else { /* the stored model refused (assembly.c says why and what to do) */
        gsd_reply_error(r, 409, gs_err_name(e->code), e->field, "%s", e->msg);
    }
}

int gsd_body_refuse(gsd_body_err *err, unsigned status, const char *code, const char *field,
                    const char *fmt, ...)
{
    memset(err, 0, sizeof *err);
    err->status = status;
    snprintf(err->code, sizeof err->code, "%s", code);
    snprintf(err->field, sizeof err->field, "%s", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return 0;
}

void gsd_body_reply(gsd_req *r, const gsd_body_err *err)
{
    if (err->status == 0)
        gsd_reply_gs_error(r, &err->gs);
    else
        gsd_reply_error(r, err->status, err->code, err->field, "%s", err->msg);
}

int gsd_api_lq_usable(gsd_req *r, const gsd_assembly_row *row, const gs_solve_opts *o)
{
    if (!row->err_code[0] || !gs_method_needs_lq(o->method, o->form))
        return 1;
    gsd_reply_error(r, 409, row->err_code, row->err_field[0] ? row->err_field : "method",
                    "%s on the %s form needs the Cholesky factor of Q, which assembly %s does "
                    "not have (%s); GI (relative or primal form), Lemke, IPM on the dual form "
                    "and auto solve it",
                    gs_method_name(o->method), gs_form_name(o->form), row->id, row->err_msg);
    return 0;
}

int gsd_api_query_int(gsd_req *r, const char *key, long def, long lo, long hi, long *out)
{
    const char *s = gsd_query(r, key);
    if (!s) {
        *out = def;
        return 1;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        gsd_reply_bad_query(r, key, "%s must be an integer in [%ld, %ld]", key, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

int gsd_api_query_num(gsd_req *r, const char *key, double def, double *out)
{
    const char *s = gsd_query(r, key);
    if (!s) {
        *out = def;
        return 1;
    }
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v)) {
        gsd_reply_bad_query(r, key, "%s must be a finite number", key);
        return 0;
    }
    *out = v;
    return 1;
}

int gsd_api_query_enum(gsd_req *r, const char *key, const char *const *names, int n, int def,
                       int *out)
{
    const char *s = gsd_query(r, key);
    *out = def;
    if (!s)
        return 1;
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) {
            *out = i;
            return 1;
        }
    char list[256] = "";
    for (int i = 0; i < n; i++) /* "a, b or c" */
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                 i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
    gsd_reply_bad_query(r, key, "%s is %s", key, list);
    return 0;
}

static int room(gsd_req *r, gsd_store *st, int min_free)
{
    char why[512];
    if (gsd_upkeep_room(r->app, st, min_free, why, sizeof why) == GSD_ROOM_OK)
        return 1;
    gsd_reply_error(r, 507, "insufficient_storage", "", "%s", why);
    return 0;
}

int gsd_api_room(gsd_req *r)
{
    return room(r, r->app->st, 1);
}

int gsd_api_quota(gsd_req *r, gsd_store *st)
{
    return room(r, st, 0);
}
