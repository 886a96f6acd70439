/*
 * guard_impl.h -- the guard's parsers and decision behind guard.h, as pure
 * functions of the request's strings: gsd_guard gathers the values from
 * libmicrohttpd and answers what gsd_guard_decide says, so the daemon runs
 * the code its fuzz target runs (tests/fuzz/fuzz_http_guard.c).
 */
#ifndef GSD_GUARD_IMPL_H
#define GSD_GUARD_IMPL_H

#include <stddef.h>

#include "guard.h"

/* The framing and query scan of one request: every header and every query
 * parameter (key, value; NULL value: none), in the order libmicrohttpd
 * holds them, through gsd_guard_frame_header / gsd_guard_frame_arg after
 * gsd_guard_frame_init. The key and value pointers of the query are kept
 * (dup, nul, names) and compared with nul's: they must outlive the scan and
 * be those the %00 notes were taken on. */
typedef struct {
    int n_cl, cl_conflict, n_te, te_bad;
    char cl[32], te[64];
    const char *nul_at;    /* the decoded string with a real %00 (gsd_nul_seen.first) */
    const char *dup;       /* a query parameter given twice */
    const char *nul;       /* a query parameter with %00 */
    const char *names[GSD_GUARD_MAX_ARGS]; /* query parameters seen */
    int n_names, n_args;
} gsd_guard_frame;

void gsd_guard_frame_init(gsd_guard_frame *f, const gsd_nul_seen *nul);
void gsd_guard_frame_header(gsd_guard_frame *f, const char *key, const char *value);
void gsd_guard_frame_arg(gsd_guard_frame *f, const char *key, const char *value);

/* The rest of a request the guard looks at: method and (decoded) path, the
 * first Host, Origin and Authorization headers (NULL: absent), the open
 * connections and the %00 notes (NULL: none). */
typedef struct {
    const char *method, *url;
    const char *host, *origin, *authorization;
    int live_connections;
    const gsd_nul_seen *nul;
} gsd_guard_in;

/* The first check a request fails, in guard.h's order, or PASS. */
typedef enum {
    GSD_GUARD_PASS = 0,
    GSD_GUARD_OVERLOADED,    /* 503 */
    GSD_GUARD_CL_CONFLICT,   /* 400 Content-Length */
    GSD_GUARD_CL_AND_TE,     /* 400 Content-Length */
    GSD_GUARD_TE_BAD,        /* 400 Transfer-Encoding */
    GSD_GUARD_NUL_PATH,      /* 400 path */
    GSD_GUARD_NUL_QUERY,     /* 400 the parameter (f->nul) or query */
    GSD_GUARD_TOO_MANY_ARGS, /* 400 query */
    GSD_GUARD_DUP_ARG,       /* 400 the parameter (f->dup) */
    GSD_GUARD_HOST,          /* 403 Host */
    GSD_GUARD_CROSS_SITE,    /* 403 Origin */
    GSD_GUARD_OPAQUE_ORIGIN, /* 403 Origin */
    GSD_GUARD_NO_TOKEN,      /* 401 Authorization */
    GSD_GUARD_READ_ONLY      /* 403 Authorization */
} gsd_guard_verdict;

/* The guard's decision (uses app->o.max_connections, allow_hosts and
 * app->tokens only). O(hosts + tokens x token length). */
gsd_guard_verdict gsd_guard_decide(const gsd_app *app, const gsd_guard_in *in,
                                   const gsd_guard_frame *f);

/* The token file's text buf[0..len) (not NUL-terminated), as
 * gsd_guard_load_tokens reads it; path only names it in errors. */
gs_err gsd_guard_parse_tokens(gsd_app *app, const char *path, const char *buf, size_t len,
                              gs_error *err);

#endif
