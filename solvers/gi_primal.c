/*
 * gi_primal.c -- Goldfarb-Idnani dual active set (Powell's variant) on the
 * primal formulation (1):  min 1/2 x'Kx - f'x  s.t.  A'x <= g  (a_k'x = g_k
 * on equality pairs), in x-space with the block factors of K and the 1-2
 * nonzeros per column of A. Q = A'K^-1 A is never read, so the method works
 * from the part factors alone (the case m too large to store Q).
 *
 * Method (paper, sect. 3.2). GI starts at the unconstrained minimum
 * x0 = K^-1 f (no contact) and adds one violated constraint a_j'x <= g_j at a
 * time, moving in primal and dual space: with C the active set, lam_C its
 * multipliers (contact forces) and r = Q_CC^-1 A_C'K^-1 a_j,
 *     x(t) = x - t K^-1 (a_j - A_C r),  lam_C(t) = lam_C - t r,  lam_j = t,
 * so the residual gaps w = g - A'x move by A'K^-1 a_j - (A'K^-1 A_C) r per
 * unit t. Full step t = -w_j / s with s = a_j'K^-1 a_j - (A_C'K^-1 a_j)'r (the
 * Schur complement); a partial step (t = min lam_i / r_i over r_i > 0) drops
 * the blocking constraint and the step for j continues on the smaller set.
 * x itself is never formed: the iteration needs only A'x, and the generic
 * layer recovers x = K^-1 (f - A lam) from the multipliers.
 *
 * Algebra. The x-space work is the column c_j = A'K^-1 a_j (m) of a pair:
 * two triangular solves with the factor L_b of each block that a_j touches
 * (the forward solve starts at the first nonzero row of a_j in that block),
 * then A' by the 1-2 nonzeros per column: O(n_b^2 + m). Columns are computed
 * only for pairs about to enter C, several at once as a BLAS-3 dtrsm (the
 * loaded pairs and the equality pairs at the start, the warm set, and the
 * next GI_PRIMAL_BATCH violated candidates), and cached for the solve in a
 * pool of m-vectors. From them:
 *   Q_Cj = (c_j)_C, Q_jj = (c_j)_j           O(k) gathers
 *   R R' = Q_CC (cholup.h): l = R^-1 Q_Cj, s = Q_jj - l'l, r = R^-T l
 *   A'x - g refreshed lazily: w = sum_C lam_c c_c - p0, O(m k)
 *   p0 = A'x0 - g = u0 + sum_loaded load_i c_i - g  (u0 = A'K^-1 f_base from
 *   the precomputation: no solve with K per problem).
 * The refresh gives the list of violated pairs, taken in order (loaded pairs
 * first with o->fasteners_first, then most violated, ties by index; at most
 * 16 + k/4 of them per refresh, as in gi_relative.c), each re-evaluated
 * exactly in O(k) before it enters.
 *
 * Powell's modification: stable factor updates only (row append; plane
 * rotations on removal); every append's pivot is checked against the diagonal
 * (s > GS_CSET_DEP_TOL Q_jj), a tiny one first refactorizes Q_CC from the
 * cached columns (dpotrf) and only then counts as a dependent constraint
 * (equality pairs: GS_STATUS_INFEASIBLE_EQ; inequality pairs: GI's dual-only
 * partial step, GS_STATUS_NUMERICAL if nothing can leave). At a candidate
 * optimum the multipliers are polished: fresh dpotrf of Q_CC, lam_C =
 * Q_CC^-1 p0_C with one step of iterative refinement, negative inequality
 * multipliers leave (and the system is re-solved), w is refreshed and the
 * iteration continues if a violation reappears (at most GI_POLISH_MAX rounds,
 * then GS_STATUS_NO_PROGRESS).
 * Equality pairs enter before everything (signed steps) and never leave. Warm
 * start: C = equality pairs + the warm contact set, factored once; pairs with a
 * negative multiplier leave until lam_C >= 0 (the GI invariants then hold).
 * Reference: D. Goldfarb, A. Idnani, "A numerically stable dual method for
 * solving strictly convex quadratic programs", Math. Prog. 27 (1983) 1-33;
 * M.J.D. Powell, "On the quadratic programming algorithm of Goldfarb and
 * Idnani", Math. Prog. Study 25 (1985) 46-61; Stefanova et al., Optim. Eng.
 * 21 (2020), sect. 3.2.
 * Invariants: idx[0..k) lists C in factor order, pos[i] its position or -1;
 * R.L R.L' = Q_CC in that order, with Q_CC read from the cached columns;
 * lc[c] = multiplier of idx[c], >= 0 for inequality pairs; every member of C
 * has its column in the pool (slot_of[i] >= 0); w holds Q lam - p at the last
 * refresh.
 * Complexity (k = |C|, n_b block size, m pairs): per pair entering C
 * O(n_b^2 + m) for its column (in batches: dtrsm, BLAS-3); per GI step (add
 * or drop) O(k^2); per candidate check O(k); per refresh O(m k); polish
 * O(k^3/3 + m k). Memory: the pool, m x (k + cached candidates), the factor
 * k^2, and a block-size x batch buffer; no m x m and no n x m array.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gi.h"
#include "cholup.h"
#include "candidates.h"
#include "cset.h"
#include "linalg.h"

#define GI_PRIMAL_BATCH 16 /* candidate columns computed per dtrsm */
#define GI_BATCH_MAX 256   /* columns per dtrsm at the start (bounds the buffer) */
#define GI_POLISH_MAX 8    /* polish rounds before GS_STATUS_NO_PROGRESS */

typedef struct {
    int m, np;
    /* entries of A by block: e in [bstart[b], bstart[b+1]) lies in block b */
    int *bstart, *e_pair, *e_row; /* e_row: row local to the block */
    double *e_val;
    /* column pool of this solve: slot q holds A'K^-1 a_{slot_pair[q]} */
    double *pool;
    int pcap, pused, nfree;
    int keep;       /* inactive columns kept cached (candidates, dropped pairs) */
    int *slot_of;   /* m: slot of a pair or -1 */
    int *slot_pair; /* pcap: pair of a slot, -1 = free */
    int *freel;     /* pcap: free slots */
    /* active set */
    int *idx, *pos; /* m */
    gs_cholup R;      /* R.L R.L' = Q_CC */
    double *lc;     /* m: multipliers, position order */
    double *diag;   /* m: Q_cc in position order */
    double *p0, *w; /* m: A'x0 - g; Q lam - p at the last refresh */
    double *l, *r;  /* m: R^-1 Q_Cj, Q_CC^-1 Q_Cj */
    gs_cand *keys;
    int *list, *batch, *bcol; /* m */
    double *rhs;              /* max block size x GI_BATCH_MAX */
    int nbmax;
    int ray_j;                /* the pair of STEP_INFEASIBLE */
} gi_prim_ws;

static void gi_prim_free(void *p)
{
    gi_prim_ws *ws = p;
    if (!ws)
        return;
    free(ws->bstart);
    free(ws->e_pair);
    free(ws->e_row);
    free(ws->e_val);
    free(ws->pool);
    free(ws->slot_of);
    free(ws->slot_pair);
    free(ws->freel);
    free(ws->idx);
    free(ws->pos);
    gs_cholup_free(&ws->R);
    free(ws->lc);
    free(ws->diag);
    free(ws->p0);
    free(ws->w);
    free(ws->l);
    free(ws->r);
    free(ws->keys);
    free(ws->list);
    free(ws->batch);
    free(ws->bcol);
    free(ws->rhs);
    free(ws);
}

/* Grow the pool to at least cap slots (geometric). */
static int pool_reserve(gi_prim_ws *ws, int cap)
{
    if (cap <= ws->pcap)
        return 0;
    int nc = ws->pcap ? ws->pcap : 64;
    while (nc < cap)
        nc *= 2;
    if (nc > ws->m)
        nc = ws->m;
    double *pool = realloc(ws->pool, gs_mul_size((size_t)nc * sizeof(double), (size_t)ws->m));
    if (!pool)
        return -1;
    ws->pool = pool;
    int *sp = realloc(ws->slot_pair, (size_t)nc * sizeof *sp);
    if (!sp)
        return -1;
    ws->slot_pair = sp;
    int *fl = realloc(ws->freel, (size_t)nc * sizeof *fl);
    if (!fl)
        return -1;
    ws->freel = fl;
    ws->pcap = nc;
    return 0;
}

static void *gi_prim_new(gs_solver *s)
{
    gi_prim_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    const gs_model *mdl = s->pc->mdl;
    const int m = s->m, np = mdl->n_parts;
    ws->m = m;
    ws->np = np;
    ws->bstart = calloc((size_t)np + 1, sizeof(int));
    ws->e_pair = malloc(2 * (size_t)m * sizeof(int));
    ws->e_row = malloc(2 * (size_t)m * sizeof(int));
    ws->e_val = malloc(2 * (size_t)m * sizeof(double));
    ws->slot_of = malloc((size_t)m * sizeof(int));
    ws->idx = malloc((size_t)m * sizeof(int));
    ws->pos = malloc((size_t)m * sizeof(int));
    ws->lc = malloc((size_t)m * sizeof(double));
    ws->diag = malloc((size_t)m * sizeof(double));
    ws->p0 = malloc((size_t)m * sizeof(double));
    ws->w = malloc((size_t)m * sizeof(double));
    ws->l = malloc((size_t)m * sizeof(double));
    ws->r = malloc((size_t)m * sizeof(double));
    ws->keys = malloc((size_t)m * sizeof *ws->keys);
    ws->list = malloc((size_t)m * sizeof(int));
    ws->batch = malloc((size_t)m * sizeof(int));
    ws->bcol = malloc((size_t)m * sizeof(int));
    for (int b = 0; b < np; b++)
        ws->nbmax = mdl->parts[b].ndof > ws->nbmax ? mdl->parts[b].ndof : ws->nbmax;
    ws->rhs = malloc(gs_mul_size((size_t)ws->nbmax * GI_BATCH_MAX, sizeof(double)));
    ws->R.max = m;
    /* inactive cached columns: ~32 MB, at least a few batches */
    ws->keep = (1 << 22) / (m > 0 ? m : 1);
    ws->keep = ws->keep < 4 * GI_PRIMAL_BATCH ? 4 * GI_PRIMAL_BATCH : ws->keep;
    if (!ws->bstart || !ws->e_pair || !ws->e_row || !ws->e_val || !ws->slot_of || !ws->idx ||
        !ws->pos || !ws->lc || !ws->diag || !ws->p0 || !ws->w || !ws->l || !ws->r || !ws->keys ||
        !ws->list || !ws->batch || !ws->bcol || !ws->rhs ||
        gs_cholup_reserve(&ws->R, m < 64 ? m : 64, NULL) != GS_OK ||
        pool_reserve(ws, m < 64 ? m : 64) != 0) {
        gi_prim_free(ws);
        return NULL;
    }
    /* bucket the entries of A by block (counting sort): O(m) */
    for (int e = 0; e < 2 * m; e++)
        if (mdl->a_row[e] >= 0)
            ws->bstart[mdl->pair_parts[e] + 1]++;
    for (int b = 0; b < np; b++)
        ws->bstart[b + 1] += ws->bstart[b];
    for (int e = 0; e < 2 * m; e++) {
        if (mdl->a_row[e] < 0)
            continue;
        int b = mdl->pair_parts[e];
        int at = ws->bstart[b]++;
        ws->e_pair[at] = e / 2;
        ws->e_row[at] = mdl->a_row[e] - mdl->parts[b].offset;
        ws->e_val[at] = mdl->a_val[e];
    }
    for (int b = np; b > 0; b--) /* the cursors ended at the next bucket's start */
        ws->bstart[b] = ws->bstart[b - 1];
    ws->bstart[0] = 0;
    for (int i = 0; i < m; i++) {
        ws->slot_of[i] = -1;
        ws->pos[i] = -1;
    }
    return ws;
}

/* Forget every cached column (start of a solve). O(slots). */
static void pool_reset(gi_prim_ws *ws)
{
    for (int q = 0; q < ws->pused; q++)
        if (ws->slot_pair[q] >= 0)
            ws->slot_of[ws->slot_pair[q]] = -1;
    ws->pused = ws->nfree = 0;
}

/* Free the cached columns of pairs outside C. O(slots). */
static void pool_evict_inactive(gi_prim_ws *ws)
{
    for (int q = 0; q < ws->pused; q++) {
        int i = ws->slot_pair[q];
        if (i >= 0 && ws->pos[i] < 0) {
            ws->slot_of[i] = -1;
            ws->slot_pair[q] = -1;
            ws->freel[ws->nfree++] = q;
        }
    }
}

static inline const double *col_of(const gi_prim_ws *ws, int i)
{
    return ws->pool + (size_t)ws->slot_of[i] * ws->m;
}

/* Columns c_j = A'K^-1 a_j for the nj pairs J (none cached yet, distinct):
 * per block, one forward dtrsm from the first nonzero row and one backward
 * dtrsm for the members touching it, then A' over the block's entries.
 * O(sum_b n_b^2 nj_b + m nj) flops, BLAS-3. Returns -1 on no memory. */
static int compute_columns(gi_prim_ws *ws, const gs_precomp *pc, const int *J, int nj)
{
    const gs_model *mdl = pc->mdl;
    const int m = ws->m;
    for (int c0 = 0; c0 < nj; c0 += GI_BATCH_MAX) {
        const int nc = nj - c0 < GI_BATCH_MAX ? nj - c0 : GI_BATCH_MAX;
        const int *Jc = J + c0;
        int avail = ws->nfree + (ws->pcap - ws->pused);
        if (avail < nc && pool_reserve(ws, ws->pcap + (nc - avail)) != 0)
            return -1;
        for (int c = 0; c < nc; c++) {
            int q = ws->nfree ? ws->freel[--ws->nfree] : ws->pused++;
            ws->slot_of[Jc[c]] = q;
            ws->slot_pair[q] = Jc[c];
            memset(ws->pool + (size_t)q * m, 0, (size_t)m * sizeof(double));
        }
        for (int b = 0; b < ws->np; b++) {
            const int nb = mdl->parts[b].ndof, off = mdl->parts[b].offset;
            int nbc = 0, r0 = nb;
            for (int c = 0; c < nc; c++) {
                const int j = Jc[c];
                if (mdl->pair_parts[2 * j] == b || mdl->pair_parts[2 * j + 1] == b)
                    ws->bcol[nbc++] = j;
            }
            if (nbc == 0)
                continue;
            double *B = ws->rhs;
            memset(B, 0, (size_t)nb * nbc * sizeof *B);
            for (int c = 0; c < nbc; c++)
                for (int e = 2 * ws->bcol[c]; e < 2 * ws->bcol[c] + 2; e++)
                    if (mdl->a_row[e] >= 0 && mdl->pair_parts[e] == b) {
                        int row = mdl->a_row[e] - off;
                        B[row + (size_t)c * nb] += mdl->a_val[e];
                        r0 = row < r0 ? row : r0;
                    }
            if (pc->L[b]) { /* dense: the forward solve skips the leading zero rows */
                const double *Lb = pc->L[b];
                cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit,
                            nb - r0, nbc, 1.0, Lb + r0 + (size_t)r0 * nb, nb, B + r0, nb);
                cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, nb,
                            nbc, 1.0, Lb, nb, B, nb);
            } else if (gs_precomp_part_solve(pc, b, B, nb, nbc, NULL) != GS_OK) {
                return -1;
            }
            for (int c = 0; c < nbc; c++) {
                double *col = ws->pool + (size_t)ws->slot_of[ws->bcol[c]] * m;
                const double *v = B + (size_t)c * nb;
                for (int e = ws->bstart[b]; e < ws->bstart[b + 1]; e++)
                    col[ws->e_pair[e]] += ws->e_val[e] * v[ws->e_row[e]];
            }
        }
    }
    return 0;
}

/* Compute the columns of those of J[0..nj) not cached yet. */
static int ensure_columns(gi_prim_ws *ws, const gs_precomp *pc, const int *J, int nj)
{
    int nb = 0;
    for (int c = 0; c < nj; c++)
        if (ws->slot_of[J[c]] < 0)
            ws->batch[nb++] = J[c];
    return nb ? compute_columns(ws, pc, ws->batch, nb) : 0;
}

/* Remove position c from C, carrying l = L^-1 Q[C, j] along if not NULL
 * (gs_cholup_remove_carry). O((k - c)^2). */
static void remove_at(gi_prim_ws *ws, int c, double *l)
{
    const int k = ws->R.k;
    gs_cholup_remove_carry(&ws->R, c, l);
    gs_wlist_remove(ws->idx, ws->pos, k, c);
    gs_wlist_shift(ws->lc, k, c);
    gs_wlist_shift(ws->diag, k, c);
}

static void clear_set(gi_prim_ws *ws)
{
    gs_wlist_clear(ws->idx, ws->pos, ws->R.k);
    ws->R.k = 0;
}

/* Factor Q_CC afresh from the cached columns (dpotrf). Returns -1 if it is
 * numerically singular (the factor is then invalid). O(k^3/3). */
static int refactor(gi_prim_ws *ws)
{
    const int k = ws->R.k, ld = ws->R.cap;
    for (int b = 0; b < k; b++) {
        const double *cb = col_of(ws, ws->idx[b]);
        for (int a = b; a < k; a++)
            ws->R.L[a + (size_t)b * ld] = cb[ws->idx[a]];
    }
    gs_error e;
    if (k && gs_chol(ws->R.L, k, ld, "Q_CC", &e) != GS_OK)
        return -1;
    return gs_cholup_min_pivot(&ws->R, ws->diag) > GS_CSET_DEP_TOL ? 0 : -1;
}

/* w = Q[:, C] lam_C - p0 from the cached columns. O(m k). */
static void refresh(gi_prim_ws *ws)
{
    const int m = ws->m;
    for (int i = 0; i < m; i++)
        ws->w[i] = -ws->p0[i];
    for (int c = 0; c < ws->R.k; c++)
        cblas_daxpy(m, ws->lc[c], col_of(ws, ws->idx[c]), 1, ws->w, 1);
}

/* Current residual gap of pair j from the columns of C (symmetry of Q). O(k). */
static double current_w(const gi_prim_ws *ws, int j)
{
    double acc = -ws->p0[j];
    for (int c = 0; c < ws->R.k; c++)
        acc += ws->lc[c] * col_of(ws, ws->idx[c])[j];
    return acc;
}

/* STEP_INFEASIBLE: an inequality pair depends on C and nothing blocks its
 * step: the gaps contradict (ws->ray_j, ws->r: gs_gi_farkas_ray). */
typedef enum { STEP_ADDED, STEP_DEPENDENT, STEP_INFEASIBLE, STEP_NOMEM } step_result;

/* Bring pair j (residual gap wj, column cached) into C by GI steps: partial
 * steps drop blocking pairs, the full step appends j. eq: equality pair
 * (signed step, never blocked by its own sign). */
static step_result gi_add(gi_prim_ws *ws, const gs_problem *pb, int j, double wj, int eq,
                          int *iters)
{
    gs_cholup *R = &ws->R;
    const double *cj = col_of(ws, j);
    const double qjj = cj[j];
    double lamj = 0.0;
    int refactored = 0, carried = 0; /* carried: l came through the last drop */
    if (gs_cholup_reserve(R, R->k + 1, NULL) != GS_OK)
        return STEP_NOMEM;
    for (;;) {
        const int k = R->k;
        if (!carried) {
            for (int c = 0; c < k; c++)
                ws->l[c] = cj[ws->idx[c]];
            gs_cholup_solve_L(R, ws->l);
        }
        carried = 0;
        double sch = qjj - (k ? cblas_ddot(k, ws->l, 1, ws->l, 1) : 0.0);
        int dependent = !(sch > GS_CSET_DEP_TOL * qjj);
        if (dependent && !refactored && k > 0) {
            refactored = 1; /* rule out a factor spoiled by updates first */
            if (refactor(ws) != 0)
                return STEP_DEPENDENT;
            continue;
        }
        memcpy(ws->r, ws->l, (size_t)k * sizeof *ws->r);
        gs_cholup_solve_Lt(R, ws->r);
        double tfull = dependent ? INFINITY : -wj / sch;
        double dir = tfull < 0.0 ? -1.0 : 1.0;
        /* ratio test over the inequality pairs of C: lam_i - t r_i >= 0 */
        double tpart;
        int block = gs_gi_ratio_test(k, ws->lc, ws->r, dir, ws->idx, pb, &tpart);
        if (dependent && block < 0) {
            ws->ray_j = j;
            return eq ? STEP_DEPENDENT : STEP_INFEASIBLE;
        }
        (*iters)++;
        if (fabs(tfull) <= tpart) { /* full step: j joins C */
            for (int c = 0; c < k; c++)
                ws->lc[c] -= tfull * ws->r[c];
            lamj += tfull;
            gs_cholup_append(R, ws->l, sqrt(sch));
            ws->idx[k] = j;
            ws->pos[j] = k;
            ws->lc[k] = eq ? lamj : fmax(lamj, 0.0);
            ws->diag[k] = qjj;
            return STEP_ADDED;
        }
        /* partial step: the blocking pair leaves C */
        double t = dir * tpart;
        for (int c = 0; c < k; c++)
            ws->lc[c] -= t * ws->r[c];
        lamj += t;
        wj += t * sch;
        remove_at(ws, block, ws->l); /* l carried to the smaller set */
        carried = 1;
    }
}

/* lam_C = Q_CC^-1 p0_C with one step of iterative refinement (residual from
 * this form's own columns of Q, not gs_cset's); members leave by the zero
 * rule of cset.h (gs_zero_rule, tol_lam) and the system is solved again.
 * Returns pairs dropped. ws->batch is scratch. O(k^2) per round. */
static int settle(gi_prim_ws *ws, const gs_problem *pb, double tol_lam)
{
    int dropped = 0;
    for (;;) {
        const int k = ws->R.k;
        for (int c = 0; c < k; c++)
            ws->lc[c] = ws->p0[ws->idx[c]];
        gs_cholup_solve_L(&ws->R, ws->lc);
        gs_cholup_solve_Lt(&ws->R, ws->lc);
        for (int a = 0; a < k; a++) {
            double acc = ws->p0[ws->idx[a]];
            for (int b = 0; b < k; b++)
                acc -= col_of(ws, ws->idx[b])[ws->idx[a]] * ws->lc[b];
            ws->r[a] = acc;
        }
        gs_cholup_solve_L(&ws->R, ws->r);
        gs_cholup_solve_Lt(&ws->R, ws->r);
        for (int c = 0; c < k; c++)
            ws->lc[c] += ws->r[c];
        int n = gs_zero_rule(k, ws->idx, ws->lc, pb, tol_lam, ws->batch);
        if (n == 0)
            return dropped;
        for (int q = 0; q < n; q++) /* decreasing positions */
            remove_at(ws, ws->batch[q], NULL);
        dropped += n;
    }
}

/* Append pair j with an existing column to the factor if independent of C
 * (no GI step: used to build a start set). Returns 0, or 1 if dependent. */
static int append_plain(gi_prim_ws *ws, int j)
{
    const double *cj = col_of(ws, j);
    const int k = ws->R.k;
    for (int c = 0; c < k; c++)
        ws->l[c] = cj[ws->idx[c]];
    gs_cholup_solve_L(&ws->R, ws->l);
    double sch = cj[j] - (k ? cblas_ddot(k, ws->l, 1, ws->l, 1) : 0.0);
    if (!(sch > GS_CSET_DEP_TOL * cj[j]))
        return 1;
    gs_cholup_append(&ws->R, ws->l, sqrt(sch));
    ws->idx[k] = j;
    ws->pos[j] = k;
    ws->diag[k] = cj[j];
    return 0;
}

gs_err gs_gi_primal_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                          double *lam, gs_solve_info *info, gs_error *err)
{
    gi_prim_ws *ws = gs_solver_ws(s, GS_METHOD_GI, GS_FORM_PRIMAL, gi_prim_new, gi_prim_free, err);
    if (!ws)
        return GS_ERR_NOMEM;
    const gs_precomp *pc = s->pc;
    const int m = s->m, max_iter = gs_solver_max_iter(s, o);
    const int loaded_first = o->fasteners_first && pb->load;
    int iters = 0, rounds = 0, n_eq = 0, nl = 0;
    step_result sr = STEP_ADDED;
    clear_set(ws);
    pool_reset(ws);
    info->status = GS_STATUS_OPTIMAL;

    /* 1. p0 = A'K^-1 (f_base + A load) - g from u0 and the loaded columns */
    if (pb->load)
        for (int i = 0; i < m; i++)
            if (pb->load[i] > 0.0)
                ws->list[nl++] = i;
    if (ensure_columns(ws, pc, ws->list, nl) != 0)
        goto nomem;
    for (int i = 0; i < m; i++)
        ws->p0[i] = pc->u0[i] - pb->g[i];
    for (int c = 0; c < nl; c++)
        cblas_daxpy(m, pb->load[ws->list[c]], col_of(ws, ws->list[c]), 1, ws->p0, 1);

    /* 2. the start set: equality pairs (+ the warm contact set) */
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(pb, i))
            ws->list[n_eq++] = i;
    int k0 = n_eq;
    if (o->warm && o->warm->n_act > 0)
        for (int c = 0; c < o->warm->n_act; c++) {
            int i = o->warm->act[c];
            if (!gs_problem_is_eq(pb, i) && ws->pos[i] == -1) {
                ws->pos[i] = -2; /* dedup mark */
                ws->list[k0++] = i;
            }
        }
    for (int c = n_eq; c < k0; c++)
        ws->pos[ws->list[c]] = -1;
    if (ensure_columns(ws, pc, ws->list, k0) != 0 || gs_cholup_reserve(&ws->R, k0, NULL) != GS_OK)
        goto nomem;
    if (k0 > n_eq) { /* warm: build the factor directly, then settle */
        int kept = 0;
        for (int c = 0; c < k0; c++) {
            int dep = append_plain(ws, ws->list[c]);
            if (dep && c < n_eq) {
                info->status = GS_STATUS_INFEASIBLE_EQ;
                goto out;
            }
            kept += !dep && c >= n_eq;
        }
        int dropped = settle(ws, pb, s->tol_lam);
        iters += dropped;
        info->warm_used = 1;
        info->warm_kept = kept - dropped;
    } else { /* cold: equality pairs by signed GI steps */
        for (int c = 0; c < n_eq; c++) {
            int j = ws->list[c];
            sr = gi_add(ws, pb, j, current_w(ws, j), 1, &iters);
            if (sr == STEP_NOMEM)
                goto nomem;
            if (sr == STEP_DEPENDENT) {
                info->status = GS_STATUS_INFEASIBLE_EQ;
                goto out;
            }
        }
    }

    /* 3. add violated pairs until none is left */
    int polished = 0;
    for (;;) {
        if (ws->pused - ws->nfree - ws->R.k > ws->keep)
            pool_evict_inactive(ws);
        refresh(ws);
        int nc = 0;
        for (int i = 0; i < m; i++)
            if (ws->pos[i] < 0 && ws->w[i] < -s->tol_w)
                ws->keys[nc++] = (gs_cand){!(loaded_first && pb->load[i] > 0.0), ws->w[i], i};
        /* at most `batch` pairs per list before w is refreshed (candidates.h) */
        const int batch = gs_cand_batch(ws->R.k);
        nc = gs_cand_order_head(ws->keys, nc, 4 * batch);
        int taken = 0;
        for (int c = 0; c < nc && taken < batch; c++) {
            int j = ws->keys[c].i;
            double wj = current_w(ws, j);
            if (!(wj < -s->tol_w))
                continue;
            if (ws->slot_of[j] < 0) { /* j and the next violated candidates */
                int nb = 0;
                ws->list[nb++] = j;
                for (int d = c + 1; d < nc && nb < GI_PRIMAL_BATCH; d++) {
                    int i = ws->keys[d].i;
                    if (ws->slot_of[i] < 0 && current_w(ws, i) < -s->tol_w)
                        ws->list[nb++] = i;
                }
                if (compute_columns(ws, pc, ws->list, nb) != 0)
                    goto nomem;
            }
            sr = gi_add(ws, pb, j, wj, 0, &iters);
            if (sr == STEP_NOMEM)
                goto nomem;
            if (sr == STEP_INFEASIBLE) {
                gs_gi_farkas_ray(m, ws->R.k, ws->idx, ws->r, ws->ray_j, pb, lam);
                info->status = GS_STATUS_INFEASIBLE;
                info->iterations = iters;
                return GS_OK;
            }
            if (sr == STEP_DEPENDENT) {
                info->status = GS_STATUS_NUMERICAL;
                goto out;
            }
            taken++;
            if ((info->status = gs_solve_stop(o, iters, max_iter)) != GS_STATUS_OPTIMAL)
                goto out;
        }
        if (taken > 0) {
            polished = 0;
            continue;
        }
        /* no violation confirmed: done if polished, else polish and re-check */
        if (polished)
            break;
        if (++rounds > GI_POLISH_MAX) { /* progress guard */
            info->status = GS_STATUS_NO_PROGRESS;
            goto out;
        }
        if (refactor(ws) != 0) {
            info->status = GS_STATUS_NUMERICAL;
            goto out;
        }
        iters += settle(ws, pb, s->tol_lam);
        polished = 1;
        if ((info->status = gs_solve_stop(o, iters, max_iter)) != GS_STATUS_OPTIMAL)
            goto out;
    }
out:
    memset(lam, 0, (size_t)m * sizeof *lam);
    for (int c = 0; c < ws->R.k; c++)
        lam[ws->idx[c]] = ws->lc[c];
    info->iterations = iters;
    return GS_OK;
nomem:
    return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the primal active set");
}
