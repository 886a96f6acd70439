/*
 * bench_out.h -- gapsim-bench's files: --csv and --json (one row per variant
 * and fraction) and --times (one row per variant and gap).
 *
 * Owns: their formats and their atomic writing. Each file is opened before
 * the run (an unwritable path fails before the work) as a temporary file
 * beside its target (core/fileio.h) and renamed over it when the run
 * completes: a run that fails half-way leaves no truncated file and the
 * previous one, if any, in place. Times and the bound are written at full
 * precision (%.17g, in ms), so that ratio = median_ms / bound_median_ms in
 * the file; JSON strings are escaped and numbers that are not finite (the
 * deviations and the bound under --no-ref) are null.
 */
#ifndef GS_BENCH_OUT_H
#define GS_BENCH_OUT_H

#include "bench_opts.h"
#include "fileio.h"
#include "gs_error.h"
#include "solver.h"

/* One variant at one fraction. */
typedef struct {
    double fraction;
    const char *method, *form, *label;
    int gaps, optimal;
    double median, mean, p95, max; /* s per solve */
    double iter, cg, nact;         /* means per solve */
    double dx, dw;                 /* largest deviations from the reference, mm (NaN: none) */
    double bound;                  /* s, median of the bound over the gaps (NaN: none) */
} bench_row;

typedef struct {
    gs_wfile csv, json, times;
    int has_csv, has_json, has_times, json_rows;
    int oom; /* a JSON text could not be built: the commit fails */
} bench_out;

/* Open the files a asks for (their headers are written by bench_out_begin). */
gs_err bench_out_open(bench_out *o, const bench_args *a, gs_error *err);
/* The headers: the model's name, sizes, the gaps of the run, one Cholesky of Q (s). */
void bench_out_begin(bench_out *o, const char *model, int n, int m, int k, double chol_q);
void bench_out_row(bench_out *o, const bench_row *r);
/* One solve of --times: gap r of the variant label at a fraction. */
void bench_out_time(bench_out *o, double fraction, const char *label, int r,
                    const gs_solve_info *info);
/* Finish and rename every file into place (write errors surface here); on
 * a failure the files not yet renamed are removed. */
gs_err bench_out_commit(bench_out *o, gs_error *err);
/* Remove the temporary files (no-op on committed or never opened ones). */
void bench_out_abort(bench_out *o);

#endif
