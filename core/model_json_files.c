/*
 * model_json_files.c -- stage 5 of reading a model JSON: the files it
 * references. A reference resolves inside the model's directory only (no
 * absolute path, no ".."); a file's format is the one named or is sniffed
 * from its first bytes (never from the extension); a part's K is streamed
 * from .npy into its block, or read through matrix_io.h and kept sparse or
 * made dense by the part's "storage"; the block files load side by side.
 * The parsing stages are model_json.c's (model_json_impl.h).
 */
#include "model_json_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linalg.h"
#include "matrix_io.h"
#include "mmio.h"
#include "npy.h"

gs_err gs_mj_resolve(const mj_ctx *cx, const char *ref, const char *field, char *full,
                     gs_error *err)
{
    char show[80];
    mj_show(show, sizeof show, ref);
    if (!cx->base_dir)
        return gs_errorf(err, GS_ERR_INVALID, field,
                         "file references not allowed here (got '%s'): give the data inline",
                         show);
    if (!*ref)
        return gs_errorf(err, GS_ERR_INVALID, field, "empty file name");
    if (ref[0] == '/')
        return gs_errorf(err, GS_ERR_INVALID, field,
                         "absolute path '%s' not allowed: name the file relative to the model", show);
    for (const char *c = ref; *c;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return gs_errorf(err, GS_ERR_INVALID, field,
                             "'..' not allowed in '%s': files must lie inside the model's "
                             "directory", show);
        c += n + (e ? 1 : 0);
    }
    int w = snprintf(full, PATH_MAX, "%s/%s", cx->base_dir, ref);
    if (w < 0 || w >= PATH_MAX)
        return gs_errorf(err, GS_ERR_INVALID, field, "path of '%s' too long", show);
    return GS_OK;
}

/* The format of a referenced file: as named, else sniffed from its first
 * bytes (never from the extension). */
static gs_err mj_format(const char *full, const mj_ref *r, const char **fmt, gs_error *err)
{
    if (r->format) {
        *fmt = r->format;
        return GS_OK;
    }
    unsigned char head[16384];
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", full, strerror(errno));
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    if (got < 0)
        return gs_errorf(err, GS_ERR_IO, "", "cannot read '%s': %s", full, strerror(errno));
    const gs_matfmt *f = gs_matfmt_sniff(head, (size_t)got);
    if (!f)
        return gs_errorf(err, GS_ERR_FORMAT, "", "cannot tell the format of '%s' from its "
                         "content: give {\"file\": ..., \"format\": ...} (one of %s)", full,
                         gs_matfmt_names());
    *fmt = f->name;
    return GS_OK;
}

/* Load part b's K (ndof x ndof) from a file into a freshly allocated block. */
/* The row labels of a matrix file, kept for nodes given by label (stage
 * 6): moved out of a block that becomes dense; copied from one that stays
 * sparse, whose errors (not_spd, singular: core/spchol.c) then name the FE
 * node and component rather than a row number. O(n). */
static gs_err keep_row_labels(gs_spmat *sp, int sparse, int64_t **label, int **dof,
                              const char *path, gs_error *err)
{
    if (!sparse || !sp->label || !sp->dof) {
        *label = sp->label;
        *dof = sp->dof;
        sp->label = NULL;
        sp->dof = NULL;
        return GS_OK;
    }
    *label = malloc(sizeof(int64_t) * (size_t)sp->n);
    *dof = malloc(sizeof(int) * (size_t)sp->n);
    if (!*label || !*dof)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the row labels of '%s'", path);
    memcpy(*label, sp->label, sizeof(int64_t) * (size_t)sp->n);
    memcpy(*dof, sp->dof, sizeof(int) * (size_t)sp->n);
    return GS_OK;
}

static gs_err mj_load_block(const mj_ctx *cx, gs_model *mdl, const mj_ref *r, mj_labels *lb,
                            gs_error *err)
{
    char full[PATH_MAX], field[48];
    const int b = r->part;
    snprintf(field, sizeof field, "parts[%d].K", b);
    const char *fmt;
    gs_err rc = gs_mj_resolve(cx, r->ref, field, full, err);
    if (rc != GS_OK)
        return rc;
    if ((rc = mj_format(full, r, &fmt, err)) != GS_OK)
        goto fail;
    const int nd = mdl->parts[b].ndof; /* set by stage 3 (block not yet allocated) */
    if (!strcmp(fmt, "npy") && r->storage == MJ_SPARSE) {
        rc = gs_errorf(err, GS_ERR_UNSUPPORTED, "", "'%s' is a dense npy array: \"storage\": "
                       "\"sparse\" needs a sparse matrix file", full);
        goto fail;
    }
    if (!strcmp(fmt, "npy") && (size_t)nd > cx->lim.max_block_elems / (size_t)nd) {
        rc = gs_errorf(err, GS_ERR_LIMIT, "", "a dense block of %d x %d exceeds the limit of "
                       "%zu elements", nd, nd, cx->lim.max_block_elems);
        goto fail;
    }
    if (!strcmp(fmt, "npy")) { /* streamed into the block: no second copy */
        gs_npy_file f;
        if ((rc = gs_npy_open(full, SIZE_MAX, &f, err)) != GS_OK)
            goto fail;
        if (f.info.ndim != 2 || f.info.shape[0] != (size_t)nd || f.info.shape[1] != (size_t)nd) {
            rc = gs_errorf(err, GS_ERR_DIM, "", "'%s' holds a %zu x %zu array%s, expected %d x %d",
                           full, f.info.shape[0], f.info.shape[1],
                           f.info.ndim == 1 ? " (1-D)" : "", nd, nd);
        } else if ((rc = gs_model_alloc_block(mdl, b, nd, err)) == GS_OK) {
            rc = gs_npy_read_data(&f, mdl->parts[b].K, GS_NPY_COL_MAJOR, err);
        }
        gs_npy_close(&f);
        if (rc != GS_OK)
            goto fail;
        return GS_OK;
    }
    gs_spmat sp;
    gs_matread_opts o = {.max_n = (size_t)INT_MAX, .max_nnz = cx->lim.max_block_elems,
                         .name = r->matrix};
    if ((rc = gs_matrix_read_file(full, fmt, &o, &sp, err)) != GS_OK)
        goto fail;
    /* stored entries of the full matrix (both triangles) */
    const double full_nnz = sp.stype == -1 ? 2.0 * (double)sp.nnz - (double)sp.n : (double)sp.nnz;
    const int too_big = (size_t)nd > cx->lim.max_block_elems / (size_t)nd;
    const int sparse = r->storage == MJ_SPARSE ||
                       (r->storage == MJ_AUTO &&
                        (too_big || (nd >= MJ_SPARSE_MIN_N &&
                                     full_nnz <= MJ_SPARSE_DENSITY * (double)nd * (double)nd)));
    if (sp.n != nd) {
        rc = gs_errorf(err, GS_ERR_DIM, "", "'%s' holds a %lld x %lld matrix, expected %d x %d",
                       full, (long long)sp.n, (long long)sp.n, nd, nd);
    } else if (!sparse && too_big) {
        rc = gs_errorf(err, GS_ERR_LIMIT, "", "a dense block of %d x %d exceeds the limit of %zu "
                       "elements (\"storage\": \"sparse\" keeps it sparse)", nd, nd,
                       cx->lim.max_block_elems);
    } else {
        rc = keep_row_labels(&sp, sparse, &lb->rlabel[b], &lb->rdof[b], full, err);
        if (rc == GS_OK && sparse)
            rc = gs_model_set_sparse_block(mdl, b, &sp, err); /* takes sp */
        else if (rc == GS_OK && (rc = gs_model_alloc_block(mdl, b, nd, err)) == GS_OK)
            gs_spmat_to_dense(&sp, mdl->parts[b].K);
    }
    gs_spmat_free(&sp);
    if (rc == GS_OK)
        return GS_OK;
fail:
    if (err && err->field[0] == '\0')
        gs_error_prefix_field(err, field);
    return rc;
}

void gs_mj_cite_file(const mj_ref *refs, int nrefs, gs_error *err)
{
    int b = -1, used = 0;
    if (!err || sscanf(err->field, "parts[%d].K%n", &b, &used) != 1 || used == 0)
        return;
    for (int r = 0; r < nrefs; r++)
        if (refs[r].part == b && !strstr(err->msg, refs[r].ref)) {
            char msg[sizeof err->msg];
            size_t n = (size_t)snprintf(msg, sizeof msg, "'%s': ", refs[r].ref);
            if (n < sizeof msg) /* the message as much as fits after the name */
                memcpy(msg + n, err->msg, sizeof msg - n - 1);
            msg[sizeof msg - 1] = '\0';
            memcpy(err->msg, msg, sizeof msg);
            return;
        }
}

/* Stage 5's block files side by side, one file per thread at a time: each
 * load writes only its part's block and row labels (mj_load_block). */
typedef struct {
    const mj_ctx *cx;
    gs_model *mdl;
    const mj_ref *refs;
    mj_labels *lb;
} mj_block_job;

/* gs_run_items' item r: the file of refs[r]. */
static gs_err mj_block_item(void *ctx, int r, gs_error *err)
{
    mj_block_job *j = ctx;
    return mj_load_block(j->cx, j->mdl, &j->refs[r], j->lb, err);
}

/* Load the nrefs block files, on up to one thread per core: two 80 MB
 * Matrix Market plates in 1.4 s instead of 2.5 s (reading text is the
 * cost, and each file is its own). The first failure in the files' order
 * is reported, as one after the other would. No BLAS in a file's read:
 * OpenBLAS's process-wide setting is left alone (blas1 0). */
gs_err gs_mj_load_blocks(const mj_ctx *cx, gs_model *mdl, const mj_ref *refs, int nrefs,
                         mj_labels *lb, gs_error *err)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mj_block_job j = {.cx = cx, .mdl = mdl, .refs = refs, .lb = lb};
    return gs_run_items(cores > 1 ? (int)cores : 1, 0, nrefs, mj_block_item, &j, err);
}

/* Load the base load f (n values: shape (n,), (n, 1) or (1, n)). */
gs_err gs_mj_load_f(const mj_ctx *cx, gs_model *mdl, int n, const mj_ref *ref, gs_error *err)
{
    char full[PATH_MAX];
    const char *fmt;
    gs_err rc = gs_mj_resolve(cx, ref->ref, "f", full, err);
    if (rc != GS_OK)
        return rc;
    if ((rc = mj_format(full, ref, &fmt, err)) != GS_OK)
        goto fail;
    size_t r, c;
    if (strcmp(fmt, "npy") && strcmp(fmt, "matrix-market")) {
        rc = gs_errorf(err, GS_ERR_UNSUPPORTED, "", "'%s' is a %s file: a load vector is read "
                       "from a npy or matrix-market file", full, fmt);
        goto fail;
    }
    if (!strcmp(fmt, "npy")) {
        gs_npy_file fl;
        if ((rc = gs_npy_open(full, SIZE_MAX, &fl, err)) != GS_OK)
            goto fail;
        r = fl.info.shape[0];
        c = fl.info.shape[1];
        if ((r != (size_t)n || c != 1) && (r != 1 || c != (size_t)n))
            rc = gs_errorf(err, GS_ERR_DIM, "", "'%s' holds a %zu x %zu array, expected %d values",
                           full, r, c, n);
        else if ((rc = gs_model_alloc_f(mdl, err)) == GS_OK)
            rc = gs_npy_read_data(&fl, mdl->f, GS_NPY_ROW_MAJOR, err);
        gs_npy_close(&fl);
        if (rc != GS_OK)
            goto fail;
        return GS_OK;
    }
    double *d = NULL;
    int ri, ci;
    size_t cap = cx->lim.max_block_elems > (size_t)n ? cx->lim.max_block_elems : (size_t)n;
    if ((rc = gs_mm_read_file(full, cap, &d, &ri, &ci, err)) != GS_OK)
        goto fail;
    if ((ri != n || ci != 1) && (ri != 1 || ci != n))
        rc = gs_errorf(err, GS_ERR_DIM, "", "'%s' holds a %d x %d matrix, expected %d values", full,
                       ri, ci, n);
    else if ((rc = gs_model_alloc_f(mdl, err)) == GS_OK)
        memcpy(mdl->f, d, (size_t)n * sizeof *d);
    free(d);
    if (rc == GS_OK)
        return GS_OK;
fail:
    if (err && err->field[0] == '\0')
        gs_error_prefix_field(err, "f");
    return rc;
}
