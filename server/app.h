/*
 * app.h -- the daemon's shared state and options.
 *
 * One gsd_app per process, created by gapsimd_main.c and passed to every
 * module: options, the store connection used by connection threads, the
 * assembly registry, the worker pool, the cloud jobs and the metrics.
 * Threads: MHD connection threads (parse, validate, answer from the store or
 * the cache), worker threads (precompute, solve), reader threads (compute
 * job summaries), the main thread (signals).
 */
#ifndef GSD_APP_H
#define GSD_APP_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "metrics.h"

typedef struct gsd_store gsd_store;
typedef struct gsd_ckpt gsd_ckpt;
typedef struct gsd_registry gsd_registry;
typedef struct gsd_pool gsd_pool;
typedef struct gsd_jobs gsd_jobs;
typedef struct gsd_upkeep gsd_upkeep;
typedef struct gsd_summary_cache gsd_summary_cache;

typedef struct {
    char addr[64];        /* listen address (default 127.0.0.1) */
    int port;             /* default 8600; 0 = any free port (printed) */
    char data_dir[PATH_MAX]; /* database, models, factors, cloud inputs */
    char web_dir[PATH_MAX];  /* static files of the web page ("" = none) */
    int workers;          /* solver threads (default: online cores) */
    int http_threads;     /* connection threads (default 2) */
    size_t max_body;      /* bytes of one JSON body (default 256 MiB) */
    size_t max_upload;    /* bytes of one upload (npy / multipart / archive, also the
                             unpacked size of an archive) (default 16 GiB) */
    int max_archive_entries; /* files and directories of an uploaded archive (default 10000) */
    int max_m, max_n;     /* largest assembly accepted (default 20000 / 50000 unknowns in
                             dense blocks) */
    long long max_fe_dofs; /* most DOFs of sparse whole-mesh parts (default 2000000) */
    double default_timeout, max_timeout; /* s per solve: when a request gives no
                                            timeout_s (600), the most it may ask (3600) */
    int max_gaps;         /* largest cloud (default 1000000) */
    int log_level;        /* 0 errors, 1 info (default), 2 debug */
    int conn_timeout;     /* s, idle connection timeout (default 120) */
    int header_timeout;   /* s, for a connection to send its request headers (default 10) */
    int max_connections;  /* open connections served; above: 503 (default 4096) */
    int max_per_ip;       /* connections per client address, 0 = no limit (default 0) */
    char allow_hosts[512];/* extra Host names accepted, comma-separated; "*": any */
    char token_file[4096];/* bearer tokens (guard.h), "" = no authentication */
    char tls_cert[4096];  /* PEM certificate (chain) file: serve HTTPS ("" = HTTP) */
    char tls_key[4096];   /* PEM private key file of tls_cert */
    long long min_free_mb;/* MiB kept free in the data directory: below, uploads and
                             clouds get 507 and /healthz says degraded (default 256) */
    int reset;            /* --reset: discard the data directory's contents at start */
    double retain_age_days; /* single solves older than this are deleted (0: kept) */
    long long retain_max; /* at most this many single solves are kept (0: no limit) */
    long long store_quota_mb; /* database + data directory above: 507 (0: no quota) */
    long long summary_cache_mb; /* MiB of ended jobs' summaries kept in memory (default 64) */
    long long factor_cache_mb; /* MiB of contact-set factors per assembly (fcache.h, default 256) */
    long long max_loaded_mb; /* MiB the loaded assemblies may hold before idle ones are
                                unloaded (registry.h; default half the memory, 0: no limit) */
} gsd_opts;

typedef struct gsd_token {
    char scope;           /* 'r' read, 'w' read and write */
    char value[257];
} gsd_token;

typedef struct gsd_app {
    gsd_opts o;
    gsd_store *st;        /* connection for the HTTP threads (serialized inside) */
    gsd_ckpt *ckpt;       /* runs the WAL checkpoints of every connection (store.h) */
    gsd_registry *reg;
    gsd_pool *pool;       /* solvers (pool.h) */
    gsd_pool *readers;    /* summaries and their exports: long reads of the store */
    gsd_jobs *jobs;
    gsd_upkeep *upkeep;   /* retention, quota, disk reserve (upkeep.h) */
    gsd_summary_cache *sums; /* ended jobs' summaries (summary.h) */
    struct gsd_jobwait *jobwait; /* requests waiting for a job's end (jobwait.h) */
    gsd_metrics metrics;
    struct MHD_Daemon *mhd;
    atomic_int stopping;
    double started;       /* unix time */
    gsd_token *tokens;    /* --token-file (guard.c), NULL: no authentication */
    int n_tokens;
} gsd_app;

/* Log a line to stderr at a level (0 error, 1 info, 2 debug). The formatted
 * text is escaped (gsd_log_escape, text.h: control characters and invalid
 * UTF-8 as \xNN, a backslash doubled): what a request sent cannot forge or
 * split a line. At most 1023 bytes of it are kept. */
void gsd_log(const gsd_app *app, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A fresh error id (8 hex digits): an error body shows it instead of file
 * paths or SQL texts; the log line with the details carries it too. */
void gsd_error_id(char out[16]);

/* Paths inside the data directory. */
void gsd_path_db(const gsd_app *app, char *out, size_t cap);
void gsd_path_assembly(const gsd_app *app, const char *id, char *out, size_t cap);
void gsd_path_job(const gsd_app *app, const char *id, char *out, size_t cap);
void gsd_path_staging(const gsd_app *app, char *out, size_t cap); /* fresh unique name */
/* Remove a file or directory tree (best effort). */
void gsd_rmtree(const char *path);
/* Create a directory and its parents; 0 on success. */
int gsd_mkdirs(const char *path);

#endif
