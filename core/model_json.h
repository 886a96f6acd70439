/*
 * model_json.h -- the assembly model description file ("gapsim-model" JSON).
 *
 * Owns: parsing a model description (inline data or .npy / .mtx files next to
 * it) into a validated gs_model, and writing one back (inline or with .npy
 * blocks). The format, its defaults and the sign conventions are documented
 * in docs/formats.md. Reading: model_json.c; writing: model_json_write.c.
 *
 * Contract:
 *   - Any input bytes are safe. Every error names the JSON path of the
 *     offending value in err->field ("parts[1].K", "nodes.dof[17]",
 *     "pairs.j[3]", "fasteners.load[0]", "pairz" for an unknown key) and says
 *     what is wrong; errors found by gs_model_validate (duplicates, symmetry,
 *     zero coefficients...) keep validate's own field names ("pairs[3]").
 *   - Unknown keys are rejected (they are usually typos), so are duplicated keys.
 *   - Allocation is bounded: array lengths are checked against the limits and
 *     an inline block's rows are checked before the block is allocated; a file
 *     block's header is checked before the block is allocated.
 *   - File references are resolved against base_dir, must be relative and
 *     may not contain a ".." component (GS_ERR_INVALID); with base_dir NULL
 *     (untrusted input, e.g. the HTTP daemon) every file reference is
 *     rejected. Symbolic links inside base_dir are followed.
 *   - Writing is exact: doubles are printed with %.17g and blocks written as
 *     .npy, so write -> read gives a bit-identical model. Each file is
 *     written atomically; the JSON last, so it never names a missing file.
 */
#ifndef GS_MODEL_JSON_H
#define GS_MODEL_JSON_H

#include <stddef.h>

#include "gs_error.h"
#include "model.h"

/* Largest model JSON file gs_model_read_json accepts. Inline blocks cost about
 * 20 bytes per entry; large blocks belong in .npy files. */
#define GS_MODEL_JSON_MAX_BYTES ((size_t)1 << 30)

typedef struct {
    size_t max_block_elems; /* ndof^2 of one part's block (default 20000^2) */
    int max_parts;          /* parts (default 64) */
    int max_nodes;          /* nodes (default 200000) */
    int max_pairs;          /* contact pairs, and fasteners (default 100000) */
} gs_model_limits;

void gs_model_limits_default(gs_model_limits *lim);

/* Parse text[0..len) (need not be NUL-terminated) into a validated model.
 * lim NULL: defaults. base_dir NULL: file references rejected. On error *out
 * is NULL. */
gs_err gs_model_parse_json(const char *text, size_t len, const char *base_dir,
                           const gs_model_limits *lim, gs_model **out, gs_error *err);

/* Read the file at path; file references are relative to its directory. */
gs_err gs_model_read_json(const char *path, const gs_model_limits *lim, gs_model **out,
                          gs_error *err);

/* Write dir/basename.json. Unless inline_blocks, block b goes to
 * dir/basename.part<b>.npy and f (if any) to dir/basename.f.npy, named
 * relative to the JSON. basename: non-empty, no '/'. Non-finite values are
 * GS_ERR_NONFINITE (JSON cannot hold them). */
gs_err gs_model_write_json(const gs_model *mdl, const char *dir, const char *basename,
                           int inline_blocks, gs_error *err);
/* The same with the parts' matrices written in matrix_format (a format of
 * matrix_write.h, or "npy" / NULL: dense blocks as .npy, sparse parts as
 * Matrix Market coordinate): dir/basename.part<b>.<suffix> (mtx, stif.mtx,
 * coord.mtx, pch, inp), referenced with their format. Sparse parts are
 * never written inline and carry "storage": "sparse". */
gs_err gs_model_write_json_as(const gs_model *mdl, const char *dir, const char *basename,
                              int inline_blocks, const char *matrix_format, gs_error *err);

#endif
