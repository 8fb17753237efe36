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
 * Every segment_alloc (and segment_map, for expandable segments) of the
 * trace: the gap reserved - allocated just before it (Active Memory
 * Timeline: requested bytes), the request that triggered it (the first
 * alloc after it), and, from the replayed state just before it, the free
 * bytes and the largest free block on its stream: the memory it could
 * not use. One forward walk: replay_seek moves forward only.
 *
 * Hints are short sentences, each made from the numbers that justify it.
 */
#include <stdint.h>

#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"

#define AN_FRAG_BUCKETS 48 /* free-block histogram: bucket k = [2^k, 2^k+1) */
#define AN_FRAG_MAX_HINTS 4

struct an_frag_seg {
	uint64_t addr, size, stream;
	uint64_t allocated;     /* block bytes active_allocated */
	uint64_t free_bytes;    /* inactive blocks */
	uint64_t gaps;          /* inactive blocks */
	uint64_t largest_free;
	int is_expandable;
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
};

enum an_hint_kind {
	AN_HINT_EXPANDABLE,
	AN_HINT_MAX_SPLIT,
	AN_HINT_BUCKETS
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
	uint64_t n_unusable;         /* free on stream >= request, largest <
					request */
	struct an_hint hints[AN_FRAG_MAX_HINTS];
	int n_hints;
};

/* Computes the report; the state is taken after event at (at < -1 or
 * past the end: the last event). r may be NULL (no block state: only
 * the timeline figures). */
int an_frag(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, int64_t at, struct an_frag *out,
    struct sv_error *err);
void an_frag_destroy(struct an_frag *f);

/* Fills st from a replay state (an_frag uses it for the state at N). */
void an_frag_state_of(const struct replay_state *rs, struct an_frag_state *st);

#endif
