/*
 * asm_impl.h -- the fields of an assembly in memory, private to registry.c
 * (the map and reference counts) and assembly.c (loading, precomputing,
 * saving). Everyone else uses the accessors of registry.h.
 */
#ifndef GSD_ASM_IMPL_H
#define GSD_ASM_IMPL_H

#include "fcache.h"
#include "registry.h"

enum { GSD_LQ_TODO = 0, GSD_LQ_RUNNING, GSD_LQ_DONE, GSD_LQ_FAILED };

struct gsd_asm {
    char id[GSD_ID_LEN];
    char hash[40];             /* content hash (set when loaded / created) */
    pthread_mutex_t mu;        /* serializes loading and installing */
    pthread_mutex_t lq_mu;     /* L_Q of a deferred precomputation (gsd_asm_need_lq): */
    pthread_cond_t lq_cv;      /* lq_state changed */
    int lq_state;              /* GSD_LQ_*, under lq_mu */
    gs_error lq_err;           /* why it failed (GSD_LQ_FAILED) */
    gs_model *mdl;             /* NULL until loaded */
    gs_precomp *pc;            /* NULL until ready */
    gs_solver **solvers;       /* n_workers slots */
    gs_fcache *fcache;         /* shared by the solvers (NULL: none); made with the first */
    size_t fcache_budget;      /* its bytes (the registry's) */
    int n_workers;
    int refs;                  /* registry lock */
    int dropped;               /* registry lock */
    struct gsd_asm *next;
};

#endif
