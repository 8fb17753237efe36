/*
 * State at the cursor, from the replay engine. If the replay cannot be
 * built (a snapshot too inconsistent to undo), the pane falls back to the
 * final segments of the device and its title says "(final)".
 */
#include "config.h"

#include "tui/state.h"

#include <stdlib.h>
#include <string.h>

#include "replay/replay_idx.h"
#include "util/xalloc.h"

/* The final segments of device d as a replay_state (the fallback). */
static void
final_state(struct state_src *src, const struct snapshot *s, uint32_t d)
{
	uint32_t i, b, ns = 0, nb = 0, first, end;

	snap_device_segments(s, d, &first, &end);
	for (i = first; i < end; i++)
		if (s->segments[i].device == d) {
			ns++;
			nb += s->segments[i].n_blocks;
		}
	src->segs = xcalloc(ns + 1, sizeof *src->segs);
	src->blocks = xcalloc(nb + 1, sizeof *src->blocks);
	ns = nb = 0;
	for (i = first; i < end; i++) {
		const struct snap_segment *sg = &s->segments[i];
		struct replay_segment *o;

		if (sg->device != d)
			continue;
		o = &src->segs[ns++];
		o->addr = sg->addr;
		o->size = sg->total_size;
		o->stream = sg->stream;
		o->pool_id[0] = sg->pool_id[0];
		o->pool_id[1] = sg->pool_id[1];
		o->stack = sg->stack;
		o->is_large = sg->is_large;
		o->is_expandable = sg->is_expandable;
		o->alloc_ev = -1;
		o->first_block = nb;
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		    b < s->n_blocks; b++) {
			const struct snap_block *sb = &s->blocks[b];
			struct replay_block *ob = &src->blocks[nb++];

			ob->addr = sb->addr;
			ob->size = sb->size;
			ob->requested_size = sb->requested_size;
			ob->stack = sb->stack;
			ob->state = sb->state;
			ob->alloc_ev = -1;
			if (sb->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				o->allocated += sb->size;
			if (sb->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
			    sb->state == SNAP_BLOCK_ACTIVE_PENDING_FREE) {
				o->active += sb->size;
				o->requested += sb->requested_size;
			}
		}
		o->n_blocks = nb - o->first_block;
		src->st.reserved += o->size;
		src->st.allocated += o->allocated;
		src->st.active += o->active;
		src->st.requested += o->requested;
	}
	src->st.segments = src->segs;
	src->st.n_segments = ns;
	src->st.blocks = src->blocks;
	src->st.n_blocks = nb;
	src->st.at = src->last;
}

int
state_open(struct state_src *src, const struct sv_index *ix,
    const struct snapshot *s, uint32_t d, struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, d);

	memset(src, 0, sizeof *src);
	src->snap = s;
	src->device = d;
	src->last = t != NULL ? (int64_t)t->n - 1 : -1;
	src->replay = ix != NULL ? replay_from_index(ix, d, err)
				 : replay_new(s, d, err);
	if (src->replay != NULL)
		return 0;
	final_state(src, s, d);
	return -1;
}

void
state_close(struct state_src *src)
{
	replay_free(src->replay);
	free(src->segs);
	free(src->blocks);
	memset(src, 0, sizeof *src);
}

const struct replay_state *
state_at(struct state_src *src, int64_t at)
{
	struct sv_error err;

	if (src->replay != NULL) {
		sv_error_clear(&err);
		if (at > src->last)
			at = src->last;
		if (at < -1)
			at = -1;
		if (replay_seek(src->replay, at, &err) == 0)
			return replay_state(src->replay);
	}
	if (src->segs == NULL)
		final_state(src, src->snap, src->device);
	return &src->st;
}

int
state_exact(const struct state_src *src, int64_t at)
{
	return src->replay != NULL || at == src->last;
}
