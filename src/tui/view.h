#ifndef SNAPVIEW_TUI_VIEW_H
#define SNAPVIEW_TUI_VIEW_H
/*
 * Views: a list or table that takes the place of one pane (leaks, frag,
 * top, ...) over the shared event cursor. Each view is one file that
 * owns its state and its actions and exports a struct view_ops; views.c
 * is the generic part (opening, closing, focus, dispatch) and the only
 * code that knows the list of views. The app (app.c) knows nothing of
 * views: a view reads and changes the app through app.h, and hands the
 * detail pane what to show through app->vdetail (DETAIL_SITE).
 *
 * Lifetime of a view's state (priv, priv_size bytes, zeroed, allocated
 * by views.c): open() runs each time the view opens and computes what
 * it needs the first time; reset() frees everything when the device
 * changes and at exit, after which priv is zeroed again.
 */
#include <stdio.h>

#include "tui/app.h"
#include "tui/pane.h"

struct view_ops {
	const char *name;
	enum action key;        /* the action that opens and closes it */
	int slot;               /* LAY_SEGMENTS or LAY_DETAIL */
	size_t priv_size;
	/* 0, or -1 with a message in a->msg (the view stays closed) */
	int (*open)(struct app *a, void *priv);
	void (*reset)(struct app *a, void *priv);
	/* after every action while open: follow the cursor, update the
	 * timeline's highlight and marks and a->vdetail */
	void (*sync)(struct app *a, void *priv);
	void (*draw)(struct app *a, void *priv, struct cellbuf *cb,
	    const struct rect *r, int focused);
	/* actions with the view's pane focused: UI_* flags, 0 = not handled;
	 * UI_CLOSE_VIEW closes the view and focuses the pane it covered */
	int (*action)(struct app *a, void *priv, enum action act,
	    const struct rect *r);
	/* actions whatever the focus (]/[ ...): UI_* flags or 0; may be NULL */
	int (*global)(struct app *a, void *priv, enum action act);
	/* status line keys */
	const char *hint;
	/* writes the view as text (export); NULL = nothing to export */
	int (*write)(struct app *a, void *priv, FILE *f);
	/* the text of a prompt the view opened (PROMPT_VIEW); may be NULL */
	void (*prompt)(struct app *a, void *priv, const char *text);
	/* a click at column x, row of the pane r (0 = its title): UI_*
	 * flags; may be NULL (the pane is focused, nothing else) */
	int (*click)(struct app *a, void *priv, int x, int row,
	    const struct rect *r);
	/* 1: what it shows needs the replay, and while the replay is built
	 * behind the screen (replay_bg.h) it waits for it */
	int needs_replay;
};

extern const struct view_ops view_leaks_ops;
extern const struct view_ops view_frag_ops;
extern const struct view_ops view_top_ops;
extern const struct view_ops view_events_ops;
extern const struct view_ops view_blocks_ops;
extern const struct view_ops view_oom_ops;
extern const struct view_ops view_info_ops;
extern const struct view_ops view_phases_ops;

/* ---- the registry (views.c), for the loop in tui.c ---- */

/* Sets up and frees the views' state (a->views). */
void views_init(struct app *a);
void views_free(struct app *a);
/* Pane in layout slot (LAY_TIMELINE..LAY_DETAIL) given the open view. */
const struct pane_ops *views_pane(struct app *a, int slot);
/* Keeps the open view in line with the app (and drops every view's state
 * when the device changed); call after every action. */
void views_sync(struct app *a);
/* Status line keys of the open view, or NULL. */
const char *views_hint(const struct app *a);
/* Actions that open or close views, or act on the open view whatever
 * the focus: UI_* flags, 0 when not one of them. */
int views_action(struct app *a, enum action act);
/* A click on layout slot's pane at column x, row (0 = its title): UI_*
 * flags, 0 when no view is there. */
int views_click(struct app *a, int slot, int x, int row);
/* Hands the text of a PROMPT_VIEW prompt to the open view. */
void views_prompt(struct app *a, const char *text);
/* The open view's ops, or NULL. */
const struct view_ops *views_open_ops(const struct app *a);
/* Writes the open view as text to f: 0, 1 when no view is open or it has
 * nothing to write. */
int views_write(struct app *a, FILE *f);

#endif
