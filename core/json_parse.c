/*
 * json_parse.c -- serialized cJSON parsing held to RFC 8259's tokens, and
 * those tokens (see json_parse.h). Cost: O(len) under one process-wide
 * mutex, plus one O(len) pass over the tokens.
 */
#include "json_parse.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

static int digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

int gs_json_token_char(char ch)
{
    return digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '+' ||
           ch == '-' || ch == '.';
}

size_t gs_json_number_end(const char *s, size_t n, size_t i)
{
    size_t e = i;
    if (e < n && s[e] == '-')
        e++;
    size_t d0 = e;
    while (e < n && digit(s[e]))
        e++;
    if (e == d0 || (s[d0] == '0' && e - d0 > 1))
        return i; /* no digits, or a leading zero */
    if (e < n && s[e] == '.') {
        size_t f0 = ++e;
        while (e < n && digit(s[e]))
            e++;
        if (e == f0)
            return i;
    }
    if (e < n && (s[e] == 'e' || s[e] == 'E')) {
        e++;
        if (e < n && (s[e] == '+' || s[e] == '-'))
            e++;
        size_t x0 = e;
        while (e < n && digit(s[e]))
            e++;
        if (e == x0)
            return i;
    }
    return e;
}

int gs_json_literal(const char *s, size_t n, size_t i, const char *lit)
{
    size_t k = strlen(lit);
    return n - i >= k && !memcmp(s + i, lit, k) && (i + k == n || !gs_json_token_char(s[i + k]));
}

static int hexdigit(char ch)
{
    return digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* Past the string at s[*i] ('"'): 1, or 0 with *i at its first bad byte (a
 * raw control character, an unknown escape, a short \u) or at n
 * (unterminated). */
static int check_string(const char *s, size_t n, size_t *i)
{
    for (size_t k = *i + 1; k < n; k++) {
        const unsigned char ch = (unsigned char)s[k];
        if (ch == '"') {
            *i = k + 1;
            return 1;
        }
        if (ch < 0x20) {
            *i = k;
            return 0;
        }
        if (ch != '\\')
            continue;
        if (k + 1 >= n || !strchr("\"\\/bfnrtu", s[k + 1]) || s[k + 1] == '\0') {
            *i = k;
            return 0;
        }
        if (s[++k] == 'u') {
            for (int h = 1; h <= 4; h++)
                if (k + (size_t)h >= n || !hexdigit(s[k + (size_t)h])) {
                    *i = k - 1;
                    return 0;
                }
            k += 4;
        }
    }
    *i = n;
    return 0;
}

size_t gs_json_check_tokens(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char ch = text[i];
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '{' || ch == '}' ||
            ch == '[' || ch == ']' || ch == ',' || ch == ':') {
            i++;
        } else if (ch == '"') {
            if (!check_string(text, len, &i))
                return i;
        } else if (gs_json_token_char(ch)) {
            size_t e = i;
            while (e < len && gs_json_token_char(text[e]))
                e++;
            const int lit = gs_json_literal(text, e, i, "true") || gs_json_literal(text, e, i, "false") ||
                            gs_json_literal(text, e, i, "null");
            if (!lit && gs_json_number_end(text, e, i) != e)
                return i; /* NaN, Infinity, .5, +1, 1., 01, 0x1f, ... */
            i = e;
        } else {
            return i; /* another byte outside a string */
        }
    }
    return (size_t)-1;
}

/* Offset of the first escaped U+0000 in a string ("\u0000": cJSON's value
 * would end there, so "a.mtx\u0000x" would name a.mtx); -1 if none. text
 * is a valid JSON document. O(len). */
static long nul_escape(const char *text, size_t len)
{
    int in = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)text[i];
        if (!in) {
            in = c == '"';
        } else if (c == '"') {
            in = 0;
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
        /* cJSON's leniency: numbers such as "1." or "01", raw control
         * characters; and the escaped U+0000 a C string cannot hold */
        size_t bad = gs_json_check_tokens(text, len);
        if (bad == (size_t)-1) {
            const long nul = nul_escape(text, len);
            bad = nul >= 0 ? (size_t)nul : (size_t)-1;
        }
        if (bad != (size_t)-1) {
            cJSON_Delete(root);
            if (err_offset)
                *err_offset = bad;
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
