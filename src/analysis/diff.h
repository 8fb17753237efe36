#ifndef SNAPVIEW_ANALYSIS_DIFF_H
#define SNAPVIEW_ANALYSIS_DIFF_H
/*
 * Two snapshots compared by call site. Sites are matched by their label
 * (the site's frames as "filename:line name", joined with " <- "), since
 * ids differ between files. Per site and snapshot: bytes and blocks live
 * at the point compared (ghost and pre-trace blocks included; after the
 * last event unless the input names an event), the stack of the largest
 * of those blocks, bytes
 * live at the Active Memory Timeline peak (its contribution to the peak)
 * and allocations made in the trace. Rows are sorted by the absolute
 * change in live bytes, then peak bytes. Overall: events, peaks,
 * reserved at the end, and the allocator settings that differ.
 */
#include <stdint.h>

#include "analysis/site.h"
#include "analysis/steps.h"
#include "index/idx_timeline.h"

struct an_diff_side {
	uint64_t live, live_n;     /* at the point compared */
	uint32_t stack;            /* of the largest live block (live_n > 0) */
	uint64_t stack_size;       /* its requested bytes */
	uint64_t peak;             /* live at the timeline peak */
	uint64_t allocs;           /* alloc events in the trace */
};

struct an_diff_row {
	char *label;               /* owned; raw file text */
	struct an_diff_side a, b;
};

struct an_diff_setting {
	const char *key;           /* borrowed from a or b */
	const char *a, *b;         /* NULL when absent */
};

struct an_diff_input {
	const struct snapshot *s;
	const struct idx_timeline *tl;
	struct an_sites *sites;
	int has_at;                /* 0: after the last event */
	int64_t at;                /* else after this event (-1: before the
				      first) */
};

struct an_diff {
	uint64_t events[2], peak[2], reserved_end[2], live_end[2];
	int64_t peak_ev[2];
	int64_t at[2];             /* the event compared after */
	uint64_t reserved_at[2], live_at[2];
	struct an_diff_row *rows;
	uint64_t n_rows;
	struct an_diff_setting *settings;
	uint32_t n_settings;
};

int an_diff(const struct an_diff_input *a, const struct an_diff_input *b,
    struct an_diff *out);
void an_diff_destroy(struct an_diff *d);

/* Where diff --step compares: the first event of step k (0-based) after
 * which the total is the highest of the step; -2 when there is no step
 * k. */
int64_t an_diff_step_at(const struct idx_timeline *tl,
    const struct an_steps *st, uint64_t k);

/* Site label used for matching: frames joined with " <- ". */
char *an_site_key(const struct an_sites *t, uint32_t site, char *buf,
    size_t size);

#endif
