/*
 * exec.h -- one solve on a worker, shared by single solves and clouds.
 *
 * Owns: turning (assembly, gap vector, load, equality flags, options, warm
 * result) into a gs_solve call on the worker's own solver and a result row
 * ready for the store; the cache key of a solve; metrics of every solve.
 */
#ifndef GSD_EXEC_H
#define GSD_EXEC_H

#include "pool.h"
#include "registry.h"
#include "store.h"

typedef struct {
    const double *g;            /* m gaps */
    const double *load;         /* m pair loads (NULL: none) */
    const unsigned char *eq;    /* m flags (NULL: none) */
    const gs_solve_opts *opts;
    const gsd_result_row *warm; /* previous result (lam needed), NULL: cold */
    double *x;                  /* n displacements out, or NULL */
} gsd_exec_in;

/* Solve on a ready assembly. out gets status, solver, counts, time, KKT, and
 * malloc'ed w and lam (m each); the caller fills ids and the cache key.
 * API errors (no memory) are returned; solver outcomes are out->status. */
gs_err gsd_exec_solve(gsd_worker *w, gsd_asm *a, const gsd_exec_in *in, gsd_result_row *out,
                      gs_error *err);
/* Cache key of a solve (see core/hash.h gs_solve_key). */
void gsd_exec_key(const gsd_asm *a, const gsd_exec_in *in, char key[40]);
/* Fill the outcome fields of out from a solve's info (status, solver,
 * counts, time, KKT and its pass at tol) and count the solve in the metrics. */
void gsd_exec_row(gsd_worker *w, const gs_solve_info *info, double tol, gsd_result_row *out);
/* The warm start of a stored result (its contact set and multipliers; *act
 * is malloc'ed, free it after the solve). Leaves wm empty if r has no lam. */
gs_err gsd_exec_warm(const gsd_result_row *r, int m, gs_warm *wm, int **act, gs_error *err);
/* Copy a stored result as a new row (new id, w and lam duplicated). */
gs_err gsd_exec_copy(const gsd_result_row *src, gsd_result_row *dst, gs_error *err);

#endif
