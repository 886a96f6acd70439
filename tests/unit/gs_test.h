/*
 * gs_test.h -- the minimal test harness of gapsim's unit tests.
 *
 * One test file = one executable = one ctest test. Write
 *     GS_TEST(name) { ... GS_CHECK(cond); GS_CHECK_NEAR(a, b, tol); ... }
 * and end the file with GS_TEST_MAIN(). Assertions stay on in every build
 * (they do not use assert()). A failed check reports file:line and the values,
 * aborts the current test and the run continues with the next one. The runner
 * prints "N passed, N failed" and exits non-zero on any failure. A test file
 * that registers no test fails (a test that cannot run is a defect).
 * GS_TEST_TMP (set by ctest) is a scratch directory; gs_test_tmp_path() builds
 * file names in it.
 */
#ifndef GS_TEST_H
#define GS_TEST_H

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef void (*gs_test_fn)(void);
struct gs_test_entry { const char *name; gs_test_fn fn; };

#define GS_TEST_MAX 256
static struct gs_test_entry gs_tests_[GS_TEST_MAX];
static int gs_ntests_;
static jmp_buf gs_test_jmp_;
static int gs_test_checks_;

#define GS_TEST(name)                                                          \
    static void gs_test_##name(void);                                          \
    __attribute__((constructor)) static void gs_test_reg_##name(void)          \
    {                                                                          \
        if (gs_ntests_ < GS_TEST_MAX)                                          \
            gs_tests_[gs_ntests_++] = (struct gs_test_entry){#name, gs_test_##name}; \
    }                                                                          \
    static void gs_test_##name(void)

#define GS_FAIL_(...)                                                          \
    do {                                                                       \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                      \
        fprintf(stderr, __VA_ARGS__);                                          \
        fprintf(stderr, "\n");                                                 \
        longjmp(gs_test_jmp_, 1);                                              \
    } while (0)

#define GS_CHECK(cond)                                                         \
    do {                                                                       \
        gs_test_checks_++;                                                     \
        if (!(cond))                                                           \
            GS_FAIL_("check failed: %s", #cond);                               \
    } while (0)

#define GS_CHECK_MSG(cond, ...)                                                \
    do {                                                                       \
        gs_test_checks_++;                                                     \
        if (!(cond)) {                                                         \
            fprintf(stderr, "  %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            longjmp(gs_test_jmp_, 1);                                          \
        }                                                                      \
    } while (0)

#define GS_CHECK_INT(a, b)                                                     \
    do {                                                                       \
        long long gs_a_ = (long long)(a), gs_b_ = (long long)(b);              \
        gs_test_checks_++;                                                     \
        if (gs_a_ != gs_b_)                                                    \
            GS_FAIL_("%s == %s failed: %lld != %lld", #a, #b, gs_a_, gs_b_);   \
    } while (0)

/* |a - b| <= tol (absolute). NaN never passes. */
#define GS_CHECK_NEAR(a, b, tol)                                               \
    do {                                                                       \
        double gs_a_ = (double)(a), gs_b_ = (double)(b), gs_t_ = (double)(tol); \
        gs_test_checks_++;                                                     \
        if (!(fabs(gs_a_ - gs_b_) <= gs_t_))                                   \
            GS_FAIL_("%s ~ %s failed: %.17g vs %.17g (diff %.3g > tol %.3g)",  \
                     #a, #b, gs_a_, gs_b_, fabs(gs_a_ - gs_b_), gs_t_);        \
    } while (0)

#define GS_CHECK_STR(a, b)                                                     \
    do {                                                                       \
        const char *gs_a_ = (a), *gs_b_ = (b);                                 \
        gs_test_checks_++;                                                     \
        if (!gs_a_ || !gs_b_ || strcmp(gs_a_, gs_b_) != 0)                     \
            GS_FAIL_("%s == %s failed: \"%s\" != \"%s\"", #a, #b,              \
                     gs_a_ ? gs_a_ : "(null)", gs_b_ ? gs_b_ : "(null)");      \
    } while (0)

static inline const char *gs_test_tmp_path(char *buf, size_t len, const char *name)
{
    const char *dir = getenv("GS_TEST_TMP");
    snprintf(buf, len, "%s/%s", dir && *dir ? dir : "/tmp", name);
    return buf;
}

/* GS_TEST_TMP/name made afresh (removed with what it held, then created):
 * a scratch directory of the test's own, in buf (512 bytes); NULL if it
 * cannot be made. */
static inline const char *gs_test_scratch_dir(char buf[512], const char *name)
{
    gs_test_tmp_path(buf, 512, name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", buf);
    if (system(cmd) != 0 || mkdir(buf, 0755) != 0)
        return NULL;
    return buf;
}

/* Entries of dir besides "." and ".." (0 if it cannot be read). */
static inline int gs_test_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* Runs test i; returns 1 if it passed. setjmp lives here so that the
 * caller's counters are not clobbered by longjmp. */
static int gs_test_run_one_(int i)
{
    gs_test_checks_ = 0;
    if (setjmp(gs_test_jmp_) == 0) {
        gs_tests_[i].fn();
        printf("ok   %s (%d checks)\n", gs_tests_[i].name, gs_test_checks_);
        fflush(stdout);
        return 1;
    }
    printf("FAIL %s\n", gs_tests_[i].name);
    fflush(stdout);
    return 0;
}

#define GS_TEST_MAIN()                                                         \
    int main(int argc, char **argv)                                            \
    {                                                                          \
        int passed = 0, failed = 0;                                            \
        const char *only = argc > 1 ? argv[1] : NULL;                          \
        for (int i = 0; i < gs_ntests_; i++) {                                 \
            if (only && strcmp(only, gs_tests_[i].name) != 0)                  \
                continue;                                                      \
            if (gs_test_run_one_(i))                                           \
                passed++;                                                      \
            else                                                               \
                failed++;                                                      \
        }                                                                      \
        printf("%d passed, %d failed\n", passed, failed);                      \
        return (failed || passed == 0) ? 1 : 0;                                \
    }

#endif
