/*
 * gapsim_mpi_main.c -- `gapsim-mpi`: a gap cloud (or a pattern sweep: many
 * fastener patterns x one cloud) on many nodes with MPI, on the cloud runner
 * (runner/runner.h). Every rank reads the model and its gaps from shared
 * files; rank 0 precomputes (or loads --factors) and broadcasts the factors
 * (or every rank loads them with --shared-factors); chunks of rows are handed
 * out on demand by rank 0; every rank writes its rows in place into one .npy
 * (MPI-IO) and marks them in the sidecar OUT.run, so a rerun completes a
 * killed run; rank 0 writes the summary (the statistics of gapsimd's job
 * summary, runner/cloudstats.h). Every failure is agreed on collectively
 * (gm_agree): all ranks stop with the failing rank's message, none hangs.
 * docs/scale-out.md. Exit codes: 0 all optimal, 1 error, 2 usage, 3 some
 * gaps not optimal.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "cloudstats.h"
#include "fileio.h"
#include "gm.h"
#include "hash.h"
#include "linalg.h"
#include "model_json.h"
#include "npy.h"
#include "runargs.h"
#include "pattern.h"
#include "precomp_io.h"

#define MAX_PATTERNS 100000

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np R gapsim-mpi MODEL.json --gaps GAPS.npy --out W.npy [options]\n"
            "Solve a gap cloud (k x m .npy), or a pattern sweep, on R MPI ranks.\n"
            "  --gaps FILE        k x m float64 .npy, one gap vector (mm) per row (all ranks read it)\n"
            "  --out FILE         residual gaps, rows x m .npy written in place (a regular file,\n"
            "                     no input); FILE.run is its completion map (a rerun with the\n"
            "                     same inputs skips the chunks done and still on disk)\n"
            "  --patterns FILE    pattern sweep: JSON array of {\"fasteners\": [..] | \"all\" | \"none\"}\n"
            "                     or {\"fastener_fraction\": F}; row p k + i = gap i under pattern p\n"
            "  --fraction F       one pattern: round(F * candidates) fasteners, spread (0)\n"
            "  --limit K          only the first K gaps (1 to 2^31-1)\n"
            "  --threads T        solver threads per rank (1: one rank per core)\n"
            "  --chunk C          rows per chunk handed out (16)\n"
            "  --chain C          off (default: bit-reproducible), on or auto: each worker solves\n"
            "                     a chunk in nearest-neighbour order, each gap warm from the one\n"
            "                     before (auto: where measured faster); use a larger --chunk\n"
            "  --method M         auto (default), gi, npm, ipm, lemke, ref (docs/solvers.md)\n"
            "  --form F           dual, relative, primal (default: the method's own)\n"
            "  --tol T            optimality tolerance (1e-10)\n"
            "  --factors FILE     rank 0 loads the saved factors (core/precomp_io.h) from FILE, or\n"
            "                     computes and saves them there when FILE does not exist\n"
            "  --shared-factors   every rank loads --factors FILE itself (no broadcast)\n"
            "  --summary FILE     summary JSON (default OUT.summary.json; an array for --patterns;\n"
            "                     none: no summary file, which saves rank 0 one or two reads of\n"
            "                     OUT; the count of rows not optimal is printed all the same)\n"
            "  --threshold MM     summary threshold (0.1)\n"
            "  --bins N           summary histogram bins (20)\n"
            "  --fresh            ignore a previous run's output and start over\n"
            "  --sync             flush each chunk's rows to disk before marking it done (a\n"
            "                     restart then survives a node crash, at one fsync per chunk)\n"
            "  --progress         rank 0 shows the rows done on stderr also when it is not a\n"
            "                     terminal (a line a second); by default only a terminal shows\n"
            "                     it (a bar); --no-progress\n"
            "  -h, --help         this text\n"
            "Exit codes: 0 all gaps optimal and certified, 1 error (any rank), 2 usage, 3 some\n"
            "gaps not optimal or failing the KKT certificate.\n");
}

/* The command line (runner/runargs.h, shared with gapsim-batch): 0 go on,
 * 1 help, 2 usage (the message printed by rank 0 only). */
static int parse_args(int argc, char **argv, gs_run_args *a)
{
    gs_run_args_defaults(GS_RUNNER_MPI, a);
    a->progress = isatty(STDERR_FILENO);
    char msg[512];
    const int rc = gs_run_args_parse(GS_RUNNER_MPI, argc, argv, a, msg, sizeof msg);
    if (rc == 2 && gm_rank() == 0) {
        if (argc == 1)
            usage(stderr);
        else
            fprintf(stderr, "gapsim-mpi: %s (--help lists the options)\n", msg);
    }
    return rc;
}

/* The summary's path: --summary, else OUT.summary.json; NULL for none. */
static const char *summary_path(const gs_run_args *a, char *buf, size_t cap)
{
    if (a->summary && !strcmp(a->summary, "none"))
        return NULL;
    if (a->summary)
        return a->summary;
    snprintf(buf, cap, "%s.summary.json", a->out);
    return buf;
}

/* The files the run names (runner.h); the model's own once it is read (mdl). */
static gs_run_files run_files(const gs_run_args *a, const char *summary, const char *side,
                              const gs_model *mdl)
{
    return (gs_run_files){.model = a->model, .gaps = a->gaps, .patterns = a->patterns,
                          .factors = a->factors, .out = a->out, .side = side,
                          .summary = summary, .model_files = mdl ? mdl->files : NULL,
                          .n_model_files = mdl ? mdl->n_files : 0};
}

/* Rank 0, before any work: no output is an input or another output
 * (runner.h gs_run_check_files); --out is a regular file, or a new name:
 * the results are written in place with MPI-IO and a rerun resumes from
 * them, which a device or a FIFO cannot do; --out (and its completion map
 * beside it) and the summary can be written (fileio.h gs_wfile_probe:
 * nothing is left behind). A handful of file system calls. */
static gs_err check_outputs(const gs_run_args *a, const char *summary, gs_error *e)
{
    char side[4200];
    snprintf(side, sizeof side, "%s.run", a->out);
    const gs_run_files f = run_files(a, summary, side, NULL);
    gs_err rc = gs_run_check_files(&f, e);
    struct stat st;
    const int exists = stat(a->out, &st) == 0;
    if (!rc && exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        rc = gs_errorf(e, GS_ERR_INVALID, "out", "--out '%s' is not a regular file: gapsim-mpi "
                       "writes the results in place (MPI-IO) and resumes from them; name a "
                       "file (gapsim-batch writes into devices and pipes)", a->out);
    if (!rc)
        rc = gs_wfile_probe(a->out, e); /* its directory: a directory, missing, read-only */
    if (!rc && exists && access(a->out, W_OK) != 0) /* written in place, not replaced */
        rc = gs_errorf(e, GS_ERR_IO, "out", "cannot write '%s': %s", a->out, strerror(errno));
    if (!rc && summary)
        rc = gs_wfile_probe(summary, e);
    return rc;
}

/* Rank 0, once the model is read, before any work: no output is one of the
 * files MODEL.json references (its blocks, f), which check_outputs could
 * not know. */
static gs_err check_model_files(const gs_run_args *a, const char *summary, const gs_model *mdl,
                                gs_error *e)
{
    char side[4200];
    snprintf(side, sizeof side, "%s.run", a->out);
    const gs_run_files f = run_files(a, summary, side, mdl);
    return gs_run_check_files(&f, e);
}

/* Where the factors came from and what they cost, for rank 0's factors
 * line: a line that said only "ready" could not tell a load from a build,
 * and repeated a loaded file's stored build time as this run's. */
typedef struct {
    int loaded;     /* from --factors (every rank's own load with --shared-factors) */
    double t_get;   /* s: the build and save, or the load (the slowest rank's when shared) */
    double t_bcast; /* s */
    double bytes;   /* the broadcast's payload */
} fac_info;

/* The precomputation on every rank (see the options): L_Q only where the
 * method reads it, the sparse parts factored on the other ranks only where
 * the method solves with K (runner.h gs_run_precomp_flags). *fi: for the
 * factors line (fac_info). */
static gs_err factors(const gs_run_args *a, gs_model *mdl, unsigned flags, gs_precomp **pc,
                      fac_info *fi, gs_error *err)
{
    gs_err rc = GS_OK;
    *fi = (fac_info){0};
    /* a method that never reads K itself: every rank holds the factors
     * without the stiffness blocks, released before they come (a load or
     * the broadcast needs only the model's hash and sizes) */
    const int release_k = !gs_solve_reads_k(&a->sopts);
    if (release_k && (a->shared || gm_rank() != 0))
        gs_model_release_dense(mdl, NULL);
    double t0 = gs_now();
    if (a->shared) {
        rc = gs_precomp_load_ex(mdl, a->factors, 0, flags, pc, err);
        const double t = gs_now() - t0;
        if ((rc = gm_agree(rc, a->factors, err)) != GS_OK)
            return rc;
        fi->loaded = 1;
        rc = gm_check(MPI_Reduce(&t, &fi->t_get, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
                      "the factors' load times", err);
        return gm_agree(rc, "the factors' load times", err);
    }
    if (gm_rank() == 0) /* the others sleep in the agreement meanwhile */
        rc = gs_run_factors(mdl, a->factors, flags, release_k, pc, &fi->loaded, err);
    fi->t_get = gs_now() - t0;
    if ((rc = gm_agree(rc, "the factors", err)) != GS_OK)
        return rc;
    t0 = gs_now();
    rc = gm_bcast_precomp(mdl, pc, flags, &fi->bytes, err);
    fi->t_bcast = gs_now() - t0;
    return gm_agree(rc, "broadcasting the factors", err);
}

/* Rank 0: the factors line (docs/scale-out.md): computed, computed and
 * saved to --factors, loaded from it by rank 0 and broadcast, or loaded by
 * every rank itself; and whether the sparse parts were factored (a load
 * leaves them unfactored where the method does not solve with K). */
static void print_factors(const gs_run_args *a, const fac_info *fi, const gs_model *mdl,
                          const gs_precomp *pc, unsigned flags)
{
    const char *no_lq = flags & GS_PRECOMP_DEFER_LQ ? "L_Q not needed by this method" : "";
    char how[4400];
    if (a->shared)
        snprintf(how, sizeof how, "every rank loaded %s itself (the slowest in %.2f s), no "
                 "broadcast%s%s%s", a->factors, fi->t_get, *no_lq ? " (" : "", no_lq,
                 *no_lq ? ")" : "");
    else if (fi->loaded)
        snprintf(how, sizeof how, "loaded from %s in %.2f s", a->factors, fi->t_get);
    else if (a->factors)
        snprintf(how, sizeof how, "computed and saved to %s (precomputation %.2f s)", a->factors,
                 pc->t.total);
    else
        snprintf(how, sizeof how, "computed (precomputation %.2f s)", pc->t.total);
    if (a->shared)
        printf("factors    %s\n", how);
    else
        printf("factors    %s, broadcast %.3f s (%.1f MB to %d ranks%s%s)\n", how, fi->t_bcast,
               1e-6 * fi->bytes, gm_size() - 1, *no_lq ? "; " : "", no_lq);
    if (gs_model_has_sparse(mdl) && (flags & GS_PRECOMP_DEFER_SPARSE))
        printf("           sparse parts %s: this method does not solve with K\n",
               gs_precomp_has_part_factors(pc) ? "factored on rank 0 only" : "not factored");
}

#define HASH_BLOCK ((size_t)1 << 20) /* bytes per read of the gaps file */

/* Stream into st the bytes of the gaps file the run reads: the header (dtype,
 * order, shape) and the first k rows of a C-order file; the whole file in
 * Fortran order, where every row spans it. A sample (the first and the last
 * gap) let a rerun after a change in the middle keep stale rows. O(k m)
 * bytes read once by rank 0 while the others wait: 0.15 s per GiB from the
 * page cache, 0.5-1.3 s per GiB from the disk (a 2-core VM, 2026-11;
 * docs/scale-out.md). */
static gs_err hash_gaps(XXH3_state_t *st, const char *path, int k, gs_error *err)
{
    gs_npy_file f = {.fd = -1};
    gs_err rc = gs_npy_open(path, (size_t)-1 / 8, &f, err);
    unsigned char *buf = rc ? NULL : malloc(HASH_BLOCK);
    if (!rc && !buf)
        rc = gs_errorf(err, GS_ERR_NOMEM, "gaps", "out of memory");
    struct stat sb;
    if (!rc && fstat(f.fd, &sb))
        rc = gs_errorf(err, GS_ERR_IO, "gaps", "%s: %s", path, strerror(errno));
    const size_t cols = f.info.ndim == 1 ? f.info.shape[0] : f.info.shape[1];
    const off_t end = rc ? 0 : f.info.fortran_order ? sb.st_size
                                : (off_t)(f.data_offset + (size_t)k * cols * sizeof(double));
    for (off_t off = 0; !rc && off < end;) {
        size_t want = end - off < (off_t)HASH_BLOCK ? (size_t)(end - off) : HASH_BLOCK;
        ssize_t n = pread(f.fd, buf, want, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = gs_errorf(err, GS_ERR_IO, "gaps", "%s: %s", path,
                           n < 0 ? strerror(errno) : "shorter than its header says");
            break;
        }
        XXH3_64bits_update(st, buf, (size_t)n);
        off += n;
    }
    free(buf);
    gs_npy_close(&f);
    return rc;
}

/* *h: XXH3-64 of what the results depend on (never 0): the model's content,
 * the loads, the solver options, the shapes and the gaps the run reads
 * (hash_gaps). O(P m + n_b^2 + k m). */
static gs_err fingerprint(const gs_run *run, const gs_model *mdl, const char *gaps_path,
                          int chunk, uint64_t *h, gs_error *err)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    XXH3_64bits_reset(st);
    char mh[GS_HASH_HEX];
    gs_model_hash(mdl, mh);
    XXH3_64bits_update(st, mh, sizeof mh);
    const gs_solve_opts *o = &run->opts;
    /* the chunk layout too: gap-major chunks (a chained sweep) hold other rows */
    const long long gap_major = run->chain != GS_CHAIN_OFF && run->n_patterns > 1;
    const long long w[] = {run->src.k, run->src.m, run->n_patterns, chunk, o->method, o->form,
                           o->max_iter, o->fasteners_first, o->npm_linear, o->linesearch,
                           o->ipm_linear, o->ipm_start, gap_major};
    XXH3_64bits_update(st, w, sizeof w);
    XXH3_64bits_update(st, &o->tol, sizeof o->tol);
    if (run->loads)
        XXH3_64bits_update(st, run->loads,
                           sizeof(double) * (size_t)run->n_patterns * (size_t)run->src.m);
    gs_err rc = hash_gaps(st, gaps_path, run->src.k, err);
    *h = XXH3_64bits_digest(st);
    *h = *h ? *h : 1;
    XXH3_freeState(st);
    return rc;
}

/* Rank 0: the summary of pattern p's k rows, read back from the output, with
 * each row's initial gaps (gaps: row i of the cloud) for the pairs opened by
 * fastening. The contact forces are not written by gapsim-mpi: the fields
 * that need them (pairs.lambda_mean, residual_histogram.in_contact, open
 * pairs only in the histogram) cover every pair here (docs/scale-out.md). */
static gs_err summary_one(const gm_out *o, const gs_gap_source *res, const gs_gap_source *gaps,
                          FILE *fs, int p, const char *job, const char *asm_id, const gs_run_args *a,
                          gs_buf *b, long long *not_optimal, gs_error *err)
{
    gs_cstats *s = gs_cstats_new(o->m, o->k, a->threshold, (int)a->bins, err);
    double *w = malloc(sizeof(double) * (size_t)o->m), *g = malloc(sizeof(double) * (size_t)o->m);
    gs_err rc = s && w && g ? GS_OK : gs_errorf(err, GS_ERR_NOMEM, "", "out of memory");
    for (int pass = 1; !rc && pass <= (gs_cstats_second_pass(s) ? 2 : 1); pass++) {
        for (int i = 0; !rc && i < o->k; i++) { /* O(k m) */
            long long row = (long long)p * o->k + i;
            gm_rec r;
            if (fseeko(fs, (off_t)(o->rec_off + row * (long long)sizeof r), SEEK_SET) ||
                fread(&r, sizeof r, 1, fs) != 1) {
                rc = gs_errorf(err, GS_ERR_IO, "out", "%s: cannot read record %lld", o->side,
                               row);
                break;
            }
            if ((rc = res->read(res->ctx, (int)row, w, err)) != GS_OK ||
                (pass == 1 && (rc = gaps->read(gaps->ctx, i, g, err)) != GS_OK))
                break;
            gs_cstats_row cr = {.w = w, .g = g, .m = o->m, .time = r.time, .n_act = r.n_act,
                                .iterations = r.iterations, .warm_used = r.flags & 1,
                                .crossover = (r.flags & 4) != 0,
                                .kkt_failed = (r.flags & 8) != 0,
                                .status = gs_status_name((gs_status)r.status),
                                .method = gs_method_name((gs_method)r.method),
                                .form = gs_form_name((gs_form)r.form)};
            if (pass == 1) {
                rc = gs_cstats_add(s, &cr, err);
                *not_optimal += r.status != GS_STATUS_OPTIMAL || (r.flags & 8);
            } else {
                gs_cstats_add2(s, &cr);
            }
        }
    }
    if (!rc)
        rc = gs_cstats_json(s, job, asm_id, "done", o->k, b, err);
    gs_cstats_free(s);
    free(w);
    free(g);
    return rc;
}

static gs_err write_summary(const gm_out *o, const gs_model *mdl, const gs_run_args *a,
                            const char *path, long long *not_optimal, gs_error *err)
{
    gs_gap_source res = {0}, gaps = {0};
    gs_err rc = gs_gap_source_npy(o->path, &res, err);
    if (!rc)
        rc = gs_gap_source_npy(a->gaps, &gaps, err);
    FILE *fs = rc ? NULL : fopen(o->side, "rb");
    if (!rc && !fs)
        rc = gs_errorf(err, GS_ERR_IO, "out", "cannot open %s", o->side);
    char mh[GS_HASH_HEX], job[24], asm_id[24];
    gs_model_hash(mdl, mh);
    snprintf(job, sizeof job, "j_%016llx", (unsigned long long)o->fingerprint);
    snprintf(asm_id, sizeof asm_id, "a_%.16s", mh);
    gs_buf b = {0};
    if (a->patterns)
        gs_buf_puts(&b, "[");
    for (int p = 0; !rc && p < o->n_patterns; p++) {
        if (p)
            gs_buf_puts(&b, ",\n");
        rc = summary_one(o, &res, &gaps, fs, p, job, asm_id, a, &b, not_optimal, err);
    }
    gs_buf_puts(&b, a->patterns ? "]\n" : "\n");
    if (!rc && b.oom)
        rc = gs_errorf(err, GS_ERR_NOMEM, "", "out of memory for the summary");
    gs_wfile wf = {0};
    if (!rc)
        rc = gs_wfile_open(&wf, path, err);
    if (!rc)
        rc = gs_wfile_write(&wf, b.p, b.len, err);
    if (!rc)
        rc = gs_wfile_commit(&wf, err);
    else
        gs_wfile_abort(&wf);
    gs_buf_free(&b);
    if (fs)
        fclose(fs);
    gs_gap_source_close(&res);
    gs_gap_source_close(&gaps);
    return rc;
}

/* Rank 0 without a summary: rows not optimal or failing the KKT certificate
 * at tol (not certified), from the records alone
 * (rows x 32 bytes read). */
static gs_err count_not_optimal(const gm_out *o, long long *count, gs_error *err)
{
    FILE *fs = fopen(o->side, "rb");
    if (!fs || fseeko(fs, (off_t)o->rec_off, SEEK_SET)) {
        if (fs)
            fclose(fs);
        return gs_errorf(err, GS_ERR_IO, "out", "cannot read %s", o->side);
    }
    gs_err rc = GS_OK;
    gm_rec r;
    for (long long i = 0; i < o->rows; i++) { /* O(rows) */
        if (fread(&r, sizeof r, 1, fs) != 1) {
            rc = gs_errorf(err, GS_ERR_IO, "out", "%s: cannot read record %lld", o->side, i);
            break;
        }
        *count += r.status != GS_STATUS_OPTIMAL || (r.flags & 8);
    }
    fclose(fs);
    return rc;
}

/* Rank 0, at a successful end: the count that decides the exit code (3
 * when any row is not optimal or not certified), with or without a summary
 * file (--summary none too: an exit 3 is always explained), and where the
 * results are. */
static void print_end(const gm_out *o, const char *summary, long long not_optimal, double wall)
{
    printf("summary    %s%s: %lld rows, %lld not optimal or not certified\n",
           summary ? summary : "not written", summary ? "" : " (--summary none)", o->rows,
           not_optimal);
    printf("results    %s (%lld x %d), completion map %s; %.2f s in all\n", o->path, o->rows,
           o->m, o->side, wall);
}

/* Everything after MPI_Init; returns the exit code (the same on every rank). */
static int run_main(int argc, char **argv)
{
    const int rank = gm_rank(), size = gm_size();
    gs_run_args a;
    int urc = parse_args(argc, argv, &a), any = 0;
    MPI_Allreduce(&urc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any == 1) { /* every rank read the same words */
        if (rank == 0)
            usage(stdout);
        return 0;
    }
    if (any)
        return 2;
    gs_error e = {0};
    gs_model_limits lim;
    gs_model_limits_default(&lim);
    gs_model *mdl = NULL;
    gs_precomp *pc = NULL;
    gs_pattern *pats = NULL;
    int n_pat = 1, code = 1;
    gs_run run = {.opts = a.sopts, .n_patterns = 1, .chain = a.chain};
    double *loads = NULL, t0 = gs_now();
    gm_out o = {0};
    char sum_buf[4300];
    const char *summary = summary_path(&a, sum_buf, sizeof sum_buf);
    gs_err rc = rank == 0 ? check_outputs(&a, summary, &e) : GS_OK;
    if ((rc = gm_agree(rc, "the outputs", &e)) != GS_OK)
        goto out;
    rc = gs_model_read_json(a.model, &lim, &mdl, &e);
    if ((rc = gm_agree(rc, a.model, &e)) != GS_OK)
        goto out;
    rc = rank == 0 ? check_model_files(&a, summary, mdl, &e) : GS_OK;
    if ((rc = gm_agree(rc, "the outputs", &e)) != GS_OK)
        goto out;
    if (a.patterns) {
        rc = gs_patterns_read(a.patterns, mdl->n_fast, MAX_PATTERNS, &pats, &n_pat, &e);
    } else {
        gs_pattern one = {.kind = a.fraction > 0 ? GS_PAT_FRACTION : GS_PAT_NONE,
                          .fraction = a.fraction};
        rc = gs_patterns_loads(&one, 1, mdl, &loads, &e);
    }
    if (!rc && a.patterns)
        rc = gs_patterns_loads(pats, n_pat, mdl, &loads, &e);
    if ((rc = gm_agree(rc, a.patterns ? a.patterns : "pattern", &e)) != GS_OK)
        goto out;
    rc = gs_gap_source_npy(a.gaps, &run.src, &e);
    if (!rc && run.src.m != mdl->m)
        rc = gs_errorf(&e, GS_ERR_DIM, "gaps", "%s: %d columns, the model has %d pairs",
                       a.gaps, run.src.m, mdl->m);
    if (!rc)
        rc = gs_gap_source_limit(&run.src, a.limit, a.gaps, &e);
    if (!rc && (long long)run.src.k * n_pat > 0x7fffffffLL)
        rc = gs_errorf(&e, GS_ERR_LIMIT, "gaps", "%s: %d gaps x %d patterns: more than 2^31-1 "
                       "rows", a.gaps, run.src.k, n_pat);
    if ((rc = gm_agree(rc, a.gaps, &e)) != GS_OK)
        goto out;
    if (rank == 0) {
        printf("model      %s: n = %d, m = %d pairs, %d fastener candidates; %d ranks x %ld "
               "threads\n", mdl->name[0] ? mdl->name : a.model, mdl->n, mdl->m, mdl->n_fast,
               size, a.threads);
        char kernel[96];
        printf("blas       OpenBLAS kernel %s (rank 0)\n", gs_blas_describe(kernel, sizeof kernel));
        fflush(stdout);
    }
    const unsigned flags = gs_run_precomp_flags(&a.sopts);
    fac_info fi;
    if ((rc = factors(&a, mdl, flags, &pc, &fi, &e)) != GS_OK)
        goto out;
    if (rank == 0) {
        print_factors(&a, &fi, mdl, pc, flags);
        fflush(stdout);
    }
    run.pc = pc;
    run.n_patterns = n_pat;
    run.loads = loads;
    o.rows = (long long)n_pat * run.src.k;
    o.m = mdl->m;
    o.k = run.src.k;
    o.n_patterns = n_pat;
    o.gap_major = run.chain != GS_CHAIN_OFF && n_pat > 1;
    o.chunk = (int)a.chunk;
    o.sync = a.sync;
    o.n_chunks = (o.rows + a.chunk - 1) / a.chunk;
    snprintf(o.path, sizeof o.path, "%s", a.out);
    rc = rank == 0 ? fingerprint(&run, mdl, a.gaps, o.chunk, &o.fingerprint, &e) : GS_OK;
    if ((rc = gm_agree(rc, a.gaps, &e)) != GS_OK)
        goto out;
    if ((rc = gm_out_open(&o, a.fresh, &e)) != GS_OK)
        goto out;
    if (rank == 0) {
        printf("cloud      %d gaps x %d pattern%s = %lld rows in %lld chunks of %d%s; %lld chunks "
               "already complete\n", run.src.k, n_pat, n_pat > 1 ? "s" : "", o.rows,
               o.n_chunks, o.chunk, o.gap_major ? " (gap-major: a gap's patterns together)" : "",
               o.done_chunks);
        if (o.stale_chunks) /* gm_out_open: the file was written since by something else */
            printf("           %lld chunk%s marked complete in %s do%s not match %s (written "
                   "since by another program?): solved again\n", o.stale_chunks,
                   o.stale_chunks == 1 ? "" : "s", o.side, o.stale_chunks == 1 ? "es" : "",
                   o.path);
        fflush(stdout);
    }
    gs_blas_set_threads(1); /* one solve per core */
    gm_stats st;
    gs_rows_progress prog;
    gs_rows_progress *pg = NULL;
    if (rank == 0 && a.progress) {
        /* rows of the chunks complete before (a restart's); the last chunk may be short */
        long long before = o.done_chunks * o.chunk;
        if (o.n_chunks > 0 && o.map[o.n_chunks - 1] == 1)
            before -= o.n_chunks * o.chunk - o.rows;
        gs_rows_progress_init(pg = &prog, before, o.rows, isatty(STDERR_FILENO));
    }
    rc = gm_dispatch(&run, &o, (int)a.threads, pg, &st, &e);
    gs_error ce;
    gs_err rcc = gm_agree(gm_out_close(&o, &ce), "closing the output", &ce);
    if (rc || (rc = rcc) != GS_OK) {
        if (pg) /* the message on a line of its own */
            gs_progress_end(&pg->pg);
        goto out;
    }
    double mine[3] = {(double)st.rows, (double)st.chunks, st.wall};
    double *all = rank == 0 ? malloc(sizeof(double) * 3 * (size_t)size) : NULL;
    MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    long long not_optimal = 0;
    if (rank == 0) {
        double rows_run = 0, wall = 0;
        for (int r = 0; all && r < size; r++)
            rows_run += all[3 * r];
        if (pg) { /* the exact count, now that every rank's is known */
            gs_rows_progress_show(pg, pg->before + (long long)rows_run, 1);
            gs_progress_end(&pg->pg);
        }
        for (int r = 0; all && r < size; r++) {
            if (size <= 64)
                printf("rank %-5d %.0f rows in %.0f chunks, %.2f s\n", r, all[3 * r],
                       all[3 * r + 1], all[3 * r + 2]);
            wall = all[3 * r + 2] > wall ? all[3 * r + 2] : wall;
        }
        free(all);
        printf("run        %.0f rows solved in %.2f s: %.1f solves/s\n", rows_run, wall,
               wall > 0 ? rows_run / wall : 0);
        rc = gm_out_verify(&o, &e);
        if (!rc)
            rc = !summary ? count_not_optimal(&o, &not_optimal, &e)
                          : write_summary(&o, mdl, &a, summary, &not_optimal, &e);
        if (!rc)
            print_end(&o, summary, not_optimal, gs_now() - t0);
        fflush(stdout);
    }
    if ((rc = gm_agree(rc, "the summary", &e)) != GS_OK)
        goto out;
    MPI_Bcast(&not_optimal, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    code = not_optimal ? 3 : 0;
out:
    gm_out_free(&o);
    gs_gap_source_close(&run.src);
    free(loads);
    gs_patterns_free(pats, a.patterns ? n_pat : 0);
    gs_precomp_free(pc);
    gs_model_free(mdl);
    return code;
}

int main(int argc, char **argv)
{
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "gapsim-mpi: MPI_Init_thread failed\n");
        return 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int code = 1;
    if (provided < MPI_THREAD_FUNNELED) {
        if (gm_rank() == 0)
            fprintf(stderr, "gapsim-mpi: this MPI does not provide MPI_THREAD_FUNNELED\n");
    } else {
        code = run_main(argc, argv);
    }
    MPI_Finalize();
    return code;
}
