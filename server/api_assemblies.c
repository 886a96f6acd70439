/*
 * api_assemblies.c -- POST/GET/DELETE /v1/assemblies[/{id}], geometry, jobs.
 *
 * Upload: a JSON body (inline model) is parsed from memory and also written
 * to a staging directory as model.json; a multipart upload has its "model"
 * part in memory and every other part already streamed into the staging
 * directory, where the model's file references resolve. A valid model's
 * staging directory becomes data/assemblies/<id>/ by one rename, so what is
 * stored is exactly what was uploaded.
 */
#define _GNU_SOURCE
#include "api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assembly.h"
#include "fileio.h"
#include "hash.h"
#include "render.h"

static int write_model_file(gsd_req *r, const char *dir, gs_error *e)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/model.json", dir);
    struct stat sb;
    if (stat(path, &sb) == 0) {
        gs_errorf(e, GS_ERR_DUPLICATE, "model.json",
                  "an uploaded file may not be named model.json (the model part is stored "
                  "under that name)");
        return -1;
    }
    gs_wfile wf;
    if (gs_wfile_open(&wf, path, e) || gs_wfile_write(&wf, r->body.p, r->body.len, e) ||
        gs_wfile_commit(&wf, e)) {
        gs_wfile_abort(&wf);
        return -1;
    }
    return 0;
}

/* Parse the uploaded model; on success *dir is the staging directory to adopt. */
static gs_model *parse_upload(gsd_req *r, char *dir, size_t cap)
{
    gs_error e = {0};
    gs_model_limits lim;
    gsd_asm_limits(r->app, &lim);
    gs_model *mdl = NULL;
    if (r->body_kind == GSD_BODY_JSON && r->body.len) {
        gsd_path_staging(r->app, dir, cap);
        if (mkdir(dir, 0755) != 0) {
            gsd_reply_error(r, 500, "io_error", "", "cannot stage the model: %s", strerror(errno));
            return NULL;
        }
        snprintf(r->stage_dir, sizeof r->stage_dir, "%s", dir); /* removed with the request */
        if (gs_model_parse_json(r->body.p, r->body.len, NULL, &lim, &mdl, &e) == GS_OK &&
            write_model_file(r, dir, &e) != 0) {
            gs_model_free(mdl);
            mdl = NULL;
        }
    } else if (r->body_kind == GSD_BODY_MULTIPART) {
        if (!r->body.len) {
            gsd_reply_error(r, 400, "invalid", "model",
                            "the multipart upload needs a part named \"model\" holding the model "
                            "JSON (curl -F model=@lap.json -F file=@lap.part0.npy ...)");
            return NULL;
        }
        snprintf(dir, cap, "%s", r->stage_dir);
        if (write_model_file(r, dir, &e) == 0) {
            char path[PATH_MAX + 16];
            snprintf(path, sizeof path, "%s/model.json", dir);
            gs_model_read_json(path, &lim, &mdl, &e);
        }
    } else {
        gsd_reply_error(r, 400, "invalid", "body",
                        "POST /v1/assemblies needs a model: a JSON body (application/json) or a "
                        "multipart/form-data upload");
        return NULL;
    }
    if (!mdl) {
        if (r->body_kind == GSD_BODY_MULTIPART) {
            gsd_api_scrub(&e, dir);
            if (e.code == GS_ERR_IO) { /* a referenced file is not among the parts */
                gsd_reply_error(r, 422, gs_err_name(e.code), e.field,
                                "%s (every file the model references must be uploaded as a "
                                "part whose file name is the referenced name, without "
                                "directories)",
                                e.msg);
                return NULL;
            }
        }
        gsd_reply_gs_error(r, &e);
        return NULL;
    }
    if (mdl->n > r->app->o.max_n || mdl->m > r->app->o.max_m) {
        gsd_reply_error(r, 413, "too_large", mdl->n > r->app->o.max_n ? "parts" : "pairs",
                        "the model has n = %d unknowns and m = %d pairs; this server accepts "
                        "n <= %d and m <= %d (gapsimd --max-n / --max-m)",
                        mdl->n, mdl->m, r->app->o.max_n, r->app->o.max_m);
        gs_model_free(mdl);
        return NULL;
    }
    return mdl;
}

static void fill_row(gsd_assembly_row *row, const gs_model *mdl, const char *hash)
{
    memset(row, 0, sizeof *row);
    gsd_new_id('a', row->id);
    snprintf(row->content_hash, sizeof row->content_hash, "%s", hash);
    snprintf(row->name, sizeof row->name, "%s", mdl->name);
    snprintf(row->joint, sizeof row->joint, "%s",
             mdl->joint == GS_JOINT_SANDWICH ? "sandwich" : "simple");
    row->n = mdl->n;
    row->m = mdl->m;
    row->n_parts = mdl->n_parts;
    row->n_nodes = mdl->n_nodes;
    row->n_fast = mdl->n_fast;
}

void gsd_h_asm_create(gsd_req *r)
{
    char stage[PATH_MAX];
    gs_model *mdl = parse_upload(r, stage, sizeof stage);
    if (!mdl)
        return;
    char hash[GS_HASH_HEX];
    gs_model_hash(mdl, hash);
    gs_error e;
    gsd_assembly_row row;
    int found = 0;
    if (gsd_store_assembly_find_hash(r->app->st, hash, &row, &found, &e)) {
        gs_model_free(mdl);
        gsd_api_store_error(r, &e);
        return;
    }
    gs_buf b = {0};
    if (found && !strcmp(row.status, "failed")) {
        /* a failed precomputation is retried: forget the old attempt */
        if (gsd_asm_delete(r->app, row.id, &e)) {
            gs_model_free(mdl);
            gsd_api_store_error(r, &e);
            return;
        }
        found = 0;
    }
    if (found) { /* same content: the existing assembly */
        gs_model_free(mdl);
        gsd_asm_row_json(&row, &b);
        gsd_reply_json(r, 200, &b);
        return;
    }
    fill_row(&row, mdl, hash);
    char dir[PATH_MAX];
    gsd_path_assembly(r->app, row.id, dir, sizeof dir);
    if (rename(stage, dir) != 0) {
        gs_model_free(mdl);
        gsd_reply_error(r, 500, "io_error", "", "cannot store the model: %s", strerror(errno));
        return;
    }
    r->stage_dir[0] = '\0'; /* adopted */
    const char *wait = gsd_query(r, "wait");
    int sync = wait && (!strcmp(wait, "1") || !strcmp(wait, "true"));
    if (gsd_asm_create(r->app, mdl, &row, sync ? r : NULL, &e)) {
        gsd_rmtree(dir);
        gsd_reply_error(r, 503, "unavailable", "", "cannot create the assembly: %s", e.msg);
        return;
    }
    if (!sync) {
        gsd_asm_row_json(&row, &b);
        gsd_reply_json(r, 202, &b);
    }
}

void gsd_h_asm_list(gsd_req *r)
{
    gsd_assembly_row *rows = NULL;
    int count = 0;
    gs_error e;
    if (gsd_store_assembly_list(r->app->st, &rows, &count, &e)) {
        gsd_api_store_error(r, &e);
        return;
    }
    gs_buf b = {0};
    gs_buf_puts(&b, "{\"assemblies\":[");
    for (int i = 0; i < count; i++) {
        if (i)
            gs_buf_puts(&b, ",");
        gsd_asm_row_json(&rows[i], &b);
    }
    gs_buf_puts(&b, "]}");
    free(rows);
    gsd_reply_json(r, 200, &b);
}

void gsd_h_asm_get(gsd_req *r)
{
    gsd_assembly_row row;
    if (!gsd_api_assembly(r, &row))
        return;
    gs_buf b = {0};
    gsd_asm_row_json(&row, &b);
    gsd_reply_json(r, 200, &b);
}

void gsd_h_asm_delete(gsd_req *r)
{
    gsd_assembly_row row;
    if (!gsd_api_assembly(r, &row))
        return;
    gs_error e;
    if (gsd_asm_delete(r->app, r->id, &e)) {
        gsd_api_store_error(r, &e);
        return;
    }
    gs_buf b = {0};
    gsd_reply(r, 204, "application/json", &b);
}

/* Coordinates of each pair's first node, the fastener candidates, the box. */
void gsd_h_asm_geometry(gsd_req *r)
{
    gsd_assembly_row row;
    if (!gsd_api_assembly(r, &row))
        return;
    gsd_asm *a = gsd_registry_acquire(r->app->reg, r->id);
    gs_error e;
    if (!a || gsd_asm_model(r->app, a, &e)) {
        gsd_registry_release(r->app->reg, a);
        gsd_reply_error(r, 500, "io_error", "", "cannot read the model of %s", r->id);
        return;
    }
    const gs_model *mdl = a->mdl;
    gs_buf b = {0};
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    static const char *const axis[3] = {"x", "y", "z"};
    gs_buf_printf(&b, "{\"id\":\"%s\",\"m\":%d,\"units\":\"mm\",\"pairs\":{", r->id, mdl->m);
    for (int d = 0; d < 3; d++) {
        gs_buf_printf(&b, "%s\"%s\":[", d ? "," : "", axis[d]);
        for (int k = 0; k < mdl->m; k++) {
            double v = mdl->nodes[mdl->pairs[k].node[0]].xyz[d];
            lo[d] = v < lo[d] ? v : lo[d];
            hi[d] = v > hi[d] ? v : hi[d];
            if (k)
                gs_buf_puts(&b, ",");
            gs_buf_json_num(&b, v);
        }
        gs_buf_puts(&b, "]");
    }
    gs_buf_puts(&b, ",\"fixed\":[");
    for (int k = 0; k < mdl->m; k++)
        gs_buf_printf(&b, k ? ",%d" : "%d", mdl->pairs[k].node[1] == GS_FIXED);
    gs_buf_puts(&b, "],\"part_i\":[");
    for (int k = 0; k < mdl->m; k++)
        gs_buf_printf(&b, k ? ",%d" : "%d", mdl->nodes[mdl->pairs[k].node[0]].part);
    gs_buf_puts(&b, "],\"part_j\":[");
    for (int k = 0; k < mdl->m; k++) {
        int nj = mdl->pairs[k].node[1];
        gs_buf_printf(&b, k ? ",%d" : "%d", nj == GS_FIXED ? -1 : mdl->nodes[nj].part);
    }
    gs_buf_puts(&b, "]},\"fasteners\":{\"pair\":[");
    for (int i = 0; i < mdl->n_fast; i++)
        gs_buf_printf(&b, i ? ",%d" : "%d", mdl->fast[i].pair);
    gs_buf_puts(&b, "],\"load\":[");
    for (int i = 0; i < mdl->n_fast; i++) {
        if (i)
            gs_buf_puts(&b, ",");
        gs_buf_json_num(&b, mdl->fast[i].load);
    }
    gs_buf_puts(&b, "]},\"bbox\":{\"min\":");
    gs_buf_json_nums(&b, lo, mdl->m ? 3 : 0);
    gs_buf_puts(&b, ",\"max\":");
    gs_buf_json_nums(&b, hi, mdl->m ? 3 : 0);
    gs_buf_puts(&b, "}}");
    gsd_registry_release(r->app->reg, a);
    gsd_reply_json(r, 200, &b);
}

void gsd_h_asm_jobs(gsd_req *r)
{
    gsd_assembly_row row;
    if (gsd_api_assembly(r, &row))
        gsd_api_reply_jobs(r, row.id, NULL);
}
