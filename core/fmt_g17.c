/*
 * fmt_g17.c -- printf("%.17g") of a double without printf (fmt_g17.h).
 *
 * The 17 digits come exact from 192-bit integer arithmetic: D =
 * round(M 5^s 2^(E+s)) with M 5^s in three 64-bit limbs; the rounding looks
 * at the discarded bits exactly (half, and whether any bit below it is set),
 * as glibc does in its multi-precision path, so the digits are the same.
 * Then the layout of %g with precision 17: style e when the decimal exponent
 * is below -4 (it is never 17 or more on the fast path, s >= 0), trailing
 * zeros of the fraction removed.
 */
#include "fmt_g17.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

/* 5^s for s <= POW5_MAX: 5^55 < 2^128 <= 5^56. */
#define POW5_MAX 55
static u128 pow5[POW5_MAX + 1];

__attribute__((constructor)) static void pow5_init(void)
{
    u128 p = 1;
    for (int s = 0; s <= POW5_MAX; s++, p *= 5)
        pow5[s] = p;
}

#define TEN16 10000000000000000ull
#define TEN17 100000000000000000ull

/* Bit q (0 = least significant) of the 192-bit p. */
static int bit_at(const uint64_t p[3], int q)
{
    return (int)((p[q >> 6] >> (q & 63)) & 1);
}

/* Any bit below position q set. */
static int any_below(const uint64_t p[3], int q)
{
    int w = q >> 6, o = q & 63;
    for (int i = 0; i < w; i++)
        if (p[i])
            return 1;
    return o && (p[w] & ((1ull << o) - 1));
}

/* The 64 bits [q, q + 64) of p, or 0 with *over = 1 if any bit at or above
 * q + 64 is set (q < 192). */
static uint64_t bits_from(const uint64_t p[3], int q, int *over)
{
    int w = q >> 6, o = q & 63;
    uint64_t lo = p[w], hi = w + 1 < 3 ? p[w + 1] : 0;
    uint64_t r = o ? (lo >> o) | (hi << (64 - o)) : lo;
    uint64_t rest = o ? hi >> o : hi; /* bits at q + 64 and above in limb w + 1 */
    for (int i = w + 2; i < 3; i++)
        rest |= p[i];
    *over = rest != 0;
    return r;
}

/* D = round(M 10^s 2^E), half to even, exact; 0 on overflow of 64 bits. */
static uint64_t scaled_digits(uint64_t M, int E, int s)
{
    u128 f = pow5[s];
    u128 lo = (u128)M * (uint64_t)f, hi = (u128)M * (uint64_t)(f >> 64);
    uint64_t p[3];
    p[0] = (uint64_t)lo;
    u128 mid = (lo >> 64) + (uint64_t)hi;
    p[1] = (uint64_t)mid;
    p[2] = (uint64_t)(hi >> 64) + (uint64_t)(mid >> 64);
    int t = E + s, over;
    if (t >= 0) { /* an integer: no rounding */
        if (p[2] || p[1] || t >= 64 || (p[0] >> (63 - t)) > 1)
            return 0;
        return p[0] << t;
    }
    int sh = -t;
    if (sh >= 192)
        return 0;
    uint64_t D = bits_from(p, sh, &over);
    if (over)
        return 0;
    if (bit_at(p, sh - 1) && (any_below(p, sh - 1) || (D & 1)))
        D++;
    return D;
}

int gs_fmt_g17(double v, char out[GS_FMT_G17_MAX])
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    int neg = (int)(b >> 63), be = (int)((b >> 52) & 0x7ff);
    uint64_t M = b & ((1ull << 52) - 1);
    if (be == 0 && M == 0) {
        memcpy(out, neg ? "-0" : "0", (size_t)neg + 2);
        return neg + 1;
    }
    if (be == 0x7ff)
        return snprintf(out, GS_FMT_G17_MAX, "%.17g", v);
    int E = be ? be - 1075 : -1074;
    if (be)
        M |= 1ull << 52;
    /* floor(log2 |v|), and x = floor(log10 |v|) or one less */
    int l2 = E + 63 - __builtin_clzll(M);
    int x = (l2 * 78913) >> 18; /* ~floor(l2 log10 2): within one is enough, the loop corrects */
    uint64_t D = 0;
    for (int tries = 0; tries < 3; tries++) {
        int s = 16 - x;
        if (s < 0 || s > POW5_MAX)
            return snprintf(out, GS_FMT_G17_MAX, "%.17g", v);
        D = scaled_digits(M, E, s);
        if (D >= TEN17)
            x++; /* estimate one low, or rounded up to 10^17 */
        else if (D && D < TEN16)
            x--;
        else
            break;
    }
    if (!(D >= TEN16 && D < TEN17))
        return snprintf(out, GS_FMT_G17_MAX, "%.17g", v);

    /* 17 digits: the top 9 and the low 8 in 32-bit arithmetic, side by side */
    char d[17];
    uint32_t hi = (uint32_t)(D / 100000000u), lo = (uint32_t)(D % 100000000u);
    for (int i = 7; i >= 0; i--, hi /= 10, lo /= 10) {
        d[i + 9] = (char)('0' + lo % 10);
        d[i + 1] = (char)('0' + hi % 10);
    }
    d[0] = (char)('0' + hi);
    int nd = 17;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    char *o = out;
    if (neg)
        *o++ = '-';
    if (x < -4) { /* style e: d.ddde-XX */
        *o++ = d[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, d + 1, (size_t)nd - 1);
            o += nd - 1;
        }
        int ex = -x;
        *o++ = 'e';
        *o++ = '-';
        if (ex >= 100)
            *o++ = (char)('0' + ex / 100);
        *o++ = (char)('0' + ex / 10 % 10);
        *o++ = (char)('0' + ex % 10);
    } else if (x >= 0) { /* integer digits, then the fraction's */
        memcpy(o, d, (size_t)x + 1);
        o += x + 1;
        if (nd > x + 1) {
            *o++ = '.';
            memcpy(o, d + x + 1, (size_t)(nd - x - 1));
            o += nd - x - 1;
        }
    } else { /* 0.000ddd */
        *o++ = '0';
        *o++ = '.';
        for (int z = 0; z < -x - 1; z++)
            *o++ = '0';
        memcpy(o, d, (size_t)nd);
        o += nd;
    }
    *o = '\0';
    return (int)(o - out);
}

void gs_fput_g17(FILE *fp, double v)
{
    char num[GS_FMT_G17_MAX];
    fwrite(num, 1, (size_t)gs_fmt_g17(v, num), fp);
}
