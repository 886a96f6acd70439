/*
 * reqopts.c -- solve options of `gapsim solve` / `gapsim cloud submit` (see
 * reqopts.h).
 */
#include "reqopts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "fmt_g17.h"
#include "numarg.h"
#include "solver.h"

/* The named values, parsed by the solver library (one adapter per type). */
static int is_method(const char *s)
{
    gs_method v;
    return gs_method_parse(s, &v) == 0;
}
static int is_form(const char *s)
{
    gs_form v;
    return gs_form_parse(s, &v) == 0;
}
static int is_npm_linear(const char *s)
{
    gs_npm_linear v;
    return gs_npm_linear_parse(s, &v) == 0;
}
static int is_linesearch(const char *s)
{
    gs_linesearch v;
    return gs_linesearch_parse(s, &v) == 0;
}
static int is_ipm_linear(const char *s)
{
    gs_ipm_linear v;
    return gs_ipm_linear_parse(s, &v) == 0;
}
static int is_ipm_start(const char *s)
{
    gs_ipm_start v;
    return gs_ipm_start_parse(s, &v) == 0;
}

int gc_solve_opts_check(const char *prog, const gc_solve_opts *o)
{
    const struct {
        const char *flag, *value, *allowed;
        int (*ok)(const char *);
    } named[] = {
        {"--solver", o->solver, "auto, gi, lemke, npm, ipm or ref", is_method},
        {"--formulation", o->formulation, "default, dual, relative or primal", is_form},
        {"--npm-linear", o->npm_linear, "combined, chol or cg", is_npm_linear},
        {"--linesearch", o->linesearch, "exact, golden or armijo", is_linesearch},
        {"--ipm-linear", o->ipm_linear, "mixed, split, jacobi or direct", is_ipm_linear},
        {"--ipm-start", o->ipm_start, "auto, feasible or infeasible", is_ipm_start},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i].value && !named[i].ok(named[i].value))
            return gc_usage_error(prog, "%s must be %s, not '%s'", named[i].flag,
                                  named[i].allowed, named[i].value);
    double d;
    long l;
    /* (0, 1): the open interval, the same message for 2 and for 0 */
    if (o->tol && (gs_parse_double(o->tol, 0, 1, &d) || !(d > 0 && d < 1)))
        return gc_usage_error(prog, "--tol must be a number in (0, 1), not '%s'", o->tol);
    if (o->max_iter && gc_arg_long(prog, "--max-iter", o->max_iter, 0, 1000000L, &l))
        return GC_EUSAGE;
    if (o->timeout && gc_arg_double(prog, "--timeout", o->timeout, 1e-3, 86400, &d))
        return GC_EUSAGE;
    if (o->fraction && gc_arg_double(prog, "--fraction", o->fraction, 0, 1, &d))
        return GC_EUSAGE;
    if (o->fraction && o->fasteners)
        return gc_usage_error(prog, "give either --fasteners or --fraction, not both");
    int *v = NULL, n = 0;
    if (o->fasteners && strcmp(o->fasteners, "all") && strcmp(o->fasteners, "none")) {
        if (gc_arg_index_list(prog, "--fasteners", o->fasteners, &v, &n))
            return GC_EUSAGE;
        free(v);
    }
    if (o->fixed) {
        if (gc_arg_index_list(prog, "--fixed-pairs", o->fixed, &v, &n))
            return GC_EUSAGE;
        free(v);
    }
    return GC_OK;
}

static cJSON *index_array(const char *s)
{
    int *v = NULL, n = 0;
    if (gc_arg_index_list("gapsim", "list", s, &v, &n))
        return NULL; /* checked before: cannot happen */
    cJSON *a = cJSON_CreateIntArray(v, n);
    free(v);
    return a;
}

int gc_solve_opts_json(const gc_solve_opts *o, cJSON *obj)
{
    int ok = 1;
    if (o->solver)
        ok &= cJSON_AddStringToObject(obj, "solver", o->solver) != NULL;
    if (o->formulation)
        ok &= cJSON_AddStringToObject(obj, "formulation", o->formulation) != NULL;
    if (o->tol)
        ok &= cJSON_AddNumberToObject(obj, "tol", strtod(o->tol, NULL)) != NULL;
    if (o->max_iter)
        ok &= cJSON_AddNumberToObject(obj, "max_iter", strtod(o->max_iter, NULL)) != NULL;
    if (o->timeout)
        ok &= cJSON_AddNumberToObject(obj, "timeout_s", strtod(o->timeout, NULL)) != NULL;
    if (o->fraction)
        ok &= cJSON_AddNumberToObject(obj, "fastener_fraction", strtod(o->fraction, NULL)) != NULL;
    if (o->fasteners) {
        if (!strcmp(o->fasteners, "all") || !strcmp(o->fasteners, "none"))
            ok &= cJSON_AddStringToObject(obj, "fasteners", o->fasteners) != NULL;
        else {
            cJSON *a = index_array(o->fasteners);
            ok &= a && cJSON_AddItemToObject(obj, "fasteners", a);
        }
    }
    if (o->fixed) {
        cJSON *a = index_array(o->fixed);
        ok &= a && cJSON_AddItemToObject(obj, "fixed_pairs", a);
    }
    if (o->warm)
        ok &= cJSON_AddStringToObject(obj, "warm_start", o->warm) != NULL;
    if (o->no_cache)
        ok &= cJSON_AddBoolToObject(obj, "cache", 0) != NULL;
    const char *const named[4][2] = {{"npm_linear", o->npm_linear},
                                     {"linesearch", o->linesearch},
                                     {"ipm_linear", o->ipm_linear},
                                     {"ipm_start", o->ipm_start}};
    for (int i = 0; i < 4; i++)
        if (named[i][1])
            ok &= cJSON_AddStringToObject(obj, named[i][0], named[i][1]) != NULL;
    return ok ? 0 : -1;
}

static int add_q(gc_buf *q, char *sep, const char *key, const char *value)
{
    if (!value)
        return 0;
    char *e = gc_escape(value);
    if (!e)
        return -1;
    int rc = gc_buf_add(q, sep, 1) || gc_buf_add(q, key, strlen(key)) || gc_buf_add(q, "=", 1) ||
             gc_buf_add(q, e, strlen(e));
    free(e);
    *sep = '&';
    return rc ? -1 : 0;
}

/* A number option (checked) in the query as the JSON body has it: the
 * parsed value, not the text typed (".5" or "1.e-9" are no JSON numbers,
 * and the server reads the query's numbers as JSON's). */
static int add_q_num(gc_buf *q, char *sep, const char *key, const char *text)
{
    if (!text)
        return 0;
    char num[GS_FMT_G17_MAX];
    gs_fmt_g17(strtod(text, NULL), num);
    return add_q(q, sep, key, num);
}

/* An index list option (checked): all, none, or the indices as integers
 * ("03" is no JSON number either). */
static int add_q_list(gc_buf *q, char *sep, const char *key, const char *text)
{
    if (!text || !strcmp(text, "all") || !strcmp(text, "none"))
        return add_q(q, sep, key, text);
    int *v = NULL, n = 0, rc = 0;
    gc_buf list = {0};
    if (gc_arg_index_list("gapsim", key, text, &v, &n))
        return -1; /* checked before: cannot happen */
    for (int i = 0; i < n && !rc; i++) {
        char num[16];
        snprintf(num, sizeof num, i ? ",%d" : "%d", v[i]);
        rc = gc_buf_add(&list, num, strlen(num));
    }
    free(v);
    rc = rc || gc_buf_add(&list, "", 1) || add_q(q, sep, key, list.p ? list.p : "");
    gc_buf_free(&list);
    return rc ? -1 : 0;
}

int gc_solve_opts_query(const gc_solve_opts *o, gc_buf *q, char sep)
{
    char s = sep;
    return add_q(q, &s, "solver", o->solver) || add_q(q, &s, "formulation", o->formulation) ||
                   add_q_num(q, &s, "tol", o->tol) || add_q_num(q, &s, "max_iter", o->max_iter) ||
                   add_q_num(q, &s, "timeout_s", o->timeout) ||
                   add_q_list(q, &s, "fasteners", o->fasteners) ||
                   add_q_num(q, &s, "fastener_fraction", o->fraction) ||
                   add_q_list(q, &s, "fixed_pairs", o->fixed) ||
                   add_q(q, &s, "warm_start", o->warm) ||
                   add_q(q, &s, "npm_linear", o->npm_linear) ||
                   add_q(q, &s, "linesearch", o->linesearch) ||
                   add_q(q, &s, "ipm_linear", o->ipm_linear) ||
                   add_q(q, &s, "ipm_start", o->ipm_start) ||
                   add_q(q, &s, "cache", o->no_cache ? "false" : NULL)
               ? -1
               : 0;
}
