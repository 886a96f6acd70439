/*
 * interfaces.h -- interfaces of an assembly and spread fastener patterns.
 *
 * Owns: grouping the contact pairs into interfaces (the same part of node[0]
 * and the same part of node[1], or the fixed part), and the deterministic
 * pattern behind `fastener_fraction`: each interface gets its share of the
 * installed fasteners, spread evenly by position along the interface.
 * Used by the gap-cloud generator (one field per interface), the daemon's
 * fastener_fraction option, gapsim-gen --fraction and gapsim-batch.
 */
#ifndef GS_INTERFACES_H
#define GS_INTERFACES_H

#include "gs_error.h"
#include "model.h"

/* Interface of every pair: iface[q] in [0, n_iface), numbered in order of
 * first appearance; key[2 g] = part of node[0], key[2 g + 1] = part of
 * node[1] or -1 (fixed). iface has m entries, key 2 m. Returns n_iface, or
 * -1 (err set) when a pair names a node out of range. O(m n_iface). */
int gs_model_interfaces(const gs_model *mdl, int *iface, int *key, gs_error *err);

/* Number of candidates gs_gen_pattern installs: round(fraction * n_fast),
 * fraction clamped to [0, 1] (NaN -> 0). */
int gs_gen_pattern_count(int n_fast, double fraction);

/* The fastener_fraction pattern: installed[i] = 1 for exactly
 * gs_gen_pattern_count(n_fast, fraction) candidates, 0 for the others.
 * Split over interfaces by the largest-remainder rule on fraction * (the
 * interface's candidates), so every interface gets its share (ties: the
 * interface that appears first). Inside an interface the candidates are
 * ordered by position: along the axis (x, y or z) of largest extent of their
 * node[0] coordinates, candidates at one station (same coordinate within
 * 1e-6 of the extent) by the second axis, alternating direction station by
 * station (a snake, so a 2-row joint at 50% alternates rows); the installed
 * ones are then spaced evenly along that order (Bresenham). Deterministic;
 * independent of the candidate list order except for exact ties.
 * O(n_fast log n_fast + n_fast n_iface) time, O(n_fast + m) memory. */
gs_err gs_gen_pattern(const gs_model *mdl, double fraction, unsigned char *installed,
                      gs_error *err);

#endif
