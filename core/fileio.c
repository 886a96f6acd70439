/* fileio.c -- atomic writes (tmp + fsync + rename; targets that are not
 * regular files written into; symlinks followed, dangling ones too),
 * capped whole-file reads, file identity. */
#define _DEFAULT_SOURCE /* realpath */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* At most this many symlinks are followed from an output's name to the
 * file written (the kernel's own limit, SYMLOOP_MAX on Linux, is 40). */
#define WFILE_MAX_LINKS 40

/* The text of the symlink path (readlink, grown until it fits): malloc'ed,
 * or NULL with errno. */
static char *link_text(const char *path, size_t hint)
{
    size_t cap = hint + 1 > 64 ? hint + 1 : 64; /* /proc's links report st_size 0 */
    for (;;) {
        char *txt = malloc(cap);
        if (!txt)
            return NULL;
        const ssize_t n = readlink(path, txt, cap);
        if (n >= 0 && (size_t)n < cap) {
            txt[n] = '\0';
            return txt;
        }
        const int errnum = errno;
        free(txt);
        if (n < 0 || cap > ((size_t)1 << 20)) {
            errno = n < 0 ? errnum : ENAMETOOLONG;
            return NULL;
        }
        cap *= 2;
    }
}

/* The name a chain of symlinks starting at path ends at: the first name
 * that is not a symlink (lstat), there or not; each link's text read as
 * the kernel reads it, a relative one from the link's own directory. At
 * most WFILE_MAX_LINKS links (ELOOP beyond). malloc'ed, or NULL with errno. */
static char *link_chain_end(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur; hops++) {
        struct stat lst;
        if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode))
            return cur;
        if (hops == WFILE_MAX_LINKS) {
            free(cur);
            errno = ELOOP;
            return NULL;
        }
        char *txt = link_text(cur, lst.st_size > 0 ? (size_t)lst.st_size : 0);
        const char *slash = strrchr(cur, '/');
        char *next = txt;
        if (txt && txt[0] != '/' && slash) { /* relative: beside the link */
            const size_t dl = (size_t)(slash - cur) + 1, tl = strlen(txt);
            if ((next = malloc(dl + tl + 1))) {
                memcpy(next, cur, dl);
                memcpy(next + dl, txt, tl + 1);
            }
            free(txt);
        }
        const int errnum = errno;
        free(cur);
        cur = next;
        errno = errnum;
    }
    return NULL;
}

/* Where a write of path goes: *direct = 1 for an existing file that is not
 * regular (written into: a rename would replace the device or FIFO), else
 * *target is the name the temporary file is renamed over: path, or the
 * file its symlink names (the link stays). A symlink that names no path
 * (/proc/self/fd/N of a deleted file, reached through /dev/stdout) is
 * written into as well. A symlink that names nothing yet (dangling, also
 * through a chain of links) is followed as the shell's > follows it: its
 * file is created (*via_link = 1), the link stays; where that file cannot
 * be created (a missing directory, /proc/self/fd/1 of a closed fd 1), the
 * open fails and the link is left as it is (a rename over it replaced it
 * by a regular file: over /dev/stdout, the system's link). *target is
 * malloc'ed either way. */
static gs_err wfile_target(const char *path, char **target, int *direct, int *via_link,
                           gs_error *err)
{
    struct stat st, lst;
    *target = NULL;
    *direct = *via_link = 0;
    const int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': it is a directory", path);
    const int link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (exists) {
        char *real = link && S_ISREG(st.st_mode) ? realpath(path, NULL) : NULL;
        *direct = !S_ISREG(st.st_mode) || (link && !real);
        *target = real ? real : strdup(path);
    } else if (link) { /* dangling, or a loop */
        if (!(*target = link_chain_end(path))) {
            if (errno == ENOMEM)
                return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the file name '%s'", path);
            return gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': %s", path, strerror(errno));
        }
        struct stat ts; /* there after all (made meanwhile, or a name stat could not reach) */
        const int there = stat(*target, &ts) == 0;
        if (there && S_ISDIR(ts.st_mode)) {
            gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': its symlink names '%s', a directory",
                      path, *target);
            free(*target);
            *target = NULL;
            return GS_ERR_IO;
        }
        *direct = there && !S_ISREG(ts.st_mode);
        *via_link = 1;
        return GS_OK;
    } else {
        *target = strdup(path);
    }
    if (!*target)
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the file name '%s'", path);
    return GS_OK;
}

/* wf->fp = a stream on fd (the file name), or fd closed and the error. */
static gs_err stream_on(gs_wfile *wf, int fd, const char *name, gs_error *err)
{
    wf->fp = fdopen(fd, "wb");
    if (!wf->fp) {
        const int errnum = errno;
        close(fd);
        return gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", name, strerror(errnum));
    }
    return GS_OK;
}

/* The target itself, opened for writing (wf->path set, wf->tmp NULL). */
static gs_err open_direct(gs_wfile *wf, gs_error *err)
{
    int fd = open(wf->path, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", wf->path, strerror(errno));
    return stream_on(wf, fd, wf->path, err);
}

/* "<wf->path>.tmp.XXXXXX", created (0644) and opened; the caller aborts on
 * failure. via: the dangling symlink wf->path was reached through, named
 * in the error (NULL: none). */
static gs_err open_tmp(gs_wfile *wf, const char *via, gs_error *err)
{
    static const char suffix[] = ".tmp.XXXXXX";
    const size_t plen = strlen(wf->path);
    if (!(wf->tmp = malloc(plen + sizeof suffix)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the file name '%s'", wf->path);
    memcpy(wf->tmp, wf->path, plen);
    memcpy(wf->tmp + plen, suffix, sizeof suffix);
    int fd = mkstemp(wf->tmp);
    if (fd < 0) {
        const int errnum = errno;
        if (via)
            gs_errorf(err, GS_ERR_IO, "",
                      "cannot create '%s', the file the symlink '%s' names: %s (the link is "
                      "left as it is)", wf->path, via, strerror(errnum));
        else
            gs_errorf(err, GS_ERR_IO, "", "cannot create a temporary file for '%s': %s",
                      wf->path, strerror(errnum));
        if (err)
            err->sys_errno = errnum; /* ENOSPC: no inode left */
        free(wf->tmp); /* mkstemp failed: nothing to unlink */
        wf->tmp = NULL;
        return GS_ERR_IO;
    }
    /* mkstemp creates 0600; result files are ordinary data files */
    if (fchmod(fd, 0644) != 0) {
        const int errnum = errno;
        close(fd);
        return gs_errorf(err, GS_ERR_IO, "", "cannot set the mode of '%s': %s", wf->tmp,
                         strerror(errnum));
    }
    return stream_on(wf, fd, wf->tmp, err);
}

/* The descriptor path names when it is one of this process's open ones
 * (/dev/stdout 1, /dev/stderr 2, /dev/fd/N, /proc/self/fd/N), else -1.
 * Such an output is written through a duplicate of it, where and as the
 * shell opened it (after `>> file`: appended), never replaced: following
 * the link to the file and renaming over it dropped what `>>` kept. */
static int fd_alias(const char *path)
{
    static const char *const dir[] = {"/dev/fd/", "/proc/self/fd/"};
    long fd = !strcmp(path, "/dev/stdout") ? 1 : !strcmp(path, "/dev/stderr") ? 2 : -1;
    for (int i = 0; fd < 0 && i < 2; i++) {
        const size_t dl = strlen(dir[i]);
        char *end = NULL;
        if (!strncmp(path, dir[i], dl) && path[dl] >= '0' && path[dl] <= '9') {
            errno = 0;
            const long v = strtol(path + dl, &end, 10);
            fd = !errno && *end == '\0' && v <= INT_MAX ? v : -1;
        }
    }
    return fd >= 0 && fcntl((int)fd, F_GETFL) != -1 ? (int)fd : -1;
}

/* wf writing into a duplicate of the open descriptor fd (fd_alias). */
static gs_err open_alias(gs_wfile *wf, const char *path, int fd, gs_error *err)
{
    if (!(wf->path = strdup(path)))
        return gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the file name '%s'", path);
    const int acc = fcntl(fd, F_GETFL) & O_ACCMODE;
    if (acc == O_RDONLY)
        return gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': descriptor %d is open for "
                         "reading only", path, fd);
    const int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (dup < 0)
        return gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", path, strerror(errno));
    return stream_on(wf, dup, path, err);
}

gs_err gs_wfile_open(gs_wfile *wf, const char *path, gs_error *err)
{
    memset(wf, 0, sizeof *wf);
    const int fd = fd_alias(path);
    if (fd >= 0) {
        gs_err rc = open_alias(wf, path, fd, err);
        if (rc)
            gs_wfile_abort(wf);
        return rc;
    }
    int direct = 0, via_link = 0;
    gs_err rc = wfile_target(path, &wf->path, &direct, &via_link, err);
    if (!rc)
        rc = direct ? open_direct(wf, err) : open_tmp(wf, via_link ? path : NULL, err);
    if (rc)
        gs_wfile_abort(wf);
    return rc;
}

gs_err gs_wfile_probe(const char *path, gs_error *err)
{
    gs_wfile wf = {0};
    if (fd_alias(path) >= 0) { /* written through a duplicate: opening it is the check */
        gs_err rc = gs_wfile_open(&wf, path, err);
        if (!rc)
            fclose(wf.fp);
        free(wf.path);
        return rc;
    }
    int direct = 0, via_link = 0;
    gs_err rc = wfile_target(path, &wf.path, &direct, &via_link, err);
    if (!rc && direct && access(wf.path, W_OK) != 0)
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': %s", wf.path, strerror(errno));
    else if (!rc && !direct)
        rc = open_tmp(&wf, via_link ? path : NULL, err);
    gs_wfile_abort(&wf);
    return rc;
}

/* The name a write error cites: the temporary file, or the target written into. */
static const char *wname(const gs_wfile *wf)
{
    return wf->tmp ? wf->tmp : wf->path;
}

/* A failed write's error, its errno kept (gs_error.sys_errno). */
static gs_err write_err(gs_error *err, int errnum, const char *what, const char *path)
{
    gs_errorf(err, GS_ERR_IO, "", "cannot %s '%s': %s", what, path, strerror(errnum));
    if (err)
        err->sys_errno = errnum;
    return GS_ERR_IO;
}

gs_err gs_wfile_write(gs_wfile *wf, const void *buf, size_t len, gs_error *err)
{
    if (len && fwrite(buf, 1, len, wf->fp) != len)
        return write_err(err, errno, "write", wname(wf));
    return GS_OK;
}

gs_err gs_wfile_flush(gs_wfile *wf, gs_error *err)
{
    if (fflush(wf->fp) != 0 || ferror(wf->fp))
        return write_err(err, errno, "write", wname(wf));
    if (wf->tmp && fsync(fileno(wf->fp)) != 0)
        return write_err(err, errno, "sync", wf->tmp);
    return GS_OK;
}

static gs_err commit(gs_wfile *wf, int sync, gs_error *err)
{
    gs_err rc = GS_OK;
    if (fflush(wf->fp) != 0 || ferror(wf->fp))
        rc = write_err(err, errno, "write", wname(wf));
    else if (sync && wf->tmp && fsync(fileno(wf->fp)) != 0) /* a device, a FIFO: EINVAL */
        rc = write_err(err, errno, "sync", wf->tmp);
    int cr = fclose(wf->fp);
    wf->fp = NULL;
    if (rc == GS_OK && cr != 0)
        rc = write_err(err, errno, "close", wname(wf));
    if (rc == GS_OK && wf->tmp && rename(wf->tmp, wf->path) != 0)
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot rename '%s' to '%s': %s", wf->tmp, wf->path,
                       strerror(errno));
    if (rc != GS_OK) {
        gs_wfile_abort(wf);
        return rc;
    }
    free(wf->tmp);
    free(wf->path);
    memset(wf, 0, sizeof *wf);
    return GS_OK;
}

gs_err gs_wfile_commit(gs_wfile *wf, gs_error *err)
{
    return commit(wf, 1, err);
}

gs_err gs_wfile_commit_unsynced(gs_wfile *wf, gs_error *err)
{
    return commit(wf, 0, err);
}

void gs_wfile_abort(gs_wfile *wf)
{
    if (wf->fp)
        fclose(wf->fp);
    if (wf->tmp)
        unlink(wf->tmp);
    free(wf->tmp);
    free(wf->path);
    memset(wf, 0, sizeof *wf);
}

gs_err gs_file_copy(const char *src, const char *path, gs_error *e)
{
    FILE *in = fopen(src, "rb");
    if (!in)
        return gs_errorf(e, GS_ERR_IO, "", "cannot open %s: %s", src, strerror(errno));
    gs_wfile wf = {0};
    gs_err rc = gs_wfile_open(&wf, path, e);
    char buf[1 << 16];
    size_t got;
    while (!rc && (got = fread(buf, 1, sizeof buf, in)) > 0)
        rc = gs_wfile_write(&wf, buf, got, e);
    if (!rc && ferror(in))
        rc = gs_errorf(e, GS_ERR_IO, "", "cannot read %s", src);
    fclose(in);
    if (rc)
        gs_wfile_abort(&wf);
    else
        rc = gs_wfile_commit(&wf, e);
    return rc;
}

gs_err gs_file_read_all(const char *path, size_t max_bytes, char **buf, size_t *len,
                        gs_error *err)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", path, strerror(errno));
    gs_err rc = GS_OK;
    char *data = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot stat '%s': %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = gs_errorf(err, GS_ERR_IO, "", "'%s' is not a regular file", path);
        goto done;
    }
    if (st.st_size < 0 || (unsigned long long)st.st_size > max_bytes) {
        rc = gs_errorf(err, GS_ERR_LIMIT, "", "'%s' has %lld bytes, more than the limit of %zu",
                       path, (long long)st.st_size, max_bytes);
        goto done;
    }
    size_t size = (size_t)st.st_size, got = 0;
    data = malloc(size + 1);
    if (!data) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory to read '%s' (%zu bytes)", path, size);
        goto done;
    }
    while (got < size) {
        ssize_t r = read(fd, data + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = gs_errorf(err, GS_ERR_IO, "", "cannot read '%s': %s", path, strerror(errno));
            goto done;
        }
        if (r == 0)
            break; /* file shrank meanwhile: parse what is there */
        got += (size_t)r;
    }
    data[got] = '\0';
    *buf = data;
    *len = got;
    data = NULL;
done:
    free(data);
    close(fd);
    return rc;
}

/* A file's identity: its inode, or for a name not there yet its
 * directory's inode and its name (name non-NULL). 0 if neither is had. */
typedef struct {
    dev_t dev;
    ino_t ino;
    const char *name;
} file_id;

static int file_id_of(const char *path, file_id *id, char **owned)
{
    struct stat st;
    *owned = NULL;
    if (stat(path, &st) == 0) {
        *id = (file_id){st.st_dev, st.st_ino, NULL};
        return 1;
    }
    if (errno != ENOENT)
        return 0;
    struct stat lst; /* a dangling symlink: the name a write would create (wfile_target) */
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        if (!(*owned = link_chain_end(path)))
            return 0;
        path = *owned;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : NULL;
    const int ok = (!slash || dir) && stat(dir ? dir : ".", &st) == 0;
    free(dir);
    if (!ok)
        return 0;
    *id = (file_id){st.st_dev, st.st_ino, slash ? slash + 1 : path};
    return 1;
}

int gs_file_same(const char *a, const char *b)
{
    file_id x, y;
    char *oa = NULL, *ob = NULL;
    const int same = file_id_of(a, &x, &oa) && file_id_of(b, &y, &ob) && x.dev == y.dev &&
                     x.ino == y.ino && !x.name == !y.name && (!x.name || !strcmp(x.name, y.name));
    free(oa);
    free(ob);
    return same;
}

void gs_file_error_context(gs_error *err, const char *path)
{
    if (!err || !path || strstr(err->msg, path))
        return;
    char tmp[sizeof err->msg];
    snprintf(tmp, sizeof tmp, "%s: ", path);
    size_t used = strlen(tmp), ml = strlen(err->msg);
    if (ml > sizeof tmp - 1 - used)
        ml = sizeof tmp - 1 - used;
    memcpy(tmp + used, err->msg, ml);
    tmp[used + ml] = '\0';
    memcpy(err->msg, tmp, sizeof tmp);
}
