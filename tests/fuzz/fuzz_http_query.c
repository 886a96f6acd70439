/*
 * fuzz_http_query.c -- fuzz target for the request-side parsers of the job
 * endpoints (server/api_query_impl.h): the Accept header that chooses a
 * results page's format (gsd_accept_q, gsd_accepts_npy), ?fields= of the
 * results (gsd_parse_fields) and ?pairs= of the summary (gsd_parse_pairs).
 * The input, as a string, goes to all four.
 * Properties:
 *   - no crash; every answer is deterministic;
 *   - a q value is -1 (no range matches) or in [0, 1], never NaN; the q of
 *     the type itself (exact) is the q in general whenever the type is
 *     named; a header with ", <type>" appended names it;
 *   - .npy is chosen only with a q above 0 that JSON's does not exceed;
 *   - fields: GSD_RET_KKT always, only W / LAMBDA besides; accepted with
 *     one name of w, lambda, none (and "" or only commas);
 *   - pairs: an accepted list sets only the 7 arrays' bits, each of whose
 *     names it holds; a refusal points into the text at a comma-separated
 *     name that is none of them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_query_impl.h"
#include "gs_fuzz.h"
#include "spec.h"

const char *const gs_fuzz_target = "http_query";
const char *const gs_fuzz_dict[] = {
    "application/x-npy", "application/json", "application/*", "*/*", "*", "/", ",", ";",
    ";q=", "q=0", "q=1", "q=0.5", "Q=", "q=-1", "q=nan", "q=1e999", " ", "\t", "w", "lambda",
    "none", "mean", "std", "max", "p95", "share_above", "lambda_mean", "opened", NULL};

static const char *const pair_names[] = {"mean",        "std",         "max",   "p95",
                                         "share_above", "lambda_mean", "opened"};

static void check_q(const char *s, const char *type)
{
    const double q = gsd_accept_q(s, type, 0), qx = gsd_accept_q(s, type, 1);
    GS_FUZZ_ASSERT(!isnan(q) && !isnan(qx));
    GS_FUZZ_ASSERT(q == -1 || (q >= 0 && q <= 1));
    GS_FUZZ_ASSERT(qx == -1 || (qx >= 0 && qx <= 1));
    GS_FUZZ_ASSERT(gsd_accept_q(s, type, 0) == q && gsd_accept_q(s, type, 1) == qx);
    if (qx != -1)
        GS_FUZZ_ASSERT(q == qx); /* the type itself is the most specific range */
    else if (q == -1)
        GS_FUZZ_ASSERT(qx == -1);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    GS_FUZZ_ASSERT(s != NULL);
    memcpy(s, data, size);
    s[size] = '\0';
    const size_t len = strlen(s);

    /* Accept */
    check_q(s, "application/x-npy");
    check_q(s, "application/json");
    const int npy = gsd_accepts_npy(s);
    GS_FUZZ_ASSERT(gsd_accepts_npy(s) == npy && gsd_accepts_npy(NULL) == 0);
    if (npy) {
        const double qn = gsd_accept_q(s, "application/x-npy", 1);
        GS_FUZZ_ASSERT(qn > 0 && qn >= gsd_accept_q(s, "application/json", 0));
    }
    char *more = malloc(len + 32);
    GS_FUZZ_ASSERT(more != NULL);
    snprintf(more, len + 32, "%s, application/x-npy", s);
    GS_FUZZ_ASSERT(gsd_accept_q(more, "application/x-npy", 1) != -1);
    free(more);

    /* ?fields= */
    unsigned ret = 0, ret2 = 0;
    const int fok = gsd_parse_fields(s, &ret);
    GS_FUZZ_ASSERT(gsd_parse_fields(s, &ret2) == fok && ret == ret2);
    GS_FUZZ_ASSERT((ret & GSD_RET_KKT) && !(ret & ~(unsigned)(GSD_RET_KKT | GSD_RET_W |
                                                              GSD_RET_LAMBDA)));
    GS_FUZZ_ASSERT(gsd_parse_fields(NULL, &ret2) == 1 && ret2 == (GSD_RET_W | GSD_RET_KKT));
    if (!strcmp(s, "w") || !strcmp(s, "lambda") || !strcmp(s, "none") || !s[strspn(s, ",")])
        GS_FUZZ_ASSERT(fok);
    if (fok && (ret & GSD_RET_W))
        GS_FUZZ_ASSERT(strchr(s, 'w') != NULL);

    /* ?pairs= */
    unsigned mask = 0, mask2 = 0;
    const char *bad = NULL, *bad2 = NULL;
    size_t bad_len = 0, bad_len2 = 0;
    const int pok = gsd_parse_pairs(s, &mask, &bad, &bad_len);
    GS_FUZZ_ASSERT(gsd_parse_pairs(s, &mask2, &bad2, &bad_len2) == pok);
    if (pok) {
        GS_FUZZ_ASSERT(mask == mask2 && mask < (1u << 7));
        for (int i = 0; i < 7; i++)
            if (mask & (1u << i))
                GS_FUZZ_ASSERT(strstr(s, pair_names[i]) != NULL);
    } else {
        GS_FUZZ_ASSERT(bad == bad2 && bad_len == bad_len2);
        GS_FUZZ_ASSERT(bad >= s && bad + bad_len <= s + len);
        GS_FUZZ_ASSERT(!memchr(bad, ',', bad_len) && (bad == s || bad[-1] == ','));
        for (int i = 0; i < 7; i++)
            GS_FUZZ_ASSERT(strlen(pair_names[i]) != bad_len || memcmp(pair_names[i], bad, bad_len));
    }
    if (!strcmp(s, "none") || !*s)
        GS_FUZZ_ASSERT(pok && mask == 0);
    free(s);
    return fok || pok || npy;
}
