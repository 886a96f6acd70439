/*
 * cmd_export.c -- `gapsim cloud export`: a job's results as files other tools
 * read (docs/cli.md).
 *
 *   --format csv    per-pair statistics (GET .../summary?format=csv)
 *   --format html   one-page report with SVG figures (summary?format=html)
 *   --format vtk    the cloud statistics on the junction (summary?format=vtp),
 *                   one gap with g, w, lambda (--gap I: results?format=vtp),
 *                   or a time series over the gaps (--series DIR: one .vtp
 *                   per solved gap plus a ParaView collection DIR/JOB.pvd;
 *                   every gap of a done job, the solved ones of a job that
 *                   ended cancelled or failed)
 * Every file is written atomically (outfile.h: fileio.h gs_wfile, its
 * temporary file removed by a signal).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cli.h"
#include "fileio.h"
#include "http.h"
#include "out.h"
#include "outfile.h"


/* The gap indices with a result of an ended job (pages of its results,
 * fields=none: O(done) entries); *idx malloc'd, *n of them. */
static int solved_gaps(gc_ctx *cx, const char *prog, const char *job, int total, int **idx, int *n)
{
    *n = 0;
    if (!(*idx = malloc(((size_t)total + 1) * sizeof **idx)))
        return GC_EFILE;
    int rc = GC_OK;
    for (long offset = 0; rc == GC_OK && offset >= 0;) {
        char path[600];
        snprintf(path, sizeof path, "/v1/jobs/%s/results?offset=%ld&limit=1000&fields=none", job,
                 offset);
        gc_req rq = {.method = "GET", .path = path};
        cJSON *page = NULL;
        rc = gc_call_json(cx, prog, &rq, &page, NULL);
        if (rc != GC_OK)
            break;
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(page, "results"))
        {
            int i = gc_jint(r, "job_index", -1);
            if (i >= 0 && i < total && *n < total)
                (*idx)[(*n)++] = i;
        }
        offset = gc_next_offset(page, offset);
        cJSON_Delete(page);
    }
    return rc;
}

/* Which gaps a series holds: every gap of a done job (*idx NULL, *n =
 * total); the solved ones of a job that ended cancelled or failed (it
 * will get no more: waiting is pointless); GC_EJOB, said, for a job still
 * queued or running, or an ended one with no result. */
static int series_gaps(gc_ctx *cx, const char *prog, const char *job, int **idx, int *n)
{
    char path[600];
    snprintf(path, sizeof path, "/v1/jobs/%s", job);
    gc_req jq = {.method = "GET", .path = path};
    cJSON *j = NULL;
    int rc = gc_call_json(cx, prog, &jq, &j, NULL);
    if (rc != GC_OK)
        return rc;
    int total = gc_jint(j, "total", 0), done = gc_jint(j, "done", 0);
    char st[32];
    snprintf(st, sizeof st, "%s", gc_jstr(j, "status", ""));
    cJSON_Delete(j);
    *idx = NULL;
    *n = total;
    if (!strcmp(st, "done"))
        return GC_OK;
    if (strcmp(st, "cancelled") && strcmp(st, "failed")) {
        fprintf(stderr, "%s: job %s is not done (%d/%d); wait for it: gapsim cloud status --wait %s\n",
                prog, job, done, total, job);
        return GC_EJOB;
    }
    if ((rc = solved_gaps(cx, prog, job, total, idx, n)) != GC_OK)
        return rc;
    if (*n == 0) {
        fprintf(stderr, "%s: job %s was %s with no gap solved (0 of %d): there is nothing to "
                        "export\n", prog, job, st, total);
        return GC_EJOB;
    }
    fprintf(stderr, "%s: job %s was %s with %d of %d gaps solved: the series holds those %d "
                    "(timestep = gap index)\n", prog, job, st, *n, total, *n);
    return GC_OK;
}

/* One .vtp per gap of the series (idx: n gap indices, NULL: 0..n-1) and
 * DIR/JOB.pvd listing them (timestep = gap index). job: URL-escaped (in
 * paths and file names), id: as given (in the --json line). */
static int series(gc_ctx *cx, const char *prog, const char *job, const char *id, const char *q,
                  const char *dir)
{
    char pvd[1024];
    if (strlen(dir) + strlen(job) + 16 >= sizeof pvd) /* DIR/JOB_NNNNN.vtp must fit */
        return gc_usage_error(prog, "--series DIR is too long (%zu characters)", strlen(dir));
    int *idx = NULL, n = 0;
    int rc = series_gaps(cx, prog, job, &idx, &n);
    if (rc != GC_OK) {
        free(idx);
        return rc;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, dir, strerror(errno));
        free(idx);
        return GC_EFILE;
    }
    snprintf(pvd, sizeof pvd, "%s/%s.pvd", dir, job);
    gs_wfile wf = {0};
    if ((rc = gc_out_open(prog, pvd, &wf)) != GC_OK) {
        free(idx);
        return rc;
    }
    fprintf(wf.fp, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n"
                   "  <Collection>\n");
    int written = 0;
    for (int x = 0; x < n && rc == GC_OK; x++) { /* one request per gap: O(k m) bytes */
        int i = idx ? idx[x] : x;
        char out[1024], name[400], path[600];
        snprintf(name, sizeof name, "%s_%05d.vtp", job, i);
        snprintf(out, sizeof out, "%s/%s", dir, name);
        snprintf(path, sizeof path, "/v1/jobs/%s/results?format=vtp&index=%d%s", job, i, q);
        rc = gc_download(cx, prog, path, NULL, out, NULL);
        if (rc == GC_OK) {
            fprintf(wf.fp, "    <DataSet timestep=\"%d\" part=\"0\" file=\"%s\"/>\n", i, name);
            written++;
        }
    }
    free(idx);
    fprintf(wf.fp, "  </Collection>\n</VTKFile>\n");
    if (rc != GC_OK) {
        gc_out_abort(&wf);
        return rc;
    }
    if ((rc = gc_out_commit(prog, &wf)) != GC_OK)
        return rc;
    if (cx->json) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddStringToObject(o, "job_id", id) ||
            !cJSON_AddStringToObject(o, "format", "vtk") ||
            !cJSON_AddStringToObject(o, "path", pvd) ||
            !cJSON_AddNumberToObject(o, "files", written)) {
            cJSON_Delete(o);
            o = NULL;
        }
        return gc_print_obj(gc_report_stream(pvd), o) ? GC_EFILE : GC_OK;
    }
    fprintf(gc_report_stream(pvd), "wrote %s: %d gaps (.vtp each, open the .pvd in ParaView)\n",
            pvd, written);
    return GC_OK;
}

int gc_cloud_export(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {
        "gapsim cloud export",
        "A job's results as files: csv (one row per contact pair: x, y, z,\n"
        "interface, mean / std / p95 / max residual, share above the threshold,\n"
        "mean contact force), html (one-page report: summary table, pattern, SVG\n"
        "figures), vtk (VTK XML PolyData .vtp for ParaView: the cloud statistics\n"
        "on the junction; with --gap I also g, w and lambda of gap I; with\n"
        "--series DIR one .vtp per gap and a DIR/JOB.pvd time series).\n"
        "options:\n"
        "  --format F       csv, html or vtk\n"
        "  -o, --out FILE   the file to write (csv, html, vtk without --series)\n"
        "  --gap I          vtk: gap I's vectors too\n"
        "  --series DIR     vtk: every solved gap, as a time series (a done job, or\n"
        "                   the gaps a cancelled or failed job solved)\n"
        "  --threshold MM   residual gap threshold of the statistics (default 0.1)\n",
        "gapsim cloud export JOB --format csv|html|vtk (-o FILE [--gap I] | --series DIR) "
        "[--threshold MM]",
        1, 1};
    const char *fmt = NULL, *out = NULL, *gap_s = NULL, *dir = NULL, *thr_s = NULL;
    const gc_opt opts[] = {{"--format", NULL, &fmt, NULL},       {"--out", "-o", &out, NULL},
                           {"--gap", NULL, &gap_s, NULL},        {"--series", NULL, &dir, NULL},
                           {"--threshold", NULL, &thr_s, NULL}, {0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (!fmt || (strcmp(fmt, "csv") && strcmp(fmt, "html") && strcmp(fmt, "vtk")))
        return gc_usage_error(cmd.prog, "--format must be csv, html or vtk");
    int vtk = !strcmp(fmt, "vtk");
    if ((gap_s || dir) && !vtk)
        return gc_usage_error(cmd.prog, "--gap and --series go with --format vtk");
    if (dir && (out || gap_s))
        return gc_usage_error(cmd.prog, "--series writes a directory: not with -o or --gap");
    if (!dir && !out)
        return gc_usage_error(cmd.prog, "-o FILE is required");
    double thr = 0.1;
    long gap = -1;
    if (thr_s && gc_arg_double(cmd.prog, "--threshold", thr_s, 0, 1e300, &thr))
        return GC_EUSAGE;
    if (gap_s && gc_arg_long(cmd.prog, "--gap", gap_s, 0, 1000000000L, &gap))
        return GC_EUSAGE;
    if (gc_arg_id(cmd.prog, "JOB", pos[0]))
        return GC_EUSAGE;
    char *job = gc_escape(pos[0]);
    gc_buf q = {0}; /* "&threshold=V", V URL-escaped (1e+300's '+' is no space) */
    if (!job || gc_buf_add(&q, "", 0) || (thr_s && gc_query_num(&q, '&', "threshold", thr))) {
        free(job);
        gc_buf_free(&q);
        fprintf(stderr, "%s: out of memory\n", cmd.prog);
        return GC_EFILE;
    }
    if (dir) {
        rc = series(cx, cmd.prog, job, pos[0], q.p, dir);
        free(job);
        gc_buf_free(&q);
        return rc;
    }
    char path[600];
    if (gap >= 0)
        snprintf(path, sizeof path, "/v1/jobs/%s/results?format=vtp&index=%ld%s", job, gap, q.p);
    else
        snprintf(path, sizeof path, "/v1/jobs/%s/summary?format=%s%s", job, vtk ? "vtp" : fmt,
                 q.p);
    free(job);
    gc_buf_free(&q);
    rc = gc_download(cx, cmd.prog, path, NULL, out, NULL);
    if (rc != GC_OK)
        return rc;
    FILE *rep = gc_report_stream(out); /* -o /dev/stdout: not after the data */
    if (cx->json) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddStringToObject(o, "job_id", pos[0]) ||
            !cJSON_AddStringToObject(o, "format", fmt) || !cJSON_AddStringToObject(o, "path", out)) {
            cJSON_Delete(o);
            o = NULL;
        }
        return gc_print_obj(rep, o) ? GC_EFILE : GC_OK;
    }
    fprintf(rep, "wrote %s (%s)\n", out, fmt);
    return GC_OK;
}
