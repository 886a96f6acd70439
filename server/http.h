/*
 * http.h -- the daemon's HTTP layer on libmicrohttpd.
 *
 * Owns: the MHD daemon (internal thread pool, epoll, suspend/resume), one
 * gsd_req per request (freed in the NOTIFY_COMPLETED callback, whichever way
 * the connection ends), request bodies (JSON into memory up to max_body; raw
 * .npy bodies streamed to a staging file; multipart uploads streamed part by
 * part into a staging directory, never held twice in memory), size and
 * content-type checks before any byte is stored (413 / 415 answered at once),
 * routing to the api_*.c handlers, JSON and error responses, and the hand-off
 * of long work to the worker pool: a handler suspends its connection, a worker
 * fills in the response and resumes it (gsd_req_finish).
 */
#ifndef GSD_HTTP_H
#define GSD_HTTP_H

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include <microhttpd.h>

#include "app.h"
#include "buf.h"
#include "gs_error.h"
#include "ids.h"
#include "json_numbers.h"

/* Connections MHD accepts above --max-connections: room to answer 503. */
#define GSD_CONN_RESERVE 64

enum { GSD_BODY_NONE = 0, GSD_BODY_JSON, GSD_BODY_NPY, GSD_BODY_MULTIPART, GSD_BODY_ARCHIVE };

typedef struct gsd_req gsd_req;
typedef void (*gsd_handler)(gsd_req *r);

typedef struct {
    const char *method;
    const char *pattern;   /* "/v1/assemblies/{id}/solve" */
    gsd_handler handler;
    unsigned bodies;       /* bit (1 << GSD_BODY_*) of accepted bodies, 0: none */
    /* The query parameters the route takes, ", "-separated ("": none); any
     * other is refused before the body is read (gsd_reply_bad_query). NULL:
     * not checked here: the page's own state (/, /web/), or options only
     * the handler knows (a cloud's .npy upload). */
    const char *query;
} gsd_route;

struct gsd_req {
    gsd_app *app;
    struct MHD_Connection *conn;
    const char *method;
    const char *url;
    const gsd_route *route;
    char id[GSD_ID_LEN];        /* the {id} path segment ("" if none; "?" if too long) */
    char id_text[48];           /* the same for messages: an over-long one clipped ("...") */
    char rest[256];             /* the path below /web/ for static files */
    double t0;                  /* monotonic start */
    /* body */
    int body_kind;
    size_t received;
    gs_buf body;               /* JSON body, or the "model" part of a multipart upload */
    gsd_numarr nums;           /* "g" / "gaps" of a JSON body, taken without a tree */
    char nums_key[8];          /* which of the two ("" none) */
    int fd;                     /* staging file of a raw .npy or archive body / current upload part */
    char file_path[PATH_MAX];   /* staging file of a raw .npy body */
    char stage_dir[PATH_MAX];   /* staging directory of a multipart upload */
    char part_name[128];        /* current multipart part */
    int n_parts;
    struct MHD_PostProcessor *pp;
    int failed;                 /* an error was answered early */
    /* response */
    unsigned code;
    struct MHD_Response *resp;
    int suspended;
    atomic_int finished;        /* set by a worker before resuming */
    /* handler state, released with the request */
    void *ctx;
    void (*ctx_free)(void *ctx);
};

/* Start / stop the HTTP daemon (app->mhd). Prints the bound URL. */
gs_err gsd_http_start(gsd_app *app, gs_error *err);
/* Stop accepting; suspended requests are answered 503 first. */
void gsd_http_stop(gsd_app *app);
int gsd_http_port(const gsd_app *app);

/* Responses (connection threads, or a worker before gsd_req_finish). The
 * body is taken from b (b is reset). */
void gsd_reply(gsd_req *r, unsigned code, const char *content_type, gs_buf *b);
void gsd_reply_json(gsd_req *r, unsigned code, gs_buf *b);
void gsd_reply_error(gsd_req *r, unsigned code, const char *ecode, const char *field,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* An API error with the status that fits its code (see gsd_http_status);
 * an I/O error of a full disk (e->sys_errno ENOSPC or EDQUOT) is 507
 * insufficient_storage. */
void gsd_reply_gs_error(gsd_req *r, const gs_error *e);
/* 1 if errnum says the disk (or the user's quota) is full. */
int gsd_no_room(int errnum);
/* The status and code of a failed write with errno errnum: 507
 * insufficient_storage when there is no room, else 500 io_error. */
unsigned gsd_io_status(int errnum);
const char *gsd_io_code(int errnum);
/* A write that found no room: 507 insufficient_storage saying so; detail
 * (which may name paths of the data directory) goes to the log only, under
 * the error id the answer gives (as for a 500). */
void gsd_reply_no_room(gsd_req *r, const char *field, const char *detail);
/* A failed write's answer: "<fmt>: <strerror>" with a 500 io_error, or
 * gsd_reply_no_room when errnum says there is no room. */
void gsd_reply_io_error(gsd_req *r, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same naming field, from a va_list. */
void gsd_reply_io_errorv(gsd_req *r, int errnum, const char *field, const char *fmt,
                         va_list ap);
void gsd_reply_gs_error_code(gsd_req *r, unsigned code, const gs_error *e);
unsigned gsd_http_status(gs_err code);
/* Streamed response (large .npy downloads). */
void gsd_reply_stream(gsd_req *r, unsigned code, const char *content_type, uint64_t size,
                      MHD_ContentReaderCallback cb, void *cls, MHD_ContentReaderFreeCallback fr);

/* A regular file as the body (sent with sendfile): 0 once answered; else
 * the errno of a file that cannot be served (ENOENT missing, EISDIR not a
 * regular file) with nothing answered, so that the caller says what is
 * missing. */
int gsd_reply_file(gsd_req *r, const char *path, const char *content_type);
/* A query parameter the request may not have, or a value it may not take:
 * 422 invalid naming key. One status for every endpoint: a cloud's .npy
 * upload refuses an unknown option with it (a query option is a body
 * option there), and so do the others their unknown parameters. */
void gsd_reply_bad_query(gsd_req *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Long work: suspend before handing r to a worker; the worker calls
 * gsd_req_finish after replying. */
void gsd_req_suspend(gsd_req *r);
void gsd_req_finish(gsd_req *r);

/* Hang-up watch of a suspended request: MHD does not poll a suspended
 * connection, so a watcher thread polls the sockets of watched requests
 * every 50 ms for POLLRDHUP / POLLHUP / POLLERR and then sets *flag = 1 (a
 * solve's cancel flag: it stops at its next iteration). A client that
 * half-closes its socket while waiting counts as gone. Unwatch before
 * gsd_req_finish; after gsd_req_unwatch returns, the flag is not touched
 * again. gsd_http_cancel_watched sets every watched flag (shutdown). */
void gsd_req_watch(gsd_req *r, atomic_int *flag);
void gsd_req_unwatch(gsd_req *r);
void gsd_http_cancel_watched(void);
/* A suspended, watched request whose task will not run (its pool stops):
 * unwatched, answered 503 "the server is shutting down" and resumed. */
void gsd_req_abandon(gsd_req *r);

/* Query parameter or header (NULL if absent). */
const char *gsd_query(gsd_req *r, const char *key);
const char *gsd_header(gsd_req *r, const char *key);
/* The first query parameter of r that names does not list (", "-separated
 * names, as gsd_route.query), or NULL if there is none. O(query x names). */
const char *gsd_query_other(gsd_req *r, const char *names);

/* Route table (api.c) and the 404 / 405 logic (a 405 lists the path's
 * methods in its Allow header). */
extern const gsd_route gsd_routes[];
extern const int gsd_n_routes;

#endif
