/*
 * json_parse.h -- the one entry point to cJSON's parser, JSON's tokens, and
 * the reader of a number in a parsed document.
 *
 * cJSON (1.7.15, Debian) records the position of a parse error in a global
 * variable on every parse, which is a data race when the daemon's threads
 * parse concurrently. Every parse in gapsim goes through gs_json_parse, which
 * serializes the parser call and returns the error offset itself.
 *
 * cJSON also reads some numbers leniently ("1.", "01", "000", "1.e5") and
 * skips any control byte as white space. gs_json_check_tokens holds a text
 * to RFC 8259's tokens (white space, structure, strings without raw control
 * characters and with valid escapes, true / false / null, numbers), and
 * gs_json_parse applies it, so every JSON gapsim reads (model files,
 * request bodies, pattern files) has one grammar. The structure is left to
 * cJSON.
 */
#ifndef GS_JSON_PARSE_H
#define GS_JSON_PARSE_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Parse text[0..len) (need not be NUL-terminated). On failure returns NULL
 * and *err_offset (may be NULL) is the byte offset where parsing stopped.
 * A token RFC 8259 does not have (gs_json_check_tokens) or a string holding
 * U+0000 (escaped; a C string would end there) is a failure at its offset
 * too.
 * Only white space may follow the value: otherwise NULL with *trailing = 1
 * (trailing may be NULL) and *err_offset at the first unexpected byte. */
cJSON *gs_json_parse(const char *text, size_t len, size_t *err_offset, int *trailing);

/* Check the tokens of text[0..len) (above): (size_t)-1 if every token is
 * valid, else the offset of the first bad byte. O(len). */
size_t gs_json_check_tokens(const char *text, size_t len);

/* The end of the JSON number (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?)
 * that starts at s[i] (n bytes in all), or i if none starts there. */
size_t gs_json_number_end(const char *s, size_t n, size_t i);
/* 1 if ch can be part of a number or literal token (or of what a lenient
 * parser would take for one: letters, digits, + - .). */
int gs_json_token_char(char ch);
/* 1 if the literal lit stands at s[i] (n bytes in all), not followed by a
 * token character. */
int gs_json_literal(const char *s, size_t n, size_t i, const char *lit);

/* The number at obj.key, or at obj.key.sub when sub is not NULL (members
 * matched case-sensitively); absent when a member is missing or not a
 * number. O(members). */
double gs_json_num(const cJSON *obj, const char *key, const char *sub, double absent);

#endif
