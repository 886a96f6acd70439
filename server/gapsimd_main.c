/*
 * gapsimd_main.c -- the gapsim daemon: options, start-up, signals, shutdown.
 *
 * Start-up order: data directory (created, locked; staging cleared), store (schema
 * migrated), registry, jobs, worker pool, interrupted precomputations and
 * cloud jobs re-queued, HTTP last. Shutdown on SIGINT / SIGTERM: refuse new
 * requests, answer queued interactive work 503, cancel running solves (a
 * chunk stores the gaps it finished; unfinished jobs stay "running" in the
 * store and resume at the next start), give what is still busy (a
 * precomputation inside BLAS, a transfer in flight) GSD_STOP_GRACE_S, stop
 * HTTP.
 */
#define _GNU_SOURCE
#include <getopt.h>
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
#include "numarg.h"
#include "pool.h"
#include "registry.h"
#include "store.h"
#include "summary.h"
#include "upkeep.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gapsimd [options]\n"
            "Serve gapsim's REST API (docs/api.md): assemblies, solves, gap clouds.\n\n"
            "  --addr A          listen address (default 127.0.0.1)\n"
            "  --port P          TCP port (default 8600; 0 = any free port)\n"
            "  --data-dir D      database, models, factors, cloud inputs (default ./gapsim-data)\n"
            "  --web-dir D       static files of the web page (default: the source tree's\n"
            "                    clients/web; \"\" disables)\n"
            "  --workers N       solver threads (default: online cores)\n"
            "  --http-threads N  connection threads (default 2); as many reader threads\n"
            "                    compute job summaries\n"
            "  --max-body B      largest JSON body in bytes (default 268435456)\n"
            "  --max-upload B    largest .npy / multipart / archive upload in bytes, also the\n"
            "                    unpacked size of an archive (default 17179869184)\n"
            "  --max-archive-entries N  most files and directories in an uploaded model\n"
            "                    archive (default 10000)\n"
            "  --max-m M         most contact pairs per assembly (default 20000)\n"
            "  --max-n N         most unknowns in dense (condensed) blocks per assembly\n"
            "                    (default 50000); one part's block: at most\n"
            "                    min(N^2, 20000^2) elements (a sparse file's stored entries)\n"
            "  --max-fe-dofs N   most DOFs of sparse whole-mesh parts per assembly,\n"
            "                    condensed by gapsim (default 2000000)\n"
            "  --default-timeout S  time limit of a solve whose request gives no timeout_s\n"
            "                    (default 600; a cloud: of each gap's solve)\n"
            "  --max-timeout S   the largest timeout_s a request may ask (default 3600)\n"
            "  --max-gaps K      most gaps per cloud (default 1000000)\n"
            "  --timeout S       idle connection timeout in seconds (default 120); also\n"
            "                    the time a kept-alive connection has for its next headers\n"
            "  --header-timeout S  deadline from accept for a new connection's complete\n"
            "                    request headers (default 10; then --timeout applies)\n"
            "  --max-connections N  connections served at once; above, new requests get\n"
            "                    503 with Retry-After (default 4096)\n"
            "  --max-per-ip N    connections per client address (default 0: no limit)\n"
            "  --token-file F    require bearer tokens: lines \"read TOKEN\" or \"write TOKEN\"\n"
            "  --tls-cert F      serve HTTPS (libmicrohttpd with GnuTLS) with this PEM\n"
            "                    certificate (chain); needs --tls-key\n"
            "  --tls-key F       the PEM private key of --tls-cert (unencrypted)\n"
            "  --min-free MB     MiB kept free in the data directory: below, uploads and\n"
            "                    clouds get 507, /healthz says degraded (default 256)\n"
            "  --store-quota-mb MB  most MiB the database (pages in use) and the data\n"
            "                    directory's files may take: above, the oldest single solves\n"
            "                    are deleted, then uploads, clouds and new solves get 507 and\n"
            "                    /healthz says degraded (default 0: no quota)\n"
            "  --retain-solves-age DAYS  delete single-solve results (and the cache they\n"
            "                    form) older than DAYS, oldest first; cloud job results are\n"
            "                    kept (default 0: keep; fractions allowed)\n"
            "  --retain-solves-max N  keep at most the N newest single-solve results\n"
            "                    (default 0: no limit)\n"
            "  --summary-cache-mb MB  MiB of ended jobs' summaries kept in memory, so a\n"
            "                    summary or export is computed once (default 64; 0: off)\n"
            "  --factor-cache-mb MB  MiB per assembly of contact-set factors kept for warm\n"
            "                    starts from stored solutions: the moves of a pattern search\n"
            "                    copy the factor the first one built (default 256; 0: off)\n"
            "  --max-loaded-mb MB  MiB the assemblies in memory (model, factors, factor\n"
            "                    cache) may take: above, idle ones whose factors are saved are\n"
            "                    unloaded, least recently used first, and loaded again from\n"
            "                    their saved factors when next used; an upload that would\n"
            "                    take more alone is refused (413) (default half the\n"
            "                    memory gapsimd may use: physical, cgroup limit, ulimit -v\n"
            "                    or -d, the smallest; 0: no limit)\n"
            "  --reset           discard the data directory's store, assemblies and jobs at\n"
            "                    start (needed to start over a lost or damaged database)\n"
            "  --allow-host H    a Host name to accept besides IP literals and localhost\n"
            "                    (repeatable or comma-separated; \"*\": any, no DNS-rebinding\n"
            "                    protection)\n"
            "  --log-level L     0 errors, 1 info (default), 2 debug (every request)\n"
            "  --help            this text\n"
            "On start it prints \"gapsimd: listening on http://ADDR:PORT\" (https:// with\n"
            "--tls-cert) to stdout.\n");
}

/* An integer option in [lo, hi] (range: the bounds, for the message). */
static int in_range(const char *s, long range[2], long lo, long hi, long *v)
{
    range[0] = lo;
    range[1] = hi;
    return gs_parse_long(s, lo, hi, v);
}

static int parse_opts(int argc, char **argv, gsd_opts *o)
{
    static const struct option lo[] = {
        {"addr", 1, 0, 'a'},      {"port", 1, 0, 'p'},       {"data-dir", 1, 0, 'd'},
        {"web-dir", 1, 0, 'W'},   {"workers", 1, 0, 'w'},    {"http-threads", 1, 0, 't'},
        {"max-body", 1, 0, 'b'},  {"max-upload", 1, 0, 'u'}, {"max-m", 1, 0, 'm'},
        {"max-n", 1, 0, 'n'},     {"max-gaps", 1, 0, 'k'},   {"timeout", 1, 0, 'T'},
        {"log-level", 1, 0, 'l'}, {"help", 0, 0, 'h'},       {"max-archive-entries", 1, 0, 'e'},
        {"max-fe-dofs", 1, 0, 'F'}, {"default-timeout", 1, 0, 'D'}, {"max-timeout", 1, 0, 'X'},
        {"header-timeout", 1, 0, 'H'}, {"max-connections", 1, 0, 'C'}, {"max-per-ip", 1, 0, 'I'},
        {"allow-host", 1, 0, 'A'}, {"token-file", 1, 0, 'K'}, {"min-free", 1, 0, 'M'},
        {"reset", 0, 0, 'Z'}, {"store-quota-mb", 1, 0, 'Q'}, {"retain-solves-age", 1, 0, 'R'},
        {"retain-solves-max", 1, 0, 'S'}, {"tls-cert", 1, 0, 'E'}, {"tls-key", 1, 0, 'Y'},
        {"summary-cache-mb", 1, 0, 'G'}, {"factor-cache-mb", 1, 0, 'L'},
        {"max-loaded-mb", 1, 0, 'O'}, {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    snprintf(o->addr, sizeof o->addr, "127.0.0.1");
    o->port = 8600;
    snprintf(o->data_dir, sizeof o->data_dir, "gapsim-data");
    snprintf(o->web_dir, sizeof o->web_dir, "%s", GAPSIM_WEB_DIR);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->workers = cores > 0 ? (int)cores : 1;
    o->http_threads = 2;
    o->max_body = (size_t)256 << 20;
    o->max_upload = (size_t)16 << 30;
    o->max_archive_entries = 10000;
    o->max_m = 20000;
    o->max_n = 50000;
    o->max_fe_dofs = 2000000;
    o->default_timeout = 600;
    o->max_timeout = 3600;
    o->max_gaps = 1000000;
    o->log_level = 1;
    o->conn_timeout = 120;
    o->header_timeout = 10;
    o->max_connections = 4096;
    o->min_free_mb = 256;
    o->summary_cache_mb = 64;
    o->factor_cache_mb = 256;
    /* half of what this process may use: the physical memory, or less under
     * a cgroup memory limit, ulimit -v or ulimit -d (core/memlimit.h) */
    gs_memlimit ml;
    gs_memlimit_get(&ml);
    o->max_loaded_mb = ml.bytes ? (long long)(ml.bytes / 2 >> 20) : 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        long v = 0, range[2] = {0, -1}; /* the value's range, once known */
        int bad = 0;
        switch (c) {
        case 'a': bad = snprintf(o->addr, sizeof o->addr, "%s", optarg) >= (int)sizeof o->addr; break;
        case 'd': bad = snprintf(o->data_dir, sizeof o->data_dir, "%s", optarg) >= (int)sizeof o->data_dir; break;
        case 'W': bad = snprintf(o->web_dir, sizeof o->web_dir, "%s", optarg) >= (int)sizeof o->web_dir; break;
        case 'p': bad = in_range(optarg, range, 0, 65535, &v); o->port = (int)v; break;
        case 'w': bad = in_range(optarg, range, 1, 256, &v); o->workers = (int)v; break;
        case 't': bad = in_range(optarg, range, 1, 64, &v); o->http_threads = (int)v; break;
        case 'b': bad = in_range(optarg, range, 1024, (long)1 << 40, &v); o->max_body = (size_t)v; break;
        case 'u': bad = in_range(optarg, range, 1024, (long)1 << 50, &v); o->max_upload = (size_t)v; break;
        case 'e': bad = in_range(optarg, range, 1, 10000000, &v); o->max_archive_entries = (int)v; break;
        case 'm': bad = in_range(optarg, range, 1, 1000000, &v); o->max_m = (int)v; break;
        case 'n': bad = in_range(optarg, range, 1, 10000000, &v); o->max_n = (int)v; break;
        case 'F': bad = in_range(optarg, range, 1, 100000000, &v); o->max_fe_dofs = v; break;
        case 'D': bad = in_range(optarg, range, 1, 86400, &v); o->default_timeout = (double)v; break;
        case 'X': bad = in_range(optarg, range, 1, 86400, &v); o->max_timeout = (double)v; break;
        case 'k': bad = in_range(optarg, range, 1, 100000000, &v); o->max_gaps = (int)v; break;
        case 'T': bad = in_range(optarg, range, 1, 86400, &v); o->conn_timeout = (int)v; break;
        case 'H': bad = in_range(optarg, range, 1, 86400, &v); o->header_timeout = (int)v; break;
        case 'C': bad = in_range(optarg, range, 1, 1000000, &v); o->max_connections = (int)v; break;
        case 'I': bad = in_range(optarg, range, 0, 1000000, &v); o->max_per_ip = (int)v; break;
        case 'M': bad = in_range(optarg, range, 0, 1L << 30, &v); o->min_free_mb = v; break;
        case 'Z': o->reset = 1; break;
        case 'Q': bad = in_range(optarg, range, 0, 1L << 40, &v); o->store_quota_mb = v; break;
        case 'S': bad = in_range(optarg, range, 0, 1L << 50, &v); o->retain_max = v; break;
        case 'G': bad = in_range(optarg, range, 0, 1L << 30, &v); o->summary_cache_mb = v; break;
        case 'L': bad = in_range(optarg, range, 0, 1L << 30, &v); o->factor_cache_mb = v; break;
        case 'O': bad = in_range(optarg, range, 0, 1L << 40, &v); o->max_loaded_mb = v; break;
        case 'R': /* days, up to 100 years */
            range[0] = 0;
            range[1] = 36500;
            bad = gs_parse_double(optarg, 0, 36500, &o->retain_age_days);
            break;
        case 'K': bad = snprintf(o->token_file, sizeof o->token_file, "%s", optarg) >= (int)sizeof o->token_file; break;
        case 'E': bad = snprintf(o->tls_cert, sizeof o->tls_cert, "%s", optarg) >= (int)sizeof o->tls_cert; break;
        case 'Y': bad = snprintf(o->tls_key, sizeof o->tls_key, "%s", optarg) >= (int)sizeof o->tls_key; break;
        case 'A': {
            size_t used = strlen(o->allow_hosts);
            bad = (size_t)snprintf(o->allow_hosts + used, sizeof o->allow_hosts - used, "%s%s",
                                   used ? "," : "", optarg) >= sizeof o->allow_hosts - used;
            break;
        }
        case 'l': bad = in_range(optarg, range, 0, 2, &v); o->log_level = (int)v; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
        if (bad) {
            const char *name = "?";
            for (int i = 0; lo[i].name; i++)
                if (lo[i].val == c)
                    name = lo[i].name;
            if (range[0] <= range[1])
                fprintf(stderr, "gapsimd: --%s: '%s' is not a number in [%ld, %ld]\n", name,
                        optarg, range[0], range[1]);
            else
                fprintf(stderr, "gapsimd: --%s: '%s' is too long\n", name, optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gapsimd: unexpected argument: %s\n", argv[optind]);
        return -1;
    }
    if (!o->tls_cert[0] != !o->tls_key[0]) {
        fprintf(stderr, "gapsimd: --tls-cert and --tls-key go together (HTTPS needs both)\n");
        return -1;
    }
    if (o->default_timeout > o->max_timeout) {
        fprintf(stderr, "gapsimd: --default-timeout (%g s) exceeds --max-timeout (%g s)\n",
                o->default_timeout, o->max_timeout);
        return -1;
    }
    return 0;
}

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
    /* uploads interrupted by a stop are incomplete: drop them */
    snprintf(path, sizeof path, "%s/staging", app->o.data_dir);
    gsd_rmtree(path);
    return gsd_mkdirs(path);
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
    if (parse_opts(argc, argv, &app.o) != 0)
        return 2;
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
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* every thread inherits: main waits for them */
    if (prepare_dirs(&app) != 0)
        return 1;
    char db[PATH_MAX + 16];
    gsd_path_db(&app, db, sizeof db);
    gs_error e = {0};
    gsd_upkeep_before_open(&app);
    gs_err rc = gsd_integrity_before_open(&app, app.o.reset, &e);
    if (!rc)
        rc = gsd_store_open(db, &app.st, &e);
    if (!rc)
        rc = gsd_integrity_after_open(&app, &e);
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
    gsd_log(&app, 1, "signal %d: stopping (running solves are cut short and redone on the next "
                     "start; a precomputation is given %.1f s)", sig, GSD_STOP_GRACE_S);
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
