/*
 * pattern.c -- fastener patterns and pattern sweep files (pattern.h).
 */
#include "pattern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "generator.h"
#include "json_parse.h"

gs_err gs_json_index_list(const cJSON *v, const char *key, int hi, int **out, int *n,
                          gs_error *err)
{
    if (!cJSON_IsArray(v))
        return gs_errorf(err, GS_ERR_INVALID, key, "%s must be an array of indices", key);
    int cnt = cJSON_GetArraySize(v);
    if (cnt > hi)
        return gs_errorf(err, GS_ERR_RANGE, key, "%s has %d entries, more than the %d that exist",
                         key, cnt, hi);
    int *list = malloc(sizeof(int) * (size_t)(cnt > 0 ? cnt : 1));
    unsigned char *seen = calloc((size_t)(hi > 0 ? hi : 1), 1);
    if (!list || !seen) {
        free(list);
        free(seen);
        return gs_errorf(err, GS_ERR_NOMEM, key, "out of memory");
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        char f[160];
        snprintf(f, sizeof f, "%s[%d]", key, i);
        double d = cJSON_IsNumber(e) ? e->valuedouble : NAN;
        if (!(d >= 0 && d < hi && d == floor(d))) {
            free(list);
            free(seen);
            return gs_errorf(err, GS_ERR_RANGE, f, "%s must be an integer in [0, %d)", f, hi);
        }
        if (seen[(int)d]) {
            free(list);
            free(seen);
            return gs_errorf(err, GS_ERR_DUPLICATE, f, "%s repeats index %d", f, (int)d);
        }
        seen[(int)d] = 1;
        list[i++] = (int)d;
    }
    free(seen);
    *out = list;
    *n = i;
    return GS_OK;
}

gs_err gs_pattern_fasteners(const cJSON *v, const char *key, int n_fast, gs_pattern *p,
                            gs_error *err)
{
    if (cJSON_IsString(v)) {
        if (!strcmp(v->valuestring, "all") || !strcmp(v->valuestring, "none")) {
            p->kind = v->valuestring[0] == 'a' ? GS_PAT_ALL : GS_PAT_NONE;
            return GS_OK;
        }
        return gs_errorf(err, GS_ERR_INVALID, key,
                         "%s must be \"all\", \"none\" or an array of candidate indices", key);
    }
    p->kind = GS_PAT_LIST;
    return gs_json_index_list(v, key, n_fast, &p->list, &p->n_list, err);
}

gs_err gs_pattern_installed(const gs_pattern *p, const gs_model *mdl, unsigned char *installed,
                            gs_error *err)
{
    memset(installed, 0, (size_t)mdl->n_fast);
    if (p->kind == GS_PAT_ALL)
        memset(installed, 1, (size_t)mdl->n_fast);
    else if (p->kind == GS_PAT_LIST)
        for (int i = 0; i < p->n_list; i++)
            installed[p->list[i]] = 1;
    else if (p->kind == GS_PAT_FRACTION)
        return gs_gen_pattern(mdl, p->fraction, installed, err);
    return GS_OK;
}

void gs_pattern_free(gs_pattern *p)
{
    free(p->list);
    memset(p, 0, sizeof *p);
}

/* One object of a sweep file. */
static gs_err parse_one(const cJSON *o, int idx, int n_fast, gs_pattern *p, gs_error *err)
{
    char f[64];
    snprintf(f, sizeof f, "patterns[%d]", idx);
    if (!cJSON_IsObject(o))
        return gs_errorf(err, GS_ERR_INVALID, f, "%s must be an object", f);
    int seen = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, o)
    {
        char fk[128];
        snprintf(fk, sizeof fk, "%s.%.40s", f, v->string);
        if (seen++)
            return gs_errorf(err, GS_ERR_INVALID, fk,
                             "%s: give either fasteners or fastener_fraction, once", f);
        if (!strcmp(v->string, "fasteners")) {
            gs_err rc = gs_pattern_fasteners(v, fk, n_fast, p, err);
            if (rc)
                return rc;
        } else if (!strcmp(v->string, "fastener_fraction")) {
            if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1))
                return gs_errorf(err, GS_ERR_RANGE, fk, "%s must be a number in [0, 1]", fk);
            p->kind = GS_PAT_FRACTION;
            p->fraction = v->valuedouble;
        } else {
            return gs_errorf(err, GS_ERR_INVALID, fk, "unknown key %s", fk);
        }
    }
    return GS_OK;
}

gs_err gs_patterns_parse(const char *text, size_t len, int n_fast, int max, gs_pattern **out,
                         int *n, gs_error *err)
{
    *out = NULL;
    *n = 0;
    size_t off = 0;
    cJSON *root = gs_json_parse(text, len, &off, NULL);
    if (!root)
        return gs_errorf(err, GS_ERR_FORMAT, "patterns", "not JSON (at byte %zu)", off);
    gs_err rc = GS_OK;
    int cnt = cJSON_IsArray(root) ? cJSON_GetArraySize(root) : -1;
    if (cnt < 1)
        rc = gs_errorf(err, GS_ERR_INVALID, "patterns", "patterns must be a non-empty array");
    else if (cnt > max)
        rc = gs_errorf(err, GS_ERR_LIMIT, "patterns", "%d patterns, at most %d", cnt, max);
    gs_pattern *p = rc ? NULL : calloc((size_t)cnt, sizeof *p);
    if (!rc && !p)
        rc = gs_errorf(err, GS_ERR_NOMEM, "patterns", "out of memory");
    int i = 0;
    const cJSON *o;
    if (!rc)
        cJSON_ArrayForEach(o, root)
        {
            if ((rc = parse_one(o, i, n_fast, &p[i], err)) != GS_OK)
                break;
            i++;
        }
    cJSON_Delete(root);
    if (rc) {
        gs_patterns_free(p, cnt > 0 ? cnt : 0);
        return rc;
    }
    *out = p;
    *n = cnt;
    return GS_OK;
}

gs_err gs_patterns_read(const char *path, int n_fast, int max, gs_pattern **out, int *n,
                        gs_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    gs_err rc = gs_file_read_all(path, (size_t)256 << 20, &buf, &len, err);
    if (!rc)
        rc = gs_patterns_parse(buf, len, n_fast, max, out, n, err);
    if (rc)
        gs_file_error_context(err, path);
    free(buf);
    return rc;
}

void gs_patterns_free(gs_pattern *p, int n)
{
    for (int i = 0; p && i < n; i++)
        gs_pattern_free(&p[i]);
    free(p);
}

gs_err gs_patterns_loads(const gs_pattern *p, int n, const gs_model *mdl, double **loads,
                         gs_error *err)
{
    const size_t m = (size_t)mdl->m;
    double *L = malloc(sizeof(double) * (size_t)n * (m ? m : 1));
    unsigned char *inst = malloc((size_t)mdl->n_fast + 1);
    if (!L || !inst) {
        free(L);
        free(inst);
        return gs_errorf(err, GS_ERR_NOMEM, "patterns", "out of memory for %d patterns", n);
    }
    for (int i = 0; i < n; i++) { /* O(n (n_fast + m)) */
        gs_err rc = gs_pattern_installed(&p[i], mdl, inst, err);
        if (rc != GS_OK) {
            free(L);
            free(inst);
            return rc;
        }
        gs_model_pattern_load(mdl, inst, L + (size_t)i * m);
    }
    free(inst);
    *loads = L;
    return GS_OK;
}
