/*
 * api_body_impl.h -- the gap parts of request bodies as pure functions:
 * the solve's "g" (api_solve.c), a JSON cloud's "gaps" and a staged .npy
 * cloud's shape and values (api_clouds.c), and the query string of an .npy
 * upload read as the JSON object of its options. The handlers call them and
 * answer their refusal (gsd_body_reply); the fuzz target with its own
 * (tests/fuzz/fuzz_http_gaps.c).
 */
#ifndef GSD_API_BODY_IMPL_H
#define GSD_API_BODY_IMPL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "gs_error.h"
#include "json_numbers.h"

/* A refusal: status 0 means gs is the error (answered as gsd_reply_gs_error
 * answers it: its code's status, or 507 for an I/O error of a full disk);
 * else status, code, field and msg are the answer. */
typedef struct {
    unsigned status;
    char code[32];
    char field[96];
    char msg[320];
    gs_error gs;
} gsd_body_err;

/* Fill err with a refusal of its own status (not 0); returns 0. */
int gsd_body_refuse(gsd_body_err *err, unsigned status, const char *code, const char *field,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

struct gsd_req;
/* Answer the refusal err (these two: api_solve.c). */
void gsd_body_reply(struct gsd_req *r, const gsd_body_err *err);

/* The solve's gap vector "g": m finite numbers into g[0..m). From nums when
 * the body's "g" was taken without a tree (gsd_api_body: nums_key "g"), else
 * from obj's member "g". 1, or 0 with err (422). */
int gsd_body_g(const gsd_numarr *nums, const cJSON *obj, int m, double *g, gsd_body_err *err);

/* A JSON cloud's "gaps": k x m finite numbers (1 <= k <= max_gaps), row-major.
 * From nums when taken without a tree (its array taken over: *out is
 * nums->v, which becomes NULL), else from obj's member "gaps" (*out
 * malloc'ed). 1, or 0 with err (413 past max_gaps, 503 out of memory, else
 * 422) and *out untouched. */
int gsd_body_gaps(gsd_numarr *nums, const cJSON *obj, int m, int max_gaps, double **out, int *k,
                  gsd_body_err *err);

/* A staged .npy cloud at path: k x m float64 (or a 1-D array of m: one gap),
 * C order when k > 1, k <= max_gaps, every value finite. 1, or 0 with err
 * (the header's error with field "body" and path scrubbed from its
 * message, 422 for the shape, order or a value, 413 past max_gaps). *k is
 * set either way once the header was read. O(k m) time, O(m) memory. */
int gsd_body_npy_gaps(const char *path, int m, int max_gaps, int *k, gsd_body_err *err);

/* One query value as the JSON value it stands for: a number when the whole
 * text s[0..n) is one JSON number token, else the text as a string. NULL
 * when out of memory. */
cJSON *gsd_query_value(const char *s, size_t n);

/* Add the query parameter key=value (value NULL: "?key" without '=', read
 * as "", and *bare_key set to key if still NULL) to obj, the JSON object of
 * an .npy upload's options: fasteners / fixed_pairs other than all / none
 * as a list of query values, tol, max_iter, fastener_fraction, timeout_s as
 * a query value, cache true/false/1/0 as a boolean, anything else as a
 * string. A NULL key is skipped. */
void gsd_query_opt_add(cJSON *obj, const char **bare_key, const char *key, const char *value);

#endif
