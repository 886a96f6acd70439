/* test_fileio.c -- core/fileio.h: atomic copies (gs_file_copy: the bytes
 * of the source, an existing target replaced, no file and no temporary left
 * when the source or the target's directory is missing), whole-file reads
 * with their size cap, an aborted write leaving nothing, a directory
 * refused as a target when the write is opened; a device node or a FIFO
 * written into, never replaced (a full device's ENOSPC reported), a symlink
 * to a file kept and its file replaced, a dangling symlink followed as the
 * shell's > follows it (its file created, through a chain of links; where
 * it cannot be, an error and the link untouched); the probe of a write that leaves
 * nothing (and does not wait for a FIFO's reader); a flush that reports a
 * full device before any commit; gs_file_same through hard links, symlinks,
 * dangling ones and names not there yet. Device nodes are made here with
 * mknod (root; skipped otherwise), never the system's. */
#define _GNU_SOURCE /* mknod, makedev */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "gs_test.h"

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
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
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
    GS_CHECK_INT(gs_test_entries(dir), 2); /* no temporary file left */
    /* the cap of the read is checked before anything is read */
    GS_CHECK_INT(gs_file_read_all(dst, len - 1, &a, &la, &e), GS_ERR_LIMIT);
}

GS_TEST(copy_failures_leave_nothing)
{
    char dir[512], src[600], dst[600], bad[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(src, sizeof src, "%s/absent.npy", dir);
    snprintf(dst, sizeof dst, "%s/dst.npy", dir);
    gs_error e;
    GS_CHECK_INT(gs_file_copy(src, dst, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "absent.npy") != NULL);
    GS_CHECK_INT(gs_test_entries(dir), 0);
    snprintf(src, sizeof src, "%s/src.npy", dir);
    write_bytes(src, 1000, 3);
    snprintf(bad, sizeof bad, "%s/no/such/dir/dst.npy", dir);
    GS_CHECK_INT(gs_file_copy(src, bad, &e), GS_ERR_IO);
    GS_CHECK_INT(gs_test_entries(dir), 1);
    /* a directory is no source */
    GS_CHECK(gs_file_copy(dir, dst, &e) != GS_OK);
    GS_CHECK_INT(gs_test_entries(dir), 1);
}

GS_TEST(aborted_write_leaves_nothing)
{
    char dir[512], path[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(path, sizeof path, "%s/x.bin", dir);
    gs_wfile wf = {0};
    gs_error e;
    GS_CHECK_INT(gs_wfile_open(&wf, path, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_write(&wf, "abc", 3, &e), GS_OK);
    gs_wfile_abort(&wf);
    GS_CHECK_INT(gs_test_entries(dir), 0);
    gs_wfile_abort(&wf); /* a second abort is a no-op */
}

/* A path naming a directory is refused when the write is opened (the
 * programs open their outputs before the work), not at the final rename;
 * nothing is created. */
GS_TEST(a_directory_is_refused_at_open)
{
    char dir[512], sub[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(sub, sizeof sub, "%s/d", dir);
    GS_CHECK_INT(mkdir(sub, 0755), 0);
    gs_wfile wf = {0};
    gs_error e;
    GS_CHECK_INT(gs_wfile_open(&wf, sub, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "is a directory") != NULL);
    GS_CHECK(wf.fp == NULL && wf.tmp == NULL);
    GS_CHECK_INT(gs_test_entries(dir), 1);
    GS_CHECK_INT(gs_test_entries(sub), 0);
    gs_wfile_abort(&wf); /* no-op */
}

/* A character device node of our own in dir (major 1: 3 is null, 7 is
 * full); 0 where mknod is not allowed (not root). */
static int make_dev(char *path, size_t cap, const char *dir, const char *name, unsigned minor)
{
    snprintf(path, cap, "%s/%s", dir, name);
    if (mknod(path, S_IFCHR | 0666, makedev(1, minor)) == 0)
        return 1;
    fprintf(stderr, "  (mknod %s: %s: skipped)\n", path, strerror(errno));
    return 0;
}

static int is_chr(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

/* An existing device node is written into, not replaced by a regular file
 * (as root a rename over /dev/null or /dev/full replaced the system's);
 * a full device's write error is reported with its errno; no temporary
 * file is made beside it. */
GS_TEST(a_device_is_written_into_not_replaced)
{
    char dir[512], null_dev[600], full_dev[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    if (!make_dev(null_dev, sizeof null_dev, dir, "null", 3) ||
        !make_dev(full_dev, sizeof full_dev, dir, "full", 7))
        return;
    write_bytes(null_dev, 100000, 5);
    GS_CHECK(is_chr(null_dev));
    GS_CHECK_INT(gs_test_entries(dir), 2);
    gs_wfile wf = {0};
    gs_error e = {0};
    GS_CHECK_INT(gs_wfile_open(&wf, full_dev, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_write(&wf, "abc", 3, &e), GS_OK); /* buffered */
    GS_CHECK_INT(gs_wfile_commit(&wf, &e), GS_ERR_IO);
    GS_CHECK_INT(e.sys_errno, ENOSPC);
    GS_CHECK(strstr(e.msg, full_dev) != NULL);
    GS_CHECK(strstr(e.msg, "No space left on device") != NULL);
    GS_CHECK(is_chr(full_dev));
    GS_CHECK_INT(gs_test_entries(dir), 2);
}

/* A FIFO receives the bytes (a reader holds it open here) and stays a FIFO. */
GS_TEST(a_fifo_receives_the_bytes)
{
    char dir[512], fifo[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    GS_CHECK_INT(mkfifo(fifo, 0644), 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader: the writer's open does not wait */
    GS_CHECK(rd >= 0);
    gs_wfile wf = {0};
    gs_error e;
    GS_CHECK_INT(gs_wfile_open(&wf, fifo, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_write(&wf, "results", 7, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_commit(&wf, &e), GS_OK);
    char got[16] = {0};
    GS_CHECK_INT(read(rd, got, sizeof got), 7);
    close(rd);
    GS_CHECK(memcmp(got, "results", 7) == 0);
    struct stat st;
    GS_CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    GS_CHECK_INT(gs_test_entries(dir), 1);
}

/* A symlink to a regular file stays a symlink: its file gets the new bytes
 * (atomically: the temporary file is made beside the file, not the link). */
GS_TEST(a_symlink_keeps_pointing_at_its_file)
{
    char dir[512], file[600], link[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(file, sizeof file, "%s/w.npy", dir);
    snprintf(link, sizeof link, "%s/latest.npy", dir);
    write_bytes(file, 10, 1);
    GS_CHECK_INT(symlink("w.npy", link), 0);
    write_bytes(link, 20, 2);
    struct stat st;
    GS_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    GS_CHECK(stat(file, &st) == 0 && st.st_size == 20);
    GS_CHECK_INT(gs_test_entries(dir), 2);
}

/* A name of an open descriptor (/dev/fd/N, /proc/self/fd/N; /dev/stdout is
 * /dev/fd/1) is written through a duplicate: after `>> log` the bytes are
 * appended to log, the same file (it was followed to log and log replaced:
 * its earlier lines lost). */
GS_TEST(an_open_descriptor_is_appended_to)
{
    char dir[512], log[600], name[64];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(log, sizeof log, "%s/log.txt", dir);
    for (int k = 0; k < 2; k++) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        GS_CHECK(fd >= 0 && write(fd, "keep\n", 5) == 5);
        close(fd);
        fd = open(log, O_WRONLY | O_APPEND); /* the shell's >> */
        GS_CHECK(fd >= 0);
        struct stat before, after;
        GS_CHECK(fstat(fd, &before) == 0);
        snprintf(name, sizeof name, k ? "/proc/self/fd/%d" : "/dev/fd/%d", fd);
        gs_wfile wf;
        gs_error e;
        GS_CHECK_MSG(gs_wfile_open(&wf, name, &e) == GS_OK, "%s", e.msg);
        GS_CHECK(wf.tmp == NULL); /* written into, no temporary file */
        GS_CHECK(gs_wfile_write(&wf, "new\n", 4, &e) == GS_OK);
        GS_CHECK(gs_wfile_commit(&wf, &e) == GS_OK);
        GS_CHECK(fcntl(fd, F_GETFD) != -1); /* the caller's descriptor stays open */
        close(fd);
        char buf[32] = {0};
        fd = open(log, O_RDONLY);
        GS_CHECK(fd >= 0 && read(fd, buf, sizeof buf - 1) == 9);
        close(fd);
        GS_CHECK_MSG(!strcmp(buf, "keep\nnew\n"), "%s", buf);
        GS_CHECK(stat(log, &after) == 0 && after.st_ino == before.st_ino);
        GS_CHECK_INT(gs_test_entries(dir), 1);
    }
    /* a closed descriptor's name is no alias: a new file beside nothing */
    gs_wfile wf;
    gs_error e;
    GS_CHECK(gs_wfile_open(&wf, "/dev/fd/987", &e) != GS_OK);
}

/* lstat says a symlink whose text is want. */
static int is_link_to(const char *path, const char *want)
{
    struct stat st;
    char txt[600];
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return 0;
    ssize_t n = readlink(path, txt, sizeof txt - 1);
    if (n < 0)
        return 0;
    txt[n] = '\0';
    return strcmp(txt, want) == 0;
}

static long file_size(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long)st.st_size : -1;
}

/* A dangling symlink is followed as the shell's > follows it: the file it
 * names is created (the temporary file beside it), the link stays a link
 * (a rename over it made it a regular file, and target.csv never came). */
GS_TEST(a_dangling_symlink_creates_its_file)
{
    char dir[512], link[600], target[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(link, sizeof link, "%s/dl.csv", dir);
    snprintf(target, sizeof target, "%s/target.csv", dir);
    GS_CHECK_INT(symlink("target.csv", link), 0);
    gs_error e;
    GS_CHECK_INT(gs_wfile_probe(link, &e), GS_OK);
    GS_CHECK_INT(gs_test_entries(dir), 1);
    write_bytes(link, 30, 4);
    GS_CHECK(is_link_to(link, "target.csv"));
    GS_CHECK_INT(file_size(target), 30);
    GS_CHECK_INT(gs_test_entries(dir), 2); /* no temporary file left */
    GS_CHECK_INT(gs_file_same(link, target), 1);
    /* an absolute link text, the same */
    char abs_link[600], abs_target[600];
    snprintf(abs_link, sizeof abs_link, "%s/abs.csv", dir);
    snprintf(abs_target, sizeof abs_target, "%s/abs_target.csv", dir);
    GS_CHECK_INT(symlink(abs_target, abs_link), 0);
    GS_CHECK_INT(gs_file_same(abs_link, abs_target), 1); /* both not there yet */
    write_bytes(abs_link, 7, 1);
    GS_CHECK(is_link_to(abs_link, abs_target));
    GS_CHECK_INT(file_size(abs_target), 7);
    GS_CHECK_INT(gs_test_entries(dir), 4);
}

/* A chain of two dangling links, each one's text read from its own
 * directory: l1 -> sub/l2 -> t.bin is sub/t.bin, not t.bin. */
GS_TEST(a_chain_of_dangling_symlinks)
{
    char dir[512], sub[600], l1[600], l2[600], t[600], wrong[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(l1, sizeof l1, "%s/l1", dir);
    snprintf(l2, sizeof l2, "%s/sub/l2", dir);
    snprintf(t, sizeof t, "%s/sub/t.bin", dir);
    snprintf(wrong, sizeof wrong, "%s/t.bin", dir);
    GS_CHECK_INT(mkdir(sub, 0755), 0);
    GS_CHECK_INT(symlink("sub/l2", l1), 0);
    GS_CHECK_INT(symlink("t.bin", l2), 0);
    write_bytes(l1, 11, 2);
    GS_CHECK(is_link_to(l1, "sub/l2"));
    GS_CHECK(is_link_to(l2, "t.bin"));
    GS_CHECK_INT(file_size(t), 11);
    GS_CHECK_INT(file_size(wrong), -1);
    GS_CHECK_INT(gs_test_entries(dir), 2);
    GS_CHECK_INT(gs_test_entries(sub), 2);
    /* written again through the chain, now to an existing file */
    write_bytes(l1, 5, 3);
    GS_CHECK(is_link_to(l1, "sub/l2") && is_link_to(l2, "t.bin"));
    GS_CHECK_INT(file_size(t), 5);
    GS_CHECK_INT(gs_test_entries(sub), 2);
}

/* A dangling link whose file cannot be created: a link into a missing
 * directory, a loop, /proc/self/fd/N of a closed descriptor (as
 * /dev/stdout is with fd 1 closed): the open and the probe fail, naming
 * the link, and the link is left as it was. */
GS_TEST(a_dangling_symlink_that_cannot_be_followed_stays)
{
    char dir[512], nodir[600], loop1[600], loop2[600], fdlink[600], fdtext[64];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(nodir, sizeof nodir, "%s/nodir.csv", dir);
    snprintf(loop1, sizeof loop1, "%s/loop1", dir);
    snprintf(loop2, sizeof loop2, "%s/loop2", dir);
    snprintf(fdlink, sizeof fdlink, "%s/mystdout", dir);
    int fd = 900; /* a descriptor number not open here */
    while (fcntl(fd, F_GETFD) != -1)
        fd++;
    snprintf(fdtext, sizeof fdtext, "/proc/self/fd/%d", fd);
    GS_CHECK_INT(symlink("no/such/dir/x.csv", nodir), 0);
    GS_CHECK_INT(symlink("loop2", loop1), 0);
    GS_CHECK_INT(symlink("loop1", loop2), 0);
    GS_CHECK_INT(symlink(fdtext, fdlink), 0);
    const char *links[3] = {nodir, loop1, fdlink};
    for (int i = 0; i < 3; i++) {
        gs_wfile wf = {0};
        gs_error e = {0};
        GS_CHECK_INT(gs_wfile_open(&wf, links[i], &e), GS_ERR_IO);
        GS_CHECK(strstr(e.msg, links[i]) != NULL);
        GS_CHECK(wf.fp == NULL && wf.tmp == NULL);
        GS_CHECK_INT(gs_wfile_probe(links[i], &e), GS_ERR_IO);
    }
    gs_wfile wf = {0};
    gs_error e = {0};
    GS_CHECK_INT(gs_wfile_open(&wf, nodir, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "no/such/dir/x.csv") != NULL);
    GS_CHECK(strstr(e.msg, "No such file or directory") != NULL);
    GS_CHECK_INT(gs_wfile_open(&wf, loop1, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "Too many levels of symbolic links") != NULL);
    GS_CHECK(is_link_to(nodir, "no/such/dir/x.csv"));
    GS_CHECK(is_link_to(loop1, "loop2"));
    GS_CHECK(is_link_to(loop2, "loop1"));
    GS_CHECK(is_link_to(fdlink, fdtext));
    GS_CHECK_INT(gs_test_entries(dir), 4);
}

/* gs_wfile_flush reports a full device's ENOSPC before any commit (a
 * program committing two files together aborts both then); on a regular
 * file it is followed by the commit as usual. */
GS_TEST(flush_reports_before_the_commit)
{
    char dir[512], path[600], full_dev[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(path, sizeof path, "%s/a.bin", dir);
    gs_wfile wf = {0};
    gs_error e = {0};
    GS_CHECK_INT(gs_wfile_open(&wf, path, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_write(&wf, "abc", 3, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_flush(&wf, &e), GS_OK);
    GS_CHECK_INT(file_size(path), -1); /* not committed yet */
    GS_CHECK_INT(gs_wfile_commit(&wf, &e), GS_OK);
    GS_CHECK_INT(file_size(path), 3);
    GS_CHECK_INT(gs_test_entries(dir), 1);
    if (!make_dev(full_dev, sizeof full_dev, dir, "full", 7))
        return;
    GS_CHECK_INT(gs_wfile_open(&wf, full_dev, &e), GS_OK);
    GS_CHECK_INT(gs_wfile_write(&wf, "abc", 3, &e), GS_OK); /* buffered */
    GS_CHECK_INT(gs_wfile_flush(&wf, &e), GS_ERR_IO);
    GS_CHECK_INT(e.sys_errno, ENOSPC);
    gs_wfile_abort(&wf);
    GS_CHECK(is_chr(full_dev));
    GS_CHECK_INT(gs_test_entries(dir), 2);
}

/* The probe reports what the open would (a missing directory, a directory)
 * and leaves nothing; a FIFO without a reader is not opened (it would wait). */
GS_TEST(probe_leaves_nothing)
{
    char dir[512], path[600], fifo[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    gs_error e;
    snprintf(path, sizeof path, "%s/no/w.npy", dir);
    GS_CHECK_INT(gs_wfile_probe(path, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "cannot create a temporary file") != NULL);
    GS_CHECK_INT(gs_wfile_probe(dir, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "is a directory") != NULL);
    snprintf(path, sizeof path, "%s/w.npy", dir);
    GS_CHECK_INT(gs_wfile_probe(path, &e), GS_OK);
    GS_CHECK_INT(gs_test_entries(dir), 0);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    GS_CHECK_INT(mkfifo(fifo, 0644), 0);
    GS_CHECK_INT(gs_wfile_probe(fifo, &e), GS_OK);
    GS_CHECK_INT(gs_test_entries(dir), 1);
}

GS_TEST(same_file_through_links_and_new_names)
{
    char dir[512], a[600], hard[600], sym[600], b[600], fresh[600], fresh2[600];
    GS_CHECK(gs_test_scratch_dir(dir, "fileio"));
    snprintf(a, sizeof a, "%s/g.npy", dir);
    snprintf(hard, sizeof hard, "%s/hard.npy", dir);
    snprintf(sym, sizeof sym, "%s/sym.npy", dir);
    snprintf(b, sizeof b, "%s/other.npy", dir);
    snprintf(fresh, sizeof fresh, "%s/new.npy", dir);
    snprintf(fresh2, sizeof fresh2, "%s/./new.npy", dir);
    write_bytes(a, 10, 1);
    write_bytes(b, 10, 1);
    GS_CHECK_INT(link(a, hard), 0);
    GS_CHECK_INT(symlink("g.npy", sym), 0);
    GS_CHECK_INT(gs_file_same(a, a), 1);
    GS_CHECK_INT(gs_file_same(a, hard), 1);
    GS_CHECK_INT(gs_file_same(sym, a), 1);
    GS_CHECK_INT(gs_file_same(a, b), 0);           /* same bytes, another file */
    GS_CHECK_INT(gs_file_same(fresh, fresh2), 1);  /* one new name, spelled twice */
    GS_CHECK_INT(gs_file_same(fresh, a), 0);
    GS_CHECK_INT(gs_file_same(fresh, dir), 0);     /* a new name and its directory */
    GS_CHECK_INT(gs_test_entries(dir), 4);
}

GS_TEST_MAIN()
