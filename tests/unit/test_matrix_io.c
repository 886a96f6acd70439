/*
 * test_matrix_io.c -- the FE matrix readers (matrix_io.h): one hand-made
 * 4 x 4 stiffness in every format (Abaqus user element, matrix input and
 * coordinate; Nastran DMIG in small, large and free field; SciPy npz in
 * csr, csc and coo; Matrix Market) gives exactly the same matrix and the
 * same (node, dof) rows; symmetric storage variants; sniffing; one test per
 * error class with the line it names; and a generated lap joint whose blocks
 * are given in each format gives the same Q (1e-12 relative) and the same
 * residual gaps (1e-9 mm) as its .npy blocks.
 */
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "fileio.h"
#include "generator.h"
#include "gs_test.h"
#include "matrix_io.h"
#include "model_json.h"
#include "npy.h"
#include "precompute.h"
#include "problem.h"
#include "solver.h"

/* K0 on rows (101,1) (101,3) (205,1) (205,3): lower triangle row by row. */
static const double K0[16] = {4, -1, 0, 0.5, -1, 4, -1, 0, 0, -1, 4, -1, 0.5, 0, -1, 4};
static const int64_t LAB0[4] = {101, 101, 205, 205};
static const int DOF0[4] = {1, 3, 1, 3};

static gs_matread_opts opts(void)
{
    return (gs_matread_opts){.max_n = 1000, .max_nnz = 100000, .name = NULL};
}

/* Read text (exact-size heap copy) as fmt; 1 if it is K0 (with K0's labels if labelled). */
static int is_k0(const void *buf, size_t len, const char *fmt, int labelled, int want_stype)
{
    void *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    gs_spmat a;
    gs_error e;
    gs_matread_opts o = opts();
    gs_err rc = gs_matrix_read_mem(copy, len, fmt, &o, &a, &e);
    free(copy);
    if (rc != GS_OK) {
        fprintf(stderr, "  %s: %s\n", fmt ? fmt : "(sniffed)", e.msg);
        return 0;
    }
    double d[16];
    int ok = a.n == 4 && a.stype == want_stype;
    if (ok) {
        gs_spmat_to_dense(&a, d);
        ok = memcmp(d, K0, sizeof d) == 0;
    }
    if (ok && labelled)
        ok = a.label && a.dof && memcmp(a.label, LAB0, sizeof LAB0) == 0 &&
             memcmp(a.dof, DOF0, sizeof DOF0) == 0;
    if (ok && !labelled)
        ok = !a.label && !a.dof;
    if (!ok)
        fprintf(stderr, "  %s: not K0 (n %lld, stype %d)\n", fmt ? fmt : "(sniffed)",
                (long long)a.n, a.stype);
    gs_spmat_free(&a);
    return ok;
}

static int text_is_k0(const char *text, const char *fmt, int labelled, int stype)
{
    return is_k0(text, strlen(text), fmt, labelled, stype);
}

/* Expect an error code and a message fragment ("line 7"). */
static int text_err(const char *text, const char *fmt, gs_err code, const char *needle)
{
    size_t len = strlen(text);
    void *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    gs_spmat a;
    gs_error e;
    gs_matread_opts o = opts();
    o.max_n = 50;
    gs_err rc = gs_matrix_read_mem(copy, len, fmt, &o, &a, &e);
    free(copy);
    int ok = code == GS_OK ? rc == GS_OK
                           : rc == code && e.code == code && (!needle || strstr(e.msg, needle));
    if (!ok)
        fprintf(stderr, "  got %s '%s'; want %s '%s'\n", gs_err_name(rc),
                rc ? e.msg : "", gs_err_name(code), needle ? needle : "");
    if (rc == GS_OK)
        gs_spmat_free(&a);
    return ok;
}

static const char *UEL =
    "** SUBSTRUCTURE MATRIX OUTPUT, OUTPUT FILE=USER DEFINED\n"
    "*USER ELEMENT, NODES=2, TYPE=U1, LINEAR\n"
    "1, 3\n"
    "*ELEMENT, TYPE=U1\n"
    "1, 101, 205\n"
    "*MATRIX, TYPE=STIFFNESS\n"
    " 4.0, -1.0, 4.0, 0.0\n"
    " -1.0, 4.0, 5.0D-01, 0.0\n"
    " -1.0, 4.0\n"
    "*MATRIX, TYPE=MASS\n"
    "1., 0., 1., 0.\n";

static const char *MI_LOWER = /* matrix input: lower triangle, rows in any order */
    "205,3,205,3, 4.\n205,1,101,3,-1.\n101,1,101,1,4.000000000000000e+00\n"
    "101,3,101,1,-1\n101,3,101,3,4\n205,1,205,1,4\n205,3,101,1,0.5\n205,3,205,1,-1\n";
static const char *MI_UPPER =
    "101,1,101,1,4\n101,1,101,3,-1\n101,1,205,3,0.5\n101,3,101,3,4\n101,3,205,1,-1\n"
    "205,1,205,1,4\n205,1,205,3,-1\n205,3,205,3,4\n";
static const char *MI_SQUARE =
    "101,1,101,1,4\n101,1,101,3,-1\n101,1,205,3,0.5\n101,3,101,3,4\n101,3,205,1,-1\n"
    "205,1,205,1,4\n205,1,205,3,-1\n205,3,205,3,4\n"
    "101,3,101,1,-1\n205,3,101,1,0.5\n205,1,101,3,-1\n205,3,205,1,-1\n";
static const char *COORD = "** coordinate\n1,1,4\n2,1,-1\n2,2,4\n3,2,-1\n3,3,2\n3,3,2\n"
                           "4,1,5.0e-1\n4,3,-1\n4,4,4\n";

static const char *DMIG_SMALL = /* 8-column fields, implicit exponents, '+' continuations */
    "$ punch file\n"
    "DMIG    KAAX           0       6       2       0                       4\n"
    "DMIG    KAAX         101       1             101       1      4.        +A1\n"
    "+A1          101       3     -1.             205       3    5.-1\n"
    "DMIG    KAAX         101       3             101       3    .4+1\n"
    "        205       1     -1.\n"
    "DMIG    KAAX         205       1             205       1    4.+0\n"
    "        205     3       -1.0E0\n"
    "DMIG    KAAX         205       3             205       3      4.\n";
static const char *DMIG_LARGE = /* 16-column fields, '*' continuations, D exponents */
    "DMIG*   KAAX                           0               6               2\n"
    "*                      0\n"
    "DMIG*   KAAX                         101               1\n"
    "*                    101               1 4.000000000D+00\n"
    "*                    101               3-1.000000000D+00\n"
    "*                    205               3 5.000000000D-01\n"
    "DMIG*   KAAX                         101               3\n"
    "*                    101               3 4.000000000D+00\n"
    "*                    205               1-1.000000000D+00\n"
    "DMIG*   KAAX                         205               1\n"
    "*                    205               1 4.000000000D+00\n"
    "*                    205               3-1.000000000D+00\n"
    "DMIG*   KAAX                         205               3\n"
    "*                    205               3 4.000000000D+00\n";
static const char *DMIG_FREE = /* comma-separated, a second matrix, a bulk entry skipped */
    "BEGIN BULK\nGRID,101,,0.,0.,0.\n"
    "DMIG,MAAX,0,6,2,0\nDMIG,MAAX,101,1,,101,1,1.\n"
    "DMIG,KAAX,0,6,2,0,,,4\n"
    "DMIG,KAAX,101,1,,101,1,4.,,+\n+,101,3,-1.,,205,3,0.5\n"
    "DMIG,KAAX,101,3,,101,3,4.\n,205,1,-1.\n"
    "DMIG,KAAX,205,1,,205,1,4.,,+C\n+C,205,3,-1.\n"
    "DMIG,KAAX,205,3,,205,3,4.\nENDDATA\n";

static const char *MM = "%%MatrixMarket matrix coordinate real symmetric\n4 4 8\n1 1 4\n2 1 -1\n"
                        "4 1 0.5\n2 2 4\n3 2 -1\n3 3 4\n4 3 -1\n4 4 4\n";

GS_TEST(mio_every_text_format_gives_k0)
{
    GS_CHECK(text_is_k0(UEL, "abaqus-user-element", 1, -1));
    GS_CHECK(text_is_k0(MI_LOWER, "abaqus-matrix-input", 1, -1));
    GS_CHECK(text_is_k0(MI_UPPER, "abaqus-matrix-input", 1, -1));
    GS_CHECK(text_is_k0(MI_SQUARE, "abaqus-matrix-input", 1, -1));
    GS_CHECK(text_is_k0(COORD, "abaqus-coordinate", 0, -1));
    GS_CHECK(text_is_k0(DMIG_SMALL, "nastran-dmig", 1, -1));
    GS_CHECK(text_is_k0(DMIG_LARGE, "nastran-dmig", 1, -1));
    /* one matrix named among two */
    gs_spmat a;
    gs_error e;
    gs_matread_opts o = opts();
    o.name = "kaax";
    GS_CHECK_MSG(gs_matrix_read_mem(DMIG_FREE, strlen(DMIG_FREE), "nastran-dmig", &o, &a, &e) ==
                     GS_OK, "%s", e.msg);
    double d[16];
    gs_spmat_to_dense(&a, d);
    GS_CHECK(a.n == 4 && memcmp(d, K0, sizeof d) == 0 && a.label[3] == 205 && a.dof[3] == 3);
    gs_spmat_free(&a);
    o.name = NULL; /* two matrices, none named */
    GS_CHECK_INT(gs_matrix_read_mem(DMIG_FREE, strlen(DMIG_FREE), "nastran-dmig", &o, &a, &e),
                 GS_ERR_INVALID);
    GS_CHECK(strstr(e.msg, "MAAX, KAAX") != NULL);
    o.name = "KGG";
    GS_CHECK_INT(gs_matrix_read_mem(DMIG_FREE, strlen(DMIG_FREE), "nastran-dmig", &o, &a, &e),
                 GS_ERR_INVALID);
    GS_CHECK(strstr(e.msg, "no DMIG matrix named 'KGG'") != NULL);
    /* Matrix Market through the same interface: a symmetric coordinate file
     * gives its lower triangle, never a dense copy */
    GS_CHECK(text_is_k0(MM, "matrix-market", 0, -1));
}

GS_TEST(mio_sniffing)
{
    const struct {
        const char *text, *name;
    } cases[] = {{UEL, "abaqus-user-element"}, {MI_LOWER, "abaqus-matrix-input"},
                 {COORD, "abaqus-coordinate"},  {DMIG_SMALL, "nastran-dmig"},
                 {DMIG_LARGE, "nastran-dmig"},  {MM, "matrix-market"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const gs_matfmt *f = gs_matfmt_sniff((const unsigned char *)cases[k].text,
                                             strlen(cases[k].text));
        GS_CHECK_MSG(f && !strcmp(f->name, cases[k].name), "case %zu", k);
        GS_CHECK(text_is_k0(cases[k].text, NULL, strcmp(cases[k].name, "abaqus-coordinate") &&
                                                     strcmp(cases[k].name, "matrix-market"),
                            -1));
    }
    /* not certain: plain whitespace triplets, a bulk deck starting with GRID, 4 fields */
    const char *unsure[] = {"1 1 4.0\n", "GRID,1,,0.,0.,0.\nDMIG,K,0,6,2\n", "1,2,3,4\n", "",
                            "*HEADING\n*USER ELEMENT, NODES=1, LINEAR\n"};
    for (size_t k = 0; k < sizeof unsure / sizeof *unsure; k++)
        GS_CHECK_MSG(!gs_matfmt_sniff((const unsigned char *)unsure[k], strlen(unsure[k])),
                     "unsure %zu", k);
    GS_CHECK(text_err("1 1 4.0\n", NULL, GS_ERR_FORMAT, "cannot tell the matrix format"));
    GS_CHECK(text_err("1,1,4\n", "csv", GS_ERR_UNSUPPORTED, "unknown matrix format 'csv'"));
}

GS_TEST(mio_errors_name_the_line)
{
    /* Abaqus user element */
    GS_CHECK(text_err("*USER ELEMENT, NODES=2, LINEAR\n1, 3\n*MATRIX, TYPE=STIFFNESS\n1, 2, x\n",
                      "abaqus-user-element", GS_ERR_FORMAT, "line 4: invalid number 'x'"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=1, LINEAR\n1\n*MATRIX, TYPE=STIFFNESS\n1, 2\n",
                      "abaqus-user-element", GS_ERR_FORMAT, "line 4: more than the 1 values"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=2, LINEAR\n1, 2\n*MATRIX, TYPE=STIFFNESS\n1, 2\n",
                      "abaqus-user-element", GS_ERR_FORMAT, "has 2 values; a lower triangle of "
                      "order 4 has 10"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=2, LINEAR\n1, 1\n", "abaqus-user-element",
                      GS_ERR_DUPLICATE, "line 2: DOF 1 listed twice"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=2, LINEAR, UNSYMM\n1\n", "abaqus-user-element",
                      GS_ERR_UNSUPPORTED, "line 1: UNSYMM"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=2\n1\n", "abaqus-user-element", GS_ERR_UNSUPPORTED,
                      "without LINEAR"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=99, LINEAR\n1\n", "abaqus-user-element", GS_ERR_RANGE,
                      "line 1: NODES 99 out of range"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=3, LINEAR\n1\n2, 1, 2\n2, 3\n", "abaqus-user-element",
                      GS_ERR_RANGE, "line 4: node position 2 out of range [3, 3]"));
    GS_CHECK(text_err("*MATRIX, TYPE=STIFFNESS\n1.\n", "abaqus-user-element", GS_ERR_FORMAT,
                      "line 1: *MATRIX, TYPE=STIFFNESS before the *USER ELEMENT"));
    GS_CHECK(text_err("** nothing\n", "abaqus-user-element", GS_ERR_FORMAT, "no *USER ELEMENT"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=2, LINEAR\n1\n*ELEMENT, TYPE=U1\n1, 7\n"
                      "*MATRIX, TYPE=STIFFNESS\n1, 0, 1\n", "abaqus-user-element", GS_ERR_FORMAT,
                      "line 5: *ELEMENT gave 1 node labels, NODES=2"));
    GS_CHECK(text_err("*USER ELEMENT, NODES=2, LINEAR\n1\n*ELEMENT, TYPE=U1\n1, 7, 7\n"
                      "*MATRIX, TYPE=STIFFNESS\n1, 0, 1\n", "abaqus-user-element", GS_ERR_DUPLICATE,
                      "node 7 appears twice"));
    /* DOF changes: node 1 has DOFs 1, 2; nodes 2-3 have DOF 3 -> order 4 */
    GS_CHECK(text_err("*USER ELEMENT, NODES=3, LINEAR\n1, 2\n2, 3\n*MATRIX, TYPE=STIFFNESS\n"
                      "1,0,1,0,0,1,0,0,0,1\n", "abaqus-user-element", GS_OK, NULL));
    /* Abaqus entry-per-line formats */
    GS_CHECK(text_err("1,1,1,1,4\n1,1,2\n", "abaqus-matrix-input", GS_ERR_FORMAT,
                      "line 2: expected 'node, dof, node, dof, value', found 3 fields"));
    GS_CHECK(text_err("1,1,1,1,4\n1,0,1,1,4\n", "abaqus-matrix-input", GS_ERR_RANGE,
                      "line 2: row dof 0 out of range [1, 99]"));
    GS_CHECK(text_err("1,1,1,1,4\n1,1,2,1,1e999\n", "abaqus-matrix-input", GS_ERR_FORMAT,
                      "line 2: number '1e999' beyond the double range"));
    GS_CHECK(text_err("1,1,1,1,4\n*MATRIX INPUT\n", "abaqus-matrix-input", GS_ERR_FORMAT,
                      "line 2: keyword line"));
    GS_CHECK(text_err("1,1,1,1,4\n1,1,2,1,1\n2,1,1,1,2\n", "abaqus-matrix-input",
                      GS_ERR_NOT_SYMMETRIC, "differs from its mirror"));
    GS_CHECK(text_err("** empty\n", "abaqus-matrix-input", GS_ERR_FORMAT, "no matrix entries"));
    {
        /* one triangle in the FE tool's own equation order (node 20 first):
         * sorted by label, some terms fall above the diagonal, some below;
         * each given once, so each is mirrored (it was refused as both
         * triangles with missing mirrors): the matrix of the label-ordered
         * lower triangle, entry for entry */
        const char *own = "20, 3, 20, 3, 4.0\n10, 3, 20, 3, -1.0\n10, 3, 10, 3, 4.0\n"
                          "30, 3, 20, 3, -1.5\n30, 3, 10, 3, -0.5\n30, 3, 30, 3, 5.0\n";
        const char *sorted = "10, 3, 10, 3, 4.0\n20, 3, 10, 3, -1.0\n20, 3, 20, 3, 4.0\n"
                             "30, 3, 10, 3, -0.5\n30, 3, 20, 3, -1.5\n30, 3, 30, 3, 5.0\n";
        gs_spmat a[2];
        gs_error e;
        for (int k = 0; k < 2; k++) {
            const char *t = k ? sorted : own;
            char *copy = strdup(t);
            gs_matread_opts o = opts();
            GS_CHECK_MSG(gs_matrix_read_mem(copy, strlen(t), "abaqus-matrix-input", &o, &a[k],
                                            &e) == GS_OK, "%s", e.msg);
            free(copy);
        }
        double da[9], db[9];
        gs_spmat_to_dense(&a[0], da);
        gs_spmat_to_dense(&a[1], db);
        GS_CHECK(memcmp(da, db, sizeof da) == 0);
        GS_CHECK(da[1] == -1.0 && da[3] == -1.0 && da[2] == -0.5 && da[7] == -1.5);
        gs_spmat_free(&a[0]);
        gs_spmat_free(&a[1]);
    }
    GS_CHECK(text_err("1,1,4\n3,51,1\n", "abaqus-coordinate", GS_ERR_RANGE,
                      "line 2: column 51 out of range [1, 50]"));
    GS_CHECK(text_err("1,1,4\n2,2,4,5\n", "abaqus-coordinate", GS_ERR_FORMAT,
                      "line 2: expected 'row, column, value', found 4 fields"));
    /* Nastran DMIG */
    GS_CHECK(text_err("DMIG,K,0,2,2,0,,,4\n", "nastran-dmig", GS_ERR_UNSUPPORTED,
                      "line 1: DMIG K has IFO 2"));
    GS_CHECK(text_err("DMIG,K,0,6,3,0\n", "nastran-dmig", GS_ERR_UNSUPPORTED, "line 1: DMIG K has "
                      "TIN 3"));
    GS_CHECK(text_err("DMIG,K,1,1,,1,1,4.\n", "nastran-dmig", GS_ERR_FORMAT,
                      "line 1: column entry of DMIG K before its header"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,4.x\n", "nastran-dmig", GS_ERR_FORMAT,
                      "line 2: invalid matrix entry '4.x'"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\nDMIG,K,1,7,,1,1,4.\n", "nastran-dmig", GS_ERR_RANGE,
                      "line 2: CJ 7 out of range [0, 6]"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,4.,2.\n", "nastran-dmig", GS_ERR_FORMAT,
                      "line 2: imaginary part"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,4.\n+,2,1\n", "nastran-dmig",
                      GS_ERR_FORMAT, "line 3: invalid matrix entry ''"));
    GS_CHECK(text_err("+,1,1\n", "nastran-dmig", GS_ERR_FORMAT,
                      "line 1: continuation line without an entry"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\n7DMIG\n", "nastran-dmig", GS_ERR_FORMAT,
                      "line 2: '7DMIG' is neither an entry name"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\nDMIG,K,0,6,2,0\n", "nastran-dmig", GS_ERR_DUPLICATE,
                      "line 2: a second header of DMIG K (first at line 1)"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,1.234567890123456789012345678901234\n",
                      "nastran-dmig", GS_ERR_FORMAT, "longer than 32 characters"));
    GS_CHECK(text_err("$ only a comment\n", "nastran-dmig", GS_ERR_FORMAT, "no DMIG entries"));
    GS_CHECK(text_err("DMIG,K,0,6,2,0\nDMIG,K,1,1,,1,1,4.\nDMIG,K,1,1,,2,1,1.\n"
                      "DMIG,K,2,1,,1,1,2.\n", "nastran-dmig", GS_ERR_NOT_SYMMETRIC,
                      "entry (node 2 dof 1, node 1 dof 1) = 1 differs from its mirror 2"));
    GS_CHECK(text_err("DMIG,K,0,1,2,0\nDMIG,K,1,1,,1,1,4.\nDMIG,K,1,1,,2,1,1.\n"
                      "DMIG,K,2,1,,2,1,2.\n", "nastran-dmig", GS_OK, NULL)); /* square: kept */
}

/* ---- nodes given by FE label --------------------------------------------------- */

static gs_err parse_model(const char *text, const char *dir, gs_model **out, gs_error *e)
{
    size_t len = strlen(text);
    char *copy = malloc(len);
    memcpy(copy, text, len);
    gs_err rc = gs_model_parse_json(copy, len, dir, NULL, out, e);
    free(copy);
    return rc;
}

/* A NUL byte inside a number ends it in C: "4.0\0junk" read as 4.0 by the
 * number reader the FE formats share (core/fe_text.c). Every byte of the
 * field must be the number's. */
GS_TEST(mio_nul_inside_a_number_is_refused)
{
    static const char mi[] = "1,3,1,3,4.0\0junk\n2,3,2,3,1.0\n";
    static const char dmig[] = "DMIG,KAAX,0,6,1,0\nDMIG,KAAX,1,3,,1,3,4.0\0x\n";
    static const struct {
        const char *text;
        size_t len;
        const char *fmt;
    } c[] = {{mi, sizeof mi - 1, "abaqus-matrix-input"},
             {dmig, sizeof dmig - 1, "nastran-dmig"}};
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        char *copy = malloc(c[k].len);
        memcpy(copy, c[k].text, c[k].len);
        gs_spmat a;
        gs_error e;
        gs_matread_opts o = opts();
        gs_err rc = gs_matrix_read_mem(copy, c[k].len, c[k].fmt, &o, &a, &e);
        free(copy);
        GS_CHECK_MSG(rc == GS_ERR_FORMAT, "%s: %s", c[k].fmt, rc ? e.msg : "accepted");
        GS_CHECK_MSG(rc == GS_OK || strstr(e.msg, "line ") != NULL, "%s: %s", c[k].fmt, e.msg);
        if (rc == GS_OK)
            gs_spmat_free(&a);
    }
    /* the same texts without the NUL are read */
    GS_CHECK(text_err("1,3,1,3,4.0\n2,3,2,3,1.0\n", "abaqus-matrix-input", GS_OK, NULL));
    GS_CHECK(text_err("DMIG,KAAX,0,6,1,0\nDMIG,KAAX,1,3,,1,3,4.0\n", "nastran-dmig", GS_OK,
                      NULL));
}

GS_TEST(mio_model_nodes_by_label)
{
    char dir[512], path[700];
    gs_error e;
    gs_test_tmp_path(dir, sizeof dir, "matrix_io_labels");
    mkdir(dir, 0755);
    const char *files[][2] = {{"k.pch", DMIG_SMALL}, {"k.mtx", UEL}, {"k.inp", MI_UPPER}};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k][0]);
        FILE *fp = fopen(path, "w");
        GS_CHECK(fp != NULL);
        fputs(files[k][1], fp);
        fclose(fp);
    }
    /* part 0 from a labelled file, part 1 a jig-side spring; node rows by label */
    static const char *fmt_dof =
        "{\"format\": \"gapsim-model\", \"version\": 1,\n"
        " \"parts\": [{\"ndof\": 4, \"K\": \"%s\"}, {\"ndof\": 4, \"K\": \"%s\"}],\n"
        " \"nodes\": {\"part\": [0, 0, 1, 1], %s},\n"
        " \"pairs\": {\"i\": [0, 1], \"j\": [2, 3]}}";
    char text[1024];
    snprintf(text, sizeof text, fmt_dof, "k.pch", "k.mtx", "\"dof\": [3, 0, 3, 0]");
    gs_model *ref = NULL, *mdl = NULL;
    GS_CHECK_MSG(parse_model(text, dir, &ref, &e) == GS_OK, "%s %s", e.field, e.msg);
    for (int k = 0; k < 3; k++) {
        snprintf(text, sizeof text, fmt_dof, files[k][0], files[(k + 1) % 3][0],
                 "\"label\": [205, 101, 205, 101], \"component\": [3, 1, 3, 1]");
        GS_CHECK_MSG(parse_model(text, dir, &mdl, &e) == GS_OK, "%s %s", e.field, e.msg);
        GS_CHECK(gs_model_equal(ref, mdl));
        gs_model_free(mdl);
    }
    /* errors: unknown node, an unlabelled part, both forms, component alone */
    snprintf(text, sizeof text, fmt_dof, "k.pch", "k.mtx",
             "\"label\": [205, 101, 205, 102], \"component\": [3, 1, 3, 1]");
    GS_CHECK_INT(parse_model(text, dir, &mdl, &e), GS_ERR_RANGE);
    GS_CHECK_STR(e.field, "nodes.label[3]");
    GS_CHECK(strstr(e.msg, "node 102 component 1 is not a row of parts[1].K") != NULL);
    const char *inline_k = "{\"ndof\": 4, \"K\": [[4,0,0,0],[0,4,0,0],[0,0,4,0],[0,0,0,4]]}";
    char t2[1400];
    snprintf(t2, sizeof t2, "{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": "
             "[{\"ndof\": 4, \"K\": \"k.pch\"}, %s], \"nodes\": {\"part\": [0, 1], "
             "\"label\": [205, 1], \"component\": [3, 1]}, \"pairs\": {\"i\": [0], "
             "\"j\": [1]}}", inline_k);
    GS_CHECK_INT(parse_model(t2, dir, &mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "nodes.label[1]");
    GS_CHECK(strstr(e.msg, "parts[1].K names its rows by index") != NULL);
    snprintf(text, sizeof text, fmt_dof, "k.pch", "k.mtx",
             "\"dof\": [3, 0, 3, 0], \"label\": [205, 101, 205, 101], "
             "\"component\": [3, 1, 3, 1]");
    GS_CHECK_INT(parse_model(text, dir, &mdl, &e), GS_ERR_INVALID);
    GS_CHECK(strstr(e.msg, "not both") != NULL);
    snprintf(text, sizeof text, fmt_dof, "k.pch", "k.mtx",
             "\"dof\": [3, 0, 3, 0], \"component\": [3, 1, 3, 1]");
    GS_CHECK_INT(parse_model(text, dir, &mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "nodes.component");
    snprintf(text, sizeof text, fmt_dof, "k.pch", "k.mtx",
             "\"label\": [205, 101, 205, 1.5], \"component\": [3, 1, 3, 1]");
    GS_CHECK_INT(parse_model(text, dir, &mdl, &e), GS_ERR_INVALID);
    GS_CHECK_STR(e.field, "nodes.label[3]");
    gs_model_free(ref);
}

/* ---- SciPy .npz, built here with libzip ---------------------------------------- */

/* A .npy member of any dtype: header dict + raw bytes. */
static size_t npy_member(unsigned char *out, const char *descr, const char *shape,
                         const void *data, size_t nbytes)
{
    char dict[200];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                      descr, shape);
    size_t total = (10 + (size_t)dl + 1 + 63) / 64 * 64;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)((total - 10) & 0xff);
    out[9] = (unsigned char)((total - 10) >> 8);
    memset(out + 10, ' ', total - 10);
    memcpy(out + 10, dict, (size_t)dl);
    out[total - 1] = '\n';
    memcpy(out + total, data, nbytes);
    return total + nbytes;
}

typedef struct {
    unsigned char *buf[8];
    size_t len[8];
    const char *name[8];
    int n;
} npz_parts;

static void npz_add(npz_parts *p, const char *name, const char *descr, const char *shape,
                    const void *data, size_t nbytes)
{
    p->name[p->n] = name;
    p->buf[p->n] = malloc(nbytes + 256);
    p->len[p->n] = npy_member(p->buf[p->n], descr, shape, data, nbytes);
    p->n++;
}

/* Zip the parts into a malloc'ed buffer (deflated like savez_compressed). */
static unsigned char *npz_zip(const npz_parts *p, size_t *len)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *mem = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *za = zip_open_from_source(mem, ZIP_TRUNCATE, &ze);
    zip_source_keep(mem);
    for (int k = 0; k < p->n; k++) {
        zip_source_t *s = zip_source_buffer(za, p->buf[k], p->len[k], 0);
        zip_int64_t idx = zip_file_add(za, p->name[k], s, 0);
        zip_set_file_compression(za, (zip_uint64_t)idx, ZIP_CM_DEFLATE, 0);
    }
    zip_close(za);
    zip_source_open(mem);
    zip_source_seek(mem, 0, SEEK_END);
    *len = (size_t)zip_source_tell(mem);
    zip_source_seek(mem, 0, SEEK_SET);
    unsigned char *out = malloc(*len);
    zip_source_read(mem, out, *len);
    zip_source_close(mem);
    zip_source_free(mem);
    zip_error_fini(&ze);
    for (int k = 0; k < p->n; k++)
        free(p->buf[k]);
    return out;
}

GS_TEST(mio_npz_csr_csc_coo)
{
    /* K0's nonzeros, CSR (= CSC of the symmetric K0) */
    const int32_t indptr[5] = {0, 3, 6, 9, 12};
    const int32_t indices[12] = {0, 1, 3, 0, 1, 2, 1, 2, 3, 0, 2, 3};
    const double data[12] = {4, -1, 0.5, -1, 4, -1, -1, 4, -1, 0.5, -1, 4};
    const int64_t shape[2] = {4, 4};
    const int64_t row[12] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    for (int kind = 0; kind < 3; kind++) {
        npz_parts p = {.n = 0};
        npz_add(&p, "format.npy", kind == 2 ? "<U3" : "|S3", "()",
                kind == 0 ? "csr" : kind == 1 ? "csc" : "c\0\0\0o\0\0\0o\0\0\0",
                kind == 2 ? 12 : 3);
        npz_add(&p, "shape.npy", "<i8", "(2,)", shape, sizeof shape);
        npz_add(&p, "data.npy", "<f8", "(12,)", data, sizeof data);
        if (kind < 2) {
            npz_add(&p, "indices.npy", "<i4", "(12,)", indices, sizeof indices);
            npz_add(&p, "indptr.npy", "<i4", "(5,)", indptr, sizeof indptr);
        } else {
            npz_add(&p, "row.npy", "<i8", "(12,)", row, sizeof row);
            int64_t col[12];
            for (int k = 0; k < 12; k++)
                col[k] = indices[k];
            npz_add(&p, "col.npy", "<i8", "(12,)", col, sizeof col);
        }
        size_t len;
        unsigned char *z = npz_zip(&p, &len);
        GS_CHECK_MSG(is_k0(z, len, kind == 1 ? "scipy-npz" : NULL, 0, 0), "kind %d", kind);
        /* every truncation is rejected with an error, never a crash */
        for (size_t cut = 0; cut < len; cut += 7) {
            gs_spmat a;
            gs_error e;
            gs_matread_opts o = opts();
            void *copy = malloc(cut ? cut : 1);
            memcpy(copy, z, cut);
            GS_CHECK(gs_matrix_read_mem(copy, cut, "scipy-npz", &o, &a, &e) != GS_OK);
            free(copy);
        }
        free(z);
    }
    /* errors: index out of range, unsupported format, unknown member, over the limit */
    int32_t bad[12];
    memcpy(bad, indices, sizeof bad);
    bad[4] = 9;
    struct {
        const char *fmt;
        const void *ind;
        const char *extra;
        size_t max_nnz;
        gs_err code;
        const char *needle;
    } cases[] = {{"csr", bad, NULL, 1000, GS_ERR_RANGE, "indices.npy: entry 4 = 9 out of range"},
                 {"dia", indices, NULL, 1000, GS_ERR_UNSUPPORTED, "sparse format 'dia'"},
                 {"csr", indices, "x.npy", 1000, GS_ERR_FORMAT, "unexpected member 'x.npy'"},
                 {"csr", indices, NULL, 11, GS_ERR_LIMIT, "exceed the limit of 11"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        npz_parts p = {.n = 0};
        npz_add(&p, "format.npy", "|S3", "()", cases[c].fmt, 3);
        npz_add(&p, "shape.npy", "<i8", "(2,)", shape, sizeof shape);
        npz_add(&p, "data.npy", "<f8", "(12,)", data, sizeof data);
        npz_add(&p, "indices.npy", "<i4", "(12,)", cases[c].ind, sizeof indices);
        npz_add(&p, "indptr.npy", "<i4", "(5,)", indptr, sizeof indptr);
        if (cases[c].extra)
            npz_add(&p, cases[c].extra, "<i4", "(5,)", indptr, sizeof indptr);
        size_t len;
        unsigned char *z = npz_zip(&p, &len);
        gs_spmat a;
        gs_error e;
        gs_matread_opts o = opts();
        o.max_nnz = cases[c].max_nnz;
        gs_err rc = gs_matrix_read_mem(z, len, NULL, &o, &a, &e);
        GS_CHECK_MSG(rc == cases[c].code && strstr(e.msg, cases[c].needle), "case %zu: %s", c,
                     e.msg);
        free(z);
    }
}

/* ---- a generated model in every format ------------------------------------------ */

/* Round to 10 significant digits: what a 16-column DMIG field holds exactly. */
static double round10(double v)
{
    char b[40];
    snprintf(b, sizeof b, "%.9E", v);
    return strtod(b, NULL);
}

/* Write block K (nd x nd column-major) of part b in format `fmt`; returns the file name. */
static const char *write_block(const char *dir, int b, const double *K, int nd, const char *fmt)
{
    static char name[64];
    char path[700];
    snprintf(name, sizeof name, "p%d.%s", b, fmt);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    if (!fp)
        abort();
    /* rows: node label 1000 + r / 2, DOF 1 or 3 (ascending = row order) */
#define LAB(r) (1000 + (r) / 2)
#define DOF(r) ((r) % 2 ? 3 : 1)
    if (!strcmp(fmt, "abaqus-user-element")) {
        fprintf(fp, "*USER ELEMENT, NODES=%d, TYPE=U1, LINEAR\n1, 3\n*ELEMENT, TYPE=U1\n1",
                nd / 2);
        for (int p = 0; p < nd / 2; p++)
            fprintf(fp, ",%s%d", p % 10 == 9 ? "\n" : " ", LAB(2 * p));
        fputs("\n*MATRIX, TYPE=STIFFNESS\n", fp);
        int c = 0;
        for (int i = 0; i < nd; i++)
            for (int j = 0; j <= i; j++)
                fprintf(fp, "%.9E%s", K[(size_t)j * nd + i], ++c % 4 ? ", " : "\n");
        fputc('\n', fp);
    } else if (!strcmp(fmt, "abaqus-matrix-input")) {
        for (int j = 0; j < nd; j++)
            for (int i = j; i < nd; i++)
                if (K[(size_t)j * nd + i] != 0)
                    fprintf(fp, "%d, %d, %d, %d, %.9E\n", LAB(i), DOF(i), LAB(j), DOF(j),
                            K[(size_t)j * nd + i]);
    } else if (!strcmp(fmt, "abaqus-coordinate")) {
        for (int j = 0; j < nd; j++)
            for (int i = 0; i <= j; i++) /* the upper triangle this time */
                if (K[(size_t)j * nd + i] != 0)
                    fprintf(fp, "%d, %d, %.9E\n", i + 1, j + 1, K[(size_t)j * nd + i]);
    } else if (!strcmp(fmt, "nastran-dmig")) { /* large field */
        fprintf(fp, "DMIG*   KAAX                           0               6               2\n"
                    "*                      0\n");
        for (int j = 0; j < nd; j++) {
            fprintf(fp, "DMIG*   KAAX            %16d%16d\n", LAB(j), DOF(j));
            for (int i = j; i < nd; i++)
                if (K[(size_t)j * nd + i] != 0)
                    fprintf(fp, "*       %16d%16d%16.9E\n", LAB(i), DOF(i), K[(size_t)j * nd + i]);
        }
    } else if (!strcmp(fmt, "scipy-npz")) { /* csc, both triangles, exact doubles */
        size_t nn = (size_t)nd * nd, nnz = 0;
        int64_t *ptr = malloc((nd + 1) * sizeof *ptr), *ind = malloc(nn * sizeof *ind);
        double *val = malloc(nn * sizeof *val);
        ptr[0] = 0;
        for (int j = 0; j < nd; j++) {
            for (int i = 0; i < nd; i++)
                if (K[(size_t)j * nd + i] != 0) {
                    ind[nnz] = i;
                    val[nnz++] = K[(size_t)j * nd + i];
                }
            ptr[j + 1] = (int64_t)nnz;
        }
        char sh_n1[32], sh_nnz[32];
        snprintf(sh_n1, sizeof sh_n1, "(%d,)", nd + 1);
        snprintf(sh_nnz, sizeof sh_nnz, "(%zu,)", nnz);
        const int64_t shape[2] = {nd, nd};
        npz_parts p = {.n = 0};
        npz_add(&p, "format.npy", "|S3", "()", "csc", 3);
        npz_add(&p, "shape.npy", "<i8", "(2,)", shape, sizeof shape);
        npz_add(&p, "data.npy", "<f8", sh_nnz, val, nnz * sizeof *val);
        npz_add(&p, "indices.npy", "<i8", sh_nnz, ind, nnz * sizeof *ind);
        npz_add(&p, "indptr.npy", "<i8", sh_n1, ptr, (size_t)(nd + 1) * sizeof *ptr);
        size_t len;
        unsigned char *z = npz_zip(&p, &len);
        fwrite(z, 1, len, fp);
        free(z);
        free(ptr);
        free(ind);
        free(val);
    } else if (!strcmp(fmt, "matrix-market")) {
        fprintf(fp, "%%%%MatrixMarket matrix array real symmetric\n%d %d\n", nd, nd);
        for (int j = 0; j < nd; j++)
            for (int i = j; i < nd; i++)
                fprintf(fp, "%.9E\n", K[(size_t)j * nd + i]);
    }
#undef LAB
#undef DOF
    fclose(fp);
    return name;
}

GS_TEST(mio_generated_model_same_q_and_gaps_in_every_format)
{
    static const char *const fmts[] = {"abaqus-user-element", "abaqus-matrix-input",
                                       "abaqus-coordinate", "nastran-dmig", "matrix-market",
                                       "scipy-npz"};
    char dir[512], path[700];
    gs_error e;
    gs_test_tmp_path(dir, sizeof dir, "matrix_io_model");
    mkdir(dir, 0755);
    gs_gen_params gp;
    gs_gen_small_params(GS_GEN_LAP, &gp);
    gs_model *gen = NULL;
    GS_CHECK_INT(gs_gen_assembly(&gp, &gen, NULL, &e), GS_OK);
    for (int b = 0; b < gen->n_parts; b++) { /* exact in 10 digits, still symmetric */
        size_t nd = (size_t)gen->parts[b].ndof;
        GS_CHECK(nd % 2 == 0);
        for (size_t k = 0; k < nd * nd; k++)
            gen->parts[b].K[k] = round10(gen->parts[b].K[k]);
    }
    GS_CHECK_INT(gs_model_write_json(gen, dir, "ref", 0, &e), GS_OK);
    snprintf(path, sizeof path, "%s/ref.json", dir);
    gs_model *ref = NULL;
    GS_CHECK_INT(gs_model_read_json(path, NULL, &ref, &e), GS_OK);
    gs_precomp *pc0 = NULL;
    GS_CHECK_INT(gs_precomp_build(ref, &pc0, &e), GS_OK);
    const int m = ref->m, ng = 4;
    double *G = malloc(sizeof *G * (size_t)m * ng), *w0 = malloc(sizeof *w0 * (size_t)m * ng);
    double *w = malloc(sizeof *w * (size_t)m), *lam = malloc(sizeof *lam * (size_t)m);
    GS_CHECK_INT(gs_gen_gap_cloud(ref, ng, 11, NULL, G, &e), GS_OK);
    gs_solver *s0 = gs_solver_new(pc0, &e);
    for (int r = 0; r < ng; r++) {
        gs_problem pb = {.pc = pc0, .g = G + (size_t)r * m};
        gs_solve_info info;
        GS_CHECK_INT(gs_solve(s0, &pb, NULL, lam, w0 + (size_t)r * m, NULL, &info, &e), GS_OK);
    }
    char *text;
    size_t tlen;
    GS_CHECK_INT(gs_file_read_all(path, 1 << 24, &text, &tlen, &e), GS_OK);
    for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
        /* the same model with every block in format f */
        char *t = strdup(text);
        for (int b = 0; b < ref->n_parts; b++) {
            char from[64], to[200];
            snprintf(from, sizeof from, "\"ref.part%d.npy\"", b);
            const char *fn = write_block(dir, b, ref->parts[b].K, ref->parts[b].ndof, fmts[f]);
            snprintf(to, sizeof to, f % 2 ? "{\"file\": \"%s\", \"format\": \"%s\"}" : "\"%s\"", fn,
                     fmts[f]);
            char *at = strstr(t, from);
            GS_CHECK(at != NULL);
            char *u = malloc(strlen(t) + strlen(to) + 1);
            memcpy(u, t, (size_t)(at - t));
            strcpy(u + (at - t), to);
            strcat(u, at + strlen(from));
            free(t);
            t = u;
        }
        gs_model *mf = NULL;
        gs_err rc = gs_model_parse_json(t, strlen(t), dir, NULL, &mf, &e);
        free(t);
        GS_CHECK_MSG(rc == GS_OK, "%s: %s %s", fmts[f], e.field, e.msg);
        GS_CHECK_MSG(gs_model_equal(ref, mf), "%s: blocks differ", fmts[f]);
        gs_precomp *pc = NULL;
        GS_CHECK_INT(gs_precomp_build(mf, &pc, &e), GS_OK);
        double qmax = 0, dq = 0;
        for (size_t k = 0; k < (size_t)m * m; k++) {
            qmax = fmax(qmax, fabs(pc0->Q[k]));
            dq = fmax(dq, fabs(pc->Q[k] - pc0->Q[k]));
        }
        GS_CHECK_MSG(dq <= 1e-12 * qmax, "%s: |dQ| %.3g of %.3g", fmts[f], dq, qmax);
        gs_solver *sv = gs_solver_new(pc, &e);
        double dw = 0;
        for (int r = 0; r < ng; r++) {
            gs_problem pb = {.pc = pc, .g = G + (size_t)r * m};
            gs_solve_info info;
            GS_CHECK_INT(gs_solve(sv, &pb, NULL, lam, w, NULL, &info, &e), GS_OK);
            for (int k = 0; k < m; k++)
                dw = fmax(dw, fabs(w[k] - w0[(size_t)r * m + k]));
        }
        GS_CHECK_MSG(dw <= 1e-9, "%s: residual gaps differ by %.3g mm", fmts[f], dw);
        fprintf(stderr, "  %-20s n = %d, m = %d: max |dQ| = %.3g (max |Q| %.3g), max |dw| = %.3g mm\n",
                fmts[f], mf->n, m, dq, qmax, dw);
        gs_solver_free(sv);
        gs_precomp_free(pc);
        gs_model_free(mf);
    }
    free(text);
    gs_solver_free(s0);
    gs_precomp_free(pc0);
    gs_model_free(ref);
    gs_model_free(gen);
    free(G);
    free(w0);
    free(w);
    free(lam);
}

GS_TEST_MAIN()
