/*
 * integrity.c -- startup checks of the data directory and its free space
 * (see integrity.h).
 */
#include "integrity.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ids.h"
#include "linalg.h"
#include "store.h"

/* The previous run closed the store cleanly (gsd_store_take_clean_mark,
 * before the store opens): quick_check is skipped; or there was no store
 * yet. One data directory per process. */
static int closed_cleanly, new_store;
/* gapsim.db as the store opened it (gsd_integrity_after_open): device and
 * inode, for gsd_data_dir_lost (db_known 0: not recorded, not checked). */
static dev_t db_dev;
static ino_t db_ino;
static int db_known;

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
        static const char *const suffix[] = {"", "-wal", "-shm", "-clean"};
        for (int i = 0; i < 4; i++) {
            char p[PATH_MAX + 32];
            snprintf(p, sizeof p, "%s%s", db, suffix[i]);
            unlink(p);
        }
        new_store = 1; /* what opens next is created empty: its check says so */
        return GS_OK;
    }
    if (empty && (na > 0 || nj > 0))
        return gs_errorf(err, GS_ERR_IO, "data-dir",
                         "the store %s is %s but %s holds %d assembly and %d job directories: "
                         "refusing to start over them with an empty store (restore the "
                         "database, or start with --reset to discard the data)",
                         db, stat(db, &sb) != 0 ? "missing" : "empty", app->o.data_dir, na, nj);
    closed_cleanly = !empty && gsd_store_take_clean_mark(db);
    new_store = empty;
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

/* ---- the lock of the data directory ------------------------------------------ */

gs_err gsd_integrity_lock(gsd_app *app, gs_error *err)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" GSD_LOCK_FILE, app->o.data_dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "data-dir", "cannot open the lock file %s: %s", path,
                         strerror(errno));
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        int saved = errno;
        if (saved != EACCES && saved != EAGAIN) {
            close(fd);
            return gs_errorf(err, GS_ERR_IO, "data-dir", "cannot lock %s: %s", path,
                             strerror(saved));
        }
        /* the holder: from the kernel, else the pid it wrote */
        long pid = 0;
        struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        if (fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK && q.l_pid > 0)
            pid = (long)q.l_pid;
        if (pid <= 0) {
            char buf[32] = {0};
            ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
            if (got > 0)
                pid = strtol(buf, NULL, 10);
        }
        close(fd);
        char who[48] = "";
        if (pid > 0)
            snprintf(who, sizeof who, " (pid %ld)", pid);
        return gs_errorf(err, GS_ERR_IO, "data-dir",
                         "the data directory %s is in use by another gapsimd%s: it holds the "
                         "lock %s; stop it first, or give another --data-dir",
                         app->o.data_dir, who, path);
    }
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != (ssize_t)len)
        gsd_log(app, 1, "cannot write the pid into %s: %s", path, strerror(errno));
    /* fd stays open, the lock held, for the life of the process: the kernel
     * releases it when the process ends, however it ends */
    return GS_OK;
}

/* ---- temporary files of interrupted atomic writes ------------------------------ */

/* "<name>.tmp.XXXXXX": what an atomic write (core/fileio.c, mkstemp) leaves
 * when the process dies before its rename. */
static int is_atomic_tmp(const char *name)
{
    size_t n = strlen(name);
    static const char mid[] = ".tmp.";
    const size_t ml = sizeof mid - 1, xl = 6;
    if (n < 1 + ml + xl || memcmp(name + n - xl - ml, mid, ml) != 0)
        return 0;
    for (size_t i = n - xl; i < n; i++)
        if (!isalnum((unsigned char)name[i]))
            return 0;
    return 1;
}

typedef struct {
    gsd_app *app;
    int removed;
    long long bytes;
} tmp_ctx;

static void remove_tmp(void *ctx, const char *path, const char *name)
{
    tmp_ctx *t = ctx;
    struct stat sb;
    if (!is_atomic_tmp(name) || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return;
    if (unlink(path) != 0) {
        gsd_log(t->app, 0, "cannot remove %s (left by an interrupted write): %s", path,
                strerror(errno));
        return;
    }
    gsd_log(t->app, 1, "removed %s (%lld bytes), left by an interrupted write", path,
            (long long)sb.st_size);
    t->removed++;
    t->bytes += (long long)sb.st_size;
}

/* Each directory data/<sub>/<id> (path): its temporary files removed. */
static void scan_tmp_dir(void *ctx, const char *path, const char *name)
{
    (void)name;
    tmp_ctx *t = ctx;
    char child[PATH_MAX + 600];
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_atomic_tmp(e->d_name) ||
            snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child)
            continue;
        remove_tmp(t, child, e->d_name);
    }
    closedir(d);
}

/* ---- the store's check ------------------------------------------------------------ */

/* PRAGMA quick_check, O(database): 1-4 s per GB with the file in the page
 * cache, 10-15 s per GB from a cold disk. Skipped when the previous run
 * closed the store cleanly and the file has not changed since: a crash, a
 * kill, a power loss, an edit or a copy of the file while the daemon was
 * stopped, a first start of this version, or a removed gapsim.db-clean
 * make it run. A damaged store is refused and leaves no clean mark. */
static gs_err check_store(gsd_app *app, gs_error *err)
{
    if (closed_cleanly) {
        gsd_log(app, 1, "store: closed cleanly by the last run and unchanged since; "
                        "quick_check skipped");
        return GS_OK;
    }
    char msg[512];
    double t0 = gs_now();
    if (!gsd_store_quick_check(app->st, msg, sizeof msg)) {
        gsd_store_mark_unsound(app->st);
        return gs_errorf(err, GS_ERR_IO, "data-dir", "the store is damaged (SQLite quick_check: "
                         "%s): restore the database from a backup, or start with --reset to "
                         "discard the data", msg);
    }
    gsd_log(app, 1, "store: quick_check ok in %.2f s (%s)", gs_now() - t0,
            new_store ? "a new store"
                      : "the last run did not close the store cleanly, or the file changed since");
    return GS_OK;
}

static void delete_finished(void *ctx, const char *id)
{
    gsd_log(ctx, 1, "assembly %s: finished its delete, which a stop had interrupted", id);
}

gs_err gsd_integrity_after_open(gsd_app *app, gs_error *err)
{
    gs_err rc = check_store(app, err);
    if (rc)
        return rc;
    char db[PATH_MAX + 16];
    gsd_path_db(app, db, sizeof db);
    struct stat dsb;
    if (stat(db, &dsb) == 0) {
        db_dev = dsb.st_dev;
        db_ino = dsb.st_ino;
        db_known = 1;
    }
    /* deletes a stop interrupted: finished first, their directories then
     * go as orphans; one that fails here (a full disk) does not keep the
     * daemon from starting: the assembly stays, and deleting it again
     * finishes it */
    gs_error de;
    if (gsd_store_assembly_deletes_finish(app->st, delete_finished, app, &de) != GS_OK)
        gsd_log(app, 0, "cannot finish an interrupted assembly delete (%s): delete the "
                "assembly again", de.msg);
    orphan_ctx oa = {app, 'a'}, oj = {app, 'j'};
    each_entry(app, "assemblies", remove_orphan, &oa);
    each_entry(app, "jobs", remove_orphan, &oj);
    /* atomic writes interrupted by a crash (factors.bin.tmp.*): nothing
     * writes yet, and this process holds the data directory's lock */
    tmp_ctx t = {app, 0, 0};
    each_entry(app, "assemblies", scan_tmp_dir, &t);
    each_entry(app, "jobs", scan_tmp_dir, &t);
    if (t.removed)
        gsd_log(app, 1, "removed %d temporary file%s of interrupted writes (%.1f MiB)",
                t.removed, t.removed == 1 ? "" : "s", (double)t.bytes / 1048576.0);
    /* a job that did not fail carries no error (rows of older versions) */
    int tidied = 0;
    gs_error te;
    if (gsd_store_job_tidy_errors(app->st, &tidied, &te) != GS_OK)
        gsd_log(app, 0, "cannot clear the errors of jobs that did not fail: %s", te.msg);
    else if (tidied)
        gsd_log(app, 1, "cleared the error of %d job%s that did not fail", tidied,
                tidied == 1 ? "" : "s");
    return GS_OK;
}

long long gsd_disk_free_mb(const gsd_app *app)
{
    struct statvfs v;
    if (statvfs(app->o.data_dir, &v) != 0)
        return -1;
    return (long long)((unsigned long long)v.f_bavail * v.f_frsize >> 20);
}

int gsd_data_dir_lost(const gsd_app *app, char *msg, size_t cap)
{
    struct statvfs v;
    if (statvfs(app->o.data_dir, &v) != 0) {
        snprintf(msg, cap, "the data directory cannot be reached (%s): new data is refused "
                 "(507); restore it (removed or unmounted while this server ran?) and restart "
                 "gapsimd", strerror(errno));
        return 1;
    }
    char db[PATH_MAX + 16];
    gsd_path_db(app, db, sizeof db);
    struct stat sb;
    if (db_known && (stat(db, &sb) != 0 || sb.st_dev != db_dev || sb.st_ino != db_ino)) {
        snprintf(msg, cap, "the store's database file in the data directory was removed or "
                 "replaced while this server ran: new data is refused (507); restore the data "
                 "directory and restart gapsimd");
        return 1;
    }
    return 0;
}
