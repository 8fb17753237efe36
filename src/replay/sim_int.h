/*
 * The simulator's blocks, pools and state, shared by sim.c (the
 * allocator's rules) and sim_state.c (its segments and blocks listed
 * as a snapshot lists them). Private to src/replay.
 */
#ifndef SNAPVIEW_REPLAY_SIM_INT_H
#define SNAPVIEW_REPLAY_SIM_INT_H

#include <stdint.h>

#include "replay/sim.h"
#include "util/avl.h"
#include "util/u64map.h"

enum { SET_NONE, SET_FREE, SET_UNMAPPED };

struct spool;
struct ses;

/* What a treap's search reads comes first, and a block starts a cache
 * line (slabs are aligned; the size rounds up to 128 bytes): a search
 * touches one line per node. */
struct sblk {
	_Alignas(64) struct sblk *l, *r; /* treap children in its set */
	uint64_t stream, size, addr;
	uint32_t prio;
	uint8_t allocated, pending, mapped, set;
	struct sblk *prev, *next;	/* address neighbours, one segment */
	struct sblk *pprev, *pnext;	/* the pending list */
	struct spool *pool;
	struct ses *es;			/* expandable segment, or NULL */
	uint64_t req, tag;
	int64_t gc_base;
};

struct spriv;

struct spool {
	struct sblk *free_root;		/* (stream, size, address) */
	struct sblk *unmapped_root;	/* (stream, address) */
	struct spriv *owner;		/* NULL: the default pools */
	int64_t gc_calls;		/* get_free_block calls (gc age) */
	int small;
};

struct spriv {
	int64_t id[2];
	struct spool small, large;
	int freeable;
};

struct ses {
	uint64_t base, size, page, stream;
	struct spool *pool;
};

/* A reserved range of addresses: a cudaMalloc or an expandable
 * segment's reservation. */
struct va_range {
	struct avl_node node;		/* key: start */
	uint64_t size;
};

#define SLAB 1024

struct sim {
	struct sim_conf c;
	uint64_t capacity;
	struct sim_hooks h;
	struct sim_stats st;
	int force, released;
	int plain_round;		/* 512 multiples: no divisions, pad */

	struct spool small, large;
	struct spriv *priv;
	size_t n_priv, cap_priv;
	struct ses **es;
	size_t n_es, cap_es;

	struct u64map live;		/* tag -> block (allocated, pending) */
	uint64_t near_tag;		/* the tag looked up last, and its */
	struct sblk *near;		/* block (a free_requested and its
					   free_completed: one lookup) */
	struct sblk *pending;		/* pending frees, a list */
	struct avl va;
	uint64_t synth;			/* next synthetic address */
	uint32_t rnd;			/* treap priorities (xorshift) */

	void **slabs;			/* as allocated */
	struct sblk *slab;		/* the last one, aligned */
	size_t n_slabs, cap_slabs;
	struct sblk *spare;		/* freed blocks, linked by next */
	size_t slab_used;

	struct sblk **vec;		/* scratch for walks */
	size_t cap_vec;
};

/* The first block of a slab (slabs are allocated unaligned). */
static inline struct sblk *
slab_base(void *raw)
{
	uintptr_t a = _Alignof(struct sblk);

	return (struct sblk *)(((uintptr_t)raw + a - 1) & ~(a - 1));
}

#endif
