/*
 * The TUI's state at the cursor (src/tui/state.c): its fallback when the
 * replay cannot reach an event is the final state as the replay engine
 * reads the file (normalised), equal to where the replay ends on a
 * consistent file, and state_exact() says when it is shown.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "replay/replay.h"
#include "snapshot/snap_load.h"
#include "snapshot/snap_model.h"
#include "tui/state.h"

/* Forces the fallback: the replay is gone, as when it cannot seek. */
static void
lose_replay(struct state_src *src)
{
	replay_free(src->replay);
	src->replay = NULL;
}

/* On a real file whose trace replays exactly to its segments, the final
 * state shown in the fallback is the replay's state after the last event,
 * block for block. */
START_TEST(test_state_final_is_replay_end)
{
	char path[4096];
	struct snapshot *s;
	struct sv_error err;
	struct state_src src;
	const struct replay_state *end, *fin;
	struct replay_segment *segs;
	struct replay_block *blocks;
	uint32_t d, i, ns, nb;
	int64_t last;
	uint64_t reserved;

	snprintf(path, sizeof path, "%s/tests/data/real/%s", TOP_SRCDIR,
	    "npu_leak_empty_cache.pickle");
	ck_assert_int_eq(snap_load_file(path, NULL, &s, &err), 0);
	d = snap_default_device(s);
	ck_assert_int_eq(state_open(&src, NULL, s, d, &err), 0);
	last = src.last;
	ck_assert_int_gt(last, 0);
	end = state_at(&src, last);
	ck_assert_int_eq(state_exact(&src, last), 1);
	ns = end->n_segments;
	nb = end->n_blocks;
	ck_assert_uint_gt(nb, ns);
	segs = malloc(ns * sizeof *segs);
	blocks = malloc(nb * sizeof *blocks);
	ck_assert_ptr_nonnull(segs);
	ck_assert_ptr_nonnull(blocks);
	for (i = 0; i < ns; i++)
		segs[i] = end->segments[i];
	for (i = 0; i < nb; i++)
		blocks[i] = end->blocks[i];

	reserved = end->reserved;
	lose_replay(&src);	/* end pointed into it */
	fin = state_at(&src, 100);
	ck_assert_int_eq(state_exact(&src, 100), 0);
	ck_assert_int_eq(state_exact(&src, last), 1);
	ck_assert_int_eq(fin->at, last);
	ck_assert_uint_eq(fin->n_segments, ns);
	ck_assert_uint_eq(fin->n_blocks, nb);
	for (i = 0; i < ns; i++) {
		ck_assert_uint_eq(fin->segments[i].addr, segs[i].addr);
		ck_assert_uint_eq(fin->segments[i].size, segs[i].size);
		ck_assert_uint_eq(fin->segments[i].n_blocks, segs[i].n_blocks);
		ck_assert_uint_eq(fin->segments[i].allocated,
		    segs[i].allocated);
	}
	for (i = 0; i < nb; i++) {
		ck_assert_uint_eq(fin->blocks[i].addr, blocks[i].addr);
		ck_assert_uint_eq(fin->blocks[i].size, blocks[i].size);
		ck_assert_uint_eq(fin->blocks[i].state, blocks[i].state);
		ck_assert_uint_eq(fin->blocks[i].requested_size,
		    blocks[i].requested_size);
	}
	ck_assert_uint_eq(fin->reserved, reserved);
	free(segs);
	free(blocks);
	state_close(&src);
	snap_free(s);
}
END_TEST

static void
push_block(struct snapshot *s, uint64_t addr, uint64_t size,
    uint64_t req, int state)
{
	struct snap_block *b = snap_push_block(s);

	b->addr = addr;
	b->size = size;
	b->requested_size = req;
	b->state = (uint8_t)state;
}

/* A file the replay must normalise: two segments out of address order,
 * a zero-size block, neighbouring inactive blocks (one with a stale
 * requested size), a segment repeated at the same address. */
START_TEST(test_state_final_normalised)
{
	struct snapshot *s = snap_new();
	struct snap_segment *g;
	struct state_src src;
	struct sv_error err;
	const struct replay_state *st;

	g = snap_push_segment(s);
	g->addr = 0x200000;
	g->total_size = 2048;
	g->first_block = s->n_blocks;
	g->n_blocks = 4;
	push_block(s, 0x200000, 512, 300, SNAP_BLOCK_INACTIVE);
	push_block(s, 0x200200, 0, 0, SNAP_BLOCK_ACTIVE_ALLOCATED);
	push_block(s, 0x200200, 512, 0, SNAP_BLOCK_INACTIVE);
	push_block(s, 0x200400, 1024, 1000, SNAP_BLOCK_ACTIVE_ALLOCATED);
	g = snap_push_segment(s);
	g->addr = 0x100000;
	g->total_size = 1024;
	g->first_block = s->n_blocks;
	g->n_blocks = 1;
	push_block(s, 0x100000, 1024, 700, SNAP_BLOCK_ACTIVE_PENDING_FREE);
	g = snap_push_segment(s);
	g->addr = 0x200000;
	g->total_size = 512;
	g->first_block = s->n_blocks;
	g->n_blocks = 1;
	push_block(s, 0x200000, 512, 512, SNAP_BLOCK_ACTIVE_ALLOCATED);
	snap_finish(s);

	state_open(&src, NULL, s, 0, &err);
	lose_replay(&src);
	st = state_at(&src, -1);
	ck_assert_int_eq(state_exact(&src, -1), 1); /* no events: -1 is last */
	ck_assert_uint_eq(st->n_segments, 2);
	ck_assert_uint_eq(st->segments[0].addr, 0x100000);
	ck_assert_uint_eq(st->segments[1].addr, 0x200000);
	ck_assert_uint_eq(st->segments[1].size, 2048);
	ck_assert_uint_eq(st->n_blocks, 3);
	ck_assert_uint_eq(st->blocks[0].state, SNAP_BLOCK_ACTIVE_PENDING_FREE);
	ck_assert_uint_eq(st->blocks[0].requested_size, 700);
	/* the two inactive blocks merged, no stale requested size */
	ck_assert_uint_eq(st->blocks[1].addr, 0x200000);
	ck_assert_uint_eq(st->blocks[1].size, 1024);
	ck_assert_uint_eq(st->blocks[1].state, SNAP_BLOCK_INACTIVE);
	ck_assert_uint_eq(st->blocks[1].requested_size, 0);
	ck_assert_uint_eq(st->blocks[2].addr, 0x200400);
	ck_assert_uint_eq(st->blocks[2].size, 1024);
	ck_assert_uint_eq(st->reserved, 3072);
	ck_assert_uint_eq(st->allocated, 1024);
	state_close(&src);
	snap_free(s);
}
END_TEST

static Suite *
state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("final");

	/* no wall-clock limit (Check's default is 4 s): machines are shared */
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_state_final_is_replay_end);
	tcase_add_test(tc, test_state_final_normalised);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(state_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
