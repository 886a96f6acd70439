/*
 * guard.c -- capacity, framing, Host / Origin and token checks of every
 * request (see guard.h for the rules and their order).
 */
#include "guard.h"
#include "guard_impl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fe_text.h"
#include "fileio.h"

/* ---- tokens ------------------------------------------------------------------ */

gs_err gsd_guard_load_tokens(gsd_app *app, const char *path, gs_error *err)
{
    char *buf;
    size_t len;
    gs_err rc = gs_file_read_all(path, (size_t)1 << 20, &buf, &len, err);
    if (rc != GS_OK)
        return rc;
    rc = gsd_guard_parse_tokens(app, path, buf, len, err);
    free(buf);
    return rc;
}

gs_err gsd_guard_parse_tokens(gsd_app *app, const char *path, const char *buf, size_t len,
                              gs_error *err)
{
    gs_err rc = GS_OK;
    gs_text_cur c;
    gs_text_span line, f[3];
    gs_text_init(&c, buf, len);
    while (rc == GS_OK && gs_text_line(&c, &line)) {
        line = gs_text_trim(line);
        if (line.n == 0 || line.s[0] == '#')
            continue;
        int nf = 0; /* "scope token", blank separated */
        size_t k = 0;
        while (k < line.n && nf < 3) {
            while (k < line.n && (line.s[k] == ' ' || line.s[k] == '\t'))
                k++;
            size_t s = k;
            while (k < line.n && line.s[k] != ' ' && line.s[k] != '\t')
                k++;
            if (k > s)
                f[nf++] = (gs_text_span){line.s + s, k - s};
        }
        int scope = nf >= 1 && gs_text_is_word(f[0], "read")    ? 'r'
                    : nf >= 1 && gs_text_is_word(f[0], "write") ? 'w'
                                                                : 0;
        int ok = nf == 2 && scope && f[1].n >= 16 && f[1].n <= 256;
        for (size_t i = 0; ok && i < f[1].n; i++)
            ok = isgraph((unsigned char)f[1].s[i]);
        if (!ok) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "token-file", "%s: line %ld: expected \"read "
                           "TOKEN\" or \"write TOKEN\" with a token of 16 to 256 printable "
                           "characters", path, c.line);
            break;
        }
        gsd_token *t = realloc(app->tokens, sizeof *t * (size_t)(app->n_tokens + 1));
        if (!t) {
            rc = gs_errorf(err, GS_ERR_NOMEM, "token-file", "out of memory");
            break;
        }
        app->tokens = t;
        t[app->n_tokens].scope = (char)scope;
        memcpy(t[app->n_tokens].value, f[1].s, f[1].n);
        t[app->n_tokens].value[f[1].n] = '\0';
        app->n_tokens++;
    }
    if (rc == GS_OK && app->n_tokens == 0)
        rc = gs_errorf(err, GS_ERR_FORMAT, "token-file", "%s holds no token", path);
    if (rc != GS_OK)
        gsd_guard_free_tokens(app);
    return rc;
}

void gsd_guard_free_tokens(gsd_app *app)
{
    if (app->tokens)
        memset(app->tokens, 0, sizeof *app->tokens * (size_t)app->n_tokens);
    free(app->tokens);
    app->tokens = NULL;
    app->n_tokens = 0;
}

/* Equal strings, in time that depends only on the lengths. */
static int same_secret(const char *a, size_t na, const char *b, size_t nb)
{
    unsigned char d = na != nb;
    size_t n = na < nb ? na : nb;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* The scope of the request's bearer token: 'r', 'w', or 0. */
static int token_scope(const gsd_app *app, const char *auth)
{
    if (!auth || strncasecmp(auth, "Bearer ", 7))
        return 0;
    const char *t = auth + 7;
    while (*t == ' ')
        t++;
    size_t n = strlen(t);
    int scope = 0;
    for (int i = 0; i < app->n_tokens; i++) /* every token compared: no early exit */
        if (same_secret(t, n, app->tokens[i].value, strlen(app->tokens[i].value)))
            scope = app->tokens[i].scope;
    return scope;
}

static int is_write(const char *method)
{
    return strcmp(method, "GET") && strcmp(method, "HEAD") && strcmp(method, "OPTIONS");
}

/* ---- framing ------------------------------------------------------------------- */

void gsd_guard_frame_init(gsd_guard_frame *f, const gsd_nul_seen *nul)
{
    memset(f, 0, sizeof *f);
    f->nul_at = nul && nul->first != nul->path ? nul->first : NULL;
}

void gsd_guard_frame_header(gsd_guard_frame *f, const char *key, const char *value)
{
    if (!key)
        return;
    if (!strcasecmp(key, "Content-Length")) {
        if (f->n_cl++ && strcmp(f->cl, value ? value : ""))
            f->cl_conflict = 1;
        snprintf(f->cl, sizeof f->cl, "%s", value ? value : "");
    } else if (!strcasecmp(key, "Transfer-Encoding")) {
        /* only "chunked" is decoded: anything else, or a list ("gzip,
         * chunked"), or the header twice, is refused (RFC 9112 6.3) */
        if (f->n_te++ || !value || strcasecmp(value, "chunked"))
            f->te_bad = 1;
        if (!f->te[0] || (value && strcasecmp(value, "chunked")))
            snprintf(f->te, sizeof f->te, "%s", value ? value : "");
    }
}

void gsd_guard_frame_arg(gsd_guard_frame *f, const char *key, const char *value)
{
    if (!key)
        return;
    if (f->nul_at && (key == f->nul_at || value == f->nul_at) && !f->nul)
        f->nul = key;
    if (++f->n_args > GSD_GUARD_MAX_ARGS)
        return; /* refused: too many */
    for (int i = 0; i < f->n_names && !f->dup; i++)
        if (!strcmp(f->names[i], key))
            f->dup = key;
    f->names[f->n_names++] = key;
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    gsd_guard_frame_header(cls, key, value);
    return MHD_YES;
}

static enum MHD_Result scan_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    gsd_guard_frame_arg(cls, key, value);
    return MHD_YES;
}

/* ---- Host and Origin -------------------------------------------------------------- */

/* The host part of "host[:port]" / "[v6]:port" into out. */
static void host_only(const char *h, char *out, size_t cap)
{
    if (h[0] == '[') {
        const char *e = strchr(h, ']');
        size_t n = e ? (size_t)(e - h - 1) : strlen(h + 1);
        snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), h + 1);
        return;
    }
    const char *colon = strchr(h, ':');
    size_t n = colon ? (size_t)(colon - h) : strlen(h);
    snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), h);
}

static int host_allowed(const gsd_app *app, const char *host)
{
    char h[256];
    unsigned char ip[16];
    host_only(host, h, sizeof h);
    if (inet_pton(AF_INET, h, ip) == 1 || inet_pton(AF_INET6, h, ip) == 1 ||
        !strcasecmp(h, "localhost"))
        return 1;
    const char *list = app->o.allow_hosts;
    while (*list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if ((n == 1 && list[0] == '*') || (n == strlen(h) && !strncasecmp(list, h, n)))
            return 1;
        list += n + (end ? 1 : 0);
    }
    return 0;
}

/* Origin "scheme://host[:port]" names the Host the request was sent to. */
static int same_origin(const char *origin, const char *host)
{
    const char *p = strstr(origin, "://");
    return p && host && !strcasecmp(p + 3, host);
}

/* ---- the guard -------------------------------------------------------------------- */

static int is_public(const char *url)
{
    return !strcmp(url, "/healthz") || !strcmp(url, "/") || !strncmp(url, "/web/", 5);
}

gsd_guard_verdict gsd_guard_decide(const gsd_app *app, const gsd_guard_in *in,
                                   const gsd_guard_frame *f)
{
    if (in->live_connections > app->o.max_connections)
        return GSD_GUARD_OVERLOADED;
    const gsd_nul_seen *nul = in->nul;
    if (f->cl_conflict)
        return GSD_GUARD_CL_CONFLICT;
    if (f->n_cl && f->n_te)
        return GSD_GUARD_CL_AND_TE;
    if (f->te_bad)
        return GSD_GUARD_TE_BAD;
    if (nul && nul->first) /* a real %00 in the path (the last string decoded), else the query */
        return nul->last && nul->last == nul->path ? GSD_GUARD_NUL_PATH : GSD_GUARD_NUL_QUERY;
    if (f->n_args > GSD_GUARD_MAX_ARGS)
        return GSD_GUARD_TOO_MANY_ARGS;
    if (f->dup)
        return GSD_GUARD_DUP_ARG;
    const char *host = in->host, *origin = in->origin;
    if (host && !host_allowed(app, host))
        return GSD_GUARD_HOST;
    if (origin && is_write(in->method) && strcmp(origin, "null") && !same_origin(origin, host))
        return GSD_GUARD_CROSS_SITE;
    if (origin && is_write(in->method) && !strcmp(origin, "null"))
        return GSD_GUARD_OPAQUE_ORIGIN;
    if (app->n_tokens && !is_public(in->url)) {
        int scope = token_scope(app, in->authorization);
        if (!scope)
            return GSD_GUARD_NO_TOKEN;
        if (scope == 'r' && is_write(in->method))
            return GSD_GUARD_READ_ONLY;
    }
    return GSD_GUARD_PASS;
}

int gsd_guard(gsd_req *r, int live_connections, const gsd_nul_seen *nul)
{
    gsd_app *app = r->app;
    gsd_guard_frame f;
    gsd_guard_frame_init(&f, nul);
    gsd_guard_in in = {r->method, r->url, NULL, NULL, NULL, live_connections, nul};
    if (live_connections <= app->o.max_connections) { /* else answered without them */
        MHD_get_connection_values(r->conn, MHD_HEADER_KIND, scan_header, &f);
        MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, scan_arg, &f);
        in.host = gsd_header(r, "Host");
        in.origin = gsd_header(r, "Origin");
        in.authorization = gsd_header(r, "Authorization");
    }
    switch (gsd_guard_decide(app, &in, &f)) {
    case GSD_GUARD_PASS: return 1;
    case GSD_GUARD_OVERLOADED:
        gsd_reply_error(r, 503, "overloaded", "", "%d connections are open (the limit is %d): "
                        "retry shortly", live_connections, app->o.max_connections);
        if (r->resp) {
            MHD_add_response_header(r->resp, "Retry-After", "1");
            MHD_add_response_header(r->resp, "Connection", "close");
        }
        return 0;
    case GSD_GUARD_CL_CONFLICT:
    case GSD_GUARD_CL_AND_TE:
        gsd_reply_error(r, 400, "bad_request", "Content-Length", "%s",
                        f.cl_conflict ? "conflicting Content-Length headers"
                                      : "Content-Length together with Transfer-Encoding");
        return 0;
    case GSD_GUARD_TE_BAD:
        gsd_reply_error(r, 400, "bad_request", "Transfer-Encoding",
                        "Transfer-Encoding \"%s\"%s is not accepted: send the body with "
                        "Content-Length or Transfer-Encoding: chunked alone (RFC 9112 6.3)",
                        f.te, f.n_te > 1 ? " (the header given twice)" : "");
        return 0;
    case GSD_GUARD_NUL_PATH:
        gsd_reply_error(r, 400, "bad_request", "path", "a NUL byte (%%00) in the %s", "path");
        return 0;
    case GSD_GUARD_NUL_QUERY:
        gsd_reply_error(r, 400, "bad_request", f.nul ? f.nul : "query",
                        "a NUL byte (%%00) in the %s", "query");
        return 0;
    case GSD_GUARD_TOO_MANY_ARGS:
        gsd_reply_error(r, 400, "bad_request", "query", "%d query parameters, more than the "
                        "limit of %d", f.n_args, GSD_GUARD_MAX_ARGS);
        return 0;
    case GSD_GUARD_DUP_ARG:
        gsd_reply_error(r, 400, "bad_request", f.dup, "query parameter '%s' is given twice",
                        f.dup);
        return 0;
    case GSD_GUARD_HOST:
        gsd_reply_error(r, 403, "forbidden", "Host", "this server does not answer to that host "
                        "name (gapsimd --allow-host)");
        return 0;
    case GSD_GUARD_CROSS_SITE:
        gsd_reply_error(r, 403, "forbidden", "Origin", "a write from another site's page is "
                        "refused (cross-site request)");
        return 0;
    case GSD_GUARD_OPAQUE_ORIGIN:
        gsd_reply_error(r, 403, "forbidden", "Origin", "a write from an opaque origin is refused");
        return 0;
    case GSD_GUARD_NO_TOKEN:
        gsd_reply_error(r, 401, "unauthorized", "Authorization", "a bearer token is "
                        "required (Authorization: Bearer <token>)");
        if (r->resp)
            MHD_add_response_header(r->resp, "WWW-Authenticate", "Bearer realm=\"gapsimd\"");
        return 0;
    case GSD_GUARD_READ_ONLY:
        gsd_reply_error(r, 403, "forbidden", "Authorization", "this token may only read");
        return 0;
    }
    return 0;
}
