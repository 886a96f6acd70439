/*
 * factors.c -- the precomputation of a run: loaded from a saved factor file
 * or built and saved there (runner.h gs_run_factors). The same factors give
 * bit-identical results in every front end; a new build may not (OpenBLAS
 * partitions dpotrf / dsyrk by its thread count, so the rounding of Q and the
 * factors depends on it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "precomp_io.h"
#include "runner.h"

gs_err gs_run_factors(gs_model *mdl, const char *path, unsigned flags, int release_k,
                      gs_precomp **pc, int *loaded, gs_error *err)
{
    *pc = NULL;
    *loaded = 0;
    struct stat sb;
    if (path && stat(path, &sb) == 0) {
        if (release_k)
            gs_model_release_dense(mdl, NULL);
        gs_err rc = gs_precomp_load_ex(mdl, path, 0, flags, pc, err);
        if (rc) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            return gs_errorf(err, rc, "factors", "%.400s (remove the file to recompute it)",
                             msg);
        }
        *loaded = 1;
        return GS_OK;
    }
    if (path) /* the file serves every method and front end: with L_Q */
        flags &= ~(unsigned)GS_PRECOMP_DEFER_LQ;
    /* released: the blocks are factored in place, never held twice */
    double **taken = release_k && mdl->validated ? gs_model_take_dense(mdl, NULL) : NULL;
    gs_err rc = gs_precomp_build_taken(mdl, taken, flags, pc, err);
    free(taken);
    if (!rc && path && (rc = gs_precomp_save(*pc, path, NULL, err)) != GS_OK) {
        gs_precomp_free(*pc);
        *pc = NULL;
    }
    return rc;
}

unsigned gs_run_precomp_flags(const gs_solve_opts *opts)
{
    const int fixed = opts->method != GS_METHOD_AUTO;
    const int reads_lq = fixed && gs_method_needs_lq(opts->method, opts->form);
    const int solves_k = gs_solve_reads_k(opts) || opts->want_x; /* x: the factors */
    return (reads_lq ? 0u : (unsigned)GS_PRECOMP_DEFER_LQ) |
           (solves_k ? 0u : (unsigned)GS_PRECOMP_DEFER_SPARSE);
}
