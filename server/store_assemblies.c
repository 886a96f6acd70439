/*
 * store_assemblies.c -- the assemblies table: rows, lookups, delete with its
 * jobs and results (see store.h for the contract, store_impl.h for the
 * split), and the process's list of assemblies being deleted: a delete
 * takes the store's mutex one batch at a time, so that other requests on the
 * same connection run between its batches, and the assembly reads as deleted
 * from its start (lookups, lists, its jobs; no job is added to it).
 */
#include "store_impl.h"

#include <stdatomic.h>

#define GSD_DEL_RESTART 2000 /* WAL frames (8 MB) past which a delete restarts the WAL */
#define GSD_DEL_WAIT_MS 100  /* how long that RESTART waits for readers (a chunk: ms) */
#define GSD_DEL_PAUSE_NS 200000 /* between two batches, outside the locks */

/* ---- assemblies being deleted ---------------------------------------------------- */

/* A delete under way: a node on the deleting call's stack, linked while it
 * runs (nothing to allocate, nothing to fail). Two deletes of the same
 * assembly each link their own. */
typedef struct deleting {
    struct deleting *next;
    const char *id;
} deleting;

static pthread_mutex_t deleting_mu = PTHREAD_MUTEX_INITIALIZER;
static deleting *deleting_head;
static atomic_int deleting_count; /* the lookups' fast path: no delete runs */

static void deleting_add(deleting *d)
{
    pthread_mutex_lock(&deleting_mu);
    d->next = deleting_head;
    deleting_head = d;
    atomic_fetch_add(&deleting_count, 1);
    pthread_mutex_unlock(&deleting_mu);
}

static void deleting_remove(deleting *d)
{
    pthread_mutex_lock(&deleting_mu);
    for (deleting **pp = &deleting_head; *pp; pp = &(*pp)->next)
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    atomic_fetch_sub(&deleting_count, 1);
    pthread_mutex_unlock(&deleting_mu);
}

int gsd_store_asm_deleting(const char *assembly_id)
{
    if (atomic_load(&deleting_count) == 0)
        return 0;
    int hit = 0;
    pthread_mutex_lock(&deleting_mu);
    for (const deleting *d = deleting_head; d && !hit; d = d->next)
        hit = !strcmp(d->id, assembly_id);
    pthread_mutex_unlock(&deleting_mu);
    return hit;
}

/* ---- assemblies ------------------------------------------------------------------ */

/* Binds ?1..?24 in ASM_COLS order (insert and update share it). */
static void bind_assembly(binder *b, const gsd_assembly_row *r)
{
    b_text(b, r->id, sizeof r->id);
    b_text(b, r->content_hash, sizeof r->content_hash);
    b_text(b, r->name, sizeof r->name);
    b_text(b, r->joint, sizeof r->joint);
    b_int(b, r->n);
    b_int(b, r->m);
    b_int(b, r->n_parts);
    b_int(b, r->n_nodes);
    b_int(b, r->n_fast);
    b_text(b, r->status, sizeof r->status);
    b_text(b, r->err_code, sizeof r->err_code);
    b_text(b, r->err_field, sizeof r->err_field);
    b_text(b, r->err_msg, sizeof r->err_msg);
    b_real(b, r->t.factor_K);
    b_real(b, r->t.build_Q);
    b_real(b, r->t.loads);
    b_real(b, r->t.factor_Q);
    b_real(b, r->t.cond);
    b_real(b, r->t.total);
    b_real(b, r->cond_K);
    b_real(b, r->cond_Q);
    b_real(b, r->created_at);
    b_real(b, r->ready_at);
    b_text(b, r->factor_checksum, sizeof r->factor_checksum);
}

static void read_assembly(sqlite3_stmt *s, gsd_assembly_row *r)
{
    reader rd = {s, 0};
    memset(r, 0, sizeof *r);
    r_text(&rd, r->id, sizeof r->id);
    r_text(&rd, r->content_hash, sizeof r->content_hash);
    r_text(&rd, r->name, sizeof r->name);
    r_text(&rd, r->joint, sizeof r->joint);
    r->n = (int)r_int(&rd);
    r->m = (int)r_int(&rd);
    r->n_parts = (int)r_int(&rd);
    r->n_nodes = (int)r_int(&rd);
    r->n_fast = (int)r_int(&rd);
    r_text(&rd, r->status, sizeof r->status);
    r_text(&rd, r->err_code, sizeof r->err_code);
    r_text(&rd, r->err_field, sizeof r->err_field);
    r_text(&rd, r->err_msg, sizeof r->err_msg);
    r->t.factor_K = r_real(&rd);
    r->t.build_Q = r_real(&rd);
    r->t.loads = r_real(&rd);
    r->t.factor_Q = r_real(&rd);
    r->t.cond = r_real(&rd);
    r->t.total = r_real(&rd);
    r->cond_K = r_real(&rd);
    r->cond_Q = r_real(&rd);
    r->created_at = r_real(&rd);
    r->ready_at = r_real(&rd);
    r_text(&rd, r->factor_checksum, sizeof r->factor_checksum);
}

static gs_err assembly_write(gsd_store *st, int which, const gsd_assembly_row *row,
                             const char *what, gs_error *err)
{
    sqlite3_stmt *s = stmt(st, which);
    binder b = bind_start(s);
    bind_assembly(&b, row);
    gs_err e = bind_end(st, &b, what, err);
    if (e)
        return e;
    e = step_done(st, s, what, err);
    if (!e && which == S_ASM_UPDATE && sqlite3_changes(st->db) == 0)
        e = gs_errorf(err, GS_ERR_INVALID, "id", "no assembly '%.40s'", row->id);
    return e;
}

gs_err gsd_store_assembly_insert(gsd_store *st, const gsd_assembly_row *row, gs_error *err)
{
    REQUIRE(st && row, "row");
    lock(st);
    gs_err e = assembly_write(st, S_ASM_INSERT, row, "insert assembly", err);
    unlock(st);
    return e;
}

gs_err gsd_store_assembly_update(gsd_store *st, const gsd_assembly_row *row, gs_error *err)
{
    REQUIRE(st && row, "row");
    lock(st);
    gs_err e = assembly_write(st, S_ASM_UPDATE, row, "update assembly", err);
    unlock(st);
    return e;
}

/* Run a one-key assembly query and read at most one row. */
static gs_err assembly_lookup(gsd_store *st, int which, const char *key, gsd_assembly_row *out,
                              int *found, gs_error *err)
{
    sqlite3_stmt *s = stmt(st, which);
    *found = 0;
    binder b = bind_start(s);
    b_text(&b, key, 1024);
    gs_err e = bind_end(st, &b, "get assembly", err);
    if (e)
        return e;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        read_assembly(s, out);
        *found = !gsd_store_asm_deleting(out->id); /* being deleted: gone already */
    } else if (rc != SQLITE_DONE) {
        e = sql_err(st, rc, "get assembly", err);
    }
    stmt_release(s);
    return e;
}

gs_err gsd_store_assembly_get(gsd_store *st, const char *id, gsd_assembly_row *out, int *found,
                              gs_error *err)
{
    REQUIRE(st && id && out && found, "id");
    lock(st);
    gs_err e = assembly_lookup(st, S_ASM_GET, id, out, found, err);
    unlock(st);
    return e;
}

gs_err gsd_store_assembly_find_hash(gsd_store *st, const char *hash, gsd_assembly_row *out,
                                    int *found, gs_error *err)
{
    REQUIRE(st && hash && out && found, "hash");
    lock(st);
    gs_err e = assembly_lookup(st, S_ASM_FIND_HASH, hash, out, found, err);
    unlock(st);
    return e;
}

static gs_err assembly_list_locked(gsd_store *st, gsd_assembly_row **rows, int *count,
                                   gs_error *err)
{
    sqlite3_stmt *s = stmt(st, S_ASM_LIST);
    gsd_assembly_row *v = NULL;
    size_t cap = 0;
    int n = 0, rc;
    gs_err e = GS_OK;
    while (!e && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        gsd_assembly_row *q = grow(v, &cap, (size_t)(n + 1) * sizeof *v);
        if (!q) {
            e = nomem(err, "assembly list");
            break;
        }
        v = q;
        read_assembly(s, &v[n]);
        n += !gsd_store_asm_deleting(v[n].id);
    }
    if (!e && rc != SQLITE_DONE)
        e = sql_err(st, rc, "list assemblies", err);
    stmt_release(s);
    if (e) {
        free(v);
        return e;
    }
    *rows = v;
    *count = n;
    return GS_OK;
}

gs_err gsd_store_assembly_list(gsd_store *st, gsd_assembly_row **rows, int *count, gs_error *err)
{
    REQUIRE(st && rows && count, "rows");
    *rows = NULL;
    *count = 0;
    lock(st);
    gs_err e = assembly_list_locked(st, rows, count, err);
    unlock(st);
    return e;
}

/* Step a one-parameter (id) statement with no result rows. */
typedef struct {
    const char *id;
    int n; /* rows deleted by the last batch */
} del_ctx;

static gs_err delete_results_batch(gsd_store *st, void *arg, gs_error *err)
{
    del_ctx *d = arg;
    gs_err e = tx_begin(st, err);
    if (e)
        return e;
    e = exec_by_id(st, S_ASM_DEL_RESULTS, d->id, "delete results", err);
    d->n = e ? 0 : sqlite3_changes(st->db);
    return tx_end(st, e, err);
}

/* The mark of a delete under way (schema/006_assembly_deleting.sql): set in
 * a transaction of its own before the first batch, so that a stop in the
 * middle is finished at the next start (gsd_store_assembly_deletes_finish). */
static gs_err mark_deleting(gsd_store *st, void *arg, gs_error *err)
{
    del_ctx *d = arg;
    gs_err e = tx_begin(st, err);
    if (e)
        return e;
    e = exec_by_id(st, S_ASM_DEL_MARK, d->id, "mark the delete", err);
    return tx_end(st, e, err);
}

static gs_err delete_rows(gsd_store *st, void *arg, gs_error *err)
{
    del_ctx *d = arg;
    gs_err e = tx_begin(st, err);
    if (e)
        return e;
    e = exec_by_id(st, S_ASM_DEL_JOBS, d->id, "delete jobs", err);
    if (!e)
        e = exec_by_id(st, S_ASM_DEL, d->id, "delete assembly", err);
    return tx_end(st, e, err);
}

/* One batch of the results (store locked), then a passive checkpoint: with
 * no reader in the way it copies the batch, and the next batch's writer
 * finds every frame copied and starts the WAL over, so the WAL stays at one
 * batch. A reader holding an older snapshot keeps the checkpoint from
 * copying past it and the writer from starting over: the WAL then grows
 * for as long as that read lasts, which is why a job's results are read in
 * short chunks (gsd_store_job_results); past GSD_CKPT_HARD frames the
 * checkpointer's RESTART (store_ckpt.c) waits for the chunk to end. */
static gs_err delete_one_batch(gsd_store *st, del_ctx *d, gs_error *err)
{
    lock(st);
    gsd_store_ckpt_pause(st, 1);
    gs_err e = retry_full(st, delete_results_batch, d, err);
    int log = 0;
    if (!e && d->n > 0)
        (void)sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, NULL);
    /* readers kept the WAL from starting over: a RESTART waits (at most
     * GSD_DEL_WAIT_MS) for the read transactions in the way to end, then the
     * next batch starts the WAL over. Its wait holds other writers back;
     * the WAL is past GSD_DEL_RESTART frames only while readers interfere */
    if (!e && log > GSD_DEL_RESTART) {
        (void)sqlite3_busy_timeout(st->db, GSD_DEL_WAIT_MS);
        (void)sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_RESTART, NULL, NULL);
        (void)sqlite3_busy_timeout(st->db, GSD_BUSY_TIMEOUT_MS);
    }
    gsd_store_ckpt_pause(st, 0);
    unlock(st);
    /* a mutex is not fair: relocked at once, it would go to this thread
     * again and again while a request waits for it (a /healthz waited for a
     * whole 4 s delete); a pause outside the locks (0.2 ms a batch, 1 s of
     * a million results' minute) lets the waiting requests and writers in */
    nanosleep(&(struct timespec){0, GSD_DEL_PAUSE_NS}, NULL);
    return e;
}

/* The results go GSD_DEL_BATCH rows per transaction, each followed by a
 * passive checkpoint, so that the WAL is reused from its start instead of
 * growing by the size of the assembly's results: on a full disk the delete
 * fits in the WAL file that exists (plus the reserve the on_full hook
 * releases). The store's mutex is taken per batch, not for the delete:
 * other requests on this connection (/healthz, job reads) run between two
 * batches. Meanwhile the assembly is listed as being deleted (it and its
 * jobs read as absent, no job is added to it); a result stored meanwhile
 * (a single solve that looked the assembly up before) goes with the last
 * transaction, by the foreign keys' cascade from its job or assembly. */
gs_err gsd_store_assembly_delete(gsd_store *st, const char *id, gs_error *err)
{
    REQUIRE(st && id, "id");
    deleting mark = {NULL, id};
    deleting_add(&mark);
    del_ctx d = {id, 0};
    lock(st);
    gs_err e = retry_full(st, mark_deleting, &d, err);
    unlock(st);
    while (!e) {
        e = delete_one_batch(st, &d, err);
        if (d.n != GSD_DEL_BATCH)
            break;
    }
    if (!e) {
        lock(st);
        e = retry_full(st, delete_rows, &d, err);
        unlock(st);
    }
    deleting_remove(&mark);
    return e;
}

int gsd_store_assembly_gone(gsd_store *st, const char *id)
{
    gsd_assembly_row row;
    int found = 1;
    gs_error e;
    return gsd_store_assembly_get(st, id, &row, &found, &e) == GS_OK && !found;
}

gs_err gsd_store_assembly_deletes_finish(gsd_store *st, void (*done)(void *ctx, const char *id),
                                         void *ctx, gs_error *err)
{
    REQUIRE(st, "st");
    for (;;) { /* one at a time: each delete takes the store's lock itself */
        char id[40] = "";
        lock(st);
        sqlite3_stmt *s = stmt(st, S_ASM_DEL_UNFINISHED);
        int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            reader rd = {s, 0};
            r_text(&rd, id, sizeof id);
        }
        gs_err e = rc == SQLITE_ROW || rc == SQLITE_DONE ? GS_OK
                                                          : sql_err(st, rc, "list deletes", err);
        stmt_release(s);
        unlock(st);
        if (e || !id[0])
            return e;
        if ((e = gsd_store_assembly_delete(st, id, err)) != GS_OK)
            return e;
        if (done)
            done(ctx, id);
    }
}
