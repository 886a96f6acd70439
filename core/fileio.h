/*
 * fileio.h -- the two file primitives of gapsim's format layer.
 *
 * Owns: atomic file writing (write to a unique temporary file next to the
 * target, fsync, rename over the target: a reader sees the old file or the
 * complete new one, never a partial one; on any failure the temporary file is
 * removed), atomic copies, and whole-file reads with a size cap checked (via fstat) before
 * anything is allocated. Errors are GS_ERR_IO with the path and strerror, or
 * GS_ERR_LIMIT for the cap. Used by npy.c, mmio.c and model_json*.c.
 */
#ifndef GS_FILEIO_H
#define GS_FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "gs_error.h"

/* An open atomic write: print to fp, then commit or abort (exactly one). */
typedef struct {
    FILE *fp;   /* stream on the temporary file; write errors surface at commit */
    char *tmp;  /* "<path>.tmp.XXXXXX" */
    char *path; /* final name */
} gs_wfile;

/* Create "<path>.tmp.XXXXXX" (mode 0644) and open it for writing; a path
 * that names a directory is refused here, not at the rename. */
gs_err gs_wfile_open(gs_wfile *wf, const char *path, gs_error *err);
/* fwrite with an immediate error check. */
gs_err gs_wfile_write(gs_wfile *wf, const void *buf, size_t len, gs_error *err);
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

/* Put "<path>: " in front of err->msg unless the message already names the
 * path (I/O errors do); for parse errors of a file read by path. */
void gs_file_error_context(gs_error *err, const char *path);

#endif
