/*
 * npm.c -- Newton projection method (Bertsekas 1982) on the dual (2) and the
 * relative (3) formulation, and on the primal through the square change of
 * variables (4) (section "primal (4)" below, docs/solvers.md).
 *
 * Problem. Dual:  min 1/2 lam'Q lam - p'lam, lam >= 0 (equality pairs free),
 * gradient w = Q lam - p (the residual gaps). Relative, written in the
 * residual gaps w = g - u >= 0 (u <= g):  min 1/2 (w + p)'Q^-1 (w + p),
 * gradient lam(w) = Q^-1 (w + p) = K~(u0' - u) (the contact forces); it is
 * (3) up to a constant. Equality pairs: lam free (dual), w = 0 (relative).
 *
 * Method. x(k+1) = P(x(k) + alpha d(k)), P = clamp at 0. I+ = variables
 * within eps_k of the bound whose gradient pushes outward (dual: lam_i <=
 * eps, w_i > 0; relative: w_i <= eps, lam_i > 0), eps_k = min(eps0,
 * ||x - P(x - D grad)||), D = diag(Q)^-1 (dual) / diag(Q) (relative) so the
 * units agree. On I+ the step is a diagonally scaled gradient step reaching
 * the bound at alpha = 1 (d_i = -x_i); on the rest F a Newton step.
 *   Dual: d_F = -(Q_FF)^-1 w_F; the linear system lives on S = F (the pairs
 *     in or entering contact).
 *   Relative: d_F = -(K~_FF)^-1 lam_F. Algebra (a), the Schur complement, is
 *     used: the minimizer over w_F with w_C fixed (C = I+, the contact set)
 *     has lam_F = 0, i.e. lam_C = Q_CC^-1 (w_C + p_C), w_F = Q_FC lam_C - p_F,
 *     so a Newton step costs one solve with Q_CC (k = |C|, small) plus one
 *     O(m k) product, against O(m^2) per CG product for (b). The linear
 *     system lives on S = C.
 *   So both forms solve Q_SS z = b with S changing by a few pairs per step:
 *   GS_NPM_LIN_CHOL: cset.h factor of Q_SS updated (append O(k^2), removal
 *     by rank-one update), one dpotrf (gs_cset_build) when more than half of
 *     S is new; GS_NPM_LIN_CG: CG on Q_SS with Jacobi preconditioning (unit
 *     diagonal scaling), relative tolerance min(1e-2, 0.1^(it+1), pg) tightened
 *     over the Newton iterations; GS_NPM_LIN_COMBINED: CG while every solve
 *     converges within 10 + sqrt(k) iterations; the first that needs more
 *     (CG slows) switches to the updated Cholesky factor for the rest of the
 *     solve. The polish always uses the factor (one dpotrf if CG ran alone).
 * Step length (opts.linesearch): exact minimization of the piecewise
 * quadratic along the projected path (Santin et al. 2016): breakpoints
 * sorted, on each segment the slope and curvature are updated as a component
 * hits its bound. Dual: with L = supp(d), only q = Q_LL d_L is needed
 * (O(|L|^2)), each breakpoint costs O(|L|). Relative: the curvature is in
 * y = L_Q^-1 (w + p) space: ydir = L_Q^-1 d (one dtrsv, O(m^2)), each crossed
 * breakpoint one trailing forward solve. Golden section on log(alpha) over
 * [1e-10, 1] (the minimum is typically 1 or near 0), compared with alpha = 1;
 * Armijo backtracking (sigma = 1e-4, halving) along the projection arc.
 * Termination: no violation (inequality pair with lam_i = 0 and w_i <
 * -tol_w), the set S unchanged and the last step full and unclipped -> polish
 * (re-solve Q_CC lam_C = p_C on the contact set with one refinement step,
 * drop negative multipliers and those at round-off level, 64 eps of the
 * largest: a degenerate pair with w = lam = 0) and check again; a polished point that still
 * has violations restarts the iteration from it.
 * Warm start: dual: lam from the solve on the warm set (+ equality pairs),
 * clipped at 0; relative: w = 0 on the warm set, w = Q lam - p (clipped)
 * elsewhere.
 * References: D.P. Bertsekas, Projected Newton methods for optimization
 * problems with simple constraints, SIAM J. Control Optim. 20 (1982)
 * 221-246; O. Santin, M. Jarosova, V. Havlena, Z. Dostal, Proportioning with
 * second-order information for model predictive control, Optim. Methods
 * Softw. 32 (2016); Stefanova et al., Optim. Eng. 21 (2020), sect. 3.3.
 * Invariants: x >= 0 on inequality pairs; g is the exact gradient at x
 * (recomputed every step, not accumulated); with the Cholesky variant cs
 * holds S and L L' = Q_SS.
 * Primal (4): the iterate is z = (w, x_U) over y = A~'x (A' plus unit rows
 * for the unmatched DOFs U, a forest in peel order: O(n) transforms); the
 * Newton point with C at its bound is x = K^-1 (f - A_C lam_C), Q_CC lam_C =
 * p_C + w_C (the Schur complement of H = A~^-1 K A~^-T: (H^-1)_CC = Q_CC), so
 * the same system machinery on S = C serves; gradient, exact line search and
 * Newton point cost one O(sum n_b^2) pass over the K blocks or factors each.
 * Cost per Newton iteration (k = |S|, m pairs): dual O(k^2) solve (+ O(k^2)
 * per set change, or k^3/3 on a rebuild) + O(m k) gradient + O(k^2 + k log k)
 * exact line search; relative the same linear algebra on C plus about three
 * dtrsv with L_Q (O(m^2)) for the gradient lam and the exact line search.
 * No allocation inside the iterations (workspace per solver, cset growth is
 * geometric).
 */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "cset.h"
#include "linalg.h"
#include "solver_impl.h"

typedef struct {
    gs_cset cs;
    double *x, *g;      /* m: iterate and gradient */
    double *d;          /* m: direction */
    double *xn;         /* m: new iterate */
    double *z, *b;      /* m: solution / rhs of Q_SS z = b (position order) */
    double *r, *pv, *qv, *hv; /* m: CG vectors */
    double *q;          /* m: Q_LL d_L (line search, support order) */
    double *gl;         /* m: gradient on the support (line search) */
    double *dl;         /* m: segment direction on the support */
    double *y, *yd, *yt, *v; /* m: relative line search (y space) */
    double *ba;         /* m: breakpoints */
    int *bi;            /* m: their support positions */
    int *L;             /* m: support of d */
    int *S;             /* m: the system set (CG mode) */
    int *spos;          /* m: position of a pair in S, or -1 */
    int *list;          /* m: scratch list */
    unsigned char *in;  /* m: membership marks */
    void *bkeys;        /* m breakpoint keys (bp_key) */
    gs_cand *cand;      /* m: violated pairs entering the free set (dual) */
    int nv;             /* length of the iterate: m (dual, relative), n (primal) */
    /* primal (4): the square change of variables y = A~'x (sq_build) */
    int sq_bad;         /* -1: A~ built; else the pair with no acyclic DOF */
    int *pk, *qk;       /* m: matched DOF p(k) of pair k, its other DOF or -1 */
    double *ap, *aq;    /* m: the entries of A at p(k), q(k) */
    int *order;         /* m: peel order (A~^-1: forward, A~^-T: backward) */
    int *urow;          /* n - m: the DOF of unit row m + t */
    int *chs, *chp;     /* n + 1, m: pairs k' with q(k') = DOF j (CSR) */
    int *exi;           /* n: support of a column of A~^-T */
    double *exv;        /* n: its values */
    double *px, *pr, *pf, *pdx, *pkdx, *prt, *ptmp; /* n: x, Kx - f, f, scratch */
} npm_ws;

static void npm_free(void *p)
{
    npm_ws *ws = p;
    if (!ws)
        return;
    gs_cset_free(&ws->cs);
    double **dv[] = {&ws->x, &ws->g, &ws->d, &ws->xn, &ws->z, &ws->b, &ws->r, &ws->pv, &ws->qv,
                     &ws->hv, &ws->q, &ws->gl, &ws->dl, &ws->y, &ws->yd, &ws->yt, &ws->v,
                     &ws->ba};
    for (size_t i = 0; i < sizeof dv / sizeof *dv; i++)
        free(*dv[i]);
    free(ws->bi);
    free(ws->L);
    free(ws->S);
    free(ws->spos);
    free(ws->list);
    free(ws->in);
    free(ws->bkeys);
    free(ws->cand);
    int **iv[] = {&ws->pk, &ws->qk, &ws->order, &ws->urow, &ws->chs, &ws->chp, &ws->exi};
    for (size_t i = 0; i < sizeof iv / sizeof *iv; i++)
        free(*iv[i]);
    double **pv[] = {&ws->ap, &ws->aq, &ws->exv, &ws->px, &ws->pr, &ws->pf, &ws->pdx, &ws->pkdx,
                     &ws->prt, &ws->ptmp};
    for (size_t i = 0; i < sizeof pv / sizeof *pv; i++)
        free(*pv[i]);
    free(ws);
}

/* Workspace with iterate length nv (m, or n for the primal). */
static npm_ws *npm_alloc(gs_solver *s, int nv)
{
    npm_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    ws->nv = nv;
    const size_t m = (size_t)nv;
    double **dv[] = {&ws->x, &ws->g, &ws->d, &ws->xn, &ws->z, &ws->b, &ws->r, &ws->pv, &ws->qv,
                     &ws->hv, &ws->q, &ws->gl, &ws->dl, &ws->y, &ws->yd, &ws->yt, &ws->v,
                     &ws->ba};
    int ok = 1;
    for (size_t i = 0; i < sizeof dv / sizeof *dv; i++)
        ok &= (*dv[i] = calloc(m + 1, sizeof(double))) != NULL;
    ws->bi = malloc((m + 1) * sizeof *ws->bi);
    ws->L = malloc((m + 1) * sizeof *ws->L);
    ws->S = malloc((m + 1) * sizeof *ws->S);
    ws->spos = malloc((m + 1) * sizeof *ws->spos);
    ws->list = malloc((m + 1) * sizeof *ws->list);
    ws->in = calloc(m + 1, 1);
    ws->bkeys = malloc((m + 1) * (sizeof(double) + sizeof(int) + 8));
    ws->cand = malloc((m + 1) * sizeof *ws->cand);
    if (!ok || !ws->bkeys || !ws->cand || !ws->bi || !ws->L || !ws->S || !ws->spos || !ws->list || !ws->in ||
        gs_cset_init(&ws->cs, s->pc, NULL) != GS_OK) {
        npm_free(ws);
        return NULL;
    }
    for (size_t i = 0; i < m; i++)
        ws->spos[i] = -1;
    return ws;
}

static void *npm_new(gs_solver *s)
{
    return npm_alloc(s, s->m);
}

/* ---- the reduced system Q_SS z = b ------------------------------------ */

typedef struct {
    npm_ws *ws;
    gs_solver *s;
    const gs_problem *pb;
    const gs_solve_opts *o;
    gs_form form;
    int chol;   /* 1: the factor holds S (chol mode, or combined after the switch) */
    int ns;     /* |S| in CG mode */
    int cg_its; /* total inner CG iterations */
    int newton; /* Newton iterations */
} npm_ctx;

/* y = Q_SS x (S order), O(k^2). */
static void qss_mult(const npm_ctx *c, const int *S, int k, const double *x, double *y)
{
    const int m = c->s->m;
    const double *Q = c->s->pc->Q;
    for (int a = 0; a < k; a++)
        y[a] = 0.0;
    for (int bb = 0; bb < k; bb++) {
        const double *qb = Q + (size_t)S[bb] * m;
        const double xb = x[bb];
        if (xb == 0.0)
            continue;
        for (int a = 0; a < k; a++)
            y[a] += qb[S[a]] * xb;
    }
}

/* Jacobi-preconditioned CG on Q_SS z = b from z = 0 to relative residual
 * rtol; returns the iterations, *conv whether rtol was reached. */
static int cg_solve(npm_ctx *c, const int *S, int k, const double *b, double *z, double rtol,
                    int maxit, int *conv)
{
    npm_ws *ws = c->ws;
    const double *qd = c->s->pc->qdiag;
    double *r = ws->r, *pv = ws->pv, *qv = ws->qv, *h = ws->hv;
    double bn = 0.0, rz = 0.0;
    for (int a = 0; a < k; a++) {
        z[a] = 0.0;
        r[a] = b[a];
        h[a] = r[a] / qd[S[a]];
        pv[a] = h[a];
        rz += r[a] * h[a];
        bn += b[a] * b[a];
    }
    bn = sqrt(bn);
    *conv = 1;
    if (bn == 0.0)
        return 0;
    int it = 0;
    for (; it < maxit; it++) {
        double rn = 0.0;
        for (int a = 0; a < k; a++)
            rn += r[a] * r[a];
        if (sqrt(rn) <= rtol * bn)
            return it;
        qss_mult(c, S, k, pv, qv);
        double pq = cblas_ddot(k, pv, 1, qv, 1);
        if (!(pq > 0.0))
            break;
        double al = rz / pq, rz2 = 0.0;
        for (int a = 0; a < k; a++) {
            z[a] += al * pv[a];
            r[a] -= al * qv[a];
            h[a] = r[a] / qd[S[a]];
            rz2 += r[a] * h[a];
        }
        double be = rz2 / rz;
        rz = rz2;
        for (int a = 0; a < k; a++)
            pv[a] = h[a] + be * pv[a];
    }
    double rn = 0.0;
    for (int a = 0; a < k; a++)
        rn += r[a] * r[a];
    *conv = sqrt(rn) <= rtol * bn;
    return it;
}

/* Bring the factor to the set marked in ws->in (list ws->list[0..nl)):
 * removals by rank-one updates, appends, or one dpotrf when more than half
 * is new. Pairs numerically dependent on the set are left out (unmarked).
 * Returns GS_OK or GS_ERR_NOMEM. */
static gs_err chol_sync(npm_ctx *c, int nl)
{
    npm_ws *ws = c->ws;
    gs_cset *cs = &ws->cs;
    for (int q = cs->k - 1; q >= 0; q--)
        if (!ws->in[cs->idx[q]])
            gs_cset_remove(cs, q);
    int nadd = nl - cs->k;
    if (nadd > 0 && nadd > cs->k) {
        if (gs_cset_build(cs, ws->list, nl, NULL) == GS_OK)
            return GS_OK;
        gs_cset_clear(cs); /* singular as a whole: append one by one */
    }
    if (gs_cset_reserve(cs, nl, NULL) != GS_OK)
        return GS_ERR_NOMEM;
    for (int a = 0; a < nl; a++) {
        int j = ws->list[a];
        if (cs->pos[j] >= 0)
            continue;
        double sch = gs_cset_schur(cs, j, ws->v);
        if (sch > GS_CSET_DEP_TOL * c->s->pc->qdiag[j])
            gs_cset_append(cs, j, ws->v, sch);
        else
            ws->in[j] = 0;
    }
    return GS_OK;
}

/* Set the system set S to the marked list (nl pairs). After the call the
 * set is S = cs->idx (chol) or ws->S (CG). */
static gs_err set_system(npm_ctx *c, int nl)
{
    npm_ws *ws = c->ws;
    if (c->chol)
        return chol_sync(c, nl);
    for (int a = 0; a < c->ns; a++)
        ws->spos[ws->S[a]] = -1;
    c->ns = nl;
    for (int a = 0; a < nl; a++) {
        ws->S[a] = ws->list[a];
        ws->spos[ws->S[a]] = a;
    }
    return GS_OK;
}

static const int *sys_set(const npm_ctx *c, int *k)
{
    *k = c->chol ? c->ws->cs.k : c->ns;
    return c->chol ? c->ws->cs.idx : c->ws->S;
}

/* Solve Q_SS z = b (b, z in S order; b preserved). pg: current optimality
 * measure (tightens the CG tolerance). */
static gs_err sys_solve(npm_ctx *c, const double *b, double *z, double pg)
{
    npm_ws *ws = c->ws;
    int k;
    const int *S = sys_set(c, &k);
    if (!c->chol) {
        double rtol = fmin(1e-2, pow(0.1, c->newton + 1));
        rtol = fmax(1e-14, fmin(rtol, pg));
        const int combined = c->o->npm_linear == GS_NPM_LIN_COMBINED;
        int limit = combined ? 10 + (int)sqrt((double)k) : 10 * k + 50;
        int conv;
        int it = cg_solve(c, S, k, b, z, rtol, limit, &conv);
        c->cg_its += it;
        if (conv || !combined)
            return GS_OK;
        /* CG slowed: switch to the updated Cholesky factor of Q_SS */
        c->chol = 1;
        for (int a = 0; a < k; a++) {
            ws->list[a] = S[a];
            ws->in[S[a]] = 1;
        }
        for (int a = 0; a < c->ns; a++)
            ws->spos[ws->S[a]] = -1;
        gs_cset_clear(&ws->cs);
        gs_err rc = chol_sync(c, k);
        for (int a = 0; a < k; a++)
            ws->in[ws->list[a]] = 0;
        if (rc != GS_OK)
            return rc;
        /* a dependent pair left out: the caller's b is in the old order */
        if (ws->cs.k != k)
            return GS_ERR_NOT_SPD;
        c->ns = 0;
    }
    memcpy(z, b, (size_t)ws->cs.k * sizeof *z);
    gs_cset_solve(&ws->cs, z);
    return GS_OK;
}

/* ---- dual ---------------------------------------------------------------- */

/* g = Q lam - p, O(m nnz(lam)). */
static void dual_gradient(const gs_solver *s, const double *lam, double *g)
{
    const int m = s->m;
    for (int i = 0; i < m; i++)
        g[i] = -s->p[i];
    for (int j = 0; j < m; j++)
        if (lam[j] != 0.0)
            cblas_daxpy(m, lam[j], s->pc->Q + (size_t)j * m, 1, g, 1);
}

/* phi(x + Delta) - phi(x) along the projected path at alpha (dual): Delta on
 * the support L. O(|L|^2). Fills ws->dl with Delta. */
static double dual_phi_inc(npm_ctx *c, int nl, double alpha)
{
    npm_ws *ws = c->ws;
    double lin = 0.0;
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        double t = ws->x[i] + alpha * ws->d[i];
        if (t < 0.0 && !gs_problem_is_eq(c->pb, i))
            t = 0.0;
        ws->dl[a] = t - ws->x[i];
        lin += ws->g[i] * ws->dl[a];
    }
    qss_mult(c, ws->L, nl, ws->dl, ws->q);
    return lin + 0.5 * cblas_ddot(nl, ws->dl, 1, ws->q, 1);
}

typedef struct {
    double a;
    int i;
} bp_key;

static int bp_cmp(const void *pa, const void *pb)
{
    const bp_key *a = pa, *b = pb;
    return (a->a > b->a) - (a->a < b->a);
}

/* Breakpoints of the projected path: a_i = x_i / -d_i over the support
 * positions with d_i < 0 (inequality pairs), sorted. Returns how many. */
static int breakpoints(npm_ctx *c, int nl, bp_key *keys)
{
    npm_ws *ws = c->ws;
    int nb = 0;
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        if (ws->d[i] < 0.0 && i < c->s->m && !gs_problem_is_eq(c->pb, i))
            keys[nb++] = (bp_key){ws->x[i] / -ws->d[i], a};
    }
    qsort(keys, (size_t)nb, sizeof *keys, bp_cmp);
    return nb;
}

/* One segment [acur, aend] of the projected path, on which the objective is
 * phi(acur) + s1 t + s2 t^2 / 2 (t = alpha - acur). Returns 1 with the step
 * in *alpha if the minimum along the path is on this segment (the slope is
 * no longer negative, the unconstrained minimizer falls inside, or the
 * segment is the unbounded tail), else 0: walk on to the next breakpoint. */
static int segment_min(double s1, double s2, double acur, double aend, double *alpha)
{
    if (s1 >= 0.0) {
        *alpha = acur;
        return 1;
    }
    if (s2 > 0.0 && acur - s1 / s2 <= aend) {
        *alpha = acur - s1 / s2;
        return 1;
    }
    if (aend == INFINITY) { /* s2 <= 0 on an empty tail: stay */
        *alpha = acur;
        return 1;
    }
    return 0;
}

/* Exact minimization of the piecewise quadratic (dual). */
static double dual_exact(npm_ctx *c, int nl, bp_key *keys)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m;
    const double *Q = c->s->pc->Q;
    for (int a = 0; a < nl; a++) {
        ws->dl[a] = ws->d[ws->L[a]];
        ws->gl[a] = ws->g[ws->L[a]];
    }
    qss_mult(c, ws->L, nl, ws->dl, ws->q);
    double s1 = cblas_ddot(nl, ws->gl, 1, ws->dl, 1), s2 = cblas_ddot(nl, ws->dl, 1, ws->q, 1);
    int nb = breakpoints(c, nl, keys);
    double acur = 0.0, amin;
    for (int bq = 0; bq <= nb; bq++) {
        double aend = bq < nb ? keys[bq].a : INFINITY;
        if (segment_min(s1, s2, acur, aend, &amin))
            return amin;
        double len = aend - acur;
        for (int a = 0; a < nl; a++)
            ws->gl[a] += len * ws->q[a];
        s1 += len * s2;
        /* component at support position e hits its bound */
        int e = keys[bq].i, i = ws->L[e];
        double de = ws->dl[e];
        s1 -= de * ws->gl[e];
        s2 += -2.0 * de * ws->q[e] + de * de * Q[(size_t)i * m + i];
        const double *qi = Q + (size_t)i * m;
        for (int a = 0; a < nl; a++)
            ws->q[a] -= de * qi[ws->L[a]];
        ws->dl[e] = 0.0;
        acur = aend;
    }
    return acur;
}

/* Golden section on log(alpha) over [1e-10, 1] and Armijo: generic over the
 * increment function. */
typedef double (*inc_fn)(npm_ctx *, int, double);

static double golden(npm_ctx *c, int nl, inc_fn f)
{
    const double r = 0.5 * (sqrt(5.0) - 1.0);
    double lo = log(1e-10), hi = 0.0;
    double t1 = hi - r * (hi - lo), t2 = lo + r * (hi - lo);
    double f1 = f(c, nl, exp(t1)), f2 = f(c, nl, exp(t2));
    for (int it = 0; it < 40 && hi - lo > 1e-3; it++) {
        if (f1 <= f2) {
            hi = t2;
            t2 = t1;
            f2 = f1;
            t1 = hi - r * (hi - lo);
            f1 = f(c, nl, exp(t1));
        } else {
            lo = t1;
            t1 = t2;
            f1 = f2;
            t2 = lo + r * (hi - lo);
            f2 = f(c, nl, exp(t2));
        }
    }
    double a = exp(f1 <= f2 ? t1 : t2), fa = fmin(f1, f2);
    return f(c, nl, 1.0) <= fa ? 1.0 : a;
}

static double armijo(npm_ctx *c, int nl, inc_fn f)
{
    npm_ws *ws = c->ws;
    double a = 1.0;
    for (int it = 0; it < 60; it++, a *= 0.5) {
        double inc = f(c, nl, a);
        double lin = 0.0; /* g'Delta along the arc (Delta in ws->dl) */
        for (int q = 0; q < nl; q++)
            lin += ws->g[ws->L[q]] * ws->dl[q];
        if (inc <= 1e-4 * lin)
            return a;
    }
    return 0.0;
}

/* ---- relative (y = L_Q^-1 (w + p) space for the objective) ------------- */

static void lq_solve_L(const gs_solver *s, double *y)
{
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, s->m, s->pc->LQ, s->m, y,
                1);
}

static void lq_solve_Lt(const gs_solver *s, double *y)
{
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, s->m, s->pc->LQ, s->m, y, 1);
}

/* y = L_Q^-1 (w + p), lam = L_Q^-T y. Two dtrsv, O(m^2). */
static void rel_gradient(const gs_solver *s, const double *w, double *y, double *lam)
{
    for (int i = 0; i < s->m; i++)
        y[i] = w[i] + s->p[i];
    lq_solve_L(s, y);
    memcpy(lam, y, (size_t)s->m * sizeof *lam);
    lq_solve_Lt(s, lam);
}

/* psi(w + Delta) - psi(w) at alpha: 1/2 |y + L^-1 Delta|^2 - 1/2 |y|^2. One
 * dtrsv. ws->dl holds Delta on the support (Armijo's g'Delta). */
static double rel_phi_inc(npm_ctx *c, int nl, double alpha)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m;
    memset(ws->yt, 0, (size_t)m * sizeof *ws->yt);
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        double t = ws->x[i] + alpha * ws->d[i];
        if (t < 0.0)
            t = 0.0;
        ws->dl[a] = t - ws->x[i];
        ws->yt[i] = ws->dl[a];
    }
    lq_solve_L(c->s, ws->yt);
    return cblas_ddot(m, ws->y, 1, ws->yt, 1) + 0.5 * cblas_ddot(m, ws->yt, 1, ws->yt, 1);
}

/* Exact minimization along the projected path (relative). */
static double rel_exact(npm_ctx *c, int nl, bp_key *keys)
{
    npm_ws *ws = c->ws;
    const gs_solver *s = c->s;
    const int m = s->m;
    memset(ws->yd, 0, (size_t)m * sizeof *ws->yd);
    for (int a = 0; a < nl; a++)
        ws->yd[ws->L[a]] = ws->d[ws->L[a]];
    lq_solve_L(s, ws->yd);
    memcpy(ws->yt, ws->y, (size_t)m * sizeof *ws->yt);
    double s1 = cblas_ddot(m, ws->yt, 1, ws->yd, 1), s2 = cblas_ddot(m, ws->yd, 1, ws->yd, 1);
    int nb = breakpoints(c, nl, keys);
    double acur = 0.0, amin;
    for (int bq = 0; bq <= nb; bq++) {
        double aend = bq < nb ? keys[bq].a : INFINITY;
        if (segment_min(s1, s2, acur, aend, &amin))
            return amin;
        double len = aend - acur;
        cblas_daxpy(m, len, ws->yd, 1, ws->yt, 1);
        /* yd -= d_i L^-1 e_i: forward solve on the trailing block from row i */
        int i = ws->L[keys[bq].i];
        double di = ws->d[i];
        int nt = m - i;
        double *v = ws->v;
        memset(v, 0, (size_t)nt * sizeof *v);
        v[0] = 1.0;
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, nt,
                    s->pc->LQ + (size_t)i * m + i, m, v, 1);
        cblas_daxpy(nt, -di, v, 1, ws->yd + i, 1);
        s1 = cblas_ddot(m, ws->yt, 1, ws->yd, 1);
        s2 = cblas_ddot(m, ws->yd, 1, ws->yd, 1);
        acur = aend;
    }
    return acur;
}

/* ---- primal (4): y = A~'x, iterate z = (w, x_U) ------------------------------
 * A~' = A' with n - m unit rows e_j' appended. Pair k is matched to one DOF
 * p(k) of its column (p distinct) by peeling: a DOF touched by exactly one
 * remaining pair takes that pair, which is then removed. On the pair graph
 * (DOFs as vertices, pairs as edges, a jig pair a half-edge) this matches
 * every pair iff no component holds a cycle; the unmatched DOFs U get the
 * unit rows. In peel order the matched DOFs form a forest (x_p(k) depends on
 * x_q(k) only), so A~'x, A~^-T y and A~^-1 r cost O(n) each.
 * The iterate is z = (w, x_U): w_k = g_k - y_k >= 0 on the pair rows (so the
 * bound is the same clamp at 0 as the relative form, and the gradient on the
 * pair rows is lam), x_j free on the unit rows. */

/* Build the matching; ws->sq_bad = -1 on success, else an unmatched pair. */
static int sq_build(npm_ws *ws, const gs_model *mdl)
{
    const int n = mdl->n, m = mdl->m;
    int *deg = calloc((size_t)n + 1, sizeof *deg), *adjs = calloc((size_t)n + 2, sizeof *adjs);
    int *adj = malloc((2 * (size_t)m + 1) * sizeof *adj);
    int *queue = malloc(((size_t)n + 1) * sizeof *queue);
    unsigned char *done = calloc((size_t)m + 1, 1), *matched = calloc((size_t)n + 1, 1);
    int ok = deg && adjs && adj && queue && done && matched;
    if (!ok)
        goto out;
    for (int k = 0; k < m; k++)
        for (int e = 0; e < 2; e++)
            if (mdl->a_row[2 * k + e] >= 0)
                adjs[mdl->a_row[2 * k + e] + 1]++;
    for (int j = 0; j < n; j++) {
        deg[j] = adjs[j + 1];
        adjs[j + 1] += adjs[j];
    }
    for (int k = 0; k < m; k++)
        for (int e = 0; e < 2; e++)
            if (mdl->a_row[2 * k + e] >= 0)
                adj[adjs[mdl->a_row[2 * k + e]] + --deg[mdl->a_row[2 * k + e]]] = k;
    int nq = 0, no = 0;
    for (int j = 0; j < n; j++) {
        deg[j] = adjs[j + 1] - adjs[j];
        if (deg[j] == 1)
            queue[nq++] = j;
    }
    for (int h = 0; h < nq; h++) {
        int j = queue[h];
        if (deg[j] != 1)
            continue;
        int k = -1;
        for (int a = adjs[j]; a < adjs[j + 1]; a++)
            if (!done[adj[a]])
                k = adj[a];
        int e = mdl->a_row[2 * k] == j ? 0 : 1;
        int q = mdl->a_row[2 * k + 1 - e];
        if (mdl->a_val[2 * k + e] == 0.0 || q == j)
            break; /* reported below as unmatched */
        done[k] = 1;
        matched[j] = 1;
        ws->pk[k] = j;
        ws->ap[k] = mdl->a_val[2 * k + e];
        ws->qk[k] = q;
        ws->aq[k] = q >= 0 ? mdl->a_val[2 * k + 1 - e] : 0.0;
        ws->order[no++] = k;
        deg[j]--;
        if (q >= 0 && --deg[q] == 1)
            queue[nq++] = q;
    }
    ws->sq_bad = -1;
    for (int k = 0; k < m && ws->sq_bad < 0; k++)
        if (!done[k])
            ws->sq_bad = k;
    if (ws->sq_bad < 0) {
        int t = 0;
        for (int j = 0; j < n; j++) {
            if (!matched[j])
                ws->urow[t++] = j;
            ws->chs[j] = 0;
        }
        ws->chs[n] = 0;
        for (int k = 0; k < m; k++)
            if (ws->qk[k] >= 0)
                ws->chs[ws->qk[k] + 1]++;
        for (int j = 0; j < n; j++)
            ws->chs[j + 1] += ws->chs[j];
        for (int j = 0; j <= n; j++)
            deg[j] = 0;
        for (int k = 0; k < m; k++)
            if (ws->qk[k] >= 0)
                ws->chp[ws->chs[ws->qk[k]] + deg[ws->qk[k]]++] = k;
    }
out:
    free(deg);
    free(adjs);
    free(adj);
    free(queue);
    free(done);
    free(matched);
    return ok;
}

static void *npm_primal_new(gs_solver *s)
{
    npm_ws *ws = npm_alloc(s, s->n);
    if (!ws)
        return NULL;
    const size_t m = (size_t)s->m + 1, n = (size_t)s->n + 1;
    int ok = 1;
    int **iv[] = {&ws->pk, &ws->qk, &ws->order, &ws->chp};
    for (size_t i = 0; i < sizeof iv / sizeof *iv; i++)
        ok &= (*iv[i] = calloc(m, sizeof(int))) != NULL;
    int **jv[] = {&ws->urow, &ws->chs, &ws->exi};
    for (size_t i = 0; i < sizeof jv / sizeof *jv; i++)
        ok &= (*jv[i] = calloc(n + 1, sizeof(int))) != NULL;
    double **pv[] = {&ws->ap, &ws->aq};
    for (size_t i = 0; i < sizeof pv / sizeof *pv; i++)
        ok &= (*pv[i] = calloc(m, sizeof(double))) != NULL;
    double **qv[] = {&ws->exv, &ws->px, &ws->pr, &ws->pf, &ws->pdx, &ws->pkdx, &ws->prt,
                     &ws->ptmp};
    for (size_t i = 0; i < sizeof qv / sizeof *qv; i++)
        ok &= (*qv[i] = calloc(n, sizeof(double))) != NULL;
    if (!ok || !sq_build(ws, s->pc->mdl)) {
        npm_free(ws);
        return NULL;
    }
    return ws;
}

/* x = A~^-T y with y = (g - z_pairs, z_U) (affine) or y = (-z_pairs, z_U)
 * (a direction). O(n). */
static void sq_x_of_z(const npm_ctx *c, const double *z, int affine, double *x)
{
    const npm_ws *ws = c->ws;
    const int m = c->s->m, n = c->s->n;
    for (int t = 0; t < n - m; t++)
        x[ws->urow[t]] = z[m + t];
    for (int o = m - 1; o >= 0; o--) {
        int k = ws->order[o], q = ws->qk[k];
        double yk = (affine ? c->pb->g[k] : 0.0) - z[k];
        x[ws->pk[k]] = (yk - (q >= 0 ? ws->aq[k] * x[q] : 0.0)) / ws->ap[k];
    }
}

/* z = (g - A'x, x_U). O(n). */
static void sq_z_of_x(const npm_ctx *c, const double *x, double *z)
{
    const npm_ws *ws = c->ws;
    const int m = c->s->m, n = c->s->n;
    gs_model_At(c->s->pc->mdl, x, z);
    for (int k = 0; k < m; k++)
        z[k] = c->pb->g[k] - z[k];
    for (int t = 0; t < n - m; t++)
        z[m + t] = x[ws->urow[t]];
}

/* px = x(z), pr = K px - f, g = dphi/dz = (-(A~^-1 r)_pairs, (A~^-1 r)_U):
 * on the pair rows the contact forces. O(sum n_b^2 + n). */
static void prim_gradient(npm_ctx *c)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m, n = c->s->n;
    sq_x_of_z(c, ws->x, 1, ws->px);
    gs_model_K_mul(c->s->pc->mdl, ws->px, ws->pr);
    for (int j = 0; j < n; j++) {
        ws->pr[j] -= ws->pf[j];
        ws->ptmp[j] = ws->pr[j];
    }
    for (int o = 0; o < m; o++) {
        int k = ws->order[o], q = ws->qk[k];
        double gy = ws->ptmp[ws->pk[k]] / ws->ap[k];
        if (q >= 0)
            ws->ptmp[q] -= ws->aq[k] * gy;
        ws->g[k] = -gy;
    }
    for (int t = 0; t < n - m; t++)
        ws->g[m + t] = ws->ptmp[ws->urow[t]];
}

/* The primal point of multipliers lam (m): px = K^-1 (f - A lam), z(px) into
 * zt. O(sum n_b^2 + n). */
static void prim_point(npm_ctx *c, const double *lam, double *zt)
{
    npm_ws *ws = c->ws;
    memcpy(ws->px, ws->pf, (size_t)c->s->n * sizeof *ws->px);
    gs_model_A_add(c->s->pc->mdl, -1.0, lam, ws->px);
    (void)gs_precomp_kinv(c->s->pc, ws->px); /* NaN on failure: the iteration stops */
    sq_z_of_x(c, ws->px, zt);
}

/* phi(P(z + alpha d)) - phi(z) = r'dx + 1/2 dx'K dx, dx = A~^-T dy. ws->dl
 * holds Delta on the support (Armijo's g'Delta). O(sum n_b^2 + n). */
static double prim_phi_inc(npm_ctx *c, int nl, double alpha)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m, n = c->s->n;
    memset(ws->yt, 0, (size_t)n * sizeof *ws->yt);
    for (int a = 0; a < nl; a++) {
        int i = ws->L[a];
        double t = ws->x[i] + alpha * ws->d[i];
        if (t < 0.0 && i < m)
            t = 0.0;
        ws->dl[a] = t - ws->x[i];
        ws->yt[i] = ws->dl[a];
    }
    sq_x_of_z(c, ws->yt, 0, ws->pdx);
    gs_model_K_mul(c->s->pc->mdl, ws->pdx, ws->pkdx);
    return cblas_ddot(n, ws->pr, 1, ws->pdx, 1) +
           0.5 * cblas_ddot(n, ws->pdx, 1, ws->pkdx, 1);
}

/* Exact minimization along the projected path (primal), in x space: slope
 * r'dx, curvature dx'K dx. When pair k hits its bound its component leaves
 * dy: dx -= dy_k A~^-T e_k (sparse: p(k) and the DOFs hanging on it) and K dx
 * loses the matching columns of K. O(n + n_b |A~^-T e_k|) per breakpoint. */
static double prim_exact(npm_ctx *c, int nl, bp_key *keys)
{
    npm_ws *ws = c->ws;
    const gs_model *mdl = c->s->pc->mdl;
    const int n = c->s->n;
    memset(ws->yt, 0, (size_t)n * sizeof *ws->yt);
    for (int a = 0; a < nl; a++)
        ws->yt[ws->L[a]] = ws->d[ws->L[a]];
    sq_x_of_z(c, ws->yt, 0, ws->pdx);
    gs_model_K_mul(mdl, ws->pdx, ws->pkdx);
    memcpy(ws->prt, ws->pr, (size_t)n * sizeof *ws->prt);
    double s1 = cblas_ddot(n, ws->prt, 1, ws->pdx, 1);
    double s2 = cblas_ddot(n, ws->pdx, 1, ws->pkdx, 1);
    int nb = breakpoints(c, nl, keys);
    double acur = 0.0, amin;
    for (int bq = 0; bq <= nb; bq++) {
        double aend = bq < nb ? keys[bq].a : INFINITY;
        if (segment_min(s1, s2, acur, aend, &amin))
            return amin;
        cblas_daxpy(n, aend - acur, ws->pkdx, 1, ws->prt, 1);
        int k = ws->L[keys[bq].i];
        double dyk = -ws->d[k];
        /* e = A~^-T e_k: x_p(k) = 1/a_p, then the pairs hanging on it */
        int ne = 1;
        ws->exi[0] = ws->pk[k];
        ws->exv[0] = 1.0 / ws->ap[k];
        for (int h = 0; h < ne; h++) {
            int j = ws->exi[h];
            for (int a = ws->chs[j]; a < ws->chs[j + 1]; a++) {
                int kk = ws->chp[a];
                ws->exi[ne] = ws->pk[kk];
                ws->exv[ne++] = -ws->aq[kk] * ws->exv[h] / ws->ap[kk];
            }
        }
        for (int h = 0; h < ne; h++) {
            int j = ws->exi[h];
            double v = dyk * ws->exv[h];
            ws->pdx[j] -= v;
            gs_model_K_col_axpy(mdl, j, -v, ws->pkdx);
        }
        s1 = cblas_ddot(n, ws->prt, 1, ws->pdx, 1);
        s2 = cblas_ddot(n, ws->pdx, 1, ws->pkdx, 1);
        acur = aend;
    }
    return acur;
}

/* ---- the iteration --------------------------------------------------------- */

/* Polish on the contact set marked by lam != 0 or eq (dual) / by C (relative):
 * factor the set (updates, or one dpotrf), lam_C = Q_CC^-1 p_C with one
 * refinement step and the zero rule (cset.h gs_cset_settle). Leaves lam in ws->x-order
 * full vector `lam` (m) and w = Q lam - p in ws->g-like `w`. Returns the
 * violations left (pairs outside C with w < -tol_w), or -1 on no memory. */
static int polish(npm_ctx *c, double *lam, double *w)
{
    npm_ws *ws = c->ws;
    gs_solver *s = c->s;
    gs_cset *cs = &ws->cs;
    const int m = s->m;
    int nl = 0;
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(c->pb, i) || lam[i] > 0.0) {
            ws->list[nl++] = i;
            ws->in[i] = 1;
        }
    if (!c->chol) {
        for (int a = 0; a < c->ns; a++)
            ws->spos[ws->S[a]] = -1;
        c->ns = 0;
        gs_cset_clear(cs);
        c->chol = 1;
    }
    gs_err rc = chol_sync(c, nl);
    for (int a = 0; a < nl; a++)
        ws->in[ws->list[a]] = 0;
    if (rc != GS_OK)
        return -1;
    /* the refined solve with the zero rule: degenerate pairs (w = lam = 0)
     * leave the set like negative ones */
    gs_cset_settle(cs, c->pb, s->p, s->tol_lam, ws->z, ws->r, w, ws->list);
    memset(lam, 0, (size_t)m * sizeof *lam);
    for (int q = 0; q < cs->k; q++)
        lam[cs->idx[q]] = ws->z[q];
    int viol = 0;
    for (int i = 0; i < m; i++)
        if (cs->pos[i] < 0 && w[i] < -s->tol_w)
            viol++;
    return viol;
}

/* Optimality measure ||x - P(x - D grad)||_inf in the units of x. */
static double proj_grad(const npm_ctx *c)
{
    const npm_ws *ws = c->ws;
    const double *qd = c->s->pc->qdiag;
    const int dual = c->form == GS_FORM_DUAL;
    double pg = 0.0;
    for (int i = 0; i < c->s->m; i++) {
        double sc = dual ? 1.0 / qd[i] : qd[i];
        double t = ws->x[i] - sc * ws->g[i];
        if (!gs_problem_is_eq(c->pb, i) && t < 0.0)
            t = 0.0;
        pg = fmax(pg, fabs(ws->x[i] - t));
    }
    return pg;
}

/* Bertsekas' eps_k = min(eps0, pg), eps0 = 1e-6 of the largest variable.
 * Measured: eps0 = 1e-2 .. 1 of it fixes pairs too early and multiplies the
 * Newton iterations by 6 on the lap joint. */
static double npm_eps(const npm_ctx *c, double pg)
{
    double xmax = 0.0;
    for (int i = 0; i < c->s->m; i++)
        xmax = fmax(xmax, c->ws->x[i]);
    return fmin(1e-6 * xmax, pg);
}

/* After a polish: the iterate from the polished (lam, w). */
static void restart_from(npm_ctx *c, const double *lam, const double *w)
{
    npm_ws *ws = c->ws;
    const int m = c->s->m;
    if (c->form == GS_FORM_DUAL) {
        memcpy(ws->x, lam, (size_t)m * sizeof *lam);
        dual_gradient(c->s, ws->x, ws->g);
    } else {
        if (c->form == GS_FORM_PRIMAL)
            prim_point(c, lam, ws->x); /* x_U; the pair rows from w below */
        for (int i = 0; i < m; i++)
            ws->x[i] = (ws->cs.pos[i] >= 0 || w[i] < 0.0) ? 0.0 : w[i];
        if (c->form == GS_FORM_PRIMAL)
            prim_gradient(c);
        else
            rel_gradient(c->s, ws->x, ws->y, ws->g);
    }
}

/* 1 if the Newton step d (support ws->L[0..nsupp)) moves no residual gap
 * by more than tol_w: |d_i| mm on the relative and primal iterates (w, and
 * x_U), |d_i| Q_ii on the dual multipliers. O(nsupp). */
static int step_negligible(const npm_ctx *c, int nsupp)
{
    const npm_ws *ws = c->ws;
    const int dual = c->form == GS_FORM_DUAL;
    for (int a = 0; a < nsupp; a++) {
        int i = ws->L[a];
        double mv = fabs(ws->d[i]) * (dual ? c->s->pc->qdiag[i] : 1.0);
        if (!(mv <= c->s->tol_w))
            return 0;
    }
    return 1;
}

static gs_err npm_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, gs_form form,
                        double *lam, gs_solve_info *info, gs_error *err)
{
    const int primal = form == GS_FORM_PRIMAL;
    npm_ws *ws = gs_solver_ws(s, GS_METHOD_NPM, form, primal ? npm_primal_new : npm_new,
                              npm_free, err);
    if (!ws)
        return GS_ERR_NOMEM;
    if (primal && ws->sq_bad >= 0)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "pairs",
                         "npm primal: no square A~ by unit rows: pair %d closes a cycle of "
                         "pairs over shared DOFs (use the dual or relative form)",
                         ws->sq_bad);
    const int m = s->m, max_iter = gs_solver_max_iter(s, o);
    const int dual = form == GS_FORM_DUAL, nv = ws->nv;
    npm_ctx c = {.ws = ws, .s = s, .pb = pb, .o = o, .form = form,
                 .chol = o->npm_linear == GS_NPM_LIN_CHOL};
    gs_cset *cs = &ws->cs;
    gs_cset_clear(cs);
    info->status = GS_STATUS_OPTIMAL;
    double *wv = ws->xn; /* scratch m for polish */

    /* start */
    memset(ws->x, 0, (size_t)nv * sizeof *ws->x);
    if (primal)
        gs_problem_load_vector(pb, ws->pf);
    int warm_ok = 0;
    if (o->warm && o->warm->n_act > 0) {
        /* the warm set + equality pairs, lam_C = Q_CC^-1 p_C clipped */
        int nl = 0;
        for (int i = 0; i < m; i++)
            if (gs_problem_is_eq(pb, i)) {
                ws->list[nl++] = i;
                ws->in[i] = 1;
            }
        for (int q = 0; q < o->warm->n_act; q++) {
            int i = o->warm->act[q];
            if (!ws->in[i]) {
                ws->in[i] = 1;
                ws->list[nl++] = i;
            }
        }
        for (int a = 0; a < nl; a++)
            ws->in[ws->list[a]] = 0;
        if (gs_cset_build(cs, ws->list, nl, NULL) == GS_OK) {
            for (int q = 0; q < cs->k; q++)
                ws->z[q] = s->p[cs->idx[q]];
            gs_cset_solve(cs, ws->z);
            int kept = 0;
            for (int q = 0; q < cs->k; q++) {
                int i = cs->idx[q];
                double v = ws->z[q];
                if (!gs_problem_is_eq(pb, i) && v < 0.0)
                    v = 0.0;
                else if (!gs_problem_is_eq(pb, i))
                    kept++;
                ws->x[i] = v;
            }
            warm_ok = 1;
            info->warm_used = 1;
            info->warm_kept = kept;
            if (!dual) { /* w = 0 on the warm set, Q lam - p (clipped) elsewhere */
                dual_gradient(s, ws->x, ws->z);
                if (primal) /* x_U from x = K^-1 (f - A lam) */
                    prim_point(&c, ws->x, ws->x);
                for (int i = 0; i < m; i++)
                    ws->x[i] = cs->pos[i] >= 0 || ws->z[i] < 0.0 ? 0.0 : ws->z[i];
            }
        }
        if (!c.chol)
            gs_cset_clear(cs);
    }
    if (dual) {
        dual_gradient(s, ws->x, ws->g);
    } else if (primal) {
        /* primal: cold y = min(A~'x0, g), x0 = K^-1 f (w = max(g - A'x0, 0));
         * warm as relative, x_U from the warm multipliers */
        if (!warm_ok) {
            memset(ws->z, 0, (size_t)m * sizeof *ws->z);
            prim_point(&c, ws->z, ws->x);
            for (int i = 0; i < m; i++)
                ws->x[i] = fmax(ws->x[i], 0.0);
        }
        for (int i = 0; i < m; i++)
            if (gs_problem_is_eq(pb, i))
                ws->x[i] = 0.0;
        prim_gradient(&c);
    } else {
        /* relative: u = g (w = 0) cold; warm: w = 0 on the warm set, w = Q lam
         * - p (clipped) elsewhere */
        if (!warm_ok)
            memset(ws->x, 0, (size_t)m * sizeof *ws->x);
        for (int i = 0; i < m; i++)
            if (gs_problem_is_eq(pb, i))
                ws->x[i] = 0.0;
        rel_gradient(s, ws->x, ws->y, ws->g);
    }

    int prev_ns = -1, stable = 0, stalls = 0, last_full = 0;
    double last_alpha = 1.0;
    int last_polish = 0; /* a polish every 10 Newton steps at the latest: a
                          * block active-set step on the current contact set
                          * that ends the slow tail of the projected path */
    gs_err rc = GS_OK;
    for (;;) {
        double pg = proj_grad(&c);
        double eps = npm_eps(&c, pg);
        /* the system set: dual F (not in I+), relative C (= I+) */
        int nl = 0, changed = 0, viol = 0;
        for (int i = 0; i < m; i++) {
            const int eq = gs_problem_is_eq(pb, i);
            int ins;
            if (dual) {
                ins = eq || !(ws->x[i] <= eps && ws->g[i] > 0.0);
                if (ins && !eq && ws->x[i] == 0.0) {
                    /* at the bound, gradient inward: violated pairs enter in
                     * batches (below); within tolerance: stays fixed */
                    if (ws->g[i] < -s->tol_w)
                        ws->cand[viol++] = (gs_cand){!(pb->load && pb->load[i] > 0.0),
                                                     ws->g[i], i};
                    ins = 0;
                }
            } else {
                ins = eq || (ws->x[i] <= eps && ws->g[i] * s->pc->qdiag[i] > s->tol_w);
                if (!eq && ws->x[i] == 0.0 && ws->g[i] < 0.0 &&
                    ws->g[i] * s->pc->qdiag[i] < -s->tol_w)
                    viol++;
                if (!eq && ws->x[i] > 0.0 && ins)
                    viol++; /* not yet closed */
            }
            if (ins) {
                ws->list[nl++] = i;
                ws->in[i] = 1;
                int wasin = c.chol ? cs->pos[i] >= 0 : ws->spos[i] >= 0;
                changed += !wasin;
            }
        }
        if (dual && viol > 0) {
            /* entering batch: the most violated (loaded pairs first), so
             * that the free set grows towards the contact set instead of
             * starting from every pair that penetrates at lam = 0 */
            int want = gs_cand_order_head(ws->cand, viol, 32 + nl / 2);
            for (int q = 0; q < want; q++) {
                int i = ws->cand[q].i;
                ws->list[nl++] = i;
                ws->in[i] = 1;
                changed += !(c.chol ? cs->pos[i] >= 0 : ws->spos[i] >= 0);
            }
        }
        changed += (prev_ns >= 0 && nl != prev_ns);
        stable = (changed == 0 && prev_ns >= 0) ? stable + 1 : 0;
        /* converged on a stable set, or the line search found no descent
         * (round-off): polish and verify */
        if ((stable && viol == 0 && last_full) || last_alpha < 1e-12 ||
            c.newton - last_polish >= 10) {
            last_polish = c.newton;
            for (int a = 0; a < nl; a++)
                ws->in[ws->list[a]] = 0;
            /* converged on the set: polish and verify */
            int left = dual ? polish(&c, ws->x, wv) : -2;
            if (!dual) {
                /* lam on C from the gradient; polish on C */
                memcpy(lam, ws->g, (size_t)m * sizeof *lam);
                for (int i = 0; i < m; i++)
                    if (!(ws->x[i] == 0.0 && (gs_problem_is_eq(pb, i) || lam[i] > 0.0)))
                        lam[i] = 0.0;
                left = polish(&c, lam, wv);
            }
            if (left < 0)
                return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the contact set");
            if (dual)
                memcpy(lam, ws->x, (size_t)m * sizeof *lam);
            if (left == 0)
                goto done;
            restart_from(&c, lam, wv);
            if (++stalls >= 50) {
                info->status = GS_STATUS_NO_PROGRESS;
                goto done;
            }
            prev_ns = -1;
            last_alpha = 1.0;
            last_full = 0;
            continue;
        }
        gs_status stop = gs_solve_stop(o, c.newton, max_iter);
        if (stop != GS_STATUS_OPTIMAL) {
            for (int a = 0; a < nl; a++)
                ws->in[ws->list[a]] = 0;
            info->status = stop;
            if (dual)
                memcpy(lam, ws->x, (size_t)m * sizeof *lam);
            else
                memcpy(lam, ws->g, (size_t)m * sizeof *lam);
            for (int i = 0; i < m; i++)
                if (!gs_problem_is_eq(pb, i) && lam[i] < 0.0)
                    lam[i] = 0.0;
            goto done_nopolish;
        }
        rc = set_system(&c, nl);
        for (int a = 0; a < nl; a++)
            ws->in[ws->list[a]] = 0;
        if (rc != GS_OK)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the Newton system");
        int k;
        const int *S = sys_set(&c, &k);
        prev_ns = k;
        /* Newton step on S */
        for (int a = 0; a < k; a++)
            ws->b[a] = dual ? -ws->g[S[a]] : ws->x[S[a]] + s->p[S[a]];
        rc = sys_solve(&c, ws->b, ws->z, fmax(pg, 1e-14));
        if (rc == GS_ERR_NOT_SPD) { /* a dependent pair left the set: redo */
            prev_ns = -1;
            continue;
        }
        if (rc != GS_OK)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the Newton system");
        S = sys_set(&c, &k);
        c.newton++;
        memset(ws->d, 0, (size_t)nv * sizeof *ws->d);
        int nsupp = 0;
        if (dual) {
            for (int a = 0; a < k; a++)
                ws->d[S[a]] = ws->z[a];
            for (int i = 0; i < m; i++)
                if (ws->x[i] > 0.0 && !(c.chol ? cs->pos[i] >= 0 : ws->spos[i] >= 0))
                    ws->d[i] = -ws->x[i];
        } else if (primal) {
            /* the minimizer with C at its bound: x = K^-1 (f - A_C lam_C)
             * (the Schur complement: the exact Newton step on the free rows,
             * (H_FF)^-1 from Q_CC^-1 and K^-1), O(sum n_b^2 + n) */
            memset(ws->hv, 0, (size_t)m * sizeof *ws->hv);
            for (int a = 0; a < k; a++)
                ws->hv[S[a]] = ws->z[a];
            prim_point(&c, ws->hv, ws->yd);
            for (int i = 0; i < nv; i++) {
                int inC = i < m && (c.chol ? cs->pos[i] >= 0 : ws->spos[i] >= 0);
                ws->d[i] = inC ? -ws->x[i] : ws->yd[i] - ws->x[i];
            }
        } else {
            /* w_F target = Q[F, C] lam_C - p_F: one O(m k) product */
            for (int i = 0; i < m; i++)
                ws->hv[i] = -s->p[i];
            for (int a = 0; a < k; a++)
                cblas_daxpy(m, ws->z[a], s->pc->Q + (size_t)S[a] * m, 1, ws->hv, 1);
            for (int i = 0; i < m; i++) {
                int inC = c.chol ? cs->pos[i] >= 0 : ws->spos[i] >= 0;
                ws->d[i] = inC ? -ws->x[i] : ws->hv[i] - ws->x[i];
            }
        }
        for (int i = 0; i < nv; i++)
            if (ws->d[i] != 0.0)
                ws->L[nsupp++] = i;
        if (nsupp == 0) {
            last_full = 1;
            continue;
        }
        double alpha = 0.0;
        /* step length */
        inc_fn inc = dual ? dual_phi_inc : primal ? prim_phi_inc : rel_phi_inc;
        switch (o->linesearch) {
        case GS_LS_GOLDEN:
            alpha = golden(&c, nsupp, inc);
            break;
        case GS_LS_ARMIJO:
            alpha = armijo(&c, nsupp, inc);
            break;
        default:
            alpha = dual     ? dual_exact(&c, nsupp, (bp_key *)ws->bkeys)
                    : primal ? prim_exact(&c, nsupp, (bp_key *)ws->bkeys)
                             : rel_exact(&c, nsupp, (bp_key *)ws->bkeys);
            break;
        }
        /* the new point */
        int clipped = 0;
        for (int a = 0; a < nsupp; a++) {
            int i = ws->L[a];
            double t = ws->x[i] + alpha * ws->d[i];
            if (t < 0.0 && i < m && !(dual && gs_problem_is_eq(pb, i))) {
                t = 0.0;
                clipped++;
            }
            ws->x[i] = t;
        }
        /* a full Newton step (clipping allowed), no move left, or a Newton
         * step below the answer's accuracy (round-off then decides the line
         * search's alpha): candidate */
        last_full = fabs(alpha - 1.0) < 1e-6 || alpha < 1e-12 || step_negligible(&c, nsupp);
        last_alpha = alpha;

        (void)clipped;
        if (dual)
            dual_gradient(s, ws->x, ws->g);
        else if (primal)
            prim_gradient(&c);
        else
            rel_gradient(s, ws->x, ws->y, ws->g);
    }
done:
done_nopolish:
    info->iterations = c.newton;
    info->cg_iterations = c.cg_its;
    return GS_OK;
}

const gs_method_ops gs_method_npm = {
    .name = "npm",
    .forms = (1u << GS_FORM_DUAL) | (1u << GS_FORM_RELATIVE) | (1u << GS_FORM_PRIMAL),
    .default_form = GS_FORM_DUAL,
    .solve = npm_solve,
};
