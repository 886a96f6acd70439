/*
 * gs_status.h -- algorithmic outcome of a solve (never an API error: those are
 * gs_err). Every solver, the reference oracle included, ends in exactly one of
 * these; the message table gives a stable name for JSON and a description.
 */
#ifndef GS_STATUS_H
#define GS_STATUS_H

typedef enum {
    GS_STATUS_OPTIMAL = 0,       /* KKT conditions met within tolerance */
    GS_STATUS_MAX_ITER,          /* iteration / pivot limit reached */
    GS_STATUS_NUMERICAL,         /* numerical breakdown (lost positive definiteness...) */
    GS_STATUS_INFEASIBLE_EQ,     /* equality-fastened set infeasible / dependent */
    GS_STATUS_NO_PROGRESS,       /* progress guard: iterates stopped improving */
    GS_STATUS_RAY,               /* Lemke ray termination */
    GS_STATUS_NOT_RUN,           /* solver not run (invalid input) */
    GS_STATUS_CANCELLED,         /* stopped by its cancel flag (opts.cancel) */
    GS_STATUS_TIME_LIMIT,        /* stopped at its deadline (opts.deadline) */
    GS_STATUS_INFEASIBLE,        /* the gaps contradict: lam holds a Farkas certificate d >= 0,
                                    A d = 0, g'd < 0 (solver.h) */
    GS_STATUS__COUNT
} gs_status;

const char *gs_status_name(gs_status s);
/* The status named s (gs_status_name); 0, or -1 for an unknown name. */
int gs_status_parse(const char *s, gs_status *out);
const char *gs_status_str(gs_status s);

#endif
