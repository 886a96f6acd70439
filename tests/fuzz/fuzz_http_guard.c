/*
 * fuzz_http_guard.c -- fuzz target for the checks every request passes
 * before it is routed (server/guard_impl.h): the Content-Length /
 * Transfer-Encoding framing, the query's %00s, count and duplicates, Host,
 * Origin and the bearer token, and the token file they are checked
 * against (gsd_guard_parse_tokens). The input is a request as text:
 *   METHOD TARGET            the first line ("POST /v1/assemblies?wait=1")
 *   Key: value               headers, up to an empty line ("Key" alone: no value)
 *   ...                      the rest: the token file
 * The query and path are decoded as libmicrohttpd does (gsd_unescape, the
 * %00 notes), the daemon's options chosen by the input's hash.
 * Properties:
 *   - no crash; the token file is accepted with 1 or more tokens of 16 to
 *     256 printable bytes, each of which is in the file, or refused with a
 *     format error and no tokens kept;
 *   - the decision is deterministic, and a read (GET) passes where the same
 *     write passes;
 *   - a request that passes has at most one Content-Length value, not with
 *     Transfer-Encoding, at most one Transfer-Encoding ("chunked"), no real
 *     %00, at most GSD_GUARD_MAX_ARGS query parameters and none twice, an
 *     Origin naming its Host on a write, and (with tokens, off the public
 *     paths) a bearer token of the file, a write one for a write;
 *   - every token of the file, as a bearer token, passes a read, and a
 *     write exactly when the last line holding it says write.
 */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gs_fuzz.h"
#include "guard_impl.h"
#include "http_impl.h"

const char *const gs_fuzz_target = "http_guard";
const char *const gs_fuzz_dict[] = {
    "GET ", "POST ", "DELETE ", "HEAD ", "PUT ", "\n", ": ", "Host: ", "Origin: ",
    "Authorization: Bearer ", "Content-Length: ", "Transfer-Encoding: chunked",
    "Transfer-Encoding: ", "gzip, chunked", "localhost", "127.0.0.1:8080", "[::1]:8080",
    "http://", "https://", "null", "%00", "%2500", "?a=1&a=2", "&", "=", "/healthz", "/web/",
    "/v1/assemblies", "read ", "write ", "# comment\n", "0123456789abcdef", "\t", NULL};

#define MAX_HEADERS 64
#define MAX_ARGS 200

typedef struct {
    const char *key, *value;
} kv;

/* The first header named key, without case (MHD_lookup_connection_value). */
static const char *lookup(const kv *h, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(h[i].key, key))
            return h[i].value;
    return NULL;
}

static gsd_guard_verdict decide(const gsd_app *app, const gsd_guard_in *in, const kv *h, int nh,
                                const kv *a, int na)
{
    gsd_guard_frame f;
    gsd_guard_frame_init(&f, in->nul);
    for (int i = 0; i < nh; i++)
        gsd_guard_frame_header(&f, h[i].key, h[i].value);
    for (int i = 0; i < na; i++)
        gsd_guard_frame_arg(&f, a[i].key, a[i].value);
    return gsd_guard_decide(app, in, &f);
}

static int is_write(const char *m)
{
    return strcmp(m, "GET") && strcmp(m, "HEAD") && strcmp(m, "OPTIONS");
}

/* The scope of the last token equal to t ('r', 'w'), 0 for none. */
static int scope_of(const gsd_app *app, const char *t)
{
    int s = 0;
    for (int i = 0; i < app->n_tokens; i++)
        if (!strcmp(app->tokens[i].value, t))
            s = app->tokens[i].scope;
    return s;
}

static void check_tokens(gsd_app *app, const char *buf, size_t len)
{
    gs_error e = {0};
    const gs_err rc = gsd_guard_parse_tokens(app, "tokens", buf, len, &e);
    if (rc) {
        GS_FUZZ_ASSERT(rc == GS_ERR_FORMAT && e.msg[0] && !strcmp(e.field, "token-file"));
        GS_FUZZ_ASSERT(app->tokens == NULL && app->n_tokens == 0);
        return;
    }
    GS_FUZZ_ASSERT(app->n_tokens >= 1 && app->tokens != NULL);
    for (int i = 0; i < app->n_tokens; i++) {
        const gsd_token *t = &app->tokens[i];
        const size_t n = strlen(t->value);
        GS_FUZZ_ASSERT((t->scope == 'r' || t->scope == 'w') && n >= 16 && n <= 256);
        for (size_t k = 0; k < n; k++)
            GS_FUZZ_ASSERT(t->value[k] > ' ' && t->value[k] < 127);
        GS_FUZZ_ASSERT(memmem(buf, len, t->value, n) != NULL);
        /* the token as a bearer token, alone */
        char auth[300];
        snprintf(auth, sizeof auth, "Bearer %s", t->value);
        gsd_guard_in in = {"GET", "/v1/jobs", NULL, NULL, auth, 0, NULL};
        GS_FUZZ_ASSERT(decide(app, &in, NULL, 0, NULL, 0) == GSD_GUARD_PASS);
        in.method = "DELETE";
        const gsd_guard_verdict v = decide(app, &in, NULL, 0, NULL, 0);
        GS_FUZZ_ASSERT(v == (scope_of(app, t->value) == 'w' ? GSD_GUARD_PASS
                                                             : GSD_GUARD_READ_ONLY));
    }
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    static const char *const allow_hosts[] = {"", "*", "gapsim.example,box", "box,*", ","};
    static gsd_app app;
    const uint32_t hash = gs_fuzz_hash(data, size);
    memset(&app, 0, sizeof app);
    app.o.max_connections = 100;
    snprintf(app.o.allow_hosts, sizeof app.o.allow_hosts, "%s", allow_hosts[hash % 5]);
    const int live = (hash >> 8) % 128 == 0 ? 101 : (int)((hash >> 8) % 100);

    char *text = malloc(size + 1);
    GS_FUZZ_ASSERT(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    const size_t text_len = size;
    /* the request line */
    char *line_end = memchr(text, '\n', size);
    char *rest = line_end ? line_end + 1 : text + size;
    if (line_end)
        *line_end = '\0';
    char *sp = strchr(text, ' ');
    const char *method = text;
    char root[] = "/"; /* decoded in place: writable */
    char *target = sp ? sp + 1 : root;
    if (sp)
        *sp = '\0';
    /* headers up to an empty line */
    kv h[MAX_HEADERS];
    int nh = 0;
    while (rest < text + text_len && *rest != '\n' && nh < MAX_HEADERS) {
        char *e = memchr(rest, '\n', (size_t)(text + text_len - rest));
        char *next = e ? e + 1 : text + text_len;
        if (e)
            *e = '\0';
        char *colon = strchr(rest, ':');
        if (colon) {
            *colon = '\0';
            const char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            h[nh++] = (kv){rest, v};
        } else if (*rest) {
            h[nh++] = (kv){rest, NULL};
        }
        rest = next;
    }
    if (rest < text + text_len && *rest == '\n')
        rest++;
    const size_t tok_len = (size_t)(text + text_len - rest);
    /* the token file: exactly its bytes (an over-read is an ASan report) */
    char *tokens = malloc(tok_len ? tok_len : 1);
    GS_FUZZ_ASSERT(tokens != NULL);
    memcpy(tokens, rest, tok_len);
    if (tok_len)
        check_tokens(&app, tokens, tok_len);

    /* the query's keys and values decoded first, the path last */
    char *query = strchr(target, '?');
    if (query)
        *query++ = '\0';
    gsd_nul_seen seen = {0};
    kv a[MAX_ARGS];
    int na = 0;
    for (char *save = NULL, *p = query ? strtok_r(query, "&", &save) : NULL; p && na < MAX_ARGS;
         p = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(p, '=');
        if (eq)
            *eq++ = '\0';
        gsd_unescape(p, &seen);
        if (eq)
            gsd_unescape(eq, &seen);
        a[na++] = (kv){p, eq};
    }
    gsd_unescape(target, &seen);

    gsd_guard_in in = {method, target, lookup(h, nh, "Host"), lookup(h, nh, "Origin"),
                       lookup(h, nh, "Authorization"), live, &seen};
    const gsd_guard_verdict v = decide(&app, &in, h, nh, a, na);
    GS_FUZZ_ASSERT(v >= GSD_GUARD_PASS && v <= GSD_GUARD_READ_ONLY);
    GS_FUZZ_ASSERT(decide(&app, &in, h, nh, a, na) == v);
    gsd_guard_in read = in;
    read.method = "GET";
    if (v == GSD_GUARD_PASS)
        GS_FUZZ_ASSERT(decide(&app, &read, h, nh, a, na) == GSD_GUARD_PASS);
    if (v == GSD_GUARD_NO_TOKEN || v == GSD_GUARD_READ_ONLY)
        GS_FUZZ_ASSERT(app.n_tokens > 0);
    if (v == GSD_GUARD_OVERLOADED)
        GS_FUZZ_ASSERT(live > app.o.max_connections);
    if (v == GSD_GUARD_PASS) {
        const char *cl = NULL;
        int n_te = 0;
        for (int i = 0; i < nh; i++) {
            if (!strcasecmp(h[i].key, "Content-Length")) {
                const char *val = h[i].value ? h[i].value : "";
                GS_FUZZ_ASSERT(!cl || !strcmp(cl, val));
                cl = val;
            }
            if (!strcasecmp(h[i].key, "Transfer-Encoding")) {
                GS_FUZZ_ASSERT(h[i].value && !strcasecmp(h[i].value, "chunked"));
                n_te++;
            }
        }
        GS_FUZZ_ASSERT(n_te <= 1 && !(cl && n_te));
        GS_FUZZ_ASSERT(!seen.first && na <= GSD_GUARD_MAX_ARGS);
        for (int i = 0; i < na; i++)
            for (int j = 0; j < i; j++)
                GS_FUZZ_ASSERT(strcmp(a[i].key, a[j].key));
        if (in.origin && is_write(method)) {
            const char *p = strstr(in.origin, "://");
            GS_FUZZ_ASSERT(p && in.host && !strcasecmp(p + 3, in.host));
        }
        const int public = !strcmp(target, "/healthz") || !strcmp(target, "/") ||
                           !strncmp(target, "/web/", 5);
        if (app.n_tokens && !public) {
            const char *auth = in.authorization;
            GS_FUZZ_ASSERT(auth && !strncasecmp(auth, "Bearer ", 7));
            auth += 7;
            while (*auth == ' ')
                auth++;
            const int scope = scope_of(&app, auth);
            GS_FUZZ_ASSERT(scope == 'w' || (scope == 'r' && !is_write(method)));
        }
    }
    gsd_guard_free_tokens(&app);
    free(tokens);
    free(text);
    return v == GSD_GUARD_PASS;
}
