/*
 * http.h -- the `gapsim` command's HTTP client: one libcurl easy handle per
 * request to the daemon (--server / GAPSIM_SERVER), bodies from memory, from
 * a file (streamed) or multipart/form-data parts; answers into memory or, for
 * a successful answer, streamed into a FILE. Maps transport failures to
 * GC_ECONNECT and reports the daemon's JSON errors
 * ({"error": {"code", "message", "field"}}) as GC_ESERVER.
 */
#ifndef GC_HTTP_H
#define GC_HTTP_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli.h"

typedef struct {
    char *p;
    size_t len, cap;
} gc_buf;

/* One multipart part: a file streamed from path, or data[0..len) in memory. */
typedef struct {
    const char *name;     /* form field name */
    const char *filename; /* file name sent (NULL: none) */
    const char *path;     /* file to stream, or NULL */
    const char *data;
    size_t len;
    const char *type; /* Content-Type of the part, or NULL */
} gc_part;

/* What a download saw of a 2xx body as it passed (gc_download): its first
 * bytes and its size, for a check of the answer without reading the output
 * file again (a FIFO, /dev/stdout: it cannot be read back). */
typedef struct gc_peek {
    unsigned char *head;     /* the caller's buffer of cap bytes */
    size_t cap, len;         /* len: the first bytes kept (at most cap) */
    unsigned long long size; /* every byte of the body */
    /* called when the transfer is complete, before the file is committed:
     * GC_OK commits, another code (message printed) aborts it and is
     * gc_download's answer; NULL: no check */
    int (*check)(const char *prog, const struct gc_peek *p, void *ud);
    void *ud;
} gc_peek;

typedef struct {
    const char *method;       /* "GET", "POST", "DELETE" */
    const char *path;         /* "/v1/..." with its query string */
    const char *content_type; /* of body / body_file */
    const char *body;         /* in-memory body */
    size_t body_len;
    const char *body_file; /* or: a file streamed as the body */
    const gc_part *parts;  /* or: multipart/form-data parts */
    int n_parts;
    const char *accept; /* Accept header, or NULL */
    FILE *sink;         /* a 2xx answer's body goes here instead of memory */
    gc_peek *peek;      /* with sink: what went there (NULL: not kept) */
    long *status;       /* if set: the answer's HTTP status (0: none), for a caller of
                           gc_call_json that tells a 404 apart (deleted while waited for) */
} gc_req;

typedef struct {
    long status;   /* HTTP status (0 when no answer) */
    gc_buf body;   /* the answer (error answers always land here) */
    char ctype[128];
} gc_resp;

/* Append to a buffer (NUL-terminated after each append); -1 out of memory. */
int gc_buf_add(gc_buf *b, const void *p, size_t len);
void gc_buf_free(gc_buf *b);

/* Global init/cleanup of libcurl (main). */
void gc_http_init(void);
void gc_http_cleanup(void);

/* Perform the request. Returns GC_OK when the server answered (any status;
 * rs->status tells which), GC_ECONNECT when it could not be reached or the
 * transfer broke, GC_EUSAGE for a malformed server URL, GC_EFILE when a body
 * file cannot be read or the sink cannot be written; those print their
 * message (prefixed by prog) on stderr. rs is always initialized; free it
 * with gc_resp_free. */
int gc_http(const gc_ctx *cx, const char *prog, const gc_req *rq, gc_resp *rs);
void gc_resp_free(gc_resp *rs);

/* Report an error answer: "PROG: error CODE (HTTP S) at FIELD: MESSAGE" on
 * stderr, and with --json the server's body as is on stdout. Returns
 * GC_ESERVER. */
int gc_report_error(const gc_ctx *cx, const char *prog, const gc_resp *rs);

/* gc_http, then: a 2xx JSON answer parsed into *out (NULL for an empty
 * body), or the error reported (gc_report_error). Returns an exit code. raw
 * (may be NULL) receives the answer's bytes on success (caller frees), for
 * --json output as is. */
int gc_call_json(const gc_ctx *cx, const char *prog, const gc_req *rq, cJSON **out, gc_buf *raw);

/* gc_call_json, then the answer on stdout: its bytes as is with --json,
 * else print(cx, answer) for people. Returns an exit code. The shape of the
 * commands that only read and show (list, show, health, summary). */
typedef void (*gc_printer)(const gc_ctx *cx, const cJSON *answer);
int gc_call_print(const gc_ctx *cx, const char *prog, const gc_req *rq, gc_printer print);

/* GET path (Accept: accept, or none when NULL) into the file out, written
 * atomically (outfile.h: fileio.h gs_wfile, its temporary file removed by
 * a signal): on an error answer (reported), a broken transfer or a failed
 * peek->check the file is not created. peek (NULL: none) sees the body as
 * it passes. Returns an exit code. */
int gc_download(const gc_ctx *cx, const char *prog, const char *path, const char *accept,
                const char *out, gc_peek *peek);

/* Print a response body as is on stdout (with a final newline). */
void gc_print_body(const gc_buf *b);
/* 1 if a write to stdout has failed (ferror), the reason (errno just
 * after the failed write, else EIO) kept for gc_stdout_errno; else 0.
 * main turns a failed stdout into exit 5 (GC_EFILE). */
int gc_stdout_failed(void);
/* The reason kept by the first gc_stdout_failed that saw the failure (0:
 * none seen). */
int gc_stdout_errno(void);

/* URL-escape s into a malloc'ed string (NULL on failure). */
char *gc_escape(const char *s);
/* Append "SEP KEY=VALUE" to q, VALUE URL-escaped ("1e+20": its '+' would
 * read as a space); -1 out of memory. */
int gc_query_add(gc_buf *q, char sep, const char *key, const char *value);
/* The same with a number as the JSON body would carry it (%.17g). */
int gc_query_num(gc_buf *q, char sep, const char *key, double value);

/* Pause s seconds between two polls of the server. */
void gc_sleep(double s);

#endif
