/*
 * pcg.h -- private: the one preconditioned conjugate-gradient loop of the
 * solvers, behind every iterative linear solve: NPM's reduced Newton system
 * Q_SS z = b (npm_linear.c, Jacobi) and IPM's normal system
 * H = Q + Lambda^-1 Y (ipm.c, split P3 or Jacobi). The caller owns the
 * matrix and the preconditioner (two callbacks on its context); this file
 * owns the recurrence, the stopping test and the breakdown checks.
 *
 * Recurrence (Hestenes-Stiefel with preconditioner M): r = b - A x,
 * z = M^-1 r, p = z (then z + beta p), alpha = r'z / p'Ap, x += alpha p,
 * r -= alpha Ap; plain loops on the vectors (pcg.c: independent of the
 * BLAS kernel). Stops when ||r||_2 <= rtol
 * ||b||_2 (converged), after maxit iterations (max_iter: x is the inexact
 * iterate, usable), when p'Ap <= 0 or r'z or ||r|| is not finite
 * (breakdown: A or M not numerically SPD), or when the cancel flag is set
 * or the deadline has passed (checked every iteration / every
 * GS_PCG_CLOCK_EVERY iterations: a relaxed atomic load, a clock read, against
 * the O(n^2) or O(k^2) of an iteration). b = 0 gives x = 0, 0 iterations.
 * Flexible (flexible = 1, for a preconditioner that is not exactly
 * symmetric or constant, e.g. applied in single precision): beta =
 * z'(r - r_old) / r_old'z_old (Polak-Ribiere; Golub & Ye 1999, Notay 2000)
 * instead of z'r / r_old'z_old, computed as -alpha z'q with the q = A p of
 * the last step (no extra vector, one more dot product).
 * Start: x = 0 (x0 = 0), or the x given (x0 = 1) unless its residual is
 * larger than ||b|| (then from 0: a worse start than zero is dropped).
 * Cost per iteration: one op, one prec, two dot products, three axpy-like
 * sweeps and one norm over n; no allocation (the caller gives r, z, p, q).
 */
#ifndef GS_PCG_H
#define GS_PCG_H

#include <stdatomic.h>

/* y = A x (n). */
typedef void (*gs_pcg_op)(void *ctx, const double *x, double *y);
/* z = M^-1 r (n); z never aliases r. */
typedef void (*gs_pcg_prec)(void *ctx, const double *r, double *z);

typedef enum {
    GS_PCG_CONVERGED = 0, /* ||r|| <= rtol ||b|| */
    GS_PCG_MAX_ITER,      /* maxit iterations without convergence: x inexact */
    GS_PCG_BREAKDOWN,     /* p'Ap <= 0 or non-finite values */
    GS_PCG_CANCELLED,     /* *cancel set */
    GS_PCG_TIME_LIMIT     /* deadline passed */
} gs_pcg_status;

/* The deadline is read every this many iterations (a clock read costs
 * ~25 ns, an iteration of a tiny NPM system not much more). */
#define GS_PCG_CLOCK_EVERY 16

typedef struct {
    int n;                    /* order */
    gs_pcg_op op;             /* A */
    gs_pcg_prec prec;         /* M^-1 */
    void *ctx;                /* passed to op and prec */
    double rtol;              /* relative residual target */
    int maxit;                /* iteration cap */
    int x0;                   /* 1: start from the x given; 0: from x = 0 */
    int flexible;             /* 1: Polak-Ribiere beta (below); 0: Fletcher-Reeves */
    const atomic_int *cancel; /* NULL: none */
    double deadline;          /* gs_now() seconds; 0: none */
    double *r, *z, *p, *q;    /* n scratch each */
} gs_pcg;

/* Solve A x = b. *iters: the iterations done (also on breakdown or stop). */
gs_pcg_status gs_pcg_solve(const gs_pcg *cg, const double *b, double *x, int *iters);

#endif
