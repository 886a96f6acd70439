/* problem.c -- per-solve dual data and back substitution (see problem.h). */
#include "problem.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "linalg.h"

gs_err gs_problem_check(const gs_problem *pb, gs_error *err)
{
    char field[32];
    for (int k = 0; k < pb->pc->m; k++) {
        if (!isfinite(pb->g[k])) {
            snprintf(field, sizeof field, "g[%d]", k);
            return gs_errorf(err, GS_ERR_NONFINITE, field, "gap of pair %d is not finite", k);
        }
        if (pb->load && (!isfinite(pb->load[k]) || pb->load[k] < 0.0)) {
            snprintf(field, sizeof field, "load[%d]", k);
            return gs_errorf(err, isfinite(pb->load[k]) ? GS_ERR_INVALID : GS_ERR_NONFINITE,
                             field, "load of pair %d must be finite and >= 0, got %g", k,
                             pb->load[k]);
        }
    }
    return GS_OK;
}

void gs_problem_load_part(const gs_problem *pb, double *ul, double *s, double *work)
{
    const gs_precomp *pc = pb->pc;
    const int m = pc->m;
    double sv = pc->s0;
    memcpy(ul, pc->u0, (size_t)m * sizeof *ul);
    if (pb->load) {
        /* work = Q load over the support of load: O(m nnz(load)) */
        memset(work, 0, (size_t)m * sizeof *work);
        gs_sparse_mul(m, pc->Q, (size_t)m, pb->load, m, work);
        for (int k = 0; k < m; k++) {
            if (pb->load[k] != 0.0)
                sv += pb->load[k] * (pc->u0[k] + 0.5 * work[k]);
            ul[k] += work[k];
        }
    }
    if (s)
        *s = sv;
}

void gs_problem_dual_data(const gs_problem *pb, double *p, double *s, double *work)
{
    gs_problem_load_part(pb, p, s, work);
    for (int k = 0; k < pb->pc->m; k++)
        p[k] -= pb->g[k];
}

void gs_problem_load_vector(const gs_problem *pb, double *f)
{
    const gs_model *mdl = pb->pc->mdl;
    if (mdl->f)
        memcpy(f, mdl->f, (size_t)mdl->n * sizeof *f);
    else
        memset(f, 0, (size_t)mdl->n * sizeof *f);
    if (pb->load)
        gs_model_A_add(mdl, 1.0, pb->load, f);
}

int gs_problem_primal(const gs_problem *pb, const double *lam, double *x)
{
    gs_problem_load_vector(pb, x);
    gs_model_A_add(pb->pc->mdl, -1.0, lam, x);
    return gs_precomp_kinv(pb->pc, x);
}
