/*
 * The replay's state containers: segments and blocks by address. See
 * rstate.h for the invariants.
 */
#include "config.h"

#include "replay/rstate.h"

#include <stdint.h>
#include <string.h>

void
rstate_init(struct rstate *st)
{
	avl_init(&st->seg, sizeof(struct rseg));
	avl_init(&st->blk, sizeof(struct rblk));
	st->seg_first = NULL;
	st->at = -1;
	st->near_seg = NULL;
	st->near_blk = NULL;
	u64map_init(&st->by_addr);
	st->indexed = 0;
}

void
rstate_clear(struct rstate *st)
{
	st->seg_first = NULL;
	avl_clear(&st->seg);
	avl_clear(&st->blk);
	st->at = -1;
	st->near_seg = NULL;
	st->near_blk = NULL;
	u64map_destroy(&st->by_addr);
	st->index_live = 0;
}

void
rstate_destroy(struct rstate *st)
{
	st->seg_first = NULL;
	avl_destroy(&st->seg);
	avl_destroy(&st->blk);
	st->at = -1;
	st->near_seg = NULL;
	st->near_blk = NULL;
	u64map_destroy(&st->by_addr);
	st->indexed = st->index_live = 0;
}

uint64_t
rstate_ghosts(const struct rstate *st)
{
	const struct rblk *b;
	uint64_t n = 0;

	for (b = avl_first(&st->blk); b != NULL; b = avl_next(b))
		n += b->b.state != SNAP_BLOCK_INACTIVE && b->b.alloc_ev < 0;
	return n;
}

/* The index is kept from rstate_index_min blocks on, until they drop
 * below a quarter of that: refilling it costs rstate_index_min puts, paid
 * for by the inserts in between. */
size_t rstate_index_min = 512;

void
rstate_reindex(struct rstate *st)
{
	struct rseg *sg, *p = NULL;
	struct rblk *b;

	st->seg_first = avl_first(&st->seg);
	for (sg = st->seg_first; sg != NULL; p = sg, sg = avl_next(sg)) {
		sg->prev = p;
		sg->next = avl_next(sg);
	}
	u64map_destroy(&st->by_addr);
	st->index_live = st->indexed && st->blk.n >= rstate_index_min;
	if (!st->index_live)
		return;
	for (b = avl_first(&st->blk); b != NULL; b = avl_next(b))
		u64map_put(&st->by_addr, b->b.addr, (uint64_t)(uintptr_t)b);
}

/* After an insert: the index, once the state holds enough blocks. */
static void
index_add(struct rstate *st, struct rblk *x)
{
	if (st->index_live)
		u64map_put(&st->by_addr, x->b.addr, (uint64_t)(uintptr_t)x);
	else if (st->indexed && st->blk.n >= rstate_index_min)
		rstate_reindex(st);
}

void
rstate_index(struct rstate *st, int on)
{
	st->indexed = on && rstate_index_min != SIZE_MAX;
	rstate_reindex(st);
}

/* The lookups' memory (rstate.h): a cache, written through the const
 * pointer the lookups take. */
static struct rstate *
near_of(const struct rstate *st)
{
	return (struct rstate *)(uintptr_t)st;
}

/* avl_le(t, a), tried first at el (an element of t, or NULL): el is the
 * answer when its key is <= a and its successor's is > a. */
static void *
le_near(const struct avl *t, void *el, uint64_t a)
{
	void *nx;

	if (el != NULL && avl_key(el) <= a &&
	    ((nx = avl_next(el)) == NULL || avl_key(nx) > a))
		return el;
	return avl_le(t, a);
}

/* ---- segments ------------------------------------------------------------ */

struct rseg *
rseg_first(const struct rstate *st)
{
	return st->seg_first;
}

struct rseg *
rseg_next(const struct rseg *sg)
{
	return sg->next;
}

struct rseg *
rseg_find(const struct rstate *st, uint64_t a)
{
	struct rseg *sg = le_near(&st->seg, st->near_seg, a);

	if (sg != NULL)
		near_of(st)->near_seg = sg;
	return sg != NULL && a - sg->hdr.addr < sg->hdr.size ? sg : NULL;
}

struct rseg *
rseg_ge(const struct rstate *st, uint64_t a)
{
	return avl_ge(&st->seg, a);
}

int
rseg_overlaps(const struct rstate *st, uint64_t a, uint64_t size)
{
	const struct rseg *up = avl_ge(&st->seg, a);

	return rseg_find(st, a) != NULL ||
	    (up != NULL && up->hdr.addr - a < size);
}

struct rseg *
rseg_add(struct rstate *st, uint64_t addr, uint64_t size)
{
	struct rseg *sg = avl_insert(&st->seg, addr);

	if (sg == NULL)
		return NULL;
	sg->prev = avl_prev(sg);
	sg->next = sg->prev != NULL ? sg->prev->next : st->seg_first;
	if (sg->prev != NULL)
		sg->prev->next = sg;
	else
		st->seg_first = sg;
	if (sg->next != NULL)
		sg->next->prev = sg;
	sg->hdr.addr = addr;
	sg->hdr.size = size;
	sg->hdr.alloc_ev = -1;
	sg->hdr.last_ev = -1;
	sg->blob = REPLAY_NO_BLOB;
	sg->dirty = 1;
	return sg;
}

void
rseg_del(struct rstate *st, struct rseg *sg)
{
	if (st->near_seg == sg)
		st->near_seg = NULL;
	if (sg->prev != NULL)
		sg->prev->next = sg->next;
	else
		st->seg_first = sg->next;
	if (sg->next != NULL)
		sg->next->prev = sg->prev;
	/* no block that remembers it takes it for its segment now */
	sg->hdr.size = 0;
	avl_remove(&st->seg, sg);
}

/* ---- blocks -------------------------------------------------------------- */

/* The block starting at a from the index, or NULL (also when it is
 * off). */
static struct rblk *
indexed_at(const struct rstate *st, uint64_t a)
{
	uint64_t v;

	if (!st->index_live || !u64map_get(&st->by_addr, a, &v))
		return NULL;
	return (struct rblk *)(uintptr_t)v;
}

struct rblk *
rblk_find(const struct rstate *st, uint64_t a)
{
	struct rblk *b;

	/* a block starting at a holds it */
	if ((b = indexed_at(st, a)) != NULL) {
		near_of(st)->near_blk = b;
		return b;
	}
	b = le_near(&st->blk, st->near_blk, a);

	if (b != NULL)
		near_of(st)->near_blk = b;
	return b != NULL && a - b->b.addr < b->b.size ? b : NULL;
}

struct rblk *
rblk_at(const struct rstate *st, uint64_t a)
{
	struct rblk *b = st->near_blk;

	if (b != NULL && avl_key(b) == a)
		return b;
	if (st->index_live)
		b = indexed_at(st, a);
	else
		b = avl_find(&st->blk, a);
	if (b != NULL)
		near_of(st)->near_blk = b;
	return b;
}

struct rseg *
rblk_seg(const struct rstate *st, struct rblk *b)
{
	struct rseg *sg = b->sg;

	if (!st->indexed)
		return rseg_find(st, b->b.addr);
	if (sg == NULL || b->b.addr - sg->hdr.addr >= sg->hdr.size)
		b->sg = sg = rseg_find(st, b->b.addr);
	return sg;
}

/* The segment's blocks tile it, so its first starts at its address: the
 * index has it, but for a segment emptied one block at a time from the
 * front (segment_free), where the map's search finds the next. */
struct rblk *
rblk_first(const struct rstate *st, const struct rseg *sg)
{
	struct rblk *b = indexed_at(st, sg->hdr.addr);

	if (b == NULL)
		b = avl_ge(&st->blk, sg->hdr.addr);

	return b != NULL && b->b.addr - sg->hdr.addr < sg->hdr.size ? b : NULL;
}

struct rblk *
rblk_next(const struct rseg *sg, const struct rblk *b)
{
	struct rblk *n = avl_next(b);

	return n != NULL && n->b.addr - sg->hdr.addr < sg->hdr.size ? n : NULL;
}

struct rblk *
rblk_prev(const struct rseg *sg, const struct rblk *b)
{
	struct rblk *p = avl_prev(b);

	return p != NULL && p->b.addr >= sg->hdr.addr ? p : NULL;
}

struct rblk *
rblk_add(struct rstate *st, const struct replay_block *b)
{
	struct rblk *x = avl_insert(&st->blk, b->addr);

	if (x != NULL) {
		x->b = *b;
		index_add(st, x);
	}
	return x;
}

struct rblk *
rblk_new_after(struct rstate *st, struct rblk *prev, uint64_t addr)
{
	struct rblk *x = avl_insert_after(&st->blk, prev, addr);

	if (x != NULL) {
		x->b.addr = addr;
		/* inside prev's old range: prev's segment */
		x->sg = prev->sg;
		index_add(st, x);
	}
	return x;
}

void
rblk_del(struct rstate *st, struct rblk *b)
{
	if (st->near_blk == b)
		st->near_blk = NULL;
	avl_remove(&st->blk, b);
	if (st->index_live) {
		if (st->blk.n < rstate_index_min / 4) {
			u64map_destroy(&st->by_addr);
			st->index_live = 0;
		} else
			u64map_del(&st->by_addr, b->b.addr);
	}
}

void
rblk_move_start(struct rstate *st, struct rblk *b, uint64_t addr)
{
	if (st->index_live) {
		u64map_del(&st->by_addr, b->b.addr);
		u64map_put(&st->by_addr, addr, (uint64_t)(uintptr_t)b);
	}
	b->b.size = b->b.addr + b->b.size - addr;
	b->b.addr = addr;
	avl_rekey(b, addr);
}

void
rblk_free_init(struct replay_block *b, uint64_t addr, uint64_t size,
    int64_t ev)
{
	memset(b, 0, sizeof *b);
	b->addr = addr;
	b->size = size;
	b->state = SNAP_BLOCK_INACTIVE;
	b->alloc_ev = -1;
	b->last_ev = ev;
}

struct rblk *
rblk_merge(struct rstate *st, const struct rseg *sg, struct rblk *b,
    int64_t ev)
{
	struct rblk *n = rblk_next(sg, b), *p = rblk_prev(sg, b);

	if (n != NULL && n->b.state == SNAP_BLOCK_INACTIVE) {
		b->b.size += n->b.size;
		rblk_del(st, n);
	}
	if (p != NULL && p->b.state == SNAP_BLOCK_INACTIVE) {
		p->b.size += b->b.size;
		rblk_del(st, b);
		b = p;
	}
	b->b.last_ev = ev;
	return b;
}
