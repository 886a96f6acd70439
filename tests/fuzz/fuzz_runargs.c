/*
 * fuzz_runargs.c -- fuzz target for the command lines of the cloud runners
 * (runner/runargs.h: gs_run_args_parse, the one reader of gapsim-batch's and
 * gapsim-mpi's options). The input is the argv words, one a line
 * (fuzz_argv.h); the first byte picks the runner (even: gapsim-batch, odd:
 * gapsim-mpi) and is not a word. Nothing is read or written.
 * Properties:
 *   - no crash; the answer is 0 (go on), 1 (help) or 2 (usage, with a
 *     non-empty one-line message of printable bytes);
 *   - help only when -h or --help is a word;
 *   - accepted: every path points into a word (a value is a whole word); the
 *     model is the first word not starting with '-' that is not a value;
 *     the files the runner needs are there (model, gaps; gapsim-mpi: out);
 *     every number in its documented range (fraction [0, 1], threshold >= 0,
 *     tol (0, 1), limit -1 or [1, 2^31-1], threads [1, 1024], window
 *     [1, 65536], chunk [1, 2^20], bins [1, 1000]); the solver options pass
 *     gs_solve_validate_opts; the same words followed by an option of the
 *     other runner only (gapsim-batch: --chunk 4, gapsim-mpi: --window 4)
 *     are refused as an unknown option;
 *   - reading is deterministic (twice the same answer, message and values).
 */
#include <math.h>
#include <string.h>

#include "fuzz_argv.h"
#include "gs_fuzz.h"
#include "runargs.h"

const char *const gs_fuzz_target = "runargs";
const char *const gs_fuzz_dict[] = {
    "\n", "model.json", "--gaps", "--out", "--summary", "--factors", "--patterns", "--fraction",
    "--threshold", "--tol", "--limit", "--threads", "--window", "--chunk", "--bins", "--method",
    "--form", "--chain", "--progress", "--no-progress", "--shared-factors", "--fresh", "--sync",
    "-h", "--help", "auto", "gi", "npm", "ipm", "lemke", "ref", "dual", "relative", "primal",
    "off", "on", "none", "0", "1", "0.5", "-1", "1e-10", "1e999", "nan", "2147483648", "1048577",
    NULL};

static int has_word(const fz_argv *w, const char *s)
{
    for (int i = 1; i < w->argc; i++)
        if (!strcmp(w->argv[i], s))
            return 1;
    return 0;
}

/* 1 if p is a whole word argv[1..argc). */
static int is_word(const fz_argv *w, const char *p)
{
    for (int i = 1; i < w->argc; i++)
        if (w->argv[i] == p)
            return 1;
    return 0;
}

static void check_accepted(gs_runner r, const fz_argv *w, const gs_run_args *a)
{
    const char *paths[] = {a->model, a->gaps, a->out, a->summary, a->factors, a->patterns};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++)
        GS_FUZZ_ASSERT(!paths[k] || is_word(w, paths[k]));
    GS_FUZZ_ASSERT(a->model && a->model[0] != '-' && a->gaps);
    GS_FUZZ_ASSERT(r == GS_RUNNER_BATCH || a->out);
    GS_FUZZ_ASSERT(a->fraction >= 0 && a->fraction <= 1);
    GS_FUZZ_ASSERT(a->threshold >= 0 && isfinite(a->threshold));
    GS_FUZZ_ASSERT(a->sopts.tol > 0 && a->sopts.tol < 1);
    GS_FUZZ_ASSERT(a->limit == -1 || (a->limit >= 1 && a->limit <= 2147483647L));
    GS_FUZZ_ASSERT(a->threads >= 1 && a->threads <= 1024);
    GS_FUZZ_ASSERT(a->window >= 1 && a->window <= 65536);
    GS_FUZZ_ASSERT(a->chunk >= 1 && a->chunk <= 1 << 20);
    GS_FUZZ_ASSERT(a->bins >= 1 && a->bins <= 1000);
    GS_FUZZ_ASSERT(a->progress == 0 || a->progress == 1);
    gs_error e;
    GS_FUZZ_ASSERT(gs_solve_validate_opts(&a->sopts, &e) == GS_OK);
    if (r == GS_RUNNER_BATCH)
        GS_FUZZ_ASSERT(!a->patterns && !a->shared && !a->fresh && !a->sync);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const gs_runner r = data[0] & 1 ? GS_RUNNER_MPI : GS_RUNNER_BATCH;
    fz_argv w;
    fz_argv_split(data + 1, size - 1, r == GS_RUNNER_MPI ? "gapsim-mpi" : "gapsim-batch", &w);
    gs_run_args a, b;
    char msg[512], msg2[512];
    gs_run_args_defaults(r, &a);
    gs_run_args_defaults(r, &b);
    const int rc = gs_run_args_parse(r, w.argc, w.argv, &a, msg, sizeof msg);
    GS_FUZZ_ASSERT(gs_run_args_parse(r, w.argc, w.argv, &b, msg2, sizeof msg2) == rc);
    GS_FUZZ_ASSERT(!memcmp(&a, &b, sizeof a) && !strcmp(msg, msg2));
    GS_FUZZ_ASSERT(rc == 0 || rc == 1 || rc == 2);
    if (rc == 1)
        GS_FUZZ_ASSERT(a.help && (has_word(&w, "-h") || has_word(&w, "--help")));
    if (rc == 2) {
        GS_FUZZ_ASSERT(msg[0] != '\0');
        for (const char *c = msg; *c; c++)
            GS_FUZZ_ASSERT((unsigned char)*c >= 0x20 && *c != 0x7f);
    }
    if (rc == 0 && w.argc + 2 <= FZ_ARGV_MAX) {
        check_accepted(r, &w, &a);
        /* the same words and an option of the other runner only: refused */
        char opt[] = "--chunk", val[] = "4", opt_b[] = "--window";
        w.argv[w.argc] = r == GS_RUNNER_BATCH ? opt : opt_b;
        w.argv[w.argc + 1] = val;
        w.argv[w.argc + 2] = NULL;
        gs_run_args_defaults(r, &b);
        GS_FUZZ_ASSERT(gs_run_args_parse(r, w.argc + 2, w.argv, &b, msg2, sizeof msg2) == 2);
        GS_FUZZ_ASSERT(strstr(msg2, "unknown option '--") != NULL);
        w.argv[w.argc] = NULL;
    } else if (rc == 0) {
        check_accepted(r, &w, &a);
    }
    fz_argv_free(&w);
    return rc == 0;
}
