#ifndef SNAPVIEW_REPLAY_REPLAY_CKPT_H
#define SNAPVIEW_REPLAY_REPLAY_CKPT_H
/*
 * Replay checkpoints, private to src/replay/: the full state every K
 * events, encoded one segment at a time into an append-only arena of
 * varint blobs; a segment that did not change since the previous
 * checkpoint reuses its blob. A checkpoint is the list of its segments'
 * blobs in address order, kept as the change from the previous
 * checkpoint's list (runs copied, skipped, and the blobs made for it),
 * with a whole list now and then (a key list): a state of thousands of
 * segments of which a few change costs a few bytes a checkpoint, not
 * four bytes a segment. Knows the state containers (rstate.h) and
 * nothing of the replay itself.
 */
#include <stddef.h>
#include <stdint.h>

#include "replay/rstate.h"
#include "util/le.h"
#include "util/tape.h"

/* A checkpoint's list is a key list, or the change from the previous
 * list; at most this many changes follow a key list. */
#define CKPT_CHAIN 16

struct replay_src;

struct ckpt {
	uint64_t k;                  /* the shortest interval, in events */
	uint8_t *arena;              /* segment blobs */
	uint64_t arena_len;
	size_t arena_cap;
	uint64_t *blob_off, *blob_len; /* blob id -> arena span */
	uint64_t n_blobs;
	size_t cap_blobs;
	/* checkpoint -> events applied, its list's bytes in lists[], its
	 * segments, the first blob made for it, whether its list is a key
	 * list */
	uint64_t *pos, *loff, *llen, *count, *nb0;
	uint8_t *key;
	uint64_t n;
	size_t cap;
	uint8_t *lists;              /* the lists, one after the other */
	uint64_t lists_len;
	size_t lists_cap;
	/* ckpt_take()'s: the previous checkpoint's list and the new one,
	 * and the bytes of changes since the last key list */
	uint32_t *prev, *next;
	size_t n_prev, cap_prev, cap_next;
	uint64_t since_key, chain;
	/* ckpt_restore()'s scratch: the list and the decoded state */
	uint32_t *la, *lb;
	size_t cap_la, cap_lb;
	struct rseg *dseg;
	size_t n_dseg, cap_dseg;
	struct replay_block *dblk;
	size_t n_dblk, cap_dblk;
	/* With tapes (ckpt_use_tapes()), for checkpoints that are only
	 * written out: the arena's bytes before arena_base are in
	 * tape[0], and the blobs' table is not kept but in tape[1], as
	 * saved ({u64 off, u64 len} a blob); arena holds the rest. */
	struct tape *tape;
	/* Or, loaded by ckpt_load_src(), the blobs' table and the arena are
	 * read from src at these offsets (arena, blob_off, blob_len NULL) */
	const struct replay_src *src;
	uint64_t btab_at, arena_at;
	uint64_t arena_base;
	size_t flush;                /* arena bytes that go to tape[0] */
};

void ckpt_init(struct ckpt *c, uint64_t k);
/* Sends the arena and the blobs' table of an empty c to temporary files
 * as they grow past mem bytes (tape.h; CKPT_TAPE_MEM, tests pass less),
 * so that the checkpoints of a long trace cost the process little
 * memory; c can then only be written out (ckpt_save_head(),
 * ckpt_move_tail()), not restored. */
#define CKPT_TAPE_MEM (4u << 20)
void ckpt_use_tapes(struct ckpt *c, size_t mem);
/* Frees everything, the tapes included; c is empty again (keeping k),
 * without tapes. */
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
	int count;     /* only count the bytes in len, write none */
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

/* The checkpoints as bytes, written by ckpt_save_head() then
 * ckpt_write_tail():
 *   u64 k, n, lists_len, n_blobs, arena_len
 *   n x {u64 pos, u64 loff, u64 llen, u64 count, u64 nb0, u64 key}
 *                                 events applied; its list's bytes; its
 *                                 segments; the first blob made for it;
 *                                 1 for a key list
 *   lists_len bytes               the lists (see replay_ckpt.c)
 *   n_blobs x {u64 off, u64 len}  into the arena
 *   arena_len bytes               segment blobs (see replay_ckpt.c)
 * ckpt_load() checks every count and offset, and that checkpoint 0 is
 * the start with a key list, the others follow in order within n_events
 * and each list is at most CKPT_CHAIN changes after a key list; -1 when
 * not. A list is checked when a restore reads it. What c keeps of b's
 * bytes is copied. */
void ckpt_save_head(const struct ckpt *c, struct wbuf *w);
/* The rest: the blobs' table and the arena, handed to put a piece at a
 * time, from memory; -1 (EINVAL in *err) for checkpoints on tapes,
 * which ckpt_move_tail() writes, or read from a source. */
int ckpt_write_tail(struct ckpt *c,
    void (*put)(void *ctx, const void *p, size_t n), void *ctx, int *err);
/* The same bytes moved to the end of out, from c's tapes (those of
 * ckpt_use_tapes()) by tape_take() rather than copied, the arena's last
 * piece written; seen() is handed every byte in order as put would have
 * been (a hash). c's checkpoints are then gone: a replay is freed next.
 * -1 when a tape failed (its errno in *err). */
int ckpt_move_tail(struct ckpt *c, struct tape *out,
    void (*seen)(void *ctx, const void *p, size_t n), void *ctx, int *err);
int ckpt_load(struct ckpt *c, struct rbuf *b, uint64_t n_events);
/* The same, from b holding the bytes before the blobs' table only: the
 * table and the arena, rest bytes after b's, are read from src when a
 * restore needs them (its entries checked then), so that a load reads
 * no more of them than its seeks do (src: replay.h). src must outlive
 * c. *own is the heap buffer b's bytes are in: the lists, its last
 * bytes, are moved to its start and it is taken over (*own NULL; b is
 * not to be read again), unless the load fails before them. */
int ckpt_load_src(struct ckpt *c, struct rbuf *b, uint64_t n_events,
    const struct replay_src *src, uint64_t rest, uint8_t **own);

#endif
