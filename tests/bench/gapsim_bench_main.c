/*
 * gapsim_bench_main.c -- `gapsim-bench`: per-solve speed and accuracy of every
 * solver x formulation on one assembly and a gap cloud, single-threaded.
 *
 * For each fastener fraction (one, or the sweep 0/10/50/100% = the paper's
 * Fig. 9), every gap is solved by the reference oracle and by each variant;
 * printed per variant: median / p95 / max time per solve, mean iterations,
 * mean n_act, how many optimal, the max deviation from the reference in x and
 * w (mm), and the ratio of the median time to the bound
 *     one Cholesky of Q_CC + one product Q[:, C] lam   (C = final contact set)
 * measured per gap (its median is printed), and the time of one Cholesky of
 * the whole Q for comparison. Then auto's mean against the single variants
 * on auto's gaps, and the warm-start experiments (bench_exp.h).
 * A variant is method[:form][:option...][@K] (bench_opts.h); @K runs it on
 * the first K gaps only (for the slow ones). --fractions gives the sweep
 * (time vs n_act, the paper's Fig. 9), --dist the time distribution per
 * variant (Fig. 11), --times the per-gap rows, --check TOL the acceptance
 * verdict (every solve optimal, x and w within TOL mm of the reference).
 * Output: a table on stdout, optionally CSV and JSON files (bench_out.h).
 * Medians and ranks: bench_stats.h. Timing is the measurement here; tests
 * never assert times.
 *
 * This file: loading the model and the cloud, the per-fraction table and the
 * comparison of auto. Exit status: 0, 1 (a file, the memory or a solve
 * failed), 2 (a bad command line), 3 (--check: a row failed).
 */
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_exp.h"
#include "bench_opts.h"
#include "bench_out.h"
#include "bench_stats.h"
#include "fileio.h"
#include "generator.h"
#include "linalg.h"
#include "memlimit.h"
#include "model_json.h"
#include "npy.h"
#include "refsolve.h"
#include "solver.h"

/* One run: the assembly, the gaps, the outputs and the per-fraction scratch. */
typedef struct {
    const bench_args *a;
    const bench_variant *vars;
    int nv, k, m, n;
    gs_model *mdl;
    gs_precomp *pc;
    double *G; /* k x m (a --gaps file may hold more rows) */
    bench_out out;
    unsigned char *inst;
    double *load, *LR, *WR, *lam, *w, *x, *xr, *tt, *tb, *T, *WC, *QCC, *QC;
    int *C, *KV, *order;
    gs_solve_info *PI; /* --interleave: per variant and gap, the timed solve's info */
    gs_solver *sv, *svw;
    char labels[BENCH_MAX_VARIANTS][64];
    int rows_failed, rows_checked;
    double sweep_auto, sweep_best, sweep_gapbest; /* sums of means over fractions */
    int sweep_nf;
} bench_run;

/* Solve --repeat times and keep the shortest time (thread CPU with --clock
 * cpu) in info->time; info and lam / w are the last solve's. */
static gs_err timed_solve(const bench_args *a, gs_solver *sv, const gs_problem *pb,
                          const gs_solve_opts *o, double *lam, double *w, gs_solve_info *info,
                          gs_error *e)
{
    double tmin = INFINITY;
    for (int rep = 0; rep < a->repeat; rep++) {
        const double c0 = a->cpu_clock ? gs_thread_cpu() : 0.0;
        const gs_err rc = gs_solve(sv, pb, o, lam, w, NULL, info, e);
        if (rc != GS_OK)
            return rc;
        tmin = fmin(tmin, a->cpu_clock ? gs_thread_cpu() - c0 : info->time);
    }
    info->time = tmin;
    return GS_OK;
}

/* --dump-qp DIR: the dual problems of this fraction as .npy files, for
 * timing other solvers on the same data (tests/bench/cvxopt_compare.py):
 * Q.npy (m x m, once), p_F.npy (k x m: p = u0 + Q load - g per gap) and,
 * with reference solves, lam_F.npy (k x m, the oracle's multipliers); F is
 * the fraction with two decimals. The dual is min 1/2 lam'Q lam - p'lam,
 * lam >= 0, and w = Q lam - p. */
static gs_err dump_qp(const char *dir, const gs_precomp *pc, const double *load, const double *G,
                      int k, const double *LR, double frac, int first, gs_error *err)
{
    const int m = pc->m;
    char path[4096];
    size_t shape[2] = {(size_t)k, (size_t)m};
    if (first) {
        size_t qs[2] = {(size_t)m, (size_t)m}; /* symmetric: column-major = row-major */
        snprintf(path, sizeof path, "%s/Q.npy", dir);
        const gs_err rc = gs_npy_write_file(path, pc->Q, 2, qs, err);
        if (rc)
            return rc;
    }
    double *P = malloc((size_t)k * m * sizeof *P), *work = malloc((size_t)m * sizeof *work);
    if (!P || !work) {
        free(P);
        free(work);
        return gs_errorf(err, GS_ERR_NOMEM, "dump-qp", "out of memory");
    }
    for (int r = 0; r < k; r++) {
        gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
        gs_problem_dual_data(&pb, P + (size_t)r * m, NULL, work);
    }
    snprintf(path, sizeof path, "%s/p_%.2f.npy", dir, frac);
    gs_err rc = gs_npy_write_file(path, P, 2, shape, err);
    if (!rc && LR) {
        snprintf(path, sizeof path, "%s/lam_%.2f.npy", dir, frac);
        rc = gs_npy_write_file(path, LR, 2, shape, err);
    }
    free(P);
    free(work);
    return rc;
}

/* The model: read (--model) or generated. 0, or 1 after the message. */
static int load_model(const bench_args *a, gs_model **mdl)
{
    gs_error e;
    if (a->model_path) {
        if (gs_model_read_json(a->model_path, NULL, mdl, &e) != GS_OK) {
            gs_file_error_context(&e, a->model_path); /* the path, once */
            fprintf(stderr, "gapsim-bench: --model: %s%s%s: %s\n", gs_err_name(e.code),
                    e.field[0] ? " at " : "", e.field, e.msg);
            return 1;
        }
        return 0;
    }
    gs_gen_params gp;
    if (a->small)
        gs_gen_small_params(a->kind, &gp);
    else
        gs_gen_default_params(a->kind, &gp);
    gp.compute_cond = 0;
    if (gs_gen_assembly(&gp, mdl, NULL, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: generator: %s\n", e.msg);
        return 1;
    }
    return 0;
}

/* Whether the run's arrays of k gaps fit in the memory this process may use
 * (core/memlimit.h): the cloud, the reference solutions, the cold residual
 * gaps of --cloud, the stored solutions of --moves, the times. 0, or 1 after
 * the message. */
static int check_memory(const bench_args *a, int k, int m, int nv)
{
    const double km = 8.0 * k * m;
    double need = km * (1 + (a->no_ref ? 0 : 2) + (a->cloud ? 1 : 0) + (a->moves ? 1 : 0));
    need += 8.0 * k * (nv + 2 + (a->warm_seq ? 60 : 0) + 4.0 * a->moves);
    if (a->interleave)
        need += (double)sizeof(gs_solve_info) * k * nv;
    gs_memlimit ml;
    gs_memlimit_get(&ml);
    if (ml.bytes == 0 || need <= (double)ml.bytes)
        return 0;
    fprintf(stderr, "gapsim-bench: %d gaps of %d pairs need about %.3g GB (the cloud, the "
                    "reference solutions, the times), more than the %.3g GB of %s: fewer "
                    "--ngaps\n",
            k, m, need / 1e9, (double)ml.bytes / 1e9, ml.source);
    return 1;
}

/* The gap cloud: --gaps (every row, or the first --ngaps) or generated.
 * 0, or 1 after the message. */
static int load_gaps(const bench_args *a, const gs_model *mdl, int nv, double **G, int *k)
{
    const int m = mdl->m;
    gs_error e;
    if (a->gaps_path) {
        gs_npy_info ni;
        if (gs_npy_read_file(a->gaps_path, (size_t)1 << 31, G, &ni, &e) != GS_OK) {
            gs_file_error_context(&e, a->gaps_path);
            fprintf(stderr, "gapsim-bench: --gaps: %s\n", e.msg);
            return 1;
        }
        const size_t rows = ni.ndim == 2 ? ni.shape[0] : 1;
        const size_t cols = ni.ndim == 2 ? ni.shape[1] : ni.shape[0];
        if (rows == 0 || cols == 0) {
            fprintf(stderr, "gapsim-bench: --gaps %s holds no gap vector (%zu x %zu)\n",
                    a->gaps_path, rows, cols);
            return 1;
        }
        if (cols != (size_t)m) {
            fprintf(stderr, "gapsim-bench: --gaps %s: rows of %zu values, not a k x %d gap "
                            "cloud of this model (m = %d pairs)\n",
                    a->gaps_path, cols, m, m);
            return 1;
        }
        if (rows > (size_t)INT_MAX) {
            fprintf(stderr, "gapsim-bench: --gaps %s: %zu rows, more than %d\n", a->gaps_path,
                    rows, INT_MAX);
            return 1;
        }
        *k = rows > (size_t)a->ngaps && a->ngaps_given ? a->ngaps : (int)rows;
        return check_memory(a, *k, m, nv);
    }
    *k = a->ngaps;
    if (check_memory(a, *k, m, nv))
        return 1;
    if (!(*G = malloc((size_t)*k * m * sizeof **G))) {
        fprintf(stderr, "gapsim-bench: gap cloud: out of memory for %d gaps of %d pairs "
                        "(%.3g GB)\n",
                *k, m, 8e-9 * *k * m);
        return 1;
    }
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    cp.scatter = a->scatter;
    if (gs_gen_gap_cloud(mdl, *k, a->seed, &cp, *G, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: gap cloud: %s\n", e.msg);
        return 1;
    }
    return 0;
}

/* The per-run arrays. 0, or 1 after the message. */
static int alloc_run(bench_run *R)
{
    const bench_args *a = R->a;
    const size_t k = (size_t)R->k, m = (size_t)R->m, n = (size_t)R->n, nv = (size_t)R->nv;
    gs_error e;
    R->inst = calloc((size_t)R->mdl->n_fast + 1, 1);
    R->load = malloc(m * sizeof *R->load);
    R->LR = a->no_ref ? NULL : malloc(k * m * sizeof *R->LR);
    R->WR = a->no_ref ? NULL : malloc(k * m * sizeof *R->WR);
    R->lam = malloc(m * sizeof *R->lam);
    R->w = malloc(m * sizeof *R->w);
    R->x = malloc(n * sizeof *R->x);
    R->xr = malloc(n * sizeof *R->xr);
    R->tt = malloc(k * sizeof *R->tt);
    R->tb = malloc(k * sizeof *R->tb);
    R->T = malloc(nv * k * sizeof *R->T);
    R->PI = a->interleave ? calloc(nv * k, sizeof *R->PI) : NULL;
    R->KV = malloc(nv * sizeof *R->KV);
    R->QCC = malloc(m * m * sizeof *R->QCC);
    R->QC = malloc(m * m * sizeof *R->QC);
    R->C = malloc(m * sizeof *R->C);
    R->WC = a->cloud ? malloc(k * m * sizeof *R->WC) : NULL;
    R->order = a->cloud ? malloc(k * sizeof *R->order) : NULL;
    R->sv = gs_solver_new(R->pc, &e);
    R->svw = gs_solver_new(R->pc, &e); /* warm runs: carries its factor */
    if (!R->inst || !R->load || (!a->no_ref && (!R->LR || !R->WR)) || !R->lam || !R->w ||
        !R->x || !R->xr || !R->tt || !R->tb || !R->T || (a->interleave && !R->PI) || !R->KV ||
        !R->QCC || !R->QC || !R->C || (a->cloud && (!R->WC || !R->order)) || !R->sv ||
        !R->svw) {
        fprintf(stderr, "gapsim-bench: out of memory for the run's arrays (%d gaps, m = %d)\n",
                R->k, R->m);
        return 1;
    }
    if (a->cloud && bench_cloud_order(R->G, R->k, R->m, R->order, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: %s\n", e.msg);
        return 1;
    }
    return 0;
}

static void free_run(bench_run *R)
{
    gs_solver_free(R->sv);
    gs_solver_free(R->svw);
    free(R->inst);
    free(R->load);
    free(R->LR);
    free(R->WR);
    free(R->lam);
    free(R->w);
    free(R->x);
    free(R->xr);
    free(R->tt);
    free(R->tb);
    free(R->T);
    free(R->PI);
    free(R->KV);
    free(R->QCC);
    free(R->QC);
    free(R->C);
    free(R->WC);
    free(R->order);
    free(R->G);
    gs_precomp_free(R->pc);
    gs_model_free(R->mdl);
}

/* Mean time of variant vi over the first kk gaps (s). */
static double mean_time(const bench_run *R, int vi, int kk)
{
    double s = 0;
    for (int r = 0; r < kk; r++)
        s += R->T[(size_t)vi * R->k + r];
    return s / kk;
}

/* auto (variant ai) against the single variants on the same gaps: auto's
 * first ka gaps against the variants run on at least those (their means
 * and the per-gap best of them), then every variant on the gaps both ran. */
static void compare_auto(bench_run *R, int ai)
{
    const int ka = R->KV[ai];
    const double auto_mean = mean_time(R, ai, ka);
    double best_mean = INFINITY, gapbest = 0;
    int best = -1;
    for (int vi = 0; vi < R->nv; vi++) {
        if (R->vars[vi].method == GS_METHOD_AUTO || R->KV[vi] < ka)
            continue;
        const double mv = mean_time(R, vi, ka);
        if (mv < best_mean)
            best_mean = mv, best = vi;
    }
    if (best >= 0) {
        for (int r = 0; r < ka; r++) {
            double b = INFINITY;
            for (int vi = 0; vi < R->nv; vi++)
                if (R->vars[vi].method != GS_METHOD_AUTO && R->KV[vi] >= ka)
                    b = fmin(b, R->T[(size_t)vi * R->k + r]);
            gapbest += b / ka;
        }
        printf("  auto mean / best single variant mean (%s) = %.2f; / per-gap best of the "
               "variants = %.2f (on auto's %d gap%s)\n",
               R->labels[best], auto_mean / best_mean, auto_mean / gapbest, ka,
               ka == 1 ? "" : "s");
        R->sweep_auto += auto_mean;
        R->sweep_best += best_mean;
        R->sweep_gapbest += gapbest;
        R->sweep_nf++;
    }
    /* every single variant against auto on the gaps both ran (the first min(K, ka)) */
    double worst = 0;
    int wv = -1, wk = 0;
    for (int vi = 0; vi < R->nv; vi++) {
        if (R->vars[vi].method == GS_METHOD_AUTO)
            continue;
        const int kk = R->KV[vi] < ka ? R->KV[vi] : ka;
        const double sv = mean_time(R, vi, kk), sa = mean_time(R, ai, kk);
        if (sv > 0 && sa / sv > worst)
            worst = sa / sv, wv = vi, wk = kk;
    }
    if (wv >= 0)
        printf("  auto mean / best single variant mean on the same gaps = %.2f (%s, %d gap%s)\n",
               worst, R->labels[wv], wk, wk == 1 ? "" : "s");
}

/* Reference solves and the bound of one fraction. bound: the median bound
 * (NaN under --no-ref). 0, or 1 after the message. */
static int reference(bench_run *R, double frac, double *bound)
{
    const bench_args *a = R->a;
    const int k = R->k, m = R->m;
    double act_sum = 0, tref_sum = 0;
    *bound = NAN;
    for (int r = 0; r < k && !a->no_ref; r++) {
        gs_problem pb = {.pc = R->pc, .g = R->G + (size_t)r * m, .load = R->load};
        gs_ref_info ri;
        gs_error e;
        if (gs_ref_solve(&pb, NULL, R->LR + (size_t)r * m, R->WR + (size_t)r * m, &ri, &e) !=
            GS_OK) {
            fprintf(stderr, "gapsim-bench: reference solve of gap %d: %s\n", r, e.msg);
            return 1;
        }
        act_sum += ri.n_act;
        tref_sum += ri.time;
        R->tb[r] = bench_bound_time(R->pc, R->LR + (size_t)r * m, R->QCC, R->QC, R->C, R->w);
    }
    const int installed = gs_gen_pattern_count(R->mdl->n_fast, frac);
    if (a->no_ref) {
        printf("\nfraction %.2f (%d of %d fasteners): no reference solves\n", frac, installed,
               R->mdl->n_fast);
        return 0;
    }
    *bound = bench_median_of(R->tb, k);
    printf("\nfraction %.2f (%d of %d fasteners): mean n_act %.1f; bound = Cholesky of Q_CC + "
           "Q[:,C] lam: median %.3f ms (reference oracle mean %.1f ms)\n",
           frac, installed, R->mdl->n_fast, act_sum / k, 1e3 * *bound, 1e3 * tref_sum / k);
    return 0;
}

/* One fraction: the reference, the table (one row per variant), auto's
 * comparison and the warm-start experiments. 0, or 1 after the message. */
static int run_fraction(bench_run *R, int fi, double frac)
{
    const bench_args *a = R->a;
    const int k = R->k, m = R->m, n = R->n, nv = R->nv;
    const bench_variant *vars = R->vars;
    gs_error e;
    if (gs_gen_pattern(R->mdl, frac, R->inst, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: fraction %g: %s\n", frac, e.msg);
        return 1;
    }
    gs_model_pattern_load(R->mdl, R->inst, R->load);
    double bound;
    if (reference(R, frac, &bound))
        return 1;
    if (a->dump_dir && dump_qp(a->dump_dir, R->pc, R->load, R->G, k, R->LR, frac, fi == 0, &e)) {
        fprintf(stderr, "gapsim-bench: --dump-qp: %s\n", e.msg);
        return 1;
    }
    printf("  %-32s %5s %9s %9s %9s %9s %7s %8s %6s %7s %7s %10s %10s %8s%s\n", "variant",
           "gaps", "median ms", "mean ms", "p95 ms", "max ms", "iter", "cg", "cg/it", "n_act",
           "optimal", "max|dx| mm", "max|dw| mm", "/bound", a->check_tol > 0 ? "  check" : "");
    for (int vi = 0; vi < nv; vi++)
        R->KV[vi] = bench_variant_gaps(&vars[vi], k);
    if (R->PI) /* --interleave: every variant on gap r, then on gap r + 1 */
        for (int r = 0; r < k; r++)
            for (int q = 0; q < nv; q++) {
                const int vi = (r & 1) ? nv - 1 - q : q; /* alternate who goes first */
                if (r >= R->KV[vi])
                    continue;
                gs_solve_opts o;
                bench_variant_opts(&vars[vi], &o);
                gs_problem pb = {.pc = R->pc, .g = R->G + (size_t)r * m, .load = R->load};
                if (timed_solve(a, R->sv, &pb, &o, R->lam, R->w, &R->PI[(size_t)vi * k + r],
                                &e) != GS_OK) {
                    fprintf(stderr, "gapsim-bench: %s: %s\n", gs_method_name(o.method), e.msg);
                    return 1;
                }
            }
    int auto_vi = -1;
    for (int vi = 0; vi < nv; vi++) {
        gs_solve_opts o;
        bench_variant_opts(&vars[vi], &o);
        const int kv = R->KV[vi];
        double it = 0, cg = 0, na = 0, dx = 0, dw = 0, mean = 0;
        int opt = 0, xover = 0;
        gs_form ran = o.form; /* the formulation that ran (default resolved) */
        int picked[GS_METHOD__COUNT * GS_FORM__COUNT] = {0};
        char *label = R->labels[vi];
        bench_variant_label(&vars[vi], o.form, label, sizeof R->labels[vi]);
        for (int r = 0; r < kv; r++) {
            gs_problem pb = {.pc = R->pc, .g = R->G + (size_t)r * m, .load = R->load};
            gs_solve_info info;
            /* with --interleave: lam and w for the check, the rest timed before */
            if ((R->PI ? gs_solve(R->sv, &pb, &o, R->lam, R->w, NULL, &info, &e)
                       : timed_solve(a, R->sv, &pb, &o, R->lam, R->w, &info, &e)) != GS_OK) {
                fprintf(stderr, "gapsim-bench: %s: %s\n", label, e.msg);
                return 1;
            }
            if (R->PI)
                info = R->PI[(size_t)vi * k + r];
            if (R->WC)
                memcpy(R->WC + (size_t)r * m, R->w, (size_t)m * sizeof *R->w);
            R->tt[r] = info.time;
            R->T[(size_t)vi * k + r] = info.time;
            mean += info.time / kv;
            ran = info.form;
            if (r == 0)
                bench_variant_label(&vars[vi], ran, label, sizeof R->labels[vi]);
            picked[info.method * GS_FORM__COUNT + info.form]++;
            it += info.iterations;
            cg += info.cg_iterations;
            na += info.n_act;
            opt += info.status == GS_STATUS_OPTIMAL;
            xover += info.crossover;
            if (a->no_ref) {
                dx = dw = NAN;
            } else {
                gs_problem_primal(&pb, R->lam, R->x);
                gs_problem_primal(&pb, R->LR + (size_t)r * m, R->xr);
                /* a NaN difference (either answer not a number) counts as
                 * infinite: fmax alone would skip it and pass the row */
                for (int i = 0; i < n; i++) {
                    const double d = fabs(R->x[i] - R->xr[i]);
                    dx = fmax(dx, isnan(d) ? INFINITY : d);
                }
                for (int i = 0; i < m; i++) {
                    const double d = fabs(R->w[i] - R->WR[(size_t)r * m + i]);
                    dw = fmax(dw, isnan(d) ? INFINITY : d);
                }
            }
            bench_out_time(&R->out, frac, label, r, &info);
        }
        bench_sort(R->tt, kv);
        const double med = bench_median(R->tt, kv), p95 = bench_rank(R->tt, kv, 95, 100);
        const double mx = R->tt[kv - 1];
        const char *verdict = "";
        if (a->check_tol > 0) {
            const int ok = opt == kv && dx <= a->check_tol && dw <= a->check_tol;
            verdict = ok ? "  ok" : "  FAIL";
            R->rows_checked++;
            R->rows_failed += !ok;
        }
        printf("  %-32s %5d %9.3f %9.3f %9.3f %9.3f %7.1f %8.1f %6.1f %7.1f %3d/%-3d %10.2e "
               "%10.2e %8.2f%s\n",
               label, kv, 1e3 * med, 1e3 * mean, 1e3 * p95, 1e3 * mx, it / kv, cg / kv,
               it > 0 ? cg / it : 0.0, na / kv, opt, kv, dx, dw, med / bound, verdict);
        if (xover > 0) /* the method's loop did not finish: GI relative did (solver.h) */
            printf("    %d of %d solves finished by GI relative from the method's own "
                   "contact set (crossover)\n",
                   xover, kv);
        if (a->cloud && kv == k) {
            bench_ctx c = {a, R->mdl, R->pc, R->G, R->inst, R->load, R->QCC, R->QC, R->C};
            if (bench_cloud(&c, &vars[vi], k, R->order, R->WC, med, it / kv, bound, R->svw, &e)) {
                fprintf(stderr, "gapsim-bench: --cloud %s: %s\n", label, e.msg);
                return 1;
            }
        }
        if (a->dist) { /* tt is sorted */
            printf("    distribution ms: min %.3f", 1e3 * R->tt[0]);
            for (int d = 1; d <= 9; d++)
                printf(" p%d %.3f", 10 * d, 1e3 * bench_rank(R->tt, kv, d, 10));
            printf(" max %.3f\n", 1e3 * mx);
        }
        if (o.method == GS_METHOD_AUTO) {
            auto_vi = vi;
            printf("         auto picked:");
            for (int q = 0; q < GS_METHOD__COUNT * GS_FORM__COUNT; q++)
                if (picked[q])
                    printf(" %s/%s x%d", gs_method_name((gs_method)(q / GS_FORM__COUNT)),
                           gs_form_name((gs_form)(q % GS_FORM__COUNT)), picked[q]);
            printf("\n");
        }
        fflush(stdout);
        const bench_row row = {frac, gs_method_name(o.method), gs_form_name(ran), label, kv, opt,
                               med, mean, p95, mx, it / kv, cg / kv, na / kv, dx, dw, bound};
        bench_out_row(&R->out, &row);
    }
    if (auto_vi >= 0)
        compare_auto(R, auto_vi);
    bench_ctx c = {a, R->mdl, R->pc, R->G, R->inst, R->load, R->QCC, R->QC, R->C};
    if (a->warm_seq) {
        printf("  warm start on sequences (one fastener added per step, up to 20 steps from "
               "each gap the variant runs on):\n");
        for (int vi = 0; vi < nv; vi++)
            if (bench_warm_seq(&c, &vars[vi], R->KV[vi], R->sv, R->svw, &e) != GS_OK) {
                fprintf(stderr, "gapsim-bench: --warm-seq %s: %s\n", R->labels[vi], e.msg);
                return 1;
            }
    }
    if (a->moves) {
        printf("  pattern-search moves (one installed fastener swapped for a free one), "
               "warm from the pattern's stored solution:\n");
        for (int vi = 0; vi < nv; vi++)
            if (bench_moves(&c, &vars[vi], R->KV[vi], &e) != GS_OK) {
                fprintf(stderr, "gapsim-bench: --moves %s: %s\n", R->labels[vi], e.msg);
                return 1;
            }
    }
    return 0;
}

/* Everything after the command line: 0, 1 or 3 (exit status). */
static int run(bench_run *R)
{
    const bench_args *a = R->a;
    gs_error e;
    /* the output files first: an unwritable path fails before the work */
    if (bench_out_open(&R->out, a, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: %s\n", e.msg);
        return 1;
    }
    if (load_model(a, &R->mdl))
        return 1;
    if (gs_precomp_build(R->mdl, &R->pc, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: precomputation: %s: %s\n", gs_err_name(e.code), e.msg);
        return 1;
    }
    R->m = R->mdl->m;
    R->n = R->mdl->n;
    if (load_gaps(a, R->mdl, R->nv, &R->G, &R->k) || alloc_run(R))
        return 1;
    gs_blas_set_threads(1);
    const int m = R->m;

    /* one Cholesky of the whole Q, for scale */
    double *Qc = malloc((size_t)m * m * sizeof *Qc);
    if (!Qc) {
        fprintf(stderr, "gapsim-bench: out of memory (a copy of Q)\n");
        return 1;
    }
    memcpy(Qc, R->pc->Q, (size_t)m * m * sizeof *Qc);
    const double t0 = gs_now();
    const int qinfo = (int)LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', m, Qc, m);
    const double t_cholQ = qinfo == 0 ? gs_now() - t0 : NAN; /* NaN: Q singular (dependent pairs) */
    free(Qc);

    printf("model  %s: n = %d, m = %d, parts %d, fastener candidates %d, %s joint, "
           "cond_1(K) ~ %.2g, cond_1(Q) ~ %.2g\n",
           R->mdl->name, R->n, m, R->mdl->n_parts, R->mdl->n_fast,
           R->mdl->joint == GS_JOINT_SANDWICH ? "sandwich" : "simple", R->pc->cond_K,
           R->pc->cond_Q);
    char kernel[96];
    printf("       %d gaps, single thread, %s time%s%s; BLAS kernel %s; one Cholesky of Q "
           "(m = %d): %.1f ms\n",
           R->k, a->cpu_clock ? "thread CPU" : "wall", a->repeat > 1 ? " (min of repeats)" : "",
           a->interleave ? ", variants interleaved gap by gap" : "",
           gs_blas_describe(kernel, sizeof kernel), m, 1e3 * t_cholQ);
    if (a->dump_dir && a->no_ref)
        printf("       --dump-qp %s: Q.npy and p_F.npy; no lam_F.npy (no reference solves "
               "under --no-ref)\n",
               a->dump_dir);
    bench_out_begin(&R->out, R->mdl->name, R->n, m, R->k, t_cholQ);

    double fracs[BENCH_MAX_FRACTIONS] = {0.0, 0.1, 0.5, 1.0};
    int nf = a->sweep ? 4 : 1;
    if (a->nfrac > 0) {
        nf = a->nfrac;
        memcpy(fracs, a->fracs, (size_t)nf * sizeof *fracs);
    } else if (!a->sweep) {
        fracs[0] = a->fraction;
    }
    for (int fi = 0; fi < nf; fi++)
        if (run_fraction(R, fi, fracs[fi]))
            return 1;
    if (R->sweep_nf > 1)
        printf("\nover the %d fractions: auto mean / best single variant mean = %.2f; "
               "/ per-gap best = %.2f\n",
               R->sweep_nf, R->sweep_auto / R->sweep_best, R->sweep_auto / R->sweep_gapbest);
    if (a->check_tol > 0)
        printf("\ncheck (optimal, |dx|, |dw| <= %g mm): %d of %d rows pass%s\n", a->check_tol,
               R->rows_checked - R->rows_failed, R->rows_checked,
               R->rows_failed ? "  FAIL" : "");
    fflush(stdout);
    if (bench_out_commit(&R->out, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: %s\n", e.msg);
        return 1;
    }
    return R->rows_failed ? 3 : 0;
}

int main(int argc, char **argv)
{
    static bench_args a; /* static: the variant table is large */
    char msg[512];
    const int prc = bench_parse_args(argc, argv, &a, msg, sizeof msg);
    if (prc == 1) {
        bench_usage(stdout);
        return 0;
    }
    if (prc != 0) {
        fprintf(stderr, "gapsim-bench: %s (see --help)\n", msg);
        return 2;
    }
    static bench_run R;
    R.a = &a;
    R.vars = a.vars;
    R.nv = a.nv;
    const int rc = run(&R);
    bench_out_abort(&R.out); /* no-op after the commit */
    free_run(&R);
    return rc;
}
