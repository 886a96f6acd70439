/*
 * gi_relative.c -- Goldfarb-Idnani dual active set (Powell's variant) on the
 * relative formulation (3):  min 1/2 u'K~u - f~'u  s.t.  u <= g,  K~ = Q^-1.
 *
 * Method. GI starts at the unconstrained minimum u = u0 (no contact: lam = 0,
 * residual gaps w = -p) and adds one violated constraint u_j <= g_j at a time
 * (a pair with w_j < 0 that closes into contact), keeping every iterate
 * optimal on its active set and dual feasible (lam >= 0). Its multipliers are
 * the contact forces. Written in the dual variables, with C the active set:
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
 * Residual gaps of the pairs outside C are refreshed lazily: one dgemv
 * w = Q[:, C] lam_C - p gives the list of violated pairs, which are then
 * taken in order (pairs with a load first, then most violated); before each
 * is added its current w_j is recomputed exactly from row j of Q_C in O(k).
 * When the list is exhausted w is refreshed; no violation left = optimal.
 * Reference: D. Goldfarb, A. Idnani, Math. Prog. 27 (1983) 1-33;
 * M.J.D. Powell, Math. Prog. Study 25 (1985) 46-61; Stefanova et al. (2020).
 * Invariants: cs holds C and L with L L' = Q_CC; lc[c] = lam of the pair at
 * position c, >= 0 for inequality pairs; lam_j of the pair being added is
 * kept apart until its full step.
 * Cost (k = |C| at the end, m pairs): per GI step O(k^2) (two triangular
 * solves, linalg.h's; one after a partial step, whose removal carries l),
 * per candidate check O(k), per refresh O(m k) (gs_cols_mul); a refresh
 * follows every 16 + k/4 additions, so in total about O(steps k^2 + steps/
 * (16 + k/4) m k). Measured on the 5,206-unknown lap joint: 1.12 / 6.2 /
 * 10.3 ms per gap at 10 / 50 / 100% fasteners (n_act 77 / 282 / 380), about
 * 3 GI steps per final contact (docs/solvers.md).
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "cset.h"
#include "gi.h"
#include "linalg.h"

/* Warm start: with at least this many negative multipliers on the warm
 * set, they all leave at once (one travel) instead of the most negative
 * one at a time (a solve of O(k^2) after each). */
#ifndef GI_WARM_BLOCK_DROP
#define GI_WARM_BLOCK_DROP 4
#endif

typedef struct {
    gs_cset cs;
    double *lc;     /* m: multipliers in position order */
    double *l, *r;  /* m: L^-1 Q_Cj and Q_CC^-1 Q_Cj */
    double *w;      /* m: residual gaps at the last refresh */
    int *cand;      /* m: violated pairs to take in order */
    gs_cand *keys;  /* m: their sort keys */
    int *list;      /* m: warm start list */
    unsigned char *listed; /* m: warm start dedup, zero between calls */
} gi_rel_ws;

static void gi_rel_free(void *p)
{
    gi_rel_ws *ws = p;
    if (!ws)
        return;
    gs_cset_free(&ws->cs);
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
    if (!ws->lc || !ws->l || !ws->r || !ws->w || !ws->cand || !ws->list || !ws->keys || !ws->listed ||
        gs_cset_init(&ws->cs, s->pc, NULL) != GS_OK) {
        gi_rel_free(ws);
        return NULL;
    }
    return ws;
}

/* Remove position c from C and from lc; carry l (gs_cset_remove_carry) if
 * not NULL. */
static void drop_at(gi_rel_ws *ws, int c, double *l)
{
    gs_cset_remove_carry(&ws->cs, c, l);
    memmove(ws->lc + c, ws->lc + c + 1, (size_t)(ws->cs.k - c) * sizeof *ws->lc);
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

typedef enum { STEP_ADDED, STEP_DEPENDENT, STEP_NOMEM } step_result;

/* Bring pair j (residual gap wj) into C by GI steps: partial steps drop
 * blocking pairs, the full step appends j. eq: equality pair (signed step,
 * never blocked by its own sign). Counts steps in *iters. */
static step_result gi_add(gi_rel_ws *ws, const gs_problem *pb, int j, double wj, int eq,
                          int *iters)
{
    gs_cset *cs = &ws->cs;
    const double qjj = cs->pc->qdiag[j];
    double lamj = 0.0;
    if (gs_cset_reserve(cs, cs->k + 1, NULL) != GS_OK)
        return STEP_NOMEM;
    int carried = 0; /* ws->l carried through the last drop: no new solve */
    for (;;) {
        const int k = cs->k;
        double sch = carried ? qjj - (k ? cblas_ddot(k, ws->l, 1, ws->l, 1) : 0.0)
                            : gs_cset_schur(cs, j, ws->l);
        memcpy(ws->r, ws->l, (size_t)k * sizeof *ws->r);
        gs_cset_solve_Lt(cs, ws->r);
        int dependent = !(sch > GS_CSET_DEP_TOL * qjj);
        double tfull = dependent ? INFINITY : -wj / sch;
        double dir = tfull < 0 ? -1.0 : 1.0;
        /* ratio test over the inequality pairs of C: lam_i - t r_i >= 0 */
        double tpart;
        int block = gs_gi_ratio_test(k, ws->lc, ws->r, dir, cs->idx, pb, &tpart);
        if (dependent && block < 0)
            return STEP_DEPENDENT;
        (*iters)++;
        if (fabs(tfull) <= tpart) { /* full step: j joins C */
            double t = tfull;
            for (int c = 0; c < k; c++)
                ws->lc[c] -= t * ws->r[c];
            lamj += t;
            gs_cset_append(cs, j, ws->l, sch);
            /* an inequality multiplier cannot be negative after a full step
             * except by round-off on a degenerate one */
            ws->lc[k] = (!eq && lamj < 0.0) ? 0.0 : lamj;
            return STEP_ADDED;
        }
        /* partial step: the blocking pair leaves C */
        double t = dir * tpart;
        for (int c = 0; c < k; c++)
            ws->lc[c] -= t * ws->r[c];
        lamj += t;
        wj += t * sch;
        drop_at(ws, block, ws->l);
        carried = 1;
        /* lam_j != 0 while j is still outside C; w_j was advanced with the
         * step; l was carried to the smaller set, the next pass computes s
         * and r from it */
    }
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

/* Warm start: C = the previous contact set plus the equality pairs, its
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
    if (gs_cset_travel(cs, ws->list, k, NULL) != GS_OK)
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
            drop_at(ws, worst, NULL);
            (*iters)++;
            continue;
        }
        /* many negative: all leave at once (updates or one dpotrf, whichever
         * is cheaper), then solve again; GI takes back what was dropped
         * too eagerly */
        if (gs_cset_travel(cs, ws->list, kept, NULL) != GS_OK)
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
 * (the refresh that found nothing to add): as polish, but the O(m k)
 * refresh of w is skipped when the refined multipliers provably cannot open
 * a violation (gs_cset_settle_lazy): one product less per solve. */
static int polish_lazy(gi_rel_ws *ws, gs_solver *s, const gs_problem *pb)
{
    return gs_cset_settle_lazy(&ws->cs, pb, s->p, s->tol_lam, s->tol_w, s->qdiag_max, ws->lc,
                               ws->r, ws->w, ws->cand);
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
                step_result sr = gi_add(ws, pb, i, current_w(ws, s, i), 1, &iters);
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
    /* w_fresh: the polish left w current, or proved it has no violation */
    int polished = 0, stalls = 0, w_fresh = 0;
    for (;;) {
        if (!w_fresh)
            gs_cset_residual(cs, ws->lc, s->p, ws->w);
        w_fresh = 0;
        int nc = 0;
        for (int i = 0; i < m; i++)
            if (cs->pos[i] < 0 && ws->w[i] < -s->tol_w)
                ws->cand[nc++] = i;
        if (nc == 0) {
            if (polished)
                break;
            polished = 1;
            if (polish_lazy(ws, s, pb) > 0)
                polished = 0;
            w_fresh = 1;
            continue;
        }
        polished = 0;
        const int batch = gs_cand_batch(cs->k);
        int taken = 0;
        nc = order_candidates(ws, nc, 4 * batch, o->fasteners_first ? pb->load : NULL);
        for (int c = 0; c < nc && taken < batch; c++) {
            int j = ws->cand[c];
            double wj = current_w(ws, s, j);
            if (wj >= -s->tol_w)
                continue;
            step_result sr = gi_add(ws, pb, j, wj, 0, &iters);
            taken++;
            if (sr == STEP_NOMEM)
                return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the active set");
            if (sr == STEP_DEPENDENT) {
                info->status = GS_STATUS_NUMERICAL;
                goto out;
            }
            if ((info->status = gs_solve_stop(o, iters, max_iter)) != GS_STATUS_OPTIMAL)
                goto out;
        }
        /* progress guard: listed by the dgemv but none violated on the exact
         * re-check (both within round-off of -tol_w): a candidate optimum */
        if (taken == 0) {
            if (polish(ws, s, pb) == 0 && ++stalls >= 2)
                break;
            polished = 1;
            w_fresh = 1;
        }
    }
out:
    memset(lam, 0, (size_t)m * sizeof *lam);
    for (int c = 0; c < cs->k; c++)
        lam[cs->idx[c]] = ws->lc[c];
    info->iterations = iters;
    return GS_OK;
}
