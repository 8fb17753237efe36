#ifndef SNAPVIEW_TUI_PANE_H
#define SNAPVIEW_TUI_PANE_H
/*
 * Panes as vtables (tig's view_ops): a pane draws the app state into its
 * rectangle of the screen cell buffer (no curses calls, no I/O) and
 * handles actions, returning UI_* flags (0 = not handled, so the global
 * handler in tui.c gets it). Generic code owns layout, focus and redraw.
 */
#include <stdio.h>

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

/* What the detail pane shows: its title and information line into the
 * buffers; returns the stack. */
uint32_t pane_detail_describe(struct app *a, char *title, size_t tsize,
    char *info, size_t isize);

/* Draws a title row "─ text ────" across r's first row; a text too
 * long for it is fitted by pane_title_fit. */
void pane_title(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused, const char *text);
/* text fitted to w cells into buf: a path in it loses its directories
 * ("…/f.py:40"), then whole " - " fields are dropped from the right,
 * then, when the first alone is too long, it is cut at a space, so that
 * no number is cut in the middle. */
void pane_title_fit(const char *text, int w, int utf8, char *buf,
    size_t size);

/* Moves the selection *sel of a list of n rows shown in r for the list
 * actions (up, down, pages, first, last): UI_* flags, 0 for any other
 * action. */
int pane_list_move(uint64_t *sel, uint64_t n, enum action act,
    const struct rect *r);
/* A click on row (0 = the pane's title) of a list whose rows start after
 * header rows, first shown first: -1 when no row is there, 1 when the
 * row is the selected one (act as Enter), else 0 with *sel on it. */
int pane_list_click(uint64_t *sel, uint64_t first, uint64_t n, int row,
    int header);
/* What a click on a list view does, given pane_list_click's answer c:
 * on the selected row, the view's Enter (its action op, with priv and
 * r); on another row, when the view shows its selection in the detail
 * pane (site), that row's stack from the top. UI_* flags. */
int pane_list_clicked(struct app *a, void *priv, const struct rect *r,
    int c, int site,
    int (*action)(struct app *, void *, enum action, const struct rect *));
/* Moves *first so that *sel (clamped below n > 0) is one of the rows
 * rows shown from it. */
void pane_list_scroll(uint64_t *sel, uint64_t *first, uint64_t n, int rows);
/* Draws row y of a list in r: its text, then raw (a call site, text
 * from the file: escaped here) cut at the left to the cells left; the
 * selected row highlighted, bold when focused; others in colour col. */
void pane_list_row(struct app *a, struct cellbuf *cb, const struct rect *r,
    int y, const char *text, const char *raw, int sel, int focused,
    unsigned col);
/* Writes a row as text: text, then raw escaped, and a newline. */
void pane_list_write_row(FILE *f, const char *text, const char *raw);

/* Left/Right from a list: the cursor moves as on the timeline and the
 * detail pane keeps showing the list's selection. UI_* flags, 0 for any
 * other action. */
int pane_timeline_move_cursor(struct app *a, enum action act);

#endif
