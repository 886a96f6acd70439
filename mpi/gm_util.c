/*
 * gm_util.c -- rank, size, MPI status checks and collective agreement (gm.h).
 */
#include <stdio.h>
#include <time.h>

#include "gm.h"

int gm_rank(void)
{
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int gm_size(void)
{
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

gs_err gm_check(int mpi_rc, const char *what, gs_error *err)
{
    if (mpi_rc == MPI_SUCCESS)
        return GS_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", mpi_rc);
    return gs_errorf(err, GS_ERR_IO, "", "%s: %s", what, msg);
}

gs_err gm_agree(gs_err rc, const char *what, const gs_error *err)
{
    if (rc != GS_OK)
        fprintf(stderr, "gapsim-mpi: rank %d: %s: %s%s%s: %s\n", gm_rank(), what,
                gs_err_name(err->code), err->field[0] ? " at " : "", err->field, err->msg);
    int bad = rc != GS_OK, any = 0, done = 0;
    /* Non-blocking, polled with 1 ms naps: a rank waiting for rank 0's
     * precomputation or summary sleeps instead of spinning on the core that
     * rank 0's BLAS threads need. */
    MPI_Request req;
    int ok = MPI_Iallreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req) ==
             MPI_SUCCESS;
    while (ok && !done) {
        ok = MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS;
        if (ok && !done)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    if (!ok) {
        fprintf(stderr, "gapsim-mpi: rank %d: the agreement on '%s' failed; aborting\n",
                gm_rank(), what);
        MPI_Abort(MPI_COMM_WORLD, 1); /* last resort: the ranks can no longer talk */
    }
    return any ? (rc != GS_OK ? rc : GS_ERR_INVALID) : GS_OK;
}
