/*
 * App state changes shared by the panes and the loop: the cursor, the
 * device, the selection, jumps, zoom and search.
 */
#include "config.h"

#include "tui/app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/idx.h"
#include "render/fmt.h"
#include "util/xalloc.h"

#define MIN_SPAN 8

void
app_msg(struct app *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof a->msg, fmt, ap);
	va_end(ap);
}

static int64_t
n_events(const struct app *a)
{
	return (int64_t)a->tl.n_events;
}

/* Re-finds the selected block by address in the new state. */
static void
reselect(struct app *a, uint64_t seg_addr, uint64_t blk_addr)
{
	const struct replay_state *st = a->st;
	uint32_t lo = 0, hi = st->n_segments, b;

	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	if (seg_addr == UINT64_MAX)
		return;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (st->segments[mid].addr + st->segments[mid].size <= seg_addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= st->n_segments)
		return;
	a->sv.sel_seg = lo;
	for (b = st->segments[lo].first_block; blk_addr != UINT64_MAX &&
	    b < st->segments[lo].first_block + st->segments[lo].n_blocks; b++)
		if (st->blocks[b].addr == blk_addr) {
			a->sv.sel_block = b;
			break;
		}
}

void
app_set_cursor(struct app *a, int64_t ev)
{
	int64_t n = n_events(a), span = a->view.ev1 - a->view.ev0;
	uint64_t seg_addr = UINT64_MAX, blk_addr = UINT64_MAX;

	if (ev >= n)
		ev = n - 1;
	if (ev < 0)
		ev = n > 0 ? 0 : -1;
	a->view.cursor = ev;
	if (ev >= 0 && (ev < a->view.ev0 || ev >= a->view.ev1)) {
		/* Keep the span, centre the cursor. */
		a->view.ev0 = ev - span / 2;
		if (a->view.ev0 + span > n)
			a->view.ev0 = n - span;
		if (a->view.ev0 < 0)
			a->view.ev0 = 0;
		a->view.ev1 = a->view.ev0 + span;
	}
	if (a->st != NULL && a->sv.sel_seg < a->st->n_segments) {
		seg_addr = a->st->segments[a->sv.sel_seg].addr;
		if (a->sv.sel_block < a->st->n_blocks)
			blk_addr = a->st->blocks[a->sv.sel_block].addr;
	}
	a->st = state_at(&a->src, ev);
	segmap_totals(a->st, &a->totals);
	reselect(a, seg_addr, blk_addr);
	a->view.sel_elem = app_selected_elem(a);
}

uint64_t
app_selected_elem(struct app *a)
{
	int64_t c = a->view.cursor;

	if (a->detail == DETAIL_BLOCK && a->sv.sel_block != SEGMAP_NONE &&
	    a->sv.sel_block < a->st->n_blocks)
		return tl_model_find_elem(&a->tm, a->st->blocks[a->sv.sel_block]
		    .addr, c);
	if (c >= 0 && (uint64_t)c < a->tl.n_events &&
	    idx_tl_ev_elem(&a->tl, c) < a->tl.n_elems)
		return idx_tl_ev_elem(&a->tl, c);
	return TL_NO_ELEM;
}

static void
device_free(struct app *a)
{
	tl_model_destroy(&a->tm);
	idx_timeline_destroy(&a->tl);
	state_close(&a->src);
	a->st = NULL;
}

int
app_set_device(struct app *a, uint32_t d)
{
	struct sv_error err;
	struct idx_timeline tl;

	sv_error_clear(&err);
	memset(&tl, 0, sizeof tl);
	/* the index holds the timeline (borrowed arrays: owned = 0) */
	if (a->ix != NULL && idx_timeline(a->ix, d) != NULL) {
		tl = *idx_timeline(a->ix, d);
		tl.owned = 0; /* the index frees it */
	} else if (idx_timeline_build(a->snap, d, &tl, &err) != 0) {
		app_msg(a, "device %u: %s", d, err.msg);
		return -1;
	}
	if (a->st != NULL)
		device_free(a);
	/* the views drop what they computed for the old device (view.h) */
	a->dev_gen++;
	a->view.hl = NULL;
	a->view.marks = NULL;
	a->view.n_marks = 0;
	a->view.mark_sel = -2;
	a->tl = tl;
	a->device = d;
	tl_model_init(&a->tm, a->snap, &a->tl, TL_DEFAULT_DRAWN);
	state_open(&a->src, a->ix, a->snap, d, &err);
	a->view.ev0 = 0;
	a->view.ev1 = n_events(a) > 0 ? n_events(a) : 1;
	a->view.sel_elem = TL_NO_ELEM;
	a->view.time_axis = 0;
	a->sv.first = 0;
	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	a->detail = DETAIL_EVENT;
	free(a->stack_match);
	a->stack_match = NULL;
	a->st = NULL;
	app_set_cursor(a, a->tl.peak_ev >= 0 ? a->tl.peak_ev : 0);
	return 0;
}

void
app_close(struct app *a)
{
	if (a->sites_ok > 0)
		an_sites_destroy(&a->sites);
	a->sites_ok = 0;
	if (a->st != NULL || a->tl.elems != NULL)
		device_free(a);
	free(a->stack_match);
	a->stack_match = NULL;
	if (a->ix != NULL)
		idx_close(a->ix);
	else
		snap_free(a->snap);
	a->ix = NULL;
	a->snap = NULL;
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
	if (a->view.cursor < a->view.ev0)
		app_set_cursor(a, a->view.ev0);
	else if (a->view.cursor >= a->view.ev1)
		app_set_cursor(a, a->view.ev1 - 1);
}

static void
jump(struct app *a, enum tl_jump j, int dir, const char *what)
{
	int64_t ev = tl_model_jump(&a->tm, j, a->view.cursor, dir);

	if (ev < -1) {
		app_msg(a, "no %s %s", dir > 0 ? "later" : "earlier", what);
		return;
	}
	app_set_cursor(a, ev);
	a->detail = DETAIL_EVENT;
}

static void
jump_elem(struct app *a, int to_free)
{
	uint64_t e = app_selected_elem(a);
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
	app_set_cursor(a, to_free ? el->free_ev : el->alloc_ev);
	a->view.sel_elem = e;
	a->detail = DETAIL_EVENT;
}

int
app_action(struct app *a, enum action act)
{
	switch (act) {
	case ACT_QUIT: return UI_QUIT;
	case ACT_HELP:
		a->help = !a->help;
		a->help_scroll = 0;
		break;
	case ACT_BACK:
		a->help = 0;
		a->sv.sel_block = SEGMAP_NONE;
		a->detail = DETAIL_EVENT;
		a->view.sel_elem = app_selected_elem(a);
		break;
	case ACT_FOCUS_NEXT: a->focus = (a->focus + 1) % 3; break;
	case ACT_FOCUS_PREV: a->focus = (a->focus + 2) % 3; break;
	case ACT_ZOOM_IN: zoom(a, 1); break;
	case ACT_ZOOM_OUT: zoom(a, 0); break;
	case ACT_FIT:
		a->view.ev0 = 0;
		a->view.ev1 = n_events(a) > 0 ? n_events(a) : 1;
		break;
	case ACT_PAN_LEFT: pan(a, -1); break;
	case ACT_PAN_RIGHT: pan(a, 1); break;
	case ACT_PEAK:
		app_set_cursor(a, a->tl.peak_ev);
		a->detail = DETAIL_EVENT;
		break;
	case ACT_OOM_NEXT: jump(a, TL_JUMP_OOM, 1, "OOM"); break;
	case ACT_OOM_PREV: jump(a, TL_JUMP_OOM, -1, "OOM"); break;
	case ACT_SEG_NEXT: jump(a, TL_JUMP_SEGALLOC, 1, "segment_alloc"); break;
	case ACT_SEG_PREV:
		jump(a, TL_JUMP_SEGALLOC, -1, "segment_alloc");
		break;
	case ACT_SEARCH_NEXT: app_search(a, 1); break;
	case ACT_SEARCH_PREV: app_search(a, -1); break;
	case ACT_JUMP_ALLOC: jump_elem(a, 0); break;
	case ACT_JUMP_FREE: jump_elem(a, 1); break;
	case ACT_FOLD: a->unfold = !a->unfold; break;
	case ACT_ENTER:
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
			if (d != a->device && app_set_device(a, d) == 0)
				app_msg(a, "device %u", d);
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
	case ACT_ALLOC_NEXT:
	case ACT_ALLOC_PREV:
		app_msg(a, "] and [ step through the blocks of a leak site: "
		    "U opens the leak view");
		break;
	case ACT_REDRAW: return UI_HANDLED | UI_RELAYOUT | UI_REDRAW;
	default: return 0;
	}
	return UI_HANDLED | UI_REDRAW;
}

struct an_sites *
app_sites(struct app *a)
{
	struct sv_error err;

	if (a->sites_ok == 0) {
		sv_error_clear(&err);
		a->sites_ok = an_sites_init(&a->sites, a->snap, 1, NULL,
		    &err) == 0 ? 1 : -1;
		if (a->sites_ok < 0)
			app_msg(a, "call sites: %s", err.msg);
	}
	return a->sites_ok > 0 ? &a->sites : NULL;
}

/* ---- search ----------------------------------------------------------- */

static void
prepare_stacks(struct app *a)
{
	const struct snapshot *s = a->snap;
	uint32_t st, i, n, f;
	const uint32_t *fs;

	free(a->stack_match);
	a->stack_match = xcalloc(s->n_stacks + 1, 1);
	for (st = 1; st < s->n_stacks; st++) {
		fs = snap_stack(s, st, &n);
		for (i = 0; i < n; i++) {
			f = fs[i];
			if (f < s->n_frames && (strstr(snap_str(s,
			    s->frames[f].name), a->query) != NULL ||
			    strstr(snap_str(s, s->frames[f].filename),
			    a->query) != NULL)) {
				a->stack_match[st] = 1;
				break;
			}
		}
	}
}

/* Sets the query; decides between an address and frame text. */
void
app_set_query(struct app *a, const char *q)
{
	snprintf(a->query, sizeof a->query, "%s", q);
	a->query_is_addr = (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) &&
	    fmt_parse_u64(q, &a->query_addr) == 0;
	free(a->stack_match);
	a->stack_match = NULL;
	if (!a->query_is_addr)
		prepare_stacks(a);
}

static int
event_matches(struct app *a, const struct snap_trace *t, uint64_t i)
{
	if (a->query_is_addr)
		return snap_ev_addr(t, i) <= a->query_addr &&
		    a->query_addr < snap_ev_addr(t, i) + (snap_ev_size(t, i) > 0 ? snap_ev_size(t, i) : 1);
	return a->stack_match != NULL && snap_ev_stack(t, i) < a->snap->n_stacks &&
	    a->stack_match[snap_ev_stack(t, i)];
}

void
app_search(struct app *a, int dir)
{
	const struct snap_trace *t = snap_trace_of(a->snap, a->device);
	int64_t n, i, k, start;

	if (a->query[0] == '\0') {
		app_msg(a, "no search yet: / starts one");
		return;
	}
	if (t == NULL || t->n == 0)
		return;
	n = (int64_t)t->n;
	start = a->view.cursor < 0 ? 0 : a->view.cursor;
	for (k = 1; k <= n; k++) {
		i = ((start + dir * k) % n + n) % n;
		if (event_matches(a, t, (uint64_t)i)) {
			app_set_cursor(a, i);
			a->detail = DETAIL_EVENT;
			app_msg(a, "/%s: %s%s", a->query,
			    (dir > 0) == (i > start) ? "" : "wrapped, ",
			    a->query_is_addr ? "address" : "frame text");
			return;
		}
	}
	app_msg(a, "/%s: not found", a->query);
}
