/*
 * The forward pass of a build, made beside the parse (replay_int.h).
 *
 * A build's forward pass starts from the state its backward pass finds,
 * and uses the block sizes and segment attributes that pass learned;
 * both need the whole trace, so after the parse the two passes ran one
 * after the other, on one core. But most traces begin with an empty
 * allocator (recording began before the first allocation), and there a
 * forward pass from an empty start with the allocator's own rules is the
 * pass the build would make. So while the parse streams the events to
 * the index's encoder, that thread also runs such a pass
 * (replay_idx.c's stream), with the checkpoints the build would take;
 * after the parse the build runs its backward pass alone and takes this
 * pass when everything the forward pass reads agrees
 * (replay_early_fits()):
 *   - the start: no segment and no block;
 *   - the rounding rule (this pass uses the CUDA one) and no torch_npu
 *     workspace segments;
 *   - every block size learned backward: the size this pass gave the
 *     block that alloc made, found in its final state (a learned size is
 *     that of a block alive at the end);
 *   - every segment's attributes learned backward where this pass made
 *     that segment: what it guessed instead (r->seen);
 *   - no anomaly and no fix in this pass (it gives up at the first, and
 *     where it makes a segment that no final segment tells the
 *     attributes of for an event with a pool of its own, 2.14: the
 *     build's guess reads that pool from the snapshot's strings, which
 *     the parse is still filling).
 * Then every step of the two passes reads the same values, and the
 * checkpoints, the findings and the counts are the same bytes; the
 * one-thread build, which never has such a pass, is the test of that
 * (tests/index/threads.test, on every fixture). A pass that gives up
 * costs the parse's second core what it did until then.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay_int.h"
#include "util/xalloc.h"

static int
fin_cmp(const void *a, const void *b)
{
	const struct finseg *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void
replay_early_final(const struct snapshot *s, uint32_t n_dev,
    struct finseg **fin, size_t *n)
{
	size_t *cap = xcalloc(n_dev ? n_dev : 1, sizeof *cap);
	uint32_t i, d;

	memset(fin, 0, n_dev * sizeof *fin);
	memset(n, 0, n_dev * sizeof *n);
	for (i = 0; i < s->n_segments; i++) {
		const struct snap_segment *fs = &s->segments[i];
		struct finseg *f;

		if ((d = fs->device) >= n_dev)
			continue;
		if (n[d] == cap[d])
			fin[d] = xgrow(fin[d], &cap[d], n[d] + 1, sizeof **fin);
		f = &fin[d][n[d]++];
		memset(f, 0, sizeof *f);
		/* as replay_final_state() makes it (a segment it clips or
		 * leaves out is not found, or is found and then does not
		 * fit: the build makes its own pass) */
		f->addr = fs->addr;
		f->size = fs->total_size;
		f->a.pool[0] = fs->pool_id[0];
		f->a.pool[1] = fs->pool_id[1];
		f->a.stack = fs->stack;
		f->a.is_large = fs->is_large;
		f->a.is_expandable = fs->is_expandable;
	}
	for (d = 0; d < n_dev; d++)
		if (n[d] > 1)
			qsort(fin[d], n[d], sizeof *fin[d], fin_cmp);
	free(cap);
}

struct replay *
replay_early_new(uint32_t d, size_t tape_mem, const struct finseg *fin,
    size_t n)
{
	struct replay *x = xcalloc(1, sizeof *x);

	x->device = d;
	x->fin = fin;
	x->n_fin = n;
	rstate_init(&x->cur);
	avl_init(&x->fix, sizeof(struct fix));
	ckpt_init(&x->ck, REPLAY_K);
	ulog_init(&x->log);
	x->info.k = REPLAY_K;
	x->tape_mem = tape_mem;
	if (tape_mem > 0)
		ckpt_use_tapes(&x->ck, tape_mem);
	rstate_index(&x->cur, 1);
	x->seen_on = 1;
	/* as build_forward() begins */
	x->collect = 1;
	ckpt_take(&x->ck, &x->cur);
	return x;
}

/* build_forward()'s loop, one event at a time: the checkpoint it takes
 * after event i unless i is the last, taken here when event i + 1
 * comes. */
int
replay_early_event(struct replay *x, const struct rev *e, int pool)
{
	uint64_t i = x->n, gap;

	if (x->early_ckpt) {
		ckpt_take(&x->ck, &x->cur);
		x->early_last = i;
		x->early_ckpt = 0;
	}
	gap = x->cur.blk.n / 4;
	replay_count_action(&x->info, e->action);
	if (pool || e->action == SNAP_SEGMENT_MAP ||
	    e->action == SNAP_SEGMENT_UNMAP)
		x->needs_backward = 1;
	else if (e->action == SNAP_SEGMENT_FREE) {
		/* a backward pass gives the segment it makes back the
		 * attributes of a guess */
		const struct rseg *sg = rseg_find(&x->cur, e->addr);

		if (sg != NULL && !replay_seg_guessed(sg))
			x->needs_backward = 1;
	}
	x->ev_pool = pool;
	replay_apply_ev(x, &x->cur, i, e);
	x->ev_pool = 0;
	x->n = i + 1;
	if (x->n_fwd_issues != 0 || x->n_fix_new != 0 || x->unknown_pool)
		return -1;
	x->early_ckpt = i + 1 - x->early_last >= (gap > x->ck.k ? gap
								: x->ck.k);
	return 0;
}

static int
made_cmp(const void *a, const void *b)
{
	const struct learned *x = a, *y = b;

	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

void
replay_early_settle(struct replay *x)
{
	const struct rblk *b;
	uint64_t n = 0;

	x->info.n_ghost += rstate_ghosts(&x->cur);
	for (b = avl_first(&x->cur.blk); b != NULL; b = avl_next(b))
		n += b->b.state != SNAP_BLOCK_INACTIVE && b->b.alloc_ev >= 0;
	x->made = xreallocarray(NULL, n + 1, sizeof *x->made);
	for (b = avl_first(&x->cur.blk); b != NULL; b = avl_next(b))
		if (b->b.state != SNAP_BLOCK_INACTIVE && b->b.alloc_ev >= 0) {
			x->made[x->n_made].ev = (uint64_t)b->b.alloc_ev;
			x->made[x->n_made++].size = b->b.size;
		}
	qsort(x->made, x->n_made, sizeof *x->made, made_cmp);
	rstate_destroy(&x->cur);
	/* it was built on the encoder's thread: its pages go back before
	 * the backward pass makes its own state on this one */
	xalloc_release();
	rstate_init(&x->cur);
	x->cur.at = (int64_t)x->n - 1;
	x->collect = 0;
}

/* Every size r learned is that of the block its alloc made alive at the
 * end of x (both ascend by event). */
static int
sizes_fit(const struct replay *r, const struct replay *x)
{
	uint64_t i, j = 0;

	for (i = 0; i < r->n_learned; i++) {
		const struct learned *l = &r->learned[i];

		if (l->size == 0)
			continue;
		while (j < x->n_made && x->made[j].ev < l->ev)
			j++;
		if (j == x->n_made || x->made[j].ev != l->ev ||
		    x->made[j].size != l->size)
			return 0;
	}
	return 1;
}

/* Every segment x made has the attributes r learned for its event, if
 * r learned any; where r learned none, r guesses: so must x have. */
static int
attrs_fit(const struct replay *r, const struct replay *x)
{
	uint64_t i;

	for (i = 0; i < x->n_seen; i++) {
		const struct segattr *g = &x->seen[i];
		const struct segattr *a = replay_attr_find(r, g->ev);

		if (a == NULL && g->final)
			return 0;
		if (a != NULL && (a->pool[0] != g->pool[0] ||
		    a->pool[1] != g->pool[1] || a->stack != g->stack ||
		    a->is_large != g->is_large ||
		    a->is_expandable != g->is_expandable))
			return 0;
	}
	return 1;
}

/* What both ways of taking x ask: the pass of r's device over all its
 * events, clean, with r's rounding, no workspace and no fix, its
 * checkpoints kept as r's are. */
static int
same_pass(const struct replay *r, const struct replay *x)
{
	return x->device == r->device && x->n == r->n &&
	    x->n_fwd_issues == 0 && x->n_fix_new == 0 &&
	    x->npu_round == r->npu_round && r->n_workspace == 0 &&
	    r->fix.n == 0 && (r->tape_mem > 0) == (x->tape_mem > 0);
}

int
replay_early_fits(const struct replay *r, const struct replay *x)
{
	return x->made != NULL && same_pass(r, x) && r->cur.seg.n == 0 &&
	    r->cur.blk.n == 0 && sizes_fit(r, x) && attrs_fit(r, x);
}

/* The same segments, with the attributes a backward pass learns, and
 * the same blocks, with the bounds and states it reads. */
static int
states_same(const struct rstate *f, const struct rstate *x)
{
	const struct rseg *a, *b;

	if (f->seg.n != x->seg.n || f->blk.n != x->blk.n)
		return 0;
	for (a = rseg_first(f), b = rseg_first(x); a != NULL && b != NULL;
	     a = rseg_next(a), b = rseg_next(b)) {
		const struct rblk *p = rblk_first(f, a), *q = rblk_first(x, b);

		if (a->hdr.addr != b->hdr.addr || a->hdr.size != b->hdr.size ||
		    a->hdr.pool_id[0] != b->hdr.pool_id[0] ||
		    a->hdr.pool_id[1] != b->hdr.pool_id[1] ||
		    a->hdr.stack != b->hdr.stack ||
		    a->hdr.is_large != b->hdr.is_large ||
		    a->hdr.is_expandable != b->hdr.is_expandable)
			return 0;
		for (; p != NULL && q != NULL;
		     p = rblk_next(a, p), q = rblk_next(b, q))
			if (p->b.addr != q->b.addr || p->b.size != q->b.size ||
			    p->b.state != q->b.state)
				return 0;
		if (p != NULL || q != NULL)
			return 0;
	}
	return a == NULL && b == NULL;
}

/*
 * Why a whole pass needs no backward pass. x began empty and applied
 * every event by the allocator's rules with no anomaly, and its final
 * state is the file's (states_same()). A backward pass from that state
 * undoes each of x's steps: segments exactly (a segment_free undone
 * makes a segment of the freed one's size, which x checked), blocks
 * exactly where they live to the end, and where a free_completed is
 * undone it guesses the block's size, which may be wrong only until the
 * alloc of that block, in the trace, is undone and merges it back into
 * free space (replay.c). So it ends at the empty start, with no event it
 * cannot undo, and learns:
 *   - for every alloc whose block lives to the end, that block's size in
 *     the final state, which is x's (x->made): the blocks it re-created
 *     are marked guessed and teach nothing;
 *   - for every segment_alloc, the attributes of the segment it undoes:
 *     of a segment that lives to the end the final state's, which are
 *     x's; of one freed in the trace the guess it made undoing the free,
 *     which x's were (replay_early_event() checks, and leaves pools and
 *     expandable segments to a backward pass): x->seen either way;
 *   - the counts of the events whatever the state (x counts them alike).
 * The tests build every fixture both ways (one thread never has an early
 * pass) and compare the bytes.
 */
int
replay_early_whole(const struct replay *r, const struct replay *x)
{
	return !x->needs_backward && !x->unknown_pool && x->made == NULL &&
	    same_pass(r, x) && states_same(&r->cur, &x->cur);
}

void
replay_early_learn(struct replay *r, struct replay *x)
{
	uint64_t i;

	atomic_fetch_add(&replay_early_whole_taken, 1);
	r->learned = x->made;
	r->n_learned = r->cap_learned = x->n_made;
	x->made = NULL;
	x->n_made = 0;
	r->attrs = x->seen;
	r->n_attrs = x->n_seen;
	r->cap_attrs = x->cap_seen;
	for (i = 0; i < r->n_attrs; i++)
		r->attrs[i].final = 0;
	x->seen = NULL;
	x->n_seen = x->cap_seen = 0;
	r->info.n_oom = x->info.n_oom;
	r->info.n_snapshot = x->info.n_snapshot;
	r->info.n_unknown = x->info.n_unknown;
}

atomic_uint_fast64_t replay_early_adopted, replay_early_whole_taken;

void
replay_early_adopt(struct replay *r, struct replay *x)
{
	struct replay_info in = r->info;

	atomic_fetch_add(&replay_early_adopted, 1);

	x->s = r->s;
	x->t = r->t;
	x->src = r->src;
	memset(&r->src, 0, sizeof r->src);
	x->learned = r->learned;
	x->n_learned = r->n_learned;
	x->cap_learned = r->cap_learned;
	r->learned = NULL;
	x->attrs = r->attrs;
	x->n_attrs = r->n_attrs;
	x->cap_attrs = r->cap_attrs;
	r->attrs = NULL;
	x->workspace = r->workspace;
	x->n_workspace = r->n_workspace;
	r->workspace = NULL;
	/* the counts the forward pass keeps are x's, the others r's */
	in.n_free_no_alloc = x->info.n_free_no_alloc;
	in.n_aligned = x->info.n_aligned;
	in.n_ghost = x->info.n_ghost;
	x->info = in;
	free(x->made);
	x->made = NULL;
	x->n_made = 0;
	free(x->seen);
	x->seen = NULL;
	x->n_seen = x->cap_seen = 0;
	x->seen_on = 0;
	x->fin = NULL;
	x->n_fin = 0;
}
