/*
 * fuzz_mpi_side.c -- fuzz target for gapsim-mpi's reading of its sidecar
 * OUT.run at a restart (mpi/gm.h: gm_side_parse, which gm_out.c's
 * try_resume calls on the file's first bytes; the MPI-free part of gm.h,
 * GM_SIDE_ONLY). The first byte is the run's chunk count n; bit 0 of the
 * second stamps this run's header (gm_side_header) over the start of the
 * rest, which is the sidecar's bytes.
 * Properties:
 *   - no read past the buffer (its own heap block), no write past the map
 *     (n bytes) or the checksums (n words);
 *   - accepted exactly when the buffer is long enough for header, map and
 *     checksums (gm_side_layout) and starts with the magic and exactly this
 *     run's words; then map[c] is 1 when the map byte is 1, else 0, and
 *     sums[c] the stored word; the answer is deterministic;
 *   - an accepted buffer with any one byte of the magic and words changed
 *     is refused; a new sidecar (gm_side_header, zeros) is accepted with
 *     nothing complete, and refused one byte short.
 */
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"
#define GM_SIDE_ONLY
#include "../../mpi/gm.h"

const char *const gs_fuzz_target = "mpi_side";
const char *const gs_fuzz_dict[] = {"GSMPIRUN", "\x08\x07\x06\x05\x04\x03\x02\x01",
                                    "\x02\x00\x00\x00\x00\x00\x00\x00", "\x01", "\x00", NULL};

static void run_words(long long n, uint64_t w[GM_SIDE_WORDS])
{
    const uint64_t v[GM_SIDE_WORDS] = {0x0102030405060708ull, GM_SIDE_VERSION,
                                       (uint64_t)n * 3 + 1, 7, (uint64_t)n + 1, 3, 4,
                                       (uint64_t)n, 0x9e3779b97f4a7c15ull, 128};
    memcpy(w, v, sizeof v);
}

/* gm_side_parse into exact-size map and sums; 1 if accepted. */
static int parse(const unsigned char *buf, size_t len, const uint64_t *want, long long n,
                 unsigned char **map, uint64_t **sums)
{
    *map = malloc(n ? (size_t)n : 1);
    *sums = malloc(n ? sizeof **sums * (size_t)n : 1);
    GS_FUZZ_ASSERT(*map && *sums);
    memset(*map, 0xAA, n ? (size_t)n : 1);
    return gm_side_parse(buf, len, want, n, *map, *sums);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const long long n = data[0];
    const int stamp = data[1] & 1;
    const size_t len = size - 2;
    unsigned char *buf = malloc(len ? len : 1);
    GS_FUZZ_ASSERT(buf != NULL);
    memcpy(buf, data + 2, len);
    uint64_t want[GM_SIDE_WORDS];
    run_words(n, want);
    unsigned char h[GM_SIDE_HEADER];
    gm_side_header(want, h);
    if (stamp)
        memcpy(buf, h, len < GM_SIDE_HEADER ? len : GM_SIDE_HEADER);
    long long map_off, sum_off, need;
    gm_side_layout(n, &map_off, &sum_off, &need);
    GS_FUZZ_ASSERT(map_off == GM_SIDE_HEADER && sum_off >= map_off + n && sum_off % 8 == 0 &&
                   need == sum_off + 8 * n);

    unsigned char *map, *map2;
    uint64_t *sums, *sums2;
    const int ok = parse(buf, len, want, n, &map, &sums);
    const int expect = len >= (size_t)need && !memcmp(buf, GM_SIDE_MAGIC, 8) &&
                       !memcmp(buf + 8, want, sizeof want);
    GS_FUZZ_ASSERT(ok == expect);
    GS_FUZZ_ASSERT(parse(buf, len, want, n, &map2, &sums2) == ok);
    if (ok) {
        for (long long c = 0; c < n; c++) {
            GS_FUZZ_ASSERT(map[c] == (buf[map_off + c] == 1));
            GS_FUZZ_ASSERT(!memcmp(&sums[c], buf + sum_off + 8 * c, 8));
        }
        GS_FUZZ_ASSERT(!n || (!memcmp(map, map2, (size_t)n) &&
                              !memcmp(sums, sums2, 8 * (size_t)n)));
        /* one byte of the magic or the words changed */
        const size_t at = gs_fuzz_hash(data, size) % (8 + sizeof want);
        unsigned char *bad = malloc(len);
        GS_FUZZ_ASSERT(bad != NULL);
        memcpy(bad, buf, len);
        bad[at] ^= (unsigned char)(1u << (data[1] >> 5));
        free(map2);
        free(sums2);
        GS_FUZZ_ASSERT(!parse(bad, len, want, n, &map2, &sums2));
        free(bad);
    }
    free(map);
    free(sums);
    free(map2);
    free(sums2);

    /* a new sidecar: header, zeros; and one byte short */
    unsigned char *fresh = calloc((size_t)need, 1);
    GS_FUZZ_ASSERT(fresh != NULL);
    memcpy(fresh, h, GM_SIDE_HEADER);
    GS_FUZZ_ASSERT(parse(fresh, (size_t)need, want, n, &map, &sums));
    for (long long c = 0; c < n; c++)
        GS_FUZZ_ASSERT(map[c] == 0 && sums[c] == 0);
    free(map);
    free(sums);
    unsigned char *shorter = malloc((size_t)need - 1);
    GS_FUZZ_ASSERT(shorter != NULL);
    memcpy(shorter, fresh, (size_t)need - 1);
    GS_FUZZ_ASSERT(!parse(shorter, (size_t)need - 1, want, n, &map, &sums));
    free(map);
    free(sums);
    free(shorter);
    free(fresh);
    free(buf);
    return ok;
}
