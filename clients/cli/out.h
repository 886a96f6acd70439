/*
 * out.h -- human output of the `gapsim` command: typed lookups in the
 * server's JSON answers, "key: value" lines, times and numbers formatted the
 * same way by every command.
 */
#ifndef GC_OUT_H
#define GC_OUT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* o[k] as a string / number / bool; the default when missing or mistyped. */
const char *gc_jstr(const cJSON *o, const char *k, const char *def);
double gc_jnum(const cJSON *o, const char *k, double def);
int gc_jint(const cJSON *o, const char *k, int def);
/* A results page's "next_offset" if it is a whole number after offset (a
 * page's start), else -1: the last page, or an answer that would not move
 * on (no cast of an out-of-range double, no endless loop). */
long gc_next_offset(const cJSON *page, long offset);
int gc_jbool(const cJSON *o, const char *k, int def);
/* 1 if o[k] is a number. */
int gc_jis_num(const cJSON *o, const char *k);

/* A JSON tree as compact text (malloc'ed; NULL out of memory) with every
 * number printed exactly (%.17g: cJSON's own printer may round the last
 * digit, which would change a gap vector on its way to the server). */
char *gc_json_print(const cJSON *v);

/* A JSON object the command builds itself (the path it wrote, an id: any
 * bytes, escaped as JSON needs) printed on fp as one line, then freed.
 * 0, or -1 out of memory (o NULL too: a failed cJSON_CreateObject). */
int gc_print_obj(FILE *fp, cJSON *o);

/* Where the line saying what -o wrote goes: stdout, or stderr when the
 * file written is the command's stdout itself (-o /dev/stdout): the line
 * would be appended to the data. */
FILE *gc_report_stream(const char *out);

/* "key:" padded to a column, then the formatted value, newline (stdout). */
void gc_kv(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A unix time as "2026-11-22 01:37:22" UTC into buf; "-" if t <= 0. */
const char *gc_fmt_time(double t, char *buf, size_t cap);

#endif
