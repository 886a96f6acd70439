/*
 * fuzz_spec.c -- fuzz target for the request options of solves and clouds
 * (server/spec.h: solver options, patterns, warm start, label, generate,
 * gaps_from, chain).
 * Properties:
 *   - no crash; a rejected object gives an error with a code and a message;
 *   - an accepted spec written back (gsd_spec_write, as a job stores its
 *     options) parses again, and writing that gives the same text: a job
 *     re-read after a restart has the options it was accepted with.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "gs_fuzz.h"
#include "json_parse.h"
#include "spec.h"

const char *const gs_fuzz_target = "spec";
const char *const gs_fuzz_dict[] = {
    "{", "}", "[", "]", ",", ":", "\"solver\"", "\"gi\"", "\"ipm\"", "\"formulation\"",
    "\"dual\"", "\"tol\"", "\"max_iter\"", "\"timeout_s\"", "\"fasteners\"", "\"all\"",
    "\"none\"", "\"fastener_fraction\"", "\"fixed_pairs\"", "\"warm_start\"",
    "\"j_0123456789abcdef\"", "\"r_0123456789abcdef\"", "\"label\"", "\"generate\"",
    "\"gaps_from\"", "\"count\"", "\"seed\"", "\"return\"", "\"w\"", "\"installed\"", "0", "1",
    "0.5", "-1", "1e300", "9007199254740993", "null", "true", "false", "\"cache\"", "\"\\u0001\"",
    NULL};

static char *write_spec(const gsd_spec *sp)
{
    gs_buf b = {0};
    gsd_spec_write(sp, &b);
    char *t = gs_buf_take(&b, NULL);
    GS_FUZZ_ASSERT(t != NULL);
    return t;
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    GS_FUZZ_ASSERT(text);
    memcpy(text, data, size);
    text[size] = '\0';
    size_t at;
    int trailing;
    cJSON *root = gs_json_parse(text, size, &at, &trailing);
    free(text);
    if (!root)
        return 0;
    int cloud = (int)(gs_fuzz_hash(data, size) & 1);
    gsd_spec sp;
    gs_error e = {0};
    gs_err rc = gsd_spec_parse(root, 10, 52, cloud, &sp, &e);
    cJSON_Delete(root);
    if (rc) {
        GS_FUZZ_ASSERT(rc > GS_OK && rc < GS_ERR__COUNT && e.msg[0]);
        return 0;
    }
    char *first = write_spec(&sp);
    gsd_spec_free(&sp);
    cJSON *again = gs_json_parse(first, strlen(first), &at, &trailing);
    GS_FUZZ_ASSERT(again != NULL);
    gsd_spec sp2;
    GS_FUZZ_ASSERT(gsd_spec_parse(again, 10, 52, cloud, &sp2, &e) == GS_OK);
    cJSON_Delete(again);
    char *second = write_spec(&sp2);
    gsd_spec_free(&sp2);
    GS_FUZZ_ASSERT(!strcmp(first, second));
    free(first);
    free(second);
    return 1;
}
