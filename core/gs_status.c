/* gs_status.c -- message table of solver outcomes. */
#include "gs_status.h"

#include <string.h>

static const struct { const char *name, *text; } gs_status_table[GS_STATUS__COUNT] = {
    [GS_STATUS_OPTIMAL] = {"optimal", "solved: KKT conditions met within tolerance"},
    [GS_STATUS_MAX_ITER] = {"max_iter", "iteration limit reached before convergence"},
    [GS_STATUS_NUMERICAL] = {"numerical_breakdown", "numerical breakdown in a factorization"},
    [GS_STATUS_INFEASIBLE_EQ] = {"infeasible_equality",
                                 "equality-fastened pairs are linearly dependent or infeasible"},
    [GS_STATUS_NO_PROGRESS] = {"no_progress", "iterates stopped making progress"},
    [GS_STATUS_RAY] = {"ray_termination", "Lemke's method ended on a secondary ray"},
    [GS_STATUS_NOT_RUN] = {"not_run", "solver was not run"},
    [GS_STATUS_CANCELLED] = {"cancelled", "stopped: the solve was cancelled"},
    [GS_STATUS_TIME_LIMIT] = {"time_limit", "stopped: the time limit was reached"},
    [GS_STATUS_INFEASIBLE] = {"infeasible",
                              "the gaps contradict: linearly dependent pairs cannot all close"},
};

const char *gs_status_name(gs_status s)
{
    return (s >= 0 && s < GS_STATUS__COUNT) ? gs_status_table[s].name : "unknown";
}

const char *gs_status_str(gs_status s)
{
    return (s >= 0 && s < GS_STATUS__COUNT) ? gs_status_table[s].text : "unknown status";
}

int gs_status_parse(const char *s, gs_status *out)
{
    for (int i = 0; s && i < GS_STATUS__COUNT; i++)
        if (!strcmp(s, gs_status_table[i].name)) {
            *out = (gs_status)i;
            return 0;
        }
    return -1;
}
