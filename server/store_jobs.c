/*
 * store_jobs.c -- the jobs table: rows, status changes, lists (see store.h
 * for the contract, store_impl.h for the split). The jobs of an assembly
 * being deleted read as absent (gsd_store_asm_deleting).
 */
#include "store_impl.h"

/* ---- jobs ------------------------------------------------------------------------ */

int gsd_job_status_ended(const char *status)
{
    return !strcmp(status, "done") || !strcmp(status, "failed") || !strcmp(status, "cancelled");
}

void gsd_job_row_free(gsd_job_row *row)
{
    if (!row)
        return;
    free(row->options_json);
    row->options_json = NULL;
}

static gs_err read_job(sqlite3_stmt *s, gsd_job_row *r, gs_error *err)
{
    reader rd = {s, 0};
    memset(r, 0, sizeof *r);
    r_text(&rd, r->id, sizeof r->id);
    r_text(&rd, r->assembly_id, sizeof r->assembly_id);
    r_text(&rd, r->status, sizeof r->status);
    r->total = (int)r_int(&rd);
    r->done = (int)r_int(&rd);
    r->failed = (int)r_int(&rd);
    int oi = rd.i++;
    r->created_at = r_real(&rd);
    r->started_at = r_real(&rd);
    r->finished_at = r_real(&rd);
    r->solve_time_sum = r_real(&rd);
    r->iterations_sum = r_int(&rd);
    r->done_at_start = (int)r_int(&rd);
    r_text(&rd, r->error, sizeof r->error);
    if (sqlite3_column_type(s, oi) == SQLITE_NULL)
        return GS_OK;
    const unsigned char *t = sqlite3_column_text(s, oi);
    int len = sqlite3_column_bytes(s, oi);
    r->options_json = malloc((size_t)len + 1);
    if (!r->options_json)
        return nomem(err, "options_json");
    copy_str(r->options_json, (size_t)len + 1, t ? (const char *)t : "", t ? (size_t)len : 0);
    return GS_OK;
}

gs_err gsd_store_job_insert(gsd_store *st, const gsd_job_row *row, gs_error *err)
{
    REQUIRE(st && row, "row");
    /* a delete of the assembly may have passed its job list: a job added
     * now would be deleted under its worker (or, past the delete's last
     * transaction, refused by the foreign key) */
    if (gsd_store_asm_deleting(row->assembly_id))
        return gs_errorf(err, GS_ERR_INVALID, "assembly_id", "assembly '%.40s' is being deleted",
                         row->assembly_id);
    lock(st);
    sqlite3_stmt *s = stmt(st, S_JOB_INSERT);
    binder b = bind_start(s);
    b_text(&b, row->id, sizeof row->id);
    b_text(&b, row->assembly_id, sizeof row->assembly_id);
    b_text(&b, row->status, sizeof row->status);
    b_int(&b, row->total);
    b_int(&b, row->done);
    b_int(&b, row->failed);
    b_text_or_null(&b, row->options_json, (size_t)INT_MAX, 0);
    b_real(&b, row->created_at);
    b_real(&b, row->started_at);
    b_real(&b, row->finished_at);
    b_real(&b, row->solve_time_sum);
    b_int(&b, row->iterations_sum);
    b_int(&b, row->done_at_start);
    b_text_or_null(&b, row->error[0] ? row->error : NULL, sizeof row->error, 0);
    gs_err e = bind_end(st, &b, "insert job", err);
    if (!e)
        e = step_done(st, s, "insert job", err);
    unlock(st);
    return e;
}

static gs_err job_get_locked(gsd_store *st, const char *id, gsd_job_row *out, int *found,
                             gs_error *err)
{
    sqlite3_stmt *s = stmt(st, S_JOB_GET);
    binder b = bind_start(s);
    b_text(&b, id, 1024);
    gs_err e = bind_end(st, &b, "get job", err);
    if (e)
        return e;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        e = read_job(s, out, err);
        *found = !e;
    } else if (rc != SQLITE_DONE) {
        e = sql_err(st, rc, "get job", err);
    }
    stmt_release(s);
    return e;
}

gs_err gsd_store_job_get(gsd_store *st, const char *id, gsd_job_row *out, int *found,
                         gs_error *err)
{
    REQUIRE(st && id && out && found, "id");
    *found = 0;
    out->options_json = NULL;
    lock(st);
    gs_err e = job_get_locked(st, id, out, found, err);
    unlock(st);
    if (!e && *found && gsd_store_asm_deleting(out->assembly_id)) {
        gsd_job_row_free(out); /* its assembly's delete is under way: gone already */
        *found = 0;
    }
    return e;
}

gs_err gsd_store_job_set_status(gsd_store *st, const char *id, const char *status, double when,
                                gs_error *err)
{
    return gsd_store_job_fail(st, id, status, when, NULL, err);
}

typedef struct {
    const char *id, *status, *reason;
    double when;
} status_ctx;

static gs_err job_status_locked(gsd_store *st, void *arg, gs_error *err)
{
    const status_ctx *c = arg;
    const char *id = c->id, *status = c->status, *reason = c->reason;
    double when = c->when;
    sqlite3_stmt *s = stmt(st, S_JOB_SET_STATUS);
    binder b = bind_start(s);
    b_text(&b, id, 1024);
    b_text(&b, status, 64);
    b_real(&b, when);
    b_text_or_null(&b, reason, 256, 0);
    gs_err e = bind_end(st, &b, "set job status", err);
    if (!e)
        e = step_done(st, s, "set job status", err);
    if (!e && sqlite3_changes(st->db) == 0) { /* absent, or already ended (kept) */
        gsd_job_row row = {0};
        int found = 0;
        e = job_get_locked(st, id, &row, &found, err);
        if (!e && !found)
            e = gs_errorf(err, GS_ERR_INVALID, "id", "no job '%.40s'", id);
        gsd_job_row_free(&row);
    }
    return e;
}

gs_err gsd_store_job_fail(gsd_store *st, const char *id, const char *status, double when,
                          const char *reason, gs_error *err)
{
    REQUIRE(st && id && status, "status");
    status_ctx c = {id, status, reason, when};
    lock(st);
    gs_err e = retry_full(st, job_status_locked, &c, err);
    unlock(st);
    return e;
}

static gs_err job_list_locked(gsd_store *st, sqlite3_stmt *s, gsd_job_row **rows, int *count,
                              gs_error *err)
{
    gsd_job_row *v = NULL;
    size_t cap = 0;
    int n = 0, rc;
    gs_err e = GS_OK;
    while (!e && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        gsd_job_row *q = grow(v, &cap, (size_t)(n + 1) * sizeof *v);
        if (!q) {
            e = nomem(err, "job list");
            break;
        }
        v = q;
        e = read_job(s, &v[n++], err);
        if (!e && gsd_store_asm_deleting(v[n - 1].assembly_id))
            gsd_job_row_free(&v[--n]); /* its assembly's delete is under way */
    }
    if (!e && rc != SQLITE_DONE)
        e = sql_err(st, rc, "list jobs", err);
    stmt_release(s);
    if (e) {
        for (int i = 0; i < n; i++)
            gsd_job_row_free(&v[i]);
        free(v);
        return e;
    }
    *rows = v;
    *count = n;
    return GS_OK;
}

gs_err gsd_store_job_list(gsd_store *st, const char *assembly_id, const char *status,
                          gsd_job_row **rows, int *count, gs_error *err)
{
    REQUIRE(st && rows && count, "rows");
    *rows = NULL;
    *count = 0;
    int which = assembly_id ? (status ? S_JOB_LIST_BOTH : S_JOB_LIST_ASM)
                            : (status ? S_JOB_LIST_STATUS : S_JOB_LIST_ALL);
    lock(st);
    sqlite3_stmt *s = stmt(st, which);
    int rc = SQLITE_OK;
    if (assembly_id)
        rc = sqlite3_bind_text(s, 1, assembly_id, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK && status)
        rc = sqlite3_bind_text(s, 2, status, -1, SQLITE_STATIC);
    gs_err e = GS_OK;
    if (rc != SQLITE_OK) {
        e = sql_err(st, rc, "list jobs", err);
        stmt_release(s);
    } else {
        e = job_list_locked(st, s, rows, count, err);
    }
    unlock(st);
    return e;
}


gs_err gsd_store_job_recount(gsd_store *st, const char *id, int *changed, gs_error *err)
{
    REQUIRE(st && id, "id");
    if (changed)
        *changed = 0;
    lock(st);
    sqlite3_stmt *s = stmt(st, S_JOB_RECOUNT);
    binder b = bind_start(s);
    b_text(&b, id, 1024);
    gs_err e = bind_end(st, &b, "recount job", err);
    if (!e)
        e = step_done(st, s, "recount job", err);
    if (!e && changed)
        *changed = sqlite3_changes(st->db) > 0;
    unlock(st);
    return e;
}

gs_err gsd_store_job_tidy_errors(gsd_store *st, int *changed, gs_error *err)
{
    REQUIRE(st, "store");
    if (changed)
        *changed = 0;
    lock(st);
    sqlite3_stmt *s = stmt(st, S_JOB_TIDY_ERRORS);
    gs_err e = step_done(st, s, "clear job errors", err);
    if (!e && changed)
        *changed = sqlite3_changes(st->db);
    unlock(st);
    return e;
}
