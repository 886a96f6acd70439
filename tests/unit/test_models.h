/*
 * test_models.h -- small hand-made and random assembly models for unit tests
 * (independent of the FE generator): exact hand-solvable cases, random SPD
 * blocks with pairs across parts, to fixed parts and inside one part, and a
 * dense brute-force Q = A'K^-1 A for comparison.
 */
#ifndef GS_TEST_MODELS_H
#define GS_TEST_MODELS_H

#include <cblas.h>
#include <lapacke.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "precompute.h"

static uint64_t tm_rng_state = 88172645463325252ULL;
static inline void tm_seed(uint64_t s) { tm_rng_state = s * 2654435761ULL + 1; }
static inline double tm_unif(void) /* xorshift64*, [0, 1) */
{
    tm_rng_state ^= tm_rng_state >> 12;
    tm_rng_state ^= tm_rng_state << 25;
    tm_rng_state ^= tm_rng_state >> 27;
    return (double)((tm_rng_state * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

/* One part, K = tridiag(-1, 2, -1) (3 x 3), three nodes against a fixed jig,
 * coef +1: A = I, Q = K^-1 = 1/4 [[3,2,1],[2,4,2],[1,2,3]], f = (1,1,1) so
 * u0 = (1.5, 2, 1.5). */
static inline gs_model *tm_chain3(void)
{
    gs_model *mdl = gs_model_new(1, 3, 3, 0, NULL);
    gs_model_alloc_block(mdl, 0, 3, NULL);
    double K[9] = {2, -1, 0, -1, 2, -1, 0, -1, 2};
    memcpy(mdl->parts[0].K, K, sizeof K);
    gs_model_alloc_f(mdl, NULL);
    for (int i = 0; i < 3; i++) {
        mdl->f[i] = 1.0;
        mdl->nodes[i] = (gs_node){.part = 0, .dof = i, .xyz = {10.0 * i, 0, 0}};
        mdl->pairs[i] = (gs_pair){.node = {i, GS_FIXED}, .coef = {1.0, 0.0}};
    }
    return mdl;
}

/* Duplicated geometry: two identical copies of tm_chain3 (parts 0 and 1,
 * pairs 0-2 and 3-5), so Q = diag(Q3, Q3): equal gaps in both copies give
 * exact ties between pairs of different parts. */
static inline gs_model *tm_twin_chains(void)
{
    gs_model *mdl = gs_model_new(2, 6, 6, 0, NULL);
    double K[9] = {2, -1, 0, -1, 2, -1, 0, -1, 2};
    for (int b = 0; b < 2; b++) {
        gs_model_alloc_block(mdl, b, 3, NULL);
        memcpy(mdl->parts[b].K, K, sizeof K);
    }
    gs_model_alloc_f(mdl, NULL);
    for (int i = 0; i < 6; i++) {
        mdl->f[i] = 1.0;
        mdl->nodes[i] = (gs_node){.part = i / 3, .dof = i % 3, .xyz = {10.0 * (i % 3), 50.0 * (i / 3), 0}};
        mdl->pairs[i] = (gs_pair){.node = {i, GS_FIXED}, .coef = {1.0, 0.0}};
    }
    return mdl;
}

/* Two one-DOF parts (k1 = 2, k2 = 3 N/mm), one pair (-1 on part 0, +1 on
 * part 1), one fastener candidate of load F = 6 N on it. Q = 1/2 + 1/3. */
static inline gs_model *tm_two_springs(void)
{
    gs_model *mdl = gs_model_new(2, 2, 1, 1, NULL);
    gs_model_alloc_block(mdl, 0, 1, NULL);
    gs_model_alloc_block(mdl, 1, 1, NULL);
    mdl->parts[0].K[0] = 2.0;
    mdl->parts[1].K[0] = 3.0;
    mdl->nodes[0] = (gs_node){.part = 0, .dof = 0};
    mdl->nodes[1] = (gs_node){.part = 1, .dof = 0};
    mdl->pairs[0] = (gs_pair){.node = {0, 1}, .coef = {-1.0, 1.0}};
    mdl->fast[0] = (gs_fastener){.pair = 0, .load = 6.0};
    return mdl;
}

/* Nearly dependent pairs: one part of two DOFs, K = I, force (f0, f1); pair
 * 0 holds DOF 0 against the jig (row of A' (1, 0)), pair 1 joins DOF 0 and
 * DOF 1 with coefficients (1, eps): Q = [[1, 1], [1, 1 + eps^2]], cond ~ 4 /
 * eps^2, the second pair's Schur complement eps^2. */
static inline gs_model *tm_near_dependent(double eps, double f0, double f1)
{
    gs_model *mdl = gs_model_new(1, 2, 2, 0, NULL);
    gs_model_alloc_block(mdl, 0, 2, NULL);
    mdl->parts[0].K[0] = mdl->parts[0].K[3] = 1.0;
    gs_model_alloc_f(mdl, NULL);
    mdl->f[0] = f0;
    mdl->f[1] = f1;
    mdl->nodes[0] = (gs_node){.part = 0, .dof = 0};
    mdl->nodes[1] = (gs_node){.part = 0, .dof = 1, .xyz = {1, 0, 0}};
    mdl->pairs[0] = (gs_pair){.node = {0, GS_FIXED}, .coef = {1.0, 0.0}};
    mdl->pairs[1] = (gs_pair){.node = {0, 1}, .coef = {1.0, eps}};
    return mdl;
}

/* Three one-DOF parts of stiffness k[b] (N/mm) under forces f[b] (N), node b
 * at x = 10 b mm, with room for m pairs and n_fast fastener candidates,
 * which the caller fills. */
static inline gs_model *tm_three_springs(int m, int n_fast, const double k[3], const double f[3])
{
    gs_model *mdl = gs_model_new(3, 3, m, n_fast, NULL);
    for (int b = 0; b < 3; b++) {
        gs_model_alloc_block(mdl, b, 1, NULL);
        mdl->parts[b].K[0] = k[b];
        mdl->nodes[b] = (gs_node){.part = b, .dof = 0, .xyz = {10.0 * b, 0, 0}};
    }
    gs_model_alloc_f(mdl, NULL);
    for (int b = 0; b < 3; b++)
        mdl->f[b] = f[b];
    return mdl;
}

/* Three one-DOF parts (K = diag(2, 3, 5) N/mm, f = (1, -2, 0.5) N) with
 * pairs in a loop, pair k closing x_{k+1} - x_k <= g_k, the last one's
 * coefficient on x_0 1 + eps: nearly dependent pairs (cond(Q) ~ 4e13 at eps
 * = 1e-6, L_Q still builds); a fastener candidate of 100 N on pair 0. */
static inline gs_model *tm_near_loop(double eps)
{
    const double k[3] = {2.0, 3.0, 5.0}, fb[3] = {1.0, -2.0, 0.5};
    gs_model *mdl = tm_three_springs(3, 1, k, fb);
    for (int i = 0; i < 3; i++)
        mdl->pairs[i] = (gs_pair){.node = {i, (i + 1) % 3}, .coef = {-1.0, i == 2 ? 1.0 + eps : 1.0}};
    mdl->fast[0] = (gs_fastener){.pair = 0, .load = 100.0};
    return mdl;
}

/* A loop of pairs: three one-DOF parts (k = 1, 2, 4 N/mm, forces f =
 * (1, 0, -1) N), pair 0 closes x0 - x1 <= g0, pair 1 x1 - x2 <= g1, pair 2
 * x2 - x0 <= g2 (reversed: x0 - x2 <= g2), pair 3 holds x0 against the jig.
 * Columns 0 + 1 + 2 of A sum to zero (reversed: 0 + 1 = 2), so Q is
 * singular: only a deferred L_Q builds. The gaps contradict when g0 + g1 +
 * g2 < 0 (reversed, pair 2 fastened: g0 + g1 < g2). */
static inline gs_model *tm_loop3(int reversed)
{
    const double k[3] = {1.0, 2.0, 4.0}, f[3] = {1.0, 0.0, -1.0};
    gs_model *mdl = tm_three_springs(4, 0, k, f);
    mdl->pairs[0] = (gs_pair){.node = {0, 1}, .coef = {1.0, -1.0}};
    mdl->pairs[1] = (gs_pair){.node = {1, 2}, .coef = {1.0, -1.0}};
    mdl->pairs[2] = (gs_pair){.node = {2, 0}, .coef = {reversed ? -1.0 : 1.0, reversed ? 1.0 : -1.0}};
    mdl->pairs[3] = (gs_pair){.node = {0, GS_FIXED}, .coef = {1.0, 0.0}};
    return mdl;
}

/* Random SPD block: K = B B' / nb + shift I, entries of B uniform in [-1, 1]. */
static inline void tm_random_spd(double *K, int nb, double shift)
{
    double *B = malloc((size_t)nb * nb * sizeof *B);
    for (int i = 0; i < nb * nb; i++)
        B[i] = 2.0 * tm_unif() - 1.0;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, nb, nb, nb, 1.0 / nb, B, nb, B, nb, 0.0,
                K, nb);
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < j; i++)
            K[(size_t)j * nb + i] = K[(size_t)i * nb + j]; /* exact symmetry */
    for (int i = 0; i < nb; i++)
        K[(size_t)i * nb + i] += shift;
    free(B);
}

/* Random model: `parts` blocks of nb DOFs, every DOF a node; pairs join node
 * v of part b to node v of part b+1 (cross-part), plus `fixed` pairs of part-0
 * nodes against the jig and one pair inside part 0 (both entries in one
 * block). Fasteners on every 3rd pair, loads 1..5 N; small base load. */
static inline gs_model *tm_random(int parts, int nb, int fixed, uint64_t seed)
{
    tm_seed(seed);
    int n_nodes = parts * nb;
    int cross = (parts - 1) * nb;
    int m = cross + fixed + 1;
    int nf = (m + 2) / 3;
    gs_model *mdl = gs_model_new(parts, n_nodes, m, nf, NULL);
    for (int b = 0; b < parts; b++) {
        gs_model_alloc_block(mdl, b, nb, NULL);
        tm_random_spd(mdl->parts[b].K, nb, 0.05 + 0.1 * b);
        for (int v = 0; v < nb; v++)
            mdl->nodes[b * nb + v] = (gs_node){.part = b, .dof = v, .xyz = {v, 0, -b}};
    }
    int k = 0;
    for (int b = 0; b + 1 < parts; b++)
        for (int v = 0; v < nb; v++)
            mdl->pairs[k++] = (gs_pair){.node = {b * nb + v, (b + 1) * nb + v},
                                        .coef = {-1.0, 0.5 + tm_unif()}};
    for (int i = 0; i < fixed; i++)
        mdl->pairs[k++] = (gs_pair){.node = {i % nb, GS_FIXED}, .coef = {1.0, 0.0}};
    mdl->pairs[k++] = (gs_pair){.node = {0, nb - 1}, .coef = {-1.0, 1.0}};
    for (int i = 0; i < nf; i++)
        mdl->fast[i] = (gs_fastener){.pair = 3 * i, .load = 1.0 + 4.0 * tm_unif()};
    gs_model_alloc_f(mdl, NULL);
    int n = parts * nb;
    for (int i = 0; i < n; i++)
        mdl->f[i] = 0.1 * (tm_unif() - 0.5);
    return mdl;
}

/* Brute force Q = A'K^-1 A with a dense full K and dense A (dposv). */
static inline double *tm_bruteforce_Q(const gs_model *mdl)
{
    int n = mdl->n, m = mdl->m;
    double *K = calloc((size_t)n * n, sizeof *K), *A = calloc((size_t)n * m, sizeof *A);
    for (int b = 0; b < mdl->n_parts; b++) {
        int o = mdl->parts[b].offset, nb = mdl->parts[b].ndof;
        for (int j = 0; j < nb; j++)
            for (int i = 0; i < nb; i++)
                K[(size_t)(o + j) * n + o + i] = mdl->parts[b].K[(size_t)j * nb + i];
    }
    for (int k = 0; k < m; k++)
        for (int s = 0; s < 2; s++)
            if (mdl->pairs[k].node[s] != GS_FIXED)
                A[(size_t)k * n + gs_model_node_dof(mdl, mdl->pairs[k].node[s])] +=
                    mdl->pairs[k].coef[s];
    double *X = malloc((size_t)n * m * sizeof *X);
    memcpy(X, A, (size_t)n * m * sizeof *X);
    LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, m, K, n, X, n);
    double *Q = malloc((size_t)m * m * sizeof *Q);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, m, n, 1.0, A, n, X, n, 0.0, Q, m);
    free(K);
    free(A);
    free(X);
    return Q;
}

#endif
