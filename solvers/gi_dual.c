/*
 * gi_dual.c -- Goldfarb-Idnani dual active set (Powell's variant) on the dual
 * formulation (2):  min 1/2 lam'Q lam - p'lam  s.t.  lam_I >= 0 (inequality
 * pairs), lam_E free (equality pairs).
 *
 * Method. GI starts at the unconstrained minimum lam0 = Q^-1 p (every pair
 * "in contact", no bound active) and makes one violated bound lam_j >= 0
 * active at a time, keeping each iterate the minimum on its active set A and
 * the multipliers of the active bounds mu_A >= 0. The active bounds are the
 * pairs NOT in contact (lam_a = 0) and their multipliers are the residual gaps
 * mu_a = w_a = (Q lam - p)_a; the free set F holds the contact set and the
 * equality pairs. A cold solve therefore takes about m - |C| steps: this
 * formulation gets cheaper as the contact set grows (paper, Fig. 9).
 *
 * Algebra with M = Q^-1 (= K~, the relative Hessian). By the Schur complement
 * Q_FF^-1 = M_FF - M_FA M_AA^-1 M_AF, so everything follows from the Cholesky
 * factor of M_AA (cholup.h), appended as bounds enter and downdated by plane
 * rotations when they leave, and from columns of M. Every iterate is
 *     lam = lam0 + M[:, A] mu_A        (lam_A = 0 by the choice of mu_A).
 * Adding bound j with lam_j < 0 (raising its multiplier mu_j by t):
 *     l = L^-1 M_Aj, s = M_jj - l'l > 0     (lam_j grows by s per unit t)
 *     y = L^-T l = M_AA^-1 M_Aj              (mu_A falls by y per unit t)
 *     full step t = -lam_j / s; partial step t = min mu_a / y_a over y_a > 0:
 *     the blocking bound leaves A (the pair comes into contact) and the step
 *     for j continues on the smaller set.
 * Neither step touches lam_F: it is refreshed lazily (one pass over F or A
 * gives the list of violated bounds, most violated first; the first
 * GI_RUN_MAX of them form a run, each re-evaluated exactly in O(|A|) before
 * it enters; then lam is refreshed; no violation left = candidate optimum).
 * Runs make the steps BLAS-3: at the start of a run X = L^-1 M[A, J] and
 * Y = L^-T X for its candidates J (two dtrsm); while the run only appends,
 * L = [L0 0; L21 L22] and the l, y of a candidate follow from its columns
 * of X and Y in O(|A| p) (p = bounds appended in the run, see direction());
 * a removal changes L0 and restarts the run on the remaining candidates.
 * Representation of M: computed once per solver thread in the workspace
 * constructor from pc->LQ (dpotri, 2/3 m^3 flops, m^2 doubles). An implicit
 * M (two solves with L_Q per column) would cost O(m^2) per step instead of
 * O(|A|) for a column, and the columns of M are read on every step; for m up
 * to ~1e4 the memory (m^2 doubles, 800 MB at 1e4) is the better trade.
 *
 * Powell's modification (ill-conditioned problems): only stable factor
 * updates (row append; orthogonal rotations on removal); the pivot of every
 * append is checked against the diagonal (s > GS_CSET_DEP_TOL M_jj), a tiny
 * one triggers a refactorization of M_AA from M (dpotrf) before the pair is
 * declared dependent; the multipliers mu_A are recomputed from the data
 * (mu_A = -M_AA^-1 lam0_A) at every refresh instead of being accumulated over
 * thousands of updates. M carries an error ~ eps cond(Q), so the answer is
 * polished with Q itself: lam_F = Q_FF^-1 p_F on the final free set (fresh
 * dpotrf, one step of iterative refinement) and the optimality of the
 * polished point is verified with w = Q lam - p; bounds with w_a < -tol_w
 * leave A and violated lam_j re-enter the iteration (at most GI_POLISH_MAX
 * rounds; then GI relative finishes from the polished free set,
 * gs_gi_relative_finish: M's rounding can make the rounds cycle). GI
 * relative likewise finishes, from the current free set, when M's algebra
 * fails: a bound found dependent even on a refactored M_AA, or a free set
 * whose Q_FF is numerically singular (nearly dependent pairs; the solve then
 * ends optimal or with a verified infeasible, info->crossover set).
 * Adaptations: with o->fasteners_first, bounds of pairs carrying a fastener
 * load (expected in contact) are taken last; equality pairs are never bounded
 * (a dependent equality set, Q_EE singular, ends in GS_STATUS_INFEASIBLE_EQ);
 * warm start: A = complement of the warm contact set (inequality pairs);
 * bounds whose multiplier mu_a = w_a comes out negative leave A (most negative
 * first, computed with Q_FF) until mu_A >= 0, then the GI invariants hold and
 * M_AA is factored at once (dpotrf); a singular set, or one needing more than
 * GI_WARM_MAX_FREED corrections (an unrelated problem), starts cold.
 * Reference: D. Goldfarb, A. Idnani, "A numerically stable dual method for
 * solving strictly convex quadratic programs", Math. Prog. 27 (1983) 1-33;
 * M.J.D. Powell, "On the quadratic programming algorithm of Goldfarb and
 * Idnani", Math. Prog. Study 25 (1985) 46-61; Stefanova et al., Optim. Eng.
 * 21 (2020), sect. 3.2 (docs/math.md).
 * Invariants: idx[0..k) lists A in factor order, pos[i] its position or -1;
 * R.L R.L' = M_AA in that order; mu[c] is the multiplier of idx[c]; lam0 =
 * Q^-1 p; lam (m) holds the iterate at the last refresh (zero on A).
 * Complexity (k = |A|, f = m - k, b = GI_RUN_MAX): per run O(k^2 b) (two
 * dtrsm) + O(m min(k, f)) (refresh) + O(k^2) (mu_A); per GI step in a run
 * O(k b), outside a run (after a removal) O(k^2) (two dtrsv); a removal
 * O((k - c)^2) rotations; per candidate check O(k); per solve O(m^2) for lam0
 * and the polish O(f^3/3 + m f); warm start O(k^3/3) (dpotrf, BLAS-3);
 * workspace construction O(m^3) once per thread. A cold solve takes ~m - |C|
 * steps, ~(2/3)(m - |C|)^3 flops, mostly BLAS-3. Memory: 2 m^2 doubles (M and
 * the factor) + 2 m b + O(m).
 */
#include <cblas.h>
#include <lapacke.h>

#include "cset.h"
#include "gi.h"
#include "cholup.h"
#include "linalg.h"
#include "mixchol.h"

#define GI_POLISH_MAX 8 /* polish rounds before the crossover to GI relative */
#define GI_RUN_MAX 16   /* candidates per run (one pair of dtrsm) */
/* A warm contact set that needs more corrections than this before the GI
 * invariants hold belongs to an unrelated problem (another gap vector of a
 * cloud): the O(k^3/3) factorization of M_AA and the repairs would cost more
 * than the cold start, so the solve starts cold. */
#define GI_WARM_MAX_FREED(kept) ((kept) / 2 > 16 ? (kept) / 2 : 16)

struct dual_key {
    int group;    /* 0 first; 1 = loaded pair when fasteners come last */
    double v;     /* normalized violation lam_i / sqrt(M_ii), most negative first */
    int i;
};

typedef struct {
    int m;
    double *M;       /* m x m: Q^-1, both triangles */
    double *rsd;     /* m: 1 / sqrt(M_ii) */
    double *lam0;    /* m: Q^-1 p of the current problem */
    double *lam;     /* m: iterate at the last refresh (0 on A) */
    int *idx, *pos;  /* A in factor order / position of a pair or -1 */
    double *mu;      /* m: multipliers of A, position order */
    double *diag;    /* m: M_aa in position order (pivot checks) */
    gs_cholup R;       /* R.L R.L' = M_AA */
    double *l, *y;   /* m: L^-1 M_Aj, M_AA^-1 M_Aj */
    double *musc;    /* m: mu scattered over the pairs (0 off A) */
    double *wq;      /* m: residual gaps of the polish (Q lam - p) */
    double *lf;      /* m: polished multipliers of F, position order of fs */
    int *cand, *list;
    struct dual_key *keys;
    gs_cset fs;      /* polish: F with the factor of Q_FF */
    /* run: candidates whose l, y come from one pair of dtrsm (BLAS-3) */
    double *X, *Y;   /* m x GI_RUN_MAX: L0^-1 M[A0, J], L0^-T of that */
    int *run_q;      /* m: column of a pair in X, Y, or -1 */
    int *run_app;    /* GI_RUN_MAX: columns of the bounds appended in the run */
    const int *run_J; /* the run's candidates */
    int run_k0, run_p, run_nb, run_valid;
} gi_dual_ws;

static void gi_dual_free(void *p)
{
    gi_dual_ws *ws = p;
    if (!ws)
        return;
    free(ws->M);
    free(ws->rsd);
    free(ws->lam0);
    free(ws->lam);
    free(ws->idx);
    free(ws->pos);
    free(ws->mu);
    free(ws->diag);
    gs_cholup_free(&ws->R);
    free(ws->l);
    free(ws->y);
    free(ws->musc);
    free(ws->wq);
    free(ws->lf);
    free(ws->cand);
    free(ws->list);
    free(ws->keys);
    free(ws->X);
    free(ws->Y);
    free(ws->run_q);
    free(ws->run_app);
    if (ws->fs.idx)
        gs_cset_free(&ws->fs);
    free(ws);
}

/* Workspace: M = Q^-1 from L_Q (dpotri, lower triangle, then mirrored). */
static void *gi_dual_new(gs_solver *s)
{
    gi_dual_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    const int m = s->m;
    const size_t mm = (size_t)m * (size_t)m; /* an int squared fits */
    ws->m = m;
    ws->M = mm ? gs_alloc_matrix(mm, sizeof(double), 0) : NULL;
    ws->rsd = malloc((size_t)m * sizeof(double));
    ws->lam0 = malloc((size_t)m * sizeof(double));
    ws->lam = malloc((size_t)m * sizeof(double));
    ws->idx = malloc((size_t)m * sizeof(int));
    ws->pos = malloc((size_t)m * sizeof(int));
    ws->mu = malloc((size_t)m * sizeof(double));
    ws->diag = malloc((size_t)m * sizeof(double));
    ws->l = malloc((size_t)m * sizeof(double));
    ws->y = malloc((size_t)m * sizeof(double));
    ws->musc = malloc((size_t)m * sizeof(double));
    ws->wq = malloc((size_t)m * sizeof(double));
    ws->lf = malloc((size_t)m * sizeof(double));
    ws->cand = malloc((size_t)m * sizeof(int));
    ws->list = malloc((size_t)m * sizeof(int));
    ws->keys = malloc((size_t)m * sizeof *ws->keys);
    ws->X = malloc(gs_mul_size((size_t)m * GI_RUN_MAX, sizeof(double)));
    ws->Y = malloc(gs_mul_size((size_t)m * GI_RUN_MAX, sizeof(double)));
    ws->run_q = malloc((size_t)m * sizeof(int));
    ws->run_app = malloc(GI_RUN_MAX * sizeof(int));
    ws->R.max = m;
    if (!ws->M || !ws->rsd || !ws->lam0 || !ws->lam || !ws->idx || !ws->pos || !ws->mu ||
        !ws->diag || !ws->l || !ws->y || !ws->musc || !ws->wq || !ws->lf || !ws->cand ||
        !ws->list || !ws->keys || !ws->X || !ws->Y || !ws->run_q || !ws->run_app ||
        gs_cholup_reserve(&ws->R, m < 64 ? m : 64, NULL) != GS_OK ||
        gs_cset_init(&ws->fs, s->pc, NULL) != GS_OK)
        goto fail;
    memcpy(ws->M, s->pc->LQ, mm * sizeof(double));
    if (LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', m, ws->M, m) != 0)
        goto fail;
    for (int j = 0; j < m; j++)
        for (int i = j + 1; i < m; i++)
            ws->M[(size_t)i * m + j] = ws->M[(size_t)j * m + i];
    for (int i = 0; i < m; i++) {
        double d = ws->M[(size_t)i * m + i];
        if (!(d > 0.0))
            goto fail;
        ws->rsd[i] = 1.0 / sqrt(d);
        ws->pos[i] = -1;
        ws->run_q[i] = -1;
    }
    return ws;
fail:
    gi_dual_free(ws);
    return NULL;
}

/* Remove position c from A (factor, lists, multipliers). O((k - c)^2). */
static void remove_at(gi_dual_ws *ws, int c)
{
    const int k = ws->R.k;
    gs_cholup_remove(&ws->R, c);
    gs_wlist_remove(ws->idx, ws->pos, k, c);
    gs_wlist_shift(ws->mu, k, c);
    gs_wlist_shift(ws->diag, k, c);
}

/* Empty A. O(k). */
static void clear_set(gi_dual_ws *ws)
{
    gs_wlist_clear(ws->idx, ws->pos, ws->R.k);
    ws->R.k = 0;
}

/* Factor M_AA afresh for the current idx[0..k) (dpotrf). Returns 0, or -1
 * if M_AA is numerically singular (then A is emptied). O(k^3/3). */
static int refactor(gi_dual_ws *ws)
{
    const int k = ws->R.k, m = ws->m, ld = ws->R.cap;
    for (int b = 0; b < k; b++) {
        const double *mb = ws->M + (size_t)ws->idx[b] * m;
        for (int a = b; a < k; a++)
            ws->R.L[a + (size_t)b * ld] = mb[ws->idx[a]];
    }
    gs_error e;
    if ((k && gs_chol(ws->R.L, k, ld, "M_AA", &e) != GS_OK) ||
        gs_cholup_min_pivot(&ws->R, ws->diag) <= GS_CSET_DEP_TOL) {
        clear_set(ws);
        return -1;
    }
    return 0;
}

/* mu_A = -M_AA^-1 lam0_A: the multipliers of the active bounds from the data
 * (lam_A = lam0_A + M_AA mu_A = 0). O(k^2). */
static void exact_mu(gi_dual_ws *ws)
{
    for (int c = 0; c < ws->R.k; c++)
        ws->mu[c] = -ws->lam0[ws->idx[c]];
    gs_cholup_solve_L(&ws->R, ws->mu);
    gs_cholup_solve_Lt(&ws->R, ws->mu);
}

/* lam = lam0 + M[:, A] mu_A on F (zero on A): over the columns of A when A
 * is the smaller set, else one dot product per free pair (M symmetric).
 * O(m min(k, m - k)). */
static void refresh(gi_dual_ws *ws)
{
    const int m = ws->m, k = ws->R.k;
    double *lam = ws->lam;
    if (k <= m - k) {
        memcpy(lam, ws->lam0, (size_t)m * sizeof *lam);
        for (int c = 0; c < k; c++)
            cblas_daxpy(m, ws->mu[c], ws->M + (size_t)ws->idx[c] * m, 1, lam, 1);
    } else {
        memset(ws->musc, 0, (size_t)m * sizeof *ws->musc);
        for (int c = 0; c < k; c++)
            ws->musc[ws->idx[c]] = ws->mu[c];
        for (int i = 0; i < m; i++)
            if (ws->pos[i] < 0)
                lam[i] = ws->lam0[i] + cblas_ddot(m, ws->M + (size_t)i * m, 1, ws->musc, 1);
    }
    for (int c = 0; c < k; c++)
        lam[ws->idx[c]] = 0.0;
}

/* Current lam_j of a free pair from column j of M. O(k). */
static double current_lam(const gi_dual_ws *ws, int j)
{
    const double *mj = ws->M + (size_t)j * ws->m;
    double acc = ws->lam0[j];
    for (int c = 0; c < ws->R.k; c++)
        acc += mj[ws->idx[c]] * ws->mu[c];
    return acc;
}

typedef enum { STEP_ADDED, STEP_DEPENDENT, STEP_NOMEM } step_result;

/* Start a run over the candidates J[0..nb): with k0 = |A| now,
 * X = L^-1 M[A, J] and Y = L^-T X by two dtrsm (BLAS-3, O(k0^2 nb)). */
static void run_start(gi_dual_ws *ws, const int *J, int nb)
{
    const int k0 = ws->R.k, m = ws->m;
    ws->run_J = J;
    ws->run_k0 = k0;
    ws->run_p = 0;
    ws->run_nb = nb;
    for (int q = 0; q < nb; q++) {
        const double *mj = ws->M + (size_t)J[q] * m;
        double *xq = ws->X + (size_t)q * m;
        for (int c = 0; c < k0; c++)
            xq[c] = mj[ws->idx[c]];
        ws->run_q[J[q]] = q;
    }
    if (k0 > 0 && nb > 0) {
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, k0, nb, 1.0,
                    ws->R.L, ws->R.cap, ws->X, m);
        memcpy(ws->Y, ws->X, (size_t)m * nb * sizeof(double));
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, k0, nb, 1.0,
                    ws->R.L, ws->R.cap, ws->Y, m);
    }
    ws->run_valid = 1;
}

/* End the run (after the last candidate, or when the factor changed in its
 * leading k0 rows: a removal, or an append outside the run). O(nb). */
static void run_end(gi_dual_ws *ws)
{
    for (int q = 0; q < ws->run_nb; q++)
        ws->run_q[ws->run_J[q]] = -1;
    ws->run_nb = 0;
    ws->run_valid = 0;
}

/* l = L^-1 M_Aj and y = L^-T l for bound j. In a valid run (A = A0 + P, P the
 * p bounds appended during the run, L = [L0 0; L21 L22]) they follow from
 * the precomputed x = X[:, q], Y[:, q] in O(k0 p + p^2):
 *   l = [x; t],  t = L22^-1 (M_Pj - L21 x)
 *   y = [Y[:, q] - Y[:, P] z; z],  z = L22^-T t
 * otherwise by two dtrsv, O(k^2). Returns the Schur complement s. */
static double direction(gi_dual_ws *ws, int j, const double *mj)
{
    gs_cholup *R = &ws->R;
    const int k = R->k, m = ws->m;
    const int q = ws->run_valid ? ws->run_q[j] : -1;
    if (q >= 0 && k == ws->run_k0 + ws->run_p) {
        const int k0 = ws->run_k0, p = ws->run_p, ld = R->cap;
        const double *x = ws->X + (size_t)q * m;
        double *t = ws->l + k0, *z = ws->y + k0;
        memcpy(ws->l, x, (size_t)k0 * sizeof *ws->l);
        if (p > 0) {
            for (int r = 0; r < p; r++)
                t[r] = mj[ws->idx[k0 + r]];
            if (k0 > 0)
                cblas_dgemv(CblasColMajor, CblasNoTrans, p, k0, -1.0, R->L + k0, ld, x, 1, 1.0, t,
                            1);
            const double *L22 = R->L + k0 + (size_t)k0 * ld;
            cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, p, L22, ld, t, 1);
            memcpy(z, t, (size_t)p * sizeof *z);
            cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, p, L22, ld, z, 1);
        }
        memcpy(ws->y, ws->Y + (size_t)q * m, (size_t)k0 * sizeof *ws->y);
        for (int r = 0; r < p; r++)
            cblas_daxpy(k0, -z[r], ws->Y + (size_t)ws->run_app[r] * m, 1, ws->y, 1);
        return mj[j] - (k ? cblas_ddot(k, ws->l, 1, ws->l, 1) : 0.0);
    }
    for (int c = 0; c < k; c++)
        ws->l[c] = mj[ws->idx[c]];
    gs_cholup_solve_L(R, ws->l);
    memcpy(ws->y, ws->l, (size_t)k * sizeof *ws->y);
    gs_cholup_solve_Lt(R, ws->y);
    return mj[j] - (k ? cblas_ddot(k, ws->l, 1, ws->l, 1) : 0.0);
}

/* Make bound j active (lam_j = lj < 0) by GI steps: partial steps free the
 * blocking bounds, the full step appends j with multiplier mu_j = t total.
 * A removal or an append outside the run ends the run. */
static step_result gi_add(gi_dual_ws *ws, int j, double lj, int *iters)
{
    gs_cholup *R = &ws->R;
    const double *mj = ws->M + (size_t)j * ws->m;
    const double mjj = mj[j];
    double muj = 0.0;
    if (gs_cholup_reserve(R, R->k + 1, NULL) != GS_OK)
        return STEP_NOMEM;
    int refactored = 0;
    for (;;) {
        const int k = R->k;
        double sch = direction(ws, j, mj);
        if (!(sch > GS_CSET_DEP_TOL * mjj)) {
            /* a bound e_j cannot depend on other bounds: a tiny pivot means
             * the updated factor lost accuracy, so rebuild it once */
            run_end(ws);
            if (refactored || refactor(ws) != 0)
                return STEP_DEPENDENT;
            refactored = 1;
            continue;
        }
        /* ratio test: mu_a - t y_a >= 0 over the active bounds */
        double tfull = -lj / sch, tpart;
        int block = gs_gi_ratio_test(k, ws->mu, ws->y, 1.0, ws->idx, NULL, &tpart);
        (*iters)++;
        if (tfull <= tpart) { /* full step: bound j becomes active */
            for (int c = 0; c < k; c++)
                ws->mu[c] -= tfull * ws->y[c];
            muj += tfull;
            gs_cholup_append(R, ws->l, sqrt(sch));
            ws->idx[k] = j;
            ws->pos[j] = k;
            ws->mu[k] = muj;
            ws->diag[k] = mjj;
            if (ws->run_valid && ws->run_q[j] >= 0 && k == ws->run_k0 + ws->run_p)
                ws->run_app[ws->run_p++] = ws->run_q[j];
            else
                run_end(ws);
            return STEP_ADDED;
        }
        /* partial step: the blocking bound leaves A (that pair closes) */
        for (int c = 0; c < k; c++)
            ws->mu[c] -= tpart * ws->y[c];
        muj += tpart;
        lj += tpart * sch;
        remove_at(ws, block);
        run_end(ws);
    }
}

/* Deterministic candidate order: group, then normalized violation (most
 * negative first), then pair index. */
static int key_cmp(const void *a, const void *b)
{
    const struct dual_key *x = a, *y = b;
    if (x->group != y->group)
        return x->group - y->group;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Drop the active bound with the most negative multiplier, recompute mu_A,
 * repeat until mu_A >= 0 (one at a time: freeing one pair changes the other
 * multipliers). Returns bounds dropped. O(k^2) per drop. */
static int settle(gi_dual_ws *ws)
{
    int dropped = 0;
    for (;;) {
        exact_mu(ws);
        int worst = -1;
        for (int c = 0; c < ws->R.k; c++)
            if (ws->mu[c] < 0.0 && (worst < 0 || ws->mu[c] < ws->mu[worst]))
                worst = c;
        if (worst < 0)
            return dropped;
        remove_at(ws, worst);
        dropped++;
    }
}

/* Warm start. F = equality pairs + the warm contact set; the bounds of all
 * other pairs are active, and their multipliers are the residual gaps of
 * lam_F = Q_FF^-1 p_F. While one is negative (below -tol_w) the most negative
 * bound is freed: this settling runs on the Q side (cset: an append O(f^2)
 * and a residual O(m f) per freed bound, f = |F| small) instead of on M_AA
 * (O(k^2) per bound). Then M_AA is factored once (dpotrf, O(k^3/3)) and
 * mu_A recomputed from M. Returns the warm pairs kept free, or -1 (cold:
 * singular, or more than GI_WARM_MAX_FREED corrections). */
static int warm_start(gi_dual_ws *ws, gs_solver *s, const gs_problem *pb, const gs_warm *warm,
                      int *iters)
{
    const int m = ws->m;
    gs_cset *fs = &ws->fs;
    int kept = 0, f = 0;
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(pb, i))
            ws->list[f++] = i;
    for (int c = 0; c < warm->n_act; c++) { /* dedup with pos = -2 marks */
        int i = warm->act[c];
        if (!gs_problem_is_eq(pb, i) && ws->pos[i] == -1) {
            ws->pos[i] = -2;
            ws->list[f++] = i;
            kept++;
        }
    }
    for (int c = 0; c < f; c++)
        ws->pos[ws->list[c]] = -1;
    if (gs_cset_build(fs, ws->list, f, NULL) != GS_OK)
        return -1;
    int freed = 0;
    for (;; freed++) {
        for (int c = 0; c < fs->k; c++)
            ws->lf[c] = s->p[fs->idx[c]];
        gs_cset_solve(fs, ws->lf);
        gs_cset_residual(fs, ws->lf, s->p, ws->wq);
        int worst = -1;
        for (int i = 0; i < m; i++)
            if (fs->pos[i] < 0 && ws->wq[i] < -s->tol_w &&
                (worst < 0 || ws->wq[i] < ws->wq[worst]))
                worst = i;
        if (worst < 0)
            break;
        double sch = gs_cset_schur(fs, worst, ws->l);
        if (freed >= GI_WARM_MAX_FREED(kept) || !(sch > GS_CSET_DEP_TOL * s->pc->qdiag[worst]) ||
            gs_cset_reserve(fs, fs->k + 1, NULL) != GS_OK)
            return -1;
        gs_cset_append(fs, worst, ws->l, sch);
    }
    int k = 0;
    for (int i = 0; i < m; i++)
        if (fs->pos[i] < 0)
            ws->idx[k++] = i;
    if (gs_cholup_reserve(&ws->R, k, NULL) != GS_OK)
        return -1;
    for (int c = 0; c < k; c++) {
        ws->pos[ws->idx[c]] = c;
        ws->diag[c] = ws->M[(size_t)ws->idx[c] * m + ws->idx[c]];
    }
    ws->R.k = k;
    if (refactor(ws) != 0)
        return -1;
    *iters += freed + settle(ws); /* M agrees with Q: normally nothing to settle */
    return kept;
}

/* Polish on the final free set F with Q itself: lam_F = Q_FF^-1 p_F plus one
 * refinement step (cset.h), w = Q lam - p. Counts the violations: inequality
 * pairs of F with lam_i <= -tol_lam, below the zero rule's band (*bad_lam),
 * and active bounds with w_a < -tol_w (*bad_w). Returns GS_OK, GS_ERR_NOT_SPD
 * if Q_FF is numerically singular (ws->lam then still the iterate of the last
 * refresh) or GS_ERR_NOMEM. O(f^3/3 + m f). */
static gs_err polish(gi_dual_ws *ws, gs_solver *s, const gs_problem *pb, int *bad_lam,
                     int *bad_w)
{
    const int m = ws->m;
    gs_cset *fs = &ws->fs;
    int f = 0;
    for (int i = 0; i < m; i++)
        if (ws->pos[i] < 0)
            ws->list[f++] = i;
    gs_err rc = gs_cset_build(fs, ws->list, f, NULL);
    if (rc != GS_OK)
        return rc;
    gs_cset_solve_refined(fs, s->p, ws->lf, ws->l, ws->wq);
    memset(ws->lam, 0, (size_t)m * sizeof *ws->lam);
    for (int c = 0; c < f; c++)
        ws->lam[fs->idx[c]] = ws->lf[c];
    *bad_lam = *bad_w = 0;
    for (int c = 0; c < f; c++)
        if (!gs_problem_is_eq(pb, fs->idx[c]) && ws->lf[c] <= -s->tol_lam)
            (*bad_lam)++;
    for (int c = 0; c < ws->R.k; c++)
        if (ws->wq[ws->idx[c]] < -s->tol_w)
            (*bad_w)++;
    return GS_OK;
}

/* The way out when M's algebra fails (a bound dependent on the active set
 * even after a refactorization, or a free set whose Q_FF is singular: pairs
 * nearly dependent on each other, M then carrying an error ~ eps cond(Q)):
 * GI relative finishes on Q itself, warm from the current free set F (the
 * pairs off A) and its multipliers ws->lam (which only order the warm set;
 * a singular F makes GI relative start cold), and reports optimal or a
 * verified infeasible. info->crossover set. O(m) plus GI relative. */
static gs_err hand_over(gi_dual_ws *ws, gs_solver *s, const gs_problem *pb,
                        const gs_solve_opts *o, double *lam, gs_solve_info *info, int *iters,
                        gs_error *err)
{
    int f = 0;
    for (int i = 0; i < ws->m; i++)
        if (ws->pos[i] < 0)
            ws->list[f++] = i;
    gs_err rc = gs_gi_relative_finish(s, pb, o, ws->list, f, ws->lam, lam, info, iters, err);
    info->iterations = *iters;
    return rc;
}

/* After a verified polish: the zero rule on F (degenerate free pairs, w = 0
 * and a multiplier in the band of round-off, carry no force: they leave F
 * and F is solved again, cset.h gs_cset_settle); lam from the settled F.
 * 1 if every pair outside the settled F keeps w >= -tol_w (the answer), 0
 * if not (the caller polishes again). O(m f + f^2) per round. */
static int zero_rule_verified(gi_dual_ws *ws, gs_solver *s, const gs_problem *pb)
{
    gs_cset *fs = &ws->fs;
    if (gs_cset_settle(fs, pb, s->p, s->tol_lam, ws->lf, ws->l, ws->wq, ws->list) == 0)
        return 1;
    for (int i = 0; i < ws->m; i++)
        if (fs->pos[i] < 0 && ws->wq[i] < -s->tol_w)
            return 0;
    memset(ws->lam, 0, (size_t)ws->m * sizeof *ws->lam);
    for (int c = 0; c < fs->k; c++)
        ws->lam[fs->idx[c]] = ws->lf[c];
    return 1;
}

/* Equality pairs must be independent: factor Q_EE (O(|E|^3/3 + m |E|)). */
static int equalities_independent(gi_dual_ws *ws, const gs_problem *pb)
{
    int ne = 0;
    for (int i = 0; i < ws->m; i++)
        if (gs_problem_is_eq(pb, i))
            ws->list[ne++] = i;
    return ne == 0 || gs_cset_build(&ws->fs, ws->list, ne, NULL) == GS_OK;
}

gs_err gs_gi_dual_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o, double *lam,
                        gs_solve_info *info, gs_error *err)
{
    gi_dual_ws *ws = gs_solver_ws(s, GS_METHOD_GI, GS_FORM_DUAL, gi_dual_new, gi_dual_free, err);
    if (!ws)
        return GS_ERR_NOMEM;
    const int m = s->m, max_iter = gs_solver_max_iter(s, o);
    gs_status stop = GS_STATUS_MAX_ITER;
    const int loaded_last = o->fasteners_first && pb->load;
    int iters = 0, rounds = 0;
    step_result sr = STEP_ADDED;
    clear_set(ws);
    info->status = GS_STATUS_OPTIMAL;
    if (!equalities_independent(ws, pb)) {
        info->status = GS_STATUS_INFEASIBLE_EQ;
        memset(ws->lam, 0, (size_t)m * sizeof *ws->lam);
        goto out;
    }

    /* lam0 = Q^-1 p by two solves with L_Q: O(m^2) */
    memcpy(ws->lam0, s->p, (size_t)m * sizeof *ws->lam0);
    gs_llt_solve64(s->pc->LQ, m, ws->lam0);
    if (o->warm && o->warm->n_act > 0) {
        int kept = warm_start(ws, s, pb, o->warm, &iters);
        if (kept >= 0) {
            info->warm_used = 1;
            info->warm_kept = kept;
        }
    }

    for (;;) {
        /* violated bounds at the current iterate, in order */
        exact_mu(ws);
        refresh(ws);
        double lmax = 0.0;
        for (int i = 0; i < m; i++)
            lmax = fmax(lmax, fabs(ws->lam[i]));
        const double tol_lam = o->tol * fmax(1.0, lmax);
        int nc = 0;
        for (int i = 0; i < m; i++)
            if (ws->pos[i] < 0 && !gs_problem_is_eq(pb, i) && ws->lam[i] < -tol_lam)
                ws->keys[nc++] = (struct dual_key){loaded_last && pb->load[i] > 0.0,
                                                   ws->lam[i] * ws->rsd[i], i};
        qsort(ws->keys, (size_t)nc, sizeof *ws->keys, key_cmp);
        /* one run over the first GI_RUN_MAX candidates, then refresh */
        const int nb = nc < GI_RUN_MAX ? nc : GI_RUN_MAX;
        for (int c = 0; c < nb; c++)
            ws->cand[c] = ws->keys[c].i;
        run_start(ws, ws->cand, nb);
        int taken = 0;
        for (int c = 0; c < nb; c++) {
            int j = ws->cand[c];
            double lj = current_lam(ws, j);
            if (!(lj < -tol_lam))
                continue;
            sr = gi_add(ws, j, lj, &iters);
            if (sr != STEP_ADDED)
                goto step_failed;
            taken++;
            if ((stop = gs_solve_stop(o, iters, max_iter)) != GS_STATUS_OPTIMAL)
                goto max_iter;
            if (!ws->run_valid && c + 1 < nb) /* a bound left A: new run */
                run_start(ws, ws->cand + c + 1, nb - c - 1);
        }
        run_end(ws);
        if (taken > 0)
            continue;
        /* no violated bound confirmed (this also guards against a list whose
         * members all fail the exact re-check): candidate optimum, polish */
        int bad_lam = 0, bad_w = 0;
        gs_err prc = polish(ws, s, pb, &bad_lam, &bad_w);
        if (prc == GS_ERR_NOMEM)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the polish");
        if (prc != GS_OK) /* Q_FF singular: GI relative finishes on Q */
            return hand_over(ws, s, pb, o, lam, info, &iters, err);
        if (bad_lam == 0 && bad_w == 0 && zero_rule_verified(ws, s, pb))
            break;
        if (++rounds > GI_POLISH_MAX) {
            /* M's rounding makes the loop cycle: GI relative, on Q itself,
             * finishes from the polished free set */
            gs_err rc = gs_gi_relative_finish(s, pb, o, ws->fs.idx, ws->fs.k, ws->lam, lam, info,
                                              &iters, err);
            info->iterations = iters;
            return rc;
        }
        /* M disagrees with Q beyond the tolerance. Bounds whose gap came out
         * negative leave A; otherwise the most violated polished lam_j enters
         * with its polished value (the M-based refresh may not see it). */
        if (bad_w > 0) {
            for (int c = ws->R.k - 1; c >= 0; c--)
                if (ws->wq[ws->idx[c]] < -s->tol_w) {
                    remove_at(ws, c);
                    iters++;
                }
            iters += settle(ws);
        } else {
            int j = -1;
            for (int i = 0; i < m; i++)
                if (ws->pos[i] < 0 && !gs_problem_is_eq(pb, i) && ws->lam[i] <= -s->tol_lam &&
                    (j < 0 || ws->lam[i] * ws->rsd[i] < ws->lam[j] * ws->rsd[j]))
                    j = i;
            exact_mu(ws);
            sr = gi_add(ws, j, ws->lam[j], &iters);
            if (sr != STEP_ADDED)
                goto step_failed;
        }
        if ((stop = gs_solve_stop(o, iters, max_iter)) != GS_STATUS_OPTIMAL)
            goto max_iter;
    }
    goto out;
step_failed:
    run_end(ws);
    if (sr == STEP_NOMEM)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the active set");
    /* M_AA singular even when refactored: GI relative finishes on Q */
    exact_mu(ws);
    refresh(ws);
    return hand_over(ws, s, pb, o, lam, info, &iters, err);
max_iter: /* or cancelled, or out of time: stop */
    run_end(ws);
    info->status = stop;
    exact_mu(ws);
    refresh(ws);
out:
    memcpy(lam, ws->lam, (size_t)m * sizeof *lam);
    info->iterations = iters;
    return GS_OK;
}
