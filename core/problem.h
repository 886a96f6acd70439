/*
 * problem.h -- one solve's data on top of an assembly's precomputation.
 *
 * A gs_problem is a view (nothing owned): the precomputation, this solve's
 * gap vector g, the fastener pattern as a pair-space load vector (installed
 * temporary fasteners: f = f_base + A load) and the permanently fastened
 * pairs (equality constraints a_k'x = g_k, multiplier free in sign).
 * From it follow the dual data of docs/math.md (2):
 *     p = A'K^-1 f - g = u0 + Q load - g,   s = 1/2 f'K^-1 f
 *       = s0 + load'u0 + 1/2 load'Q load
 * which cost O(m nnz(load)) given Q, never a solve with K.
 */
#ifndef GS_PROBLEM_H
#define GS_PROBLEM_H

#include "precompute.h"

typedef struct {
    const gs_precomp *pc;
    const double *g;          /* m initial gaps, mm */
    const double *load;       /* m pair loads, N (NULL: no fastener installed) */
    const unsigned char *eq;  /* m flags, 1 = permanently fastened (NULL: none) */
} gs_problem;

/* Check the problem data: finite gaps, finite non-negative loads. Errors name
 * "g[k]" / "load[k]". O(m). */
gs_err gs_problem_check(const gs_problem *pb, gs_error *err);

/* p = u0 + Q load - g (m) and, if s != NULL, s = 1/2 f'K^-1 f.
 * work: m doubles (may be NULL when load == NULL). O(m nnz(load)). */
void gs_problem_dual_data(const gs_problem *pb, double *p, double *s, double *work);
/* The part of it that does not depend on g: ul = u0 + Q load (m) and s;
 * then p = ul - g, bitwise gs_problem_dual_data's p (a solver keeps ul for
 * the gaps of one pattern). O(m nnz(load)). */
void gs_problem_load_part(const gs_problem *pb, double *ul, double *s, double *work);

/* f = f_base + A load (n). O(n + m). */
void gs_problem_load_vector(const gs_problem *pb, double *f);

/* Back substitution x = K^-1 (f - A lam) (n). O(sum n_b^2) dense parts,
 * O(nnz(L_b)) sparse ones. 0, or -1 if a sparse solve found no memory. */
int gs_problem_primal(const gs_problem *pb, const double *lam, double *x);

static inline int gs_problem_is_eq(const gs_problem *pb, int k)
{
    return pb->eq && pb->eq[k];
}

#endif
