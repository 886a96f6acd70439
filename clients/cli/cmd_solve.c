/*
 * cmd_solve.c -- `gapsim solve`: one contact-QP solve of a gap vector on an
 * assembly (POST /v1/assemblies/{id}/solve). The gap comes from a row of a
 * .npy cloud (--gaps, --row) or a JSON file (--g-json: an array of m numbers
 * or an object with "g"); -o writes a result vector (w, lambda or x) as .npy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "fileio.h"
#include "http.h"
#include "json_parse.h"
#include "npyio.h"
#include "out.h"
#include "progress.h"
#include "reqopts.h"

static const char help[] =
    "Solve one gap vector on an assembly and print the result (status, solver,\n"
    "contacts, iterations, time, largest residual gap, KKT check).\n"
    "gap (one of):\n"
    "  --gaps G.npy       a k x m (or m) float64 array; --row K picks row K (default 0)\n"
    "  --g-json FILE      a JSON array of m numbers, or an object {\"g\": [...]}; - = stdin\n"
    "options:\n"
    "  --assembly ID      the assembly (required)\n" GC_SOLVE_OPT_HELP
    "  --warm-start RID   start from a previous result r_... of this assembly\n"
    "  -o, --out FILE     write the result vector as a 1-D .npy (default field w)\n"
    "  --field F          w (residual gaps, mm), lambda (contact forces, N) or x\n"
    "                     (displacements; asked from the server only then)\n";

/* The gap vector of a JSON file: [..] or {"g": [..]}. */
static int read_g_json(const char *prog, const char *path, double **g, int *m)
{
    char *text = NULL;
    size_t len = 0;
    gs_error e;
    if (!strcmp(path, "-")) {
        gc_buf b = {0};
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
            if (gc_buf_add(&b, chunk, n)) {
                gc_buf_free(&b);
                fprintf(stderr, "%s: out of memory\n", prog);
                return GC_EFILE;
            }
        text = b.p ? b.p : calloc(1, 1);
        len = b.len;
    } else if (gs_file_read_all(path, (size_t)1 << 30, &text, &len, &e)) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return GC_EFILE;
    }
    size_t at = 0;
    cJSON *root = gs_json_parse(text, len, &at, NULL);
    free(text);
    const cJSON *arr = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "g") : root;
    int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    if (!root || n == 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path,
                !root ? "not valid JSON" : "expected an array of numbers or {\"g\": [...]}");
        cJSON_Delete(root);
        return GC_EFILE;
    }
    double *v = malloc(sizeof(double) * (size_t)n);
    int k = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, arr)
    {
        if (!v || !cJSON_IsNumber(x)) {
            fprintf(stderr, "%s: %s: g[%d] is not a number\n", prog, path, k);
            free(v);
            cJSON_Delete(root);
            return GC_EFILE;
        }
        v[k++] = x->valuedouble;
    }
    cJSON_Delete(root);
    *g = v;
    *m = n;
    return GC_OK;
}

/* The result's lines; asked: the --solver given (NULL: none), named when
 * the cache answered with another method's result. */
static void print_result(const cJSON *r, const char *asked)
{
    char t[64];
    gc_kv("result", "%s", gc_jstr(r, "id", "-"));
    gc_kv("status", "%s", gc_jstr(r, "status", "-"));
    gc_kv("solver", "%s%s", gc_jstr(r, "solver", "-"), gc_jbool(r, "auto", 0) ? " (auto)" : "");
    gc_kv("formulation", "%s", gc_jstr(r, "formulation", "-"));
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "w");
    gc_kv("contacts", "%d of %d pairs", gc_jint(r, "n_act", 0),
          cJSON_IsArray(w) ? cJSON_GetArraySize(w) : 0);
    gc_kv("iterations", "%d (cg %d)", gc_jint(r, "iterations", 0), gc_jint(r, "cg_iterations", 0));
    gc_kv("time", "%s", gs_fmt_duration(1e-3 * gc_jnum(r, "time_ms", 0), t, sizeof t));
    if (gc_jis_num(r, "max_residual"))
        gc_kv("max_residual", "%.6g mm", gc_jnum(r, "max_residual", 0));
    const cJSON *kkt = cJSON_GetObjectItemCaseSensitive(r, "kkt");
    if (kkt)
        gc_kv("kkt", "%s (primal %.2e, dual %.2e, complementarity %.2e)",
              gc_jbool(kkt, "pass", 0) ? "pass" : "FAIL", gc_jnum(kkt, "primal_infeas", 0),
              gc_jnum(kkt, "dual_infeas", 0), gc_jnum(kkt, "complementarity", 0));
    gc_kv("warm_start_used", "%s", gc_jbool(r, "warm_start_used", 0) ? "yes" : "no");
    if (gc_jbool(r, "crossover", 0))
        gc_kv("crossover", "yes (the method's own loop did not finish; GI relative did)");
    const char *by = gc_jstr(r, "solver", "-");
    if (!gc_jbool(r, "cached", 0))
        gc_kv("cached", "no");
    else if (asked && strcmp(asked, "auto") && strcmp(asked, by))
        gc_kv("cached", "yes (computed by %s; --no-cache solves with %s)", by, asked);
    else
        gc_kv("cached", "yes");
}

/* Write r[field] (an array of numbers) to path as a 1-D .npy; *n its
 * length. Before anything is printed: a file that cannot be written is exit
 * 5 with nothing on stdout. */
static int write_field(const char *prog, const cJSON *r, const char *field, const char *path,
                       int *count)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(r, field);
    if (!cJSON_IsArray(arr)) {
        fprintf(stderr, "%s: the server's answer has no \"%s\"\n", prog, field);
        return GC_ESERVER;
    }
    int n = cJSON_GetArraySize(arr), k = 0;
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    const cJSON *x;
    cJSON_ArrayForEach(x, arr)
    {
        if (v)
            v[k++] = cJSON_IsNumber(x) ? x->valuedouble : 0.0;
    }
    int rc = v ? gc_npy_write_vec(prog, path, v, (size_t)n) : GC_EFILE;
    *count = n;
    free(v);
    return rc;
}

int gc_cmd_solve(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim solve", help,
                        "gapsim solve --assembly ID (--gaps G.npy [--row K] | --g-json FILE) "
                        "[options] [-o W.npy]",
                        0, 0};
    gc_solve_opts so = {0};
    const char *asm_id = NULL, *gaps = NULL, *row_s = NULL, *gjson = NULL, *out = NULL,
               *field = NULL;
    const gc_opt opts[] = {
        {"--assembly", "-a", &asm_id, NULL}, {"--gaps", NULL, &gaps, NULL},
        {"--row", NULL, &row_s, NULL},       {"--g-json", NULL, &gjson, NULL},
        {"--out", "-o", &out, NULL},         {"--field", NULL, &field, NULL},
        GC_SOLVE_OPT_ENTRIES(so),            {0},
    };
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (!asm_id)
        return gc_usage_error(cmd.prog, "--assembly ID is required");
    if (gc_arg_id(cmd.prog, "--assembly", asm_id))
        return GC_EUSAGE;
    if (!gaps == !gjson)
        return gc_usage_error(cmd.prog, "give the gap with either --gaps or --g-json");
    if (row_s && !gaps)
        return gc_usage_error(cmd.prog, "--row goes with --gaps");
    if (field && strcmp(field, "w") && strcmp(field, "lambda") && strcmp(field, "x"))
        return gc_usage_error(cmd.prog, "--field must be w, lambda or x, not '%s'", field);
    if (field && !out)
        return gc_usage_error(cmd.prog, "--field goes with -o FILE");
    long row = 0;
    if (row_s && gc_arg_long(cmd.prog, "--row", row_s, 0, 2000000000L, &row))
        return GC_EUSAGE;
    if ((rc = gc_solve_opts_check(cmd.prog, &so)) != GC_OK)
        return rc;
    if (!field)
        field = "w";

    double *g = NULL;
    int m = 0;
    size_t k = 0;
    rc = gaps ? gc_npy_read_row(cmd.prog, gaps, row, &g, &m, &k) : read_g_json(cmd.prog, gjson, &g, &m);
    if (rc)
        return rc;
    cJSON *body = cJSON_CreateObject();
    cJSON *garr = cJSON_CreateDoubleArray(g, m);
    free(g);
    int ok = body && garr && cJSON_AddItemToObject(body, "g", garr);
    if (!ok)
        cJSON_Delete(garr);
    ok = ok && gc_solve_opts_json(&so, body) == 0;
    if (ok && !strcmp(field, "x")) {
        const char *ret[] = {"w", "lambda", "x", "kkt"};
        cJSON *r = cJSON_CreateStringArray(ret, 4);
        ok = r && cJSON_AddItemToObject(body, "return", r);
    }
    char *text = ok ? gc_json_print(body) : NULL;
    cJSON_Delete(body);
    if (!text) {
        fprintf(stderr, "%s: out of memory\n", cmd.prog);
        return GC_EFILE;
    }
    char *id = gc_escape(asm_id);
    char path[512];
    snprintf(path, sizeof path, "/v1/assemblies/%s/solve", id ? id : "");
    free(id);
    gc_req rq = {.method = "POST", .path = path, .content_type = "application/json",
                 .body = text, .body_len = strlen(text)};
    cJSON *ans = NULL;
    gc_buf raw = {0};
    rc = gc_call_json(cx, cmd.prog, &rq, &ans, &raw);
    free(text);
    int n_out = 0;
    if (rc == GC_OK && out) /* the file first: nothing on stdout when it cannot be written */
        rc = write_field(cmd.prog, ans, field, out, &n_out);
    if (rc == GC_OK) {
        if (cx->json)
            gc_print_body(&raw);
        else
            print_result(ans, so.solver);
        if (out && !cx->json)
            gc_kv(field, "%d values -> %s", n_out, out);
    }
    gc_buf_free(&raw);
    cJSON_Delete(ans);
    return rc;
}
