/*
 * Element pairing and running totals of the Active Memory Timeline,
 * computed in one forward pass (pairing, totals) and one backward pass
 * (reserved bytes from the final segments). Semantics in idx_timeline.h.
 */
#include "config.h"

#include "index/idx_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "util/sat.h"
#include "util/u64map.h"
#include "util/xalloc.h"

static uint64_t
push_elem(struct idx_timeline *tl, size_t *cap, const struct idx_elem *e)
{
	if (tl->n_elems + 1 > *cap) {
		XGROW(tl->elems, *cap, tl->n_elems + 1);
		xalloc_hint_huge(tl->elems, *cap * sizeof *tl->elems);
	}
	tl->elems[tl->n_elems] = *e;
	return tl->n_elems++;
}

/* The running sum of changes, as tl->total holds it until the base is
 * known: an int64_t, past which a file's sizes (2^64 - 1 bytes in one
 * request) saturate instead of wrapping. */
static uint64_t
sum_stored(__int128 sum)
{
	if (sum > INT64_MAX)
		sum = INT64_MAX;
	if (sum < INT64_MIN)
		sum = INT64_MIN;
	return (uint64_t)(int64_t)sum;
}

/* Forward pass: elements, ev_elem, and in tl->total the sum of the
 * per-event changes up to each event (sum_stored(), read back as int64
 * once the base is known: no separate delta column). */
static void
pair_events(const struct snap_trace *t, struct idx_timeline *tl,
    struct u64map *live, size_t *cap)
{
	uint64_t i;
	__int128 sum = 0, delta;

	for (i = 0; i < tl->n_events; i++) {
		struct idx_elem e;
		uint64_t k;

		delta = 0;
		switch (snap_ev_action(t, i)) {
		case SNAP_ALLOC:
			memset(&e, 0, sizeof e);
			e.addr = snap_ev_addr(t, i);
			e.size = snap_ev_size(t, i);
			e.stream = snap_ev_stream(t, i);
			e.alloc_ev = (int64_t)i;
			e.free_ev = IDX_NO_EVENT;
			e.stack = snap_ev_stack(t, i);
			k = push_elem(tl, cap, &e);
			u64map_put(live, e.addr, k);
			tl->ev_elem[i] = k;
			delta = e.size;
			break;
		case SNAP_FREE_COMPLETED:
			if (u64map_get(live, snap_ev_addr(t, i), &k)) {
				u64map_del(live, snap_ev_addr(t, i));
				tl->elems[k].free_ev = (int64_t)i;
				tl->ev_elem[i] = k;
				delta = -(__int128)tl->elems[k].size;
				break;
			}
			/* freed before any alloc: alive from the start */
			memset(&e, 0, sizeof e);
			e.addr = snap_ev_addr(t, i);
			e.size = snap_ev_size(t, i);
			e.stream = snap_ev_stream(t, i);
			e.alloc_ev = IDX_NO_EVENT;
			e.free_ev = (int64_t)i;
			e.stack = snap_ev_stack(t, i);
			e.flags = IDX_ELEM_PRE;
			tl->ev_elem[i] = push_elem(tl, cap, &e);
			tl->base_total = sv_sat_add(tl->base_total, e.size);
			tl->n_pre++;
			delta = -(__int128)e.size;
			break;
		default:
			break;
		}
		sum += delta;
		tl->total[i] = sum_stored(sum);
	}
}

/* Active blocks of the final state that the trace never allocated. */
static void
add_ghosts(const struct snapshot *s, uint32_t d, struct idx_timeline *tl,
    const struct u64map *live, size_t *cap)
{
	uint32_t i, j, end;

	snap_device_segments(s, d, &i, &end);
	for (; i < end; i++) {
		const struct snap_segment *g = &s->segments[i];

		if (g->device != d)
			continue;
		for (j = 0; j < g->n_blocks; j++) {
			const struct snap_block *b;
			struct idx_elem e;
			uint64_t k;

			if ((uint64_t)g->first_block + j >= s->n_blocks)
				break;
			b = &s->blocks[g->first_block + j];
			if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED ||
			    u64map_get(live, b->addr, &k))
				continue;
			memset(&e, 0, sizeof e);
			e.addr = b->addr;
			e.size = b->requested_size;
			e.stream = g->stream;
			e.alloc_ev = IDX_NO_EVENT;
			e.free_ev = IDX_NO_EVENT;
			e.stack = b->stack;
			e.flags = IDX_ELEM_GHOST;
			push_elem(tl, cap, &e);
			tl->base_total = sv_sat_add(tl->base_total, e.size);
			tl->n_ghost++;
		}
	}
}

/* A byte count clamped to what one can be: [0, 2^64 - 1]. */
static uint64_t
reserved_of(__int128 r)
{
	return r < 0 ? 0 : r > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/* Backward pass: reserved after each event, from the final segments.
 * Sizes are the file's: summed in 128 bits (2^32 segments and 2^36
 * events of 2^64 bytes stay far inside), never through int64_t. */
static void
reserved_pass(const struct snapshot *s, uint32_t d, const struct snap_trace *t,
    struct idx_timeline *tl)
{
	__int128 r = 0;
	uint64_t i;
	uint32_t g, gend;

	snap_device_segments(s, d, &g, &gend);
	for (; g < gend; g++)
		if (s->segments[g].device == d)
			r += s->segments[g].total_size;
	for (i = tl->n_events; i-- > 0;) {
		tl->reserved[i] = reserved_of(r);
		switch (snap_ev_action(t, i)) {
		case SNAP_SEGMENT_ALLOC:
		case SNAP_SEGMENT_MAP:
			r -= snap_ev_size(t, i);
			break;
		case SNAP_SEGMENT_FREE:
		case SNAP_SEGMENT_UNMAP:
			r += snap_ev_size(t, i);
			break;
		default: break;
		}
	}
	tl->base_reserved = reserved_of(r);
}

void
idx_timeline_peak(struct idx_timeline *tl)
{
	uint64_t i, top = 0;
	int64_t top_ev = IDX_NO_EVENT;

	/* memory_viz counts blocks alive before the trace from the start,
	 * so the state before the first event is a candidate too, and the
	 * first: a total that only comes back to it (one `snapshot` entry)
	 * peaks before the trace, not at event 0 */
	for (i = 0; i < tl->n_events; i++) {
		uint64_t v = idx_tl_total(tl, (int64_t)i);

		if (top_ev == IDX_NO_EVENT || v > top) {
			top = v;
			top_ev = (int64_t)i;
		}
	}
	if (top_ev == IDX_NO_EVENT || tl->base_total >= top) {
		tl->peak = tl->base_total;
		tl->peak_ev = IDX_NO_EVENT;
	} else {
		tl->peak = top;
		tl->peak_ev = top_ev;
	}
}

int
idx_timeline_build(const struct snapshot *s, uint32_t d,
    struct idx_timeline *tl, struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct u64map live;
	size_t cap = 0;
	__int128 cur;
	uint64_t i;

	(void)err;
	memset(tl, 0, sizeof *tl);
	tl->owned = 1;
	tl->device = d;
	tl->n_events = t != NULL ? t->n : 0;
	tl->ev_elem = xmalloc((tl->n_events + 1) * sizeof *tl->ev_elem);
	tl->total = xmalloc((tl->n_events + 1) * sizeof *tl->total);
	tl->reserved = xmalloc((tl->n_events + 1) * sizeof *tl->reserved);
	xalloc_hint_huge(tl->ev_elem, (tl->n_events + 1) * sizeof *tl->ev_elem);
	xalloc_hint_huge(tl->total, (tl->n_events + 1) * sizeof *tl->total);
	xalloc_hint_huge(tl->reserved,
	    (tl->n_events + 1) * sizeof *tl->reserved);
	for (i = 0; i < tl->n_events; i++)
		tl->ev_elem[i] = UINT64_MAX;
	u64map_init(&live);
	if (t != NULL)
		pair_events(t, tl, &live, &cap);
	add_ghosts(s, d, tl, &live, &cap);
	u64map_destroy(&live);

	for (i = 0; i < tl->n_events; i++) {
		cur = (__int128)tl->base_total + (int64_t)tl->total[i];
		tl->total[i] = reserved_of(cur);
	}
	idx_timeline_peak(tl);
	reserved_pass(s, d, t, tl);
	return 0;
}

/* Event that created element k (not a ghost): its alloc, or the free of
 * a block allocated before the trace. */
static int64_t
created_at(const struct idx_timeline *tl, uint64_t k)
{
	struct idx_elem e = idx_tl_elem(tl, k);

	return e.alloc_ev >= 0 ? e.alloc_ev : e.free_ev;
}

uint64_t
idx_tl_created(const struct idx_timeline *tl, int64_t i)
{
	uint64_t lo = 0, hi, mid, c, j;

	if (i < 0 || tl->n_events == 0)
		return 0;
	if ((uint64_t)i >= tl->n_events)
		i = (int64_t)tl->n_events - 1;
	if (tl->ev_stripes != NULL) {
		/* the count before i's stripe, then its events up to i: an
		 * event creates the element numbered by the count so far */
		const struct snap_stripeset *bs = tl->ev_stripes;
		const struct snap_stripedir *d = &bs->dir[snap_stripe_find(bs,
		    (uint64_t)i)];
		const uint64_t *ee;

		/* the stripe's column is decoded whole: from its first */
		ee = snap_stripe_at(bs, SNAP_COL_EV_ELEM, d->first, 8);
		c = d->base[2];
		for (j = 0; j <= (uint64_t)i - d->first; j++)
			c += ee[j] == c;
		return c;
	}
	/* elements are numbered in creation order: the first created
	 * after i */
	hi = tl->n_elems - tl->n_ghost;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (created_at(tl, mid) <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
idx_timeline_destroy(struct idx_timeline *tl)
{
	if (tl->owned) {
		free(tl->elems);
		free(tl->ev_elem);
		free(tl->total);
		free(tl->reserved);
	}
	memset(tl, 0, sizeof *tl);
}
