/*
 * fuzz_json_numbers.c -- fuzz target for taking "g" / "gaps" out of a JSON
 * body without a tree (server/json_numbers.h). Properties:
 *   - no crash; an error carries a code, a message and a field naming the
 *     key; nothing is returned with it;
 *   - a taken array agrees with cJSON on the original text: when cJSON
 *     parses the input, the member is an array of numbers (or of equally
 *     long arrays of numbers) with the same values, bit for bit;
 *   - the blanked text still parses (when the original did), with the member
 *     now the number 0;
 * and for keeping some members of the object "pairs" (gsd_json_keep_members,
 * the summary's ?pairs=):
 *   - no crash; either the text is unchanged ((size_t)-1) or it shrank;
 *   - on a text cJSON parses (without escapes), the result parses too, its
 *     "pairs" holds exactly the original members named p95 or mean, in
 *     order, with equal values, and every other top-level member is equal;
 * and for the token check of a body (gs_json_check_tokens):
 *   - no crash; the offset of a refusal is within the text (or its end, for
 *     an unterminated string);
 *   - a text it accepts that cJSON parses prints (cJSON) as a text it
 *     accepts too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gs_fuzz.h"
#include "json_numbers.h"
#include "json_parse.h"

const char *const gs_fuzz_target = "json_numbers";
const char *const gs_fuzz_dict[] = {"{", "}", "[", "]", ",", ":", "\"g\"", "\"gaps\"", "\"x\"",
                                    "\"pairs\"", "\"p95\"", "\"mean\"",
                                    "0", "-1", "1.5", "1e309", "2E-3", "null", "true", "\"s\"",
                                    " ", "\\\"", NULL};

static void check_one(const uint8_t *data, size_t size, const char *key)
{
    char *text = malloc(size + 1), *orig = malloc(size + 1);
    GS_FUZZ_ASSERT(text && orig);
    memcpy(text, data, size);
    memcpy(orig, data, size);
    text[size] = orig[size] = '\0';
    gsd_numarr a;
    gs_error e;
    int r = gsd_json_take_numbers(text, size, key, 4096, &a, &e);
    if (r < 0) {
        GS_FUZZ_ASSERT(e.code > GS_OK && e.code < GS_ERR__COUNT && e.msg[0]);
        GS_FUZZ_ASSERT(!strncmp(e.field, key, strlen(key)));
        GS_FUZZ_ASSERT(a.v == NULL && a.n == 0);
    }
    size_t at;
    int trailing;
    cJSON *root = gs_json_parse(orig, size, &at, &trailing);
    if (r == 1) {
        GS_FUZZ_ASSERT(a.n <= 4096 && (a.rows == -1 ? (size_t)a.cols == a.n
                                                     : (size_t)(a.rows * a.cols) == a.n));
        if (root && cJSON_IsObject(root)) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
            GS_FUZZ_ASSERT(cJSON_IsArray(v));
            size_t k = 0;
            const cJSON *x;
            cJSON_ArrayForEach(x, v)
            {
                if (a.rows == -1) {
                    GS_FUZZ_ASSERT(cJSON_IsNumber(x) && k < a.n);
                    GS_FUZZ_ASSERT(!memcmp(&x->valuedouble, &a.v[k], 8) || x->valuedouble == a.v[k]);
                    k++;
                    continue;
                }
                const cJSON *y;
                cJSON_ArrayForEach(y, x)
                {
                    GS_FUZZ_ASSERT(cJSON_IsNumber(y) && k < a.n);
                    GS_FUZZ_ASSERT(y->valuedouble == a.v[k]);
                    k++;
                }
            }
            GS_FUZZ_ASSERT(k == a.n);
            cJSON *after = gs_json_parse(text, size, &at, &trailing);
            GS_FUZZ_ASSERT(after != NULL);
            const cJSON *z = cJSON_GetObjectItemCaseSensitive(after, key);
            GS_FUZZ_ASSERT(cJSON_IsNumber(z) && z->valuedouble == 0.0);
            cJSON_Delete(after);
        }
    }
    cJSON_Delete(root);
    gsd_numarr_free(&a);
    free(text);
    free(orig);
}

/* The same JSON value (printed alike: cJSON_Compare fails on infinities). */
static int same_value(const cJSON *a, const cJSON *b)
{
    char *pa = cJSON_PrintUnformatted(a), *pb = cJSON_PrintUnformatted(b);
    GS_FUZZ_ASSERT(pa && pb);
    int same = !strcmp(pa, pb);
    cJSON_free(pa);
    cJSON_free(pb);
    return same;
}

static void check_keep(const uint8_t *data, size_t size)
{
    static const char *const keep[] = {"p95", "mean", NULL};
    char *text = malloc(size + 1), *orig = malloc(size + 1);
    GS_FUZZ_ASSERT(text && orig);
    memcpy(text, data, size);
    memcpy(orig, data, size);
    text[size] = orig[size] = '\0';
    size_t n = gsd_json_keep_members(text, size, "pairs", keep);
    if (n == (size_t)-1) {
        GS_FUZZ_ASSERT(!memcmp(text, orig, size));
    } else {
        GS_FUZZ_ASSERT(n <= size);
        size_t at;
        int trailing;
        cJSON *root = memchr(orig, '\\', size) ? NULL : gs_json_parse(orig, size, &at, &trailing);
        if (root && cJSON_IsObject(root) && !trailing) {
            cJSON *after = gs_json_parse(text, n, &at, &trailing);
            GS_FUZZ_ASSERT(after != NULL && cJSON_IsObject(after));
            const cJSON *p0 = cJSON_GetObjectItemCaseSensitive(root, "pairs");
            const cJSON *p1 = cJSON_GetObjectItemCaseSensitive(after, "pairs");
            GS_FUZZ_ASSERT(cJSON_IsObject(p0) && cJSON_IsObject(p1));
            const cJSON *x = p0->child, *y = p1->child;
            for (; x; x = x->next) {
                if (strcmp(x->string, "p95") && strcmp(x->string, "mean"))
                    continue;
                GS_FUZZ_ASSERT(y && !strcmp(x->string, y->string) && same_value(x, y));
                y = y->next;
            }
            GS_FUZZ_ASSERT(y == NULL);
            const cJSON *a = root->child, *b = after->child;
            for (; a && b; a = a->next, b = b->next)
                GS_FUZZ_ASSERT(!strcmp(a->string, b->string) &&
                               (a == p0 || same_value(a, b)));
            GS_FUZZ_ASSERT(!a && !b);
            cJSON_Delete(after);
        }
        cJSON_Delete(root);
    }
    free(text);
    free(orig);
}

static void check_tokens(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t at = gs_json_check_tokens(text, size);
    GS_FUZZ_ASSERT(at == (size_t)-1 || at <= size);
    if (at != (size_t)-1)
        return;
    cJSON *root = gs_json_parse(text, size, NULL, NULL);
    if (root) {
        char *out = cJSON_PrintUnformatted(root);
        GS_FUZZ_ASSERT(out != NULL);
        GS_FUZZ_ASSERT(gs_json_check_tokens(out, strlen(out)) == (size_t)-1);
        cJSON_free(out);
    }
    cJSON_Delete(root);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    check_tokens(data, size);
    check_one(data, size, "g");
    check_one(data, size, "gaps");
    check_keep(data, size);
    return 1;
}
