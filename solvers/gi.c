/* gi.c -- the Goldfarb-Idnani method's entry in the method table: dispatch
 * to the formulation's file (see gi.h). */
#include "gi.h"

static gs_err gi_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, gs_form form,
                       double *lam, gs_solve_info *info, gs_error *err)
{
    switch (form) {
    case GS_FORM_RELATIVE:
        return gs_gi_relative_solve(s, pb, o, lam, info, err);
    case GS_FORM_DUAL:
        return gs_gi_dual_solve(s, pb, o, lam, info, err);
    case GS_FORM_PRIMAL:
        return gs_gi_primal_solve(s, pb, o, lam, info, err);
    default:
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "form", "gi: formulation %s not available",
                         gs_form_name(form));
    }
}

const gs_method_ops gs_method_gi = {
    .name = "gi",
    .forms = (1u << GS_FORM_RELATIVE) | (1u << GS_FORM_DUAL) | (1u << GS_FORM_PRIMAL),
    .default_form = GS_FORM_RELATIVE,
    .solve = gi_solve,
};
