#ifndef SNAPVIEW_RENDER_TL_GROUPS_H
#define SNAPVIEW_RENDER_TL_GROUPS_H
/*
 * Bytes per group of timeline elements over one device's trace: the bands
 * of the timeline's call-site, category and stream/pool modes.
 *
 * For each group, the events at which its live bytes change and its bytes
 * after each, so the bytes of any group after any event are one binary
 * search and a short decode (O(log n + TL_GROUPS_CHUNK)); a frame of K
 * bands over C columns costs O(C K log n) whatever the trace length. The
 * changes are kept in chunks of TL_GROUPS_CHUNK: the first one's event
 * and bytes as they are, the others as varints of the difference from
 * the one before (about 4 to 5 bytes a change, instead of 12). Built in
 * one sequential pass over the elements and one over the events.
 */
#include <stdint.h>

#include "index/idx_timeline.h"

#define TL_NO_GROUP UINT32_MAX

/* Group of element e (id k), or TL_NO_GROUP to leave it out. */
typedef uint32_t (*tl_group_fn)(void *ctx, const struct idx_elem *e,
    uint64_t k);

#define TL_GROUPS_CHUNK 64

/* The changes of one group. */
struct tl_group_curve {
	uint64_t n_changes;
	uint64_t n_chunks;
	uint32_t *cev;       /* per chunk: the event of its first change */
	uint64_t *clive;     /* the group's bytes after it */
	uint64_t *cpos;      /* where its other changes start in data */
	uint8_t *data;       /* per change after a chunk's first: varint
				event delta, zig-zag varint bytes delta */
	uint64_t len;
};

/* The last answers of tl_groups_bytes(), by (group, event): a redraw
 * that moves only the cursor asks the same columns' bytes again, a frame
 * of 200 columns and 8 bands 1,600 of them. TL_GROUPS_MEMO entries in
 * sets of TL_GROUPS_MEMO_WAYS, the newest first in each: two answers
 * of one frame that hash to the same set both stay (with one entry a
 * set, about a fifth of a frame's answers pushed each other out at every
 * redraw). */
#define TL_GROUPS_MEMO 8192
#define TL_GROUPS_MEMO_WAYS 4
struct tl_groups_memo {
	int64_t ev;
	uint32_t grp;
	uint64_t bytes;
};

struct tl_groups {
	uint32_t n;          /* groups: ids 0 .. n-1 */
	uint32_t n_used;     /* groups that ever hold bytes */
	struct tl_group_curve *c;
	uint64_t *base;      /* bytes of each group before event 0 */
	uint32_t *stack;     /* per group: stack of its largest element */
	uint64_t *max_elem;  /* per group: the element with that stack */
	/* TL_GROUPS_MEMO entries (NULL: none), written by the queries: one
	 * thread queries a tl_groups at a time (the viewer's loop) */
	struct tl_groups_memo *memo;
	/* the curves' arrays are another tl_groups' (tl_groups_remap):
	 * tl_groups_destroy leaves them to it */
	uint8_t borrowed;
};

/* Builds g for tl with group_of (ids below max_groups). Returns 0, or -1
 * when the trace has too many events for the 32-bit event column or when
 * this thread is asked to stop (util/stop.h: g is then empty). */
int tl_groups_build(struct tl_groups *g, const struct idx_timeline *tl,
    uint32_t max_groups, tl_group_fn group_of, void *ctx);

/* One grouping of tl_groups_build_n: its output and tl_groups_build's
 * arguments. */
struct tl_grouping {
	struct tl_groups *g;
	uint32_t max_groups;
	tl_group_fn group_of;
	void *ctx;
};

#define TL_GROUPS_MAX_N 3

/* tl_groups_build for ng (1 .. TL_GROUPS_MAX_N) groupings at once: each
 * element and event is decoded once for all of them (decoding is most of
 * a build's time), and group_of is called for the groupings in order for
 * each element, in element order, as tl_groups_build calls it. The
 * result of each is what tl_groups_build gives. During the build 16
 * bytes per element and 4 per element and grouping after the first. */
int tl_groups_build_n(const struct tl_grouping *gs, unsigned ng,
    const struct idx_timeline *tl);
void tl_groups_destroy(struct tl_groups *g);

/* Makes d the groups of s under other ids: s's group i is d's group
 * map[i] (s->n entries, distinct, each below max_groups), as
 * tl_groups_build gives them when its group_of names map[i] wherever
 * s's named i (the same elements, in the same order, in each group).
 * d borrows s's curves instead of a pass over the trace: s must outlive
 * d, and keep its curves (tl_groups_destroy of s frees them, d's does
 * not). Returns 0, or -1 when map is not such a map (d is then empty). */
int tl_groups_remap(struct tl_groups *d, const struct tl_groups *s,
    const uint32_t *map, uint32_t max_groups);

/* One group's bytes after one sampled event (tl_groups_sampled), with
 * the size, id (UINT64_MAX: none) and stack of its largest element
 * there. */
struct tl_group_sample {
	uint32_t grp;
	uint32_t stack;
	uint64_t bytes;
	uint64_t max_size;
	uint64_t max_elem;
};

/* Makes g the groups of samples instead of a pass over the trace: after
 * event ev[s] (n_ev of them, increasing; -1 first is the state before
 * the first event), the groups of pairs[off[s] .. off[s + 1]) hold their
 * bytes (each group once a sample, ids below max_groups) and every other
 * group none. Between two samples a group holds its bytes at the first,
 * so tl_groups_bytes is exact at the sampled events only. Returns 0, or
 * -1 (g empty) for samples out of order or an id out of range. */
int tl_groups_sampled(struct tl_groups *g, uint32_t max_groups,
    const int64_t *ev, const uint64_t *off, size_t n_ev,
    const struct tl_group_sample *pairs);

/* Bytes of group grp alive after event ev (-1: before the first); not
 * thread-safe (the memo). */
uint64_t tl_groups_bytes(const struct tl_groups *g, uint32_t grp,
    int64_t ev);

/* Bytes the structure holds. */
uint64_t tl_groups_memory(const struct tl_groups *g);

/* The (at most) k groups with the most bytes after event ev, largest
 * first (ties: lower id first), groups with no bytes then left out
 * unless at most k groups ever hold bytes (then all of those, the empty
 * ones last). Writes their ids to out and returns the count. O(n k). */
uint32_t tl_groups_top(const struct tl_groups *g, int64_t ev, uint32_t k,
    uint32_t *out);

#endif
