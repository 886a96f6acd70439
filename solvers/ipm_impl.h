/*
 * ipm_impl.h -- private: the interior point method's workspace, the system
 * one Mehrotra run works on, the options every run of a solve shares, and
 * the functions its files share. The method is described in ipm.c; the
 * files:
 *   ipm.c         the driver: workspace, Mehrotra's predictor-corrector
 *                 iterations, the polish (identification and crossover),
 *                 the method table entry
 *   ipm_linear.c  the normal system H dlam = r: mixed precision Cholesky,
 *                 PCG with the split preconditioner P3 or Jacobi (pcg.h),
 *                 direct Cholesky
 *   ipm_start.c   the starting points: feasible, infeasible, a working
 *                 set's hint
 *   ipm_wset.c    the dual form's working set of pairs
 */
#ifndef GS_IPM_IMPL_H
#define GS_IPM_IMPL_H

#include "cset.h"
#include "mixchol.h"
#include "solver_impl.h"

/* A candidate to join the working set (ipm_wset.c). */
typedef struct {
    double w; /* residual gap (mm): the most violated joins first */
    int i;    /* pair */
} ipm_key;

/* The method's workspace, one per gs_solver (ipm.c allocates it): every
 * vector the iterations use, so that they allocate nothing. */
typedef struct {
    gs_cset cs;
    double *x, *dx, *f, *s1, *t; /* n */
    double *lam, *y, *dl, *dy, *dla, *dya, *s2, *u, *r, *hd, *dg; /* m */
    double *cr, *cz, *cp, *cq; /* m: PCG */
    double *lc, *wr;           /* m: polish */
    int *isE, *list, *list2;   /* m */
    double *Hf;                /* m x m: direct variant (lazy) */
    float *Lf, *rf;            /* m x m, m: split in single precision (lazy) */
    int Lf_full;               /* Lf holds the float copy of pc->LQ (not of a working set's) */
    gs_mixchol mc;             /* mixed: the factor of H (made on the first mixed solve) */
    /* the working set (dual form): its pairs, Q_SS, its Cholesky factor, diagonal and
     * p_S, gathered per round (cap x cap, grown geometrically, lazy) */
    int *S, ms;                /* m: the pairs, ms of them (sorted for each run) */
    unsigned char *inS, *blk;  /* m: member of S; shielded by a pair taken this round */
    ipm_key *keys;             /* m: candidates to join, by residual gap */
    double *sqd;               /* m: sqrt(diag(Q)) */
    double *Qs, *LQs, *qds, *ps;
    int cap, lcap;             /* orders Qs / qds / ps and LQs (only where used) hold */
    const double *hint_lam, *hint_w; /* m: a working set's previous run (start_hint), or NULL */
} ipm_ws;

/* The system one Mehrotra run works on: every pair (the primal form, and
 * the dual on all pairs), or a working set S of pairs (the dual form): Q_SS
 * and p_S. Position c of every per-pair vector of the run is pair idx[c].
 * Matrices are m x m, column-major, leading dimension m. */
typedef struct {
    int m;             /* positions */
    const double *Q;   /* Q_SS (lower triangle read) */
    const double *LQ;  /* its Cholesky factor (lower), or NULL where not needed */
    const double *qd;  /* diag(Q_SS) */
    const double *p;   /* p_S */
    const int *idx;    /* the pair at each position; NULL: position = pair */
    int singular;      /* Q singular (dependent pairs): LQ factors Q + delta diag(Q)
                          (ipm_wset.c), a preconditioner but no start (|Q^-1 p| would be
                          ~1/delta along the null space): the run starts feasible */
} ipm_sys;

/* The pair at position c of system y. */
static inline int ipm_sys_pair(const ipm_sys *y, int c)
{
    return y->idx ? y->idx[c] : c;
}

/* The system of every pair: the precomputation's own Q, L_Q and p. */
static inline ipm_sys ipm_sys_all(const gs_solver *s)
{
    return (ipm_sys){.m = s->m, .Q = s->pc->Q, .LQ = s->pc->LQ, .qd = s->pc->qdiag, .p = s->p};
}

/* What every run of one solve shares: the full problem's scales (so that
 * each working set's run is measured alike), the options. */
typedef struct {
    int dual;                 /* the dual form: no x, no K */
    gs_ipm_linear lin;
    gs_ipm_start st;
    int max_iter;             /* IPM iterations per run */
    double gmax, pmax, ysc, lsc, y_floor, l_floor;
} ipm_par;

/* ---- ipm_linear.c -------------------------------------------------------- */

/* q = H v = Q v + hd .* v on the system. O(m^2). */
void ipm_h_mul(const ipm_sys *y, const double *hd, const double *v, double *q);
/* Prepare the normal-system solver for the current hd. 0, or -1 when the
 * direct (or mixed) factorization fails. */
int ipm_prepare(ipm_ws *ws, const ipm_sys *y, gs_ipm_linear lin);
/* Solve H x = b (x holds the initial guess for PCG). Returns the CG
 * iterations (0 for the direct variant), -1 on breakdown, or -2 when the
 * PCG was stopped by the cancel flag or the deadline (*stop says which). */
int ipm_hsolve(ipm_ws *ws, const ipm_sys *y, const gs_solve_opts *o, gs_ipm_linear lin,
               const double *b, double *x, double eta, gs_status *stop);

/* ---- ipm_start.c --------------------------------------------------------- */

/* Feasible start (ipm_start.c). Returns 0, or -1 if Q_EE is singular. */
int ipm_start_feasible(ipm_ws *ws, gs_solver *s, const ipm_sys *y, int dual, int nE,
                       double lam_floor, double delta);
/* Infeasible start (ipm_start.c). */
void ipm_start_infeasible(ipm_ws *ws, gs_solver *s, const ipm_sys *y, int dual,
                          double lam_floor, double y_floor);
/* A working set's later runs: from the previous run's answer (ipm_start.c). */
void ipm_start_hint(ipm_ws *ws, const ipm_sys *y, double lam_floor, double y_floor);

/* ---- ipm.c ---------------------------------------------------------------- */

/* One Mehrotra run on the system y from the starting point, to an accepted
 * polish (1: lam_out is the answer on y's pairs) or a stop (0: info->status
 * says why, lam_out the iterate). Adds its iterations to info's. inS: the
 * working set's membership (only its pairs may enter the polish), or NULL. */
int ipm_mehrotra(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                 const ipm_sys *y, const ipm_par *pr, const unsigned char *inS,
                 double *lam_out, gs_solve_info *info);

/* ---- ipm_wset.c ----------------------------------------------------------- */

/* The dual form: Mehrotra runs on a growing working set of pairs until no
 * pair outside it is violated (ipm_wset.c). lam_out, info as ipm_mehrotra's;
 * GS_ERR_NOMEM, else GS_OK with info->status. */
gs_err ipm_working_set(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                       const ipm_par *pr, double *lam_out, gs_solve_info *info, gs_error *err);

#endif
