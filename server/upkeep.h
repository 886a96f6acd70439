/*
 * upkeep.h -- the store's upkeep: retention of single solves, the size quota,
 * and the disk reserve.
 *
 * Owns:
 *   - the sweep thread (own store connection): at start, every
 *     GSD_UPKEEP_PERIOD_S seconds and soon after a kick (a single solve
 *     stored, files written or deleted), it deletes the single solves (results
 *     with no job: single solves and the cache they form; cloud job results
 *     are never deleted) older than --retain-solves-age and beyond the newest
 *     --retain-solves-max, oldest first by created_at, GSD_UPKEEP_BATCH rows
 *     per transaction so that it never holds the write lock for long; then,
 *     while the store is above --store-quota-mb, the oldest single solves;
 *     a pass that deleted logs one line for each rule (the quota's with the
 *     MiB it freed), and so does a request that made room (gsd_upkeep_room);
 *   - the usage of the data directory: the database's pages in use
 *     (gsd_store_live_bytes; not its WAL, transient) + the files under
 *     assemblies/, jobs/ and staging/ (a directory walk, cached until a kick or
 *     GSD_UPKEEP_PERIOD_S old);
 *   - the room check of requests that store new data: below --min-free or
 *     above --store-quota-mb (after retention made what room it could), or
 *     the data directory lost (integrity.h), the reason is given for a 507;
 *   - the disk reserve: data/reserve, GSD_RESERVE_MB of allocated blocks
 *     created at start (a leftover one is released before the store opens),
 *     released when a delete or a job state write hits a full disk so that
 *     deletes and job failures can still be written, recreated by the sweep
 *     once there is room again.
 * Oldest-first, not LRU: a cache hit would otherwise be a write.
 */
#ifndef GSD_UPKEEP_H
#define GSD_UPKEEP_H

#include <stddef.h>

#include "app.h"
#include "gs_error.h"

#define GSD_UPKEEP_PERIOD_S 60
#define GSD_UPKEEP_BATCH 256
#define GSD_RESERVE_MB 4

typedef struct gsd_upkeep gsd_upkeep;

/* Before the store opens: release the reserve left by the last run, so that
 * the store can open on a full disk (its WAL and shm files need room). */
void gsd_upkeep_before_open(const gsd_app *app);
/* Create the reserve, open the sweep's store, start the thread (first sweep
 * at once). app->upkeep is set. */
gs_err gsd_upkeep_start(gsd_app *app, gs_error *err);
/* Detach app->upkeep (so that the store's on_full hook no longer reaches
 * it), stop and join its thread, close its store. No-op without one. */
void gsd_upkeep_stop(gsd_app *app);
/* Bytes allocated to the files under the data directory root, without the
 * database, its WAL and shm files and the reserve at the top level; a file
 * with n links counts 1/n at each (gaps shared by gaps_from: once in all,
 * as long as all its links are under root). -1 if the walk failed. O(files). */
long long gsd_upkeep_files_bytes(const char *root);
/* Something was stored or deleted: re-measure the files, sweep soon. */
void gsd_upkeep_kick(gsd_app *app);

enum { GSD_ROOM_OK = 0, GSD_ROOM_LOW_DISK = 1, GSD_ROOM_QUOTA = 2, GSD_ROOM_LOST = 3 };
/* May new data be stored? Never while the data directory or the store's
 * file is lost (GSD_ROOM_LOST, integrity.h: gsd_data_dir_lost; every
 * request that stores, single solves included). min_free: the --min-free
 * rule applies too (uploads and clouds; single solves only meet the quota). Over the quota, single
 * solves are deleted first (oldest first, on st, at most
 * GSD_ROOM_MAX_BATCHES batches). GSD_ROOM_OK, or why not with the reason in
 * msg (for a 507 body and /healthz). */
#define GSD_ROOM_MAX_BATCHES 16
int gsd_upkeep_room(gsd_app *app, gsd_store *st, int min_free, char *msg, size_t cap);
/* The reasons /healthz lists (no retention run): the number of reasons
 * written to msgs (up to 2, each cap bytes): the data directory lost,
 * else below --min-free (an unknown free space is a reason only when the
 * data directory is lost); above the quota. *used_mb: the usage (-1 if
 * unknown). */
int gsd_upkeep_health(gsd_app *app, char msgs[][320], size_t cap, double *used_mb);
/* Release the reserve (a write met a full disk); 1 if it existed. */
int gsd_upkeep_release_reserve(gsd_app *app);
/* The same for gsd_store_on_full (ctx: the gsd_app). */
int gsd_upkeep_full_hook(void *app);

#endif
