/*
 * cloudstats.c -- statistics of a cloud's results and their JSON (cloudstats.h).
 * Moved from server/summary.c, which now feeds it from the store.
 */
#include "cloudstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_LIMIT ((size_t)16 << 20) /* k m values kept for exact quantiles */
#define PAIR_BINS 256
#define OPEN_TOL_MIN 1e-9 /* mm: w above g by more than round-off */

struct gs_cstats {
    int m, cap, count;
    double thr;
    double *sum, *sumsq, *pmax; /* per pair */
    double *lsum;               /* per pair: sum of contact forces */
    int *above;                 /* per pair: results with w > thr */
    int *opened;                /* per pair: results with w > g + open_tol */
    double open_tol;            /* mm: max(threshold, OPEN_TOL_MIN) */
    int gaps_opened;            /* results with some such pair */
    int with_g;                 /* results whose initial gaps were given */
    long long in_contact;       /* values with lambda > 0 */
    unsigned char *C;           /* count x m contact flags if kept */
    double *W;                  /* count x m if kept (exact mode) */
    size_t w_cap;
    int keep;
    double *gmax;               /* per result: largest residual */
    double *time;               /* per result, ms */
    int *nact;
    long long iters;
    int warm, statuses[8], n_status;
    char status_name[8][16];
    char solver_name[8][40];
    int solvers[8], n_solver;
    double all_max;
    long long values_above;
    int oom;
    /* pass 2 and the histograms */
    int bins;
    double width;        /* bin width of the residual histogram (all_max / bins) */
    long long *hist;     /* all values */
    unsigned *pair_hist; /* m x PAIR_BINS in binned mode */
};
typedef struct gs_cstats acc;

static int grow(acc *a)
{
    if (a->count < a->cap)
        return 0;
    int cap = a->cap ? 2 * a->cap : 256;
    double *gm = realloc(a->gmax, sizeof(double) * (size_t)cap);
    if (gm)
        a->gmax = gm;
    double *tm = realloc(a->time, sizeof(double) * (size_t)cap);
    if (tm)
        a->time = tm;
    int *na = realloc(a->nact, sizeof(int) * (size_t)cap);
    if (na)
        a->nact = na;
    if (!gm || !tm || !na)
        return -1;
    a->cap = cap;
    if (a->keep) {
        double *W = realloc(a->W, sizeof(double) * (size_t)cap * (size_t)a->m);
        if (!W)
            return -1;
        a->W = W;
        unsigned char *Cf = realloc(a->C, (size_t)cap * (size_t)a->m);
        if (!Cf)
            return -1;
        a->C = Cf;
    }
    return 0;
}

static void count_name(char names[8][16], int *counts, int *n, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], s)) {
            counts[i]++;
            return;
        }
    if (*n < 8) {
        snprintf(names[*n], 16, "%s", s);
        counts[(*n)++] = 1;
    }
}

gs_err gs_cstats_add(gs_cstats *a, const gs_cstats_row *r, gs_error *err)
{
    if (!r->w || r->m != a->m)
        return GS_OK; /* a result without vectors (not stored): skipped */
    if (a->oom || grow(a) != 0) {
        a->oom = 1;
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory for the summary of %d gaps",
                         a->count + 1);
    }
    double gm = 0;
    int opened = 0;
    for (int k = 0; k < a->m; k++) {
        double w = r->w[k] > 0 ? r->w[k] : 0;
        a->sum[k] += w;
        a->sumsq[k] += w * w;
        if (w > a->pmax[k])
            a->pmax[k] = w;
        if (w > a->thr) {
            a->above[k]++;
            a->values_above++;
        }
        if (w > gm)
            gm = w;
        if (r->lam) {
            a->lsum[k] += r->lam[k];
            a->in_contact += r->lam[k] > 0;
        }
        if (r->g && r->w[k] > r->g[k] + a->open_tol) {
            a->opened[k]++;
            opened = 1;
        }
    }
    a->gaps_opened += opened;
    a->with_g += r->g != NULL;
    if (a->keep)
        for (int k = 0; k < a->m; k++) {
            a->W[(size_t)a->count * (size_t)a->m + (size_t)k] = r->w[k] > 0 ? r->w[k] : 0;
            a->C[(size_t)a->count * (size_t)a->m + (size_t)k] = r->lam && r->lam[k] > 0;
        }
    if (gm > a->all_max)
        a->all_max = gm;
    a->gmax[a->count] = gm;
    a->time[a->count] = 1e3 * r->time;
    a->nact[a->count] = r->n_act;
    a->iters += r->iterations;
    a->warm += r->warm_used;
    count_name(a->status_name, a->statuses, &a->n_status, r->status);
    char sv[40];
    snprintf(sv, sizeof sv, "%s/%s", r->method, r->form);
    int i = 0;
    for (; i < a->n_solver && strcmp(a->solver_name[i], sv); i++)
        ;
    if (i < a->n_solver)
        a->solvers[i]++;
    else if (a->n_solver < 8) {
        snprintf(a->solver_name[a->n_solver], 40, "%s", sv);
        a->solvers[a->n_solver++] = 1;
    }
    a->count++;
    return GS_OK;
}

static int bin_of(double v, double lo, double width, int bins)
{
    if (width <= 0)
        return 0;
    int b = (int)((v - lo) / width);
    return b < 0 ? 0 : b >= bins ? bins - 1 : b;
}

int gs_cstats_second_pass(const gs_cstats *s)
{
    return !s->keep;
}

/* The histograms' bin width is known after pass 1. */
static gs_err start_hist(gs_cstats *a, gs_error *err)
{
    if (a->hist)
        return GS_OK;
    a->width = a->all_max / a->bins;
    a->hist = calloc((size_t)a->bins, sizeof(long long));
    if (a->hist && !a->keep)
        a->pair_hist = calloc((size_t)a->m * PAIR_BINS, sizeof(unsigned));
    if (!a->hist || (!a->keep && !a->pair_hist))
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    return GS_OK;
}

void gs_cstats_add2(gs_cstats *a, const gs_cstats_row *r)
{
    int m = a->m;
    if (!r->w || r->m != m || a->keep || start_hist(a, NULL) != GS_OK)
        return;
    for (int k = 0; k < m; k++) {
        double w = r->w[k] > 0 ? r->w[k] : 0;
        if (!(r->lam && r->lam[k] > 0)) /* open pairs only */
            a->hist[bin_of(w, 0, a->width, a->bins)]++;
        double pw = a->pmax[k] / PAIR_BINS;
        a->pair_hist[(size_t)k * PAIR_BINS + (size_t)bin_of(w, 0, pw, PAIR_BINS)]++;
    }
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Quantile q of v[0..n) (sorted copy), by the nearest-rank rule. */
static double quantile_sorted(const double *v, int n, double q)
{
    if (n <= 0)
        return 0;
    int i = (int)ceil(q * n) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* k-th smallest of v[0..n) (reorders v). Expected O(n). */
static double select_kth(double *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

/* Distribution of v[0..n) (sorted in place); logx: histogram bins evenly
 * spaced in log(v) (when all v > 0), "log": true in the histogram. */
static void dist_json(gs_buf *b, const char *name, double *v, int n, int bins, int logx)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double mean = 0;
    for (int i = 0; i < n; i++)
        mean += v[i];
    mean = n ? mean / n : 0;
    gs_buf_printf(b, "\"%s\":{\"min\":", name);
    gs_buf_json_num(b, n ? v[0] : 0);
    gs_buf_puts(b, ",\"mean\":");
    gs_buf_json_num(b, mean);
    gs_buf_puts(b, ",\"median\":");
    gs_buf_json_num(b, quantile_sorted(v, n, 0.5));
    gs_buf_puts(b, ",\"p95\":");
    gs_buf_json_num(b, quantile_sorted(v, n, 0.95));
    gs_buf_puts(b, ",\"max\":");
    gs_buf_json_num(b, n ? v[n - 1] : 0);
    double lo = n ? v[0] : 0, hi = n ? v[n - 1] : 0;
    logx = logx && lo > 0 && hi > lo;
    double l0 = logx ? log(lo) : lo, width = ((logx ? log(hi) : hi) - l0) / bins;
    gs_buf_puts(b, ",\"histogram\":{\"edges\":[");
    for (int i = 0; i <= bins; i++) {
        if (i)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, i == 0 ? lo : i == bins ? hi : logx ? exp(l0 + width * i) : lo + width * i);
    }
    gs_buf_puts(b, "],\"counts\":[");
    int *cnt = calloc((size_t)bins, sizeof *cnt);
    for (int i = 0; cnt && i < n; i++)
        cnt[bin_of(logx ? log(v[i]) : v[i], l0, width, bins)]++;
    for (int i = 0; i < bins; i++)
        gs_buf_printf(b, i ? ",%d" : "%d", cnt ? cnt[i] : 0);
    free(cnt);
    gs_buf_printf(b, "],\"log\":%s}}", logx ? "true" : "false");
}

gs_cstats *gs_cstats_new(int m, long long total, double threshold, int bins, gs_error *err)
{
    acc *a = calloc(1, sizeof *a);
    if (a) {
        a->m = m;
        a->thr = threshold;
        a->open_tol = threshold > OPEN_TOL_MIN ? threshold : OPEN_TOL_MIN;
        a->bins = bins > 0 ? bins : 1;
        a->keep = total * (long long)m <= (long long)EXACT_LIMIT;
        a->sum = calloc((size_t)m, sizeof(double));
        a->sumsq = calloc((size_t)m, sizeof(double));
        a->pmax = calloc((size_t)m, sizeof(double));
        a->above = calloc((size_t)m, sizeof(int));
        a->lsum = calloc((size_t)m, sizeof(double));
        a->opened = calloc((size_t)m, sizeof(int));
    }
    if (!a || !a->sum || !a->sumsq || !a->pmax || !a->above || !a->lsum || !a->opened) {
        gs_cstats_free(a);
        gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        return NULL;
    }
    return a;
}

void gs_cstats_free(gs_cstats *a)
{
    if (!a)
        return;
    free(a->sum);
    free(a->sumsq);
    free(a->pmax);
    free(a->above);
    free(a->lsum);
    free(a->opened);
    free(a->C);
    free(a->W);
    free(a->gmax);
    free(a->time);
    free(a->nact);
    free(a->hist);
    free(a->pair_hist);
    free(a);
}

gs_err gs_cstats_json(gs_cstats *s, const char *job_id, const char *assembly_id,
                      const char *status, long long total, gs_buf *b, gs_error *err)
{
    acc *const a = s;
    const int m = a->m;
    gs_err rc = start_hist(a, err);
    double *col = NULL;
    if (!rc && a->keep) {
        for (size_t i = 0; i < (size_t)a->count * (size_t)m; i++)
            if (!a->C[i]) /* open pairs only */
                a->hist[bin_of(a->W[i], 0, a->width, a->bins)]++;
        col = malloc(sizeof(double) * (size_t)(a->count > 0 ? a->count : 1));
        if (!col)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    if (rc)
        return rc;
    const int bins = a->bins;
    const double thr = a->thr;
    int n = a->count;
    long long gaps_above = 0;
    for (int i = 0; i < n; i++)
        gaps_above += a->gmax[i] > thr;
    gs_buf_puts(b, "{\"job_id\":");
    gs_buf_json_str(b, job_id);
    gs_buf_puts(b, ",\"assembly_id\":");
    gs_buf_json_str(b, assembly_id);
    gs_buf_puts(b, ",\"status\":");
    gs_buf_json_str(b, status);
    gs_buf_printf(b, ",\"count\":%d,\"total\":%lld,\"m\":%d,\"units\":\"mm\",\"threshold\":", n,
                  total, m);
    gs_buf_json_num(b, thr);
    gs_buf_puts(b, ",\"share_gaps_above\":");
    gs_buf_json_num(b, n ? (double)gaps_above / n : 0);
    gs_buf_puts(b, ",\"share_values_above\":");
    gs_buf_json_num(b, n ? (double)a->values_above / ((double)n * m) : 0);
    gs_buf_puts(b, ",");
    double *gm = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (gm)
        memcpy(gm, a->gmax, sizeof(double) * (size_t)n);
    dist_json(b, "max_residual", gm ? gm : a->gmax, n, bins, 0);
    free(gm);
    gs_buf_puts(b, ",\"residual_histogram\":{\"edges\":[");
    for (int i = 0; i <= bins; i++) {
        if (i)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, a->width * i);
    }
    gs_buf_puts(b, "],\"counts\":[");
    for (int i = 0; i < bins; i++)
        gs_buf_printf(b, i ? ",%lld" : "%lld", a->hist[i]);
    gs_buf_printf(b, "],\"in_contact\":%lld},", a->in_contact);
    if (a->with_g) {
        int npairs = 0;
        for (int k = 0; k < m; k++)
            npairs += a->opened[k] > 0;
        gs_buf_printf(b, "\"opened\":{\"gaps\":%d,\"share_gaps\":", a->gaps_opened);
        gs_buf_json_num(b, n ? (double)a->gaps_opened / n : 0);
        gs_buf_printf(b, ",\"pairs\":%d,\"why\":", npairs);
        gs_buf_json_str(b, npairs == 0 ? "no pair opens under fastening by more than the threshold"
                                       : "prying: these pairs end with a residual gap w above "
                                         "their initial gap g by more than the threshold. The "
                                         "fastener loads press the "
                                         "parts shut where they are installed; the parts bend "
                                         "about those points and lift apart elsewhere, mostly "
                                         "between widely spaced fasteners, beyond the last one "
                                         "and at free edges. More or better spread fasteners "
                                         "near the flagged pairs close them.");
        gs_buf_puts(b, "},");
    } else {
        gs_buf_puts(b, "\"opened\":null,");
    }
    gs_buf_puts(b, "\"pairs\":{\"mean\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, n ? a->sum[k] / n : 0);
    }
    gs_buf_puts(b, "],\"std\":[");
    for (int k = 0; k < m; k++) {
        double mu = n ? a->sum[k] / n : 0;
        double var = n > 1 ? (a->sumsq[k] - n * mu * mu) / (n - 1) : 0;
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, var > 0 ? sqrt(var) : 0);
    }
    gs_buf_puts(b, "],\"max\":");
    gs_buf_json_nums(b, a->pmax, m);
    gs_buf_puts(b, ",\"p95\":[");
    for (int k = 0; k < m; k++) {
        double q = 0;
        if (n && a->keep) {
            for (int i = 0; i < n; i++)
                col[i] = a->W[(size_t)i * (size_t)m + (size_t)k];
            int idx = (int)ceil(0.95 * n) - 1;
            q = select_kth(col, n, idx < 0 ? 0 : idx);
        } else if (n) {
            const unsigned *h = a->pair_hist + (size_t)k * PAIR_BINS;
            long long need = (long long)ceil(0.95 * n), cum = 0;
            int bin = 0;
            for (; bin < PAIR_BINS; bin++)
                if ((cum += h[bin]) >= need)
                    break;
            q = a->pmax[k] * (bin + 1) / PAIR_BINS; /* upper edge of the bin */
        }
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, q);
    }
    gs_buf_printf(b, "],\"p95_exact\":%s,\"share_above\":[", a->keep ? "true" : "false");
    for (int k = 0; k < m; k++) {
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, n ? (double)a->above[k] / n : 0);
    }
    gs_buf_puts(b, "],\"lambda_mean\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, n ? a->lsum[k] / n : 0);
    }
    gs_buf_puts(b, "],\"opened\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, n && a->with_g ? (double)a->opened[k] / n : 0);
    }
    gs_buf_puts(b, "]},");
    double *na = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; na && i < n; i++)
        na[i] = a->nact[i];
    if (na)
        dist_json(b, "n_act", na, n, bins, 0);
    else
        gs_buf_puts(b, "\"n_act\":null");
    free(na);
    gs_buf_puts(b, ",");
    dist_json(b, "time_ms", a->time, n, bins, 1);
    gs_buf_puts(b, ",\"statuses\":{");
    int not_optimal = 0;
    for (int i = 0; i < a->n_status; i++) {
        gs_buf_printf(b, "%s\"%s\":%d", i ? "," : "", a->status_name[i], a->statuses[i]);
        if (strcmp(a->status_name[i], "optimal"))
            not_optimal += a->statuses[i];
    }
    gs_buf_printf(b, "},\"failures\":%d,\"solvers\":{", not_optimal);
    for (int i = 0; i < a->n_solver; i++)
        gs_buf_printf(b, "%s\"%s\":%d", i ? "," : "", a->solver_name[i], a->solvers[i]);
    gs_buf_printf(b, "},\"warm_started\":%d,\"iterations\":{\"total\":%lld,\"mean\":", a->warm,
                   a->iters);
    gs_buf_json_num(b, n ? (double)a->iters / n : 0);
    gs_buf_puts(b, "}}");
    free(col);
    return GS_OK;
}
