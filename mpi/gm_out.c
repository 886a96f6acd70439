/*
 * gm_out.c -- gapsim-mpi's output: the residual gaps as one rows x m .npy
 * written in place by every rank (MPI_File_write_at), and its sidecar
 * OUT.run (gm.h):
 *   header   128 bytes: magic "GSMPIRUN", u64 words: endianness check
 *            0x0102030405060708, version 1, rows, m, k, n_patterns, chunk,
 *            n_chunks, fingerprint of the inputs, .npy header bytes
 *   map      n_chunks bytes at 128: 1 once the chunk's rows and records are
 *            written (padded to 8 bytes)
 *   records  rows x 32 bytes (gm_rec): status, method, form, flags, n_act,
 *            iterations (int32), time (double)
 * A chunk's map byte is written after its data and records, so a killed run
 * leaves complete chunks marked and a rerun with the same inputs skips them.
 * Without sync the bytes are in the page cache when the map says so (safe
 * against killed processes, not against a crash of the node); with sync
 * (--sync) the data and records are flushed (MPI_File_sync) before the map
 * byte is written. Each rank opens both files on MPI_COMM_SELF: its writes
 * and syncs involve no other rank.
 * Cost: O(n_chunks) to read the map at a restart; O(rows m) bytes written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gm.h"
#include "npy.h"

#define SIDE_MAGIC "GSMPIRUN"
#define SIDE_HEADER 128
#define SIDE_WORDS 10

static void side_words(const gm_out *o, uint64_t w[SIDE_WORDS])
{
    const uint64_t v[SIDE_WORDS] = {0x0102030405060708ull, 1, (uint64_t)o->rows, (uint64_t)o->m,
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

/* Rank 0: the sidecar matches this run and the data file has the right
 * size; *map filled. 0 no (start fresh), 1 yes. */
static int try_resume(gm_out *o)
{
    int fs = open(o->side, O_RDONLY | O_CLOEXEC);
    if (fs < 0)
        return 0;
    unsigned char h[SIDE_HEADER];
    uint64_t want[SIDE_WORDS], got[SIDE_WORDS];
    side_words(o, want);
    int ok = pread_all(fs, h, sizeof h, 0) == GS_OK && !memcmp(h, SIDE_MAGIC, 8);
    if (ok) {
        memcpy(got, h + 8, sizeof got);
        ok = !memcmp(got, want, sizeof got);
    }
    if (ok)
        ok = pread_all(fs, o->map, (size_t)o->n_chunks, o->map_off) == GS_OK;
    close(fs);
    int fd = ok ? open(o->path, O_RDONLY | O_CLOEXEC) : -1;
    off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (fd >= 0)
        close(fd);
    return ok && size == (off_t)(o->data_off + o->rows * o->m * (long long)sizeof(double));
}

/* Rank 0: a new data file (header, full length) and a new sidecar. */
static gs_err create_files(gm_out *o, gs_error *err)
{
    unsigned char hdr[GS_NPY_HEADER_CAP];
    size_t len = 0, shape[2] = {(size_t)o->rows, (size_t)o->m};
    gs_err rc = gs_npy_write_header(hdr, sizeof hdr, 2, shape, &len, err);
    if (rc)
        return rc;
    unlink(o->side); /* the sidecar goes first: a half-made pair is never "complete" */
    int fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->path, strerror(errno));
    rc = pwrite_all(fd, hdr, len, 0, o->path, err);
    if (!rc && ftruncate(fd, (off_t)(len + (size_t)o->rows * (size_t)o->m * sizeof(double))))
        rc = gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->path, strerror(errno));
    if (!rc && fsync(fd))
        rc = gs_errorf(err, GS_ERR_IO, "out", "%s: %s", o->path, strerror(errno));
    close(fd);
    if (rc)
        return rc;
    unsigned char h[SIDE_HEADER] = {0};
    uint64_t w[SIDE_WORDS];
    side_words(o, w);
    memcpy(h, SIDE_MAGIC, 8);
    memcpy(h + 8, w, sizeof w);
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
    return rc;
}

gs_err gm_out_open(gm_out *o, int fresh, gs_error *err)
{
    unsigned char hdr[GS_NPY_HEADER_CAP];
    size_t len = 0, shape[2] = {(size_t)o->rows, (size_t)o->m};
    gs_err rc = gs_npy_write_header(hdr, sizeof hdr, 2, shape, &len, err);
    o->data_off = (long long)len;
    o->map_off = SIDE_HEADER;
    o->rec_off = SIDE_HEADER + (o->n_chunks + 7) / 8 * 8;
    snprintf(o->side, sizeof o->side, "%s.run", o->path);
    if (!rc && gm_rank() == 0) {
        o->map = calloc((size_t)o->n_chunks, 1);
        if (!o->map)
            rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
        else if (fresh || !try_resume(o))
            rc = create_files(o, err);
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

static gs_err write_at(MPI_File f, long long off, const void *buf, long long count,
                       MPI_Datatype t, const char *what, gs_error *err)
{
    MPI_Status st;
    gs_err rc = gm_check(MPI_File_write_at(f, (MPI_Offset)off, buf, (int)count, t, &st), what,
                         err);
    int got = 0;
    if (!rc && (MPI_Get_count(&st, t, &got) != MPI_SUCCESS || got != count))
        rc = gs_errorf(err, GS_ERR_IO, "out", "%s: short write (%d of %lld)", what, got, count);
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
        rc = write_at(o->fd, o->data_off + r0 * bytes_row, W + (size_t)i * (size_t)o->m,
                      (long long)len * o->m, MPI_DOUBLE, o->path, err);
        if (!rc)
            rc = write_at(o->fs, o->rec_off + r0 * (long long)sizeof(gm_rec), recs + i,
                          (long long)len * (long long)sizeof(gm_rec), MPI_BYTE, o->side, err);
        i += len;
    }
    long long whole = o->rows - chunk * o->chunk < o->chunk ? o->rows - chunk * o->chunk
                                                             : o->chunk;
    static const unsigned char one = 1;
    if (!rc && n == whole && o->sync) /* the data is on disk before the map says so */
        rc = gm_check(MPI_File_sync(o->fd), o->path, err);
    if (!rc && n == whole && o->sync)
        rc = gm_check(MPI_File_sync(o->fs), o->side, err);
    if (!rc && n == whole)
        rc = write_at(o->fs, o->map_off + chunk, &one, 1, MPI_BYTE, o->side, err);
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
