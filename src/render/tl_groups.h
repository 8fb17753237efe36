#ifndef SNAPVIEW_RENDER_TL_GROUPS_H
#define SNAPVIEW_RENDER_TL_GROUPS_H
/*
 * Bytes per group of timeline elements over one device's trace: the bands
 * of the timeline's call-site, category and stream/pool modes.
 *
 * For each group, the events at which its live bytes change and its bytes
 * after each, so the bytes of any group after any event are one binary
 * search (O(log n)); a frame of K bands over C columns costs O(C K log n)
 * whatever the trace length. Built in one sequential pass over the
 * elements and one over the events; memory: 12 bytes per alloc or free
 * event that starts or ends an element, 28 bytes per group, and during
 * the build 16 bytes per element.
 */
#include <stdint.h>

#include "index/idx_timeline.h"

#define TL_NO_GROUP UINT32_MAX

/* Group of element e (id k), or TL_NO_GROUP to leave it out. */
typedef uint32_t (*tl_group_fn)(void *ctx, const struct idx_elem *e,
    uint64_t k);

struct tl_groups {
	uint32_t n;          /* groups: ids 0 .. n-1 */
	uint32_t n_used;     /* groups that ever hold bytes */
	uint64_t *off;       /* n + 1: changes of g are [off[g], off[g+1]) */
	uint32_t *ev;        /* event of each change, ascending per group */
	uint64_t *live;      /* bytes of the group after that event */
	uint64_t *base;      /* bytes of each group before event 0 */
	uint32_t *stack;     /* per group: stack of its largest element */
	uint64_t *max_elem;  /* per group: the element with that stack */
};

/* Builds g for tl with group_of (ids below max_groups). Returns 0, or -1
 * when the trace has too many events for the 32-bit event column. */
int tl_groups_build(struct tl_groups *g, const struct idx_timeline *tl,
    uint32_t max_groups, tl_group_fn group_of, void *ctx);
void tl_groups_destroy(struct tl_groups *g);

/* Bytes of group grp alive after event ev (-1: before the first). */
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
