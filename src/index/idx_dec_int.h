#ifndef SNAPVIEW_INDEX_IDX_DEC_INT_H
#define SNAPVIEW_INDEX_IDX_DEC_INT_H
/*
 * Private to src/index: the rules of the timeline's derived columns
 * (doc/FORMAT.md, "Decoding"), shared by their decoders (idx_dec.c) and
 * the reader of extremes over runs of events (idx_span.c), which must
 * give exactly what the decoders give.
 */
#include <stdint.h>

#include "index/idx_int.h"
#include "snapshot/snap_stripe.h"
#include "snapshot/snap_model.h"

/* The default delta of an event's total (idx_enc.c): +size for an alloc,
 * -size for a free_completed. */
static inline uint64_t
total_delta(uint8_t action, uint64_t size)
{
	if (action == SNAP_ALLOC)
		return size;
	if (action == SNAP_FREE_COMPLETED)
		return 0 - size;
	return 0;
}

static inline uint64_t
reserved_delta(uint8_t action, uint64_t size)
{
	switch (action) {
	case SNAP_SEGMENT_ALLOC:
	case SNAP_SEGMENT_MAP: return size;
	case SNAP_SEGMENT_FREE:
	case SNAP_SEGMENT_UNMAP: return 0 - size;
	default: return 0;
	}
}

static inline uint64_t
clamp_sum(uint64_t base, uint64_t sum)
{
	int64_t v = (int64_t)(base + sum);

	return v < 0 ? 0 : (uint64_t)v;
}

/* The exact change of an event, its change modulo 2^64 being d: frees
 * and segment releases take bytes away, never add them. */
static inline __int128
exact_delta(uint8_t action, uint64_t d)
{
	switch (action) {
	case SNAP_ALLOC:
	case SNAP_SEGMENT_ALLOC:
	case SNAP_SEGMENT_MAP: return (__int128)d;
	case SNAP_FREE_COMPLETED:
	case SNAP_SEGMENT_FREE:
	case SNAP_SEGMENT_UNMAP: return -(__int128)(0 - d);
	default: return (__int128)(int64_t)d;
	}
}

/* The next exception of a TEXC chunk (index after `after`, or any when
 * after is UINT64_MAX), or *next = UINT64_MAX when none is left. */
static inline int
exc_next(const uint8_t **p, const uint8_t *end, uint64_t *left,
    uint64_t *next, uint64_t *xv, uint64_t after, uint32_t n)
{
	if (*left == 0) {
		*next = UINT64_MAX;
		return 0;
	}
	if (snap_get_uv(p, end, next) != 0 || snap_get_uv(p, end, xv) != 0 ||
	    *next >= n || (after != UINT64_MAX && *next <= after))
		return -1;
	(*left)--;
	return 0;
}

/* A sum of changes, read as int64, outside (-2^62, 2^62): a device
 * without WRAP cannot have it (idx_int.h). */
static inline int
out_of_rule(uint64_t sum)
{
	int64_t v = (int64_t)sum;

	return v >= (int64_t)IDX_SUM_LIMIT || v <= -(int64_t)IDX_SUM_LIMIT;
}

#endif
