/*
 * jobwait.h -- GET /v1/jobs/{id}?wait=S: the job document when the job
 * ends, or after S seconds, without polling.
 *
 * Owns: the suspended requests waiting for a job, and one thread that
 * answers them. A request is answered (with the job document as GET
 * /v1/jobs/{id} renders it, gsd_api_job_reply) as soon as the job's
 * terminal status (done, failed, cancelled) is in the store
 * (gsd_jobwait_ended, called right after that write), as soon as the job is
 * deleted with its assembly (called once its row is gone: answered 404),
 * when its S seconds have passed, or when its client hangs up (the watch of
 * http.h; the answer then goes nowhere). At shutdown every waiting request is answered
 * 503. Cost: O(waiting requests) per wake-up; the thread sleeps until the
 * earliest deadline, a job's end or 100 ms (the hang-up checks) while
 * anything waits, and until signalled otherwise.
 */
#ifndef GSD_JOBWAIT_H
#define GSD_JOBWAIT_H

#include "http.h"

/* The longest wait a request may ask for (s). */
#define GSD_JOBWAIT_MAX_S 60.0

/* Start the answering thread (app->jobwait). GS_ERR_NOMEM if it cannot. */
gs_err gsd_jobwait_start(gsd_app *app, gs_error *err);
/* Answer every waiting request 503 and join the thread; later requests are
 * answered 503 at once. Idempotent. */
void gsd_jobwait_stop(gsd_app *app);
/* Stop, then free (after the HTTP daemon has stopped: no handler can add). */
void gsd_jobwait_free(gsd_app *app);
/* Suspend r (its r->id a job whose row the caller found not terminal) for
 * at most secs seconds. If the job ended meanwhile it is answered at once.
 * Out of memory or stopping: answered here (503), not suspended. */
void gsd_jobwait_add(gsd_app *app, gsd_req *r, double secs);
/* Job id has ended: its terminal status is in the store, or its row is
 * gone (its assembly deleted). O(waiting). */
void gsd_jobwait_ended(gsd_app *app, const char *id);

#endif
