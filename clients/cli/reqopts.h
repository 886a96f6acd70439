/*
 * reqopts.h -- the solve options shared by `gapsim solve` and `gapsim cloud
 * submit` (--solver, --formulation, --tol, --max-iter, --timeout, --fasteners,
 * --fraction, --fixed-pairs, --warm-start, --no-cache, and the methods' own --npm-linear,
 * --linesearch, --ipm-linear, --ipm-start): their option table entries,
 * help text, local checks (bad values are usage errors, exit 2) and their
 * encoding as JSON body members (solve) or as a query string (cloud .npy
 * upload).
 */
#ifndef GC_REQOPTS_H
#define GC_REQOPTS_H

#include <cjson/cJSON.h>

#include "http.h"

typedef struct {
    const char *solver, *formulation, *tol, *max_iter, *timeout, *fasteners, *fraction, *fixed,
        *warm, *npm_linear, *linesearch, *ipm_linear, *ipm_start;
    int no_cache; /* --no-cache: "cache": false */
} gc_solve_opts;

/* Option table entries for the fields of o (14 entries). */
#define GC_SOLVE_OPT_ENTRIES(o)                                                                   \
    {"--solver", NULL, &(o).solver, NULL}, {"--formulation", NULL, &(o).formulation, NULL},       \
        {"--tol", NULL, &(o).tol, NULL}, {"--max-iter", NULL, &(o).max_iter, NULL},               \
        {"--timeout", NULL, &(o).timeout, NULL},                                                  \
        {"--fasteners", NULL, &(o).fasteners, NULL}, {"--fraction", NULL, &(o).fraction, NULL},   \
        {"--fixed-pairs", NULL, &(o).fixed, NULL}, {"--warm-start", NULL, &(o).warm, NULL},      \
        {"--npm-linear", NULL, &(o).npm_linear, NULL},                                            \
        {"--linesearch", NULL, &(o).linesearch, NULL},                                            \
        {"--ipm-linear", NULL, &(o).ipm_linear, NULL},                                            \
        {"--ipm-start", NULL, &(o).ipm_start, NULL}, {"--no-cache", NULL, NULL, &(o).no_cache}

#define GC_SOLVE_OPT_HELP                                                                         \
    "  --solver S         auto (default), gi, lemke, npm, ipm, ref\n"                             \
    "  --formulation F    default, dual, relative, primal\n"                                      \
    "  --tol T            solver tolerance in (0, 1)\n"                                           \
    "  --max-iter N       iteration limit (0: the solver's default; at most 1000000)\n"          \
    "  --timeout S        time limit of the solve (cloud: of each gap), seconds\n"             \
    "  --fasteners P      all, none (default) or candidate indices i,j,...\n"                     \
    "  --fraction F       install round(F * n_fast) fasteners, evenly spaced (not with\n"         \
    "                     --fasteners)\n"                                                         \
    "  --fixed-pairs LIST pairs held closed (equalities), i,j,...\n"                           \
    "  --npm-linear L     npm: combined (default), chol, cg\n"                                    \
    "  --linesearch L     npm: exact (default), golden, armijo\n"                                 \
    "  --ipm-linear L     ipm: mixed (default), split, jacobi, direct\n"                          \
    "  --ipm-start S      ipm: auto (default), feasible, infeasible\n"                            \
    "  --no-cache         solve even when the server's result cache has the answer\n"             \
    "                     (to time or compare methods; docs/api.md)\n"

/* Check the values; GC_EUSAGE (reported) or GC_OK. */
int gc_solve_opts_check(const char *prog, const gc_solve_opts *o);
/* Add the given options to a JSON body; -1 out of memory. */
int gc_solve_opts_json(const gc_solve_opts *o, cJSON *obj);
/* Append "key=value" pairs ("&"-separated, starting with sep) to q. */
int gc_solve_opts_query(const gc_solve_opts *o, gc_buf *q, char sep);

#endif
