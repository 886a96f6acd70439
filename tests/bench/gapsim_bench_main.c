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
 * the whole Q for comparison. --warm-seq measures warm starts on a sequence of
 * similar problems (pattern changed by one fastener): iterations cold vs warm.
 * Output: a table on stdout, optionally CSV and JSON files. Timing is the
 * measurement here; tests never assert times.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generator.h"
#include "linalg.h"
#include "model_json.h"
#include "npy.h"
#include "refsolve.h"
#include "solver.h"

typedef struct { gs_method method; gs_form form; } variant;

typedef struct {
    const char *model_path, *gaps_path, *csv_path, *json_path, *methods;
    gs_gen_kind kind;
    int small, ngaps, sweep, warm_seq;
    unsigned long long seed;
    double fraction;
} bench_args;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: gapsim-bench [--model M.json | --kind lap|sandwich|lap-fine [--small]]\n"
        "                    [--gaps G.npy | --ngaps K --seed S] [--fraction F | --sweep]\n"
        "                    [--methods gi:relative,gi:dual,lemke,...] [--warm-seq]\n"
        "                    [--csv FILE] [--json FILE]\n"
        "Defaults: --kind lap, --ngaps 50, --seed 1, --fraction 0.5, every available\n"
        "method x formulation. Single-threaded (OpenBLAS 1 thread).\n");
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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

static int parse_variants(const char *spec, variant *v, int cap)
{
    int nv = 0;
    if (!spec) { /* every available method x formulation, then auto */
        for (int m = GS_METHOD_GI; m < GS_METHOD__COUNT; m++)
            for (int f = GS_FORM_DUAL; f < GS_FORM__COUNT; f++)
                if (m != GS_METHOD_REF && gs_method_supports((gs_method)m, (gs_form)f) && nv < cap)
                    v[nv++] = (variant){(gs_method)m, (gs_form)f};
        if (nv < cap)
            v[nv++] = (variant){GS_METHOD_AUTO, GS_FORM_DEFAULT};
        return nv;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, ","); tok && nv < cap; tok = strtok(NULL, ",")) {
        char *colon = strchr(tok, ':');
        gs_form f = GS_FORM_DEFAULT;
        if (colon) {
            *colon = '\0';
            if (gs_form_parse(colon + 1, &f) != 0)
                return -1;
        }
        gs_method m;
        if (gs_method_parse(tok, &m) != 0 || !gs_method_supports(m, f))
            return -1;
        v[nv++] = (variant){m, f};
    }
    return nv;
}

int main(int argc, char **argv)
{
    bench_args a = {.kind = GS_GEN_LAP, .ngaps = 50, .seed = 1, .fraction = 0.5};
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
        else if (!strcmp(o, "--fraction") && v) a.fraction = atof(v), i++;
        else if (!strcmp(o, "--sweep")) a.sweep = 1;
        else if (!strcmp(o, "--warm-seq")) a.warm_seq = 1;
        else if (!strcmp(o, "--methods") && v) a.methods = v, i++;
        else if (!strcmp(o, "--csv") && v) a.csv_path = v, i++;
        else if (!strcmp(o, "--json") && v) a.json_path = v, i++;
        else { fprintf(stderr, "gapsim-bench: bad option '%s'\n", o); usage(stderr); return 2; }
    }
    variant vars[32];
    int nv = parse_variants(a.methods, vars, 32);
    if (nv <= 0 || a.ngaps < 1) {
        fprintf(stderr, "gapsim-bench: bad --methods or --ngaps\n");
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
        if (!G || gs_gen_gap_cloud(mdl, k, a.seed, NULL, G, &e) != GS_OK) {
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
    printf("       %d gaps, single thread; one Cholesky of Q (m = %d): %.1f ms\n", k, m,
           1e3 * t_cholQ);

    FILE *csv = a.csv_path ? fopen(a.csv_path, "w") : NULL;
    FILE *js = a.json_path ? fopen(a.json_path, "w") : NULL;
    if (csv)
        fprintf(csv, "fraction,method,form,gaps,optimal,median_ms,p95_ms,max_ms,mean_iter,"
                     "mean_nact,max_dx_mm,max_dw_mm,bound_median_ms,ratio\n");
    if (js)
        fprintf(js, "{\"model\": \"%s\", \"n\": %d, \"m\": %d, \"gaps\": %d, "
                    "\"chol_Q_ms\": %.4f, \"rows\": [", mdl->name, n, m, k, 1e3 * t_cholQ);
    int js_first = 1;

    double fracs[4] = {0.0, 0.1, 0.5, 1.0};
    int nf = a.sweep ? 4 : 1;
    if (!a.sweep)
        fracs[0] = a.fraction;
    unsigned char *inst = calloc((size_t)mdl->n_fast + 1, 1);
    double *load = malloc((size_t)m * sizeof *load);
    double *LR = malloc((size_t)k * m * sizeof *LR), *WR = malloc((size_t)k * m * sizeof *WR);
    double *lam = malloc((size_t)m * sizeof *lam), *w = malloc((size_t)m * sizeof *w);
    double *x = malloc((size_t)n * sizeof *x), *xr = malloc((size_t)n * sizeof *xr);
    double *tt = malloc((size_t)k * sizeof *tt), *tb = malloc((size_t)k * sizeof *tb);
    double *QCC = malloc((size_t)m * m * sizeof *QCC), *QC = malloc((size_t)m * m * sizeof *QC);
    int *C = malloc((size_t)m * sizeof *C);
    gs_solver *sv = gs_solver_new(pc, &e);

    for (int fi = 0; fi < nf; fi++) {
        gs_gen_pattern(mdl, fracs[fi], inst);
        gs_model_pattern_load(mdl, inst, load);
        /* reference solutions and the bound */
        double act_sum = 0, tref_sum = 0;
        for (int r = 0; r < k; r++) {
            gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
            gs_ref_info ri;
            gs_ref_solve(&pb, NULL, LR + (size_t)r * m, WR + (size_t)r * m, &ri, &e);
            act_sum += ri.n_act;
            tref_sum += ri.time;
            tb[r] = bound_time(pc, LR + (size_t)r * m, QCC, QC, C, w);
        }
        double bound = pct(tb, k, 0.5);
        printf("\nfraction %.2f (%d of %d fasteners): mean n_act %.1f; bound = Cholesky of "
               "Q_CC + Q[:,C] lam: median %.3f ms (reference oracle mean %.1f ms)\n",
               fracs[fi], gs_gen_pattern_count(mdl->n_fast, fracs[fi]), mdl->n_fast, act_sum / k,
               1e3 * bound, 1e3 * tref_sum / k);
        printf("  %-6s %-9s %9s %9s %9s %9s %9s %7s %7s %11s %11s %7s\n", "method", "form",
               "median ms", "mean ms", "p95 ms", "max ms", "iter", "n_act", "optimal",
               "max|dx| mm", "max|dw| mm", "/bound");
        double best_mean = INFINITY, auto_mean = -1;
        const char *best_name = "";
        char best_buf[64];
        for (int vi = 0; vi < nv; vi++) {
            gs_solve_opts o;
            gs_solve_default_opts(&o);
            o.method = vars[vi].method;
            o.form = vars[vi].form;
            double it = 0, na = 0, dx = 0, dw = 0, mean = 0;
            int opt = 0;
            gs_form ran = o.form; /* the formulation that ran (default resolved) */
            int picked[GS_METHOD__COUNT * GS_FORM__COUNT] = {0};
            for (int r = 0; r < k; r++) {
                gs_problem pb = {.pc = pc, .g = G + (size_t)r * m, .load = load};
                gs_solve_info info;
                if (gs_solve(sv, &pb, &o, lam, w, NULL, &info, &e) != GS_OK) {
                    fprintf(stderr, "gapsim-bench: %s: %s\n", gs_method_name(o.method), e.msg);
                    return 1;
                }
                tt[r] = info.time;
                mean += info.time / k;
                ran = info.form;
                picked[info.method * GS_FORM__COUNT + info.form]++;
                it += info.iterations;
                na += info.n_act;
                opt += info.status == GS_STATUS_OPTIMAL;
                gs_problem_primal(&pb, lam, x);
                gs_problem_primal(&pb, LR + (size_t)r * m, xr);
                for (int i = 0; i < n; i++)
                    dx = fmax(dx, fabs(x[i] - xr[i]));
                for (int i = 0; i < m; i++)
                    dw = fmax(dw, fabs(w[i] - WR[(size_t)r * m + i]));
            }
            double med = pct(tt, k, 0.5), p95 = pct(tt, k, 0.95), mx = tt[k - 1];
            const char *fname = o.method == GS_METHOD_AUTO ? "picks" : gs_form_name(ran);
            printf("  %-6s %-9s %9.3f %9.3f %9.3f %9.3f %9.1f %7.1f %4d/%-3d %11.2e %11.2e %7.2f\n",
                   gs_method_name(o.method), fname, 1e3 * med, 1e3 * mean, 1e3 * p95,
                   1e3 * mx, it / k, na / k, opt, k, dx, dw, med / bound);
            if (o.method == GS_METHOD_AUTO) {
                auto_mean = mean;
                printf("         auto picked:");
                for (int q = 0; q < GS_METHOD__COUNT * GS_FORM__COUNT; q++)
                    if (picked[q])
                        printf(" %s/%s x%d", gs_method_name((gs_method)(q / GS_FORM__COUNT)),
                               gs_form_name((gs_form)(q % GS_FORM__COUNT)), picked[q]);
                printf("\n");
            } else if (mean < best_mean) {
                best_mean = mean;
                snprintf(best_buf, sizeof best_buf, "%s/%s", gs_method_name(o.method),
                         gs_form_name(ran));
                best_name = best_buf;
            }
            fflush(stdout);
            if (csv)
                fprintf(csv, "%.2f,%s,%s,%d,%d,%.4f,%.4f,%.4f,%.2f,%.2f,%.3e,%.3e,%.4f,%.3f\n",
                        fracs[fi], gs_method_name(o.method), gs_form_name(ran), k, opt,
                        1e3 * med, 1e3 * p95, 1e3 * mx, it / k, na / k, dx, dw, 1e3 * bound,
                        med / bound);
            if (js) {
                fprintf(js, "%s\n  {\"fraction\": %.2f, \"method\": \"%s\", \"form\": \"%s\", "
                            "\"optimal\": %d, \"median_ms\": %.4f, \"p95_ms\": %.4f, "
                            "\"max_ms\": %.4f, \"mean_iter\": %.2f, \"mean_nact\": %.2f, "
                            "\"max_dx_mm\": %.3e, \"max_dw_mm\": %.3e, \"bound_ms\": %.4f}",
                        js_first ? "" : ",", fracs[fi], gs_method_name(o.method),
                        gs_form_name(ran), opt, 1e3 * med, 1e3 * p95, 1e3 * mx, it / k,
                        na / k, dx, dw, 1e3 * bound);
                js_first = 0;
            }
        }
        if (auto_mean >= 0 && best_mean < INFINITY)
            printf("  auto mean / best single method mean (%s) = %.2f\n", best_name,
                   auto_mean / best_mean);
        if (a.warm_seq) {
            /* sequence: pattern changed by one fastener each step; warm from
             * the previous solution vs cold */
            printf("  warm start on a sequence (one fastener added per step, gap 0):\n");
            for (int vi = 0; vi < nv; vi++) {
                gs_solve_opts o;
                gs_solve_default_opts(&o);
                o.method = vars[vi].method;
                o.form = vars[vi].form;
                unsigned char *seq = calloc((size_t)mdl->n_fast + 1, 1);
                memcpy(seq, inst, (size_t)mdl->n_fast);
                int *act = malloc((size_t)m * sizeof *act), na = 0, steps = 0;
                double *lprev = malloc((size_t)m * sizeof *lprev);
                long it_cold = 0, it_warm = 0;
                double tc = 0, tw = 0, dmax = 0;
                gs_problem pb = {.pc = pc, .g = G, .load = load};
                gs_solve_info info;
                gs_solve(sv, &pb, &o, lprev, w, NULL, &info, &e);
                for (int i = 0; i < mdl->n_fast && steps < 20; i++) {
                    if (seq[i])
                        continue;
                    seq[i] = 1;
                    steps++;
                    na = 0;
                    for (int j = 0; j < m; j++)
                        if (lprev[j] != 0.0)
                            act[na++] = j;
                    gs_model_pattern_load(mdl, seq, load);
                    gs_warm warm = {.n_act = na, .act = act, .lam = lprev};
                    o.warm = NULL;
                    gs_solve(sv, &pb, &o, lam, w, NULL, &info, &e);
                    it_cold += info.iterations;
                    tc += info.time;
                    o.warm = &warm;
                    gs_solve(sv, &pb, &o, lprev, w, NULL, &info, &e);
                    it_warm += info.iterations;
                    tw += info.time;
                    for (int j = 0; j < m; j++)
                        dmax = fmax(dmax, fabs(lprev[j] - lam[j]) / (1 + fabs(lam[j])));
                }
                gs_model_pattern_load(mdl, inst, load);
                if (steps == 0) {
                    printf("    %-6s every fastener already installed: no sequence to run\n",
                           gs_method_name(o.method));
                    free(seq);
                    free(act);
                    free(lprev);
                    continue;
                }
                printf("    %-6s %-9s %d steps: iterations cold %.1f warm %.1f (%.0f%% saved), "
                       "time cold %.3f ms warm %.3f ms, max rel |dlam| %.1e\n",
                       gs_method_name(o.method), gs_form_name(info.form), steps,
                       (double)it_cold / steps, (double)it_warm / steps,
                       100.0 * (1.0 - (double)it_warm / (it_cold ? it_cold : 1)),
                       1e3 * tc / steps, 1e3 * tw / steps, dmax);
                free(seq);
                free(act);
                free(lprev);
            }
        }
    }
    if (csv)
        fclose(csv);
    if (js) {
        fprintf(js, "\n]}\n");
        fclose(js);
    }
    gs_solver_free(sv);
    free(inst); free(load); free(LR); free(WR); free(lam); free(w); free(x); free(xr);
    free(tt); free(tb); free(QCC); free(QC); free(C); free(G);
    gs_precomp_free(pc);
    gs_model_free(mdl);
    return 0;
}
