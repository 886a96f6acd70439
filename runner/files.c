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

/* The input at index j of the run's (the fixed ones, then the model's files). */
static named input(const gs_run_files *f, const named *fixed, int j)
{
    if (j < N_IN)
        return fixed[j];
    return (named){"a file of MODEL.json", f->model_files[j - N_IN]};
}

gs_err gs_run_check_files(const gs_run_files *f, gs_error *err)
{
    const int load = exists(f->factors); /* else the run saves them there */
    const named in[N_IN] = {{"MODEL.json", f->model}, {"--gaps", f->gaps},
                            {"--patterns", f->patterns}, {"--factors", load ? f->factors : NULL}};
    const named out[N_OUT] = {{"--out", f->out}, {"--out's completion map", f->side},
                              {"--summary", f->summary},
                              {"--factors", load ? NULL : f->factors}};
    const int n_in = N_IN + (f->model_files ? f->n_model_files : 0);
    for (int i = 0; i < N_OUT; i++) {
        if (!replaced(out[i].path))
            continue;
        for (int j = 0; j < n_in + i; j++) { /* the inputs, then the outputs before it */
            const named o = j < n_in ? input(f, in, j) : out[j - n_in];
            if ((j < n_in ? exists(o.path) : replaced(o.path)) &&
                gs_file_same(out[i].path, o.path))
                return gs_errorf(err, GS_ERR_INVALID, "", "%s '%s' is the same file as %s '%s': "
                                 "the run would write over it; name another file", out[i].opt,
                                 out[i].path, o.opt, o.path);
        }
    }
    return GS_OK;
}
