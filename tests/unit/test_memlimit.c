/*
 * test_memlimit.c -- the memory a process may use (core/memlimit.h): the
 * smallest of physical memory, RLIMIT_AS, RLIMIT_DATA and the cgroup's
 * limit; cgroup v2 (memory.max, "max", an ancestor's limit binding) and v1
 * (memory.limit_in_bytes, LONG_MAX as no limit, a controller list naming
 * memory) read from a fake /proc/self/cgroup and cgroup tree; the
 * process's own limits as getrlimit reports them.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_test.h"
#include "memlimit.h"

static void put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    GS_CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void mk(const char *root, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    GS_CHECK(mkdir(path, 0755) == 0);
}

static void fresh_root(char *root, size_t cap, const char *name)
{
    gs_test_tmp_path(root, cap, name);
    char cmd[1100];
    snprintf(cmd, cap + 20, "rm -rf '%s'", root);
    GS_CHECK(system(cmd) == 0);
    GS_CHECK(mkdir(root, 0755) == 0);
}

GS_TEST(memlimit_cgroup_v2_walks_up)
{
    char root[512], self[600], v2[600];
    fresh_root(root, sizeof root, "memlimit_v2");
    snprintf(self, sizeof self, "%s/cgroup", root);
    snprintf(v2, sizeof v2, "%s/cg", root);
    mk(root, "cg");
    mk(root, "cg/user.slice");
    mk(root, "cg/user.slice/job");
    put(root, "cgroup", "0::/user.slice/job\n");
    put(root, "cg/user.slice/job/memory.max", "max\n");
    int v1 = -1;
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 0); /* "max" */
    GS_CHECK_INT(v1, 0);
    /* the parent's limit binds the child */
    put(root, "cg/user.slice/memory.max", "1073741824\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 1073741824LL);
    /* the smaller of the two */
    put(root, "cg/user.slice/job/memory.max", "536870912\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 536870912LL);
    /* a namespaced container: "0::/" and its limit at the mount's top */
    put(root, "cgroup", "0::/\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 0);
    put(root, "cg/memory.max", "268435456\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 268435456LL);
    /* a path the mount does not hold: only what exists is read */
    put(root, "cgroup", "0::/elsewhere/x\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 268435456LL);
    /* garbage, no file */
    put(root, "cg/memory.max", "12abc\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 0);
    snprintf(self, sizeof self, "%s/none", root);
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, NULL, &v1), 0);
}

GS_TEST(memlimit_cgroup_v1)
{
    char root[512], self[600], v1root[600], v2[600];
    fresh_root(root, sizeof root, "memlimit_v1");
    snprintf(self, sizeof self, "%s/cgroup", root);
    snprintf(v1root, sizeof v1root, "%s/memory", root);
    snprintf(v2, sizeof v2, "%s/unified", root);
    mk(root, "memory");
    mk(root, "memory/docker");
    mk(root, "memory/docker/abc");
    mk(root, "unified");
    put(root, "cgroup", "12:pids:/docker/abc\n4:cpu,memory:/docker/abc\n0::/docker/abc\n");
    put(root, "memory/memory.limit_in_bytes", "9223372036854771712\n"); /* no limit */
    put(root, "memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
    int v1 = -1;
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, v1root, &v1), 0);
    put(root, "memory/docker/abc/memory.limit_in_bytes", "2147483648\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, v1root, &v1), 2147483648LL);
    GS_CHECK_INT(v1, 1);
    /* "memoryx" is not memory */
    put(root, "cgroup", "4:cpu,memoryx:/docker/abc\n");
    GS_CHECK_INT((long long)gs_memlimit_cgroup_at(self, v2, v1root, &v1), 0);
}

GS_TEST(memlimit_combine_takes_the_smallest)
{
    gs_memlimit m = {.phys = 16ULL << 30};
    gs_memlimit_combine(&m);
    GS_CHECK_INT((long long)m.bytes, 16LL << 30);
    GS_CHECK(strstr(m.source, "physical") != NULL);
    m.cgroup = 4ULL << 30;
    m.cgroup_v1 = 0;
    gs_memlimit_combine(&m);
    GS_CHECK_INT((long long)m.bytes, 4LL << 30);
    GS_CHECK(strstr(m.source, "memory.max") != NULL);
    m.as = 1ULL << 30;
    gs_memlimit_combine(&m);
    GS_CHECK_INT((long long)m.bytes, 1LL << 30);
    GS_CHECK(strstr(m.source, "RLIMIT_AS") != NULL);
    m.data = 512ULL << 20;
    gs_memlimit_combine(&m);
    GS_CHECK_INT((long long)m.bytes, 512LL << 20);
    GS_CHECK(strstr(m.source, "RLIMIT_DATA") != NULL);
    gs_memlimit none = {0};
    gs_memlimit_combine(&none);
    GS_CHECK_INT((long long)none.bytes, 0);
    GS_CHECK(none.source && !*none.source);
}

/* The process's own: the physical memory is there; the rlimits as
 * getrlimit says (a limit set for this test is not possible under the
 * sanitizers, whose shadow memory takes terabytes of address space). */
GS_TEST(memlimit_of_this_process)
{
    gs_memlimit m;
    gs_memlimit_get(&m);
    GS_CHECK(m.phys > (64ULL << 20));
    GS_CHECK(m.bytes > 0 && m.bytes <= m.phys);
    struct rlimit rl;
    GS_CHECK(getrlimit(RLIMIT_AS, &rl) == 0);
    if (rl.rlim_cur == RLIM_INFINITY)
        GS_CHECK_INT((long long)m.as, 0);
    else
        GS_CHECK_INT((long long)m.as, (long long)rl.rlim_cur);
    GS_CHECK(getrlimit(RLIMIT_DATA, &rl) == 0);
    if (rl.rlim_cur == RLIM_INFINITY)
        GS_CHECK_INT((long long)m.data, 0);
    else
        GS_CHECK_INT((long long)m.data, (long long)rl.rlim_cur);
}

GS_TEST_MAIN()
