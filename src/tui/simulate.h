#ifndef SNAPVIEW_TUI_SIMULATE_H
#define SNAPVIEW_TUI_SIMULATE_H
/*
 * What if (A): the device's trace replayed through the simulated caching
 * allocator under settings typed at a prompt (PYTORCH_CUDA_ALLOC_CONF),
 * its reserved bytes drawn over the timeline as a dashed line, and the
 * settings with the simulation's agreement named on the status line
 * (analysis/whatif.h). Owned by the app (a->simulate); dropped with the
 * device.
 */
#include "tui/app.h"

/* Opens the settings prompt (PROMPT_WHATIF), with the last settings. */
void simulate_begin(struct app *a);
/* Runs the simulation under the settings typed ("" or "off": the line is
 * removed); the outcome in a->msg. */
void simulate_run(struct app *a, const char *text);
/* The status line while a simulation is shown, or NULL. */
const char *simulate_hint(struct app *a);
/* Forgets the simulation (a new device, the file closed). */
void simulate_drop(struct app *a);

#endif
