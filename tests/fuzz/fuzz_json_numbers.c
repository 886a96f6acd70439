/*
 * fuzz_json_numbers.c -- fuzz target for taking "g" / "gaps" out of a JSON
 * body without a tree (server/json_numbers.h). Properties:
 *   - no crash; an error carries a code, a message and a field naming the
 *     key; nothing is returned with it;
 *   - a taken array agrees with cJSON on the original text: when cJSON
 *     parses the input, the member is an array of numbers (or of equally
 *     long arrays of numbers) with the same values, bit for bit;
 *   - the blanked text still parses (when the original did), with the member
 *     now the number 0.
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

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    check_one(data, size, "g");
    check_one(data, size, "gaps");
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gs_fuzz_one(data, size);
    return 0;
}
