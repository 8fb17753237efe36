/*
 * Reading everything an open index holds, digested (idx_walk.h).
 */
#include "config.h"

#include "idx_walk.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "index/idx.h"
#include "index/idx_lod.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_model.h"

static void
add(XXH3_state_t *h, const void *p, size_t n)
{
	XXH3_64bits_update(h, p, n);
}

static void
add_u64(XXH3_state_t *h, uint64_t v)
{
	add(h, &v, sizeof v);
}

static void
add_str(XXH3_state_t *h, const struct snapshot *s, uint32_t id)
{
	const char *p = snap_str(s, id);

	add(h, p, strlen(p) + 1);
}

static void
add_stack(XXH3_state_t *h, const struct snapshot *s, uint32_t stack)
{
	uint32_t nf;
	const uint32_t *f = snap_stack(s, stack, &nf);

	add_u64(h, nf);
	if (nf > 0)
		add(h, f, nf * sizeof *f);
}

static void
walk_model(XXH3_state_t *h, const struct snapshot *s)
{
	uint32_t i;
	uint64_t j;

	for (i = 0; i < s->strs.n; i++)
		add_str(h, s, i);
	for (i = 0; i < s->n_frames; i++) {
		add_str(h, s, s->frames[i].name);
		add_str(h, s, s->frames[i].filename);
		add_u64(h, s->frames[i].line);
	}
	for (i = 0; i < s->n_stacks; i++)
		add_stack(h, s, i);
	for (i = 0; i < s->n_segments; i++) {
		const struct snap_segment *g = &s->segments[i];

		add_u64(h, g->addr);
		add_u64(h, g->total_size);
		if (g->first_block <= s->n_blocks &&
		    g->n_blocks <= s->n_blocks - g->first_block)
			for (j = 0; j < g->n_blocks; j++)
				add_u64(h, s->blocks[g->first_block + j].size);
	}
	for (i = 0; i < s->n_annotations; i++)
		add_str(h, s, s->annotations[i].name);
	for (i = 0; i < s->n_settings; i++) {
		add_str(h, s, s->settings[i].key);
		add_str(h, s, s->settings[i].value);
	}
}

/* The elements alive at the end and at the middle event, from the chunks
 * of each stripe that tell: in order, elements of the timeline. */
struct alive_walk {
	const struct idx_timeline *tl;
	uint64_t n, last;
};

static int
alive_one(void *arg, uint64_t k, const struct idx_elem *e)
{
	struct alive_walk *w = arg;

	if (k >= w->tl->n_elems || (w->n > 0 && k <= w->last))
		abort();
	(void)e;
	w->last = k;
	w->n++;
	return 0;
}

static void
walk_alive(XXH3_state_t *h, const struct idx_timeline *tl)
{
	int64_t at[] = {INT64_MAX, (int64_t)tl->n_events / 2};
	size_t i;

	for (i = 0; i < sizeof at / sizeof at[0]; i++) {
		struct alive_walk w = {tl, 0, 0};

		(void)idx_tl_alive_each(tl, at[i], 0, tl->n_elems, 0,
		    alive_one, &w);
		add_u64(h, w.n);
	}
}

static void
walk_device(XXH3_state_t *h, const struct sv_index *ix, uint32_t d, int lod)
{
	const struct snapshot *s = idx_snapshot(ix);
	const struct snap_trace *t = snap_trace_of(s, d);
	const struct idx_timeline *tl = idx_timeline(ix, d);
	const struct idx_lod *lp = idx_lod(ix, d);
	struct idx_lod_bucket b, cols[7];
	uint64_t j;

	for (j = 0; t != NULL && j < t->n; j++) {
		add_u64(h, snap_ev_action(t, j));
		add_u64(h, snap_ev_addr(t, j));
		add_u64(h, snap_ev_size(t, j));
		add_u64(h, snap_ev_stream(t, j));
		add_stack(h, s, snap_ev_stack(t, j));
		add_u64(h, (uint64_t)snap_ev_time(t, j));
		add_str(h, s, snap_ev_ctx(t, j));
		add_str(h, s, snap_ev_meta(t, j));
		add_str(h, s, snap_ev_pool_str(t, j));
	}
	if (tl == NULL || lp == NULL)
		return;
	for (j = 0; j < tl->n_elems; j++) {
		struct idx_elem e = idx_tl_elem(tl, j);

		add_u64(h, e.size + e.addr);
		add_stack(h, s, e.stack);
	}
	walk_alive(h, tl);
	for (j = 0; j < tl->n_events; j++) {
		uint64_t k = idx_tl_ev_elem(tl, j);

		add_u64(h, idx_tl_total(tl, (int64_t)j));
		add_u64(h, idx_tl_reserved(tl, (int64_t)j));
		add_u64(h, k < tl->n_elems ? idx_tl_elem(tl, k).size : 0);
	}
	if (!lod)
		return;
	idx_lod_range(lp, tl, 0, tl->n_events, &b);
	add_u64(h, b.max_total);
	idx_lod_range(lp, tl, tl->n_events / 3,
	    tl->n_events - tl->n_events / 4, &b);
	add_u64(h, b.min_total);
	if (tl->n_events > 0) {
		idx_lod_columns(lp, tl, 0, tl->n_events, 7, cols);
		add_u64(h, cols[6].max_reserved);
	}
}

uint64_t
idx_walk(const struct sv_index *ix, uint32_t max_devices, int lod)
{
	const struct snapshot *s = idx_snapshot(ix);
	XXH3_state_t *h = XXH3_createState();
	uint32_t d, nd = snap_device_count(s);
	uint64_t r;

	XXH3_64bits_reset(h);
	walk_model(h, s);
	if (nd > max_devices)
		nd = max_devices;
	for (d = 0; d < nd; d++)
		walk_device(h, ix, d, lod);
	add_str(h, s, 0);
	add(h, snap_format_label(s), strlen(snap_format_label(s)));
	add_u64(h, snap_default_device(s));
	r = XXH3_64bits_digest(h);
	XXH3_freeState(h);
	return r;
}
