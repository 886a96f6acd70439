/*
 * test_model_json.c -- the gapsim-model JSON format: a small 2-part model
 * parsed and checked through the model's fields, defaults, referenced .npy
 * and .mtx files, exact write -> read round trips (inline and with .npy
 * blocks), and one test per error kind with its code and JSON field path.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "gs_test.h"
#include "mmio.h"
#include "model_json.h"
#include "npy.h"

static const char *BASE =
    "{\n"
    "  \"format\": \"gapsim-model\", \"version\": 1, \"name\": \"lap-small\",\n"
    "  \"units\": {\"length\": \"mm\", \"force\": \"N\"},\n"
    "  \"parts\": [\n"
    "    {\"name\": \"panel\", \"ndof\": 3, \"K\": [[4, 1, 0], [1, 4, 1], [0, 1, 4]]},\n"
    "    {\"name\": \"flange\", \"ndof\": 2, \"K\": [[3, -1], [-1, 3]]}\n"
    "  ],\n"
    "  \"nodes\": {\"part\": [0, 0, 1, 1], \"dof\": [0, 2, 0, 1],\n"
    "            \"x\": [0, 10, 0, 10], \"y\": [0, 0, 0, 0], \"z\": [1, 1, 0, 0]},\n"
    "  \"pairs\": {\"i\": [0, 1], \"j\": [2, -1], \"cj\": [2.5, 1]},\n"
    "  \"fasteners\": {\"pair\": [0], \"load\": [500.0]},\n"
    "  \"f\": [0, 0, 0, 0, 1.5]\n"
    "}\n";

/* base with the first occurrence of `from` replaced by `to` (malloc'ed). */
static char *subst(const char *base, const char *from, const char *to)
{
    const char *at = strstr(base, from);
    if (!at) {
        fprintf(stderr, "  test bug: '%s' not in the base text\n", from);
        abort();
    }
    size_t a = (size_t)(at - base), fl = strlen(from), tl = strlen(to), bl = strlen(base);
    char *s = malloc(bl - fl + tl + 1);
    if (!s)
        abort();
    memcpy(s, base, a);
    memcpy(s + a, to, tl);
    memcpy(s + a + tl, at + fl, bl - a - fl + 1);
    return s;
}

/* Parse from an exact-size heap copy (not NUL-terminated). */
static gs_err parse_text(const char *text, const char *base_dir, const gs_model_limits *lim,
                         gs_model **out, gs_error *e)
{
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, text, len);
    gs_err rc = gs_model_parse_json(copy, len, base_dir, lim, out, e);
    free(copy);
    return rc;
}

/* Parse `text` (freed here) and expect code, field and a message fragment. */
static int expect_err(char *text, const char *base_dir, const gs_model_limits *lim, gs_err code,
                      const char *field, const char *needle)
{
    gs_model *mdl = (gs_model *)1;
    gs_error e;
    gs_err rc = parse_text(text, base_dir, lim, &mdl, &e);
    int ok = rc == code && mdl == NULL && e.code == code && strcmp(e.field, field) == 0 &&
             (!needle || strstr(e.msg, needle));
    if (!ok)
        fprintf(stderr, "  got %s field '%s' msg '%s'; want %s field '%s' msg '%s'\n",
                gs_err_name(rc), e.field, e.msg, gs_err_name(code), field, needle ? needle : "");
    if (rc == GS_OK && mdl != (gs_model *)1)
        gs_model_free(mdl);
    free(text);
    return ok;
}

static char *dup_str(const char *s)
{
    return subst(s, "{", "{");
}

/* A scratch directory for this test file. */
static const char *scratch(char *buf, size_t len, const char *name)
{
    char dir[512];
    gs_test_tmp_path(dir, sizeof dir, "model_json");
    mkdir(dir, 0755);
    if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
        buf[0] = '\0'; /* too long: callers then fail on an empty path */
    return buf;
}

static int write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return 0;
    int ok = fputs(text, fp) >= 0;
    return fclose(fp) == 0 && ok;
}

GS_TEST(mj_parse_small_model)
{
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_MSG(parse_text(BASE, NULL, NULL, &mdl, &e) == GS_OK, "%s: %s", e.field, e.msg);
    GS_CHECK(mdl->validated);
    GS_CHECK_STR(mdl->name, "lap-small");
    GS_CHECK_INT(mdl->n_parts, 2);
    GS_CHECK_STR(mdl->parts[0].name, "panel");
    GS_CHECK_STR(mdl->parts[1].name, "flange");
    GS_CHECK_INT(mdl->n, 5);
    GS_CHECK_INT(mdl->m, 2);
    GS_CHECK_INT(mdl->n_nodes, 4);
    GS_CHECK_INT(mdl->n_fast, 1);
    GS_CHECK_INT(mdl->parts[0].offset, 0);
    GS_CHECK_INT(mdl->parts[1].offset, 3);
    GS_CHECK_INT(mdl->joint, GS_JOINT_SIMPLE); /* derived: no node in two pairs */
    /* A: pair 0 = -1 at node 0 (global 0), +2.5 at node 2 (part 1 dof 0: global 3) */
    GS_CHECK_INT(mdl->a_row[0], 0);
    GS_CHECK_INT(mdl->a_row[1], 3);
    GS_CHECK(mdl->a_val[0] == -1.0 && mdl->a_val[1] == 2.5);
    /* pair 1: node 1 (part 0 dof 2: global 2) against a fixed part */
    GS_CHECK_INT(mdl->a_row[2], 2);
    GS_CHECK_INT(mdl->a_row[3], -1);
    GS_CHECK(mdl->a_val[2] == -1.0);
    GS_CHECK_INT(mdl->pairs[1].node[1], GS_FIXED);
    double x[5] = {1, 0, 7, 2, 0}, u[2];
    gs_model_At(mdl, x, u);
    GS_CHECK(u[0] == -1.0 + 2.5 * 2.0 && u[1] == -7.0);
    /* blocks: column-major, both triangles */
    const double k1[4] = {3, -1, -1, 3};
    GS_CHECK(memcmp(mdl->parts[1].K, k1, sizeof k1) == 0);
    GS_CHECK(mdl->parts[0].K[1 * 3 + 2] == 1.0 && mdl->parts[0].K[2 * 3 + 0] == 0.0);
    GS_CHECK(mdl->nodes[1].xyz[0] == 10.0 && mdl->nodes[1].xyz[2] == 1.0);
    GS_CHECK_INT(mdl->nodes[3].part, 1);
    GS_CHECK_INT(mdl->nodes[3].dof, 1);
    GS_CHECK_INT(mdl->fast[0].pair, 0);
    GS_CHECK(mdl->fast[0].load == 500.0);
    GS_CHECK(mdl->f != NULL && mdl->f[4] == 1.5 && mdl->f[0] == 0.0);
    gs_model_free(mdl);
}

GS_TEST(mj_defaults_and_joint)
{
    const char *min = "{\"format\": \"gapsim-model\", \"version\": 1,"
                      " \"parts\": [{\"ndof\": 2, \"K\": [[2, 0], [0, 2]]},"
                      "             {\"ndof\": 1, \"K\": [[5]]}],"
                      " \"nodes\": {\"part\": [0, 1], \"dof\": [1, 0]},"
                      " \"pairs\": {\"i\": [0], \"j\": [1]}}";
    gs_model *mdl = NULL;
    gs_error e;
    GS_CHECK_MSG(parse_text(min, NULL, NULL, &mdl, &e) == GS_OK, "%s: %s", e.field, e.msg);
    GS_CHECK_STR(mdl->name, "");
    GS_CHECK(mdl->pairs[0].coef[0] == -1.0 && mdl->pairs[0].coef[1] == 1.0);
    GS_CHECK(mdl->f == NULL);
    GS_CHECK_INT(mdl->n_fast, 0);
    GS_CHECK(mdl->nodes[1].xyz[0] == 0.0 && mdl->nodes[1].xyz[2] == 0.0);
    GS_CHECK_INT(mdl->a_row[0], 1);
    GS_CHECK_INT(mdl->a_row[1], 2);
    GS_CHECK_INT(mdl->joint, GS_JOINT_SIMPLE);
    gs_model_free(mdl);
    char *s = subst(min, "\"version\": 1,", "\"version\": 1, \"joint\": \"sandwich\",");
    GS_CHECK_INT(parse_text(s, NULL, NULL, &mdl, &e), GS_OK);
    free(s);
    GS_CHECK_INT(mdl->joint, GS_JOINT_SANDWICH); /* explicit joint kept */
    gs_model_free(mdl);
}

static void roundtrip(int inline_blocks)
{
    gs_model *a = NULL, *b = NULL;
    gs_error e;
    char dir[512], path[600];
    GS_CHECK_INT(parse_text(BASE, NULL, NULL, &a, &e), GS_OK);
    /* values that need all 17 digits, scaled symmetrically (still valid) */
    for (int p = 0; p < a->n_parts; p++)
        for (int k = 0; k < a->parts[p].ndof * a->parts[p].ndof; k++)
            a->parts[p].K[k] *= 1.0 / 3.0;
    a->nodes[2].xyz[1] = 0.1;
    a->nodes[0].xyz[0] = -0.0;
    a->pairs[0].coef[1] = 2.0 / 3.0;
    a->fast[0].load = 1e-300;
    a->f[1] = -1.0 / 7.0;
    snprintf(a->parts[0].name, sizeof a->parts[0].name, "quote\" back\\ tab\t");
    GS_CHECK_INT(gs_model_validate(a, &e), GS_OK);
    scratch(dir, sizeof dir, "");
    const char *bn = inline_blocks ? "rt_inline" : "rt_npy";
    GS_CHECK_MSG(gs_model_write_json(a, dir, bn, inline_blocks, &e) == GS_OK, "%s", e.msg);
    snprintf(path, sizeof path, "%s/%s.json", dir, bn);
    GS_CHECK_MSG(gs_model_read_json(path, NULL, &b, &e) == GS_OK, "%s: %s", e.field, e.msg);
    GS_CHECK(gs_model_equal(a, b));
    snprintf(path, sizeof path, "%s/%s.part1.npy", dir, bn);
    GS_CHECK_INT(access(path, F_OK) == 0, !inline_blocks);
    snprintf(path, sizeof path, "%s/%s.f.npy", dir, bn);
    GS_CHECK_INT(access(path, F_OK) == 0, !inline_blocks);
    /* the files it was read from: every part's block, then f */
    GS_CHECK_INT(b->n_files, inline_blocks ? 0 : a->n_parts + 1);
    GS_CHECK(inline_blocks ? b->files == NULL : b->files != NULL);
    for (int i = 0; i < b->n_files; i++) {
        char want[600];
        if (i < a->n_parts)
            snprintf(want, sizeof want, "%s/%s.part%d.npy", dir, bn, i);
        else
            snprintf(want, sizeof want, "%s/%s.f.npy", dir, bn);
        GS_CHECK_MSG(!strcmp(b->files[i], want), "%s != %s", b->files[i], want);
    }
    gs_model_free(a);
    gs_model_free(b);
}

GS_TEST(mj_roundtrip_inline_exact)
{
    roundtrip(1);
}

GS_TEST(mj_roundtrip_npy_blocks_exact)
{
    roundtrip(0);
}

GS_TEST(mj_write_errors)
{
    gs_model *a = NULL;
    gs_error e;
    char dir[512];
    GS_CHECK_INT(parse_text(BASE, NULL, NULL, &a, &e), GS_OK);
    scratch(dir, sizeof dir, "");
    GS_CHECK_INT(gs_model_write_json(a, dir, "a/b", 1, &e), GS_ERR_INVALID);
    GS_CHECK_INT(gs_model_write_json(a, dir, "", 1, &e), GS_ERR_INVALID);
    a->nodes[2].xyz[1] = NAN;
    GS_CHECK_INT(gs_model_write_json(a, dir, "nan", 1, &e), GS_ERR_NONFINITE);
    GS_CHECK_STR(e.field, "nodes.y[2]");
    a->nodes[2].xyz[1] = 0;
    GS_CHECK_INT(gs_model_write_json(a, "/nonexistent-dir-gapsim", "x", 1, &e), GS_ERR_IO);
    gs_model_free(a);
}

GS_TEST(mj_referenced_npy_and_mtx_files)
{
    char path[600];
    gs_error e;
    /* part 0 as a C-order .npy in a subdirectory, part 1 as .mtx, f as .npy */
    const double k0[9] = {4, 1, 0, 1, 4, 1, 0, 1, 4}, k1[4] = {3, -1, -1, 3};
    const double f[5] = {0, 0, 0, 0, 1.5};
    size_t s0[2] = {3, 3}, sf[1] = {5};
    mkdir(scratch(path, sizeof path, "blocks"), 0755);
    GS_CHECK_INT(gs_npy_write_file(scratch(path, sizeof path, "blocks/p0.npy"), k0, 2, s0, &e),
                 GS_OK);
    GS_CHECK_INT(gs_mm_write_file(scratch(path, sizeof path, "p1.mtx"), k1, 2, 2, &e), GS_OK);
    GS_CHECK_INT(gs_npy_write_file(scratch(path, sizeof path, "f.npy"), f, 1, sf, &e), GS_OK);
    char *t1 = subst(BASE, "[[4, 1, 0], [1, 4, 1], [0, 1, 4]]", "\"blocks/p0.npy\"");
    char *t2 = subst(t1, "[[3, -1], [-1, 3]]", "\"./p1.mtx\"");
    char *t3 = subst(t2, "[0, 0, 0, 0, 1.5]", "\"f.npy\"");
    GS_CHECK(write_text(scratch(path, sizeof path, "files.json"), t3));
    free(t1);
    free(t2);
    free(t3);
    gs_model *a = NULL, *b = NULL;
    GS_CHECK_MSG(gs_model_read_json(path, NULL, &a, &e) == GS_OK, "%s: %s", e.field, e.msg);
    GS_CHECK_INT(parse_text(BASE, NULL, NULL, &b, &e), GS_OK);
    GS_CHECK(gs_model_equal(a, b));
    gs_model_free(a);
    gs_model_free(b);
}

GS_TEST(mj_file_reference_errors)
{
    char dir[512], path[600];
    gs_error e;
    scratch(dir, sizeof dir, "");
    const char *k1 = "[[3, -1], [-1, 3]]";
    GS_CHECK(expect_err(subst(BASE, k1, "\"p1.npy\""), NULL, NULL, GS_ERR_INVALID, "parts[1].K",
                        "file references not allowed"));
    GS_CHECK(expect_err(subst(BASE, k1, "\"../p1.npy\""), dir, NULL, GS_ERR_INVALID, "parts[1].K",
                        "'..' not allowed"));
    GS_CHECK(expect_err(subst(BASE, k1, "\"a/../../p1.npy\""), dir, NULL, GS_ERR_INVALID,
                        "parts[1].K", "'..' not allowed"));
    GS_CHECK(expect_err(subst(BASE, k1, "\"/etc/p1.npy\""), dir, NULL, GS_ERR_INVALID, "parts[1].K",
                        "absolute path"));
    snprintf(path, sizeof path, "%s/p1.txt", dir); /* no format can be sniffed from it */
    FILE *tf = fopen(path, "w");
    GS_CHECK(tf != NULL);
    fputs("3 -1\n-1 3\n", tf);
    fclose(tf);
    GS_CHECK(expect_err(subst(BASE, k1, "\"p1.txt\""), dir, NULL, GS_ERR_FORMAT, "parts[1].K",
                        "cannot tell the format"));
    GS_CHECK(expect_err(subst(BASE, k1, "{\"file\": \"p1.txt\", \"format\": \"csv\"}"), dir, NULL,
                        GS_ERR_UNSUPPORTED, "parts[1].K.format", "unknown format 'csv'"));
    GS_CHECK(expect_err(subst(BASE, k1, "{\"file\": \"p1.txt\", \"matrix\": \"KAAX\"}"), dir,
                        NULL, GS_ERR_INVALID, "parts[1].K.matrix", "needs \"format\""));
    GS_CHECK(expect_err(subst(BASE, k1, "{\"format\": \"npy\"}"), dir, NULL, GS_ERR_INVALID,
                        "parts[1].K.file", "missing key 'file'"));
    GS_CHECK(expect_err(subst(BASE, k1, "{\"file\": \"p1.txt\", \"fmt\": 1}"), dir, NULL,
                        GS_ERR_INVALID, "parts[1].K.fmt", "unknown key"));
    GS_CHECK(expect_err(subst(BASE, k1, "{\"file\": \"p1.txt\", \"format\": \"abaqus-coordinate\"}"),
                        dir, NULL, GS_ERR_FORMAT, "parts[1].K", "line 1: expected 'row, column, value'"));
    GS_CHECK(expect_err(subst(BASE, "[0, 0, 0, 0, 1.5]", "{\"file\": \"p1.txt\", \"format\": "
                              "\"nastran-dmig\"}"), dir, NULL, GS_ERR_UNSUPPORTED, "f.format",
                        "a vector is read from a npy or matrix-market file"));
    GS_CHECK(expect_err(subst(BASE, k1, "\"\""), dir, NULL, GS_ERR_INVALID, "parts[1].K",
                        "empty file name"));
    GS_CHECK(expect_err(subst(BASE, "[0, 0, 0, 0, 1.5]", "\"f.npy\""), NULL, NULL, GS_ERR_INVALID,
                        "f", "file references not allowed"));
    GS_CHECK(expect_err(subst(BASE, k1, "\"missing.npy\""), dir, NULL, GS_ERR_IO, "parts[1].K",
                        "missing.npy"));
    /* both parts' files bad, read side by side (mj_load_blocks): the first
     * part's error is reported, as reading them in turn would */
    char *both = subst(BASE, k1, "\"missing.npy\"");
    GS_CHECK(expect_err(subst(both, "[[4, 1, 0], [1, 4, 1], [0, 1, 4]]", "\"missing0.npy\""), dir,
                        NULL, GS_ERR_IO, "parts[0].K", "missing0.npy"));
    free(both);
    /* wrong shape: a 3 x 3 file for a 2-DOF part */
    const double k0[9] = {4, 1, 0, 1, 4, 1, 0, 1, 4};
    size_t s0[2] = {3, 3};
    GS_CHECK_INT(gs_npy_write_file(scratch(path, sizeof path, "k3.npy"), k0, 2, s0, &e), GS_OK);
    GS_CHECK(expect_err(subst(BASE, k1, "\"k3.npy\""), dir, NULL, GS_ERR_DIM, "parts[1].K",
                        "holds a 3 x 3 array, expected 2 x 2"));
    GS_CHECK_INT(gs_mm_write_file(scratch(path, sizeof path, "k3.mtx"), k0, 3, 3, &e), GS_OK);
    GS_CHECK(expect_err(subst(BASE, k1, "\"k3.mtx\""), dir, NULL, GS_ERR_DIM, "parts[1].K",
                        "holds a 3 x 3 matrix, expected 2 x 2"));
    /* a float32 .npy: the reader's error is kept, under the part's field */
    static const char f4[] = "\x93NUMPY\x01\x00\x3c\x00{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (1,), }  \n\0\0\0\0";
    FILE *fp = fopen(scratch(path, sizeof path, "f4.npy"), "wb");
    GS_CHECK(fp != NULL);
    fwrite(f4, 1, sizeof f4 - 1, fp);
    fclose(fp);
    GS_CHECK(expect_err(subst(BASE, k1, "\"f4.npy\""), dir, NULL, GS_ERR_UNSUPPORTED, "parts[1].K",
                        "'<f4'"));
    /* f with the wrong length */
    const double f4v[4] = {0};
    size_t sf[1] = {4};
    GS_CHECK_INT(gs_npy_write_file(scratch(path, sizeof path, "f4v.npy"), f4v, 1, sf, &e), GS_OK);
    GS_CHECK(expect_err(subst(BASE, "[0, 0, 0, 0, 1.5]", "\"f4v.npy\""), dir, NULL, GS_ERR_DIM, "f",
                        "expected 5 values"));
    /* the content of a referenced block: the error names the file as
     * written in the model, whether the block is checked when stored (a
     * sparse part) or by the validation (a dense one) */
    const double knan[4] = {3, NAN, NAN, 3}, kasym[4] = {3, -1, -2, 3};
    size_t s2[2] = {2, 2};
    GS_CHECK_INT(gs_npy_write_file(scratch(path, sizeof path, "knan.npy"), knan, 2, s2, &e), GS_OK);
    GS_CHECK(expect_err(subst(BASE, k1, "\"knan.npy\""), dir, NULL, GS_ERR_NONFINITE, "parts[1].K",
                        "'knan.npy': "));
    GS_CHECK_INT(gs_mm_write_file(scratch(path, sizeof path, "kasym.mtx"), kasym, 2, 2, &e), GS_OK);
    GS_CHECK(expect_err(subst(BASE, k1, "\"kasym.mtx\""), dir, NULL, GS_ERR_NOT_SYMMETRIC,
                        "parts[1].K", "'kasym.mtx': "));
    GS_CHECK(expect_err(subst(BASE, k1, "\"kasym.mtx\", \"storage\": \"sparse\""), dir,
                        NULL, GS_ERR_NOT_SYMMETRIC, "parts[1].K", "'kasym.mtx': "));
    /* an inline block's error has no file to name */
    GS_CHECK(expect_err(subst(BASE, k1, "[[3, -1], [-2, 3]]"), dir, NULL, GS_ERR_NOT_SYMMETRIC,
                        "parts[1].K", "K(1,0) = -2"));
}

GS_TEST(mj_not_symmetric_from_validation)
{
    /* K(1,0) = 2 but K(0,1) = 1: validate's message proves the orientation */
    GS_CHECK(expect_err(subst(BASE, "[[4, 1, 0], [1, 4, 1]", "[[4, 1, 0], [2, 4, 1]"), NULL, NULL,
                        GS_ERR_NOT_SYMMETRIC, "parts[0].K", "K(1,0) = 2 differs from K(0,1) = 1"));
    /* duplicate pair: validation's field name is kept */
    GS_CHECK(expect_err(subst(BASE, "\"i\": [0, 1], \"j\": [2, -1]", "\"i\": [0, 2], \"j\": [2, 0]"),
                        NULL, NULL, GS_ERR_DUPLICATE, "pairs[1]", "same nodes"));
}

GS_TEST(mj_type_errors)
{
    GS_CHECK(expect_err(subst(BASE, "\"ndof\": 3", "\"ndof\": \"3\""), NULL, NULL, GS_ERR_INVALID,
                        "parts[0].ndof", "expected an integer, got a string"));
    GS_CHECK(expect_err(subst(BASE, "\"dof\": [0, 2, 0, 1]", "\"dof\": [0, 1.5, 0, 1]"), NULL, NULL,
                        GS_ERR_INVALID, "nodes.dof[1]", "expected an integer, got 1.5"));
    GS_CHECK(expect_err(subst(BASE, "[[4, 1, 0]", "[[4, true, 0]"), NULL, NULL, GS_ERR_INVALID,
                        "parts[0].K[0][1]", "expected a number, got a boolean"));
    GS_CHECK(expect_err(subst(BASE, "\"x\": [0, 10, 0, 10]", "\"x\": [0, 10, null, 10]"), NULL,
                        NULL, GS_ERR_INVALID, "nodes.x[2]", "got null"));
    GS_CHECK(expect_err(subst(BASE, "\"load\": [500.0]", "\"load\": [\"500\"]"), NULL, NULL,
                        GS_ERR_INVALID, "fasteners.load[0]", "expected a number"));
    GS_CHECK(expect_err(subst(BASE, "\"nodes\": {\"part\": [0, 0, 1, 1], \"dof\": [0, 2, 0, 1],\n"
                              "            \"x\": [0, 10, 0, 10], \"y\": [0, 0, 0, 0], \"z\": [1, 1, 0, 0]}",
                              "\"nodes\": 5"),
                        NULL, NULL, GS_ERR_INVALID, "nodes", "expected an object, got a number"));
    GS_CHECK(expect_err(subst(BASE, "\"name\": \"panel\",", "\"name\": 7,"), NULL, NULL,
                        GS_ERR_INVALID, "parts[0].name", "expected a string"));
    GS_CHECK(expect_err(subst(BASE, "[0, 0, 0, 0, 1.5]", "[0, 0, 0, 0, 1e999]"), NULL, NULL,
                        GS_ERR_NONFINITE, "f[4]", NULL));
    GS_CHECK(expect_err(subst(BASE, "[0, 0, 0, 0, 1.5]", "true"), NULL, NULL, GS_ERR_INVALID, "f",
                        "expected an array of 5 numbers or a file name"));
    GS_CHECK(expect_err(subst(BASE, "[0, 0, 0, 0, 1.5]", "{}"), NULL, NULL, GS_ERR_INVALID, "f.file",
                        "missing key 'file'"));
    GS_CHECK(expect_err(subst(BASE, "\"parts\": [", "\"parts\": [3, "), NULL, NULL, GS_ERR_INVALID,
                        "parts[0]", "expected an object"));
}

GS_TEST(mj_length_errors)
{
    GS_CHECK(expect_err(subst(BASE, "\"dof\": [0, 2, 0, 1]", "\"dof\": [0, 2, 0]"), NULL, NULL,
                        GS_ERR_DIM, "nodes.dof", "expected an array of 4 integers, got 3"));
    GS_CHECK(expect_err(subst(BASE, "[1, 4, 1]", "[1, 4]"), NULL, NULL, GS_ERR_DIM, "parts[0].K[1]",
                        "expected an array of 3 numbers, got 2"));
    GS_CHECK(expect_err(subst(BASE, ", [0, 1, 4]]", "]"), NULL, NULL, GS_ERR_DIM, "parts[0].K",
                        "expected an array of 3 rows, got 2"));
    GS_CHECK(expect_err(subst(BASE, "[0, 0, 0, 0, 1.5]", "[0, 0, 0, 1.5]"), NULL, NULL, GS_ERR_DIM,
                        "f", "expected an array of 5 numbers, got 4"));
    GS_CHECK(expect_err(subst(BASE, "\"cj\": [2.5, 1]", "\"cj\": [2.5]"), NULL, NULL, GS_ERR_DIM,
                        "pairs.cj", NULL));
    GS_CHECK(expect_err(subst(BASE, "\"load\": [500.0]", "\"load\": []"), NULL, NULL, GS_ERR_DIM,
                        "fasteners.load", NULL));
    GS_CHECK(expect_err(subst(BASE, "\"z\": [1, 1, 0, 0]", "\"z\": [1, 1, 0, 0, 0]"), NULL, NULL,
                        GS_ERR_DIM, "nodes.z", "got 5"));
    /* a huge ndof with a tiny K is refused before its block is allocated */
    GS_CHECK(expect_err(subst(BASE, "\"ndof\": 2, \"K\": [[3, -1], [-1, 3]]",
                              "\"ndof\": 20000, \"K\": [[3, -1], [-1, 3]]"),
                        NULL, NULL, GS_ERR_DIM, "parts[1].K", "expected an array of 20000 rows, got 2"));
}

GS_TEST(mj_key_errors)
{
    GS_CHECK(expect_err(subst(BASE, "\"pairs\":", "\"pairz\": 1, \"pairs\":"), NULL, NULL,
                        GS_ERR_INVALID, "pairz", "unknown key 'pairz'"));
    GS_CHECK(expect_err(subst(BASE, "\"dof\":", "\"doff\": [], \"dof\":"), NULL, NULL,
                        GS_ERR_INVALID, "nodes.doff", "unknown key 'doff'"));
    GS_CHECK(expect_err(subst(BASE, "\"ndof\": 3,", "\"ndof\": 3, \"Kk\": 1,"), NULL, NULL,
                        GS_ERR_INVALID, "parts[0].Kk", "unknown key"));
    GS_CHECK(expect_err(subst(BASE, "\"name\": \"lap-small\",", "\"name\": \"a\", \"name\": \"b\","),
                        NULL, NULL, GS_ERR_INVALID, "name", "duplicate key 'name'"));
    GS_CHECK(expect_err(subst(BASE, "\"pairs\": {\"i\": [0, 1], \"j\": [2, -1], \"cj\": [2.5, 1]},",
                              "\"comment\": \"free text\","),
                        NULL, NULL, GS_ERR_INVALID, "pairs", "missing key 'pairs'"));
    GS_CHECK(expect_err(subst(BASE, "\"ndof\": 3, ", ""), NULL, NULL, GS_ERR_INVALID,
                        "parts[0].ndof", "missing key 'ndof'"));
    GS_CHECK(expect_err(subst(BASE, "\"i\": [0, 1], ", ""), NULL, NULL, GS_ERR_INVALID, "pairs.i",
                        "missing key"));
    GS_CHECK(expect_err(subst(BASE, "\"force\": \"N\"", "\"force\": \"N\", \"time\": \"s\""), NULL,
                        NULL, GS_ERR_INVALID, "units.time", "unknown key"));
}

GS_TEST(mj_range_errors)
{
    GS_CHECK(expect_err(subst(BASE, "\"j\": [2, -1]", "\"j\": [2, 7]"), NULL, NULL, GS_ERR_RANGE,
                        "pairs.j[1]", "7 out of range [-1, 3]"));
    GS_CHECK(expect_err(subst(BASE, "\"j\": [2, -1]", "\"j\": [2, -2]"), NULL, NULL, GS_ERR_RANGE,
                        "pairs.j[1]", NULL));
    GS_CHECK(expect_err(subst(BASE, "\"i\": [0, 1]", "\"i\": [0, -1]"), NULL, NULL, GS_ERR_RANGE,
                        "pairs.i[1]", NULL));
    GS_CHECK(expect_err(subst(BASE, "\"dof\": [0, 2, 0, 1]", "\"dof\": [0, 2, 2, 1]"), NULL, NULL,
                        GS_ERR_RANGE, "nodes.dof[2]", "a DOF of part 1, which has 2"));
    GS_CHECK(expect_err(subst(BASE, "\"part\": [0, 0, 1, 1]", "\"part\": [2, 0, 1, 1]"), NULL, NULL,
                        GS_ERR_RANGE, "nodes.part[0]", NULL));
    GS_CHECK(expect_err(subst(BASE, "\"pair\": [0]", "\"pair\": [5]"), NULL, NULL, GS_ERR_RANGE,
                        "fasteners.pair[0]", NULL));
    GS_CHECK(expect_err(subst(BASE, "\"ndof\": 3", "\"ndof\": 0"), NULL, NULL, GS_ERR_RANGE,
                        "parts[0].ndof", NULL));
}

GS_TEST(mj_value_errors)
{
    GS_CHECK(expect_err(subst(BASE, "\"load\": [500.0]", "\"load\": [-5]"), NULL, NULL,
                        GS_ERR_INVALID, "fasteners.load[0]", "load -5 N < 0"));
    GS_CHECK(expect_err(subst(BASE, "\"cj\": [2.5, 1]", "\"ci\": [0, -1], \"cj\": [2.5, 1]"), NULL,
                        NULL, GS_ERR_INVALID, "pairs.ci[0]", "zero coefficient"));
    GS_CHECK(expect_err(subst(BASE, "\"cj\": [2.5, 1]", "\"cj\": [0, 1]"), NULL, NULL,
                        GS_ERR_INVALID, "pairs.cj[0]", "zero coefficient"));
    GS_CHECK(expect_err(subst(BASE, "\"length\": \"mm\"", "\"length\": \"m\""), NULL, NULL,
                        GS_ERR_UNSUPPORTED, "units.length", "\"mm\""));
    GS_CHECK(expect_err(subst(BASE, "\"version\": 1,", "\"version\": 1, \"joint\": \"triple\","),
                        NULL, NULL, GS_ERR_INVALID, "joint", "'triple'"));
    char longname[200];
    memset(longname, 'a', sizeof longname);
    memcpy(longname, "\"name\": \"", 9);
    memcpy(longname + 150, "\",", 3);
    GS_CHECK(expect_err(subst(BASE, "\"name\": \"lap-small\",", longname), NULL, NULL,
                        GS_ERR_INVALID, "name", "longer than 127"));
}

GS_TEST(mj_document_errors)
{
    GS_CHECK(expect_err(dup_str("{\n  \"format\": ,\n}"), NULL, NULL, GS_ERR_FORMAT, "",
                        "invalid JSON near line 2"));
    GS_CHECK(expect_err(subst(BASE, "\"f\": [0, 0, 0, 0, 1.5]\n}", "\"f\": [0, 0, 0, 0, 1.5]\n} {}"), NULL, NULL, GS_ERR_FORMAT, "",
                        "unexpected data after the JSON value"));
    GS_CHECK(expect_err(dup_str("[{}]"), NULL, NULL, GS_ERR_FORMAT, "", "a model is a JSON object"));
    /* a string holding U+0000 would end at it in C ("k.mtx\u0000x" naming
     * k.mtx, "gapsim-model\u0000junk" passing the format check); a raw
     * control character is not JSON: both refused where they are */
    GS_CHECK(expect_err(subst(BASE, "\"gapsim-model\"", "\"gapsim-model\\u0000junk\""), NULL, NULL,
                        GS_ERR_FORMAT, "", "invalid JSON near line 2"));
    GS_CHECK(expect_err(subst(BASE, "\"gapsim-model\"", "\"gapsim-\tmodel\""), NULL, NULL,
                        GS_ERR_FORMAT, "", "invalid JSON near line 2"));
    /* numbers as RFC 8259 has them, as in the daemon's request bodies (cJSON
     * alone reads "1.", "01", "000" and "1.e5"): refused where they stand */
    GS_CHECK(expect_err(subst(BASE, "\"version\": 1", "\"version\": 01"), NULL, NULL,
                        GS_ERR_FORMAT, "", "invalid JSON near line 2, column 40"));
    GS_CHECK(expect_err(subst(BASE, "[[4, 1, 0]", "[[4., 1, 0]"), NULL, NULL, GS_ERR_FORMAT, "",
                        "invalid JSON near line 5, column 41"));
    GS_CHECK(expect_err(subst(BASE, "[[4, 1, 0]", "[[000, 1, 0]"), NULL, NULL, GS_ERR_FORMAT, "",
                        "invalid JSON near line 5"));
    GS_CHECK(expect_err(subst(BASE, "[[4, 1, 0]", "[[4.e0, 1, 0]"), NULL, NULL, GS_ERR_FORMAT, "",
                        "invalid JSON near line 5"));
    /* names are shown again (JSON answers, reports): invalid UTF-8 is refused
     * where it is, valid multi-byte text kept */
    GS_CHECK(expect_err(subst(BASE, "\"lap-small\"", "\"lap\xff\""), NULL, NULL, GS_ERR_INVALID,
                        "name", "not valid UTF-8"));
    GS_CHECK(expect_err(subst(BASE, "\"flange\"", "\"fl\xc3\x28\""), NULL, NULL, GS_ERR_INVALID,
                        "parts[1].name", "not valid UTF-8"));
    {
        gs_model *mdl = NULL;
        gs_error e;
        char *t = subst(BASE, "\"flange\"", "\"Flansch \xc3\xa4\xe2\x82\xac\"");
        GS_CHECK_INT(parse_text(t, NULL, NULL, &mdl, &e), GS_OK);
        GS_CHECK_STR(mdl->parts[1].name, "Flansch \xc3\xa4\xe2\x82\xac");
        gs_model_free(mdl);
        free(t);
    }
    /* an escaped backslash before "u0000" is text, not an escape */
    GS_CHECK(expect_err(subst(BASE, "\"gapsim-model\"", "\"gapsim-model\\\\u0000\""), NULL, NULL,
                        GS_ERR_FORMAT, "format", "not a gapsim model"));
    GS_CHECK(expect_err(dup_str("{\"format\": \"gapsim-model\", \"version\": 1, \"parts\": [],"
                                " \"nodes\": {\"part\": [], \"dof\": []}, \"pairs\": {\"i\": [], \"j\": []}}"),
                        NULL, NULL, GS_ERR_INVALID, "parts", "at least one part"));
    GS_CHECK(expect_err(subst(BASE, "\"gapsim-model\"", "\"other\""), NULL, NULL, GS_ERR_FORMAT,
                        "format", "not a gapsim model"));
    GS_CHECK(expect_err(subst(BASE, "\"version\": 1", "\"version\": 2"), NULL, NULL,
                        GS_ERR_UNSUPPORTED, "version", "version 2 not supported"));
    GS_CHECK(expect_err(subst(BASE, "\"version\": 1", "\"version\": \"1\""), NULL, NULL,
                        GS_ERR_INVALID, "version", NULL));
    GS_CHECK(expect_err(subst(BASE, "\"version\": 1,", ""), NULL, NULL, GS_ERR_INVALID, "version",
                        "missing key"));
    gs_model *mdl = (gs_model *)1;
    gs_error e;
    GS_CHECK_INT(gs_model_parse_json("", 0, NULL, NULL, &mdl, &e), GS_ERR_FORMAT);
    GS_CHECK(mdl == NULL);
    /* the file reader names the file in syntax errors */
    char path[600];
    GS_CHECK(write_text(scratch(path, sizeof path, "broken.json"), "{\"format\": "));
    GS_CHECK_INT(gs_model_read_json(path, NULL, &mdl, &e), GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "broken.json") != NULL);
    GS_CHECK_INT(gs_model_read_json(scratch(path, sizeof path, "nope.json"), NULL, &mdl, &e),
                 GS_ERR_IO);
}

GS_TEST(mj_docs_example_parses)
{
    /* the first ```json block of docs/formats.md, with its flange block file */
    char docs[1024], path[600];
    snprintf(docs, sizeof docs, "%s", __FILE__);
    char *slash = strrchr(docs, '/');
    GS_CHECK(slash != NULL);
    snprintf(slash + 1, sizeof docs - (size_t)(slash + 1 - docs), "../../docs/formats.md");
    FILE *fp = fopen(docs, "r");
    GS_CHECK_MSG(fp != NULL, "cannot open %s", docs);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    text[len] = '\0';
    char *start = strstr(text, "```json\n");
    GS_CHECK(start != NULL);
    start += 8;
    char *end = strstr(start, "```");
    GS_CHECK(end != NULL);
    *end = '\0';
    GS_CHECK(write_text(scratch(path, sizeof path, "lap-small.json"), start));
    gs_error e;
    const double k1[4] = {3, -1, -1, 3};
    size_t s1[2] = {2, 2};
    GS_CHECK_INT(gs_npy_write_file(scratch(path, sizeof path, "lap-small.part1.npy"), k1, 2, s1, &e),
                 GS_OK);
    gs_model *mdl = NULL;
    GS_CHECK_MSG(gs_model_read_json(scratch(path, sizeof path, "lap-small.json"), NULL, &mdl, &e) ==
                     GS_OK,
                 "%s: %s", e.field, e.msg);
    /* the facts the document states */
    GS_CHECK_INT(mdl->n, 5);
    GS_CHECK_INT(mdl->m, 2);
    GS_CHECK_INT(mdl->parts[1].offset, 3);
    GS_CHECK(mdl->a_row[0] == 0 && mdl->a_val[0] == -1.0 && mdl->a_row[1] == 3 &&
             mdl->a_val[1] == 1.0);
    GS_CHECK(mdl->a_row[2] == 2 && mdl->a_val[2] == -1.0 && mdl->a_row[3] == -1);
    GS_CHECK(mdl->n_fast == 1 && mdl->fast[0].pair == 0 && mdl->fast[0].load == 500.0);
    gs_model_free(mdl);
}

GS_TEST(mj_limits)
{
    gs_model_limits lim;
    gs_model_limits_default(&lim);
    GS_CHECK(lim.max_block_elems == (size_t)20000 * 20000 && lim.max_parts == 64 &&
             lim.max_nodes == 200000 && lim.max_pairs == 100000);
    gs_model_limits l = lim;
    l.max_parts = 1;
    GS_CHECK(expect_err(dup_str(BASE), NULL, &l, GS_ERR_LIMIT, "parts", "2 parts exceed the limit of 1"));
    l = lim;
    l.max_block_elems = 8;
    GS_CHECK(expect_err(dup_str(BASE), NULL, &l, GS_ERR_LIMIT, "parts[0].ndof",
                        "a block of 3 x 3 exceeds the limit of 8"));
    l = lim;
    l.max_nodes = 3;
    GS_CHECK(expect_err(dup_str(BASE), NULL, &l, GS_ERR_LIMIT, "nodes.part", NULL));
    l = lim;
    l.max_pairs = 1;
    GS_CHECK(expect_err(dup_str(BASE), NULL, &l, GS_ERR_LIMIT, "pairs.i", NULL));
}

GS_TEST_MAIN()
