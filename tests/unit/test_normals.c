/*
 * test_normals.c -- 3-D contact normals (normals.h through the model JSON):
 * two parts whose nodes have three translations each (Nastran DMIG files,
 * nodes given by label), pairs with oblique unit normals, one of them
 * antiparallel at a shared node. Q = A'K^-1 A and u0 = A'K^-1 f from the
 * precomputation must equal a brute-force dense computation in the original
 * axes (column k = ci n_k at node i's translations, cj n_k at node j's), to
 * 1e-12 relative, with the parts stored dense and stored sparse
 * ("storage": "sparse": the rotation of a CSC matrix); and every misuse is
 * an error naming its field.
 */
#include <math.h>
#include <sys/stat.h>

#include <lapacke.h>

#include "gs_test.h"
#include "model_json.h"
#include "precompute.h"

/* SPD 6 x 6 block: B'B + 6 I with B fixed by a seed (column-major). */
static void spd6(double *K, int seed)
{
    double B[36];
    for (int k = 0; k < 36; k++)
        B[k] = sin(1.7 * (k + 1) * (seed + 1)) * 2.0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double s = i == j ? 6.0 : 0.0;
            for (int q = 0; q < 6; q++)
                s += B[i * 6 + q] * B[j * 6 + q];
            K[j * 6 + i] = s;
        }
}

/* DMIG (free field, %.17g) of a 6 x 6 block on nodes l0, l1 with components 1..3. */
/* K (6 x 6) as a DMIG of nodes l0, l1 (components 1-3 each), leaving out
 * DOF `skip` (0..5, its row and column; -1: none). */
static void write_dmig_skip(const char *path, const double *K, int l0, int l1, int skip)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        abort();
    fputs("DMIG,KAAX,0,6,2,0\n", fp);
    for (int j = 0; j < 6; j++) {
        if (j == skip)
            continue;
        fprintf(fp, "DMIG,KAAX,%d,%d,,%d,%d,%.17g\n", j < 3 ? l0 : l1, j % 3 + 1,
                j < 3 ? l0 : l1, j % 3 + 1, K[j * 6 + j]);
        for (int i = j + 1; i < 6; i++)
            if (i != skip)
                fprintf(fp, ",%d,%d,%.17g\n", i < 3 ? l0 : l1, i % 3 + 1, K[j * 6 + i]);
    }
    fclose(fp);
}

static void write_dmig(const char *path, const double *K, int l0, int l1)
{
    write_dmig_skip(path, K, l0, l1, -1);
}

static gs_err parse(const char *text, const char *dir, gs_model **out, gs_error *e)
{
    size_t len = strlen(text);
    char *copy = malloc(len);
    memcpy(copy, text, len);
    gs_err rc = gs_model_parse_json(copy, len, dir, NULL, out, e);
    free(copy);
    return rc;
}

static const char *MODEL =
    "{\"format\": \"gapsim-model\", \"version\": 1,\n"
    " \"parts\": [{\"ndof\": 6, \"K\": {\"file\": \"p0.pch\", \"format\": \"nastran-dmig\"}},\n"
    "            {\"ndof\": 6, \"K\": \"p1.pch\"}],\n"
    " \"nodes\": {\"part\": [0, 0, 1, 1], \"label\": [1, 2, 11, 12]%s},\n"
    " \"pairs\": {\"i\": [0, 1, 3], \"j\": [2, -1, 1], \"ci\": [-1, -1, -0.5], \"cj\": [1, 1, 2],\n"
    "           \"nx\": [%s], \"ny\": [%s], \"nz\": [%s]},\n"
    " \"f\": [1, -2, 0.5, 0, 3, 1, -1, 0, 2, 0.25, 0, -3]}";

GS_TEST(normals_q_and_u0_match_brute_force)
{
    char dir[512], path[700], text[2048];
    gs_error e;
    gs_test_tmp_path(dir, sizeof dir, "normals");
    mkdir(dir, 0755);
    double K0[36], K1[36];
    spd6(K0, 1);
    spd6(K1, 2);
    snprintf(path, sizeof path, "%s/p0.pch", dir);
    write_dmig(path, K0, 1, 2);
    snprintf(path, sizeof path, "%s/p1.pch", dir);
    write_dmig(path, K1, 11, 12);
    /* unit normals: an oblique one, z, and -z at node 1 (label 2) shared by pairs 1 and 2 */
    const double s = 1.0 / sqrt(0.09 + 0.16 + 0.75);
    const double n[3][3] = {{0.3 * s, -0.4 * s, sqrt(0.75) * s}, {0, 0, 1}, {0, 0, -1}};
    char nx[128], ny[128], nz[128];
    snprintf(nx, sizeof nx, "%.17g, %.17g, %.17g", n[0][0], n[1][0], n[2][0]);
    snprintf(ny, sizeof ny, "%.17g, %.17g, %.17g", n[0][1], n[1][1], n[2][1]);
    snprintf(nz, sizeof nz, "%.17g, %.17g, %.17g", n[0][2], n[1][2], n[2][2]);
    gs_model *mdl = NULL;
    for (int sparse = 0; sparse < 2; sparse++) { /* dense blocks, then sparse parts */
        snprintf(text, sizeof text, MODEL, "", nx, ny, nz);
        if (sparse) /* "ndof": 6, -> "ndof": 6, "storage": "sparse", (both parts) */
            for (char *at = text; (at = strstr(at, "\"ndof\": 6,")) != NULL;) {
                const char *ins = " \"storage\": \"sparse\",";
                at += strlen("\"ndof\": 6,");
                memmove(at + strlen(ins), at, strlen(at) + 1);
                memcpy(at, ins, strlen(ins));
            }
        GS_CHECK_MSG(parse(text, dir, &mdl, &e) == GS_OK, "%s: %s", e.field, e.msg);
        GS_CHECK(!mdl->parts[0].Ksp == !sparse && !mdl->parts[1].Ksp == !sparse);
        gs_precomp *pc = NULL;
        GS_CHECK_INT(gs_precomp_build(mdl, &pc, &e), GS_OK);

        /* brute force in the original axes: K = blockdiag(K0, K1), A 12 x 3 */
        double K[144] = {0}, A[36] = {0}, X[36];
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                K[j * 12 + i] = K0[j * 6 + i];
                K[(j + 6) * 12 + i + 6] = K1[j * 6 + i];
            }
        const int node_row0[4] = {0, 3, 6, 9}; /* first translation row of each node */
        const int pi[3] = {0, 1, 3}, pj[3] = {2, -1, 1};
        const double ci[3] = {-1, -1, -0.5}, cj[3] = {1, 1, 2};
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < 3; c++) {
                A[k * 12 + node_row0[pi[k]] + c] += ci[k] * n[k][c];
                if (pj[k] >= 0)
                    A[k * 12 + node_row0[pj[k]] + c] += cj[k] * n[k][c];
            }
        const double f[12] = {1, -2, 0.5, 0, 3, 1, -1, 0, 2, 0.25, 0, -3};
        double Kc[144], F[12];
        memcpy(X, A, sizeof X);
        memcpy(Kc, K, sizeof K);
        GS_CHECK_INT(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', 12, 3, Kc, 12, X, 12), 0); /* X = K^-1 A */
        memcpy(F, f, sizeof F);
        memcpy(Kc, K, sizeof K);
        GS_CHECK_INT(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', 12, 1, Kc, 12, F, 12), 0); /* K^-1 f */
        double qmax = 0, dq = 0, du = 0, umax = 0;
        for (int k = 0; k < 3; k++) {
            for (int l = 0; l < 3; l++) {
                double q = 0;
                for (int r = 0; r < 12; r++)
                    q += A[k * 12 + r] * X[l * 12 + r];
                qmax = fmax(qmax, fabs(q));
                dq = fmax(dq, fabs(q - pc->Q[l * 3 + k]));
            }
            double u = 0;
            for (int r = 0; r < 12; r++)
                u += A[k * 12 + r] * F[r];
            umax = fmax(umax, fabs(u));
            du = fmax(du, fabs(u - pc->u0[k]));
        }
        fprintf(stderr, "  max |Q - Q_bf| = %.3g (max |Q| %.3g), max |u0 - u0_bf| = %.3g (%.3g)\n",
                dq, qmax, du, umax);
        GS_CHECK(dq <= 1e-12 * qmax);
        GS_CHECK(du <= 1e-12 * umax);
        GS_CHECK(mdl->pairs[2].coef[1] == -2.0); /* antiparallel at node 1: cj flipped */
        gs_precomp_free(pc);
        gs_model_free(mdl);
    }

    /* errors */
    struct {
        const char *comp, *nx, *nz, *field, *needle;
    } bad[] = {
        {"", "0.3, 0, 0", "0.9, 1, -1", "pairs.nx[0]", "not a unit vector"},
        {"", "0, 0, 0", "1, 1, 1", "nodes.label[1]", "a node carries one contact normal"},
        {", \"component\": [1, 1, 1, 1]", "0, 0, 0", "1, 1, -1", "nodes.component",
         "leave out nodes.component"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        char ny0[] = "0, 0, 0";
        snprintf(text, sizeof text, MODEL, bad[b].comp, bad[b].nx, ny0, bad[b].nz);
        if (b == 1) /* pair 2 at node 1 along x while pair 1 is along z */
            snprintf(text, sizeof text, MODEL, "", "0, 0, 1", ny0, "1, 1, 0");
        GS_CHECK_MSG(parse(text, dir, &mdl, &e) != GS_OK, "case %zu accepted", b);
        GS_CHECK_MSG(!strcmp(e.field, bad[b].field) && strstr(e.msg, bad[b].needle), "case %zu: "
                     "%s: %s", b, e.field, e.msg);
    }
    /* a node of a pair with a normal must have its three translations as
     * rows: named by its FE label and the missing component (p0.pch rewritten
     * without node 2's component 3), or as not in the matrix at all */
    snprintf(text, sizeof text, MODEL, "", "0, 0, 0", "0, 0, 0", "1, 1, 1");
    char *f = strstr(text, ",\n \"f\":"); /* no base load: part 0 may lose a DOF */
    f[0] = '}';
    f[1] = '\0';
    for (int c = 0; c < 2; c++) {
        char *t = strdup(text);
        snprintf(path, sizeof path, "%s/p0.pch", dir);
        if (c == 0) { /* label 2 -> 7: not in p0.pch */
            write_dmig(path, K0, 1, 2);
            memcpy(strstr(t, "[1, 2, 11, 12]"), "[1, 7, 11, 12]", 14);
        } else { /* node 2's component 3 left out of the file (a boundary condition) */
            write_dmig_skip(path, K0, 1, 2, 5);
            memcpy(strstr(t, "\"ndof\": 6"), "\"ndof\": 5", 9);
        }
        GS_CHECK(parse(t, dir, &mdl, &e) != GS_OK);
        GS_CHECK_STR(e.field, "nodes.label[1]");
        GS_CHECK_MSG(strstr(e.msg, c == 0 ? "node 7 is in pair 1, which has a normal, but not a "
                                            "row of parts[0].K"
                                          : "node 2 is in pair 1, which has a normal: it needs "
                                            "the translations 1, 2, 3 as rows of parts[0].K, "
                                            "and component 3 is not one"),
                     "case %d: %s", c, e.msg);
        free(t);
    }
    /* normals without labels */
    const char *nolab = "{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": [{\"ndof\": 1, "
                        "\"K\": [[2]]}], \"nodes\": {\"part\": [0], \"dof\": [0]}, \"pairs\": "
                        "{\"i\": [0], \"j\": [-1], \"nx\": [0], \"ny\": [0], \"nz\": [1]}}";
    GS_CHECK_INT(parse(nolab, dir, &mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "pairs.nx");
}

GS_TEST_MAIN()
