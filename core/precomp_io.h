/*
 * precomp_io.h -- saving and loading a precomputation (precompute.h), so that
 * a restarted daemon need not rebuild Q = A'K^-1 A and the factors.
 *
 * Owns the binary file format (version 1). All words are 64-bit in the
 * writer's byte order, which the endianness word records; doubles are the raw
 * IEEE-754 bits, so a load is bit-identical to what was saved.
 *   header   magic "GSPRECMP" (8 bytes)
 *            u64 endianness check 0x0102030405060708
 *            u64 format version (1)
 *            u64 header bytes (96 + 8 n_parts)
 *            u64 n, m, n_parts
 *            u64 payload bytes
 *            32 bytes: content hash of the model (hash.h, hex)
 *            u64 ndof of each part (n_parts words)
 *   payload  f64 s0, cond_K, cond_Q, normK1, t.factor_K, t.build_Q, t.loads,
 *                t.factor_Q, t.cond, t.total (10 doubles)
 *            f64 cond_block[n_parts], qdiag[m], u0[m]
 *            f64 L_b (ndof_b x ndof_b, column-major) for each dense part b
 *                (a sparse part's factor is recomputed on load, not stored)
 *            f64 Q (m x m), L_Q (m x m), column-major as in memory
 *   trailer  u64 XXH3-64 of the payload, then "GSPCDONE" (8 bytes)
 * Every header word is checked against the model (sizes, its content hash)
 * and against the file length before anything is allocated. Streams are
 * processed in 1 MiB chunks (hashing a chunk right before writing it, or
 * right after reading it, while it is in cache); nothing is copied: the
 * writer reads the precomputation's arrays and the reader fills the freshly
 * allocated ones. Cost O(m^2 + sum ndof_b^2) I/O and hashing, plus
 * O(sum ndof_b^2) to hash the model.
 *
 * Any new field of gs_precomp must be added here (bump the version); a
 * static assertion on sizeof(gs_precomp) in precomp_io.c is the reminder.
 */
#ifndef GS_PRECOMP_IO_H
#define GS_PRECOMP_IO_H

#include "gs_error.h"
#include "model.h"
#include "precompute.h"

#define GS_PRECOMP_FORMAT_VERSION 1

/* Save everything of pc except the borrowed model into one binary file at
 * path (atomic: gs_wfile, not fsync'ed: the file is a checksummed cache,
 * gs_wfile_commit_unsynced), with a header (magic "GSPRECMP", format version,
 * n, m, n_parts, ndof per part, endianness check, sizes) and the payload;
 * *checksum (may be NULL) receives the XXH3-64 of the payload (also stored in
 * the file trailer). Errors: GS_ERR_IO (with the path), GS_ERR_NOMEM;
 * GS_ERR_INVALID for a deferred build whose L_Q is not there yet. */
gs_err gs_precomp_save(const gs_precomp *pc, const char *path, unsigned long long *checksum,
                       gs_error *err);

/* Load a saved precomputation for the validated model mdl (which becomes
 * pc->mdl and must outlive it). Checks header against mdl (sizes and content
 * hash), file size, and the payload checksum (against the trailer, and
 * against expect when expect != 0). Any mismatch, truncation or corruption
 * -> GS_ERR_FORMAT with a message saying what; missing or unreadable file ->
 * GS_ERR_IO; unvalidated model -> GS_ERR_INVALID; GS_ERR_NOMEM. The loaded
 * precomputation is bit-identical to the saved one; free it with
 * gs_precomp_free. *out is NULL on any error. */
gs_err gs_precomp_load(const gs_model *mdl, const char *path, unsigned long long expect,
                       gs_precomp **out, gs_error *err);
/* gs_precomp_load with flags: GS_PRECOMP_DEFER_LQ (precompute.h) leaves L_Q
 * in the file (read and checked against the checksum all the same, through
 * a 1 MiB buffer): the precomputation is that of a deferred build, m^2
 * doubles smaller (gs_precomp_finish_lq computes L_Q if it is wanted after
 * all); GS_PRECOMP_DEFER_SPARSE skips refactoring the sparse parts (the file
 * does not store their factors; gs_precomp_factor_sparse computes them
 * later). load = load_ex(0). */
gs_err gs_precomp_load_ex(const gs_model *mdl, const char *path, unsigned long long expect,
                          unsigned flags, gs_precomp **out, gs_error *err);

/* The payload in memory, for transports other than a file (gapsim-mpi
 * broadcasts it): GS_PRECOMP_SCALARS doubles (pack / unpack), then segments
 * i = 0, 1, ... (gs_precomp_segment returns 0 past the last one: cond_block,
 * qdiag, u0, L_b per dense part, Q, L_Q where pc->LQ is set; 5 + dense parts
 * in all; a sparse part's CHOLMOD factor is not stored: gs_precomp_load and the MPI broadcast
 * recompute it with gs_precomp_factor_sparse). gs_precomp_alloc
 * shapes a precomputation for a validated model with uninitialized arrays to
 * be filled segment by segment (NULL: no memory; free with gs_precomp_free);
 * flags GS_PRECOMP_DEFER_LQ (precompute.h) shapes it without L_Q: LQ NULL,
 * gs_precomp_has_lq 0, gs_precomp_segment then ends before L_Q and
 * gs_precomp_unpack_scalars leaves cond_Q NaN, as in a deferred build. */
#define GS_PRECOMP_SCALARS 10
void gs_precomp_pack_scalars(const gs_precomp *pc, double s[GS_PRECOMP_SCALARS]);
void gs_precomp_unpack_scalars(gs_precomp *pc, const double s[GS_PRECOMP_SCALARS]);
int gs_precomp_segment(const gs_precomp *pc, int i, double **ptr, size_t *count);
gs_precomp *gs_precomp_alloc(const gs_model *mdl, unsigned flags);

#endif
