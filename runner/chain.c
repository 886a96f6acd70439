/*
 * chain.c -- sketches, the nearest-neighbour order of a chunk and the
 * warm / cold learning of a chained cloud run (chain.h).
 */
#include "chain.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"off", "auto", "on"};

const char *gs_chain_mode_name(gs_chain_mode c)
{
    return (unsigned)c < 3 ? mode_names[c] : "?";
}

int gs_chain_mode_parse(const char *s, gs_chain_mode *c)
{
    for (int i = 0; i < 3; i++)
        if (s && !strcmp(s, mode_names[i])) {
            *c = (gs_chain_mode)i;
            return 0;
        }
    return -1;
}

/* 16 sign bits of pair i (a fixed mix of its index). */
static unsigned signs_of(uint32_t i)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (unsigned)((z ^ (z >> 31)) >> 48);
}

void gs_sketch(const double *g, int m, double *sk)
{
    _Static_assert(GS_SKETCH_DIM == 16, "16 sign bits per pair");
    for (int j = 0; j < GS_SKETCH_DIM; j++)
        sk[j] = 0.0;
    for (int i = 0; i < m; i++) {
        unsigned b = signs_of((uint32_t)i);
        for (int j = 0; j < GS_SKETCH_DIM; j++)
            sk[j] += (b >> j & 1u) ? g[i] : -g[i];
    }
}

static double dist2(const double *a, const double *b)
{
    double d = 0.0;
    for (int j = 0; j < GS_SKETCH_DIM; j++) {
        double t = a[j] - b[j];
        d += t * t;
    }
    return d;
}

void gs_sketch_order(const double *sk, int n, const double *start, int *perm)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    /* perm[q..n) are the rows not taken yet; swap the nearest to the front */
    const double *cur = start;
    for (int q = 0; q < n; q++) {
        int best = q;
        if (cur) {
            double bd = INFINITY;
            for (int r = q; r < n; r++) {
                double d = dist2(cur, sk + (size_t)perm[r] * GS_SKETCH_DIM);
                if (d < bd)
                    bd = d, best = r;
            }
        }
        int t = perm[q];
        perm[q] = perm[best];
        perm[best] = t;
        cur = sk + (size_t)perm[q] * GS_SKETCH_DIM;
    }
}

struct gs_chain {
    int m, n_act, have_last, last_warm;
    int *act;                      /* m: the last row's contact set */
    double last[GS_SKETCH_DIM];    /* sketch of the last gap */
    double *sk;                    /* chunk sketches */
    int sk_cap;
    double mean[2];                /* [0] cold, [1] warm */
    long n[2];
    double spent, explored;        /* s: all recorded rows; rows run as the slower kind */
    int exploring;                 /* the last pick was the slower kind */
};

gs_chain *gs_chain_new(int m)
{
    gs_chain *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->m = m;
    c->last_warm = -1;
    c->act = malloc(sizeof(int) * (size_t)(m > 0 ? m : 1));
    if (!c->act) {
        free(c);
        return NULL;
    }
    return c;
}

void gs_chain_free(gs_chain *c)
{
    if (!c)
        return;
    free(c->act);
    free(c->sk);
    free(c);
}

double *gs_chain_sketches(gs_chain *c, int n)
{
    if (n > c->sk_cap) {
        int cap = n > 2 * c->sk_cap ? n : 2 * c->sk_cap;
        double *p = realloc(c->sk, sizeof(double) * GS_SKETCH_DIM * (size_t)cap);
        if (!p)
            return NULL;
        c->sk = p;
        c->sk_cap = cap;
    }
    return c->sk;
}

const double *gs_chain_last_sketch(const gs_chain *c)
{
    return c->have_last ? c->last : NULL;
}

/* The kind the learning picks next: 1 warm, 0 cold. */
static int pick_kind(gs_chain *c)
{
    c->exploring = 0;
    if (c->n[1] < GS_CHAIN_PROBE || c->n[0] < GS_CHAIN_PROBE)
        return c->n[1] <= c->n[0]; /* probe: alternate, warm first */
    int best = c->mean[1] <= c->mean[0];
    if (c->explored + c->mean[!best] <= GS_CHAIN_EXPLORE * c->spent) {
        c->exploring = 1;
        return !best;
    }
    return best;
}

int gs_chain_warm(gs_chain *c, gs_chain_mode mode, gs_warm *warm)
{
    c->last_warm = -1; /* nothing to learn from a row without a choice */
    if (mode == GS_CHAIN_OFF || c->n_act == 0)
        return 0;
    int use = mode == GS_CHAIN_ON ? 1 : pick_kind(c);
    if (mode == GS_CHAIN_AUTO)
        c->last_warm = use;
    if (use)
        *warm = (gs_warm){.n_act = c->n_act, .act = c->act, .lam = NULL};
    return use;
}

void gs_chain_record(gs_chain *c, double time, const double *lam, const double *sk)
{
    if (c->last_warm >= 0 && isfinite(time)) {
        int k = c->last_warm;
        long n = ++c->n[k];
        double mean = n == 1 ? 0.0 : c->mean[k];
        c->mean[k] = mean + (time - mean) / (double)(n < 32 ? n : 32);
        c->spent += time;
        if (c->exploring)
            c->explored += time;
    }
    c->last_warm = -1;
    c->n_act = 0;
    for (int i = 0; i < c->m; i++)
        if (lam[i] != 0.0)
            c->act[c->n_act++] = i;
    if (sk) {
        memcpy(c->last, sk, sizeof c->last);
        c->have_last = 1;
    }
}

void gs_chain_stats(const gs_chain *c, double *mean_warm, double *mean_cold, long *n_warm,
                    long *n_cold)
{
    *mean_warm = c->n[1] ? c->mean[1] : NAN;
    *mean_cold = c->n[0] ? c->mean[0] : NAN;
    *n_warm = c->n[1];
    *n_cold = c->n[0];
}
