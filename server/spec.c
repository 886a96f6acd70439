/*
 * spec.c -- request options of solves and clouds (see spec.h).
 */
#include "spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "text.h"

static gs_err want_string(const cJSON *v, const char *key, gs_error *err)
{
    if (!cJSON_IsString(v))
        return gs_errorf(err, GS_ERR_INVALID, key, "%s must be a string", key);
    return GS_OK;
}

static gs_err want_number(const cJSON *v, const char *key, gs_error *err)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return gs_errorf(err, GS_ERR_INVALID, key, "%s must be a finite number", key);
    return GS_OK;
}

/* A key may appear twice in a JSON object (the last one counts): the lists
 * of an earlier occurrence are freed before they are replaced. */
static gs_err parse_pattern(const cJSON *v, int n_fast, gsd_spec *sp, gs_error *err)
{
    free(sp->list);
    sp->list = NULL;
    sp->n_list = 0;
    gs_pattern p = {0};
    gs_err rc = gs_pattern_fasteners(v, "fasteners", n_fast, &p, err);
    sp->pattern = p.kind;
    sp->list = p.list;
    sp->n_list = p.n_list;
    return rc;
}

static gs_err parse_return(const cJSON *v, gsd_spec *sp, gs_error *err)
{
    static const char *const names[] = {"w", "lambda", "x", "kkt"};
    if (!cJSON_IsArray(v))
        return gs_errorf(err, GS_ERR_INVALID, "return",
                         "return must be an array of \"w\", \"lambda\", \"x\", \"kkt\"");
    sp->ret = 0;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        unsigned bit = 0;
        for (int k = 0; k < 4; k++)
            if (cJSON_IsString(e) && !strcmp(e->valuestring, names[k]))
                bit = 1u << k;
        if (!bit)
            return gs_errorf(err, GS_ERR_INVALID, "return",
                             "return[%d] must be one of \"w\", \"lambda\", \"x\", \"kkt\"", i);
        sp->ret |= bit;
        i++;
    }
    return GS_OK;
}

static gs_err parse_warm(const cJSON *v, int cloud, gsd_spec *sp, gs_error *err)
{
    if (cJSON_IsNull(v))
        return GS_OK;
    gs_err rc = want_string(v, "warm_start", err);
    if (rc)
        return rc;
    if (cloud && gsd_id_valid(v->valuestring, 'j')) {
        snprintf(sp->warm_job, sizeof sp->warm_job, "%s", v->valuestring);
        return GS_OK;
    }
    if (!cloud && gsd_id_valid(v->valuestring, 'r')) {
        snprintf(sp->warm, sizeof sp->warm, "%s", v->valuestring);
        return GS_OK;
    }
    return gs_errorf(err, GS_ERR_INVALID, "warm_start", "warm_start must be %s",
                     cloud ? "the id of a previous job (\"j_...\")"
                           : "the id of a previous result (\"r_...\")");
}

/* gaps_from: the id of a job whose gaps the cloud solves again (the
 * handler checks that it exists, on the same assembly). */
static gs_err parse_gaps_from(const cJSON *v, gsd_spec *sp, gs_error *err)
{
    gs_err rc = want_string(v, "gaps_from", err);
    if (!rc && !gsd_id_valid(v->valuestring, 'j'))
        rc = gs_errorf(err, GS_ERR_INVALID, "gaps_from",
                       "gaps_from must be the id of a previous job (\"j_...\")");
    if (!rc)
        snprintf(sp->gaps_job, sizeof sp->gaps_job, "%s", v->valuestring);
    return rc;
}

/* label: printable UTF-8 (no control bytes), at most GSD_LABEL_MAX bytes. */
static gs_err parse_label(const cJSON *v, gsd_spec *sp, gs_error *err)
{
    gs_err rc = want_string(v, "label", err);
    if (rc)
        return rc;
    size_t len = strlen(v->valuestring);
    if (len > GSD_LABEL_MAX)
        return gs_errorf(err, GS_ERR_RANGE, "label", "label is %zu bytes, more than %d", len,
                         GSD_LABEL_MAX);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)v->valuestring[i] < 0x20 || v->valuestring[i] == 0x7f)
            return gs_errorf(err, GS_ERR_INVALID, "label",
                             "label must not contain control characters");
    memcpy(sp->label, v->valuestring, len + 1);
    return GS_OK;
}

/* generate: {"count": k >= 1, "seed": integer in [0, 2^53]}; the caller bounds k. */
static gs_err parse_generate(const cJSON *v, gsd_spec *sp, gs_error *err)
{
    if (!cJSON_IsObject(v))
        return gs_errorf(err, GS_ERR_INVALID, "generate",
                         "generate must be an object {\"count\": k, \"seed\": s}");
    const cJSON *c = NULL, *s = NULL, *sc = NULL, *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!strcmp(e->string, "count"))
            c = e;
        else if (!strcmp(e->string, "seed"))
            s = e;
        else if (!strcmp(e->string, "scatter"))
            sc = e;
        else
            return gs_errorf(err, GS_ERR_INVALID, "generate",
                             "unknown key \"%s\" in generate (count, seed, scatter)", e->string);
    }
    if (!cJSON_IsNumber(c) || !(c->valuedouble >= 1 && c->valuedouble <= 1e9) ||
        c->valuedouble != floor(c->valuedouble))
        return gs_errorf(err, GS_ERR_INVALID, "generate.count",
                         "generate.count must be a positive integer (the number of gaps)");
    if (s && (!cJSON_IsNumber(s) || !(s->valuedouble >= 0 && s->valuedouble <= GSD_GEN_SEED_MAX) ||
              s->valuedouble != floor(s->valuedouble)))
        return gs_errorf(err, GS_ERR_INVALID, "generate.seed",
                         "generate.seed must be an integer in [0, 2^53]");
    if (sc && (!cJSON_IsNumber(sc) || !(sc->valuedouble >= 0 && sc->valuedouble <= 1)))
        return gs_errorf(err, GS_ERR_INVALID, "generate.scatter",
                         "generate.scatter must be a number in [0, 1] (1: independent gaps)");
    sp->gen_count = (int)c->valuedouble;
    sp->gen_seed = s ? (unsigned long long)s->valuedouble : 1;
    sp->gen_scatter = sc ? sc->valuedouble : 1.0;
    return GS_OK;
}

/* An enum-valued option given by name. */
static gs_err parse_named(const cJSON *v, const char *key, int (*parse)(const char *, void *),
                          void *dst, const char *allowed, gs_error *err)
{
    gs_err rc = want_string(v, key, err);
    if (rc)
        return rc;
    if (parse(v->valuestring, dst) != 0)
        return gs_errorf(err, GS_ERR_INVALID, key, "%s must be one of %s", key, allowed);
    return GS_OK;
}

static int p_method(const char *s, void *d) { return gs_method_parse(s, d); }
static int p_form(const char *s, void *d) { return gs_form_parse(s, d); }
static int p_npm(const char *s, void *d) { return gs_npm_linear_parse(s, d); }
static int p_ls(const char *s, void *d) { return gs_linesearch_parse(s, d); }
static int p_ipml(const char *s, void *d) { return gs_ipm_linear_parse(s, d); }
static int p_ipms(const char *s, void *d) { return gs_ipm_start_parse(s, d); }
static int p_chain(const char *s, void *d) { return gs_chain_mode_parse(s, d); }

static gs_err parse_key(const cJSON *v, int n_fast, int m, int cloud, gsd_spec *sp,
                        gs_error *err)
{
    const char *k = v->string;
    gs_solve_opts *o = &sp->opts;
    if (!strcmp(k, "solver"))
        return parse_named(v, k, p_method, &o->method, "auto, gi, lemke, npm, ipm, ref", err);
    if (!strcmp(k, "formulation"))
        return parse_named(v, k, p_form, &o->form, "default, dual, relative, primal", err);
    if (!strcmp(k, "npm_linear"))
        return parse_named(v, k, p_npm, &o->npm_linear, "combined, chol, cg", err);
    if (!strcmp(k, "linesearch"))
        return parse_named(v, k, p_ls, &o->linesearch, "exact, golden, armijo", err);
    if (!strcmp(k, "ipm_linear"))
        return parse_named(v, k, p_ipml, &o->ipm_linear, "mixed, split, jacobi, direct", err);
    if (!strcmp(k, "ipm_start"))
        return parse_named(v, k, p_ipms, &o->ipm_start, "auto, feasible, infeasible", err);
    if (!strcmp(k, "tol")) {
        gs_err rc = want_number(v, k, err);
        if (!rc && !(v->valuedouble > 0 && v->valuedouble < 1))
            rc = gs_errorf(err, GS_ERR_RANGE, k, "tol must be in (0, 1)");
        if (!rc)
            o->tol = v->valuedouble;
        return rc;
    }
    if (!strcmp(k, "max_iter")) {
        gs_err rc = want_number(v, k, err);
        if (!rc && !(v->valuedouble >= 0 && v->valuedouble <= GSD_MAX_ITER_CAP &&
                     v->valuedouble == floor(v->valuedouble)))
            rc = gs_errorf(err, GS_ERR_RANGE, k, "max_iter must be an integer in [0, %d] (0: "
                           "the method's default, 10 m + 100)", GSD_MAX_ITER_CAP);
        if (!rc)
            o->max_iter = (int)v->valuedouble;
        return rc;
    }
    if (!strcmp(k, "timeout_s")) { /* the upper bound is the server's: gsd_spec_timeout */
        gs_err rc = want_number(v, k, err);
        if (!rc && !(v->valuedouble > 0))
            rc = gs_errorf(err, GS_ERR_RANGE, k, "timeout_s must be a positive number of seconds "
                           "(at most the server's --max-timeout)");
        if (!rc)
            sp->timeout_s = v->valuedouble;
        return rc;
    }
    if (!strcmp(k, "cache")) {
        if (!cJSON_IsBool(v))
            return gs_errorf(err, GS_ERR_INVALID, k, "cache must be true or false");
        sp->no_cache = cJSON_IsFalse(v);
        return GS_OK;
    }
    if (!strcmp(k, "fasteners"))
        return parse_pattern(v, n_fast, sp, err);
    if (!strcmp(k, "fastener_fraction")) {
        gs_err rc = want_number(v, k, err);
        if (!rc && !(v->valuedouble >= 0 && v->valuedouble <= 1))
            rc = gs_errorf(err, GS_ERR_RANGE, k, "fastener_fraction must be in [0, 1]");
        if (!rc) {
            sp->pattern = GSD_PAT_FRACTION;
            sp->fraction = v->valuedouble;
        }
        return rc;
    }
    if (!strcmp(k, "fixed_pairs")) {
        free(sp->fixed);
        sp->fixed = NULL;
        sp->n_fixed = 0;
        return gs_json_index_list(v, k, m, &sp->fixed, &sp->n_fixed, err);
    }
    if (!strcmp(k, "warm_start"))
        return parse_warm(v, cloud, sp, err);
    if (!strcmp(k, "return") && !cloud)
        return parse_return(v, sp, err);
    if (!strcmp(k, "label") && cloud)
        return parse_label(v, sp, err);
    if (!strcmp(k, "generate") && cloud)
        return parse_generate(v, sp, err);
    if (!strcmp(k, "gaps_from") && cloud)
        return parse_gaps_from(v, sp, err);
    if (!strcmp(k, "chain") && cloud)
        return parse_named(v, k, p_chain, &sp->chain, "off, auto, on", err);
    return gs_errorf(err, GS_ERR_INVALID, k, "unknown option \"%s\"", k);
}

gs_err gsd_spec_parse(const cJSON *obj, int n_fast, int m, int cloud, gsd_spec *sp,
                      gs_error *err)
{
    memset(sp, 0, sizeof *sp);
    gs_solve_default_opts(&sp->opts);
    sp->ret = GSD_RET_W | GSD_RET_LAMBDA | GSD_RET_KKT;
    if (!cJSON_IsObject(obj))
        return gs_errorf(err, GS_ERR_INVALID, "", "the body must be a JSON object");
    int have_list = 0, have_frac = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, obj)
    {
        if (!strcmp(v->string, "g") || !strcmp(v->string, "gaps") ||
            !strcmp(v->string, "installed"))
            continue;
        have_list |= !strcmp(v->string, "fasteners");
        have_frac |= !strcmp(v->string, "fastener_fraction");
        gs_err rc = parse_key(v, n_fast, m, cloud, sp, err);
        if (rc) {
            gsd_spec_free(sp);
            return rc;
        }
    }
    if (have_list && have_frac) {
        gsd_spec_free(sp);
        return gs_errorf(err, GS_ERR_INVALID, "fastener_fraction",
                         "give either fasteners or fastener_fraction, not both");
    }
    gs_err rc = gs_solve_validate_opts(&sp->opts, err);
    if (rc) {
        /* the library names its own fields; the API's keys are these */
        if (err && !strcmp(err->field, "method"))
            snprintf(err->field, sizeof err->field, "solver");
        else if (err && !strcmp(err->field, "form"))
            snprintf(err->field, sizeof err->field, "formulation");
        gsd_spec_free(sp);
    }
    return rc;
}

void gsd_spec_free(gsd_spec *sp)
{
    free(sp->list);
    free(sp->fixed);
    free(sp->installed);
    sp->list = sp->fixed = sp->installed = NULL;
    sp->n_list = sp->n_fixed = sp->n_installed = sp->resolved = 0;
}

void gsd_spec_write(const gsd_spec *sp, gs_buf *b)
{
    const gs_solve_opts *o = &sp->opts;
    gs_buf_printf(b, "{\"solver\":\"%s\",\"formulation\":\"%s\",\"tol\":", gs_method_name(o->method),
                   gs_form_name(o->form));
    gs_buf_json_num(b, o->tol);
    gs_buf_printf(b, ",\"max_iter\":%d,\"npm_linear\":\"%s\",\"linesearch\":\"%s\","
                      "\"ipm_linear\":\"%s\",\"ipm_start\":\"%s\"",
                   o->max_iter, gs_npm_linear_name(o->npm_linear), gs_linesearch_name(o->linesearch),
                   gs_ipm_linear_name(o->ipm_linear), gs_ipm_start_name(o->ipm_start));
    if (sp->timeout_s > 0) {
        gs_buf_puts(b, ",\"timeout_s\":");
        gs_buf_json_num(b, sp->timeout_s);
    }
    if (sp->no_cache)
        gs_buf_puts(b, ",\"cache\":false");
    switch (sp->pattern) {
    case GSD_PAT_ALL: gs_buf_puts(b, ",\"fasteners\":\"all\""); break;
    case GSD_PAT_LIST:
        gs_buf_puts(b, ",\"fasteners\":");
        gs_buf_json_ints(b, sp->list, sp->n_list);
        break;
    case GSD_PAT_FRACTION:
        gs_buf_puts(b, ",\"fastener_fraction\":");
        gs_buf_json_num(b, sp->fraction);
        break;
    default: gs_buf_puts(b, ",\"fasteners\":\"none\""); break;
    }
    if (sp->n_fixed) {
        gs_buf_puts(b, ",\"fixed_pairs\":");
        gs_buf_json_ints(b, sp->fixed, sp->n_fixed);
    }
    if (sp->warm[0] || sp->warm_job[0]) {
        gs_buf_puts(b, ",\"warm_start\":");
        gs_buf_json_str(b, sp->warm[0] ? sp->warm : sp->warm_job);
    }
    if (sp->label[0]) {
        gs_buf_puts(b, ",\"label\":");
        gs_buf_json_str(b, sp->label);
    }
    if (sp->chain != GS_CHAIN_OFF)
        gs_buf_printf(b, ",\"chain\":\"%s\"", gs_chain_mode_name(sp->chain));
    if (sp->gen_count > 0) {
        gs_buf_printf(b, ",\"generate\":{\"count\":%d,\"seed\":%llu", sp->gen_count,
                      sp->gen_seed);
        if (sp->gen_scatter < 1.0) {
            gs_buf_puts(b, ",\"scatter\":");
            gs_buf_json_num(b, sp->gen_scatter);
        }
        gs_buf_puts(b, "}");
    }
    if (sp->gaps_job[0]) {
        gs_buf_puts(b, ",\"gaps_from\":");
        gs_buf_json_str(b, sp->gaps_job);
    }
    if (sp->resolved) {
        gs_buf_puts(b, ",\"installed\":");
        gs_buf_json_ints(b, sp->installed, sp->n_installed);
    }
    gs_buf_puts(b, "}");
}

/* Installed flags of the pattern (n_fast bytes, caller-allocated). */
static gs_err pattern_flags(const gsd_spec *sp, const gs_model *mdl, unsigned char *inst,
                            gs_error *err)
{
    gs_pattern p = {.kind = sp->pattern, .n_list = sp->n_list, .list = sp->list,
                    .fraction = sp->fraction};
    return gs_pattern_installed(&p, mdl, inst, err);
}

gs_err gsd_spec_resolve(gsd_spec *sp, const gs_model *mdl, gs_error *err)
{
    int nf = mdl->n_fast;
    unsigned char *inst = malloc((size_t)(nf > 0 ? nf : 1));
    int *list = malloc(sizeof(int) * (size_t)(nf > 0 ? nf : 1));
    gs_err rc = inst && list ? pattern_flags(sp, mdl, inst, err)
                             : gs_errorf(err, GS_ERR_NOMEM, "fasteners", "out of memory");
    if (rc) {
        free(inst);
        free(list);
        return rc;
    }
    int n = 0;
    for (int i = 0; i < nf; i++)
        if (inst[i])
            list[n++] = i;
    free(inst);
    free(sp->installed);
    sp->installed = list;
    sp->n_installed = n;
    sp->resolved = 1;
    return GS_OK;
}

gs_err gsd_spec_problem(const gsd_spec *sp, const gs_model *mdl, double *load, unsigned char *eq,
                        gs_error *err)
{
    unsigned char *inst = NULL;
    if (sp->pattern != GSD_PAT_NONE && mdl->n_fast > 0) {
        inst = malloc((size_t)mdl->n_fast);
        if (!inst)
            return gs_errorf(err, GS_ERR_NOMEM, "fasteners", "out of memory");
        gs_err rc = pattern_flags(sp, mdl, inst, err);
        if (rc) {
            free(inst);
            return rc;
        }
    }
    gs_model_pattern_load(mdl, inst, load);
    free(inst);
    if (eq) {
        memset(eq, 0, (size_t)mdl->m);
        for (int i = 0; i < sp->n_fixed; i++)
            eq[sp->fixed[i]] = 1;
    }
    return GS_OK;
}

int gsd_spec_is_slow(const gsd_spec *sp)
{
    gs_method m = sp->opts.method;
    return m == GS_METHOD_IPM || m == GS_METHOD_NPM || m == GS_METHOD_LEMKE || m == GS_METHOD_REF;
}

int gsd_spec_is_plain(const gsd_spec *sp)
{
    return sp->pattern == GSD_PAT_NONE && sp->n_fixed == 0;
}

gs_err gsd_spec_check_new(const gsd_spec *sp, gs_error *err)
{
    if (!gs_utf8_valid(sp->label, strlen(sp->label)))
        return gs_errorf(err, GS_ERR_INVALID, "label", "label must be valid UTF-8");
    return GS_OK;
}

gs_err gsd_spec_timeout(gsd_spec *sp, double def_s, double max_s, gs_error *err)
{
    if (sp->timeout_s > max_s)
        return gs_errorf(err, GS_ERR_RANGE, "timeout_s", "timeout_s = %g s exceeds this server's "
                         "limit of %g s (gapsimd --max-timeout)", sp->timeout_s, max_s);
    if (!(sp->timeout_s > 0))
        sp->timeout_s = def_s;
    return GS_OK;
}
