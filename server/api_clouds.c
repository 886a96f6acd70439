/*
 * api_clouds.c -- POST /v1/assemblies/{id}/clouds: submit a gap cloud.
 *
 * Three bodies: JSON {"gaps": [[m numbers], ...], options...}; JSON
 * {"generate": {"count": k, "seed": s}, options...} (the server makes k gap
 * vectors with gapsim-gen's generator, so a client needs no generator of its
 * own); or a raw .npy (k x m float64, C order; a 1-D array of m is one gap)
 * with the options in the query string (?solver=gi&fasteners=all&
 * warm_start=j_...; a JSON body takes no query parameter). The gaps are
 * checked (shape, finite) and stored as data/jobs/<id>/gaps.npy (fsync'ed,
 * renamed into place) before the job row is written, so a job in the store
 * always has its input. The fastener pattern is resolved on the model and
 * stored with the options ("installed"). Answer: 202 with the job.
 */
#define _GNU_SOURCE
#include "api.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_body_impl.h"
#include "assembly.h"
#include "fileio.h"
#include "generator.h"
#include "jobs.h"
#include "json_parse.h"
#include "npy.h"
#include "render.h"
#include "upkeep.h"

int gsd_body_gaps(gsd_numarr *nums, const cJSON *obj, int m, int max_gaps, double **out, int *k_out,
                  gsd_body_err *err)
{
    if (nums) { /* taken without a tree (gsd_api_body) */
        const gsd_numarr *a = nums;
        if (a->rows == -1 && a->n > 0)
            return gsd_body_refuse(err, 422, "dimension_mismatch", "gaps",
                                   "gaps must be an array of gap vectors (arrays of m = %d "
                                   "numbers), not of numbers", m);
        if (a->rows < 1)
            return gsd_body_refuse(err, 422, "invalid", "gaps", "gaps must be a non-empty array "
                                   "of gap vectors (each m = %d numbers, mm)", m);
        if (a->rows > max_gaps)
            return gsd_body_refuse(err, 413, "too_large", "gaps",
                                   "%ld gaps, more than the limit of %d", a->rows, max_gaps);
        if (a->cols != m)
            return gsd_body_refuse(err, 422, "dimension_mismatch", "gaps",
                                   "gaps[0] must be an array of m = %d numbers", m);
        *out = nums->v; /* taken over */
        *k_out = (int)a->rows;
        nums->v = NULL;
        return 1;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "gaps");
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return gsd_body_refuse(err, 422, "invalid", "gaps", "gaps must be a non-empty array of "
                               "gap vectors (each m = %d numbers, mm)", m);
    int k = cJSON_GetArraySize(v);
    if (k > max_gaps)
        return gsd_body_refuse(err, 413, "too_large", "gaps",
                               "%d gaps, more than the limit of %d", k, max_gaps);
    double *G = malloc(sizeof(double) * (size_t)k * (size_t)m);
    if (!G)
        return gsd_body_refuse(err, 503, "out_of_memory", "", "out of memory");
    int i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, v)
    {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != m) {
            free(G);
            return gsd_body_refuse(err, 422, "dimension_mismatch", "gaps",
                                   "gaps[%d] must be an array of m = %d numbers", i, m);
        }
        int j = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, row)
        {
            if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
                char f[48];
                snprintf(f, sizeof f, "gaps[%d][%d]", i, j);
                free(G);
                return gsd_body_refuse(err, 422, "not_finite", f,
                                       "%s must be a finite number (mm)", f);
            }
            G[(size_t)i * (size_t)m + (size_t)j++] = e->valuedouble;
        }
        i++;
    }
    *out = G;
    *k_out = k;
    return 1;
}

/* The "gaps" array of a JSON body as a k x m row-major matrix. 0 after answering. */
static int json_gaps(gsd_req *r, const cJSON *obj, int m, double **out, int *k_out)
{
    gsd_body_err err;
    if (gsd_body_gaps(!strcmp(r->nums_key, "gaps") ? &r->nums : NULL, obj, m, r->app->o.max_gaps,
                      out, k_out, &err))
        return 1;
    gsd_body_reply(r, &err);
    return 0;
}

int gsd_body_npy_gaps(const char *path, int m, int max_gaps, int *k_out, gsd_body_err *err)
{
    gs_npy_file f = {.fd = -1};
    memset(err, 0, sizeof *err);
    if (gs_npy_open(path, (size_t)max_gaps * (size_t)m, &f, &err->gs)) {
        gsd_api_scrub(&err->gs, path);
        snprintf(err->gs.field, sizeof err->gs.field, "body");
        gs_npy_close(&f);
        return 0; /* malformed 400, too large 413, not float64 422 */
    }
    int ok = 1;
    size_t k = f.info.ndim == 1 ? 1 : f.info.shape[0];
    size_t cols = f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1];
    if (cols != (size_t)m || k == 0)
        ok = gsd_body_refuse(err, 422, "dimension_mismatch", "body",
                             "the array is %zu x %zu; a cloud is k x m with m = %d", k, cols, m);
    else if (f.info.fortran_order && k > 1)
        ok = gsd_body_refuse(err, 422, "unsupported", "body", "fortran_order arrays are not "
                             "accepted; send np.ascontiguousarray(gaps)");
    else if (k > (size_t)max_gaps)
        ok = gsd_body_refuse(err, 413, "too_large", "body",
                             "%zu gaps, more than the limit of %d", k, max_gaps);
    /* scan for NaN / Inf, one row at a time: O(k m), O(m) memory */
    double *row = ok ? malloc(sizeof(double) * (size_t)m) : NULL;
    if (ok && !row)
        ok = gsd_body_refuse(err, 503, "out_of_memory", "", "out of memory");
    for (size_t i = 0; ok && i < k; i++) {
        size_t bytes = sizeof(double) * (size_t)m;
        if (pread(f.fd, row, bytes, (off_t)(f.data_offset + i * bytes)) != (ssize_t)bytes) {
            ok = gsd_body_refuse(err, 500, "io_error", "body", "cannot read the staged upload");
            break;
        }
        for (int j = 0; j < m; j++)
            if (!isfinite(row[j])) {
                char fld[48];
                snprintf(fld, sizeof fld, "gaps[%zu][%d]", i, j);
                ok = gsd_body_refuse(err, 422, "not_finite", fld, "%s is not a finite number",
                                     fld);
                break;
            }
    }
    free(row);
    gs_npy_close(&f);
    *k_out = (int)k;
    return ok;
}

/* Check a staged .npy body: shape k x m (or m), C order, finite. 0 after answering. */
static int check_npy(gsd_req *r, int m, int *k_out)
{
    gsd_body_err err;
    if (gsd_body_npy_gaps(r->file_path, m, r->app->o.max_gaps, k_out, &err))
        return 1;
    gsd_body_reply(r, &err);
    return 0;
}

/* A query value as the JSON value it stands for: a number when the whole
 * text is one JSON number token (RFC 8259: strtod's hex, "+", leading
 * spaces, leading zeros, inf and nan are not), else the text as a string,
 * which gsd_spec_parse refuses as it refuses that string in a JSON body: the
 * same status, code and field in both encodings (docs/python.md). */
cJSON *gsd_query_value(const char *s, size_t n)
{
    char *t = strndup(s, n); /* strtod and cJSON need the token alone */
    cJSON *v = !t ? NULL
               : n > 0 && gs_json_number_end(t, n, 0) == n ? cJSON_CreateNumber(strtod(t, NULL))
                                                          : cJSON_CreateString(t);
    free(t);
    return v;
}

/* "0,3,7" -> [0, 3, 7], each entry read by gsd_query_value: an entry that is
 * no number ("0x9", " 4", "", the empty one of "3,") is named by its index,
 * as fasteners[1] of a JSON body; an empty value is the empty list. O(len). */
static void add_query_list(cJSON *obj, const char *key, const char *value)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, key);
    for (const char *p = value; arr && *value;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        cJSON_AddItemToArray(arr, gsd_query_value(p, n));
        if (!c)
            break;
        p = c + 1;
    }
}

/* Query parameters -> the JSON object gsd_spec_parse reads. A key without
 * '=' ("?tol", "?foo") is read as the empty value, so an unknown one is an
 * unknown option and a known one is refused as "tol=" is; bare_key notes the
 * first, refused even when its empty value would pass ("?label"). */
typedef struct {
    cJSON *obj;
    const char *bare_key;
} query_opts;

void gsd_query_opt_add(cJSON *obj, const char **bare_key, const char *key, const char *value)
{
    if (!key)
        return;
    if (!value) {
        if (!*bare_key)
            *bare_key = key;
        value = "";
    }
    static const char *const lists[] = {"fasteners", "fixed_pairs"};
    static const char *const nums[] = {"tol", "max_iter", "fastener_fraction", "timeout_s"};
    for (int i = 0; i < 2; i++)
        if (!strcmp(key, lists[i]) && strcmp(value, "all") && strcmp(value, "none")) {
            add_query_list(obj, key, value);
            return;
        }
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        if (!strcmp(key, nums[i])) {
            cJSON_AddItemToObject(obj, key, gsd_query_value(value, strlen(value)));
            return;
        }
    if (!strcmp(key, "cache")) { /* true / false, or 1 / 0 (the Python client's booleans) */
        const int t = !strcmp(value, "true") || !strcmp(value, "1");
        if (t || !strcmp(value, "false") || !strcmp(value, "0")) {
            cJSON_AddBoolToObject(obj, key, t);
            return;
        }
    }
    cJSON_AddStringToObject(obj, key, value);
}

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    query_opts *q = cls;
    gsd_query_opt_add(q->obj, &q->bare_key, key, value);
    return MHD_YES;
}

/* Put the gaps file in place: jobs/<id>/gaps.npy, from G (written), from
 * src (another job's gaps: a hard link, as both are never written again,
 * or a copy where the file system has none) or else the staged upload
 * (renamed). */
static int place_gaps(gsd_req *r, const char *job_id, const double *G, int k, int m,
                      const char *src)
{
    char dir[PATH_MAX], path[PATH_MAX];
    gsd_path_job(r->app, job_id, dir, sizeof dir);
    gsd_jobs_gaps_path(r->app, job_id, path, sizeof path);
    if (gsd_mkdirs(dir) != 0) {
        gsd_reply_io_error(r, errno, "cannot create %s", dir);
        return 0;
    }
    gs_error e;
    if (G) {
        size_t shape[2] = {(size_t)k, (size_t)m};
        if (gs_npy_write_file(path, G, 2, shape, &e)) {
            gsd_reply_gs_error(r, &e);
            gsd_rmtree(dir);
            return 0;
        }
    } else if (src) {
        int gone = 0;
        if (link(src, path) != 0 && ((gone = errno == ENOENT) || gs_file_copy(src, path, &e))) {
            if (gone)
                gsd_reply_error(r, 409, "conflict", "gaps_from",
                                "the gaps of that job are gone (deleted meanwhile)");
            else
                gsd_reply_gs_error(r, &e);
            gsd_rmtree(dir);
            return 0;
        }
    } else {
        if (rename(r->file_path, path) != 0) {
            gsd_reply_io_error(r, errno, "cannot store the gaps");
            gsd_rmtree(dir);
            return 0;
        }
        r->file_path[0] = '\0'; /* adopted */
    }
    return 1;
}

/* "gaps_from": the path of that job's gaps and their count, if it is a job
 * of this assembly. 0 after answering (spec freed). */
static int source_gaps(gsd_req *r, const gsd_assembly_row *arow, gsd_spec *spec, char *src,
                       size_t cap, int *k)
{
    gsd_job_row sj;
    int found = 0;
    gs_error e;
    if (gsd_store_job_get(r->app->st, spec->gaps_job, &sj, &found, &e) != GS_OK) {
        gsd_spec_free(spec);
        gsd_api_store_error(r, &e);
        return 0;
    }
    int ok = found && !strcmp(sj.assembly_id, arow->id);
    if (found) {
        *k = sj.total;
        gsd_job_row_free(&sj);
    }
    if (!ok) {
        gsd_spec_free(spec);
        gsd_reply_error(r, 422, "invalid", "gaps_from",
                        "gaps_from must be a job of this assembly (%s): no job %s %s", arow->id,
                        spec->gaps_job, found ? "on it" : "exists");
        return 0;
    }
    gsd_jobs_gaps_path(r->app, spec->gaps_job, src, cap);
    return 1;
}

/* "generate": k x m gaps from the generator, bounded like a JSON body
 * (k m 8 bytes <= --max-body). O(k m (modes + bumps)). 0 after answering. */
static int generate_gaps(gsd_req *r, const gs_model *mdl, const gsd_spec *spec, double **G,
                         int *k)
{
    size_t bytes = sizeof(double) * (size_t)spec->gen_count * (size_t)(mdl->m > 0 ? mdl->m : 1);
    if (spec->gen_count > r->app->o.max_gaps || bytes > r->app->o.max_body) {
        gsd_reply_error(r, 413, "too_large", "generate.count",
                        "%d generated gaps of m = %d pairs: more than the limit of %d gaps or "
                        "%zu MiB (gapsimd --max-gaps, --max-body)", spec->gen_count, mdl->m,
                        r->app->o.max_gaps, r->app->o.max_body >> 20);
        return 0;
    }
    *G = malloc(bytes);
    if (!*G) {
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return 0;
    }
    gs_error e = {0};
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    cp.scatter = spec->gen_scatter;
    if (gs_gen_gap_cloud(mdl, spec->gen_count, spec->gen_seed, &cp, *G, &e)) {
        free(*G);
        *G = NULL;
        gsd_reply_error(r, 500, "internal", "generate", "cannot generate the gaps: %s", e.msg);
        return 0;
    }
    *k = spec->gen_count;
    return 1;
}

/* Which candidates the pattern installs (stored with the job's options, so
 * the job says it), and the generated gaps when the spec asks for them;
 * loads the model if it is not in memory. 0 after answering (spec freed). */
static int resolve_pattern(gsd_req *r, const gsd_assembly_row *arow, gsd_spec *spec, double **G,
                           int *k)
{
    gs_error e = {0};
    gsd_asm *a = gsd_registry_acquire(r->app->reg, arow->id);
    gs_err rc = !a ? gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory")
                   : gsd_asm_model(r->app, a, &e);
    if (!rc)
        rc = gsd_spec_resolve(spec, gsd_asm_mdl(a), &e);
    if (rc) {
        gsd_registry_release(r->app->reg, a);
        gsd_spec_free(spec);
        if (!gsd_api_asm_gone(r, r->app->st, arow->id))
            gsd_reply_error(r, rc == GS_ERR_NOMEM ? 503 : 500, gs_err_name(rc), e.field,
                            "cannot resolve the fastener pattern: %s", e.msg);
        return 0;
    }
    int ok = spec->gen_count == 0 || generate_gaps(r, gsd_asm_mdl(a), spec, G, k);
    gsd_registry_release(r->app->reg, a);
    if (!ok)
        gsd_spec_free(spec);
    return ok;
}

/* 1 if the JSON body has a "gaps" array (taken without a tree or in it). */
static int body_has_gaps(const gsd_req *r, const cJSON *obj)
{
    return !strcmp(r->nums_key, "gaps") || cJSON_GetObjectItemCaseSensitive(obj, "gaps");
}

void gsd_h_cloud_create(gsd_req *r)
{
    gsd_assembly_row arow;
    if (!gsd_api_assembly(r, &arow) || !gsd_api_ready(r, &arow) || !gsd_api_room(r))
        return;
    cJSON *obj = NULL;
    double *G = NULL;
    int k = 0;
    int generated = 0, from_job = 0;
    const char *bare_key = NULL; /* an .npy upload's query option without '=' */
    if (r->body_kind == GSD_BODY_JSON) {
        /* the options of a JSON body are in the body: one in the query
         * would be ignored (none is listed: the first parameter) */
        const char *q = gsd_query_other(r, "");
        if (q) {
            gsd_reply_bad_query(r, q, "query parameter '%s' with a JSON body: a JSON cloud's "
                                "options go in the body (the query string carries those of an "
                                ".npy body)", q);
            return;
        }
        obj = gsd_api_body(r);
        generated = obj && cJSON_GetObjectItemCaseSensitive(obj, "generate") != NULL;
        from_job = obj && cJSON_GetObjectItemCaseSensitive(obj, "gaps_from") != NULL;
        if (obj && generated + from_job + body_has_gaps(r, obj) > 1) {
            gsd_reply_error(r, 422, "invalid", from_job ? "gaps_from" : "generate",
                            "give one of gaps, generate or gaps_from");
            cJSON_Delete(obj);
            return;
        }
        if (!obj || (!generated && !from_job && !json_gaps(r, obj, arow.m, &G, &k))) {
            cJSON_Delete(obj);
            return;
        }
    } else if (r->body_kind == GSD_BODY_NPY) {
        obj = cJSON_CreateObject();
        if (!obj) {
            gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
            return;
        }
        query_opts q = {obj, NULL};
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, add_query, &q);
        bare_key = q.bare_key;
        if (!check_npy(r, arow.m, &k)) {
            cJSON_Delete(obj);
            return;
        }
        const char *src_key = cJSON_GetObjectItemCaseSensitive(obj, "generate") ? "generate"
                              : cJSON_GetObjectItemCaseSensitive(obj, "gaps_from") ? "gaps_from"
                                                                                   : NULL;
        if (src_key) {
            gsd_reply_error(r, 422, "invalid", src_key,
                            "%s is a JSON body without gaps, not an .npy upload option", src_key);
            cJSON_Delete(obj);
            return;
        }
    } else {
        gsd_reply_error(r, 400, "invalid", "body",
                        "a cloud needs a body: JSON {\"gaps\": [[...], ...]}, JSON "
                        "{\"generate\": {\"count\": k, \"seed\": s}}, JSON {\"gaps_from\": "
                        "\"j_...\"} or a k x m .npy (Content-Type: application/x-npy)");
        return;
    }
    gsd_spec spec;
    gs_error e;
    if (gsd_spec_parse(obj, arow.n_fast, arow.m, 1, &spec, &e)) {
        cJSON_Delete(obj);
        free(G);
        gsd_reply_gs_error(r, &e);
        return;
    }
    if (bare_key) { /* a known option, and "" passed: still no value given */
        gsd_reply_error(r, 422, "invalid", bare_key, "query option %s has no value (%s=...)",
                        bare_key, bare_key);
        gsd_spec_free(&spec);
        cJSON_Delete(obj);
        free(G);
        return;
    }
    if (gsd_spec_check_new(&spec, &e) ||
        gsd_spec_timeout(&spec, r->app->o.default_timeout, r->app->o.max_timeout, &e)) {
        gsd_spec_free(&spec);
        cJSON_Delete(obj);
        free(G);
        gsd_reply_gs_error(r, &e);
        return;
    }
    if (!gsd_api_lq_usable(r, &arow, &spec.opts)) {
        gsd_spec_free(&spec);
        cJSON_Delete(obj);
        free(G);
        return;
    }
    cJSON_Delete(obj);
    if (!resolve_pattern(r, &arow, &spec, &G, &k)) {
        free(G);
        return;
    }
    char src[PATH_MAX] = "";
    if (spec.gaps_job[0] && !source_gaps(r, &arow, &spec, src, sizeof src, &k))
        return;
    if (spec.warm_job[0]) {
        gsd_job_row wj;
        int found = 0;
        int bad = gsd_store_job_get(r->app->st, spec.warm_job, &wj, &found, &e) != GS_OK || !found ||
                  strcmp(wj.assembly_id, arow.id) != 0 || wj.total != k;
        if (found)
            gsd_job_row_free(&wj);
        if (bad) {
            gsd_spec_free(&spec);
            free(G);
            gsd_reply_error(r, 422, "invalid", "warm_start",
                            "warm_start must be a job of this assembly with the same number of "
                            "gaps (%d); gap i starts from that job's result i",
                            k);
            return;
        }
    }
    gsd_job_row row = {0};
    gsd_new_id('j', row.id);
    snprintf(row.assembly_id, sizeof row.assembly_id, "%s", arow.id);
    snprintf(row.status, sizeof row.status, "queued");
    row.total = k;
    row.created_at = gsd_unix_now();
    gs_buf ob = {0};
    gsd_spec_write(&spec, &ob);
    row.options_json = gs_buf_take(&ob, NULL);
    int ok = row.options_json && place_gaps(r, row.id, G, k, arow.m, src[0] ? src : NULL);
    free(G);
    if (ok && gsd_store_job_insert(r->app->st, &row, &e)) {
        if (!gsd_api_asm_gone(r, r->app->st, arow.id)) /* else the job's foreign key failed */
            gsd_api_store_error(r, &e);
        ok = 0;
    }
    if (ok && gsd_jobs_add(r->app, &row, arow.m, &spec, &e)) {
        gsd_reply_gs_error(r, &e);
        ok = 0;
    }
    if (!ok) {
        if (!r->resp)
            gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        char dir[PATH_MAX];
        gsd_path_job(r->app, row.id, dir, sizeof dir);
        gsd_rmtree(dir);
        gsd_store_job_set_status(r->app->st, row.id, "failed", gsd_unix_now(), NULL);
        gsd_spec_free(&spec);
        gsd_job_row_free(&row);
        return;
    }
    atomic_fetch_add(&r->app->metrics.clouds_submitted, 1);
    gsd_upkeep_kick(r->app);
    gs_buf b = {0};
    gsd_render_job(&row, NULL, &b);
    gsd_job_row_free(&row);
    gsd_reply_json(r, 202, &b);
}
