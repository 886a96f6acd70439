/*
 * pcg.c -- the preconditioned conjugate-gradient loop (pcg.h), shared by
 * NPM's reduced Newton system and IPM's normal system.
 */
#include "pcg.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "linalg.h"

/* ||v||_2 and u'v as plain sequential sums: the same value whatever BLAS
 * kernel is loaded (OPENBLAS_CORETYPE), and the arithmetic of NPM's former
 * CG loop, so its iterates did not change with the move here. (p'Ap is
 * cblas_ddot, as in both former loops.) O(n), negligible next to op. */
static double pcg_norm(int n, const double *v)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += v[i] * v[i];
    return sqrt(s);
}

static double pcg_dot(int n, const double *u, const double *v)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += u[i] * v[i];
    return s;
}

/* The stop checks of pcg.h, GS_PCG_CONVERGED to go on. */
static gs_pcg_status pcg_stop(const gs_pcg *cg, int it)
{
    if (cg->cancel && atomic_load_explicit(cg->cancel, memory_order_relaxed))
        return GS_PCG_CANCELLED;
    if (cg->deadline > 0.0 && it % GS_PCG_CLOCK_EVERY == 0 && gs_now() >= cg->deadline)
        return GS_PCG_TIME_LIMIT;
    return GS_PCG_CONVERGED;
}

gs_pcg_status gs_pcg_solve(const gs_pcg *cg, const double *b, double *x, int *iters)
{
    const int n = cg->n;
    double *r = cg->r, *z = cg->z, *p = cg->p, *q = cg->q;
    *iters = 0;
    const double bn = pcg_norm(n, b);
    if (bn == 0.0) {
        memset(x, 0, (size_t)n * sizeof *x);
        return GS_PCG_CONVERGED;
    }
    double rn;
    if (cg->x0) {
        cg->op(cg->ctx, x, q);
        for (int i = 0; i < n; i++)
            r[i] = b[i] - q[i];
        rn = pcg_norm(n, r);
    } else {
        rn = 2.0 * bn; /* start from zero below */
    }
    if (rn > bn) { /* a worse start than zero */
        memset(x, 0, (size_t)n * sizeof *x);
        memcpy(r, b, (size_t)n * sizeof *r);
        rn = bn;
    }
    const double tol = cg->rtol * bn;
    int it = 0;
    double rz = 0.0, a = 0.0;
    gs_pcg_status st = GS_PCG_CONVERGED;
    while (rn > tol && it < cg->maxit) {
        if ((st = pcg_stop(cg, it)) != GS_PCG_CONVERGED)
            break;
        cg->prec(cg->ctx, r, z);
        double rz_new = pcg_dot(n, r, z);
        if (it == 0)
            memcpy(p, z, (size_t)n * sizeof *p);
        else {
            /* q still holds A p of the last step: r - r_old = -a q */
            double beta = (cg->flexible ? -a * pcg_dot(n, z, q) : rz_new) / rz;
            for (int i = 0; i < n; i++)
                p[i] = z[i] + beta * p[i];
        }
        rz = rz_new;
        cg->op(cg->ctx, p, q);
        double pq = cblas_ddot(n, p, 1, q, 1);
        if (!(pq > 0.0) || !isfinite(rz)) {
            st = GS_PCG_BREAKDOWN;
            break;
        }
        a = rz / pq;
        for (int i = 0; i < n; i++) {
            x[i] += a * p[i];
            r[i] -= a * q[i];
        }
        rn = pcg_norm(n, r);
        it++;
    }
    *iters = it;
    if (st != GS_PCG_CONVERGED)
        return st;
    if (!isfinite(rn))
        return GS_PCG_BREAKDOWN;
    return rn <= tol ? GS_PCG_CONVERGED : GS_PCG_MAX_ITER;
}
