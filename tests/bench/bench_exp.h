/*
 * bench_exp.h -- gapsim-bench's warm-start experiments, each on the gaps a
 * variant runs on (its @K) and printed with the variant's full label:
 *   --warm-seq  sequences of patterns adding one fastener per step, cold vs
 *               warm from the previous step (the factor travels);
 *   --moves N   the moves of a pattern search as gapsimd's workers claim
 *               them, cold, warm from the stored solution, and warm with
 *               the factor cache;
 *   --cloud     the cloud as a chained run solves it: windows of gaps in
 *               nearest-neighbour order of their sketches, each warm from
 *               the previous gap on one workspace.
 * Each prints one line per variant (medians as bench_stats.h takes them,
 * ratios to the median bound). They return GS_OK, or the error of an
 * allocation or a solve (filled in *err, nothing printed).
 */
#ifndef GS_BENCH_EXP_H
#define GS_BENCH_EXP_H

#include "bench_opts.h"
#include "model.h"
#include "precompute.h"
#include "solver.h"

/* Shared state of one fraction: the assembly, the first k gaps (k x m, row
 * major), the fraction's pattern inst and its load (a scratch the
 * experiments change and restore), the bound's scratch (QCC, QC: m x m, C: m). */
typedef struct {
    const bench_args *a;
    const gs_model *mdl;
    const gs_precomp *pc;
    const double *G;
    const unsigned char *inst;
    double *load, *QCC, *QC;
    int *C;
} bench_ctx;

/* --warm-seq for variant v on the first k gaps; sv solves cold, svw warm. */
gs_err bench_warm_seq(const bench_ctx *c, const bench_variant *v, int k, gs_solver *sv,
                      gs_solver *svw, gs_error *err);
/* --moves for variant v on the first k gaps (its own three workspaces). */
gs_err bench_moves(const bench_ctx *c, const bench_variant *v, int k, gs_error *err);

/* The order of a chained run over k gaps (runner/chain.h): windows of 64
 * gaps, each in greedy nearest-neighbour order of the sketches from the
 * last gap of the window before. order: k ints. O(k (m d + 64 d)). */
gs_err bench_cloud_order(const double *G, int k, int m, int *order, gs_error *err);
/* --cloud for variant v on the k gaps in order, warm from the previous gap
 * on svw. WC: the cold residual gaps (k x m), cold_med: the cold median
 * (s), cold_iter: the cold iterations per solve, bound: the median bound (s). */
gs_err bench_cloud(const bench_ctx *c, const bench_variant *v, int k, const int *order,
                   const double *WC, double cold_med, double cold_iter, double bound,
                   gs_solver *svw, gs_error *err);

#endif
