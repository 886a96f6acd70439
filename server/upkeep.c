/*
 * upkeep.c -- retention sweep, store quota, disk reserve (see upkeep.h).
 *
 * Costs: a sweep with --retain-solves-max counts the single solves on the
 * partial index results_single (O(single solves), a few ms per 100,000);
 * the file usage walks the data directory (O(files): a handful per assembly,
 * one per job), only when a kick marked it stale or GSD_UPKEEP_PERIOD_S
 * after the last walk; the database part is two PRAGMAs and a stat.
 */
#define _GNU_SOURCE
#include "upkeep.h"

#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ids.h"
#include "integrity.h"
#include "store.h"

struct gsd_upkeep {
    gsd_app *app;
    gsd_store *st;           /* the sweep's connection */
    pthread_t th;
    int running;
    pthread_mutex_t mu;      /* guards what follows */
    pthread_cond_t cv;
    int stop, kicked;
    long long files_bytes;   /* cached walk of the data directory (-1: none yet) */
    double files_at;         /* when it was walked (unix s) */
    int files_stale;
    char reserve[PATH_MAX + 16];
    atomic_int reserve_held;
};

#define MIB (1024.0 * 1024.0)

/* ---- usage ---------------------------------------------------------------------- */

/* nftw has no context argument: walks are serialized by walk_mu. */
static pthread_mutex_t walk_mu = PTHREAD_MUTEX_INITIALIZER;
static long long walk_sum;

static int walk_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)flag;
    if (!S_ISREG(sb->st_mode))
        return 0;
    /* the database and the reserve are counted apart / not at all */
    if (ftw->level == 1) {
        const char *name = path + ftw->base;
        if (!strcmp(name, "gapsim.db") || !strcmp(name, "gapsim.db-wal") ||
            !strcmp(name, "gapsim.db-shm") || !strcmp(name, "reserve"))
            return 0;
    }
    /* a file with several links (a cloud's gaps shared by gaps_from, all
     * links inside the data directory) counts a share at each: once in all */
    walk_sum += (long long)sb->st_blocks * 512 / (sb->st_nlink > 1 ? (long long)sb->st_nlink : 1);
    return 0;
}

long long gsd_upkeep_files_bytes(const char *root)
{
    pthread_mutex_lock(&walk_mu);
    walk_sum = 0;
    long long v = nftw(root, walk_one, 16, FTW_PHYS) == 0 ? walk_sum : -1;
    pthread_mutex_unlock(&walk_mu);
    return v;
}

static long long files_bytes(gsd_upkeep *u)
{
    pthread_mutex_lock(&u->mu);
    double now = gsd_unix_now();
    if (u->files_stale || u->files_bytes < 0 || now - u->files_at > GSD_UPKEEP_PERIOD_S) {
        u->files_bytes = gsd_upkeep_files_bytes(u->app->o.data_dir);
        u->files_at = now;
        u->files_stale = 0;
    }
    long long v = u->files_bytes;
    pthread_mutex_unlock(&u->mu);
    return v;
}

/* Bytes the store takes: database pages in use + files; -1 unknown. The
 * WAL is left out: its size is transient (reused from its start after each
 * checkpoint, ~4 MiB at most between automatic checkpoints), and counting
 * it would make the quota depend on when SQLite last checkpointed. */
static long long usage_bytes(gsd_app *app, gsd_store *st)
{
    gs_error e;
    long long live = 0, files = app->upkeep ? files_bytes(app->upkeep) : -1;
    if (files < 0 || gsd_store_live_bytes(st, &live, &e) != GS_OK)
        return -1;
    return live + files;
}

static long long quota_bytes(const gsd_app *app)
{
    return app->o.store_quota_mb * 1024 * 1024;
}

/* ---- reserve -------------------------------------------------------------------- */

/* (Re)create the reserve when the disk has room for it and to spare. */
static void reserve_make(gsd_upkeep *u)
{
    if (atomic_load(&u->reserve_held))
        return;
    long long free_mb = gsd_disk_free_mb(u->app);
    if (free_mb >= 0 && free_mb < 2 * GSD_RESERVE_MB)
        return;
    int fd = open(u->reserve, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    int rc = posix_fallocate(fd, 0, (off_t)GSD_RESERVE_MB << 20);
    if (close(fd) != 0 && rc == 0)
        rc = -1;
    if (rc != 0) {
        unlink(u->reserve);
        return;
    }
    atomic_store(&u->reserve_held, 1);
    gsd_log(u->app, 2, "disk reserve of %d MiB in place", GSD_RESERVE_MB);
}

int gsd_upkeep_release_reserve(gsd_app *app)
{
    gsd_upkeep *u = app ? app->upkeep : NULL;
    if (!u || !atomic_exchange(&u->reserve_held, 0))
        return 0;
    int ok = unlink(u->reserve) == 0;
    gsd_log(app, ok ? 1 : 0, "the disk is full: %s the %d MiB reserve for deletes and job "
            "states", ok ? "released" : "could not release", GSD_RESERVE_MB);
    return ok;
}

int gsd_upkeep_full_hook(void *app)
{
    return gsd_upkeep_release_reserve(app);
}

/* ---- retention ------------------------------------------------------------------ */

static void pause_between_batches(void)
{
    /* let other writers take the write lock (writer_mu is not fair) */
    nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
}

/* Delete one batch of the oldest single solves; rows deleted, or -1. */
static int retain_oldest(gsd_app *app, gsd_store *st)
{
    gs_error e;
    int n = 0;
    if (gsd_store_retain(st, 0, 0, GSD_UPKEEP_BATCH, &n, &e) != GS_OK) {
        gsd_log(app, 0, "retention: %s", e.msg);
        return -1;
    }
    atomic_fetch_add(&app->metrics.results_retained, n);
    return n;
}

/* One log line per pass that deleted single solves to bring the store under
 * --store-quota-mb (the sweep's, or a request's making room first): how
 * many, and what that gave back of the usage the quota measures (pages
 * freed in the database; -1: unknown). Counted, not logged, they left no
 * trace of why results were gone. */
static void log_quota_pass(gsd_app *app, const char *who, long long n, long long before,
                           long long after)
{
    char freed[96] = "";
    if (before >= 0 && after >= 0)
        snprintf(freed, sizeof freed, ", %.2f MiB freed, the store now %.2f MiB",
                 (double)(before - after) / MIB, (double)after / MIB);
    gsd_log(app, 1, "store quota: %s deleted the %lld oldest single-solve results%s "
            "(--store-quota-mb %lld)", who, n, freed, app->o.store_quota_mb);
}

static void sweep(gsd_upkeep *u)
{
    gsd_app *app = u->app;
    const gsd_opts *o = &app->o;
    long long deleted = 0;
    double before = o->retain_age_days > 0 ? gsd_unix_now() - o->retain_age_days * 86400.0 : 0;
    long long keep = o->retain_max > 0 ? o->retain_max : -1;
    int n = 0;
    if (before > 0 || keep >= 0) {
        do {
            gs_error e;
            if (gsd_store_retain(u->st, before, keep, GSD_UPKEEP_BATCH, &n, &e) != GS_OK) {
                gsd_log(app, 0, "retention: %s", e.msg);
                break;
            }
            deleted += n;
            atomic_fetch_add(&app->metrics.results_retained, n);
            if (n == GSD_UPKEEP_BATCH)
                pause_between_batches();
        } while (n == GSD_UPKEEP_BATCH && !atomic_load(&app->stopping));
    }
    if (deleted)
        gsd_log(app, 1, "retention: deleted %lld single-solve results (--retain-solves-age, "
                "--retain-solves-max)", deleted);
    long long over = 0, used0 = -1;
    while (o->store_quota_mb > 0 && !atomic_load(&app->stopping)) {
        long long used = usage_bytes(app, u->st);
        if (used0 < 0)
            used0 = used;
        if (used < 0 || used <= quota_bytes(app) || (n = retain_oldest(app, u->st)) <= 0)
            break;
        over += n;
        pause_between_batches();
    }
    if (over)
        log_quota_pass(app, "the sweep", over, used0, usage_bytes(app, u->st));
    reserve_make(u);
}

static void *upkeep_main(void *arg)
{
    gsd_upkeep *u = arg;
    pthread_mutex_lock(&u->mu);
    while (!u->stop) {
        u->kicked = 0;
        pthread_mutex_unlock(&u->mu);
        sweep(u);
        pthread_mutex_lock(&u->mu);
        if (u->stop || u->kicked)
            continue;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += GSD_UPKEEP_PERIOD_S;
        while (!u->stop && !u->kicked)
            if (pthread_cond_timedwait(&u->cv, &u->mu, &until) != 0)
                break; /* timed out: periodic sweep */
    }
    pthread_mutex_unlock(&u->mu);
    return NULL;
}

/* ---- start, stop, kick ------------------------------------------------------------ */

void gsd_upkeep_before_open(const gsd_app *app)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/reserve", app->o.data_dir);
    unlink(path); /* absent: nothing to do */
}

/* Stop and join the thread, close its store, free (NULL: no-op). */
static void upkeep_free(gsd_upkeep *u)
{
    if (!u)
        return;
    if (u->running) {
        pthread_mutex_lock(&u->mu);
        u->stop = 1;
        pthread_cond_signal(&u->cv);
        pthread_mutex_unlock(&u->mu);
        pthread_join(u->th, NULL);
    }
    gsd_store_close(u->st);
    pthread_mutex_destroy(&u->mu);
    pthread_cond_destroy(&u->cv);
    free(u);
}

gs_err gsd_upkeep_start(gsd_app *app, gs_error *err)
{
    gsd_upkeep *u = calloc(1, sizeof *u);
    if (!u)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    u->app = app;
    u->files_bytes = -1;
    snprintf(u->reserve, sizeof u->reserve, "%s/reserve", app->o.data_dir);
    pthread_mutex_init(&u->mu, NULL);
    pthread_cond_init(&u->cv, NULL);
    char db[PATH_MAX + 16];
    gsd_path_db(app, db, sizeof db);
    gs_err rc = gsd_store_open(db, &u->st, err);
    if (!rc) {
        gsd_store_on_full(u->st, gsd_upkeep_full_hook, app);
        if (app->ckpt)
            gsd_store_hand_checkpoints(u->st, app->ckpt);
        app->upkeep = u;
        reserve_make(u); /* before anything else can fill the disk */
        if (pthread_create(&u->th, NULL, upkeep_main, u) != 0)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "cannot start the upkeep thread");
        u->running = rc == GS_OK;
    }
    if (rc) {
        app->upkeep = NULL;
        upkeep_free(u);
    }
    return rc;
}

void gsd_upkeep_stop(gsd_app *app)
{
    gsd_upkeep *u = app->upkeep;
    app->upkeep = NULL;
    upkeep_free(u);
}


void gsd_upkeep_kick(gsd_app *app)
{
    gsd_upkeep *u = app->upkeep;
    if (!u)
        return;
    pthread_mutex_lock(&u->mu);
    u->kicked = 1;
    u->files_stale = 1;
    pthread_cond_signal(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

/* ---- room ----------------------------------------------------------------------- */

static int low_disk(gsd_app *app, char *msg, size_t cap)
{
    const long long mb = gsd_disk_free_mb(app);
    if (mb < 0 || mb >= app->o.min_free_mb)
        return 0;
    snprintf(msg, cap, "the data directory has %lld MiB free, less than the %lld MiB this server "
             "keeps free (gapsimd --min-free): delete assemblies (their clouds' results go with "
             "them), or free disk space",
             mb, app->o.min_free_mb);
    return 1;
}

static void over_quota(gsd_app *app, long long used, char *msg, size_t cap)
{
    snprintf(msg, cap, "the store takes %.1f MiB, more than its quota of %lld MiB (gapsimd "
             "--store-quota-mb), after deleting the oldest single solves: delete assemblies (their "
             "clouds' results go with them), or raise the quota", (double)used / MIB, app->o.store_quota_mb);
}

int gsd_upkeep_room(gsd_app *app, gsd_store *st, int min_free, char *msg, size_t cap)
{
    /* what would be stored would go into an unlinked file, or nowhere */
    if (gsd_data_dir_lost(app, msg, cap))
        return GSD_ROOM_LOST;
    if (min_free && low_disk(app, msg, cap))
        return GSD_ROOM_LOW_DISK;
    if (app->o.store_quota_mb <= 0)
        return GSD_ROOM_OK;
    long long used = usage_bytes(app, st), before = used, n = 0;
    for (int b = 0; used > quota_bytes(app) && b < GSD_ROOM_MAX_BATCHES; b++) {
        int got = retain_oldest(app, st);
        n += got > 0 ? got : 0;
        /* measured again even when nothing was left to delete here: the
         * sweep may have deleted them first, and made the room */
        used = usage_bytes(app, st);
        if (got <= 0)
            break;
    }
    if (n)
        log_quota_pass(app, "a request making room", n, before, used);
    if (used < 0 || used <= quota_bytes(app))
        return GSD_ROOM_OK;
    over_quota(app, used, msg, cap);
    gsd_upkeep_kick(app); /* the sweep goes on deleting, if anything is left */
    return GSD_ROOM_QUOTA;
}

int gsd_upkeep_health(gsd_app *app, char msgs[][320], size_t cap, double *used_mb)
{
    int n = 0;
    const long long free_mb = gsd_disk_free_mb(app);
    *used_mb = -1;
    if (gsd_data_dir_lost(app, msgs[n], cap))
        n++;
    else if (free_mb >= 0 && free_mb < app->o.min_free_mb)
        snprintf(msgs[n++], cap, "%lld MiB free in the data directory, less than --min-free "
                 "%lld: uploads and clouds are refused (507)", free_mb, app->o.min_free_mb);
    long long used = usage_bytes(app, app->st);
    if (used >= 0)
        *used_mb = (double)used / MIB;
    if (app->o.store_quota_mb > 0 && used > quota_bytes(app))
        snprintf(msgs[n++], cap, "the store takes %.1f MiB, more than --store-quota-mb %lld: "
                 "uploads, clouds and new solves are refused (507)", (double)used / MIB,
                 app->o.store_quota_mb);
    return n;
}
