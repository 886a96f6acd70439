/*
 * test_summary.c -- a job's summary from the store and its cache
 * (server/summary.c):
 *   - an ended job's summary is computed once per (threshold, bins) and then
 *     answered from the cache, the same bytes;
 *   - at another threshold it comes from the cached statistics (one
 *     counting pass), byte for byte what a full computation writes; the
 *     cached statistics are really used (a result changed behind the
 *     store's back shows in the counts, not in the means), and a changed
 *     number of results falls back to the full computation;
 *   - a running job's summary is never cached; its second pass takes the
 *     rows its first took, though more are stored between the passes (each
 *     pass reads in transactions of its own): the histogram of the open
 *     pairs and the count of those in contact add up to count x m;
 *   - a cancel flag already set stops the computation: GS_ERR_LIMIT,
 *     nothing appended;
 *   - a summary reserved for a reader (a job that just ended) is computed
 *     once, by the reader or by the first request, never by both;
 *   - results that are no answers (infeasible: lambda holds Farkas weights;
 *     max_iter: an iterate) are left out of the residual, force and n_act
 *     statistics ("answers" of "count"), counted in statuses and failures,
 *     full computation and the cached statistics' copy alike.
 */
#define _GNU_SOURCE /* usleep, pthread_tryjoin_np */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "npy.h"
#include "summary.h"
#include "test_store_support.h"

/* LATE: rows a writer adds to a running job; BIG: its declared total, whose
 * k m values are too many to keep (runner/cloudstats.c, 16 Mi): two passes */
enum { K = 40, M = 37, LATE = 120, BIG = 1 << 20 };

static double W[K][M], L[K][M], G[K][M];

/* The status of stored result i: all optimal, or (mixed) every fourth
 * max_iter and every fourth infeasible. */
static int mixed;
static gs_status mixed_status(int i)
{
    return i % 4 == 1 ? GS_STATUS_MAX_ITER : i % 4 == 2 ? GS_STATUS_INFEASIBLE : GS_STATUS_OPTIMAL;
}

static gs_status status_of(int i)
{
    return mixed ? mixed_status(i) : GS_STATUS_OPTIMAL;
}

static void fill(void)
{
    unsigned x = 12345;
    for (int i = 0; i < K; i++)
        for (int j = 0; j < M; j++) {
            x = x * 1664525u + 1013904223u;
            double u = (x >> 8) / 16777216.0;
            G[i][j] = 0.05 + 0.2 * u;
            int closed = (x & 3) == 0;
            W[i][j] = closed ? 0 : G[i][j] * (0.3 + 1.0 * ((x >> 4 & 255) / 255.0));
            L[i][j] = closed ? 1 + 5 * u : 0;
        }
}

/* A fresh store name.db (path in db[512]) with assembly a_1 and job j_1
 * (status, total gaps) holding the K results, and their gaps file name_gaps.npy (path
 * in gaps[512]); NULL on failure. */
static gsd_store *seed_n(const char *name, const char *status, int total, char *db, char *gaps)
{
    char file[128];
    snprintf(file, sizeof file, "%s.db", name);
    fresh_db(db, 512, file);
    snprintf(file, sizeof file, "%s_gaps.npy", name);
    gs_test_tmp_path(gaps, 512, file);
    fill();
    gsd_store *st = open_ok(db);
    if (!st)
        return NULL;
    gs_error e;
    gsd_result_row rows[K];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < K; i++) {
        gsd_result_row *r = &rows[i];
        snprintf(r->id, sizeof r->id, "r_%d", i);
        snprintf(r->assembly_id, sizeof r->assembly_id, "a_1");
        snprintf(r->job_id, sizeof r->job_id, "j_1");
        r->job_index = i;
        snprintf(r->cache_key, sizeof r->cache_key, "k_%d", i);
        r->status = status_of(i);
        r->method = GS_METHOD_GI;
        r->m = M;
        r->w = W[i];
        r->lam = L[i];
        r->time = 1e-3 * (1 + i % 7);
        r->n_act = i % 11;
        r->created_at = 100 + i;
    }
    size_t shape[2] = {K, M};
    if (seed_job(st, status, total, &e) || gsd_store_results_put(st, rows, K, "j_1", K, 0, 0, 0, &e) ||
        gs_npy_write_file(gaps, &G[0][0], 2, shape, &e)) {
        fprintf(stderr, "  seed: %s\n", e.msg);
        gsd_store_close(st);
        return NULL;
    }
    return st;
}

static gsd_store *seed(const char *name, const char *status, char *db, char *gaps)
{
    return seed_n(name, status, K, db, gaps);
}

static gsd_job_row job_of(const char *status)
{
    return test_job_row(status, K);
}

/* The summary text at threshold t (malloc'ed), from the cache c (or NULL);
 * *cached: answered from the cache. */
static char *summary(gsd_store *st, const char *status, const char *gaps, gsd_summary_cache *c,
                     double t, int *cached)
{
    gsd_job_row j = job_of(status);
    gsd_summary_opts o = {.threshold = t, .bins = 9, .gaps_path = gaps, .cache = c};
    gs_buf b = {0};
    gs_error e;
    if (gsd_summary(st, &j, M, &o, &b, &e) != GS_OK) {
        fprintf(stderr, "  summary: %s\n", e.msg);
        gs_buf_free(&b);
        return NULL;
    }
    if (cached)
        *cached = o.cached;
    return gs_buf_take(&b, NULL);
}

static int has(const char *text, const char *needle)
{
    return text && strstr(text, needle) != NULL;
}

GS_TEST(ended_job_cached_and_other_thresholds_exact)
{
    char db[512], gaps[512];
    gsd_store *st = seed("summary", "done", db, gaps);
    GS_CHECK(st != NULL);
    gsd_summary_cache *c = gsd_summary_cache_new(8 << 20);
    GS_CHECK(c != NULL);
    int cached = -1;
    char *first = summary(st, "done", gaps, c, 0.1, &cached);
    GS_CHECK(first != NULL);
    GS_CHECK_INT(cached, 0);
    GS_CHECK(has(first, "\"count\":40,") && has(first, "\"opened\":{\"gaps\":"));
    char *again = summary(st, "done", gaps, c, 0.1, &cached);
    GS_CHECK_INT(cached, 1);
    GS_CHECK(again && !strcmp(first, again));
    free(again);
    /* other thresholds: from the statistics, the full computation's bytes */
    static const double ts[] = {0, 0.03, 0.0731, 0.2, 5};
    for (int i = 0; i < 5; i++) {
        char *via = summary(st, "done", gaps, c, ts[i], &cached);
        char *full = summary(st, "done", gaps, NULL, ts[i], NULL);
        GS_CHECK_INT(cached, 0);
        GS_CHECK(via && full);
        GS_CHECK_MSG(!strcmp(via, full), "threshold %g", ts[i]);
        free(via);
        free(full);
    }
    /* the statistics are used: result r_0's w changed behind the store's back
     * (raw, every pair 9 mm) moves the counts of a new threshold but not the
     * cached means, unlike a full computation */
    char sql[8 * M * 2 + 128], *p = sql;
    p += sprintf(p, "UPDATE results SET w_enc=0, w=X'");
    for (int j = 0; j < M; j++) {
        double v = 9.0;
        unsigned char by[8];
        memcpy(by, &v, 8);
        for (int k = 0; k < 8; k++)
            p += sprintf(p, "%02X", by[k]);
    }
    sprintf(p, "' WHERE id='r_0'");
    sqlite3 *raw = NULL;
    GS_CHECK_INT(sqlite3_open(db, &raw), SQLITE_OK);
    GS_CHECK_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
    char *via = summary(st, "done", gaps, c, 0.5, &cached);
    char *full = summary(st, "done", gaps, NULL, 0.5, NULL);
    GS_CHECK(via && full && strcmp(via, full) != 0);
    GS_CHECK(has(full, "\"max\":9,"));  /* max_residual.max of the full computation */
    GS_CHECK(!has(via, "\"max\":9,")); /* the cached statistics' */
    GS_CHECK(has(via, "\"share_gaps_above\":") && has(via, "\"share_values_above\":0.02"));
    free(via);
    free(full);
    /* a result fewer: the counting pass sees 39 of 40 and the full computation runs */
    GS_CHECK_INT(sqlite3_exec(raw, "DELETE FROM results WHERE id='r_5'", NULL, NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(raw);
    via = summary(st, "done", gaps, c, 0.6, &cached);
    full = summary(st, "done", gaps, NULL, 0.6, NULL);
    GS_CHECK(via && full && !strcmp(via, full));
    GS_CHECK(has(via, "\"count\":39,"));
    free(via);
    free(full);
    free(first);
    gsd_summary_cache_free(c);
    gsd_store_close(st);
}

GS_TEST(running_job_not_cached_and_cancel)
{
    char db[512], gaps[512];
    gsd_store *st = seed("summary_run", "running", db, gaps);
    GS_CHECK(st != NULL);
    gsd_summary_cache *c = gsd_summary_cache_new(8 << 20);
    int cached = -1;
    char *a = summary(st, "running", gaps, c, 0.1, &cached);
    char *b = summary(st, "running", gaps, c, 0.1, &cached);
    GS_CHECK(a && b && !strcmp(a, b));
    GS_CHECK_INT(cached, 0);
    free(a);
    free(b);
    /* cancelled before the first result */
    atomic_int cancel = 1;
    gsd_job_row j = job_of("done");
    gsd_summary_opts o = {.threshold = 0.1, .bins = 9, .gaps_path = gaps, .cache = c,
                          .cancel = &cancel};
    gs_buf out = {0};
    gs_buf_puts(&out, "before");
    gs_error e;
    GS_CHECK_INT(gsd_summary(st, &j, M, &o, &out, &e), GS_ERR_LIMIT);
    GS_CHECK_STR(e.msg, "summary cancelled");
    GS_CHECK(out.len == 6 && !memcmp(out.p, "before", 6));
    gs_buf_free(&out);
    gsd_summary_cache_free(c);
    gsd_store_close(st);
}

/* The writer of the test below: results K .. K + LATE - 1 of the running job,
 * one transaction each, about 0.3 ms apart (copies of the first K). */
static void *add_late_rows(void *arg)
{
    gsd_store *st = arg;
    for (int i = K; i < K + LATE; i++) {
        gsd_result_row r;
        memset(&r, 0, sizeof r);
        snprintf(r.id, sizeof r.id, "r_%d", i);
        snprintf(r.assembly_id, sizeof r.assembly_id, "a_1");
        snprintf(r.job_id, sizeof r.job_id, "j_1");
        r.job_index = i;
        snprintf(r.cache_key, sizeof r.cache_key, "k_%d", i);
        r.status = GS_STATUS_OPTIMAL;
        r.method = GS_METHOD_GI;
        r.m = M;
        r.w = W[i % K];
        r.lam = L[i % K];
        gs_error e;
        if (gsd_store_results_put(st, &r, 1, "j_1", 1, 0, 0, 0, &e))
            return (void *)1;
        usleep(300);
    }
    return NULL;
}

static long long json_ll(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    x = b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
    return cJSON_IsNumber(x) ? (long long)x->valuedouble : -1;
}

GS_TEST(running_job_second_pass_takes_the_first_passes_rows)
{
    char db[512], gaps[512];
    gsd_store *st = seed_n("summary_late", "running", BIG, db, gaps);
    GS_CHECK(st != NULL);
    pthread_t t;
    GS_CHECK_INT(pthread_create(&t, NULL, add_late_rows, st), 0);
    int summaries = 0, bad = 0;
    long long first = -1, last = -1;
    void *writer_rc = NULL;
    for (int busy = 1; busy;) {
        busy = pthread_tryjoin_np(t, &writer_rc) != 0;
        gsd_job_row j = test_job_row("running", BIG);
        gsd_summary_opts o = {.threshold = 0.1, .bins = 9};
        gs_buf b = {0};
        gs_error e;
        if (gsd_summary(st, &j, M, &o, &b, &e) != GS_OK || !b.p) {
            bad++;
            gs_buf_free(&b);
            continue;
        }
        cJSON *x = cJSON_ParseWithLength(b.p, b.len);
        const cJSON *counts = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(x, "residual_histogram"), "counts");
        long long open = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, counts) open += (long long)c->valuedouble;
        const long long n = json_ll(x, "count", NULL);
        if (n < K || open + json_ll(x, "residual_histogram", "in_contact") != n * M)
            bad++;
        first = first < 0 ? n : first;
        last = n;
        summaries++;
        cJSON_Delete(x);
        gs_buf_free(&b);
    }
    fprintf(stderr, "  %d summaries while %d rows were added (count %lld .. %lld)\n", summaries,
            LATE, first, last);
    GS_CHECK(writer_rc == NULL);
    GS_CHECK_INT(bad, 0);
    GS_CHECK(summaries >= 10 && first < K + LATE && last == K + LATE);
    gsd_store_close(st);
}

/* gsd_summary at (t, bins) with options; the text (malloc'ed, "" if none)
 * and what the call did. */
typedef struct {
    gsd_store *st;
    const char *gaps;
    gsd_summary_cache *c;
    double t;
    int ahead, cached, computed;
    gs_err rc;
    char *text;
} call;

static void *run_call(void *arg)
{
    call *k = arg;
    gsd_job_row j = job_of("done");
    gsd_summary_opts o = {.threshold = k->t, .bins = 20, .gaps_path = k->gaps, .cache = k->c,
                          .ahead = k->ahead};
    gs_buf b = {0};
    gs_error e;
    gs_buf_puts(&b, "");
    k->rc = gsd_summary(k->st, &j, M, &o, &b, &e);
    k->cached = o.cached;
    k->computed = o.computed;
    k->text = gs_buf_take(&b, NULL);
    return NULL;
}

/* A job that ends reserves its summary for a reader (jobs.c): the reader's
 * call computes and caches it, a request then finds it
 * cached; a request that comes first takes the reservation over and the
 * reader's call does nothing; a request and the reader at once compute it
 * once between them. */
GS_TEST(reserved_summary_computed_once)
{
    char db[512], gaps[512];
    gsd_store *st = seed("summary_ahead", "done", db, gaps);
    GS_CHECK(st != NULL);
    gsd_summary_cache *c = gsd_summary_cache_new(8 << 20);
    GS_CHECK_INT(gsd_summary_reserve(c, "j_1", 0.1, 20), 1);
    GS_CHECK_INT(gsd_summary_reserve(c, "j_1", 0.1, 20), 0); /* under way */
    call ahead = {st, gaps, c, 0.1, 1, 0, 0, 0, NULL}, req = {st, gaps, c, 0.1, 0, 0, 0, 0, NULL};
    run_call(&ahead);
    GS_CHECK_INT(ahead.rc, GS_OK);
    GS_CHECK_INT(ahead.computed, GSD_SUMMARY_FULL);
    run_call(&req);
    GS_CHECK_INT(req.cached, 1);
    GS_CHECK_INT(req.computed, 0);
    GS_CHECK(has(req.text, "\"count\":40,") && !strcmp(req.text, ahead.text));
    GS_CHECK_INT(gsd_summary_reserve(c, "j_1", 0.1, 20), 0); /* cached */
    free(ahead.text);
    free(req.text);
    /* a request first: it computes (from the statistics), the reader's call has nothing to do */
    GS_CHECK_INT(gsd_summary_reserve(c, "j_1", 0.25, 20), 1);
    call req2 = {st, gaps, c, 0.25, 0, 0, 0, 0, NULL}, ahead2 = {st, gaps, c, 0.25, 1, 0, 0, 0, NULL};
    run_call(&req2);
    GS_CHECK_INT(req2.cached, 0);
    GS_CHECK_INT(req2.computed, GSD_SUMMARY_COUNTED);
    run_call(&ahead2);
    GS_CHECK_INT(ahead2.rc, GS_OK);
    GS_CHECK_INT(ahead2.computed, 0);
    GS_CHECK_STR(ahead2.text, "");
    free(req2.text);
    free(ahead2.text);
    /* a dropped reservation (its task will not run): the request computes as before */
    GS_CHECK_INT(gsd_summary_reserve(c, "j_1", 0.3, 20), 1);
    gsd_summary_unreserve(c, "j_1", 0.3, 20);
    call req3 = {st, gaps, c, 0.3, 0, 0, 0, 0, NULL};
    run_call(&req3);
    GS_CHECK_INT(req3.computed, GSD_SUMMARY_COUNTED);
    free(req3.text);
    /* at once, on their own store connections: one computation between them, 20 times */
    gsd_store *st2 = open_ok(db);
    GS_CHECK(st2 != NULL);
    for (int i = 0; i < 20; i++) {
        double t = 0.4 + 0.01 * i;
        GS_CHECK_INT(gsd_summary_reserve(c, "j_1", t, 20), 1);
        call a = {st, gaps, c, t, 1, 0, 0, 0, NULL}, r = {st2, gaps, c, t, 0, 0, 0, 0, NULL};
        pthread_t th;
        GS_CHECK_INT(pthread_create(&th, NULL, run_call, &a), 0);
        usleep(15 * (unsigned)i); /* later and later: the request waits for the reader's
                                     text, or finds it (the checks hold in any order) */
        run_call(&r);
        pthread_join(th, NULL);
        GS_CHECK_INT(a.rc, GS_OK);
        GS_CHECK_INT(r.rc, GS_OK);
        GS_CHECK_INT((a.computed != 0) + (r.computed != 0), 1);
        GS_CHECK_INT(r.cached, a.computed != 0); /* waited for the reader's text, or made it */
        GS_CHECK(has(r.text, "\"count\":40,"));
        free(a.text);
        free(r.text);
    }
    gsd_store_close(st2);
    gsd_summary_cache_free(c);
    gsd_store_close(st);
}

/* gsd_summary_forget (an assembly deleted): the job's text and statistics
 * leave the cache, another job's stay. After it, the same summary is
 * computed again in full (not cached), and another threshold too (no
 * statistics left to count from). */
GS_TEST(forget_drops_a_jobs_entries)
{
    char db[512], gaps[512];
    gsd_store *st = seed("forget", "done", db, gaps);
    GS_CHECK(st != NULL);
    gsd_summary_cache *c = gsd_summary_cache_new(8 << 20);
    gsd_job_row j = job_of("done");
    int cached = -1;
    char *first = summary(st, "done", gaps, c, 0.1, &cached);
    GS_CHECK(first != NULL);
    free(summary(st, "done", gaps, c, 0.1, &cached));
    GS_CHECK_INT(cached, 1);
    gsd_summary_forget(c, "j_2"); /* not this job's: kept */
    free(summary(st, "done", gaps, c, 0.1, &cached));
    GS_CHECK_INT(cached, 1);
    gsd_summary_forget(c, "j_1");
    static const double ts[2] = {0.1, 0.3};
    for (int i = 0; i < 2; i++) {
        gsd_summary_opts o = {.threshold = ts[i], .bins = 9, .gaps_path = gaps, .cache = c};
        gs_buf b = {0};
        gs_error e;
        GS_CHECK_INT(gsd_summary(st, &j, M, &o, &b, &e), GS_OK);
        GS_CHECK_INT(o.cached, 0);
        GS_CHECK_INT(o.computed, GSD_SUMMARY_FULL); /* i = 1: no statistics to count from */
        if (i == 0)
            GS_CHECK(b.len == strlen(first) && !memcmp(b.p, first, b.len));
        gs_buf_free(&b);
        if (i == 0)
            gsd_summary_forget(c, "j_1");
    }
    free(first);
    gsd_summary_cache_free(c);
    gsd_store_close(st);
}

static double jnum(const cJSON *o, const char *a, const char *b, int i)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    x = b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
    x = i >= 0 ? cJSON_GetArrayItem(x, i) : x;
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* A job whose results are a quarter max_iter and a quarter infeasible:
 * the per-pair means, forces, the histogram and n_act are those of the 20
 * answers; count, statuses and failures take all 40; another threshold
 * from the cached statistics writes the full computation's bytes. */
GS_TEST(failures_left_out_of_the_statistics)
{
    char db[512], gaps[512];
    mixed = 1;
    gsd_store *st = seed("summary_mixed", "done", db, gaps);
    mixed = 0;
    GS_CHECK(st != NULL);
    char *text = summary(st, "done", gaps, NULL, 0.1, NULL);
    cJSON *o = text ? cJSON_Parse(text) : NULL;
    GS_CHECK(o != NULL);
    int n = 0, in_contact = 0;
    double nact = 0;
    for (int i = 0; i < K; i++)
        if (mixed_status(i) == GS_STATUS_OPTIMAL) {
            n++;
            nact += i % 11;
        }
    for (int j = 0; j < M; j++) {
        double sw = 0, sl = 0;
        for (int i = 0; i < K; i++)
            if (mixed_status(i) == GS_STATUS_OPTIMAL) {
                sw += W[i][j];
                sl += L[i][j];
                in_contact += L[i][j] != 0;
            }
        GS_CHECK_NEAR(jnum(o, "pairs", "mean", j), sw / n, 1e-15);
        GS_CHECK_NEAR(jnum(o, "pairs", "lambda_mean", j), sl / n, 1e-13);
    }
    GS_CHECK(jnum(o, "n_act", "mean", -1) == nact / n);
    GS_CHECK_INT((long long)jnum(o, "residual_histogram", "in_contact", -1), in_contact);
    long long open = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(o, "residual_histogram"), "counts"))
        open += (long long)c->valuedouble;
    GS_CHECK_INT(open + in_contact, (long long)n * M);
    GS_CHECK_INT((int)jnum(o, "count", NULL, -1), K);
    GS_CHECK_INT((int)jnum(o, "answers", NULL, -1), n);
    GS_CHECK_INT((int)jnum(o, "statuses", "infeasible", -1), K / 4);
    GS_CHECK_INT((int)jnum(o, "failures", NULL, -1), K / 2);
    cJSON_Delete(o);
    free(text);
    gsd_summary_cache *cache = gsd_summary_cache_new(8 << 20);
    int cached = -1;
    free(summary(st, "done", gaps, cache, 0.1, &cached));
    static const double ts[] = {0, 0.04, 0.2};
    for (int i = 0; i < 3; i++) {
        char *via = summary(st, "done", gaps, cache, ts[i], &cached);
        char *full = summary(st, "done", gaps, NULL, ts[i], NULL);
        GS_CHECK(via && full);
        GS_CHECK_MSG(!strcmp(via, full), "threshold %g", ts[i]);
        free(via);
        free(full);
    }
    gsd_summary_cache_free(cache);
    gsd_store_close(st);
}

GS_TEST_MAIN()
