/* test_fmt_g17.c -- gs_fmt_g17 (core/fmt_g17.h) writes the bytes of
 * printf("%.17g") for every class of double: hand-picked values (zeros,
 * powers of ten and their neighbours, the ends of the fast path, ties at the
 * 18th digit), random bit patterns over the whole range (subnormals, NaN,
 * Inf), random values of the magnitudes gapsim writes, and doubles whose
 * exact value ends in ...5 at the 18th significant digit (round half to
 * even), each compared with glibc's snprintf. */
#include "gs_test.h"

#include <float.h>
#include <stdint.h>

#include "fmt_g17.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* Fails with both texts unless gs_fmt_g17(v) is snprintf's "%.17g". */
static void check_same(double v)
{
    char want[64], got[GS_FMT_G17_MAX];
    int nw = snprintf(want, sizeof want, "%.17g", v);
    int ng = gs_fmt_g17(v, got);
    gs_test_checks_++;
    if (nw != ng || strcmp(want, got) != 0)
        GS_FAIL_("%a: printf \"%s\", gs_fmt_g17 \"%s\" (length %d)", v, want, got, ng);
}

GS_TEST(hand_picked)
{
    static const double v[] = {
        0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 2.0, 10.0, 100.0, 123.456, -7.25e-3, 1e-5, 1e-4,
        9.9999999999999995e-5, 0.001, 1e15, 1e16, 9999999999999998.0, 1e17, 1e22, 1e300,
        1e-39, 1e-40, 1e-300, 5e-324, DBL_MIN, DBL_MAX, DBL_EPSILON, 1.0 / 3.0, 2.0 / 3.0,
        3.141592653589793, 0.30000000000000004, 4503599627370496.5, 4503599627370497.0,
        1234567890123456.25, 1234567890123456.75, 1234567890123457.25, 0.000123, 1.5e-13,
        -2.7e-13, 2603.0, 5206.0, 1e-17, 99999999999999999e-5, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        check_same(v[i]);
}

/* Every power of ten in the range of doubles and its two neighbours: the
 * edges of the exponent estimate and of the 10^16 <= D < 10^17 window. */
GS_TEST(powers_of_ten_and_neighbours)
{
    for (int e = -323; e <= 308; e++) {
        char s[16];
        snprintf(s, sizeof s, "1e%d", e);
        double p = strtod(s, NULL);
        check_same(p);
        check_same(nextafter(p, 0.0));
        check_same(nextafter(p, INFINITY));
        check_same(-p);
    }
}

/* Every binary exponent: 2^e and its neighbours. */
GS_TEST(powers_of_two_and_neighbours)
{
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp(1.0, e);
        check_same(p);
        check_same(nextafter(p, 0.0));
        check_same(nextafter(p, INFINITY));
    }
}

GS_TEST(random_bit_patterns)
{
    for (int i = 0; i < 400000; i++)
        check_same(from_bits(rng()));
}

/* The magnitudes of residual gaps, forces and coordinates, 1e-16 .. 1e6. */
GS_TEST(random_working_range)
{
    for (int i = 0; i < 400000; i++) {
        double mant = (double)(rng() >> 11) * 0x1p-53;
        int e10 = (int)(rng() % 23) - 16;
        double v = mant * pow(10.0, e10);
        check_same((rng() & 1) ? -v : v);
    }
}

/* Ties: M 2^-2 and M 2^-3 with M near 2^53 have 18-19 significant digits
 * and end in 25, 5 or 75, so the 18th digit is a 5 followed by zeros for a
 * share of them; printf rounds those half to even. Also small M 2^-e whose
 * expansions end exactly at 18 digits. */
GS_TEST(ties_round_half_to_even)
{
    for (int i = 0; i < 200000; i++) {
        uint64_t M = (1ull << 52) | (rng() >> 12);
        check_same(ldexp((double)M, -1 - (int)(rng() % 4)));
    }
    for (int e = 1; e <= 60; e++)
        for (int i = 0; i < 2000; i++) {
            uint64_t M = rng() >> (11 + rng() % 40);
            check_same(ldexp((double)M, -e));
        }
}

GS_TEST_MAIN()
