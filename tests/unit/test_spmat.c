/*
 * test_spmat.c -- triplets to CSC and the symmetric expansion (core/spmat.c):
 * triplets in CSC order (the one-pass path that takes the builder's arrays)
 * and the same triplets shuffled, with duplicates (the counting sorts)
 * build the same matrix bit for bit; gs_spmat_symmetric_full
 * of a lower triangle, of a matrix with both triangles and of an empty
 * matrix against a dense expansion, entry by entry, with rows strictly
 * ascending in every column.
 */
#include "gs_test.h"
#include "spmat.h"

enum { N = 40 };

/* A symmetric N x N test matrix: a banded pattern with a few long-range
 * couplings, entries i >= j only (0 off the pattern). */
static double entry(int i, int j)
{
    if (i < j)
        return entry(j, i);
    if (i == j)
        return 10.0 + i;
    if (i - j <= 3 || (i * 7 + j) % 11 == 0)
        return -1.0 / (1 + i + 2 * j);
    return 0.0;
}

/* rows strictly ascending in every column; colptr consistent */
static int csc_valid(const gs_spmat *a)
{
    if (a->colptr[0] != 0 || a->colptr[a->n] != a->nnz)
        return 0;
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j] + 1; p < a->colptr[j + 1]; p++)
            if (a->rowind[p] <= a->rowind[p - 1])
                return 0;
    return 1;
}

/* The lower triangle in CSC order, or shuffled with every fifth
 * off-diagonal entry split in two halves (duplicates to sum). */
static void fill(gs_coo *c, int shuffled)
{
    gs_error e = {0};
    int64_t k = 0;
    for (int j = 0; j < N; j++)
        for (int i = j; i < N; i++)
            if (entry(i, j) != 0.0) {
                if (!shuffled) {
                    gs_coo_add(c, i, j, entry(i, j), &e);
                    continue;
                }
                if (k++ % 5 == 0 && i != j) { /* as two halves: exact in binary */
                    gs_coo_add(c, i, j, entry(i, j) / 2, &e);
                    gs_coo_add(c, i, j, entry(i, j) / 2, &e);
                } else {
                    gs_coo_add(c, i, j, entry(i, j), &e);
                }
            }
    if (shuffled) /* a fixed permutation: reverse, then swap pairs */
        for (size_t a = 0, b = c->len - 1; a < b; a++, b--) {
            int64_t r = c->row[a], q = c->col[a];
            double v = c->val[a];
            c->row[a] = c->row[b], c->col[a] = c->col[b], c->val[a] = c->val[b];
            c->row[b] = r, c->col[b] = q, c->val[b] = v;
        }
}

GS_TEST(coo_in_csc_order_and_shuffled_same_matrix)
{
    gs_error e = {0};
    gs_coo c1, c2;
    gs_coo_init(&c1, SIZE_MAX);
    gs_coo_init(&c2, SIZE_MAX);
    fill(&c1, 0);
    fill(&c2, 1);
    GS_CHECK(c2.len > c1.len); /* the halves */
    gs_spmat a, b;
    GS_CHECK_INT(gs_coo_to_spmat(&c1, N, GS_COO_SYMMETRIC, NULL, NULL, &a, &e), GS_OK);
    GS_CHECK_INT(gs_coo_to_spmat(&c2, N, GS_COO_SYMMETRIC, NULL, NULL, &b, &e), GS_OK);
    GS_CHECK(c1.row == NULL && c1.len == 0 && c2.len == 0); /* emptied either way */
    GS_CHECK(csc_valid(&a) && csc_valid(&b));
    GS_CHECK(gs_spmat_equal(&a, &b));
    GS_CHECK_INT((int)a.stype, -1);
    for (int64_t j = 0; j < N; j++)
        for (int64_t p = a.colptr[j]; p < a.colptr[j + 1]; p++)
            GS_CHECK(a.val[p] == entry((int)a.rowind[p], (int)j));
    gs_spmat_free(&a);
    gs_spmat_free(&b);
}

/* An entry repeated in CSC order is not "strictly ascending": the sorts sum it. */
GS_TEST(coo_repeated_entry_summed)
{
    gs_error e = {0};
    gs_coo c;
    gs_coo_init(&c, SIZE_MAX);
    gs_coo_add(&c, 0, 0, 1.0, &e);
    gs_coo_add(&c, 1, 0, 2.0, &e);
    gs_coo_add(&c, 1, 0, 0.5, &e);
    gs_coo_add(&c, 1, 1, 4.0, &e);
    gs_spmat a;
    GS_CHECK_INT(gs_coo_to_spmat(&c, 2, GS_COO_GENERAL, NULL, NULL, &a, &e), GS_OK);
    GS_CHECK_INT((int)a.nnz, 3);
    GS_CHECK(a.val[0] == 1.0 && a.val[1] == 2.5 && a.val[2] == 4.0);
    GS_CHECK(a.rowind[0] == 0 && a.rowind[1] == 1 && a.rowind[2] == 1);
    gs_spmat_free(&a);
}

/* full(a) against the dense expansion of the symmetric matrix. */
static int full_matches(const gs_spmat *a, int n)
{
    gs_error e = {0};
    gs_spmat f;
    if (gs_spmat_symmetric_full(a, 1e-12, &f, &e) != GS_OK)
        return 0;
    double *d = calloc((size_t)n * n + 1, sizeof *d);
    int ok = d && f.stype == 0 && f.n == n && csc_valid(&f);
    for (int64_t j = 0; ok && j < n; j++)
        for (int64_t p = f.colptr[j]; p < f.colptr[j + 1]; p++)
            d[j * n + f.rowind[p]] = f.val[p];
    int64_t nnz = 0;
    for (int j = 0; ok && j < n; j++)
        for (int i = 0; i < n; i++) {
            ok = ok && d[(size_t)j * n + i] == entry(i, j);
            nnz += entry(i, j) != 0.0;
        }
    ok = ok && f.nnz == nnz;
    free(d);
    gs_spmat_free(&f);
    return ok;
}

GS_TEST(symmetric_full_from_lower_and_both)
{
    gs_error e = {0};
    gs_coo c;
    gs_coo_init(&c, SIZE_MAX);
    fill(&c, 0);
    gs_spmat lower;
    GS_CHECK_INT(gs_coo_to_spmat(&c, N, GS_COO_SYMMETRIC, NULL, NULL, &lower, &e), GS_OK);
    GS_CHECK(full_matches(&lower, N));
    /* both triangles stored (stype 0): the same full matrix */
    gs_coo_init(&c, SIZE_MAX);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            if (entry(i, j) != 0.0)
                gs_coo_add(&c, i, j, entry(i, j), &e);
    gs_spmat both;
    GS_CHECK_INT(gs_coo_to_spmat(&c, N, GS_COO_GENERAL, NULL, NULL, &both, &e), GS_OK);
    GS_CHECK(full_matches(&both, N));
    gs_spmat_free(&lower);
    gs_spmat_free(&both);
    /* no entries at all */
    gs_coo_init(&c, SIZE_MAX);
    gs_spmat z, fz;
    GS_CHECK_INT(gs_coo_to_spmat(&c, 3, GS_COO_SYMMETRIC, NULL, NULL, &z, &e), GS_OK);
    GS_CHECK_INT(gs_spmat_symmetric_full(&z, 1e-12, &fz, &e), GS_OK);
    GS_CHECK(fz.nnz == 0 && fz.colptr[3] == 0);
    gs_spmat_free(&z);
    gs_spmat_free(&fz);
}

GS_TEST_MAIN()
