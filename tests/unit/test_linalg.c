/* test_linalg.c -- core/linalg's own kernels against hand-computed values
 * and plain substitution: the checked Cholesky and the triangular solves of
 * the active-set factors; the BLAS kernel report. */
#include "gs_test.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h"

/* gs_chol: the factor of a hand-made SPD matrix; a matrix that is not
 * positive definite names its leading minor; a NaN or an Inf anywhere in
 * the lower triangle is an error, not a factor (the upper triangle is
 * never read). */
GS_TEST(chol_checks_spd_and_finite)
{
    gs_error e;
    double A[9] = {4, 2, 2, 99, 10, 5, 99, 99, 6}; /* column-major, lower used */
    GS_CHECK_INT(gs_chol(A, 3, 3, "K", &e), GS_OK);
    /* L = [2 0 0; 1 3 0; 1 4/3 sqrt(6 - 1 - 16/9)] */
    GS_CHECK_NEAR(A[0], 2.0, 1e-15);
    GS_CHECK_NEAR(A[1], 1.0, 1e-15);
    GS_CHECK_NEAR(A[2], 1.0, 1e-15);
    GS_CHECK_NEAR(A[4], 3.0, 1e-15);
    GS_CHECK_NEAR(A[5], 4.0 / 3.0, 1e-15);
    GS_CHECK_NEAR(A[8], sqrt(5.0 - 16.0 / 9.0), 1e-15);
    GS_CHECK(A[3] == 99 && A[6] == 99 && A[7] == 99);
    double B[4] = {1, 2, 0, 1}; /* [1 2; 2 1]: indefinite at minor 2 */
    GS_CHECK_INT(gs_chol(B, 2, 2, "Q_CC", &e), GS_ERR_NOT_SPD);
    GS_CHECK_STR(e.field, "Q_CC");
    GS_CHECK_INT(e.lapack_info, 2);
    for (int at = 0; at < 3; at++) /* a_11, a_21, a_33 */
        for (int inf = 0; inf < 2; inf++) {
            const int pos[3] = {0, 1, 8};
            double C[9] = {4, 2, 2, 0, 10, 5, 0, 0, 6};
            C[pos[at]] = inf ? INFINITY : NAN;
            gs_err rc = gs_chol(C, 3, 3, "K", &e);
            GS_CHECK_STR(e.field, "K");
            if (inf && at == 1) { /* a_22 - l_21^2 = -Inf: a negative pivot first */
                GS_CHECK_INT(rc, GS_ERR_NOT_SPD);
                GS_CHECK_INT(e.lapack_info, 2);
            } else {
                GS_CHECK_INT(rc, GS_ERR_INVALID);
                GS_CHECK(strstr(e.msg, "not finite") != NULL);
            }
        }
}

/* Plain column-ordered substitution, the reference of the blocked kernels. */
static void ref_solve(int k, const double *L, int ld, double *x, int trans)
{
    if (!trans) {
        for (int j = 0; j < k; j++) {
            x[j] /= L[j + (size_t)j * ld];
            for (int i = j + 1; i < k; i++)
                x[i] -= L[i + (size_t)j * ld] * x[j];
        }
    } else {
        for (int i = k - 1; i >= 0; i--) {
            for (int q = i + 1; q < k; q++)
                x[i] -= L[q + (size_t)i * ld] * x[q];
            x[i] /= L[i + (size_t)i * ld];
        }
    }
}

/* gs_trsv_l / gs_trsv_lt: exact on a hand-made 5 x 5 (a block of four and
 * one left over), within round-off of plain substitution for every order 0
 * to 13 (every remainder of the blocks and of the four-wide sweeps) and 37,
 * 80, 150; nothing outside the lower triangle of the leading k x k block is
 * read (NaN there). */
GS_TEST(trsv_blocked_matches_substitution)
{
    /* L = 2 I + subdiagonal 1 (NaN above the diagonal, never read):
     * L^-1 (2, 5, 6, 7, 8) = (1, 2, 2, 2.5, 2.75) */
    double L5[25], x[5] = {2, 5, 6, 7, 8};
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            L5[i + 5 * j] = i == j ? 2.0 : (i == j + 1 ? 1.0 : (i > j ? 0.0 : NAN));
    gs_trsv_l(5, L5, 5, x);
    const double want[5] = {1, 2, 2, 2.5, 2.75};
    for (int i = 0; i < 5; i++)
        GS_CHECK(x[i] == want[i]);
    double y[5] = {2, 5, 6, 7, 8};
    gs_trsv_lt(5, L5, 5, y); /* y5 = 4, y4 = 1.5, y3 = 2.25, y2 = 1.375, y1 = 0.3125 */
    const double want_t[5] = {0.3125, 1.375, 2.25, 1.5, 4};
    for (int i = 0; i < 5; i++)
        GS_CHECK(y[i] == want_t[i]);

    const int ks[17] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 37, 80, 150};
    unsigned long long seed = 12345;
    for (int t = 0; t < 17; t++) {
        const int k = ks[t], ld = k + 3;
        double *L = malloc((size_t)(ld * (k + 1) + 1) * sizeof *L);
        double *a = malloc((size_t)(k + 1) * sizeof *a), *b = malloc((size_t)(k + 1) * sizeof *b);
        for (int j = 0; j < k; j++)
            for (int i = 0; i < ld; i++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                double r = (double)(seed >> 11) / 9007199254740992.0 - 0.5; /* [-0.5, 0.5) */
                L[i + (size_t)j * ld] = i < j || i >= k ? NAN : (i == j ? 1.5 + r : r / sqrt(k));
            }
        for (int trans = 0; trans < 2; trans++) {
            for (int i = 0; i < k; i++)
                a[i] = b[i] = 1.0 + 0.25 * (i % 7) - 0.1 * trans;
            (trans ? gs_trsv_lt : gs_trsv_l)(k, L, (size_t)ld, a);
            ref_solve(k, L, ld, b, trans);
            for (int i = 0; i < k; i++)
                GS_CHECK_NEAR(a[i], b[i], 1e-13 * (1 + fabs(b[i])));
        }
        free(L);
        free(a);
        free(b);
    }
}

/* gs_trsm_l: every column rounded exactly as gs_trsv_l rounds it alone
 * (bitwise), for orders 0..13, 37, 80 and 1, 3, 5 columns; gs_cols_dot:
 * exact on integer data (every sum exact in double), and within round-off
 * of a plain sum on random data for every order 0..13 and 37 (the four-wide
 * blocks and the rows left over) and every count of columns 1..6 (the
 * sweeps of four and the columns left over). */
GS_TEST(trsm_and_cols_dot)
{
    unsigned long long seed = 777;
#define RND() (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, \
               (double)(seed >> 11) / 9007199254740992.0 - 0.5)
    const int ks[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 37, 80};
    for (int t = 0; t < 16; t++) {
        const int k = ks[t], ld = k + 5, ldx = k + 2;
        double *L = malloc((size_t)(ld * (k + 1) + 1) * sizeof *L);
        double *X = malloc((size_t)(ldx * 5 + 1) * sizeof *X);
        double *Y = malloc((size_t)(ldx * 5 + 1) * sizeof *Y);
        for (int j = 0; j < k; j++)
            for (int i = 0; i < ld; i++) {
                double r = RND();
                L[i + (size_t)j * ld] = i < j || i >= k ? NAN : (i == j ? 1.5 + r : r / sqrt(k));
            }
        for (int n = 1; n <= 5; n += 2) {
            for (int i = 0; i < ldx * n; i++)
                X[i] = Y[i] = RND();
            gs_trsm_l(k, L, (size_t)ld, X, (size_t)ldx, n);
            for (int q = 0; q < n; q++) {
                gs_trsv_l(k, L, (size_t)ld, Y + (size_t)q * ldx);
                GS_CHECK(memcmp(X + (size_t)q * ldx, Y + (size_t)q * ldx,
                                (size_t)k * sizeof *X) == 0);
            }
        }
        free(L);
        free(X);
        free(Y);
    }
    /* integer data: B[i, p] = (i + 2p) mod 7 - 3, x_i = i mod 5 - 2 */
    double B[40 * 6], x[40], y[6];
    for (int k = 0; k <= 37; k += (k < 13 ? 1 : 24)) {
        for (int n = 1; n <= 6; n++) {
            for (int p = 0; p < n; p++)
                for (int i = 0; i < k; i++)
                    B[i + 40 * p] = (double)((i + 2 * p) % 7 - 3);
            for (int i = 0; i < k; i++)
                x[i] = (double)(i % 5 - 2);
            gs_cols_dot(k, B, 40, n, x, y);
            for (int p = 0; p < n; p++) {
                double want = 0;
                for (int i = 0; i < k; i++)
                    want += B[i + 40 * p] * x[i];
                GS_CHECK(y[p] == want);
            }
            for (int p = 0; p < n; p++)
                for (int i = 0; i < k; i++)
                    B[i + 40 * p] = RND();
            for (int i = 0; i < k; i++)
                x[i] = RND();
            gs_cols_dot(k, B, 40, n, x, y);
            for (int p = 0; p < n; p++) {
                double want = 0, mag = 0;
                for (int i = 0; i < k; i++) {
                    want += B[i + 40 * p] * x[i];
                    mag += fabs(B[i + 40 * p] * x[i]);
                }
                GS_CHECK_NEAR(y[p], want, 1e-15 * (1 + mag));
            }
        }
    }
#undef RND
}

/* gs_cols_mul: bitwise the plain sum in the order of the columns, each y_i
 * left to right, for every count of columns 0..20 and 37 (the sweeps of
 * eight, the four and the ones left over), columns in any order of A and
 * a leading dimension above m. */
GS_TEST(cols_mul_sums_in_column_order)
{
    unsigned long long seed = 4242;
#define RND() (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, \
               (double)(seed >> 11) / 9007199254740992.0 - 0.5)
    enum { M = 29, LDA = 31, N = 40 };
    static double A[LDA * N];
    for (int i = 0; i < LDA * N; i++)
        A[i] = RND();
    int cols[N];
    double v[N], y[M], want[M];
    for (int k = 0; k <= 37; k += (k < 20 ? 1 : 17)) {
        for (int c = 0; c < k; c++) {
            cols[c] = (c * 17 + 5) % N;
            v[c] = RND();
        }
        for (int i = 0; i < M; i++)
            y[i] = want[i] = RND();
        gs_cols_mul(M, A, LDA, cols, v, k, y);
        for (int i = 0; i < M; i++) {
            for (int c = 0; c < k; c++)
                want[i] = want[i] + v[c] * A[i + (size_t)cols[c] * LDA];
            GS_CHECK(y[i] == want[i]);
        }
    }
#undef RND
}

/* gs_rotate: bitwise the plain loop (compiled for the baseline CPU here,
 * while the library picks its AVX2 clone where the CPU has one) for every
 * length 0..13 and 37, with the rotation of a 3-4-5 triangle exact on
 * integers. */
GS_TEST(rotate_matches_plain_loop)
{
    double l[40] = {0}, x[40] = {0}, x2[40] = {0}, d[40] = {0};
    for (int n = 0; n <= 37; n += (n < 13 ? 1 : 24)) {
        for (int i = 0; i < n; i++) {
            l[i] = 0.1 * (i + 1) - 1.3;
            x[i] = x2[i] = 1.0 / (i + 3);
        }
        const double c = 0.8, s = 0.6;
        gs_rotate(n, d, l, x, c, s);
        for (int i = 0; i < n; i++) {
            const double want_d = c * l[i] + s * x2[i], want_x = c * x2[i] - s * l[i];
            GS_CHECK(d[i] == want_d && x[i] == want_x);
        }
    }
    double l3[5] = {5, 5, 5, 5, 5}, x3[5] = {0, 0, 0, 0, 0}, d3[5];
    gs_rotate(5, d3, l3, x3, 0.6, 0.8); /* (5, 0) -> (3, -4) */
    for (int i = 0; i < 5; i++)
        GS_CHECK(d3[i] == 3.0 && x3[i] == -4.0);
}

/* gs_alloc_matrix: zeroed when asked, small blocks from plain malloc,
 * large ones (from GS_HUGE_MIN_BYTES) on a 2 MiB boundary; a count whose
 * bytes overflow is NULL (not handed to the allocator), 0 is one double;
 * every block goes with free(). */
GS_TEST(alloc_matrix_zeroed_aligned_checked)
{
    const size_t counts[] = {0, 1, 1000, GS_HUGE_MIN_BYTES / 8 - 1, GS_HUGE_MIN_BYTES / 8,
                             3 * GS_HUGE_MIN_BYTES / 8 + 5};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        const size_t n = counts[c] ? counts[c] : 1;
        double *a = gs_alloc_matrix(counts[c], sizeof(double), 1);
        GS_CHECK(a != NULL);
        if (!a)
            continue;
        int zero = 1;
        for (size_t i = 0; i < n; i++)
            zero &= a[i] == 0.0;
        GS_CHECK_MSG(zero, "count %zu not zeroed", counts[c]);
        if (n * 8 >= GS_HUGE_MIN_BYTES)
            GS_CHECK_MSG(((uintptr_t)a & ((2u << 20) - 1)) == 0, "count %zu not 2 MiB aligned",
                         counts[c]);
        a[n - 1] = 1.5; /* the whole block is ours */
        free(a);
        double *b = gs_alloc_matrix(counts[c], sizeof(double), 0);
        GS_CHECK(b != NULL);
        if (b)
            b[n - 1] = 2.5;
        free(b);
    }
    GS_CHECK(gs_alloc_matrix(SIZE_MAX / 8 + 1, sizeof(double), 1) == NULL); /* its bytes overflow */
    GS_CHECK(gs_alloc_matrix(SIZE_MAX / 2 + 1, 2, 0) == NULL);
    GS_CHECK(gs_alloc_matrix(1, 0, 0) == NULL); /* no element size */
}

/* 1 if THP is "never" on this machine (no advice can take effect). */
static int thp_never(void)
{
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return 1;
    const int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    return !got || strstr(line, "[never]") != NULL;
}

/* The THPeligible flag of the mapping holding p in /proc/self/smaps (-1:
 * not found). */
static int thp_eligible(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int in = 0, flag = -1;
    const uintptr_t a = (uintptr_t)p;
    while (flag < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = a >= lo && a < hi;
        else if (in && !strncmp(line, "THPeligible:", 12))
            flag = atoi(line + 12);
    }
    fclose(f);
    return flag;
}

/* A large block is advised as huge pages (the kernel lists its mapping
 * THPeligible), unless the machine's THP setting is "never" or its kernel
 * does not say. */
GS_TEST(alloc_matrix_advises_huge_pages)
{
    if (thp_never()) {
        printf("  THP is \"never\" here: nothing to check\n");
        return;
    }
    double *a = gs_alloc_matrix(GS_HUGE_MIN_BYTES / 8 * 2, sizeof(double), 1);
    GS_CHECK(a != NULL);
    const int flag = a ? thp_eligible(a) : 1;
    if (flag < 0)
        printf("  no THPeligible line in /proc/self/smaps (kernel < 5.0?): nothing to check\n");
    else
        GS_CHECK_INT(flag, 1);
    free(a);
}

/* The kernel's name is OpenBLAS's, "pinned" only when OPENBLAS_CORETYPE
 * names that kernel (in any case): a variable naming another kernel did
 * not choose the one loaded (OpenBLAS ignores a name it does not know). */
GS_TEST(blas_kernel_says_who_chose_it)
{
    const char *saved = getenv("OPENBLAS_CORETYPE");
    char keep[64] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    int pinned = -1;
    const char *build = NULL;
    const char *k = gs_blas_kernel(&pinned, &build);
    GS_CHECK(k && k[0]);
    GS_CHECK(build && strstr(build, "OpenBLAS") && strstr(build, k));
    char lower[64];
    snprintf(lower, sizeof lower, "%s", k);
    for (char *c = lower; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    setenv("OPENBLAS_CORETYPE", lower, 1);
    GS_CHECK_INT((gs_blas_kernel(&pinned, NULL), pinned), 1);
    setenv("OPENBLAS_CORETYPE", strcmp(k, "Prescott") ? "Prescott" : "Haswell", 1);
    GS_CHECK_INT((gs_blas_kernel(&pinned, NULL), pinned), 0);
    unsetenv("OPENBLAS_CORETYPE");
    GS_CHECK_INT((gs_blas_kernel(&pinned, NULL), pinned), 0);
    GS_CHECK_STR(gs_blas_kernel(NULL, NULL), k);
    if (saved)
        setenv("OPENBLAS_CORETYPE", keep, 1);
}

GS_TEST_MAIN()
