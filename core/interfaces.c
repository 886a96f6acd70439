/*
 * interfaces.c -- interfaces and spread fastener patterns (interfaces.h).
 *
 * The pattern works on one record per candidate (interface, position along
 * the interface's main axis, position across it, index), sorted once; the
 * stations of an interface are runs of equal main-axis position, every other
 * one reversed (snake order). Cost: the sort, O(n_fast log n_fast); the
 * interface grouping, O(m n_iface).
 */
#include "interfaces.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gs_model_interfaces(const gs_model *mdl, int *iface, int *key, gs_error *err)
{
    int ng = 0;
    for (int q = 0; q < mdl->m; q++) {
        const gs_pair *pr = &mdl->pairs[q];
        if (pr->node[0] < 0 || pr->node[0] >= mdl->n_nodes ||
            (pr->node[1] != GS_FIXED && (pr->node[1] < 0 || pr->node[1] >= mdl->n_nodes))) {
            gs_errorf(err, GS_ERR_RANGE, "pairs", "pair %d: node out of range", q);
            return -1;
        }
        int a = mdl->nodes[pr->node[0]].part;
        int b = pr->node[1] == GS_FIXED ? -1 : mdl->nodes[pr->node[1]].part;
        int g = 0;
        while (g < ng && !(key[2 * g] == a && key[2 * g + 1] == b))
            g++;
        if (g == ng) {
            key[2 * g] = a;
            key[2 * g + 1] = b;
            ng++;
        }
        iface[q] = g;
    }
    return ng;
}

int gs_gen_pattern_count(int n_fast, double fraction)
{
    if (n_fast <= 0 || !(fraction > 0.0))
        return 0;
    if (fraction >= 1.0)
        return n_fast;
    long c = lround(fraction * n_fast);
    return c < 0 ? 0 : (c > n_fast ? n_fast : (int)c);
}

typedef struct {
    int g;        /* interface */
    double along; /* coordinate on the interface's main axis, mm */
    double across;
    int i;        /* candidate */
} cand;

static int cmp_cand(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->g != b->g)
        return a->g < b->g ? -1 : 1;
    if (a->along != b->along)
        return a->along < b->along ? -1 : 1;
    if (a->across != b->across)
        return a->across < b->across ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Shares of ns installed fasteners over ng interfaces of cnt[g] candidates:
 * floor(fraction cnt) each, the rest to the largest remainders. O(ng^2). */
static void split_shares(const int *cnt, int ng, double fraction, int ns, int *share)
{
    double f = fraction >= 1.0 ? 1.0 : fraction;
    int given = 0;
    for (int g = 0; g < ng; g++) {
        share[g] = (int)floor(f * cnt[g]);
        given += share[g];
    }
    while (given < ns) { /* at most ng rounds: each remainder is < 1 */
        int best = -1;
        double rbest = -1.0;
        for (int g = 0; g < ng; g++) {
            double r = f * cnt[g] - share[g];
            if (share[g] < cnt[g] && r > rbest) {
                rbest = r;
                best = g;
            }
        }
        if (best < 0)
            break;
        share[best]++;
        given++;
    }
}

/* Main and second axis of the candidates c[0..n) of one interface. */
static void axes(const gs_model *mdl, const cand *c, int n, int *main_ax, int *second_ax,
                 double *extent)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int t = 0; t < n; t++) {
        const double *xyz = mdl->nodes[mdl->pairs[mdl->fast[c[t].i].pair].node[0]].xyz;
        for (int d = 0; d < 3; d++) {
            lo[d] = fmin(lo[d], xyz[d]);
            hi[d] = fmax(hi[d], xyz[d]);
        }
    }
    int a = 0;
    for (int d = 1; d < 3; d++)
        if (hi[d] - lo[d] > hi[a] - lo[a])
            a = d;
    int b = a == 0 ? 1 : 0;
    for (int d = 0; d < 3; d++)
        if (d != a && hi[d] - lo[d] > hi[b] - lo[b])
            b = d;
    *main_ax = a;
    *second_ax = b;
    *extent = n > 0 ? hi[a] - lo[a] : 0.0;
}

gs_err gs_gen_pattern(const gs_model *mdl, double fraction, unsigned char *installed,
                      gs_error *err)
{
    int nf = mdl->n_fast, m = mdl->m;
    if (nf <= 0)
        return GS_OK;
    memset(installed, 0, (size_t)nf);
    int ns = gs_gen_pattern_count(nf, fraction);
    if (ns == 0)
        return GS_OK;
    int *iface = malloc(sizeof(int) * (size_t)(m > 0 ? m : 1));
    int *key = malloc(sizeof(int) * 2 * (size_t)(m > 0 ? m : 1));
    cand *c = malloc(sizeof(cand) * (size_t)nf);
    int *cnt = calloc((size_t)(m > 0 ? m : 1) * 3, sizeof(int)); /* cnt, share, start */
    gs_err rc = GS_OK;
    if (!iface || !key || !c || !cnt)
        rc = gs_errorf(err, GS_ERR_NOMEM, "fasteners", "out of memory for the pattern");
    int ng = rc ? 0 : gs_model_interfaces(mdl, iface, key, err);
    if (ng < 0)
        rc = GS_ERR_RANGE;
    for (int i = 0; !rc && i < nf; i++) {
        int p = mdl->fast[i].pair;
        if (p < 0 || p >= m) {
            rc = gs_errorf(err, GS_ERR_RANGE, "fasteners", "fasteners[%d].pair %d out of range",
                           i, p);
            break;
        }
        c[i] = (cand){.g = iface[p], .i = i};
        cnt[iface[p]]++;
    }
    if (!rc) {
        int *share = cnt + ng, *start = cnt + 2 * ng;
        split_shares(cnt, ng, fraction, ns, share);
        /* group by interface, then sort each by position */
        qsort(c, (size_t)nf, sizeof *c, cmp_cand); /* by g (positions still 0), then index */
        for (int g = 0, s = 0; g < ng; s += cnt[g], g++)
            start[g] = s;
        for (int g = 0; g < ng; g++) {
            cand *cg = c + start[g];
            int n = cnt[g], a, b;
            double ext;
            axes(mdl, cg, n, &a, &b, &ext);
            for (int t = 0; t < n; t++) {
                const double *xyz = mdl->nodes[mdl->pairs[mdl->fast[cg[t].i].pair].node[0]].xyz;
                cg[t].along = xyz[a];
                cg[t].across = xyz[b];
            }
            qsort(cg, (size_t)n, sizeof *cg, cmp_cand);
            /* stations: runs of equal `along`; reverse every other one */
            double tol = 1e-6 * (ext > 0 ? ext : 1.0);
            for (int t = 0, st = 0; t < n; st++) {
                int e = t + 1;
                while (e < n && cg[e].along - cg[t].along <= tol)
                    e++;
                for (int lo = t, hi = e - 1; st % 2 == 1 && lo < hi; lo++, hi--) {
                    cand tmp = cg[lo];
                    cg[lo] = cg[hi];
                    cg[hi] = tmp;
                }
                t = e;
            }
            /* Bresenham: exactly share[g] ones, evenly spaced along the order */
            for (int t = 0; t < n; t++)
                installed[cg[t].i] =
                    ((long long)(t + 1) * share[g] / n) != ((long long)t * share[g] / n);
        }
    }
    free(iface);
    free(key);
    free(c);
    free(cnt);
    return rc;
}
