/*
 * jobs.h -- gap clouds: live jobs, work claiming, progress, resume.
 *
 * Owns: the in-memory state of queued and running cloud jobs. A job's gaps
 * live in data/jobs/<id>/gaps.npy (k x m, C order, checked finite at
 * submission); its options in the store (jobs.options_json); its results in
 * the store, written by the workers in one transaction per chunk together
 * with the job's counters, so after kill -9 the store says exactly which
 * gaps are done. On restart gsd_jobs_resume reloads every queued or running
 * job and only the missing gaps are solved.
 *
 * Workers claim chunks of a few gaps from the oldest job with work left
 * (gsd_jobs_work), check the result cache, warm-start from the same gap of
 * another job when asked, solve and store. A chunk yields to interactive
 * solves between gaps. Progress: done / failed / total, solves per second
 * since the job (re)started and the ETA.
 */
#ifndef GSD_JOBS_H
#define GSD_JOBS_H

#include "pool.h"
#include "spec.h"
#include "store.h"

typedef struct {
    int done, failed, total, inflight;
    double rate;   /* gaps per second since the job (re)started; -1: not started */
    double eta;    /* s, -1 unknown */
} gsd_job_progress;

gs_err gsd_jobs_new(gsd_app *app, gs_error *err);
void gsd_jobs_free(gsd_jobs *jobs);
/* Reload unfinished jobs from the store (at start, before workers run). */
gs_err gsd_jobs_resume(gsd_app *app, gs_error *err);
/* Register a new job whose row is already in the store and whose gaps file
 * is in place. Takes ownership of *spec. */
gs_err gsd_jobs_add(gsd_app *app, const gsd_job_row *row, int m, gsd_spec *spec, gs_error *err);
/* Claim and run one chunk on worker w; 0 if no cloud work was available. */
int gsd_jobs_work(gsd_app *app, gsd_worker *w);
/* Live progress; 0 if the job is not live (finished, cancelled or unknown). */
int gsd_jobs_progress(gsd_jobs *jobs, const char *id, gsd_job_progress *out);
/* Cancel a live job (store status "cancelled"); 0 if it was not live. Its
 * log line ("job J cancelled: D of T gaps solved, F not optimal", level 1)
 * comes once the chunks it had running have stored what they finished, so
 * it has the final counts. */
int gsd_jobs_cancel(gsd_app *app, const char *id);
/* Shutdown: every running cloud solve stops at its next iteration (not
 * stored); the jobs stay queued / running in the store and resume on the
 * next start. */
void gsd_jobs_cut_all(gsd_app *app);
/* Cancel every live job of an assembly and wait for their chunks to end. */
void gsd_jobs_cancel_assembly(gsd_app *app, const char *assembly_id);
/* Jobs queued or running. */
int gsd_jobs_active(gsd_jobs *jobs);
/* 1 if no chunk of the job is in flight (none can commit results until a
 * new claim): for an ended job, its stored results are final. */
int gsd_jobs_quiet(gsd_jobs *jobs, const char *id);
/* Path of a job's gaps file. */
void gsd_jobs_gaps_path(const gsd_app *app, const char *id, char *out, size_t cap);

#endif
