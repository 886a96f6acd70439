/*
 * gapsimd_main.c -- the gapsim daemon: options, start-up, signals, shutdown.
 *
 * Start-up order: the store's schema version probed (a store of a newer
 * gapsimd is refused before anything in the data directory changes), data
 * directory (created, locked; staging cleared), store (schema migrated, one
 * log line), registry, jobs, worker pool, interrupted precomputations and
 * cloud jobs re-queued, HTTP last. Shutdown on SIGINT / SIGTERM / SIGHUP (a
 * closed terminal or ssh session stops it cleanly too, unless SIGHUP was
 * ignored when it started: nohup): refuse new requests, answer queued
 * interactive work 503, cancel running solves (a chunk stores the gaps it
 * finished; unfinished jobs stay "running" in the store and resume at the
 * next start), give what is still busy (a precomputation inside BLAS, a
 * transfer in flight) GSD_STOP_GRACE_S, stop HTTP.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "assembly.h"
#include "guard.h"
#include "integrity.h"
#include "http.h"
#include "ids.h"
#include "jobs.h"
#include "jobwait.h"
#include "linalg.h"
#include "memlimit.h"
#include "opts.h"
#include "pool.h"
#include "registry.h"
#include "store.h"
#include "summary.h"
#include "upkeep.h"

static int prepare_dirs(gsd_app *app)
{
    static const char *const sub[] = {"", "/assemblies", "/jobs", "/staging"};
    char path[PATH_MAX + 16];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s%s", app->o.data_dir, sub[i]);
        if (gsd_mkdirs(path) != 0) {
            fprintf(stderr, "gapsimd: cannot create %s\n", path);
            return -1;
        }
        if (i == 0) { /* before anything in it is touched: one daemon per data directory */
            gs_error e = {0};
            if (gsd_integrity_lock(app, &e) != GS_OK) {
                fprintf(stderr, "gapsimd: %s\n", e.msg);
                return -1;
            }
        }
    }
    return 0;
}

/* Uploads interrupted by a stop are incomplete: drop them. Once the store
 * is accepted, so that a refused start leaves them for the start that
 * goes on to decide. */
static gs_err empty_staging(gsd_app *app, gs_error *err)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/staging", app->o.data_dir);
    gsd_rmtree(path);
    return gsd_mkdirs(path) == 0 ? GS_OK
                                 : gs_errorf(err, GS_ERR_IO, "data-dir", "cannot create %s", path);
}

/* Let the process hold `want` descriptors (the soft RLIMIT_NOFILE, up to
 * the hard one): Debian's default soft limit of 1024 caps the connections. */
static void raise_fd_limit(int want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= (rlim_t)want)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)want ? (rlim_t)want
                                                                              : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* SIGTERM exits within this many seconds: what has not stopped by then (a
 * precomputation inside one BLAS call) is abandoned, as a kill -9 would:
 * the store's transactions and the atomic file writes leave nothing half
 * done, and the assembly, still "precomputing", is precomputed again at the
 * next start. */
#define GSD_STOP_GRACE_S 1.5

/* The registry unloaded an idle assembly for --max-loaded-mb. */
static void log_unload(void *ctx, const char *id, size_t bytes, size_t left, size_t budget)
{
    gsd_log((gsd_app *)ctx, 1, "assembly %s: unloaded (%.1f MiB; the loaded assemblies held more "
            "than --max-loaded-mb %zu, %.1f MiB now); loaded again from its saved factors "
            "when next used", id, (double)bytes / 1048576.0, budget >> 20,
            (double)left / 1048576.0);
}

/* The log of a start that migrated the store: which schema it found, which
 * it has now, and the migrations applied (an upgrade is one-way: an older
 * gapsimd refuses the store from now on). */
static void log_migration(gsd_app *app, int found)
{
    const int now = gsd_store_schema_version(app->st);
    if (found == now)
        return;
    if (found == 0) {
        gsd_log(app, 1, "store: schema 0 -> %d (a new store)", now);
        return;
    }
    char names[512] = "";
    size_t len = 0;
    for (int v = found + 1; v <= now && v <= gsd_migrations_count && len < sizeof names; v++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                v > found + 1 ? ", " : "", gsd_migrations[v - 1].name);
    gsd_log(app, 1, "store: schema %d -> %d (migrations %s); gapsimd builds older than this "
            "one refuse the store from now on", found, now, names);
}

/* The signals that stop the daemon: SIGINT, SIGTERM, and SIGHUP (the hang-up
 * of the terminal or ssh session it was started from: a clean stop, not the
 * default's sudden death, which cost the next start a quick_check), unless
 * SIGHUP was ignored when the daemon started (nohup asked for it to survive
 * the hang-up; on Linux a blocked signal is queued even when ignored, so it
 * must stay out of the set). */
static void stop_signals(sigset_t *sigs)
{
    sigemptyset(sigs);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGTERM);
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) != 0 || hup.sa_handler != SIG_IGN)
        sigaddset(sigs, SIGHUP);
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "?";
}

static atomic_int stop_done;

static void *stop_deadline(void *arg)
{
    gsd_app *app = arg;
    for (int i = 0; i < (int)(GSD_STOP_GRACE_S * 100) && !atomic_load(&stop_done); i++)
        usleep(10000);
    if (atomic_load(&stop_done))
        return NULL;
    gsd_log(app, 1, "stop: still busy after %.1f s (a precomputation, or a transfer to or from a "
                    "client): exiting; a precomputation cut short is done again at the next "
                    "start", GSD_STOP_GRACE_S);
    fflush(stderr);
    _exit(0);
}

int main(int argc, char **argv)
{
    static gsd_app app;
    char msg[512];
    gsd_opts_defaults(&app.o);
    switch (gsd_opts_parse(argc, argv, &app.o, msg, sizeof msg)) {
    case 0: break;
    case 1: gsd_opts_usage(stdout); return 0;
    default:
        fprintf(stderr, "gapsimd: %s (--help lists the options)\n", msg);
        return 2;
    }
    raise_fd_limit(app.o.max_connections + GSD_CONN_RESERVE + 256);
    if (app.o.token_file[0]) {
        gs_error te;
        if (gsd_guard_load_tokens(&app, app.o.token_file, &te) != GS_OK) {
            fprintf(stderr, "gapsimd: %s\n", te.msg);
            return 2;
        }
    }
    app.started = gsd_unix_now();
    signal(SIGPIPE, SIG_IGN);
    sigset_t sigs;
    stop_signals(&sigs);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* every thread inherits: main waits for them */
    char db[PATH_MAX + 16];
    gsd_path_db(&app, db, sizeof db);
    gs_error e = {0};
    /* a refused start leaves the data directory as it found it: a store of a
     * newer gapsimd is refused before the lock, staging/, the reserve and
     * the clean mark are touched (--reset discards it anyway); an empty or
     * missing store beside stored data before the reserve and staging/; a
     * damaged store (found once it is open) drops only the reserve, which
     * the open may need on a full disk */
    if (!app.o.reset && gsd_store_check_version(db, &e) != GS_OK) {
        fprintf(stderr, "gapsimd: %s\n", e.msg);
        return 1;
    }
    if (prepare_dirs(&app) != 0)
        return 1;
    /* its refusal (an empty or missing store beside stored data) before
     * the reserve and staging/ are touched */
    gs_err rc = gsd_integrity_before_open(&app, app.o.reset, &e);
    if (!rc)
        gsd_upkeep_before_open(&app);
    int found = 0;
    if (!rc)
        rc = gsd_store_open_migrated(db, &app.st, &found, &e);
    if (!rc)
        log_migration(&app, found);
    if (!rc)
        rc = gsd_integrity_after_open(&app, &e);
    if (!rc)
        rc = empty_staging(&app, &e);
    if (!rc && (rc = gsd_ckpt_start(db, &app.ckpt, &e)) == GS_OK)
        gsd_store_hand_checkpoints(app.st, app.ckpt);
    if (!rc) {
        gsd_store_on_full(app.st, gsd_upkeep_full_hook, &app);
        rc = gsd_upkeep_start(&app, &e);
    }
    if (!rc && (!(app.reg = gsd_registry_new(app.o.workers, (size_t)app.o.factor_cache_mb << 20,
                                             (size_t)app.o.max_loaded_mb << 20)) ||
                !(app.sums = gsd_summary_cache_new((size_t)app.o.summary_cache_mb << 20))))
        rc = gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    if (!rc)
        gsd_registry_on_unload(app.reg, log_unload, &app);
    if (!rc)
        rc = gsd_jobs_new(&app, &e);
    if (!rc) /* before the workers: they report jobs' ends to it */
        rc = gsd_jobwait_start(&app, &e);
    if (!rc)
        rc = gsd_pool_start(&app, app.o.http_threads, NULL, &app.readers, &e);
    if (!rc) /* after the readers: its workers queue summaries on them */
        rc = gsd_pool_start(&app, app.o.workers, gsd_jobs_work, &app.pool, &e);
    if (!rc)
        rc = gsd_asm_resume(&app, &e);
    if (!rc)
        rc = gsd_jobs_resume(&app, &e);
    if (!rc) {
        rc = gsd_http_start(&app, &e);
        gsd_pool_notify(app.pool);
    }
    if (rc) {
        fprintf(stderr, "gapsimd: %s%s%s\n", e.field, e.field[0] ? ": " : "", e.msg);
        atomic_store(&app.stopping, 1);
        gsd_pool_stop(app.pool); /* first: its workers queue summaries on the readers */
        gsd_pool_stop(app.readers);
        gsd_jobwait_free(&app);
        gsd_jobs_free(app.jobs);
        gsd_registry_free(app.reg);
        gsd_summary_cache_free(app.sums);
        gsd_upkeep_stop(&app);
        gsd_store_close(app.st);
        gsd_ckpt_stop(app.ckpt); /* after every connection handed to it */
        return 1;
    }
    char kernel[96];
    printf("gapsimd: listening on %s://%s:%d (data %s, %d worker%s, BLAS kernel %s)\n",
           app.o.tls_cert[0] ? "https" : "http", app.o.addr, gsd_http_port(&app),
           app.o.data_dir, app.o.workers, app.o.workers == 1 ? "" : "s",
           gs_blas_describe(kernel, sizeof kernel));
    fflush(stdout);
    int sig = 0;
    sigwait(&sigs, &sig);
    gsd_log(&app, 1, "signal %d (%s): stopping (running solves are cut short and redone on the "
                     "next start; a precomputation is given %.1f s)", sig, signal_name(sig),
            GSD_STOP_GRACE_S);
    pthread_t deadline;
    if (pthread_create(&deadline, NULL, stop_deadline, &app) == 0)
        pthread_detach(deadline);
    atomic_store(&app.stopping, 1);
    gsd_http_cancel_watched(); /* running single solves stop at their next iteration */
    gsd_jobs_cut_all(&app);    /* cloud solves too: not stored, resumed on the next start */
    gsd_pool_stop(app.pool); /* first: its workers queue summaries on the readers */
    app.pool = NULL;
    gsd_pool_stop(app.readers); /* a summary being computed stops at its next row */
    app.readers = NULL;
    gsd_jobwait_stop(&app); /* waiting requests answered 503 before the daemon stops */
    gsd_http_stop(&app);
    gsd_jobwait_free(&app);
    gsd_jobs_free(app.jobs);
    gsd_registry_free(app.reg);
    gsd_summary_cache_free(app.sums);
    gsd_upkeep_stop(&app);
    gsd_store_checkpoint(app.st, NULL);
    gsd_store_close(app.st);
    gsd_ckpt_stop(app.ckpt); /* after every connection handed to it */
    gsd_guard_free_tokens(&app);
    atomic_store(&stop_done, 1);
    gsd_log(&app, 1, "stopped");
    return 0;
}
