/*
 * exec.c -- one solve on a worker (see exec.h).
 * Cost beyond the solve itself: O(m) to build the warm set and copy vectors.
 */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

void gsd_exec_key(const gsd_asm *a, const gsd_exec_in *in, char key[40])
{
    char k[GS_HASH_HEX];
    gs_solve_key(gsd_asm_hash(a), gsd_asm_mdl(a)->m, in->load, in->eq, in->g, in->opts->tol, k);
    snprintf(key, 40, "%s", k);
}

gs_err gsd_exec_warm(const gsd_result_row *r, int m, gs_warm *wm, int **act, gs_error *err)
{
    *act = NULL;
    if (!r || !r->lam || r->m != m)
        return GS_OK;
    int cnt = 0;
    for (int i = 0; i < m; i++)
        cnt += r->lam[i] != 0.0;
    *act = malloc(sizeof(int) * (size_t)(cnt > 0 ? cnt : 1));
    if (!*act)
        return gs_errorf(err, GS_ERR_NOMEM, "warm_start", "out of memory");
    cnt = 0;
    for (int i = 0; i < m; i++)
        if (r->lam[i] != 0.0)
            (*act)[cnt++] = i;
    wm->n_act = cnt;
    wm->act = *act;
    wm->lam = r->lam;
    return GS_OK;
}

gs_err gsd_exec_solve(gsd_worker *w, gsd_asm *a, const gsd_exec_in *in, gsd_result_row *out,
                      gs_error *err)
{
    int m = gsd_asm_pc(a)->m;
    gs_solver *sv = gsd_asm_solver(a, w->idx, err);
    if (!sv)
        return err ? err->code : GS_ERR_NOMEM;
    out->m = m;
    out->w = malloc(sizeof(double) * (size_t)m);
    out->lam = malloc(sizeof(double) * (size_t)m);
    if (!out->w || !out->lam) {
        gsd_result_row_free(out);
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    gs_solve_opts o = *in->opts;
    gs_warm wm = {0};
    int *act = NULL;
    gs_err rc = gsd_exec_warm(in->warm, m, &wm, &act, err);
    if (rc) {
        gsd_result_row_free(out);
        return rc;
    }
    o.warm = in->warm && in->warm->lam ? &wm : NULL;
    o.want_x = in->x != NULL;
    gs_problem pb = {.pc = gsd_asm_pc(a), .g = in->g, .load = in->load, .eq = in->eq};
    gs_solve_info info;
    rc = gs_solve(sv, &pb, &o, out->lam, out->w, in->x, &info, err);
    free(act);
    if (rc) {
        gsd_result_row_free(out);
        return rc;
    }
    gsd_exec_row(w, &info, o.tol, out);
    return GS_OK;
}

void gsd_exec_row(gsd_worker *w, const gs_solve_info *info, double tol, gsd_result_row *out)
{
    out->status = info->status;
    out->method = info->method;
    out->form = info->form;
    out->auto_chosen = info->auto_chosen;
    out->warm_used = info->warm_used;
    out->crossover = info->crossover;
    out->n_act = info->n_act;
    out->iterations = info->iterations;
    out->cg_iterations = info->cg_iterations;
    out->time = info->time;
    out->kkt = info->kkt;
    out->kkt_pass = gs_kkt_pass(&info->kkt, tol);
    gsd_metrics_solve(&w->app->metrics, info);
}

gs_err gsd_exec_copy(const gsd_result_row *src, gsd_result_row *dst, gs_error *err)
{
    *dst = *src;
    dst->w = dst->lam = NULL;
    size_t bytes = sizeof(double) * (size_t)src->m;
    if (src->w && (dst->w = malloc(bytes)) != NULL)
        memcpy(dst->w, src->w, bytes);
    if (src->lam && (dst->lam = malloc(bytes)) != NULL)
        memcpy(dst->lam, src->lam, bytes);
    if ((src->w && !dst->w) || (src->lam && !dst->lam)) {
        gsd_result_row_free(dst);
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    }
    gsd_new_id('r', dst->id);
    return GS_OK;
}
