/*
 * The forward pass: one event applied to a state, as the caching
 * allocator did it (replay.c says how the start state is found). An
 * alloc takes the lowest part of the free block at its address, of the
 * size the backward pass learned if known, else round_size +
 * should_split on the free block it finds; free_requested marks the
 * block pending; free_completed frees and merges; segment_alloc/free add
 * and remove segments; segment_map/unmap grow, shrink, split and merge
 * expandable runs (one segment per contiguous mapped run, as the
 * snapshot shows them). Events that do not fit the state are counted as
 * anomalies (check reports them), never fatal, and change nothing that
 * would break the state's invariants (rstate.h).
 *
 * Every step that changes the state records its pre-image in the undo
 * log first (replay_log.h), when the log is on.
 */
#include "config.h"

#include <string.h>

#include "replay/replay_int.h"
#include "replay/replay_round.h"
#include "util/sat.h"
#include "util/search.h"
#include "util/xalloc.h"

#define MIB (1024ull * 1024)
#define SMALL_SEG (2 * MIB)
#define ALIGN_QUIRK 16384

#define ANOM(r, i, addr, ...)                                                  \
	do {                                                                   \
		if ((r)->collect)                                              \
			replay_issue_add(&(r)->fwd_issues, &(r)->n_fwd_issues, \
			    &(r)->n_fwd_kept, (int64_t)(i), (addr),            \
			    __VA_ARGS__);                                      \
	} while (0)

/* ---- sizes --------------------------------------------------------------- */

uint64_t
replay_rounded(const struct replay *r, uint64_t req)
{
	return replay_round_size(r->npu_round ? REPLAY_ROUND_NPU
					      : REPLAY_ROUND_CUDA, req);
}

/* Size the allocator gives a request of rounded size rs from a free block
 * of avail bytes (doc/snapshot-format.md §13.4 step 8). */
uint64_t
replay_split_size(const struct rseg *sg, uint64_t rs, uint64_t avail)
{
	uint64_t rem;

	if (rs >= avail)
		return avail;
	rem = avail - rs;
	if (!sg->hdr.is_large || sg->hdr.is_expandable)
		return rem >= 512 ? rs : avail;
	return rem > MIB ? rs : avail;
}

/* learned[] and attrs[] ascend by event; each record starts with it
 * (and fin[] by address, which it starts with). */
struct by_ev {
	const void *base;
	size_t stride;
	uint64_t ev;
};

static int
ev_below(const void *ctx, uint64_t i)
{
	const struct by_ev *b = ctx;

	return *(const uint64_t *)((const char *)b->base + i * b->stride) <
	    b->ev;
}

/* 1 when i is where ev goes in learned[] (the first entry at or after
 * it). */
static int
learned_at(const struct replay *r, uint64_t i, uint64_t ev)
{
	return i <= r->n_learned && (i == 0 || r->learned[i - 1].ev < ev) &&
	    (i == r->n_learned || r->learned[i].ev >= ev);
}

static const struct learned *
learned_find(struct replay *r, uint64_t ev)
{
	struct by_ev b = {r->learned, sizeof *r->learned, ev};
	uint64_t i = r->learned_near;

	/* a pass asks in event order: where the last lookup ended, or one
	 * entry on; a seek anywhere else searches */
	if (!learned_at(r, i, ev)) {
		if (learned_at(r, i + 1, ev))
			i++;
		else
			i = sv_partition(0, r->n_learned, ev_below, &b);
	}
	r->learned_near = i;
	return i < r->n_learned && r->learned[i].ev == ev ? &r->learned[i]
							  : NULL;
}

const struct segattr *
replay_attr_find(const struct replay *r, uint64_t ev)
{
	struct by_ev b = {r->attrs, sizeof *r->attrs, ev};
	uint64_t i = sv_partition(0, r->n_attrs, ev_below, &b);

	return i < r->n_attrs && r->attrs[i].ev == ev ? &r->attrs[i] : NULL;
}

void
replay_segattr_push(struct segattr **v, uint64_t *n, size_t *cap,
    uint64_t ev, const struct rseg *sg)
{
	struct segattr *a;

	if (*n == *cap)
		*v = xgrow(*v, cap, *n + 1, sizeof **v);
	a = &(*v)[(*n)++];
	memset(a, 0, sizeof *a);
	a->ev = ev;
	a->pool[0] = sg->hdr.pool_id[0];
	a->pool[1] = sg->hdr.pool_id[1];
	a->stack = sg->hdr.stack;
	a->is_large = sg->hdr.is_large;
	a->is_expandable = sg->hdr.is_expandable;
}

int
replay_segment_attr(const struct replay *r, uint64_t ev, int64_t pool[2],
    int *is_large)
{
	const struct segattr *a = replay_attr_find(r, ev);

	if (a == NULL)
		return 0;
	pool[0] = a->pool[0];
	pool[1] = a->pool[1];
	*is_large = a->is_large;
	return 1;
}

/* The attributes of the final segment just where sg is, of its size, in
 * r->fin (an early pass's), or NULL. */
static const struct segattr *
fin_find(const struct replay *r, const struct rseg *sg)
{
	/* each starts with its address, as a segattr with its event */
	struct by_ev b = {r->fin, sizeof *r->fin, sg->hdr.addr};
	uint64_t lo = sv_partition(0, r->n_fin, ev_below, &b);

	return lo < r->n_fin && r->fin[lo].addr == sg->hdr.addr &&
	    r->fin[lo].size == sg->hdr.size ? &r->fin[lo].a : NULL;
}

static void
seen_add(struct replay *r, uint64_t ev, const struct rseg *sg, int final)
{
	replay_segattr_push(&r->seen, &r->n_seen, &r->cap_seen, ev, sg);
	r->seen[r->n_seen - 1].final = (uint8_t)final;
}

/* Guess: a small-pool segment is 2 MiB (kSmallBuffer); a large request
 * never gets one (doc/snapshot-format.md §13.4 step 3). Expandable
 * pages: 2 MiB small, 20 MiB large. */
static int
guess_large(uint64_t size, int expandable)
{
	return expandable ? size % (20 * MIB) == 0 : size != SMALL_SEG;
}

int
replay_seg_guessed(const struct rseg *sg)
{
	return sg->hdr.pool_id[0] == 0 && sg->hdr.pool_id[1] == 0 &&
	    sg->hdr.stack == 0 && !sg->hdr.is_expandable &&
	    sg->hdr.is_large == guess_large(sg->hdr.size, 0);
}

void
replay_seg_attrs(struct replay *r, struct rseg *sg, uint64_t ev,
    uint64_t stream, int expandable)
{
	const struct segattr *a = replay_attr_find(r, ev);
	int final = 0;

	if (a == NULL && r->n_fin > 0 && !expandable &&
	    (a = fin_find(r, sg)) != NULL)
		final = 1;
	sg->hdr.stream = stream;
	if (a != NULL) {
		sg->hdr.pool_id[0] = a->pool[0];
		sg->hdr.pool_id[1] = a->pool[1];
		sg->hdr.stack = a->stack;
		sg->hdr.is_large = a->is_large;
		sg->hdr.is_expandable = a->is_expandable;
		if (r->seen_on)
			seen_add(r, ev, sg, final);
		return;
	}
	/* the event's own pool_id (2.14), when the trace has one */
	if (r->t != NULL && ev < r->t->n) {
		int64_t pool[2];

		if (snap_ev_pool(r->s, r->t, ev, pool)) {
			sg->hdr.pool_id[0] = pool[0];
			sg->hdr.pool_id[1] = pool[1];
		}
	}
	sg->hdr.is_expandable = (uint8_t)expandable;
	sg->hdr.is_large = (uint8_t)guess_large(sg->hdr.size, expandable);
	if (r->seen_on)
		seen_add(r, ev, sg, 0);
	/* an early pass has not the event's pool the build would read */
	r->unknown_pool |= r->ev_pool;
}

static void
touch(struct rseg *sg, uint64_t i)
{
	sg->hdr.last_ev = (int64_t)i;
	sg->dirty = 1;
}

/* ---- expandable ranges (shared by forward and backward) ------------------ */

/* Adds mapped range [a, a+size) as free memory, merging with adjacent
 * expandable runs of the same stream. 0, or -1 when the range is not
 * free address space. */
int
replay_range_add(struct replay *r, struct rstate *st, uint64_t i, uint64_t a,
    uint64_t size, uint64_t stream)
{
	struct rseg *lower = NULL, *upper = NULL, *sg;
	struct rblk *lb = NULL, *ub = NULL, *nb;
	struct replay_block fb;
	struct urec *u;

	if (size == 0 || sv_span_wraps(a, size) || rseg_overlaps(st, a, size))
		return -1;
	if (a > 0 && (lower = rseg_find(st, a - 1)) != NULL &&
	    (!lower->hdr.is_expandable || lower->hdr.stream != stream))
		lower = NULL;
	if ((upper = rseg_ge(st, a + size)) != NULL &&
	    (upper->hdr.addr != a + size || !upper->hdr.is_expandable ||
	    upper->hdr.stream != stream))
		upper = NULL;
	if (lower != NULL && ((lb = rblk_find(st, a - 1)) == NULL ||
	    lb->b.state != SNAP_BLOCK_INACTIVE))
		lb = NULL;
	if (upper != NULL && ((ub = rblk_first(st, upper)) == NULL ||
	    ub->b.state != SNAP_BLOCK_INACTIVE))
		ub = NULL;
	if ((u = ulog_begin(&r->log)) != NULL) {
		ulog_segs(&r->log, u, lower != NULL ? lower->hdr.addr : a,
		    lower != NULL ? lower : upper,
		    (lower != NULL) + (upper != NULL));
		ulog_blks(&r->log, u, lb != NULL ? lb->b.addr : a,
		    lb != NULL ? lb : ub, (lb != NULL) + (ub != NULL));
		u->n_seg_post = 1;
		u->n_blk_post = 1;
	}
	if (lower != NULL) {
		sg = lower;
		sg->hdr.size += size;
	} else {
		sg = rseg_add(st, a, size);
		sg->hdr.alloc_ev = (int64_t)i;
		replay_seg_attrs(r, sg, i, stream, 1);
	}
	if (lb != NULL) {
		lb->b.size += size;
		nb = lb;
	} else {
		rblk_free_init(&fb, a, size, (int64_t)i);
		nb = rblk_add(st, &fb);
	}
	if (ub != NULL) {
		nb->b.size += ub->b.size;
		rblk_del(st, ub);
	}
	nb->b.last_ev = (int64_t)i;
	if (upper != NULL) {
		sg->hdr.size += upper->hdr.size;
		rseg_del(st, upper);
	}
	sg->blob = REPLAY_NO_BLOB;
	touch(sg, i);
	return 0;
}

/* Removes free range [a, a+size) from the segment holding it, splitting
 * it into up to two runs. 0, or -1 when the range is not free inside one
 * segment. */
int
replay_range_remove(struct replay *r, struct rstate *st, uint64_t i,
    uint64_t a, uint64_t size)
{
	struct rseg *sg = rseg_find(st, a), *hi;
	struct rblk *fb;
	struct replay_segment h;
	struct replay_block f, up;
	uint64_t end, fend;
	struct urec *u;

	/* a lies inside sg, whose end does not wrap */
	if (sg == NULL || size == 0 || size > rseg_end(sg) - a)
		return -1;
	end = a + size;
	fb = rblk_find(st, a);
	if (fb == NULL || fb->b.state != SNAP_BLOCK_INACTIVE ||
	    end > fb->b.addr + fb->b.size)
		return -1;
	f = fb->b;
	h = sg->hdr;
	fend = f.addr + f.size;
	if ((u = ulog_begin(&r->log)) != NULL) {
		ulog_segs(&r->log, u, h.addr, sg, 1);
		ulog_blks(&r->log, u, f.addr, fb, 1);
		u->n_seg_post = (a > h.addr) + (end < h.addr + h.size);
		u->n_blk_post = (f.addr < a) + (end < fend);
	}
	/* blocks: what is left of the free block below and above */
	if (f.addr < a) {
		fb->b.size = a - f.addr;
		if (end < fend) {
			up = f;
			up.addr = end;
			up.size = fend - end;
			rblk_add(st, &up);
		}
	} else if (end < fend)
		rblk_move_start(st, fb, end);
	else
		rblk_del(st, fb);
	/* segments: the runs below and above */
	if (end < h.addr + h.size) {
		hi = rseg_add(st, end, h.addr + h.size - end);
		hi->hdr = h;
		hi->hdr.addr = end;
		hi->hdr.size = h.addr + h.size - end;
		hi->hdr.alloc_ev = (int64_t)i;
		hi->hdr.last_ev = (int64_t)i;
	}
	if (a > h.addr) {
		sg->hdr.size = a - h.addr;
		sg->blob = REPLAY_NO_BLOB;
		touch(sg, i);
	} else
		rseg_del(st, sg);
	return 0;
}

/* ---- forward events ------------------------------------------------------ */

const struct fix *
replay_fix_find(const struct replay *r, uint64_t addr)
{
	return avl_find(&r->fix, addr);
}

/* An alloc at a landed inside free block fb, not at its start. If the
 * block before it is a pre-trace block whose size was guessed, it really
 * reached up to a. */
static void
learn_fix(struct replay *r, const struct rseg *sg, const struct rblk *fb,
    uint64_t a)
{
	const struct rblk *p = rblk_prev(sg, fb);
	struct fix *x;

	if (p == NULL || p->b.state == SNAP_BLOCK_INACTIVE ||
	    p->b.alloc_ev >= 0 || (x = avl_insert(&r->fix, p->b.addr)) == NULL)
		return;
	x->size = a - p->b.addr;
	r->n_fix_new++;
}

/* The size of the block the alloc at event i takes from a free run of
 * avail bytes. */
static uint64_t
alloc_size(struct replay *r, const struct rseg *sg, uint64_t i,
    const struct rev *e, uint64_t avail)
{
	uint64_t req = e->size;
	const struct learned *ln = learned_find(r, i);
	uint64_t bs;

	if (ln != NULL && ln->size > 0)
		bs = ln->size;
	else
		bs = replay_split_size(sg, replay_rounded(r, req), avail);
	if (bs > avail) {
		ANOM(r, i, e->addr, "alloc: block of %llu bytes "
		    "> free %llu", (unsigned long long)bs,
		    (unsigned long long)avail);
		bs = avail;
	}
	return bs;
}

static void
set_allocated(struct replay_block *b, uint64_t i, const struct rev *e)
{
	b->state = SNAP_BLOCK_ACTIVE_ALLOCATED;
	b->requested_size = e->size < b->size ? e->size : b->size;
	b->stack = e->stack;
	b->alloc_ev = (int64_t)i;
	b->last_ev = (int64_t)i;
}

/* *b made the block [a, a + bs) that alloc event i (e) allocated. */
static void
alloc_init(struct replay_block *b, uint64_t a, uint64_t bs, uint64_t i,
    const struct rev *e)
{
	memset(b, 0, sizeof *b);
	b->addr = a;
	b->size = bs;
	set_allocated(b, i, e);
}

static void
fwd_alloc(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr, req = e->size, avail, bs;
	struct rblk *fb = rblk_find(st, a), *pb, *x;
	struct rseg *sg;
	struct replay_block f;
	struct urec *u;

	/* the blocks tile the segments: a block holds a iff a segment does */
	if (fb == NULL || (sg = rblk_seg(st, fb)) == NULL) {
		ANOM(r, i, a, "alloc: no segment holds this address");
		return;
	}
	f = fb->b;
	if (f.state != SNAP_BLOCK_INACTIVE) {
		ANOM(r, i, a, "alloc: the block here is already active");
		if (f.addr != a)
			return;
		if ((u = ulog_begin(&r->log)) != NULL) {
			ulog_segs(&r->log, u, sg->hdr.addr, sg, 1);
			ulog_blks(&r->log, u, a, fb, 1);
			u->n_seg_post = u->n_blk_post = 1;
		}
		set_allocated(&fb->b, i, e);
		touch(sg, i);
		return;
	}
	u = ulog_begin(&r->log);
	if (u != NULL) {
		ulog_segs(&r->log, u, sg->hdr.addr, sg, 1);
		ulog_blks(&r->log, u, f.addr, fb, 1);
	}
	if (f.addr < a) {
		/* torch_npu (expandable segments) starts large blocks at a
		 * 16 KiB boundary and leaves the free part below it free: the
		 * NPU fixture shows 15872-byte free blocks before them. */
		if (r->npu_round && a % ALIGN_QUIRK == 0 &&
		    a - f.addr < ALIGN_QUIRK)
			r->info.n_aligned += (uint64_t)r->collect;
		else {
			ANOM(r, i, a, "alloc: inside a free block, not at "
			    "its start");
			if (r->collect)
				learn_fix(r, sg, fb, a);
		}
		fb->b.size = a - f.addr;
		fb->b.last_ev = (int64_t)i;
	}
	avail = f.addr + f.size - a;
	bs = alloc_size(r, sg, i, e, avail);
	if (req > bs)
		/* a block never holds more than it was given: the request
		 * is cut to the block, so every total stays within the
		 * segment */
		ANOM(r, i, a, "alloc: request of %llu bytes > its block of "
		    "%llu", (unsigned long long)req, (unsigned long long)bs);
	/* the new blocks split fb's old range: each is added next to the
	 * block before it, with no search, and filled in place */
	pb = fb;
	if (f.addr < a) {
		if ((x = rblk_new_after(st, fb, a)) != NULL) {
			alloc_init(&x->b, a, bs, i, e);
			pb = x;
		}
	} else
		alloc_init(&fb->b, a, bs, i, e);
	if (bs < avail && (x = rblk_new_after(st, pb, a + bs)) != NULL)
		rblk_free_init(&x->b, a + bs, avail - bs, (int64_t)i);
	touch(sg, i);
	if (u != NULL) {
		u->n_seg_post = 1;
		u->n_blk_post = 1 + (f.addr < a) + (bs < avail);
	}
}

/* The block starting exactly at a and its segment, or NULL. */
static struct rblk *
block_at(const struct rstate *st, uint64_t a, struct rseg **psg)
{
	struct rblk *b = rblk_at(st, a);

	*psg = b != NULL ? rblk_seg(st, b) : NULL;
	return b;
}

static void
fwd_free_requested(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr;
	struct rseg *sg;
	struct rblk *b = block_at(st, a, &sg);
	struct urec *u;

	if (b == NULL) {
		ANOM(r, i, a, "free_requested: no block starts here");
		return;
	}
	if (b->b.state != SNAP_BLOCK_ACTIVE_ALLOCATED) {
		ANOM(r, i, a, "free_requested: block is not allocated");
		return;
	}
	if ((u = ulog_begin(&r->log)) != NULL) {
		ulog_segs(&r->log, u, sg->hdr.addr, sg, 1);
		ulog_blks(&r->log, u, a, b, 1);
		u->n_seg_post = u->n_blk_post = 1;
	}
	b->b.state = SNAP_BLOCK_ACTIVE_PENDING_FREE;
	b->b.last_ev = (int64_t)i;
	touch(sg, i);
}

static void
fwd_free_completed(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr;
	struct rseg *sg;
	struct rblk *b = block_at(st, a, &sg), *p, *n, *lo;
	struct urec *u;

	if (b == NULL) {
		ANOM(r, i, a, "free_completed: no block starts here");
		return;
	}
	if (b->b.state == SNAP_BLOCK_INACTIVE) {
		ANOM(r, i, a, "free_completed: block is already free");
		return;
	}
	if (b->b.alloc_ev < 0)
		r->info.n_free_no_alloc += (uint64_t)r->collect;
	if ((u = ulog_begin(&r->log)) != NULL) {
		p = rblk_prev(sg, b);
		n = rblk_next(sg, b);
		if (p != NULL && p->b.state != SNAP_BLOCK_INACTIVE)
			p = NULL;
		if (n != NULL && n->b.state != SNAP_BLOCK_INACTIVE)
			n = NULL;
		lo = p != NULL ? p : b;
		ulog_segs(&r->log, u, sg->hdr.addr, sg, 1);
		ulog_blks(&r->log, u, lo->b.addr, lo,
		    1 + (p != NULL) + (n != NULL));
		u->n_seg_post = u->n_blk_post = 1;
	}
	rblk_free_init(&b->b, b->b.addr, b->b.size, (int64_t)i);
	rblk_merge(st, sg, b, (int64_t)i);
	touch(sg, i);
}

static void
fwd_segment_alloc(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr, size = e->size;
	struct replay_block b;
	struct rseg *sg;
	struct urec *u;

	if (size == 0 || sv_span_wraps(a, size)) {
		ANOM(r, i, a, "segment_alloc: size %llu does not fit the "
		    "address space", (unsigned long long)size);
		return;
	}
	if (rseg_overlaps(st, a, size)) {
		ANOM(r, i, a, "segment_alloc: overlaps a live segment");
		return;
	}
	if ((u = ulog_begin(&r->log)) != NULL) {
		ulog_segs(&r->log, u, a, NULL, 0);
		ulog_blks(&r->log, u, a, NULL, 0);
		u->n_seg_post = u->n_blk_post = 1;
	}
	sg = rseg_add(st, a, size);
	sg->hdr.alloc_ev = (int64_t)i;
	sg->hdr.last_ev = (int64_t)i;
	replay_seg_attrs(r, sg, i, e->stream, 0);
	rblk_free_init(&b, a, size, (int64_t)i);
	rblk_add(st, &b);
}

static void
fwd_segment_free(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr;
	struct rseg *sg = rseg_find(st, a);
	struct rblk *b, *first;
	struct urec *u;
	uint32_t nb = 0;

	if (sg == NULL || sg->hdr.addr != a) {
		ANOM(r, i, a, "segment_free: no segment starts here");
		return;
	}
	first = rblk_first(st, sg);
	for (b = first; b != NULL; b = rblk_next(sg, b))
		nb++;
	if (nb != 1 || first->b.state != SNAP_BLOCK_INACTIVE)
		ANOM(r, i, a, "segment_free: segment still has active blocks");
	if (sg->hdr.size != e->size)
		ANOM(r, i, a, "segment_free: size %llu, segment has %llu",
		    (unsigned long long)e->size,
		    (unsigned long long)sg->hdr.size);
	if ((u = ulog_begin(&r->log)) != NULL) {
		ulog_segs(&r->log, u, a, sg, 1);
		ulog_blks(&r->log, u, a, first, nb);
	}
	while ((b = rblk_first(st, sg)) != NULL)
		rblk_del(st, b);
	rseg_del(st, sg);
}

static void
fwd_segment_map(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr;

	if (replay_range_add(r, st, i, a, e->size,
	    e->stream) < 0)
		ANOM(r, i, a, "segment_map: overlaps mapped memory");
}

static void
fwd_segment_unmap(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t a = e->addr;

	if (replay_range_remove(r, st, i, a, e->size) < 0)
		ANOM(r, i, a, "segment_unmap: range is not free mapped memory");
}

void
replay_apply(struct replay *r, struct rstate *st, uint64_t i)
{
	struct rev e;

	rev_read(r->t, i, &e);
	replay_apply_ev(r, st, i, &e);
}

void
replay_apply_ev(struct replay *r, struct rstate *st, uint64_t i,
    const struct rev *e)
{
	uint64_t n_log = r->log.n;

	switch (e->action) {
	case SNAP_ALLOC: fwd_alloc(r, st, i, e); break;
	case SNAP_FREE_REQUESTED: fwd_free_requested(r, st, i, e); break;
	case SNAP_FREE_COMPLETED: fwd_free_completed(r, st, i, e); break;
	case SNAP_SEGMENT_ALLOC: fwd_segment_alloc(r, st, i, e); break;
	case SNAP_SEGMENT_FREE: fwd_segment_free(r, st, i, e); break;
	case SNAP_SEGMENT_MAP: fwd_segment_map(r, st, i, e); break;
	case SNAP_SEGMENT_UNMAP: fwd_segment_unmap(r, st, i, e); break;
	default: break; /* oom, snapshot, workspace_snapshot, annotate,
			   unknown */
	}
	if (r->log.on && r->log.n == n_log)
		ulog_begin(&r->log);
	st->at = (int64_t)i;
}
