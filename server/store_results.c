/*
 * store_results.c -- the results table: rows and their encoded vectors, cache lookups, a job's results, retention of single solves (see store.h for the contract, store_impl.h for the
 * split).
 */
#include "store_impl.h"

#include <stddef.h>

/* ---- result vectors ---------------------------------------------------------------- */

/* Column col (a vector BLOB, encoding in column col + 2) into dst (m entries). */
/* Decode the vector BLOB in column col, its encoding in column enc_col. */
static gs_err decode_blob(gsd_store *st, sqlite3_stmt *s, int which, int col, int enc_col, int m,
                          double *dst, const char *id, gs_error *err)
{
    const void *p = sqlite3_column_blob(s, col);
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    return gsd_vecenc_decode(st->vc, which, sqlite3_column_int(s, enc_col), p, len, m, dst, id,
                             err);
}

/* w or lam of a row of RES_COLS (their encodings two columns later). */
static gs_err decode_col(gsd_store *st, sqlite3_stmt *s, int col, int m, double *dst,
                         const char *id, gs_error *err)
{
    return decode_blob(st, s, col == RES_COL_W ? GSD_VEC_W : GSD_VEC_LAM, col, col + 2, m, dst,
                       id, err);
}

static int col_is_null(sqlite3_stmt *s, int col)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL;
}

/* Vectors into malloc'ed arrays owned by the row. */
static gs_err read_vectors_owned(gsd_store *st, sqlite3_stmt *s, gsd_result_row *r,
                                 gs_error *err)
{
    size_t n = r->m > 0 ? (size_t)r->m : 1;
    gs_err e = GS_OK;
    if (!col_is_null(s, RES_COL_W)) {
        r->w = malloc(n * sizeof *r->w);
        e = r->w ? decode_col(st, s, RES_COL_W, r->m, r->w, r->id, err) : nomem(err, "w");
    }
    if (!e && !col_is_null(s, RES_COL_W + 1)) {
        r->lam = malloc(n * sizeof *r->lam);
        e = r->lam ? decode_col(st, s, RES_COL_W + 1, r->m, r->lam, r->id, err)
                   : nomem(err, "lam");
    }
    if (e)
        gsd_result_row_free(r);
    return e;
}

/* Vectors into the store's scratch buffers (valid until the next row). */
static gs_err read_vectors_scratch(gsd_store *st, sqlite3_stmt *s, gsd_result_row *r,
                                   gs_error *err)
{
    size_t bytes = (r->m > 0 ? (size_t)r->m : 1) * sizeof(double);
    gs_err e = GS_OK;
    if (!col_is_null(s, RES_COL_W)) {
        double *q = grow(st->vw, &st->vw_cap, bytes);
        if (!q)
            return nomem(err, "w");
        st->vw = q;
        e = decode_col(st, s, RES_COL_W, r->m, st->vw, r->id, err);
        r->w = st->vw;
    }
    if (!e && !col_is_null(s, RES_COL_W + 1)) {
        double *q = grow(st->vl, &st->vl_cap, bytes);
        if (!q)
            return nomem(err, "lam");
        st->vl = q;
        e = decode_col(st, s, RES_COL_W + 1, r->m, st->vl, r->id, err);
        r->lam = st->vl;
    }
    return e;
}

/* ---- results ------------------------------------------------------------------------ */

void gsd_result_row_free(gsd_result_row *row)
{
    if (!row)
        return;
    free(row->w);
    free(row->lam);
    row->w = NULL;
    row->lam = NULL;
}

/* The stored KKT values of a gs_kkt, in column order. */
static const size_t kkt_col[6] = {offsetof(gs_kkt, primal_infeas), offsetof(gs_kkt, dual_infeas),
                                  offsetof(gs_kkt, complementarity), offsetof(gs_kkt, stationarity),
                                  offsetof(gs_kkt, gap), offsetof(gs_kkt, obj_primal)};

/* Scalar columns (RES_SCALAR_COLS order); w and lam are left NULL. A status,
 * method or formulation name this build does not know: GS_ERR_FORMAT naming
 * the column; an empty method / formulation (the column default) reads as
 * auto / default. */
static gs_err read_result_scalars(sqlite3_stmt *s, gsd_result_row *r, gs_error *err)
{
    reader rd = {s, 0};
    memset(r, 0, sizeof *r);
    char status[32], method[32], form[32];
    r_text(&rd, r->id, sizeof r->id);
    r_text(&rd, r->assembly_id, sizeof r->assembly_id);
    r_text(&rd, r->job_id, sizeof r->job_id); /* NULL reads as "" */
    r->job_index = (int)r_int(&rd);
    r_text(&rd, r->cache_key, sizeof r->cache_key);
    r_text(&rd, status, sizeof status);
    r_text(&rd, method, sizeof method);
    r_text(&rd, form, sizeof form);
    r->auto_chosen = (int)r_int(&rd);
    r->warm_used = (int)r_int(&rd);
    r->n_act = (int)r_int(&rd);
    r->iterations = (int)r_int(&rd);
    r->cg_iterations = (int)r_int(&rd);
    r->time = r_real(&rd);
    for (int k = 0; k < 6; k++)
        *(double *)((char *)&r->kkt + kkt_col[k]) = r_real(&rd);
    r->kkt_pass = (int)r_int(&rd);
    r->m = (int)r_int(&rd);
    r->created_at = r_real(&rd);
    r->crossover = (int)r_int(&rd);
    if (gs_status_parse(status, &r->status))
        return gs_errorf(err, GS_ERR_FORMAT, "status", "result %s: unknown status \"%s\"", r->id,
                         status);
    /* '' is the columns' default (001_init.sql): a row written without them */
    if (!method[0])
        r->method = GS_METHOD_AUTO;
    else if (gs_method_parse(method, &r->method))
        return gs_errorf(err, GS_ERR_FORMAT, "method", "result %s: unknown method \"%s\"", r->id,
                         method);
    if (!form[0])
        r->form = GS_FORM_DEFAULT;
    else if (gs_form_parse(form, &r->form))
        return gs_errorf(err, GS_ERR_FORMAT, "form", "result %s: unknown formulation \"%s\"",
                         r->id, form);
    return GS_OK;
}

static gs_err result_insert(gsd_store *st, const gsd_result_row *r, int i, gs_error *err)
{
    if (r->m < 0 || r->m > INT_MAX / LAM_ENTRY) {
        char field[32];
        snprintf(field, sizeof field, "rows[%d].m", i);
        return gs_errorf(err, GS_ERR_INVALID, field, "invalid m %d", r->m);
    }
    const void *wp = NULL, *lp = NULL;
    size_t w_len = 0, lam_len = 0;
    int w_enc = GSD_VEC_RAW, lam_enc = GSD_VEC_RAW;
    gs_err e = GS_OK;
    if (r->w)
        e = gsd_vecenc_encode(st->vc, GSD_VEC_W, r->w, r->m, &wp, &w_len, &w_enc, err);
    if (!e && r->lam)
        e = gsd_vecenc_encode(st->vc, GSD_VEC_LAM, r->lam, r->m, &lp, &lam_len, &lam_enc, err);
    if (e)
        return e;
    sqlite3_stmt *s = stmt(st, S_RES_INSERT);
    binder b = bind_start(s);
    b_text(&b, r->id, sizeof r->id);
    b_text(&b, r->assembly_id, sizeof r->assembly_id);
    b_text_or_null(&b, r->job_id, sizeof r->job_id, 1);
    b_int(&b, r->job_index);
    b_text(&b, r->cache_key, sizeof r->cache_key);
    b_text(&b, gs_status_name(r->status), 32);
    b_text(&b, gs_method_name(r->method), 32);
    b_text(&b, gs_form_name(r->form), 32);
    b_int(&b, r->auto_chosen);
    b_int(&b, r->warm_used);
    b_int(&b, r->n_act);
    b_int(&b, r->iterations);
    b_int(&b, r->cg_iterations);
    b_real(&b, r->time);
    for (int k = 0; k < 6; k++)
        b_real(&b, *(const double *)((const char *)&r->kkt + kkt_col[k]));
    b_int(&b, r->kkt_pass);
    b_int(&b, r->m);
    b_real(&b, r->created_at);
    b_int(&b, r->crossover);
    b_blob(&b, wp, w_len);
    b_blob(&b, lp, lam_len);
    b_int(&b, w_enc);
    b_int(&b, lam_enc);
    e = bind_end(st, &b, "insert result", err);
    return e ? e : step_done(st, s, "insert result", err);
}

static gs_err job_add_counters(gsd_store *st, const char *job_id, int done_delta,
                               int failed_delta, double time_delta, long long iter_delta,
                               gs_error *err)
{
    sqlite3_stmt *s = stmt(st, S_JOB_COUNTERS);
    binder b = bind_start(s);
    b_text(&b, job_id, 1024);
    b_int(&b, done_delta);
    b_int(&b, failed_delta);
    b_real(&b, time_delta);
    b_int(&b, iter_delta);
    gs_err e = bind_end(st, &b, "update job counters", err);
    if (!e)
        e = step_done(st, s, "update job counters", err);
    if (!e && sqlite3_changes(st->db) == 0)
        e = gs_errorf(err, GS_ERR_INVALID, "job_id", "no job '%.40s'", job_id);
    return e;
}

gs_err gsd_store_results_put(gsd_store *st, const gsd_result_row *rows, int count,
                             const char *job_id, int done_delta, int failed_delta,
                             double time_delta, long long iter_delta, gs_error *err)
{
    REQUIRE(st && count >= 0 && (rows || count == 0), "rows");
    lock(st);
    gs_err e = tx_begin(st, err);
    if (!e) {
        if (job_id)
            e = job_add_counters(st, job_id, done_delta, failed_delta, time_delta, iter_delta,
                                 err);
        for (int i = 0; i < count && !e; i++)
            e = result_insert(st, &rows[i], i, err);
        e = tx_end(st, e, err);
    }
    unlock(st);
    return e;
}

/* Bind two text keys, step once, read one full result row (owned vectors). */
static gs_err result_lookup(gsd_store *st, int which, const char *k1, const char *k2,
                            gsd_result_row *out, int *found, gs_error *err)
{
    sqlite3_stmt *s = stmt(st, which);
    binder b = bind_start(s);
    b_text(&b, k1, 1024);
    if (k2)
        b_text(&b, k2, 1024);
    gs_err e = bind_end(st, &b, "get result", err);
    if (e)
        return e;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        e = read_result_scalars(s, out, err);
        if (!e)
            e = read_vectors_owned(st, s, out, err);
        *found = !e;
    } else if (rc != SQLITE_DONE) {
        e = sql_err(st, rc, "get result", err);
    }
    stmt_release(s);
    return e;
}

gs_err gsd_store_result_get(gsd_store *st, const char *id, gsd_result_row *out, int *found,
                            gs_error *err)
{
    REQUIRE(st && id && out && found, "id");
    *found = 0;
    out->w = out->lam = NULL;
    lock(st);
    gs_err e = result_lookup(st, S_RES_GET, id, NULL, out, found, err);
    unlock(st);
    return e;
}

gs_err gsd_store_result_find_key(gsd_store *st, const char *assembly_id, const char *cache_key,
                                 gsd_result_row *out, int *found, gs_error *err)
{
    REQUIRE(st && assembly_id && cache_key && out && found, "cache_key");
    *found = 0;
    out->w = out->lam = NULL;
    lock(st);
    gs_err e = result_lookup(st, S_RES_FIND_KEY, assembly_id, cache_key, out, found, err);
    unlock(st);
    return e;
}

static gs_err job_results_locked(gsd_store *st, sqlite3_stmt *s, int with_vectors,
                                 int (*cb)(const gsd_result_row *, void *), void *ctx,
                                 gs_error *err)
{
    gs_err e = GS_OK;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        gsd_result_row r;
        if ((e = read_result_scalars(s, &r, err)) != GS_OK ||
            (with_vectors && (e = read_vectors_scratch(st, s, &r, err)) != GS_OK))
            break;
        if (cb(&r, ctx))
            break;
    }
    if (!e && rc != SQLITE_ROW && rc != SQLITE_DONE)
        e = sql_err(st, rc, "job results", err);
    stmt_release(s);
    return e;
}

gs_err gsd_store_job_results(gsd_store *st, const char *job_id, int offset, int limit,
                             int with_vectors, int (*cb)(const gsd_result_row *, void *),
                             void *ctx, gs_error *err)
{
    REQUIRE(st && job_id && cb, "job_id");
    long long hi = limit < 0 ? LLONG_MAX : (long long)offset + limit;
    lock(st);
    sqlite3_stmt *s = stmt(st, with_vectors ? S_JOB_RESULTS : S_JOB_RESULTS_NOVEC);
    binder b = bind_start(s);
    b_text(&b, job_id, 1024);
    b_int(&b, offset);
    b_int(&b, hi);
    gs_err e = bind_end(st, &b, "job results", err);
    if (!e)
        e = job_results_locked(st, s, with_vectors, cb, ctx, err);
    unlock(st);
    return e;
}

gs_err gsd_store_job_lam(gsd_store *st, const char *job_id, int index, int m, double *lam,
                         int *found, gs_error *err)
{
    REQUIRE(st && job_id && lam && found && m > 0, "job_id");
    *found = 0;
    lock(st);
    sqlite3_stmt *s = stmt(st, S_JOB_LAM);
    binder b = bind_start(s);
    b_text(&b, job_id, 1024);
    b_int(&b, index);
    gs_err e = bind_end(st, &b, "warm start", err);
    int rc = e ? SQLITE_DONE : sqlite3_step(s);
    if (rc == SQLITE_ROW && sqlite3_column_int(s, 0) == m && !col_is_null(s, 1)) {
        char what[64];
        snprintf(what, sizeof what, "%.40s[%d]", job_id, index);
        e = decode_blob(st, s, GSD_VEC_LAM, 1, 2, m, lam, what, err); /* S_JOB_LAM's columns */
        *found = !e;
    } else if (!e && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        e = sql_err(st, rc, "warm start", err);
    }
    stmt_release(s);
    unlock(st);
    return e;
}

gs_err gsd_store_job_done_indices(gsd_store *st, const char *job_id, unsigned char *bitmap,
                                  int total, gs_error *err)
{
    REQUIRE(st && job_id && total >= 0 && (bitmap || total == 0), "job_id");
    if (total)
        memset(bitmap, 0, (size_t)total);
    lock(st);
    sqlite3_stmt *s = stmt(st, S_JOB_DONE_IDX);
    binder b = bind_start(s);
    b_text(&b, job_id, 1024);
    gs_err e = bind_end(st, &b, "job done indices", err);
    if (!e) {
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            long long i = sqlite3_column_int64(s, 0);
            if (i >= 0 && i < total)
                bitmap[i] = 1;
        }
        if (rc != SQLITE_DONE)
            e = sql_err(st, rc, "job done indices", err);
        stmt_release(s);
    }
    unlock(st);
    return e;
}

/* ---- retention, size --------------------------------------------------------------- */

/* Step a DELETE of the retention (parameters bound), adding its changes to *n. */
static gs_err retain_step(gsd_store *st, sqlite3_stmt *s, int *n, gs_error *err)
{
    gs_err e = step_done(st, s, "retention", err);
    if (!e)
        *n += sqlite3_changes(st->db);
    return e;
}

static gs_err retain_locked(gsd_store *st, double before, long long keep, int batch, int *n,
                            gs_error *err)
{
    gs_err e = GS_OK;
    if (before > 0) {
        sqlite3_stmt *s = stmt(st, S_RETAIN_AGE);
        binder b = bind_start(s);
        b_real(&b, before);
        b_int(&b, batch);
        e = bind_end(st, &b, "retention", err);
        if (!e)
            e = retain_step(st, s, n, err);
    }
    if (e || keep < 0 || *n >= batch)
        return e;
    sqlite3_stmt *s = stmt(st, S_SINGLE_COUNT);
    int rc = sqlite3_step(s);
    long long count = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    if (rc != SQLITE_ROW)
        e = sql_err(st, rc, "retention count", err);
    stmt_release(s);
    long long excess = count - keep, room = batch - *n;
    if (e || excess <= 0)
        return e;
    s = stmt(st, S_RETAIN_OLDEST);
    binder b = bind_start(s);
    b_int(&b, excess < room ? excess : room);
    e = bind_end(st, &b, "retention", err);
    return e ? e : retain_step(st, s, n, err);
}

gs_err gsd_store_retain(gsd_store *st, double before, long long keep, int batch, int *deleted,
                        gs_error *err)
{
    REQUIRE(st && deleted && batch > 0, "batch");
    *deleted = 0;
    if (before <= 0 && keep < 0)
        return GS_OK;
    lock(st);
    int n = 0;
    gs_err e = tx_begin(st, err);
    if (!e) {
        e = retain_locked(st, before, keep, batch, &n, err);
        e = tx_end(st, e, err);
    }
    unlock(st);
    if (!e)
        *deleted = n;
    return e;
}

