/*
 * registry.c -- reference-counted assemblies in memory (see registry.h).
 * Lookups are a linear scan: tens of assemblies, O(count) string compares;
 * so is the memory count after each last release under a budget (one
 * trylock and O(n_parts) per entry).
 */
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_impl.h"

struct gsd_registry {
    pthread_mutex_t mu;
    gsd_asm *head;
    int n_workers;
    size_t fcache_budget;
    long fcache_hits, fcache_misses; /* of the caches of freed entries */
    size_t loaded_budget;            /* 0: no limit */
    size_t loaded_bytes;             /* at the last count */
    long unloaded;                   /* entries unloaded for the budget */
    unsigned long clock;             /* ticks at every hold: least recently used */
    gsd_unload_fn on_unload;
    void *on_unload_ctx;
};

gsd_registry *gsd_registry_new(int n_workers, size_t fcache_budget, size_t loaded_budget)
{
    gsd_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return NULL;
    pthread_mutex_init(&reg->mu, NULL);
    reg->n_workers = n_workers;
    reg->fcache_budget = fcache_budget;
    reg->loaded_budget = loaded_budget;
    return reg;
}

void gsd_registry_on_unload(gsd_registry *reg, gsd_unload_fn fn, void *ctx)
{
    pthread_mutex_lock(&reg->mu);
    reg->on_unload = fn;
    reg->on_unload_ctx = ctx;
    pthread_mutex_unlock(&reg->mu);
}

static void asm_free(gsd_asm *a)
{
    for (int i = 0; i < a->n_workers; i++)
        gs_solver_free(a->solvers[i]);
    free(a->solvers);
    gs_fcache_free(a->fcache);
    gs_precomp_free(a->pc);
    gs_model_free(a->mdl);
    pthread_mutex_destroy(&a->mu);
    gsd_step *steps[] = {&a->lq, &a->parts, &a->dense};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        pthread_cond_destroy(&steps[i]->cv);
        pthread_mutex_destroy(&steps[i]->mu);
    }
    free(a);
}

void gsd_registry_free(gsd_registry *reg)
{
    if (!reg)
        return;
    gsd_asm *a = reg->head;
    while (a) {
        gsd_asm *next = a->next;
        asm_free(a);
        a = next;
    }
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

/* A new empty entry (not listed), or NULL without memory. */
static gsd_asm *entry_new(const gsd_registry *reg, const char *id)
{
    gsd_asm *a = calloc(1, sizeof *a);
    gs_solver **sv = calloc((size_t)reg->n_workers, sizeof *sv);
    if (!a || !sv) {
        free(a);
        free(sv);
        return NULL;
    }
    snprintf(a->id, sizeof a->id, "%s", id);
    pthread_mutex_init(&a->mu, NULL);
    gsd_step *steps[] = {&a->lq, &a->parts, &a->dense};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        pthread_mutex_init(&steps[i]->mu, NULL);
        pthread_cond_init(&steps[i]->cv, NULL);
    }
    a->solvers = sv;
    a->n_workers = reg->n_workers;
    a->fcache_budget = reg->fcache_budget;
    return a;
}

gsd_asm *gsd_registry_acquire(gsd_registry *reg, const char *id)
{
    pthread_mutex_lock(&reg->mu);
    gsd_asm *a = reg->head;
    while (a && strcmp(a->id, id))
        a = a->next;
    if (!a) {
        if (!(a = entry_new(reg, id))) {
            pthread_mutex_unlock(&reg->mu);
            return NULL;
        }
        a->next = reg->head;
        reg->head = a;
    }
    a->refs++;
    a->used = ++reg->clock;
    pthread_mutex_unlock(&reg->mu);
    return a;
}

/* Add the counters of the entry's factor cache, if it has one (set once,
 * under a->mu, by the first solver), to sum. */
static void add_fcache_stats(gsd_asm *a, gs_fcache_stats *sum)
{
    gs_fcache *fc = __atomic_load_n(&a->fcache, __ATOMIC_ACQUIRE);
    if (!fc)
        return;
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    sum->hits += st.hits;
    sum->misses += st.misses;
    sum->entries += st.entries;
    sum->bytes += st.bytes;
    sum->budget += st.budget;
}

/* Keep the counts of an entry about to be freed in the totals, so that the
 * counters of /metrics never go back. Caller holds reg->mu. */
static void retire_locked(gsd_registry *reg, gsd_asm *a)
{
    gs_fcache_stats st = {0};
    add_fcache_stats(a, &st);
    reg->fcache_hits += st.hits;
    reg->fcache_misses += st.misses;
}

void gsd_registry_fcache_stats(gsd_registry *reg, gs_fcache_stats *sum)
{
    memset(sum, 0, sizeof *sum);
    pthread_mutex_lock(&reg->mu);
    sum->hits = reg->fcache_hits;
    sum->misses = reg->fcache_misses;
    for (gsd_asm *a = reg->head; a; a = a->next)
        add_fcache_stats(a, sum);
    pthread_mutex_unlock(&reg->mu);
}

/* Count an entry's memory now (model, precomputation, factor cache) into
 * a->bytes, and whether it may be unloaded (a->movable: nobody holds it and
 * a reload is cheap: its factors are saved, or it has none). An entry whose
 * lock another thread holds (loading) keeps its last count and stays.
 * Caller holds reg->mu. */
static void count_locked(gsd_asm *a)
{
    a->movable = 0;
    if (pthread_mutex_trylock(&a->mu) != 0)
        return;
    gs_fcache_stats fc = {0};
    add_fcache_stats(a, &fc);
    a->bytes = gs_model_bytes(a->mdl) + gs_precomp_bytes(a->pc) + fc.bytes;
    a->movable = a->refs == 0 && !a->dropped && (!a->pc || a->saved);
    pthread_mutex_unlock(&a->mu);
}

/* An unloaded entry that is a skeleton never loaded again: its unload was
 * reported when its factors went. */
static int unreported(const gsd_asm *a)
{
    return a->skeleton && !a->pc;
}

/* The entry that replaces an unloaded one whose model keeps no stiffness
 * (its dense blocks released, no sparse part): that model (nodes, pairs,
 * fasteners: a few hundred KB) and its hash, so that the next use loads
 * only factors.bin (no model read, no hash) and the result cache answers
 * without a load (gsd_asm_trylock_model). NULL (the entry goes whole)
 * otherwise or without memory. Caller holds reg->mu; a is idle. O(n_parts). */
static gsd_asm *skeleton_locked(const gsd_registry *reg, gsd_asm *a)
{
    if (!a->pc || !a->mdl || !gs_model_dense_released(a->mdl) || gs_model_has_sparse(a->mdl))
        return NULL;
    gsd_asm *sk = entry_new(reg, a->id);
    if (!sk)
        return NULL;
    sk->mdl = a->mdl;
    a->mdl = NULL;
    memcpy(sk->hash, a->hash, sizeof sk->hash);
    sk->used = a->used;
    sk->bytes = gs_model_bytes(sk->mdl);
    sk->skeleton = 1;
    /* a's precomputation and solvers point to the model until a is freed
     * (outside the lock): the skeleton is held till then, so a DELETE or
     * an unload meanwhile cannot free the model under them */
    sk->refs = 1;
    a->heir = sk;
    return sk;
}

/* While the entries hold more than the budget, unlink movable ones, least
 * recently held first, never keep; returns them as a list (next) to free
 * outside the lock. An unloaded entry whose model keeps no stiffness is
 * replaced by its skeleton (skeleton_locked); a skeleton not used since
 * goes whole and silently (it was reported when its factors went).
 * Caller holds reg->mu. O(entries) per unloaded entry: tens of entries. */
static gsd_asm *unload_locked(gsd_registry *reg, const gsd_asm *keep)
{
    size_t total = 0;
    for (gsd_asm *a = reg->head; a; a = a->next) {
        count_locked(a);
        total += a->bytes;
    }
    gsd_asm *out = NULL;
    while (reg->loaded_budget && total > reg->loaded_budget) {
        gsd_asm **best = NULL;
        for (gsd_asm **pp = &reg->head; *pp; pp = &(*pp)->next)
            if ((*pp)->movable && (*pp)->bytes && *pp != keep &&
                (!best || (*pp)->used < (*best)->used))
                best = pp;
        if (!best)
            break;
        gsd_asm *a = *best;
        gsd_asm *sk = skeleton_locked(reg, a);
        if (sk) {
            sk->next = a->next;
            *best = sk;
            total += sk->bytes;
        } else {
            *best = a->next;
        }
        retire_locked(reg, a);
        total -= a->bytes;
        if (!unreported(a))
            reg->unloaded++;
        a->next = out;
        out = a;
    }
    reg->loaded_bytes = total;
    return out;
}

/* Unlink an entry nobody holds if nothing is loaded in it (its load failed,
 * or its assembly was deleted before it was loaded: a request that read the
 * row just before the DELETE): an empty entry is not kept. 1 if unlinked.
 * Caller holds reg->mu; a->refs == 0, a still listed. O(entries). */
static int unlink_empty_locked(gsd_registry *reg, gsd_asm *a)
{
    if (pthread_mutex_trylock(&a->mu) != 0)
        return 0;
    const int empty = !a->mdl && !a->pc;
    pthread_mutex_unlock(&a->mu);
    if (!empty)
        return 0;
    for (gsd_asm **pp = &reg->head; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            retire_locked(reg, a);
            return 1;
        }
    return 0;
}

/* The unloaded entry's hold on its skeleton (skeleton_locked) ends: the
 * skeleton is freed if it was dropped meanwhile, else it stays listed;
 * no unload pass here (the release that unloaded has made its own). */
static void release_heir(gsd_registry *reg, gsd_asm *sk)
{
    if (!sk)
        return;
    pthread_mutex_lock(&reg->mu);
    const int free_it = --sk->refs == 0 && sk->dropped;
    if (free_it)
        retire_locked(reg, sk);
    pthread_mutex_unlock(&reg->mu);
    if (free_it)
        asm_free(sk);
}

void gsd_registry_release(gsd_registry *reg, gsd_asm *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&reg->mu);
    int free_it = --a->refs == 0 && a->dropped;
    if (free_it)
        retire_locked(reg, a);
    gsd_asm *gone = NULL;
    if (a->refs == 0 && !free_it) {
        free_it = unlink_empty_locked(reg, a);
        gone = unload_locked(reg, a);
    }
    const size_t left = reg->loaded_bytes, budget = reg->loaded_budget;
    gsd_unload_fn fn = reg->on_unload;
    void *ctx = reg->on_unload_ctx;
    pthread_mutex_unlock(&reg->mu);
    if (free_it)
        asm_free(a);
    while (gone) {
        gsd_asm *next = gone->next, *heir = gone->heir;
        if (fn && !unreported(gone))
            fn(ctx, gone->id, gone->bytes, left, budget);
        asm_free(gone);
        release_heir(reg, heir); /* its model now used by nobody else */
        gone = next;
    }
}

void gsd_registry_drop(gsd_registry *reg, const char *id)
{
    pthread_mutex_lock(&reg->mu);
    gsd_asm **pp = &reg->head;
    while (*pp && strcmp((*pp)->id, id))
        pp = &(*pp)->next;
    gsd_asm *a = *pp;
    int free_it = 0;
    if (a) {
        *pp = a->next;
        a->dropped = 1;
        free_it = a->refs == 0;
        if (free_it)
            retire_locked(reg, a);
        reg->loaded_bytes = 0; /* the others at their last count */
        for (gsd_asm *o = reg->head; o; o = o->next)
            reg->loaded_bytes += o->bytes;
    }
    pthread_mutex_unlock(&reg->mu);
    if (free_it)
        asm_free(a);
}

int gsd_registry_entries(gsd_registry *reg)
{
    int n = 0;
    pthread_mutex_lock(&reg->mu);
    for (gsd_asm *a = reg->head; a; a = a->next)
        n++;
    pthread_mutex_unlock(&reg->mu);
    return n;
}

int gsd_registry_loaded(gsd_registry *reg)
{
    int n = 0;
    pthread_mutex_lock(&reg->mu);
    for (gsd_asm *a = reg->head; a; a = a->next) {
        /* an entry being loaded holds its lock for seconds: not loaded yet */
        if (pthread_mutex_trylock(&a->mu) == 0) {
            n += a->pc != NULL;
            pthread_mutex_unlock(&a->mu);
        }
    }
    pthread_mutex_unlock(&reg->mu);
    return n;
}

void gsd_registry_memory(gsd_registry *reg, size_t *bytes, long *unloaded)
{
    pthread_mutex_lock(&reg->mu);
    *bytes = reg->loaded_bytes;
    *unloaded = reg->unloaded;
    pthread_mutex_unlock(&reg->mu);
}

void gsd_asm_set_saved(gsd_asm *a)
{
    pthread_mutex_lock(&a->mu);
    a->saved = 1;
    pthread_mutex_unlock(&a->mu);
}

void gsd_asm_install(gsd_asm *a, gs_model *mdl, gs_precomp *pc)
{
    pthread_mutex_lock(&a->mu);
    if (a->mdl != mdl)
        gs_model_free(a->mdl);
    a->mdl = mdl;
    a->pc = pc;
    pthread_mutex_unlock(&a->mu);
}

gs_solver *gsd_asm_solver(gsd_asm *a, int worker, gs_error *err)
{
    if (worker < 0 || worker >= a->n_workers || !a->pc) {
        gs_errorf(err, GS_ERR_INVALID, "", "assembly %s is not ready", a->id);
        return NULL;
    }
    if (!a->solvers[worker]) {
        pthread_mutex_lock(&a->mu); /* the first worker makes the shared cache */
        if (!a->fcache && a->fcache_budget) /* NULL when out of memory: solves build */
            __atomic_store_n(&a->fcache, gs_fcache_new(a->fcache_budget), __ATOMIC_RELEASE);
        gs_fcache *fc = a->fcache;
        pthread_mutex_unlock(&a->mu);
        a->solvers[worker] = gs_solver_new(a->pc, err);
        if (a->solvers[worker])
            gs_solver_set_fcache(a->solvers[worker], fc);
    }
    return a->solvers[worker];
}

const gs_model *gsd_asm_mdl(const gsd_asm *a)
{
    return a->mdl;
}

const gs_precomp *gsd_asm_pc(const gsd_asm *a)
{
    return a->pc;
}

const char *gsd_asm_hash(const gsd_asm *a)
{
    return a->hash;
}

int gsd_asm_trylock_model(gsd_asm *a)
{
    if (pthread_mutex_trylock(&a->mu) != 0)
        return 0;
    if (a->mdl)
        return 1;
    pthread_mutex_unlock(&a->mu);
    return 0;
}

void gsd_asm_unlock(gsd_asm *a)
{
    pthread_mutex_unlock(&a->mu);
}
