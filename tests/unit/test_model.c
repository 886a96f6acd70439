/* test_model.c -- model validation: one test per error kind, the operator A. */
#include "gs_test.h"
#include "test_models.h"

#include <math.h>

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

GS_TEST_MAIN()
