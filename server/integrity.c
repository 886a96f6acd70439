/*
 * integrity.c -- startup checks of the data directory and its free space
 * (see integrity.h).
 */
#include "integrity.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ids.h"
#include "store.h"

/* fn(ctx, full path, name) for every entry of data/<sub> but "." and "..";
 * the number of entries, or -1 if the directory cannot be read (0 if it
 * does not exist). */
static int each_entry(const gsd_app *app, const char *sub,
                      void (*fn)(void *ctx, const char *path, const char *name), void *ctx)
{
    char path[PATH_MAX + 32], child[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", app->o.data_dir, sub);
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        if (fn)
            fn(ctx, child, e->d_name);
    }
    closedir(d);
    return n;
}

static void remove_entry(void *ctx, const char *path, const char *name)
{
    (void)ctx;
    (void)name;
    gsd_rmtree(path);
}

gs_err gsd_integrity_before_open(gsd_app *app, int reset, gs_error *err)
{
    char db[PATH_MAX + 16];
    gsd_path_db(app, db, sizeof db);
    struct stat sb;
    const int empty = stat(db, &sb) != 0 || sb.st_size == 0;
    const int na = each_entry(app, "assemblies", NULL, NULL),
              nj = each_entry(app, "jobs", NULL, NULL);
    if (reset) {
        gsd_log(app, 1, "--reset: discarding the store and %d assembly and %d job directories",
                na, nj);
        each_entry(app, "assemblies", remove_entry, NULL);
        each_entry(app, "jobs", remove_entry, NULL);
        static const char *const suffix[] = {"", "-wal", "-shm"};
        for (int i = 0; i < 3; i++) {
            char p[PATH_MAX + 32];
            snprintf(p, sizeof p, "%s%s", db, suffix[i]);
            unlink(p);
        }
        return GS_OK;
    }
    if (empty && (na > 0 || nj > 0))
        return gs_errorf(err, GS_ERR_IO, "data-dir",
                         "the store %s is %s but %s holds %d assembly and %d job directories: "
                         "refusing to start over them with an empty store (restore the "
                         "database, or start with --reset to discard the data)",
                         db, stat(db, &sb) != 0 ? "missing" : "empty", app->o.data_dir, na, nj);
    return GS_OK;
}

/* Report and remove an entry of assemblies/ or jobs/ whose id the store
 * does not know. */
typedef struct {
    gsd_app *app;
    char kind; /* 'a' assemblies, 'j' jobs */
} orphan_ctx;

static void remove_orphan(void *ctx, const char *path, const char *name)
{
    orphan_ctx *o = ctx;
    int found = 0;
    gs_error ge;
    if (gsd_id_valid(name, o->kind)) {
        if (o->kind == 'a') {
            gsd_assembly_row row;
            if (gsd_store_assembly_get(o->app->st, name, &row, &found, &ge) != GS_OK)
                return; /* cannot tell: keep it */
        } else {
            gsd_job_row row;
            if (gsd_store_job_get(o->app->st, name, &row, &found, &ge) != GS_OK)
                return;
            if (found)
                gsd_job_row_free(&row);
        }
    }
    if (found)
        return;
    gsd_log(o->app, 1, "removing %s: no %s of that id in the store", path,
            o->kind == 'a' ? "assembly" : "job");
    gsd_rmtree(path);
}

gs_err gsd_integrity_after_open(gsd_app *app, gs_error *err)
{
    char msg[512];
    if (!gsd_store_quick_check(app->st, msg, sizeof msg))
        return gs_errorf(err, GS_ERR_IO, "data-dir", "the store is damaged (SQLite quick_check: "
                         "%s): restore the database from a backup, or start with --reset to "
                         "discard the data", msg);
    orphan_ctx oa = {app, 'a'}, oj = {app, 'j'};
    each_entry(app, "assemblies", remove_orphan, &oa);
    each_entry(app, "jobs", remove_orphan, &oj);
    return GS_OK;
}

long long gsd_disk_free_mb(const gsd_app *app)
{
    struct statvfs v;
    if (statvfs(app->o.data_dir, &v) != 0)
        return -1;
    return (long long)((unsigned long long)v.f_bavail * v.f_frsize >> 20);
}
