/*
 * gs_fuzz.h -- the contract between fuzz_driver.c and one fuzz target.
 *
 * A target (tests/fuzz/fuzz_<name>.c) defines:
 *   gs_fuzz_target  name of its seed directory under the corpus directory
 *   gs_fuzz_dict    NULL-terminated tokens the mutator splices into inputs
 *   gs_fuzz_one     runs the code under test on one input; checks invariants
 *                   and abort()s on a violation; returns 1 if the input was
 *                   accepted, 0 if it was rejected (statistics only)
 * This header defines LLVMFuzzerTestOneInput for each target (it runs
 * gs_fuzz_one and returns 0), so the same file also links with libFuzzer
 * (-fsanitize=fuzzer, without fuzz_driver.c); the driver, which includes it
 * too, defines GS_FUZZ_DRIVER first and does not get a second one.
 * The input buffer is exactly `size` bytes (heap, not NUL-terminated), so
 * any read past it is an ASan report. Targets that need files use the
 * directory in $GS_TEST_TMP (or /tmp) and choose them by input hash, never by
 * call count, so every input replays alone.
 */
#ifndef GS_FUZZ_H
#define GS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern const char *const gs_fuzz_target;
extern const char *const gs_fuzz_dict[];
int gs_fuzz_one(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef GS_FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gs_fuzz_one(data, size);
    return 0;
}
#endif

/* FNV-1a of the input: deterministic per-input choices in targets. */
static inline uint32_t gs_fuzz_hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t k = 0; k < size; k++)
        h = (h ^ data[k]) * 16777619u;
    return h;
}

/* Invariant check that stays on in every build. */
#define GS_FUZZ_ASSERT(cond)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__,    \
                    __LINE__, #cond);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

#endif
