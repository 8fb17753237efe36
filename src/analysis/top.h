#ifndef SNAPVIEW_ANALYSIS_TOP_H
#define SNAPVIEW_ANALYSIS_TOP_H
/*
 * Who holds memory at event N: the Active Memory Timeline elements alive
 * after event N (requested bytes), as a bottom-up call-site tree. Level 0
 * is the call site (site.h, honouring --frames/--site-regex); level 1 is
 * the user frame that called it, and so on up to `depth` levels.
 *
 * A block allocated before the trace and freed in it (IDX_ELEM_PRE) has
 * only the stack of its free (memory_viz shows the same): its site is
 * where it was freed. Such blocks get level-0 nodes of their own
 * (free_stack), apart from the blocks allocated at that site.
 */
#include <stdint.h>

#include "analysis/category.h"
#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"

#define AN_NO_NODE UINT32_MAX

struct an_top_node {
	uint32_t site;        /* level 0: site id; else AN_NO_NODE */
	uint32_t frame;       /* levels > 0: the caller frame */
	uint32_t parent;      /* AN_NO_NODE at level 0 */
	uint32_t depth;
	uint32_t stack;       /* a stack of one element below this node */
	uint64_t bytes, count;
	int free_stack;       /* level 0: its blocks were allocated before
				 the trace and freed in it (their stack is
				 that of the free) */
};

struct an_top {
	uint32_t device;
	int64_t at;
	uint32_t depth;
	uint64_t bytes, count;      /* everything alive */
	struct an_top_node *nodes;  /* parents before children */
	uint32_t n_nodes;
	/* Children of node i sorted by bytes (largest first):
	 * kids[kid_off[i] .. kid_off[i+1]); roots at kids[root_off..]. */
	uint32_t *kids, *kid_off;
	uint32_t *roots;
	uint32_t n_roots;
};

/* at < -1 or past the end: the last event. depth 0 means 1. */
int an_top(const struct idx_timeline *tl, struct an_sites *sites, int64_t at,
    uint32_t depth, struct an_top *out);
/* The same tree from a replayed allocator state (the TUI's state at the
 * cursor): its active and pending-free blocks, requested bytes. Cost
 * O(blocks of the state), independent of the trace length. A state does
 * not know which of its blocks the trace frees later, so no node is
 * free_stack; otherwise it equals an_top at st->at where the replay is
 * exact (check_analysis compares them). Free with an_top_destroy. */
int an_top_state(const struct replay_state *st, uint32_t device,
    struct an_sites *sites, uint32_t depth, struct an_top *out);
/* an_top over the elements of one category (cats built for tl). */
int an_top_category(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_categories *cats, unsigned cat, int64_t at,
    uint32_t depth, struct an_top *out);
/* an_top_category of every category (out[c]), and their totals
 * (an_categories_at's), in one pass over the elements. */
int an_top_categories(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_categories *cats, int64_t at, uint32_t depth,
    struct an_top out[AN_CAT_COUNT], struct an_cat_totals *ct);
void an_top_destroy(struct an_top *t);

/* Is element e alive after event at? */
int an_elem_alive(const struct idx_elem *e, int64_t at);

#endif
