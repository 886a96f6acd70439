/*
 * cpool.h -- private: a pool of candidate pairs whose residual gaps are
 * kept exact between two refreshes, so that GI relative adds the pairs that
 * are most violated now, not those that were most violated at the last
 * O(m k) refresh, and can add several at once.
 *
 * Why: a refresh lists the violated pairs, but every pair added closes its
 * neighbours' gaps; taken in the stale order, many of them enter only to
 * leave again (partial steps). Choosing the most violated pair after every
 * addition removes most of those steps (lap joint, 50% fasteners: 667 ->
 * 342 GI steps per gap), but would cost a refresh per addition. The pool
 * holds the most violated pairs of a refresh with their columns B = Q[C,
 * pool] in C's position order, updated as C changes, so that the pool's
 * exact residual gaps w = B' lam_C - p cost O(k n) per pick, contiguous,
 * instead of O(m k), and the columns are at hand for the additions.
 *
 * Invariants (between gs_cpool_fill and gs_cpool_clear): n pool pairs, none
 * in C; column s of B (leading dimension ld >= |C|) holds Q[idx[c],
 * pair[s]] for the members c of C in position order.
 * Costs (k = |C|, n = pool size):
 *   fill (gather n columns)            O(n k)
 *   pick (w of every pool pair)        O(n k)      gs_cols_dot
 *   take (b pairs leave the pool)      O(b k)
 *   appended (C gains a member: a row) O(n)
 *   removed (C loses position c)       O(n (k - c))
 */
#ifndef GS_CPOOL_H
#define GS_CPOOL_H

#include "cset.h"

typedef struct {
    int cap, n;   /* capacity (pairs), pairs in the pool */
    size_t ld;    /* leading dimension of B: rows it can hold */
    int *pair;    /* cap */
    double *B;    /* ld x cap */
    double *w;    /* cap: residual gaps of the last pick */
} gs_cpool;

/* An empty pool; nothing allocated until the first fill. */
void gs_cpool_init(gs_cpool *pl);
void gs_cpool_free(gs_cpool *pl);
/* Empty the pool (O(1)): the updates below do nothing until the next fill. */
static inline void gs_cpool_clear(gs_cpool *pl)
{
    pl->n = 0;
}
/* Fill the pool with the n first pairs of list (none in C) and gather
 * their columns Q[C, .] from the members' columns of Q (just streamed
 * through the cache by the refresh). Returns GS_OK or GS_ERR_NOMEM. */
gs_err gs_cpool_fill(gs_cpool *pl, const gs_cset *cs, const int *list, int n);
/* The pool pairs to add next, at most bmax of them, in slots[]: the most
 * violated pool pair (w < -tol_w; pairs with load[i] > 0 first when load is
 * not NULL), then the next most violated of the same group; ties by pair
 * index. Returns how many (0: none is violated). lc: the multipliers of C
 * in position order, p: the dual data. pl->w[slot] holds each one's w. */
int gs_cpool_pick(gs_cpool *pl, const gs_cset *cs, const double *lc, const double *p,
                  const double *load, double tol_w, int *slots, int bmax);
/* The b picked slots leave the pool: pair, w and column Q[C, pair] (k
 * entries) of slots[i] go to pairs[i], w[i] and column i of X (leading dim
 * ldx). slots[] is reordered. */
void gs_cpool_take(gs_cpool *pl, int *slots, int b, int k, int *pairs, double *w, double *X,
                   size_t ldx);
/* C gained the pair j at its last position (cs->k - 1): a row of B (B
 * regrows if C outgrew it). Returns GS_OK or GS_ERR_NOMEM (then the pool is
 * emptied: the caller goes on with a refresh). */
gs_err gs_cpool_appended(gs_cpool *pl, const gs_cset *cs, int j);
/* The member at position c (of k before) left C: its row leaves B. */
void gs_cpool_removed(gs_cpool *pl, int c, int k);

#endif
