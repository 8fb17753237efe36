/*
 * The numbers behind `snapview stats`.
 */
#include "config.h"

#include "analysis/stats.h"

#include <stdlib.h>
#include <string.h>

#include "index/idx.h"
#include "snapshot/snap_stripe.h"
#include "util/sat.h"
#include "util/stop.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* Pools seen so far, unsorted, before pools_finish keeps the first
 * AN_STATS_POOLS by id. */
struct pool_acc {
	struct an_pool_total *p;
	size_t n, cap;
};

static struct an_pool_total *
pool_acc_get(struct pool_acc *a, const int64_t pool[2])
{
	size_t i;

	/* a device has few pools: a private pool per graph at most */
	for (i = a->n; i > 0; i--)
		if (a->p[i - 1].pool[0] == pool[0] &&
		    a->p[i - 1].pool[1] == pool[1])
			return &a->p[i - 1];
	XGROW(a->p, a->cap, a->n + 1);
	memset(&a->p[a->n], 0, sizeof a->p[a->n]);
	a->p[a->n].pool[0] = pool[0];
	a->p[a->n].pool[1] = pool[1];
	return &a->p[a->n++];
}

static int
cmp_pool(const void *x, const void *y)
{
	const struct an_pool_total *a = x, *b = y;

	if (a->pool[0] != b->pool[0])
		return a->pool[0] < b->pool[0] ? -1 : 1;
	return a->pool[1] < b->pool[1] ? -1 : a->pool[1] > b->pool[1];
}

static void
pools_finish(struct pool_acc *a, struct an_seg_totals *t)
{
	size_t i;

	if (a->n > 1)
		qsort(a->p, a->n, sizeof *a->p, cmp_pool);
	t->n_pools = 0;
	t->more_pools = t->more_reserved = 0;
	t->private_pool = 0;
	/* (0,0) first: ids are signed, so it need not sort first */
	for (i = 0; i < a->n; i++)
		if (a->p[i].pool[0] == 0 && a->p[i].pool[1] == 0)
			t->pools[t->n_pools++] = a->p[i];
	for (i = 0; i < a->n; i++) {
		if (a->p[i].pool[0] == 0 && a->p[i].pool[1] == 0)
			continue;
		t->private_pool += a->p[i].segments;
		if (t->n_pools < AN_STATS_POOLS) {
			t->pools[t->n_pools++] = a->p[i];
			continue;
		}
		t->more_pools++;
		t->more_reserved = sv_sat_add(t->more_reserved,
		    a->p[i].reserved);
	}
	free(a->p);
	memset(a, 0, sizeof *a);
}

void
an_seg_totals(const struct snapshot *s, uint32_t d, struct an_seg_totals *t)
{
	uint32_t i, j, end;

	struct pool_acc acc;
	struct an_pool_total *pt;

	memset(t, 0, sizeof *t);
	memset(&acc, 0, sizeof acc);
	snap_device_segments(s, d, &i, &end);
	for (; i < end; i++) {
		const struct snap_segment *g = &s->segments[i];

		if (g->device != d)
			continue;
		t->sum.n_segments++;
		t->sum.reserved += g->total_size;
		t->expandable += g->is_expandable != 0;
		pt = pool_acc_get(&acc, g->pool_id);
		pt->segments++;
		pt->reserved = sv_sat_add(pt->reserved, g->total_size);
		for (j = 0; j < g->n_blocks; j++) {
			const struct snap_block *b;

			if ((uint64_t)g->first_block + j >= s->n_blocks)
				break;
			b = &s->blocks[g->first_block + j];
			replay_totals_add(&t->sum, b->state, b->size,
			    b->requested_size);
			if (b->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				pt->allocated = sv_sat_add(pt->allocated,
				    b->requested_size);
		}
	}
	pools_finish(&acc, t);
}

void
an_seg_pools_of_state(const struct replay_state *rs, struct an_seg_totals *t)
{
	struct pool_acc acc;
	struct an_pool_total *pt;
	uint32_t i, b;

	memset(&acc, 0, sizeof acc);
	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];

		pt = pool_acc_get(&acc, sg->pool_id);
		pt->segments++;
		pt->reserved = sv_sat_add(pt->reserved, sg->size);
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		     b < rs->n_blocks; b++)
			if (rs->blocks[b].state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				pt->allocated = sv_sat_add(pt->allocated,
				    rs->blocks[b].requested_size);
	}
	pools_finish(&acc, t);
}

/* The streams of device d's final segments into an empty map. */
static void
segment_streams(const struct snapshot *s, uint32_t d, struct u64map *streams)
{
	uint32_t g, gend;

	u64map_init(streams);
	snap_device_segments(s, d, &g, &gend);
	for (; g < gend; g++)
		if (s->segments[g].device == d)
			u64map_put(streams, s->segments[g].stream, 1);
}

/* Where the pass over a trace's events is. */
struct ev_pass {
	struct an_ev_counts *c;
	struct u64map streams;
	uint64_t last_stream;
};

/* Events [i, i + n) of the pass from their columns (time: NULL when the
 * trace has none). Returns -1 when asked to stop (util/stop.h). */
static int
count_run(struct ev_pass *p, uint64_t i, uint64_t n, const uint8_t *act,
    const uint64_t *stream, const int64_t *time)
{
	struct an_ev_counts *c = p->c;
	uint64_t k, dummy;

	for (k = 0; k < n; k++) {
		unsigned a = act[k];

		if (sv_stop_poll(i + k))
			return -1;
		c->by_action[a < SNAP_ACTION_COUNT ? a : SNAP_ACTION_COUNT]++;
		/* runs of one stream are the rule: look up changes */
		if ((i + k == 0 || stream[k] != p->last_stream) &&
		    !u64map_get(&p->streams, stream[k], &dummy))
			u64map_put(&p->streams, stream[k], 1);
		p->last_stream = stream[k];
	}
	if (time != NULL)
		snap_time_widen(time, (size_t)n, &c->has_time, &c->time_first,
		    &c->time_last);
	return 0;
}

/* The pass over a stripe-coded trace, a stripe's columns at a time (as
 * the accessors read them: a stripe the directory does not cover for
 * an event is read through them), not a cache lookup per value. */
static void
count_stripes(struct ev_pass *p, const struct snap_trace *t)
{
	const struct snap_stripeset *bs = t->stripes;
	int has_time = snap_trace_has_time(t);
	uint64_t i, b, first, end;

	for (i = 0; i < t->n; i = end) {
		const uint8_t *act;
		const uint64_t *stream;
		const int64_t *time = NULL;
		int r;

		b = snap_stripe_find(bs, i);
		first = bs->dir[b].first;
		end = first + bs->dir[b].n;
		if (i < first || i >= end) {
			uint8_t a = (uint8_t)snap_ev_action(t, i);
			uint64_t st = snap_ev_stream(t, i);
			int64_t tm = snap_ev_time(t, i);

			end = i + 1;
			if (count_run(p, i, 1, &a, &st, has_time ? &tm : NULL))
				return;
			continue;
		}
		if (end > t->n)
			end = t->n;
		act = snap_stripe_pin(bs, SNAP_COL_ACTION, b, 1);
		stream = snap_stripe_pin(bs, SNAP_COL_STREAM, b, 8);
		if (has_time)
			time = snap_stripe_pin(bs, SNAP_COL_TIME, b, 8);
		r = count_run(p, i, end - i, act + (i - first),
		    stream + (i - first), time != NULL ? time + (i - first)
		    : NULL);
		if (time != NULL)
			snap_stripe_unpin(time);
		snap_stripe_unpin(stream);
		snap_stripe_unpin(act);
		if (r != 0)
			return;
	}
}

void
an_ev_counts(const struct snapshot *s, uint32_t d, struct an_ev_counts *c)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct ev_pass p;

	memset(c, 0, sizeof *c);
	p.c = c;
	p.last_stream = 0;
	segment_streams(s, d, &p.streams);
	if (t != NULL) {
		c->events = t->n;
		if (t->stripes != NULL)
			count_stripes(&p, t);
		else if (t->n > 0)
			(void)count_run(&p, 0, t->n, t->action, t->stream,
			    t->time_us);
	}
	c->streams = p.streams.n;
	u64map_destroy(&p.streams);
}

void
an_ev_counts_from(const struct snapshot *s, uint32_t d,
    const struct idx_ev_tally *tally, struct an_ev_counts *c)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct u64map streams;
	uint32_t k;

	if (tally == NULL || tally->streams_over ||
	    tally->events != (t != NULL ? t->n : 0)) {
		an_ev_counts(s, d, c);
		return;
	}
	memset(c, 0, sizeof *c);
	c->events = tally->events;
	memcpy(c->by_action, tally->by_action, sizeof c->by_action);
	segment_streams(s, d, &streams);
	for (k = 0; k < tally->n_streams; k++)
		u64map_put(&streams, tally->streams[k], 1);
	c->streams = streams.n;
	u64map_destroy(&streams);
	if (t != NULL && snap_trace_has_time(t) && tally->has_time) {
		c->has_time = 1;
		c->time_first = tally->time_first;
		c->time_last = tally->time_last;
	}
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
