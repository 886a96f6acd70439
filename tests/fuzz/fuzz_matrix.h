/*
 * fuzz_matrix.h -- checks shared by the FE matrix reader targets
 * (fuzz_abaqus.c, fuzz_dmig.c, fuzz_npz.c): an error has a code and a
 * message naming its place; an accepted matrix is a well-formed CSC within
 * the limits (column pointers monotone, rows strictly increasing and in
 * range, the lower triangle only when stype is -1, labels when promised);
 * and a finite symmetric one, written back as Abaqus COORDINATE text with
 * %.17g, reads back bit-identical.
 */
#ifndef GS_FUZZ_MATRIX_H
#define GS_FUZZ_MATRIX_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"
#include "matrix_io.h"

#define FZM_MAX_N 64
#define FZM_MAX_NNZ 4096

static inline gs_matread_opts fzm_opts(const char *name)
{
    return (gs_matread_opts){.max_n = FZM_MAX_N, .max_nnz = FZM_MAX_NNZ, .name = name};
}

static inline void fzm_check_error(gs_err rc, const gs_error *e)
{
    GS_FUZZ_ASSERT(rc > GS_OK && rc < GS_ERR__COUNT);
    GS_FUZZ_ASSERT(e->code == rc);
    GS_FUZZ_ASSERT(e->msg[0] != '\0');
    GS_FUZZ_ASSERT(memchr(e->msg, '\0', sizeof e->msg) != NULL);
}

static inline void fzm_check_matrix(const gs_spmat *a, int labelled)
{
    GS_FUZZ_ASSERT(a->n >= 0 && a->n <= FZM_MAX_N);
    GS_FUZZ_ASSERT(a->stype == 0 || a->stype == -1);
    GS_FUZZ_ASSERT(a->colptr && a->colptr[0] == 0 && a->colptr[a->n] == a->nnz);
    for (int64_t j = 0; j < a->n; j++) {
        GS_FUZZ_ASSERT(a->colptr[j] <= a->colptr[j + 1]);
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++) {
            GS_FUZZ_ASSERT(a->rowind[p] >= 0 && a->rowind[p] < a->n);
            GS_FUZZ_ASSERT(p == a->colptr[j] || a->rowind[p] > a->rowind[p - 1]);
            GS_FUZZ_ASSERT(a->stype == 0 || a->rowind[p] >= j);
        }
    }
    GS_FUZZ_ASSERT(labelled ? (a->label && a->dof) : (!a->label && !a->dof));
    for (int64_t r = 0; labelled && r < a->n; r++) {
        GS_FUZZ_ASSERT(a->dof[r] >= 0 && a->dof[r] <= 99);
        if (r && gs_spmat_find_row(a, a->label[r], a->dof[r]) != r)
            GS_FUZZ_ASSERT(0 && "labels not unique");
    }
}

/* Finite symmetric matrices: COORDINATE text round trip, bit-identical. */
static inline void fzm_roundtrip(const gs_spmat *a)
{
    if (a->stype != -1 || a->nnz == 0)
        return;
    for (int64_t p = 0; p < a->nnz; p++)
        if (!isfinite(a->val[p]))
            return;
    /* the last column must hold an entry so that the order is kept */
    int last = 0;
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            last |= a->rowind[p] == a->n - 1;
    if (!last)
        return;
    size_t cap = (size_t)a->nnz * 64 + 1, len = 0;
    char *text = malloc(cap);
    GS_FUZZ_ASSERT(text != NULL);
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t p = a->colptr[j]; p < a->colptr[j + 1]; p++)
            len += (size_t)snprintf(text + len, cap - len, "%lld, %lld, %.17g\n",
                                    (long long)a->rowind[p] + 1, (long long)j + 1, a->val[p]);
    gs_spmat b;
    gs_error e;
    gs_matread_opts o = fzm_opts(NULL);
    gs_err rc = gs_matrix_read_mem(text, len, "abaqus-coordinate", &o, &b, &e);
    if (rc != GS_OK)
        fprintf(stderr, "fuzz: round trip failed: %s\n", e.msg);
    GS_FUZZ_ASSERT(rc == GS_OK);
    GS_FUZZ_ASSERT(b.n == a->n && b.nnz == a->nnz && b.stype == -1);
    GS_FUZZ_ASSERT(memcmp(b.colptr, a->colptr, (size_t)(a->n + 1) * sizeof *a->colptr) == 0);
    GS_FUZZ_ASSERT(memcmp(b.rowind, a->rowind, (size_t)a->nnz * sizeof *a->rowind) == 0);
    GS_FUZZ_ASSERT(memcmp(b.val, a->val, (size_t)a->nnz * sizeof *a->val) == 0);
    gs_spmat_free(&b);
    free(text);
}

/* Read as fmt; check everything; 1 if accepted. */
static inline int fzm_run(const uint8_t *data, size_t size, const char *fmt, const char *name,
                          int labelled)
{
    gs_spmat a;
    gs_error e;
    gs_matread_opts o = fzm_opts(name);
    gs_err rc = gs_matrix_read_mem(data, size, fmt, &o, &a, &e);
    if (rc != GS_OK) {
        fzm_check_error(rc, &e);
        GS_FUZZ_ASSERT(a.colptr == NULL && a.label == NULL);
        return 0;
    }
    fzm_check_matrix(&a, labelled);
    fzm_roundtrip(&a);
    gs_spmat_free(&a);
    return 1;
}

#endif
