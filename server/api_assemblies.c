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

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "upload_archive.h"
#include "assembly.h"
#include "fileio.h"
#include "hash.h"
#include "precompute.h"
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

/* The model file of an unpacked archive in root: the "model" query (a name at
 * the top of the folder), else model.json, else the only top-level .json.
 * 0 with name filled, or -1 after replying. */
static int archive_model_name(gsd_req *r, const char *root, char *name, size_t cap)
{
    const char *q = gsd_query(r, "model");
    char path[PATH_MAX + 300];
    struct stat st;
    if (q) {
        if (!*q || strchr(q, '/') || q[0] == '.' || strlen(q) >= cap) {
            gsd_reply_bad_query(r, "model", "the model query names a .json file at the top of "
                                "the archived folder (no '/', not hidden)");
            return -1;
        }
        snprintf(name, cap, "%s", q);
    } else {
        snprintf(name, cap, "model.json");
        snprintf(path, sizeof path, "%s/model.json", root);
        if (lstat(path, &st) != 0) { /* the only .json at the top */
            DIR *d = opendir(root);
            int n = 0;
            for (struct dirent *de; d && (de = readdir(d));) {
                size_t l = strlen(de->d_name);
                if (l > 5 && !strcmp(de->d_name + l - 5, ".json") && l < cap && n++ == 0)
                    snprintf(name, cap, "%s", de->d_name);
            }
            if (d)
                closedir(d);
            if (n != 1) {
                gsd_reply_error(r, 422, "invalid", "model",
                                "the archive has %s .json file at its top: name the model with "
                                "?model=<name>.json", n ? "more than one" : "no");
                return -1;
            }
        }
    }
    snprintf(path, sizeof path, "%s/%s", root, name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        gsd_reply_error(r, 422, "invalid", "model", "the archive has no file '%s' at the top of "
                        "the model folder", name);
        return -1;
    }
    return 0;
}

/* Unpack an archive body into a staging directory; *dir is the folder that
 * holds model.json. 0, or -1 after replying. */
static int stage_archive(gsd_req *r, char *dir, size_t cap)
{
    char tree[PATH_MAX], root[PATH_MAX], name[128], from[PATH_MAX + 160], to[PATH_MAX + 16];
    gsd_path_staging(r->app, tree, sizeof tree);
    if (mkdir(tree, 0755) != 0) {
        gsd_reply_io_error(r, errno, "cannot stage the model");
        return -1;
    }
    snprintf(r->stage_dir, sizeof r->stage_dir, "%s", tree); /* removed with the request */
    gsd_archive_error ae;
    if (gsd_archive_extract(r->file_path, tree, (size_t)r->app->o.max_archive_entries,
                            r->app->o.max_upload, &ae) != 0) {
        gsd_reply_error(r, ae.http, ae.code, "body", "%s", ae.msg);
        return -1;
    }
    gsd_archive_root(tree, root, sizeof root);
    if (archive_model_name(r, root, name, sizeof name) != 0)
        return -1;
    snprintf(from, sizeof from, "%s/%s", root, name);
    snprintf(to, sizeof to, "%s/model.json", root);
    if (strcmp(name, "model.json") != 0) {
        struct stat st;
        if (lstat(to, &st) == 0) {
            gsd_reply_error(r, 422, "duplicate", "model", "the archive holds both model.json and "
                            "the model '%s': model.json is the name the model is stored under",
                            name);
            return -1;
        }
        if (rename(from, to) != 0) {
            gsd_reply_io_error(r, errno, "cannot stage the model");
            return -1;
        }
    }
    if (strcmp(root, tree) != 0) { /* adopt the folder, drop its wrapper */
        gsd_path_staging(r->app, dir, cap);
        if (rename(root, dir) != 0) {
            gsd_reply_io_error(r, errno, "cannot stage the model");
            return -1;
        }
        gsd_rmtree(tree);
        snprintf(r->stage_dir, sizeof r->stage_dir, "%s", dir);
    } else {
        snprintf(dir, cap, "%s", tree);
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
            gsd_reply_io_error(r, errno, "cannot stage the model");
            return NULL;
        }
        snprintf(r->stage_dir, sizeof r->stage_dir, "%s", dir); /* removed with the request */
        if (gs_model_parse_json(r->body.p, r->body.len, NULL, &lim, &mdl, &e) == GS_OK &&
            write_model_file(r, dir, &e) != 0) {
            gs_model_free(mdl);
            mdl = NULL;
        } else if (!mdl && e.code == GS_ERR_FORMAT && !e.field[0]) {
            /* not JSON, or not an object: the body is at fault (file
             * references are refused here, so no other file is) */
            snprintf(e.field, sizeof e.field, "body");
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
    } else if (r->body_kind == GSD_BODY_ARCHIVE) {
        if (stage_archive(r, dir, cap) != 0)
            return NULL;
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/model.json", dir);
        gs_model_read_json(path, &lim, &mdl, &e);
    } else {
        gsd_reply_error(r, 400, "invalid", "body",
                        "POST /v1/assemblies needs a model: a JSON body (application/json), a "
                        "multipart/form-data upload or an archive of the model folder "
                        "(application/x-tar, application/gzip, application/zip)");
        return NULL;
    }
    if (!mdl) {
        if (r->body_kind == GSD_BODY_MULTIPART || r->body_kind == GSD_BODY_ARCHIVE) {
            gsd_api_scrub(&e, dir);
            if (e.code == GS_ERR_IO) { /* a referenced file is not among the parts */
                gsd_reply_error(r, 422, gs_err_name(e.code), e.field, "%s (%s)", e.msg,
                                r->body_kind == GSD_BODY_ARCHIVE
                                    ? "every file the model references must be in the archive, "
                                      "at its path relative to the model"
                                    : "every file the model references must be uploaded as a "
                                      "part whose file name is the referenced name, without "
                                      "directories; upload a .tar or .zip of the folder for "
                                      "subdirectories");
                return NULL;
            }
        }
        gsd_reply_gs_error(r, &e);
        return NULL;
    }
    long long dense_n = 0, fe_dofs = 0; /* condensed blocks; whole-mesh sparse parts */
    for (int b = 0; b < mdl->n_parts; b++)
        *(mdl->parts[b].Ksp ? &fe_dofs : &dense_n) += mdl->parts[b].ndof;
    if (dense_n > r->app->o.max_n || mdl->m > r->app->o.max_m) {
        gsd_reply_error(r, 413, "too_large", dense_n > r->app->o.max_n ? "parts" : "pairs",
                        "the model has n = %lld unknowns in dense blocks and m = %d pairs; this "
                        "server accepts n <= %d and m <= %d (gapsimd --max-n / --max-m)",
                        dense_n, mdl->m, r->app->o.max_n, r->app->o.max_m);
        gs_model_free(mdl);
        return NULL;
    }
    if (fe_dofs > r->app->o.max_fe_dofs) {
        gsd_reply_error(r, 413, "too_large", "parts",
                        "the model's sparse parts have %lld DOFs; this server accepts at most "
                        "%lld (gapsimd --max-fe-dofs)", fe_dofs, r->app->o.max_fe_dofs);
        gs_model_free(mdl);
        return NULL;
    }
    /* what it will hold once precomputed: refused now rather than found
     * out by the kernel's OOM killer in the middle of the precomputation */
    const size_t need = gs_model_bytes(mdl) + gs_precomp_bytes_ahead(mdl);
    const long long budget = r->app->o.max_loaded_mb;
    if (budget > 0 && need > (size_t)budget << 20) {
        gsd_reply_error(r, 413, "too_large", "parts",
                        "the assembly would take %.0f MiB in memory (its blocks%s, their "
                        "factors, Q and L_Q: m = %d pairs), more than this server's "
                        "--max-loaded-mb %lld", (double)need / 1048576.0,
                        fe_dofs ? " and sparse matrices, the sparse factors not counted" : "",
                        mdl->m, budget);
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

/* The first part whose name differs between the existing assembly id's
 * model and mdl (*p = -1 when none, or when that model cannot be read:
 * nothing to say then); the count of such parts. */
static int parts_renamed(gsd_app *app, const char *id, const gs_model *mdl, int *p,
                         char old[64])
{
    int n = 0;
    *p = -1;
    gs_error e;
    gsd_asm *a = gsd_registry_acquire(app->reg, id);
    const gs_model *have = a && gsd_asm_model(app, a, &e) == GS_OK ? gsd_asm_mdl(a) : NULL;
    /* same content: the same parts, in the same order */
    for (int b = 0; have && b < have->n_parts && b < mdl->n_parts; b++)
        if (strcmp(have->parts[b].name, mdl->parts[b].name) && n++ == 0) {
            *p = b;
            snprintf(old, 64, "%s", have->parts[b].name);
        }
    gsd_registry_release(app->reg, a);
    return n;
}

/* The notice of an upload answered by the existing assembly row (same
 * content): names are labels, left out of the content hash, so a new model
 * name or new part names do not make another assembly; say which are
 * ignored (the part names label the interfaces of every export). */
static void upload_notice(gsd_app *app, const gsd_assembly_row *row, const gs_model *mdl,
                          char *msg, size_t cap)
{
    char old[64];
    int p, n = parts_renamed(app, row->id, mdl, &p, old);
    int len;
    if (strcmp(row->name, mdl->name))
        len = snprintf(msg, cap,
                       "same content as assembly %s, uploaded as \"%s\"; this upload is named "
                       "\"%s\". Names are labels, not content: the existing assembly is used "
                       "(its name is kept)",
                       row->id, row->name, mdl->name);
    else
        len = snprintf(msg, cap, "same content as assembly %s: the existing assembly is used",
                       row->id);
    if (n > 0 && len > 0 && (size_t)len < cap)
        snprintf(msg + len, cap - (size_t)len,
                 "; the part names differ (%d of %d parts, first part %d: \"%s\" there, \"%s\" "
                 "in this upload): the existing assembly keeps its part names, which label the "
                 "interfaces of its exports",
                 n, mdl->n_parts, p, old, mdl->parts[p].name);
}

/* ?wait= (1 or true: answer when the precomputation has ended; 0 or false,
 * or none: at once) into *sync, and ?model= only with an archive body (the
 * other bodies name no model file). 0 after answering 422. */
static int upload_query(gsd_req *r, int *sync)
{
    static const char *const waits[] = {"0", "false", "1", "true"};
    int w;
    if (!gsd_api_query_enum(r, "wait", waits, 4, 0, &w))
        return 0;
    *sync = w >= 2;
    if (r->body_kind != GSD_BODY_ARCHIVE && gsd_query(r, "model")) {
        gsd_reply_bad_query(r, "model", "model names the model file of an archive body; this "
                            "upload's model is its %s", r->body_kind == GSD_BODY_MULTIPART
                                                            ? "\"model\" part" : "body");
        return 0;
    }
    return 1;
}

void gsd_h_asm_create(gsd_req *r)
{
    char stage[PATH_MAX];
    int sync;
    if (!upload_query(r, &sync) || !gsd_api_room(r))
        return;
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
    if (found && !strcmp(row.status, "failed") && row.ready_at > 0) {
        /* failed after it served (its stored model unreadable by this
         * release, changed on disk, L_Q failing its check): its jobs and
         * results stay, under its id; the upload is a new assembly */
        gsd_log(r->app, 1, "assembly %s (failed: %s) keeps its jobs and results; an upload of "
                "the same content makes a new assembly", row.id, row.err_msg);
        found = 0;
    } else if (found && !strcmp(row.status, "failed")) {
        /* a failed precomputation is retried: forget the old attempt,
         * which never served */
        if (gsd_asm_delete(r->app, row.id, &e)) {
            gs_model_free(mdl);
            gsd_api_store_error(r, &e);
            return;
        }
        found = 0;
    }
    if (found) { /* same content: the existing assembly, and say so */
        gsd_asm_row_json_live(r->app, &row, &b);
        if (b.len && b.p[b.len - 1] == '}')
            b.len--; /* reopen the object for the notice */
        gs_buf_puts(&b, ",\"existing\":true,\"notice\":");
        char msg[1024];
        upload_notice(r->app, &row, mdl, msg, sizeof msg);
        gs_buf_json_str(&b, msg);
        gs_buf_puts(&b, "}");
        gs_model_free(mdl);
        gsd_reply_json(r, 200, &b);
        return;
    }
    fill_row(&row, mdl, hash);
    char dir[PATH_MAX];
    gsd_path_assembly(r->app, row.id, dir, sizeof dir);
    if (rename(stage, dir) != 0) {
        gs_model_free(mdl);
        gsd_reply_io_error(r, errno, "cannot store the model");
        return;
    }
    r->stage_dir[0] = '\0'; /* adopted */
    if (gsd_asm_create(r->app, mdl, &row, sync ? r : NULL, &e)) {
        gsd_rmtree(dir);
        gsd_reply_error(r, 503, "unavailable", "", "cannot create the assembly: %s", e.msg);
        return;
    }
    if (!sync) {
        gsd_asm_row_json_live(r->app, &row, &b);
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
        gsd_asm_row_json_live(r->app, &rows[i], &b);
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
    gsd_asm_row_json_live(r->app, &row, &b);
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

/* Coordinates of each pair's first node, the fastener candidates, the part
 * names (part_i / part_j index them), the box. */
void gsd_h_asm_geometry(gsd_req *r)
{
    gsd_assembly_row row;
    if (!gsd_api_assembly(r, &row))
        return;
    gsd_asm *a = gsd_registry_acquire(r->app->reg, r->id);
    gs_error e = {0};
    if (!a)
        gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory");
    if (!a || gsd_asm_model(r->app, a, &e)) {
        gsd_registry_release(r->app->reg, a);
        gsd_api_model_unreadable(r, r->id, &e);
        return;
    }
    const gs_model *mdl = gsd_asm_mdl(a);
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
    gs_buf_puts(&b, "]},\"parts\":[");
    for (int i = 0; i < mdl->n_parts; i++) {
        if (i)
            gs_buf_puts(&b, ",");
        gs_buf_json_str(&b, mdl->parts[i].name);
    }
    gs_buf_puts(&b, "],\"bbox\":{\"min\":");
    gs_buf_json_nums(&b, lo, mdl->m ? 3 : 0);
    gs_buf_puts(&b, ",\"max\":");
    gs_buf_json_nums(&b, hi, mdl->m ? 3 : 0);
    gs_buf_puts(&b, "}}");
    gsd_registry_release(r->app->reg, a);
    if (!strcmp(row.status, "failed")) /* nothing else reads its model: not kept */
        gsd_registry_drop(r->app->reg, r->id);
    gsd_reply_json(r, 200, &b);
}

void gsd_h_asm_jobs(gsd_req *r)
{
    gsd_assembly_row row;
    if (gsd_api_assembly(r, &row))
        gsd_api_reply_jobs(r, row.id); /* the filters of GET /v1/jobs?assembly= */
}
