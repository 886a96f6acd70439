/*
 * ids.c -- random identifiers and the wall clock (see ids.h).
 */
#include "ids.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

void gsd_new_id(char kind, char out[GSD_ID_LEN])
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
        /* getrandom cannot fail for 8 bytes after boot; fall back to the clock */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)out;
    }
    snprintf(out, GSD_ID_LEN, "%c_%016llx", kind, (unsigned long long)r);
}

int gsd_id_valid(const char *s, char kind)
{
    if (!s || strlen(s) != GSD_ID_LEN - 1 || s[0] != kind || s[1] != '_')
        return 0;
    for (int i = 2; i < GSD_ID_LEN - 1; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return 0;
    }
    return 1;
}

double gsd_unix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
