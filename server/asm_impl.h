/*
 * asm_impl.h -- the fields of an assembly in memory, private to registry.c
 * (the map and reference counts) and assembly.c (loading, precomputing,
 * saving). Everyone else uses the accessors of registry.h.
 */
#ifndef GSD_ASM_IMPL_H
#define GSD_ASM_IMPL_H

#include <stdatomic.h>

#include "fcache.h"
#include "registry.h"

enum { GSD_STEP_TODO = 0, GSD_STEP_RUNNING, GSD_STEP_DONE, GSD_STEP_FAILED };

/* A step that completes a precomputation after "ready" (L_Q, the sparse
 * parts' factors): run by the first thread that needs it, the others wait
 * for it (gsd_asm_need_lq, gsd_asm_need; assembly.c's run_step). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* state changed */
    int state;         /* GSD_STEP_*, under mu */
    gs_error err;      /* why it failed (GSD_STEP_FAILED) */
} gsd_step;

struct gsd_asm {
    char id[GSD_ID_LEN];
    char hash[40];             /* content hash (set when loaded / created) */
    pthread_mutex_t mu;        /* serializes loading and installing */
    gsd_step lq;               /* L_Q of a deferred precomputation (gsd_asm_need_lq) */
    gsd_step parts;            /* factors of a loaded one's sparse parts (gsd_asm_need) */
    gsd_step dense;            /* its released dense blocks read again (gsd_asm_need) */
    gs_model *mdl;             /* NULL until loaded */
    gs_precomp *pc;            /* NULL until ready */
    atomic_int stage;          /* the precomputation's stage (gs_precomp_stage) */
    _Atomic double pre_t0;     /* when the precomputation began (0: queued); atomic, so
                                  that an answer about it never waits for the entry lock */
    gs_solver **solvers;       /* n_workers slots */
    gs_fcache *fcache;         /* shared by the solvers (NULL: none); made with the first */
    size_t fcache_budget;      /* its bytes (the registry's) */
    int n_workers;
    int saved;                 /* entry lock: factors.bin holds pc (a reload is a load) */
    int refs;                  /* registry lock */
    int dropped;               /* registry lock */
    unsigned long used;        /* registry lock: the registry's clock at the last hold */
    size_t bytes;              /* registry lock: memory at the last count (count_locked) */
    int movable;               /* registry lock: may be unloaded, at the last count */
    int skeleton;              /* made by an unload: the model alone (registry.c) */
    struct gsd_asm *heir;      /* registry lock: the skeleton holding this unloaded
                                  entry's model, held until this entry is freed */
    struct gsd_asm *next;
};

#endif
