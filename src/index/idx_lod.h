#ifndef SNAPVIEW_INDEX_IDX_LOD_H
#define SNAPVIEW_INDEX_IDX_LOD_H
/*
 * Level-of-detail pyramid over one device's timeline, so the timeline can
 * be drawn at any zoom touching O(columns * log n) values instead of every
 * event.
 *
 * Level j groups events into buckets of 2^(IDX_LOD_MIN_SHIFT + j) events
 * (bucket k covers events [k*2^s, min((k+1)*2^s, n))); each bucket holds
 * the minimum and maximum of the total and the maximum of the reserved
 * bytes over its events. Levels stop at the first level with one bucket.
 * All levels are stored one after the other in one array (the index keeps
 * it in the file; the struct below borrows it).
 */
#include <stddef.h>
#include <stdint.h>

#include "index/idx_format.h"
#include "index/idx_timeline.h"

struct idx_lod_bucket {
	uint64_t min_total;
	uint64_t max_total;
	uint64_t max_reserved;
};

/* A bucket as the index stores it (format 2): extremes of the running
 * sums of the total and reserved deltas, so that it can be written
 * before the bases (which need the whole trace) are known. The value
 * after event i is then clamp0(base + sum_i) (idx_timeline.h), and as
 * long as no sum nor base exceeds 2^62 in magnitude that is monotonic
 * in sum_i, so the extremes carry over. The index keeps no pyramid of a
 * timeline where they might not (it is built at open instead). */
struct idx_lod_cum {
	int64_t min_total;
	int64_t max_total;
	int64_t max_reserved;
};

struct idx_lod {
	uint64_t n_events;
	uint32_t n_levels;
	const struct idx_lod_bucket *buckets;   /* borrowed (or owned below) */
	const struct idx_lod_cum *cum;          /* else these, plus bases */
	uint64_t base_total;
	uint64_t base_reserved;                 /* signed, unclamped */
	uint64_t level_off[IDX_LOD_MAX_LEVELS]; /* first bucket of level j */
	uint64_t level_n[IDX_LOD_MAX_LEVELS];   /* buckets in level j */
	struct idx_lod_bucket *owned;           /* freed by idx_lod_destroy */
};

/* Number of buckets (all levels) for n events; *n_levels gets the level
 * count when not NULL. */
uint64_t idx_lod_count(uint64_t n_events, uint32_t *n_levels);

/* Fills out (idx_lod_count(tl->n_events) buckets) from tl. */
void idx_lod_fill(const struct idx_timeline *tl, struct idx_lod_bucket *out);

/* Sets lod up over buckets (borrowed; idx_lod_count(n) of them). */
void idx_lod_init(struct idx_lod *lod, uint64_t n_events,
    const struct idx_lod_bucket *buckets);

/* Sets lod up over stored buckets (borrowed) and the timeline's bases:
 * base_total, and the signed reserved base before clamping. */
void idx_lod_init_cum(struct idx_lod *lod, uint64_t n_events,
    const struct idx_lod_cum *cum, uint64_t base_total,
    int64_t base_reserved);

/* Bucket k (all levels, level_off[j] + index) of lod. */
void idx_lod_get(const struct idx_lod *lod, uint64_t k,
    struct idx_lod_bucket *b);

/* Fills levels 1 and up of a stored pyramid whose level 0 is filled. */
void idx_lod_cum_levels(struct idx_lod_cum *all, uint64_t n_events);

/* Builds an owned pyramid for tl (heap). */
void idx_lod_build(struct idx_lod *lod, const struct idx_timeline *tl);
void idx_lod_destroy(struct idx_lod *lod);

/* Min/max of total and max of reserved over events [from, to) of tl, using
 * the pyramid: reads at most 2^(IDX_LOD_MIN_SHIFT+1) raw events and two
 * buckets per level. An empty range gives the values of event from (or of
 * the base values when the timeline is empty). to is clamped to n. */
void idx_lod_range(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t from, uint64_t to, struct idx_lod_bucket *out);

/* Splits [from, to) into ncols equal columns (each at least one event) and
 * fills out[c] for each, as idx_lod_range does. */
void idx_lod_columns(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t from, uint64_t to, uint32_t ncols, struct idx_lod_bucket *out);

/* As idx_lod_range for each span [bound[c], bound[c + 1]) of the n given
 * (bound has n + 1 entries, non-decreasing), reading the events no bucket
 * covers in one pass over their stripes. */
void idx_lod_spans(const struct idx_lod *lod, const struct idx_timeline *tl,
    const uint64_t *bound, uint32_t n, struct idx_lod_bucket *out);

#endif
