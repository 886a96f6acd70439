/*
 * pool.h -- worker pools: the solvers' and the summary readers'.
 *
 * Owns: a pool's worker threads (each with its own store connection), two
 * task queues and, for the solver pool, the cloud work source:
 *   interactive  single solves waiting on a suspended connection (first)
 *   background   precomputations and factor loads (next)
 *   clouds       work from the work source given at start: chunks of gaps
 *                claimed from the oldest running job (then; small chunks, so
 *                an interactive solve waits at most one chunk of one worker)
 *   idle         work nobody waits for (computing L_Q and saving the
 *                factors): only once the pool has run nothing else for
 *                GSD_POOL_IDLE_S, or after the task has waited
 *                GSD_POOL_IDLE_MAX_S, so that the first clouds after an
 *                upload have every worker
 * The daemon runs two pools: app->pool, one solver per core by default, and
 * app->readers, as many threads as connection threads and no work source,
 * for the long reads of the store (a job's summary and its exports: a pass
 * over every stored result) that must neither hold a connection thread nor
 * wait behind a precomputation.
 * Slow lane: a task marked slow (an interactive solve by a method that takes
 * seconds to minutes on large models: ipm, npm, lemke, ref) runs only while
 * fewer than workers - 1 slow tasks run (1 with one worker), so with two or
 * more workers one is always left for gi / auto solves and cloud chunks: slow
 * solves cannot take every worker. A slow task that must wait stays queued;
 * the tasks behind it go first.
 * An exclusive task (a precomputation) runs alone: the other workers of its
 * pool finish their current task and wait, and OpenBLAS gets all the
 * workers' threads for it; every other task runs with OpenBLAS
 * single-threaded (one solve per core, as the paper recommends for clouds).
 * It does not wait for running slow tasks: beside them it runs on the
 * workers they leave, with OpenBLAS single-threaded.
 */
#ifndef GSD_POOL_H
#define GSD_POOL_H

#include <pthread.h>

#include "app.h"

typedef struct gsd_worker {
    int idx;         /* 0..n-1 in its pool: indexes the per-worker solvers of an
                        assembly (registry.h), so only the solver pool's tasks solve */
    gsd_app *app;
    gsd_pool *pool;  /* the pool it belongs to */
    gsd_store *st;   /* this worker's own connection */
    pthread_t th;
} gsd_worker;

typedef struct gsd_task gsd_task;
struct gsd_task {
    void (*run)(gsd_task *t, gsd_worker *w);
    void (*cancel)(gsd_task *t); /* instead of run when the pool stops first */
    int exclusive;
    int slow;      /* runs in the slow lane (see above) */
    double queued; /* gs_now() at gsd_pool_submit */
    gsd_task *next;
};

enum { GSD_PRIO_INTERACTIVE = 0, GSD_PRIO_BACKGROUND = 1, GSD_PRIO_IDLE = 2 };
#define GSD_POOL_IDLE_S 2.0      /* an idle task waits for this long without other work */
#define GSD_POOL_IDLE_MAX_S 30.0 /* or at most this long */

/* Where idle workers find cloud work (gsd_jobs_work): run some of it on w and
 * return 1, or 0 when there is none. The pool knows no more of jobs. */
typedef int (*gsd_work_source)(gsd_app *app, gsd_worker *w);

/* Start a pool of n workers, each with its own store connection; work: the
 * cloud work source, or NULL (tasks only). *out is NULL on error. */
gs_err gsd_pool_start(gsd_app *app, int n, gsd_work_source work, gsd_pool **out, gs_error *err);
/* Queue a task; -1 if the pool is stopping (the caller answers 503 and
 * frees the task). */
int gsd_pool_submit(gsd_pool *p, gsd_task *t, int prio);
/* New cloud work is available. */
void gsd_pool_notify(gsd_pool *p);
/* Tasks waiting in the queues. */
int gsd_pool_depth(gsd_pool *p);
/* 1 if an interactive task is waiting that a worker could start now (cloud
 * chunks yield to it; a slow task held back by the lane does not count). */
int gsd_pool_urgent(gsd_pool *p);
/* Stop: queued tasks are cancelled, running ones finish, threads joined. */
void gsd_pool_stop(gsd_pool *p);

#endif
