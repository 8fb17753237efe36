/*
 * Replay engine tests: every action forward and undone, on hand-built
 * snapshots, and the real fixtures through snap_load; the suite, with
 * the tests of check_replay_model.c (a property test against a small
 * independent allocator model: ground truth at every event, checkpoints
 * vs full replay, +-1 stepping, the build's shortcuts) and
 * check_replay_saved.c (checkpoints and the forward pass's findings,
 * saved in the index, sound and corrupt). Fixtures: replay_fix.h.
 */
#include "config.h"

#include "replay_fix.h"

#include <stdatomic.h>

#include "util/stop.h"

/* Asserts block k of the current state. */
static void
blk_is(struct replay *r, uint32_t k, uint64_t addr, uint64_t size, int state)
{
	const struct replay_state *st = replay_state(r);

	ck_assert_uint_lt(k, st->n_blocks);
	ck_assert_uint_eq(st->blocks[k].addr, addr);
	ck_assert_uint_eq(st->blocks[k].size, size);
	ck_assert_int_eq(st->blocks[k].state, state);
}

START_TEST(test_replay_split_merge_pending)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{512, A, 100}, {2 * MIB - 512, I, 0}};
	struct replay *r;
	const struct replay_state *st;

	push_seg(s, BASE, 0, 0, 0, fin, 2);
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);      /* 0 */
	ev(s, SNAP_ALLOC, BASE, 100);                  /* 1 */
	ev(s, SNAP_ALLOC, BASE + 512, 1000);           /* 2 */
	ev(s, SNAP_ALLOC, BASE + 1536, 600);           /* 3 */
	ev(s, SNAP_FREE_REQUESTED, BASE + 512, 1000);  /* 4 */
	ev(s, SNAP_FREE_COMPLETED, BASE + 512, 1000);  /* 5 */
	ev(s, SNAP_FREE_REQUESTED, BASE + 1536, 600);  /* 6 */
	ev(s, SNAP_FREE_COMPLETED, BASE + 1536, 600);  /* 7 */
	r = open_ok(s);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 0);
	seek_ok(r, 0);
	blk_is(r, 0, BASE, 2 * MIB, I);
	seek_ok(r, 3);
	blk_is(r, 0, BASE, 512, A);
	blk_is(r, 1, BASE + 512, 1024, A);
	blk_is(r, 2, BASE + 1536, 1024, A);
	blk_is(r, 3, BASE + 2560, 2 * MIB - 2560, I);
	seek_ok(r, 4);
	blk_is(r, 1, BASE + 512, 1024, P);
	seek_ok(r, 5); /* freed between two allocated blocks: no merge */
	blk_is(r, 1, BASE + 512, 1024, I);
	blk_is(r, 2, BASE + 1536, 1024, A);
	seek_ok(r, 7); /* merges with both neighbours */
	st = replay_state(r);
	ck_assert_uint_eq(st->n_blocks, 2);
	blk_is(r, 1, BASE + 512, 2 * MIB - 512, I);
	ck_assert_uint_eq(st->allocated, 512);
	ck_assert_uint_eq(st->requested, 100);
	seek_ok(r, 4); /* stepping back through the undo log */
	blk_is(r, 1, BASE + 512, 1024, P);
	blk_is(r, 2, BASE + 1536, 1024, A);
	ck_assert_uint_eq(replay_state(r)->blocks[2].alloc_ev, 3);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_pre_trace_free)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{2 * MIB, I, 0}};
	struct replay *r;
	const struct replay_info *in;

	push_seg(s, BASE, 0, 0, 0, fin, 1);
	ev(s, SNAP_FREE_REQUESTED, BASE + 4096, 1000);
	ev(s, SNAP_FREE_COMPLETED, BASE + 4096, 1000);
	ev(s, SNAP_FREE_COMPLETED, BASE, 3000); /* no free_requested */
	r = open_ok(s);
	seek_ok(r, -1);
	blk_is(r, 0, BASE, 3072, A);
	blk_is(r, 1, BASE + 3072, 1024, I);
	blk_is(r, 2, BASE + 4096, 1024, A);
	ck_assert_int_eq(replay_state(r)->blocks[0].alloc_ev, -1);
	ck_assert_uint_eq(replay_state(r)->blocks[2].requested_size, 1000);
	seek_ok(r, 0);
	blk_is(r, 2, BASE + 4096, 1024, P);
	in = replay_info(r);
	ck_assert_uint_eq(in->n_pre_blocks, 2);
	ck_assert_uint_eq(in->n_free_no_alloc, 2);
	ck_assert_uint_eq(in->n_ghost, 0);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_ghost_oom_unknown)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, A, 1000}, {1024, A, 700},
	    {2 * MIB - 2048, I, 0}};
	struct replay *r;
	unsigned unk = snap_action_lookup(s, "frobnicate", 10);

	push_seg(s, BASE, 0, 0, 0, fin, 3);
	ev(s, SNAP_ALLOC, BASE + 1024, 700);
	ev(s, SNAP_OOM, 12345, 40 * MIB);
	ev(s, SNAP_SNAPSHOT, 0, 4096);
	ev(s, unk, BASE, 1);
	r = open_ok(s);
	seek_ok(r, -1);
	blk_is(r, 0, BASE, 1024, A);
	blk_is(r, 1, BASE + 1024, 2 * MIB - 1024, I);
	seek_ok(r, 3);
	blk_is(r, 1, BASE + 1024, 1024, A);
	ck_assert_uint_eq(replay_info(r)->n_ghost, 1);
	ck_assert_uint_eq(replay_info(r)->n_unknown, 1);
	ck_assert_uint_eq(replay_info(r)->n_oom, 1);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_large_split_rule)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{5 * MIB, A, 5 * MIB}, {15 * MIB, I, 0}};
	uint64_t big = 19 * MIB + MIB / 2;
	struct replay *r;

	push_seg(s, BASE, 0, 1, 0, fin, 2);
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 20 * MIB);
	ev(s, SNAP_ALLOC, BASE, big);           /* remainder 0.5 MiB: whole */
	ev(s, SNAP_FREE_REQUESTED, BASE, big);
	ev(s, SNAP_FREE_COMPLETED, BASE, big);
	ev(s, SNAP_ALLOC, BASE, 5 * MIB);       /* remainder 15 MiB: split */
	r = open_ok(s);
	seek_ok(r, 1);
	ck_assert_uint_eq(replay_state(r)->n_blocks, 1);
	blk_is(r, 0, BASE, 20 * MIB, A);
	seek_ok(r, 4);
	blk_is(r, 0, BASE, 5 * MIB, A);
	blk_is(r, 1, BASE + 5 * MIB, 15 * MIB, I);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 0);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_segment_free)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{2 * MIB, I, 0}};
	struct replay *r;

	push_seg(s, BASE + 8 * MIB, 0, 0, 0, fin, 1);
	ev(s, SNAP_SEGMENT_FREE, BASE, 20 * MIB);      /* before the trace */
	ev(s, SNAP_SEGMENT_ALLOC, BASE + 4 * MIB, 2 * MIB);
	ev(s, SNAP_SEGMENT_ALLOC, BASE + 8 * MIB, 2 * MIB);
	ev(s, SNAP_SEGMENT_FREE, BASE + 4 * MIB, 2 * MIB);
	r = open_ok(s);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 1);
	ck_assert_uint_eq(replay_state(r)->segments[0].size, 20 * MIB);
	ck_assert_uint_eq(replay_state(r)->segments[0].is_large, 1);
	seek_ok(r, 2);
	ck_assert_uint_eq(replay_state(r)->n_segments, 2);
	ck_assert_uint_eq(replay_state(r)->reserved, 4 * MIB);
	seek_ok(r, 3);
	ck_assert_uint_eq(replay_state(r)->n_segments, 1);
	seek_ok(r, 1);
	ck_assert_uint_eq(replay_state(r)->segments[0].addr, BASE + 4 * MIB);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_expandable)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, A, 1000}, {4 * MIB - 1024, I, 0}};
	struct replay *r;
	const struct replay_state *st;

	push_seg(s, BASE, 7, 0, 1, fin, 2);
	snap_trace_get(s, 0);
	ev(s, SNAP_SEGMENT_MAP, BASE, 2 * MIB);              /* 0 */
	ev(s, SNAP_SEGMENT_MAP, BASE + 4 * MIB, 2 * MIB);    /* 1: 2 runs */
	ev(s, SNAP_SEGMENT_MAP, BASE + 2 * MIB, 2 * MIB);    /* 2: merged */
	ev(s, SNAP_ALLOC, BASE, 1000);                       /* 3 */
	ev(s, SNAP_SEGMENT_UNMAP, BASE + 2 * MIB, 2 * MIB);  /* 4: split */
	ev(s, SNAP_SEGMENT_MAP, BASE + 2 * MIB, 2 * MIB);    /* 5 */
	ev(s, SNAP_SEGMENT_UNMAP, BASE + 4 * MIB, 2 * MIB);  /* 6: trim */
	/* streams: the builder pushed 0; the segment is on stream 7 */
	{
		struct snap_trace *t = snap_trace_get(s, 0);
		uint64_t i;

		for (i = 0; i < t->n; i++)
			t->stream[i] = 7;
	}
	r = open_ok(s);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 0);
	seek_ok(r, 1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 2);
	seek_ok(r, 2);
	st = replay_state(r);
	ck_assert_uint_eq(st->n_segments, 1);
	ck_assert_uint_eq(st->segments[0].size, 6 * MIB);
	ck_assert_uint_eq(st->n_blocks, 1);
	ck_assert_uint_eq(st->segments[0].is_expandable, 1);
	seek_ok(r, 4);
	st = replay_state(r);
	ck_assert_uint_eq(st->n_segments, 2);
	blk_is(r, 0, BASE, 1024, A);
	blk_is(r, 1, BASE + 1024, 2 * MIB - 1024, I);
	blk_is(r, 2, BASE + 4 * MIB, 2 * MIB, I);
	seek_ok(r, 6);
	st = replay_state(r);
	ck_assert_uint_eq(st->n_segments, 1);
	ck_assert_uint_eq(st->segments[0].size, 4 * MIB);
	seek_ok(r, 3); /* back through unmap/map */
	ck_assert_uint_eq(replay_state(r)->n_segments, 1);
	ck_assert_uint_eq(replay_state(r)->segments[0].size, 6 * MIB);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_workspace_triple)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{8 * MIB, I, 0}};
	struct replay *r;
	struct replay_check c;
	struct sv_error err;

	push_seg(s, BASE, 0, 1, 0, fin, 1);
	ev(s, SNAP_WORKSPACE_SNAPSHOT, BASE, 8 * MIB);
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 8 * MIB);
	ev(s, SNAP_ALLOC, BASE, 8 * MIB);
	r = open_ok(s);
	ck_assert_uint_eq(replay_info(r)->n_workspace, 1);
	seek_ok(r, 2);
	blk_is(r, 0, BASE, 8 * MIB, A);
	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	ck_assert_uint_eq(c.n_issues, 0);
	/* the workspace segment's, and the trace's alloc with no free
	 * (replay_check.c, missing_actions(): skip_actions or short) */
	ck_assert_uint_eq(c.n_notes, 2);
	ck_assert_ptr_nonnull(strstr(c.notes[0].msg, "workspace"));
	ck_assert_ptr_nonnull(strstr(c.notes[1].msg, "skip_actions"));
	replay_check_destroy(&c);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_mismatch_and_file)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, I, 0}, {2 * MIB - 1024, I, 0}};
	struct replay *r;
	struct replay_check c;
	struct sv_error err;

	push_seg(s, BASE, 0, 0, 0, fin, 2);
	s->segments[0].allocated_size = 99; /* the file lies */
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	ev(s, SNAP_ALLOC, BASE + 512, 1000);
	ev(s, SNAP_ALLOC, BASE + 4 * MIB, 10); /* no segment there */
	r = open_ok(s);
	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	ck_assert_uint_ge(c.n_issues, 3);
	{
		int file = 0, ev1 = 0, ev2 = 0;
		uint64_t i;

		for (i = 0; i < c.n_kept; i++) {
			file += c.issues[i].ev == REPLAY_EV_FILE;
			ev1 += c.issues[i].ev == 1;
			ev2 += c.issues[i].ev == 2;
		}
		ck_assert_int_ge(file, 1);
		ck_assert_int_ge(ev1, 1);
		ck_assert_int_ge(ev2, 1);
	}
	replay_check_destroy(&c);
	replay_free(r);
	snap_free(s);
}
END_TEST

/* Overlapping final segments: each one that overlaps an earlier one (in
 * file order) is reported once, naming the earlier one; disjoint ones and
 * segments of another device are not. */
START_TEST(test_replay_check_overlaps)
{
	struct snapshot *s = snap_new();
	struct fb two[] = {{2 * MIB, I, 0}};
	struct fb one[] = {{MIB, I, 0}};
	struct replay *r;
	struct replay_check c;
	struct sv_error err;
	uint64_t i;
	int over = 0, named_a = 0;

	push_seg(s, BASE + 8 * MIB, 0, 1, 0, two, 1);	/* A */
	push_seg(s, BASE, 0, 1, 0, two, 1);		/* B: disjoint */
	push_seg(s, BASE + 9 * MIB, 0, 1, 0, one, 1);	/* C: inside A */
	push_seg(s, BASE + 7 * MIB, 0, 1, 0, two, 1);	/* D: over A */
	push_seg(s, BASE + 8 * MIB, 0, 1, 0, two, 1);	/* E: device 1 */
	s->segments[4].device = 1;
	snap_finish(s);
	r = open_ok(s);
	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	for (i = 0; i < c.n_kept; i++) {
		if (strstr(c.issues[i].msg, "overlaps segment") == NULL)
			continue;
		over++;
		ck_assert(c.issues[i].addr == BASE + 9 * MIB ||
		    c.issues[i].addr == BASE + 7 * MIB);
		named_a += strstr(c.issues[i].msg, "0x7f0000800000") != NULL;
	}
	/* C and D are the later ones of their pairs with A (D ends where C
	 * starts: no overlap); B and E overlap nothing on device 0 */
	ck_assert_int_eq(over, 2);
	ck_assert_int_eq(named_a, 2);
	replay_check_destroy(&c);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_legacy_no_trace)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, A, 1000}, {2 * MIB - 1024, I, 0}};
	struct replay *r;

	push_seg(s, BASE, 0, 0, 0, fin, 2);
	r = open_ok(s);
	ck_assert_int_eq(replay_info(r)->legacy_no_trace, 1);
	seek_ok(r, -1);
	blk_is(r, 0, BASE, 1024, A);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

static void
check_real(const char *name, int want_ok)
{
	char path[1024];
	struct snapshot *s;
	struct sv_error err;
	struct replay *r;

	snprintf(path, sizeof path, "%s/tests/data/real/%s", TOP_SRCDIR, name);
	ck_assert_int_eq(snap_load_file(path, NULL, &s, &err), 0);
	r = replay_new(s, snap_default_device(s), &err);
	ck_assert_ptr_nonnull(r);
	if (want_ok)
		ck_assert_uint_eq(check_issues(r), 0);
	else
		ck_assert_uint_gt(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}

START_TEST(test_replay_real_files)
{
	check_real("npu_leak_expandable.pickle", 1);
	check_real("npu_leak_empty_cache.pickle", 1);
	check_real("synthetic_inconsistent.pickle", 0);
}
END_TEST

/* The passes poll the thread's stop flag and meter what they apply:
 * stopped, the build gives up (SV_ERR_CANCELLED) with the first poll;
 * not, the meter holds both passes' events, as many polls of
 * SV_STOP_EVERY as each pass made after its first. */
START_TEST(test_replay_stop_and_meter)
{
	char path[1024];
	struct snapshot *s;
	struct sv_error err;
	struct replay *r;
	atomic_int flag;
	atomic_uint_fast64_t meter;
	uint64_t n, per_pass;
	uint32_t d;

	snprintf(path, sizeof path, "%s/tests/data/real/%s", TOP_SRCDIR,
	    "cuda_train_one_step.pickle");
	ck_assert_int_eq(snap_load_file(path, NULL, &s, &err), 0);
	d = snap_default_device(s);
	n = snap_trace_of(s, d)->n;
	ck_assert_uint_gt(n, 2 * SV_STOP_EVERY);
	atomic_init(&flag, 1);
	atomic_init(&meter, 0);
	sv_stop_flag = &flag;
	sv_stop_meter = &meter;
	sv_error_clear(&err);
	ck_assert_ptr_null(replay_new(s, d, &err));
	ck_assert_int_eq(err.code, SV_ERR_CANCELLED);
	ck_assert_uint_eq(atomic_load(&meter), 0);
	atomic_store(&flag, 0);
	r = replay_new(s, d, &err);
	sv_stop_flag = NULL;
	sv_stop_meter = NULL;
	ck_assert_ptr_nonnull(r);
	per_pass = (n - 1) / SV_STOP_EVERY * SV_STOP_EVERY;
	/* two passes a build, which runs again when its forward pass
	 * corrected a guess of the backward pass */
	ck_assert_uint_ge(atomic_load(&meter), 2 * per_pass);
	ck_assert_uint_eq(atomic_load(&meter) % (2 * per_pass), 0);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

static Suite *
replay_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("actions");
	TCase *tp = tcase_create("property");

	tcase_add_test(tc, test_replay_split_merge_pending);
	tcase_add_test(tc, test_replay_pre_trace_free);
	tcase_add_test(tc, test_replay_ghost_oom_unknown);
	tcase_add_test(tc, test_replay_large_split_rule);
	tcase_add_test(tc, test_replay_segment_free);
	tcase_add_test(tc, test_replay_expandable);
	tcase_add_test(tc, test_replay_workspace_triple);
	tcase_add_test(tc, test_replay_mismatch_and_file);
	tcase_add_test(tc, test_replay_check_overlaps);
	tcase_add_test(tc, test_replay_legacy_no_trace);
	replay_saved_tests(tc);
	tcase_add_test(tc, test_replay_real_files);
	tcase_add_test(tc, test_replay_stop_and_meter);
	suite_add_tcase(s, tc);
	replay_model_tests(tp);
	tcase_set_timeout(tp, 120);
	suite_add_tcase(s, tp);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(replay_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
