/*
 * progress.c -- job progress display of the `gapsim` command (see progress.h).
 */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "out.h"

#define BAR_WIDTH 30

static gc_progress *active; /* the bar drawn on the terminal's current line */

double gc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void gc_progress_init(gc_progress *p, int tty)
{
    memset(p, 0, sizeof *p);
    p->tty = tty;
    p->last_done = -1;
}

void gc_progress_update(gc_progress *p, const char *job, const char *status, int done, int total,
                        int failed, double rate, double eta)
{
    char rate_s[32] = "-", eta_s[32] = "-";
    if (rate >= 0)
        snprintf(rate_s, sizeof rate_s, "%.1f", rate);
    if (eta >= 0)
        gc_fmt_duration(eta, eta_s, sizeof eta_s);
    if (p->tty) {
        char bar[BAR_WIDTH + 1];
        int fill = total > 0 ? (int)((double)BAR_WIDTH * done / total) : BAR_WIDTH;
        for (int i = 0; i < BAR_WIDTH; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[BAR_WIDTH] = '\0';
        fprintf(stderr, "\r%s [%s] %d/%d  %d failed  %s solves/s  ETA %s  %-9s\033[K", job, bar,
                done, total, failed, rate_s, eta_s, status);
        fflush(stderr);
        p->drawn = 1;
        active = p;
        return;
    }
    double t = gc_now();
    int changed = strcmp(status, p->last_status) != 0;
    if (!changed && (done == p->last_done || t - p->last_line < 1.0))
        return;
    fprintf(stderr, "%s %s: %d/%d done, %d failed, %s solves/s%s%s\n", job, status, done, total,
            failed, rate_s, eta >= 0 ? ", ETA " : "", eta >= 0 ? eta_s : "");
    fflush(stderr);
    p->last_line = t;
    p->last_done = done;
    snprintf(p->last_status, sizeof p->last_status, "%s", status);
}

void gc_progress_end(gc_progress *p)
{
    if (p->tty && p->drawn) {
        fputc('\n', stderr);
        p->drawn = 0;
    }
    if (active == p)
        active = NULL;
}

void gc_progress_break(void)
{
    if (active)
        gc_progress_end(active);
}
