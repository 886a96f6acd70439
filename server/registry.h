/*
 * registry.h -- assemblies in memory: model, precomputation, per-worker solvers.
 *
 * Owns: the map id -> gsd_asm with reference counts. An entry exists while
 * someone holds it (a request, a task) or while its model or factors are
 * loaded (an entry left empty by its last holder is freed then); it
 * is freed when it is dropped (DELETE) and the last holder releases it, or
 * unloaded when the loaded assemblies hold more than the memory budget:
 * then, as a holder releases an entry, idle entries (no holder) whose
 * factors are saved go, least recently used first, never the entry just
 * released. An unloaded entry whose model holds no stiffness (its dense
 * blocks released, no sparse part) is replaced by a skeleton entry with
 * that model alone (a few hundred KB), which a later unload removes
 * without a report. Loading is lazy: gsd_asm_ensure (assembly.c) reads the
 * model (unless a skeleton has it) and the saved factors on first use after
 * a restart or an unload, so an unloaded assembly answers the same, later.
 * Each worker creates its own gs_solver on an entry (slot = worker index),
 * so solves never share a workspace. Lock order: registry lock, then entry
 * lock.
 */
#ifndef GSD_REGISTRY_H
#define GSD_REGISTRY_H

#include <pthread.h>

#include "ids.h"
#include "model.h"
#include "precompute.h"
#include "fcache.h"
#include "solver.h"

/* An assembly in memory; its fields are private to registry.c and
 * assembly.c (asm_impl.h). The model and the precomputation, once set, stay
 * until the entry is freed: a holder that saw them set may use them without
 * the entry lock. */
typedef struct gsd_asm gsd_asm;

typedef struct gsd_registry gsd_registry;

/* fcache_budget: bytes of each ready assembly's factor cache, shared by its
 * workers' solvers (fcache.h; 0: none); loaded_budget: bytes the loaded
 * assemblies may hold before idle ones are unloaded (0: no limit). */
gsd_registry *gsd_registry_new(int n_workers, size_t fcache_budget, size_t loaded_budget);
/* Called (outside the registry lock) for each entry unloaded for the
 * budget, with its bytes and the loaded bytes left. */
typedef void (*gsd_unload_fn)(void *ctx, const char *id, size_t bytes, size_t left,
                              size_t budget);
void gsd_registry_on_unload(gsd_registry *reg, gsd_unload_fn fn, void *ctx);
void gsd_registry_free(gsd_registry *reg);
/* Get (creating an empty entry if needed) and hold; NULL if out of memory. */
gsd_asm *gsd_registry_acquire(gsd_registry *reg, const char *id);
void gsd_registry_release(gsd_registry *reg, gsd_asm *a);
/* Forget the entry (after DELETE): freed when the last holder releases it. */
void gsd_registry_drop(gsd_registry *reg, const char *id);
/* The factor caches' counters: hits and misses since the start (freed
 * entries' included), entries, bytes and budget of the entries in memory. */
void gsd_registry_fcache_stats(gsd_registry *reg, gs_fcache_stats *sum);
/* Entries in memory: held, or holding a model (a precomputation to come)
 * or factors. */
int gsd_registry_entries(gsd_registry *reg);
/* Entries with a loaded precomputation. */
int gsd_registry_loaded(gsd_registry *reg);
/* Bytes the entries held at the last count (an entry being loaded counts
 * from its first release, a dropped one no more from its drop) and the
 * entries unloaded for the budget so far. */
void gsd_registry_memory(gsd_registry *reg, size_t *bytes, long *unloaded);

/* The model (NULL until loaded), the precomputation (NULL until ready) and
 * the content hash of an entry. */
const gs_model *gsd_asm_mdl(const gsd_asm *a);
const gs_precomp *gsd_asm_pc(const gsd_asm *a);
const char *gsd_asm_hash(const gsd_asm *a);
/* Without waiting: 1 if the entry lock was free and the entry's model is
 * there (with its precomputation, or kept by an unloaded assembly whose
 * model holds no stiffness: enough for a solve's cache key, gsd_exec_key),
 * the lock then held until gsd_asm_unlock; else 0 and no lock held (loading
 * in progress: the caller takes the slow path). */
int gsd_asm_trylock_model(gsd_asm *a);
void gsd_asm_unlock(gsd_asm *a);

/* Record that factors.bin holds a's precomputation: the entry may be
 * unloaded for the memory budget (a reload is then a load, not a build). */
void gsd_asm_set_saved(gsd_asm *a);
/* Install a loaded model and precomputation (takes ownership). */
void gsd_asm_install(gsd_asm *a, gs_model *mdl, gs_precomp *pc);
/* This worker's solver on a ready entry (created on first use, sharing the
 * entry's factor cache). */
gs_solver *gsd_asm_solver(gsd_asm *a, int worker, gs_error *err);

#endif
