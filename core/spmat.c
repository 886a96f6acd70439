/*
 * spmat.c -- triplets to CSC (two counting sorts, duplicates summed, one
 * triangle or both folded into the lower one), dense expansion, DOF lookup.
 */
#include "spmat.h"

#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void gs_coo_init(gs_coo *c, size_t max_nnz)
{
    memset(c, 0, sizeof *c);
    c->max_nnz = max_nnz;
}

void gs_coo_free(gs_coo *c)
{
    free(c->row);
    free(c->col);
    free(c->val);
    size_t max = c->max_nnz;
    gs_coo_init(c, max);
}

gs_err gs_coo_reserve(gs_coo *c, size_t want, gs_error *err)
{
    if (want <= c->cap)
        return GS_OK;
    if (want > c->max_nnz)
        return gs_errorf(err, GS_ERR_LIMIT, "", "more than %zu matrix entries (the limit)",
                         c->max_nnz);
    if (want > SIZE_MAX / sizeof(int64_t))
        return gs_errorf(err, GS_ERR_LIMIT, "", "%zu matrix entries too many", want);
    int64_t *r = realloc(c->row, want * sizeof *r);
    if (r)
        c->row = r;
    int64_t *k = r ? realloc(c->col, want * sizeof *k) : NULL;
    if (k)
        c->col = k;
    double *v = k ? realloc(c->val, want * sizeof *v) : NULL;
    if (v)
        c->val = v;
    if (!v)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %zu matrix entries", want);
    c->cap = want;
    return GS_OK;
}

gs_err gs_coo_add(gs_coo *c, int64_t row, int64_t col, double val, gs_error *err)
{
    if (c->len == c->cap) {
        size_t want = c->cap < 64 ? 64 : c->cap * 2;
        if (want > c->max_nnz)
            want = c->max_nnz > c->len ? c->max_nnz : c->len + 1;
        gs_err rc = gs_coo_reserve(c, want, err);
        if (rc != GS_OK)
            return rc;
    }
    c->row[c->len] = row;
    c->col[c->len] = col;
    c->val[c->len] = val;
    c->len++;
    return GS_OK;
}

void gs_spmat_free(gs_spmat *a)
{
    if (!a)
        return;
    free(a->colptr);
    free(a->rowind);
    free(a->val);
    free(a->label);
    free(a->dof);
    memset(a, 0, sizeof *a);
}

static gs_err sp_alloc(gs_spmat *a, int64_t n, size_t nnz, gs_error *err)
{
    memset(a, 0, sizeof *a);
    a->n = n;
    a->colptr = calloc((size_t)n + 1, sizeof *a->colptr);
    a->rowind = malloc((nnz ? nnz : 1) * sizeof *a->rowind);
    a->val = malloc((nnz ? nnz : 1) * sizeof *a->val);
    if (!a->colptr || !a->rowind || !a->val) {
        gs_spmat_free(a);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a sparse %" PRId64
                         " x %" PRId64 " matrix with %zu entries", n, n, nnz);
    }
    return GS_OK;
}

/* 1 if the triplets are in CSC order already: columns ascending, rows
 * strictly ascending within each (no duplicates), as entry-per-line files
 * written column by column come (gapsim's own Matrix Market). O(len). */
static int coo_in_csc_order(const gs_coo *c)
{
    for (size_t k = 1; k < c->len; k++)
        if (c->col[k] < c->col[k - 1] || (c->col[k] == c->col[k - 1] && c->row[k] <= c->row[k - 1]))
            return 0;
    return 1;
}

/* CSC of triplets in CSC order: one pass, O(len + n), taking over the
 * builder's row and value arrays (int64_t rows are CHOLMOD_LONG's) instead
 * of copying them. The sorts below move every entry twice through random
 * addresses into new arrays: 2.8 million entries in ~0.6 s against ~0.05 s
 * here. */
static gs_err sp_build_ordered(gs_coo *c, int64_t n, gs_spmat *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (!(out->colptr = calloc((size_t)n + 1, sizeof *out->colptr)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a sparse %" PRId64 " x %" PRId64
                         " matrix", n, n);
    for (size_t k = 0; k < c->len; k++)
        out->colptr[c->col[k] + 1]++;
    for (int64_t j = 0; j < n; j++)
        out->colptr[j + 1] += out->colptr[j];
    out->nnz = (int64_t)c->len;
    if (!c->len) { /* sp_alloc's one-entry arrays: nothing to take */
        free(out->colptr);
        return sp_alloc(out, n, 0, err);
    }
    out->rowind = c->row;
    out->val = c->val;
    c->row = NULL;
    c->val = NULL;
    c->len = c->cap = 0;
    return GS_OK;
}

/* CSC of the triplets, rows ascending per column, duplicates summed.
 * In CSC order already: sp_build_ordered (which empties c). Otherwise a
 * counting sort by row, then a stable counting sort by column: O(len + n). */
static gs_err sp_build(gs_coo *c, int64_t n, gs_spmat *out, gs_error *err)
{
    if (coo_in_csc_order(c))
        return sp_build_ordered(c, n, out, err);
    const size_t len = c->len;
    size_t *cnt = calloc((size_t)n + 1, sizeof *cnt);
    size_t *by_row = malloc((len ? len : 1) * sizeof *by_row);
    size_t *by_col = malloc((len ? len : 1) * sizeof *by_col);
    gs_err rc = GS_OK;
    if (!cnt || !by_row || !by_col) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory to sort %zu matrix entries", len);
        goto done;
    }
    for (size_t k = 0; k < len; k++)
        cnt[c->row[k] + 1]++;
    for (int64_t i = 0; i < n; i++)
        cnt[i + 1] += cnt[i];
    for (size_t k = 0; k < len; k++)
        by_row[cnt[c->row[k]]++] = k;
    memset(cnt, 0, ((size_t)n + 1) * sizeof *cnt);
    for (size_t k = 0; k < len; k++)
        cnt[c->col[k] + 1]++;
    for (int64_t j = 0; j < n; j++)
        cnt[j + 1] += cnt[j];
    for (size_t t = 0; t < len; t++) {
        size_t k = by_row[t];
        by_col[cnt[c->col[k]]++] = k;
    }
    /* now by_col lists entries column by column, rows ascending: merge duplicates */
    size_t uniq = 0;
    for (size_t t = 0; t < len; t++)
        if (t == 0 || c->col[by_col[t]] != c->col[by_col[t - 1]] ||
            c->row[by_col[t]] != c->row[by_col[t - 1]])
            uniq++;
    if ((rc = sp_alloc(out, n, uniq, err)) != GS_OK)
        goto done;
    size_t w = 0;
    for (size_t t = 0; t < len; t++) {
        size_t k = by_col[t];
        if (w && out->rowind[w - 1] == c->row[k] && c->col[by_col[t - 1]] == c->col[k]) {
            out->val[w - 1] += c->val[k];
            continue;
        }
        out->rowind[w] = c->row[k];
        out->val[w] = c->val[k];
        out->colptr[c->col[k] + 1]++;
        w++;
    }
    for (int64_t j = 0; j < n; j++)
        out->colptr[j + 1] += out->colptr[j];
    out->nnz = (int64_t)w;
done:
    free(cnt);
    free(by_row);
    free(by_col);
    return rc;
}

/* Position of entry (i, j) of a CSC matrix, or -1 if it is not stored.
 * O(log nnz_j). */
static int64_t sp_find(const gs_spmat *a, int64_t i, int64_t j)
{
    int64_t lo = a->colptr[j], hi = a->colptr[j + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a->rowind[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->colptr[j + 1] && a->rowind[lo] == i ? lo : -1;
}

/* Value at (i, j) (0 if absent). */
static double sp_at(const gs_spmat *a, int64_t i, int64_t j)
{
    const int64_t p = sp_find(a, i, j);
    return p >= 0 ? a->val[p] : 0.0;
}

/* Both triangles given: every entry must equal its mirror; keep the lower one. */
static gs_err sp_fold_square(gs_spmat *g, gs_error *err)
{
    char ri[64], rj[64];
    for (int64_t j = 0; j < g->n; j++)
        for (int64_t p = g->colptr[j]; p < g->colptr[j + 1]; p++) {
            int64_t i = g->rowind[p];
            double m = sp_at(g, j, i);
            if (i != j && g->val[p] != m) {
                gs_spmat_row_name(g, i, ri, sizeof ri);
                gs_spmat_row_name(g, j, rj, sizeof rj);
                return gs_errorf(err, GS_ERR_NOT_SYMMETRIC, "",
                                 "entry (%s, %s) = %.17g differs from its mirror %.17g: give one "
                                 "triangle of a symmetric matrix, or both with equal entries",
                                 ri, rj, g->val[p], m);
            }
        }
    int64_t w = 0;
    for (int64_t j = 0; j < g->n; j++) {
        int64_t p0 = g->colptr[j];
        g->colptr[j] = w;
        for (int64_t p = p0; p < g->colptr[j + 1]; p++)
            if (g->rowind[p] >= j) {
                g->rowind[w] = g->rowind[p];
                g->val[w++] = g->val[p];
            }
    }
    g->colptr[g->n] = w;
    g->nnz = w;
    return GS_OK;
}

/* 1 if some off-diagonal entry of g has its mirror stored too: the file
 * gave both triangles (each term twice). O(nnz log). */
static int sp_any_mirrored(const gs_spmat *g)
{
    for (int64_t j = 0; j < g->n; j++)
        for (int64_t p = g->colptr[j]; p < g->colptr[j + 1]; p++)
            if (g->rowind[p] != j && sp_find(g, j, g->rowind[p]) >= 0)
                return 1;
    return 0;
}

/* Every term given once, some below the diagonal and some above (an FE
 * tool writes one triangle in its own equation order, which the sort by
 * node label and DOF turns into a mix): each entry moved to the lower
 * triangle. O(nnz + n), a second copy of the entries while it runs. */
static gs_err sp_fold_singles(gs_spmat *g, gs_error *err)
{
    gs_coo c;
    gs_coo_init(&c, (size_t)g->nnz);
    gs_err rc = gs_coo_reserve(&c, (size_t)g->nnz, err);
    for (int64_t j = 0; rc == GS_OK && j < g->n; j++)
        for (int64_t p = g->colptr[j]; rc == GS_OK && p < g->colptr[j + 1]; p++) {
            const int64_t i = g->rowind[p];
            rc = gs_coo_add(&c, i > j ? i : j, i > j ? j : i, g->val[p], err);
        }
    gs_spmat lower;
    if (rc == GS_OK && (rc = sp_build(&c, g->n, &lower, err)) == GS_OK) {
        free(g->colptr);
        free(g->rowind);
        free(g->val);
        g->colptr = lower.colptr;
        g->rowind = lower.rowind;
        g->val = lower.val;
        g->nnz = lower.nnz;
    }
    gs_coo_free(&c);
    return rc;
}

gs_err gs_coo_to_spmat(gs_coo *c, int64_t n, gs_coo_sym sym, int64_t *label, int *dof,
                       gs_spmat *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    size_t upper = 0, lower = 0;
    for (size_t k = 0; k < c->len; k++) {
        upper += c->row[k] < c->col[k];
        lower += c->row[k] > c->col[k];
    }
    if (sym == GS_COO_SYMMETRIC && upper && !lower) /* the upper triangle: mirror it */
        for (size_t k = 0; k < c->len; k++) {
            int64_t t = c->row[k];
            c->row[k] = c->col[k];
            c->col[k] = t;
        }
    gs_err rc = sp_build(c, n, out, err);
    gs_coo_free(c);
    if (rc != GS_OK) {
        free(label);
        free(dof);
        return rc;
    }
    out->label = label;
    out->dof = dof;
    if (sym == GS_COO_SYMMETRIC) {
        out->stype = -1;
        /* both triangles: each term twice, equal; a mix of single terms
         * (one triangle in another order than the labels'): mirrored */
        if (upper && lower &&
            (rc = sp_any_mirrored(out) ? sp_fold_square(out, err) : sp_fold_singles(out, err)) !=
                GS_OK)
            gs_spmat_free(out);
    }
    return rc;
}

void gs_spmat_to_dense(const gs_spmat *a, double *colmajor)
{
    const size_t n = (size_t)a->n;
    memset(colmajor, 0, n * n * sizeof *colmajor);
    for (size_t j = 0; j < n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            size_t i = (size_t)a->rowind[p];
            colmajor[j * n + i] = a->val[p];
            if (a->stype == -1)
                colmajor[i * n + j] = a->val[p];
        }
}

gs_err gs_spmat_from_dense(const double *rowmajor, int64_t n, gs_spmat *out, gs_error *err)
{
    const size_t nn = (size_t)n;
    size_t nnz = 0;
    for (size_t k = 0; k < nn * nn; k++)
        nnz += rowmajor[k] != 0.0;
    gs_err rc = sp_alloc(out, n, nnz, err);
    if (rc != GS_OK)
        return rc;
    size_t w = 0;
    for (size_t j = 0; j < nn; j++) {
        for (size_t i = 0; i < nn; i++)
            if (rowmajor[i * nn + j] != 0.0) {
                out->rowind[w] = (int64_t)i;
                out->val[w++] = rowmajor[i * nn + j];
            }
        out->colptr[j + 1] = (int64_t)w;
    }
    out->nnz = (int64_t)w;
    return GS_OK;
}

void gs_spmat_row_name(const gs_spmat *a, int64_t r, char *out, size_t cap)
{
    if (a->label && a->dof)
        snprintf(out, cap, "node %" PRId64 " dof %d", a->label[r], a->dof[r]);
    else
        snprintf(out, cap, "row %" PRId64, r + 1);
}

int64_t gs_spmat_find_row(const gs_spmat *a, int64_t label, int dof)
{
    if (!a->label || !a->dof)
        return -1;
    int sorted = 1;
    for (int64_t r = 1; r < a->n && sorted; r++)
        sorted = a->label[r - 1] < a->label[r] ||
                 (a->label[r - 1] == a->label[r] && a->dof[r - 1] < a->dof[r]);
    if (!sorted) {
        for (int64_t r = 0; r < a->n; r++)
            if (a->label[r] == label && a->dof[r] == dof)
                return r;
        return -1;
    }
    int64_t lo = 0, hi = a->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a->label[mid] < label || (a->label[mid] == label && a->dof[mid] < dof))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->n && a->label[lo] == label && a->dof[lo] == dof ? lo : -1;
}

/* out (stype 0) = the symmetric matrix of a's entries with i >= j (nnz of
 * them, counting the off-diagonal ones twice). Column c holds the mirrors
 * (c, j) of the columns j < c, met in ascending j, then a's own entries
 * i >= c (ascending in a): rows strictly ascending, the layout sp_build
 * gave the triplets it replaces. Two passes, O(nnz(a) + n). */
static gs_err sp_mirror_lower(const gs_spmat *a, size_t nnz, gs_spmat *out, gs_error *err)
{
    const int64_t n = a->n;
    int64_t *next = calloc((size_t)n + 1, sizeof *next); /* a column's next mirror slot */
    gs_err rc = next ? sp_alloc(out, n, nnz, err)
                     : gs_errorf(err, GS_ERR_NOMEM, "", "no memory to mirror %" PRId64 " rows", n);
    if (rc != GS_OK) {
        free(next);
        return rc;
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            const int64_t i = a->rowind[p];
            if (i >= j) {
                out->colptr[j + 1]++;
                if (i > j)
                    out->colptr[i + 1]++;
            }
        }
    for (int64_t j = 0; j < n; j++) {
        out->colptr[j + 1] += out->colptr[j];
        next[j] = out->colptr[j];
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t own = 0;
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            own += a->rowind[p] >= j;
        int64_t w = out->colptr[j + 1] - own;
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            const int64_t i = a->rowind[p];
            if (i < j)
                continue; /* the lower triangle stands for both */
            out->rowind[w] = i;
            out->val[w++] = a->val[p];
            if (i > j) {
                out->rowind[next[i]] = j;
                out->val[next[i]++] = a->val[p];
            }
        }
    }
    out->nnz = out->colptr[n];
    free(next);
    return GS_OK;
}

gs_err gs_spmat_symmetric_full(const gs_spmat *a, double rtol, gs_spmat *out, gs_error *err)
{
    char ri[64], rj[64];
    memset(out, 0, sizeof *out);
    double amax = 0.0;
    int64_t lower = 0, diag = 0;
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            const int64_t i = a->rowind[p];
            if (!isfinite(a->val[p])) {
                gs_spmat_row_name(a, i, ri, sizeof ri);
                gs_spmat_row_name(a, j, rj, sizeof rj);
                return gs_errorf(err, GS_ERR_NONFINITE, "", "non-finite entry %g at (%s, %s)",
                                 a->val[p], ri, rj);
            }
            amax = fmax(amax, fabs(a->val[p]));
            lower += i > j;
            diag += i == j;
        }
    if (a->stype == 0) { /* both triangles given: each must match its mirror */
        const double tol = rtol * amax;
        for (int64_t j = 0; j < a->n; j++)
            for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
                const int64_t i = a->rowind[p];
                const double m = sp_at(a, j, i);
                if (i != j && fabs(a->val[p] - m) > tol) {
                    gs_spmat_row_name(a, i, ri, sizeof ri);
                    gs_spmat_row_name(a, j, rj, sizeof rj);
                    return gs_errorf(err, GS_ERR_NOT_SYMMETRIC, "",
                                     "entry (%s, %s) = %.17g differs from its mirror %.17g "
                                     "(tolerance %.3g)", ri, rj, a->val[p], m, tol);
                }
            }
    }
    gs_err rc = sp_mirror_lower(a, (size_t)(2 * lower + diag), out, err);
    if (rc == GS_OK && a->label && a->dof) {
        out->label = malloc((size_t)a->n * sizeof *out->label);
        out->dof = malloc((size_t)a->n * sizeof *out->dof);
        if (!out->label || !out->dof)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for row labels");
        else {
            memcpy(out->label, a->label, (size_t)a->n * sizeof *out->label);
            memcpy(out->dof, a->dof, (size_t)a->n * sizeof *out->dof);
        }
    }
    if (rc != GS_OK)
        gs_spmat_free(out);
    return rc;
}

void gs_spmat_mul(const gs_spmat *a, const double *x, double *y)
{
    memset(y, 0, (size_t)a->n * sizeof *y);
    for (int64_t j = 0; j < a->n; j++) {
        const double xj = x[j];
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            y[a->rowind[p]] += a->val[p] * xj;
    }
}

void gs_spmat_col_axpy(const gs_spmat *a, int64_t j, double alpha, double *y)
{
    for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
        y[a->rowind[p]] += alpha * a->val[p];
}

double gs_spmat_norm1(const gs_spmat *a)
{
    double best = 0.0;
    for (int64_t j = 0; j < a->n; j++) {
        double s = 0.0;
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            s += fabs(a->val[p]);
        best = fmax(best, s);
    }
    return best;
}

int gs_spmat_equal(const gs_spmat *a, const gs_spmat *b)
{
    if (a->n != b->n || a->nnz != b->nnz || a->stype != b->stype)
        return 0;
    const size_t n = (size_t)a->n, z = (size_t)a->nnz;
    return !memcmp(a->colptr, b->colptr, (n + 1) * sizeof *a->colptr) &&
           !memcmp(a->rowind, b->rowind, z * sizeof *a->rowind) &&
           !memcmp(a->val, b->val, z * sizeof *a->val);
}
