/*
 * gen_cli.c -- the command line of the FE generator, shared by `gapsim-gen`
 * (cmd/gapsim_gen_main.c) and `gapsim gen` (clients/cli): the option table,
 * gapsim-gen's reading of it, the checks of the values and of their
 * combinations, then build an assembly model (lap joint like the paper's
 * UJM1/UJM2, sandwich joint like its LJM) and write it as gapsim model files:
 * DIR/NAME.json + one file per stiffness block (.npy, inline, or an FE
 * tool's format with --matrix-format; --uncondensed keeps each part's whole
 * plate stiffness, sparse), a gap cloud DIR/NAME.gaps.npy (K x m; its mean
 * and peak checked against what the cloud can meet before anything is
 * written) and, with --fraction, a fastener pattern DIR/NAME.pattern.npy
 * (n_fast 0/1 flags). Prints sizes, condition estimates and stage times.
 * Method: generator.h, fe_plate.h; docs/generator.md.
 */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen_cli.h"
#include "generator.h"
#include "linalg.h"
#include "matrix_write.h"
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
    "  --scale S           refine (S > 1) or coarsen the mesh; n grows ~ S^2\n"
    "  --nx N              junction nodes along the joint\n"
    "  --ny N              junction nodes across the overlap (sandwich: wing overlap)\n"
    "  --nyc N             sandwich: junction nodes across the CWB region\n"
    "  --length MM         junction length (mm)\n"
    "  --hy MM             element size across the joint (mm)\n"
    "  --thickness T[,T..] part thicknesses (mm): one for every part, or one per\n"
    "                      part in part order (lap 2, sandwich 4)\n"
    "  --far W[,W..]       part extents beyond the junction (mm), the same way\n"
    "  --clamp 0|1         clamp the wing panel's far edge (1: lap default)\n"
    "  --supports N        support points per row (wing panel / buttstrap sides)\n"
    "  --element E         plate element: mitc4 (default: no spurious mode) or sri\n"
    "                      (the default before 2026-11-28, for the figures measured\n"
    "                      on it: its hourglass mode makes parts held by support\n"
    "                      points only far too soft; docs/generator.md)\n"
    "  --fast-every K      a fastener candidate every K stations\n"
    "  --fast-lines L      candidate lines per region (1 or 2)\n"
    "  --fast-load N       fastener load (N, default 500)\n"
    "  --no-cond           skip the condition estimates\n"
    "  --uncondensed       keep each part's whole FE plate stiffness (sparse; free\n"
    "                      DOFs w, theta_x, theta_y; labels = FE node + 1, components\n"
    "                      3, 4, 5) instead of condensing it onto the junction nodes;\n"
    "                      its condition is not estimated here (not with --inline)\n"
    "  --matrix-format F   write the stiffness files as F: npy (dense default),\n"
    "                      matrix-market (sparse default), abaqus-coordinate,\n"
    "                      abaqus-matrix-input, nastran-dmig, abaqus-user-element\n"
    "                      (not with --inline)\n"
    "output:\n"
    "  --out DIR           output directory (created if missing; default .)\n"
    "  --name NAME         file base name (default: the kind)\n"
    "  --inline            write the blocks inline in the JSON\n"
    "  --gaps K            gap vectors in NAME.gaps.npy (default 100, 0 = none)\n"
    "  --seed S            gap cloud seed (default 1)\n"
    "  --mean MM --peak MM --corr MM   gap cloud mean (0.5), peak (2.5), correlation\n"
    "                      length (200); a peak/mean ratio the cloud cannot meet on\n"
    "                      the model (about the pair count of its smallest\n"
    "                      interface, less the +-20% spread) is refused, naming the\n"
    "                      ratios it can\n"
    "  --scatter S         share of each gap's own random field, 0..1 (default 1:\n"
    "                      independent gaps; 0.2: similar gaps of one production line)\n"
    "  --fraction F        also write NAME.pattern.npy: round(F * n_fast) installed\n"
    "  -h, --help          this text\n"
    "Exit codes: 0 ok, 1 failure (gapsim gen: 5), 2 usage.\n";

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

/* mkdir -p: create dir and its missing parents; 0 on success. */
static int make_dirs(const char *dir)
{
    char buf[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof buf)
        return -1;
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
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* ---- the options' values ------------------------------------------------------ */

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

/* Option k, if given, as a number in [lo, hi] (above lo if lo_open) into *v;
 * 0, or 2 after the message. */
static int opt_real(const char *prog, const gs_gen_args *a, int k, double lo, double hi,
                    int lo_open, double *v)
{
    const char *s = a->value[k];
    double x;
    if (!s)
        return 0;
    if (parse_double(s, &x) || !(x >= lo && x <= hi) || (lo_open && x == lo))
        return gen_bad(prog, k, s);
    *v = x;
    return 0;
}

static int opt_int(const char *prog, const gs_gen_args *a, int k, int lo, int hi, int *v)
{
    const char *s = a->value[k];
    int x;
    if (!s)
        return 0;
    if (parse_int(s, &x) || x < lo || x > hi)
        return gen_bad(prog, k, s);
    *v = x;
    return 0;
}

/* --thickness / --far: one value for every part, or one per part (n parts). */
static int opt_parts(const char *prog, const gs_gen_args *a, int k, gs_gen_kind kind,
                     double out[GS_GEN_MAX_PARTS])
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
    for (int b = 0; b < GS_GEN_MAX_PARTS; b++)
        out[b] = v[nl == 1 ? 0 : (b < n ? b : n - 1)];
    return 0;
}

/* The model's parameters: the kind's defaults (or --small), --scale, then
 * the single options. 0, or 2 after the message. */
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
    const int big = 1000000000;
    if (opt_real(prog, a, O_SCALE, 0.0, HUGE_VAL, 1, &scale))
        return 2;
    if (scale > 0.0)
        gs_gen_params_scale(p, scale);
    if (opt_int(prog, a, O_NX, 1, big, &p->nx) || opt_int(prog, a, O_NY, 1, big, &p->ny_j) ||
        opt_int(prog, a, O_NYC, 1, big, &p->ny_c) ||
        opt_real(prog, a, O_LENGTH, 0.0, HUGE_VAL, 1, &p->length) ||
        opt_real(prog, a, O_HY, 0.0, HUGE_VAL, 1, &p->hy) ||
        opt_int(prog, a, O_CLAMP, 0, 1, &p->clamp_far) ||
        opt_int(prog, a, O_SUPPORTS, 0, big, &p->n_support) ||
        opt_int(prog, a, O_FAST_EVERY, 1, big, &p->fast_every) ||
        opt_int(prog, a, O_FAST_LINES, 1, 2, &p->fast_lines) ||
        opt_real(prog, a, O_FAST_LOAD, 0.0, HUGE_VAL, 0, &p->fast_load) ||
        opt_parts(prog, a, O_THICKNESS, kind, p->t) ||
        opt_parts(prog, a, O_FAR, kind, p->far_width))
        return 2;
    if (a->value[O_ELEMENT] && gs_fe_element_parse(a->value[O_ELEMENT], &p->element) != 0) {
        gen_err(prog, "unknown --element '%s' (sri, mitc4)\n", a->value[O_ELEMENT]);
        return 2;
    }
    if (a->flag[O_NO_COND])
        p->compute_cond = 0;
    p->uncondensed = a->flag[O_UNCONDENSED];
    return 0;
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
    if (!*j->name || strchr(j->name, '/')) {
        gen_err(prog, "--name must be non-empty without '/'\n");
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
    int bad = 0;
    if (a->value[O_SEED])
        j->seed = parse_seed(a->value[O_SEED], &bad);
    if (bad)
        return gen_bad(prog, O_SEED, a->value[O_SEED]);
    if (opt_int(prog, a, O_GAPS, 0, 10000000, &j->n_gaps) ||
        opt_real(prog, a, O_MEAN, 0.0, HUGE_VAL, 1, &j->cp.mean) ||
        opt_real(prog, a, O_PEAK, 0.0, HUGE_VAL, 1, &j->cp.peak) ||
        opt_real(prog, a, O_CORR, 0.0, HUGE_VAL, 1, &j->cp.corr_len) ||
        opt_real(prog, a, O_SCATTER, 0.0, 1.0, 0, &j->cp.scatter) ||
        opt_real(prog, a, O_FRACTION, 0.0, 1.0, 0, &j->fraction))
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
 * 2 (usage, after the message). */
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

/* ---- build, write, report -------------------------------------------------------- */

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
        printf("  part %d   %-18s t %.1f mm  ndof %5d  FE %6d free DOFs  ||K||_1 %.3e", b,
               mdl->parts[b].name, p->t[b], info->ndof[b], info->fe_ndof[b], info->norm1[b]);
        if (p->compute_cond && mdl->parts[b].Ksp)
            printf("  cond_1 not estimated");
        else if (p->compute_cond)
            printf("  cond_1 %.3e", info->cond[b]);
        printf("  %.2f s\n", info->t_condense[b]);
    }
    printf("two pairs  %d nodes\nfixed      %d pairs against the rigid part\n",
           info->nodes_two_pairs, info->n_fixed_pairs);
    printf("fasteners  %d candidates, %.0f N each\n", info->n_fast, p->fast_load);
    if (p->compute_cond && info->cond_K > 0.0)
        printf("cond(K)    %.3e  (cond_1 estimate: max_b ||K_b||_1 * max_b ||K_b^-1||_1)\n",
               info->cond_K);
    else if (p->compute_cond)
        printf("cond(K)    not estimated (sparse parts: gapsim's precomputation estimates it "
               "from their factors)\n");
}

/* DIR/NAME.gaps.npy (K x m). */
static gs_err gen_write_gaps(const gen_job *j, const gs_model *mdl, gs_error *err)
{
    const int m = mdl->m;
    char path[4096];
    size_t cnt = gs_mul_size((size_t)j->n_gaps, (size_t)m);
    double *G = cnt ? malloc(cnt * sizeof *G) : NULL;
    gs_err rc = G ? GS_OK : gs_errorf(err, GS_ERR_NOMEM, "gaps", "no memory for %d x %d gaps",
                                      j->n_gaps, m);
    if (rc == GS_OK)
        rc = gs_gen_gap_cloud(mdl, j->n_gaps, j->seed, &j->cp, G, err);
    if (rc == GS_OK) {
        snprintf(path, sizeof path, "%s/%s.gaps.npy", j->out_dir, j->name);
        size_t shape[2] = {(size_t)j->n_gaps, (size_t)m};
        rc = gs_npy_write_file(path, G, 2, shape, err);
    }
    if (rc == GS_OK) {
        double s = 0.0, mx = 0.0;
        for (size_t q = 0; q < cnt; q++) {
            s += G[q];
            mx = fmax(mx, G[q]);
        }
        printf("gaps       %d x %d -> %s (seed %llu, mean %.3f mm, max %.3f mm)\n", j->n_gaps, m,
               path, j->seed, s / (double)cnt, mx);
    }
    free(G);
    return rc;
}

/* DIR/NAME.pattern.npy (n_fast 0/1 flags). */
static gs_err gen_write_pattern(const gen_job *j, const gs_model *mdl, int n_fast,
                                gs_error *err)
{
    char path[4096];
    unsigned char *inst = malloc((size_t)n_fast + 1);
    double *pat = malloc(((size_t)n_fast + 1) * sizeof *pat);
    gs_err rc = inst && pat ? gs_gen_pattern(mdl, j->fraction, inst, err)
                            : gs_errorf(err, GS_ERR_NOMEM, "pattern", "no memory");
    int on = 0;
    for (int i = 0; rc == GS_OK && i < n_fast; i++) {
        pat[i] = inst[i] ? 1.0 : 0.0;
        on += inst[i] != 0;
    }
    snprintf(path, sizeof path, "%s/%s.pattern.npy", j->out_dir, j->name);
    size_t shape[1] = {(size_t)n_fast};
    if (rc == GS_OK)
        rc = gs_npy_write_file(path, pat, 1, shape, err);
    if (rc == GS_OK)
        printf("pattern    %d of %d installed -> %s\n", on, n_fast, path);
    free(pat);
    free(inst);
    return rc;
}

/* The model files, the gap cloud, the pattern and the last report lines.
 * 0, or 1 after the message. */
static int gen_write(const char *prog, const gen_job *j, const gs_model *mdl,
                     const gs_gen_info *info)
{
    gs_error err;
    gs_error_clear(&err);
    double t_write = gs_now();
    gs_err rc = gs_model_write_json_as(mdl, j->out_dir, j->name, j->inline_blocks,
                                       j->matrix_format, &err);
    if (rc == GS_OK && j->n_gaps > 0)
        rc = gen_write_gaps(j, mdl, &err);
    if (rc == GS_OK && j->have_fraction)
        rc = gen_write_pattern(j, mdl, info->n_fast, &err);
    if (rc != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(rc), err.field[0] ? " at " : "", err.field,
                err.msg);
        return 1;
    }
    printf("files      %s/%s.json + %s\n", j->out_dir, j->name,
           j->inline_blocks       ? "inline blocks"
           : j->matrix_format     ? j->matrix_format
           : j->p.uncondensed     ? "matrix-market sparse matrices"
                                  : ".npy blocks");
    printf("time       FE + condensation %.2f s, model %.3f s, cond %.2f s, write %.2f s, total %.2f s\n",
           info->t_fe, info->t_model, info->t_cond, gs_now() - t_write,
           info->t_total + (gs_now() - t_write));
    return 0;
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
    gs_model *mdl = NULL;
    gs_gen_info info;
    gs_err e = gs_gen_assembly(&j.p, &mdl, &info, &err);
    if (e != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(e), err.field[0] ? " at " : "", err.field,
                err.msg);
        return 1;
    }
    int rc = gen_check_cloud(prog, &j, mdl); /* before anything is written */
    if (rc == 0 && make_dirs(j.out_dir) != 0) {
        gen_err(prog, "cannot create directory %s: %s\n", j.out_dir,
                errno ? strerror(errno) : "not a directory");
        rc = 1;
    }
    if (rc == 0) {
        gen_print_model(&j, mdl, &info);
        rc = gen_write(prog, &j, mdl, &info);
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
