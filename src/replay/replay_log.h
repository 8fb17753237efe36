#ifndef SNAPVIEW_REPLAY_REPLAY_LOG_H
#define SNAPVIEW_REPLAY_REPLAY_LOG_H
/*
 * The undo log of forward steps, private to src/replay/: each step
 * records the pre-image of what it changes, so stepping back is exact
 * and costs what the step did.
 *
 * A record holds the segments and the blocks a step replaced, each as a
 * run of consecutive elements by address: before the step, n_*_pre
 * elements starting at the first one at or above *_lo (saved here);
 * after it, n_*_post elements starting there. Undoing removes the post
 * run and puts the saved pre-image back.
 */
#include <stdint.h>

#include "replay/rstate.h"

struct urec {
	uint64_t seg_lo, blk_lo;
	uint64_t seg_off, blk_off;   /* pre-images, into the pools */
	uint32_t n_seg_pre, n_seg_post;
	uint32_t n_blk_pre, n_blk_post;
};

struct ulog {
	int on;                      /* off while building checkpoints */
	int64_t base;                /* state the log can go back to */
	struct urec *rec;
	uint64_t n;
	size_t cap;
	struct replay_segment *seg;
	uint64_t n_seg;
	size_t cap_seg;
	struct replay_block *blk;
	uint64_t n_blk;
	size_t cap_blk;
};

void ulog_init(struct ulog *l);
void ulog_destroy(struct ulog *l);
/* Forgets every record: the current state (event base) is the oldest
 * one the log reaches. */
void ulog_reset(struct ulog *l, int64_t base);
/* A new empty record, or NULL when the log is off. */
struct urec *ulog_begin(struct ulog *l);
/* Saves the n segments from first (NULL when n = 0) as u's segment
 * pre-image; the run starts at lo. */
void ulog_segs(struct ulog *l, struct urec *u, uint64_t lo,
    const struct rseg *first, uint32_t n);
/* Same for n consecutive blocks from first. */
void ulog_blks(struct ulog *l, struct urec *u, uint64_t lo,
    const struct rblk *first, uint32_t n);
/* Reverts the last record on st (st->at goes back by one). */
void ulog_undo(struct ulog *l, struct rstate *st);

#endif
