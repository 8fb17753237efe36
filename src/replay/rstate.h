#ifndef SNAPVIEW_REPLAY_RSTATE_H
#define SNAPVIEW_REPLAY_RSTATE_H
/*
 * The live allocator state of one device, private to src/replay/: its
 * segments and its blocks, each in an ordered map by address (util/avl),
 * so that any insert or removal is O(log n) whatever order a file picks.
 *
 * The blocks of all segments share one map. Invariants, kept by every
 * change the replay makes: segments do not overlap and end at or below
 * 2^64 - 1; every block lies in one segment; the blocks of a segment tile
 * it exactly, each of a non-zero size; a block's requested size is at
 * most its size. A segment's blocks are thus the blocks from its address
 * up to its end, and merging or splitting segments (expandable runs)
 * changes headers only, never moves a block.
 *
 * The lookups by address remember what they found last and try it first
 * (a free_requested and its free_completed, one after the other in most
 * traces, look up the same block and segment): the answer is the one a
 * search gives, as the remembered element is checked against its
 * successor in the map and forgotten when it leaves the map. That is a
 * write behind a const pointer: one thread at a time uses an rstate.
 *
 * Two more shortcuts serve a pass over the whole trace, where most
 * lookups ask for the block that starts at an address and its segment,
 * and a search of the map from its root was most of the time:
 * - an exact-address index of the blocks (a hash, rstate_index()), on
 *   while a pass builds the checkpoints, off for seeking, where a
 *   restore would have to refill it; and only while the state holds
 *   many blocks: a search of a map of a few dozen costs less than
 *   keeping a hash;
 * - each block remembers the segment it was last found in (rblk_seg()).
 *   A removed segment's header is left with size 0, so a remembered
 *   segment is the answer iff it holds the block's address: segments do
 *   not overlap, and an element's memory stays in its map's pool until
 *   the map is destroyed with the blocks.
 * Both only find what the ordered maps would find.
 */
#include <stdint.h>

#include "replay/replay.h"
#include "util/avl.h"
#include "util/u64map.h"

#define REPLAY_NO_BLOB UINT32_MAX

/* hdr.first_block, n_blocks, allocated, active and requested are only
 * filled in the flat view (replay_state()). */
struct rseg {
	struct avl_node node;        /* key: hdr.addr */
	struct rseg *next, *prev;    /* in address order */
	struct replay_segment hdr;
	uint32_t blob;               /* checkpoint blob of the last encoding */
	uint8_t dirty;               /* changed since that encoding */
	uint8_t pad[3];
};

struct rblk {
	struct avl_node node;        /* key: b.addr */
	struct replay_block b;
	struct rseg *sg;             /* segment it was last found in, or
					NULL (rblk_seg()) */
};

struct rstate {
	struct avl seg;
	struct rseg *seg_first;      /* the segments as a list: a walk of
					thousands at every checkpoint took a
					tenth of a build in the map */
	struct avl blk;
	int64_t at;                  /* event applied last, -1 = start */
	struct rseg *near_seg;       /* found last by rseg_find(), or NULL */
	struct rblk *near_blk;       /* by rblk_find() or rblk_at() */
	struct u64map by_addr;       /* block address -> rblk, when live */
	uint8_t indexed;             /* rstate_index() on */
	uint8_t index_live;          /* and by_addr holds every block */
};

void rstate_init(struct rstate *st);
/* Turns the shortcuts (above) on, the index filled from the blocks
 * there, or off. */
void rstate_index(struct rstate *st, int on);
/* Refills the list of segments, and the index when it is on, after the
 * maps were replaced wholesale (a restore with avl_load()). */
void rstate_reindex(struct rstate *st);
/* Blocks from which an indexed state keeps its index (512); SIZE_MAX
 * turns rstate_index() into a no-op, so that no shortcut is taken. A
 * variable for the tests, which compare builds with it at 0 (the index
 * always), a few blocks, and SIZE_MAX (plain searches). */
extern size_t rstate_index_min;
void rstate_clear(struct rstate *st);
void rstate_destroy(struct rstate *st);
/* The blocks of st that are active but were allocated before the trace
 * (alloc_ev < 0): at the end of a forward pass, its ghosts. */
uint64_t rstate_ghosts(const struct rstate *st);

static inline uint64_t
rseg_end(const struct rseg *sg)
{
	return sg->hdr.addr + sg->hdr.size;
}

/* ---- segments ----------------------------------------------------------- */
struct rseg *rseg_first(const struct rstate *st);
struct rseg *rseg_next(const struct rseg *sg);
/* Segment holding address a, or NULL. */
struct rseg *rseg_find(const struct rstate *st, uint64_t a);
/* First segment at or above a, or NULL. */
struct rseg *rseg_ge(const struct rstate *st, uint64_t a);
/* Does [a, a + size) meet a segment? (size > 0, no wrap: the caller's
 * checks.) */
int rseg_overlaps(const struct rstate *st, uint64_t a, uint64_t size);
/* A new segment header at addr (zeroed: no events, dirty, no blob), or
 * NULL when a segment starts there. Its blocks are the caller's. */
struct rseg *rseg_add(struct rstate *st, uint64_t addr, uint64_t size);
/* Removes the header only (leaving its size 0: see rblk_seg()). */
void rseg_del(struct rstate *st, struct rseg *sg);

/* ---- blocks ------------------------------------------------------------- */
/* Block holding address a, or NULL. */
struct rblk *rblk_find(const struct rstate *st, uint64_t a);
/* Block starting exactly at a, or NULL. */
struct rblk *rblk_at(const struct rstate *st, uint64_t a);
/* The segment holding b (never NULL while the invariants hold). */
struct rseg *rblk_seg(const struct rstate *st, struct rblk *b);
/* First block of sg; the next / previous one in the same segment. */
struct rblk *rblk_first(const struct rstate *st, const struct rseg *sg);
struct rblk *rblk_next(const struct rseg *sg, const struct rblk *b);
struct rblk *rblk_prev(const struct rseg *sg, const struct rblk *b);
/* Adds a copy of *b, or returns NULL when a block starts at b->addr. */
struct rblk *rblk_add(struct rstate *st, const struct replay_block *b);
/* A block at addr inside prev's old range (a split of prev: no search
 * of the map), its other fields the caller's to set, or NULL when a
 * block starts at addr. A split fills the new block in place: one made
 * on the stack and copied there was read back 16 bytes at a time from
 * stores of 1 to 8, which the CPU cannot forward (a sixth of the
 * passes' event functions, perf). */
struct rblk *rblk_new_after(struct rstate *st, struct rblk *prev,
    uint64_t addr);
void rblk_del(struct rstate *st, struct rblk *b);
/* Moves b's start to addr (between its neighbours) with its end kept. */
void rblk_move_start(struct rstate *st, struct rblk *b, uint64_t addr);
/* An inactive block [addr, addr + size) last changed by ev. */
void rblk_free_init(struct replay_block *b, uint64_t addr, uint64_t size,
    int64_t ev);
/* Merges b with its inactive neighbours in sg; returns the merged block,
 * last changed by ev. */
struct rblk *rblk_merge(struct rstate *st, const struct rseg *sg,
    struct rblk *b, int64_t ev);

#endif
