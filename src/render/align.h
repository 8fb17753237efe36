#ifndef SNAPVIEW_RENDER_ALIGN_H
#define SNAPVIEW_RENDER_ALIGN_H
/*
 * One x axis for several traces (the ranks of a job, two runs): by step
 * when every trace has steps, else by relative position.
 *
 * By step the axis is cut into units: the events before the first step
 * (when some trace has any), then one unit per step, then the events
 * after the last step. Step k of every trace fills unit k, whatever its
 * length in events, so step 3 of one rank sits above step 3 of another;
 * the events after a trace's last step fill the unit after it. Events
 * between two steps (none for ProfilerStep steps) count with the step
 * before them. By relative position, event e of n sits at e / n.
 * Positions run over [0, 1).
 */
#include <stddef.h>
#include <stdint.h>

#include "analysis/summary.h"

struct align_trace {
	uint64_t events;
	const struct an_sum_step *steps; /* borrowed; disjoint, in order */
	uint32_t n_steps;
};

struct align {
	int by_step;
	int pre;        /* a unit for the events before the first step */
	uint32_t units;
};

/* Sets the axis for n traces; want_steps 0 forces relative positions. */
void align_init(struct align *a, const struct align_trace *t, size_t n,
    int want_steps);

/* Position of event e (0 <= e < t->events) of trace t. */
double align_pos(const struct align *a, const struct align_trace *t,
    int64_t e);

/* Column of event e on an axis w columns wide. */
int align_col(const struct align *a, const struct align_trace *t, int64_t e,
    int w);

/* The events of t drawn in column c of w: *e0..*e1, or *e1 < *e0 when
 * none is. */
void align_col_events(const struct align *a, const struct align_trace *t,
    int c, int w, int64_t *e0, int64_t *e1);

/* The first column of unit u (0 <= u <= units) on an axis w wide. */
int align_unit_col(const struct align *a, uint32_t u, int w);

#endif
