/*
 * pool.c -- worker threads, priority queues and exclusive tasks (see pool.h).
 */
#include "pool.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "linalg.h"
#include "store.h"
#include "upkeep.h"

struct gsd_pool {
    gsd_app *app;
    gsd_work_source work; /* cloud work for idle workers */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    gsd_task *head[3], *tail[3]; /* interactive, background, idle (GSD_PRIO_*) */
    int depth[3];
    double last_work;    /* gs_now() when a worker last ran a task or found cloud work */
    int n;
    gsd_worker *w;
    int busy;            /* workers running something */
    int slow;            /* slow tasks running */
    int slow_cap;        /* at most this many at once: workers - 1 (1 with one worker) */
    int exclusive;       /* an exclusive task is waiting or running */
    int stopping;
    unsigned long gen;   /* bumped by gsd_pool_notify */
};

/* The first task of queue q a worker may start now (a slow one only below
 * the lane's cap); its predecessor in *prev (NULL: the head). O(queue). */
static gsd_task *runnable(const gsd_pool *p, int q, gsd_task **prev)
{
    *prev = NULL;
    for (gsd_task *t = p->head[q]; t; *prev = t, t = t->next)
        if (!t->slow || p->slow < p->slow_cap || p->stopping)
            return t;
    return NULL;
}

/* The first task a worker may start in queues 0..nq-1, taken out. */
static gsd_task *pop(gsd_pool *p, int nq)
{
    for (int q = 0; q < nq; q++) {
        gsd_task *prev, *t = runnable(p, q, &prev);
        if (!t)
            continue;
        if (prev)
            prev->next = t->next;
        else
            p->head[q] = t->next;
        if (p->tail[q] == t)
            p->tail[q] = prev;
        p->depth[q]--;
        t->next = NULL;
        return t;
    }
    return NULL;
}

/* The idle queue's first runnable task when it may start now: the pool
 * has run nothing else for GSD_POOL_IDLE_S, or it has waited
 * GSD_POOL_IDLE_MAX_S; else NULL and *due when it may. Lock held. */
static gsd_task *idle_due(const gsd_pool *p, double now, double *due)
{
    gsd_task *prev, *t = runnable(p, GSD_PRIO_IDLE, &prev);
    *due = INFINITY;
    if (!t)
        return NULL;
    *due = fmin(p->last_work + GSD_POOL_IDLE_S, t->queued + GSD_POOL_IDLE_MAX_S);
    return now >= *due ? t : NULL;
}

/* Wait on the pool's condition until *due at the latest (INFINITY: no
 * limit). Lock held. */
static void wait_until(gsd_pool *p, double due)
{
    if (!isfinite(due)) {
        pthread_cond_wait(&p->cv, &p->mu);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the condition's clock */
    double left = due - gs_now();
    if (left <= 0)
        return;
    ts.tv_sec += (time_t)left;
    ts.tv_nsec += (long)((left - floor(left)) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

/* Called with p->mu held and exclusive set (the other workers start
 * nothing): waits for their running tasks to end, except slow ones (seconds
 * to minutes: a precomputation waiting for them held every worker idle that
 * long, and every gi solve queued behind it). Beside a slow task it runs
 * with OpenBLAS single-threaded: the thread count is the process's, and a
 * solve is in its BLAS calls; alone, with every worker's thread. */
static void run_exclusive(gsd_pool *p, gsd_task *t, gsd_worker *w)
{
    while (p->busy > p->slow)
        pthread_cond_wait(&p->cv, &p->mu);
    const int threads = p->slow ? 1 : p->n;
    p->busy++;
    pthread_mutex_unlock(&p->mu);
    gs_blas_set_threads(threads);
    t->run(t, w);
    gs_blas_set_threads(1);
    pthread_mutex_lock(&p->mu);
    p->busy--;
    p->exclusive = 0;
    p->last_work = gs_now();
    pthread_cond_broadcast(&p->cv);
}

static void *worker_main(void *arg)
{
    gsd_worker *w = arg;
    gsd_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    while (!p->stopping) {
        if (p->exclusive) { /* someone waits to run alone */
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        gsd_task *t = pop(p, GSD_PRIO_IDLE); /* interactive, then background */
        if (t) {
            if (t->exclusive) {
                p->exclusive = 1;
                run_exclusive(p, t, w);
                continue;
            }
            int slow = t->slow; /* t may be freed by run */
            p->busy++;
            p->slow += slow;
            pthread_mutex_unlock(&p->mu);
            t->run(t, w);
            pthread_mutex_lock(&p->mu);
            p->busy--;
            p->slow -= slow;
            p->last_work = gs_now();
            if (p->exclusive || slow) /* an exclusive task waits for busy to drop, a
                                         slow one for the lane */
                pthread_cond_broadcast(&p->cv);
            continue;
        }
        unsigned long gen = p->gen;
        p->busy++;
        pthread_mutex_unlock(&p->mu);
        int worked = p->work ? p->work(w->app, w) : 0;
        pthread_mutex_lock(&p->mu);
        p->busy--;
        if (worked)
            p->last_work = gs_now();
        if (p->exclusive)
            pthread_cond_broadcast(&p->cv);
        gsd_task *prev;
        if (!worked && gen == p->gen && !runnable(p, 0, &prev) && !runnable(p, 1, &prev) &&
            !p->stopping) {
            double due;
            gsd_task *it = idle_due(p, gs_now(), &due);
            if (!it) {
                wait_until(p, due);
                continue;
            }
            it = pop(p, GSD_PRIO_IDLE + 1); /* nothing else runnable: the idle task */
            p->busy++;
            pthread_mutex_unlock(&p->mu);
            it->run(it, w);
            pthread_mutex_lock(&p->mu);
            p->busy--;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

gs_err gsd_pool_start(gsd_app *app, int n, gsd_work_source work, gsd_pool **out, gs_error *err)
{
    *out = NULL;
    gsd_pool *p = calloc(1, sizeof *p);
    if (!p)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    p->app = app;
    p->work = work;
    p->n = n;
    p->slow_cap = p->n > 1 ? p->n - 1 : 1;
    p->w = calloc((size_t)p->n, sizeof *p->w);
    if (!p->w) {
        free(p);
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    char db[PATH_MAX + 16];
    gsd_path_db(app, db, sizeof db);
    gs_blas_set_threads(1);
    for (int i = 0; i < p->n; i++) {
        p->w[i].idx = i;
        p->w[i].app = app;
        p->w[i].pool = p;
        gs_err rc = gsd_store_open(db, &p->w[i].st, err);
        if (rc == GS_OK) {
            gsd_store_on_full(p->w[i].st, gsd_upkeep_full_hook, app);
            if (app->ckpt) /* a worker never waits for a checkpoint */
                gsd_store_hand_checkpoints(p->w[i].st, app->ckpt);
        }
        if (rc == GS_OK && pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]) != 0)
            rc = gs_errorf(err, GS_ERR_NOMEM, "workers", "cannot start worker %d", i);
        if (rc) {
            gsd_store_close(p->w[i].st);
            p->n = i; /* stop the ones that run */
            gsd_pool_stop(p);
            return rc;
        }
    }
    *out = p;
    return GS_OK;
}

int gsd_pool_submit(gsd_pool *p, gsd_task *t, int prio)
{
    pthread_mutex_lock(&p->mu);
    if (p->stopping) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    t->next = NULL;
    t->queued = gs_now();
    if (p->tail[prio])
        p->tail[prio]->next = t;
    else
        p->head[prio] = t;
    p->tail[prio] = t;
    p->depth[prio]++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void gsd_pool_notify(gsd_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->gen++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int gsd_pool_depth(gsd_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int d = p->depth[0] + p->depth[1] + p->depth[2];
    pthread_mutex_unlock(&p->mu);
    return d;
}

int gsd_pool_urgent(gsd_pool *p)
{
    pthread_mutex_lock(&p->mu);
    gsd_task *prev;
    int u = runnable(p, 0, &prev) != NULL || p->exclusive;
    pthread_mutex_unlock(&p->mu);
    return u;
}

void gsd_pool_stop(gsd_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    gsd_task *t;
    while ((t = pop(p, GSD_PRIO_IDLE + 1)) != NULL) {
        pthread_mutex_unlock(&p->mu);
        if (t->cancel)
            t->cancel(t);
        pthread_mutex_lock(&p->mu);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++) {
        pthread_join(p->w[i].th, NULL);
        gsd_store_close(p->w[i].st);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->w);
    free(p);
}
