#ifndef SNAPVIEW_REPLAY_REPLAY_CKPT_H
#define SNAPVIEW_REPLAY_REPLAY_CKPT_H
/*
 * Replay checkpoints, private to src/replay/: the full state every K
 * events, encoded one segment at a time into an append-only arena of
 * varint blobs; a segment that did not change since the previous
 * checkpoint reuses its blob. Knows the state containers (rstate.h) and
 * nothing of the replay itself.
 */
#include <stddef.h>
#include <stdint.h>

#include "replay/rstate.h"

struct ckpt {
	uint64_t k;                  /* the shortest interval, in events */
	uint8_t *arena;              /* segment blobs */
	uint64_t arena_len;
	size_t arena_cap;
	uint64_t *blob_off, *blob_len; /* blob id -> arena span */
	uint64_t n_blobs;
	size_t cap_blobs;
	uint64_t *pos;               /* checkpoint -> events applied */
	uint64_t *first, *count;     /* checkpoint -> its ids in ids[] */
	uint64_t n;
	size_t cap;
	uint32_t *ids;               /* blob ids, checkpoint after checkpoint */
	uint64_t n_ids;
	size_t cap_ids;
	/* ckpt_restore()'s scratch: the decoded state */
	struct rseg *dseg;
	size_t n_dseg, cap_dseg;
	struct replay_block *dblk;
	size_t n_dblk, cap_dblk;
};

void ckpt_init(struct ckpt *c, uint64_t k);
void ckpt_destroy(struct ckpt *c);
/* Appends st (the state after st->at + 1 events) as the next checkpoint;
 * encodes the segments changed since their last encoding (and records
 * the new blob ids in st). */
void ckpt_take(struct ckpt *c, struct rstate *st);
/* The last checkpoint at or before the state after event at (at >= -1;
 * there is always checkpoint 0, the start). */
uint64_t ckpt_find(const struct ckpt *c, int64_t at);
/* Replaces st with checkpoint j. -1 when j or the checkpoint is bad (a
 * loaded one is untrusted: it must decode to a possible state). */
int ckpt_restore(struct ckpt *c, uint64_t j, struct rstate *st);
/* Memory held. */
uint64_t ckpt_bytes(const struct ckpt *c);

/* Little-endian byte buffers for save / load. */
struct wbuf {
	uint8_t *p;
	size_t len, cap;
};
struct rbuf {
	const uint8_t *p;
	size_t len, off;
	int bad;                     /* read past the end */
};
void wbuf_u64(struct wbuf *w, uint64_t v);
void wbuf_bytes(struct wbuf *w, const void *p, size_t n);
uint64_t rbuf_u64(struct rbuf *b);
/* Can n records of words 8-byte words each still be read? */
int rbuf_fits(const struct rbuf *b, uint64_t n, uint64_t words);

/* The checkpoints as bytes:
 *   u64 k, n, n_ids, n_blobs, arena_len
 *   n x {u64 pos, u64 first, u64 count}   events applied; ids of its
 *                                 segments
 *   n_ids x u64                   blob ids
 *   n_blobs x {u64 off, u64 len}  into the arena
 *   arena_len bytes               segment blobs (see replay_ckpt.c)
 * ckpt_load() checks every count and offset, and that checkpoint 0 is
 * the start and the others follow in order within n_events; -1 when not. */
void ckpt_save(const struct ckpt *c, struct wbuf *w);
int ckpt_load(struct ckpt *c, struct rbuf *b, uint64_t n_events);

#endif
