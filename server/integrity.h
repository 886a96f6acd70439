/*
 * integrity.h -- the data directory checked at startup, and its free space.
 *
 * Owns:
 *   - before the store opens: a missing or empty gapsim.db while
 *     assemblies/ or jobs/ hold data is refused (a lost database would
 *     otherwise start an empty service over orphaned files), unless
 *     --reset, which discards the data directory's contents first;
 *   - after it opens: PRAGMA quick_check (a damaged database is refused with
 *     SQLite's complaint) unless the last run closed the store cleanly and
 *     the file has not changed since (gapsim.db-clean, store.h), the
 *     assembly deletes a stop interrupted finished, and the orphans -
 *     directories of assemblies or jobs the store does not know - reported
 *     and removed;
 *   - the free space of the data directory's file system (statvfs), which
 *     /healthz reports and which uploads and clouds need (--min-free), and
 *     whether the data directory and the store's file are still there (a
 *     data directory removed under the running daemon: /healthz degraded,
 *     new data refused, upkeep.h);
 *   - first of all: the data directory's lock (GSD_LOCK_FILE, an fcntl
 *     write lock held by the process until it ends, released by the kernel
 *     however it ends, so never stale): a second daemon on the same data
 *     directory is refused, naming the directory and the holder's pid;
 *   - after the store opens, also: the temporary files of atomic writes a
 *     crash interrupted ("<name>.tmp.XXXXXX" in assemblies/<id>/ and
 *     jobs/<id>/, core/fileio.c) removed; the error of every job that did
 *     not fail cleared;
 * Cost: O(entries of assemblies/ and jobs/) + O(database) for quick_check
 * when it runs.
 */
#ifndef GSD_INTEGRITY_H
#define GSD_INTEGRITY_H

#include <stddef.h>

#include "app.h"
#include "gs_error.h"

#define GSD_LOCK_FILE "gapsimd.lock"

/* Lock the data directory (which exists) for this process's lifetime;
 * GS_ERR_IO when another process holds it (its pid in the message). */
gs_err gsd_integrity_lock(gsd_app *app, gs_error *err);
gs_err gsd_integrity_before_open(gsd_app *app, int reset, gs_error *err);
gs_err gsd_integrity_after_open(gsd_app *app, gs_error *err);
/* MiB free for the daemon in the data directory's file system (-1 unknown). */
long long gsd_disk_free_mb(const gsd_app *app);
/* 1, with why in msg (no path, no quotes: for /healthz and a 507 body), if
 * the data directory cannot be reached (statvfs fails: removed, unmounted,
 * no longer searchable) or gapsim.db is no longer the file the store
 * opened (removed or replaced under the running daemon: what is stored
 * would go into an unlinked file); else 0. O(1): a statvfs and a stat. */
int gsd_data_dir_lost(const gsd_app *app, char *msg, size_t cap);

#endif
