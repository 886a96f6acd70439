/*
 * npz_io.c -- SciPy scipy.sparse.save_npz files (a zip of .npy members),
 * read with libzip from memory.
 *
 * Members: format.npy (0-d '|S3' or '<U3': "csr", "csc" or "coo"),
 * shape.npy (2 integers), data.npy ('<f8'), and indices.npy + indptr.npy
 * (csr, csc) or row.npy + col.npy (coo); index arrays '<i4' or '<i8'.
 * _is_array.npy (sparse arrays) is ignored; any other member is an error.
 * Every member's uncompressed size (from the zip directory) is checked
 * against the limits before it is inflated; libzip checks the CRC. The
 * matrix is general (stype 0): symmetry is checked by the model.
 * Cost: O(input + nnz + n).
 */
#include "matrix_io.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zip.h>

#include "byteorder.h"
#include "npy.h"

enum { NPZ_FORMAT, NPZ_SHAPE, NPZ_DATA, NPZ_INDICES, NPZ_INDPTR, NPZ_ROW, NPZ_COL, NPZ_N };
static const char *const npz_members[NPZ_N] = {"format.npy", "shape.npy", "data.npy",
                                               "indices.npy", "indptr.npy", "row.npy", "col.npy"};

typedef struct {
    unsigned char *bytes[NPZ_N];
    size_t len[NPZ_N];
    gs_npy_any h[NPZ_N];
} npz_files;

static gs_err npz_load(zip_t *za, int k, size_t cap, npz_files *nf, gs_error *err)
{
    zip_stat_t st;
    zip_int64_t idx = zip_name_locate(za, npz_members[k], 0);
    if (idx < 0 || zip_stat_index(za, (zip_uint64_t)idx, 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_SIZE))
        return gs_errorf(err, GS_ERR_FORMAT, "", "member %s missing", npz_members[k]);
    if (st.size > cap)
        return gs_errorf(err, GS_ERR_LIMIT, "", "member %s: %" PRIu64 " bytes exceed the limit of "
                         "%zu", npz_members[k], (uint64_t)st.size, cap);
    zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)idx, 0);
    if (!zf)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "member %s: %s", npz_members[k],
                         zip_strerror(za));
    size_t n = (size_t)st.size;
    unsigned char *b = malloc(n ? n : 1);
    gs_err rc = GS_OK;
    if (!b) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for member %s", npz_members[k]);
    } else {
        zip_int64_t got = zip_fread(zf, b, n);
        char probe;
        if (got < 0 || (size_t)got != n || zip_fread(zf, &probe, 1) != 0)
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "member %s: %s", npz_members[k],
                           got < 0 ? zip_file_strerror(zf) : "size differs from the directory");
    }
    zip_fclose(zf);
    if (rc == GS_OK)
        rc = gs_npy_parse_any(b, n, &nf->h[k], err);
    if (rc == GS_OK && nf->h[k].fortran_order && nf->h[k].ndim > 1)
        rc = gs_errorf(err, GS_ERR_UNSUPPORTED, "", "Fortran order");
    if (rc != GS_OK) {
        free(b);
        if (err && !strstr(err->msg, npz_members[k])) {
            char tmp[sizeof err->msg];
            memcpy(tmp, err->msg, sizeof tmp);
            snprintf(err->msg, sizeof err->msg, "member %s: %.290s", npz_members[k], tmp);
        }
        return rc;
    }
    nf->bytes[k] = b;
    nf->len[k] = n;
    return GS_OK;
}

/* Element size of a supported dtype for member k, checking the data length. */
static gs_err npz_check(const npz_files *nf, int k, const char *const *ok, size_t *isz,
                        gs_error *err)
{
    const gs_npy_any *h = &nf->h[k];
    int which = -1;
    for (int q = 0; ok[q]; q++)
        if (strcmp(h->descr, ok[q]) == 0)
            which = q;
    if (which < 0)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "member %s: dtype '%s' not supported",
                         npz_members[k], h->descr);
    size_t s = (size_t)(h->descr[2] - '0');
    if (h->descr[1] == 'U')
        s *= 4;
    *isz = s;
    if (nf->len[k] - h->data_offset != h->count * s)
        return gs_errorf(err, GS_ERR_FORMAT, "", "member %s: %zu data bytes, the header announces "
                         "%zu", npz_members[k], nf->len[k] - h->data_offset, h->count * s);
    return GS_OK;
}

static int64_t npz_int_at(const unsigned char *p, size_t isz, size_t i)
{
    uint64_t u = 0;
    p += i * isz;
    for (size_t k = isz; k-- > 0;)
        u = (u << 8) | p[k];
    if (isz == 4)
        return (int64_t)(int32_t)(uint32_t)u;
    return (int64_t)u;
}

static double npz_f8_at(const unsigned char *p, size_t i)
{
    return gs_le_f8_get(p + 8 * i);
}

/* An index array of exactly `count` entries (1-D); *isz its element size. */
static gs_err npz_index_array(const npz_files *nf, int k, size_t count, size_t *isz,
                              gs_error *err)
{
    static const char *const ints[] = {"<i4", "<i8", NULL};
    gs_err rc = npz_check(nf, k, ints, isz, err);
    if (rc != GS_OK)
        return rc;
    if (nf->h[k].ndim != 1 || nf->h[k].count != count)
        return gs_errorf(err, GS_ERR_DIM, "", "member %s: expected %zu entries in a 1-D array, "
                         "got %zu", npz_members[k], count, nf->h[k].count);
    return GS_OK;
}

static gs_err npz_format(const npz_files *nf, int *kind, gs_error *err)
{
    static const char *const strs[] = {"|S3", "<U3", "|S4", "<U4", NULL};
    size_t isz;
    gs_err rc = npz_check(nf, NPZ_FORMAT, strs, &isz, err);
    if (rc != GS_OK)
        return rc;
    if (nf->h[NPZ_FORMAT].ndim != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "member format.npy: expected a 0-d string");
    const unsigned char *p = nf->bytes[NPZ_FORMAT] + nf->h[NPZ_FORMAT].data_offset;
    char name[5] = "";
    size_t step = isz > 4 && nf->h[NPZ_FORMAT].descr[1] == 'U' ? 4 : 1;
    for (size_t c = 0; c * step < isz && c < 4; c++) {
        unsigned char ch = p[c * step];
        name[c] = (char)(ch >= 0x20 && ch < 0x7f ? ch : '?');
        if (!ch)
            break;
    }
    *kind = !strcmp(name, "csr") ? 0 : !strcmp(name, "csc") ? 1 : !strcmp(name, "coo") ? 2 : -1;
    if (*kind < 0)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "sparse format '%s' not supported (csr, csc, "
                         "coo are)", name);
    return GS_OK;
}

static gs_err npz_build(const npz_files *nf, int kind, int64_t n, size_t nnz,
                        const gs_matread_opts *o, gs_spmat *out, gs_error *err)
{
    gs_coo coo;
    size_t ia, ib;
    gs_err rc;
    gs_coo_init(&coo, o->max_nnz);
    const unsigned char *data = nf->bytes[NPZ_DATA] + nf->h[NPZ_DATA].data_offset;
    if ((rc = gs_coo_reserve(&coo, nnz, err)) != GS_OK)
        goto fail;
    if (kind == 2) {
        if ((rc = npz_index_array(nf, NPZ_ROW, nnz, &ia, err)) != GS_OK ||
            (rc = npz_index_array(nf, NPZ_COL, nnz, &ib, err)) != GS_OK)
            goto fail;
        const unsigned char *r = nf->bytes[NPZ_ROW] + nf->h[NPZ_ROW].data_offset;
        const unsigned char *c = nf->bytes[NPZ_COL] + nf->h[NPZ_COL].data_offset;
        for (size_t k = 0; k < nnz; k++) {
            int64_t i = npz_int_at(r, ia, k), j = npz_int_at(c, ib, k);
            if (i < 0 || i >= n || j < 0 || j >= n) {
                rc = gs_errorf(err, GS_ERR_RANGE, "", "entry %zu: (%" PRId64 ", %" PRId64 ") "
                               "outside the %" PRId64 " x %" PRId64 " shape", k, i, j, n, n);
                goto fail;
            }
            gs_coo_add(&coo, i, j, npz_f8_at(data, k), err); /* reserved: cannot fail */
        }
    } else {
        if ((rc = npz_index_array(nf, NPZ_INDPTR, (size_t)n + 1, &ia, err)) != GS_OK ||
            (rc = npz_index_array(nf, NPZ_INDICES, nnz, &ib, err)) != GS_OK)
            goto fail;
        const unsigned char *ptr = nf->bytes[NPZ_INDPTR] + nf->h[NPZ_INDPTR].data_offset;
        const unsigned char *ind = nf->bytes[NPZ_INDICES] + nf->h[NPZ_INDICES].data_offset;
        if (npz_int_at(ptr, ia, 0) != 0 || npz_int_at(ptr, ia, (size_t)n) != (int64_t)nnz) {
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "member indptr.npy: must run from 0 to nnz = "
                           "%zu", nnz);
            goto fail;
        }
        for (int64_t a = 0; a < n; a++) {
            int64_t p0 = npz_int_at(ptr, ia, (size_t)a), p1 = npz_int_at(ptr, ia, (size_t)a + 1);
            if (p1 < p0 || p1 > (int64_t)nnz) {
                rc = gs_errorf(err, GS_ERR_FORMAT, "", "member indptr.npy: entry %" PRId64
                               " decreases or exceeds nnz", a + 1);
                goto fail;
            }
            for (int64_t p = p0; p < p1; p++) {
                int64_t b = npz_int_at(ind, ib, (size_t)p);
                if (b < 0 || b >= n) {
                    rc = gs_errorf(err, GS_ERR_RANGE, "", "member indices.npy: entry %" PRId64
                                   " = %" PRId64 " out of range [0, %" PRId64 ")", p, b, n);
                    goto fail;
                }
                double v = npz_f8_at(data, (size_t)p);
                gs_coo_add(&coo, kind == 0 ? a : b, kind == 0 ? b : a, v, err);
            }
        }
    }
    return gs_coo_to_spmat(&coo, n, GS_COO_GENERAL, NULL, NULL, out, err);
fail:
    gs_coo_free(&coo);
    return rc;
}

gs_err gs_read_npz(const unsigned char *buf, size_t len, const gs_matread_opts *o, gs_spmat *out,
                   gs_error *err)
{
    npz_files nf;
    memset(&nf, 0, sizeof nf);
    memset(out, 0, sizeof *out);
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(len ? buf : (const void *)"", len, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze) : NULL;
    gs_err rc = GS_OK;
    if (!za) {
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "not a readable zip (.npz) file: %s",
                       zip_error_strerror(&ze));
        if (src)
            zip_source_free(src);
        zip_error_fini(&ze);
        return rc;
    }
    zip_error_fini(&ze);
    /* members: only the known ones */
    zip_int64_t nent = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < nent && rc == GS_OK; i++) {
        const char *nm = zip_get_name(za, (zip_uint64_t)i, 0);
        int k = -1;
        for (int q = 0; nm && q < NPZ_N; q++)
            if (!strcmp(nm, npz_members[q]))
                k = q;
        if (k < 0 && (!nm || strcmp(nm, "_is_array.npy") != 0)) {
            char show[64];
            snprintf(show, sizeof show, "%.48s", nm ? nm : "?");
            for (char *c = show; *c; c++)
                if (*c < 0x20 || *c > 0x7e)
                    *c = '?';
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "unexpected member '%s' (not a "
                           "scipy.sparse.save_npz file?)", show);
        }
    }
    const size_t small = 65536 + 256;
    size_t big = o->max_nnz > o->max_n + 1 ? o->max_nnz : o->max_n + 1;
    big = big > (SIZE_MAX - small) / 8 ? SIZE_MAX : small + 8 * big;
    int kind = -1;
    if (rc == GS_OK && (rc = npz_load(za, NPZ_FORMAT, small, &nf, err)) == GS_OK &&
        (rc = npz_format(&nf, &kind, err)) == GS_OK)
        rc = npz_load(za, NPZ_SHAPE, small, &nf, err);
    size_t isz;
    int64_t n = 0;
    static const char *const ints[] = {"<i4", "<i8", NULL}, *const f8[] = {"<f8", NULL};
    if (rc == GS_OK && (rc = npz_check(&nf, NPZ_SHAPE, ints, &isz, err)) == GS_OK) {
        const unsigned char *p = nf.bytes[NPZ_SHAPE] + nf.h[NPZ_SHAPE].data_offset;
        if (nf.h[NPZ_SHAPE].count != 2)
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "member shape.npy: expected 2 entries");
        else if ((n = npz_int_at(p, isz, 0)) != npz_int_at(p, isz, 1) || n < 0)
            rc = gs_errorf(err, GS_ERR_DIM, "", "a stiffness matrix is square, got %" PRId64
                           " x %" PRId64, npz_int_at(p, isz, 0), npz_int_at(p, isz, 1));
        else if ((uint64_t)n > o->max_n)
            rc = gs_errorf(err, GS_ERR_LIMIT, "", "order %" PRId64 " exceeds the limit of %zu", n,
                           o->max_n);
    }
    const int need[2][2] = {{NPZ_INDICES, NPZ_INDPTR}, {NPZ_ROW, NPZ_COL}};
    if (rc == GS_OK && (rc = npz_load(za, NPZ_DATA, big, &nf, err)) == GS_OK &&
        (rc = npz_check(&nf, NPZ_DATA, f8, &isz, err)) == GS_OK) {
        size_t nnz = nf.h[NPZ_DATA].count;
        if (nf.h[NPZ_DATA].ndim != 1)
            rc = gs_errorf(err, GS_ERR_FORMAT, "", "member data.npy: expected a 1-D array");
        else if (nnz > o->max_nnz)
            rc = gs_errorf(err, GS_ERR_LIMIT, "", "%zu entries exceed the limit of %zu", nnz,
                           o->max_nnz);
        for (int q = 0; q < 2 && rc == GS_OK; q++)
            rc = npz_load(za, need[kind == 2][q], big, &nf, err);
        if (rc == GS_OK)
            rc = npz_build(&nf, kind, n, nnz, o, out, err);
    }
    for (int k = 0; k < NPZ_N; k++)
        free(nf.bytes[k]);
    zip_discard(za);
    return rc;
}
