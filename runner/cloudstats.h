/*
 * cloudstats.h -- statistics of a cloud's results, and their JSON: the body
 * of gapsimd's GET /v1/jobs/{id}/summary and of gapsim-mpi's summary file.
 *
 * Over the answers of a cloud (results of status optimal, "answers" in the
 * JSON; another status's w and lambda are an iterate or a proof of
 * infeasibility, no answer): per pair mean / std / max / p95 residual gap
 * and share above a threshold; per gap the largest residual (mean, median,
 * p95, max) and the share of gaps whose largest residual exceeds the
 * threshold; the mean contact force per pair; a histogram of the residual
 * gaps of open pairs (pairs in contact, lambda != 0 as n_act counts them,
 * counted apart); the distribution of n_act. Over every result ("count"):
 * solve times (log-spaced bins), iterations, counts by status, failures,
 * kkt_failed, by solver and of warm starts. A residual is above the
 * threshold when w > max(threshold, 1e-9 mm): at or below that floor it is
 * round-off of a closed pair. Given the initial gaps of each answer, pairs
 * that open under fastening by more than the threshold (w > g + threshold,
 * at least 1e-9 mm: prying) are counted per pair and per gap ("opened";
 * null when no answer had its gaps).
 * Use: gs_cstats_new, gs_cstats_add for every result (pass 1); if
 * gs_cstats_second_pass, gs_cstats_add2 for every result again in the same
 * order (pass 2); gs_cstats_json; gs_cstats_free.
 * Another threshold for the same results: gs_cstats_json leaves the
 * statistics finished (the kept values freed: O(m + k) memory); then
 * gs_cstats_threshold copies them with the threshold's counts at zero,
 * gs_cstats_add_threshold takes every result again (only w and g are read:
 * one O(m) loop per result, no sort, no selection), and gs_cstats_json
 * writes the same text as a full computation at that threshold.
 * Cost: O(k m) time. Memory: O(k m) when total m <= 16M values (exact p95 per
 * pair by selection), else a second pass and 256-bin per-pair histograms
 * (p95 to 1/256 of the pair's range; the JSON says which: p95_exact).
 */
#ifndef GS_CLOUDSTATS_H
#define GS_CLOUDSTATS_H

#include "buf.h"
#include "gs_error.h"

typedef struct {
    const double *w;        /* m residual gaps (NULL: no vectors; the result is skipped) */
    const double *lam;      /* m contact forces, or NULL (not stored) */
    const double *g;        /* m initial gaps, or NULL (unknown: "opened" not counted) */
    int m;
    double time;            /* s */
    int n_act, iterations, warm_used;
    int crossover;          /* GI relative finished (gs_solve_info.crossover) */
    int kkt_failed;         /* the KKT certificate does not pass at the solve's tol
                               (gs_kkt_pass), e.g. an answer the model's scale
                               leaves accurate to more than tol (docs/solvers.md) */
    const char *status;     /* gs_status_name: "optimal" is an answer, any other not */
    const char *method, *form;
} gs_cstats_row;

typedef struct gs_cstats gs_cstats;

/* total: results expected (decides exact or binned p95); threshold in mm,
 * >= 0 (else NULL, GS_ERR_INVALID naming "threshold"). */
gs_cstats *gs_cstats_new(int m, long long total, double threshold, int bins, gs_error *err);
void gs_cstats_free(gs_cstats *s);
/* Pass 1; GS_ERR_NOMEM when the kept values do not fit. */
gs_err gs_cstats_add(gs_cstats *s, const gs_cstats_row *r, gs_error *err);
int gs_cstats_second_pass(const gs_cstats *s);
void gs_cstats_add2(gs_cstats *s, const gs_cstats_row *r);
/* A copy of the finished statistics s (gs_cstats_json was called) for
 * another threshold; NULL with err (GS_ERR_INVALID when s is not finished,
 * GS_ERR_NOMEM). O(m + k). */
gs_cstats *gs_cstats_threshold(const gs_cstats *s, double threshold, gs_error *err);
/* Count a result again on such a copy (every result of pass 1, any order;
 * gs_cstats_json refuses with GS_ERR_INVALID when the number differs). */
void gs_cstats_add_threshold(gs_cstats *s, const gs_cstats_row *r);
/* Bytes held (for a cache's budget). */
size_t gs_cstats_bytes(const gs_cstats *s);
/* The summary object: {"job_id":..,"assembly_id":..,"status":..,"count":..,
 * "answers":..,"total":.., "m":.., ... } (docs/api.md,
 * schema/json/summary.schema.json). */
gs_err gs_cstats_json(gs_cstats *s, const char *job_id, const char *assembly_id,
                      const char *status, long long total, gs_buf *b, gs_error *err);

#endif
