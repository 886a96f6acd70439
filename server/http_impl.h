/*
 * http_impl.h -- the parts of the HTTP layer behind http.h, private to
 * http.c, http_body.c and hangup.c.
 */
#ifndef GSD_HTTP_IMPL_H
#define GSD_HTTP_IMPL_H

#include "http.h"

/* A request's body, as libmicrohttpd hands it over: begin on the first
 * call (decides the kind, or answers 413 / 415), each chunk, end when the
 * upload is complete (closes and fsyncs staging files). */
void gsd_body_begin(gsd_req *r);
void gsd_body_chunk(gsd_req *r, const char *data, size_t size);
void gsd_body_end(gsd_req *r);

/* The hang-up watch thread (gsd_req_watch): started with the daemon,
 * stopped (joined) before it stops. */
void gsd_hangup_start(void);
void gsd_hangup_stop(void);

#endif
