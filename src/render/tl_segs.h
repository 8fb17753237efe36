#ifndef SNAPVIEW_RENDER_TL_SEGS_H
#define SNAPVIEW_RENDER_TL_SEGS_H
/*
 * The elements of the Active Cached Segment Timeline (memory_viz's second
 * timeline, doc/snapshot-format.md §10.3): reserved memory as bands, one per
 * cudaMalloc'd segment, in the same element form as the allocation
 * timeline (struct idx_elem) so the same stacking draws both.
 *
 * Unlike memory_viz, which ignores them, segment_map and segment_unmap
 * count: an expandable segment is one element per mapped range, and an
 * unmap ends every range it covers (a range it covers in part leaves the
 * rest as a new element from that event). A segment_free or unmap of
 * memory the trace never mapped is an element alive from the start
 * (IDX_ELEM_PRE); a final segment, or the part of one, that no trace
 * range covers is alive for the whole trace (IDX_ELEM_GHOST). On a
 * consistent file the live elements after each event add up to the
 * timeline's reserved bytes (idx_tl_reserved).
 *
 * Cost: O(s log s) for s segment events (live ranges in a treap).
 */
#include <stdint.h>

#include "index/idx_timeline.h"
#include "snapshot/snap_model.h"

struct tl_segs {
	struct idx_elem *elems;  /* trace order, then ghosts */
	uint64_t n;
	uint64_t n_pre, n_ghost;
};

/* Builds the segment elements of device d of s (trace t, may be NULL),
 * from evs, the n segment events of t (alloc, free, map, unmap) in
 * order: the timeline model's list of them (tl_model.seg_evs). Asked to
 * stop (util/stop.h), it ends early: out is then incomplete. */
void tl_segs_build(struct tl_segs *out, const struct snapshot *s,
    uint32_t d, const struct snap_trace *t, const int64_t *evs, uint64_t n);
void tl_segs_destroy(struct tl_segs *sg);

#endif
