/* cpool.c -- candidate pool with exact residual gaps (see cpool.h). */
#include "cpool.h"

#include <stdlib.h>
#include <string.h>

#include "linalg.h"

void gs_cpool_init(gs_cpool *pl)
{
    memset(pl, 0, sizeof *pl);
}

void gs_cpool_free(gs_cpool *pl)
{
    free(pl->pair);
    free(pl->w);
    free(pl->B);
    memset(pl, 0, sizeof *pl);
}

/* Room for n pairs of ld rows; the first `keep` rows of the pool's columns
 * are kept. */
static gs_err reserve(gs_cpool *pl, int n, size_t ld, int keep)
{
    if (n > pl->cap) {
        int *pair = realloc(pl->pair, (size_t)n * sizeof *pair);
        if (pair)
            pl->pair = pair;
        double *w = realloc(pl->w, (size_t)n * sizeof *w);
        if (w)
            pl->w = w;
        if (!pair || !w)
            return GS_ERR_NOMEM;
    }
    if (n <= pl->cap && ld <= pl->ld)
        return GS_OK;
    if (ld < pl->ld)
        ld = pl->ld;
    const int cols = n > pl->cap ? n : pl->cap;
    size_t nb = gs_mul_size(ld, (size_t)cols);
    double *B = nb ? malloc(nb * sizeof *B) : NULL;
    if (!B)
        return GS_ERR_NOMEM;
    for (int s = 0; s < pl->n; s++)
        memcpy(B + (size_t)s * ld, pl->B + (size_t)s * pl->ld, (size_t)keep * sizeof *B);
    free(pl->B);
    pl->B = B;
    pl->ld = ld;
    pl->cap = cols;
    return GS_OK;
}

gs_err gs_cpool_fill(gs_cpool *pl, const gs_cset *cs, const int *list, int n)
{
    const int m = cs->m, k = cs->k;
    const double *Q = cs->pc->Q;
    pl->n = 0;
    if (n <= 0)
        return GS_OK;
    if (reserve(pl, n, (size_t)(cs->cap > k ? cs->cap : k), 0) != GS_OK)
        return GS_ERR_NOMEM;
    memcpy(pl->pair, list, (size_t)n * sizeof *pl->pair);
    pl->n = n;
    /* Q[idx[c], pair[s]] read from the members' columns (Q is symmetric),
     * which the refresh just streamed through the cache, not from the pool
     * pairs' own columns, which nothing has touched: 4x less time here */
    for (int c = 0; c < k; c++) {
        const double *qc = Q + (size_t)cs->idx[c] * m;
        double *b = pl->B + c;
        for (int s = 0; s < n; s++)
            b[(size_t)s * pl->ld] = qc[pl->pair[s]];
    }
    return GS_OK;
}

/* a is taken before b: most negative w first, ties by pair index */
static int before(const gs_cpool *pl, int a, int b)
{
    return pl->w[a] < pl->w[b] || (pl->w[a] == pl->w[b] && pl->pair[a] < pl->pair[b]);
}

int gs_cpool_pick(gs_cpool *pl, const gs_cset *cs, const double *lc, const double *p,
                  const double *load, double tol_w, int *slots, int bmax)
{
    if (pl->n == 0 || bmax < 1)
        return 0;
    gs_cols_dot(cs->k, pl->B, pl->ld, pl->n, lc, pl->w);
    /* the violated pairs of the first group present, then the best bmax of
     * them by insertion into slots (bmax is small) */
    int group = 1;
    for (int s = 0; s < pl->n; s++) {
        pl->w[s] -= p[pl->pair[s]];
        if (pl->w[s] < -tol_w && load && load[pl->pair[s]] > 0.0)
            group = 0;
    }
    int b = 0;
    for (int s = 0; s < pl->n; s++) {
        if (!(pl->w[s] < -tol_w) || (group == 0 && !(load[pl->pair[s]] > 0.0)))
            continue;
        int at = b < bmax ? b : bmax;
        while (at > 0 && before(pl, s, slots[at - 1]))
            at--;
        if (at >= bmax)
            continue;
        if (b < bmax)
            b++;
        memmove(slots + at + 1, slots + at, (size_t)(b - 1 - at) * sizeof *slots);
        slots[at] = s;
    }
    return b;
}

void gs_cpool_take(gs_cpool *pl, int *slots, int b, int k, int *pairs, double *w, double *X,
                   size_t ldx)
{
    for (int i = 0; i < b; i++) {
        pairs[i] = pl->pair[slots[i]];
        w[i] = pl->w[slots[i]];
        memcpy(X + (size_t)i * ldx, pl->B + (size_t)slots[i] * pl->ld, (size_t)k * sizeof *X);
    }
    /* swap-delete from the highest slot down, so that no slot still to go
     * is moved */
    for (int i = 1; i < b; i++)
        for (int q = i; q > 0 && slots[q] > slots[q - 1]; q--) {
            int t = slots[q];
            slots[q] = slots[q - 1];
            slots[q - 1] = t;
        }
    for (int i = 0; i < b; i++) {
        const int s = slots[i], last = --pl->n;
        if (s != last) {
            pl->pair[s] = pl->pair[last];
            memcpy(pl->B + (size_t)s * pl->ld, pl->B + (size_t)last * pl->ld,
                   (size_t)k * sizeof *pl->B);
        }
    }
}

gs_err gs_cpool_appended(gs_cpool *pl, const gs_cset *cs, int j)
{
    if (pl->n == 0)
        return GS_OK;
    const int r = cs->k - 1;
    if ((size_t)cs->k > pl->ld && reserve(pl, pl->n, (size_t)cs->cap, r) != GS_OK) {
        pl->n = 0;
        return GS_ERR_NOMEM;
    }
    const double *qj = cs->pc->Q + (size_t)j * cs->m;
    for (int s = 0; s < pl->n; s++)
        pl->B[(size_t)s * pl->ld + r] = qj[pl->pair[s]];
    return GS_OK;
}

void gs_cpool_removed(gs_cpool *pl, int c, int k)
{
    for (int s = 0; s < pl->n; s++) {
        double *b = pl->B + (size_t)s * pl->ld;
        memmove(b + c, b + c + 1, (size_t)(k - 1 - c) * sizeof *b);
    }
}
