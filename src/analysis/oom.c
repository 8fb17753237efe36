/*
 * OOM reports. See oom.h.
 */
#include "config.h"

#include "analysis/oom.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay_round.h"
#include "util/units.h"
#include "util/xalloc.h"

#define MIB (1ull << 20)
/* Events searched after an OOM for the alloc that retried it. */
#define RETRY_SCAN 4096

uint64_t
an_oom_segment_size(uint64_t size)
{
	if (size <= MIB)
		return 2 * MIB;
	if (size < 10 * MIB)
		return 20 * MIB;
	if (size > UINT64_MAX - 2 * MIB)
		return size;
	return (size + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);
}

static void
add_cause(struct an_oom_event *oe, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
add_cause(struct an_oom_event *oe, int kind, const char *fmt, ...)
{
	va_list ap;

	if (oe->n_causes >= AN_OOM_MAX_CAUSES)
		return;
	oe->causes[oe->n_causes].kind = kind;
	va_start(ap, fmt);
	vsnprintf(oe->causes[oe->n_causes].text,
	    sizeof oe->causes[0].text, fmt, ap);
	va_end(ap);
	oe->n_causes++;
}

static void
explain(struct an_oom_event *oe)
{
	char a[32], b[32], c[32], d[32], p1[64], p2[64];
	const char *pool = oe->large ? "large" : "small";

	if (oe->enough_free && oe->segment_size > oe->device_free)
		add_cause(oe, AN_OOM_POOL, "the request's pool: for a %s "
		    "request the allocator asks the device for a %s segment "
		    "(%s pool), more than the %s it had free",
		    sv_fmt_size(a, sizeof a, oe->request),
		    sv_fmt_size(b, sizeof b, oe->segment_size), pool,
		    sv_fmt_size(c, sizeof c, oe->device_free));
	if (oe->enough_free && oe->segment_size <= oe->device_free) {
		add_cause(oe, AN_OOM_FRACTION, "a per-process memory "
		    "fraction (set_per_process_memory_fraction): "
		    "the device had room for the %s segment, so a cap between "
		    "this process's %s reserved and %s refused it",
		    sv_fmt_size(a, sizeof a, oe->segment_size),
		    sv_fmt_size(b, sizeof b, oe->reserved),
		    sv_fmt_size(c, sizeof c, oe->reserved + oe->segment_size));
		add_cause(oe, AN_OOM_OTHERS, "other processes: the free "
		    "figure is read after the failure, so memory another "
		    "process released in between shows as free");
	}
	if (!oe->enough_free)
		add_cause(oe, AN_OOM_OTHERS, "the device was full: %s free "
		    "for a %s segment; this process reserved %s, the rest is "
		    "held outside its caching allocator (other processes, the "
		    "CUDA context, libraries such as NCCL or cuBLAS)",
		    sv_fmt_size(a, sizeof a, oe->device_free),
		    sv_fmt_size(b, sizeof b, oe->segment_size),
		    sv_fmt_size(c, sizeof c, oe->reserved));
	if (oe->has_state && oe->pool_free >= oe->request &&
	    oe->pool_largest < oe->request)
		add_cause(oe, AN_OOM_FRAGMENTED, "fragmentation: %s free in "
		    "the %s pool on its stream, but the largest block is %s, "
		    "less than the %s request",
		    sv_fmt_size(a, sizeof a, oe->pool_free), pool,
		    sv_fmt_size(b, sizeof b, oe->pool_largest),
		    sv_fmt_size(d, sizeof d, oe->request));
	if (oe->has_state && oe->iso.isolated)
		add_cause(oe, AN_OOM_ISOLATED, "isolation: a %s block sat "
		    "free in %s on stream %" PRIu64 " (%s free in other pools "
		    "and streams), but the allocator serves a request only "
		    "from %s on stream %" PRIu64 ", its own",
		    sv_fmt_size(a, sizeof a, oe->iso.largest),
		    an_pool_name(p1, sizeof p1, oe->iso.pool), oe->iso.stream,
		    sv_fmt_size(b, sizeof b, oe->iso.other_free),
		    an_pool_name(p2, sizeof p2, oe->pool), oe->stream);
}

/* A later alloc of the request's size on the same stream. */
static int64_t
find_retry(const struct snap_trace *t, uint64_t i, uint64_t request,
    uint64_t stream)
{
	uint64_t j;

	for (j = i + 1; j < t->n && j <= i + RETRY_SCAN; j++) {
		uint64_t sz = snap_ev_size(t, j);

		if (snap_ev_action(t, j) != SNAP_ALLOC ||
		    snap_ev_stream(t, j) != stream)
			continue;
		/* the event carries the rounded size (either rule) */
		if (sz == request ||
		    replay_round_size(REPLAY_ROUND_CUDA, sz) == request ||
		    replay_round_size(REPLAY_ROUND_NPU, sz) == request)
			return (int64_t)j;
	}
	return -1;
}

static void
streams_of(const struct replay_state *st, struct an_oom_event *oe)
{
	uint32_t i, b, k;
	size_t cap = 0;

	for (i = 0; i < st->n_segments; i++) {
		const struct replay_segment *sg = &st->segments[i];
		struct an_oom_stream *x = NULL;

		for (k = 0; k < oe->n_streams; k++)
			if (oe->streams[k].stream == sg->stream)
				x = &oe->streams[k];
		if (x == NULL) {
			XGROW(oe->streams, cap, (size_t)oe->n_streams + 1);
			x = &oe->streams[oe->n_streams++];
			memset(x, 0, sizeof *x);
			x->stream = sg->stream;
		}
		x->segments++;
		x->reserved += sg->size;
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		     b < st->n_blocks; b++) {
			const struct replay_block *bl = &st->blocks[b];

			if (bl->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				oe->allocated_blocks += bl->size;
			if (bl->state != SNAP_BLOCK_INACTIVE)
				continue;
			x->free_bytes += bl->size;
			if (bl->size > x->largest_free)
				x->largest_free = bl->size;
			if (sg->stream != oe->stream ||
			    (sg->is_large != 0) != (oe->large != 0) ||
			    sg->pool_id[0] != oe->pool[0] ||
			    sg->pool_id[1] != oe->pool[1])
				continue;
			oe->pool_free += bl->size;
			if (bl->size > oe->pool_largest)
				oe->pool_largest = bl->size;
		}
	}
}

int
an_oom(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, struct an_oom *out,
    struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, tl->device);
	size_t cap = 0;
	uint64_t i;

	memset(out, 0, sizeof *out);
	out->device = tl->device;
	if (t == NULL)
		return 0;
	for (i = 0; i < t->n; i++) {
		struct an_oom_event *oe;

		if (snap_ev_action(t, i) != SNAP_OOM)
			continue;
		XGROW(out->events, cap, (size_t)out->n_events + 1);
		oe = &out->events[out->n_events++];
		memset(oe, 0, sizeof *oe);
		oe->ev = (int64_t)i;
		oe->request = snap_ev_size(t, i);
		oe->device_free = snap_ev_addr(t, i);
		oe->stream = snap_ev_stream(t, i);
		oe->stack = snap_ev_stack(t, i);
		oe->large = oe->request > MIB;
		if (!snap_ev_pool(s, t, i, oe->pool))
			oe->pool[0] = oe->pool[1] = 0;
		oe->segment_size = an_oom_segment_size(oe->request);
		oe->enough_free = oe->device_free >= oe->request;
		oe->retry_ev = find_retry(t, i, oe->request, oe->stream);
		if (oe->stack == 0 && oe->retry_ev >= 0)
			oe->stack = snap_ev_stack(t, (uint64_t)oe->retry_ev);
		oe->site = an_site_of(sites, oe->stack);
		oe->reserved = idx_tl_reserved(tl, i);
		oe->allocated = idx_tl_total(tl, i);
		an_top(tl, sites, (int64_t)i, 1, &oe->live);
		if (r != NULL) {
			if (replay_seek(r, (int64_t)i, err) != 0) {
				an_oom_destroy(out);
				return -1;
			}
			streams_of(replay_state(r), oe);
			oe->n_groups = an_pool_streams(replay_state(r),
			    &oe->groups);
			an_isolation_of(oe->groups, oe->n_groups, oe->pool,
			    oe->stream, oe->large, oe->request, &oe->iso);
			oe->has_state = 1;
		}
		explain(oe);
	}
	return 0;
}

void
an_oom_destroy(struct an_oom *o)
{
	uint64_t i;

	for (i = 0; i < o->n_events; i++) {
		free(o->events[i].streams);
		free(o->events[i].groups);
		an_top_destroy(&o->events[i].live);
	}
	free(o->events);
	memset(o, 0, sizeof *o);
}
