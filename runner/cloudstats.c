/*
 * cloudstats.c -- statistics of a cloud's results and their JSON (cloudstats.h).
 * Moved from server/summary.c, which now feeds it from the store.
 * Three rules hold everywhere in it (docs/api.md, the summary):
 *   - only answers (status optimal) enter the statistics of w, lambda and
 *     n_act: another status leaves no answer in them (an infeasible result's
 *     lambda holds Farkas weights, an iterate cut short penetrates); every
 *     result counts in statuses, failures, kkt_failed, solvers and times;
 *   - a residual is above the threshold when w > max(threshold, 1e-9 mm):
 *     at or below that floor it is round-off of a closed pair;
 *   - a pair is in contact when lambda != 0, as n_act counts it (a pair held
 *     by fixed_pairs pulls: lambda < 0);
 *   - a statistic of no value is null: with no answer, those of w, lambda
 *     and n_act; with no result, those of the times and iterations.
 */
#include "cloudstats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_status.h"

#define EXACT_LIMIT ((size_t)16 << 20) /* k m values kept for exact quantiles */
#define PAIR_BINS 256
#define P95_BLOCK 256 /* pairs gathered together for their p95 (exact mode) */
/* mm: the round-off floor. Residuals of pairs in contact carry ~1e-13 mm of
 * either sign (docs/api.md); w at or below it is closed, w - g at or below
 * it is no opening, at threshold 0 too. */
#define ROUNDOFF_MM 1e-9

/* Room for a status name ("numerical_breakdown", "infeasible_equality":
 * 19 characters; a 16-byte field cut them, so no two results' names matched). */
#define STATUS_NAME 32
/* Distinct status names counted: room for every gs_status and more (a
 * ninth name was dropped when this was 8, below the ten statuses). */
#define MAX_STATUSES 16
_Static_assert(GS_STATUS__COUNT + 1 <= MAX_STATUSES, "room for every status and \"unknown\"");

/* Per answer (answers entries): gmax, nact, W, C; per result (count):
 * time and the counts by status, solver, warm start. */
struct gs_cstats {
    int m, cap, count;
    int answers;                /* results with status optimal: those of the w statistics */
    double thr;
    double *sum, *pmax;         /* per pair: sum and largest of w (w < 0 read as 0) */
    double *wmean, *m2;         /* per pair: running mean and sum of squared deviations
                                   (Welford): the std without the cancellation of
                                   sum(w^2) - n mean^2 (identical gaps: 3e-8 mm, not 0) */
    double *lsum;               /* per pair: sum of contact forces */
    int *above;                 /* per pair: answers with w > open_tol */
    int *opened;                /* per pair: answers with w > g + open_tol */
    double open_tol;            /* mm: max(threshold, ROUNDOFF_MM), the one rule of "above" */
    int gaps_opened;            /* answers with some such pair */
    int with_g;                 /* answers whose initial gaps were given */
    long long in_contact;       /* values with lambda != 0 */
    unsigned char *C;           /* answers x m contact flags if kept */
    double *W;                  /* answers x m if kept (exact mode) */
    size_t w_cap;
    int keep;
    double *gmax;               /* per answer: largest residual */
    double *time;               /* per result, ms */
    int *nact;                  /* per answer */
    long long iters;
    int warm, crossovers, kkt_failed, statuses[MAX_STATUSES], n_status;
    char status_name[MAX_STATUSES][STATUS_NAME]; /* gs_status_name */
    char solver_name[8][40];
    int solvers[8], n_solver;
    double all_max;
    long long values_above;
    int oom;
    /* pass 2 and the histograms */
    int bins;
    double width;        /* bin width of the residual histogram (all_max / bins) */
    long long *hist;     /* the answers' values of pairs not in contact */
    unsigned *pair_hist; /* m x PAIR_BINS in binned mode */
    /* finished (finish(): what needs every value is done, W, C and pair_hist freed) */
    double *p95;         /* per pair */
    int finished;
    int recounted;       /* a copy for another threshold: results counted again */
};
typedef struct gs_cstats acc;

/* Only an optimal result is an answer: the others' w and lambda are an
 * iterate (max_iter, no_progress, numerical_breakdown, ray, cancelled,
 * time_limit), a proof of infeasibility (Farkas weights in lambda), or
 * nothing (not_run, infeasible_equality). An optimal result whose KKT
 * certificate fails at tol is an answer (kkt_failed says how many). */
static int is_answer(const gs_cstats_row *r)
{
    return r->status && !strcmp(r->status, gs_status_name(GS_STATUS_OPTIMAL));
}

/* In contact: lambda != 0, the rule of n_act (kkt.c), so that in_contact is
 * the answers' n_act summed (a fixed pair pulls, lambda < 0). */
static int in_contact(const gs_cstats_row *r, int k)
{
    return r->lam && r->lam[k] != 0;
}

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

static void count_name(char names[MAX_STATUSES][STATUS_NAME], int *counts, int *n, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], s)) {
            counts[i]++;
            return;
        }
    if (*n < MAX_STATUSES) {
        snprintf(names[*n], STATUS_NAME, "%s", s);
        counts[(*n)++] = 1;
    }
}

/* What depends on the threshold (an answer's): values above it, pairs
 * opened by more. Both compare with open_tol, so round-off is never above.
 * O(m), without branches (GCC -O2 keeps the loops scalar). */
static void count_threshold(acc *a, const gs_cstats_row *r)
{
    const int m = a->m;
    const double tol = a->open_tol;
    const double *w = r->w, *g = r->g;
    int *above = a->above, *opened = a->opened;
    int va = 0;
    for (int k = 0; k < m; k++) { /* max(w, 0) > tol is w > tol: tol > 0 */
        const int up = w[k] > tol;
        above[k] += up;
        va += up;
    }
    a->values_above += va;
    if (g) {
        int any = 0;
        for (int k = 0; k < m; k++) {
            const int op = w[k] > g[k] + tol;
            opened[k] += op;
            any |= op;
        }
        a->gaps_opened += any;
    }
    a->with_g += g != NULL;
}

/* An answer into the statistics of w, lambda and n_act. O(m). */
static void add_answer(acc *a, const gs_cstats_row *r)
{
    double gm = 0;
    const double inv_n = 1.0 / (a->answers + 1);
    for (int k = 0; k < a->m; k++) {
        double w = r->w[k] > 0 ? r->w[k] : 0;
        a->sum[k] += w;
        const double dev = w - a->wmean[k]; /* Welford: O(1) per pair, one pass */
        a->wmean[k] += dev * inv_n;
        a->m2[k] += dev * (w - a->wmean[k]);
        if (w > a->pmax[k])
            a->pmax[k] = w;
        if (w > gm)
            gm = w;
        if (r->lam) {
            a->lsum[k] += r->lam[k];
            a->in_contact += in_contact(r, k);
        }
    }
    count_threshold(a, r);
    const size_t row = (size_t)a->answers * (size_t)a->m;
    if (a->keep)
        for (int k = 0; k < a->m; k++) {
            a->W[row + (size_t)k] = r->w[k] > 0 ? r->w[k] : 0;
            a->C[row + (size_t)k] = (unsigned char)in_contact(r, k);
        }
    if (gm > a->all_max)
        a->all_max = gm;
    a->gmax[a->answers] = gm;
    a->nact[a->answers] = r->n_act;
    a->answers++;
}

/* What every result counts in: its time, status, solver. O(1). */
static void add_result(acc *a, const gs_cstats_row *r)
{
    a->time[a->count] = 1e3 * r->time;
    a->iters += r->iterations;
    a->warm += r->warm_used;
    a->crossovers += r->crossover;
    a->kkt_failed += r->kkt_failed != 0;
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
}

gs_err gs_cstats_add(gs_cstats *a, const gs_cstats_row *r, gs_error *err)
{
    if (!r->w || r->m != a->m)
        return GS_OK; /* a result without vectors (not stored): skipped */
    if (a->finished)
        return gs_errorf(err, GS_ERR_INVALID, "", "the statistics are finished");
    if (a->oom || grow(a) != 0) {
        a->oom = 1;
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory for the summary of %d gaps",
                         a->count + 1);
    }
    if (is_answer(r))
        add_answer(a, r);
    add_result(a, r);
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
    if (!r->w || r->m != m || !is_answer(r) || a->keep || a->finished ||
        start_hist(a, NULL) != GS_OK)
        return;
    for (int k = 0; k < m; k++) {
        double w = r->w[k] > 0 ? r->w[k] : 0;
        if (!in_contact(r, k)) /* open pairs only */
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
        return NAN; /* null: a statistic of no value */
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

/* Edge i of a histogram of bins bins over [lo, hi]: evenly spaced in x,
 * or in log x (logx, l0 = log lo); the ends exact, all lo when width is 0. */
static double hist_edge(int i, int bins, double lo, double hi, double l0, double width, int logx)
{
    if (i == bins)
        return hi;
    if (i == 0 || width == 0)
        return lo;
    return logx ? exp(l0 + width * i) : lo + width * i;
}

/* Distribution of v[0..n) (sorted in place); logx: histogram bins evenly
 * spaced in log(v) (when all v > 0), "log": true in the histogram. */
static void dist_json(gs_buf *b, const char *name, double *v, int n, int bins, int logx)
{
    if (n > 0) /* v may be NULL when there are no results */
        qsort(v, (size_t)n, sizeof *v, cmp_double);
    double mean = 0;
    for (int i = 0; i < n; i++)
        mean += v[i];
    mean = n ? mean / n : NAN; /* NAN: null, a statistic of no value */
    gs_buf_printf(b, "\"%s\":{\"min\":", name);
    gs_buf_json_num(b, n ? v[0] : NAN);
    gs_buf_puts(b, ",\"mean\":");
    gs_buf_json_num(b, mean);
    gs_buf_puts(b, ",\"median\":");
    gs_buf_json_num(b, quantile_sorted(v, n, 0.5));
    gs_buf_puts(b, ",\"p95\":");
    gs_buf_json_num(b, quantile_sorted(v, n, 0.95));
    gs_buf_puts(b, ",\"max\":");
    gs_buf_json_num(b, n ? v[n - 1] : NAN);
    double lo = n ? v[0] : NAN, hi = n ? v[n - 1] : NAN;
    /* log bins whenever every value is > 0 (docs/api.md), all equal ones
     * included (width 0: every value in the first bin) */
    logx = logx && lo > 0;
    double l0 = logx ? log(lo) : lo, width = hi > lo ? ((logx ? log(hi) : hi) - l0) / bins : 0;
    gs_buf_puts(b, ",\"histogram\":{\"edges\":[");
    for (int i = 0; i <= bins; i++) {
        if (i)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, hist_edge(i, bins, lo, hi, l0, width, logx));
    }
    gs_buf_puts(b, "],\"counts\":[");
    int *cnt = bins > 0 ? calloc((size_t)bins, sizeof *cnt) : NULL; /* bins >= 1 by the callers */
    for (int i = 0; cnt && i < n; i++)
        cnt[bin_of(logx ? log(v[i]) : v[i], l0, width, bins)]++;
    for (int i = 0; i < bins; i++)
        gs_buf_printf(b, i ? ",%d" : "%d", cnt ? cnt[i] : 0);
    free(cnt);
    gs_buf_printf(b, "],\"log\":%s}}", logx ? "true" : "false");
}

/* v[0..m) as a JSON array, or m nulls when no answer (n == 0) made them. */
static void nums_or_nulls(gs_buf *b, const double *v, int m, int n)
{
    if (n > 0) {
        gs_buf_json_nums(b, v, m);
        return;
    }
    gs_buf_puts(b, "[");
    for (int k = 0; k < m; k++)
        gs_buf_puts(b, k ? ",null" : "null");
    gs_buf_puts(b, "]");
}

/* Each pair's 95th percentile residual into q[m]. Exact mode: W is row
 * major (a result's m values together), so the values of one pair are m
 * doubles apart; they are gathered P95_BLOCK pairs at a time (one pass over
 * W reading P95_BLOCK contiguous values per result, instead of one cache
 * line per value), then selected: O(n) expected per pair, O(n m) in all.
 * Binned mode: the first of the pair's 256 bins that reaches the rank, its
 * upper edge. blk: P95_BLOCK x n doubles (exact mode). */
static void pair_p95(const acc *a, double *blk, double *q)
{
    const int m = a->m, n = a->answers;
    if (!n) {
        memset(q, 0, sizeof(double) * (size_t)m);
        return;
    }
    int rank = (int)ceil(0.95 * n) - 1;
    rank = rank < 0 ? 0 : rank;
    if (a->keep) {
        for (int k0 = 0; k0 < m; k0 += P95_BLOCK) {
            const int nb = m - k0 < P95_BLOCK ? m - k0 : P95_BLOCK;
            for (int i = 0; i < n; i++) {
                const double *row = a->W + (size_t)i * (size_t)m + (size_t)k0;
                for (int j = 0; j < nb; j++)
                    blk[(size_t)j * (size_t)n + (size_t)i] = row[j];
            }
            for (int j = 0; j < nb; j++)
                q[k0 + j] = select_kth(blk + (size_t)j * (size_t)n, n, rank);
        }
        return;
    }
    for (int k = 0; k < m; k++) {
        const unsigned *h = a->pair_hist + (size_t)k * PAIR_BINS;
        long long need = (long long)rank + 1, cum = 0;
        int bin = 0;
        for (; bin < PAIR_BINS; bin++)
            if ((cum += h[bin]) >= need)
                break;
        q[k] = a->pmax[k] * (bin + 1) / PAIR_BINS; /* upper edge of the bin */
    }
}

gs_cstats *gs_cstats_new(int m, long long total, double threshold, int bins, gs_error *err)
{
    if (!(threshold >= 0)) {
        gs_errorf(err, GS_ERR_INVALID, "threshold", "threshold must be >= 0 (mm)");
        return NULL;
    }
    acc *a = calloc(1, sizeof *a);
    if (a) {
        a->m = m;
        a->thr = threshold;
        a->open_tol = threshold > ROUNDOFF_MM ? threshold : ROUNDOFF_MM;
        a->bins = bins > 0 ? bins : 1;
        a->keep = total * (long long)m <= (long long)EXACT_LIMIT;
        a->recounted = -1; /* not a copy for another threshold */
        a->sum = calloc((size_t)m, sizeof(double));
        a->wmean = calloc((size_t)m, sizeof(double));
        a->m2 = calloc((size_t)m, sizeof(double));
        a->pmax = calloc((size_t)m, sizeof(double));
        a->above = calloc((size_t)m, sizeof(int));
        a->lsum = calloc((size_t)m, sizeof(double));
        a->opened = calloc((size_t)m, sizeof(int));
    }
    if (!a || !a->sum || !a->wmean || !a->m2 || !a->pmax || !a->above || !a->lsum ||
        !a->opened) {
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
    free(a->wmean);
    free(a->m2);
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
    free(a->p95);
    free(a);
}

/* Everything that needs all the values: the residual histogram (from the
 * kept values, or pass 2) and each pair's p95; then the kept values and the
 * pair histograms are freed. What is left is O(m + k). Idempotent. */
static gs_err finish(acc *a, gs_error *err)
{
    if (a->finished)
        return GS_OK;
    gs_err rc = start_hist(a, err);
    if (rc)
        return rc;
    const int m = a->m;
    a->p95 = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    double *blk = a->keep ? malloc(sizeof(double) * P95_BLOCK *
                                   (size_t)(a->answers > 0 ? a->answers : 1))
                          : NULL;
    if (!a->p95 || (a->keep && !blk)) {
        free(blk);
        free(a->p95);
        a->p95 = NULL;
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    if (a->keep)
        for (size_t i = 0; i < (size_t)a->answers * (size_t)m; i++)
            if (!a->C[i]) /* open pairs only */
                a->hist[bin_of(a->W[i], 0, a->width, a->bins)]++;
    pair_p95(a, blk, a->p95);
    free(blk);
    free(a->W);
    free(a->C);
    free(a->pair_hist);
    a->W = NULL;
    a->C = NULL;
    a->pair_hist = NULL;
    a->finished = 1;
    return GS_OK;
}

/* malloc'ed copy of n elements of size sz (n may be 0); NULL when out of memory. */
static void *dup_array(const void *p, size_t n, size_t sz)
{
    void *q = malloc(n ? n * sz : 1);
    if (q && n)
        memcpy(q, p, n * sz);
    return q;
}

gs_cstats *gs_cstats_threshold(const gs_cstats *s, double threshold, gs_error *err)
{
    if (!s->finished || !(threshold >= 0)) {
        gs_errorf(err, GS_ERR_INVALID, s->finished ? "threshold" : "",
                  s->finished ? "threshold must be >= 0 (mm)" : "the statistics are not finished");
        return NULL;
    }
    acc *a = malloc(sizeof *a);
    if (!a) {
        gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        return NULL;
    }
    *a = *s;
    const size_t m = (size_t)s->m, n = (size_t)s->answers;
    a->thr = threshold;
    a->open_tol = threshold > ROUNDOFF_MM ? threshold : ROUNDOFF_MM;
    a->values_above = 0;
    a->gaps_opened = 0;
    a->with_g = 0;
    a->recounted = 0;
    a->cap = s->count;
    a->sum = dup_array(s->sum, m, sizeof(double));
    a->wmean = dup_array(s->wmean, m, sizeof(double));
    a->m2 = dup_array(s->m2, m, sizeof(double));
    a->pmax = dup_array(s->pmax, m, sizeof(double));
    a->lsum = dup_array(s->lsum, m, sizeof(double));
    a->p95 = dup_array(s->p95, m, sizeof(double));
    a->above = calloc(m ? m : 1, sizeof(int));
    a->opened = calloc(m ? m : 1, sizeof(int));
    a->gmax = dup_array(s->gmax, n, sizeof(double));
    a->time = dup_array(s->time, (size_t)s->count, sizeof(double));
    a->nact = dup_array(s->nact, n, sizeof(int));
    a->hist = dup_array(s->hist, (size_t)s->bins, sizeof(long long));
    if (!a->sum || !a->wmean || !a->m2 || !a->pmax || !a->lsum || !a->p95 || !a->above ||
        !a->opened ||
        !a->gmax || !a->time || !a->nact || !a->hist) {
        gs_cstats_free(a);
        gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        return NULL;
    }
    return a;
}

void gs_cstats_add_threshold(gs_cstats *a, const gs_cstats_row *r)
{
    if (!r->w || r->m != a->m || a->recounted < 0)
        return;
    if (is_answer(r))
        count_threshold(a, r);
    a->recounted++; /* every result, as pass 1 took them */
}

size_t gs_cstats_bytes(const gs_cstats *a)
{
    size_t per_pair = 6 * sizeof(double) + 2 * sizeof(int);
    size_t per_result = 2 * sizeof(double) + sizeof(int);
    return sizeof *a + (size_t)a->m * per_pair + (size_t)a->cap * per_result +
           (size_t)a->bins * sizeof(long long) +
           (a->W ? (size_t)a->cap * (size_t)a->m * (sizeof(double) + 1) : 0) +
           (a->pair_hist ? (size_t)a->m * PAIR_BINS * sizeof(unsigned) : 0);
}

gs_err gs_cstats_json(gs_cstats *s, const char *job_id, const char *assembly_id,
                      const char *status, long long total, gs_buf *b, gs_error *err)
{
    acc *const a = s;
    const int m = a->m;
    gs_err rc = finish(a, err);
    if (rc)
        return rc;
    if (a->recounted != -1 && a->recounted != a->count)
        return gs_errorf(err, GS_ERR_INVALID, "", "%d results counted again for the threshold, "
                         "%d summarized", a->recounted, a->count);
    const int bins = a->bins;
    const double thr = a->thr;
    const int n = a->answers; /* the statistics of w, lambda, n_act: answers only */
    long long gaps_above = 0;
    for (int i = 0; i < n; i++)
        gaps_above += a->gmax[i] > a->open_tol;
    gs_buf_puts(b, "{\"job_id\":");
    gs_buf_json_str(b, job_id);
    gs_buf_puts(b, ",\"assembly_id\":");
    gs_buf_json_str(b, assembly_id);
    gs_buf_puts(b, ",\"status\":");
    gs_buf_json_str(b, status);
    gs_buf_printf(b, ",\"count\":%d,\"answers\":%d,\"total\":%lld,\"m\":%d,\"units\":\"mm\","
                  "\"threshold\":", a->count, n, total, m);
    gs_buf_json_num(b, thr);
    gs_buf_puts(b, ",\"share_gaps_above\":");
    gs_buf_json_num(b, n ? (double)gaps_above / n : NAN); /* NAN: null, no answer */
    gs_buf_puts(b, ",\"share_values_above\":");
    gs_buf_json_num(b, n ? (double)a->values_above / ((double)n * m) : NAN);
    gs_buf_puts(b, ",");
    double *gm = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (gm && n > 0) /* a->gmax is NULL until the first result */
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
    if (a->with_g || n == 0) { /* null: results whose gaps could not be read */
        int npairs = 0;
        for (int k = 0; k < m; k++)
            npairs += a->opened[k] > 0;
        gs_buf_printf(b, "\"opened\":{\"gaps\":%d,\"share_gaps\":", a->gaps_opened);
        gs_buf_json_num(b, n ? (double)a->gaps_opened / n : NAN);
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
        gs_buf_json_num(b, n ? a->sum[k] / n : NAN);
    }
    gs_buf_puts(b, "],\"std\":[");
    for (int k = 0; k < m; k++) {
        const double var = n > 1 ? a->m2[k] / (n - 1) : n ? 0 : NAN; /* m2 >= 0 */
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, sqrt(var));
    }
    gs_buf_puts(b, "],\"max\":");
    nums_or_nulls(b, a->pmax, m, n);
    gs_buf_puts(b, ",\"p95\":");
    nums_or_nulls(b, a->p95, m, n);
    gs_buf_printf(b, ",\"p95_exact\":%s,\"share_above\":[", a->keep ? "true" : "false");
    for (int k = 0; k < m; k++) {
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, n ? (double)a->above[k] / n : NAN);
    }
    gs_buf_puts(b, "],\"lambda_mean\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, n ? a->lsum[k] / n : NAN);
    }
    gs_buf_puts(b, "],\"opened\":[");
    for (int k = 0; k < m; k++) {
        if (k)
            gs_buf_puts(b, ",");
        gs_buf_json_num(b, !n ? NAN : a->with_g ? (double)a->opened[k] / n : 0);
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
    dist_json(b, "time_ms", a->time, a->count, bins, 1); /* every solve's time */
    gs_buf_puts(b, ",\"statuses\":{");
    int not_optimal = 0;
    for (int i = 0; i < a->n_status; i++) {
        gs_buf_printf(b, "%s\"%s\":%d", i ? "," : "", a->status_name[i], a->statuses[i]);
        if (strcmp(a->status_name[i], "optimal"))
            not_optimal += a->statuses[i];
    }
    gs_buf_printf(b, "},\"failures\":%d,\"kkt_failed\":%d,\"solvers\":{", not_optimal,
                  a->kkt_failed);
    for (int i = 0; i < a->n_solver; i++)
        gs_buf_printf(b, "%s\"%s\":%d", i ? "," : "", a->solver_name[i], a->solvers[i]);
    gs_buf_printf(b, "},\"warm_started\":%d,\"crossovers\":%d,\"iterations\":{\"total\":%lld,"
                   "\"mean\":",
                   a->warm, a->crossovers, a->iters);
    gs_buf_json_num(b, a->count ? (double)a->iters / a->count : NAN);
    gs_buf_puts(b, "}}");
    return GS_OK;
}
