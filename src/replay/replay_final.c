/*
 * The final state of a device as the file shows it: where the backward
 * pass starts from and what check compares the forward replay with.
 * Also the torch_npu workspace segments (doc/snapshot-format.md §16.4):
 * the leading workspace_snapshot, segment_alloc, alloc triples.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "replay/replay_int.h"
#include "util/sat.h"
#include "util/search.h"
#include "util/xalloc.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void
replay_find_workspace(struct replay *r)
{
	const struct snap_trace *t = r->t;
	size_t cap = 0;
	uint64_t i;

	for (i = 0; i + 2 < r->n; i += 3) {
		if (snap_ev_action(t, i) != SNAP_WORKSPACE_SNAPSHOT ||
		    snap_ev_action(t, i + 1) != SNAP_SEGMENT_ALLOC ||
		    snap_ev_action(t, i + 2) != SNAP_ALLOC ||
		    snap_ev_addr(t, i + 1) != snap_ev_addr(t, i + 2))
			break;
		r->workspace = xgrow(r->workspace, &cap, r->n_workspace + 1,
		    sizeof *r->workspace);
		r->workspace[r->n_workspace++] = snap_ev_addr(t, i + 1);
	}
	if (r->n_workspace > 1)
		qsort(r->workspace, r->n_workspace, sizeof *r->workspace,
		    cmp_u64);
	r->info.n_workspace = r->n_workspace;
}

struct by_addr {
	const uint64_t *a;
	uint64_t addr;
};

static int
addr_below(const void *ctx, uint64_t i)
{
	const struct by_addr *b = ctx;

	return b->a[i] < b->addr;
}

int
replay_is_workspace(const struct replay *r, uint64_t addr)
{
	struct by_addr b = {r->workspace, addr};
	uint64_t i = sv_partition(0, r->n_workspace, addr_below, &b);

	return i < r->n_workspace && r->workspace[i] == addr;
}

/* Appends a block at the end of the segment being built, merged with the
 * previous one when both are free (free runs are maximal). */
static struct rblk *
append(struct rstate *st, struct rblk *last, const struct replay_block *b)
{
	if (last != NULL && last->b.state == SNAP_BLOCK_INACTIVE &&
	    b->state == SNAP_BLOCK_INACTIVE) {
		last->b.size += b->size;
		return last;
	}
	return rblk_add(st, b);
}

/* The blocks of file segment fs as the blocks of sg: laid end to end
 * from the segment's start, clipped to its end, the rest free. */
static void
final_blocks(const struct snapshot *s, const struct snap_segment *fs,
    struct rstate *st, const struct rseg *sg)
{
	uint64_t off = sg->hdr.addr, end = rseg_end(sg);
	struct rblk *last = NULL;
	struct replay_block b;
	uint32_t j;

	for (j = 0; j < fs->n_blocks && fs->first_block + j < s->n_blocks;
	     j++) {
		const struct snap_block *fb = &s->blocks[fs->first_block + j];

		if (fb->size == 0 || off >= end)
			continue;
		rblk_free_init(&b, off, fb->size < end - off ? fb->size
							     : end - off, -1);
		if (fb->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
		    fb->state == SNAP_BLOCK_ACTIVE_PENDING_FREE) {
			b.state = fb->state;
			b.requested_size = fb->requested_size < b.size
			    ? fb->requested_size : b.size;
			b.stack = fb->stack;
		}
		last = append(st, last, &b);
		off += b.size;
	}
	if (off < end) {
		rblk_free_init(&b, off, end - off, -1);
		append(st, last, &b);
	}
}

/*
 * Builds the final state of the device as the file shows it, made
 * possible: blocks that do not tile their segment are laid end to end and
 * clipped to it, a segment past the end of the address space is clipped
 * there, one that overlaps an earlier one is left out, a requested size
 * is at most its block (check reports each of these in the file itself).
 */
void
replay_final_state(const struct replay *r, struct rstate *st, int patch)
{
	const struct snapshot *s = r->s;
	uint32_t i, seg_end;

	rstate_clear(st);
	snap_device_segments(s, r->device, &i, &seg_end);
	for (; i < seg_end; i++) {
		const struct snap_segment *fs = &s->segments[i];
		uint64_t size = fs->total_size;
		struct rseg *sg;
		struct rblk *b;

		if (sv_span_wraps(fs->addr, size))
			size = UINT64_MAX - fs->addr;
		if (fs->device != r->device || size == 0 ||
		    rseg_overlaps(st, fs->addr, size))
			continue;
		sg = rseg_add(st, fs->addr, size);
		sg->hdr.stream = fs->stream;
		sg->hdr.pool_id[0] = fs->pool_id[0];
		sg->hdr.pool_id[1] = fs->pool_id[1];
		sg->hdr.stack = fs->stack;
		sg->hdr.is_large = fs->is_large;
		sg->hdr.is_expandable = fs->is_expandable;
		final_blocks(s, fs, st, sg);
		b = rblk_first(st, sg);
		if (patch && replay_is_workspace(r, sg->hdr.addr) &&
		    rblk_next(sg, b) == NULL) {
			b->b.state = SNAP_BLOCK_ACTIVE_ALLOCATED;
			b->b.requested_size = sg->hdr.size;
		}
	}
	st->at = (int64_t)r->n - 1;
}
