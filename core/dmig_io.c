/*
 * dmig_io.c -- Nastran DMIG (direct matrix input at grid points) reader.
 *
 * A DMIG matrix is a header entry and column entries:
 *   DMIG  NAME  "0"  IFO  TIN  TOUT  POLAR        NCOL
 *   DMIG  NAME  GJ   CJ        G1    C1    A1     B1
 *         G2    C2   A2   B2   G3    C3    A3     B3   (continuations)
 * in small field (8-column fields), large field ("DMIG*", 16-column fields,
 * "*" continuation lines) or free field (comma-separated), mixed freely.
 * An entry starts at a line whose first field begins with a letter; lines
 * whose first field is blank or starts with '+' or '*' continue it; field 10
 * (columns 73-80, or the 10th free field) is the continuation marker and is
 * ignored; '$' lines are comments; free fields hold at most 32 characters
 * (fixed ones 8 or 16); columns past 80 are ignored; tabs expand
 * to 8-column stops. Entries other than DMIG (a whole bulk deck) are skipped.
 * Supported: IFO 6 (symmetric: one triangle, or both with equal entries) and
 * IFO 1 (square), TIN 1 or 2 (real). Rows and columns are (grid, component)
 * pairs (component 0 for scalar points), ordered ascending. Reals take E/D
 * exponents and Nastran's implicit exponent (1.5+3).
 * Cost: O(input + nnz log nnz).
 */
#include "matrix_io.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe_text.h"

#define DMIG_MAX_GRID ((int64_t)1 << 40)
#define DMIG_FREE_WIDTH 32   /* longest free field (fixed fields are 8 or 16 wide) */

/* One entry (header or column with its continuations): its data fields,
 * fields 2..9 of every line in order, as offsets into a growing text store
 * (a column of a large matrix has thousands of terms). */
typedef struct {
    char *text;          /* trimmed field texts, concatenated */
    size_t tlen, tcap;
    size_t *off;         /* per field: offset in text */
    unsigned char *len;  /* per field: length (<= DMIG_FREE_WIDTH) */
    long *line;          /* per field: input line */
    int nf, cap;
    char key[16];        /* entry keyword, upper case, without '*' */
    long first_line;
} dmig_entry;

static gs_text_span dmig_f(const dmig_entry *e, int k)
{
    return k < e->nf ? (gs_text_span){e->text + e->off[k], e->len[k]} : (gs_text_span){"", 0};
}

static long dmig_ln(const dmig_entry *e, int k)
{
    return k < e->nf ? e->line[k] : e->first_line;
}

static void dmig_entry_free(dmig_entry *e)
{
    free(e->text);
    free(e->off);
    free(e->len);
    free(e->line);
}

typedef struct {
    char name[9];
    int have_header, ifo, tin;
    long header_line;
} dmig_matrix;

/* Tab-expanded copy of a line's first 80 columns. */
static size_t dmig_expand(gs_text_span line, char out[81])
{
    size_t col = 0;
    for (size_t i = 0; i < line.n && col < 80; i++) {
        if (line.s[i] == '\t') {
            size_t to = (col / 8 + 1) * 8;
            while (col < to && col < 80)
                out[col++] = ' ';
        } else {
            out[col++] = line.s[i];
        }
    }
    out[col] = '\0';
    return col;
}

static gs_err dmig_push(dmig_entry *e, gs_text_span f, long ln, gs_error *err)
{
    gs_text_span t = gs_text_trim(f);
    if (t.n > DMIG_FREE_WIDTH) {
        char show[48];
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: field '%s' longer than %d characters",
                         ln, gs_text_show(t, show, sizeof show), DMIG_FREE_WIDTH);
    }
    if (e->nf == e->cap) { /* the input bounds the growth: every field costs >= 1 byte */
        if (e->cap > INT_MAX / 4)
            return gs_errorf(err, GS_ERR_LIMIT, "", "line %ld: an entry of too many fields", ln);
        int cap = e->cap ? 2 * e->cap : 64;
        size_t *off = realloc(e->off, (size_t)cap * sizeof *off);
        if (off)
            e->off = off;
        unsigned char *len = off ? realloc(e->len, (size_t)cap) : NULL;
        if (len)
            e->len = len;
        long *line = len ? realloc(e->line, (size_t)cap * sizeof *line) : NULL;
        if (!line)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for an entry of %d fields", cap);
        e->line = line;
        e->cap = cap;
    }
    if (e->tlen + t.n + 1 > e->tcap) {
        size_t cap = e->tcap ? 2 * e->tcap : 1024;
        while (cap < e->tlen + t.n + 1)
            cap *= 2;
        char *text = realloc(e->text, cap);
        if (!text)
            return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for an entry of %d fields", e->nf);
        e->text = text;
        e->tcap = cap;
    }
    memcpy(e->text + e->tlen, t.s, t.n);
    e->off[e->nf] = e->tlen;
    e->len[e->nf] = (unsigned char)t.n;
    e->line[e->nf] = ln;
    e->tlen += t.n;
    e->nf++;
    return GS_OK;
}

/* Field 1 of a line and its data fields; *cont: a continuation line. */
static gs_err dmig_split(gs_text_span line, long ln, dmig_entry *e, int *cont, char key[16],
                         gs_error *err)
{
    gs_text_span f[12];
    gs_err rc;
    if (memchr(line.s, ',', line.n)) { /* free field */
        int nf = gs_text_split(line, ',', f, 10);
        if (nf > 10)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: more than 10 free fields", ln);
        gs_text_span k = f[0];
        *cont = k.n == 0 || k.s[0] == '+' || k.s[0] == '*';
        snprintf(key, 16, "%.*s", (int)(k.n < 15 ? k.n : 15), k.s);
        for (int i = 1; i < 9; i++)
            if ((rc = dmig_push(e, i < nf ? f[i] : (gs_text_span){"", 0}, ln, err)) != GS_OK)
                return rc;
        return GS_OK;
    }
    char x[81];
    size_t n = dmig_expand(line, x);
    memset(x + n, ' ', 80 - n);
    x[80] = '\0';
    gs_text_span k = gs_text_trim((gs_text_span){x, 8});
    *cont = k.n == 0 || k.s[0] == '+' || k.s[0] == '*';
    /* large field: "DMIG*" or a continuation starting with '*' */
    int large = *cont ? (k.n > 0 && k.s[0] == '*') : (k.n > 0 && k.s[k.n - 1] == '*');
    if (large && !*cont)
        k.n--;
    snprintf(key, 16, "%.*s", (int)k.n, k.s);
    for (int i = 0; i < (large ? 4 : 8); i++)
        if ((rc = dmig_push(e, (gs_text_span){x + 8 + i * (large ? 16 : 8), large ? 16u : 8u}, ln,
                            err)) != GS_OK)
            return rc;
    return GS_OK;
}

static gs_err dmig_int(const dmig_entry *e, int k, const char *what, int64_t lo, int64_t hi,
                       int blank_ok, int64_t *out, gs_error *err)
{
    char show[24];
    gs_text_span f = dmig_f(e, k);
    long ln = dmig_ln(e, k);
    if (f.n == 0 && blank_ok) {
        *out = 0;
        return GS_OK;
    }
    if (f.n == 0)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: %s is blank", ln, what);
    int r = gs_text_int(f, lo, hi, out);
    if (r == -1)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: %s '%s' is not an integer", ln, what,
                         gs_text_show(f, show, sizeof show));
    if (r == -2)
        return gs_errorf(err, GS_ERR_RANGE, "", "line %ld: %s %s out of range [%" PRId64 ", %"
                         PRId64 "]", ln, what, gs_text_show(f, show, sizeof show), lo, hi);
    return GS_OK;
}

static gs_err dmig_header(dmig_matrix *m, const dmig_entry *e, gs_error *err)
{
    int64_t ifo, tin, v;
    gs_err rc;
    long ln = e->first_line;
    if (m->have_header)
        return gs_errorf(err, GS_ERR_DUPLICATE, "", "line %ld: a second header of DMIG %s "
                         "(first at line %ld)", ln, m->name, m->header_line);
    if ((rc = dmig_int(e, 2, "IFO", 0, 99, 0, &ifo, err)) != GS_OK ||
        (rc = dmig_int(e, 3, "TIN", 0, 99, 0, &tin, err)) != GS_OK ||
        (rc = dmig_int(e, 4, "TOUT", 0, 99, 1, &v, err)) != GS_OK ||
        (rc = dmig_int(e, 5, "POLAR", 0, 1, 1, &v, err)) != GS_OK)
        return rc;
    if (ifo != 6 && ifo != 1)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "line %ld: DMIG %s has IFO %" PRId64 ": a "
                         "stiffness matrix is symmetric (6) or square (1)", ln, m->name, ifo);
    if (tin != 1 && tin != 2)
        return gs_errorf(err, GS_ERR_UNSUPPORTED, "", "line %ld: DMIG %s has TIN %" PRId64 ": only "
                         "real matrices (1, 2) are supported", ln, m->name, tin);
    m->have_header = 1;
    m->ifo = (int)ifo;
    m->tin = (int)tin;
    m->header_line = ln;
    return GS_OK;
}

/* A column entry: its terms into coo as packed keys grid * 8 + component. */
static gs_err dmig_column(const dmig_matrix *m, const dmig_entry *e, gs_coo *coo, gs_error *err)
{
    int64_t gj, cj, gi, ci;
    gs_err rc;
    char show[24];
    if (!m->have_header)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: column entry of DMIG %s before its "
                         "header (the entry with \"0\" in field 3)", e->first_line, m->name);
    if ((rc = dmig_int(e, 1, "GJ", 1, DMIG_MAX_GRID, 0, &gj, err)) != GS_OK ||
        (rc = dmig_int(e, 2, "CJ", 0, 6, 1, &cj, err)) != GS_OK)
        return rc;
    if (dmig_f(e, 3).n)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: field 5 of a DMIG column entry must "
                         "be blank", dmig_ln(e, 3));
    int terms = 0;
    for (int k = 4; k < e->nf; k += 4) {
        int blank = 1;
        for (int q = k; q < k + 4 && q < e->nf; q++)
            blank &= dmig_f(e, q).n == 0;
        if (blank)
            continue; /* padding of the last line */
        double a;
        if ((rc = dmig_int(e, k, "G", 1, DMIG_MAX_GRID, 0, &gi, err)) != GS_OK ||
            (rc = dmig_int(e, k + 1, "C", 0, 6, 1, &ci, err)) != GS_OK)
            return rc;
        gs_text_span af = dmig_f(e, k + 2);
        long ln = k + 2 < e->nf ? dmig_ln(e, k + 2) : dmig_ln(e, k);
        int r = af.n ? gs_text_real(af, 1, &a) : -1;
        if (r == -2)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: number '%s' beyond the double "
                             "range", ln, gs_text_show(af, show, sizeof show));
        if (r != 0)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: invalid matrix entry '%s'", ln,
                             gs_text_show(af, show, sizeof show));
        if (dmig_f(e, k + 3).n)
            return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: imaginary part given for a real "
                             "matrix (TIN %d)", dmig_ln(e, k + 3), m->tin);
        if ((rc = gs_coo_add(coo, gi * 8 + ci, gj * 8 + cj, a, err)) != GS_OK)
            return rc;
        terms++;
    }
    if (!terms)
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: DMIG column entry without terms",
                         e->first_line);
    return GS_OK;
}

/* Rows: sorted unique packed keys of the entries; rewrites coo to indices. */
static int dmig_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t dmig_find(const int64_t *keys, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static gs_err dmig_finish(const dmig_matrix *m, gs_coo *coo, const gs_matread_opts *o,
                          gs_spmat *out, gs_error *err)
{
    size_t nk = 2 * coo->len, n = 0;
    int64_t *keys = malloc((nk ? nk : 1) * sizeof *keys);
    if (!keys)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %zu keys", nk);
    memcpy(keys, coo->row, coo->len * sizeof *keys);
    memcpy(keys + coo->len, coo->col, coo->len * sizeof *keys);
    qsort(keys, nk, sizeof *keys, dmig_cmp);
    for (size_t k = 0; k < nk; k++)
        if (n == 0 || keys[n - 1] != keys[k])
            keys[n++] = keys[k];
    gs_err rc;
    if (n > o->max_n) {
        rc = gs_errorf(err, GS_ERR_LIMIT, "", "DMIG %s has %zu distinct (grid, component) rows, "
                       "more than the limit of %zu", m->name, n, o->max_n);
        goto done;
    }
    for (size_t k = 0; k < coo->len; k++) {
        coo->row[k] = dmig_find(keys, (int64_t)n, coo->row[k]);
        coo->col[k] = dmig_find(keys, (int64_t)n, coo->col[k]);
    }
    int64_t *label = malloc((n ? n : 1) * sizeof *label);
    int *dof = malloc((n ? n : 1) * sizeof *dof);
    if (!label || !dof) {
        free(label);
        free(dof);
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for %zu row labels", n);
        goto done;
    }
    for (size_t r = 0; r < n; r++) {
        label[r] = keys[r] / 8;
        dof[r] = (int)(keys[r] % 8);
    }
    rc = gs_coo_to_spmat(coo, (int64_t)n, m->ifo == 6 ? GS_COO_SYMMETRIC : GS_COO_GENERAL, label,
                         dof, out, err);
done:
    free(keys);
    return rc;
}

/* Matrix names compare without case (Nastran upper-cases them). */
static int dmig_same_name(const char *a, const char *b)
{
    for (;; a++, b++) {
        char x = (char)(*a >= 'a' && *a <= 'z' ? *a - 'a' + 'A' : *a);
        if (x != *b)
            return 0;
        if (!x)
            return 1;
    }
}

static int dmig_is_keyword_start(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z');
}

/* One complete entry: a header or column of the wanted matrix, or skipped. */
static gs_err dmig_entry_done(dmig_entry *e, dmig_matrix *m, const gs_matread_opts *o,
                              char names[][9], int *nnames, gs_coo *coo, gs_error *err)
{
    if (strcmp(e->key, "DMIG") != 0 || e->nf == 0)
        return GS_OK;
    char name[9], show[24];
    gs_text_span nf = dmig_f(e, 0);
    if (nf.n == 0 || nf.n > 8 || !dmig_is_keyword_start(nf.s[0]))
        return gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: DMIG NAME '%s' is not 1-8 characters "
                         "starting with a letter", e->first_line,
                         gs_text_show(nf, show, sizeof show));
    for (size_t k = 0; k < nf.n; k++)
        name[k] = (char)(nf.s[k] >= 'a' && nf.s[k] <= 'z' ? nf.s[k] - 'a' + 'A' : nf.s[k]);
    name[nf.n] = '\0';
    int known = 0;
    for (int k = 0; k < *nnames; k++)
        known |= strcmp(names[k], name) == 0;
    if (!known && *nnames < 16)
        snprintf(names[(*nnames)++], 9, "%s", name);
    if (!dmig_same_name(o->name ? o->name : names[0], name))
        return GS_OK;
    if (!m->name[0])
        snprintf(m->name, sizeof m->name, "%s", name);
    int64_t zero;
    if (e->nf > 1 && gs_text_int(dmig_f(e, 1), 0, 0, &zero) == 0)
        return dmig_header(m, e, err);
    return dmig_column(m, e, coo, err);
}

int gs_sniff_dmig(const unsigned char *buf, size_t len)
{
    gs_text_cur c;
    gs_text_span line;
    gs_text_init(&c, buf, len);
    for (int k = 0; k < 64 && gs_text_line(&c, &line); k++) {
        gs_text_span t = gs_text_trim(line);
        if (t.n == 0 || t.s[0] == '$')
            continue;
        if (t.n < 5 || !(t.s[0] == 'D' || t.s[0] == 'd') || line.s[0] != t.s[0])
            return 0;
        char w[5];
        for (int q = 0; q < 4; q++)
            w[q] = (char)(t.s[q] >= 'a' && t.s[q] <= 'z' ? t.s[q] - 'a' + 'A' : t.s[q]);
        w[4] = '\0';
        return strcmp(w, "DMIG") == 0 && (t.s[4] == ' ' || t.s[4] == '*' || t.s[4] == ',' ||
                                          t.s[4] == '\t');
    }
    return 0;
}

gs_err gs_read_dmig(const unsigned char *buf, size_t len, const gs_matread_opts *o, gs_spmat *out,
                    gs_error *err)
{
    dmig_entry *e = calloc(1, sizeof *e);
    dmig_matrix m = {0};
    char names[16][9];
    int nnames = 0, open = 0;
    gs_text_cur c;
    gs_text_span line;
    gs_coo coo;
    gs_err rc = GS_OK;
    memset(out, 0, sizeof *out);
    gs_coo_init(&coo, o->max_nnz);
    if (!e)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory");
    gs_text_init(&c, buf, len);
    for (;;) {
        int more = gs_text_line(&c, &line);
        gs_text_span t = more ? gs_text_trim(line) : (gs_text_span){"", 0};
        if (more && (t.n == 0 || t.s[0] == '$'))
            continue;
        int cont = 0;
        char key[16];
        if (more) {
            /* peek field 1: a new entry ends the open one */
            const char *comma = memchr(line.s, ',', line.n);
            gs_text_span k1 = comma ? gs_text_trim((gs_text_span){line.s, (size_t)(comma - line.s)})
                              : (line.s[0] == ' ' || line.s[0] == '\t') ? (gs_text_span){"", 0}
                                                                        : t;
            cont = k1.n == 0 || k1.s[0] == '+' || k1.s[0] == '*';
            if (!cont && !dmig_is_keyword_start(k1.s[0])) {
                char show[24];
                rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: '%s' is neither an entry name "
                               "nor a continuation", c.line, gs_text_show(k1, show, sizeof show));
                goto done;
            }
            if (cont && !open) {
                rc = gs_errorf(err, GS_ERR_FORMAT, "", "line %ld: continuation line without an "
                               "entry before it", c.line);
                goto done;
            }
        }
        if (open && (!more || !cont)) {
            if ((rc = dmig_entry_done(e, &m, o, names, &nnames, &coo, err)) != GS_OK)
                goto done;
            open = 0;
        }
        if (!more)
            break;
        if (!cont) {
            e->nf = 0;
            e->tlen = 0;
            e->first_line = c.line;
        }
        if ((rc = dmig_split(line, c.line, e, &cont, key, err)) != GS_OK)
            goto done;
        if (!open) {
            for (char *q = key; *q; q++)
                *q = (char)(*q >= 'a' && *q <= 'z' ? *q - 'a' + 'A' : *q);
            memcpy(e->key, key, sizeof e->key);
            open = 1;
        }
    }
    if (o->name && !m.name[0]) {
        char list[160] = "";
        for (int k = 0; k < nnames; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                     names[k]);
        rc = gs_errorf(err, GS_ERR_INVALID, "", "no DMIG matrix named '%.8s' (the file has: %s)",
                       o->name, nnames ? list : "none");
    } else if (nnames == 0) {
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "no DMIG entries (input ends at line %ld)", c.line);
    } else if (!o->name && nnames > 1) {
        char list[160] = "";
        for (int k = 0; k < nnames; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                     names[k]);
        rc = gs_errorf(err, GS_ERR_INVALID, "", "the file holds DMIG matrices %s: name the one to "
                       "read (\"matrix\")", list);
    } else if (!m.have_header) {
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "DMIG %s has no header entry", m.name);
    } else if (coo.len == 0) {
        rc = gs_errorf(err, GS_ERR_FORMAT, "", "DMIG %s has no column entries", m.name);
    } else {
        rc = dmig_finish(&m, &coo, o, out, err);
    }
done:
    gs_coo_free(&coo);
    dmig_entry_free(e);
    free(e);
    return rc;
}
