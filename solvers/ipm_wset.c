/*
 * ipm_wset.c -- the interior point method's dual form on a working set of
 * pairs (ipm_impl.h).
 *
 * The Mehrotra runs of the dual form work on a working set S of pairs: the
 * dual restricted to S (Q_SS, p_S; lambda = 0 elsewhere) is solved and
 * polished exactly; the pairs outside S that its answer leaves violated
 * (w_i < -tol_w, w from the polish's O(m k) product) join S, and the run is
 * repeated on the larger set, from the last answer (start_hint), until
 * none is.
 * The answer then satisfies the optimality conditions of the whole problem,
 * certified like every solve. Each run costs O(|S|^3/3) per iteration
 * instead of O(m^3/3): the contact set is a small part of m, and the pairs
 * it shields never enter. Joining: the most violated first, skipping pairs
 * whose column of Q is nearly that of a pair taken in the same round (they
 * are shielded by it, as neighbours are by a pair in contact), at least
 * IPM_WS_MIN_ADD and at most |S| per round; when the violated pairs are at
 * most half as many as S holds, all of them join (the shielding then only
 * costs rounds: lap joint 88 -> 47 ms at 50%, 280 -> 120 ms at 100%,
 * sandwich at 50% 2.9 -> 1.2 s); the first set is the fastened pairs, a
 * warm start's set, the loaded pairs (lap joint 6.9 / 53 / 155 -> 5.7 / 50 /
 * 106 ms at 10 / 50 / 100%, sandwich at 50 / 100% 1.36 / 3.35 -> 0.85 /
 * 2.0 s) and 64 more by the same choice on -p (the gaps at lambda = 0),
 * fewer when a warm start brought some. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ipm_impl.h"
#include "linalg.h"

#define IPM_WS_SHIELD 0.95
#define IPM_WS_MIN_ADD 64
/* A singular Q_SS (dependent pairs) is factored as Q_SS + delta diag(Q_SS),
 * delta from this up by factors of 100 (ws_system). */
#define IPM_WS_REG 1e-8
/* After this many rounds every pair joins (a safeguard: the run on all pairs
 * is the plain dual IPM). */
#define IPM_WS_MAX_ROUNDS 64

static int key_cmp(const void *a, const void *b)
{
    const ipm_key *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i); /* ties by index: the same set on every CPU */
}

static int int_cmp(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Pair i joins S unless it is there: 1 if it joined. O(1). */
static int ws_join(ipm_ws *ws, int i)
{
    if (ws->inS[i])
        return 0;
    ws->inS[i] = 1;
    ws->S[ws->ms++] = i;
    return 1;
}

/* Add to S up to cap of the n candidate pairs keys (by w, most violated
 * first), with shield: skipping pairs shielded by one taken in this call.
 * O(n log n) plus, with shield, O(m) per pair taken (its column of Q). */
static void ws_pick(ipm_ws *ws, const gs_precomp *pc, int n, int cap, int shield)
{
    const int m = pc->m;
    qsort(ws->keys, (size_t)n, sizeof *ws->keys, key_cmp);
    memset(ws->blk, 0, (size_t)m);
    for (int c = 0, added = 0; c < n && added < cap; c++) {
        const int j = ws->keys[c].i;
        if (ws->blk[j] || !ws_join(ws, j))
            continue;
        added++;
        if (!shield)
            continue;
        const double *qj = pc->Q + (size_t)j * m;
        const double t = IPM_WS_SHIELD * ws->sqd[j];
        for (int i = 0; i < m; i++)
            ws->blk[i] |= qj[i] > t * ws->sqd[i];
    }
}

/* The system of S (sorted here): Q_SS (lower triangle, ld |S|), its
 * diagonal, p_S and, for the split preconditioner and the infeasible start,
 * its Cholesky factor; every pair: the precomputation's own (gathered and
 * factored like a working set's while its L_Q is deferred and one is
 * needed: the dual form never waits for L_Q, gs_method_needs_lq); a
 * singular Q_SS (dependent pairs) factored regularized (y->singular). GS_OK,
 * or GS_ERR_NOMEM / GS_ERR_NOT_SPD (not even Q_SS + diag(Q_SS) factors: Q
 * not positive semidefinite). O(|S|^2) gather, O(|S|^3/3) factor (a few
 * times when singular). */
static gs_err ws_system(ipm_ws *ws, gs_solver *s, const ipm_par *pr, ipm_sys *y, gs_error *err)
{
    const gs_precomp *pc = s->pc;
    const int m = s->m, k = ws->ms;
    const int factor = pr->lin == GS_IPM_PCG_SPLIT || pr->st == GS_IPM_START_INFEASIBLE;
    if (k == m && (!factor || gs_precomp_has_lq(pc))) {
        *y = ipm_sys_all(s);
        return GS_OK;
    }
    qsort(ws->S, (size_t)k, sizeof *ws->S, int_cmp);
    if (k > ws->cap) {
        const int cap = k > 2 * ws->cap ? k : (2 * ws->cap > m ? m : 2 * ws->cap);
        const size_t kk = gs_mul_size((size_t)cap, (size_t)cap);
        double *Qs = realloc(ws->Qs, gs_mul_size(kk, sizeof *Qs));
        if (Qs)
            ws->Qs = Qs;
        double *qds = Qs ? realloc(ws->qds, (size_t)cap * sizeof *qds) : NULL;
        if (qds)
            ws->qds = qds;
        double *ps = qds ? realloc(ws->ps, (size_t)cap * sizeof *ps) : NULL;
        if (!ps)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a working set of %d pairs",
                             k);
        ws->ps = ps;
        ws->cap = cap;
    }
    for (int b = 0; b < k; b++) {
        const double *qb = pc->Q + (size_t)ws->S[b] * m;
        double *sb = ws->Qs + (size_t)b * k;
        for (int a = b; a < k; a++)
            sb[a] = qb[ws->S[a]];
        ws->qds[b] = pc->qdiag[ws->S[b]];
        ws->ps[b] = s->p[ws->S[b]];
    }
    *y = (ipm_sys){.m = k, .Q = ws->Qs, .LQ = NULL, .qd = ws->qds, .p = ws->ps, .idx = ws->S};
    if (factor) {
        if (k > ws->lcap) {
            double *LQs = realloc(ws->LQs, gs_mul_size(gs_mul_size((size_t)ws->cap,
                                                                   (size_t)ws->cap),
                                                       sizeof *LQs));
            if (!LQs)
                return gs_errorf(err, GS_ERR_NOMEM, "",
                                 "no memory for the factor of a working set of %d pairs", k);
            ws->LQs = LQs;
            ws->lcap = ws->cap;
        }
        /* Q_SS is singular when S holds dependent pairs (a loop of parts:
         * the pairs' columns of A sum to zero; gapsim-batch solves such
         * models with L_Q deferred). Its factor only makes a starting guess
         * (the infeasible start's |Q^-1 p|) and a preconditioner, so then
         * Q_SS + delta diag(Q_SS) is factored instead, delta from
         * IPM_WS_REG up by factors of 100: H and every residual stay
         * exact; the run then starts feasible (ipm_sys.singular). */
        gs_error e2;
        for (double delta = 0.0;; delta = delta > 0.0 ? 100.0 * delta : IPM_WS_REG) {
            for (int c = 0; delta > 0.0 && c < k; c++)
                ws->cp[c] = delta * ws->qds[c];
            if (gs_chol_plus_diag(ws->LQs, k, ws->Qs, k, delta > 0.0 ? ws->cp : NULL, "Q_SS",
                                  &e2) == GS_OK)
                break;
            y->singular = 1;
            if (delta >= 1.0)
                return gs_errorf(err, GS_ERR_NOT_SPD, "Q_SS",
                                 "the working set's Q_SS is not positive semidefinite");
        }
        y->LQ = ws->LQs;
    }
    return GS_OK;
}

/* ws->wr on S's pairs = Q_SS lam_S - p_S for a warm start's multipliers
 * (pair-indexed, m), their residual gaps on the working set alone (the
 * start needs no more). 1, or 0 when the multipliers are unusable (then the
 * first run starts as a cold one, on the warm set): a value not finite, or
 * a multiplier or residual gap out of all proportion to the data, |lam_i|
 * Q_ii or |w_i| above IPM_WARM_MAX times the gap scale pr->ysc. Such a
 * start (a warm lam scaled by 1e50 gave mu ~ 1e100, overflow at the first
 * iteration; by 1e20, 28 IPM iterations instead of 3) is no warm start.
 * O(|S|^2). */
#define IPM_WARM_MAX 1e3
static int warm_residual(ipm_ws *ws, const ipm_sys *y, const ipm_par *pr, const double *lam)
{
    const double lim = IPM_WARM_MAX * pr->ysc;
    for (int c = 0; c < y->m; c++) {
        ws->cz[c] = lam[ipm_sys_pair(y, c)];
        if (!(fabs(ws->cz[c]) * y->qd[c] <= lim))
            return 0; /* NaN too */
    }
    cblas_dsymv(CblasColMajor, CblasLower, y->m, 1.0, y->Q, y->m, ws->cz, 1, 0.0, ws->cq, 1);
    for (int c = 0; c < y->m; c++) {
        ws->wr[ipm_sys_pair(y, c)] = ws->cq[c] - y->p[c];
        if (!(fabs(ws->cq[c] - y->p[c]) <= lim))
            return 0;
    }
    return 1;
}

gs_err ipm_working_set(ipm_ws *ws, gs_solver *s, const gs_problem *pb, const gs_solve_opts *o,
                   const ipm_par *pr, double *lam_out, gs_solve_info *info, gs_error *err)
{
    const gs_precomp *pc = s->pc;
    const int m = s->m;
    memset(ws->inS, 0, (size_t)m);
    ws->ms = 0;
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(pb, i))
            ws_join(ws, i);
    /* a warm start's contact set joins first (its pairs were validated) */
    const gs_warm *wm = o->warm;
    for (int c = 0; wm && c < wm->n_act; c++)
        info->warm_kept += ws_join(ws, wm->act[c]);
    info->warm_used = info->warm_kept > 0;
    /* the loaded pairs (installed fasteners pull them into contact, as GI
     * takes them first) */
    for (int i = 0; pb->load && i < m; i++)
        if (pb->load[i] > 0.0)
            ws_join(ws, i);
    int n = 0;
    for (int i = 0; i < m; i++)
        if (!ws->inS[i])
            ws->keys[n++] = (ipm_key){-s->p[i], i};
    if (info->warm_kept < IPM_WS_MIN_ADD)
        ws_pick(ws, pc, n, IPM_WS_MIN_ADD - info->warm_kept, 1);
    for (int round = 1;; round++) {
        ipm_sys y;
        gs_err e = ws_system(ws, s, pr, &y, err);
        if (e == GS_ERR_NOMEM)
            return e;
        if (e != GS_OK) {
            info->status = GS_STATUS_NUMERICAL;
            memset(lam_out, 0, (size_t)m * sizeof *lam_out);
            return GS_OK;
        }
        /* from the second run on: from the last answer (its lam_out and w);
         * the first from a warm start's multipliers, where given */
        ws->hint_lam = round > 1 ? lam_out : NULL;
        ws->hint_w = round > 1 ? ws->wr : NULL;
        if (round == 1 && info->warm_used && wm->lam && warm_residual(ws, &y, pr, wm->lam)) {
            ws->hint_lam = wm->lam;
            ws->hint_w = ws->wr;
        }
        const int solved = ipm_mehrotra(ws, s, pb, o, &y, pr, y.idx ? ws->inS : NULL, lam_out, info);
        ws->hint_lam = ws->hint_w = NULL;
        if (!solved || !y.idx)
            return GS_OK; /* stopped (info->status says why), or solved on every pair */
        n = 0;
        for (int i = 0; i < m; i++) {
            if (!isfinite(ws->wr[i])) {
                info->status = GS_STATUS_NUMERICAL;
                return GS_OK;
            }
            if (!ws->inS[i] && ws->wr[i] < -s->tol_w)
                ws->keys[n++] = (ipm_key){ws->wr[i], i};
        }
        if (n == 0)
            return GS_OK; /* optimal on every pair */
        if (round < IPM_WS_MAX_ROUNDS) {
            /* few violated pairs left (at most half the set): all of them */
            const int few = 2 * n <= ws->ms;
            ws_pick(ws, pc, n, few ? n : ws->ms > IPM_WS_MIN_ADD ? ws->ms : IPM_WS_MIN_ADD, !few);
        } else {
            for (int i = 0; i < m; i++)
                ws_join(ws, i);
        }
    }
}

