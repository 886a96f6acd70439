/*
 * fuzz_http_gaps.c -- fuzz target for the gap parts of request bodies
 * (server/api_body_impl.h): the solve's "g" (gsd_body_g), a JSON cloud's
 * "gaps" (gsd_body_gaps), a staged .npy cloud (gsd_body_npy_gaps) and an
 * .npy upload's query string as the object of its options
 * (gsd_query_opt_add, gsd_query_value). The first byte chooses: bits 0-1
 * m - 1 (m = 1..4), bits 2-4 max_gaps - 1 (1..8), bits 5-6 what the rest
 * is: 0 a solve's JSON body, 1 a cloud's JSON body, 2 an .npy body, 3 a
 * query string (key=value parts split at '&', a part without '=' a key
 * without a value).
 * Properties:
 *   - no crash; every refusal has a status (or a gs error) with a code, a
 *     field and a message;
 *   - JSON: the body read as gsd_api_body reads it (tokens checked, "g" then
 *     "gaps" taken without a tree, the rest parsed) and the same body parsed
 *     whole by cJSON give the same answer: both accept with bit-identical
 *     values (and the same k), or both refuse with the same status, code
 *     code and field, except that (a) a flaw of the array itself (a
 *     string, null, object or out-of-range literal as an element, unequal
 *     rows), which gsd_api_body's taking reports first, is a refusal (422)
 *     where the whole reading may give another one: the length, too many
 *     gaps (413) or, for a body that is not valid JSON elsewhere, 400
 *     bad_format; (b) a taken array of the wrong shape is
 *     dimension_mismatch where the whole reading, which checks the length
 *     before the elements, may name an element not_finite ("g": [[1, 2]]
 *     with m = 1); an accepted "g" is m numbers, "gaps" k x m with
 *     1 <= k <= max_gaps, all finite;
 *   - .npy: accepted exactly when the memory reader (gs_npy_read_mem, the
 *     same element limit max_gaps m) reads the bytes as m values or k x m
 *     with 1 <= k <= max_gaps, C order unless k is 1, all finite; a header
 *     the reader refuses is refused with the reader's code and field
 *     "body", and the message does not name the staged file;
 *   - query: each parameter adds one member named by its key: for tol,
 *     max_iter, fastener_fraction and timeout_s a number exactly when the
 *     value is one JSON number token (then strtod's value), else the value
 *     as a string; for fasteners and fixed_pairs (other than all / none) an
 *     array of one such entry per comma-separated part (none for ""); for
 *     cache a boolean for true/false/1/0; else the string; the first key
 *     without '=' is the bare key; gsd_spec_parse of the object gives the
 *     same answer twice, an error with a code and message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "api_body_impl.h"
#include "gs_fuzz.h"
#include "http.h"
#include "json_numbers.h"
#include "json_parse.h"
#include "npy.h"
#include "spec.h"

const char *const gs_fuzz_target = "http_gaps";
const char *const gs_fuzz_dict[] = {
    "{", "}", "[", "]", ",", ":", "\"g\"", "\"gaps\"", "\"solver\"", "0", "-1", "1.5", "1e309",
    "-0", "1e-400", "null", "true", "\"s\"", " ", "\\\"", "\\u0067", "\x93NUMPY", "'descr'",
    "'<f8'", "'>f8'", "'fortran_order'", "True", "False", "'shape'", "(2, 3)", "(1, 2)", "(2,)",
    "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", "&", "=", "tol=",
    "max_iter=", "fastener_fraction=", "timeout_s=", "fasteners=", "fixed_pairs=", "cache=",
    "all", "none", "label=", "solver=gi", "0x9", "+1", "01", "inf", "nan", NULL};

/* The answer to a body: accepted with values, or a refusal. */
typedef struct {
    int ok;
    unsigned status;
    char code[32];
    char field[96];
    double *v; /* accepted: n values */
    size_t n;
    int k;
    int taking; /* refused while taking the arrays (gsd_json_take_numbers) */
} answer;

static void refusal(answer *a, const gsd_body_err *err)
{
    a->ok = 0;
    if (err->status == 0) {
        GS_FUZZ_ASSERT(err->gs.code > GS_OK && err->gs.code < GS_ERR__COUNT && err->gs.msg[0]);
        a->status = gsd_http_status(err->gs.code);
        snprintf(a->code, sizeof a->code, "%s", gs_err_name(err->gs.code));
        snprintf(a->field, sizeof a->field, "%s", err->gs.field);
    } else {
        GS_FUZZ_ASSERT(err->status >= 400 && err->status < 600 && err->code[0] && err->msg[0]);
        a->status = err->status;
        snprintf(a->code, sizeof a->code, "%s", err->code);
        snprintf(a->field, sizeof a->field, "%s", err->field);
    }
}

static void gs_refusal(answer *a, const gs_error *e)
{
    gsd_body_err err = {0};
    err.gs = *e;
    refusal(a, &err);
}

static void http_refusal(answer *a, unsigned status, const char *code, const char *field)
{
    gsd_body_err err;
    gsd_body_refuse(&err, status, code, field, "refused");
    refusal(a, &err);
}

/* The member `key` read from obj (nums: the array taken without a tree). */
static void read_member(int cloud, gsd_numarr *nums, const cJSON *obj, int m, int max_gaps,
                        answer *a)
{
    gsd_body_err err;
    memset(a, 0, sizeof *a);
    if (!cloud) {
        double *g = malloc(sizeof(double) * (size_t)m);
        GS_FUZZ_ASSERT(g != NULL);
        if (gsd_body_g(nums, obj, m, g, &err)) {
            a->ok = 1;
            a->v = g;
            a->n = (size_t)m;
            a->k = 1;
        } else {
            free(g);
            refusal(a, &err);
            GS_FUZZ_ASSERT(a->status == 422);
        }
        return;
    }
    double *G = NULL;
    int k = -1;
    double *taken = nums ? nums->v : NULL;
    if (gsd_body_gaps(nums, obj, m, max_gaps, &G, &k, &err)) {
        GS_FUZZ_ASSERT(G != NULL && k >= 1 && k <= max_gaps);
        GS_FUZZ_ASSERT(!nums || (G == taken && nums->v == NULL));
        a->ok = 1;
        a->v = G;
        a->n = (size_t)k * (size_t)m;
        a->k = k;
    } else {
        GS_FUZZ_ASSERT(G == NULL && k == -1);
        GS_FUZZ_ASSERT(!nums || nums->v == taken);
        refusal(a, &err);
    }
}

/* The body as gsd_api_body (server/api.c) reads it, then the member. */
static void streamed(const uint8_t *data, size_t size, int cloud, int m, int max_gaps, answer *a,
                     int *other_key)
{
    memset(a, 0, sizeof *a);
    *other_key = 0;
    char *text = malloc(size + 1);
    GS_FUZZ_ASSERT(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    static const char *const big[] = {"g", "gaps"};
    gsd_numarr nums = {0};
    const char *nums_key = "";
    for (int k = 0; k < 2 && !nums_key[0]; k++) {
        gs_error e;
        int t = gsd_json_take_numbers(text, size, big[k], size, &nums, &e);
        if (t < 0) {
            gs_refusal(a, &e);
            a->taking = 1;
            *other_key = k != cloud;
            free(text);
            return;
        }
        if (t > 0)
            nums_key = big[k];
    }
    size_t at = 0;
    int trailing = 0;
    cJSON *root = gs_json_parse(text, size, &at, &trailing);
    free(text);
    if (!root || !cJSON_IsObject(root)) {
        http_refusal(a, 400, "bad_format", "body");
    } else {
        const char *key = cloud ? "gaps" : "g";
        read_member(cloud, !strcmp(nums_key, key) ? &nums : NULL, root, m, max_gaps, a);
    }
    cJSON_Delete(root);
    gsd_numarr_free(&nums);
}

/* The body parsed whole by cJSON, then the member. */
static void whole(const uint8_t *data, size_t size, int cloud, int m, int max_gaps, answer *a)
{
    size_t at = 0;
    int trailing = 0;
    cJSON *root = gs_json_parse((const char *)data, size, &at, &trailing);
    if (!root || !cJSON_IsObject(root)) {
        memset(a, 0, sizeof *a);
        http_refusal(a, 400, "bad_format", "body");
    } else {
        read_member(cloud, NULL, root, m, max_gaps, a);
    }
    cJSON_Delete(root);
}

static int check_json(const uint8_t *data, size_t size, int cloud, int m, int max_gaps)
{
    if (gs_json_check_tokens((const char *)data, size) != (size_t)-1)
        return 0; /* refused first, whichever way the rest is read */
    answer s, w;
    int other_key;
    streamed(data, size, cloud, m, max_gaps, &s, &other_key);
    whole(data, size, cloud, m, max_gaps, &w);
    if (other_key) { /* an error in the other key's array: refused before the member */
        GS_FUZZ_ASSERT(!s.ok);
        free(w.v);
        return 0;
    }
    GS_FUZZ_ASSERT(!s.taking || s.status == 422 || s.status == 413);
    if (s.taking) { /* a flaw of the array, which the taking reports first */
        GS_FUZZ_ASSERT(!s.ok && !w.ok);
    } else if (s.ok || w.ok) {
        GS_FUZZ_ASSERT(s.ok && w.ok && s.k == w.k && s.n == w.n);
        GS_FUZZ_ASSERT(memcmp(s.v, w.v, s.n * sizeof(double)) == 0);
        for (size_t i = 0; i < s.n; i++)
            GS_FUZZ_ASSERT(isfinite(s.v[i]));
    } else {
        const int shape_or_element = (!strcmp(s.code, "dimension_mismatch") ||
                                      !strcmp(s.code, "not_finite")) &&
                                     (!strcmp(w.code, "dimension_mismatch") ||
                                      !strcmp(w.code, "not_finite"));
        if (s.status != w.status || (strcmp(s.code, w.code) && !shape_or_element) ||
            (!strcmp(s.code, w.code) && strcmp(s.field, w.field))) {
            fprintf(stderr, "streamed %u %s %s, whole %u %s %s\n", s.status, s.code, s.field,
                    w.status, w.code, w.field);
            GS_FUZZ_ASSERT(!"the two readings of the body agree");
        }
    }
    free(s.v);
    free(w.v);
    return s.ok;
}

static int check_npy(const uint8_t *data, size_t size, int m, int max_gaps)
{
    char path[512];
    const char *dir = getenv("GS_TEST_TMP");
    snprintf(path, sizeof path, "%s/fuzz_http_gaps_%ld.npy", dir && *dir ? dir : "/tmp",
             (long)getpid());
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return 0;
    int wrote = fwrite(data, 1, size, fp) == size;
    if (fclose(fp) != 0 || !wrote) {
        unlink(path);
        return 0;
    }
    gsd_body_err err;
    int k = -1;
    const int ok = gsd_body_npy_gaps(path, m, max_gaps, &k, &err);
    unlink(path);

    double *d = NULL;
    gs_npy_info info;
    gs_error e;
    const gs_err rc = gs_npy_read_mem(data, size, (size_t)max_gaps * (size_t)m, &d, &info, &e);
    int fits = 0;
    size_t rows = 0;
    if (rc == GS_OK) {
        rows = info.ndim == 1 ? 1 : info.shape[0];
        const size_t cols = info.ndim == 1 ? info.shape[0] : info.shape[1];
        fits = cols == (size_t)m && rows >= 1 && rows <= (size_t)max_gaps &&
               (!info.fortran_order || rows == 1);
        for (size_t i = 0; fits && i < rows * (size_t)m; i++)
            fits = isfinite(d[i]) != 0;
    }
    if (ok) {
        GS_FUZZ_ASSERT(fits && k == (int)rows);
    } else {
        answer a;
        refusal(&a, &err);
        GS_FUZZ_ASSERT(!fits);
        if (rc != GS_OK) {
            GS_FUZZ_ASSERT(err.status == 0 && err.gs.code == rc);
            GS_FUZZ_ASSERT(!strcmp(err.gs.field, "body") && !strstr(err.gs.msg, path));
        } else {
            GS_FUZZ_ASSERT(err.status == 422 || err.status == 413);
            GS_FUZZ_ASSERT(k == (int)rows || rows > (size_t)max_gaps);
        }
    }
    free(d);
    return ok;
}

/* The member key=value added last to obj. */
static void check_member(const cJSON *obj, const char *key, const char *value)
{
    const cJSON *it = obj->child;
    while (it && it->next)
        it = it->next;
    GS_FUZZ_ASSERT(it && it->string && !strcmp(it->string, key));
    const char *v = value ? value : "";
    const int list = (!strcmp(key, "fasteners") || !strcmp(key, "fixed_pairs")) &&
                     strcmp(v, "all") && strcmp(v, "none");
    const int num = !strcmp(key, "tol") || !strcmp(key, "max_iter") ||
                    !strcmp(key, "fastener_fraction") || !strcmp(key, "timeout_s");
    const int boolean = !strcmp(key, "cache") && (!strcmp(v, "true") || !strcmp(v, "false") ||
                                                  !strcmp(v, "1") || !strcmp(v, "0"));
    if (list) {
        GS_FUZZ_ASSERT(cJSON_IsArray(it));
        int parts = *v ? 1 : 0;
        for (const char *p = v; *v && (p = strchr(p, ',')) != NULL; p++)
            parts++;
        GS_FUZZ_ASSERT(cJSON_GetArraySize(it) == parts);
        const char *p = v;
        const cJSON *e;
        cJSON_ArrayForEach(e, it)
        {
            const char *c = strchr(p, ',');
            const size_t n = c ? (size_t)(c - p) : strlen(p);
            if (n > 0 && gs_json_number_end(p, n, 0) == n) {
                GS_FUZZ_ASSERT(cJSON_IsNumber(e));
            } else {
                GS_FUZZ_ASSERT(cJSON_IsString(e) && strlen(e->valuestring) == n &&
                               !memcmp(e->valuestring, p, n));
            }
            p = c ? c + 1 : p + n;
        }
    } else if (num) {
        const size_t n = strlen(v);
        if (n > 0 && gs_json_number_end(v, n, 0) == n) {
            GS_FUZZ_ASSERT(cJSON_IsNumber(it));
            const double x = strtod(v, NULL);
            GS_FUZZ_ASSERT(memcmp(&x, &it->valuedouble, sizeof x) == 0);
        } else {
            GS_FUZZ_ASSERT(cJSON_IsString(it) && !strcmp(it->valuestring, v));
        }
    } else if (boolean) {
        GS_FUZZ_ASSERT(cJSON_IsBool(it) &&
                       cJSON_IsTrue(it) == (!strcmp(v, "true") || !strcmp(v, "1")));
    } else {
        GS_FUZZ_ASSERT(cJSON_IsString(it) && !strcmp(it->valuestring, v));
    }
}

static int check_query(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    GS_FUZZ_ASSERT(s != NULL);
    memcpy(s, data, size);
    s[size] = '\0';
    cJSON *obj = cJSON_CreateObject();
    GS_FUZZ_ASSERT(obj != NULL);
    const char *bare = NULL, *first_bare = NULL;
    int members = 0;
    for (char *p = s, *next; p; p = next) {
        char *amp = strchr(p, '&');
        next = amp ? amp + 1 : NULL;
        if (amp)
            *amp = '\0';
        char *eq = strchr(p, '=');
        if (eq)
            *eq = '\0';
        const char *value = eq ? eq + 1 : NULL;
        if (!value && !first_bare)
            first_bare = p;
        gsd_query_opt_add(obj, &bare, p, value);
        members++;
        GS_FUZZ_ASSERT(cJSON_GetArraySize(obj) == members);
        check_member(obj, p, value);
    }
    GS_FUZZ_ASSERT(bare == first_bare);
    gsd_query_opt_add(obj, &bare, NULL, "x"); /* skipped */
    GS_FUZZ_ASSERT(cJSON_GetArraySize(obj) == members && bare == first_bare);
    gsd_spec sp;
    gs_error e1 = {0}, e2 = {0};
    const gs_err r1 = gsd_spec_parse(obj, 10, 52, 1, &sp, &e1);
    if (r1 == GS_OK)
        gsd_spec_free(&sp);
    const gs_err r2 = gsd_spec_parse(obj, 10, 52, 1, &sp, &e2);
    if (r2 == GS_OK)
        gsd_spec_free(&sp);
    GS_FUZZ_ASSERT(r1 == r2);
    if (r1) {
        GS_FUZZ_ASSERT(r1 > GS_OK && r1 < GS_ERR__COUNT && e1.msg[0]);
        GS_FUZZ_ASSERT(!strcmp(e1.field, e2.field) && !strcmp(e1.msg, e2.msg));
    }
    cJSON_Delete(obj);
    free(s);
    return r1 == GS_OK;
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int m = (data[0] & 3) + 1, max_gaps = ((data[0] >> 2) & 7) + 1;
    const int mode = (data[0] >> 5) & 3;
    data++;
    size--;
    /* a heap copy of exactly the rest, so a read past it is an ASan report */
    uint8_t *rest = malloc(size ? size : 1);
    GS_FUZZ_ASSERT(rest != NULL);
    memcpy(rest, data, size);
    int r;
    switch (mode) {
    case 0:
    case 1: r = check_json(rest, size, mode, m, max_gaps); break;
    case 2: r = check_npy(rest, size, m, max_gaps); break;
    default: r = check_query(rest, size); break;
    }
    free(rest);
    return r;
}
