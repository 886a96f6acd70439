/*
 * fuzz_gencli.c -- fuzz target for the FE generator's command line
 * (gen/gen_cli.h: gapsim-gen's reading of argv, gs_gen_parse_argv, and the
 * checks of the options' values and combinations, gs_gen_check_args: the
 * lists of --thickness / --far, the --seed integer, the numbers). The input
 * is the argv words, one a line (fuzz_argv.h). Nothing is built or written.
 * Properties:
 *   - no crash; reading ends in go on (-1), help (0) or usage (2);
 *   - after reading, values are given only to valued options, flags (0/1)
 *     only to flags, and every value points into the words (whole, or after
 *     an '=' of an --opt=value word);
 *   - accepted options give parameters in their documented ranges: nx, ny,
 *     nyc, fast-every >= 1, clamp 0/1, fast-lines 1/2, element mitc4 (the
 *     default) or sri exactly as named, length, hy > 0,
 *     finite thicknesses and extents (a one-value list sets every part),
 *     mean < peak, scatter in [0, 1], 0 <= gaps <= 10^7, the seed as
 *     strtoull (base 0) reads its text wholly;
 *   - checking is deterministic, and gs_gen_cli (gapsim-gen), on inputs that
 *     end before the build (help, a usage error in reading or in the
 *     checks), returns the same code.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_argv.h"
#include "gen_cli.h"
#include "gs_fuzz.h"

const char *const gs_fuzz_target = "gencli";
const char *const gs_fuzz_dict[] = {
    "\n", "=", "--", "--kind", "lap", "sandwich", "lap-fine", "--small", "--scale", "--nx",
    "--ny", "--nyc", "--length", "--hy", "--thickness", "--far", "--clamp", "--supports",
    "--fast-every", "--fast-lines", "--fast-load", "--no-cond", "--uncondensed",
    "--matrix-format", "matrix-market", "nastran-dmig", "--out", "--name", "--inline", "--gaps",
    "--seed", "0x", "--mean", "--peak", "--corr", "--scatter", "--fraction", "--element", "sri",
    "mitc4", "full", "--help", "-h",
    ",", "1,2", "1.5", "-1", "0", "1e999", "nan", "18446744073709551616", NULL};

static int opt_index(const char *name)
{
    for (int k = 0; k < GS_GEN_NOPTS; k++)
        if (!strcmp(gs_gen_opts[k].name, name))
            return k;
    abort(); /* the table lost an option this target checks */
}

static void check_params(const gs_gen_args *a, const gs_gen_params *p,
                         const gs_gen_cloud_params *cp, unsigned long long seed, int n_gaps)
{
    GS_FUZZ_ASSERT(p->kind == GS_GEN_LAP || p->kind == GS_GEN_SANDWICH ||
                   p->kind == GS_GEN_LAP_FINE);
    GS_FUZZ_ASSERT(p->nx >= 1 && p->ny_j >= 1 && p->fast_every >= 1);
    GS_FUZZ_ASSERT(p->clamp_far == 0 || p->clamp_far == 1);
    GS_FUZZ_ASSERT(p->fast_lines == 1 || p->fast_lines == 2);
    GS_FUZZ_ASSERT(p->length > 0 && p->hy > 0 && p->fast_load >= 0);
    GS_FUZZ_ASSERT(p->uncondensed == a->flag[opt_index("--uncondensed")]);
    const char *el = a->value[opt_index("--element")];
    GS_FUZZ_ASSERT(p->element == (el && !strcmp(el, "sri") ? GS_FE_SRI : GS_FE_MITC4));
    GS_FUZZ_ASSERT(!el || !strcmp(el, "sri") || !strcmp(el, "mitc4"));
    const int parts = gs_gen_kind_parts(p->kind);
    GS_FUZZ_ASSERT(parts >= 1 && parts <= GS_GEN_MAX_PARTS);
    for (int b = 0; b < GS_GEN_MAX_PARTS; b++)
        GS_FUZZ_ASSERT(isfinite(p->t[b]) && isfinite(p->far_width[b]));
    const char *t = a->value[opt_index("--thickness")];
    if (t && !strchr(t, ','))
        for (int b = 0; b < GS_GEN_MAX_PARTS; b++)
            GS_FUZZ_ASSERT(p->t[b] == strtod(t, NULL));
    GS_FUZZ_ASSERT(cp->mean > 0 && cp->peak > cp->mean && cp->corr_len > 0);
    GS_FUZZ_ASSERT(cp->scatter >= 0 && cp->scatter <= 1);
    GS_FUZZ_ASSERT(n_gaps >= 0 && n_gaps <= 10000000);
    const char *s = a->value[opt_index("--seed")];
    if (s) {
        char *end = NULL;
        /* an accepted seed is decimal digits only (no blank, sign, 0x) */
        GS_FUZZ_ASSERT(*s && strspn(s, "0123456789") == strlen(s) &&
                       strtoull(s, &end, 10) == seed && !*end);
    } else {
        GS_FUZZ_ASSERT(seed == 1);
    }
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    static const char prog[] = "gapsim-gen";
    fz_argv w;
    fz_argv_split(data, size, prog, &w);
    gs_gen_args a;
    const int rc = gs_gen_parse_argv(prog, w.argc, w.argv, &a);
    GS_FUZZ_ASSERT(rc == -1 || rc == 0 || rc == 2);
    int accepted = 0;
    if (rc == -1) {
        for (int k = 0; k < GS_GEN_NOPTS; k++) {
            GS_FUZZ_ASSERT(a.flag[k] == 0 || (a.flag[k] == 1 && !gs_gen_opts[k].has_value));
            GS_FUZZ_ASSERT(!a.value[k] || (gs_gen_opts[k].has_value && fz_argv_owns(&w, a.value[k])));
        }
        gs_gen_params p, p2;
        gs_gen_cloud_params cp, cp2;
        memset(&p, 0, sizeof p), memset(&p2, 0, sizeof p2);
        memset(&cp, 0, sizeof cp), memset(&cp2, 0, sizeof cp2);
        unsigned long long seed = 0, seed2 = 0;
        int n_gaps = -1, n_gaps2 = -1;
        const int rc2 = gs_gen_check_args(prog, &a, &p, &cp, &seed, &n_gaps);
        GS_FUZZ_ASSERT(rc2 == 0 || rc2 == 2);
        GS_FUZZ_ASSERT(gs_gen_check_args(prog, &a, &p2, &cp2, &seed2, &n_gaps2) == rc2);
        if (rc2 == 0) {
            check_params(&a, &p, &cp, seed, n_gaps);
            GS_FUZZ_ASSERT(!memcmp(&p, &p2, sizeof p) && !memcmp(&cp, &cp2, sizeof cp));
            GS_FUZZ_ASSERT(seed == seed2 && n_gaps == n_gaps2);
            accepted = 1;
        } else {
            GS_FUZZ_ASSERT(gs_gen_cli(prog, w.argc, w.argv) == 2); /* nothing built */
        }
    } else {
        GS_FUZZ_ASSERT(gs_gen_cli(prog, w.argc, w.argv) == rc);
    }
    fz_argv_free(&w);
    return accepted;
}
