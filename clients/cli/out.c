/*
 * out.c -- human output helpers of the `gapsim` command (see out.h).
 */
#include "out.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fmt_g17.h"
#include "http.h"

const char *gc_jstr(const cJSON *o, const char *k, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

double gc_jnum(const cJSON *o, const char *k, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

int gc_jint(const cJSON *o, const char *k, int def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valueint : def;
}

long gc_next_offset(const cJSON *page, long offset)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(page, "next_offset");
    if (!cJSON_IsNumber(v) || !(v->valuedouble > (double)offset && v->valuedouble <= INT_MAX) ||
        v->valuedouble != floor(v->valuedouble))
        return -1;
    return (long)v->valuedouble;
}

int gc_jbool(const cJSON *o, const char *k, int def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

int gc_jis_num(const cJSON *o, const char *k)
{
    return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, k));
}

void gc_kv(const char *key, const char *fmt, ...)
{
    char k[64];
    snprintf(k, sizeof k, "%s:", key);
    printf("%-17s ", k);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

const char *gc_fmt_time(double t, char *buf, size_t cap)
{
    if (!(t > 0)) {
        snprintf(buf, cap, "-");
        return buf;
    }
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
}

static int put_str(gc_buf *b, const char *s)
{
    int rc = gc_buf_add(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; !rc && *c; c++) {
        char esc[8];
        if (*c == '"' || *c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*c;
            rc = gc_buf_add(b, esc, 2);
        } else if (*c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *c);
            rc = gc_buf_add(b, esc, 6);
        } else {
            rc = gc_buf_add(b, c, 1);
        }
    }
    return rc || gc_buf_add(b, "\"", 1);
}

static int put_json(gc_buf *b, const cJSON *v)
{
    char num[GS_FMT_G17_MAX];
    if (cJSON_IsNumber(v)) {
        if (!isfinite(v->valuedouble))
            return gc_buf_add(b, "null", 4);
        int n = gs_fmt_g17(v->valuedouble, num);
        return gc_buf_add(b, num, (size_t)n);
    }
    if (cJSON_IsString(v))
        return put_str(b, v->valuestring ? v->valuestring : "");
    if (cJSON_IsTrue(v))
        return gc_buf_add(b, "true", 4);
    if (cJSON_IsFalse(v))
        return gc_buf_add(b, "false", 5);
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
        int obj = cJSON_IsObject(v), rc = gc_buf_add(b, obj ? "{" : "[", 1);
        const cJSON *c;
        int first = 1;
        cJSON_ArrayForEach(c, v)
        {
            if (!first)
                rc = rc || gc_buf_add(b, ",", 1);
            first = 0;
            if (obj)
                rc = rc || put_str(b, c->string ? c->string : "") || gc_buf_add(b, ":", 1);
            rc = rc || put_json(b, c);
        }
        return rc || gc_buf_add(b, obj ? "}" : "]", 1);
    }
    return gc_buf_add(b, "null", 4);
}

char *gc_json_print(const cJSON *v)
{
    gc_buf b = {0};
    if (put_json(&b, v)) {
        gc_buf_free(&b);
        return NULL;
    }
    return b.p;
}

int gc_print_obj(FILE *fp, cJSON *o)
{
    char *text = o ? gc_json_print(o) : NULL;
    cJSON_Delete(o);
    if (!text) {
        fprintf(stderr, "gapsim: out of memory\n");
        return -1;
    }
    fprintf(fp, "%s\n", text);
    free(text);
    return 0;
}

FILE *gc_report_stream(const char *out)
{
    struct stat a, b;
    if (fstat(STDOUT_FILENO, &a) == 0 && stat(out, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return stderr;
    return stdout;
}
