#ifndef SNAPVIEW_ANALYSIS_LEAKS_H
#define SNAPVIEW_ANALYSIS_LEAKS_H
/*
 * Leaks: allocations made in an event window and still alive at its end,
 * grouped by call site (site.h), and ranked so that the steady per-step
 * leak comes first.
 *
 * Steps come from steps.h (ProfilerStep annotations, else the
 * optimizer's, else the trace repeating itself). A leak across steps can
 * be judged only when the window holds at least two complete steps; then
 * a site "grows every step" (periodic) when its surviving blocks fall
 * into at least two steps and into at least half of the window's steps,
 * and about as many into each (at most twice as many in one step as in
 * another; the window's last step, which had no time to free what it
 * allocated, may be left out when three steps are hit).
 * A loop inside one step (per parameter, per layer) is no step, so the
 * optimizer state created lazily for every parameter in one step, or the
 * gradients of one backward, never grow every step.
 *
 * Ranking: periodic sites first, by bytes; then the others by bytes.
 * Allocations made once (parameters, optimizer state), even when larger
 * in total, therefore come after a site that leaks every step.
 * Bytes are requested bytes (as the Active Memory Timeline counts them);
 * rounded bytes are the sizes of the blocks that hold them in the
 * replayed allocator state at the window's end (else the device's size
 * rule, replay_round.h). With categories, each site has the category
 * holding most of its bytes, and the leaked bytes are summed by category.
 *
 * A block allocated before the trace and freed in it has only the stack
 * of its free (memory_viz shows the same; it counts in a window that
 * ends before that free): such blocks make sites of their own
 * (free_stack), apart from the blocks allocated at the site.
 */
#include <stdint.h>

#include "analysis/category.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

struct an_leak_site {
	uint32_t site;
	uint32_t stack;      /* stack of the first leaked block */
	uint64_t count;
	uint64_t bytes;      /* requested */
	uint64_t rounded;    /* block bytes */
	uint64_t before_trace; /* of count: allocated before the trace */
	uint64_t steps_hit;  /* steps holding leaked blocks */
	int64_t first_ev, last_ev;
	int periodic;
	int category;        /* enum an_category, -1 without categories */
	int free_stack;      /* its blocks were allocated before the trace
				and are freed in it after the window: the
				site is that of their free */
};

struct an_leaks {
	uint32_t device;
	int64_t from, to;          /* window, inclusive */
	int steps_source;          /* enum an_steps_source */
	uint64_t layers;           /* no steps: the trace repeats this many
				      times inside one call (an_steps) */
	uint64_t n_steps;          /* steps overlapping the window */
	uint64_t n_complete;       /* complete steps inside the window */
	int judged;                /* n_complete >= 2: periodicity holds */
	uint64_t period;           /* mean events per step, 0 */
	struct an_leak_site *sites; /* ranked */
	uint64_t n_sites;
	uint64_t count, bytes, rounded; /* all leaked blocks */
	uint64_t before_trace;     /* of count: allocated before the trace */
	uint64_t alive_before;     /* alive at the end, allocated before the
				      window (incl. before the trace) */
	uint64_t alive_before_bytes;
	int has_categories;
	uint64_t cat_bytes[AN_CAT_COUNT]; /* leaked blocks by category */
	uint64_t cat_count[AN_CAT_COUNT];
	int rounded_from_state;    /* rounded bytes are replayed blocks */
};

/* What an_leaks_using may use besides the timeline; every field may be
 * NULL. steps: found with an_steps_find when NULL. cats: categories of
 * the timeline's elements. replay: block sizes at the window's end (the
 * replay is moved there). */
struct an_leaks_with {
	const struct an_steps *steps;
	const struct an_categories *cats;
	struct replay *replay;
};

/* Computes the leaks of timeline tl (device d of s) in [from, to]
 * (from < 0: from before the trace, so blocks alive since before the
 * first event count too (ring buffer wrapped, recording started late);
 * to < 0 or past the end: last event). */
int an_leaks_using(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, const struct an_leaks_with *with, int64_t from,
    int64_t to, struct an_leaks *out, struct sv_error *err);
/* The same with nothing besides the timeline. */
int an_leaks(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, int64_t from, int64_t to, struct an_leaks *out,
    struct sv_error *err);
void an_leaks_destroy(struct an_leaks *l);

/* The leaked blocks of each ranked site of l (computed from tl and sites
 * as an_leaks did): element ids of tl for l->sites[k] are
 * elems[off[k] .. off[k+1]), in alloc event order (blocks alive since
 * before the trace first), and vals[] the elements themselves, so that
 * a reader of one site's blocks decodes no element stripe. */
struct an_leak_elems {
	uint64_t *elems;
	struct idx_elem *vals;
	uint64_t *off;     /* n_sites + 1 entries */
	uint64_t n_sites;
};

/* Fills out (caller-provided; free with an_leak_elems_destroy). Two
 * passes over the elements, then O(leaked log leaked) in memory. */
void an_leak_elems(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_leaks *l, struct an_leak_elems *out);
void an_leak_elems_destroy(struct an_leak_elems *le);

#endif
