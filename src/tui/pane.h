#ifndef SNAPVIEW_TUI_PANE_H
#define SNAPVIEW_TUI_PANE_H
/*
 * Panes as vtables (tig's view_ops): a pane draws the app state into its
 * rectangle of the screen cell buffer (no curses calls, no I/O) and
 * handles actions, returning UI_* flags (0 = not handled, so the global
 * handler in ui.c gets it). Generic code owns layout, focus and redraw.
 */
#include "render/cellbuf.h"
#include "tui/app.h"
#include "tui/layout.h"

struct pane_ops {
	const char *name;
	void (*draw)(struct app *a, struct cellbuf *cb, const struct rect *r,
	    int focused);
	int (*action)(struct app *a, enum action act, const struct rect *r);
};

extern const struct pane_ops pane_timeline_ops;
extern const struct pane_ops pane_segments_ops;
extern const struct pane_ops pane_detail_ops;
extern const struct pane_ops pane_help_ops;

/* Draws a title row "─ text ────" across r's first row. */
void pane_title(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused, const char *text);

/* Moves the selection *sel of a list of n rows shown in r for the list
 * actions (up, down, pages, first, last): UI_* flags, 0 for any other
 * action. */
int pane_list_move(uint64_t *sel, uint64_t n, enum action act,
    const struct rect *r);
/* Left/Right from a list: the cursor moves as on the timeline and the
 * detail pane keeps showing the list's selection. UI_* flags, 0 for any
 * other action. */
int pane_move_cursor(struct app *a, enum action act);

#endif
