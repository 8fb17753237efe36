/*
 * The replay's state containers: segments and blocks by address. See
 * rstate.h for the invariants.
 */
#include "config.h"

#include "replay/rstate.h"

#include <string.h>

void
rstate_init(struct rstate *st)
{
	avl_init(&st->seg, sizeof(struct rseg));
	avl_init(&st->blk, sizeof(struct rblk));
	st->at = -1;
}

void
rstate_clear(struct rstate *st)
{
	avl_clear(&st->seg);
	avl_clear(&st->blk);
	st->at = -1;
}

void
rstate_destroy(struct rstate *st)
{
	avl_destroy(&st->seg);
	avl_destroy(&st->blk);
	st->at = -1;
}

/* ---- segments ------------------------------------------------------------ */

struct rseg *
rseg_first(const struct rstate *st)
{
	return avl_first(&st->seg);
}

struct rseg *
rseg_next(const struct rseg *sg)
{
	return avl_next(sg);
}

struct rseg *
rseg_find(const struct rstate *st, uint64_t a)
{
	struct rseg *sg = avl_le(&st->seg, a);

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
	avl_remove(&st->seg, sg);
}

/* ---- blocks -------------------------------------------------------------- */

struct rblk *
rblk_find(const struct rstate *st, uint64_t a)
{
	struct rblk *b = avl_le(&st->blk, a);

	return b != NULL && a - b->b.addr < b->b.size ? b : NULL;
}

struct rblk *
rblk_at(const struct rstate *st, uint64_t a)
{
	return avl_find(&st->blk, a);
}

struct rblk *
rblk_first(const struct rstate *st, const struct rseg *sg)
{
	struct rblk *b = avl_ge(&st->blk, sg->hdr.addr);

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

	if (x != NULL)
		x->b = *b;
	return x;
}

struct rblk *
rblk_add_after(struct rstate *st, struct rblk *prev,
    const struct replay_block *b)
{
	struct rblk *x = avl_insert_after(&st->blk, prev, b->addr);

	if (x != NULL)
		x->b = *b;
	return x;
}

void
rblk_del(struct rstate *st, struct rblk *b)
{
	avl_remove(&st->blk, b);
}

void
rblk_move_start(struct rblk *b, uint64_t addr)
{
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
