/*
 * spchol.c -- CHOLMOD behind gapsim's sparse factor: factorization with
 * checked status (the contact rows ordered last when that pays), dense
 * solves, the contact-row block of K^-1 from the Schur complement or by
 * chunked solves on worker threads (see spchol.h).
 */
#include "spchol.h"

#include <cholmod.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

#define SPC_CHUNK 64 /* right-hand sides per solve in gs_spchol_inv_sub */

struct gs_spchol {
    cholmod_factor *L;
    size_t n;
    int64_t *last; /* the rows ordered last (ascending), or NULL (gs_spchol_factor) */
    int nlast;
};

/* A cholmod_common for one call: quiet (statuses are checked, not printed). */
static int spc_start(cholmod_common *c)
{
    if (!cholmod_l_start(c))
        return -1;
    c->print = 0;
    c->error_handler = NULL;
    return 0;
}

/* The stored matrix as a CHOLMOD view (no copy): only its lower triangle is
 * read (stype -1). */
static cholmod_sparse spc_view(const gs_spmat *K)
{
    cholmod_sparse a;
    memset(&a, 0, sizeof a);
    a.nrow = a.ncol = (size_t)K->n;
    a.nzmax = (size_t)K->nnz;
    a.p = K->colptr;
    a.i = K->rowind;
    a.x = K->val;
    a.stype = -1;
    a.itype = CHOLMOD_LONG;
    a.xtype = CHOLMOD_REAL;
    a.dtype = CHOLMOD_DOUBLE;
    a.sorted = 1;
    a.packed = 1;
    return a;
}

static gs_err spc_status(const cholmod_common *c, const char *what, const char *field,
                         gs_error *err)
{
    if (c->status == CHOLMOD_OUT_OF_MEMORY)
        return gs_errorf(err, GS_ERR_NOMEM, field, "no memory for the sparse %s", what);
    return gs_errorf(err, GS_ERR_INVALID, field, "CHOLMOD %s failed (status %d)", what,
                     c->status);
}

/* K_jj of the stored matrix (0 if absent). O(nnz_j). */
static double spc_diag(const gs_spmat *K, int64_t j)
{
    for (int64_t p = K->colptr[j]; p < K->colptr[j + 1]; p++)
        if (K->rowind[p] == j)
            return K->val[p];
    return 0.0;
}

/* Cholesky can pass a singular K (a rigid-body mode) with a round-off-sized
 * pivot: L_kk^2 below GS_PIVOT_RTOL K_jj (j = P[k]) means row j depends on
 * the rows eliminated before it, the rule of the dense blocks and of L_Q
 * (linalg.h). Supernodal L L': diagonal entry k of supernode s at px[s] + (k - k1)
 * (nrows + 1). O(n). */
static gs_err spc_check_pivots(const gs_spchol *f, const gs_spmat *K, const char *field,
                               gs_error *err)
{
    const cholmod_factor *L = f->L;
    const int64_t *super = L->super, *pi = L->pi, *px = L->px, *perm = L->Perm;
    const double *x = L->x;
    for (size_t s = 0; s < L->nsuper; s++) {
        const int64_t k1 = super[s], k2 = super[s + 1], nrows = pi[s + 1] - pi[s];
        for (int64_t k = k1; k < k2; k++) {
            const double piv = x[px[s] + (k - k1) * (nrows + 1)];
            const int64_t j = perm ? perm[k] : k;
            const double kjj = spc_diag(K, j);
            if (!(piv * piv >= GS_PIVOT_RTOL * kjj)) {
                char row[64];
                gs_spmat_row_name(K, j, row, sizeof row);
                gs_errorf(err, GS_ERR_NOT_SPD, field,
                          "the sparse stiffness is singular: %s depends on the rows before it "
                          "(relative pivot %.3g; a rigid-body mode or a missing boundary "
                          "condition?)", row, kjj > 0 ? piv * piv / kjj : 0.0);
                if (err)
                    err->lapack_info = (int)(j + 1);
                return GS_ERR_NOT_SPD;
            }
        }
    }
    return GS_OK;
}

/* An analysis of a with the rows last[0..nlast) ordered after all others
 * (CAMD with two constraint sets, no postorder, which could move them;
 * checked), kept in f (f->L, f->last) when mode is 1, or when mode is -1
 * and nlast^2 < SPC_SCHUR_LNZ nnz(L) under that ordering: the Schur route
 * of gs_spchol_inv_sub is then clearly cheaper than nlast solves (ratios
 * measured, fe-import.md: 0.13 and 0.24 -> 4-7x faster; the uncondensed lap
 * plate of 15,618 DOFs, above 0.6 -> even, 1.01 against 0.94 s; 1.5 -> 2.3x
 * slower). Otherwise,
 * or on any failure, f is left without an analysis (CHOLMOD's own follows).
 * Its own cholmod_common: the caller's keeps CHOLMOD's default strategy. */
#define SPC_SCHUR_LNZ 0.5
static void spc_order_last(gs_spchol *f, cholmod_sparse *a, const int *last, int nlast, int mode)
{
    cholmod_common c;
    if (mode == 0 || nlast <= 0 || spc_start(&c) != 0)
        return;
    const size_t n = f->n;
    int64_t *cmember = calloc(n, sizeof *cmember), *perm = malloc(n * sizeof *perm);
    int64_t *keep = malloc((size_t)nlast * sizeof *keep);
    int ok = cmember && perm && keep;
    for (int i = 0; ok && i < nlast; i++) {
        cmember[last[i]] = 1;
        keep[i] = last[i];
    }
    ok = ok && cholmod_l_camd(a, NULL, 0, cmember, perm, &c);
    cholmod_factor *L = NULL;
    if (ok) {
        c.supernodal = CHOLMOD_SUPERNODAL;
        c.nmethods = 1;
        c.method[0].ordering = CHOLMOD_GIVEN;
        c.postorder = 0;
        ok = (L = cholmod_l_analyze_p(a, perm, NULL, 0, &c)) != NULL;
    }
    const int64_t *lp = ok ? L->Perm : NULL;
    for (size_t k = n - (size_t)nlast; ok && k < n; k++) /* CAMD kept the sets apart */
        ok = cmember[lp[k]] == 1;
    ok = ok && (mode > 0 || (double)nlast * nlast < SPC_SCHUR_LNZ * c.lnz);
    if (ok) {
        f->L = L;
        f->last = keep;
        f->nlast = nlast;
    } else {
        if (L)
            cholmod_l_free_factor(&L, &c);
        free(keep);
    }
    free(cmember);
    free(perm);
    cholmod_l_finish(&c);
}

gs_err gs_spchol_factor(const gs_spmat *K, const char *field, const int *last, int nlast,
                        int mode, gs_spchol **out, gs_error *err)
{
    *out = NULL;
    gs_spchol *f = calloc(1, sizeof *f);
    cholmod_common c;
    if (!f || spc_start(&c) != 0) {
        free(f);
        return gs_errorf(err, GS_ERR_NOMEM, field, "no memory for the sparse factor");
    }
    cholmod_sparse a = spc_view(K);
    gs_err rc = GS_OK;
    f->n = (size_t)K->n;
    c.supernodal = CHOLMOD_SUPERNODAL; /* L L' with its diagonal in place (spc_check_pivots) */
    spc_order_last(f, &a, last, nlast, mode);
    if (!f->L)
        f->L = cholmod_l_analyze(&a, &c);
    if (!f->L) {
        rc = spc_status(&c, "analysis", field, err);
    } else if (!cholmod_l_factorize(&a, f->L, &c) || c.status < CHOLMOD_OK) {
        rc = spc_status(&c, "factorization", field, err);
    } else if (c.status == CHOLMOD_NOT_POSDEF || f->L->minor < f->n) {
        char row[64];
        const int64_t *perm = f->L->Perm;
        const int64_t bad = perm ? perm[f->L->minor] : (int64_t)f->L->minor;
        gs_spmat_row_name(K, bad, row, sizeof row);
        rc = gs_errorf(err, GS_ERR_NOT_SPD, field,
                       "the sparse stiffness is not positive definite: the Cholesky "
                       "factorization broke down at %s (a rigid-body mode or a missing "
                       "boundary condition?)", row);
        if (err)
            err->lapack_info = (int)(bad + 1);
    } else {
        rc = spc_check_pivots(f, K, field, err);
    }
    cholmod_l_finish(&c);
    if (rc != GS_OK) {
        gs_spchol_free(f);
        return rc;
    }
    *out = f;
    return GS_OK;
}

void gs_spchol_free(gs_spchol *f)
{
    if (!f)
        return;
    if (f->L) {
        cholmod_common c;
        if (spc_start(&c) == 0) {
            cholmod_l_free_factor(&f->L, &c);
            cholmod_l_finish(&c);
        }
    }
    free(f->last);
    free(f);
}

/* One solve K X = B with X, Y, E workspaces kept across calls (cholmod_solve2). */
typedef struct {
    cholmod_common c;
    cholmod_dense *X, *Y, *E;
} spc_ws;

static int spc_ws_start(spc_ws *w)
{
    memset(w, 0, sizeof *w);
    return spc_start(&w->c);
}

static void spc_ws_end(spc_ws *w)
{
    cholmod_l_free_dense(&w->X, &w->c);
    cholmod_l_free_dense(&w->Y, &w->c);
    cholmod_l_free_dense(&w->E, &w->c);
    cholmod_l_finish(&w->c);
}

/* w->X = K^-1 B (B: n x ncol, leading dimension ldb). 0 or -1 (status in w->c). */
static int spc_solve(const gs_spchol *f, spc_ws *w, double *B, int ldb, int ncol)
{
    cholmod_dense b;
    memset(&b, 0, sizeof b);
    b.nrow = f->n;
    b.ncol = (size_t)ncol;
    b.nzmax = (size_t)ldb * (size_t)ncol;
    b.d = (size_t)ldb;
    b.x = B;
    b.xtype = CHOLMOD_REAL;
    b.dtype = CHOLMOD_DOUBLE;
    return cholmod_l_solve2(CHOLMOD_A, f->L, &b, NULL, &w->X, NULL, &w->Y, &w->E, &w->c) ? 0 : -1;
}

gs_err gs_spchol_solve(const gs_spchol *f, double *B, int ldb, int ncol, gs_error *err)
{
    if (ncol <= 0)
        return GS_OK;
    spc_ws w;
    if (spc_ws_start(&w) != 0)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a sparse solve");
    gs_err rc = GS_OK;
    if (spc_solve(f, &w, B, ldb, ncol) != 0) {
        rc = spc_status(&w.c, "solve", "", err);
    } else {
        const double *x = w.X->x;
        for (int j = 0; j < ncol; j++)
            memcpy(B + (size_t)j * ldb, x + (size_t)j * w.X->d, f->n * sizeof *B);
    }
    spc_ws_end(&w);
    return rc;
}

/* ---- (K^-1)[R, R] by chunked solves ---------------------------------------- */

typedef struct {
    const gs_spchol *f;
    const int *R;
    int nr, next; /* next chunk */
    double *W;
    int failed;   /* a CHOLMOD status, or 0 */
    pthread_mutex_t mu;
} inv_job;

/* Columns [j0, j0 + nc) of W: solve for the unit vectors e_R[j], keep rows R
 * (the lower triangle i >= j; mirrored at the end). O(nc 4 nnz(L)). */
static int inv_chunk(inv_job *jb, spc_ws *w, double *B, int j0, int nc)
{
    const size_t n = jb->f->n;
    memset(B, 0, n * (size_t)nc * sizeof *B);
    for (int c = 0; c < nc; c++)
        B[(size_t)c * n + (size_t)jb->R[j0 + c]] = 1.0;
    if (spc_solve(jb->f, w, B, (int)n, nc) != 0)
        return -1;
    const double *x = w->X->x;
    const size_t nr = (size_t)jb->nr;
    for (int c = 0; c < nc; c++) {
        const int j = j0 + c;
        const double *col = x + (size_t)c * w->X->d;
        for (int i = j; i < jb->nr; i++)
            jb->W[(size_t)j * nr + i] = col[jb->R[i]];
    }
    return 0;
}

static void *inv_worker(void *arg)
{
    inv_job *jb = arg;
    spc_ws w;
    double *B = malloc(jb->f->n * SPC_CHUNK * sizeof *B);
    int ok = B && spc_ws_start(&w) == 0;
    for (;;) {
        pthread_mutex_lock(&jb->mu);
        const int j0 = jb->next * SPC_CHUNK;
        jb->next++;
        if (!ok && !jb->failed)
            jb->failed = CHOLMOD_OUT_OF_MEMORY;
        const int stop = j0 >= jb->nr || jb->failed;
        pthread_mutex_unlock(&jb->mu);
        if (stop)
            break;
        const int nc = jb->nr - j0 < SPC_CHUNK ? jb->nr - j0 : SPC_CHUNK;
        if (inv_chunk(jb, &w, B, j0, nc) != 0) {
            pthread_mutex_lock(&jb->mu);
            jb->failed = w.c.status ? w.c.status : CHOLMOD_INVALID;
            pthread_mutex_unlock(&jb->mu);
        }
    }
    if (ok)
        spc_ws_end(&w);
    free(B);
    return NULL;
}

/* The Schur route: with R ordered last, P K P' = L L' has the trailing
 * block L_RR, L_RR L_RR' = S (the Schur complement of the other rows), and
 * (K^-1)[R, R] = S^-1: L_RR gathered from the supernodes (O(nnz of the
 * supernodes holding R's columns)), inverted in place by dpotri (2 nr^3 / 3
 * flops on one thread: the same bits on any thread count), then put in R's
 * order. Memory 2 nr^2 + n. */
static gs_err spc_inv_schur(const gs_spchol *f, const int *R, int nr, double *W, gs_error *err)
{
    const cholmod_factor *L = f->L;
    const int64_t *super = L->super, *pi = L->pi, *px = L->px, *Ls = L->s, *perm = L->Perm;
    const double *x = L->x;
    const int64_t n = (int64_t)f->n, k0 = n - nr;
    const size_t ld = (size_t)nr;
    int *at = malloc((size_t)n * sizeof *at);          /* row -> its index in R */
    double *T = calloc(ld * ld, sizeof *T);            /* L_RR in the factor's order */
    if (!at || !T) {
        free(at);
        free(T);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the Schur complement");
    }
    for (int i = 0; i < nr; i++)
        at[R[i]] = i;
    for (size_t sn = 0; sn < L->nsuper; sn++) { /* the supernodes holding columns >= k0 */
        const int64_t k1 = super[sn], k2 = super[sn + 1], nrows = pi[sn + 1] - pi[sn];
        for (int64_t k = k1 > k0 ? k1 : k0; k < k2; k++)
            for (int64_t i = k - k1; i < nrows; i++)
                T[(size_t)(k - k0) * ld + (size_t)(Ls[pi[sn] + i] - k0)] =
                    x[px[sn] + (k - k1) * nrows + i];
    }
    const int threads = gs_blas_get_threads(); /* one thread: the same bits on any count */
    gs_blas_set_threads(1);
    const lapack_int info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', nr, T, nr); /* S^-1 */
    gs_blas_set_threads(threads);
    gs_err rc = GS_OK;
    if (info != 0) {
        rc = gs_errorf(err, GS_ERR_NOT_SPD, "",
                       "inverting the Schur complement of the contact rows failed (dpotri "
                       "info %d)", (int)info);
        if (err)
            err->lapack_info = (int)info;
    }
    for (size_t q = 0; !rc && q < ld; q++) { /* into R's order, both triangles: O(nr^2) */
        const size_t j = (size_t)at[perm[k0 + (int64_t)q]];
        for (size_t p = q; p < ld; p++) {
            const size_t i = (size_t)at[perm[k0 + (int64_t)p]];
            W[j * ld + i] = W[i * ld + j] = T[q * ld + p];
        }
    }
    free(T);
    free(at);
    return rc;
}

/* f's rows ordered last are exactly R (as given to gs_spchol_factor). */
int gs_spchol_schur_route(const gs_spchol *f, const int *R, int nr)
{
    if (nr <= 0 || !f->last || f->nlast != nr)
        return 0;
    for (int i = 0; i < nr; i++)
        if (f->last[i] != R[i])
            return 0;
    return 1;
}

gs_err gs_spchol_inv_sub(const gs_spchol *f, const int *R, int nr, double *W, int threads,
                         gs_error *err)
{
    if (nr <= 0)
        return GS_OK;
    if (gs_spchol_schur_route(f, R, nr))
        return spc_inv_schur(f, R, nr, W, err);
    inv_job jb = {.f = f, .R = R, .nr = nr, .W = W};
    pthread_mutex_init(&jb.mu, NULL);
    const int chunks = (nr + SPC_CHUNK - 1) / SPC_CHUNK;
    gs_run_blas1_workers(threads < chunks ? threads : chunks, inv_worker, &jb);
    pthread_mutex_destroy(&jb.mu);
    if (jb.failed)
        return jb.failed == CHOLMOD_OUT_OF_MEMORY
                   ? gs_errorf(err, GS_ERR_NOMEM, "", "no memory for sparse solves")
                   : gs_errorf(err, GS_ERR_INVALID, "", "CHOLMOD solve failed (status %d)",
                               jb.failed);
    const size_t ld = (size_t)nr; /* mirror the lower triangle: O(nr^2) */
    for (size_t j = 0; j < ld; j++)
        for (size_t i = j + 1; i < ld; i++)
            W[i * ld + j] = W[j * ld + i];
    return GS_OK;
}

gs_err gs_spchol_rcond1(const gs_spchol *f, double anorm, double *rcond, gs_error *err)
{
    *rcond = 0.0;
    if (f->n == 0 || !(anorm > 0.0)) {
        *rcond = f->n == 0 ? 1.0 : 0.0;
        return GS_OK;
    }
    /* Hager-Higham (LAPACK dlacn2, as dpocon does for the dense parts): a
     * few products with K^-1, here solves with the factor; K is symmetric,
     * so K^-T x is the same solve. x starts zeroed: LAPACKE checks it for
     * NaN on every call, the first included */
    const lapack_int n = (lapack_int)f->n;
    double *v = calloc((size_t)n, sizeof(double)), *x = calloc((size_t)n, sizeof(double));
    lapack_int *isgn = malloc(sizeof(lapack_int) * (size_t)n);
    gs_err rc = v && x && isgn ? GS_OK : gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a "
                                                   "condition estimate (n = %d)", (int)f->n);
    double est = 0.0;
    lapack_int kase = 0, isave[3] = {0, 0, 0};
    while (rc == GS_OK) {
        if (LAPACKE_dlacn2(n, v, x, isgn, &est, &kase, isave) != 0)
            rc = gs_errorf(err, GS_ERR_INVALID, "", "dlacn2 refused its arguments (n = %d)", (int)n);
        if (rc != GS_OK || kase == 0)
            break;
        rc = gs_spchol_solve(f, x, (int)n, 1, err);
    }
    if (rc == GS_OK && est > 0.0 && isfinite(est))
        *rcond = 1.0 / (anorm * est);
    free(v);
    free(x);
    free(isgn);
    return rc;
}

size_t gs_spchol_bytes(const gs_spchol *f)
{
    const cholmod_factor *L = f->L;
    const size_t w = sizeof(int64_t); /* CHOLMOD's long interface */
    size_t b = sizeof *f + sizeof *L + 2 * L->n * w + (size_t)f->nlast * w; /* Perm, ColCount */
    if (L->is_super) /* x, s; super, pi, px */
        b += L->xsize * sizeof(double) + L->ssize * w + 3 * (L->nsuper + 1) * w;
    else /* x, i; p, nz, next, prev */
        b += L->nzmax * (sizeof(double) + w) + 4 * (L->n + 2) * w;
    return b;
}
