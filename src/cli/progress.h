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

#endif
