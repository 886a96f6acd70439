/*
 * fuzz_archive.c -- fuzz target for the unpacking of an uploaded model folder
 * (server/upload_archive.h: tar, gzip'ed tar, zip through libarchive).
 * Each input is written to a scratch file and unpacked into a fresh empty
 * directory with small caps (FZ_ENTRIES entries, FZ_BYTES bytes).
 * Properties:
 *   - no crash; a refusal has a code, a message and the status of a bad
 *     body (400 unreadable, 413 a cap, 422 a refused entry): nothing an
 *     archive holds can make a healthy scratch directory fail with 500;
 *   - whatever was written, refused or not, stays inside the directory and
 *     obeys the entry rules: regular files and directories only (no link of
 *     any kind: lstat), names of letters, digits, '.', '_', '-', ' ', '+'
 *     with no component starting with '.', at most GSD_ARCHIVE_MAX_DEPTH
 *     levels, at most FZ_ENTRIES files (and the directories their paths
 *     make, at most that many levels each), at most FZ_BYTES bytes in all;
 *   - an accepted archive leaves at least one entry, and its model root
 *     (gsd_archive_root) is the directory or a directory inside it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "gs_fuzz.h"
#include "upload_archive.h"

const char *const gs_fuzz_target = "archive";
const char *const gs_fuzz_dict[] = {
    "ustar", "ustar  ", "PK\x03\x04", "PK\x01\x02", "PK\x05\x06", "\x1f\x8b\x08", "BZh91AY&SY",
    "\xfd" "7zXZ", "../", "./", "/", "//", ".hidden", "lap.json", "model.json", "a/b/c/",
    "0000644", "0000755", "00000000000", "77777777777", "\x80\x00\x00\x00\x00\x00\x00\x00", "0",
    "1", "2", "5", "L", "K", "x", "g", "path=", "linkpath=", "size=", NULL};

#define FZ_ENTRIES 8
#define FZ_BYTES 4096

typedef struct {
    size_t files, dirs, bytes;
} fz_tally;

/* The same name rules as the unpacker's, for one directory entry's name. */
static int name_ok(const char *s)
{
    if (!*s || s[0] == '.')
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-' || *s == ' ' || *s == '+'))
            return 0;
    return 1;
}

/* Walk dir (depth levels below the staging directory) checking every entry. */
static void walk(const char *dir, int depth, fz_tally *t)
{
    DIR *d = opendir(dir);
    GS_FUZZ_ASSERT(d != NULL);
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        GS_FUZZ_ASSERT(name_ok(de->d_name));
        char path[4096];
        GS_FUZZ_ASSERT((size_t)snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < sizeof path);
        struct stat st;
        GS_FUZZ_ASSERT(lstat(path, &st) == 0);
        GS_FUZZ_ASSERT(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
        GS_FUZZ_ASSERT(depth + 1 <= GSD_ARCHIVE_MAX_DEPTH);
        if (S_ISDIR(st.st_mode)) {
            t->dirs++;
            walk(path, depth + 1, t);
        } else {
            t->files++;
            t->bytes += (size_t)st.st_size;
        }
    }
    closedir(d);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    const char *tmp = getenv("GS_TEST_TMP");
    char file[512], dir[512];
    snprintf(file, sizeof file, "%s/fuzz_archive_%ld.bin", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
    snprintf(dir, sizeof dir, "%s/fuzz_archive_%ld.d", tmp && *tmp ? tmp : "/tmp",
             (long)getpid());
    FILE *fp = fopen(file, "wb");
    GS_FUZZ_ASSERT(fp != NULL);
    GS_FUZZ_ASSERT(fwrite(data, 1, size, fp) == size);
    GS_FUZZ_ASSERT(fclose(fp) == 0);
    gsd_rmtree(dir); /* a previous run's leftovers */
    GS_FUZZ_ASSERT(mkdir(dir, 0755) == 0);

    gsd_archive_error e;
    memset(&e, 0, sizeof e);
    int rc = gsd_archive_extract(file, dir, FZ_ENTRIES, FZ_BYTES, &e);
    if (rc != 0) {
        GS_FUZZ_ASSERT(rc == -1);
        if (e.http == 500)
            fprintf(stderr, "fuzz_archive: 500 %s: %s\n", e.code, e.msg);
        GS_FUZZ_ASSERT(e.http == 400 || e.http == 413 || e.http == 422);
        GS_FUZZ_ASSERT(e.code[0] != '\0' && e.msg[0] != '\0');
        GS_FUZZ_ASSERT(memchr(e.msg, '\0', sizeof e.msg) != NULL);
    }
    fz_tally t = {0, 0, 0};
    walk(dir, 0, &t);
    GS_FUZZ_ASSERT(t.files <= FZ_ENTRIES && t.bytes <= FZ_BYTES);
    GS_FUZZ_ASSERT(t.dirs <= (size_t)FZ_ENTRIES * GSD_ARCHIVE_MAX_DEPTH);
    if (rc == 0) {
        GS_FUZZ_ASSERT(t.files + t.dirs >= 1);
        char root[1024];
        gsd_archive_root(dir, root, sizeof root);
        struct stat st;
        GS_FUZZ_ASSERT(!strncmp(root, dir, strlen(dir)) && lstat(root, &st) == 0 &&
                       S_ISDIR(st.st_mode));
    }
    gsd_rmtree(dir);
    unlink(file);
    return rc == 0;
}
