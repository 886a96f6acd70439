/*
 * json_numbers.h -- the large number arrays of a JSON body, without a tree.
 *
 * Owns: the JSON texts gapsimd reads or serves that are too large for a
 * tree. (1) Taking the value of one top-level member of a JSON object text (the
 * gap vector "g" of a solve, the gap cloud "gaps" of a cloud job) straight
 * into a double array when it is an array of numbers or an array of equally
 * long arrays of numbers, and blanking it in the text (spaces and a 0), so
 * that cJSON then parses only the small rest. A cJSON tree costs ~40 bytes
 * per number; this costs 8 (plus the body itself): a 64 MiB body of gaps
 * needs ~1.4x its size instead of ~40x.
 *
 * (2) Keeping some members of a top-level member's object (the per-pair
 * arrays of a job summary, ?pairs=), in place.
 *
 * Numbers follow JSON's syntax (no NaN, Infinity or hex). A literal beyond
 * the double range, or another well-formed value where a number belongs (a
 * string, null, an object), is GS_ERR_NONFINITE naming "key[i]" /
 * "key[i][j]"; unequal rows GS_ERR_DIM naming "key"; malformed text is left
 * to the JSON parser (which reports the byte). Cost O(len), one pass. A
 * number may have any length (read whole, correctly rounded).
 *
 * The tokens of a whole body are checked by core/json_parse.h's
 * gs_json_check_tokens (before the arrays are taken: a malformed element
 * they skip must not pass unseen).
 */
#ifndef GSD_JSON_NUMBERS_H
#define GSD_JSON_NUMBERS_H

#include <stddef.h>

#include "gs_error.h"

typedef struct {
    double *v;  /* rows x cols, row-major (malloc'ed) */
    size_t n;   /* values */
    long rows;  /* -1 for a 1-D array */
    long cols;  /* values per row (1-D: n) */
} gsd_numarr;

/* Take the top-level member `key` of the object in text[0..len) (modified:
 * its value becomes spaces and "0"). Returns 1 if taken into *out, 0 if the
 * member is absent, its value is not an array, or the text is not an object
 * (left for the JSON parser to judge), -1 on an error (err names the
 * element; GS_ERR_LIMIT past max_values). */
int gsd_json_take_numbers(char *text, size_t len, const char *key, size_t max_values,
                          gsd_numarr *out, gs_error *err);
void gsd_numarr_free(gsd_numarr *a);

/* Of the object that is the value of the top-level member `key` of the
 * object text[0..len), keep the members named in keep (a NULL-ended list;
 * a name written with an escape never matches), in their order, and drop
 * the others; text is rewritten in place (it only shrinks). Returns the new
 * length, or (size_t)-1 with text unchanged when key is absent, its value
 * is not an object, or the text is malformed (including a member name
 * before key written with an escape or a raw control character, one in
 * that object with a raw control character, or a raw control character
 * before one of its values: cJSON would read those leniently). O(len). */
size_t gsd_json_keep_members(char *text, size_t len, const char *key, const char *const *keep);

#endif
