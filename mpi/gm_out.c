/*
 * gm_out.c -- gapsim-mpi's output: the residual gaps as one rows x m .npy
 * written in place by every rank (MPI_File_write_at), and its sidecar
 * OUT.run (gm.h):
 *   header   128 bytes: magic "GSMPIRUN", u64 words: endianness check
 *            0x0102030405060708, version 2, rows, m, k, n_patterns, chunk,
 *            n_chunks, fingerprint of the inputs, .npy header bytes
 *   map      n_chunks bytes at 128: 1 once the chunk's rows, records and
 *            checksum are written (padded to 8 bytes)
 *   sums     n_chunks u64: a complete chunk's checksum, the sum of its rows'
 *            XXH3-64 (each seeded with its row index)
 *   records  rows x 32 bytes (gm_rec): status, method, form, flags, n_act,
 *            iterations (int32), time (double)
 * A chunk's map byte is written after its data, records and checksum, so a
 * killed run leaves complete chunks marked and a rerun with the same inputs
 * skips them, once their rows are checked against their checksums: a data
 * file written since by another program (gapsim-batch renaming its own
 * W.npy over it, numpy writing in place) has other rows, and those chunks
 * run again. Version 1 had no checksums: such a sidecar starts over.
 * Without sync the bytes are in the page cache when the map says so (safe
 * against killed processes, not against a crash of the node); with sync
 * (--sync) the data and records are flushed (MPI_File_sync) before the map
 * byte is written. Each rank opens both files on MPI_COMM_SELF: its writes
 * and syncs involve no other rank.
 * Cost: O(rows m) bytes read once at a restart (the checksums: XXH3 hashes
 * at memory speed, the read is the cost: 1-2 GB/s from a disk); O(rows m)
 * bytes written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "gm.h"
#include "npy.h"

#define READ_BLOCK ((size_t)1 << 20) /* bytes per read of the data file at a restart */

static void side_words(const gm_out *o, uint64_t w[GM_SIDE_WORDS])
{
    const uint64_t v[GM_SIDE_WORDS] = {0x0102030405060708ull, GM_SIDE_VERSION,
                                       (uint64_t)o->rows, (uint64_t)o->m,
                                       (uint64_t)o->k, (uint64_t)o->n_patterns,
                                       (uint64_t)o->chunk, (uint64_t)o->n_chunks, o->fingerprint,
                                       (uint64_t)o->data_off};
    memcpy(w, v, sizeof v);
}

static gs_err pwrite_all(int fd, const void *buf, size_t len, off_t off, const char *path,
                         gs_error *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return gs_errorf(err, GS_ERR_IO, "out", "%s: %s", path, strerror(errno));
        done += (size_t)n;
    }
    return GS_OK;
}

static gs_err pread_all(int fd, void *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return GS_ERR_IO;
        done += (size_t)n;
    }
    return GS_OK;
}

/* Row r's term of its chunk's checksum: the sum of the rows' terms does not
 * depend on the order they are read in (a gap-major chunk's rows lie apart
 * in the file). */
static uint64_t row_sum(const double *w, int m, long long r)
{
    return XXH3_64bits_withSeed(w, sizeof(double) * (size_t)m, (XXH64_hash_t)r);
}

/* The sidecar fs is this run's (header words, gm_side_parse); *map and
 * sums read. Reads the first bytes of fs up to the checksums' end (fewer
 * when the file is shorter: then it is not this run's). */
static int side_matches(gm_out *o, int fs, uint64_t *sums)
{
    uint64_t want[GM_SIDE_WORDS];
    side_words(o, want);
    long long map_off, sum_off, need;
    gm_side_layout(o->n_chunks, &map_off, &sum_off, &need);
    unsigned char *buf = malloc((size_t)need);
    size_t got = 0;
    while (buf && got < (size_t)need) {
        ssize_t n = pread(fs, buf + got, (size_t)need - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    int ok = buf && gm_side_parse(buf, got, want, o->n_chunks, o->map, sums);
    free(buf);
    return ok;
}

/* The data file fd has this run's .npy header (hdr, len bytes) and size. */
static int data_matches(const gm_out *o, int fd, const unsigned char *hdr, size_t len)
{
    unsigned char got[GS_NPY_HEADER_CAP];
    struct stat st;
    return fstat(fd, &st) == 0 &&
           st.st_size == (off_t)(o->data_off + o->rows * o->m * (long long)sizeof(double)) &&
           pread_all(fd, got, len, 0) == GS_OK && !memcmp(got, hdr, len);
}

/* Unmark the chunks marked complete whose rows in fd no longer sum to their
 * checksum, counting them in o->stale_chunks. One pass over the rows in
 * file order, none when no chunk is marked. GS_OK or GS_ERR_IO (a read). */
static gs_err check_chunks(gm_out *o, int fd, const uint64_t *sums)
{
    long long marked = 0;
    for (long long c = 0; c < o->n_chunks; c++)
        marked += o->map[c] == 1;
    if (!marked)
        return GS_OK;
    const size_t row_bytes = sizeof(double) * (size_t)o->m;
    const long long per = READ_BLOCK > row_bytes ? (long long)(READ_BLOCK / row_bytes) : 1;
    double *buf = malloc(row_bytes * (size_t)per);
    uint64_t *acc = calloc((size_t)o->n_chunks, sizeof *acc);
    gs_err rc = buf && acc ? GS_OK : GS_ERR_NOMEM;
    for (long long r = 0; !rc && r < o->rows; r += per) { /* O(rows m) */
        const long long n = o->rows - r < per ? o->rows - r : per;
        rc = pread_all(fd, buf, row_bytes * (size_t)n,
                       (off_t)(o->data_off + r * (long long)row_bytes));
        for (long long i = 0; !rc && i < n; i++)
            acc[gm_out_pos(o, r + i) / o->chunk] += row_sum(buf + i * o->m, o->m, r + i);
    }
    for (long long c = 0; !rc && c < o->n_chunks; c++)
        if (o->map[c] == 1 && acc[c] != sums[c]) {
            o->map[c] = 0;
            o->stale_chunks++;
        }
    free(buf);
    free(acc);
    return rc;
}

/* Rank 0: the sidecar matches this run and the data file its header and
 * size; *map filled, chunks whose rows changed since unmarked
 * (check_chunks). 0 no (start fresh), 1 yes. */
static int try_resume(gm_out *o, const unsigned char *hdr, size_t len)
{
    uint64_t *sums = malloc(sizeof *sums * (size_t)o->n_chunks);
    int fs = sums ? open(o->side, O_RDONLY | O_CLOEXEC) : -1;
    int ok = fs >= 0 && side_matches(o, fs, sums);
    if (fs >= 0)
        close(fs);
    int fd = ok ? open(o->path, O_RDONLY | O_CLOEXEC) : -1;
    ok = fd >= 0 && data_matches(o, fd, hdr, len) && check_chunks(o, fd, sums) == GS_OK;
    if (fd >= 0)
        close(fd);
    free(sums);
    return ok;
}

/* Rank 0: a new data file (header hdr, len bytes; full length) and a new sidecar. */
static gs_err create_files(gm_out *o, const unsigned char *hdr, size_t len, gs_error *err)
{
    unlink(o->side); /* the sidecar goes first: a half-made pair is never "complete" */
    int fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->path, strerror(errno));
    gs_err rc = pwrite_all(fd, hdr, len, 0, o->path, err);
    if (!rc && ftruncate(fd, (off_t)(len + (size_t)o->rows * (size_t)o->m * sizeof(double))))
        rc = gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->path, strerror(errno));
    if (!rc && fsync(fd))
        rc = gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->path, strerror(errno));
    close(fd);
    if (rc)
        return rc;
    unsigned char h[GM_SIDE_HEADER];
    uint64_t w[GM_SIDE_WORDS];
    side_words(o, w);
    gm_side_header(w, h);
    fd = open(o->side, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->side, strerror(errno));
    rc = pwrite_all(fd, h, sizeof h, 0, o->side, err);
    if (!rc && ftruncate(fd, (off_t)(o->rec_off + o->rows * (long long)sizeof(gm_rec))))
        rc = gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->side, strerror(errno));
    if (!rc && fsync(fd))
        rc = gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->side, strerror(errno));
    close(fd);
    memset(o->map, 0, (size_t)o->n_chunks);
    o->stale_chunks = 0; /* of a resume tried before */
    return rc;
}

gs_err gm_out_open(gm_out *o, int fresh, gs_error *err)
{
    unsigned char hdr[GS_NPY_HEADER_CAP];
    size_t len = 0, shape[2] = {(size_t)o->rows, (size_t)o->m};
    gs_err rc = gs_npy_write_header(hdr, sizeof hdr, 2, shape, &len, err);
    o->data_off = (long long)len;
    gm_side_layout(o->n_chunks, &o->map_off, &o->sum_off, &o->rec_off); /* records after the sums */
    snprintf(o->side, sizeof o->side, "%s.run", o->path);
    if (!rc && gm_rank() == 0) {
        o->map = calloc((size_t)o->n_chunks, 1);
        if (!o->map)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        else if (fresh || !try_resume(o, hdr, len))
            rc = create_files(o, hdr, len, err);
        for (long long c = 0; !rc && c < o->n_chunks; c++)
            o->done_chunks += o->map[c] == 1;
    }
    if ((rc = gm_agree(rc, "preparing the output", err)) != GS_OK)
        return rc;
    rc = gm_check(MPI_File_open(MPI_COMM_SELF, o->path, MPI_MODE_WRONLY, MPI_INFO_NULL, &o->fd),
                  o->path, err);
    gs_err rc2 = gm_check(MPI_File_open(MPI_COMM_SELF, o->side, MPI_MODE_WRONLY, MPI_INFO_NULL,
                                        &o->fs), o->side, rc ? NULL : err);
    o->open = (rc == GS_OK) | (rc2 == GS_OK) << 1;
    if ((rc = gm_agree(rc ? rc : rc2, "opening the output with MPI-IO", err)) != GS_OK)
        return rc;
    return GS_OK;
}

/* Write count elements of type t at byte off of the file path (handle f). A
 * short write says no why (a full disk: "short write (176 of 208)"): the
 * whole buffer is written again with pwrite (the same bytes at the same
 * place), which either completes it or fails with the errno that names the
 * cause ("No space left on device"). */
static gs_err write_at(MPI_File f, const char *path, long long off, const void *buf,
                       long long count, MPI_Datatype t, gs_error *err)
{
    MPI_Status st;
    gs_err rc = gm_check(MPI_File_write_at(f, (MPI_Offset)off, buf, (int)count, t, &st), path,
                         err);
    int got = 0, size = 0;
    if (rc || (MPI_Get_count(&st, t, &got) == MPI_SUCCESS && got == count))
        return rc;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "out", "%s: %s", path, strerror(errno));
    MPI_Type_size(t, &size);
    rc = pwrite_all(fd, buf, (size_t)count * (size_t)size, (off_t)off, path, err);
    close(fd);
    return rc;
}

gs_err gm_out_chunk(gm_out *o, long long chunk, long long first, int n, const double *W,
                    const gm_rec *recs, gs_error *err)
{
    const long long bytes_row = (long long)o->m * (long long)sizeof(double);
    gs_err rc = GS_OK;
    /* runs of consecutive rows in one write each: the whole chunk unless gap_major */
    for (int i = 0; !rc && i < n;) {
        const long long r0 = gm_out_row(o, first + i);
        int len = 1;
        while (i + len < n && gm_out_row(o, first + i + len) == r0 + len)
            len++;
        rc = write_at(o->fd, o->path, o->data_off + r0 * bytes_row,
                      W + (size_t)i * (size_t)o->m, (long long)len * o->m, MPI_DOUBLE, err);
        if (!rc)
            rc = write_at(o->fs, o->side, o->rec_off + r0 * (long long)sizeof(gm_rec), recs + i,
                          (long long)len * (long long)sizeof(gm_rec), MPI_BYTE, err);
        i += len;
    }
    long long whole = o->rows - chunk * o->chunk < o->chunk ? o->rows - chunk * o->chunk
                                                             : o->chunk;
    static const unsigned char one = 1;
    uint64_t sum = 0; /* the checksum a restart checks the rows against */
    for (int i = 0; n == whole && i < n; i++)
        sum += row_sum(W + (size_t)i * (size_t)o->m, o->m, gm_out_row(o, first + i));
    if (!rc && n == whole)
        rc = write_at(o->fs, o->side, o->sum_off + chunk * (long long)sizeof sum, &sum,
                      (long long)sizeof sum, MPI_BYTE, err);
    if (!rc && n == whole && o->sync) /* the data is on disk before the map says so */
        rc = gm_check(MPI_File_sync(o->fd), o->path, err);
    if (!rc && n == whole && o->sync)
        rc = gm_check(MPI_File_sync(o->fs), o->side, err);
    if (!rc && n == whole)
        rc = write_at(o->fs, o->side, o->map_off + chunk, &one, 1, MPI_BYTE, err);
    return rc;
}

gs_err gm_out_close(gm_out *o, gs_error *err)
{
    gs_err rc = GS_OK;
    if (o->open & 1)
        rc = gm_check(MPI_File_close(&o->fd), o->path, err);
    if (o->open & 2) {
        gs_err rc2 = gm_check(MPI_File_close(&o->fs), o->side, rc ? NULL : err);
        rc = rc ? rc : rc2;
    }
    o->open = 0;
    return rc;
}

gs_err gm_out_verify(const gm_out *o, gs_error *err)
{
    int fs = open(o->side, O_RDONLY | O_CLOEXEC);
    unsigned char *map = malloc((size_t)o->n_chunks);
    gs_err rc = fs >= 0 && map ? pread_all(fs, map, (size_t)o->n_chunks, o->map_off) : GS_ERR_IO;
    long long done = 0, first = -1;
    for (long long c = 0; !rc && c < o->n_chunks; c++) { /* O(n_chunks) */
        done += map[c] == 1;
        if (map[c] != 1 && first < 0)
            first = c;
    }
    if (rc)
        rc = gs_errorf(err, GS_ERR_IO, "out", "cannot read the completion map of %s", o->side);
    else if (done != o->n_chunks)
        rc = gs_errorf(err, GS_ERR_INVALID, "out", "%s: %lld of %lld chunks complete (chunk "
                       "%lld is not); rerun to complete it", o->side, done, o->n_chunks, first);
    if (fs >= 0)
        close(fs);
    free(map);
    return rc;
}

void gm_out_free(gm_out *o)
{
    if (o->open) /* an error path: this rank's handles (MPI_COMM_SELF) */
        gm_out_close(o, NULL);
    free(o->map);
    o->map = NULL;
}
