/* test_numarg.c -- the numbers of command-line options (core/numarg.h): the
 * whole string or nothing; in range or nothing; overflow, non-finite
 * values, empty strings, blanks, hexadecimal and trailing characters refused, the output then
 * untouched. */
#include "gs_test.h"

#include <limits.h>
#include <math.h>

#include "numarg.h"

GS_TEST(integers)
{
    long v = 77;
    GS_CHECK_INT(gs_parse_long("42", 0, 100, &v), 0);
    GS_CHECK_INT(v, 42);
    GS_CHECK_INT(gs_parse_long("-3", -5, 5, &v), 0);
    GS_CHECK_INT(v, -3);
    GS_CHECK_INT(gs_parse_long("100", 0, 100, &v), 0); /* both ends belong */
    GS_CHECK_INT(gs_parse_long("0", 0, 100, &v), 0);
    v = 77;
    static const char *bad[] = {"", "abc", "4x", "0.5", "1e3", "101", "-1", "99999999999999999999",
                                "-99999999999999999999", "5 ",  " 5",
                                "\t5", "0x10", "+ 5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        GS_CHECK_INT(gs_parse_long(bad[i], 0, 100, &v), -1);
        GS_CHECK_INT(v, 77);
    }
    GS_CHECK_INT(gs_parse_long(NULL, 0, 100, &v), -1);
    GS_CHECK_INT(gs_parse_long("9223372036854775807", LONG_MIN, LONG_MAX, &v), 0);
    GS_CHECK(v == LONG_MAX);
}

GS_TEST(numbers)
{
    double v = 7;
    GS_CHECK_INT(gs_parse_double("0.5", 0, 1, &v), 0);
    GS_CHECK(v == 0.5);
    GS_CHECK_INT(gs_parse_double("1e-10", 0, 1, &v), 0);
    GS_CHECK(v == 1e-10);
    GS_CHECK_INT(gs_parse_double("1", 0, 1, &v), 0); /* both ends belong */
    GS_CHECK_INT(gs_parse_double("-2.5", -HUGE_VAL, HUGE_VAL, &v), 0);
    GS_CHECK(v == -2.5);
    v = 7;
    static const char *bad[] = {"", "x", "0.5x", "1.5", "-0.1", "nan", "inf", "-inf", "1e999",
                                "1e-999", "0.5 ", "0,5", " 0.5", "0x1p-1", "0X.8",
                                "infinity", "nan(1)"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        GS_CHECK_INT(gs_parse_double(bad[i], 0, 1, &v), -1);
        GS_CHECK(v == 7);
    }
    GS_CHECK_INT(gs_parse_double(".5", 0, 1, &v), 0); /* strtod's decimal forms */
    GS_CHECK(v == 0.5);
    GS_CHECK_INT(gs_parse_double("+5.E-1", 0, 1, &v), 0);
    GS_CHECK(v == 0.5);
    GS_CHECK_INT(gs_parse_double("inf", -HUGE_VAL, HUGE_VAL, &v), -1); /* finite only */
    GS_CHECK_INT(gs_parse_double(NULL, 0, 1, &v), -1);
}

GS_TEST_MAIN()
