/*
 * fuzz_memlimit.c -- fuzz target for the cgroup memory limit reader
 * (core/memlimit.h gs_memlimit_cgroup_at: the /proc/self/cgroup lines, the
 * walk up the hierarchy, memory.max and memory.limit_in_bytes files, the
 * controller lists). The input is a fake tree: the /proc/self/cgroup text,
 * then records "\n@PATH\nCONTENT" (PATH under the tree: v2/... the cgroup
 * v2 mount, v1/... v1's memory controller; letters, digits, ".-_" and '/'
 * only, no "." or ".." component, at most 8 deep; other records are
 * skipped). The tree is made under $GS_TEST_TMP (or /tmp) in a directory
 * named by the input's hash and removed after.
 * Properties:
 *   - no crash; no limit is 2^60 or more;
 *   - the limit of both mounts is the smaller non-zero one of the v2 mount
 *     alone and the v1 mount alone, *v1 telling which (when they differ);
 *     *v1 is 0 without a v1 mount, and nothing is found without mounts;
 *   - when no line names a ".." component (the walk then stays in the
 *     tree), a v2 limit is the number of some memory.max record under v2/,
 *     a v1 limit that of some memory.limit_in_bytes record under v1/;
 *   - a limit at a mount's top binds every cgroup of that mount: with a
 *     valid v2/memory.max of V and a short "0::/..." line the v2 limit is in
 *     (0, V]; the same for v1 with a line whose controllers name memory;
 *   - reading is deterministic.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_fuzz.h"
#include "memlimit.h"

const char *const gs_fuzz_target = "memlimit";
const char *const gs_fuzz_dict[] = {
    "\n@v2/", "\n@v1/", "memory.max", "memory.limit_in_bytes", "0::/", "0::", "4:cpu,memory:/",
    ":memory:/", "memory", ",", ":", "/", "/..", "max", "9223372036854771712",
    "1152921504606846976", "1073741824", "0", "\n", "user.slice/", NULL};

#define FZ_MAX_RECORDS 16
#define FZ_LIMIT_NONE (1ULL << 60) /* memlimit.c: this large is no limit */

typedef struct {
    char path[256];
    const uint8_t *content;
    size_t len;
} fz_record;

/* PATH of a record, checked (see above); 1 if usable. */
static int good_path(const uint8_t *p, size_t n, char *out)
{
    if (n < 4 || n >= 200 || (memcmp(p, "v1/", 3) && memcmp(p, "v2/", 3)))
        return 0;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        const int c = p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == '/'))
            return 0;
        if (c == '/') {
            depth++;
            if (i + 1 == n || p[i + 1] == '/')
                return 0;
        }
        if (i == 0 || p[i - 1] == '/') { /* a component starts */
            size_t l = 0;
            while (i + l < n && p[i + l] != '/')
                l++;
            if ((l == 1 && c == '.') || (l == 2 && c == '.' && p[i + 1] == '.'))
                return 0;
        }
    }
    if (depth > 8)
        return 0;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static void rm_tree(const char *root)
{
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p of path's parent directories (path relative to root). */
static int make_parents(const char *root, const char *rel)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s/%s", root, rel) >= (int)sizeof buf)
        return -1;
    for (char *s = buf + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return 0;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    const int ok = fwrite(data, 1, n, fp) == n;
    return fclose(fp) == 0 && ok ? 0 : -1;
}

/* The limit read_limit (memlimit.c) takes from a file of these bytes: the
 * first line a whole decimal number in (0, 2^60); 0 otherwise. Used for the
 * bound at a mount's top only. */
static unsigned long long file_limit(const uint8_t *c, size_t n)
{
    unsigned long long v = 0;
    size_t i = 0;
    if (n == 0 || c[0] < '0' || c[0] > '9')
        return 0;
    for (; i < n && c[i] >= '0' && c[i] <= '9'; i++) {
        if (i >= 20) /* read_limit reads 63 bytes: no long runs of zeros */
            return 0;
        if (v > (FZ_LIMIT_NONE - 9) / 10)
            return 0;
        v = v * 10 + (unsigned)(c[i] - '0');
    }
    if (i < n && c[i] != '\n')
        return 0;
    return v < FZ_LIMIT_NONE ? v : 0;
}

/* Whether a limit could come from a record named `name` under `mount`. */
static int from_record(const fz_record *r, int nr, const char *mount, const char *name,
                       unsigned long long v)
{
    for (int i = 0; i < nr; i++) {
        const char *base = strrchr(r[i].path, '/') + 1;
        if (strncmp(r[i].path, mount, 3) || strcmp(base, name))
            continue;
        char buf[64] = "";
        memcpy(buf, r[i].content, r[i].len < 63 ? r[i].len : 63);
        if (strtoull(buf, NULL, 10) == v)
            return 1;
    }
    return 0;
}

/* Lines of the cgroup text (no NUL in it, each under 1024 bytes) that reach
 * the top of the v2 mount (want_v1 0) or of v1's memory controller (1). */
static int line_reaches_top(const uint8_t *t, size_t n, int want_v1)
{
    if (memchr(t, '\0', n))
        return 0;
    for (size_t k = 0; k < n;) {
        const uint8_t *nl = memchr(t + k, '\n', n - k);
        const size_t end = nl ? (size_t)(nl - t) : n, len = end - k;
        const char *l = (const char *)t + k;
        const char *c1 = memchr(l, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(l + len - c1 - 1)) : NULL;
        if (len < 1024 && c2 && c2 + 1 < l + len && c2[1] == '/') {
            if (!want_v1 && c2 == c1 + 1 && len >= 2 && !memcmp(l, "0:", 2))
                return 1;
            if (want_v1) {
                for (const char *p = c1 + 1; p < c2;) {
                    const char *c = memchr(p, ',', (size_t)(c2 - p));
                    const char *e = c ? c : c2;
                    if (e - p == 6 && !memcmp(p, "memory", 6) &&
                        !(c2 == c1 + 1 && !memcmp(l, "0:", 2)))
                        return 1;
                    p = e + 1;
                }
            }
        }
        k = end + 1;
    }
    return 0;
}

static unsigned long long min_nz(unsigned long long a, unsigned long long b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    /* the cgroup text, then the records */
    fz_record rec[FZ_MAX_RECORDS];
    int nr = 0;
    size_t text_len = size;
    for (size_t k = 0; k + 1 < size; k++)
        if (data[k] == '\n' && data[k + 1] == '@') {
            text_len = k + 1;
            break;
        }
    for (size_t k = text_len; k < size && nr < FZ_MAX_RECORDS;) {
        /* data[k] == '@' */
        const uint8_t *nl = memchr(data + k, '\n', size - k);
        const size_t pe = nl ? (size_t)(nl - data) : size;
        const size_t cs = pe < size ? pe + 1 : size; /* the content starts */
        size_t ce = pe;                              /* and ends at the next "\n@" */
        while (ce + 1 < size && !(data[ce] == '\n' && data[ce + 1] == '@'))
            ce++;
        if (ce + 1 >= size)
            ce = size;
        fz_record *r = &rec[nr];
        if (good_path(data + k + 1, pe - k - 1, r->path)) {
            r->content = data + cs;
            r->len = ce > cs ? ce - cs : 0;
            nr++;
        }
        k = ce + 1; /* past the '\n' before the next '@' */
    }

    char root[512], self[600], v2[600], v1[600], path[1200];
    const char *dir = getenv("GS_TEST_TMP");
    snprintf(root, sizeof root, "%s/fuzz_memlimit_%08x", dir && *dir ? dir : "/tmp",
             (unsigned)gs_fuzz_hash(data, size));
    rm_tree(root);
    snprintf(self, sizeof self, "%s/cgroup", root);
    snprintf(v2, sizeof v2, "%s/v2", root);
    snprintf(v1, sizeof v1, "%s/v1", root);
    if (mkdir(root, 0755) || mkdir(v2, 0755) || mkdir(v1, 0755) ||
        write_file(self, data, text_len)) {
        rm_tree(root);
        return 0;
    }
    int written[FZ_MAX_RECORDS] = {0};
    for (int i = 0; i < nr; i++) {
        written[i] = snprintf(path, sizeof path, "%s/%s", root, rec[i].path) < (int)sizeof path &&
                     !make_parents(root, rec[i].path) &&
                     !write_file(path, rec[i].content, rec[i].len);
    }

    int f_both = -1, f_v2 = -1, f_v1 = -1, f_none = -1, f_again = -1;
    const unsigned long long both = gs_memlimit_cgroup_at(self, v2, v1, &f_both);
    const unsigned long long only2 = gs_memlimit_cgroup_at(self, v2, NULL, &f_v2);
    const unsigned long long only1 = gs_memlimit_cgroup_at(self, NULL, v1, &f_v1);
    GS_FUZZ_ASSERT(gs_memlimit_cgroup_at(self, NULL, NULL, &f_none) == 0 && f_none == 0);
    GS_FUZZ_ASSERT(gs_memlimit_cgroup_at(self, v2, v1, &f_again) == both && f_again == f_both);
    GS_FUZZ_ASSERT(gs_memlimit_cgroup_at(self, v2, v1, NULL) == both);
    GS_FUZZ_ASSERT(both < FZ_LIMIT_NONE && only2 < FZ_LIMIT_NONE && only1 < FZ_LIMIT_NONE);
    GS_FUZZ_ASSERT(f_v2 == 0 && f_v1 == (only1 != 0));
    GS_FUZZ_ASSERT(both == min_nz(only2, only1));
    GS_FUZZ_ASSERT(f_both == 0 || f_both == 1);
    if (f_both)
        GS_FUZZ_ASSERT(both == only1 && both != 0);
    if (only1 != only2)
        GS_FUZZ_ASSERT(f_both == (both != 0 && both == only1));

    const uint8_t *dots = data;
    int has_dots = 0;
    while (!has_dots && (dots = memchr(dots, '.', text_len - (size_t)(dots - data))) != NULL) {
        has_dots = dots + 1 < data + text_len && dots[1] == '.';
        dots++;
    }
    if (!has_dots) {
        GS_FUZZ_ASSERT(!only2 || from_record(rec, nr, "v2/", "memory.max", only2));
        GS_FUZZ_ASSERT(!only1 || from_record(rec, nr, "v1/", "memory.limit_in_bytes", only1));
    }
    for (int i = nr - 1; i >= 0; i--) { /* the last record of a path is the file */
        int later = 0;
        for (int j = i + 1; j < nr; j++)
            later |= written[j] && !strcmp(rec[j].path, rec[i].path);
        if (!written[i] || later)
            continue;
        const unsigned long long top = file_limit(rec[i].content, rec[i].len);
        if (!top)
            continue;
        if (!strcmp(rec[i].path, "v2/memory.max") && line_reaches_top(data, text_len, 0))
            GS_FUZZ_ASSERT(only2 != 0 && only2 <= top);
        if (!strcmp(rec[i].path, "v1/memory.limit_in_bytes") &&
            line_reaches_top(data, text_len, 1))
            GS_FUZZ_ASSERT(only1 != 0 && only1 <= top);
    }
    rm_tree(root);
    return both != 0;
}
