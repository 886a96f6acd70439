/*
 * json_parse.c -- serialized cJSON parsing (see json_parse.h).
 * Cost: O(len) under one process-wide mutex.
 */
#include "json_parse.h"

#include <pthread.h>

static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

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
