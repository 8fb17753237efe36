/*
 * Unit tests of the snapshot index: round trips (builder-made snapshots,
 * the committed fixtures and a pickle written here against the direct
 * loader) and the LOD pyramid against brute force; the suite, with the
 * tests of check_index_stale.c (every invalidation case, damage),
 * check_index_build.c (interrupted and concurrent builds, locations:
 * beside, cache, memory) and check_index_ext.c (extension sections,
 * threads, wrapped totals). Fixtures: index_fix.h.
 */
#include "config.h"

#include "index_fix.h"

#include "analysis/site.h"
#include "analysis/top.h"

/* ---- round trips --------------------------------------------------------- */

START_TEST(test_roundtrip_model)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_info info;
	struct snapshot *ref = make_snap(model_events);

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 1);
	ck_assert_int_eq(info.in_memory, 0);
	ck_assert_str_eq(info.path, ipath);
	ck_assert_int_eq(w.n, 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);

	/* reopen: mapped, no load */
	n_loads = 0;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	ck_assert_int_eq(n_loads, 0);
	ck_assert_uint_gt(info.size, 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	/* quick verification opens the same thing */
	o.verify = IDX_VERIFY_QUICK;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(src);
	free(ipath);
}
END_TEST

static const char *const fixtures[] = {
    "real/npu_leak_expandable.pickle", "real/npu_leak_empty_cache.pickle",
    "real/synthetic_inconsistent.pickle", "fixtures/newest.pickle",
    "fixtures/legacy_113.pickle", "fixtures/legacy_20.pickle",
    "fixtures/two_traces.pickle", "fixtures/empty_dict_snapshot.pickle",
    "fixtures/notime.pickle", "fixtures/small_p2.pickle",
    "fixtures/big_ints.pickle"};

START_TEST(test_roundtrip_fixture)
{
	char *from, *src = tpath("f.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	struct sv_error err;
	int pass;

	xasprintf(&from, "%s/tests/data/%s", TOP_SRCDIR, fixtures[_i]);
	copy_file(from, src);
	ck_assert_int_eq(snap_load_file(src, NULL, &ref, &err), 0);
	opts_init(&o, &w, 0);
	for (pass = 0; pass < 2; pass++) {
		struct idx_info info;

		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, pass == 0);
		assert_same_snapshot(idx_snapshot(ix), ref);
		assert_same_timelines(ix, ref);
		idx_close(ix);
	}
	/* --no-cache gives the same and writes nothing new */
	o.no_cache = 1;
	ix = open_ok(src, &o);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(from);
	free(src);
}
END_TEST

/* ---- LOD ----------------------------------------------------------------- */

START_TEST(test_lod_ranges)
{
	char *src = tpath("l.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const struct idx_timeline *tl;
	const struct idx_lod *lod;
	uint64_t rng = 99, k, n;
	struct idx_lod_bucket a, b, cols[97];
	uint32_t c;

	model_events = 20000;
	write_file(src, "lod", 3);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	lod = idx_lod(ix, 0);
	n = tl->n_events;
	ck_assert_uint_gt(lod->n_levels, 5);
	ck_assert_uint_eq(lod->level_n[lod->n_levels - 1], 1);
	/* the top bucket covers every event */
	brute(tl, 0, n, &b);
	idx_lod_get(lod, lod->level_off[lod->n_levels - 1], &a);
	ck_assert_mem_eq(&a, &b, sizeof b);
	for (k = 0; k < 3000; k++) {
		uint64_t lo, hi;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		lo = (rng >> 20) % n;
		hi = lo + 1 + (rng >> 44) % (n - lo);
		idx_lod_range(lod, tl, lo, hi, &a);
		brute(tl, lo, hi, &b);
		ck_assert_mem_eq(&a, &b, sizeof a);
	}
	idx_lod_columns(lod, tl, 17, n, 97, cols);
	for (c = 0; c < 97; c++) {
		uint64_t span = n - 17;
		uint64_t lo = 17 + span * c / 97, hi = 17 + span * (c + 1) / 97;

		brute(tl, lo, hi, &b);
		ck_assert_mem_eq(&cols[c], &b, sizeof b);
	}
	/* more columns than events: every column still has a value */
	idx_lod_columns(lod, tl, 10, 20, 97, cols);
	for (c = 0; c < 97; c++)
		ck_assert_uint_eq(cols[c].max_reserved,
		    idx_tl_reserved(tl, 10 + 10 * c / 97));
	idx_close(ix);
	model_events = 3000;
	free(src);
}
END_TEST

/* ---- a pickle written here: interleaved devices, late frees ----------- */

static void
pk_bytes(FILE *f, const void *p, size_t n)
{
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
}

static void
pk_ustr(FILE *f, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);
	uint8_t h[5] = {'X', (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16),
	    (uint8_t)(n >> 24)};

	pk_bytes(f, h, 5);
	pk_bytes(f, s, n);
}

static void
pk_int(FILE *f, uint64_t v)
{
	uint8_t b[10];
	int k;

	b[0] = 0x8a; /* LONG1: 8 bytes, little-endian, two's complement */
	b[1] = 9;
	for (k = 0; k < 8; k++)
		b[2 + k] = (uint8_t)(v >> (8 * k));
	pk_bytes(f, b, 10);
	pk_bytes(f, "", 1); /* a 9th byte: 0, so the value stays positive */
}

static void
pk_event(FILE *f, const char *action, uint64_t addr, uint64_t size,
    uint64_t time)
{
	pk_bytes(f, "}(", 2);
	pk_ustr(f, "action");
	pk_ustr(f, action);
	pk_ustr(f, "addr");
	pk_int(f, addr);
	pk_ustr(f, "size");
	pk_int(f, size);
	pk_ustr(f, "stream");
	pk_int(f, 0);
	pk_ustr(f, "time_us");
	pk_int(f, time);
	pk_bytes(f, "u", 1);
}

/* device_traces given twice (a later key wins in Python; the loader takes
 * both): device 0's events come in two runs, device 1's between them.
 * Device 0 allocates n blocks, then frees them all in the second run,
 * long after their element stripes were written (late frees). */
static void
write_interleaved(const char *path, uint64_t n, int pre)
{
	FILE *f = fopen(path, "wb");
	uint64_t i, tm = 1000;

	ck_assert_ptr_nonnull(f);
	pk_bytes(f, "\x80\x02}(", 4);
	/* lists as CPython writes them: EMPTY_LIST, MARK, items, APPENDS */
	pk_ustr(f, "device_traces");
	pk_bytes(f, "](](", 4);
	for (i = 0; i < n; i++)
		pk_event(f, "alloc", 0x100000 + i * 512, 100 + i % 300, tm++);
	pk_bytes(f, "e](", 3);
	for (i = 0; i < 100; i++)
		pk_event(f, i % 2 ? "free_completed" : "alloc",
		    0x900000 + i / 2 * 512, 64, tm++);
	pk_bytes(f, "ee", 2);
	pk_ustr(f, "device_traces");
	pk_bytes(f, "](](", 4);
	for (i = n; i-- > 0;) {
		/* every 5th free names a size other than its alloc's */
		pk_event(f, "free_completed", 0x100000 + i * 512,
		    i % 5 ? 100 + i % 300 : 7, tm++);
	}
	if (pre) /* never allocated */
		pk_event(f, "free_completed", 0x42, 77, tm++);
	pk_bytes(f, "ee", 2);
	pk_bytes(f, "u.", 2);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_interleaved_late_frees)
{
	char *src = tpath("i.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	struct sv_error err;
	const struct idx_timeline *tl;
	int pass;

	write_interleaved(src, 5 * SNAP_STRIPE_MAX + 100, 1);
	ck_assert_int_eq(snap_load_file(src, NULL, &ref, &err), 0);
	ck_assert_uint_eq(ref->traces[0].n,
	    2 * (5 * SNAP_STRIPE_MAX + 100) + 1);
	opts_init(&o, &w, 0);
	for (pass = 0; pass < 2; pass++) {
		ix = open_ok(src, &o);
		assert_same_snapshot(idx_snapshot(ix), ref);
		assert_same_timelines(ix, ref);
		tl = idx_timeline(ix, 0);
		ck_assert_int_eq(idx_tl_elem(tl, 0).free_ev,
		    (int64_t)(2 * (5 * SNAP_STRIPE_MAX + 100) - 1));
		idx_close(ix);
	}
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(src);
}
END_TEST

/* an_top() on the index's stripes, which skips the elements created
 * after the event when no free lacks its alloc (idx_tl_created()), against
 * the sum of every element alive there in the loader's timeline: at
 * either side of each stripe's edge, with and without a free without
 * alloc (its element, created by the last event, is alive before it). */
START_TEST(test_top_skips_later_elements)
{
	char *src[2] = {tpath("t0.pickle"), tpath("t1.pickle")};
	uint64_t n = 3 * SNAP_STRIPE_MAX + 100;
	struct idx_opts o;
	struct warns w;
	struct snapshot *ref;
	struct sv_error err;
	int pre;

	opts_init(&o, &w, 0);
	for (pre = 0; pre < 2; pre++) {
		struct sv_index *ix;
		struct idx_timeline heap;
		const struct idx_timeline *tl;
		struct an_sites sites;
		int64_t at, ats[16];
		size_t na = 0, j;

		write_interleaved(src[pre], n, pre);
		ck_assert_int_eq(snap_load_file(src[pre], NULL, &ref, &err),
		    0);
		ix = open_ok(src[pre], &o);
		tl = idx_timeline(ix, 0);
		ck_assert_uint_eq(tl->n_pre, (uint64_t)pre);
		ck_assert_int_eq(idx_timeline_build(ref, 0, &heap, &err), 0);
		ck_assert_int_eq(an_sites_init(&sites, ref, 1, NULL, NULL), 0);
		ats[na++] = -1;
		ats[na++] = 0;
		for (at = SNAP_STRIPE_MAX; at < (int64_t)(2 * n);
		    at += SNAP_STRIPE_MAX) {
			ats[na++] = at - 1;
			ats[na++] = at;
		}
		ats[na++] = (int64_t)tl->n_events - 1;
		for (j = 0; j < na; j++) {
			struct an_top top;
			uint64_t k, bytes = 0, count = 0;

			for (k = 0; k < heap.n_elems; k++) {
				struct idx_elem e = idx_tl_elem(&heap, k);

				if (an_elem_alive(&e, ats[j])) {
					bytes += e.size;
					count++;
				}
			}
			ck_assert_int_eq(an_top(tl, &sites, ats[j], 1, &top),
			    0);
			ck_assert_msg(top.bytes == bytes && top.count == count,
			    "pre %d at %lld: %llu B in %llu, want %llu in %llu",
			    pre, (long long)ats[j],
			    (unsigned long long)top.bytes,
			    (unsigned long long)top.count,
			    (unsigned long long)bytes,
			    (unsigned long long)count);
			an_top_destroy(&top);
		}
		an_sites_destroy(&sites);
		idx_timeline_destroy(&heap);
		idx_close(ix);
		snap_free(ref);
	}
	ck_assert_int_eq(w.n, 0);
	free(src[0]);
	free(src[1]);
}
END_TEST

/* The elements idx_tl_alive_each() gives: those idx_tl_elem() says are
 * alive, in order, with its fields (the place's with want_place), on the
 * index's stripes and on the loader's timeline, at the end and at events
 * through the trace, over all elements and over a range; on files with
 * ghosts, frees without alloc and frees written after their element's
 * stripe (late). */
static const char *const alive_files[] = {"gen/leak.pickle",
    "gen/wrapped.pickle", "gen/npu.pickle", "gen/multi.pickle",
    "real/npu_leak_expandable.pickle", NULL};

struct alive_seen {
	const struct idx_timeline *tl;
	int64_t at;
	int place;
	uint64_t next, n; /* the element after the last given; how many */
};

static int
alive_check(void *arg, uint64_t k, const struct idx_elem *e)
{
	struct alive_seen *a = arg;
	struct idx_elem want;
	uint64_t j;

	/* none alive skipped since the last */
	for (j = a->next; j < k; j++) {
		want = idx_tl_elem(a->tl, j);
		ck_assert_msg(!(want.alloc_ev <= a->at && (want.free_ev < 0 ||
		    want.free_ev > a->at)), "element %llu alive at %lld, not "
		    "given", (unsigned long long)j, (long long)a->at);
	}
	want = idx_tl_elem(a->tl, k);
	ck_assert(want.alloc_ev <= a->at &&
	    (want.free_ev < 0 || want.free_ev > a->at));
	ck_assert_int_eq(e->alloc_ev, want.alloc_ev);
	ck_assert_int_eq(e->free_ev, want.free_ev);
	ck_assert_uint_eq(e->size, want.size);
	ck_assert_uint_eq(e->stack, want.stack);
	ck_assert_uint_eq(e->flags, want.flags);
	ck_assert_uint_eq(e->addr, (a->place ? want.addr : 0));
	ck_assert_uint_eq(e->stream, (a->place ? want.stream : 0));
	a->next = k + 1;
	a->n++;
	return 0;
}

/* Checks idx_tl_alive_each() over [k0, k1) at at; the number given. */
static uint64_t
alive_range(const struct idx_timeline *tl, int64_t at, uint64_t k0,
    uint64_t k1, int place)
{
	struct alive_seen a = {tl, at, place, k0, 0};
	struct idx_elem e;
	uint64_t j;

	ck_assert_int_eq(idx_tl_alive_each(tl, at, k0, k1, place,
	    alive_check, &a), 0);
	for (j = a.next; j < k1 && j < tl->n_elems; j++) {
		e = idx_tl_elem(tl, j);
		ck_assert(!(e.alloc_ev <= at && (e.free_ev < 0 ||
		    e.free_ev > at)));
	}
	return a.n;
}

static void
assert_alive(const struct idx_timeline *tl, const struct idx_timeline *heap,
    const char *what)
{
	int64_t n = (int64_t)tl->n_events, at[] = {INT64_MAX, -1, 0, n / 3,
	    n / 2, n - 1};
	uint64_t third = tl->n_elems / 3, all = 0;
	size_t i;

	ck_assert_uint_eq(tl->n_elems, heap->n_elems);
	for (i = 0; i < sizeof at / sizeof at[0]; i++) {
		uint64_t a = alive_range(tl, at[i], 0, tl->n_elems, i % 2);

		ck_assert_msg(a == alive_range(heap, at[i], 0, heap->n_elems,
		    1), "%s: %llu alive at %lld, not the loader's", what,
		    (unsigned long long)a, (long long)at[i]);
		ck_assert_uint_eq(alive_range(tl, at[i], third, 2 * third, 1),
		    alive_range(heap, at[i], third, 2 * third, 0));
		all += a;
	}
	/* something is alive somewhere in each of these files */
	ck_assert_uint_gt(all, 0);
}

START_TEST(test_alive_at_end)
{
	char *from, *src = tpath("a.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	struct sv_error err;
	uint32_t d;

	if (alive_files[_i] != NULL) {
		xasprintf(&from, "%s/tests/data/%s", TOP_SRCDIR,
		    alive_files[_i]);
		copy_file(from, src);
		free(from);
	} else {
		write_interleaved(src, 6 * SNAP_STRIPE_MAX + 100, 1);
	}
	ck_assert_int_eq(snap_load_file(src, NULL, &ref, &err), 0);
	opts_init(&o, &w, 0);
	ix = open_ok(src, &o);
	for (d = 0; d < snap_device_count(ref); d++) {
		struct idx_timeline heap;

		if (idx_timeline(ix, d) == NULL)
			continue;
		ck_assert_int_eq(idx_timeline_build(ref, d, &heap, &err), 0);
		assert_alive(idx_timeline(ix, d), &heap, src);
		idx_timeline_destroy(&heap);
	}
	idx_close(ix);
	snap_free(ref);
	free(src);
}
END_TEST

static Suite *
index_suite(void)
{
	Suite *s = suite_create("index");
	TCase *tc = tcase_create("index");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_roundtrip_model);
	tcase_add_loop_test(tc, test_roundtrip_fixture, 0,
	    (int)(sizeof fixtures / sizeof fixtures[0]));
	tcase_add_test(tc, test_lod_ranges);
	index_stale_tests(tc);
	index_build_tests(tc);
	index_ext_tests(tc);
	tcase_add_test(tc, test_interleaved_late_frees);
	tcase_add_test(tc, test_top_skips_later_elements);
	tcase_add_loop_test(tc, test_alive_at_end, 0,
	    (int)(sizeof alive_files / sizeof alive_files[0]));
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(index_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
