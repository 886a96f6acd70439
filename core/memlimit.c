/*
 * memlimit.c -- how much memory this process may use (see memlimit.h).
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "memlimit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* cgroup v1 says "no limit" with a page-rounded LONG_MAX; anything this
 * large is no limit */
#define GS_MEMLIMIT_NONE (1ULL << 60)

/* The number in the small file at path ("max", absent, unreadable or not
 * a number: 0, no limit). */
static unsigned long long read_limit(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char buf[64] = "";
    const int got = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!got)
        return 0;
    char *end = NULL;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf || (*end && *end != '\n') || v == 0 || v >= GS_MEMLIMIT_NONE)
        return 0;
    return v;
}

static unsigned long long min_limit(unsigned long long a, unsigned long long b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

/* The smallest `file` limit from root/rel up to root (each ancestor's
 * limit binds its descendants). */
static unsigned long long walk_up(const char *root, const char *rel, const char *file)
{
    char dir[4096], path[4200];
    if (snprintf(dir, sizeof dir, "%s%s", root, rel) >= (int)sizeof dir)
        return 0;
    const size_t root_len = strlen(root);
    size_t len = strlen(dir);
    while (len > root_len && dir[len - 1] == '/') /* "/" -> the root itself */
        dir[--len] = '\0';
    unsigned long long best = 0;
    for (;;) {
        snprintf(path, sizeof path, "%s/%s", dir, file);
        best = min_limit(best, read_limit(path));
        char *slash = strrchr(dir, '/');
        if (len <= root_len || !slash || (size_t)(slash - dir) < root_len)
            break;
        *slash = '\0';
        len = strlen(dir);
    }
    return best;
}

/* 1 if the comma-separated controller list names "memory". */
static int names_memory(const char *list, size_t n)
{
    const char *p = list, *end = list + n;
    while (p < end) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        const size_t l = (size_t)((c ? c : end) - p);
        if (l == 6 && !memcmp(p, "memory", 6))
            return 1;
        p += l + 1;
    }
    return 0;
}

unsigned long long gs_memlimit_cgroup_at(const char *self_cgroup, const char *v2_root,
                                         const char *v1_root, int *v1)
{
    if (v1)
        *v1 = 0;
    FILE *f = fopen(self_cgroup, "r");
    if (!f)
        return 0;
    unsigned long long best = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        /* "hierarchy-id:controllers:path" */
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        const char *rel = c2 + 1;
        unsigned long long v = 0;
        int is_v1 = 0;
        if (c2 == c1 + 1 && !strncmp(line, "0:", 2)) { /* v2: "0::/path" */
            if (v2_root)
                v = walk_up(v2_root, rel, "memory.max");
        } else if (v1_root && names_memory(c1 + 1, (size_t)(c2 - c1 - 1))) {
            v = walk_up(v1_root, rel, "memory.limit_in_bytes");
            is_v1 = 1;
        }
        if (v && (!best || v < best)) {
            best = v;
            if (v1)
                *v1 = is_v1;
        }
    }
    fclose(f);
    return best;
}

void gs_memlimit_combine(gs_memlimit *m)
{
    m->bytes = 0;
    m->source = "";
    const struct {
        unsigned long long v;
        const char *name;
    } parts[] = {
        {m->phys, "the physical memory"},
        {m->cgroup, m->cgroup_v1 ? "the cgroup's memory.limit_in_bytes"
                                 : "the cgroup's memory.max"},
        {m->data, "RLIMIT_DATA (ulimit -d)"},
        {m->as, "RLIMIT_AS (ulimit -v)"},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].v && (!m->bytes || parts[i].v <= m->bytes)) {
            m->bytes = parts[i].v;
            m->source = parts[i].name;
        }
}

static unsigned long long soft_rlimit(int which)
{
    struct rlimit rl;
    if (getrlimit(which, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    return (unsigned long long)rl.rlim_cur;
}

void gs_memlimit_get(gs_memlimit *out)
{
    memset(out, 0, sizeof *out);
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        out->phys = (unsigned long long)pages * (unsigned long long)page;
    out->as = soft_rlimit(RLIMIT_AS);
    out->data = soft_rlimit(RLIMIT_DATA);
    /* v2 at /sys/fs/cgroup (unified) or /sys/fs/cgroup/unified (hybrid) */
    const char *v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0
                         ? "/sys/fs/cgroup"
                         : "/sys/fs/cgroup/unified";
    out->cgroup = gs_memlimit_cgroup_at("/proc/self/cgroup", v2, "/sys/fs/cgroup/memory",
                                        &out->cgroup_v1);
    gs_memlimit_combine(out);
}

int gs_memlimit_can_map(unsigned long long bytes)
{
    if (bytes == 0)
        return 1;
    if (bytes > (unsigned long long)SIZE_MAX)
        return 0;
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    munmap(p, (size_t)bytes);
    return 1;
}
