#ifndef SNAPVIEW_ANALYSIS_FRAG_H
#define SNAPVIEW_ANALYSIS_FRAG_H
/*
 * Fragmentation: why reserved is far above allocated.
 *
 * The state at event N (replay): reserved, allocated, internal waste
 * (block size - requested of allocated blocks: rounding), external waste
 * (free and pending-free blocks), the largest free block, a histogram of
 * free block sizes, and per segment its free bytes and gaps (free
 * blocks).
 *
 * Cached memory: segments with no live block ("whole free segments")
 * and what torch.cuda.empty_cache() would give back (whole free segments
 * of the default pool; in expandable segments the 2 MiB pages inside
 * free blocks; private pools of CUDA graphs are left out); reserved now
 * against reserved at the Active Memory Timeline's peak and the most
 * reserved over the trace; free memory per pool (small: requests up to
 * 1 MiB, large: the rest).
 *
 * Every segment_alloc (and segment_map, for expandable segments) of the
 * trace: the gap reserved - allocated just before it (Active Memory
 * Timeline: requested bytes), the request that triggered it (the first
 * alloc after it), and, from the replayed state just before it, the free
 * bytes and the largest free block on its stream, in all pools and in
 * the pool the request needed: the memory it could not use. Each look
 * scans the whole state, so with more than AN_FRAG_EXAMINE segment allocs
 * only AN_FRAG_EXAMINE - 1 with the largest gaps and the last are looked
 * at (n_examined: AN_FRAG_EXAMINE, or one fewer when the last is among
 * the largest gaps); the others have no state (has_state 0).
 *
 * Free memory per (pool, stream): the allocator serves a request only
 * from the free blocks of the pool it is made in (the default pool
 * (0,0), a CUDA graph's, a torch.cuda.MemPool's) on the stream it is
 * made on, and of its size class (an_pool_streams). A request that found
 * no block large enough there while another (pool, stream) held one is
 * isolated (an_isolation_of): the memory was free, in the wrong place.
 * The pool of a segment alloc's request is its segment's (the final
 * segments, else the event's pool_id, else the default pool).
 *
 * Hints are short sentences, each made from the numbers that justify it:
 * expandable segments only when they are not in use already (no
 * expandable segment, no segment_map, no expandable_segments:True),
 * naming PYTORCH_NPU_ALLOC_CONF for torch_npu files; bucketing only when
 * some call site asks for large blocks of different sizes from step to
 * step (steps.h), and such a request made a segment.
 */
#include <stdint.h>

#include "analysis/site.h"
#include "analysis/steps.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"

#define AN_FRAG_BUCKETS 48 /* free-block histogram: bucket k = [2^k, 2^k+1) */
#define AN_FRAG_MAX_HINTS 5
#define AN_SMALL_REQUEST (1u << 20) /* requests up to this: small pool */
#define AN_FRAG_EXAMINE 256 /* most segment allocs whose state is looked
			       at: 255 largest gaps and the last */

struct an_frag_seg {
	uint64_t addr, size, stream;
	uint64_t allocated;     /* block bytes active_allocated */
	uint64_t free_bytes;    /* inactive blocks */
	uint64_t gaps;          /* inactive blocks */
	uint64_t largest_free;
	int is_expandable;
};

/* Free memory of one pool (0: small, 1: large). */
struct an_frag_pool {
	uint64_t segments, reserved;
	uint64_t free_bytes, free_blocks, largest_free;
};

/* Free memory of one (pool, stream). */
struct an_pool_stream {
	int64_t pool[2];
	uint64_t stream;
	uint64_t segments, reserved;
	uint64_t allocated;         /* block bytes active_allocated */
	uint64_t free_bytes;        /* inactive blocks */
	uint64_t free_blocks;
	uint64_t largest_free[2];   /* in small (0) and large (1) segments */
};

/* A request's isolation: its own (pool, stream) had no free block of its
 * size class as large as the request, another (pool, stream) had one. */
struct an_isolation {
	int isolated;
	int64_t pool[2];            /* the other (pool, stream) with the */
	uint64_t stream;            /* largest such block, */
	uint64_t largest;           /* its size */
	uint64_t other_free;        /* free bytes of the size class in the
				       other (pool, stream)s */
};

struct an_frag_state {
	int64_t at;
	uint64_t reserved;
	uint64_t allocated;         /* block bytes of active_allocated */
	uint64_t requested;         /* requested bytes of active_allocated */
	uint64_t internal;          /* allocated - requested (rounding) */
	uint64_t external;          /* inactive + pending free blocks */
	uint64_t pending;
	uint64_t largest_free;
	uint64_t free_blocks;
	uint64_t hist[AN_FRAG_BUCKETS];       /* count */
	uint64_t hist_bytes[AN_FRAG_BUCKETS]; /* bytes */
	struct an_frag_seg *segs;   /* by free bytes, largest first */
	uint32_t n_segs;
	struct an_frag_pool pools[2]; /* small, large */
	uint64_t whole_free_segs;   /* segments with no live block */
	uint64_t whole_free_bytes;
	uint64_t release_bytes;     /* what empty_cache() would give back */
	uint64_t release_segs;      /* of them whole segments */
	uint64_t private_free_bytes; /* whole free segments of graph pools */
	struct an_pool_stream *groups; /* an_pool_streams */
	uint32_t n_groups;
	int has_private;            /* a private pool holds a segment */
};

struct an_frag_alloc {
	int64_t ev;
	int is_map;                 /* segment_map (expandable) */
	uint64_t size, stream;
	uint64_t reserved_before, allocated_before, gap;
	int64_t req_ev;             /* first alloc after it, -1 if none */
	uint64_t request;           /* its requested bytes */
	uint32_t stack;             /* its stack (else the segment's) */
	uint32_t site;
	int has_state;
	uint64_t stream_free;       /* inactive bytes on the stream before */
	uint64_t stream_largest;    /* largest inactive block there */
	int large;                  /* the request's pool is the large one */
	uint64_t pool_free;         /* the same in the request's pool and */
	uint64_t pool_largest;      /* size class */
	int64_t pool[2];            /* the request's pool */
	uint64_t rounded;           /* the request as the allocator rounds */
	struct an_isolation iso;
};

enum an_hint_kind {
	AN_HINT_EXPANDABLE,
	AN_HINT_MAX_SPLIT,
	AN_HINT_BUCKETS,
	AN_HINT_EMPTY_CACHE,
	AN_HINT_ISOLATED
};

struct an_hint {
	int kind;
	char text[512];
};

struct an_frag {
	uint32_t device;
	struct an_frag_state state;
	struct an_frag_alloc *allocs; /* worst (largest gap) first */
	uint64_t n_allocs;
	int64_t last;                /* index in allocs of the last one */
	uint64_t n_examined;         /* allocs whose state was looked at: all,
					or AN_FRAG_EXAMINE - 1 with the
					largest gaps and the last */
	uint64_t n_unusable;         /* of them: free in the request's pool
					on its stream >= request, largest <
					request */
	uint64_t n_isolated;         /* of them: isolated (an_isolation) */
	struct an_hint hints[AN_FRAG_MAX_HINTS];
	int n_hints;
	/* reserved over the trace */
	int64_t peak_ev;             /* Active Memory Timeline peak, -1 */
	uint64_t peak_allocated, reserved_at_peak;
	int64_t reserved_max_ev;     /* most reserved (-1: before the trace) */
	uint64_t reserved_max;
	int expandable_in_use;
	int npu;                     /* torch_npu: PYTORCH_NPU_ALLOC_CONF */
	const char *conf_env;        /* PYTORCH_CUDA_ALLOC_CONF or _NPU_ */
	/* call sites whose large requests change size from step to step */
	uint64_t n_varying;
	uint32_t varying_stack;      /* the one with most allocations */
	uint64_t varying_lo, varying_hi, varying_steps;
};

/* Computes the report; the state is taken after event at (at < -1 or
 * past the end: the last event). r may be NULL (no block state: only
 * the timeline figures). steps: the device's steps, when the caller has
 * found them (snapview frag warns about their annotations first), or
 * NULL: found here, as an_frag() always does. */
int an_frag_with_steps(const struct snapshot *s,
    const struct idx_timeline *tl, struct replay *r, struct an_sites *sites,
    const struct an_steps *steps, int64_t at, struct an_frag *out,
    struct sv_error *err);
int an_frag(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, int64_t at, struct an_frag *out,
    struct sv_error *err);
void an_frag_destroy(struct an_frag *f);

/* Fills st from a replay state (an_frag uses it for the state at N). */
void an_frag_state_of(const struct replay_state *rs, struct an_frag_state *st);

/* The (pool, stream)s of a state that hold a segment, the default pool
 * first, then by pool id and stream, into *out (the caller frees it).
 * Returns their count. */
uint32_t an_pool_streams(const struct replay_state *rs,
    struct an_pool_stream **out);

/* Is a request of size bytes (rounded), made in pool on stream, of the
 * large size class or not, isolated among the n groups g? */
void an_isolation_of(const struct an_pool_stream *g, uint32_t n,
    const int64_t pool[2], uint64_t stream, int large, uint64_t size,
    struct an_isolation *iso);

/* "the default pool" or "pool (1,0)", into buf; returns buf. */
const char *an_pool_name(char *buf, size_t size, const int64_t pool[2]);

#endif
