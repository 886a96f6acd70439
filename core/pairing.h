/*
 * pairing.h -- contact pairs from the nodes of two surfaces (`gapsim pair`).
 *
 * Owns: the node list read from a CSV file (label, x, y, z and optionally a
 * unit normal nx, ny, nz per node), and turning two such lists - the nodes of
 * the upper part's contact surface and of the lower part's - into gapsim's
 * node-to-node pairs: each upper node with its nearest lower node within a
 * tolerance, one to one (mutual nearest neighbours), with the pair's unit
 * normal pointing from the lower part towards the upper part and the
 * nominal gap along it; plus jig pairs (a node against the fixed jig) and
 * the report of the nodes left unpaired.
 *
 * The model's nodes of a pairing (gs_pair_nodes): every paired node once -
 * one FE node, the same (part, label), may be in a surface pair and a jig
 * pair, or in the files of two sets - with the checks the model's loader
 * would otherwise fail on (one position and one contact normal per node, no
 * pair joining a node to itself, no two pairs joining the same nodes).
 *
 * Normals, in this order: the lower node's CSV normal, the upper node's CSV
 * normal, one normal given for all (opts.normal), else the lower surface's
 * own normal at the node - the direction of least spread (smallest
 * eigenvalue of the covariance) of the lower nodes within opts.radius
 * (default 2.5 x the median nearest-neighbour spacing of the lower nodes),
 * oriented from the lower surface's centroid towards the upper one's (if
 * they coincide: the normal's largest component positive). Coefficients
 * follow docs/fe-import.md: ci = -1 (upper node closes the gap moving along
 * -n), cj = +1; jig pairs ci = -1 with n pointing from the jig to the node.
 *
 * Cost: O((n_u + n_l) log n_l) for the neighbour searches (a uniform grid
 * of sorted cell keys), O(n_l k) for the normals with k neighbours, O(m log m)
 * for the node table of m pairs.
 */
#ifndef GS_PAIRING_H
#define GS_PAIRING_H

#include <stddef.h>
#include <stdint.h>

#include "gs_error.h"

/* The largest node label a model takes (nodes.label: integers 0..2^53). */
#define GS_PNODE_LABEL_MAX ((int64_t)1 << 53)

typedef struct {
    int64_t label;  /* FE node label, 0..GS_PNODE_LABEL_MAX */
    double xyz[3];  /* mm */
    double n[3];    /* unit normal from lower towards upper part (has_n) */
    int has_n;
} gs_pnode;

/* Read "label,x,y,z[,nx,ny,nz]" lines (comma or blank separated; a first
 * line that does not start with a number is a header; '#' lines and blank
 * lines skipped). Every line has 4 or 7 fields; labels are distinct integers
 * in [0, GS_PNODE_LABEL_MAX] (GS_ERR_RANGE otherwise); given normals are
 * unit vectors within 1e-6 (normalized); a NUL byte anywhere is
 * GS_ERR_FORMAT. Errors name the line. *out malloc'ed (n nodes).
 * O(len + n log n). */
gs_err gs_pnodes_parse(const char *buf, size_t len, size_t max_nodes, gs_pnode **out, int *n,
                       gs_error *err);

typedef struct {
    double tol;           /* mm: largest distance of a paired node couple (> 0) */
    const double *normal; /* one normal for every pair (unit, lower -> upper), or NULL */
    double radius;        /* mm: neighbourhood of the surface normals (0: 2.5 x the
                             median nearest-neighbour spacing of the lower nodes) */
} gs_pairing_opts;

typedef struct {
    int i, j;       /* index in the upper list; in the lower list, -1 for a jig pair */
    double n[3];    /* unit normal, lower (jig) -> upper */
    double gap;     /* nominal gap n.(x_i - x_j) (jig: taken as 0), mm */
    double dist;    /* |x_i - x_j|, mm (jig: 0) */
} gs_pair_out;

typedef struct {
    gs_pair_out *pairs;
    int np;
    int *unpaired_up, n_up;   /* indices of upper nodes left unpaired */
    int *unpaired_lo, n_lo;   /* indices of lower nodes left unpaired */
    double radius;            /* the normal neighbourhood used (mm; 0 if none estimated) */
} gs_pairing;

/* Pair the upper nodes with the lower ones. Errors: GS_ERR_INVALID for
 * tol <= 0, a non-unit given normal, or a node whose surface normal cannot
 * be estimated (fewer than 3 neighbours, or all of them on a line) naming
 * "lower[label]"; GS_ERR_NOMEM. */
gs_err gs_pair_surfaces(const gs_pnode *up, int nup, const gs_pnode *lo, int nlo,
                        const gs_pairing_opts *o, gs_pairing *out, gs_error *err);

/* Jig pairs (i, -1) for nodes against the fixed jig: each node's CSV normal
 * or the given one (required: GS_ERR_INVALID naming "jig[label]"), appended
 * to out->pairs with i = the node's index in `jig`. */
gs_err gs_pair_jig(const gs_pnode *jig, int njig, const double *normal, gs_pairing *out,
                   gs_error *err);

void gs_pairing_free(gs_pairing *p);

/* One node of the model: node `idx` of set `set` (0 upper, 1 lower, 2 jig). */
typedef struct {
    int set, idx;
} gs_pnode_ref;

typedef struct {
    gs_pnode_ref *node; /* n_nodes, in pair order: first seen as a pair's i, then j */
    int n_nodes;
    int *pi, *pj;       /* per pair: the node index of i and of j (-1: jig pair) */
} gs_pair_nodes;

/* Number the nodes of the pairs of `pr` (sets: set[0] upper, set[1] lower,
 * set[2] jig, with part indices part[0..2]). A node is its (part, label): the
 * same FE node listed in two sets (an upper node against the jig too) is one
 * node of the model, in both pairs. Without such repeats the nodes are the
 * pairs' nodes in order (pair k's i, then its j). Errors, GS_ERR_INVALID
 * naming the node by part and label: its sets give positions more than
 * same_tol apart, its pairs have normals that are neither parallel nor
 * antiparallel (within 1e-9: the model's rule, a node carries one contact
 * normal), a pair joins it to itself; GS_ERR_DUPLICATE: two pairs join the
 * same two nodes; GS_ERR_NOMEM. O(m log m). */
gs_err gs_pair_nodes_build(const gs_pnode *const set[3], const int part[3], const gs_pairing *pr,
                           double same_tol, gs_pair_nodes *out, gs_error *err);

void gs_pair_nodes_free(gs_pair_nodes *pn);

#endif
