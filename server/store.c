/*
 * store.c -- gapsimd's SQLite store (see store.h for the contract).
 *
 * Owns: opening and configuring the connection, applying the compiled-in
 * migrations (gsd_migrations, generated from the schema/ SQL files), the SQL
 * of the prepared statements (prepared once at open, reset after every use),
 * checkpoints, the integrity check and the size of the database, and the
 * probe of a database's schema version that changes nothing (the start
 * refuses a newer store before it touches the data directory). The rows of
 * each table are in store_assemblies.c, store_jobs.c and store_results.c;
 * what they share in store_impl.h. Every public function takes the store
 * mutex, so the connection (opened SQLITE_OPEN_NOMUTEX) is only ever used by
 * one thread at a time and sqlite3_errmsg refers to our own last call.
 * Transactions are BEGIN IMMEDIATE ... COMMIT, rolled back on any failure.
 */
#include "store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- statements -------------------------------------------------------------- */

const char *const gsd_store_sql[S__COUNT] = {
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
    [S_ASM_DEL_MARK] = "UPDATE assemblies SET deleting=1 WHERE id=?1",
    [S_ASM_DEL_UNFINISHED] = "SELECT id FROM assemblies WHERE deleting=1 ORDER BY rowid",
    [S_JOB_INSERT] = "INSERT INTO jobs (" JOB_COLS ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_JOB_GET] = "SELECT " JOB_COLS " FROM jobs WHERE id=?1",
    [S_JOB_SET_STATUS] =
        "UPDATE jobs SET status=?2, "
        "started_at = CASE WHEN ?2='running' THEN ?3 ELSE started_at END, "
        "done_at_start = CASE WHEN ?2='running' THEN done ELSE done_at_start END, "
        "finished_at = CASE WHEN ?2 IN ('done','cancelled','failed') THEN ?3 "
        "ELSE finished_at END, error = CASE WHEN ?2='failed' THEN ?4 ELSE NULL END "
        /* an ended job keeps its end: a late write (the first claim's
         * "running" landing after a cancel, a failure after "done") is a no-op */
        "WHERE id=?1 AND status NOT IN ('done','cancelled','failed')",
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
    /* the counters from the job's stored results, when done disagrees with
     * them (an assembly delete interrupted between its result batches) */
    [S_JOB_RECOUNT] =
        "UPDATE jobs SET done=(SELECT count(*) FROM results WHERE job_id=?1), "
        "failed=(SELECT count(*) FROM results WHERE job_id=?1 AND status<>'optimal'), "
        "solve_time_sum=(SELECT coalesce(sum(time),0) FROM results WHERE job_id=?1), "
        "iterations_sum=(SELECT coalesce(sum(iterations),0) FROM results WHERE job_id=?1) "
        "WHERE id=?1 AND done<>(SELECT count(*) FROM results WHERE job_id=?1)",
    [S_JOB_TIDY_ERRORS] = "UPDATE jobs SET error=NULL WHERE status<>'failed' AND error IS NOT NULL",
    [S_RES_INSERT] = "INSERT INTO results (" RES_COLS ") VALUES "
                     "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_RES_GET] = "SELECT " RES_COLS " FROM results WHERE id=?1",
    [S_RES_FIND_KEY] = "SELECT " RES_COLS " FROM results WHERE assembly_id=?1 AND "
                       "cache_key=?2 AND status='optimal' "
                       "ORDER BY created_at DESC, rowid DESC LIMIT 1",
    [S_JOB_RESULTS] = "SELECT " RES_COLS " FROM results WHERE job_id=?1 AND job_index>=?2 "
                      "AND job_index<?3 ORDER BY job_index",
    [S_JOB_RESULTS_NOVEC] = "SELECT " RES_SCALAR_COLS " FROM results WHERE job_id=?1 AND "
                            "job_index>=?2 AND job_index<?3 ORDER BY job_index",
    [S_JOB_DONE_IDX] = "SELECT job_index FROM results WHERE job_id=?1",
    [S_JOB_LAM] = "SELECT m, lam, lam_enc FROM results WHERE job_id=?1 AND job_index=?2",
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

static gs_err readonly_err(gsd_store *st, const char *why, gs_error *err)
{
    return gs_errorf(err, GS_ERR_IO, "data-dir",
                     "%s: the store is read-only to this process (uid %ld)%s%s%s: make the "
                     "database file, its -wal and -shm files and their directory writable by "
                     "the daemon's user, or run gapsimd as their owner", st->path,
                     (long)geteuid(), *why ? " (SQLite: " : "", why, *why ? ")" : "");
}

/* A database SQLite could open only for reading (the file not writable by
 * this process: SQLite silently falls back to read-only) or on which a
 * write transaction cannot start (a -wal or -shm file this process cannot
 * write, a directory where they cannot be created): refused at open, with
 * what to fix, rather than found at the first write (every solve a 500).
 * The probe, BEGIN IMMEDIATE and ROLLBACK, writes nothing. */
static gs_err check_writable(gsd_store *st, gs_error *err)
{
    int ro = sqlite3_db_readonly(st->db, "main");
    int rc = SQLITE_OK;
    const char *why = "";
    if (ro == 0) {
        /* no wait for another writer: a held write lock says nothing of
         * permissions (and an open must not queue behind a long write) */
        (void)sqlite3_busy_timeout(st->db, 0);
        rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            (void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        else
            why = sqlite3_errmsg(st->db);
        (void)sqlite3_busy_timeout(st->db, GSD_BUSY_TIMEOUT_MS);
        if (rc == SQLITE_OK || (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
            return GS_OK;
        /* not a matter of permissions (busy past the timeout, I/O error,
         * not a database): the error as it is */
        if ((rc & 0xff) != SQLITE_READONLY && (rc & 0xff) != SQLITE_CANTOPEN &&
            (rc & 0xff) != SQLITE_PERM)
            return sql_err(st, rc, "BEGIN IMMEDIATE (write check)", err);
    }
    return readonly_err(st, why, err);
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
    /* journal_size_limit: SQLite starts the WAL over from its first frame
     * after a checkpoint but keeps the file's size; with a limit, the first
     * commit after that cuts the file back to it (GSD_WAL_LIMIT_BYTES:
     * store_impl.h), so a WAL grown by a long reader does not keep its peak
     * size until the daemon stops */
    char sql[160];
    snprintf(sql, sizeof sql, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; "
             "PRAGMA journal_size_limit=%lld;", GSD_WAL_LIMIT_BYTES);
    if (!e)
        e = exec_sql(st, sql, "PRAGMA", err);
    return e;
}

static int latest_version(void)
{
    return gsd_migrations_count > 0 ? gsd_migrations[gsd_migrations_count - 1].version : 0;
}

static gs_err too_new_at(const char *path, int v, gs_error *err)
{
    return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "%s: schema version %d is newer than this "
                     "gapsimd supports (%d)", path, v, latest_version());
}

/* A negative user_version is no gapsimd's: refused, not migrated (it would
 * index the migration table before its start). */
static gs_err not_ours_at(const char *path, int v, gs_error *err)
{
    return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "%s: schema version %d is not one a gapsimd "
                     "writes", path, v);
}

/* The version v is refused: newer than this build, or negative. */
static gs_err bad_version_at(const char *path, int v, gs_error *err)
{
    return v < 0 ? not_ours_at(path, v, err) : too_new_at(path, v, err);
}

/* One migration step in its own BEGIN IMMEDIATE transaction. The version is
 * re-read inside the transaction: another process may have migrated first. */
static gs_err migrate_step(gsd_store *st, int *v, gs_error *err)
{
    gs_err e = exec_sql(st, "BEGIN IMMEDIATE", "BEGIN IMMEDIATE (migration)", err);
    if (e)
        return e;
    e = query_int(st, "PRAGMA user_version", v, err);
    if (!e && (*v > latest_version() || *v < 0))
        e = bad_version_at(st->path, *v, err);
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

/* *found: the version the database had before this open migrated it. */
static gs_err migrate(gsd_store *st, int *found, gs_error *err)
{
    for (int i = 0; i < gsd_migrations_count; i++)
        if (gsd_migrations[i].version != i + 1)
            return gs_errorf(err, GS_ERR_INVALID, "", "migration %s: expected number %d",
                             gsd_migrations[i].name, i + 1);
    int v = 0;
    gs_err e = query_int(st, "PRAGMA user_version", &v, err);
    if (e)
        return e;
    *found = v;
    if (v > latest_version() || v < 0)
        return bad_version_at(st->path, v, err);
    while (!e && v < latest_version())
        e = migrate_step(st, &v, err);
    st->version = v;
    return e;
}

static gs_err prepare_all(gsd_store *st, gs_error *err)
{
    for (int i = 0; i < S__COUNT; i++) {
        int rc = sqlite3_prepare_v3(st->db, gsd_store_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                                    &st->stmt[i], NULL);
        if (rc != SQLITE_OK)
            return sql_err(st, rc, gsd_store_sql[i], err);
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
    return gsd_store_open_migrated(path, out, NULL, err);
}

gs_err gsd_store_open_migrated(const char *path, gsd_store **out, int *found, gs_error *err)
{
    int had = 0;
    if (found)
        *found = 0;
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
    if (!e && sqlite3_db_readonly(st->db, "main") == 1)
        e = readonly_err(st, "", err); /* before configure: its WAL switch would fail vaguely */
    if (!e) {
        e = configure(st, err);
        /* e.g. a directory where no WAL can be created */
        if (e && (sqlite3_extended_errcode(st->db) & 0xff) == SQLITE_READONLY)
            e = readonly_err(st, sqlite3_errmsg(st->db), err);
    }
    if (!e)
        e = check_writable(st, err);
    if (!e)
        e = migrate(st, &had, err);
    if (!e)
        e = prepare_all(st, err);
    if (e) {
        gsd_store_close(st);
        return e;
    }
    st->opened = 1;
    *out = st;
    if (found)
        *found = had;
    return GS_OK;
}

/* ---- the clean-close mark ---------------------------------------------------------- */

/* What the mark says of the database file: size, device, inode, and the
 * times of its last change (mtime, and ctime, which nothing but a change
 * sets). 0 if the file cannot be read. */
static int file_identity(const char *path, char *buf, size_t cap)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return 0;
    snprintf(buf, cap, "gapsim clean close 1: size %lld dev %llu ino %llu mtime %lld.%09ld "
             "ctime %lld.%09ld\n", (long long)sb.st_size, (unsigned long long)sb.st_dev,
             (unsigned long long)sb.st_ino, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec,
             (long long)sb.st_ctim.tv_sec, sb.st_ctim.tv_nsec);
    return 1;
}

static void side_path(const char *db, const char *suffix, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s", db, suffix);
}

/* After a close: if it left no WAL, SQLite's last connection checkpointed
 * everything into the database file (synced) and removed the WAL, and
 * nothing of this process writes the file any more: record it. A WAL still
 * there means another connection is open (its close writes the mark) or
 * SQLite could not finish. Best effort: no mark only costs a check. */
static void write_clean_mark(const char *db)
{
    char wal[4096], mark[4096], id[256];
    side_path(db, "-wal", wal, sizeof wal);
    side_path(db, "-clean", mark, sizeof mark);
    struct stat sb;
    if (stat(wal, &sb) == 0 || errno != ENOENT || !file_identity(db, id, sizeof id))
        return;
    int fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    size_t len = strlen(id);
    if (write(fd, id, len) != (ssize_t)len) /* a short mark matches nothing */
        (void)unlink(mark);
    close(fd);
}

int gsd_store_take_clean_mark(const char *path)
{
    char wal[4096], mark[4096], want[256], have[256] = "";
    side_path(path, "-wal", wal, sizeof wal);
    side_path(path, "-clean", mark, sizeof mark);
    int fd = open(mark, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, have, sizeof have - 1);
    close(fd);
    have[n > 0 ? n : 0] = '\0';
    (void)unlink(mark); /* this run leaves one only if it too closes cleanly */
    struct stat sb;
    return !(stat(wal, &sb) == 0 && sb.st_size > 0) && file_identity(path, want, sizeof want) &&
           !strcmp(have, want);
}

/* ---- the version probe before the start changes anything ---------------------------- */

/* user_version as the header of the database file says it (big-endian at
 * byte 60 of the 100-byte header, sqlite.org/fileformat.html): read with
 * plain I/O because even a read-only SQLite connection creates the -wal and
 * -shm files of a WAL database and leaves them. 0: not readable as a
 * database (the open says why). */
static int header_version(const char *path, int *v)
{
    unsigned char h[100];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, h, sizeof h);
    close(fd);
    if (n != (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        return 0;
    *v = (int)((uint32_t)h[60] << 24 | (uint32_t)h[61] << 16 | (uint32_t)h[62] << 8 | h[63]);
    return 1;
}

/* user_version through a read-only connection, which reads the WAL too:
 * only when the -wal and -shm files are there already (a crash left them),
 * so that it creates nothing. 0 if it cannot tell. */
static int wal_version(const char *path, int *v)
{
    char wal[4096], shm[4096];
    side_path(path, "-wal", wal, sizeof wal);
    side_path(path, "-shm", shm, sizeof shm);
    struct stat sb;
    if (stat(wal, &sb) != 0 || sb.st_size == 0 || stat(shm, &sb) != 0)
        return 0;
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    int ok = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) ==
                 SQLITE_OK &&
             sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK &&
             sqlite3_step(s) == SQLITE_ROW;
    if (ok)
        *v = sqlite3_column_int(s, 0);
    (void)sqlite3_finalize(s);
    (void)sqlite3_close_v2(db);
    return ok;
}

gs_err gsd_store_check_version(const char *path, gs_error *err)
{
    REQUIRE(path && *path, "path");
    int v = 0;
    if (!wal_version(path, &v) && !header_version(path, &v))
        return GS_OK; /* missing, empty or not a database: gsd_store_open decides */
    return v > latest_version() || v < 0 ? bad_version_at(path, v, err) : GS_OK;
}

void gsd_store_mark_unsound(gsd_store *st)
{
    lock(st);
    st->unsound = 1;
    unlock(st);
}

void gsd_store_close(gsd_store *st)
{
    if (!st)
        return;
    for (int i = 0; i < S__COUNT; i++)
        (void)sqlite3_finalize(st->stmt[i]); /* NULL is a no-op */
    /* close_v2 cannot fail with SQLITE_BUSY: every statement is finalized. */
    (void)sqlite3_close_v2(st->db);
    if (st->opened && !st->unsound)
        write_clean_mark(st->path);
    pthread_mutex_destroy(&st->mu);
    gsd_vecenc_free(st->vc);
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

void gsd_store_on_full(gsd_store *st, int (*fn)(void *ctx), void *ctx)
{
    lock(st);
    st->on_full = fn;
    st->on_full_ctx = ctx;
    unlock(st);
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
