/*
 * spec.h -- what a solve or a cloud asks for, beyond the gap values.
 *
 * Owns: parsing the request options shared by POST .../solve and
 * POST .../clouds (solver, formulation, tolerance and method options, the
 * fastener pattern, permanently fastened pairs, warm start, returned fields,
 * whether the result cache may answer)
 * from a JSON object, and writing them back as JSON (a job keeps its options
 * in the store and re-reads them after a restart, through the same parser).
 * Query strings of .npy cloud uploads are turned into the same JSON object
 * first, so there is one parser. Every error names the field. A cloud may
 * carry a label (the user's name for it) and ask the server to generate its
 * gaps ("generate": {"count", "seed"}: gapsim-gen's gap cloud generator).
 */
#ifndef GSD_SPEC_H
#define GSD_SPEC_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "chain.h"
#include "ids.h"
#include "model.h"
#include "pattern.h"
#include "solver.h"

/* pattern kinds: those of runner/pattern.h */
#define GSD_PAT_NONE GS_PAT_NONE
#define GSD_PAT_ALL GS_PAT_ALL
#define GSD_PAT_LIST GS_PAT_LIST
#define GSD_PAT_FRACTION GS_PAT_FRACTION
enum { GSD_RET_W = 1, GSD_RET_LAMBDA = 2, GSD_RET_X = 4, GSD_RET_KKT = 8 };

/* A cloud's label: at most this many bytes of UTF-8 without control characters
 * (the UTF-8 of a new label: gsd_spec_check_new). */
#define GSD_LABEL_MAX 120
/* The largest seed of "generate" (an integer a JSON number holds exactly: 2^53). */
#define GSD_GEN_SEED_MAX 9007199254740992.0

/* The largest max_iter a request may ask (the methods' default is 10 m + 100). */
#define GSD_MAX_ITER_CAP 1000000

typedef struct {
    gs_solve_opts opts;          /* method, form, tol, max_iter, NPM / IPM options */
    int pattern;                 /* GSD_PAT_* */
    int n_list, *list;           /* installed fastener candidates (GSD_PAT_LIST) */
    double fraction;             /* GSD_PAT_FRACTION: spread pattern (runner/pattern.h) */
    int n_fixed, *fixed;         /* permanently fastened pairs */
    char warm[GSD_ID_LEN];       /* solve: result id to warm-start from ("" none) */
    char warm_job[GSD_ID_LEN];   /* cloud: gap i warm-starts from gap i of this job */
    char gaps_job[GSD_ID_LEN];   /* cloud: "gaps_from", the gaps are this job's ("" none) */
    unsigned ret;                /* GSD_RET_* fields returned by a solve */
    double timeout_s;            /* per solve, s (0: the server's --default-timeout) */
    int no_cache;                /* "cache": false: solve even when the result cache holds the
                                    answer (the new result is stored, the newest for its key) */
    char label[GSD_LABEL_MAX + 1]; /* cloud: the user's name for the job ("" none) */
    gs_chain_mode chain;         /* cloud: chained warm starts (runner/chain.h; default off) */
    int gen_count;               /* cloud: > 0 when the server generates the gaps */
    unsigned long long gen_seed; /* cloud: the generator's seed (with gen_count) */
    double gen_scatter;          /* cloud: the generator's scatter (with gen_count; 1: independent) */
    int resolved;                /* installed[] filled by gsd_spec_resolve */
    int n_installed, *installed; /* the candidates the pattern installs, ascending */
} gsd_spec;

/* Parse the options of obj (keys "g" and "gaps" are skipped: the caller
 * reads them; "installed" is an output, written by gsd_spec_write after
 * gsd_spec_resolve, and skipped too; any other unknown key is an error). n_fast, m bound the
 * indices. cloud: accept warm_start as a job id ("j_..."), else a result id. */
gs_err gsd_spec_parse(const cJSON *obj, int n_fast, int m, int cloud, gsd_spec *sp,
                      gs_error *err);
void gsd_spec_free(gsd_spec *sp);
/* Fill sp->installed with the candidates the pattern installs on mdl (any
 * pattern; the fastener_fraction one is core/interfaces.h). O(n_fast log n_fast). */
gs_err gsd_spec_resolve(gsd_spec *sp, const gs_model *mdl, gs_error *err);
/* The options as a JSON object (parseable by gsd_spec_parse); with
 * "installed": [...] when resolved. */
void gsd_spec_write(const gsd_spec *sp, gs_buf *b);
/* Pair-space load vector (m) and equality flags (m, zeroed first) of the
 * spec on a model. O(m + n_fast). */
gs_err gsd_spec_problem(const gsd_spec *sp, const gs_model *mdl, double *load, unsigned char *eq,
                        gs_error *err);
/* The checks of a new request that the options a stored job re-reads (with
 * gsd_spec_parse, written by an earlier version) need not pass: the label
 * is valid UTF-8 (else GS_ERR_INVALID naming "label"). */
gs_err gsd_spec_check_new(const gsd_spec *sp, gs_error *err);
/* The time limit of each solve: timeout_s as asked (at most max_s: else
 * GS_ERR_RANGE naming "timeout_s"), or def_s when the request gave none. */
gs_err gsd_spec_timeout(gsd_spec *sp, double def_s, double max_s, gs_error *err);
/* 1 if the spec asks for a method that takes seconds to minutes per solve on
 * large models (ipm, npm, lemke, ref; gi and auto take milliseconds): such
 * interactive solves run in the pool's slow lane (pool.h). */
int gsd_spec_is_slow(const gsd_spec *sp);
/* 1 if the spec installs no fastener and fixes no pair. */
int gsd_spec_is_plain(const gsd_spec *sp);

#endif
