/*
 * bench_opts.c -- gapsim-bench's command line (bench_opts.h): the option
 * table, the strict reading of its values, the variants of --methods.
 */
#include "bench_opts.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numarg.h"

void bench_usage(FILE *f)
{
    fprintf(f,
        "usage: gapsim-bench [--model M.json | --kind lap|sandwich|lap-fine [--small]]\n"
        "                    [--gaps G.npy [--ngaps K] | --ngaps K --seed S [--scatter S]]\n"
        "                    [--fraction F | --sweep | --fractions F1,F2,...]\n"
        "                    [--methods VARIANT,VARIANT,... | all] [--warm-seq] [--moves N]\n"
        "                    [--cloud] [--dist]\n"
        "                    [--repeat R] [--interleave] [--clock wall|cpu] [--check TOL]\n"
        "                    [--no-ref] [--csv FILE] [--json FILE] [--dump-qp DIR]\n"
        "                    [--times FILE]\n"
        "Defaults: --kind lap, --ngaps 50 (generated cloud), --seed 1, --fraction 0.5,\n"
        "every available method x formulation with default options, then auto.\n"
        "Single-threaded (OpenBLAS 1 thread). An option's value follows it or '=':\n"
        "--ngaps 8 or --ngaps=8.\n"
        "\n"
        "  --gaps G.npy     the gap cloud (k x m, float64): every row, or the first K with\n"
        "                   --ngaps K\n"
        "  --ngaps K        gaps of the generated cloud (default 50), K >= 1\n"
        "  --seed S         seed of the generated cloud, 0 <= S < 2^63 (default 1)\n"
        "  --scatter S      generated cloud: share of each gap's own field, 0 <= S <= 1\n"
        "                   (1: independent gaps, default; 0.05-0.2: similar gaps, as of\n"
        "                   one production line)\n"
        "  --fraction F     fastener fraction, 0 <= F <= 1 (default 0.5)\n"
        "  --sweep          fastener fractions 0, 0.1, 0.5, 1 (the paper's Fig. 9)\n"
        "  --fractions L    the fractions to run, comma-separated, each in [0, 1], at most\n"
        "                   16 (time vs n_act sweep)\n"
        "  --methods L      comma-separated variants METHOD[:FORM][:OPTION...][@K]\n"
        "                     METHOD  gi lemke npm ipm auto ref\n"
        "                     FORM    dual relative primal (default: the method's)\n"
        "                     npm     combined|chol|cg (reduced Newton system, Table 8)\n"
        "                             exact|golden|armijo (line search, Table 9)\n"
        "                     ipm     mixed|split|jacobi|direct (normal system, Table 5)\n"
        "                             feasible|infeasible (start; default by joint type)\n"
        "                     *       every value of each option left unset\n"
        "                     @K      run this variant on the first K gaps only (K >= 1)\n"
        "                   'all' = every variant of every method and formulation:\n"
        "                   gi:dual, gi:relative, gi:primal, lemke:dual, npm:dual:*,\n"
        "                   npm:relative:*, npm:primal:*, ipm:dual:*, ipm:primal:*, auto\n"
        "                   (48 variants); e.g.\n"
        "                   --methods gi:relative,npm:dual:*,npm:relative:*@5,ipm:*@2,auto\n"
        "  --dist           per variant the time distribution: min, deciles, max (Fig. 11)\n"
        "  --repeat R       solve each gap R times and keep the shortest time, R >= 1\n"
        "                   (suppresses noise from other processes; auto learns from every\n"
        "                   repeat)\n"
        "  --interleave     time the variants gap by gap (every variant on gap 0, then on\n"
        "                   gap 1, ..., alternating their order), so that a drift of the\n"
        "                   machine's speed during the run weighs on all of them alike; the\n"
        "                   times, iterations and picks printed come from that pass, the\n"
        "                   accuracy check from one more solve of each gap per variant\n"
        "  --clock C        wall: the solver's own time (info.time, default); cpu: the\n"
        "                   thread CPU time of the gs_solve call, robust to time-slicing\n"
        "                   on a loaded machine (the solvers run on the calling thread)\n"
        "  --no-ref         skip the reference solves (timing runs only: no deviations, no\n"
        "                   bound, no --check, no lam_F.npy for --dump-qp)\n"
        "  --check TOL      acceptance, TOL > 0: every solve optimal and max|dx|, max|dw|\n"
        "                   <= TOL mm against the reference; prints a verdict per row and in\n"
        "                   total, exit status 3 if any row fails\n"
        "  --csv FILE       one row per variant and fraction (the table's figures, times\n"
        "                   and bound in ms at full precision, ratio = median / bound)\n"
        "  --json FILE      the same rows as JSON (numbers that are not finite, such as the\n"
        "                   deviations and bound under --no-ref, as null)\n"
        "  --times FILE     per-gap CSV, one row per variant and gap (with --repeat the kept\n"
        "                   solve, with --interleave the interleaved one): fraction, variant,\n"
        "                   gap, time, iterations, CG iterations, n_act, status (for plots\n"
        "                   of Fig. 9 and 11)\n"
        "  --dump-qp DIR    write each fraction's dual problems: DIR/Q.npy, DIR/p_F.npy (one\n"
        "                   row per gap, p = u0 + Q load - g) and, unless --no-ref,\n"
        "                   DIR/lam_F.npy (the oracle's multipliers): min 1/2 lam'Q lam -\n"
        "                   p'lam, lam >= 0, for timing other solvers on the same data\n"
        "                   (tests/bench/cvxopt_compare.py)\n"
        "  --warm-seq       warm vs cold starts on sequences of patterns differing by one\n"
        "                   fastener, up to 20 steps from each gap the variant runs on:\n"
        "                   iterations and time saved, medians of warm, cold and the bound\n"
        "                   (separate solver workspaces, so the warm one carries its factor\n"
        "                   from step to step)\n"
        "  --moves N        N >= 1 pattern-search moves (an installed fastener swapped for a\n"
        "                   free one), each gap the variant runs on warm-started from its\n"
        "                   stored solution under the fraction's pattern, move by move as\n"
        "                   gapsimd's workers claim them: medians cold, warm, warm with the\n"
        "                   factor cache (solvers/fcache.h), ratios to the bound, cache hits\n"
        "  --cloud          per variant also the cloud as a chained run solves it (gapsim-batch\n"
        "                   --chain on): windows of 64 gaps in nearest-neighbour order of their\n"
        "                   sketches, each warm-started from the previous gap's solution on\n"
        "                   one workspace (the factor travels); median per gap, its ratio to\n"
        "                   the bound and to the cold median, the mean, max |w - w_cold| (mm)\n"
        "Columns: median / mean / p95 / max time per solve, mean iterations (GI: active-set\n"
        "changes, Lemke: pivots, NPM: Newton steps, IPM: interior point steps), mean inner\n"
        "CG iterations per solve and per outer iteration (NPM cg/combined, IPM PCG), mean\n"
        "n_act, optimal solves, largest deviation from the reference in x and w (mm), median\n"
        "time / (Cholesky of Q_CC + Q[:,C] lam). Medians (times, the bound): of an even\n"
        "count the midpoint of the two middle values (as numpy.median); p95 and the deciles:\n"
        "nearest rank (the ceil(q n)-th smallest). After the single variants auto's mean\n"
        "is compared, on auto's gaps (its first K with auto@K), with the best single\n"
        "variant's mean (among those run on at least those gaps), with the per-gap best of\n"
        "them, and with every variant on the gaps both ran.\n");
}

void bench_variant_label(const bench_variant *v, gs_form ran, char *buf, size_t cap)
{
    int len = snprintf(buf, cap, "%s", gs_method_name(v->method));
    if (v->method != GS_METHOD_AUTO)
        len += snprintf(buf + len, cap - (size_t)len, ":%s", gs_form_name(ran));
    if (v->method == GS_METHOD_NPM)
        snprintf(buf + len, cap - (size_t)len, ":%s:%s", gs_npm_linear_name(v->npm_linear),
                 gs_linesearch_name(v->linesearch));
    else if (v->method == GS_METHOD_IPM)
        snprintf(buf + len, cap - (size_t)len, ":%s:%s", gs_ipm_linear_name(v->ipm_linear),
                 gs_ipm_start_name(v->ipm_start));
}

void bench_variant_opts(const bench_variant *v, gs_solve_opts *o)
{
    gs_solve_default_opts(o);
    o->method = v->method;
    o->form = v->form;
    o->npm_linear = v->npm_linear;
    o->linesearch = v->linesearch;
    o->ipm_linear = v->ipm_linear;
    o->ipm_start = v->ipm_start;
}

int bench_variant_gaps(const bench_variant *v, int k)
{
    return v->ngaps > 0 && v->ngaps < k ? v->ngaps : k;
}

/* The formulations a method has, for messages ("dual, relative"). */
static void method_forms(gs_method m, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int f = GS_FORM_DUAL; f < GS_FORM__COUNT; f++)
        if (gs_method_supports(m, (gs_form)f) && len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
                                    gs_form_name((gs_form)f));
}

/* The options a method takes after its form, for messages. */
static const char *method_options(gs_method m)
{
    switch (m) {
    case GS_METHOD_NPM:
        return "combined, chol, cg, exact, golden, armijo or *";
    case GS_METHOD_IPM:
        return "mixed, split, jacobi, direct, feasible, infeasible or *";
    case GS_METHOD_AUTO:
        return "none, auto picks the method and formulation itself";
    default:
        return "none";
    }
}

/* One token METHOD[:FORM][:OPTION...][@K] (tok is modified); appends its
 * expansion to v[*nv..cap). 0, or -1 with the reason in msg. */
static int parse_token(char *tok, bench_variant *v, int *nv, int cap, char *msg, size_t mcap)
{
    char whole[256];
    snprintf(whole, sizeof whole, "%s", tok);
    if (!*tok)
        return gs_arg_msg(msg, mcap, "--methods: an empty variant (two commas, or one at an "
                                     "end)"), -1;
    int ngaps = 0;
    char *at = strchr(tok, '@');
    if (at) {
        long k;
        *at = '\0';
        if (gs_parse_long(at + 1, 1, INT_MAX, &k) != 0)
            return gs_arg_msg(msg, mcap, "--methods: '%s': @K needs a gap count K >= 1, not "
                              "'%s'", whole, at + 1), -1;
        ngaps = (int)k;
    }
    if (!strcmp(tok, "all")) { /* every method x formulation with '*', then auto */
        for (int m = GS_METHOD_AUTO + 1; m < GS_METHOD__COUNT; m++)
            for (int f = GS_FORM_DUAL; f < GS_FORM__COUNT; f++) {
                if (m == GS_METHOD_REF || !gs_method_supports((gs_method)m, (gs_form)f))
                    continue;
                char sub[64];
                snprintf(sub, sizeof sub, "%s:%s:*", gs_method_name((gs_method)m),
                         gs_form_name((gs_form)f));
                const int nv0 = *nv;
                if (parse_token(sub, v, nv, cap, msg, mcap) != 0)
                    return -1;
                for (int i = nv0; i < *nv; i++)
                    v[i].ngaps = ngaps;
            }
        if (*nv >= cap)
            return gs_arg_msg(msg, mcap, "--methods: more than %d variants", cap), -1;
        v[(*nv)++] = (bench_variant){.method = GS_METHOD_AUTO, .ngaps = ngaps};
        return 0;
    }
    const size_t tl = strlen(tok);
    if (tok[0] == ':' || (tl && tok[tl - 1] == ':') || strstr(tok, "::"))
        return gs_arg_msg(msg, mcap, "--methods: '%s': an empty field between ':'", whole), -1;
    char *save = NULL, *part = strtok_r(tok, ":", &save);
    gs_method m;
    if (!part || gs_method_parse(part, &m) != 0)
        return gs_arg_msg(msg, mcap, "--methods: '%s': unknown method '%s' (gi, lemke, npm, "
                          "ipm, auto, ref or all)", whole, part ? part : ""), -1;
    gs_form f = GS_FORM_DEFAULT;
    int have_form = 0, nl = -1, ls = -1, il = -1, st = -1, star = 0;
    while ((part = strtok_r(NULL, ":", &save))) {
        gs_npm_linear v_nl;
        gs_linesearch v_ls;
        gs_ipm_linear v_il;
        gs_ipm_start v_st;
        int *slot = NULL, val = 0;
        const char *what = "";
        if (!strcmp(part, "*")) {
            star = 1;
            continue;
        } else if (gs_form_parse(part, &f) == 0) {
            slot = &have_form, val = 1, what = "formulation";
        } else if (m == GS_METHOD_NPM && gs_npm_linear_parse(part, &v_nl) == 0) {
            slot = &nl, val = (int)v_nl, what = "linear strategy";
        } else if (m == GS_METHOD_NPM && gs_linesearch_parse(part, &v_ls) == 0) {
            slot = &ls, val = (int)v_ls, what = "line search";
        } else if (m == GS_METHOD_IPM && gs_ipm_linear_parse(part, &v_il) == 0) {
            slot = &il, val = (int)v_il, what = "normal-system solve";
        } else if (m == GS_METHOD_IPM && gs_ipm_start_parse(part, &v_st) == 0) {
            slot = &st, val = (int)v_st, what = "start";
        } else {
            char forms[64];
            method_forms(m, forms, sizeof forms);
            if (!forms[0]) /* auto */
                return gs_arg_msg(msg, mcap, "--methods: '%s': unknown option '%s' of %s (it "
                                  "takes %s)", whole, part, gs_method_name(m),
                                  method_options(m)), -1;
            return gs_arg_msg(msg, mcap, "--methods: '%s': unknown option '%s' of %s (its "
                              "formulations: %s; its options: %s)", whole, part,
                              gs_method_name(m), forms, method_options(m)), -1;
        }
        if (*slot != (slot == &have_form ? 0 : -1))
            return gs_arg_msg(msg, mcap, "--methods: '%s': a second %s ('%s')", whole, what,
                              part), -1;
        *slot = val;
    }
    if (!gs_method_supports(m, f)) {
        char forms[64];
        method_forms(m, forms, sizeof forms);
        if (m == GS_METHOD_AUTO)
            return gs_arg_msg(msg, mcap, "--methods: '%s': auto picks the formulation "
                              "itself (give no form)", whole), -1;
        return gs_arg_msg(msg, mcap, "--methods: '%s': the %s formulation is not available "
                          "for %s (it has: %s)", whole, gs_form_name(f), gs_method_name(m),
                          forms), -1;
    }
    /* ranges of each option: the given value, all values under '*', else the default */
    const int npm = star && m == GS_METHOD_NPM, ipm = star && m == GS_METHOD_IPM;
    const int nl0 = nl >= 0 ? nl : 0, nl1 = nl >= 0 ? nl : (npm ? (int)GS_NPM_LIN_CG : 0);
    const int ls0 = ls >= 0 ? ls : 0, ls1 = ls >= 0 ? ls : (npm ? (int)GS_LS_ARMIJO : 0);
    const int il0 = il >= 0 ? il : 0, il1 = il >= 0 ? il : (ipm ? (int)GS_IPM_DIRECT : 0);
    /* the start: '*' means both explicit starts (auto is one of them) */
    const int st0 = st >= 0 ? st : (ipm ? (int)GS_IPM_START_FEASIBLE : 0);
    const int st1 = st >= 0 ? st : (ipm ? (int)GS_IPM_START_INFEASIBLE : 0);
    for (int a = nl0; a <= nl1; a++)
        for (int b = ls0; b <= ls1; b++)
            for (int c = il0; c <= il1; c++)
                for (int d = st0; d <= st1; d++) {
                    if (*nv >= cap)
                        return gs_arg_msg(msg, mcap, "--methods: more than %d variants "
                                          "(at '%s')", cap, whole), -1;
                    v[(*nv)++] = (bench_variant){m, f, (gs_npm_linear)a, (gs_linesearch)b,
                                                 (gs_ipm_linear)c, (gs_ipm_start)d, ngaps};
                }
    return 0;
}

/* The variants of --methods (NULL: every available method x formulation
 * with default options, then auto). The count, or -1 with msg. */
static int parse_variants(const char *spec, bench_variant *v, int cap, char *msg, size_t mcap)
{
    int nv = 0;
    if (!spec) {
        for (int m = GS_METHOD_AUTO + 1; m < GS_METHOD__COUNT; m++)
            for (int f = GS_FORM_DUAL; f < GS_FORM__COUNT; f++)
                if (m != GS_METHOD_REF && gs_method_supports((gs_method)m, (gs_form)f) &&
                    nv < cap)
                    v[nv++] = (bench_variant){.method = (gs_method)m, .form = (gs_form)f};
        if (nv < cap)
            v[nv++] = (bench_variant){.method = GS_METHOD_AUTO};
        return nv;
    }
    char *buf = strdup(spec);
    if (!buf) {
        gs_arg_msg(msg, mcap, "out of memory");
        return -1;
    }
    /* split on every comma by hand: strtok would skip empty fields */
    int rc = 0;
    for (char *tok = buf, *comma; rc == 0; tok = comma + 1) {
        comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        rc = parse_token(tok, v, &nv, cap, msg, mcap);
        if (!comma)
            break;
    }
    free(buf);
    return rc ? -1 : nv;
}

/* --fractions "F1,F2,...": each in [0, 1], no empty field, at most cap. */
static int parse_fractions(const char *spec, double *f, int cap)
{
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf)
        return -1;
    int n = 0;
    for (char *tok = buf, *comma;; tok = comma + 1) {
        comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (n >= cap || gs_parse_double(tok, 0.0, 1.0, &f[n]) != 0)
            return -1;
        n++;
        if (!comma)
            return n;
    }
}

typedef enum {
    O_HELP, O_SMALL, O_SWEEP, O_WARM_SEQ, O_CLOUD, O_DIST, O_INTERLEAVE, O_NO_REF, /* flags */
    O_MODEL, O_KIND, O_GAPS, O_NGAPS, O_SEED, O_SCATTER, O_FRACTION, O_FRACTIONS, O_MOVES,
    O_REPEAT, O_CLOCK, O_CHECK, O_METHODS, O_CSV, O_JSON, O_TIMES, O_DUMP_QP
} opt_id;

static const struct {
    const char *name;
    opt_id id;
} opts[] = {
    {"-h", O_HELP}, {"--help", O_HELP}, {"--small", O_SMALL}, {"--sweep", O_SWEEP},
    {"--warm-seq", O_WARM_SEQ}, {"--cloud", O_CLOUD}, {"--dist", O_DIST},
    {"--interleave", O_INTERLEAVE}, {"--no-ref", O_NO_REF}, {"--model", O_MODEL},
    {"--kind", O_KIND}, {"--gaps", O_GAPS}, {"--ngaps", O_NGAPS}, {"--seed", O_SEED},
    {"--scatter", O_SCATTER}, {"--fraction", O_FRACTION}, {"--fractions", O_FRACTIONS},
    {"--moves", O_MOVES}, {"--repeat", O_REPEAT}, {"--clock", O_CLOCK}, {"--check", O_CHECK},
    {"--methods", O_METHODS}, {"--csv", O_CSV}, {"--json", O_JSON}, {"--times", O_TIMES},
    {"--dump-qp", O_DUMP_QP},
};
#define N_OPTS ((int)(sizeof opts / sizeof opts[0]))

/* The value v of option id into a: 0, or -1 with *what the expected value. */
static int set_value(bench_args *a, opt_id id, const char *v, const char **what)
{
    long l;
    switch (id) {
    case O_MODEL: a->model_path = v; return 0;
    case O_GAPS: a->gaps_path = v; return 0;
    case O_METHODS: a->methods = v; return 0;
    case O_CSV: a->csv_path = v; return 0;
    case O_JSON: a->json_path = v; return 0;
    case O_TIMES: a->times_path = v; return 0;
    case O_DUMP_QP: a->dump_dir = v; return 0;
    case O_KIND: *what = "a kind: lap, sandwich or lap-fine"; return gs_gen_kind_parse(v, &a->kind);
    case O_NGAPS:
        *what = "a gap count in [1, 2147483647]";
        if (gs_parse_long(v, 1, INT_MAX, &l) != 0)
            return -1;
        a->ngaps = (int)l, a->ngaps_given = 1;
        return 0;
    case O_SEED:
        *what = "a seed in [0, 2^63 - 1]";
        if (gs_parse_long(v, 0, LONG_MAX, &l) != 0)
            return -1;
        a->seed = (unsigned long long)l;
        return 0;
    case O_SCATTER: *what = "a number in [0, 1]"; return gs_parse_double(v, 0, 1, &a->scatter);
    case O_FRACTION: *what = "a number in [0, 1]"; return gs_parse_double(v, 0, 1, &a->fraction);
    case O_FRACTIONS:
        *what = "a comma-separated list of at most 16 numbers in [0, 1]";
        return (a->nfrac = parse_fractions(v, a->fracs, BENCH_MAX_FRACTIONS)) > 0 ? 0 : -1;
    case O_MOVES:
        *what = "a move count in [1, 100000]";
        if (gs_parse_long(v, 1, 100000, &l) != 0)
            return -1;
        a->moves = (int)l;
        return 0;
    case O_REPEAT:
        *what = "a repeat count in [1, 100000]";
        if (gs_parse_long(v, 1, 100000, &l) != 0)
            return -1;
        a->repeat = (int)l;
        return 0;
    case O_CLOCK:
        *what = "a clock: wall or cpu";
        if (strcmp(v, "wall") && strcmp(v, "cpu"))
            return -1;
        a->cpu_clock = !strcmp(v, "cpu");
        return 0;
    case O_CHECK: /* (0, inf): 0 would check nothing */
        *what = "a tolerance > 0 (mm)";
        return gs_parse_double(v, 0, HUGE_VAL, &a->check_tol) != 0 || !(a->check_tol > 0) ? -1
                                                                                          : 0;
    default: return -1; /* a flag: not reached */
    }
}

static void set_flag(bench_args *a, opt_id id)
{
    switch (id) {
    case O_SMALL: a->small = 1; break;
    case O_SWEEP: a->sweep = 1; break;
    case O_WARM_SEQ: a->warm_seq = 1; break;
    case O_CLOUD: a->cloud = 1; break;
    case O_DIST: a->dist = 1; break;
    case O_INTERLEAVE: a->interleave = 1; break;
    case O_NO_REF: a->no_ref = 1; break;
    default: break;
    }
}

int bench_parse_args(int argc, char **argv, bench_args *a, char *msg, size_t cap)
{
    memset(a, 0, sizeof *a);
    a->kind = GS_GEN_LAP;
    a->ngaps = 50;
    a->seed = 1;
    a->scatter = 1.0;
    a->fraction = 0.5;
    a->repeat = 1;
    msg[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        /* --opt=VALUE: the name up to '=' */
        const char *eq = strncmp(s, "--", 2) ? NULL : strchr(s, '=');
        const size_t len = eq ? (size_t)(eq - s) : strlen(s);
        int k = 0;
        while (k < N_OPTS && (strlen(opts[k].name) != len || strncmp(s, opts[k].name, len)))
            k++;
        if (k == N_OPTS)
            return gs_arg_msg(msg, cap, s[0] == '-' ? "unknown option '%.*s'"
                                                    : "unexpected argument '%.*s'",
                              (int)len, s);
        const opt_id id = opts[k].id;
        if (id == O_HELP && !eq)
            return 1;
        if (id <= O_NO_REF) {
            if (eq)
                return gs_arg_msg(msg, cap, "%s takes no value", opts[k].name);
            set_flag(a, id);
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v)
            return gs_arg_msg(msg, cap, "%s needs a value", opts[k].name);
        const char *what = "";
        if (set_value(a, id, v, &what) != 0)
            return gs_arg_msg(msg, cap, "%s: '%s' is not %s", opts[k].name, v, what);
    }
    if (a->no_ref && a->check_tol > 0)
        return gs_arg_msg(msg, cap, "--check needs the reference solves (drop --no-ref)");
    if ((a->nv = parse_variants(a->methods, a->vars, BENCH_MAX_VARIANTS, msg, cap)) < 0)
        return 2;
    return 0;
}
