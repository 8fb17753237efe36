#ifndef SNAPVIEW_ANALYSIS_STATS_H
#define SNAPVIEW_ANALYSIS_STATS_H
/*
 * Per-device summary of a snapshot: what `snapview stats` prints and the
 * TUI shows in its titles. Free space is split as PyTorch's
 * `_memory_viz.py stats` defines it (doc/snapshot-format.md §11), by the
 * one rule of replay.h (struct replay_totals), whatever holds the blocks:
 * allocated = requested bytes of active_allocated blocks
 * (alloc_requested); internal free = the rounding inside them (size -
 * requested); external free = every other block (inactive and pending
 * free).
 */
#include <stdint.h>

#include "index/idx_timeline.h"
#include "replay/replay.h"
#include "snapshot/snap_model.h"

/* Reserved memory of one pool: the default pool (0,0), or a private
 * pool (a CUDA graph's, a torch.cuda.MemPool) the allocator serves only
 * the requests made into it from, and empty_cache() leaves alone. */
#define AN_STATS_POOLS 16

struct an_pool_total {
	int64_t pool[2];
	uint64_t segments;
	uint64_t reserved;        /* segment bytes */
	uint64_t allocated;       /* requested bytes of active_allocated */
};

struct an_seg_totals {
	struct replay_totals sum; /* over the blocks (replay_totals_add) */
	uint64_t expandable;      /* expandable segments */
	uint64_t private_pool;    /* segments in a pool other than (0,0) */
	/* per pool, by id ((0,0) first); past AN_STATS_POOLS pools the
	 * rest are counted together in more_pools, more_reserved */
	struct an_pool_total pools[AN_STATS_POOLS];
	uint32_t n_pools;
	uint64_t more_pools, more_reserved;
};

struct an_stats {
	uint32_t device;
	uint64_t events;
	uint64_t by_action[SNAP_ACTION_COUNT + 1]; /* last: unknown */
	struct an_seg_totals seg;  /* the final segments (or at `at`) */
	uint64_t streams;          /* distinct streams in trace + segments */
	uint64_t frees_without_alloc;
	uint64_t ghost_blocks;
	uint64_t peak;
	int64_t peak_ev;
	uint64_t base_total;       /* timeline total before event 0 */
	int has_time;
	int64_t time_first, time_last;
	int has_at;                /* seg holds the state after event `at` */
	int64_t at;
	uint64_t at_total;         /* timeline total after event `at` */
};

/* What an_stats() learns from every event of a device's trace (with the
 * streams of its final segments): kept in the index's summary
 * (summary.h), so that stats on a reopen reads no event. */
struct an_ev_counts {
	uint64_t events;
	uint64_t by_action[SNAP_ACTION_COUNT + 1]; /* last: unknown */
	uint64_t streams;          /* distinct streams in trace + segments */
	int has_time;
	int64_t time_first, time_last;
};

/* The counts of device d: one pass over its events. */
void an_ev_counts(const struct snapshot *s, uint32_t d,
    struct an_ev_counts *c);

/* The same counts from what an index build's encoder counted of the
 * device's events (idx_ev_tally()), without the pass; the pass when
 * tally is NULL or cannot answer (it kept too few streams, or counted
 * another trace). */
struct idx_ev_tally;
void an_ev_counts_from(const struct snapshot *s, uint32_t d,
    const struct idx_ev_tally *tally, struct an_ev_counts *c);

/* Totals over the final segments of device d. */
void an_seg_totals(const struct snapshot *s, uint32_t d,
    struct an_seg_totals *t);

/* The per-pool figures of t (pools, n_pools, more_*) and private_pool
 * from a replayed state instead (stats --at N). */
void an_seg_pools_of_state(const struct replay_state *rs,
    struct an_seg_totals *t);

/* The event after which the Active Memory Timeline total first reaches
 * its peak, the state before the first event counted first (-1), as
 * memory_viz counts it: a trace whose events leave the total where it was
 * (one `snapshot` marker) peaks before its first event. The index records
 * it so (tl->peak_ev, index format 4); this is its one reader for the
 * commands. */
int64_t an_peak_ev(const struct idx_timeline *tl);

/* Fills st for device d; tl is that device's timeline. */
void an_stats(const struct snapshot *s, uint32_t d,
    const struct idx_timeline *tl, struct an_stats *st);
/* The same with the event counts c already known (NULL: counted here);
 * c is used only when its event count is the trace's. */
void an_stats_with(const struct snapshot *s, uint32_t d,
    const struct idx_timeline *tl, const struct an_ev_counts *c,
    struct an_stats *st);

#endif
