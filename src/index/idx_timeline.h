#ifndef SNAPVIEW_INDEX_IDX_TIMELINE_H
#define SNAPVIEW_INDEX_IDX_TIMELINE_H
/*
 * Derived per-device data: the alloc<->free pairing of every allocation
 * ("elements", as memory_viz's Active Memory Timeline defines them,
 * doc/snapshot-format.md §10.2), running totals after every event, and the
 * peak. Built in one pass from a struct snapshot; the index stores it so
 * a reopen needs no pass at all.
 *
 * Element semantics (memory_viz, doc/snapshot-format.md §10.2):
 *   - an `alloc` starts an element (size = requested bytes);
 *   - the matching `free_completed` (same address, most recent alloc)
 *     ends it; a pending free still counts as allocated;
 *   - a `free_completed` with no alloc before it is an element alive from
 *     the start (IDX_ELEM_PRE), its size and stack from the free event;
 *   - an active_allocated block of the final segments whose address is not
 *     live at the end of the trace is alive for the whole trace
 *     (IDX_ELEM_GHOST), size = its requested_size.
 * Event numbers: "after event i" means event i has been applied; -1 is the
 * state before the first event.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"
#include "util/err.h"

#define IDX_ELEM_PRE 0x1   /* freed in the trace, allocated before it */
#define IDX_ELEM_GHOST 0x2 /* alive in the final segments, never seen */
#define IDX_NO_EVENT (-1)

struct idx_elem {
	uint64_t addr;
	uint64_t size;     /* requested bytes */
	uint64_t stream;
	int64_t alloc_ev;  /* alloc event, or -1 when alive before the trace */
	int64_t free_ev;   /* free_completed event, or -1 when alive at end */
	uint32_t stack;    /* alloc stack (free stack for IDX_ELEM_PRE) */
	uint32_t flags;
};

struct idx_timeline {
	uint32_t device;
	uint64_t n_events;
	/* Elements in creation order: trace allocs and pre-trace frees in
	 * event order, then ghosts in segment/address order. */
	struct idx_elem *elems;
	uint64_t n_elems;
	/* Per event i: the element that event i starts or ends, or
	 * UINT64_MAX. */
	uint64_t *ev_elem;
	/* Per event i: Active Memory Timeline total after event i (sum of
	 * requested bytes of live elements). */
	uint64_t *total;
	/* Per event i: reserved bytes (sum of segment sizes) after event i,
	 * derived backwards from the final segments. */
	uint64_t *reserved;
	uint64_t base_total;    /* total before event 0 */
	uint64_t base_reserved; /* reserved before event 0 */
	/* The highest total, the state before the first event included;
	 * peak_ev is the first event after which the total is peak, or -1
	 * when the state before the first event is already peak (or there
	 * are no events). */
	uint64_t peak;
	int64_t peak_ev;
	uint64_t n_pre;         /* frees without alloc (ring buffer wrapped) */
	uint64_t n_ghost;       /* final blocks never allocated in trace */
	int owned;              /* arrays are heap-owned (else borrowed) */
	/* Stripe-coded storage (an index's; the arrays above are then
	 * NULL): ev_elem, total and reserved are decoded from the event
	 * stripes, elements from the element stripes. */
	const struct snap_stripeset *ev_stripes;
	const struct snap_stripeset *el_stripes;
};

/*
 * Per-event and per-element data are read only through these accessors,
 * never through the arrays, so that their storage (heap, mapped index,
 * stripe-coded columns) can change without touching a reader.
 * i < tl->n_events; k < tl->n_elems.
 */

/* Active Memory Timeline total after event i; i == -1 gives the total
 * before the first event. */
static inline uint64_t
idx_tl_total(const struct idx_timeline *tl, int64_t i)
{
	if (i < 0)
		return tl->base_total;
	if (tl->ev_stripes == NULL)
		return tl->total[i];
	return *(const uint64_t *)snap_stripe_at(tl->ev_stripes, SNAP_COL_TOTAL,
	    (uint64_t)i, 8);
}

/* Reserved bytes after event i; i == -1 gives the bytes before it. */
static inline uint64_t
idx_tl_reserved(const struct idx_timeline *tl, int64_t i)
{
	if (i < 0)
		return tl->base_reserved;
	if (tl->ev_stripes == NULL)
		return tl->reserved[i];
	return *(const uint64_t *)snap_stripe_at(tl->ev_stripes,
	    SNAP_COL_RESERVED, (uint64_t)i, 8);
}

/* The element event i starts or ends, or UINT64_MAX. */
static inline uint64_t
idx_tl_ev_elem(const struct idx_timeline *tl, uint64_t i)
{
	if (tl->ev_stripes != NULL)
		return *(const uint64_t *)snap_stripe_at(tl->ev_stripes,
		    SNAP_COL_EV_ELEM, i, 8);
	return tl->ev_elem != NULL ? tl->ev_elem[i] : UINT64_MAX;
}

/* Whether an element created by event alloc_ev (-1: before the trace)
 * and freed by event free_ev (-1: never) is alive after event at (-1:
 * before the first): the one test of it. */
static inline int
idx_alive_after(int64_t alloc_ev, int64_t free_ev, int64_t at)
{
	return alloc_ev <= at && (free_ev < 0 || free_ev > at);
}

/* Element k, by value. */
static inline struct idx_elem
idx_tl_elem(const struct idx_timeline *tl, uint64_t k)
{
	if (tl->el_stripes == NULL)
		return tl->elems[k];
	return *(const struct idx_elem *)snap_stripe_at(tl->el_stripes,
	    SNAP_COL_ELEM, k, sizeof(struct idx_elem));
}

/* Element k's alloc_ev and free_ev, those of idx_tl_elem(tl, k) (in a
 * stripe that decodes), for a caller that needs nothing else of it, at
 * every key (the cursor's allocation): from its stripe when that is
 * decoded already, else from idx_tl_elem_life_read() when the stripe is
 * not the one read last, else from the stripe, decoded (idx_dec.c). */
void idx_tl_elem_life(const struct idx_timeline *tl, uint64_t k,
    int64_t *alloc_ev, int64_t *free_ev);

/* Element k's alloc_ev and free_ev read from its element stripe's
 * flags, event and free chunks, up to k, with idx_tl_elem()'s checks of
 * element k; nothing is cached. -1 for a timeline without element
 * stripes, or a chunk that does not read. */
int idx_tl_elem_life_read(const struct idx_timeline *tl, uint64_t k,
    int64_t *alloc_ev, int64_t *free_ev);

/* Called by idx_tl_alive_each() with element k: nonzero stops it. */
typedef int (*idx_elem_fn)(void *arg, uint64_t k, const struct idx_elem *e);

/* fn(arg, k, e) for each element k in [k0, k1), in order, alive after
 * event at (alloc_ev <= at, and free_ev < 0 or > at; INT64_MAX: alive at
 * the end, never freed, ghosts among them), e as idx_tl_elem(tl, k) but
 * for addr and stream, 0 unless want_place. A stripe's event, free and
 * flags chunks are read, then the others it needs only where one of its
 * elements is alive, and only those elements are made: the summary's
 * two passes over the 3.9 M elements of a 1 GB file (its stack at the
 * peak, its leak) took the sections after the parse from 0.18 s through
 * idx_tl_elem() to 0.09 (bench/README.md). A stripe whose chunks do not
 * read is taken as idx_tl_elem() has it (zeros, never alive); one whose
 * address or stream chunk alone does not read gives its elements without
 * want_place, where idx_tl_elem() gives zeros. Returns 0, or fn's
 * nonzero. */
int idx_tl_alive_each(const struct idx_timeline *tl, int64_t at, uint64_t k0,
    uint64_t k1, int want_place, idx_elem_fn fn, void *arg);

/* Elements created by events 0..i (an alloc creates one, and so does the
 * free of a block allocated before the trace): element k, not a ghost,
 * was created by an event at or before i iff k < idx_tl_created(tl, i).
 * 0 for i < 0. Reads the events of one stripe at most. */
uint64_t idx_tl_created(const struct idx_timeline *tl, int64_t i);

/* A run of events [from, to) and, once idx_tl_extremes() is done, the
 * lowest and the highest total and the highest reserved bytes after its
 * events. */
struct idx_tl_run {
	uint64_t from, to;
	uint64_t min_total, max_total, max_reserved;
};

/* Fills the extremes of runs[0, n) (ascending, disjoint, each non-empty
 * once to is clamped to n_events; an empty one gets zeros): what the
 * accessors give, read in one pass over each stripe that holds any of
 * them, up to the last event wanted, without decoding its columns into
 * the cache. That pays when a few events of many stripes are wanted:
 * the ragged ends of the timeline's columns (idx_lod_columns). A
 * damaged stripe reads as zeros and marks the index, as through the
 * accessors (idx_span.c says what only a whole read finds). Work asked
 * to stop (util/stop.h) leaves the runs not read yet zeros. */
void idx_tl_extremes(const struct idx_timeline *tl, struct idx_tl_run *runs,
    size_t n);

/* Builds tl for device d of s. Returns 0, or -1 with err set. The caller
 * owns tl's arrays: free with idx_timeline_destroy(). */
int idx_timeline_build(const struct snapshot *s, uint32_t d,
    struct idx_timeline *tl, struct sv_error *err);
void idx_timeline_destroy(struct idx_timeline *tl);

/* Sets tl->peak and tl->peak_ev from the totals and the base (see
 * struct idx_timeline). */
void idx_timeline_peak(struct idx_timeline *tl);

#endif
