#ifndef SNAPVIEW_TUI_HELP_H
#define SNAPVIEW_TUI_HELP_H
/*
 * Help screens built from the action table (actions.h), so that a
 * rebinding shows on them (internal to tui/): groups of entries, each a
 * few actions, their keys taken from the table, and a short text; then a
 * legend. Two columns when the screen is wide enough, one otherwise; a
 * line too long for its column wraps, never cut. An action of the page's
 * keymaps that no group names is listed under "More" with its long help,
 * so a new action is never missing. pane_help.c has the viewer's page,
 * ranks_overview.c the rank screens'.
 */
#include <stddef.h>
#include <stdio.h>

#include "render/cellbuf.h"
#include "tui/actions.h"

#define HELP_MAX_ACTS 5

struct help_entry {
	enum action act[HELP_MAX_ACTS]; /* up to the first ACT_NONE */
	const char *text;
};

struct help_group {
	const char *title;
	const struct help_entry *e;
	size_t n;
};

struct help_page {
	const struct help_group *groups;
	size_t n_groups;
	size_t first_right;        /* groups[first_right..]: right column */
	unsigned km;               /* the keymaps (KM_*) "More" is drawn from */
	const char *const *legend; /* paragraphs under the keys */
	size_t n_legend;
};

/* A line of a help screen: its text, and the cells [bold0, bold1) in
 * bold: a group's title, in its own column only (not the entry of the
 * other column beside it). */
struct help_line {
	char text[160];
	int bold0, bold1;
};

/* Lines of a help screen; the caller frees l. */
struct help_lines {
	struct help_line *l;
	size_t n, cap;
};

/* Appends every line of page p, for a width of w cells, to out. */
void help_build(struct help_lines *out, const struct help_page *p, int w);
/* Draws line l at (x, y), at most w cells, its title cells bold. */
void help_put_line(struct cellbuf *cb, int x, int y, int w,
    const struct help_line *l);

/* Writes every entry of page p to f, for snapview --list-table help: one
 * line per entry, of four fields separated by tabs: name (which page),
 * the group's title, the entry's actions by their script names
 * (separated by spaces) and its text. */
void help_list(FILE *f, const char *name, const struct help_page *p);

/* help_list() of the viewer's page, named "viewer" (pane_help.c). */
void pane_help_list(FILE *f);

#endif
