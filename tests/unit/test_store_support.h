/*
 * test_store_support.h -- helpers of the store's unit tests (test_store.c,
 * test_store_vectors.c, test_summary.c): scratch database paths, opening a
 * store, an assembly and its job, and raw SQL on a second connection to
 * check what is on disk.
 */
#ifndef GS_TEST_STORE_SUPPORT_H
#define GS_TEST_STORE_SUPPORT_H

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gs_test.h"
#include "store.h"

/* Scratch database path with no leftover database, WAL or shm file. */
static inline const char *fresh_db(char *buf, size_t len, const char *name)
{
    char side[600];
    gs_test_tmp_path(buf, len, name);
    unlink(buf);
    snprintf(side, sizeof side, "%s-wal", buf);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", buf);
    unlink(side);
    return buf;
}

/* One SQL integer from a separate raw connection (-999 on any failure). */
static inline long long raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    long long v = -999;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

/* Open a store, reporting why not (NULL). */
static inline gsd_store *open_ok(const char *path)
{
    gsd_store *st = NULL;
    gs_error e;
    if (gsd_store_open(path, &st, &e) != GS_OK) {
        fprintf(stderr, "  open %s: %s\n", path, e.msg);
        return NULL;
    }
    return st;
}

/* Job j_1 of assembly a_1 with that status and total. */
static inline gsd_job_row test_job_row(const char *status, int total)
{
    gsd_job_row j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "j_1");
    snprintf(j.assembly_id, sizeof j.assembly_id, "a_1");
    snprintf(j.status, sizeof j.status, "%s", status);
    j.total = total;
    return j;
}

/* Assembly a_1 (ready) and its job j_1 (status, total gaps) in the store. */
static inline gs_err seed_job(gsd_store *st, const char *status, int total, gs_error *e)
{
    gsd_assembly_row a;
    memset(&a, 0, sizeof a);
    snprintf(a.id, sizeof a.id, "a_1");
    snprintf(a.content_hash, sizeof a.content_hash, "h");
    snprintf(a.joint, sizeof a.joint, "simple");
    snprintf(a.status, sizeof a.status, "ready");
    gsd_job_row j = test_job_row(status, total);
    gs_err rc = gsd_store_assembly_insert(st, &a, e);
    return rc ? rc : gsd_store_job_insert(st, &j, e);
}

#endif
