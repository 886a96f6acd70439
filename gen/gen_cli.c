/*
 * gen_cli.c -- the command line of the FE generator, shared by `gapsim-gen`
 * (cmd/gapsim_gen_main.c) and `gapsim gen` (clients/cli): the option table,
 * gapsim-gen's reading of it, the checks of the values (generator.h's
 * ranges, in the options' words) and of their combinations, the run's
 * memory and disk (before the model is built), then build an assembly
 * model (lap joint like the paper's
 * UJM1/UJM2, sandwich joint like its LJM) and write it as gapsim model files:
 * DIR/NAME.json + one file per stiffness block (.npy, inline, or an FE
 * tool's format with --matrix-format; --uncondensed keeps each part's whole
 * plate stiffness, sparse), a gap cloud DIR/NAME.gaps.npy (K x m; its mean
 * and peak checked against what the cloud can meet before anything is
 * written) and, with --fraction, a fastener pattern DIR/NAME.pattern.npy
 * (n_fast 0/1 flags), all committed together or none (gen_files.h: a
 * failure or a signal leaves no file of the run). Prints sizes, condition
 * estimates and stage times once the files are committed.
 * Method: generator.h, fe_plate.h; docs/generator.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "byteorder.h"
#include "fileio.h"
#include "gen_cli.h"
#include "gen_files.h"
#include "generator.h"
#include "linalg.h"
#include "matrix_write.h"
#include "memlimit.h"
#include "model_json.h"
#include "npy.h"
#include "numarg.h"

enum {
    O_KIND, O_SMALL, O_SCALE, O_NX, O_NY, O_NYC, O_LENGTH, O_HY, O_THICKNESS, O_FAR, O_CLAMP,
    O_SUPPORTS, O_FAST_EVERY, O_FAST_LINES, O_FAST_LOAD, O_NO_COND, O_UNCONDENSED,
    O_MATRIX_FORMAT, O_OUT, O_NAME, O_INLINE, O_GAPS, O_SEED, O_MEAN, O_PEAK, O_CORR,
    O_SCATTER, O_FRACTION, O_ELEMENT, O_COUNT
};
_Static_assert(O_COUNT == GS_GEN_NOPTS, "GS_GEN_NOPTS counts the options");

const gs_gen_opt gs_gen_opts[GS_GEN_NOPTS] = {
    [O_KIND] = {"--kind", 1},           [O_SMALL] = {"--small", 0},
    [O_SCALE] = {"--scale", 1},         [O_NX] = {"--nx", 1},
    [O_NY] = {"--ny", 1},               [O_NYC] = {"--nyc", 1},
    [O_LENGTH] = {"--length", 1},       [O_HY] = {"--hy", 1},
    [O_THICKNESS] = {"--thickness", 1}, [O_FAR] = {"--far", 1},
    [O_CLAMP] = {"--clamp", 1},         [O_SUPPORTS] = {"--supports", 1},
    [O_FAST_EVERY] = {"--fast-every", 1}, [O_FAST_LINES] = {"--fast-lines", 1},
    [O_FAST_LOAD] = {"--fast-load", 1}, [O_NO_COND] = {"--no-cond", 0},
    [O_UNCONDENSED] = {"--uncondensed", 0}, [O_MATRIX_FORMAT] = {"--matrix-format", 1},
    [O_OUT] = {"--out", 1},             [O_NAME] = {"--name", 1},
    [O_INLINE] = {"--inline", 0},       [O_GAPS] = {"--gaps", 1},
    [O_SEED] = {"--seed", 1},           [O_MEAN] = {"--mean", 1},
    [O_PEAK] = {"--peak", 1},           [O_CORR] = {"--corr", 1},
    [O_SCATTER] = {"--scatter", 1},     [O_FRACTION] = {"--fraction", 1},
    [O_ELEMENT] = {"--element", 1},
};

const char gs_gen_usage[] = "--kind lap|sandwich|lap-fine [options]";

const char gs_gen_help[] =
    "Build an FE assembly model (Mindlin plates condensed onto the junction normal\n"
    "displacements) and write NAME.json + block .npy files, a gap cloud and a pattern.\n"
    "Options take their value as --opt VALUE or --opt=VALUE.\n"
    "model:\n"
    "  --kind K            lap (UJM1-like, n=5206), lap-fine (UJM2-like, n=11256),\n"
    "                      sandwich (LJM-like, n=6171)\n"
    "  --small             the small test version of the kind (n ~ 100-200)\n"
    "  --scale S           refine (S > 1) or coarsen the mesh; n grows ~ S^2 (<= 1000)\n"
    "  --nx N              junction nodes along the joint (3..20000; sandwich 4..)\n"
    "  --ny N              junction nodes across the overlap (sandwich: wing overlap;\n"
    "                      2..2000)\n"
    "  --nyc N             sandwich: junction nodes across the CWB region (1..2000)\n"
    "  --length MM         junction length (mm)\n"
    "  --hy MM             element size across the joint (mm)\n"
    "  --thickness T[,T..] part thicknesses (mm): one for every part, or one per\n"
    "                      part in part order (lap 2, sandwich 4)\n"
    "  --far W[,W..]       part extents beyond the junction (mm, 0..1e5), the same way\n"
    "  (ranges: lengths and thicknesses within [1e-3, 1e5] mm, elements of aspect\n"
    "  hx/hy within [1/20, 20] with hx = length / (nx - 1), thicknesses >= 1e-3 x\n"
    "  the element size; docs/generator.md)\n"
    "  --clamp 0|1         clamp the wing panel's far edge (1: lap default)\n"
    "  --supports N        support points per row (0 or 2..32; wing panel / buttstrap\n"
    "                      sides; lap: an extra row beside the clamped edge)\n"
    "  --element E         plate element: mitc4 (default: no spurious mode) or sri\n"
    "                      (the default before 2026-11-28, for the figures measured\n"
    "                      on it: its hourglass mode makes parts held by support\n"
    "                      points only far too soft; docs/generator.md)\n"
    "  --fast-every K      a fastener candidate every K stations\n"
    "  --fast-lines L      candidate lines per region (1 or 2)\n"
    "  --fast-load N       fastener load (N, default 500; 0..1e6)\n"
    "  --no-cond           skip the condition estimates\n"
    "  --uncondensed       keep each part's whole FE plate stiffness (sparse; free\n"
    "                      DOFs w, theta_x = dw/dx, theta_y = dw/dy; labels = FE node\n"
    "                      + 1, components 3, 4, 5: not Abaqus's rotations 4, 5)\n"
    "                      instead of condensing it onto the junction nodes;\n"
    "                      its condition is not estimated here (not with --inline)\n"
    "  --matrix-format F   write the stiffness files as F: npy (dense default; not\n"
    "                      with --uncondensed), matrix-market (sparse default),\n"
    "                      abaqus-coordinate, abaqus-matrix-input, nastran-dmig,\n"
    "                      abaqus-user-element (not with --inline)\n"
    "output:\n"
    "  --out DIR           output directory (created if missing; default .); the\n"
    "                      files are committed together, or none (a failure or a\n"
    "                      signal leaves no file of the run)\n"
    "  --name NAME         file base name (default: the kind)\n"
    "  --inline            write the blocks inline in the JSON\n"
    "  --gaps K            gap vectors in NAME.gaps.npy (default 100, 0 = none,\n"
    "                      at most 1e7; written in chunks)\n"
    "  --seed S            gap cloud seed (default 1)\n"
    "  --mean MM --peak MM --corr MM   gap cloud mean (0.5), peak (2.5), correlation\n"
    "                      length (200; 1e-3..1e6); a peak/mean ratio the cloud cannot\n"
    "                      meet on the model (about the pair count of its smallest\n"
    "                      interface, less the +-20% spread) is refused, naming the\n"
    "                      ratios it can\n"
    "  --scatter S         share of each gap's own random field, 0..1 (default 1:\n"
    "                      independent gaps; 0.2: similar gaps of one production line)\n"
    "  --fraction F        also write NAME.pattern.npy: round(F * n_fast) installed\n"
    "  -h, --help          this text\n"
    "Exit codes: 0 ok, 1 failure (gapsim gen: 5; a model too large for the memory,\n"
    "a write error), 2 usage (a value out of its range, options the generator cannot\n"
    "build together).\n";

static void gen_err(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gen_err(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static int parse_double(const char *s, double *v)
{
    return gs_parse_double(s, -HUGE_VAL, HUGE_VAL, v); /* any finite number */
}

static int parse_int(const char *s, int *v)
{
    long l;
    if (gs_parse_long(s, -1000000000L, 1000000000L, &l))
        return -1;
    *v = (int)l;
    return 0;
}

/* A seed: decimal digits only, 0 to 2^64 - 1, as every option number is
 * decimal (numarg.h). strtoull alone took " -5" (blanks, then a sign it
 * negates: seed 2^64 - 5), "0x10" and "010" (octal 8). */
static unsigned long long parse_seed(const char *s, int *bad)
{
    if (!s || !*s || strspn(s, "0123456789") != strlen(s)) {
        *bad = 1;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        *bad = 1;
    return v;
}

/* "a,b,c" -> up to max doubles (no empty field); returns the count or -1. */
static int parse_list(const char *s, double *v, int max)
{
    int n = 0;
    char buf[256];
    if (!s || strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *tok = buf, *comma;; tok = comma + 1) {
        comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (n >= max || parse_double(tok, &v[n]) != 0)
            return -1;
        n++;
        if (!comma)
            return n;
    }
}

/* mkdir -p: create dir and its missing parents; 0 on success, else -1 with
 * errno (ENOTDIR: dir, or a parent, is there but not a directory). */
static int make_dirs(const char *dir)
{
    char buf[PATH_MAX];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof buf) {
        errno = len ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(buf, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        buf[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* ---- the options' values ------------------------------------------------------ */

/* What the longest output path adds to --out and --name
 * ("/.gapsim-gen.XXXXXX/", ".part3.coord.mtx", ".tmp.XXXXXX" and the
 * writers' margin): within PATH_MAX. (A --name too long for a file name,
 * NAME_MAX, fails where its first file is made: "File name too long".) */
#define GEN_PATH_EXTRA 96

/* What the options ask for. */
typedef struct {
    gs_gen_params p;
    gs_gen_cloud_params cp;
    const char *out_dir, *name, *matrix_format;
    int inline_blocks, n_gaps, have_fraction;
    double fraction;
    unsigned long long seed;
} gen_job;

static int gen_bad(const char *prog, int k, const char *v)
{
    gen_err(prog, "bad value for %s: '%s'\n", gs_gen_opts[k].name, v);
    return 2;
}

/* A value that is a number but out of its range: the option, the value and
 * the range. */
static int gen_range(const char *prog, int k, const char *v, const char *range)
{
    gen_err(prog, "bad value for %s: '%s' (%s)\n", gs_gen_opts[k].name, v, range);
    return 2;
}

/* Option k, if given, as a number in [lo, hi] (above lo if lo_open) into *v;
 * 0, or 2 after the message (unit: what the range is in, "mm"). */
static int opt_real(const char *prog, const gs_gen_args *a, int k, double lo, double hi,
                    int lo_open, const char *unit, double *v)
{
    const char *s = a->value[k];
    double x;
    char range[96];
    if (!s)
        return 0;
    if (parse_double(s, &x))
        return gen_bad(prog, k, s);
    if (!(x >= lo && x <= hi) || (lo_open && x == lo)) {
        snprintf(range, sizeof range, "%s, within %c%g, %g]", unit, lo_open ? '(' : '[', lo, hi);
        return gen_range(prog, k, s, range);
    }
    *v = x;
    return 0;
}

static int opt_int(const char *prog, const gs_gen_args *a, int k, int lo, int hi, int *v)
{
    const char *s = a->value[k];
    int x;
    char range[64];
    if (!s)
        return 0;
    if (parse_int(s, &x))
        return gen_bad(prog, k, s);
    if (x < lo || x > hi) {
        snprintf(range, sizeof range, "an integer within [%d, %d]", lo, hi);
        return gen_range(prog, k, s, range);
    }
    *v = x;
    return 0;
}

/* --thickness / --far: one value for every part, or one per part (n parts),
 * each within [lo, hi] mm. */
static int opt_parts(const char *prog, const gs_gen_args *a, int k, gs_gen_kind kind, double lo,
                     double hi, double out[GS_GEN_MAX_PARTS])
{
    const char *s = a->value[k];
    const int n = gs_gen_kind_parts(kind);
    double v[GS_GEN_MAX_PARTS + 1];
    if (!s)
        return 0;
    int nl = parse_list(s, v, GS_GEN_MAX_PARTS + 1);
    if (nl < 0) {
        gen_err(prog, "bad %s '%s' (comma-separated mm)\n", gs_gen_opts[k].name, s);
        return 2;
    }
    if (nl != 1 && nl != n) {
        gen_err(prog, "%s '%s' has %d values, the %s model has %d parts: give one value for "
                "every part or %d in part order\n", gs_gen_opts[k].name, s, nl,
                gs_gen_kind_name(kind), n, n);
        return 2;
    }
    for (int q = 0; q < nl; q++)
        if (!(v[q] >= lo && v[q] <= hi)) {
            char range[96];
            snprintf(range, sizeof range, "mm, each within [%g, %g]", lo, hi);
            return gen_range(prog, k, s, range);
        }
    for (int b = 0; b < GS_GEN_MAX_PARTS; b++)
        out[b] = v[nl == 1 ? 0 : (b < n ? b : n - 1)];
    return 0;
}

/* The parts of the kinds in words (generator.c: wing_panel, cruciform_flange,
 * triform, buttstrap_1, buttstrap_2). */
static const char *part_name(gs_gen_kind kind, int b)
{
    static const char *const lap[] = {"wing panel", "cruciform flange"};
    static const char *const sw[] = {"wing panel", "triform flange", "buttstrap 1",
                                     "buttstrap 2"};
    return kind == GS_GEN_SANDWICH ? sw[b & 3] : lap[b & 1];
}

/* "--opt VALUE" of the options among ks[0..n) that were given, joined by
 * ", " into buf ("" if none). */
static const char *given(const gs_gen_args *a, const int *ks, int n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int q = 0; q < n; q++) {
        const int k = ks[q];
        if (!a->value[k] || used >= cap)
            continue;
        int w = snprintf(buf + used, cap - used, "%s%s %s", used ? ", " : "", gs_gen_opts[k].name,
                         a->value[k]);
        used += w > 0 ? (size_t)w : 0;
    }
    if (!buf[0])
        snprintf(buf, cap, "--kind %s", a->value[O_KIND] ? a->value[O_KIND] : "?");
    return buf;
}

/* The combinations of the model options the generator cannot build, in the
 * options' words (generator.h's ranges and the jig's needs), before
 * anything is built. 0, or 2 after the message. */
static int gen_check_model(const char *prog, const gs_gen_args *a, const gs_gen_params *p)
{
    const gs_gen_kind kind = p->kind;
    const int sw = kind == GS_GEN_SANDWICH, np = gs_gen_kind_parts(kind);
    char who[512];
    /* --scale alone can take the counts beyond their ranges */
    static const int o_counts[3] = {O_NX, O_NY, O_NYC};
    const int cnt[3] = {p->nx, p->ny_j, sw ? p->ny_c : 1};
    const int cmax[3] = {GS_GEN_NX_MAX, GS_GEN_NY_MAX, GS_GEN_NY_MAX};
    static const char *const what[3] = {"junction nodes along the joint",
                                        "junction nodes across the overlap",
                                        "junction nodes across the CWB region"};
    for (int q = 0; q < 3; q++)
        if (cnt[q] > cmax[q]) {
            gen_err(prog, "--scale %s makes %d %s, more than %d (%s): a smaller --scale\n",
                    a->value[O_SCALE] ? a->value[O_SCALE] : "?", cnt[q], what[q], cmax[q],
                    gs_gen_opts[o_counts[q]].name);
            return 2;
        }
    const double hx = p->length / (p->nx - 1), hy = p->hy;
    static const int o_hx[3] = {O_LENGTH, O_NX, O_SCALE}, o_all[4] = {O_LENGTH, O_NX, O_HY,
                                                                         O_SCALE};
    if (!(hx >= GS_GEN_LEN_MIN && hx <= GS_GEN_LEN_MAX)) {
        gen_err(prog, "%s: the element size along the joint, length / (nx - 1) = %g / %d = %g "
                "mm, is out of [%g, %g] mm\n", given(a, o_hx, 3, who, sizeof who), p->length,
                p->nx - 1, hx, GS_GEN_LEN_MIN, GS_GEN_LEN_MAX);
        return 2;
    }
    if (!(hx / hy >= 1.0 / GS_GEN_ASPECT_MAX && hx / hy <= GS_GEN_ASPECT_MAX)) {
        gen_err(prog, "%s: the elements would be %g x %g mm (along x: length / (nx - 1) = %g / "
                "%d; across: hy), an aspect ratio of %.3g: keep it within 1/%g .. %g (the "
                "plate element loses its accuracy and the condensation its digits beyond)\n",
                given(a, o_all, 4, who, sizeof who), hx, hy, p->length, p->nx - 1,
                hx >= hy ? hx / hy : hy / hx, GS_GEN_ASPECT_MAX, GS_GEN_ASPECT_MAX);
        return 2;
    }
    const double h = fmax(hx, hy);
    for (int b = 0; b < np; b++)
        if (!(p->t[b] >= GS_GEN_THIN_MIN * h)) {
            const int o_t[5] = {O_THICKNESS, O_LENGTH, O_NX, O_HY, O_SCALE};
            gen_err(prog, "%s: the %s (part %d) would be %g mm thick with elements of %g mm: "
                    "thinner than %g x its element size, its shear stiffness would drown its "
                    "bending stiffness (the condensation fails); a thicker part or smaller "
                    "elements\n", given(a, o_t, 5, who, sizeof who), part_name(kind, b), b,
                    p->t[b], h, GS_GEN_THIN_MIN);
            return 2;
        }
    for (int b = 0; b < np; b++)
        if (gs_gen_far_rows(p, b) < 0) {
            const int o_f[3] = {O_FAR, O_HY, O_SCALE};
            gen_err(prog, "%s: the %s (part %d) would extend %g element rows of %g mm beyond "
                    "the junction, more than %d: a shorter --far or a larger --hy\n",
                    given(a, o_f, 3, who, sizeof who), part_name(kind, b), b,
                    p->far_width[b] / hy, hy, GS_GEN_ROWS_MAX);
            return 2;
        }
    /* the jig */
    if (!sw && !p->clamp_far && p->n_support < 2) {
        gen_err(prog, "--clamp 0 leaves the wing panel on support points only: give --supports "
                "N (2 to %d points per row)\n", GS_GEN_SUPPORTS_MAX);
        return 2;
    }
    if (sw && p->n_support < 2) {
        gen_err(prog, "--supports %d: the sandwich's buttstraps%s rest on support points: give "
                "2 to %d points per row\n", p->n_support,
                p->clamp_far ? "" : " and its wing panel", GS_GEN_SUPPORTS_MAX);
        return 2;
    }
    for (int b = 0; b < np; b++) {
        const int need = gs_gen_far_rows_needed(p, b), rows = gs_gen_far_rows(p, b);
        if (rows >= need)
            continue;
        const char *why = sw ? (b == 0 ? "its two rows of support points"
                                : b == 1 ? "its clamped web line"
                                         : "its margin with the support points")
                             : b == 1 ? "its clamped web line"
                             : need == 1 ? "its clamped far edge (at 0 rows the clamp would "
                                           "fix the junction's own nodes)"
                                         : "its rows of support points";
        char rows_txt[256];
        snprintf(rows_txt, sizeof rows_txt, "%g mm beyond the junction, %d element row%s of "
                 "hy = %g mm, where it needs %d for %s", p->far_width[b], rows,
                 rows == 1 ? "" : "s", hy, need, why);
        if (a->value[O_FAR])
            gen_err(prog, "--far %s: the %s (part %d) extends %s: give it at least %g mm\n",
                    a->value[O_FAR], part_name(kind, b), b, rows_txt, need * hy);
        else if (a->value[O_HY])
            gen_err(prog, "--hy %s: the %s (part %d) extends %s: a smaller --hy, or --far\n",
                    a->value[O_HY], part_name(kind, b), b, rows_txt);
        else if (a->value[O_SCALE])
            gen_err(prog, "--scale %s is too small for the %s kind: it coarsens the elements "
                    "across the joint to hy = %g mm, and the %s (part %d) extends %s: a larger "
                    "--scale, or --far\n", a->value[O_SCALE], gs_gen_kind_name(kind), hy,
                    part_name(kind, b), b, rows_txt);
        else
            gen_err(prog, "%s: the %s (part %d) extends %s: give --far\n",
                    a->value[O_SUPPORTS] ? "--supports" : "--clamp", part_name(kind, b), b,
                    rows_txt);
        return 2;
    }
    return 0;
}

/* The model's parameters: the kind's defaults (or --small), --scale, then
 * the single options, then their combinations. 0, or 2 after the message. */
static int gen_model_opts(const char *prog, const gs_gen_args *a, gs_gen_params *p)
{
    gs_gen_kind kind;
    if (!a->value[O_KIND]) {
        gen_err(prog, "--kind is required (lap, sandwich, lap-fine); see --help\n");
        return 2;
    }
    if (gs_gen_kind_parse(a->value[O_KIND], &kind) != 0) {
        gen_err(prog, "unknown kind '%s' (lap, sandwich, lap-fine)\n", a->value[O_KIND]);
        return 2;
    }
    if (a->flag[O_SMALL])
        gs_gen_small_params(kind, p);
    else
        gs_gen_default_params(kind, p);
    double scale = 0.0;
    const int big = 1000000000, sw = kind == GS_GEN_SANDWICH;
    const double lmin = GS_GEN_LEN_MIN, lmax = GS_GEN_LEN_MAX;
    if (opt_real(prog, a, O_SCALE, 0.0, 1000.0, 1, "a factor", &scale))
        return 2;
    if (scale > 0.0)
        gs_gen_params_scale(p, scale);
    if (opt_int(prog, a, O_NX, sw ? 4 : 3, GS_GEN_NX_MAX, &p->nx) ||
        opt_int(prog, a, O_NY, 2, GS_GEN_NY_MAX, &p->ny_j) ||
        opt_int(prog, a, O_NYC, 1, GS_GEN_NY_MAX, &p->ny_c) ||
        opt_real(prog, a, O_LENGTH, lmin, lmax, 0, "mm", &p->length) ||
        opt_real(prog, a, O_HY, lmin, lmax, 0, "mm", &p->hy) ||
        opt_int(prog, a, O_CLAMP, 0, 1, &p->clamp_far) ||
        opt_int(prog, a, O_SUPPORTS, 0, GS_GEN_SUPPORTS_MAX, &p->n_support) ||
        opt_int(prog, a, O_FAST_EVERY, 1, big, &p->fast_every) ||
        opt_int(prog, a, O_FAST_LINES, 1, 2, &p->fast_lines) ||
        opt_real(prog, a, O_FAST_LOAD, 0.0, GS_GEN_LOAD_MAX, 0, "N", &p->fast_load) ||
        opt_parts(prog, a, O_THICKNESS, kind, lmin, lmax, p->t) ||
        opt_parts(prog, a, O_FAR, kind, 0.0, lmax, p->far_width))
        return 2;
    if (p->n_support == 1)
        return gen_range(prog, O_SUPPORTS, a->value[O_SUPPORTS], "0, or 2 to 32 points per row");
    if (a->value[O_ELEMENT] && gs_fe_element_parse(a->value[O_ELEMENT], &p->element) != 0) {
        gen_err(prog, "unknown --element '%s' (sri, mitc4)\n", a->value[O_ELEMENT]);
        return 2;
    }
    if (a->flag[O_NO_COND])
        p->compute_cond = 0;
    p->uncondensed = a->flag[O_UNCONDENSED];
    return gen_check_model(prog, a, p);
}

/* The output and gap cloud options. 0, or 2 after the message. */
static int gen_output_opts(const char *prog, const gs_gen_args *a, gen_job *j)
{
    j->out_dir = a->value[O_OUT] ? a->value[O_OUT] : ".";
    j->name = a->value[O_NAME] ? a->value[O_NAME] : gs_gen_kind_name(j->p.kind);
    j->matrix_format = a->value[O_MATRIX_FORMAT];
    j->inline_blocks = a->flag[O_INLINE];
    j->n_gaps = 100;
    j->seed = 1;
    gs_gen_cloud_default(&j->cp);
    if (!*j->name || strchr(j->name, '/') || !strcmp(j->name, ".") || !strcmp(j->name, "..")) {
        gen_err(prog, "--name must be non-empty without '/', and not '.' or '..'\n");
        return 2;
    }
    if (!*j->out_dir) {
        gen_err(prog, "--out must not be empty: it names the output directory (default .)\n");
        return 2;
    }
    if (strlen(j->out_dir) + strlen(j->name) + GEN_PATH_EXTRA >= PATH_MAX) {
        gen_err(prog, "--out is too long (%zu bytes): with --name '%s' the output paths must "
                "stay below %d bytes, --out below %zu\n", strlen(j->out_dir), j->name,
                PATH_MAX, (size_t)PATH_MAX - strlen(j->name) - GEN_PATH_EXTRA);
        return 2;
    }
    if (j->matrix_format && strcmp(j->matrix_format, "npy") &&
        !gs_matrix_write_supported(j->matrix_format)) {
        gen_err(prog, "unknown --matrix-format '%s' (npy, matrix-market, abaqus-coordinate, "
                "abaqus-matrix-input, nastran-dmig, abaqus-user-element)\n", j->matrix_format);
        return 2;
    }
    if (j->inline_blocks && (j->matrix_format || j->p.uncondensed)) {
        gen_err(prog, "--inline writes the blocks into the JSON; %s: give one or the other\n",
                j->matrix_format ? "--matrix-format names the format of their files"
                                 : "--uncondensed parts are sparse, always written as files");
        return 2;
    }
    if (j->p.uncondensed && j->matrix_format && !strcmp(j->matrix_format, "npy")) {
        gen_err(prog, "--matrix-format npy writes dense blocks, and --uncondensed parts are "
                "sparse: give matrix-market (their default) or another sparse format, or leave "
                "out --uncondensed\n");
        return 2;
    }
    int bad = 0;
    if (a->value[O_SEED])
        j->seed = parse_seed(a->value[O_SEED], &bad);
    if (bad)
        return gen_bad(prog, O_SEED, a->value[O_SEED]);
    if (opt_int(prog, a, O_GAPS, 0, 10000000, &j->n_gaps) ||
        opt_real(prog, a, O_MEAN, GS_GEN_GAP_MIN, GS_GEN_LEN_MAX, 0, "mm", &j->cp.mean) ||
        opt_real(prog, a, O_PEAK, GS_GEN_GAP_MIN, GS_GEN_LEN_MAX, 0, "mm", &j->cp.peak) ||
        opt_real(prog, a, O_CORR, GS_GEN_LEN_MIN, GS_GEN_CORR_MAX, 0, "mm", &j->cp.corr_len) ||
        opt_real(prog, a, O_SCATTER, 0.0, 1.0, 0, "a share", &j->cp.scatter) ||
        opt_real(prog, a, O_FRACTION, 0.0, 1.0, 0, "a share", &j->fraction))
        return 2;
    j->have_fraction = a->value[O_FRACTION] != NULL;
    if (j->cp.peak <= j->cp.mean) {
        gen_err(prog, "--peak (%g) must exceed --mean (%g)\n", j->cp.peak, j->cp.mean);
        return 2;
    }
    return 0;
}

/* x rounded to 4 significant digits, down or up. */
static double round4(double x, int up)
{
    const double e = pow(10.0, floor(log10(x)) - 3.0);
    return (up ? ceil(x / e) : floor(x / e)) * e;
}

/* The gap cloud must meet its mean: --peak / --mean within the ratios this
 * cloud reaches on the model (gs_gen_cloud_ratio_range). 0, 1 (failure) or
 * 2 (usage, after the message). Cost O(K m (modes + bumps)): about a third
 * of writing the cloud, spent so that a ratio out of reach is refused
 * before anything is written. */
static int gen_check_cloud(const char *prog, const gen_job *j, const gs_model *mdl)
{
    if (j->n_gaps == 0)
        return 0;
    gs_error err;
    double rmin, rmax, r = j->cp.peak / j->cp.mean;
    gs_err rc = gs_gen_cloud_ratio_range(mdl, j->n_gaps, j->seed, &j->cp, &rmin, &rmax, &err);
    if (rc != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(rc), err.field[0] ? " at " : "", err.field,
                err.msg);
        return 1;
    }
    if (r >= rmin && r <= rmax)
        return 0;
    const char *why = r > rmax ? "an interface's mean gap is at least about its peak / its "
                                 "pair count, and each vector's mean and peak vary by"
                               : "an interface's mean gap is below its peak x (pairs - 1) / "
                                 "pairs, and each vector's mean and peak vary by";
    if (!(rmax >= rmin))
        gen_err(prog, "--peak %g / --mean %g: no peak/mean ratio can be met by these %d gap "
                "vectors (seed %llu) on this model (%s +-%.0f%%)\n", j->cp.peak, j->cp.mean,
                j->n_gaps, j->seed, why, 100.0 * j->cp.spread);
    else
        gen_err(prog, "--peak %g / --mean %g = %.4g cannot be met: these %d gap vectors (seed "
                "%llu) meet a peak/mean ratio of at %s %.4g on this model (%s +-%.0f%%); %s "
                "--peak or %s --mean\n", j->cp.peak, j->cp.mean, r, j->n_gaps, j->seed,
                r > rmax ? "most" : "least", r > rmax ? round4(rmax, 0) : round4(rmin, 1), why,
                100.0 * j->cp.spread, r > rmax ? "lower" : "raise", r > rmax ? "raise" : "lower");
    return 2;
}

/* ---- the run's resources, checked before the model is built ------------------------ */

/* Rows of the gap cloud generated and written at once (about 8 MiB). */
static int gaps_chunk_rows(int k, int m)
{
    int rows = m > 0 ? (1 << 20) / m : k;
    return rows < 1 ? 1 : rows > k ? k : rows;
}

/* The build's memory (gs_gen_plan: the blocks, the largest part's plate and
 * condensation, the condition estimate; an Abaqus user element of a whole
 * plate is written dense; the gap cloud is written in chunks) against the
 * process's limits (memlimit.h), as gapsim-batch checks its run. 0, or 1
 * after the message. */
static int gen_check_memory(const char *prog, const gen_job *j, const gs_gen_plan_info *pi)
{
    const double mib = 1048576.0;
    double uel = 0.0;
    if (j->p.uncondensed && j->matrix_format && !strcmp(j->matrix_format, "abaqus-user-element"))
        for (int b = 0; b < pi->n_parts; b++)
            uel = fmax(uel, 8.0 * (double)pi->ndof[b] * (double)pi->ndof[b]);
    const double chunk = j->n_gaps ? 16.0 * gaps_chunk_rows(j->n_gaps, pi->m) * (double)pi->m
                                   : 0.0;
    const double need = pi->peak_bytes + uel + chunk + 64.0 * pi->m;
    gs_memlimit ml;
    gs_memlimit_get(&ml);
    const char *fix = "fewer junction nodes (--nx, --ny, --nyc, --scale) or narrower plates "
                      "(--far, a larger --hy)";
    if (ml.bytes && need > 0.75 * (double)ml.bytes) {
        gen_err(prog, "too_large: building this model needs about %.0f MiB (n = %d: its "
                "stiffness blocks %.0f MiB, the largest part's plate and condensation the rest"
                "%s), more than 3/4 of the %.0f MiB this process may use (%s): %s\n", need / mib,
                pi->n, pi->block_bytes / mib,
                uel > 0 ? ", the dense abaqus-user-element matrix of a whole plate" : "",
                (double)ml.bytes / mib, ml.source, fix);
        return 1;
    }
    const int blas = gs_blas_get_threads() > 0 ? gs_blas_get_threads() : 1;
    const double more = need + (double)blas * (double)GS_MEMLIMIT_BLAS_THREAD_BYTES;
    if ((ml.as || ml.data) && !gs_memlimit_can_map((unsigned long long)more)) {
        gen_err(prog, "too_large: building this model needs about %.0f MiB of address space "
                "(n = %d; %.0f MiB for each of %d BLAS thread%s), beyond the limit of %.0f MiB "
                "(%s): raise that limit, or %s\n", more / mib, pi->n,
                (double)GS_MEMLIMIT_BLAS_THREAD_BYTES / mib, blas, blas == 1 ? "" : "s",
                (double)(ml.as && (!ml.data || ml.as <= ml.data) ? ml.as : ml.data) / mib,
                ml.as && (!ml.data || ml.as <= ml.data) ? "RLIMIT_AS (ulimit -v)"
                                                       : "RLIMIT_DATA (ulimit -d)", fix);
        return 1;
    }
    return 0;
}

/* The disk the files need at least (the gap cloud, K x m doubles; the
 * model's .npy blocks) against the free space of --out's file system (of
 * its nearest existing directory), before anything is built. A gap file
 * name that is a device (a symlink to /dev/null) needs none. 0, or 1 after
 * the message. */
static int gen_check_disk(const char *prog, const gen_job *j, const gs_gen_plan_info *pi)
{
    const double mib = 1048576.0;
    double gaps = 0.0, blocks = 0.0;
    char path[PATH_MAX];
    struct stat st;
    if (stat(j->out_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return 0; /* not a directory: make_dirs says so */
    snprintf(path, sizeof path, "%s/%s.gaps.npy", j->out_dir, j->name);
    if (j->n_gaps && !(stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
        gaps = 8.0 * (double)j->n_gaps * (double)pi->m;
    if (!j->p.uncondensed && !j->inline_blocks &&
        (!j->matrix_format || !strcmp(j->matrix_format, "npy")))
        blocks = pi->block_bytes;
    snprintf(path, sizeof path, "%s", j->out_dir);
    struct statvfs vs;
    while (statvfs(path, &vs) != 0) { /* the nearest existing directory of --out */
        char *slash = strrchr(path, '/');
        if (!slash) {
            if (!strcmp(path, "."))
                return 0;
            strcpy(path, ".");
        } else if (slash == path) {
            if (!path[1])
                return 0;
            path[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
    if (vs.f_blocks == 0)
        return 0; /* a file system that tells no size (/proc): nothing to check */
    const double avail = (double)vs.f_bavail * (double)vs.f_frsize;
    if (gaps + blocks > avail) {
        gen_err(prog, "no room: the files need at least %.0f MiB (%s.gaps.npy: %d x %d gaps, "
                "%.0f MiB; the stiffness blocks %.0f MiB), and the file system of %s has %.0f "
                "MiB free: fewer gaps (--gaps), a smaller model, or another --out\n",
                (gaps + blocks) / mib, j->name, j->n_gaps, pi->m, gaps / mib, blocks / mib,
                j->out_dir, avail / mib);
        return 1;
    }
    return 0;
}

/* With --matrix-format abaqus-user-element, every sparse part (a whole
 * plate, --uncondensed) must have the same DOF list at every node (one
 * user element, matrix_write.h); a plate resting on support points has
 * nodes without w. Checked on the model before anything is written. 0, or
 * 2 after the message. */
static int gen_check_formats(const char *prog, const gen_job *j, const gs_model *mdl)
{
    if (!j->matrix_format || strcmp(j->matrix_format, "abaqus-user-element"))
        return 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        const gs_spmat *a = mdl->parts[b].Ksp;
        if (!a || !a->label || !a->dof || a->n < 1)
            continue; /* a dense block: rows (row + 1, component 3), one DOF a node */
        int64_t k = 1; /* the first node's DOFs */
        while (k < a->n && a->label[k] == a->label[0])
            k++;
        for (int64_t r = 0; r < a->n;) {
            int64_t e = r + 1;
            while (e < a->n && a->label[e] == a->label[r])
                e++;
            int same = e - r == k;
            for (int64_t q = 0; same && q < k; q++)
                same = a->dof[r + q] == a->dof[q];
            if (!same) {
                char have[48] = "", want[48] = "";
                for (int64_t q = r; q < e && q < r + 6; q++)
                    snprintf(have + strlen(have), sizeof have - strlen(have), "%s%d",
                             q > r ? ", " : "", a->dof[q]);
                for (int64_t q = 0; q < k && q < 6; q++)
                    snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d",
                             q ? ", " : "", a->dof[q]);
                int no_w = 1, no_w0 = 1; /* which of the two has no w */
                for (int64_t q = r; q < e; q++)
                    no_w &= a->dof[q] != 3;
                for (int64_t q = 0; q < k; q++)
                    no_w0 &= a->dof[q] != 3;
                char why[96] = "";
                if (no_w || no_w0)
                    snprintf(why, sizeof why, " (a support point fixes the w of node %lld)",
                             (long long)a->label[no_w ? r : 0]);
                gen_err(prog, "--matrix-format abaqus-user-element cannot hold part %d (%s): a "
                        "user element has one DOF list for all its nodes, and FE node %lld has "
                        "components %s where node %lld has %s%s; give another --matrix-format "
                        "(matrix-market, the default of --uncondensed), or leave out "
                        "--uncondensed\n", b, mdl->parts[b].name, (long long)a->label[r], have,
                        (long long)a->label[0], want, why);
                return 2;
            }
            r = e;
        }
    }
    return 0;
}

/* ---- write, report ------------------------------------------------------------------ */

/* What the report prints after the files were written. */
typedef struct {
    double gaps_mean, gaps_max;
    int pattern_on;
    double t_write;
} gen_report;

/* err's message with the staging directory's name replaced by the output
 * directory's (the writers name the files they were writing). */
static void unstage_msg(gs_error *err, const char *stage, const char *dir)
{
    char *at = stage ? strstr(err->msg, stage) : NULL;
    if (!at)
        return;
    char tmp[sizeof err->msg];
    snprintf(tmp, sizeof tmp, "%.*s%s%s", (int)(at - err->msg), err->msg, dir,
             at + strlen(stage));
    memcpy(err->msg, tmp, sizeof tmp);
}

/* NAME.gaps.npy (K x m) into wf, generated and written chunk by chunk
 * (gs_gen_gap_cloud_rows: the same rows as the whole cloud at once); its
 * mean and maximum into rep. */
static gs_err gen_write_gaps(const gen_job *j, const gs_model *mdl, gs_wfile *wf,
                             gen_report *rep, gs_error *err)
{
    const int m = mdl->m, k = j->n_gaps, rows = gaps_chunk_rows(k, m);
    unsigned char hdr[GS_NPY_HEADER_CAP];
    size_t hl, shape[2] = {(size_t)k, (size_t)m};
    gs_err rc = gs_npy_write_header(hdr, sizeof hdr, 2, shape, &hl, err);
    if (rc == GS_OK)
        rc = gs_wfile_write(wf, hdr, hl, err);
    const size_t cap = (size_t)rows * (size_t)m;
    double *G = rc == GS_OK ? malloc(cap * sizeof *G) : NULL;
    unsigned char *buf = G ? malloc(cap * 8) : NULL;
    if (rc == GS_OK && !buf)
        rc = gs_errorf(err, GS_ERR_NOMEM, "gaps", "no memory for %d x %d gaps", rows, m);
    double s = 0.0, mx = 0.0;
    for (int r0 = 0; rc == GS_OK && r0 < k; r0 += rows) {
        const int c = k - r0 < rows ? k - r0 : rows;
        const size_t cnt = (size_t)c * (size_t)m;
        rc = gs_gen_gap_cloud_rows(mdl, r0, c, j->seed, &j->cp, G, err);
        for (size_t q = 0; rc == GS_OK && q < cnt; q++) {
            s += G[q];
            mx = fmax(mx, G[q]);
            gs_le_f8_put(buf + 8 * q, G[q]);
        }
        if (rc == GS_OK)
            rc = gs_wfile_write(wf, buf, cnt * 8, err);
    }
    rep->gaps_mean = s / ((double)k * (double)m);
    rep->gaps_max = mx;
    free(buf);
    free(G);
    return rc;
}

/* NAME.pattern.npy (n_fast 0/1 flags) into wf. */
static gs_err gen_write_pattern(const gen_job *j, const gs_model *mdl, int n_fast, gs_wfile *wf,
                                gen_report *rep, gs_error *err)
{
    unsigned char *inst = malloc((size_t)n_fast + 1);
    double *pat = malloc(((size_t)n_fast + 1) * sizeof *pat);
    gs_err rc = inst && pat ? gs_gen_pattern(mdl, j->fraction, inst, err)
                            : gs_errorf(err, GS_ERR_NOMEM, "pattern", "no memory");
    int on = 0;
    for (int i = 0; rc == GS_OK && i < n_fast; i++) {
        pat[i] = inst[i] ? 1.0 : 0.0;
        on += inst[i] != 0;
    }
    size_t shape[1] = {(size_t)n_fast};
    if (rc == GS_OK)
        rc = gs_npy_write_wfile(wf, pat, 1, shape, GS_NPY_ROW_MAJOR, err);
    rep->pattern_on = on;
    free(pat);
    free(inst);
    return rc;
}

/* Every file of the run, committed together (gen_files.h): the model (its
 * writer's files, staged), the gap cloud, the pattern. Nothing is left on
 * failure. 0, or 1 after the message. */
static int gen_write(const char *prog, const gen_job *j, const gs_model *mdl,
                     const gs_gen_info *info, gen_report *rep)
{
    gs_error err;
    gs_error_clear(&err);
    const double t_write = gs_now();
    char fname[PATH_MAX];
    gen_files fs;
    const char *stage = NULL;
    gs_wfile *wf;
    gs_err rc = gen_files_begin(&fs, j->out_dir, &err);
    if (rc == GS_OK)
        rc = gen_files_stage(&fs, &stage, &err);
    if (rc == GS_OK) {
        rc = gs_model_write_json_as(mdl, stage, j->name, j->inline_blocks, j->matrix_format,
                                    &err);
        unstage_msg(&err, stage, j->out_dir);
    }
    if (rc == GS_OK)
        rc = gen_files_adopt_staged(&fs, &err);
    if (rc == GS_OK && j->n_gaps > 0) {
        snprintf(fname, sizeof fname, "%s.gaps.npy", j->name);
        rc = gen_files_open(&fs, fname, &wf, &err);
        if (rc == GS_OK)
            rc = gen_write_gaps(j, mdl, wf, rep, &err);
    }
    if (rc == GS_OK && j->have_fraction) {
        snprintf(fname, sizeof fname, "%s.pattern.npy", j->name);
        rc = gen_files_open(&fs, fname, &wf, &err);
        if (rc == GS_OK)
            rc = gen_write_pattern(j, mdl, info->n_fast, wf, rep, &err);
    }
    if (rc == GS_OK)
        rc = gen_files_commit(&fs, &err);
    gen_files_end(&fs);
    rep->t_write = gs_now() - t_write;
    if (rc != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(rc), err.field[0] ? " at " : "", err.field,
                err.msg);
        return 1;
    }
    return 0;
}

/* A length in mm for the report: one decimal as before for the values that
 * have one (5.0), else %g (0.04, 1e+04). */
static void fmt_mm(char *buf, size_t cap, double v)
{
    if (v >= 0.1 && v < 1e4 && fabs(v * 10.0 - nearbyint(v * 10.0)) < 1e-9 * v)
        snprintf(buf, cap, "%.1f", v);
    else
        snprintf(buf, cap, "%g", v);
}

static void gen_print_model(const gen_job *j, const gs_model *mdl, const gs_gen_info *info)
{
    const gs_gen_params *p = &j->p;
    printf("model      %s (%s)\n", mdl->name,
           mdl->joint == GS_JOINT_SANDWICH ? "sandwich joint" : "simple joint");
    printf("n          %d\nm          %d\nparts      %d\n", info->n, info->m, info->n_parts);
    printf("element    %s (Mindlin quad, %s)\n", gs_fe_integration_name(p->element),
           p->element == GS_FE_MITC4 ? "MITC4 assumed shear strain"
                                     : "selective reduced integration");
    for (int b = 0; b < info->n_parts; b++) {
        char t[32];
        fmt_mm(t, sizeof t, p->t[b]);
        printf("  part %d   %-18s t %s mm  ndof %5d  FE %6d free DOFs  ||K||_1 %.3e", b,
               mdl->parts[b].name, t, info->ndof[b], info->fe_ndof[b], info->norm1[b]);
        if (p->compute_cond && mdl->parts[b].Ksp)
            printf("  cond_1 not estimated");
        else if (p->compute_cond)
            printf("  cond_1 %.3e", info->cond[b]);
        printf("  %.2f s\n", info->t_condense[b]);
    }
    printf("two pairs  %d nodes\nfixed      %d pairs against the rigid part\n",
           info->nodes_two_pairs, info->n_fixed_pairs);
    printf("fasteners  %d candidates, %g N each\n", info->n_fast, p->fast_load);
    if (p->compute_cond && info->cond_K > 0.0)
        printf("cond(K)    %.3e  (cond_1 estimate: max_b ||K_b||_1 * max_b ||K_b^-1||_1)\n",
               info->cond_K);
    else if (p->compute_cond)
        printf("cond(K)    not estimated (sparse parts: gapsim's precomputation estimates it "
               "from their factors)\n");
}

/* The report, printed once every file is committed. */
static void gen_print_report(const gen_job *j, const gs_model *mdl, const gs_gen_info *info,
                             const gen_report *rep)
{
    gen_print_model(j, mdl, info);
    if (j->n_gaps > 0)
        printf("gaps       %d x %d -> %s/%s.gaps.npy (seed %llu, mean %.3f mm, max %.3f mm)\n",
               j->n_gaps, mdl->m, j->out_dir, j->name, j->seed, rep->gaps_mean, rep->gaps_max);
    if (j->have_fraction)
        printf("pattern    %d of %d installed -> %s/%s.pattern.npy\n", rep->pattern_on,
               info->n_fast, j->out_dir, j->name);
    printf("files      %s/%s.json + %s\n", j->out_dir, j->name,
           j->inline_blocks       ? "inline blocks"
           : j->matrix_format     ? j->matrix_format
           : j->p.uncondensed     ? "matrix-market sparse matrices"
                                  : ".npy blocks");
    printf("time       FE + condensation %.2f s, model %.3f s, cond %.2f s, write %.2f s, total %.2f s\n",
           info->t_fe, info->t_model, info->t_cond, rep->t_write, info->t_total + rep->t_write);
}

/* stdout (the report) must have been written: a full disk or /dev/full is
 * an error (exit 1), not a silent 0. 0, or 1 after the message. */
static int gen_stdout_failed(const char *prog)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    gen_err(prog, "cannot write the report to stdout: %s\n", strerror(errno ? errno : EIO));
    return 1;
}

int gs_gen_check_args(const char *prog, const gs_gen_args *a, gs_gen_params *p,
                      gs_gen_cloud_params *cp, unsigned long long *seed, int *n_gaps)
{
    gen_job j;
    memset(&j, 0, sizeof j);
    if (gen_model_opts(prog, a, &j.p) || gen_output_opts(prog, a, &j))
        return 2;
    *p = j.p;
    *cp = j.cp;
    *seed = j.seed;
    *n_gaps = j.n_gaps;
    return 0;
}

int gs_gen_run(const char *prog, const gs_gen_args *a)
{
    gen_job j;
    memset(&j, 0, sizeof j);
    if (gen_model_opts(prog, a, &j.p) || gen_output_opts(prog, a, &j))
        return 2;
    gs_error err;
    gs_error_clear(&err);
    gs_gen_plan_info pi;
    gs_err e = gs_gen_plan(&j.p, &pi, &err); /* the options' checks passed: sizes, limits */
    if (e != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(e), err.field[0] ? " at " : "", err.field,
                err.msg);
        return e == GS_ERR_INVALID ? 2 : 1;
    }
    if (gen_check_memory(prog, &j, &pi) || gen_check_disk(prog, &j, &pi))
        return 1;
    gs_model *mdl = NULL;
    gs_gen_info info;
    e = gs_gen_assembly(&j.p, &mdl, &info, &err);
    if (e != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(e), err.field[0] ? " at " : "", err.field,
                err.msg);
        return 1;
    }
    int rc = gen_check_formats(prog, &j, mdl); /* before anything is written */
    if (rc == 0)
        rc = gen_check_cloud(prog, &j, mdl);
    if (rc == 0 && make_dirs(j.out_dir) != 0) {
        if (errno == ENOTDIR)
            gen_err(prog, "--out %s: not a directory (a name on that path is there and is "
                    "not a directory)\n", j.out_dir);
        else
            gen_err(prog, "cannot create directory %s: %s\n", j.out_dir, strerror(errno));
        rc = 1;
    }
    gen_report rep;
    memset(&rep, 0, sizeof rep);
    if (rc == 0)
        rc = gen_write(prog, &j, mdl, &info, &rep);
    if (rc == 0) {
        gen_print_report(&j, mdl, &info, &rep);
        rc = gen_stdout_failed(prog);
    }
    gs_model_free(mdl);
    return rc;
}

/* ---- gapsim-gen's reading of the options ------------------------------------- */

static int gen_find(const char *s, size_t len)
{
    for (int k = 0; k < GS_GEN_NOPTS; k++)
        if (strlen(gs_gen_opts[k].name) == len && !strncmp(gs_gen_opts[k].name, s, len))
            return k;
    return -1;
}

int gs_gen_parse_argv(const char *prog, int argc, char **argv, gs_gen_args *out)
{
    gs_gen_args a;
    memset(&a, 0, sizeof a);
    memset(out, 0, sizeof *out);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            printf("usage: %s %s\n%s", prog, gs_gen_usage, gs_gen_help);
            return 0;
        }
        if (!strcmp(s, "--")) { /* the generator takes no arguments */
            if (i + 1 < argc) {
                gen_err(prog, "unexpected argument '%s' (see --help)\n", argv[i + 1]);
                return 2;
            }
            break;
        }
        const char *eq = strncmp(s, "--", 2) ? NULL : strchr(s, '=');
        const int k = gen_find(s, eq ? (size_t)(eq - s) : strlen(s));
        if (k < 0) {
            gen_err(prog, s[0] == '-' ? "unknown option %.*s (see --help)\n"
                                      : "unexpected argument '%.*s' (see --help)\n",
                    (int)(eq ? eq - s : (long)strlen(s)), s);
            return 2;
        }
        if (!gs_gen_opts[k].has_value) {
            if (eq) {
                gen_err(prog, "%s takes no value\n", gs_gen_opts[k].name);
                return 2;
            }
            a.flag[k] = 1;
        } else if (eq) {
            a.value[k] = eq + 1;
        } else if (i + 1 < argc) {
            a.value[k] = argv[++i];
        } else {
            gen_err(prog, "%s needs a value\n", gs_gen_opts[k].name);
            return 2;
        }
    }
    *out = a;
    return -1;
}

int gs_gen_cli(const char *prog, int argc, char **argv)
{
    gs_gen_args a;
    const int rc = gs_gen_parse_argv(prog, argc, argv, &a);
    return rc >= 0 ? rc : gs_gen_run(prog, &a);
}
