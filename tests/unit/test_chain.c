/*
 * test_chain.c -- unit tests of the chained cloud run (runner/chain.h): the
 * sketch and the nearest-neighbour order on hand-made points, the warm /
 * cold learning on synthetic times (which kind runs, how many rows the
 * probes and re-measurements take, the contact set handed on), and chained
 * runs of a cloud of similar gaps: every row optimal, at its own index,
 * within 1e-9 mm of its cold solve, warm where the chain says so.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "chain.h"
#include "generator.h"
#include "runner.h"

GS_TEST(sketch_is_a_signed_sum)
{
    const int m = 37;
    double e[37] = {0}, sk[GS_SKETCH_DIM], sk2[GS_SKETCH_DIM], g[37];
    for (int i = 0; i < m; i++) {
        memset(e, 0, sizeof e);
        e[i] = 1.0;
        gs_sketch(e, m, sk);
        double n2 = 0.0;
        for (int j = 0; j < GS_SKETCH_DIM; j++) {
            GS_CHECK(sk[j] == 1.0 || sk[j] == -1.0);
            n2 += sk[j] * sk[j];
        }
        GS_CHECK(n2 == GS_SKETCH_DIM);
    }
    /* linear: sketch(2 g) = 2 sketch(g), exactly (powers of two) */
    for (int i = 0; i < m; i++)
        g[i] = 0.25 * i - 3.0;
    gs_sketch(g, m, sk);
    for (int i = 0; i < m; i++)
        g[i] *= 2.0;
    gs_sketch(g, m, sk2);
    for (int j = 0; j < GS_SKETCH_DIM; j++)
        GS_CHECK(sk2[j] == 2.0 * sk[j]);
}

GS_TEST(sketch_order_hand_made)
{
    /* points on a line (first coordinate), no ties */
    const double x[5] = {5.0, 1.0, 9.0, 3.5, 8.0};
    double sk[5 * GS_SKETCH_DIM] = {0}, start[GS_SKETCH_DIM] = {0};
    for (int i = 0; i < 5; i++)
        sk[i * GS_SKETCH_DIM] = x[i];
    int perm[5];
    /* from point 0 (5): 3.5, then 1, then 8, then 9 */
    gs_sketch_order(sk, 5, NULL, perm);
    const int want0[5] = {0, 3, 1, 4, 2};
    for (int q = 0; q < 5; q++)
        GS_CHECK_INT(perm[q], want0[q]);
    /* from a start at 8.6: 9, 8, 5, 3.5, 1 */
    start[0] = 8.6;
    gs_sketch_order(sk, 5, start, perm);
    const int want1[5] = {2, 4, 0, 3, 1};
    for (int q = 0; q < 5; q++)
        GS_CHECK_INT(perm[q], want1[q]);
    gs_sketch_order(sk, 1, start, perm);
    GS_CHECK_INT(perm[0], 0);
}

/* Runs rows through the learning with the time of a warm row tw and of a
 * cold row tc; returns the rows that ran warm. */
static int learn(gs_chain_mode mode, double tw, double tc, int rows)
{
    const double lam[4] = {1.5, 0.0, 2.0, 0.0};
    gs_chain *c = gs_chain_new(4);
    GS_CHECK(c != NULL);
    gs_warm w = {0};
    GS_CHECK_INT(gs_chain_warm(c, mode, &w), 0); /* nothing solved yet: cold */
    gs_chain_record(c, tc, lam, NULL);
    int warm = 0;
    for (int r = 0; r < rows; r++) {
        gs_warm wm = {0};
        int use = gs_chain_warm(c, mode, &wm);
        if (use) {
            GS_CHECK_INT(wm.n_act, 2);
            GS_CHECK(wm.act[0] == 0 && wm.act[1] == 2 && wm.lam == NULL);
        } else {
            GS_CHECK_INT(wm.n_act, 0);
        }
        warm += use;
        gs_chain_record(c, use ? tw : tc, lam, NULL);
    }
    double mw, mc;
    long nw, nc;
    gs_chain_stats(c, &mw, &mc, &nw, &nc);
    if (mode == GS_CHAIN_AUTO) {
        GS_CHECK_INT(nw + nc, rows);
        GS_CHECK(fabs(mw - tw) < 1e-15 && fabs(mc - tc) < 1e-15);
    } else {
        GS_CHECK_INT(nw + nc, 0); /* no choice made: nothing learned */
    }
    gs_chain_free(c);
    return warm;
}

GS_TEST(learning_keeps_the_faster_kind)
{
    const int rows = 1000;
    GS_CHECK_INT(learn(GS_CHAIN_ON, 3e-3, 1e-3, rows), rows);
    GS_CHECK_INT(learn(GS_CHAIN_OFF, 1e-3, 3e-3, rows), 0);
    /* warm 3x faster: cold only in the probes and the 3% budget:
     * cold time <= 0.03 spent + probes  ->  about 4 + 0.03 * 1000 * 1 / 3 */
    int warm = learn(GS_CHAIN_AUTO, 1e-3, 3e-3, rows);
    int cold = rows - warm;
    printf("  warm faster: %d of %d rows cold\n", cold, rows);
    GS_CHECK(cold >= GS_CHAIN_PROBE && cold <= GS_CHAIN_PROBE + 12);
    /* cold 3x faster: warm in the probes and the budget */
    warm = learn(GS_CHAIN_AUTO, 3e-3, 1e-3, rows);
    printf("  cold faster: %d of %d rows warm\n", warm, rows);
    GS_CHECK(warm >= GS_CHAIN_PROBE && warm <= GS_CHAIN_PROBE + 12);
}

/* A chained run of a cloud of similar gaps (scatter 0.1) against cold
 * row-by-row solves. */
GS_TEST(chained_runs_equal_cold_solves)
{
    ts_fixture f;
    const int k = 48;
    ts_fx_generate(&f, GS_GEN_LAP, 0, k, 5, 0.5);
    gs_gen_cloud_params cp;
    gs_gen_cloud_default(&cp);
    cp.scatter = 0.1;
    gs_error e;
    GS_CHECK_INT(gs_gen_gap_cloud(f.mdl, k, 5, &cp, f.G, &e), GS_OK);
    double *ref = malloc(sizeof(double) * (size_t)k * f.m);
    GS_CHECK(ref != NULL);
    for (int r = 0; r < k; r++) {
        gs_problem pb = ts_fx_problem(&f, r);
        gs_solve_opts o;
        gs_solve_default_opts(&o);
        o.method = GS_METHOD_GI;
        gs_solve_info info;
        GS_CHECK_INT(gs_solve(f.sv, &pb, &o, f.lam, ref + (size_t)r * f.m, NULL, &info, &e),
                     GS_OK);
        GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
    }
    for (int mode = GS_CHAIN_AUTO; mode <= GS_CHAIN_ON; mode++)
        for (int threads = 1; threads <= 2; threads++) {
            gs_run run = {.pc = f.pc, .n_patterns = 1, .loads = f.load,
                          .chain = (gs_chain_mode)mode};
            gs_solve_default_opts(&run.opts);
            run.opts.method = GS_METHOD_GI;
            GS_CHECK_INT(gs_gap_source_mem(f.G, k, f.m, &run.src, &e), GS_OK);
            gs_mem_sink ms;
            GS_CHECK_INT(gs_mem_sink_init(&ms, k, f.m, 1, &run.sink, &e), GS_OK);
            gs_run_pool *pool = NULL;
            GS_CHECK_INT(gs_run_start(&run, threads, 8, NULL, &pool, &e), GS_OK);
            GS_CHECK_INT(gs_run_wait(pool, &e), GS_OK);
            double dw = 0.0;
            int warm = 0;
            for (int r = 0; r < k; r++) {
                GS_CHECK(ms.ran[r] == 1);
                GS_CHECK_INT(ms.info[r].status, GS_STATUS_OPTIMAL);
                GS_CHECK(gs_kkt_pass(&ms.info[r].kkt, 1e-8));
                warm += ms.info[r].warm_used;
                for (int i = 0; i < f.m; i++)
                    dw = fmax(dw, fabs(ms.W[(size_t)r * f.m + i] - ref[(size_t)r * f.m + i]));
            }
            printf("  chain %s, %d thread(s): %d of %d rows warm, max |w - w_cold| %.1e mm\n",
                   gs_chain_mode_name((gs_chain_mode)mode), threads, warm, k, dw);
            GS_CHECK(dw <= 1e-9);
            if (mode == GS_CHAIN_ON)
                GS_CHECK(warm >= k - threads); /* all but each worker's first row */
            else
                GS_CHECK(warm >= GS_CHAIN_PROBE);
            gs_mem_sink_free(&ms);
            gs_gap_source_close(&run.src);
        }
    free(ref);
    ts_fx_free(&f);
}

GS_TEST(mode_names)
{
    gs_chain_mode c;
    GS_CHECK_INT(gs_chain_mode_parse("auto", &c), 0);
    GS_CHECK_INT(c, GS_CHAIN_AUTO);
    GS_CHECK_INT(gs_chain_mode_parse("on", &c), 0);
    GS_CHECK_INT(c, GS_CHAIN_ON);
    GS_CHECK_INT(gs_chain_mode_parse("off", &c), 0);
    GS_CHECK_INT(c, GS_CHAIN_OFF);
    GS_CHECK_INT(gs_chain_mode_parse("yes", &c), -1);
    GS_CHECK_INT(gs_chain_mode_parse(NULL, &c), -1);
    GS_CHECK(!strcmp(gs_chain_mode_name(GS_CHAIN_AUTO), "auto"));
}

GS_TEST_MAIN()
