#ifndef SNAPVIEW_REPLAY_REPLAY_H
#define SNAPVIEW_REPLAY_REPLAY_H
/*
 * Replay engine: the allocator state of one device at any event.
 *
 * The state before the first event is reconstructed by undoing the trace
 * backwards from the final segments (as memory_viz does, §10.4, but with
 * blocks kept exact: sizes, splits and merges, inactive blocks); forward
 * replay from there reproduces the final segments. replay_seek() reaches
 * any event through the nearest checkpoint (every K events) plus at most
 * K events; moving by one is incremental.
 *
 * "at N" = the state after event N has been applied; N = -1 is the state
 * before the first event.
 */
#include <stdint.h>

#include "snapshot/snap_model.h"
#include "util/err.h"

struct replay_block {
	uint64_t addr;
	uint64_t size;
	uint64_t requested_size; /* for inactive blocks: 0 or stale */
	uint32_t stack;          /* alloc stack, 0 if none */
	uint8_t state;           /* enum snap_block_state */
	uint8_t pad[3];
	int64_t alloc_ev;        /* event that allocated it; -1 = before trace */
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
 * Builds the start state and checkpoints. NULL with err set on failure. */
struct replay *replay_new(const struct snapshot *s, uint32_t d,
    struct sv_error *err);
void replay_free(struct replay *r);

/* Moves to the state after event at (-1 .. n_events-1). */
int replay_seek(struct replay *r, int64_t at, struct sv_error *err);

/* Current state (borrowed; valid until the next replay_* call). */
const struct replay_state *replay_state(struct replay *r);

#endif
