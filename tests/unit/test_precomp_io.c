/* test_precomp_io.c -- saving and loading a precomputation (core/precomp_io.h):
 * bit-exact round trips (hand-made 2-part model, generated small lap joint),
 * identical solves with the loaded precomputation, a load without L_Q, and
 * rejection of every kind of damaged or mismatched file (corrupted bytes,
 * truncation, trailing bytes, wrong model, unexpected checksum, missing file,
 * random garbage). */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "generator.h"
#include "precomp_io.h"
#include "solver.h"

/* ---- helpers ------------------------------------------------------------------ */

static int same_bits(const void *a, const void *b, size_t bytes)
{
    return memcmp(a, b, bytes) == 0;
}

/* Every field of two precomputations bit for bit (model pointers aside);
 * with_lq 0: all but L_Q and cond_Q (b shaped without them). */
static void check_fields(const gs_precomp *a, const gs_precomp *b, int with_lq)
{
    const gs_model *mdl = a->mdl;
    const size_t m = (size_t)a->m, np = (size_t)mdl->n_parts;
    GS_CHECK_INT(a->n, b->n);
    GS_CHECK_INT(a->m, b->m);
    for (size_t p = 0; p < np; p++) {
        const size_t nb = (size_t)mdl->parts[p].ndof;
        GS_CHECK_MSG(same_bits(a->L[p], b->L[p], nb * nb * sizeof(double)), "L[%zu]", p);
    }
    GS_CHECK(same_bits(a->Q, b->Q, m * m * sizeof(double)));
    if (with_lq)
        GS_CHECK(same_bits(a->LQ, b->LQ, m * m * sizeof(double)));
    GS_CHECK(same_bits(a->qdiag, b->qdiag, m * sizeof(double)));
    GS_CHECK(same_bits(a->u0, b->u0, m * sizeof(double)));
    GS_CHECK(same_bits(a->cond_block, b->cond_block, np * sizeof(double)));
    GS_CHECK(same_bits(&a->s0, &b->s0, sizeof a->s0));
    GS_CHECK(same_bits(&a->cond_K, &b->cond_K, sizeof a->cond_K));
    if (with_lq)
        GS_CHECK(same_bits(&a->cond_Q, &b->cond_Q, sizeof a->cond_Q));
    GS_CHECK(same_bits(&a->normK1, &b->normK1, sizeof a->normK1));
    GS_CHECK(same_bits(&a->t, &b->t, sizeof a->t));
}

static unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    GS_CHECK(fp != NULL);
    GS_CHECK(fseek(fp, 0, SEEK_END) == 0);
    long sz = ftell(fp);
    GS_CHECK(sz >= 0);
    rewind(fp);
    unsigned char *buf = malloc((size_t)sz + 1);
    GS_CHECK(buf != NULL);
    GS_CHECK(fread(buf, 1, (size_t)sz, fp) == (size_t)sz);
    fclose(fp);
    *len = (size_t)sz;
    return buf;
}

static void write_bytes(const char *path, const unsigned char *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    GS_CHECK(fp != NULL);
    GS_CHECK(len == 0 || fwrite(buf, 1, len, fp) == len);
    GS_CHECK(fclose(fp) == 0);
}

/* Load path for mdl, expecting code; on success the result is freed. */
static void expect_load(const gs_model *mdl, const char *path, unsigned long long expect,
                        gs_err code, const char *what)
{
    gs_precomp *pc = (gs_precomp *)&pc; /* must be reset to NULL on errors */
    gs_error e;
    gs_err rc = gs_precomp_load(mdl, path, expect, &pc, &e);
    GS_CHECK_MSG(rc == code, "%s: got %s (%s), expected %s", what, gs_err_name(rc), e.msg,
                 gs_err_name(code));
    if (rc != GS_OK) {
        GS_CHECK_MSG(pc == NULL, "%s: *out not NULL after an error", what);
        GS_CHECK_MSG(e.msg[0] != '\0', "%s: empty message", what);
    }
    gs_precomp_free(pc);
}

/* Save pc, load it back, check bit-identity and the checksum. */
static gs_precomp *round_trip(const gs_precomp *pc, const char *path, unsigned long long *sum)
{
    gs_error e;
    GS_CHECK_INT(gs_precomp_save(pc, path, sum, &e), GS_OK);
    GS_CHECK(*sum != 0);
    gs_precomp *pl = NULL;
    GS_CHECK_INT(gs_precomp_load(pc->mdl, path, *sum, &pl, &e), GS_OK);
    GS_CHECK(pl != NULL);
    GS_CHECK(pl->mdl == pc->mdl);
    check_fields(pc, pl, 1);
    gs_precomp *p2 = NULL; /* expect == 0: the trailer check alone */
    GS_CHECK_INT(gs_precomp_load(pc->mdl, path, 0, &p2, &e), GS_OK);
    check_fields(pc, p2, 1);
    gs_precomp_free(p2);
    unsigned long long sum2 = 0; /* saving again gives the same bytes */
    char path2[512];
    snprintf(path2, sizeof path2, "%s.again", path);
    GS_CHECK_INT(gs_precomp_save(pl, path2, &sum2, &e), GS_OK);
    GS_CHECK(sum2 == *sum);
    size_t l1, l2;
    unsigned char *b1 = read_bytes(path, &l1), *b2 = read_bytes(path2, &l2);
    GS_CHECK(l1 == l2 && memcmp(b1, b2, l1) == 0);
    free(b1);
    free(b2);
    remove(path2);
    return pl;
}

static gs_model *small_lap(void)
{
    gs_gen_params p;
    gs_gen_small_params(GS_GEN_LAP, &p);
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_INT(gs_gen_assembly(&p, &mdl, NULL, &e), GS_OK);
    return mdl;
}

/* Solve a few gap vectors (with and without fasteners) on both
 * precomputations with a fresh solver each; results must be bit-identical. */
static void check_same_solves(const gs_precomp *pa, const gs_precomp *pb, gs_method method)
{
    const gs_model *mdl = pa->mdl;
    const int m = mdl->m, n = mdl->n, ng = 3;
    double *G = malloc((size_t)ng * m * sizeof *G), *load = calloc((size_t)m, sizeof *load);
    double *lam[2], *w[2], *x[2];
    unsigned char *inst = calloc((size_t)mdl->n_fast + 1, 1);
    for (int s = 0; s < 2; s++) {
        lam[s] = malloc((size_t)m * sizeof(double));
        w[s] = malloc((size_t)m * sizeof(double));
        x[s] = malloc((size_t)n * sizeof(double));
    }
    gs_error e;
    GS_CHECK_INT(gs_gen_gap_cloud(mdl, ng, 5, NULL, G, &e), GS_OK);
    GS_CHECK_INT(gs_gen_pattern(mdl, 0.5, inst, &e), GS_OK);
    gs_model_pattern_load(mdl, inst, load);
    gs_solver *sv[2] = {gs_solver_new(pa, &e), gs_solver_new(pb, &e)};
    GS_CHECK(sv[0] && sv[1]);
    gs_solve_opts o = ts_opts(method, GS_FORM_DEFAULT);
    for (int r = 0; r < 2 * ng; r++) {
        gs_solve_info info[2];
        for (int s = 0; s < 2; s++) {
            gs_problem prob = {.pc = s ? pb : pa, .g = G + (size_t)(r % ng) * m,
                               .load = r < ng ? NULL : load};
            GS_CHECK_INT(gs_solve(sv[s], &prob, &o, lam[s], w[s], x[s], &info[s], &e), GS_OK);
            GS_CHECK_INT(info[s].status, GS_STATUS_OPTIMAL);
        }
        GS_CHECK_INT(info[0].iterations, info[1].iterations);
        GS_CHECK(same_bits(lam[0], lam[1], (size_t)m * sizeof(double)));
        GS_CHECK(same_bits(w[0], w[1], (size_t)m * sizeof(double)));
        GS_CHECK(same_bits(x[0], x[1], (size_t)n * sizeof(double)));
    }
    gs_solver_free(sv[0]);
    gs_solver_free(sv[1]);
    for (int s = 0; s < 2; s++) {
        free(lam[s]);
        free(w[s]);
        free(x[s]);
    }
    free(G);
    free(load);
    free(inst);
}

/* ---- round trips ----------------------------------------------------------------- */

GS_TEST(round_trip_two_parts)
{
    gs_model *mdl = tm_random(2, 7, 3, 31);
    gs_precomp *pc = ts_build(mdl);
    char path[512];
    unsigned long long sum = 0;
    gs_precomp *pl = round_trip(pc, gs_test_tmp_path(path, sizeof path, "pio_two.bin"), &sum);
    gs_precomp_free(pl);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(round_trip_two_springs_no_base_load)
{
    gs_model *mdl = tm_two_springs(); /* m = 1, f == NULL */
    gs_precomp *pc = ts_build(mdl);
    char path[512];
    unsigned long long sum = 0;
    gs_precomp *pl = round_trip(pc, gs_test_tmp_path(path, sizeof path, "pio_springs.bin"), &sum);
    gs_precomp_free(pl);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(round_trip_small_lap_and_identical_solves)
{
    gs_model *mdl = small_lap();
    gs_precomp *pc = ts_build(mdl);
    char path[512];
    unsigned long long sum = 0;
    gs_precomp *pl = round_trip(pc, gs_test_tmp_path(path, sizeof path, "pio_lap.bin"), &sum);
    check_same_solves(pc, pl, GS_METHOD_GI);
    check_same_solves(pc, pl, GS_METHOD_LEMKE);
    /* the loaded one alone (the built one freed first) still solves */
    gs_precomp_free(pc);
    gs_precomp *pl2 = NULL;
    gs_error e;
    GS_CHECK_INT(gs_precomp_load(mdl, path, sum, &pl2, &e), GS_OK);
    check_same_solves(pl, pl2, GS_METHOD_AUTO);
    gs_precomp_free(pl2);
    gs_precomp_free(pl);
    gs_model_free(mdl);
}

/* GS_PRECOMP_DEFER_LQ on a load: everything but L_Q bit for bit and the same
 * GI solves, no L_Q (cond_Q NaN, as a deferred build); the file's L_Q is
 * still checked (one flipped bit in it is an error); finish_lq then gives
 * the saved L_Q (the same code on the same thread count). */
GS_TEST(deferred_load_keeps_no_lq_but_checks_it)
{
    gs_model *mdl = small_lap();
    gs_precomp *pc = ts_build(mdl);
    const size_t m = (size_t)mdl->m;
    char path[512], bad[512];
    gs_test_tmp_path(path, sizeof path, "pio_defer.bin");
    gs_test_tmp_path(bad, sizeof bad, "pio_defer_bad.bin");
    unsigned long long sum = 0;
    gs_error e;
    GS_CHECK_INT(gs_precomp_save(pc, path, &sum, &e), GS_OK);
    gs_precomp *pl = NULL;
    GS_CHECK_INT(gs_precomp_load_ex(mdl, path, sum, GS_PRECOMP_DEFER_LQ, &pl, &e), GS_OK);
    GS_CHECK(!gs_precomp_has_lq(pl));
    GS_CHECK(pl->LQ == NULL);
    GS_CHECK(isnan(pl->cond_Q));
    check_fields(pc, pl, 0);
    check_same_solves(pc, pl, GS_METHOD_GI);
    GS_CHECK_INT(gs_precomp_finish_lq(pl, &e), GS_OK);
    GS_CHECK(gs_precomp_has_lq(pl));
    GS_CHECK(same_bits(pc->LQ, pl->LQ, m * m * sizeof(double)));
    check_same_solves(pc, pl, GS_METHOD_NPM);
    gs_precomp_free(pl);
    size_t len;
    unsigned char *bytes = read_bytes(path, &len);
    bytes[len - 16 - 8 * m * m / 2] ^= 1; /* a bit in the middle of L_Q */
    write_bytes(bad, bytes, len);
    pl = (gs_precomp *)&pl;
    GS_CHECK_INT(gs_precomp_load_ex(mdl, bad, 0, GS_PRECOMP_DEFER_LQ, &pl, &e), GS_ERR_FORMAT);
    GS_CHECK(pl == NULL);
    GS_CHECK_MSG(strstr(e.msg, "corrupted") != NULL, "%s", e.msg);
    expect_load(mdl, bad, 0, GS_ERR_FORMAT, "one bit of L_Q, full load");
    free(bytes);
    remove(bad);
    remove(path);
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

/* ---- rejection ----------------------------------------------------------------- */

typedef struct {
    gs_model *mdl;
    gs_precomp *pc;
    char path[512], bad[512];
    unsigned char *bytes;
    size_t len;
    unsigned long long sum;
} pio_fixture;

static void fx_init(pio_fixture *fx)
{
    gs_error e;
    fx->mdl = tm_random(3, 5, 2, 41); /* 3 parts: a longer ndof table */
    fx->pc = ts_build(fx->mdl);
    gs_test_tmp_path(fx->path, sizeof fx->path, "pio_fx.bin");
    gs_test_tmp_path(fx->bad, sizeof fx->bad, "pio_fx_bad.bin");
    GS_CHECK_INT(gs_precomp_save(fx->pc, fx->path, &fx->sum, &e), GS_OK);
    fx->bytes = read_bytes(fx->path, &fx->len);
}

static void fx_free(pio_fixture *fx)
{
    free(fx->bytes);
    gs_precomp_free(fx->pc);
    gs_model_free(fx->mdl);
    remove(fx->bad);
}

/* Header: 96 fixed bytes + 8 per part; trailer 16 bytes. */
static size_t fx_header(const pio_fixture *fx)
{
    return 96 + 8 * (size_t)fx->mdl->n_parts;
}

GS_TEST(every_flipped_header_and_trailer_byte_rejected)
{
    pio_fixture fx;
    fx_init(&fx);
    const size_t hdr = fx_header(&fx);
    char what[64];
    for (size_t i = 0; i < fx.len; i++) { /* header, trailer and a stride of the payload */
        if (i >= hdr && i < fx.len - 16 && (i - hdr) % 97 != 0 && i != fx.len - 17)
            continue;
        fx.bytes[i] ^= 0x5a;
        write_bytes(fx.bad, fx.bytes, fx.len);
        fx.bytes[i] ^= 0x5a;
        snprintf(what, sizeof what, "byte %zu of %zu flipped", i, fx.len);
        expect_load(fx.mdl, fx.bad, 0, GS_ERR_FORMAT, what);
    }
    /* one low bit in the middle of Q */
    fx.bytes[hdr + (fx.len - 16 - hdr) * 3 / 4] ^= 1;
    write_bytes(fx.bad, fx.bytes, fx.len);
    expect_load(fx.mdl, fx.bad, 0, GS_ERR_FORMAT, "one bit of Q");
    fx_free(&fx);
}

GS_TEST(truncated_and_extended_files_rejected)
{
    pio_fixture fx;
    fx_init(&fx);
    const size_t hdr = fx_header(&fx);
    const size_t cuts[] = {0,       1,       7,       8,           50,          95,
                           96,      hdr - 1, hdr,     hdr + 1,     hdr + 80,    fx.len / 2,
                           fx.len - 17, fx.len - 16, fx.len - 9, fx.len - 8, fx.len - 1};
    char what[64];
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        write_bytes(fx.bad, fx.bytes, cuts[c]);
        snprintf(what, sizeof what, "truncated to %zu of %zu bytes", cuts[c], fx.len);
        expect_load(fx.mdl, fx.bad, 0, GS_ERR_FORMAT, what);
    }
    unsigned char *longer = malloc(fx.len + 8);
    memcpy(longer, fx.bytes, fx.len);
    memset(longer + fx.len, 0, 8);
    write_bytes(fx.bad, longer, fx.len + 1);
    expect_load(fx.mdl, fx.bad, 0, GS_ERR_FORMAT, "one trailing byte");
    write_bytes(fx.bad, longer, fx.len + 8);
    expect_load(fx.mdl, fx.bad, 0, GS_ERR_FORMAT, "eight trailing bytes");
    free(longer);
    fx_free(&fx);
}

GS_TEST(wrong_model_rejected)
{
    pio_fixture fx;
    fx_init(&fx);
    gs_error e;
    /* different m: one more fixed pair */
    gs_model *other_m = tm_random(3, 5, 3, 41);
    GS_CHECK_INT(gs_model_validate(other_m, &e), GS_OK);
    expect_load(other_m, fx.path, 0, GS_ERR_FORMAT, "different m");
    /* different block sizes, n_parts */
    gs_model *other_n = tm_random(3, 6, 2, 41), *other_np = tm_random(2, 5, 2, 41);
    GS_CHECK_INT(gs_model_validate(other_n, &e), GS_OK);
    GS_CHECK_INT(gs_model_validate(other_np, &e), GS_OK);
    expect_load(other_n, fx.path, 0, GS_ERR_FORMAT, "different n");
    expect_load(other_np, fx.path, 0, GS_ERR_FORMAT, "different n_parts");
    /* same sizes, one stiffness value changed: the content hash differs */
    gs_model *other_k = tm_random(3, 5, 2, 41);
    other_k->parts[2].K[0] *= 1.0 + 1e-12;
    GS_CHECK_INT(gs_model_validate(other_k, &e), GS_OK);
    expect_load(other_k, fx.path, 0, GS_ERR_FORMAT, "different K value");
    /* same content, other names: accepted */
    gs_model *renamed = tm_random(3, 5, 2, 41);
    snprintf(renamed->name, sizeof renamed->name, "renamed");
    GS_CHECK_INT(gs_model_validate(renamed, &e), GS_OK);
    expect_load(renamed, fx.path, fx.sum, GS_OK, "renamed model");
    /* an unvalidated model */
    gs_model *raw = tm_random(3, 5, 2, 41);
    expect_load(raw, fx.path, 0, GS_ERR_INVALID, "unvalidated model");
    gs_model_free(other_m);
    gs_model_free(other_n);
    gs_model_free(other_np);
    gs_model_free(other_k);
    gs_model_free(renamed);
    gs_model_free(raw);
    fx_free(&fx);
}

GS_TEST(expected_checksum_mismatch_rejected)
{
    pio_fixture fx;
    fx_init(&fx);
    expect_load(fx.mdl, fx.path, fx.sum, GS_OK, "right checksum");
    expect_load(fx.mdl, fx.path, fx.sum ^ 1ULL, GS_ERR_FORMAT, "wrong expected checksum");
    /* a valid file of a different precomputation (other timings) under the
     * old name: the trailer is consistent, only expect catches it */
    fx.pc->t.total += 1.0;
    unsigned long long sum2 = 0;
    gs_error e;
    GS_CHECK_INT(gs_precomp_save(fx.pc, fx.bad, &sum2, &e), GS_OK);
    GS_CHECK(sum2 != fx.sum);
    expect_load(fx.mdl, fx.bad, 0, GS_OK, "consistent file, no expectation");
    expect_load(fx.mdl, fx.bad, fx.sum, GS_ERR_FORMAT, "consistent file, other checksum");
    fx_free(&fx);
}

GS_TEST(missing_file_and_bad_paths)
{
    gs_model *mdl = tm_random(2, 4, 1, 51);
    gs_precomp *pc = ts_build(mdl);
    char path[512];
    gs_test_tmp_path(path, sizeof path, "pio_does_not_exist.bin");
    remove(path);
    expect_load(mdl, path, 0, GS_ERR_IO, "missing file");
    expect_load(mdl, getenv("GS_TEST_TMP") ? getenv("GS_TEST_TMP") : "/tmp", 0, GS_ERR_IO,
                "a directory");
    gs_error e;
    unsigned long long sum = 7;
    GS_CHECK_INT(gs_precomp_save(pc, "/nonexistent-dir-gapsim/x.bin", &sum, &e), GS_ERR_IO);
    GS_CHECK(sum == 7); /* untouched on failure */
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

GS_TEST(random_garbage_rejected)
{
    pio_fixture fx;
    fx_init(&fx);
    tm_seed(61);
    const size_t sizes[] = {1, 16, 95, 96, 200, fx.len - 1, fx.len, fx.len + 3};
    unsigned char *buf = malloc(fx.len + 8);
    char what[64];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int rep = 0; rep < 3; rep++) {
            for (size_t i = 0; i < sizes[s]; i++)
                buf[i] = (unsigned char)(tm_unif() * 256.0);
            if (rep == 1 && sizes[s] >= 8) /* right magic, garbage after it */
                memcpy(buf, "GSPRECMP", 8);
            if (rep == 2 && sizes[s] >= 96 && sizes[s] <= fx.len) /* right header, garbage payload */
                memcpy(buf, fx.bytes, fx_header(&fx));
            write_bytes(fx.bad, buf, sizes[s]);
            snprintf(what, sizeof what, "garbage of %zu bytes (rep %d)", sizes[s], rep);
            gs_precomp *pc = NULL;
            gs_error e;
            gs_err rc = gs_precomp_load(fx.mdl, fx.bad, 0, &pc, &e);
            GS_CHECK_MSG(rc == GS_ERR_FORMAT, "%s: %s", what, gs_err_name(rc));
            GS_CHECK(pc == NULL);
        }
    /* header fields claiming huge sizes must not be trusted */
    memcpy(buf, fx.bytes, fx.len);
    const unsigned long long huge = 0x7fffffffffffffffULL;
    for (int w = 3; w <= 7; w++) { /* header bytes, n, m, n_parts, payload bytes */
        memcpy(buf + 8 * w, &huge, 8);
        write_bytes(fx.bad, buf, fx.len);
        memcpy(buf + 8 * w, fx.bytes + 8 * w, 8);
        snprintf(what, sizeof what, "huge header word %d", w);
        expect_load(fx.mdl, fx.bad, 0, GS_ERR_FORMAT, what);
    }
    free(buf);
    fx_free(&fx);
}

GS_TEST_MAIN()
