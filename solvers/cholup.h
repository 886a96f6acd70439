/*
 * cholup.h -- private: the updatable Cholesky factor of a working-set
 * matrix S, the one implementation behind every active-set method: cset.c
 * (S = Q_CC read from pc->Q: GI relative, Lemke), gi_dual.c (S = M_AA,
 * M = Q^-1) and gi_primal.c (S = Q_CC assembled from columns computed in
 * x-space). The callers supply the entries of S; this file owns the factor.
 *
 * Invariant: L, the leading k x k block of a cap x cap column-major array, is
 * lower triangular with a positive diagonal and L L' = S in position order.
 * Costs: append O(k) given its row l = L^-1 S_Cj (gs_cholup_solve_L, O(k^2));
 * remove at position c O((k - c)^2): the trailing block absorbs column c by
 * plane rotations (LINPACK dchud-style rank-one update, every rotation
 * orthogonal: no hyperbolic downdate, no explicit inverse); solves O(k^2).
 * Capacity grows geometrically (never in the steady state of a solve).
 */
#ifndef GS_CHOLUP_H
#define GS_CHOLUP_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_error.h"
#include "linalg.h"

typedef struct {
    double *L;   /* cap x cap */
    double *x;   /* cap scratch of the removal */
    double *rot; /* 2 cap scratch: the removal's rotations */
    int k, cap;  /* order, capacity */
    int max;     /* largest order ever needed (capacity never exceeds it) */
} gs_cholup;

static inline void gs_cholup_free(gs_cholup *ch)
{
    free(ch->L);
    free(ch->x);
    free(ch->rot);
    memset(ch, 0, sizeof *ch);
}

/* Make room for order k_new (geometric growth, contents kept). */
static inline gs_err gs_cholup_reserve(gs_cholup *ch, int k_new, gs_error *err)
{
    if (k_new <= ch->cap)
        return GS_OK;
    /* capacity (the leading dimension of L) 2^j + 8: with a power-of-two
     * stride every column of L starts in the same cache sets, and the
     * triangular solves, which read several columns at once, ran 3-8% slower
     * at k >= 256 (docs/solvers.md) */
    int base = 64;
    while (base + 8 < k_new)
        base *= 2;
    int cap = base + 8;
    if (cap > ch->max)
        cap = ch->max > k_new ? ch->max : k_new;
    double *L = malloc((size_t)cap * cap * sizeof *L), *x = malloc((size_t)cap * sizeof *x);
    double *rot = malloc(2 * (size_t)cap * sizeof *rot);
    if (!L || !x || !rot) {
        free(L);
        free(x);
        free(rot);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a working-set factor of order %d",
                         cap);
    }
    for (int j = 0; j < ch->k; j++)
        memcpy(L + (size_t)j * cap, ch->L + (size_t)j * ch->cap, (size_t)ch->k * sizeof *L);
    free(ch->L);
    free(ch->x);
    free(ch->rot);
    ch->L = L;
    ch->x = x;
    ch->rot = rot;
    ch->cap = cap;
    return GS_OK;
}

/* z <- L^-1 z, z <- L^-T z (k entries; linalg.h's kernels, not BLAS). */
static inline void gs_cholup_solve_L(const gs_cholup *ch, double *z)
{
    gs_trsv_l(ch->k, ch->L, (size_t)ch->cap, z);
}

static inline void gs_cholup_solve_Lt(const gs_cholup *ch, double *z)
{
    gs_trsv_lt(ch->k, ch->L, (size_t)ch->cap, z);
}

/* Append a member: row k of L is l (k entries), diagonal d = sqrt(Schur
 * complement) > 0. Reserve first. */
static inline void gs_cholup_append(gs_cholup *ch, const double *l, double d)
{
    const int k = ch->k, ld = ch->cap;
    for (int c = 0; c < k; c++)
        ch->L[k + (size_t)c * ld] = l[c];
    ch->L[k + (size_t)k * ld] = d;
    ch->k = k + 1;
}

/* sqrt(a^2 + b^2) for a plane rotation: the plain formula where neither
 * square can overflow or underflow (|a|, |b| in [2^-480, 2^480] or 0, as
 * the factors of models in mm and N are), hypot (4-5x slower: a fifth of a
 * removal's time) otherwise. Both round to within an ulp; the same bits on every CPU
 * (no fused multiply-add in this baseline code). */
static inline double gs_cholup_norm2(double a, double b)
{
    const double lo = 0x1p-480, hi = 0x1p480, fa = fabs(a), fb = fabs(b);
    if (fa <= hi && fb <= hi && (fa >= lo || fa == 0.0) && (fb >= lo || fb == 0.0))
        return sqrt(a * a + b * b);
    return hypot(a, b);
}

/* Remove the member at position c: with L = [L11 0 0; l21' d 0; L31 l32 L33],
 * the factor of S without row/column c is [L11 0; L31 L33~] with
 * L33~ L33~' = L33 L33' + l32 l32' (one rotation per column of L33:
 * [L33 l32] G = [L33~ 0]).
 * The n vectors V[:, p] (leading dim ldv; n = 0: none) are carried along:
 * if L v = b on entry, then L~ v = b without entry c on return (k - 1
 * entries), which spares a triangular solve when a solve with the smaller
 * factor is needed next (GI's partial step, a block of pairs being added):
 * since [L33 l32] = [L33~ 0] G', the trailing part of v becomes the leading
 * part of G' [v3; v_c], the same rotations (recorded in ch->rot) applied to
 * the coefficients. O((k - c)^2) rotations, O(c (k - c)) moves, O(n (k -
 * c)) for the vectors. */
static inline void gs_cholup_remove_carry_n(gs_cholup *ch, int c, double *V, size_t ldv, int n)
{
    const int k = ch->k, ld = ch->cap, r = k - c - 1;
    double *L = ch->L, *x = ch->x, *rot = ch->rot;
    for (int i = 0; i < r; i++)
        x[i] = L[(c + 1 + i) + (size_t)c * ld];
    /* column q of L33 is rotated and written one column left and one row
     * up at once (row and column c leave): its destination, column c + q,
     * held column q - 1 of L33, already moved (q = 0: column c, copied to
     * x) */
    for (int q = 0; q < r; q++) {
        const double *col = L + (c + 1) + (size_t)(c + 1 + q) * ld; /* column q of L33 */
        double *dst = L + c + (size_t)(c + q) * ld;
        double a = col[q], b = x[q];
        if (b == 0.0) { /* nothing to rotate: recorded as the identity */
            for (int i = q; i < r; i++)
                dst[i] = col[i];
            rot[2 * q] = 1.0;
            rot[2 * q + 1] = 0.0;
            continue;
        }
        double rr = gs_cholup_norm2(a, b), cs = a / rr, sn = b / rr;
        dst[q] = rr;
        gs_rotate(r - q - 1, dst + q + 1, col + q + 1, x + q + 1, cs, sn);
        rot[2 * q] = cs;
        rot[2 * q + 1] = sn;
    }
    /* the leading columns lose row c: their rows below move up */
    for (int jn = 0; jn < c; jn++)
        for (int in = c; in < k - 1; in++)
            L[in + (size_t)jn * ld] = L[(in + 1) + (size_t)jn * ld];
    ch->k = k - 1;
    /* the coefficient of column q moves to position c + q, rotated with the
     * one of the removed column */
    for (int p = 0; p < n; p++) {
        double *v = V + (size_t)p * ldv, vx = v[c];
        for (int q = 0; q < r; q++) {
            const double vq = v[c + 1 + q], cs = rot[2 * q], sn = rot[2 * q + 1];
            if (sn == 0.0 && cs == 1.0) {
                v[c + q] = vq;
                continue;
            }
            v[c + q] = cs * vq + sn * vx;
            vx = cs * vx - sn * vq;
        }
    }
}

/* One vector v (k entries) or none (NULL). */
static inline void gs_cholup_remove_carry(gs_cholup *ch, int c, double *v)
{
    gs_cholup_remove_carry_n(ch, c, v, 0, v ? 1 : 0);
}

static inline void gs_cholup_remove(gs_cholup *ch, int c)
{
    gs_cholup_remove_carry(ch, c, NULL);
}

/* Smallest pivot ratio L_cc^2 / S_cc over the factor (diag: S_cc in position
 * order), the numerical-dependence measure of the whole set. O(k). */
static inline double gs_cholup_min_pivot(const gs_cholup *ch, const double *diag)
{
    double mn = INFINITY;
    for (int c = 0; c < ch->k; c++) {
        double d = ch->L[c + (size_t)c * ch->cap];
        mn = fmin(mn, d * d / diag[c]);
    }
    return mn;
}

/* The pair list that goes with a factor: idx[0..k) the pairs in factor
 * (position) order, pos[pair] its position or -1. Every active-set method
 * keeps one (cset.c, gi_dual.c, gi_primal.c). */

/* Remove position c: later pairs move up one position. O(k - c). */
static inline void gs_wlist_remove(int *idx, int *pos, int k, int c)
{
    pos[idx[c]] = -1;
    for (int q = c; q < k - 1; q++) {
        idx[q] = idx[q + 1];
        pos[idx[q]] = q;
    }
}

/* Empty the list (positions back to -1). O(k). */
static inline void gs_wlist_clear(const int *idx, int *pos, int k)
{
    for (int c = 0; c < k; c++)
        pos[idx[c]] = -1;
}

/* A per-position array of the list follows a removal at c. O(k - c). */
static inline void gs_wlist_shift(double *a, int k, int c)
{
    memmove(a + c, a + c + 1, sizeof(double) * (size_t)(k - c - 1));
}

#endif
