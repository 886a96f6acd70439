/*
 * gm_bcast.c -- rank 0's precomputation to every rank (gm.h). Cost: the
 * payload (sum n_b^2 + m^2 + 2 m doubles, m^2 more with L_Q) once through
 * MPI_Bcast (a tree or pipeline inside Open MPI: ~log2(R) latencies plus
 * bytes / bandwidth), plus the first touch of the receiving pages
 * (docs/scale-out.md: in this VM 5.2 s per GB with 4 KiB pages, most of a
 * broadcast's time here).
 */
#include "gm.h"
#include "precomp_io.h"

static gs_err bcast_doubles(double *p, size_t count, gs_error *err)
{
    const size_t step = GM_BCAST_BYTES / sizeof(double);
    for (size_t off = 0; off < count; off += step) { /* pieces < 2^31 bytes */
        size_t n = count - off < step ? count - off : step;
        gs_err rc = gm_check(MPI_Bcast(p + off, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD),
                             "MPI_Bcast of the factors", err);
        if (rc)
            return rc;
    }
    return GS_OK;
}

gs_err gm_bcast_precomp(const gs_model *mdl, gs_precomp **pc, unsigned flags, double *bytes,
                        gs_error *err)
{
    gs_err rc = GS_OK;
    const int with_lq = !(flags & GS_PRECOMP_DEFER_LQ);
    *bytes = 0;
    if (gm_rank() != 0 && !(*pc = gs_precomp_alloc(mdl, flags)))
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the factors (m = %d)", mdl->m);
    if ((rc = gm_agree(rc, "receiving the factors", err)) != GS_OK)
        return rc;
    double s[GS_PRECOMP_SCALARS];
    if (gm_rank() == 0)
        gs_precomp_pack_scalars(*pc, s);
    rc = gm_check(MPI_Bcast(s, GS_PRECOMP_SCALARS, MPI_DOUBLE, 0, MPI_COMM_WORLD),
                  "MPI_Bcast of the factors", err);
    if (!rc && gm_rank() != 0)
        gs_precomp_unpack_scalars(*pc, s);
    *bytes = sizeof s;
    double *p;
    size_t count;
    for (int i = 0; !rc && gs_precomp_segment(*pc, i, &p, &count); i++) { /* 5 + dense parts */
        if (p == (*pc)->LQ && !with_lq) /* root's L_Q, built to be saved: the last segment */
            break;
        rc = bcast_doubles(p, count, err);
        *bytes += (double)(sizeof *p * count);
    }
    /* sparse parts: each rank factors its own copy, where the solves need it */
    if (!rc && gm_rank() != 0 && !(flags & GS_PRECOMP_DEFER_SPARSE))
        rc = gs_precomp_factor_sparse(*pc, 0, err);
    return gm_agree(rc, "factoring the sparse parts", err);
}
