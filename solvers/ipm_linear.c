/*
 * ipm_linear.c -- the interior point method's normal system (ipm_impl.h):
 * H dlam = r with H = Q + Lambda^-1 Y on the run's system (all pairs, or a
 * working set's Q_SS).
 * Variants (opts.ipm_linear):
 *   mixed (default): a Cholesky of H each iteration in single precision
 *     (spotrf on a float copy of the lower triangle of Q + Lambda^-1 Y: the
 *     flops of a double Cholesky at twice the rate, half its memory) as the
 *     preconditioner of a double PCG (flexible beta, two strsv per
 *     application), which converges in 2-4 iterations because the
 *     preconditioner is H up to float round-off; where spotrf fails (H too
 *     ill-conditioned for float) that iteration factors H in double instead
 *     and the PCG's first iteration solves it;
 *   split: PCG with the paper's preconditioner
 *     P3 = (L_Q + D)(L_Q + D)',  D = sqrt(Lambda^-1 Y),
 *     applied as two triangular solves with L_Q whose diagonal is read as
 *     diag(L_Q) + D (no refactorization, O(m^2)) in single precision: a float
 *     copy of L_Q per workspace (m^2 floats, made on the first split solve),
 *     its diagonal overwritten each iteration, two strsv per application
 *     (half the memory traffic of the double sweeps; only the preconditioner
 *     is inexact, the PCG stays double and uses the flexible Polak-Ribiere
 *     beta; IPM_SPLIT_FP32 0 restores the double sweeps);
 *   jacobi: PCG with diag(H);
 *   direct: a Cholesky of H each iteration in double (for comparison).
 * The PCG tolerance is
 * relative, eta = clamp(mu / mu0, 1e-10, 1e-3), so the steps are inexact early
 * and accurate late; the CG residual enters the next primal residual s2,
 * which the infeasible Newton step then removes. PCG is capped at 2m + 50
 * iterations; a capped solve is used as an inexact step. Predictor PCG
 * starts from 0, corrector PCG from the predictor's dlam. The PCG loop is
 * the solvers' shared one (pcg.h, also NPM's); it checks the cancel flag
 * every iteration and the deadline every GS_PCG_CLOCK_EVERY, so a solve
 * stops within one PCG iteration (status cancelled / time_limit, lam the
 * current iterate), or, with mixed and direct, after the factorization
 * under way (m^3/3 flops: 0.1 s at m = 2,603, 1 s at 5,628; the IPM loop
 * checks before each).
 */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "ipm_impl.h"
#include "linalg.h"
#include "pcg.h"

/* PCG cap: IPM_PCG_CAP_PER_PAIR m + IPM_PCG_CAP_BASE iterations (twice the
 * m of exact arithmetic plus a margin; a capped solve is an inexact step). */
#define IPM_PCG_CAP_PER_PAIR 2
#define IPM_PCG_CAP_BASE 50
/* With the single-precision preconditioner: flexible (Polak-Ribiere) PCG. */
#ifndef IPM_PCG_FLEXIBLE
#define IPM_PCG_FLEXIBLE 1
#endif

void ipm_h_mul(const ipm_sys *y, const double *hd, const double *v, double *q)
{
    const int m = y->m;
    cblas_dsymv(CblasColMajor, CblasLower, m, 1.0, y->Q, y->m, v, 1, 0.0, q, 1);
    for (int i = 0; i < m; i++)
        q[i] += hd[i] * v[i];
}

/* z = P3^-1 r: (L_Q + D) z1 = r, (L_Q + D)' z = z1, the diagonal of L_Q read
 * as diag(L_Q) + D (dg = diag(L_Q) + D). O(m^2), columns contiguous. */
static void split_apply(const ipm_sys *y, const double *dg, const double *r, double *z)
{
    const int m = y->m;
    const double *L = y->LQ;
    if (z != r)
        memcpy(z, r, (size_t)m * sizeof *z);
    for (int j = 0; j < m; j++) {
        const double *lj = L + (size_t)j * m;
        z[j] /= dg[j];
        if (j + 1 < m && z[j] != 0.0)
            cblas_daxpy(m - j - 1, -z[j], lj + j + 1, 1, z + j + 1, 1);
    }
    for (int j = m - 1; j >= 0; j--) {
        const double *lj = L + (size_t)j * m;
        double acc = j + 1 < m ? cblas_ddot(m - j - 1, lj + j + 1, 1, z + j + 1, 1) : 0.0;
        z[j] = (z[j] - acc) / dg[j];
    }
}

/* The PCG callbacks (pcg.h) on the workspace: the operator H, the split
 * preconditioner P3 and Jacobi (both read ws->dg, set by prepare). */
typedef struct {
    ipm_ws *ws;
    const ipm_sys *sys;
} ipm_cg_ctx;

static void cg_h(void *ctx, const double *x, double *y)
{
    const ipm_cg_ctx *c = ctx;
    ipm_h_mul(c->sys, c->ws->hd, x, y);
}

/* z = P3^-1 r: in single precision with the float copy Lf whose diagonal
 * holds diag(L_Q) + D (prepare), else the double sweeps. */
static void cg_split(void *ctx, const double *r, double *z)
{
    const ipm_cg_ctx *c = ctx;
    if (c->ws->Lf)
        gs_llt_solve32(c->ws->Lf, c->sys->m, c->ws->rf, r, z);
    else
        split_apply(c->sys, c->ws->dg, r, z);
}

/* z = H^-1 r with this iteration's factor (float, or double where float
 * failed: mixchol.h). O(m^2). */
static void cg_mixed(void *ctx, const double *r, double *z)
{
    const ipm_cg_ctx *c = ctx;
    gs_mixchol_solve(&c->ws->mc, r, z);
}

static void cg_jacobi(void *ctx, const double *r, double *z)
{
    const ipm_cg_ctx *c = ctx;
    for (int i = 0; i < c->sys->m; i++)
        z[i] = r[i] / c->ws->dg[i];
}

int ipm_prepare(ipm_ws *ws, const ipm_sys *y, gs_ipm_linear lin)
{
    const int m = y->m;
    if (lin == GS_IPM_PCG_SPLIT) {
        for (int i = 0; i < m; i++)
            ws->dg[i] = y->LQ[(size_t)i * m + i] + sqrt(ws->hd[i]);
        if (ws->Lf)
            for (int i = 0; i < m; i++)
                ws->Lf[(size_t)i * m + i] = (float)ws->dg[i];
    } else if (lin == GS_IPM_PCG_JACOBI) {
        for (int i = 0; i < m; i++)
            ws->dg[i] = y->qd[i] + ws->hd[i];
    } else if (lin == GS_IPM_MIXED) {
        gs_mixchol_resize(&ws->mc, m);
        return gs_mixchol_factor(&ws->mc, y->Q, y->m, ws->hd, NULL) == GS_OK ? 0 : -1;
    } else {
        return gs_chol_plus_diag(ws->Hf, m, y->Q, y->m, ws->hd, "", NULL) != GS_OK ? -1 : 0;
    }
    return 0;
}

int ipm_hsolve(ipm_ws *ws, const ipm_sys *y, const gs_solve_opts *o, gs_ipm_linear lin,
               const double *b, double *x, double eta, gs_status *stop)
{
    const int m = y->m;
    if (lin == GS_IPM_DIRECT) {
        memcpy(x, b, (size_t)m * sizeof *x);
        gs_llt_solve64(ws->Hf, m, x);
        for (int i = 0; i < m; i++)
            if (!isfinite(x[i]))
                return -1;
        return 0;
    }
    ipm_cg_ctx ctx = {ws, y};
    const gs_pcg cg = {.n = m, .op = cg_h,
                       .prec = lin == GS_IPM_PCG_SPLIT ? cg_split
                               : lin == GS_IPM_MIXED   ? cg_mixed
                                                       : cg_jacobi,
                       .ctx = &ctx, .rtol = eta,
                       .maxit = IPM_PCG_CAP_PER_PAIR * m + IPM_PCG_CAP_BASE, .x0 = 1,
                       .flexible = (lin == GS_IPM_PCG_SPLIT && ws->Lf && IPM_PCG_FLEXIBLE) ||
                                   lin == GS_IPM_MIXED,
                       .cancel = o->cancel, .deadline = o->deadline, .r = ws->cr, .z = ws->cz,
                       .p = ws->cp, .q = ws->cq};
    int it;
    switch (gs_pcg_solve(&cg, b, x, &it)) {
    case GS_PCG_BREAKDOWN:
        return -1;
    case GS_PCG_CANCELLED:
        *stop = GS_STATUS_CANCELLED;
        return -2;
    case GS_PCG_TIME_LIMIT:
        *stop = GS_STATUS_TIME_LIMIT;
        return -2;
    default: /* converged, or capped: an inexact step */
        return it;
    }
}

