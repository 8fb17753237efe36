/*
 * replay_check(): does forward replay from the reconstructed start state
 * reproduce the file's final segments exactly, and do the file's own
 * segment totals agree with its blocks (doc/snapshot-format.md §14)?
 * Every difference becomes an issue with the event that last touched the
 * address (or "end").
 *
 * Compared per segment: address, total size, stream, pool id, large/small,
 * expandable; per block: address, size, state, and the requested size of
 * active blocks (inactive blocks keep a stale requested_size in the file:
 * ignored). Known quirk, reported as a note: torch_npu workspace segments
 * (doc/snapshot-format.md §16.4) are inactive in the file but allocated
 * by their leading triple.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay_int.h"
#include "util/sat.h"
#include "util/xalloc.h"

static const char *
state_name(unsigned st)
{
	switch (st) {
	case SNAP_BLOCK_INACTIVE: return "inactive";
	case SNAP_BLOCK_ACTIVE_ALLOCATED: return "active_allocated";
	case SNAP_BLOCK_ACTIVE_PENDING_FREE: return "active_pending_free";
	default: return "unknown";
	}
}

#define ISSUE(c, ev, addr, ...)                                                \
	replay_issue_add(&(c)->issues, &(c)->n_issues, &(c)->n_kept, (ev),     \
	    (addr), __VA_ARGS__)
#define NOTE(c, ev, addr, ...)                                                 \
	do {                                                                   \
		uint64_t nk_ = (c)->n_notes;                                   \
		replay_issue_add(&(c)->notes, &(c)->n_notes, &nk_, (ev),       \
		    (addr), __VA_ARGS__);                                      \
		(c)->n_notes = nk_;                                            \
	} while (0)

struct seg_span {
	uint64_t addr, end;	/* end saturates at UINT64_MAX */
	uint32_t i;		/* index in s->segments */
};

static int
span_cmp(const void *a, const void *b)
{
	const struct seg_span *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * Overlapping segments of the device in O(n log n): sorted by address, a
 * segment overlaps something before it exactly when it starts below the
 * furthest end seen so far, and then it overlaps the segment with that
 * end. Each overlapping pair found is charged to the later of the two in
 * file order, naming the earlier one. over[i - first] receives the
 * address named for segment i; has[i - first] says whether there is one.
 * (Every segment that overlaps another is reported once, not once per
 * partner: a hostile file with n stacked segments gives n issues, not n^2.)
 */
static void
find_overlaps(const struct snapshot *s, uint32_t dev, uint32_t first,
    uint32_t end, uint64_t *over, uint8_t *has)
{
	struct seg_span *v = xreallocarray(NULL, end - first + 1, sizeof *v);
	uint32_t i, n = 0, reach = 0;

	for (i = first; i < end; i++) {
		const struct snap_segment *g = &s->segments[i];

		if (g->device != dev || g->total_size == 0)
			continue;
		v[n].addr = g->addr;
		v[n].end = sv_sat_add(g->addr, g->total_size);
		v[n++].i = i;
	}
	qsort(v, n, sizeof *v, span_cmp);
	for (i = 1; i < n; i++) {
		if (v[i].addr < v[reach].end) {
			uint32_t a = v[i].i, b = v[reach].i;
			uint32_t late = a > b ? a : b, early = a ^ b ^ late;

			if (!has[late - first]) {
				has[late - first] = 1;
				over[late - first] = s->segments[early].addr;
			}
		}
		if (v[i].end > v[reach].end)
			reach = i;
	}
	free(v);
}

static void
block_outside(struct replay_check *c, const struct snap_segment *sg,
    const struct snap_block *b)
{
	ISSUE(c, REPLAY_EV_FILE, b->addr, "file: block of %" PRIu64 " bytes "
	    "lies outside its segment (0x%" PRIx64 ", %" PRIu64 " bytes)",
	    b->size, sg->addr, sg->total_size);
}

/* The file's own totals and tiling, per segment of the device. */
static void
check_file(const struct replay *r, struct replay_check *c)
{
	const struct snapshot *s = r->s;
	uint32_t i, j, first, end;
	uint64_t *over;
	uint8_t *has;

	snap_device_segments(s, r->device, &first, &end);
	over = xcalloc((size_t)(end - first) + 1, sizeof *over);
	has = xcalloc((size_t)(end - first) + 1, 1);
	find_overlaps(s, r->device, first, end, over, has);
	for (i = first; i < end; i++) {
		const struct snap_segment *sg = &s->segments[i];
		uint64_t off = sg->addr, sum = 0, al = 0, ac = 0, rq = 0;
		int tiled = 1, has_req = (s->features & SNAP_F_REQUESTED) != 0;
		uint64_t sg_end = sv_sat_add(sg->addr, sg->total_size);
		int past = 0;

		if (sg->device != r->device)
			continue;
		if (has[i - first])
			ISSUE(c, REPLAY_EV_FILE, sg->addr, "file: segment "
			    "overlaps segment 0x%" PRIx64, over[i - first]);
		if (sv_span_wraps(sg->addr, sg->total_size))
			ISSUE(c, REPLAY_EV_FILE, sg->addr, "file: segment of "
			    "%" PRIu64 " bytes runs past the end of the "
			    "address space", sg->total_size);
		for (j = 0; j < sg->n_blocks &&
		     sg->first_block + j < s->n_blocks; j++) {
			const struct snap_block *b =
			    &s->blocks[sg->first_block + j];

			if (b->addr != off && tiled) {
				ISSUE(c, REPLAY_EV_FILE, b->addr,
				    "file: block does not follow the previous "
				    "one (expected 0x%" PRIx64 ")", off);
				tiled = 0;
			}
			if (!past && (b->addr < sg->addr ||
			    sv_sat_add(b->addr, b->size) > sg_end)) {
				block_outside(c, sg, b);
				past = 1;
			}
			if ((b->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
			    b->state == SNAP_BLOCK_ACTIVE_PENDING_FREE) &&
			    !(b->flags & SNAP_BLOCK_F_NO_REQUESTED) &&
			    b->requested_size > b->size)
				ISSUE(c, REPLAY_EV_FILE, b->addr, "file: "
				    "block of %" PRIu64 " bytes was requested "
				    "%" PRIu64, b->size, b->requested_size);
			off = sv_sat_add(b->addr, b->size);
			sum = sv_sat_add(sum, b->size);
			if (b->state == SNAP_BLOCK_UNKNOWN_STATE)
				ISSUE(c, REPLAY_EV_FILE, b->addr,
				    "file: block has an unknown state");
			if (b->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				al = sv_sat_add(al, b->size);
			if (b->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
			    b->state == SNAP_BLOCK_ACTIVE_PENDING_FREE) {
				ac = sv_sat_add(ac, b->size);
				rq = sv_sat_add(rq, b->requested_size);
				if (b->flags & SNAP_BLOCK_F_NO_REQUESTED)
					has_req = 0;
			}
		}
		if (sum != sg->total_size)
			ISSUE(c, REPLAY_EV_FILE, sg->addr,
			    "file: blocks sum to %" PRIu64 ", total_size is "
			    "%" PRIu64, sum, sg->total_size);
		if (al != sg->allocated_size)
			ISSUE(c, REPLAY_EV_FILE, sg->addr,
			    "file: allocated_size %" PRIu64 ", blocks say "
			    "%" PRIu64, sg->allocated_size, al);
		if (ac != sg->active_size)
			ISSUE(c, REPLAY_EV_FILE, sg->addr,
			    "file: active_size %" PRIu64 ", blocks say "
			    "%" PRIu64, sg->active_size, ac);
		if (has_req && rq != sg->requested_size)
			ISSUE(c, REPLAY_EV_FILE, sg->addr,
			    "file: requested_size %" PRIu64 ", blocks say "
			    "%" PRIu64, sg->requested_size, rq);
	}
	free(over);
	free(has);
}

static int64_t
ev_or_end(int64_t ev)
{
	return ev >= 0 ? ev : REPLAY_EV_END;
}

/* Last event whose address lies in [a, a+size), or REPLAY_EV_END. */
static int64_t
last_touch(const struct replay *r, uint64_t a, uint64_t size)
{
	uint64_t i;

	for (i = r->n; i-- > 0;)
		if (snap_ev_action(r->t, i) != SNAP_OOM &&
		    snap_ev_addr(r->t, i) - a < size)
			return (int64_t)i;
	return REPLAY_EV_END;
}

static void
cmp_blocks(struct replay_check *c, const struct rstate *fs,
    const struct rseg *f, const struct rstate *gs, const struct rseg *g)
{
	const struct rblk *x = rblk_first(fs, f), *y = rblk_first(gs, g);

	while (x != NULL && y != NULL) {
		const struct replay_block *a = &x->b, *b = &y->b;
		uint64_t ae = a->addr + a->size, be = b->addr + b->size;

		if (a->addr == b->addr && a->size == b->size) {
			if (a->state != b->state)
				ISSUE(c, ev_or_end(b->last_ev), a->addr,
				    "block state: file %s, replay %s",
				    state_name(a->state), state_name(b->state));
			else if (a->state != SNAP_BLOCK_INACTIVE &&
			    a->requested_size != b->requested_size)
				ISSUE(c, ev_or_end(b->last_ev), a->addr,
				    "block requested_size: file %" PRIu64
				    ", replay %" PRIu64,
				    a->requested_size, b->requested_size);
			x = rblk_next(f, x);
			y = rblk_next(g, y);
			continue;
		}
		ISSUE(c, ev_or_end(b->last_ev), a->addr < b->addr ? a->addr
								   : b->addr,
		    "block: file 0x%" PRIx64 " size %" PRIu64 " %s, replay "
		    "0x%" PRIx64 " size %" PRIu64 " %s",
		    a->addr, a->size, state_name(a->state), b->addr, b->size,
		    state_name(b->state));
		/* resynchronise on the next common boundary */
		if (ae <= be)
			x = rblk_next(f, x);
		if (be <= ae)
			y = rblk_next(g, y);
	}
}

static void
cmp_segment(struct replay_check *c, const struct rstate *fs,
    const struct rseg *f, const struct rstate *gs, const struct rseg *g)
{
	const struct replay_segment *a = &f->hdr, *b = &g->hdr;
	int64_t ev = ev_or_end(b->last_ev);

	if (a->size != b->size)
		ISSUE(c, ev, a->addr, "segment size: file %" PRIu64
		    ", replay %" PRIu64, a->size, b->size);
	if (a->stream != b->stream)
		ISSUE(c, ev, a->addr, "segment stream: file %" PRIu64
		    ", replay %" PRIu64, a->stream, b->stream);
	if (a->pool_id[0] != b->pool_id[0] || a->pool_id[1] != b->pool_id[1])
		ISSUE(c, ev, a->addr, "segment pool: file (%" PRId64 ", %"
		    PRId64 "), replay (%" PRId64 ", %" PRId64 ")",
		    a->pool_id[0], a->pool_id[1], b->pool_id[0], b->pool_id[1]);
	if (a->is_large != b->is_large)
		ISSUE(c, ev, a->addr, "segment type: file %s, replay %s",
		    a->is_large ? "large" : "small",
		    b->is_large ? "large" : "small");
	if (a->is_expandable != b->is_expandable)
		ISSUE(c, ev, a->addr, "segment expandable: file %d, replay %d",
		    a->is_expandable, b->is_expandable);
	cmp_blocks(c, fs, f, gs, g);
}

static void
cmp_states(const struct replay *r, struct replay_check *c,
    const struct rstate *fin, const struct rstate *got)
{
	const struct rseg *f = rseg_first(fin), *g = rseg_first(got);

	while (f != NULL || g != NULL) {
		if (f != NULL && g != NULL && f->hdr.addr == g->hdr.addr) {
			cmp_segment(c, fin, f, got, g);
			f = rseg_next(f);
			g = rseg_next(g);
		} else if (g == NULL ||
		    (f != NULL && f->hdr.addr < g->hdr.addr)) {
			ISSUE(c, c->n_kept < 64 ? last_touch(r, f->hdr.addr,
						       f->hdr.size)
						: REPLAY_EV_END,
			    f->hdr.addr, "segment of %" PRIu64 " bytes is in "
			    "the file, not in the replay", f->hdr.size);
			f = rseg_next(f);
		} else {
			ISSUE(c, ev_or_end(g->hdr.last_ev), g->hdr.addr,
			    "segment of %" PRIu64 " bytes is in the replay, "
			    "not in the file", g->hdr.size);
			g = rseg_next(g);
		}
	}
}

/* A trace that has some of an allocation's actions (alloc,
 * free_requested, free_completed) and none of the others was recorded
 * with skip_actions (2.11), or is short: the pairs are not complete, and
 * the check says so instead of leaving the mismatches unexplained. */
static void
missing_actions(struct replay *r, struct replay_check *c)
{
	static const unsigned kinds[] = {SNAP_ALLOC, SNAP_FREE_REQUESTED,
	    SNAP_FREE_COMPLETED};
	uint64_t n[3] = {0, 0, 0}, i;
	char miss[96] = "";
	size_t k, used = 0, have = 0;

	if (r->t == NULL || r->n == 0)
		return;
	for (i = 0; i < r->n; i++)
		for (k = 0; k < 3; k++)
			if (snap_ev_action(r->t, i) == kinds[k])
				n[k]++;
	for (k = 0; k < 3; k++)
		have += n[k] > 0;
	if (have == 0 || have == 3)
		return;
	for (k = 0; k < 3; k++)
		if (n[k] == 0)
			used += (size_t)snprintf(miss + used,
			    sizeof miss - used, "%s%s", used > 0 ? " or " : "",
			    snap_action_name(kinds[k]));
	NOTE(c, REPLAY_EV_END, 0, "the trace has no %s event%s: recorded with "
	    "skip_actions, or too short to show one; alloc/free pairs are "
	    "not complete, and a mismatch may come from the missing actions",
	    miss, have == 1 ? "s" : "");
}

int
replay_check(struct replay *r, struct replay_check *c, struct sv_error *err)
{
	struct rstate fin;
	const struct rseg *sg;
	uint64_t i;

	memset(c, 0, sizeof *c);
	check_file(r, c);
	for (i = 0; i < r->n_fwd_kept; i++)
		ISSUE(c, r->fwd_issues[i].ev, r->fwd_issues[i].addr, "%s",
		    r->fwd_issues[i].msg);
	c->n_issues += r->n_fwd_issues - r->n_fwd_kept;
	if (r->info.n_undo_anomalies > 0)
		ISSUE(c, REPLAY_EV_END, 0, "%" PRIu64 " %s the final "
		    "segments when undone backwards",
		    r->info.n_undo_anomalies, r->info.n_undo_anomalies == 1 ?
		    "event does not fit" : "events do not fit");
	if (replay_seek(r, (int64_t)r->n - 1, err) != 0) {
		replay_check_destroy(c);
		return -1;
	}
	rstate_init(&fin);
	replay_final_state(r, &fin, 1);
	cmp_states(r, c, &fin, &r->cur);
	c->n_segments = fin.seg.n;
	c->n_blocks = fin.blk.n;
	for (sg = rseg_first(&fin); sg != NULL; sg = rseg_next(sg))
		if (replay_is_workspace(r, sg->hdr.addr))
			NOTE(c, REPLAY_EV_END, sg->hdr.addr,
			    "torch_npu workspace segment of %" PRIu64 " bytes: "
			    "the file shows one inactive block, its leading "
			    "workspace_snapshot/segment_alloc/alloc triple "
			    "allocates it; treated as one allocated block",
			    sg->hdr.size);
	if (r->info.n_aligned > 0)
		NOTE(c, REPLAY_EV_END, 0, "%" PRIu64 " %s at a "
		    "16 KiB boundary inside a free block, the part below "
		    "staying free (torch_npu aligns large blocks in expandable "
		    "segments)", r->info.n_aligned,
		    r->info.n_aligned == 1 ? "alloc starts" : "allocs start");
	if (r->info.legacy_no_trace)
		NOTE(c, REPLAY_EV_END, 0, "no trace events: only the state at "
		    "the end is known");
	missing_actions(r, c);
	rstate_destroy(&fin);
	return 0;
}

void
replay_check_destroy(struct replay_check *c)
{
	free(c->issues);
	free(c->notes);
	memset(c, 0, sizeof *c);
}
