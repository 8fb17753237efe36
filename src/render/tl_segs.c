/*
 * Segment elements for the segment timeline: live mapped ranges kept in a
 * treap by start address (priorities from a counter hash, so no input
 * order can unbalance it). See tl_segs.h.
 */
#include "config.h"

#include "render/tl_segs.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define NIL UINT32_MAX

struct node {
	uint64_t start, end;  /* [start, end) */
	uint64_t elem;
	uint32_t pri, l, r;
};

struct treap {
	struct node *nd;
	size_t cap;
	uint32_t n, root, free_list;
};

struct build {
	struct tl_segs *out;
	size_t cap;
	struct treap tr;
	uint32_t seq;
};

static uint32_t
mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* Splits t into keys < key (*a) and keys >= key (*b). */
static void
split(struct node *nd, uint32_t t, uint64_t key, uint32_t *a, uint32_t *b)
{
	if (t == NIL) {
		*a = *b = NIL;
		return;
	}
	if (nd[t].start < key) {
		split(nd, nd[t].r, key, &nd[t].r, b);
		*a = t;
	} else {
		split(nd, nd[t].l, key, a, &nd[t].l);
		*b = t;
	}
}

static uint32_t
merge(struct node *nd, uint32_t a, uint32_t b)
{
	if (a == NIL)
		return b;
	if (b == NIL)
		return a;
	if (nd[a].pri > nd[b].pri) {
		nd[a].r = merge(nd, nd[a].r, b);
		return a;
	}
	nd[b].l = merge(nd, a, nd[b].l);
	return b;
}

static void
tr_insert(struct build *B, uint64_t start, uint64_t end, uint64_t elem)
{
	struct treap *tr = &B->tr;
	uint32_t x, a, b;

	if (tr->free_list != NIL) {
		x = tr->free_list;
		tr->free_list = tr->nd[x].l;
	} else {
		XGROW(tr->nd, tr->cap, (size_t)tr->n + 1);
		x = tr->n++;
	}
	tr->nd[x].start = start;
	tr->nd[x].end = end;
	tr->nd[x].elem = elem;
	tr->nd[x].pri = mix32(++B->seq);
	tr->nd[x].l = tr->nd[x].r = NIL;
	split(tr->nd, tr->root, start, &a, &b);
	tr->root = merge(tr->nd, merge(tr->nd, a, x), b);
}

/* Removes the node that starts at start (it exists). */
static void
tr_erase(struct treap *tr, uint64_t start)
{
	uint32_t a, b, m, c;

	split(tr->nd, tr->root, start, &a, &b);
	/* b's smallest key is start: cut it off */
	split(tr->nd, b, start + 1, &m, &c);
	if (m != NIL) {
		/* keys are unique, so m is one node */
		tr->nd[m].l = tr->free_list;
		tr->free_list = m;
	}
	tr->root = merge(tr->nd, a, c);
}

/* The node with the largest start <= p, or NIL. */
static uint32_t
tr_floor(const struct treap *tr, uint64_t p)
{
	uint32_t t = tr->root, best = NIL;

	while (t != NIL) {
		if (tr->nd[t].start <= p) {
			best = t;
			t = tr->nd[t].r;
		} else
			t = tr->nd[t].l;
	}
	return best;
}

/* The node with the smallest start > p, or NIL. */
static uint32_t
tr_after(const struct treap *tr, uint64_t p)
{
	uint32_t t = tr->root, best = NIL;

	while (t != NIL) {
		if (tr->nd[t].start > p) {
			best = t;
			t = tr->nd[t].l;
		} else
			t = tr->nd[t].r;
	}
	return best;
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
	uint32_t x;

	if (sz == 0 || a + sz < a)
		return;
	x = tr_floor(&B->tr, a);
	if (x != NIL && B->tr.nd[x].start == a) {
		B->out->elems[B->tr.nd[x].elem].free_ev = (int64_t)i;
		tr_erase(&B->tr, a);
	}
	e = push(B, a, sz, snap_ev_stream(t, i), (int64_t)i, -1,
	    snap_ev_stack(t, i), 0);
	tr_insert(B, a, a + sz, e);
}

/* Event i frees or unmaps [a, a + sz): every live range it covers ends
 * (the parts outside stay as new elements), every gap was mapped before
 * the trace. */
static void
seg_end(struct build *B, const struct snap_trace *t, uint64_t i)
{
	uint64_t a = snap_ev_addr(t, i), sz = snap_ev_size(t, i);
	uint64_t end = a + sz, p = a, stream = snap_ev_stream(t, i);
	uint32_t stack = snap_ev_stack(t, i), x;

	if (end < a)
		end = UINT64_MAX;
	if (sz == 0) {
		/* a free without size: the whole range that starts there */
		x = tr_floor(&B->tr, a);
		if (x == NIL || B->tr.nd[x].start != a)
			return;
		end = B->tr.nd[x].end;
	}
	while (p < end) {
		x = tr_floor(&B->tr, p);
		if (x != NIL && B->tr.nd[x].end > p) {
			struct node n = B->tr.nd[x];

			B->out->elems[n.elem].free_ev = (int64_t)i;
			tr_erase(&B->tr, n.start);
			if (n.start < p)
				tr_insert(B, n.start, p, push(B, n.start,
				    p - n.start, B->out->elems[n.elem].stream,
				    (int64_t)i, -1, B->out->elems[n.elem].stack,
				    0));
			if (n.end > end)
				tr_insert(B, end, n.end, push(B, end,
				    n.end - end, B->out->elems[n.elem].stream,
				    (int64_t)i, -1, B->out->elems[n.elem].stack,
				    0));
			p = n.end < end ? n.end : end;
			continue;
		}
		x = tr_after(&B->tr, p);
		{
			uint64_t q = x != NIL && B->tr.nd[x].start < end ?
			    B->tr.nd[x].start : end;

			push(B, p, q - p, stream, -1, (int64_t)i, stack,
			    IDX_ELEM_PRE);
			B->out->n_pre++;
			p = q;
		}
	}
}

/* Parts of final segment [a, end) that no live range covers: mapped
 * before the trace and never changed by it. */
static void
seg_ghost(struct build *B, uint64_t a, uint64_t end, uint64_t stream,
    uint32_t stack)
{
	uint64_t p = a;
	uint32_t x;

	while (p < end) {
		x = tr_floor(&B->tr, p);
		if (x != NIL && B->tr.nd[x].end > p) {
			p = B->tr.nd[x].end;
			continue;
		}
		x = tr_after(&B->tr, p);
		{
			uint64_t q = x != NIL && B->tr.nd[x].start < end ?
			    B->tr.nd[x].start : end;

			push(B, p, q - p, stream, -1, -1, stack,
			    IDX_ELEM_GHOST);
			B->out->n_ghost++;
			p = q;
		}
	}
}

void
tl_segs_build(struct tl_segs *out, const struct snapshot *s, uint32_t d,
    const struct snap_trace *t)
{
	struct build B;
	uint64_t i;
	uint32_t g, gend;

	memset(out, 0, sizeof *out);
	memset(&B, 0, sizeof B);
	B.out = out;
	B.tr.root = B.tr.free_list = NIL;
	for (i = 0; t != NULL && i < t->n; i++) {
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
	free(B.tr.nd);
}

void
tl_segs_destroy(struct tl_segs *sg)
{
	free(sg->elems);
	memset(sg, 0, sizeof *sg);
}
