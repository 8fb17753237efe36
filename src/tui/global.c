/*
 * The actions that belong to no pane: zoom, pan, jumps, the leak window,
 * focus, help, the device and the colouring; what none of them is goes
 * on to the timeline's actions that work whatever the focus
 * (pane_timeline.c).
 */
#include "config.h"

#include "tui/app.h"
#include "tui/simulate.h"

#include "render/fmt.h"

#define MIN_SPAN 8

static int64_t
n_events(const struct app *a)
{
	return (int64_t)a->tl.n_events;
}

static void
zoom(struct app *a, int in)
{
	int64_t n = n_events(a), span = a->view.ev1 - a->view.ev0, c;

	if (n <= 0)
		return;
	span = in ? span / 2 : span * 2;
	if (span < MIN_SPAN)
		span = MIN_SPAN;
	if (span > n)
		span = n;
	c = a->view.cursor < 0 ? 0 : a->view.cursor;
	/* Keep the cursor at the same relative place. */
	a->view.ev0 = c - (int64_t)((double)(c - a->view.ev0) *
	    span / (double)(a->view.ev1 - a->view.ev0));
	if (a->view.ev0 < 0)
		a->view.ev0 = 0;
	if (a->view.ev0 + span > n)
		a->view.ev0 = n - span;
	a->view.ev1 = a->view.ev0 + span;
}

static void
pan(struct app *a, int dir)
{
	int64_t n = n_events(a), span = a->view.ev1 - a->view.ev0;
	int64_t d = span / 4 > 0 ? span / 4 : 1;

	a->view.ev0 += dir * d;
	if (a->view.ev0 + span > n)
		a->view.ev0 = n - span;
	if (a->view.ev0 < 0)
		a->view.ev0 = 0;
	a->view.ev1 = a->view.ev0 + span;
	/* the cursor stays where it is (as less and tig leave it): the
	 * timeline marks where it went off the view */
	if (a->view.cursor < a->view.ev0 || a->view.cursor >= a->view.ev1)
		app_msg(a, "the cursor is %s of the view (h/l bring it back)",
		    a->view.cursor < a->view.ev0 ? "left" : "right");
}

static void
jump(struct app *a, enum tl_jump j, int dir, const char *what)
{
	int64_t ev = tl_model_jump(&a->tm, j, a->view.cursor, dir);

	if (ev < -1) {
		app_msg(a, "no %s %s", dir > 0 ? "later" : "earlier", what);
		return;
	}
	cursor_set(a, ev);
	a->detail = DETAIL_EVENT;
}

static void
jump_elem(struct app *a, int to_free)
{
	uint64_t e = cursor_selected_elem(a);
	struct idx_elem elv;
	const struct idx_elem *el;

	if (e == TL_NO_ELEM) {
		app_msg(a, "no allocation selected");
		return;
	}
	elv = idx_tl_elem(&a->tl, e);
	el = &elv;
	if (to_free ? el->free_ev < 0 : el->alloc_ev < 0) {
		app_msg(a, to_free ? "never freed in the trace"
				   : "allocated before the trace started");
		return;
	}
	cursor_set(a, to_free ? el->free_ev : el->alloc_ev);
	a->view.sel_elem = e;
	a->detail = DETAIL_EVENT;
}

/* The leak window: b starts it at the cursor, e ends it there, u clears
 * it; an end before the start swaps them. */
static void
set_window(struct app *a, enum action act)
{
	char e0[FMT_BUF], e1[FMT_BUF];
	int64_t t;

	if (act == ACT_WIN_CLEAR) {
		a->win_from = a->win_to = -2;
		app_msg(a, "leak window cleared: U lists the leaks of the "
		    "whole trace");
		return;
	}
	if (act == ACT_WIN_START)
		a->win_from = a->view.cursor;
	else
		a->win_to = a->view.cursor;
	if (a->win_from >= 0 && a->win_to >= 0 && a->win_from > a->win_to) {
		t = a->win_from;
		a->win_from = a->win_to;
		a->win_to = t;
	}
	app_msg(a, "leak window %s..%s: U lists what it allocated and never "
	    "freed by its end", a->win_from >= -1 ? fmt_event(e0, sizeof e0,
	    a->win_from) : "start", a->win_to >= 0 ? fmt_event(e1,
	    sizeof e1, a->win_to) : "the end");
}

int
global_action(struct app *a, enum action act)
{
	switch (act) {
	case ACT_QUIT: return UI_QUIT;
	case ACT_HELP:
		a->help = !a->help;
		a->help_scroll = 0;
		break;
	case ACT_BACK:
		a->help = 0;
		a->view.pick.kind = TL_PICK_NONE;
		a->sv.sel_block = SEGMAP_NONE;
		a->detail = DETAIL_EVENT;
		a->view.sel_elem = cursor_selected_elem(a);
		break;
	case ACT_FOCUS_NEXT:
	case ACT_FOCUS_PREV:
		/* a hidden pane takes no focus */
		do
			a->focus = (a->focus + (act == ACT_FOCUS_NEXT ? 1 :
			    2)) % 3;
		while (a->lay.r[a->focus].h <= 0 && a->focus != LAY_TIMELINE);
		break;
	case ACT_TIMELINE_ONLY:
		a->timeline_only = !a->timeline_only;
		a->focus = LAY_TIMELINE;
		app_msg(a, a->timeline_only ? "timeline full height (Z: the "
		    "panes below again)" : "segment map and detail shown");
		return UI_HANDLED | UI_RELAYOUT | UI_REDRAW;
	case ACT_ZOOM_IN: zoom(a, 1); break;
	case ACT_ZOOM_OUT: zoom(a, 0); break;
	case ACT_FIT:
		a->view.ev0 = 0;
		a->view.ev1 = n_events(a) > 0 ? n_events(a) : 1;
		break;
	case ACT_PAN_LEFT: pan(a, -1); break;
	case ACT_PAN_RIGHT: pan(a, 1); break;
	case ACT_PEAK:
		cursor_goto(a, a->tl.peak_ev);
		a->detail = DETAIL_EVENT;
		break;
	case ACT_OOM_NEXT: jump(a, TL_JUMP_OOM, 1, "OOM"); break;
	case ACT_OOM_PREV: jump(a, TL_JUMP_OOM, -1, "OOM"); break;
	case ACT_SEG_NEXT: jump(a, TL_JUMP_SEGALLOC, 1, "segment_alloc"); break;
	case ACT_SEG_PREV:
		jump(a, TL_JUMP_SEGALLOC, -1, "segment_alloc");
		break;
	case ACT_SEARCH_NEXT: search_run(a, 1); break;
	case ACT_SEARCH_PREV: search_run(a, -1); break;
	case ACT_JUMP_ALLOC: jump_elem(a, 0); break;
	case ACT_JUMP_FREE: jump_elem(a, 1); break;
	case ACT_FOLD: a->unfold = !a->unfold; break;
	case ACT_ENTER:
		/* the stack is in the detail pane: show it */
		if (a->timeline_only) {
			a->timeline_only = 0;
			a->focus = LAY_DETAIL;
			return UI_HANDLED | UI_RELAYOUT | UI_REDRAW;
		}
		a->focus = LAY_DETAIL;
		break;
	case ACT_DEVICE:
		if (a->n_devices > 1) {
			uint32_t d = a->device;
			uint32_t k;

			for (k = 0; k < a->n_devices; k++) {
				const struct snap_trace *t;

				d = (d + 1) % a->n_devices;
				t = snap_trace_of(a->snap, d);
				if (t != NULL && t->n > 0)
					break;
			}
			if (d != a->device && device_set(a, d) == 0) {
				if (snap_is_host(a->snap, d))
					app_msg(a, "device host (pinned "
					    "memory)");
				else
					app_msg(a, "device %u", d);
			}
		} else
			app_msg(a, "only one device has data");
		break;
	case ACT_AXIS:
		if (!a->tm.time_ok) {
			app_msg(a, "no time_us in this trace");
			break;
		}
		a->view.time_axis = !a->view.time_axis;
		break;
	case ACT_COLOR:
		a->view.by_site = !a->view.by_site;
		app_msg(a, "colour by %s", a->view.by_site ? "call site"
							    : "allocation");
		break;
	case ACT_MISMATCH: check_first(a); break;
	case ACT_WHATIF: simulate_begin(a); break;
	case ACT_WIN_START:
	case ACT_WIN_END:
	case ACT_WIN_CLEAR:
		set_window(a, act);
		break;
	case ACT_ALLOC_NEXT:
	case ACT_ALLOC_PREV:
		app_msg(a, "] and [ step through the blocks of a leak site: "
		    "U opens the leak view");
		break;
	case ACT_PHASE_NEXT:
	case ACT_PHASE_PREV:
		phaseset_jump(a, act == ACT_PHASE_NEXT ? 1 : -1);
		break;
	case ACT_PHASE_WINDOW:
		app_msg(a, "W sets the leak window to the phase instance "
		    "selected in the phase view: P opens it");
		break;
	case ACT_REDRAW: return UI_HANDLED | UI_RELAYOUT | UI_REDRAW;
	default: return pane_timeline_action(a, act);
	}
	return UI_HANDLED | UI_REDRAW;
}
