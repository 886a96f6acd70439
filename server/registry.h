/*
 * registry.h -- assemblies in memory: model, precomputation, per-worker solvers.
 *
 * Owns: the map id -> gsd_asm with reference counts. An entry exists while
 * someone holds it (a request, a task) or while its factors are loaded; it
 * is freed when it is dropped (DELETE) and the last holder releases it.
 * Loading is lazy: gsd_asm_ensure (assembly.c) reads the model and the saved
 * factors on first use after a restart. Each worker creates its own
 * gs_solver on an entry (slot = worker index), so solves never share a
 * workspace. Lock order: registry lock, then entry lock.
 */
#ifndef GSD_REGISTRY_H
#define GSD_REGISTRY_H

#include <pthread.h>

#include "ids.h"
#include "model.h"
#include "precompute.h"
#include "solver.h"

typedef struct gsd_asm {
    char id[GSD_ID_LEN];
    char hash[40];             /* content hash (set when loaded / created) */
    pthread_mutex_t mu;        /* serializes loading and installing */
    gs_model *mdl;             /* NULL until loaded */
    gs_precomp *pc;            /* NULL until ready */
    gs_solver **solvers;       /* n_workers slots */
    int n_workers;
    int refs;                  /* registry lock */
    int dropped;               /* registry lock */
    struct gsd_asm *next;
} gsd_asm;

typedef struct gsd_registry gsd_registry;

gsd_registry *gsd_registry_new(int n_workers);
void gsd_registry_free(gsd_registry *reg);
/* Get (creating an empty entry if needed) and hold; NULL if out of memory. */
gsd_asm *gsd_registry_acquire(gsd_registry *reg, const char *id);
void gsd_registry_release(gsd_registry *reg, gsd_asm *a);
/* Forget the entry (after DELETE): freed when the last holder releases it. */
void gsd_registry_drop(gsd_registry *reg, const char *id);
/* Entries with a loaded precomputation. */
int gsd_registry_loaded(gsd_registry *reg);

/* Install a loaded model and precomputation (takes ownership). */
void gsd_asm_install(gsd_asm *a, gs_model *mdl, gs_precomp *pc);
/* This worker's solver on a ready entry (created on first use). */
gs_solver *gsd_asm_solver(gsd_asm *a, int worker, gs_error *err);

#endif
