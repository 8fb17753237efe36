/*
 * The numbers behind `snapview stats`.
 */
#include "config.h"

#include "analysis/stats.h"

#include <string.h>

#include "util/u64map.h"

void
an_seg_totals(const struct snapshot *s, uint32_t d, struct an_seg_totals *t)
{
	uint32_t i, j, end;

	memset(t, 0, sizeof *t);
	snap_device_segments(s, d, &i, &end);
	for (; i < end; i++) {
		const struct snap_segment *g = &s->segments[i];

		if (g->device != d)
			continue;
		t->sum.n_segments++;
		t->sum.reserved += g->total_size;
		t->expandable += g->is_expandable != 0;
		t->private_pool += g->pool_id[0] != 0 || g->pool_id[1] != 0;
		for (j = 0; j < g->n_blocks; j++) {
			const struct snap_block *b;

			if ((uint64_t)g->first_block + j >= s->n_blocks)
				break;
			b = &s->blocks[g->first_block + j];
			replay_totals_add(&t->sum, b->state, b->size,
			    b->requested_size);
		}
	}
}

void
an_ev_counts(const struct snapshot *s, uint32_t d, struct an_ev_counts *c)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct u64map streams;
	uint64_t i, dummy, last_stream = 0;
	uint32_t g, gend;

	memset(c, 0, sizeof *c);
	u64map_init(&streams);
	snap_device_segments(s, d, &g, &gend);
	for (; g < gend; g++)
		if (s->segments[g].device == d)
			u64map_put(&streams, s->segments[g].stream, 1);
	if (t != NULL) {
		c->events = t->n;
		for (i = 0; i < t->n; i++) {
			unsigned a = snap_ev_action(t, i);
			int64_t tm;

			if (a > SNAP_ACTION_COUNT)
				a = SNAP_ACTION_COUNT;
			c->by_action[a]++;
			/* runs of one stream are the rule: look up changes */
			if ((i == 0 || snap_ev_stream(t, i) != last_stream) &&
			    !u64map_get(&streams, snap_ev_stream(t, i), &dummy))
				u64map_put(&streams, snap_ev_stream(t, i), 1);
			last_stream = snap_ev_stream(t, i);
			if (!snap_trace_has_time(t) ||
			    (tm = snap_ev_time(t, i)) == SNAP_NO_TIME)
				continue;
			if (!c->has_time || tm < c->time_first)
				c->time_first = tm;
			if (!c->has_time || tm > c->time_last)
				c->time_last = tm;
			c->has_time = 1;
		}
	}
	c->streams = streams.n;
	u64map_destroy(&streams);
}

void
an_stats_with(const struct snapshot *s, uint32_t d,
    const struct idx_timeline *tl, const struct an_ev_counts *c,
    struct an_stats *st)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct an_ev_counts own;

	memset(st, 0, sizeof *st);
	st->device = d;
	an_seg_totals(s, d, &st->seg);
	if (c == NULL || c->events != (t != NULL ? t->n : 0)) {
		an_ev_counts(s, d, &own);
		c = &own;
	}
	st->events = c->events;
	memcpy(st->by_action, c->by_action, sizeof st->by_action);
	st->streams = c->streams;
	st->has_time = c->has_time;
	st->time_first = c->time_first;
	st->time_last = c->time_last;
	st->frees_without_alloc = tl->n_pre;
	st->ghost_blocks = tl->n_ghost;
	st->peak = tl->peak;
	st->peak_ev = an_peak_ev(tl);
	st->base_total = tl->base_total;
}

int64_t
an_peak_ev(const struct idx_timeline *tl)
{
	return tl->peak_ev;
}

void
an_stats(const struct snapshot *s, uint32_t d, const struct idx_timeline *tl,
    struct an_stats *st)
{
	an_stats_with(s, d, tl, NULL, st);
}
