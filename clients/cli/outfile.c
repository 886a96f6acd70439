/*
 * outfile.c -- output files of the `gapsim` command: atomic writes whose
 * temporary files a signal does not leave behind (core/tmpguard.h), with
 * the command's messages (see outfile.h).
 */
#include "outfile.h"

#include <stdio.h>

#include "cli.h"
#include "tmpguard.h"

void gc_catch_signals(void)
{
    gs_tmpguard_install();
}

/* GC_OK for GS_OK, else GC_EFILE after "PROG: reason" on stderr. */
static int reported(const char *prog, gs_err rc, const gs_error *e)
{
    if (rc == GS_OK)
        return GC_OK;
    fprintf(stderr, "%s: %s\n", prog, e->msg);
    return GC_EFILE;
}

int gc_out_open(const char *prog, const char *path, gs_wfile *wf)
{
    gs_error e;
    return reported(prog, gs_tmpguard_open(wf, path, &e), &e);
}

int gc_out_flush(const char *prog, gs_wfile *wf)
{
    gs_error e;
    return reported(prog, gs_wfile_flush(wf, &e), &e);
}

int gc_out_commit(const char *prog, gs_wfile *wf)
{
    gs_error e;
    return reported(prog, gs_tmpguard_commit(wf, &e), &e);
}

void gc_out_abort(gs_wfile *wf)
{
    gs_tmpguard_abort(wf);
}
