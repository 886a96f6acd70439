/*
 * store_results.c -- the results table: rows and their encoded vectors,
 * cache lookups, a job's results (read in short chunks), retention of single
 * solves (see store.h for the contract, store_impl.h for the split).
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

/* A result of an assembly whose delete is under way reads as absent, as the
 * assembly and its jobs do (its rows go batch by batch). */
static gs_err gone_if_deleting(gs_err e, gsd_result_row *out, int *found)
{
    if (!e && *found && gsd_store_asm_deleting(out->assembly_id)) {
        gsd_result_row_free(out);
        *found = 0;
    }
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
    return gone_if_deleting(e, out, found);
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
    return gone_if_deleting(e, out, found);
}

/* ---- a job's results, chunk by chunk ------------------------------------------------ */

/* Rows of a job's results copied out of the store: their scalars, their
 * vectors as stored (raw: one encoded blob after the other), then decoded
 * into vec, so that the read transaction lasts only the B-tree walk and the
 * copies, and ends before the decoding and the callbacks. */
typedef struct {
    ptrdiff_t at[2];   /* w, lam: offset of the blob in raw (-1: NULL), then of the
                          decoded vector in vec, in doubles */
    size_t len[2];     /* blob bytes */
    int enc[2];        /* blob encodings */
} chunk_vecs;

typedef struct {
    gsd_result_row *rows;
    chunk_vecs *v;
    size_t rows_cap, v_cap;
    unsigned char *raw;
    size_t raw_cap, raw_used; /* bytes */
    double *vec;
    size_t vec_cap;           /* bytes */
    int n;
} chunk;

static void chunk_free(chunk *c)
{
    free(c->rows);
    free(c->v);
    free(c->raw);
    free(c->vec);
}

/* Room for one more row in c. */
static gs_err chunk_room(chunk *c, gs_error *err)
{
    size_t k = (size_t)c->n + 1;
    gsd_result_row *r = grow(c->rows, &c->rows_cap, k * sizeof *c->rows);
    if (r)
        c->rows = r;
    chunk_vecs *v = r ? grow(c->v, &c->v_cap, k * sizeof *c->v) : NULL;
    if (v)
        c->v = v;
    return v ? GS_OK : nomem(err, "job results");
}

/* The blob of vector k (0 w, 1 lam: columns RES_COL_W + k, encodings two
 * further) of the current row of s copied to the end of c->raw. */
static gs_err chunk_blob(sqlite3_stmt *s, chunk *c, chunk_vecs *v, int k, gs_error *err)
{
    int col = RES_COL_W + k;
    v->at[k] = -1;
    if (col_is_null(s, col))
        return GS_OK;
    const void *p = sqlite3_column_blob(s, col);
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    unsigned char *q = grow(c->raw, &c->raw_cap, c->raw_used + len + 1);
    if (!q)
        return nomem(err, k ? "lam" : "w");
    c->raw = q;
    if (len)
        memcpy(c->raw + c->raw_used, p, len);
    v->at[k] = (ptrdiff_t)c->raw_used;
    v->len[k] = len;
    v->enc[k] = sqlite3_column_int(s, col + 2);
    c->raw_used += len;
    return GS_OK;
}

/* The current row of s appended to c (vectors still encoded). */
static gs_err chunk_add(sqlite3_stmt *s, int with_vectors, chunk *c, gs_error *err)
{
    gs_err e = chunk_room(c, err);
    if (e)
        return e;
    chunk_vecs *v = &c->v[c->n];
    v->at[0] = v->at[1] = -1;
    e = read_result_scalars(s, &c->rows[c->n], err);
    for (int k = 0; k < 2 && !e && with_vectors; k++)
        e = chunk_blob(s, c, v, k, err);
    if (!e)
        c->n++;
    return e;
}

/* Decode every copied blob of c into c->vec (store locked: st->vc). */
static gs_err chunk_decode(gsd_store *st, chunk *c, gs_error *err)
{
    size_t need = 0;
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < 2; k++)
            need += c->v[i].at[k] >= 0 ? (size_t)(c->rows[i].m > 0 ? c->rows[i].m : 1) : 0;
    double *q = grow(c->vec, &c->vec_cap, (need ? need : 1) * sizeof(double));
    if (!q)
        return nomem(err, "job results");
    c->vec = q;
    size_t used = 0;
    gs_err e = GS_OK;
    for (int i = 0; i < c->n && !e; i++) {
        gsd_result_row *r = &c->rows[i];
        for (int k = 0; k < 2 && !e; k++) {
            chunk_vecs *v = &c->v[i];
            if (v->at[k] < 0)
                continue;
            e = gsd_vecenc_decode(st->vc, k ? GSD_VEC_LAM : GSD_VEC_W, v->enc[k],
                                  c->raw + v->at[k], v->len[k], r->m, c->vec + used, r->id,
                                  err);
            v->at[k] = (ptrdiff_t)used;
            used += (size_t)(r->m > 0 ? r->m : 1);
        }
    }
    return e;
}

/* The job's results with job_index in [lo, hi) into c, at most
 * GSD_CHUNK_ROWS rows or GSD_CHUNK_BYTES of stored vectors (at least one
 * row), in one read transaction (the statement's: reset before the
 * vectors are decoded). *full: c stopped at its bound (more rows may
 * follow). */
static gs_err read_chunk(gsd_store *st, const char *job_id, long long lo, long long hi,
                         int with_vectors, chunk *c, int *full, gs_error *err)
{
    c->n = 0;
    c->raw_used = 0;
    *full = 0;
    lock(st);
    sqlite3_stmt *s = stmt(st, with_vectors ? S_JOB_RESULTS : S_JOB_RESULTS_NOVEC);
    binder b = bind_start(s);
    b_text(&b, job_id, 1024);
    b_int(&b, lo);
    b_int(&b, hi);
    gs_err e = bind_end(st, &b, "job results", err);
    int rc = SQLITE_DONE;
    while (!e && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        e = chunk_add(s, with_vectors, c, err);
        if (!e && (c->n >= GSD_CHUNK_ROWS || c->raw_used >= GSD_CHUNK_BYTES)) {
            *full = 1;
            break;
        }
    }
    if (!e && rc != SQLITE_ROW && rc != SQLITE_DONE)
        e = sql_err(st, rc, "job results", err);
    stmt_release(s); /* ends the read transaction */
    if (!e)
        e = chunk_decode(st, c, err);
    unlock(st);
    return e;
}

/* A job's results are keyed by (job_id, job_index) (results_job_index) and
 * never change once stored, so chunks read one after the other, each from
 * the index after the last one read, see every row once, in index order:
 * for an ended job exactly what one read would; for a running job every
 * result stored before the call and any stored during it at an index not
 * yet passed. */
gs_err gsd_store_job_results(gsd_store *st, const char *job_id, int offset, int limit,
                             int with_vectors, int (*cb)(const gsd_result_row *, void *),
                             void *ctx, gs_error *err)
{
    REQUIRE(st && job_id && cb, "job_id");
    long long lo = offset, hi = limit < 0 ? LLONG_MAX : (long long)offset + limit;
    chunk c = {0};
    gs_err e = GS_OK;
    int full = 1, stop = 0;
    while (!e && full && !stop && lo < hi) {
        e = read_chunk(st, job_id, lo, hi, with_vectors, &c, &full, err);
        for (int i = 0; !e && i < c.n && !stop; i++) {
            gsd_result_row *r = &c.rows[i];
            r->w = c.v[i].at[0] >= 0 ? c.vec + c.v[i].at[0] : NULL;
            r->lam = c.v[i].at[1] >= 0 ? c.vec + c.v[i].at[1] : NULL;
            stop = cb(r, ctx) != 0;
        }
        if (c.n > 0)
            lo = (long long)c.rows[c.n - 1].job_index + 1;
    }
    chunk_free(&c);
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

