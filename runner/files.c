/*
 * files.c -- the files a run names, checked before anything is written
 * (runner.h gs_run_check_files): no output may be an input or another
 * output. gapsim-mpi once truncated its own --gaps file named as --out (its
 * workers then read zeros and the run "succeeded"); gapsim-batch wrote its
 * results over the gaps. One check for both.
 */
#include <sys/stat.h>

#include "fileio.h"
#include "runner.h"

typedef struct {
    const char *opt, *path;
} named;

#define N_IN 4
#define N_OUT 4

static int exists(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0;
}

/* An output the run replaces (a regular file, or a new name); a device or
 * a FIFO is written into and may well be named twice (/dev/null). */
static int replaced(const char *path)
{
    struct stat st;
    return path && (stat(path, &st) != 0 || S_ISREG(st.st_mode));
}

gs_err gs_run_check_files(const gs_run_files *f, gs_error *err)
{
    const int load = exists(f->factors); /* else the run saves them there */
    const named in[N_IN] = {{"MODEL.json", f->model}, {"--gaps", f->gaps},
                            {"--patterns", f->patterns}, {"--factors", load ? f->factors : NULL}};
    const named out[N_OUT] = {{"--out", f->out}, {"--out's completion map", f->side},
                              {"--summary", f->summary},
                              {"--factors", load ? NULL : f->factors}};
    for (int i = 0; i < N_OUT; i++) {
        if (!replaced(out[i].path))
            continue;
        for (int j = 0; j < N_IN + i; j++) { /* the inputs, then the outputs before it */
            const named *o = j < N_IN ? &in[j] : &out[j - N_IN];
            if ((j < N_IN ? exists(o->path) : replaced(o->path)) &&
                gs_file_same(out[i].path, o->path))
                return gs_errorf(err, GS_ERR_INVALID, "", "%s '%s' is the same file as %s '%s': "
                                 "the run would write over it; name another file", out[i].opt,
                                 out[i].path, o->opt, o->path);
        }
    }
    return GS_OK;
}
