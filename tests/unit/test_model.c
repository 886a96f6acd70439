/* test_model.c -- model validation: one test per error kind, the operator A;
 * releasing the dense blocks after the precomputation and restoring them. */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include <math.h>

#include "hash.h"
#include "precompute.h"

static gs_err validate(gs_model *mdl, gs_error *e)
{
    gs_error_clear(e);
    return gs_model_validate(mdl, e);
}

GS_TEST(valid_models_pass_and_derive_offsets)
{
    gs_error e;
    gs_model *mdl = tm_random(3, 4, 2, 1);
    GS_CHECK_INT(validate(mdl, &e), GS_OK);
    GS_CHECK_INT(mdl->n, 12);
    GS_CHECK_INT(mdl->parts[2].offset, 8);
    GS_CHECK_INT(mdl->joint, GS_JOINT_SANDWICH); /* part-1 nodes are in two pairs */
    gs_model_free(mdl);
    mdl = tm_two_springs();
    GS_CHECK_INT(validate(mdl, &e), GS_OK);
    GS_CHECK_INT(mdl->joint, GS_JOINT_SIMPLE);
    gs_model_free(mdl);
}

GS_TEST(operator_A_and_At)
{
    gs_error e;
    gs_model *mdl = tm_random(2, 3, 1, 2);
    GS_CHECK_INT(validate(mdl, &e), GS_OK);
    double x[6] = {1, 2, 3, 4, 5, 6}, u[5], y[6] = {0};
    gs_model_At(mdl, x, u);
    /* pair 0: -x0 + c*x3 ; fixed pair 3: x0 ; pair 4 inside part 0: -x0 + x2 */
    GS_CHECK_NEAR(u[0], -1.0 + mdl->pairs[0].coef[1] * 4.0, 1e-15);
    GS_CHECK_NEAR(u[3], 1.0, 1e-15);
    GS_CHECK_NEAR(u[4], -1.0 + 3.0, 1e-15);
    /* <A lam, x> == <lam, A'x> */
    double lam[5] = {0.5, -1, 2, 0.25, 3}, lhs = 0, rhs = 0;
    gs_model_A_add(mdl, 1.0, lam, y);
    for (int i = 0; i < 6; i++)
        lhs += y[i] * x[i];
    for (int k = 0; k < 5; k++)
        rhs += lam[k] * u[k];
    GS_CHECK_NEAR(lhs, rhs, 1e-13);
    gs_model_free(mdl);
}

GS_TEST(error_range_node_part)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->nodes[1].part = 4;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "nodes[1].part");
    gs_model_free(mdl);
}

GS_TEST(error_range_node_dof)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->nodes[2].dof = 3;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "nodes[2].dof");
    gs_model_free(mdl);
}

GS_TEST(error_range_pair_node)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->pairs[1].node[1] = 7;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "pairs[1].node[1]");
    mdl->pairs[1].node[1] = GS_FIXED;
    mdl->pairs[0].node[0] = -1; /* only node[1] may be fixed */
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "pairs[0].node[0]");
    gs_model_free(mdl);
}

GS_TEST(error_range_fastener_pair)
{
    gs_error e;
    gs_model *mdl = tm_two_springs();
    mdl->fast[0].pair = 1;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "fasteners[0].pair");
    gs_model_free(mdl);
}

GS_TEST(error_duplicate_pair)
{
    gs_error e;
    gs_model *mdl = tm_random(2, 3, 0, 3);
    mdl->pairs[2].node[0] = mdl->pairs[0].node[1]; /* same nodes as pair 0, reversed */
    mdl->pairs[2].node[1] = mdl->pairs[0].node[0];
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_DUPLICATE);
    GS_CHECK_STR(e.field, "pairs[2]");
    GS_CHECK(strstr(e.msg, "pair 0") != NULL);
    gs_model_free(mdl);
}

GS_TEST(error_duplicate_dof_and_fastener)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->nodes[2].dof = 0;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_DUPLICATE);
    GS_CHECK_STR(e.field, "nodes[2].dof");
    gs_model_free(mdl);
    mdl = tm_random(2, 3, 0, 4);
    mdl->fast[1].pair = mdl->fast[0].pair;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_DUPLICATE);
    GS_CHECK_STR(e.field, "fasteners[1].pair");
    gs_model_free(mdl);
}

GS_TEST(error_nonfinite_everywhere)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->parts[0].K[4] = NAN;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "parts[0].K");
    mdl->parts[0].K[4] = 2.0;
    /* the block pass runs in lanes of four: an entry past the last full
     * lane (index 8 of 3 x 3), and of two bad entries the first is named */
    const double k8 = mdl->parts[0].K[8];
    mdl->parts[0].K[8] = INFINITY;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NONFINITE);
    GS_CHECK(strstr(e.msg, "at (2, 2)") != NULL);
    mdl->parts[0].K[1] = -INFINITY;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NONFINITE);
    GS_CHECK(strstr(e.msg, "at (1, 0)") != NULL);
    mdl->parts[0].K[1] = mdl->parts[0].K[3];
    mdl->parts[0].K[8] = k8;
    mdl->f[1] = INFINITY;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "f");
    mdl->f[1] = 1.0;
    mdl->nodes[0].xyz[2] = NAN;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "nodes[0].xyz");
    mdl->nodes[0].xyz[2] = 0.0;
    mdl->pairs[2].coef[0] = NAN;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "pairs[2].coef[0]");
    gs_model_free(mdl);
    mdl = tm_two_springs();
    mdl->fast[0].load = NAN;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "fasteners[0].load");
    gs_model_free(mdl);
}

GS_TEST(error_not_symmetric)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->parts[0].K[1] = -1.001; /* K(1,0) != K(0,1) */
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_NOT_SYMMETRIC);
    GS_CHECK_STR(e.field, "parts[0].K");
    GS_CHECK(strstr(e.msg, "K(1,0)") != NULL);
    gs_model_free(mdl);
}

GS_TEST(error_invalid_values)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->pairs[0].coef[0] = 0.0;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "pairs[0].coef[0]");
    gs_model_free(mdl);
    mdl = tm_two_springs();
    mdl->pairs[0].node[1] = 0;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "pairs[0].node[1]");
    mdl->pairs[0].node[1] = 1;
    mdl->fast[0].load = -1.0;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "fasteners[0].load");
    gs_model_free(mdl);
    mdl = gs_model_new(1, 0, 0, 0, &e);
    gs_model_alloc_block(mdl, 0, 2, &e);
    mdl->parts[0].K[0] = mdl->parts[0].K[3] = 1.0;
    GS_CHECK_INT(validate(mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "pairs");
    gs_model_free(mdl);
    GS_CHECK(gs_model_new(-1, 0, 0, 0, &e) == NULL);
    GS_CHECK_INT(e.code, GS_ERR_INVALID);
}

GS_TEST(error_not_spd_reported_by_precompute_with_lapack_info)
{
    gs_error e;
    gs_model *mdl = tm_chain3();
    mdl->parts[0].K[8] = -5.0; /* K(2,2) < 0: symmetric, indefinite */
    GS_CHECK_INT(validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_ERR_NOT_SPD);
    GS_CHECK(pc == NULL);
    GS_CHECK_STR(e.field, "parts[0].K");
    GS_CHECK_INT(e.lapack_info, 3);
    gs_model_free(mdl);
}

GS_TEST(error_singular_Q_from_dependent_pairs)
{
    gs_error e;
    /* one part, 3 nodes; pairs (0,1), (1,2), (0,2) with coefficients such that
     * column 3 = column 1 + column 2: Q is singular */
    gs_model *mdl = tm_chain3();
    mdl->pairs[0] = (gs_pair){.node = {0, 1}, .coef = {-1, 1}};
    mdl->pairs[1] = (gs_pair){.node = {1, 2}, .coef = {-1, 1}};
    mdl->pairs[2] = (gs_pair){.node = {0, 2}, .coef = {-1, 1}};
    GS_CHECK_INT(validate(mdl, &e), GS_OK);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_ERR_SINGULAR);
    GS_CHECK_STR(e.field, "pairs[2]");
    GS_CHECK_INT(e.lapack_info, 3);
    gs_model_free(mdl);
}

GS_TEST(model_equal_sees_every_field)
{
    gs_error e;
    gs_model *a = tm_random(2, 4, 1, 9), *b = tm_random(2, 4, 1, 9);
    GS_CHECK_INT(validate(a, &e), GS_OK);
    GS_CHECK_INT(validate(b, &e), GS_OK);
    GS_CHECK(gs_model_equal(a, b));
    b->parts[1].K[5] = nextafter(b->parts[1].K[5], 1e300);
    GS_CHECK(!gs_model_equal(a, b));
    b->parts[1].K[5] = a->parts[1].K[5];
    b->pairs[2].coef[1] *= -1.0;
    GS_CHECK(!gs_model_equal(a, b));
    b->pairs[2].coef[1] = a->pairs[2].coef[1];
    b->nodes[3].xyz[1] += 1.0;
    GS_CHECK(!gs_model_equal(a, b));
    b->nodes[3].xyz[1] = a->nodes[3].xyz[1];
    b->fast[0].load += 1.0;
    GS_CHECK(!gs_model_equal(a, b));
    b->fast[0].load = a->fast[0].load;
    b->f[0] += 1e-9;
    GS_CHECK(!gs_model_equal(a, b));
    b->f[0] = a->f[0];
    GS_CHECK(gs_model_equal(a, b));
    gs_model_free(a);
    gs_model_free(b);
}

GS_TEST(pattern_load)
{
    gs_error e;
    gs_model *mdl = tm_random(2, 4, 0, 5);
    GS_CHECK_INT(validate(mdl, &e), GS_OK);
    unsigned char inst[3] = {1, 0, 1};
    double load[5];
    gs_model_pattern_load(mdl, inst, load);
    GS_CHECK_NEAR(load[0], mdl->fast[0].load, 0);
    GS_CHECK_NEAR(load[3], 0.0, 0);
    GS_CHECK_NEAR(load[1], 0.0, 0);
    gs_model_free(mdl);
}

static size_t dense_bytes(const gs_model *mdl)
{
    size_t b = 0;
    for (int p = 0; p < mdl->n_parts; p++)
        b += (size_t)mdl->parts[p].ndof * (size_t)mdl->parts[p].ndof * sizeof(double);
    return b;
}

/* Released: the blocks are gone (their bytes exactly), the hash is the one
 * they had, a new precomputation is refused; restored from a copy with one
 * changed entry: refused, nothing moves; from an equal copy: the blocks are
 * back, bit for bit, the copy keeps none. */
GS_TEST(release_and_restore_dense_blocks)
{
    gs_error e;
    gs_model *mdl = tm_random(3, 5, 2, 41), *ref = tm_random(3, 5, 2, 41);
    GS_CHECK_INT(validate(mdl, &e), GS_OK);
    GS_CHECK_INT(validate(ref, &e), GS_OK);
    char h0[GS_HASH_HEX], h[GS_HASH_HEX];
    gs_model_hash(mdl, h0);
    const size_t b0 = gs_model_bytes(mdl);
    GS_CHECK(!gs_model_dense_released(mdl));
    gs_model_release_dense(mdl, NULL);
    GS_CHECK(gs_model_dense_released(mdl));
    for (int p = 0; p < mdl->n_parts; p++)
        GS_CHECK(mdl->parts[p].K == NULL);
    GS_CHECK_INT(gs_model_bytes(mdl), b0 - dense_bytes(ref));
    gs_model_hash(mdl, h);
    GS_CHECK_STR(h, h0);
    gs_model_release_dense(mdl, "0123"); /* already released: no-op */
    gs_model_hash(mdl, h);
    GS_CHECK_STR(h, h0);
    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "parts");
    GS_CHECK(pc == NULL);

    gs_model *changed = tm_random(3, 5, 2, 41);
    GS_CHECK_INT(validate(changed, &e), GS_OK);
    changed->parts[1].K[2 * 5 + 3] += 1e-12; /* symmetric: both triangles */
    changed->parts[1].K[3 * 5 + 2] += 1e-12;
    GS_CHECK_INT(gs_model_restore_dense(mdl, changed, &e), GS_ERR_FORMAT);
    GS_CHECK_STR(e.field, "parts");
    GS_CHECK(gs_model_dense_released(mdl));
    GS_CHECK(changed->parts[1].K != NULL);

    gs_model *fresh = tm_random(3, 5, 2, 41);
    GS_CHECK_INT(validate(fresh, &e), GS_OK);
    GS_CHECK_INT(gs_model_restore_dense(mdl, fresh, &e), GS_OK);
    GS_CHECK(!gs_model_dense_released(mdl));
    for (int p = 0; p < fresh->n_parts; p++)
        GS_CHECK(fresh->parts[p].K == NULL);
    GS_CHECK_INT(gs_model_equal(mdl, ref), 1);
    GS_CHECK_INT(gs_model_bytes(mdl), b0);
    gs_model_hash(mdl, h); /* computed from the blocks again */
    GS_CHECK_STR(h, h0);
    GS_CHECK_INT(gs_model_restore_dense(mdl, changed, &e), GS_OK); /* not released: no-op */
    GS_CHECK_INT(gs_model_equal(mdl, ref), 1);

    gs_model_release_dense(mdl, "given-hash"); /* the caller's hash is kept as given */
    gs_model_hash(mdl, h);
    GS_CHECK_STR(h, "given-hash");
    gs_model_free(changed);
    gs_model_free(fresh);
    gs_model_free(ref);
    gs_model_free(mdl);
}

/* A solve on a model released after its precomputation: the dual and
 * relative forms and the displacements (from the factors) give the same
 * bits as before the release; the primal form and the primal certificate,
 * which read K, are refused naming the option; after the restore they run
 * and agree with the relative form. */
GS_TEST(solves_after_release_need_k_only_for_the_primal_side)
{
    gs_error e;
    gs_model *mdl = tm_random(2, 6, 2, 43), *copy = tm_random(2, 6, 2, 43);
    gs_precomp *pc = ts_build(mdl);
    GS_CHECK_INT(validate(copy, &e), GS_OK);
    const int m = mdl->m, n = mdl->n;
    double g[64], lam0[64], w0[64], x0[64], lam[64], w[64], x[64];
    GS_CHECK(m <= 64 && n <= 64);
    for (int i = 0; i < m; i++)
        g[i] = 0.3 * sin(1.7 * i) - 0.05;
    gs_problem pb = {.pc = pc, .g = g};
    gs_solver *sv = gs_solver_new(pc, &e);
    GS_CHECK(sv != NULL);
    gs_solve_info info;
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    ts_solve_ok(sv, &pb, &o, lam0, w0, x0, &info, 1e-8);
    GS_CHECK(info.n_act > 0 && info.n_act < m); /* some pairs close, some stay open */
    gs_model_release_dense(mdl, NULL);
    ts_solve_ok(sv, &pb, &o, lam, w, x, &info, 1e-8);
    GS_CHECK(memcmp(lam, lam0, sizeof(double) * (size_t)m) == 0);
    GS_CHECK(memcmp(w, w0, sizeof(double) * (size_t)m) == 0);
    GS_CHECK(memcmp(x, x0, sizeof(double) * (size_t)n) == 0);
    o = ts_opts(GS_METHOD_IPM, GS_FORM_PRIMAL);
    GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, w, x, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "method");
    o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.primal_cert = 1;
    GS_CHECK_INT(gs_solve(sv, &pb, &o, lam, w, x, &info, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "primal_cert");
    GS_CHECK_INT(gs_model_restore_dense(mdl, copy, &e), GS_OK);
    ts_solve_ok(sv, &pb, &o, lam, w, x, &info, 1e-8);
    GS_CHECK(info.kkt.primal);
    o = ts_opts(GS_METHOD_IPM, GS_FORM_PRIMAL);
    ts_solve_ok(sv, &pb, &o, lam, w, x, &info, 1e-8);
    GS_CHECK(ts_max_diff(w, w0, m) < 1e-7);
    GS_CHECK(ts_max_diff(x, x0, n) < 1e-7);
    gs_solver_free(sv);
    gs_precomp_free(pc);
    gs_model_free(copy);
    gs_model_free(mdl);
}

GS_TEST_MAIN()
