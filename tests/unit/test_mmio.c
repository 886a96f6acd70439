/*
 * test_mmio.c -- Matrix Market reader/writer: every accepted variant with
 * exact values, an exact write/read round trip, and the error classes.
 * Inputs are parsed from exact-size heap copies (no NUL terminator), so a
 * read past the end is caught by ASan.
 */
#include "gs_test.h"
#include "mmio.h"

static gs_err parse(const char *text, size_t max_elems, double **d, int *r, int *c, gs_error *e)
{
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, text, len);
    gs_err rc = gs_mm_read_mem(copy, len, max_elems, d, r, c, e);
    free(copy);
    return rc;
}

/* Parse and expect failure with code; the message must contain `needle`. */
static int fails_with(const char *text, gs_err code, const char *needle, gs_error *e)
{
    double *d = (double *)1;
    int r = -1, c = -1;
    gs_err rc = parse(text, 1000, &d, &r, &c, e);
    if (rc != code || d != NULL || r != 0 || c != 0) {
        fprintf(stderr, "  got %d (%s) for:\n%s\n", rc, e->msg, text);
        return 0;
    }
    if (needle && !strstr(e->msg, needle)) {
        fprintf(stderr, "  message '%s' lacks '%s'\n", e->msg, needle);
        return 0;
    }
    return 1;
}

GS_TEST(mm_array_general)
{
    double *d = NULL;
    int r, c;
    gs_error e;
    /* [[1, 2, 3], [4, 5, 6]] listed column by column */
    GS_CHECK_INT(parse("%%MatrixMarket matrix array real general\n% a comment\n\n2 3\n"
                       "1\n4\n2\n5\n3\n6\n",
                       6, &d, &r, &c, &e),
                 GS_OK);
    GS_CHECK_INT(r, 2);
    GS_CHECK_INT(c, 3);
    for (int k = 0; k < 6; k++)
        GS_CHECK(d[k] == (double)(k + 1));
    free(d);
}

GS_TEST(mm_array_symmetric)
{
    double *d = NULL;
    int r, c;
    gs_error e;
    /* lower triangle column by column: a11 a21 a31 a22 a32 a33 */
    GS_CHECK_INT(parse("%%MatrixMarket matrix array real symmetric\n3 3\n4\n1\n0.5\n5\n2\n6",
                       9, &d, &r, &c, &e),
                 GS_OK);
    const double want[9] = {4, 1, 0.5, 1, 5, 2, 0.5, 2, 6};
    GS_CHECK_INT(r, 3);
    GS_CHECK_INT(c, 3);
    GS_CHECK(memcmp(d, want, sizeof want) == 0);
    free(d);
}

GS_TEST(mm_coordinate_general_sums_duplicates)
{
    double *d = NULL;
    int r, c;
    gs_error e;
    GS_CHECK_INT(parse("%%MATRIXMARKET Matrix Coordinate Real General\r\n"
                       "%\r\n3 2 4\r\n1 1 1.5\r\n3 2 -2e-3\r\n\r\n1 1 0.25\r\n  2\t1  7  \r\n",
                       6, &d, &r, &c, &e),
                 GS_OK);
    GS_CHECK_INT(r, 3);
    GS_CHECK_INT(c, 2);
    const double want[6] = {1.75, 0, 7, 0, 0, -2e-3};
    GS_CHECK(memcmp(d, want, sizeof want) == 0);
    free(d);
}

GS_TEST(mm_coordinate_symmetric_mirrors)
{
    double *d = NULL;
    int r, c;
    gs_error e;
    GS_CHECK_INT(parse("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n"
                       "1 1 4\n2 1 -1\n3 3 2.5\n3 2 0.125\n",
                       9, &d, &r, &c, &e),
                 GS_OK);
    const double want[9] = {4, -1, 0, -1, 0, 0.125, 0, 0.125, 2.5};
    GS_CHECK(memcmp(d, want, sizeof want) == 0);
    free(d);
}

GS_TEST(mm_integer_and_double_fields)
{
    double *d = NULL;
    int r, c;
    gs_error e;
    GS_CHECK_INT(parse("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 +3",
                       4, &d, &r, &c, &e),
                 GS_OK);
    GS_CHECK(d[1] == -7.0 && d[2] == 3.0 && d[0] == 0.0);
    free(d);
    GS_CHECK_INT(parse("%%MatrixMarket matrix array double general\n1 2\n.5\n-1.e2\n", 2, &d, &r,
                       &c, &e),
                 GS_OK);
    GS_CHECK(d[0] == 0.5 && d[1] == -100.0);
    free(d);
    /* inf / nan literals are read; callers validate finiteness */
    GS_CHECK_INT(parse("%%MatrixMarket matrix array real general\n1 2\n-inf\nNaN\n", 2, &d, &r, &c,
                       &e),
                 GS_OK);
    GS_CHECK(isinf(d[0]) && d[0] < 0 && isnan(d[1]));
    free(d);
}

GS_TEST(mm_write_read_roundtrip_exact)
{
    char path[512];
    gs_test_tmp_path(path, sizeof path, "mm_rt.mtx");
    const double v[6] = {0.1, -0.0, 4.9406564584124654e-324, 1.7976931348623157e308, -1.0 / 3.0,
                         123456789.123456789};
    gs_error e;
    GS_CHECK_INT(gs_mm_write_file(path, v, 2, 3, &e), GS_OK);
    double *d = NULL;
    int r, c;
    GS_CHECK_INT(gs_mm_read_file(path, 6, &d, &r, &c, &e), GS_OK);
    GS_CHECK_INT(r, 2);
    GS_CHECK_INT(c, 3);
    GS_CHECK(memcmp(d, v, sizeof v) == 0);
    free(d);
    GS_CHECK_INT(gs_mm_read_file(path, 5, &d, &r, &c, &e), GS_ERR_LIMIT);
    GS_CHECK(strstr(e.msg, "mm_rt.mtx") != NULL); /* file errors name the file */
    gs_test_tmp_path(path, sizeof path, "mm_missing.mtx");
    GS_CHECK_INT(gs_mm_read_file(path, 6, &d, &r, &c, &e), GS_ERR_IO);
    GS_CHECK_INT(gs_mm_write_file(path, NULL, 2, 2, &e), GS_ERR_INVALID);
}

GS_TEST(mm_unsupported_variants)
{
    gs_error e;
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n",
                        GS_ERR_UNSUPPORTED, "pattern", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n",
                        GS_ERR_UNSUPPORTED, "complex", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real hermitian\n1 1\n1\n", GS_ERR_UNSUPPORTED,
                        "hermitian", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n",
                        GS_ERR_UNSUPPORTED, "skew-symmetric", &e));
    GS_CHECK(fails_with("%%MatrixMarket vector array real general\n2\n1\n2\n", GS_ERR_UNSUPPORTED,
                        "vector", &e));
}

GS_TEST(mm_bad_banner_and_size)
{
    gs_error e;
    GS_CHECK(fails_with("", GS_ERR_FORMAT, "banner", &e));
    GS_CHECK(fails_with("2 2\n1\n2\n3\n4\n", GS_ERR_FORMAT, "banner", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real\n1 1\n1\n", GS_ERR_FORMAT, "4 words", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix dense real general\n1 1\n1\n", GS_ERR_FORMAT,
                        "format 'dense'", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n% only comments\n",
                        GS_ERR_FORMAT, "size line", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n2 2\n", GS_ERR_FORMAT,
                        "line 2: size line", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n2 -2\n", GS_ERR_FORMAT,
                        "non-negative", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real symmetric\n2 3\n", GS_ERR_FORMAT,
                        "square", &e));
}

GS_TEST(mm_huge_dimensions)
{
    gs_error e;
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n100000 100000 1\n1 1 1\n",
                        GS_ERR_LIMIT, "exceeds the limit of 1000", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n4000000000 1\n", GS_ERR_LIMIT,
                        "4000000000", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n"
                        "99999999999999999999999999 1\n",
                        GS_ERR_LIMIT, NULL, &e));
}

GS_TEST(mm_index_range_names_line)
{
    gs_error e;
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 1 1\n",
                        GS_ERR_RANGE, "line 4: row index 3 out of range [1, 2]", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 0 1\n",
                        GS_ERR_RANGE, "line 3: column index 0", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n2 2 1\n-1 1 1\n",
                        GS_ERR_RANGE, "line 3", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n2 2 1\n1.0 1 1\n",
                        GS_ERR_FORMAT, "not an integer", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n",
                        GS_ERR_FORMAT, "above the diagonal", &e));
}

GS_TEST(mm_entry_count_must_match)
{
    gs_error e;
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n",
                        GS_ERR_FORMAT, "expected 3 entries, found 2", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n",
                        GS_ERR_FORMAT, "line 4: more entries than the 1 declared", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n2 1\n1\n", GS_ERR_FORMAT,
                        "expected 2 entries, found 1", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n",
                        GS_ERR_FORMAT, "line 6: more entries than the 3 declared", &e));
}

GS_TEST(mm_bad_values)
{
    gs_error e;
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n1 1\nabc\n", GS_ERR_FORMAT,
                        "line 3: invalid number 'abc'", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n1 1\n0x1p3\n", GS_ERR_FORMAT,
                        "invalid number", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n1 1\n1e999\n", GS_ERR_FORMAT,
                        "beyond the double range", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n1 1\n1e\n", GS_ERR_FORMAT,
                        "invalid number", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array real general\n1 1\n1 2\n", GS_ERR_FORMAT,
                        "one value per line", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix array integer general\n1 1\n1.5\n", GS_ERR_FORMAT,
                        "not an integer", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1 0\n",
                        GS_ERR_FORMAT, "more than 3 tokens", &e));
    GS_CHECK(fails_with("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1\n",
                        GS_ERR_FORMAT, "found 2 tokens", &e));
    /* an embedded NUL inside a token */
    const char text[] = "%%MatrixMarket matrix array real general\n1 1\n1\0002\n";
    char *copy = malloc(sizeof text - 1);
    GS_CHECK(copy != NULL);
    memcpy(copy, text, sizeof text - 1);
    double *d = NULL;
    int r, c;
    gs_err rc = gs_mm_read_mem(copy, sizeof text - 1, 10, &d, &r, &c, &e);
    free(copy);
    GS_CHECK_INT(rc, GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "invalid number '1?2'") != NULL);
}

GS_TEST(mm_empty_matrix)
{
    double *d = NULL;
    int r, c;
    gs_error e;
    GS_CHECK_INT(parse("%%MatrixMarket matrix coordinate real general\n0 0 0\n", 10, &d, &r, &c, &e),
                 GS_OK);
    GS_CHECK(d != NULL);
    GS_CHECK_INT(r, 0);
    GS_CHECK_INT(c, 0);
    free(d);
}

GS_TEST_MAIN()
