/* test_fcache.c -- the shared factor cache (fcache.c): exact round trip
 * into a wider leading dimension, lookups by the whole ordered list,
 * least-recently-used eviction within the byte budget, counters, two
 * threads at once; and its use by gs_cset_travel and by GI's warm start
 * (the cached factor gives the bits a build gives). */
#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include <pthread.h>

#include "cset.h"
#include "fcache.h"

/* A lower triangle whose every entry names its list and position. */
static void fill_factor(double *L, int k, int ld, int tag)
{
    for (int b = 0; b < k; b++)
        for (int a = 0; a < ld; a++)
            L[a + (size_t)b * ld] = a >= b && a < k ? tag * 1e6 + b * 1e3 + a : NAN;
}

static int same_lower(const double *X, const double *Y, int k, int ldx, int ldy)
{
    for (int b = 0; b < k; b++)
        for (int a = b; a < k; a++)
            if (X[a + (size_t)b * ldx] != Y[a + (size_t)b * ldy])
                return 0;
    return 1;
}

/* The bytes one entry of order k counts against the budget: the budget of
 * the eviction test holds exactly two entries of order 40. */
static size_t two_entries(void)
{
    gs_fcache *fc = gs_fcache_new((size_t)1 << 30);
    double L[40 * 40];
    int list[40];
    for (int a = 0; a < 40; a++)
        list[a] = a;
    fill_factor(L, 40, 40, 1);
    gs_fcache_put(fc, list, 40, L, 40);
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    gs_fcache_free(fc);
    return 2 * st.bytes;
}

GS_TEST(round_trip_and_exact_lookup)
{
    enum { K = 40, LD = 53 };
    gs_fcache *fc = gs_fcache_new((size_t)1 << 20);
    GS_CHECK(fc != NULL);
    int list[K], perm[K];
    for (int a = 0; a < K; a++) {
        list[a] = 3 * a + 1;
        perm[a] = list[a];
    }
    perm[0] = list[1]; /* the same pairs in another order: another factor */
    perm[1] = list[0];
    double L[K * K], out[LD * K];
    fill_factor(L, K, K, 7);
    GS_CHECK_INT(gs_fcache_get(fc, list, K, out, LD), 0);
    gs_fcache_put(fc, list, K, L, K);
    for (int i = 0; i < LD * K; i++)
        out[i] = -1.0;
    GS_CHECK_INT(gs_fcache_get(fc, list, K, out, LD), 1);
    GS_CHECK(same_lower(L, out, K, K, LD));
    for (int b = 1; b < K; b++) /* above the diagonal and below row k: untouched */
        GS_CHECK(out[0 + (size_t)b * LD] == -1.0 && out[K + (size_t)b * LD] == -1.0);
    GS_CHECK_INT(gs_fcache_get(fc, perm, K, out, LD), 0);
    GS_CHECK_INT(gs_fcache_get(fc, list, K - 1, out, LD), 0); /* a prefix is another list */
    gs_fcache_put(fc, list, K, L, K); /* already there: not stored twice */
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    GS_CHECK_INT(st.hits, 1);
    GS_CHECK_INT(st.misses, 3);
    GS_CHECK_INT(st.entries, 1);
    GS_CHECK(st.bytes >= K * (K + 1) / 2 * sizeof(double) + K * sizeof(int));
    gs_fcache_free(fc);
}

GS_TEST(evicts_least_recently_used_within_budget)
{
    enum { K = 40 };
    gs_fcache *fc = gs_fcache_new(two_entries());
    int la[K], lb[K], lc[K];
    for (int a = 0; a < K; a++) {
        la[a] = a;
        lb[a] = a + 100;
        lc[a] = a + 200;
    }
    double A[K * K], B[K * K], C[K * K], out[K * K];
    fill_factor(A, K, K, 1);
    fill_factor(B, K, K, 2);
    fill_factor(C, K, K, 3);
    gs_fcache_put(fc, la, K, A, K);
    gs_fcache_put(fc, lb, K, B, K);
    GS_CHECK_INT(gs_fcache_get(fc, la, K, out, K), 1); /* A used after B */
    gs_fcache_put(fc, lc, K, C, K);                    /* B, the least recent, goes */
    GS_CHECK_INT(gs_fcache_get(fc, lb, K, out, K), 0);
    GS_CHECK_INT(gs_fcache_get(fc, la, K, out, K), 1);
    GS_CHECK(same_lower(A, out, K, K, K));
    GS_CHECK_INT(gs_fcache_get(fc, lc, K, out, K), 1);
    GS_CHECK(same_lower(C, out, K, K, K));
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    GS_CHECK_INT(st.entries, 2);
    GS_CHECK(st.bytes <= st.budget);
    gs_fcache_free(fc);
    /* an entry above the budget, or any entry with budget 0, is not kept */
    gs_fcache *small = gs_fcache_new(two_entries() / 4), *none = gs_fcache_new(0);
    gs_fcache_put(small, la, K, A, K);
    gs_fcache_put(none, la, K, A, K);
    GS_CHECK_INT(gs_fcache_get(small, la, K, out, K), 0);
    GS_CHECK_INT(gs_fcache_get(none, la, K, out, K), 0);
    gs_fcache_free(small);
    gs_fcache_free(none);
    gs_fcache_free(NULL);
}

/* Two threads put and get 12 lists through a cache that holds two: every
 * hit returns the factor of the list asked for. */
typedef struct {
    gs_fcache *fc;
    int seed, bad, hits;
} hammer_arg;

static void *hammer(void *p)
{
    enum { K = 40 };
    hammer_arg *h = p;
    double L[K * K], out[K * K];
    int list[K];
    for (int it = 0; it < 600; it++) {
        int tag = (it * 7 + h->seed) % 12;
        for (int a = 0; a < K; a++)
            list[a] = tag * 1000 + a;
        if (gs_fcache_get(h->fc, list, K, out, K)) {
            fill_factor(L, K, K, tag);
            h->bad += !same_lower(L, out, K, K, K);
            h->hits++;
        } else {
            fill_factor(L, K, K, tag);
            gs_fcache_put(h->fc, list, K, L, K);
        }
    }
    return NULL;
}

GS_TEST(two_threads)
{
    gs_fcache *fc = gs_fcache_new(two_entries());
    hammer_arg a = {fc, 0, 0, 0}, b = {fc, 5, 0, 0};
    pthread_t t;
    GS_CHECK_INT(pthread_create(&t, NULL, hammer, &a), 0);
    hammer(&b);
    pthread_join(t, NULL);
    GS_CHECK_INT(a.bad + b.bad, 0);
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    GS_CHECK_INT(st.hits, a.hits + b.hits);
    GS_CHECK_INT(st.hits + st.misses, 1200);
    GS_CHECK(st.entries <= 2 && st.bytes <= st.budget);
    gs_fcache_free(fc);
}

/* A contact set of at least GS_FCACHE_MIN_K pairs: the first k pairs whose
 * Q_CC stays well conditioned (a greedy build). */
static int wide_set(const gs_precomp *pc, int want, int *list)
{
    gs_cset cs;
    GS_CHECK_INT(gs_cset_init(&cs, pc, NULL), GS_OK);
    int k = 0;
    for (int i = 0; i < pc->m && k < want; i++) {
        list[k] = i;
        if (gs_cset_build(&cs, list, k + 1, NULL) == GS_OK &&
            cs.f.L[k + (size_t)k * cs.f.cap] > 1e-3 * sqrt(pc->qdiag[i]))
            k++;
    }
    gs_cset_free(&cs);
    return k;
}

/* gs_cset_travel with a cache: the first build stores, a second set far from
 * the list copies it; members, order and factor are bitwise those of a
 * build, and the copy counts as a fresh factor (no updates). */
GS_TEST(cset_travel_copies_the_cached_factor)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 3, 0.5);
    int *list = malloc(sizeof(int) * (size_t)f.m);
    const int k = wide_set(f.pc, 48, list);
    GS_CHECK_MSG(k >= GS_FCACHE_MIN_K, "only %d independent pairs", k);
    gs_fcache *fc = gs_fcache_new((size_t)1 << 20);
    gs_cset a, b, ref;
    GS_CHECK_INT(gs_cset_init(&a, f.pc, NULL), GS_OK);
    GS_CHECK_INT(gs_cset_init(&b, f.pc, NULL), GS_OK);
    GS_CHECK_INT(gs_cset_init(&ref, f.pc, NULL), GS_OK);
    GS_CHECK_INT(gs_cset_travel(&a, list, k, fc, NULL), GS_OK); /* empty: builds, stores */
    int other[2] = {list[k - 1], list[k - 2]};
    GS_CHECK_INT(gs_cset_build(&b, other, 2, NULL), GS_OK);
    b.updates = GS_CSET_FRESH(k); /* round-off budget spent: travel must build */
    GS_CHECK_INT(gs_cset_travel(&b, list, k, fc, NULL), GS_OK);
    GS_CHECK_INT(gs_cset_build(&ref, list, k, NULL), GS_OK);
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    GS_CHECK_INT(st.misses, 1);
    GS_CHECK_INT(st.hits, 1);
    GS_CHECK_INT(b.k, k);
    GS_CHECK(b.updates == 0);
    for (int c = 0; c < k; c++) {
        GS_CHECK_INT(b.idx[c], list[c]);
        GS_CHECK_INT(b.pos[list[c]], c);
    }
    GS_CHECK(same_lower(b.f.L, ref.f.L, k, b.f.cap, ref.f.cap));
    GS_CHECK(same_lower(a.f.L, ref.f.L, k, a.f.cap, ref.f.cap));
    for (int i = 0; i < f.m; i++)
        GS_CHECK_INT(b.mark[i], 0);
    gs_cset_free(&a);
    gs_cset_free(&b);
    gs_cset_free(&ref);
    gs_fcache_free(fc);
    free(list);
    ts_fx_free(&f);
}

/* Two new solvers sharing a cache warm-start a neighbouring problem (one
 * more fastener) from the same solution: the first builds and stores the
 * warm set's factor, the second copies it; both answers are bitwise the
 * answer of a new solver without a cache (which builds too; the solver of
 * the cold solve would instead update the factor it kept, another
 * rounding). */
GS_TEST(gi_warm_start_shares_the_factor)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_SANDWICH, 0, 1, 3, 0.5);
    const int m = f.m;
    double *l0 = malloc(m * sizeof *l0), *l1 = malloc(m * sizeof *l1);
    double *l2 = malloc(m * sizeof *l2), *l3 = malloc(m * sizeof *l3);
    gs_solve_opts o = ts_opts(GS_METHOD_GI, GS_FORM_RELATIVE);
    o.want_x = 0;
    gs_problem pb = ts_fx_problem(&f, 0);
    gs_solve_info info;
    ts_solve_ok(f.sv, &pb, &o, l0, f.w, NULL, &info, 1e-9);
    const int na = ts_contact_set(l0, NULL, m, f.act);
    GS_CHECK_MSG(na >= GS_FCACHE_MIN_K, "contact set of %d pairs", na);
    for (int i = 0; i < f.mdl->n_fast; i++)
        if (!f.inst[i]) {
            f.inst[i] = 1;
            break;
        }
    gs_model_pattern_load(f.mdl, f.inst, f.load);
    gs_warm warm = {.n_act = na, .act = f.act, .lam = l0};
    o.warm = &warm;
    gs_error e;
    gs_solver *s1 = gs_solver_new(f.pc, &e), *s2 = gs_solver_new(f.pc, &e);
    gs_solver *s3 = gs_solver_new(f.pc, &e);
    ts_solve_ok(s1, &pb, &o, l1, f.w, NULL, &info, 1e-9); /* no cache */
    gs_fcache *fc = gs_fcache_new((size_t)1 << 22);
    gs_solver_set_fcache(s2, fc);
    gs_solver_set_fcache(s3, fc);
    ts_solve_ok(s2, &pb, &o, l2, f.w, NULL, &info, 1e-9);
    GS_CHECK_INT(info.warm_used, 1);
    ts_solve_ok(s3, &pb, &o, l3, f.w, NULL, &info, 1e-9);
    gs_fcache_stats st;
    gs_fcache_get_stats(fc, &st);
    GS_CHECK_INT(st.misses, 1);
    GS_CHECK_INT(st.hits, 1);
    GS_CHECK(!memcmp(l1, l2, m * sizeof *l1));
    GS_CHECK(!memcmp(l1, l3, m * sizeof *l1));
    /* the stored factor is the warm set's in decreasing order of the warm
     * multipliers (gi_relative.c warm_start), not in pair order */
    int *byf = malloc(na * sizeof *byf);
    memcpy(byf, f.act, na * sizeof *byf);
    for (int a = 1; a < na; a++) /* insertion sort: decreasing l0, ties by pair */
        for (int b = a; b > 0 && (l0[byf[b]] > l0[byf[b - 1]] ||
                                  (l0[byf[b]] == l0[byf[b - 1]] && byf[b] < byf[b - 1]));
             b--) {
            int t = byf[b];
            byf[b] = byf[b - 1];
            byf[b - 1] = t;
        }
    GS_CHECK(memcmp(byf, f.act, na * sizeof *byf) != 0); /* the two orders differ */
    double *Lc = malloc(sizeof(double) * (size_t)na * na);
    GS_CHECK_INT(gs_fcache_get(fc, byf, na, Lc, na), 1);
    GS_CHECK_INT(gs_fcache_get(fc, f.act, na, Lc, na), 0);
    free(Lc);
    free(byf);
    gs_solver_free(s1);
    gs_solver_free(s2);
    gs_solver_free(s3);
    gs_fcache_free(fc);
    free(l0); free(l1); free(l2); free(l3);
    ts_fx_free(&f);
}

GS_TEST_MAIN()
