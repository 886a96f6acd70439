/*
 * gapsim_batch_main.c -- `gapsim-batch`: solve a gap cloud offline, without
 * the daemon: read a model (JSON + .npy blocks), precompute, solve every gap
 * of a k x m .npy cloud with any solver (solvers/solver.h; default auto) on
 * the cloud runner (runner/runner.h: one solve per core, each thread with its
 * own workspace, OpenBLAS single-threaded inside each), print the stage times
 * and a cloud summary (runner/cloudstats.h, the statistics of gapsimd's job
 * summary), optionally write the residual gaps (k x m .npy) and the summary's
 * JSON.
 * The daemon (server/) does the same as a service, gapsim-mpi (mpi/) on a
 * cluster; all three run on the same runner.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cloudstats.h"
#include "fileio.h"
#include "tmpguard.h"
#include "generator.h"
#include "json_parse.h"
#include "kkt.h"
#include "linalg.h"
#include "memlimit.h"
#include "model_json.h"
#include "npy.h"
#include "precompute.h"
#include "progress.h"
#include "runargs.h"
#include "runner.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gapsim-batch MODEL.json --gaps GAPS.npy [options]\n"
            "Solve every gap vector (rows of a k x m .npy) of a gap cloud on the model.\n"
            "  --gaps FILE       k x m float64 .npy, one gap vector (mm) per row\n"
            "  --fraction F      install round(F * candidates) fasteners, evenly spread (0)\n"
            "  --limit K         solve only the first K gaps\n"
            "  --threads T       worker threads (default: number of cores)\n"
            "  --method M        auto (default), gi, npm, ipm, lemke, ref (docs/solvers.md)\n"
            "  --form F          dual, relative, primal (default: the method's own)\n"
            "  --tol T           optimality tolerance, relative to max(1, |g|) (1e-10;\n"
            "                    the KKT certificate of every result is taken at it)\n"
            "  --out FILE        write the residual gaps (k x m .npy)\n"
            "  --summary FILE    write the cloud statistics as JSON (the object of gapsimd's\n"
            "                    GET /v1/jobs/{id}/summary; docs/api.md)\n"
            "  --factors FILE    load the saved factors from FILE, or compute and save them\n"
            "                    there (the same factors give bit-identical results in\n"
            "                    gapsim-batch, gapsim-mpi and gapsimd)\n"
            "  --threshold MM    report the share of gaps whose max residual exceeds MM (0.1)\n"
            "  --chain C         off (default): every gap cold, in index order, bit-reproducible;\n"
            "                    on: each worker takes windows of gaps in nearest-neighbour\n"
            "                    order, each warm from the gap it solved before; auto: ordered,\n"
            "                    warm or cold, whichever each worker measures faster\n"
            "                    (docs/solvers.md; results then agree to round-off)\n"
            "  --window N        gaps per window when chaining (64)\n"
            "  --progress        show the progress on stderr also when it is not a terminal\n"
            "                    (a line a second); by default only a terminal shows it (a\n"
            "                    bar redrawn in place)\n"
            "  --no-progress     do not\n"
            "  -h, --help        this text\n"
            "Exit codes: 0 all gaps optimal and certified, 1 error (stdout not written\n"
            "included), 2 usage, 3 some gaps not optimal or failing the KKT certificate (the\n"
            "summary's kkt_failed). A signal (^C, SIGTERM) removes the temporary output files.\n");
}

/* stdout (the report) must have been written: a full disk or /dev/full is
 * an error (exit 1), not a silent 0. 0 if it was, else 1 with the reason on
 * stderr (once). */
static int stdout_failed(void)
{
    static int reported;
    errno = 0;
    const int bad = fflush(stdout) != 0 || ferror(stdout);
    if (bad && !reported) {
        reported = 1;
        fprintf(stderr, "gapsim-batch: cannot write the report to stdout: %s\n",
                strerror(errno ? errno : EIO));
    }
    return bad;
}

static int fail(const char *what, const gs_error *e)
{
    fprintf(stderr, "gapsim-batch: %s: %s%s%s: %s\n", what, gs_err_name(e->code),
            e->field[0] ? " at " : "", e->field, e->msg);
    return 1;
}

/* The cloud statistics of the k results in ms (runner/cloudstats.h: the
 * body of gapsimd's GET /v1/jobs/{id}/summary), each with its initial gaps
 * from src, as JSON in b. The contact forces are not kept here: the fields
 * that need them count every pair (as gapsim-mpi's). O(k m). */
static gs_err cloud_summary(const gs_mem_sink *ms, const gs_gap_source *src, int k,
                            double threshold, double tol, gs_buf *b, gs_error *err)
{
    const int m = ms->m;
    gs_cstats *s = gs_cstats_new(m, k, threshold, 20, err);
    double *g = malloc(sizeof(double) * (size_t)m);
    gs_err rc = s && g ? GS_OK : gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    for (int pass = 1; !rc && pass <= (gs_cstats_second_pass(s) ? 2 : 1); pass++)
        for (int r = 0; !rc && r < k; r++) {
            const gs_solve_info *in = &ms->info[r];
            if (pass == 1 && (rc = src->read(src->ctx, r, g, err)) != GS_OK)
                break;
            gs_cstats_row row = {.w = ms->W + (size_t)r * (size_t)m, .g = g, .m = m,
                                 .time = in->time, .n_act = in->n_act,
                                 .iterations = in->iterations, .warm_used = in->warm_used,
                                 .crossover = in->crossover,
                                 .kkt_failed = !gs_kkt_pass(&in->kkt, tol),
                                 .status = gs_status_name(in->status),
                                 .method = gs_method_name(in->method),
                                 .form = gs_form_name(in->form)};
            if (pass == 1)
                rc = gs_cstats_add(s, &row, err);
            else
                gs_cstats_add2(s, &row);
        }
    if (!rc)
        rc = gs_cstats_json(s, "", "", "done", k, b, err);
    if (!rc && b->oom)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory for the summary");
    gs_cstats_free(s);
    free(g);
    return rc;
}

/* The summary lines, from the statistics' JSON. The residual, contact and
 * n_act lines are of the answers (status optimal: runner/cloudstats.h), the
 * others of every gap. */
static void print_summary(const cJSON *sj, gs_method method, double tol, int chained, int k,
                          double wall, long threads)
{
    const cJSON *pm = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(sj, "pairs"), "mean");
    double mean_w = 0.0; /* over every pair of every gap: the mean of the pairs' means */
    const int m = cJSON_GetArraySize(pm);
    for (const cJSON *v = pm ? pm->child : NULL; v; v = v->next)
        mean_w += v->valuedouble / m;
    const double share = gs_json_num(sj, "share_gaps_above", NULL, 0.0);
    const int count = (int)gs_json_num(sj, "count", NULL, 0.0);
    const int optimal = (int)gs_json_num(sj, "statuses", "optimal", 0.0);
    printf("summary    gaps solved          %d (%d optimal)\n", count, optimal);
    if (optimal != count) { /* which statuses the others ended in (docs/solvers.md) */
        printf("           statuses            ");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(sj, "statuses");
        for (const cJSON *v = st ? st->child : NULL; v; v = v->next)
            printf("%s %s %d", v == st->child ? "" : ",", v->string, (int)v->valuedouble);
        printf("\n");
    }
    const int uncertified = (int)gs_json_num(sj, "kkt_failed", NULL, 0.0);
    if (uncertified) /* docs/solvers.md, "Accuracy and the model's scale" */
        printf("           KKT certificate      %d of %d gaps fail it at tol %g (a status other "
               "than optimal, or the model's scale limits the accuracy)\n", uncertified, k, tol);
    const int answers = (int)gs_json_num(sj, "answers", NULL, 0.0);
    if (answers == 0) /* the summary's figures of w, lambda, n_act are null then */
        printf("           no answer            none of the %d gaps is optimal: no residual, "
               "contact or n_act figures\n", count);
    else if (answers != count) /* another status's w and lambda are no answer */
        printf("           statistics below     of the %d optimal gaps, the answers (the other "
               "%d left out)\n", answers, count - answers);
    if (answers > 0) {
        printf("           residual gap         mean %.4f mm, max %.4f mm\n", mean_w,
               gs_json_num(sj, "max_residual", "max", 0.0));
        printf("           max residual per gap median %.4f mm, p95 %.4f mm\n",
               gs_json_num(sj, "max_residual", "median", 0.0),
               gs_json_num(sj, "max_residual", "p95", 0.0));
        printf("           gaps with max > %.3g mm %d (%.1f%%)\n",
               gs_json_num(sj, "threshold", NULL, 0.0), (int)lround(share * answers),
               100.0 * share);
        printf("           pairs in contact     mean %.1f, min %d, max %d\n",
               gs_json_num(sj, "n_act", "mean", 0.0), (int)gs_json_num(sj, "n_act", "min", 0.0),
               (int)gs_json_num(sj, "n_act", "max", 0.0));
    }
    printf("           time per solve       mean %.2f ms, median %.2f ms, max %.2f ms\n",
           gs_json_num(sj, "time_ms", "mean", 0.0), gs_json_num(sj, "time_ms", "median", 0.0),
           gs_json_num(sj, "time_ms", "max", 0.0));
    printf("           solver               %s:", gs_method_name(method));
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(sj, "solvers");
    for (const cJSON *v = sv ? sv->child : NULL; v; v = v->next)
        printf(" %s x%d", v->string, v->valueint);
    printf("\n");
    if (chained)
        printf("           warm started         %d of %d gaps\n",
               (int)gs_json_num(sj, "warm_started", NULL, 0.0), k);
    const int crossed = (int)gs_json_num(sj, "crossovers", NULL, 0.0);
    if (crossed) /* docs/solvers.md: NPM's stall cap, GI dual's polish cap, Lemke's polish */
        printf("           finished by GI       %d of %d gaps (the method's own loop did not "
               "finish)\n",
               crossed, k);
    printf("           throughput           %.1f solves/s on %ld threads (%.2f s wall)\n",
           k / wall, threads, wall);
}

/* The cloud's progress on stderr (core/progress.h), from the workers'
 * commits (the runner's ctl.progress): one report at a time. O(1) per
 * committed chunk. */
typedef struct {
    pthread_mutex_t mu;
    gs_rows_progress rp;
    long long done;
} batch_progress;

static void on_progress(void *ctx, int slot, int rows)
{
    batch_progress *bp = ctx;
    (void)slot;
    pthread_mutex_lock(&bp->mu);
    bp->done += rows;
    gs_rows_progress_show(&bp->rp, bp->done, bp->done == bp->rp.total);
    pthread_mutex_unlock(&bp->mu);
}

/* The run's memory against the process's limits, before the
 * precomputation: what it will hold (the model's blocks, their factors,
 * Q and L_Q as gapsimd estimates an upload, and the k x m residual gaps)
 * must fit in 3/4 of the smallest limit (physical memory, cgroup,
 * RLIMIT_AS, RLIMIT_DATA; the rest for the buffers, the threads and the
 * gaps being read), and what it will map beyond what it maps now (the
 * factors but for blocks factored in place, Q, L_Q, the residual gaps,
 * OpenBLAS's buffer, stack and arena per BLAS thread) must be mappable
 * now. 0, or 1 with the error on stderr. O(n_parts) + one mmap. */
static int check_memory(const gs_model *mdl, const char *model_path, const gs_solve_opts *sopts,
                        int k)
{
    gs_memlimit ml;
    gs_memlimit_get(&ml);
    const double mib = 1048576.0, results = (double)k * (double)mdl->m * sizeof(double),
                 ahead = (double)gs_precomp_bytes_ahead(mdl);
    const double need = (double)gs_model_bytes(mdl) + ahead + results;
    double dense = 0; /* the dense blocks, factored in place unless the method reads K */
    int sparse = 0;
    for (int b = 0; b < mdl->n_parts; b++) {
        sparse |= mdl->parts[b].Ksp != NULL;
        if (mdl->parts[b].K)
            dense += (double)mdl->parts[b].ndof * (double)mdl->parts[b].ndof * sizeof(double);
    }
    const char *what = sparse ? " and sparse matrices, the sparse factors not counted" : "";
    if (ml.bytes && need > 0.75 * (double)ml.bytes) {
        fprintf(stderr, "gapsim-batch: %s: too_large: the run needs about %.0f MiB (the model's "
                "blocks%s, their factors, Q and L_Q: m = %d pairs; %d x %d residual gaps), more "
                "than 3/4 of the %.0f MiB this process may use (%s): raise that limit, or run "
                "on a larger machine (or fewer gaps: --limit)\n", model_path, need / mib, what,
                mdl->m, k, mdl->m, (double)ml.bytes / mib, ml.source);
        return 1;
    }
    const int blas = gs_blas_get_threads() > 0 ? gs_blas_get_threads() : 1;
    double more = ahead - (gs_solve_reads_k(sopts) ? 0.0 : dense) + results +
                  (double)blas * (double)GS_MEMLIMIT_BLAS_THREAD_BYTES;
    if (more < 0)
        more = 0;
    if ((ml.as || ml.data) && !gs_memlimit_can_map((unsigned long long)more)) {
        fprintf(stderr, "gapsim-batch: %s: too_large: the run needs about %.0f MiB more of "
                "address space than it maps now (the factors, Q and L_Q: m = %d pairs; %d x "
                "%d residual gaps; %.0f MiB for each of %d BLAS thread%s), beyond the limit of "
                "%.0f MiB (%s): raise that limit (or run with fewer BLAS threads: "
                "OPENBLAS_NUM_THREADS)\n", model_path, more / mib, mdl->m, k, mdl->m,
                (double)GS_MEMLIMIT_BLAS_THREAD_BYTES / mib, blas, blas == 1 ? "" : "s",
                (double)(ml.as && (!ml.data || ml.as <= ml.data) ? ml.as : ml.data) / mib,
                ml.as && (!ml.data || ml.as <= ml.data) ? "RLIMIT_AS (ulimit -v)"
                                                       : "RLIMIT_DATA (ulimit -d)");
        return 1;
    }
    return 0;
}

/* A numeric option's value refused: the message, exit status 2. */
int main(int argc, char **argv)
{
    gs_run_args a;
    gs_run_args_defaults(GS_RUNNER_BATCH, &a);
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    a.threads = cores < 1 ? 1 : cores > 1024 ? 1024 : cores;
    a.progress = isatty(STDERR_FILENO);
    char msg[512];
    const int urc = gs_run_args_parse(GS_RUNNER_BATCH, argc, argv, &a, msg, sizeof msg);
    if (urc == 1) {
        usage(stdout);
        return 0;
    }
    if (urc != 0) {
        if (argc == 1)
            usage(stderr);
        else
            fprintf(stderr, "gapsim-batch: %s (--help lists the options)\n", msg);
        return 2;
    }
    const char *model_path = a.model, *gaps_path = a.gaps, *out_path = a.out,
               *factors_path = a.factors, *summary_path = a.summary;
    const gs_solve_opts sopts = a.sopts;
    const double fraction = a.fraction, threshold = a.threshold;
    const long limit = a.limit, threads = a.threads, window = a.window;
    const gs_chain_mode chain = a.chain;
    const int progress = a.progress;
    gs_error e;
    /* no output over an input or another output (runner.h), before anything is made */
    gs_run_files files = {.model = model_path, .gaps = gaps_path, .factors = factors_path,
                                .out = out_path, .summary = summary_path};
    if (gs_run_check_files(&files, &e) != GS_OK)
        return fail("outputs", &e);
    /* the outputs are opened before the work: an unwritable path costs no solve */
    gs_wfile out_wf = {0}, sum_wf = {0};
    /* their temporary files removed when a signal ends the run (core/tmpguard.h) */
    gs_tmpguard_install();
    if ((out_path && gs_tmpguard_open(&out_wf, out_path, &e) != GS_OK) ||
        (summary_path && gs_tmpguard_open(&sum_wf, summary_path, &e) != GS_OK)) {
        const char *bad = out_path && !out_wf.fp ? out_path : summary_path;
        gs_tmpguard_abort(&out_wf);
        return fail(bad, &e);
    }

    gs_model_limits lim;
    gs_model_limits_default(&lim);
    gs_model *mdl = NULL;
    double t0 = gs_now();
    gs_err mrc = gs_model_read_json(model_path, &lim, &mdl, &e);
    const char *what = model_path;
    if (mrc == GS_OK) { /* again, with the files MODEL.json names: no output over them */
        files.model_files = mdl->files;
        files.n_model_files = mdl->n_files;
        what = "outputs";
        mrc = gs_run_check_files(&files, &e);
    }
    if (mrc != GS_OK) {
        gs_tmpguard_abort(&out_wf);
        gs_tmpguard_abort(&sum_wf);
        gs_model_free(mdl);
        return fail(what, &e);
    }
    double t_read = gs_now() - t0;
    printf("model      %s: n = %d unknowns, m = %d pairs, %d parts, %d fastener candidates, "
           "%s joint (read in %.2f s)\n",
           mdl->name[0] ? mdl->name : model_path, mdl->n, mdl->m, mdl->n_parts, mdl->n_fast,
           mdl->joint == GS_JOINT_SANDWICH ? "sandwich" : "simple", t_read);
    char kernel[96];
    printf("blas       OpenBLAS kernel %s\n", gs_blas_describe(kernel, sizeof kernel));

    gs_run run = {.opts = sopts, .n_patterns = 1, .chain = chain};
    gs_mem_sink ms = {0};
    gs_precomp *pc = NULL;
    unsigned char *inst = NULL;
    double *load = NULL;
    int rc = 0, loaded = 0;
    /* the gaps before the precomputation: a wrong file costs no factorization */
    if (gs_gap_source_npy(gaps_path, &run.src, &e) != GS_OK) {
        rc = fail(gaps_path, &e);
        goto out;
    }
    if (run.src.m != mdl->m) {
        fprintf(stderr, "gapsim-batch: %s: dimension_mismatch: %d columns, the model has %d "
                        "pairs\n", gaps_path, run.src.m, mdl->m);
        rc = 1;
        goto out;
    }
    if (gs_gap_source_limit(&run.src, limit, gaps_path, &e) != GS_OK) {
        rc = fail(gaps_path, &e);
        goto out;
    }
    const int k = run.src.k;
    /* what the run will hold, against what this process may use, before
     * any BLAS call (core/memlimit.h): under `ulimit -v` OpenBLAS spins
     * forever in blas_memory_alloc when no address space is left for its
     * buffers, in a cgroup the OOM killer ends the run */
    if (check_memory(mdl, model_path, &sopts, k) != 0) {
        rc = 1;
        goto out;
    }
    /* L_Q only for the methods that read it, as gapsimd's auto until its
     * L_Q is there; the stiffness blocks go once factored unless the method
     * reads K itself */
    if (gs_run_factors(mdl, factors_path, gs_run_precomp_flags(&sopts), !gs_solve_reads_k(&sopts),
                       &pc, &loaded, &e) != GS_OK) {
        rc = fail(factors_path ? factors_path : "precomputation", &e);
        goto out;
    }
    run.pc = pc;
    if (loaded)
        printf("factors    loaded from %s%s\n", factors_path,
               gs_precomp_has_part_factors(pc)
                   ? ""
                   : "; sparse parts not factored: this method does not solve with K");
    const int have_lq = gs_precomp_has_lq(pc);
    printf("precompute %.2f s: Cholesky of K %.2f s, Q = A'K^-1 A %.2f s, loads %.3f s, "
           "Cholesky of Q %.2f s%s, condition estimates %.2f s\n",
           pc->t.total, pc->t.factor_K, pc->t.build_Q, pc->t.loads, pc->t.factor_Q,
           have_lq ? "" : " (not needed by this method)", pc->t.cond);
    if (have_lq)
        printf("           cond_1(K) ~ %.3g, cond_1(Q) ~ %.3g\n", pc->cond_K, pc->cond_Q);
    else
        printf("           cond_1(K) ~ %.3g\n", pc->cond_K);

    inst = calloc((size_t)mdl->n_fast + 1, 1);
    load = malloc((size_t)mdl->m * sizeof *load);
    if (!inst || !load || gs_mem_sink_init(&ms, k, mdl->m, 0, &run.sink, &e) != GS_OK) {
        fprintf(stderr, "gapsim-batch: out of memory for %d gaps\n", k);
        rc = 1;
        goto out;
    }
    gs_error perr;
    if (gs_gen_pattern(mdl, fraction, inst, &perr) != GS_OK) {
        fprintf(stderr, "gapsim-batch: %s\n", perr.msg);
        rc = 1;
        goto out;
    }
    gs_model_pattern_load(mdl, inst, load);
    run.loads = load;
    int n_inst = 0;
    for (int i = 0; i < mdl->n_fast; i++)
        n_inst += inst[i];
    gs_blas_set_threads(1); /* task parallelism: one solve per core */
    const char *form_name = gs_form_name(sopts.form);
    printf("cloud      %d gaps, %d of %d fasteners installed, solver %s (%s) on %ld threads, "
           "chain %s\n", k, n_inst, mdl->n_fast, gs_method_name(sopts.method), form_name, threads,
           gs_chain_mode_name(chain));
    fflush(stdout);
    t0 = gs_now();
    batch_progress bp = {.done = 0};
    pthread_mutex_init(&bp.mu, NULL);
    gs_rows_progress_init(&bp.rp, 0, k, isatty(STDERR_FILENO));
    if (progress)
        run.ctl = (gs_run_control){.progress = on_progress, .ctx = &bp};
    gs_run_pool *pool = NULL;
    gs_err src = gs_run_start(&run, (int)threads, chain == GS_CHAIN_OFF ? 1 : (int)window, NULL,
                              &pool, &e);
    if (!src)
        src = gs_run_wait(pool, &e);
    double wall = gs_now() - t0;
    gs_progress_end(&bp.rp.pg);
    pthread_mutex_destroy(&bp.mu);
    if (src != GS_OK) {
        if (strncmp(e.field, "gaps", 4) != 0) /* the source names its own "gaps[i][j]" */
            gs_error_prefix_field(&e, "gaps");
        rc = fail("solve", &e);
        goto out;
    }
    /* the summary: the cloud statistics gapsimd's and gapsim-mpi's summaries are */
    gs_buf sb = {0};
    cJSON *sj = NULL;
    gs_err serr = cloud_summary(&ms, &run.src, k, threshold, sopts.tol, &sb, &e);
    if (!serr && !(sj = gs_json_parse(sb.p, sb.len, NULL, NULL)))
        serr = gs_errorf(&e, GS_ERR_NOMEM, "", "out of memory reading the summary back");
    if (serr) {
        gs_buf_free(&sb);
        rc = fail("summary", &e);
        goto out;
    }
    print_summary(sj, sopts.method, sopts.tol, chain != GS_CHAIN_OFF, k, wall, threads);
    const int optimal = (int)gs_json_num(sj, "statuses", "optimal", 0.0);
    const int uncertified = (int)gs_json_num(sj, "kkt_failed", NULL, 0.0);
    cJSON_Delete(sj);
    if (stdout_failed()) { /* the report lost: a failed run, no output left behind */
        gs_buf_free(&sb);
        rc = 1;
        goto out;
    }
    if (summary_path) {
        gs_err wrc = gs_wfile_write(&sum_wf, sb.p, sb.len, &e);
        if (!wrc)
            wrc = gs_tmpguard_commit(&sum_wf, &e);
        if (wrc)
            rc = fail(summary_path, &e);
        else
            printf("           summary written to %s\n", summary_path);
    }
    gs_buf_free(&sb);
    if (out_path) {
        size_t shape[2] = {(size_t)k, (size_t)mdl->m};
        if (gs_npy_write_wfile(&out_wf, ms.W, 2, shape, GS_NPY_ROW_MAJOR, &e) != GS_OK ||
            gs_tmpguard_commit(&out_wf, &e) != GS_OK)
            rc = fail(out_path, &e);
        else
            printf("           residual gaps written to %s\n", out_path);
    }
    if (rc == 0 && (optimal != k || uncertified))
        rc = 3;
out:
    gs_tmpguard_abort(&out_wf); /* no-op after a commit */
    gs_tmpguard_abort(&sum_wf);
    if (stdout_failed())
        rc = 1;
    free(inst);
    free(load);
    gs_mem_sink_free(&ms);
    gs_gap_source_close(&run.src);
    gs_precomp_free(pc);
    gs_model_free(mdl);
    return rc;
}
