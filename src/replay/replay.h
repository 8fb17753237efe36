#ifndef SNAPVIEW_REPLAY_REPLAY_H
#define SNAPVIEW_REPLAY_REPLAY_H
/*
 * Replay engine: the allocator state of one device at any event.
 *
 * The state before the first event is reconstructed by undoing the trace
 * backwards from the final segments (as memory_viz does,
 * doc/snapshot-format.md §10.4, but with blocks kept exact: sizes, splits
 * and merges, inactive blocks); forward replay from there reproduces the
 * final segments. replay_seek() reaches any event through the nearest
 * checkpoint (every K events) plus at most K events; moving by one is
 * incremental.
 *
 * "at N" = the state after event N has been applied; N = -1 is the state
 * before the first event.
 */
#include <stdint.h>

#include "snapshot/snap_model.h"
#include "util/err.h"
#include "util/sat.h"

struct replay_block {
	uint64_t addr;
	uint64_t size;
	uint64_t requested_size; /* for inactive blocks: 0 or stale */
	uint32_t stack;          /* alloc stack, 0 if none */
	uint8_t state;           /* enum snap_block_state */
	uint8_t pad[3];
	int64_t alloc_ev;        /* event that allocated it; -1: before trace */
	int64_t last_ev;         /* last event that changed it; -1 = none */
};

struct replay_segment {
	uint64_t addr;
	uint64_t size;
	uint64_t stream;
	int64_t pool_id[2];
	uint32_t stack;
	uint8_t is_large;
	uint8_t is_expandable;
	uint8_t pad[2];
	int64_t alloc_ev;        /* segment_alloc/map event; -1 = before */
	int64_t last_ev;         /* last event that changed it; -1 = none */
	uint32_t first_block;    /* into replay_state.blocks */
	uint32_t n_blocks;
	uint64_t allocated;      /* sum of size of active_allocated blocks */
	uint64_t active;         /* allocated + pending free */
	uint64_t requested;      /* sum of requested_size of active blocks */
};

struct replay_state {
	int64_t at;                      /* event applied last, -1 = start */
	const struct replay_segment *segments; /* sorted by address */
	uint32_t n_segments;
	const struct replay_block *blocks;     /* by segment, by address */
	uint32_t n_blocks;
	uint64_t reserved;               /* sum of segment sizes */
	uint64_t allocated;              /* sum of active_allocated sizes */
	uint64_t active;
	uint64_t requested;
};

struct replay;

/* Opens a replay of device d of s (borrowed; must outlive the replay).
 * Builds the start state and checkpoints. NULL with err set on failure,
 * SV_ERR_CANCELLED when the thread's work was asked to stop (its passes
 * poll util/stop.h and meter the events they apply, two a build). */
struct replay *replay_new(const struct snapshot *s, uint32_t d,
    struct sv_error *err);
void replay_free(struct replay *r);

/* Moves to the state after event at (-1 .. n_events-1). */
int replay_seek(struct replay *r, int64_t at, struct sv_error *err);

/* Current state (borrowed; valid until the next replay_* call). */
const struct replay_state *replay_state(struct replay *r);

/* Number of events of the device (0 for a legacy file with no trace). */
uint64_t replay_n_events(const struct replay *r);

/* The pool of the segment event ev (segment_alloc, segment_map) made,
 * as the backward pass learned it from the final segments: 1 with the
 * pool id and kind, 0 when it was not learned. */
int replay_segment_attr(const struct replay *r, uint64_t ev, int64_t pool[2],
    int *is_large);

/* ---- totals (what `snapview stats --at N` prints) --------------------- */

/* Totals of a state, following _memory_viz.py segsum
 * (doc/snapshot-format.md §11): "allocated" there is requested bytes of
 * active_allocated blocks (alloc_requested); internal free = size -
 * requested of those blocks; external free = all other blocks (inactive
 * and pending free). */
struct replay_totals {
	uint64_t n_segments, n_blocks;
	uint64_t reserved;        /* sum of segment sizes */
	uint64_t allocated;       /* sum of size of active_allocated blocks */
	uint64_t active;          /* allocated + pending free (sizes) */
	uint64_t requested;       /* requested bytes of active blocks */
	uint64_t alloc_requested; /* requested bytes of active_allocated */
	uint64_t pending;         /* size of active_pending_free blocks */
	uint64_t inactive;        /* size of inactive (cached free) blocks */
	uint64_t free_internal;   /* size - requested of active_allocated */
	uint64_t free_external;   /* inactive + pending */
	uint64_t largest_free;    /* largest inactive block */
};
void replay_totals(const struct replay_state *st, struct replay_totals *t);

/* Adds one block (its state, size and requested bytes) to t as
 * replay_totals counts each block of a state; for blocks kept elsewhere
 * (the file's final segments), so that every total over blocks is this
 * one. The sums saturate: a file's sizes can add past 2^64. */
static inline void
replay_totals_add(struct replay_totals *t, unsigned state, uint64_t size,
    uint64_t requested)
{
	t->n_blocks++;
	switch (state) {
	case SNAP_BLOCK_ACTIVE_ALLOCATED:
		t->allocated = sv_sat_add(t->allocated, size);
		t->active = sv_sat_add(t->active, size);
		t->requested = sv_sat_add(t->requested, requested);
		t->alloc_requested = sv_sat_add(t->alloc_requested, requested);
		if (size > requested)
			t->free_internal = sv_sat_add(t->free_internal,
			    size - requested);
		break;
	case SNAP_BLOCK_ACTIVE_PENDING_FREE:
		t->active = sv_sat_add(t->active, size);
		t->requested = sv_sat_add(t->requested, requested);
		t->pending = sv_sat_add(t->pending, size);
		t->free_external = sv_sat_add(t->free_external, size);
		break;
	default:
		t->inactive = sv_sat_add(t->inactive, size);
		t->free_external = sv_sat_add(t->free_external, size);
		if (size > t->largest_free)
			t->largest_free = size;
		break;
	}
}

/* ---- what the reconstruction found --------------------------------------
 * Counts that describe the trace window; none of them is an error. */
struct replay_info {
	uint64_t n_events;
	uint64_t n_pre_blocks;    /* active blocks in the start state */
	uint64_t n_ghost;         /* active at end, allocated before trace */
	uint64_t n_free_no_alloc; /* free_completed of a pre-trace block */
	uint64_t n_workspace;     /* torch_npu workspace_snapshot triples */
	uint64_t n_unknown;       /* events with an unknown action, skipped */
	uint64_t n_oom, n_snapshot;
	uint64_t n_undo_anomalies; /* events the backward pass could not undo */
	uint64_t n_aligned;       /* allocs at a 16 KiB boundary inside a free
				     block (torch_npu expandable quirk) */
	int npu_rounding;         /* block sizes round (req + 32) to 512 */
	int legacy_no_trace;      /* no trace: the state at the end only */
	uint64_t k;               /* checkpoint interval */
	uint64_t n_checkpoints;
	uint64_t checkpoint_bytes; /* memory held by checkpoints */
};
const struct replay_info *replay_info(const struct replay *r);

/* ---- check (snapview check) ----------------------------------------------
 * Forward replay from the reconstructed start must reproduce the final
 * segments of the file exactly; the file's own totals must agree with its
 * blocks. Every difference is an issue: ev is the last event that touched
 * the address, REPLAY_EV_END when none did, REPLAY_EV_FILE for the file's
 * own totals. Notes are explanations, not failures (workspace segments). */
#define REPLAY_EV_END (-2)
#define REPLAY_EV_FILE (-3)
struct replay_issue {
	int64_t ev;
	uint64_t addr;
	char msg[200];
};
struct replay_check {
	uint64_t n_issues;            /* all found; REPLAY_MAX_ISSUES kept */
	struct replay_issue *issues;  /* owned */
	uint64_t n_kept;
	uint64_t n_notes;
	struct replay_issue *notes;   /* owned */
	uint64_t n_segments, n_blocks; /* of the final state */
};
#define REPLAY_MAX_ISSUES 1000
/* Fills c (caller storage; free with replay_check_destroy). Moves the
 * replay's cursor. Returns 0 (c->n_issues may be > 0), or -1 on error
 * with err set and c left empty. */
int replay_check(struct replay *r, struct replay_check *c,
    struct sv_error *err);
void replay_check_destroy(struct replay_check *c);

/* ---- checkpoint persistence ----------------------------------------------
 * replay_checkpoints_save() writes everything replay_seek() needs besides
 * the snapshot itself (checkpoints, the sizes and segment attributes the
 * backward pass learned, the info counts) and what replay_check() needs
 * of the forward pass (its findings) to one byte buffer:
 *
 *   "SVRPCK04"  u64 device  u64 n_events
 *   replay_info counts (12 x u64; see info_put in replay_save.c)
 *   u64 n_learned, n_learned x {u64 ev, u64 size}   exact block size of an
 *                                                   alloc, by event
 *   u64 n_attrs, n_attrs x {u64 ev, i64 pool0, i64 pool1,
 *                           u64 stack | large << 32 | expandable << 33}
 *   u64 n_found, u64 n_kept, n_kept x {u64 ev, u64 addr, u64 len,
 *                                      len bytes of message}
 *                   the forward pass's findings (what check reports):
 *                   all counted, the first min(n_found,
 *                   REPLAY_MAX_ISSUES) kept, by event; a message is
 *                   printable ASCII, shorter than replay_issue.msg
 *   the checkpoints (ckpt_save_head(), ckpt_write_tail(): replay_ckpt.h)
 *   u64 XXH3-64 of all bytes before it
 * All integers little-endian. Checkpoint j is the state after j*k events
 * (checkpoint 0 = the start). Unchanged segments share one blob.
 * *buf is malloc'd; the caller frees it. */
int replay_checkpoints_save(const struct replay *r, uint8_t **buf,
    size_t *len);
/* A replay built only to be saved: its checkpoints go to temporary files
 * as the forward pass makes them (tape.h), so a trace of hundreds of
 * millions of events costs little memory. It cannot seek (replay_seek()
 * fails), and replay_checkpoints_save() refuses it: it is written with
 * replay_checkpoints_write(), then freed. */
struct replay *replay_new_for_save(const struct snapshot *s, uint32_t d,
    struct sv_error *err);
/* The bytes replay_checkpoints_save() makes: their length, and the bytes
 * themselves appended to out a piece at a time (for any replay; out
 * takes over the tapes of one made by replay_new_for_save(), which can
 * then only be freed). 0, or -1 with *err an errno when a tape failed. */
uint64_t replay_checkpoints_len(const struct replay *r);
struct tape;
int replay_checkpoints_write(struct replay *r, struct tape *out, int *err);
/* Opens a replay from a saved buffer (copied) without the backward pass.
 * The buffer is untrusted: every offset is checked; a bad or stale buffer
 * (other device or event count) gives -1/NULL with err set. */
struct replay *replay_new_saved(const struct snapshot *s, uint32_t d,
    const uint8_t *buf, size_t len, struct sv_error *err);
/* Saved bytes read as they are needed (replay_new_saved_src()): span
 * hands back the n bytes at off, valid until its next call, or NULL when
 * they cannot be read; release(ctx), when not NULL, once the replay no
 * longer reads them. */
struct replay_src {
	const uint8_t *(*span)(void *ctx, uint64_t off, uint64_t n);
	void *ctx;
	void (*release)(void *ctx);
};
/* The same, reading the len saved bytes through src (taken over, even
 * on failure): the bytes before the checkpoints' blobs are read and
 * checked at once; the blobs' table and the blobs are read, and their
 * entries checked, as seeks need them, so that opening a large replay
 * costs what its seeks read. The trailing hash is not read: src is
 * whoever vouches for the bytes (the index checks its sections' hashes,
 * idx_reader_open()). */
struct replay *replay_new_saved_src(const struct snapshot *s, uint32_t d,
    const struct replay_src *src, uint64_t len, struct sv_error *err);

#endif
