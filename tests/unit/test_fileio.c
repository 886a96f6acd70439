/* test_fileio.c -- core/fileio.h: atomic copies (gs_file_copy: the bytes
 * of the source, an existing target replaced, no file and no temporary left
 * when the source or the target's directory is missing), whole-file reads
 * with their size cap, an aborted write leaving nothing, and a directory
 * refused as a target when the write is opened. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "gs_test.h"

/* A scratch directory of its own, emptied. */
static const char *scratch(char dir[512])
{
    gs_test_tmp_path(dir, 512, "fileio");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0 || mkdir(dir, 0755) != 0)
        return NULL;
    return dir;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void write_bytes(const char *path, size_t len, int salt)
{
    gs_wfile wf = {0};
    gs_error e;
    GS_CHECK_INT(gs_wfile_open(&wf, path, &e), GS_OK);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)(i * 131 + (size_t)salt);
        GS_CHECK_INT(gs_wfile_write(&wf, &c, 1, &e), GS_OK);
    }
    GS_CHECK_INT(gs_wfile_commit(&wf, &e), GS_OK);
}

GS_TEST(copy_is_byte_identical_and_replaces)
{
    char dir[512], src[600], dst[600];
    GS_CHECK(scratch(dir));
    snprintf(src, sizeof src, "%s/src.npy", dir);
    snprintf(dst, sizeof dst, "%s/dst.npy", dir);
    const size_t len = 300007; /* several 64 KiB chunks and a tail */
    write_bytes(src, len, 7);
    write_bytes(dst, 100, 1); /* an older target */
    gs_error e;
    GS_CHECK_INT(gs_file_copy(src, dst, &e), GS_OK);
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    GS_CHECK_INT(gs_file_read_all(src, len, &a, &la, &e), GS_OK);
    GS_CHECK_INT(gs_file_read_all(dst, len, &b, &lb, &e), GS_OK);
    GS_CHECK_INT(la, len);
    GS_CHECK_INT(lb, len);
    GS_CHECK(memcmp(a, b, len) == 0);
    free(a);
    free(b);
    GS_CHECK_INT(entries(dir), 2); /* no temporary file left */
    /* the cap of the read is checked before anything is read */
    GS_CHECK_INT(gs_file_read_all(dst, len - 1, &a, &la, &e), GS_ERR_LIMIT);
}

GS_TEST(copy_failures_leave_nothing)
{
    char dir[512], src[600], dst[600], bad[600];
    GS_CHECK(scratch(dir));
    snprintf(src, sizeof src, "%s/absent.npy", dir);
    snprintf(dst, sizeof dst, "%s/dst.npy", dir);
    gs_error e;
    GS_CHECK_INT(gs_file_copy(src, dst, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "absent.npy") != NULL);
    GS_CHECK_INT(entries(dir), 0);
    snprintf(src, sizeof src, "%s/src.npy", dir);
    write_bytes(src, 1000, 3);
    snprintf(bad, sizeof bad, "%s/no/such/dir/dst.npy", dir);
    GS_CHECK_INT(gs_file_copy(src, bad, &e), GS_ERR_IO);
    GS_CHECK_INT(entries(dir), 1);
    /* a directory is no source */
    GS_CHECK(gs_file_copy(dir, dst, &e) != GS_OK);
    GS_CHECK_INT(entries(dir), 1);
}

GS_TEST(aborted_write_leaves_nothing)
{
    char dir[512], path[600];
    GS_CHECK(scratch(dir));
    snprintf(path, sizeof path, "%s/x.bin", dir);
    gs_wfile wf = {0};
    gs_error e;
    GS_CHECK_INT(gs_wfile_open(&wf, path, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_write(&wf, "abc", 3, &e), GS_OK);
    gs_wfile_abort(&wf);
    GS_CHECK_INT(entries(dir), 0);
    gs_wfile_abort(&wf); /* a second abort is a no-op */
}

/* A path naming a directory is refused when the write is opened (the
 * programs open their outputs before the work), not at the final rename;
 * nothing is created. */
GS_TEST(a_directory_is_refused_at_open)
{
    char dir[512], sub[600];
    GS_CHECK(scratch(dir));
    snprintf(sub, sizeof sub, "%s/d", dir);
    GS_CHECK_INT(mkdir(sub, 0755), 0);
    gs_wfile wf = {0};
    gs_error e;
    GS_CHECK_INT(gs_wfile_open(&wf, sub, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "is a directory") != NULL);
    GS_CHECK(wf.fp == NULL && wf.tmp == NULL);
    GS_CHECK_INT(entries(dir), 1);
    GS_CHECK_INT(entries(sub), 0);
    gs_wfile_abort(&wf); /* no-op */
}

GS_TEST_MAIN()
