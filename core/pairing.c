/*
 * pairing.c -- node CSV reader, the neighbour grid, surface normals and the
 * mutual-nearest pairing of two contact surfaces (see pairing.h).
 */
#include "pairing.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe_text.h"

/* ---- node CSV ------------------------------------------------------------- */

static int pn_cmp_label(const void *a, const void *b)
{
    const gs_pnode *x = *(const gs_pnode *const *)a, *y = *(const gs_pnode *const *)b;
    return (x->label > y->label) - (x->label < y->label);
}

/* Fields of a line split at commas, else at blanks. */
static int pn_fields(gs_text_span line, gs_text_span *f, int max)
{
    for (size_t k = 0; k < line.n; k++)
        if (line.s[k] == ',')
            return gs_text_split(line, ',', f, max);
    int nf = 0; /* blank separated */
    size_t k = 0;
    while (k < line.n) {
        while (k < line.n && (line.s[k] == ' ' || line.s[k] == '\t'))
            k++;
        if (k == line.n)
            break;
        size_t s = k;
        while (k < line.n && line.s[k] != ' ' && line.s[k] != '\t')
            k++;
        if (nf == max)
            return max + 1;
        f[nf++] = (gs_text_span){line.s + s, k - s};
    }
    return nf;
}

gs_err gs_pnodes_parse(const char *buf, size_t len, size_t max_nodes, gs_pnode **out, int *n,
                       gs_error *err)
{
    *out = NULL;
    *n = 0;
    gs_text_cur c;
    gs_text_span line, f[8];
    char show[48];
    gs_text_init(&c, buf, len);
    size_t cap = 0, cnt = 0;
    gs_pnode *v = NULL;
    gs_err rc = GS_OK;
    int first = 1, width = 0;
    while (rc == GS_OK && gs_text_line(&c, &line)) {
        if (memchr(line.s, '\0', line.n)) { /* the number scanners stop at a NUL */
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: a NUL byte (not a text file?)",
                           c.line);
            break;
        }
        line = gs_text_trim(line);
        if (line.n == 0 || line.s[0] == '#')
            continue;
        int nf = pn_fields(line, f, 7);
        double d[7];
        int64_t label;
        int bad = -1;
        if (nf == 4 || nf == 7) {
            bad = gs_text_int(f[0], INT64_MIN + 1, INT64_MAX, &label) != 0 ? 0 : -1;
            for (int k = 1; k < nf && bad < 0; k++)
                if (gs_text_real(f[k], 0, &d[k]) != 0 || !isfinite(d[k]))
                    bad = k;
        }
        if (first && (nf < 1 || gs_text_int(f[0], INT64_MIN + 1, INT64_MAX, &label) != 0)) {
            first = 0; /* a header line */
            continue;
        }
        first = 0;
        if (nf != 4 && nf != 7) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: expected label,x,y,z or "
                           "label,x,y,z,nx,ny,nz, found %d field%s", c.line, nf > 7 ? 8 : nf,
                           nf == 1 ? "" : "s");
            break;
        }
        if (bad >= 0) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: field %d '%s' is not a %s", c.line,
                           bad + 1, gs_text_show(f[bad], show, sizeof show),
                           bad ? "finite number" : "node label (integer)");
            break;
        }
        if (label < 0 || label > GS_PNODE_LABEL_MAX) {
            rc = gs_errorf(err, GS_ERR_RANGE, "", "line %ld: node label %lld out of range "
                           "[0, 2^53] (the model's labels)", c.line, (long long)label);
            break;
        }
        if (width && nf != width) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: %d fields, the lines before have "
                           "%d (give normals for every node or for none)", c.line, nf, width);
            break;
        }
        width = nf;
        if (cnt == max_nodes) {
            rc = gs_errorf(err, GS_ERR_LIMIT, "", "line %ld: more than %zu nodes", c.line,
                           max_nodes);
            break;
        }
        if (cnt == cap) {
            size_t nc = cap ? 2 * cap : 256;
            gs_pnode *t = realloc(v, nc * sizeof *v);
            if (!t) {
                rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %zu nodes", nc);
                break;
            }
            v = t;
            cap = nc;
        }
        gs_pnode *p = &v[cnt++];
        memset(p, 0, sizeof *p);
        p->label = label;
        for (int k = 0; k < 3; k++)
            p->xyz[k] = d[1 + k];
        if (nf == 7) {
            const double l = sqrt(d[4] * d[4] + d[5] * d[5] + d[6] * d[6]);
            if (fabs(l - 1.0) > 1e-6) {
                rc = gs_errorf(err, GS_ERR_INVALID, "", "line %ld: the normal (%.17g, %.17g, "
                               "%.17g) of node %lld is not a unit vector", c.line, d[4], d[5],
                               d[6], (long long)label);
                break;
            }
            for (int k = 0; k < 3; k++)
                p->n[k] = d[4 + k] / l;
            p->has_n = 1;
        }
    }
    if (rc == GS_OK && cnt > 1) { /* distinct labels: sort pointers, O(n log n) */
        const gs_pnode **s = malloc(cnt * sizeof *s);
        if (!s)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
        for (size_t k = 0; s && k < cnt; k++)
            s[k] = &v[k];
        if (s)
            qsort(s, cnt, sizeof *s, pn_cmp_label);
        for (size_t k = 1; s && k < cnt && rc == GS_OK; k++)
            if (s[k]->label == s[k - 1]->label)
                rc = gs_errorf(err, GS_ERR_DUPLICATE, "", "node %lld is listed twice",
                               (long long)s[k]->label);
        free(s);
    }
    if (rc == GS_OK && cnt == 0)
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "no nodes");
    if (rc != GS_OK) {
        free(v);
        return rc;
    }
    *out = v;
    *n = (int)cnt;
    return GS_OK;
}

/* ---- neighbour grid: points sorted by cell key -------------------------------- */

typedef struct {
    const gs_pnode *p;
    int n;
    double h, o[3];   /* cell size, origin */
    int64_t *key;     /* n: sorted cell keys */
    int *idx;         /* n: point of each sorted key */
} pgrid;

#define PG_BITS 21 /* per axis: 2^21 cells (further cells wrap: more candidates, each
                      * still checked by distance) */

static int64_t pg_key3(int64_t a, int64_t b, int64_t c)
{
    const int64_t m = ((int64_t)1 << PG_BITS) - 1;
    return ((a & m) << (2 * PG_BITS)) | ((b & m) << PG_BITS) | (c & m);
}

/* Cell index along axis k, clamped to +-2^40 (far-out or overflowing
 * coordinates share the end cells: more candidates, each checked by
 * distance; no undefined conversion). */
static int64_t pg_cell(const pgrid *g, const double *x, int k)
{
    const double q = floor((x[k] - g->o[k]) / g->h), lim = 1099511627776.0;
    return (int64_t)(q > lim ? lim : q < -lim ? -lim : q == q ? q : 0.0);
}

typedef struct {
    int64_t key;
    int idx;
} pg_entry;

static int pg_cmp(const void *a, const void *b)
{
    const pg_entry *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static gs_err pg_build(pgrid *g, const gs_pnode *p, int n, double h, gs_error *err)
{
    memset(g, 0, sizeof *g);
    g->p = p;
    g->n = n;
    g->h = h;
    for (int k = 0; k < 3; k++) {
        g->o[k] = INFINITY;
        for (int i = 0; i < n; i++)
            g->o[k] = fmin(g->o[k], p[i].xyz[k]);
    }
    pg_entry *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    g->key = malloc((size_t)(n ? n : 1) * sizeof *g->key);
    g->idx = malloc((size_t)(n ? n : 1) * sizeof *g->idx);
    if (!e || !g->key || !g->idx) {
        free(e);
        free(g->key);
        free(g->idx);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the neighbour grid");
    }
    for (int i = 0; i < n; i++)
        e[i] = (pg_entry){pg_key3(pg_cell(g, p[i].xyz, 0), pg_cell(g, p[i].xyz, 1),
                                  pg_cell(g, p[i].xyz, 2)),
                          i};
    qsort(e, (size_t)n, sizeof *e, pg_cmp);
    for (int i = 0; i < n; i++) {
        g->key[i] = e[i].key;
        g->idx[i] = e[i].idx;
    }
    free(e);
    return GS_OK;
}

static void pg_free(pgrid *g)
{
    free(g->key);
    free(g->idx);
}

/* Calls visit(ctx, i, d2) for every point within r (<= h) of x: the 27 cells
 * around x's cell, each found by binary search. O(27 log n + hits). */
static void pg_near(const pgrid *g, const double *x, double r,
                    void (*visit)(void *, int, double), void *ctx)
{
    const int64_t c0 = pg_cell(g, x, 0), c1 = pg_cell(g, x, 1), c2 = pg_cell(g, x, 2);
    for (int64_t a = c0 - 1; a <= c0 + 1; a++)
        for (int64_t b = c1 - 1; b <= c1 + 1; b++)
            for (int64_t c = c2 - 1; c <= c2 + 1; c++) {
                const int64_t k = pg_key3(a, b, c);
                int lo = 0, hi = g->n;
                while (lo < hi) {
                    int mid = lo + (hi - lo) / 2;
                    if (g->key[mid] < k)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                for (; lo < g->n && g->key[lo] == k; lo++) {
                    const double *y = g->p[g->idx[lo]].xyz;
                    const double d2 = (x[0] - y[0]) * (x[0] - y[0]) +
                                      (x[1] - y[1]) * (x[1] - y[1]) +
                                      (x[2] - y[2]) * (x[2] - y[2]);
                    if (d2 <= r * r)
                        visit(ctx, g->idx[lo], d2);
                }
            }
}

/* Nearest point within r (ties: smallest index), excluding `skip`. */
typedef struct {
    int best, skip;
    double d2;
} pg_nearest;

static void pg_visit_nearest(void *ctx, int i, double d2)
{
    pg_nearest *s = ctx;
    if (i != s->skip && (s->best < 0 || d2 < s->d2 || (d2 == s->d2 && i < s->best))) {
        s->best = i;
        s->d2 = d2;
    }
}

static int pg_nearest_of(const pgrid *g, const double *x, double r, int skip)
{
    pg_nearest s = {-1, skip, 0.0};
    pg_near(g, x, r, pg_visit_nearest, &s);
    return s.best;
}

/* ---- surface normals ---------------------------------------------------------- */

typedef struct {
    const gs_pnode *p;
    double sum[3], cov[6]; /* sums of x and of x x' (upper triangle) around a centre */
    const double *c;
    int cnt;
} pn_acc;

static void pn_visit_acc(void *ctx, int i, double d2)
{
    pn_acc *a = ctx;
    (void)d2;
    double d[3];
    for (int k = 0; k < 3; k++)
        d[k] = a->p[i].xyz[k] - a->c[k];
    for (int k = 0; k < 3; k++)
        a->sum[k] += d[k];
    a->cov[0] += d[0] * d[0];
    a->cov[1] += d[0] * d[1];
    a->cov[2] += d[0] * d[2];
    a->cov[3] += d[1] * d[1];
    a->cov[4] += d[1] * d[2];
    a->cov[5] += d[2] * d[2];
    a->cnt++;
}

/* The direction of least spread of the points within r of node v: 0, or -1
 * (fewer than 3 points, or collinear: the two largest eigenvalues not both
 * above 1e-12 of the largest). */
static int pn_surface_normal(const pgrid *g, int v, double r, double n[3])
{
    pn_acc a = {.p = g->p, .c = g->p[v].xyz};
    pg_near(g, g->p[v].xyz, r, pn_visit_acc, &a);
    if (a.cnt < 3)
        return -1;
    double m[3], C[9], w[3];
    for (int k = 0; k < 3; k++)
        m[k] = a.sum[k] / a.cnt;
    const int up[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            C[3 * j + i] = a.cov[up[i][j]] / a.cnt - m[i] * m[j];
    if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', 3, C, 3, w) != 0)
        return -1;
    if (!(w[1] > 1e-12 * w[2]))
        return -1; /* collinear (or a single point) */
    for (int k = 0; k < 3; k++)
        n[k] = C[k]; /* eigenvector of the smallest eigenvalue (ascending order) */
    return 0;
}

static int pn_dbl_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median distance to the nearest other node (the default normal radius):
 * grids of doubling cell size until more than half the nodes find a
 * neighbour within one cell. 0 for fewer than 2 distinct nodes; -1 on no
 * memory. O(n log n) per grid, O(log(extent / spacing)) grids. */
static double pn_median_spacing(const gs_pnode *p, int n)
{
    double ext = 0.0;
    for (int k = 0; k < 3; k++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++) {
            lo = fmin(lo, p[i].xyz[k]);
            hi = fmax(hi, p[i].xyz[k]);
        }
        ext = fmax(ext, hi - lo);
    }
    if (n < 2 || !(ext > 0.0))
        return 0.0;
    double *d = malloc((size_t)n * sizeof *d), med = -1.0;
    for (double h = ext / (2.0 * sqrt((double)n)); d && h <= 4.0 * ext; h *= 2.0) {
        pgrid g;
        if (pg_build(&g, p, n, h, NULL) != GS_OK)
            break;
        int found = 0;
        for (int i = 0; i < n; i++) {
            const int j = pg_nearest_of(&g, p[i].xyz, h, i);
            double s2 = 0.0;
            for (int k = 0; j >= 0 && k < 3; k++)
                s2 += (p[i].xyz[k] - p[j].xyz[k]) * (p[i].xyz[k] - p[j].xyz[k]);
            d[i] = j >= 0 ? sqrt(s2) : INFINITY;
            found += j >= 0;
        }
        pg_free(&g);
        if (2 * found > n) {
            qsort(d, (size_t)n, sizeof *d, pn_dbl_cmp);
            med = d[n / 2];
            break;
        }
    }
    free(d);
    return med;
}

/* ---- pairing ------------------------------------------------------------------ */

void gs_pairing_free(gs_pairing *p)
{
    free(p->pairs);
    free(p->unpaired_up);
    free(p->unpaired_lo);
    memset(p, 0, sizeof *p);
}

static void pn_centroid(const gs_pnode *p, int n, double c[3])
{
    c[0] = c[1] = c[2] = 0.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            c[k] += p[i].xyz[k] / n;
}

/* The unit normal of a pair whose upper node is u and lower node l, oriented
 * lower -> upper (pairing.h: CSV normals, the given one, the surface's). */
static gs_err pn_pair_normal(const gs_pnode *u, const gs_pnode *lo, int l, const pgrid *gn,
                             const gs_pairing_opts *o, const double dir[3], double n[3],
                             gs_error *err)
{
    if (lo[l].has_n || u->has_n || o->normal) {
        const double *src = lo[l].has_n ? lo[l].n : u->has_n ? u->n : o->normal;
        memcpy(n, src, 3 * sizeof *n);
        return GS_OK;
    }
    if (pn_surface_normal(gn, l, o->radius, n) != 0)
        return gs_errorf(err, GS_ERR_INVALID, "lower", "cannot estimate the surface normal at "
                         "lower node %lld: fewer than 3 nodes within %.3g mm, or all on a "
                         "line; give normals (CSV columns nx,ny,nz or --normal) or a larger "
                         "--radius", (long long)lo[l].label, o->radius);
    double s = n[0] * dir[0] + n[1] * dir[1] + n[2] * dir[2];
    if (s == 0.0) { /* coincident centroids: the largest component positive */
        int k = fabs(n[0]) >= fabs(n[1]) && fabs(n[0]) >= fabs(n[2]) ? 0
                : fabs(n[1]) >= fabs(n[2])                           ? 1
                                                                     : 2;
        s = n[k];
    }
    if (s < 0)
        for (int k = 0; k < 3; k++)
            n[k] = -n[k];
    return GS_OK;
}

gs_err gs_pair_surfaces(const gs_pnode *up, int nup, const gs_pnode *lo, int nlo,
                        const gs_pairing_opts *o, gs_pairing *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(o->tol > 0.0) || !isfinite(o->tol))
        return gs_errorf(err, GS_ERR_INVALID, "tol", "the pairing tolerance must be a positive "
                         "distance (mm), got %g", o->tol);
    if (o->normal) {
        const double *n = o->normal, l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(fabs(l - 1.0) <= 1e-6))
            return gs_errorf(err, GS_ERR_INVALID, "normal", "the normal (%g, %g, %g) is not a "
                             "unit vector", n[0], n[1], n[2]);
    }
    gs_pairing_opts opt = *o;
    pgrid gl, gu, gn = {0};
    int *lo_best = malloc((size_t)(nlo ? nlo : 1) * sizeof *lo_best);
    out->pairs = malloc((size_t)(nup ? nup : 1) * sizeof *out->pairs);
    out->unpaired_up = malloc((size_t)(nup ? nup : 1) * sizeof *out->unpaired_up);
    out->unpaired_lo = malloc((size_t)(nlo ? nlo : 1) * sizeof *out->unpaired_lo);
    int have_gl = 0, have_gu = 0, have_gn = 0;
    gs_err rc = GS_OK;
    if (!lo_best || !out->pairs || !out->unpaired_up || !out->unpaired_lo)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d + %d nodes", nup, nlo);
    if (rc == GS_OK && (rc = pg_build(&gl, lo, nlo, o->tol, err)) == GS_OK)
        have_gl = 1;
    if (rc == GS_OK && (rc = pg_build(&gu, up, nup, o->tol, err)) == GS_OK)
        have_gu = 1;
    int need_n = 0; /* any pair without a CSV or given normal: estimate from the surface */
    for (int l = 0; l < nlo && !o->normal; l++)
        need_n |= !lo[l].has_n;
    if (rc == GS_OK && need_n) {
        if (!(opt.radius > 0.0))
            opt.radius = 2.5 * pn_median_spacing(lo, nlo);
        if (!(opt.radius > 0.0))
            rc = gs_errorf(err, GS_ERR_INVALID, "lower", "cannot estimate surface normals "
                           "from %d lower node%s: give normals", nlo, nlo == 1 ? "" : "s");
        else if ((rc = pg_build(&gn, lo, nlo, opt.radius, err)) == GS_OK)
            have_gn = 1;
        out->radius = opt.radius;
    }
    double cu[3], cl[3], dir[3];
    pn_centroid(up, nup, cu);
    pn_centroid(lo, nlo, cl);
    for (int k = 0; k < 3; k++)
        dir[k] = cu[k] - cl[k];
    /* mutual nearest neighbours within tol: O((n_u + n_l) log) */
    for (int l = 0; rc == GS_OK && l < nlo; l++)
        lo_best[l] = pg_nearest_of(&gu, lo[l].xyz, o->tol, -1);
    for (int i = 0; rc == GS_OK && i < nup; i++) {
        const int l = pg_nearest_of(&gl, up[i].xyz, o->tol, -1);
        if (l < 0 || lo_best[l] != i) {
            out->unpaired_up[out->n_up++] = i;
            continue;
        }
        gs_pair_out *p = &out->pairs[out->np++];
        p->i = i;
        p->j = l;
        if ((rc = pn_pair_normal(&up[i], lo, l, &gn, &opt, dir, p->n, err)) != GS_OK)
            break;
        double d2 = 0.0;
        p->gap = 0.0;
        for (int k = 0; k < 3; k++) {
            const double dx = up[i].xyz[k] - lo[l].xyz[k];
            d2 += dx * dx;
            p->gap += p->n[k] * dx;
        }
        p->dist = sqrt(d2);
    }
    for (int l = 0; rc == GS_OK && l < nlo; l++)
        if (lo_best[l] < 0 || pg_nearest_of(&gl, up[lo_best[l]].xyz, o->tol, -1) != l)
            out->unpaired_lo[out->n_lo++] = l;
    if (have_gl)
        pg_free(&gl);
    if (have_gu)
        pg_free(&gu);
    if (have_gn)
        pg_free(&gn);
    free(lo_best);
    if (rc != GS_OK)
        gs_pairing_free(out);
    return rc;
}

gs_err gs_pair_jig(const gs_pnode *jig, int njig, const double *normal, gs_pairing *out,
                   gs_error *err)
{
    gs_pair_out *t = realloc(out->pairs, (size_t)(out->np + njig + 1) * sizeof *t);
    if (!t)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d jig pairs", njig);
    out->pairs = t;
    for (int v = 0; v < njig; v++) {
        const double *n = jig[v].has_n ? jig[v].n : normal;
        if (!n)
            return gs_errorf(err, GS_ERR_INVALID, "jig", "jig node %lld has no normal: give "
                             "the CSV columns nx,ny,nz or --jig-normal",
                             (long long)jig[v].label);
        const double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(fabs(l - 1.0) <= 1e-6))
            return gs_errorf(err, GS_ERR_INVALID, "jig", "the jig normal (%g, %g, %g) is not a "
                             "unit vector", n[0], n[1], n[2]);
        gs_pair_out *p = &out->pairs[out->np++];
        memset(p, 0, sizeof *p);
        p->i = v;
        p->j = -1;
        for (int k = 0; k < 3; k++)
            p->n[k] = n[k] / l;
    }
    return GS_OK;
}

/* ---- the model's nodes of a pairing ------------------------------------------- */

typedef struct {
    int64_t label;
    int part, r; /* r: 2 k for pair k's node i, 2 k + 1 for its node j */
} pn_ref;

static int pn_ref_cmp(const void *a, const void *b)
{
    const pn_ref *x = a, *y = b;
    if (x->part != y->part)
        return (x->part > y->part) - (x->part < y->part);
    if (x->label != y->label)
        return (x->label > y->label) - (x->label < y->label);
    return (x->r > y->r) - (x->r < y->r);
}

static const char *const pn_set_name[3] = {"upper", "lower", "jig"};

/* The set and index of the node behind reference r. */
static gs_pnode_ref pn_side(const gs_pairing *pr, int r)
{
    const gs_pair_out *p = &pr->pairs[r / 2];
    if (r % 2)
        return (gs_pnode_ref){1, p->j};
    return (gs_pnode_ref){p->j >= 0 ? 0 : 2, p->i};
}

/* Two references a (the node's first) and b of one (part, label): one
 * position (within same_tol) and parallel or antiparallel normals. */
static gs_err pn_same_node(const gs_pnode *const set[3], const gs_pairing *pr, const pn_ref *a,
                           const pn_ref *b, double same_tol, gs_error *err)
{
    const gs_pnode_ref ra = pn_side(pr, a->r), rb = pn_side(pr, b->r);
    const double *xa = set[ra.set][ra.idx].xyz, *xb = set[rb.set][rb.idx].xyz;
    const double *na = pr->pairs[a->r / 2].n, *nb = pr->pairs[b->r / 2].n;
    double d2 = 0.0, dot = 0.0;
    for (int k = 0; k < 3; k++) {
        d2 += (xa[k] - xb[k]) * (xa[k] - xb[k]);
        dot += na[k] * nb[k];
    }
    if (!(sqrt(d2) <= same_tol))
        return gs_errorf(err, GS_ERR_INVALID, pn_set_name[rb.set], "node %lld of part %d is at "
                         "(%.17g, %.17g, %.17g) in the %s nodes and at (%.17g, %.17g, %.17g) in "
                         "the %s nodes, %.4g mm apart (more than %.4g): one label for two "
                         "nodes?", (long long)a->label, a->part, xa[0], xa[1], xa[2],
                         pn_set_name[ra.set], xb[0], xb[1], xb[2], pn_set_name[rb.set],
                         sqrt(d2), same_tol);
    if (!(fabs(fabs(dot) - 1.0) <= 1e-9))
        return gs_errorf(err, GS_ERR_INVALID, pn_set_name[rb.set], "node %lld of part %d is in "
                         "pair %d with the normal (%.17g, %.17g, %.17g) and in pair %d with "
                         "(%.17g, %.17g, %.17g): a node carries one contact normal (its pairs' "
                         "normals parallel or antiparallel); give its pairs one normal (CSV "
                         "columns nx,ny,nz, --normal, --jig-normal)", (long long)a->label,
                         a->part, a->r / 2, na[0], na[1], na[2], b->r / 2, nb[0], nb[1], nb[2]);
    return GS_OK;
}

typedef struct {
    int lo, hi, k; /* a pair's node indices (hi -1: jig) */
} pn_pairkey;

static int pn_pairkey_cmp(const void *a, const void *b)
{
    const pn_pairkey *x = a, *y = b;
    if (x->lo != y->lo)
        return (x->lo > y->lo) - (x->lo < y->lo);
    if (x->hi != y->hi)
        return (x->hi > y->hi) - (x->hi < y->hi);
    return (x->k > y->k) - (x->k < y->k);
}

/* No pair joins a node to itself; no two pairs join the same nodes. */
static gs_err pn_check_pairs(const gs_pnode *const set[3], const int part[3],
                             const gs_pairing *pr, const gs_pair_nodes *pn, gs_error *err)
{
    const int np = pr->np;
    for (int k = 0; k < np; k++)
        if (pn->pi[k] == pn->pj[k]) {
            const gs_pnode_ref v = pn->node[pn->pi[k]];
            return gs_errorf(err, GS_ERR_INVALID, "pairs", "pair %d joins node %lld of part %d "
                             "to itself: the upper and the lower nodes are both of part %d and "
                             "share this label", k, (long long)set[v.set][v.idx].label,
                             part[v.set], part[v.set]);
        }
    pn_pairkey *key = malloc((np > 0 ? (size_t)np : 1) * sizeof *key);
    if (!key)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %d pairs", np);
    for (int k = 0; k < np; k++) {
        const int a = pn->pi[k], b = pn->pj[k];
        key[k] = b < 0 ? (pn_pairkey){a, -1, k} : (pn_pairkey){a < b ? a : b, a < b ? b : a, k};
    }
    qsort(key, (size_t)np, sizeof *key, pn_pairkey_cmp);
    gs_err rc = GS_OK;
    for (int k = 1; k < np && rc == GS_OK; k++)
        if (key[k].lo == key[k - 1].lo && key[k].hi == key[k - 1].hi) {
            const gs_pnode_ref v = pn->node[key[k].lo];
            rc = gs_errorf(err, GS_ERR_DUPLICATE, "pairs", "pairs %d and %d join the same nodes "
                           "(node %lld of part %d and its partner): the upper and the lower "
                           "nodes share part and labels", key[k - 1].k, key[k].k,
                           (long long)set[v.set][v.idx].label, part[v.set]);
        }
    free(key);
    return rc;
}

gs_err gs_pair_nodes_build(const gs_pnode *const set[3], const int part[3], const gs_pairing *pr,
                           double same_tol, gs_pair_nodes *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    const int np = pr->np;
    const size_t cap = 2 * (size_t)np + 1;
    pn_ref *ref = malloc(cap * sizeof *ref);
    int *first = malloc(cap * sizeof *first); /* reference -> its node's first reference */
    out->node = malloc(cap * sizeof *out->node);
    out->pi = malloc(((size_t)np + 1) * sizeof *out->pi);
    out->pj = malloc(((size_t)np + 1) * sizeof *out->pj);
    gs_err rc = GS_OK;
    if (!ref || !first || !out->node || !out->pi || !out->pj)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the nodes of %d pairs", np);
    int nr = 0;
    for (int r = 0; rc == GS_OK && r < 2 * np; r++) {
        if (r % 2 && pr->pairs[r / 2].j < 0)
            continue; /* a jig pair has no node j */
        const gs_pnode_ref v = pn_side(pr, r);
        ref[nr++] = (pn_ref){set[v.set][v.idx].label, part[v.set], r};
    }
    if (rc == GS_OK)
        qsort(ref, (size_t)nr, sizeof *ref, pn_ref_cmp);
    for (int a = 0, g = 0; rc == GS_OK && a < nr; a++) { /* g: the node's first reference */
        if (a > 0 && ref[a].part == ref[g].part && ref[a].label == ref[g].label)
            rc = pn_same_node(set, pr, &ref[g], &ref[a], same_tol, err);
        else
            g = a;
        first[ref[a].r] = ref[g].r;
    }
    for (int k = 0; rc == GS_OK && k < np; k++) { /* number the nodes in pair order */
        out->pj[k] = -1;
        for (int s = 0; s < 2 && (s == 0 || pr->pairs[k].j >= 0); s++) {
            const int r = 2 * k + s, f = first[r];
            int v;
            if (f == r) {
                v = out->n_nodes++;
                out->node[v] = pn_side(pr, r);
            } else {
                v = f % 2 ? out->pj[f / 2] : out->pi[f / 2];
            }
            *(s ? &out->pj[k] : &out->pi[k]) = v;
        }
    }
    if (rc == GS_OK)
        rc = pn_check_pairs(set, part, pr, out, err);
    free(ref);
    free(first);
    if (rc != GS_OK)
        gs_pair_nodes_free(out);
    return rc;
}

void gs_pair_nodes_free(gs_pair_nodes *pn)
{
    free(pn->node);
    free(pn->pi);
    free(pn->pj);
    memset(pn, 0, sizeof *pn);
}
