/*
 * fuzz_driver.c -- deterministic replay-and-mutate driver for the fuzz targets.
 *
 * usage: fuzz_<name> <corpus_dir> [iterations]   seeds, then mutations
 *        fuzz_<name> <file>...                   replay inputs (a crash file)
 * Runs gs_fuzz_one on every file of <corpus_dir>/<gs_fuzz_target>/ (sorted by
 * name), then on `iterations` mutants (default 20000) made by a seeded
 * xorshift generator: bit flips, interesting bytes, truncation, insertion,
 * deletion, duplication, splicing two seeds, dictionary tokens, numbers
 * replaced by boundary values, rewritten .npy header-length/version fields.
 * Mutants that were accepted (and 1 in 128 rejected ones) join a bounded pool
 * that later mutants may start from, so mutation reaches past the first
 * layer of checks without coverage feedback.
 * The generator seed derives from the target name (override: GS_FUZZ_SEED),
 * so a run is reproducible. Under ASan/UBSan a crash writes the input to
 * ./fuzz-crash-<target>.bin (replay it with the second form).
 * Prints one summary line; exits 1 if no seed was found (a fuzz test without
 * a corpus is a defect).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define GS_FUZZ_DRIVER /* the targets define LLVMFuzzerTestOneInput (gs_fuzz.h) */
#include "gs_fuzz.h"

#define FZ_MAX_INPUT (1u << 16) /* mutants never grow past this */
#define FZ_MAX_SEEDS 512
#define FZ_POOL 256             /* evolved inputs kept for further mutation */

typedef struct {
    uint8_t *data;
    size_t len;
    char *name;
} fz_seed;

/* The input being run, for the crash dump (test-driver state, not library). */
static const uint8_t *fz_cur;
static size_t fz_cur_len;

void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void fz_dump_crash(void)
{
    if (!fz_cur) { /* a leak found at exit: no input is running */
        fprintf(stderr, "fuzz: the failure came after the last input (a leak found at exit); "
                        "replay the corpus files one by one to find the input\n");
        return;
    }
    char name[256];
    snprintf(name, sizeof name, "fuzz-crash-%s.bin", gs_fuzz_target);
    FILE *fp = fopen(name, "wb");
    if (fp) {
        fwrite(fz_cur, 1, fz_cur_len, fp);
        fclose(fp);
        fprintf(stderr, "fuzz: crashing input (%zu bytes) written to %s\n", fz_cur_len, name);
    }
}

static uint64_t fz_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static size_t fz_below(uint64_t *s, size_t n)
{
    return n ? (size_t)(fz_next(s) % n) : 0;
}

/* Run one input from an exact-size heap copy. */
static int fz_run(const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        fprintf(stderr, "fuzz: out of memory\n");
        exit(2);
    }
    if (len)
        memcpy(copy, data, len);
    fz_cur = copy;
    fz_cur_len = len;
    int r = gs_fuzz_one(copy, len);
    free(copy);
    fz_cur = NULL;
    return r;
}

static int fz_read_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return 0;
    uint8_t *buf = malloc(FZ_MAX_INPUT);
    size_t n = buf ? fread(buf, 1, FZ_MAX_INPUT, fp) : 0;
    fclose(fp);
    if (!buf)
        return 0;
    *data = buf;
    *len = n;
    return 1;
}

static int fz_cmp_seed(const void *a, const void *b)
{
    return strcmp(((const fz_seed *)a)->name, ((const fz_seed *)b)->name);
}

static int fz_load_seeds(const char *corpus, fz_seed *seeds)
{
    char dir[4096], path[8192];
    snprintf(dir, sizeof dir, "%s/%s", corpus, gs_fuzz_target);
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(stderr, "fuzz: cannot open %s: %s\n", dir, strerror(errno));
        return 0;
    }
    int n = 0;
    for (struct dirent *de; (de = readdir(dp)) && n < FZ_MAX_SEEDS;) {
        struct stat st;
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (!fz_read_file(path, &seeds[n].data, &seeds[n].len))
            continue;
        seeds[n].name = strdup(de->d_name);
        if (!seeds[n].name) {
            free(seeds[n].data);
            continue;
        }
        n++;
    }
    closedir(dp);
    qsort(seeds, (size_t)n, sizeof *seeds, fz_cmp_seed);
    return n;
}

/* Insert `n` bytes at pos (room permitting). */
static void fz_insert(uint8_t *buf, size_t *len, size_t pos, const uint8_t *src, size_t n)
{
    if (*len + n > FZ_MAX_INPUT)
        n = FZ_MAX_INPUT - *len;
    if (pos > *len)
        pos = *len;
    memmove(buf + pos + n, buf + pos, *len - pos);
    memcpy(buf + pos, src, n);
    *len += n;
}

static void fz_mutate(uint64_t *rs, uint8_t *buf, size_t *len, const fz_seed *seeds, int nseeds)
{
    static const uint8_t bytes[] = {0,   0xff, 0x7f, 0x80, '0', '1', '9', ' ', '\n', '\r', ',',
                                    '"', '\'', '(',  ')',  '[', ']', '{', '}', '-', '.',  'e',
                                    '%', ':',  '\\', 'L',  0x93};
    static const char *const numbers[] = {
        "0",          "-1",         "1",          "2",        "65535",     "65536",
        "2147483647", "2147483648", "4294967295", "4294967296", "-2147483649",
        "9223372036854775807", "18446744073709551616", "99999999999999999999999",
        "1e308",      "1e999",      "-0",         "1.5",      "nan",       "inf",
        "4000000000", "1e-320",     "0x10",       "3L"};
    uint8_t tmp[64];
    switch (fz_below(rs, 11)) {
    case 0: /* bit flip */
        if (*len)
            buf[fz_below(rs, *len)] ^= (uint8_t)(1u << fz_below(rs, 8));
        break;
    case 1: /* interesting byte */
        if (*len)
            buf[fz_below(rs, *len)] = bytes[fz_below(rs, sizeof bytes)];
        break;
    case 2: /* truncate */
        *len = fz_below(rs, *len + 1);
        break;
    case 3: { /* insert random bytes */
        size_t n = 1 + fz_below(rs, 8);
        for (size_t k = 0; k < n; k++)
            tmp[k] = (uint8_t)fz_next(rs);
        fz_insert(buf, len, fz_below(rs, *len + 1), tmp, n);
        break;
    }
    case 4: { /* delete a range */
        if (!*len)
            break;
        size_t pos = fz_below(rs, *len), n = 1 + fz_below(rs, *len - pos < 32 ? *len - pos : 32);
        memmove(buf + pos, buf + pos + n, *len - pos - n);
        *len -= n;
        break;
    }
    case 5: { /* duplicate a range elsewhere */
        if (!*len)
            break;
        size_t pos = fz_below(rs, *len), n = 1 + fz_below(rs, *len - pos < 64 ? *len - pos : 64);
        memcpy(tmp, buf + pos, n);
        fz_insert(buf, len, fz_below(rs, *len + 1), tmp, n);
        break;
    }
    case 6: { /* splice: our head + another seed's tail */
        const fz_seed *o = &seeds[fz_below(rs, (size_t)nseeds)];
        size_t at = fz_below(rs, *len + 1), from = fz_below(rs, o->len + 1);
        size_t n = o->len - from;
        if (at + n > FZ_MAX_INPUT)
            n = FZ_MAX_INPUT - at;
        memcpy(buf + at, o->data + from, n);
        *len = at + n;
        break;
    }
    case 7: { /* dictionary token */
        int nd = 0;
        while (gs_fuzz_dict[nd])
            nd++;
        if (!nd)
            break;
        const char *t = gs_fuzz_dict[fz_below(rs, (size_t)nd)];
        size_t pos = fz_below(rs, *len + 1);
        if (fz_below(rs, 2) && *len) { /* overwrite instead of insert */
            size_t n = strlen(t) < *len - pos ? strlen(t) : *len - pos;
            memcpy(buf + pos, t, n);
        } else {
            fz_insert(buf, len, pos, (const uint8_t *)t, strlen(t));
        }
        break;
    }
    case 8: { /* replace a digit run by a boundary number */
        if (!*len)
            break;
        size_t pos = fz_below(rs, *len);
        while (pos < *len && !(buf[pos] >= '0' && buf[pos] <= '9'))
            pos++;
        size_t end = pos;
        while (end < *len && ((buf[end] >= '0' && buf[end] <= '9') || buf[end] == '.'))
            end++;
        memmove(buf + pos, buf + end, *len - end);
        *len -= end - pos;
        const char *t = numbers[fz_below(rs, sizeof numbers / sizeof *numbers)];
        fz_insert(buf, len, pos, (const uint8_t *)t, strlen(t));
        break;
    }
    case 9: /* .npy prefix fields: version and header length */
        if (*len >= 12 && memcmp(buf, "\x93NUMPY", 6) == 0) {
            size_t which = fz_below(rs, 4);
            if (which == 0)
                buf[6] = (uint8_t)(1 + fz_below(rs, 4));
            else if (which == 1) { /* header length off by a little */
                unsigned hl = (unsigned)(buf[8] | buf[9] << 8);
                hl += (unsigned)fz_below(rs, 129) - 64u;
                buf[8] = (uint8_t)hl;
                buf[9] = (uint8_t)(hl >> 8);
            } else {
                for (int k = 8; k < 12; k++)
                    buf[k] = (uint8_t)fz_next(rs);
            }
        } else if (*len) {
            buf[fz_below(rs, *len)] = (uint8_t)fz_next(rs);
        }
        break;
    default: { /* overwrite a range with random bytes */
        if (!*len)
            break;
        size_t pos = fz_below(rs, *len), n = 1 + fz_below(rs, *len - pos < 16 ? *len - pos : 16);
        for (size_t k = 0; k < n; k++)
            buf[pos + k] = (uint8_t)fz_next(rs);
        break;
    }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <corpus_dir> [iterations] | %s <input-file>...\n", argv[0],
                argv[0]);
        return 2;
    }
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(fz_dump_crash);
    struct stat st;
    if (stat(argv[1], &st) == 0 && S_ISREG(st.st_mode)) { /* replay mode */
        for (int a = 1; a < argc; a++) {
            uint8_t *d;
            size_t n;
            if (!fz_read_file(argv[a], &d, &n)) {
                fprintf(stderr, "fuzz: cannot read %s\n", argv[a]);
                return 2;
            }
            int r = fz_run(d, n);
            printf("%s: %s\n", argv[a], r ? "accepted" : "rejected");
            free(d);
        }
        return 0;
    }
    long iters = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;
    static fz_seed seeds[FZ_MAX_SEEDS];
    int nseeds = fz_load_seeds(argv[1], seeds);
    if (nseeds == 0) {
        fprintf(stderr, "fuzz_%s: no seeds in %s/%s\n", gs_fuzz_target, argv[1], gs_fuzz_target);
        return 1;
    }
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    for (const char *c = gs_fuzz_target; *c; c++)
        seed = (seed ^ (uint8_t)*c) * 0x100000001B3ULL;
    const char *env = getenv("GS_FUZZ_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 0);
    if (!seed)
        seed = 1;
    const uint64_t seed0 = seed;
    clock_t t0 = clock();
    long seeds_ok = 0, accepted = 0;
    for (int s = 0; s < nseeds; s++)
        seeds_ok += fz_run(seeds[s].data, seeds[s].len);
    uint8_t *buf = malloc(FZ_MAX_INPUT);
    if (!buf)
        return 2;
    static fz_seed pool[FZ_POOL];
    int npool = 0;
    size_t maxlen = 0;
    for (long it = 0; it < iters; it++) {
        const fz_seed *sd = (npool && fz_below(&seed, 2))
                                ? &pool[fz_below(&seed, (size_t)npool)]
                                : &seeds[fz_below(&seed, (size_t)nseeds)];
        size_t len = sd->len;
        memcpy(buf, sd->data, len);
        int nm = fz_below(&seed, 4) ? 1 : 2 + (int)fz_below(&seed, 3); /* mostly one */
        for (int k = 0; k < nm; k++)
            fz_mutate(&seed, buf, &len, seeds, nseeds);
        if (len > maxlen)
            maxlen = len;
        int ok = fz_run(buf, len);
        accepted += ok;
        if (ok || fz_below(&seed, 128) == 0) { /* keep it for further mutation */
            int slot = npool < FZ_POOL ? npool++ : (int)fz_below(&seed, FZ_POOL);
            uint8_t *copy = malloc(len ? len : 1);
            if (copy) {
                memcpy(copy, buf, len);
                free(pool[slot].data);
                pool[slot].data = copy;
                pool[slot].len = len;
            }
        }
    }
    for (int p = 0; p < npool; p++)
        free(pool[p].data);
    free(buf);
    printf("fuzz_%s: %d seeds (%ld accepted), %ld mutants (%ld accepted), rng seed 0x%llx, "
           "max input %zu bytes, %.2f s cpu\n",
           gs_fuzz_target, nseeds, seeds_ok, iters, accepted, (unsigned long long)seed0, maxlen,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    for (int s = 0; s < nseeds; s++) {
        free(seeds[s].data);
        free(seeds[s].name);
    }
    return 0;
}
