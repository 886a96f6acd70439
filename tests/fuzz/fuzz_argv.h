/*
 * fuzz_argv.h -- argv words from a fuzz input, for the targets of command
 * lines (fuzz_cli.c, fuzz_gencli.c): the bytes split at '\n', one word per
 * line (a NUL ends a word early: argv holds C strings), argv[0] the program.
 * Each word is its own exact-size heap block, so a read past one is an ASan
 * report; argv[argc] is NULL, as main's.
 */
#ifndef FUZZ_ARGV_H
#define FUZZ_ARGV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gs_fuzz.h"

#define FZ_ARGV_MAX 64 /* words after argv[0]; the rest of the input is dropped */

typedef struct {
    int argc;
    char *argv[FZ_ARGV_MAX + 2];
} fz_argv;

static inline void fz_argv_split(const uint8_t *data, size_t size, const char *prog, fz_argv *a)
{
    a->argc = 0;
    a->argv[a->argc++] = strdup(prog);
    GS_FUZZ_ASSERT(a->argv[0] != NULL);
    size_t k = 0;
    while (k < size && a->argc <= FZ_ARGV_MAX) {
        const uint8_t *nl = memchr(data + k, '\n', size - k);
        const size_t end = nl ? (size_t)(nl - data) : size;
        const uint8_t *nul = memchr(data + k, '\0', end - k);
        const size_t len = (nul ? (size_t)(nul - data) : end) - k;
        char *w = malloc(len + 1);
        GS_FUZZ_ASSERT(w != NULL);
        memcpy(w, data + k, len);
        w[len] = '\0';
        a->argv[a->argc++] = w;
        k = end + 1;
    }
    a->argv[a->argc] = NULL;
}

static inline void fz_argv_free(fz_argv *a)
{
    for (int i = 0; i < a->argc; i++)
        free(a->argv[i]);
    a->argc = 0;
}

/* 1 if p points into one of the words argv[1..argc) (at its start or after
 * an '=' in it: where option values come from). */
static inline int fz_argv_owns(const fz_argv *a, const char *p)
{
    for (int i = 1; i < a->argc; i++) {
        const char *w = a->argv[i];
        const uintptr_t b = (uintptr_t)w, q = (uintptr_t)p;
        if (q == b || (q > b && q <= b + strlen(w) && memchr(w, '=', q - b) != NULL))
            return 1;
    }
    return 0;
}

#endif
