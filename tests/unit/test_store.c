/*
 * test_store.c -- the daemon's SQLite store (server/store.c): create / reopen
 * / future-version / non-database opens, exact round trips of every row type
 * (result vectors bit for bit: -0.0, denormals, infinities, NaN), results_put
 * atomicity with the job counters, job paging and done bitmap, find_key,
 * delete cascade, two connections writing from two threads, an ended job's
 * status kept against late writes (a done job carries no error), the job
 * counters recounted from the stored results, a store this process
 * cannot write refused at open, the version probe that refuses a newer
 * store without creating or changing a file, the version an open found
 * before it migrated, and the timing
 * of the hot paths (results_put of 32 rows with m = 2603, find_key).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gs_test.h"
#include "store.h"
#include "test_store_support.h"

/* ---- helpers --------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Scalar REAL columns: exact, except that NaN is stored as NULL (read back as
 * NaN) and SQLite keeps no sign on a zero (-0.0 reads back as +0.0). */
static int same_real(double a, double b)
{
    return same_bits(a, b) || (isnan(a) && isnan(b)) || (a == 0.0 && b == 0.0);
}

static gsd_assembly_row make_assembly(const char *id, const char *hash, double created)
{
    gsd_assembly_row a;
    memset(&a, 0, sizeof a);
    snprintf(a.id, sizeof a.id, "%s", id);
    snprintf(a.content_hash, sizeof a.content_hash, "%s", hash);
    snprintf(a.name, sizeof a.name, "wing panel \"7\" – été"); /* quotes, UTF-8 */
    snprintf(a.joint, sizeof a.joint, "sandwich");
    a.n = 12345;
    a.m = 2603;
    a.n_parts = 3;
    a.n_nodes = 4115;
    a.n_fast = 17;
    snprintf(a.status, sizeof a.status, "precomputing");
    a.t = (gs_precomp_times){0.125, 1.0 / 3.0, 1e-300, 4.9406564584124654e-324, -0.0, 2.5};
    a.cond_K = 1.2345678901234567e12;
    a.cond_Q = NAN;
    a.created_at = created;
    return a;
}

static void check_assembly_eq(const gsd_assembly_row *a, const gsd_assembly_row *b)
{
    GS_CHECK_STR(a->id, b->id);
    GS_CHECK_STR(a->content_hash, b->content_hash);
    GS_CHECK_STR(a->name, b->name);
    GS_CHECK_STR(a->joint, b->joint);
    GS_CHECK_INT(a->n, b->n);
    GS_CHECK_INT(a->m, b->m);
    GS_CHECK_INT(a->n_parts, b->n_parts);
    GS_CHECK_INT(a->n_nodes, b->n_nodes);
    GS_CHECK_INT(a->n_fast, b->n_fast);
    GS_CHECK_STR(a->status, b->status);
    GS_CHECK_STR(a->err_code, b->err_code);
    GS_CHECK_STR(a->err_field, b->err_field);
    GS_CHECK_STR(a->err_msg, b->err_msg);
    GS_CHECK(same_real(a->t.factor_K, b->t.factor_K));
    GS_CHECK(same_real(a->t.build_Q, b->t.build_Q));
    GS_CHECK(same_real(a->t.loads, b->t.loads));
    GS_CHECK(same_real(a->t.factor_Q, b->t.factor_Q));
    GS_CHECK(same_real(a->t.cond, b->t.cond));
    GS_CHECK(same_real(a->t.total, b->t.total));
    GS_CHECK(same_real(a->cond_K, b->cond_K));
    GS_CHECK(same_real(a->cond_Q, b->cond_Q));
    GS_CHECK(same_real(a->created_at, b->created_at));
    GS_CHECK(same_real(a->ready_at, b->ready_at));
    GS_CHECK_STR(a->factor_checksum, b->factor_checksum);
}

static gsd_job_row make_job(const char *id, const char *asm_id, int total, double created)
{
    gsd_job_row j;
    memset(&j, 0, sizeof j);
    snprintf(j.id, sizeof j.id, "%s", id);
    snprintf(j.assembly_id, sizeof j.assembly_id, "%s", asm_id);
    snprintf(j.status, sizeof j.status, "queued");
    j.total = total;
    j.options_json = (char *)"{\"method\":\"auto\",\"pattern\":[1,2,3]}";
    j.created_at = created;
    return j;
}

/* A result with deterministic vectors (seed varies the values). */
static gsd_result_row make_result(const char *id, const char *asm_id, const char *job_id,
                                  int job_index, int m, double *w, double *lam, int seed)
{
    gsd_result_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    snprintf(r.assembly_id, sizeof r.assembly_id, "%s", asm_id);
    snprintf(r.job_id, sizeof r.job_id, "%s", job_id);
    r.job_index = job_index;
    snprintf(r.cache_key, sizeof r.cache_key, "k%08x", (unsigned)seed);
    r.status = GS_STATUS_OPTIMAL;
    r.method = GS_METHOD_GI;
    r.form = GS_FORM_RELATIVE;
    r.auto_chosen = seed & 1;
    r.warm_used = (seed >> 1) & 1;
    r.crossover = (seed >> 2) & 1;
    r.n_act = m / 10;
    r.iterations = 17 + seed;
    r.cg_iterations = 3 * seed;
    r.time = 1e-3 * (seed + 1);
    r.kkt.primal_infeas = 1e-12 + seed;
    r.kkt.dual_infeas = 2e-12 + seed;
    r.kkt.complementarity = 3e-12 + seed;
    r.kkt.stationarity = 4e-12 + seed;
    r.kkt.gap = 5e-12 + seed;
    r.kkt.obj_primal = 6e-12 + seed;
    r.kkt_pass = 1;
    r.m = m;
    for (int i = 0; i < m; i++) {
        w[i] = 1e-3 * sin(0.1 * i + seed);
        lam[i] = i % 10 == seed % 10 ? 100.0 + i : 0.0;
    }
    r.w = w;
    r.lam = lam;
    r.created_at = 1.7e9 + seed;
    return r;
}

/* n results "r_<i>" of job j_1 (assembly a_1) at indices 0..n-1, seed i,
 * their vectors in w and lam (n x m each, row i for result i). */
static void make_job_results(gsd_result_row *rows, int n, int m, double *w, double *lam)
{
    for (int i = 0; i < n; i++) {
        char id[16];
        snprintf(id, sizeof id, "r_%d", i);
        rows[i] = make_result(id, "a_1", "j_1", i, m, w + (size_t)i * m, lam + (size_t)i * m, i);
    }
}

static void check_result_eq(const gsd_result_row *a, const gsd_result_row *b, int vectors)
{
    GS_CHECK_STR(a->id, b->id);
    GS_CHECK_STR(a->assembly_id, b->assembly_id);
    GS_CHECK_STR(a->job_id, b->job_id);
    GS_CHECK_INT(a->job_index, b->job_index);
    GS_CHECK_STR(a->cache_key, b->cache_key);
    GS_CHECK_INT(a->status, b->status);
    GS_CHECK_INT(a->method, b->method);
    GS_CHECK_INT(a->form, b->form);
    GS_CHECK_INT(a->auto_chosen, b->auto_chosen);
    GS_CHECK_INT(a->warm_used, b->warm_used);
    GS_CHECK_INT(a->crossover, b->crossover);
    GS_CHECK_INT(a->n_act, b->n_act);
    GS_CHECK_INT(a->iterations, b->iterations);
    GS_CHECK_INT(a->cg_iterations, b->cg_iterations);
    GS_CHECK(same_real(a->time, b->time));
    GS_CHECK(same_real(a->kkt.primal_infeas, b->kkt.primal_infeas));
    GS_CHECK(same_real(a->kkt.dual_infeas, b->kkt.dual_infeas));
    GS_CHECK(same_real(a->kkt.complementarity, b->kkt.complementarity));
    GS_CHECK(same_real(a->kkt.stationarity, b->kkt.stationarity));
    GS_CHECK(same_real(a->kkt.gap, b->kkt.gap));
    GS_CHECK(same_real(a->kkt.obj_primal, b->kkt.obj_primal));
    GS_CHECK_INT(a->kkt_pass, b->kkt_pass);
    GS_CHECK_INT(a->m, b->m);
    GS_CHECK(same_real(a->created_at, b->created_at));
    if (!vectors)
        return;
    GS_CHECK((a->w == NULL) == (b->w == NULL));
    GS_CHECK((a->lam == NULL) == (b->lam == NULL));
    if (a->w && b->w)
        GS_CHECK(memcmp(a->w, b->w, (size_t)a->m * sizeof(double)) == 0);
    if (a->lam && b->lam)
        GS_CHECK(memcmp(a->lam, b->lam, (size_t)a->m * sizeof(double)) == 0);
}

/* The stored result of want's id is found and equals want, vectors too. */
static void check_stored(gsd_store *st, const gsd_result_row *want)
{
    gsd_result_row b;
    int found = 0;
    gs_error e;
    GS_CHECK_INT(gsd_store_result_get(st, want->id, &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    if (found) {
        check_result_eq(want, &b, 1);
        gsd_result_row_free(&b);
    }
}

/* An assembly "a_1" and a job "j_1" (total) to hang results on. */
static void seed_parents(gsd_store *st, int total)
{
    gs_error e;
    gsd_assembly_row a = make_assembly("a_1", "h1", 1.0);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a, &e), GS_OK);
    gsd_job_row j = make_job("j_1", "a_1", total, 2.0);
    GS_CHECK_INT(gsd_store_job_insert(st, &j, &e), GS_OK);
}

/* ---- open / migrations ----------------------------------------------------- */

GS_TEST(store_migrations_embedded)
{
    GS_CHECK(gsd_migrations_count >= 1);
    for (int i = 0; i < gsd_migrations_count; i++) {
        GS_CHECK_INT(gsd_migrations[i].version, i + 1);
        GS_CHECK(strstr(gsd_migrations[i].sql, "CREATE TABLE") != NULL ||
                 strstr(gsd_migrations[i].sql, "ALTER TABLE") != NULL);
    }
    GS_CHECK_STR(gsd_migrations[0].name, "001_init.sql");
}

GS_TEST(store_open_creates_wal_db)
{
    char p[512];
    fresh_db(p, sizeof p, "store_create.db");
    gsd_store *st = open_ok(p);
    GS_CHECK(st != NULL);
    int latest = gsd_migrations[gsd_migrations_count - 1].version;
    GS_CHECK_INT(gsd_store_schema_version(st), latest);
    gs_error e;
    GS_CHECK_INT(gsd_store_checkpoint(st, &e), GS_OK);
    GS_CHECK_INT(raw_int(p, "PRAGMA user_version"), latest);
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name IN "
                            "('assemblies','jobs','results')"), 3);
    /* WAL is persistent in the file: a plain connection sees it. */
    sqlite3 *db = NULL;
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    GS_CHECK_INT(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
    GS_CHECK_INT(sqlite3_step(s), SQLITE_ROW);
    GS_CHECK_STR((const char *)sqlite3_column_text(s, 0), "wal");
    sqlite3_finalize(s);
    sqlite3_close(db);
    gsd_store_close(st);
}

GS_TEST(store_reopen_keeps_data_and_version)
{
    char p[512];
    fresh_db(p, sizeof p, "store_reopen.db");
    gsd_store *st = open_ok(p);
    GS_CHECK(st != NULL);
    gs_error e;
    gsd_assembly_row a = make_assembly("a_keep", "hk", 5.0);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a, &e), GS_OK);
    int v = gsd_store_schema_version(st);
    gsd_store_close(st);

    /* Another connection holds the write lock: a reopen that tried to migrate
     * would wait for it (busy timeout) and fail; an up-to-date one only reads. */
    sqlite3 *db = NULL;
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    GS_CHECK_INT(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    double t0 = now_s();
    st = open_ok(p);
    double dt = now_s() - t0;
    GS_CHECK_INT(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    GS_CHECK(st != NULL);
    GS_CHECK_MSG(dt < 2.0, "reopen took %.3f s", dt);
    GS_CHECK_INT(gsd_store_schema_version(st), v);
    gsd_assembly_row b;
    int found = 0;
    GS_CHECK_INT(gsd_store_assembly_get(st, "a_keep", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    check_assembly_eq(&a, &b);
    gsd_store_close(st);
    GS_CHECK_INT(raw_int(p, "PRAGMA user_version"), v);
}

GS_TEST(store_future_version_rejected)
{
    char p[512];
    fresh_db(p, sizeof p, "store_future.db");
    sqlite3 *db = NULL;
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    GS_CHECK_INT(sqlite3_exec(db, "CREATE TABLE x(a); PRAGMA user_version=999;", NULL, NULL,
                              NULL), SQLITE_OK);
    sqlite3_close(db);
    gsd_store *st = (gsd_store *)&db; /* must be reset to NULL */
    gs_error e;
    GS_CHECK_INT(gsd_store_open(p, &st, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK(st == NULL);
    GS_CHECK(strstr(e.msg, "999") != NULL);
    GS_CHECK_INT(raw_int(p, "PRAGMA user_version"), 999); /* untouched */
}

static int file_exists(const char *path, const char *suffix)
{
    char p[600];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* gsd_store_check_version, the daemon's first step: a newer store refused
 * with gsd_store_open's message, anything else left to the open, and not a
 * file created or changed (a read-only SQLite connection would create the
 * -wal and -shm files of a WAL database and leave them). */
GS_TEST(store_version_probe_changes_nothing)
{
    char p[512];
    fresh_db(p, sizeof p, "store_probe.db");
    gs_error e;
    GS_CHECK_INT(gsd_store_check_version(p, &e), GS_OK); /* missing: a new store */
    GS_CHECK(!file_exists(p, ""));
    gsd_store *st = open_ok(p);
    GS_CHECK(st != NULL);
    gsd_store_close(st);
    GS_CHECK_INT(gsd_store_check_version(p, &e), GS_OK);
    int found = -1;
    GS_CHECK_INT(gsd_store_open_migrated(p, &st, &found, &e), GS_OK); /* nothing to migrate */
    GS_CHECK_INT(found, gsd_store_schema_version(st));
    gsd_store_close(st);
    sqlite3 *db = NULL;
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    GS_CHECK_INT(sqlite3_exec(db, "PRAGMA user_version=999", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    GS_CHECK(!file_exists(p, "-wal") && !file_exists(p, "-shm"));
    struct stat before, after;
    GS_CHECK_INT(stat(p, &before), 0);
    GS_CHECK_INT(gsd_store_check_version(p, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "schema version 999 is newer than this gapsimd supports") != NULL);
    GS_CHECK(strstr(e.msg, p) != NULL);
    GS_CHECK(!file_exists(p, "-wal") && !file_exists(p, "-shm"));
    GS_CHECK_INT(stat(p, &after), 0);
    GS_CHECK(before.st_size == after.st_size &&
             before.st_mtim.tv_nsec == after.st_mtim.tv_nsec &&
             before.st_mtim.tv_sec == after.st_mtim.tv_sec);
    /* a negative version is no gapsimd's: refused, not migrated (the open
     * indexed the migration table before its start) */
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    GS_CHECK_INT(sqlite3_exec(db, "PRAGMA user_version=-1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    GS_CHECK_INT(gsd_store_check_version(p, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "schema version -1 is not one a gapsimd writes") != NULL);
    GS_CHECK_INT(gsd_store_open(p, &st, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK(st == NULL);
    GS_CHECK_INT(raw_int(p, "PRAGMA user_version"), -1);
    FILE *f = fopen(p, "wb"); /* not a database: the open says so */
    GS_CHECK(f != NULL);
    fputs("not a database", f);
    fclose(f);
    GS_CHECK_INT(gsd_store_check_version(p, &e), GS_OK);
    f = fopen(p, "wb"); /* empty: a new store */
    GS_CHECK(f != NULL);
    fclose(f);
    GS_CHECK_INT(gsd_store_check_version(p, &e), GS_OK);
    GS_CHECK_INT(gsd_store_open_migrated(p, &st, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    gsd_store_close(st);
}

GS_TEST(store_not_a_database_is_an_error)
{
    char p[512];
    fresh_db(p, sizeof p, "store_garbage.db");
    FILE *f = fopen(p, "wb");
    GS_CHECK(f != NULL);
    for (int i = 0; i < 512; i++)
        fputs("not a database ", f);
    fclose(f);
    gsd_store *st = NULL;
    gs_error e;
    GS_CHECK_INT(gsd_store_open(p, &st, &e), GS_ERR_IO);
    GS_CHECK(st == NULL);
    GS_CHECK(strstr(e.msg, p) != NULL); /* names the file */

    fresh_db(p, sizeof p, "store_dir_missing/x.db"); /* directory does not exist */
    GS_CHECK_INT(gsd_store_open(p, &st, &e), GS_ERR_IO);
    GS_CHECK(st == NULL);
    GS_CHECK_INT(gsd_store_open("", &st, &e), GS_ERR_INVALID);
}

/* gsd_store_open of path in a child process that cannot write it (root
 * drops to uid/gid 65534 first, since root writes any file): 0 if the open
 * was refused naming a read-only store, 1 if it opened, 2 another error,
 * 77 if the child cannot even read the file (the scratch directory is not
 * reachable by uid 65534: nothing to test). */
static int open_as_other_user(const char *path)
{
    pid_t pid = fork();
    if (pid < 0)
        return 3;
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        if (access(path, R_OK) != 0)
            _exit(77);
        gsd_store *st = NULL;
        gs_error e;
        gs_err rc = gsd_store_open(path, &st, &e);
        if (rc == GS_OK) {
            gsd_store_close(st);
            _exit(1);
        }
        if (rc == GS_ERR_IO && strstr(e.msg, "read-only") && strstr(e.msg, path) &&
            !strcmp(e.field, "data-dir"))
            _exit(0);
        fprintf(stderr, "  open %s: %s\n", path, e.msg);
        _exit(2);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 4;
    return WEXITSTATUS(status);
}

/* A store this process cannot write is refused at open (SQLite would open
 * the file read-only without a word, and every write fail later): the
 * database file read-only, or its directory, where the WAL cannot be
 * created. */
GS_TEST(store_readonly_refused)
{
    char dir[512], p[512];
    gs_test_tmp_path(dir, sizeof dir, "store_ro");
    mkdir(dir, 0755);
    GS_CHECK(chmod(dir, 0755) == 0);
    fresh_db(p, sizeof p, "store_ro/gapsim.db");
    gsd_store *st = open_ok(p);
    GS_CHECK(st != NULL);
    gsd_store_close(st); /* leaves no WAL */
    GS_CHECK(chmod(p, 0444) == 0);
    int rc = open_as_other_user(p);
    if (rc == 77) {
        fprintf(stderr, "  (skipped: uid 65534 cannot read %s)\n", p);
        chmod(p, 0644);
        return;
    }
    GS_CHECK_INT(rc, 0);
    /* the file writable, its directory not: no WAL can be created */
    GS_CHECK(chmod(p, 0666) == 0);
    GS_CHECK(chmod(dir, 0555) == 0);
    rc = open_as_other_user(p);
    chmod(dir, 0755);
    chmod(p, 0644);
    GS_CHECK_INT(rc, 0);
    /* writable again: it opens */
    GS_CHECK(chmod(dir, 0777) == 0 && chmod(p, 0666) == 0);
    rc = open_as_other_user(p);
    chmod(dir, 0755);
    GS_CHECK_INT(rc, 1);
}

/* ---- assemblies ------------------------------------------------------------- */

GS_TEST(store_assembly_roundtrip)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_asm.db"));
    GS_CHECK(st != NULL);
    gs_error e;
    gsd_assembly_row a = make_assembly("a_00ff", "hash_x", 1.7e9 + 0.25);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a, &e), GS_OK);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a, &e), GS_ERR_IO); /* duplicate id */

    gsd_assembly_row b;
    int found = -1;
    GS_CHECK_INT(gsd_store_assembly_get(st, "a_00ff", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    check_assembly_eq(&a, &b);
    GS_CHECK(same_bits(b.t.factor_Q, 4.9406564584124654e-324)); /* denormal exact */
    GS_CHECK(isnan(b.cond_Q));                                   /* NaN <-> NULL */
    GS_CHECK(same_bits(b.t.cond, 0.0));                          /* -0.0 -> +0.0 */
    GS_CHECK_INT(gsd_store_assembly_get(st, "a_nope", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);

    /* update: every field (failed with error detail) */
    snprintf(a.status, sizeof a.status, "failed");
    snprintf(a.err_code, sizeof a.err_code, "not_spd");
    snprintf(a.err_field, sizeof a.err_field, "parts[1].K");
    snprintf(a.err_msg, sizeof a.err_msg, "block 1 is not positive definite (info 42)");
    snprintf(a.factor_checksum, sizeof a.factor_checksum, "0123456789abcdef");
    snprintf(a.joint, sizeof a.joint, "simple");
    a.n = 7;
    a.cond_Q = -INFINITY;
    a.ready_at = 1.7e9 + 3.5;
    GS_CHECK_INT(gsd_store_assembly_update(st, &a, &e), GS_OK);
    GS_CHECK_INT(gsd_store_assembly_get(st, "a_00ff", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    check_assembly_eq(&a, &b);

    gsd_assembly_row ghost = make_assembly("a_ghost", "h", 1.0);
    GS_CHECK_INT(gsd_store_assembly_update(st, &ghost, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "id");
    snprintf(ghost.joint, sizeof ghost.joint, "glued"); /* CHECK constraint */
    GS_CHECK_INT(gsd_store_assembly_insert(st, &ghost, &e), GS_ERR_IO);
    gsd_store_close(st);
}

GS_TEST(store_assembly_find_hash_and_list)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_asm_list.db"));
    GS_CHECK(st != NULL);
    gs_error e;
    gsd_assembly_row a1 = make_assembly("a_1", "same", 30.0);
    gsd_assembly_row a2 = make_assembly("a_2", "same", 40.0);
    gsd_assembly_row a3 = make_assembly("a_3", "other", 10.0);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a2, &e), GS_OK);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a1, &e), GS_OK);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a3, &e), GS_OK);

    gsd_assembly_row b;
    int found = 0;
    GS_CHECK_INT(gsd_store_assembly_find_hash(st, "same", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    GS_CHECK_STR(b.id, "a_2"); /* most recent */
    GS_CHECK_INT(gsd_store_assembly_find_hash(st, "none", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);

    gsd_assembly_row *rows = NULL;
    int n = 0;
    GS_CHECK_INT(gsd_store_assembly_list(st, &rows, &n, &e), GS_OK);
    GS_CHECK_INT(n, 3);
    GS_CHECK_STR(rows[0].id, "a_3");
    GS_CHECK_STR(rows[1].id, "a_1");
    GS_CHECK_STR(rows[2].id, "a_2");
    check_assembly_eq(&rows[1], &a1);
    free(rows);
    gsd_store_close(st);

    st = open_ok(fresh_db(p, sizeof p, "store_asm_empty.db"));
    GS_CHECK(st != NULL);
    rows = (gsd_assembly_row *)&n;
    GS_CHECK_INT(gsd_store_assembly_list(st, &rows, &n, &e), GS_OK);
    GS_CHECK_INT(n, 0);
    GS_CHECK(rows == NULL);
    gsd_store_close(st);
}

/* ---- jobs ------------------------------------------------------------------- */

GS_TEST(store_job_roundtrip_status_list)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_job.db"));
    GS_CHECK(st != NULL);
    gs_error e;
    gsd_assembly_row a1 = make_assembly("a_1", "h1", 1.0), a2 = make_assembly("a_2", "h2", 2.0);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a1, &e), GS_OK);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a2, &e), GS_OK);
    gsd_job_row j1 = make_job("j_1", "a_1", 1000, 20.0);
    gsd_job_row j2 = make_job("j_2", "a_1", 5, 10.0);
    gsd_job_row j3 = make_job("j_3", "a_2", 7, 30.0);
    j1.done = 3;
    j1.failed = 1;
    j1.solve_time_sum = 0.1 + 0.2;
    j1.iterations_sum = 1LL << 40;
    j2.options_json = NULL;
    GS_CHECK_INT(gsd_store_job_insert(st, &j1, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_insert(st, &j2, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_insert(st, &j3, &e), GS_OK);
    gsd_job_row bad = make_job("j_bad", "a_missing", 1, 1.0); /* foreign key */
    GS_CHECK_INT(gsd_store_job_insert(st, &bad, &e), GS_ERR_IO);

    gsd_job_row g;
    int found = 0;
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &g, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    GS_CHECK_STR(g.id, "j_1");
    GS_CHECK_STR(g.assembly_id, "a_1");
    GS_CHECK_STR(g.status, "queued");
    GS_CHECK_INT(g.total, 1000);
    GS_CHECK_INT(g.done, 3);
    GS_CHECK_INT(g.failed, 1);
    GS_CHECK_STR(g.options_json, j1.options_json);
    GS_CHECK(same_bits(g.created_at, 20.0));
    GS_CHECK(same_bits(g.started_at, 0.0));
    GS_CHECK(same_bits(g.solve_time_sum, 0.1 + 0.2));
    GS_CHECK_INT(g.iterations_sum, 1LL << 40);
    GS_CHECK_INT(g.done_at_start, 0); /* never started */
    gsd_job_row_free(&g);
    GS_CHECK(g.options_json == NULL);
    GS_CHECK_INT(gsd_store_job_get(st, "j_2", &g, &found, &e), GS_OK);
    GS_CHECK(g.options_json == NULL);
    GS_CHECK_INT(gsd_store_job_get(st, "j_none", &g, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);

    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "running", 100.5, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "done", 200.25, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &g, &found, &e), GS_OK);
    GS_CHECK_STR(g.status, "done");
    GS_CHECK_INT(g.done_at_start, 3); /* done when it became running (a resumed job) */
    GS_CHECK(same_bits(g.started_at, 100.5));
    GS_CHECK(same_bits(g.finished_at, 200.25));
    gsd_job_row_free(&g);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_2", "cancelled", 50.0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_get(st, "j_2", &g, &found, &e), GS_OK);
    GS_CHECK(same_bits(g.started_at, 0.0));
    GS_CHECK(same_bits(g.finished_at, 50.0));
    gsd_job_row_free(&g);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_none", "done", 1.0, &e), GS_ERR_INVALID);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_3", "bogus", 1.0, &e), GS_ERR_IO);

    gsd_job_row *rows = NULL;
    int n = 0;
    GS_CHECK_INT(gsd_store_job_list(st, NULL, NULL, &rows, &n, &e), GS_OK);
    GS_CHECK_INT(n, 3);
    GS_CHECK_STR(rows[0].id, "j_2"); /* by created_at */
    GS_CHECK_STR(rows[1].id, "j_1");
    GS_CHECK_STR(rows[2].id, "j_3");
    GS_CHECK_STR(rows[1].options_json, j1.options_json);
    for (int i = 0; i < n; i++)
        gsd_job_row_free(&rows[i]);
    free(rows);
    GS_CHECK_INT(gsd_store_job_list(st, "a_1", NULL, &rows, &n, &e), GS_OK);
    GS_CHECK_INT(n, 2);
    for (int i = 0; i < n; i++)
        gsd_job_row_free(&rows[i]);
    free(rows);
    GS_CHECK_INT(gsd_store_job_list(st, NULL, "queued", &rows, &n, &e), GS_OK);
    GS_CHECK_INT(n, 1);
    GS_CHECK_STR(rows[0].id, "j_3");
    gsd_job_row_free(&rows[0]);
    free(rows);
    GS_CHECK_INT(gsd_store_job_list(st, "a_1", "cancelled", &rows, &n, &e), GS_OK);
    GS_CHECK_INT(n, 1);
    GS_CHECK_STR(rows[0].id, "j_2");
    gsd_job_row_free(&rows[0]);
    free(rows);
    GS_CHECK_INT(gsd_store_job_list(st, "a_2", "running", &rows, &n, &e), GS_OK);
    GS_CHECK_INT(n, 0);
    free(rows);
    gsd_store_close(st);
}

/* ---- results ---------------------------------------------------------------- */

GS_TEST(store_result_roundtrip_exact)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_res.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 4);
    gs_error e;
    enum { M = 9 };
    double w[M] = {1.5, -0.0, 4.9406564584124654e-324, -2.2250738585072009e-308, INFINITY,
                   -1.7976931348623157e308, 0.0, 1.0 / 3.0, NAN};
    double lam[M] = {0.0, -0.0, 3.0, 0.0, 4.9406564584124654e-324, 0.0, 0.0, 1e300, -INFINITY};
    gsd_result_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "r_single");
    snprintf(r.assembly_id, sizeof r.assembly_id, "a_1");
    r.job_index = -1; /* single solve: job_id "" */
    snprintf(r.cache_key, sizeof r.cache_key, "00112233445566778899aabbccddeeff");
    r.status = GS_STATUS_MAX_ITER;
    r.method = GS_METHOD_IPM;
    r.form = GS_FORM_PRIMAL;
    r.auto_chosen = 1;
    r.warm_used = 1;
    r.crossover = 1;
    r.n_act = 4;
    r.iterations = 1000;
    r.cg_iterations = 123456;
    r.time = 0.0123;
    r.kkt = (gs_kkt){.primal_infeas = 1e-15, .dual_infeas = 2.5e-9, .complementarity = -0.0,
                     .stationarity = 4.9406564584124654e-324, .gap = 1e-7,
                     .obj_primal = -123.456};
    r.kkt_pass = 0;
    r.m = M;
    r.w = w;
    r.lam = lam;
    r.created_at = 1.7e9 + 0.001;
    GS_CHECK_INT(gsd_store_results_put(st, &r, 1, NULL, 0, 0, 0, 0, &e), GS_OK);

    gsd_result_row b;
    int found = 0;
    GS_CHECK_INT(gsd_store_result_get(st, "r_single", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    check_result_eq(&r, &b, 1);
    GS_CHECK_STR(b.job_id, "");
    gsd_result_row_free(&b);
    GS_CHECK(b.w == NULL && b.lam == NULL);
    /* lam is stored sparse: 12 bytes per entry whose bits are not +0.0 (60
     * bytes: too short to compress, stored raw); w is compressed (vecenc.h) */
    GS_CHECK_INT(raw_int(p, "SELECT length(lam) FROM results WHERE id='r_single'"), 12 * 5);
    GS_CHECK_INT(raw_int(p, "SELECT lam_enc FROM results WHERE id='r_single'"), 0);
    GS_CHECK_INT(raw_int(p, "SELECT w_enc FROM results WHERE id='r_single'"), 1);
    GS_CHECK(raw_int(p, "SELECT length(w) FROM results WHERE id='r_single'") < 8 * M);
    GS_CHECK_INT(raw_int(p, "SELECT job_id IS NULL FROM results WHERE id='r_single'"), 1);
    /* the typed fields are stored by name */
    GS_CHECK_INT(raw_int(p, "SELECT status='max_iter' AND method='ipm' AND form='primal' "
                            "FROM results WHERE id='r_single'"), 1);
    /* a name this build does not know is a format error naming the column */
    GS_CHECK_INT(raw_int(p, "UPDATE results SET status='bogus' WHERE id='r_single' RETURNING 7"), 7);
    GS_CHECK_INT(gsd_store_result_get(st, "r_single", &b, &found, &e), GS_ERR_FORMAT);
    GS_CHECK_STR(e.field, "status");
    GS_CHECK_INT(raw_int(p, "UPDATE results SET status='max_iter', form='sideways' "
                            "WHERE id='r_single' RETURNING 7"), 7);
    GS_CHECK_INT(gsd_store_result_get(st, "r_single", &b, &found, &e), GS_ERR_FORMAT);
    GS_CHECK_STR(e.field, "form");
    GS_CHECK_INT(raw_int(p, "UPDATE results SET form='primal' WHERE id='r_single' RETURNING 7"), 7);

    /* no vectors stored; m = 0 */
    gsd_result_row r2 = r;
    snprintf(r2.id, sizeof r2.id, "r_novec");
    r2.w = NULL;
    r2.lam = NULL;
    gsd_result_row r3 = r;
    snprintf(r3.id, sizeof r3.id, "r_m0");
    r3.m = 0;
    gsd_result_row two[2] = {r2, r3};
    GS_CHECK_INT(gsd_store_results_put(st, two, 2, NULL, 0, 0, 0, 0, &e), GS_OK);
    check_stored(st, &r2);
    GS_CHECK_INT(gsd_store_result_get(st, "r_m0", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    GS_CHECK_INT(b.m, 0);
    GS_CHECK(b.w != NULL && b.lam != NULL);
    gsd_result_row_free(&b);
    GS_CHECK_INT(gsd_store_result_get(st, "r_none", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);

    /* a corrupted vector on disk is reported, not trusted */
    sqlite3 *db = NULL;
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    GS_CHECK_INT(sqlite3_exec(db, "UPDATE results SET lam=x'0900000000000000000000f0' "
                                  "WHERE id='r_single'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    GS_CHECK_INT(gsd_store_result_get(st, "r_single", &b, &found, &e), GS_ERR_FORMAT);
    GS_CHECK(b.w == NULL && b.lam == NULL);
    gsd_store_close(st);
}

/* A database of schema version 4 (before 005_result_crossover.sql) with
 * results in it: reopening migrates it, its rows read crossover 0 and
 * everything else as written, and new rows keep their flag. */
GS_TEST(store_migration_5_keeps_old_results)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_mig5.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 4);
    gs_error e;
    enum { M = 40 };
    double w[2][M], lam[2][M];
    gsd_result_row r[2];
    for (int i = 0; i < 2; i++)
        r[i] = make_result(i ? "r_new" : "r_old", "a_1", "j_1", i, M, w[i], lam[i], 4 + i);
    GS_CHECK(r[0].crossover == 1 && r[1].crossover == 1); /* seeds 4, 5: bit 2 set */
    GS_CHECK_INT(gsd_store_results_put(st, &r[0], 1, NULL, 0, 0, 0, 0, &e), GS_OK);
    gsd_store_close(st);
    /* back to version 4: the columns of migrations 5 and 6 did not exist then */
    sqlite3 *db = NULL;
    GS_CHECK_INT(sqlite3_open(p, &db), SQLITE_OK);
    GS_CHECK_INT(sqlite3_exec(db, "ALTER TABLE results DROP COLUMN crossover; "
                                  "ALTER TABLE assemblies DROP COLUMN deleting; "
                                  "PRAGMA user_version=4;", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM pragma_table_info('results') "
                            "WHERE name='crossover'"), 0);

    int found = -1;
    GS_CHECK_INT(gsd_store_open_migrated(p, &st, &found, &e), GS_OK);
    GS_CHECK(st != NULL);
    GS_CHECK_INT(found, 4); /* what the daemon logs: "schema 4 -> N" */
    GS_CHECK_INT(gsd_store_schema_version(st), gsd_migrations[gsd_migrations_count - 1].version);
    GS_CHECK(gsd_store_schema_version(st) >= 5);
    r[0].crossover = 0; /* written before the column: the default */
    check_stored(st, &r[0]);
    GS_CHECK_INT(gsd_store_results_put(st, &r[1], 1, NULL, 0, 0, 0, 0, &e), GS_OK);
    check_stored(st, &r[1]); /* crossover 1 (checked above) */
    gsd_store_close(st);
}

GS_TEST(store_results_put_job_counters_atomic)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_put.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 10);
    gs_error e;
    enum { M = 50 };
    static double w[4][M], lam[4][M];
    gsd_result_row rows[4];
    make_job_results(rows, 4, M, w[0], lam[0]);
    GS_CHECK_INT(gsd_store_results_put(st, rows, 3, "j_1", 2, 1, 0.75, 123, &e), GS_OK);
    gsd_job_row j;
    int found = 0;
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &j, &found, &e), GS_OK);
    GS_CHECK_INT(j.done, 2);
    GS_CHECK_INT(j.failed, 1);
    GS_CHECK(same_bits(j.solve_time_sum, 0.75));
    GS_CHECK_INT(j.iterations_sum, 123);
    gsd_job_row_free(&j);

    /* second row duplicates index 0 of the job: nothing of the batch lands */
    gsd_result_row batch[2] = {rows[3], rows[0]};
    snprintf(batch[1].id, sizeof batch[1].id, "r_dup");
    GS_CHECK_INT(gsd_store_results_put(st, batch, 2, "j_1", 2, 0, 1.0, 10, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "UNIQUE") != NULL);
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &j, &found, &e), GS_OK);
    GS_CHECK_INT(j.done, 2);
    GS_CHECK_INT(j.iterations_sum, 123);
    gsd_job_row_free(&j);
    gsd_result_row b;
    GS_CHECK_INT(gsd_store_result_get(st, "r_3", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);

    /* missing job: GS_ERR_INVALID, nothing written */
    GS_CHECK_INT(gsd_store_results_put(st, &rows[3], 1, "j_gone", 1, 0, 0, 0, &e),
                 GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "job_id");
    GS_CHECK_INT(gsd_store_result_get(st, "r_3", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    /* the store still works after the rollbacks */
    GS_CHECK_INT(gsd_store_results_put(st, &rows[3], 1, "j_1", 1, 0, 0.25, 7, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &j, &found, &e), GS_OK);
    GS_CHECK_INT(j.done, 3);
    GS_CHECK(same_bits(j.solve_time_sum, 1.0));
    GS_CHECK_INT(j.iterations_sum, 130);
    gsd_job_row_free(&j);
    check_stored(st, &rows[2]);
    gsd_store_close(st);
}

typedef struct {
    int n;
    int idx[64];
    int vectors_ok;
    int stop_after;
    const double (*w)[32];
    const double (*lam)[32];
} page_ctx;

static int page_cb(const gsd_result_row *r, void *vctx)
{
    page_ctx *c = vctx;
    c->idx[c->n++] = r->job_index;
    if (c->w) {
        if (!r->w || !r->lam || memcmp(r->w, c->w[r->job_index], sizeof c->w[0]) != 0 ||
            memcmp(r->lam, c->lam[r->job_index], sizeof c->lam[0]) != 0)
            c->vectors_ok = 0;
    } else if (r->w || r->lam) {
        c->vectors_ok = 0;
    }
    return c->stop_after && c->n >= c->stop_after;
}

GS_TEST(store_job_results_paging_and_done_indices)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_page.db"));
    GS_CHECK(st != NULL);
    enum { N = 25, M = 32 };
    seed_parents(st, 40);
    gs_error e;
    static double w[40][M], lam[40][M];
    gsd_result_row rows[N];
    for (int k = 0; k < N; k++) {
        int i = (k * 7) % N; /* stored out of index order */
        char id[16];
        snprintf(id, sizeof id, "r_%02d", i);
        rows[k] = make_result(id, "a_1", "j_1", i, M, w[i], lam[i], i);
    }
    /* in three batches */
    GS_CHECK_INT(gsd_store_results_put(st, rows, 10, "j_1", 10, 0, 0, 0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_results_put(st, rows + 10, 10, "j_1", 10, 0, 0, 0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_results_put(st, rows + 20, 5, "j_1", 5, 0, 0, 0, &e), GS_OK);

    page_ctx c = {.vectors_ok = 1, .w = (const double (*)[32])w, .lam = (const double (*)[32])lam};
    GS_CHECK_INT(gsd_store_job_results(st, "j_1", 5, 10, 1, page_cb, &c, &e), GS_OK);
    GS_CHECK_INT(c.n, 10);
    for (int k = 0; k < 10; k++)
        GS_CHECK_INT(c.idx[k], 5 + k);
    GS_CHECK(c.vectors_ok);

    page_ctx c2 = {.vectors_ok = 1};
    GS_CHECK_INT(gsd_store_job_results(st, "j_1", 20, 10, 0, page_cb, &c2, &e), GS_OK);
    GS_CHECK_INT(c2.n, 5); /* 20..24 exist */
    GS_CHECK_INT(c2.idx[0], 20);
    GS_CHECK_INT(c2.idx[4], 24);
    GS_CHECK(c2.vectors_ok); /* no vectors */

    page_ctx c3 = {.vectors_ok = 1, .stop_after = 3};
    GS_CHECK_INT(gsd_store_job_results(st, "j_1", 0, -1, 0, page_cb, &c3, &e), GS_OK);
    GS_CHECK_INT(c3.n, 3);
    page_ctx c4 = {.vectors_ok = 1};
    GS_CHECK_INT(gsd_store_job_results(st, "j_1", 0, -1, 0, page_cb, &c4, &e), GS_OK);
    GS_CHECK_INT(c4.n, N);
    for (int k = 0; k < N; k++)
        GS_CHECK_INT(c4.idx[k], k);
    page_ctx c5 = {.vectors_ok = 1};
    GS_CHECK_INT(gsd_store_job_results(st, "j_none", 0, 10, 1, page_cb, &c5, &e), GS_OK);
    GS_CHECK_INT(c5.n, 0);

    /* the warm-start read: lam alone, bitwise; none for a missing index, a
     * different m, or a result stored without lam */
    double got[M];
    int found = -1;
    for (int i = 0; i < N; i += 6) {
        memset(got, 0xff, sizeof got);
        GS_CHECK_INT(gsd_store_job_lam(st, "j_1", i, M, got, &found, &e), GS_OK);
        GS_CHECK_INT(found, 1);
        GS_CHECK(!memcmp(got, lam[i], sizeof got));
    }
    GS_CHECK_INT(gsd_store_job_lam(st, "j_1", N + 3, M, got, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    GS_CHECK_INT(gsd_store_job_lam(st, "j_1", 2, M - 1, got, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    gsd_result_row nolam = make_result("r_nolam", "a_1", "j_1", 30, M, w[30], lam[30], 30);
    nolam.lam = NULL;
    GS_CHECK_INT(gsd_store_results_put(st, &nolam, 1, "j_1", 1, 0, 0, 0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_lam(st, "j_1", 30, M, got, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);

    unsigned char bm[40];
    memset(bm, 7, sizeof bm);
    GS_CHECK_INT(gsd_store_job_done_indices(st, "j_1", bm, 40, &e), GS_OK);
    for (int i = 0; i < 40; i++)
        GS_CHECK_INT(bm[i], i < N || i == 30);
    GS_CHECK_INT(gsd_store_job_done_indices(st, "j_1", bm, 10, &e), GS_OK); /* clipped */
    for (int i = 0; i < 10; i++)
        GS_CHECK_INT(bm[i], 1);
    gsd_store_close(st);
}

GS_TEST(store_find_key_picks_recent_optimal)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_key.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 1);
    gs_error e;
    gsd_assembly_row a2 = make_assembly("a_2", "h2", 3.0);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a2, &e), GS_OK);
    enum { M = 8 };
    static double w[5][M], lam[5][M];
    gsd_result_row r[5];
    r[0] = make_result("r_old", "a_1", "", -1, M, w[0], lam[0], 1);     /* optimal, older */
    r[1] = make_result("r_best", "a_1", "", -1, M, w[1], lam[1], 2);    /* optimal, newest */
    r[2] = make_result("r_fail", "a_1", "", -1, M, w[2], lam[2], 3);    /* newer, not optimal */
    r[3] = make_result("r_other", "a_2", "", -1, M, w[3], lam[3], 4);   /* other assembly */
    r[4] = make_result("r_diffkey", "a_1", "", -1, M, w[4], lam[4], 5); /* other key */
    for (int i = 0; i < 5; i++)
        snprintf(r[i].cache_key, sizeof r[i].cache_key, "%s", i == 4 ? "key2" : "key1");
    r[0].created_at = 100;
    r[1].created_at = 200;
    r[2].created_at = 300;
    r[3].created_at = 400;
    r[4].created_at = 500;
    r[2].status = GS_STATUS_NUMERICAL;
    GS_CHECK_INT(gsd_store_results_put(st, r, 5, NULL, 0, 0, 0, 0, &e), GS_OK);

    gsd_result_row b;
    int found = 0;
    GS_CHECK_INT(gsd_store_result_find_key(st, "a_1", "key1", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    check_result_eq(&r[1], &b, 1);
    gsd_result_row_free(&b);
    GS_CHECK_INT(gsd_store_result_find_key(st, "a_2", "key2", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    GS_CHECK_INT(gsd_store_result_find_key(st, "a_1", "key3", &b, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    gsd_store_close(st);
}

GS_TEST(store_delete_cascades)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_del.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 3); /* a_1 + j_1 */
    gs_error e;
    gsd_assembly_row a2 = make_assembly("a_2", "h2", 3.0);
    GS_CHECK_INT(gsd_store_assembly_insert(st, &a2, &e), GS_OK);
    gsd_job_row j2 = make_job("j_2", "a_2", 1, 4.0);
    GS_CHECK_INT(gsd_store_job_insert(st, &j2, &e), GS_OK);
    enum { M = 4 };
    static double w[4][M], lam[4][M];
    gsd_result_row r[4];
    r[0] = make_result("r_0", "a_1", "j_1", 0, M, w[0], lam[0], 0);
    r[1] = make_result("r_1", "a_1", "j_1", 1, M, w[1], lam[1], 1);
    r[2] = make_result("r_s", "a_1", "", -1, M, w[2], lam[2], 2);
    r[3] = make_result("r_k", "a_2", "j_2", 0, M, w[3], lam[3], 3);
    GS_CHECK_INT(gsd_store_results_put(st, r, 4, NULL, 0, 0, 0, 0, &e), GS_OK);

    GS_CHECK_INT(gsd_store_assembly_delete(st, "a_1", &e), GS_OK);
    int found = 1;
    gsd_assembly_row a;
    GS_CHECK_INT(gsd_store_assembly_get(st, "a_1", &a, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    gsd_job_row j;
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &j, &found, &e), GS_OK);
    GS_CHECK_INT(found, 0);
    gsd_result_row b;
    for (int i = 0; i < 3; i++) {
        GS_CHECK_INT(gsd_store_result_get(st, r[i].id, &b, &found, &e), GS_OK);
        GS_CHECK_INT(found, 0);
    }
    GS_CHECK_INT(gsd_store_result_get(st, "r_k", &b, &found, &e), GS_OK); /* untouched */
    GS_CHECK_INT(found, 1);
    gsd_result_row_free(&b);
    GS_CHECK_INT(gsd_store_job_get(st, "j_2", &j, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    gsd_job_row_free(&j);
    GS_CHECK_INT(gsd_store_assembly_delete(st, "a_1", &e), GS_OK); /* idempotent */
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM results"), 1);
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM jobs"), 1);
    gsd_store_close(st);
}

/* ---- concurrency ------------------------------------------------------------ */

enum { CW_THREADS = 2, CW_PER_THREAD = 200, CW_M = 300 };

typedef struct {
    const char *path;
    int t;
    gs_err rc;
    char msg[400];
} writer_ctx;

/* Own connection; results one transaction each (the daemon's worst case). */
static int count_cb(const gsd_result_row *r, void *ctx);

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* A store handed to a checkpointer (store_ckpt.c) commits without
 * checkpointing; the checkpointer's thread runs the checkpoints once the WAL
 * passes 1,000 pages (past 4,000 a RESTART), so with commits 0.5 ms apart,
 * as a worker's come, the WAL keeps restarting and stays bounded (without
 * any checkpoint it would grow to the ~10,000 pages written here; with
 * commits back to back neither a PASSIVE nor a RESTART that waits at most
 * 10 ms finds the moment: 43 and 25-28 MB measured); every row is there. */
GS_TEST(store_checkpoints_on_their_own_thread)
{
    char p[512], wal[600];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_ckpt.db"));
    GS_CHECK(st != NULL);
    snprintf(wal, sizeof wal, "%s-wal", p);
    enum { M = 3000, ROWS = 900 };
    seed_parents(st, ROWS);
    gs_error e;
    gsd_ckpt *c = NULL;
    GS_CHECK_INT(gsd_ckpt_start(p, &c, &e), GS_OK);
    gsd_store_hand_checkpoints(st, c);
    static double w[M], lam[M];
    for (int i = 0; i < ROWS; i++) {
        char id[16];
        snprintf(id, sizeof id, "r_%d", i);
        gsd_result_row r = make_result(id, "a_1", "j_1", i, M, w, lam, i);
        for (int k = 0; k < M; k++) /* little to compress: about 3 pages per row */
            w[k] = (double)((k * 2654435761u + (unsigned)i * 40503u) % 1000003u) * 1e-9;
        GS_CHECK_INT(gsd_store_results_put(st, &r, 1, "j_1", 1, 0, 0.0, 0, &e), GS_OK);
        nanosleep(&(struct timespec){0, 500000}, NULL); /* as a worker's solve would */
    }
    for (int t = 0; t < 400 && gsd_ckpt_runs(c) < 1; t++)
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    GS_CHECK(gsd_ckpt_runs(c) >= 1);
    GS_CHECK_MSG(file_size(wal) < 6000LL * 4096, "WAL %lld bytes", file_size(wal));
    int n = 0;
    GS_CHECK_INT(gsd_store_job_results(st, "j_1", 0, -1, 0, count_cb, &n, &e), GS_OK);
    GS_CHECK_INT(n, ROWS);
    gsd_store_close(st);
    gsd_ckpt_stop(c);
}

static void *writer_main(void *vctx)
{
    writer_ctx *c = vctx;
    gs_error e;
    gsd_store *st = NULL;
    c->rc = gsd_store_open(c->path, &st, &e);
    double *w = malloc(CW_M * sizeof *w), *lam = malloc(CW_M * sizeof *lam);
    for (int i = 0; i < CW_PER_THREAD && c->rc == GS_OK; i++) {
        char id[32];
        int index = c->t * CW_PER_THREAD + i;
        snprintf(id, sizeof id, "r_t%d_%d", c->t, i);
        gsd_result_row r = make_result(id, "a_1", "j_1", index, CW_M, w, lam, index);
        c->rc = gsd_store_results_put(st, &r, 1, "j_1", 1, 0, 0.5, 2, &e);
        if (c->rc == GS_OK && i % 50 == 0) {
            gsd_result_row b;
            int found = 0;
            c->rc = gsd_store_result_find_key(st, "a_1", r.cache_key, &b, &found, &e);
            gsd_result_row_free(&b);
        }
    }
    if (c->rc != GS_OK)
        snprintf(c->msg, sizeof c->msg, "%s", e.msg);
    gsd_store_close(st);
    free(w);
    free(lam);
    return NULL;
}

GS_TEST(store_two_connections_write_concurrently)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_conc.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, CW_THREADS * CW_PER_THREAD);
    pthread_t th[CW_THREADS];
    writer_ctx c[CW_THREADS];
    for (int t = 0; t < CW_THREADS; t++) {
        c[t] = (writer_ctx){.path = p, .t = t};
        GS_CHECK_INT(pthread_create(&th[t], NULL, writer_main, &c[t]), 0);
    }
    for (int t = 0; t < CW_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < CW_THREADS; t++)
        GS_CHECK_MSG(c[t].rc == GS_OK, "thread %d: %s", t, c[t].msg);
    gs_error e;
    gsd_job_row j;
    int found = 0;
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &j, &found, &e), GS_OK);
    GS_CHECK_INT(j.done, CW_THREADS * CW_PER_THREAD);
    GS_CHECK_INT(j.iterations_sum, 2 * CW_THREADS * CW_PER_THREAD);
    GS_CHECK(same_bits(j.solve_time_sum, 0.5 * CW_THREADS * CW_PER_THREAD));
    gsd_job_row_free(&j);
    static unsigned char bm[CW_THREADS * CW_PER_THREAD];
    GS_CHECK_INT(gsd_store_job_done_indices(st, "j_1", bm, (int)sizeof bm, &e), GS_OK);
    for (size_t i = 0; i < sizeof bm; i++)
        GS_CHECK_INT(bm[i], 1);
    GS_CHECK_INT(gsd_store_checkpoint(st, &e), GS_OK);
    gsd_store_close(st);
}

typedef struct {
    const char *path;
    pthread_barrier_t *go;
    gs_err rc;
    int version;
    char msg[400];
} opener_ctx;

static void *opener_main(void *vctx)
{
    opener_ctx *c = vctx;
    gs_error e;
    gsd_store *st = NULL;
    pthread_barrier_wait(c->go);
    c->rc = gsd_store_open(c->path, &st, &e);
    if (c->rc == GS_OK)
        c->version = gsd_store_schema_version(st);
    else
        snprintf(c->msg, sizeof c->msg, "%s", e.msg);
    gsd_store_close(st);
    return NULL;
}

/* Two processes / threads creating the same new database: one migrates, the
 * other waits for it and finds the schema current. */
GS_TEST(store_concurrent_create_migrates_once)
{
    for (int round = 0; round < 10; round++) {
        char p[512];
        fresh_db(p, sizeof p, "store_race.db");
        pthread_barrier_t go;
        GS_CHECK_INT(pthread_barrier_init(&go, NULL, 2), 0);
        pthread_t th[2];
        opener_ctx c[2];
        for (int t = 0; t < 2; t++) {
            c[t] = (opener_ctx){.path = p, .go = &go};
            GS_CHECK_INT(pthread_create(&th[t], NULL, opener_main, &c[t]), 0);
        }
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&go);
        for (int t = 0; t < 2; t++) {
            GS_CHECK_MSG(c[t].rc == GS_OK, "round %d thread %d: %s", round, t, c[t].msg);
            GS_CHECK_INT(c[t].version, gsd_migrations[gsd_migrations_count - 1].version);
        }
    }
}

/* ---- hot-path timing ---------------------------------------------------------- */

static int count_cb(const gsd_result_row *r, void *ctx)
{
    (*(int *)ctx)++;
    return 0;
}

GS_TEST(store_hot_path_timing)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_bench.db"));
    GS_CHECK(st != NULL);
    enum { M = 2603, BATCH = 32, NBATCH = 20 };
    seed_parents(st, BATCH * NBATCH);
    gs_error e;
    double *w = malloc((size_t)BATCH * M * sizeof *w);
    double *lam = malloc((size_t)BATCH * M * sizeof *lam);
    GS_CHECK(w && lam);
    gsd_result_row rows[BATCH];
    double t_put = 0, t_max = 0;
    for (int b = 0; b < NBATCH; b++) {
        for (int k = 0; k < BATCH; k++) {
            int i = b * BATCH + k;
            char id[32];
            snprintf(id, sizeof id, "r_%05d", i);
            rows[k] = make_result(id, "a_1", "j_1", i, M, w + (size_t)k * M,
                                  lam + (size_t)k * M, i);
        }
        double t0 = now_s();
        GS_CHECK_INT(gsd_store_results_put(st, rows, BATCH, "j_1", BATCH, 0, 1.0, 100, &e),
                     GS_OK);
        double dt = now_s() - t0;
        t_put += dt;
        t_max = dt > t_max ? dt : t_max;
    }
    enum { NFIND = 2000 };
    double t0 = now_s();
    for (int q = 0; q < NFIND; q++) {
        char key[40];
        snprintf(key, sizeof key, "k%08x", (unsigned)((q * 37) % (BATCH * NBATCH)));
        gsd_result_row r;
        int found = 0;
        GS_CHECK_INT(gsd_store_result_find_key(st, "a_1", key, &r, &found, &e), GS_OK);
        GS_CHECK_INT(found, 1);
        gsd_result_row_free(&r);
    }
    double t_find = (now_s() - t0) / NFIND;
    t0 = now_s();
    for (int q = 0; q < NFIND; q++) {
        gsd_result_row r;
        int found = 1;
        GS_CHECK_INT(gsd_store_result_find_key(st, "a_1", "miss", &r, &found, &e), GS_OK);
        GS_CHECK_INT(found, 0);
    }
    double t_miss = (now_s() - t0) / NFIND;
    int n = 0;
    t0 = now_s();
    GS_CHECK_INT(gsd_store_job_results(st, "j_1", 0, -1, 0, count_cb, &n, &e), GS_OK);
    double t_page = now_s() - t0;
    GS_CHECK_INT(n, BATCH * NBATCH);
    printf("  results_put %d rows m=%d: mean %.2f ms, max %.2f ms (%.0f rows/s)\n", BATCH, M,
           1e3 * t_put / NBATCH, 1e3 * t_max, BATCH * NBATCH / t_put);
    printf("  find_key hit (m=%d, vectors decoded): %.1f us; miss: %.1f us\n", M, 1e6 * t_find,
           1e6 * t_miss);
    printf("  job_results %d rows without vectors: %.2f ms\n", n, 1e3 * t_page);
    free(w);
    free(lam);
    gsd_store_close(st);
}

/* ---- job ends, counters ---------------------------------------------------------- */

/* Raw SQL on a second connection (what a crash or an older version leaves). */
static int raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

static void job_status_is(gsd_store *st, const char *id, const char *status, double finished,
                          const char *error)
{
    gsd_job_row g;
    int found = 0;
    gs_error e;
    GS_CHECK_INT(gsd_store_job_get(st, id, &g, &found, &e), GS_OK);
    GS_CHECK_INT(found, 1);
    GS_CHECK_STR(g.status, status);
    GS_CHECK(same_bits(g.finished_at, finished));
    GS_CHECK_STR(g.error, error);
    gsd_job_row_free(&g);
}

/* A cancel that lands before the first claim's "running" write stays: an
 * ended job keeps its first end, whatever is written after it. */
GS_TEST(store_job_end_is_never_overwritten)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_job_end.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 10);
    gs_error e;
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "cancelled", 50.0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "running", 60.0, &e), GS_OK); /* no-op */
    job_status_is(st, "j_1", "cancelled", 50.0, "");
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "queued", 61.0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_fail(st, "j_1", "failed", 62.0, "io_error (error 1): x", &e),
                 GS_OK);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "done", 63.0, &e), GS_OK);
    job_status_is(st, "j_1", "cancelled", 50.0, "");
    gsd_job_row g;
    int found = 0;
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &g, &found, &e), GS_OK);
    GS_CHECK(same_bits(g.started_at, 0.0)); /* the late "running" set nothing */
    gsd_job_row_free(&g);
    GS_CHECK_INT(raw_int(p, "SELECT count(*) FROM jobs WHERE status='running'"), 0);

    /* failed first: "done" after it does not hide the failure */
    gsd_job_row j2 = make_job("j_2", "a_1", 4, 3.0);
    GS_CHECK_INT(gsd_store_job_insert(st, &j2, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_2", "running", 10.0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_job_fail(st, "j_2", "failed", 11.0, "io_error (error 2): y", &e),
                 GS_OK);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_2", "done", 12.0, &e), GS_OK);
    job_status_is(st, "j_2", "failed", 11.0, "io_error (error 2): y");
    /* an absent job is still an error */
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_none", "running", 1.0, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "id");
    gsd_store_close(st);
}

/* A job that is not failed carries no error: "done" clears one a running job
 * was left with, and the tidy clears those of older rows. */
GS_TEST(store_job_done_has_no_error)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_job_err.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 10);
    gs_error e;
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "running", 10.0, &e), GS_OK);
    GS_CHECK_INT(raw_exec(p, "UPDATE jobs SET error='io_error (error 3): z' WHERE id='j_1'"),
                 SQLITE_OK);
    GS_CHECK_INT(gsd_store_job_set_status(st, "j_1", "done", 20.0, &e), GS_OK);
    job_status_is(st, "j_1", "done", 20.0, "");
    GS_CHECK_INT(raw_exec(p, "UPDATE jobs SET error='io_error (error 4): old' WHERE id='j_1'"),
                 SQLITE_OK);
    int n = -1;
    GS_CHECK_INT(gsd_store_job_tidy_errors(st, &n, &e), GS_OK);
    GS_CHECK_INT(n, 1);
    job_status_is(st, "j_1", "done", 20.0, "");
    GS_CHECK_INT(gsd_store_job_tidy_errors(st, &n, &e), GS_OK);
    GS_CHECK_INT(n, 0);
    gsd_store_close(st);
}

/* An assembly delete interrupted between its result batches leaves done
 * above the job's stored results: recount sets the counters from them. */
GS_TEST(store_job_recount_from_results)
{
    char p[512];
    gsd_store *st = open_ok(fresh_db(p, sizeof p, "store_recount.db"));
    GS_CHECK(st != NULL);
    seed_parents(st, 10);
    gs_error e;
    enum { M = 8 };
    static double w[4][M], lam[4][M];
    gsd_result_row rows[4];
    make_job_results(rows, 4, M, w[0], lam[0]);
    rows[1].status = GS_STATUS_MAX_ITER;
    GS_CHECK_INT(gsd_store_results_put(st, rows, 4, "j_1", 4, 1, 0.01, 78, &e), GS_OK);
    int changed = -1;
    GS_CHECK_INT(gsd_store_job_recount(st, "j_1", &changed, &e), GS_OK);
    GS_CHECK_INT(changed, 0); /* consistent: untouched */
    GS_CHECK_INT(raw_exec(p, "DELETE FROM results WHERE id IN ('r_0','r_1')"), SQLITE_OK);
    GS_CHECK_INT(gsd_store_job_recount(st, "j_1", &changed, &e), GS_OK);
    GS_CHECK_INT(changed, 1);
    gsd_job_row g;
    int found = 0;
    GS_CHECK_INT(gsd_store_job_get(st, "j_1", &g, &found, &e), GS_OK);
    GS_CHECK_INT(g.done, 2);
    GS_CHECK_INT(g.failed, 0);
    GS_CHECK_INT(g.iterations_sum, (17 + 2) + (17 + 3));
    GS_CHECK(fabs(g.solve_time_sum - (3e-3 + 4e-3)) < 1e-15);
    gsd_job_row_free(&g);
    GS_CHECK_INT(gsd_store_job_recount(st, "j_none", &changed, &e), GS_OK);
    GS_CHECK_INT(changed, 0);
    gsd_store_close(st);
}

GS_TEST_MAIN()
