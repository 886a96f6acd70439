/*
 * cmd_pair.c -- `gapsim pair`: contact pairs from two node sets (offline).
 *
 * Reads the upper and lower contact surfaces' nodes (and optionally nodes
 * against the jig) from CSV files, pairs them (core/pairing.h: mutual nearest
 * neighbours within --tol, normals from the files, --normal or the lower
 * surface) and writes the "nodes" and "pairs" keys of a model JSON (nodes by
 * FE label, 3-D normals; a node in two pairs, e.g. an upper node also against
 * the jig, is one node), the nominal gaps as a 1 x m .npy (--gaps-out), and
 * a report of what was paired on stderr. A pairing no model could load (no
 * upper-lower pair, a node with two normals) is refused before anything is
 * written (exit 2); an output that cannot be written leaves none and prints
 * nothing (exit 5). docs/cli.md, docs/fe-import.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "fileio.h"
#include "npy.h"
#include "outfile.h"
#include "pairing.h"

#define GC_PAIR_MAX_NODES ((size_t)10000000)
#define GC_PAIR_MAX_FILE ((size_t)1 << 31)

/* Read a node CSV; prints "PROG: PATH: message" on failure. */
static int pair_read(const char *prog, const char *path, gs_pnode **v, int *n)
{
    char *buf;
    size_t len;
    gs_error e;
    gs_err rc = gs_file_read_all(path, GC_PAIR_MAX_FILE, &buf, &len, &e);
    if (rc == GS_OK) {
        rc = gs_pnodes_parse(buf, len, GC_PAIR_MAX_NODES, v, n, &e);
        free(buf);
    }
    if (rc != GS_OK) {
        gs_file_error_context(&e, path); /* "PATH: " unless the message names it */
        fprintf(stderr, "%s: %s\n", prog, e.msg);
        return GC_EFILE;
    }
    return GC_OK;
}

/* "nx,ny,nz" */
static int pair_vec(const char *prog, const char *opt, const char *s, double v[3])
{
    char tail;
    if (!s || sscanf(s, "%lf,%lf,%lf%c", &v[0], &v[1], &v[2], &tail) != 3)
        return gc_usage_error(prog, "%s needs nx,ny,nz (three numbers)", opt);
    return 0;
}

/* The "nodes" and "pairs" keys: the model's nodes as numbered by
 * gs_pair_nodes_build (a node in two pairs once), then the pairs. */
static void pair_write_json(FILE *fp, const gs_pnode *const set[3], const int part[3],
                            const gs_pairing *pr, const gs_pair_nodes *pn)
{
    fputs("{\n  \"nodes\": {\n    \"part\": [", fp);
    for (int v = 0; v < pn->n_nodes; v++)
        fprintf(fp, "%s%d", v ? ", " : "", part[pn->node[v].set]);
    fputs("],\n    \"label\": [", fp);
    for (int v = 0; v < pn->n_nodes; v++)
        fprintf(fp, "%s%lld", v ? ", " : "",
                (long long)set[pn->node[v].set][pn->node[v].idx].label);
    for (int c = 0; c < 3; c++) {
        fprintf(fp, "],\n    \"%c\": [", "xyz"[c]);
        for (int v = 0; v < pn->n_nodes; v++)
            fprintf(fp, "%s%.17g", v ? ", " : "", set[pn->node[v].set][pn->node[v].idx].xyz[c]);
    }
    fputs("]\n  },\n  \"pairs\": {\n    \"i\": [", fp);
    for (int k = 0; k < pr->np; k++)
        fprintf(fp, "%s%d", k ? ", " : "", pn->pi[k]);
    fputs("],\n    \"j\": [", fp);
    for (int k = 0; k < pr->np; k++)
        fprintf(fp, "%s%d", k ? ", " : "", pn->pj[k]);
    fputs("],\n    \"ci\": [", fp);
    for (int k = 0; k < pr->np; k++)
        fprintf(fp, "%s-1", k ? ", " : "");
    fputs("],\n    \"cj\": [", fp);
    for (int k = 0; k < pr->np; k++)
        fprintf(fp, "%s%d", k ? ", " : "", pr->pairs[k].j >= 0 ? 1 : 0);
    for (int c = 0; c < 3; c++) {
        fprintf(fp, "],\n    \"n%c\": [", "xyz"[c]);
        for (int k = 0; k < pr->np; k++)
            fprintf(fp, "%s%.17g", k ? ", " : "", pr->pairs[k].n[c]);
    }
    fputs("]\n  }\n}\n", fp);
}

/* The labels of the unpaired nodes of one set, at most 20 of them. */
static void pair_report_unpaired(const char *prog, const char *what, const gs_pnode *v,
                                 const int *idx, int n)
{
    if (n == 0)
        return;
    fprintf(stderr, "%s: %d %s node%s unpaired:", prog, n, what, n == 1 ? "" : "s");
    for (int k = 0; k < n && k < 20; k++)
        fprintf(stderr, " %lld", (long long)v[idx[k]].label);
    fprintf(stderr, "%s\n", n > 20 ? " ..." : "");
}

/* Write the JSON (-o, else stdout) and the nominal gaps (--gaps-out)
 * together: the JSON is built in memory, both files are opened (temporary
 * files) and written, the .npy's bytes flushed to their file first (a full
 * disk, /dev/full: reported here), then the JSON's; only when both are
 * written are they committed (renamed), and the JSON goes to stdout only
 * after that. So an output that cannot be written leaves neither, and
 * prints nothing on stdout. */
static int pair_write(const char *prog, const char *out_s, const char *gaps_s,
                      const gs_pnode *const set[3], const int part[3], const gs_pairing *pr,
                      const gs_pair_nodes *pn)
{
    gs_error e;
    gs_wfile wj = {0}, wg = {0};
    char *json = NULL;
    size_t json_len = 0;
    FILE *mem = open_memstream(&json, &json_len);
    if (mem) {
        pair_write_json(mem, set, part, pr, pn);
        const int bad = ferror(mem);
        if (fclose(mem) != 0 || bad) {
            free(json);
            json = NULL;
        }
    }
    double *g = malloc((size_t)(pr->np ? pr->np : 1) * sizeof *g);
    const size_t shape[2] = {1, (size_t)pr->np};
    if (!json || !g) {
        free(json);
        free(g);
        fprintf(stderr, "%s: out of memory\n", prog);
        return GC_EFILE;
    }
    for (int k = 0; k < pr->np; k++)
        g[k] = pr->pairs[k].gap;
    int rc = GC_OK;
    if (out_s && gaps_s && gs_file_same(out_s, gaps_s)) { /* one would replace the other */
        fprintf(stderr, "%s: -o '%s' and --gaps-out '%s' are the same file: name two files\n",
                prog, out_s, gaps_s);
        rc = GC_EUSAGE;
    }
    if (rc == GC_OK && out_s)
        rc = gc_out_open(prog, out_s, &wj);
    if (rc == GC_OK && gaps_s)
        rc = gc_out_open(prog, gaps_s, &wg);
    if (rc == GC_OK && gaps_s) {
        if (gs_npy_write_wfile(&wg, g, 2, shape, GS_NPY_ROW_MAJOR, &e) != GS_OK) {
            fprintf(stderr, "%s: %s\n", prog, e.msg);
            rc = GC_EFILE;
        } else {
            rc = gc_out_flush(prog, &wg);
        }
    }
    if (rc == GC_OK && out_s) {
        if (gs_wfile_write(&wj, json, json_len, &e) != GS_OK) {
            fprintf(stderr, "%s: %s\n", prog, e.msg);
            rc = GC_EFILE;
        } else {
            rc = gc_out_flush(prog, &wj);
        }
    }
    /* without -o the JSON goes to stdout, before the commit: a stdout that
     * cannot take it (a full disk) leaves no --gaps-out file either */
    if (rc == GC_OK && !out_s &&
        (fwrite(json, 1, json_len, stdout) != json_len || fflush(stdout) != 0)) {
        fprintf(stderr, "%s: cannot write the JSON on stdout: %s\n", prog, strerror(errno));
        rc = GC_EFILE;
    }
    /* both written: the commits (renames) */
    if (rc == GC_OK && gaps_s)
        rc = gc_out_commit(prog, &wg);
    if (rc == GC_OK && out_s)
        rc = gc_out_commit(prog, &wj);
    gc_out_abort(&wj);
    gc_out_abort(&wg);
    free(g);
    free(json);
    return rc;
}

/* The report on stderr: pairs, distances, nominal gaps, the nodes in two
 * pairs and the unpaired ones. */
static void pair_report(const char *prog, const gs_pnode *const set[3], const int n[3],
                        const gs_pairing *pr, const gs_pair_nodes *pn)
{
    double dmax = 0.0, gmin = 0.0, gmax = 0.0;
    int surface = 0;
    for (int k = 0; k < pr->np; k++)
        if (pr->pairs[k].j >= 0) {
            const gs_pair_out *p = &pr->pairs[k];
            dmax = surface++ ? (p->dist > dmax ? p->dist : dmax) : p->dist;
            gmin = surface > 1 && gmin < p->gap ? gmin : p->gap;
            gmax = surface > 1 && gmax > p->gap ? gmax : p->gap;
        }
    fprintf(stderr, "%s: %d pairs (%d upper-lower of %d upper and %d lower nodes, %d jig); "
            "largest distance %.4g mm, nominal gaps %.4g .. %.4g mm", prog, pr->np, surface,
            n[0], n[1], pr->np - surface, dmax, gmin, gmax);
    if (pr->radius > 0)
        fprintf(stderr, "; surface normals within %.4g mm", pr->radius);
    fputc('\n', stderr);
    const int shared = surface * 2 + (pr->np - surface) - pn->n_nodes;
    if (shared > 0)
        fprintf(stderr, "%s: %d node%s in two pairs (the same part and label in two files), "
                "written once\n", prog, shared, shared == 1 ? "" : "s");
    pair_report_unpaired(prog, "upper", set[0], pr->unpaired_up, pr->n_up);
    pair_report_unpaired(prog, "lower", set[1], pr->unpaired_lo, pr->n_lo);
}

int gc_cmd_pair(gc_ctx *cx, int argc, char **argv)
{
    const gc_cmd cmd = {
        "gapsim pair",
        "Contact pairs from the nodes of two surfaces (offline): each upper node\n"
        "with its nearest lower node within --tol, one to one; the pair's unit\n"
        "normal points from the lower part to the upper part. Writes the \"nodes\"\n"
        "(by FE label, with coordinates) and \"pairs\" (i, j, ci = -1, cj = +1,\n"
        "nx, ny, nz) keys of a model JSON; the nominal gaps n.(x_upper - x_lower)\n"
        "with --gaps-out. CSV lines: label,x,y,z[,nx,ny,nz] (a header line and\n"
        "'#' comments allowed; labels 0..2^53). A node in two files with the same\n"
        "part (an upper node also in --jig) is one node, in both pairs: its pairs'\n"
        "normals must be parallel or antiparallel. No upper-lower pair is exit 2.\n"
        "options:\n"
        "  --upper FILE       nodes of the upper part's contact surface\n"
        "  --lower FILE       nodes of the lower part's contact surface\n"
        "  --jig FILE         nodes against the fixed jig (pairs with j = -1)\n"
        "  --tol MM           largest distance of a paired couple (default 0.5)\n"
        "  --normal N         nx,ny,nz for every pair without a CSV normal (else\n"
        "                     the lower surface's own normal at the node)\n"
        "  --radius MM        neighbourhood of the surface normals (default 2.5 x\n"
        "                     the median node spacing of the lower surface)\n"
        "  --jig-normal N     nx,ny,nz of the jig pairs without a CSV normal\n"
        "  --upper-part P, --lower-part P, --jig-part P   part indices (0, 1, 0)\n"
        "  -o, --out FILE     the JSON (default: standard output)\n"
        "  --gaps-out FILE    the nominal gaps as a 1 x m .npy (jig pairs: 0)\n",
        "gapsim pair --upper UP.csv --lower LO.csv [--jig JIG.csv] [options]", 0, 0};
    const char *up_s = NULL, *lo_s = NULL, *jig_s = NULL, *tol_s = NULL, *nrm_s = NULL;
    const char *rad_s = NULL, *jn_s = NULL, *up_p = NULL, *lo_p = NULL, *jig_p = NULL;
    const char *out_s = NULL, *gaps_s = NULL;
    const gc_opt opts[] = {{"--upper", NULL, &up_s, NULL},       {"--lower", NULL, &lo_s, NULL},
                           {"--jig", NULL, &jig_s, NULL},        {"--tol", NULL, &tol_s, NULL},
                           {"--normal", NULL, &nrm_s, NULL},     {"--radius", NULL, &rad_s, NULL},
                           {"--jig-normal", NULL, &jn_s, NULL},  {"--upper-part", NULL, &up_p, NULL},
                           {"--lower-part", NULL, &lo_p, NULL},  {"--jig-part", NULL, &jig_p, NULL},
                           {"--out", "-o", &out_s, NULL},        {"--gaps-out", NULL, &gaps_s, NULL},
                           {0}};
    const char *pos[1];
    int npos;
    int rc = gc_args(cx, &cmd, opts, argc, argv, pos, &npos);
    if (rc >= 0)
        return rc;
    if (!up_s || !lo_s)
        return gc_usage_error(cmd.prog, "--upper and --lower are required");
    double tol = 0.5, radius = 0.0, nrm[3], jn[3];
    long parts[3] = {0, 1, 0};
    const char *part_s[3] = {up_p, lo_p, jig_p}, *part_o[3] = {"--upper-part", "--lower-part",
                                                               "--jig-part"};
    if ((tol_s && gc_arg_double(cmd.prog, "--tol", tol_s, 1e-12, 1e9, &tol)) ||
        (rad_s && gc_arg_double(cmd.prog, "--radius", rad_s, 1e-12, 1e9, &radius)) ||
        (nrm_s && pair_vec(cmd.prog, "--normal", nrm_s, nrm)) ||
        (jn_s && pair_vec(cmd.prog, "--jig-normal", jn_s, jn)))
        return GC_EUSAGE;
    for (int s = 0; s < 3; s++)
        if (part_s[s] && gc_arg_long(cmd.prog, part_o[s], part_s[s], 0, 1000000, &parts[s]))
            return GC_EUSAGE;
    gs_pnode *v[3] = {NULL, NULL, NULL};
    int n[3] = {0, 0, 0};
    gs_pairing pr = {0};
    gs_pair_nodes pn = {0};
    if ((rc = pair_read(cmd.prog, up_s, &v[0], &n[0])) != GC_OK ||
        (rc = pair_read(cmd.prog, lo_s, &v[1], &n[1])) != GC_OK ||
        (jig_s && (rc = pair_read(cmd.prog, jig_s, &v[2], &n[2])) != GC_OK))
        goto done;
    gs_error e;
    gs_pairing_opts po = {.tol = tol, .normal = nrm_s ? nrm : NULL, .radius = radius};
    const gs_pnode *const set[3] = {v[0], v[1], v[2]};
    const int part[3] = {(int)parts[0], (int)parts[1], (int)parts[2]};
    gs_err prc = gs_pair_surfaces(v[0], n[0], v[1], n[1], &po, &pr, &e);
    if (prc == GS_OK && pr.np == 0) {
        fprintf(stderr, "%s: no pairs: no upper node and lower node are each other's nearest "
                "within --tol %g mm (%d upper, %d lower nodes); a larger --tol, or do the "
                "files' units or axes differ?\n", cmd.prog, tol, n[0], n[1]);
        rc = GC_EUSAGE;
        goto done;
    }
    if (prc == GS_OK && jig_s)
        prc = gs_pair_jig(v[2], n[2], jn_s ? jn : NULL, &pr, &e);
    if (prc == GS_OK) /* a node in two pairs (upper and jig) is one node of the model */
        prc = gs_pair_nodes_build(set, part, &pr, tol, &pn, &e);
    if (prc != GS_OK) {
        fprintf(stderr, "%s: %s%s%s\n", cmd.prog, e.field, e.field[0] ? ": " : "", e.msg);
        rc = e.code == GS_ERR_NOMEM ? GC_EFILE : GC_EUSAGE;
        goto done;
    }
    if ((rc = pair_write(cmd.prog, out_s, gaps_s, set, part, &pr, &pn)) != GC_OK)
        goto done;
    pair_report(cmd.prog, set, n, &pr, &pn);
    rc = GC_OK;
done:
    gs_pair_nodes_free(&pn);
    gs_pairing_free(&pr);
    for (int s = 0; s < 3; s++)
        free(v[s]);
    return rc;
}
