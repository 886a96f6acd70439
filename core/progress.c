/*
 * progress.c -- progress of long work on stderr (see progress.h).
 */
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "linalg.h"

#define BAR_WIDTH 30

static gs_progress *active; /* the bar drawn on the terminal's current line */

void gs_progress_init(gs_progress *p, int tty)
{
    memset(p, 0, sizeof *p);
    p->tty = tty;
    p->last_done = -1;
}

void gs_progress_update(gs_progress *p, const char *job, const char *status, long long done,
                        long long total, long long failed, double rate, double eta)
{
    char rate_s[32] = "-", eta_s[32] = "-";
    if (rate >= 0)
        snprintf(rate_s, sizeof rate_s, "%.1f", rate);
    if (eta >= 0)
        gs_fmt_duration(eta, eta_s, sizeof eta_s);
    if (p->tty) {
        char bar[BAR_WIDTH + 1];
        int fill = total > 0 ? (int)((double)BAR_WIDTH * (double)done / (double)total) : BAR_WIDTH;
        for (int i = 0; i < BAR_WIDTH; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[BAR_WIDTH] = '\0';
        char failed_s[40] = "";
        if (failed >= 0)
            snprintf(failed_s, sizeof failed_s, "  %lld failed", failed);
        fprintf(stderr, "\r%s [%s] %lld/%lld%s  %s solves/s  ETA %s  %-9s\033[K", job, bar, done,
                total, failed_s, rate_s, eta_s, status);
        fflush(stderr);
        p->drawn = 1;
        active = p;
        return;
    }
    double t = gs_now();
    int changed = strcmp(status, p->last_status) != 0;
    if (!changed && (done == p->last_done || t - p->last_line < 1.0))
        return;
    char failed_s[40] = "";
    if (failed >= 0)
        snprintf(failed_s, sizeof failed_s, ", %lld failed", failed);
    fprintf(stderr, "%s %s: %lld/%lld done%s, %s solves/s%s%s\n", job, status, done, total,
            failed_s, rate_s, eta >= 0 ? ", ETA " : "", eta >= 0 ? eta_s : "");
    fflush(stderr);
    p->last_line = t;
    p->last_done = done;
    snprintf(p->last_status, sizeof p->last_status, "%s", status);
}

void gs_progress_end(gs_progress *p)
{
    if (p->tty && p->drawn) {
        fputc('\n', stderr);
        p->drawn = 0;
    }
    if (active == p)
        active = NULL;
}

void gs_progress_break(void)
{
    if (active)
        gs_progress_end(active);
}

void gs_rows_progress_init(gs_rows_progress *p, long long before, long long total, int tty)
{
    gs_progress_init(&p->pg, tty);
    p->before = before;
    p->total = total;
    p->t0 = p->last = gs_now();
}

void gs_rows_progress_show(gs_rows_progress *p, long long done, int final)
{
    const double now = gs_now();
    if (!final && (now - p->last < 0.2 || done == p->before)) /* nothing new to say */
        return;
    p->last = now;
    const double rate = now > p->t0 ? (double)(done - p->before) / (now - p->t0) : -1;
    gs_progress_update(&p->pg, "cloud", final ? "done" : "running", done, p->total, -1, rate,
                       rate > 0 && !final ? (double)(p->total - done) / rate : -1);
}

const char *gs_fmt_duration(double s, char *buf, size_t cap)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, cap, "-");
    else if (s < 1)
        snprintf(buf, cap, "%.3g ms", 1e3 * s);
    else if (s < 60)
        snprintf(buf, cap, "%.1f s", s);
    else if (s < 3600)
        snprintf(buf, cap, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, cap, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
    return buf;
}
