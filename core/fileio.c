/* fileio.c -- atomic writes (tmp + fsync + rename; targets that are not
 * regular files written into), capped whole-file reads, file identity. */
#define _DEFAULT_SOURCE /* realpath */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where a write of path goes: *direct = 1 for an existing file that is not
 * regular (written into: a rename would replace the device or FIFO), else
 * *target is the name the temporary file is renamed over: path, or the
 * file its symlink names (the link stays). A symlink that names no path
 * (/proc/self/fd/N of a deleted file, reached through /dev/stdout) is
 * written into as well. *target is malloc'ed either way. */
static gs_err wfile_target(const char *path, char **target, int *direct, gs_error *err)
{
    struct stat st, lst;
    const int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': it is a directory", path);
    const int link = exists && S_ISREG(st.st_mode) && lstat(path, &lst) == 0 &&
                     S_ISLNK(lst.st_mode);
    char *real = link ? realpath(path, NULL) : NULL;
    *direct = exists && (!S_ISREG(st.st_mode) || (link && !real));
    *target = real ? real : strdup(path);
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

/* "<wf->path>.tmp.XXXXXX", created (0644) and opened; the caller aborts on failure. */
static gs_err open_tmp(gs_wfile *wf, gs_error *err)
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
        gs_errorf(err, GS_ERR_IO, "", "cannot create a temporary file for '%s': %s", wf->path,
                  strerror(errnum));
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

gs_err gs_wfile_open(gs_wfile *wf, const char *path, gs_error *err)
{
    memset(wf, 0, sizeof *wf);
    int direct = 0;
    gs_err rc = wfile_target(path, &wf->path, &direct, err);
    if (!rc)
        rc = direct ? open_direct(wf, err) : open_tmp(wf, err);
    if (rc)
        gs_wfile_abort(wf);
    return rc;
}

gs_err gs_wfile_probe(const char *path, gs_error *err)
{
    gs_wfile wf = {0};
    int direct = 0;
    gs_err rc = wfile_target(path, &wf.path, &direct, err);
    if (!rc && direct && access(wf.path, W_OK) != 0)
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': %s", wf.path, strerror(errno));
    else if (!rc && !direct)
        rc = open_tmp(&wf, err);
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

static int file_id_of(const char *path, file_id *id)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        *id = (file_id){st.st_dev, st.st_ino, NULL};
        return 1;
    }
    if (errno != ENOENT)
        return 0;
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
    return file_id_of(a, &x) && file_id_of(b, &y) && x.dev == y.dev && x.ino == y.ino &&
           !x.name == !y.name && (!x.name || !strcmp(x.name, y.name));
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
