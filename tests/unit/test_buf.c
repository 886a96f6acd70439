/* test_buf.c -- the JSON writer (core/buf.h): exact texts of numbers
 * (zero, negative zero, non-finite as null, 17 digits), arrays of doubles
 * and ints (empty and long: every value read back bit for bit), string
 * escapes, printf appends, and take() handing over a NUL-terminated text. */
#include <stdint.h>

#include "buf.h"
#include "gs_test.h"

static char *take(gs_buf *b)
{
    size_t len = 0;
    char *s = gs_buf_take(b, &len);
    GS_CHECK(s != NULL);
    GS_CHECK_INT(strlen(s), len);
    return s;
}

GS_TEST(numbers_exact_text)
{
    gs_buf b = {0};
    const double v[] = {0.0, -0.0, 1.5, NAN, INFINITY, -INFINITY, 1e-13, 0.1, -2603.0, 5e-324};
    gs_buf_json_nums(&b, v, 10);
    gs_buf_puts(&b, " ");
    gs_buf_json_num(&b, 0.1);
    gs_buf_puts(&b, " ");
    gs_buf_json_num(&b, NAN);
    gs_buf_puts(&b, " ");
    gs_buf_json_nums(&b, v, 0);
    char *s = take(&b);
    GS_CHECK_STR(s, "[0,-0,1.5,null,null,null,1e-13,0.10000000000000001,-2603,"
                    "4.9406564584124654e-324] 0.10000000000000001 null []");
    free(s);
}

GS_TEST(long_array_reads_back_bit_for_bit)
{
    enum { N = 20000 };
    static double v[N];
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        v[i] = isfinite(d) ? d : (double)i;
    }
    gs_buf b = {0};
    gs_buf_json_nums(&b, v, N);
    char *s = take(&b), *p = s;
    GS_CHECK(*p == '[');
    for (int i = 0; i < N; i++) {
        char *end;
        double d = strtod(p + 1, &end);
        GS_CHECK_MSG(memcmp(&d, &v[i], sizeof d) == 0, "value %d: %.17g read as %.17g", i,
                     v[i], d);
        GS_CHECK(*end == (i + 1 < N ? ',' : ']'));
        p = end;
    }
    GS_CHECK(p[1] == '\0');
    free(s);
}

GS_TEST(strings_ints_printf)
{
    gs_buf b = {0};
    gs_buf_json_str(&b, "a\"b\\c\n\t\x01/é");
    gs_buf_puts(&b, " ");
    const int iv[] = {0, -1, 2147483647};
    gs_buf_json_ints(&b, iv, 3);
    gs_buf_printf(&b, " %d:%s", 42, "x");
    char *s = take(&b);
    GS_CHECK_STR(s, "\"a\\\"b\\\\c\\n\\t\\u0001/é\" [0,-1,2147483647] 42:x");
    free(s);
}

GS_TEST_MAIN()
