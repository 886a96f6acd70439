/*
 * runargs.c -- the option table of gapsim-batch and gapsim-mpi and its reader
 * (runargs.h).
 */
#include "runargs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numarg.h"
#include "runner.h"

typedef enum {
    O_HELP, O_PROGRESS, O_NO_PROGRESS, O_SHARED, O_FRESH, O_SYNC, /* flags */
    O_GAPS, O_OUT, O_SUMMARY, O_FACTORS, O_PATTERNS,               /* files */
    O_FRACTION, O_THRESHOLD, O_TOL, O_LIMIT, O_THREADS, O_WINDOW, O_CHUNK, O_BINS,
    O_METHOD, O_FORM, O_CHAIN
} opt_id;

#define BOTH (GS_RUNNER_BATCH | GS_RUNNER_MPI)

static const struct {
    const char *name;
    opt_id id;
    unsigned runners; /* gs_runner bits */
} opts[] = {
    {"-h", O_HELP, BOTH},
    {"--help", O_HELP, BOTH},
    {"--progress", O_PROGRESS, BOTH},
    {"--no-progress", O_NO_PROGRESS, BOTH},
    {"--shared-factors", O_SHARED, GS_RUNNER_MPI},
    {"--fresh", O_FRESH, GS_RUNNER_MPI},
    {"--sync", O_SYNC, GS_RUNNER_MPI},
    {"--gaps", O_GAPS, BOTH},
    {"--out", O_OUT, BOTH},
    {"--summary", O_SUMMARY, BOTH},
    {"--factors", O_FACTORS, BOTH},
    {"--patterns", O_PATTERNS, GS_RUNNER_MPI},
    {"--fraction", O_FRACTION, BOTH},
    {"--threshold", O_THRESHOLD, BOTH},
    {"--tol", O_TOL, BOTH},
    {"--limit", O_LIMIT, BOTH},
    {"--threads", O_THREADS, BOTH},
    {"--window", O_WINDOW, GS_RUNNER_BATCH},
    {"--chunk", O_CHUNK, GS_RUNNER_MPI},
    {"--bins", O_BINS, GS_RUNNER_MPI},
    {"--method", O_METHOD, BOTH},
    {"--form", O_FORM, BOTH},
    {"--chain", O_CHAIN, BOTH},
};
#define N_OPTS ((int)(sizeof opts / sizeof opts[0]))

void gs_run_args_defaults(gs_runner r, gs_run_args *a)
{
    (void)r; /* the same for both today */
    memset(a, 0, sizeof *a);
    gs_solve_default_opts(&a->sopts); /* method auto */
    a->threshold = 0.1;
    a->limit = -1;
    a->threads = 1;
    a->window = 64;
    a->chunk = 16;
    a->bins = 20;
    a->chain = GS_CHAIN_OFF;
}

/* The value v of option id into a: 0, or -1 with *what the expected value. */
static int set_value(gs_run_args *a, opt_id id, const char *v, const char **what)
{
    switch (id) {
    case O_GAPS: a->gaps = v; return 0;
    case O_OUT: a->out = v; return 0;
    case O_SUMMARY: a->summary = v; return 0;
    case O_FACTORS: a->factors = v; return 0;
    case O_PATTERNS: a->patterns = v; return 0;
    case O_FRACTION: *what = "a number in [0, 1]"; return gs_parse_double(v, 0, 1, &a->fraction);
    case O_THRESHOLD:
        *what = "a number >= 0 (mm)";
        return gs_parse_double(v, 0, HUGE_VAL, &a->threshold);
    case O_TOL: { /* (0, 1): the bounds themselves excluded */
        double t;
        *what = "a number in (0, 1)";
        if (gs_parse_double(v, 0, 1, &t) || !(t > 0 && t < 1))
            return -1;
        a->sopts.tol = t;
        return 0;
    }
    case O_LIMIT: *what = GS_GAP_LIMIT_WHAT; return gs_gap_limit_parse(v, &a->limit);
    case O_THREADS:
        *what = "a number of threads in [1, 1024]";
        return gs_parse_long(v, 1, 1024, &a->threads);
    case O_WINDOW: *what = "an integer in [1, 65536]"; return gs_parse_long(v, 1, 65536, &a->window);
    case O_CHUNK: *what = "an integer in [1, 1048576]"; return gs_parse_long(v, 1, 1 << 20, &a->chunk);
    case O_BINS: *what = "an integer in [1, 1000]"; return gs_parse_long(v, 1, 1000, &a->bins);
    case O_METHOD:
        *what = "a method: auto, gi, npm, ipm, lemke or ref";
        return gs_method_parse(v, &a->sopts.method);
    case O_FORM: *what = "a formulation: dual, relative or primal"; return gs_form_parse(v, &a->sopts.form);
    case O_CHAIN: *what = "off, auto or on"; return gs_chain_mode_parse(v, &a->chain);
    default: return -1; /* a flag: not reached */
    }
}

/* The flag id into a. */
static void set_flag(gs_run_args *a, opt_id id)
{
    switch (id) {
    case O_PROGRESS: a->progress = 1; break;
    case O_NO_PROGRESS: a->progress = 0; break;
    case O_SHARED: a->shared = 1; break;
    case O_FRESH: a->fresh = 1; break;
    case O_SYNC: a->sync = 1; break;
    default: break;
    }
}

/* What the runner needs besides well-formed values: NULL, or the message. */
static const char *missing(gs_runner r, const gs_run_args *a)
{
    if (!a->model)
        return "MODEL.json is missing";
    if (!a->gaps)
        return "--gaps is missing";
    if (r == GS_RUNNER_MPI && !a->out)
        return "--out is missing";
    if (a->patterns && a->fraction > 0)
        return "give --patterns or --fraction";
    if (a->shared && !a->factors)
        return "--shared-factors needs --factors FILE";
    return NULL;
}

int gs_run_args_parse(gs_runner r, int argc, char **argv, gs_run_args *a, char *msg, size_t cap)
{
    msg[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k = 0;
        while (k < N_OPTS && (!(opts[k].runners & r) || strcmp(s, opts[k].name)))
            k++;
        if (k == N_OPTS) {
            if (s[0] == '-')
                return gs_arg_msg(msg, cap, "unknown option '%s'", s);
            if (a->model)
                return gs_arg_msg(msg, cap, "unexpected argument '%s' (the model is '%s')", s,
                                  a->model);
            a->model = s;
            continue;
        }
        const opt_id id = opts[k].id;
        if (id == O_HELP) {
            a->help = 1;
            return 1;
        }
        if (id < O_GAPS) {
            set_flag(a, id);
            continue;
        }
        if (!v)
            return gs_arg_msg(msg, cap, "%s needs a value", s);
        const char *what = "";
        if (set_value(a, id, v, &what))
            return gs_arg_msg(msg, cap, "%s: '%s' is not %s", s, v, what);
        i++;
    }
    const char *bad = missing(r, a);
    if (bad)
        return gs_arg_msg(msg, cap, "%s", bad);
    gs_error e;
    if (gs_solve_validate_opts(&a->sopts, &e) != GS_OK)
        return gs_arg_msg(msg, cap, "--%s: %s", e.field, e.msg);
    return 0;
}
