/* mixchol.c -- Cholesky of A + diag(d) in float with a double fallback, and
 * the triangular solves (see mixchol.h). */
#include "mixchol.h"

#include <cblas.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

gs_err gs_mixchol_init(gs_mixchol *mc, int m, gs_error *err)
{
    memset(mc, 0, sizeof *mc);
    mc->m = mc->cap = m;
    const size_t mm = gs_mul_size((size_t)m, (size_t)m);
    mc->Lf = mm ? gs_alloc_matrix(mm, sizeof *mc->Lf, 0) : NULL;
    mc->t = malloc(((size_t)m + 1) * sizeof *mc->t);
    if ((m > 0 && !mc->Lf) || !mc->t) {
        gs_mixchol_free(mc);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a float %d x %d factor", m, m);
    }
    return GS_OK;
}

void gs_mixchol_resize(gs_mixchol *mc, int m)
{
    mc->m = m < 0 ? 0 : (m > mc->cap ? mc->cap : m);
}

void gs_mixchol_free(gs_mixchol *mc)
{
    free(mc->Lf);
    free(mc->Ld);
    free(mc->t);
    memset(mc, 0, sizeof *mc);
}

gs_err gs_chol_plus_diag(double *L, int m, const double *A, int lda, const double *d,
                         const char *field, gs_error *err)
{
    for (int j = 0; j < m; j++) {
        const double *aj = A + (size_t)j * lda;
        double *lj = L + (size_t)j * m;
        memcpy(lj + j, aj + j, (size_t)(m - j) * sizeof *lj);
        if (d)
            lj[j] += d[j];
    }
    return gs_chol(L, m, m, field, err);
}

gs_err gs_mixchol_factor(gs_mixchol *mc, const double *A, int lda, const double *d,
                         gs_error *err)
{
    const int m = mc->m;
    for (int j = 0; j < m; j++) {
        const double *aj = A + (size_t)j * lda;
        float *lj = mc->Lf + (size_t)j * m;
        for (int i = j; i < m; i++)
            lj[i] = (float)aj[i];
        lj[j] = (float)(aj[j] + (d ? d[j] : 0.0));
    }
    mc->in_double = m > 0 && LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', m, mc->Lf, m) != 0;
    if (!mc->in_double)
        return GS_OK;
    if (!mc->Ld) {
        mc->Ld = malloc(
            gs_mul_size(gs_mul_size((size_t)mc->cap, (size_t)mc->cap), sizeof *mc->Ld));
        if (!mc->Ld)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a double %d x %d factor", m,
                             m);
    }
    return gs_chol_plus_diag(mc->Ld, m, A, lda, d, "", err);
}

void gs_mixchol_solve(gs_mixchol *mc, const double *r, double *z)
{
    if (mc->in_double) {
        memcpy(z, r, (size_t)mc->m * sizeof *z);
        gs_llt_solve64(mc->Ld, mc->m, z);
    } else {
        gs_llt_solve32(mc->Lf, mc->m, mc->t, r, z);
    }
}

void gs_llt_solve64(const double *L, int m, double *x)
{
    if (m <= 0)
        return;
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, L, m, x, 1);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, L, m, x, 1);
}

void gs_llt_solve32(const float *L, int m, float *t, const double *r, double *z)
{
    if (m <= 0)
        return;
    for (int i = 0; i < m; i++)
        t[i] = (float)r[i];
    cblas_strsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, L, m, t, 1);
    cblas_strsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, L, m, t, 1);
    for (int i = 0; i < m; i++)
        z[i] = t[i];
}
