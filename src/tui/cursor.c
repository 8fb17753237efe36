/*
 * The shared event cursor and what hangs off it: moving it keeps it
 * visible and fetches the replay state at it, keeps the selected block
 * across moves, and finds the timeline element that is selected or that
 * a block of the state is. Every pane and the loop call in here; nothing
 * in here calls back into a pane, so the panes never form a call cycle
 * with the loop.
 */
#include "config.h"

#include "tui/app.h"

#include "util/sat.h"
#include "util/search.h"

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

/* The cursor at ev (-1 .. n - 1), visible, and the state there. */
static void
move(struct app *a, int64_t ev)
{
	int64_t n = n_events(a), span = a->view.ev1 - a->view.ev0;
	uint64_t seg_addr = UINT64_MAX, blk_addr = UINT64_MAX;

	a->view.cursor = ev;
	a->search_show = 0;
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
	a->view.sel_elem = cursor_selected_elem(a);
}

void
cursor_set(struct app *a, int64_t ev)
{
	int64_t n = n_events(a);

	if (ev >= n)
		ev = n - 1;
	if (ev < 0)
		ev = n > 0 ? 0 : -1;
	move(a, ev);
}

void
cursor_goto(struct app *a, int64_t ev)
{
	if (ev == -1)
		move(a, -1);
	else
		cursor_set(a, ev);
}

void
cursor_replay_moved(struct app *a)
{
	a->st = NULL;
	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	cursor_goto(a, a->view.cursor);
}

uint64_t
cursor_selected_elem(struct app *a)
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

uint64_t
cursor_block_elem(struct app *a, uint64_t addr, int64_t alloc_ev)
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
