#ifndef SNAPVIEW_ANALYSIS_STEPS_H
#define SNAPVIEW_ANALYSIS_STEPS_H
/*
 * Training steps of one device's trace, as event ranges.
 *
 * Sources, the first that gives steps wins:
 *   1. ProfilerStep#N START annotations (the profiler's own steps): step
 *      k runs from its START to the event before the next START; the
 *      last one to its END, or to the end of the trace.
 *   2. The optimizer's annotations: every Optimizer.step#... END ends a
 *      step (the first step starts at the first event, later ones after
 *      the previous END). Events after the last END are no step.
 *   3. A repetition of the whole trace: the sequence of allocations
 *      (their stacks and sizes, else their stacks alone) recurs at least
 *      three times. A candidate count S comes from how often stacks
 *      recur; an allocation whose stack recurs exactly S times (the
 *      first three such, by first occurrence) cuts the trace into S
 *      steps; they are accepted only when at least 70% of the
 *      allocations from the first step on have a stack that occurs in
 *      every step, no step has fewer than a quarter of the allocations
 *      of the largest, and the allocations before the first step (model
 *      construction, a step cut by the start of recording) are at most
 *      twice as many as the largest step's. A loop inside one step (per layer,
 *      per parameter) repeats only a part of the trace, so it never
 *      passes; nor does a trace that is one such loop (the layers of a
 *      forward pass): the steps must be iterations of the program, most
 *      of them holding allocations of at least two outer frames (the
 *      first user frame below the ones every allocation shares: the
 *      forward call, the loss, the optimizer of a step), else `layers`
 *      says how many times the trace repeated and there are no steps.
 * Annotations are mapped to events through time_us (a START to the first
 * event at or after it, an END to the last event at or before it), so a
 * trace without time_us has no annotation steps.
 *
 * Optimizer.step and Optimizer.zero_grad windows (START..END, as event
 * ranges) are kept whatever gave the steps: category inference uses them
 * as the optimizer phase. A malformed annotation (no time, a stage that
 * is neither START nor END, an END with no START, a START inside an open
 * one, time going backwards) is ignored and counted; the first one is
 * described in `bad` for one line of warning.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"
#include "util/err.h"

enum an_steps_source {
	AN_STEPS_NONE,
	AN_STEPS_PROFILER,	/* ProfilerStep#N annotations */
	AN_STEPS_OPTIMIZER,	/* Optimizer.step annotations */
	AN_STEPS_PATTERN	/* the trace repeats itself */
};

/* An event range, inclusive. */
struct an_window {
	int64_t first, last;
};

struct an_step {
	int64_t first, last;	/* events, inclusive */
	int complete;		/* both ends known (not cut) */
};

struct an_steps {
	uint32_t device;
	int source;			/* enum an_steps_source */
	struct an_step *steps;		/* in event order, disjoint */
	uint64_t n;
	uint64_t n_complete;
	struct an_window *opt;		/* Optimizer.step windows */
	uint64_t n_opt;
	struct an_window *zero_grad;	/* Optimizer.zero_grad windows */
	uint64_t n_zero_grad;
	uint64_t layers;		/* the trace repeats this many times
					   inside one call (a loop over
					   layers): no steps (n == 0) */
	uint64_t n_annotations;		/* of this device */
	int no_time;			/* annotations, but no time_us */
	uint64_t n_bad;			/* malformed ones, ignored */
	char bad[200];			/* the first, described */
};

/* Finds the steps of device d of s. Returns 0 (out->n may be 0), or -1
 * with SV_ERR_CANCELLED, out empty, when this thread was asked to stop
 * (util/stop.h). */
int an_steps_find(const struct snapshot *s, uint32_t d, struct an_steps *out,
    struct sv_error *err);
void an_steps_destroy(struct an_steps *st);

/* Bytes of allocation keys kept on the heap before they move to a
 * temporary file when steps are found in the trace's repetition (16 MiB;
 * tests lower it to take that path on small traces). Not thread-safe:
 * set it before any search. */
void an_steps_set_keys_heap_max(size_t bytes);

/* Index of the step holding event ev, or -1 (outside every step). */
int64_t an_step_at(const struct an_steps *st, int64_t ev);

/* Index of the window of w[0..n) holding ev, or -1. */
int64_t an_window_at(const struct an_window *w, uint64_t n, int64_t ev);

/* The same two lookups for many events of one array, with the same
 * answers whatever the order of the lookups: searched from the previous
 * answer's place (exponential search) when the starts ascend, as they
 * do in any file whose times do, so events in order cost O(1) each, not
 * O(log n); where they do not (the first lookup checks, in one pass over
 * the array), each lookup is the plain one's binary search. A cursor
 * serves one array and starts zeroed. */
struct an_at {
	uint64_t hint;		/* the last partition point */
	int sorted;		/* starts ascend: 1, do not: -1, unknown: 0 */
};
int64_t an_step_at_gallop(const struct an_steps *st, int64_t ev,
    struct an_at *c);
/* an_step_at_gallop over the steps s[0..n) (steps in event order). */
int64_t an_step_list_at_gallop(const struct an_step *s, uint64_t n,
    int64_t ev, struct an_at *c);
int64_t an_window_at_gallop(const struct an_window *w, uint64_t n,
    int64_t ev, struct an_at *c);

/*
 * The same again, inline, for lookups that nearly always land in the
 * window of the last one or the next (each element of a timeline in
 * event order): once the cursor knows the starts ascend, those two are
 * tried here; there the first start past ev is the same whichever way it
 * is found. Else the lookup is an_*_at_gallop's.
 */
static inline int64_t
an_near_(int64_t before, int64_t at, int64_t next, uint64_t p, uint64_t n,
    int64_t ev, struct an_at *c)
{
	if ((p == 0 || before <= ev) && (p == n || at > ev))
		return (int64_t)p;
	if (p < n && at <= ev && (p + 1 == n || next > ev)) {
		c->hint = p + 1;
		return (int64_t)p + 1;
	}
	return -1;
}

static inline int64_t
an_window_at_near(const struct an_window *w, uint64_t n, int64_t ev,
    struct an_at *c)
{
	uint64_t p = c->hint;
	int64_t lo;

	if (c->sorted <= 0 || p > n || (lo = an_near_(p > 0 ? w[p - 1].first :
	    0, p < n ? w[p].first : 0, p + 1 < n ? w[p + 1].first : 0, p, n,
	    ev, c)) < 0)
		return an_window_at_gallop(w, n, ev, c);
	return lo == 0 || w[lo - 1].last < ev ? -1 : lo - 1;
}

static inline int64_t
an_step_list_at_near(const struct an_step *s, uint64_t n, int64_t ev,
    struct an_at *c)
{
	uint64_t p = c->hint;
	int64_t lo;

	if (c->sorted <= 0 || p > n || (lo = an_near_(p > 0 ? s[p - 1].first :
	    0, p < n ? s[p].first : 0, p + 1 < n ? s[p + 1].first : 0, p, n,
	    ev, c)) < 0)
		return an_step_list_at_gallop(s, n, ev, c);
	return lo == 0 || s[lo - 1].last < ev ? -1 : lo - 1;
}

/* The first event of t at or after time, as snap_ev_at_time(t, 0, t->n,
 * time) finds it, for many searches of one trace: *hint (one per run of
 * searches whose times mostly grow, starting at 0) gets each answer, and
 * the next search of that run gallops from there. It only gallops on
 * times that never go down (every real trace), which the first search
 * checks in one pass over the trace unless gallop is set already (-1:
 * too few searches to pay for that pass); otherwise each search is that
 * binary search. So the answer is the binary search's on any trace,
 * for searches in any order. */
struct an_times {
	const struct snap_trace *t;
	int gallop;		/* times ascend: 1; do not, or do not
				   look: -1; unknown: 0 */
};
uint64_t an_ev_at_time_gallop(struct an_times *tm, uint64_t *hint,
    int64_t time);

/* "profiler_step", "optimizer", "pattern", "none" (JSON) and the text
 * form ("ProfilerStep annotations", ...). */
const char *an_steps_source_name(int source);
const char *an_steps_source_text(int source);

#endif
