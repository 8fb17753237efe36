#ifndef SNAPVIEW_CLI_PROGRESS_H
#define SNAPVIEW_CLI_PROGRESS_H
/*
 * A one-line progress bar on a terminal: percent, MB/s and ETA, redrawn
 * at most ten times a second with a carriage return and erased at the
 * end. Draws nothing unless the stream is a terminal.
 */
#include <stdint.h>
#include <stdio.h>

struct cli_progress {
	FILE *f;          /* NULL: disabled */
	const char *label;
	double start;     /* seconds, monotonic */
	double last;      /* last redraw */
	int drawn;
};

/* Enables the bar on f when f is a terminal and quiet is 0. */
void cli_progress_init(struct cli_progress *p, FILE *f, const char *label,
    int quiet);
/* Progress callback for idx_opts/snap_load_opts (ctx = the bar). */
int cli_progress_cb(void *ctx, uint64_t done, uint64_t total);
/* Erases the bar. */
void cli_progress_end(struct cli_progress *p);

/* Around an open that may build an index: SIGINT, SIGTERM and SIGHUP
 * (unless ignored) cancel the build instead of killing the process at
 * once: cli_progress_cb() then says cancel, and the calling thread's
 * work is asked to stop (util/stop.h), so the build ends within a tenth
 * of a second or so and removes its temp file. cli_cancel_end() puts the
 * signals back and, when one came, erases the bar and dies of it, as it
 * would have (a shell loop stops on it). A second signal kills at once. */
void cli_cancel_begin(void);
void cli_cancel_end(struct cli_progress *p);

#endif
