/*
 * sink_mem.c -- the memory result sink (runner.h): residual gaps of every row
 * in one rows x m array, the solve info per row. Rows are disjoint, so the
 * workers write without a lock. Cost per row: one copy of m doubles.
 */
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static gs_err mem_put(void *ctx, int slot, const gs_run_result *r, gs_error *err)
{
    gs_mem_sink *s = ctx;
    memcpy(s->W + (size_t)r->row * (size_t)s->m, r->w, sizeof(double) * (size_t)s->m);
    if (s->lam)
        memcpy(s->lam + (size_t)r->row * (size_t)s->m, r->lam, sizeof(double) * (size_t)s->m);
    s->info[r->row] = *r->info;
    s->ran[r->row] = 1;
    return GS_OK;
}

static gs_err mem_commit(void *ctx, int slot, const int *rows, int n, gs_error *err)
{
    return GS_OK;
}

gs_err gs_mem_sink_init(gs_mem_sink *s, long long rows, int m, int with_lam,
                        gs_result_sink *sink, gs_error *err)
{
    memset(s, 0, sizeof *s);
    s->rows = rows;
    s->m = m;
    size_t cells = (size_t)rows * (size_t)m;
    s->W = malloc(sizeof(double) * (cells ? cells : 1));
    s->lam = with_lam ? malloc(sizeof(double) * (cells ? cells : 1)) : NULL;
    s->info = calloc((size_t)(rows ? rows : 1), sizeof *s->info);
    s->ran = calloc((size_t)(rows ? rows : 1), 1);
    if (!s->W || (with_lam && !s->lam) || !s->info || !s->ran) {
        gs_mem_sink_free(s);
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory for %lld results of %d values",
                         rows, m);
    }
    *sink = (gs_result_sink){.put = mem_put, .commit = mem_commit, .ctx = s};
    return GS_OK;
}

void gs_mem_sink_free(gs_mem_sink *s)
{
    free(s->W);
    free(s->lam);
    free(s->info);
    free(s->ran);
    memset(s, 0, sizeof *s);
}
