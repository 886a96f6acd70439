/*
 * upload_archive.c -- safe unpacking of an uploaded model folder (upload_archive.h).
 * libarchive reads tar (ustar, pax, GNU), zip and gzip/bzip2/xz-compressed
 * tar; every entry is checked (name, type, depth, count, bytes) before its
 * file is created. Cost O(archive size).
 */
#define _GNU_SOURCE
#include "upload_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http.h" /* gsd_io_status: a full disk is 507 */

static int ar_fail(gsd_archive_error *e, unsigned http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int ar_fail(gsd_archive_error *e, unsigned http, const char *code, const char *fmt, ...)
{
    va_list ap;
    e->http = http;
    snprintf(e->code, sizeof e->code, "%s", code);
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* libarchive's reason for the last failure (it may have none). */
static const char *ar_why(struct archive *a)
{
    const char *s = archive_error_string(a);
    return s && *s ? s : "unreadable data";
}

/* Printable, bounded copy of an entry name for messages. */
static const char *ar_show(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; s && s[n] && n + 4 < cap; n++)
        out[n] = (s[n] >= 0x20 && s[n] < 0x7f) ? s[n] : '?';
    if (s && s[n])
        memcpy(out + n, "...", 4);
    else
        out[n] = '\0';
    return out;
}

/* Check a name; *depth = its number of components. NULL if fine, else why not. */
static const char *ar_check_name(const char *name, int *depth)
{
    if (!name || !*name)
        return "an empty name";
    if (name[0] == '/')
        return "an absolute path";
    *depth = 0;
    for (const char *c = name; *c;) {
        const char *end = strchr(c, '/');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        if (n == 0)
            return "an empty path component ('//')";
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return "a '..' component";
        if (c[0] == '.')
            return "a component starting with '.' (hidden files are not accepted)";
        for (size_t k = 0; k < n; k++) {
            char ch = c[k];
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                  ch == '.' || ch == '_' || ch == '-' || ch == ' ' || ch == '+'))
                return "a character outside letters, digits, '.', '_', '-', ' ', '+' and '/'";
        }
        ++*depth;
        c += n + (end ? 1 : 0);
        if (end && !*c)
            break; /* "dir/": a directory entry */
    }
    return NULL;
}

/* mkdir -p of dir/rel (rel's components already checked). */
static int ar_mkdirs(const char *dir, const char *rel, int last_too)
{
    char path[PATH_MAX];
    int w = snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (w < 0 || (size_t)w >= sizeof path)
        return -1;
    size_t base = strlen(dir) + 1;
    for (char *c = path + base; *c; c++)
        if (*c == '/') {
            *c = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST)
                return -1;
            struct stat st;
            if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
                return -1;
            *c = '/';
        }
    if (last_too && mkdir(path, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static int ar_write_file(struct archive *a, const char *dir, const char *rel, const char *show,
                         size_t *total, size_t max_bytes, gsd_archive_error *e)
{
    char path[PATH_MAX];
    int w = snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (w < 0 || (size_t)w >= sizeof path)
        return ar_fail(e, 422, "invalid", "entry '%s': path too long", show);
    if (ar_mkdirs(dir, rel, 0) != 0)
        return ar_fail(e, 422, "invalid", "entry '%s': cannot create its directory (a file of "
                       "the same name?)", show);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno == EEXIST
                   ? ar_fail(e, 422, "duplicate", "entry '%s' appears twice", show)
                   : ar_fail(e, gsd_io_status(errno), gsd_io_code(errno),
                             "entry '%s': cannot create: %s", show, strerror(errno));
    char buf[65536];
    for (;;) {
        la_ssize_t n = archive_read_data(a, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            close(fd);
            return ar_fail(e, 400, "bad_format", "entry '%s': %s", show, ar_why(a));
        }
        *total += (size_t)n;
        if (*total > max_bytes) {
            close(fd);
            return ar_fail(e, 413, "too_large", "entry '%s': the unpacked folder exceeds the "
                           "limit of %zu bytes", show, max_bytes);
        }
        for (const char *p = buf; n > 0;) {
            ssize_t k = write(fd, p, (size_t)n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                close(fd);
                return ar_fail(e, gsd_io_status(errno), gsd_io_code(errno),
                               "entry '%s': cannot write: %s", show, strerror(errno));
            }
            p += k;
            n -= k;
        }
    }
    if (close(fd) != 0)
        return ar_fail(e, gsd_io_status(errno), gsd_io_code(errno),
                       "entry '%s': cannot write: %s", show, strerror(errno));
    return 0;
}

int gsd_archive_extract(const char *path, const char *dir, size_t max_entries, size_t max_bytes,
                        gsd_archive_error *e)
{
    struct archive *a = archive_read_new();
    if (!a)
        return ar_fail(e, 500, "out_of_memory", "cannot start reading the archive");
    archive_read_support_format_tar(a);
    archive_read_support_format_zip(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_filter_bzip2(a);
    archive_read_support_filter_xz(a);
    int rc = 0;
    if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
        rc = ar_fail(e, 400, "bad_format", "not a readable .tar or .zip archive: %s",
                     ar_why(a));
        goto done;
    }
    size_t count = 0, total = 0;
    struct archive_entry *ent;
    char show[160] = ""; /* the entry being unpacked, or the last one */
    for (;;) {
        int r = archive_read_next_header(a, &ent);
        if (r == ARCHIVE_EOF)
            break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
            if (count)
                rc = ar_fail(e, 400, "bad_format", "damaged archive after entry %zu ('%s'): %s",
                             count, show, ar_why(a));
            else
                rc = ar_fail(e, 400, "bad_format", "not a readable archive: %s",
                             ar_why(a));
            goto done;
        }
        const char *name = archive_entry_pathname(ent);
        ar_show(name, show, sizeof show);
        while (name && name[0] == '.' && name[1] == '/')
            name += 2; /* "./lap.json" */
        if (name && (!strcmp(name, ".") || !*name) &&
            archive_entry_filetype(ent) == AE_IFDIR)
            continue; /* the archive's own "./" */
        if (++count > max_entries) {
            rc = ar_fail(e, 413, "too_large", "entry '%s': more than %zu entries (gapsimd "
                         "--max-archive-entries)", show, max_entries);
            goto done;
        }
        int depth;
        const char *why = ar_check_name(name, &depth);
        if (why) {
            rc = ar_fail(e, 422, "invalid", "entry '%s': %s", show, why);
            goto done;
        }
        if (depth > GSD_ARCHIVE_MAX_DEPTH) {
            rc = ar_fail(e, 422, "invalid", "entry '%s': more than %d directory levels", show,
                         GSD_ARCHIVE_MAX_DEPTH);
            goto done;
        }
        mode_t type = archive_entry_filetype(ent);
        if (archive_entry_hardlink(ent) || type == AE_IFLNK) {
            rc = ar_fail(e, 422, "invalid", "entry '%s': links are not accepted (upload the "
                         "files themselves)", show);
            goto done;
        }
        if (type == AE_IFDIR) {
            if (ar_mkdirs(dir, name, 1) != 0) {
                rc = ar_fail(e, 422, "invalid", "entry '%s': cannot create the directory", show);
                goto done;
            }
            continue;
        }
        if (type != AE_IFREG) {
            rc = ar_fail(e, 422, "invalid", "entry '%s': only regular files and directories are "
                         "accepted", show);
            goto done;
        }
        if (archive_entry_size_is_set(ent) && archive_entry_size(ent) >= 0 &&
            (size_t)archive_entry_size(ent) > max_bytes - (total < max_bytes ? total : max_bytes)) {
            rc = ar_fail(e, 413, "too_large", "entry '%s': %lld bytes exceed the unpacked limit "
                         "of %zu bytes", show, (long long)archive_entry_size(ent), max_bytes);
            goto done;
        }
        if ((rc = ar_write_file(a, dir, name, show, &total, max_bytes, e)) != 0)
            goto done;
    }
    if (count == 0)
        rc = ar_fail(e, 422, "invalid", "the archive is empty");
done:
    archive_read_free(a);
    return rc;
}

void gsd_archive_root(const char *dir, char *out, size_t cap)
{
    snprintf(out, cap, "%s", dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char only[256] = "";
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (++n == 1)
            snprintf(only, sizeof only, "%s", de->d_name);
    }
    closedir(d);
    char sub[PATH_MAX];
    struct stat st;
    int w = snprintf(sub, sizeof sub, "%s/%s", dir, only);
    if (n == 1 && w > 0 && (size_t)w < sizeof sub && lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(out, cap, "%s", sub);
}
