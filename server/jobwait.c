/*
 * jobwait.c -- requests waiting for a job's end (see jobwait.h).
 */
#include "jobwait.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "jobs.h"
#include "linalg.h" /* gs_now */

#define HANGUP_CHECK_S 0.1 /* how often the hang-up flags are looked at */

typedef struct wentry {
    gsd_req *r;
    char id[GSD_ID_LEN];
    double deadline;   /* monotonic (gs_now) */
    int ended;         /* the job's terminal status is in the store */
    atomic_int hangup; /* set by the watch thread (http.h) */
    struct wentry *next;
} wentry;

struct gsd_jobwait {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    wentry *list;
    int stop;
    pthread_t th;
};

/* Answer e's request with the job document (or 503 when stopping), free e. */
static void answer(wentry *e, int stopping)
{
    gsd_req_unwatch(e->r);
    if (stopping)
        gsd_reply_error(e->r, 503, "unavailable", "", "the server is shutting down");
    else
        gsd_api_job_reply(e->r);
    gsd_req_finish(e->r);
    free(e);
}

static void wait_until(struct gsd_jobwait *jw, double t)
{
    if (isinf(t)) {
        pthread_cond_wait(&jw->cv, &jw->mu);
        return;
    }
    struct timespec now, ts;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double dt = fmax(0.0, t - gs_now());
    long long ns = now.tv_nsec + (long long)(dt * 1e9);
    ts.tv_sec = now.tv_sec + (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    pthread_cond_timedwait(&jw->cv, &jw->mu, &ts);
}

/* Unlink the entries that are due (ended, expired, hung up) into *due;
 * returns the earliest deadline of those left (INFINITY: none left). */
static double take_due(struct gsd_jobwait *jw, double now, wentry **due)
{
    double next = INFINITY;
    for (wentry **pp = &jw->list; *pp;) {
        wentry *e = *pp;
        if (e->ended || now >= e->deadline || atomic_load(&e->hangup)) {
            *pp = e->next;
            e->next = *due;
            *due = e;
        } else {
            next = fmin(next, e->deadline);
            pp = &e->next;
        }
    }
    return next;
}

static void *waiter_main(void *arg)
{
    gsd_app *app = arg;
    struct gsd_jobwait *jw = app->jobwait;
    pthread_mutex_lock(&jw->mu);
    while (!jw->stop) {
        const double now = gs_now();
        wentry *due = NULL;
        double next = take_due(jw, now, &due);
        if (due) {
            pthread_mutex_unlock(&jw->mu);
            const int stopping = atomic_load(&app->stopping); /* 503, as at the stop */
            while (due) {
                wentry *e = due;
                due = e->next;
                answer(e, stopping);
            }
            pthread_mutex_lock(&jw->mu);
            continue;
        }
        if (jw->list)
            next = fmin(next, now + HANGUP_CHECK_S);
        wait_until(jw, next);
    }
    wentry *left = jw->list;
    jw->list = NULL;
    pthread_mutex_unlock(&jw->mu);
    while (left) {
        wentry *e = left;
        left = e->next;
        answer(e, 1);
    }
    return NULL;
}

gs_err gsd_jobwait_start(gsd_app *app, gs_error *err)
{
    struct gsd_jobwait *jw = calloc(1, sizeof *jw);
    if (!jw)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&jw->mu, NULL);
    pthread_cond_init(&jw->cv, &ca);
    pthread_condattr_destroy(&ca);
    app->jobwait = jw;
    if (pthread_create(&jw->th, NULL, waiter_main, app) != 0) {
        pthread_cond_destroy(&jw->cv);
        pthread_mutex_destroy(&jw->mu);
        free(jw);
        app->jobwait = NULL;
        return gs_errorf(err, GS_ERR_NOMEM, "", "cannot start the job-wait thread");
    }
    return GS_OK;
}

void gsd_jobwait_stop(gsd_app *app)
{
    struct gsd_jobwait *jw = app->jobwait;
    if (!jw)
        return;
    pthread_mutex_lock(&jw->mu);
    const int running = !jw->stop;
    jw->stop = 1;
    pthread_cond_signal(&jw->cv);
    pthread_mutex_unlock(&jw->mu);
    if (running)
        pthread_join(jw->th, NULL);
}

void gsd_jobwait_free(gsd_app *app)
{
    struct gsd_jobwait *jw = app->jobwait;
    if (!jw)
        return;
    gsd_jobwait_stop(app);
    pthread_cond_destroy(&jw->cv);
    pthread_mutex_destroy(&jw->mu);
    free(jw);
    app->jobwait = NULL;
}

/* Mark id's entries ended (caller holds the lock); 1 if any. */
static int mark_ended(struct gsd_jobwait *jw, const char *id)
{
    int any = 0;
    for (wentry *e = jw->list; e; e = e->next)
        if (!strcmp(e->id, id)) {
            e->ended = 1;
            any = 1;
        }
    return any;
}

void gsd_jobwait_add(gsd_app *app, gsd_req *r, double secs)
{
    struct gsd_jobwait *jw = app->jobwait;
    wentry *e = jw ? calloc(1, sizeof *e) : NULL;
    if (!e) {
        gsd_reply_error(r, 503, jw ? "out_of_memory" : "unavailable", "",
                        jw ? "out of memory" : "the server is shutting down");
        return;
    }
    char id[GSD_ID_LEN]; /* e and r may be answered and freed once e is listed */
    snprintf(id, sizeof id, "%s", r->id);
    e->r = r;
    snprintf(e->id, sizeof e->id, "%s", id);
    e->deadline = gs_now() + secs;
    gsd_req_suspend(r);
    gsd_req_watch(r, &e->hangup);
    pthread_mutex_lock(&jw->mu);
    const int stopping = jw->stop;
    if (!stopping) {
        e->next = jw->list;
        jw->list = e;
        pthread_cond_signal(&jw->cv); /* a new, possibly earlier deadline */
    }
    pthread_mutex_unlock(&jw->mu);
    if (stopping) {
        answer(e, 1);
        return;
    }
    /* The job may have ended, or its assembly been deleted, between the
     * caller's read and the registration (its gsd_jobwait_ended found
     * nothing): read its status again. */
    gsd_job_row row;
    int found = 0;
    gs_error ge;
    if (gsd_store_job_get(app->st, id, &row, &found, &ge) == GS_OK) {
        /* ended with chunks still running: their settle answers it */
        if (!found || (gsd_job_status_ended(row.status) && gsd_jobs_quiet(app->jobs, id)))
            gsd_jobwait_ended(app, id); /* answered now: its document, or 404 */
        if (found)
            gsd_job_row_free(&row);
    }
}

void gsd_jobwait_ended(gsd_app *app, const char *id)
{
    struct gsd_jobwait *jw = app->jobwait;
    if (!jw)
        return;
    pthread_mutex_lock(&jw->mu);
    if (mark_ended(jw, id))
        pthread_cond_signal(&jw->cv);
    pthread_mutex_unlock(&jw->mu);
}
