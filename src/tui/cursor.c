/*
 * The shared event cursor and what hangs off it: the replay state at the
 * cursor, the selected block kept across moves, the status message, and
 * the categories and call sites built once on first use. Every pane and
 * the loop call in here; nothing in here calls back into a pane, so the
 * panes never form a call cycle with the loop (app.c).
 */
#include "config.h"

#include "tui/app.h"

#include <stdarg.h>
#include <stdio.h>

#include "index/idx.h"
#include "tui/modeworker.h"
#include "util/sat.h"
#include "util/search.h"

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

struct seg_bound {
	const struct replay_state *st;
	uint64_t addr;
};

/* Segments (sorted by address) that end at or before addr. */
static int
seg_ends_below(const void *ctx, uint64_t i)
{
	const struct seg_bound *b = ctx;
	const struct replay_segment *sg = &b->st->segments[i];

	/* not addr + size <= b->addr: a hostile segment's sum can wrap */
	return sv_span_ends_by(sg->addr, sg->size, b->addr);
}

/* Re-finds the selected block by address in the new state. */
static void
reselect(struct app *a, uint64_t seg_addr, uint64_t blk_addr)
{
	const struct replay_state *st = a->st;
	struct seg_bound sb = {st, seg_addr};
	uint32_t lo, b;

	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	if (seg_addr == UINT64_MAX)
		return;
	lo = (uint32_t)sv_partition(0, st->n_segments, seg_ends_below, &sb);
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
	replay_totals(a->st, &a->totals);
	reselect(a, seg_addr, blk_addr);
	a->view.sel_elem = app_selected_elem(a);
}

void
app_replay_moved(struct app *a)
{
	a->st = NULL;
	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	app_set_cursor(a, a->view.cursor);
}

uint64_t
app_selected_elem(struct app *a)
{
	int64_t c = a->view.cursor;
	const struct snap_trace *t;

	if (a->detail == DETAIL_BLOCK && a->sv.sel_block != SEGMAP_NONE &&
	    a->sv.sel_block < a->st->n_blocks)
		return tl_model_find_elem(&a->tm, a->st->blocks[a->sv.sel_block]
		    .addr, c);
	if (c >= 0 && (uint64_t)c < a->tl.n_events &&
	    idx_tl_ev_elem(&a->tl, c) < a->tl.n_elems)
		return idx_tl_ev_elem(&a->tl, c);
	/* a free_requested event belongs to the allocation it frees, which
	 * stays alive until its free_completed */
	if (c >= 0 && (uint64_t)c < a->tl.n_events &&
	    (t = snap_trace_of(a->snap, a->device)) != NULL &&
	    (uint64_t)c < t->n &&
	    snap_ev_action(t, (uint64_t)c) == SNAP_FREE_REQUESTED)
		return tl_model_find_elem(&a->tm, snap_ev_addr(t, (uint64_t)c),
		    c);
	return TL_NO_ELEM;
}

const struct an_categories *
app_categories(struct app *a)
{
	struct sv_error err;

	if (a->cats_ok == 0 && modeworker_pending(a, TL_STACK_CATEGORY)) {
		/* the worker builds the table: no sooner done here */
		modeworker_wait(a, TL_STACK_CATEGORY);
		modeworker_take(a);
	}
	if (a->cats_ok == 0) {
		sv_error_clear(&err);
		a->cats_ok = an_categories_build(a->snap, &a->tl, NULL,
		    a->cat_rules, &a->cats, &err) == 0 ? 1 : -1;
		if (a->cats_ok < 0)
			app_msg(a, "categories: %s", err.msg);
	}
	return a->cats_ok > 0 ? &a->cats : NULL;
}

const struct an_categories *
app_categories_if_ready(struct app *a)
{
	/* the worker's table is on its way, and the screen is drawn again
	 * when it comes */
	if (a->cats_ok == 0 && !a->wait_bands &&
	    modeworker_pending(a, TL_STACK_CATEGORY))
		return NULL;
	return app_categories(a);
}

uint64_t
app_block_elem(struct app *a, uint64_t addr, int64_t alloc_ev)
{
	uint64_t e = TL_NO_ELEM;

	/* the element its alloc event starts (O(1)); by address for a
	 * block allocated before the trace */
	if (alloc_ev >= 0 && (uint64_t)alloc_ev < a->tl.n_events)
		e = idx_tl_ev_elem(&a->tl, (uint64_t)alloc_ev);
	if (e >= a->tl.n_elems)
		e = tl_model_find_elem(&a->tm, addr, a->view.cursor);
	return e < a->tl.n_elems ? e : TL_NO_ELEM;
}

int
app_block_category(struct app *a, uint64_t addr, int64_t alloc_ev)
{
	const struct an_categories *c = app_categories(a);
	uint64_t e;

	if (c == NULL)
		return -1;
	e = app_block_elem(a, addr, alloc_ev);
	return e == TL_NO_ELEM ? AN_CAT_OTHER : (int)an_category_of(c, e);
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
