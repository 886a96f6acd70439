/*
 * test_npy.c -- .npy reader/writer: exact round trips (C and Fortran order,
 * v1/v2/v3 headers built by hand), header parsing robustness, and one test
 * per malformed-input class with its expected error code.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_test.h"
#include "npy.h"

/* Build a .npy image: magic, version major.0, dict padded to 64 bytes with
 * spaces and '\n', then raw little-endian doubles (host is little-endian on
 * every platform gapsim supports; checked in npy_host_is_little_endian). */
static size_t make_npy(unsigned char *buf, size_t cap, int major, const char *dict,
                       const double *data, size_t n)
{
    size_t pl = major == 1 ? 10 : 12, dl = strlen(dict);
    size_t total = (pl + dl + 1 + 63) / 64 * 64, hl = total - pl;
    if (total + 8 * n > cap)
        abort();
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    if (major > 1) {
        buf[10] = (unsigned char)(hl >> 16);
        buf[11] = (unsigned char)(hl >> 24);
    }
    memcpy(buf + pl, dict, dl);
    memset(buf + pl + dl, ' ', total - pl - dl - 1);
    buf[total - 1] = '\n';
    if (n)
        memcpy(buf + total, data, 8 * n);
    return total + 8 * n;
}

static unsigned char img[1 << 16];

/* Parse a dict-only image and return the error code (data: n zeros). */
static gs_err try_dict(const char *dict, size_t n, size_t max_elems, gs_error *e)
{
    static const double zeros[64];
    size_t len = make_npy(img, sizeof img, 1, dict, zeros, n);
    double *d = NULL;
    gs_npy_info info;
    gs_err rc = gs_npy_read_mem(img, len, max_elems, &d, &info, e);
    free(d);
    return rc;
}

GS_TEST(npy_host_is_little_endian)
{
    uint16_t one = 1;
    unsigned char b[2];
    memcpy(b, &one, 2);
    GS_CHECK_INT(b[0], 1); /* the hand-built images below rely on it */
}

GS_TEST(npy_c_order_mem_exact)
{
    const double v[6] = {1.5, -2.25, 0.1, -0.0, 4.9406564584124654e-324, 1.7976931348623157e308};
    size_t len = make_npy(img, sizeof img, 1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", v, 6);
    double *d = NULL;
    gs_npy_info info;
    gs_error e;
    GS_CHECK_INT(gs_npy_read_mem(img, len, 100, &d, &info, &e), GS_OK);
    GS_CHECK_INT(info.ndim, 2);
    GS_CHECK_INT(info.shape[0], 2);
    GS_CHECK_INT(info.shape[1], 3);
    GS_CHECK_INT(info.fortran_order, 0);
    GS_CHECK(memcmp(d, v, sizeof v) == 0); /* bit-identical, -0.0 and denormal included */
    free(d);
}

GS_TEST(npy_fortran_order_mem_transposed)
{
    /* A = [[1,2,3],[4,5,6]] stored column by column */
    const double colmaj[6] = {1, 4, 2, 5, 3, 6};
    size_t len = make_npy(img, sizeof img, 1,
                          "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", colmaj, 6);
    double *d = NULL;
    gs_npy_info info;
    gs_error e;
    GS_CHECK_INT(gs_npy_read_mem(img, len, 6, &d, &info, &e), GS_OK);
    GS_CHECK_INT(info.fortran_order, 1);
    for (int k = 0; k < 6; k++)
        GS_CHECK(d[k] == (double)(k + 1)); /* always returned row-major */
    free(d);
}

GS_TEST(npy_header_variants_accepted)
{
    const double v[6] = {1, 2, 3, 4, 5, 6};
    const char *dicts[] = {
        "{\"shape\" : ( 2 ,3 ) , 'fortran_order':False,'descr':'<f8'}",
        "{'descr':'<f8','fortran_order':False,'shape':(2,3)}",
        "  {\t'fortran_order': False,\n 'descr': \"<f8\", 'shape': (2L, 3L),}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3,), }",
    };
    for (size_t t = 0; t < sizeof dicts / sizeof *dicts; t++) {
        size_t len = make_npy(img, sizeof img, 1, dicts[t], v, 6);
        double *d = NULL;
        gs_npy_info info;
        gs_error e;
        GS_CHECK_MSG(gs_npy_read_mem(img, len, 6, &d, &info, &e) == GS_OK, "dict %zu: %s", t,
                     e.msg);
        GS_CHECK_INT(info.shape[0], 2);
        GS_CHECK_INT(info.shape[1], 3);
        GS_CHECK(memcmp(d, v, sizeof v) == 0);
        free(d);
    }
}

GS_TEST(npy_v2_v3_headers)
{
    const double v[3] = {7, 8, 9};
    for (int major = 2; major <= 3; major++) {
        size_t len = make_npy(img, sizeof img, major,
                              "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", v, 3);
        double *d = NULL;
        gs_npy_info info;
        size_t off;
        gs_error e;
        GS_CHECK_INT(gs_npy_parse_header(img, len, &info, &off, &e), GS_OK);
        GS_CHECK_INT(off % 64, 0);
        GS_CHECK_INT(off + 24, len);
        GS_CHECK_INT(gs_npy_read_mem(img, len, 3, &d, &info, &e), GS_OK);
        GS_CHECK_INT(info.ndim, 1);
        GS_CHECK_INT(info.shape[0], 3);
        GS_CHECK_INT(info.shape[1], 1);
        GS_CHECK(d[0] == 7 && d[1] == 8 && d[2] == 9);
        free(d);
    }
}

GS_TEST(npy_write_header_layout)
{
    unsigned char h[GS_NPY_HEADER_CAP];
    size_t shape[2] = {4000, 2600}, len, off;
    gs_error e;
    GS_CHECK_INT(gs_npy_write_header(h, sizeof h, 2, shape, &len, &e), GS_OK);
    GS_CHECK_INT(len % 64, 0);
    GS_CHECK(memcmp(h, "\x93NUMPY\x01\x00", 8) == 0);
    GS_CHECK_INT(h[8] | h[9] << 8, len - 10);
    GS_CHECK_INT(h[len - 1], '\n');
    gs_npy_info info;
    GS_CHECK_INT(gs_npy_parse_header(h, len, &info, &off, &e), GS_OK);
    GS_CHECK_INT(off, len);
    GS_CHECK_INT(info.ndim, 2);
    GS_CHECK_INT(info.shape[0], 4000);
    GS_CHECK_INT(info.shape[1], 2600);
    GS_CHECK_INT(gs_npy_write_header(h, 32, 2, shape, &len, &e), GS_ERR_LIMIT);
    GS_CHECK_INT(gs_npy_write_header(h, sizeof h, 3, shape, &len, &e), GS_ERR_INVALID);
}

GS_TEST(npy_file_roundtrip_exact)
{
    char path[512];
    gs_test_tmp_path(path, sizeof path, "npy_rt.npy");
    double v[12];
    for (int k = 0; k < 12; k++)
        v[k] = (k - 5) / 3.0 * pow(10.0, k - 6);
    v[3] = -0.0;
    v[7] = NAN; /* the reader keeps non-finite values: callers validate */
    v[8] = -INFINITY;
    size_t shape[2] = {3, 4};
    gs_error e;
    GS_CHECK_INT(gs_npy_write_file(path, v, 2, shape, &e), GS_OK);
    struct stat st;
    GS_CHECK(stat(path, &st) == 0);
    GS_CHECK_INT(st.st_size, 128 + 12 * 8); /* the (3, 4) dict needs a 128-byte header */
    double *d = NULL;
    gs_npy_info info;
    GS_CHECK_INT(gs_npy_read_file(path, 12, &d, &info, &e), GS_OK);
    GS_CHECK_INT(info.ndim, 2);
    GS_CHECK_INT(info.shape[0], 3);
    GS_CHECK_INT(info.shape[1], 4);
    GS_CHECK(memcmp(d, v, sizeof v) == 0);
    free(d);
    /* 1-D */
    size_t s1[1] = {5};
    GS_CHECK_INT(gs_npy_write_file(path, v, 1, s1, &e), GS_OK);
    GS_CHECK_INT(gs_npy_read_file(path, 5, &d, &info, &e), GS_OK);
    GS_CHECK_INT(info.ndim, 1);
    GS_CHECK_INT(info.shape[0], 5);
    GS_CHECK_INT(info.shape[1], 1);
    GS_CHECK(memcmp(d, v, 5 * sizeof *v) == 0);
    free(d);
    /* max_elems one short: refused before reading */
    GS_CHECK_INT(gs_npy_read_file(path, 4, &d, &info, &e), GS_ERR_LIMIT);
    GS_CHECK(d == NULL);
}

GS_TEST(npy_file_col_major_orders)
{
    char path[512];
    gs_test_tmp_path(path, sizeof path, "npy_colmaj.npy");
    /* column-major 2 x 3 array A = [[1,2,3],[4,5,6]] */
    const double cm[6] = {1, 4, 2, 5, 3, 6};
    size_t shape[2] = {2, 3};
    gs_error e;
    GS_CHECK_INT(gs_npy_write_file_order(path, cm, 2, shape, GS_NPY_COL_MAJOR, &e), GS_OK);
    double *d = NULL;
    gs_npy_info info;
    GS_CHECK_INT(gs_npy_read_file(path, 6, &d, &info, &e), GS_OK);
    GS_CHECK_INT(info.fortran_order, 1);
    for (int k = 0; k < 6; k++)
        GS_CHECK(d[k] == (double)(k + 1));
    free(d);
    /* two-step reading into a column-major buffer gives the input back */
    gs_npy_file f;
    double back[6];
    GS_CHECK_INT(gs_npy_open(path, 6, &f, &e), GS_OK);
    GS_CHECK_INT(gs_npy_read_data(&f, back, GS_NPY_COL_MAJOR, &e), GS_OK);
    gs_npy_close(&f);
    GS_CHECK(memcmp(back, cm, sizeof cm) == 0);
    /* a C-order file read column-major is transposed */
    const double rm[6] = {1, 2, 3, 4, 5, 6};
    GS_CHECK_INT(gs_npy_write_file(path, rm, 2, shape, &e), GS_OK);
    GS_CHECK_INT(gs_npy_open(path, 6, &f, &e), GS_OK);
    GS_CHECK_INT(gs_npy_read_data(&f, back, GS_NPY_COL_MAJOR, &e), GS_OK);
    gs_npy_close(&f);
    GS_CHECK(memcmp(back, cm, sizeof cm) == 0);
}

GS_TEST(npy_larger_than_one_chunk)
{
    char path[512];
    gs_test_tmp_path(path, sizeof path, "npy_big.npy");
    const size_t r = 150, c = 130; /* 19500 doubles: 3 chunks, transposed across chunks */
    double *v = malloc(r * c * sizeof *v), *d = NULL;
    GS_CHECK(v != NULL);
    for (size_t k = 0; k < r * c; k++)
        v[k] = (double)k * 0.5 - 7.0;
    size_t shape[2] = {r, c};
    gs_error e;
    GS_CHECK_INT(gs_npy_write_file_order(path, v, 2, shape, GS_NPY_COL_MAJOR, &e), GS_OK);
    gs_npy_info info;
    gs_err rc = gs_npy_read_file(path, r * c, &d, &info, &e);
    int ok = rc == GS_OK;
    for (size_t i = 0; ok && i < r; i++)
        for (size_t j = 0; j < c; j++)
            if (d[i * c + j] != v[j * r + i])
                ok = 0;
    free(v);
    free(d);
    GS_CHECK_INT(rc, GS_OK);
    GS_CHECK(ok);
}

/* A file whose layout is the destination's is read straight into it, in
 * reads of 2^20 doubles: a 1,100 x 1,000 array takes two, bit for bit. */
GS_TEST(npy_same_layout_read_in_place)
{
    char path[512];
    gs_test_tmp_path(path, sizeof path, "npy_direct.npy");
    const size_t r = 1100, c = 1000;
    double *v = malloc(r * c * sizeof *v), *d = NULL;
    GS_CHECK(v != NULL);
    for (size_t k = 0; k < r * c; k++)
        v[k] = sin((double)k) * 1e3;
    v[r * c - 1] = -0.0;
    size_t shape[2] = {r, c};
    gs_error e;
    GS_CHECK_INT(gs_npy_write_file(path, v, 2, shape, &e), GS_OK);
    gs_npy_info info;
    GS_CHECK_INT(gs_npy_read_file(path, r * c, &d, &info, &e), GS_OK);
    GS_CHECK(d && memcmp(d, v, r * c * sizeof *v) == 0);
    free(d);
    free(v);
}

GS_TEST(npy_empty_array)
{
    size_t len = make_npy(img, sizeof img, 1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", NULL, 0);
    double *d = NULL;
    gs_npy_info info;
    gs_error e;
    GS_CHECK_INT(gs_npy_read_mem(img, len, 10, &d, &info, &e), GS_OK);
    GS_CHECK(d != NULL);
    GS_CHECK_INT(info.shape[0], 0);
    GS_CHECK_INT(info.shape[1], 3);
    free(d);
}

GS_TEST(npy_bad_magic_and_version)
{
    gs_error e;
    double *d = (double *)1;
    gs_npy_info info;
    const unsigned char bad[16] = "\x93NUMPZ\x01\x00\x10\x00{}";
    GS_CHECK_INT(gs_npy_read_mem(bad, sizeof bad, 10, &d, &info, &e), GS_ERR_FORMAT);
    GS_CHECK(d == NULL);
    GS_CHECK(strstr(e.msg, "magic") != NULL);
    GS_CHECK_INT(gs_npy_read_mem("PK\x03\x04", 4, 10, &d, &info, &e), GS_ERR_FORMAT);
    unsigned char v4[16] = "\x93NUMPY\x04\x00\x10\x00";
    GS_CHECK_INT(gs_npy_read_mem(v4, sizeof v4, 10, &d, &info, &e), GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "4.0") != NULL);
    unsigned char v11[16] = "\x93NUMPY\x01\x01\x10\x00";
    GS_CHECK_INT(gs_npy_read_mem(v11, sizeof v11, 10, &d, &info, &e), GS_ERR_UNSUPPORTED);
}

GS_TEST(npy_truncated_header)
{
    gs_error e;
    double *d = NULL;
    gs_npy_info info;
    size_t off;
    size_t len = make_npy(img, sizeof img, 1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                          (const double[]){1}, 1);
    const size_t hdr = len - 8; /* one double of data */
    for (size_t cut = 0; cut < hdr; cut++) {
        GS_CHECK_INT(gs_npy_parse_header(img, cut, &info, &off, &e), GS_ERR_FORMAT);
        GS_CHECK(strstr(e.msg, "truncated header") != NULL);
    }
    GS_CHECK_INT(gs_npy_parse_header(img, hdr, &info, &off, &e), GS_OK);
    GS_CHECK_INT(off, hdr);
    GS_CHECK_INT(gs_npy_read_mem(img, 40, 10, &d, &info, &e), GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "truncated header") != NULL);
    /* header length field pointing past the buffer */
    img[8] = 0xff;
    img[9] = 0xff;
    GS_CHECK_INT(gs_npy_parse_header(img, len, &info, &off, &e), GS_ERR_FORMAT);
}

GS_TEST(npy_truncated_and_trailing_data)
{
    const double v[6] = {1, 2, 3, 4, 5, 6};
    size_t len = make_npy(img, sizeof img, 1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", v, 6);
    double *d = NULL;
    gs_npy_info info;
    gs_error e;
    GS_CHECK_INT(gs_npy_read_mem(img, len - 8, 6, &d, &info, &e), GS_ERR_FORMAT);
    GS_CHECK_STR(e.msg, "truncated data: expected 48 bytes, have 40");
    GS_CHECK(d == NULL);
    GS_CHECK_INT(gs_npy_read_mem(img, len - 1, 6, &d, &info, &e), GS_ERR_FORMAT);
    img[len] = 0;
    GS_CHECK_INT(gs_npy_read_mem(img, len + 1, 6, &d, &info, &e), GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "1 unexpected bytes after the data") != NULL);
    GS_CHECK(d == NULL);
}

GS_TEST(npy_wrong_dtypes)
{
    const char *descr[] = {"<f4", "<i8", ">f8", "<c16", "|O", "<U8", "=f8", "|u1"};
    for (size_t t = 0; t < sizeof descr / sizeof *descr; t++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }",
                 descr[t]);
        gs_error e;
        GS_CHECK_INT(try_dict(dict, 2, 10, &e), GS_ERR_UNSUPPORTED);
        GS_CHECK_MSG(strstr(e.msg, descr[t]) != NULL, "message '%s' names %s", e.msg, descr[t]);
    }
    gs_error e;
    GS_CHECK_INT(try_dict("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", 2,
                          10, &e),
                 GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "structured") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", 2, 10, &e),
                 GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "big-endian") != NULL);
}

GS_TEST(npy_huge_dimensions_rejected_before_allocating)
{
    gs_error e;
    /* 4e9 x 4e9 elements: the byte count overflows size_t */
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, "
                          "'shape': (4000000000, 4000000000), }",
                          0, SIZE_MAX, &e),
                 GS_ERR_LIMIT);
    GS_CHECK(strstr(e.msg, "(4000000000, 4000000000)") != NULL);
    /* fits size_t but over the caller's limit */
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000, 4), }", 0,
                          1000000, &e),
                 GS_ERR_LIMIT);
    GS_CHECK(strstr(e.msg, "16000000000 elements") != NULL);
    /* within the limit but the buffer does not hold it: no allocation either */
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000, 4), }", 0,
                          SIZE_MAX, &e),
                 GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "truncated data") != NULL);
    /* a dimension beyond size_t */
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, "
                          "'shape': (99999999999999999999999,), }",
                          0, SIZE_MAX, &e),
                 GS_ERR_LIMIT);
    /* header length over the cap */
    unsigned char big[16] = "\x93NUMPY\x02\x00\x00\x00\x10\x00";
    double *d = NULL;
    gs_npy_info info;
    GS_CHECK_INT(gs_npy_read_mem(big, sizeof big, 10, &d, &info, &e), GS_ERR_LIMIT);
}

GS_TEST(npy_bad_shapes)
{
    gs_error e;
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }", 24, 100,
                          &e),
                 GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "(2, 3, 4)") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 1, 100, &e),
                 GS_ERR_UNSUPPORTED);
    GS_CHECK(strstr(e.msg, "ndim 0") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': ('a',), }", 1, 100, &e),
                 GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "non-numeric") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", 1, 100, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': [2], }", 2, 100, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2,,), }", 2, 100, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2 3), }", 6, 100, &e),
                 GS_ERR_FORMAT);
}

GS_TEST(npy_bad_dicts)
{
    gs_error e;
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'shape': (2,), }", 2, 10, &e), GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "'fortran_order'") != NULL);
    GS_CHECK_INT(try_dict("{'fortran_order': False, 'shape': (2,), }", 2, 10, &e), GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "'descr'") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False}", 2, 10, &e), GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "'shape'") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", 2, 10,
                          &e),
                 GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "unexpected key 'x'") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}",
                          2, 10, &e),
                 GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "duplicate") != NULL);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': false, 'shape': (2,)}", 2, 10, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': Falsey, 'shape': (2,)}", 2, 10, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", 2, 10, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", 2, 10, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr: '<f8', 'fortran_order': False, 'shape': (2,)}", 2, 10, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)", 2, 10, &e),
                 GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("", 0, 10, &e), GS_ERR_FORMAT);
    GS_CHECK_INT(try_dict("{'de\\scr': '<f8'}", 0, 10, &e), GS_ERR_FORMAT);
}

GS_TEST(npy_file_errors)
{
    char path[512];
    gs_error e;
    double *d = (double *)1;
    gs_npy_info info;
    gs_test_tmp_path(path, sizeof path, "npy_does_not_exist.npy");
    GS_CHECK_INT(gs_npy_read_file(path, 10, &d, &info, &e), GS_ERR_IO);
    GS_CHECK(d == NULL);
    GS_CHECK(strstr(e.msg, "npy_does_not_exist.npy") != NULL);
    gs_test_tmp_path(path, sizeof path, "");
    GS_CHECK_INT(gs_npy_read_file(path, 10, &d, &info, &e), GS_ERR_IO); /* a directory */
    /* truncated file: size checked against the header with fstat */
    gs_test_tmp_path(path, sizeof path, "npy_trunc.npy");
    const double v[4] = {1, 2, 3, 4};
    size_t shape[1] = {4};
    GS_CHECK_INT(gs_npy_write_file(path, v, 1, shape, &e), GS_OK);
    GS_CHECK(truncate(path, 128 + 24) == 0); /* header: 128 bytes */
    GS_CHECK_INT(gs_npy_read_file(path, 10, &d, &info, &e), GS_ERR_FORMAT);
    GS_CHECK(strstr(e.msg, "truncated data: expected 32 bytes, have 24") != NULL);
    GS_CHECK(strstr(e.msg, "npy_trunc.npy") != NULL); /* file errors name the file */
    /* a file announcing 4e9 x 4e9 elements: refused from the header alone */
    size_t len = make_npy(img, sizeof img, 1,
                          "{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000, 4), }",
                          NULL, 0);
    FILE *fp = fopen(path, "wb");
    GS_CHECK(fp != NULL);
    GS_CHECK(fwrite(img, 1, len, fp) == len);
    fclose(fp);
    GS_CHECK_INT(gs_npy_read_file(path, 1000, &d, &info, &e), GS_ERR_LIMIT);
    GS_CHECK_INT(gs_npy_read_file(path, SIZE_MAX, &d, &info, &e), GS_ERR_FORMAT);
    GS_CHECK(d == NULL);
}

GS_TEST(npy_write_is_atomic)
{
    char path[512], dir[512];
    gs_error e;
    const double v[2] = {1, 2};
    size_t shape[1] = {2};
    gs_test_tmp_path(path, sizeof path, "no_such_dir/x.npy");
    GS_CHECK_INT(gs_npy_write_file(path, v, 1, shape, &e), GS_ERR_IO);
    gs_test_tmp_path(path, sizeof path, "npy_atomic.npy");
    GS_CHECK_INT(gs_npy_write_file(path, v, 1, shape, &e), GS_OK);
    GS_CHECK_INT(gs_npy_write_file(path, v, 3, shape, &e), GS_ERR_INVALID); /* old file kept */
    double *d = NULL;
    gs_npy_info info;
    GS_CHECK_INT(gs_npy_read_file(path, 2, &d, &info, &e), GS_OK);
    GS_CHECK(d[0] == 1 && d[1] == 2);
    free(d);
    /* no temporary file left behind */
    gs_test_tmp_path(dir, sizeof dir, "");
    DIR *dp = opendir(dir);
    GS_CHECK(dp != NULL);
    int leftovers = 0;
    for (struct dirent *de; (de = readdir(dp));)
        if (strncmp(de->d_name, "npy_atomic.npy.tmp", 18) == 0)
            leftovers++;
    closedir(dp);
    GS_CHECK_INT(leftovers, 0);
}

GS_TEST_MAIN()
