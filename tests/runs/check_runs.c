/*
 * Unit tests of a run directory's pieces (analysis/runs.h): the layout
 * patterns (verl's and torchtitan's against the end of a path, a pattern
 * of the caller's against the whole path, digits, stars), the grid a
 * tree of files makes (ranks and steps, an OOM dump beside a dump of the
 * same cell, an empty file, the files no layout names, a pattern that
 * names nothing), and the blocks section: built from a generated
 * snapshot, read back with the bytes of its allocated blocks, and every
 * cut and every flipped byte of it refused or read within its bounds.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/rankset.h"
#include "analysis/runs.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

#define FIXTURE TOP_SRCDIR "/tests/data/gen/training-leak.pickle"

START_TEST(test_match)
{
	const char *verl = an_run_builtin_pattern("verl", 0);
	const char *titan = an_run_builtin_pattern("torchtitan", 0);
	const char *exit_ = an_run_builtin_pattern("torchtitan", 1);
	int64_t r = -1, s = -1;

	ck_assert_ptr_nonnull(verl);
	ck_assert_ptr_null(an_run_builtin_pattern("verl", 1));
	ck_assert_ptr_null(an_run_builtin_pattern("step{step}", 0));
	ck_assert(an_run_match(verl, "step12/torch_memory_rank3_pid4567.pickle",
	    0, &r, &s));
	ck_assert_int_eq(r, 3);
	ck_assert_int_eq(s, 12);
	/* below any directory, never inside a component */
	ck_assert(an_run_match(verl,
	    "out/run/step1/torch_memory_rank0_pid1.pickle", 0, &r, &s));
	ck_assert(!an_run_match(verl, "xstep1/torch_memory_rank0_pid1.pickle",
	    0, &r, &s));
	ck_assert(!an_run_match(verl, "step1/torch_memory_rank_pid1.pickle", 0,
	    &r, &s));
	ck_assert(!an_run_match(verl, "step1/torch_memory_rank0_pid1.pkl", 0,
	    &r, &s));
	/* ten digits are no number of ours */
	ck_assert(!an_run_match(verl,
	    "step1/torch_memory_rank1234567890_pid1.pickle", 0, &r, &s));
	ck_assert(an_run_match(titan,
	    "memory_snapshot/iteration_20/rank7_memory_snapshot.pickle", 0, &r,
	    &s));
	ck_assert_int_eq(r, 7);
	ck_assert_int_eq(s, 20);
	ck_assert(!an_run_match(titan,
	    "memory_snapshot/iteration_20_exit/rank7_memory_snapshot.pickle",
	    0, &r, &s));
	ck_assert(an_run_match(exit_,
	    "memory_snapshot/iteration_20_exit/rank7_memory_snapshot.pickle",
	    0, &r, &s));
	/* a pattern of the caller's: the whole path, stars within one
	 * component */
	ck_assert(an_run_match("dumps/s{step}/r{rank}.pickle",
	    "dumps/s3/r10.pickle", 1, &r, &s));
	ck_assert_int_eq(r, 10);
	ck_assert_int_eq(s, 3);
	ck_assert(!an_run_match("dumps/s{step}/r{rank}.pickle",
	    "old/dumps/s3/r10.pickle", 1, &r, &s));
	ck_assert(an_run_match("*/{step}-{rank}-*.pkl", "job/5-2-x-y.pkl", 1,
	    &r, &s));
	ck_assert_int_eq(r, 2);
	ck_assert_int_eq(s, 5);
	ck_assert(!an_run_match("*/{step}-{rank}.pkl", "a/b/5-2.pkl", 1, &r,
	    &s));
}
END_TEST

static char *
tmpdir(void)
{
	char *d = xstrdup("/tmp/check_runs.XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

/* Writes dir/rel with n bytes, making the directories. */
static void
put(const char *dir, const char *rel, size_t n)
{
	char path[1024], *p;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	while (n-- > 0)
		fputc('x', f);
	fclose(f);
}

static void
rm_tree(const char *dir)
{
	char cmd[1100];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_collect)
{
	char *d = tmpdir();
	struct an_rankset rs;
	struct an_run run;
	struct sv_error err;
	const struct an_run_cell *c;

	put(d, "memory_snapshot/iteration_1/rank0_memory_snapshot.pickle", 9);
	put(d, "memory_snapshot/iteration_1/rank1_memory_snapshot.pickle", 9);
	put(d, "memory_snapshot/iteration_2/rank0_memory_snapshot.pickle", 9);
	put(d, "memory_snapshot/iteration_2/rank1_memory_snapshot.pickle", 9);
	put(d, "memory_snapshot/iteration_2_exit/rank1_memory_snapshot.pickle",
	    9);
	put(d, "memory_snapshot/iteration_4/rank1_memory_snapshot.pickle", 0);
	put(d, "notes/rank5.pickle", 9);
	put(d, "notes/r5_s2.pickle", 9);
	put(d, "memory_snapshot/iteration_1/readme.txt", 9);
	sv_error_clear(&err);
	ck_assert_int_eq(an_run_collect(d, NULL, &rs, &run, &err), 1);
	ck_assert_str_eq(run.layout, "torchtitan");
	ck_assert_uint_eq(run.n_ranks, 2);
	ck_assert_uint_eq(run.n_steps, 3);
	ck_assert_int_eq(run.steps[2], 4);
	ck_assert_uint_eq(run.n_empty, 1);
	/* the OOM dump takes its cell; the dump it displaces is another
	 * file of the set, as the one no layout names */
	c = an_run_cell(&run, 1, 1);
	ck_assert_int_eq(c->oom_name, 1);
	ck_assert_ptr_nonnull(strstr(c->path, "iteration_2_exit"));
	ck_assert_int_eq(an_run_cell(&run, 1, 2)->state, AN_RUN_EMPTY);
	ck_assert_uint_eq(an_run_cell(&run, 1, 2)->member, SIZE_MAX);
	ck_assert_int_eq(an_run_cell(&run, 0, 2)->state, AN_RUN_MISSING);
	ck_assert_uint_eq(run.n_members, 4);
	ck_assert_uint_eq(rs.n, 7);
	ck_assert_int_eq(rs.m[c->member].rank, 1);
	ck_assert_ptr_nonnull(strstr(rs.m[4].path, "iteration_2/rank1"));
	ck_assert_ptr_nonnull(strstr(rs.m[5].path, "notes/r5_s2.pickle"));
	ck_assert_ptr_nonnull(strstr(rs.m[6].path, "notes/rank5.pickle"));
	/* the other files' ranks: not all named, so their places */
	ck_assert_int_eq(rs.m[4].rank, 0);
	ck_assert_int_eq(rs.m[6].rank, 2);
	an_run_free(&run);
	an_rankset_free(&rs);

	/* a pattern of the caller's: it names these, or nothing */
	ck_assert_int_eq(an_run_collect(d, "notes/r{rank}_s{step}.pickle",
	    &rs, &run, &err), 1);
	ck_assert_uint_eq(run.n_members, 1);
	ck_assert_int_eq(run.ranks[0], 5);
	ck_assert_int_eq(run.steps[0], 2);
	an_run_free(&run);
	an_rankset_free(&rs);
	ck_assert_int_eq(an_run_collect(d, "x/{step}/{rank}.pickle", &rs, &run,
	    &err), -1);
	ck_assert_int_eq(an_run_collect(d, "x/{step}.pickle", &rs, &run, &err),
	    -1);
	ck_assert_int_eq(an_run_collect(d, "/abs/{step}/{rank}.pickle", &rs,
	    &run, &err), -1);
	rm_tree(d);
	free(d);

	/* no file a layout names: a plain rank set */
	d = tmpdir();
	put(d, "rank0.pickle", 9);
	put(d, "rank1.pickle", 9);
	ck_assert_int_eq(an_run_collect(d, NULL, &rs, &run, &err), 0);
	rm_tree(d);
	free(d);
}
END_TEST

/* A one-dump run whose member has the given blocks section: 1 when the
 * section was read, with *alloc its allocated bytes. */
static int
read_back(const char *d, const uint8_t *data, size_t len, uint64_t *alloc)
{
	struct an_rankset rs;
	struct an_run run;
	struct sv_error err;
	const struct an_run_cell *c;
	int ok;

	sv_error_clear(&err);
	ck_assert_int_eq(an_run_collect(d, NULL, &rs, &run, &err), 1);
	rs.m[0].state = AN_RS_OK;
	rs.m[0].sum.n_dev = 1;
	rs.m[0].sum.dev = xcalloc(1, sizeof *rs.m[0].sum.dev);
	rs.m[0].sum.dev[0].events = 1;
	rs.m[0].extra[0] = xmalloc(len + 1);
	if (len > 0)
		memcpy(rs.m[0].extra[0], data, len);
	rs.m[0].extra_len[0] = len;
	an_run_analyse(&run, &rs, -1);
	c = an_run_cell(&run, 0, 0);
	ok = c->has_blocks;
	*alloc = c->allocated;
	if (ok)
		ck_assert_uint_eq(c->n_blocks > 0 || c->allocated == 0, 1);
	an_run_free(&run);
	an_rankset_free(&rs);
	return ok;
}

START_TEST(test_blocks_section)
{
	struct snapshot *s = NULL;
	struct sv_error err;
	uint8_t *data = NULL, *bad;
	size_t len = 0, i;
	uint64_t want = 0, got = 0;
	uint32_t k;
	char *d = tmpdir();

	sv_error_clear(&err);
	ck_assert_int_eq(snap_load_file(FIXTURE, NULL, &s, &err), 0);
	for (k = 0; k < s->n_segments; k++) {
		const struct snap_segment *sg = &s->segments[k];
		uint32_t b;

		for (b = 0; sg->device == 0 && b < sg->n_blocks; b++)
			if (s->blocks[sg->first_block + b].state ==
			    SNAP_BLOCK_ACTIVE_ALLOCATED)
				want += s->blocks[sg->first_block +
				    b].requested_size;
	}
	ck_assert_int_eq(an_run_blocks_section.build(s, NULL, &data, &len,
	    &err), 0);
	put(d, "step1/torch_memory_rank0_pid1.pickle", 9);
	ck_assert_int_eq(read_back(d, data, len, &got), 1);
	ck_assert_uint_eq(got, want);
	ck_assert_uint_gt(want, 0);
	/* a cut is refused; a flipped byte is refused or read */
	for (i = 0; i < len; i++)
		ck_assert_int_eq(read_back(d, data, i, &got), 0);
	bad = xmalloc(len);
	for (i = 0; i < len; i += i < 256 ? 1 : 7) {
		memcpy(bad, data, len);
		bad[i] ^= 0x5a;
		(void)read_back(d, bad, len, &got);
	}
	free(bad);
	free(data);
	snap_free(s);
	rm_tree(d);
	free(d);
}
END_TEST

static Suite *
runs_suite(void)
{
	Suite *s = suite_create("runs");
	TCase *tc = tcase_create("core");

	/* the cut and flipped sections take a while on a busy machine */
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_match);
	tcase_add_test(tc, test_collect);
	tcase_add_test(tc, test_blocks_section);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(runs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
