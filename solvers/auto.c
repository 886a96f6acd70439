/*
 * auto.c -- the `auto` method: pick a solver and formulation per problem from
 * what is known before solving, and improve the pick from the times measured
 * on this assembly as solves accumulate.
 *
 * Features (O(m), from the dual data p = u0 + Q load - g the solve layer has
 * already computed): the predicted contact share r = #{p_i > 0} / m (pairs
 * that the free deflection under the fastener loads would close: a cheap
 * upper estimate of n_act / m), and the joint type. r falls in one of four
 * bins: < 2%, < 8%, < 20%, >= 20%.
 * Static preference (the paper's conclusions, sect. 4-5; then measurement):
 *   simple joint, few contacts (r < 8%):  npm dual, gi relative, npm relative, ipm
 *   simple joint, many contacts:          npm relative, gi relative, npm dual, ipm
 *   sandwich joint (ill-conditioned):     gi relative, npm relative, npm dual, ipm
 * Only available methods are candidates (lemke, gi dual and gi primal are
 * never competitive on these models and are not candidates).
 * Learning: per bin, each candidate's mean time is recorded. The pick is the
 * candidate with the best measured mean (the static first choice until one
 * is measured). A candidate not yet measured in the bin is tried only while
 * the time spent exploring stays below 10% of all the time auto spent in the
 * bin, so a slow candidate can cost at most about 10% over the best choice.
 * Stats are per gs_solver (one per worker thread): each thread learns on its
 * own, without locks.
 */
#include "solver_impl.h"

typedef struct { gs_method m; gs_form f; } cand;

static const cand cands[GS_AUTO_CANDS] = {
    {GS_METHOD_GI, GS_FORM_RELATIVE},
    {GS_METHOD_NPM, GS_FORM_DUAL},
    {GS_METHOD_NPM, GS_FORM_RELATIVE},
    {GS_METHOD_IPM, GS_FORM_PRIMAL},
};
enum { C_GI = 0, C_NPM_DUAL = 1, C_NPM_REL = 2, C_IPM = 3 };

static int available(int c)
{
    return gs_methods[cands[c].m] && (gs_methods[cands[c].m]->forms >> cands[c].f & 1u);
}

static int bin_of(double r)
{
    return r < 0.02 ? 0 : r < 0.08 ? 1 : r < 0.20 ? 2 : 3;
}

/* Static preference order for the bin and joint type. */
static void preference(int bin, int sandwich, int order[GS_AUTO_CANDS])
{
    static const int few[GS_AUTO_CANDS] = {C_NPM_DUAL, C_GI, C_NPM_REL, C_IPM};
    static const int many[GS_AUTO_CANDS] = {C_NPM_REL, C_GI, C_NPM_DUAL, C_IPM};
    static const int sw[GS_AUTO_CANDS] = {C_GI, C_NPM_REL, C_NPM_DUAL, C_IPM};
    const int *src = sandwich ? sw : (bin <= 1 ? few : many);
    for (int i = 0; i < GS_AUTO_CANDS; i++)
        order[i] = src[i];
}

void gs_auto_choose(gs_solver *s, const gs_problem *pb, gs_method *m, gs_form *f, int *cand_out,
                    int *bin_out, int *explore)
{
    int closing = 0;
    for (int i = 0; i < s->m; i++)
        closing += s->p[i] > 0.0;
    const int bin = bin_of((double)closing / s->m);
    int order[GS_AUTO_CANDS];
    preference(bin, pb->pc->mdl->joint == GS_JOINT_SANDWICH, order);
    const gs_auto_stats *st = &s->auto_stats;
    int pick = -1, untried = -1;
    for (int i = 0; i < GS_AUTO_CANDS; i++) {
        int c = order[i];
        if (!available(c))
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
    if (pick < 0) { /* nothing measured yet: the static first choice */
        pick = untried;
    } else if (untried >= 0 && st->explored[bin] < 0.1 * st->spent[bin]) {
        pick = untried;
        *explore = 1;
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
