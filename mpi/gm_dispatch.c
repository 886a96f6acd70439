/*
 * gm_dispatch.c -- dynamic load balancing of gapsim-mpi (gm.h).
 *
 * Protocol (MPI_THREAD_FUNNELED: only the main thread of a rank calls MPI):
 *   rank r > 0   keeps up to T chunks queued for its T workers: when the queue
 *                is short it sends rank 0 a request (TAG_REQ, two long longs:
 *                1 if this rank has failed, and the rows it has written, for
 *                rank 0's progress display) and receives a chunk index
 *                (TAG_CHUNK, -1: no more work). One request is outstanding
 *                at a time.
 *   rank 0       answers requests in arrival order with the next chunk not
 *                marked complete in the sidecar map, feeds its own queue the
 *                same way, and answers -1 to everyone once the chunks are
 *                handed out or any rank has reported a failure.
 *   workers      (runner threads) take chunks from the rank's queue, solve,
 *                and hand each finished chunk (rows, records) to the main
 *                thread, which writes it (gm_out_chunk) between messages.
 * The main thread sleeps 1 ms when nothing happened (no busy polling: it
 * shares the cores with the workers). A rank ends when it has received -1,
 * its workers have returned and its chunks are written; rank 0 also waits
 * until every other rank has received its -1. The outcome is agreed
 * collectively at the end. Slow gaps (3-10x the median) only delay the chunk
 * they are in: the other workers keep pulling chunks.
 * Cost per chunk: two small messages and one write of chunk x m doubles.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gm.h"
#include "kkt.h"
#include "linalg.h"

#define TAG_REQ 17
#define TAG_CHUNK 18

typedef struct done_chunk {
    long long chunk, first;
    int n;
    double *W;
    gm_rec *recs;
    struct done_chunk *next;
} done_chunk;

typedef struct {
    long long chunk, first;
    double *W;
    gm_rec *recs;
} slot_state;

typedef struct {
    const gs_run *run;
    gm_out *o;
    int threads, m;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* the main thread: a chunk is done or a worker starves */
    pthread_cond_t qcv;     /* workers: a chunk was queued, or no_more */
    long long *queue;
    int qhead, qlen;
    int no_more;
    done_chunk *out_head, *out_tail;
    slot_state *slots;
    gs_err fail;            /* a worker-side failure outside the runner (no memory) */
    gs_error fail_err;
} disp;

static void slot_clear(slot_state *s)
{
    free(s->W);
    free(s->recs);
    s->W = NULL;
    s->recs = NULL;
}

static int feed_next(void *ctx, int slot, int *rows, int cap)
{
    disp *d = ctx;
    slot_state *s = &d->slots[slot];
    slot_clear(s); /* a chunk that failed before any row left its buffers */
    pthread_mutex_lock(&d->mu);
    while (d->qlen == 0 && !d->no_more) {
        pthread_cond_signal(&d->cv); /* starving: the main thread refills */
        pthread_cond_wait(&d->qcv, &d->mu);
    }
    if (d->qlen == 0) {
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    long long c = d->queue[d->qhead];
    d->qhead = (d->qhead + 1) % d->threads;
    d->qlen--;
    pthread_mutex_unlock(&d->mu);
    long long first = c * d->o->chunk;
    long long left = d->o->rows - first;
    int n = (int)(left < d->o->chunk ? left : d->o->chunk);
    if (n > cap)
        n = cap;
    s->chunk = c;
    s->first = first;
    s->W = malloc(sizeof(double) * (size_t)n * (size_t)d->m);
    s->recs = malloc(sizeof(gm_rec) * (size_t)n);
    if (!s->W || !s->recs) {
        slot_clear(s);
        pthread_mutex_lock(&d->mu);
        if (!d->fail)
            d->fail = gs_errorf(&d->fail_err, GS_ERR_NOMEM, "", "out of memory for a chunk");
        pthread_mutex_unlock(&d->mu);
        return 0;
    }
    for (int i = 0; i < n; i++)
        rows[i] = (int)gm_out_row(d->o, first + i);
    return n;
}

static gs_err sink_put(void *ctx, int slot, const gs_run_result *r, gs_error *err)
{
    disp *d = ctx;
    slot_state *s = &d->slots[slot];
    long long pos = gm_out_pos(d->o, r->row) - s->first;
    memcpy(s->W + pos * d->m, r->w, sizeof(double) * (size_t)d->m);
    const gs_solve_info *in = r->info;
    s->recs[pos] = (gm_rec){.status = in->status, .method = in->method, .form = in->form,
                            .flags = (in->warm_used ? 1 : 0) | (in->auto_chosen ? 2 : 0) |
                                     (in->crossover ? 4 : 0) |
                                     (gs_kkt_pass(&in->kkt, d->run->opts.tol) ? 0 : 8),
                            .n_act = in->n_act, .iterations = in->iterations, .time = in->time};
    return GS_OK;
}

/* The rows that ran are written from the chunk's first position on while
 * their positions are contiguous: rows[0..n) is a prefix of the chunk unless
 * the chain reordered the chunk and it ended early (an error), when only the
 * leading rows that all ran are written (the chunk is not complete either
 * way and runs again on the next start; so does a chunk whose bookkeeping
 * found no memory: nothing is written). O(n). */
static int ran_prefix(const gm_out *o, const int *rows, int n, long long first)
{
    unsigned char *ran = calloc((size_t)n + 1, 1);
    if (!ran)
        return 0;
    for (int i = 0; i < n; i++) {
        long long j = gm_out_pos(o, rows[i]) - first;
        if (j < n)
            ran[j] = 1;
    }
    int p = 0;
    while (p < n && ran[p])
        p++;
    free(ran);
    return p;
}

static gs_err sink_commit(void *ctx, int slot, const int *rows, int n, gs_error *err)
{
    disp *d = ctx;
    slot_state *s = &d->slots[slot];
    done_chunk *dc = malloc(sizeof *dc);
    if (!dc)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    *dc = (done_chunk){.chunk = s->chunk, .first = s->first,
                       .n = ran_prefix(d->o, rows, n, s->first), .W = s->W, .recs = s->recs};
    s->W = NULL;
    s->recs = NULL;
    pthread_mutex_lock(&d->mu);
    if (d->out_tail)
        d->out_tail->next = dc;
    else
        d->out_head = dc;
    d->out_tail = dc;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return GS_OK;
}

/* Rank 0: the next chunk not complete, or -1. */
static long long take_next(const gm_out *o, long long *next)
{
    while (*next < o->n_chunks && o->map[*next] == 1) /* any other byte: not done */
        (*next)++;
    return *next < o->n_chunks ? (*next)++ : -1;
}

/* Queue chunk c (-1: no more work). The protocol keeps at most T queued; a
 * push into a full queue would be a bug, reported instead of overwriting. */
static void push_chunk(disp *d, long long c)
{
    pthread_mutex_lock(&d->mu);
    if (c < 0) {
        d->no_more = 1;
    } else if (d->qlen >= d->threads) {
        if (!d->fail)
            d->fail = gs_errorf(&d->fail_err, GS_ERR_INVALID, "", "internal: chunk %lld "
                                "pushed into a full queue", c);
    } else {
        d->queue[(d->qhead + d->qlen) % d->threads] = c;
        d->qlen++;
    }
    pthread_cond_broadcast(&d->qcv);
    pthread_mutex_unlock(&d->mu);
}

/* Write the finished chunks; the first error is kept in *rc. */
static int drain(disp *d, gm_stats *st, gs_err *rc, gs_error *err)
{
    pthread_mutex_lock(&d->mu);
    done_chunk *dc = d->out_head;
    d->out_head = d->out_tail = NULL;
    pthread_mutex_unlock(&d->mu);
    int n = 0;
    while (dc) {
        done_chunk *next = dc->next;
        if (!*rc)
            *rc = gm_out_chunk(d->o, dc->chunk, dc->first, dc->n, dc->W, dc->recs, err);
        if (!*rc) {
            st->rows += dc->n;
            st->chunks++;
        }
        free(dc->W);
        free(dc->recs);
        free(dc);
        dc = next;
        n++;
    }
    return n;
}

static void nap(disp *d)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 1000000; /* 1 ms */
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&d->mu);
    if (!d->out_head)
        pthread_cond_timedwait(&d->cv, &d->mu, &ts);
    pthread_mutex_unlock(&d->mu);
}

/* The main thread's loop while the workers run (see the protocol above). */
static gs_err serve(disp *d, gs_run_pool *pool, gs_rows_progress *pg, gm_stats *st,
                    gs_error *err)
{
    const int rank = gm_rank(), size = gm_size(), T = d->threads;
    long long next_c = 0, reply = -1, msg[2];
    int active = size - 1, global_err = 0, outstanding = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    gs_err rc = GS_OK;
    /* rank 0: the rows each rank reported with its last request */
    long long *reported = rank == 0 && pg ? calloc((size_t)size, sizeof *reported) : NULL;
    for (;;) {
        int progressed = drain(d, st, &rc, err);
        pthread_mutex_lock(&d->mu);
        int failed = rc != GS_OK || d->fail != GS_OK;
        int qlen = d->qlen, no_more = d->no_more;
        pthread_mutex_unlock(&d->mu);
        failed |= gs_run_failed(pool);
        if (rank == 0) {
            global_err |= failed;
            int flag = 0;
            MPI_Status s;
            while (MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &flag, &s) ==
                       MPI_SUCCESS && flag) {
                MPI_Recv(msg, 2, MPI_LONG_LONG, s.MPI_SOURCE, TAG_REQ, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                global_err |= msg[0] != 0;
                if (reported)
                    reported[s.MPI_SOURCE] = msg[1];
                long long c = global_err ? -1 : take_next(d->o, &next_c);
                MPI_Send(&c, 1, MPI_LONG_LONG, s.MPI_SOURCE, TAG_CHUNK, MPI_COMM_WORLD);
                active -= c < 0;
                progressed = 1;
            }
            for (; !no_more && qlen < T; qlen++) {
                long long c = global_err ? -1 : take_next(d->o, &next_c);
                push_chunk(d, c);
                no_more = c < 0;
                progressed = 1;
            }
            if (global_err && !no_more) { /* the queue full of chunks no worker will take
                                           * (one thread, which failed): end it all the same */
                push_chunk(d, -1);
                no_more = 1;
                progressed = 1;
            }
            if (reported) { /* O(ranks) at most every 0.2 s */
                long long done = pg->before + st->rows;
                for (int r = 1; r < size; r++)
                    done += reported[r];
                gs_rows_progress_show(pg, done, 0);
            }
        } else {
            if (outstanding) {
                int flag = 0;
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    outstanding = 0;
                    push_chunk(d, reply);
                    no_more = reply < 0;
                    qlen += reply >= 0; /* the snapshot counts what was just queued */
                    progressed = 1;
                }
            }
            if (!outstanding && !no_more && (qlen < T || failed)) {
                msg[0] = failed;
                msg[1] = st->rows;
                MPI_Send(msg, 2, MPI_LONG_LONG, 0, TAG_REQ, MPI_COMM_WORLD);
                MPI_Irecv(&reply, 1, MPI_LONG_LONG, 0, TAG_CHUNK, MPI_COMM_WORLD, &req);
                outstanding = 1;
            }
        }
        if (no_more && !outstanding && gs_run_active(pool) == 0 && (rank != 0 || active == 0)) {
            drain(d, st, &rc, err); /* what the last workers handed over */
            free(reported);
            return rc;
        }
        if (!progressed)
            nap(d);
    }
}

gs_err gm_dispatch(gs_run *run, gm_out *o, int threads, gs_rows_progress *pg, gm_stats *st,
                   gs_error *err)
{
    memset(st, 0, sizeof *st);
    disp d = {.run = run, .o = o, .threads = threads, .m = o->m};
    d.queue = calloc((size_t)threads, sizeof *d.queue);
    d.slots = calloc((size_t)threads, sizeof *d.slots);
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.cv, NULL);
    pthread_cond_init(&d.qcv, NULL);
    gs_err rc = d.queue && d.slots ? GS_OK : gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    run->sink = (gs_result_sink){.put = sink_put, .commit = sink_commit, .ctx = &d};
    gs_chunk_feed feed = {.next = feed_next, .ctx = &d};
    gs_run_pool *pool = NULL;
    double t0 = gs_now();
    if (!rc)
        rc = gs_run_start(run, threads, o->chunk, &feed, &pool, err);
    if ((rc = gm_agree(rc, "starting the workers", err)) != GS_OK) {
        if (pool) { /* started here, not elsewhere: stop it */
            push_chunk(&d, -1);
            gs_run_wait(pool, NULL);
        }
    } else {
        gs_error werr;
        rc = serve(&d, pool, pg, st, err);
        gs_err rw = gs_run_wait(pool, &werr);
        if (!rc && rw) {
            rc = rw;
            *err = werr;
        }
        if (!rc && d.fail) {
            rc = d.fail;
            *err = d.fail_err;
        }
        st->wall = gs_now() - t0;
        rc = gm_agree(rc, "solving", err);
    }
    for (int t = 0; d.slots && t < threads; t++)
        slot_clear(&d.slots[t]);
    free(d.queue);
    free(d.slots);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.cv);
    pthread_cond_destroy(&d.qcv);
    return rc;
}
