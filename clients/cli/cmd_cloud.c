/*
 * cmd_cloud.c -- `gapsim cloud submit|list|status|cancel|summary|results`:
 * gap-cloud jobs. submit streams the .npy to POST /v1/assemblies/{id}/clouds
 * (options in the query string); --wait polls GET /v1/jobs/{id} with a
 * progress display (progress.h) and exits 4 if the job ends failed or
 * cancelled. results -o streams the job's .npy (Accept: application/x-npy)
 * into the file (written atomically); without -o it pages the JSON results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "cli.h"
#include "fileio.h"
#include "http.h"
#include "linalg.h"
#include "npy.h"
#include "npyio.h"
#include "out.h"
#include "progress.h"
#include "reqopts.h"

static const char group_help[] =
    "usage: gapsim cloud submit --assembly ID --gaps GAPS.npy [options] [--wait]\n"
    "       gapsim cloud list [--assembly ID] [--status S]\n"
    "       gapsim cloud status JOB [--wait]\n"
    "       gapsim cloud cancel JOB\n"
    "       gapsim cloud summary JOB [--threshold MM] [--bins N]\n"
    "       gapsim cloud results JOB [-o W.npy] [--field w|lambda]\n"
    "       gapsim cloud export JOB --format csv|html|vtk (-o FILE [--gap I] | --series DIR)\n"
    "Gap-cloud jobs: one solve per gap vector, run by the server's workers; see\n"
    "gapsim cloud COMMAND --help.\n";

static void job_path(char *buf, size_t cap, const char *job, const char *tail)
{
    char *id = gc_escape(job);
    snprintf(buf, cap, "/v1/jobs/%s%s", id ? id : "", tail);
    free(id);
}

static int job_ended(const char *status)
{
    return !strcmp(status, "done") || !strcmp(status, "failed") || !strcmp(status, "cancelled");
}

static void print_job(const cJSON *j)
{
    char t[64];
    gc_kv("job", "%s", gc_jstr(j, "id", "-"));
    gc_kv("assembly", "%s", gc_jstr(j, "assembly_id", "-"));
    gc_kv("status", "%s", gc_jstr(j, "status", "-"));
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (cJSON_IsString(err)) /* a failed job: why */
        gc_kv("error", "%s", err->valuestring);
    gc_kv("progress", "%d/%d done, %d failed", gc_jint(j, "done", 0), gc_jint(j, "total", 0),
          gc_jint(j, "failed", 0));
    if (gc_jis_num(j, "solves_per_s"))
        gc_kv("rate", "%.1f solves/s", gc_jnum(j, "solves_per_s", 0));
    if (gc_jis_num(j, "eta_s") && !job_ended(gc_jstr(j, "status", "")))
        gc_kv("eta", "%s", gs_fmt_duration(gc_jnum(j, "eta_s", 0), t, sizeof t));
    gc_kv("mean_solve", "%.3f ms", gc_jnum(j, "mean_solve_ms", 0));
    gc_kv("iterations", "%.0f", gc_jnum(j, "iterations", 0));
    gc_kv("created", "%s", gc_fmt_time(gc_jnum(j, "created_at", 0), t, sizeof t));
    gc_kv("started", "%s", gc_fmt_time(gc_jnum(j, "started_at", 0), t, sizeof t));
    gc_kv("finished", "%s", gc_fmt_time(gc_jnum(j, "finished_at", 0), t, sizeof t));
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "options");
    char *opts = o ? cJSON_PrintUnformatted(o) : NULL;
    if (opts)
        gc_kv("options", "%s", opts);
    free(opts);
}

/* Seconds each GET of a job being waited for may be held by the daemon
 * (?wait=): the progress line's refresh. */
#define WAIT_SPAN_S 0.25

/* Wait until the job ends; *final / *raw: its last state. Each request asks
 * the daemon to hold it until the job ends or WAIT_SPAN_S pass, so the end
 * is seen as it happens; a daemon that answers sooner without the job having
 * ended (one that cannot wait) is polled instead, at the job's ETA. */
static int wait_job(gc_ctx *cx, const char *prog, const char *job, int quiet, cJSON **final,
                    gc_buf *raw)
{
    char base[512], held[560];
    job_path(base, sizeof base, job, "");
    snprintf(held, sizeof held, "%s?wait=%g", base, WAIT_SPAN_S);
    int can_wait = 1;
    gs_progress pg;
    gs_progress_init(&pg, cx->tty);
    for (;;) {
        cJSON *j = NULL;
        gc_buf b = {0};
        long status = 0;
        gc_req rq = {.method = "GET", .path = can_wait ? held : base, .status = &status};
        const double asked = gs_now();
        int rc = gc_call_json(cx, prog, &rq, &j, &b);
        if (rc != GC_OK) { /* the error is printed on a line of its own (gs_progress_break) */
            if (!quiet)
                gs_progress_end(&pg);
            if (rc == GC_ESERVER && status == 404) /* its assembly deleted, say */
                fprintf(stderr, "%s: stopped waiting: job %s was deleted on the server\n", prog,
                        job);
            else
                fprintf(stderr, "%s: stopped waiting; the job goes on on the server. Reattach "
                                "with: gapsim cloud status --wait %s\n",
                        prog, job);
            return rc;
        }
        const char *st = gc_jstr(j, "status", "?");
        if (!quiet) /* -q: no progress lines either */
            gs_progress_update(&pg, gc_jstr(j, "id", job), st, gc_jint(j, "done", 0),
                               gc_jint(j, "total", 0), gc_jint(j, "failed", 0),
                               gc_jnum(j, "solves_per_s", -1),
                               job_ended(st) ? -1 : gc_jnum(j, "eta_s", -1));
        if (job_ended(st)) {
            if (!quiet)
                gs_progress_end(&pg);
            *final = j;
            *raw = b;
            return GC_OK;
        }
        const int waited = can_wait && gs_now() - asked >= 0.5 * WAIT_SPAN_S;
        can_wait = waited;
        /* polling: every 0.25 s (the progress line), or at the job's ETA when
         * that is sooner (at least 20 ms): the end is seen within ~20 ms */
        const double eta = gc_jis_num(j, "eta_s") ? gc_jnum(j, "eta_s", 0.25) : 0.25;
        cJSON_Delete(j);
        gc_buf_free(&b);
        if (!waited)
            gc_sleep(eta < 0.02 ? 0.02 : (eta > 0.25 ? 0.25 : eta));
    }
}

/* Print a job (as is with --json); with wait, wait first; exit code. */
static int show_job(gc_ctx *cx, const char *prog, cJSON *j, gc_buf *raw, int wait, int quiet)
{
    int rc = GC_OK;
    if (wait) {
        char id[64];
        snprintf(id, sizeof id, "%s", gc_jstr(j, "id", ""));
        cJSON_Delete(j);
        gc_buf_free(raw);
        j = NULL;
        rc = wait_job(cx, prog, id, quiet, &j, raw);
    }
    if (rc == GC_OK) {
        if (cx->json)
            gc_print_body(raw);
        else if (quiet)
            printf("%s\n", gc_jstr(j, "id", ""));
        else
            print_job(j);
        const char *st = gc_jstr(j, "status", "");
        if (wait && (!strcmp(st, "failed") || !strcmp(st, "cancelled"))) {
            fprintf(stderr, "%s: job %s %s\n", prog, gc_jstr(j, "id", ""), st);
            rc = GC_EJOB;
        }
    }
    cJSON_Delete(j);
    gc_buf_free(raw);
    return rc;
}

/* ---- submit ------------------------------------------------------------------ */

/* The cloud-only string options of a submit (NULL: not given). */
typedef struct {
    const char *key, *value;
} cloud_str;
#define CLOUD_STRS 2

/* The JSON body of a cloud without an upload: {"generate": {count, seed}}
 * (count > 0) or {"gaps_from": job}, the cloud's string options and the
 * options. NULL when out of memory. */
static char *json_body(const gc_solve_opts *so, long count, long seed, double scatter,
                       const char *gaps_from, const cloud_str strs[CLOUD_STRS])
{
    cJSON *body = cJSON_CreateObject(), *gen = count > 0 ? cJSON_CreateObject() : NULL;
    int ok = body != NULL;
    if (count > 0) {
        ok = ok && gen && cJSON_AddNumberToObject(gen, "count", (double)count) &&
             cJSON_AddNumberToObject(gen, "seed", (double)seed) &&
             (scatter >= 1.0 || cJSON_AddNumberToObject(gen, "scatter", scatter));
        ok = ok && cJSON_AddItemToObject(body, "generate", gen);
        if (!ok)
            cJSON_Delete(gen);
    } else {
        ok = ok && cJSON_AddStringToObject(body, "gaps_from", gaps_from);
    }
    for (int i = 0; i < CLOUD_STRS; i++)
        ok = ok && (!strs[i].value || cJSON_AddStringToObject(body, strs[i].key, strs[i].value));
    ok = ok && gc_solve_opts_json(so, body) == 0;
    char *text = ok ? gc_json_print(body) : NULL;
    cJSON_Delete(body);
    return text;
}

static int cmd_submit(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {
        "gapsim cloud submit",
        "Submit a gap cloud: GAPS.npy is a k x m float64 array (C order), one gap\n"
        "vector per row, uploaded as is; or --generate K: the server generates K gap\n"
        "vectors with gapsim-gen's generator (the same --seed gives the same gaps as\n"
        "gapsim-gen --seed); or --gaps-from JOB: the gaps of a previous job, solved\n"
        "again with these options (nothing uploaded). Prints the job (or only its id\n"
        "with -q).\n"
        "options:\n"
        "  --assembly ID      the assembly (required)\n"
        "  --gaps GAPS.npy    the cloud (or --generate, --gaps-from)\n"
        "  --generate K       K server-generated gap vectors\n"
        "  --gaps-from JOB    the gaps of a previous job j_... of this assembly\n"
        "  --seed S           the generator's seed (with --generate; default 1)\n"
        "  --scatter S        with --generate: share of each gap's own field, 0..1\n"
        "                     (default 1: independent gaps; 0.05-0.2: similar gaps)\n"
        "  --label L          the cloud's name in job lists and the web page\n"
        "  --chain C          off (default), on or auto: solve each worker's gaps in\n"
        "                     nearest-neighbour order, each warm from the one before\n"
        "                     (auto: where that is measured faster); results agree with\n"
        "                     cold solves to round-off, not to the bit\n" GC_SOLVE_OPT_HELP
        "  --warm-start JOB   gap i starts from result i of a previous job j_... of\n"
        "                     this assembly with the same number of gaps\n"
        "  --wait             wait for the job: a progress bar on a terminal (plain\n"
        "                     lines otherwise, on stderr); exit 4 if it ends failed\n"
        "                     or cancelled\n"
        "  -q, --quiet        print only the job id (with --wait: no progress on stderr)\n",
        "gapsim cloud submit --assembly ID (--gaps GAPS.npy | --generate K [--seed S] [--scatter S]\n"
        "                    | --gaps-from JOB)\n"
        "                    [--label L] [--chain C] [options] [--wait] [-q]", 0, 0};
    gc_solve_opts so = {0};
    const char *asm_id = NULL, *gaps = NULL, *gen = NULL, *seed_s = NULL, *label = NULL;
    const char *chain = NULL, *scatter_s = NULL, *from = NULL;
    int wait = 0, quiet = 0;
    const gc_opt opts[] = {
        {"--assembly", "-a", &asm_id, NULL}, {"--gaps", NULL, &gaps, NULL},
        {"--generate", NULL, &gen, NULL},    {"--seed", NULL, &seed_s, NULL},
        {"--label", NULL, &label, NULL},     {"--chain", NULL, &chain, NULL},
        {"--scatter", NULL, &scatter_s, NULL}, {"--gaps-from", NULL, &from, NULL},
        {"--wait", NULL, NULL, &wait},
        {"--quiet", "-q", NULL, &quiet},     GC_SOLVE_OPT_ENTRIES(so),
        {0},
    };
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (!asm_id)
        return gc_usage_error(cmd.prog, "--assembly ID is required");
    if (!!gaps + !!gen + !!from != 1)
        return gc_usage_error(cmd.prog,
                              "give one of --gaps GAPS.npy, --generate K or --gaps-from JOB");
    long count = 0, seed = 1;
    if (seed_s && !gen)
        return gc_usage_error(cmd.prog, "--seed goes with --generate");
    if (scatter_s && !gen)
        return gc_usage_error(cmd.prog, "--scatter goes with --generate");
    double scatter = 1.0;
    if ((gen && gc_arg_long(cmd.prog, "--generate", gen, 1, 100000000, &count)) ||
        (seed_s && gc_arg_long(cmd.prog, "--seed", seed_s, 0, 1L << 53, &seed)) ||
        (scatter_s && gc_arg_double(cmd.prog, "--scatter", scatter_s, 0.0, 1.0, &scatter)))
        return GC_EUSAGE;
    if ((rc = gc_solve_opts_check(cmd.prog, &so)) != GC_OK)
        return rc;
    if (chain && strcmp(chain, "off") && strcmp(chain, "on") && strcmp(chain, "auto"))
        return gc_usage_error(cmd.prog, "--chain must be off, on or auto");
    const cloud_str strs[CLOUD_STRS] = {{"label", label}, {"chain", chain}};
    size_t k = (size_t)count, m = 0;
    if (gaps && (rc = gc_npy_shape(cmd.prog, gaps, &k, &m)) != GC_OK)
        return rc;
    gc_buf path = {0};
    char *id = gc_escape(asm_id);
    char *text = gaps ? NULL : json_body(&so, count, seed, scatter, from, strs);
    int bad = !id || (!gaps && !text) || gc_buf_add(&path, "/v1/assemblies/", 15) ||
              gc_buf_add(&path, id, strlen(id)) || gc_buf_add(&path, "/clouds", 7) ||
              (gaps && gc_solve_opts_query(&so, &path, '?'));
    for (int i = 0; i < CLOUD_STRS && !bad && gaps; i++) { /* the query string of an .npy upload */
        if (!strs[i].value)
            continue;
        char *ev = gc_escape(strs[i].value);
        bad = !ev || gc_buf_add(&path, strchr(path.p, '?') ? "&" : "?", 1) ||
              gc_buf_add(&path, strs[i].key, strlen(strs[i].key)) || gc_buf_add(&path, "=", 1) ||
              gc_buf_add(&path, ev, strlen(ev));
        free(ev);
    }
    free(id);
    if (bad) {
        gc_buf_free(&path);
        free(text);
        fprintf(stderr, "%s: out of memory\n", cmd.prog);
        return GC_EFILE;
    }
    gc_req rq = !gaps ? (gc_req){.method = "POST", .path = path.p,
                                 .content_type = "application/json", .body = text,
                                 .body_len = strlen(text)}
                      : (gc_req){.method = "POST", .path = path.p,
                                 .content_type = "application/x-npy", .body_file = gaps};
    cJSON *j = NULL;
    gc_buf raw = {0};
    rc = gc_call_json(cx, cmd.prog, &rq, &j, &raw);
    gc_buf_free(&path);
    free(text);
    if (rc != GC_OK)
        return rc;
    if (wait && !quiet && !cx->json) {
        if (gen)
            fprintf(stderr, "submitted %s: %zu generated gaps (seed %ld)\n", gc_jstr(j, "id", "?"), k,
                    seed);
        else if (from)
            fprintf(stderr, "submitted %s: the %d gaps of %s\n", gc_jstr(j, "id", "?"),
                    (int)gc_jnum(j, "total", 0), from);
        else
            fprintf(stderr, "submitted %s: %zu gaps of m = %zu\n", gc_jstr(j, "id", "?"), k, m);
    }
    return show_job(cx, cmd.prog, j, &raw, wait, quiet);
}

/* ---- list / status / cancel ------------------------------------------------------- */

static void print_jobs(const gc_ctx *cx, const cJSON *ans)
{
    (void)cx;
    printf("%-18s  %-18s  %-9s %9s %7s %9s  %-19s  %s\n", "JOB", "ASSEMBLY", "STATUS", "DONE",
           "FAILED", "SOLVES/S", "CREATED", "LABEL");
    const cJSON *j;
    cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(ans, "jobs"))
    {
        char t[64], done[32], rate[32] = "-";
        snprintf(done, sizeof done, "%d/%d", gc_jint(j, "done", 0), gc_jint(j, "total", 0));
        if (gc_jis_num(j, "solves_per_s"))
            snprintf(rate, sizeof rate, "%.1f", gc_jnum(j, "solves_per_s", 0));
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "options");
        printf("%-18s  %-18s  %-9s %9s %7d %9s  %-19s  %s\n", gc_jstr(j, "id", "-"),
               gc_jstr(j, "assembly_id", "-"), gc_jstr(j, "status", "-"), done,
               gc_jint(j, "failed", 0), rate, gc_fmt_time(gc_jnum(j, "created_at", 0), t, sizeof t),
               gc_jstr(o, "label", ""));
    }
}

static int cmd_list(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim cloud list",
                        "List jobs, oldest first (the newest last).\n"
                        "options:\n"
                        "  --assembly ID   only the jobs of this assembly\n"
                        "  --status S      only jobs in status S (queued, running, done, failed,\n"
                        "                  cancelled)\n",
                        "gapsim cloud list [--assembly ID] [--status S]", 0, 0};
    const char *asm_id = NULL, *status = NULL;
    const gc_opt opts[] = {{"--assembly", "-a", &asm_id, NULL}, {"--status", NULL, &status, NULL}, {0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    gc_buf path = {0};
    char sep = '?';
    int bad = gc_buf_add(&path, "/v1/jobs", 8);
    const char *keys[2] = {"assembly", "status"}, *vals[2] = {asm_id, status};
    for (int i = 0; i < 2 && !bad; i++) {
        if (!vals[i])
            continue;
        char *e = gc_escape(vals[i]);
        bad = !e || gc_buf_add(&path, &sep, 1) || gc_buf_add(&path, keys[i], strlen(keys[i])) ||
              gc_buf_add(&path, "=", 1) || gc_buf_add(&path, e, strlen(e));
        free(e);
        sep = '&';
    }
    if (bad) {
        gc_buf_free(&path);
        return GC_EFILE;
    }
    gc_req rq = {.method = "GET", .path = path.p};
    rc = gc_call_print(cx, cmd.prog, &rq, print_jobs);
    gc_buf_free(&path);
    return rc;
}

/* GET or DELETE /v1/jobs/JOB and show the job (status and cancel). */
static int job_command(gc_ctx *cx, const gc_cmd *cmd, const gc_opt *opts, int argc, char **argv,
                       const char *method, const int *wait)
{
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (gc_arg_id(cmd->prog, "JOB", pos[0]))
        return GC_EUSAGE;
    char path[512];
    job_path(path, sizeof path, pos[0], "");
    gc_req rq = {.method = method, .path = path};
    cJSON *j = NULL;
    gc_buf raw = {0};
    if ((rc = gc_call_json(cx, cmd->prog, &rq, &j, &raw)) != GC_OK)
        return rc;
    return show_job(cx, cmd->prog, j, &raw, wait ? *wait : 0, 0);
}

static int cmd_status(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim cloud status",
                        "Show a job: status, done/total, failed, solves/s, ETA, options.\n"
                        "options:\n"
                        "  --wait   wait until it ends (progress on stderr); exit 4 if it ends\n"
                        "           failed or cancelled\n",
                        "gapsim cloud status JOB [--wait]", 1, 1};
    int wait = 0;
    const gc_opt opts[] = {{"--wait", NULL, NULL, &wait}, {0}};
    return job_command(cx, &cmd, opts, argc, argv, "GET", &wait);
}

static int cmd_cancel(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim cloud cancel",
                        "Cancel a queued or running job (results solved so far are kept).\n"
                        "A job that already ended is a server error (exit 1).\n",
                        "gapsim cloud cancel JOB", 1, 1};
    const gc_opt opts[] = {{0}};
    return job_command(cx, &cmd, opts, argc, argv, "DELETE", NULL);
}

/* ---- summary ------------------------------------------------------------------- */

static void print_dist(const char *key, const cJSON *d, const char *unit)
{
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(d, "median"))) { /* of no value */
        gc_kv(key, "-");
        return;
    }
    gc_kv(key, "min %.4g  mean %.4g  median %.4g  p95 %.4g  max %.4g%s", gc_jnum(d, "min", 0),
          gc_jnum(d, "mean", 0), gc_jnum(d, "median", 0), gc_jnum(d, "p95", 0),
          gc_jnum(d, "max", 0), unit);
}

static void print_counts(const char *key, const cJSON *obj)
{
    char line[512] = "";
    size_t len = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, obj)
    {
        int w = snprintf(line + len, sizeof line - len, "%s%s %d", len ? ", " : "", c->string,
                         c->valueint);
        if (w < 0 || (size_t)w >= sizeof line - len)
            break;
        len += (size_t)w;
    }
    gc_kv(key, "%s", len ? line : "-");
}

static void print_residual_histogram(const cJSON *s);

/* The figures of the answers' w, lambda and n_act (with none they are
 * null, not printed). */
static void print_answer_figures(const cJSON *s, double thr)
{
    gc_kv("threshold", "%g mm", thr);
    gc_kv("gaps_above", "%.1f %% (largest residual > %g mm)",
          100 * gc_jnum(s, "share_gaps_above", 0), thr);
    gc_kv("values_above", "%.2f %% of all residuals", 100 * gc_jnum(s, "share_values_above", 0));
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(s, "opened");
    if (cJSON_IsObject(op))
        gc_kv("opened", "%d pairs open under fastening (w > g + threshold) in %.1f %% of gaps: %s",
              gc_jint(op, "pairs", 0), 100 * gc_jnum(op, "share_gaps", 0), gc_jstr(op, "why", ""));
    print_dist("max_residual", cJSON_GetObjectItemCaseSensitive(s, "max_residual"), " mm");
    print_dist("n_act", cJSON_GetObjectItemCaseSensitive(s, "n_act"), "");
}

static void print_summary(const gc_ctx *cx, const cJSON *s)
{
    (void)cx;
    double thr = gc_jnum(s, "threshold", 0);
    gc_kv("job", "%s", gc_jstr(s, "job_id", "-"));
    gc_kv("status", "%s", gc_jstr(s, "status", "-"));
    gc_kv("solved", "%d of %d gaps (m = %d pairs)", gc_jint(s, "count", 0), gc_jint(s, "total", 0),
          gc_jint(s, "m", 0));
    const int answers = gc_jint(s, "answers", gc_jint(s, "count", 0)); /* an older server: all */
    const char *st = gc_jstr(s, "status", "");
    const int live = !strcmp(st, "queued") || !strcmp(st, "running");
    if (answers == 0) /* the figures of w, lambda, n_act are null then (0 from older servers) */
        gc_kv("answers", "none of %d gaps has an optimal result%s: no residual, contact or "
              "n_act figures (statuses below)", gc_jint(s, "count", 0), live ? " yet" : "");
    else if (answers != gc_jint(s, "count", 0)) /* another status's w and lambda are no answer */
        gc_kv("answers", "%d of %d (status optimal; the residual, contact and n_act figures "
              "cover these only)", answers, gc_jint(s, "count", 0));
    if (answers > 0)
        print_answer_figures(s, thr);
    print_dist("time", cJSON_GetObjectItemCaseSensitive(s, "time_ms"), " ms");
    print_counts("statuses", cJSON_GetObjectItemCaseSensitive(s, "statuses"));
    print_counts("solvers", cJSON_GetObjectItemCaseSensitive(s, "solvers"));
    gc_kv("failures", "%d", gc_jint(s, "failures", 0));
    if (gc_jint(s, "kkt_failed", 0)) /* docs/solvers.md, "Accuracy and the model's scale" */
        gc_kv("kkt_failed", "%d (KKT certificate fails at tol: cut short, or the model's scale "
              "limits the accuracy)", gc_jint(s, "kkt_failed", 0));
    gc_kv("warm_started", "%d", gc_jint(s, "warm_started", 0));
    if (gc_jint(s, "crossovers", 0))
        gc_kv("crossovers", "%d (finished by GI relative: the method's own loop did not finish)",
              gc_jint(s, "crossovers", 0));
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(s, "iterations");
    gc_kv("iterations", "total %.0f, mean %.1f", gc_jnum(it, "total", 0), gc_jnum(it, "mean", 0));
    if (answers > 0)
        print_residual_histogram(s);
}

/* The residual histogram of the answers (bars of '#'). */
static void print_residual_histogram(const cJSON *s)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(s, "residual_histogram");
    const cJSON *edges = cJSON_GetObjectItemCaseSensitive(h, "edges");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(h, "counts");
    int nb = cJSON_GetArraySize(counts);
    if (nb <= 0 || cJSON_GetArraySize(edges) != nb + 1)
        return;
    double cmax = 0;
    for (int i = 0; i < nb; i++) {
        double c = cJSON_GetArrayItem(counts, i)->valuedouble;
        cmax = c > cmax ? c : cmax;
    }
    printf("residual gaps of open pairs (mm; %.0f residuals of pairs in contact, w = 0, apart):\n",
           gc_jnum(h, "in_contact", 0));
    for (int i = 0; i < nb; i++) {
        double lo = cJSON_GetArrayItem(edges, i)->valuedouble;
        double hi = cJSON_GetArrayItem(edges, i + 1)->valuedouble;
        double c = cJSON_GetArrayItem(counts, i)->valuedouble;
        int bar = cmax > 0 ? (int)(40.0 * c / cmax + 0.5) : 0;
        if (c > 0 && bar == 0)
            bar = 1;
        printf("  [%9.4g, %9.4g%c %9.0f  %.*s\n", lo, hi, i == nb - 1 ? ']' : ')', c, bar,
               "########################################");
    }
}

static int cmd_summary(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim cloud summary",
                        "Statistics of a job's results: share of gaps whose largest residual\n"
                        "exceeds the threshold, distributions of the largest residual, contacts\n"
                        "and solve times, statuses, solvers, the pairs that open under\n"
                        "fastening, and a histogram of the residual gaps of the open pairs (those\n"
                        "in contact counted apart).\n"
                        "options:\n"
                        "  --threshold MM   residual gap threshold (default: the server's, 0.1)\n"
                        "  --bins N         histogram bins (default 20)\n",
                        "gapsim cloud summary JOB [--threshold MM] [--bins N]", 1, 1};
    const char *thr_s = NULL, *bins_s = NULL;
    const gc_opt opts[] = {{"--threshold", NULL, &thr_s, NULL}, {"--bins", NULL, &bins_s, NULL}, {0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    double thr = 0;
    long bins = 0;
    if (thr_s && gc_arg_double(cmd.prog, "--threshold", thr_s, 0, 1e300, &thr))
        return GC_EUSAGE;
    if (bins_s && gc_arg_long(cmd.prog, "--bins", bins_s, 1, 1000, &bins))
        return GC_EUSAGE;
    if (gc_arg_id(cmd.prog, "JOB", pos[0]))
        return GC_EUSAGE;
    char path[512];
    job_path(path, sizeof path, pos[0], "/summary");
    gc_buf q = {0}; /* the query's values URL-escaped: 1e+20's '+' is no space */
    if (gc_buf_add(&q, path, strlen(path)) ||
        (thr_s && gc_query_num(&q, '?', "threshold", thr)) ||
        (bins_s && gc_query_num(&q, thr_s ? '&' : '?', "bins", (double)bins))) {
        gc_buf_free(&q);
        fprintf(stderr, "%s: out of memory\n", cmd.prog);
        return GC_EFILE;
    }
    gc_req rq = {.method = "GET", .path = q.p};
    rc = gc_call_print(cx, cmd.prog, &rq, print_summary);
    gc_buf_free(&q);
    return rc;
}

/* ---- results ------------------------------------------------------------------ */

/* The shape of the .npy a download carries, from its header as it passed
 * (gc_peek): the output is never read back (a FIFO, /dev/stdout). */
typedef struct {
    size_t k, m;
} npy_shape;

/* gc_peek check: a .npy header of '<f8', and exactly the bytes it
 * announces; else the server sent no .npy (exit 1, the file not created). */
static int check_npy(const char *prog, const gc_peek *p, void *ud)
{
    npy_shape *sh = ud;
    gs_npy_info info;
    size_t off;
    gs_error e;
    if (gs_npy_parse_header(p->head, p->len, &info, &off, &e) != GS_OK) {
        fprintf(stderr, "%s: the server's answer is not a .npy: %s\n", prog, e.msg);
        return GC_ESERVER;
    }
    /* rows x cols x 8 fits in size_t (gs_npy_parse_header) */
    const unsigned long long want = (unsigned long long)off +
                                    (unsigned long long)(info.shape[0] * info.shape[1] * 8);
    if (p->size != want) {
        fprintf(stderr, "%s: the server's .npy has %llu bytes, its header announces %llu\n", prog,
                p->size, want);
        return GC_ESERVER;
    }
    sh->k = info.ndim == 1 ? 1 : info.shape[0];
    sh->m = info.ndim == 1 ? info.shape[0] : info.shape[1];
    return GC_OK;
}

/* Stream the job's .npy into out (atomically). */
static int results_npy(gc_ctx *cx, const char *prog, const char *job, const char *field,
                       const char *out)
{
    /* the job first: a clear error for an unknown id, a warning if unfinished */
    char path[512];
    job_path(path, sizeof path, job, "");
    gc_req jq = {.method = "GET", .path = path};
    cJSON *j = NULL;
    int rc = gc_call_json(cx, prog, &jq, &j, NULL);
    if (rc != GC_OK)
        return rc;
    const char *st = gc_jstr(j, "status", "");
    if (strcmp(st, "done"))
        fprintf(stderr, "%s: warning: job %s is %s (%d/%d done): rows not solved are NaN\n", prog,
                job, st, gc_jint(j, "done", 0), gc_jint(j, "total", 0));
    cJSON_Delete(j);

    char tail[64];
    snprintf(tail, sizeof tail, "/results?field=%s", field);
    job_path(path, sizeof path, job, tail);
    npy_shape sh = {0, 0};
    gc_peek peek = {.cap = GS_NPY_MAX_HEADER + 16, .check = check_npy, .ud = &sh};
    if (!(peek.head = malloc(peek.cap))) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return GC_EFILE;
    }
    rc = gc_download(cx, prog, path, "application/x-npy", out, &peek);
    free(peek.head);
    if (rc != GC_OK)
        return rc;
    FILE *rep = gc_report_stream(out); /* -o /dev/stdout: not after the data */
    if (cx->json) {
        cJSON *o = cJSON_CreateObject(), *shape = NULL;
        const int ok = o && cJSON_AddStringToObject(o, "job_id", job) &&
                       cJSON_AddStringToObject(o, "field", field) &&
                       cJSON_AddStringToObject(o, "path", out) &&
                       (shape = cJSON_AddArrayToObject(o, "shape")) &&
                       cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)sh.k)) &&
                       cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)sh.m));
        if (!ok) {
            cJSON_Delete(o);
            o = NULL;
        }
        if (gc_print_obj(rep, o))
            return GC_EFILE;
    } else {
        fprintf(rep, "wrote %s: %zu x %zu (%s)\n", out, sh.k, sh.m, field);
    }
    return GC_OK;
}

/* One page of results (offset), fields as asked; NULL and rc on failure. */
static cJSON *results_page(gc_ctx *cx, const char *prog, const char *job, long offset,
                           const char *fields, int *rc)
{
    char tail[128], path[512];
    snprintf(tail, sizeof tail, "/results?offset=%ld&limit=1000&fields=%s", offset, fields);
    job_path(path, sizeof path, job, tail);
    gc_req rq = {.method = "GET", .path = path};
    cJSON *page = NULL;
    *rc = gc_call_json(cx, prog, &rq, &page, NULL);
    return *rc == GC_OK ? page : NULL;
}

/* The per-gap results as a table, page by page. */
static int results_table(gc_ctx *cx, const char *prog, const char *job)
{
    int rc = GC_OK;
    for (long offset = 0; offset >= 0;) {
        cJSON *page = results_page(cx, prog, job, offset, "w", &rc); /* max_residual needs w */
        if (!page)
            break;
        if (offset == 0) /* once the first page is here: nothing on stdout for an error */
            printf("%6s  %-18s  %-12s %-6s %6s %6s %10s %12s %4s\n", "INDEX", "RESULT", "STATUS",
                   "SOLVER", "N_ACT", "ITER", "TIME_MS", "MAX_RES_MM", "WARM");
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(page, "results"))
        {
            char mr[32] = "-";
            if (gc_jis_num(r, "max_residual"))
                snprintf(mr, sizeof mr, "%.6g", gc_jnum(r, "max_residual", 0));
            printf("%6d  %-18s  %-12s %-6s %6d %6d %10.3f %12s %4s\n",
                   gc_jint(r, "job_index", -1), gc_jstr(r, "id", "-"), gc_jstr(r, "status", "-"),
                   gc_jstr(r, "solver", "-"), gc_jint(r, "n_act", 0), gc_jint(r, "iterations", 0),
                   gc_jnum(r, "time_ms", 0), mr, gc_jbool(r, "warm_start_used", 0) ? "yes" : "no");
        }
        offset = gc_next_offset(page, offset);
        cJSON_Delete(page);
    }
    return rc;
}

/* Print v (gc_json_print); 0, or -1 out of memory. */
static int print_json(const cJSON *v)
{
    char *text = gc_json_print(v);
    if (!text)
        return -1;
    fputs(text, stdout);
    free(text);
    return 0;
}

/* Every result as one JSON document, the server's page format as if one
 * page held them all ("limit" the total, "next_offset" null), streamed page
 * by page: memory O(one page), not O(job) (a tree of 1 M results is ~10 GB).
 * A request that fails midway leaves the document cut, and rc says so. */
static int results_merged(gc_ctx *cx, const char *prog, const char *job, const char *field)
{
    int rc = GC_OK;
    cJSON *page = results_page(cx, prog, job, 0, field ? field : "w", &rc);
    if (!page)
        return rc;
    long offset = gc_next_offset(page, 0);
    cJSON_ReplaceItemInObjectCaseSensitive(page, "limit",
                                           cJSON_CreateNumber(gc_jnum(page, "total", 0)));
    cJSON_ReplaceItemInObjectCaseSensitive(page, "next_offset", cJSON_CreateNull());
    cJSON *res = cJSON_DetachItemFromObjectCaseSensitive(page, "results");
    int oom = 0, first = 1;
    putchar('{');
    const cJSON *mbr;
    cJSON_ArrayForEach(mbr, page) /* the page's other members, then its results */
    {
        cJSON *name = cJSON_CreateString(mbr->string ? mbr->string : "");
        oom |= !name || print_json(name);
        cJSON_Delete(name);
        putchar(':');
        oom |= print_json(mbr);
        putchar(',');
    }
    fputs("\"results\":[", stdout);
    for (;;) {
        const cJSON *r;
        cJSON_ArrayForEach(r, res)
        {
            if (!first)
                putchar(',');
            first = 0;
            oom |= print_json(r);
        }
        cJSON_Delete(res);
        res = NULL;
        if (offset < 0 || oom || gc_stdout_failed()) /* stdout full: no more pages */
            break;
        cJSON *next = results_page(cx, prog, job, offset, field ? field : "w", &rc);
        if (!next)
            break;
        offset = gc_next_offset(next, offset);
        res = cJSON_DetachItemFromObjectCaseSensitive(next, "results");
        cJSON_Delete(next);
    }
    cJSON_Delete(page);
    if (rc != GC_OK || oom || gc_stdout_failed()) {
        putchar('\n');
        if (oom)
            fprintf(stderr, "%s: out of memory printing the results\n", prog);
        return rc != GC_OK ? rc : GC_EFILE; /* a failed stdout: main says why */
    }
    fputs("]}\n", stdout);
    return GC_OK;
}

static int cmd_results(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {"gapsim cloud results",
                        "A job's results. With -o, the k x m array of one field streamed into a\n"
                        ".npy file (row i = gap i; rows not solved yet are NaN). Without -o, a\n"
                        "table of the per-gap results (with --json: every result, as the\n"
                        "server's result pages merged into one, vectors of --field included).\n"
                        "options:\n"
                        "  -o, --out FILE   write the .npy here\n"
                        "  --field F        w (residual gaps, mm; default) or lambda (contact\n"
                        "                   forces, N)\n",
                        "gapsim cloud results JOB [-o W.npy] [--field w|lambda]", 1, 1};
    const char *out = NULL, *field = NULL;
    const gc_opt opts[] = {{"--out", "-o", &out, NULL}, {"--field", NULL, &field, NULL}, {0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (field && strcmp(field, "w") && strcmp(field, "lambda"))
        return gc_usage_error(cmd.prog, "--field must be w or lambda, not '%s'", field);
    if (gc_arg_id(cmd.prog, "JOB", pos[0]))
        return GC_EUSAGE;
    if (out)
        return results_npy(cx, cmd.prog, pos[0], field ? field : "w", out);
    return cx->json ? results_merged(cx, cmd.prog, pos[0], field)
                    : results_table(cx, cmd.prog, pos[0]);
}

int gc_cmd_cloud(gc_ctx *cx, int argc, char **argv)
{
    int at = 0, rc = gc_group_command(cx, "gapsim cloud", group_help, argc, argv, &at);
    if (rc >= 0)
        return rc;
    const char *sub = argv[at];
    static const struct {
        const char *name;
        int (*fn)(gc_ctx *, int, char **);
    } subs[] = {{"submit", cmd_submit}, {"list", cmd_list},       {"ls", cmd_list},
                {"status", cmd_status}, {"cancel", cmd_cancel},   {"summary", cmd_summary},
                {"results", cmd_results}, {"export", gc_cloud_export}};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(sub, subs[i].name))
            return subs[i].fn(cx, argc - at, argv + at);
    fprintf(stderr, "gapsim cloud: unknown command '%s' (see gapsim cloud --help)\n", sub);
    return GC_EUSAGE;
}
