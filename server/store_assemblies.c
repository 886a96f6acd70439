/*
 * store_assemblies.c -- the assemblies table: rows, lookups, delete with its jobs and results (see store.h for the contract, store_impl.h for the
 * split).
 */
#include "store_impl.h"

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
        *found = 1;
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
        read_assembly(s, &v[n++]);
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

/* The results go GSD_DEL_BATCH rows per transaction, each followed by a
 * passive checkpoint, so that the WAL is reused from its start instead of
 * growing by the size of the assembly's results: on a full disk the delete
 * fits in the WAL file that exists (plus the reserve the on_full hook
 * releases). */
gs_err gsd_store_assembly_delete(gsd_store *st, const char *id, gs_error *err)
{
    REQUIRE(st && id, "id");
    lock(st);
    del_ctx d = {id, 0};
    gs_err e;
    do {
        e = retry_full(st, delete_results_batch, &d, err);
        if (!e && d.n > 0)
            (void)sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    } while (!e && d.n == GSD_DEL_BATCH);
    if (!e)
        e = retry_full(st, delete_rows, &d, err);
    unlock(st);
    return e;
}

