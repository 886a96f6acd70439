/*
 * fuzz_http_body.c -- fuzz target for what a request's headers say about
 * its body (server/http_impl.h): the Content-Type against the kinds a route
 * takes, the Content-Length as strtoull reads it against the limits
 * (gsd_body_plan_of, gsd_content_type_is), and the staging file name of a
 * multipart part from its field and file names (gsd_part_name,
 * gsd_part_name_safe). The first byte holds the route's accepted kinds
 * (bits 1-4, as gsd_route.bodies) and which of Content-Type, Content-Length
 * and Transfer-Encoding are present (bits 5-7); the second which of the
 * part's field and file names are (bits 0-1); the rest is the five values,
 * one a line, in that order.
 * Properties:
 *   - no crash; the plan is deterministic;
 *   - no body (Content-Length absent or 0, no Transfer-Encoding) is taken
 *     whatever the route; a route that takes none refuses every other one;
 *   - a body taken is of a kind the route accepts, its Content-Type starts
 *     with a media type of that kind (no case) followed by the end, ';' or
 *     ' ', and its Content-Length is within that kind's limit; a 413 is a
 *     Content-Length above it;
 *   - a safe part name is a non-empty name under 128 bytes of letters,
 *     digits, '.', '_', '-' not starting with a dot (so never a path, "."
 *     or ".."), the last component of the file name when there is one.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gs_fuzz.h"
#include "http_impl.h"

const char *const gs_fuzz_target = "http_body";
const char *const gs_fuzz_dict[] = {
    "application/json", "application/x-npy", "application/octet-stream",
    "multipart/form-data; boundary=x", "application/x-tar", "application/gzip",
    "application/zip", "; charset=utf-8", ";", " ", "\n", "0", "1", "-1", "+1", " 5",
    "18446744073709551615", "18446744073709551616", "0x10", "chunked", "model", "gaps.npy",
    "../", "/", ".hidden", "a/b/", "..", NULL};

static const struct {
    const char *type;
    int kind;
} types[] = {{"application/json", GSD_BODY_JSON},
             {"application/x-npy", GSD_BODY_NPY},
             {"application/octet-stream", GSD_BODY_NPY},
             {"multipart/form-data", GSD_BODY_MULTIPART},
             {"application/x-tar", GSD_BODY_ARCHIVE},
             {"application/gzip", GSD_BODY_ARCHIVE},
             {"application/zip", GSD_BODY_ARCHIVE}};

static int is_type(const char *ct, const char *type)
{
    const size_t n = strlen(type);
    return !strncasecmp(ct, type, n) && (!ct[n] || ct[n] == ';' || ct[n] == ' ');
}

static int safe_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const unsigned bodies = data[0] & 0x1eu;
    char *text = malloc(size - 1);
    GS_FUZZ_ASSERT(text != NULL);
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';
    const char *v[5] = {NULL};
    char *p = text;
    for (int i = 0; i < 5; i++) { /* the values, one a line */
        v[i] = p;
        char *e = strchr(p, '\n');
        if (e) {
            *e = '\0';
            p = e + 1;
        } else {
            p += strlen(p);
        }
    }
    const char *ct = data[0] & 0x20 ? v[0] : NULL, *cl = data[0] & 0x40 ? v[1] : NULL,
               *te = data[0] & 0x80 ? v[2] : NULL;
    const size_t max_body = 1000, max_upload = (data[1] & 4) ? 1u << 20 : 10;

    const gsd_body_plan plan = gsd_body_plan_of(ct, cl, te, bodies, max_body, max_upload);
    const gsd_body_plan again = gsd_body_plan_of(ct, cl, te, bodies, max_body, max_upload);
    GS_FUZZ_ASSERT(!memcmp(&plan, &again, sizeof plan));
    GS_FUZZ_ASSERT(plan.len == (cl ? strtoull(cl, NULL, 10) : 0));
    const int has_body = (cl && plan.len > 0) || te;
    switch (plan.verdict) {
    case GSD_BODY_TAKEN:
        if (!has_body) {
            GS_FUZZ_ASSERT(plan.kind == GSD_BODY_NONE);
            break;
        }
        GS_FUZZ_ASSERT(plan.kind > GSD_BODY_NONE && plan.kind <= GSD_BODY_ARCHIVE);
        GS_FUZZ_ASSERT(bodies & (1u << plan.kind));
        GS_FUZZ_ASSERT(ct != NULL);
        {
            int found = 0;
            for (size_t i = 0; i < sizeof types / sizeof *types && !found; i++)
                if (is_type(ct, types[i].type)) {
                    GS_FUZZ_ASSERT(types[i].kind == plan.kind); /* the first that fits */
                    GS_FUZZ_ASSERT(gsd_content_type_is(ct, types[i].type));
                    found = 1;
                }
            GS_FUZZ_ASSERT(found);
        }
        GS_FUZZ_ASSERT(plan.cap == (plan.kind == GSD_BODY_JSON ? max_body : max_upload));
        GS_FUZZ_ASSERT(!cl || plan.len <= plan.cap);
        break;
    case GSD_BODY_NOT_TAKEN: GS_FUZZ_ASSERT(has_body && bodies == 0); break;
    case GSD_BODY_BAD_TYPE:
        GS_FUZZ_ASSERT(has_body && bodies != 0);
        GS_FUZZ_ASSERT(plan.kind < 0 || !(bodies & (1u << plan.kind)));
        if (plan.kind < 0)
            for (size_t i = 0; ct && i < sizeof types / sizeof *types; i++)
                GS_FUZZ_ASSERT(!is_type(ct, types[i].type));
        break;
    case GSD_BODY_TOO_LARGE:
        GS_FUZZ_ASSERT(has_body && cl && plan.len > plan.cap && (bodies & (1u << plan.kind)));
        break;
    default: GS_FUZZ_ASSERT(!"verdict");
    }
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        GS_FUZZ_ASSERT(gsd_content_type_is(ct, types[i].type) == (ct && is_type(ct, types[i].type)));

    /* a multipart part's staging name */
    const char *key = data[1] & 1 ? v[3] : NULL, *filename = data[1] & 2 ? v[4] : NULL;
    const char *name = gsd_part_name(key, filename);
    if (filename) {
        const char *slash = strrchr(filename, '/');
        GS_FUZZ_ASSERT(name == (slash ? slash + 1 : filename));
    } else {
        GS_FUZZ_ASSERT(name == key);
    }
    const int safe = gsd_part_name_safe(name);
    GS_FUZZ_ASSERT(gsd_part_name_safe(name) == safe);
    if (safe) {
        const size_t n = strlen(name);
        GS_FUZZ_ASSERT(n > 0 && n < 128 && name[0] != '.' && !strchr(name, '/'));
        for (size_t i = 0; i < n; i++)
            GS_FUZZ_ASSERT(safe_char(name[i]));
    } else if (name && *name && name[0] != '.' && strlen(name) < 128) {
        int all = 1;
        for (const char *c = name; *c; c++)
            all &= safe_char(*c);
        GS_FUZZ_ASSERT(!all);
    }
    free(text);
    return plan.verdict == GSD_BODY_TAKEN && has_body;
}
