/*
 * fuzz_cli.c -- fuzz target for the parsers of the `gapsim` command
 * (clients/cli: args.h, reqopts.h, npyio.h) and of solve status names
 * (core/gs_status.h). The first byte picks the mode (b % 3) and, for argv,
 * the least number of positional arguments (b / 3 % 3); the rest is
 *   0: argv words, one a line (fuzz_argv.h), read by gc_args against the
 *      option table of `gapsim cloud submit` (the solve options of
 *      reqopts.h, valued options, a flag, a short alias, the global ones),
 *      then the solve options checked (gc_solve_opts_check) and encoded as
 *      a JSON body (gc_solve_opts_json) and as a query (gc_solve_opts_query);
 *      every word also read as a status name (gs_status_parse);
 *   1: the text of an index list (gc_arg_index_list);
 *   2: a .npy file, written under $GS_TEST_TMP (or /tmp) by input hash,
 *      read by gc_npy_shape and gc_npy_read_row (row chosen by hash).
 * Properties:
 *   - no crash; gc_args ends in go on (-1), help (0) or usage (GC_EUSAGE),
 *     with at most max_pos positionals (at least min_pos when going on),
 *     each a whole word, option values pointing into the words, flags 0/1,
 *     a non-empty server; a second reading gives the same;
 *   - checked solve options always encode (the list and number encoders'
 *     "cannot happen" refusals do not happen); the JSON lists are the parsed
 *     indices, "tol" is strtod of the text in (0, 1); the query has one
 *     key=value per option given, only unreserved, '%XX', '=' and '&'
 *     characters, numbers that read back to the same double and lists that
 *     are the indices in decimal;
 *   - an index list is accepted iff it is digits(,digits)* with every
 *     number at most INT_MAX; the values are the numbers, in order (as
 *     documented, neither sorted nor distinct); a refusal leaves the output;
 *   - a status name parses iff it is one of the table's names, and parses
 *     to the status of that name (round trip through gs_status_name);
 *   - a row is read iff the header check accepts the file, the row is in
 *     [0, k) and the width in [1, 10^8]: then k and m are the header's and
 *     the values those of the memory reader (core/npy.h) for that row; a
 *     row outside is GC_EUSAGE, a bad file GC_EFILE.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "args.h"
#include "fuzz_argv.h"
#include "gs_fuzz.h"
#include "gs_status.h"
#include "npy.h"
#include "npyio.h"
#include "reqopts.h"
#include "solver.h"

const char *const gs_fuzz_target = "cli";
const char *const gs_fuzz_dict[] = {
    "\n", "=", "--", "-", "-h", "--help", "-o", "--out", "--assembly", "--gaps", "--wait",
    "--server", "--token", "--cacert", "--json", "--solver", "--formulation", "--tol",
    "--max-iter", "--timeout", "--fasteners", "--fraction", "--fixed-pairs", "--warm-start",
    "--npm-linear", "--linesearch", "--ipm-linear", "--ipm-start", "--no-cache", "all", "none",
    "auto", "lemke", "npm", "ipm", "dual", "primal", "armijo", "mixed", "feasible", "optimal",
    "max_iter", "ray_termination", "infeasible", ",", "0,3,7", "2147483647", "2147483648",
    "0.5", "1e-9", ".5", "1.e-9", "nan", "\x93NUMPY", "'descr': '<f8'", "'fortran_order'",
    "True", "False", "'shape'", "(2, 3)", "(0,)", NULL};

#define FZ_MAX_ELEMS ((size_t)1 << 16)

/* ---- index lists -------------------------------------------------------------- */

/* digits(,digits)*, every number <= INT_MAX; the count of numbers or -1. */
static int index_list_spec(const char *s)
{
    int n = 0;
    const char *p = s;
    for (;;) {
        const char *d = p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == d)
            return -1;
        while (d < p - 1 && *d == '0') /* leading zeros */
            d++;
        if (p - d > 10 || (p - d == 10 && strncmp(d, "2147483647", 10) > 0))
            return -1;
        n++;
        if (!*p)
            return n;
        if (*p++ != ',')
            return -1;
    }
}

static void check_index_list(const char *s)
{
    int *v = (int *)&v, n = -7;
    const int rc = gc_arg_index_list("gapsim", "--fixed-pairs", s, &v, &n);
    const int spec = index_list_spec(s);
    if (rc) {
        GS_FUZZ_ASSERT(rc == GC_EUSAGE && spec < 0 && v == (int *)&v && n == -7);
        return;
    }
    GS_FUZZ_ASSERT(spec >= 1 && n == spec);
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end = NULL;
        GS_FUZZ_ASSERT(v[i] >= 0 && strtol(p, &end, 10) == v[i]);
        p = end + (*end == ',');
    }
    GS_FUZZ_ASSERT(*p == '\0');
    free(v);
}

/* ---- argv, solve options ------------------------------------------------------ */

typedef struct {
    gc_solve_opts o;
    const char *assembly, *gaps, *out;
    int wait;
    gc_ctx cx;
    const char *pos[2];
    int npos;
} cli_run;

static int run_args(cli_run *r, fz_argv *w, int min_pos)
{
    memset(r, 0, sizeof *r);
    r->cx.server = GC_DEFAULT_SERVER;
    const gc_opt opts[] = {
        {"--assembly", NULL, &r->assembly, NULL}, {"--gaps", NULL, &r->gaps, NULL},
        {"--out", "-o", &r->out, NULL},           {"--wait", NULL, NULL, &r->wait},
        GC_SOLVE_OPT_ENTRIES(r->o),               {NULL, NULL, NULL, NULL},
    };
    const gc_cmd cmd = {"gapsim cloud submit", "  (the fuzz target's table)\n",
                        "gapsim cloud submit --assembly ID --gaps G.npy [X [Y]]", min_pos, 2};
    return gc_args(&r->cx, &cmd, opts, w->argc, w->argv, r->pos, &r->npos);
}

/* The option values of r, in a fixed order (NULL: not given). */
static void values(const cli_run *r, const char *v[19])
{
    const char *const all[19] = {r->assembly, r->gaps, r->out, r->o.solver, r->o.formulation,
                                 r->o.tol, r->o.max_iter, r->o.timeout, r->o.fasteners,
                                 r->o.fraction, r->o.fixed, r->o.warm, r->o.npm_linear,
                                 r->o.linesearch, r->o.ipm_linear, r->o.ipm_start,
                                 r->cx.server, r->cx.token, r->cx.cacert};
    memcpy(v, all, sizeof all);
}

static int unhex(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                        : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The value of key in the query q ("?k=v&k=v"), unescaped, into out; 1 if found. */
static int query_value(const char *q, const char *key, char *out, size_t cap)
{
    const size_t kl = strlen(key);
    for (const char *p = q + 1; *p;) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t n = 0;
            for (const char *c = p + kl + 1; c < end; c++) {
                GS_FUZZ_ASSERT(n + 1 < cap);
                if (*c == '%') {
                    GS_FUZZ_ASSERT(end - c >= 3 && unhex(c[1]) >= 0 && unhex(c[2]) >= 0);
                    out[n++] = (char)(unhex(c[1]) * 16 + unhex(c[2]));
                    c += 2;
                } else {
                    out[n++] = *c;
                }
            }
            out[n] = '\0';
            return 1;
        }
        p = amp ? amp + 1 : end;
    }
    return 0;
}

static void check_num(const char *q, const char *key, const char *text)
{
    char v[64];
    if (!text)
        return;
    GS_FUZZ_ASSERT(query_value(q, key, v, sizeof v));
    const double a = strtod(text, NULL), b = strtod(v, NULL);
    GS_FUZZ_ASSERT(!memcmp(&a, &b, sizeof a));
}

static void check_list(const char *q, const cJSON *obj, const char *key, const char *text)
{
    if (!text)
        return;
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    GS_FUZZ_ASSERT(item != NULL);
    size_t cap = strlen(text) + 16;
    char *v = malloc(cap), *want = malloc(cap);
    GS_FUZZ_ASSERT(v && want);
    GS_FUZZ_ASSERT(query_value(q, key, v, cap));
    if (!strcmp(text, "all") || !strcmp(text, "none")) {
        GS_FUZZ_ASSERT(cJSON_IsString(item) && !strcmp(item->valuestring, text));
        GS_FUZZ_ASSERT(!strcmp(v, text));
    } else {
        int *ix = NULL, n = 0;
        GS_FUZZ_ASSERT(gc_arg_index_list("gapsim", key, text, &ix, &n) == 0);
        GS_FUZZ_ASSERT(cJSON_IsArray(item) && cJSON_GetArraySize(item) == n);
        size_t len = 0;
        for (int i = 0; i < n; i++) {
            const cJSON *e = cJSON_GetArrayItem(item, i);
            GS_FUZZ_ASSERT(cJSON_IsNumber(e) && e->valuedouble == (double)ix[i]);
            len += (size_t)snprintf(want + len, cap - len, i ? ",%d" : "%d", ix[i]);
            GS_FUZZ_ASSERT(len < cap);
        }
        GS_FUZZ_ASSERT(!strcmp(v, want));
        free(ix);
    }
    free(v);
    free(want);
}

static void check_encodings(const gc_solve_opts *o)
{
    const char *const given[] = {o->solver,    o->formulation, o->tol,        o->max_iter,
                                 o->timeout,   o->fasteners,   o->fraction,   o->fixed,
                                 o->warm,      o->npm_linear,  o->linesearch, o->ipm_linear,
                                 o->ipm_start, o->no_cache ? "false" : NULL};
    int n_given = 0;
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        n_given += given[i] != NULL;
    cJSON *obj = cJSON_CreateObject();
    GS_FUZZ_ASSERT(obj != NULL);
    GS_FUZZ_ASSERT(gc_solve_opts_json(o, obj) == 0);
    GS_FUZZ_ASSERT(cJSON_GetArraySize(obj) == n_given);
    if (o->tol) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "tol");
        GS_FUZZ_ASSERT(cJSON_IsNumber(t) && t->valuedouble > 0 && t->valuedouble < 1 &&
                       t->valuedouble == strtod(o->tol, NULL));
    }
    gc_buf q = {0};
    GS_FUZZ_ASSERT(gc_solve_opts_query(o, &q, '?') == 0);
    const char *s = q.p ? q.p : "";
    int n_eq = 0;
    for (const char *c = s; *c; c++) {
        n_eq += *c == '=';
        GS_FUZZ_ASSERT((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                       (*c >= '0' && *c <= '9') || strchr("-._~%=&?", *c));
    }
    GS_FUZZ_ASSERT(n_eq == n_given && (n_given == 0) == (*s == '\0'));
    GS_FUZZ_ASSERT(!*s || (s[0] == '?' && !strchr(s + 1, '?')));
    if (*s) {
        check_num(s, "tol", o->tol);
        check_num(s, "max_iter", o->max_iter);
        check_num(s, "timeout_s", o->timeout);
        check_num(s, "fastener_fraction", o->fraction);
        check_list(s, obj, "fasteners", o->fasteners);
        check_list(s, obj, "fixed_pairs", o->fixed);
    }
    gc_buf_free(&q);
    cJSON_Delete(obj);
}

static void check_status_name(const char *w)
{
    gs_status st = GS_STATUS__COUNT;
    const int rc = gs_status_parse(w, &st);
    int named = 0;
    for (int i = 0; i < GS_STATUS__COUNT; i++)
        named |= !strcmp(gs_status_name((gs_status)i), w);
    if (rc) {
        GS_FUZZ_ASSERT(rc == -1 && !named && st == GS_STATUS__COUNT);
    } else {
        GS_FUZZ_ASSERT(named && st >= 0 && st < GS_STATUS__COUNT);
        GS_FUZZ_ASSERT(!strcmp(gs_status_name(st), w));
    }
}

static int fuzz_argv(const uint8_t *data, size_t size, int min_pos)
{
    fz_argv w;
    fz_argv_split(data, size, "cloud", &w);
    for (int i = 1; i < w.argc; i++)
        check_status_name(w.argv[i]);
    cli_run *r = malloc(sizeof *r), *r2 = malloc(sizeof *r2);
    GS_FUZZ_ASSERT(r && r2);
    const int rc = run_args(r, &w, min_pos);
    GS_FUZZ_ASSERT(rc == -1 || rc == 0 || rc == GC_EUSAGE);
    GS_FUZZ_ASSERT(r->npos >= 0 && r->npos <= 2);
    GS_FUZZ_ASSERT(rc != -1 || r->npos >= min_pos);
    for (int i = 0; i < r->npos; i++) {
        int whole = 0;
        for (int j = 1; j < w.argc; j++)
            whole |= r->pos[i] == w.argv[j];
        GS_FUZZ_ASSERT(whole);
    }
    const char *v[19], *v2[19];
    values(r, v);
    for (int i = 0; i < 16; i++)
        GS_FUZZ_ASSERT(!v[i] || fz_argv_owns(&w, v[i]));
    GS_FUZZ_ASSERT(r->wait == 0 || r->wait == 1);
    GS_FUZZ_ASSERT(r->o.no_cache == 0 || r->o.no_cache == 1);
    GS_FUZZ_ASSERT(r->cx.json == 0 || r->cx.json == 1);
    if (rc == -1)
        GS_FUZZ_ASSERT(r->cx.server && *r->cx.server);
    GS_FUZZ_ASSERT(run_args(r2, &w, min_pos) == rc && r2->npos == r->npos);
    values(r2, v2);
    GS_FUZZ_ASSERT(!memcmp(v, v2, sizeof v) && !memcmp(r->pos, r2->pos, sizeof r->pos));
    int ok = 0;
    if (rc == -1) {
        const int chk = gc_solve_opts_check("gapsim cloud submit", &r->o);
        GS_FUZZ_ASSERT(chk == GC_OK || chk == GC_EUSAGE);
        if (chk == GC_OK) {
            gs_method m;
            GS_FUZZ_ASSERT(!r->o.solver || gs_method_parse(r->o.solver, &m) == 0);
            GS_FUZZ_ASSERT(!(r->o.fasteners && r->o.fraction));
            check_encodings(&r->o);
            ok = 1;
        }
    }
    free(r);
    free(r2);
    fz_argv_free(&w);
    return ok;
}

/* ---- .npy files ------------------------------------------------------------------ */

static int fuzz_npy(const uint8_t *data, size_t size, uint32_t h)
{
    char path[512];
    const char *dir = getenv("GS_TEST_TMP");
    snprintf(path, sizeof path, "%s/fuzz_cli_%08x.npy", dir && *dir ? dir : "/tmp", (unsigned)h);
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return 0;
    const int wrote = fwrite(data, 1, size, fp) == size;
    if (fclose(fp) != 0 || !wrote) {
        unlink(path);
        return 0;
    }
    size_t k = 7, m = 7, k2 = 9;
    const int rs = gc_npy_shape("gapsim", path, &k, &m);
    GS_FUZZ_ASSERT(rs == GC_OK || rs == GC_EFILE);
    long row = 0;
    if (rs == GC_OK) {
        switch (h % 4) {
        case 0: row = 0; break;
        case 1: row = (long)k - 1; break;
        case 2: row = (long)k; break;
        default: row = (long)((h >> 2) % (k + 2)) - 1;
        }
    }
    double *g = (double *)&g;
    int mm = -3;
    const int rr = gc_npy_read_row("gapsim", path, row, &g, &mm, &k2);
    unlink(path);
    if (rs != GC_OK) {
        GS_FUZZ_ASSERT(rr == GC_EFILE && g == NULL);
        return 0;
    }
    if (rr == GC_EUSAGE) {
        GS_FUZZ_ASSERT(g == NULL && k2 == k && m >= 1 && m <= 100000000);
        GS_FUZZ_ASSERT(row < 0 || (size_t)row >= k);
        return 0;
    }
    if (rr != GC_OK) {
        GS_FUZZ_ASSERT(rr == GC_EFILE && g == NULL);
        GS_FUZZ_ASSERT(m == 0 || m > 100000000 || k * m > ((size_t)1 << 31));
        return 0;
    }
    GS_FUZZ_ASSERT(row >= 0 && (size_t)row < k && k2 == k && mm >= 1 && (size_t)mm == m);
    double *all = NULL;
    gs_npy_info info;
    gs_error e;
    if (k * m <= FZ_MAX_ELEMS) {
        GS_FUZZ_ASSERT(gs_npy_read_mem(data, size, FZ_MAX_ELEMS, &all, &info, &e) == GS_OK);
        GS_FUZZ_ASSERT(info.shape[0] * info.shape[1] == k * m);
        GS_FUZZ_ASSERT(!memcmp(g, all + (size_t)row * m, sizeof(double) * m));
        free(all);
    }
    free(g);
    return 1;
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int mode = data[0] % 3, min_pos = data[0] / 3 % 3;
    if (mode == 0)
        return fuzz_argv(data + 1, size - 1, min_pos);
    if (mode == 2)
        return fuzz_npy(data + 1, size - 1, gs_fuzz_hash(data, size));
    char *s = malloc(size);
    GS_FUZZ_ASSERT(s != NULL);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    check_index_list(s);
    check_status_name(s);
    const int ok = index_list_spec(s) >= 0;
    free(s);
    return ok;
}
