/*
 * Render layer tests of the timeline's stacking modes: the per-group
 * byte curves, reserved segments, the call-site bands and their legend
 * on real files, annotations, patterns without colour, the highlighted
 * set, the analysis lists' labels, freed-at and the before-trace split.
 * Run by check_render.c.
 */
#include "config.h"

#include "render_fix.h"
#include "util/stop.h"

/* ---- stacking modes ------------------------------------------------------ */

/* Group of an element of the worked example: A and C in group 0, B in
 * group 1. */
static uint32_t
ex_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	(void)ctx;
	(void)e;
	return k == 1 ? 1 : 0;
}

/* Per-group bytes after every event equal a brute-force sum over the
 * elements alive then. */
START_TEST(test_render_groups_bytes)
{
	struct idx_timeline tl;
	struct tl_groups g;
	uint32_t top[4];
	int64_t ev;
	uint32_t grp;

	example(&tl);
	ck_assert_int_eq(tl_groups_build(&g, &tl, 4, ex_group, NULL), 0);
	ck_assert_uint_eq(g.n, 2);
	for (ev = -1; ev < 5; ev++)
		for (grp = 0; grp < 2; grp++) {
			uint64_t want = 0, k;

			for (k = 0; k < tl.n_elems; k++)
				if (ex_group(NULL, &ex_elems[k], k) == grp &&
				    an_elem_alive(&ex_elems[k], ev))
					want += ex_elems[k].size;
			ck_assert_msg(tl_groups_bytes(&g, grp, ev) == want,
			    "group %u after %lld: %llu, want %llu", grp,
			    (long long)ev,
			    (unsigned long long)tl_groups_bytes(&g, grp, ev),
			    (unsigned long long)want);
		}
	/* after event 2: A+C 150, B 200; after 3: C 50, B 200 */
	ck_assert_uint_eq(tl_groups_top(&g, 2, 4, top), 2);
	ck_assert_uint_eq(top[0], 1);
	ck_assert_uint_eq(top[1], 0);
	ck_assert_uint_eq(tl_groups_top(&g, 2, 1, top), 1);
	ck_assert_uint_eq(top[0], 1);
	/* the largest element's stack names each group */
	ck_assert_uint_eq(g.max_elem[0], 0);
	ck_assert_uint_eq(g.max_elem[1], 1);
	tl_groups_destroy(&g);
}
END_TEST

/* Real and generated files whose segment events are consistent with
 * their final segments (check passes on them). */
static const char *const seg_files[] = {"gen/expandable.pickle",
    "real/npu_leak_expandable.pickle", "real/npu_leak_empty_cache.pickle",
    "real/cuda_train_one_step.pickle", "gen/frag.pickle",
    "gen/graphs.pickle", "real/npu_all_freed.pickle"};

/* The segment timeline's elements add up to reserved memory after every
 * event (segment_map/unmap counted): a sweep over their starts and ends
 * against the timeline's reserved column. Built from the segment events
 * the timeline model's pass lists, which are every event whose action
 * is a segment's, in order. */
START_TEST(test_render_segs_reserved)
{
	struct snapshot *s = load_data(seg_files[_i]);
	uint32_t d = snap_default_device(s);
	const struct snap_trace *t = snap_trace_of(s, d);
	struct idx_timeline tl;
	struct tl_model m;
	struct tl_segs sg;
	struct sv_error err;
	int64_t *delta;
	int64_t run = 0;
	uint64_t k, i, n_map = 0, n_seg = 0;

	ck_assert_int_eq(idx_timeline_build(s, d, &tl, &err), 0);
	tl_model_init(&m, s, &tl, TL_DEFAULT_DRAWN);
	for (i = 0; i < t->n; i++) {
		unsigned a = snap_ev_action(t, i);

		if (a != SNAP_SEGMENT_ALLOC && a != SNAP_SEGMENT_FREE &&
		    a != SNAP_SEGMENT_MAP && a != SNAP_SEGMENT_UNMAP)
			continue;
		ck_assert_uint_lt(n_seg, m.n_seg_evs);
		ck_assert_int_eq(m.seg_evs[n_seg], (int64_t)i);
		n_seg++;
	}
	ck_assert_uint_eq(n_seg, m.n_seg_evs);
	tl_segs_build(&sg, s, d, t, m.seg_evs, m.n_seg_evs);
	tl_model_destroy(&m);
	delta = calloc(tl.n_events + 1, sizeof *delta);
	for (k = 0; k < sg.n; k++) {
		const struct idx_elem *e = &sg.elems[k];

		ck_assert_uint_gt(e->size, 0);
		if (e->alloc_ev < 0)
			run += (int64_t)e->size;
		else
			delta[e->alloc_ev] += (int64_t)e->size;
		if (e->free_ev >= 0)
			delta[e->free_ev] -= (int64_t)e->size;
	}
	ck_assert_int_eq(run, (int64_t)tl.base_reserved);
	for (i = 0; i < tl.n_events; i++) {
		run += delta[i];
		ck_assert_msg(run == (int64_t)idx_tl_reserved(&tl, i),
		    "%s: after #%llu segments %lld, reserved %llu",
		    seg_files[_i], (unsigned long long)i, (long long)run,
		    (unsigned long long)idx_tl_reserved(&tl, i));
		n_map += snap_ev_action(t, i) == SNAP_SEGMENT_MAP;
	}
	/* expandable files: one element per mapped range at least */
	if (n_map > 0)
		ck_assert_uint_ge(sg.n, n_map);
	free(delta);
	tl_segs_destroy(&sg);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The events of the traces below, all of them segment events. */
static const int64_t all_evs[] = {0, 1, 2, 3, 4};

/* A hostile order of segment events (unmaps over nothing, overlapping
 * maps, an unmap across three ranges and a gap) gives elements, never a
 * hang or a negative size, and an unmap across ranges ends each. */
START_TEST(test_render_segs_unmap_ranges)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	struct tl_segs sg;
	uint64_t k, live_after = 0;

	snap_trace_push(s, t, SNAP_SEGMENT_MAP, 0x1000, 0x1000, 0, 0);
	t = snap_trace_get(s, 0);
	snap_trace_push(s, t, SNAP_SEGMENT_MAP, 0x2000, 0x1000, 0, 0);
	t = snap_trace_get(s, 0);
	snap_trace_push(s, t, SNAP_SEGMENT_MAP, 0x4000, 0x2000, 0, 0);
	t = snap_trace_get(s, 0);
	/* [0x1800, 0x5000): half of the first, the second, a gap, half of
	 * the third */
	snap_trace_push(s, t, SNAP_SEGMENT_UNMAP, 0x1800, 0x3800, 0, 0);
	t = snap_trace_get(s, 0);
	snap_trace_push(s, t, SNAP_SEGMENT_UNMAP, 0x9000, 0x1000, 0, 0);
	t = snap_trace_get(s, 0);
	tl_segs_build(&sg, s, 0, t, all_evs, t->n);
	for (k = 0; k < sg.n; k++) {
		const struct idx_elem *e = &sg.elems[k];

		ck_assert_uint_gt(e->size, 0);
		if (e->free_ev < 0 && e->alloc_ev <= 4)
			live_after += e->size;
	}
	/* left: [0x1000, 0x1800) and [0x5000, 0x6000) */
	ck_assert_uint_eq(live_after, 0x800 + 0x1000);
	/* the gap [0x3000, 0x4000) and [0x9000, 0xa000): mapped before */
	ck_assert_uint_eq(sg.n_pre, 2);
	tl_segs_destroy(&sg);
	snap_free(s);
}
END_TEST

/* Overlapping maps: the part of a range left by an unmap can start where
 * another live range starts. The later one takes that start and the
 * earlier ends there, as with two maps at one address. */
START_TEST(test_render_segs_overlap_start)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	struct tl_segs sg;
	uint64_t k, live = 0, n_live = 0;
	int found = 0;

	snap_trace_push(s, t, SNAP_SEGMENT_MAP, 0x1000, 0x2000, 0, 0);
	t = snap_trace_get(s, 0);
	snap_trace_push(s, t, SNAP_SEGMENT_MAP, 0x2000, 0x2000, 0, 0);
	t = snap_trace_get(s, 0);
	/* leaves [0x2000, 0x3000) of the first, where the second starts */
	snap_trace_push(s, t, SNAP_SEGMENT_UNMAP, 0x1000, 0x1000, 0, 0);
	t = snap_trace_get(s, 0);
	tl_segs_build(&sg, s, 0, t, all_evs, t->n);
	for (k = 0; k < sg.n; k++) {
		const struct idx_elem *e = &sg.elems[k];

		ck_assert_uint_gt(e->size, 0);
		if (e->free_ev < 0) {
			live += e->size;
			n_live++;
		}
		if (e->alloc_ev == 1) {
			ck_assert_int_eq(e->free_ev, 2);
			found = 1;
		}
	}
	ck_assert(found);
	ck_assert_uint_eq(n_live, 1);
	ck_assert_uint_eq(live, 0x1000);
	tl_segs_destroy(&sg);
	snap_free(s);
}
END_TEST

/* Loads a file into a model with its timeline (freed by the caller). */
static struct snapshot *
model_of(const char *rel, struct idx_timeline *tl, struct tl_model *m)
{
	struct snapshot *s = load_data(rel);
	struct sv_error err;

	ck_assert_int_eq(idx_timeline_build(s, snap_default_device(s), tl,
	    &err), 0);
	tl_model_init(m, s, tl, TL_DEFAULT_DRAWN);
	return s;
}

/* The call-site bands of the real training run at its peak are the top
 * sites of an_top at that event (the same site rule, computed from the
 * live elements instead of byte curves), and the bands add up to the
 * total. */
START_TEST(test_render_site_bands_real)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of("real/cuda_train_one_step.pickle", &tl,
	    &m);
	struct tl_view v = {.ev0 = 0, .ev1 = (int64_t)tl.n_events,
	    .cursor = tl.peak_ev, .sel_elem = TL_NO_ELEM,
	    .stack = TL_STACK_SITE, .mark_sel = -2};
	struct tl_frame fr = {.row_bytes = 1, .peak_ev = tl.peak_ev,
	    .rank_stack = -1};
	struct tl_band b[64];
	struct an_sites sites;
	struct an_top top;
	char why[128], la[512], lb[512];
	int n, i, share;

	/* the case: no allocation big enough at 120x40 */
	ck_assert_int_eq(tl_model_auto_stack(&m, 120, 19, &share),
	    TL_STACK_SITE);
	ck_assert_int_lt(share, 50);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why, sizeof why),
	    0);
	tl_rank(&m, &v, &fr);
	ck_assert_uint_eq(fr.n_top, TL_MAX_BANDS);
	n = tl_bands_at(&m, &v, &fr, tl.peak_ev, b, 64);
	ck_assert_int_eq(n, TL_MAX_BANDS + 1);
	ck_assert_uint_eq(b[n - 1].hi, tl_total_at(&m, tl.peak_ev));
	ck_assert_int_eq(b[n - 1].kind, TL_PICK_OTHER);
	ck_assert_int_eq(an_sites_init(&sites, s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_top(&tl, &sites, tl.peak_ev, 1, &top), 0);
	for (i = 0; i < TL_MAX_BANDS; i++) {
		const struct an_top_node *t = &top.nodes[top.roots[i]];

		ck_assert_uint_eq(b[i].hi - b[i].lo, t->bytes);
		if (i > 0)
			ck_assert_uint_eq(b[i].lo, b[i - 1].hi);
		tl_group_label(&m, TL_STACK_SITE, (uint32_t)b[i].id, 0, 1, la,
		    sizeof la);
		/* blocks allocated before the trace are named by their
		 * free, as the top view names them */
		strcpy(lb, t->free_stack ? "freed at " : "");
		an_site_label(&sites, t->site, lb + strlen(lb),
		    sizeof lb - strlen(lb));
		/* equal bytes may rank either way: compare the labels only
		 * where the bytes differ from a neighbour's */
		if ((i == 0 || top.nodes[top.roots[i - 1]].bytes != t->bytes) &&
		    (i + 1 == TL_MAX_BANDS ||
		    top.nodes[top.roots[i + 1]].bytes != t->bytes))
			ck_assert_str_eq(la, lb);
	}
	an_top_destroy(&top);
	an_sites_destroy(&sites);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* Allocation bands coloured by call site (c): the legend has an entry
 * per colour, in that colour, named by a site whose bands have it; a
 * legend part with no bytes at the cursor is left out (no "0B under
 * 201M" in the segment mode). */
START_TEST(test_render_legend_site_colours)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of("gen/frag.pickle", &tl, &m);
	struct tl_view v = {.ev0 = 0, .ev1 = (int64_t)tl.n_events,
	    .cursor = tl.peak_ev, .sel_elem = TL_NO_ELEM, .by_site = 1,
	    .utf8 = 1, .stack = TL_STACK_ALLOC, .legend = TL_LEGEND_FULL,
	    .mark_sel = -2};
	struct tl_frame fr = {.rank_stack = -1};
	struct cellbuf cb;
	char why[128], *text;
	int y, x, named = 0, seen;
	struct cell *c;

	cellbuf_init(&cb, 120, 39);
	tl_render(&m, &v, &cb, 0, 0, 120, 39, &fr);
	text = cellbuf_to_text(&cb);
	for (y = fr.ph + 2; y < 39; y++) {
		c = cellbuf_at(&cb, 0, y);
		if (c->color < UIC_BAND0 || c->color >= UIC_BAND0 +
		    UIC_NBANDS)
			continue;
		/* the colour is one the plot's bands have */
		for (seen = 0, x = TL_YAXIS_W; x < 120 && !seen; x++) {
			int r;

			for (r = 0; r < fr.ph && !seen; r++)
				seen = cellbuf_at(&cb, x, r)->color == c->color;
		}
		ck_assert_msg(seen, "legend row %d: colour %d not in the plot",
		    y, c->color);
		named++;
	}
	ck_assert_int_ge(named, 3);
	ck_assert_ptr_nonnull(strstr(text, "model.py:52 forward"));
	ck_assert_ptr_null(strstr(text, "one band each"));
	free(text);
	cellbuf_destroy(&cb);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);

	s = model_of("real/cuda_train_one_step.pickle", &tl, &m);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SEGMENT, why,
	    sizeof why), 0);
	v.ev1 = (int64_t)tl.n_events;
	v.cursor = tl.peak_ev;
	v.stack = TL_STACK_SEGMENT;
	v.by_site = 0;
	v.legend = TL_LEGEND_AUTO;
	memset(&fr, 0, sizeof fr);
	fr.rank_stack = -1;
	cellbuf_init(&cb, 80, 11);
	tl_render(&m, &v, &cb, 0, 0, 80, 11, &fr);
	text = cellbuf_to_text(&cb);
	ck_assert_msg(strstr(text, " segments") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "0B under") == NULL, "%s", text);
	free(text);
	cellbuf_destroy(&cb);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The reserved line is unbroken: in every column, the cell at the
 * reserved level is the line, over the summary's shade and the bands'
 * tops alike (the real one-step run, whose reserved line runs through
 * the summary band; a file whose reserved bytes lie in the bottom row). */
START_TEST(test_render_reserved_line)
{
	static const char *const files[] = {"real/cuda_train_one_step.pickle",
	    "real/synthetic_inconsistent.pickle"};
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s;
	struct tl_view v;
	struct tl_frame fr;
	const struct tl_cols *cols;
	struct cellbuf cb;
	struct cell *c;
	char why[128];
	int k, x, r, pw;

	for (k = 0; k < 2; k++) {
		s = model_of(files[k], &tl, &m);
		memset(&v, 0, sizeof v);
		v.ev1 = (int64_t)tl.n_events;
		v.cursor = tl.peak_ev;
		v.sel_elem = TL_NO_ELEM;
		v.utf8 = 1;
		v.mono = 1;
		v.stack = TL_STACK_SITE;
		v.mark_sel = -2;
		ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why,
		    sizeof why), 0);
		memset(&fr, 0, sizeof fr);
		fr.rank_stack = -1;
		cellbuf_init(&cb, 80, 11);
		tl_render(&m, &v, &cb, 0, 0, 80, 11, &fr);
		pw = tl_plot_width(80);
		cols = tl_columns(&m, &v, pw);
		for (x = 0; x < pw; x++) {
			if (x == tl_event_col(&m, &v, pw, v.cursor))
				continue; /* the cursor's column */
			r = (int)(((double)cols->res[x] - (double)fr.ylo) /
			    fr.row_bytes);
			if (cols->res[x] == 0 || cols->res[x] >= fr.yhi)
				r = fr.ph - 1;
			if (r >= fr.ph)
				r = fr.ph - 1;
			c = cellbuf_at(&cb, TL_YAXIS_W + x, fr.ph - 1 - r);
			ck_assert_msg(c->ch == 0x2500 && c->color ==
			    UIC_RESERVED, "%s: column %d row %d: U+%04X "
			    "colour %d", files[k], x, r, c->ch, c->color);
		}
		cellbuf_destroy(&cb);
		tl_model_destroy(&m);
		idx_timeline_destroy(&tl);
		snap_free(s);
	}
}
END_TEST

/* Generated frag file: big allocations, drawn one by one. */
START_TEST(test_render_auto_alloc)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of("gen/frag.pickle", &tl, &m);
	int share;

	ck_assert_int_eq(tl_model_auto_stack(&m, 120, 19, &share),
	    TL_STACK_ALLOC);
	ck_assert_int_ge(share, 50);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* Annotations land on the first event at or after their time (worked
 * out here by a linear scan of the trace), sorted; stepping goes
 * through them one by one. */
START_TEST(test_render_annotations)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of("real/cuda_train_one_step.pickle", &tl,
	    &m);
	const struct snap_trace *t = snap_trace_of(s, tl.device);
	uint32_t i;
	uint64_t k, n = 0, j;

	ck_assert_uint_eq(m.n_annots, 2);
	for (i = 0; i < s->n_annotations; i++) {
		const struct snap_annotation *a = &s->annotations[i];
		int64_t want = a->stage == SNAP_STAGE_START ?
		    (int64_t)t->n - 1 : 0;

		/* a START at the first event at or after it, an END at the
		 * last at or before it */
		for (k = 0; k < t->n; k++) {
			if (a->stage == SNAP_STAGE_START &&
			    snap_ev_time(t, k) >= a->time_us) {
				want = (int64_t)k;
				break;
			}
			if (a->stage == SNAP_STAGE_END &&
			    snap_ev_time(t, k) <= a->time_us)
				want = (int64_t)k;
		}
		for (j = 0; j < m.n_annots; j++)
			if (m.annots[j].time_us == a->time_us &&
			    m.annots[j].stage == a->stage) {
				ck_assert_int_eq(m.annots[j].ev, want);
				n++;
			}
	}
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(m.annots[0].stage, SNAP_STAGE_START);
	ck_assert_str_eq(snap_str(s, m.annots[0].name),
	    "Optimizer.step#AdamW.step");
	ck_assert_uint_eq(tl_model_annot_step(&m, 0, UINT64_MAX, 1), 0);
	ck_assert_uint_eq(tl_model_annot_step(&m, m.annots[0].ev, 0, 1), 1);
	ck_assert_uint_eq(tl_model_annot_step(&m, m.annots[1].ev, 1, 1),
	    UINT64_MAX);
	ck_assert_uint_eq(tl_model_annot_step(&m, m.annots[1].ev, 1, -1), 0);
	ck_assert_uint_eq(tl_model_annot_step(&m, 0, UINT64_MAX, -1),
	    UINT64_MAX);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* Without colour every band pattern differs from the others and from
 * the summary, set and picked glyphs, in UTF-8 and in ASCII. */
START_TEST(test_render_mono_patterns)
{
	struct tl_view v = {.mono = 1, .utf8 = _i};
	struct tl_band b = {0};
	uint32_t g[UIC_NBANDS + 3];
	int i, j;

	b.kind = TL_PICK_GROUP;
	for (i = 0; i < UIC_NBANDS; i++) {
		b.color = (uint8_t)i;
		g[i] = tl_band_glyph(&v, &b);
	}
	b.kind = TL_PICK_OTHER;
	g[UIC_NBANDS] = tl_band_glyph(&v, &b);
	b.kind = TL_PICK_SET;
	g[UIC_NBANDS + 1] = tl_band_glyph(&v, &b);
	b.kind = TL_PICK_GROUP;
	b.hilite = 1;
	g[UIC_NBANDS + 2] = tl_band_glyph(&v, &b);
	for (i = 0; i < UIC_NBANDS + 3; i++)
		for (j = i + 1; j < UIC_NBANDS + 3; j++)
			ck_assert_msg(g[i] != g[j],
			    "patterns %d and %d: U+%04X", i, j, g[i]);
}
END_TEST

/* The leak view's set in a grouped mode rests at the bottom and is
 * taken out of its group's band: the column still adds up to the
 * total. */
START_TEST(test_render_hilite_grouped)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of("real/cuda_train_one_step.pickle", &tl,
	    &m);
	struct tl_view v = {.ev0 = 0, .ev1 = (int64_t)tl.n_events,
	    .cursor = tl.peak_ev, .sel_elem = TL_NO_ELEM,
	    .stack = TL_STACK_SITE, .mark_sel = -2};
	struct tl_frame fr = {.row_bytes = 1, .peak_ev = tl.peak_ev,
	    .rank_stack = -1};
	struct tl_hilite h;
	struct tl_band b[64];
	uint64_t set[64], ns = 0, k, sum, env;
	char why[128];
	int n, i, st;

	/* the set: the peak's 64 first live trace allocations */
	for (k = 0; k < tl.n_elems && ns < 64; k++) {
		struct idx_elem e = idx_tl_elem(&tl, k);

		if (e.alloc_ev >= 0 && an_elem_alive(&e, tl.peak_ev))
			set[ns++] = k;
	}
	ck_assert_uint_gt(ns, 0);
	for (st = 0; st < TL_STACK_COUNT; st++) {
		if (st == TL_STACK_CATEGORY)
			continue;
		ck_assert_int_eq(tl_model_prepare(&m, st, why, sizeof why), 0);
		tl_hilite_init(&h, &m, set, NULL, ns);
		v.stack = st;
		v.hl = &h;
		fr.rank_stack = -1;
		fr.row_bytes = (double)tl.peak / 40;
		tl_rank(&m, &v, &fr);
		n = tl_bands_at(&m, &v, &fr, tl.peak_ev, b, 64);
		ck_assert_int_gt(n, 0);
		for (i = 0, sum = 0, env = 0; i < n; i++) {
			ck_assert_uint_eq(b[i].lo, sum);
			sum = b[i].hi;
			if (b[i].envelope)
				env += b[i].hi - b[i].lo;
		}
		/* the pool mode's envelopes stand above the total */
		if (st != TL_STACK_POOL)
			ck_assert_uint_eq(env, 0);
		ck_assert_uint_eq(sum - env, tl_stack_total(&m, st,
		    tl.peak_ev));
		if (st != TL_STACK_SEGMENT) {
			ck_assert_int_eq(b[0].kind, TL_PICK_SET);
			ck_assert_uint_eq(b[0].hi, tl_hilite_bytes(&h,
			    tl.peak_ev));
		}
		tl_hilite_destroy(&h);
	}
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The pool mode on the generated pools scenario (a CUDA graph's own
 * pool on a side stream, a MemPool, the default pool): after the last
 * event each (pool, stream)'s envelope (its blocks, then the free rest
 * of its reserved memory) is as high as the reserved bytes of its final
 * segments, which add up to the device's reserved bytes; before the
 * first event the private pools hold nothing. */
START_TEST(test_render_pool_envelopes)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of("gen/pools.pickle", &tl, &m);
	struct tl_view v = {.ev0 = 0, .ev1 = (int64_t)tl.n_events,
	    .cursor = -1, .sel_elem = TL_NO_ELEM,
	    .stack = TL_STACK_POOL, .mark_sel = -2};
	struct tl_frame fr = {.row_bytes = 1, .rank_stack = -1};
	struct tl_band b[64];
	int64_t last = (int64_t)tl.n_events - 1;
	uint64_t want[8] = {0}, got[8] = {0}, sum = 0;
	uint32_t g, i, n_priv = 0;
	char why[128];
	int n, j;

	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_POOL, why, sizeof why),
	    0);
	ck_assert_uint_eq(m.n_pkeys, 3);
	for (i = 0; i < s->n_segments; i++)
		for (g = 0; g < m.n_pkeys; g++)
			if (m.pkeys[g].stream == s->segments[i].stream &&
			    m.pkeys[g].pool[0] == s->segments[i].pool_id[0] &&
			    m.pkeys[g].pool[1] == s->segments[i].pool_id[1])
				want[g] += s->segments[i].total_size;
	for (g = 0; g < m.n_pkeys; g++) {
		ck_assert_uint_gt(want[g], 0);
		ck_assert_uint_eq(tl_pool_reserved(&m, g, last), want[g]);
		sum += want[g];
		if (m.pkeys[g].pool[0] != 0 || m.pkeys[g].pool[1] != 0) {
			n_priv++;
			ck_assert_uint_eq(tl_pool_reserved(&m, g, -1), 0);
		}
	}
	ck_assert_uint_eq(n_priv, 2);
	ck_assert_uint_eq(sum, idx_tl_reserved(&tl, last));
	/* drawn: every group a band of blocks and one of free memory,
	 * together as high as its reserved bytes */
	fr.peak_ev = last;
	tl_rank(&m, &v, &fr);
	ck_assert_uint_eq(fr.n_top, 3);
	n = tl_bands_at(&m, &v, &fr, last, b, 64);
	for (j = 0; j < n; j++)
		if (b[j].kind == TL_PICK_GROUP && b[j].id < 8)
			got[b[j].id] += b[j].hi - b[j].lo;
	for (g = 0; g < m.n_pkeys; g++)
		ck_assert_uint_eq(got[g], want[g]);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The stream/pool mode's bytes per group after a spread of events are a
 * brute-force sum over the elements alive then, each element's key its
 * stream and the pool of its event, else of the final segment holding
 * its address, found by reading every segment (the mode looks it up by
 * a search that starts at the span of its last lookup). */
static const char *const pool_files[] = {"gen/pools.pickle",
    "gen/graphs.pickle", "gen/expandable.pickle",
    "real/npu_leak_expandable.pickle", "real/cuda_train_one_step.pickle"};

START_TEST(test_render_stream_groups)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of(pool_files[_i], &tl, &m);
	const struct snap_trace *t = snap_trace_of(s, tl.device);
	uint64_t *want, k, checked = 0;
	uint32_t g, i, *key;
	int64_t ev, step;
	char why[128];

	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_STREAM, why,
	    sizeof why), 0);
	ck_assert_uint_gt(m.n_skeys, 0);
	ck_assert_uint_lt(m.n_skeys, 64); /* no key merged into the last */
	/* each element's key, by brute force */
	key = calloc(tl.n_elems + 1, sizeof *key);
	ck_assert_ptr_nonnull(key);
	for (k = 0; k < tl.n_elems; k++) {
		struct idx_elem e = idx_tl_elem(&tl, k);
		int64_t pool[2] = {0, 0}, at = e.alloc_ev >= 0 ? e.alloc_ev :
		    e.free_ev;
		const struct tl_seg_span *last = NULL;

		if (at < 0 || !snap_ev_pool(s, t, (uint64_t)at, pool)) {
			for (i = 0; i < m.n_seg_by_addr; i++)
				if (m.seg_by_addr[i].addr <= e.addr)
					last = &m.seg_by_addr[i];
			if (last != NULL && e.addr - last->addr < last->size) {
				pool[0] = last->pool[0];
				pool[1] = last->pool[1];
			}
		}
		key[k] = UINT32_MAX;
		for (g = 0; g < m.n_skeys; g++)
			if (m.skeys[g].stream == e.stream &&
			    m.skeys[g].pool[0] == pool[0] &&
			    m.skeys[g].pool[1] == pool[1])
				key[k] = g;
		ck_assert_uint_ne(key[k], UINT32_MAX);
	}
	want = calloc(m.n_skeys, sizeof *want);
	ck_assert_ptr_nonnull(want);
	step = (int64_t)tl.n_events / 97 + 1;
	for (ev = -1; ev < (int64_t)tl.n_events; ev += step) {
		memset(want, 0, m.n_skeys * sizeof *want);
		for (k = 0; k < tl.n_elems; k++) {
			struct idx_elem e = idx_tl_elem(&tl, k);

			if (an_elem_alive(&e, ev))
				want[key[k]] += e.size;
		}
		for (g = 0; g < m.n_skeys; g++) {
			const struct tl_groups *gr = &m.groups[TL_STACK_STREAM];

			ck_assert_msg(tl_groups_bytes(gr, g, ev) == want[g],
			    "%s: group %u after %lld", pool_files[_i], g,
			    (long long)ev);
			checked += want[g] > 0;
		}
	}
	ck_assert_uint_gt(checked, 0);
	free(want);
	free(key);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* Groups a and b are the same: their number, and per group its base,
 * largest element and changes, and its bytes after every step-th event
 * of n (what names the pair in a failure). */
static void
groups_same(const struct tl_groups *a, const struct tl_groups *b,
    uint64_t n, int64_t step, const char *what)
{
	int64_t ev;
	uint32_t g;

	ck_assert_uint_eq(a->n, b->n);
	ck_assert_uint_eq(a->n_used, b->n_used);
	for (g = 0; g < a->n; g++) {
		ck_assert_uint_eq(a->base[g], b->base[g]);
		ck_assert_uint_eq(a->stack[g], b->stack[g]);
		ck_assert_uint_eq(a->max_elem[g], b->max_elem[g]);
		ck_assert_uint_eq(a->c[g].n_changes, b->c[g].n_changes);
		for (ev = -1; ev < (int64_t)n; ev += step)
			ck_assert_msg(tl_groups_bytes(a, g, ev) ==
			    tl_groups_bytes(b, g, ev),
			    "%s: group %u after %lld", what, g, (long long)ev);
	}
}

/* The pool mode's curves borrowed from the stream/pool mode's
 * (tl_pool_derive) are what a pass of its own builds: the same keys in
 * the same order, and per group the same size, base, largest element
 * and bytes after a spread of events. Reached both ways a viewer
 * reaches it: in the call-site mode's pass, and on its own once the
 * stream/pool mode is there; and a model that drops the stream/pool
 * mode's groups first frees each array once (ASan). */
static void
check_pool_derived(const struct snapshot *s, const struct idx_timeline *tl,
    const char *name)
{
	struct tl_model m, own;
	char why[128];
	int way;

	for (way = 0; way < 2; way++) {
		tl_model_init(&m, s, tl, TL_DEFAULT_DRAWN);
		if (way == 1)
			ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_STREAM,
			    why, sizeof why), 0);
		ck_assert_int_eq(tl_model_prepare(&m, way == 0 ?
		    TL_STACK_SITE : TL_STACK_POOL, why, sizeof why), 0);
		ck_assert_int_gt(m.groups_ok[TL_STACK_POOL], 0);
		ck_assert_int_eq(m.groups[TL_STACK_POOL].borrowed, 1);
		tl_pool_derive = 0;
		tl_model_init(&own, s, tl, TL_DEFAULT_DRAWN);
		ck_assert_int_eq(tl_model_prepare(&own, TL_STACK_POOL, why,
		    sizeof why), 0);
		tl_pool_derive = 1;
		ck_assert_int_eq(own.groups[TL_STACK_POOL].borrowed, 0);
		ck_assert_uint_eq(m.n_pkeys, own.n_pkeys);
		ck_assert_mem_eq(m.pkeys, own.pkeys,
		    m.n_pkeys * sizeof *m.pkeys);
		groups_same(&m.groups[TL_STACK_POOL],
		    &own.groups[TL_STACK_POOL], tl->n_events,
		    (int64_t)tl->n_events / 89 + 1, name);
		tl_model_destroy(&own);
		tl_model_destroy(&m);
	}
}

START_TEST(test_render_pool_derived)
{
	struct snapshot *s = load_data(pool_files[_i]);
	struct idx_timeline tl;
	struct sv_error err;

	ck_assert_int_eq(idx_timeline_build(s, snap_default_device(s), &tl,
	    &err), 0);
	check_pool_derived(s, &tl, pool_files[_i]);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The same where the pool mode's ids are not the stream/pool mode's:
 * the final segments (which name the pool mode's first keys) listed in
 * another order than the blocks the trace allocates in them, and a
 * stream no segment names. None of the files above has that. */
START_TEST(test_render_pool_derived_ids)
{
	static const struct {
		uint64_t addr, stream;
		int64_t pool[2];
	} seg[3] = {{0x100000, 5, {0, 0}}, {0x200000, 0, {3, 4}},
	    {0x300000, 0, {0, 0}}};
	/* (segment, stream) of each allocation, in trace order */
	static const int al[6][2] = {{2, 0}, {1, 0}, {0, 5}, {2, 9},
	    {1, 0}, {2, 0}};
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	struct idx_timeline tl;
	struct sv_error err;
	struct tl_model m;
	char why[128];
	int i;

	for (i = 0; i < 3; i++) {
		struct snap_segment *sg = snap_push_segment(s);
		struct snap_block *b;

		memset(sg, 0, sizeof *sg);
		sg->addr = seg[i].addr;
		sg->total_size = 1u << 20;
		sg->stream = seg[i].stream;
		sg->pool_id[0] = seg[i].pool[0];
		sg->pool_id[1] = seg[i].pool[1];
		sg->first_block = (uint32_t)i;
		sg->n_blocks = 1;
		b = snap_push_block(s);
		memset(b, 0, sizeof *b);
		b->addr = sg->addr;
		b->size = sg->total_size;
		b->state = SNAP_BLOCK_INACTIVE;
	}
	for (i = 0; i < 6; i++)
		snap_trace_push(s, t, SNAP_ALLOC, seg[al[i][0]].addr +
		    0x1000 * (uint64_t)i, 4096 * (uint64_t)(i + 1),
		    (uint64_t)al[i][1], 0);
	for (i = 5; i >= 0; i--)
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, seg[al[i][0]].addr +
		    0x1000 * (uint64_t)i, 4096 * (uint64_t)(i + 1),
		    (uint64_t)al[i][1], 0);
	snap_finish(s);
	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, &err), 0);
	/* the ids differ: the pool mode's first key is the first
	 * segment's, the stream/pool mode's the first allocation's */
	tl_model_init(&m, s, &tl, TL_DEFAULT_DRAWN);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why, sizeof why),
	    0);
	ck_assert_uint_eq(m.n_skeys, 4);
	ck_assert_uint_eq(m.n_pkeys, 4);
	ck_assert_uint_eq(m.skeys[0].stream, 0);
	ck_assert_uint_eq(m.pkeys[0].stream, 5);
	ck_assert_uint_eq(m.pkeys[3].stream, 9);
	ck_assert_uint_eq(tl_groups_bytes(&m.groups[TL_STACK_POOL], 0, 5),
	    4096 * 3);
	tl_model_destroy(&m);
	check_pool_derived(s, &tl, "segments out of order");
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The category mode built away from the model with its table filled
 * in its own pass over the elements (tl_prep_fill_categories, as the
 * viewer's worker builds it) gives the table an_categories_build gives
 * and the bands a model gets from that table; a model adopts both. And
 * elements classified out of order make an_categories_end refuse the
 * table. */
static const char *const cat_files[] = {"gen/training.pickle",
    "real/cuda_train_one_step.pickle", "real/cuda_inference_forward.pickle",
    "gen/leak.pickle"};

START_TEST(test_render_category_filled)
{
	struct idx_timeline tl;
	struct tl_model m, m2;
	struct snapshot *s = model_of(cat_files[_i], &tl, &m);
	struct an_categories ca, cb, cc;
	struct idx_elem e;
	struct tl_prep p;
	struct sv_error err;
	char why[128];

	ck_assert_int_eq(an_categories_build(s, &tl, NULL, NULL, &ca, &err),
	    0);
	tl_model_set_categories(&m, &ca);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_CATEGORY, why,
	    sizeof why), 0);
	tl_model_init(&m2, s, &tl, TL_DEFAULT_DRAWN);
	tl_prep_begin(&p, &m2, TL_STACK_CATEGORY, NULL);
	ck_assert_int_eq(an_categories_begin(s, &tl, NULL, NULL, &cb, &err),
	    0);
	tl_prep_fill_categories(&p, &cb);
	ck_assert_int_eq(tl_prep_build(&p), 0);
	ck_assert_int_eq(an_categories_end(&cb, &err), 0);
	ck_assert_uint_eq(cb.n_elems, ca.n_elems);
	ck_assert_mem_eq(cb.cat, ca.cat, ca.n_elems);
	ck_assert_uint_eq(cb.n_by_rule, ca.n_by_rule);
	groups_same(&m.groups[TL_STACK_CATEGORY],
	    &p.w.groups[TL_STACK_CATEGORY], tl.n_events,
	    (int64_t)tl.n_events / 97 + 1, cat_files[_i]);
	tl_model_set_categories(&m2, &cb);
	ck_assert_int_eq(tl_model_adopt(&m2, &p, why, sizeof why), 0);
	ck_assert_int_gt(m2.groups_ok[TL_STACK_CATEGORY], 0);
	tl_prep_destroy(&p);
	tl_model_destroy(&m2);
	/* out of order */
	ck_assert_int_eq(an_categories_begin(s, &tl, NULL, NULL, &cc, &err),
	    0);
	if (tl.n_elems > 1) {
		e = idx_tl_elem(&tl, 1);
		ck_assert_uint_eq(an_category_classify(&cc, 1, &e),
		    AN_CAT_OTHER);
		ck_assert_int_eq(an_categories_end(&cc, &err), -1);
		ck_assert_ptr_null(cc.cat);
	} else
		an_categories_destroy(&cc);
	an_categories_destroy(&cb);
	tl_model_destroy(&m);
	an_categories_destroy(&ca);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* tl_prep_work, the estimate behind the viewer's "building ... 40%",
 * is what util/stop.h's meter counts while the modes are built: each
 * pass's count falls short of its items by less than SV_STOP_EVERY.
 * On the real training step (19,136 events, enough for the meter to
 * count): the call-site mode's pass with the stream/pool and pool
 * modes, the category mode classifying its own table, and the segments,
 * which read the segment events the model listed (none there: a trace
 * of 10,000 segment events made here has them). */
START_TEST(test_render_prep_work)
{
	static const int sts[] = {TL_STACK_SITE, TL_STACK_CATEGORY,
	    TL_STACK_SEGMENT};
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = model_of("real/cuda_train_one_step.pickle", &tl,
	    &m);
	atomic_uint_fast64_t count;
	struct an_categories c;
	struct sv_error err;
	struct tl_prep p;
	uint64_t work, got;
	unsigned i;

	for (i = 0; i < sizeof sts / sizeof sts[0]; i++) {
		atomic_init(&count, 0);
		tl_prep_begin(&p, &m, sts[i], NULL);
		work = tl_prep_work(&p, sts[i] == TL_STACK_CATEGORY);
		sv_stop_meter = &count;
		if (sts[i] == TL_STACK_CATEGORY) {
			ck_assert_int_eq(an_categories_begin(s, &tl, NULL,
			    NULL, &c, &err), 0);
			tl_prep_fill_categories(&p, &c);
		}
		ck_assert_int_eq(tl_prep_build(&p), 0);
		if (sts[i] == TL_STACK_CATEGORY) {
			ck_assert_int_eq(an_categories_end(&c, &err), 0);
			an_categories_destroy(&c);
		}
		sv_stop_meter = NULL;
		got = atomic_load(&count);
		ck_assert_msg(got <= work && work - got < 4 * SV_STOP_EVERY &&
		    (got >= SV_STOP_EVERY) == (sts[i] != TL_STACK_SEGMENT),
		    "mode %d: counted %llu, estimated %llu", sts[i],
		    (unsigned long long)got, (unsigned long long)work);
		tl_prep_destroy(&p);
	}
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);

	/* 5,000 segments mapped, then unmapped */
	s = snap_new();
	for (i = 0; i < 10000; i++)
		snap_trace_push(s, snap_trace_get(s, 0), i < 5000 ?
		    SNAP_SEGMENT_ALLOC : SNAP_SEGMENT_FREE,
		    0x100000 + (uint64_t)(i % 5000) * 0x1000, 0x1000, 0, 0);
	snap_finish(s);
	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, &err), 0);
	tl_model_init(&m, s, &tl, TL_DEFAULT_DRAWN);
	ck_assert_uint_eq(m.n_seg_evs, 10000);
	for (i = 0; i < 3; i += 2) {
		atomic_init(&count, 0);
		tl_prep_begin(&p, &m, sts[i], NULL);
		work = tl_prep_work(&p, 0);
		sv_stop_meter = &count;
		ck_assert_int_eq(tl_prep_build(&p), 0);
		sv_stop_meter = NULL;
		got = atomic_load(&count);
		ck_assert_msg(got <= work && work - got < 4 * SV_STOP_EVERY &&
		    got >= SV_STOP_EVERY, "mode %d of the segment events: "
		    "counted %llu, estimated %llu", sts[i],
		    (unsigned long long)got, (unsigned long long)work);
		tl_prep_destroy(&p);
	}
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The stacking modes' table (tl_modes.h): every mode has a name and its
 * nouns, no two share a name, the grouped ones are those with a builder,
 * and the modes built in one pass name each other (the viewer's worker
 * gives them one job). */
START_TEST(test_render_stack_modes)
{
	unsigned a, b;
	int st, k;

	for (st = 0; st < TL_STACK_COUNT; st++) {
		ck_assert(tl_modes[st].name[0] != '\0');
		ck_assert(tl_modes[st].noun[0] != '\0');
		ck_assert(tl_modes[st].nouns[0] != '\0');
		ck_assert_str_eq(tl_stack_name(st), tl_modes[st].name);
		ck_assert_int_eq(tl_stack_grouped(st),
		    tl_modes[st].grouper != NULL);
		for (k = 0; k < TL_STACK_COUNT; k++) {
			if (k != st)
				ck_assert_str_ne(tl_modes[st].name,
				    tl_modes[k].name);
			a = tl_stack_pass_mates(st) >> k & 1;
			b = tl_stack_pass_mates(k) >> st & 1;
			ck_assert_uint_eq(a, b);
		}
	}
	ck_assert_str_eq(tl_stack_name(TL_STACK_COUNT), "?");
	ck_assert_uint_eq(tl_stack_pass_mates(TL_STACK_SITE),
	    1u << TL_STACK_STREAM | 1u << TL_STACK_POOL);
	ck_assert_uint_eq(tl_stack_pass_mates(TL_STACK_POOL),
	    1u << TL_STACK_STREAM | 1u << TL_STACK_SITE);
	ck_assert_uint_eq(tl_stack_pass_mates(TL_STACK_CATEGORY), 0);
}
END_TEST

/* Call-site labels of the analysis lists lose their directories, then
 * the end of the function's name, before the file name is cut. */
START_TEST(test_render_anlist_label)
{
	struct snapshot *s = snap_new();
	const char *file = "/home/a/metrics.py", *name = "collect";
	uint32_t f = snap_intern_frame(s, snap_intern_str(s, name,
	    strlen(name)), snap_intern_str(s, file, strlen(file)), 47);
	uint32_t st = snap_intern_stack(s, &f, 1);
	struct an_sites t;
	uint32_t site;
	char buf[256];

	snap_finish(s);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	site = an_site_of(&t, st);
	anlist_site_label(&t, site, 100, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "/home/a/metrics.py:47 collect");
	/* directories go first, one at a time */
	anlist_site_label(&t, site, 28, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, ".../a/metrics.py:47 collect");
	anlist_site_label(&t, site, 26, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, ".../metrics.py:47 collect");
	anlist_site_label(&t, site, 21, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "metrics.py:47 collect");
	/* then the end of the function's name, never the file's start */
	anlist_site_label(&t, site, 20, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "metrics.py:47 col...");
	anlist_site_label(&t, site, 20, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "metrics.py:47 colle\xe2\x80\xa6");
	/* then the name */
	anlist_site_label(&t, site, 14, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "metrics.py:47");
	/* the file is cut only when file and line alone do not fit */
	anlist_site_label(&t, site, 10, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "\xe2\x80\xa6ics.py:47");
	an_sites_destroy(&t);
	snap_free(s);
}
END_TEST

/* A timeline of blocks from before the trace: element 1 allocated
 * before it and freed at event 2 by site Y (its only stack is the
 * free's), six blocks alive throughout with no stack (weights loaded
 * before recording, 4,500 of the peak's 4,680 bytes), and allocations of
 * site X. */
static struct idx_elem pre_elems[] = {
    {0x1000, 100, 0, 0, 3, 1, 0},
    {0x5000, 80, 0, -1, 2, 2, IDX_ELEM_PRE},
    {0x2000, 50, 0, 1, -1, 1, 0},
    {0xa000, 700, 0, -1, -1, 0, IDX_ELEM_GHOST},
    {0xb000, 1000, 0, -1, -1, 0, IDX_ELEM_GHOST},
    {0xc000, 500, 0, -1, -1, 0, IDX_ELEM_GHOST},
    {0xd000, 900, 0, -1, -1, 0, IDX_ELEM_GHOST},
    {0xe000, 600, 0, -1, -1, 0, IDX_ELEM_GHOST},
    {0xf000, 800, 0, -1, -1, 0, IDX_ELEM_GHOST},
    {0x10000, 300, 0, -1, -1, 0, IDX_ELEM_GHOST},
    {0x11000, 300, 0, -1, -1, 0, IDX_ELEM_GHOST},
};
static uint64_t pre_total[4];
static uint64_t pre_res[4] = {8192, 8192, 8192, 8192};
static uint64_t pre_ev_elem[4] = {0, 2, 1, 0};

static struct snapshot *
pre_example(struct idx_timeline *tl, uint32_t nghost)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	const char *fx = "/home/a/train.py", *fy = "/home/a/optim.py";
	uint32_t f[2], i;
	uint64_t ghosts, a, p, b;

	f[0] = snap_intern_frame(s, snap_intern_str(s, "step", 4),
	    snap_intern_str(s, fx, strlen(fx)), 12);
	f[1] = snap_intern_frame(s, snap_intern_str(s, "zero", 4),
	    snap_intern_str(s, fy, strlen(fy)), 7);
	ck_assert_uint_eq(snap_intern_stack(s, &f[0], 1), 1);
	ck_assert_uint_eq(snap_intern_stack(s, &f[1], 1), 2);
	for (i = 0; i < 4; i++)
		snap_trace_push(s, t, i == 2 ? SNAP_FREE_COMPLETED :
		    i == 3 ? SNAP_FREE_COMPLETED : SNAP_ALLOC, 0x1000, 8, 0,
		    i == 2 ? 2 : 1);
	snap_finish(s);
	/* A lives over events 0..2, P until 2, B from 1 */
	for (i = 0, ghosts = 0; i < nghost; i++)
		ghosts += pre_elems[3 + i].size;
	a = pre_elems[0].size;
	p = pre_elems[1].size;
	b = pre_elems[2].size;
	pre_total[0] = a + p + ghosts;
	pre_total[1] = a + p + b + ghosts;
	pre_total[2] = a + b + ghosts;
	pre_total[3] = b + ghosts;
	memset(tl, 0, sizeof *tl);
	tl->n_events = 4;
	tl->elems = pre_elems;
	tl->n_elems = 3 + nghost;
	tl->ev_elem = pre_ev_elem;
	tl->total = pre_total;
	tl->reserved = pre_res;
	tl->base_total = p + ghosts;
	tl->peak = a + p + b + ghosts;
	tl->peak_ev = 1;
	tl->n_pre = 1;
	tl->n_ghost = nghost;
	return s;
}

/* Blocks allocated before the trace and freed in it carry their free's
 * stack: their call-site band is "freed at" that site, apart from the
 * site's allocations, and the legend, whatever its width, keeps saying
 * so. */
START_TEST(test_render_site_freed_at)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = pre_example(&tl, 1);
	struct tl_view v = {.ev0 = 0, .ev1 = 4, .cursor = 1,
	    .sel_elem = TL_NO_ELEM, .stack = TL_STACK_SITE, .utf8 = 1,
	    .mark_sel = -2};
	struct tl_frame fr;
	struct cellbuf cb;
	struct idx_elem e_elem;
	char why[128], buf[256], *text;
	uint32_t gy, gx, w;

	tl_model_init(&m, s, &tl, 100);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why, sizeof why),
	    0);
	gx = tl_model_group_of(&m, TL_STACK_SITE, 0);
	gy = tl_model_group_of(&m, TL_STACK_SITE, 1);
	ck_assert_uint_eq(tl_model_group_of(&m, TL_STACK_SITE, 2), gx);
	ck_assert_uint_ne(gy, gx);
	ck_assert_str_eq(tl_group_prefix(&m, TL_STACK_SITE, gy), "freed at ");
	ck_assert_str_eq(tl_group_prefix(&m, TL_STACK_SITE, gx), "");
	ck_assert_str_eq(tl_group_label(&m, TL_STACK_SITE, gy, 0, 1, buf,
	    sizeof buf), "freed at /home/a/optim.py:7 zero");
	ck_assert_str_eq(tl_group_label(&m, TL_STACK_SITE, gx, 0, 1, buf,
	    sizeof buf), "/home/a/train.py:12 step");
	/* cut: the prefix stays, the directories go */
	ck_assert_str_eq(tl_group_label(&m, TL_STACK_SITE, gy, 24, 1, buf,
	    sizeof buf), "freed at optim.py:7 zero");
	e_elem = idx_tl_elem(&tl, 1);
	ck_assert_uint_eq(tl_model_site_group(&m, &e_elem), gy);
	ck_assert_uint_eq(tl_groups_bytes(&m.groups[TL_STACK_SITE], gy, 1),
	    80);
	ck_assert_uint_eq(tl_groups_bytes(&m.groups[TL_STACK_SITE], gy, 2), 0);
	/* the legend names the band "freed at" at any width */
	for (w = 40; w <= 120; w += 40) {
		memset(&fr, 0, sizeof fr);
		fr.rank_stack = -1;
		v.legend = TL_LEGEND_FULL;
		cellbuf_init(&cb, (int)w, 24);
		tl_render(&m, &v, &cb, 0, 0, (int)w, 24, &fr);
		text = cellbuf_to_text(&cb);
		ck_assert_msg(strstr(text, "freed at ") != NULL, "%u: %s", w,
		    text);
		ck_assert_msg(strstr(text, "optim.py:7") != NULL, "%u: %s", w,
		    text);
		free(text);
		cellbuf_destroy(&cb);
	}
	tl_model_destroy(&m);
	snap_free(s);
}
END_TEST

/* Blocks alive since before the trace with no stack holding half of the
 * peak or more: the largest TL_PRE_SPLIT are call-site bands of their
 * own, labelled with their size and address, the others of a size they
 * share a band ("2 blocks of 300B"), the rest one band; below half,
 * they stay in "<no stack>". */
START_TEST(test_render_site_pre_split)
{
	static const uint64_t want[TL_PRE_SPLIT] = {0xb000, 0xd000, 0xf000,
	    0xa000};
	struct idx_timeline tl;
	struct tl_model m;
	struct snapshot *s = pre_example(&tl, 8);
	struct tl_view v = {.ev0 = 0, .ev1 = 4, .cursor = 1,
	    .sel_elem = TL_NO_ELEM, .stack = TL_STACK_SITE, .utf8 = 1,
	    .mark_sel = -2};
	struct tl_frame fr = {.row_bytes = 1, .peak_ev = 1, .rank_stack = -1};
	char why[128], buf[256], ad[FMT_BUF], sz[FMT_BUF];
	uint32_t g, rest, j;
	uint64_t k;

	tl_model_init(&m, s, &tl, 100);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why, sizeof why),
	    0);
	ck_assert_uint_eq(m.n_pre_split, TL_PRE_SPLIT);
	for (j = 0; j < TL_PRE_SPLIT; j++) {
		struct idx_elem e = idx_tl_elem(&tl, m.pre_split[j]);

		ck_assert_uint_eq(e.addr, want[j]);
		g = tl_model_group_of(&m, TL_STACK_SITE, m.pre_split[j]);
		ck_assert_uint_eq(tl_groups_bytes(&m.groups[TL_STACK_SITE], g,
		    1), e.size);
		snprintf(why, sizeof why, "%s block %s, before the trace",
		    fmt_size_short(sz, sizeof sz, e.size),
		    fmt_addr(ad, sizeof ad, e.addr));
		ck_assert_str_eq(tl_group_label(&m, TL_STACK_SITE, g, 0, 1,
		    buf, sizeof buf), why);
	}
	/* the two of 300 bytes share a band, named so */
	g = tl_model_group_of(&m, TL_STACK_SITE, 9);
	ck_assert_uint_eq(tl_model_group_of(&m, TL_STACK_SITE, 10), g);
	ck_assert_uint_eq(tl_groups_bytes(&m.groups[TL_STACK_SITE], g, 1),
	    600);
	ck_assert_str_eq(tl_group_label(&m, TL_STACK_SITE, g, 0, 1, buf,
	    sizeof buf), "2 blocks of 300B, before the trace");
	/* the other two (600 and 500 bytes) are one band */
	rest = tl_model_group_of(&m, TL_STACK_SITE, 5);
	ck_assert_uint_ne(rest, g);
	ck_assert_uint_eq(tl_model_group_of(&m, TL_STACK_SITE, 7), rest);
	ck_assert_uint_eq(tl_groups_bytes(&m.groups[TL_STACK_SITE], rest, 1),
	    1100);
	tl_group_label(&m, TL_STACK_SITE, rest, 0, 1, buf, sizeof buf);
	ck_assert_ptr_nonnull(strstr(buf, "before the trace"));
	/* ranked at the peak: the largest band first */
	tl_rank(&m, &v, &fr);
	ck_assert_uint_eq(fr.top[0], rest);
	ck_assert_uint_eq(fr.top[1], tl_model_group_of(&m, TL_STACK_SITE,
	    m.pre_split[0]));
	tl_model_destroy(&m);
	snap_free(s);

	/* one such block, 700 of 4,880 bytes (B is 4,000 here): no split */
	pre_elems[2].size = 4000;
	s = pre_example(&tl, 1);
	pre_elems[2].size = 50;
	tl_model_init(&m, s, &tl, 100);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why, sizeof why),
	    0);
	ck_assert_uint_eq(m.n_pre_split, 0);
	tl_group_label(&m, TL_STACK_SITE, tl_model_group_of(&m, TL_STACK_SITE,
	    3), 0, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "<no stack>");
	for (k = 0; k < tl.n_elems; k++)
		(void)tl_model_group_of(&m, TL_STACK_SITE, k);
	tl_model_destroy(&m);
	snap_free(s);
}
END_TEST

/* The lists and tables name a category in ANLIST_CAT_W cells, whole:
 * "activation" is not "activatio", optimizer state is "optimizer". */
START_TEST(test_render_anlist_category)
{
	unsigned c;

	ck_assert_str_eq(anlist_category(-1), "-");
	for (c = 0; c < AN_CAT_COUNT; c++) {
		ck_assert_int_le((int)strlen(anlist_category((int)c)),
		    ANLIST_CAT_W);
		if (c != AN_CAT_OPTIMIZER_STATE)
			ck_assert_str_eq(anlist_category((int)c),
			    an_category_label(c));
	}
	ck_assert_str_eq(anlist_category(AN_CAT_ACTIVATION), "activation");
	ck_assert_str_eq(anlist_category(AN_CAT_OPTIMIZER_STATE), "optimizer");
}
END_TEST

void
render_modes_tests(TCase *tl)
{
	tcase_add_test(tl, test_render_anlist_label);
	tcase_add_test(tl, test_render_anlist_category);
	tcase_add_test(tl, test_render_groups_bytes);
	tcase_add_loop_test(tl, test_render_segs_reserved, 0,
	    (int)(sizeof seg_files / sizeof seg_files[0]));
	tcase_add_test(tl, test_render_segs_unmap_ranges);
	tcase_add_test(tl, test_render_segs_overlap_start);
	tcase_add_test(tl, test_render_site_bands_real);
	tcase_add_test(tl, test_render_site_freed_at);
	tcase_add_test(tl, test_render_site_pre_split);
	tcase_add_test(tl, test_render_auto_alloc);
	tcase_add_test(tl, test_render_legend_site_colours);
	tcase_add_test(tl, test_render_reserved_line);
	tcase_add_test(tl, test_render_annotations);
	tcase_add_loop_test(tl, test_render_mono_patterns, 0, 2);
	tcase_add_test(tl, test_render_hilite_grouped);
	tcase_add_test(tl, test_render_pool_envelopes);
	tcase_add_loop_test(tl, test_render_pool_derived, 0,
	    (int)(sizeof pool_files / sizeof pool_files[0]));
	tcase_add_test(tl, test_render_pool_derived_ids);
	tcase_add_loop_test(tl, test_render_category_filled, 0,
	    (int)(sizeof cat_files / sizeof cat_files[0]));
	tcase_add_test(tl, test_render_prep_work);
	tcase_add_loop_test(tl, test_render_stream_groups, 0,
	    (int)(sizeof pool_files / sizeof pool_files[0]));
	tcase_add_test(tl, test_render_stack_modes);
}
