/*
 * fuzz_pnodes.c -- fuzz target for the node CSV reader and the pairing of
 * two surfaces (core/pairing.h, `gapsim pair`). Properties:
 *   - no crash; errors carry a code and a message, and nothing is returned;
 *   - an accepted file has 1..max nodes with distinct labels, finite
 *     coordinates and unit normals where given;
 *   - pairing the first half of the nodes (upper) with the second (lower)
 *     at a tolerance chosen by the input's hash either fails with an error
 *     or accounts for every node: pairs + unpaired = nodes on each side,
 *     each node in at most one pair, distances within tol, unit normals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"
#include "pairing.h"

const char *const gs_fuzz_target = "pnodes";
const char *const gs_fuzz_dict[] = {"label,x,y,z\n", ",", " ", "\n", "#", "0", "1", "-1", "0.5",
                                    "1e300", "nan", "inf", "9223372036854775807", "0,0,1",
                                    "0.6,0.8,0", NULL};

#define FZ_MAX 256

static void check_error(gs_err rc, const gs_error *e)
{
    GS_FUZZ_ASSERT(rc > GS_OK && rc < GS_ERR__COUNT);
    GS_FUZZ_ASSERT(e->code == rc);
    GS_FUZZ_ASSERT(e->msg[0] != '\0');
}

static void check_pairing(const gs_pnode *v, int n, uint64_t h)
{
    const int nup = n / 2, nlo = n - nup;
    const double tol = (double)(1 + h % 1000) / 100.0; /* 0.01 .. 10 mm */
    gs_pairing_opts o = {.tol = tol};
    gs_pairing pr;
    gs_error e;
    gs_err rc = gs_pair_surfaces(v, nup, v + nup, nlo, &o, &pr, &e);
    if (rc != GS_OK) {
        check_error(rc, &e);
        return;
    }
    GS_FUZZ_ASSERT(pr.np + pr.n_up == nup && pr.np + pr.n_lo == nlo);
    unsigned char *used = calloc((size_t)n + 1, 1);
    GS_FUZZ_ASSERT(used != NULL);
    for (int k = 0; k < pr.np; k++) {
        const gs_pair_out *p = &pr.pairs[k];
        GS_FUZZ_ASSERT(p->i >= 0 && p->i < nup && p->j >= 0 && p->j < nlo);
        GS_FUZZ_ASSERT(!used[p->i] && !used[nup + p->j]);
        used[p->i] = used[nup + p->j] = 1;
        GS_FUZZ_ASSERT(p->dist <= tol * (1 + 1e-12) || !isfinite(p->dist));
        const double l = sqrt(p->n[0] * p->n[0] + p->n[1] * p->n[1] + p->n[2] * p->n[2]);
        GS_FUZZ_ASSERT(fabs(l - 1.0) < 1e-6 || !isfinite(l));
    }
    free(used);
    gs_pairing_free(&pr);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    gs_pnode *v = NULL;
    int n = -1;
    gs_error e;
    gs_err rc = gs_pnodes_parse((const char *)data, size, FZ_MAX, &v, &n, &e);
    if (rc != GS_OK) {
        check_error(rc, &e);
        GS_FUZZ_ASSERT(v == NULL && n == 0);
        return 0;
    }
    GS_FUZZ_ASSERT(n >= 1 && n <= FZ_MAX);
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++)
            GS_FUZZ_ASSERT(isfinite(v[i].xyz[c]));
        if (v[i].has_n)
            GS_FUZZ_ASSERT(fabs(sqrt(v[i].n[0] * v[i].n[0] + v[i].n[1] * v[i].n[1] +
                                     v[i].n[2] * v[i].n[2]) - 1.0) < 1e-6);
        for (int j = 0; j < i; j++)
            GS_FUZZ_ASSERT(v[i].label != v[j].label);
    }
    if (n >= 2)
        check_pairing(v, n, gs_fuzz_hash(data, size));
    free(v);
    return 1;
}
