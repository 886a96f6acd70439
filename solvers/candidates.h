/*
 * candidates.h -- private: the order in which the primal-side active-set
 * methods (GI relative, GI primal) take the violated pairs of a residual-gap
 * refresh: loaded pairs first when asked (group 0), then most violated, ties
 * by pair index (deterministic). Only the head of the list is ever used
 * before the next refresh, so only the head is sorted.
 */
#ifndef GS_CANDIDATES_H
#define GS_CANDIDATES_H

#include <stdlib.h>

typedef struct {
    int group;  /* 0 is taken first (e.g. pairs carrying a fastener load) */
    double w;   /* residual gap, most negative first */
    int i;      /* pair */
} gs_cand;

static inline int gs_cand_cmp(const void *a, const void *b)
{
    const gs_cand *x = a, *y = b;
    if (x->group != y->group)
        return x->group - y->group;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Pairs taken from one list before the gaps are refreshed (GI primal; GI
 * relative keeps the exact gaps of a pool instead, cpool.h): a refresh
 * costs O(m k) (memory-bound), a stale order costs extra GI steps; 16 + k/4
 * was within 10% of the best fixed batch on the 5,206-unknown lap joint at
 * 10..100% fasteners (k = current active-set size). */
static inline int gs_cand_batch(int k)
{
    return 16 + k / 4;
}

/* Put the best `want` of key[0..nc) first, in order (Hoare quickselect, then
 * a sort of the head); returns how many are ordered. O(nc + want log want)
 * expected. */
static inline int gs_cand_order_head(gs_cand *key, int nc, int want)
{
    if (want > nc)
        want = nc;
    int lo = 0, hi = nc - 1;
    while (want < nc && lo < hi) {
        gs_cand piv = key[lo + (hi - lo) / 2];
        int a = lo, b = hi;
        while (a <= b) {
            while (gs_cand_cmp(&key[a], &piv) < 0)
                a++;
            while (gs_cand_cmp(&key[b], &piv) > 0)
                b--;
            if (a <= b) {
                gs_cand t = key[a];
                key[a++] = key[b];
                key[b--] = t;
            }
        }
        if (want - 1 <= b)
            hi = b;
        else if (want - 1 >= a)
            lo = a;
        else
            break;
    }
    qsort(key, (size_t)want, sizeof *key, gs_cand_cmp);
    return want;
}

#endif
