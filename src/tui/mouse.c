/*
 * Mouse events on the screen's panes. See mouse.h.
 */
#include "config.h"

#include "tui/mouse.h"

#include "render/segmap.h"
#include "render/timeline.h"
#include "tui/pane.h"
#include "tui/simulate.h"
#include "tui/view.h"

#define WHEEL_ROWS 3

static int
inside(const struct rect *r, int x, int y)
{
	return x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h;
}

/* A click on the timeline (the plot, the axis or its labels, not the
 * title): the cursor to the event of the column. */
static int
click_timeline(struct app *a, const struct rect *r, int x, int y)
{
	int pw = tl_plot_width(r->w), col = x - (r->x + TL_YAXIS_W);

	if (y == r->y || pw < 1 || col < 0 || col >= pw)
		return UI_HANDLED | UI_REDRAW;
	cursor_set(a, tl_col_event(&a->tm, &a->view, pw, col));
	a->detail = DETAIL_EVENT;
	a->detail_scroll = 0;
	return UI_HANDLED | UI_REDRAW;
}

/* A click on the segment map: the segment of the row, and the block
 * under the cell when the click is on the bar (segmap.c's geometry). */
static int
click_segments(struct app *a, const struct rect *r, int x, int y)
{
	const struct replay_state *st = a->st;
	const struct replay_segment *sg;
	uint64_t s = (uint64_t)a->sv.first + (uint64_t)(y - r->y - 1), addr;
	int bw = r->w - SEGMAP_PREFIX_W - 2 - 5, i;
	uint32_t b;
	const struct replay_state *sst;
	struct segmap_view *ssv;

	if ((sst = simulate_state(a, NULL, NULL, &ssv)) != NULL) {
		/* the simulated map: its row only (no block detail) */
		s = (uint64_t)ssv->first + (uint64_t)(y - r->y - 1);
		if (y != r->y && s < sst->n_segments) {
			ssv->sel_seg = (uint32_t)s;
			ssv->sel_block = SEGMAP_NONE;
		}
		return UI_HANDLED | UI_REDRAW;
	}
	if (y == r->y || st == NULL || s >= st->n_segments)
		return UI_HANDLED | UI_REDRAW;
	a->sv.sel_seg = (uint32_t)s;
	a->sv.sel_block = SEGMAP_NONE;
	sg = &st->segments[s];
	i = x - (r->x + SEGMAP_PREFIX_W + 1);
	if (bw >= 4 && i >= 0 && i < bw) {
		/* the middle of the cell */
		addr = sg->addr +
		    (uint64_t)((long double)sg->size * (2 * i + 1) / (2 * bw));
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		    b < st->n_blocks; b++)
			if (st->blocks[b].addr <= addr && addr -
			    st->blocks[b].addr < st->blocks[b].size &&
			    st->blocks[b].state != SNAP_BLOCK_INACTIVE) {
				a->sv.sel_block = b;
				a->detail = DETAIL_BLOCK;
				a->detail_scroll = 0;
			}
	}
	a->view.sel_elem = cursor_selected_elem(a);
	return UI_HANDLED | UI_REDRAW;
}

static int
wheel(struct app *a, int slot, enum mouse_button b)
{
	const struct pane_ops *p = views_pane(a, slot);
	enum action act;
	int i, f = 0;

	if (slot == LAY_TIMELINE && p == &pane_timeline_ops)
		return global_action(a, b == MOUSE_WHEEL_UP ? ACT_ZOOM_IN :
		    ACT_ZOOM_OUT);
	act = b == MOUSE_WHEEL_UP ? ACT_UP : ACT_DOWN;
	for (i = 0; i < WHEEL_ROWS; i++)
		f |= p->action(a, act, &a->lay.r[slot]);
	return f | UI_HANDLED | UI_REDRAW;
}

int
mouse_event(struct app *a, int x, int y, enum mouse_button b)
{
	int slot, f;

	if (a->lay.too_small)
		return 0;
	if (a->help) {
		if (b == MOUSE_CLICK)
			return 0;
		return pane_help_ops.action(a, b == MOUSE_WHEEL_UP ? ACT_UP :
		    ACT_DOWN, &a->lay.full);
	}
	for (slot = LAY_TIMELINE; slot <= LAY_DETAIL; slot++)
		if (inside(&a->lay.r[slot], x, y))
			break;
	if (slot > LAY_DETAIL)
		return 0;
	if (b != MOUSE_CLICK)
		return wheel(a, slot, b);
	a->focus = slot;
	f = views_click(a, slot, x, y - a->lay.r[slot].y);
	if (f != 0)
		return f;
	if (views_pane(a, slot) == &pane_timeline_ops)
		return click_timeline(a, &a->lay.r[slot], x, y);
	if (views_pane(a, slot) == &pane_segments_ops)
		return click_segments(a, &a->lay.r[slot], x, y);
	return UI_HANDLED | UI_REDRAW;  /* the detail pane: focused */
}
