/*
 * auto.c -- the `auto` method: pick a solver and formulation per problem from
 * what is known before solving, and improve the pick from the times measured
 * on this assembly as solves accumulate.
 *
 * Feature (O(m), from the dual data p = u0 + Q load - g the solve layer has
 * already computed): the predicted contact share r = #{p_i > 0} / m (pairs
 * that the free deflection under the fastener loads would close: a cheap
 * upper estimate of n_act / m), in one of four bins: < 2%, < 8%, < 20%,
 * >= 20%. The paper's cost drivers are n_act and the joint type; a bin keeps
 * problems of similar n_act together, and the measured times per bin capture
 * the rest (conditioning, joint type) on this very assembly.
 * Static preference: the paper ranks NPM first for variation analysis and
 * IPM for pattern optimization of simple joints, but on gapsim's models and
 * implementations GI on the relative form is measured fastest in every bin
 * on both test joints at 0-100% fasteners (docs/solvers.md, "Measured": lap
 * joint at 50% GI 11-13 ms, NPM dual 25-38 ms, NPM relative 0.26-1.5 s,
 * Lemke 51 ms, IPM 3.7-4.7 s; sandwich at 50% GI 71-85 ms, NPM dual 0.24 s,
 * 2026-11-26; IPM on the dual form 30 ms and 0.48 s, 2026-11-27). So the
 * first pick is GI relative everywhere; the others are candidates to
 * measure, in the order NPM dual, IPM dual (its working set: 100-300x
 * faster than the primal form's whole normal system, and it needs no L_Q),
 * NPM relative (Lemke, GI dual and GI primal, IPM primal are never
 * candidates).
 * Learning: per bin, each candidate's mean time is recorded and auto picks
 * the best measured one. An unmeasured candidate is tried only if its
 * expected cost (its ratio to the best candidate measured in the nearest bin
 * where it ran, else its prior ratio to GI for the joint type, times the best
 * mean measured so far) fits in the exploration budget: 10% of all the time
 * auto spent in the bin minus what exploring already cost. So measuring costs about 10% over
 * the best choice, plus one solve of a candidate far slower than expected;
 * such a candidate is measured once and never picked, and its measured
 * ratio replaces the prior in the other bins.
 * No closing pair (p <= 0 everywhere, no permanently fastened pair): the
 * answer is lam = 0 exactly (the dual gradient Q*0 - p >= 0), so auto picks
 * Lemke, whose first test is exactly that and which returns at once; such a
 * solve is not a choice to learn from and is not recorded in the stats
 * (*cand_out = -1). Measured: lap joint without fasteners 0.031 ms against GI
 * relative's 0.037 ms wall clock (equal in CPU time); mainly, no measurement
 * is spent on these trivial solves.
 * Stats are per gs_solver (one per worker thread): each thread learns on its
 * own, without locks.
 */
#include <math.h>

#include "solver_impl.h"

typedef struct { gs_method m; gs_form f; } cand;

static const cand cands[GS_AUTO_CANDS] = {
    {GS_METHOD_GI, GS_FORM_RELATIVE},
    {GS_METHOD_NPM, GS_FORM_DUAL},
    {GS_METHOD_NPM, GS_FORM_RELATIVE},
    {GS_METHOD_IPM, GS_FORM_DUAL},
};
enum { C_GI = 0, C_NPM_DUAL = 1, C_NPM_REL = 2, C_IPM = 3 };

static int available_method(gs_method m, gs_form f)
{
    return gs_methods[m] && (gs_methods[m]->forms >> f & 1u);
}

/* Candidate c can run on pc: built in, and L_Q there if it reads it (a
 * deferred precomputation, precompute.h: until then auto neither picks nor
 * measures the methods that need it). */
static int available(const gs_precomp *pc, int c)
{
    return available_method(cands[c].m, cands[c].f) &&
           (!gs_method_needs_lq(cands[c].m, cands[c].f) || gs_precomp_has_lq(pc));
}

static int bin_of(double r)
{
    return r < 0.02 ? 0 : r < 0.08 ? 1 : r < 0.20 ? 2 : 3;
}

/* Measurement order: GI relative (the first pick), then the others. */
static const int order[GS_AUTO_CANDS] = {C_GI, C_NPM_DUAL, C_IPM, C_NPM_REL};

/* Prior cost of each candidate relative to GI relative, by joint type, from
 * the lap and sandwich joints (docs/solvers.md: NPM dual is 2-4x GI on the
 * simple lap joint and 3-3.5x on the ill-conditioned sandwich since its
 * polish runs after every Newton step; 30-40x before; IPM on the dual form,
 * its working set of pairs, 3-21x on the lap joint and 4-34x on the
 * sandwich at 10-100% fasteners, where the primal form's whole normal
 * system was 1,500x and 5,000x); replaced by the measured mean once a
 * candidate ran in the bin, and by its measured ratio in a nearby bin
 * before that. */
static const double prior_ratio[2][GS_AUTO_CANDS] = {
    /* simple */ {[C_GI] = 1.0, [C_NPM_DUAL] = 5.0, [C_NPM_REL] = 300.0, [C_IPM] = 15.0},
    /* sandwich */ {[C_GI] = 1.0, [C_NPM_DUAL] = 5.0, [C_NPM_REL] = 1500.0, [C_IPM] = 30.0},
};

/* Expected cost of candidate c in bin, relative to the best measured one
 * there: its measured ratio to the best in the nearest bin where it ran (the
 * relative speed of two methods on one assembly changes slowly with n_act),
 * else the static prior. */
static double expected_ratio(const gs_solver *s, int c, int bin)
{
    const gs_auto_stats *st = &s->auto_stats;
    const int sandwich = s->pc->mdl && s->pc->mdl->joint == GS_JOINT_SANDWICH;
    for (int d = 1; d < GS_AUTO_BINS; d++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            int b = bin + sgn * d;
            if (b < 0 || b >= GS_AUTO_BINS || st->trials[c][b] == 0)
                continue;
            double best = INFINITY;
            for (int j = 0; j < GS_AUTO_CANDS; j++)
                if (st->trials[j][b] > 0 && st->mean[j][b] < best)
                    best = st->mean[j][b];
            if (best > 0)
                return st->mean[c][b] / best;
        }
    return prior_ratio[sandwich][c];
}

void gs_auto_choose(gs_solver *s, const gs_problem *pb, gs_method *m, gs_form *f, int *cand_out,
                    int *bin_out, int *explore)
{
    int closing = 0, has_eq = 0;
    for (int i = 0; i < s->m; i++) {
        closing += s->p[i] > 0.0;
        has_eq |= gs_problem_is_eq(pb, i);
    }
    if (closing == 0 && !has_eq && available_method(GS_METHOD_LEMKE, GS_FORM_DUAL)) {
        *m = GS_METHOD_LEMKE; /* lam = 0: Lemke's p <= 0 exit */
        *f = GS_FORM_DUAL;
        *cand_out = -1;
        *bin_out = 0;
        *explore = 0;
        return;
    }
    const int bin = bin_of((double)closing / s->m);
    const gs_auto_stats *st = &s->auto_stats;
    int pick = -1, untried = -1;
    for (int i = 0; i < GS_AUTO_CANDS; i++) {
        int c = order[i];
        if (!available(s->pc, c))
            continue;
        if (st->trials[c][bin] == 0) {
            if (untried < 0)
                untried = c;
            continue;
        }
        if (pick < 0 || st->mean[c][bin] < st->mean[pick][bin])
            pick = c;
    }
    *explore = 0;
    if (pick < 0) { /* nothing measured yet: the first in order */
        pick = untried;
    } else if (untried >= 0) {
        double budget = 0.1 * st->spent[bin] - st->explored[bin];
        if (expected_ratio(s, untried, bin) * st->mean[pick][bin] <= budget) {
            pick = untried;
            *explore = 1;
        }
    }
    if (pick < 0) /* no candidate available at all: GI always is */
        pick = C_GI;
    *m = cands[pick].m;
    *f = cands[pick].f;
    *cand_out = pick;
    *bin_out = bin;
}

void gs_auto_record(gs_solver *s, int c, int bin, int explore, double time)
{
    gs_auto_stats *st = &s->auto_stats;
    int n = ++st->trials[c][bin];
    /* running mean; after 32 solves an exponential average (weight 1/32)
     * follows slow drifts of the problem mix */
    st->mean[c][bin] += (time - st->mean[c][bin]) / (n < 32 ? n : 32);
    st->spent[bin] += time;
    if (explore)
        st->explored[bin] += time;
}
