/*
 * chain.h -- the chained warm start of a cloud run: each worker solves the
 * rows of its chunk in nearest-neighbour order and starts each gap from the
 * contact set of the gap it solved before (its solver workspace still holds
 * that set's factor, which then travels: gs_cset_travel). In mode auto the
 * worker measures whether that pays on this cloud and keeps to the faster
 * of warm and cold.
 *
 * Owns: the sketch of a gap (GS_SKETCH_DIM signed sums, a random projection
 * that keeps distances between gaps within a few tens of percent), the
 * greedy nearest-neighbour order of a chunk on sketches, and the per-worker
 * state (gs_chain): the last contact set, the sketch of the last gap and
 * the warm / cold statistics.
 *
 * Learning (mode auto), per worker: the first GS_CHAIN_PROBE rows of each
 * kind alternate warm and cold; then the kind with the lower mean solve
 * time (the worker thread's CPU time: the machine's load does not count)
 * runs, and the other kind runs again whenever its expected time fits
 * in the exploration budget, GS_CHAIN_EXPLORE of all the time recorded
 * minus what such re-measurements already cost, so that a change in the
 * cloud (a new pattern, a different region of gaps) is noticed. Means are
 * running means, exponential (weight 1/32) after 32 rows. The cost over
 * always picking the faster kind: the probes plus at most GS_CHAIN_EXPLORE
 * (lap joint, 50 %, gapsim-batch: independent gaps 10.5 ms against 11.7 ms
 * cold, similar gaps 3.5 ms against 3.1 ms always warm; docs/solvers.md).
 * Every result is an optimum
 * with its certificate either way; warm and cold answers agree to the
 * solver's tolerance (round-off), not to the bit, and which rows ran warm
 * depends on the timing: a chained run is not bit-reproducible.
 *
 * Cost: a sketch O(m GS_SKETCH_DIM) per row, the order O(n^2 GS_SKETCH_DIM)
 * per chunk of n rows, O(m) per row to keep the contact set.
 */
#ifndef GS_CHAIN_H
#define GS_CHAIN_H

#include "gs_error.h"
#include "solver.h"

typedef enum {
    GS_CHAIN_OFF = 0, /* every row cold, in index order (bit-reproducible) */
    GS_CHAIN_AUTO,    /* ordered; warm or cold, whichever is measured faster */
    GS_CHAIN_ON       /* ordered; every row warm from the worker's previous row */
} gs_chain_mode;

const char *gs_chain_mode_name(gs_chain_mode c);
/* "off", "auto", "on": 0, or -1 if unknown. */
int gs_chain_mode_parse(const char *s, gs_chain_mode *c);

#define GS_SKETCH_DIM 16
#define GS_CHAIN_PROBE 4
#define GS_CHAIN_EXPLORE 0.03

/* sk (GS_SKETCH_DIM) = the sketch of gap g (m). Deterministic. O(m d). */
void gs_sketch(const double *g, int m, double *sk);
/* perm (n) = greedy nearest-neighbour order of the n sketches sk (n x d):
 * first the one nearest to start (NULL: sketch 0), then always the nearest
 * not yet taken. O(n^2 d). */
void gs_sketch_order(const double *sk, int n, const double *start, int *perm);

typedef struct gs_chain gs_chain;

gs_chain *gs_chain_new(int m);
void gs_chain_free(gs_chain *c);
/* Scratch for the sketches of a chunk of n rows (n x GS_SKETCH_DIM), grown
 * as needed; NULL if out of memory. */
double *gs_chain_sketches(gs_chain *c, int n);
/* The sketch of the last gap solved, or NULL before the first. */
const double *gs_chain_last_sketch(const gs_chain *c);
/* The warm start for the next row (mode auto or on): fills *warm with the
 * previous row's contact set and returns 1, or returns 0 for a cold start
 * (no previous row, or auto measured cold faster). */
int gs_chain_warm(gs_chain *c, gs_chain_mode mode, gs_warm *warm);
/* After the row's solve: its time (thread CPU s, counted for the kind the last
 * gs_chain_warm chose), its multipliers (the contact set kept for the next
 * row) and the sketch of its gap (NULL: keep the last). O(m). */
void gs_chain_record(gs_chain *c, double time, const double *lam, const double *sk);
/* The learned means (s; NAN before a measurement) and the rows of each kind. */
void gs_chain_stats(const gs_chain *c, double *mean_warm, double *mean_cold, long *n_warm,
                    long *n_cold);

#endif
