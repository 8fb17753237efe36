/*
 * Timeline pane: title with the device, event count and peak, then the
 * Active Memory Timeline (render/timeline.c). Handles cursor moves.
 */
#include "config.h"

#include <stdio.h>

#include "render/fmt.h"
#include "tui/pane.h"

static void
tl_draw(struct app *a, struct cellbuf *cb, const struct rect *r, int focused)
{
	char t[256], n[FMT_BUF], pk[FMT_BUF], pe[FMT_BUF], cur[FMT_BUF],
	    tot[FMT_BUF];

	fmt_count(n, sizeof n, a->tl.n_events);
	fmt_size(pk, sizeof pk, a->tl.peak);
	fmt_event(pe, sizeof pe, a->tl.peak_ev);
	fmt_event(cur, sizeof cur, a->view.cursor);
	fmt_size(tot, sizeof tot, tl_total_at(&a->tm, a->view.cursor));
	snprintf(t, sizeof t, "%s - dev %u - %s %s - peak %s @ %s - %s "
	    "events%s", r->w >= 110 ? "Active Memory Timeline" : "Timeline",
	    a->device, cur, tot, pk, pe, n,
	    a->view.time_axis && a->tm.time_ok ? " - time axis" : "");
	pane_title(a, cb, r, focused, t);
	tl_render(&a->tm, &a->view, cb, r->x, r->y + 1, r->w, r->h - 1);
}

/* Event at the start of the column next to the cursor's. */
static int64_t
column_step(struct app *a, const struct rect *r, int dir)
{
	int pw = tl_plot_width(r->w);
	int c = tl_event_col(&a->tm, &a->view, pw, a->view.cursor);
	int64_t ev;

	if (c < 0)
		return a->view.cursor + dir;
	if (dir > 0) {
		do {
			c++;
			ev = c < pw ? tl_col_event(&a->tm, &a->view, pw, c)
			    : a->view.ev1;
		} while (c < pw && ev <= a->view.cursor);
		return ev;
	}
	if (c == 0)
		return a->view.cursor - (a->view.ev1 - a->view.ev0) / pw - 1;
	return tl_col_event(&a->tm, &a->view, pw, c - 1);
}

static int
tl_action(struct app *a, enum action act, const struct rect *r)
{
	int64_t span = a->view.ev1 - a->view.ev0;

	switch (act) {
	case ACT_LEFT: app_set_cursor(a, column_step(a, r, -1)); break;
	case ACT_RIGHT: app_set_cursor(a, column_step(a, r, 1)); break;
	case ACT_UP: app_set_cursor(a, a->view.cursor - 1); break;
	case ACT_DOWN: app_set_cursor(a, a->view.cursor + 1); break;
	case ACT_PAGE_UP:
		app_set_cursor(a, a->view.cursor - (span + 1) / 2);
		break;
	case ACT_PAGE_DOWN:
		app_set_cursor(a, a->view.cursor + (span + 1) / 2);
		break;
	case ACT_FIRST: app_set_cursor(a, 0); break;
	case ACT_LAST: app_set_cursor(a, (int64_t)a->tl.n_events - 1); break;
	default: return 0;
	}
	a->detail = DETAIL_EVENT;
	a->detail_scroll = 0;
	return UI_HANDLED | UI_REDRAW;
}

const struct pane_ops pane_timeline_ops = {"timeline", tl_draw, tl_action};
