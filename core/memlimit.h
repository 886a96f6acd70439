/*
 * memlimit.h -- how much memory this process may use.
 *
 * Owns: the smallest of the limits a process meets on Linux: the physical
 * memory (_SC_PHYS_PAGES), the soft RLIMIT_AS (`ulimit -v`: address space)
 * and RLIMIT_DATA (`ulimit -d`), the memory limit of the process's cgroup
 * and of each of its ancestors (cgroup v2 memory.max, under /sys/fs/cgroup
 * or /sys/fs/cgroup/unified; cgroup v1 memory.limit_in_bytes, under
 * /sys/fs/cgroup/memory), the cgroup named by /proc/self/cgroup (in a
 * container with its own cgroup namespace, "/" at the mount: its limit is
 * at the mount's top, read too). A limit that is absent, unreadable or
 * "max" is no limit.
 * Why: a budget derived from the physical memory alone ignores `ulimit -v`
 * and a container's limit; under `ulimit -v`, OpenBLAS spins forever in
 * blas_memory_alloc when gapsim's own allocations left it no address space,
 * and in a cgroup the OOM killer ends the process: a model too large is to
 * be refused before the precomputation starts, naming the limit.
 * Cost: a few small file reads (O(depth of the cgroup)); call it once.
 */
#ifndef GS_MEMLIMIT_H
#define GS_MEMLIMIT_H

/* Each source in bytes, 0 when it sets no limit (or is unknown). */
typedef struct {
    unsigned long long phys;   /* physical memory */
    unsigned long long as;     /* soft RLIMIT_AS */
    unsigned long long data;   /* soft RLIMIT_DATA */
    unsigned long long cgroup; /* smallest memory limit of the cgroup and its ancestors */
    int cgroup_v1;             /* cgroup: from v1's memory.limit_in_bytes (else v2's memory.max) */
    unsigned long long bytes;  /* the smallest of the above (0: none known) */
    const char *source;        /* which one it is, for messages ("RLIMIT_AS (ulimit -v)", ...);
                                  "" when none */
} gs_memlimit;

/* The limits of this process. */
void gs_memlimit_get(gs_memlimit *out);

/* The cgroup part alone, from explicit places (tests): self_cgroup is the
 * /proc/self/cgroup text file, v2_root and v1_root the mounts of the
 * cgroup v2 hierarchy and of v1's memory controller (either may be NULL:
 * not looked at). 0 if no limit; *v1 (may be NULL) = 1 if the limit is
 * v1's. */
unsigned long long gs_memlimit_cgroup_at(const char *self_cgroup, const char *v2_root,
                                         const char *v1_root, int *v1);

/* Fill m->bytes and m->source from m's parts. */
void gs_memlimit_combine(gs_memlimit *m);

/* 1 if `bytes` more of address space can be mapped now (a private
 * writable mapping, MAP_NORESERVE, unmapped at once: it counts against
 * RLIMIT_AS and RLIMIT_DATA with what the process already maps, and
 * touches no page, so no cgroup charge), else 0. What a run will map
 * beside what it holds: OpenBLAS reserves a buffer of ~128 MiB per thread
 * that calls it (blas_memory_alloc), which spins forever when the mapping
 * fails. O(1). */
int gs_memlimit_can_map(unsigned long long bytes);
/* Address space to allow per OpenBLAS thread: its buffer (128 MiB on
 * x86-64), the thread's stack and malloc arena. */
#define GS_MEMLIMIT_BLAS_THREAD_BYTES (192ULL << 20)

#endif
