/*
 * runner.c -- workspaces, one chunk, and the pool of worker threads (runner.h).
 * Cost per row: the solve, plus O(m) to read the gap and hand the result over.
 */
#include "runner.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

gs_err gs_run_slot_init(gs_run_slot *s, const gs_precomp *pc, gs_solver *sv, gs_error *err)
{
    memset(s, 0, sizeof *s);
    s->m = pc->m;
    size_t bytes = sizeof(double) * (size_t)(pc->m > 0 ? pc->m : 1);
    s->g = malloc(bytes);
    s->w = malloc(bytes);
    s->lam = malloc(bytes);
    s->own = sv == NULL;
    s->sv = sv ? sv : gs_solver_new(pc, err);
    if (!s->g || !s->w || !s->lam || !s->sv) {
        gs_run_slot_free(s);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a solver workspace");
    }
    return GS_OK;
}

void gs_run_slot_free(gs_run_slot *s)
{
    if (s->own)
        gs_solver_free(s->sv);
    gs_chain_free(s->chain);
    free(s->g);
    free(s->w);
    free(s->lam);
    memset(s, 0, sizeof *s);
}

/* One row: read, policy, solve, put. sk: the sketch of the row's gap when
 * the chunk was ordered (NULL otherwise). */
static gs_err run_row(const gs_run *run, gs_run_slot *s, int slot, int row, const double *sk,
                      gs_error *err)
{
    const int k = run->src.k, m = s->m;
    const int gap = row % k, pat = row / k;
    gs_err rc = run->src.read(run->src.ctx, gap, s->g, err);
    if (rc)
        return rc;
    gs_warm warm = {0};
    int have = 0;
    if (run->policy.start)
        rc = run->policy.start(run->policy.ctx, slot, row, s->g, &warm, &have, err);
    if (!rc && !have && s->chain && warm.n_act == 0 && !warm.lam)
        gs_chain_warm(s->chain, run->chain, &warm);
    if (!rc && !have) {
        gs_solve_opts o = run->opts;
        o.warm = warm.n_act > 0 || warm.lam ? &warm : NULL;
        if (run->row_timeout > 0)
            o.deadline = gs_now() + run->row_timeout;
        gs_problem pb = {.pc = run->pc,
                         .g = s->g,
                         .load = run->loads ? run->loads + (size_t)pat * (size_t)m : NULL,
                         .eq = run->eq};
        gs_solve_info info;
        const double c0 = s->chain ? gs_thread_cpu() : 0.0;
        rc = gs_solve(s->sv, &pb, &o, s->lam, s->w, NULL, &info, err);
        if (!rc && s->chain) /* learned from CPU time: the machine's load does not count */
            gs_chain_record(s->chain, gs_thread_cpu() - c0, s->lam, sk);
        if (!rc) {
            gs_run_result r = {.row = row, .gap = gap, .pattern = pat, .g = s->g, .w = s->w,
                               .lam = s->lam, .info = &info};
            rc = run->sink.put(run->sink.ctx, slot, &r, err);
        }
    }
    if (run->policy.done)
        run->policy.done(run->policy.ctx, slot, row);
    return rc;
}

/* The chain's order of a chunk: sketch every row's gap (read once more by
 * its solve), then rows[] in greedy nearest-neighbour order from the last
 * gap this worker solved. *sk_out: the sketches in the new order (chain
 * scratch). O(cnt (m d + read) + cnt^2 d). */
static gs_err chain_order(const gs_run *run, gs_run_slot *s, int *rows, int cnt,
                          const double **sk_out, gs_error *err)
{
    double *sk = gs_chain_sketches(s->chain, 2 * cnt);
    int *perm = malloc(sizeof(int) * 2 * (size_t)cnt);
    if (!sk || !perm) {
        free(perm);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory to order a chunk");
    }
    for (int n = 0; n < cnt; n++) {
        gs_err rc = run->src.read(run->src.ctx, rows[n] % run->src.k, s->g, err);
        if (rc) {
            free(perm);
            return rc;
        }
        gs_sketch(s->g, s->m, sk + (size_t)n * GS_SKETCH_DIM);
    }
    gs_sketch_order(sk, cnt, gs_chain_last_sketch(s->chain), perm);
    double *sorted = sk + (size_t)cnt * GS_SKETCH_DIM;
    int *tmp = perm + cnt;
    for (int n = 0; n < cnt; n++) {
        tmp[n] = rows[perm[n]];
        memcpy(sorted + (size_t)n * GS_SKETCH_DIM, sk + (size_t)perm[n] * GS_SKETCH_DIM,
               sizeof(double) * GS_SKETCH_DIM);
    }
    memcpy(rows, tmp, sizeof(int) * (size_t)cnt);
    free(perm);
    *sk_out = sorted;
    return GS_OK;
}

gs_err gs_run_chunk(const gs_run *run, gs_run_slot *s, int slot, int *rows, int cnt, int *ran,
                    gs_error *err)
{
    *ran = 0;
    const double *sk = NULL;
    if (run->chain != GS_CHAIN_OFF && !s->chain && !(s->chain = gs_chain_new(s->m)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the chain state");
    if (run->policy.order && cnt > 1) {
        run->policy.order(run->policy.ctx, rows, cnt);
    } else if (run->chain != GS_CHAIN_OFF && cnt > 1) {
        gs_err rc = chain_order(run, s, rows, cnt, &sk, err);
        if (rc)
            return rc;
    }
    gs_err rc = GS_OK;
    gs_error e_row;
    int n = 0;
    for (; n < cnt; n++) {
        if (run->ctl.stop && run->ctl.stop(run->ctl.ctx, n))
            break;
        rc = run_row(run, s, slot, rows[n], sk ? sk + (size_t)n * GS_SKETCH_DIM : NULL, &e_row);
        if (rc != GS_OK)
            break;
    }
    if (n > 0) {
        gs_err rc2 = run->sink.commit(run->sink.ctx, slot, rows, n, err);
        if (rc2)
            return rc2;
        *ran = n;
        if (run->ctl.progress)
            run->ctl.progress(run->ctl.ctx, slot, n);
    }
    if (rc && err)
        *err = e_row;
    return rc;
}

/* ---- the pool ------------------------------------------------------------------ */

typedef struct {
    long long next, total;
    int chunk;
} index_feed;

struct gs_run_pool {
    const gs_run *run;
    int threads, chunk;
    gs_chunk_feed feed;
    index_feed ifeed;
    pthread_mutex_t mu;
    pthread_t *tid;
    int started;
    int active;          /* workers not yet returned */
    int failed;
    gs_err rc;
    gs_error err;
    struct worker_arg {
        gs_run_pool *p;
        int slot;
    } *args;
};

/* The default feed: every row in index order. */
static int index_next(void *ctx, int slot, int *rows, int cap)
{
    gs_run_pool *p = ctx;
    pthread_mutex_lock(&p->mu);
    int n = 0;
    while (n < cap && p->ifeed.next < p->ifeed.total)
        rows[n++] = (int)p->ifeed.next++;
    pthread_mutex_unlock(&p->mu);
    return n;
}

static void record_error(gs_run_pool *p, gs_err rc, const gs_error *e)
{
    pthread_mutex_lock(&p->mu);
    if (!p->failed) {
        p->failed = 1;
        p->rc = rc;
        p->err = *e;
    }
    pthread_mutex_unlock(&p->mu);
}

int gs_run_active(gs_run_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int a = p->active;
    pthread_mutex_unlock(&p->mu);
    return a;
}

int gs_run_failed(gs_run_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int f = p->failed;
    pthread_mutex_unlock(&p->mu);
    return f;
}

static void *worker(void *arg)
{
    struct worker_arg *a = arg;
    gs_run_pool *p = a->p;
    gs_run_slot s;
    gs_error e;
    gs_err rc = gs_run_slot_init(&s, p->run->pc, NULL, &e);
    int *rows = malloc(sizeof(int) * (size_t)p->chunk);
    if (!rc && !rows)
        rc = gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    while (!rc && !gs_run_failed(p)) {
        int cnt = p->feed.next(p->feed.ctx, a->slot, rows, p->chunk);
        if (cnt <= 0)
            break;
        int ran;
        rc = gs_run_chunk(p->run, &s, a->slot, rows, cnt, &ran, &e);
    }
    if (rc)
        record_error(p, rc, &e);
    free(rows);
    gs_run_slot_free(&s);
    pthread_mutex_lock(&p->mu);
    p->active--;
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

gs_err gs_run_start(const gs_run *run, int threads, int chunk, const gs_chunk_feed *feed,
                    gs_run_pool **out, gs_error *err)
{
    *out = NULL;
    if (threads < 1 || chunk < 1 || run->n_patterns < 1 || run->src.m != run->pc->m)
        return gs_errorf(err, GS_ERR_INVALID, "", "bad run: %d threads, chunks of %d, %d "
                         "patterns, %d gap values for %d pairs", threads, chunk,
                         run->n_patterns, run->src.m, run->pc->m);
    gs_run_pool *p = calloc(1, sizeof *p);
    if (p) {
        p->tid = calloc((size_t)threads, sizeof *p->tid);
        p->args = calloc((size_t)threads, sizeof *p->args);
    }
    if (!p || !p->tid || !p->args) {
        if (p) {
            free(p->tid);
            free(p->args);
        }
        free(p);
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    p->run = run;
    p->threads = threads;
    p->chunk = chunk;
    p->ifeed.total = gs_run_rows(run);
    p->feed = feed ? *feed : (gs_chunk_feed){.next = index_next, .ctx = p};
    pthread_mutex_init(&p->mu, NULL);
    for (int t = 0; t < threads; t++) {
        p->args[t] = (struct worker_arg){.p = p, .slot = t};
        pthread_mutex_lock(&p->mu);
        p->active++;
        pthread_mutex_unlock(&p->mu);
        if (pthread_create(&p->tid[t], NULL, worker, &p->args[t]) != 0) {
            gs_error e;
            gs_errorf(&e, GS_ERR_NOMEM, "threads", "cannot start worker thread %d", t);
            record_error(p, GS_ERR_NOMEM, &e);
            pthread_mutex_lock(&p->mu);
            p->active--;
            pthread_mutex_unlock(&p->mu);
            break;
        }
        p->started++;
    }
    *out = p;
    return GS_OK;
}

gs_err gs_run_wait(gs_run_pool *p, gs_error *err)
{
    for (int t = 0; t < p->started; t++)
        pthread_join(p->tid[t], NULL);
    gs_err rc = p->failed ? p->rc : GS_OK;
    if (rc && err)
        *err = p->err;
    pthread_mutex_destroy(&p->mu);
    free(p->tid);
    free(p->args);
    free(p);
    return rc;
}
