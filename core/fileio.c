/* fileio.c -- atomic writes (tmp + fsync + rename) and capped whole-file reads. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gs_err gs_wfile_open(gs_wfile *wf, const char *path, gs_error *err)
{
    static const char suffix[] = ".tmp.XXXXXX";
    memset(wf, 0, sizeof *wf);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return gs_errorf(err, GS_ERR_IO, "", "cannot write '%s': it is a directory", path);
    size_t plen = strlen(path);
    int fd = -1;
    gs_err rc;
    wf->path = malloc(plen + 1);
    wf->tmp = malloc(plen + sizeof suffix);
    if (!wf->path || !wf->tmp) {
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "no memory for the file name '%s'", path);
        goto fail;
    }
    memcpy(wf->path, path, plen + 1);
    memcpy(wf->tmp, path, plen);
    memcpy(wf->tmp + plen, suffix, sizeof suffix);
    fd = mkstemp(wf->tmp);
    if (fd < 0) {
        const int errnum = errno;
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot create a temporary file for '%s': %s", path,
                       strerror(errnum));
        if (err)
            err->sys_errno = errnum; /* ENOSPC: no inode left */
        free(wf->tmp); /* mkstemp failed: nothing to unlink */
        wf->tmp = NULL;
        goto fail;
    }
    /* mkstemp creates 0600; result files are ordinary data files */
    if (fchmod(fd, 0644) != 0) {
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot set the mode of '%s': %s", wf->tmp,
                  strerror(errno));
        goto fail;
    }
    wf->fp = fdopen(fd, "wb");
    if (!wf->fp) {
        rc = gs_errorf(err, GS_ERR_IO, "", "cannot open '%s': %s", wf->tmp, strerror(errno));
        goto fail;
    }
    return GS_OK;
fail:
    if (fd >= 0 && !wf->fp)
        close(fd);
    gs_wfile_abort(wf);
    return rc;
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
        return write_err(err, errno, "write", wf->tmp);
    return GS_OK;
}

static gs_err commit(gs_wfile *wf, int sync, gs_error *err)
{
    gs_err rc = GS_OK;
    if (fflush(wf->fp) != 0 || ferror(wf->fp))
        rc = write_err(err, errno, "write", wf->tmp);
    else if (sync && fsync(fileno(wf->fp)) != 0)
        rc = write_err(err, errno, "sync", wf->tmp);
    int cr = fclose(wf->fp);
    wf->fp = NULL;
    if (rc == GS_OK && cr != 0)
        rc = write_err(err, errno, "close", wf->tmp);
    if (rc == GS_OK && rename(wf->tmp, wf->path) != 0)
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
