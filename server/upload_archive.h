/*
 * upload_archive.h -- a model folder uploaded as one .tar (optionally gzip'ed) or
 * .zip body, unpacked safely into a staging directory with libarchive.
 *
 * Owns the checks of every entry before anything is written: a relative
 * path of letters, digits, '.', '_', '-', ' ', '+' and '/' separators (no
 * absolute path, no empty, "." or ".." component, no component starting
 * with '.' -- hidden files and ".." never land), only regular files and
 * directories (symbolic and hard links are refused: nothing can point out
 * of the folder), at most max_entries entries, at most GSD_ARCHIVE_MAX_DEPTH
 * directory levels, and at most max_bytes unpacked in all (counted while
 * writing, so an archive that lies about its sizes is stopped too). Files
 * are created with O_EXCL | O_NOFOLLOW (a duplicated entry is an error).
 * A leading "./" is dropped. Errors name the entry.
 */
#ifndef GSD_UPLOAD_ARCHIVE_H
#define GSD_UPLOAD_ARCHIVE_H

#include <stddef.h>

#define GSD_ARCHIVE_MAX_DEPTH 16

typedef struct {
    unsigned http;   /* 400 unreadable archive, 413 a cap, 422 a refused entry, 500 I/O */
    char code[32];   /* error code name for the JSON answer */
    char msg[400];
} gsd_archive_error;

/* Unpack the archive file `path` into the existing empty directory `dir`.
 * 0 on success, -1 with *e filled. */
int gsd_archive_extract(const char *path, const char *dir, size_t max_entries, size_t max_bytes,
                        gsd_archive_error *e);

/* The directory holding the model inside an unpacked upload: `dir` itself,
 * or its only entry when that is a directory (a folder archived by name,
 * "tar cf lap.tar lap/"). Writes the path into out. */
void gsd_archive_root(const char *dir, char *out, size_t cap);

#endif
