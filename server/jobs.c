/*
 * jobs.c -- cloud jobs: claiming, running chunks, progress, resume (see jobs.h).
 * A claimed chunk runs on the cloud runner (runner/runner.h): the job's gaps
 * file is the source, the store the sink (one transaction per chunk), the
 * result cache and the warm-start job the policy, cancellation and waiting
 * interactive solves the stop hook. Claims go to the oldest job with work
 * left; sibling clouds are paced within the factor cache (pace).
 */
#define _GNU_SOURCE
#include "jobs.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "assembly.h"
#include "exec.h"
#include "jobwait.h"
#include "json_parse.h"
#include "linalg.h"
#include "pool.h"
#include "runner.h"
#include "summary.h"

/* Gaps per claim. A claim commits in one store transaction; an interactive
 * solve waits for the row in flight only (the chunk yields, chunk_stop), so
 * the size bounds the results held in memory and, for a chained job, the
 * window its worker orders (runner/chain.h): 4 for plain jobs (results
 * reach the store and the progress counters early), GSD_CHAIN_CHUNK for
 * chained ones. */
#define GSD_CHUNK 4
#define GSD_CHAIN_CHUNK 32
#define GSD_CHUNK_MAX GSD_CHAIN_CHUNK

enum { ST_TODO = 0, ST_CLAIMED = 1, ST_DONE = 2 };

typedef struct gsd_job {
    char id[GSD_ID_LEN], asm_id[GSD_ID_LEN];
    int total, m;
    gsd_spec spec;
    gs_gap_source src;     /* data/jobs/<id>/gaps.npy, read row by row */
    unsigned char *state;
    int next;              /* claims scan from here */
    int done, failed, inflight;
    long long n_act_sum, n_act_rows; /* contact-set sizes of the results stored by this
                                        process, and how many (sibling pacing) */
    atomic_int cancelled;
    atomic_int cut;        /* running solves stop (cancel, failure, shutdown): the
                              solver's cancel flag; a cut-short gap is not stored */
    int finished, started, refs;
    int notify_quiet;      /* cancelled or failed with chunks running: held waits
                              (jobwait.h) are answered when the last one settles,
                              so that they see the final done / failed counts */
    int log_cancel;        /* cancelled with chunks running: its log line waits for
                              the last one to settle, for the same reason */
    double t_start;
    int done_start;
    double *load;          /* built on the first chunk, with the model */
    unsigned char *eq;
    int prepared;
    gs_chain **chain;      /* spec.chain: each worker's chain state for this job (worker
                              index; only that worker touches its entry) */
    int n_chain;
    gsd_asm *pin;          /* held from the first claim until the job is reaped, so that
                              --max-loaded-mb never unloads a running cloud's assembly
                              between its chunks (a chunk holds it only while it runs) */
    gsd_registry *pin_reg;
    struct gsd_job *next_job;
} gsd_job;

struct gsd_jobs {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    gsd_job *head;
};

void gsd_jobs_gaps_path(const gsd_app *app, const char *id, char *out, size_t cap)
{
    char dir[PATH_MAX];
    gsd_path_job(app, id, dir, sizeof dir);
    snprintf(out, cap, "%.*s/gaps.npy", (int)(cap > 10 ? cap - 10 : 0), dir);
}

gs_err gsd_jobs_new(gsd_app *app, gs_error *err)
{
    gsd_jobs *j = calloc(1, sizeof *j);
    if (!j)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    app->jobs = j;
    return GS_OK;
}

static void job_free(gsd_job *job)
{
    if (job->pin) /* lock order: jobs, then the registry (reap holds jobs->mu) */
        gsd_registry_release(job->pin_reg, job->pin);
    for (int i = 0; i < job->n_chain; i++)
        gs_chain_free(job->chain[i]);
    free(job->chain);
    gs_gap_source_close(&job->src);
    gsd_spec_free(&job->spec);
    free(job->state);
    free(job->load);
    free(job->eq);
    free(job);
}

void gsd_jobs_free(gsd_jobs *jobs)
{
    if (!jobs)
        return;
    gsd_job *job = jobs->head;
    while (job) {
        gsd_job *next = job->next_job;
        job_free(job);
        job = next;
    }
    pthread_mutex_destroy(&jobs->mu);
    pthread_cond_destroy(&jobs->cv);
    free(jobs);
}

/* ---- registration ---------------------------------------------------------- */

static gs_err open_gaps(const gsd_app *app, gsd_job *job, gs_error *err)
{
    char path[PATH_MAX];
    gsd_jobs_gaps_path(app, job->id, path, sizeof path);
    /* a 1-D body of m values (one gap) is stored as it came */
    gs_err rc = gs_gap_source_npy(path, &job->src, err);
    if (rc == GS_OK && (job->src.k != job->total || job->src.m != job->m))
        rc = gs_errorf(err, GS_ERR_FORMAT, "gaps", "%s: not a %d x %d C-order array", path,
                       job->total, job->m);
    return rc;
}

static void link_job(gsd_jobs *jobs, gsd_job *job)
{
    pthread_mutex_lock(&jobs->mu);
    gsd_job **pp = &jobs->head;
    while (*pp)
        pp = &(*pp)->next_job;
    *pp = job;
    pthread_mutex_unlock(&jobs->mu);
}

static gsd_job *job_new(const gsd_job_row *row, int m, gs_error *err)
{
    gsd_job *job = calloc(1, sizeof *job);
    if (job)
        job->state = calloc((size_t)(row->total > 0 ? row->total : 1), 1);
    if (!job || !job->state) {
        free(job);
        gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        return NULL;
    }
    snprintf(job->id, sizeof job->id, "%.18s", row->id);
    snprintf(job->asm_id, sizeof job->asm_id, "%.18s", row->assembly_id);
    job->total = row->total;
    job->m = m;
    return job;
}

gs_err gsd_jobs_add(gsd_app *app, const gsd_job_row *row, int m, gsd_spec *spec, gs_error *err)
{
    gsd_job *job = job_new(row, m, err);
    if (!job) {
        gsd_spec_free(spec);
        return GS_ERR_NOMEM;
    }
    job->spec = *spec;
    memset(spec, 0, sizeof *spec);
    gs_err rc = open_gaps(app, job, err);
    if (rc) {
        job_free(job);
        return rc;
    }
    link_job(app->jobs, job);
    gsd_pool_notify(app->pool);
    return GS_OK;
}

static void summary_ahead(gsd_app *app, const char *id);

/* Why a job failed, for its `error` (docs/api.md): the error's code, a new
 * error id and the message without paths ("io_error (error 1a2b3c4d):
 * ..."); the whole message, with its field, goes to the log under that id
 * ("job J <what> (error ID): field: message"). */
static void fail_reason(gsd_app *app, const char *id, const char *what, const gs_error *e,
                        char *reason, size_t cap)
{
    char eid[16];
    gsd_error_id(eid);
    gsd_log(app, 0, "job %s %s (error %s): %s%s%s", id, what, eid, e->field,
            e->field[0] ? ": " : "", e->msg);
    gs_error pub = *e;
    gsd_api_scrub(&pub, app->o.data_dir);
    snprintf(reason, cap, "%s (error %s): %.180s", gs_err_name(e->code), eid, pub.msg);
}

static gs_err resume_one(gsd_app *app, const gsd_job_row *row, gs_error *err)
{
    gsd_assembly_row ar;
    int found = 0;
    gs_err rc = gsd_store_assembly_get(app->st, row->assembly_id, &ar, &found, err);
    if (rc)
        return rc;
    if (!found)
        return gs_errorf(err, GS_ERR_INVALID, "assembly_id", "assembly %s is gone",
                         row->assembly_id);
    gsd_job *job = job_new(row, ar.m, err);
    if (!job)
        return GS_ERR_NOMEM;
    const char *opts = row->options_json ? row->options_json : "{}";
    cJSON *obj = gs_json_parse(opts, strlen(opts), NULL, NULL);
    rc = obj ? gsd_spec_parse(obj, ar.n_fast, ar.m, 1, &job->spec, err)
             : gs_errorf(err, GS_ERR_FORMAT, "options_json", "stored options are not JSON");
    cJSON_Delete(obj);
    if (!rc)
        rc = open_gaps(app, job, err);
    if (!rc)
        rc = gsd_store_job_done_indices(app->st, job->id, job->state, job->total, err);
    /* the stored counters follow the stored results: an assembly delete
     * interrupted between its result batches leaves done above them, and
     * the gaps solved again would be counted twice */
    int recounted = 0, failed = row->failed;
    if (!rc)
        rc = gsd_store_job_recount(app->st, job->id, &recounted, err);
    if (!rc && recounted) {
        gsd_job_row now;
        int have = 0;
        rc = gsd_store_job_get(app->st, job->id, &now, &have, err);
        if (!rc && have) {
            gsd_log(app, 1, "job %s: counters reset from its %d stored results (done was %d)",
                    job->id, now.done, row->done);
            failed = now.failed;
            gsd_job_row_free(&now);
        }
    }
    if (rc) {
        job_free(job);
        return rc;
    }
    for (int i = 0; i < job->total; i++)
        if (job->state[i]) {
            job->state[i] = ST_DONE;
            job->done++;
        }
    job->failed = failed;
    if (job->done >= job->total) {
        /* every gap is stored but the job's end was not (a crash between the
         * last chunk's commit and the status write): it ends now */
        const int n_done = job->done;
        char id[GSD_ID_LEN];
        memcpy(id, job->id, sizeof id);
        job_free(job);
        int ahead = gsd_summary_reserve(app->sums, id, GSD_SUMMARY_THRESHOLD,
                                        GSD_SUMMARY_BINS);
        rc = gsd_store_job_set_status(app->st, id, "done", gsd_unix_now(), err);
        if (rc) {
            if (ahead)
                gsd_summary_unreserve(app->sums, id, GSD_SUMMARY_THRESHOLD,
                                      GSD_SUMMARY_BINS);
            return rc;
        }
        gsd_jobwait_ended(app, id);
        if (ahead)
            summary_ahead(app, id);
        gsd_log(app, 1, "job %s resumed: %d of %d gaps done; it is done", id, n_done,
                row->total);
        return GS_OK;
    }
    link_job(app->jobs, job);
    gsd_log(app, 1, "job %s resumed: %d of %d gaps done", job->id, job->done, job->total);
    return GS_OK;
}

gs_err gsd_jobs_resume(gsd_app *app, gs_error *err)
{
    static const char *const live[] = {"queued", "running"};
    for (int s = 0; s < 2; s++) {
        gsd_job_row *rows = NULL;
        int count = 0;
        gs_err rc = gsd_store_job_list(app->st, NULL, live[s], &rows, &count, err);
        if (rc)
            return rc;
        for (int i = 0; i < count && !rc; i++) {
            gs_error e = {0};
            if (resume_one(app, &rows[i], &e) != GS_OK) {
                /* it ends failed, saying why, as a job that fails while it
                 * runs; a job the store cannot end would stay "running"
                 * with nobody to run it: the start fails instead */
                char reason[256];
                if (!e.code)
                    gs_errorf(&e, GS_ERR_IO, "", "unknown error");
                fail_reason(app, rows[i].id, "cannot resume; marked failed", &e, reason,
                            sizeof reason);
                gs_error se;
                if (gsd_store_job_fail(app->st, rows[i].id, "failed", gsd_unix_now(), reason,
                                       &se) != GS_OK)
                    rc = gs_errorf(err, se.code, se.field, "job %s cannot resume, and cannot "
                                   "be marked failed: %.200s", rows[i].id, se.msg);
                else
                    gsd_jobwait_ended(app, rows[i].id);
            }
        }
        for (int i = 0; i < count; i++)
            gsd_job_row_free(&rows[i]);
        free(rows);
        if (rc)
            return rc;
    }
    return GS_OK;
}

/* ---- claiming ----------------------------------------------------------------- */

/* Unlink jobs nobody works on any more. Called with the lock held. */
static void reap(gsd_jobs *jobs)
{
    gsd_job **pp = &jobs->head;
    while (*pp) {
        gsd_job *job = *pp;
        if ((job->finished || job->cancelled) && job->inflight == 0 && job->refs == 0) {
            *pp = job->next_job;
            job_free(job);
        } else {
            pp = &job->next_job;
        }
    }
}

/* ---- sibling pacing ----------------------------------------------------------
 * Sibling clouds (the same assembly, warm-started from the same job: the
 * moves of a fastener-pattern search) start gap i from the same stored
 * contact set, so the factor the first of them builds for gap i is what the
 * others need; the factor cache (solvers/fcache.h) lends it only while it
 * holds it. Claimed first-in first-out, gap i of the next sibling comes a
 * whole cloud later: past the cache's budget, least-recently-used eviction
 * has dropped every factor by then. So a job may run at most `lag` gaps
 * ahead of its least advanced sibling, lag = the factors that fit half the
 * budget at the siblings' mean contact-set size k (k^2 / 2 doubles each);
 * a cloud whose factors fit is claimed as before. O(jobs) per claim. */
static int siblings(const gsd_job *a, const gsd_job *b)
{
    return a != b && a->spec.warm_job[0] && !strcmp(a->spec.warm_job, b->spec.warm_job) &&
           !strcmp(a->asm_id, b->asm_id) && a->spec.chain == GS_CHAIN_OFF &&
           b->spec.chain == GS_CHAIN_OFF;
}

/* The job to claim from instead of job (job itself when none). Lock held. */
static gsd_job *pace(gsd_jobs *jobs, gsd_job *job, size_t fcache_budget)
{
    if (!job->spec.warm_job[0] || job->spec.chain != GS_CHAIN_OFF || !fcache_budget)
        return job;
    gsd_job *slow = job;
    long long n_act = job->n_act_sum, rows = job->n_act_rows;
    for (gsd_job *s = jobs->head; s; s = s->next_job) {
        if (!siblings(s, job) || s->cancelled || s->finished)
            continue;
        n_act += s->n_act_sum;
        rows += s->n_act_rows;
        if (s->next < slow->next && s->next < s->total)
            slow = s;
    }
    if (slow == job || rows == 0 || n_act == 0)
        return job;
    const double k = (double)n_act / (double)rows;
    const double lag = 0.5 * (double)fcache_budget / (4.0 * k * k);
    return job->next - slow->next > lag ? slow : job;
}

/* Claim up to a chunk of job's unclaimed gaps into idx. Lock held. */
static int take(gsd_job *job, int *idx)
{
    int cnt = 0, i = job->next;
    const int want = job->spec.chain != GS_CHAIN_OFF ? GSD_CHAIN_CHUNK : GSD_CHUNK;
    for (; i < job->total && cnt < want; i++)
        if (job->state[i] == ST_TODO) {
            job->state[i] = ST_CLAIMED;
            idx[cnt++] = i;
        }
    job->next = i;
    return cnt;
}

static int claim(gsd_jobs *jobs, gsd_registry *reg, size_t fcache_budget, gsd_job **out,
                 int *idx, int *first)
{
    pthread_mutex_lock(&jobs->mu);
    reap(jobs);
    for (gsd_job *head = jobs->head; head; head = head->next_job) {
        if (head->cancelled || head->finished)
            continue;
        gsd_job *job = pace(jobs, head, fcache_budget);
        int cnt = take(job, idx);
        if (!cnt && job != head) /* the paced sibling had nothing left to claim */
            cnt = take(job = head, idx);
        if (!cnt)
            continue;
        job->inflight += cnt;
        job->refs++;
        *first = !job->started;
        if (!job->started) {
            job->started = 1;
            job->t_start = gs_now();
            job->done_start = job->done;
            /* lock order: jobs, then the registry (NULL when out of memory:
             * its chunks still hold the assembly while they run) */
            if ((job->pin = gsd_registry_acquire(reg, job->asm_id)))
                job->pin_reg = reg;
        }
        *out = job;
        pthread_mutex_unlock(&jobs->mu);
        return cnt;
    }
    pthread_mutex_unlock(&jobs->mu);
    return 0;
}

/* The log line of a cancelled job, with its final counts (the gaps its
 * chunks finished before the cancel stopped them are stored and counted). */
static void log_cancelled(gsd_app *app, const char *id, int done, int failed, int total)
{
    gsd_log(app, 1, "job %s cancelled: %d of %d gaps solved, %d not optimal", id, done, total,
            failed);
}

/* Return claimed gaps to the job (not run), record the stored ones. The
 * caller still holds its reference (released at the end of run_chunk). */
static int settle(gsd_app *app, gsd_job *job, const int *idx, int cnt, int n_stored)
{
    gsd_jobs *jobs = app->jobs;
    pthread_mutex_lock(&jobs->mu);
    for (int k = 0; k < cnt; k++) {
        if (k < n_stored) {
            job->state[idx[k]] = ST_DONE;
        } else {
            job->state[idx[k]] = ST_TODO;
            if (idx[k] < job->next)
                job->next = idx[k];
        }
    }
    job->done += n_stored;
    job->inflight -= cnt;
    int now_finished = !job->finished && !job->cancelled && job->done == job->total;
    if (now_finished)
        job->finished = 1;
    const int now_quiet = job->notify_quiet && job->inflight == 0;
    if (now_quiet)
        job->notify_quiet = 0;
    const int log_cancel = job->log_cancel && job->inflight == 0;
    if (log_cancel)
        job->log_cancel = 0;
    const int done = job->done, failed = job->failed;
    pthread_cond_broadcast(&jobs->cv);
    pthread_mutex_unlock(&jobs->mu);
    if (log_cancel)
        log_cancelled(app, job->id, done, failed, job->total);
    if (now_quiet) /* its rows are committed: the document has the final counts */
        gsd_jobwait_ended(app, job->id);
    return now_finished;
}

/* Job id ended (cancelled or failed, its status stored): answer the
 * requests held for it (jobwait.h) now if no chunk of it runs, else when the
 * last one settles (settle). Looked up again by id: once cancelled and
 * quiet, another thread may have reaped it since the caller's lock. */
static void notify_ended(gsd_app *app, const char *id)
{
    int now = 1;
    pthread_mutex_lock(&app->jobs->mu);
    for (gsd_job *job = app->jobs->head; job; job = job->next_job)
        if (!strcmp(job->id, id) && job->inflight > 0) {
            job->notify_quiet = 1;
            now = 0;
        }
    pthread_mutex_unlock(&app->jobs->mu);
    if (now)
        gsd_jobwait_ended(app, id);
}

/* The job ends failed; its reason, in the API without paths (the log has
 * the whole message under the same error id). */
static void fail_job(gsd_app *app, gsd_worker *w, gsd_job *job, const gs_error *e)
{
    char reason[256];
    fail_reason(app, job->id, "failed", e, reason, sizeof reason);
    pthread_mutex_lock(&app->jobs->mu);
    /* every gap already stored (another worker's settle ended it "done"):
     * the job is done, with no error (the store keeps the first end anyway) */
    const int ended = job->finished;
    job->cancelled = 1; /* stops further claims */
    atomic_store(&job->cut, 1);
    pthread_mutex_unlock(&app->jobs->mu);
    if (ended)
        return;
    gsd_store_job_fail(w->st, job->id, "failed", gsd_unix_now(), reason, NULL);
    notify_ended(app, job->id); /* this chunk's settle, at the latest */
}

/* ---- the summary of a job that ended, computed ahead ------------------------------ */

/* The summary at the API's defaults (what the web page, the CLI and the
 * Python client ask first) computed on a reader as soon as the job is done,
 * so it is answered from the cache; reserved before the status says done,
 * so a request that comes first waits for it or takes it over
 * (gsd_summary_reserve), never repeats it. */
typedef struct {
    gsd_task t;
    gsd_app *app;
    char job[GSD_ID_LEN];
} ahead_task;

static void ahead_run(gsd_task *t, gsd_worker *w)
{
    ahead_task *at = (ahead_task *)t;
    gsd_app *app = at->app;
    gsd_job_row row;
    gsd_assembly_row arow;
    int found = 0, afound = 0;
    gs_error e = {0};
    if (gsd_store_job_get(w->st, at->job, &row, &found, &e) == GS_OK && found) {
        if (gsd_store_assembly_get(w->st, row.assembly_id, &arow, &afound, &e) == GS_OK &&
            afound) {
            char gpath[PATH_MAX];
            gsd_jobs_gaps_path(app, at->job, gpath, sizeof gpath);
            gsd_summary_opts o = {.threshold = GSD_SUMMARY_THRESHOLD, .bins = GSD_SUMMARY_BINS,
                                  .gaps_path = gpath, .cache = app->sums,
                                  .cancel = &app->stopping, .ahead = 1};
            gs_buf b = {0};
            if (gsd_summary(w->st, &row, arow.m, &o, &b, &e) && !atomic_load(&app->stopping))
                gsd_log(app, 1, "job %s: summary not computed ahead: %s", at->job, e.msg);
            gsd_metrics_summary(&app->metrics, 0, o.computed);
            gs_buf_free(&b);
        }
        gsd_job_row_free(&row);
    }
    /* not started (the job or its assembly gone): the first request computes it */
    gsd_summary_unreserve(app->sums, at->job, GSD_SUMMARY_THRESHOLD, GSD_SUMMARY_BINS);
    free(at);
}

static void ahead_cancel(gsd_task *t)
{
    ahead_task *at = (ahead_task *)t;
    gsd_summary_unreserve(at->app->sums, at->job, GSD_SUMMARY_THRESHOLD, GSD_SUMMARY_BINS);
    free(at);
}

/* Queue the reserved summary of job id on a reader (dropped when it cannot). */
static void summary_ahead(gsd_app *app, const char *id)
{
    ahead_task *at = calloc(1, sizeof *at);
    if (at) {
        at->app = app;
        snprintf(at->job, sizeof at->job, "%s", id);
        at->t.run = ahead_run;
        at->t.cancel = ahead_cancel;
    }
    if (!at || !app->readers || gsd_pool_submit(app->readers, &at->t, GSD_PRIO_BACKGROUND) != 0) {
        gsd_summary_unreserve(app->sums, id, GSD_SUMMARY_THRESHOLD, GSD_SUMMARY_BINS);
        free(at);
    }
}

/* ---- running a chunk on the runner ------------------------------------------------ */

/* One chunk of one job on worker w: the runner's sink, policy and stop hook. */
typedef struct {
    gsd_app *app;
    gsd_worker *w;
    gsd_job *job;
    gsd_asm *a;
    gsd_result_row rows[GSD_CHUNK_MAX]; /* the chunk's results, in run order */
    int n;
    char key[40];                   /* cache key of the row being run */
    gsd_result_row warm;            /* warm-start result of the row being run */
    int *warm_act;
    int cut;                        /* a solve was cut short: the chunk ends, not stored */
} chunk_ctx;

static gs_err prepare(gsd_job *job, gsd_asm *a, gsd_jobs *jobs, int workers, gs_error *err)
{
    gs_err rc = GS_OK;
    pthread_mutex_lock(&jobs->mu);
    if (!job->prepared) {
        job->load = malloc(sizeof(double) * (size_t)job->m);
        job->eq = malloc((size_t)job->m);
        if (job->spec.chain != GS_CHAIN_OFF) {
            job->chain = calloc((size_t)workers, sizeof *job->chain);
            job->n_chain = job->chain ? workers : 0;
        }
        if (!job->load || !job->eq || (job->spec.chain != GS_CHAIN_OFF && !job->chain))
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        else
            rc = gsd_spec_problem(&job->spec, gsd_asm_mdl(a), job->load, job->eq, err);
        job->prepared = rc == GS_OK;
    }
    pthread_mutex_unlock(&jobs->mu);
    return rc;
}

/* The ids and keys of a result of this chunk. */
static void label(chunk_ctx *c, gsd_result_row *row, int i)
{
    snprintf(row->assembly_id, sizeof row->assembly_id, "%s", c->job->asm_id);
    snprintf(row->job_id, sizeof row->job_id, "%s", c->job->id);
    snprintf(row->cache_key, sizeof row->cache_key, "%s", c->key);
    row->job_index = i;
    row->created_at = gsd_unix_now();
}

/* Policy: a cached result ends the row (unless the cloud asked "cache":
 * false); else gap i of the warm-start job, if any, is the warm start. */
static gs_err chunk_start(void *ctx, int slot, int i, const double *g, gs_warm *warm, int *have,
                          gs_error *err)
{
    chunk_ctx *c = ctx;
    gsd_job *job = c->job;
    gsd_exec_in in = {.g = g, .load = job->load, .eq = job->eq, .opts = &job->spec.opts};
    gsd_exec_key(c->a, &in, c->key);
    gsd_result_row hit = {0};
    int found = 0;
    gs_err rc = job->spec.no_cache ? GS_OK
                                   : gsd_store_result_find_key(c->w->st, job->asm_id, c->key,
                                                               &hit, &found, err);
    if (rc)
        return rc;
    if (found) {
        atomic_fetch_add(&c->app->metrics.cache_hits, 1);
        rc = gsd_exec_copy(&hit, &c->rows[c->n], err);
        gsd_result_row_free(&hit);
        if (rc)
            return rc;
        label(c, &c->rows[c->n++], i);
        *have = 1;
        return GS_OK;
    }
    atomic_fetch_add(&c->app->metrics.cache_misses, 1);
    if (!job->spec.warm_job[0])
        return GS_OK;
    /* gap i of the warm-start job: its lam alone (chunk_done frees it) */
    if (!(c->warm.lam = malloc(sizeof(double) * (size_t)job->m)))
        return gs_errorf(err, GS_ERR_NOMEM, "warm_start", "out of memory");
    int have_warm = 0;
    rc = gsd_store_job_lam(c->w->st, job->spec.warm_job, i, job->m, c->warm.lam, &have_warm, err);
    c->warm.m = job->m;
    if (!rc && have_warm)
        rc = gsd_exec_warm(&c->warm, job->m, warm, &c->warm_act, err);
    return rc;
}

static void chunk_done(void *ctx, int slot, int i)
{
    chunk_ctx *c = ctx;
    gsd_result_row_free(&c->warm);
    free(c->warm_act);
    c->warm_act = NULL;
}

static gs_err chunk_put(void *ctx, int slot, const gs_run_result *r, gs_error *err)
{
    chunk_ctx *c = ctx;
    if (r->info->status == GS_STATUS_CANCELLED) { /* job cancelled or daemon stopping */
        gsd_metrics_solve(&c->app->metrics, r->info);
        c->cut = 1;
        return gs_errorf(err, GS_ERR_INVALID, "", "cut short"); /* ends the chunk */
    }
    gsd_result_row *row = &c->rows[c->n];
    size_t bytes = sizeof(double) * (size_t)c->job->m;
    row->m = c->job->m;
    row->w = malloc(bytes);
    row->lam = malloc(bytes);
    if (!row->w || !row->lam) {
        gsd_result_row_free(row);
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    memcpy(row->w, r->w, bytes);
    memcpy(row->lam, r->lam, bytes);
    gsd_exec_row(c->w, r->info, c->job->spec.opts.tol, row);
    gsd_new_id('r', row->id);
    label(c, row, r->row);
    c->n++;
    return GS_OK;
}

/* Sink commit: the chunk's results and the job's counters in one transaction. */
static gs_err chunk_commit(void *ctx, int slot, const int *rows, int n, gs_error *err)
{
    chunk_ctx *c = ctx;
    int n_failed = 0;
    double t_sum = 0;
    long long it_sum = 0;
    for (int k = 0; k < n; k++) {
        n_failed += c->rows[k].status != GS_STATUS_OPTIMAL;
        t_sum += c->rows[k].time;
        it_sum += c->rows[k].iterations;
    }
    gs_err rc = gsd_store_results_put(c->w->st, c->rows, n, c->job->id, n, n_failed, t_sum,
                                      it_sum, err);
    if (!rc) {
        long long n_act = 0;
        for (int k = 0; k < n; k++)
            n_act += c->rows[k].n_act;
        pthread_mutex_lock(&c->app->jobs->mu);
        c->job->failed += n_failed;
        c->job->n_act_sum += n_act;
        c->job->n_act_rows += n;
        pthread_mutex_unlock(&c->app->jobs->mu);
    }
    return rc;
}

/* Stop before a row: the job was cancelled, or (after the first row) an
 * interactive solve waits. The rest of the chunk goes back to the job. */
static int chunk_stop(void *ctx, int ran)
{
    chunk_ctx *c = ctx;
    return c->job->cancelled || atomic_load(&c->job->cut) ||
           (ran > 0 && gsd_pool_urgent(c->app->pool));
}

static void run_chunk(gsd_app *app, gsd_worker *w, gsd_job *job, int *idx, int cnt)
{
    chunk_ctx c = {.app = app, .w = w, .job = job};
    int n = 0;
    gs_error e = {0};
    gs_err rc = GS_OK;
    gs_run_slot slot = {0};
    c.a = gsd_registry_acquire(app->reg, job->asm_id);
    if (!c.a)
        rc = gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    if (!rc)
        rc = gsd_asm_ensure(app, c.a, w->st, &e);
    if (!rc)
        rc = gsd_asm_need(app, c.a, &job->spec.opts, &e);
    if (!rc)
        rc = prepare(job, c.a, app->jobs, app->o.workers, &e);
    gs_solver *sv = rc ? NULL : gsd_asm_solver(c.a, w->idx, &e);
    if (!rc && !sv)
        rc = e.code ? e.code : GS_ERR_NOMEM;
    if (!rc)
        rc = gs_run_slot_init(&slot, gsd_asm_pc(c.a), sv, &e);
    /* the chain state outlives the chunk: the next chunk of this job on this
     * worker starts from where this one ended */
    gs_chain **chain = job->chain && w->idx < job->n_chain ? &job->chain[w->idx] : NULL;
    if (!rc && chain)
        slot.chain = *chain;
    if (!rc) {
        gs_run run = {.pc = gsd_asm_pc(c.a), .opts = job->spec.opts, .n_patterns = 1, .loads = job->load,
                      .eq = job->eq, .src = job->src, .row_timeout = job->spec.timeout_s,
                      .chain = chain ? job->spec.chain : GS_CHAIN_OFF,
                      .sink = {.put = chunk_put, .commit = chunk_commit, .ctx = &c},
                      .policy = {.start = chunk_start, .done = chunk_done, .ctx = &c},
                      .ctl = {.stop = chunk_stop, .ctx = &c}};
        run.opts.cancel = &job->cut;
        rc = gs_run_chunk(&run, &slot, w->idx, idx, cnt, &n, &e);
        if (rc && c.cut)
            rc = GS_OK; /* the rows before the cut are committed; the rest go back */
    }
    if (chain) {
        *chain = slot.chain; /* made by the chunk if it was the first */
        slot.chain = NULL;
    }
    gs_run_slot_free(&slot);
    for (int k = 0; k < GSD_CHUNK_MAX; k++)
        gsd_result_row_free(&c.rows[k]);
    gsd_registry_release(app->reg, c.a);
    if (rc)
        fail_job(app, w, job, &e);
    int finished = settle(app, job, idx, cnt, n);
    if (n < cnt && !rc)
        gsd_pool_notify(app->pool); /* gaps handed back: an idle worker may take them */
    if (finished) {
        int ahead = gsd_summary_reserve(app->sums, job->id, GSD_SUMMARY_THRESHOLD,
                                        GSD_SUMMARY_BINS);
        gsd_store_job_set_status(w->st, job->id, "done", gsd_unix_now(), NULL);
        gsd_jobwait_ended(app, job->id);
        if (ahead)
            summary_ahead(app, job->id);
        gsd_log(app, 1, "job %s done: %d gaps, %d not optimal", job->id, job->total, job->failed);
    }
    /* last use of job: from here another worker may reap and free it */
    pthread_mutex_lock(&app->jobs->mu);
    job->refs--;
    pthread_mutex_unlock(&app->jobs->mu);
}

int gsd_jobs_work(gsd_app *app, gsd_worker *w)
{
    int idx[GSD_CHUNK_MAX], first = 0;
    gsd_job *job = NULL;
    int cnt = claim(app->jobs, app->reg, (size_t)app->o.factor_cache_mb << 20, &job, idx, &first);
    if (!cnt)
        return 0;
    if (first)
        gsd_store_job_set_status(w->st, job->id, "running", gsd_unix_now(), NULL);
    run_chunk(app, w, job, idx, cnt);
    return 1;
}

/* ---- queries and cancellation ----------------------------------------------------- */

int gsd_jobs_progress(gsd_jobs *jobs, const char *id, gsd_job_progress *out)
{
    int live = 0;
    pthread_mutex_lock(&jobs->mu);
    for (gsd_job *job = jobs->head; job; job = job->next_job) {
        if (strcmp(job->id, id) || job->cancelled || job->finished)
            continue;
        live = 1;
        out->done = job->done;
        out->failed = job->failed;
        out->total = job->total;
        out->inflight = job->inflight;
        double dt = job->started ? gs_now() - job->t_start : 0;
        out->rate = !job->started ? -1 : dt > 0 ? (double)(job->done - job->done_start) / dt : 0;
        out->eta = out->rate > 0 ? (double)(job->total - job->done) / out->rate : -1;
        break;
    }
    pthread_mutex_unlock(&jobs->mu);
    return live;
}

int gsd_jobs_quiet(gsd_jobs *jobs, const char *id)
{
    int quiet = 1;
    pthread_mutex_lock(&jobs->mu);
    for (gsd_job *job = jobs->head; job; job = job->next_job)
        if (!strcmp(job->id, id) && job->inflight > 0)
            quiet = 0;
    pthread_mutex_unlock(&jobs->mu);
    return quiet;
}

int gsd_jobs_cancel(gsd_app *app, const char *id)
{
    int hit = 0, quiet = 0, done = 0, failed = 0, total = 0;
    pthread_mutex_lock(&app->jobs->mu);
    for (gsd_job *job = app->jobs->head; job; job = job->next_job)
        if (!strcmp(job->id, id) && !job->cancelled && !job->finished) {
            job->cancelled = 1;
            atomic_store(&job->cut, 1); /* its running solves stop at their next iteration */
            hit = 1;
            /* no chunk running: no claim follows a cancel, the counts are final;
             * else the last chunk to settle logs it */
            quiet = job->inflight == 0;
            job->log_cancel = !quiet;
            done = job->done;
            failed = job->failed;
            total = job->total;
        }
    pthread_mutex_unlock(&app->jobs->mu);
    if (hit) {
        gsd_store_job_set_status(app->st, id, "cancelled", gsd_unix_now(), NULL);
        if (quiet)
            log_cancelled(app, id, done, failed, total);
        notify_ended(app, id);
    }
    return hit;
}

void gsd_jobs_cut_all(gsd_app *app)
{
    pthread_mutex_lock(&app->jobs->mu);
    for (gsd_job *job = app->jobs->head; job; job = job->next_job)
        atomic_store(&job->cut, 1);
    pthread_mutex_unlock(&app->jobs->mu);
}

void gsd_jobs_cancel_assembly(gsd_app *app, const char *assembly_id)
{
    gsd_jobs *jobs = app->jobs;
    pthread_mutex_lock(&jobs->mu);
    for (gsd_job *job = jobs->head; job; job = job->next_job)
        if (!strcmp(job->asm_id, assembly_id)) {
            job->cancelled = 1;
            atomic_store(&job->cut, 1);
        }
    for (;;) {
        int busy = 0;
        for (gsd_job *job = jobs->head; job; job = job->next_job)
            busy |= !strcmp(job->asm_id, assembly_id) && job->inflight > 0;
        if (!busy)
            break;
        pthread_cond_wait(&jobs->cv, &jobs->mu);
    }
    reap(jobs);
    pthread_mutex_unlock(&jobs->mu);
}

int gsd_jobs_active(gsd_jobs *jobs)
{
    int n = 0;
    pthread_mutex_lock(&jobs->mu);
    for (gsd_job *job = jobs->head; job; job = job->next_job)
        n += !job->cancelled && !job->finished;
    pthread_mutex_unlock(&jobs->mu);
    return n;
}
