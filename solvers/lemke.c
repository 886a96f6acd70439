/*
 * lemke.c -- Lemke's complementary pivot method on the dual LCP (method
 * "lemke", formulation dual only).
 *
 * Problem. The dual (2) of docs/math.md as the LCP(q = -p, M = Q):
 *     w = Q z - p >= 0,  z >= 0,  z'w = 0        (z = lam, m pairs)
 * with the permanently fastened pairs E as equalities: w_E = 0, z_E free.
 *
 * Method. Lemke (1965): an artificial variable z0 and a covering vector d,
 *     w = Q z - p + d z0,
 * start from a complementary basis made feasible by z0, then complementary
 * pivots (the entering variable is the complement of the one that left)
 * until z0 leaves. Q is SPD, hence a P-matrix: the method is the parametric
 * path of LCP(-p + t d, Q) from t = z0 down to 0, z0 never increases and
 * ray termination cannot happen in exact arithmetic (it is still detected
 * and reported as GS_STATUS_RAY).
 *   Covering vector (cold start): d_i = sqrt(Q_ii / max_j Q_jj) on the
 *   inequality pairs, 0 on E: the vector e of the Jacobi-scaled LCP
 *   (D^-1/2 Q D^-1/2 unit diagonal, D = diag(Q)), normalized so that the
 *   most compliant pair gets 1 mm per unit of z0 (z0 stays in mm). The
 *   method is the homotopy p - t d: at t = z0 = max p_i / d_i nothing
 *   touches, and as t falls to 0 contacts appear and open along the path;
 *   pivots = contact-set changes on the path. The scaled e makes the path,
 *   and so the pivot count, independent of how each pair's row of A is
 *   scaled, and opens stiff pairs (small Q_ii) proportionally less than
 *   compliant ones. Measured against d = e on the full models (lap
 *   m = 2603, sandwich m = 4840; 10/50/100% fasteners) it was 8-52% faster
 *   in five of the six cases and 36% slower on the lap joint at 10%;
 *   d_i = Q_ii was worse on the sandwich joint.
 *   Equality pairs: z_E is basic from the start and never leaves (it is
 *   excluded from the ratio test), w_E is never basic, d_E = 0. This is
 *   Lemke with d' = d_I on the Schur-complement LCP of the inequality pairs,
 *   M' = Q_II - Q_IE Q_EE^-1 Q_EI, q' = -(p_I - Q_IE Q_EE^-1 p_E), without
 *   ever forming M': the block pivot is carried by the factor of Q_ZZ.
 *   Warm start (opts.warm): crash the complementary basis Z = E + the warm
 *   contact set (z_Z = Q_ZZ^-1 p_Z, w = Q[:,Z] z_Z - p). If it is feasible,
 *   it is the solution (0 pivots). Otherwise Lemke starts from it with the
 *   covering vector d = B c (B the crashed basis matrix, c > 0 on the basic
 *   variables, the same scaled rate for all: sqrt(Q_ii)/zu for a basic w_i,
 *   1/(sqrt(Q_jj) zu) for a basic z_j, 0 for z_E): d = c_W - Q[:,Z] c_Z, so
 *   that every basic variable moves by c_i z0 and z0 = max_i(-x_i / c_i)
 *   makes the crashed basis feasible (Lemke with an initial basis; the
 *   Siconos approach). A crash whose Q_ZZ is singular drops the dependent
 *   warm pairs.
 *   Anti-cycling: lexicographic ratio test (Cottle, Pang, Stone 4.4 with the
 *   perturbation q + (eps, eps^2, ...)): among the candidates tied to
 *   round-off, the leaving variable is the lexicographic minimum of
 *   (row of B^-1) / pivot, rows of B^-1 obtained by one transposed solve per
 *   tied candidate (only on ties). If z0 is among the tied candidates it
 *   leaves (the method ends).
 *   Polish: on the final contact set, Q_CC lam_C = p_C from a fresh Cholesky
 *   factor with one step of iterative refinement; if the polished point
 *   violates the tolerance (round-off in a degenerate path), Lemke restarts
 *   from that set as a warm crash (at most LK_RESTARTS times), then GI
 *   relative finishes from it (gs_gi_relative_finish, info->crossover: its
 *   additions and removals take the last pairs in or out that the pivots'
 *   round-off left within the tolerance's reach: the small lap joint under
 *   1e5 N fasteners, |p| ~ 7e3 mm).
 * Reference: C. E. Lemke, Bimatrix equilibrium points and mathematical
 *   programming, Management Science 11 (1965) 681-689; R. W. Cottle, J.-S.
 *   Pang, R. E. Stone, The Linear Complementarity Problem (1992), sect. 4.4
 *   (lexicographic Lemke), 4.5 (the parametric view for P-matrices).
 *
 * Basis representation. Z = pairs with z_j basic (E always in Z), W = pairs
 * with w_i basic, N = the complement of W. While z0 is basic, exactly one
 * index r (the "missing" pair) has both w_r and z_r nonbasic and
 * N = Z + {r}; otherwise N = Z. The m x m basis matrix
 *     B = [ I  -F ; 0  -C ],  F = [Q_WZ  d_W],  C = [Q_NZ  d_N]
 * (rows W, N) never exists: only C matters, and C is Q_ZZ bordered by the
 * row r and the column d when z0 is basic. Invariants:
 *   cs (gs_cset): L L' = Q_ZZ in the order cs.idx; the factor is
 *     updated per pivot (append O(k^2), rank-one downdate on removal) and
 *     rebuilt from scratch (dpotrf) every max(LK_REFACTOR, k) updates, or
 *     when the residual check of an entering column fails.
 *   v = Q_ZZ^-1 d_Z and sden = d_r - Q_rZ v (the Schur complement of Q_ZZ in
 *     C, nonzero iff B is nonsingular): C x = b and C'y = f cost two
 *     triangular solves each plus O(k).
 *   zv (values of z, zero off Z), wv (values of w on W, zero on N), z0:
 *     updated by x += theta * direction each pivot and recomputed from the
 *     factor every LK_REFRESH pivots.
 * Complexity per pivot (k = |Z|, m pairs): O(m k) for the product with the
 * columns Q[:, Z] (gs_cset_qmul) that gives the change of every basic w (the
 * dominant term), + O(k^2) for the entering column (two triangular solves
 * with the factor, two more for v after a change of Z) and the factor update (append: one triangular solve;
 * removal at position c: O((k - c)^2) rotations),
 * + O(m) ratio test. Each candidate tied in the ratio test adds O(k^2 + m);
 * the periodic refactorization adds O(k^3 / 3) per max(LK_REFACTOR, k)
 * updates, i.e. O(k^2 / 3) amortized. Memory O(k^2) + O(m).
 * Warm crash O(k^3/3 + m k); polish O(k^3/3 + m k). No allocation inside the
 * pivot loop except the geometric growth of the contact-set capacity.
 */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cset.h"
#include "gi.h"
#include "solver_impl.h"

/* Pivot: a candidate's scaled entry must exceed LK_PIV_REL times the largest
 * scaled entry of the column (scaled by diag(Q): w_i / sqrt(Q_ii),
 * z_j sqrt(Q_jj), z0 / sqrt(max Q_ii); see lk_cand). */
#define LK_PIV_REL 1e-11
/* Residual check of an entering column on the rows N, relative to the size
 * of the terms: beyond it the factor is rebuilt. */
#define LK_RES_REL 1e-8
/* Ties in the ratio test: candidates whose diag(Q)-scaled value at the step
 * is within LK_TIE_REL of the largest scaled basic value (round-off level,
 * not the feasibility tolerance: a "tie" resolved against the true minimum
 * by a feasibility-sized margin would leave the basis visibly infeasible). */
#define LK_TIE_REL 1e-12
/* Lexicographic comparison: entries equal within this relative tolerance. */
#define LK_LEX_REL 1e-12
/* Recompute the basic values from the factor every LK_REFRESH pivots. */
#define LK_REFRESH 50
/* Fresh factorization of Q_ZZ after max(LK_REFACTOR, k) updates: the
 * amortized O(k^2 / 3) per update stays below the update's own cost. */
#define LK_REFACTOR 100
/* Restarts from the current contact set (as a crashed basis) after a
 * numerical breakdown or when the polished point is outside the tolerance. */
#define LK_RESTARTS 2

enum { ENT_Z0, ENT_Z, ENT_W };

typedef struct {
    const gs_precomp *pc;
    int m;
    gs_cset cs;          /* Z with chol(Q_ZZ) and Q[:, Z] */
    double *sq;          /* m: sqrt(Q_ii), the diag(Q) scaling */
    double zu;           /* unit of z0 in the scaled pivot test: sqrt(max Q_ii) */
    double *d;           /* m: covering vector */
    double *zv, *wv;     /* m: values of z and w */
    double *dw;          /* m: change of w per unit of the entering variable */
    double *dz;          /* m + 1: change of (z_Z, z0) in factor order */
    double *v;           /* m: Q_ZZ^-1 d_Z */
    double *rhs, *f, *y; /* m + 1 scratch */
    double *lexa, *lexb; /* m: rows of B^-1 of two tied candidates */
    int *list;           /* m: pair lists (crash, refactor) */
    int *cand;           /* m + 1: candidate codes of the ratio test */
    unsigned char *mark; /* m */
    /* state of the current solve */
    const gs_problem *pb;
    const double *p;
    double tol;          /* mm: feasibility of w (z_j: tol / Q_jj N) */
    int r;               /* missing index while z0 is basic, else -1 */
    int z0b;             /* z0 basic */
    double z0, dz0, sden;
    int v_ok;            /* v matches Z and d */
    int n_upd;           /* factor updates since the last fresh factorization */
    int ent, er;         /* entering variable (ENT_*) and its pair */
} lk_ws;

/* Candidate codes: w_i -> i, z_j -> m + j, z0 -> 2 m. */

static void lk_free(void *ptr)
{
    lk_ws *L = ptr;
    if (!L)
        return;
    gs_cset_free(&L->cs);
    free(L->sq);
    free(L->d);
    free(L->zv);
    free(L->wv);
    free(L->dw);
    free(L->dz);
    free(L->v);
    free(L->rhs);
    free(L->f);
    free(L->y);
    free(L->lexa);
    free(L->lexb);
    free(L->list);
    free(L->cand);
    free(L->mark);
    free(L);
}

static void *lk_new(gs_solver *s)
{
    lk_ws *L = calloc(1, sizeof *L);
    if (!L)
        return NULL;
    const size_t m = (size_t)s->m, db = sizeof(double);
    L->pc = s->pc;
    L->m = s->m;
    L->sq = malloc(m * db);
    L->d = malloc(m * db);
    L->zv = malloc(m * db);
    L->wv = malloc(m * db);
    L->dw = malloc(m * db);
    L->dz = malloc((m + 1) * db);
    L->v = malloc(m * db);
    L->rhs = malloc((m + 1) * db);
    L->f = malloc((m + 1) * db);
    L->y = malloc((m + 1) * db);
    L->lexa = malloc(m * db);
    L->lexb = malloc(m * db);
    L->list = malloc(m * sizeof(int));
    L->cand = malloc((m + 1) * sizeof(int));
    L->mark = malloc(m);
    gs_error e;
    if (!L->sq || !L->d || !L->zv || !L->wv || !L->dw || !L->dz || !L->v || !L->rhs || !L->f ||
        !L->y || !L->lexa || !L->lexb || !L->list || !L->cand || !L->mark ||
        gs_cset_init(&L->cs, s->pc, &e) != GS_OK) {
        lk_free(L);
        return NULL;
    }
    double qmax = 0.0;
    for (size_t i = 0; i < m; i++) {
        L->sq[i] = sqrt(s->pc->qdiag[i]);
        qmax = fmax(qmax, s->pc->qdiag[i]);
    }
    L->zu = sqrt(qmax);
    return L;
}

static inline int is_eq(const lk_ws *L, int i)
{
    return gs_problem_is_eq(L->pb, i);
}

/* y += Q[:, Z] v (v in factor order). O(m k). */
static void lk_qz_mv(lk_ws *L, const double *v, double *y)
{
    gs_cset_qmul(&L->cs, v, y);
}

/* v = Q_ZZ^-1 d_Z (once per Z) and sden = d_r - Q_rZ v. Returns 0 if C is
 * numerically singular. O(k^2). */
static int lk_prep(lk_ws *L)
{
    const int k = L->cs.k, r = L->r;
    if (!L->v_ok) {
        for (int a = 0; a < k; a++)
            L->v[a] = L->d[L->cs.idx[a]];
        gs_cset_solve(&L->cs, L->v);
        L->v_ok = 1;
    }
    if (!L->z0b)
        return 1;
    const double *qr = L->pc->Q + (size_t)r * L->m;
    double hv = 0.0, mag = fabs(L->d[r]);
    for (int a = 0; a < k; a++) {
        double t = qr[L->cs.idx[a]] * L->v[a];
        hv += t;
        mag += fabs(t);
    }
    L->sden = L->d[r] - hv;
    return fabs(L->sden) > DBL_EPSILON * mag;
}

/* x (k [+1]) = C^-1 b: rows Z then r, unknowns z_Z then z0. O(k^2). */
static void lk_solve_C(const lk_ws *L, const double *b, double *x)
{
    const int k = L->cs.k;
    memcpy(x, b, (size_t)k * sizeof *x);
    gs_cset_solve(&L->cs, x);
    if (!L->z0b)
        return;
    const double *qr = L->pc->Q + (size_t)L->r * L->m;
    double hx = 0.0;
    for (int a = 0; a < k; a++)
        hx += qr[L->cs.idx[a]] * x[a];
    double t = (b[k] - hx) / L->sden;
    for (int a = 0; a < k; a++)
        x[a] -= L->v[a] * t;
    x[k] = t;
}

/* y (k [+1]) = C^-T f. O(k^2). */
static void lk_solve_Ct(const lk_ws *L, const double *f, double *y)
{
    const int k = L->cs.k;
    if (!L->z0b) {
        memcpy(y, f, (size_t)k * sizeof *y);
        gs_cset_solve(&L->cs, y);
        return;
    }
    const double *qr = L->pc->Q + (size_t)L->r * L->m;
    double yr = (f[k] - (k ? cblas_ddot(k, L->v, 1, f, 1) : 0.0)) / L->sden;
    for (int a = 0; a < k; a++)
        y[a] = f[a] - qr[L->cs.idx[a]] * yr;
    gs_cset_solve(&L->cs, y);
    y[k] = yr;
}

/* Fresh factorization of Q_ZZ (same order). */
static gs_err lk_refactor(lk_ws *L, gs_error *err)
{
    const int k = L->cs.k;
    memcpy(L->list, L->cs.idx, (size_t)k * sizeof *L->list);
    L->v_ok = 0;
    L->n_upd = 0;
    return gs_cset_build(&L->cs, L->list, k, err);
}

/* Basic values from the factor: C (z_Z, z0) = p_N, w = Q[:,Z] z_Z - p + d z0
 * on W, 0 on N. Needs lk_prep when z0 is basic. O(k^2 + m k). */
static void lk_refresh(lk_ws *L)
{
    const int m = L->m, k = L->cs.k;
    const int *idx = L->cs.idx;
    for (int a = 0; a < k; a++)
        L->rhs[a] = L->p[idx[a]];
    if (L->z0b)
        L->rhs[k] = L->p[L->r];
    lk_solve_C(L, L->rhs, L->y);
    memset(L->zv, 0, (size_t)m * sizeof *L->zv);
    for (int a = 0; a < k; a++)
        L->zv[idx[a]] = L->y[a];
    L->z0 = L->z0b ? L->y[k] : 0.0;
    for (int i = 0; i < m; i++)
        L->wv[i] = -L->p[i];
    lk_qz_mv(L, L->y, L->wv);
    if (L->z0 != 0.0)
        cblas_daxpy(m, L->z0, L->d, 1, L->wv, 1);
    for (int a = 0; a < k; a++)
        L->wv[idx[a]] = 0.0;
    if (L->z0b)
        L->wv[L->r] = 0.0;
}

/* Is the current complementary basis (z0 nonbasic) feasible? O(m). */
static int lk_feasible(const lk_ws *L)
{
    const int m = L->m;
    for (int i = 0; i < m; i++) {
        if (L->cs.pos[i] >= 0) {
            if (!is_eq(L, i) && L->zv[i] < -L->tol / L->pc->qdiag[i])
                return 0;
        } else if (L->wv[i] < -L->tol) {
            return 0;
        }
    }
    return 1;
}

/* Change of every basic variable per unit increase of the entering one:
 * dz (k [+1], z0 last) from C, dw (m) from one dgemv. Returns 0 if the
 * rows N do not reproduce their target (0, or 1 for w_r entering) within
 * LK_RES_REL of the size of the terms. */
static int lk_direction(lk_ws *L)
{
    const int m = L->m, k = L->cs.k, r = L->er;
    const int *idx = L->cs.idx;
    const double *Q = L->pc->Q;
    double *b = L->rhs;
    const double *qr = L->ent == ENT_Z ? Q + (size_t)r * m : NULL;
    for (int a = 0; a < k; a++)
        b[a] = L->ent == ENT_Z0 ? -L->d[idx[a]] : (qr ? -qr[idx[a]] : 0.0);
    if (L->z0b)
        b[k] = qr ? -qr[r] : 1.0;
    lk_solve_C(L, b, L->dz);
    L->dz0 = L->ent == ENT_Z0 ? 1.0 : (L->z0b ? L->dz[k] : 0.0);
    if (qr)
        memcpy(L->dw, qr, (size_t)m * sizeof *L->dw);
    else
        memset(L->dw, 0, (size_t)m * sizeof *L->dw);
    lk_qz_mv(L, L->dz, L->dw);
    cblas_daxpy(m, L->dz0, L->d, 1, L->dw, 1);
    /* |Q_ij| <= sq_i sq_j bounds the terms of row i by sq_i * sz + ... */
    double sz = 0.0;
    for (int a = 0; a < k; a++)
        sz += L->sq[idx[a]] * fabs(L->dz[a]);
    for (int a = 0; a <= k; a++) {
        int i = a < k ? idx[a] : (L->z0b ? L->r : -1);
        if (i < 0)
            break;
        double target = (a == k && L->ent == ENT_W) ? 1.0 : 0.0;
        double scale = L->sq[i] * sz + fabs(L->d[i] * L->dz0) + fabs(target) +
                       (qr ? L->sq[i] * L->sq[r] : 0.0);
        if (!(fabs(L->dw[i] - target) <= LK_RES_REL * scale))
            return 0;
    }
    return 1;
}

/* Value x, change D and unit u (x / u is the diag(Q)-scaled variable) of a
 * candidate. */
static void lk_cand(const lk_ws *L, int code, double *x, double *D, double *u)
{
    const int m = L->m;
    if (code < m) {
        *x = L->wv[code];
        *D = L->dw[code];
        *u = L->sq[code];
    } else if (code < 2 * m) {
        int j = code - m;
        *x = L->zv[j];
        *D = L->dz[L->cs.pos[j]];
        *u = 1.0 / L->sq[j];
    } else {
        *x = L->z0;
        *D = L->dz0;
        *u = L->zu;
    }
}

/* out (m) = (row of B^-1 of the candidate) / a, indexed by equation row. */
static void lk_lex_row(lk_ws *L, int code, double a, double *out)
{
    const int m = L->m, k = L->cs.k, nn = k + L->z0b;
    const int *idx = L->cs.idx;
    memset(out, 0, (size_t)m * sizeof *out);
    if (code < m) { /* w_i: [e_i on W, -F_i C^-1 on N] */
        const double *qi = L->pc->Q + (size_t)code * m;
        for (int c = 0; c < k; c++)
            L->f[c] = qi[idx[c]];
        if (L->z0b)
            L->f[k] = L->d[code];
    } else { /* z_j or z0: -(row of C^-1) on N */
        memset(L->f, 0, (size_t)nn * sizeof *L->f);
        L->f[code < 2 * m ? L->cs.pos[code - m] : k] = 1.0;
    }
    lk_solve_Ct(L, L->f, L->y);
    for (int c = 0; c < k; c++)
        out[idx[c]] = -L->y[c] / a;
    if (L->z0b)
        out[L->r] = -L->y[k] / a;
    if (code < m)
        out[code] = 1.0 / a;
}

/* A < B lexicographically, entries equal within LK_LEX_REL of the largest. */
static int lk_lex_less(const double *A, const double *B, int m)
{
    double s = 0.0;
    for (int i = 0; i < m; i++)
        s = fmax(s, fmax(fabs(A[i]), fabs(B[i])));
    const double eq = LK_LEX_REL * s;
    for (int i = 0; i < m; i++)
        if (fabs(A[i] - B[i]) > eq)
            return A[i] < B[i];
    return 0;
}

/* Ratio test. Normal pivot: the blocking variable min max(x,0) / (-D) over
 * D < 0; first pivot (z0 entering): the most infeasible, max -x / D over
 * x < 0, D > 0. Ties (to round-off, LK_TIE_REL): z0 if tied, else the
 * lexicographic minimum of (row of B^-1) / |D|. Returns the leaving code or
 * -1 (no blocking variable: ray). */
static int lk_ratio(lk_ws *L, double *theta)
{
    const int m = L->m, first = L->ent == ENT_Z0;
    int nc = 0;
    for (int i = 0; i < m; i++)
        if (L->cs.pos[i] < 0 && !(L->z0b && i == L->r))
            L->cand[nc++] = i;
    for (int a = 0; a < L->cs.k; a++)
        if (!is_eq(L, L->cs.idx[a]))
            L->cand[nc++] = m + L->cs.idx[a];
    if (L->z0b)
        L->cand[nc++] = 2 * m;
    const double ue = L->ent == ENT_Z0 ? L->zu : L->ent == ENT_Z ? 1.0 / L->sq[L->er]
                                                                : L->sq[L->er];
    double x, D, u, amax = 0.0, xmax = 0.0;
    for (int c = 0; c < nc; c++) {
        lk_cand(L, L->cand[c], &x, &D, &u);
        amax = fmax(amax, fabs(D) * ue / u);
        xmax = fmax(xmax, fabs(x) / u);
    }
    const double tau = LK_PIV_REL * amax, ttie = LK_TIE_REL * xmax;
    double best = first ? -INFINITY : INFINITY;
    int found = 0;
    for (int c = 0; c < nc; c++) {
        lk_cand(L, L->cand[c], &x, &D, &u);
        double Dh = D * ue / u;
        if (first && Dh > tau && x < 0.0) {
            best = fmax(best, -x / D);
            found = 1;
        } else if (!first && Dh < -tau) {
            best = fmin(best, fmax(x, 0.0) / -D);
            found = 1;
        }
    }
    if (!found)
        return -1;
    /* tie set: the eligible candidates at zero (to round-off) at best */
    int nt = 0, z0tie = 0;
    for (int c = 0; c < nc; c++) {
        int code = L->cand[c];
        lk_cand(L, code, &x, &D, &u);
        double Dh = D * ue / u;
        if (first ? !(Dh > tau) : !(Dh < -tau))
            continue;
        double at = (first ? x : fmax(x, 0.0)) + best * D;
        if (at / u <= ttie) {
            L->cand[nt++] = code; /* nt <= c: overwrite in place */
            if (code == 2 * m)
                z0tie = 1;
        }
    }
    *theta = best;
    if (z0tie)
        return 2 * m;
    if (nt == 1)
        return L->cand[0];
    /* lexicographic minimum of rows of B^-1 / |D| */
    int win = L->cand[0];
    lk_cand(L, win, &x, &D, &u);
    lk_lex_row(L, win, fabs(D), L->lexa);
    for (int c = 1; c < nt; c++) {
        lk_cand(L, L->cand[c], &x, &D, &u);
        lk_lex_row(L, L->cand[c], fabs(D), L->lexb);
        if (lk_lex_less(L->lexb, L->lexa, m)) {
            double *t = L->lexa;
            L->lexa = L->lexb;
            L->lexb = t;
            win = L->cand[c];
        }
    }
    return win;
}

/* Append pair j to Z. Returns 1 ok, 0 numerically dependent, -1 no memory. */
static int lk_append(lk_ws *L, int j, gs_error *err)
{
    if (gs_cset_reserve(&L->cs, L->cs.k + 1, err) != GS_OK)
        return -1;
    double sc = gs_cset_schur(&L->cs, j, L->rhs);
    if (!(sc > GS_CSET_DEP_TOL * L->pc->qdiag[j]))
        return 0;
    gs_cset_append(&L->cs, j, L->rhs, sc);
    L->v_ok = 0;
    L->n_upd++;
    return 1;
}

/* One pivot: values moved by theta, the entering variable becomes basic,
 * the leaving one nonbasic; sets the next entering variable. Returns 1 if
 * z0 left, 0 to continue, -1 dependent pair (numerical), -2 no memory. */
static int lk_pivot(lk_ws *L, int leave, double theta, gs_error *err)
{
    const int m = L->m, k = L->cs.k;
    for (int i = 0; i < m; i++)
        if (L->cs.pos[i] < 0 && !(L->z0b && i == L->r))
            L->wv[i] += theta * L->dw[i];
    for (int a = 0; a < k; a++)
        L->zv[L->cs.idx[a]] += theta * L->dz[a];
    if (L->z0b)
        L->z0 += theta * L->dz0;
    /* entering */
    int rc = 1;
    switch (L->ent) {
    case ENT_Z0:
        L->z0 = theta;
        L->z0b = 1;
        break;
    case ENT_Z:
        L->zv[L->er] = theta;
        break;
    default:
        L->wv[L->er] = theta;
        break;
    }
    /* leaving */
    if (leave == 2 * m) {
        L->z0 = 0.0;
        L->z0b = 0;
        L->r = -1;
    } else if (leave >= m) {
        int j = leave - m;
        L->zv[j] = 0.0;
        gs_cset_remove(&L->cs, L->cs.pos[j]);
        L->v_ok = 0;
        L->n_upd++;
        L->r = j;
    } else {
        L->wv[leave] = 0.0;
        L->r = leave;
    }
    if (L->ent == ENT_Z && (rc = lk_append(L, L->er, err)) <= 0)
        return rc == 0 ? -1 : -2;
    if (leave == 2 * m)
        return 1;
    L->ent = leave >= m ? ENT_W : ENT_Z;
    L->er = L->r;
    return 0;
}

/* Covering vector for a start from the complementary basis Z: d = B c =
 * c_W - Q[:,Z] c_Z with c_i = sqrt(Q_ii) / zu on W, 1 / (sqrt(Q_jj) zu) on
 * Z \ E and 0 on E: in diag(Q)-scaled units every basic variable moves by
 * 1 / zu per unit of z0. With Z = E this is the cold d (d_W = sqrt(Q_ii) /
 * zu, d_E = 0). O(m k). */
static void lk_cover(lk_ws *L)
{
    const int m = L->m, k = L->cs.k;
    for (int i = 0; i < m; i++)
        L->d[i] = (L->cs.pos[i] < 0 && !is_eq(L, i)) ? L->sq[i] / L->zu : 0.0;
    int any = 0;
    for (int a = 0; a < k; a++) {
        int j = L->cs.idx[a];
        L->rhs[a] = is_eq(L, j) ? 0.0 : -1.0 / (L->sq[j] * L->zu);
        any |= L->rhs[a] != 0.0;
    }
    if (any)
        lk_qz_mv(L, L->rhs, L->d);
    L->v_ok = 0;
}

/* Crash Z = E + list (distinct, E first). Pairs dependent on the ones
 * before them are dropped. Returns the number of list pairs kept, or -1 if
 * E is dependent, -2 no memory. */
static int lk_crash(lk_ws *L, const int *list, int n, gs_error *err)
{
    const int m = L->m;
    int k = 0;
    memset(L->mark, 0, (size_t)m);
    for (int i = 0; i < m; i++)
        if (is_eq(L, i)) {
            L->list[k++] = i;
            L->mark[i] = 1;
        }
    const int ne = k;
    for (int c = 0; c < n; c++)
        if (!L->mark[list[c]]) {
            L->mark[list[c]] = 1;
            L->list[k++] = list[c];
        }
    L->v_ok = 0;
    L->n_upd = 0;
    gs_error e2;
    gs_err rc = gs_cset_build(&L->cs, L->list, k, &e2);
    if (rc != GS_OK && rc != GS_ERR_NOMEM) {
        /* dependent: E by dpotrf, then the list one by one, skipping the
         * pairs dependent on the ones before them */
        rc = gs_cset_build(&L->cs, L->list, ne, &e2);
        if (rc != GS_OK && rc != GS_ERR_NOMEM)
            return -1;
        for (int c = ne; c < k && rc == GS_OK; c++)
            if (lk_append(L, L->list[c], &e2) < 0)
                rc = GS_ERR_NOMEM;
        L->n_upd = 0;
    }
    if (rc != GS_OK) {
        if (err)
            *err = e2;
        return -2;
    }
    int kept = 0; /* distinct pairs of the list now in Z */
    for (int c = 0; c < n; c++)
        if (L->mark[list[c]] == 1 && L->cs.pos[list[c]] >= 0) {
            L->mark[list[c]] = 2;
            kept++;
        }
    return kept;
}

/* Lemke from the crashed basis (cs, d set). Status in *st; pivots added to
 * *piv (bounded by max_piv; o's cancel flag and deadline checked each pivot). */
static gs_err lk_run(lk_ws *L, const gs_solve_opts *o, int max_piv, int *piv, gs_status *st,
                     gs_error *err)
{
    L->z0b = 0;
    L->r = -1;
    lk_prep(L);
    lk_refresh(L);
    if (lk_feasible(L)) {
        *st = GS_STATUS_OPTIMAL;
        return GS_OK;
    }
    L->ent = ENT_Z0;
    L->er = -1;
    for (;;) {
        if ((*st = gs_solve_stop(o, *piv, max_piv)) != GS_STATUS_OPTIMAL)
            return GS_OK;
        int ok = lk_prep(L) && lk_direction(L);
        if (!ok && L->n_upd > 0) { /* drifted factor: rebuild and retry once */
            gs_err rc = lk_refactor(L, err);
            if (rc == GS_ERR_NOMEM)
                return rc;
            ok = rc == GS_OK && lk_prep(L) && lk_direction(L);
        }
        if (!ok) {
            *st = GS_STATUS_NUMERICAL;
            return GS_OK;
        }
        double theta = 0.0;
        int leave = lk_ratio(L, &theta);
        if (leave < 0) {
            *st = GS_STATUS_RAY;
            return GS_OK;
        }
        int pr = lk_pivot(L, leave, theta, err);
        (*piv)++;
        if (pr == -2)
            return GS_ERR_NOMEM;
        if (pr == -1) {
            *st = GS_STATUS_NUMERICAL;
            return GS_OK;
        }
        if (pr == 1) {
            *st = GS_STATUS_OPTIMAL;
            return GS_OK;
        }
        if (L->n_upd >= LK_REFACTOR && L->n_upd >= L->cs.k) {
            gs_err rc = lk_refactor(L, err);
            if (rc != GS_OK) {
                if (rc == GS_ERR_NOMEM)
                    return rc;
                *st = GS_STATUS_NUMERICAL;
                return GS_OK;
            }
        }
        if (*piv % LK_REFRESH == 0) {
            if (!lk_prep(L)) {
                *st = GS_STATUS_NUMERICAL;
                return GS_OK;
            }
            lk_refresh(L);
        }
    }
}

/* Polish on the final Z: fresh factor (unless the current one is), solve
 * Q_ZZ lam_Z = p_Z, one refinement step. Returns 1 if the point meets the
 * tolerances (lam written, tiny negative inequality multipliers clipped), 0
 * if not (lam holds the unclipped point), -1 singular, -2 no memory. */
static int lk_polish(lk_ws *L, double *lam, gs_error *err)
{
    const int m = L->m;
    if (L->n_upd > 0) {
        gs_err rc = lk_refactor(L, err);
        if (rc != GS_OK)
            return rc == GS_ERR_NOMEM ? -2 : -1;
    }
    const int k = L->cs.k;
    const int *idx = L->cs.idx;
    double *x = L->y, *w = L->dw, *dx = L->rhs;
    for (int a = 0; a < k; a++)
        x[a] = L->p[idx[a]];
    gs_cset_solve(&L->cs, x);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < m; i++)
            w[i] = -L->p[i];
        lk_qz_mv(L, x, w);
        if (pass == 1 || k == 0)
            break;
        for (int a = 0; a < k; a++)
            dx[a] = -w[idx[a]];
        gs_cset_solve(&L->cs, dx);
        for (int a = 0; a < k; a++)
            x[a] += dx[a];
    }
    memset(lam, 0, (size_t)m * sizeof *lam);
    int feas = 1;
    for (int a = 0; a < k; a++) {
        int j = idx[a];
        lam[j] = x[a];
        if (!is_eq(L, j) && x[a] < 0.0) {
            if (x[a] < -L->tol / L->pc->qdiag[j])
                feas = 0;
        }
    }
    for (int i = 0; i < m; i++)
        if (L->cs.pos[i] < 0 && w[i] < -L->tol)
            feas = 0;
    if (feas)
        for (int a = 0; a < k; a++)
            if (!is_eq(L, idx[a]) && lam[idx[a]] < 0.0)
                lam[idx[a]] = 0.0;
    /* the state again describes this complementary point (restart crash) */
    memcpy(L->zv, lam, (size_t)m * sizeof *lam);
    return feas;
}

static gs_err lemke_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                          gs_form form, double *lam, gs_solve_info *info, gs_error *err)
{
    lk_ws *L = gs_solver_ws(s, GS_METHOD_LEMKE, GS_FORM_DUAL, lk_new, lk_free, err);
    if (!L)
        return GS_ERR_NOMEM;
    const int m = s->m;
    L->pb = pb;
    L->p = s->p;
    double pmax = -INFINITY;
    int has_eq = 0;
    for (int i = 0; i < m; i++) {
        if (is_eq(L, i))
            has_eq = 1;
        else
            pmax = fmax(pmax, s->p[i]);
    }
    /* feasibility in mm: the generic layer's tol_w, relative to the gaps
     * with a floor at the round-off 64 eps ||p|| of w = Q lam - p */
    L->tol = s->tol_w;
    memset(lam, 0, (size_t)m * sizeof *lam);
    info->iterations = 0;
    info->warm_used = 0;
    info->warm_kept = 0;
    gs_cset_clear(&L->cs);
    if (!has_eq && !(pmax > L->tol)) { /* p <= 0: no contact, lam = 0 */
        info->status = GS_STATUS_OPTIMAL;
        return GS_OK;
    }
    const int max_piv = gs_solver_max_iter(s, o);
    int piv = 0, kept = -1;
    if (o->warm) {
        kept = lk_crash(L, o->warm->act, o->warm->n_act, err);
        if (kept >= 0) {
            info->warm_used = 1;
            info->warm_kept = kept;
        }
    }
    if (kept < 0) { /* cold: Z = E */
        if (kept == -2)
            return GS_ERR_NOMEM;
        int c = lk_crash(L, NULL, 0, err);
        if (c == -2)
            return GS_ERR_NOMEM;
        if (c < 0) {
            info->status = GS_STATUS_INFEASIBLE_EQ;
            return GS_OK;
        }
    }
    gs_status st = GS_STATUS_NUMERICAL;
    for (int attempt = 0;; attempt++) {
        lk_cover(L);
        gs_err rc = lk_run(L, o, max_piv, &piv, &st, err);
        if (rc != GS_OK)
            return rc;
        int pl = 0;
        if (st == GS_STATUS_OPTIMAL) {
            pl = lk_polish(L, lam, err);
            if (pl == -2)
                return GS_ERR_NOMEM;
            if (pl == 1)
                break;
            st = GS_STATUS_NUMERICAL;
        } else {
            memcpy(lam, L->zv, (size_t)m * sizeof *lam);
        }
        /* pivot limit, cancel, deadline and ray are final; a numerical breakdown or a polished
         * point outside the tolerance restarts from the current contact set
         * as a crashed basis (fresh factor, fresh covering vector) */
        if (st != GS_STATUS_NUMERICAL || pl < 0 || attempt == LK_RESTARTS)
            break;
        int k = L->cs.k;
        int *list = L->cand; /* the crash copies it into L->list */
        memcpy(list, L->cs.idx, (size_t)k * sizeof *list);
        int c = lk_crash(L, list, k, err);
        if (c == -2)
            return GS_ERR_NOMEM;
        if (c < 0)
            break;
    }
    info->status = st;
    info->iterations = piv;
    /* polished outside the tolerance, or a secondary ray: GI relative
     * finishes from this contact set (a ray on an infeasible problem ends
     * there with the Farkas certificate, status infeasible) */
    if ((st == GS_STATUS_NUMERICAL && L->cs.k > 0) || st == GS_STATUS_RAY)
        return gs_gi_relative_finish(s, pb, o, L->cs.idx, L->cs.k, lam, lam, info,
                                     &info->iterations, err);
    return GS_OK;
}

const gs_method_ops gs_method_lemke = {
    .name = "lemke",
    .forms = 1u << GS_FORM_DUAL,
    .default_form = GS_FORM_DUAL,
    .solve = lemke_solve,
};
