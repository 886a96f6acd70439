/* test_mixchol.c -- the Cholesky of A + diag(d) in float with a double
 * fallback (solvers/mixchol.h): a well-conditioned matrix is factored in
 * float and solved to float accuracy; a matrix float cannot factor (a 2 x 2
 * whose second pivot, 1e-10, is below float's resolution of 1) falls back to
 * double and is then solved exactly; the fallback resets when the next
 * matrix is fine again; a matrix that is not positive definite in double
 * either is an error; the double factor with d and the plain solves. */
#include <math.h>
#include <stdlib.h>

#include "gs_test.h"
#include "mixchol.h"

/* relative 2-norm error of z against x */
static double rel_err(const double *z, const double *x, int n)
{
    double e = 0.0, s = 0.0;
    for (int i = 0; i < n; i++) {
        e += (z[i] - x[i]) * (z[i] - x[i]);
        s += x[i] * x[i];
    }
    return sqrt(e / s);
}

/* b = (A + diag(d)) x with A's lower triangle (column-major, lda = n). */
static void mul_lower(const double *A, const double *d, int n, const double *x, double *b)
{
    for (int i = 0; i < n; i++) {
        double acc = d ? d[i] * x[i] : 0.0;
        for (int j = 0; j < n; j++)
            acc += (i >= j ? A[i + j * n] : A[j + i * n]) * x[j];
        b[i] = acc;
    }
}

GS_TEST(well_conditioned_in_float)
{
    enum { N = 40 };
    double A[N * N] = {0}, d[N], x[N], b[N], z[N];
    for (int j = 0; j < N; j++)
        for (int i = j; i < N; i++)
            A[i + j * N] = i == j ? 4.0 : 1.0 / (1.0 + i + j); /* diagonally dominant */
    for (int i = 0; i < N; i++) {
        d[i] = 0.5 * (i % 3);
        x[i] = sin(1.0 + i);
    }
    mul_lower(A, d, N, x, b);
    gs_mixchol mc;
    GS_CHECK_INT(gs_mixchol_init(&mc, N, NULL), GS_OK);
    GS_CHECK_INT(gs_mixchol_factor(&mc, A, N, d, NULL), GS_OK);
    GS_CHECK_INT(mc.in_double, 0);
    GS_CHECK(mc.Ld == NULL);
    gs_mixchol_solve(&mc, b, z);
    double e = rel_err(z, x, N);
    GS_CHECK_MSG(e < 1e-6 && e > 0.0, "float solve error %g (float accuracy, not exact)", e);
    gs_mixchol_free(&mc);
}

GS_TEST(float_breakdown_falls_back_to_double)
{
    /* A = [[1, 1], [1, 1 + 1e-10]]: SPD (det 1e-10), float rounds 1 + 1e-10
     * to 1 and finds a zero second pivot */
    double A[4] = {1.0, 1.0, 0.0, 1.0 + 1e-10};
    const double x[2] = {2.0, -1.0};
    double b[2], z[2];
    mul_lower(A, NULL, 2, x, b);
    gs_mixchol mc;
    GS_CHECK_INT(gs_mixchol_init(&mc, 2, NULL), GS_OK);
    GS_CHECK_INT(gs_mixchol_factor(&mc, A, 2, NULL, NULL), GS_OK);
    GS_CHECK_INT(mc.in_double, 1);
    GS_CHECK(mc.Ld != NULL);
    gs_mixchol_solve(&mc, b, z);
    /* cond ~ 4e10: double solves it to ~1e-6 relative */
    GS_CHECK_MSG(rel_err(z, x, 2) < 1e-5, "fallback solve error %g", rel_err(z, x, 2));
    /* the same matrix with d = (0, 1): fine in float again */
    const double d[2] = {0.0, 1.0};
    mul_lower(A, d, 2, x, b);
    GS_CHECK_INT(gs_mixchol_factor(&mc, A, 2, d, NULL), GS_OK);
    GS_CHECK_INT(mc.in_double, 0);
    gs_mixchol_solve(&mc, b, z);
    GS_CHECK(rel_err(z, x, 2) < 1e-6);
    /* not positive definite in double either: an error naming it */
    double B[4] = {1.0, 2.0, 0.0, 1.0};
    gs_error e;
    GS_CHECK_INT(gs_mixchol_factor(&mc, B, 2, NULL, &e), GS_ERR_NOT_SPD);
    gs_mixchol_free(&mc);
}

GS_TEST(double_factor_and_solves)
{
    /* A + diag(d) = [[4, 2], [2, 3]] = L L', L = [[2, 0], [1, sqrt 2]] */
    const double A[4] = {3.0, 2.0, 0.0, 1.0}, d[2] = {1.0, 2.0};
    double L[4];
    GS_CHECK_INT(gs_chol_plus_diag(L, 2, A, 2, d, "A", NULL), GS_OK);
    GS_CHECK_NEAR(L[0], 2.0, 0.0);
    GS_CHECK_NEAR(L[1], 1.0, 0.0);
    GS_CHECK_NEAR(L[3], sqrt(2.0), 1e-15);
    double x[2] = {10.0, 8.0};
    gs_llt_solve64(L, 2, x);
    GS_CHECK_NEAR(x[0], 1.75, 1e-15); /* 4 (1.75) + 2 (1.5) = 10, 2 (1.75) + 3 (1.5) = 8 */
    GS_CHECK_NEAR(x[1], 1.5, 1e-15);
    const float Lf[4] = {2.0f, 1.0f, 0.0f, (float)sqrt(2.0)};
    float t[2];
    const double r[2] = {10.0, 8.0};
    double z[2];
    gs_llt_solve32(Lf, 2, t, r, z);
    GS_CHECK_NEAR(z[0], 1.75, 1e-6);
    GS_CHECK_NEAR(z[1], 1.5, 1e-6);
    const double N[4] = {1.0, 2.0, 0.0, 1.0};
    gs_error e;
    GS_CHECK_INT(gs_chol_plus_diag(L, 2, N, 2, NULL, "N", &e), GS_ERR_NOT_SPD);
    GS_CHECK_STR(e.field, "N");
    GS_CHECK_INT(e.lapack_info, 2);
}

GS_TEST_MAIN()
