/*
 * store_impl.h -- what the store's files share (private to server/store*.c).
 *
 * The store is split like its tables: store.c (connection, migrations, the
 * prepared statements' SQL, checkpoints, integrity, size), store_assemblies.c,
 * store_jobs.c and store_results.c (row <-> column mapping of each table,
 * retention of single solves). This header holds the connection struct, the
 * statement ids and column lists, and the small helpers every file uses
 * (errors, binding and reading columns, transactions, the store mutex),
 * static inline so that no generic name leaves the store.
 */
#ifndef GSD_STORE_IMPL_H
#define GSD_STORE_IMPL_H

#include "store.h"

#include <errno.h>
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
/* gsd_store_job_results reads a job's results in chunks of at most this many
 * rows, or this many bytes of stored vectors (at least one row), each in a
 * read transaction of its own that only copies the rows and ends before
 * they are decoded and the callbacks run: a reader holds a WAL snapshot
 * for well under a millisecond at a time, not for the whole pass, so
 * checkpoints can start the WAL over between chunks. */
#define GSD_CHUNK_ROWS 256
#define GSD_CHUNK_BYTES (256 << 10)
/* The WAL file is cut back to this size when a checkpoint has restarted it
 * (PRAGMA journal_size_limit): twice the size at which the checkpointer
 * restarts it (GSD_CKPT_HARD frames of 4 KiB, store_ckpt.c), so ordinary
 * operation never truncates a file it will grow again, while a peak of
 * gigabytes (a long reader in the way) is given back. */
#define GSD_WAL_LIMIT_BYTES (32LL << 20)

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
    "kkt_pass, m, created_at, crossover"
#define RES_COLS RES_SCALAR_COLS ", w, lam, w_enc, lam_enc"
#define RES_COL_W 24 /* column index of w in RES_COLS; lam, w_enc, lam_enc follow */

enum {
    S_BEGIN, S_COMMIT, S_ROLLBACK,
    S_ASM_INSERT, S_ASM_UPDATE, S_ASM_GET, S_ASM_FIND_HASH, S_ASM_LIST,
    S_ASM_DEL_RESULTS, S_ASM_DEL_JOBS, S_ASM_DEL, S_ASM_DEL_MARK, S_ASM_DEL_UNFINISHED,
    S_JOB_INSERT, S_JOB_GET, S_JOB_SET_STATUS, S_JOB_COUNTERS,
    S_JOB_LIST_ALL, S_JOB_LIST_ASM, S_JOB_LIST_STATUS, S_JOB_LIST_BOTH,
    S_JOB_RECOUNT, S_JOB_TIDY_ERRORS,
    S_RES_INSERT, S_RES_GET, S_RES_FIND_KEY, S_JOB_RESULTS, S_JOB_RESULTS_NOVEC,
    S_JOB_DONE_IDX, S_JOB_LAM, S_RETAIN_AGE, S_SINGLE_COUNT, S_RETAIN_OLDEST, S_PAGES,
    S__COUNT
};

struct gsd_store {
    sqlite3 *db;
    char *path;
    pthread_mutex_t mu;
    int version;
    int opened;         /* gsd_store_open succeeded: its close may write the clean mark */
    int unsound;        /* gsd_store_mark_unsound: its close writes no clean mark */
    sqlite3_stmt *stmt[S__COUNT];
    gsd_vecenc *vc;     /* encodes / decodes the result vectors (vecenc.h) */
    gsd_ckpt *ckpt;     /* gsd_store_hand_checkpoints (NULL: SQLite's own checkpoints) */
    int full;           /* the last SQLite error was SQLITE_FULL */
    int (*on_full)(void *ctx); /* gsd_store_on_full */
    void *on_full_ctx;
};

extern const char *const gsd_store_sql[S__COUNT];

/* The commits of st wake its checkpointer (paused 0, the default once
 * handed) or nothing (paused 1: the caller checkpoints itself). Store
 * locked. No-op for a store not handed to a checkpointer. */
void gsd_store_ckpt_pause(gsd_store *st, int paused);

/* 1 if an assembly delete of this process is under way for that assembly
 * id (store_assemblies.c): the assembly and its jobs read as deleted. O(1)
 * when no delete runs. */
int gsd_store_asm_deleting(const char *assembly_id);

/* ---- errors, scratch buffers ----------------------------------------------------- */

static inline gs_err sql_err(gsd_store *st, int rc, const char *what, gs_error *err)
{
    if ((rc & 0xff) == SQLITE_FULL)
        st->full = 1;
    const char *msg = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
    gs_errorf(err, GS_ERR_IO, "", "%s: %s: %s (sqlite code %d)", st->path, what, msg, rc);
    if (err && (rc & 0xff) == SQLITE_FULL)
        err->sys_errno = ENOSPC; /* the daemon answers 507 */
    return GS_ERR_IO;
}

static inline gs_err nomem(gs_error *err, const char *what)
{
    return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory (%s)", what);
}

/* Make the buffer p (capacity *cap bytes) hold need bytes. Returns the
 * possibly moved buffer, or NULL (p still valid, *cap unchanged) when out of
 * memory. */
static inline void *grow(void *p, size_t *cap, size_t need)
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

static inline void copy_str(char *dst, size_t cap, const char *src, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    if (len)
        memcpy(dst, src, len);
    dst[len] = '\0';
}

/* ---- statement helpers ----------------------------------------------------------- */

static inline sqlite3_stmt *stmt(gsd_store *st, int which)
{
    return st->stmt[which];
}

/* Reset and unbind: the statement is ready for the next use. The reset
 * return value repeats the error of the last step, already reported. */
static inline void stmt_release(sqlite3_stmt *s)
{
    (void)sqlite3_reset(s);
    (void)sqlite3_clear_bindings(s);
}

/* Step a statement that returns no row, then release it. */
static inline gs_err step_done(gsd_store *st, sqlite3_stmt *s, const char *what, gs_error *err)
{
    int rc = sqlite3_step(s);
    gs_err e = rc == SQLITE_DONE ? GS_OK : sql_err(st, rc, what, err);
    stmt_release(s);
    return e;
}

static inline gs_err exec_sql(gsd_store *st, const char *sql, const char *what, gs_error *err)
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

static inline binder bind_start(sqlite3_stmt *s)
{
    return (binder){s, 0, SQLITE_OK};
}

static inline void b_text(binder *b, const char *v, size_t cap)
{
    if (b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_text(b->s, ++b->i, v, (int)strnlen(v, cap), SQLITE_STATIC);
}

/* NULL for a NULL pointer (or an empty string when empty_null). */
static inline void b_text_or_null(binder *b, const char *v, size_t cap, int empty_null)
{
    if (!v || (empty_null && !*v)) {
        if (b->rc == SQLITE_OK)
            b->rc = sqlite3_bind_null(b->s, ++b->i);
    } else {
        b_text(b, v, cap);
    }
}

static inline void b_int(binder *b, long long v)
{
    if (b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_int64(b->s, ++b->i, v);
}

static inline void b_real(binder *b, double v)
{
    if (b->rc == SQLITE_OK)
        b->rc = isnan(v) ? sqlite3_bind_null(b->s, ++b->i) : sqlite3_bind_double(b->s, ++b->i, v);
}

static inline void b_blob(binder *b, const void *p, size_t len)
{
    if (b->rc != SQLITE_OK)
        return;
    if (!p)
        b->rc = sqlite3_bind_null(b->s, ++b->i);
    else
        b->rc = sqlite3_bind_blob(b->s, ++b->i, p, (int)len, SQLITE_STATIC);
}

static inline gs_err bind_end(gsd_store *st, binder *b, const char *what, gs_error *err)
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

static inline void r_text(reader *r, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(r->s, r->i);
    int len = sqlite3_column_bytes(r->s, r->i);
    r->i++;
    copy_str(dst, cap, t ? (const char *)t : "", t && len > 0 ? (size_t)len : 0);
}

static inline long long r_int(reader *r)
{
    return sqlite3_column_int64(r->s, r->i++);
}

static inline double r_real(reader *r)
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

static inline gs_err tx_begin(gsd_store *st, gs_error *err)
{
    pthread_mutex_lock(&writer_mu);
    gs_err e = step_done(st, stmt(st, S_BEGIN), "BEGIN IMMEDIATE", err);
    if (e)
        pthread_mutex_unlock(&writer_mu);
    return e;
}

static inline void tx_rollback(gsd_store *st)
{
    if (sqlite3_get_autocommit(st->db))
        return; /* SQLite already rolled back (or nothing was begun) */
    sqlite3_stmt *s = stmt(st, S_ROLLBACK);
    (void)sqlite3_step(s); /* nothing more to do if even this fails */
    stmt_release(s);
}

static inline gs_err tx_commit(gsd_store *st, gs_error *err)
{
    gs_err e = step_done(st, stmt(st, S_COMMIT), "COMMIT", err);
    if (e)
        tx_rollback(st);
    return e;
}

/* Commit on success, roll back otherwise; returns e or the commit error. */
static inline gs_err tx_end(gsd_store *st, gs_err e, gs_error *err)
{
    if (e)
        tx_rollback(st);
    else
        e = tx_commit(st, err);
    pthread_mutex_unlock(&writer_mu);
    return e;
}

static inline void lock(gsd_store *st)
{
    pthread_mutex_lock(&st->mu);
}

static inline void unlock(gsd_store *st)
{
    pthread_mutex_unlock(&st->mu);
}

#define REQUIRE(cond, field)                                                          \
    do {                                                                              \
        if (!(cond))                                                                  \
            return gs_errorf(err, GS_ERR_INVALID, field, "missing or invalid argument"); \
    } while (0)

static inline gs_err exec_by_id(gsd_store *st, int which, const char *id, const char *what,
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
static inline gs_err retry_full(gsd_store *st, gs_err (*op)(gsd_store *, void *, gs_error *), void *arg,
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

#endif
