#ifndef SNAPVIEW_ANALYSIS_BUDGET_H
#define SNAPVIEW_ANALYSIS_BUDGET_H
/*
 * Memory budgets for CI: limits on one device's figures, each judged
 * against the trace, with the event (or step) where the figure is.
 *
 *   peak      the Active Memory Timeline's highest total (requested
 *             bytes of live blocks; idx_timeline peak), at its first
 *             event
 *   reserved  the most reserved bytes (sum of segment sizes) after any
 *             event, or before the first, at its first event
 *   growth    the largest growth of the Active Memory Timeline total
 *             over one complete step (steps.h) after the first: total
 *             after its last event minus total before its first; the
 *             first complete step builds what lives on (optimizer
 *             state, gradients) and is not judged, so a trace with
 *             fewer than two complete steps is not judged (as leaks.h
 *             judges a per-step leak)
 *   frag      the waste share at the most reserved: (reserved -
 *             requested bytes of allocated blocks) / reserved, from the
 *             replayed state there (frag.h's internal + external)
 *
 * Sizes are limits in bytes; the frag limit and figure are in percent.
 * A figure equal to its limit keeps the budget. Nothing here prints.
 */
#include <stdint.h>

#include "index/idx_timeline.h"
#include "replay/replay.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

enum an_budget_kind {
	AN_BUDGET_PEAK,
	AN_BUDGET_RESERVED,
	AN_BUDGET_GROWTH,
	AN_BUDGET_FRAG,
	AN_BUDGET_COUNT
};

struct an_budget_limits {
	int set[AN_BUDGET_COUNT];
	uint64_t bytes[AN_BUDGET_COUNT];	/* peak, reserved, growth */
	double pct;				/* frag, percent */
};

struct an_budget {
	int kind;		/* enum an_budget_kind */
	int judged;		/* 0: the trace has no figure (no step) */
	int ok;			/* judged and actual <= limit, or not judged */
	uint64_t limit;		/* bytes (frag: 0) */
	int64_t actual;		/* bytes (growth may be negative) */
	double limit_pct, actual_pct; /* frag */
	int64_t event;		/* where: -1 before the first event */
	int64_t step;		/* growth: the step (from 1), else -1 */
	int64_t step_first, step_last;
};

/* "peak", "reserved", "growth_per_step", "frag" (JSON names) and the
 * options that set them ("--max-peak", ...). */
const char *an_budget_name(int kind);
const char *an_budget_option(int kind);

/* Parses a size: a decimal number with an optional fraction and an
 * optional binary unit (B, K, KB, KiB, M, ... T; K = 1024), "70G",
 * "1.5GiB", "100M", "4096". Returns 0, or -1 when s is not one. */
int an_budget_parse_size(const char *s, uint64_t *out);
/* Parses a share: "10%" or "10" (percent), 0 to 100. Returns 0 or -1. */
int an_budget_parse_pct(const char *s, double *out);

/* Judges every budget set in lim on device d (tl its timeline, r a
 * replay of it, needed for frag only: may be NULL without frag). out
 * gets one entry per budget set, in enum order; returns their number,
 * or -1 with err set. */
int an_budget_eval(const struct snapshot *s, uint32_t d,
    const struct idx_timeline *tl, struct replay *r,
    const struct an_budget_limits *lim, struct an_budget *out,
    struct sv_error *err);

#endif
