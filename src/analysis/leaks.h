#ifndef SNAPVIEW_ANALYSIS_LEAKS_H
#define SNAPVIEW_ANALYSIS_LEAKS_H
/*
 * Leaks: allocations made in an event window and still alive at its end,
 * grouped by call site (site.h), and ranked so that the steady per-step
 * leak comes first.
 *
 * Steps come from ProfilerStep#N START annotations of the device
 * (mapped to events through time_us) when there are at least two; else
 * from the periodicity of each site's own surviving allocations: they
 * are split into bursts at the gaps larger than half the largest gap,
 * and the site is periodic when there are at least three bursts, more
 * than 3 events apart (one other allocation and its free), the gaps
 * between bursts are regular (largest <= 2x smallest) and the bursts
 * span at least a quarter of the window. With annotations a site is
 * periodic when its blocks fall into at least two steps and into at
 * least half of the steps the window covers.
 *
 * Ranking: periodic sites first, by bytes; then the others by bytes.
 * Allocations made once (parameters, optimizer state), even when larger
 * in total, therefore come after a site that leaks every step.
 * Bytes are requested bytes (as the Active Memory Timeline counts them);
 * rounded bytes apply the allocator's 512-byte rounding
 * (doc/snapshot-format.md §13.3, without roundup_power2_divisions).
 */
#include <stdint.h>

#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

enum an_steps_source {
	AN_STEPS_NONE,
	AN_STEPS_ANNOTATIONS,
	AN_STEPS_PERIODICITY
};

struct an_leak_site {
	uint32_t site;
	uint32_t stack;      /* stack of the first leaked block */
	uint64_t count;
	uint64_t bytes;      /* requested */
	uint64_t rounded;
	uint64_t before_trace; /* of count: allocated before the trace */
	uint64_t steps_hit;  /* steps (or bursts) holding leaked blocks */
	uint64_t period;     /* events between bursts (periodicity), 0 */
	int64_t first_ev, last_ev;
	int periodic;
};

struct an_leaks {
	uint32_t device;
	int64_t from, to;          /* window, inclusive */
	int steps_source;          /* enum an_steps_source */
	uint64_t n_steps;          /* steps overlapping the window */
	uint64_t period;           /* events per step when estimated */
	struct an_leak_site *sites; /* ranked */
	uint64_t n_sites;
	uint64_t count, bytes, rounded; /* all leaked blocks */
	uint64_t before_trace;     /* of count: allocated before the trace */
	uint64_t alive_before;     /* alive at the end, allocated before the
				      window (incl. before the trace) */
	uint64_t alive_before_bytes;
};

/* Allocator rounding of a request (doc/snapshot-format.md §13.3, 512-byte
 * granularity). */
uint64_t an_round_size(uint64_t n);

/* Sorted event indices at which steps start (ProfilerStep* START
 * annotations of device d mapped through time_us). *n receives the count;
 * NULL when none. Caller frees. */
int64_t *an_step_starts(const struct snapshot *s, uint32_t d, uint64_t *n);

/* Computes the leaks of timeline tl (device d of s) in [from, to]
 * (from < 0: from before the trace, so blocks alive since before the
 * first event count too (ring buffer wrapped, recording started late);
 * to < 0 or past the end: last event). Periodicity uses the blocks
 * allocated inside the trace only. */
int an_leaks(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, int64_t from, int64_t to, struct an_leaks *out,
    struct sv_error *err);
void an_leaks_destroy(struct an_leaks *l);

/* The leaked blocks of each ranked site of l (computed from tl and sites
 * as an_leaks did): element ids of tl for l->sites[k] are
 * elems[off[k] .. off[k+1]), in alloc event order (blocks alive since
 * before the trace first). */
struct an_leak_elems {
	uint64_t *elems;
	uint64_t *off;     /* n_sites + 1 entries */
	uint64_t n_sites;
};

/* Fills out (caller-provided; free with an_leak_elems_destroy). O(n_elems
 * + leaked log leaked). */
void an_leak_elems(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_leaks *l, struct an_leak_elems *out);
void an_leak_elems_destroy(struct an_leak_elems *le);

/* Periodicity test on sorted event indices ev[0..n) in a window of
 * `window` events: returns 1 when periodic, with *bursts and *period. */
int an_periodic(const int64_t *ev, uint64_t n, uint64_t window,
    uint64_t *bursts, uint64_t *period);

#endif
