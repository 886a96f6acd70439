/*
 * store.h -- the SQLite store of gapsimd: assemblies, cloud jobs and results.
 *
 * Owns: the database connection and its settings (WAL, synchronous=NORMAL,
 * foreign keys, 10 s busy timeout), the schema migrations (schema/NNN_*.sql,
 * compiled in at build time, applied in order inside BEGIN IMMEDIATE, each
 * bumping PRAGMA user_version), the prepared statements, and the row <->
 * column mapping of the three tables, the retention of single solves, and
 * the storage of the result vectors: w (m doubles) and lam (packed (int32
 * index, double value) pairs for the entries that are not +0.0) are stored
 * compressed with zstd after a byte shuffle when that is smaller, raw
 * otherwise, the encoding in the columns w_enc / lam_enc (vecenc.h,
 * schema/004_result_encoding.sql: 0 raw - every row of an older database -,
 * 1 zstd of the shuffled raw form). -0.0, NaN payloads, denormals and every
 * other bit pattern round-trip exactly.
 *
 * WAL: PRAGMA journal_size_limit cuts the WAL file back to 32 MiB when a
 * checkpoint has let it start over (store_impl.h: GSD_WAL_LIMIT_BYTES).
 *
 * Threading: a gsd_store is one connection plus a mutex, so any thread may
 * use it, but calls on one store are serialized. For concurrency open one
 * store per thread on the same file: every write transaction starts with
 * BEGIN IMMEDIATE and waits up to the busy timeout, so concurrent writers
 * queue instead of failing with SQLITE_BUSY.
 *
 * Errors: SQLite failures -> GS_ERR_IO with the SQLite message; a malformed
 * stored vector -> GS_ERR_FORMAT; a row that does not exist is not an error
 * for lookups (*found = 0) and deletes (no-op); writes that must modify an
 * existing row (assembly_update, job_set_status, the job counters of
 * results_put) give GS_ERR_INVALID naming "id" / "job_id" when it is absent.
 * Doubles: the vectors w and lam are exact to the bit. Scalar REAL columns
 * are exact too (denormals, infinities) except that NaN is stored as NULL and
 * read back as NaN, and a zero comes back as +0.0 (SQLite keeps no sign on a
 * zero REAL: it stores integral values as integers).
 */
#ifndef GSD_STORE_H
#define GSD_STORE_H

#include "gs_error.h"
#include "kkt.h"
#include "precompute.h"
#include "solver.h"

typedef struct gsd_store gsd_store;

/* Open (create if absent) the database at path and bring its schema up to
 * date. A database written by a newer gapsimd (user_version above the last
 * compiled-in migration), or with a negative user_version, gives
 * GS_ERR_UNSUPPORTED; a file that is not an SQLite database gives
 * GS_ERR_IO. */
gs_err gsd_store_open(const char *path, gsd_store **out, gs_error *err);
/* The same; *found (may be NULL): the schema version the database had before
 * this open migrated it (0: a new or empty database). It equals
 * gsd_store_schema_version afterwards unless migrations were applied: by
 * this open, or, for the versions in between, by another process that
 * opened the file at the same moment. */
gs_err gsd_store_open_migrated(const char *path, gsd_store **out, int *found, gs_error *err);
/* Before anything in the data directory changes: GS_ERR_UNSUPPORTED, with
 * gsd_store_open's message, if the database at path was written by a newer
 * gapsimd (user_version above the last compiled-in migration) or has a
 * negative user_version; GS_OK
 * otherwise, and for a missing, empty or unreadable file (gsd_store_open
 * decides). Creates and changes nothing: the version is read from the
 * file's header, or through a read-only connection when a crash left a
 * -wal and a -shm file (the WAL may hold a newer header). O(1). */
gs_err gsd_store_check_version(const char *path, gs_error *err);
void gsd_store_close(gsd_store *st);
/* PRAGMA quick_check: 1 and "ok" in msg when the database is sound, else 0
 * and its first complaint (or the SQLite error) in msg. O(database size). */
int gsd_store_quick_check(gsd_store *st, char *msg, size_t cap);
/* The clean-close mark "<path>-clean": written by gsd_store_close of a
 * store that gsd_store_open opened when the close leaves no WAL beside the
 * database (the process's last connection: SQLite checkpointed everything
 * into the file, synced, and removed the WAL), holding the file's size,
 * device, inode, mtime and ctime. gsd_store_take_clean_mark: 1 if the mark
 * is there, no WAL is, and the file still has that identity (nothing
 * wrote it since, a crash included); it removes the mark either way.
 * A change within the file system's timestamp granularity of the close
 * (a few ms) is not seen. O(1). */
int gsd_store_take_clean_mark(const char *path);
/* The database is not to be trusted (a failed quick_check): st's close
 * writes no clean-close mark. */
void gsd_store_mark_unsound(gsd_store *st);
/* user_version of the database (= number of the last migration applied). */
int gsd_store_schema_version(gsd_store *st);
/* fn(ctx) is called when a delete or a job status write meets a full disk
 * (SQLITE_FULL); if it returns 1 (it freed space: the disk reserve, see
 * upkeep.h) the write is tried once more. Called with the store locked: fn
 * must not use this store. */
void gsd_store_on_full(gsd_store *st, int (*fn)(void *ctx), void *ctx);
/* PRAGMA wal_checkpoint(RESTART). Readers that keep the checkpoint from
 * completing are not an error: the next checkpoint continues. */
gs_err gsd_store_checkpoint(gsd_store *st, gs_error *err);

/* A checkpointer (store_ckpt.c): a thread with its own connection to the
 * database at path that runs the WAL checkpoints of the stores handed to it,
 * so that no committing thread waits for them (a solver worker would idle
 * through the copy and two fsyncs). */
typedef struct gsd_ckpt gsd_ckpt;
gs_err gsd_ckpt_start(const char *path, gsd_ckpt **out, gs_error *err);
/* Join the thread, close its connection (NULL: no-op). After every store
 * handed to it is closed. */
void gsd_ckpt_stop(gsd_ckpt *c);
/* Checkpoints it has run. */
long gsd_ckpt_runs(gsd_ckpt *c);
/* st's commits no longer checkpoint; one that leaves the WAL at 1,000 pages
 * or more wakes c, which runs a PASSIVE checkpoint. c must outlive st. */
void gsd_store_hand_checkpoints(gsd_store *st, gsd_ckpt *c);

/* ---- assemblies ------------------------------------------------------------ */

typedef struct {
    char id[40];            /* "a_" + hex */
    char content_hash[40];  /* hex */
    char name[128];
    char joint[16];         /* "simple" | "sandwich" */
    int n, m, n_parts, n_nodes, n_fast;
    char status[16];        /* "precomputing" | "ready" | "failed" */
    char err_code[32], err_field[96], err_msg[320];  /* why failed; if ready: why no L_Q ("": has it) */
    gs_precomp_times t;     /* stage times, s */
    double cond_K, cond_Q;
    double created_at, ready_at;   /* unix time, s (0 = unset) */
    char factor_checksum[40]; /* hex checksum of the saved precomputation file ("" = none) */
} gsd_assembly_row;

gs_err gsd_store_assembly_insert(gsd_store *st, const gsd_assembly_row *row, gs_error *err);
/* Overwrite every field of the assembly row->id (GS_ERR_INVALID if absent). */
gs_err gsd_store_assembly_update(gsd_store *st, const gsd_assembly_row *row, gs_error *err);
gs_err gsd_store_assembly_get(gsd_store *st, const char *id, gsd_assembly_row *out, int *found,
                              gs_error *err);
/* The most recently created assembly with that content hash. */
gs_err gsd_store_assembly_find_hash(gsd_store *st, const char *hash, gsd_assembly_row *out,
                                    int *found, gs_error *err);
/* All assemblies by created_at (then insertion order); *rows is malloc'ed
 * (NULL when *count is 0), free() it. */
gs_err gsd_store_assembly_list(gsd_store *st, gsd_assembly_row **rows, int *count,
                               gs_error *err);
/* Delete the assembly, its results and jobs: the results in transactions of
 * 256 rows (each followed by a passive WAL checkpoint, so the WAL does not
 * grow with the assembly's size: a delete works on a full disk), then the
 * jobs and the assembly in one. The store is locked one transaction at a
 * time: other calls on st run between two (a delete of 1 M results takes
 * about a minute). From the start of the call the assembly and its jobs
 * read as absent to every store of this process (assembly_get, find_hash,
 * assembly_list, job_get, job_list) and job_insert on it gives
 * GS_ERR_INVALID naming "assembly_id"; a result stored meanwhile goes with
 * the last transaction (the foreign keys' cascade). The delete is marked in
 * the assembly's row (its own transaction) before the first batch:
 * interrupted by a stop or a crash, it is finished at the next start
 * (gsd_store_assembly_deletes_finish); by an error, the assembly stays
 * with part of its results, and deleting it again finishes the job. */
gs_err gsd_store_assembly_delete(gsd_store *st, const char *id, gs_error *err);
/* 1 if the assembly is known to be absent: its row gone, or its delete
 * under way; 0 if it is there or the store cannot tell (an error). */
int gsd_store_assembly_gone(gsd_store *st, const char *id);
/* Finish the deletes a stop interrupted (the assemblies marked, above), one
 * after the other; done(ctx, id) after each (may be NULL). For the start,
 * before anything is served: their directories are then orphans. */
gs_err gsd_store_assembly_deletes_finish(gsd_store *st, void (*done)(void *ctx, const char *id),
                                         void *ctx, gs_error *err);

/* ---- jobs ------------------------------------------------------------------ */

typedef struct {
    char id[40];            /* "j_" + hex */
    char assembly_id[40];
    char status[16];        /* "queued" | "running" | "done" | "cancelled" | "failed" */
    int total, done, failed;
    char *options_json;     /* malloc'ed JSON text (solver options, pattern...), owned by
                               the row; may be NULL */
    double created_at, started_at, finished_at;
    double solve_time_sum;  /* s, sum of solve times of finished gaps */
    long long iterations_sum;
    int done_at_start;      /* done when the job last became running (after a restart:
                               the gaps solved before it), for its throughput */
    char error[256];        /* why a failed job failed ("" otherwise) */
} gsd_job_row;

void gsd_job_row_free(gsd_job_row *row); /* frees options_json (set to NULL) */
/* 1 if a job status is terminal: "done", "failed" or "cancelled". */
int gsd_job_status_ended(const char *status);
gs_err gsd_store_job_insert(gsd_store *st, const gsd_job_row *row, gs_error *err);
gs_err gsd_store_job_get(gsd_store *st, const char *id, gsd_job_row *out, int *found,
                         gs_error *err);
/* Set the status; "running" also sets started_at = when and done_at_start =
 * done, "done" /
 * "cancelled" / "failed" set finished_at = when. GS_ERR_INVALID if absent.
 * error is cleared (NULL) by every status but "failed": a job that is not
 * failed carries no error. A job that has ended ("done", "cancelled",
 * "failed") keeps its status, finished_at and error: a later write of any
 * status is a no-op (GS_OK), so a late "running" (a claim racing a cancel)
 * or a second end never overwrites the first end. */
gs_err gsd_store_job_set_status(gsd_store *st, const char *id, const char *status, double when,
                                gs_error *err);
/* The same, recording `reason` (<= 255 bytes, NULL: none) when status is
 * "failed". */
gs_err gsd_store_job_fail(gsd_store *st, const char *id, const char *status, double when,
                          const char *reason, gs_error *err);
/* Set the counters done, failed, solve_time_sum and iterations_sum of the
 * job from its stored results, if done differs from their count (an
 * interrupted assembly delete removed some; a resumed job solves them again
 * and counts them again). *changed (may be NULL) = 1 if it did. */
gs_err gsd_store_job_recount(gsd_store *st, const char *id, int *changed, gs_error *err);
/* Clear the error of every job that is not "failed" (rows written before
 * the store cleared it itself); *changed (may be NULL) = rows changed. */
gs_err gsd_store_job_tidy_errors(gsd_store *st, int *changed, gs_error *err);
/* Jobs by created_at, optionally filtered (NULL: any). *rows is malloc'ed;
 * release each with gsd_job_row_free, then free(*rows). */
gs_err gsd_store_job_list(gsd_store *st, const char *assembly_id, const char *status,
                          gsd_job_row **rows, int *count, gs_error *err);

/* ---- results --------------------------------------------------------------- */

typedef struct {
    char id[40];            /* "r_" + hex */
    char assembly_id[40];
    char job_id[40];        /* "" for a single solve (stored as NULL) */
    int job_index;          /* -1 for a single solve */
    char cache_key[40];     /* hex */
    gs_status status;       /* stored as gs_status_name (TEXT) */
    gs_method method;       /* the method that solved (stored as gs_method_name) */
    gs_form form;           /* its formulation (stored as gs_form_name) */
    int auto_chosen, warm_used;
    int crossover;          /* GI relative finished (gs_solve_info.crossover) */
    int n_act, iterations, cg_iterations;
    double time;            /* s */
    gs_kkt kkt;             /* the certificate; stored: primal_infeas, dual_infeas,
                               complementarity, stationarity, gap, obj_primal (the
                               other fields read back as 0) */
    int kkt_pass;
    int m;
    double *w;              /* m residual gaps (owned when read back); NULL: not stored */
    double *lam;            /* m contact forces, stored sparse; NULL: not stored */
    double created_at;
} gsd_result_row;

void gsd_result_row_free(gsd_result_row *row); /* frees w, lam (set to NULL) */

/* Insert count results in one BEGIN IMMEDIATE transaction; if job_id != NULL,
 * in the same transaction add done_delta / failed_delta / time_delta /
 * iter_delta to that job's counters (GS_ERR_INVALID if the job is absent).
 * All or nothing: on any error nothing is written. */
gs_err gsd_store_results_put(gsd_store *st, const gsd_result_row *rows, int count,
                             const char *job_id, int done_delta, int failed_delta,
                             double time_delta, long long iter_delta, gs_error *err);
/* out->w / out->lam are malloc'ed (release with gsd_result_row_free). */
gs_err gsd_store_result_get(gsd_store *st, const char *id, gsd_result_row *out, int *found,
                            gs_error *err);
/* Most recent result of the assembly with that key and status "optimal". */
gs_err gsd_store_result_find_key(gsd_store *st, const char *assembly_id, const char *cache_key,
                                 gsd_result_row *out, int *found, gs_error *err);
/* Results of a job with job_index in [offset, offset+limit) in index order
 * (limit < 0: no upper bound). with_vectors 0 skips w/lam (passed as NULL).
 * The row passed to cb, w and lam included, is valid only during the call.
 * cb returns 0 to continue, non-zero to stop (not an error). The rows are
 * read in chunks (256 rows or 256 KiB of stored vectors), each in a read
 * transaction of its own that ends, and the store unlocked, before cb sees
 * its rows: a pass over a million results never holds a WAL snapshot for
 * long (one would keep checkpoints from starting the WAL over while others
 * write: it grew by gigabytes), and cb may call this store. Each result is
 * seen once, in index order: an ended job's exactly as one read would; a
 * running job's as stored when the read reached its index (every result
 * stored before the call, perhaps some stored during it). */
gs_err gsd_store_job_results(gsd_store *st, const char *job_id, int offset, int limit,
                             int with_vectors, int (*cb)(const gsd_result_row *, void *),
                             void *ctx, gs_error *err);
/* lam (m doubles) of gap index of a job, the warm start of a gap: *found 0
 * when there is no such result, it has no lam or its m differs. Only lam is
 * read and decoded (a warm start needs nothing else). */
gs_err gsd_store_job_lam(gsd_store *st, const char *job_id, int index, int m, double *lam,
                         int *found, gs_error *err);
/* bitmap[i] = 1 for each job_index i < total that has a result, else 0. */
gs_err gsd_store_job_done_indices(gsd_store *st, const char *job_id, unsigned char *bitmap,
                                  int total, gs_error *err);

/* ---- retention, size ------------------------------------------------------ */

/* Delete single-solve results (job_id NULL: single solves and cache entries;
 * cloud job results are never touched), oldest first (created_at, then
 * insertion order): those created before `before` (unix s; <= 0: no age
 * rule), then the oldest beyond the newest `keep` (< 0: no count rule; 0:
 * any, oldest first). At most `batch` rows, in one BEGIN IMMEDIATE
 * transaction, so that a caller looping until *deleted < batch never holds
 * the write lock for long. */
gs_err gsd_store_retain(gsd_store *st, double before, long long keep, int batch, int *deleted,
                        gs_error *err);
/* Bytes of the database's pages in use (page_count - freelist_count) x
 * page_size: deleted rows free pages that later writes reuse before the
 * file grows (the file itself does not shrink; VACUUM does that). */
gs_err gsd_store_live_bytes(gsd_store *st, long long *bytes, gs_error *err);

/* ---- migrations (generated from schema/NNN_name.sql by CMake) -------------- */

typedef struct {
    int version;        /* NNN: user_version after this migration */
    const char *name;   /* file name */
    const char *sql;    /* the file's text */
} gsd_migration;

extern const gsd_migration gsd_migrations[]; /* in version order, versions 1..count */
extern const int gsd_migrations_count;

#endif
