/*
 * solver.h -- the one interface behind which every gapsim solver sits.
 *
 * A gs_solver is a per-thread workspace bound to one precomputation: create
 * it once per worker thread, solve many problems with it (no allocation in
 * the iteration loops; buffers grow geometrically the few times a contact
 * set outgrows them). Methods and formulations:
 *
 *   method  formulations                 file
 *   gi      relative (default), dual, primal   solvers/gi_relative.c, gi_dual.c, gi_primal.c
 *   lemke   dual (the dual LCP(-p, Q))        solvers/lemke.c
 *   ref     dual (the test oracle, core/refsolve.h)
 *   npm     dual (default), relative, primal (square A~)   solvers/npm*.c (npm_impl.h)
 *   ipm     primal (default), dual (on a working set of pairs)   solvers/ipm.c
 *   auto    picks one of the above per problem and learns from measured
 *           times on this assembly (solvers/auto.c, docs/solvers.md)
 *
 * Every solve returns the multipliers lam (contact forces, N), the residual
 * gaps w (mm) and, on request, the displacements x (mm), with a KKT
 * certificate (dual by default, primal with opts.primal_cert), the status, the
 * iteration count and the time. API errors (bad data, unsupported
 * combination, no memory) are the return value; the algorithmic outcome is
 * info->status. Status infeasible (gaps that contradict on linearly
 * dependent pairs): lam holds the Farkas certificate instead of forces,
 * weights d >= 0 (any sign on equality pairs) with A d = 0 and g'd < 0,
 * largest |d_i| 1, checked here before the status stands (w, x: those of
 * lam = d; docs/solvers.md "Gaps that contradict").
 *
 * Cancellation and deadlines: opts.cancel (a flag another thread may set)
 * and opts.deadline (monotonic seconds, gs_now()) are checked before the
 * solve and at every outer iteration of every product method (GI in its
 * three forms, Lemke, NPM, IPM; auto runs one of them) and inside the
 * shared PCG of NPM and IPM (solvers/pcg.h): the solve then
 * ends with status cancelled or time_limit and the iterate it had (not an
 * optimum; the certificate says how far). Cost: one relaxed atomic load and
 * one clock_gettime (vDSO, ~25 ns) per iteration, against the O(m k) of an
 * iteration. The oracle (ref) checks only before it starts.
 *
 * Warm start: opts.warm points at a previous solution of the same assembly
 * (its contact set, optionally its multipliers). Each method starts from it
 * where valid and falls back cleanly (info->warm_used, info->warm_kept).
 */
#ifndef GS_SOLVER_H
#define GS_SOLVER_H

#include <stdatomic.h>

#include "gs_status.h"
#include "kkt.h"
#include "problem.h"

typedef enum {
    GS_METHOD_AUTO = 0, /* pick per problem (solvers/auto.c) */
    GS_METHOD_GI,       /* Goldfarb-Idnani dual active set (Powell) */
    GS_METHOD_LEMKE,    /* Lemke's complementary pivoting on the dual LCP */
    GS_METHOD_NPM,      /* Newton projection (issue 4) */
    GS_METHOD_IPM,      /* interior point, split preconditioner (issue 4) */
    GS_METHOD_REF,      /* reference oracle */
    GS_METHOD__COUNT
} gs_method;

typedef enum {
    GS_FORM_DEFAULT = 0, /* the method's default formulation */
    GS_FORM_DUAL,        /* (2): min 1/2 lam'Q lam - p'lam, lam >= 0 */
    GS_FORM_RELATIVE,    /* (3): min 1/2 u'Q^-1 u - (Q^-1 u0)'u, u <= g */
    GS_FORM_PRIMAL,      /* (1): min 1/2 x'Kx - f'x, A'x <= g */
    GS_FORM__COUNT
} gs_form;

/* Newton projection: how the reduced Newton system on the free set is solved. */
typedef enum {
    GS_NPM_LIN_COMBINED = 0, /* CG first, updated Cholesky once CG slows (default) */
    GS_NPM_LIN_CHOL,         /* Cholesky factor updated as the free set changes */
    GS_NPM_LIN_CG            /* CG with a tolerance tightened over the iterations */
} gs_npm_linear;

/* Newton projection: step length along the projected path. */
typedef enum {
    GS_LS_EXACT = 0,  /* exact minimum of the piecewise quadratic (default) */
    GS_LS_GOLDEN,     /* golden section on log(alpha) */
    GS_LS_ARMIJO      /* Armijo backtracking along the projection arc */
} gs_linesearch;

/* Interior point: how the normal system H = Q + Lambda^-1 Y is solved. */
typedef enum {
    GS_IPM_MIXED = 0,     /* single-precision Cholesky of H every iteration as the
                             preconditioner of a double PCG (default: the fastest) */
    GS_IPM_PCG_SPLIT,     /* PCG, split preconditioner (L_Q + D)(L_Q + D)' (the paper's) */
    GS_IPM_PCG_JACOBI,    /* PCG, Jacobi preconditioner diag(H) */
    GS_IPM_DIRECT         /* Cholesky of H every iteration in double (for comparison) */
} gs_ipm_linear;

/* Interior point: starting point. */
typedef enum {
    GS_IPM_START_AUTO = 0,   /* feasible for simple joints, infeasible for sandwich */
    GS_IPM_START_FEASIBLE,   /* physically motivated feasible start */
    GS_IPM_START_INFEASIBLE  /* D'Apuzzo et al. (2010) infeasible start */
} gs_ipm_start;

/* A previous solution of the same assembly (borrowed). */
typedef struct {
    int n_act;          /* pairs in the contact set */
    const int *act;     /* their indices */
    const double *lam;  /* m multipliers of that solution, or NULL */
} gs_warm;

typedef struct {
    gs_method method;      /* default GS_METHOD_AUTO */
    gs_form form;          /* default GS_FORM_DEFAULT */
    double tol;            /* relative optimality tolerance (default 1e-10): residual
                              gaps >= -tol max(1, ||g||_inf) mm; see gs_kkt_pass */
    int max_iter;          /* 0: method default (a multiple of m) */
    int fasteners_first;   /* GI: loaded pairs enter the active set first (default 1) */
    int want_x;            /* also compute x = K^-1 (f - A lam), O(sum n_b^2) */
    int primal_cert;       /* certify with x and K (independent, O(sum n_b^2)) */
    const gs_warm *warm;   /* NULL: cold start */
    gs_npm_linear npm_linear;  /* NPM: reduced Newton system (default combined) */
    gs_linesearch linesearch;  /* NPM: step length (default exact) */
    gs_ipm_linear ipm_linear;  /* IPM: normal system (default mixed) */
    gs_ipm_start ipm_start;    /* IPM: starting point (default auto by joint type) */
    const atomic_int *cancel;  /* non-zero *cancel stops the solve: status cancelled (NULL: none) */
    double deadline;           /* gs_now() seconds at which the solve stops: status
                                  time_limit (0: none) */
} gs_solve_opts;

typedef struct {
    gs_status status;
    gs_method method;      /* method that ran (auto resolved) */
    gs_form form;          /* formulation that ran */
    int iterations;        /* active-set changes (GI), pivots (Lemke), Newton / IPM steps */
    int cg_iterations;     /* inner CG iterations in total (NPM cg/combined, IPM PCG) */
    int n_act;             /* pairs in contact (lam != 0) + equality pairs */
    double time;           /* s, the solve (dual data, iterations, lam, w) */
    double time_cert;      /* s, certificate and x */
    int auto_chosen;       /* 1 if method was auto: method/form say what it picked */
    int auto_explored;     /* 1 if auto tried a candidate to measure it */
    int warm_used;         /* 1 if the warm start was used */
    int warm_kept;         /* pairs of the warm contact set kept at the start */
    int crossover;         /* 1 if GI relative finished the solve from the method's own
                              contact set (NPM at its stall cap, GI dual at its polish
                              cap: their loops cycled; GI dual when its algebra on M
                              broke down on nearly dependent pairs; Lemke polished
                              outside the tolerance or on a secondary ray); iterations
                              count both */
    gs_kkt kkt;            /* certificate */
} gs_solve_info;

typedef struct gs_solver gs_solver;

void gs_solve_default_opts(gs_solve_opts *o);
/* Reject inconsistent options (unknown method, unsupported formulation,
 * tol <= 0 or >= 1, negative max_iter), naming the field ("form"). */
gs_err gs_solve_validate_opts(const gs_solve_opts *o, gs_error *err);

gs_solver *gs_solver_new(const gs_precomp *pc, gs_error *err);
void gs_solver_free(gs_solver *s);
/* Share a factor cache (fcache.h, made for the same precomputation, owned
 * by the caller, outliving the solver) among solvers, e.g. one per worker
 * thread: a warm start that must factor its contact set afresh (GI on the
 * relative form) copies the factor another solve built from the same set.
 * NULL: none (the default). Results are the same with or without it. */
struct gs_fcache;
void gs_solver_set_fcache(gs_solver *s, struct gs_fcache *fc);

/* Solve one problem (pb->pc must be the solver's precomputation). lam, w: m
 * doubles each (w may be NULL); x: n doubles or NULL (filled when
 * opts->want_x or opts->primal_cert). opts NULL: defaults. */
gs_err gs_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *opts, double *lam,
                double *w, double *x, gs_solve_info *info, gs_error *err);

/* 1 if the method on this form reads L_Q (pc->LQ): GI dual, NPM, IPM on
 * the primal form (the dual IPM factors its working set's Q_SS itself). Such
 * a solve on a precomputation whose L_Q is deferred and not yet computed is
 * refused (GS_ERR_INVALID naming "method"); auto does not pick them then.
 * form GS_FORM_DEFAULT: the method's default form. */
int gs_method_needs_lq(gs_method m, gs_form f);
/* 1 if the method on this form solves with K (gs_precomp_kinv or
 * gs_precomp_part_solve): the primal forms of GI, NPM and IPM. With a
 * precomputation whose sparse parts are not factored (GS_PRECOMP_DEFER_SPARSE,
 * precompute.h) such a solve, or one asking for x or the primal certificate,
 * is refused (GS_ERR_INVALID naming "method" or "x"); auto never picks them.
 * form GS_FORM_DEFAULT: the method's default form; 0 for auto. */
int gs_method_needs_part_factors(gs_method m, gs_form f);
/* 1 if a solve with these options reads K's dense blocks themselves (the
 * stiffness, not its factors): a primal form (gs_method_needs_part_factors,
 * 0 for auto, which never picks one) or the primal certificate. On a model
 * whose blocks are released (gs_model_release_dense) gs_solve refuses such a
 * solve, naming "method" or "primal_cert"; gapsimd, gapsim-batch and
 * gapsim-mpi release the blocks of a run for which it is 0. */
int gs_solve_reads_k(const gs_solve_opts *opts);

const char *gs_method_name(gs_method m);
const char *gs_form_name(gs_form f);
/* Parse names ("gi", "lemke", "auto"... / "dual", "relative", "primal",
 * "default"); 0 on success, -1 if unknown. */
int gs_method_parse(const char *s, gs_method *m);
int gs_form_parse(const char *s, gs_form *f);
/* Names of the NPM and IPM option values, and their parsers (0 / -1):
 * npm_linear "combined" "chol" "cg"; linesearch "exact" "golden" "armijo";
 * ipm_linear "mixed" "split" "jacobi" "direct"; ipm_start "auto" "feasible" "infeasible". */
const char *gs_npm_linear_name(gs_npm_linear v);
const char *gs_linesearch_name(gs_linesearch v);
const char *gs_ipm_linear_name(gs_ipm_linear v);
const char *gs_ipm_start_name(gs_ipm_start v);
int gs_npm_linear_parse(const char *s, gs_npm_linear *v);
int gs_linesearch_parse(const char *s, gs_linesearch *v);
int gs_ipm_linear_parse(const char *s, gs_ipm_linear *v);
int gs_ipm_start_parse(const char *s, gs_ipm_start *v);
/* 1 if the method supports the formulation (GS_FORM_DEFAULT always). */
int gs_method_supports(gs_method m, gs_form f);

#endif
