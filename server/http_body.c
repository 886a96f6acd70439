/*
 * http_body.c -- receiving a request's body (see http_impl.h): its kind
 * from the Content-Type against what the route accepts, the size limits
 * (413 as soon as they are passed), JSON into memory, a raw .npy or archive
 * into a staging file, multipart/form-data parts into a staging directory
 * (the "model" part into memory), each file fsynced at the end. The first
 * failure is answered at once (JSON error, field "body"); the rest of the
 * body is then read and dropped. O(body size).
 */
#define _GNU_SOURCE
#include "http_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int gsd_content_type_is(const char *ct, const char *what)
{
    size_t n = strlen(what);
    return ct && !strncasecmp(ct, what, n) && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

static void fail_body(gsd_req *r, unsigned code, const char *ecode, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail_body(gsd_req *r, unsigned code, const char *ecode, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!r->failed)
        gsd_reply_error(r, code, ecode, "body", "%s", msg);
    r->failed = 1;
}

/* A failed write of the body (errno errnum): 507 when there is no room
 * (gsd_reply_no_room), else 500 io_error; "<what>: <strerror>". */
static void fail_body_io(gsd_req *r, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_body_io(gsd_req *r, int errnum, const char *fmt, ...)
{
    if (r->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    gsd_reply_io_errorv(r, errnum, "body", fmt, ap);
    va_end(ap);
    r->failed = 1;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

/* A multipart part name usable as a file name: no path, no leading dot. */
int gsd_part_name_safe(const char *s)
{
    if (!s || !*s || s[0] == '.' || strlen(s) >= 128)
        return 0;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            return 0;
    return 1;
}

const char *gsd_part_name(const char *key, const char *filename)
{
    const char *name = filename ? strrchr(filename, '/') : NULL;
    return name ? name + 1 : (filename ? filename : key);
}

static enum MHD_Result mp_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
    gsd_req *r = cls;
    if (r->failed)
        return MHD_YES;
    if (key && !strcmp(key, "model")) {
        if (off == 0 && r->body.len) { /* a second "model" part */
            fail_body(r, 400, "duplicate", "upload part \"model\" appears twice: send the "
                      "model once");
            return MHD_YES;
        }
        if (r->body.len + size > r->app->o.max_body) {
            fail_body(r, 413, "too_large", "the model part exceeds max_body (%zu bytes)",
                      r->app->o.max_body);
            return MHD_YES;
        }
        gs_buf_add(&r->body, data, size);
        return MHD_YES;
    }
    const char *name = gsd_part_name(key, filename);
    if (!gsd_part_name_safe(name)) {
        fail_body(r, 400, "invalid",
                  "upload part \"%s\": file names may use letters, digits, '.', '_', '-' only",
                  name ? name : "");
        return MHD_YES;
    }
    if (off == 0 || strcmp(name, r->part_name)) {
        if (r->fd >= 0)
            close(r->fd);
        r->fd = -1;
        char path[PATH_MAX + 160];
        snprintf(path, sizeof path, "%s/%s", r->stage_dir, name);
        r->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (r->fd < 0) {
            if (errno == EEXIST)
                fail_body(r, 400, "duplicate", "upload part \"%s\" appears twice", name);
            else
                fail_body_io(r, errno, "cannot stage upload part \"%s\"", name);
            return MHD_YES;
        }
        snprintf(r->part_name, sizeof r->part_name, "%s", name);
        r->n_parts++;
    }
    if (size && write_all(r->fd, data, size) != 0)
        fail_body_io(r, errno, "cannot write upload part \"%s\"", name);
    return MHD_YES;
}

gsd_body_plan gsd_body_plan_of(const char *ct, const char *cl, const char *te, unsigned bodies,
                               size_t max_body, size_t max_upload)
{
    gsd_body_plan p = {GSD_BODY_TAKEN, GSD_BODY_NONE, cl ? strtoull(cl, NULL, 10) : 0, 0};
    int has_body = (cl && p.len > 0) || te;
    unsigned ok = bodies;
    if (!has_body)
        return p;
    if (!ok) {
        p.verdict = GSD_BODY_NOT_TAKEN;
        return p;
    }
    int kind = gsd_content_type_is(ct, "application/json")           ? GSD_BODY_JSON
               : gsd_content_type_is(ct, "application/x-npy")        ? GSD_BODY_NPY
               : gsd_content_type_is(ct, "application/octet-stream") ? GSD_BODY_NPY
               : gsd_content_type_is(ct, "multipart/form-data")      ? GSD_BODY_MULTIPART
               : gsd_content_type_is(ct, "application/x-tar")        ? GSD_BODY_ARCHIVE
               : gsd_content_type_is(ct, "application/gzip")         ? GSD_BODY_ARCHIVE
               : gsd_content_type_is(ct, "application/zip")          ? GSD_BODY_ARCHIVE
                                                                     : -1;
    p.kind = kind;
    if (kind < 0 || !(ok & (1u << kind))) {
        p.verdict = GSD_BODY_BAD_TYPE;
        return p;
    }
    p.cap = kind == GSD_BODY_JSON ? max_body : max_upload;
    if (cl && p.len > p.cap)
        p.verdict = GSD_BODY_TOO_LARGE;
    return p;
}

/* First call: decide how the body is received, or answer 413 / 415 now. */
void gsd_body_begin(gsd_req *r)
{
    const char *ct = gsd_header(r, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *cl = gsd_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = gsd_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    const unsigned ok = r->route->bodies;
    const gsd_body_plan p =
        gsd_body_plan_of(ct, cl, te, ok, r->app->o.max_body, r->app->o.max_upload);
    const int kind = p.kind;
    if (p.verdict == GSD_BODY_TAKEN && kind == GSD_BODY_NONE) {
        r->body_kind = GSD_BODY_NONE;
        return;
    }
    if (p.verdict == GSD_BODY_NOT_TAKEN) {
        fail_body(r, 415, "unsupported_media_type", "%s %s takes no request body", r->method, r->url);
        return;
    }
    if (p.verdict == GSD_BODY_BAD_TYPE) {
        fail_body(r, 415, "unsupported_media_type", "Content-Type \"%s\" is not accepted here; use %s%s%s%s",
                  ct ? ct : "(none)", (ok & (1u << GSD_BODY_JSON)) ? "application/json" : "",
                  (ok & (1u << GSD_BODY_NPY)) ? ", application/x-npy" : "",
                  (ok & (1u << GSD_BODY_MULTIPART)) ? ", multipart/form-data" : "",
                  (ok & (1u << GSD_BODY_ARCHIVE))
                      ? ", application/x-tar, application/gzip (a .tar.gz), application/zip"
                      : "");
        return;
    }
    if (p.verdict == GSD_BODY_TOO_LARGE) {
        fail_body(r, 413, "too_large", "the body has %llu bytes, more than the limit of %zu",
                  p.len, p.cap);
        return;
    }
    r->body_kind = kind;
    if (kind == GSD_BODY_NPY || kind == GSD_BODY_ARCHIVE) {
        gsd_path_staging(r->app, r->file_path, sizeof r->file_path);
        r->fd = open(r->file_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (r->fd < 0) {
            r->file_path[0] = '\0';
            fail_body_io(r, errno, "cannot stage the upload");
        }
    } else if (kind == GSD_BODY_MULTIPART) {
        gsd_path_staging(r->app, r->stage_dir, sizeof r->stage_dir);
        if (mkdir(r->stage_dir, 0755) != 0) {
            r->stage_dir[0] = '\0';
            fail_body_io(r, errno, "cannot stage the upload");
            return;
        }
        r->pp = MHD_create_post_processor(r->conn, 256 * 1024, mp_iter, r);
        if (!r->pp)
            fail_body(r, 400, "bad_format", "malformed multipart/form-data header (boundary?)");
    }
}

void gsd_body_chunk(gsd_req *r, const char *data, size_t size)
{
    r->received += size;
    if (r->failed)
        return;
    size_t cap = r->body_kind == GSD_BODY_JSON ? r->app->o.max_body : r->app->o.max_upload;
    if (r->received > cap) {
        fail_body(r, 413, "too_large", "the body exceeds the limit of %zu bytes", cap);
        return;
    }
    switch (r->body_kind) {
    case GSD_BODY_JSON: gs_buf_add(&r->body, data, size); break;
    case GSD_BODY_NPY:
    case GSD_BODY_ARCHIVE:
        if (write_all(r->fd, data, size) != 0)
            fail_body_io(r, errno, "cannot write the upload");
        break;
    case GSD_BODY_MULTIPART:
        if (MHD_post_process(r->pp, data, size) != MHD_YES)
            fail_body(r, 400, "bad_format", "malformed multipart/form-data body");
        break;
    default: fail_body(r, 415, "unsupported_media_type", "unexpected request body"); break;
    }
    if (r->body.oom)
        fail_body(r, 503, "out_of_memory", "out of memory while receiving the body");
}

void gsd_body_end(gsd_req *r)
{
    if (r->pp) {
        MHD_destroy_post_processor(r->pp);
        r->pp = NULL;
    }
    if (r->fd >= 0) {
        if (fsync(r->fd) != 0 && !r->failed)
            fail_body_io(r, errno, "cannot store the upload");
        close(r->fd);
        r->fd = -1;
    }
}

