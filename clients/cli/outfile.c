/*
 * outfile.c -- output files of the `gapsim` command and the signals that
 * remove their temporary files (see outfile.h).
 */
#include "outfile.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The temporary files open at once: a download (or the .vtp of a series
 * and its .pvd, the JSON and the .npy of gapsim pair). */
#define TMP_SLOTS 4
static char tmp_path[TMP_SLOTS][PATH_MAX + 32];
static volatile sig_atomic_t tmp_armed[TMP_SLOTS];
/* A temporary file is being created and armed: a signal then only records
 * itself (pending) and the opener ends the command once its file is armed.
 * No signal is blocked: the handler may run on any thread (OpenBLAS's
 * workers exist from the start), and an open that waits (a FIFO's, for
 * its reader) must stay interruptible. */
static volatile sig_atomic_t creating, pending;

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

/* Async-signal-safe: unlink of names copied beforehand, then the signal
 * again with its default action, which ends the command. */
static void end_by(int sig)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (tmp_armed[i])
            (void)unlink(tmp_path[i]);
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

void gc_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
        sigaddset(&sa.sa_mask, caught[i]); /* one handler at a time */
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
        struct sigaction old;
        if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue; /* nohup: stays ignored */
        sigaction(caught[i], &sa, NULL);
    }
}

static void arm(const char *tmp)
{
    if (!tmp || strlen(tmp) >= sizeof tmp_path[0])
        return;
    for (int i = 0; i < TMP_SLOTS; i++)
        if (!tmp_armed[i]) {
            memcpy(tmp_path[i], tmp, strlen(tmp) + 1);
            tmp_armed[i] = 1;
            return;
        }
}

static void disarm(const char *tmp)
{
    for (int i = 0; tmp && i < TMP_SLOTS; i++)
        if (tmp_armed[i] && !strcmp(tmp_path[i], tmp))
            tmp_armed[i] = 0;
}

int gc_out_open(const char *prog, const char *path, gs_wfile *wf)
{
    gs_error e;
    /* an existing FIFO or device is written into (no temporary file): its
     * open may wait for a reader, interruptible as any wait */
    struct stat st;
    const int direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
    creating = !direct;
    gs_err rc = gs_wfile_open(wf, path, &e);
    if (rc == GS_OK)
        arm(wf->tmp);
    creating = 0;
    if (pending) /* a signal came while the file was made: end now, the file removed */
        end_by(pending);
    if (rc != GS_OK) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return GC_EFILE;
    }
    return GC_OK;
}

int gc_out_flush(const char *prog, gs_wfile *wf)
{
    gs_error e;
    if (gs_wfile_flush(wf, &e) != GS_OK) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return GC_EFILE;
    }
    return GC_OK;
}

int gc_out_commit(const char *prog, gs_wfile *wf)
{
    gs_error e;
    char tmp[sizeof tmp_path[0]] = "";
    if (wf->tmp && strlen(wf->tmp) < sizeof tmp)
        memcpy(tmp, wf->tmp, strlen(wf->tmp) + 1);
    gs_err rc = gs_wfile_commit(wf, &e); /* a signal during it unlinks a name that is gone */
    disarm(tmp);
    if (rc != GS_OK) {
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return GC_EFILE;
    }
    return GC_OK;
}

void gc_out_abort(gs_wfile *wf)
{
    char tmp[sizeof tmp_path[0]] = "";
    if (wf->tmp && strlen(wf->tmp) < sizeof tmp)
        memcpy(tmp, wf->tmp, strlen(wf->tmp) + 1);
    gs_wfile_abort(wf); /* unlinked, then disarmed: a signal between finds nothing */
    disarm(tmp);
}
