/*
 * tmpguard.h -- temporary files that a signal does not leave behind: the
 * one place that removes the "<path>.tmp.XXXXXX" of atomic writes
 * (fileio.h gs_wfile) and a staging directory when SIGINT, SIGTERM, SIGHUP
 * or SIGPIPE ends the process, for every program that writes outputs
 * (gapsim-batch, the gapsim client, gapsim-gen).
 *
 * The handler unlinks the armed files (names copied beforehand), removes
 * the armed directory with the files in it (system calls only:
 * async-signal-safe), then re-raises the signal with its default action,
 * so the process still ends by it (a shell's 130 for ^C, 143 for SIGTERM).
 * A signal the process ignores (nohup) stays ignored; SIGKILL cannot be
 * caught and leaves them.
 *
 * No signal is blocked: the handler may run on any thread (OpenBLAS's
 * workers exist from the program's start, and sigprocmask blocks for one
 * thread only), and an open that waits (a FIFO's, for its reader) stays
 * interruptible. While a temporary file is being created and armed
 * (gs_tmpguard_open, gs_tmpguard_mkdtemp) a signal only records itself, and
 * the creator ends the process once the name is armed.
 *
 * Single writer: the arming calls are made by one thread at a time.
 */
#ifndef GS_TMPGUARD_H
#define GS_TMPGUARD_H

#include "fileio.h"
#include "gs_error.h"

#define GS_TMPGUARD_SLOTS 16

/* Catch the signals (nested: the handlers stay until as many
 * gs_tmpguard_uninstall calls; the first install saves the actions the
 * last uninstall puts back). */
void gs_tmpguard_install(void);
void gs_tmpguard_uninstall(void);

/* gs_wfile_open with its temporary file armed (an existing FIFO or device
 * is written into: nothing to arm, and its open is not held). */
gs_err gs_tmpguard_open(gs_wfile *wf, const char *path, gs_error *err);
/* gs_wfile_commit / gs_wfile_abort, the temporary file disarmed (no-op
 * on a zeroed or committed wf). */
gs_err gs_tmpguard_commit(gs_wfile *wf, gs_error *err);
void gs_tmpguard_abort(gs_wfile *wf);

/* mkdtemp(templ) with the directory armed: a signal removes it and the
 * files in it. 0, or -1 with errno. */
int gs_tmpguard_mkdtemp(char *templ);
/* Remove the armed directory with its files, and disarm it. */
void gs_tmpguard_rmdir(void);

#endif
