/* test_hash.c -- model content hashes and solve keys (core/hash.h):
 * determinism, sensitivity to one changed value in every component,
 * insensitivity to names, NULL vs zero equivalences of the solve key. */
#include "gs_test.h"
#include "test_models.h"

#include <math.h>

#include "hash.h"

static gs_model *validated_random(uint64_t seed)
{
    gs_model *mdl = tm_random(3, 5, 2, seed);
    gs_error e;
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    return mdl;
}

static void check_hex(const char *h)
{
    GS_CHECK_INT(strlen(h), 32);
    for (int i = 0; i < 32; i++)
        GS_CHECK((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f'));
}

/* The hash of mdl differs from the hex string ref. */
#define CHECK_CHANGES(mdl, ref, what)                                                             \
    do {                                                                                          \
        char h_[GS_HASH_HEX];                                                                     \
        gs_model_hash(mdl, h_);                                                                   \
        GS_CHECK_MSG(strcmp(h_, ref) != 0, "changing %s did not change the hash", what);         \
    } while (0)

GS_TEST(model_hash_deterministic)
{
    gs_model *a = validated_random(7), *b = validated_random(7);
    char ha[GS_HASH_HEX], hb[GS_HASH_HEX], ha2[GS_HASH_HEX];
    gs_model_hash(a, ha);
    gs_model_hash(a, ha2);
    gs_model_hash(b, hb);
    check_hex(ha);
    GS_CHECK_STR(ha, ha2);
    GS_CHECK_STR(ha, hb);
    gs_model *c = validated_random(8);
    char hc[GS_HASH_HEX];
    gs_model_hash(c, hc);
    GS_CHECK(strcmp(ha, hc) != 0);
    gs_model_free(a);
    gs_model_free(b);
    gs_model_free(c);
}

GS_TEST(model_hash_ignores_names)
{
    gs_model *a = validated_random(9);
    char h0[GS_HASH_HEX], h1[GS_HASH_HEX];
    gs_model_hash(a, h0);
    snprintf(a->name, sizeof a->name, "renamed assembly");
    snprintf(a->parts[1].name, sizeof a->parts[1].name, "another part name");
    gs_model_hash(a, h1);
    GS_CHECK_STR(h0, h1);
    gs_model_free(a);
}

/* One value changed in each component (on a fresh copy each time). */
GS_TEST(model_hash_sensitive_to_every_component)
{
    enum { N_CASES = 16 };
    static const char *what[N_CASES] = {
        "joint",           "K value (1 ulp)", "K last entry", "node part", "node dof",
        "node x",          "node y",          "node z",       "pair node[0]", "pair node[1]",
        "pair coef[0]",    "pair coef[1]",    "fastener pair", "fastener load", "f (1 ulp)",
        "f NULL -> nonzero"};
    gs_model *ref = validated_random(10);
    char h0[GS_HASH_HEX];
    gs_model_hash(ref, h0);
    for (int c = 0; c < N_CASES; c++) {
        gs_model *a = validated_random(10);
        int nb = a->parts[1].ndof;
        switch (c) {
        case 0: a->joint = a->joint == GS_JOINT_SIMPLE ? GS_JOINT_SANDWICH : GS_JOINT_SIMPLE; break;
        case 1: a->parts[1].K[3] = nextafter(a->parts[1].K[3], INFINITY); break;
        case 2: a->parts[2].K[(size_t)nb * nb - 1] += 1.0; break;
        case 3: a->nodes[4].part = 1; break;
        case 4: a->nodes[4].dof = 3; break;
        case 5: a->nodes[2].xyz[0] += 1e-9; break;
        case 6: a->nodes[2].xyz[1] += 1e-9; break;
        case 7: a->nodes[2].xyz[2] += 1e-9; break;
        case 8: a->pairs[1].node[0] = 3; break;
        case 9: a->pairs[1].node[1] = 9; break;
        case 10: a->pairs[0].coef[0] = -0.5; break;
        case 11: a->pairs[0].coef[1] *= 1.0 + 1e-15; break;
        case 12: a->fast[1].pair = 4; break;
        case 13: a->fast[1].load += 0.001; break;
        case 14: a->f[a->n - 1] = nextafter(a->f[a->n - 1], -INFINITY); break;
        case 15: break; /* below: f all zero vs one tiny nonzero entry */
        }
        if (c == 15) {
            char hz[GS_HASH_HEX];
            memset(a->f, 0, (size_t)a->n * sizeof *a->f);
            gs_model_hash(a, hz);
            a->f[0] = 1e-300;
            CHECK_CHANGES(a, hz, what[c]);
        } else {
            CHECK_CHANGES(a, h0, what[c]);
        }
        gs_model_free(a);
    }
    gs_model_free(ref);
}

GS_TEST(model_hash_structure_changes)
{
    gs_model *a = tm_random(2, 5, 2, 11), *b = tm_random(2, 6, 2, 11), *c = tm_random(2, 5, 3, 11);
    gs_error e;
    GS_CHECK_INT(gs_model_validate(a, &e), GS_OK);
    GS_CHECK_INT(gs_model_validate(b, &e), GS_OK);
    GS_CHECK_INT(gs_model_validate(c, &e), GS_OK);
    char ha[GS_HASH_HEX], hb[GS_HASH_HEX], hc[GS_HASH_HEX];
    gs_model_hash(a, ha);
    gs_model_hash(b, hb);
    gs_model_hash(c, hc);
    GS_CHECK(strcmp(ha, hb) != 0);
    GS_CHECK(strcmp(ha, hc) != 0);
    gs_model_free(a);
    gs_model_free(b);
    gs_model_free(c);
}

/* Documented equivalences: f NULL == f all zero; coef[1] of a fixed pair ignored. */
GS_TEST(model_hash_documented_equivalences)
{
    gs_model *a = tm_chain3(), *b = tm_chain3();
    free(a->f);
    a->f = NULL;
    memset(b->f, 0, 3 * sizeof *b->f);
    gs_error e;
    GS_CHECK_INT(gs_model_validate(a, &e), GS_OK);
    GS_CHECK_INT(gs_model_validate(b, &e), GS_OK);
    char ha[GS_HASH_HEX], hb[GS_HASH_HEX];
    gs_model_hash(a, ha);
    gs_model_hash(b, hb);
    GS_CHECK_STR(ha, hb);
    b->pairs[1].coef[1] = 42.0; /* fixed pair: ignored by the model */
    gs_model_hash(b, hb);
    GS_CHECK_STR(ha, hb);
    gs_model_free(a);
    gs_model_free(b);
}

/* ---- solve keys ------------------------------------------------------------- */

enum { KM = 700 }; /* > one 512-entry canonicalization chunk */

typedef struct {
    char mh[GS_HASH_HEX];
    double load[KM], g[KM];
    unsigned char eq[KM];
    double tol;
} key_case;

static void key_case_init(key_case *kc)
{
    tm_seed(21);
    snprintf(kc->mh, sizeof kc->mh, "0123456789abcdef0123456789abcdef");
    for (int k = 0; k < KM; k++) {
        kc->g[k] = tm_unif();
        kc->load[k] = k % 7 == 0 ? 500.0 : 0.0;
        kc->eq[k] = k % 11 == 0;
    }
    kc->tol = 1e-10;
}

static void key_of(const key_case *kc, char out[GS_HASH_HEX])
{
    gs_solve_key(kc->mh, KM, kc->load, kc->eq, kc->g, kc->tol, out);
}

GS_TEST(solve_key_deterministic_and_sensitive)
{
    static key_case ref, kc;
    key_case_init(&ref);
    char k0[GS_HASH_HEX], k1[GS_HASH_HEX];
    key_of(&ref, k0);
    check_hex(k0);
    key_case_init(&kc);
    key_of(&kc, k1);
    GS_CHECK_STR(k0, k1);
    enum { N_CASES = 8 };
    static const char *what[N_CASES] = {"model hash", "g (1 ulp, last entry)", "g[0]",
                                        "load entry 0 -> nonzero", "load value", "eq flag",
                                        "tol", "tol (1 ulp)"};
    for (int c = 0; c < N_CASES; c++) {
        key_case_init(&kc);
        switch (c) {
        case 0: kc.mh[31] = kc.mh[31] == 'f' ? 'e' : 'f'; break;
        case 1: kc.g[KM - 1] = nextafter(kc.g[KM - 1], 2.0); break;
        case 2: kc.g[0] += 0.5; break;
        case 3: kc.load[KM - 1] = 1.0; break;
        case 4: kc.load[0] = 499.0; break;
        case 5: kc.eq[600] = !kc.eq[600]; break;
        case 6: kc.tol = 1e-8; break;
        case 7: kc.tol = nextafter(kc.tol, 1.0); break;
        }
        key_of(&kc, k1);
        GS_CHECK_MSG(strcmp(k0, k1) != 0, "changing %s did not change the key", what[c]);
    }
    /* a different m (prefix of the same data) is a different key */
    gs_solve_key(ref.mh, KM - 1, ref.load, ref.eq, ref.g, ref.tol, k1);
    GS_CHECK(strcmp(k0, k1) != 0);
}

GS_TEST(solve_key_null_equals_zero)
{
    static key_case kc;
    key_case_init(&kc);
    char a[GS_HASH_HEX], b[GS_HASH_HEX];
    static double zero_load[KM];
    static unsigned char zero_eq[KM];
    gs_solve_key(kc.mh, KM, NULL, NULL, kc.g, kc.tol, a);
    gs_solve_key(kc.mh, KM, zero_load, zero_eq, kc.g, kc.tol, b);
    GS_CHECK_STR(a, b);
    gs_solve_key(kc.mh, KM, zero_load, NULL, kc.g, kc.tol, b);
    GS_CHECK_STR(a, b);
    gs_solve_key(kc.mh, KM, NULL, zero_eq, kc.g, kc.tol, b);
    GS_CHECK_STR(a, b);
    /* documented: -0.0 load entries count as zero, eq flags are normalized */
    zero_load[5] = -0.0;
    zero_eq[7] = 0;
    gs_solve_key(kc.mh, KM, zero_load, zero_eq, kc.g, kc.tol, b);
    GS_CHECK_STR(a, b);
    char c1[GS_HASH_HEX], c2[GS_HASH_HEX];
    kc.eq[3] = 1;
    key_of(&kc, c1);
    kc.eq[3] = 255;
    key_of(&kc, c2);
    GS_CHECK_STR(c1, c2);
    /* a load is not the same as no load */
    zero_load[5] = 1.0;
    gs_solve_key(kc.mh, KM, zero_load, NULL, kc.g, kc.tol, b);
    GS_CHECK(strcmp(a, b) != 0);
}

GS_TEST(solve_key_from_model_hash)
{
    gs_model *mdl = validated_random(12);
    char mh[GS_HASH_HEX], k1[GS_HASH_HEX], k2[GS_HASH_HEX];
    gs_model_hash(mdl, mh);
    double *g = calloc((size_t)mdl->m, sizeof *g);
    gs_solve_key(mh, mdl->m, NULL, NULL, g, 1e-10, k1);
    mdl->parts[0].K[0] *= 2.0;
    gs_model_hash(mdl, mh);
    gs_solve_key(mh, mdl->m, NULL, NULL, g, 1e-10, k2);
    GS_CHECK(strcmp(k1, k2) != 0);
    free(g);
    gs_model_free(mdl);
}

GS_TEST_MAIN()
