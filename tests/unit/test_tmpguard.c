/* test_tmpguard.c -- core/tmpguard.h: a signal that ends the process
 * removes the armed temporary files and the armed directory with its files
 * and the process still ends by that signal; a committed file stays (its
 * name disarmed); an aborted one leaves nothing; nested installs keep the
 * handler until the last uninstall, which puts the earlier action back.
 * Each case runs in a child process, which the signal ends. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gs_test.h"
#include "tmpguard.h"

/* The child: one file committed (kept), one open (armed), a staging
 * directory with a file in it, then SIGTERM. */
static void child_then_signal(const char *dir)
{
    char kept[600], open_[600], stage[600], inside[700];
    snprintf(kept, sizeof kept, "%s/kept.bin", dir);
    snprintf(open_, sizeof open_, "%s/open.bin", dir);
    snprintf(stage, sizeof stage, "%s/.stage.XXXXXX", dir);
    gs_tmpguard_install();
    gs_wfile a, b;
    gs_error e;
    if (gs_tmpguard_open(&a, kept, &e) != GS_OK || gs_wfile_write(&a, "k", 1, &e) != GS_OK ||
        gs_tmpguard_commit(&a, &e) != GS_OK || gs_tmpguard_open(&b, open_, &e) != GS_OK ||
        gs_wfile_write(&b, "o", 1, &e) != GS_OK || gs_tmpguard_mkdtemp(stage) != 0)
        _exit(3);
    snprintf(inside, sizeof inside, "%s/part0.npy", stage);
    FILE *f = fopen(inside, "w");
    if (!f || fputs("x", f) < 0 || fclose(f) != 0)
        _exit(4);
    raise(SIGTERM);
    _exit(5); /* not reached: the signal ends the child */
}

GS_TEST(a_signal_removes_the_armed_files_and_directory)
{
    char dir[512];
    GS_CHECK(gs_test_scratch_dir(dir, "tmpguard1"));
    const pid_t pid = fork();
    GS_CHECK(pid >= 0);
    if (pid == 0)
        child_then_signal(dir);
    int st = 0;
    GS_CHECK(waitpid(pid, &st, 0) == pid);
    GS_CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d", st);
    char kept[600];
    snprintf(kept, sizeof kept, "%s/kept.bin", dir);
    struct stat sb;
    GS_CHECK(stat(kept, &sb) == 0 && sb.st_size == 1); /* committed: stays */
    GS_CHECK_INT(gs_test_entries(dir), 1); /* no open.bin.tmp.*, no staging directory */
}

/* An aborted file leaves nothing; nested installs keep the handler until
 * the last uninstall, which restores the action before the first. */
GS_TEST(abort_and_nested_installs)
{
    char dir[512], path[600];
    GS_CHECK(gs_test_scratch_dir(dir, "tmpguard2"));
    snprintf(path, sizeof path, "%s/x.bin", dir);
    struct sigaction before, now;
    GS_CHECK(sigaction(SIGHUP, NULL, &before) == 0);
    gs_tmpguard_install();
    gs_tmpguard_install();
    gs_wfile wf;
    gs_error e;
    GS_CHECK(gs_tmpguard_open(&wf, path, &e) == GS_OK);
    gs_tmpguard_abort(&wf);
    GS_CHECK_INT(gs_test_entries(dir), 0);
    gs_tmpguard_abort(&wf); /* a zeroed wf: no-op */
    gs_tmpguard_uninstall();
    GS_CHECK(sigaction(SIGHUP, NULL, &now) == 0);
    GS_CHECK(now.sa_handler != before.sa_handler); /* still caught */
    gs_tmpguard_uninstall();
    GS_CHECK(sigaction(SIGHUP, NULL, &now) == 0);
    GS_CHECK(now.sa_handler == before.sa_handler);
    gs_tmpguard_uninstall(); /* one too many: no-op */
}

GS_TEST_MAIN()
