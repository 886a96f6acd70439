/*
 * mmio.c -- Matrix Market reader (array / coordinate, real / integer,
 * general / symmetric) into dense row-major arrays, and the array writer.
 *
 * The reader walks the buffer line by line with explicit bounds (the buffer is
 * not NUL-terminated), splits each line into whitespace-separated tokens that
 * are copied into a small local buffer before strtod sees them, and checks
 * the declared sizes against max_elems before the one allocation. Every entry
 * line must hold exactly the tokens its format asks for, so a complex file
 * mislabelled as real, or two values on one line, is reported with its line
 * number. Cost: O(len + rows*cols).
 */
#include "mmio.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "fmt_g17.h"

typedef struct {
    const char *p, *end;
    long line; /* number of the line last returned (1-based) */
} mm_cur;

typedef struct {
    const char *s;
    size_t n;
} mm_tok;

/* Next line [*ls, *le) without its '\n'; 0 at end of input. */
static int mm_line(mm_cur *c, const char **ls, const char **le)
{
    if (c->p >= c->end)
        return 0;
    const char *s = c->p;
    const char *nl = memchr(s, '\n', (size_t)(c->end - s));
    *ls = s;
    *le = nl ? nl : c->end;
    c->p = nl ? nl + 1 : c->end;
    c->line++;
    return 1;
}

static int mm_sp(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Split a line into at most max tokens; returns max + 1 when there are more. */
static int mm_split(const char *ls, const char *le, mm_tok *tok, int max)
{
    int nt = 0;
    const char *p = ls;
    for (;;) {
        while (p < le && mm_sp(*p))
            p++;
        if (p >= le)
            return nt;
        const char *s = p;
        while (p < le && !mm_sp(*p))
            p++;
        if (nt == max)
            return max + 1;
        tok[nt].s = s;
        tok[nt].n = (size_t)(p - s);
        nt++;
    }
}

static char mm_lower(char ch)
{
    return (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
}

static int mm_tokeq(mm_tok t, const char *w)
{
    size_t n = strlen(w);
    if (t.n != n)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (mm_lower(t.s[k]) != mm_lower(w[k]))
            return 0;
    return 1;
}

/* Printable copy of a token for messages (non-printables as '?'). */
static const char *mm_show(char *out, size_t cap, mm_tok t)
{
    size_t n = t.n < cap - 4 ? t.n : cap - 4;
    for (size_t k = 0; k < n; k++) {
        unsigned char ch = (unsigned char)t.s[k];
        out[k] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
    }
    if (n < t.n)
        memcpy(out + n, "...", 4);
    else
        out[n] = '\0';
    return out;
}

/* A real literal: decimal syntax or [+-]inf/infinity/nan.
 * 0 ok, -1 syntax error, -2 finite literal beyond the double range. */
static int mm_real(mm_tok t, double *out)
{
    char b[128];
    if (t.n == 0 || t.n >= sizeof b)
        return -1;
    memcpy(b, t.s, t.n);
    b[t.n] = '\0';
    size_t i = (b[0] == '+' || b[0] == '-') ? 1 : 0;
    int special = 0;
    mm_tok rest = {b + i, t.n - i};
    if (mm_tokeq(rest, "inf") || mm_tokeq(rest, "infinity") || mm_tokeq(rest, "nan")) {
        special = 1;
    } else {
        size_t nd = 0;
        while (b[i] >= '0' && b[i] <= '9')
            i++, nd++;
        if (b[i] == '.')
            for (i++; b[i] >= '0' && b[i] <= '9'; i++)
                nd++;
        if (nd == 0)
            return -1;
        if (b[i] == 'e' || b[i] == 'E') {
            i++;
            if (b[i] == '+' || b[i] == '-')
                i++;
            size_t ne = 0;
            while (b[i] >= '0' && b[i] <= '9')
                i++, ne++;
            if (ne == 0)
                return -1;
        }
        if (i != t.n)
            return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(b, &end);
    if (end != b + t.n)
        return -1;
    if (!special && isinf(v))
        return -2;
    *out = v;
    return 0;
}

/* [+-]digits; saturates at LLONG_MIN/MAX. 0 ok, -1 syntax. */
static int mm_integer(mm_tok t, long long *out)
{
    size_t i = 0;
    int neg = 0;
    if (t.n && (t.s[0] == '+' || t.s[0] == '-'))
        neg = t.s[i++] == '-';
    if (i >= t.n)
        return -1;
    unsigned long long v = 0;
    int over = 0;
    for (; i < t.n; i++) {
        if (t.s[i] < '0' || t.s[i] > '9')
            return -1;
        unsigned d = (unsigned)(t.s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    if (over || v > (unsigned long long)LLONG_MAX)
        *out = neg ? LLONG_MIN : LLONG_MAX;
    else
        *out = neg ? -(long long)v : (long long)v;
    return 0;
}

/* A size-line count: digits only, <= INT_MAX (or any size for nnz). */
static gs_err mm_count(mm_tok t, const char *what, long line, int is_dim, unsigned long long *out,
                       gs_error *err)
{
    char show[48];
    long long v;
    if (mm_integer(t, &v) != 0 || v < 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: %s '%s' is not a non-negative integer",
                         line, what, mm_show(show, sizeof show, t));
    if (is_dim && v > INT_MAX)
        return gs_errorf(err, GS_ERR_LIMIT, "", "line %ld: %s %s exceeds the limit of %d", line,
                         what, mm_show(show, sizeof show, t), INT_MAX);
    if (v == LLONG_MAX)
        return gs_errorf(err, GS_ERR_LIMIT, "", "line %ld: %s count %s too large", line, what,
                         mm_show(show, sizeof show, t));
    *out = (unsigned long long)v;
    return GS_OK;
}

/* One entry index (1-based) checked against [1, hi]. */
static gs_err mm_index(mm_tok t, const char *what, long line, int hi, int *out, gs_error *err)
{
    char show[48];
    long long v;
    if (mm_integer(t, &v) != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: %s index '%s' is not an integer", line,
                         what, mm_show(show, sizeof show, t));
    if (v < 1 || v > hi)
        return gs_errorf(err, GS_ERR_RANGE, "", "line %ld: %s index %s out of range [1, %d]", line,
                         what, mm_show(show, sizeof show, t), hi);
    *out = (int)v - 1;
    return GS_OK;
}

static gs_err mm_value(mm_tok t, int integer_field, long line, double *out, gs_error *err)
{
    char show[48];
    long long iv;
    if (integer_field && mm_integer(t, &iv) != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: '%s' is not an integer (field is "
                         "'integer')", line, mm_show(show, sizeof show, t));
    int r = mm_real(t, out);
    if (r == -2)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: number '%s' beyond the double range",
                         line, mm_show(show, sizeof show, t));
    if (r != 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: invalid number '%s'", line,
                         mm_show(show, sizeof show, t));
    return GS_OK;
}

/* Banner word: index in ok[] (>= 0), or an error naming the word. */
static gs_err mm_word(mm_tok t, const char *what, const char *const *ok, const char *const *unsup,
                      int *idx, gs_error *err)
{
    char show[48];
    for (int k = 0; ok[k]; k++)
        if (mm_tokeq(t, ok[k])) {
            *idx = k;
            return GS_OK;
        }
    for (int k = 0; unsup[k]; k++)
        if (mm_tokeq(t, unsup[k]))
            return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "Matrix Market %s '%s' not supported",
                             what, mm_show(show, sizeof show, t));
    return gs_errorf(err, GS_ERR_FORMAT, "", "line 1: unknown Matrix Market %s '%s'", what,
                     mm_show(show, sizeof show, t));
}

/* Skip blank and comment lines; 0 at end of input. */
static int mm_content_line(mm_cur *c, mm_tok *tok, int max, int *nt)
{
    const char *ls, *le;
    while (mm_line(c, &ls, &le)) {
        *nt = mm_split(ls, le, tok, max);
        if (*nt > 0 && tok[0].s[0] != '%')
            return 1;
    }
    return 0;
}

/* Where parsed entries go: size() once after the size line (may refuse
 * with an error), then entry() per stored value -- (i, j) 0-based, the lower
 * triangle for symmetric files (the sink mirrors if it wants both). */
typedef struct mm_sink {
    gs_err (*size)(struct mm_sink *k, unsigned long long r, unsigned long long c,
                   unsigned long long entries, int symmetric, int coord, gs_error *err);
    gs_err (*entry)(struct mm_sink *k, size_t i, size_t j, double v, gs_error *err);
} mm_sink;

/* Banner, size line and entries into the sink. O(len). */
static gs_err mm_parse(const char *buf, size_t len, mm_sink *sink, gs_error *err)
{
    static const char *const objects[] = {"matrix", NULL}, *const objects_no[] = {"vector", NULL};
    static const char *const formats[] = {"array", "coordinate", NULL}, *const none[] = {NULL};
    static const char *const fields[] = {"real", "double", "integer", NULL},
                             *const fields_no[] = {"complex", "pattern", NULL};
    static const char *const syms[] = {"general", "symmetric", NULL},
                             *const syms_no[] = {"hermitian", "skew-symmetric", NULL};
    mm_cur c = {buf, buf + len, 0};
    mm_tok tk[6];
    const char *ls, *le;
    gs_err rc;
    int obj, fmt, fld, sym, nt;

    if (!mm_line(&c, &ls, &le))
        return gs_errorf(err, GS_ERR_FORMAT, "", "empty input: no %%%%MatrixMarket banner");
    nt = mm_split(ls, le, tk, 5);
    if (nt < 1 || !mm_tokeq(tk[0], "%%MatrixMarket"))
        return gs_errorf(err, GS_ERR_FORMAT, "", "line 1: missing %%%%MatrixMarket banner");
    if (nt != 5)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "line 1: banner needs 4 words after %%%%MatrixMarket "
                         "(object format field symmetry)");
    if ((rc = mm_word(tk[1], "object", objects, objects_no, &obj, err)) != GS_OK ||
        (rc = mm_word(tk[2], "format", formats, none, &fmt, err)) != GS_OK ||
        (rc = mm_word(tk[3], "field", fields, fields_no, &fld, err)) != GS_OK ||
        (rc = mm_word(tk[4], "symmetry", syms, syms_no, &sym, err)) != GS_OK)
        return rc;
    const int coord = fmt == 1, integer = fld == 2, symmetric = sym == 1;

    /* size line */
    const int want = coord ? 3 : 2;
    if (!mm_content_line(&c, tk, want, &nt))
        return gs_errorf(err, GS_ERR_FORMAT, "", "missing size line after the banner");
    if (nt != want)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: size line must be '%s'", c.line,
                         coord ? "rows cols entries" : "rows cols");
    unsigned long long r, k, nnz = 0;
    if ((rc = mm_count(tk[0], "rows", c.line, 1, &r, err)) != GS_OK ||
        (rc = mm_count(tk[1], "cols", c.line, 1, &k, err)) != GS_OK ||
        (coord && (rc = mm_count(tk[2], "entries", c.line, 0, &nnz, err)) != GS_OK))
        return rc;
    if (symmetric && r != k)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: symmetric matrix must be square, got "
                         "%llu x %llu", c.line, r, k);
    const unsigned long long expected = coord ? nnz : symmetric ? r * (r + 1) / 2 : r * k;
    if ((rc = sink->size(sink, r, k, expected, symmetric, coord, err)) != GS_OK)
        return rc;
    const int nr = (int)r, ncol = (int)k;

    /* entries */
    unsigned long long count = 0;
    size_t ai = 0, aj = 0; /* next array position (row, column) */
    const int ent = coord ? 3 : 1; /* tokens per entry line */
    while (mm_content_line(&c, tk, ent, &nt)) {
        if (count == expected)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: more entries than the %llu "
                             "declared", c.line, expected);
        double v;
        if (!coord) {
            if (nt != 1)
                return gs_errorf(err, GS_ERR_FORMAT, "",
                                 "line %ld: expected one value per line, found more", c.line);
            if ((rc = mm_value(tk[0], integer, c.line, &v, err)) != GS_OK ||
                (rc = sink->entry(sink, ai, aj, v, err)) != GS_OK)
                return rc;
            if (++ai == (size_t)nr) { /* next column; symmetric starts at the diagonal */
                aj++;
                ai = symmetric ? aj : 0;
            }
        } else {
            if (nt != 3) {
                if (nt > 3)
                    return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: expected 'row col "
                                     "value', found more than 3 tokens", c.line);
                return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: expected 'row col value', "
                                 "found %d token%s", c.line, nt, nt == 1 ? "" : "s");
            }
            int i, j;
            if ((rc = mm_index(tk[0], "row", c.line, nr, &i, err)) != GS_OK ||
                (rc = mm_index(tk[1], "column", c.line, ncol, &j, err)) != GS_OK ||
                (rc = mm_value(tk[2], integer, c.line, &v, err)) != GS_OK)
                return rc;
            if (symmetric && i < j)
                return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: entry (%d, %d) above the "
                                 "diagonal of a symmetric matrix (only the lower triangle is "
                                 "stored)", c.line, i + 1, j + 1);
            if ((rc = sink->entry(sink, (size_t)i, (size_t)j, v, err)) != GS_OK)
                return rc;
        }
        count++;
    }
    if (count < expected)
        return gs_errorf(err, GS_ERR_FORMAT, "",
                         "expected %llu entries, found %llu (input ends at line %ld)", expected,
                         count, c.line);
    return GS_OK;
}

/* ---- dense: a rows x cols row-major array ------------------------------------ */

typedef struct {
    mm_sink base;
    size_t max_elems, ncol;
    int symmetric, coord, rows, cols;
    double *out;
} mm_dense;

static gs_err mm_dense_size(mm_sink *k, unsigned long long r, unsigned long long c,
                            unsigned long long entries, int symmetric, int coord, gs_error *err)
{
    mm_dense *d = (mm_dense *)k;
    (void)entries;
    if (c && r > SIZE_MAX / sizeof(double) / c)
        return gs_errorf(err, GS_ERR_LIMIT, "", "matrix of %llu x %llu too large", r, c);
    const size_t elems = (size_t)r * (size_t)c;
    if (elems > d->max_elems)
        return gs_errorf(err, GS_ERR_LIMIT, "",
                         "matrix of %llu x %llu = %zu elements exceeds the limit of %zu", r, c,
                         elems, d->max_elems);
    if (!(d->out = calloc(elems ? elems : 1, sizeof *d->out)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for a %llu x %llu matrix", r, c);
    d->ncol = (size_t)c;
    d->rows = (int)r;
    d->cols = (int)c;
    d->symmetric = symmetric;
    d->coord = coord;
    return GS_OK;
}

/* Coordinate duplicates are summed (the MM convention), array values stored
 * as read (bit for bit, -0.0 included); symmetric entries mirrored. */
static gs_err mm_dense_entry(mm_sink *k, size_t i, size_t j, double v, gs_error *err)
{
    mm_dense *d = (mm_dense *)k;
    (void)err;
    double *a = &d->out[i * d->ncol + j], *b = &d->out[j * d->ncol + i];
    *a = d->coord ? *a + v : v;
    if (d->symmetric && i != j)
        *b = *a;
    return GS_OK;
}

gs_err gs_mm_read_mem(const char *buf, size_t len, size_t max_elems, double **data, int *rows,
                      int *cols, gs_error *err)
{
    mm_dense d = {{mm_dense_size, mm_dense_entry}, max_elems, 0, 0, 0, 0, 0, NULL};
    *data = NULL;
    *rows = *cols = 0;
    gs_err rc = mm_parse(buf, len, &d.base, err);
    if (rc != GS_OK) {
        free(d.out);
        return rc;
    }
    *data = d.out;
    *rows = d.rows;
    *cols = d.cols;
    return GS_OK;
}

/* ---- sparse: triplets of a square matrix --------------------------------------- */

typedef struct {
    mm_sink base;
    size_t max_n, max_nnz;
    gs_coo *coo;
    unsigned long long n;
    int symmetric, coord;
} mm_sparse;

static gs_err mm_sparse_size(mm_sink *k, unsigned long long r, unsigned long long c,
                             unsigned long long entries, int symmetric, int coord, gs_error *err)
{
    mm_sparse *s = (mm_sparse *)k;
    s->coord = coord;
    if (r != c)
        return gs_errorf(err, GS_ERR_DIM, "", "a stiffness matrix is square, got %llu x %llu", r,
                         c);
    if (r > s->max_n || r > INT_MAX)
        return gs_errorf(err, GS_ERR_LIMIT, "", "matrix of order %llu exceeds the limit of %zu",
                         r, s->max_n);
    if (entries > s->max_nnz)
        return gs_errorf(err, GS_ERR_LIMIT, "", "%llu stored entries exceed the limit of %zu",
                         entries, s->max_nnz);
    s->n = r;
    s->symmetric = symmetric;
    return gs_coo_reserve(s->coo, (size_t)entries, err);
}

static gs_err mm_sparse_entry(mm_sink *k, size_t i, size_t j, double v, gs_error *err)
{
    mm_sparse *s = (mm_sparse *)k;
    if (v == 0.0 && !s->coord)
        return GS_OK; /* an array file's zeros are not stored; a coordinate file's are */
    return gs_coo_add(s->coo, (int64_t)i, (int64_t)j, v, err);
}

gs_err gs_mm_read_sparse(const char *buf, size_t len, size_t max_n, size_t max_nnz,
                         gs_spmat *out, gs_error *err)
{
    gs_coo coo;
    gs_coo_init(&coo, max_nnz);
    mm_sparse s = {{mm_sparse_size, mm_sparse_entry}, max_n, max_nnz, &coo, 0, 0, 0};
    memset(out, 0, sizeof *out);
    gs_err rc = mm_parse(buf, len, &s.base, err);
    if (rc != GS_OK) {
        gs_coo_free(&coo);
        return rc;
    }
    /* a general file may still hold a symmetric matrix: gs_coo_to_spmat with
     * GS_COO_GENERAL keeps every entry (stype 0) */
    return gs_coo_to_spmat(&coo, (int64_t)s.n, s.symmetric ? GS_COO_SYMMETRIC : GS_COO_GENERAL,
                           NULL, NULL, out, err);
}

gs_err gs_mm_read_file(const char *path, size_t max_elems, double **data, int *rows, int *cols,
                       gs_error *err)
{
    char *buf;
    size_t len;
    *data = NULL;
    *rows = *cols = 0;
    gs_err rc = gs_file_read_all(path, GS_MM_MAX_FILE_BYTES, &buf, &len, err);
    if (rc != GS_OK)
        return rc;
    rc = gs_mm_read_mem(buf, len, max_elems, data, rows, cols, err);
    free(buf);
    if (rc != GS_OK)
        gs_file_error_context(err, path);
    return rc;
}

gs_err gs_mm_write_file(const char *path, const double *rowmajor, int rows, int cols,
                        gs_error *err)
{
    if (rows < 0 || cols < 0)
        return gs_errorf(err, GS_ERR_INVALID, "", "negative size %d x %d", rows, cols);
    if (rows && cols && !rowmajor)
        return gs_errorf(err, GS_ERR_INVALID, "", "no data for a %d x %d matrix", rows, cols);
    gs_wfile wf;
    gs_err rc = gs_wfile_open(&wf, path, err);
    if (rc != GS_OK)
        return rc;
    fprintf(wf.fp, "%%%%MatrixMarket matrix array real general\n%d %d\n", rows, cols);
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++) {
            gs_fput_g17(wf.fp, rowmajor[(size_t)i * (size_t)cols + (size_t)j]);
            fputc('\n', wf.fp);
        }
    return gs_wfile_commit(&wf, err);
}
