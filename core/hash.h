/*
 * hash.h -- content hashes of assemblies and of single solves (cache keys).
 *
 * Owns: the canonical byte encoding that is hashed (XXH3-128) and its text
 * form, 32 lowercase hex characters (the canonical big-endian digest). The
 * encoding starts with a domain tag and a format version, writes every
 * integer as a little-endian int64 and every double as the little-endian
 * bytes of its IEEE-754 bits, and prefixes each variable-length section with
 * its length, so distinct contents cannot collide by concatenation and the
 * hash does not depend on the host's byte order or on struct padding.
 *
 * What counts as content (documented choices):
 *   - values are compared by their bits: -0.0 and 0.0 (and different NaN
 *     payloads) hash differently, except where stated below;
 *   - model: the name and the part names are not content; a model without a
 *     base load (f == NULL) hashes like one with f all zero (the
 *     precomputation is the same); coef[1] of a fixed pair (node[1] ==
 *     GS_FIXED) is ignored by the model and by the hash;
 *   - solve key: a NULL load and an all-zero load give the same key, and any
 *     zero load entry (0.0 or -0.0) is hashed as +0.0; eq is normalized to
 *     0/1 (NULL = all 0); g and tol are hashed by their bits (so -0.0 and
 *     0.0 in g may give different keys: a spurious cache miss, never a wrong
 *     hit).
 * Changing the encoding changes every hash: bump the version tags then.
 * Thread-safe (no shared state; the XXH3 state lives on the stack).
 */
#ifndef GS_HASH_H
#define GS_HASH_H

#include "model.h"

#define GS_HASH_HEX 33 /* 32 hex characters + NUL */

/* Hash of a validated model's mathematical content: joint type, parts (ndof,
 * K blocks), nodes (part, dof, xyz), pairs (nodes, coefs), fasteners (pair,
 * load), base load f. Not the name. Equal content -> equal hash; any change
 * of a value -> different hash. out: 33 chars incl. NUL.
 * O(sum ndof_b^2 + n_nodes + m + n_fast + n). */
void gs_model_hash(const gs_model *mdl, char out[GS_HASH_HEX]);

/* Cache key of one solve: the assembly's content hash (a 32-char string; at
 * most its first 32 characters are used), the pair-space load vector (m,
 * NULL = no load), the equality flags (m, NULL = none), the gap vector g (m)
 * and the tolerance (its bits). NULL and all-zero load give the same key;
 * same for eq. -0.0 and 0.0 in g may hash differently. O(m). */
void gs_solve_key(const char *model_hash, int m, const double *load, const unsigned char *eq,
                  const double *g, double tol, char out[GS_HASH_HEX]);

#endif
