/*
 * gm.h -- the pieces of gapsim-mpi (mpi/): collective error agreement, the
 * broadcast of the precomputation, the output files (one .npy written in
 * place with MPI-IO and its sidecar completion map) and the dynamic
 * scheduler (chunks handed out on demand by rank 0; MPI_THREAD_FUNNELED: the
 * main thread of each rank does all MPI calls, its worker threads solve).
 * docs/scale-out.md describes the command, the files and the protocol.
 */
#ifndef GM_H
#define GM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- the sidecar's layout and reading (gm_out.c) ------------------------------ */
/* MPI-free, as static inline functions: the fuzz target of the sidecar
 * reader (tests/fuzz/fuzz_mpi_side.c) includes this part alone, defining
 * GM_SIDE_ONLY. */

#define GM_SIDE_MAGIC "GSMPIRUN"
#define GM_SIDE_HEADER 128 /* magic, GM_SIDE_WORDS u64 words, zeros */
#define GM_SIDE_WORDS 10
#define GM_SIDE_VERSION 2  /* 2: per-chunk checksums */

/* Where the map and the checksums of a sidecar of n_chunks chunks start,
 * and how many bytes of it a resume reads (header, map padded to 8 bytes,
 * checksums; the records follow). n_chunks >= 0. */
static inline void gm_side_layout(long long n_chunks, long long *map_off, long long *sum_off,
                                  long long *need)
{
    *map_off = GM_SIDE_HEADER;
    *sum_off = GM_SIDE_HEADER + (n_chunks + 7) / 8 * 8;
    *need = *sum_off + n_chunks * (long long)sizeof(uint64_t);
}

/* The header of a new sidecar: magic, the run's words (host order), zeros. */
static inline void gm_side_header(const uint64_t want[GM_SIDE_WORDS],
                                  unsigned char h[GM_SIDE_HEADER])
{
    memset(h, 0, GM_SIDE_HEADER);
    memcpy(h, GM_SIDE_MAGIC, 8);
    memcpy(h + 8, want, sizeof(uint64_t) * GM_SIDE_WORDS);
}

/* Read a sidecar's first len bytes buf against this run: 1 when it starts
 * with the magic and exactly the words want and holds the map and the
 * checksums of n_chunks chunks (gm_side_layout); then map[c] is 1 for a
 * chunk marked complete (its byte 1), 0 for any other byte, and sums[c]
 * its checksum. 0 otherwise (map and sums then unspecified). Reads only
 * buf[0..len). O(n_chunks). */
static inline int gm_side_parse(const unsigned char *buf, size_t len,
                                const uint64_t want[GM_SIDE_WORDS], long long n_chunks,
                                unsigned char *map, uint64_t *sums)
{
    if (n_chunks < 0 || n_chunks > (long long)(len / 9) || len < GM_SIDE_HEADER ||
        memcmp(buf, GM_SIDE_MAGIC, 8) || memcmp(buf + 8, want, sizeof(uint64_t) * GM_SIDE_WORDS))
        return 0;
    long long map_off, sum_off, need;
    gm_side_layout(n_chunks, &map_off, &sum_off, &need);
    if ((size_t)need > len)
        return 0;
    for (long long c = 0; c < n_chunks; c++)
        map[c] = buf[map_off + c] == 1;
    if (n_chunks > 0)
        memcpy(sums, buf + sum_off, sizeof(uint64_t) * (size_t)n_chunks);
    return 1;
}

#ifndef GM_SIDE_ONLY
#include <mpi.h>

#include "precompute.h"
#include "progress.h"
#include "runner.h"

/* ---- errors (gm_util.c) ------------------------------------------------------ */

/* Every rank calls it with its own outcome; returns GS_OK on every rank only
 * if every rank is GS_OK. A failing rank prints its error ("gapsim-mpi: rank
 * 3: what: code at field: message") before the agreement; the others return
 * GS_ERR_INVALID quietly. No rank proceeds alone, none hangs. */
gs_err gm_agree(gs_err rc, const char *what, const gs_error *err);
/* An MPI return code as a gs_err (GS_ERR_IO with MPI's message, naming what). */
gs_err gm_check(int mpi_rc, const char *what, gs_error *err);
int gm_rank(void);
int gm_size(void);

/* ---- the precomputation (gm_bcast.c) ------------------------------------------ */

/* Broadcast root's *pc to every rank (the others receive a new one for their
 * copy of the model): the scalars, then every segment (precomp_io.h) in
 * pieces of at most GM_BCAST_BYTES, L_Q unless flags has
 * GS_PRECOMP_DEFER_LQ (root must then have it; with it, the receivers'
 * precomputation has no L_Q, as a deferred build, even where root loaded it
 * from a file). The receivers factor their sparse parts (a whole FE mesh:
 * seconds per 100,000 DOFs) unless flags has GS_PRECOMP_DEFER_SPARSE.
 * Allocation is agreed on first. *bytes: the payload broadcast (every
 * rank). */
#define GM_BCAST_BYTES ((size_t)1 << 30) /* < 2^31: MPI counts are int */
gs_err gm_bcast_precomp(const gs_model *mdl, gs_precomp **pc, unsigned flags, double *bytes,
                        gs_error *err);

/* ---- the output (gm_out.c) ------------------------------------------------------ */

/* Per-gap record of the sidecar (what the summary needs besides w). */
typedef struct {
    int32_t status, method, form, flags; /* flags: 1 warm_used, 2 auto_chosen, 4 crossover,
                                          8 KKT certificate failed at tol */
    int32_t n_act, iterations;
    double time;                         /* s */
} gm_rec;

typedef struct {
    long long rows;        /* n_patterns x k */
    int m, k, n_patterns, chunk;
    long long n_chunks;
    uint64_t fingerprint;  /* of the inputs: a restart must match it */
    char path[4096], side[4200];
    long long data_off;    /* .npy header bytes */
    long long map_off, sum_off, rec_off;
    unsigned char *map;    /* rank 0: 1 per complete chunk */
    long long done_chunks; /* complete at the start (restart) */
    long long stale_chunks; /* marked complete, but their rows in the data file no
                               longer have the checksum the sidecar recorded: run again */
    MPI_File fd, fs;       /* data and sidecar, opened by every rank (MPI_COMM_SELF) */
    int open;
    int sync;              /* flush data and records before a chunk's map byte */
    int gap_major;         /* chunks hold positions in gap-major order: position j is
                              row gm_out_row(j), the patterns of one gap side by side (a
                              chained sweep: each gap's patterns warm-start each other) */
} gm_out;

/* Row of chunk position j, and position of row r (identity unless gap_major:
 * j = gap * n_patterns + pattern, row = pattern * k + gap). O(1). */
static inline long long gm_out_row(const gm_out *o, long long j)
{
    return o->gap_major ? (j % o->n_patterns) * o->k + j / o->n_patterns : j;
}
static inline long long gm_out_pos(const gm_out *o, long long r)
{
    return o->gap_major ? (r % o->k) * o->n_patterns + r / o->k : r;
}

/* Rank 0: create the .npy (header, full size) and the sidecar, or resume
 * from them when the sidecar matches (same fingerprint and shapes) and the
 * data file has this run's .npy header and size: then the rows of every
 * chunk marked complete are read back (O(rows m) bytes, once) and a chunk
 * whose checksum differs from the sidecar's is run again (stale_chunks);
 * fresh forces a new start. Then every rank opens both with MPI-IO on
 * MPI_COMM_SELF. Collective (the outcome is agreed). */
gs_err gm_out_open(gm_out *o, int fresh, gs_error *err);
/* Write the rows of positions [first, first + n) (rows [first, first + n)
 * unless gap_major: then one write per row) and their records; then, when
 * the chunk is whole, its checksum and its byte of the completion map. W and
 * recs in position order. A write MPI-IO leaves short is done again with
 * pwrite, whose errno names the cause (a full disk: "No space left on
 * device"). Any rank, main thread. */
gs_err gm_out_chunk(gm_out *o, long long chunk, long long first, int n, const double *W,
                    const gm_rec *recs, gs_error *err);
/* Close this rank's handles (flushes). */
gs_err gm_out_close(gm_out *o, gs_error *err);
/* Rank 0, after the close: every chunk's map byte is 1 (else GS_ERR_INVALID
 * naming the first missing chunk). O(n_chunks). */
gs_err gm_out_verify(const gm_out *o, gs_error *err);
void gm_out_free(gm_out *o);

/* ---- the scheduler (gm_dispatch.c) ----------------------------------------------- */

typedef struct {
    double wall;          /* s, this rank's run */
    long long rows;       /* rows this rank solved */
    long long chunks;     /* chunks this rank wrote */
} gm_stats;

/* Run every chunk not yet complete: rank 0 hands them out on request (and
 * to its own workers), every rank solves with `threads` workers and writes
 * its chunks. Collective; the result is agreed on every rank. pg (rank 0;
 * NULL: none; core/progress.h): the rows written so far, the other ranks' as of their last
 * request (each request carries them), drawn as the run goes; the final
 * count comes after the gather of the ranks' figures. */
gs_err gm_dispatch(gs_run *run, gm_out *o, int threads, gs_rows_progress *pg, gm_stats *st,
                   gs_error *err);

#endif /* GM_SIDE_ONLY */
#endif
