/*
 * gen_files.c -- the output files of one generator run, committed together
 * (gen_files.h); a signal removes their temporary files and the staging
 * directory (core/tmpguard.h).
 */
#include "gen_files.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpguard.h"

/* ---- the set of files ------------------------------------------------------------ */

gs_err gen_files_begin(gen_files *fs, const char *dir, gs_error *err)
{
    memset(fs, 0, sizeof *fs);
    if (!(fs->dir = strdup(dir)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    gs_tmpguard_install();
    return GS_OK;
}

gs_err gen_files_stage(gen_files *fs, const char **stage, gs_error *err)
{
    static const char tail[] = "/.gapsim-gen.XXXXXX";
    const size_t dl = strlen(fs->dir);
    if (!fs->stage) {
        char *path = malloc(dl + sizeof tail);
        if (!path)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
        memcpy(path, fs->dir, dl);
        memcpy(path + dl, tail, sizeof tail);
        const int made = gs_tmpguard_mkdtemp(path) == 0; /* removed by a signal */
        const int errnum = errno;
        if (!made) {
            free(path);
            return gs_errorf(err, GS_ERR_IO, "", "cannot create a staging directory in '%s': %s",
                             fs->dir, strerror(errnum));
        }
        fs->stage = path;
    }
    *stage = fs->stage;
    return GS_OK;
}

gs_err gen_files_open(gen_files *fs, const char *name, gs_wfile **wf, gs_error *err)
{
    if (fs->n >= GEN_FILES_MAX)
        return gs_errorf(err, GS_ERR_LIMIT, "", "too many output files");
    const int i = fs->n;
    const size_t dl = strlen(fs->dir), nl = strlen(name);
    char *path = malloc(dl + nl + 2);
    if (!path || !(fs->name[i] = strdup(name))) {
        free(path);
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    }
    memcpy(path, fs->dir, dl);
    path[dl] = '/';
    memcpy(path + dl + 1, name, nl + 1);
    gs_err rc = gs_tmpguard_open(&fs->wf[i], path, err); /* removed by a signal */
    free(path);
    if (rc != GS_OK) {
        free(fs->name[i]);
        fs->name[i] = NULL;
        return rc;
    }
    fs->n++;
    *wf = &fs->wf[i];
    return GS_OK;
}

/* The staged file src into wf: renamed onto wf's temporary file (the
 * stream wf opened stays on the old, now nameless, empty file), or copied
 * into wf where wf writes into its target (not a regular file) or its
 * temporary file lies on another file system. */
static gs_err adopt(const char *src, gs_wfile *wf, gs_error *err)
{
    if (wf->tmp) {
        if (rename(src, wf->tmp) == 0)
            return GS_OK;
        if (errno != EXDEV)
            return gs_errorf(err, GS_ERR_IO, "", "cannot rename '%s' to '%s': %s", src, wf->tmp,
                             strerror(errno));
    }
    FILE *in = fopen(src, "rb");
    if (!in)
        return gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", src, strerror(errno));
    static char buf[1 << 16];
    gs_err rc = GS_OK;
    size_t got;
    while (rc == GS_OK && (got = fread(buf, 1, sizeof buf, in)) > 0)
        rc = gs_wfile_write(wf, buf, got, err);
    if (rc == GS_OK && ferror(in))
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot read '%s'", src);
    fclose(in);
    (void)unlink(src);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

gs_err gen_files_adopt_staged(gen_files *fs, gs_error *err)
{
    if (!fs->stage)
        return GS_OK;
    DIR *d = opendir(fs->stage);
    if (!d)
        return gs_errorf(err, GS_ERR_IO, "", "cannot read '%s': %s", fs->stage, strerror(errno));
    char *names[GEN_FILES_MAX];
    int cnt = 0;
    gs_err rc = GS_OK;
    for (struct dirent *ent; rc == GS_OK && (ent = readdir(d));) {
        if (ent->d_name[0] == '.')
            continue; /* ".", ".."; the writers' names start with NAME, never '.' */
        if (cnt >= GEN_FILES_MAX - fs->n)
            rc = gs_errorf(err, GS_ERR_LIMIT, "", "too many output files");
        else if (!(names[cnt] = strdup(ent->d_name)))
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
        else
            cnt++;
    }
    closedir(d);
    qsort(names, (size_t)cnt, sizeof names[0], cmp_names);
    const size_t sl = strlen(fs->stage);
    for (int k = 0; k < cnt && rc == GS_OK; k++) {
        gs_wfile *wf;
        char *src = malloc(sl + strlen(names[k]) + 2);
        if (!src) {
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
            break;
        }
        sprintf(src, "%s/%s", fs->stage, names[k]);
        rc = gen_files_open(fs, names[k], &wf, err);
        if (rc == GS_OK)
            rc = adopt(src, wf, err);
        free(src);
    }
    for (int k = 0; k < cnt; k++)
        free(names[k]);
    return rc;
}

/* 1 if name ends in ".json". */
static int is_json(const char *name)
{
    const size_t l = strlen(name);
    return l >= 5 && !strcmp(name + l - 5, ".json");
}

gs_err gen_files_commit(gen_files *fs, gs_error *err)
{
    for (int i = 0; i < fs->n; i++) {
        gs_err rc = gs_wfile_flush(&fs->wf[i], err);
        if (rc != GS_OK)
            return rc; /* gen_files_end aborts them all */
    }
    for (int pass = 0; pass < 2; pass++) /* the JSON last: it never names a missing file */
        for (int i = 0; i < fs->n; i++) {
            if (is_json(fs->name[i]) != pass)
                continue;
            gs_err rc = gs_tmpguard_commit(&fs->wf[i], err); /* aborts itself on failure */
            if (rc != GS_OK)
                return rc;
        }
    return GS_OK;
}

void gen_files_end(gen_files *fs)
{
    for (int i = 0; i < fs->n; i++) {
        gs_tmpguard_abort(&fs->wf[i]); /* no-op after a commit */
        free(fs->name[i]);
    }
    if (fs->stage)
        gs_tmpguard_rmdir(); /* with what the writers left in it */
    gs_tmpguard_uninstall();
    free(fs->stage);
    free(fs->dir);
    memset(fs, 0, sizeof *fs);
}
