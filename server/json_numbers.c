/*
 * json_numbers.c -- one pass over a JSON object text: find a top-level member, parse its number array into doubles, blank it;
 * or keep some members of a top-level member's object (json_numbers.h).
 */
#include "json_numbers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_parse.h"

typedef struct {
    char *s;
    size_t n, i;
} jn_cur;

static void jn_ws(jn_cur *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' ||
                           c->s[c->i] == '\r'))
        c->i++;
}

/* Past a string starting at c->i ('"'); 0, or -1 if unterminated. */
static int jn_skip_string(jn_cur *c)
{
    for (c->i++; c->i < c->n; c->i++) {
        if (c->s[c->i] == '\\')
            c->i++;
        else if (c->s[c->i] == '"') {
            c->i++;
            return 0;
        }
    }
    return -1;
}

/* Past one value (a string, a nested array or object, or a scalar);
 * -1 on malformed text. */
static int jn_skip_value(jn_cur *c)
{
    if (c->i < c->n && c->s[c->i] == '"')
        return jn_skip_string(c);
    if (c->i < c->n && (c->s[c->i] == '[' || c->s[c->i] == '{')) {
        int depth = 0;
        while (c->i < c->n) {
            char ch = c->s[c->i];
            if (ch == '"') {
                if (jn_skip_string(c) != 0)
                    return -1;
                continue;
            }
            c->i++;
            if (ch == '[' || ch == '{')
                depth++;
            else if ((ch == ']' || ch == '}') && --depth == 0)
                return 0;
        }
        return -1;
    }
    while (c->i < c->n && c->s[c->i] != ',' && c->s[c->i] != '}' && c->s[c->i] != ']' &&
           c->s[c->i] != ' ' && c->s[c->i] != '\n' && c->s[c->i] != '\t' && c->s[c->i] != '\r')
        c->i++;
    return 0;
}

static int jn_push(gsd_numarr *a, size_t *cap, double v, size_t max_values)
{
    if (a->n == max_values)
        return -2;
    if (a->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 1024;
        if (nc > max_values)
            nc = max_values;
        double *t = realloc(a->v, nc * sizeof *t);
        if (!t)
            return -1;
        a->v = t;
        *cap = nc;
    }
    a->v[a->n++] = v;
    return 0;
}

/* strtod of s[0..len) (a JSON number, any length: correctly rounded);
 * -1 out of memory. */
static int jn_strtod(const char *s, size_t len, double *v)
{
    char tmp[64], *p = len < sizeof tmp ? tmp : malloc(len + 1);
    if (!p)
        return -1;
    memcpy(p, s, len);
    p[len] = '\0';
    *v = strtod(p, NULL);
    if (p != tmp)
        free(p);
    return 0;
}

/* A JSON number at c->i into *v: 0, -1 not a number, -2 beyond the double
 * range, -3 out of memory. */
static int jn_number(jn_cur *c, double *v)
{
    size_t e = gs_json_number_end(c->s, c->n, c->i);
    if (e == c->i)
        return -1;
    if (jn_strtod(c->s + c->i, e - c->i, v) != 0)
        return -3;
    c->i = e;
    return isfinite(*v) ? 0 : -2;
}

/* After jn_number failed at c->i: 1 if a well-formed JSON value other than
 * a number (a string, an object or array, true, false or null) stands
 * there, followed by ',' or ']' (a wrong element: the caller names it), 0 if
 * the text is malformed there ("NaN", ".5", "+1", "01": the JSON parser
 * reports it). c->i is not moved. */
static int jn_other_value(const jn_cur *c)
{
    jn_cur t = *c;
    if (t.i >= t.n)
        return 0;
    const char ch = t.s[t.i];
    if (ch == '"' || ch == '[' || ch == '{') {
        if (jn_skip_value(&t) != 0)
            return 0;
    } else if (gs_json_literal(t.s, t.n, t.i, "true") || gs_json_literal(t.s, t.n, t.i, "null")) {
        t.i += 4;
    } else if (gs_json_literal(t.s, t.n, t.i, "false")) {
        t.i += 5;
    } else {
        return 0;
    }
    jn_ws(&t);
    return t.i < t.n && (t.s[t.i] == ',' || t.s[t.i] == ']');
}

static int jn_fail(gs_error *err, gs_err code, const char *key, long i, long j, const char *what)
{
    char f[96];
    if (j >= 0)
        snprintf(f, sizeof f, "%.40s[%ld][%ld]", key, i, j);
    else if (i >= 0)
        snprintf(f, sizeof f, "%.40s[%ld]", key, i);
    else
        snprintf(f, sizeof f, "%.40s", key);
    gs_errorf(err, code, f, "%s %s", f, what);
    return -1;
}

/* One element at c->i, element (i, j) of key (j < 0: 1-D), appended to a:
 * 1, 0 malformed text (for the parser), -1 an error named. */
static int jn_element(jn_cur *c, const char *key, long i, long j, size_t max_values,
                      gsd_numarr *a, size_t *cap, gs_error *err)
{
    double v;
    int r = jn_number(c, &v);
    if (r == -3)
        return jn_fail(err, GS_ERR_NOMEM, key, -1, -1, "does not fit in memory");
    if (r == -1)
        return jn_other_value(c) ? jn_fail(err, GS_ERR_NONFINITE, key, i, j,
                                           "must be a finite number (mm)")
                                 : 0;
    if (r == -2)
        return jn_fail(err, GS_ERR_NONFINITE, key, i, j, "is beyond the double range");
    int p = jn_push(a, cap, v, max_values);
    if (p == -2)
        return jn_fail(err, GS_ERR_LIMIT, key, -1, -1, "has too many values");
    if (p == -1)
        return jn_fail(err, GS_ERR_NOMEM, key, -1, -1, "does not fit in memory");
    return 1;
}

/* The array at c->i ('['): 1-D of numbers or 2-D of equal rows. */
static int jn_array(jn_cur *c, const char *key, size_t max_values, gsd_numarr *a,
                    gs_error *err)
{
    size_t cap = 0;
    long row = -1, col = 0; /* row >= 0 once a nested array was seen */
    c->i++;                 /* '[' */
    jn_ws(c);
    int two_d = c->i < c->n && c->s[c->i] == '[';
    a->rows = two_d ? 0 : -1;
    if (c->i < c->n && c->s[c->i] == ']') {
        c->i++;
        a->cols = 0;
        return 1;
    }
    for (;;) {
        jn_ws(c);
        if (two_d) {
            row++;
            if (c->i >= c->n || c->s[c->i] != '[')
                return jn_other_value(c) ? jn_fail(err, GS_ERR_DIM, key, -1, -1,
                                                   "must be an array of equally long arrays")
                                         : 0;
            c->i++;
            col = 0;
            jn_ws(c);
            int empty = c->i < c->n && c->s[c->i] == ']';
            while (!empty) {
                jn_ws(c);
                int r = jn_element(c, key, row, col, max_values, a, &cap, err);
                if (r != 1)
                    return r;
                col++;
                jn_ws(c);
                if (c->i < c->n && c->s[c->i] == ',') {
                    c->i++;
                    continue;
                }
                break;
            }
            if (c->i >= c->n || c->s[c->i] != ']')
                return 0; /* malformed: the JSON parser reports it */
            c->i++;
            if (row == 0)
                a->cols = col;
            else if (col != a->cols)
                return jn_fail(err, GS_ERR_DIM, key, -1, -1,
                               "must be an array of equally long arrays");
            a->rows = row + 1;
        } else {
            int r = jn_element(c, key, (long)a->n, -1, max_values, a, &cap, err);
            if (r != 1)
                return r;
        }
        jn_ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->s[c->i] == ']') {
            c->i++;
            break;
        }
        return 0; /* malformed: the JSON parser reports it */
    }
    if (!two_d)
        a->cols = (long)a->n;
    return 1;
}

/* Past the top-level member `key` of the object text[0..len) and the ':'
 * after it, at its value: 1, or 0 (absent, not an object, malformed, or a
 * member name before it that cJSON may read otherwise: an escape ("\u0067")
 * or a raw control character ("g\0x" is "g"): the JSON parser decides). */
static int jn_find_member(jn_cur *c, const char *key)
{
    const size_t klen = strlen(key);
    jn_ws(c);
    if (c->i >= c->n || c->s[c->i] != '{')
        return 0;
    c->i++;
    for (;;) {
        jn_ws(c);
        if (c->i >= c->n || c->s[c->i] != '"')
            return 0; /* '}' or malformed */
        size_t k0 = c->i + 1;
        if (jn_skip_string(c) != 0)
            return 0;
        for (size_t q = k0; q + 1 < c->i; q++)
            if (c->s[q] == '\\' || (unsigned char)c->s[q] < 0x20)
                return 0;
        const int match = c->i - 1 - k0 == klen && !memcmp(c->s + k0, key, klen);
        jn_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':')
            return 0;
        c->i++;
        jn_ws(c);
        if (match)
            return 1;
        if (jn_skip_value(c) != 0)
            return 0;
        jn_ws(c);
        if (c->i >= c->n || c->s[c->i] != ',')
            return 0;
        c->i++;
    }
}

int gsd_json_take_numbers(char *text, size_t len, const char *key, size_t max_values,
                          gsd_numarr *out, gs_error *err)
{
    memset(out, 0, sizeof *out);
    jn_cur c = {text, len, 0};
    if (!jn_find_member(&c, key) || c.i >= c.n || c.s[c.i] != '[')
        return 0;
    const size_t v0 = c.i;
    int r = jn_array(&c, key, max_values, out, err);
    if (r != 1) { /* -1: an error named; 0: malformed, for the parser */
        gsd_numarr_free(out);
        return r;
    }
    memset(c.s + v0, ' ', c.i - v0); /* the value becomes "0" and spaces */
    c.s[v0] = '0';
    return 1;
}

/* 1 if the member name text[k0..k1) is one of keep (escapes never match). */
static int jn_kept(const char *s, size_t k0, size_t k1, const char *const *keep)
{
    for (size_t q = k0; q < k1; q++)
        if (s[q] == '\\')
            return 0;
    for (; *keep; keep++)
        if (strlen(*keep) == k1 - k0 && !memcmp(s + k0, *keep, k1 - k0))
            return 1;
    return 0;
}

/* The members of the object at c->i ('{'): with apply, the kept ones move
 * down to follow the '{' (never up: a member starts at or after where it
 * goes), comma-separated. Returns 1 with c->i past the '}' and *out where
 * the kept members end, 0 on malformed text (apply = 0 first: nothing has
 * moved then). */
static int jn_keep_pass(jn_cur *c, const char *const *keep, int apply, size_t *out)
{
    const size_t open = c->i;
    *out = open + 1;
    c->i++;
    jn_ws(c);
    if (c->i < c->n && c->s[c->i] == '}') {
        c->i++;
        return 1;
    }
    for (;;) {
        jn_ws(c);
        const size_t m0 = c->i;
        if (c->i >= c->n || c->s[c->i] != '"' || jn_skip_string(c) != 0)
            return 0;
        for (size_t q = m0 + 1; q + 1 < c->i; q++) /* a raw control character: */
            if ((unsigned char)c->s[q] < 0x20)      /* "p95\0x" is "p95" to cJSON */
                return 0;
        const int kept = jn_kept(c->s, m0 + 1, c->i - 1, keep);
        jn_ws(c);
        if (c->i >= c->n || c->s[c->i] != ':')
            return 0;
        c->i++;
        jn_ws(c);
        /* a value starts with one of "[{ or a number's or literal's first
         * character (not a control character cJSON would skip as space) */
        if (c->i >= c->n || !strchr("\"[{-0123456789tfn", c->s[c->i]) || c->s[c->i] == '\0' ||
            jn_skip_value(c) != 0)
            return 0;
        if (kept) {
            if (apply) {
                if (*out > open + 1)
                    c->s[*out] = ',';
                memmove(c->s + *out + (*out > open + 1), c->s + m0, c->i - m0);
            }
            *out += (*out > open + 1) + (c->i - m0);
        }
        jn_ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->s[c->i] == '}') {
            c->i++;
            return 1;
        }
        return 0;
    }
}

size_t gsd_json_keep_members(char *text, size_t len, const char *key, const char *const *keep)
{
    jn_cur c = {text, len, 0};
    if (!jn_find_member(&c, key) || c.i >= c.n || c.s[c.i] != '{')
        return (size_t)-1;
    const size_t open = c.i;
    size_t out;
    if (!jn_keep_pass(&c, keep, 0, &out)) /* checked before anything moves */
        return (size_t)-1;
    c.i = open;
    jn_keep_pass(&c, keep, 1, &out);
    /* the object's end and the rest of the text follow the kept members */
    c.s[out++] = '}';
    memmove(c.s + out, c.s + c.i, len - c.i);
    return out + (len - c.i);
}

void gsd_numarr_free(gsd_numarr *a)
{
    free(a->v);
    memset(a, 0, sizeof *a);
}
