/*
 * runner.h -- the cloud runner: solve the rows of a gap cloud with per-thread
 * solvers, from a gap source to a result sink. gapsim-batch (cmd/), gapsimd's
 * cloud jobs (server/jobs.c) and gapsim-mpi (mpi/) are shells over it.
 *
 * Owns: the description of a run (gs_run: precomputation, solver options,
 * one or several fastener patterns, the gap source, the result sink, the
 * ordering / warm-start policy, stop and progress hooks), the per-thread
 * workspace (gs_run_slot), running one chunk of rows on a slot
 * (gs_run_chunk), and a thread pool that pulls chunks from a feed
 * (gs_run_start / gs_run_wait).
 *
 * Rows. A run has n_patterns x k rows: row r solves gap r % k of the source
 * under pattern r / k (pair-space load loads + (r / k) * m). A cloud with one
 * pattern has rows = gaps.
 *
 * Seams (all optional but the source and the sink):
 *   source   read gap i (thread-safe): .npy file (pread), memory; gapsimd's
 *            job gaps are an .npy source.
 *   sink     put: one result, from the worker's thread; commit: the end of a
 *            chunk (gapsimd: one store transaction; gapsim-mpi: hand the
 *            chunk to the rank's I/O thread).
 *   policy   order: permute the rows of a chunk before they run; start: the
 *            warm start of a row, or "result already known" (gapsimd's result
 *            cache); done: release what start gave.
 *   chain    (gs_run.chain, chain.h) the rows of a chunk in nearest-neighbour
 *            order, each warm from the worker's previous row where the policy
 *            gave no warm start, the factor travelling in the workspace; auto
 *            keeps warm or cold, whichever the worker measures faster.
 *   control  stop: checked before each row (cancellation, yielding to an
 *            interactive solve); progress: after each committed chunk.
 *   feed     gs_run_start's source of chunks (default: rows in index order,
 *            `chunk` at a time; gapsim-mpi: chunks handed out by rank 0).
 * Threads: one gs_run_slot per thread; every hook may be called from any
 * worker thread concurrently (the slot index says which). OpenBLAS must be
 * single-threaded during a run (gs_blas_set_threads(1)): one solve per core.
 * Cost per row: the solve plus O(m) copies; nothing else scales with k.
 */
#ifndef GS_RUNNER_H
#define GS_RUNNER_H

#include <stddef.h>

#include "chain.h"
#include "precompute.h"
#include "solver.h"

/* ---- the precomputation --------------------------------------------------- */

/* Load the saved factors of mdl from path (core/precomp_io.h) if the file
 * exists (an unusable file is an error: "remove the file to recompute it"),
 * else build them (OpenBLAS with its configured threads) and save them there
 * (path NULL: build only). flags as gs_precomp_build_ex: GS_PRECOMP_DEFER_LQ
 * leaves L_Q out of a build that is not saved (a saved file serves every
 * method and front end: it has L_Q) and out of a load (the file's L_Q is
 * checked, not kept); GS_PRECOMP_DEFER_SPARSE leaves a load's sparse parts
 * unfactored (a build keeps its factors). *loaded = 1 if they were loaded. Runs
 * on the same factors are bit-identical; separate builds may differ in
 * rounding when OpenBLAS runs them with different thread counts.
 * release_k (a run that never reads K itself: !gs_solve_reads_k, solver.h): the model's
 * dense blocks are released (gs_model_release_dense) before a load, which
 * needs only the model's content hash, or taken by the build and factored
 * in place (gs_precomp_build_taken), so that the run never holds them
 * beside their factors. The model is released then, also on failure. */
gs_err gs_run_factors(gs_model *mdl, const char *path, unsigned flags, int release_k,
                      gs_precomp **pc, int *loaded, gs_error *err);
/* The flags a run with these options builds its factors with:
 * GS_PRECOMP_DEFER_LQ unless the method reads L_Q (gs_method_needs_lq; auto
 * counts as not reading it: it then measures only the methods that need no
 * L_Q, solvers/auto.c). L_Q is m^3/3 flops, 14-16% of the precomputation on
 * the lap joints. GS_PRECOMP_DEFER_SPARSE unless the method solves with K
 * (gs_method_needs_part_factors: the primal forms) or the options ask for x
 * or the primal certificate: a loaded factor file (and gapsim-mpi's other
 * ranks) then skip refactoring whole-mesh parts (seconds per 100,000 DOFs). */
unsigned gs_run_precomp_flags(const gs_solve_opts *opts);

/* ---- gap source ----------------------------------------------------------- */

typedef struct {
    int k, m;   /* gaps, values per gap */
    gs_err (*read)(void *ctx, int i, double *g, gs_error *err); /* thread-safe */
    void (*close)(void *ctx);
    void *ctx;
} gs_gap_source;

/* A k x m float64 .npy file (a 1-D file is one gap). C order is read row by
 * row with pread: nothing but the header is held in memory; Fortran order
 * is read whole (k m doubles, GS_ERR_NOMEM naming the file when they do not
 * fit). GS_ERR_FORMAT names the file when it is not a k x m array; a read
 * gap holding a NaN or Inf is GS_ERR_NONFINITE with field "gaps[i][j]". */
gs_err gs_gap_source_npy(const char *path, gs_gap_source *src, gs_error *err);
/* Keep the first `limit` gaps of src (limit < 1: every gap). A source left
 * without a gap is GS_ERR_INVALID "<path> holds no gap vector" (field
 * "gaps"): gapsim-batch and gapsim-mpi say the same. */
gs_err gs_gap_source_limit(gs_gap_source *src, long limit, const char *path, gs_error *err);
/* A --limit value of gapsim-batch and gapsim-mpi: a whole number of gaps in
 * [1, 2^31-1]: 0 and *k set, or -1 (the message says it is not
 * GS_GAP_LIMIT_WHAT). */
int gs_gap_limit_parse(const char *s, long *k);
#define GS_GAP_LIMIT_WHAT "a number of gaps in [1, 2147483647]"
/* k x m row-major doubles in memory (borrowed). */
gs_err gs_gap_source_mem(const double *G, int k, int m, gs_gap_source *src, gs_error *err);
void gs_gap_source_close(gs_gap_source *src);

/* ---- the files of a run --------------------------------------------------- */

/* The files a command line names (NULL: not given). side: gapsim-mpi's
 * completion map beside out. */
typedef struct {
    const char *model, *gaps, *patterns, *factors, *out, *side, *summary;
    /* the files the model references (its gs_model files, n_model_files),
     * inputs as the model: NULL before the model is read */
    char *const *model_files;
    int n_model_files;
} gs_run_files;

/* Before anything is written: refuse an output (out, side, summary; factors
 * when the file is not there: the run saves it) that is the same file
 * (fileio.h gs_file_same: the inode, through links; a new name) as an input
 * (model and the files it references, gaps, patterns; factors when the file
 * is there: the run loads it)
 * or as another output. An output that exists and is not a regular file (a
 * device, a FIFO: written into, never replaced) is not compared, nor is an
 * input that does not exist (its read reports it). GS_ERR_INVALID naming
 * both options and paths. O(files^2) stat calls. */
gs_err gs_run_check_files(const gs_run_files *f, gs_error *err);

/* ---- results, sink, policy, control ----------------------------------------- */

typedef struct {
    int row, gap, pattern;
    const double *g, *w, *lam;  /* m each (the slot's buffers: valid during the call) */
    const gs_solve_info *info;
} gs_run_result;

typedef struct {
    gs_err (*put)(void *ctx, int slot, const gs_run_result *r, gs_error *err);
    /* rows[0..n): the rows of the chunk that ran, in the order they ran
     * (results given by the policy included). Called only when n > 0. */
    gs_err (*commit)(void *ctx, int slot, const int *rows, int n, gs_error *err);
    void *ctx;
} gs_result_sink;

typedef struct {
    void (*order)(void *ctx, int *rows, int n);
    /* Fill *warm (borrowed until done) or leave it empty for a cold start;
     * set *have = 1 when the result of the row is known already (the policy
     * hands it to its sink itself: the row is not solved, sink.put is not
     * called, the row counts as run). */
    gs_err (*start)(void *ctx, int slot, int row, const double *g, gs_warm *warm, int *have,
                    gs_error *err);
    void (*done)(void *ctx, int slot, int row);
    void *ctx;
} gs_run_policy;

typedef struct {
    int (*stop)(void *ctx, int ran_in_chunk); /* non-zero: the chunk ends before this row */
    void (*progress)(void *ctx, int slot, int rows_committed);
    void *ctx;
} gs_run_control;

typedef struct {
    const gs_precomp *pc;
    gs_solve_opts opts;          /* opts.warm is set per row by the policy */
    int n_patterns;              /* >= 1 */
    const double *loads;         /* n_patterns x m pair loads (NULL: none) */
    const unsigned char *eq;     /* m permanently fastened flags (NULL: none) */
    double row_timeout;          /* s: each row's solve gets the deadline start + this
                                    (opts.deadline; 0: none) */
    gs_chain_mode chain;         /* chained warm starts (chain.h; default off: every row
                                    cold, bit-reproducible) */
    gs_gap_source src;
    gs_result_sink sink;
    gs_run_policy policy;
    gs_run_control ctl;
} gs_run;

static inline long long gs_run_rows(const gs_run *run)
{
    return (long long)run->n_patterns * run->src.k;
}

/* The memory sink: row r's residual gaps at W + r m (and its multipliers at
 * lam + r m when asked), its info at info[r], ran[r] = 1 once stored. */
typedef struct {
    long long rows;
    int m;
    double *W, *lam;
    gs_solve_info *info;
    unsigned char *ran;
} gs_mem_sink;
gs_err gs_mem_sink_init(gs_mem_sink *s, long long rows, int m, int with_lam,
                        gs_result_sink *sink, gs_error *err);
void gs_mem_sink_free(gs_mem_sink *s);

/* ---- one thread's workspace and one chunk ------------------------------------- */

typedef struct {
    gs_solver *sv;
    int own;                 /* sv created here (freed by gs_run_slot_free) */
    gs_chain *chain;         /* the chain state when the run chains (made by gs_run_chunk) */
    double *g, *w, *lam;     /* m each */
    int m;
} gs_run_slot;

/* sv: a solver of pc to borrow (gapsimd keeps one per worker), or NULL to
 * create one. */
gs_err gs_run_slot_init(gs_run_slot *s, const gs_precomp *pc, gs_solver *sv, gs_error *err);
void gs_run_slot_free(gs_run_slot *s);

/* Run rows[0..cnt) (the policy or the chain may reorder them in place) on slot s (index
 * slot): for each row, unless ctl.stop says to end the chunk: read the gap,
 * ask the policy, solve, put; then commit the rows that ran. *ran = rows
 * committed (rows[0..*ran) in run order; the rest did not run). An error of
 * the source, solver or sink ends the chunk: rows run before it are still
 * committed unless the commit itself fails (then *ran = 0). */
gs_err gs_run_chunk(const gs_run *run, gs_run_slot *s, int slot, int *rows, int cnt, int *ran,
                    gs_error *err);

/* ---- a pool of threads pulling chunks ----------------------------------------- */

typedef struct {
    /* Up to cap rows of the next chunk for a worker; 0: no more work (the
     * worker ends). May block. Thread-safe. */
    int (*next)(void *ctx, int slot, int *rows, int cap);
    void *ctx;
} gs_chunk_feed;

typedef struct gs_run_pool gs_run_pool;

/* Start T worker threads (each with its own slot) running chunks of at most
 * `chunk` rows from feed (NULL: every row in index order). The first error
 * stops every worker at its next chunk. */
gs_err gs_run_start(const gs_run *run, int threads, int chunk, const gs_chunk_feed *feed,
                    gs_run_pool **out, gs_error *err);
/* Wait for the workers; the first error of any of them (the pool is freed). */
gs_err gs_run_wait(gs_run_pool *p, gs_error *err);
/* 1 if a worker has failed (the feed may stop handing out work). */
int gs_run_failed(gs_run_pool *p);
/* Workers still running (0: gs_run_wait will not block). */
int gs_run_active(gs_run_pool *p);

#endif
