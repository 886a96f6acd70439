/*
 * args.c -- argument parsing of the `gapsim` commands (see args.h).
 */
#include "args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numarg.h"

int gc_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see %s --help)\n", prog);
    va_end(ap);
    return GC_EUSAGE;
}

int gc_group_help(const char *text, int to_stderr)
{
    fputs(text, to_stderr ? stderr : stdout);
    return to_stderr ? GC_EUSAGE : GC_OK;
}

int gc_global_opt(gc_ctx *cx, const char *prog, int argc, char **argv, int *a)
{
    static const char *const names[3] = {"--server", "--token", "--cacert"};
    const char *s = argv[*a];
    if (!strcmp(s, "--json")) {
        cx->json = 1;
        (*a)++;
        return 1;
    }
    if (!strncmp(s, "--json=", 7)) {
        gc_usage_error(prog, "--json takes no value");
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        const size_t len = strlen(names[i]);
        if (strncmp(s, names[i], len) || (s[len] && s[len] != '='))
            continue;
        const char *v;
        if (s[len] == '=') {
            v = s + len + 1;
            *a += 1;
        } else if (*a + 1 < argc) {
            v = argv[*a + 1];
            *a += 2;
        } else {
            gc_usage_error(prog, "%s needs a value", names[i]);
            return -1;
        }
        if (!*v) { /* an empty token or file name is a mistake, not "none" */
            gc_usage_error(prog, "%s needs a %s, not an empty value", names[i],
                           i == 0 ? "URL" : i == 1 ? "token" : "file");
            return -1;
        }
        *(i == 0 ? &cx->server : i == 1 ? &cx->token : &cx->cacert) = v;
        return 1;
    }
    return 0;
}

int gc_arg_id(const char *prog, const char *what, const char *id)
{
    const size_t len = strlen(id);
    if (len == 0 || len > GC_ID_MAX)
        return gc_usage_error(prog, "%s '%.24s%s' is no id (%zu characters; at most %d)", what,
                              id, len > 24 ? "..." : "", len, GC_ID_MAX);
    return 0;
}

int gc_group_command(gc_ctx *cx, const char *prog, const char *help, int argc, char **argv,
                     int *sub)
{
    int a = 1;
    while (a < argc && argv[a][0] == '-' && strcmp(argv[a], "-h") && strcmp(argv[a], "--help")) {
        const int g = gc_global_opt(cx, prog, argc, argv, &a);
        if (g < 0)
            return GC_EUSAGE;
        if (g == 0) {
            fprintf(stderr, "%s: unknown option %s (see %s --help)\n", prog, argv[a], prog);
            return GC_EUSAGE;
        }
    }
    if (a >= argc)
        return gc_group_help(help, 1);
    if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help") || !strcmp(argv[a], "help"))
        return gc_group_help(help, 0);
    *sub = a;
    return -1;
}

static const gc_opt *find_opt(const gc_opt *opts, const char *name, size_t len)
{
    for (const gc_opt *o = opts; o && o->name; o++) {
        if (strlen(o->name) == len && !strncmp(o->name, name, len))
            return o;
        if (o->alias && strlen(o->alias) == len && !strncmp(o->alias, name, len))
            return o;
    }
    return NULL;
}

int gc_args(gc_ctx *cx, const gc_cmd *cmd, const gc_opt *opts, int argc, char **argv,
            const char **pos, int *npos)
{
    const char *server_val = NULL, *token_val = NULL, *cacert_val = NULL;
    int json_flag = 0;
    const gc_opt globals[] = {
        {"--server", NULL, &server_val, NULL},
        {"--token", NULL, &token_val, NULL},
        {"--cacert", NULL, &cacert_val, NULL},
        {"--json", NULL, NULL, &json_flag},
        {NULL, NULL, NULL, NULL},
    };
    *npos = 0;
    int only_pos = 0;
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        if (only_pos || s[0] != '-' || !strcmp(s, "-")) {
            if (*npos >= cmd->max_pos)
                return gc_usage_error(cmd->prog, "unexpected argument '%s'", s);
            pos[(*npos)++] = s;
            continue;
        }
        if (!strcmp(s, "--")) {
            only_pos = 1;
            continue;
        }
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            printf("usage: %s\n%s", cmd->usage, cmd->help);
            return 0;
        }
        const char *eq = strchr(s, '=');
        size_t len = eq && s[1] == '-' ? (size_t)(eq - s) : strlen(s);
        const gc_opt *o = find_opt(opts, s, len);
        if (!o)
            o = find_opt(globals, s, len);
        if (!o)
            return gc_usage_error(cmd->prog, "unknown option %.*s", (int)len, s);
        if (!o->value) {
            if (eq && s[1] == '-')
                return gc_usage_error(cmd->prog, "%s takes no value", o->name);
            *o->flag = 1;
            continue;
        }
        const char *v;
        if (eq && s[1] == '-')
            v = eq + 1;
        else if (a + 1 < argc)
            v = argv[++a];
        else
            return gc_usage_error(cmd->prog, "%s needs a value", o->name);
        *o->value = v;
    }
    if (*npos < cmd->min_pos)
        return gc_usage_error(cmd->prog, "missing argument (usage: %s)", cmd->usage);
    if (token_val)
        cx->token = token_val;
    if (cacert_val)
        cx->cacert = cacert_val;
    if (server_val) {
        if (!*server_val)
            return gc_usage_error(cmd->prog, "--server needs a URL");
        cx->server = server_val;
    }
    if (json_flag)
        cx->json = 1;
    return -1;
}

int gc_arg_long(const char *prog, const char *opt, const char *s, long lo, long hi, long *out)
{
    if (gs_parse_long(s, lo, hi, out))
        return gc_usage_error(prog, "%s must be an integer in [%ld, %ld], not '%s'", opt, lo, hi,
                              s ? s : "");
    return 0;
}

int gc_arg_double(const char *prog, const char *opt, const char *s, double lo, double hi,
                  double *out)
{
    if (gs_parse_double(s, lo, hi, out))
        return gc_usage_error(prog, "%s must be a number in [%g, %g], not '%s'", opt, lo, hi,
                              s ? s : "");
    return 0;
}

int gc_arg_index_list(const char *prog, const char *opt, const char *s, int **out, int *n)
{
    size_t cap = 1;
    for (const char *c = s; *c; c++)
        cap += *c == ',';
    int *v = malloc(sizeof(int) * cap);
    if (!v)
        return gc_usage_error(prog, "out of memory");
    int k = 0;
    const char *p = s;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x > INT_MAX || (*end && *end != ',') ||
            (p[0] < '0' || p[0] > '9')) {
            free(v);
            return gc_usage_error(prog, "%s is a comma list of indices (0,3,7), not '%s'", opt, s);
        }
        v[k++] = (int)x;
        if (!*end)
            break;
        p = end + 1;
    }
    *out = v;
    *n = k;
    return 0;
}
