/*
 * Replay engine: the exact allocator state (segments and every block) of
 * one device at any event.
 *
 * How the state is found.
 *
 * 1. The final state is the device's `segments` (blocks with address,
 *    size, state; inactive blocks' requested_size is stale and dropped).
 *    torch_npu workspace segments (the leading workspace_snapshot,
 *    segment_alloc, alloc triples, doc/snapshot-format.md §16.4) are
 *    patched to one allocated block, as the triple says; check reports
 *    that as a note.
 *
 * 2. Backward pass (once): undo every event from the last to the first.
 *    Undoing an alloc frees its block and merges it with free neighbours;
 *    undoing a free_completed must re-create the block inside the free run
 *    that the free merged into, and the event carries only the requested
 *    size, so the block size is genuinely unknown there. It does not
 *    matter for the start state when the alloc of that block is in the
 *    trace (undoing the alloc merges whatever we guessed back into free
 *    space: free runs are kept maximal, which the allocator guarantees
 *    too, doc/snapshot-format.md §13.5). It only matters for blocks
 *    allocated before the trace (frees with no alloc, ring buffer
 *    truncation, doc/snapshot-format.md §16.8): there we use the
 *    allocator's own rule: round_size (512 granularity; torch_npu adds 32
 *    bytes first, detected per device by replay_round.h) and should_split
 *    (doc/snapshot-format.md §13.4 step 8: small pool or expandable:
 *    split iff remainder >= 512; large: iff remainder > 1 MiB).
 *    When that guess is wrong the trace says so later, and we use it:
 *    - forward, an alloc that lands inside the free space right after a
 *      pre-trace block proves the block reached up to the alloc (an alloc
 *      always takes the lowest part of a free block): the size is
 *      recorded and the whole build runs again (at most 4 passes; one
 *      extra pass on the truncated property-test traces that needed it);
 *    - backward, re-creating a block inside a guessed pre-trace block
 *      (whole-block rule took the run) shrinks the guess to end there.
 *    The backward pass also learns, for every alloc whose block survives
 *    to the end, its exact block size, and for every segment_alloc/
 *    segment_map the segment's attributes (pool, type, stack).
 *
 * 3. Forward replay from the start state is then the allocator itself:
 *    an alloc takes the lowest part of the free block at its address, of
 *    the learned size if known, else round_size + should_split on the free
 *    block it finds (exact, since the start state is); free_requested
 *    marks the block pending; free_completed frees and merges;
 *    segment_alloc/free add/remove segments; segment_map/unmap grow,
 *    shrink, split and merge expandable runs (one segment per contiguous
 *    mapped run, as the snapshot shows them). Events that do not fit the
 *    state are counted as anomalies (check reports them), never fatal.
 *    One documented quirk is not an anomaly: torch_npu (detected by its
 *    rounding) starts large blocks in expandable segments at a 16 KiB
 *    boundary inside a free block and leaves the part below free (the NPU
 *    fixture: 421 such allocs, 15872-byte free blocks before them); the
 *    replay carves the block there exactly as the allocator did.
 *
 * Building is two passes over the whole trace, on the thread that opens
 * the replay; nothing else is learned from the backward pass until it
 * ends, so they cannot overlap. But when the index's build hands it a
 * forward pass made beside the parse from an empty start
 * (replay_early.c), and the backward pass finds an empty start and
 * learns nothing that pass did not use, that pass is the build's and
 * only the backward pass runs after the parse; when that pass also ends
 * in the file's final state and made nothing the backward pass would
 * learn otherwise, none does (replay_early_whole()). While they run, the
 * state also finds a block by its exact address in a hash and a block's
 * segment from where it was last found (rstate.h), and a second thread
 * reads the events a few chunks ahead of each pass, decoding the index's
 * stripes (replay_evs.c): the opening thread then does little more than
 * apply the events, and the decoding, a fifth of a pass, goes to the
 * other core (bench/README.md has the timings). Both passes poll the thread's
 * stop flag (util/stop.h), so that an index build can be cancelled in
 * them, and meter the events, so that it can tell how far they are.
 *
 * The state lives in ordered maps by address (rstate.h): a file picks
 * the order of its addresses, and a sorted array with a memmove per
 * insert was quadratic on allocations in descending order; every insert
 * and removal is O(log n) now. The passes are in files of their own
 * (replay_int.h lists them); this one builds a replay and seeks it.
 *
 * Seeking. Checkpoints hold the full state, encoded per segment (varints,
 * ~10 bytes a block) and shared between checkpoints when a segment did
 * not change (replay_ckpt.c); one every K = 4096 events, or every
 * (blocks in the state) / 4 events when that is more, so that their
 * memory stays linear in the trace even when the state grows with it
 * (a trace that never frees: fixed intervals made it quadratic).
 * replay_seek(N) restores the checkpoint at or before N and applies the
 * events after it. Every forward step records the pre-image of what it
 * changed in an undo log, so stepping back is exact and costs what the
 * step did while the log reaches; past its base a seek goes through the
 * checkpoint. A seek costs one restore (decoding every block of the
 * state, O(n)) plus at most max(K, blocks / 4) events, each a few map
 * operations; bench/replay.sh measures it (bench/README.md).
 */
#include "config.h"

#include "replay/replay.h"

#include <stdlib.h>
#include <string.h>

#include "replay/replay_int.h"
#include "replay/replay_round.h"
#include "util/stop.h"
#include "util/xalloc.h"

#define LOG_MAX (4 * REPLAY_K)
#define MAX_PASSES 4

/* ---- construction -------------------------------------------------------- */

struct replay *
replay_open(const struct snapshot *s, uint32_t d)
{
	struct replay *r = xcalloc(1, sizeof *r);

	r->s = s;
	r->device = d;
	r->t = snap_trace_of(s, d);
	r->n = r->t != NULL ? r->t->n : 0;
	rstate_init(&r->cur);
	avl_init(&r->fix, sizeof(struct fix));
	ckpt_init(&r->ck, REPLAY_K);
	ulog_init(&r->log);
	r->info.n_events = r->n;
	r->info.k = REPLAY_K;
	r->info.legacy_no_trace = r->n == 0;
	r->npu_round = replay_round_detect(s, d, NULL) == REPLAY_ROUND_NPU;
	r->info.npu_rounding = r->npu_round;
	replay_find_workspace(r);
	return r;
}

static void
count_start(struct replay *r)
{
	const struct rblk *b;

	for (b = avl_first(&r->cur.blk); b != NULL; b = avl_next(b))
		r->info.n_pre_blocks += b->b.state != SNAP_BLOCK_INACTIVE;
}

/* Forward pass over the whole trace: checkpoints and anomalies. A
 * checkpoint costs up to the size of the state, so the interval grows
 * with it: at least K events, and at least a quarter of the blocks the
 * state holds. Checkpoint memory is then linear in the trace whatever
 * the state (at most 4 block encodings per event), and a seek still
 * costs about one decoding of the state. */
static int
build_forward(struct replay *r)
{
	uint64_t i, last = 0;

	struct evs es;

	r->collect = 1;
	ckpt_take(&r->ck, &r->cur);
	evs_open(&es, r->t, r->n, 0);
	for (i = 0; i < r->n; i++) {
		uint64_t gap = r->cur.blk.n / 4;

		if (sv_stop_poll(i)) {
			evs_close(&es);
			return -1;
		}
		replay_apply_ev(r, &r->cur, i, evs_get(&es, i));
		if (i + 1 < r->n && i + 1 - last >= (gap > r->ck.k ? gap
								   : r->ck.k)) {
			ckpt_take(&r->ck, &r->cur);
			last = i + 1;
		}
	}
	evs_close(&es);
	r->collect = 0;
	r->info.n_ghost += rstate_ghosts(&r->cur);
	return 0;
}

/* Forgets everything a build learned except the fixes. */
static void
reset_build(struct replay *r)
{
	struct replay_info keep = r->info;

	ckpt_destroy(&r->ck);
	if (r->tape_mem > 0)
		ckpt_use_tapes(&r->ck, r->tape_mem);
	r->n_learned = 0;
	r->n_attrs = 0;
	free(r->fwd_issues);
	r->fwd_issues = NULL;
	r->n_fwd_issues = r->n_fwd_kept = 0;
	memset(&r->info, 0, sizeof r->info);
	r->info.n_events = keep.n_events;
	r->info.k = keep.k;
	r->info.legacy_no_trace = keep.legacy_no_trace;
	r->info.npu_rounding = keep.npu_rounding;
	r->info.n_workspace = keep.n_workspace;
}

/* x, an early pass, as the build: what r learned moved into it, r
 * freed. */
static struct replay *
take_early(struct replay *r, struct replay *x)
{
	replay_early_adopt(r, x);
	replay_free(r);
	return x;
}

struct replay *
replay_build(const struct snapshot *s, uint32_t d, size_t tape_mem,
    struct replay *early, struct sv_error *err)
{
	struct replay *r;
	int pass;

	if (s == NULL) {
		replay_free(early);
		sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET, "no snapshot");
		return NULL;
	}
	r = replay_open(s, d);
	r->tape_mem = tape_mem;
	if (tape_mem > 0)
		ckpt_use_tapes(&r->ck, tape_mem);
	/* the passes look blocks up by their address all the time; seeks
	 * restore whole states, which would have to refill the index */
	rstate_index(&r->cur, 1);
	if (early != NULL) {
		int whole;

		replay_final_state(r, &r->cur, 1);
		whole = replay_early_whole(r, early);
		replay_early_settle(early);
		if (whole) {
			/* the pass this one would make, and all that its
			 * backward pass would learn, made beside the parse */
			replay_early_learn(r, early);
			r = take_early(r, early);
			early = NULL;
			goto built;
		}
	}
	for (pass = 0;; pass++) {
		r->n_fix_new = 0;
		replay_final_state(r, &r->cur, 1);
		if (replay_backward(r, &r->cur) != 0)
			goto stopped;
		count_start(r);
		if (early != NULL && replay_early_fits(r, early)) {
			/* the pass this one would make, made beside the
			 * parse */
			r = take_early(r, early);
			early = NULL;
			break;
		}
		replay_free(early);
		early = NULL;
		if (build_forward(r) != 0)
			goto stopped;
		if (r->n_fix_new == 0 || pass == MAX_PASSES - 1)
			break;
		reset_build(r);
	}
built:
	r->info.n_checkpoints = r->ck.n;
	r->info.checkpoint_bytes = ckpt_bytes(&r->ck) +
	    r->n_learned * sizeof *r->learned + r->n_attrs * sizeof *r->attrs;
	rstate_index(&r->cur, 0);
	r->log.on = 1;
	ulog_reset(&r->log, r->cur.at);
	return r;
stopped:
	replay_free(early);
	replay_free(r);
	sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET, "cancelled");
	return NULL;
}

struct replay *
replay_new(const struct snapshot *s, uint32_t d, struct sv_error *err)
{
	return replay_build(s, d, 0, NULL, err);
}

struct replay *
replay_new_for_save(const struct snapshot *s, uint32_t d,
    struct sv_error *err)
{
	return replay_build(s, d, CKPT_TAPE_MEM, NULL, err);
}

void
replay_free(struct replay *r)
{
	if (r == NULL)
		return;
	rstate_destroy(&r->cur);
	ckpt_destroy(&r->ck);
	if (r->src.release != NULL)
		r->src.release(r->src.ctx);
	ulog_destroy(&r->log);
	avl_destroy(&r->fix);
	free(r->learned);
	free(r->attrs);
	free(r->workspace);
	free(r->fwd_issues);
	free(r->seen);
	free(r->made);
	free(r->vseg);
	free(r->vblk);
	free(r);
}

uint64_t
replay_n_events(const struct replay *r)
{
	return r->n;
}

const struct replay_info *
replay_info(const struct replay *r)
{
	return &r->info;
}

/* ---- seeking ------------------------------------------------------------- */

int
replay_seek(struct replay *r, int64_t at, struct sv_error *err)
{
	int64_t cur = r->cur.at, k = (int64_t)r->ck.k;
	uint64_t j;

	if (at < -1 || at >= (int64_t)r->n)
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "event %lld out of range (-1 .. %lld)", (long long)at,
		    (long long)r->n - 1);
	if (at == cur)
		return 0;
	r->view_valid = 0;
	if (at < cur && at >= r->log.base && cur - at <= k) {
		while (r->cur.at > at)
			ulog_undo(&r->log, &r->cur);
		return 0;
	}
	j = ckpt_find(&r->ck, at);
	/* restore when stepping from here would cost K events more than
	 * stepping from the checkpoint */
	if (at < cur || at - cur > at + 1 - (int64_t)r->ck.pos[j] + k) {
		if (ckpt_restore(&r->ck, j, &r->cur) != 0)
			return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
			    "replay: checkpoint %llu is corrupt",
			    (unsigned long long)j);
		ulog_reset(&r->log, r->cur.at);
	}
	if (r->log.n > LOG_MAX)
		ulog_reset(&r->log, r->cur.at);
	while (r->cur.at < at)
		replay_apply(r, &r->cur, (uint64_t)(r->cur.at + 1));
	return 0;
}

/* ---- flat view ----------------------------------------------------------- */

const struct replay_state *
replay_state(struct replay *r)
{
	struct replay_state *v = &r->view;
	const struct rseg *sg;
	const struct rblk *b;
	uint64_t nb = 0;
	uint32_t i = 0;

	if (r->view_valid)
		return v;
	if (r->cur.seg.n > r->cap_vseg)
		r->vseg = xgrow(r->vseg, &r->cap_vseg, r->cur.seg.n,
		    sizeof *r->vseg);
	if (r->cur.blk.n > r->cap_vblk)
		r->vblk = xgrow(r->vblk, &r->cap_vblk, r->cur.blk.n,
		    sizeof *r->vblk);
	memset(v, 0, sizeof *v);
	/* one walk over the blocks in address order: each lies in a
	 * segment, and the segments come in address order too */
	b = avl_first(&r->cur.blk);
	for (sg = rseg_first(&r->cur); sg != NULL; sg = rseg_next(sg), i++) {
		struct replay_segment *vs = &r->vseg[i];
		uint64_t end = rseg_end(sg);

		*vs = sg->hdr;
		vs->first_block = (uint32_t)nb;
		vs->allocated = vs->active = vs->requested = 0;
		for (; b != NULL && b->b.addr < end; b = avl_next(b)) {
			struct replay_block *vb = &r->vblk[nb++];

			*vb = b->b;
			if (vb->state == SNAP_BLOCK_INACTIVE) {
				vb->requested_size = 0;
				continue;
			}
			if (vb->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				vs->allocated += vb->size;
			vs->active += vb->size;
			vs->requested += vb->requested_size;
		}
		vs->n_blocks = (uint32_t)(nb - vs->first_block);
		v->reserved += vs->size;
		v->allocated += vs->allocated;
		v->active += vs->active;
		v->requested += vs->requested;
	}
	v->at = r->cur.at;
	v->segments = r->vseg;
	v->n_segments = i;
	v->blocks = r->vblk;
	v->n_blocks = (uint32_t)nb;
	r->view_valid = 1;
	return v;
}

void
replay_totals(const struct replay_state *st, struct replay_totals *t)
{
	uint32_t i;

	memset(t, 0, sizeof *t);
	t->n_segments = st->n_segments;
	for (i = 0; i < st->n_segments; i++)
		t->reserved = sv_sat_add(t->reserved, st->segments[i].size);
	for (i = 0; i < st->n_blocks; i++)
		replay_totals_add(t, st->blocks[i].state, st->blocks[i].size,
		    st->blocks[i].requested_size);
}
