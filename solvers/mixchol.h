/*
 * mixchol.h -- private: dense Cholesky factorizations of a symmetric
 * positive definite A + diag(d) (A's lower triangle, column-major) and the
 * solves with them, in double and in single precision. The interior
 * point's normal matrix H = Q + Lambda^-1 Y (ipm.c) is factored here.
 *
 * gs_mixchol: a single-precision factor (spotrf on A + diag(d) rounded to
 * float: the flops of dpotrf at about twice the rate, half the memory) for
 * use as a preconditioner; where float cannot factor the matrix (spotrf
 * finds a pivot <= 0: A + diag(d) is too ill-conditioned for float) the
 * same call factors it in double instead (dpotrf; that m x m double matrix
 * is allocated on the first such call), so the solve is then exact to
 * double round-off. Nothing else changes for the caller.
 * Costs: factor O(m^3/3) (float, or double on fallback) plus O(m^2) to copy;
 * solve O(m^2) (two triangular sweeps); memory m^2 floats, plus m^2 doubles
 * after a fallback.
 */
#ifndef GS_MIXCHOL_H
#define GS_MIXCHOL_H

#include "gs_error.h"

typedef struct {
    int m;         /* the order of the next factorization (gs_mixchol_resize) */
    int cap;       /* the m of gs_mixchol_init: the buffers' order */
    float *Lf;     /* m x m (ld m): the float factor (lower triangle) */
    double *Ld;    /* cap x cap: the double factor where float failed (lazy) */
    float *t;      /* m: scratch of the float solve */
    int in_double; /* the last factorization is Ld (spotrf failed) */
} gs_mixchol;

gs_err gs_mixchol_init(gs_mixchol *mc, int m, gs_error *err);
void gs_mixchol_free(gs_mixchol *mc);
/* Factor matrices of order m (0 <= m <= the m of init) from now on, in the
 * same buffers (a working set of pairs: solvers/ipm.c). O(1). */
void gs_mixchol_resize(gs_mixchol *mc, int m);
/* Factor A + diag(d) (d NULL: A), in float, else in double. GS_OK;
 * GS_ERR_NOT_SPD when double fails too; GS_ERR_NOMEM for the fallback's
 * matrix. */
gs_err gs_mixchol_factor(gs_mixchol *mc, const double *A, int lda, const double *d,
                         gs_error *err);
/* z = (L L')^-1 r with the last factor (z never aliases r). O(m^2). */
void gs_mixchol_solve(gs_mixchol *mc, const double *r, double *z);

/* L (m x m, ld m) = the double Cholesky factor of A + diag(d) (d NULL: A),
 * by gs_chol (linalg.h): GS_OK, or GS_ERR_NOT_SPD naming `field`. O(m^3/3). */
gs_err gs_chol_plus_diag(double *L, int m, const double *A, int lda, const double *d,
                         const char *field, gs_error *err);
/* x <- (L L')^-1 x, L a double lower triangle (m x m, ld m). O(m^2). */
void gs_llt_solve64(const double *L, int m, double *x);
/* z = (L L')^-1 r with a float lower triangle L (m x m, ld m): r rounded to
 * float into t (m), two strsv, z back in double. O(m^2). */
void gs_llt_solve32(const float *L, int m, float *t, const double *r, double *z);

#endif
