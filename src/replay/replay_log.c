/*
 * The undo log of forward steps (replay_log.h).
 */
#include "config.h"

#include "replay/replay_log.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void
ulog_init(struct ulog *l)
{
	memset(l, 0, sizeof *l);
	l->base = -1;
}

void
ulog_destroy(struct ulog *l)
{
	free(l->rec);
	free(l->seg);
	free(l->blk);
	ulog_init(l);
}

void
ulog_reset(struct ulog *l, int64_t base)
{
	l->n = 0;
	l->n_seg = 0;
	l->n_blk = 0;
	l->base = base;
}

struct urec *
ulog_begin(struct ulog *l)
{
	struct urec *u;

	if (!l->on)
		return NULL;
	if (l->n == l->cap)
		l->rec = xgrow(l->rec, &l->cap, l->n + 1, sizeof *l->rec);
	u = &l->rec[l->n++];
	memset(u, 0, sizeof *u);
	u->seg_off = l->n_seg;
	u->blk_off = l->n_blk;
	return u;
}

void
ulog_segs(struct ulog *l, struct urec *u, uint64_t lo,
    const struct rseg *first, uint32_t n)
{
	uint32_t i;

	u->seg_lo = lo;
	u->seg_off = l->n_seg;
	u->n_seg_pre = n;
	if (l->n_seg + n > l->cap_seg)
		l->seg = xgrow(l->seg, &l->cap_seg, l->n_seg + n,
		    sizeof *l->seg);
	for (i = 0; i < n; i++, first = rseg_next(first))
		l->seg[l->n_seg++] = first->hdr;
}

void
ulog_blks(struct ulog *l, struct urec *u, uint64_t lo,
    const struct rblk *first, uint32_t n)
{
	uint32_t i;

	u->blk_lo = lo;
	u->blk_off = l->n_blk;
	u->n_blk_pre = n;
	if (l->n_blk + n > l->cap_blk)
		l->blk = xgrow(l->blk, &l->cap_blk, l->n_blk + n,
		    sizeof *l->blk);
	for (i = 0; i < n; i++, first = avl_next(first))
		l->blk[l->n_blk++] = first->b;
}

void
ulog_undo(struct ulog *l, struct rstate *st)
{
	struct urec *u = &l->rec[--l->n];
	uint32_t i;

	for (i = 0; i < u->n_blk_post; i++)
		rblk_del(st, avl_ge(&st->blk, u->blk_lo));
	for (i = 0; i < u->n_blk_pre; i++)
		rblk_add(st, &l->blk[u->blk_off + i]);
	for (i = 0; i < u->n_seg_post; i++)
		rseg_del(st, rseg_ge(st, u->seg_lo));
	for (i = 0; i < u->n_seg_pre; i++) {
		struct rseg *sg;

		sg = rseg_add(st, l->seg[u->seg_off + i].addr, 0);
		sg->hdr = l->seg[u->seg_off + i];
	}
	l->n_seg = u->seg_off;
	l->n_blk = u->blk_off;
	st->at--;
}
