/*
 * http_impl.h -- the parts of the HTTP layer behind http.h, private to
 * http.c, http_body.c and hangup.c; the request-side parsers among them are
 * pure functions of strings, so that their fuzz targets run the daemon's own
 * code (tests/fuzz/fuzz_http_url.c, fuzz_http_body.c).
 */
#ifndef GSD_HTTP_IMPL_H
#define GSD_HTTP_IMPL_H

#include "guard.h"
#include "http.h"

/* A request's body, as libmicrohttpd hands it over: begin on the first
 * call (decides the kind, or answers 413 / 415), each chunk, end when the
 * upload is complete (closes and fsyncs staging files). */
void gsd_body_begin(gsd_req *r);
void gsd_body_chunk(gsd_req *r, const char *data, size_t size);
void gsd_body_end(gsd_req *r);

/* Percent-decoding of a request's path or a query key or value in place
 * (libmicrohttpd's unescape callback), except that %00 stays as the three
 * characters "%00": a NUL must not cut the path short ("/web/app.js%00.html"
 * is not app.js). A string holding a real %00 is noted in seen (NULL: no
 * notes) as gsd_nul_seen says; a "%00" decoded from "%2500" is not one.
 * Returns the new length. Never lengthens s. O(len). */
size_t gsd_unescape(char *s, gsd_nul_seen *seen);

/* A route found for a request: the gsd_routes entry, the {id} path segment
 * ("" if none; "?" if too long to be an id), the same for messages (an
 * over-long one clipped, "..."), the path below a trailing "*" (/web/). */
typedef struct {
    const gsd_route *route;
    char id[GSD_ID_LEN];
    char id_text[48];
    char rest[256];
} gsd_route_hit;

/* The route of method + url (decoded) in gsd_routes: 0 found (hit set), 404
 * unknown path, 405 wrong method. allow (cap bytes): the methods the path
 * takes, ", "-separated in table order, GET followed by HEAD (the 405's Allow
 * header). O(routes x length of url). */
unsigned gsd_route_find(const char *method, const char *url, gsd_route_hit *hit, char *allow,
                        size_t cap);

/* What a request's headers say about its body (gsd_body_begin's decision):
 * a route accepting `bodies` (gsd_route.bodies), the Content-Type,
 * Content-Length and Transfer-Encoding values (NULL: absent). */
enum {
    GSD_BODY_TAKEN = 0,    /* kind is the body's (GSD_BODY_NONE: no body) */
    GSD_BODY_NOT_TAKEN,    /* 415: the route takes no body */
    GSD_BODY_BAD_TYPE,     /* 415: a Content-Type the route does not take */
    GSD_BODY_TOO_LARGE     /* 413: Content-Length above cap */
};
typedef struct {
    int verdict;            /* GSD_BODY_TAKEN ... */
    int kind;               /* GSD_BODY_*; -1 for an unknown Content-Type */
    unsigned long long len; /* Content-Length as strtoull reads it (0: none) */
    size_t cap;             /* the limit of that kind (max_body or max_upload) */
} gsd_body_plan;
gsd_body_plan gsd_body_plan_of(const char *content_type, const char *content_length,
                               const char *transfer_encoding, unsigned bodies, size_t max_body,
                               size_t max_upload);
/* 1 if the Content-Type value ct (NULL: none) is the media type what (no
 * case; parameters after ';' or ' ' allowed). */
int gsd_content_type_is(const char *ct, const char *what);
/* The staging file name of a multipart part other than "model": the last
 * '/'-separated component of its file name, else its field name (NULL if
 * both are NULL); usable only if gsd_part_name_safe says so (letters,
 * digits, '.', '_', '-', no leading dot, under 128 bytes). */
const char *gsd_part_name(const char *key, const char *filename);
int gsd_part_name_safe(const char *name);

/* The hang-up watch thread (gsd_req_watch): started with the daemon,
 * stopped (joined) before it stops. */
void gsd_hangup_start(void);
void gsd_hangup_stop(void);

#endif
