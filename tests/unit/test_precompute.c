/* test_precompute.c -- Q, L_Q, u0, K^-1 and condition estimates against
 * brute-force dense computations on small models. */
#include "gs_test.h"
#include "hash.h"
#include "test_models.h"
#include "test_solver_support.h"

#include <math.h>

#include "linalg.h"
#include "precomp_check.h"
#include "precomp_io.h"
#include "precompute.h"

static double max_abs(const double *a, size_t n)
{
    double r = 0;
    for (size_t i = 0; i < n; i++)
        r = fmax(r, fabs(a[i]));
    return r;
}

/* Q of mdl (freed here) against A'K^-1 A formed densely. */
static void check_Q(gs_model *mdl)
{
    gs_precomp *pc = ts_build(mdl);
    int m = mdl->m;
    double *Qb = tm_bruteforce_Q(mdl);
    double diff = 0.0;
    for (int i = 0; i < m * m; i++)
        diff = fmax(diff, fabs(pc->Q[i] - Qb[i]));
    GS_CHECK_MSG(diff <= 1e-12 * max_abs(Qb, (size_t)m * m), "rel diff %.3g",
                 diff / max_abs(Qb, (size_t)m * m));
    /* exact symmetry of the stored Q, and L_Q L_Q' = Q */
    for (int j = 0; j < m; j++)
        for (int i = 0; i < m; i++)
            GS_CHECK(pc->Q[(size_t)j * m + i] == pc->Q[(size_t)i * m + j]);
    double *R = calloc((size_t)m * m, sizeof *R);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, m, m, 1.0, pc->LQ, m, pc->LQ, m, 0.0,
                R, m);
    diff = 0.0;
    for (int i = 0; i < m * m; i++)
        diff = fmax(diff, fabs(R[i] - pc->Q[i]));
    GS_CHECK(diff <= 1e-13 * max_abs(pc->Q, (size_t)m * m));
    for (int i = 0; i < m; i++)
        GS_CHECK(pc->qdiag[i] == pc->Q[(size_t)i * m + i]);
    free(R);
    free(Qb);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

static void check_Q_against_bruteforce(int parts, int nb, int fixed, uint64_t seed)
{
    check_Q(tm_random(parts, nb, fixed, seed));
}

/* Both routes of Q's part terms in one model (precompute.c build_Q): part 0
 * has 40 pairs on its 40 DOFs (36 against the jig, 3 across, one with both
 * entries in part 0: the inverse route, dpotri), part 1 only 3 (the
 * triangular route, dtrsm + dsyrk). */
GS_TEST(Q_matches_bruteforce_both_routes)
{
    const int nb = 40, nj = 36, m = nj + 4;
    tm_seed(21);
    gs_model *mdl = gs_model_new(2, 2 * nb, m, 0, NULL);
    for (int b = 0; b < 2; b++) {
        gs_model_alloc_block(mdl, b, nb, NULL);
        tm_random_spd(mdl->parts[b].K, nb, 0.05 + 0.1 * b);
        for (int v = 0; v < nb; v++)
            mdl->nodes[b * nb + v] = (gs_node){.part = b, .dof = v, .xyz = {v, 0, -b}};
    }
    for (int k = 0; k < nj; k++)
        mdl->pairs[k] = (gs_pair){.node = {k, GS_FIXED}, .coef = {1.0, 0.0}};
    for (int k = 0; k < 3; k++)
        mdl->pairs[nj + k] = (gs_pair){.node = {k, nb + k}, .coef = {-1.0, 1.0}};
    mdl->pairs[nj + 3] = (gs_pair){.node = {37, 39}, .coef = {1.0, -0.5}};
    check_Q(mdl);
}

GS_TEST(Q_matches_bruteforce_two_parts)
{
    check_Q_against_bruteforce(2, 7, 3, 11);
}

GS_TEST(Q_matches_bruteforce_sandwich_three_parts)
{
    check_Q_against_bruteforce(3, 6, 2, 12);
}

GS_TEST(Q_matches_bruteforce_larger)
{
    check_Q_against_bruteforce(2, 60, 10, 13);
}

GS_TEST(kinv_and_u0)
{
    gs_model *mdl = tm_random(3, 5, 2, 14);
    gs_precomp *pc = ts_build(mdl);
    int n = mdl->n, m = mdl->m;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *kx = calloc(n, sizeof *kx);
    for (int i = 0; i < n; i++)
        b[i] = x[i] = sin(i + 1.0);
    gs_precomp_kinv(pc, x);
    for (int p = 0; p < mdl->n_parts; p++) {
        int o = mdl->parts[p].offset, nb = mdl->parts[p].ndof;
        cblas_dsymv(CblasColMajor, CblasLower, nb, 1.0, mdl->parts[p].K, nb, x + o, 1, 0.0,
                    kx + o, 1);
    }
    for (int i = 0; i < n; i++)
        GS_CHECK_NEAR(kx[i], b[i], 1e-12);
    /* u0 = A'K^-1 f, s0 = 1/2 f'K^-1 f */
    memcpy(x, mdl->f, n * sizeof *x);
    gs_precomp_kinv(pc, x);
    double *u = malloc(m * sizeof *u);
    gs_model_At(mdl, x, u);
    for (int k = 0; k < m; k++)
        GS_CHECK_NEAR(pc->u0[k], u[k], 1e-14);
    GS_CHECK_NEAR(pc->s0, 0.5 * cblas_ddot(n, mdl->f, 1, x, 1), 1e-15);
    /* sparse Qx = dense Qx */
    double *xs = calloc(m, sizeof *xs), *y1 = malloc(m * sizeof *y1), *y2 = malloc(m * sizeof *y2);
    int S[3] = {0, 4, m - 1};
    double v[3] = {1.5, -2.0, 0.25};
    for (int i = 0; i < 3; i++)
        xs[S[i]] = v[i];
    gs_precomp_Qx(pc, S, 3, v, y1);
    gs_precomp_Qx(pc, NULL, m, xs, y2);
    for (int k = 0; k < m; k++)
        GS_CHECK_NEAR(y1[k], y2[k], 1e-13);
    free(b); free(x); free(kx); free(u); free(xs); free(y1); free(y2);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* exact cond_1 of an SPD matrix via its explicit inverse */
static double exact_cond1(const double *K, int n)
{
    double *Ki = malloc((size_t)n * n * sizeof *Ki);
    memcpy(Ki, K, (size_t)n * n * sizeof *Ki);
    LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, Ki, n);
    LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', n, Ki, n);
    double c = gs_sym_norm1(K, n, n) * gs_sym_norm1(Ki, n, n);
    free(Ki);
    return c;
}

GS_TEST(condition_estimates)
{
    gs_model *mdl = tm_random(2, 12, 4, 15);
    /* make part 1 ill-conditioned: scale one direction */
    mdl->parts[1].K[0] *= 1e6;
    gs_precomp *pc = ts_build(mdl);
    for (int b = 0; b < 2; b++) {
        double ex = exact_cond1(mdl->parts[b].K, 12);
        GS_CHECK_MSG(pc->cond_block[b] <= ex * (1 + 1e-9) && pc->cond_block[b] >= ex / 10,
                     "block %d: estimate %.4g exact %.4g", b, pc->cond_block[b], ex);
        double via_helper;
        GS_CHECK_INT(gs_spd_cond_est(mdl->parts[b].K, 12, &via_helper, "K", NULL), GS_OK);
        GS_CHECK_NEAR(via_helper, pc->cond_block[b], 1e-6 * via_helper);
    }
    GS_CHECK(pc->cond_block[1] > 1e5);
    GS_CHECK(pc->cond_K >= pc->cond_block[1] * (1 - 1e-12));
    double exq = exact_cond1(pc->Q, mdl->m);
    GS_CHECK(pc->cond_Q <= exq * (1 + 1e-9) && pc->cond_Q >= exq / 10);
    GS_CHECK(pc->t.total >= pc->t.factor_K && pc->t.factor_K >= 0 && pc->t.build_Q >= 0 &&
             pc->t.factor_Q >= 0);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* Dense parts are factored side by side when BLAS has two threads
 * (factor_blocks): the factors, their condition estimates and Q are bitwise
 * those of one thread, and with two parts not positive definite the first
 * in model order is the one reported, whichever thread met it first. */
GS_TEST(parts_factored_side_by_side)
{
    const int before = gs_blas_get_threads();
    gs_model *mdl = tm_random(3, 30, 4, 16);
    gs_precomp *pc[2];
    for (int t = 0; t < 2; t++) {
        gs_blas_set_threads(t + 1);
        pc[t] = ts_build(mdl);
    }
    for (int b = 0; b < 3; b++) {
        const int nb = mdl->parts[b].ndof;
        GS_CHECK(!memcmp(pc[0]->L[b], pc[1]->L[b], sizeof(double) * (size_t)nb * nb));
        GS_CHECK(pc[0]->cond_block[b] == pc[1]->cond_block[b]);
    }
    GS_CHECK(!memcmp(pc[0]->Q, pc[1]->Q, sizeof(double) * (size_t)mdl->m * mdl->m));
    GS_CHECK(pc[0]->cond_K == pc[1]->cond_K);
    gs_precomp_free(pc[0]);
    gs_precomp_free(pc[1]);
    for (int b = 1; b < 3; b++) /* parts 1 and 2: one negative pivot each */
        mdl->parts[b].K[(size_t)5 * mdl->parts[b].ndof + 5] = -1.0;
    for (int t = 0; t < 2; t++) {
        gs_blas_set_threads(t + 1);
        gs_precomp *bad = NULL;
        gs_error e;
        GS_CHECK_INT(gs_precomp_build(mdl, &bad, &e), GS_ERR_NOT_SPD);
        GS_CHECK_STR(e.field, "parts[1].K");
        GS_CHECK(bad == NULL);
    }
    gs_blas_set_threads(before);
    gs_model_free(mdl);
}

/* GS_PRECOMP_DEFER_LQ stops before L_Q: everything else bitwise the full
 * build's, LQ NULL, cond_Q NaN, not savable; gs_precomp_finish_lq then
 * completes it bitwise (a second call is a no-op). */
GS_TEST(deferred_lq_then_finished_is_the_full_build)
{
    gs_model *mdl = tm_random(3, 30, 4, 16);
    gs_precomp *full = ts_build(mdl), *d = NULL;
    gs_error e;
    GS_CHECK(gs_precomp_has_lq(full));
    GS_CHECK_INT(gs_precomp_build_ex(mdl, GS_PRECOMP_DEFER_LQ, &d, &e), GS_OK);
    const size_t m = (size_t)mdl->m, mm = m * m * sizeof(double);
    GS_CHECK(!gs_precomp_has_lq(d) && d->LQ == NULL && isnan(d->cond_Q));
    GS_CHECK(!memcmp(d->Q, full->Q, mm));
    GS_CHECK(!memcmp(d->qdiag, full->qdiag, m * sizeof(double)));
    GS_CHECK(!memcmp(d->u0, full->u0, m * sizeof(double)));
    GS_CHECK(d->cond_K == full->cond_K && d->s0 == full->s0);
    for (int b = 0; b < mdl->n_parts; b++) {
        const size_t nb = (size_t)mdl->parts[b].ndof;
        GS_CHECK(!memcmp(d->L[b], full->L[b], nb * nb * sizeof(double)));
    }
    char path[512];
    gs_test_tmp_path(path, sizeof path, "test_precompute_deferred.factors");
    GS_CHECK_INT(gs_precomp_save(d, path, NULL, &e), GS_ERR_INVALID);
    const double total = d->t.total;
    GS_CHECK_INT(gs_precomp_finish_lq(d, &e), GS_OK);
    GS_CHECK(gs_precomp_has_lq(d));
    GS_CHECK(!memcmp(d->LQ, full->LQ, mm));
    GS_CHECK(d->cond_Q == full->cond_Q);
    GS_CHECK(d->t.factor_Q > 0 && d->t.total > total);
    const double *lq = d->LQ;
    GS_CHECK_INT(gs_precomp_finish_lq(d, &e), GS_OK);
    GS_CHECK(d->LQ == lq);
    GS_CHECK_INT(gs_precomp_save(d, path, NULL, &e), GS_OK);
    remove(path);
    gs_precomp_free(d);
    gs_precomp_free(full);
    gs_model_free(mdl);
}

/* Dependent pairs: the deferred build succeeds (nothing before L_Q sees
 * them); gs_precomp_finish_lq reports them as the full build does, LQ stays
 * NULL. */
GS_TEST(deferred_lq_finds_dependent_pairs)
{
    gs_model *mdl = tm_chain3();
    mdl->pairs[0] = (gs_pair){.node = {0, 1}, .coef = {-1, 1}};
    mdl->pairs[1] = (gs_pair){.node = {1, 2}, .coef = {-1, 1}};
    mdl->pairs[2] = (gs_pair){.node = {0, 2}, .coef = {-1, 1}};
    gs_error e;
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *d = NULL;
    GS_CHECK_INT(gs_precomp_build_ex(mdl, GS_PRECOMP_DEFER_LQ, &d, &e), GS_OK);
    GS_CHECK_INT(gs_precomp_finish_lq(d, &e), GS_ERR_SINGULAR);
    GS_CHECK_STR(e.field, "pairs[2]");
    GS_CHECK(!gs_precomp_has_lq(d) && d->LQ == NULL);
    gs_precomp_free(d);
    gs_model_free(mdl);
}

/* The blocks taken from the model and factored in place: every array
 * bitwise the copying build's, each L[b] the very block taken (no copy),
 * the model released with its hash; a failure (part 0 not SPD, the blocks
 * factored one after the other) frees part 0's adopted block with the
 * precomputation and part 1's, never reached, in the call (the leak check
 * of the sanitized build sees both go). */
GS_TEST(build_taken_factors_in_place_bitwise)
{
    gs_model *mdl = tm_random(3, 30, 4, 16), *ref = tm_random(3, 30, 4, 16);
    gs_precomp *full = ts_build(ref), *t = NULL;
    gs_error e;
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    char h0[GS_HASH_HEX], h[GS_HASH_HEX];
    gs_model_hash(mdl, h0);
    double **blocks = gs_model_take_dense(mdl, NULL);
    GS_CHECK(blocks != NULL && gs_model_dense_released(mdl));
    double *b1 = blocks[1];
    GS_CHECK_INT(gs_precomp_build_taken(mdl, blocks, 0, &t, &e), GS_OK);
    GS_CHECK(t->L[1] == b1);
    const size_t m = (size_t)mdl->m, mm = m * m * sizeof(double);
    GS_CHECK(!memcmp(t->Q, full->Q, mm) && !memcmp(t->LQ, full->LQ, mm));
    GS_CHECK(!memcmp(t->u0, full->u0, m * sizeof(double)));
    GS_CHECK(t->cond_K == full->cond_K && t->cond_Q == full->cond_Q && t->s0 == full->s0);
    for (int b = 0; b < mdl->n_parts; b++) {
        const size_t nb = (size_t)mdl->parts[b].ndof;
        GS_CHECK(blocks[b] == NULL && mdl->parts[b].K == NULL);
        GS_CHECK(!memcmp(t->L[b], full->L[b], nb * nb * sizeof(double)));
    }
    gs_model_hash(mdl, h);
    GS_CHECK_STR(h, h0);
    free(blocks);
    gs_precomp_free(t);

    gs_model *bad = tm_random(2, 8, 2, 17);
    bad->parts[0].K[3 * 8 + 3] = -50.0; /* a negative pivot: not SPD */
    GS_CHECK_INT(gs_model_validate(bad, &e), GS_OK);
    blocks = gs_model_take_dense(bad, NULL);
    const int threads = gs_blas_get_threads();
    gs_blas_set_threads(1); /* one part after the other: part 0 adopted first */
    t = NULL;
    GS_CHECK_INT(gs_precomp_build_taken(bad, blocks, 0, &t, &e), GS_ERR_NOT_SPD);
    gs_blas_set_threads(threads);
    GS_CHECK_STR(e.field, "parts[0].K");
    GS_CHECK(t == NULL && blocks[0] == NULL && blocks[1] == NULL);
    free(blocks);
    gs_model_free(bad);
    gs_precomp_free(full);
    gs_model_free(ref);
    gs_model_free(mdl);
}

/* The build's own check (precomp_check.h): quiet on a correct build, at
 * rounding level; a factor, Q or L_Q changed by one part in a million in one
 * entry (what a miscomputing BLAS kernel does, and more) fails it, naming
 * the part or the pairs. The checks are run again on a finished build, its
 * diagonals of K restored from the model (the build frees them). */
GS_TEST(build_check_catches_a_wrong_entry)
{
    gs_model *mdl = tm_random(2, 60, 10, 18);
    gs_precomp *pc = ts_build(mdl);
    const int m = mdl->m;
    GS_CHECK(pc->kdiag == NULL); /* spent by the build */
    double **kd = calloc(2, sizeof *kd);
    for (int b = 0; b < 2; b++) {
        const int nb = mdl->parts[b].ndof;
        kd[b] = malloc((size_t)nb * sizeof(double));
        for (int i = 0; i < nb; i++)
            kd[b][i] = mdl->parts[b].K[(size_t)i * nb + i];
    }
    pc->kdiag = kd;
    gs_error e;
    double rq = -1.0, rl = -1.0;
    GS_CHECK_INT(gs_precomp_check_q(pc, 1, &rq, &e), GS_OK);
    GS_CHECK_INT(gs_precomp_check_lq(pc, &rl, &e), GS_OK);
    GS_CHECK_MSG(rq >= 0.0 && rq < 1e-13 && rl >= 0.0 && rl < 1e-14, "ratios %.3g %.3g", rq, rl);
    /* one entry of Q (both triangles) */
    const size_t ij = 7 + (size_t)3 * m, ji = 3 + (size_t)7 * m;
    const double q0 = pc->Q[ij];
    pc->Q[ij] = pc->Q[ji] = q0 + 1e-6 * max_abs(pc->qdiag, (size_t)m);
    GS_CHECK_INT(gs_precomp_check_q(pc, 1, &rq, &e), GS_ERR_CHECK);
    GS_CHECK_STR(e.field, "pairs");
    GS_CHECK(strstr(e.msg, "Q = A'K^-1 A does not agree") && strstr(e.msg, gs_blas_kernel(NULL, NULL)));
    GS_CHECK_INT(gs_precomp_check_lq(pc, NULL, &e), GS_ERR_CHECK);
    pc->Q[ij] = pc->Q[ji] = q0;
    /* one entry of part 1's factor (lower triangle) */
    const int nb = mdl->parts[1].ndof;
    double *l = &pc->L[1][20 + (size_t)11 * nb];
    const double l0 = *l;
    *l = l0 * (1.0 + 1e-6) + 1e-6 * pc->L[1][(size_t)11 * nb + 11];
    GS_CHECK_INT(gs_precomp_check_q(pc, 1, NULL, &e), GS_ERR_CHECK);
    GS_CHECK_STR(e.field, "parts[1].K");
    *l = l0;
    /* one entry of L_Q */
    double *lq = &pc->LQ[(m - 1) + (size_t)2 * m];
    const double lq0 = *lq;
    *lq = lq0 + 1e-6 * pc->LQ[(size_t)2 * m + 2];
    GS_CHECK_INT(gs_precomp_check_lq(pc, NULL, &e), GS_ERR_CHECK);
    GS_CHECK(strstr(e.msg, "factor of Q") != NULL);
    *lq = lq0;
    /* every entry of the last five columns' lower triangle, and L_Q(0, 0):
     * the check reads the triangle in blocks of four columns from their
     * diagonal, whatever m mod 4 */
    for (size_t at = 0; at < (size_t)m * m; at++) {
        const int i = (int)(at % m), j = (int)(at / m);
        if (i < j || (j < m - 5 && at != 0))
            continue;
        const double x0 = pc->LQ[at];
        pc->LQ[at] = x0 + 1e-6 * pc->LQ[(size_t)2 * m + 2];
        GS_CHECK_MSG(gs_precomp_check_lq(pc, NULL, &e) == GS_ERR_CHECK, "L_Q(%d, %d), m = %d", i,
                     j, m);
        pc->LQ[at] = x0;
    }
    /* a NaN (a kernel that makes one): the largest residual is NaN, not
     * the largest of the others */
    pc->Q[ij] = pc->Q[ji] = NAN;
    GS_CHECK_INT(gs_precomp_check_q(pc, 1, NULL, &e), GS_ERR_CHECK);
    GS_CHECK_INT(gs_precomp_check_lq(pc, NULL, &e), GS_ERR_CHECK);
    pc->Q[ij] = pc->Q[ji] = q0;
    *lq = NAN;
    GS_CHECK_INT(gs_precomp_check_lq(pc, NULL, &e), GS_ERR_CHECK);
    *lq = lq0;
    GS_CHECK_INT(gs_precomp_check_q(pc, 2, NULL, &e), GS_OK); /* all restored */
    GS_CHECK_INT(gs_precomp_check_lq(pc, NULL, &e), GS_OK);
    gs_precomp_free(pc); /* frees kd with pc->kdiag */
    gs_model_free(mdl);
}

/* A block dpotrf factors but whose inverse overflows (1e-320 I: pivots
 * 1e-160, |K^-1| 1e320) is refused by name; it made Q Inf and NaN, and
 * every solve a NaN. */
GS_TEST(uninvertibly_small_stiffness_refused)
{
    gs_model *mdl = tm_twin_chains();
    const int nb = mdl->parts[1].ndof;
    for (int i = 0; i < nb * nb; i++)
        mdl->parts[1].K[i] *= 1e-320;
    gs_error e;
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_ERR_SINGULAR);
    GS_CHECK_STR(e.field, "parts[1].K");
    GS_CHECK(strstr(e.msg, "cannot be inverted in double precision") != NULL);
    GS_CHECK(pc == NULL);
    gs_model_free(mdl);
}

/* A pair coefficient of 1e300 makes its Q_ii overflow: refused by name in
 * the build (with L_Q deferred, as gapsimd builds, it was "ready" and then
 * failed as "contact pair -1 is linearly dependent"). */
GS_TEST(overflowing_pair_compliance_refused)
{
    gs_model *mdl = tm_chain3();
    mdl->pairs[1].coef[0] = 1e300;
    gs_error e;
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build_ex(mdl, GS_PRECOMP_DEFER_LQ, &pc, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "pairs[1]");
    GS_CHECK(strstr(e.msg, "too large for double precision") != NULL);
    GS_CHECK(pc == NULL);
    gs_model_free(mdl);
}

GS_TEST(unvalidated_model_rejected)
{
    gs_model *mdl = tm_chain3();
    gs_precomp *pc = NULL;
    gs_error e;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_ERR_INVALID);
    gs_model_free(mdl);
}

GS_TEST_MAIN()

/* A dense block that dpotrf factors but that is singular to working
 * precision: K = [[1, 1], [1, 1 + d]], pivot^2 of row 1 = d exactly (d a
 * power of two). d = 2^-50 (8.9e-16, cond ~ 4.5e15): refused, not_spd
 * naming the block and row 1 (it was accepted, and every solve then failed
 * its certificate); d = 2^-40 (9.1e-13, above the rule's 1e-13, linalg.h
 * GS_PIVOT_RTOL): built. */
GS_TEST(dense_block_singular_to_working_precision_refused)
{
    const double d[2] = {0x1p-50, 0x1p-40};
    for (int c = 0; c < 2; c++) {
        gs_model *mdl = gs_model_new(1, 2, 1, 0, NULL);
        gs_model_alloc_block(mdl, 0, 2, NULL);
        double *K = mdl->parts[0].K;
        K[0] = K[1] = K[2] = 1.0;
        K[3] = 1.0 + d[c];
        mdl->nodes[0] = (gs_node){.part = 0, .dof = 0};
        mdl->nodes[1] = (gs_node){.part = 0, .dof = 1};
        mdl->pairs[0] = (gs_pair){.node = {0, GS_FIXED}, .coef = {1.0, 0.0}};
        gs_error e;
        GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
        gs_precomp *pc = NULL;
        const gs_err rc = gs_precomp_build(mdl, &pc, &e);
        if (c == 0) {
            GS_CHECK_INT(rc, GS_ERR_NOT_SPD);
            GS_CHECK_STR(e.field, "parts[0].K");
            GS_CHECK(strstr(e.msg, "row 1 depends on the rows before it") != NULL);
            GS_CHECK_INT(e.lapack_info, 2);
            GS_CHECK(pc == NULL);
        } else {
            GS_CHECK_INT(rc, GS_OK);
            gs_precomp_free(pc);
        }
        gs_model_free(mdl);
    }
}
