/*
 * progress.h -- progress of long work on stderr, for the people waiting:
 * `gapsim` waiting for a cloud job of gapsimd, gapsim-batch solving a
 * cloud. A one-line bar redrawn in place on a terminal (done/total,
 * failed, solves/s, ETA); plain lines (at most one a second, and on every
 * status change) when stderr is not a terminal.
 *
 * Owns: gs_progress, gs_rows_progress (a run's rows, rate and time left),
 * gs_fmt_duration (durations as people read them).
 * Not thread-safe: one caller at a time (gapsim-batch serializes its
 * workers' reports).
 */
#ifndef GS_PROGRESS_H
#define GS_PROGRESS_H

#include <stddef.h>

typedef struct {
    int tty;
    int drawn;        /* a bar is on the current line */
    double last_line; /* time of the last plain line */
    long long last_done;
    char last_status[16];
} gs_progress;

void gs_progress_init(gs_progress *p, int tty);
/* rate < 0 / eta < 0: unknown; failed < 0: not shown. */
void gs_progress_update(gs_progress *p, const char *job, const char *status, long long done,
                        long long total, long long failed, double rate, double eta);
/* Finish the bar's line (terminal) or print the last line (plain). */
void gs_progress_end(gs_progress *p);
/* End the line of the bar on screen, if any: called before any error
 * message, so that the message starts on a line of its own. */
void gs_progress_break(void);

/* The rows (gaps) of a run done so far, drawn as it goes (gapsim-batch, rank
 * 0 of gapsim-mpi): the rate and the time left from the rows done since t0
 * (those done before, a restart's, count in `done` but not in the rate),
 * redrawn at most every 0.2 s; the final draw says "done". */
typedef struct {
    gs_progress pg;
    long long before, total;
    double t0, last;
} gs_rows_progress;

/* Start now; tty: draw a bar (else plain lines). */
void gs_rows_progress_init(gs_rows_progress *p, long long before, long long total, int tty);
/* done rows of total (before included); final: the last draw. */
void gs_rows_progress_show(gs_rows_progress *p, long long done, int final);

/* A duration in seconds as "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min";
 * "-" if negative or not finite. */
const char *gs_fmt_duration(double s, char *buf, size_t cap);

#endif
