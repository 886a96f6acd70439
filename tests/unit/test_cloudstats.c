/*
 * test_cloudstats.c -- the cloud statistics (runner/cloudstats.c) behind
 * gapsimd's summary and gapsim-mpi's summary file:
 *   - a hand-made cloud of four gaps over three pairs: every count, share,
 *     quantile and histogram entry at its exact value;
 *   - the copy for another threshold (gs_cstats_threshold + one counting
 *     pass) writes the same bytes as a full computation at that threshold,
 *     with the kept values (exact p95) and with the binned p95 of large
 *     clouds (two passes);
 *   - "opened" at threshold 0 keeps its 1e-9 mm floor;
 *   - no result yet: every figure 0, at that threshold and another;
 *   - only answers (status optimal) in the residual, force, n_act and
 *     histogram statistics: an infeasible result's Farkas weights and a
 *     max_iter iterate's penetrations are left out ("answers" says how many
 *     are in), statuses, failures, kkt_failed and times count every result;
 *     with the kept values and with two passes (binned p95), and in the copy
 *     for another threshold;
 *   - one rule for "above the threshold": a residual at or below the 1e-9 mm
 *     round-off floor is closed, at threshold 0 too (all-zero gaps: share 0);
 *   - in contact is lambda != 0, n_act's rule: a fixed pair pulling (lambda
 *     < 0, w = 0) is in in_contact, not in the open pairs' histogram;
 *   - refusals: a negative threshold, a copy of unfinished statistics, a
 *     copy fed another number of results.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cloudstats.h"
#include "gs_test.h"
#include "json_parse.h"

/* o at path "a.b.c" (o["a"]["b"]["c"]), or NULL. */
static const cJSON *item(const cJSON *o, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *x = o;
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t && x; t = strtok_r(NULL, ".", &save))
        x = cJSON_GetObjectItemCaseSensitive(x, t);
    return x;
}

static double num(const cJSON *o, const char *path)
{
    const cJSON *x = item(o, path);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static double at(const cJSON *o, const char *group, const char *key, int i)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, group), key);
    const cJSON *x = cJSON_GetArrayItem(a, i);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* 1 if o at path ("a.b.c") is JSON null (not missing, not a number). */
static int is_null(const cJSON *o, const char *path)
{
    return cJSON_IsNull(item(o, path));
}

/* 1 if every item of o[group][key] (m of them) is JSON null. */
static int all_null(const cJSON *o, const char *group, const char *key, int m)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, group), key);
    if (cJSON_GetArraySize(a) != m)
        return 0;
    for (int i = 0; i < m; i++)
        if (!cJSON_IsNull(cJSON_GetArrayItem(a, i)))
            return 0;
    return 1;
}

static gs_cstats_row row_of(const double *w, const double *lam, const double *g, int m, int i)
{
    gs_cstats_row r = {.w = w, .lam = lam, .g = g, .m = m, .time = 1e-3 * (i + 1),
                       .n_act = i, .iterations = 2 * i, .warm_used = i % 2,
                       .crossover = i == 2, .kkt_failed = i == 3, .status = "optimal",
                       .method = "gi", .form = "relative"};
    return r;
}

/* The summary of rows (k results of m pairs; statuses st, n_act na) at
 * threshold t; total: results expected (a large one: two passes, binned
 * p95). NULL on any error. */
static cJSON *summarize(const double *w, const double *lam, const double *g, const char *const *st,
                        const int *na, int k, int m, long long total, double t)
{
    gs_error e;
    gs_cstats *s = gs_cstats_new(m, total, t, 4, &e);
    if (!s)
        return NULL;
    int ok = 1;
    for (int pass = 1; ok && pass <= (gs_cstats_second_pass(s) ? 2 : 1); pass++)
        for (int i = 0; ok && i < k; i++) {
            const size_t o = (size_t)i * (size_t)m;
            gs_cstats_row r = row_of(w + o, lam ? lam + o : NULL, g ? g + o : NULL, m, i);
            r.status = st ? st[i] : "optimal";
            r.n_act = na ? na[i] : r.n_act;
            if (pass == 1)
                ok = gs_cstats_add(s, &r, &e) == GS_OK;
            else
                gs_cstats_add2(s, &r);
        }
    gs_buf b = {0};
    ok = ok && gs_cstats_json(s, "j", "a", "done", total, &b, &e) == GS_OK;
    cJSON *o = ok ? gs_json_parse(b.p, b.len, NULL, NULL) : NULL;
    gs_buf_free(&b);
    gs_cstats_free(s);
    return o;
}

/* The summary at threshold t of k rows (m pairs; lam NULL: no forces) as a
 * summary cache computes it: the statistics at t0, their summary written
 * once (which finishes them), then gs_cstats_threshold's copy at t counting
 * the rows again. NULL on any error. */
static cJSON *summarize_again(const double *w, const double *lam, const double *g, int k, int m,
                              double t0, double t)
{
    gs_error e;
    gs_cstats *s = gs_cstats_new(m, k, t0, 4, &e), *c = NULL;
    int ok = s != NULL;
    for (int i = 0; ok && i < k; i++) {
        const size_t o = (size_t)i * (size_t)m;
        gs_cstats_row r = row_of(w + o, lam ? lam + o : NULL, g ? g + o : NULL, m, i);
        ok = gs_cstats_add(s, &r, &e) == GS_OK;
    }
    gs_buf b = {0};
    ok = ok && gs_cstats_json(s, "j", "a", "done", k, &b, &e) == GS_OK;
    gs_buf_free(&b);
    ok = ok && (c = gs_cstats_threshold(s, t, &e)) != NULL;
    for (int i = 0; ok && i < k; i++) {
        const size_t o = (size_t)i * (size_t)m;
        gs_cstats_row r = row_of(w + o, NULL, g ? g + o : NULL, m, i);
        gs_cstats_add_threshold(c, &r);
    }
    ok = ok && gs_cstats_json(c, "j", "a", "done", k, &b, &e) == GS_OK;
    cJSON *out = ok ? gs_json_parse(b.p, b.len, NULL, NULL) : NULL;
    gs_buf_free(&b);
    gs_cstats_free(c);
    gs_cstats_free(s);
    return out;
}

/* Four gaps, three pairs. w (residual), lam (force), g (initial gap):
 *   gap 0: w = 0.0  0.2  0.05   lam = 5 0 0     g = 0.1 0.1 0.1
 *   gap 1: w = 0.0  0.0  0.3    lam = 2 1 0     g = 0.1 0.2 0.1   (pair 2 opens: 0.3 > 0.1 + 0.1)
 *   gap 2: w = 0.15 0.0  0.0    lam = 0 3 4     g = 0.2 0.2 0.2
 *   gap 3: w = 0.4 -1e-12 0.1   lam = 0 0 0     g = 0.2 0.1 0.1   (pair 0 opens) */
GS_TEST(hand_made_cloud_exact_values)
{
    static const double W[4][3] = {{0, 0.2, 0.05}, {0, 0, 0.3}, {0.15, 0, 0}, {0.4, -1e-12, 0.1}};
    static const double L[4][3] = {{5, 0, 0}, {2, 1, 0}, {0, 3, 4}, {0, 0, 0}};
    static const double G[4][3] = {{0.1, 0.1, 0.1}, {0.1, 0.2, 0.1}, {0.2, 0.2, 0.2}, {0.2, 0.1, 0.1}};
    gs_error e;
    gs_cstats *s = gs_cstats_new(3, 4, 0.1, 4, &e);
    GS_CHECK(s != NULL);
    for (int i = 0; i < 4; i++) {
        gs_cstats_row r = row_of(W[i], L[i], G[i], 3, i);
        GS_CHECK_INT(gs_cstats_add(s, &r, &e), GS_OK);
    }
    GS_CHECK(!gs_cstats_second_pass(s));
    gs_buf b = {0};
    GS_CHECK_INT(gs_cstats_json(s, "j_1", "a_1", "done", 4, &b, &e), GS_OK);
    cJSON *o = gs_json_parse(b.p, b.len, NULL, NULL);
    GS_CHECK(o != NULL);
    GS_CHECK_INT((int)num(o, "count"), 4);
    /* values above 0.1: 0.2, 0.3, 0.15, 0.4 -> 4 of 12; gaps whose largest is above: all four */
    GS_CHECK(num(o, "share_values_above") == 4.0 / 12);
    GS_CHECK(num(o, "share_gaps_above") == 1.0);
    /* largest residual per gap: 0.2 0.3 0.15 0.4 -> median (nearest rank 2 of 4) 0.2, p95 0.4 */
    GS_CHECK(num(o, "max_residual.min") == 0.15);
    GS_CHECK(num(o, "max_residual.median") == 0.2);
    GS_CHECK(num(o, "max_residual.p95") == 0.4);
    GS_CHECK(num(o, "max_residual.max") == 0.4);
    /* per pair; the negative round-off counts as 0 */
    GS_CHECK(at(o, "pairs", "mean", 0) == (0.15 + 0.4) / 4);
    GS_CHECK(at(o, "pairs", "max", 1) == 0.2);
    GS_CHECK(at(o, "pairs", "p95", 2) == 0.3);
    GS_CHECK(at(o, "pairs", "share_above", 0) == 0.5);
    GS_CHECK(at(o, "pairs", "share_above", 1) == 0.25);
    GS_CHECK(at(o, "pairs", "share_above", 2) == 0.25);
    GS_CHECK(at(o, "pairs", "lambda_mean", 2) == 1.0);
    /* opened: w > g + 0.1: gap 1 pair 2 (0.3 > 0.2), gap 3 pair 0 (0.4 > 0.3) */
    GS_CHECK_INT((int)num(o, "opened.gaps"), 2);
    GS_CHECK_INT((int)num(o, "opened.pairs"), 2);
    GS_CHECK(at(o, "pairs", "opened", 0) == 0.25);
    GS_CHECK(at(o, "pairs", "opened", 1) == 0.0);
    /* 5 values in contact (lam > 0); the 7 open ones binned over [0, 0.4] in 4 bins of
     * width 0.4 / 4 = 0.1 by (int)(w / width): 0.05, 0 (the round-off) -> 0; 0.1, 0.15 -> 1;
     * 0.2 and 0.3 (0.3 / 0.1 = 2.9999999999999996) -> 2; 0.4 -> 4, the last bin 3 */
    GS_CHECK_INT((int)num(o, "residual_histogram.in_contact"), 5);
    const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(o, "residual_histogram"), "counts");
    static const int want[4] = {2, 2, 2, 1};
    for (int i = 0; i < 4; i++)
        GS_CHECK_INT(cJSON_GetArrayItem(cnt, i)->valueint, want[i]);
    GS_CHECK_INT((int)num(o, "iterations.total"), 12);
    GS_CHECK_INT((int)num(o, "warm_started"), 2);
    GS_CHECK_INT((int)num(o, "crossovers"), 1);
    GS_CHECK_INT((int)num(o, "kkt_failed"), 1);
    GS_CHECK_INT((int)num(o, "failures"), 0);
    cJSON_Delete(o);
    gs_buf_free(&b);
    gs_cstats_free(s);
}

/* A cloud like a solver's: about a quarter of the pairs closed (w = 0, lam >
 * 0), the others open, some beyond their initial gap, some above it by less
 * than the 1e-9 mm floor of "opened". */
static void fill(double *w, double *lam, double *g, int k, int m, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1;
    for (size_t i = 0; i < (size_t)k * m; i++) {
        x = x * 1664525u + 1013904223u;
        double u = (x >> 8) / 16777216.0;
        g[i] = 0.05 + 0.3 * u;
        int closed = (x & 3) == 0;
        w[i] = closed ? 0 : g[i] * (0.2 + 1.1 * ((x >> 4 & 255) / 255.0)) - 1e-13 * (x & 1);
        lam[i] = closed ? 10 * u : 0;
        if (!closed && (x >> 12 & 31) == 0)
            w[i] = g[i] + 5e-10; /* above g by round-off only: not opened at threshold 0 */
    }
}

/* The full computation at threshold t: the JSON text (malloc'ed). */
static char *full(const double *w, const double *lam, const double *g, int k, int m, double t,
                  int bins, gs_cstats **keep)
{
    gs_error e;
    gs_cstats *s = gs_cstats_new(m, k, t, bins, &e);
    if (!s)
        return NULL;
    for (int pass = 1; pass <= (gs_cstats_second_pass(s) ? 2 : 1); pass++)
        for (int i = 0; i < k; i++) {
            size_t o = (size_t)i * m;
            gs_cstats_row r = row_of(w + o, lam + o, g + o, m, i);
            if (pass == 1 && gs_cstats_add(s, &r, &e) != GS_OK) {
                gs_cstats_free(s);
                return NULL;
            }
            if (pass == 2)
                gs_cstats_add2(s, &r);
        }
    gs_buf b = {0};
    gs_err rc = gs_cstats_json(s, "j_1", "a_1", "done", k, &b, &e);
    if (keep && !rc)
        *keep = s;
    else
        gs_cstats_free(s);
    return rc ? NULL : gs_buf_take(&b, NULL);
}

/* The text at threshold t from the finished statistics s; fed `rows` results. */
static char *again(const gs_cstats *s, const double *w, const double *g, int m, int rows, double t,
                   gs_err *rc)
{
    gs_error e;
    gs_cstats *c = gs_cstats_threshold(s, t, &e);
    if (!c)
        return NULL;
    for (int i = 0; i < rows; i++) {
        size_t o = (size_t)i * m;
        gs_cstats_row r = row_of(w + o, NULL, g + o, m, i); /* lam is not read */
        gs_cstats_add_threshold(c, &r);
    }
    gs_buf b = {0};
    *rc = gs_cstats_json(c, "j_1", "a_1", "done", rows, &b, &e);
    gs_cstats_free(c);
    return *rc ? (gs_buf_free(&b), NULL) : gs_buf_take(&b, NULL);
}

static void check_thresholds(int k, int m, int bins, const double *ts, int nt)
{
    double *w = malloc(sizeof(double) * (size_t)k * m), *lam = malloc(sizeof(double) * (size_t)k * m),
           *g = malloc(sizeof(double) * (size_t)k * m);
    GS_CHECK(w && lam && g);
    fill(w, lam, g, k, m, (unsigned)(k + m));
    gs_cstats *s = NULL;
    char *first = full(w, lam, g, k, m, 0.1, bins, &s);
    GS_CHECK(first && s);
    for (int j = 0; j < nt; j++) {
        char *want = full(w, lam, g, k, m, ts[j], bins, NULL);
        gs_err rc = GS_OK;
        char *got = again(s, w, g, m, k, ts[j], &rc);
        GS_CHECK_INT(rc, GS_OK);
        GS_CHECK(want && got);
        GS_CHECK_MSG(!strcmp(want, got), "threshold %g: the copy's text differs", ts[j]);
        free(want);
        free(got);
    }
    /* the statistics themselves still write their own threshold's text */
    gs_buf b = {0};
    gs_error e;
    GS_CHECK_INT(gs_cstats_json(s, "j_1", "a_1", "done", k, &b, &e), GS_OK);
    GS_CHECK(b.len == strlen(first) && !memcmp(b.p, first, b.len));
    gs_buf_free(&b);
    free(first);
    gs_cstats_free(s);
    free(w);
    free(lam);
    free(g);
}

GS_TEST(another_threshold_same_text_exact_p95)
{
    static const double ts[] = {0, 1e-9, 0.02, 0.1, 0.137, 0.3, 1e3};
    check_thresholds(300, 97, 20, ts, 7);
}

GS_TEST(another_threshold_same_text_binned_p95)
{
    /* 8,200 x 2,100 = 17.2 million values: above the kept limit (16 Mi) */
    static const double ts[] = {0, 0.05, 0.25};
    check_thresholds(8200, 2100, 13, ts, 3);
}

/* "Opened" needs w above g by more than max(threshold, 1e-9 mm): round-off
 * above the initial gap is not prying, at threshold 0 too (full and copy). */
GS_TEST(opened_floor_at_threshold_zero)
{
    static const double g[2][2] = {{0.1, 0.2}, {0.1, 0.2}};
    static const double w[2][2] = {{0.1 + 5e-10, 0.2}, {0.1, 0.2 + 2e-9}};
    cJSON *o = summarize(&w[0][0], NULL, &g[0][0], NULL, NULL, 2, 2, 2, 0);
    GS_CHECK(o != NULL);
    GS_CHECK_INT((int)num(o, "opened.gaps"), 1);
    GS_CHECK(at(o, "pairs", "opened", 0) == 0 && at(o, "pairs", "opened", 1) == 0.5);
    cJSON_Delete(o);
    o = summarize_again(&w[0][0], NULL, &g[0][0], 2, 2, 0, 0);
    GS_CHECK(o != NULL);
    GS_CHECK_INT((int)num(o, "opened.gaps"), 1);
    cJSON_Delete(o);
}

/* A job with no result yet (just queued, or cancelled before its first
 * gap): every statistic null (a statistic of no value; it was 0, which
 * read as "every pair closed"), the counts 0 and the histograms empty, at
 * the threshold asked and at another one (the sanitized daemon aborted here
 * on a NULL array). */
GS_TEST(no_results_yet)
{
    gs_error e;
    gs_cstats *s = gs_cstats_new(3, 5, 0.1, 4, &e);
    GS_CHECK(s != NULL);
    gs_buf b = {0};
    GS_CHECK_INT(gs_cstats_json(s, "j", "a", "cancelled", 5, &b, &e), GS_OK);
    cJSON *o = gs_json_parse(b.p, b.len, NULL, NULL);
    GS_CHECK(o != NULL);
    GS_CHECK(num(o, "count") == 0 && num(o, "total") == 5);
    GS_CHECK(is_null(o, "share_gaps_above") && is_null(o, "share_values_above"));
    /* counts 0, "opened" an object (null only when gaps were unreadable) */
    GS_CHECK(num(o, "opened.gaps") == 0 && num(o, "opened.pairs") == 0);
    GS_CHECK(is_null(o, "opened.share_gaps"));
    static const char *const stat[] = {"min", "mean", "median", "p95", "max"};
    for (int i = 0; i < 5; i++) {
        char path[64];
        for (int d = 0; d < 3; d++) {
            static const char *const dist[] = {"max_residual", "n_act", "time_ms"};
            snprintf(path, sizeof path, "%s.%s", dist[d], stat[i]);
            GS_CHECK_MSG(is_null(o, path), "%s", path);
        }
    }
    const cJSON *mh = cJSON_GetObjectItemCaseSensitive(o, "max_residual");
    GS_CHECK(all_null(mh, "histogram", "edges", 5)); /* 4 bins of no value */
    GS_CHECK(is_null(o, "iterations.mean") && num(o, "iterations.total") == 0);
    for (int i = 0; i < 4; i++)
        GS_CHECK(at(o, "residual_histogram", "counts", i) == 0);
    GS_CHECK(isnan(at(o, "residual_histogram", "counts", 4))); /* 4 bins, no more */
    static const char *const per_pair[] = {"mean", "std", "max", "p95", "share_above",
                                           "lambda_mean", "opened"};
    for (int i = 0; i < 7; i++)
        GS_CHECK_MSG(all_null(o, "pairs", per_pair[i], 3), "pairs.%s", per_pair[i]);
    cJSON_Delete(o);
    gs_buf_free(&b);
    gs_cstats *c = gs_cstats_threshold(s, 0.2, &e);
    GS_CHECK(c != NULL);
    GS_CHECK_INT(gs_cstats_json(c, "j", "a", "cancelled", 5, &b, &e), GS_OK);
    o = gs_json_parse(b.p, b.len, NULL, NULL);
    GS_CHECK(o != NULL && num(o, "count") == 0 && num(o, "threshold") == 0.2);
    cJSON_Delete(o);
    gs_buf_free(&b);
    gs_cstats_free(c);
    gs_cstats_free(s);
}

GS_TEST(refusals)
{
    gs_error e;
    GS_CHECK(gs_cstats_new(3, 1, -0.1, 4, &e) == NULL);
    GS_CHECK_INT(e.code, GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "threshold");
    GS_CHECK(gs_cstats_new(3, 1, NAN, 4, &e) == NULL);
    static const double w[3] = {0.1, 0.2, 0.3}, g[3] = {0.1, 0.1, 0.1};
    gs_cstats *s = gs_cstats_new(3, 2, 0.1, 4, &e);
    GS_CHECK(s != NULL);
    gs_cstats_row r = row_of(w, NULL, g, 3, 0);
    GS_CHECK_INT(gs_cstats_add(s, &r, &e), GS_OK);
    GS_CHECK_INT(gs_cstats_add(s, &r, &e), GS_OK);
    GS_CHECK(gs_cstats_threshold(s, 0.2, &e) == NULL); /* not finished */
    GS_CHECK_INT(e.code, GS_ERR_INVALID);
    gs_buf b = {0};
    GS_CHECK_INT(gs_cstats_json(s, "j", "a", "done", 2, &b, &e), GS_OK);
    gs_buf_free(&b);
    GS_CHECK_INT(gs_cstats_add(s, &r, &e), GS_ERR_INVALID); /* finished: no more results */
    GS_CHECK(gs_cstats_threshold(s, -1, &e) == NULL);
    GS_CHECK_STR(e.field, "threshold");
    gs_err rc = GS_OK;
    char *t = again(s, w, g, 3, 1, 0.2, &rc); /* one result of two */
    GS_CHECK(t == NULL);
    GS_CHECK_INT(rc, GS_ERR_INVALID);
    gs_cstats *c = gs_cstats_threshold(s, 0.2, &e); /* both results again: fine */
    GS_CHECK(c != NULL);
    gs_cstats_add_threshold(c, &r);
    gs_cstats_add_threshold(c, &r);
    GS_CHECK_INT(gs_cstats_json(c, "j", "a", "done", 2, &b, &e), GS_OK);
    cJSON *o = gs_json_parse(b.p, b.len, NULL, NULL);
    GS_CHECK(o != NULL);
    GS_CHECK(num(o, "share_values_above") == 2.0 / 6); /* 0.3 twice; 0.2 is not above 0.2 */
    GS_CHECK(num(o, "threshold") == 0.2);
    cJSON_Delete(o);
    gs_buf_free(&b);
    gs_cstats_free(c);
    gs_cstats_free(s);
}

/* Status names are counted whole: "numerical_breakdown" (19 characters)
 * twenty times is one entry of 20 and 20 failures (a 16-byte name field cut
 * it, no two names matched and the results past eight were dropped). */
GS_TEST(long_status_names_are_counted)
{
    static const double w[2] = {0.0, 0.1};
    gs_error e;
    gs_cstats *s = gs_cstats_new(2, 21, 0.1, 4, &e);
    GS_CHECK(s != NULL);
    for (int i = 0; i < 21; i++) {
        gs_cstats_row r = row_of(w, NULL, NULL, 2, i);
        r.status = i < 20 ? "numerical_breakdown" : "infeasible_equality";
        GS_CHECK_INT(gs_cstats_add(s, &r, &e), GS_OK);
    }
    gs_buf b = {0};
    GS_CHECK_INT(gs_cstats_json(s, "j", "a", "done", 21, &b, &e), GS_OK);
    cJSON *o = gs_json_parse(b.p, b.len, NULL, NULL);
    GS_CHECK(o != NULL);
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "statuses");
    GS_CHECK_INT(cJSON_GetArraySize(st), 2);
    GS_CHECK_INT((int)num(o, "statuses.numerical_breakdown"), 20);
    GS_CHECK_INT((int)num(o, "statuses.infeasible_equality"), 1);
    GS_CHECK_INT((int)num(o, "failures"), 21);
    cJSON_Delete(o);
    gs_buf_free(&b);
    gs_cstats_free(s);
}

/* The per-pair std is a sample std computed without cancellation (Welford):
 * identical results give 0 exactly (sum(w^2) - n mean^2 gave up to 3e-8
 * mm on residual gaps of ~1 mm), and values of 100 mm spread by 1e-6 mm
 * keep it to 1e-9 relative of the two-pass std (the old formula: 1.7x it;
 * at 1e3 mm, 0). Times that are
 * all equal and > 0 still make a log histogram (docs/api.md). */
GS_TEST(std_without_cancellation)
{
    enum { M = 4, K = 7 };
    gs_error e;
    double W[K][M];
    for (int i = 0; i < K; i++)
        for (int k = 0; k < M; k++)
            W[i][k] = k == 0 ? 1.0 / 3.0 + 0.1                 /* identical */
                      : k == 1 ? 1e2 + 1e-6 * (i % 3)           /* far from 0, small spread */
                      : k == 2 ? 0.7 * (i + 1)                  /* ordinary */
                               : 0.0;
    gs_cstats *s = gs_cstats_new(M, K, 0.1, 4, &e);
    GS_CHECK(s != NULL);
    for (int i = 0; i < K; i++) {
        gs_cstats_row r = row_of(W[i], NULL, NULL, M, 0); /* every time 1 ms */
        GS_CHECK_INT(gs_cstats_add(s, &r, &e), GS_OK);
    }
    gs_buf b = {0};
    GS_CHECK_INT(gs_cstats_json(s, "j", "a", "done", K, &b, &e), GS_OK);
    cJSON *o = gs_json_parse(b.p, b.len, NULL, NULL);
    GS_CHECK(o != NULL);
    GS_CHECK(at(o, "pairs", "std", 0) == 0.0);
    GS_CHECK(at(o, "pairs", "std", 3) == 0.0);
    for (int k = 1; k <= 2; k++) {
        double mu = 0, ss = 0;
        for (int i = 0; i < K; i++)
            mu += W[i][k] / K;
        for (int i = 0; i < K; i++)
            ss += (W[i][k] - mu) * (W[i][k] - mu);
        const double sd = sqrt(ss / (K - 1));
        GS_CHECK_MSG(fabs(at(o, "pairs", "std", k) - sd) <= 1e-9 * sd, "pair %d: std %.17g, "
                     "two-pass %.17g", k, at(o, "pairs", "std", k), sd);
    }
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "time_ms"),
                                         "histogram"), "log");
    GS_CHECK(cJSON_IsTrue(h));
    GS_CHECK(at(cJSON_GetObjectItemCaseSensitive(o, "time_ms"), "histogram", "counts", 0) == K);
    cJSON_Delete(o);
    gs_buf_free(&b);
    gs_cstats_free(s);
}

/* The sum of the counts of o[name] (residual_histogram) or of
 * o[name].histogram (a distribution). */
static long long hist_sum(const cJSON *o, const char *name)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, name);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(h, "histogram");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(d ? d : h, "counts"), *x;
    long long n = 0;
    cJSON_ArrayForEach(x, c) n += (long long)x->valuedouble;
    return n;
}

/* Four results of three pairs: two answers, an infeasible one (lambda holds
 * Farkas weights, dimensionless; w is no residual of an answer) and a
 * max_iter iterate (penetrations of -0.8 mm, which w < 0 -> 0 would count
 * as closed). Only the answers are in the residual, force and n_act
 * statistics; statuses, failures, kkt_failed (row_of: row 3's) and times
 * take all four. Kept values and two passes alike. */
GS_TEST(only_answers_in_the_statistics)
{
    static const double W[4][3] = {{0, 0.2, 0.05}, {0, 0, 0.3}, {7, 9, 0}, {-0.8, 5, -0.8}};
    static const double L[4][3] = {{5, 0, 0}, {2, 1, 0}, {0.5, 0, 0.25}, {40, 0, 40}};
    static const double G[4][3] = {{0.1, 0.1, 0.1}, {0.1, 0.2, 0.1}, {0.1, 0.1, 0.1},
                                   {0.1, 0.1, 0.1}};
    static const char *const ST[4] = {"optimal", "optimal", "infeasible", "max_iter"};
    static const int NA[4] = {1, 2, 2, 2};
    for (int big = 0; big < 2; big++) {
        cJSON *o = summarize(&W[0][0], &L[0][0], &G[0][0], ST, NA, 4, 3, big ? 1 << 24 : 4, 0.1);
        GS_CHECK(o != NULL);
        GS_CHECK_INT((int)num(o, "count"), 4);
        GS_CHECK(at(o, "pairs", "lambda_mean", 0) == 3.5);    /* (5 + 2) / 2: no weights */
        GS_CHECK(at(o, "pairs", "mean", 1) == 0.1);           /* (0.2 + 0) / 2 */
        GS_CHECK(at(o, "pairs", "max", 1) == 0.2);            /* not 9 */
        GS_CHECK_INT((int)num(o, "answers"), 2);
        GS_CHECK(at(o, "pairs", "lambda_mean", 2) == 0.0);
        GS_CHECK(at(o, "pairs", "share_above", 1) == 0.5);
        GS_CHECK(at(o, "pairs", "opened", 2) == 0.5);         /* answer 1: 0.3 > 0.1 + 0.1 */
        GS_CHECK_INT((int)num(o, "opened.gaps"), 1);
        GS_CHECK(num(o, "share_values_above") == 2.0 / 6);    /* 0.2, 0.3 of 2 x 3 */
        GS_CHECK(num(o, "share_gaps_above") == 1.0);
        GS_CHECK(num(o, "max_residual.max") == 0.3);
        GS_CHECK_INT(hist_sum(o, "max_residual"), 2);
        GS_CHECK(num(o, "n_act.max") == 2 && num(o, "n_act.mean") == 1.5);
        GS_CHECK_INT(hist_sum(o, "n_act"), 2);
        /* the answers' 6 residuals: 3 in contact, 3 open */
        GS_CHECK_INT((int)num(o, "residual_histogram.in_contact"), 3);
        GS_CHECK_INT(hist_sum(o, "residual_histogram"), 3);
        GS_CHECK_INT((int)num(o, "statuses.infeasible"), 1);
        GS_CHECK_INT((int)num(o, "statuses.max_iter"), 1);
        GS_CHECK_INT((int)num(o, "failures"), 2);
        GS_CHECK_INT((int)num(o, "kkt_failed"), 1);
        GS_CHECK_INT(hist_sum(o, "time_ms"), 4);
        GS_CHECK_NEAR(num(o, "time_ms.max"), 4, 1e-12);
        GS_CHECK_INT((int)num(o, "iterations.total"), 12);
        cJSON_Delete(o);
    }
}

/* No answer among the results: every statistic of the answers null (as
 * with no result), "opened" an object with counts 0; the statuses and the
 * times still counted. */
GS_TEST(no_answer_only_failures)
{
    static const double W[2][2] = {{-0.5, 3}, {2, 1}};
    static const double L[2][2] = {{1, 0}, {0.5, 0.5}};
    static const char *const ST[2] = {"numerical_breakdown", "infeasible"};
    cJSON *o = summarize(&W[0][0], &L[0][0], &W[0][0], ST, NULL, 2, 2, 2, 0.1);
    GS_CHECK(o != NULL);
    GS_CHECK(is_null(o, "share_gaps_above") && is_null(o, "max_residual.max"));
    GS_CHECK(is_null(o, "max_residual.median") && is_null(o, "n_act.mean"));
    GS_CHECK(num(o, "count") == 2 && num(o, "answers") == 0 && num(o, "failures") == 2);
    GS_CHECK(all_null(o, "pairs", "mean", 2) && all_null(o, "pairs", "lambda_mean", 2));
    GS_CHECK(all_null(o, "pairs", "p95", 2) && all_null(o, "pairs", "max", 2));
    GS_CHECK(num(o, "time_ms.max") > 0 && num(o, "iterations.mean") >= 0); /* every result */
    GS_CHECK(num(o, "residual_histogram.in_contact") == 0);
    GS_CHECK_INT(hist_sum(o, "residual_histogram"), 0);
    GS_CHECK(num(o, "opened.gaps") == 0);
    cJSON_Delete(o);
}

/* The copy for another threshold counts again only the answers: the same
 * text as a full computation, results of every status fed to both. */
GS_TEST(another_threshold_with_failures_same_text)
{
    enum { K = 60, M = 23 };
    static double w[K * M], lam[K * M], g[K * M];
    const char *st[K];
    fill(w, lam, g, K, M, 7);
    for (int i = 0; i < K; i++)
        st[i] = i % 4 == 1 ? "max_iter" : i % 4 == 2 ? "infeasible" : "optimal";
    static const double ts[] = {0, 0.02, 0.1, 0.3};
    gs_error e;
    gs_cstats *s = gs_cstats_new(M, K, 0.1, 6, &e);
    GS_CHECK(s != NULL);
    for (int i = 0; i < K; i++) {
        gs_cstats_row r = row_of(w + i * M, lam + i * M, g + i * M, M, i);
        r.status = st[i];
        GS_CHECK_INT(gs_cstats_add(s, &r, &e), GS_OK);
    }
    gs_buf b = {0};
    GS_CHECK_INT(gs_cstats_json(s, "j", "a", "done", K, &b, &e), GS_OK);
    gs_buf_free(&b);
    for (int j = 0; j < 4; j++) {
        gs_cstats *c = gs_cstats_threshold(s, ts[j], &e), *f = gs_cstats_new(M, K, ts[j], 6, &e);
        GS_CHECK(c && f);
        for (int i = 0; i < K; i++) {
            gs_cstats_row r = row_of(w + i * M, lam + i * M, g + i * M, M, i);
            r.status = st[i];
            gs_cstats_add_threshold(c, &r);
            GS_CHECK_INT(gs_cstats_add(f, &r, &e), GS_OK);
        }
        gs_buf bc = {0}, bf = {0};
        GS_CHECK_INT(gs_cstats_json(c, "j", "a", "done", K, &bc, &e), GS_OK);
        GS_CHECK_INT(gs_cstats_json(f, "j", "a", "done", K, &bf, &e), GS_OK);
        GS_CHECK_MSG(bc.len == bf.len && !memcmp(bc.p, bf.p, bc.len), "threshold %g", ts[j]);
        gs_buf_free(&bc);
        gs_buf_free(&bf);
        gs_cstats_free(c);
        gs_cstats_free(f);
    }
    gs_cstats_free(s);
}

/* Threshold 0 and round-off: the residuals of pairs in contact carry
 * |w| ~ 1e-13 mm of either sign; one rule, a residual at or below 1e-9 mm
 * is closed, for the values above, the gaps above and the per-pair shares,
 * in a full computation and in the copy. All-zero gaps: share 0. */
GS_TEST(threshold_zero_roundoff_is_closed)
{
    static const double W[3][4] = {{1e-15, -2e-15, 0, 1e-9},
                                   {3e-13, 0, 5e-10, 0},
                                   {0, 2e-9, 0, 1e-16}};
    static const double L[3][4] = {{1, 2, 0, 0}, {3, 0, 0, 4}, {5, 0, 6, 7}};
    cJSON *o = summarize(&W[0][0], &L[0][0], NULL, NULL, NULL, 3, 4, 3, 0);
    GS_CHECK(o != NULL);
    GS_CHECK(num(o, "share_values_above") == 1.0 / 12); /* only 2e-9 */
    GS_CHECK(num(o, "share_gaps_above") == 1.0 / 3);
    GS_CHECK(at(o, "pairs", "share_above", 0) == 0 && at(o, "pairs", "share_above", 1) == 1.0 / 3);
    GS_CHECK(at(o, "pairs", "share_above", 3) == 0);
    cJSON_Delete(o);
    /* rows 0 and 1 only: nothing above the floor anywhere */
    o = summarize(&W[0][0], &L[0][0], NULL, NULL, NULL, 2, 4, 2, 0);
    GS_CHECK(o != NULL);
    GS_CHECK(num(o, "share_values_above") == 0 && num(o, "share_gaps_above") == 0);
    cJSON_Delete(o);
    /* the copy at threshold 0 from statistics at 0.1 */
    o = summarize_again(&W[0][0], &L[0][0], NULL, 2, 4, 0.1, 0);
    GS_CHECK(o != NULL);
    GS_CHECK(num(o, "share_values_above") == 0 && num(o, "share_gaps_above") == 0);
    cJSON_Delete(o);
}

/* Pairs held shut by fixed_pairs: w = 0 and lambda < 0 (the fastening
 * pulls). In contact is lambda != 0, as n_act counts it: in_contact is the
 * sum of n_act and the open pairs' histogram holds the other residuals
 * only, with the kept values and with two passes. */
GS_TEST(fixed_pairs_pulling_are_in_contact)
{
    static const double W[3][4] = {{0, 0, 0.3, 0.1}, {0, 0, 0, 0.2}, {0, 0, 0.4, 0}};
    static const double L[3][4] = {{-2, 1, 0, 0}, {-0.5, -1, 3, 0}, {-1, 2, 0, 0}};
    static const int NA[3] = {2, 3, 2}; /* lambda != 0 */
    for (int big = 0; big < 2; big++) {
        cJSON *o = summarize(&W[0][0], &L[0][0], NULL, NULL, NA, 3, 4, big ? 1 << 23 : 3, 0.1);
        GS_CHECK(o != NULL);
        GS_CHECK_INT((int)num(o, "residual_histogram.in_contact"), 7);
        GS_CHECK_INT(hist_sum(o, "residual_histogram"), 5);
        /* 5 open residuals 0.3 0.1 0.2 0.4 0 over [0, 0.4] in 4 bins: 0 -> bin 0 */
        GS_CHECK(at(o, "residual_histogram", "counts", 0) == 1);
        GS_CHECK(at(o, "pairs", "lambda_mean", 0) == -3.5 / 3);
        cJSON_Delete(o);
    }
}

GS_TEST_MAIN()
