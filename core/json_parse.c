/*
 * json_parse.c -- serialized cJSON parsing (see json_parse.h).
 * Cost: O(len) under one process-wide mutex.
 */
#include "json_parse.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

/* Offset of the first string character that a C string cannot hold or that
 * JSON forbids: an escaped U+0000 ("\u0000": cJSON's value would end
 * there, so "a.mtx\u0000x" would name a.mtx) or a raw byte below 0x20;
 * -1 if none. text is a valid JSON document. O(len). */
static long bad_string_char(const char *text, size_t len)
{
    int in = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)text[i];
        if (!in) {
            in = c == '"';
        } else if (c == '"') {
            in = 0;
        } else if (c < 0x20) {
            return (long)i;
        } else if (c == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && !memcmp(text + i + 2, "0000", 4))
                return (long)i;
            i++; /* the escaped character */
        }
    }
    return -1;
}

cJSON *gs_json_parse(const char *text, size_t len, size_t *err_offset, int *trailing)
{
    if (trailing)
        *trailing = 0;
    const char *end = NULL;
    pthread_mutex_lock(&parse_lock);
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    pthread_mutex_unlock(&parse_lock);
    if (root) {
        /* require only white space after the value */
        size_t pos = (size_t)(end - text);
        while (pos < len && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' ||
                             text[pos] == '\r'))
            pos++;
        if (pos < len) {
            cJSON_Delete(root);
            if (err_offset)
                *err_offset = pos;
            if (trailing)
                *trailing = 1;
            return NULL;
        }
        const long bad = bad_string_char(text, len);
        if (bad >= 0) {
            cJSON_Delete(root);
            if (err_offset)
                *err_offset = (size_t)bad;
            return NULL;
        }
        return root;
    }
    if (err_offset)
        *err_offset = end ? (size_t)(end - text) : 0;
    return NULL;
}

double gs_json_num(const cJSON *obj, const char *key, const char *sub, double absent)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (sub)
        v = cJSON_GetObjectItemCaseSensitive(v, sub);
    return cJSON_IsNumber(v) ? v->valuedouble : absent;
}
