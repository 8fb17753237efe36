#ifndef SNAPVIEW_RENDER_ANLIST_H
#define SNAPVIEW_RENDER_ANLIST_H
/*
 * The lists of the TUI's analysis views, drawn into a cell buffer (pure:
 * no curses): leak sites (an_leaks, ranked), segment allocations
 * (an_frag, worst first) and live bytes by call site (an_top, roots).
 * A header row, then one row per entry; the selected row is highlighted
 * and kept visible. Call sites are escaped and, when too long, cut at
 * the left so the file name, line and function stay visible.
 *
 * Cost: O(visible rows).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/frag.h"
#include "analysis/leaks.h"
#include "analysis/site.h"
#include "analysis/top.h"
#include "render/cellbuf.h"

enum anlist_kind { ANLIST_LEAKS, ANLIST_FRAG, ANLIST_TOP };

struct anlist {
	int kind;                      /* enum anlist_kind */
	const struct an_leaks *leaks;  /* borrowed: the one of kind */
	const struct an_frag *frag;
	const struct an_top *top;
	struct an_sites *sites;        /* borrowed (labels) */
	uint64_t sel, first;           /* selected row, first row shown */
	int utf8;
};

/* Number of entries of the list. */
uint64_t anlist_rows(const struct anlist *l);

/* Draws the header and the rows from l->first into (x, y, w, h) of cb;
 * first moves so that sel (clamped to the rows) is visible. */
void anlist_render(struct anlist *l, struct cellbuf *cb, int x, int y,
    int w, int h, int focused);

/* Writes the header and every row as text to f, call sites whole
 * (escaped). Returns 0, or -1 on a write error. */
int anlist_write(const struct anlist *l, FILE *f);

/* raw (text from the file) escaped into buf, shortened to at most w
 * cells: a C++ name loses its parameters, a path its directories
 * (render/frames.h, frames_shorten), anything else is cut at the left.
 * Returns buf. */
char *anlist_cut_label(const char *raw, int w, int utf8, char *buf,
    size_t size);

/* The category c (enum an_category; -1: none, "-") as the lists and
 * tables show it, in at most ANLIST_CAT_W cells: its label, "optimizer"
 * for optimizer state. A constant string. */
#define ANLIST_CAT_W 10
const char *anlist_category(int c);

/* Escaped label of site into buf, cut at the left to at most w cells
 * ("...ker.py:47 collect" / UTF-8 ellipsis). Returns buf. */
char *anlist_site_label(struct an_sites *sites, uint32_t site, int w,
    int utf8, char *buf, size_t size);

#endif
