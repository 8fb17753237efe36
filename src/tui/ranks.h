#ifndef SNAPVIEW_TUI_RANKS_H
#define SNAPVIEW_TUI_RANKS_H
/*
 * The screens of the viewer on several files (internal to tui/): the rank
 * overview (one row per rank and device: figures from each index's
 * summary and a sparkline of its timeline, every rank on one axis) and
 * the comparison of two ranks or runs (both timelines over one axis with
 * one cursor, and the call sites ranked by the change in live bytes at
 * the cursor, as snapview diff --at / --step ranks them).
 *
 * tui.c owns the loop and the terminal: it maps keys with
 * ranks_overview_action() and hands them to ranks_overview_key(), and
 * draws with ranks_overview_draw(), while the set is showing; Enter on
 * a rank asks it (RK_OPEN) to open that rank's full view, which returns
 * here on the ranks action. The overview is ranks_overview.c, the grid
 * of a run ranks_grid.c, the comparison ranks_compare.c (ranks_int.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "render/cellbuf.h"
#include "tui/actions.h"
#include "tui/tui.h"

struct rk;

/* What a key asks of tui.c. */
enum rk_result { RK_NONE, RK_REDRAW, RK_QUIT, RK_OPEN };

/* Draws a loading line: done of total, pct of the bytes being indexed;
 * returns non-zero to cancel. */
typedef int (*rk_progress_fn)(void *ctx, const char *line, int pct);

/* Collects the set of o->files and loads the summaries (building missing
 * indexes, progress through fn). Two regular files open their comparison
 * at once. Returns 0, or the exit status with a line in msg (nothing to
 * show, cancelled). */
int ranks_overview_open(struct rk **out, const struct tui_opts *o,
    rk_progress_fn fn, void *ctx, char *msg, size_t ml);
void ranks_overview_free(struct rk *r);

void ranks_overview_draw(struct rk *r, struct cellbuf *cb, int utf8);
/* The action key k is bound to on the screen showing (the keymap of the
 * overview or of the comparison, actions.h), or ACT_NONE. */
enum action ranks_overview_action(const struct rk *r, int key);
/* key: the key read (0 for a scripted action); act: its action. */
enum rk_result ranks_overview_key(struct rk *r, int key, enum action act);

/* After RK_OPEN: the file and device to open (borrowed). */
void ranks_overview_target(const struct rk *r, const char **path,
    uint32_t *device);
/* A one-line message for the set's status line (an open that failed). */
void ranks_common_message(struct rk *r, const char *msg);
/* The status line's hint while a rank's full view is open. */
const char *ranks_overview_hint(void);
/* help_list() of the rank screens' help page, named "ranks" (help.h). */
void ranks_overview_help_list(FILE *f);

#endif
