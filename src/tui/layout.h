#ifndef SNAPVIEW_TUI_LAYOUT_H
#define SNAPVIEW_TUI_LAYOUT_H
/*
 * Screen layout (pure, unit-tested): terminal cols x rows -> pane
 * rectangles. Top to bottom: timeline, segment map, detail, status line.
 * Each pane rectangle includes its title row. Below LAYOUT_MIN_COLS x
 * LAYOUT_MIN_ROWS the layout is "too small" and only the status rect is
 * set (the whole screen, for the notice).
 */

#define LAYOUT_MIN_COLS 40
#define LAYOUT_MIN_ROWS 13

enum lay_pane { LAY_TIMELINE, LAY_SEGMENTS, LAY_DETAIL, LAY_STATUS, LAY_N };

struct rect {
	int x, y, w, h;
};

struct layout {
	int cols, rows;
	int too_small;
	struct rect r[LAY_N];
	struct rect full; /* everything above the status line (help) */
};

/* Computes the layout; returns 0, or -1 when the screen is too small. */
int layout_compute(int cols, int rows, struct layout *out);
/* Gives the timeline every row above the status line of a computed
 * layout l (not too small): the segment map and the detail pane keep
 * their place at the bottom with no rows (h = 0: not drawn). */
void layout_timeline_only(struct layout *l);

#endif
