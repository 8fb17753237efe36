#ifndef SNAPVIEW_ANALYSIS_OOM_H
#define SNAPVIEW_ANALYSIS_OOM_H
/*
 * Out-of-memory events: for each `oom` event of a device, the request
 * (rounded bytes, as the event carries it), the device's free memory
 * (cudaMemGetInfo), reserved and allocated (Active Memory Timeline,
 * requested bytes) at that moment, the largest free block per stream
 * against the request (from the replayed allocator state), and what was
 * live by call site (top.h at that event).
 *
 * Why: the caching allocator asks the device for a whole segment, not
 * the request: 2 MiB for a request up to 1 MiB (small pool), 20 MiB for
 * one under 10 MiB, else the request rounded up to 2 MiB (large pool;
 * doc/snapshot-format.md §13.4 step 3). So when the device reported at
 * least the request free, the causes that fit the numbers are listed:
 *   - the request's pool: the segment is larger than what was free;
 *   - a per-process memory fraction (set_per_process_memory_fraction):
 *     the device had room for the segment, so a cap between the process's
 *     reserved bytes and reserved + segment refused it;
 *   - other processes: the free figure is read after the failure, so
 *     memory another process gave back in between shows as free.
 * When the device was full: memory outside this process's reservations
 * (other processes, the CUDA context, libraries allocating outside the
 * caching allocator). In either case, free bytes in the request's pool
 * on its stream that add up to the request with no block large enough
 * are fragmentation. And free memory elsewhere cannot serve it: the
 * allocator serves a request only from its own pool (the event's
 * pool_id, else the default pool) and stream, so when a free block as
 * large as the request sat in another (pool, stream) (a CUDA graph's or
 * a MemPool's pool, another stream; frag.h's an_isolation_of) the
 * request failed with that memory free, isolated.
 *
 * An OOM event is matched with a later alloc of the same size on the
 * same stream (the program caught the error and tried again); with none,
 * the request failed for good. An OOM event with no stack takes the
 * stack of that alloc for its call site.
 */
#include <stdint.h>

#include "analysis/frag.h"
#include "analysis/site.h"
#include "analysis/top.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"

struct an_oom_stream {
	uint64_t stream;
	uint64_t segments;
	uint64_t reserved;
	uint64_t free_bytes;     /* inactive blocks */
	uint64_t largest_free;   /* largest inactive block */
};

enum an_oom_cause {
	AN_OOM_POOL,		/* segment > device free >= request */
	AN_OOM_FRACTION,	/* device free >= segment: a cap */
	AN_OOM_OTHERS,		/* other processes */
	AN_OOM_FRAGMENTED,	/* free in the pool, no block large enough */
	AN_OOM_ISOLATED,	/* a large enough block in another pool or
				   stream */
	AN_OOM_CAUSES
};

#define AN_OOM_MAX_CAUSES 4

struct an_oom_cause_text {
	int kind;		/* enum an_oom_cause */
	char text[400];
};

struct an_oom_event {
	int64_t ev;
	uint64_t request;        /* rounded, from the event */
	uint64_t device_free;
	uint64_t stream;         /* stream of the failed request */
	uint32_t stack;          /* malloc stack of the request */
	uint32_t site;
	uint64_t reserved;       /* after the event (timeline) */
	uint64_t allocated;      /* requested bytes live (timeline) */
	uint64_t allocated_blocks; /* block bytes active_allocated (replay) */
	int has_state;           /* replay succeeded: streams valid */
	struct an_oom_stream *streams;
	uint32_t n_streams;
	struct an_top live;      /* live by call site, depth 1 */
	int large;               /* the request's pool is the large one */
	uint64_t segment_size;   /* what the allocator asks the device for */
	int enough_free;         /* device_free >= request */
	uint64_t pool_free;      /* inactive bytes, request's pool+stream */
	uint64_t pool_largest;
	int64_t pool[2];         /* the request's pool: the event's, else
				    the default one */
	struct an_pool_stream *groups; /* free memory per (pool, stream) */
	uint32_t n_groups;
	struct an_isolation iso;
	int64_t retry_ev;        /* a later alloc of this size, or -1 */
	struct an_oom_cause_text causes[AN_OOM_MAX_CAUSES];
	int n_causes;
};

struct an_oom {
	uint32_t device;
	struct an_oom_event *events;
	uint64_t n_events;
};

/* Segment size the allocator requests for a request of size bytes. */
uint64_t an_oom_segment_size(uint64_t size);

/* r may be NULL (no block state: streams are left empty). */
int an_oom(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, struct an_oom *out,
    struct sv_error *err);
void an_oom_destroy(struct an_oom *o);

#endif
