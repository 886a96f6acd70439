/* refsolve.c -- Lawson-Hanson active set on the dual: the test oracle. */
#include "refsolve.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kkt.h"
#include "linalg.h"

typedef struct {
    const gs_precomp *pc;
    int m, k, cap;     /* |C|, capacity of L */
    int *C;            /* members of the contact set, in factor order */
    int *pos;          /* pos[i] = index in C or -1 */
    double *L;         /* cap x cap, lower factor of Q_CC (leading k x k) */
    double *col;       /* scratch of cap */
} ref_set;

static double qv(const gs_precomp *pc, int i, int j)
{
    return pc->Q[(size_t)j * pc->m + i];
}

static int set_grow(ref_set *s)
{
    int ncap = s->cap ? 2 * s->cap : 64;
    if (ncap > s->m)
        ncap = s->m;
    double *L = calloc((size_t)ncap * ncap, sizeof *L);
    double *col = malloc((size_t)ncap * sizeof *col);
    if (!L || !col) {
        free(L);
        free(col);
        return -1;
    }
    for (int j = 0; j < s->k; j++)
        memcpy(L + (size_t)j * ncap, s->L + (size_t)j * s->cap, (size_t)s->k * sizeof *L);
    free(s->L);
    free(s->col);
    s->L = L;
    s->col = col;
    s->cap = ncap;
    return 0;
}

/* Append pair j to C: row k of L from L l = Q_Cj, O(k^2). Returns 1 if the
 * new pivot is numerically zero (j dependent on C: not added), -1 no memory. */
static int set_append(ref_set *s, int j)
{
    if (s->k == s->cap && set_grow(s) != 0)
        return -1;
    const int k = s->k, ld = s->cap;
    for (int c = 0; c < k; c++)
        s->col[c] = qv(s->pc, s->C[c], j);
    if (k > 0)
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, k, s->L, ld, s->col, 1);
    double d2 = qv(s->pc, j, j) - (k > 0 ? cblas_ddot(k, s->col, 1, s->col, 1) : 0.0);
    if (!(d2 > 1e-13 * qv(s->pc, j, j)))
        return 1;
    for (int c = 0; c < k; c++)
        s->L[k + (size_t)c * ld] = s->col[c];
    s->L[k + (size_t)k * ld] = sqrt(d2);
    s->C[k] = j;
    s->pos[j] = k;
    s->k++;
    return 0;
}

/* Rebuild L from scratch for the current C: O(k^3). */
static gs_err set_refactor(ref_set *s, gs_error *err)
{
    const int k = s->k, ld = s->cap;
    for (int b = 0; b < k; b++)
        for (int a = b; a < k; a++)
            s->L[a + (size_t)b * ld] = qv(s->pc, s->C[a], s->C[b]);
    return gs_chol(s->L, k, ld, "Q_CC", err);
}

/* z_C = Q_CC^-1 p_C (z indexed by position in C). O(k^2). */
static void set_solve(const ref_set *s, const double *p, double *z)
{
    for (int c = 0; c < s->k; c++)
        z[c] = p[s->C[c]];
    if (s->k == 0)
        return;
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, s->k, s->L, s->cap, z, 1);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, s->k, s->L, s->cap, z, 1);
}

/* Remove the members flagged in drop[] (by position), keeping order. */
static void set_remove(ref_set *s, const unsigned char *drop)
{
    int k2 = 0;
    for (int c = 0; c < s->k; c++) {
        int i = s->C[c];
        if (drop[c]) {
            s->pos[i] = -1;
            continue;
        }
        s->C[k2] = i;
        s->pos[i] = k2++;
    }
    s->k = k2;
}

/* w = Q lam - p using the columns of C only: O(m k). */
static void residual(const ref_set *s, const double *lam, const double *p, double *w)
{
    const int m = s->m;
    for (int i = 0; i < m; i++)
        w[i] = -p[i];
    for (int c = 0; c < s->k; c++)
        cblas_daxpy(m, lam[s->C[c]], s->pc->Q + (size_t)s->C[c] * m, 1, w, 1);
}

/* The final check of a candidate optimum, on the residual gaps the
 * certificate will see (gs_kkt_residual, not the iteration's daxpys): every
 * inequality pair, those in C too, w_i >= -tol and lam_i >= 0, every
 * equality pair |w_i| <= tol. Nearly dependent pairs with contradicting
 * gaps give multipliers ~1e12 N whose w is rounding noise ~1e-4 mm, which
 * the daxpys showed >= -tol by chance (the oracle said optimal, the
 * certificate failed by 8.7e-5 mm). 1 if it holds. */
static int optimum_holds(const gs_problem *pb, const double *lam, const double *p, double tol,
                         double *w)
{
    const int m = pb->pc->m;
    gs_kkt_residual(pb->pc, p, lam, w);
    for (int i = 0; i < m; i++) {
        if (gs_problem_is_eq(pb, i) ? !(fabs(w[i]) <= tol) : !(w[i] >= -tol))
            return 0;
        if (!gs_problem_is_eq(pb, i) && lam[i] < 0.0)
            return 0;
    }
    return 1;
}

/* Where the check fails on huge multipliers, their direction may prove the
 * gaps contradictory (Farkas; docs/solvers.md "Gaps that contradict"): d =
 * lam / max |lam_i| into d (m), tested as the solve layer tests a method's
 * proof (gs_kkt_farkas, with GI's dependence tolerance REF_DEP_TOL). 1 if
 * it holds. work: m. O(m |S|). */
#define REF_DEP_TOL 1e-12
static int farkas_from_direction(const gs_problem *pb, const double *lam, double tol, double *d,
                                 double *work)
{
    const int m = pb->pc->m;
    double big = 0.0;
    for (int i = 0; i < m; i++)
        big = fmax(big, fabs(lam[i]));
    if (!(big > 0.0) || !isfinite(big))
        return 0;
    for (int i = 0; i < m; i++)
        d[i] = lam[i] / big;
    return gs_kkt_farkas(pb, d, REF_DEP_TOL, tol, work);
}

void gs_ref_default_opts(gs_ref_opts *o)
{
    o->tol = 1e-11;
    o->max_iter = 0; /* 0: 4 m + 100 */
}

/* Refined multipliers on the current C: fresh factor of Q_CC, z = Q_CC^-1
 * p_C, one step of iterative refinement, into lam. O(k^3 + k^2). */
static gs_err solve_refined(ref_set *s, const double *p, double *lam, double *z, double *r,
                            gs_error *err)
{
    gs_err e = set_refactor(s, err);
    if (e != GS_OK)
        return e;
    set_solve(s, p, z);
    /* r = p_C - Q_CC z */
    for (int a = 0; a < s->k; a++) {
        double acc = p[s->C[a]];
        for (int b = 0; b < s->k; b++)
            acc -= qv(s->pc, s->C[a], s->C[b]) * z[b];
        r[s->C[a]] = acc;
    }
    double *dz = r + s->m; /* second half of the scratch */
    set_solve(s, r, dz);
    for (int c = 0; c < s->k; c++)
        lam[s->C[c]] = z[c] + dz[c];
    return GS_OK;
}

/* Polish with the zero rule: refined multipliers on C; while an inequality
 * multiplier is negative, drop pairs and solve again: every negative one at
 * once when all lie in the zero band [-tol_lam, 0) (contacts that carry no
 * force to the accuracy of the answer; removing lam_i moves w_i by at most
 * |lam_i| Q_ii <= tol / 2), else the most negative alone. Dropped pairs are
 * blocked from re-entering until the next full step (their w_i is >= 0 up
 * to round-off after the drop). Returns the pairs dropped, or -1 on a
 * factorization failure (err set). O(k^3) per round. */
static int polish(ref_set *s, const gs_problem *pb, const double *p, double tol_lam, double *lam,
                  double *z, double *r, unsigned char *drop, unsigned char *blocked,
                  gs_error *err)
{
    int dropped = 0;
    for (;;) {
        if (solve_refined(s, p, lam, z, r, err) != GS_OK)
            return -1;
        int worst = -1, outside = 0;
        for (int c = 0; c < s->k; c++) {
            int i = s->C[c];
            if (gs_problem_is_eq(pb, i) || !(lam[i] < 0.0))
                continue;
            if (lam[i] < -tol_lam)
                outside = 1;
            if (worst < 0 || lam[i] < lam[s->C[worst]])
                worst = c;
        }
        if (worst < 0)
            return dropped;
        memset(drop, 0, (size_t)s->k);
        for (int c = 0; c < s->k; c++) {
            int i = s->C[c];
            if (c == worst || (!outside && !gs_problem_is_eq(pb, i) && lam[i] < 0.0)) {
                drop[c] = 1;
                lam[i] = 0.0;
                blocked[i] = 1;
                dropped++;
            }
        }
        set_remove(s, drop);
    }
}

/* The entering pair: the most violated unblocked pair outside C (w_j <
 * -tol), or under Bland's rule the violated one of smallest index. -1 if
 * none. O(m). */
static int pick_entering(const ref_set *s, const double *w, const unsigned char *blocked,
                         double tol, int bland)
{
    int j = -1;
    double wmin = -tol;
    for (int i = 0; i < s->m; i++)
        if (s->pos[i] < 0 && !blocked[i] && w[i] < wmin) {
            if (bland)
                return i;
            wmin = w[i];
            j = i;
        }
    return j;
}

/* Zobrist key of pair i: the hash of a set is the XOR of its members' keys,
 * updated in O(1) per entering or leaving pair. */
static uint64_t pair_key(int i)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t set_hash(const ref_set *s)
{
    uint64_t h = 0;
    for (int c = 0; c < s->k; c++)
        h ^= pair_key(s->C[c]);
    return h;
}

/* Sets reached after full steps, an open-addressing table of hashes (0 is
 * the empty slot; the empty set's hash 0 is never stored). In exact
 * arithmetic they never repeat (the objective strictly decreases); a repeat
 * is a cycle made by round-off. Returns 1 if h was already there. */
typedef struct {
    uint64_t *slot;
    size_t mask;
    size_t n;
} set_seen;

static int seen_insert(set_seen *t, uint64_t h)
{
    if (h == 0)
        return 0;
    if (2 * (t->n + 1) > t->mask + 1) { /* keep the load under 1/2 */
        size_t cap = (t->mask + 1) * 2;
        uint64_t *ns = calloc(cap, sizeof *ns);
        if (!ns)
            return 0; /* without memory: no detection (max_iter still bounds) */
        for (size_t a = 0; a <= t->mask; a++)
            if (t->slot[a]) {
                size_t b = t->slot[a] & (cap - 1);
                while (ns[b])
                    b = (b + 1) & (cap - 1);
                ns[b] = t->slot[a];
            }
        free(t->slot);
        t->slot = ns;
        t->mask = cap - 1;
    }
    size_t a = h & t->mask;
    while (t->slot[a]) {
        if (t->slot[a] == h)
            return 1;
        a = (a + 1) & t->mask;
    }
    t->slot[a] = h;
    t->n++;
    return 0;
}

gs_err gs_ref_solve(const gs_problem *pb, const gs_ref_opts *opt, double *lam, double *w_out,
                    gs_ref_info *info, gs_error *err)
{
    const gs_precomp *pc = pb->pc;
    const int m = pc->m;
    gs_ref_opts o;
    if (opt)
        o = *opt;
    else
        gs_ref_default_opts(&o);
    int max_iter = o.max_iter > 0 ? o.max_iter : 4 * m + 100;
    memset(info, 0, sizeof *info);
    info->status = GS_STATUS_NOT_RUN;
    gs_err rc = gs_problem_check(pb, err);
    if (rc != GS_OK)
        return rc;
    double t0 = gs_now();

    ref_set s = {.pc = pc, .m = m};
    set_seen seen = {.slot = calloc(64, sizeof(uint64_t)), .mask = 63};
    double *p = malloc((size_t)m * sizeof *p), *w = malloc((size_t)m * sizeof *w);
    double *z = malloc((size_t)m * sizeof *z), *scratch = malloc(2 * (size_t)m * sizeof *scratch);
    unsigned char *blocked = calloc((size_t)m, 1), *drop = calloc((size_t)m, 1);
    s.C = malloc((size_t)m * sizeof *s.C);
    s.pos = malloc((size_t)m * sizeof *s.pos);
    if (!p || !w || !z || !scratch || !blocked || !drop || !s.C || !s.pos || !seen.slot) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the reference solver");
        goto done;
    }
    for (int i = 0; i < m; i++)
        s.pos[i] = -1;
    memset(lam, 0, (size_t)m * sizeof *lam);
    gs_problem_dual_data(pb, p, NULL, w);
    /* Optimality tolerance in mm: relative to the gaps, not to p (p holds
     * the free deflection under the fastener loads, which can be thousands
     * of mm), with a floor at the round-off of w = Q lam - p. The zero rule
     * for multipliers follows from it: a force below tol_lam moves no gap by
     * more than tol / 2. */
    double pmax = 0.0, gmax = 0.0, qmax = 0.0;
    for (int i = 0; i < m; i++) {
        pmax = fmax(pmax, fabs(p[i]));
        gmax = fmax(gmax, fabs(pb->g[i]));
        qmax = fmax(qmax, qv(pc, i, i));
    }
    const double tol = fmax(o.tol * fmax(1.0, gmax), 64.0 * DBL_EPSILON * pmax);
    const double tol_lam = 0.5 * tol / fmax(qmax, DBL_MIN);

    /* equality pairs enter first and never leave */
    for (int i = 0; i < m; i++)
        if (gs_problem_is_eq(pb, i)) {
            int a = set_append(&s, i);
            if (a < 0) {
                rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
                goto done;
            }
            if (a > 0) {
                info->status = GS_STATUS_INFEASIBLE_EQ;
                goto done;
            }
        }
    set_solve(&s, p, z);
    for (int c = 0; c < s.k; c++)
        lam[s.C[c]] = z[c];

    info->status = GS_STATUS_MAX_ITER;
    int steps = 0, polished = 0, bland = 0;
    while (steps < max_iter) {
        residual(&s, lam, p, w);
        int j = pick_entering(&s, w, blocked, tol, bland);
        if (j < 0) {
            if (polished) {
                info->status = GS_STATUS_OPTIMAL;
                break;
            }
            /* candidate optimum: polish on the final C, then check again */
            int d = polish(&s, pb, p, tol_lam, lam, z, scratch, drop, blocked, err);
            if (d < 0) {
                info->status = GS_STATUS_NUMERICAL;
                rc = GS_OK;
                goto done;
            }
            info->drops += d;
            polished = 1;
            steps++;
            continue; /* recheck w with the polished multipliers */
        }
        polished = 0;
        int a = set_append(&s, j);
        if (a < 0) {
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
            goto done;
        }
        if (a > 0) { /* numerically dependent on C: never pick it again here */
            blocked[j] = 1;
            continue;
        }
        info->iterations++;
        steps++;
        /* inner loop: keep the multipliers of C \ E positive. Ratio-test ties
         * go to the first member (in factor order) normally, to the smallest
         * pair index under Bland's rule. */
        for (;;) {
            set_solve(&s, p, z);
            double alpha = 1.0;
            int worst = -1;
            for (int c = 0; c < s.k; c++) {
                int i = s.C[c];
                if (gs_problem_is_eq(pb, i) || z[c] > 0.0)
                    continue;
                double t = lam[i] / (lam[i] - z[c]);
                if (worst < 0 || t < alpha || (bland && t == alpha && i < s.C[worst])) {
                    alpha = t;
                    worst = c;
                }
            }
            if (worst < 0) {
                for (int c = 0; c < s.k; c++)
                    lam[s.C[c]] = z[c];
                /* a full step: a new set clears the blocks; a set seen
                 * before is a round-off cycle, broken by Bland's rule */
                if (seen_insert(&seen, set_hash(&s)))
                    bland = 1;
                else
                    memset(blocked, 0, (size_t)m);
                break;
            }
            if (j >= 0 && s.C[worst] == j && lam[j] == 0.0) {
                /* the pair just added would leave at once (round-off): undo */
                memset(drop, 0, (size_t)s.k);
                drop[worst] = 1;
                set_remove(&s, drop);
                blocked[j] = 1;
                if ((rc = set_refactor(&s, err)) != GS_OK) {
                    info->status = GS_STATUS_NUMERICAL;
                    rc = GS_OK;
                    goto done;
                }
                break;
            }
            memset(drop, 0, (size_t)s.k);
            for (int c = 0; c < s.k; c++) {
                int i = s.C[c];
                lam[i] += alpha * (z[c] - lam[i]);
                if (!gs_problem_is_eq(pb, i) && (c == worst || lam[i] <= 0.0)) {
                    lam[i] = 0.0;
                    drop[c] = 1;
                    info->drops++;
                }
            }
            set_remove(&s, drop);
            if ((rc = set_refactor(&s, err)) != GS_OK) {
                info->status = GS_STATUS_NUMERICAL;
                rc = GS_OK;
                goto done;
            }
            if (++steps >= max_iter)
                break;
            j = -1;
        }
    }
    /* the iteration's own w says optimal (blocked pairs included); the
     * status stands only if the certificate's w says so too, to tol */
    if (info->status == GS_STATUS_OPTIMAL && !optimum_holds(pb, lam, p, tol, w)) {
        info->status = GS_STATUS_NUMERICAL;
        if (farkas_from_direction(pb, lam, tol, z, w)) { /* z: free once the loop ends */
            memcpy(lam, z, (size_t)m * sizeof *lam);
            info->status = GS_STATUS_INFEASIBLE;
        }
    }
    if (w_out)
        gs_kkt_residual(pc, p, lam, w_out);
done:
    info->n_act = s.k;
    info->time = gs_now() - t0;
    free(seen.slot);
    free(p);
    free(w);
    free(z);
    free(scratch);
    free(blocked);
    free(drop);
    free(s.C);
    free(s.pos);
    free(s.L);
    free(s.col);
    return rc;
}
