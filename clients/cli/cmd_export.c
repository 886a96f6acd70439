/*
 * cmd_export.c -- `gapsim cloud export`: a job's results as files other tools
 * read (docs/cli.md).
 *
 *   --format csv    per-pair statistics (GET .../summary?format=csv)
 *   --format html   one-page report with SVG figures (summary?format=html)
 *   --format vtk    the cloud statistics on the junction (summary?format=vtp),
 *                   one gap with g, w, lambda (--gap I: results?format=vtp),
 *                   or a time series over the gaps (--series DIR: one .vtp
 *                   per solved gap plus a ParaView collection DIR/JOB.pvd)
 * Every file is written atomically (fileio.h gs_wfile).
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


/* One .vtp per solved gap and DIR/JOB.pvd listing them (timestep = gap index). */
static int series(gc_ctx *cx, const char *prog, const char *job, const char *q, const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "/v1/jobs/%s", job);
    gc_req jq = {.method = "GET", .path = path};
    cJSON *j = NULL;
    int rc = gc_call_json(cx, prog, &jq, &j, NULL);
    if (rc != GC_OK)
        return rc;
    int total = gc_jint(j, "total", 0), done = gc_jint(j, "done", 0);
    int finished = !strcmp(gc_jstr(j, "status", ""), "done");
    cJSON_Delete(j);
    if (!finished) {
        fprintf(stderr, "%s: job %s is not done (%d/%d); wait for it: gapsim cloud status --wait %s\n",
                prog, job, done, total, job);
        return GC_EJOB;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, dir, strerror(errno));
        return GC_EFILE;
    }
    char pvd[1024];
    snprintf(pvd, sizeof pvd, "%s/%s.pvd", dir, job);
    gs_wfile wf = {0};
    gs_error e;
    if (gs_wfile_open(&wf, pvd, &e)) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return GC_EFILE;
    }
    fprintf(wf.fp, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n"
                   "  <Collection>\n");
    int written = 0;
    for (int i = 0; i < total && rc == GC_OK; i++) { /* one request per gap: O(k m) bytes */
        char out[1024], name[64];
        snprintf(name, sizeof name, "%s_%05d.vtp", job, i);
        snprintf(out, sizeof out, "%s/%s", dir, name);
        snprintf(path, sizeof path, "/v1/jobs/%s/results?format=vtp&index=%d%s", job, i, q);
        rc = gc_download(cx, prog, path, NULL, out);
        if (rc == GC_OK) {
            fprintf(wf.fp, "    <DataSet timestep=\"%d\" part=\"0\" file=\"%s\"/>\n", i, name);
            written++;
        }
    }
    fprintf(wf.fp, "  </Collection>\n</VTKFile>\n");
    if (rc != GC_OK) {
        gs_wfile_abort(&wf);
        return rc;
    }
    if (gs_wfile_commit(&wf, &e)) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return GC_EFILE;
    }
    if (cx->json)
        printf("{\"job_id\":\"%s\",\"format\":\"vtk\",\"path\":\"%s\",\"files\":%d}\n", job, pvd,
               written);
    else
        printf("wrote %s: %d gaps (.vtp each, open the .pvd in ParaView)\n", pvd, written);
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
        "  --series DIR     vtk: every solved gap, as a time series\n"
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
    char *job = gc_escape(pos[0]);
    if (!job)
        return GC_EFILE;
    char q[64] = "";
    if (thr_s)
        snprintf(q, sizeof q, "&threshold=%.17g", thr);
    if (dir) {
        rc = series(cx, cmd.prog, job, q, dir);
        free(job);
        return rc;
    }
    char path[600];
    if (gap >= 0)
        snprintf(path, sizeof path, "/v1/jobs/%s/results?format=vtp&index=%ld%s", job, gap, q);
    else
        snprintf(path, sizeof path, "/v1/jobs/%s/summary?format=%s%s", job, vtk ? "vtp" : fmt, q);
    rc = gc_download(cx, cmd.prog, path, NULL, out);
    if (rc == GC_OK) {
        if (cx->json)
            printf("{\"job_id\":\"%s\",\"format\":\"%s\",\"path\":\"%s\"}\n", job, fmt, out);
        else
            printf("wrote %s (%s)\n", out, fmt);
    }
    free(job);
    return rc;
}
