/*
 * pattern.h -- fastener patterns: which candidates a solve installs, as a
 * cloud request gives them to gapsimd (server/spec.c) and as a pattern sweep
 * file gives them to gapsim-mpi (docs/formats.md, "Pattern sweep files").
 *
 * Owns: the pattern of one solve (none, all, a list of candidate indices, or
 * a spread fraction, gen/generator.h gs_gen_pattern), the parser of index
 * lists and of the "fasteners" value, the installed flags of a pattern on a
 * model, and the sweep file: a JSON array of pattern objects
 *   [ {"fasteners": [0, 4, 9]}, {"fasteners": "all"}, {"fastener_fraction": 0.5}, {} ]
 * (an empty object installs nothing; one of the two keys per object; any
 * other key is an error naming it: "patterns[3].fasteners[2]").
 * Cost: O(n_fast) per pattern.
 */
#ifndef GS_PATTERN_H
#define GS_PATTERN_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "gs_error.h"
#include "model.h"

enum { GS_PAT_NONE = 0, GS_PAT_ALL, GS_PAT_LIST, GS_PAT_FRACTION };

typedef struct {
    int kind;          /* GS_PAT_* */
    int n_list, *list; /* GS_PAT_LIST: installed candidates */
    double fraction;   /* GS_PAT_FRACTION */
} gs_pattern;

/* An array of distinct integers in [0, hi) named key ("fasteners",
 * "patterns[2].fasteners"); *out malloc'ed. */
gs_err gs_json_index_list(const cJSON *v, const char *key, int hi, int **out, int *n,
                          gs_error *err);
/* The "fasteners" value: "all", "none" or an index list. */
gs_err gs_pattern_fasteners(const cJSON *v, const char *key, int n_fast, gs_pattern *p,
                            gs_error *err);
/* installed[0..n_fast) of a pattern on a model (zeroed first); the fraction
 * pattern is core/interfaces.h's gs_gen_pattern (its errors are returned). */
gs_err gs_pattern_installed(const gs_pattern *p, const gs_model *mdl, unsigned char *installed,
                            gs_error *err);
void gs_pattern_free(gs_pattern *p);

/* A sweep file's text: at most max patterns for a model with n_fast
 * candidates. *out (malloc'ed, n entries) is freed by gs_patterns_free. */
gs_err gs_patterns_parse(const char *text, size_t len, int n_fast, int max, gs_pattern **out,
                         int *n, gs_error *err);
gs_err gs_patterns_read(const char *path, int n_fast, int max, gs_pattern **out, int *n,
                        gs_error *err);
void gs_patterns_free(gs_pattern *p, int n);
/* Pair-space loads of n patterns on a model: *loads is n x m, malloc'ed. */
gs_err gs_patterns_loads(const gs_pattern *p, int n, const gs_model *mdl, double **loads,
                         gs_error *err);

#endif
