/*
 * store.c -- gapsimd's SQLite store (see store.h for the contract).
 *
 * Owns: opening and configuring the connection, applying the compiled-in
 * migrations (gsd_migrations, generated from the schema/ SQL files), the cache of
 * prepared statements (prepared once at open, reset after every use), the
 * row <-> column mapping of assemblies / jobs / results, the encoding of the
 * result vectors, and the transactions (BEGIN IMMEDIATE ... COMMIT, rolled
 * back on any failure). Every public function takes the store mutex, so the
 * connection (opened SQLITE_OPEN_NOMUTEX) is only ever used by one thread at
 * a time and sqlite3_errmsg refers to our own last call.
 */
#include "store.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vecenc.h"

#define GSD_BUSY_TIMEOUT_MS 10000
#define GSD_DEL_BATCH 256 /* results deleted per transaction by assembly_delete */
#define GSD_DEL_BATCH_S "256"
#define LAM_ENTRY 12 /* int32 index + double value */

/* ---- statements -------------------------------------------------------------- */

#define ASM_COLS                                                                       \
    "id, content_hash, name, joint, n, m, n_parts, n_nodes, n_fast, status, err_code, " \
    "err_field, err_msg, t_factor_k, t_build_q, t_loads, t_factor_q, t_cond, t_total, "  \
    "cond_k, cond_q, created_at, ready_at, factor_checksum"
#define JOB_COLS                                                                      \
    "id, assembly_id, status, total, done, failed, options_json, created_at, "        \
    "started_at, finished_at, solve_time_sum, iterations_sum, done_at_start, error"
#define RES_SCALAR_COLS                                                               \
    "id, assembly_id, job_id, job_index, cache_key, status, method, form, auto_chosen, " \
    "warm_used, n_act, iterations, cg_iterations, time, kkt_primal_infeas, "           \
    "kkt_dual_infeas, kkt_complementarity, kkt_stationarity, kkt_gap, kkt_obj_primal, " \
    "kkt_pass, m, created_at"
#define RES_COLS RES_SCALAR_COLS ", w, lam, w_enc, lam_enc"
#define RES_COL_W 23 /* column index of w in RES_COLS; lam, w_enc, lam_enc follow */

enum {
    S_BEGIN, S_COMMIT, S_ROLLBACK,
    S_ASM_INSERT, S_ASM_UPDATE, S_ASM_GET, S_ASM_FIND_HASH, S_ASM_LIST,
    S_ASM_DEL_RESULTS, S_ASM_DEL_JOBS, S_ASM_DEL,
    S_JOB_INSERT, S_JOB_GET, S_JOB_SET_STATUS, S_JOB_COUNTERS,
    S_JOB_LIST_ALL, S_JOB_LIST_ASM, S_JOB_LIST_STATUS, S_JOB_LIST_BOTH,
    S_RES_INSERT, S_RES_GET, S_RES_FIND_KEY, S_JOB_RESULTS, S_JOB_RESULTS_NOVEC,
    S_JOB_DONE_IDX, S_RETAIN_AGE, S_SINGLE_COUNT, S_RETAIN_OLDEST, S_PAGES,
    S__COUNT
};

static const char *const stmt_sql[S__COUNT] = {
    [S_BEGIN] = "BEGIN IMMEDIATE",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_ASM_INSERT] = "INSERT INTO assemblies (" ASM_COLS ") VALUES "
                     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_ASM_UPDATE] = "UPDATE assemblies SET content_hash=?2, name=?3, joint=?4, n=?5, m=?6, "
                     "n_parts=?7, n_nodes=?8, n_fast=?9, status=?10, err_code=?11, "
                     "err_field=?12, err_msg=?13, t_factor_k=?14, t_build_q=?15, t_loads=?16, "
                     "t_factor_q=?17, t_cond=?18, t_total=?19, cond_k=?20, cond_q=?21, "
                     "created_at=?22, ready_at=?23, factor_checksum=?24 WHERE id=?1",
    [S_ASM_GET] = "SELECT " ASM_COLS " FROM assemblies WHERE id=?1",
    [S_ASM_FIND_HASH] = "SELECT " ASM_COLS " FROM assemblies WHERE content_hash=?1 "
                        "ORDER BY created_at DESC, rowid DESC LIMIT 1",
    [S_ASM_LIST] = "SELECT " ASM_COLS " FROM assemblies ORDER BY created_at, rowid",
    [S_ASM_DEL_RESULTS] = "DELETE FROM results WHERE rowid IN (SELECT rowid FROM results "
                          "WHERE assembly_id=?1 LIMIT " GSD_DEL_BATCH_S ")",
    [S_ASM_DEL_JOBS] = "DELETE FROM jobs WHERE assembly_id=?1",
    [S_ASM_DEL] = "DELETE FROM assemblies WHERE id=?1",
    [S_JOB_INSERT] = "INSERT INTO jobs (" JOB_COLS ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE id=?1",
    [S_JOB_SET_STATUS] =
        "UPDATE jobs SET status=?2, "
        "started_at = CASE WHEN ?2='running' THEN ?3 ELSE started_at END, "
        "done_at_start = CASE WHEN ?2='running' THEN done ELSE done_at_start END, "
        "finished_at = CASE WHEN ?2 IN ('done','cancelled','failed') THEN ?3 "
        "ELSE finished_at END, error = CASE WHEN ?2='failed' THEN ?4 ELSE error END "
        "WHERE id=?1",
    [S_JOB_COUNTERS] = "UPDATE jobs SET done=done+?2, failed=failed+?3, "
                       "solve_time_sum=coalesce(solve_time_sum,0)+?4, "
                       "iterations_sum=iterations_sum+?5 WHERE id=?1",
    [S_JOB_LIST_ALL] = "SELECT " JOB_COLS " FROM jobs ORDER BY created_at, rowid",
    [S_JOB_LIST_ASM] = "SELECT " JOB_COLS " FROM jobs WHERE assembly_id=?1 "
                       "ORDER BY created_at, rowid",
    [S_JOB_LIST_STATUS] = "SELECT " JOB_COLS " FROM jobs WHERE status=?2 "
                          "ORDER BY created_at, rowid",
    [S_JOB_LIST_BOTH] = "SELECT " JOB_COLS " FROM jobs WHERE assembly_id=?1 AND status=?2 "
                        "ORDER BY created_at, rowid",
    [S_RES_INSERT] = "INSERT INTO results (" RES_COLS ") VALUES "
                     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_RES_GET] = "SELECT " RES_COLS " FROM results WHERE id=?1",
    [S_RES_FIND_KEY] = "SELECT " RES_COLS " FROM results WHERE assembly_id=?1 AND "
                       "cache_key=?2 AND status='optimal' "
                       "ORDER BY created_at DESC, rowid DESC LIMIT 1",
    [S_JOB_RESULTS] = "SELECT " RES_COLS " FROM results WHERE job_id=?1 AND job_index>=?2 "
                      "AND job_index<?3 ORDER BY job_index",
    [S_JOB_RESULTS_NOVEC] = "SELECT " RES_SCALAR_COLS " FROM results WHERE job_id=?1 AND "
                            "job_index>=?2 AND job_index<?3 ORDER BY job_index",
    [S_JOB_DONE_IDX] = "SELECT job_index FROM results WHERE job_id=?1",
    /* retention: single solves only (job_id NULL), oldest first, on the
     * partial index results_single (004_result_encoding.sql) */
    [S_RETAIN_AGE] = "DELETE FROM results WHERE rowid IN (SELECT rowid FROM results "
                     "WHERE job_id IS NULL AND created_at < ?1 "
                     "ORDER BY created_at, rowid LIMIT ?2)",
    [S_SINGLE_COUNT] = "SELECT count(*) FROM results WHERE job_id IS NULL",
    [S_RETAIN_OLDEST] = "DELETE FROM results WHERE rowid IN (SELECT rowid FROM results "
                        "WHERE job_id IS NULL ORDER BY created_at, rowid LIMIT ?1)",
    [S_PAGES] = "SELECT (SELECT page_count FROM pragma_page_count()) - "
                "(SELECT freelist_count FROM pragma_freelist_count()), "
                "(SELECT page_size FROM pragma_page_size())",
};

struct gsd_store {
    sqlite3 *db;
    char *path;
    pthread_mutex_t mu;
    int version;
    sqlite3_stmt *stmt[S__COUNT];
    gsd_vecenc *vc;     /* encodes / decodes the result vectors (vecenc.h) */
    double *vw, *vl;    /* decoded w / lam of the row passed to a callback */
    size_t vw_cap, vl_cap;
    int full;           /* the last SQLite error was SQLITE_FULL */
    int (*on_full)(void *ctx); /* gsd_store_on_full */
    void *on_full_ctx;
};

/* ---- errors, scratch buffers ----------------------------------------------------- */

static gs_err sql_err(gsd_store *st, int rc, const char *what, gs_error *err)
{
    if ((rc & 0xff) == SQLITE_FULL)
        st->full = 1;
    const char *msg = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
    return gs_errorf(err, GS_ERR_IO, "", "%s: %s: %s (sqlite code %d)", st->path, what, msg, rc);
}

static gs_err nomem(gs_error *err, const char *what)
{
    return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory (%s)", what);
}

/* Make the buffer p (capacity *cap bytes) hold need bytes. Returns the
 * possibly moved buffer, or NULL (p still valid, *cap unchanged) when out of
 * memory. */
static void *grow(void *p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    void *q = realloc(p, n);
    if (q)
        *cap = n;
    return q;
}

static void copy_str(char *dst, size_t cap, const char *src, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

/* ---- statement helpers ----------------------------------------------------------- */

static sqlite3_stmt *stmt(gsd_store *st, int which)
{
    return st->stmt[which];
}

/* Reset and unbind: the statement is ready for the next use. The reset
 * return value repeats the error of the last step, already reported. */
static void stmt_release(sqlite3_stmt *s)
{
    (void)sqlite3_reset(s);
    (void)sqlite3_clear_bindings(s);
}

/* Step a statement that returns no row, then release it. */
static gs_err step_done(gsd_store *st, sqlite3_stmt *s, const char *what, gs_error *err)
{
    int rc = sqlite3_step(s);
    gs_err e = rc == SQLITE_DONE ? GS_OK : sql_err(st, rc, what, err);
    stmt_release(s);
    return e;
}

static gs_err exec_sql(gsd_store *st, const char *sql, const char *what, gs_error *err)
{
    int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? GS_OK : sql_err(st, rc, what, err);
}

/* Sequential binder: each call binds the next parameter; the first failure
 * sticks in rc and later calls do nothing. Text and blobs are bound
 * SQLITE_STATIC: they must stay valid until the statement is released. */
typedef struct {
    sqlite3_stmt *s;
    int i;
    int rc;
} binder;

static binder bind_start(sqlite3_stmt *s)
{
    return (binder){s, 0, SQLITE_OK};
}

static void b_text(binder *b, const char *v, size_t cap)
{
    if (b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_text(b->s, ++b->i, v, (int)strnlen(v, cap), SQLITE_STATIC);
}

/* NULL for a NULL pointer (or an empty string when empty_null). */
static void b_text_or_null(binder *b, const char *v, size_t cap, int empty_null)
{
    if (!v || (empty_null && !*v)) {
        if (b->rc == SQLITE_OK)
            b->rc = sqlite3_bind_null(b->s, ++b->i);
    } else {
        b_text(b, v, cap);
    }
}

static void b_int(binder *b, long long v)
{
    if (b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_int64(b->s, ++b->i, v);
}

static void b_real(binder *b, double v)
{
    if (b->rc == SQLITE_OK)
        b->rc = isnan(v) ? sqlite3_bind_null(b->s, ++b->i) : sqlite3_bind_double(b->s, ++b->i, v);
}

static void b_blob(binder *b, const void *p, size_t len)
{
    if (b->rc != SQLITE_OK)
        return;
    if (!p)
        b->rc = sqlite3_bind_null(b->s, ++b->i);
    else
        b->rc = sqlite3_bind_blob(b->s, ++b->i, p, (int)len, SQLITE_STATIC);
}

static gs_err bind_end(gsd_store *st, binder *b, const char *what, gs_error *err)
{
    if (b->rc == SQLITE_OK)
        return GS_OK;
    gs_err e = sql_err(st, b->rc, what, err);
    stmt_release(b->s);
    return e;
}

/* Sequential column reader (same idea). */
typedef struct {
    sqlite3_stmt *s;
    int i;
} reader;

static void r_text(reader *r, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(r->s, r->i);
    int len = sqlite3_column_bytes(r->s, r->i);
    r->i++;
    copy_str(dst, cap, t ? (const char *)t : "", t && len > 0 ? (size_t)len : 0);
}

static long long r_int(reader *r)
{
    return sqlite3_column_int64(r->s, r->i++);
}

static double r_real(reader *r)
{
    int i = r->i++;
    return sqlite3_column_type(r->s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(r->s, i);
}

/* ---- transactions ---------------------------------------------------------------- */

/* Write transactions of this process's connections queue on this mutex
 * (woken at once when the writer commits) instead of on SQLite's busy
 * handler, which sleeps in steps of milliseconds: two workers storing results
 * at several hundred chunks per second would otherwise lose that time to
 * sleeping. Other processes still meet the busy timeout. */
static pthread_mutex_t writer_mu = PTHREAD_MUTEX_INITIALIZER;

static gs_err tx_begin(gsd_store *st, gs_error *err)
{
    pthread_mutex_lock(&writer_mu);
    gs_err e = step_done(st, stmt(st, S_BEGIN), "BEGIN IMMEDIATE", err);
    if (e)
        pthread_mutex_unlock(&writer_mu);
    return e;
}

static void tx_rollback(gsd_store *st)
{
    if (sqlite3_get_autocommit(st->db))
        return; /* SQLite already rolled back (or nothing was begun) */
    sqlite3_stmt *s = stmt(st, S_ROLLBACK);
    (void)sqlite3_step(s); /* nothing more to do if even this fails */
    stmt_release(s);
}

static gs_err tx_commit(gsd_store *st, gs_error *err)
{
    gs_err e = step_done(st, stmt(st, S_COMMIT), "COMMIT", err);
    if (e)
        tx_rollback(st);
    return e;
}

/* Commit on success, roll back otherwise; returns e or the commit error. */
static gs_err tx_end(gsd_store *st, gs_err e, gs_error *err)
{
    if (e)
        tx_rollback(st);
    else
        e = tx_commit(st, err);
    pthread_mutex_unlock(&writer_mu);
    return e;
}

static void lock(gsd_store *st)
{
    pthread_mutex_lock(&st->mu);
}

static void unlock(gsd_store *st)
{
    pthread_mutex_unlock(&st->mu);
}

#define REQUIRE(cond, field)                                                          \
    do {                                                                              \
        if (!(cond))                                                                  \
            return gs_errorf(err, GS_ERR_INVALID, field, "missing or invalid argument"); \
    } while (0)

/* ---- open, migrations, close ----------------------------------------------------- */

static gs_err query_int(gsd_store *st, const char *sql, int *out, gs_error *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK)
        return sql_err(st, rc, sql, err);
    rc = sqlite3_step(s);
    gs_err e = GS_OK;
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int(s, 0);
    else
        e = sql_err(st, rc, sql, err);
    (void)sqlite3_finalize(s);
    return e;
}

/* Switching to WAL needs an exclusive lock, and SQLite reports SQLITE_BUSY
 * for it without calling the busy handler (seen when two connections create
 * the same new file): retry for up to the busy timeout. */
static int step_retry_busy(sqlite3_stmt *s)
{
    int rc = SQLITE_BUSY;
    for (int waited_ms = 0; waited_ms <= GSD_BUSY_TIMEOUT_MS; waited_ms += 5) {
        rc = sqlite3_step(s);
        if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
            break;
        (void)sqlite3_reset(s);
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    return rc;
}

static gs_err set_wal(gsd_store *st, gs_error *err)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode=WAL", -1, &s, NULL);
    if (rc != SQLITE_OK)
        return sql_err(st, rc, "PRAGMA journal_mode", err);
    rc = step_retry_busy(s);
    gs_err e = GS_OK;
    if (rc != SQLITE_ROW) {
        e = sql_err(st, rc, "PRAGMA journal_mode", err);
    } else {
        const char *mode = (const char *)sqlite3_column_text(s, 0);
        if (!mode || (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0))
            e = gs_errorf(err, GS_ERR_IO, "", "%s: could not enable WAL (journal mode %s)",
                          st->path, mode ? mode : "?");
    }
    (void)sqlite3_finalize(s);
    return e;
}

static gs_err configure(gsd_store *st, gs_error *err)
{
    int rc = sqlite3_extended_result_codes(st->db, 1);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(st->db, GSD_BUSY_TIMEOUT_MS);
    if (rc != SQLITE_OK)
        return sql_err(st, rc, "configure", err);
    gs_err e = set_wal(st, err);
    if (!e)
        e = exec_sql(st, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", "PRAGMA", err);
    return e;
}

static int latest_version(void)
{
    return gsd_migrations_count > 0 ? gsd_migrations[gsd_migrations_count - 1].version : 0;
}

static gs_err too_new(gsd_store *st, int v, gs_error *err)
{
    return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "%s: schema version %d is newer than this "
                     "gapsimd supports (%d)", st->path, v, latest_version());
}

/* One migration step in its own BEGIN IMMEDIATE transaction. The version is
 * re-read inside the transaction: another process may have migrated first. */
static gs_err migrate_step(gsd_store *st, int *v, gs_error *err)
{
    gs_err e = exec_sql(st, "BEGIN IMMEDIATE", "BEGIN IMMEDIATE (migration)", err);
    if (e)
        return e;
    e = query_int(st, "PRAGMA user_version", v, err);
    if (!e && *v > latest_version())
        e = too_new(st, *v, err);
    if (!e && *v < latest_version()) {
        const gsd_migration *mg = &gsd_migrations[*v]; /* versions are 1..count */
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", mg->version);
        e = exec_sql(st, mg->sql, mg->name, err);
        if (!e)
            e = exec_sql(st, pragma, mg->name, err);
        if (!e)
            *v = mg->version;
    }
    if (e) {
        if (!sqlite3_get_autocommit(st->db))
            (void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return e;
    }
    e = exec_sql(st, "COMMIT", "COMMIT (migration)", err);
    if (e && !sqlite3_get_autocommit(st->db))
        (void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return e;
}

static gs_err migrate(gsd_store *st, gs_error *err)
{
    for (int i = 0; i < gsd_migrations_count; i++)
        if (gsd_migrations[i].version != i + 1)
            return gs_errorf(err, GS_ERR_INVALID, "", "migration %s: expected number %d",
                             gsd_migrations[i].name, i + 1);
    int v = 0;
    gs_err e = query_int(st, "PRAGMA user_version", &v, err);
    if (e)
        return e;
    if (v > latest_version())
        return too_new(st, v, err);
    while (!e && v < latest_version())
        e = migrate_step(st, &v, err);
    st->version = v;
    return e;
}

static gs_err prepare_all(gsd_store *st, gs_error *err)
{
    for (int i = 0; i < S__COUNT; i++) {
        int rc = sqlite3_prepare_v3(st->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                                    &st->stmt[i], NULL);
        if (rc != SQLITE_OK)
            return sql_err(st, rc, stmt_sql[i], err);
    }
    return GS_OK;
}

static gs_err store_alloc(const char *path, gsd_store **out, gs_error *err)
{
    gsd_store *st = calloc(1, sizeof *st);
    if (!st)
        return nomem(err, "store");
    st->path = malloc(strlen(path) + 1);
    if (!st->path) {
        free(st);
        return nomem(err, "store");
    }
    memcpy(st->path, path, strlen(path) + 1);
    st->vc = gsd_vecenc_new();
    if (!st->vc) {
        free(st->path);
        free(st);
        return nomem(err, "store");
    }
    if (pthread_mutex_init(&st->mu, NULL) != 0) {
        gsd_vecenc_free(st->vc);
        free(st->path);
        free(st);
        return gs_errorf(err, GS_ERR_NOMEM, "", "pthread_mutex_init failed");
    }
    *out = st;
    return GS_OK;
}

gs_err gsd_store_open(const char *path, gsd_store **out, gs_error *err)
{
    REQUIRE(out, "out");
    *out = NULL;
    REQUIRE(path && *path, "path");
    gsd_store *st = NULL;
    gs_err e = store_alloc(path, &st, err);
    if (e)
        return e;
    int rc = sqlite3_open_v2(path, &st->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    e = rc == SQLITE_OK ? GS_OK : sql_err(st, rc, "open", err);
    if (!e)
        e = configure(st, err);
    if (!e)
        e = migrate(st, err);
    if (!e)
        e = prepare_all(st, err);
    if (e) {
        gsd_store_close(st);
        return e;
    }
    *out = st;
    return GS_OK;
}

void gsd_store_close(gsd_store *st)
{
    if (!st)
        return;
    for (int i = 0; i < S__COUNT; i++)
        (void)sqlite3_finalize(st->stmt[i]); /* NULL is a no-op */
    /* close_v2 cannot fail with SQLITE_BUSY: every statement is finalized. */
    (void)sqlite3_close_v2(st->db);
    pthread_mutex_destroy(&st->mu);
    gsd_vecenc_free(st->vc);
    free(st->vw);
    free(st->vl);
    free(st->path);
    free(st);
}

int gsd_store_schema_version(gsd_store *st)
{
    return st ? st->version : 0;
}

gs_err gsd_store_checkpoint(gsd_store *st, gs_error *err)
{
    REQUIRE(st, "store");
    lock(st);
    int rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_RESTART, NULL, NULL);
    /* SQLITE_BUSY: readers kept it from finishing; what was possible is done. */
    gs_err e = rc == SQLITE_OK || rc == SQLITE_BUSY ? GS_OK : sql_err(st, rc, "checkpoint", err);
    unlock(st);
    return e;
}

/* ---- assemblies ------------------------------------------------------------------ */

/* Binds ?1..?24 in ASM_COLS order (insert and update share it). */
static void bind_assembly(binder *b, const gsd_assembly_row *r)
{
    b_text(b, r->id, sizeof r->id);
    b_text(b, r->content_hash, sizeof r->content_hash);
    b_text(b, r->name, sizeof r->name);
    b_text(b, r->joint, sizeof r->joint);
    b_int(b, r->n);
    b_int(b, r->m);
    b_int(b, r->n_parts);
    b_int(b, r->n_nodes);
    b_int(b, r->n_fast);
    b_text(b, r->status, sizeof r->status);
    b_text(b, r->err_code, sizeof r->err_code);
    b_text(b, r->err_field, sizeof r->err_field);
    b_text(b, r->err_msg, sizeof r->err_msg);
    b_real(b, r->t.factor_K);
    b_real(b, r->t.build_Q);
    b_real(b, r->t.loads);
    b_real(b, r->t.factor_Q);
    b_real(b, r->t.cond);
    b_real(b, r->t.total);
    b_real(b, r->cond_K);
    b_real(b, r->cond_Q);
    b_real(b, r->created_at);
    b_real(b, r->ready_at);
    b_text(b, r->factor_checksum, sizeof r->factor_checksum);
}

static void read_assembly(sqlite3_stmt *s, gsd_assembly_row *r)
{
    reader rd = {s, 0};
    memset(r, 0, sizeof *r);
    r_text(&rd, r->id, sizeof r->id);
    r_text(&rd, r->content_hash, sizeof r->content_hash);
    r_text(&rd, r->name, sizeof r->name);
    r_text(&rd, r->joint, sizeof r->joint);
    r->n = (int)r_int(&rd);
    r->m = (int)r_int(&rd);
    r->n_parts = (int)r_int(&rd);
    r->n_nodes = (int)r_int(&rd);
    r->n_fast = (int)r_int(&rd);
    r_text(&rd, r->status, sizeof r->status);
    r_text(&rd, r->err_code, sizeof r->err_code);
    r_text(&rd, r->err_field, sizeof r->err_field);
    r_text(&rd, r->err_msg, sizeof r->err_msg);
    r->t.factor_K = r_real(&rd);
    r->t.build_Q = r_real(&rd);
    r->t.loads = r_real(&rd);
    r->t.factor_Q = r_real(&rd);
    r->t.cond = r_real(&rd);
    r->t.total = r_real(&rd);
    r->cond_K = r_real(&rd);
    r->cond_Q = r_real(&rd);
    r->created_at = r_real(&rd);
    r->ready_at = r_real(&rd);
    r_text(&rd, r->factor_checksum, sizeof r->factor_checksum);
}

static gs_err assembly_write(gsd_store *st, int which, const gsd_assembly_row *row,
                             const char *what, gs_error *err)
{
    sqlite3_stmt *s = stmt(st, which);
    binder b = bind_start(s);
    bind_assembly(&b, row);
    gs_err e = bind_end(st, &b, what, err);
    if (e)
        return e;
    e = step_done(st, s, what, err);
    if (!e && which == S_ASM_UPDATE && sqlite3_changes(st->db) == 0)
        e = gs_errorf(err, GS_ERR_INVALID, "id", "no assembly '%.40s'", row->id);
    return e;
}

gs_err gsd_store_assembly_insert(gsd_store *st, const gsd_assembly_row *row, gs_error *err)
{
    REQUIRE(st && row, "row");
    lock(st);
    gs_err e = assembly_write(st, S_ASM_INSERT, row, "insert assembly", err);
    unlock(st);
    return e;
}

gs_err gsd_store_assembly_update(gsd_store *st, const gsd_assembly_row *row, gs_error *err)
{
    REQUIRE(st && row, "row");
    lock(st);
    gs_err e = assembly_write(st, S_ASM_UPDATE, row, "update assembly", err);
    unlock(st);
    return e;
}

/* Run a one-key assembly query and read at most one row. */
static gs_err assembly_lookup(gsd_store *st, int which, const char *key, gsd_assembly_row *out,
                              int *found, gs_error *err)
{
    sqlite3_stmt *s = stmt(st, which);
    *found = 0;
    binder b = bind_start(s);
    b_text(&b, key, 1024);
    gs_err e = bind_end(st, &b, "get assembly", err);
    if (e)
        return e;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        read_assembly(s, out);
        *found = 1;
    } else if (rc != SQLITE_DONE) {
        e = sql_err(st, rc, "get assembly", err);
    }
    stmt_release(s);
    return e;
}

gs_err gsd_store_assembly_get(gsd_store *st, const char *id, gsd_assembly_row *out, int *found,
                              gs_error *err)
{
    REQUIRE(st && id && out && found, "id");
    lock(st);
    gs_err e = assembly_lookup(st, S_ASM_GET, id, out, found, err);
    unlock(st);
    return e;
}

gs_err gsd_store_assembly_find_hash(gsd_store *st, const char *hash, gsd_assembly_row *out,
                                    int *found, gs_error *err)
{
    REQUIRE(st && hash && out && found, "hash");
    lock(st);
    gs_err e = assembly_lookup(st, S_ASM_FIND_HASH, hash, out, found, err);
    unlock(st);
    return e;
}

static gs_err assembly_list_locked(gsd_store *st, gsd_assembly_row **rows, int *count,
                                   gs_error *err)
{
    sqlite3_stmt *s = stmt(st, S_ASM_LIST);
    gsd_assembly_row *v = NULL;
    size_t cap = 0;
    int n = 0, rc;
    gs_err e = GS_OK;
    while (!e && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        gsd_assembly_row *q = grow(v, &cap, (size_t)(n + 1) * sizeof *v);
        if (!q) {
            e = nomem(err, "assembly list");
            break;
        }
        v = q;
        read_assembly(s, &v[n++]);
    }
    if (!e && rc != SQLITE_DONE)
        e = sql_err(st, rc, "list assemblies", err);
    stmt_release(s);
    if (e) {
        free(v);
        return e;
    }
    *rows = v;
    *count = n;
    return GS_OK;
}

gs_err gsd_store_assembly_list(gsd_store *st, gsd_assembly_row **rows, int *count, gs_error *err)
{
    REQUIRE(st && rows && count, "rows");
    *rows = NULL;
    *count = 0;
    lock(st);
    gs_err e = assembly_list_locked(st, rows, count, err);
    unlock(st);
    return e;
}

/* Step a one-parameter (id) statement with no result rows. */
static gs_err exec_by_id(gsd_store *st, int which, const char *id, const char *what,
                         gs_error *err)
{
    sqlite3_stmt *s = stmt(st, which);
    binder b = bind_start(s);
    b_text(&b, id, 1024);
    gs_err e = bind_end(st, &b, what, err);
    return e ? e : step_done(st, s, what, err);
}

/* Run op (store locked); if it met a full disk and the on_full hook made
 * room, run it once more. */
static gs_err retry_full(gsd_store *st, gs_err (*op)(gsd_store *, void *, gs_error *), void *arg,
                         gs_error *err)
{
    st->full = 0;
    gs_err e = op(st, arg, err);
    if (e && st->full && st->on_full && st->on_full(st->on_full_ctx)) {
        st->full = 0;
        e = op(st, arg, err);
    }
    return e;
}

typedef struct {
    const char *id;
    int n; /* rows deleted by the last batch */
} del_ctx;

static gs_err delete_results_batch(gsd_store *st, void *arg, gs_error *err)
{
    del_ctx *d = arg;
    gs_err e = tx_begin(st, err);
    if (e)
        return e;
    e = exec_by_id(st, S_ASM_DEL_RESULTS, d->id, "delete results", err);
    d->n = e ? 0 : sqlite3_changes(st->db);
    return tx_end(st, e, err);
}

static gs_err delete_rows(gsd_store *st, void *arg, gs_error *err)
{
    del_ctx *d = arg;
    gs_err e = tx_begin(st, err);
    if (e)
        return e;
    e = exec_by_id(st, S_ASM_DEL_JOBS, d->id, "delete jobs", err);
    if (!e)
        e = exec_by_id(st, S_ASM_DEL, d->id, "delete assembly", err);
    return tx_end(st, e, err);
}

/* The results go GSD_DEL_BATCH rows per transaction, each followed by a
 * passive checkpoint, so that the WAL is reused from its start instead of
 * growing by the size of the assembly's results: on a full disk the delete
 * fits in the WAL file that exists (plus the reserve the on_full hook
 * releases). */
gs_err gsd_store_assembly_delete(gsd_store *st, const char *id, gs_error *err)
{
    REQUIRE(st && id, "id");
    lock(st);
    del_ctx d = {id, 0};
    gs_err e;
    do {
        e = retry_full(st, delete_results_batch, &d, err);
        if (!e && d.n > 0)
            (void)sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    } while (!e && d.n == GSD_DEL_BATCH);
    if (!e)
        e = retry_full(st, delete_rows, &d, err);
    unlock(st);
    return e;
}

void gsd_store_on_full(gsd_store *st, int (*fn)(void *ctx), void *ctx)
{
    lock(st);
    st->on_full = fn;
    st->on_full_ctx = ctx;
    unlock(st);
}

/* ---- jobs ------------------------------------------------------------------------ */

void gsd_job_row_free(gsd_job_row *row)
{
    if (!row)
        return;
    free(row->options_json);
    row->options_json = NULL;
}

static gs_err read_job(sqlite3_stmt *s, gsd_job_row *r, gs_error *err)
{
    reader rd = {s, 0};
    memset(r, 0, sizeof *r);
    r_text(&rd, r->id, sizeof r->id);
    r_text(&rd, r->assembly_id, sizeof r->assembly_id);
    r_text(&rd, r->status, sizeof r->status);
    r->total = (int)r_int(&rd);
    r->done = (int)r_int(&rd);
    r->failed = (int)r_int(&rd);
    int oi = rd.i++;
    r->created_at = r_real(&rd);
    r->started_at = r_real(&rd);
    r->finished_at = r_real(&rd);
    r->solve_time_sum = r_real(&rd);
    r->iterations_sum = r_int(&rd);
    r->done_at_start = (int)r_int(&rd);
    r_text(&rd, r->error, sizeof r->error);
    if (sqlite3_column_type(s, oi) == SQLITE_NULL)
        return GS_OK;
    const unsigned char *t = sqlite3_column_text(s, oi);
    int len = sqlite3_column_bytes(s, oi);
    r->options_json = malloc((size_t)len + 1);
    if (!r->options_json)
        return nomem(err, "options_json");
    copy_str(r->options_json, (size_t)len + 1, t ? (const char *)t : "", t ? (size_t)len : 0);
    return GS_OK;
}

gs_err gsd_store_job_insert(gsd_store *st, const gsd_job_row *row, gs_error *err)
{
    REQUIRE(st && row, "row");
    lock(st);
    sqlite3_stmt *s = stmt(st, S_JOB_INSERT);
    binder b = bind_start(s);
    b_text(&b, row->id, sizeof row->id);
    b_text(&b, row->assembly_id, sizeof row->assembly_id);
    b_text(&b, row->status, sizeof row->status);
    b_int(&b, row->total);
    b_int(&b, row->done);
    b_int(&b, row->failed);
    b_text_or_null(&b, row->options_json, (size_t)INT_MAX, 0);
    b_real(&b, row->created_at);
    b_real(&b, row->started_at);
    b_real(&b, row->finished_at);
    b_real(&b, row->solve_time_sum);
    b_int(&b, row->iterations_sum);
    b_int(&b, row->done_at_start);
    b_text_or_null(&b, row->error[0] ? row->error : NULL, sizeof row->error, 0);
    gs_err e = bind_end(st, &b, "insert job", err);
    if (!e)
        e = step_done(st, s, "insert job", err);
    unlock(st);
    return e;
}

static gs_err job_get_locked(gsd_store *st, const char *id, gsd_job_row *out, int *found,
                             gs_error *err)
{
    sqlite3_stmt *s = stmt(st, S_JOB_GET);
    binder b = bind_start(s);
    b_text(&b, id, 1024);
    gs_err e = bind_end(st, &b, "get job", err);
    if (e)
        return e;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        e = read_job(s, out, err);
        *found = !e;
    } else if (rc != SQLITE_DONE) {
        e = sql_err(st, rc, "get job", err);
    }
    stmt_release(s);
    return e;
}

gs_err gsd_store_job_get(gsd_store *st, const char *id, gsd_job_row *out, int *found,
                         gs_error *err)
{
    REQUIRE(st && id && out && found, "id");
    *found = 0;
    out->options_json = NULL;
    lock(st);
    gs_err e = job_get_locked(st, id, out, found, err);
    unlock(st);
    return e;
}

gs_err gsd_store_job_set_status(gsd_store *st, const char *id, const char *status, double when,
                                gs_error *err)
{
    return gsd_store_job_fail(st, id, status, when, NULL, err);
}

typedef struct {
    const char *id, *status, *reason;
    double when;
} status_ctx;

static gs_err job_status_locked(gsd_store *st, void *arg, gs_error *err)
{
    const status_ctx *c = arg;
    const char *id = c->id, *status = c->status, *reason = c->reason;
    double when = c->when;
    sqlite3_stmt *s = stmt(st, S_JOB_SET_STATUS);
    binder b = bind_start(s);
    b_text(&b, id, 1024);
    b_text(&b, status, 64);
    b_real(&b, when);
    b_text_or_null(&b, reason, 256, 0);
    gs_err e = bind_end(st, &b, "set job status", err);
    if (!e)
        e = step_done(st, s, "set job status", err);
    if (!e && sqlite3_changes(st->db) == 0)
        e = gs_errorf(err, GS_ERR_INVALID, "id", "no job '%.40s'", id);
    return e;
}

gs_err gsd_store_job_fail(gsd_store *st, const char *id, const char *status, double when,
                          const char *reason, gs_error *err)
{
    REQUIRE(st && id && status, "status");
    status_ctx c = {id, status, reason, when};
    lock(st);
    gs_err e = retry_full(st, job_status_locked, &c, err);
    unlock(st);
    return e;
}

static gs_err job_list_locked(gsd_store *st, sqlite3_stmt *s, gsd_job_row **rows, int *count,
                              gs_error *err)
{
    gsd_job_row *v = NULL;
    size_t cap = 0;
    int n = 0, rc;
    gs_err e = GS_OK;
    while (!e && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        gsd_job_row *q = grow(v, &cap, (size_t)(n + 1) * sizeof *v);
        if (!q) {
            e = nomem(err, "job list");
            break;
        }
        v = q;
        e = read_job(s, &v[n++], err);
    }
    if (!e && rc != SQLITE_DONE)
        e = sql_err(st, rc, "list jobs", err);
    stmt_release(s);
    if (e) {
        for (int i = 0; i < n; i++)
            gsd_job_row_free(&v[i]);
        free(v);
        return e;
    }
    *rows = v;
    *count = n;
    return GS_OK;
}

gs_err gsd_store_job_list(gsd_store *st, const char *assembly_id, const char *status,
                          gsd_job_row **rows, int *count, gs_error *err)
{
    REQUIRE(st && rows && count, "rows");
    *rows = NULL;
    *count = 0;
    int which = assembly_id ? (status ? S_JOB_LIST_BOTH : S_JOB_LIST_ASM)
                            : (status ? S_JOB_LIST_STATUS : S_JOB_LIST_ALL);
    lock(st);
    sqlite3_stmt *s = stmt(st, which);
    int rc = SQLITE_OK;
    if (assembly_id)
        rc = sqlite3_bind_text(s, 1, assembly_id, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && status)
        rc = sqlite3_bind_text(s, 2, status, -1, SQLITE_STATIC);
    gs_err e = GS_OK;
    if (rc != SQLITE_OK) {
        e = sql_err(st, rc, "list jobs", err);
        stmt_release(s);
    } else {
        e = job_list_locked(st, s, rows, count, err);
    }
    unlock(st);
    return e;
}

/* ---- result vectors ---------------------------------------------------------------- */

/* Column col (a vector BLOB, encoding in column col + 2) into dst (m entries). */
static gs_err decode_col(gsd_store *st, sqlite3_stmt *s, int col, int m, double *dst,
                         const char *id, gs_error *err)
{
    const void *p = sqlite3_column_blob(s, col);
    size_t len = (size_t)sqlite3_column_bytes(s, col);
    int enc = sqlite3_column_int(s, col + 2);
    return gsd_vecenc_decode(st->vc, col == RES_COL_W ? GSD_VEC_W : GSD_VEC_LAM, enc, p, len, m,
                             dst, id, err);
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

/* Scalar columns (RES_SCALAR_COLS order); w and lam are left NULL. */
static void read_result_scalars(sqlite3_stmt *s, gsd_result_row *r)
{
    reader rd = {s, 0};
    memset(r, 0, sizeof *r);
    r_text(&rd, r->id, sizeof r->id);
    r_text(&rd, r->assembly_id, sizeof r->assembly_id);
    r_text(&rd, r->job_id, sizeof r->job_id); /* NULL reads as "" */
    r->job_index = (int)r_int(&rd);
    r_text(&rd, r->cache_key, sizeof r->cache_key);
    r_text(&rd, r->status, sizeof r->status);
    r_text(&rd, r->method, sizeof r->method);
    r_text(&rd, r->form, sizeof r->form);
    r->auto_chosen = (int)r_int(&rd);
    r->warm_used = (int)r_int(&rd);
    r->n_act = (int)r_int(&rd);
    r->iterations = (int)r_int(&rd);
    r->cg_iterations = (int)r_int(&rd);
    r->time = r_real(&rd);
    for (int k = 0; k < 6; k++)
        r->kkt[k] = r_real(&rd);
    r->kkt_pass = (int)r_int(&rd);
    r->m = (int)r_int(&rd);
    r->created_at = r_real(&rd);
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
    b_text(&b, r->status, sizeof r->status);
    b_text(&b, r->method, sizeof r->method);
    b_text(&b, r->form, sizeof r->form);
    b_int(&b, r->auto_chosen);
    b_int(&b, r->warm_used);
    b_int(&b, r->n_act);
    b_int(&b, r->iterations);
    b_int(&b, r->cg_iterations);
    b_real(&b, r->time);
    for (int k = 0; k < 6; k++)
        b_real(&b, r->kkt[k]);
    b_int(&b, r->kkt_pass);
    b_int(&b, r->m);
    b_real(&b, r->created_at);
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
        read_result_scalars(s, out);
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
        read_result_scalars(s, &r);
        if (with_vectors && (e = read_vectors_scratch(st, s, &r, err)) != GS_OK)
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

int gsd_store_quick_check(gsd_store *st, char *msg, size_t cap)
{
    lock(st);
    sqlite3_stmt *s = NULL;
    int ok = 0, rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(1)", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(s, 0);
        snprintf(msg, cap, "%s", t ? (const char *)t : "");
        ok = t && !strcmp((const char *)t, "ok");
    } else {
        snprintf(msg, cap, "%s (sqlite code %d)", sqlite3_errmsg(st->db), rc);
    }
    sqlite3_finalize(s);
    unlock(st);
    return ok;
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

gs_err gsd_store_live_bytes(gsd_store *st, long long *bytes, gs_error *err)
{
    REQUIRE(st && bytes, "bytes");
    lock(st);
    sqlite3_stmt *s = stmt(st, S_PAGES);
    int rc = sqlite3_step(s);
    gs_err e = GS_OK;
    if (rc == SQLITE_ROW)
        *bytes = sqlite3_column_int64(s, 0) * sqlite3_column_int64(s, 1);
    else
        e = sql_err(st, rc, "page count", err);
    stmt_release(s);
    unlock(st);
    return e;
}
