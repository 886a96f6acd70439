/*
 * test_store_vectors.c -- the stored form of the result vectors and the
 * retention of single solves (server/vecenc.c, server/store.c):
 *   - compressed vectors round-trip bit for bit (-0.0, NaN payloads,
 *     denormals, infinities) through result_get and job_results, and are
 *     stored smaller (w_enc / lam_enc = 1);
 *   - a database written before migration 4 (raw BLOBs, schema version 3)
 *     is migrated and its rows read back exactly;
 *   - damaged or unknown encodings are GS_ERR_FORMAT, never trusted;
 *   - gsd_store_retain deletes single solves only, oldest first, by age and
 *     by count, in bounded batches; gsd_store_live_bytes falls after it.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <unistd.h>

#include "gs_test.h"
#include "store.h"
#include "test_store_support.h"
#include "vecenc.h"

/* ---- helpers --------------------------------------------------------------- */

static int raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

static double bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Vectors like a solver's (smooth gaps, sparse forces) with every special
 * bit pattern planted in them. */
static void fill_vectors(double *w, double *lam, int m, int seed)
{
    for (int i = 0; i < m; i++) {
        w[i] = i % 7 == 0 ? 0.0 : 0.05 + 1e-3 * sin(0.01 * i + seed) + 1e-9 * i;
        lam[i] = i % 9 == seed % 9 ? 250.0 / (1 + i) : 0.0;
    }
    const double special[] = {-0.0, bits(0x7ff8000000000123u) /* quiet NaN, payload */,
                              bits(0xfff0000000000001u) /* signalling NaN, sign set */,
                              4.9406564584124654e-324, -2.2250738585072009e-308, INFINITY,
                              -INFINITY, bits(0x000fffffffffffffu) /* largest denormal */};
    for (int k = 0; k < 8; k++) {
        w[(37 * k + seed) % m] = special[k];
        lam[(53 * k + 11 + seed) % m] = special[k];
    }
}

static gsd_result_row make_row(const char *id, const char *job_id, int index, int m, double *w,
                               double *lam, double created)
{
    gsd_result_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%.39s", id);
    snprintf(r.assembly_id, sizeof r.assembly_id, "a_1");
    snprintf(r.job_id, sizeof r.job_id, "%.39s", job_id);
    r.job_index = index;
    snprintf(r.cache_key, sizeof r.cache_key, "k_%.37s", id);
    r.status = GS_STATUS_OPTIMAL;
    r.method = GS_METHOD_GI;
    r.m = m;
    r.w = w;
    r.lam = lam;
    r.created_at = created;
    return r;
}

static void seed_parents(gsd_store *st, int total)
{
    gs_error e;
    GS_CHECK_INT(seed_job(st, "running", total, &e), GS_OK);
}

static int same_vec(const double *a, const double *b, int m)
{
    return memcmp(a, b, (size_t)m * sizeof *a) == 0;
}

typedef struct {
    const double *w, *lam;
    int m, rows, exact;
} page_ctx;

static int check_page(const gsd_result_row *r, void *vctx)
{
    page_ctx *c = vctx;
    c->rows++;
    c->exact += r->w && r->lam && same_vec(r->w, c->w, c->m) && same_vec(r->lam, c->lam, c->m);
    return 0;
}

/* ---- encodings ---------------------------------------------------------------- */

GS_TEST(vectors_compressed_roundtrip_exact)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "vec_exact.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 1);
    enum { M = 2603 };
    static double w[M], lam[M];
    fill_vectors(w, lam, M, 3);
    gs_error e;
    gsd_result_row rows[2] = {make_row("r_s", "", -1, M, w, lam, 10.0),
                              make_row("r_j", "j_1", 0, M, w, lam, 11.0)};
    GS_CHECK_INT(gsd_store_results_put(st, rows, 2, "j_1", 1, 0, 0, 0, &e), GS_OK);
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM results WHERE w_enc=1 AND lam_enc=1"), 2);
    long long wl = raw_int(p, "SELECT length(w) FROM results WHERE id='r_s'");
    GS_CHECK_MSG(wl > 0 && wl < 8 * M, "w stored in %lld bytes (raw %d)", wl, 8 * M);
    long long nnz = 0;
    for (int i = 0; i < M; i++)
        nnz += memcmp(&lam[i], &(double){0.0}, 8) != 0;
    long long ll = raw_int(p, "SELECT length(lam) FROM results WHERE id='r_s'");
    GS_CHECK_MSG(ll > 0 && ll < 12 * nnz, "lam stored in %lld bytes (raw %lld)", ll, 12 * nnz);

    gsd_result_row b;
    int found = 0;
    GS_CHECK_INT(gsd_store_result_get(st, "r_s", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    GS_CHECK(b.w && same_vec(b.w, w, M));
    GS_CHECK(b.lam && same_vec(b.lam, lam, M));
    gsd_result_row_free(&b);
    page_ctx pc = {w, lam, M, 0, 0};
    GS_CHECK_INT(gsd_store_job_results(st, "j_1", 0, -1, 1, check_page, &pc, &e), GS_OK);
    GS_CHECK_INT(pc.rows, 1);
    GS_CHECK_INT(pc.exact, 1);
    gsd_store_close(st);
}

GS_TEST(vectors_codec_levels_and_short_vectors)
{
    gsd_vecenc *c = gsd_vecenc_new();
    GS_CHECK(c != NULL);
    enum { M = 1000 };
    static double w[M], lam[M], back[M];
    fill_vectors(w, lam, M, 5);
    gs_error e;
    for (int level = 1; level <= 19; level += 9) {
        gsd_vecenc_set_level(c, level);
        for (int which = 0; which < 2; which++) {
            const double *v = which ? lam : w;
            const void *p = NULL;
            size_t len = 0;
            int enc = -1;
            GS_CHECK_INT(gsd_vecenc_encode(c, which, v, M, &p, &len, &enc, &e), GS_OK);
            GS_CHECK_INT(enc, GSD_VEC_ZSTD_SHUFFLE);
            /* the BLOB must outlive a decode on the same codec: copy it */
            unsigned char *copy = malloc(len);
            GS_CHECK(copy != NULL);
            memcpy(copy, p, len);
            GS_CHECK_INT(gsd_vecenc_decode(c, which, enc, copy, len, M, back, "r_x", &e), GS_OK);
            GS_CHECK(same_vec(back, v, M));
            free(copy);
        }
    }
    /* a short vector is stored raw: 3 doubles, 24 bytes */
    const void *p = NULL;
    size_t len = 0;
    int enc = -1;
    GS_CHECK_INT(gsd_vecenc_encode(c, GSD_VEC_W, w, 3, &p, &len, &enc, &e), GS_OK);
    GS_CHECK_INT(enc, GSD_VEC_RAW);
    GS_CHECK_INT((int)len, 24);
    GS_CHECK(memcmp(p, w, 24) == 0);
    /* incompressible data is stored raw */
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < M; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(&back[i], &x, 8);
    }
    GS_CHECK_INT(gsd_vecenc_encode(c, GSD_VEC_W, back, M, &p, &len, &enc, &e), GS_OK);
    GS_CHECK_INT(enc, GSD_VEC_RAW);
    GS_CHECK_INT((int)len, 8 * M);
    gsd_vecenc_free(c);
}

/* The decoder's unshuffle of w takes 16 values per step and the rest one by
 * one: every length from 8 to 100 (each remainder mod 16, several times)
 * and a long one decode bit for bit, with a byte pattern that differs in
 * every byte plane (a swapped plane or lane would show). */
GS_TEST(vectors_unshuffle_every_length)
{
    gsd_vecenc *c = gsd_vecenc_new();
    GS_CHECK(c != NULL);
    enum { MAXM = 2603 };
    static double w[MAXM], back[MAXM];
    gs_error e;
    for (int m = 8; m <= MAXM; m = m < 100 ? m + 1 : MAXM + (m == MAXM)) {
        for (int i = 0; i < m; i++) {
            uint64_t u = 0;
            for (int b = 0; b < 8; b++) /* byte b of value i: small, so zstd wins */
                u |= (uint64_t)((i * 3 + b * 5) % 11 + 16 * b) << (8 * b);
            memcpy(&w[i], &u, 8);
        }
        const void *p = NULL;
        size_t len = 0;
        int enc = -1;
        GS_CHECK_INT(gsd_vecenc_encode(c, GSD_VEC_W, w, m, &p, &len, &enc, &e), GS_OK);
        if (m >= 17) /* shorter ones are stored raw: zstd's frame costs more */
            GS_CHECK_INT(enc, GSD_VEC_ZSTD_SHUFFLE);
        unsigned char *copy = malloc(len);
        GS_CHECK(copy != NULL);
        memcpy(copy, p, len);
        memset(back, 0xff, sizeof back);
        GS_CHECK_INT(gsd_vecenc_decode(c, GSD_VEC_W, enc, copy, len, m, back, "r_x", &e), GS_OK);
        GS_CHECK(same_vec(back, w, m));
        free(copy);
    }
    gsd_vecenc_free(c);
}

/* Apply migrations 1..3 by hand (the schema of gapsimd 0.5 before this
 * change) and store one result the way that version did: raw BLOBs. */
GS_TEST(vectors_older_database_reads_exactly)
{
    char p[512];
    fresh_db(p, sizeof p, "vec_v3.db");
    GS_CHECK(gsd_migrations_count >= 4);
    GS_CHECK_INT(raw_exec(p, "PRAGMA journal_mode=WAL"), SQLITE_OK);
    for (int i = 0; i < 3; i++)
        GS_CHECK_INT(raw_exec(p, gsd_migrations[i].sql), SQLITE_OK);
    GS_CHECK_INT(raw_exec(p, "PRAGMA user_version=3;"
                             "INSERT INTO assemblies (id, content_hash, joint, n, m, n_parts, "
                             "n_nodes, n_fast, status) VALUES ('a_1','h','simple',1,1,1,1,0,"
                             "'ready')"),
                 SQLITE_OK);
    enum { M = 500 };
    static double w[M], lam[M];
    fill_vectors(w, lam, M, 1);
    unsigned char packed[12 * M];
    int n = 0;
    for (int i = 0; i < M; i++) {
        uint64_t u;
        memcpy(&u, &lam[i], 8);
        if (!u)
            continue;
        int32_t idx = i;
        memcpy(packed + 12 * n, &idx, 4);
        memcpy(packed + 12 * n + 4, &lam[i], 8);
        n++;
    }
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    GS_CHECK_INT(sqlite3_prepare_v2(db, "INSERT INTO results (id, assembly_id, cache_key, status,"
                                        " m, created_at, w, lam) VALUES ('r_old','a_1','k',"
                                        "'optimal',?1,5.0,?2,?3)", -1, &s, NULL), SQLITE_OK);
    sqlite3_bind_int(s, 1, M);
    sqlite3_bind_blob(s, 2, w, (int)sizeof w, SQLITE_STATIC);
    sqlite3_bind_blob(s, 3, packed, 12 * n, SQLITE_STATIC);
    GS_CHECK_INT(sqlite3_step(s), SQLITE_DONE);
    sqlite3_finalize(s);
    sqlite3_close(db);

    gsd_store *st = open_ok(p);
    GS_CHECK(st != NULL);
    GS_CHECK_INT(gsd_store_schema_version(st), gsd_migrations[gsd_migrations_count - 1].version);
    GS_CHECK_INT(raw_int(p, "SELECT w_enc + lam_enc FROM results WHERE id='r_old'"), 0);
    gsd_result_row b;
    int found = 0;
    gs_error e;
    GS_CHECK_INT(gsd_store_result_get(st, "r_old", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    GS_CHECK(b.w && same_vec(b.w, w, M));
    GS_CHECK(b.lam && same_vec(b.lam, lam, M));
    gsd_result_row_free(&b);
    /* new rows next to it are compressed */
    gsd_result_row r = make_row("r_new", "", -1, M, w, lam, 6.0);
    GS_CHECK_INT(gsd_store_results_put(st, &r, 1, NULL, 0, 0, 0, 0, &e), GS_OK);
    GS_CHECK_INT(raw_int(p, "SELECT w_enc FROM results WHERE id='r_new'"), 1);
    GS_CHECK_INT(gsd_store_result_find_key(st, "a_1", "k", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    GS_CHECK(b.w && same_vec(b.w, w, M) && b.lam && same_vec(b.lam, lam, M));
    gsd_result_row_free(&b);
    gsd_store_close(st);
}

GS_TEST(vectors_damaged_blobs_are_format_errors)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "vec_bad.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 1);
    enum { M = 800 };
    static double w[M], lam[M];
    fill_vectors(w, lam, M, 2);
    gs_error e;
    gsd_result_row r = make_row("r_1", "", -1, M, w, lam, 1.0);
    GS_CHECK_INT(gsd_store_results_put(st, &r, 1, NULL, 0, 0, 0, 0, &e), GS_OK);
    static const char *const damage[] = {
        "UPDATE results SET w_enc=7",                                 /* unknown encoding */
        "UPDATE results SET w=substr(w, 1, length(w) - 9)",           /* truncated frame */
        "UPDATE results SET w=x'28b52ffd60ffff', w_enc=1",            /* frame of 65791 bytes */
        "UPDATE results SET w=zeroblob(100), w_enc=1",                /* not a frame */
        "UPDATE results SET w=x'00', w_enc=0",                        /* raw, wrong length */
    };
    for (int k = 0; k < 5; k++) {
        GS_CHECK_INT(raw_exec(p, "DELETE FROM results"), SQLITE_OK);
        GS_CHECK_INT(gsd_store_results_put(st, &r, 1, NULL, 0, 0, 0, 0, &e), GS_OK);
        GS_CHECK_INT(raw_exec(p, damage[k]), SQLITE_OK);
        gsd_result_row b;
        int found = 0;
        GS_CHECK_MSG(gsd_store_result_get(st, "r_1", &b, &found, &e) == GS_ERR_FORMAT,
                     "damage %d not reported", k);
        GS_CHECK(b.w == NULL && b.lam == NULL);
        GS_CHECK(strstr(e.msg, "corrupt") != NULL);
    }
    gsd_store_close(st);
}

/* ---- retention -------------------------------------------------------------------- */

static int exists(gsd_store *st, const char *id)
{
    gsd_result_row b;
    int found = 0;
    gs_error e;
    if (gsd_store_result_get(st, id, &b, &found, &e) != GS_OK)
        return -1;
    gsd_result_row_free(&b);
    return found;
}

GS_TEST(retention_single_solves_oldest_first_in_batches)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "vec_retain.db"));
    GS_CHECK(st != NULL);
    enum { M = 400, NS = 20, NJ = 5 };
    seed_parents(st, NJ);
    static double w[M], lam[M];
    fill_vectors(w, lam, M, 4);
    gs_error e;
    gsd_result_row rows[NS + NJ];
    char ids[NS + NJ][16];
    for (int i = 0; i < NS; i++) { /* single solves, created at t = 100 + 10 i, shuffled order */
        int t = (i * 7) % NS;
        snprintf(ids[i], sizeof ids[i], "r_s%02d", t);
        rows[i] = make_row(ids[i], "", -1, M, w, lam, 100.0 + 10 * t);
    }
    for (int i = 0; i < NJ; i++) { /* job results, older than every single solve */
        snprintf(ids[NS + i], sizeof ids[NS + i], "r_j%d", i);
        rows[NS + i] = make_row(ids[NS + i], "j_1", i, M, w, lam, 1.0);
    }
    GS_CHECK_INT(gsd_store_results_put(st, rows, NS + NJ, NULL, 0, 0, 0, 0, &e), GS_OK);
    long long live0 = 0, live1 = 0;
    GS_CHECK_INT(gsd_store_live_bytes(st, &live0, &e), GS_OK);

    int n = -1;
    GS_CHECK_INT(gsd_store_retain(st, 0, -1, 10, &n, &e), GS_OK); /* no rule: nothing */
    GS_CHECK_INT(n, 0);
    /* age: created before t = 150 -> s00..s04; batch 3 then the remaining 2 */
    GS_CHECK_INT(gsd_store_retain(st, 150.0, -1, 3, &n, &e), GS_OK);
    GS_CHECK_INT(n, 3);
    GS_CHECK_INT(exists(st, "r_s02"), 0);
    GS_CHECK_INT(exists(st, "r_s03"), 1);
    GS_CHECK_INT(gsd_store_retain(st, 150.0, -1, 3, &n, &e), GS_OK);
    GS_CHECK_INT(n, 2);
    GS_CHECK_INT(gsd_store_retain(st, 150.0, -1, 3, &n, &e), GS_OK);
    GS_CHECK_INT(n, 0);
    GS_CHECK_INT(exists(st, "r_s04"), 0);
    GS_CHECK_INT(exists(st, "r_s05"), 1);
    /* count: keep the newest 6 of the 15 left -> 9 deleted, 4 + 4 + 1 */
    int total = 0;
    do {
        GS_CHECK_INT(gsd_store_retain(st, 0, 6, 4, &n, &e), GS_OK);
        GS_CHECK(n <= 4);
        total += n;
    } while (n == 4);
    GS_CHECK_INT(total, 9);
    for (int t = 0; t < NS; t++) {
        char id[16];
        snprintf(id, sizeof id, "r_s%02d", t);
        GS_CHECK_MSG(exists(st, id) == (t >= NS - 6), "%s", id);
    }
    /* keep 0: everything single goes, the job's results stay */
    GS_CHECK_INT(gsd_store_retain(st, 0, 0, 100, &n, &e), GS_OK);
    GS_CHECK_INT(n, 6);
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM results WHERE job_id IS NULL"), 0);
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM results WHERE job_id='j_1'"), NJ);
    GS_CHECK_INT(gsd_store_live_bytes(st, &live1, &e), GS_OK);
    GS_CHECK_MSG(live1 < live0, "live bytes %lld -> %lld", live0, live1);
    GS_CHECK_INT(gsd_store_retain(st, 0, -5, 0, &n, &e), GS_ERR_INVALID); /* batch 0 */
    gsd_store_close(st);
}

GS_TEST_MAIN()
