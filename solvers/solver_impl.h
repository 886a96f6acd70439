/*
 * solver_impl.h -- private: the workspace and the method table behind
 * solver.h. Only the solver sources include it.
 *
 * A method implements gs_method_ops.solve: given the solver workspace, whose
 * p (m) already holds the dual data p = u0 + Q load - g of this problem and
 * tol_w the residual-gap tolerance in mm, it fills lam (m) and info->status,
 * info->iterations, info->warm_used, info->warm_kept. The generic layer
 * (solver.c) computes w, n_act, x and the certificate, and the times.
 * Method workspaces are created on first use (ws[method], freed by
 * ws_free[method]) and reused for every later solve on this thread.
 */
#ifndef GS_SOLVER_IMPL_H
#define GS_SOLVER_IMPL_H

#include "linalg.h"
#include "solver.h"

/* auto: measured cost per candidate (method, form) and predicted-contact bin
 * on this solver's assembly (solvers/auto.c). */
#define GS_AUTO_BINS 4
#define GS_AUTO_CANDS 4
typedef struct {
    double mean[GS_AUTO_CANDS][GS_AUTO_BINS]; /* running mean time, s */
    int trials[GS_AUTO_CANDS][GS_AUTO_BINS];
    double spent[GS_AUTO_BINS];               /* time of every auto solve in the bin */
    double explored[GS_AUTO_BINS];            /* of which spent exploring */
} gs_auto_stats;

struct gs_solver {
    const gs_precomp *pc;
    int m, n;
    double *p;         /* m: dual linear term of the current problem */
    double s;          /* 1/2 f'K^-1 f of the current problem */
    double tol_w;      /* mm: a residual gap below -tol_w is a violation */
    double tol_lam;    /* N: the zero rule's force (cset.h gs_zero_force) */
    double qdiag_max;  /* max_i Q_ii (gs_qdiag_max, once per solver) */
    double *work;      /* 3m scratch for the generic layer */
    double *ul;        /* m: u0 + Q load of the load last seen (gs_problem_load_part) */
    double *ul_load;   /* m: that load (compared with the next problem's) */
    double ul_s;       /* its s */
    int ul_valid;      /* ul, ul_load, ul_s hold a load's part */
    struct gs_fcache *fcache; /* shared factor cache or NULL (gs_solver_set_fcache) */
    const double *w_lam; /* set by a method that ends optimal with Q lam - p (m) at exactly
                            the lam it returns, made by one full product (GI relative's
                            last refresh, NPM's last polish): the certificate's w, not
                            computed again; cleared by gs_solve before each solve */
    gs_auto_stats auto_stats;
    void *ws[GS_METHOD__COUNT * GS_FORM__COUNT];
    void (*ws_free[GS_METHOD__COUNT * GS_FORM__COUNT])(void *);
};

typedef struct {
    const char *name;
    unsigned forms;        /* bit (1u << form) per supported formulation */
    gs_form default_form;
    gs_err (*solve)(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, gs_form form,
                    double *lam, gs_solve_info *info, gs_error *err);
} gs_method_ops;

/* The method table, indexed by gs_method (NULL: not available yet). */
extern const gs_method_ops *const gs_methods[GS_METHOD__COUNT];

extern const gs_method_ops gs_method_gi;
extern const gs_method_ops gs_method_lemke;
extern const gs_method_ops gs_method_ref;
extern const gs_method_ops gs_method_npm;
extern const gs_method_ops gs_method_ipm;

/* Method workspace slot of (method, form): create with ctor on first use.
 * Returns NULL (and fills err) if ctor fails. */
void *gs_solver_ws(gs_solver *s, gs_method m, gs_form f, void *(*ctor)(gs_solver *),
                   void (*dtor)(void *), gs_error *err);

/* auto: pick (method, form) for this problem from the dual data s->p
 * (already computed) and the stats; *cand and *bin identify the choice for
 * gs_auto_record; *explore is 1 when the pick is a measurement. */
void gs_auto_choose(gs_solver *s, const gs_problem *pb, gs_method *m, gs_form *f, int *cand,
                    int *bin, int *explore);
/* auto: account the time of the solve picked by gs_auto_choose. */
void gs_auto_record(gs_solver *s, int cand, int bin, int explore, double time);

/* Default iteration cap of a method: 0 in opts -> 10 m + 100. */
static inline int gs_solver_max_iter(const gs_solver *s, const gs_solve_opts *o)
{
    return o->max_iter > 0 ? o->max_iter : 10 * s->m + 100;
}

/* Whether an iteration loop must stop after `iters` iterations: the
 * iteration cap, the cancel flag, the deadline, in that order;
 * GS_STATUS_OPTIMAL to go on. Every method calls it once per outer
 * iteration, where it checked its cap before. O(1): one relaxed atomic load,
 * one clock read when a deadline is set. */
static inline gs_status gs_solve_stop(const gs_solve_opts *o, int iters, int max_iter)
{
    if (iters >= max_iter)
        return GS_STATUS_MAX_ITER;
    if (o->cancel && atomic_load_explicit(o->cancel, memory_order_relaxed))
        return GS_STATUS_CANCELLED;
    if (o->deadline > 0.0 && gs_now() >= o->deadline)
        return GS_STATUS_TIME_LIMIT;
    return GS_STATUS_OPTIMAL;
}

#endif
