/* test_pcg.c -- the shared preconditioned CG loop (solvers/pcg.h): the
 * solution of a small SPD system (identity and Jacobi preconditioners, from
 * zero and from a start), b = 0, the iteration cap, the breakdown on an
 * indefinite matrix, the cancel flag and a past deadline, a worse start
 * than zero dropped, and the flexible (Polak-Ribiere) variant. (NPM and IPM against the oracle: test_npm.c,
 * test_ipm.c.) */
#include <stdatomic.h>

#include "gs_test.h"
#include "linalg.h"
#include "pcg.h"

#define N 12

typedef struct {
    double A[N * N];
    int calls; /* operator applications */
} tp_ctx;

static void tp_op(void *ctx, const double *x, double *y)
{
    tp_ctx *c = ctx;
    c->calls++;
    for (int i = 0; i < N; i++) {
        double s = 0.0;
        for (int j = 0; j < N; j++)
            s += c->A[i + N * j] * x[j];
        y[i] = s;
    }
}

static void tp_ident(void *ctx, const double *r, double *z)
{
    (void)ctx;
    memcpy(z, r, N * sizeof *z);
}

static void tp_jacobi(void *ctx, const double *r, double *z)
{
    const tp_ctx *c = ctx;
    for (int i = 0; i < N; i++)
        z[i] = r[i] / c->A[i + N * i];
}

/* A = tridiag(-1, d_i, -1), d_i = 2 + i (SPD, condition ~ 10). */
static void tp_matrix(tp_ctx *c, double shift)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < N; i++) {
        c->A[i + N * i] = 2.0 + i + shift;
        if (i + 1 < N)
            c->A[i + 1 + N * i] = c->A[i + N * (i + 1)] = -1.0;
    }
}

static double r[N], z[N], p[N], q[N];

static gs_pcg tp_cg(tp_ctx *c, gs_pcg_prec prec, double rtol, int maxit)
{
    return (gs_pcg){.n = N, .op = tp_op, .prec = prec, .ctx = c, .rtol = rtol, .maxit = maxit,
                    .r = r, .z = z, .p = p, .q = q};
}

static double tp_resid(tp_ctx *c, const double *b, const double *x)
{
    double y[N], s = 0.0, bn = 0.0;
    tp_op(c, x, y);
    for (int i = 0; i < N; i++) {
        s += (b[i] - y[i]) * (b[i] - y[i]);
        bn += b[i] * b[i];
    }
    return sqrt(s / bn);
}

GS_TEST(converges_identity_and_jacobi)
{
    tp_ctx c;
    tp_matrix(&c, 0.0);
    double b[N], x[N];
    for (int i = 0; i < N; i++)
        b[i] = 1.0 + 0.1 * i;
    gs_pcg_prec prec[2] = {tp_ident, tp_jacobi};
    for (int k = 0; k < 2; k++) {
        gs_pcg cg = tp_cg(&c, prec[k], 1e-12, 100);
        int it;
        GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_CONVERGED);
        GS_CHECK(it > 0 && it <= N + 2); /* n steps in exact arithmetic */
        GS_CHECK(tp_resid(&c, b, x) <= 1e-12);
        /* from the solution itself: no iteration */
        cg.x0 = 1;
        GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_CONVERGED);
        GS_CHECK_INT(it, 0);
        /* flexible (Polak-Ribiere) beta: the same system to the same residual */
        cg.x0 = 0;
        cg.flexible = 1;
        GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_CONVERGED);
        GS_CHECK(it > 0 && it <= N + 2);
        GS_CHECK(tp_resid(&c, b, x) <= 1e-12);
    }
}

GS_TEST(zero_rhs_and_worse_start)
{
    tp_ctx c;
    tp_matrix(&c, 0.0);
    double b[N] = {0}, x[N];
    for (int i = 0; i < N; i++)
        x[i] = 5.0;
    gs_pcg cg = tp_cg(&c, tp_jacobi, 1e-10, 100);
    cg.x0 = 1;
    int it = -1;
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_CONVERGED);
    GS_CHECK_INT(it, 0);
    for (int i = 0; i < N; i++)
        GS_CHECK(x[i] == 0.0);
    /* a start far worse than zero is dropped: same iterations as from zero */
    for (int i = 0; i < N; i++) {
        b[i] = 1.0;
        x[i] = 1e6 * (i % 2 ? 1 : -1);
    }
    int it0;
    double x0[N];
    cg.x0 = 0;
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x0, &it0), GS_PCG_CONVERGED);
    cg.x0 = 1;
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_CONVERGED);
    GS_CHECK_INT(it, it0);
    for (int i = 0; i < N; i++)
        GS_CHECK(x[i] == x0[i]);
}

GS_TEST(cap_breakdown_cancel_deadline)
{
    tp_ctx c;
    tp_matrix(&c, 0.0);
    double b[N], x[N];
    for (int i = 0; i < N; i++)
        b[i] = (i % 3) - 1.0;
    int it;
    gs_pcg cg = tp_cg(&c, tp_ident, 1e-14, 2);
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_MAX_ITER);
    GS_CHECK_INT(it, 2);
    /* indefinite: a negative curvature direction */
    tp_matrix(&c, -8.0);
    for (int i = 0; i < N; i++)
        b[i] = i == 0 ? 1.0 : 0.0; /* e_0: p'Ap = A_00 = -6 at once */
    cg = tp_cg(&c, tp_ident, 1e-12, 100);
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_BREAKDOWN);
    GS_CHECK_INT(it, 0);
    tp_matrix(&c, 0.0);
    atomic_int flag = 1;
    cg.cancel = &flag;
    c.calls = 0;
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_CANCELLED);
    GS_CHECK_INT(it, 0);
    GS_CHECK_INT(c.calls, 0);
    atomic_store(&flag, 0);
    cg.deadline = gs_now() - 1.0;
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_TIME_LIMIT);
    GS_CHECK_INT(it, 0);
    cg.deadline = gs_now() + 3600.0; /* far away: as without */
    GS_CHECK_INT(gs_pcg_solve(&cg, b, x, &it), GS_PCG_CONVERGED);
}

GS_TEST_MAIN()
