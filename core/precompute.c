/*
 * precompute.c -- Cholesky of the K blocks, Q = A'K^-1 A and its factor, u0,
 * condition estimates (see precompute.h for the stages and their cost).
 */
#include "precompute.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"
#include "precomp_check.h"

/* Release the blocks' diagonals kept for the check (precomp_check.h). */
static void free_kdiag(gs_precomp *pc)
{
    if (pc->kdiag)
        for (int b = 0; b < pc->mdl->n_parts; b++)
            free(pc->kdiag[b]);
    free(pc->kdiag);
    pc->kdiag = NULL;
}

void gs_precomp_free(gs_precomp *pc)
{
    if (!pc)
        return;
    if (pc->L)
        for (int b = 0; b < pc->mdl->n_parts; b++)
            free(pc->L[b]);
    free(pc->L);
    if (pc->F)
        for (int b = 0; b < pc->mdl->n_parts; b++)
            gs_spchol_free(pc->F[b]);
    free(pc->F);
    free(pc->Q);
    free(pc->LQ);
    free(pc->qdiag);
    free(pc->u0);
    free(pc->cond_block);
    free_kdiag(pc);
    free(pc);
}

static double *alloc_square(int n)
{
    size_t nn = gs_mul_size((size_t)n, (size_t)n);
    if (n > 0 && nn == 0)
        return NULL;
    return gs_alloc_matrix(nn, sizeof(double), 1);
}

/* The contact DOFs of part b (its local rows with an entry of A) into R
 * (room for n_b), ascending; pos (n_b): row -> its index in R, or -1.
 * Returns their number. O(n_b + m). */
static int part_contact_rows(const gs_model *mdl, int b, int *R, int *pos)
{
    const int nb = mdl->parts[b].ndof, off = mdl->parts[b].offset;
    for (int r = 0; r < nb; r++)
        pos[r] = -1;
    for (int k = 0; k < mdl->m; k++)
        for (int s = 0; s < 2; s++)
            if (mdl->pair_parts[2 * k + s] == b)
                pos[mdl->a_row[2 * k + s] - off] = 0;
    int nr = 0;
    for (int r = 0; r < nb; r++)
        if (pos[r] == 0) {
            pos[r] = nr;
            R[nr++] = r;
        }
    return nr;
}

/* A sparse part's factor (CHOLMOD; its contact DOFs ordered last when that
 * makes Q's term cheaper, spchol.h) and norm; *rc (rc not NULL): the
 * reciprocal 1-norm condition estimate from the factor (gs_spchol_rcond1,
 * a few solves), *t_cond its seconds. Single-threaded BLAS: the factor (and so
 * Q's term from it) does not depend on the thread count, at no cost (two
 * BLAS threads gained nothing on CHOLMOD's supernodes: two 201,390-DOF
 * plates 5.7 s on one, 5.8 s on two); parts run side by side instead
 * (factor_parts). */
static gs_err factor_sparse_part(gs_precomp *pc, int b, double *anorm, double *rc,
                                 double *t_cond, gs_error *err)
{
    char field[48];
    snprintf(field, sizeof field, "parts[%d].K", b);
    const gs_spmat *K = pc->mdl->parts[b].Ksp;
    const int nb = pc->mdl->parts[b].ndof;
    int *R = malloc(sizeof(int) * (size_t)nb), *pos = malloc(sizeof(int) * (size_t)nb);
    gs_err e = R && pos ? GS_OK : gs_errorf(err, GS_ERR_NOMEM, field, "no memory");
    const int threads = gs_blas_get_threads(); /* see the comment above */
    gs_blas_set_threads(1);
    if (e == GS_OK)
        e = gs_spchol_factor(K, field, R, part_contact_rows(pc->mdl, b, R, pos), -1, &pc->F[b],
                             err);
    gs_blas_set_threads(threads);
    free(R);
    free(pos);
    if (e != GS_OK)
        return e;
    *anorm = gs_spmat_norm1(K);
    if (!rc)
        return GS_OK;
    const double t0 = gs_now();
    e = gs_spchol_rcond1(pc->F[b], *anorm, rc, err);
    *t_cond = gs_now() - t0;
    return e;
}

/* One dense part: L_b = chol(K_b), its 1-norm and LAPACK's estimate of
 * its reciprocal condition; *t_cond the estimate's seconds. */
static gs_err factor_dense_part(gs_precomp *pc, int b, double *anorm, double *rc, double *t_cond,
                                gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    const int nb = mdl->parts[b].ndof;
    char field[48];
    snprintf(field, sizeof field, "parts[%d].K", b);
    if (pc->taken && pc->taken[b]) { /* factored in place: the block is the factor's */
        pc->L[b] = pc->taken[b];
        pc->taken[b] = NULL;
    } else {
        pc->L[b] = alloc_square(nb);
        if (!pc->L[b])
            return gs_errorf(err, GS_ERR_NOMEM, field, "no memory for the factor of part %d", b);
        memcpy(pc->L[b], mdl->parts[b].K, (size_t)nb * nb * sizeof(double));
    }
    *anorm = gs_sym_norm1(pc->L[b], nb, nb); /* K_b's, before dpotrf */
    /* K_b's diagonal, which dpotrf overwrites (not the upper triangle): for
     * the pivots below and for the check (pc->kdiag keeps it) */
    double *diag = malloc((size_t)nb * sizeof(double));
    if (!diag)
        return gs_errorf(err, GS_ERR_NOMEM, field, "no memory");
    for (int i = 0; i < nb; i++)
        diag[i] = pc->L[b][(size_t)i * nb + i];
    gs_err e = gs_chol(pc->L[b], nb, nb, field, err);
    double ratio;
    const int i = e == GS_OK ? gs_chol_small_pivot(pc->L[b], nb, nb, diag, 1, &ratio) : -1;
    if (i >= 0) { /* dpotrf passed it: numerically singular all the same */
        gs_errorf(err, GS_ERR_NOT_SPD, field,
                  "not positive definite to working precision: row %d depends on the rows "
                  "before it (relative Cholesky pivot %.3g; a rigid-body mode or a missing "
                  "boundary condition?)", i, ratio);
        if (err)
            err->lapack_info = i + 1;
        e = GS_ERR_NOT_SPD;
    }
    if (e == GS_OK && pc->kdiag)
        pc->kdiag[b] = diag;
    else
        free(diag);
    if (e != GS_OK)
        return e;
    double t0 = gs_now();
    e = gs_chol_rcond(pc->L[b], nb, nb, *anorm, rc, field, err);
    *t_cond = gs_now() - t0;
    return e;
}

/* Part b's factor, dense or sparse, and (rc not NULL; a dense part always)
 * its condition estimate, *t_cond the estimate's seconds. */
static gs_err factor_part(gs_precomp *pc, int b, double *anorm, double *rc, double *t_cond,
                          gs_error *err)
{
    *t_cond = 0.0;
    return pc->mdl->parts[b].Ksp ? factor_sparse_part(pc, b, anorm, rc, t_cond, err)
                                 : factor_dense_part(pc, b, anorm, rc, t_cond, err);
}

/* The parts factored side by side, one part per thread with
 * single-threaded BLAS (as the inverses of build_Q): two 2,603-DOF blocks
 * in 0.2 s instead of 0.3 s one after the other with both threads in each
 * dpotrf, and the factors do not depend on the thread count. */
typedef struct {
    gs_precomp *pc;
    const int *parts;
    double *anorm, *rc, *t_cond;
} fac_job;

/* gs_run_items' item i: part parts[i]'s factor. */
static gs_err fac_item(void *ctx, int i, gs_error *err)
{
    fac_job *j = ctx;
    const int b = j->parts[i];
    return factor_part(j->pc, b, &j->anorm[b], j->rc ? &j->rc[b] : NULL, &j->t_cond[i], err);
}

/* Factor the parts listed in parts (np of them): in parallel when there are
 * two or more and threads > 1, else one after the other (a
 * dense part with threaded BLAS; a sparse part always single-threaded,
 * factor_sparse_part). The first failing part in list order is reported.
 * anorm[b], rc[b] for each listed part b (rc NULL: no estimate of a sparse
 * part's condition); *t_cond the estimates' seconds (side by side: the
 * longest). Writes nothing of pc but the
 * listed parts' factors: gs_precomp_factor_sparse runs beside solves. */
static gs_err factor_parts(gs_precomp *pc, const int *parts, int np, int threads,
                           double *anorm, double *rc, double *t_cond, gs_error *err)
{
    *t_cond = 0.0;
    if (np < 2 || threads < 2) {
        for (int i = 0; i < np; i++) {
            double tc = 0.0;
            const int b = parts[i];
            gs_err e = factor_part(pc, b, &anorm[b], rc ? &rc[b] : NULL, &tc, err);
            *t_cond += tc;
            if (e != GS_OK)
                return e;
        }
        return GS_OK;
    }
    fac_job j = {.pc = pc, .parts = parts, .anorm = anorm, .rc = rc};
    if (!(j.t_cond = calloc((size_t)np, sizeof *j.t_cond)))
        return gs_errorf(err, GS_ERR_NOMEM, "parts", "no memory");
    const gs_err rcode = gs_run_items(threads, 1, np, fac_item, &j, err);
    for (int i = 0; i < np; i++) /* the estimates ran side by side: the longest counts */
        *t_cond = fmax(*t_cond, j.t_cond[i]);
    free(j.t_cond);
    return rcode;
}

gs_err gs_precomp_factor_sparse(gs_precomp *pc, int threads, gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    const size_t np = (size_t)mdl->n_parts;
    if (!pc->F && !(pc->F = calloc(np, sizeof *pc->F)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    double *anorm = calloc(np + 1, sizeof *anorm);
    int *parts = malloc(sizeof(int) * (np + 1)), ns = 0;
    double t_cond; /* no estimate: the build made it, or was asked to defer the parts */
    gs_err e = anorm && parts ? GS_OK : gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    for (int b = 0; e == GS_OK && b < mdl->n_parts; b++)
        if (mdl->parts[b].Ksp && !pc->F[b])
            parts[ns++] = b;
    if (e == GS_OK && ns > 0) /* side by side, as in the build */
        e = factor_parts(pc, parts, ns, threads > 0 ? threads : gs_blas_get_threads(), anorm,
                         NULL, &t_cond, err);
    if (e == GS_OK) /* after every F[b]: a reader that sees 1 sees them */
        atomic_store_explicit(&pc->parts_ready, 1, memory_order_release);
    free(anorm);
    free(parts);
    return e;
}

/* Stage 1: factor every part, estimate its 1-norm condition (dense:
 * LAPACK's dpocon; sparse: the same estimator with solves, spchol.h). */
static gs_err factor_blocks(gs_precomp *pc, gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    const int np = mdl->n_parts;
    double *anorm = calloc((size_t)np, sizeof *anorm), *rc = calloc((size_t)np, sizeof *rc);
    int *parts = malloc(sizeof(int) * (size_t)np);
    gs_err e = GS_OK;
    if (!anorm || !rc || !parts)
        e = gs_errorf(err, GS_ERR_NOMEM, "parts", "no memory");
    for (int b = 0; b < np && e == GS_OK; b++)
        parts[b] = b;
    double t_cond = 0.0;
    if (e == GS_OK && np > 0)
        e = factor_parts(pc, parts, np, gs_blas_get_threads(), anorm, rc, &t_cond, err);
    pc->t.cond += t_cond;
    if (e == GS_OK)
        atomic_store_explicit(&pc->parts_ready, 1, memory_order_release);
    double inv_max = 0.0;
    for (int b = 0; b < np && e == GS_OK; b++) {
        pc->cond_block[b] = rc[b] > 0 ? 1.0 / rc[b] : INFINITY;
        if (anorm[b] > pc->normK1)
            pc->normK1 = anorm[b];
        double inv = rc[b] > 0 ? 1.0 / (rc[b] * anorm[b]) : INFINITY;
        if (!(inv < INFINITY)) { /* dpotrf passes 1e-320 I: its inverse is Inf */
            char field[48];
            snprintf(field, sizeof field, "parts[%d].K", b);
            e = gs_errorf(err, GS_ERR_SINGULAR, field,
                          "part %d's stiffness cannot be inverted in double precision: "
                          "|K|_1 = %.3g, reciprocal condition %.3g, so |K^-1|_1 overflows (a "
                          "block this small or this close to singular is no stiffness in N/mm)",
                          b, anorm[b], rc[b]);
        }
        if (inv > inv_max)
            inv_max = inv;
    }
    if (e == GS_OK)
        pc->cond_K = pc->normK1 * inv_max;
    free(anorm);
    free(rc);
    free(parts);
    return e;
}

/* Add the part's m_b x m_b term C (lower triangle, ld mb) into the lower
 * triangle of Q at the pairs cols (ascending, so ci >= cj is i >= j: column
 * by column, sequential). O(m_b^2). */
static void scatter_Q(gs_precomp *pc, const int *cols, int mb, const double *C)
{
    const int m = pc->m;
    for (int cj = 0; cj < mb; cj++)
        for (int ci = cj; ci < mb; ci++)
            pc->Q[(size_t)cols[cj] * m + cols[ci]] += C[(size_t)cj * mb + ci];
}

/* Q's upper triangle from its lower one, in 64 x 64 tiles (the transposed
 * writes stay in cache). O(m^2). */
static void mirror_Q(gs_precomp *pc)
{
    const int m = pc->m, T = 64;
    double *Q = pc->Q;
    for (int jb = 0; jb < m; jb += T)
        for (int ib = jb; ib < m; ib += T)
            for (int j = jb; j < jb + T && j < m; j++)
                for (int i = ib > j + 1 ? ib : j + 1; i < ib + T && i < m; i++)
                    Q[(size_t)i * m + j] = Q[(size_t)j * m + i];
}

/* Q += A_b' K_b^-1 A_b from W: K_b^-1 (lower triangle, n_b x n_b; pos NULL),
 * or (K_b^-1)[R, R] (nr x nr, both triangles; pos[row] = the row's index in
 * R), gathering the <= 2 x 2 entries each pair pair touches straight into
 * Q's lower triangle. O(m_b^2). */
static gs_err gather_part(gs_precomp *pc, int b, const int *cols, int mb, const double *W,
                          size_t ldw, const int *pos, gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    const int off = mdl->parts[b].offset;
    int *row = malloc(sizeof(int) * 2 * (size_t)mb);
    double *val = malloc(sizeof(double) * 2 * (size_t)mb);
    if (!row || !val) {
        free(row);
        free(val);
        return gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for Q's part-%d term", b);
    }
    for (int c = 0; c < mb; c++) { /* the pair's rows in W (-1: none) */
        const int k = cols[c];
        for (int s = 0; s < 2; s++) {
            int in = mdl->pair_parts[2 * k + s] == b, r = mdl->a_row[2 * k + s] - off;
            row[2 * c + s] = in ? (pos ? pos[r] : r) : -1;
            val[2 * c + s] = in ? mdl->a_val[2 * k + s] : 0.0;
        }
    }
    for (int cj = 0; cj < mb; cj++) /* lower triangle of W: W[max + min ldw] */
        for (int ci = cj; ci < mb; ci++) {
            double v = 0.0;
            for (int s = 0; s < 2; s++) {
                int r = row[2 * ci + s];
                if (r < 0)
                    continue;
                for (int t = 0; t < 2; t++) {
                    int q = row[2 * cj + t];
                    if (q < 0)
                        continue;
                    int hi = r > q ? r : q, lo = r > q ? q : r;
                    v += val[2 * ci + s] * val[2 * cj + t] * W[(size_t)lo * ldw + hi];
                }
            }
            pc->Q[(size_t)cols[cj] * pc->m + cols[ci]] += v;
        }
    free(row);
    free(val);
    return GS_OK;
}

/* A sparse part's term by the solves: R = the part's contact DOFs
 * (ascending), W = (K_b^-1)[R, R] by |R| sparse solves on every core
 * (gs_spchol_inv_sub, O(|R| 4 nnz(L_b))), then gathered, O(m_b^2); memory
 * |R|^2 + 2 n_b. */
static gs_err sparse_part_term(gs_precomp *pc, int b, const int *cols, int mb, gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    const int nb = mdl->parts[b].ndof;
    int *pos = malloc(sizeof(int) * (size_t)nb), *R = malloc(sizeof(int) * (size_t)nb);
    double *W = NULL;
    gs_err rc = GS_OK;
    if (!pos || !R) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for Q's part-%d term", b);
        goto done;
    }
    const int nr = part_contact_rows(mdl, b, R, pos);
    if (!(W = malloc(gs_mul_size((size_t)nr, (size_t)nr) * sizeof *W))) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for Q's part-%d term", b);
        goto done;
    }
    if ((rc = gs_spchol_inv_sub(pc->F[b], R, nr, W, gs_blas_get_threads(), err)) != GS_OK) {
        char field[48];
        snprintf(field, sizeof field, "parts[%d].K", b);
        if (err && err->field[0] == '\0')
            gs_error_prefix_field(err, field);
        goto done;
    }
    rc = gather_part(pc, b, cols, mb, W, (size_t)nr, pos, err);
done:
    free(pos);
    free(R);
    free(W);
    return rc;
}

/* The pairs with an entry in part b, ascending: returns m_b. O(m). */
static int part_cols(const gs_model *mdl, int b, int *cols)
{
    int mb = 0;
    for (int k = 0; k < mdl->m; k++)
        if (mdl->pair_parts[2 * k] == b || mdl->pair_parts[2 * k + 1] == b)
            cols[mb++] = k;
    return mb;
}

/* The explicit-inverse terms of Q: a dense part's K_b^-1 (dpotri on its
 * factor, 2 n_b^3 / 3 flops) or a sparse part's (K_b^-1)[R, R] by the
 * Schur route (its factor ordered the contact DOFs R last, 2 |R|^3 / 3),
 * one part per thread with single-threaded BLAS (a multi-threaded dpotri
 * rounds differently with each thread count, and gapsim promises
 * bit-identical results between gapsim-batch, gapsimd and gapsim-mpi).
 * Each worker gathers its part's term into Q under a lock as soon as its
 * inverse is done, and frees it: at most one inverse per thread is held.
 * The order of the gathers does not change Q's bits: a pair touches at
 * most two parts, so an entry of Q receives at most two terms, added to
 * 0, and a + b = b + a in floating point. */
typedef struct {
    gs_precomp *pc;
    const int *parts;
    pthread_mutex_t gather_mu;
} inv_job;

/* Gather part b's term from W (gather_part) under the job's lock. */
static gs_err gather_locked(inv_job *j, int b, const int *cols, int mb, const double *W,
                            size_t ldw, const int *pos, gs_error *err)
{
    pthread_mutex_lock(&j->gather_mu);
    const gs_err rc = gather_part(j->pc, b, cols, mb, W, ldw, pos, err);
    pthread_mutex_unlock(&j->gather_mu);
    return rc;
}

/* Sparse part b's term by the Schur route (R, pos: room for n_b each). */
static gs_err schur_term(inv_job *j, int b, const int *cols, int mb, int *R, int *pos,
                         gs_error *err)
{
    const int nr = part_contact_rows(j->pc->mdl, b, R, pos);
    double *W = malloc(gs_mul_size((size_t)nr, (size_t)nr) * sizeof *W);
    if (!W)
        return gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for Q's part-%d term", b);
    gs_err rc = gs_spchol_inv_sub(j->pc->F[b], R, nr, W, 1, err);
    if (rc == GS_OK)
        rc = gather_locked(j, b, cols, mb, W, (size_t)nr, pos, err);
    free(W);
    return rc;
}

/* Dense part b's term from K_b^-1 (dpotri on its factor). */
static gs_err dense_inverse_term(inv_job *j, int b, const int *cols, int mb, gs_error *err)
{
    const int nb = j->pc->mdl->parts[b].ndof;
    double *W = gs_alloc_matrix(gs_mul_size((size_t)nb, (size_t)nb), sizeof *W, 0);
    if (!W)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the inverse of part %d", b);
    memcpy(W, j->pc->L[b], (size_t)nb * nb * sizeof *W);
    const lapack_int info = LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', nb, W, nb);
    gs_err rc = GS_OK;
    if (info != 0) {
        rc = gs_errorf(err, GS_ERR_NOT_SPD, "",
                       "inverting the factor of part %d failed (dpotri info %d)", b, (int)info);
        if (err)
            err->lapack_info = (int)info;
    } else
        rc = gather_locked(j, b, cols, mb, W, (size_t)nb, NULL, err);
    free(W);
    return rc;
}

/* gs_run_items' item i: part parts[i]'s term (field parts[b].K unless
 * the error names another). */
static gs_err inv_item(void *ctx, int i, gs_error *err)
{
    inv_job *j = ctx;
    const int b = j->parts[i], nb = j->pc->mdl->parts[b].ndof;
    const int sparse = j->pc->mdl->parts[b].Ksp != NULL;
    int *cols = malloc(sizeof(int) * (size_t)j->pc->m);
    int *R = sparse ? malloc(sizeof(int) * (size_t)nb) : NULL;
    int *pos = sparse ? malloc(sizeof(int) * (size_t)nb) : NULL;
    gs_err rc;
    if (!cols || (sparse && (!R || !pos))) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for Q's part-%d term", b);
    } else {
        const int mb = part_cols(j->pc->mdl, b, cols);
        rc = sparse ? schur_term(j, b, cols, mb, R, pos, err)
                    : dense_inverse_term(j, b, cols, mb, err);
    }
    free(cols);
    free(R);
    free(pos);
    if (rc != GS_OK && err && err->field[0] == '\0') {
        char field[48];
        snprintf(field, sizeof field, "parts[%d].K", b);
        gs_error_prefix_field(err, field);
    }
    return rc;
}

/* The terms of the np parts listed (inverse or Schur route) into Q, on as
 * many threads as BLAS has. The first failing part in list order is
 * reported (field parts[b].K unless the error names another). */
static gs_err inverse_terms(gs_precomp *pc, const int *parts, int np, gs_error *err)
{
    inv_job j = {.pc = pc, .parts = parts};
    pthread_mutex_init(&j.gather_mu, NULL);
    const gs_err rc = gs_run_items(gs_blas_get_threads(), 1, np, inv_item, &j, err);
    pthread_mutex_destroy(&j.gather_mu);
    return rc;
}

/* 1 if sparse part b's factor ordered its contact DOFs last: its term
 * comes from the Schur complement on one thread (inverse_terms). O(n_b + m). */
static int schur_part(const gs_precomp *pc, int b)
{
    const int nb = pc->mdl->parts[b].ndof;
    int *pos = malloc(sizeof(int) * (size_t)nb), *R = malloc(sizeof(int) * (size_t)nb);
    int yes = 0;
    if (pos && R)
        yes = gs_spchol_schur_route(pc->F[b], R, part_contact_rows(pc->mdl, b, R, pos));
    free(pos);
    free(R);
    return yes;
}

/* Stage 2: Q = sum_b A_b' K_b^-1 A_b. For part b, `cols` lists the pairs with
 * an entry in b (m_b of them); A_b is n_b x m_b with one or two nonzeros per
 * column. Per part the cheaper of two routes (flops):
 *   triangular: B_b = L_b^-1 A_b (dtrsm, n_b^2 m_b), C = B_b'B_b (dsyrk,
 *               n_b m_b^2);
 *   inverse:    K_b^-1 (dpotri, 2 n_b^3 / 3), C gathered (4 m_b^2).
 * The inverse wins when the contact DOFs are more than about a fifth of the
 * block (the condensed junction blocks: m_b ~ n_b, 3x fewer flops). A
 * sparse part's term comes from (K_b^-1)[R, R] on its contact DOFs R
 * (sparse_part_term): by the Schur route when its factor ordered R last.
 * The explicit inverses (dense and Schur) run side by side, one part per
 * thread, each gathered as soon as it is done (inverse_terms); the other
 * terms follow in part order. Q has the same bits on any thread count. */
static gs_err build_Q(gs_precomp *pc, gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    const int m = pc->m, np = mdl->n_parts;
    int *cols = malloc((size_t)m * sizeof *cols), *inv = malloc(sizeof(int) * (size_t)np);
    unsigned char *done = calloc((size_t)np, 1); /* term gathered by inverse_terms */
    gs_err rc = GS_OK;
    int ninv = 0;
    if (!cols || !inv || !done)
        rc = gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory");
    for (int b = 0; b < np && rc == GS_OK; b++) { /* the route of each part */
        const double fn = mdl->parts[b].ndof, fm = part_cols(mdl, b, cols);
        if (fm > 0 && (mdl->parts[b].Ksp ? schur_part(pc, b)
                                         : 2.0 * fn * fn * fn / 3.0 + 4.0 * fm * fm <
                                               fn * fn * fm + fn * fm * fm)) {
            done[b] = 1;
            inv[ninv++] = b;
        }
    }
    if (rc == GS_OK && ninv > 0)
        rc = inverse_terms(pc, inv, ninv, err);
    for (int b = 0; b < np && rc == GS_OK; b++) { /* the other terms, in part order */
        const int nb = mdl->parts[b].ndof, off = mdl->parts[b].offset;
        const int mb = part_cols(mdl, b, cols);
        if (mb == 0 || done[b])
            continue;
        if (mdl->parts[b].Ksp) {
            rc = sparse_part_term(pc, b, cols, mb, err);
            continue;
        }
        double *B = calloc(gs_mul_size((size_t)nb, (size_t)mb), sizeof *B);
        double *C = calloc(gs_mul_size((size_t)mb, (size_t)mb), sizeof *C);
        if (!B || !C) {
            free(B);
            free(C);
            rc = gs_errorf(err, GS_ERR_NOMEM, "pairs", "no memory for Q's part-%d term", b);
            break;
        }
        for (int c = 0; c < mb; c++) {
            const int k = cols[c];
            for (int s = 0; s < 2; s++)
                if (mdl->pair_parts[2 * k + s] == b)
                    B[(size_t)c * nb + (mdl->a_row[2 * k + s] - off)] += mdl->a_val[2 * k + s];
        }
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, nb, mb,
                    1.0, pc->L[b], nb, B, nb);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, mb, nb, 1.0, B, nb, 0.0, C, mb);
        scatter_Q(pc, cols, mb, C);
        free(B);
        free(C);
    }
    free(cols);
    free(inv);
    free(done);
    if (rc == GS_OK)
        mirror_Q(pc);
    return rc;
}

/* Each pair's compliance Q_ii = a_i'K^-1 a_i finite: the parts' inverses
 * are (factor_blocks), but coefficients of 1e300 overflow it; Q_ii <= 0
 * (none, from an SPD K and a pair that touches a DOF) would be a BLAS
 * fault, left to the check. O(m). */
static gs_err Q_diag_finite(const gs_precomp *pc, gs_error *err)
{
    for (int i = 0; i < pc->m; i++) {
        const double q = pc->Q[(size_t)i * pc->m + i];
        if (!isfinite(q)) {
            char field[48];
            snprintf(field, sizeof field, "pairs[%d]", i);
            return gs_errorf(err, GS_ERR_NONFINITE, field,
                             "pair %d's compliance a'K^-1 a is %g: its coefficients (%g, %g) "
                             "are too large for double precision",
                             i, q, pc->mdl->pairs[i].coef[0], pc->mdl->pairs[i].coef[1]);
        }
    }
    return GS_OK;
}

/* Stage 3: u0 = A'K^-1 f_base, s0 = 1/2 f'K^-1 f. O(sum n_b^2). */
static gs_err base_loads(gs_precomp *pc, gs_error *err)
{
    const gs_model *mdl = pc->mdl;
    if (!mdl->f)
        return GS_OK; /* u0 = 0, s0 = 0 (calloc) */
    double *y = malloc((size_t)pc->n * sizeof *y);
    if (!y)
        return gs_errorf(err, GS_ERR_NOMEM, "f", "no memory");
    memcpy(y, mdl->f, (size_t)pc->n * sizeof *y);
    if (gs_precomp_kinv(pc, y) != 0) {
        free(y);
        return gs_errorf(err, GS_ERR_NOMEM, "f", "no memory for a sparse solve");
    }
    gs_model_At(mdl, y, pc->u0);
    pc->s0 = 0.5 * cblas_ddot(pc->n, mdl->f, 1, y, 1);
    free(y);
    return GS_OK;
}

/* Stage 4: L_Q (pc->LQ allocated). A failure means linearly dependent pairs
 * (Q singular). */
static gs_err factor_Q(gs_precomp *pc, gs_error *err)
{
    const int m = pc->m;
    memcpy(pc->LQ, pc->Q, (size_t)m * m * sizeof(double));
    double anorm = gs_sym_norm1(pc->Q, m, m), rc = 0.0;
    gs_err e = gs_chol(pc->LQ, m, m, "pairs", err);
    if (e != GS_OK && e != GS_ERR_NOT_SPD)
        return e; /* not finite, or dpotrf's argument: no pair to name */
    if (e != GS_OK) {
        int info = err ? err->lapack_info : 0;
        char field[48];
        snprintf(field, sizeof field, "pairs[%d]", info > 0 ? info - 1 : 0);
        gs_errorf(err, GS_ERR_SINGULAR, field,
                  "Q = A'K^-1 A is singular: contact pair %d is linearly dependent on the "
                  "pairs before it (dpotrf info %d)",
                  info - 1, info);
        if (err)
            err->lapack_info = info;
        return GS_ERR_SINGULAR;
    }
    /* dpotrf can pass on a numerically singular Q with a round-off-sized
     * pivot (linalg.h GS_PIVOT_RTOL) */
    double ratio;
    const int i = gs_chol_small_pivot(pc->LQ, m, m, pc->Q, (size_t)m + 1, &ratio);
    if (i >= 0) {
        char field[48];
        snprintf(field, sizeof field, "pairs[%d]", i);
        gs_errorf(err, GS_ERR_SINGULAR, field,
                  "Q = A'K^-1 A is numerically singular: contact pair %d is linearly "
                  "dependent on the pairs before it (relative pivot %.3g)", i, ratio);
        if (err)
            err->lapack_info = i + 1;
        return GS_ERR_SINGULAR;
    }
    for (int j = 1; j < m; j++) /* zero the strict upper triangle */
        memset(pc->LQ + (size_t)j * m, 0, (size_t)j * sizeof(double));
    double t0 = gs_now();
    if ((e = gs_chol_rcond(pc->LQ, m, m, anorm, &rc, "pairs", err)) != GS_OK)
        return e;
    pc->t.cond += gs_now() - t0;
    pc->cond_Q = rc > 0 ? 1.0 / rc : INFINITY;
    return GS_OK;
}

gs_err gs_precomp_finish_lq(gs_precomp *pc, gs_error *err)
{
    gs_error_clear(err);
    if (gs_precomp_has_lq(pc))
        return GS_OK;
    if (!(pc->LQ = alloc_square(pc->m)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for L_Q (m = %d)", pc->m);
    const double t0 = gs_now(), tc = pc->t.cond;
    gs_err rc = factor_Q(pc, err);
    if (rc == GS_OK)
        rc = gs_precomp_check_lq(pc, NULL, err);
    if (rc != GS_OK) {
        free(pc->LQ);
        pc->LQ = NULL;
        pc->t.cond = tc;
        return rc;
    }
    const double dt = gs_now() - t0;
    pc->t.factor_Q = dt - (pc->t.cond - tc);
    pc->t.total += dt;
    atomic_store_explicit(&pc->lq_ready, 1, memory_order_release);
    return GS_OK;
}

/* Q, the vectors and the dense parts' factors: what every precomputation
 * of mdl holds, L_Q and the sparse factors aside. */
static size_t bytes_always(const gs_model *mdl)
{
    const size_t m = (size_t)mdl->m, np = (size_t)mdl->n_parts;
    size_t b = sizeof(gs_precomp) + (m * m + 2 * m + np) * sizeof(double) +
               2 * np * sizeof(void *);
    for (size_t p = 0; p < np; p++)
        if (!mdl->parts[p].Ksp)
            b += (size_t)mdl->parts[p].ndof * (size_t)mdl->parts[p].ndof * sizeof(double);
    return b;
}

size_t gs_precomp_bytes(const gs_precomp *pc)
{
    if (!pc)
        return 0;
    const size_t m = (size_t)pc->m, np = (size_t)pc->mdl->n_parts;
    size_t b = bytes_always(pc->mdl);
    if (gs_precomp_has_lq(pc))
        b += m * m * sizeof(double);
    if (gs_precomp_has_part_factors(pc) && pc->F)
        for (size_t p = 0; p < np; p++)
            if (pc->F[p])
                b += gs_spchol_bytes(pc->F[p]);
    return b;
}

size_t gs_precomp_bytes_ahead(const gs_model *mdl)
{
    return bytes_always(mdl) + (size_t)mdl->m * (size_t)mdl->m * sizeof(double);
}

int gs_precomp_has_part_factors(const gs_precomp *pc)
{
    return atomic_load_explicit(&((gs_precomp *)pc)->parts_ready, memory_order_acquire);
}

int gs_precomp_has_lq(const gs_precomp *pc)
{
    return atomic_load_explicit(&((gs_precomp *)pc)->lq_ready, memory_order_acquire);
}

gs_err gs_precomp_build(const gs_model *mdl, gs_precomp **out, gs_error *err)
{
    return gs_precomp_build_ex(mdl, 0, out, err);
}

const char *gs_precomp_stage_name(int stage)
{
    static const char *const names[GS_STAGE__COUNT] = {"queued", "factor_K", "build_Q",
                                                        "check",  "loads",    "factor_Q"};
    return stage >= 0 && stage < GS_STAGE__COUNT ? names[stage] : "unknown";
}

static void set_stage(atomic_int *stage, gs_precomp_stage s)
{
    if (stage)
        atomic_store_explicit(stage, (int)s, memory_order_relaxed);
}

/* The build, from the model's blocks (copied) or from taken ones. */
static gs_err build(const gs_model *mdl, double **taken, unsigned flags, atomic_int *stage,
                    gs_precomp **out, gs_error *err)
{
    *out = NULL;
    gs_error_clear(err);
    if (!mdl->validated)
        return gs_errorf(err, GS_ERR_INVALID, "", "model must be validated before precomputation");
    if (gs_model_dense_released(mdl) && !taken)
        return gs_errorf(err, GS_ERR_INVALID, "parts",
                         "the model's dense stiffness blocks were released; read it again");
    gs_precomp *pc = calloc(1, sizeof *pc);
    if (!pc)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    pc->taken = taken;
    pc->mdl = mdl;
    pc->n = mdl->n;
    pc->m = mdl->m;
    pc->L = calloc((size_t)mdl->n_parts, sizeof *pc->L);
    pc->F = calloc((size_t)mdl->n_parts, sizeof *pc->F);
    pc->cond_block = calloc((size_t)mdl->n_parts, sizeof *pc->cond_block);
    pc->kdiag = calloc((size_t)mdl->n_parts, sizeof *pc->kdiag);
    pc->Q = alloc_square(mdl->m);
    pc->qdiag = calloc((size_t)mdl->m, sizeof *pc->qdiag);
    pc->u0 = calloc((size_t)mdl->m, sizeof *pc->u0);
    pc->cond_Q = NAN;
    gs_err rc = GS_OK;
    if (!pc->L || !pc->F || !pc->cond_block || !pc->kdiag || !pc->Q || !pc->qdiag || !pc->u0) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the precomputation (m = %d)", mdl->m);
        goto fail;
    }
    double t0 = gs_now(), t1;
    set_stage(stage, GS_STAGE_FACTOR_K);
    if ((rc = factor_blocks(pc, err)) != GS_OK)
        goto fail;
    t1 = gs_now();
    pc->t.factor_K = t1 - t0 - pc->t.cond;
    set_stage(stage, GS_STAGE_BUILD_Q);
    if ((rc = build_Q(pc, err)) != GS_OK || (rc = Q_diag_finite(pc, err)) != GS_OK)
        goto fail;
    set_stage(stage, GS_STAGE_CHECK);
    if ((rc = gs_precomp_check_q(pc, 0, NULL, err)) != GS_OK)
        goto fail;
    pc->t.build_Q = gs_now() - t1;
    free_kdiag(pc); /* the check had the last use of them */
    for (int i = 0; i < pc->m; i++)
        pc->qdiag[i] = pc->Q[(size_t)i * pc->m + i];
    t1 = gs_now();
    set_stage(stage, GS_STAGE_LOADS);
    if ((rc = base_loads(pc, err)) != GS_OK)
        goto fail;
    pc->t.loads = gs_now() - t1;
    pc->t.total = gs_now() - t0;
    if (!(flags & GS_PRECOMP_DEFER_LQ)) {
        set_stage(stage, GS_STAGE_FACTOR_Q);
        if ((rc = gs_precomp_finish_lq(pc, err)) != GS_OK)
            goto fail;
    }
    pc->taken = NULL;
    *out = pc;
    return GS_OK;
fail:
    gs_precomp_free(pc);
    return rc;
}

gs_err gs_precomp_build_ex(const gs_model *mdl, unsigned flags, gs_precomp **out,
                           gs_error *err)
{
    return build(mdl, NULL, flags, NULL, out, err);
}

gs_err gs_precomp_build_taken(const gs_model *mdl, double **blocks, unsigned flags,
                              gs_precomp **out, gs_error *err)
{
    return gs_precomp_build_watched(mdl, blocks, flags, NULL, out, err);
}

gs_err gs_precomp_build_watched(const gs_model *mdl, double **blocks, unsigned flags,
                                atomic_int *stage, gs_precomp **out, gs_error *err)
{
    gs_err rc = build(mdl, blocks, flags, stage, out, err);
    for (int b = 0; blocks && b < mdl->n_parts; b++) { /* not adopted: a failure */
        free(blocks[b]);
        blocks[b] = NULL;
    }
    return rc;
}

int gs_precomp_kinv(const gs_precomp *pc, double *b)
{
    const gs_model *mdl = pc->mdl;
    for (int p = 0; p < mdl->n_parts; p++) {
        const int nb = mdl->parts[p].ndof;
        double *x = b + mdl->parts[p].offset;
        if (mdl->parts[p].Ksp) {
            if (!gs_precomp_has_part_factors(pc) ||
                gs_spchol_solve(pc->F[p], x, nb, 1, NULL) != GS_OK) {
                for (int i = 0; i < pc->n; i++)
                    b[i] = NAN;
                return -1;
            }
            continue;
        }
        cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, nb, pc->L[p], nb, x, 1);
        cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, nb, pc->L[p], nb, x, 1);
    }
    return 0;
}

gs_err gs_precomp_part_solve(const gs_precomp *pc, int b, double *B, int ldb, int ncol,
                             gs_error *err)
{
    const int nb = pc->mdl->parts[b].ndof;
    if (pc->mdl->parts[b].Ksp) {
        if (!gs_precomp_has_part_factors(pc))
            return gs_errorf(err, GS_ERR_INVALID, "", "sparse part %d is not factored", b);
        return gs_spchol_solve(pc->F[b], B, ldb, ncol, err);
    }
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, nb, ncol, 1.0,
                pc->L[b], nb, B, ldb);
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, nb, ncol, 1.0,
                pc->L[b], nb, B, ldb);
    return GS_OK;
}

void gs_precomp_Qx(const gs_precomp *pc, const int *S, int ns, const double *xs, double *y)
{
    const int m = pc->m;
    if (!S) {
        cblas_dsymv(CblasColMajor, CblasLower, m, 1.0, pc->Q, m, xs, 1, 0.0, y, 1);
        return;
    }
    memset(y, 0, (size_t)m * sizeof *y);
    gs_cols_mul(m, pc->Q, (size_t)m, S, xs, ns, y);
}
