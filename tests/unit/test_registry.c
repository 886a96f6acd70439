/*
 * test_registry.c -- the assemblies in memory and their budget
 * (server/registry.c, gs_model_bytes, gs_precomp_bytes):
 *   - the byte counts are the arrays' sizes: L_Q adds exactly m^2 doubles
 *     when it comes, a dense model its blocks' n_b^2 doubles, and the
 *     count known before the build (an upload's check) is the built one;
 *   - over the budget, releasing an entry unloads idle entries whose
 *     factors are saved, least recently held first, never the entry just
 *     released, never a held one, never one whose factors are not saved;
 *     the unload callback names each one; an unloaded id comes back empty
 *     (to be loaded again) and an empty entry is never counted; no budget:
 *     nothing is unloaded;
 *   - an entry left empty by its last holder is freed, not kept; a dropped
 *     one leaves the memory count at once;
 *   - an unloaded entry whose model holds no stiffness (dense blocks
 *     released) leaves a skeleton: the same model object (its kept hash),
 *     its bytes alone, not loaded; a later unload takes it without a report.
 */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "hash.h"
#include "registry.h"

GS_TEST(bytes_are_the_arrays)
{
    gs_model *mdl = tm_random(2, 7, 3, 31);
    gs_error e;
    GS_CHECK_INT(gs_model_validate(mdl, &e), GS_OK);
    gs_model *bigger = tm_random(2, 9, 3, 31); /* two more DOFs in each block */
    GS_CHECK_INT(gs_model_validate(bigger, &e), GS_OK);
    const size_t m = (size_t)mdl->m, dm = (size_t)(bigger->m - mdl->m);
    /* blocks 2 x (81 - 49) doubles, two more nodes per part, dm more pairs
     * (2 entries of A each), f two DOFs longer per part, more fasteners */
    const size_t expect = 2 * (81 - 49) * sizeof(double) + 4 * sizeof(gs_node) +
                          dm * (sizeof(gs_pair) + 2 * (2 * sizeof(int) + sizeof(double))) +
                          4 * sizeof(double) +
                          (size_t)(bigger->n_fast - mdl->n_fast) * sizeof(gs_fastener);
    GS_CHECK_INT((long long)(gs_model_bytes(bigger) - gs_model_bytes(mdl)), (long long)expect);
    gs_model_free(bigger);

    gs_precomp *pc = NULL;
    GS_CHECK_INT(gs_precomp_build_ex(mdl, GS_PRECOMP_DEFER_LQ, &pc, &e), GS_OK);
    const size_t before = gs_precomp_bytes(pc);
    GS_CHECK(before >= (m * m + 2 * 49) * sizeof(double)); /* Q and the blocks' factors */
    GS_CHECK_INT(gs_precomp_finish_lq(pc, &e), GS_OK);
    GS_CHECK_INT((long long)(gs_precomp_bytes(pc) - before), (long long)(m * m * sizeof(double)));
    /* known ahead: exactly what the complete dense precomputation holds */
    GS_CHECK_INT((long long)gs_precomp_bytes_ahead(mdl), (long long)gs_precomp_bytes(pc));
    gs_precomp_free(pc);
    gs_model_free(mdl);
}

typedef struct {
    int calls;
    char ids[8][GSD_ID_LEN];
} unload_log;

static void on_unload(void *ctx, const char *id, size_t bytes, size_t left, size_t budget)
{
    unload_log *u = ctx;
    GS_CHECK(bytes > 0 && budget == 1);
    (void)left;
    if (u->calls < 8)
        snprintf(u->ids[u->calls], sizeof u->ids[0], "%s", id);
    u->calls++;
}

/* Hold entry id with a model and its precomputation installed; saved or not. */
static gsd_asm *load(gsd_registry *reg, const char *id, uint64_t seed, int saved)
{
    gsd_asm *a = gsd_registry_acquire(reg, id);
    GS_CHECK(a != NULL);
    GS_CHECK(gsd_asm_pc(a) == NULL);
    gs_model *mdl = tm_random(2, 6, 2, seed);
    gs_precomp *pc = ts_build(mdl);
    gsd_asm_install(a, mdl, pc);
    if (saved)
        gsd_asm_set_saved(a);
    return a;
}

static int present(gsd_registry *reg, const char *id)
{
    gsd_asm *a = gsd_registry_acquire(reg, id);
    int loaded = gsd_asm_pc(a) != NULL;
    gsd_registry_release(reg, a); /* an empty entry: counts nothing */
    return loaded;
}

GS_TEST(budget_unloads_idle_saved_entries_least_recent_first)
{
    gsd_registry *reg = gsd_registry_new(1, 0, 1); /* one byte: always over */
    GS_CHECK(reg != NULL);
    unload_log u = {0};
    gsd_registry_on_unload(reg, on_unload, &u);
    size_t bytes;
    long unloaded;

    gsd_registry_release(reg, load(reg, "a_1", 1, 1));
    gsd_registry_memory(reg, &bytes, &unloaded);
    GS_CHECK(bytes > 0); /* the entry just released stays, over the budget or not */
    GS_CHECK_INT(unloaded, 0);

    gsd_asm *b = load(reg, "a_2", 2, 0); /* not saved */
    gsd_asm *c = load(reg, "a_3", 3, 1);
    gsd_registry_release(reg, c); /* a_1 idle and saved, the least recent: out */
    GS_CHECK_INT(u.calls, 1);
    GS_CHECK(!strcmp(u.ids[0], "a_1"));
    gsd_registry_release(reg, b); /* a_3 idle, saved: out; a_2 (just released) stays */
    GS_CHECK_INT(u.calls, 2);
    GS_CHECK(!strcmp(u.ids[1], "a_3"));

    gsd_asm *d = load(reg, "a_4", 4, 1);
    gsd_registry_release(reg, d); /* a_2 idle but not saved: stays */
    GS_CHECK_INT(u.calls, 2);
    gsd_registry_memory(reg, &bytes, &unloaded);
    GS_CHECK_INT(unloaded, 2);

    gsd_asm *held = gsd_registry_acquire(reg, "a_4");
    gsd_asm *b2 = gsd_registry_acquire(reg, "a_2");
    gsd_asm_set_saved(b2);
    gsd_registry_release(reg, b2); /* a_4 held: stays; a_2 just released: stays */
    GS_CHECK_INT(u.calls, 2);
    gsd_registry_release(reg, held); /* now a_2 (saved, idle) goes */
    GS_CHECK_INT(u.calls, 3);
    GS_CHECK(!strcmp(u.ids[2], "a_2"));

    GS_CHECK(present(reg, "a_4")); /* held and released again: stays */
    GS_CHECK_INT(u.calls, 3);
    GS_CHECK(!present(reg, "a_1")); /* unloaded entries come back empty; releasing */
    GS_CHECK_INT(u.calls, 4);       /* that one (nothing in it) takes a_4 out */
    GS_CHECK(!strcmp(u.ids[3], "a_4"));
    GS_CHECK(!present(reg, "a_2"));
    GS_CHECK_INT(u.calls, 4); /* empty entries are never counted as unloaded */
    gsd_registry_memory(reg, &bytes, &unloaded);
    GS_CHECK_INT(unloaded, 4);
    GS_CHECK_INT((long long)bytes, 0);
    gsd_registry_free(reg);
}

/* An entry left empty by its last holder (its load failed, or its assembly
 * was deleted before it loaded) is freed; one holding only a model (a
 * precomputation to come) stays, and goes when dropped (as the daemon drops
 * the entry of a failed precomputation). */
GS_TEST(empty_entries_are_not_kept)
{
    gsd_registry *reg = gsd_registry_new(1, 0, 0);
    GS_CHECK(reg != NULL);
    gsd_asm *x = gsd_registry_acquire(reg, "a_x");
    gsd_asm *x2 = gsd_registry_acquire(reg, "a_x"); /* the same entry */
    GS_CHECK(x == x2);
    GS_CHECK_INT(gsd_registry_entries(reg), 1);
    gsd_registry_release(reg, x2);
    GS_CHECK_INT(gsd_registry_entries(reg), 1); /* still held */
    gsd_registry_release(reg, x);
    GS_CHECK_INT(gsd_registry_entries(reg), 0);

    gsd_asm *m = gsd_registry_acquire(reg, "a_m");
    gsd_asm_install(m, tm_random(2, 6, 2, 5), NULL);
    gsd_registry_release(reg, m);
    GS_CHECK_INT(gsd_registry_entries(reg), 1);
    gsd_registry_release(reg, load(reg, "a_l", 6, 0));
    GS_CHECK_INT(gsd_registry_entries(reg), 2);
    GS_CHECK_INT(gsd_registry_loaded(reg), 1);
    size_t bytes, b_l;
    long unloaded;
    gsd_registry_memory(reg, &bytes, &unloaded);
    gsd_registry_drop(reg, "a_m");
    gsd_registry_memory(reg, &b_l, &unloaded); /* a drop leaves the count at once */
    GS_CHECK(b_l > 0 && b_l < bytes);
    gsd_registry_drop(reg, "a_l");
    GS_CHECK_INT(gsd_registry_entries(reg), 0);
    gsd_registry_memory(reg, &bytes, &unloaded);
    GS_CHECK_INT((long long)bytes, 0);
    gsd_registry_free(reg);
}

GS_TEST(no_budget_unloads_nothing)
{
    gsd_registry *reg = gsd_registry_new(1, 0, 0);
    GS_CHECK(reg != NULL);
    unload_log u = {0};
    gsd_registry_on_unload(reg, on_unload, &u);
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(id, sizeof id, "a_%d", i);
        gsd_registry_release(reg, load(reg, id, (uint64_t)i + 1, 1));
    }
    size_t bytes;
    long unloaded;
    gsd_registry_memory(reg, &bytes, &unloaded);
    GS_CHECK_INT(unloaded, 0);
    GS_CHECK_INT(u.calls, 0);
    GS_CHECK_INT(gsd_registry_loaded(reg), 4);
    gsd_registry_free(reg);
}

GS_TEST(unloaded_entry_keeps_a_released_model)
{
    gsd_registry *reg = gsd_registry_new(1, 0, 1); /* one byte: always over */
    unload_log u = {0};
    gsd_registry_on_unload(reg, on_unload, &u);
    gsd_asm *a = load(reg, "a_s", 7, 1);
    gs_model *mdl = (gs_model *)gsd_asm_mdl(a);
    gs_model_release_dense(mdl, "0123456789abcdef0123456789abcdef");
    const size_t model_bytes = gs_model_bytes(mdl);
    gsd_registry_release(reg, a);
    gsd_registry_release(reg, load(reg, "a_t", 8, 1)); /* a_s goes: its skeleton stays */
    GS_CHECK_INT(u.calls, 1);
    GS_CHECK(!strcmp(u.ids[0], "a_s"));
    GS_CHECK_INT(gsd_registry_entries(reg), 2);
    GS_CHECK_INT(gsd_registry_loaded(reg), 1);
    size_t bytes, b_t;
    long unloaded;
    gsd_asm *t = gsd_registry_acquire(reg, "a_t");
    gsd_asm *sk = gsd_registry_acquire(reg, "a_s");
    GS_CHECK(gsd_asm_mdl(sk) == mdl && gsd_asm_pc(sk) == NULL);
    char h[GS_HASH_HEX];
    gs_model_hash(gsd_asm_mdl(sk), h); /* the released model's kept hash */
    GS_CHECK_STR(h, "0123456789abcdef0123456789abcdef");
    GS_CHECK_INT(gsd_asm_trylock_model(sk), 1);
    gsd_asm_unlock(sk);
    gsd_registry_release(reg, sk); /* just released: stays */
    gsd_registry_memory(reg, &bytes, &unloaded);
    GS_CHECK_INT(unloaded, 1);
    gsd_registry_release(reg, t); /* the skeleton is the least recent: silently out */
    gsd_registry_memory(reg, &b_t, &unloaded);
    GS_CHECK_INT(u.calls, 1);
    GS_CHECK_INT(unloaded, 1);
    GS_CHECK_INT((long long)(bytes - b_t), (long long)model_bytes);
    GS_CHECK_INT(gsd_registry_entries(reg), 1);
    gsd_registry_free(reg);
}

/* The unload callback (run before the unloaded entry is freed) deletes the
 * assembly: its skeleton, which owns the model the unloaded entry's
 * precomputation still points to, is dropped then, and must not be freed
 * before that entry (a heap-use-after-free under the sanitizers, seen in a
 * churn of uploads, solves and deletes). */
static void drop_on_unload(void *ctx, const char *id, size_t bytes, size_t left, size_t budget)
{
    (void)bytes, (void)left, (void)budget;
    gsd_registry_drop(ctx, id);
}

GS_TEST(skeleton_dropped_while_its_entry_is_freed)
{
    gsd_registry *reg = gsd_registry_new(1, 0, 1);
    gsd_registry_on_unload(reg, drop_on_unload, reg);
    gsd_asm *a = load(reg, "a_d", 9, 1);
    gs_model_release_dense((gs_model *)gsd_asm_mdl(a), NULL);
    gsd_registry_release(reg, a);
    gsd_registry_release(reg, load(reg, "a_e", 10, 1)); /* a_d unloaded, then dropped */
    GS_CHECK_INT(gsd_registry_entries(reg), 1);
    gsd_asm *d = gsd_registry_acquire(reg, "a_d"); /* gone: a new empty entry */
    GS_CHECK(gsd_asm_mdl(d) == NULL);
    gsd_registry_release(reg, d); /* releasing it unloads a_e: the callback drops it too */
    GS_CHECK_INT(gsd_registry_entries(reg), 0);
    gsd_registry_free(reg);
}

GS_TEST_MAIN()
