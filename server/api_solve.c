/*
 * api_solve.c -- POST /v1/assemblies/{id}/solve and GET /v1/results/{id}.
 *
 * A solve is checked on the connection thread (body, gap vector, options,
 * warm-start result). If the assembly's factors are in memory, the result
 * cache is asked right there: a repeated gap is answered without a worker.
 * Otherwise the request is suspended and queued as an interactive task,
 * ahead of cloud work; the worker solves, stores the result, answers and
 * resumes the connection.
 */
#include "api.h"

#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api_body_impl.h"
#include "assembly.h"
#include "exec.h"
#include "linalg.h"
#include "pool.h"
#include "render.h"
#include "upkeep.h"

typedef struct {
    gsd_task t;
    gsd_app *app;
    gsd_req *r;
    char asm_id[GSD_ID_LEN];
    int m;
    double *g, *load;
    unsigned char *eq;
    gsd_spec spec;
    gsd_result_row warm; /* lam set if a warm start was asked */
    double t0;           /* gs_now() at the request: the deadline is t0 + timeout_s */
    int probed;          /* the result cache was asked on the connection thread (a miss) */
    atomic_int cancel;   /* set when the client hangs up or the daemon stops */
} solve_task;

static void task_free(solve_task *st)
{
    free(st->g);
    free(st->load);
    free(st->eq);
    gsd_spec_free(&st->spec);
    gsd_result_row_free(&st->warm);
    free(st);
}

int gsd_body_g(const gsd_numarr *nums, const cJSON *obj, int m, double *g, gsd_body_err *err)
{
    if (nums) { /* taken without a tree (gsd_api_body) */
        if (nums->rows != -1 || nums->cols != m)
            return gsd_body_refuse(err, 422, "dimension_mismatch", "g",
                                   "g must be an array of m = %d numbers (got %s%ld)", m,
                                   nums->rows != -1 ? "an array of arrays, " : "", nums->cols);
        memcpy(g, nums->v, sizeof(double) * (size_t)m);
        return 1;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "g");
    if (!v)
        return gsd_body_refuse(err, 422, "invalid", "g",
                               "the body needs \"g\": the %d initial gaps (mm)", m);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != m)
        return gsd_body_refuse(err, 422, "dimension_mismatch", "g",
                               "g must be an array of m = %d numbers (got %s%d)", m,
                               cJSON_IsArray(v) ? "" : "a non-array, size ",
                               cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0);
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
            char f[32];
            snprintf(f, sizeof f, "g[%d]", k);
            return gsd_body_refuse(err, 422, "not_finite", f, "%s must be a finite number (mm)", f);
        }
        g[k++] = e->valuedouble;
    }
    return 1;
}

/* The gap vector "g": m finite numbers. 0 after answering. */
static int parse_g(gsd_req *r, const cJSON *obj, int m, double *g)
{
    gsd_body_err err;
    if (gsd_body_g(!strcmp(r->nums_key, "g") ? &r->nums : NULL, obj, m, g, &err))
        return 1;
    gsd_body_reply(r, &err);
    return 0;
}

static void reply_result(gsd_req *r, const gsd_result_row *row, unsigned ret, const double *x,
                         int n, int cached)
{
    gs_buf b = {0};
    gsd_render_result(row, ret, x, n, cached, &b);
    gsd_reply_json(r, 200, &b);
}

/* Answer from the cache if the key is there and the request lets it; 1 if
 * answered. */
static int try_cache(gsd_app *app, gsd_store *st, gsd_req *r, const char *asm_id, const char *key,
                     const gsd_spec *sp)
{
    const unsigned ret = sp->ret;
    if ((ret & GSD_RET_X) || sp->no_cache)
        return 0; /* x is not stored, or "cache": false: solve again */
    gsd_result_row hit = {0};
    int found = 0;
    gs_error e;
    if (gsd_store_result_find_key(st, asm_id, key, &hit, &found, &e) || !found)
        return 0;
    atomic_fetch_add(&app->metrics.cache_hits, 1);
    reply_result(r, &hit, ret, NULL, 0, 1);
    gsd_result_row_free(&hit);
    return 1;
}

/* Solve, store the result (a single solve), answer. */
static void solve_store_reply(solve_task *st, gsd_worker *w, gsd_asm *a, gsd_exec_in *in,
                              const char *key, double *x)
{
    gsd_app *app = st->app;
    gsd_req *r = st->r;
    gs_error e = {0};
    gsd_result_row row = {0};
    gs_err rc = gsd_exec_solve(w, a, in, &row, &e);
    if (rc == GS_OK && row.status == GS_STATUS_CANCELLED) {
        /* the client hung up, or the daemon is stopping: nothing to keep */
        gsd_reply_error(r, 503, "cancelled", "", "the solve was cancelled%s",
                        atomic_load(&app->stopping) ? ": the server is shutting down" : "");
        gsd_result_row_free(&row);
        return;
    }
    if (rc == GS_OK) {
        gsd_new_id('r', row.id);
        snprintf(row.assembly_id, sizeof row.assembly_id, "%s", st->asm_id);
        snprintf(row.cache_key, sizeof row.cache_key, "%s", key);
        row.job_index = -1;
        row.created_at = gsd_unix_now();
        rc = gsd_store_results_put(w->st, &row, 1, NULL, 0, 0, 0, 0, &e);
    }
    if (rc == GS_OK) {
        gsd_upkeep_kick(app); /* retention and the quota count it */
        reply_result(r, &row, st->spec.ret, x, gsd_asm_pc(a)->n, 0);
    } else if (!gsd_api_asm_gone(r, w->st, st->asm_id)) { /* its result has no row to join */
        gsd_reply_gs_error(r, &e);
    }
    gsd_result_row_free(&row);
}

static void solve_run(gsd_task *t, gsd_worker *w)
{
    solve_task *st = (solve_task *)t;
    gsd_app *app = st->app;
    gsd_req *r = st->r;
    gs_error e = {0};
    gsd_asm *a = gsd_registry_acquire(app->reg, st->asm_id);
    gs_err rc = a ? gsd_asm_ensure(app, a, w->st, &e) : gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    if (rc == GS_OK) {
        gs_solve_opts o = st->spec.opts;
        o.want_x = (st->spec.ret & GSD_RET_X) != 0;
        rc = gsd_asm_need(app, a, &o, &e);
    }
    /* its stored files unreadable (the load, or the stiffness blocks read
     * again), or L_Q made here failing its check (precomp_check.h): the
     * server's failure (500), not the request's */
    const int unreadable = rc == GS_ERR_IO || rc == GS_ERR_FORMAT || rc == GS_ERR_CHECK;
    if (rc == GS_OK && !st->load) {
        st->load = malloc(sizeof(double) * (size_t)st->m);
        st->eq = malloc((size_t)st->m);
        rc = st->load && st->eq ? gsd_spec_problem(&st->spec, gsd_asm_mdl(a), st->load, st->eq, &e)
                                : gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    }
    double *x = NULL;
    if (rc == GS_OK && (st->spec.ret & GSD_RET_X) &&
        !(x = malloc(sizeof(double) * (size_t)gsd_asm_pc(a)->n)))
        rc = gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    if (rc) {
        if (!gsd_api_asm_gone(r, w->st, st->asm_id))
            gsd_reply_error(r, unreadable ? 500 : e.code == GS_ERR_NOMEM ? 503 : 409,
                            gs_err_name(e.code), e.field, "%s", e.msg);
    } else {
        st->spec.opts.cancel = &st->cancel;
        st->spec.opts.deadline = st->t0 + st->spec.timeout_s;
        gsd_exec_in in = {.g = st->g, .load = st->load, .eq = st->eq, .opts = &st->spec.opts,
                          .warm = st->warm.lam ? &st->warm : NULL, .x = x};
        char key[40];
        gsd_exec_key(a, &in, key);
        /* the cache is asked once per request: here only when the assembly was
         * not in memory on the connection thread */
        if (st->probed || !try_cache(app, w->st, r, st->asm_id, key, &st->spec)) {
            atomic_fetch_add(&app->metrics.cache_misses, 1);
            if (gsd_api_quota(r, w->st)) /* else answered 507 */
                solve_store_reply(st, w, a, &in, key, x);
        }
    }
    free(x);
    gsd_registry_release(app->reg, a);
    gsd_req_unwatch(r);
    gsd_req_finish(r);
    task_free(st);
}

static void solve_cancel(gsd_task *t)
{
    solve_task *st = (solve_task *)t;
    gsd_req_abandon(st->r);
    task_free(st);
}

/* The warm-start result: must exist and belong to this assembly. 0 after answering. */
static int load_warm(gsd_req *r, solve_task *st)
{
    if (!st->spec.warm[0])
        return 1;
    int found = 0;
    gs_error e;
    if (gsd_store_result_get(r->app->st, st->spec.warm, &st->warm, &found, &e)) {
        gsd_api_store_error(r, &e);
        return 0;
    }
    if (!found || strcmp(st->warm.assembly_id, st->asm_id)) {
        gsd_reply_error(r, 422, "invalid", "warm_start", "no result %s on assembly %s",
                        st->spec.warm, st->asm_id);
        return 0;
    }
    return 1;
}

void gsd_h_solve(gsd_req *r)
{
    gsd_assembly_row row;
    if (!gsd_api_assembly(r, &row) || !gsd_api_ready(r, &row))
        return;
    cJSON *obj = gsd_api_body(r);
    if (!obj)
        return;
    solve_task *st = calloc(1, sizeof *st);
    if (st)
        st->g = malloc(sizeof(double) * (size_t)(row.m > 0 ? row.m : 1));
    if (!st || !st->g) {
        free(st);
        cJSON_Delete(obj);
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return;
    }
    st->app = r->app;
    st->r = r;
    st->m = row.m;
    snprintf(st->asm_id, sizeof st->asm_id, "%.18s", row.id);
    gs_error e;
    int ok = parse_g(r, obj, row.m, st->g);
    if (ok && (gsd_spec_parse(obj, row.n_fast, row.m, 0, &st->spec, &e) ||
               gsd_spec_timeout(&st->spec, r->app->o.default_timeout, r->app->o.max_timeout,
                                &e))) {
        gsd_reply_gs_error(r, &e);
        ok = 0;
    }
    if (ok && !gsd_api_lq_usable(r, &row, &st->spec.opts))
        ok = 0;
    cJSON_Delete(obj);
    if (!ok || !load_warm(r, st)) {
        task_free(st);
        return;
    }
    /* fast path: the model in memory (with its factors, or the skeleton of
     * an unloaded assembly) -> ask the cache on this thread (never wait for
     * an entry a worker is loading or precomputing; the row is ready) */
    gsd_asm *a = gsd_registry_acquire(r->app->reg, row.id);
    if (a && gsd_asm_trylock_model(a)) {
        int hit = 0;
        st->load = malloc(sizeof(double) * (size_t)row.m);
        st->eq = malloc((size_t)row.m);
        if (st->load && st->eq &&
            gsd_spec_problem(&st->spec, gsd_asm_mdl(a), st->load, st->eq, &e) == GS_OK) {
            gsd_exec_in in = {.g = st->g, .load = st->load, .eq = st->eq,
                              .opts = &st->spec.opts};
            char key[40];
            gsd_exec_key(a, &in, key);
            hit = try_cache(r->app, r->app->st, r, row.id, key, &st->spec);
            st->probed = 1;
        } else {
            free(st->load);
            free(st->eq);
            st->load = NULL;
            st->eq = NULL;
        }
        gsd_asm_unlock(a);
        if (hit) {
            gsd_registry_release(r->app->reg, a);
            task_free(st);
            return;
        }
    }
    gsd_registry_release(r->app->reg, a);
    st->t.run = solve_run;
    st->t.cancel = solve_cancel;
    st->t.slow = gsd_spec_is_slow(&st->spec);
    st->t0 = r->t0;
    gsd_req_suspend(r);
    gsd_req_watch(r, &st->cancel); /* a client that hangs up cancels the solve */
    if (gsd_pool_submit(r->app->pool, &st->t, GSD_PRIO_INTERACTIVE) != 0)
        solve_cancel(&st->t); /* answers 503 and resumes */
}

void gsd_h_result_get(gsd_req *r)
{
    if (!gsd_id_valid(r->id, 'r')) {
        gsd_reply_error(r, 404, "not_found", "id",
                        "no result %s (ids look like r_0123456789abcdef)", r->id_text);
        return;
    }
    gsd_result_row row = {0};
    int found = 0;
    gs_error e;
    if (gsd_store_result_get(r->app->st, r->id, &row, &found, &e)) {
        gsd_api_store_error(r, &e);
        return;
    }
    if (!found) {
        gsd_reply_error(r, 404, "not_found", "id", "no result %s", r->id);
        return;
    }
    reply_result(r, &row, GSD_RET_W | GSD_RET_LAMBDA | GSD_RET_KKT, NULL, 0, -1);
    gsd_result_row_free(&row);
}
