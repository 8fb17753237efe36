/*
 * The allocator simulation (replay/sim.h) and its settings
 * (replay/simconf.h) against expectations worked out by hand from the
 * rules of doc/snapshot-format.md §13.12: the parser's errors name the
 * key, round_size with and without divisions, pools, best fit, splits and
 * merges, oversize blocks, expandable pages, releasing and retrying
 * before an OOM, garbage collection, pending frees, private pools, a
 * seeded state.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "replay/sim.h"
#include "replay/simconf.h"

#define MIB (1024ull * 1024)

/* ---- settings --------------------------------------------------------- */

static void
parse_ok(const char *text, struct sim_conf *c)
{
	char why[200];

	ck_assert_msg(simconf_parse(text, c, why, sizeof why) == 0,
	    "%s: %s", text, why);
}

static void
parse_bad(const char *text, const char *want)
{
	struct sim_conf c;
	char why[200];

	ck_assert_int_eq(simconf_parse(text, &c, why, sizeof why), -1);
	ck_assert_msg(strstr(why, want) != NULL, "%s: '%s' lacks '%s'",
	    text, why, want);
}

START_TEST(test_conf_parse)
{
	struct sim_conf c, d, e;
	char buf[300];
	int k;

	parse_ok("", &c);
	simconf_default(&d);
	ck_assert(simconf_equal(&c, &d));
	parse_ok("expandable_segments:True, max_split_size_mb:128,"
	    "garbage_collection_threshold:0.6", &c);
	ck_assert_int_eq(c.expandable, 1);
	ck_assert_uint_eq(c.max_split, 128 * MIB);
	ck_assert(c.gc_threshold > 0.59 && c.gc_threshold < 0.61);
	parse_ok("roundup_power2_divisions:4", &c);
	for (k = 0; k < SIMCONF_INTERVALS; k++)
		ck_assert_uint_eq(c.div[k], 4);
	/* the first entry fills the intervals below it; ">" every one from
	 * the last named, that one included (as PyTorch reads it) */
	parse_ok("roundup_power2_divisions:[256:1,512:2,>:4]", &c);
	ck_assert_uint_eq(c.div[0], 1);
	ck_assert_uint_eq(c.div[8], 1);
	ck_assert_uint_eq(c.div[9], 4);
	ck_assert_uint_eq(c.div[15], 4);
	parse_ok("roundup_power2_divisions:[1:2,64:4,128:8]", &c);
	ck_assert_uint_eq(c.div[0], 2);
	ck_assert_uint_eq(c.div[1], 0);
	ck_assert_uint_eq(c.div[6], 4);
	ck_assert_uint_eq(c.div[7], 8);
	/* written back, read again: the same settings */
	simconf_format(&c, buf, sizeof buf);
	parse_ok(buf, &e);
	ck_assert_msg(simconf_equal(&c, &e), "%s", buf);
	parse_ok("release_lock_on_cudamalloc:True,backend:native", &c);
	ck_assert(simconf_equal(&c, &d));

	parse_bad("foo:1", "unknown key 'foo'");
	parse_bad("max_split_size_mb:1x", "max_split_size_mb: '1x' is not");
	parse_bad("max_split_size_mb:10", "max_split_size_mb: 10 is below 20");
	parse_bad("expandable_segments:yes", "expandable_segments");
	parse_bad("garbage_collection_threshold:1.5",
	    "garbage_collection_threshold");
	parse_bad("roundup_power2_divisions:3", "roundup_power2_divisions");
	parse_bad("roundup_power2_divisions:[3:2]", "interval 3");
	parse_bad("max_split_size_mb", "max_split_size_mb");
	parse_bad("expandable_segments:True;x", "expandable_segments");
	parse_bad("backend:cudaMallocAsync", "backend");
}
END_TEST

START_TEST(test_round)
{
	struct sim_conf c;

	simconf_default(&c);
	ck_assert_uint_eq(simconf_round(&c, 1), 512);
	ck_assert_uint_eq(simconf_round(&c, 512), 512);
	ck_assert_uint_eq(simconf_round(&c, 513), 1024);
	parse_ok("roundup_power2_divisions:4", &c);
	/* divisions only above 512 x d: 1200 is rounded to 512s */
	ck_assert_uint_eq(simconf_round(&c, 1200), 1536);
	/* 5000: between 4096 and 8192 in steps of 1024 */
	ck_assert_uint_eq(simconf_round(&c, 5000), 5120);
	ck_assert_uint_eq(simconf_round(&c, 8192), 8192);
	/* 3 MiB + 1: steps of 512 KiB between 2 and 4 MiB */
	ck_assert_uint_eq(simconf_round(&c, 3 * MIB + 1), 3 * MIB + MIB / 2);
	simconf_default(&c);
	c.pad = 32; /* torch_npu */
	ck_assert_uint_eq(simconf_round(&c, 16384), 16896);
	ck_assert_uint_eq(simconf_round(&c, 8), 512);
}
END_TEST

/* ---- the allocator ---------------------------------------------------- */

struct log {
	int n[4];
	uint64_t last_size[4];
};

static void
on_dev(void *ctx, int action, uint64_t addr, uint64_t size)
{
	struct log *l = ctx;

	(void)addr;
	l->n[action]++;
	l->last_size[action] = size;
}

static struct sim *
mk(const char *conf, uint64_t capacity, struct log *l)
{
	struct sim_conf c;
	struct sim_hooks h;

	parse_ok(conf, &c);
	memset(&h, 0, sizeof h);
	memset(l, 0, sizeof *l);
	h.ctx = l;
	h.dev = on_dev;
	return sim_new(&c, capacity, &h);
}

static uint64_t
get(struct sim *S, uint64_t tag, uint64_t req)
{
	uint64_t a = 0;

	ck_assert_msg(sim_malloc(S, tag, req, 0, NULL, &a) == 0,
	    "malloc %llu failed", (unsigned long long)req);
	return a;
}

static void
put(struct sim *S, uint64_t tag)
{
	ck_assert_int_eq(sim_free_completed(S, tag), 0);
}

START_TEST(test_small_pool)
{
	struct log l;
	struct sim *S = mk("", 0, &l);
	uint64_t a = get(S, 1, 1000), b = get(S, 2, 1000);

	/* one 2 MiB segment; the second block right after the first */
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 1);
	ck_assert_uint_eq(l.last_size[SIM_DEV_ALLOC], 2 * MIB);
	ck_assert_uint_eq(b, a + 1024);
	ck_assert_uint_eq(sim_stats(S)->allocated, 2048);
	ck_assert_uint_eq(sim_stats(S)->requested, 2000);
	/* a 1 MiB request is small too; 1 MiB + 1 is not */
	get(S, 3, MIB);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 1);
	get(S, 4, MIB + 1);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 2);
	ck_assert_uint_eq(l.last_size[SIM_DEV_ALLOC], 20 * MIB);
	sim_free(S);
}
END_TEST

START_TEST(test_large_sizes)
{
	struct log l;
	struct sim *S = mk("", 0, &l);
	uint64_t a, b;

	/* under 10 MiB: a 20 MiB segment, split (the rest > 1 MiB) */
	a = get(S, 1, 5 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 1);
	ck_assert_uint_eq(l.last_size[SIM_DEV_ALLOC], 20 * MIB);
	ck_assert_uint_eq(sim_stats(S)->allocated, 5 * MIB);
	/* 14 MiB fits the 15 MiB left, taken whole (the rest, 1 MiB, is
	 * not more than 1 MiB) */
	b = get(S, 2, 14 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 1);
	ck_assert_uint_eq(b, a + 5 * MIB);
	ck_assert_uint_eq(sim_stats(S)->allocated, 20 * MIB);
	/* 19.5 MiB: a new 20 MiB segment, taken whole */
	get(S, 3, 19 * MIB + MIB / 2);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 2);
	ck_assert_uint_eq(l.last_size[SIM_DEV_ALLOC], 20 * MIB);
	ck_assert_uint_eq(sim_stats(S)->allocated, 40 * MIB);
	/* 11 MiB + 1: a 12 MiB segment (2 MiB steps); the rest 1 MiB - 512:
	 * whole */
	get(S, 4, 11 * MIB + 1);
	ck_assert_uint_eq(l.last_size[SIM_DEV_ALLOC], 12 * MIB);
	ck_assert_uint_eq(sim_stats(S)->allocated, 52 * MIB);
	sim_free(S);
}
END_TEST

START_TEST(test_best_fit_merge)
{
	struct log l;
	struct sim *S = mk("", 0, &l);
	uint64_t x, y, z;

	x = get(S, 1, 6 * MIB);		/* [x 6][free 14] */
	y = get(S, 2, 6 * MIB);		/* [x 6][y 6][free 8] */
	ck_assert_uint_eq(y, x + 6 * MIB);
	put(S, 1);			/* [free 6][y 6][free 8] */
	/* 5 MiB: the smallest that fits is the 6 MiB one, taken whole */
	z = get(S, 3, 5 * MIB);
	ck_assert_uint_eq(z, x);
	ck_assert_uint_eq(sim_stats(S)->allocated, 12 * MIB);
	put(S, 3);
	put(S, 2);
	/* everything merged back: one free 20 MiB block, given back */
	ck_assert_uint_eq(sim_stats(S)->allocated, 0);
	sim_empty_cache(S);
	ck_assert_int_eq(l.n[SIM_DEV_FREE], 1);
	ck_assert_uint_eq(l.last_size[SIM_DEV_FREE], 20 * MIB);
	ck_assert_uint_eq(sim_stats(S)->reserved, 0);
	ck_assert_uint_eq(sim_stats(S)->segments, 0);
	sim_free(S);
}
END_TEST

START_TEST(test_oversize)
{
	struct log l;
	struct sim *S = mk("max_split_size_mb:30", 0, &l);

	get(S, 1, 40 * MIB);
	put(S, 1);			/* a cached 40 MiB oversize block */
	/* under max_split_size: never the oversize block */
	get(S, 2, 10 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 2);
	/* oversize, 40 < 35 + 20: taken whole */
	get(S, 3, 35 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 2);
	ck_assert_uint_eq(sim_stats(S)->allocated, 10 * MIB + 40 * MIB);
	sim_free(S);
	/* oversize, a cached 60 MiB: 60 >= 35 + 20, refused */
	S = mk("max_split_size_mb:30", 0, &l);
	get(S, 1, 60 * MIB);
	put(S, 1);
	get(S, 2, 35 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 2);
	ck_assert_uint_eq(l.last_size[SIM_DEV_ALLOC], 36 * MIB);
	sim_free(S);
	/* without the limit a 40 MiB free block is split for 10 MiB */
	S = mk("", 0, &l);
	get(S, 1, 40 * MIB);
	put(S, 1);
	get(S, 2, 10 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 1);
	sim_free(S);
}
END_TEST

START_TEST(test_expandable)
{
	struct log l;
	struct sim *S = mk("expandable_segments:True", 0, &l);
	uint64_t a, b;

	/* large pool pages are 20 MiB: 5 MiB maps one page */
	a = get(S, 1, 5 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_MAP], 1);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 0);
	ck_assert_uint_eq(l.last_size[SIM_DEV_MAP], 20 * MIB);
	/* 16 MiB: the free 15 MiB after it plus one more page */
	b = get(S, 2, 16 * MIB);
	ck_assert_uint_eq(b, a + 5 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_MAP], 2);
	ck_assert_uint_eq(sim_stats(S)->reserved, 40 * MIB);
	ck_assert_uint_eq(sim_stats(S)->segments, 1);
	/* small requests: a 2 MiB page of their own segment */
	get(S, 3, 4096);
	ck_assert_uint_eq(l.last_size[SIM_DEV_MAP], 2 * MIB);
	ck_assert_uint_eq(sim_stats(S)->segments, 2);
	put(S, 1);
	put(S, 2);
	put(S, 3);
	sim_empty_cache(S);
	ck_assert_uint_eq(sim_stats(S)->reserved, 0);
	ck_assert_uint_eq(sim_stats(S)->segments, 0);
	ck_assert_int_eq(l.n[SIM_DEV_UNMAP], 2);
	sim_free(S);
}
END_TEST

/* sim_state(): the segments as a snapshot lists them, their blocks in
 * address order with their states, against the figures of sim_stats. */
START_TEST(test_state)
{
	struct log l;
	struct sim *S = mk("", 0, &l);
	struct sim_state st;
	uint64_t x, y, z;

	memset(&st, 0, sizeof st);
	x = get(S, 11, 6 * MIB);	/* [x 6][y 6 pending][free 8] */
	y = get(S, 12, 6 * MIB - 100);
	z = get(S, 13, 1000);		/* a small segment of its own */
	ck_assert_int_eq(sim_free_requested(S, 12), 0);
	sim_state(S, &st);
	ck_assert_uint_eq(st.n_segs, 2);
	ck_assert_uint_eq(st.n_blks, 5);
	/* by address, whichever segment the simulation placed first */
	ck_assert(st.segs[0].addr < st.segs[1].addr);
	{
		const struct replay_segment *lg = st.segs[0].is_large ?
		    &st.segs[0] : &st.segs[1];
		const struct replay_segment *sm = st.segs[0].is_large ?
		    &st.segs[1] : &st.segs[0];
		const struct replay_block *b = &st.blks[lg->first_block];

		ck_assert_uint_eq(lg->size, 20 * MIB);
		ck_assert_uint_eq(lg->n_blocks, 3);
		ck_assert_uint_eq(b[0].addr, x);
		ck_assert_uint_eq(b[0].state, SNAP_BLOCK_ACTIVE_ALLOCATED);
		ck_assert_uint_eq(b[0].requested_size, 6 * MIB);
		ck_assert_uint_eq(st.tags[lg->first_block], 11);
		ck_assert_uint_eq(b[1].addr, y);
		ck_assert_uint_eq(b[1].state, SNAP_BLOCK_ACTIVE_PENDING_FREE);
		ck_assert_uint_eq(b[2].state, SNAP_BLOCK_INACTIVE);
		ck_assert_uint_eq(b[2].size, 8 * MIB);
		ck_assert_uint_eq(st.tags[lg->first_block + 2], 0);
		ck_assert_uint_eq(lg->allocated, 6 * MIB);
		ck_assert_uint_eq(lg->active, 12 * MIB);
		ck_assert_uint_eq(sm->size, 2 * MIB);
		ck_assert_uint_eq(st.blks[sm->first_block].addr, z);
		ck_assert_uint_eq(st.blks[sm->first_block].size, 1024);
	}
	sim_state_destroy(&st);
	sim_free(S);

	/* expandable: one segment per mapped run, no unmapped block */
	S = mk("expandable_segments:True", 0, &l);
	get(S, 1, 5 * MIB);
	get(S, 2, 16 * MIB);
	put(S, 1);
	sim_state(S, &st);
	ck_assert_uint_eq(st.n_segs, 1);
	ck_assert(st.segs[0].is_expandable);
	ck_assert_uint_eq(st.segs[0].size, sim_stats(S)->reserved);
	ck_assert_uint_eq(st.segs[0].size, 40 * MIB);
	ck_assert_uint_eq(st.segs[0].allocated, 16 * MIB);
	sim_empty_cache(S);
	sim_state(S, &st);
	ck_assert_uint_eq(st.n_segs, sim_stats(S)->segments);
	sim_state_destroy(&st);
	sim_free(S);
}
END_TEST

/* A freed tag is no longer live, whatever became of its block: merged
 * away, reused for another tag, or given the same tag again. */
START_TEST(test_tags)
{
	struct log l;
	struct sim *S = mk("", 0, &l);
	uint64_t a, b;

	a = get(S, 1, 4096);
	put(S, 1);
	ck_assert_int_eq(sim_free_completed(S, 1), -1);
	ck_assert_int_eq(sim_free_requested(S, 1), -1);
	b = get(S, 2, 4096);		/* the same place, another tag */
	ck_assert_uint_eq(b, a);
	ck_assert_int_eq(sim_free_completed(S, 1), -1);
	get(S, 1, 8192);
	get(S, 3, 4096);
	put(S, 2);
	put(S, 1);			/* merges with 2's free block */
	ck_assert_int_eq(sim_free_completed(S, 2), -1);
	ck_assert_int_eq(sim_free_completed(S, 1), -1);
	ck_assert_uint_eq(sim_stats(S)->allocated, 4096);
	/* a tag still live when it is given again: freed first */
	get(S, 3, 4096);
	ck_assert_uint_eq(sim_stats(S)->allocated, 4096);
	put(S, 3);
	ck_assert_uint_eq(sim_stats(S)->allocated, 0);
	ck_assert_int_eq(sim_free_completed(S, 3), -1);
	sim_free(S);
}
END_TEST

START_TEST(test_retry_oom)
{
	struct log l;
	struct sim *S = mk("", 40 * MIB, &l);
	uint64_t a;

	get(S, 1, 15 * MIB);		/* 16 MiB */
	get(S, 2, 15 * MIB);		/* 16 MiB: 32 reserved */
	put(S, 1);			/* 16 MiB cached */
	/* 20 MiB: 32 + 20 > 40, so the cached segment goes first */
	get(S, 3, 20 * MIB);
	ck_assert_int_eq(l.n[SIM_DEV_FREE], 1);
	ck_assert_uint_eq(sim_stats(S)->reserved, 36 * MIB);
	/* 30 MiB: nothing cached is whole: out of memory */
	ck_assert_int_eq(sim_malloc(S, 4, 30 * MIB, 0, NULL, &a), -1);
	ck_assert_uint_eq(sim_stats(S)->ooms, 1);
	/* forced: the device refuses once, as a recording can show */
	sim_free(S);
	S = mk("", 0, &l);
	get(S, 1, 15 * MIB);
	put(S, 1);
	sim_force_fail(S, SIM_FORCE_ONCE);
	get(S, 2, 16 * MIB + 4096);	/* the cached 16 MiB is too small */
	ck_assert_int_eq(l.n[SIM_DEV_FREE], 1);
	sim_free(S);
}
END_TEST

START_TEST(test_gc)
{
	struct log l;
	struct sim *S = mk("garbage_collection_threshold:0.5", 100 * MIB, &l);

	get(S, 1, 30 * MIB);
	get(S, 2, 32 * MIB);
	put(S, 1);
	put(S, 2);			/* 62 MiB cached, over 50 */
	/* 40 MiB fits neither: collection first, then a new segment */
	get(S, 3, 40 * MIB);
	ck_assert_uint_gt(sim_stats(S)->gc_frees, 0);
	ck_assert_uint_le(sim_stats(S)->reserved, 72 * MIB);
	sim_free(S);
	/* without a threshold nothing is collected */
	S = mk("", 100 * MIB, &l);
	get(S, 1, 30 * MIB);
	get(S, 2, 32 * MIB);
	put(S, 1);
	put(S, 2);
	get(S, 3, 34 * MIB);
	ck_assert_uint_eq(sim_stats(S)->gc_frees, 0);
	ck_assert_uint_eq(sim_stats(S)->reserved, 96 * MIB);
	sim_free(S);
}
END_TEST

START_TEST(test_pending_private)
{
	struct log l;
	struct sim *S = mk("", 0, &l);
	int64_t graph[2] = {1, 2};
	uint64_t a, b;

	a = get(S, 1, 4096);
	ck_assert_int_eq(sim_free_requested(S, 1), 0);
	/* a pending free is not reused */
	b = get(S, 2, 4096);
	ck_assert(b != a);
	ck_assert_uint_eq(sim_stats(S)->active, 8192);
	ck_assert_int_eq(sim_free_completed(S, 1), 0);
	ck_assert_uint_eq(sim_stats(S)->active, 4096);
	ck_assert_int_eq(sim_free_completed(S, 99), -1);
	/* a private pool keeps its own segments */
	ck_assert_int_eq(sim_malloc(S, 3, 4096, 0, graph, &a), 0);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 2);
	put(S, 3);
	sim_empty_cache(S);	/* not freeable yet: kept */
	ck_assert_int_eq(l.n[SIM_DEV_FREE], 0);
	sim_pool_freeable(S, graph);
	sim_empty_cache(S);
	ck_assert_int_eq(l.n[SIM_DEV_FREE], 1);
	sim_free(S);
}
END_TEST

START_TEST(test_seed)
{
	struct log l;
	struct sim *S = mk("", 0, &l);
	struct replay_segment sg;
	struct replay_block b[2];
	uint64_t base = 0x7f0000000000ull, a;

	memset(&sg, 0, sizeof sg);
	memset(b, 0, sizeof b);
	sg.addr = base;
	sg.size = 2 * MIB;
	sg.n_blocks = 2;
	b[0].addr = base;
	b[0].size = 1024;
	b[0].requested_size = 1000;
	b[0].state = SNAP_BLOCK_ACTIVE_ALLOCATED;
	b[1].addr = base + 1024;
	b[1].size = 2 * MIB - 1024;
	b[1].state = SNAP_BLOCK_INACTIVE;
	ck_assert_int_eq(sim_seed_segment(S, &sg, b), 0);
	ck_assert_uint_eq(sim_stats(S)->reserved, 2 * MIB);
	/* blocks that do not tile their segment are refused */
	sg.addr = base + 4 * MIB;
	ck_assert_int_eq(sim_seed_segment(S, &sg, b), -1);
	/* the seeded free block serves the next request */
	a = get(S, 7, 512);
	ck_assert_uint_eq(a, base + 1024);
	ck_assert_int_eq(l.n[SIM_DEV_ALLOC], 0);
	/* the seeded live block is freed by its address */
	put(S, base);
	ck_assert_uint_eq(sim_stats(S)->allocated, 512);
	sim_free(S);
}
END_TEST

static Suite *
sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_conf_parse);
	tcase_add_test(tc, test_round);
	tcase_add_test(tc, test_small_pool);
	tcase_add_test(tc, test_large_sizes);
	tcase_add_test(tc, test_best_fit_merge);
	tcase_add_test(tc, test_oversize);
	tcase_add_test(tc, test_expandable);
	tcase_add_test(tc, test_state);
	tcase_add_test(tc, test_tags);
	tcase_add_test(tc, test_retry_oom);
	tcase_add_test(tc, test_gc);
	tcase_add_test(tc, test_pending_private);
	tcase_add_test(tc, test_seed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sim_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
