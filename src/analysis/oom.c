/*
 * OOM reports. See oom.h.
 */
#include "config.h"

#include "analysis/oom.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

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
			oe->has_state = 1;
		}
	}
	return 0;
}

void
an_oom_destroy(struct an_oom *o)
{
	uint64_t i;

	for (i = 0; i < o->n_events; i++) {
		free(o->events[i].streams);
		an_top_destroy(&o->events[i].live);
	}
	free(o->events);
	memset(o, 0, sizeof *o);
}
