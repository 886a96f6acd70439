/*
 * export.c -- CSV, VTK and HTML views of a cloud (export.h).
 *
 * Reads the per-pair arrays of the summary document ("pairs": mean, std,
 * p95, max, share_above, lambda_mean) and its distributions; never
 * recomputes a statistic. Numbers are written with 17 significant digits
 * (gs_buf_json_num); a VTK array holding a NaN or Inf is written binary
 * (VTK's ASCII reader takes neither). The CSV is RFC 4180: a text field
 * (the interface, from the model's part names, which may hold any
 * character; an unnamed part reads "part <index>") is quoted
 * when it holds a comma, a quote, CR or LF, its quotes doubled; a statistic
 * of a summary with no result is an empty field. Cost O(m + bins) per
 * document.
 */
#include "export.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "json_parse.h"

/* The m values of summary.pairs.<name>, or NULL when absent / short. */
static const cJSON *pair_array(const cJSON *sum, const char *name, int m)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(sum, "pairs");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(p, name);
    return cJSON_IsArray(a) && cJSON_GetArraySize(a) == m ? a : NULL;
}

static double num_at(const cJSON *a, int k)
{
    const cJSON *v = cJSON_GetArrayItem(a, k); /* O(k): callers walk arrays with next */
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The label of part p in an interface name: its name, or "part <p>" when
 * the model leaves it unnamed (two unnamed parts must not read the same). */
static const char *part_label(const gs_model *mdl, int p, char *tmp, size_t cap)
{
    if (p < 0)
        return "fixed";
    if (mdl->parts[p].name[0])
        return mdl->parts[p].name;
    snprintf(tmp, cap, "part %d", p);
    return tmp;
}

/* The parts pair k joins: (i, j), j = -1 for the fixed part. */
static void pair_parts(const gs_model *mdl, int k, int *pi, int *pj)
{
    const gs_pair *p = &mdl->pairs[k];
    *pi = mdl->nodes[p->node[0]].part;
    *pj = p->node[1] == GS_FIXED ? -1 : mdl->nodes[p->node[1]].part;
}

void gsd_export_iface_name(const gs_model *mdl, int k, char *out, size_t cap)
{
    int pi, pj;
    char ta[24], tb[24];
    pair_parts(mdl, k, &pi, &pj);
    snprintf(out, cap, "%s/%s", part_label(mdl, pi, ta, sizeof ta),
             part_label(mdl, pj, tb, sizeof tb));
}

/* The interface of pair k ("<part i>/<part j>" or "<part i>/fixed") as one
 * CSV field (RFC 4180: quoted when it must be). */
static void csv_iface(gs_buf *b, const gs_model *mdl, int k)
{
    int pi, pj;
    char ta[24], tb[24];
    pair_parts(mdl, k, &pi, &pj);
    const char *name[2] = {part_label(mdl, pi, ta, sizeof ta), part_label(mdl, pj, tb, sizeof tb)};
    const int quote = strpbrk(name[0], ",\"\r\n") || strpbrk(name[1], ",\"\r\n");
    if (quote)
        gs_buf_puts(b, "\"");
    for (int i = 0; i < 2; i++) {
        if (i)
            gs_buf_puts(b, "/");
        for (const char *c = name[i]; *c; c++)
            gs_buf_add(b, *c == '"' ? "\"\"" : c, *c == '"' ? 2 : 1); /* quotes doubled */
    }
    if (quote)
        gs_buf_puts(b, "\"");
}

/* The statistic columns, in file order. */
static const char *const STATS[6] = {"mean", "std", "p95", "max", "share_above", "lambda_mean"};
static const char *const STAT_HEAD[6] = {"w_mean_mm", "w_std_mm", "w_p95_mm", "w_max_mm",
                                         "share_above", "lambda_mean_N"};

void gsd_export_csv(const gs_model *mdl, const cJSON *sum, gs_buf *b)
{
    int m = mdl->m;
    /* no answer summarized (no result yet, or none optimal): no statistic
     * (empty fields, not zeros) */
    const int none = gs_json_num(sum, "answers", NULL, -1) == 0;
    const cJSON *cur[6];
    for (int s = 0; s < 6; s++) {
        const cJSON *a = none ? NULL : pair_array(sum, STATS[s], m);
        cur[s] = a ? a->child : NULL;
    }
    gs_buf_puts(b, "pair,x_mm,y_mm,z_mm,interface");
    for (int s = 0; s < 6; s++)
        gs_buf_printf(b, ",%s", STAT_HEAD[s]);
    gs_buf_puts(b, "\n");
    for (int k = 0; k < m; k++) { /* O(m): one pass, arrays walked in step */
        const double *xyz = mdl->nodes[mdl->pairs[k].node[0]].xyz;
        gs_buf_printf(b, "%d", k);
        for (int d = 0; d < 3; d++) {
            gs_buf_puts(b, ",");
            gs_buf_json_num(b, xyz[d]);
        }
        gs_buf_puts(b, ",");
        csv_iface(b, mdl, k);
        for (int s = 0; s < 6; s++) {
            gs_buf_puts(b, ",");
            if (cur[s]) {
                if (cJSON_IsNumber(cur[s]))
                    gs_buf_json_num(b, cur[s]->valuedouble);
                cur[s] = cur[s]->next;
            }
        }
        gs_buf_puts(b, "\n");
    }
}

/* Value k of an array given as doubles (v) or as the list of a parsed
 * JSON array (*jv, advanced; a null is a statistic that was not finite). */
static double vtk_value(const double *v, const cJSON **jv, int k)
{
    if (v)
        return v[k];
    double x = cJSON_IsNumber(*jv) ? (*jv)->valuedouble : NAN;
    *jv = *jv ? (*jv)->next : NULL;
    return x;
}

static int vtk_all_finite(const double *v, const cJSON *jv, int m)
{
    for (int k = 0; k < m; k++)
        if (!isfinite(vtk_value(v, &jv, k)))
            return 0;
    return 1;
}

/* n bytes as base64 (RFC 4648, padded, one line: VTK's reader takes it so). */
static void base64(gs_buf *b, const unsigned char *p, size_t n)
{
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (gs_buf_reserve(b, (n + 2) / 3 * 4) != 0)
        return;
    char *o = b->p + b->len;
    for (size_t i = 0; i < n; i += 3) {
        unsigned x = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *o++ = A[x >> 18 & 63];
        *o++ = A[x >> 12 & 63];
        *o++ = i + 1 < n ? A[x >> 6 & 63] : '=';
        *o++ = i + 2 < n ? A[x & 63] : '=';
    }
    b->len = (size_t)(o - b->p);
}

/* The m values as VTK inline binary data: one base64 run of the byte count
 * (UInt64: the file's header_type) then the float64 values, little endian
 * (its byte_order) whatever the host's order. NaN and Inf keep their bits. */
static void vtk_binary(gs_buf *b, const double *v, const cJSON *jv, int m)
{
    size_t n = 8 + 8 * (size_t)m;
    unsigned char *raw = malloc(n);
    if (!raw) {
        b->oom = 1; /* the caller answers the sticky failure */
        return;
    }
    gs_le64_put(raw, 8 * (uint64_t)m);
    for (int k = 0; k < m; k++) {
        double x = vtk_value(v, &jv, k);
        gs_le_f8_put(raw + 8 + 8 * (size_t)k, x);
    }
    base64(b, raw, n);
    free(raw);
}

/* One Float64 <DataArray> of m values (v, or the JSON list jv). ASCII, 8 a
 * line, when every value is finite; else binary: VTK's ASCII reader takes
 * no NaN / Inf (nor JSON's null), and one such token loses the whole file. */
static void vtk_array(gs_buf *b, const char *name, const double *v, const cJSON *jv, int m)
{
    const int ascii = vtk_all_finite(v, jv, m);
    gs_buf_printf(b, "        <DataArray type=\"Float64\" Name=\"%s\" format=\"%s\">\n          ",
                  name, ascii ? "ascii" : "binary");
    if (!ascii)
        vtk_binary(b, v, jv, m);
    for (int k = 0; ascii && k < m; k++) {
        if (k)
            gs_buf_puts(b, k % 8 ? " " : "\n          ");
        gs_buf_json_num(b, vtk_value(v, &jv, k));
    }
    gs_buf_puts(b, "\n        </DataArray>\n");
}

void gsd_export_vtp(const gs_model *mdl, const cJSON *sum, const gsd_export_gap *gap,
                    gs_buf *b)
{
    int m = mdl->m;
    gs_buf_printf(b, "<?xml version=\"1.0\"?>\n"
                      "<!-- gapsim: job %s, %d contact pairs (points at each pair's first node, mm)",
                   cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sum, "job_id")), m);
    if (gap)
        gs_buf_printf(b, "; gap %d", gap->index);
    gs_buf_printf(b, " -->\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
                      "header_type=\"UInt64\">\n  <PolyData>\n    <Piece NumberOfPoints=\"%d\" "
                      "NumberOfVerts=\"%d\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                      "NumberOfPolys=\"0\">\n      <PointData Scalars=\"%s\">\n",
                   m, m, gap && gap->w ? "w" : "w_mean");
    if (gap) {
        if (gap->g)
            vtk_array(b, "g", gap->g, NULL, m);
        if (gap->w)
            vtk_array(b, "w", gap->w, NULL, m);
        if (gap->lam)
            vtk_array(b, "lambda", gap->lam, NULL, m);
    }
    for (int s = 0; s < 6; s++) {
        const cJSON *a = pair_array(sum, STATS[s], m);
        if (a) {
            char name[32];
            snprintf(name, sizeof name, s == 4 ? "share_above" : s == 5 ? "lambda_mean" : "w_%s",
                     STATS[s]);
            vtk_array(b, name, NULL, a->child, m);
        }
    }
    /* interface index: pairs numbered by (part i, part j or fixed) */
    gs_buf_printf(b, "        <DataArray type=\"Int32\" Name=\"part_i\" format=\"ascii\">\n          ");
    for (int k = 0; k < m; k++)
        gs_buf_printf(b, k ? (k % 16 ? " %d" : "\n          %d") : "%d",
                       mdl->nodes[mdl->pairs[k].node[0]].part);
    gs_buf_puts(b, "\n        </DataArray>\n");
    gs_buf_printf(b, "        <DataArray type=\"Int32\" Name=\"part_j\" format=\"ascii\">\n          ");
    for (int k = 0; k < m; k++) {
        int nj = mdl->pairs[k].node[1];
        gs_buf_printf(b, k ? (k % 16 ? " %d" : "\n          %d") : "%d",
                       nj == GS_FIXED ? -1 : mdl->nodes[nj].part);
    }
    gs_buf_puts(b, "\n        </DataArray>\n      </PointData>\n      <Points>\n"
                    "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n");
    for (int k = 0; k < m; k++) {
        const double *xyz = mdl->nodes[mdl->pairs[k].node[0]].xyz;
        gs_buf_puts(b, "          ");
        for (int d = 0; d < 3; d++) {
            if (d)
                gs_buf_puts(b, " ");
            gs_buf_json_num(b, xyz[d]);
        }
        gs_buf_puts(b, "\n");
    }
    gs_buf_puts(b, "        </DataArray>\n      </Points>\n      <Verts>\n"
                    "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n          ");
    for (int k = 0; k < m; k++)
        gs_buf_printf(b, k ? (k % 16 ? " %d" : "\n          %d") : "%d", k);
    gs_buf_puts(b, "\n        </DataArray>\n"
                    "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n          ");
    for (int k = 0; k < m; k++)
        gs_buf_printf(b, k ? (k % 16 ? " %d" : "\n          %d") : "%d", k + 1);
    gs_buf_puts(b, "\n        </DataArray>\n      </Verts>\n    </Piece>\n  </PolyData>\n"
                    "</VTKFile>\n");
}

/* ---------------------------------------------------------------- HTML */

/* Viridis at t in [0, 1] (9 stops, linear between). */
static void viridis(double t, char out[8])
{
    static const unsigned char c[9][3] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},
                                          {44, 113, 142}, {33, 144, 141}, {39, 173, 129},
                                          {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
    t = !(t > 0) ? 0 : t > 1 ? 1 : t;
    double x = t * 8;
    int i = x >= 8 ? 7 : (int)x;
    double f = x - i;
    int rgb[3];
    for (int d = 0; d < 3; d++)
        rgb[d] = (int)lround(c[i][d] + f * (c[i + 1][d] - c[i][d]));
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static void html_text(gs_buf *b, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<')
            gs_buf_puts(b, "&lt;");
        else if (*s == '>')
            gs_buf_puts(b, "&gt;");
        else if (*s == '&')
            gs_buf_puts(b, "&amp;");
        else if (*s == '"')
            gs_buf_puts(b, "&quot;");
        else
            gs_buf_add(b, s, 1);
    }
}

/* A histogram {edges, counts} as an SVG bar chart (log counts if logy);
 * note: a line under the axis (text.note), or NULL. */
static void svg_hist(gs_buf *b, const cJSON *h, const char *title, const char *unit, int logy,
                     const char *note)
{
    const cJSON *edges = cJSON_GetObjectItemCaseSensitive(h, "edges");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(h, "counts");
    int n = cJSON_GetArraySize(counts);
    if (n < 1 || cJSON_GetArraySize(edges) != n + 1 || !isfinite(num_at(edges, 0)))
        return; /* edges null: a histogram of no value (no answer, no result) */
    const double W = 360, H = 180, L = 48, B = 34, T = 22;
    double cmax = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, counts) cmax = fmax(cmax, c->valuedouble);
    double top = logy ? log10(fmax(cmax, 1) + 1) : fmax(cmax, 1);
    gs_buf_printf(b, "<figure><svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
                      "height=\"%g\" viewBox=\"0 0 %g %g\"><text x=\"%g\" y=\"14\" class=\"t\">",
                   W, H, W, H, L);
    html_text(b, title);
    gs_buf_puts(b, "</text>");
    double bw = (W - L - 8) / n;
    int i = 0;
    cJSON_ArrayForEach(c, counts)
    {
        double v = logy ? log10(c->valuedouble + 1) : c->valuedouble;
        double bh = (H - B - T) * v / top;
        gs_buf_printf(b, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                          "data-count=\"%.0f\"/>",
                       L + i * bw + 0.5, H - B - bh, fmax(bw - 1, 0.5), bh, c->valuedouble);
        i++;
    }
    gs_buf_printf(b, "<line x1=\"%g\" x2=\"%g\" y1=\"%g\" y2=\"%g\" class=\"ax\"/>", L, W - 8, H - B,
                   H - B);
    gs_buf_printf(b, "<text x=\"%g\" y=\"%g\" class=\"l\">%.4g</text>", L, H - B + 14,
                   num_at(edges, 0));
    gs_buf_printf(b, "<text x=\"%g\" y=\"%g\" class=\"l\" text-anchor=\"end\">%.4g %s</text>", W - 8,
                   H - B + 14, num_at(edges, n), unit);
    gs_buf_printf(b, "<text x=\"%g\" y=\"%g\" class=\"l\" text-anchor=\"end\">%.0f</text>", L - 4,
                   T + 10, cmax);
    gs_buf_printf(b, "<text x=\"%g\" y=\"%g\" class=\"l\" text-anchor=\"end\">%s</text>", L - 4,
                   H - B, logy ? "0 (log)" : "0");
    if (note) {
        gs_buf_printf(b, "<text x=\"%g\" y=\"%g\" class=\"l note\">", L, H - 4);
        html_text(b, note);
        gs_buf_puts(b, "</text>");
    }
    gs_buf_puts(b, "</svg></figure>\n");
}

/* The interface of each pair, numbered by first appearance; returns their
 * count, or -1 when out of memory. An interface is the ordered pair (part i,
 * part j or fixed), not its label: unnamed parts would make several read
 * alike. O(m + parts^2). */
static int ifaces(const gs_model *mdl, int *iface)
{
    int np = mdl->n_parts, ni = 0;
    int *id = malloc((size_t)np * (size_t)(np + 1) * sizeof *id); /* (i, j + 1) -> interface */
    if (!id)
        return -1;
    for (int x = 0; x < np * (np + 1); x++)
        id[x] = -1;
    for (int k = 0; k < mdl->m; k++) {
        int pi, pj;
        pair_parts(mdl, k, &pi, &pj);
        int *slot = &id[pi * (np + 1) + pj + 1];
        if (*slot < 0)
            *slot = ni++;
        iface[k] = *slot;
    }
    free(id);
    return ni;
}

/* Items 0..n-1 by key in [0, nk), stable (counting sort): key j's items are
 * order[start[j]] .. order[start[j + 1] - 1]; start has nk + 1 entries. */
static void bucket(const int *key, int n, int nk, int *order, int *start)
{
    memset(start, 0, (size_t)(nk + 1) * sizeof *start);
    for (int i = 0; i < n; i++)
        start[key[i] + 1]++;
    for (int j = 0; j < nk; j++)
        start[j + 1] += start[j];
    for (int i = 0; i < n; i++)
        order[start[key[i]]++] = i; /* start[j] ends at the first of j + 1 */
    memmove(start + 1, start, (size_t)nk * sizeof *start);
    start[0] = 0;
}

/* The maps' frame: a pair's (x, y) at its first node to SVG units. */
typedef struct {
    double lo[2], sx, w, h;
} map_frame;

static map_frame map_frame_of(const gs_model *mdl)
{
    map_frame f = {{INFINITY, INFINITY}, 0, 0, 0};
    double hi[2] = {-INFINITY, -INFINITY};
    for (int k = 0; k < mdl->m; k++)
        for (int d = 0; d < 2; d++) {
            double v = mdl->nodes[mdl->pairs[k].node[0]].xyz[d];
            f.lo[d] = fmin(f.lo[d], v);
            hi[d] = fmax(hi[d], v);
        }
    f.sx = 900 / fmax(hi[0] - f.lo[0], 1e-9);
    f.h = fmax((hi[1] - f.lo[1]) * f.sx, 20);
    if (f.h > 240) { /* keep panels readable on wide joints */
        f.sx = 240 / fmax(hi[1] - f.lo[1], 1e-9);
        f.h = 240;
    }
    f.w = (hi[0] - f.lo[0]) * f.sx;
    return f;
}

static void map_xy(const map_frame *f, const gs_model *mdl, int k, double *x, double *y)
{
    const double *xyz = mdl->nodes[mdl->pairs[k].node[0]].xyz;
    *x = 10 + (xyz[0] - f->lo[0]) * f->sx;
    *y = 10 + f->h - (xyz[1] - f->lo[1]) * f->sx;
}

/* One interface's map: its pairs (n, in pair[]) colored by their share
 * above the threshold, its installed fasteners (nf, in fast[]) ringed. */
static void svg_map(gs_buf *b, const gs_model *mdl, const map_frame *f, const double *share,
                    const int *pair, int n, const int *fast, int nf)
{
    char nm[160];
    gsd_export_iface_name(mdl, pair[0], nm, sizeof nm);
    gs_buf_printf(b, "<figure><figcaption>interface ");
    html_text(b, nm);
    gs_buf_printf(b, ": share of gaps above the threshold per pair (0 dark purple, 1 yellow); "
                     "red rings: installed fasteners</figcaption><svg class=\"map\" "
                     "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">",
                  f->w + 20, f->h + 20);
    for (int x = 0; x < n; x++) {
        double cx, cy;
        char col[8];
        map_xy(f, mdl, pair[x], &cx, &cy);
        viridis(share[pair[x]], col);
        gs_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"%s\"/>", cx, cy, col);
    }
    for (int x = 0; x < nf; x++) {
        double cx, cy;
        map_xy(f, mdl, mdl->fast[fast[x]].pair, &cx, &cy);
        gs_buf_printf(b, "<circle class=\"fast\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" data-i=\"%d\"/>",
                      cx, cy, fast[x]);
    }
    gs_buf_puts(b, "</svg></figure>\n");
}

/* One map per interface, every one of them (at most parts * (parts + 1);
 * m dots in all): pairs colored by share_above, installed fasteners ringed.
 * O(m + n_fast + parts^2). */
static void svg_maps(gs_buf *b, const gs_model *mdl, const cJSON *sum, const unsigned char *inst)
{
    int m = mdl->m, nf = mdl->n_fast;
    const cJSON *sa = pair_array(sum, "share_above", m);
    if (!sa || m == 0)
        return;
    int *iface = malloc((size_t)m * sizeof *iface), *order = malloc((size_t)m * sizeof *order);
    int *start = malloc(((size_t)m + 1) * sizeof *start); /* interfaces <= m */
    int *fkey = malloc(((size_t)nf + 1) * sizeof *fkey);
    int *ford = malloc(((size_t)nf + 1) * sizeof *ford);
    int *fstart = malloc(((size_t)m + 2) * sizeof *fstart);
    double *share = malloc((size_t)m * sizeof *share);
    int ni = iface && order && start && fkey && ford && fstart && share ? ifaces(mdl, iface) : -1;
    if (ni < 0) /* said: a report must not look complete without its maps */
        gs_buf_puts(b, "<p>The interface maps are left out: out of memory.</p>\n");
    if (ni > 0) {
        const cJSON *v = sa->child;
        for (int k = 0; k < m; k++, v = v->next)
            share[k] = cJSON_IsNumber(v) ? v->valuedouble : 0;
        bucket(iface, m, ni, order, start);
        for (int i = 0; i < nf; i++) /* not installed: key ni, never drawn */
            fkey[i] = inst && inst[i] ? iface[mdl->fast[i].pair] : ni;
        bucket(fkey, nf, ni + 1, ford, fstart);
        map_frame f = map_frame_of(mdl);
        for (int j = 0; j < ni; j++)
            svg_map(b, mdl, &f, share, order + start[j], start[j + 1] - start[j],
                    ford + fstart[j], fstart[j + 1] - fstart[j]);
    }
    free(iface);
    free(order);
    free(start);
    free(fkey);
    free(ford);
    free(fstart);
    free(share);
}

/* The residual histogram: it counts the open pairs' residuals only; those
 * of the pairs in contact (w = 0, would drown the first bin) are counted
 * apart, and the figure says how many. */
static void svg_residuals(gs_buf *b, const cJSON *h)
{
    char note[96];
    snprintf(note, sizeof note, "%.0f residuals of pairs in contact (w = 0) counted apart",
             gs_json_num(h, "in_contact", NULL, 0));
    svg_hist(b, h, "residual gaps of open pairs (count, log)", "mm", 1, note);
}

/* A row of the summary table; a value that is null in the summary (a
 * statistic of no value: no answer) is a dash. */
static void row_num(gs_buf *b, const char *label, double v, const char *unit)
{
    gs_buf_puts(b, "<tr><th>");
    html_text(b, label);
    if (isfinite(v))
        gs_buf_printf(b, "</th><td>%.6g %s</td></tr>\n", v, unit);
    else
        gs_buf_puts(b, "</th><td>&#8211;</td></tr>\n");
}

void gsd_export_html(const gs_model *mdl, const cJSON *sum, const gsd_job_row *job,
                     const int *installed, int n_installed, gs_buf *b)
{
    unsigned char *inst = NULL;
    if (mdl->n_fast > 0 && (inst = calloc((size_t)mdl->n_fast, 1)))
        for (int i = 0; i < n_installed; i++)
            if (installed[i] >= 0 && installed[i] < mdl->n_fast)
                inst[installed[i]] = 1;
    gs_buf_puts(b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>gapsim "
                    "report ");
    html_text(b, job->id);
    gs_buf_puts(b, "</title><style>body{font:14px sans-serif;margin:24px;max-width:1000px}"
                    "table{border-collapse:collapse}th{white-space:nowrap}th,td{padding:2px 10px;text-align:left;"
                    "border-bottom:1px solid #ddd}figure{margin:8px 0;display:inline-block}"
                    ".bar{fill:#3b528b}.ax{stroke:#333}.t{font-size:12px;font-weight:bold}"
                    ".l{font-size:10px}.fast{fill:none;stroke:#e4002b;stroke-width:1.6}"
                    "</style></head><body>\n<h1>gapsim cloud report</h1>\n<p>job <code>");
    html_text(b, job->id);
    gs_buf_puts(b, "</code> on assembly <code>");
    html_text(b, job->assembly_id);
    gs_buf_puts(b, "</code> (");
    html_text(b, mdl->name);
    gs_buf_printf(b, "; %d contact pairs, %d fastener candidates), status ", mdl->m, mdl->n_fast);
    html_text(b, job->status);
    gs_buf_puts(b, ".</p>\n<table id=\"summary\">\n");
    double thr = gs_json_num(sum, "threshold", NULL, NAN);
    row_num(b, "gaps summarized", gs_json_num(sum, "count", NULL, NAN), "");
    row_num(b, "answers (optimal) in the residual and force statistics",
            gs_json_num(sum, "answers", NULL, NAN), "");
    row_num(b, "threshold", thr, "mm");
    row_num(b, "share of gaps with a residual above the threshold",
            100 * gs_json_num(sum, "share_gaps_above", NULL, NAN), "%");
    row_num(b, "share of all residuals above the threshold", 100 * gs_json_num(sum, "share_values_above", NULL, NAN),
            "%");
    static const char *const q[4] = {"mean", "median", "p95", "max"};
    for (int i = 0; i < 4; i++) {
        char lab[64];
        snprintf(lab, sizeof lab, "largest residual per gap, %s", q[i]);
        row_num(b, lab, gs_json_num(sum, "max_residual", q[i], NAN), "mm");
    }
    row_num(b, "contacts n_act, median", gs_json_num(sum, "n_act", "median", NAN), "");
    row_num(b, "solve time per gap, median", gs_json_num(sum, "time_ms", "median", NAN), "ms");
    row_num(b, "solve time per gap, p95", gs_json_num(sum, "time_ms", "p95", NAN), "ms");
    row_num(b, "failures (not optimal)", gs_json_num(sum, "failures", NULL, NAN), "");
    row_num(b, "warm started", gs_json_num(sum, "warm_started", NULL, NAN), "");
    row_num(b, "finished by GI relative (the method's own loop did not finish)",
            gs_json_num(sum, "crossovers", NULL, NAN), "");
    gs_buf_printf(b, "<tr><th>fastener pattern</th><td id=\"pattern\">%d of %d installed: ",
                   n_installed, mdl->n_fast);
    for (int i = 0; i < n_installed; i++)
        gs_buf_printf(b, i ? ", %d" : "%d", installed[i]);
    gs_buf_puts(b, "</td></tr>\n</table>\n");
    const int answers = gs_json_num(sum, "answers", NULL, -1) != 0;
    if (!answers) { /* no map or histogram of no value */
        gs_buf_puts(b, "<p id=\"no-answer\">No answer: no result of this cloud has status "
                       "optimal (yet), so there is no residual, contact or n_act figure, map or "
                       "histogram; the statuses are in the API's summary.</p>\n");
    } else {
        gs_buf_puts(b, "<h2>Where gaps stay open</h2>\n");
        svg_maps(b, mdl, sum, inst);
    }
    gs_buf_puts(b, "<h2>Distributions</h2>\n");
    if (answers) {
        svg_residuals(b, cJSON_GetObjectItemCaseSensitive(sum, "residual_histogram"));
        svg_hist(b, cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(sum, "max_residual"), "histogram"),
                 "largest residual per gap", "mm", 0, NULL);
        svg_hist(b, cJSON_GetObjectItemCaseSensitive(
                        cJSON_GetObjectItemCaseSensitive(sum, "n_act"), "histogram"),
                 "contacts n_act per gap", "", 0, NULL);
    }
    svg_hist(b, cJSON_GetObjectItemCaseSensitive(
                    cJSON_GetObjectItemCaseSensitive(sum, "time_ms"), "histogram"),
             "solve time per gap", "ms", 0, NULL);
    gs_buf_puts(b, "</body></html>\n");
    free(inst);
}
