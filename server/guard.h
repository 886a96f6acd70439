/*
 * guard.h -- what every request must pass before it is routed.
 *
 * Owns, in the order they are checked (the first failure is answered and
 * the request goes no further):
 *   capacity   more open connections than --max-connections: 503 with
 *              Retry-After: 1 and Connection: close (MHD's own limit sits a
 *              reserve above, so the answer can still be sent);
 *   framing    two Content-Length headers, Content-Length with
 *              Transfer-Encoding, a Transfer-Encoding other than one
 *              "chunked" (RFC 9112 6.3: libmicrohttpd decodes no other and
 *              would wait for the body's end for ever), a NUL (%00) in the
 *              path or a query key or value ("%2500", an encoded "%00", is
 *              none), more than GSD_GUARD_MAX_ARGS query parameters, a query
 *              parameter given twice: 400 naming it;
 *   host       the Host header must be an IP literal, localhost, or a name
 *              given with --allow-host ("*": any): a DNS-rebinding page
 *              cannot reach the daemon through its own name (403);
 *   origin     a write (POST, PUT, PATCH, DELETE) carrying an Origin header
 *              must come from the daemon's own origin (the Host it was sent
 *              to): another site's page cannot post to it (CSRF, 403);
 *   token      with --token-file, every request but /healthz and the static
 *              page needs "Authorization: Bearer <token>": 401 (with
 *              WWW-Authenticate) without a known token, 403 when a read
 *              token asks for a write. Tokens are compared in constant time.
 * Cost: O(headers + query parameters) per request.
 */
#ifndef GSD_GUARD_H
#define GSD_GUARD_H

#include "app.h"
#include "gs_error.h"
#include "http.h"

/* Read the token file (lines "read TOKEN" / "write TOKEN", '#' comments;
 * tokens of 16 to 256 printable characters, no blanks) into app. Errors
 * name the line (the tokens themselves are never printed). */
gs_err gsd_guard_load_tokens(gsd_app *app, const char *path, gs_error *err);
void gsd_guard_free_tokens(gsd_app *app);

/* The most query parameters a request may have (no endpoint takes 20). */
#define GSD_GUARD_MAX_ARGS 64

/* Where the percent-decoding of a request met a real %00 (http.c's unescape
 * callback, which leaves it as the three characters "%00"): the first and
 * the last decoded string holding one, and the last string decoded, which
 * is the path (libmicrohttpd decodes the query's keys and values first).
 * The pointers are those libmicrohttpd keeps for the path and the
 * arguments; all NULL: none. */
typedef struct {
    const char *first, *last, *path;
} gsd_nul_seen;

/* 1 if r may go on; 0 if an error was answered (r->resp set). nul: the
 * request's %00 notes (NULL: none). */
int gsd_guard(gsd_req *r, int live_connections, const gsd_nul_seen *nul);

#endif
