/*
 * gi_relative.c -- Goldfarb-Idnani dual active set (Powell's variant) on the
 * relative formulation (3):  min 1/2 u'K~u - f~'u  s.t.  u <= g,  K~ = Q^-1.
 *
 * Method. GI starts at the unconstrained minimum u = u0 (no contact: lam = 0,
 * residual gaps w = -p) and adds violated constraints u_j <= g_j (pairs
 * with w_j < 0 that close into contact; one at a time here, blocks below),
 * keeping every iterate optimal on its active set and dual feasible (lam >=
 * 0). Its multipliers are the contact forces. Written in the dual
 * variables, with C the active set:
 *   lam_C = Q_CC^-1 p_C,   w = Q[:, C] lam_C - p,   u = g - w,
 * because (K~_FF)^-1 relations reduce by the Schur complement to Q_CC (the
 * identity K~ = L_Q^-T L_Q^-1: J = L_Q, see docs/math.md (3)). Adding j:
 *   l = L^-1 Q_Cj, s = Q_jj - l'l > 0     (w_j grows by s per unit lam_j)
 *   r = L^-T l = Q_CC^-1 Q_Cj             (lam_C falls by r per unit lam_j)
 *   full step t = -w_j / s; partial step t = min lam_i / r_i over r_i > 0:
 *   the blocking pair i leaves C (its multiplier reached 0) and the step
 *   for j continues on the smaller set.
 * Powell's modification for ill-conditioned problems is kept in spirit: the
 * factor L L' = Q_CC is only ever appended (one row) or updated by a stable
 * rank-one (Givens-type) downdate of the trailing block on removal, never
 * recomputed by explicit-inverse formulas; the final multipliers are polished
 * by a re-solve with one step of iterative refinement.
 * Adaptations (paper, sect. 3.2): pairs carrying a fastener load enter first;
 * equality (permanently fastened) pairs enter before anything and never
 * leave (free sign); warm start from a previous contact set (the factor of
 * the workspace's last set travels to it, gs_cset_travel; pairs whose
 * multiplier turns negative are dropped, all at once when there are
 * GI_WARM_BLOCK_DROP or more: the GI invariants then hold and the iteration
 * continues).
 * Which pairs, and how many at once. One product w = Q[:, C] lam_C - p
 * (a refresh, O(m k)) lists the violated pairs; the GI_POOL_MIN + k /
 * GI_POOL_PER most violated go into a pool (cpool.h) whose residual gaps
 * are kept exact as C changes, O(k) per pool pair and addition; each
 * addition takes the pairs most violated now (pairs with a load first),
 * instead of the refresh's stale order, in which half of GI's steps added
 * pairs that their neighbours' closing had shielded since (they left
 * again: lap joint at 50%, 667 -> 424 steps per gap). When no pool pair is
 * violated, w is refreshed; no violation left = optimal.
 * Up to GI_BLOCK_MIN + k / GI_BLOCK_PER of those pairs are added together
 * (gi_add_block): the same GI step for a block J, along the straight path
 * that keeps w_C = 0 and takes w_J to 0, partial steps as above, and pairs
 * the others shield leave the block. The block's L^-1 Q[C, J] is one
 * triangular solve with several right-hand sides (L read once), and each
 * segment of its path one L^-T solve: lap joint at 50%, about 440 GI steps
 * (a block of b counts b) in 170 segments.
 * Reference: D. Goldfarb, A. Idnani, Math. Prog. 27 (1983) 1-33;
 * M.J.D. Powell, Math. Prog. Study 25 (1985) 46-61; Stefanova et al. (2020).
 * Invariants: cs holds C and L with L L' = Q_CC; lc[c] = lam of the pair at
 * position c, >= 0 for inequality pairs; lam_j of the pairs being added is
 * kept apart until their full step.
 * Cost (k = |C| at the end, m pairs): per GI step of one pair O(k^2) (two
 * triangular solves, linalg.h's; one after a partial step, whose removal
 * carries l); per block of b pairs O(k^2 b) in one multi-column solve plus
 * O(k^2 + k b^2) per segment; per pick O(k n) for the n pool pairs; per
 * refresh O(m k) (gs_cols_mul). Measured on the 5,206-unknown lap joint
 * (docs/solvers.md): 0.95 / 3.8 / 6.6 ms per gap at 10 / 50 / 100%
 * fasteners (n_act 77 / 282 / 380).
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "cpool.h"
#include "cset.h"
#include "gi.h"
#include "linalg.h"

/* Warm start: with at least this many negative multipliers on the warm
 * set, they all leave at once (one travel) instead of the most negative
 * one at a time (a solve of O(k^2) after each). */
#ifndef GI_WARM_BLOCK_DROP
#define GI_WARM_BLOCK_DROP 4
#endif

/* The candidate pool (cpool.h): the GI_POOL_MIN + k / GI_POOL_PER most
 * violated pairs of a refresh (k = |C|) have their residual gaps kept exact;
 * w is refreshed when none of them is violated any more. 32 + k/8 was
 * within the noise of the best of 32, 64, 32 + k/4 on the lap and
 * sandwich joints; without the per-k term the sandwich at 100% (k = 955)
 * refreshed twice as often. */
#define GI_POOL_MIN 32
#define GI_POOL_PER 8
/* Pairs added at once (gi_add_block): up to GI_BLOCK_MIN + k /
 * GI_BLOCK_PER, at most GI_BLOCK_MAX; 4 + k/64 was as fast as the best
 * fixed size (4 at k < 200, 8-16 above) at every fraction on both joints. */
#define GI_BLOCK_MIN 4
#define GI_BLOCK_PER 64
#define GI_BLOCK_MAX 16

typedef struct {
    gs_cset cs;
    double *lc;     /* m: multipliers in position order */
    double *l, *r;  /* m: L^-1 Q_Cj and Q_CC^-1 Q_Cj */
    double *w;      /* m: residual gaps at the last refresh */
    int *cand;      /* m: violated pairs to take in order */
    gs_cand *keys;  /* m: their sort keys */
    int *list;      /* m: warm start list */
    unsigned char *listed; /* m: warm start dedup, zero between calls */
    gs_cpool pool;  /* candidates with exact w; empty outside the add loop */
    /* a block of pairs being added (gi_add_block) */
    double *X;      /* m x GI_BLOCK_MAX: L^-1 Q[C, J] */
    double S[GI_BLOCK_MAX * GI_BLOCK_MAX]; /* Cholesky factor of the Schur complement */
    double dJ[GI_BLOCK_MAX], lamJ[GI_BLOCK_MAX], wJ[GI_BLOCK_MAX];
    int J[GI_BLOCK_MAX], slots[GI_BLOCK_MAX];
    int ray_j;      /* the pair of STEP_INFEASIBLE */
} gi_rel_ws;

static void gi_rel_free(void *p)
{
    gi_rel_ws *ws = p;
    if (!ws)
        return;
    gs_cset_free(&ws->cs);
    gs_cpool_free(&ws->pool);
    free(ws->X);
    free(ws->lc);
    free(ws->l);
    free(ws->r);
    free(ws->w);
    free(ws->cand);
    free(ws->keys);
    free(ws->list);
    free(ws->listed);
    free(ws);
}

static void *gi_rel_new(gs_solver *s)
{
    gi_rel_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    const size_t m = (size_t)s->m;
    ws->lc = malloc(m * sizeof *ws->lc);
    ws->l = malloc(m * sizeof *ws->l);
    ws->r = malloc(m * sizeof *ws->r);
    ws->w = malloc(m * sizeof *ws->w);
    ws->cand = malloc(m * sizeof *ws->cand);
    ws->list = malloc(m * sizeof *ws->list);
    ws->listed = calloc(m, 1);
    ws->keys = malloc(m * sizeof *ws->keys);
    ws->X = malloc(m * GI_BLOCK_MAX * sizeof *ws->X);
    gs_cpool_init(&ws->pool);
    if (!ws->lc || !ws->l || !ws->r || !ws->w || !ws->cand || !ws->list || !ws->keys || !ws->listed ||
        !ws->X ||
        gs_cset_init(&ws->cs, s->pc, NULL) != GS_OK) {
        gi_rel_free(ws);
        return NULL;
    }
    return ws;
}

/* Remove position c from C, from lc and from the pool's columns; carry the
 * n vectors V[:, q] of the form L^-1 Q[C, j] (gs_cset_remove_carry_n), ld
 * m (n = 0: none). */
static void drop_at(gi_rel_ws *ws, int c, double *V, int n)
{
    gs_cpool_removed(&ws->pool, c, ws->cs.k);
    gs_cset_remove_carry_n(&ws->cs, c, V, (size_t)ws->cs.m, n);
    memmove(ws->lc + c, ws->lc + c + 1, (size_t)(ws->cs.k - c) * sizeof *ws->lc);
}

/* Append pair j (row l of the factor, Schur complement sch) with
 * multiplier lam to C and to the pool's columns. */
static void append(gi_rel_ws *ws, int j, const double *l, double sch, double lam)
{
    gs_cset_append(&ws->cs, j, l, sch);
    ws->lc[ws->cs.k - 1] = lam;
    gs_cpool_appended(&ws->pool, &ws->cs, j); /* no memory: the pool empties, a refresh follows */
}

/* Current residual gap of pair j (not in C): Q[C, j] lam_C - p_j. O(k). */
static double current_w(const gi_rel_ws *ws, const gs_solver *s, int j)
{
    const double *qj = s->pc->Q + (size_t)j * s->m;
    double acc = -s->p[j];
    for (int c = 0; c < ws->cs.k; c++)
        acc += qj[ws->cs.idx[c]] * ws->lc[c];
    return acc;
}

/* STEP_INFEASIBLE: the inequality pair being added depends on C and no
 * member of C blocks its step, so the dual objective falls without bound
 * along e_j - r: the gaps contradict (ws->ray_j is j, ws->r holds r).
 * STEP_DEPENDENT: an equality pair depends on C, or a block met a
 * dependence at the rounding of its tolerance. */
typedef enum { STEP_ADDED, STEP_DEPENDENT, STEP_INFEASIBLE, STEP_NOMEM } step_result;

/* What ws->l holds when gi_add starts: nothing (gather Q[C, j]), Q[C, j],
 * or L^-1 Q[C, j]. */
typedef enum { L_NONE, L_COLUMN, L_SOLVED } l_state;

/* Bring pair j (residual gap wj, multiplier lamj so far: 0 unless a block
 * handed it over) into C by GI steps: partial steps drop blocking pairs,
 * the full step appends j. eq: equality pair (signed step, never blocked by
 * its own sign). Counts steps in *iters. */
static step_result gi_add(gi_rel_ws *ws, const gs_problem *pb, int j, double wj, double lamj,
                          int eq, l_state have, int *iters)
{
    gs_cset *cs = &ws->cs;
    const double qjj = cs->pc->qdiag[j];
    if (gs_cset_reserve(cs, cs->k + 1, NULL) != GS_OK)
        return STEP_NOMEM;
    int carried = have == L_SOLVED; /* ws->l = L^-1 Q[C, j]: no new solve */
    for (;;) {
        const int k = cs->k;
        double sch = carried            ? qjj - (k ? cblas_ddot(k, ws->l, 1, ws->l, 1) : 0.0)
                     : have == L_COLUMN ? gs_cset_schur_col(cs, j, ws->l)
                                        : gs_cset_schur(cs, j, ws->l);
        memcpy(ws->r, ws->l, (size_t)k * sizeof *ws->r);
        gs_cset_solve_Lt(cs, ws->r);
        int dependent = !(sch > GS_CSET_DEP_TOL * qjj);
        double tfull = dependent ? INFINITY : -wj / sch;
        double dir = tfull < 0 ? -1.0 : 1.0;
        /* ratio test over the inequality pairs of C: lam_i - t r_i >= 0 */
        double tpart;
        int block = gs_gi_ratio_test(k, ws->lc, ws->r, dir, cs->idx, pb, &tpart);
        if (dependent && block < 0) {
            ws->ray_j = j;
            return eq ? STEP_DEPENDENT : STEP_INFEASIBLE;
        }
        (*iters)++;
        if (fabs(tfull) <= tpart) { /* full step: j joins C */
            double t = tfull;
            for (int c = 0; c < k; c++)
                ws->lc[c] -= t * ws->r[c];
            lamj += t;
            /* an inequality multiplier cannot be negative after a full step
             * except by round-off on a degenerate one */
            append(ws, j, ws->l, sch, (!eq && lamj < 0.0) ? 0.0 : lamj);
            return STEP_ADDED;
        }
        /* partial step: the blocking pair leaves C */
        double t = dir * tpart;
        for (int c = 0; c < k; c++)
            ws->lc[c] -= t * ws->r[c];
        lamj += t;
        wj += t * sch;
        drop_at(ws, block, ws->l, 1);
        carried = 1;
        /* lam_j != 0 while j is still outside C; w_j was advanced with the
         * step; l was carried to the smaller set, the next pass computes s
         * and r from it */
    }
}

/* In place lower Cholesky of the b x b matrix S whose pivots must exceed
 * GS_CSET_DEP_TOL times the pairs' Q_jj (qd), as a single addition's Schur
 * complement must: returns -1 or the first pivot that does not. O(b^3/3). */
static int chol_block(double *S, int b, const double *qd)
{
    for (int j = 0; j < b; j++) {
        double d = S[j + j * b];
        for (int q = 0; q < j; q++)
            d -= S[j + q * b] * S[j + q * b];
        if (!(d > GS_CSET_DEP_TOL * qd[j]))
            return j;
        d = sqrt(d);
        S[j + j * b] = d;
        for (int i = j + 1; i < b; i++) {
            double v = S[i + j * b];
            for (int q = 0; q < j; q++)
                v -= S[i + q * b] * S[j + q * b];
            S[i + j * b] = v / d;
        }
    }
    return -1;
}

/* Member i of the block leaves it (its multiplier is 0): the last one
 * takes its place. */
static void block_remove(gi_rel_ws *ws, int i, int b)
{
    const size_t m = (size_t)ws->cs.m;
    if (i == b - 1)
        return;
    ws->J[i] = ws->J[b - 1];
    ws->wJ[i] = ws->wJ[b - 1];
    ws->lamJ[i] = ws->lamJ[b - 1];
    memcpy(ws->X + i * m, ws->X + (b - 1) * m, (size_t)ws->cs.k * sizeof *ws->X);
}

/* Bring the b pairs J (residual gaps wJ < 0, columns Q[C, J] in X) into C
 * together: GI's step for several pairs at once. With S = Q_JJ - X'X the
 * Schur complement of Q_CC (X = L^-1 Q[C, J]) and d = -S^-1 w_J, the step
 * lam_J += t d, lam_C -= t r (r = L^-T X d) keeps w_C = 0 and takes w_J to
 * (1 - t) w_J: a straight path to the minimum on C + J, along which the
 * dual objective falls. t = 1 appends the whole block (its factor rows
 * [X' L_S]); a member of C whose multiplier reaches 0 first leaves (X
 * carried by the removal's rotations), a block pair whose multiplier
 * would turn negative leaves the block (at once while it is still 0: a
 * pair the others shield), and the step goes on. A block of one pair is
 * GI's own step (gi_add). Cost per segment O(k^2) (one L^-T solve) + O(k
 * b^2); once per block O(k^2 b) for X with L read once (gs_trsm_l),
 * against b pairs of O(k^2) solves one pair at a time. */
static step_result gi_add_block(gi_rel_ws *ws, const gs_problem *pb, int b, int *iters)
{
    gs_cset *cs = &ws->cs;
    const size_t m = (size_t)cs->m;
    const double *Q = cs->pc->Q;
    if (gs_cset_reserve(cs, cs->k + b, NULL) != GS_OK)
        return STEP_NOMEM;
    for (int i = 0; i < b; i++)
        ws->lamJ[i] = 0.0;
    /* Q_JJ below: b (b + 1) / 2 entries scattered over the block's own
     * columns of Q, which nothing else reads (the pool holds their rows in
     * the members' columns), so each is a miss to memory; asked for now,
     * they arrive while the triangular solve runs: cold solves 1.4-4% faster
     * at 10%, 2-2.3% at 50%, 1.2-1.7% at 100% on the lap joint (docs/solvers.md) */
    for (int j = 0; j < b; j++)
        for (int i = j; i < b; i++)
            __builtin_prefetch(&Q[(size_t)ws->J[j] * m + ws->J[i]]);
    if (cs->k > 0)
        gs_trsm_l(cs->k, cs->f.L, (size_t)cs->f.cap, ws->X, m, b);
    while (b > 1) {
        const int k = cs->k;
        /* S = Q_JJ - X'X, lower triangle, then its factor */
        double qd[GI_BLOCK_MAX], dots[GI_BLOCK_MAX];
        for (int j = 0; j < b; j++) {
            gs_cols_dot(k, ws->X + j * m, m, b - j, ws->X + j * m, dots);
            for (int i = j; i < b; i++)
                ws->S[i + j * b] = Q[(size_t)ws->J[j] * m + ws->J[i]] - dots[i - j];
            qd[j] = cs->pc->qdiag[ws->J[j]];
        }
        const int dep = chol_block(ws->S, b, qd);
        if (dep >= 0) {
            /* J[dep] depends on C and the block before it. The pivots only
             * grow once the block has been factored (removing members of C
             * or of the block enlarges the Schur complements), so this is
             * the first factorization, where no pair has force yet: J[dep]
             * leaves, GI decides about it later. A pair with force here is
             * round-off at the dependence tolerance: reported as such. */
            if (ws->lamJ[dep] != 0.0)
                return STEP_DEPENDENT;
            block_remove(ws, dep, b--);
            continue;
        }
        /* d = -S^-1 w_J */
        for (int i = 0; i < b; i++) {
            double v = -ws->wJ[i];
            for (int q = 0; q < i; q++)
                v -= ws->S[i + q * b] * ws->dJ[q];
            ws->dJ[i] = v / ws->S[i + i * b];
        }
        for (int i = b - 1; i >= 0; i--) {
            double v = ws->dJ[i];
            for (int q = i + 1; q < b; q++)
                v -= ws->S[q + i * b] * ws->dJ[q];
            ws->dJ[i] = v / ws->S[i + i * b];
        }
        /* a pair still at 0 that would turn negative is shielded by the
         * others: it leaves the block before any step (the most negative
         * first, then d again) */
        int worst = -1;
        for (int i = 0; i < b; i++)
            if (ws->lamJ[i] == 0.0 && !(ws->dJ[i] > 0.0) &&
                (worst < 0 || ws->dJ[i] < ws->dJ[worst]))
                worst = i;
        if (worst >= 0) {
            block_remove(ws, worst, b--);
            continue;
        }
        /* r = L^-T X d: lam_C falls by r per unit step */
        memset(ws->r, 0, (size_t)k * sizeof *ws->r);
        for (int i = 0; i < b; i++)
            for (int c = 0; c < k; c++)
                ws->r[c] += ws->X[i * m + c] * ws->dJ[i];
        gs_cset_solve_Lt(cs, ws->r);
        double tc;
        const int block = gs_gi_ratio_test(k, ws->lc, ws->r, 1.0, cs->idx, pb, &tc);
        int jb = -1;
        double tj = INFINITY;
        for (int i = 0; i < b; i++)
            if (ws->dJ[i] < 0.0) {
                const double t = ws->lamJ[i] / -ws->dJ[i]; /* lamJ >= 0: clamped below */
                if (t < tj) {
                    tj = t;
                    jb = i;
                }
            }
        if (tc >= 1.0 && tj >= 1.0) { /* full step: the block joins C */
            for (int c = 0; c < k; c++)
                ws->lc[c] -= ws->r[c];
            for (int i = 0; i < b; i++) {
                /* the row of J[i]: X's column, then row i of L_S */
                double *row = ws->X + i * m;
                for (int q = 0; q < i; q++)
                    row[k + q] = ws->S[i + q * b];
                const double lam = ws->lamJ[i] + ws->dJ[i], s = ws->S[i + i * b];
                append(ws, ws->J[i], row, s * s, lam < 0.0 ? 0.0 : lam);
            }
            *iters += b;
            return STEP_ADDED;
        }
        const double t = tc < tj ? tc : tj;
        for (int c = 0; c < k; c++)
            ws->lc[c] -= t * ws->r[c];
        for (int i = 0; i < b; i++) {
            ws->lamJ[i] += t * ws->dJ[i];
            if (ws->lamJ[i] < 0.0) /* round-off of a pair reaching 0 with a member of C */
                ws->lamJ[i] = 0.0;
            ws->wJ[i] *= 1.0 - t;
        }
        (*iters)++;
        if (tc <= tj) { /* a member of C leaves; X follows the factor */
            drop_at(ws, block, ws->X, b);
        } else { /* a block pair's multiplier reached 0: it leaves the block */
            ws->lamJ[jb] = 0.0;
            block_remove(ws, jb, b--);
        }
    }
    /* one pair left: GI's single step from where the block is */
    memcpy(ws->l, ws->X, (size_t)cs->k * sizeof *ws->l);
    return gi_add(ws, pb, ws->J[0], ws->wJ[0], ws->lamJ[0], 0, L_SOLVED, iters);
}

/* Order the violated pairs in ws->cand (candidates.h); returns how many
 * are ordered at the front. */
static int order_candidates(gi_rel_ws *ws, int nc, int want, const double *load)
{
    for (int c = 0; c < nc; c++) {
        int i = ws->cand[c];
        ws->keys[c] = (gs_cand){!(load && load[i] > 0.0), ws->w[i], i};
    }
    want = gs_cand_order_head(ws->keys, nc, want);
    for (int c = 0; c < want; c++)
        ws->cand[c] = ws->keys[c].i;
    return want;
}

/* Position of the most negative inequality multiplier on C, or -1. O(k). */
static int most_negative(const gi_rel_ws *ws, const gs_problem *pb)
{
    int worst = -1;
    for (int c = 0; c < ws->cs.k; c++)
        if (!gs_problem_is_eq(pb, ws->cs.idx[c]) && ws->lc[c] < 0.0 &&
            (worst < 0 || ws->lc[c] < ws->lc[worst]))
            worst = c;
    return worst;
}

/* Warm start, before any pair leaves: the pairs carrying a fastener load
 * that the multipliers of the warm set (ws->lc) leave penetrating join the
 * set (factor appends). A fastener the warm solution did not have (an
 * optimization step) is then carried by its own pairs, instead of its load
 * turning the forces of the contacts around it negative, each of them
 * dropped and taken back by GI one step at a time. Pairs the warm solution
 * left open stay out (a warm start from the same problem takes no step).
 * Returns the pairs appended. O(m + loaded pairs (k + k^2)). */
static int join_loaded(gi_rel_ws *ws, gs_solver *s, const gs_problem *pb)
{
    gs_cset *cs = &ws->cs;
    int joined = 0;
    for (int i = 0; i < s->m; i++) {
        if (!(pb->load[i] > 0.0) || cs->pos[i] >= 0 || gs_problem_is_eq(pb, i))
            continue;
        if (current_w(ws, s, i) >= -s->tol_w)
            continue;
        if (gs_cset_reserve(cs, cs->k + 1, NULL) != GS_OK)
            break;
        double sch = gs_cset_schur(cs, i, ws->l);
        if (!(sch > GS_CSET_DEP_TOL * cs->pc->qdiag[i]))
            continue; /* dependent on the set: GI decides about it */
        gs_cset_append(cs, i, ws->l, sch);
        ws->lc[cs->k - 1] = 0.0; /* the w of the next pairs: at the warm multipliers */
        joined++;
    }
    return joined;
}

/* Warm start: C = the previous contact set plus the equality pairs (with
 * the warm multipliers at hand, in decreasing order of them: the pairs that
 * leave, on this start and in GI's partial steps, are mostly those with the
 * smallest forces, and a removal at position c of k costs O((k - c)^2), so
 * at the end of the factor they leave cheaply; warm swaps of the lap joint
 * 10% faster than in pair order), its
 * factor carried over from this workspace's last solve and updated where
 * that is cheaper than one dpotrf (gs_cset_travel: a cloud solved in order,
 * or an optimization step, changes few pairs), lam_C = Q_CC^-1 p_C; with
 * loaded_first the penetrating loaded pairs join (join_loaded); then the
 * inequality pairs with a negative multiplier leave until lam_C >= 0: the
 * most negative alone when fewer than GI_WARM_BLOCK_DROP are negative, else
 * all of them at once (one travel), lam_C solved again after each. Cost per
 * round O(k^2) plus the removals. Returns pairs kept, or -1 if the set could
 * not be used. */
static int warm_start(gi_rel_ws *ws, gs_solver *s, const gs_problem *pb, const gs_warm *warm,
                      int n_eq, int loaded_first, int *iters)
{
    gs_cset *cs = &ws->cs;
    int k = 0;
    for (int i = 0; i < s->m; i++)
        if (gs_problem_is_eq(pb, i))
            ws->list[k++] = i;
    for (int c = 0; c < warm->n_act; c++) {
        int i = warm->act[c];
        if (!gs_problem_is_eq(pb, i) && !ws->listed[i]) {
            ws->listed[i] = 1; /* dedup */
            ws->list[k++] = i;
        }
    }
    for (int c = n_eq; c < k; c++)
        ws->listed[ws->list[c]] = 0;
    if (warm->lam) { /* strongest contacts first: the weak ones leave, cheaply (above) */
        for (int c = n_eq; c < k; c++) {
            const double l = warm->lam[ws->list[c]]; /* a non-finite one sorts as 0 */
            ws->keys[c - n_eq] = (gs_cand){0, isfinite(l) ? -l : 0.0, ws->list[c]};
        }
        qsort(ws->keys, (size_t)(k - n_eq), sizeof *ws->keys, gs_cand_cmp);
        for (int c = n_eq; c < k; c++)
            ws->list[c] = ws->keys[c - n_eq].i;
    }
    if (gs_cset_travel(cs, ws->list, k, s->fcache, NULL) != GS_OK)
        return -1;
    for (int pass = 0;; pass++) {
        for (int c = 0; c < cs->k; c++)
            ws->lc[c] = s->p[cs->idx[c]];
        gs_cset_solve(cs, ws->lc);
        if (pass == 0 && loaded_first && pb->load && join_loaded(ws, s, pb) > 0)
            continue;
        int worst = most_negative(ws, pb), neg = 0, kept = 0;
        if (worst < 0)
            return cs->k - n_eq;
        for (int c = 0; c < cs->k; c++) {
            if (!gs_problem_is_eq(pb, cs->idx[c]) && ws->lc[c] < 0.0)
                neg++;
            else
                ws->list[kept++] = cs->idx[c];
        }
        if (neg < GI_WARM_BLOCK_DROP) {
            drop_at(ws, worst, NULL, 0);
            (*iters)++;
            continue;
        }
        /* many negative: all leave at once (updates or one dpotrf, whichever
         * is cheaper), then solve again; GI takes back what was dropped
         * too eagerly */
        if (gs_cset_travel(cs, ws->list, kept, NULL, NULL) != GS_OK)
            return -1;
        *iters += neg;
    }
}

/* Polish: the refined solve on C with the zero rule (cset.h), so lam_C
 * stays the minimizer on the set; w refreshed. Returns the pairs dropped.
 * Uses ws->cand as scratch. O(m k + k^2) per round. */
static int polish(gi_rel_ws *ws, gs_solver *s, const gs_problem *pb)
{
    return gs_cset_settle(&ws->cs, pb, s->p, s->tol_lam, ws->lc, ws->r, ws->w, ws->cand);
}

/* The polish of a set whose w is current and shows no violation outside C
 * (the refresh that found nothing to add): as polish, but no refinement when
 * the residual on C is rounding, and no O(m k) refresh of w when the refined
 * multipliers provably cannot open a violation (gs_cset_settle_lazy).
 * *w_current: w is still Q[:, C] lc - p (the certificate's w). */
static int polish_lazy(gi_rel_ws *ws, gs_solver *s, const gs_problem *pb, int *w_current)
{
    return gs_cset_settle_lazy(&ws->cs, pb, s->p, s->tol_lam, s->tol_w, s->qdiag_max, ws->lc,
                               ws->r, ws->w, ws->cand, w_current);
}

gs_err gs_gi_relative_solve(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                            double *lam, gs_solve_info *info, gs_error *err)
{
    gi_rel_ws *ws = gs_solver_ws(s, GS_METHOD_GI, GS_FORM_RELATIVE, gi_rel_new, gi_rel_free, err);
    if (!ws)
        return GS_ERR_NOMEM;
    gs_cset *cs = &ws->cs;
    const int m = s->m, max_iter = gs_solver_max_iter(s, o);
    int iters = 0, n_eq = 0;
    info->status = GS_STATUS_OPTIMAL;
    gs_cpool_clear(&ws->pool); /* kept empty outside the add loop */

    /* 1. equality pairs, full signed steps (C holds only equality pairs) */
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(pb, i))
            n_eq++;
    int warm_kept = -1; /* cold: C starts empty; warm: C travels from the last solve */
    if (o->warm && o->warm->n_act > 0)
        warm_kept = warm_start(ws, s, pb, o->warm, n_eq, o->fasteners_first, &iters);
    if (warm_kept < 0) {
        gs_cset_clear(cs);
        for (int i = 0; i < m; i++)
            if (gs_problem_is_eq(pb, i)) {
                step_result sr = gi_add(ws, pb, i, current_w(ws, s, i), 0.0, 1, L_NONE, &iters);
                if (sr == STEP_NOMEM)
                    return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the active set");
                if (sr == STEP_DEPENDENT) {
                    info->status = GS_STATUS_INFEASIBLE_EQ;
                    goto out;
                }
            }
    } else {
        info->warm_used = 1;
        info->warm_kept = warm_kept;
    }

    /* 2. add violated pairs until none is left */
    /* w_fresh: the polish left w current, or proved it has no violation;
     * w_exact: w is Q[:, C] lc - p by a full product at the current lc */
    int polished = 0, stalls = 0, w_fresh = 0, w_exact = 0;
    for (;;) {
        if (!w_fresh) {
            gs_cset_residual(cs, ws->lc, s->p, ws->w);
            w_exact = 1;
        }
        w_fresh = 0;
        /* the violated pairs outside C, without a branch per pair (which
         * way it goes is as good as random: 3-4% of a solve at 10%) */
        int nc = 0;
        const double lim = -s->tol_w;
        for (int i = 0; i < m; i++) {
            ws->cand[nc] = i;
            nc += (cs->pos[i] < 0) & (ws->w[i] < lim);
        }
        if (nc == 0) {
            if (polished) {
                /* w at the returned multipliers: the certificate's (solver.c) */
                s->w_lam = w_exact ? ws->w : NULL;
                break;
            }
            polished = 1;
            if (polish_lazy(ws, s, pb, &w_exact) > 0)
                polished = 0;
            w_fresh = 1;
            continue;
        }
        polished = 0;
        w_exact = 0; /* pairs are added below */
        /* the pool: the most violated pairs of this refresh, their w kept
         * exact; each addition takes the pairs most violated now, several
         * at once when k is large (cpool.h, gi_add_block) */
        const double *load = o->fasteners_first ? pb->load : NULL;
        nc = order_candidates(ws, nc, GI_POOL_MIN + cs->k / GI_POOL_PER, load);
        if (gs_cpool_fill(&ws->pool, cs, ws->cand, nc) != GS_OK)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the candidate pool");
        int taken = 0;
        for (;;) {
            int bmax = GI_BLOCK_MIN + cs->k / GI_BLOCK_PER;
            if (bmax > GI_BLOCK_MAX)
                bmax = GI_BLOCK_MAX;
            if (bmax > max_iter - iters) /* a block counts as b steps */
                bmax = max_iter - iters > 1 ? max_iter - iters : 1;
            const int b =
                gs_cpool_pick(&ws->pool, cs, ws->lc, s->p, load, s->tol_w, ws->slots, bmax);
            if (b == 0)
                break;
            /* one pair: its column straight into ws->l, GI's own step */
            gs_cpool_take(&ws->pool, ws->slots, b, cs->k, ws->J, ws->wJ, b == 1 ? ws->l : ws->X,
                          (size_t)m);
            const step_result sr =
                b == 1 ? gi_add(ws, pb, ws->J[0], ws->wJ[0], 0.0, 0, L_COLUMN, &iters)
                       : gi_add_block(ws, pb, b, &iters);
            taken += b;
            if (sr == STEP_NOMEM)
                return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the active set");
            if (sr == STEP_INFEASIBLE) {
                gs_gi_farkas_ray(m, cs->k, cs->idx, ws->r, ws->ray_j, pb, lam);
                info->status = GS_STATUS_INFEASIBLE;
                info->iterations = iters;
                gs_cpool_clear(&ws->pool);
                return GS_OK;
            }
            if (sr == STEP_DEPENDENT) {
                info->status = GS_STATUS_NUMERICAL;
                goto out;
            }
            if ((info->status = gs_solve_stop(o, iters, max_iter)) != GS_STATUS_OPTIMAL)
                goto out;
        }
        gs_cpool_clear(&ws->pool);
        /* progress guard: listed by the dgemv but none violated on the exact
         * re-check (both within round-off of -tol_w): a candidate optimum */
        if (taken == 0) {
            const int removed = polish(ws, s, pb); /* w made for the settled set */
            w_exact = 1;
            if (removed == 0 && ++stalls >= 2) {
                s->w_lam = ws->w;
                break;
            }
            polished = 1;
            w_fresh = 1;
        }
    }
out:
    gs_cpool_clear(&ws->pool);
    memset(lam, 0, (size_t)m * sizeof *lam);
    for (int c = 0; c < cs->k; c++)
        lam[cs->idx[c]] = ws->lc[c];
    info->iterations = iters;
    return GS_OK;
}

gs_err gs_gi_relative_finish(gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                             const int *act, int k, const double *lam_warm, double *lam,
                             gs_solve_info *info, int *iters, gs_error *err)
{
    const gs_warm warm = {.n_act = k, .act = act, .lam = lam_warm};
    gs_solve_opts ow = *o;
    ow.warm = &warm;
    gs_solve_info gi = {0};
    gs_err rc = gs_gi_relative_solve(s, pb, &ow, lam, &gi, err);
    if (rc != GS_OK)
        return rc;
    info->status = gi.status;
    info->crossover = 1;
    *iters += gi.iterations;
    return GS_OK;
}
