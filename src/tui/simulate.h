#ifndef SNAPVIEW_TUI_SIMULATE_H
#define SNAPVIEW_TUI_SIMULATE_H
/*
 * What if (A): the device's trace replayed through the simulated caching
 * allocator under settings typed at a prompt (PYTORCH_CUDA_ALLOC_CONF),
 * its reserved bytes drawn over the timeline as a dashed line, and the
 * settings with the simulation's agreement named on the status line
 * (analysis/whatif.h); D puts its segments and blocks at the cursor in
 * the state pane in place of the recorded ones. Owned by the app
 * (a->simulate); dropped with the device.
 */
#include "tui/app.h"

/* Opens the settings prompt (PROMPT_WHATIF), with the last settings. */
void simulate_begin(struct app *a);
/* Runs the simulation under the settings typed ("" or "off": the line is
 * removed); the outcome in a->msg. */
void simulate_run(struct app *a, const char *text);
/* The status line while a simulation is shown, or NULL. */
const char *simulate_hint(struct app *a);
/* D: the state pane shows the simulated state at the cursor, or the
 * recorded one again; the outcome in a->msg. */
void simulate_toggle_state(struct app *a);
/* While the state pane shows the simulated state: the state after the
 * cursor's event under the settings (borrowed, until the next call), its
 * totals in *t, the settings' name and the pane's own selection in *sv
 * (any of them may be NULL); else NULL. The simulation walks forward
 * from the state it had to the cursor, and starts again from the first
 * event on a move back (analysis/whatif.h, an_whatif_walk): a move costs
 * the events between, at most one pass over the events up to the
 * cursor, and is made only while the pane shows it. */
const struct replay_state *simulate_state(struct app *a,
    struct replay_totals *t, const char **name, struct segmap_view **sv);
/* The block selected in the simulated state the state pane shows, with
 * its segment in *seg, or NULL (no simulated state shown, no block of
 * it selected). Its alloc_ev and stack are the recorded allocation's
 * that the simulation placed there (-1 and 0: none). */
const struct replay_block *simulate_block(struct app *a,
    const struct replay_segment **seg);
/* Forgets the simulation (a new device, the file closed). */
void simulate_drop(struct app *a);

#endif
