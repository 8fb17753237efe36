/*
 * The backward pass (once per build): undo every event from the last to
 * the first, starting from the final state, to find the state before the
 * first event (replay.c says why that is exact where it matters).
 *
 * Undoing an alloc frees its block and merges it with free neighbours;
 * undoing a free_completed re-creates the block inside the free run the
 * free merged into, guessing its size by the allocator's own rules (and
 * the sizes a forward pass proved, r->fix); undoing segment events adds
 * and removes segments. On the way it learns, for every alloc whose
 * block survives to the end, its exact block size, and for every
 * segment_alloc / segment_map the attributes of the segment it made.
 *
 * Whether a re-created block was allocated or pending free (a
 * free_requested came before its free_completed) is decided by the
 * event before the free_completed at the same address among alloc,
 * free_requested and free_completed: pending iff it is a free_requested.
 * The pass meets that event later (it goes backward), so the block is
 * re-created allocated and UNSURE; the next of those events undone at
 * its address settles it: a free_requested finds the block as if it had
 * been pending (and leaves it allocated, as undoing the request of a
 * pending block does), an alloc or a free_completed finds it allocated.
 * Nothing else tells the two states apart while it is unsure (the other
 * undo steps ask only whether a block is free), and an unsure block left
 * at the start had no such event before it: allocated, as it is. This
 * saves a forward pass over the trace with a map of the requests in
 * flight.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "replay/replay_int.h"
#include "util/sat.h"
#include "util/stop.h"
#include "util/xalloc.h"

/* pad[0] of a block during the backward pass */
#define GUESSED 0x1   /* made by undoing a free_completed: size guessed */
#define UNSURE 0x2    /* the same, and allocated or pending free: no event
			 at its address undone since tells which */

static void
learn_size(struct replay *r, uint64_t ev, uint64_t size)
{
	if (r->n_learned == r->cap_learned)
		r->learned = xgrow(r->learned, &r->cap_learned,
		    r->n_learned + 1, sizeof *r->learned);
	r->learned[r->n_learned].ev = ev;
	r->learned[r->n_learned].size = size;
	r->n_learned++;
}

static void
learn_attrs(struct replay *r, uint64_t ev, const struct rseg *sg)
{
	replay_segattr_push(&r->attrs, &r->n_attrs, &r->cap_attrs, ev, sg);
}

/* The block starting exactly at a and its segment, or NULL. */
static struct rblk *
block_at(const struct rstate *st, uint64_t a, struct rseg **psg)
{
	struct rblk *b = rblk_at(st, a);

	*psg = b != NULL ? rblk_seg(st, b) : NULL;
	return b;
}

static int
bwd_alloc(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	struct rseg *sg;
	struct rblk *b = block_at(st, e->addr, &sg);

	if (b == NULL || b->b.state == SNAP_BLOCK_INACTIVE)
		return -1;
	if (!(b->b.pad[0] & GUESSED))
		learn_size(r, i, b->b.size);
	rblk_free_init(&b->b, b->b.addr, b->b.size, -1);
	rblk_merge(st, sg, b, -1);
	return 0;
}

static int
bwd_free_requested(struct rstate *st, const struct rev *e)
{
	struct rblk *b = rblk_at(st, e->addr);

	if (b == NULL)
		return -1;
	if (b->b.state == SNAP_BLOCK_ACTIVE_ALLOCATED && (b->b.pad[0] & UNSURE))
		b->b.pad[0] &= (uint8_t)~UNSURE;   /* it was pending */
	else if (b->b.state != SNAP_BLOCK_ACTIVE_PENDING_FREE)
		return -1;
	b->b.state = SNAP_BLOCK_ACTIVE_ALLOCATED;
	return 0;
}

/* A guessed pre-trace block b took the whole free run, but a block
 * started at a inside it: the guess was too large; it ends at a. Returns
 * the free block now at a. */
static struct rblk *
shrink_guess(struct rstate *st, const struct rseg *sg, struct rblk *b,
    uint64_t a)
{
	uint64_t end = b->b.addr + b->b.size;
	struct replay_block f;
	struct rblk *nb;

	b->b.size = a - b->b.addr;
	rblk_free_init(&f, a, end - a, -1);
	nb = rblk_add(st, &f);
	return rblk_merge(st, sg, nb, -1);
}

static int
bwd_free_completed(struct replay *r, struct rstate *st, const struct rev *e)
{
	uint64_t a = e->addr, req = e->size;
	uint64_t avail, bs;
	struct rblk *b = rblk_find(st, a), *x;
	struct rseg *sg;
	const struct fix *fx;
	struct replay_block f;

	if (b == NULL || (sg = rblk_seg(st, b)) == NULL)
		return -1;
	/* an unsure block here was allocated: this free comes before it */
	if (b->b.addr == a)
		b->b.pad[0] &= (uint8_t)~UNSURE;
	if (b->b.state != SNAP_BLOCK_INACTIVE && (b->b.pad[0] & GUESSED) &&
	    b->b.addr < a)
		b = shrink_guess(st, sg, b, a);
	if (b->b.state != SNAP_BLOCK_INACTIVE)
		return -1;
	f = b->b;
	if (f.addr < a)
		b->b.size = a - f.addr;
	avail = f.addr + f.size - a;
	bs = replay_split_size(sg, replay_rounded(r, req), avail);
	if ((fx = replay_fix_find(r, a)) != NULL && fx->size > bs)
		bs = fx->size < avail ? fx->size : avail;
	/* both new blocks split b's old range: added next to it, filled
	 * in place */
	if (bs < avail && (x = rblk_new_after(st, b, a + bs)) != NULL)
		rblk_free_init(&x->b, a + bs, avail - bs, -1);
	if (f.addr < a)
		b = rblk_new_after(st, b, a);
	if (b != NULL) {
		memset(&b->b, 0, sizeof b->b);
		b->b.addr = a;
		b->b.size = bs;
		b->b.requested_size = req < bs ? req : bs;
		b->b.stack = e->stack;
		b->b.state = SNAP_BLOCK_ACTIVE_ALLOCATED;
		b->b.alloc_ev = -1;
		b->b.last_ev = -1;
		b->b.pad[0] = GUESSED | UNSURE;
	}
	return 0;
}

/* Removes segment sg and its blocks. */
static void
drop_segment(struct rstate *st, struct rseg *sg)
{
	struct rblk *b;

	while ((b = rblk_first(st, sg)) != NULL)
		rblk_del(st, b);
	rseg_del(st, sg);
}

static int
bwd_segment_alloc(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	struct rseg *sg = rseg_find(st, e->addr);

	if (sg == NULL || sg->hdr.addr != e->addr)
		return -1;
	learn_attrs(r, i, sg);
	drop_segment(st, sg);
	return 0;
}

static int
bwd_segment_free(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr, size = e->size;
	struct replay_block b;
	struct rseg *sg;
	int64_t pool[2];

	if (size == 0 || sv_span_wraps(a, size) || rseg_overlaps(st, a, size))
		return -1;
	sg = rseg_add(st, a, size);
	/* no segattr has event UINT64_MAX: the attributes are guessed */
	replay_seg_attrs(r, sg, UINT64_MAX, e->stream, 0);
	/* but the pool is the event's own when it names one (2.14) */
	if (r->t != NULL && snap_ev_pool(r->s, r->t, i, pool)) {
		sg->hdr.pool_id[0] = pool[0];
		sg->hdr.pool_id[1] = pool[1];
	}
	rblk_free_init(&b, a, size, -1);
	rblk_add(st, &b);
	return 0;
}

static int
bwd_segment_map(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	struct rseg *sg = rseg_find(st, e->addr);

	if (sg == NULL)
		return -1;
	learn_attrs(r, i, sg);
	return replay_range_remove(r, st, i, e->addr,
	    e->size);
}

static int
bwd_segment_unmap(struct replay *r, struct rstate *st, const struct rev *e)
{
	return replay_range_add(r, st, UINT64_MAX, e->addr,
	    e->size, e->stream);
}

/* learned / attrs were appended in decreasing event order */
static void
reverse_learned(struct replay *r)
{
	uint64_t i;

	for (i = 0; i < r->n_learned / 2; i++) {
		struct learned x = r->learned[i];

		r->learned[i] = r->learned[r->n_learned - 1 - i];
		r->learned[r->n_learned - 1 - i] = x;
	}
	for (i = 0; i < r->n_attrs / 2; i++) {
		struct segattr x = r->attrs[i];

		r->attrs[i] = r->attrs[r->n_attrs - 1 - i];
		r->attrs[r->n_attrs - 1 - i] = x;
	}
}

void
replay_count_action(struct replay_info *info, unsigned action)
{
	switch (action) {
	case SNAP_ALLOC: case SNAP_FREE_REQUESTED: case SNAP_FREE_COMPLETED:
	case SNAP_SEGMENT_ALLOC: case SNAP_SEGMENT_FREE:
	case SNAP_SEGMENT_MAP: case SNAP_SEGMENT_UNMAP: break;
	case SNAP_OOM: info->n_oom++; break;
	case SNAP_SNAPSHOT: info->n_snapshot++; break;
	case SNAP_WORKSPACE_SNAPSHOT:
	case SNAP_ANNOTATE: break; /* metadata, no allocator change */
	default: info->n_unknown++; break;
	}
}

int
replay_backward(struct replay *r, struct rstate *st)
{
	struct rseg *sg;
	struct rblk *b;
	struct evs es;
	uint64_t i;

	evs_open(&es, r->t, r->n, 1);
	for (i = r->n; i-- > 0;) {
		const struct rev *e;
		int rc = 0;

		if (sv_stop_poll(r->n - 1 - i)) {
			evs_close(&es);
			return -1;
		}
		e = evs_get(&es, i);
		switch (e->action) {
		case SNAP_ALLOC:
			rc = bwd_alloc(r, st, i, e);
			break;
		case SNAP_FREE_REQUESTED:
			rc = bwd_free_requested(st, e);
			break;
		case SNAP_FREE_COMPLETED:
			rc = bwd_free_completed(r, st, e);
			break;
		case SNAP_SEGMENT_ALLOC:
			rc = bwd_segment_alloc(r, st, i, e);
			break;
		case SNAP_SEGMENT_FREE:
			rc = bwd_segment_free(r, st, i, e);
			break;
		case SNAP_SEGMENT_MAP:
			rc = bwd_segment_map(r, st, i, e);
			break;
		case SNAP_SEGMENT_UNMAP:
			rc = bwd_segment_unmap(r, st, e);
			break;
		default: replay_count_action(&r->info, e->action); break;
		}
		if (rc < 0)
			r->info.n_undo_anomalies++;
	}
	evs_close(&es);
	reverse_learned(r);
	for (b = avl_first(&st->blk); b != NULL; b = avl_next(b)) {
		b->b.pad[0] = 0;
		b->b.last_ev = -1;
	}
	for (sg = rseg_first(st); sg != NULL; sg = rseg_next(sg)) {
		sg->hdr.last_ev = -1;
		sg->dirty = 1;
	}
	st->at = -1;
	return 0;
}
