/*
 * bench_exp.c -- --warm-seq, --moves and --cloud of gapsim-bench
 * (bench_exp.h).
 */
#include "bench_exp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "chain.h"
#include "fcache.h"
#include "linalg.h"

/* Steps of a warm-start sequence per gap: the first WARM_SEQ_STEPS
 * candidates not installed, added one at a time. */
#define WARM_SEQ_STEPS 20

static gs_err nomem(gs_error *err, const char *what)
{
    return gs_errorf(err, GS_ERR_NOMEM, "", "%s: out of memory", what);
}

/* Seconds of a solve: the solver's own (info.time) or the thread's CPU time. */
static gs_err solve_timed(const bench_args *a, gs_solver *sv, const gs_problem *pb,
                          const gs_solve_opts *o, double *lam, double *w, gs_solve_info *info,
                          double *t, gs_error *err)
{
    const double c0 = gs_thread_cpu();
    const gs_err rc = gs_solve(sv, pb, o, lam, w, NULL, info, err);
    *t = a->cpu_clock ? gs_thread_cpu() - c0 : info->time;
    return rc;
}

/* From each of the k gaps, a sequence of patterns adding one fastener per
 * step; each step solved cold (sv) and warm from the previous step's
 * solution (svw, whose factor travels from step to step), and the bound
 * measured on the warm answer. Prints iterations and time saved (means over
 * all steps), the medians of warm, cold and bound, and the largest relative
 * difference of the multipliers. The load is restored to the pattern. */
gs_err bench_warm_seq(const bench_ctx *c, const bench_variant *v, int k, gs_solver *sv,
                      gs_solver *svw, gs_error *err)
{
    const gs_model *mdl = c->mdl;
    const int m = c->pc->m;
    const size_t cap = (size_t)k * WARM_SEQ_STEPS;
    gs_solve_opts o;
    bench_variant_opts(v, &o);
    unsigned char *seq = calloc((size_t)mdl->n_fast + 1, 1), *was = calloc((size_t)m, 1);
    int *act = malloc((size_t)m * sizeof *act);
    double *lam = malloc((size_t)m * sizeof *lam), *lprev = malloc((size_t)m * sizeof *lprev);
    double *w = malloc((size_t)m * sizeof *w);
    double *tc = malloc(cap * sizeof *tc), *tw = malloc(cap * sizeof *tw);
    double *tb = malloc(cap * sizeof *tb);
    gs_err rc = GS_OK;
    if (!seq || !was || !act || !lam || !lprev || !w || !tc || !tw || !tb) {
        rc = nomem(err, "--warm-seq");
        goto out;
    }
    long it_cold = 0, it_warm = 0, nchg = 0; /* nchg: contact-set changes */
    double sc = 0, sw = 0, dmax = 0;
    int steps = 0;
    gs_form ran = o.form;
    for (int g = 0; g < k && !rc; g++) {
        gs_problem pb = {.pc = c->pc, .g = c->G + (size_t)g * m, .load = c->load};
        gs_solve_info info;
        memcpy(seq, c->inst, (size_t)mdl->n_fast);
        gs_model_pattern_load(mdl, seq, c->load);
        o.warm = NULL;
        rc = gs_solve(svw, &pb, &o, lprev, w, NULL, &info, err);
        for (int i = 0, n = 0; !rc && i < mdl->n_fast && n < WARM_SEQ_STEPS; i++) {
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
            gs_model_pattern_load(mdl, seq, c->load);
            gs_warm warm = {.n_act = na, .act = act, .lam = lprev};
            o.warm = NULL;
            if ((rc = solve_timed(c->a, sv, &pb, &o, lam, w, &info, &tc[steps], err)))
                break;
            it_cold += info.iterations;
            o.warm = &warm;
            if ((rc = solve_timed(c->a, svw, &pb, &o, lprev, w, &info, &tw[steps], err)))
                break;
            it_warm += info.iterations;
            ran = info.form;
            for (int j = 0; j < m; j++) {
                dmax = fmax(dmax, fabs(lprev[j] - lam[j]) / (1 + fabs(lam[j])));
                nchg += (lprev[j] != 0.0) != was[j];
            }
            tb[steps] = bench_bound_time(c->pc, lprev, c->QCC, c->QC, c->C, w);
            sc += tc[steps];
            sw += tw[steps];
            steps++;
        }
    }
    gs_model_pattern_load(mdl, c->inst, c->load);
    if (rc)
        goto out;
    char label[64];
    bench_variant_label(v, ran, label, sizeof label);
    if (steps == 0) {
        printf("    %-32s every fastener already installed: no sequence to run\n", label);
        goto out;
    }
    const double its = 1.0 - (double)it_warm / (it_cold ? it_cold : 1);
    const double ts = sc > 0 ? 1.0 - sw / sc : 0.0;
    const double mw = bench_median_of(tw, steps), mc = bench_median_of(tc, steps);
    const double mb = bench_median_of(tb, steps);
    printf("    %-32s %d steps from %d gap%s: iterations cold %.1f warm %.1f (%.0f%% saved), "
           "time cold %.3f ms warm %.3f ms (means; %.0f%% saved; time saved / iterations saved "
           "%.2f); medians: warm %.3f ms = %.2f x bound (%.3f ms), cold %.3f ms; contact-set "
           "changes per step %.1f, max rel |dlam| %.1e\n",
           label, steps, k, k == 1 ? "" : "s", (double)it_cold / steps, (double)it_warm / steps,
           100.0 * its, 1e3 * sc / steps, 1e3 * sw / steps, 100.0 * ts, its > 0 ? ts / its : 0.0,
           1e3 * mw, mw / mb, 1e3 * mb, 1e3 * mc, (double)nchg / steps, dmax);
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

/* Every gap is solved cold under the pattern inst (the stored solution);
 * move j swaps the j-th installed candidate for the j-th free one, and each
 * gap is solved under it cold (sv), warm from the stored solution on a
 * solver without the factor cache (svn) and on one with it (svc). The moves
 * run move by move over all gaps, as a worker claims them, so a warm
 * workspace last held another gap's set and builds the stored set's factor
 * (svn) or copies it from the cache from the second move on (svc). Prints
 * the medians (cold, warm, warm with the cache, the bound on the warm
 * answer), the cache's hits and the largest relative difference of the
 * multipliers from cold. */
gs_err bench_moves(const bench_ctx *c, const bench_variant *v, int k, gs_error *err)
{
    const gs_model *mdl = c->mdl;
    const int m = c->pc->m, nf = mdl->n_fast, moves = c->a->moves;
    const size_t cap = (size_t)k * moves;
    gs_solve_opts o;
    bench_variant_opts(v, &o);
    gs_solver *sv = gs_solver_new(c->pc, err), *svn = gs_solver_new(c->pc, err);
    gs_solver *svc = gs_solver_new(c->pc, err);
    gs_fcache *fc = gs_fcache_new((size_t)256 << 20);
    unsigned char *pat = malloc((size_t)nf + 1);
    int *ins = malloc(sizeof(int) * ((size_t)nf + 1)), *out = malloc(sizeof(int) * ((size_t)nf + 1));
    int *act = malloc((size_t)m * sizeof *act);
    double *L0 = malloc((size_t)k * m * sizeof *L0), *lam = malloc((size_t)m * sizeof *lam);
    double *lw = malloc((size_t)m * sizeof *lw), *w = malloc((size_t)m * sizeof *w);
    double *t[4];
    for (int q = 0; q < 4; q++)
        t[q] = malloc(cap * sizeof *t[q]);
    gs_err rc = GS_OK;
    int ni = 0, no = 0;
    size_t n = 0;
    if (!sv || !svn || !svc || !fc || !pat || !ins || !out || !act || !L0 || !lam || !lw || !w ||
        !t[0] || !t[1] || !t[2] || !t[3]) {
        rc = nomem(err, "--moves");
        goto done;
    }
    gs_solver_set_fcache(svc, fc);
    for (int q = 0; q < nf; q++)
        c->inst[q] ? (ins[ni++] = q) : (out[no++] = q);
    char label[64];
    bench_variant_label(v, o.form, label, sizeof label);
    if (ni == 0 || no == 0) {
        printf("    %-32s no swap possible at this fraction (%d installed of %d)\n", label, ni,
               nf);
        goto done;
    }
    gs_model_pattern_load(mdl, c->inst, c->load);
    for (int g = 0; g < k && !rc; g++) {
        gs_problem pb = {.pc = c->pc, .g = c->G + (size_t)g * m, .load = c->load};
        gs_solve_info info;
        o.warm = NULL;
        rc = gs_solve(sv, &pb, &o, L0 + (size_t)g * m, w, NULL, &info, err);
    }
    double dmax = 0.0;
    gs_form ran = o.form;
    for (int j = 0; j < moves && !rc; j++) {
        memcpy(pat, c->inst, (size_t)nf);
        pat[ins[j % ni]] = 0;
        pat[out[(j * 7 + 3) % no]] = 1;
        gs_model_pattern_load(mdl, pat, c->load);
        for (int g = 0; g < k && !rc; g++, n++) {
            gs_problem pb = {.pc = c->pc, .g = c->G + (size_t)g * m, .load = c->load};
            const double *l0 = L0 + (size_t)g * m;
            int na = 0;
            for (int i = 0; i < m; i++)
                if (l0[i] != 0.0)
                    act[na++] = i;
            gs_warm warm = {.n_act = na, .act = act, .lam = l0};
            gs_solve_info info;
            gs_solver *who[3] = {sv, svn, svc};
            for (int q = 0; q < 3 && !rc; q++) {
                o.warm = q ? &warm : NULL;
                rc = solve_timed(c->a, who[q], &pb, &o, q ? lw : lam, w, &info, &t[q][n], err);
                if (rc)
                    break;
                ran = info.form;
                for (int i = 0; q && i < m; i++)
                    dmax = fmax(dmax, fabs(lw[i] - lam[i]) / (1 + fabs(lam[i])));
            }
            if (!rc)
                t[3][n] = bench_bound_time(c->pc, lw, c->QCC, c->QC, c->C, w);
        }
    }
    gs_model_pattern_load(mdl, c->inst, c->load);
    if (rc)
        goto done;
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    const int cnt = (int)n;
    const double mc = bench_median_of(t[0], cnt), mn = bench_median_of(t[1], cnt);
    const double mw = bench_median_of(t[2], cnt), mb = bench_median_of(t[3], cnt);
    bench_variant_label(v, ran, label, sizeof label);
    printf("    %-32s %d moves x %d gap%s: medians cold %.3f ms, warm %.3f ms (%.2f x bound), "
           "warm with the factor cache %.3f ms (%.2f x bound, %.2f x warm; %ld hits, %ld "
           "misses), bound %.3f ms; max rel |dlam| %.1e\n",
           label, moves, k, k == 1 ? "" : "s", 1e3 * mc, 1e3 * mn, mn / mb, 1e3 * mw, mw / mb,
           mw / mn, st.hits, st.misses, 1e3 * mb, dmax);
done:
    for (int q = 0; q < 4; q++)
        free(t[q]);
    free(pat);
    free(ins);
    free(out);
    free(act);
    free(L0);
    free(lam);
    free(lw);
    free(w);
    gs_solver_free(sv);
    gs_solver_free(svn);
    gs_solver_free(svc);
    gs_fcache_free(fc);
    return rc;
}

#define GS_BENCH_WINDOW 64

gs_err bench_cloud_order(const double *G, int k, int m, int *order, gs_error *err)
{
    double *sk = malloc(sizeof(double) * GS_SKETCH_DIM * (size_t)k);
    int *perm = malloc(sizeof(int) * GS_BENCH_WINDOW);
    if (!sk || !perm) {
        free(sk);
        free(perm);
        return nomem(err, "--cloud");
    }
    for (int r = 0; r < k; r++)
        gs_sketch(G + (size_t)r * m, m, sk + (size_t)r * GS_SKETCH_DIM);
    const double *last = NULL;
    for (int w0 = 0; w0 < k; w0 += GS_BENCH_WINDOW) {
        const int n = k - w0 < GS_BENCH_WINDOW ? k - w0 : GS_BENCH_WINDOW;
        gs_sketch_order(sk + (size_t)w0 * GS_SKETCH_DIM, n, last, perm);
        for (int q = 0; q < n; q++)
            order[w0 + q] = w0 + perm[q];
        last = sk + (size_t)order[w0 + n - 1] * GS_SKETCH_DIM;
    }
    free(sk);
    free(perm);
    return GS_OK;
}

gs_err bench_cloud(const bench_ctx *c, const bench_variant *v, int k, const int *order,
                   const double *WC, double cold_med, double cold_iter, double bound,
                   gs_solver *svw, gs_error *err)
{
    const int m = c->pc->m;
    gs_solve_opts o;
    bench_variant_opts(v, &o);
    int *wact = malloc((size_t)m * sizeof *wact);
    double *lam = malloc((size_t)m * sizeof *lam), *w = malloc((size_t)m * sizeof *w);
    double *lwarm = malloc((size_t)m * sizeof *lwarm), *tcl = malloc((size_t)k * sizeof *tcl);
    gs_err rc = GS_OK;
    if (!wact || !lam || !w || !lwarm || !tcl) {
        rc = nomem(err, "--cloud");
        goto done;
    }
    double it_w = 0, dwc = 0, tsum = 0;
    int optw = 0, na_prev = 0;
    for (int q = 0; q < k; q++) {
        const int r = order[q];
        gs_problem pb = {.pc = c->pc, .g = c->G + (size_t)r * m, .load = c->load};
        gs_warm wm = {.n_act = na_prev, .act = wact, .lam = lwarm};
        o.warm = q > 0 && na_prev > 0 ? &wm : NULL;
        gs_solve_info info;
        if ((rc = solve_timed(c->a, svw, &pb, &o, lam, w, &info, &tcl[q], err)))
            goto done;
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
    const double cmed = bench_median_of(tcl, k);
    printf("    cloud in order (warm from the previous gap, factor carried): median %.3f ms = "
           "%.2f x bound, %.2f x cold median; mean %.3f ms; iterations %.1f (cold %.1f); max "
           "|w - w_cold| %.1e mm; optimal %d/%d\n",
           1e3 * cmed, cmed / bound, cmed / cold_med, 1e3 * tsum / k, it_w / k, cold_iter, dwc,
           optw, k);
done:
    free(wact);
    free(lam);
    free(w);
    free(lwarm);
    free(tcl);
    return rc;
}
