/*
 * outfile.h -- the output files of the `gapsim` command (-o, --out,
 * --gaps-out, --series): atomic writes (fileio.h gs_wfile: a temporary file
 * "<path>.tmp.XXXXXX" beside the file, renamed over it at the end) whose
 * temporary files a signal does not leave behind. SIGINT (^C), SIGTERM,
 * SIGHUP and SIGPIPE unlink the temporary files open at that moment and end
 * the command by the same signal, default action restored (a shell's 130
 * for ^C, 143 for SIGTERM). SIGKILL cannot be caught: it leaves them.
 * A signal the caller ignores (nohup) stays ignored.
 */
#ifndef GC_OUTFILE_H
#define GC_OUTFILE_H

#include "fileio.h"

/* Install the handlers (main, once, before any output file is opened). */
void gc_catch_signals(void);

/* gs_wfile_open, its temporary file armed for the handler. GC_OK, or
 * GC_EFILE after "PROG: reason" on stderr (wf zeroed). */
int gc_out_open(const char *prog, const char *path, gs_wfile *wf);
/* gs_wfile_flush (the bytes written, errors reported; no commit):
 * GC_OK, or GC_EFILE after the message (the caller aborts). */
int gc_out_flush(const char *prog, gs_wfile *wf);
/* gs_wfile_commit, the temporary file disarmed. GC_OK, or GC_EFILE after
 * the message (nothing left behind). */
int gc_out_commit(const char *prog, gs_wfile *wf);
/* gs_wfile_abort, disarmed (a no-op on a zeroed or committed wf). */
void gc_out_abort(gs_wfile *wf);

#endif
