/*
 * render.h -- JSON views of results and jobs (shared by several endpoints).
 */
#ifndef GSD_RENDER_H
#define GSD_RENDER_H

#include "buf.h"
#include "jobs.h"
#include "spec.h"
#include "store.h"

/* A result: ids, status, solver, counts, time, KKT, contact set, and the
 * vectors selected by ret (GSD_RET_*); x (n) only when given. cached < 0:
 * the "cached" key is left out. */
void gsd_render_result(const gsd_result_row *r, unsigned ret, const double *x, int n, int cached,
                       gs_buf *b);
/* A job row with live progress when p != NULL. */
void gsd_render_job(const gsd_job_row *row, const gsd_job_progress *p, gs_buf *b);

#endif
