#ifndef SNAPVIEW_REPLAY_REPLAY_INT_H
#define SNAPVIEW_REPLAY_REPLAY_INT_H
/*
 * Private to src/replay/: the live allocator state (segments, each with
 * its own block array) and the replay handle shared by replay.c,
 * replay_ckpt.c and replay_check.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "replay/replay.h"

/* Live segment: header fields in hdr (first_block/n_blocks/allocated/
 * active/requested are only filled in the flat view). */
struct rseg {
	struct replay_segment hdr;
	struct replay_block *b; /* owned, by address, tiling the segment */
	uint32_t n, cap;
	uint32_t blob;          /* checkpoint blob id of the last encoding */
	uint8_t dirty;          /* changed since that encoding */
	uint8_t pad[3];
};

struct rstate {
	struct rseg *seg;       /* by address */
	uint32_t n, cap;
	int64_t at;
};

/* Undo record of one forward event: the pre-image of what it changed. */
enum { U_NONE, U_BLOCKS, U_SEGS };
struct urec {
	uint8_t kind;
	uint32_t seg;           /* segment index, or first segment index */
	uint32_t lo;            /* first block (U_BLOCKS) */
	uint32_t n_pre, n_post; /* blocks (U_BLOCKS) or segments (U_SEGS) */
	uint64_t pre_off;       /* into blk_pool (U_BLOCKS) / seg_pool */
	int64_t seg_last_ev;
};

struct learned {
	uint64_t ev, size;
};
struct segattr {
	uint64_t ev;
	int64_t pool[2];
	uint32_t stack;
	uint8_t is_large, is_expandable;
};

#define REPLAY_NO_BLOB UINT32_MAX

struct replay {
	const struct snapshot *s;       /* borrowed */
	const struct snap_trace *t;     /* borrowed; NULL if none */
	uint32_t device;
	uint64_t n;                     /* events */
	struct replay_info info;

	struct rstate cur;              /* state at cur.at */
	struct rstate tmp;              /* scratch for restores */

	/* backward-pass knowledge for forward replay */
	struct learned *learned;        /* by ev */
	uint64_t n_learned, cap_learned;
	struct segattr *attrs;          /* by ev */
	uint64_t n_attrs, cap_attrs;
	uint64_t *workspace;            /* workspace segment addresses */
	uint64_t n_workspace;

	/* checkpoints */
	uint64_t k;
	uint8_t *arena;
	uint64_t arena_len, arena_cap;
	uint64_t *ref_off, *ref_len;    /* blob id -> arena span */
	uint64_t n_refs, cap_refs;
	uint64_t *ck_first, *ck_n;      /* checkpoint -> blob ids in refs_of */
	uint64_t n_ck, cap_ck;
	uint32_t *ck_refs;              /* blob ids, per checkpoint */
	uint64_t n_ck_refs, cap_ck_refs;

	/* undo log of forward events since log_base */
	int logging;
	int64_t log_base;
	struct urec *log;
	uint64_t n_log, cap_log;
	struct replay_block *blk_pool;
	uint64_t n_blk_pool, cap_blk_pool;
	struct rseg *seg_pool;          /* b = NULL; blocks in blk_pool */
	uint64_t n_seg_pool, cap_seg_pool;

	/* forward anomalies of the build pass (for check) */
	struct replay_issue *fwd_issues;
	uint64_t n_fwd_issues, n_fwd_kept;
	int collect;

	int npu_round;

	/* pre-trace block sizes learned from a forward pass (addr -> size):
	 * an alloc that landed inside the free space after such a block
	 * proves the block reached up to the alloc */
	struct learned *fix;
	uint64_t n_fix, cap_fix, n_fix_new;

	/* flat view */
	struct replay_state view;
	struct replay_segment *vseg;
	size_t cap_vseg;
	struct replay_block *vblk;
	size_t cap_vblk;
	int view_valid;
};

/* state helpers (replay.c) */
void rstate_clear(struct rstate *st);
void rstate_destroy(struct rstate *st);
void rstate_copy(struct rstate *dst, const struct rstate *src);
struct rseg *rstate_insert_seg(struct rstate *st, uint32_t at);
int32_t rstate_find_seg(const struct rstate *st, uint64_t addr);
void rseg_reserve(struct rseg *sg, uint32_t n);
void replay_apply(struct replay *r, struct rstate *st, uint64_t i);
void replay_issue_add(struct replay_issue **v, uint64_t *n, uint64_t *kept,
    int64_t ev, uint64_t addr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* The final state as the file shows it; patch = workspace segments as one
 * allocated block. */
void replay_final_state(const struct replay *r, struct rstate *st, int patch);
int replay_is_workspace(const struct replay *r, uint64_t addr);
struct replay *replay_alloc_for_load(const struct snapshot *s, uint32_t d);

/* checkpoints (replay_ckpt.c) */
void ckpt_take(struct replay *r, const struct rstate *st);
int ckpt_restore(struct replay *r, uint64_t j, struct rstate *st);
void ckpt_free(struct replay *r);

#endif
