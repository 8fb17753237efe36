#ifndef SNAPVIEW_REPLAY_SIM_H
#define SNAPVIEW_REPLAY_SIM_H
/*
 * A simulation of PyTorch's CUDA caching allocator for one device
 * (c10/cuda/CUDACachingAllocator.cpp; the rules and the revision read are
 * in doc/snapshot-format.md §13.12), under any settings (simconf.h):
 * pools per kind (small: up to 1 MiB, 2 MiB segments; large) and per
 * private pool, free blocks ordered by (stream, size, address), best fit,
 * split and merge, oversize blocks under max_split_size, rounding,
 * expandable segments mapped and unmapped in pages, garbage collection,
 * releasing cached blocks and retrying before an out-of-memory.
 *
 * Where the real allocator takes what the world gives it (the address
 * of a cudaMalloc, when a stream's events complete, whether the device
 * has memory left), the caller says it: a hook proposes the address the
 * recording got, a pending free completes when the caller says so,
 * capacity bounds the device (0: unbounded), and sim_force_fail() makes
 * the next malloc's device allocations fail as the recording shows they
 * did.
 *
 * Allocations are named by a tag of the caller's (the address the
 * recording gave them); sim_malloc() returns the simulated address.
 * Nothing here prints; a struct sim is used by one thread.
 */
#include <stdint.h>

#include "replay/replay.h"
#include "replay/simconf.h"

/* What the simulated allocator asked of the device. */
enum sim_dev_action {
	SIM_DEV_ALLOC,		/* cudaMalloc: segment_alloc */
	SIM_DEV_FREE,		/* cudaFree: segment_free */
	SIM_DEV_MAP,		/* expandable: segment_map */
	SIM_DEV_UNMAP		/* expandable: segment_unmap */
};

struct sim_hooks {
	void *ctx;
	/* called for each device action, after it */
	void (*dev)(void *ctx, int action, uint64_t addr, uint64_t size);
	/* an address for a new segment of size bytes (the recording's), or
	 * 0: any; taken only when it overlaps no simulated segment. For an
	 * expandable segment's reservation (expandable set) the address of
	 * its first mapped page. */
	uint64_t (*addr_hint)(void *ctx, uint64_t size, int expandable);
};

/* Figures of the simulated state (after the last call). */
struct sim_stats {
	uint64_t reserved;	/* mapped or cudaMalloc'd bytes */
	uint64_t allocated;	/* block bytes of live allocations */
	uint64_t requested;	/* their requested bytes */
	uint64_t active;	/* allocated + pending free (block bytes) */
	uint64_t segments;	/* as a snapshot lists them: one per
				   cudaMalloc, one per mapped run */
	uint64_t device_allocs;	/* cudaMalloc and map calls */
	uint64_t device_frees;	/* cudaFree and unmap calls */
	uint64_t ooms;		/* mallocs that failed for good */
	uint64_t gc_frees;	/* segments garbage collection gave back */
	uint64_t early_frees;	/* pending frees completed by a release */
};

/* How the next sim_malloc's device allocations fail (the recording shows
 * a release of cached blocks inside that malloc). */
enum sim_force {
	SIM_FORCE_NONE,
	SIM_FORCE_ONCE,		/* the first attempt fails */
	SIM_FORCE_UNTIL_CACHED,	/* every attempt before the release of all
				   cached blocks fails */
	SIM_FORCE_ALL		/* every attempt fails: an OOM */
};

struct sim;

/* capacity: device bytes available (0: no limit); it is also the
 * allowed memory garbage_collection_threshold is a fraction of. */
struct sim *sim_new(const struct sim_conf *c, uint64_t capacity,
    const struct sim_hooks *h);
void sim_free(struct sim *S);

/* Seeds a segment of a state (replay.h) with its blocks, as they are:
 * live blocks tagged with their address. Expandable runs of one stream,
 * pool and kind become one expandable segment; give them in address
 * order. Returns 0, or -1 when the segment overlaps one seeded before or
 * its blocks do not tile it (nothing added). */
int sim_seed_segment(struct sim *S, const struct replay_segment *sg,
    const struct replay_block *blocks);

/* The allocator's malloc() for req bytes on stream in pool (NULL or
 * {0, 0}: the default pools). Returns 0 with *addr, or -1: out of
 * memory after the releases and retries (nothing allocated). A tag
 * still live is freed first (a free the recording skipped). */
int sim_malloc(struct sim *S, uint64_t tag, uint64_t req, uint64_t stream,
    const int64_t pool[2], uint64_t *addr);
/* free(): the block stops being allocated; it waits for
 * sim_free_completed() (a stream use), which frees it. -1: no such tag. */
int sim_free_requested(struct sim *S, uint64_t tag);
int sim_free_completed(struct sim *S, uint64_t tag);
/* torch.cuda.empty_cache(): release_cached_blocks(). */
void sim_empty_cache(struct sim *S);
/* The private pool's graphs are gone: empty_cache may release it. */
void sim_pool_freeable(struct sim *S, const int64_t pool[2]);
void sim_force_fail(struct sim *S, int how);

const struct sim_stats *sim_stats(const struct sim *S);

/* The simulated segments and blocks, as a replay state holds them
 * (replay.h): segments by address as a snapshot lists them (one per
 * cudaMalloc, one per mapped run of an expandable segment), each one's
 * blocks by address (unmapped pages are no block); tags[i] is block
 * i's tag (0: free). The simulation knows no events or stacks: alloc_ev
 * and last_ev are -1, stack 0. The arrays are the struct's own and
 * reused by the next call: zero it first, sim_state_destroy() it
 * last. O(blocks + segments log segments). */
struct sim_state {
	struct replay_segment *segs;
	struct replay_block *blks;
	uint64_t *tags;
	uint32_t n_segs, n_blks;
	size_t cap_segs, cap_blks, cap_tags;
};
void sim_state(struct sim *S, struct sim_state *out);
void sim_state_destroy(struct sim_state *st);

#endif
