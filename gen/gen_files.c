/*
 * gen_files.c -- the output files of one generator run, committed together
 * (gen_files.h), and the signals that remove their temporary files.
 */
#define _GNU_SOURCE /* getdents64, struct dirent64 */
#include "gen_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- signals ------------------------------------------------------------------ */

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define N_CAUGHT ((int)(sizeof caught / sizeof caught[0]))
static struct sigaction prev_action[N_CAUGHT];
static int installed[N_CAUGHT];

/* What the handler removes: the temporary files (slot i = file i of the
 * set) and the staging directory, their names copied here beforehand. */
static char tmp_path[GEN_FILES_MAX][PATH_MAX + 32];
static volatile sig_atomic_t tmp_armed[GEN_FILES_MAX];
static char stage_path[PATH_MAX + 32];
static volatile sig_atomic_t stage_armed;

/* Remove the files in dir, then dir. Async-signal-safe: system calls only
 * (open, getdents64, unlinkat, rmdir), no allocation. A directory read
 * while its entries go is read again until a pass removes nothing. */
static void remove_stage(const char *dir)
{
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        union {
            struct dirent64 d;
            char b[4096];
        } buf;
        for (int pass = 0; pass < 16; pass++) {
            int removed = 0;
            ssize_t n;
            if (lseek(fd, 0, SEEK_SET) != 0)
                break;
            while ((n = getdents64(fd, buf.b, sizeof buf.b)) > 0)
                for (ssize_t off = 0; off < n;) {
                    const struct dirent64 *d = (const struct dirent64 *)(void *)(buf.b + off);
                    const char *s = d->d_name;
                    const int dot = s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]));
                    if (!dot && unlinkat(fd, s, 0) == 0)
                        removed++;
                    off += d->d_reclen;
                }
            if (!removed)
                break;
        }
        close(fd);
    }
    (void)rmdir(dir);
}

static void on_signal(int sig)
{
    const int saved = errno;
    for (int i = 0; i < GEN_FILES_MAX; i++)
        if (tmp_armed[i])
            (void)unlink(tmp_path[i]);
    if (stage_armed)
        remove_stage(stage_path);
    for (int i = 0; i < N_CAUGHT; i++) /* the previous action takes the signal */
        if (caught[i] == sig && installed[i]) {
            sigaction(sig, &prev_action[i], NULL);
            installed[i] = 0;
        }
    raise(sig); /* delivered when this handler returns (it is blocked meanwhile) */
    errno = saved;
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_CAUGHT; i++)
        sigaddset(&sa.sa_mask, caught[i]); /* one handler at a time */
    for (int i = 0; i < N_CAUGHT; i++) {
        struct sigaction old;
        installed[i] = 0;
        if (sigaction(caught[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue; /* nohup: stays ignored */
        prev_action[i] = old;
        installed[i] = sigaction(caught[i], &sa, NULL) == 0;
    }
}

static void restore_signals(void)
{
    for (int i = 0; i < N_CAUGHT; i++)
        if (installed[i]) {
            sigaction(caught[i], &prev_action[i], NULL);
            installed[i] = 0;
        }
}

/* Block (how SIG_BLOCK) or restore the caught signals: no signal between a
 * file's creation and its arming. */
static void block_caught(int how, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < N_CAUGHT; i++)
        sigaddset(&set, caught[i]);
    sigprocmask(how, how == SIG_BLOCK ? &set : old, how == SIG_BLOCK ? old : NULL);
}

static void arm(int slot, const char *tmp)
{
    if (tmp && strlen(tmp) < sizeof tmp_path[slot]) {
        memcpy(tmp_path[slot], tmp, strlen(tmp) + 1);
        tmp_armed[slot] = 1;
    }
}

/* ---- the set of files ------------------------------------------------------------ */

gs_err gen_files_begin(gen_files *fs, const char *dir, gs_error *err)
{
    memset(fs, 0, sizeof *fs);
    if (!(fs->dir = strdup(dir)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    for (int i = 0; i < GEN_FILES_MAX; i++)
        tmp_armed[i] = 0;
    stage_armed = 0;
    catch_signals();
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
        if (strlen(path) >= sizeof stage_path) {
            free(path);
            return gs_errorf(err, GS_ERR_INVALID, "", "output directory name too long");
        }
        sigset_t old;
        block_caught(SIG_BLOCK, &old);
        const int made = mkdtemp(path) != NULL;
        const int errnum = errno;
        if (made) {
            memcpy(stage_path, path, strlen(path) + 1);
            stage_armed = 1;
        }
        block_caught(SIG_SETMASK, &old);
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
    /* no signal between the temporary file's creation and its arming; but a
       target that is not a regular file is written into (no temporary file)
       and its open may wait (a FIFO waits for its reader): not blocked */
    struct stat st;
    const int direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    sigset_t old;
    if (!direct)
        block_caught(SIG_BLOCK, &old);
    gs_err rc = gs_wfile_open(&fs->wf[i], path, err);
    if (rc == GS_OK)
        arm(i, fs->wf[i].tmp);
    if (!direct)
        block_caught(SIG_SETMASK, &old);
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
            gs_err rc = gs_wfile_commit(&fs->wf[i], err); /* aborts itself on failure */
            tmp_armed[i] = 0; /* renamed (or removed): nothing of it to remove any more */
            if (rc != GS_OK)
                return rc;
        }
    return GS_OK;
}

void gen_files_end(gen_files *fs)
{
    for (int i = 0; i < fs->n; i++) {
        sigset_t old;
        block_caught(SIG_BLOCK, &old);
        gs_wfile_abort(&fs->wf[i]); /* no-op after a commit */
        tmp_armed[i] = 0;
        block_caught(SIG_SETMASK, &old);
        free(fs->name[i]);
    }
    if (fs->stage) {
        remove_stage(fs->stage);
        stage_armed = 0;
    }
    restore_signals();
    free(fs->stage);
    free(fs->dir);
    memset(fs, 0, sizeof *fs);
}
