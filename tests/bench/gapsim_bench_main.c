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
 * the whole Q for comparison. --warm-seq measures warm starts on sequences of
 * similar problems (pattern changed by one fastener, from each gap):
 * iterations and time, cold vs warm, and the warm median against the bound;
 * --moves the moves of a pattern search warm from stored solutions, with and
 * without the factor cache.
 * A variant is method[:form][:option...][@K]: the NPM linear strategy
 * (combined|chol|cg) and line search (exact|golden|armijo), the IPM normal
 * system (split|jacobi|direct) and start (feasible|infeasible); "*" expands
 * every option the variant leaves unset, "all" is every variant; @K runs it
 * on the first K gaps only (for the slow ones). --fractions gives the sweep
 * (time vs n_act, the paper's Fig. 9), --dist the time distribution per
 * variant (Fig. 11), --times the per-gap rows, --check TOL the acceptance
 * verdict (every solve optimal, x and w within TOL mm of the reference).
 * Output: a table on stdout, optionally CSV and JSON files. Timing is the
 * measurement here; tests never assert times.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chain.h"
#include "fcache.h"
#include "generator.h"
#include "linalg.h"
#include "model_json.h"
#include "npy.h"
#include "refsolve.h"
#include "solver.h"

typedef struct {
    gs_method method;
    gs_form form;
    gs_npm_linear npm_linear;
    gs_linesearch linesearch;
    gs_ipm_linear ipm_linear;
    gs_ipm_start ipm_start;
    int ngaps; /* 0: every gap of the cloud */
} variant;

#define MAX_VARIANTS 64
#define MAX_FRACTIONS 16

typedef struct {
    const char *model_path, *gaps_path, *csv_path, *json_path, *methods, *times_path;
    const char *dump_dir; /* --dump-qp: Q, p and the reference lam as .npy for other solvers */
    gs_gen_kind kind;
    int small, ngaps, sweep, warm_seq, cloud, dist, nfrac, repeat, cpu_clock, no_ref, interleave;
    int moves;
    unsigned long long seed;
    double fraction, check_tol, scatter;
    double fracs[MAX_FRACTIONS];
} bench_args;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: gapsim-bench [--model M.json | --kind lap|sandwich|lap-fine [--small]]\n"
        "                    [--gaps G.npy | --ngaps K --seed S [--scatter S]]\n"
        "                    [--fraction F | --sweep | --fractions F1,F2,...]\n"
        "                    [--methods VARIANT,VARIANT,... | all] [--warm-seq] [--moves N]\n"
        "                    [--cloud] [--dist]\n"
        "                    [--repeat R] [--interleave] [--clock wall|cpu] [--check TOL]\n"
        "                    [--no-ref] [--csv FILE] [--json FILE] [--dump-qp DIR]\n"
        "                    [--times FILE]\n"
        "Defaults: --kind lap, --ngaps 50, --seed 1, --fraction 0.5, every available\n"
        "method x formulation with default options, then auto. Single-threaded\n"
        "(OpenBLAS 1 thread).\n"
        "\n"
        "  --sweep          fastener fractions 0, 0.1, 0.5, 1 (the paper's Fig. 9)\n"
        "  --fractions L    the fractions to run, comma-separated (time vs n_act sweep)\n"
        "  --methods L      comma-separated variants METHOD[:FORM][:OPTION...][@K]\n"
        "                     METHOD  gi lemke npm ipm auto ref\n"
        "                     FORM    dual relative primal (default: the method's)\n"
        "                     npm     combined|chol|cg (reduced Newton system, Table 8)\n"
        "                             exact|golden|armijo (line search, Table 9)\n"
        "                     ipm     mixed|split|jacobi|direct (normal system, Table 5)\n"
        "                             feasible|infeasible (start; default by joint type)\n"
        "                     *       every value of each option left unset\n"
        "                     @K      run this variant on the first K gaps only\n"
        "                   'all' = gi:relative,gi:dual,gi:primal,lemke,npm:dual:*,\n"
        "                   npm:relative:*,npm:primal:*,ipm:*,auto (40 variants); e.g.\n"
        "                   --methods gi:relative,npm:dual:*,npm:relative:*@5,ipm:*@2,auto\n"
        "  --dist           per variant the time distribution: min, deciles, max (Fig. 11)\n"
        "  --repeat R       solve each gap R times and keep the shortest time (suppresses\n"
        "                   noise from other processes; auto learns from every repeat)\n"
        "  --interleave     time the variants gap by gap (every variant on gap 0, then on\n"
        "                   gap 1, ..., alternating their order), so that a drift of the\n"
        "                   machine's speed during the run weighs on all of them alike; the\n"
        "                   times, iterations and picks printed come from that pass, the\n"
        "                   accuracy check from one more solve of each gap per variant\n"
        "  --clock C        wall: the solver's own time (info.time, default); cpu: the\n"
        "                   thread CPU time of the gs_solve call, robust to time-slicing\n"
        "                   on a loaded machine (the solvers run on the calling thread)\n"
        "  --no-ref         skip the reference solves (timing runs only: no deviations, no\n"
        "                   bound, no --check)\n"
        "  --check TOL      acceptance: every solve optimal and max|dx|, max|dw| <= TOL mm\n"
        "                   against the reference; prints a verdict per row and in total,\n"
        "                   exit status 3 if any row fails\n"
        "  --times FILE     per-gap CSV: fraction, variant, gap, time, iterations, CG\n"
        "                   iterations, n_act, status (for plots of Fig. 9 and 11)\n"
        "  --dump-qp DIR    write each fraction's dual problems: DIR/Q.npy, DIR/p_F.npy (one\n"
        "                   row per gap, p = u0 + Q load - g) and DIR/lam_F.npy (the\n"
        "                   oracle's multipliers): min 1/2 lam'Q lam - p'lam, lam >= 0, for\n"
        "                   timing other solvers on the same data (tests/bench/cvxopt_compare.py)\n"
        "  --warm-seq       warm vs cold starts on sequences of patterns differing by one\n"
        "                   fastener, up to 20 steps from each gap of the run: iterations and\n"
        "                   time saved, medians of warm, cold and the bound (separate solver\n"
        "                   workspaces, so the warm one carries its factor from step to step)\n"
        "  --moves N        N pattern-search moves (an installed fastener swapped for a free\n"
        "                   one), each gap warm-started from its stored solution under the\n"
        "                   fraction's pattern, move by move as gapsimd's workers claim them:\n"
        "                   medians cold, warm, warm with the factor cache (solvers/fcache.h),\n"
        "                   ratios to the bound, cache hits\n"
        "  --cloud          per variant also the cloud as a chained run solves it (gapsim-batch\n"
        "                   --chain on): windows of 64 gaps in nearest-neighbour order of their\n"
        "                   sketches, each warm-started from the previous gap's solution on\n"
        "                   one workspace (the factor travels); median per gap, its ratio to\n"
        "                   the bound and to the cold median, max |w - w_cold| (mm)\n"
        "  --scatter S      generated cloud: share of each gap's own field (1: independent\n"
        "                   gaps, default; 0.05-0.2: similar gaps, as of one production line)\n"
        "Columns: median / mean / p95 / max time per solve, mean iterations (GI: active-set\n"
        "changes, Lemke: pivots, NPM: Newton steps, IPM: interior point steps), mean inner\n"
        "CG iterations per solve and per outer iteration (NPM cg/combined, IPM PCG), mean\n"
        "n_act, optimal solves, largest deviation from the reference in x and w (mm), median\n"
        "time / (Cholesky of Q_CC + Q[:,C] lam). After the single variants auto's mean is\n"
        "compared with the best single variant's mean (among those run on every gap),\n"
        "with the per-gap best of them, and with every variant on its own first K gaps.\n");
}

static void variant_label(const variant *v, gs_form ran, char *buf, size_t cap)
{
    int len = snprintf(buf, cap, "%s", gs_method_name(v->method));
    if (v->method != GS_METHOD_AUTO)
        len += snprintf(buf + len, cap - (size_t)len, ":%s", gs_form_name(ran));
    if (v->method == GS_METHOD_NPM)
        snprintf(buf + len, cap - (size_t)len, ":%s:%s", gs_npm_linear_name(v->npm_linear),
                 gs_linesearch_name(v->linesearch));
    else if (v->method == GS_METHOD_IPM)
        snprintf(buf + len, cap - (size_t)len, ":%s:%s", gs_ipm_linear_name(v->ipm_linear),
                 gs_ipm_start_name(v->ipm_start));
}

static void variant_opts(const variant *v, gs_solve_opts *o)
{
    gs_solve_default_opts(o);
    o->method = v->method;
    o->form = v->form;
    o->npm_linear = v->npm_linear;
    o->linesearch = v->linesearch;
    o->ipm_linear = v->ipm_linear;
    o->ipm_start = v->ipm_start;
}


static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The cloud order of a chained run (runner/chain.h): windows of GS_BENCH_WINDOW
 * gaps, each in greedy nearest-neighbour order of the gaps' sketches from
 * the last gap of the window before. O(k (m d + GS_BENCH_WINDOW d)). */
#define GS_BENCH_WINDOW 64
static int cloud_order(const double *G, int k, int m, int *order)
{
    double *sk = malloc(sizeof(double) * GS_SKETCH_DIM * (size_t)k);
    int *perm = malloc(sizeof(int) * GS_BENCH_WINDOW);
    if (!sk || !perm) {
        free(sk);
        free(perm);
        return -1;
    }
    for (int r = 0; r < k; r++)
        gs_sketch(G + (size_t)r * m, m, sk + (size_t)r * GS_SKETCH_DIM);
    const double *last = NULL;
    for (int w0 = 0; w0 < k; w0 += GS_BENCH_WINDOW) {
        int n = k - w0 < GS_BENCH_WINDOW ? k - w0 : GS_BENCH_WINDOW;
        gs_sketch_order(sk + (size_t)w0 * GS_SKETCH_DIM, n, last, perm);
        for (int q = 0; q < n; q++)
            order[w0 + q] = w0 + perm[q];
        last = sk + (size_t)order[w0 + n - 1] * GS_SKETCH_DIM;
    }
    free(sk);
    free(perm);
    return 0;
}

static double pct(double *v, int n, double q) /* sorts v */
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int i = (int)ceil(q * n) - 1;
    return v[i < 0 ? 0 : (i >= n ? n - 1 : i)];
}

/* The bound for one gap: dpotrf of Q_CC + dgemv Q[:, C] lam on the final C. */
static double bound_time(const gs_precomp *pc, const double *lam, double *QCC, double *QC,
                         int *C, double *y)
{
    const int m = pc->m;
    int k = 0;
    for (int i = 0; i < m; i++)
        if (lam[i] != 0.0)
            C[k++] = i;
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        for (int b = 0; b < k; b++) {
            memcpy(QC + (size_t)b * m, pc->Q + (size_t)C[b] * m, (size_t)m * sizeof *QC);
            for (int a = 0; a < k; a++)
                QCC[a + (size_t)b * k] = pc->Q[(size_t)C[b] * m + C[a]];
        }
        double t0 = gs_now();
        if (k)
            LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', k, QCC, k);
        if (k)
            cblas_dgemv(CblasColMajor, CblasNoTrans, m, k, 1.0, QC, m, lam, 1, 0.0, y, 1);
        double t = gs_now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

/* Gaps a variant runs on: its @K, at most the k of the run. */
static int variant_gaps(const variant *v, int k)
{
    return v->ngaps > 0 && v->ngaps < k ? v->ngaps : k;
}

/* Solve --repeat times and keep the shortest time (thread CPU with --clock
 * cpu) in info->time; info and lam / w are the last solve's. */
static gs_err timed_solve(const bench_args *a, gs_solver *sv, const gs_problem *pb,
                          const gs_solve_opts *o, double *lam, double *w, gs_solve_info *info,
                          gs_error *e)
{
    double tmin = INFINITY;
    for (int rep = 0; rep < a->repeat; rep++) {
        double c0 = a->cpu_clock ? gs_thread_cpu() : 0.0;
        gs_err rc = gs_solve(sv, pb, o, lam, w, NULL, info, e);
        if (rc != GS_OK)
            return rc;
        tmin = fmin(tmin, a->cpu_clock ? gs_thread_cpu() - c0 : info->time);
    }
    info->time = tmin;
    return GS_OK;
}

/* Steps of a warm-start sequence per gap: the first WARM_SEQ_STEPS
 * candidates not installed, added one at a time. */
#define WARM_SEQ_STEPS 20

/* --warm-seq: from each of the k gaps, a sequence of patterns adding one
 * fastener per step; each step solved cold (sv) and warm from the previous
 * step's solution (svw, whose factor travels from step to step), and the
 * bound measured on the warm answer. Prints iterations and time saved
 * (means over all steps), the medians of warm, cold and bound, and the
 * largest relative difference of the multipliers. load is restored to the
 * pattern inst. 0, or -1 when out of memory. */
static int warm_seq(const bench_args *a, const variant *v, gs_solver *sv, gs_solver *svw,
                    const gs_model *mdl, const gs_precomp *pc, const double *G, int k,
                    const unsigned char *inst, double *load, double *QCC, double *QC, int *C)
{
    const int m = pc->m, cap = k * WARM_SEQ_STEPS;
    gs_solve_opts o;
    variant_opts(v, &o);
    unsigned char *seq = calloc((size_t)mdl->n_fast + 1, 1), *was = calloc((size_t)m, 1);
    int *act = malloc((size_t)m * sizeof *act);
    double *lam = malloc((size_t)m * sizeof *lam), *lprev = malloc((size_t)m * sizeof *lprev);
    double *w = malloc((size_t)m * sizeof *w);
    double *tc = malloc((size_t)cap * sizeof *tc), *tw = malloc((size_t)cap * sizeof *tw);
    double *tb = malloc((size_t)cap * sizeof *tb);
    int rc = -1;
    if (!seq || !was || !act || !lam || !lprev || !w || !tc || !tw || !tb)
        goto out;
    long it_cold = 0, it_warm = 0, nchg = 0; /* nchg: contact-set changes */
    double sc = 0, sw = 0, dmax = 0;
    int steps = 0;
    gs_form ran = o.form;
    gs_error e;
    for (int g = 0; g < k; g++) {
        gs_problem pb = {.pc = pc, .g = G + (size_t)g * m, .load = load};
        gs_solve_info info;
        memcpy(seq, inst, (size_t)mdl->n_fast);
        gs_model_pattern_load(mdl, seq, load);
        o.warm = NULL;
        gs_solve(svw, &pb, &o, lprev, w, NULL, &info, &e);
        for (int i = 0, n = 0; i < mdl->n_fast && n < WARM_SEQ_STEPS; i++) {
            if (seq[i])
                continue;
            seq[i] = 1;
            n++;
            int na = 0;
            for (int j = 0; j < m; j++) {
                was[j] = lprev[j] != 0.0;
                if (was[j])
                    act[na++] = j;
            }
            gs_model_pattern_load(mdl, seq, load);
            gs_warm warm = {.n_act = na, .act = act, .lam = lprev};
            o.warm = NULL;
            double c0 = gs_thread_cpu();
            gs_solve(sv, &pb, &o, lam, w, NULL, &info, &e);
            tc[steps] = a->cpu_clock ? gs_thread_cpu() - c0 : info.time;
            it_cold += info.iterations;
            o.warm = &warm;
            c0 = gs_thread_cpu();
            gs_solve(svw, &pb, &o, lprev, w, NULL, &info, &e);
            tw[steps] = a->cpu_clock ? gs_thread_cpu() - c0 : info.time;
            it_warm += info.iterations;
            ran = info.form;
            for (int j = 0; j < m; j++) {
                dmax = fmax(dmax, fabs(lprev[j] - lam[j]) / (1 + fabs(lam[j])));
                nchg += (lprev[j] != 0.0) != was[j];
            }
            tb[steps] = bound_time(pc, lprev, QCC, QC, C, w);
            sc += tc[steps];
            sw += tw[steps];
            steps++;
        }
    }
    gs_model_pattern_load(mdl, inst, load);
    rc = 0;
    if (steps == 0) {
        printf("    %-6s every fastener already installed: no sequence to run\n",
               gs_method_name(o.method));
        goto out;
    }
    const double its = 1.0 - (double)it_warm / (it_cold ? it_cold : 1);
    const double ts = sc > 0 ? 1.0 - sw / sc : 0.0;
    const double mw = pct(tw, steps, 0.5), mc = pct(tc, steps, 0.5), mb = pct(tb, steps, 0.5);
    printf("    %-6s %-9s %d steps: iterations cold %.1f warm %.1f (%.0f%% saved), time cold "
           "%.3f ms warm %.3f ms (means; %.0f%% saved; time saved / iterations saved %.2f); "
           "medians: warm %.3f ms = %.2f x bound (%.3f ms), cold %.3f ms; contact-set changes "
           "per step %.1f, max rel |dlam| %.1e\n",
           gs_method_name(o.method), gs_form_name(ran), steps, (double)it_cold / steps,
           (double)it_warm / steps, 100.0 * its, 1e3 * sc / steps, 1e3 * sw / steps, 100.0 * ts,
           its > 0 ? ts / its : 0.0, 1e3 * mw, mw / mb, 1e3 * mb, 1e3 * mc,
           (double)nchg / steps, dmax);
out:
    free(seq);
    free(was);
    free(act);
    free(lam);
    free(lprev);
    free(w);
    free(tc);
    free(tw);
    free(tb);
    return rc;
}

/* --moves N: the moves of a fastener-pattern search as gapsimd runs them.
 * Every gap is solved cold under the pattern inst (the stored solution);
 * move j swaps the j-th installed candidate for the j-th free one, and
 * each gap is solved under it cold (sv), warm from the stored solution on a
 * solver without the factor cache (svn) and on one with it (svc). The moves
 * run move by move over all gaps, as a worker claims them, so a warm
 * workspace last held another gap's set and builds the stored set's factor
 * (svn) or copies it from the cache from the second move on (svc). Prints
 * the medians (cold, warm, warm with the cache, the bound on the warm
 * answer), the cache's hits and the largest relative difference of the
 * multipliers from cold. 0, or -1 when out of memory. */
static int moves_run(const bench_args *a, const variant *v, const gs_model *mdl,
                     const gs_precomp *pc, const double *G, int k, const unsigned char *inst,
                     double *load, double *QCC, double *QC, int *C)
{
    const int m = pc->m, nf = mdl->n_fast, cap = k * a->moves;
    gs_solve_opts o;
    variant_opts(v, &o);
    gs_error e;
    gs_solver *sv = gs_solver_new(pc, &e), *svn = gs_solver_new(pc, &e);
    gs_solver *svc = gs_solver_new(pc, &e);
    gs_fcache *fc = gs_fcache_new((size_t)256 << 20);
    unsigned char *pat = malloc((size_t)nf + 1);
    int *ins = malloc(sizeof(int) * ((size_t)nf + 1)), *out = malloc(sizeof(int) * ((size_t)nf + 1));
    int *act = malloc((size_t)m * sizeof *act);
    double *L0 = malloc((size_t)k * m * sizeof *L0), *lam = malloc((size_t)m * sizeof *lam);
    double *lw = malloc((size_t)m * sizeof *lw), *w = malloc((size_t)m * sizeof *w);
    double *t[4];
    for (int q = 0; q < 4; q++)
        t[q] = malloc((size_t)cap * sizeof *t[q]);
    int rc = -1, ni = 0, no = 0, n = 0;
    if (!sv || !svn || !svc || !fc || !pat || !ins || !out || !act || !L0 || !lam || !lw || !w ||
        !t[0] || !t[1] || !t[2] || !t[3])
        goto done;
    gs_solver_set_fcache(svc, fc);
    for (int c = 0; c < nf; c++)
        inst[c] ? (ins[ni++] = c) : (out[no++] = c);
    rc = 0;
    if (ni == 0 || no == 0) {
        printf("    no swap possible at this fraction (%d installed of %d)\n", ni, nf);
        goto done;
    }
    gs_model_pattern_load(mdl, inst, load);
    for (int g = 0; g < k; g++) {
        gs_problem pb = {.pc = pc, .g = G + (size_t)g * m, .load = load};
        gs_solve_info info;
        o.warm = NULL;
        gs_solve(sv, &pb, &o, L0 + (size_t)g * m, w, NULL, &info, &e);
    }
    double dmax = 0.0;
    gs_form ran = o.form;
    for (int j = 0; j < a->moves; j++) {
        memcpy(pat, inst, (size_t)nf);
        pat[ins[j % ni]] = 0;
        pat[out[(j * 7 + 3) % no]] = 1;
        gs_model_pattern_load(mdl, pat, load);
        for (int g = 0; g < k; g++, n++) {
            gs_problem pb = {.pc = pc, .g = G + (size_t)g * m, .load = load};
            const double *l0 = L0 + (size_t)g * m;
            int na = 0;
            for (int i = 0; i < m; i++)
                if (l0[i] != 0.0)
                    act[na++] = i;
            gs_warm warm = {.n_act = na, .act = act, .lam = l0};
            gs_solve_info info;
            gs_solver *who[3] = {sv, svn, svc};
            for (int q = 0; q < 3; q++) {
                o.warm = q ? &warm : NULL;
                double c0 = gs_thread_cpu();
                gs_solve(who[q], &pb, &o, q ? lw : lam, w, NULL, &info, &e);
                t[q][n] = a->cpu_clock ? gs_thread_cpu() - c0 : info.time;
                ran = info.form;
                for (int i = 0; q && i < m; i++)
                    dmax = fmax(dmax, fabs(lw[i] - lam[i]) / (1 + fabs(lam[i])));
            }
            t[3][n] = bound_time(pc, lw, QCC, QC, C, w);
        }
    }
    gs_model_pattern_load(mdl, inst, load);
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    const double mc = pct(t[0], n, 0.5), mn = pct(t[1], n, 0.5), mw = pct(t[2], n, 0.5);
    const double mb = pct(t[3], n, 0.5);
    printf("    %-6s %-9s %d moves x %d gaps: medians cold %.3f ms, warm %.3f ms (%.2f x bound), "
           "warm with the factor cache %.3f ms (%.2f x bound, %.2f x warm; %ld hits, %ld "
           "misses), bound %.3f ms; max rel |dlam| %.1e\n",
           gs_method_name(o.method), gs_form_name(ran), a->moves, k, 1e3 * mc, 1e3 * mn, mn / mb,
           1e3 * mw, mw / mb,
           mw / mn, st.hits, st.misses, 1e3 * mb, dmax);
done:
    for (int q = 0; q < 4; q++)
        free(t[q]);
    free(pat); free(ins); free(out); free(act); free(L0); free(lam); free(lw); free(w);
    gs_solver_free(sv);
    gs_solver_free(svn);
    gs_solver_free(svc);
    gs_fcache_free(fc);
    return rc;
}

/* One token METHOD[:FORM][:OPTION...][@K]; appends its expansion to v.
 * Returns the new count, -1 on a bad token or overflow. */
static int parse_token(char *tok, variant *v, int nv, int cap)
{
    int ngaps = 0;
    char *at = strchr(tok, '@');
    if (at) {
        *at = '\0';
        char *end;
        long k = strtol(at + 1, &end, 10);
        if (*end || k < 1)
            return -1;
        ngaps = (int)k;
    }
    char *save = NULL, *part = strtok_r(tok, ":", &save);
    gs_method m;
    if (!part || gs_method_parse(part, &m) != 0)
        return -1;
    gs_form f = GS_FORM_DEFAULT;
    int nl = -1, ls = -1, il = -1, st = -1, star = 0;
    while ((part = strtok_r(NULL, ":", &save))) {
        gs_npm_linear v_nl;
        gs_linesearch v_ls;
        gs_ipm_linear v_il;
        gs_ipm_start v_st;
        if (!strcmp(part, "*"))
            star = 1;
        else if (gs_form_parse(part, &f) == 0)
            ;
        else if (m == GS_METHOD_NPM && gs_npm_linear_parse(part, &v_nl) == 0)
            nl = (int)v_nl;
        else if (m == GS_METHOD_NPM && gs_linesearch_parse(part, &v_ls) == 0)
            ls = (int)v_ls;
        else if (m == GS_METHOD_IPM && gs_ipm_linear_parse(part, &v_il) == 0)
            il = (int)v_il;
        else if (m == GS_METHOD_IPM && gs_ipm_start_parse(part, &v_st) == 0)
            st = (int)v_st;
        else
            return -1;
    }
    if (!gs_method_supports(m, f))
        return -1;
    /* ranges of each option: the given value, all values under '*', else the default */
    const int npm = star && m == GS_METHOD_NPM, ipm = star && m == GS_METHOD_IPM;
    int nl0 = nl >= 0 ? nl : 0, nl1 = nl >= 0 ? nl : (npm ? (int)GS_NPM_LIN_CG : 0);
    int ls0 = ls >= 0 ? ls : 0, ls1 = ls >= 0 ? ls : (npm ? (int)GS_LS_ARMIJO : 0);
    int il0 = il >= 0 ? il : 0, il1 = il >= 0 ? il : (ipm ? (int)GS_IPM_DIRECT : 0);
    /* the start: '*' means both explicit starts (auto is one of them) */
    int st0 = st >= 0 ? st : (ipm ? (int)GS_IPM_START_FEASIBLE : 0);
    int st1 = st >= 0 ? st : (ipm ? (int)GS_IPM_START_INFEASIBLE : 0);
    for (int a = nl0; a <= nl1; a++)
        for (int b = ls0; b <= ls1; b++)
            for (int c = il0; c <= il1; c++)
                for (int d = st0; d <= st1; d++) {
                    if (nv >= cap)
                        return -1;
                    v[nv++] = (variant){m, f, (gs_npm_linear)a, (gs_linesearch)b,
                                        (gs_ipm_linear)c, (gs_ipm_start)d, ngaps};
                }
    return nv;
}

static int parse_variants(const char *spec, variant *v, int cap)
{
    int nv = 0;
    if (!spec) { /* every available method x formulation, then auto */
        for (int m = GS_METHOD_GI; m < GS_METHOD__COUNT; m++)
            for (int f = GS_FORM_DUAL; f < GS_FORM__COUNT; f++)
                if (m != GS_METHOD_REF && gs_method_supports((gs_method)m, (gs_form)f) && nv < cap)
                    v[nv++] = (variant){.method = (gs_method)m, .form = (gs_form)f};
        if (nv < cap)
            v[nv++] = (variant){.method = GS_METHOD_AUTO};
        return nv;
    }
    if (!strcmp(spec, "all"))
        spec = "gi:relative,gi:dual,gi:primal,lemke,npm:dual:*,npm:relative:*,npm:primal:*,ipm:*,"
               "auto";
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf)
        return -1;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if ((nv = parse_token(tok, v, nv, cap)) < 0)
            return -1;
    return nv;
}

static int parse_fractions(const char *spec, double *f, int cap)
{
    int n = 0;
    const char *p = spec;
    while (*p) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || x < 0 || x > 1 || n >= cap)
            return -1;
        f[n++] = x;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
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
        gs_err rc = gs_npy_write_file(path, pc->Q, 2, qs, err);
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

int main(int argc, char **argv)
{
    bench_args a = {.kind = GS_GEN_LAP, .ngaps = 50, .seed = 1, .scatter = 1.0, .fraction = 0.5, .repeat = 1};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(o, "--model") && v) a.model_path = v, i++;
        else if (!strcmp(o, "--kind") && v) {
            if (gs_gen_kind_parse(v, &a.kind) != 0) { usage(stderr); return 2; }
            i++;
        } else if (!strcmp(o, "--small")) a.small = 1;
        else if (!strcmp(o, "--gaps") && v) a.gaps_path = v, i++;
        else if (!strcmp(o, "--ngaps") && v) a.ngaps = atoi(v), i++;
        else if (!strcmp(o, "--seed") && v) a.seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(o, "--scatter") && v) a.scatter = atof(v), i++;
        else if (!strcmp(o, "--fraction") && v) a.fraction = atof(v), i++;
        else if (!strcmp(o, "--sweep")) a.sweep = 1;
        else if (!strcmp(o, "--fractions") && v) {
            if ((a.nfrac = parse_fractions(v, a.fracs, MAX_FRACTIONS)) <= 0) {
                fprintf(stderr, "gapsim-bench: bad --fractions '%s'\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(o, "--warm-seq")) a.warm_seq = 1;
        else if (!strcmp(o, "--moves") && v) {
            if ((a.moves = atoi(v)) < 1) { usage(stderr); return 2; }
            i++;
        }
        else if (!strcmp(o, "--cloud")) a.cloud = 1;
        else if (!strcmp(o, "--dist")) a.dist = 1;
        else if (!strcmp(o, "--repeat") && v) a.repeat = atoi(v), i++;
        else if (!strcmp(o, "--interleave")) a.interleave = 1;
        else if (!strcmp(o, "--no-ref")) a.no_ref = 1;
        else if (!strcmp(o, "--clock") && v) {
            if (strcmp(v, "wall") && strcmp(v, "cpu")) { usage(stderr); return 2; }
            a.cpu_clock = !strcmp(v, "cpu");
            i++;
        }
        else if (!strcmp(o, "--check") && v) a.check_tol = atof(v), i++;
        else if (!strcmp(o, "--methods") && v) a.methods = v, i++;
        else if (!strcmp(o, "--csv") && v) a.csv_path = v, i++;
        else if (!strcmp(o, "--json") && v) a.json_path = v, i++;
        else if (!strcmp(o, "--times") && v) a.times_path = v, i++;
        else if (!strcmp(o, "--dump-qp") && v) a.dump_dir = v, i++;
        else { fprintf(stderr, "gapsim-bench: bad option '%s'\n", o); usage(stderr); return 2; }
    }
    variant vars[MAX_VARIANTS];
    int nv = parse_variants(a.methods, vars, MAX_VARIANTS);
    if (a.no_ref && a.check_tol > 0) {
        fprintf(stderr, "gapsim-bench: --check needs the reference (no --no-ref)\n");
        return 2;
    }
    if (nv <= 0 || a.ngaps < 1 || a.repeat < 1) {
        fprintf(stderr, "gapsim-bench: bad --methods, --ngaps or --repeat\n");
        return 2;
    }

    gs_error e;
    gs_model *mdl = NULL;
    if (a.model_path) {
        if (gs_model_read_json(a.model_path, NULL, &mdl, &e) != GS_OK) {
            fprintf(stderr, "gapsim-bench: %s: %s at %s: %s\n", a.model_path,
                    gs_err_name(e.code), e.field, e.msg);
            return 1;
        }
    } else {
        gs_gen_params gp;
        if (a.small)
            gs_gen_small_params(a.kind, &gp);
        else
            gs_gen_default_params(a.kind, &gp);
        gp.compute_cond = 0;
        if (gs_gen_assembly(&gp, &mdl, NULL, &e) != GS_OK) {
            fprintf(stderr, "gapsim-bench: generator: %s\n", e.msg);
            return 1;
        }
    }
    gs_precomp *pc = NULL;
    if (gs_precomp_build(mdl, &pc, &e) != GS_OK) {
        fprintf(stderr, "gapsim-bench: precomputation: %s: %s\n", gs_err_name(e.code), e.msg);
        gs_model_free(mdl);
        return 1;
    }
    const int m = mdl->m, n = mdl->n;
    double *G = NULL;
    int k = a.ngaps;
    if (a.gaps_path) {
        gs_npy_info ni;
        if (gs_npy_read_file(a.gaps_path, (size_t)1 << 31, &G, &ni, &e) != GS_OK ||
            (ni.ndim == 2 ? ni.shape[1] : ni.shape[0]) != (size_t)m) {
            fprintf(stderr, "gapsim-bench: %s: not a k x %d gap cloud\n", a.gaps_path, m);
            return 1;
        }
        k = ni.ndim == 2 ? (int)ni.shape[0] : 1;
        if (a.ngaps < k)
            k = a.ngaps;
    } else {
        G = malloc((size_t)k * m * sizeof *G);
        gs_gen_cloud_params cp;
        gs_gen_cloud_default(&cp);
        cp.scatter = a.scatter;
        if (!G || gs_gen_gap_cloud(mdl, k, a.seed, &cp, G, &e) != GS_OK) {
            fprintf(stderr, "gapsim-bench: gap cloud: %s\n", e.msg);
            return 1;
        }
    }
    gs_blas_set_threads(1);

    /* one Cholesky of the whole Q, for scale */
    double *Qc = malloc((size_t)m * m * sizeof *Qc);
    memcpy(Qc, pc->Q, (size_t)m * m * sizeof *Qc);
    double t0 = gs_now();
    LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', m, Qc, m);
    double t_cholQ = gs_now() - t0;
    free(Qc);

    printf("model  %s: n = %d, m = %d, parts %d, fastener candidates %d, %s joint, "
           "cond_1(K) ~ %.2g, cond_1(Q) ~ %.2g\n",
           mdl->name, n, m, mdl->n_parts, mdl->n_fast,
           mdl->joint == GS_JOINT_SANDWICH ? "sandwich" : "simple", pc->cond_K, pc->cond_Q);
    char kernel[96];
    printf("       %d gaps, single thread, %s time%s%s; BLAS kernel %s; one Cholesky of Q "
           "(m = %d): %.1f ms\n",
           k, a.cpu_clock ? "thread CPU" : "wall", a.repeat > 1 ? " (min of repeats)" : "",
           a.interleave ? ", variants interleaved gap by gap" : "",
           gs_blas_describe(kernel, sizeof kernel), m, 1e3 * t_cholQ);

    FILE *csv = a.csv_path ? fopen(a.csv_path, "w") : NULL;
    FILE *js = a.json_path ? fopen(a.json_path, "w") : NULL;
    FILE *tf = a.times_path ? fopen(a.times_path, "w") : NULL;
    if ((a.csv_path && !csv) || (a.json_path && !js) || (a.times_path && !tf)) {
        fprintf(stderr, "gapsim-bench: cannot open an output file\n");
        return 1;
    }
    if (csv)
        fprintf(csv, "fraction,method,form,variant,gaps,optimal,median_ms,mean_ms,p95_ms,max_ms,"
                     "mean_iter,mean_cg,mean_nact,max_dx_mm,max_dw_mm,bound_median_ms,ratio\n");
    if (js)
        fprintf(js, "{\"model\": \"%s\", \"n\": %d, \"m\": %d, \"gaps\": %d, "
                    "\"chol_Q_ms\": %.4f, \"rows\": [", mdl->name, n, m, k, 1e3 * t_cholQ);
    if (tf)
        fprintf(tf, "fraction,variant,gap,time_ms,iterations,cg_iterations,n_act,status\n");
    int js_first = 1;

    double fracs[MAX_FRACTIONS] = {0.0, 0.1, 0.5, 1.0};
    int nf = a.sweep ? 4 : 1;
    if (a.nfrac > 0) {
        nf = a.nfrac;
        memcpy(fracs, a.fracs, (size_t)nf * sizeof *fracs);
    } else if (!a.sweep) {
        fracs[0] = a.fraction;
    }
    unsigned char *inst = calloc((size_t)mdl->n_fast + 1, 1);
    double *load = malloc((size_t)m * sizeof *load);
    double *LR = malloc((size_t)k * m * sizeof *LR), *WR = malloc((size_t)k * m * sizeof *WR);
    double *lam = malloc((size_t)m * sizeof *lam), *w = malloc((size_t)m * sizeof *w);
    double *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
    double *tt = malloc((size_t)k * sizeof *tt), *tb = malloc((size_t)k * sizeof *tb);
    double *tbest = malloc((size_t)k * sizeof *tbest);
    double *T = malloc((size_t)nv * k * sizeof *T); /* per variant and gap: time, s */
    /* --interleave: per variant and gap, the timed solve's info */
    gs_solve_info *PI = a.interleave ? calloc((size_t)nv * k, sizeof *PI) : NULL;
    if (a.interleave && !PI) {
        fprintf(stderr, "gapsim-bench: out of memory\n");
        return 1;
    }
    int *KV = malloc((size_t)nv * sizeof *KV);
    static char labels[MAX_VARIANTS][64];
    double *QCC = malloc((size_t)m * m * sizeof *QCC), *QC = malloc((size_t)m * m * sizeof *QC);
    int *C = malloc((size_t)m * sizeof *C);
    gs_solver *sv = gs_solver_new(pc, &e);
    gs_solver *svw = gs_solver_new(pc, &e); /* warm runs: carries its factor */
    double *WC = a.cloud ? malloc((size_t)k * m * sizeof *WC) : NULL; /* cold w per gap */
    int *order = malloc((size_t)k * sizeof *order), *wact = malloc((size_t)m * sizeof *wact);
    double *lwarm = malloc((size_t)m * sizeof *lwarm), *tcl = malloc((size_t)k * sizeof *tcl);
    if (a.cloud)
        if (cloud_order(G, k, m, order) != 0) {
            fprintf(stderr, "gapsim-bench: out of memory\n");
            return 1;
        }
    int rows_failed = 0, rows_checked = 0;
    double sweep_auto = 0, sweep_best = 0, sweep_gapbest = 0; /* sums of means over fractions */
    int sweep_nf = 0;

    for (int fi = 0; fi < nf; fi++) {
        if (gs_gen_pattern(mdl, fracs[fi], inst, &e) != GS_OK) {
            fprintf(stderr, "gapsim-bench: %s\n", e.msg);
            return 1;
        }
        gs_model_pattern_load(mdl, inst, load);
        /* reference solutions and the bound */
        double act_sum = 0, tref_sum = 0;
        for (int r = 0; r < k && !a.no_ref; r++) {
            gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
            gs_ref_info ri;
            gs_ref_solve(&pb, NULL, LR + (size_t)r * m, WR + (size_t)r * m, &ri, &e);
            act_sum += ri.n_act;
            tref_sum += ri.time;
            tb[r] = bound_time(pc, LR + (size_t)r * m, QCC, QC, C, w);
        }
        for (int r = 0; r < k; r++)
            tbest[r] = INFINITY;
        if (a.dump_dir && dump_qp(a.dump_dir, pc, load, G, k, a.no_ref ? NULL : LR, fracs[fi], fi == 0,
                                  &e) != GS_OK) {
            fprintf(stderr, "gapsim-bench: --dump-qp: %s\n", e.msg);
            return 1;
        }
        double bound = a.no_ref ? NAN : pct(tb, k, 0.5);
        if (a.no_ref)
            printf("\nfraction %.2f (%d of %d fasteners): no reference solves\n", fracs[fi],
                   gs_gen_pattern_count(mdl->n_fast, fracs[fi]), mdl->n_fast);
        else
            printf("\nfraction %.2f (%d of %d fasteners): mean n_act %.1f; bound = Cholesky of "
                   "Q_CC + Q[:,C] lam: median %.3f ms (reference oracle mean %.1f ms)\n",
                   fracs[fi], gs_gen_pattern_count(mdl->n_fast, fracs[fi]), mdl->n_fast,
                   act_sum / k, 1e3 * bound, 1e3 * tref_sum / k);
        printf("  %-32s %5s %9s %9s %9s %9s %7s %8s %6s %7s %7s %10s %10s %8s%s\n", "variant",
               "gaps", "median ms", "mean ms", "p95 ms", "max ms", "iter", "cg", "cg/it",
               "n_act", "optimal", "max|dx| mm", "max|dw| mm", "/bound",
               a.check_tol > 0 ? "  check" : "");
        if (PI) /* --interleave: every variant on gap r, then on gap r + 1 */
            for (int r = 0; r < k; r++)
                for (int q = 0; q < nv; q++) {
                    const int vi = (r & 1) ? nv - 1 - q : q; /* alternate who goes first */
                    if (r >= variant_gaps(&vars[vi], k))
                        continue;
                    gs_solve_opts o;
                    variant_opts(&vars[vi], &o);
                    gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
                    if (timed_solve(&a, sv, &pb, &o, lam, w, &PI[(size_t)vi * k + r], &e) !=
                        GS_OK) {
                        fprintf(stderr, "gapsim-bench: %s: %s\n", gs_method_name(o.method),
                                e.msg);
                        return 1;
                    }
                }
        double best_mean = INFINITY, auto_mean = -1;
        int auto_vi = -1;
        char best_name[64] = "";
        for (int vi = 0; vi < nv; vi++) {
            gs_solve_opts o;
            variant_opts(&vars[vi], &o);
            const int kv = variant_gaps(&vars[vi], k);
            KV[vi] = kv;
            double it = 0, cg = 0, na = 0, dx = 0, dw = 0, mean = 0;
            int opt = 0, xover = 0;
            gs_form ran = o.form; /* the formulation that ran (default resolved) */
            int picked[GS_METHOD__COUNT * GS_FORM__COUNT] = {0};
            char label[64];
            variant_label(&vars[vi], o.form, label, sizeof label);
            for (int r = 0; r < kv; r++) {
                gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
                gs_solve_info info;
                /* with --interleave: lam and w for the check, the rest timed before */
                if ((PI ? gs_solve(sv, &pb, &o, lam, w, NULL, &info, &e)
                        : timed_solve(&a, sv, &pb, &o, lam, w, &info, &e)) != GS_OK) {
                    fprintf(stderr, "gapsim-bench: %s: %s\n", gs_method_name(o.method), e.msg);
                    return 1;
                }
                if (PI)
                    info = PI[(size_t)vi * k + r];
                if (WC)
                    memcpy(WC + (size_t)r * m, w, (size_t)m * sizeof *w);
                tt[r] = info.time;
                T[(size_t)vi * k + r] = info.time;
                mean += info.time / kv;
                ran = info.form;
                if (r == 0)
                    variant_label(&vars[vi], ran, label, sizeof label);
                picked[info.method * GS_FORM__COUNT + info.form]++;
                it += info.iterations;
                cg += info.cg_iterations;
                na += info.n_act;
                opt += info.status == GS_STATUS_OPTIMAL;
                xover += info.crossover;
                if (o.method != GS_METHOD_AUTO && kv == k && info.time < tbest[r])
                    tbest[r] = info.time;
                if (a.no_ref) {
                    dx = dw = NAN;
                } else {
                    gs_problem_primal(&pb, lam, x);
                    gs_problem_primal(&pb, LR + (size_t)r * m, xr);
                    /* a NaN difference (either answer not a number) counts as
                     * infinite: fmax alone would skip it and pass the row */
                    for (int i = 0; i < n; i++) {
                        const double d = fabs(x[i] - xr[i]);
                        dx = fmax(dx, isnan(d) ? INFINITY : d);
                    }
                    for (int i = 0; i < m; i++) {
                        const double d = fabs(w[i] - WR[(size_t)r * m + i]);
                        dw = fmax(dw, isnan(d) ? INFINITY : d);
                    }
                }
                if (tf)
                    fprintf(tf, "%.2f,%s,%d,%.4f,%d,%d,%d,%s\n", fracs[fi], label, r,
                            1e3 * info.time, info.iterations, info.cg_iterations, info.n_act,
                            gs_status_name(info.status));
            }
            memcpy(labels[vi], label, sizeof label);
            double med = pct(tt, kv, 0.5), p95 = pct(tt, kv, 0.95), mx = tt[kv - 1];
            const char *verdict = "";
            if (a.check_tol > 0) {
                int ok = opt == kv && dx <= a.check_tol && dw <= a.check_tol;
                verdict = ok ? "  ok" : "  FAIL";
                rows_checked++;
                rows_failed += !ok;
            }
            printf("  %-32s %5d %9.3f %9.3f %9.3f %9.3f %7.1f %8.1f %6.1f %7.1f %3d/%-3d %10.2e "
                   "%10.2e %8.2f%s\n",
                   label, kv, 1e3 * med, 1e3 * mean, 1e3 * p95, 1e3 * mx, it / kv, cg / kv,
                   it > 0 ? cg / it : 0.0, na / kv, opt, kv, dx, dw, med / bound, verdict);
            if (xover > 0) /* the method's loop did not finish: GI relative did (solver.h) */
                printf("    %d of %d solves finished by GI relative from the method's own "
                       "contact set (crossover)\n",
                       xover, kv);
            if (a.cloud && kv == k) {
                /* the cloud in order, warm from the previous gap, one workspace */
                double it_c = it, it_w = 0, dwc = 0, tsum = 0;
                int optw = 0, na_prev = 0;
                for (int q = 0; q < k; q++) {
                    int r = order[q];
                    gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
                    gs_warm wm = {.n_act = na_prev, .act = wact, .lam = lwarm};
                    o.warm = q > 0 && na_prev > 0 ? &wm : NULL;
                    gs_solve_info info;
                    double c0 = a.cpu_clock ? gs_thread_cpu() : 0.0;
                    if (gs_solve(svw, &pb, &o, lam, w, NULL, &info, &e) != GS_OK) {
                        fprintf(stderr, "gapsim-bench: %s: %s\n", gs_method_name(o.method), e.msg);
                        return 1;
                    }
                    tcl[q] = a.cpu_clock ? gs_thread_cpu() - c0 : info.time;
                    tsum += tcl[q];
                    it_w += info.iterations;
                    optw += info.status == GS_STATUS_OPTIMAL;
                    for (int i = 0; i < m; i++)
                        dwc = fmax(dwc, fabs(w[i] - WC[(size_t)r * m + i]));
                    memcpy(lwarm, lam, (size_t)m * sizeof *lam);
                    na_prev = 0;
                    for (int i = 0; i < m; i++)
                        if (lam[i] != 0.0)
                            wact[na_prev++] = i;
                }
                o.warm = NULL;
                double cmed = pct(tcl, k, 0.5);
                printf("    cloud in order (warm from the previous gap, factor carried): median "
                       "%.3f ms, mean %.3f ms = %.2f x bound, %.2f x cold median; iterations "
                       "%.1f (cold %.1f); max |w - w_cold| %.1e mm; optimal %d/%d\n",
                       1e3 * cmed, 1e3 * tsum / k, cmed / bound, cmed / med, it_w / k, it_c / k,
                       dwc, optw, k);
            }
            if (a.dist) {
                printf("    distribution ms: min %.3f", 1e3 * tt[0]);
                for (int d = 1; d <= 9; d++)
                    printf(" p%d %.3f", 10 * d, 1e3 * pct(tt, kv, 0.1 * d));
                printf(" max %.3f\n", 1e3 * mx);
            }
            if (o.method == GS_METHOD_AUTO) {
                auto_mean = mean;
                auto_vi = vi;
                printf("         auto picked:");
                for (int q = 0; q < GS_METHOD__COUNT * GS_FORM__COUNT; q++)
                    if (picked[q])
                        printf(" %s/%s x%d", gs_method_name((gs_method)(q / GS_FORM__COUNT)),
                               gs_form_name((gs_form)(q % GS_FORM__COUNT)), picked[q]);
                printf("\n");
            } else if (kv == k && mean < best_mean) {
                best_mean = mean;
                snprintf(best_name, sizeof best_name, "%s", label);
            }
            fflush(stdout);
            if (csv)
                fprintf(csv, "%.2f,%s,%s,%s,%d,%d,%.4f,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,%.3e,%.3e,"
                             "%.4f,%.3f\n",
                        fracs[fi], gs_method_name(o.method), gs_form_name(ran), label, kv, opt,
                        1e3 * med, 1e3 * mean, 1e3 * p95, 1e3 * mx, it / kv, cg / kv, na / kv,
                        dx, dw, 1e3 * bound, med / bound);
            if (js) {
                fprintf(js, "%s\n  {\"fraction\": %.2f, \"method\": \"%s\", \"form\": \"%s\", "
                            "\"variant\": \"%s\", \"gaps\": %d, "
                            "\"optimal\": %d, \"median_ms\": %.4f, \"mean_ms\": %.4f, "
                            "\"p95_ms\": %.4f, "
                            "\"max_ms\": %.4f, \"mean_iter\": %.2f, \"mean_cg\": %.2f, "
                            "\"mean_nact\": %.2f, "
                            "\"max_dx_mm\": %.3e, \"max_dw_mm\": %.3e, \"bound_ms\": %.4f}",
                        js_first ? "" : ",", fracs[fi], gs_method_name(o.method),
                        gs_form_name(ran), label, kv, opt, 1e3 * med, 1e3 * mean, 1e3 * p95,
                        1e3 * mx, it / kv, cg / kv, na / kv, dx, dw, 1e3 * bound);
                js_first = 0;
            }
        }
        if (auto_mean >= 0 && best_mean < INFINITY) {
            double gapbest = 0;
            for (int r = 0; r < k; r++)
                gapbest += tbest[r] / k;
            printf("  auto mean / best single variant mean (%s) = %.2f; "
                   "/ per-gap best of the variants = %.2f\n",
                   best_name, auto_mean / best_mean, auto_mean / gapbest);
            sweep_auto += auto_mean;
            sweep_best += best_mean;
            sweep_gapbest += gapbest;
            sweep_nf++;
        }
        if (auto_vi >= 0 && KV[auto_vi] == k) {
            /* every single variant against auto on the same (first kv) gaps */
            double worst = 0;
            int wv = -1;
            for (int vi = 0; vi < nv; vi++) {
                if (vars[vi].method == GS_METHOD_AUTO)
                    continue;
                double sa = 0, sv_ = 0;
                for (int r = 0; r < KV[vi]; r++) {
                    sa += T[(size_t)auto_vi * k + r];
                    sv_ += T[(size_t)vi * k + r];
                }
                if (sv_ > 0 && sa / sv_ > worst)
                    worst = sa / sv_, wv = vi;
            }
            if (wv >= 0)
                printf("  auto mean / best single variant mean on the same gaps = %.2f (%s, %d "
                       "gaps)\n", worst, labels[wv], KV[wv]);
        }
        if (a.warm_seq) {
            printf("  warm start on sequences (one fastener added per step, up to %d steps "
                   "from each of the %d gaps):\n", WARM_SEQ_STEPS, k);
            for (int vi = 0; vi < nv; vi++)
                if (warm_seq(&a, &vars[vi], sv, svw, mdl, pc, G, k, inst, load, QCC, QC, C) != 0) {
                    fprintf(stderr, "gapsim-bench: out of memory\n");
                    return 1;
                }
        }
        if (a.moves) {
            printf("  pattern-search moves (one installed fastener swapped for a free one), "
                   "warm from the pattern's stored solution:\n");
            for (int vi = 0; vi < nv; vi++)
                if (moves_run(&a, &vars[vi], mdl, pc, G, k, inst, load, QCC, QC, C) != 0) {
                    fprintf(stderr, "gapsim-bench: out of memory\n");
                    return 1;
                }
        }
    }
    if (sweep_nf > 1)
        printf("\nover the %d fractions: auto mean / best single variant mean = %.2f; "
               "/ per-gap best = %.2f\n",
               sweep_nf, sweep_auto / sweep_best, sweep_auto / sweep_gapbest);
    if (a.check_tol > 0)
        printf("\ncheck (optimal, |dx|, |dw| <= %.0e mm): %d of %d rows pass%s\n", a.check_tol,
               rows_checked - rows_failed, rows_checked, rows_failed ? "  FAIL" : "");
    if (tf)
        fclose(tf);
    if (csv)
        fclose(csv);
    if (js) {
        fprintf(js, "\n]}\n");
        fclose(js);
    }
    gs_solver_free(sv);
    gs_solver_free(svw);
    free(WC);
    free(order);
    free(wact);
    free(lwarm);
    free(tcl);
    free(inst); free(load); free(LR); free(WR); free(lam); free(w); free(x); free(xr);
    free(tt); free(tb); free(tbest); free(T); free(PI); free(KV); free(QCC); free(QC); free(C); free(G);
    gs_precomp_free(pc);
    gs_model_free(mdl);
    return rows_failed ? 3 : 0;
}
