/*
 * fuzz_http_url.c -- fuzz target for a request's URL in the daemon
 * (server/http_impl.h): the percent-decoding libmicrohttpd calls back for
 * each query key and value and then the path (gsd_unescape, with the %00
 * notes the guard reads), and the routing of the decoded path through the
 * route table of server/api.c (gsd_route_find). The first byte picks the
 * method, the rest is the request target "path?key=value&key".
 * Properties:
 *   - no crash; decoding never lengthens a string, leaves no NUL inside it
 *     (the length returned is strlen), and gives what an independent decoder
 *     gives ("%00" kept as three characters, and noted; "%2500" is not);
 *   - the notes name the first and last string holding a real %00 and the
 *     path (the last string decoded);
 *   - routing is 0, 404 or 405 and deterministic; 404 for one method is 404
 *     for every method, with an empty Allow list; 405 has a non-empty one;
 *     HEAD finds the route GET finds;
 *   - a found route's method is the request's (or GET for HEAD), its
 *     pattern with {id} and "*" replaced by the id and rest rebuilds the
 *     path; the id is one non-empty segment shorter than GSD_ID_LEN, or "?"
 *     for a longer one; the id for messages is bounded.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"
#include "http_impl.h"

const char *const gs_fuzz_target = "http_url";
const char *const gs_fuzz_dict[] = {
    "/", "?", "&", "=", "%", "%00", "%2500", "%25", "%2F", "%2f", "%3F", "%20", "%ff", "%0",
    "%zz", "/v1/assemblies", "/v1/jobs/", "/results", "/summary", "/solve", "/clouds", "/gaps",
    "/geometry", "/web/", "/healthz", "/metrics", "/v1/results/", "a_0123456789abcdef",
    "j_0123456789abcdef", "r_0123456789abcdef", "..", "format=npy", "wait=1", NULL};

static const char *const methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
                                      "get"};

/* The decoder's specification, written independently of it. */
static size_t ref_decode(const char *in, char *out, int *nul)
{
    size_t w = 0;
    *nul = 0;
    for (size_t i = 0; in[i];) {
        if (in[i] == '%' && isxdigit((unsigned char)in[i + 1]) &&
            isxdigit((unsigned char)in[i + 2])) {
            char hex[3] = {in[i + 1], in[i + 2], 0};
            long v = strtol(hex, NULL, 16);
            if (v == 0) {
                *nul = 1;
                out[w++] = in[i++];
                continue;
            }
            out[w++] = (char)v;
            i += 3;
        } else {
            out[w++] = in[i++];
        }
    }
    out[w] = '\0';
    return w;
}

/* Decode s in place as libmicrohttpd does, checking it against ref_decode. */
static void decode(char *s, gsd_nul_seen *seen, int *nul)
{
    const size_t before = strlen(s);
    char *want = malloc(before + 1);
    GS_FUZZ_ASSERT(want != NULL);
    const size_t want_len = ref_decode(s, want, nul);
    const gsd_nul_seen old = *seen;
    const size_t n = gsd_unescape(s, seen);
    GS_FUZZ_ASSERT(n <= before && n == strlen(s) && n == want_len && !memcmp(s, want, n));
    GS_FUZZ_ASSERT(seen->path == s);
    GS_FUZZ_ASSERT(seen->first == (old.first ? old.first : *nul ? s : NULL));
    GS_FUZZ_ASSERT(seen->last == (*nul ? s : old.last));
    free(want);
}

static int same_hit(const gsd_route_hit *a, const gsd_route_hit *b)
{
    return a->route == b->route && !strcmp(a->id, b->id) && !strcmp(a->id_text, b->id_text) &&
           !strcmp(a->rest, b->rest);
}

static void check_route(const char *method, const char *url)
{
    gsd_route_hit hit, again;
    char allow[64], allow2[64];
    const unsigned code = gsd_route_find(method, url, &hit, allow, sizeof allow);
    GS_FUZZ_ASSERT(code == 0 || code == 404 || code == 405);
    GS_FUZZ_ASSERT(gsd_route_find(method, url, &again, allow2, sizeof allow2) == code);
    GS_FUZZ_ASSERT(!strcmp(allow, allow2) && same_hit(&hit, &again));
    GS_FUZZ_ASSERT(code == 404 ? !allow[0] : allow[0] != '\0');
    if (code == 404) {
        for (size_t m = 0; m < sizeof methods / sizeof *methods; m++)
            GS_FUZZ_ASSERT(gsd_route_find(methods[m], url, &again, allow2, sizeof allow2) == 404);
        return;
    }
    if (code != 0) {
        GS_FUZZ_ASSERT(hit.route == NULL);
        return;
    }
    const gsd_route *rt = hit.route;
    GS_FUZZ_ASSERT(rt >= gsd_routes && rt < gsd_routes + gsd_n_routes);
    GS_FUZZ_ASSERT(!strcmp(rt->method, method) ||
                   (!strcmp(method, "HEAD") && !strcmp(rt->method, "GET")));
    GS_FUZZ_ASSERT(strstr(allow, rt->method) != NULL);
    /* the pattern, {id} and "*" replaced, is the path */
    const char *u = url;
    for (const char *p = rt->pattern; *p;) {
        if (*p == '*') {
            GS_FUZZ_ASSERT(!strcmp(u, hit.rest) && strlen(hit.rest) < 256);
            u += strlen(u);
            break;
        }
        if (!strncmp(p, "{id}", 4)) {
            const size_t seg = strcspn(u, "/");
            GS_FUZZ_ASSERT(seg > 0);
            if (seg < GSD_ID_LEN)
                GS_FUZZ_ASSERT(strlen(hit.id) == seg && !strncmp(u, hit.id, seg));
            else
                GS_FUZZ_ASSERT(!strcmp(hit.id, "?"));
            GS_FUZZ_ASSERT(hit.id_text[0] && strlen(hit.id_text) < sizeof hit.id_text);
            u += seg;
            p += 4;
            continue;
        }
        GS_FUZZ_ASSERT(*p == *u);
        p++;
        u++;
    }
    GS_FUZZ_ASSERT(*u == '\0');
    if (!strstr(rt->pattern, "{id}"))
        GS_FUZZ_ASSERT(!hit.id[0] && !hit.id_text[0]);
    if (!strchr(rt->pattern, '*'))
        GS_FUZZ_ASSERT(!hit.rest[0]);
    if (!strcmp(method, "HEAD") || !strcmp(method, "GET")) { /* HEAD is answered as GET */
        const char *other = strcmp(method, "HEAD") ? "HEAD" : "GET";
        GS_FUZZ_ASSERT(gsd_route_find(other, url, &again, allow2, sizeof allow2) == 0);
        GS_FUZZ_ASSERT(same_hit(&hit, &again));
    }
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *method = methods[data[0] % (sizeof methods / sizeof *methods)];
    /* the target as a C string (MHD stops at a NUL byte of the request line) */
    char *target = malloc(size);
    GS_FUZZ_ASSERT(target != NULL);
    memcpy(target, data + 1, size - 1);
    target[size - 1] = '\0';
    char *query = strchr(target, '?');
    if (query)
        *query++ = '\0';
    gsd_nul_seen seen = {0};
    int nul, any_nul = 0;
    const char *first_nul = NULL, *last_nul = NULL;
    /* libmicrohttpd decodes the query's keys and values first, the path last */
    for (char *save = NULL, *kv = query ? strtok_r(query, "&", &save) : NULL; kv;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq++ = '\0';
        decode(kv, &seen, &nul);
        if (nul && !first_nul)
            first_nul = kv;
        if (nul)
            last_nul = kv;
        any_nul |= nul;
        if (eq) {
            decode(eq, &seen, &nul);
            if (nul && !first_nul)
                first_nul = eq;
            if (nul)
                last_nul = eq;
            any_nul |= nul;
        }
    }
    decode(target, &seen, &nul);
    if (nul && !first_nul)
        first_nul = target;
    if (nul)
        last_nul = target;
    any_nul |= nul;
    GS_FUZZ_ASSERT(seen.first == first_nul && seen.last == last_nul && seen.path == target);
    GS_FUZZ_ASSERT(!any_nul == !seen.first);
    check_route(method, target);
    free(target);
    return !any_nul;
}
