/*
 * test_store_support.h -- helpers of the store's unit tests (test_store.c,
 * test_store_vectors.c): scratch database paths, opening a store, and raw
 * SQL on a second connection to check what is on disk.
 */
#ifndef GS_TEST_STORE_SUPPORT_H
#define GS_TEST_STORE_SUPPORT_H

#include <sqlite3.h>
#include <stdio.h>
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

#endif
