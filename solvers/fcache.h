/*
 * fcache.h -- a shared cache of Cholesky factors of Q_CC, keyed by the
 * ordered list of pairs C they were built from.
 *
 * Why: a warm start from a stored solution (a cloud warm-started from
 * another job, the moves of a fastener-pattern search) must factor that
 * solution's contact set when the workspace's own factor is of another set;
 * the gather of Q_CC from Q's columns and the dpotrf are about a third of
 * such a warm solve (k = 290 on the lap joint). Several solves start from
 * the same stored solution (every move of a search step starts from the
 * step's best pattern), so the factor built for the first is copied, not
 * rebuilt, for the others: O(k^2) instead of O(k^3/3) and k^2/2 scattered
 * reads of Q.
 *
 * What is stored is exactly what gs_cset_build (cset.h) makes of the list:
 * the lower triangle, packed by columns, in the list's order. A hit gives
 * the bits a build would give (dpotrf is deterministic for the same input
 * on the same machine and thread count), so results do not depend on the
 * cache. A list is found only if equal, entry for entry, to the stored one
 * (its 64-bit hash only narrows the search).
 *
 * One cache per precomputation (per assembly), shared by the solvers of all
 * worker threads: every call takes the cache's mutex; a hit copies under it
 * (k(k+1)/2 doubles). Entries beyond the byte budget are evicted least
 * recently used first. Lookup O(entries) over the hashes (a few hundred in
 * practice, against a build of O(k^3/3)).
 */
#ifndef GS_FCACHE_H
#define GS_FCACHE_H

#include <stddef.h>

typedef struct gs_fcache gs_fcache;

/* Lists shorter than this are built, not cached: a build of a small set
 * costs little more than the copy. */
#define GS_FCACHE_MIN_K 32

typedef struct {
    long hits, misses, entries;
    size_t bytes, budget;
} gs_fcache_stats;

/* A cache holding at most budget bytes of factors and lists; NULL when out
 * of memory. budget 0: nothing is ever stored. */
gs_fcache *gs_fcache_new(size_t budget);
void gs_fcache_free(gs_fcache *fc);

/* If the factor of exactly list[0..k) is cached, copy its lower triangle
 * into L (column-major, leading dimension ld >= k; the strict upper part is
 * not written) and return 1; else 0 (counted as a miss). */
int gs_fcache_get(gs_fcache *fc, const int *list, int k, double *L, int ld);

/* Store the factor L (lower triangle, leading dimension ld) of list[0..k),
 * evicting the least recently used entries to stay within the budget. An
 * entry larger than the budget, or a list already cached, is not stored;
 * out of memory is not an error (nothing is stored). */
void gs_fcache_put(gs_fcache *fc, const int *list, int k, const double *L, int ld);

/* Counters since gs_fcache_new. */
void gs_fcache_get_stats(gs_fcache *fc, gs_fcache_stats *st);

#endif
