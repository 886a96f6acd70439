/* ref_adapter.c -- the reference oracle (core/refsolve.h) as a solver method,
 * so that benchmarks and the daemon can run it through the same interface. */
#include "refsolve.h"
#include "solver_impl.h"

static gs_err ref_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, gs_form form,
                        double *lam, gs_solve_info *info, gs_error *err)
{
    gs_ref_opts ro;
    gs_ref_default_opts(&ro);
    ro.max_iter = o->max_iter;
    gs_ref_info ri;
    gs_err rc = gs_ref_solve(pb, &ro, lam, NULL, &ri, err);
    info->status = ri.status;
    info->iterations = ri.iterations + ri.drops;
    return rc;
}

const gs_method_ops gs_method_ref = {
    .name = "ref",
    .forms = 1u << GS_FORM_DUAL,
    .default_form = GS_FORM_DUAL,
    .solve = ref_solve,
};
