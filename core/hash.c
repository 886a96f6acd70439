/*
 * hash.c -- XXH3-128 content hashes of models and solve keys (see hash.h for
 * the canonical encoding and what counts as content).
 */
#include "hash.h"

#include <stdint.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack: no allocation, no failure */
#include <xxhash.h>

#include "byteorder.h"

#define HX_CHUNK 512 /* doubles (or bytes) per canonicalization chunk */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HX_LITTLE_ENDIAN 1
#else
#define HX_LITTLE_ENDIAN 0
#endif

static void hx_i64(XXH3_state_t *st, long long v)
{
    unsigned char b[8];
    gs_le64_put(b, (uint64_t)v);
    XXH3_128bits_update(st, b, sizeof b);
}

/* n doubles as little-endian IEEE bits. O(n); no copy on little-endian hosts. */
static void hx_f64s(XXH3_state_t *st, const double *a, size_t n)
{
#if HX_LITTLE_ENDIAN
    XXH3_128bits_update(st, a, n * sizeof *a);
#else
    unsigned char buf[HX_CHUNK * 8];
    for (size_t i = 0; i < n;) {
        size_t c = n - i < HX_CHUNK ? n - i : HX_CHUNK;
        for (size_t j = 0; j < c; j++) {
            uint64_t u;
            memcpy(&u, &a[i + j], sizeof u);
            gs_le64_put(buf + 8 * j, u);
        }
        XXH3_128bits_update(st, buf, c * 8);
        i += c;
    }
#endif
}

static void hx_f64(XXH3_state_t *st, double v)
{
    hx_f64s(st, &v, 1);
}

/* n zeros (+0.0), the encoding of an absent vector. O(n). */
static void hx_zeros(XXH3_state_t *st, size_t n)
{
    static const double zero[HX_CHUNK]; /* all +0.0 */
    for (size_t i = 0; i < n; i += HX_CHUNK)
        hx_f64s(st, zero, n - i < HX_CHUNK ? n - i : HX_CHUNK);
}

/* Domain tag including its NUL, so "a" + data never equals "ab" + data. */
static void hx_tag(XXH3_state_t *st, const char *tag)
{
    XXH3_128bits_update(st, tag, strlen(tag) + 1);
}

static void hx_digest(XXH3_state_t *st, char out[GS_HASH_HEX])
{
    static const char hex[] = "0123456789abcdef";
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    for (int i = 0; i < 16; i++) { /* O(16) */
        out[2 * i] = hex[c.digest[i] >> 4];
        out[2 * i + 1] = hex[c.digest[i] & 0xf];
    }
    out[32] = '\0';
}

/* ---- model ---------------------------------------------------------------- */

/* A sparse part: -1 (no dense part has it), nnz, then the column pointers,
 * row indices and values of its stored matrix. O(nnz). */
static void hx_sparse(XXH3_state_t *st, const gs_spmat *k)
{
    hx_i64(st, -1);
    hx_i64(st, k->nnz);
    for (int64_t j = 0; j <= k->n; j++)
        hx_i64(st, k->colptr[j]);
    for (int64_t p = 0; p < k->nnz; p++)
        hx_i64(st, k->rowind[p]);
    hx_f64s(st, k->val, (size_t)k->nnz);
}

/* Per part: ndof, then the ndof x ndof block (dense) or hx_sparse.
 * O(sum ndof_b^2) dense, O(nnz) sparse. */
static void hx_parts(XXH3_state_t *st, const gs_model *mdl)
{
    for (int b = 0; b < mdl->n_parts; b++) {
        const int nb = mdl->parts[b].ndof;
        hx_i64(st, nb);
        if (mdl->parts[b].Ksp)
            hx_sparse(st, mdl->parts[b].Ksp);
        else
            hx_f64s(st, mdl->parts[b].K, (size_t)nb * (size_t)nb);
    }
}

/* Per node: part, dof, xyz. O(n_nodes). */
static void hx_nodes(XXH3_state_t *st, const gs_model *mdl)
{
    for (int i = 0; i < mdl->n_nodes; i++) {
        const gs_node *nd = &mdl->nodes[i];
        hx_i64(st, nd->part);
        hx_i64(st, nd->dof);
        hx_f64s(st, nd->xyz, 3);
    }
}

/* Per pair: both nodes and coefficients (coef[1] of a fixed pair as 0). O(m). */
static void hx_pairs(XXH3_state_t *st, const gs_model *mdl)
{
    for (int k = 0; k < mdl->m; k++) {
        const gs_pair *pr = &mdl->pairs[k];
        hx_i64(st, pr->node[0]);
        hx_i64(st, pr->node[1]);
        hx_f64(st, pr->coef[0]);
        hx_f64(st, pr->node[1] == GS_FIXED ? 0.0 : pr->coef[1]);
    }
}

/* Per fastener: pair, load. O(n_fast). */
static void hx_fasteners(XXH3_state_t *st, const gs_model *mdl)
{
    for (int i = 0; i < mdl->n_fast; i++) {
        hx_i64(st, mdl->fast[i].pair);
        hx_f64(st, mdl->fast[i].load);
    }
}

_Static_assert(sizeof(((gs_model *)0)->released_hash) == GS_HASH_HEX,
               "gs_model.released_hash holds a content hash");

void gs_model_hash(const gs_model *mdl, char out[GS_HASH_HEX])
{
    if (gs_model_dense_released(mdl)) { /* the blocks are gone; their hash was kept */
        memcpy(out, mdl->released_hash, GS_HASH_HEX);
        return;
    }
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    hx_tag(&st, "gapsim-model-v1");
    hx_i64(&st, mdl->joint);
    hx_i64(&st, mdl->n_parts);
    hx_i64(&st, mdl->n_nodes);
    hx_i64(&st, mdl->m);
    hx_i64(&st, mdl->n_fast);
    hx_i64(&st, mdl->n);
    hx_parts(&st, mdl);
    hx_nodes(&st, mdl);
    hx_pairs(&st, mdl);
    hx_fasteners(&st, mdl);
    if (mdl->f)
        hx_f64s(&st, mdl->f, (size_t)mdl->n);
    else
        hx_zeros(&st, (size_t)mdl->n);
    hx_digest(&st, out);
}

/* ---- solve key -------------------------------------------------------------- */

/* Load vector with every zero (either sign) as +0.0; NULL = all zero. O(m). */
static void hx_load(XXH3_state_t *st, size_t m, const double *load)
{
    if (!load) {
        hx_zeros(st, m);
        return;
    }
    double buf[HX_CHUNK];
    for (size_t i = 0; i < m; i += HX_CHUNK) {
        size_t c = m - i < HX_CHUNK ? m - i : HX_CHUNK;
        for (size_t j = 0; j < c; j++)
            buf[j] = load[i + j] == 0.0 ? 0.0 : load[i + j];
        hx_f64s(st, buf, c);
    }
}

/* Equality flags as bytes 0/1; NULL = all 0. O(m). */
static void hx_eq(XXH3_state_t *st, size_t m, const unsigned char *eq)
{
    unsigned char buf[HX_CHUNK];
    for (size_t i = 0; i < m; i += HX_CHUNK) {
        size_t c = m - i < HX_CHUNK ? m - i : HX_CHUNK;
        for (size_t j = 0; j < c; j++)
            buf[j] = (unsigned char)(eq && eq[i + j] ? 1 : 0);
        XXH3_128bits_update(st, buf, c);
    }
}

void gs_solve_key(const char *model_hash, int m, const double *load, const unsigned char *eq,
                  const double *g, double tol, char out[GS_HASH_HEX])
{
    char mh[32] = {0}; /* the model hash, NUL-padded to 32 bytes */
    if (model_hash)
        memcpy(mh, model_hash, strnlen(model_hash, sizeof mh));
    const size_t mm = m > 0 ? (size_t)m : 0;
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    hx_tag(&st, "gapsim-solve-key-v1");
    XXH3_128bits_update(&st, mh, sizeof mh);
    hx_i64(&st, m);
    hx_load(&st, mm, load);
    hx_eq(&st, mm, eq);
    hx_f64s(&st, g, mm);
    hx_f64(&st, tol);
    hx_digest(&st, out);
}
