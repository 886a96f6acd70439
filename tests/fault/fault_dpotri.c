/*
 * fault_dpotri.c -- a LAPACKE_dpotri that computes a wrong inverse: the real
 * one (the next in the search order), then its lower triangle scaled by
 * 1.001. Preloaded (LD_PRELOAD) into gapsimd by
 * tests/integration/test_api_assemblies.py, it stands for a BLAS or LAPACK
 * kernel that miscomputes on some CPU: the precomputation's check
 * (core/precomp_check.h) must refuse the build with a clear error instead of
 * leaving the solves to certify answers against a wrong Q. Built without
 * sanitizers (a preloaded library comes before their runtime); part of no
 * program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <lapacke.h>
#include <stddef.h>

typedef lapack_int (*dpotri_fn)(int, char, lapack_int, double *, lapack_int);

lapack_int LAPACKE_dpotri(int layout, char uplo, lapack_int n, double *a, lapack_int lda)
{
    static dpotri_fn real;
    if (!real)
        real = (dpotri_fn)dlsym(RTLD_NEXT, "LAPACKE_dpotri");
    if (!real)
        return -1;
    const lapack_int info = real(layout, uplo, n, a, lda);
    for (lapack_int j = 0; info == 0 && j < n; j++)
        for (lapack_int i = j; i < n; i++) /* column-major, lower: what gapsim asks */
            a[i + (size_t)j * lda] *= 1.001;
    return info;
}
