/*
 * gen_cli.c -- the command line of the FE generator, shared by `gapsim-gen`
 * (cmd/gapsim_gen_main.c) and `gapsim gen` (clients/cli): parse the options,
 * build an assembly model (lap joint like the paper's UJM1/UJM2, sandwich
 * joint like its LJM) and write it as gapsim model files: DIR/NAME.json + one
 * file per stiffness block (.npy, inline, or an FE tool's format with
 * --matrix-format; --uncondensed keeps each part's whole plate stiffness,
 * sparse), a gap cloud DIR/NAME.gaps.npy (K x m)
 * and, with --fraction, a fastener pattern DIR/NAME.pattern.npy (n_fast 0/1
 * flags). Prints sizes, condition estimates and stage times. Method:
 * generator.h, fe_plate.h; docs/generator.md.
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

static void gen_err(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gen_err(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s --kind lap|sandwich|lap-fine [options]\n"
            "Build an FE assembly model (Mindlin plates condensed onto the junction normal\n"
            "displacements) and write NAME.json + block .npy files, a gap cloud and a pattern.\n"
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
            "  --thickness T[,T..] part thicknesses (mm), in part order\n"
            "  --far W[,W..]       part extents beyond the junction (mm), in part order\n"
            "  --clamp 0|1         clamp the wing panel's far edge (1: lap default)\n"
            "  --supports N        support points per row (wing panel / buttstrap sides)\n"
            "  --fast-every K      a fastener candidate every K stations\n"
            "  --fast-lines L      candidate lines per region (1 or 2)\n"
            "  --fast-load N       fastener load (N, default 500)\n"
            "  --no-cond           skip the condition estimates\n"
            "  --uncondensed       keep each part's whole FE plate stiffness (sparse; free\n"
            "                      DOFs w, theta_x, theta_y; labels = FE node + 1, components\n"
            "                      3, 4, 5) instead of condensing it onto the junction nodes\n"
            "  --matrix-format F   write the stiffness files as F: npy (dense default),\n"
            "                      matrix-market (sparse default), abaqus-coordinate,\n"
            "                      abaqus-matrix-input, nastran-dmig, abaqus-user-element\n"
            "output:\n"
            "  --out DIR           output directory (created if missing; default .)\n"
            "  --name NAME         file base name (default: the kind)\n"
            "  --inline            write the blocks inline in the JSON\n"
            "  --gaps K            gap vectors in NAME.gaps.npy (default 100, 0 = none)\n"
            "  --seed S            gap cloud seed (default 1)\n"
            "  --mean MM --peak MM --corr MM   gap cloud mean, peak, correlation length\n"
            "  --scatter S         share of each gap's own random field, 0..1 (default 1:\n"
            "                      independent gaps; 0.2: similar gaps of one production line)\n"
            "  --fraction F        also write NAME.pattern.npy: round(F * n_fast) installed\n"
            "  -h, --help          this text\n"
            "Exit codes: 0 ok, 1 failure, 2 usage.\n",
            prog);
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

static unsigned long long parse_ull_or(const char *s, int *bad)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s ? s : "", &end, 0);
    if (!s || !*s || *end || errno || s[0] == '-')
        *bad = 1;
    return v;
}

/* "a,b,c" -> up to max doubles; returns the count or -1. */
static int parse_list(const char *s, double *v, int max)
{
    int n = 0;
    char buf[256];
    if (!s || strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n >= max || parse_double(tok, &v[n]) != 0)
            return -1;
        n++;
    }
    return n > 0 ? n : -1;
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

int gs_gen_cli(const char *prog, int argc, char **argv)
{
    const char *kind_s = NULL, *out_dir = ".", *name = NULL;
    const char *thick_s = NULL, *far_s = NULL;
    int small = 0, inline_blocks = 0, n_gaps = 100, no_cond = 0, have_fraction = 0;
    int uncondensed = 0;
    const char *matrix_format = NULL;
    int nx = 0, ny = 0, nyc = 0, clamp = -1, supports = -1, fast_every = 0, fast_lines = 0;
    double scale = 0.0, length = 0.0, hy = 0.0, fast_load = -1.0, fraction = 0.0;
    unsigned long long seed = 1;
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);

    for (int a = 1; a < argc; a++) {
        const char *o = argv[a];
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        int bad = 0, used = 1;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout, prog);
            return 0;
        } else if (!strcmp(o, "--small")) {
            small = 1;
            used = 0;
        } else if (!strcmp(o, "--inline")) {
            inline_blocks = 1;
            used = 0;
        } else if (!strcmp(o, "--no-cond")) {
            no_cond = 1;
            used = 0;
        } else if (!strcmp(o, "--uncondensed")) {
            uncondensed = 1;
            used = 0;
        } else if (!v) {
            gen_err(prog, "%s needs a value (or unknown option)\n", o);
            return 2;
        } else if (!strcmp(o, "--matrix-format")) {
            matrix_format = v;
        } else if (!strcmp(o, "--kind")) {
            kind_s = v;
        } else if (!strcmp(o, "--out")) {
            out_dir = v;
        } else if (!strcmp(o, "--name")) {
            name = v;
        } else if (!strcmp(o, "--thickness")) {
            thick_s = v;
        } else if (!strcmp(o, "--far")) {
            far_s = v;
        } else if (!strcmp(o, "--scale")) {
            bad = parse_double(v, &scale) || !(scale > 0.0);
        } else if (!strcmp(o, "--nx")) {
            bad = parse_int(v, &nx) || nx < 1;
        } else if (!strcmp(o, "--ny")) {
            bad = parse_int(v, &ny) || ny < 1;
        } else if (!strcmp(o, "--nyc")) {
            bad = parse_int(v, &nyc) || nyc < 1;
        } else if (!strcmp(o, "--length")) {
            bad = parse_double(v, &length) || !(length > 0.0);
        } else if (!strcmp(o, "--hy")) {
            bad = parse_double(v, &hy) || !(hy > 0.0);
        } else if (!strcmp(o, "--clamp")) {
            bad = parse_int(v, &clamp) || (clamp != 0 && clamp != 1);
        } else if (!strcmp(o, "--supports")) {
            bad = parse_int(v, &supports) || supports < 0;
        } else if (!strcmp(o, "--fast-every")) {
            bad = parse_int(v, &fast_every) || fast_every < 1;
        } else if (!strcmp(o, "--fast-lines")) {
            bad = parse_int(v, &fast_lines) || (fast_lines != 1 && fast_lines != 2);
        } else if (!strcmp(o, "--fast-load")) {
            bad = parse_double(v, &fast_load) || !(fast_load >= 0.0);
        } else if (!strcmp(o, "--gaps")) {
            bad = parse_int(v, &n_gaps) || n_gaps < 0 || n_gaps > 10000000;
        } else if (!strcmp(o, "--seed")) {
            seed = parse_ull_or(v, &bad);
        } else if (!strcmp(o, "--mean")) {
            bad = parse_double(v, &cp.mean) || !(cp.mean > 0.0);
        } else if (!strcmp(o, "--peak")) {
            bad = parse_double(v, &cp.peak) || !(cp.peak > 0.0);
        } else if (!strcmp(o, "--corr")) {
            bad = parse_double(v, &cp.corr_len) || !(cp.corr_len > 0.0);
        } else if (!strcmp(o, "--scatter")) {
            bad = parse_double(v, &cp.scatter) || !(cp.scatter >= 0.0 && cp.scatter <= 1.0);
        } else if (!strcmp(o, "--fraction")) {
            bad = parse_double(v, &fraction) || !(fraction >= 0.0 && fraction <= 1.0);
            have_fraction = 1;
        } else {
            gen_err(prog, "unknown option %s (see --help)\n", o);
            return 2;
        }
        if (bad) {
            gen_err(prog, "bad value for %s: '%s'\n", o, v);
            return 2;
        }
        a += used;
    }
    gs_gen_kind kind;
    if (!kind_s) {
        gen_err(prog, "--kind is required (lap, sandwich, lap-fine); see --help\n");
        return 2;
    }
    if (gs_gen_kind_parse(kind_s, &kind) != 0) {
        gen_err(prog, "unknown kind '%s' (lap, sandwich, lap-fine)\n", kind_s);
        return 2;
    }
    if (!name)
        name = gs_gen_kind_name(kind);
    if (!*name || strchr(name, '/')) {
        gen_err(prog, "--name must be non-empty without '/'\n");
        return 2;
    }
    if (cp.peak <= cp.mean) {
        gen_err(prog, "--peak (%g) must exceed --mean (%g)\n", cp.peak, cp.mean);
        return 2;
    }

    gs_gen_params p;
    if (small)
        gs_gen_small_params(kind, &p);
    else
        gs_gen_default_params(kind, &p);
    if (scale > 0.0)
        gs_gen_params_scale(&p, scale);
    if (nx)
        p.nx = nx;
    if (ny)
        p.ny_j = ny;
    if (nyc)
        p.ny_c = nyc;
    if (length > 0.0)
        p.length = length;
    if (hy > 0.0)
        p.hy = hy;
    if (clamp >= 0)
        p.clamp_far = clamp;
    if (supports >= 0)
        p.n_support = supports;
    if (fast_every)
        p.fast_every = fast_every;
    if (fast_lines)
        p.fast_lines = fast_lines;
    if (fast_load >= 0.0)
        p.fast_load = fast_load;
    if (no_cond)
        p.compute_cond = 0;
    p.uncondensed = uncondensed;
    if (matrix_format && strcmp(matrix_format, "npy") && !gs_matrix_write_supported(matrix_format)) {
        gen_err(prog, "unknown --matrix-format '%s' (npy, matrix-market, abaqus-coordinate, "
                "abaqus-matrix-input, nastran-dmig, abaqus-user-element)\n", matrix_format);
        return 2;
    }
    double lst[GS_GEN_MAX_PARTS];
    int nl;
    if (thick_s) {
        if ((nl = parse_list(thick_s, lst, GS_GEN_MAX_PARTS)) < 0) {
            gen_err(prog, "bad --thickness '%s' (up to %d comma-separated mm)\n",
                    thick_s, GS_GEN_MAX_PARTS);
            return 2;
        }
        for (int b = 0; b < GS_GEN_MAX_PARTS; b++) /* a shorter list repeats its last value */
            p.t[b] = lst[b < nl ? b : nl - 1];
    }
    if (far_s) {
        if ((nl = parse_list(far_s, lst, GS_GEN_MAX_PARTS)) < 0) {
            gen_err(prog, "bad --far '%s' (up to %d comma-separated mm)\n", far_s,
                    GS_GEN_MAX_PARTS);
            return 2;
        }
        for (int b = 0; b < GS_GEN_MAX_PARTS; b++)
            p.far_width[b] = lst[b < nl ? b : nl - 1];
    }

    if (make_dirs(out_dir) != 0) {
        gen_err(prog, "cannot create directory %s: %s\n", out_dir,
                errno ? strerror(errno) : "not a directory");
        return 1;
    }
    gs_error err;
    gs_error_clear(&err);
    gs_model *mdl = NULL;
    gs_gen_info info;
    gs_err rc = gs_gen_assembly(&p, &mdl, &info, &err);
    if (rc != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(rc), err.field[0] ? " at " : "",
                err.field, err.msg);
        return 1;
    }
    printf("model      %s (%s)\n", mdl->name,
           mdl->joint == GS_JOINT_SANDWICH ? "sandwich joint" : "simple joint");
    printf("n          %d\nm          %d\nparts      %d\n", info.n, info.m, info.n_parts);
    for (int b = 0; b < info.n_parts; b++) {
        printf("  part %d   %-18s t %.1f mm  ndof %5d  FE %6d free DOFs  ||K||_1 %.3e", b,
               mdl->parts[b].name, p.t[b], info.ndof[b], info.fe_ndof[b], info.norm1[b]);
        if (p.compute_cond)
            printf("  cond_1 %.3e", info.cond[b]);
        printf("  %.2f s\n", info.t_condense[b]);
    }
    printf("two pairs  %d nodes\nfixed      %d pairs against the rigid part\n",
           info.nodes_two_pairs, info.n_fixed_pairs);
    printf("fasteners  %d candidates, %.0f N each\n", info.n_fast, p.fast_load);
    if (p.compute_cond)
        printf("cond(K)    %.3e  (cond_1 estimate: max_b ||K_b||_1 * max_b ||K_b^-1||_1)\n",
               info.cond_K);

    double t_write = gs_now();
    rc = gs_model_write_json_as(mdl, out_dir, name, inline_blocks, matrix_format, &err);
    char path[4096];
    double *G = NULL, *pat = NULL;
    unsigned char *inst = NULL;
    if (rc == GS_OK && n_gaps > 0) {
        size_t cnt = gs_mul_size((size_t)n_gaps, (size_t)info.m);
        G = cnt ? malloc(cnt * sizeof *G) : NULL;
        if (!G)
            rc = gs_errorf(&err, GS_ERR_NOMEM, "gaps", "no memory for %d x %d gaps", n_gaps,
                           info.m);
        if (rc == GS_OK)
            rc = gs_gen_gap_cloud(mdl, n_gaps, seed, &cp, G, &err);
        if (rc == GS_OK) {
            snprintf(path, sizeof path, "%s/%s.gaps.npy", out_dir, name);
            size_t shape[2] = {(size_t)n_gaps, (size_t)info.m};
            rc = gs_npy_write_file(path, G, 2, shape, &err);
        }
        if (rc == GS_OK) {
            double s = 0.0, mx = 0.0;
            for (size_t q = 0; q < cnt; q++) {
                s += G[q];
                mx = fmax(mx, G[q]);
            }
            printf("gaps       %d x %d -> %s (seed %llu, mean %.3f mm, max %.3f mm)\n", n_gaps,
                   info.m, path, seed, s / (double)cnt, mx);
        }
    }
    if (rc == GS_OK && have_fraction) {
        inst = malloc((size_t)info.n_fast + 1);
        pat = malloc(((size_t)info.n_fast + 1) * sizeof *pat);
        if (!inst || !pat) {
            rc = gs_errorf(&err, GS_ERR_NOMEM, "pattern", "no memory");
        } else {
            rc = gs_gen_pattern(mdl, fraction, inst, &err);
            int on = 0;
            for (int i = 0; rc == GS_OK && i < info.n_fast; i++) {
                pat[i] = inst[i] ? 1.0 : 0.0;
                on += inst[i] != 0;
            }
            snprintf(path, sizeof path, "%s/%s.pattern.npy", out_dir, name);
            size_t shape[1] = {(size_t)info.n_fast};
            if (rc == GS_OK)
                rc = gs_npy_write_file(path, pat, 1, shape, &err);
            if (rc == GS_OK)
                printf("pattern    %d of %d installed -> %s\n", on, info.n_fast, path);
        }
    }
    free(G);
    free(pat);
    free(inst);
    if (rc != GS_OK) {
        gen_err(prog, "%s%s%s: %s\n", gs_err_name(rc), err.field[0] ? " at " : "",
                err.field, err.msg);
        gs_model_free(mdl);
        return 1;
    }
    printf("files      %s/%s.json + %s\n", out_dir, name,
           inline_blocks && !uncondensed ? "inline blocks"
           : matrix_format               ? matrix_format
           : uncondensed                 ? "matrix-market sparse matrices"
                                         : ".npy blocks");
    printf("time       FE + condensation %.2f s, model %.3f s, cond %.2f s, write %.2f s, total %.2f s\n",
           info.t_fe, info.t_model, info.t_cond, gs_now() - t_write,
           info.t_total + (gs_now() - t_write));
    gs_model_free(mdl);
    return 0;
}
