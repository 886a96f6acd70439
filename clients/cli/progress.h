/*
 * progress.h -- progress of a cloud job on stderr while `gapsim` waits for
 * it: a one-line bar redrawn in place on a terminal (done/total, failed,
 * solves/s, ETA), plain lines (at most one a second, and on every status
 * change) when stderr is not a terminal.
 */
#ifndef GC_PROGRESS_H
#define GC_PROGRESS_H

typedef struct {
    int tty;
    int drawn;        /* a bar is on the current line */
    double last_line; /* time of the last plain line */
    int last_done;
    char last_status[16];
} gc_progress;

void gc_progress_init(gc_progress *p, int tty);
/* Monotonic seconds (the bar's rate clock; also how long a request took). */
double gc_now(void);
/* rate < 0 / eta < 0: unknown. */
void gc_progress_update(gc_progress *p, const char *job, const char *status, int done, int total,
                        int failed, double rate, double eta);
/* Finish the bar's line (terminal) or print the last line (plain). */
void gc_progress_end(gc_progress *p);
/* End the line of the bar on screen, if any: called before any error
 * message, so that the message starts on a line of its own. */
void gc_progress_break(void);

#endif
