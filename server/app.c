/*
 * app.c -- logging, data-directory layout and file-tree helpers (see app.h).
 *
 * Layout of the data directory:
 *   gapsim.db                 the SQLite store (WAL: gapsim.db-wal, -shm)
 *   assemblies/<id>/          model.json + its .npy files as uploaded, factors.bin
 *   jobs/<id>/gaps.npy        a cloud's input gaps (k x m float64)
 *   staging/                  uploads being received (cleared at start)
 */
#define _GNU_SOURCE
#include "app.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ids.h"
#include "text.h"

void gsd_log(const gsd_app *app, int level, const char *fmt, ...)
{
    if (app && level > app->o.log_level)
        return;
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char line[1024], esc[4 * sizeof line];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* paths, ids and messages can come from a request: one line, no control
     * characters, no invalid UTF-8 (text.h) */
    gsd_log_escape(esc, sizeof esc, line);
    fprintf(stderr, "%s gapsimd %s: %s\n", stamp, level == 0 ? "error" : level == 1 ? "info" : "debug",
            esc);
}

void gsd_path_db(const gsd_app *app, char *out, size_t cap)
{
    snprintf(out, cap, "%s/gapsim.db", app->o.data_dir);
}

void gsd_path_assembly(const gsd_app *app, const char *id, char *out, size_t cap)
{
    snprintf(out, cap, "%s/assemblies/%s", app->o.data_dir, id);
}

void gsd_path_job(const gsd_app *app, const char *id, char *out, size_t cap)
{
    snprintf(out, cap, "%s/jobs/%s", app->o.data_dir, id);
}

void gsd_path_staging(const gsd_app *app, char *out, size_t cap)
{
    char id[GSD_ID_LEN];
    gsd_new_id('u', id);
    snprintf(out, cap, "%s/staging/%s", app->o.data_dir, id);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void gsd_rmtree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int gsd_mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

void gsd_error_id(char out[16])
{
    unsigned char b[4];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) { /* fall back on the clock */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned v = (unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec * 2654435761u;
        memcpy(b, &v, sizeof b);
    }
    snprintf(out, 16, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
}
