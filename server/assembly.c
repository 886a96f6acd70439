/*
 * assembly.c -- creating, precomputing, loading and deleting assemblies
 * (see assembly.h).
 */
#define _GNU_SOURCE
#include "assembly.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asm_impl.h"
#include "hash.h"
#include "jobs.h"
#include "jobwait.h"
#include "linalg.h"
#include "precomp_io.h"
#include "runner.h"
#include "summary.h"
#include "upkeep.h"

void gsd_asm_limits(const gsd_app *app, gs_model_limits *lim)
{
    gs_model_limits_default(lim);
    lim->max_pairs = app->o.max_m;
    if ((size_t)app->o.max_n * (size_t)app->o.max_n < lim->max_block_elems)
        lim->max_block_elems = (size_t)app->o.max_n * (size_t)app->o.max_n;
}

static void model_path(const gsd_app *app, const char *id, char *out, size_t cap)
{
    char dir[PATH_MAX];
    gsd_path_assembly(app, id, dir, sizeof dir);
    snprintf(out, cap, "%.*s/model.json", (int)(cap > 12 ? cap - 12 : 0), dir);
}

static void factor_path(const gsd_app *app, const char *id, char *out, size_t cap)
{
    char dir[PATH_MAX];
    gsd_path_assembly(app, id, dir, sizeof dir);
    snprintf(out, cap, "%.*s/factors.bin", (int)(cap > 13 ? cap - 13 : 0), dir);
}

/* The error of reading a's stored model (path) as clients see it: the
 * data directory's path is not theirs to see ("model.json" instead), the
 * field names the model, and a model this gapsimd refuses (one stored by an
 * older release whose reader was laxer: "500." numbers, names that are not
 * UTF-8) says what becomes of the assembly. */
static gs_err stored_model_error(const gsd_asm *a, const char *path, gs_error *err)
{
    const size_t n = strlen(path);
    char msg[sizeof err->msg + 16];
    const char *rest = strncmp(err->msg, path, n) ? NULL : err->msg + n;
    snprintf(msg, sizeof msg, "%s%.*s", rest ? "model.json" : "", (int)sizeof err->msg - 1,
             rest ? rest : err->msg);
    if (err->code == GS_ERR_IO || err->code == GS_ERR_NOMEM) /* passing: as it was, less the path */
        snprintf(err->msg, sizeof err->msg, "%.*s", (int)sizeof err->msg - 1, msg);
    else /* the reason cut to fit */
        snprintf(err->msg, sizeof err->msg, "the stored model of assembly %.24s cannot be read by "
                 "this gapsimd (%.120s); its jobs and results stay readable; upload the model "
                 "again (a new assembly) to solve", a->id, msg);
    if (!err->field[0])
        snprintf(err->field, sizeof err->field, "model");
    return err->code;
}

/* The row's error: why a failed assembly failed, or why a ready one has
 * no L_Q (lq_unavailable); e NULL clears it. */
static void row_set_error(gsd_assembly_row *row, const gs_error *e)
{
    snprintf(row->err_code, sizeof row->err_code, "%s", e ? gs_err_name(e->code) : "");
    snprintf(row->err_field, sizeof row->err_field, "%s", e ? e->field : "");
    snprintf(row->err_msg, sizeof row->err_msg, "%s", e ? e->msg : "");
}

/* The row of an assembly that failed with e (stored by the caller). */
static void row_failed(gsd_assembly_row *row, const gs_error *e)
{
    snprintf(row->status, sizeof row->status, "failed");
    row_set_error(row, e);
}

/* The row's error as a JSON error object {code, message, field}. */
static void row_error_json(const gsd_assembly_row *row, gs_buf *b)
{
    gs_buf_puts(b, "{\"code\":");
    gs_buf_json_str(b, row->err_code);
    gs_buf_puts(b, ",\"message\":");
    gs_buf_json_str(b, row->err_msg);
    gs_buf_puts(b, ",\"field\":");
    gs_buf_json_str(b, row->err_field);
    gs_buf_puts(b, "}");
}

/* The row, with the live progress (stage, elapsed) of a precomputing one
 * when stage is not NULL. */
static void row_json(const gsd_assembly_row *row, const char *stage, double elapsed, gs_buf *b)
{
    gs_buf_puts(b, "{\"id\":");
    gs_buf_json_str(b, row->id);
    gs_buf_puts(b, ",\"name\":");
    gs_buf_json_str(b, row->name);
    gs_buf_puts(b, ",\"joint\":");
    gs_buf_json_str(b, row->joint);
    gs_buf_puts(b, ",\"status\":");
    gs_buf_json_str(b, row->status);
    gs_buf_printf(b, ",\"n\":%d,\"m\":%d,\"n_parts\":%d,\"n_nodes\":%d,\"n_fasteners\":%d",
                   row->n, row->m, row->n_parts, row->n_nodes, row->n_fast);
    gs_buf_puts(b, ",\"content_hash\":");
    gs_buf_json_str(b, row->content_hash);
    gs_buf_printf(b, ",\"created_at\":%.3f,\"ready_at\":", row->created_at);
    if (row->ready_at > 0)
        gs_buf_printf(b, "%.3f", row->ready_at);
    else
        gs_buf_puts(b, "null");
    if (!strcmp(row->status, "ready")) {
        gs_buf_printf(b, ",\"factors_saved\":%s", row->factor_checksum[0] ? "true" : "false");
        const gs_precomp_times *t = &row->t;
        gs_buf_printf(b,
                       ",\"precompute\":{\"times_s\":{\"factor_K\":%.6f,\"build_Q\":%.6f,"
                       "\"loads\":%.6f,\"factor_Q\":%.6f,\"cond\":%.6f,\"total\":%.6f},"
                       "\"cond_K\":",
                       t->factor_K, t->build_Q, t->loads, t->factor_Q, t->cond, t->total);
        gs_buf_json_num(b, row->cond_K);
        gs_buf_puts(b, ",\"cond_Q\":");
        gs_buf_json_num(b, row->cond_Q);
        gs_buf_puts(b, ",\"lq_error\":");
        if (row->err_code[0])
            row_error_json(row, b);
        else
            gs_buf_puts(b, "null");
        gs_buf_puts(b, "}");
    }
    if (stage && !strcmp(row->status, "precomputing")) {
        gs_buf_puts(b, ",\"progress\":{\"stage\":");
        gs_buf_json_str(b, stage);
        gs_buf_printf(b, ",\"elapsed_s\":%.3f}", elapsed);
    }
    if (!strcmp(row->status, "failed")) {
        gs_buf_puts(b, ",\"error\":");
        row_error_json(row, b);
    }
    gs_buf_puts(b, ",\"links\":{\"self\":\"/v1/assemblies/");
    gs_buf_puts(b, row->id);
    gs_buf_puts(b, "\",\"solve\":\"/v1/assemblies/");
    gs_buf_puts(b, row->id);
    gs_buf_puts(b, "/solve\",\"clouds\":\"/v1/assemblies/");
    gs_buf_puts(b, row->id);
    gs_buf_puts(b, "/clouds\"}}");
}

void gsd_asm_row_json(const gsd_assembly_row *row, gs_buf *b)
{
    row_json(row, NULL, 0.0, b);
}

void gsd_asm_row_json_live(gsd_app *app, const gsd_assembly_row *row, gs_buf *b)
{
    const char *stage = NULL;
    double elapsed = 0.0;
    gsd_asm *a = strcmp(row->status, "precomputing") ? NULL : gsd_registry_acquire(app->reg, row->id);
    if (a) {
        const double t0 = atomic_load_explicit(&a->pre_t0, memory_order_acquire);
        stage = gs_precomp_stage_name(t0 > 0 ? atomic_load_explicit(&a->stage, memory_order_relaxed)
                                             : GS_STAGE_QUEUED);
        elapsed = t0 > 0 ? gs_now() - t0 : 0.0;
        gsd_registry_release(app->reg, a);
    }
    row_json(row, stage, elapsed, b);
}

/* ---- precomputation task ----------------------------------------------------- */

typedef struct {
    gsd_task t;
    gsd_app *app;
    char id[GSD_ID_LEN];
    gsd_req *waiter;
} pre_task;

static void answer_waiter(gsd_req *r, const gsd_assembly_row *row)
{
    if (!r)
        return;
    gs_buf b = {0};
    if (!strcmp(row->status, "failed")) {
        gs_buf_puts(&b, "{\"error\":");
        row_error_json(row, &b);
        gs_buf_puts(&b, ",\"assembly\":");
        gsd_asm_row_json(row, &b);
        gs_buf_puts(&b, "}");
        /* the model's fault (422), or the machine's: a build that failed its check */
        gsd_reply_json(r, strcmp(row->err_code, "check_failed") ? 422 : 500, &b);
    } else {
        gsd_asm_row_json(row, &b);
        gsd_reply_json(r, 201, &b);
    }
    gsd_req_finish(r);
}

/* Build the factors of a loaded assembly (a->mdl is read-only); row gets
 * the times and condition estimates, and no checksum (nothing saved yet).
 * taken: the model's dense blocks, taken from it to be factored in place
 * (gs_precomp_build_taken: none left after it), or NULL.
 * flags: GS_PRECOMP_DEFER_LQ for the upload (L_Q then comes from the task
 * that saves the factors, or from gsd_asm_need_lq). The caller installs the
 * result in a->pc under a->mu. */
static gs_err build_factors(gsd_asm *a, double **taken, unsigned flags, gsd_assembly_row *row,
                            gs_precomp **out, gs_error *err)
{
    gs_precomp *pc = NULL;
    gs_err rc = gs_precomp_build_watched(a->mdl, taken, flags, &a->stage, &pc, err);
    if (rc)
        return rc;
    row->factor_checksum[0] = '\0';
    row->t = pc->t;
    row->cond_K = pc->cond_K;
    row->cond_Q = pc->cond_Q;
    *out = pc;
    return GS_OK;
}

/* ---- steps after "ready" ----------------------------------------------------
 * Run fn(ctx) once, by the first caller; the others wait for it and get
 * its result. A failure for want of memory is not kept (the next caller
 * tries again); any other is returned to every later caller. done(ctx):
 * the step is already there (an acquire load). *ran: 1 if this call ran fn. */
static gs_err run_step(gsd_step *st, int (*done)(void *), gs_err (*fn)(void *, gs_error *),
                       void *ctx, int *ran, gs_error *err)
{
    *ran = 0;
    if (done(ctx))
        return GS_OK;
    pthread_mutex_lock(&st->mu);
    while (st->state == GSD_STEP_RUNNING)
        pthread_cond_wait(&st->cv, &st->mu);
    if (st->state == GSD_STEP_TODO && !done(ctx)) {
        st->state = GSD_STEP_RUNNING;
        *ran = 1;
        pthread_mutex_unlock(&st->mu);
        gs_error e = {0};
        gs_err rc = fn(ctx, &e);
        pthread_mutex_lock(&st->mu);
        st->state = rc == GS_OK ? GSD_STEP_DONE : GSD_STEP_FAILED;
        st->err = e;
        pthread_cond_broadcast(&st->cv);
    }
    gs_err rc = GS_OK;
    if (st->state == GSD_STEP_FAILED) {
        rc = st->err.code;
        if (err)
            *err = st->err;
        if (rc == GS_ERR_NOMEM)
            st->state = GSD_STEP_TODO;
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

static int has_lq(void *pc)
{
    return gs_precomp_has_lq(pc);
}

static gs_err finish_lq(void *pc, gs_error *err)
{
    return gs_precomp_finish_lq(pc, err);
}

/* L_Q after "ready". The upload's precomputation stops before L_Q
 * (GS_PRECOMP_DEFER_LQ), which GI on the relative form (the default, and
 * auto's pick) never reads: "ready" comes that much sooner (the lap joint:
 * 0.2 s of 1.1 s; lap-fine about 1 s of 7 s). The task that saves the
 * factors computes it first, on one core beside the solves; a solve by a
 * method that reads it (dual GI, NPM, primal IPM: gs_method_needs_lq)
 * before that computes it itself or waits for whoever does. */
gs_err gsd_asm_need_lq(gsd_asm *a, gs_error *err)
{
    gs_precomp *pc = a->pc; /* set before any solve can run (gsd_asm_ensure) */
    if (!pc)
        return gs_errorf(err, GS_ERR_INVALID, "assembly", "assembly %s is not ready", a->id);
    int ran;
    return run_step(&a->lq, has_lq, finish_lq, pc, &ran, err);
}

static int has_part_factors(void *pc)
{
    return gs_precomp_has_part_factors(pc);
}

/* One part per core (the other workers' solves share them meanwhile): two
 * 201,390-DOF plates 3.4-3.7 s instead of 6.3-6.6 s one after the other. */
static gs_err factor_parts_side_by_side(void *pc, gs_error *err)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return gs_precomp_factor_sparse(pc, cores > 0 ? (int)cores : 1, err);
}

/* The sparse parts' factors after a restart. factors.bin holds no sparse
 * factor, and a restart's load (gsd_asm_ensure) leaves them to the first
 * solve that needs them (GS_PRECOMP_DEFER_SPARSE), which factors them
 * while the solves that do not (GI relative, the default) go on. */
static gs_err need_parts(const gsd_app *app, gsd_asm *a, gs_error *err)
{
    gs_precomp *pc = a->pc;
    const double t0 = gs_now();
    int ran;
    gs_err rc = run_step(&a->parts, has_part_factors, factor_parts_side_by_side, pc, &ran,
                         err);
    if (ran)
        gsd_log(app, 1, "assembly %s: sparse parts %s for a solve with K (%.2f s)", a->id,
                rc == GS_OK ? "factored" : "not factored", gs_now() - t0);
    return rc;
}

/* ---- the dense stiffness blocks ----------------------------------------------
 * Once the factors are built, or before they are loaded (the load needs
 * only the kept hash), the model's dense blocks go
 * (gs_model_release_dense): only the primal forms (their K x
 * products) and the primal certificate read K itself, and the blocks are
 * as large as the factors (the lap joint: 108 of 310 MB). The first solve
 * that needs them reads the model again from the data directory and moves
 * them back (checked against the content hash), as the sparse parts'
 * factors come back after a restart; they then stay while the assembly is
 * loaded. Under the entry lock, which the registry's memory count takes. */
static void release_blocks(gsd_asm *a)
{
    gs_model_release_dense(a->mdl, a->hash);
}

typedef struct {
    const gsd_app *app;
    gsd_asm *a;
} dense_ctx;

static int has_blocks(void *ctx)
{
    return !gs_model_dense_released(((dense_ctx *)ctx)->a->mdl);
}

/* Put a's released blocks back from a fresh read of its model; the read
 * runs outside the entry lock unless the caller holds it (locked). */
static gs_err blocks_back(const gsd_app *app, gsd_asm *a, int locked, gs_error *err)
{
    if (!gs_model_dense_released(a->mdl))
        return GS_OK;
    char path[PATH_MAX];
    model_path(app, a->id, path, sizeof path);
    gs_model_limits lim;
    gsd_asm_limits(app, &lim);
    gs_model *fresh = NULL;
    gs_err rc = gs_model_read_json(path, &lim, &fresh, err);
    if (rc != GS_OK)
        stored_model_error(a, path, err);
    if (rc == GS_OK) {
        if (!locked)
            pthread_mutex_lock(&a->mu);
        rc = gs_model_restore_dense(a->mdl, fresh, err);
        if (!locked)
            pthread_mutex_unlock(&a->mu);
    }
    gs_model_free(fresh);
    return rc;
}

static gs_err read_blocks(void *ctx, gs_error *err)
{
    const dense_ctx *c = ctx;
    return blocks_back(c->app, c->a, 0, err);
}

static gs_err need_blocks(const gsd_app *app, gsd_asm *a, gs_error *err)
{
    dense_ctx c = {app, a};
    const double t0 = gs_now();
    int ran;
    gs_err rc = run_step(&a->dense, has_blocks, read_blocks, &c, &ran, err);
    if (ran)
        gsd_log(app, rc == GS_OK ? 1 : 0, "assembly %s: stiffness blocks %s for a solve with K "
                "(%.2f s)%s%s", a->id, rc == GS_OK ? "read again" : "not read", gs_now() - t0,
                rc == GS_OK || !err ? "" : ": ", rc == GS_OK || !err ? "" : err->msg);
    return rc;
}

gs_err gsd_asm_need(const gsd_app *app, gsd_asm *a, const gs_solve_opts *opts, gs_error *err)
{
    if (!a->pc)
        return gs_errorf(err, GS_ERR_INVALID, "assembly", "assembly %s is not ready", a->id);
    const unsigned defer = gs_run_precomp_flags(opts);
    gs_err rc = GS_OK;
    if (!(defer & GS_PRECOMP_DEFER_LQ))
        rc = gsd_asm_need_lq(a, err);
    if (rc == GS_OK && !(defer & GS_PRECOMP_DEFER_SPARSE))
        rc = need_parts(app, a, err);
    if (rc == GS_OK && gs_solve_reads_k(opts))
        rc = need_blocks(app, a, err);
    return rc;
}

/* L_Q cannot be made: linearly dependent pairs (a loop of parts, a surface
 * paired both ways), Q singular. The assembly stays "ready": GI on the
 * relative and primal forms, Lemke, the dual IPM and auto never read L_Q
 * and answer such problems (status infeasible where the gaps contradict,
 * docs/solvers.md), as gapsim-batch does. The row keeps the reason
 * (err_* of a ready row: precompute.lq_error) for the API to refuse the
 * methods that need L_Q at once (gsd_api_lq_usable); the registry's entry
 * keeps it in its failed L_Q step for solves already queued. The factors
 * are not saved (factors.bin holds L_Q): a restart computes them again. */
static void lq_unavailable(gsd_app *app, gsd_store *st, gsd_asm *a, gsd_assembly_row *row,
                           const gs_error *e)
{
    row_set_error(row, e);
    gsd_log(app, 0, "assembly %s: no L_Q (%s: %s); methods that need it are refused, the "
            "others solve", a->id, e->field, e->msg);
    gs_error ue;
    if (gsd_store_assembly_update(st, row, &ue))
        gsd_log(app, 0, "assembly %s: cannot record the missing L_Q: %s", a->id, ue.msg);
}

/* L_Q made but failing its check against the model (precomp_check.h):
 * the numbers cannot be trusted, the assembly is "failed" with that error,
 * as the upload would have been had L_Q come before "ready"; its entry
 * leaves the registry so that new work finds it failed (running chunks
 * finish on the entry they hold). */
static void lq_failed(gsd_app *app, gsd_store *st, gsd_asm *a, gsd_assembly_row *row,
                      const gs_error *e)
{
    row_failed(row, e);
    gsd_log(app, 0, "assembly %s: precomputation failed after ready: %s: %s", a->id, e->field,
            e->msg);
    gs_error ue;
    if (gsd_store_assembly_update(st, row, &ue))
        gsd_log(app, 0, "assembly %s: cannot record the failure: %s", a->id, ue.msg);
    gsd_registry_drop(app->reg, a->id);
}

/* Save the factors as data/assemblies/<id>/factors.bin (written to a
 * temporary file, renamed, not fsync'ed: a checksummed cache, recomputed
 * if a power loss leaves it incomplete); row gets their checksum. */
static gs_err save_factors(gsd_app *app, const char *id, const gs_precomp *pc,
                           gsd_assembly_row *row, gs_error *err)
{
    char path[PATH_MAX];
    factor_path(app, id, path, sizeof path);
    unsigned long long sum = 0;
    gs_err rc = gs_precomp_save(pc, path, &sum, err);
    gsd_upkeep_kick(app); /* a new file (or a partial one, removed) */
    if (rc == GS_OK)
        snprintf(row->factor_checksum, sizeof row->factor_checksum, "%016llx", sum);
    return rc;
}

/* ---- finishing and saving the factors after the assembly is ready -----------
 * Writing factors.bin (the lap joint's 217 MB: 0.3 s, a quarter of its
 * precomputation) is not on the way to "ready" either: the precomputation's
 * waiter is answered and solves start while a separate task, holding the
 * entry, computes L_Q (above), records cond_Q and the stage times, saves
 * the factors and records their checksum. Until then the assembly says
 * "factors_saved": false (and "cond_Q": null until L_Q); if the daemon stops
 * first, the next start computes the factors again (gsd_asm_ensure). */
typedef struct {
    gsd_task t;
    gsd_app *app;
    gsd_asm *a; /* held */
} save_task;

static void save_run(gsd_task *t, gsd_worker *w)
{
    save_task *st = (save_task *)t;
    gsd_app *app = st->app;
    const char *id = st->a->id;
    gsd_assembly_row row;
    int found = 0;
    gs_error e = {0};
    double t0 = gs_now();
    gs_err rc = gsd_store_assembly_get(w->st, id, &row, &found, &e);
    if (rc == GS_OK && found && !strcmp(row.status, "ready")) { /* else deleted meanwhile */
        if ((rc = gsd_asm_need_lq(st->a, &e)) != GS_OK) {
            if (rc == GS_ERR_SINGULAR || rc == GS_ERR_NOT_SPD)
                lq_unavailable(app, w->st, st->a, &row, &e);
            else if (rc == GS_ERR_CHECK)
                lq_failed(app, w->st, st->a, &row, &e);
            else
                gsd_log(app, 0, "assembly %s: L_Q not computed (%s); methods that need it "
                        "will try again", id, e.msg);
            gsd_registry_release(app->reg, st->a);
            free(st);
            return;
        }
        const gs_precomp *pc = gsd_asm_pc(st->a);
        row.t = pc->t;
        row.cond_Q = pc->cond_Q;
        row_set_error(&row, NULL); /* L_Q made: a reason recorded before is gone */
        rc = save_factors(app, id, pc, &row, &e);
        if (rc == GS_OK)
            gsd_asm_set_saved(st->a);
        gs_error ue;
        if (gsd_store_assembly_update(w->st, &row, &ue)) /* cond_Q and the times, saved or not */
            gsd_log(app, 0, "assembly %s: cannot record L_Q: %s", id, ue.msg);
        if (rc == GS_OK)
            gsd_log(app, 1, "assembly %s: L_Q in %.2f s, factors saved; %.2f s in all", id,
                    pc->t.factor_Q, gs_now() - t0);
        else
            gsd_log(app, 0, "assembly %s: factors not saved (%s); a restart computes them "
                    "again", id, e.msg);
    }
    gsd_registry_release(app->reg, st->a);
    free(st);
}

static void save_cancel(gsd_task *t)
{
    save_task *st = (save_task *)t;
    gsd_registry_release(st->app->reg, st->a);
    free(st);
}

/* Queue the save of a's factors (a: held by the caller; the task takes its
 * own hold). Out of memory or a stopping pool: not saved (a restart
 * computes the factors again). */
static void queue_save(gsd_app *app, gsd_asm *a)
{
    save_task *st = calloc(1, sizeof *st);
    if (!st) {
        gsd_log(app, 0, "assembly %s: no memory to save the factors", a->id);
        return;
    }
    st->t.run = save_run;
    st->t.cancel = save_cancel;
    st->app = app;
    st->a = gsd_registry_acquire(app->reg, a->id); /* the same entry, one more hold */
    if (!st->a) {
        free(st);
        return;
    }
    if (gsd_pool_submit(app->pool, &st->t, GSD_PRIO_IDLE) != 0)
        save_cancel(&st->t);
}

/* a's model from the data directory (once), and its content hash; with
 * expect (the stored content_hash), files changed since the upload are an
 * error, not another model answered under this id. Under a->mu. */
static gs_err load_model(const gsd_app *app, gsd_asm *a, const char *expect, gs_error *err)
{
    if (!a->mdl) {
        char path[PATH_MAX];
        model_path(app, a->id, path, sizeof path);
        gs_model_limits lim;
        gsd_asm_limits(app, &lim);
        if (gs_model_read_json(path, &lim, &a->mdl, err) != GS_OK)
            return stored_model_error(a, path, err);
        gs_model_hash(a->mdl, a->hash);
    }
    /* the model stays (a reader of the geometry may hold it); the caller
     * fails the assembly, so no solve runs on it */
    if (expect && expect[0] && strcmp(a->hash, expect))
        return gs_errorf(err, GS_ERR_CHECK, "assembly", "the stored model files of assembly %s "
                         "changed since the upload (content hash %s, %s at the upload): delete "
                         "it and upload the model again", a->id, a->hash, expect);
    return GS_OK;
}

/* A model that cannot serve (its files unreadable as a model, or changed
 * since the upload) fails its assembly for good, as a failed precomputation
 * does; a passing I/O or memory shortage does not. */
static void fail_for_good(gsd_app *app, gsd_store *st, gsd_assembly_row *row, const gs_error *e)
{
    if (e->code == GS_ERR_IO || e->code == GS_ERR_NOMEM)
        return;
    row_failed(row, e);
    gs_error ue;
    if (gsd_store_assembly_update(st, row, &ue))
        gsd_log(app, 0, "assembly %s: cannot record its failure: %s", row->id, ue.msg);
    gsd_log(app, 0, "assembly %s failed: %s: %s", row->id, e->field, e->msg);
}

/* The upload's answer when its precomputation could not be recorded: the
 * assembly was deleted meanwhile (404), or the store failed (500). */
static void answer_unrecorded(gsd_req *r, int gone, const gs_error *ue)
{
    if (!r)
        return;
    if (gone)
        gsd_reply_error(r, 404, "not_found", "", "the assembly was deleted");
    else
        gsd_reply_gs_error(r, ue); /* 500, or 507 for a full disk */
    gsd_req_finish(r);
}

static void pre_run(gsd_task *t, gsd_worker *w)
{
    pre_task *pt = (pre_task *)t;
    gsd_app *app = pt->app;
    gsd_assembly_row row;
    int found = 0;
    gs_error e = {0};
    gsd_asm *a = gsd_registry_acquire(app->reg, pt->id);
    gs_err rc = a ? gsd_store_assembly_get(w->st, pt->id, &row, &found, &e)
                  : gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    if (rc == GS_OK && found) {
        pthread_mutex_lock(&a->mu);
        rc = load_model(app, a, row.content_hash, &e);
        int todo = rc == GS_OK && !a->pc;
        /* the blocks are factored in place (never held beside their
         * factors): the model is released from here, before "ready", so no
         * solve has run on it; NULL: no dense block, or no memory to take
         * them (then copied, and released after) */
        double **taken = todo ? gs_model_take_dense(a->mdl, a->hash) : NULL;
        if (todo) { /* begun: the build's first stage (it says so again) */
            atomic_store_explicit(&a->stage, GS_STAGE_FACTOR_K, memory_order_relaxed);
            atomic_store_explicit(&a->pre_t0, gs_now(), memory_order_release);
        }
        pthread_mutex_unlock(&a->mu);
        /* the build runs without the entry lock: connection threads may read
         * the model (geometry) meanwhile; solves wait for status "ready" */
        gs_precomp *pc = NULL;
        if (todo &&
            (rc = build_factors(a, taken, GS_PRECOMP_DEFER_LQ, &row, &pc, &e)) == GS_OK) {
            pthread_mutex_lock(&a->mu);
            a->pc = pc;
            release_blocks(a); /* if not taken above */
            pthread_mutex_unlock(&a->mu);
        }
        free(taken);
        if (rc) {
            row_failed(&row, &e);
            gsd_log(app, 0, "assembly %s: precomputation failed: %s: %s", pt->id, e.field,
                    e.msg);
        } else {
            snprintf(row.status, sizeof row.status, "ready");
            row.ready_at = gsd_unix_now();
            gsd_log(app, 1, "assembly %s ready: n %d, m %d, precomputed in %.2f s", pt->id,
                    row.n, row.m, row.t.total);
        }
        gs_error ue;
        const int unrecorded = gsd_store_assembly_update(w->st, &row, &ue) != GS_OK;
        if (unrecorded)
            gsd_log(app, 0, "assembly %s: cannot record the precomputation: %s", pt->id, ue.msg);
        /* deleted while it precomputed (the row is gone, or going) */
        const int gone = gsd_store_assembly_gone(w->st, pt->id);
        /* dropped before the answer: a client reading the metrics right after
         * its 422 sees the entry gone */
        if (rc) /* nothing will use its model: freed with this task's hold */
            gsd_registry_drop(app->reg, pt->id);
        if (gone || unrecorded)
            answer_unrecorded(pt->waiter, gone, &ue);
        else
            answer_waiter(pt->waiter, &row);
        if (rc == GS_OK && todo && !gone)
            queue_save(app, a);
    } else if (pt->waiter) {
        gsd_reply_error(pt->waiter, 404, "not_found", "", "the assembly was deleted");
        gsd_req_finish(pt->waiter);
    }
    gsd_registry_release(app->reg, a);
    free(pt);
}

static void pre_cancel(gsd_task *t)
{
    pre_task *pt = (pre_task *)t;
    if (pt->waiter) {
        gsd_reply_error(pt->waiter, 503, "unavailable", "",
                        "the server is shutting down; the precomputation resumes at restart");
        gsd_req_finish(pt->waiter);
    }
    free(pt);
}

/* Queue the precomputation of an assembly. If the pool is stopping, the row
 * stays "precomputing" and gsd_asm_resume queues it at the next start; the
 * waiter (if any) is answered 503. */
static gs_err queue_precompute(gsd_app *app, const char *id, gsd_req *waiter, gs_error *err)
{
    pre_task *pt = calloc(1, sizeof *pt);
    if (!pt)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    pt->t.run = pre_run;
    pt->t.cancel = pre_cancel;
    pt->t.exclusive = 1;
    pt->app = app;
    pt->waiter = waiter;
    snprintf(pt->id, sizeof pt->id, "%.18s", id);
    if (gsd_pool_submit(app->pool, &pt->t, GSD_PRIO_BACKGROUND) != 0)
        pre_cancel(&pt->t);
    return GS_OK;
}

gs_err gsd_asm_create(gsd_app *app, gs_model *mdl, gsd_assembly_row *row, gsd_req *waiter,
                      gs_error *err)
{
    gsd_asm *a = gsd_registry_acquire(app->reg, row->id);
    if (!a) {
        gs_model_free(mdl);
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    gsd_asm_install(a, mdl, NULL);
    pthread_mutex_lock(&a->mu);
    snprintf(a->hash, sizeof a->hash, "%s", row->content_hash);
    pthread_mutex_unlock(&a->mu);
    snprintf(row->status, sizeof row->status, "precomputing");
    row->created_at = gsd_unix_now();
    gs_err rc = gsd_store_assembly_insert(app->st, row, err);
    if (rc == GS_OK) {
        atomic_fetch_add(&app->metrics.assemblies_created, 1);
        gsd_upkeep_kick(app);
        if (waiter)
            gsd_req_suspend(waiter);
        rc = queue_precompute(app, row->id, waiter, err);
        if (rc && waiter) { /* no memory for the task: answer here */
            gsd_reply_gs_error(waiter, err);
            gsd_req_finish(waiter);
            rc = GS_OK;
        }
    }
    gsd_registry_release(app->reg, a);
    if (rc)
        gsd_registry_drop(app->reg, row->id);
    return rc;
}

gs_err gsd_asm_ensure(gsd_app *app, gsd_asm *a, gsd_store *st, gs_error *err)
{
    int save = 0; /* factors built here: L_Q and the save to follow */
    pthread_mutex_lock(&a->mu);
    if (a->pc) {
        pthread_mutex_unlock(&a->mu);
        return GS_OK;
    }
    gsd_assembly_row row;
    int found = 0;
    gs_err rc = gsd_store_assembly_get(st, a->id, &row, &found, err);
    if (rc == GS_OK && !found)
        rc = gs_errorf(err, GS_ERR_INVALID, "assembly", "assembly %s was deleted", a->id);
    if (rc == GS_OK && strcmp(row.status, "ready"))
        rc = gs_errorf(err, GS_ERR_INVALID, "assembly", "assembly %s is %s, not ready", a->id,
                       row.status);
    if (rc == GS_OK && (rc = load_model(app, a, row.content_hash, err)) != GS_OK)
        fail_for_good(app, st, &row, err);
    if (rc == GS_OK) {
        char path[PATH_MAX];
        factor_path(app, a->id, path, sizeof path);
        unsigned long long sum = strtoull(row.factor_checksum, NULL, 16);
        gs_error le = {0};
        int loaded = 0;
        if (row.factor_checksum[0]) {
            /* the load checks the model's hash, kept by the release: the
             * blocks are not hashed twice, nor held beside the factors */
            release_blocks(a);
            loaded = gs_precomp_load_ex(a->mdl, path, sum ? sum : 1, GS_PRECOMP_DEFER_SPARSE,
                                        &a->pc, &le) == GS_OK;
        }
        if (!loaded) {
            if (row.factor_checksum[0])
                gsd_log(app, 0, "assembly %s: factors unusable (%s); recomputing from the "
                        "model", a->id, le.msg);
            else /* the daemon stopped before they were saved */
                gsd_log(app, 1, "assembly %s: factors not saved; recomputing from the model",
                        a->id);
            /* as the upload's: L_Q, its check and the save come after, in
             * the save task (an assembly without L_Q, its pairs dependent,
             * still serves the methods that do not read it) */
            rc = blocks_back(app, a, 1, err); /* if released above */
            if (rc == GS_OK)
                rc = build_factors(a, NULL, GS_PRECOMP_DEFER_LQ, &row, &a->pc, err);
            if (rc == GS_OK)
                rc = gsd_store_assembly_update(st, &row, err);
            if (rc == GS_OK) {
                release_blocks(a);
                save = 1;
            }
        } else {
            a->saved = 1; /* under a->mu */
            gsd_log(app, 1, "assembly %s: factors loaded%s", a->id,
                    gs_precomp_has_part_factors(a->pc)
                        ? ""
                        : "; sparse parts factored when a solve needs K (x, primal forms)");
        }
    }
    pthread_mutex_unlock(&a->mu);
    if (save) /* outside the entry lock: the registry's hold takes it */
        queue_save(app, a);
    return rc;
}

gs_err gsd_asm_resume(gsd_app *app, gs_error *err)
{
    gsd_assembly_row *rows = NULL;
    int count = 0;
    gs_err rc = gsd_store_assembly_list(app->st, &rows, &count, err);
    for (int i = 0; rc == GS_OK && i < count; i++)
        if (!strcmp(rows[i].status, "precomputing")) {
            gsd_log(app, 1, "assembly %s: precomputation resumes", rows[i].id);
            rc = queue_precompute(app, rows[i].id, NULL, err);
        }
    free(rows);
    return rc;
}

gs_err gsd_asm_delete(gsd_app *app, const char *id, gs_error *err)
{
    gsd_jobs_cancel_assembly(app, id);
    gsd_job_row *jobs = NULL;
    int n_jobs = 0;
    gs_err rc = gsd_store_job_list(app->st, id, NULL, &jobs, &n_jobs, err);
    if (rc == GS_OK)
        rc = gsd_store_assembly_delete(app->st, id, err);
    char dir[PATH_MAX];
    for (int i = 0; i < n_jobs; i++) {
        if (rc == GS_OK) {
            gsd_path_job(app, jobs[i].id, dir, sizeof dir);
            gsd_rmtree(dir);
            gsd_summary_forget(app->sums, jobs[i].id);
        }
        /* a GET /v1/jobs/{id}?wait=S held on the job is answered now (404
         * once the rows are gone; else the job as the store has it) */
        gsd_jobwait_ended(app, jobs[i].id);
        gsd_job_row_free(&jobs[i]);
    }
    free(jobs);
    if (rc)
        return rc;
    gsd_path_assembly(app, id, dir, sizeof dir);
    gsd_rmtree(dir);
    /* last: a request that read the row before the delete and takes the
     * entry after this finds neither row nor files, loads nothing, and its
     * empty entry goes with its release (dropped first, such an entry could
     * load the files still there and stay, an orphan) */
    gsd_registry_drop(app->reg, id);
    gsd_upkeep_kick(app);
    gsd_log(app, 1, "assembly %s deleted with its %d job%s and their results", id, n_jobs,
            n_jobs == 1 ? "" : "s");
    return GS_OK;
}

gs_err gsd_asm_model(gsd_app *app, gsd_asm *a, gs_error *err)
{
    pthread_mutex_lock(&a->mu);
    gs_err rc = load_model(app, a, NULL, err);
    pthread_mutex_unlock(&a->mu);
    return rc;
}
