/*
 * outfile.c -- output files of the `gapsim` command and the signals that
 * remove their temporary files (see outfile.h).
 */
#include "outfile.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The temporary files open at once: a download (or the .vtp of a series
 * and its .pvd, the JSON and the .npy of gapsim pair). */
#define TMP_SLOTS 4
static char tmp_path[TMP_SLOTS][PATH_MAX + 32];
static volatile sig_atomic_t tmp_armed[TMP_SLOTS];

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

/* Async-signal-safe: unlink of names copied beforehand, then the signal
 * again with its default action (delivered when this handler returns: the
 * signal is blocked while it runs), which ends the command. */
static void on_signal(int sig)
{
    for (int i = 0; i < TMP_SLOTS; i++)
        if (tmp_armed[i])
            (void)unlink(tmp_path[i]);
    signal(sig, SIG_DFL);
    raise(sig);
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

/* Block (how SIG_BLOCK) or restore the caught signals. */
static void block_caught(int how, sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
        sigaddset(&set, caught[i]);
    sigprocmask(how, how == SIG_BLOCK ? &set : old, how == SIG_BLOCK ? old : NULL);
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
    sigset_t old;
    block_caught(SIG_BLOCK, &old); /* no signal between the file's creation and its arming */
    gs_err rc = gs_wfile_open(wf, path, &e);
    if (rc == GS_OK)
        arm(wf->tmp);
    block_caught(SIG_SETMASK, &old);
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
