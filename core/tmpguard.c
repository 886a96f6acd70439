/*
 * tmpguard.c -- temporary files and a staging directory removed when a
 * signal ends the process (tmpguard.h).
 */
#define _GNU_SOURCE /* getdents64, struct dirent64 */
#include "tmpguard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define N_CAUGHT ((int)(sizeof caught / sizeof caught[0]))
static struct sigaction prev_action[N_CAUGHT];
static int installed[N_CAUGHT], depth;

static char tmp_path[GS_TMPGUARD_SLOTS][PATH_MAX + 32];
static volatile sig_atomic_t tmp_armed[GS_TMPGUARD_SLOTS];
static char dir_path[PATH_MAX + 32];
static volatile sig_atomic_t dir_armed;
/* a name is being created and armed: a signal is recorded, acted on after */
static volatile sig_atomic_t creating, pending;

/* The files in dir, then dir. Async-signal-safe: system calls only (open,
 * getdents64, unlinkat, rmdir), no allocation. A directory read while its
 * entries go is read again until a pass removes nothing. */
static void remove_dir(const char *dir)
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

/* Remove what is armed, then end the process by sig (default action). */
static void end_by(int sig)
{
    for (int i = 0; i < GS_TMPGUARD_SLOTS; i++)
        if (tmp_armed[i])
            (void)unlink(tmp_path[i]);
    if (dir_armed)
        remove_dir(dir_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_signal(int sig)
{
    if (creating) {
        pending = sig;
        return;
    }
    end_by(sig);
}

void gs_tmpguard_install(void)
{
    if (depth++ > 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_CAUGHT; i++)
        sigaddset(&sa.sa_mask, caught[i]); /* one handler at a time */
    for (int i = 0; i < N_CAUGHT; i++) {
        installed[i] = 0;
        if (sigaction(caught[i], NULL, &prev_action[i]) != 0 ||
            prev_action[i].sa_handler == SIG_IGN)
            continue; /* nohup: stays ignored */
        installed[i] = sigaction(caught[i], &sa, NULL) == 0;
    }
}

void gs_tmpguard_uninstall(void)
{
    if (depth == 0 || --depth > 0)
        return;
    for (int i = 0; i < N_CAUGHT; i++)
        if (installed[i]) {
            sigaction(caught[i], &prev_action[i], NULL);
            installed[i] = 0;
        }
}

/* After a creation: a signal that came meanwhile ends the process now. */
static void created(void)
{
    creating = 0;
    if (pending)
        end_by(pending);
}

static void arm(const char *tmp)
{
    if (!tmp || strlen(tmp) >= sizeof tmp_path[0])
        return;
    for (int i = 0; i < GS_TMPGUARD_SLOTS; i++)
        if (!tmp_armed[i]) {
            memcpy(tmp_path[i], tmp, strlen(tmp) + 1);
            tmp_armed[i] = 1;
            return;
        }
}

gs_err gs_tmpguard_open(gs_wfile *wf, const char *path, gs_error *err)
{
    struct stat st; /* a FIFO or device is written into: its open may wait */
    creating = !(stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
    gs_err rc = gs_wfile_open(wf, path, err);
    if (rc == GS_OK)
        arm(wf->tmp);
    created();
    return rc;
}

/* Disarm the slot holding tmp (a name copied before it went). */
static void disarm_name(const char *tmp)
{
    for (int i = 0; tmp[0] && i < GS_TMPGUARD_SLOTS; i++)
        if (tmp_armed[i] && !strcmp(tmp_path[i], tmp))
            tmp_armed[i] = 0;
}

/* wf's temporary name into buf (empty when none or too long). */
static void tmp_name(const gs_wfile *wf, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (wf->tmp && strlen(wf->tmp) < cap)
        memcpy(buf, wf->tmp, strlen(wf->tmp) + 1);
}

gs_err gs_tmpguard_commit(gs_wfile *wf, gs_error *err)
{
    char tmp[PATH_MAX + 32];
    tmp_name(wf, tmp, sizeof tmp);
    gs_err rc = gs_wfile_commit(wf, err); /* a signal during it: the run was cut short */
    disarm_name(tmp); /* renamed (a late signal unlinks a name that is gone), or removed */
    return rc;
}

void gs_tmpguard_abort(gs_wfile *wf)
{
    char tmp[PATH_MAX + 32];
    tmp_name(wf, tmp, sizeof tmp);
    gs_wfile_abort(wf); /* unlinked, then disarmed: a signal between finds nothing */
    disarm_name(tmp);
}

int gs_tmpguard_mkdtemp(char *templ)
{
    if (strlen(templ) >= sizeof dir_path || dir_armed) {
        errno = strlen(templ) >= sizeof dir_path ? ENAMETOOLONG : EBUSY;
        return -1;
    }
    creating = 1;
    const int made = mkdtemp(templ) != NULL;
    const int errnum = errno;
    if (made) {
        memcpy(dir_path, templ, strlen(templ) + 1);
        dir_armed = 1;
    }
    created();
    errno = errnum;
    return made ? 0 : -1;
}

void gs_tmpguard_rmdir(void)
{
    if (!dir_armed)
        return;
    remove_dir(dir_path);
    dir_armed = 0;
}
