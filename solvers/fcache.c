/*
 * fcache.c -- the shared factor cache (see fcache.h): an array of entries
 * scanned by hash, a use counter for least-recently-used eviction, one
 * mutex. Packing and unpacking happen outside the lock on put, inside it
 * on get (the entry may be evicted as soon as the lock is released).
 */
#include "fcache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct {
    uint64_t h;
    int k;
    int *list;         /* k */
    double *packed;    /* k (k + 1) / 2: the lower triangle by columns */
    size_t bytes;      /* what the entry counts against the budget */
    unsigned long long used; /* tick of the last get or put */
} entry;

struct gs_fcache {
    pthread_mutex_t mu;
    entry *e;
    long n, cap;
    size_t bytes, budget;
    unsigned long long tick;
    long hits, misses;
};

gs_fcache *gs_fcache_new(size_t budget)
{
    gs_fcache *fc = calloc(1, sizeof *fc);
    if (!fc)
        return NULL;
    if (pthread_mutex_init(&fc->mu, NULL) != 0) {
        free(fc);
        return NULL;
    }
    fc->budget = budget;
    return fc;
}

static void entry_free(entry *x)
{
    free(x->list);
    free(x->packed);
}

void gs_fcache_free(gs_fcache *fc)
{
    if (!fc)
        return;
    for (long i = 0; i < fc->n; i++)
        entry_free(&fc->e[i]);
    free(fc->e);
    pthread_mutex_destroy(&fc->mu);
    free(fc);
}

static uint64_t list_hash(const int *list, int k)
{
    return XXH3_64bits(list, (size_t)k * sizeof *list);
}

static size_t entry_bytes(int k)
{
    return sizeof(entry) + (size_t)k * sizeof(int) +
           (size_t)k * ((size_t)k + 1) / 2 * sizeof(double);
}

/* Index of the entry for list, or -1. Caller holds the lock. O(n + k). */
static long find(const gs_fcache *fc, uint64_t h, const int *list, int k)
{
    for (long i = 0; i < fc->n; i++) {
        const entry *x = &fc->e[i];
        if (x->h == h && x->k == k && !memcmp(x->list, list, (size_t)k * sizeof *list))
            return i;
    }
    return -1;
}

int gs_fcache_get(gs_fcache *fc, const int *list, int k, double *L, int ld)
{
    const uint64_t h = list_hash(list, k);
    pthread_mutex_lock(&fc->mu);
    long i = find(fc, h, list, k);
    if (i < 0) {
        fc->misses++;
        pthread_mutex_unlock(&fc->mu);
        return 0;
    }
    entry *x = &fc->e[i];
    x->used = ++fc->tick;
    fc->hits++;
    const double *src = x->packed;
    for (int b = 0; b < k; b++) { /* O(k^2) */
        memcpy(L + b + (size_t)b * ld, src, (size_t)(k - b) * sizeof *src);
        src += k - b;
    }
    pthread_mutex_unlock(&fc->mu);
    return 1;
}

/* Evict least recently used entries until need more bytes fit. Caller
 * holds the lock. O(n) per eviction. */
static void make_room(gs_fcache *fc, size_t need)
{
    while (fc->n > 0 && fc->bytes + need > fc->budget) {
        long old = 0;
        for (long i = 1; i < fc->n; i++)
            if (fc->e[i].used < fc->e[old].used)
                old = i;
        fc->bytes -= fc->e[old].bytes;
        entry_free(&fc->e[old]);
        fc->e[old] = fc->e[--fc->n];
    }
}

void gs_fcache_put(gs_fcache *fc, const int *list, int k, const double *L, int ld)
{
    entry x = {.h = list_hash(list, k), .k = k, .bytes = entry_bytes(k)};
    if (x.bytes > fc->budget)
        return;
    x.list = malloc((size_t)k * sizeof *x.list);
    x.packed = malloc((size_t)k * ((size_t)k + 1) / 2 * sizeof *x.packed);
    if (!x.list || !x.packed) {
        entry_free(&x);
        return;
    }
    memcpy(x.list, list, (size_t)k * sizeof *list);
    double *dst = x.packed;
    for (int b = 0; b < k; b++) { /* O(k^2), outside the lock */
        memcpy(dst, L + b + (size_t)b * ld, (size_t)(k - b) * sizeof *dst);
        dst += k - b;
    }
    pthread_mutex_lock(&fc->mu);
    if (find(fc, x.h, list, k) >= 0) { /* another thread stored it meanwhile */
        pthread_mutex_unlock(&fc->mu);
        entry_free(&x);
        return;
    }
    make_room(fc, x.bytes);
    if (fc->n == fc->cap) {
        long cap = fc->cap ? 2 * fc->cap : 16;
        entry *e = realloc(fc->e, (size_t)cap * sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&fc->mu);
            entry_free(&x);
            return;
        }
        fc->e = e;
        fc->cap = cap;
    }
    x.used = ++fc->tick;
    fc->e[fc->n++] = x;
    fc->bytes += x.bytes;
    pthread_mutex_unlock(&fc->mu);
}

void gs_fcache_get_stats(gs_fcache *fc, gs_fcache_stats *st)
{
    pthread_mutex_lock(&fc->mu);
    st->hits = fc->hits;
    st->misses = fc->misses;
    st->entries = fc->n;
    st->bytes = fc->bytes;
    st->budget = fc->budget;
    pthread_mutex_unlock(&fc->mu);
}
