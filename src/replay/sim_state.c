/*
 * The simulator's state as a snapshot lists it: its segments in address
 * order, each with its blocks (sim.h, sim_state()).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "replay/sim.h"
#include "replay/sim_int.h"
#include "util/xalloc.h"

static int
seg_start_cmp(const void *x, const void *y)
{
	const struct sblk *a = *(struct sblk *const *)x;
	const struct sblk *b = *(struct sblk *const *)y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* A block that starts a segment as a snapshot lists it: a cudaMalloc's
 * first block, or the first mapped block of a run. */
static int
seg_start(const struct sblk *b)
{
	return b->pool != NULL && b->mapped &&
	    (b->prev == NULL || !b->prev->mapped);
}

void
sim_state(struct sim *S, struct sim_state *out)
{
	size_t i, k, n = 0, nb = 0, used;
	struct sblk *base, *b, **v;

	for (i = 0; i < S->n_slabs; i++) {
		base = slab_base(S->slabs[i]);
		used = i + 1 == S->n_slabs ? S->slab_used : SLAB;
		for (k = 0; k < used; k++) {
			b = &base[k];
			if (seg_start(b)) {
				S->vec = xgrow(S->vec, &S->cap_vec, n + 1,
				    sizeof *S->vec);
				S->vec[n++] = b;
			}
		}
	}
	v = S->vec;
	if (n > 0)
		qsort(v, n, sizeof *v, seg_start_cmp);
	out->n_segs = 0;
	out->n_blks = 0;
	for (i = 0; i < n; i++) {
		struct replay_segment *sg;
		const struct spool *p = v[i]->pool;

		out->segs = xgrow(out->segs, &out->cap_segs, out->n_segs + 1,
		    sizeof *out->segs);
		sg = &out->segs[out->n_segs++];
		memset(sg, 0, sizeof *sg);
		sg->addr = v[i]->addr;
		sg->stream = v[i]->stream;
		if (p->owner != NULL) {
			sg->pool_id[0] = p->owner->id[0];
			sg->pool_id[1] = p->owner->id[1];
		}
		sg->is_large = !p->small;
		sg->is_expandable = v[i]->es != NULL;
		sg->alloc_ev = -1;
		sg->last_ev = -1;
		sg->first_block = (uint32_t)nb;
		for (b = v[i]; b != NULL && b->mapped; b = b->next) {
			struct replay_block *rb;

			out->blks = xgrow(out->blks, &out->cap_blks, nb + 1,
			    sizeof *out->blks);
			out->tags = xgrow(out->tags, &out->cap_tags, nb + 1,
			    sizeof *out->tags);
			rb = &out->blks[nb];
			memset(rb, 0, sizeof *rb);
			rb->addr = b->addr;
			rb->size = b->size;
			rb->alloc_ev = -1;
			rb->last_ev = -1;
			out->tags[nb] = b->allocated || b->pending ? b->tag :
			    0;
			nb++;
			sg->size += b->size;
			sg->n_blocks++;
			if (b->allocated) {
				rb->state = SNAP_BLOCK_ACTIVE_ALLOCATED;
				rb->requested_size = b->req;
				sg->allocated += b->size;
			} else if (b->pending)
				rb->state = SNAP_BLOCK_ACTIVE_PENDING_FREE;
			else
				rb->state = SNAP_BLOCK_INACTIVE;
			if (b->allocated || b->pending) {
				if (b->pending)
					rb->requested_size = b->req;
				sg->active += b->size;
				sg->requested += b->req;
			}
		}
	}
	out->n_blks = (uint32_t)nb;
}

void
sim_state_destroy(struct sim_state *st)
{
	free(st->segs);
	free(st->blks);
	free(st->tags);
	memset(st, 0, sizeof *st);
}
