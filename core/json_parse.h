/*
 * json_parse.h -- the one entry point to cJSON's parser, and the reader of
 * a number in a parsed document.
 *
 * cJSON (1.7.15, Debian) records the position of a parse error in a global
 * variable on every parse, which is a data race when the daemon's threads
 * parse concurrently. Every parse in gapsim goes through gs_json_parse, which
 * serializes the parser call and returns the error offset itself.
 */
#ifndef GS_JSON_PARSE_H
#define GS_JSON_PARSE_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Parse text[0..len) (need not be NUL-terminated). On failure returns NULL
 * and *err_offset (may be NULL) is the byte offset where parsing stopped.
 * A string holding U+0000 (escaped; a C string would end there) or a raw
 * control character (which JSON forbids; cJSON lets it through) is a
 * failure at its offset too.
 * Only white space may follow the value: otherwise NULL with *trailing = 1
 * (trailing may be NULL) and *err_offset at the first unexpected byte. */
cJSON *gs_json_parse(const char *text, size_t len, size_t *err_offset, int *trailing);

/* The number at obj.key, or at obj.key.sub when sub is not NULL (members
 * matched case-sensitively); absent when a member is missing or not a
 * number. O(members). */
double gs_json_num(const cJSON *obj, const char *key, const char *sub, double absent);

#endif
