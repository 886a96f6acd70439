/* test_upkeep.c -- the data directory's file usage (server/upkeep.h,
 * gsd_upkeep_files_bytes), the measure --store-quota-mb is held to: every
 * file under the root counts its allocated blocks, a file with several
 * links (a cloud's gaps shared by gaps_from) counts once in all, and the
 * database, its WAL and shm files and the reserve at the top level are not
 * counted. Exact figures from stat(2) of the files written. And a data
 * directory, or the store's file, removed under the running daemon: a
 * /healthz reason and new data refused (integrity.h: gsd_data_dir_lost). */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_test.h"
#include "integrity.h"
#include "store.h"
#include "upkeep.h"

/* Writes len bytes (not zeros: no sparse blocks) to root/rel; returns its
 * st_blocks * 512, or -1. */
static long long put_file(const char root[512], const char *rel, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    for (size_t i = 0; i < len; i++)
        fputc((int)(i * 31 % 251) + 1, fp);
    if (fclose(fp) != 0)
        return -1;
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_blocks * 512 : -1;
}

static void make_dir(const char root[512], const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    GS_CHECK(mkdir(path, 0755) == 0);
}

static void link_file(const char root[512], const char *from, const char *to)
{
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/%s", root, from);
    snprintf(b, sizeof b, "%s/%s", root, to);
    GS_CHECK(link(a, b) == 0);
}

GS_TEST(files_bytes_counts_shared_gaps_once)
{
    char root[512];
    gs_test_tmp_path(root, sizeof root, "upkeep_walk");
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    GS_CHECK(system(cmd) == 0);
    GS_CHECK(mkdir(root, 0755) == 0);
    make_dir(root, "assemblies");
    make_dir(root, "jobs");
    make_dir(root, "jobs/j_a");
    make_dir(root, "jobs/j_b");
    make_dir(root, "jobs/j_c");

    /* not counted: the database and its companions, the reserve */
    GS_CHECK(put_file(root, "gapsim.db", 70000) > 0);
    GS_CHECK(put_file(root, "gapsim.db-wal", 30000) > 0);
    GS_CHECK(put_file(root, "gapsim.db-shm", 30000) > 0);
    GS_CHECK(put_file(root, "reserve", 50000) > 0);
    GS_CHECK_INT(gsd_upkeep_files_bytes(root), 0);

    long long model = put_file(root, "assemblies/model.bin", 200000);
    long long gaps = put_file(root, "jobs/j_a/gaps.npy", 1 << 20);
    GS_CHECK(model >= 200000 && gaps >= 1 << 20);
    GS_CHECK_INT(gsd_upkeep_files_bytes(root), model + gaps);

    /* two clouds made with gaps_from: three links, the same bytes */
    link_file(root, "jobs/j_a/gaps.npy", "jobs/j_b/gaps.npy");
    link_file(root, "jobs/j_a/gaps.npy", "jobs/j_c/gaps.npy");
    long long shared = gsd_upkeep_files_bytes(root);
    GS_CHECK_MSG(llabs(shared - (model + gaps)) <= 2, "%lld bytes, want %lld", shared,
                 model + gaps);
    /* the source job deleted: the two links left still count it once */
    char a[1024];
    snprintf(a, sizeof a, "%s/jobs/j_a/gaps.npy", root);
    GS_CHECK(unlink(a) == 0);
    shared = gsd_upkeep_files_bytes(root);
    GS_CHECK_MSG(llabs(shared - (model + gaps)) <= 1, "%lld bytes, want %lld", shared,
                 model + gaps);
    /* a database name below the top level is an ordinary file */
    long long nested = put_file(root, "jobs/j_b/gapsim.db", 10000);
    GS_CHECK(llabs(gsd_upkeep_files_bytes(root) - (model + gaps + nested)) <= 1);

    snprintf(cmd, sizeof cmd, "%s/none", root);
    GS_CHECK_INT(gsd_upkeep_files_bytes(cmd), -1);
}

/* The data directory removed, or its gapsim.db replaced, while the daemon
 * runs: /healthz degraded naming the data directory, and no new data (a
 * write would go into an unlinked database); statvfs failing is not
 * "healthy". */
GS_TEST(lost_data_dir_degrades_and_refuses)
{
    static gsd_app app;
    char root[512], moved[600], cmd[1300], db[600], aside[620];
    gs_test_tmp_path(root, sizeof root, "upkeep_lost");
    snprintf(moved, sizeof moved, "%s.moved", root);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", root, moved);
    GS_CHECK(system(cmd) == 0);
    GS_CHECK(mkdir(root, 0755) == 0);
    snprintf(app.o.data_dir, sizeof app.o.data_dir, "%s", root);
    app.o.log_level = 0;
    app.o.min_free_mb = 0;
    app.o.store_quota_mb = 0;
    snprintf(db, sizeof db, "%s/gapsim.db", root);
    gs_error e;
    GS_CHECK_INT(gsd_integrity_before_open(&app, 0, &e), GS_OK);
    GS_CHECK_INT(gsd_store_open(db, &app.st, &e), GS_OK);
    GS_CHECK_INT(gsd_integrity_after_open(&app, &e), GS_OK);

    char why[2][320], msg[512];
    double used = 0;
    GS_CHECK_INT(gsd_upkeep_health(&app, why, sizeof why[0], &used), 0);
    GS_CHECK_INT(gsd_upkeep_room(&app, app.st, 1, msg, sizeof msg), GSD_ROOM_OK);

    /* gapsim.db replaced by another file (the store writes the unlinked one) */
    snprintf(aside, sizeof aside, "%s.aside", db);
    GS_CHECK(rename(db, aside) == 0);
    FILE *f = fopen(db, "wb");
    GS_CHECK(f != NULL);
    fclose(f);
    GS_CHECK_INT(gsd_upkeep_health(&app, why, sizeof why[0], &used), 1);
    GS_CHECK(strstr(why[0], "data directory") && strstr(why[0], "replaced"));
    GS_CHECK_INT(gsd_upkeep_room(&app, app.st, 0, msg, sizeof msg), GSD_ROOM_LOST);
    GS_CHECK(rename(aside, db) == 0);
    GS_CHECK_INT(gsd_upkeep_health(&app, why, sizeof why[0], &used), 0);

    /* the whole directory gone: statvfs fails */
    GS_CHECK(rename(root, moved) == 0);
    long long free_mb = gsd_disk_free_mb(&app);
    int n = gsd_upkeep_health(&app, why, sizeof why[0], &used);
    int room0 = gsd_upkeep_room(&app, app.st, 0, msg, sizeof msg);
    int room1 = gsd_upkeep_room(&app, app.st, 1, msg, sizeof msg);
    GS_CHECK(rename(moved, root) == 0);
    GS_CHECK_INT(free_mb, -1);
    GS_CHECK_INT(n, 1);
    GS_CHECK(strstr(why[0], "data directory cannot be reached") != NULL);
    GS_CHECK(strchr(why[0], '"') == NULL && strstr(why[0], root) == NULL); /* JSON, no path */
    GS_CHECK_INT(room0, GSD_ROOM_LOST);
    GS_CHECK_INT(room1, GSD_ROOM_LOST);
    GS_CHECK(strstr(msg, "507") != NULL);
    GS_CHECK_INT(gsd_upkeep_health(&app, why, sizeof why[0], &used), 0);
    gsd_store_close(app.st);
    app.st = NULL;
}

GS_TEST_MAIN()
