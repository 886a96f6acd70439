/*
 * cmd_assembly.c -- `gapsim assembly upload|list|show|delete`: models on the
 * server. An upload is the model JSON alone (application/json) when it holds
 * its blocks inline, else multipart/form-data with the JSON as part "model"
 * and one part per referenced file (parts[b].K, f), each under the name the
 * model uses, streamed from disk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "fileio.h"
#include "http.h"
#include "json_parse.h"
#include "model_json.h"
#include "out.h"
#include "progress.h"

static const char group_help[] =
    "usage: gapsim assembly upload MODEL.json [--wait] [-q]\n"
    "       gapsim assembly list\n"
    "       gapsim assembly show ID\n"
    "       gapsim assembly delete ID\n"
    "Assemblies (models with their precomputed factors) on the server; see\n"
    "gapsim assembly COMMAND --help.\n";

/* ---- shared output ---------------------------------------------------------- */

static void print_assembly(const gc_ctx *cx, const cJSON *a)
{
    (void)cx;
    char t[64];
    gc_kv("id", "%s", gc_jstr(a, "id", "-"));
    gc_kv("name", "%s", gc_jstr(a, "name", "-"));
    gc_kv("joint", "%s", gc_jstr(a, "joint", "-"));
    gc_kv("status", "%s", gc_jstr(a, "status", "-"));
    gc_kv("n", "%d unknowns", gc_jint(a, "n", 0));
    gc_kv("m", "%d contact pairs", gc_jint(a, "m", 0));
    gc_kv("parts", "%d", gc_jint(a, "n_parts", 0));
    gc_kv("nodes", "%d", gc_jint(a, "n_nodes", 0));
    gc_kv("fasteners", "%d candidates", gc_jint(a, "n_fasteners", 0));
    gc_kv("content_hash", "%s", gc_jstr(a, "content_hash", "-"));
    gc_kv("created", "%s", gc_fmt_time(gc_jnum(a, "created_at", 0), t, sizeof t));
    gc_kv("ready", "%s", gc_fmt_time(gc_jnum(a, "ready_at", 0), t, sizeof t));
    const cJSON *pg = cJSON_GetObjectItemCaseSensitive(a, "progress");
    if (pg)
        gc_kv("progress", "%s, %s", gc_jstr(pg, "stage", "-"),
              gs_fmt_duration(gc_jnum(pg, "elapsed_s", 0), t, sizeof t));
    const cJSON *pc = cJSON_GetObjectItemCaseSensitive(a, "precompute");
    if (pc) {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(pc, "times_s");
        gc_kv("precompute", "%s (factor K %.3f s, build Q %.3f s, factor Q %.3f s)",
              gs_fmt_duration(gc_jnum(ts, "total", 0), t, sizeof t), gc_jnum(ts, "factor_K", 0),
              gc_jnum(ts, "build_Q", 0), gc_jnum(ts, "factor_Q", 0));
        if (gc_jis_num(pc, "cond_K"))
            gc_kv("cond_K", "%.3e", gc_jnum(pc, "cond_K", 0));
        if (gc_jis_num(pc, "cond_Q"))
            gc_kv("cond_Q", "%.3e", gc_jnum(pc, "cond_Q", 0));
    }
    const cJSON *lq = pc ? cJSON_GetObjectItemCaseSensitive(pc, "lq_error") : NULL;
    if (cJSON_IsObject(lq))
        gc_kv("L_Q", "none, %s at %s: %s (GI, Lemke, IPM dual and auto solve; GI dual, NPM "
              "and the primal IPM are refused)", gc_jstr(lq, "code", "-"),
              gc_jstr(lq, "field", "-"), gc_jstr(lq, "message", "-"));
    /* only what the JSON says: factors_saved false is also an assembly
     * after a restart, held nowhere until its first solve builds it again */
    if (cJSON_GetObjectItemCaseSensitive(a, "factors_saved"))
        gc_kv("factors", "%s", gc_jbool(a, "factors_saved", 0)
                                   ? "saved in the data directory"
                               : cJSON_IsObject(lq)
                                   ? "not saved (a saved file holds L_Q): the first solve after "
                                     "each start of the daemon computes them again"
                                   : "not saved yet: saved once the workers are idle; if the "
                                     "daemon stops first, the first solve after the restart "
                                     "computes them again");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(a, "error");
    if (err)
        gc_kv("error", "%s at %s: %s", gc_jstr(err, "code", "-"), gc_jstr(err, "field", "-"),
              gc_jstr(err, "message", "-"));
}

/* ---- upload ------------------------------------------------------------------- */

typedef struct {
    gc_part *parts;
    char **paths; /* owned */
    int n, cap;
} part_list;

/* Room for one more part; -1 (reported) out of memory. */
static int pl_grow(part_list *pl, const char *prog)
{
    if (pl->n < pl->cap)
        return 0;
    int cap = pl->cap ? 2 * pl->cap : 8;
    gc_part *p = realloc(pl->parts, sizeof *p * (size_t)cap);
    if (p)
        pl->parts = p;
    char **q = realloc(pl->paths, sizeof *q * (size_t)cap);
    if (q)
        pl->paths = q;
    if (!p || !q) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    pl->cap = cap;
    return 0;
}

/* Part 1.. : the referenced file dir/ref, sent under the name ref. */
static int add_ref(part_list *pl, const char *prog, const char *dir, const char *ref,
                   const char *field)
{
    for (int i = 1; i < pl->n; i++)
        if (!strcmp(pl->parts[i].filename, ref))
            return GC_OK; /* the same file named twice */
    if (pl_grow(pl, prog))
        return GC_EFILE;
    size_t len = strlen(dir) + strlen(ref) + 2;
    char *path = malloc(len);
    if (!path) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return GC_EFILE;
    }
    snprintf(path, len, "%s/%s", dir, ref);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s (the model's %s): cannot open: ", prog, path, field);
        perror(NULL);
        free(path);
        return GC_EFILE;
    }
    fclose(f);
    pl->paths[pl->n] = path;
    /* the name sent is ref, kept as the tail of path (the model tree goes away) */
    pl->parts[pl->n] = (gc_part){.name = "file", .filename = path + strlen(dir) + 1, .path = path,
                                 .type = "application/octet-stream"};
    pl->n++;
    return GC_OK;
}

/* The file a model field names: "name" or {"file": "name", "format": ...}
 * (docs/formats.md); NULL when the data is inline. */
static const char *ref_file(const cJSON *v)
{
    const cJSON *f = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "file") : v;
    return cJSON_IsString(f) ? f->valuestring : NULL;
}

/* The file references of a model (parts[b].K, f) as upload parts. */
static int collect_refs(part_list *pl, const char *prog, const char *dir, const cJSON *model)
{
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(model, "parts");
    int b = 0, rc = GC_OK;
    const cJSON *p;
    cJSON_ArrayForEach(p, parts)
    {
        const char *K = ref_file(cJSON_GetObjectItemCaseSensitive(p, "K"));
        if (rc == GC_OK && K) {
            char field[32];
            snprintf(field, sizeof field, "parts[%d].K", b);
            rc = add_ref(pl, prog, dir, K, field);
        }
        b++;
    }
    const char *f = ref_file(cJSON_GetObjectItemCaseSensitive(model, "f"));
    if (rc == GC_OK && f)
        rc = add_ref(pl, prog, dir, f, "f");
    return rc;
}

static void assembly_path(char *buf, size_t cap, const char *id);

/* --wait: follow the precomputation of the assembly *ans (the upload's
 * answer) until it ends, polling its GET every 0.25 s, a line on stderr at
 * each stage (progress.stage) unless quiet; *ans and *raw become the last
 * answer. A failed precomputation: its error on stderr, GC_ESERVER. */
static int wait_precompute(gc_ctx *cx, const char *prog, int quiet, cJSON **ans, gc_buf *raw)
{
    char path[512], id[64], last[32] = "", t[64];
    snprintf(id, sizeof id, "%s", gc_jstr(*ans, "id", ""));
    assembly_path(path, sizeof path, id);
    while (!strcmp(gc_jstr(*ans, "status", ""), "precomputing")) {
        const cJSON *pg = cJSON_GetObjectItemCaseSensitive(*ans, "progress");
        const char *stage = gc_jstr(pg, "stage", "");
        if (!quiet && stage[0] && strcmp(stage, last)) {
            fprintf(stderr, "%s: %s precomputing: %s (%s)\n", prog, id, stage,
                    gs_fmt_duration(gc_jnum(pg, "elapsed_s", 0), t, sizeof t));
            snprintf(last, sizeof last, "%s", stage);
        }
        gc_sleep(0.25);
        cJSON *next = NULL;
        gc_buf b = {0};
        long status = 0;
        gc_req rq = {.method = "GET", .path = path, .status = &status};
        const int rc = gc_call_json(cx, prog, &rq, &next, &b);
        if (rc == GC_ESERVER && status == 404) {
            fprintf(stderr, "%s: stopped waiting: assembly %s was deleted on the server\n", prog,
                    id);
            return rc;
        }
        if (rc != GC_OK) {
            fprintf(stderr, "%s: stopped waiting; the precomputation goes on on the server: "
                            "gapsim assembly show %s\n", prog, id);
            return rc;
        }
        cJSON_Delete(*ans);
        gc_buf_free(raw);
        *ans = next;
        *raw = b;
    }
    if (strcmp(gc_jstr(*ans, "status", ""), "failed"))
        return GC_OK;
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(*ans, "error");
    fprintf(stderr, "%s: error %s at %s: %s (the precomputation of %s failed)\n", prog,
            gc_jstr(err, "code", "-"), gc_jstr(err, "field", "-"), gc_jstr(err, "message", "-"),
            id);
    return GC_ESERVER;
}

static int cmd_upload(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {
        "gapsim assembly upload", 
        "Upload a gapsim model (docs/formats.md). A model naming .npy/.mtx files\n"
        "(parts[b].K, f) is sent as multipart/form-data with those files, found next\n"
        "to MODEL.json; an inline model is sent as application/json. The server\n"
        "precomputes the factors in the background; uploading the same content\n"
        "again answers the existing assembly.\n"
        "options:\n"
        "  --wait     answer when the precomputation is done (status ready, or exit 1\n"
        "             with its error), a line on stderr at each of its stages\n"
        "  -q, --quiet  print only the assembly id\n",
        "gapsim assembly upload MODEL.json [--wait] [-q] [--server URL] [--json]", 1, 1};
    int wait = 0, quiet = 0;
    const gc_opt opts[] = {{"--wait", NULL, NULL, &wait}, {"--quiet", "-q", NULL, &quiet}, {0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    const char *path = pos[0];
    char *text = NULL;
    size_t len = 0;
    gs_error e;
    if (gs_file_read_all(path, GS_MODEL_JSON_MAX_BYTES, &text, &len, &e)) {
        fprintf(stderr, "%s: %s\n", cmd.prog, e.msg);
        return GC_EFILE;
    }
    size_t at = 0;
    int trailing = 0;
    cJSON *model = gs_json_parse(text, len, &at, &trailing);
    if (!model) {
        fprintf(stderr, "%s: %s: %s at byte %zu\n", cmd.prog, path,
                trailing ? "unexpected data after the JSON value" : "not valid JSON", at);
        free(text);
        return GC_EFILE;
    }
    /* directory of the model: where its references resolve */
    char *dir = strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = '\0';
    const char *base = !dir ? "." : slash ? (dir[0] ? dir : "/") : ".";
    part_list pl = {0};
    rc = dir && pl_grow(&pl, cmd.prog) == 0 ? GC_OK : GC_EFILE;
    if (rc == GC_OK) { /* part 0: the model itself */
        pl.paths[0] = NULL;
        pl.parts[0] = (gc_part){.name = "model", .filename = "model.json", .data = text,
                                .len = len, .type = "application/json"};
        pl.n = 1;
        rc = collect_refs(&pl, cmd.prog, base, model);
    }
    cJSON_Delete(model);
    cJSON *ans = NULL;
    gc_buf raw = {0};
    if (rc == GC_OK) {
        gc_req rq = {.method = "POST", .path = "/v1/assemblies"};
        if (pl.n > 1) {
            rq.parts = pl.parts;
            rq.n_parts = pl.n;
        } else {
            rq.content_type = "application/json";
            rq.body = text;
            rq.body_len = len;
        }
        rc = gc_call_json(cx, cmd.prog, &rq, &ans, &raw);
        if (rc == GC_OK && !cx->json && gc_jstr(ans, "notice", NULL))
            fprintf(stderr, "%s: %s\n", cmd.prog, gc_jstr(ans, "notice", ""));
        if (rc == GC_OK && wait && (rc = wait_precompute(cx, cmd.prog, quiet, &ans, &raw)) ==
                                       GC_ESERVER && cx->json)
            gc_print_body(&raw); /* the failed assembly, as an error answer's body is */
    }
    if (rc == GC_OK) {
        if (cx->json)
            gc_print_body(&raw);
        else if (quiet)
            printf("%s\n", gc_jstr(ans, "id", ""));
        else
            print_assembly(cx, ans);
    }
    gc_buf_free(&raw);
    cJSON_Delete(ans);
    for (int i = 0; i < pl.n; i++)
        free(pl.paths[i]);
    free(pl.paths);
    free(pl.parts);
    free(dir);
    free(text);
    return rc;
}

/* ---- list / show / delete -------------------------------------------------------- */

/* "/v1/assemblies/ID" with ID URL-escaped. */
static void assembly_path(char *buf, size_t cap, const char *id)
{
    char *esc = gc_escape(id);
    snprintf(buf, cap, "/v1/assemblies/%s", esc ? esc : "");
    free(esc);
}

static void print_list(const gc_ctx *cx, const cJSON *ans)
{
    (void)cx;
    printf("%-18s  %-11s %7s %6s %5s  %-20s %s\n", "ID", "STATUS", "N", "M", "FAST", "CREATED",
           "NAME");
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ans, "assemblies"))
    {
        char t[64];
        printf("%-18s  %-11s %7d %6d %5d  %-20.19s %s\n", gc_jstr(a, "id", "-"),
               gc_jstr(a, "status", "-"), gc_jint(a, "n", 0), gc_jint(a, "m", 0),
               gc_jint(a, "n_fasteners", 0), gc_fmt_time(gc_jnum(a, "created_at", 0), t, sizeof t),
               gc_jstr(a, "name", "-"));
    }
}

static int cmd_list(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim assembly list",
                        "List the server's assemblies: id, status, sizes, name, creation time.\n",
                        "gapsim assembly list [--server URL] [--json]", 0, 0};
    const gc_opt opts[] = {{0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    gc_req rq = {.method = "GET", .path = "/v1/assemblies"};
    return gc_call_print(cx, cmd.prog, &rq, print_list);
}

static int cmd_show(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim assembly show",
                        "Show one assembly: sizes, status, precomputation times and condition\n"
                        "numbers (or the precomputation's error).\n",
                        "gapsim assembly show ID [--server URL] [--json]", 1, 1};
    const gc_opt opts[] = {{0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (gc_arg_id(cmd.prog, "ID", pos[0]))
        return GC_EUSAGE;
    char path[512];
    assembly_path(path, sizeof path, pos[0]);
    gc_req rq = {.method = "GET", .path = path};
    return gc_call_print(cx, cmd.prog, &rq, print_assembly);
}

static int cmd_delete(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim assembly delete",
                        "Delete an assembly with its files, jobs and results.\n",
                        "gapsim assembly delete ID [--server URL] [--json]", 1, 1};
    const gc_opt opts[] = {{0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (gc_arg_id(cmd.prog, "ID", pos[0]))
        return GC_EUSAGE;
    char path[512];
    assembly_path(path, sizeof path, pos[0]);
    cJSON *ans = NULL;
    gc_req rq = {.method = "DELETE", .path = path};
    rc = gc_call_json(cx, cmd.prog, &rq, &ans, NULL);
    if (rc == GC_OK) {
        /* 204, no body: --json prints a small object of its own */
        if (cx->json) {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddStringToObject(o, "id", pos[0]) ||
                !cJSON_AddTrueToObject(o, "deleted")) {
                cJSON_Delete(o);
                o = NULL;
            }
            if (gc_print_obj(stdout, o))
                rc = GC_EFILE;
        } else {
            printf("deleted %s\n", pos[0]);
        }
    }
    cJSON_Delete(ans);
    return rc;
}

int gc_cmd_assembly(gc_ctx *cx, int argc, char **argv)
{
    int at = 0, rc = gc_group_command(cx, "gapsim assembly", group_help, argc, argv, &at);
    if (rc >= 0)
        return rc;
    const char *sub = argv[at];
    if (!strcmp(sub, "upload"))
        return cmd_upload(cx, argc - at, argv + at);
    if (!strcmp(sub, "list") || !strcmp(sub, "ls"))
        return cmd_list(cx, argc - at, argv + at);
    if (!strcmp(sub, "show"))
        return cmd_show(cx, argc - at, argv + at);
    if (!strcmp(sub, "delete") || !strcmp(sub, "rm"))
        return cmd_delete(cx, argc - at, argv + at);
    fprintf(stderr, "gapsim assembly: unknown command '%s' (see gapsim assembly --help)\n", sub);
    return GC_EUSAGE;
}
