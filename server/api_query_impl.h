/*
 * api_query_impl.h -- the request-side parsers of api_jobs.c and
 * api_summary.c (an Accept header, ?fields=, ?pairs=) as pure functions of
 * the strings; the handlers call them with the values libmicrohttpd gives
 * and answer 422 on a refusal, the fuzz target with its own
 * (tests/fuzz/fuzz_http_query.c).
 */
#ifndef GSD_API_QUERY_IMPL_H
#define GSD_API_QUERY_IMPL_H

#include <stddef.h>

/* The q value an Accept header gives the media type `type` ("a/b"): that of
 * the most specific range that matches it (the type, "a/" and a star, the
 * star range; compared without case; with exact, only the type itself
 * counts), or -1 if none does. Parameters other than q are ignored; a q
 * that is not a number counts as 1, one above 1 as 1. O(length of the
 * header). */
double gsd_accept_q(const char *accept, const char *type, int exact);
/* 1 if the Accept header (NULL: none) names application/x-npy with a q
 * above 0 and at least that of application/json (GET .../results). */
int gsd_accepts_npy(const char *accept);

/* ?fields= of GET .../results (NULL: absent): the GSD_RET_* bits to render
 * (spec.h), GSD_RET_KKT always. 1, or 0 for a name other than w, lambda,
 * none (only the first 63 bytes are read). */
int gsd_parse_fields(const char *fields, unsigned *ret);

/* ?pairs= of GET .../summary (not NULL): bit i of *mask for the i-th
 * per-pair array named (mean, std, max, p95, share_above, lambda_mean,
 * opened), none for "" or "none". 1, or 0 with *bad, *bad_len the first
 * comma-separated name that is none of them. O(length). */
int gsd_parse_pairs(const char *pairs, unsigned *mask, const char **bad, size_t *bad_len);

#endif
