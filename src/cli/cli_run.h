#ifndef SNAPVIEW_CLI_CLI_RUN_H
#define SNAPVIEW_CLI_CLI_RUN_H
/*
 * A run directory as snapview ranks prints it (analysis/runs.h): the
 * grid of peaks, one line per dump, the files that could not be read,
 * the growth between dumps and the skew between ranks, as text or as the
 * "run" object of the JSON. The files outside the grid are cmd_ranks.c's
 * to print, as the rank list of a plain directory.
 */
#include "analysis/rankset.h"
#include "analysis/runs.h"
#include "cli/cli.h"
#include "util/json.h"

/* The run as text on stdout. */
void cli_run_text(const struct cli_opts *o, const struct an_run *run,
    const struct an_rankset *rs);

/* The run as the value of a JSON key (an object). */
void cli_run_json(struct json *j, const struct an_run *run,
    const struct an_rankset *rs);

/* Files of the run that could not be read (empty, failed). */
size_t cli_run_unread(const struct an_run *run);

#endif
