/*
 * test_text.c -- request-derived text in the daemon (server/text.c) and the
 * token check of JSON bodies (server/json_numbers.c):
 *   - UTF-8 validity follows RFC 3629: ASCII, 2-, 3- and 4-byte forms are
 *     valid; overlong forms, surrogates, code points above U+10FFFF, stray
 *     continuation bytes and cut sequences are not;
 *   - the repair replaces each invalid byte by U+FFFD, leaves a valid text
 *     byte for byte, and a repaired JSON text still parses to the same
 *     structure;
 *   - a log line keeps no control character (CR, LF, ESC, C1) nor invalid
 *     byte, doubles a backslash, keeps valid UTF-8, and stops at a whole
 *     escape when the buffer is short;
 *   - clipping cuts at a character boundary and says so;
 *   - the token check accepts RFC 8259's tokens and rejects what cJSON
 *     would take leniently (".5", "+1", "1.", "000", NaN, Infinity, a raw
 *     control byte, a bad escape) at the right byte; a number of 64
 *     characters or more passes it untouched and the parser reads it whole,
 *     and the taking of "g" reads such a number whole too (bit-exact with
 *     strtod; it had a 64-byte buffer).
 */
#include "gs_test.h"

#include <cjson/cJSON.h>

#include "json_numbers.h"
#include "json_parse.h"
#include "text.h"

static int valid(const char *s)
{
    return gs_utf8_valid(s, strlen(s));
}

GS_TEST(utf8_validity)
{
    GS_CHECK(valid(""));
    GS_CHECK(valid("plain ascii"));
    GS_CHECK(valid("caf\xc3\xa9"));              /* U+00E9 */
    GS_CHECK(valid("\xe2\x82\xac"));             /* U+20AC */
    GS_CHECK(valid("\xf0\x9f\x98\x80"));         /* U+1F600 */
    GS_CHECK(valid("\xf4\x8f\xbf\xbf"));         /* U+10FFFF */
    GS_CHECK(valid("\xed\x9f\xbf"));             /* U+D7FF, below the surrogates */
    GS_CHECK(!valid("\xff"));
    GS_CHECK(!valid("\xff\xfe"));
    GS_CHECK(!valid("\x80"));                    /* a continuation byte alone */
    GS_CHECK(!valid("\xc0\xaf"));                /* overlong '/' */
    GS_CHECK(!valid("\xc1\xbf"));
    GS_CHECK(!valid("\xe0\x80\xaf"));            /* overlong, 3 bytes */
    GS_CHECK(!valid("\xf0\x80\x80\xaf"));        /* overlong, 4 bytes */
    GS_CHECK(!valid("\xed\xa0\x80"));            /* U+D800, a surrogate */
    GS_CHECK(!valid("\xf4\x90\x80\x80"));        /* above U+10FFFF */
    GS_CHECK(!valid("\xf5\x80\x80\x80"));
    GS_CHECK(!valid("caf\xc3"));                 /* cut short */
    GS_CHECK(!valid("\xe2\x82"));
    GS_CHECK(!valid("\xe2\x82x"));
    GS_CHECK_INT(gs_utf8_seq("\xf0\x9f\x98\x80", 4), 4);
    GS_CHECK_INT(gs_utf8_seq("\xf0\x9f\x98\x80", 3), 0); /* n bounds it */
    GS_CHECK_INT(gs_utf8_seq("", 0), 0);
}

GS_TEST(utf8_repair)
{
    gs_buf b = {0};
    gs_buf_puts(&b, "{\"label\":\"ok \xe2\x82\xac\"}");
    size_t len = b.len;
    char *before = malloc(len);
    memcpy(before, b.p, len);
    GS_CHECK_INT(gsd_utf8_repair(&b), 0);
    GS_CHECK_INT(b.len, len);
    GS_CHECK(!memcmp(b.p, before, len)); /* valid: untouched */
    free(before);
    gs_buf_free(&b);

    gs_buf_puts(&b, "{\"label\":\"a\xff\xfe" "b\xc3\",\"x\":\"\xed\xa0\x80\"}");
    GS_CHECK_INT(gsd_utf8_repair(&b), 0);
    static const char want[] = "{\"label\":\"a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd\","
                               "\"x\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}";
    GS_CHECK_INT(b.len, sizeof want - 1);
    GS_CHECK(!memcmp(b.p, want, b.len));
    GS_CHECK(gs_utf8_valid(b.p, b.len));
    cJSON *doc = gs_json_parse(b.p, b.len, NULL, NULL);
    GS_CHECK(doc != NULL);
    GS_CHECK(!strcmp(cJSON_GetObjectItem(doc, "label")->valuestring,
                     "a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd"));
    cJSON_Delete(doc);
    gs_buf_free(&b);
}

GS_TEST(log_escape)
{
    char out[256];
    gsd_log_escape(out, sizeof out,
                   "GET /v1/jobs/x\r\n2026-01-01T00:00:00Z gapsimd info: injected");
    GS_CHECK(!strchr(out, '\r') && !strchr(out, '\n'));
    GS_CHECK(!strcmp(out, "GET /v1/jobs/x\\x0d\\x0a2026-01-01T00:00:00Z gapsimd info: injected"));
    gsd_log_escape(out, sizeof out, "a\x1b[31mred\x7f\\b");
    GS_CHECK(!strcmp(out, "a\\x1b[31mred\\x7f\\\\b"));
    gsd_log_escape(out, sizeof out, "caf\xc3\xa9 \xff\xfe \xc2\x9b x"); /* C1 CSI */
    GS_CHECK(!strcmp(out, "caf\xc3\xa9 \\xff\\xfe \\xc2\\x9b x"));
    GS_CHECK(gs_utf8_valid(out, strlen(out)));
    /* short buffer: cut before an escape that does not fit, NUL-terminated */
    gsd_log_escape(out, 6, "abc\n");
    GS_CHECK(!strcmp(out, "abc"));
    gsd_log_escape(out, 1, "abc");
    GS_CHECK(!strcmp(out, ""));
}

GS_TEST(clip)
{
    char out[48];
    gsd_text_clip(out, sizeof out, "a_0123", 32);
    GS_CHECK(!strcmp(out, "a_0123"));
    gsd_text_clip(out, sizeof out, "0123456789abcdefghijklmnopqrstuvwxyz", 10);
    GS_CHECK(!strcmp(out, "0123456789..."));
    /* the cut would split "\xc3\xa9": it goes before it */
    gsd_text_clip(out, sizeof out, "012345678\xc3\xa9zzzz", 10);
    GS_CHECK(!strcmp(out, "012345678..."));
}

/* gs_json_check_tokens on a copy of s: the offset it reports. */
static size_t check(const char *s)
{
    char *t = strdup(s);
    size_t at = gs_json_check_tokens(t, strlen(t));
    free(t);
    return at;
}

GS_TEST(tokens_valid)
{
    static const char *const ok[] = {
        "{}", " {\"g\": [0, -0, 1.5, -2e-3, 3E+7, 0.0e0], \"a\": true, \"b\": false}\r\n",
        "{\"s\":\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00\"}",
        "{\"n\":null,\"raw\":\"caf\xc3\xa9 \xff\"}", /* the encoding is checked elsewhere */
        "[1,2]", "\"x\"", "1 2", /* the structure is the parser's */
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        GS_CHECK_MSG(check(ok[i]) == (size_t)-1, "%s", ok[i]);
}

GS_TEST(tokens_invalid)
{
    static const struct {
        const char *s;
        size_t at;
    } bad[] = {
        {"{\"g\":[.5]}", 6},      {"{\"g\":[+1]}", 6},     {"{\"g\":[1.]}", 6},
        {"{\"g\":[000]}", 6},     {"{\"g\":[01]}", 6},     {"{\"g\":[NaN]}", 6},
        {"{\"g\":[Infinity]}", 6}, {"{\"g\":[-Infinity]}", 6}, {"{\"g\":[1e]}", 6},
        {"{\"g\":[0x10]}", 6},    {"{\"g\":[1.e5]}", 6},   {"{\"g\":[-]}", 6},
        {"{\"a\":nul}", 5},       {"{\"a\":truex}", 5},    {"{\"a\":True}", 5},
        {"{\"a\":\"x\x01y\"}", 7}, /* a raw control byte in a string */
        {"{\"a\":\"\\x\"}", 6},   {"{\"a\":\"\\u12G4\"}", 6}, {"{\"a\":\"open", 10},
        {"{\"a\":1,\x01\"b\":2}", 7}, /* cJSON skips it as white space */
        {"{'a':1}", 1},           {"{\"a\":1}#", 7},       {"{\"a\":\xef\xbb\xbf" "1}", 5},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        GS_CHECK_MSG(check(bad[i].s) == bad[i].at, "%s: at %zu, expected %zu", bad[i].s,
                     check(bad[i].s), bad[i].at);
}

/* "0." and nines digits: a 64+ character number. */
static char *long_number(int nines)
{
    char *s = malloc((size_t)nines + 8);
    strcpy(s, "0.");
    memset(s + 2, '1', (size_t)nines);
    s[2 + nines] = '\0';
    return s;
}

GS_TEST(tokens_long_numbers)
{
    for (int digits = 61; digits <= 400; digits += 339 / 3) {
        char *num = long_number(digits);
        const double want = strtod(num, NULL);
        char *text = malloc(3 * strlen(num) + 64);
        sprintf(text, "{\"tol\": %s, \"g\": [%s, -%s1e-2]}", num, num, num);
        const size_t len = strlen(text);
        GS_CHECK(gs_json_check_tokens(text, len) == (size_t)-1);
        cJSON *doc = gs_json_parse(text, len, NULL, NULL);
        GS_CHECK_MSG(doc != NULL, "%s", text);
        const cJSON *tol = cJSON_GetObjectItem(doc, "tol");
        const cJSON *g = cJSON_GetObjectItem(doc, "g");
        GS_CHECK(cJSON_IsNumber(tol) && tol->valuedouble == want);
        GS_CHECK(cJSON_GetArraySize(g) == 2);
        GS_CHECK(cJSON_GetArrayItem(g, 0)->valuedouble == want);
        char neg[512];
        snprintf(neg, sizeof neg, "-%s1e-2", num);
        GS_CHECK(cJSON_GetArrayItem(g, 1)->valuedouble == strtod(neg, NULL));
        cJSON_Delete(doc);
        free(text);
        free(num);
    }
    /* long: an overflow stays one; an underflow is 0 */
    char big[200] = "{\"a\": 1", tiny[200] = "{\"a\": 0.";
    memset(big + 7, '0', 100);
    strcpy(big + 107, "e300, \"b\": 1}");
    memset(tiny + 8, '0', 100);
    strcpy(tiny + 108, "1e-400}");
    GS_CHECK(gs_json_check_tokens(big, strlen(big)) == (size_t)-1);
    GS_CHECK(gs_json_check_tokens(tiny, strlen(tiny)) == (size_t)-1);
    cJSON *b = gs_json_parse(big, strlen(big), NULL, NULL);
    cJSON *t = gs_json_parse(tiny, strlen(tiny), NULL, NULL);
    GS_CHECK(b && t);
    GS_CHECK(isinf(cJSON_GetObjectItem(b, "a")->valuedouble));
    GS_CHECK(cJSON_GetObjectItem(b, "b")->valuedouble == 1.0);
    GS_CHECK(cJSON_GetObjectItem(t, "a")->valuedouble == 0.0);
    cJSON_Delete(b);
    cJSON_Delete(t);
}

GS_TEST(take_long_numbers)
{
    /* the g of the review: 0.111...1 with 62 digits after the point, and longer */
    for (int digits = 62; digits <= 2000; digits *= 3) {
        char *num = long_number(digits);
        char *text = malloc(2 * strlen(num) + 32);
        sprintf(text, "{\"g\": [%s, 1, %s]}", num, num);
        gsd_numarr a;
        gs_error e;
        GS_CHECK_INT(gsd_json_take_numbers(text, strlen(text), "g", 100, &a, &e), 1);
        GS_CHECK_INT(a.n, 3);
        GS_CHECK(a.v[0] == strtod(num, NULL) && a.v[1] == 1.0 && a.v[2] == a.v[0]);
        gsd_numarr_free(&a);
        free(text);
        free(num);
    }
    /* malformed numbers are left to the parser (0), other values named (-1) */
    static const char *const malformed[] = {"{\"g\":[.5]}", "{\"g\":[+1]}", "{\"g\":[1.]}",
                                            "{\"g\":[000]}", "{\"g\":[NaN]}",
                                            "{\"g\":[Infinity]}", "{\"g\":[nulll]}"};
    for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
        char *t = strdup(malformed[i]);
        gsd_numarr a;
        gs_error e;
        GS_CHECK_MSG(gsd_json_take_numbers(t, strlen(t), "g", 100, &a, &e) == 0, "%s",
                     malformed[i]);
        free(t);
    }
    static const char *const named[] = {"{\"g\":[\"x\"]}", "{\"g\":[null]}", "{\"g\":[1,true]}",
                                        "{\"g\":[1e999]}", "{\"g\":[{}]}"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
        char *t = strdup(named[i]);
        gsd_numarr a;
        gs_error e;
        GS_CHECK_MSG(gsd_json_take_numbers(t, strlen(t), "g", 100, &a, &e) == -1, "%s",
                     named[i]);
        GS_CHECK(e.code == GS_ERR_NONFINITE && !strncmp(e.field, "g[", 2));
        free(t);
    }
}

GS_TEST_MAIN()
