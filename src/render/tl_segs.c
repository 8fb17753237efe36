/*
 * Segment elements for the segment timeline: live mapped ranges kept in
 * an ordered map by start address (util/avl.h: no input order can
 * unbalance it). See tl_segs.h.
 */
#include "config.h"

#include "render/tl_segs.h"

#include <stdlib.h>
#include <string.h>

#include "util/avl.h"
#include "util/stop.h"
#include "util/xalloc.h"

/* A live range, in the map by its start address. */
struct live {
	struct avl_node node;  /* key: start */
	uint64_t end;          /* [start, end) */
	uint64_t elem;
};

struct build {
	struct tl_segs *out;
	size_t cap;
	struct avl live;
};

/* The live range that holds address p, or NULL. */
static struct live *
live_at(const struct build *B, uint64_t p)
{
	struct live *x = avl_le(&B->live, p);

	return x != NULL && x->end > p ? x : NULL;
}

/* Where the gap at p (no live range holds p) ends, at most at end: the
 * next live range's start. */
static uint64_t
gap_end(const struct build *B, uint64_t p, uint64_t end)
{
	const struct live *x = avl_ge(&B->live, p);

	return x != NULL && avl_key(x) < end ? avl_key(x) : end;
}

/* Range [start, end) of element elem is live from event ev on; a live
 * range at the same start ends there (an inconsistent file maps one
 * address twice, or overlapping ranges). */
static void
live_add(struct build *B, uint64_t start, uint64_t end, uint64_t elem,
    int64_t ev)
{
	struct live *x = avl_find(&B->live, start);

	if (x != NULL)
		B->out->elems[x->elem].free_ev = ev;
	else
		x = avl_insert(&B->live, start);
	x->end = end;
	x->elem = elem;
}

static uint64_t
push(struct build *B, uint64_t addr, uint64_t size, uint64_t stream,
    int64_t alloc_ev, int64_t free_ev, uint32_t stack, uint32_t flags)
{
	struct tl_segs *o = B->out;
	struct idx_elem *e;

	XGROW(o->elems, B->cap, o->n + 1);
	e = &o->elems[o->n];
	memset(e, 0, sizeof *e);
	e->addr = addr;
	e->size = size;
	e->stream = stream;
	e->alloc_ev = alloc_ev;
	e->free_ev = free_ev;
	e->stack = stack;
	e->flags = flags;
	return o->n++;
}

/* A range starts at event i: a live range at the same start ends first
 * (an inconsistent file maps one address twice). */
static void
seg_start(struct build *B, const struct snap_trace *t, uint64_t i)
{
	uint64_t a = snap_ev_addr(t, i), sz = snap_ev_size(t, i), e;

	if (sz == 0 || a + sz < a)
		return;
	e = push(B, a, sz, snap_ev_stream(t, i), (int64_t)i, -1,
	    snap_ev_stack(t, i), 0);
	live_add(B, a, a + sz, e, (int64_t)i);
}

/* Event i frees or unmaps [a, a + sz): every live range it covers ends
 * (the parts outside stay as new elements), every gap was mapped before
 * the trace. */
static void
seg_end(struct build *B, const struct snap_trace *t, uint64_t i)
{
	uint64_t a = snap_ev_addr(t, i), sz = snap_ev_size(t, i);
	uint64_t end = a + sz, p = a, stream = snap_ev_stream(t, i), q;
	uint32_t stack = snap_ev_stack(t, i);
	struct live *x;

	if (end < a)
		end = UINT64_MAX;
	if (sz == 0) {
		/* a free without size: the whole range that starts there */
		if ((x = avl_find(&B->live, a)) == NULL)
			return;
		end = x->end;
	}
	while (p < end) {
		if ((x = live_at(B, p)) != NULL) {
			uint64_t n_start = avl_key(x), n_end = x->end;
			const struct idx_elem *n = &B->out->elems[x->elem];
			uint64_t n_stream = n->stream;
			uint32_t n_stack = n->stack;

			B->out->elems[x->elem].free_ev = (int64_t)i;
			avl_remove(&B->live, x);
			if (n_start < p)
				live_add(B, n_start, p, push(B, n_start,
				    p - n_start, n_stream, (int64_t)i, -1,
				    n_stack, 0), (int64_t)i);
			if (n_end > end)
				live_add(B, end, n_end, push(B, end,
				    n_end - end, n_stream, (int64_t)i, -1,
				    n_stack, 0), (int64_t)i);
			p = n_end < end ? n_end : end;
			continue;
		}
		q = gap_end(B, p, end);
		push(B, p, q - p, stream, -1, (int64_t)i, stack,
		    IDX_ELEM_PRE);
		B->out->n_pre++;
		p = q;
	}
}

/* Parts of final segment [a, end) that no live range covers: mapped
 * before the trace and never changed by it. */
static void
seg_ghost(struct build *B, uint64_t a, uint64_t end, uint64_t stream,
    uint32_t stack)
{
	uint64_t p = a, q;
	const struct live *x;

	while (p < end) {
		if ((x = live_at(B, p)) != NULL) {
			p = x->end;
			continue;
		}
		q = gap_end(B, p, end);
		push(B, p, q - p, stream, -1, -1, stack, IDX_ELEM_GHOST);
		B->out->n_ghost++;
		p = q;
	}
}

void
tl_segs_build(struct tl_segs *out, const struct snapshot *s, uint32_t d,
    const struct snap_trace *t, const int64_t *evs, uint64_t n)
{
	struct build B;
	uint64_t i, j;
	uint32_t g, gend;

	memset(out, 0, sizeof *out);
	memset(&B, 0, sizeof B);
	B.out = out;
	avl_init(&B.live, sizeof(struct live));
	for (j = 0; t != NULL && j < n; j++) {
		if (sv_stop_poll(j))
			break; /* the caller throws out what it gets */
		if ((i = (uint64_t)evs[j]) >= t->n)
			continue;
		switch (snap_ev_action(t, i)) {
		case SNAP_SEGMENT_ALLOC:
		case SNAP_SEGMENT_MAP: seg_start(&B, t, i); break;
		case SNAP_SEGMENT_FREE:
		case SNAP_SEGMENT_UNMAP: seg_end(&B, t, i); break;
		default: break;
		}
	}
	snap_device_segments(s, d, &g, &gend);
	for (; g < gend && g < s->n_segments; g++) {
		const struct snap_segment *sg = &s->segments[g];
		uint64_t end = sg->addr + sg->total_size;

		if (sg->device != d || sg->total_size == 0)
			continue;
		seg_ghost(&B, sg->addr, end < sg->addr ? UINT64_MAX : end,
		    sg->stream, sg->stack);
	}
	avl_destroy(&B.live);
}

void
tl_segs_destroy(struct tl_segs *sg)
{
	free(sg->elems);
	memset(sg, 0, sizeof *sg);
}
