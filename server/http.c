/*
 * http.c -- libmicrohttpd wiring, routing and responses (see http.h); the
 * request bodies are http_body.c's, the hang-up watch hangup.c's. Every
 * text answer is made valid UTF-8 here (text.h), whatever it echoes.
 */
#define _GNU_SOURCE
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "guard.h"
#include "http_impl.h"
#include "linalg.h"
#include "text.h"

static atomic_int live_requests;
/* Open connections (MHD_OPTION_NOTIFY_CONNECTION), for the guard's limit. */
static atomic_int live_connections;

/* A connection's header deadline and %00 notes (below, "the header deadline"). */
struct gsd_conn;
static struct gsd_conn *conn_of(struct MHD_Connection *conn);
static void conn_deadline(struct gsd_conn *c, double s);
static gsd_nul_seen conn_take_nul(struct gsd_conn *c);

/* ---- responses ------------------------------------------------------------ */

static void set_response(gsd_req *r, unsigned code, struct MHD_Response *resp)
{
    if (r->resp)
        MHD_destroy_response(r->resp);
    r->resp = resp;
    r->code = code;
}

/* 1 for the text answers (JSON, CSV, HTML, XML, Prometheus text). */
static int is_text(const char *content_type)
{
    return !strncmp(content_type, "application/json", 16) || !strncmp(content_type, "text/", 5) ||
           !strncmp(content_type, "application/xml", 15);
}

void gsd_reply(gsd_req *r, unsigned code, const char *content_type, gs_buf *b)
{
    /* stored bytes from before the checks, or a path or id echoed in a
     * message, must not make an answer that is not UTF-8 */
    if (is_text(content_type) && gsd_utf8_repair(b) != 0)
        b->oom = 1;
    size_t len = 0;
    char *p = gs_buf_take(b, &len);
    if (!p) {
        static const char oom[] =
            "{\"error\":{\"code\":\"out_of_memory\",\"message\":\"out of memory\",\"field\":\"\"}}\n";
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
        if (resp)
            MHD_add_response_header(resp, "Content-Type", "application/json");
        set_response(r, 500, resp);
        return;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, p, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(p);
        set_response(r, 500, NULL);
        return;
    }
    MHD_add_response_header(resp, "Content-Type", content_type);
    set_response(r, code, resp);
}

void gsd_reply_json(gsd_req *r, unsigned code, gs_buf *b)
{
    gs_buf_add(b, "\n", 1);
    gsd_reply(r, code, "application/json", b);
}

/* public: the message shown instead of msg, whose details (paths of the
 * data directory) go to the log only under an error id; NULL: msg is shown,
 * but for a 500 (a store or file-system failure), whose public message is
 * "the server could not complete the request". */
static void reply_error_v(gsd_req *r, unsigned code, const char *ecode, const char *field,
                          const char *msg, const char *public)
{
    gs_buf b = {0};
    char eid[16] = "", pub[320];
    if (code == 500 || public) {
        gsd_error_id(eid);
        gsd_log(r->app, 0, "error %s: %s %s -> %u %s%s%s: %s", eid, r->method, r->url, code,
                ecode, field && *field ? " at " : "", field ? field : "", msg ? msg : "");
        snprintf(pub, sizeof pub, "%s (error %s; the server log has the details)",
                 public ? public : "the server could not complete the request", eid);
        msg = pub;
    }
    gs_buf_puts(&b, "{\"error\":{\"code\":");
    gs_buf_json_str(&b, ecode);
    if (eid[0]) {
        gs_buf_puts(&b, ",\"error_id\":");
        gs_buf_json_str(&b, eid);
    }
    gs_buf_puts(&b, ",\"message\":");
    gs_buf_json_str(&b, msg);
    gs_buf_puts(&b, ",\"field\":");
    gs_buf_json_str(&b, field ? field : "");
    gs_buf_puts(&b, "}}");
    gsd_reply_json(r, code, &b);
}

static void reply_errorfv(gsd_req *r, unsigned code, const char *ecode, const char *field,
                          const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    reply_error_v(r, code, ecode, field, msg, NULL);
}

void gsd_reply_error(gsd_req *r, unsigned code, const char *ecode, const char *field,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    reply_errorfv(r, code, ecode, field, fmt, ap);
    va_end(ap);
}

unsigned gsd_http_status(gs_err code)
{
    switch (code) {
    case GS_OK: return 200;
    case GS_ERR_NOMEM: return 503;
    case GS_ERR_IO: return 500;
    case GS_ERR_FORMAT: return 400;
    case GS_ERR_LIMIT: return 413;
    default: return 422; /* well-formed, but the values are wrong */
    }
}

void gsd_reply_gs_error_code(gsd_req *r, unsigned code, const gs_error *e)
{
    reply_error_v(r, code, gs_err_name(e->code), e->field, e->msg[0] ? e->msg : gs_err_str(e->code),
                  NULL);
}

void gsd_reply_no_room(gsd_req *r, const char *field, const char *detail)
{
    reply_error_v(r, 507, "insufficient_storage", field, detail,
                  "the data directory's disk is full: the request's data could not be written; "
                  "free space there, or delete assemblies");
}

void gsd_reply_io_errorv(gsd_req *r, int errnum, const char *field, const char *fmt,
                         va_list ap)
{
    char msg[400], full[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    snprintf(full, sizeof full, "%s: %s", msg, strerror(errnum));
    if (gsd_no_room(errnum))
        gsd_reply_no_room(r, field, full);
    else
        gsd_reply_error(r, 500, "io_error", field, "%s", full);
}

void gsd_reply_io_error(gsd_req *r, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gsd_reply_io_errorv(r, errnum, "", fmt, ap);
    va_end(ap);
}

int gsd_no_room(int errnum)
{
    return errnum == ENOSPC || errnum == EDQUOT;
}

unsigned gsd_io_status(int errnum)
{
    return gsd_no_room(errnum) ? 507 : 500;
}

const char *gsd_io_code(int errnum)
{
    return gsd_no_room(errnum) ? "insufficient_storage" : "io_error";
}

void gsd_reply_gs_error(gsd_req *r, const gs_error *e)
{
    if (e->code == GS_ERR_IO && gsd_no_room(e->sys_errno)) /* a full disk */
        gsd_reply_no_room(r, e->field, e->msg);
    else
        gsd_reply_gs_error_code(r, gsd_http_status(e->code), e);
}

void gsd_reply_stream(gsd_req *r, unsigned code, const char *content_type, uint64_t size,
                      MHD_ContentReaderCallback cb, void *cls, MHD_ContentReaderFreeCallback fr)
{
    struct MHD_Response *resp = MHD_create_response_from_callback(size, 256 * 1024, cb, cls, fr);
    if (!resp) {
        if (fr)
            fr(cls);
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return;
    }
    MHD_add_response_header(resp, "Content-Type", content_type);
    set_response(r, code, resp);
}

int gsd_reply_file(gsd_req *r, const char *path, const char *content_type)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    const int errnum = fd < 0 || fstat(fd, &sb) != 0 ? errno : S_ISREG(sb.st_mode) ? 0 : EISDIR;
    if (errnum) {
        if (fd >= 0)
            close(fd);
        return errnum;
    }
    struct MHD_Response *resp = MHD_create_response_from_fd((uint64_t)sb.st_size, fd);
    if (!resp) {
        close(fd);
        gsd_reply_error(r, 503, "out_of_memory", "", "out of memory");
        return 0;
    }
    MHD_add_response_header(resp, "Content-Type", content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    set_response(r, 200, resp);
    return 0;
}

void gsd_reply_bad_query(gsd_req *r, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    reply_errorfv(r, 422, "invalid", key, fmt, ap);
    va_end(ap);
}

/* ---- suspend / resume ----------------------------------------------------- */

void gsd_req_suspend(gsd_req *r)
{
    r->suspended = 1;
    MHD_suspend_connection(r->conn);
}

void gsd_req_finish(gsd_req *r)
{
    atomic_store(&r->finished, 1);
    MHD_resume_connection(r->conn);
}

void gsd_req_abandon(gsd_req *r)
{
    gsd_req_unwatch(r);
    gsd_reply_error(r, 503, "unavailable", "", "the server is shutting down");
    gsd_req_finish(r);
}

/* ---- lookups -------------------------------------------------------------- */

const char *gsd_query(gsd_req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *gsd_header(gsd_req *r, const char *key)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

/* 1 if the ", "-separated list names holds key. */
static int listed(const char *names, const char *key)
{
    const size_t n = strlen(key);
    for (const char *p = names; *p;) {
        p += strspn(p, ", ");
        const size_t len = strcspn(p, ", ");
        if (len == n && n && !strncmp(p, key, n))
            return 1;
        p += len;
    }
    return 0;
}

typedef struct {
    const char *names;
    const char *other;
} other_scan;

static enum MHD_Result scan_other(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    other_scan *s = cls;
    (void)kind;
    (void)value;
    if (key && !listed(s->names, key)) {
        s->other = key;
        return MHD_NO; /* the first one is named */
    }
    return MHD_YES;
}

const char *gsd_query_other(gsd_req *r, const char *names)
{
    other_scan s = {names, NULL};
    MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, scan_other, &s);
    return s.other;
}

/* ---- routing -------------------------------------------------------------- */

/* Match url against pattern; "{id}" takes one segment (into id, and its
 * start and length into *seg, *seg_len), a trailing "*" the rest (into
 * rest). O(length of the url). */
static int match(const char *pattern, const char *url, char id[GSD_ID_LEN], char rest[256],
                 const char **seg, size_t *seg_len)
{
    const char *p = pattern, *u = url;
    while (*p) {
        if (*p == '*') {
            if (strlen(u) >= 256)
                return 0;
            snprintf(rest, 256, "%s", u);
            return 1;
        }
        if (!strncmp(p, "{id}", 4)) {
            const char *end = strchr(u, '/');
            size_t len = end ? (size_t)(end - u) : strlen(u);
            if (len == 0)
                return 0;
            *seg = u;
            *seg_len = len;
            if (len < GSD_ID_LEN) {
                memcpy(id, u, len);
                id[len] = '\0';
            } else {
                snprintf(id, GSD_ID_LEN, "?"); /* cannot be an id: the handler answers 404 */
            }
            u += end ? (size_t)(end - u) : strlen(u);
            p += 4;
            continue;
        }
        if (*p != *u)
            return 0;
        p++;
        u++;
    }
    return *u == '\0';
}

/* Add method to the comma list allow (the methods of a path, table order). */
static void allow_add(char *allow, size_t cap, const char *method)
{
    size_t n = strlen(allow);
    snprintf(allow + n, cap - n, "%s%s", n ? ", " : "", method);
}

/* The route of method + url (see http_impl.h). O(routes x length of url). */
unsigned gsd_route_find(const char *method, const char *url, gsd_route_hit *hit, char *allow,
                        size_t cap)
{
    int path_known = 0;
    allow[0] = '\0';
    memset(hit, 0, sizeof *hit);
    for (int i = 0; i < gsd_n_routes; i++) {
        char id[GSD_ID_LEN] = "", rest[256] = "";
        const char *seg = NULL;
        size_t seg_len = 0;
        if (!match(gsd_routes[i].pattern, url, id, rest, &seg, &seg_len))
            continue;
        path_known = 1;
        allow_add(allow, cap, gsd_routes[i].method);
        if (!strcmp(gsd_routes[i].method, "GET"))
            allow_add(allow, cap, "HEAD");
        /* HEAD is answered as GET (MHD sends the headers only) */
        if (strcmp(gsd_routes[i].method, method) &&
            (strcmp(method, "HEAD") || strcmp(gsd_routes[i].method, "GET")))
            continue;
        hit->route = &gsd_routes[i];
        memcpy(hit->id, id, sizeof hit->id);
        memcpy(hit->rest, rest, sizeof hit->rest);
        if (seg) { /* the segment as the client sent it, clipped for messages */
            char head[40];
            snprintf(head, sizeof head, "%.*s", (int)(seg_len < 39 ? seg_len : 39), seg);
            gsd_text_clip(hit->id_text, sizeof hit->id_text, head, 32);
        }
        return 0;
    }
    return path_known ? 405 : 404;
}

/* The route of the request (gsd_route_find), into r when found. */
static unsigned route(gsd_req *r, char *allow, size_t cap)
{
    gsd_route_hit hit;
    const unsigned code = gsd_route_find(r->method, r->url, &hit, allow, cap);
    if (code == 0) {
        r->route = hit.route;
        memcpy(r->id, hit.id, sizeof r->id);
        memcpy(r->rest, hit.rest, sizeof r->rest);
        memcpy(r->id_text, hit.id_text, sizeof r->id_text);
    }
    return code;
}

/* 1 if every query parameter of r is one its route takes; else 0 after
 * answering 422 naming the first other one: a parameter that would be
 * ignored (a typo, a filter of another endpoint) must not look accepted. */
static int query_taken(gsd_req *r)
{
    const char *names = r->route->query;
    const char *other = names ? gsd_query_other(r, names) : NULL;
    if (!other)
        return 1;
    gsd_reply_bad_query(r, other, "unknown query parameter '%s': %s %s takes %s", other,
                        r->route->method, r->route->pattern, *names ? names : "none");
    return 0;
}

/* ---- the access handler ------------------------------------------------- */

static enum MHD_Result queue(gsd_req *r)
{
    if (!r->resp) {
        gsd_reply_error(r, 500, "internal", "", "no response was produced");
        if (!r->resp)
            return MHD_NO;
    }
    gsd_metrics_http(&r->app->metrics, r->code);
    gsd_log(r->app, 2, "%s %s -> %u (%.2f ms)", r->method, r->url, r->code,
            1e3 * (gs_now() - r->t0));
    enum MHD_Result ok = MHD_queue_response(r->conn, r->code, r->resp);
    MHD_destroy_response(r->resp);
    r->resp = NULL;
    return ok;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    gsd_app *app = cls;
    gsd_req *r = *con_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        atomic_fetch_add(&live_requests, 1);
        r->app = app;
        r->conn = conn;
        r->url = url;
        r->method = method;
        r->fd = -1;
        r->t0 = gs_now();
        *con_cls = r;
        /* the headers are in: from now on the idle timeout, not the header one */
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
                                  (unsigned)app->o.conn_timeout);
        struct gsd_conn *c = conn_of(conn);
        conn_deadline(c, 0);
        const gsd_nul_seen nul = conn_take_nul(c);
        if (!gsd_guard(r, atomic_load(&live_connections), &nul))
            return queue(r);
        char allow[64];
        unsigned code = route(r, allow, sizeof allow);
        if (code == 404) {
            gsd_reply_error(r, 404, "not_found", "", "no such endpoint: %s", url);
            return queue(r);
        }
        if (code == 405) {
            gsd_reply_error(r, 405, "method_not_allowed", "",
                            "%s is not allowed on %s (allowed: %s)", method, url, allow);
            if (r->resp)
                MHD_add_response_header(r->resp, MHD_HTTP_HEADER_ALLOW, allow);
            return queue(r);
        }
        if (!query_taken(r))
            return queue(r); /* 422 before a byte of the body is stored */
        if (atomic_load(&app->stopping)) {
            gsd_reply_error(r, 503, "unavailable", "", "the server is shutting down");
            return queue(r);
        }
        gsd_body_begin(r);
        if (r->failed)
            return queue(r); /* 413 / 415 before reading the body */
        return MHD_YES;
    }
    if (r->suspended) {
        /* resumed by a worker */
        if (!atomic_load(&r->finished))
            return MHD_YES;
        r->suspended = 0;
        return queue(r);
    }
    if (*upload_data_size) {
        gsd_body_chunk(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    gsd_body_end(r);
    if (!r->failed)
        r->route->handler(r);
    if (r->suspended)
        return MHD_YES;
    return queue(r);
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    gsd_req *r = *con_cls;
    /* a kept-alive connection's next request: its headers within --timeout */
    conn_deadline(conn_of(conn), ((const gsd_app *)cls)->o.conn_timeout);
    if (!r)
        return;
    if (r->pp)
        MHD_destroy_post_processor(r->pp);
    if (r->fd >= 0)
        close(r->fd);
    if (r->file_path[0])
        unlink(r->file_path);
    if (r->stage_dir[0])
        gsd_rmtree(r->stage_dir); /* staged parts no handler adopted */
    if (r->resp)
        MHD_destroy_response(r->resp);
    if (r->ctx_free)
        r->ctx_free(r->ctx);
    const int big = r->body.cap >= ((size_t)8 << 20);
    gs_buf_free(&r->body);
    gsd_numarr_free(&r->nums);
    free(r);
    *con_cls = NULL;
    if (big)
        malloc_trim(0); /* give a large body's memory back to the system */
    atomic_fetch_sub(&live_requests, 1);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}


/* ---- the header deadline ------------------------------------------------- */

/* libmicrohttpd's timeouts are inactivity timeouts: a client that sends one
 * header byte now and then would keep its socket (and a place under
 * --max-connections) for ever. So every connection is registered here from
 * accept (MHD_CONNECTION_NOTIFY_STARTED) to close (NOTIFY_CLOSED, which
 * libmicrohttpd calls before it closes the socket) with a deadline for the
 * headers of its next request: --header-timeout after accept, --timeout after
 * each answer (a kept-alive connection). The access handler clears the
 * deadline when a request's headers are in (the body has --timeout, an
 * inactivity timeout); a sweeper thread shuts down (shutdown(2), under the
 * registry's lock, so the socket is still the connection's) the sockets past
 * their deadline, and libmicrohttpd then closes them as hung up. */
struct gsd_conn {
    struct gsd_conn *prev, *next; /* the registry (conns.mu) */
    int fd;
    double deadline;              /* gs_now() by which headers are due; 0: none (conns.mu) */
    /* real %00s met by unescape_cb for the request being parsed (the
     * connection's MHD thread only; see gsd_nul_seen) */
    gsd_nul_seen nul;
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct gsd_conn *head;
    int stop, running;
    pthread_t th;
} conns = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static struct gsd_conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The next request's headers are due by now + s (s <= 0: no deadline). */
static void conn_deadline(struct gsd_conn *c, double s)
{
    if (!c)
        return;
    pthread_mutex_lock(&conns.mu);
    c->deadline = s > 0 ? gs_now() + s : 0;
    pthread_mutex_unlock(&conns.mu);
}

static void conn_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
                    enum MHD_ConnectionNotificationCode toe)
{
    const gsd_app *app = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&live_connections, 1);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct gsd_conn *c = ci ? calloc(1, sizeof *c) : NULL;
        *socket_context = c; /* NULL (out of memory): only MHD's own timeout */
        if (!c)
            return;
        c->fd = ci->connect_fd;
        pthread_mutex_lock(&conns.mu);
        c->deadline = gs_now() + app->o.header_timeout;
        c->next = conns.head;
        if (conns.head)
            conns.head->prev = c;
        conns.head = c;
        pthread_mutex_unlock(&conns.mu);
        return;
    }
    atomic_fetch_sub(&live_connections, 1);
    struct gsd_conn *c = *socket_context;
    if (!c)
        return;
    pthread_mutex_lock(&conns.mu); /* the socket is still open: closed after this */
    if (c->prev)
        c->prev->next = c->next;
    else
        conns.head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&conns.mu);
    free(c);
    *socket_context = NULL;
}

/* The %00 notes of the request just parsed, cleared for the next one. */
static gsd_nul_seen conn_take_nul(struct gsd_conn *c)
{
    gsd_nul_seen n = {0};
    if (c) {
        n = c->nul;
        c->nul = (gsd_nul_seen){0};
    }
    return n;
}

/* Every 100 ms: shut down the sockets whose headers are overdue. O(open
 * connections) under the lock, no other work there. */
static void *sweep_thread(void *arg)
{
    const gsd_app *app = arg;
    pthread_mutex_lock(&conns.mu);
    while (!conns.stop) {
        const double now = gs_now();
        for (struct gsd_conn *c = conns.head; c; c = c->next)
            if (c->deadline > 0 && now >= c->deadline) {
                c->deadline = 0; /* once */
                shutdown(c->fd, SHUT_RDWR);
                gsd_log(app, 2, "closed a connection whose request headers were not "
                        "complete in time");
            }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&conns.cv, &conns.mu, &ts);
    }
    pthread_mutex_unlock(&conns.mu);
    return NULL;
}

static void sweep_start(gsd_app *app)
{
    pthread_mutex_lock(&conns.mu);
    conns.stop = 0;
    pthread_mutex_unlock(&conns.mu);
    conns.running = pthread_create(&conns.th, NULL, sweep_thread, app) == 0;
}

static void sweep_stop(void)
{
    if (!conns.running)
        return;
    pthread_mutex_lock(&conns.mu);
    conns.stop = 1;
    pthread_cond_signal(&conns.cv);
    pthread_mutex_unlock(&conns.mu);
    pthread_join(conns.th, NULL);
    conns.running = 0;
}

/* Percent-decoding of the path and query, except that %00 stays as the three
 * characters "%00" (gsd_unescape, http_impl.h); each string holding a real
 * %00 is noted in the connection's gsd_nul_seen (the guard answers 400). */
static size_t unescape_cb(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    struct gsd_conn *c = conn_of(conn);
    return gsd_unescape(s, c ? &c->nul : NULL);
}

size_t gsd_unescape(char *s, gsd_nul_seen *seen)
{
    int nul = 0;
    char *w = s;
    for (const char *p = s; *p;) {
        int hi, lo;
        if (p[0] == '%' && (hi = hexval(p[1])) >= 0 && (lo = hexval(p[2])) >= 0) {
            if ((hi | lo) == 0) {
                nul = 1;
                *w++ = *p++; /* stays "%00" */
                continue;
            }
            *w++ = (char)(16 * hi + lo);
            p += 3;
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
    if (seen) { /* the query's keys and values come first, the path last */
        if (nul && !seen->first)
            seen->first = s;
        if (nul)
            seen->last = s;
        seen->path = s;
    }
    return (size_t)(w - s);
}

/* libmicrohttpd's messages can quote a request: escaped like gsd_log's. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    const gsd_app *app = cls;
    if (app->o.log_level >= 1) {
        char line[1024], esc[4 * sizeof line];
        vsnprintf(line, sizeof line, fmt, ap);
        size_t n = strlen(line);
        while (n && line[n - 1] == '\n') /* its own line ends */
            line[--n] = '\0';
        gsd_log_escape(esc, sizeof esc, line);
        fprintf(stderr, "gapsimd: mhd: %s\n", esc);
    }
}

/* The PEM files of --tls-cert / --tls-key, kept for the daemon's life
 * (libmicrohttpd reads them at start; the key is wiped at stop). */
static char *tls_cert_pem, *tls_key_pem;
static size_t tls_key_len;
#define GSD_TLS_MAX_PEM ((size_t)1 << 20)

static gs_err load_tls(const gsd_app *app, gs_error *err)
{
    if (!MHD_is_feature_supported(MHD_FEATURE_TLS))
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "tls-cert",
                         "this libmicrohttpd has no TLS support (built without GnuTLS)");
    size_t len;
    gs_err rc = gs_file_read_all(app->o.tls_cert, GSD_TLS_MAX_PEM, &tls_cert_pem, &len, err);
    if (!rc)
        rc = gs_file_read_all(app->o.tls_key, GSD_TLS_MAX_PEM, &tls_key_pem, &tls_key_len, err);
    if (rc) {
        snprintf(err->field, sizeof err->field, "%s", tls_cert_pem ? "tls-key" : "tls-cert");
        return rc;
    }
    if (!strstr(tls_cert_pem, "-----BEGIN CERTIFICATE-----"))
        return gs_errorf(err, GS_ERR_FORMAT, "tls-cert", "%s is not a PEM certificate",
                         app->o.tls_cert);
    if (!strstr(tls_key_pem, "PRIVATE KEY-----"))
        return gs_errorf(err, GS_ERR_FORMAT, "tls-key", "%s is not a PEM private key",
                         app->o.tls_key);
    return GS_OK;
}

static void free_tls(void)
{
    if (tls_key_pem) /* the key does not linger in freed memory */
        explicit_bzero(tls_key_pem, tls_key_len);
    free(tls_key_pem);
    free(tls_cert_pem);
    tls_key_pem = tls_cert_pem = NULL;
}

gs_err gsd_http_start(gsd_app *app, gs_error *err)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)app->o.port);
    if (inet_pton(AF_INET, app->o.addr, &sa.sin_addr) != 1)
        return gs_errorf(err, GS_ERR_INVALID, "addr", "not an IPv4 address: %s", app->o.addr);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    /* HTTPS: the key and certificate as options of the array (empty without TLS) */
    struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}, {MHD_OPTION_END, 0, NULL},
                                    {MHD_OPTION_END, 0, NULL}};
    if (app->o.tls_cert[0]) {
        gs_err rc = load_tls(app, err);
        if (rc) {
            free_tls();
            return rc;
        }
        flags |= MHD_USE_TLS;
        tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, tls_key_pem};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, tls_cert_pem};
    }
    app->mhd = MHD_start_daemon(
        flags, (uint16_t)app->o.port, NULL, NULL, access_cb, app,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, app, /* first: it applies to the options after it */
        MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)app->o.http_threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)app->o.header_timeout,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)app->o.max_connections + GSD_CONN_RESERVE,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)app->o.max_per_ip,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(512 * 1024),
        MHD_OPTION_NOTIFY_CONNECTION, conn_cb, app, MHD_OPTION_UNESCAPE_CALLBACK, unescape_cb,
        app, MHD_OPTION_NOTIFY_COMPLETED, completed_cb, app, MHD_OPTION_ARRAY, tls,
        MHD_OPTION_END);
    if (!app->mhd) {
        free_tls();
        return gs_errorf(err, GS_ERR_IO, "port", "cannot listen on %s:%d (in use?%s)", app->o.addr,
                         app->o.port, app->o.tls_cert[0] ? " or the TLS key does not match the "
                                                           "certificate" : "");
    }
    gsd_hangup_start();
    sweep_start(app);
    return GS_OK;
}

int gsd_http_port(const gsd_app *app)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(app->mhd, MHD_DAEMON_INFO_BIND_PORT);
    return di ? (int)di->port : app->o.port;
}

void gsd_http_stop(gsd_app *app)
{
    gsd_hangup_stop();
    sweep_stop();
    if (!app->mhd)
        return;
    /* let answered requests drain (bounded), then close everything */
    for (int i = 0; i < 200 && atomic_load(&live_requests) > 0; i++)
        usleep(10000);
    MHD_stop_daemon(app->mhd);
    app->mhd = NULL;
    free_tls();
}
