/*
 * store_ckpt.c -- WAL checkpoints on a thread of their own (see store.h).
 *
 * SQLite checkpoints a WAL database from the connection whose commit takes
 * the WAL past 1,000 pages: that commit copies the pages into the database
 * file and waits for two fsyncs (3-8 ms here). In gapsimd that connection is
 * usually a solver worker's, whose core then idles: 45 checkpoints in the
 * fastener-optimization example, 0.12 s of the workers' time. A store handed
 * to a checkpointer (gsd_store_hand_checkpoints) instead reports each
 * commit's WAL size through sqlite3_wal_hook (which replaces the automatic
 * checkpoint), and past GSD_CKPT_PAGES the checkpointer's thread runs a
 * PASSIVE checkpoint on its own connection: it copies what no reader still
 * needs and never blocks a writer, like the automatic one. Since a writer
 * starts the WAL over only when it finds every frame copied, a stream of
 * commits could keep the WAL growing: past GSD_CKPT_HARD frames (16 MB) the
 * checkpoint is a RESTART, which waits at most 10 ms for the writers and
 * readers in its way (new writers wait meanwhile and while it copies, as
 * they did for SQLite's own checkpoint).
 * Durability is unchanged: a commit is in the WAL either way
 * (synchronous=NORMAL).
 */
#include "store_impl.h"

#include <stdlib.h>

#define GSD_CKPT_PAGES 1000 /* SQLite's automatic threshold */
#define GSD_CKPT_HARD 4000  /* WAL frames past which a checkpoint restarts the WAL */
#define GSD_CKPT_RETRY 1000 /* after a RESTART that could not finish: frames to the next */
#define GSD_CKPT_WAIT_MS 10 /* how long a RESTART waits for a writer or a reader */

struct gsd_ckpt {
    gsd_store *st; /* its own connection */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int due, stop;
    int next_restart; /* WAL frames at which the next RESTART is tried (ckpt thread) */
    long runs;     /* checkpoints run (tests, logs) */
    pthread_t th;
};

static void *ckpt_main(void *arg)
{
    gsd_ckpt *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->due && !c->stop)
            pthread_cond_wait(&c->cv, &c->mu);
        if (c->stop)
            break;
        c->due = 0;
        pthread_mutex_unlock(&c->mu);
        lock(c->st);
        /* SQLITE_BUSY (another checkpoint) or readers in the way: the next
         * commit past the threshold asks again */
        int log = 0, done = 0;
        (void)sqlite3_wal_checkpoint_v2(c->st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
        /* A writer restarts the WAL only when it finds every frame copied,
         * which commits arriving faster than checkpoints never let happen: past
         * GSD_CKPT_HARD frames, a RESTART (it holds the write lock while it
         * copies the rest, then the next writer starts the WAL over). It waits
         * at most GSD_CKPT_WAIT_MS for a writer's transaction or a reader on
         * older frames, holding new writers back meanwhile; when it cannot
         * finish (a long summary reading), the next try is GSD_CKPT_RETRY
         * frames later, so such a reader costs the writers 10 ms per 4 MB of
         * WAL, not 10 ms per commit. */
        if (log > c->next_restart) {
            int rc = sqlite3_wal_checkpoint_v2(c->st->db, NULL, SQLITE_CHECKPOINT_RESTART, NULL,
                                               NULL);
            c->next_restart = rc == SQLITE_OK ? GSD_CKPT_HARD : log + GSD_CKPT_RETRY;
        }
        unlock(c->st);
        pthread_mutex_lock(&c->mu);
        c->runs++;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

gs_err gsd_ckpt_start(const char *path, gsd_ckpt **out, gs_error *err)
{
    *out = NULL;
    gsd_ckpt *c = calloc(1, sizeof *c);
    if (!c)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    gs_err e = gsd_store_open(path, &c->st, err);
    if (e) {
        free(c);
        return e;
    }
    lock(c->st);
    (void)sqlite3_busy_timeout(c->st->db, GSD_CKPT_WAIT_MS); /* RESTART only: see ckpt_main */
    unlock(c->st);
    c->next_restart = GSD_CKPT_HARD;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (pthread_create(&c->th, NULL, ckpt_main, c) != 0) {
        gsd_store_close(c->st);
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        free(c);
        return gs_errorf(err, GS_ERR_NOMEM, "", "cannot start the checkpoint thread");
    }
    *out = c;
    return GS_OK;
}

void gsd_ckpt_stop(gsd_ckpt *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    gsd_store_close(c->st);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

long gsd_ckpt_runs(gsd_ckpt *c)
{
    pthread_mutex_lock(&c->mu);
    long n = c->runs;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* After each commit on a handed store (its thread, store locked): wake the
 * checkpointer once the WAL holds GSD_CKPT_PAGES pages. O(1). */
static int wal_hook(void *ctx, sqlite3 *db, const char *name, int pages)
{
    (void)db;
    (void)name;
    gsd_ckpt *c = ctx;
    if (pages >= GSD_CKPT_PAGES) {
        pthread_mutex_lock(&c->mu);
        c->due = 1;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    return SQLITE_OK;
}

void gsd_store_hand_checkpoints(gsd_store *st, gsd_ckpt *c)
{
    lock(st);
    st->ckpt = c;
    (void)sqlite3_wal_hook(st->db, wal_hook, c); /* replaces the automatic checkpoint */
    unlock(st);
}

/* An assembly delete checkpoints after each of its batches itself: woken by
 * the same commit, the checkpointer's thread would run its checkpoint at
 * the same moment, and the one of the two that finds the other holding
 * the checkpoint lock gives up at once (SQLITE_BUSY, no busy handler), or
 * the checkpointer's is still copying when the next batch begins, which
 * then cannot start the WAL over. */
void gsd_store_ckpt_pause(gsd_store *st, int paused)
{
    if (st->ckpt)
        (void)sqlite3_wal_hook(st->db, paused ? NULL : wal_hook, paused ? NULL : st->ckpt);
}
