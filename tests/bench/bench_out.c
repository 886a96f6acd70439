/*
 * bench_out.c -- the CSV, JSON and per-solve files of gapsim-bench
 * (bench_out.h).
 */
#include "bench_out.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gs_status.h"

gs_err bench_out_open(bench_out *o, const bench_args *a, gs_error *err)
{
    memset(o, 0, sizeof *o);
    const char *path[3] = {a->csv_path, a->json_path, a->times_path};
    gs_wfile *wf[3] = {&o->csv, &o->json, &o->times};
    int *has[3] = {&o->has_csv, &o->has_json, &o->has_times};
    for (int q = 0; q < 3; q++) {
        if (!path[q])
            continue;
        if (gs_wfile_open(wf[q], path[q], err) != GS_OK) {
            bench_out_abort(o);
            return err->code;
        }
        *has[q] = 1;
    }
    return GS_OK;
}

/* b's bytes into the JSON file; b is emptied. */
static void put_json(bench_out *o, gs_buf *b)
{
    size_t len = 0;
    char *s = gs_buf_take(b, &len);
    if (s)
        fwrite(s, 1, len, o->json.fp); /* a failed write surfaces at the commit (ferror) */
    else
        o->oom = 1;
    free(s);
}

void bench_out_begin(bench_out *o, const char *model, int n, int m, int k, double chol_q)
{
    if (o->has_csv)
        fprintf(o->csv.fp, "fraction,method,form,variant,gaps,optimal,median_ms,mean_ms,p95_ms,"
                           "max_ms,mean_iter,mean_cg,mean_nact,max_dx_mm,max_dw_mm,"
                           "bound_median_ms,ratio\n");
    if (o->has_times)
        fprintf(o->times.fp, "fraction,variant,gap,time_ms,iterations,cg_iterations,n_act,"
                             "status\n");
    if (o->has_json) {
        gs_buf b = {0};
        gs_buf_puts(&b, "{\"model\": ");
        gs_buf_json_str(&b, model);
        gs_buf_printf(&b, ", \"n\": %d, \"m\": %d, \"gaps\": %d, \"chol_Q_ms\": ", n, m, k);
        gs_buf_json_num(&b, 1e3 * chol_q);
        gs_buf_puts(&b, ", \"rows\": [");
        put_json(o, &b);
    }
}

void bench_out_row(bench_out *o, const bench_row *r)
{
    const double ratio = r->median / r->bound;
    if (o->has_csv)
        fprintf(o->csv.fp, "%.2f,%s,%s,%s,%d,%d,%.17g,%.17g,%.17g,%.17g,%.2f,%.2f,%.2f,%.3e,%.3e,"
                           "%.17g,%.17g\n",
                r->fraction, r->method, r->form, r->label, r->gaps, r->optimal, 1e3 * r->median,
                1e3 * r->mean, 1e3 * r->p95, 1e3 * r->max, r->iter, r->cg, r->nact, r->dx, r->dw,
                1e3 * r->bound, ratio);
    if (!o->has_json)
        return;
    static const char *const key[] = {"median_ms", "mean_ms", "p95_ms", "max_ms", "mean_iter",
                                      "mean_cg", "mean_nact", "max_dx_mm", "max_dw_mm",
                                      "bound_ms", "ratio"};
    const double val[] = {1e3 * r->median, 1e3 * r->mean, 1e3 * r->p95, 1e3 * r->max, r->iter,
                          r->cg, r->nact, r->dx, r->dw, 1e3 * r->bound, ratio};
    gs_buf b = {0};
    gs_buf_puts(&b, o->json_rows++ ? ",\n  {\"fraction\": " : "\n  {\"fraction\": ");
    gs_buf_json_num(&b, r->fraction);
    gs_buf_puts(&b, ", \"method\": ");
    gs_buf_json_str(&b, r->method);
    gs_buf_puts(&b, ", \"form\": ");
    gs_buf_json_str(&b, r->form);
    gs_buf_puts(&b, ", \"variant\": ");
    gs_buf_json_str(&b, r->label);
    gs_buf_printf(&b, ", \"gaps\": %d, \"optimal\": %d", r->gaps, r->optimal);
    for (size_t q = 0; q < sizeof key / sizeof key[0]; q++) {
        gs_buf_printf(&b, ", \"%s\": ", key[q]);
        gs_buf_json_num(&b, val[q]);
    }
    gs_buf_puts(&b, "}");
    put_json(o, &b);
}

void bench_out_time(bench_out *o, double fraction, const char *label, int r,
                    const gs_solve_info *info)
{
    if (o->has_times)
        fprintf(o->times.fp, "%.2f,%s,%d,%.17g,%d,%d,%d,%s\n", fraction, label, r,
                1e3 * info->time, info->iterations, info->cg_iterations, info->n_act,
                gs_status_name(info->status));
}

gs_err bench_out_commit(bench_out *o, gs_error *err)
{
    if (o->has_json)
        fputs("\n]}\n", o->json.fp);
    if (o->oom) {
        gs_errorf(err, GS_ERR_NOMEM, "json", "out of memory writing %s", o->json.path);
        bench_out_abort(o);
        return GS_ERR_NOMEM;
    }
    gs_wfile *wf[3] = {&o->csv, &o->json, &o->times};
    int *has[3] = {&o->has_csv, &o->has_json, &o->has_times};
    for (int q = 0; q < 3; q++) {
        if (!*has[q])
            continue;
        *has[q] = 0;
        if (gs_wfile_commit(wf[q], err) != GS_OK) { /* aborts wf[q] */
            bench_out_abort(o);
            return err->code;
        }
    }
    return GS_OK;
}

void bench_out_abort(bench_out *o)
{
    if (o->has_csv)
        gs_wfile_abort(&o->csv);
    if (o->has_json)
        gs_wfile_abort(&o->json);
    if (o->has_times)
        gs_wfile_abort(&o->times);
    o->has_csv = o->has_json = o->has_times = 0;
}
