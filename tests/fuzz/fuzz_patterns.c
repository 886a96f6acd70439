/*
 * fuzz_patterns.c -- fuzz target for the pattern sweep file parser
 * (runner/pattern.h, gapsim-mpi --patterns). Properties:
 *   - no crash; errors carry a code, a message and a bounded field path;
 *   - an accepted file has 1..max patterns, each of a known kind, lists of
 *     distinct indices in [0, n_fast) and fractions in [0, 1];
 *   - parsing is deterministic (a second parse gives the same patterns).
 * n_fast is chosen by the input's hash: 31 for three inputs in four (the
 * lists of the seeds and their mutants then parse), 0..31 for the fourth,
 * so that index bounds are exercised too. (With n_fast drawn from 0..31 for
 * every input, 1 of the 4 valid seeds parsed, now 3: the others are errors
 * on purpose.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"
#include "pattern.h"

const char *const gs_fuzz_target = "patterns";
const char *const gs_fuzz_dict[] = {
    "\"fasteners\"", "\"fastener_fraction\"", "\"all\"", "\"none\"", "[", "]", "{", "}", ",",
    ":", "0", "1", "31", "-1", "0.5", "1.5", "1e999", "null", "true", "\"x\"", "[]", "{}", NULL};

#define FZ_MAX 64

static void check_error(gs_err rc, const gs_error *e)
{
    GS_FUZZ_ASSERT(rc > GS_OK && rc < GS_ERR__COUNT);
    GS_FUZZ_ASSERT(e->code == rc);
    GS_FUZZ_ASSERT(e->msg[0] != '\0');
    GS_FUZZ_ASSERT(memchr(e->msg, '\0', sizeof e->msg) != NULL);
    GS_FUZZ_ASSERT(memchr(e->field, '\0', sizeof e->field) != NULL);
}

static void check_pattern(const gs_pattern *p, int n_fast)
{
    GS_FUZZ_ASSERT(p->kind >= GS_PAT_NONE && p->kind <= GS_PAT_FRACTION);
    if (p->kind == GS_PAT_FRACTION)
        GS_FUZZ_ASSERT(p->fraction >= 0 && p->fraction <= 1);
    if (p->kind != GS_PAT_LIST) {
        GS_FUZZ_ASSERT(p->n_list == 0);
        return;
    }
    unsigned char seen[32] = {0};
    GS_FUZZ_ASSERT(p->n_list >= 0 && p->n_list <= n_fast);
    for (int i = 0; i < p->n_list; i++) {
        GS_FUZZ_ASSERT(p->list[i] >= 0 && p->list[i] < n_fast);
        GS_FUZZ_ASSERT(!seen[p->list[i]]);
        seen[p->list[i]] = 1;
    }
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    const uint32_t h = gs_fuzz_hash(data, size);
    int n_fast = h % 4 ? 31 : (int)(h / 4 % 32);
    gs_pattern *p = NULL, *q = NULL;
    int n = -1, n2 = -1;
    gs_error e;
    gs_err rc = gs_patterns_parse((const char *)data, size, n_fast, FZ_MAX, &p, &n, &e);
    if (rc != GS_OK) {
        check_error(rc, &e);
        GS_FUZZ_ASSERT(p == NULL && n == 0);
        return 0;
    }
    GS_FUZZ_ASSERT(n >= 1 && n <= FZ_MAX && p != NULL);
    for (int i = 0; i < n; i++)
        check_pattern(&p[i], n_fast);
    GS_FUZZ_ASSERT(gs_patterns_parse((const char *)data, size, n_fast, FZ_MAX, &q, &n2, &e) ==
                   GS_OK);
    GS_FUZZ_ASSERT(n2 == n);
    for (int i = 0; i < n; i++) {
        GS_FUZZ_ASSERT(q[i].kind == p[i].kind && q[i].n_list == p[i].n_list);
        GS_FUZZ_ASSERT(q[i].fraction == p[i].fraction);
        if (p[i].n_list)
            GS_FUZZ_ASSERT(!memcmp(q[i].list, p[i].list, sizeof(int) * (size_t)p[i].n_list));
    }
    gs_patterns_free(p, n);
    gs_patterns_free(q, n2);
    return 1;
}
