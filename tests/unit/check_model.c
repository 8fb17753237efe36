#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/snap_model.h"
#include "snapshot/snap_stripe.h"

START_TEST(test_model_intern_str)
{
	struct snapshot *s = snap_new();
	uint32_t a = snap_intern_str(s, "train.py", 8);
	uint32_t b = snap_intern_str(s, "model.py", 8);
	uint32_t c = snap_intern_str(s, "train.py!", 8);
	int i;

	ck_assert_uint_eq(snap_intern_str(s, "", 0), 0);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_eq(a, c);
	ck_assert_str_eq(snap_str(s, a), "train.py");
	for (i = 0; i < 5000; i++) {
		char buf[32];
		int n = snprintf(buf, sizeof buf, "s%d", i);

		snap_intern_str(s, buf, (size_t)n);
	}
	ck_assert_uint_eq(snap_intern_str(s, "model.py", 8), b);
	ck_assert_str_eq(snap_str(s, 999999), "");
	snap_free(s);
}
END_TEST

/* Many annotations move to a temporary file as they are pushed (only
 * the end of it resident); where none can be made they stay on the heap.
 * Either way every one reads back as pushed, before and after more are
 * pushed, and freeing them leaves their count. */
static void
many_annotations(int in_file)
{
	struct snapshot *s = snap_new();
	struct snap_annotation a;
	uint32_t i, bad, n = 300000; /* 7 MB of them */

	memset(&a, 0, sizeof a);
	for (i = 0; i < n; i++) {
		a.name = i;
		a.device = i % 7;
		a.time_us = (int64_t)i * 1000 - 5;
		a.stage = (uint8_t)(i % 3);
		snap_push_annotation(s, &a);
		if (i == 1000)
			ck_assert_int_eq(s->annotations[1000].time_us,
			    1000 * 1000 - 5);
	}
	ck_assert_uint_eq(s->n_annotations, n);
	ck_assert_uint_ge(s->cap_annotations, n);
	if (in_file)
		ck_assert_ptr_nonnull(s->ann_spill);
	else
		ck_assert_ptr_null(s->ann_spill);
	/* one assertion for all: each ck_assert is a write() to Check's
	 * log, and 1.2 M of them took seconds */
	for (i = 0, bad = 0; i < n; i++)
		if (s->annotations[i].name != i ||
		    s->annotations[i].device != i % 7 ||
		    s->annotations[i].time_us != (int64_t)i * 1000 - 5 ||
		    s->annotations[i].stage != i % 3)
			bad++;
	ck_assert_uint_eq(bad, 0);
	snap_free_annotations(s);
	ck_assert_ptr_null(s->annotations);
	ck_assert_uint_eq(s->n_annotations, n);
	snap_free(s);
}

START_TEST(test_model_many_annotations)
{
	const char *old = getenv("TMPDIR");
	char *keep = old != NULL ? strdup(old) : NULL;
	struct snapshot *s = snap_new();
	struct snap_annotation a;
	int k;

	/* in a file */
	many_annotations(1);
	/* no temporary file can be made: on the heap */
	setenv("TMPDIR", "/nonexistent/snapview-check", 1);
	many_annotations(0);
	if (keep != NULL)
		setenv("TMPDIR", keep, 1);
	else
		unsetenv("TMPDIR");
	free(keep);
	/* few: on the heap, and snap_free frees them */
	memset(&a, 0, sizeof a);
	for (k = 0; k < 100; k++)
		snap_push_annotation(s, &a);
	ck_assert_ptr_null(s->ann_spill);
	snap_free(s);
}
END_TEST

START_TEST(test_model_intern_stack)
{
	struct snapshot *s = snap_new();
	uint32_t f1 = snap_intern_frame(s, 1, 2, 10);
	uint32_t f2 = snap_intern_frame(s, 1, 2, 11);
	uint32_t fr[3] = {f1, f2, f1};
	uint32_t n, st, i;
	const uint32_t *got;

	ck_assert_uint_eq(snap_intern_frame(s, 1, 2, 10), f1);
	ck_assert_uint_eq(snap_intern_stack(s, fr, 0), 0);
	st = snap_intern_stack(s, fr, 3);
	ck_assert_uint_ne(st, 0);
	ck_assert_uint_eq(snap_intern_stack(s, fr, 3), st);
	ck_assert_uint_ne(snap_intern_stack(s, fr, 2), st);
	got = snap_stack(s, st, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_mem_eq(got, fr, sizeof fr);
	for (i = 0; i < 3000; i++) {
		uint32_t x[2] = {f1, snap_intern_frame(s, 3, 4, i)};

		snap_intern_stack(s, x, 2);
	}
	ck_assert_uint_eq(snap_intern_stack(s, fr, 3), st);
	snap_free(s);
}
END_TEST

START_TEST(test_model_trace_columns)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 2);
	uint64_t i;

	ck_assert_uint_eq(s->n_traces, 3);
	for (i = 0; i < 3000; i++) {
		uint64_t k = snap_trace_push(s, t, SNAP_ALLOC, i * 512, i, 0,
		    0);

		if (i == 2000)
			snap_trace_set_time(t, k, 1700000000000000LL);
	}
	ck_assert_uint_eq(t->n, 3000);
	ck_assert_ptr_nonnull(t->time_us);
	ck_assert(t->time_us[0] == SNAP_NO_TIME);
	ck_assert(t->time_us[2000] == 1700000000000000LL);
	ck_assert(t->time_us[2999] == SNAP_NO_TIME);
	ck_assert_uint_eq(t->addr[2999], 2999 * 512);
	ck_assert_uint_eq(snap_default_device(s), 2);
	ck_assert_uint_eq(snap_device_count(s), 3);
	snap_free(s);
}
END_TEST

/* snap_finish groups segments by device (stable), and
 * snap_device_segments finds each device's range. */
START_TEST(test_model_device_segments)
{
	struct snapshot *s = snap_new();
	static const uint32_t dev[] = {2, 0, 2, 5, 0};
	uint32_t i, first, end;

	for (i = 0; i < 5; i++) {
		struct snap_segment *g = snap_push_segment(s);

		g->device = dev[i];
		g->addr = 100 + i;	/* file order, to check stability */
	}
	/* before grouping: the whole array */
	snap_device_segments(s, 2, &first, &end);
	ck_assert_uint_eq(first, 0);
	ck_assert_uint_eq(end, 5);
	snap_finish(s);
	ck_assert_uint_eq(s->n_segments, 5);
	snap_device_segments(s, 0, &first, &end);
	ck_assert_uint_eq(end - first, 2);
	ck_assert_uint_eq(s->segments[first].addr, 101);
	ck_assert_uint_eq(s->segments[first + 1].addr, 104);
	snap_device_segments(s, 2, &first, &end);
	ck_assert_uint_eq(end - first, 2);
	ck_assert_uint_eq(s->segments[first].addr, 100);
	ck_assert_uint_eq(s->segments[first + 1].addr, 102);
	snap_device_segments(s, 5, &first, &end);
	ck_assert_uint_eq(end - first, 1);
	ck_assert_uint_eq(s->segments[first].addr, 103);
	snap_device_segments(s, 1, &first, &end);
	ck_assert_uint_eq(end, first);
	snap_device_segments(s, 9, &first, &end);
	ck_assert_uint_eq(end, first);
	ck_assert_int_eq(snap_device_has_data(s, 5), 1);
	ck_assert_int_eq(snap_device_has_data(s, 1), 0);
	snap_trace_push(s, snap_trace_get(s, 1), SNAP_ALLOC, 1, 512, 0, 0);
	ck_assert_int_eq(snap_device_has_data(s, 1), 1);
	snap_free(s);
}
END_TEST

/* snap_ev_at_time: the first event at or after a time, against a scan;
 * equal times, a range, and decreasing times (a hostile file) that must
 * still give an event of the range. */
START_TEST(test_model_event_at_time)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	static const int64_t times[] = {10, 10, 20, 30, 30, 30, 45, 60};
	uint64_t i, want, n = sizeof times / sizeof times[0];
	int64_t q;

	for (i = 0; i < n; i++) {
		uint64_t k = snap_trace_push(s, t, SNAP_ALLOC, 512 * i, 512, 0,
		    0);

		snap_trace_set_time(t, k, times[i]);
	}
	for (q = 0; q <= 70; q++) {
		for (want = 0; want < n && times[want] < q; want++)
			;
		ck_assert_uint_eq(snap_ev_at_time(t, 0, n, q), want);
	}
	ck_assert_uint_eq(snap_ev_at_time(t, 4, 7, 10), 4);
	ck_assert_uint_eq(snap_ev_at_time(t, 4, 7, 31), 6);
	ck_assert_uint_eq(snap_ev_at_time(t, 4, 7, 99), 7);
	ck_assert_uint_eq(snap_ev_at_time(t, 3, 3, 0), 3);
	for (i = 0; i < n; i++)
		snap_trace_set_time(t, i, 1000 - (int64_t)i * 7);
	for (q = 900; q < 1100; q++)
		ck_assert_uint_le(snap_ev_at_time(t, 2, 6, q), 6);
	snap_free(s);
}
END_TEST

START_TEST(test_model_actions)
{
	struct snapshot *s = snap_new();

	ck_assert_uint_eq(snap_action_lookup(s, "free_completed", 14),
	    SNAP_FREE_COMPLETED);
	ck_assert_uint_eq(snap_action_lookup(s, "mystery", 7),
	    SNAP_ACTION_COUNT);
	ck_assert_uint_eq(snap_action_lookup(s, "mystery", 7),
	    SNAP_ACTION_COUNT);
	ck_assert_str_eq(snap_action_name(SNAP_OOM), "oom");
	ck_assert_ptr_null(snap_action_name(SNAP_ACTION_COUNT));
	snap_free(s);
}
END_TEST

/* A setting key = value, both interned. */
static void
setting(struct snapshot *s, const char *k, const char *v)
{
	snap_push_setting(s, snap_intern_str(s, k, strlen(k)),
	    snap_intern_str(s, v, strlen(v)));
}

/* allocator_settings' ring buffer keys in each form a file may use. */
START_TEST(test_model_ring)
{
	static const struct {
		const char *ov, *max;
		int want[3];
		uint64_t max_want[3];
	} c[] = {
		{ NULL, NULL, { -1, -1, -1 }, { 0, 0, 0 } },
		{ "True", "100000", { 1, 1, 1 }, { 100000, 100000, 100000 } },
		{ "False", "x", { 0, 0, 0 }, { 0, 0, 0 } },
		{ "[False, True]", "[8, 1000000]", { 0, 1, -1 },
		    { 8, 1000000, 0 } },
		{ "{1: True, 0: False}", "{0: 5}", { 0, 1, -1 }, { 5, 0, 0 } },
		{ "1", "[]", { 1, 1, 1 }, { 0, 0, 0 } },
		{ "[True", "{0 5}", { 1, -1, -1 }, { 0, 0, 0 } },
		{ "maybe", "-3", { -1, -1, -1 }, { 0, 0, 0 } },
	};
	size_t i;
	uint32_t d;

	for (i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct snapshot *s = snap_new();

		setting(s, "max_split_size", "-1");
		if (c[i].ov != NULL)
			setting(s, "trace_alloc_overflowed", c[i].ov);
		if (c[i].max != NULL)
			setting(s, "trace_alloc_max_entries", c[i].max);
		for (d = 0; d < 3; d++) {
			ck_assert_msg(snap_ring_overflowed(s, d) ==
			    c[i].want[d], "case %zu device %u: %d", i, d,
			    snap_ring_overflowed(s, d));
			ck_assert_msg(snap_ring_max_entries(s, d) ==
			    c[i].max_want[d], "case %zu device %u max", i, d);
		}
		snap_free(s);
	}
}
END_TEST

/* ---- the per-thread cache of decoded stripe columns --------------------- */

/* A stripe set of n_stripe stripes of VALS values each, whose decoder
 * writes value i of stripe b as b * 1000 + i and counts its calls. */
#define VALS 4
static unsigned decodes;

static int
fake_decode(const struct snap_stripeset *bs, unsigned col, uint64_t b,
    void *out)
{
	uint64_t *v = out;
	uint32_t i;

	decodes++;
	for (i = 0; i < bs->dir[b].n; i++)
		v[i] = b * 1000 + i + (col == SNAP_COL_SIZE ? 7 : 0);
	return 0;
}

static void
fake_set(struct snap_stripeset *bs, uint64_t n_stripe)
{
	struct snap_stripedir *dir = calloc(n_stripe, sizeof *dir);
	uint64_t b;

	ck_assert_ptr_nonnull(dir);
	for (b = 0; b < n_stripe; b++) {
		dir[b].first = b * VALS;
		dir[b].n = VALS;
	}
	memset(bs, 0, sizeof *bs);
	bs->id = snap_stripe_new_id();
	bs->dir = dir;
	bs->n_stripe = n_stripe;
	bs->n = n_stripe * VALS;
	bs->decode = fake_decode;
}

/* Reads value i of col through the accessor and checks it. */
static void
read_one(const struct snap_stripeset *bs, unsigned col, uint64_t i)
{
	uint64_t v = *(const uint64_t *)snap_stripe_at(bs, col, i, 8);

	ck_assert_uint_eq(v, i / VALS * 1000 + i % VALS +
	    (col == SNAP_COL_SIZE ? 7 : 0));
}

/* Reads stripes [0, n) in order, then again from the last down: how many
 * of the second round were decoded again. */
static unsigned
second_round(const struct snap_stripeset *bs, uint64_t n)
{
	uint64_t b;
	unsigned before;

	for (b = 0; b < n; b++)
		read_one(bs, SNAP_COL_ADDR, b * VALS + b % VALS);
	before = decodes;
	for (b = n; b-- > 0;)
		read_one(bs, SNAP_COL_ADDR, b * VALS + (b + 1) % VALS);
	return decodes - before;
}

START_TEST(test_stripe_cache_slots)
{
	struct snap_stripeset bs;
	uint64_t b, k;

	fake_set(&bs, 1200);
	/* the default keeps 64 columns: 100 stripes read twice, from the
	 * other end, decode the 36 evicted first again */
	snap_stripe_cache_clear();
	ck_assert_uint_eq(second_round(&bs, 100), 36);
	/* 512 keep all 500, and the values read are the right ones */
	snap_stripe_cache_slots(512);
	ck_assert_uint_eq(second_round(&bs, 500), 0);
	/* asking again for as many keeps what is cached */
	snap_stripe_cache_slots(512);
	decodes = 0;
	read_one(&bs, SNAP_COL_ADDR, 3);
	ck_assert_uint_eq(decodes, 0);
	/* another number starts over; 5000 is clamped to 1024 */
	snap_stripe_cache_slots(5000);
	ck_assert_uint_eq(second_round(&bs, 1024), 0);
	ck_assert_uint_eq(second_round(&bs, 1025), 1);
	/* two columns of the same stripes, read alternately from stripes
	 * far apart (every read misses the hot slots: the hints find
	 * them), decode once each */
	snap_stripe_cache_slots(64);
	decodes = 0;
	for (k = 0; k < 50; k++)
		for (b = 0; b < 20; b++) {
			read_one(&bs, SNAP_COL_ADDR, (b * 37 % 20) * VALS +
			    k % VALS);
			read_one(&bs, SNAP_COL_SIZE, (b * 37 % 20) * VALS +
			    (k + 1) % VALS);
		}
	ck_assert_uint_eq(decodes, 40);
	snap_stripe_cache_clear();
	free((void *)bs.dir);
}
END_TEST

/* A budget of ten stripes' columns keeps the ten read last, and the
 * values read past it are the right ones; the budget before comes back. */
START_TEST(test_stripe_cache_budget)
{
	struct snap_stripeset bs;

	fake_set(&bs, 100);
	snap_stripe_cache_clear();
	ck_assert_uint_eq(snap_stripe_cache_budget(10 * VALS * 8), 0);
	ck_assert_uint_eq(second_round(&bs, 20), 10);
	ck_assert_uint_eq(second_round(&bs, 100), 90);
	/* back to the default: forty stripes stay */
	ck_assert_uint_eq(snap_stripe_cache_budget(0), 10 * VALS * 8);
	ck_assert_uint_eq(second_round(&bs, 40), 0);
	/* as much as the default or more is the default */
	snap_stripe_cache_budget((size_t)1 << 40);
	ck_assert_uint_eq(snap_stripe_cache_budget(0), 0);
	snap_stripe_cache_clear();
	free((void *)bs.dir);
}
END_TEST

static Suite *
model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("intern");

	/* no wall-clock limit (Check's default is 4 s): machines are shared */
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_model_intern_str);
	tcase_add_test(tc, test_model_intern_stack);
	tcase_add_test(tc, test_model_trace_columns);
	tcase_add_test(tc, test_model_device_segments);
	tcase_add_test(tc, test_model_event_at_time);
	tcase_add_test(tc, test_model_actions);
	tcase_add_test(tc, test_model_many_annotations);
	tcase_add_test(tc, test_model_ring);
	tcase_add_test(tc, test_stripe_cache_slots);
	tcase_add_test(tc, test_stripe_cache_budget);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(model_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
