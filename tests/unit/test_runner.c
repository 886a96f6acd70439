/*
 * test_runner.c -- unit tests of the cloud runner (runner/runner.h): a
 * threaded run over memory source and sink gives, bit for bit, what gs_solve
 * gives row by row (one pattern and a sweep of three); the policy's order,
 * warm start and "result known" hooks, the stop hook and commit bookkeeping
 * of gs_run_chunk; an .npy gap source; errors of the source end the run;
 * the precomputation flags each method's run asks for.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gs_test.h"
#include "test_models.h"
#include "test_solver_support.h"

#include "hash.h"
#include "npy.h"
#include "pattern.h"
#include "runner.h"

/* Row-by-row reference: w of every row of the run on f's solver. */
static double *reference(ts_fixture *f, const double *loads, int n_pat)
{
    double *W = malloc(sizeof(double) * (size_t)n_pat * f->ngaps * f->m);
    for (int p = 0; p < n_pat; p++)
        for (int i = 0; i < f->ngaps; i++) {
            gs_problem pb = {.pc = f->pc, .g = f->G + (size_t)i * f->m,
                             .load = loads + (size_t)p * f->m};
            gs_solve_opts o;
            gs_solve_default_opts(&o);
            o.method = GS_METHOD_GI;
            gs_solve_info info;
            gs_error e;
            GS_CHECK_INT(gs_solve(f->sv, &pb, &o, f->lam,
                                  W + ((size_t)p * f->ngaps + i) * f->m, NULL, &info, &e),
                         GS_OK);
            GS_CHECK_INT(info.status, GS_STATUS_OPTIMAL);
        }
    return W;
}

GS_TEST(threads_bit_identical_to_row_by_row)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 23, 7, 0.5);
    gs_pattern pats[3] = {{.kind = GS_PAT_FRACTION, .fraction = 0.5},
                          {.kind = GS_PAT_ALL},
                          {.kind = GS_PAT_NONE}};
    double *loads = NULL;
    gs_error e;
    GS_CHECK_INT(gs_patterns_loads(pats, 3, f.mdl, &loads, &e), GS_OK);
    for (int i = 0; i < f.m; i++) /* pattern 0 is the fixture's own */
        GS_CHECK(loads[i] == f.load[i]);
    double *ref = reference(&f, loads, 3);
    for (int n_pat = 1; n_pat <= 3; n_pat += 2)
        for (int threads = 1; threads <= 3; threads++) {
            gs_run run = {.pc = f.pc, .n_patterns = n_pat, .loads = loads};
            gs_solve_default_opts(&run.opts);
            run.opts.method = GS_METHOD_GI;
            GS_CHECK_INT(gs_gap_source_mem(f.G, f.ngaps, f.m, &run.src, &e), GS_OK);
            gs_mem_sink ms;
            GS_CHECK_INT(gs_mem_sink_init(&ms, gs_run_rows(&run), f.m, 1, &run.sink, &e), GS_OK);
            gs_run_pool *pool = NULL;
            GS_CHECK_INT(gs_run_start(&run, threads, 4, NULL, &pool, &e), GS_OK);
            GS_CHECK_INT(gs_run_wait(pool, &e), GS_OK);
            GS_CHECK_INT(gs_run_rows(&run), (long long)n_pat * 23);
            for (long long r = 0; r < gs_run_rows(&run); r++) {
                GS_CHECK(ms.ran[r] == 1);
                GS_CHECK_INT(ms.info[r].status, GS_STATUS_OPTIMAL);
            }
            GS_CHECK(memcmp(ms.W, ref, sizeof(double) * (size_t)gs_run_rows(&run) * f.m) == 0);
            gs_mem_sink_free(&ms);
            gs_gap_source_close(&run.src);
        }
    /* the sweep differs between patterns: all fasteners close more than none */
    double s_all = 0, s_none = 0;
    for (size_t i = 0; i < (size_t)23 * f.m; i++) {
        s_all += ref[(size_t)23 * f.m + i];
        s_none += ref[(size_t)46 * f.m + i];
    }
    GS_CHECK(s_all < s_none);
    free(ref);
    free(loads);
    ts_fx_free(&f);
}

/* ---- hooks ---------------------------------------------------------------- */

typedef struct {
    ts_fixture *f;
    const double *W;         /* reference results (for "known" rows) */
    int order_calls, starts, dones, puts, commits, committed;
    int known_row;           /* this row is "known": not solved */
    int warm_row;            /* this row warm-starts from the reference of warm_from */
    int warm_from;
    int stop_at;             /* stop before this many rows ran (-1: never) */
    int seen[64];            /* put order */
    int warm_used;
    int *act;
    double *lam;
    gs_solver *sv;
} hook_ctx;

static void rev_order(void *ctx, int *rows, int n)
{
    hook_ctx *h = ctx;
    h->order_calls++;
    for (int i = 0; i < n / 2; i++) {
        int t = rows[i];
        rows[i] = rows[n - 1 - i];
        rows[n - 1 - i] = t;
    }
}

static gs_err start(void *ctx, int slot, int row, const double *g, gs_warm *warm, int *have,
                    gs_error *err)
{
    hook_ctx *h = ctx;
    h->starts++;
    GS_CHECK(memcmp(g, h->f->G + (size_t)row * h->f->m, sizeof(double) * h->f->m) == 0);
    if (row == h->known_row)
        *have = 1;
    if (row == h->warm_row) { /* the contact set and multipliers of another gap's solution */
        gs_problem pb = ts_fx_problem(h->f, h->warm_from);
        gs_solve_info info;
        GS_CHECK_INT(gs_solve(h->sv, &pb, NULL, h->lam, NULL, NULL, &info, err), GS_OK);
        int n = 0;
        for (int i = 0; i < h->f->m; i++)
            if (h->lam[i] != 0)
                h->act[n++] = i;
        warm->n_act = n;
        warm->act = h->act;
        warm->lam = h->lam;
    }
    return GS_OK;
}

static void done(void *ctx, int slot, int row)
{
    ((hook_ctx *)ctx)->dones++;
}

static gs_err put(void *ctx, int slot, const gs_run_result *r, gs_error *err)
{
    hook_ctx *h = ctx;
    GS_CHECK(r->row != h->known_row);
    GS_CHECK_INT(r->gap, r->row);
    GS_CHECK_INT(r->pattern, 0);
    if (r->row == h->warm_row)
        h->warm_used = r->info->warm_used;
    for (int i = 0; i < h->f->m; i++) /* same answer, warm or cold */
        GS_CHECK_NEAR(r->w[i], h->W[(size_t)r->row * h->f->m + i], 1e-9);
    h->seen[h->puts++] = r->row;
    return GS_OK;
}

static gs_err commit(void *ctx, int slot, const int *rows, int n, gs_error *err)
{
    hook_ctx *h = ctx;
    h->commits++;
    h->committed += n;
    return GS_OK;
}

static int stop(void *ctx, int ran)
{
    hook_ctx *h = ctx;
    return h->stop_at >= 0 && ran >= h->stop_at;
}

GS_TEST(chunk_hooks)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 8, 11, 0.5);
    double *W = reference(&f, f.load, 1);
    hook_ctx h = {.f = &f, .W = W, .known_row = 2, .warm_row = 5, .warm_from = 4,
                  .stop_at = -1};
    h.act = malloc(sizeof(int) * f.m);
    h.lam = malloc(sizeof(double) * f.m);
    gs_error e;
    h.sv = gs_solver_new(f.pc, &e);
    gs_run run = {.pc = f.pc, .n_patterns = 1, .loads = f.load,
                  .sink = {.put = put, .commit = commit, .ctx = &h},
                  .policy = {.order = rev_order, .start = start, .done = done, .ctx = &h},
                  .ctl = {.stop = stop, .ctx = &h}};
    gs_solve_default_opts(&run.opts);
    run.opts.method = GS_METHOD_GI;
    GS_CHECK_INT(gs_gap_source_mem(f.G, f.ngaps, f.m, &run.src, &e), GS_OK);
    gs_run_slot s;
    GS_CHECK_INT(gs_run_slot_init(&s, f.pc, NULL, &e), GS_OK);
    int rows[6] = {0, 1, 2, 3, 4, 5}, ran = -1;
    GS_CHECK_INT(gs_run_chunk(&run, &s, 0, rows, 6, &ran, &e), GS_OK);
    GS_CHECK_INT(ran, 6);
    GS_CHECK_INT(h.order_calls, 1);
    GS_CHECK_INT(h.starts, 6);
    GS_CHECK_INT(h.dones, 6);
    GS_CHECK_INT(h.puts, 5); /* the known row is not solved */
    GS_CHECK_INT(h.commits, 1);
    GS_CHECK_INT(h.committed, 6);
    int want[5] = {5, 4, 3, 1, 0}; /* reversed, without the known row */
    for (int i = 0; i < 5; i++)
        GS_CHECK_INT(h.seen[i], want[i]);
    GS_CHECK_INT(rows[0], 5);
    GS_CHECK_INT(h.warm_used, 1);
    /* stop after two rows: two committed, the rest untouched */
    memset(&h.seen, 0, sizeof h.seen);
    h.puts = h.commits = h.committed = 0;
    h.stop_at = 2;
    h.known_row = -1;
    run.policy.order = NULL;
    int rows2[4] = {6, 7, 0, 1};
    GS_CHECK_INT(gs_run_chunk(&run, &s, 0, rows2, 4, &ran, &e), GS_OK);
    GS_CHECK_INT(ran, 2);
    GS_CHECK_INT(h.committed, 2);
    GS_CHECK_INT(h.seen[0], 6);
    GS_CHECK_INT(h.seen[1], 7);
    /* stop before any row: nothing committed */
    h.stop_at = 0;
    h.commits = 0;
    GS_CHECK_INT(gs_run_chunk(&run, &s, 0, rows2, 4, &ran, &e), GS_OK);
    GS_CHECK_INT(ran, 0);
    GS_CHECK_INT(h.commits, 0);
    gs_run_slot_free(&s);
    gs_gap_source_close(&run.src);
    gs_solver_free(h.sv);
    free(h.act);
    free(h.lam);
    free(W);
    ts_fx_free(&f);
}

GS_TEST(npy_source_and_errors)
{
    ts_fixture f;
    ts_fx_generate(&f, GS_GEN_LAP, 0, 5, 3, 0.0);
    const char *dir = getenv("GS_TEST_TMP");
    char path[512];
    snprintf(path, sizeof path, "%s/runner_gaps.npy", dir && *dir ? dir : "/tmp");
    size_t shape[2] = {5, (size_t)f.m};
    gs_error e;
    GS_CHECK_INT(gs_npy_write_file(path, f.G, 2, shape, &e), GS_OK);
    gs_gap_source src;
    GS_CHECK_INT(gs_gap_source_npy(path, &src, &e), GS_OK);
    GS_CHECK_INT(src.k, 5);
    GS_CHECK_INT(src.m, f.m);
    double *g = malloc(sizeof(double) * f.m);
    for (int i = 0; i < 5; i++) {
        GS_CHECK_INT(src.read(src.ctx, i, g, &e), GS_OK);
        GS_CHECK(memcmp(g, f.G + (size_t)i * f.m, sizeof(double) * f.m) == 0);
    }
    GS_CHECK_INT(src.read(src.ctx, 5, g, &e), GS_ERR_IO); /* past the end */
    GS_CHECK(strstr(e.msg, "gap 5") != NULL);
    /* a run over a source that fails at gap 3 ends with its error */
    gs_run run = {.pc = f.pc, .n_patterns = 1, .src = src};
    gs_solve_default_opts(&run.opts);
    run.src.k = 6; /* one more row than the file holds */
    gs_mem_sink ms;
    GS_CHECK_INT(gs_mem_sink_init(&ms, 6, f.m, 0, &run.sink, &e), GS_OK);
    gs_run_pool *pool = NULL;
    GS_CHECK_INT(gs_run_start(&run, 2, 1, NULL, &pool, &e), GS_OK);
    GS_CHECK_INT(gs_run_wait(pool, &e), GS_ERR_IO);
    GS_CHECK(strstr(e.msg, "gap 5") != NULL);
    GS_CHECK(ms.ran[5] == 0);
    gs_mem_sink_free(&ms);
    /* a run whose source does not match the model is refused */
    run.src.m = f.m + 1;
    GS_CHECK_INT(gs_run_start(&run, 2, 1, NULL, &pool, &e), GS_ERR_INVALID);
    run.src.m = f.m;
    gs_gap_source_close(&src);
    /* the same cloud in Fortran order (numpy's G.T of an m x k array): read
     * whole, the same rows; a NaN is refused when its row is read, naming
     * the row and the pair */
    double *Gt = malloc(sizeof(double) * 5 * (size_t)f.m);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < f.m; j++)
            Gt[(size_t)j * 5 + (size_t)i] = f.G[(size_t)i * f.m + (size_t)j];
    Gt[(size_t)3 * 5 + 2] = NAN; /* row 2, pair 3 */
    GS_CHECK_INT(gs_npy_write_file_order(path, Gt, 2, shape, GS_NPY_COL_MAJOR, &e), GS_OK);
    GS_CHECK_INT(gs_gap_source_npy(path, &src, &e), GS_OK);
    GS_CHECK_INT(src.k, 5);
    GS_CHECK_INT(src.m, f.m);
    for (int i = 0; i < 5; i++) {
        if (i == 2) {
            GS_CHECK_INT(src.read(src.ctx, i, g, &e), GS_ERR_NONFINITE);
            GS_CHECK_STR(e.field, "gaps[2][3]");
            GS_CHECK(strstr(e.msg, "gap 2, pair 3") != NULL);
            continue;
        }
        GS_CHECK_INT(src.read(src.ctx, i, g, &e), GS_OK);
        GS_CHECK(memcmp(g, f.G + (size_t)i * f.m, sizeof(double) * f.m) == 0);
    }
    GS_CHECK_INT(src.read(src.ctx, 5, g, &e), GS_ERR_IO); /* past the end, as in C order */
    GS_CHECK(strstr(e.msg, "gap 5") != NULL);
    gs_gap_source_close(&src);
    /* and in C order: the same refusal from the streamed row */
    memcpy(Gt, f.G, sizeof(double) * 5 * (size_t)f.m);
    Gt[(size_t)4 * f.m + 1] = -INFINITY;
    GS_CHECK_INT(gs_npy_write_file(path, Gt, 2, shape, &e), GS_OK);
    GS_CHECK_INT(gs_gap_source_npy(path, &src, &e), GS_OK);
    GS_CHECK_INT(src.read(src.ctx, 3, g, &e), GS_OK);
    GS_CHECK_INT(src.read(src.ctx, 4, g, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "gaps[4][1]");
    gs_gap_source_close(&src);
    free(Gt);
    /* not a gap cloud */
    FILE *fp = fopen(path, "wb");
    fputs("not npy", fp);
    fclose(fp);
    GS_CHECK_INT(gs_gap_source_npy(path, &src, &e), GS_ERR_FORMAT);
    remove(path);
    free(g);
    ts_fx_free(&f);
}

/* gs_run_precomp_flags: L_Q only for the methods that read it, the sparse
 * parts' factors only for the primal forms and for x or the primal
 * certificate; auto needs neither. */
GS_TEST(precomp_flags_follow_the_method)
{
    const unsigned lq = GS_PRECOMP_DEFER_LQ, sp = GS_PRECOMP_DEFER_SPARSE;
    gs_solve_opts o;
    gs_solve_default_opts(&o);
    o.method = GS_METHOD_AUTO;
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)(lq | sp));
    o.method = GS_METHOD_GI;
    o.form = GS_FORM_DEFAULT; /* relative */
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)(lq | sp));
    o.form = GS_FORM_DUAL;
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)sp);
    o.form = GS_FORM_PRIMAL;
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)lq);
    o.method = GS_METHOD_IPM;
    o.form = GS_FORM_DEFAULT; /* primal: L_Q and K */
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), 0);
    o.form = GS_FORM_DUAL;
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)(lq | sp));
    o.method = GS_METHOD_NPM;
    o.form = GS_FORM_DEFAULT; /* dual: L_Q */
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)sp);
    o.method = GS_METHOD_GI;
    o.form = GS_FORM_RELATIVE;
    o.want_x = 1;
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)lq);
    o.want_x = 0;
    o.primal_cert = 1;
    GS_CHECK_INT((int)gs_run_precomp_flags(&o), (int)lq);
}

/* gs_solve_reads_k: the primal forms and the primal certificate, never auto
 * nor x (the factors give it). */
GS_TEST(reads_k_follows_the_method)
{
    gs_solve_opts o;
    gs_solve_default_opts(&o);
    GS_CHECK(!gs_solve_reads_k(&o)); /* auto */
    o.want_x = 1;
    GS_CHECK(!gs_solve_reads_k(&o));
    const struct { gs_method m; gs_form f; int k; } cases[] = {
        {GS_METHOD_GI, GS_FORM_DEFAULT, 0}, {GS_METHOD_GI, GS_FORM_DUAL, 0},
        {GS_METHOD_GI, GS_FORM_PRIMAL, 1},  {GS_METHOD_IPM, GS_FORM_DEFAULT, 1},
        {GS_METHOD_IPM, GS_FORM_DUAL, 0},   {GS_METHOD_NPM, GS_FORM_PRIMAL, 1},
        {GS_METHOD_NPM, GS_FORM_DEFAULT, 0}, {GS_METHOD_LEMKE, GS_FORM_DEFAULT, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        o.method = cases[i].m;
        o.form = cases[i].f;
        GS_CHECK_MSG(gs_solve_reads_k(&o) == cases[i].k, "case %zu", i);
    }
    o.method = GS_METHOD_GI;
    o.form = GS_FORM_RELATIVE;
    o.primal_cert = 1;
    GS_CHECK(gs_solve_reads_k(&o));
}

/* gs_run_factors with release_k: a build releases the blocks after saving
 * the file, a load releases them before reading it (it needs only the
 * hash); both give the factors of a run that keeps them, bit for bit. */
GS_TEST(run_factors_release_the_blocks)
{
    char path[512];
    gs_test_tmp_path(path, sizeof path, "release_k.factors");
    remove(path);
    gs_error e;
    gs_model *keep = tm_random(2, 7, 2, 51), *built = tm_random(2, 7, 2, 51);
    gs_model *loaded_mdl = tm_random(2, 7, 2, 51);
    GS_CHECK_INT(gs_model_validate(keep, &e), GS_OK);
    GS_CHECK_INT(gs_model_validate(built, &e), GS_OK);
    GS_CHECK_INT(gs_model_validate(loaded_mdl, &e), GS_OK);
    char h0[GS_HASH_HEX], h[GS_HASH_HEX];
    gs_model_hash(keep, h0);
    gs_precomp *p_keep = NULL, *p_built = NULL, *p_loaded = NULL;
    int loaded = -1;
    GS_CHECK_INT(gs_run_factors(keep, NULL, 0, 0, &p_keep, &loaded, &e), GS_OK);
    GS_CHECK(!gs_model_dense_released(keep));
    GS_CHECK_INT(gs_run_factors(built, path, 0, 1, &p_built, &loaded, &e), GS_OK);
    GS_CHECK_INT(loaded, 0);
    GS_CHECK(gs_model_dense_released(built));
    GS_CHECK_INT(gs_run_factors(loaded_mdl, path, 0, 1, &p_loaded, &loaded, &e), GS_OK);
    GS_CHECK_INT(loaded, 1);
    GS_CHECK(gs_model_dense_released(loaded_mdl));
    gs_model_hash(loaded_mdl, h);
    GS_CHECK_STR(h, h0);
    const size_t mm = (size_t)keep->m * (size_t)keep->m;
    GS_CHECK(memcmp(p_keep->Q, p_built->Q, mm * sizeof(double)) == 0);
    GS_CHECK(memcmp(p_keep->Q, p_loaded->Q, mm * sizeof(double)) == 0);
    for (int b = 0; b < keep->n_parts; b++) {
        const size_t nb = (size_t)keep->parts[b].ndof;
        GS_CHECK(memcmp(p_keep->L[b], p_loaded->L[b], nb * nb * sizeof(double)) == 0);
    }
    gs_precomp_free(p_keep);
    gs_precomp_free(p_built);
    gs_precomp_free(p_loaded);
    gs_model_free(keep);
    gs_model_free(built);
    gs_model_free(loaded_mdl);
    remove(path);
}

GS_TEST_MAIN()
