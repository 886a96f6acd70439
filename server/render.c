/*
 * render.c -- JSON views of results and jobs (see render.h).
 * Cost: O(m) per result (the vectors), O(1) per job.
 */
#include "render.h"

#include <string.h>

static void null_or_str(gs_buf *b, const char *s)
{
    if (s && *s)
        gs_buf_json_str(b, s);
    else
        gs_buf_puts(b, "null");
}

void gsd_render_result(const gsd_result_row *r, unsigned ret, const double *x, int n, int cached,
                       gs_buf *b)
{
    gs_buf_puts(b, "{\"id\":");
    gs_buf_json_str(b, r->id);
    gs_buf_puts(b, ",\"assembly_id\":");
    gs_buf_json_str(b, r->assembly_id);
    gs_buf_puts(b, ",\"job_id\":");
    null_or_str(b, r->job_id);
    if (r->job_id[0])
        gs_buf_printf(b, ",\"job_index\":%d", r->job_index);
    if (cached >= 0)
        gs_buf_printf(b, ",\"cached\":%s", cached ? "true" : "false");
    gs_buf_puts(b, ",\"status\":");
    gs_buf_json_str(b, gs_status_name(r->status));
    gs_buf_puts(b, ",\"solver\":");
    gs_buf_json_str(b, gs_method_name(r->method));
    gs_buf_puts(b, ",\"formulation\":");
    gs_buf_json_str(b, gs_form_name(r->form));
    gs_buf_printf(b,
                   ",\"auto\":%s,\"warm_start_used\":%s,\"crossover\":%s,\"n_act\":%d,"
                   "\"iterations\":%d,\"cg_iterations\":%d,\"time_ms\":",
                   r->auto_chosen ? "true" : "false", r->warm_used ? "true" : "false",
                   r->crossover ? "true" : "false", r->n_act, r->iterations, r->cg_iterations);
    gs_buf_json_num(b, 1e3 * r->time);
    double wmax = 0;
    if (r->w)
        for (int k = 0; k < r->m; k++)
            if (r->w[k] > wmax)
                wmax = r->w[k];
    if (r->w) {
        gs_buf_puts(b, ",\"max_residual\":");
        gs_buf_json_num(b, wmax);
    }
    if (ret & GSD_RET_KKT) {
        const struct { const char *name; double v; } f[6] = {
            {"primal_infeas", r->kkt.primal_infeas}, {"dual_infeas", r->kkt.dual_infeas},
            {"complementarity", r->kkt.complementarity}, {"stationarity", r->kkt.stationarity},
            {"gap", r->kkt.gap}, {"objective", r->kkt.obj_primal}};
        gs_buf_printf(b, ",\"kkt\":{\"pass\":%s", r->kkt_pass ? "true" : "false");
        for (int i = 0; i < 6; i++) {
            gs_buf_printf(b, ",\"%s\":", f[i].name);
            gs_buf_json_num(b, f[i].v);
        }
        gs_buf_puts(b, "}");
    }
    if (r->lam) {
        gs_buf_puts(b, ",\"contact\":[");
        int first = 1;
        for (int k = 0; k < r->m; k++)
            if (r->lam[k] != 0.0) {
                gs_buf_printf(b, first ? "%d" : ",%d", k);
                first = 0;
            }
        gs_buf_puts(b, "]");
    }
    if ((ret & GSD_RET_W) && r->w) {
        gs_buf_puts(b, ",\"w\":");
        gs_buf_json_nums(b, r->w, r->m);
    }
    if ((ret & GSD_RET_LAMBDA) && r->lam) {
        gs_buf_puts(b, ",\"lambda\":");
        gs_buf_json_nums(b, r->lam, r->m);
    }
    if ((ret & GSD_RET_X) && x) {
        gs_buf_puts(b, ",\"x\":");
        gs_buf_json_nums(b, x, n);
    }
    gs_buf_printf(b, ",\"created_at\":%.3f}", r->created_at);
}

void gsd_render_job(const gsd_job_row *row, const gsd_job_progress *p, gs_buf *b)
{
    gs_buf_puts(b, "{\"id\":");
    gs_buf_json_str(b, row->id);
    gs_buf_puts(b, ",\"assembly_id\":");
    gs_buf_json_str(b, row->assembly_id);
    gs_buf_puts(b, ",\"status\":");
    gs_buf_json_str(b, row->status);
    gs_buf_puts(b, ",\"error\":");
    if (row->error[0])
        gs_buf_json_str(b, row->error);
    else
        gs_buf_puts(b, "null");
    int done = p ? p->done : row->done, failed = p ? p->failed : row->failed;
    gs_buf_printf(b, ",\"total\":%d,\"done\":%d,\"failed\":%d,\"progress\":", row->total, done,
                   failed);
    gs_buf_json_num(b, row->total > 0 ? (double)done / row->total : 1.0);
    gs_buf_puts(b, ",\"solves_per_s\":");
    if (p && p->rate >= 0)
        gs_buf_json_num(b, p->rate);
    else if (p) /* queued: not started */
        gs_buf_puts(b, "null");
    else if (row->finished_at > row->started_at && row->started_at > 0) /* since the last start */
        gs_buf_json_num(b, (double)(row->done - row->done_at_start) /
                                (row->finished_at - row->started_at));
    else
        gs_buf_puts(b, "null");
    gs_buf_puts(b, ",\"eta_s\":");
    if (p && p->eta >= 0)
        gs_buf_json_num(b, p->eta);
    else
        gs_buf_puts(b, !strcmp(row->status, "done") ? "0" : "null");
    gs_buf_puts(b, ",\"mean_solve_ms\":");
    gs_buf_json_num(b, row->done > 0 ? 1e3 * row->solve_time_sum / row->done : 0);
    gs_buf_printf(b, ",\"iterations\":%lld,\"created_at\":%.3f,\"started_at\":",
                   row->iterations_sum, row->created_at);
    if (row->started_at > 0)
        gs_buf_printf(b, "%.3f", row->started_at);
    else
        gs_buf_puts(b, "null");
    gs_buf_puts(b, ",\"finished_at\":");
    if (row->finished_at > 0)
        gs_buf_printf(b, "%.3f", row->finished_at);
    else
        gs_buf_puts(b, "null");
    gs_buf_puts(b, ",\"options\":");
    gs_buf_puts(b, row->options_json && row->options_json[0] ? row->options_json : "{}");
    gs_buf_printf(b, ",\"links\":{\"self\":\"/v1/jobs/%s\",\"results\":\"/v1/jobs/%s/results\","
                      "\"summary\":\"/v1/jobs/%s/summary\"}}",
                   row->id, row->id, row->id);
}
