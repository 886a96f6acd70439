/*
 * fileio.h -- the two file primitives of gapsim's format layer.
 *
 * Owns: atomic file writing (write to a unique temporary file next to the
 * target, fsync, rename over the target: a reader sees the old file or the
 * complete new one, never a partial one; on any failure the temporary file is
 * removed), atomic copies, and whole-file reads with a size cap checked (via fstat) before
 * anything is allocated. Errors are GS_ERR_IO with the path and strerror, or
 * GS_ERR_LIMIT for the cap. Used by npy.c, mmio.c and model_json*.c.
 * Targets that are not regular files are written into, never replaced: a
 * rename over a device node, a FIFO or /dev/stdout would put a regular file
 * in its place (as root: /dev/null or /dev/full themselves). A symlink to a
 * regular file stays: its file is replaced. A name of one of the process's
 * open descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N)
 * is written through a duplicate of it, where and as the shell opened it
 * (after `>> log`: appended to log). A symlink that names no file
 * yet (dangling) is followed as the shell's > follows it: its file is
 * created, the link stays; if that file cannot be created the write fails
 * and the link is untouched (a rename over it replaced /dev/stdout once).
 * Also: whether two paths name
 * the same file (gs_file_same), for the programs' refusal to write over
 * their inputs.
 */
#ifndef GS_FILEIO_H
#define GS_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "gs_error.h"

/* An open atomic write: print to fp, then commit or abort (exactly one). */
typedef struct {
    FILE *fp;   /* stream on the temporary file (or the target: tmp NULL); write
                   errors surface at commit */
    char *tmp;  /* "<path>.tmp.XXXXXX"; NULL when the target is written into */
    char *path; /* final name (a symlink's file) */
} gs_wfile;

/* Create "<path>.tmp.XXXXXX" (mode 0644) and open it for writing; a path
 * that names a directory is refused here, not at the rename. A path that
 * names an existing file that is not regular (a device such as /dev/null,
 * a FIFO, a terminal, /dev/stdout on a pipe) is opened and written into
 * instead: no temporary file, no rename, no fsync; the open of a FIFO waits
 * for its reader, and a failed write (/dev/full: ENOSPC) is reported as any
 * other. A symlink to a regular file is followed (realpath): the temporary
 * file is made beside its file and renamed over it, the link stays. A
 * dangling symlink is followed too, through a chain of links (each one's
 * text relative to its own directory, at most 40 links: ELOOP beyond): the
 * temporary file is made beside the name the chain ends at and renamed to
 * it, creating it; where it cannot be made (a missing directory,
 * /proc/self/fd/1 of a closed fd 1) the open fails, "cannot create 'T', the
 * file the symlink 'L' names: reason (the link is left as it is)", and the
 * link is not touched. */
gs_err gs_wfile_open(gs_wfile *wf, const char *path, gs_error *err);
/* Whether gs_wfile_open(path) would succeed now, with its errors (a
 * directory, a missing or read-only directory: a temporary file is made
 * and removed), leaving nothing behind: for a program that writes path only
 * at its end and should fail before its work. A target written into is
 * checked with access(W_OK), not opened (a FIFO's open would wait for its
 * reader). */
gs_err gs_wfile_probe(const char *path, gs_error *err);
/* fwrite with an immediate error check. */
gs_err gs_wfile_write(gs_wfile *wf, const void *buf, size_t len, gs_error *err);
/* Flush the bytes written so far to the file and fsync a temporary file,
 * write errors reported (a full disk; /dev/full written into), without
 * committing: for a program that commits several files together, each
 * flushed first, so that one that cannot be written leaves none (commit
 * or abort follows; on an error the caller aborts). */
gs_err gs_wfile_flush(gs_wfile *wf, gs_error *err);
/* Flush, fsync, close and rename onto the final path; aborts on failure. */
gs_err gs_wfile_commit(gs_wfile *wf, gs_error *err);
/* The same without the fsync: for files that only cache what can be computed
 * again and carry their own checksum (factors.bin), whose reader falls back
 * to recomputing. A crash of the process loses nothing (the data is in the
 * page cache); after a power loss the renamed file may be incomplete, which
 * its checksum shows. Saves the wait for the disk (0.14 s for 217 MB). */
gs_err gs_wfile_commit_unsynced(gs_wfile *wf, gs_error *err);
/* Close and delete the temporary file (no-op after commit or on a zeroed wf). */
void gs_wfile_abort(gs_wfile *wf);

/* Copy the file src to path by an atomic write (a reader of path sees no
 * partial copy; nothing is left on failure). O(size), 64 KiB at a time. */
gs_err gs_file_copy(const char *src, const char *path, gs_error *err);

/* Read a whole regular file into a malloc'ed buffer (NUL-terminated for
 * convenience; *len excludes the NUL). Files larger than max_bytes give
 * GS_ERR_LIMIT before any allocation. */
gs_err gs_file_read_all(const char *path, size_t max_bytes, char **buf, size_t *len,
                        gs_error *err);

/* 1 if a and b name the same file: the same inode (st_dev, st_ino: also
 * through symlinks and hard links), or, for names not there yet, the same
 * name in the same directory (a write of either would make the other; a
 * dangling symlink stands for the name its chain ends at);
 * else 0 (an existing file and a new name, or a path that cannot be
 * checked). O(1) stat calls. */
int gs_file_same(const char *a, const char *b);

/* Put "<path>: " in front of err->msg unless the message already names the
 * path (I/O errors do); for parse errors of a file read by path. */
void gs_file_error_context(gs_error *err, const char *path);

#endif
