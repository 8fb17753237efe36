/*
 * Pane geometry from the terminal size. Shares: detail ~22% (>= 3 rows),
 * segment map ~30% (>= 3), timeline the rest (>= 6: title, 3 plot rows,
 * axis, labels); or, with the lower panes hidden (Z), the timeline all of
 * it.
 */
#include "config.h"

#include "tui/layout.h"

#include <string.h>

static struct rect
mk(int x, int y, int w, int h)
{
	struct rect r = {x, y, w, h};

	return r;
}

int
layout_compute(int cols, int rows, struct layout *out)
{
	int avail, dh, sh, th;

	memset(out, 0, sizeof *out);
	out->cols = cols;
	out->rows = rows;
	if (cols < LAYOUT_MIN_COLS || rows < LAYOUT_MIN_ROWS) {
		out->too_small = 1;
		out->r[LAY_STATUS] = mk(0, 0, cols > 0 ? cols : 0,
		    rows > 0 ? rows : 0);
		return -1;
	}
	avail = rows - 1;
	dh = avail * 22 / 100;
	sh = avail * 30 / 100;
	if (dh < 3)
		dh = 3;
	if (sh < 3)
		sh = 3;
	th = avail - dh - sh;
	out->r[LAY_TIMELINE] = mk(0, 0, cols, th);
	out->r[LAY_SEGMENTS] = mk(0, th, cols, sh);
	out->r[LAY_DETAIL] = mk(0, th + sh, cols, dh);
	out->r[LAY_STATUS] = mk(0, rows - 1, cols, 1);
	out->full = mk(0, 0, cols, avail);
	return 0;
}

void
layout_timeline_only(struct layout *l)
{
	int avail = l->rows - 1;

	if (l->too_small)
		return;
	l->r[LAY_TIMELINE] = mk(0, 0, l->cols, avail);
	l->r[LAY_SEGMENTS] = mk(0, avail, l->cols, 0);
	l->r[LAY_DETAIL] = mk(0, avail, l->cols, 0);
}
