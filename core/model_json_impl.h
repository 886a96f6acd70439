/*
 * model_json_impl.h -- what the model JSON reader's two files share
 * (private to core/model_json*.c): model_json.c parses and checks the
 * document (stages 1-4, 5b and 6, model_json.h), model_json_files.c loads
 * the files it references (stage 5). The reading context, a file reference,
 * the node and row labels matched in stage 5b, and the helper that makes
 * untrusted text printable.
 */
#ifndef GS_MODEL_JSON_IMPL_H
#define GS_MODEL_JSON_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model_json.h"

/* One reading: where its files are, its limits. */
typedef struct {
    const char *base_dir;  /* NULL: file references rejected */
    gs_model_limits lim;
} mj_ctx;

/* A file to load in stage 5: K of part `part`, or f when part < 0. Strings
 * are owned by the cJSON tree. */
typedef struct {
    int part;
    const char *ref;    /* the file name as written */
    const char *format; /* "format" of the reference object, or NULL: sniffed */
    const char *matrix; /* "matrix" (nastran-dmig NAME), or NULL */
    int storage;        /* part's "storage": MJ_DENSE, MJ_SPARSE or MJ_AUTO */
} mj_ref;

enum { MJ_AUTO = 0, MJ_DENSE, MJ_SPARSE };
/* "storage": "auto" keeps a part sparse when its file is a sparse format and
 * the matrix has at least MJ_SPARSE_MIN_N rows and at most MJ_SPARSE_DENSITY
 * of its entries stored (an FE mesh), or when a dense block would exceed
 * the block limit; condensed blocks stay dense. */
#define MJ_SPARSE_MIN_N 2000
#define MJ_SPARSE_DENSITY 0.05

/* Node labels of the model (nodes.label / nodes.component) and the row
 * labels of each part's matrix file (adopted from the reader), matched in
 * stage 5b. */
typedef struct {
    int64_t *label;    /* n_nodes, or NULL when nodes are given by nodes.dof */
    int *comp;         /* n_nodes */
    int64_t **rlabel;  /* per part: row labels of its matrix file, or NULL */
    int **rdof;        /* per part */
    int with_normals;  /* pairs.nx / ny / nz given */
    double *normal;    /* 3m: pair normals */
} mj_labels;

/* Printable-ASCII copy of untrusted text for messages and field names. */
static inline const char *mj_show(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; s && s[n] && n + 4 < cap; n++) {
        unsigned char ch = (unsigned char)s[n];
        out[n] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (s && s[n])
        memcpy(out + n, "...", 4);
    else
        out[n] = '\0';
    return out;
}

/* Check a relative reference (no absolute path, no "..", base_dir given)
 * and build base_dir/ref into full (PATH_MAX bytes); errors name field. */
gs_err gs_mj_resolve(const mj_ctx *cx, const char *ref, const char *field, char *full,
                     gs_error *err);
/* Stage 5: the nrefs block files (refs[r].part's K), side by side on up to
 * one thread per core; each part's row labels land in lb (stage 5b). The
 * first failure in the files' order is reported. */
gs_err gs_mj_load_blocks(const mj_ctx *cx, gs_model *mdl, const mj_ref *refs, int nrefs,
                         mj_labels *lb, gs_error *err);
/* An error about the content of part b's K (field "parts[b].K...", found
 * when the block was stored or by gs_model_validate: a NaN, an asymmetry)
 * names the file it came from when the message does not yet: "'ref': ...".
 * No-op for other fields and for inline blocks. */
void gs_mj_cite_file(const mj_ref *refs, int nrefs, gs_error *err);
/* Stage 5: the base load f (n values) from its npy or Matrix Market file. */
gs_err gs_mj_load_f(const mj_ctx *cx, gs_model *mdl, int n, const mj_ref *ref, gs_error *err);

#endif
