/*
 * The timeline's column aggregates, its column cache, its lookup of
 * elements by address and its group curves, checked against brute force
 * over every event or element: on a generated trace of many event
 * stripes indexed in memory (read through the stripe decoders) and on the
 * same trace paired directly (heap arrays). The trace has ties (equal
 * totals, flat reserved bytes, clamped at zero), spikes of 8 GiB, frees
 * without alloc, an address allocated twice without a free, and ghosts.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/idx.h"
#include "render/cellbuf.h"
#include "render/timeline.h"
#include "render/tl_int.h"
#include "snapshot/snap_model.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define TRACE_N 150000 /* events of device 0: ten stripes */
#define SLOTS 512

static uint64_t
lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* Device 0: n events (allocations from a pool of reused addresses with a
 * few sizes, frees, a slow leak, segments every few thousand events);
 * device 1: a short trace. */
static struct snapshot *
make_trace(uint64_t n)
{
	static const uint64_t sizes[] = {512, 4096, 65536, 1 << 20};
	struct snapshot *s = snap_new();
	struct snap_trace *t;
	struct snap_segment *g;
	struct snap_block *b;
	uint64_t rng = 7, size[SLOTS], k, r, leak = 0x40000000, seg = 0;
	uint64_t a;
	uint32_t fr, st;
	int live[SLOTS], slot;

	memset(live, 0, sizeof live);
	s->features = SNAP_F_DICT | SNAP_F_DEVICE_TRACES | SNAP_F_TIME_US;
	s->protocol = 4;
	fr = snap_intern_frame(s, snap_intern_str(s, "step", 4),
	    snap_intern_str(s, "train.py", 8), 7);
	st = snap_intern_stack(s, &fr, 1);
	t = snap_trace_get(s, 0);
	/* freed before any alloc: alive from the start */
	snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x7000, 4096, 0, st);
	snap_trace_set_time(t, 0, 1000);
	for (k = 1; t->n < n; k++) {
		uint64_t first = t->n;

		r = lcg(&rng);
		slot = (int)(r % SLOTS);
		a = 0x100000 + (uint64_t)slot * 0x100000;
		if (k % 4000 == 0) {
			snap_trace_push(s, t, SNAP_SEGMENT_ALLOC, 0x80000000 +
			    seg++ * (2 << 20), 2 << 20, 0, 0);
		} else if (k % 4000 == 2000 && seg > 4) {
			snap_trace_push(s, t, SNAP_SEGMENT_FREE, 0x80000000 +
			    (seg - 5) * (2 << 20), 2 << 20, 0, 0);
		} else if (k % 20011 == 0) {
			/* allocated again without a free: the first one
			 * stays alive for ever */
			snap_trace_push(s, t, SNAP_ALLOC, 0x100000, 4096, 0,
			    st);
		} else if (k % 7001 == 0) {
			/* 8 GiB for one event: a run whose values lie more
			 * than 32 bits apart */
			snap_trace_push(s, t, SNAP_ALLOC, 0x900000000000,
			    8ull << 30, 0, st);
			snap_trace_push(s, t, SNAP_FREE_COMPLETED,
			    0x900000000000, 8ull << 30, 0, st);
		} else if (k % 30011 == 0) {
			snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x9000 + k,
			    512, 0, st);
		} else if (r % 97 == 0) {
			snap_trace_push(s, t, SNAP_ALLOC, leak, sizes[r % 4], 0,
			    st);
			leak += 0x10000000;
		} else if (!live[slot]) {
			size[slot] = sizes[(r >> 9) % 4];
			snap_trace_push(s, t, SNAP_ALLOC, a, size[slot], 0, st);
			live[slot] = 1;
		} else {
			if (r & 0x400)
				snap_trace_push(s, t, SNAP_FREE_REQUESTED, a,
				    size[slot], 0, st);
			snap_trace_push(s, t, SNAP_FREE_COMPLETED, a,
			    size[slot], 0, st);
			live[slot] = 0;
		}
		for (; first < t->n; first++)
			snap_trace_set_time(t, first, (int64_t)(1000 + k / 3));
	}
	t = snap_trace_get(s, 1);
	for (k = 0; k < 300; k++) {
		snap_trace_push(s, t, k % 2 ? SNAP_FREE_COMPLETED : SNAP_ALLOC,
		    0x5000000 + (k / 2) * 512, 512 * (k % 7 + 1), 0, st);
		snap_trace_set_time(t, k, (int64_t)k);
	}
	/* a block alive at the end, never allocated in the trace: a ghost */
	g = snap_push_segment(s);
	g->addr = 0x7f0000100;
	g->total_size = 2 << 20;
	g->first_block = 0;
	g->n_blocks = 1;
	b = snap_push_block(s);
	b->addr = 0x7f0000100;
	b->size = 2 << 20;
	b->requested_size = 8192;
	b->state = SNAP_BLOCK_ACTIVE_ALLOCATED;
	b->stack = st;
	snap_finish(s);
	return s;
}

static int
load_trace(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	(void)path;
	(void)lo;
	(void)err;
	*out = make_trace(TRACE_N);
	return 0;
}

static char dir[256], src[300];

static void
setup(void)
{
	FILE *f;

	snprintf(dir, sizeof dir, "%s/sv-tlcols.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(src, sizeof src, "%s/trace.pickle", dir);
	f = fopen(src, "wb");
	ck_assert_ptr_nonnull(f);
	fputs("trace", f);
	fclose(f);
}

static void
teardown(void)
{
	unlink(src);
	rmdir(dir);
}

/* The trace indexed in memory. */
static struct sv_index *
open_trace(void)
{
	struct idx_opts o;
	struct sv_index *ix = NULL;
	struct sv_error err;

	memset(&o, 0, sizeof o);
	o.no_cache = 1;
	o.load = load_trace;
	sv_error_clear(&err);
	ck_assert_msg(idx_open(src, &o, &ix, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(idx_timeline(ix, 0)->ev_stripes);
	ck_assert_uint_gt(idx_timeline(ix, 0)->ev_stripes->n_stripe, 8);
	return ix;
}

/* ---- brute force --------------------------------------------------------- */

/* What a column of events [lo, hi) shows, read event by event: the
 * first event with the highest stacked total, that total, the highest
 * reserved. */
static void
brute_agg(const struct tl_model *m, int seg, int64_t lo, int64_t hi,
    int64_t *ev, uint64_t *top, uint64_t *res)
{
	int64_t i;
	uint64_t t, r;

	if (lo >= hi) {
		*ev = lo - 1;
		*top = seg ? tl_reserved_at(m, lo - 1) : tl_total_at(m, lo - 1);
		*res = tl_reserved_at(m, lo - 1);
		return;
	}
	*ev = lo;
	*top = 0;
	*res = 0;
	for (i = lo; i < hi; i++) {
		r = idx_tl_reserved(m->tl, i);
		t = seg ? r : idx_tl_total(m->tl, i);
		if (i == lo || t > *top) {
			*top = t;
			*ev = i;
		}
		if (r > *res)
			*res = r;
	}
}

static void
check_range(const struct tl_model *m, int64_t lo, int64_t hi)
{
	int64_t ev, bev;
	uint64_t top, res, btop, bres;
	int seg;

	for (seg = 0; seg < 2; seg++) {
		tl_col_agg(m, seg ? TL_STACK_SEGMENT : TL_STACK_ALLOC, lo, hi,
		    &ev, &top, &res);
		brute_agg(m, seg, lo, hi, &bev, &btop, &bres);
		ck_assert_msg(ev == bev && top == btop && res == bres,
		    "[%lld, %lld) seg %d: event %lld %llu %llu, want %lld "
		    "%llu %llu", (long long)lo, (long long)hi, seg,
		    (long long)ev, (unsigned long long)top,
		    (unsigned long long)res, (long long)bev,
		    (unsigned long long)btop, (unsigned long long)bres);
	}
}

/* The first event of column col, as tl_col_event defines it, with the
 * trace's own binary search over the times. */
static int64_t
ref_col_event(const struct tl_model *m, const struct tl_view *v, int pw,
    int col)
{
	int64_t t0, t1, t, e, per = (v->ev1 - v->ev0) / pw;
	/* a column of 16 runs of 256 events or more starts on a run, one
	 * of 16 sub-runs of 16 or more on a sub-run, unless that is before
	 * the view (timeline.c) */
	int64_t a = per >= 16 * 256 ? 256 : per >= 16 * 16 ? 16 : 1;

	if (!tl_use_time(m, v)) {
		e = v->ev0 + (int64_t)((double)(v->ev1 - v->ev0) * col / pw);
	} else {
		t0 = snap_ev_time(m->trace, (uint64_t)v->ev0);
		t1 = snap_ev_time(m->trace, (uint64_t)v->ev1 - 1) + 1;
		t = t0 + (int64_t)((double)(t1 - t0) * col / pw);
		e = (int64_t)snap_ev_at_time(m->trace, (uint64_t)v->ev0,
		    (uint64_t)v->ev1, t);
	}
	if (col > 0 && col < pw && e - e % a > v->ev0)
		e -= e % a;
	return e;
}

/* Every column of v at width pw against brute force, its bounds
 * against tl_col_event and ref_col_event. */
static void
check_columns(const struct tl_model *m, const struct tl_view *v, int pw)
{
	const struct tl_cols *c = tl_columns(m, v, pw);
	int seg = v->stack == TL_STACK_SEGMENT, i;
	uint64_t ymax = 0, best = 0, top, res;
	int64_t lo, hi, ev, peak = v->ev0;

	for (i = 0; i < pw; i++) {
		lo = tl_col_event(m, v, pw, i);
		hi = i + 1 < pw ? tl_col_event(m, v, pw, i + 1) : v->ev1;
		ck_assert_int_eq(lo, ref_col_event(m, v, pw, i));
		ck_assert_int_eq(c->lo[i], lo);
		ck_assert_int_eq(c->lo[i + 1], hi);
		/* a column's first and last events map back to it */
		if (hi > lo) {
			ck_assert_int_eq(tl_event_col(m, v, pw, lo), i);
			ck_assert_int_eq(tl_event_col(m, v, pw, hi - 1), i);
		}
		if (hi <= lo && lo < v->ev1 && !tl_use_time(m, v))
			hi = lo + 1;
		brute_agg(m, seg, lo, hi, &ev, &top, &res);
		ck_assert_int_eq(c->ev[i], ev);
		ck_assert_uint_eq(c->top[i], top);
		ck_assert_uint_eq(c->res[i], res);
		ymax = res > ymax ? res : ymax;
		ymax = top > ymax ? top : ymax;
		if (i == 0 || top > best) {
			best = top;
			peak = ev;
		}
	}
	ck_assert_uint_eq(c->yfit, ymax > 0 ? ymax : 1);
	ck_assert_int_eq(c->peak_ev, peak);
}

/* ---- column aggregates ----------------------------------------------- */

static void
check_agg_ranges(const struct tl_model *m)
{
	int64_t n = (int64_t)m->tl->n_events, B = TL_LOD_BLOCK, lo, hi;
	uint64_t rng = 99;
	int i;

	/* the shapes a column can take: inside one run, one run exactly,
	 * the ends of runs, the last (short) run, the whole trace */
	for (lo = 0; lo < 3 * B; lo += 37)
		for (hi = lo; hi < lo + 3 * B && hi <= n; hi += 29)
			check_range(m, lo, hi);
	check_range(m, 0, n);
	check_range(m, B, 2 * B);
	check_range(m, B - 1, 2 * B + 1);
	check_range(m, n - 1, n);
	check_range(m, n - B - 3, n);
	check_range(m, (n / B) * B, n);
	check_range(m, (n / B) * B - 1, n);
	check_range(m, TL_LOD_FAN * B, 2 * TL_LOD_FAN * B);
	check_range(m, TL_LOD_FAN * B - 1, 2 * TL_LOD_FAN * B + 1);
	check_range(m, 3, n / (TL_LOD_FAN * B) * TL_LOD_FAN * B + 1);
	for (i = 0; i < 900; i++) {
		lo = (int64_t)(lcg(&rng) % (uint64_t)n);
		hi = lo + (int64_t)(lcg(&rng) % (uint64_t)(i % 3 == 0 ? 600 :
		    i % 3 == 1 ? 40000 : (uint64_t)n));
		check_range(m, lo, hi < n ? hi : n);
	}
}

START_TEST(test_tlcols_agg_index)
{
	struct sv_index *ix = open_trace();
	struct tl_model m;

	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 0), 100);
	check_agg_ranges(&m);
	tl_model_destroy(&m);
	idx_close(ix);
}
END_TEST

START_TEST(test_tlcols_agg_heap)
{
	struct snapshot *s = make_trace(TRACE_N / 3);
	struct idx_timeline tl;
	struct tl_model m;
	struct sv_error err;

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, &err), 0);
	ck_assert_ptr_null(tl.ev_stripes);
	tl_model_init(&m, s, &tl, 100);
	check_agg_ranges(&m);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* Views of every zoom, at several widths, on both axes and both series,
 * against brute force. */
START_TEST(test_tlcols_views)
{
	struct sv_index *ix = open_trace();
	struct tl_model m;
	struct tl_view v;
	int64_t n, span;
	uint64_t rng = 3;
	int z, k, i;
	static const int widths[] = {1, 2, 7, 193, 500};

	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 0), 100);
	ck_assert(m.time_ok);
	n = (int64_t)m.tl->n_events;
	memset(&v, 0, sizeof v);
	v.sel_elem = TL_NO_ELEM;
	for (z = 0; z < 16; z++) {
		span = n >> z > 1 ? n >> z : 2;
		for (k = 0; k < 3; k++) {
			v.ev0 = (int64_t)(lcg(&rng) % (uint64_t)(n - span + 1));
			v.ev1 = v.ev0 + span;
			for (i = 0; i < 5; i++) {
				v.stack = i % 2 ? TL_STACK_SEGMENT :
				    TL_STACK_ALLOC;
				v.time_axis = k == 1;
				check_columns(&m, &v, widths[i]);
			}
		}
	}
	tl_model_destroy(&m);
	idx_close(ix);
}
END_TEST

/* ---- the column cache -------------------------------------------------- */

static uint64_t
built(const struct tl_model *m, int seg)
{
	return m->cols[seg].n_built;
}

/* The cache is used while the key holds and rebuilt when the range,
 * the width, the series or the axis changes; what it holds is always
 * what brute force gives. */
START_TEST(test_tlcols_cache)
{
	struct sv_index *ix = open_trace();
	struct tl_model m;
	struct tl_view v;
	int64_t n, span;

	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 0), 100);
	n = (int64_t)m.tl->n_events;
	memset(&v, 0, sizeof v);
	v.sel_elem = TL_NO_ELEM;
	v.ev0 = 0;
	v.ev1 = n;
	v.cursor = n / 2;
	check_columns(&m, &v, 120);
	ck_assert_uint_eq(built(&m, 0), 1);
	/* the cursor, a pick, the y range, another mode stacking the
	 * total: the same columns */
	v.cursor = n / 3;
	v.pick.kind = TL_PICK_OTHER;
	v.ymax = 1 << 30;
	v.ylo = 1 << 20;
	v.stack = TL_STACK_CATEGORY;
	check_columns(&m, &v, 120);
	v.stack = TL_STACK_SITE;
	check_columns(&m, &v, 120);
	ck_assert_uint_eq(built(&m, 0), 1);
	/* the segment mode has its own, and the first comes back as it
	 * was */
	v.stack = TL_STACK_SEGMENT;
	check_columns(&m, &v, 120);
	ck_assert_uint_eq(built(&m, 1), 1);
	v.stack = TL_STACK_ALLOC;
	check_columns(&m, &v, 120);
	ck_assert_uint_eq(built(&m, 0), 1);
	/* zoom, pan, width, axis: each rebuilds */
	span = n / 8;
	v.ev0 = n / 2 - span / 2;
	v.ev1 = v.ev0 + span;
	check_columns(&m, &v, 120);
	ck_assert_uint_eq(built(&m, 0), 2);
	v.ev0 += span / 4;
	v.ev1 += span / 4;
	check_columns(&m, &v, 120);
	ck_assert_uint_eq(built(&m, 0), 3);
	check_columns(&m, &v, 193);
	ck_assert_uint_eq(built(&m, 0), 4);
	v.time_axis = 1;
	check_columns(&m, &v, 193);
	ck_assert_uint_eq(built(&m, 0), 5);
	check_columns(&m, &v, 193);
	ck_assert_uint_eq(built(&m, 0), 5);
	/* the segment mode's columns were of the old view */
	v.stack = TL_STACK_SEGMENT;
	check_columns(&m, &v, 193);
	ck_assert_uint_eq(built(&m, 1), 2);
	/* another device: a new model, nothing kept */
	tl_model_destroy(&m);
	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 1), 100);
	ck_assert_uint_eq(built(&m, 1), 0);
	v.ev0 = 0;
	v.ev1 = (int64_t)m.tl->n_events;
	v.time_axis = 0;
	check_columns(&m, &v, 193);
	ck_assert_uint_eq(built(&m, 1), 1);
	tl_model_destroy(&m);
	idx_close(ix);
}
END_TEST

/* A frame drawn from a warm cache is the frame a fresh model draws. */
START_TEST(test_tlcols_frames)
{
	struct sv_index *ix = open_trace();
	struct tl_model m, fresh;
	struct tl_view v;
	struct tl_frame fr, ffr;
	struct cellbuf a, b;
	char *ta, *tb;
	int64_t n;
	int i;

	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 0), 100);
	n = (int64_t)m.tl->n_events;
	memset(&v, 0, sizeof v);
	memset(&fr, 0, sizeof fr);
	fr.rank_stack = -1;
	v.sel_elem = TL_NO_ELEM;
	v.utf8 = 1;
	v.mark_sel = -2;
	cellbuf_init(&a, 150, 30);
	cellbuf_init(&b, 150, 30);
	for (i = 0; i < 12; i++) {
		/* zoom in, move the cursor, toggle the segment mode */
		int64_t span = n >> (i / 3);

		v.ev0 = n / 2 - span / 2;
		v.ev1 = v.ev0 + span;
		v.cursor = v.ev0 + span / (i % 3 + 2);
		v.stack = i % 4 == 3 ? TL_STACK_SEGMENT : TL_STACK_ALLOC;
		tl_render(&m, &v, &a, 0, 0, 150, 30, &fr);
		tl_model_init(&fresh, idx_snapshot(ix), idx_timeline(ix, 0),
		    100);
		memset(&ffr, 0, sizeof ffr);
		ffr.rank_stack = -1;
		tl_render(&fresh, &v, &b, 0, 0, 150, 30, &ffr);
		tl_model_destroy(&fresh);
		ta = cellbuf_to_text(&a);
		tb = cellbuf_to_text(&b);
		ck_assert_str_eq(ta, tb);
		ck_assert_int_eq(fr.peak_ev, ffr.peak_ev);
		ck_assert_uint_eq(fr.yfit, ffr.yfit);
		free(ta);
		free(tb);
	}
	cellbuf_destroy(&a);
	cellbuf_destroy(&b);
	tl_model_destroy(&m);
	idx_close(ix);
}
END_TEST

/* ---- elements by address --------------------------------------------- */

/* For every address, the first element (in creation order) alive after
 * event at, into map (address -> element + 1). */
static void
brute_alive(const struct idx_timeline *tl, int64_t at, struct u64map *map)
{
	uint64_t k, old;

	u64map_destroy(map);
	u64map_init(map);
	for (k = 0; k < tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(tl, k);

		if (tl_live_at(e.alloc_ev, e.free_ev, at) &&
		    !u64map_get(map, e.addr, &old))
			u64map_put(map, e.addr, k + 1);
	}
}

static void
check_find(const struct tl_model *m)
{
	const struct idx_timeline *tl = m->tl;
	int64_t n = (int64_t)tl->n_events, at, ats[] = {-2, -1, 0, 1, n - 1,
	    n, n + 7};
	struct u64map alive, seen;
	uint64_t *addrs, k, want, i, c, c0, na = 0;
	int j, nat = (int)(sizeof ats / sizeof *ats);

	/* every address once, and one never allocated */
	addrs = xcalloc(tl->n_elems + 2, sizeof *addrs);
	u64map_init(&seen);
	for (k = 0; k < tl->n_elems; k++) {
		uint64_t a = idx_tl_elem(tl, k).addr;

		if (!u64map_get(&seen, a, &i)) {
			u64map_put(&seen, a, 1);
			addrs[na++] = a;
		}
	}
	u64map_destroy(&seen);
	addrs[na++] = 0x12345;
	u64map_init(&alive);
	for (j = 0; j < nat + 40; j++) {
		at = j < nat ? ats[j] : (j - nat) * (n / 40) + j;
		brute_alive(tl, at < -1 ? -2 : at, &alive);
		for (k = 0; k < na; k++) {
			want = u64map_get(&alive, addrs[k], &want) ? want - 1 :
			    TL_NO_ELEM;
			if (at < -1)
				want = TL_NO_ELEM;
			ck_assert_msg(tl_model_find_elem(m, addrs[k], at) ==
			    want, "0x%llx at %lld", (unsigned long long)
			    addrs[k], (long long)at);
		}
	}
	u64map_destroy(&alive);
	free(addrs);
	/* elements created up to an event: one more at each alloc and at
	 * each free without alloc */
	ck_assert_uint_eq(idx_tl_created(tl, -1), 0);
	for (i = 0; i < (uint64_t)n; i += 1 + i % 611) {
		c = idx_tl_created(tl, (int64_t)i);
		c0 = i > 0 ? idx_tl_created(tl, (int64_t)i - 1) : 0;
		k = idx_tl_ev_elem(tl, i);
		ck_assert_uint_eq(c, c0 + (k != UINT64_MAX && k == c0));
	}
	ck_assert_uint_eq(idx_tl_created(tl, n - 1), tl->n_elems -
	    tl->n_ghost);
	ck_assert_uint_eq(idx_tl_created(tl, n + 5), tl->n_elems -
	    tl->n_ghost);
}

START_TEST(test_tlcols_find_elem_index)
{
	struct sv_index *ix = open_trace();
	struct tl_model m;

	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 0), 100);
	ck_assert(m.addrs.ok);
	ck_assert_uint_gt(m.tl->n_pre, 1);
	ck_assert_uint_eq(m.tl->n_ghost, 1);
	check_find(&m);
	tl_model_destroy(&m);
	idx_close(ix);
}
END_TEST

START_TEST(test_tlcols_find_elem_heap)
{
	struct snapshot *s = make_trace(TRACE_N / 3);
	struct idx_timeline tl;
	struct tl_model m;
	struct sv_error err;

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, &err), 0);
	tl_model_init(&m, s, &tl, 100);
	check_find(&m);
	tl_model_destroy(&m);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* ---- group curves ------------------------------------------------------ */

/* The bytes of every group of the grouped modes after events across the
 * trace (curves of many chunks) against the elements alive then. */
START_TEST(test_tlcols_group_curves)
{
	struct sv_index *ix = open_trace();
	struct tl_model m;
	const struct idx_timeline *tl;
	uint64_t want[64], k;
	uint32_t grp;
	char why[128];
	int64_t ev;
	int st;

	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 0), 100);
	tl = m.tl;
	for (st = TL_STACK_SITE; st <= TL_STACK_STREAM; st += 2) {
		ck_assert_int_eq(tl_model_prepare(&m, st, why, sizeof why), 0);
		ck_assert_uint_le(m.groups[st].n, 64);
		for (k = 0, grp = 0; grp < m.groups[st].n; grp++)
			if (m.groups[st].c[grp].n_chunks > k)
				k = m.groups[st].c[grp].n_chunks;
		ck_assert_uint_gt(k, 100);
		for (ev = -1; ev < (int64_t)tl->n_events + 2; ev += 1009) {
			memset(want, 0, sizeof want);
			for (k = 0; k < tl->n_elems; k++) {
				struct idx_elem e = idx_tl_elem(tl, k);

				grp = tl_model_group_of(&m, st, k);
				if (grp < 64 && tl_live_at(e.alloc_ev,
				    e.free_ev, ev))
					want[grp] += e.size;
			}
			/* twice, the second time answered by the memo where
			 * the first left it (and past slots others took) */
			for (k = 0; k < 2; k++)
				for (grp = 0; grp < m.groups[st].n; grp++)
					ck_assert_uint_eq(tl_groups_bytes(
					    &m.groups[st], grp, ev), want[grp]);
			ck_assert_uint_eq(tl_groups_bytes(&m.groups[st], 0,
			    ev + 1), tl_groups_bytes(&m.groups[st], 0,
			    ev + 1));
		}
	}
	ck_assert_ptr_nonnull(m.groups[TL_STACK_SITE].memo);
	tl_model_destroy(&m);
	idx_close(ix);
}
END_TEST

/* Groupings for test_tlcols_groups_together: by size, by element (some
 * left out), and by address with a counter in ctx (called in element
 * order, as the stream/pool grouping that numbers groups as it meets
 * them). */
static uint32_t
by_size(void *ctx, const struct idx_elem *e, uint64_t k)
{
	(void)ctx;
	(void)k;
	return e->size >= (1 << 20) ? 2 : e->size >= 4096;
}

static uint32_t
by_elem(void *ctx, const struct idx_elem *e, uint64_t k)
{
	(void)ctx;
	(void)e;
	return k % 11 == 3 ? TL_NO_GROUP : (uint32_t)(k % 7);
}

static uint32_t
by_addr_seen(void *ctx, const struct idx_elem *e, uint64_t k)
{
	uint64_t *calls = ctx;

	(void)k;
	(*calls)++;
	return (uint32_t)(e->addr >> 20) % 40;
}

static void
same_groups(const struct tl_groups *a, const struct tl_groups *b)
{
	uint32_t grp;

	ck_assert_uint_eq(a->n, b->n);
	ck_assert_uint_eq(a->n_used, b->n_used);
	for (grp = 0; grp < a->n; grp++) {
		const struct tl_group_curve *x = &a->c[grp], *y = &b->c[grp];

		ck_assert_uint_eq(a->base[grp], b->base[grp]);
		ck_assert_uint_eq(a->stack[grp], b->stack[grp]);
		ck_assert_uint_eq(a->max_elem[grp], b->max_elem[grp]);
		ck_assert_uint_eq(x->n_changes, y->n_changes);
		ck_assert_uint_eq(x->n_chunks, y->n_chunks);
		ck_assert_uint_eq(x->len, y->len);
		ck_assert(memcmp(x->cev, y->cev, x->n_chunks *
		    sizeof *x->cev) == 0);
		ck_assert(memcmp(x->clive, y->clive, x->n_chunks *
		    sizeof *x->clive) == 0);
		ck_assert(memcmp(x->cpos, y->cpos, x->n_chunks *
		    sizeof *x->cpos) == 0);
		ck_assert(x->len == 0 || memcmp(x->data, y->data, x->len) == 0);
	}
}

/* Groupings built in one pass (tl_groups_build_n) are the groupings
 * built one by one, byte for byte, and each group_of is called once per
 * element. */
START_TEST(test_tlcols_groups_together)
{
	struct sv_index *ix = open_trace();
	const struct idx_timeline *tl = idx_timeline(ix, 0);
	struct tl_groups one[3], all[3];
	uint64_t calls_one = 0, calls_all = 0;
	struct tl_grouping gs[3] = {
		{ &all[0], 8, by_size, NULL },
		{ &all[1], 8, by_elem, NULL },
		{ &all[2], 64, by_addr_seen, &calls_all },
	};
	int j;

	ck_assert_int_eq(tl_groups_build(&one[0], tl, 8, by_size, NULL), 0);
	ck_assert_int_eq(tl_groups_build(&one[1], tl, 8, by_elem, NULL), 0);
	ck_assert_int_eq(tl_groups_build(&one[2], tl, 64, by_addr_seen,
	    &calls_one), 0);
	ck_assert_int_eq(tl_groups_build_n(gs, 3, tl), 0);
	ck_assert_uint_eq(calls_one, tl->n_elems);
	ck_assert_uint_eq(calls_all, tl->n_elems);
	for (j = 0; j < 3; j++) {
		ck_assert_uint_gt(one[j].n, 1);
		same_groups(&one[j], &all[j]);
		tl_groups_destroy(&one[j]);
		tl_groups_destroy(&all[j]);
	}
	ck_assert_int_eq(tl_groups_build_n(gs, 0, tl), -1);
	ck_assert_int_eq(tl_groups_build_n(gs, TL_GROUPS_MAX_N + 1, tl), -1);
	idx_close(ix);
}
END_TEST

/* ---- the highlighted set --------------------------------------------- */

/* A set given with its elements is the set read from the timeline. */
START_TEST(test_tlcols_hilite_vals)
{
	struct sv_index *ix = open_trace();
	struct tl_model m;
	struct tl_hilite a, b;
	uint64_t *ids, k, n = 0, ne;
	struct idx_elem *vals;
	char why[128];
	int64_t ev;
	int st;
	uint32_t g;

	tl_model_init(&m, idx_snapshot(ix), idx_timeline(ix, 0), 100);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why, sizeof why),
	    0);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_STREAM, why,
	    sizeof why), 0);
	ne = m.tl->n_elems;
	ids = xcalloc(ne / 7 + 2, sizeof *ids);
	vals = xcalloc(ne / 7 + 2, sizeof *vals);
	/* every seventh element, last first, and one out of range */
	for (k = ne; k-- > 0;)
		if (k % 7 == 0) {
			ids[n] = k;
			vals[n++] = idx_tl_elem(m.tl, k);
		}
	ids[n++] = ne + 3;
	tl_hilite_init(&a, &m, ids, NULL, n);
	tl_hilite_init(&b, &m, ids, vals, n);
	ck_assert_uint_eq(a.n_elems, n - 1);
	ck_assert_uint_eq(b.n_elems, n - 1);
	ck_assert_mem_eq(a.elems, b.elems, a.n_elems * sizeof *a.elems);
	for (k = 0; k < a.n_elems; k++) {
		struct idx_elem e = idx_tl_elem(m.tl, a.elems[k]);

		ck_assert_mem_eq(&a.vals[k], &e, sizeof e);
		ck_assert_mem_eq(&b.vals[k], &e, sizeof e);
	}
	ck_assert_mem_eq(a.drawn, b.drawn, a.n_drawn);
	for (ev = -1; ev < (int64_t)m.tl->n_events; ev += 997) {
		ck_assert_uint_eq(tl_hilite_bytes(&a, ev),
		    tl_hilite_bytes(&b, ev));
		for (st = TL_STACK_SITE; st <= TL_STACK_STREAM; st++)
			for (g = 0; g < 4; g++)
				ck_assert_uint_eq(tl_hilite_group_bytes(&a, st,
				    g, ev), tl_hilite_group_bytes(&b, st, g,
				    ev));
	}
	ck_assert_uint_gt(tl_hilite_bytes(&a, (int64_t)m.tl->n_events / 2),
	    0);
	tl_hilite_destroy(&a);
	tl_hilite_destroy(&b);
	free(ids);
	free(vals);
	tl_model_destroy(&m);
	idx_close(ix);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("tlcols");
	TCase *tc = tcase_create("tlcols");

	tcase_set_timeout(tc, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tlcols_agg_index);
	tcase_add_test(tc, test_tlcols_agg_heap);
	tcase_add_test(tc, test_tlcols_views);
	tcase_add_test(tc, test_tlcols_cache);
	tcase_add_test(tc, test_tlcols_frames);
	tcase_add_test(tc, test_tlcols_find_elem_index);
	tcase_add_test(tc, test_tlcols_find_elem_heap);
	tcase_add_test(tc, test_tlcols_group_curves);
	tcase_add_test(tc, test_tlcols_groups_together);
	tcase_add_test(tc, test_tlcols_hilite_vals);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
