/*
 * summary.c -- cloud statistics (see summary.h).
 */
#include "summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

#define EXACT_LIMIT ((size_t)16 << 20) /* k m values kept for exact quantiles */
#define PAIR_BINS 256

typedef struct {
    int m, cap, count;
    double thr;
    double *sum, *sumsq, *pmax; /* per pair */
    double *lsum;               /* per pair: sum of contact forces */
    int *above;                 /* per pair: results with w > thr */
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
    long long in_contact;       /* values with lambda > 0 */
    unsigned char *C;           /* count x m contact flags if kept */
    int *opened;                /* per pair: results with w > g + open_tol */
    double open_tol;            /* mm: max(threshold, 1e-9) */
    int gaps_opened;            /* results with some such pair */
    int gfd;                    /* gaps.npy, or -1 */
    size_t goff;                /* its data offset */
    double *grow;               /* m: the current gap row */
    int oom;
} acc;

#define OPEN_TOL_MIN 1e-9 /* mm: w above g by more than round-off */

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
        unsigned char *C = realloc(a->C, (size_t)cap * (size_t)a->m);
        if (!C)
            return -1;
        a->C = C;
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

static int pass1(const gsd_result_row *r, void *ctx)
{
    acc *a = ctx;
    if (!r->w || r->m != a->m)
        return 0; /* a result without vectors (not stored): skipped */
    if (grow(a) != 0) {
        a->oom = 1;
        return 1;
    }
    int have_g = a->gfd >= 0 && r->job_index >= 0 &&
                 pread(a->gfd, a->grow, sizeof(double) * (size_t)a->m,
                       (off_t)(a->goff + (size_t)r->job_index * sizeof(double) * (size_t)a->m)) ==
                     (ssize_t)(sizeof(double) * (size_t)a->m);
    int opened = 0;
    double gm = 0;
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
        if (have_g && r->w[k] > a->grow[k] + a->open_tol) {
            a->opened[k]++;
            opened = 1;
        }
    }
    a->gaps_opened += opened;
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
    return 0;
}

typedef struct {
    acc *a;
    double lo, width;
    int bins;
    long long *hist;     /* all values */
    unsigned *pair_hist; /* m x PAIR_BINS, or NULL */
} acc2;

static int bin_of(double v, double lo, double width, int bins)
{
    if (width <= 0)
        return 0;
    int b = (int)((v - lo) / width);
    return b < 0 ? 0 : b >= bins ? bins - 1 : b;
}

static int pass2(const gsd_result_row *r, void *ctx)
{
    acc2 *c = ctx;
    int m = c->a->m;
    if (!r->w || r->m != m)
        return 0;
    for (int k = 0; k < m; k++) {
        double w = r->w[k] > 0 ? r->w[k] : 0;
        if (!(r->lam && r->lam[k] > 0)) /* open pairs only */
            c->hist[bin_of(w, c->lo, c->width, c->bins)]++;
        if (c->pair_hist) {
            double pw = c->a->pmax[k] / PAIR_BINS;
            c->pair_hist[(size_t)k * PAIR_BINS + (size_t)bin_of(w, 0, pw, PAIR_BINS)]++;
        }
    }
    return 0;
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
static void dist_json(gsd_buf *b, const char *name, double *v, int n, int bins, int logx)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double mean = 0;
    for (int i = 0; i < n; i++)
        mean += v[i];
    mean = n ? mean / n : 0;
    gsd_buf_printf(b, "\"%s\":{\"min\":", name);
    gsd_buf_json_num(b, n ? v[0] : 0);
    gsd_buf_puts(b, ",\"mean\":");
    gsd_buf_json_num(b, mean);
    gsd_buf_puts(b, ",\"median\":");
    gsd_buf_json_num(b, quantile_sorted(v, n, 0.5));
    gsd_buf_puts(b, ",\"p95\":");
    gsd_buf_json_num(b, quantile_sorted(v, n, 0.95));
    gsd_buf_puts(b, ",\"max\":");
    gsd_buf_json_num(b, n ? v[n - 1] : 0);
    double lo = n ? v[0] : 0, hi = n ? v[n - 1] : 0;
    logx = logx && lo > 0 && hi > lo;
    double l0 = logx ? log(lo) : lo, width = ((logx ? log(hi) : hi) - l0) / bins;
    gsd_buf_puts(b, ",\"histogram\":{\"edges\":[");
    for (int i = 0; i <= bins; i++) {
        if (i)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, i == 0 ? lo : i == bins ? hi : logx ? exp(l0 + width * i) : lo + width * i);
    }
    gsd_buf_puts(b, "],\"counts\":[");
    int *cnt = calloc((size_t)bins, sizeof *cnt);
    for (int i = 0; cnt && i < n; i++)
        cnt[bin_of(logx ? log(v[i]) : v[i], l0, width, bins)]++;
    for (int i = 0; i < bins; i++)
        gsd_buf_printf(b, i ? ",%d" : "%d", cnt ? cnt[i] : 0);
    free(cnt);
    gsd_buf_printf(b, "],\"log\":%s}}", logx ? "true" : "false");
}

static void acc_free(acc *a)
{
    free(a->sum);
    free(a->lsum);
    free(a->sumsq);
    free(a->pmax);
    free(a->above);
    free(a->W);
    free(a->C);
    free(a->opened);
    free(a->grow);
    if (a->gfd >= 0)
        close(a->gfd);
    free(a->gmax);
    free(a->time);
    free(a->nact);
}

gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                   gsd_buf *b, gs_error *err)
{
    acc a = {.m = m, .thr = o->threshold};
    a.open_tol = o->threshold > OPEN_TOL_MIN ? o->threshold : OPEN_TOL_MIN;
    a.keep = (size_t)job->total * (size_t)m <= EXACT_LIMIT;
    a.sum = calloc((size_t)m, sizeof(double));
    a.lsum = calloc((size_t)m, sizeof(double));
    a.sumsq = calloc((size_t)m, sizeof(double));
    a.pmax = calloc((size_t)m, sizeof(double));
    a.above = calloc((size_t)m, sizeof(int));
    a.opened = calloc((size_t)m, sizeof(int));
    a.grow = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    a.gfd = -1;
    gs_err rc = GS_OK;
    if (!a.sum || !a.lsum || !a.sumsq || !a.pmax || !a.above || !a.opened || !a.grow)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    if (!rc && o->gaps_path) { /* the initial gaps, for w > g; absent: not reported */
        gs_npy_file f = {.fd = -1};
        gs_error ge;
        if (gs_npy_open(o->gaps_path, (size_t)-1 / 8, &f, &ge) == GS_OK &&
            (f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1]) == (size_t)m) {
            a.gfd = f.fd; /* kept open: read row by row in pass1 */
            a.goff = f.data_offset;
            f.fd = -1;
        }
        gs_npy_close(&f);
    }
    if (!rc)
        rc = gsd_store_job_results(st, job->id, 0, -1, 1, pass1, &a, err);
    if (!rc && a.oom)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory for the summary of %d gaps",
                       job->total);
    acc2 c = {.a = &a, .lo = 0, .bins = o->bins};
    c.width = a.all_max / o->bins;
    c.hist = calloc((size_t)o->bins, sizeof(long long));
    if (!rc && !c.hist)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    if (!rc && !a.keep) {
        c.pair_hist = calloc((size_t)m * PAIR_BINS, sizeof(unsigned));
        if (!c.pair_hist)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        if (!rc)
            rc = gsd_store_job_results(st, job->id, 0, -1, 1, pass2, &c, err);
    }
    double *col = NULL;
    if (!rc && a.keep) {
        for (size_t i = 0; i < (size_t)a.count * (size_t)m; i++)
            if (!a.C[i])
                c.hist[bin_of(a.W[i], 0, c.width, o->bins)]++;
        col = malloc(sizeof(double) * (size_t)(a.count > 0 ? a.count : 1));
        if (!col)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    if (rc) {
        free(c.hist);
        free(c.pair_hist);
        acc_free(&a);
        return rc;
    }
    int n = a.count;
    long long gaps_above = 0;
    for (int i = 0; i < n; i++)
        gaps_above += a.gmax[i] > o->threshold;
    gsd_buf_puts(b, "{\"job_id\":");
    gsd_buf_json_str(b, job->id);
    gsd_buf_puts(b, ",\"assembly_id\":");
    gsd_buf_json_str(b, job->assembly_id);
    gsd_buf_puts(b, ",\"status\":");
    gsd_buf_json_str(b, job->status);
    gsd_buf_printf(b, ",\"count\":%d,\"total\":%d,\"m\":%d,\"units\":\"mm\",\"threshold\":", n,
                   job->total, m);
    gsd_buf_json_num(b, o->threshold);
    gsd_buf_puts(b, ",\"share_gaps_above\":");
    gsd_buf_json_num(b, n ? (double)gaps_above / n : 0);
    gsd_buf_puts(b, ",\"share_values_above\":");
    gsd_buf_json_num(b, n ? (double)a.values_above / ((double)n * m) : 0);
    gsd_buf_puts(b, ",");
    double *gm = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (gm)
        memcpy(gm, a.gmax, sizeof(double) * (size_t)n);
    dist_json(b, "max_residual", gm ? gm : a.gmax, n, o->bins, 0);
    free(gm);
    gsd_buf_puts(b, ",\"residual_histogram\":{\"edges\":[");
    for (int i = 0; i <= o->bins; i++) {
        if (i)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, c.width * i);
    }
    gsd_buf_puts(b, "],\"counts\":[");
    for (int i = 0; i < o->bins; i++)
        gsd_buf_printf(b, i ? ",%lld" : "%lld", c.hist[i]);
    gsd_buf_printf(b, "],\"in_contact\":%lld},", a.in_contact);
    if (a.gfd >= 0) {
        int npairs = 0;
        for (int k = 0; k < m; k++)
            npairs += a.opened[k] > 0;
        gsd_buf_printf(b, "\"opened\":{\"gaps\":%d,\"share_gaps\":", a.gaps_opened);
        gsd_buf_json_num(b, n ? (double)a.gaps_opened / n : 0);
        gsd_buf_printf(b, ",\"pairs\":%d,\"why\":", npairs);
        gsd_buf_json_str(b, npairs == 0 ? "no pair opens under fastening by more than the threshold"
                                        : "prying: these pairs end with a residual gap w above "
                                          "their initial gap g by more than the threshold. The "
                                          "fastener loads press the "
                                          "parts shut where they are installed; the parts bend "
                                          "about those points and lift apart elsewhere, mostly "
                                          "between widely spaced fasteners, beyond the last one "
                                          "and at free edges. More or better spread fasteners "
                                          "near the flagged pairs close them.");
        gsd_buf_puts(b, "},");
    } else {
        gsd_buf_puts(b, "\"opened\":null,");
    }
    gsd_buf_puts(b, "\"pairs\":{\"mean\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, n ? a.sum[k] / n : 0);
    }
    gsd_buf_puts(b, "],\"std\":[");
    for (int k = 0; k < m; k++) {
        double mu = n ? a.sum[k] / n : 0;
        double var = n > 1 ? (a.sumsq[k] - n * mu * mu) / (n - 1) : 0;
        if (k)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, var > 0 ? sqrt(var) : 0);
    }
    gsd_buf_puts(b, "],\"max\":");
    gsd_buf_json_nums(b, a.pmax, m);
    gsd_buf_puts(b, ",\"p95\":[");
    for (int k = 0; k < m; k++) {
        double q = 0;
        if (n && a.keep) {
            for (int i = 0; i < n; i++)
                col[i] = a.W[(size_t)i * (size_t)m + (size_t)k];
            int idx = (int)ceil(0.95 * n) - 1;
            q = select_kth(col, n, idx < 0 ? 0 : idx);
        } else if (n) {
            const unsigned *h = c.pair_hist + (size_t)k * PAIR_BINS;
            long long need = (long long)ceil(0.95 * n), cum = 0;
            int bin = 0;
            for (; bin < PAIR_BINS; bin++)
                if ((cum += h[bin]) >= need)
                    break;
            q = a.pmax[k] * (bin + 1) / PAIR_BINS; /* upper edge of the bin */
        }
        if (k)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, q);
    }
    gsd_buf_printf(b, "],\"p95_exact\":%s,\"share_above\":[", a.keep ? "true" : "false");
    for (int k = 0; k < m; k++) {
        if (k)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, n ? (double)a.above[k] / n : 0);
    }
    gsd_buf_puts(b, "],\"lambda_mean\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, n ? a.lsum[k] / n : 0);
    }
    gsd_buf_puts(b, "],\"opened\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gsd_buf_puts(b, ",");
        gsd_buf_json_num(b, n && a.gfd >= 0 ? (double)a.opened[k] / n : 0);
    }
    gsd_buf_puts(b, "]},");
    double *na = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; na && i < n; i++)
        na[i] = a.nact[i];
    if (na)
        dist_json(b, "n_act", na, n, o->bins, 0);
    else
        gsd_buf_puts(b, "\"n_act\":null");
    free(na);
    gsd_buf_puts(b, ",");
    dist_json(b, "time_ms", a.time, n, o->bins, 1);
    gsd_buf_puts(b, ",\"statuses\":{");
    int not_optimal = 0;
    for (int i = 0; i < a.n_status; i++) {
        gsd_buf_printf(b, "%s\"%s\":%d", i ? "," : "", a.status_name[i], a.statuses[i]);
        if (strcmp(a.status_name[i], "optimal"))
            not_optimal += a.statuses[i];
    }
    gsd_buf_printf(b, "},\"failures\":%d,\"solvers\":{", not_optimal);
    for (int i = 0; i < a.n_solver; i++)
        gsd_buf_printf(b, "%s\"%s\":%d", i ? "," : "", a.solver_name[i], a.solvers[i]);
    gsd_buf_printf(b, "},\"warm_started\":%d,\"iterations\":{\"total\":%lld,\"mean\":", a.warm,
                   a.iters);
    gsd_buf_json_num(b, n ? (double)a.iters / n : 0);
    gsd_buf_puts(b, "}}");
    free(col);
    free(c.hist);
    free(c.pair_hist);
    acc_free(&a);
    return GS_OK;
}
