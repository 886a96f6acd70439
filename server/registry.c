/*
 * registry.c -- reference-counted assemblies in memory (see registry.h).
 * Lookups are a linear scan: tens of assemblies, O(count) string compares.
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
};

gsd_registry *gsd_registry_new(int n_workers, size_t fcache_budget)
{
    gsd_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return NULL;
    pthread_mutex_init(&reg->mu, NULL);
    reg->n_workers = n_workers;
    reg->fcache_budget = fcache_budget;
    return reg;
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
    gsd_step *steps[] = {&a->lq, &a->parts};
    for (int i = 0; i < 2; i++) {
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

gsd_asm *gsd_registry_acquire(gsd_registry *reg, const char *id)
{
    pthread_mutex_lock(&reg->mu);
    gsd_asm *a = reg->head;
    while (a && strcmp(a->id, id))
        a = a->next;
    if (!a) {
        a = calloc(1, sizeof *a);
        gs_solver **sv = calloc((size_t)reg->n_workers, sizeof *sv);
        if (!a || !sv) {
            free(a);
            free(sv);
            pthread_mutex_unlock(&reg->mu);
            return NULL;
        }
        snprintf(a->id, sizeof a->id, "%s", id);
        pthread_mutex_init(&a->mu, NULL);
        gsd_step *steps[] = {&a->lq, &a->parts};
        for (int i = 0; i < 2; i++) {
            pthread_mutex_init(&steps[i]->mu, NULL);
            pthread_cond_init(&steps[i]->cv, NULL);
        }
        a->solvers = sv;
        a->n_workers = reg->n_workers;
        a->fcache_budget = reg->fcache_budget;
        a->next = reg->head;
        reg->head = a;
    }
    a->refs++;
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

void gsd_registry_release(gsd_registry *reg, gsd_asm *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&reg->mu);
    int free_it = --a->refs == 0 && a->dropped;
    if (free_it)
        retire_locked(reg, a);
    pthread_mutex_unlock(&reg->mu);
    if (free_it)
        asm_free(a);
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
    }
    pthread_mutex_unlock(&reg->mu);
    if (free_it)
        asm_free(a);
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

int gsd_asm_trylock_ready(gsd_asm *a)
{
    if (pthread_mutex_trylock(&a->mu) != 0)
        return 0;
    if (a->mdl && a->pc)
        return 1;
    pthread_mutex_unlock(&a->mu);
    return 0;
}

void gsd_asm_unlock(gsd_asm *a)
{
    pthread_mutex_unlock(&a->mu);
}
