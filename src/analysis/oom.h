#ifndef SNAPVIEW_ANALYSIS_OOM_H
#define SNAPVIEW_ANALYSIS_OOM_H
/*
 * Out-of-memory events: for each `oom` event of a device, the request
 * (rounded bytes, as the event carries it), the device's free memory
 * (cudaMemGetInfo), reserved and allocated (Active Memory Timeline,
 * requested bytes) at that moment, the largest free block per stream
 * against the request (from the replayed allocator state), and what was
 * live by call site (top.h at that event).
 */
#include <stdint.h>

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
};

struct an_oom {
	uint32_t device;
	struct an_oom_event *events;
	uint64_t n_events;
};

/* r may be NULL (no block state: streams are left empty). */
int an_oom(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, struct an_oom *out,
    struct sv_error *err);
void an_oom_destroy(struct an_oom *o);

#endif
