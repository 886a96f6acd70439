/*
 * summary.c -- a job's summary from the store (see summary.h): the stored
 * results fed to the cloud statistics (runner/cloudstats.h), one or two
 * passes over the job's rows; each row's initial gaps read from the job's
 * gaps file by its index (pread, O(m) per row) when the file is there.
 * The store hands the rows over in chunks, each read in a short transaction
 * of its own (store.h), so a pass of seconds or minutes does not keep the
 * WAL from starting over; a running job's second pass takes only the rows
 * its first took.
 * And the cache of ended jobs: summary texts by (job, threshold, bins), and
 * the finished statistics by (job, bins), from which a summary at another
 * threshold takes one light pass (the counts above the threshold) instead
 * of a full computation. A list searched linearly (tens of entries: a text
 * is O(m), 0.3 MB at m = 2,603; statistics O(m + k)), least recently used
 * evicted first, one byte budget, one mutex.
 */
#include "summary.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudstats.h"
#include "npy.h"

enum { PASS_1 = 1, PASS_2 = 2, PASS_THRESHOLD = 3 };

typedef struct {
    gs_cstats *s;
    const atomic_int *cancel;
    int pass;
    gs_err rc;
    gs_error *err;
    int gfd;      /* gaps.npy, or -1 */
    size_t goff;  /* its data offset */
    double *grow; /* m: the current row's initial gaps */
    unsigned char *seen; /* bit i: pass 1 took job_index i (total bits; NULL: not kept) */
    long long total;
} feed_ctx;

/* The store reads a job's results in chunks, each its own transaction
 * (store.h): a running job's pass 2 may meet results stored after pass 1
 * read their index, which pass 1 did not take. Pass 2 takes exactly pass
 * 1's rows (cloudstats.h: the same results in the same order). */
static int seen_bit(feed_ctx *f, long long i, int set)
{
    if (!f->seen || i < 0 || i >= f->total)
        return !set && !f->seen; /* nothing kept: every row is pass 1's */
    unsigned char b = (unsigned char)(1u << (i & 7));
    if (set)
        f->seen[i >> 3] |= b;
    return (f->seen[i >> 3] & b) != 0;
}

static int feed(const gsd_result_row *r, void *ctx)
{
    feed_ctx *f = ctx;
    if (f->cancel && atomic_load(f->cancel)) {
        f->rc = gs_errorf(f->err, GS_ERR_LIMIT, "", "summary cancelled");
        return 1;
    }
    const size_t bytes = sizeof(double) * (size_t)r->m;
    int have_g = f->pass != PASS_2 && f->gfd >= 0 && r->w && r->job_index >= 0 &&
                 pread(f->gfd, f->grow, bytes, (off_t)(f->goff + (size_t)r->job_index * bytes)) ==
                     (ssize_t)bytes;
    gs_cstats_row row = {.w = r->w, .lam = r->lam, .g = have_g ? f->grow : NULL, .m = r->m,
                         .time = r->time, .n_act = r->n_act, .iterations = r->iterations,
                         .warm_used = r->warm_used, .crossover = r->crossover,
                         .kkt_failed = !r->kkt_pass, .status = gs_status_name(r->status),
                         .method = gs_method_name(r->method), .form = gs_form_name(r->form)};
    if (f->pass == PASS_2) {
        if (seen_bit(f, r->job_index, 0))
            gs_cstats_add2(f->s, &row);
        return 0;
    }
    if (f->pass == PASS_THRESHOLD) {
        gs_cstats_add_threshold(f->s, &row);
        return 0;
    }
    f->rc = gs_cstats_add(f->s, &row, f->err);
    if (f->rc == GS_OK)
        (void)seen_bit(f, r->job_index, 1);
    return f->rc != GS_OK;
}

/* ---- the cache -------------------------------------------------------------- */

/* What a cached text, cached statistics (threshold not used) or a flight
 * is of. */
typedef struct {
    char job[40]; /* as gsd_job_row.id */
    double threshold;
    int bins;
} sum_key;

static sum_key key_of(const char *job, double threshold, int bins)
{
    sum_key k = {.threshold = threshold, .bins = bins};
    snprintf(k.job, sizeof k.job, "%s", job);
    return k;
}

/* a and b are of the same job and bins, and (unless any_threshold) threshold. */
static int key_eq(const sum_key *a, const sum_key *b, int any_threshold)
{
    return !strcmp(a->job, b->job) && a->bins == b->bins &&
           (any_threshold || a->threshold == b->threshold);
}

typedef struct sum_entry {
    struct sum_entry *next;
    sum_key key;
    gs_cstats *stats; /* NULL: a text; else the job's finished statistics (any threshold) */
    unsigned long long used; /* tick of the last use */
    size_t bytes;     /* counted against the budget */
    size_t len;       /* of text */
    char text[];
} sum_entry;

/* A summary text being computed, or reserved for the task of a job that
 * just ended: concurrent requests for it wait for that computation instead
 * of repeating it. A reservation whose task has not started is taken over
 * by the first request (no thread ever waits for a queued task). */
typedef struct flight {
    struct flight *next;
    sum_key key;
    int computing; /* 0: reserved, not started */
} flight;

struct gsd_summary_cache {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a flight ended */
    size_t budget, bytes;
    unsigned long long tick;
    sum_entry *head;
    flight *flights;
};

gsd_summary_cache *gsd_summary_cache_new(size_t budget)
{
    gsd_summary_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->budget = budget;
    return c;
}

static void entry_free(sum_entry *e)
{
    gs_cstats_free(e->stats);
    free(e);
}

void gsd_summary_cache_free(gsd_summary_cache *c)
{
    if (!c)
        return;
    for (sum_entry *e = c->head, *next; e; e = next) {
        next = e->next;
        entry_free(e);
    }
    for (flight *f = c->flights, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* The entry of k: its text (stats 0) or its statistics (stats 1), marked
 * used; NULL if absent. c->mu held. */
static sum_entry *find(gsd_summary_cache *c, const sum_key *k, int stats)
{
    for (sum_entry *e = c->head; e; e = e->next)
        if ((e->stats != NULL) == stats && key_eq(&e->key, k, stats)) {
            e->used = ++c->tick;
            return e;
        }
    return NULL;
}

/* Append the cached text of k to b: 1, or 0 if absent. O(entries + size). */
static int cache_get(gsd_summary_cache *c, const sum_key *k, gs_buf *b)
{
    pthread_mutex_lock(&c->mu);
    sum_entry *e = find(c, k, 0);
    if (e)
        gs_buf_add(b, e->text, e->len); /* out of memory: the caller sees b->oom */
    pthread_mutex_unlock(&c->mu);
    return e != NULL;
}

/* A copy of the cached statistics of (k's job, bins) at k's threshold, or
 * NULL (absent, or no memory). O(entries + m + k). */
static gs_cstats *cache_stats(gsd_summary_cache *c, const sum_key *k)
{
    gs_error e;
    pthread_mutex_lock(&c->mu);
    sum_entry *en = find(c, k, 1);
    gs_cstats *s = en ? gs_cstats_threshold(en->stats, k->threshold, &e) : NULL;
    pthread_mutex_unlock(&c->mu);
    return s;
}

/* Keep n (taken), evicting the least recently used entries beyond the
 * budget; a text above a quarter of the budget, statistics above half of
 * it (20 bytes a gap: 1.6 million gaps in the default 64 MiB), or an entry
 * computed meanwhile by another request, is not kept. O(entries^2) at
 * worst. */
static void cache_put(gsd_summary_cache *c, sum_entry *n)
{
    if (n->bytes > c->budget / (n->stats ? 2 : 4)) {
        entry_free(n);
        return;
    }
    pthread_mutex_lock(&c->mu);
    if (find(c, &n->key, n->stats != NULL)) {
        pthread_mutex_unlock(&c->mu);
        entry_free(n);
        return;
    }
    while (c->head && c->bytes + n->bytes > c->budget) {
        sum_entry **old = &c->head;
        for (sum_entry **pp = &c->head; *pp; pp = &(*pp)->next)
            if ((*pp)->used < (*old)->used)
                old = pp;
        sum_entry *e = *old;
        *old = e->next;
        c->bytes -= e->bytes;
        entry_free(e);
    }
    n->used = ++c->tick;
    n->next = c->head;
    c->head = n;
    c->bytes += n->bytes;
    pthread_mutex_unlock(&c->mu);
}

void gsd_summary_forget(gsd_summary_cache *c, const char *job)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    for (sum_entry **pp = &c->head; *pp;) {
        sum_entry *e = *pp;
        if (strcmp(e->key.job, job)) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        c->bytes -= e->bytes;
        entry_free(e);
    }
    pthread_mutex_unlock(&c->mu);
}

/* A new entry of k: a copy of text, or the statistics s (taken: freed
 * when out of memory). */
static sum_entry *entry_new(const sum_key *k, const char *text, size_t len, gs_cstats *s)
{
    sum_entry *n = malloc(sizeof *n + len);
    if (!n) {
        gs_cstats_free(s);
        return NULL;
    }
    n->key = *k;
    n->stats = s;
    n->len = len;
    n->bytes = sizeof *n + len + (s ? gs_cstats_bytes(s) : 0);
    if (len)
        memcpy(n->text, text, len);
    return n;
}

/* ---- one computation per summary -------------------------------------------- */

/* The flight of k and the link to it; NULL if none. c->mu held. */
static flight **flight_find(gsd_summary_cache *c, const sum_key *k)
{
    for (flight **pp = &c->flights; *pp; pp = &(*pp)->next)
        if (key_eq(&(*pp)->key, k, 0))
            return pp;
    return NULL;
}

static flight *flight_add(gsd_summary_cache *c, const sum_key *k, int computing)
{
    flight *f = calloc(1, sizeof *f);
    if (f) {
        f->key = *k;
        f->computing = computing;
        f->next = c->flights;
        c->flights = f;
    }
    return f;
}

enum { TURN_COMPUTE = 0, TURN_CACHED = 1, TURN_NONE = 2 };

/* Whose turn: the text is cached (appended to b unless o->ahead), or this
 * thread computes it now (a flight registered: end it with flight_end), or
 * (o->ahead, a reservation's task) there is nothing left to do. Waits while
 * another thread computes the same summary. */
static int turn(gsd_summary_cache *c, const sum_key *k, const gsd_summary_opts *o, gs_buf *b)
{
    pthread_mutex_lock(&c->mu);
    int t;
    for (;;) {
        sum_entry *e = find(c, k, 0);
        flight **pp = e ? NULL : flight_find(c, k);
        if (e) {
            if (!o->ahead)
                gs_buf_add(b, e->text, e->len);
            t = o->ahead ? TURN_NONE : TURN_CACHED;
        } else if (pp && (*pp)->computing && !o->ahead) {
            pthread_cond_wait(&c->cv, &c->mu);
            continue;
        } else if (pp && !(*pp)->computing) {
            (*pp)->computing = 1; /* the reservation, taken by its task or a request */
            t = TURN_COMPUTE;
        } else if (o->ahead) {
            t = TURN_NONE; /* computing elsewhere, or done and gone */
        } else {
            flight_add(c, k, 1); /* out of memory: computed without one */
            t = TURN_COMPUTE;
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
    return t;
}

/* The computation of k ended (its text cached or not): waiters look again.
 * computing 0: only an untaken reservation is dropped. */
static void flight_end(gsd_summary_cache *c, const sum_key *k, int computing)
{
    pthread_mutex_lock(&c->mu);
    flight **pp = flight_find(c, k);
    if (pp && (computing || !(*pp)->computing)) {
        flight *f = *pp;
        *pp = f->next;
        free(f);
        pthread_cond_broadcast(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
}

int gsd_summary_reserve(gsd_summary_cache *c, const char *job, double threshold, int bins)
{
    if (!c || !c->budget)
        return 0;
    sum_key k = key_of(job, threshold, bins);
    pthread_mutex_lock(&c->mu);
    int ok = !find(c, &k, 0) && !flight_find(c, &k) && flight_add(c, &k, 0);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

void gsd_summary_unreserve(gsd_summary_cache *c, const char *job, double threshold, int bins)
{
    sum_key k = key_of(job, threshold, bins);
    if (c)
        flight_end(c, &k, 0);
}

/* ---- the statistics ------------------------------------------------------------ */

/* Feed every result of job to f->s in pass f->pass. */
static gs_err feed_all(gsd_store *st, const gsd_job_row *job, feed_ctx *f, gs_error *err)
{
    gs_err rc = gsd_store_job_results(st, job->id, 0, -1, 1, feed, f, err);
    return rc ? rc : f->rc;
}

/* Open the job's gaps file for f (absent or of another width: "opened" not
 * reported) and allocate its row buffer. */
static gs_err feed_open(feed_ctx *f, const gsd_summary_opts *o, int m, gs_error *err)
{
    f->gfd = -1;
    f->grow = malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
    if (!f->grow)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    if (o->gaps_path) {
        gs_npy_file nf = {.fd = -1};
        gs_error ge;
        if (gs_npy_open(o->gaps_path, (size_t)-1 / 8, &nf, &ge) == GS_OK &&
            (nf.info.ndim == 1 ? nf.info.shape[0] : nf.info.shape[1]) == (size_t)m) {
            f->gfd = nf.fd; /* kept open: read row by row */
            f->goff = nf.data_offset;
            nf.fd = -1;
        }
        gs_npy_close(&nf);
    }
    return GS_OK;
}

static void feed_close(feed_ctx *f)
{
    if (f->gfd >= 0)
        close(f->gfd);
    free(f->grow);
    free(f->seen);
}

/* The full computation; *keep: the finished statistics (when keep is not
 * NULL and all went well), else freed. */
static gs_err compute(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                      gs_buf *b, gs_cstats **keep, gs_error *err)
{
    gs_cstats *s = gs_cstats_new(m, job->total, o->threshold, o->bins, err);
    if (!s)
        return err->code;
    feed_ctx f = {.s = s, .cancel = o->cancel, .pass = PASS_1, .err = err,
                  .total = job->total > 0 ? job->total : 0};
    gs_err rc = feed_open(&f, o, m, err);
    /* pass 1's rows, for a pass 2 (only a running job's results can change
     * between the passes; an ended job's cannot) */
    if (!rc && gs_cstats_second_pass(s) && !gsd_job_status_ended(job->status) &&
        !(f.seen = calloc((size_t)(f.total / 8 + 1), 1)))
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    if (!rc)
        rc = feed_all(st, job, &f, err);
    if (!rc && gs_cstats_second_pass(s)) {
        f.pass = PASS_2;
        rc = feed_all(st, job, &f, err);
    }
    if (!rc)
        rc = gs_cstats_json(s, job->id, job->assembly_id, job->status, job->total, b, err);
    feed_close(&f);
    if (!rc && keep)
        *keep = s;
    else
        gs_cstats_free(s);
    return rc;
}

/* From the cached statistics of the job at another threshold: one pass
 * counting the values above the threshold. *done: 1 after appending the
 * text; 0 when it cannot (no such statistics, no memory, the results differ
 * in number) and the caller computes it all. Errors: store, cancelled. */
static gs_err from_stats(gsd_store *st, const gsd_job_row *job, int m, const gsd_summary_opts *o,
                         const sum_key *k, gs_buf *b, int *done, gs_error *err)
{
    *done = 0;
    gs_cstats *s = cache_stats(o->cache, k);
    if (!s)
        return GS_OK;
    feed_ctx f = {.s = s, .cancel = o->cancel, .pass = PASS_THRESHOLD, .err = err};
    gs_err rc = feed_open(&f, o, m, err);
    if (!rc)
        rc = feed_all(st, job, &f, err);
    gs_error je;
    if (!rc)
        *done = gs_cstats_json(s, job->id, job->assembly_id, job->status, job->total, b, &je) ==
                GS_OK;
    feed_close(&f);
    gs_cstats_free(s);
    return rc;
}

int gsd_summary_lookup(const gsd_job_row *job, gsd_summary_opts *o, gs_buf *b)
{
    sum_key k = key_of(job->id, o->threshold, o->bins);
    o->cached = o->cache && gsd_job_status_ended(job->status) && cache_get(o->cache, &k, b);
    return o->cached;
}

gs_err gsd_summary(gsd_store *st, const gsd_job_row *job, int m, gsd_summary_opts *o,
                   gs_buf *b, gs_error *err)
{
    o->cached = 0;
    o->computed = 0;
    gsd_summary_cache *c = gsd_job_status_ended(job->status) ? o->cache : NULL;
    const sum_key k = key_of(job->id, o->threshold, o->bins);
    if (c) { /* cached, being computed (wait), or this thread's to compute */
        int t = turn(c, &k, o, b);
        o->cached = t == TURN_CACHED;
        if (t != TURN_COMPUTE)
            return GS_OK;
    } else if (o->ahead) {
        return GS_OK;
    }
    size_t start = b->len;
    gs_cstats *stats = NULL;
    int done = 0;
    gs_err rc = c ? from_stats(st, job, m, o, &k, b, &done, err) : GS_OK;
    if (!rc && !done) {
        b->len = start; /* a refused attempt may have written part of its text */
        rc = compute(st, job, m, o, b, c ? &stats : NULL, err);
    }
    if (!rc)
        o->computed = done ? GSD_SUMMARY_COUNTED : GSD_SUMMARY_FULL;
    sum_entry *text = !rc && c && !b->oom ? entry_new(&k, b->p + start, b->len - start, NULL) : NULL;
    if (text)
        cache_put(c, text);
    if (stats) {
        sum_entry *n = entry_new(&k, NULL, 0, stats);
        if (n)
            cache_put(c, n);
    }
    if (c)
        flight_end(c, &k, 1);
    return rc;
}
