/*
 * Unit tests of the rank set's pieces: the summary against the timeline
 * it comes from (samples, steps, the leak suspect of the generated
 * training-leak fixture against its truth), the section an index build
 * writes against the summary of the index's own timelines, its encoding
 * (a round trip;
 * every cut and every flipped byte of an encoding refused or read
 * within its bounds), the shared axis (by step: the same step of two
 * traces in the same place; every event in exactly one column), the
 * sparkline's peak mark, ranks from file names, and the report's median
 * and skew; the summary read through the pyramid against the one read
 * event by event, on every committed snapshot.
 */
#include "config.h"

#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/rankset.h"
#include "analysis/summary.h"
#include "index/idx.h"
#include "index/idx_lod.h"
#include "index/idx_timeline.h"
#include "render/align.h"
#include "render/cellbuf.h"
#include "render/rankview.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

#define FIXTURE TOP_SRCDIR "/tests/data/gen/training-leak.pickle"

static struct snapshot *
load_fixture(void)
{
	struct snapshot *s = NULL;
	struct sv_error err;

	sv_error_clear(&err);
	ck_assert_msg(snap_load_file(FIXTURE, NULL, &s, &err) == 0, "%s",
	    err.msg);
	return s;
}

START_TEST(test_summary_matches_timeline)
{
	struct snapshot *s = load_fixture();
	struct an_summary sum;
	struct idx_timeline tl;
	struct sv_error err;
	const struct an_sum_dev *d;
	uint64_t e, hi = 0, res_hi;
	uint32_t k;

	sv_error_clear(&err);
	ck_assert_int_eq(an_summary_build(s, &sum, &err), 0);
	ck_assert_uint_eq(sum.n_dev, 1);
	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, &err), 0);
	d = an_summary_dev(&sum, 0);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->events, tl.n_events);
	ck_assert_uint_eq(d->peak, tl.peak);
	ck_assert_int_eq(d->peak_ev, tl.peak_ev);
	ck_assert_uint_eq(d->n_spark, tl.n_events < AN_SUM_SPARK ?
	    tl.n_events : AN_SUM_SPARK);
	/* each sample is the highest total of its events, to 1/65535 of
	 * the peak, and some sample is the peak itself */
	for (k = 0; k < d->n_spark; k++) {
		int64_t e0, e1;
		uint64_t best = 0, v = an_sum_spark_value(d, k);

		an_sum_sample_events(d, k, &e0, &e1);
		ck_assert_int_le(e0, e1);
		if (k > 0) {
			int64_t p0, p1;

			an_sum_sample_events(d, k - 1, &p0, &p1);
			ck_assert_int_eq(p1 + 1, e0);
		}
		for (e = (uint64_t)e0; e <= (uint64_t)e1; e++)
			if (idx_tl_total(&tl, (int64_t)e) > best)
				best = idx_tl_total(&tl, (int64_t)e);
		ck_assert_uint_le(v, best);
		ck_assert_uint_le(best - v, tl.peak / AN_SUM_Q + 1);
		if (v > hi)
			hi = v;
	}
	ck_assert_uint_eq(hi, tl.peak);
	ck_assert_uint_eq(an_sum_spark_range(d, 0, (int64_t)tl.n_events),
	    tl.peak);
	/* the most reserved, and the end */
	res_hi = tl.base_reserved;
	for (e = 0; e < tl.n_events; e++)
		if (idx_tl_reserved(&tl, (int64_t)e) > res_hi)
			res_hi = idx_tl_reserved(&tl, (int64_t)e);
	ck_assert_uint_eq(d->reserved_max, res_hi);
	ck_assert_uint_eq(d->allocated_end,
	    idx_tl_total(&tl, (int64_t)tl.n_events - 1));
	/* four ProfilerStep steps, the planted leak grows in each */
	ck_assert_uint_eq(d->n_steps, 4);
	ck_assert_uint_eq(d->n_kept, 4);
	ck_assert(d->flags & AN_SUM_F_JUDGED);
	ck_assert_ptr_nonnull(strstr(d->leak_site, "metrics/tracker.py:47"));
	ck_assert_uint_eq(d->leak_per_step, 160000);
	ck_assert_uint_eq(d->leak_steps, 4);
	ck_assert(d->top_site[0] != '\0');
	ck_assert_uint_le(d->top_bytes, d->peak);
	idx_timeline_destroy(&tl);
	an_summary_destroy(&sum);
	snap_free(s);
}
END_TEST

static void
assert_same(const struct an_sum_dev *a, const struct an_sum_dev *b)
{
	ck_assert_uint_eq(a->device, b->device);
	ck_assert_uint_eq(a->flags, b->flags);
	ck_assert_uint_eq(a->events, b->events);
	ck_assert_uint_eq(a->peak, b->peak);
	ck_assert_int_eq(a->peak_ev, b->peak_ev);
	ck_assert_int_eq(a->peak_time, b->peak_time);
	ck_assert_int_eq(a->peak_step, b->peak_step);
	ck_assert_uint_eq(a->reserved_max, b->reserved_max);
	ck_assert_uint_eq(a->waste, b->waste);
	ck_assert_uint_eq(a->ooms, b->ooms);
	ck_assert_str_eq(a->top_site, b->top_site);
	ck_assert_str_eq(a->leak_site, b->leak_site);
	ck_assert_uint_eq(a->leak_per_step, b->leak_per_step);
	ck_assert_uint_eq(a->n_spark, b->n_spark);
	ck_assert_mem_eq(a->spark, b->spark, a->n_spark * sizeof *a->spark);
	ck_assert_uint_eq(a->n_kept, b->n_kept);
	ck_assert_mem_eq(a->steps, b->steps, a->n_kept * sizeof *a->steps);
	ck_assert_uint_eq(a->counts.events, b->counts.events);
	ck_assert_mem_eq(a->counts.by_action, b->counts.by_action,
	    sizeof a->counts.by_action);
	ck_assert_uint_eq(a->counts.streams, b->counts.streams);
	ck_assert_int_eq(a->counts.has_time, b->counts.has_time);
	ck_assert_int_eq(a->counts.time_first, b->counts.time_first);
	ck_assert_int_eq(a->counts.time_last, b->counts.time_last);
}

START_TEST(test_encoding)
{
	struct snapshot *s = load_fixture();
	struct an_summary sum, back;
	struct sv_error err;
	uint8_t *data, *bad;
	size_t len, i;
	char why[128];
	unsigned b;

	sv_error_clear(&err);
	ck_assert_int_eq(an_summary_build(s, &sum, &err), 0);
	an_summary_encode(&sum, &data, &len);
	ck_assert_int_eq(an_summary_decode(data, len, &back, why, sizeof why),
	    0);
	ck_assert_uint_eq(back.n_dev, sum.n_dev);
	assert_same(&sum.dev[0], &back.dev[0]);
	an_summary_destroy(&back);
	/* a cut anywhere is refused, with a reason */
	for (i = 0; i < len; i++) {
		why[0] = '\0';
		ck_assert_int_eq(an_summary_decode(data, i, &back, why,
		    sizeof why), -1);
		ck_assert(why[0] != '\0');
		ck_assert_uint_eq(back.n_dev, 0);
	}
	/* a changed byte is refused, or read with every bound kept */
	bad = xmalloc(len);
	for (i = 0; i < len; i++)
		for (b = 1; b < 256; b <<= 2) {
			memcpy(bad, data, len);
			bad[i] ^= (uint8_t)b;
			if (an_summary_decode(bad, len, &back, why,
			    sizeof why) != 0)
				continue;
			ck_assert_uint_le(back.n_dev, AN_SUM_MAX_DEVICES);
			ck_assert_uint_le(back.dev[0].n_spark, AN_SUM_SPARK);
			ck_assert_uint_le(back.dev[0].n_spark,
			    back.dev[0].events);
			ck_assert_int_lt(back.dev[0].peak_ev,
			    (int64_t)back.dev[0].events);
			ck_assert_uint_le(strlen(back.dev[0].top_site),
			    AN_SUM_LABEL_MAX);
			an_summary_destroy(&back);
		}
	free(bad);
	free(data);
	an_summary_destroy(&sum);
	snap_free(s);
}
END_TEST

/* The section the builder wrote and the summary computed from the
 * index's own timelines agree. */
START_TEST(test_index_paths_agree)
{
	char dir[] = "/tmp/check_ranks.XXXXXX", cmd[64];
	struct idx_section_builder sec[1];
	struct idx_opts io;
	struct sv_index *ix;
	struct sv_error err;
	struct an_summary a, b;
	const uint8_t *data;
	size_t len;
	char why[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	memset(&io, 0, sizeof io);
	sec[0] = an_summary_section;
	io.cache_dir = dir;
	io.sections = sec;
	io.n_sections = 1;
	sv_error_clear(&err);
	ck_assert_msg(idx_open(FIXTURE, &io, &ix, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(idx_section(ix, AN_SUM_SECTION, &data, &len), 0);
	ck_assert_int_eq(an_summary_decode(data, len, &a, why, sizeof why), 0);
	ck_assert_int_eq(an_summary_from_index(ix, &b, &err), 0);
	ck_assert_uint_eq(a.n_dev, b.n_dev);
	assert_same(&a.dev[0], &b.dev[0]);
	/* stats from the stored counts, reading no event, is stats */
	{
		const struct snapshot *s = idx_snapshot(ix);
		uint32_t d = a.dev[0].device;
		const struct idx_timeline *tl = idx_timeline(ix, d);
		struct an_stats x, y;

		ck_assert_uint_gt(a.dev[0].counts.events, 0);
		ck_assert_uint_gt(a.dev[0].counts.streams, 0);
		an_stats_with(s, d, tl, &a.dev[0].counts, &x);
		an_stats(s, d, tl, &y);
		ck_assert_mem_eq(&x, &y, sizeof x);
		/* counts of another event count are not used */
		a.dev[0].counts.events++;
		a.dev[0].counts.by_action[0]++;
		an_stats_with(s, d, tl, &a.dev[0].counts, &x);
		ck_assert_mem_eq(&x, &y, sizeof x);
	}
	an_summary_destroy(&a);
	an_summary_destroy(&b);
	idx_close(ix);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The summary taken through an index's pyramid (samples and the reserved
 * maximum as range queries) is the one read event by event, on every
 * committed snapshot and device. */
START_TEST(test_summary_pyramid)
{
	char dir[] = "/tmp/check_ranks.XXXXXX", cmd[64];
	const char *pats[] = {TOP_SRCDIR "/tests/data/gen/*.pickle",
	    TOP_SRCDIR "/tests/data/real/*.pickle",
	    TOP_SRCDIR "/tests/data/demo.pickle"};
	unsigned p, fast = 0, files = 0;
	size_t f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (p = 0; p < sizeof pats / sizeof pats[0]; p++) {
		glob_t g;

		if (glob(pats[p], 0, NULL, &g) != 0)
			continue;
		for (f = 0; f < g.gl_pathc; f++) {
			struct idx_opts io;
			struct sv_index *ix;
			struct sv_error err;
			const struct snapshot *s;
			uint32_t d;

			memset(&io, 0, sizeof io);
			io.cache_dir = dir;
			sv_error_clear(&err);
			if (idx_open(g.gl_pathv[f], &io, &ix, &err) != 0)
				continue; /* a file the index refuses */
			files++;
			s = idx_snapshot(ix);
			for (d = 0; d < snap_device_count(s); d++) {
				const struct idx_timeline *tl =
				    idx_timeline(ix, d);
				const struct idx_lod *lod = idx_lod(ix, d);
				struct an_sum_dev a, b;

				if (tl == NULL || !snap_device_has_data(s, d))
					continue;
				fast += lod != NULL && lod->n_levels > 0 &&
				    lod->n_events == tl->n_events &&
				    tl->n_events > 0;
				ck_assert_int_eq(an_summary_device(s, tl, lod,
				    NULL, &a, &err), 0);
				ck_assert_int_eq(an_summary_device(s, tl, NULL,
				    NULL, &b, &err), 0);
				assert_same(&a, &b);
				ck_assert_int_eq(a.reserved_max_ev,
				    b.reserved_max_ev);
				ck_assert_uint_eq(a.reserved_end,
				    b.reserved_end);
				ck_assert_uint_eq(a.allocated_end,
				    b.allocated_end);
				{
					struct an_summary x, y;
					uint8_t *ex, *ey;
					size_t lx, ly;

					x.n_dev = y.n_dev = 1;
					x.dev = xmalloc(sizeof a);
					y.dev = xmalloc(sizeof b);
					x.dev[0] = a;
					y.dev[0] = b;
					an_summary_encode(&x, &ex, &lx);
					an_summary_encode(&y, &ey, &ly);
					ck_assert_uint_eq(lx, ly);
					ck_assert_mem_eq(ex, ey, lx);
					free(ex);
					free(ey);
					an_summary_destroy(&x);
					an_summary_destroy(&y);
				}
			}
			idx_close(ix);
		}
		globfree(&g);
	}
	ck_assert_uint_ge(files, 20);
	ck_assert_uint_ge(fast, 20);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_align_steps)
{
	/* A: 10 events before its steps, steps 10..19, 20..49; B: steps
	 * 0..99, 100..109 and 20 events after them */
	struct an_sum_step sa[] = {{10, 19}, {20, 49}};
	struct an_sum_step sb[] = {{0, 99}, {100, 109}};
	struct align_trace t[2] = {{50, sa, 2}, {130, sb, 2}};
	struct align a;
	int w = 37, c, x;
	int64_t e0, e1, next;

	align_init(&a, t, 2, 1);
	ck_assert(a.by_step);
	ck_assert_int_eq(a.pre, 1);
	ck_assert_uint_eq(a.units, 4); /* pre, 2 steps, post */
	/* step k starts at unit pre + k in both */
	ck_assert(align_pos(&a, &t[0], 10) == 0.25);
	ck_assert(align_pos(&a, &t[1], 0) == 0.25);
	ck_assert(align_pos(&a, &t[0], 20) == 0.5);
	ck_assert(align_pos(&a, &t[1], 100) == 0.5);
	ck_assert(align_pos(&a, &t[1], 110) == 0.75);
	ck_assert(align_pos(&a, &t[0], 0) == 0);
	/* every event in exactly one column, in order */
	for (x = 0; x < 2; x++) {
		next = 0;
		for (c = 0; c < w; c++) {
			align_col_events(&a, &t[x], c, w, &e0, &e1);
			if (e1 < e0)
				continue;
			ck_assert_int_eq(e0, next);
			ck_assert_int_eq(align_col(&a, &t[x], e0, w), c);
			ck_assert_int_eq(align_col(&a, &t[x], e1, w), c);
			next = e1 + 1;
		}
		ck_assert_int_eq(next, (int64_t)t[x].events);
	}
	/* a trace with no steps: by position for all */
	t[1].n_steps = 0;
	align_init(&a, t, 2, 1);
	ck_assert(!a.by_step);
	ck_assert(align_pos(&a, &t[1], 65) == 0.5);
}
END_TEST

START_TEST(test_sparkline_peak)
{
	struct snapshot *s = load_fixture();
	struct an_summary sum;
	struct sv_error err;
	struct align_trace t;
	struct align a;
	struct rv_cols cols;
	struct cellbuf cb;
	const struct an_sum_dev *d;
	int x, marked = 0;

	sv_error_clear(&err);
	ck_assert_int_eq(an_summary_build(s, &sum, &err), 0);
	d = &sum.dev[0];
	t.events = d->events;
	t.steps = d->steps;
	t.n_steps = d->n_kept;
	align_init(&a, &t, 1, 1);
	rv_cols_init(&cols, 40);
	rv_cols_summary(&cols, &a, &t, d);
	ck_assert_int_eq(cols.peak, align_col(&a, &t, d->peak_ev, 40));
	ck_assert_uint_eq(cols.val[cols.peak], d->peak);
	cellbuf_init(&cb, 42, 1);
	rv_sparkline(&cb, 1, 0, &cols, d->peak, 1);
	for (x = 0; x < 42; x++) {
		const struct cell *c = cellbuf_at(&cb, x, 0);

		if (c->color == UIC_MARK && (c->attr & CB_A_REVERSE)) {
			marked++;
			ck_assert_int_eq(x, cols.peak + 1);
			ck_assert_uint_eq(c->ch, 0x2588);
		}
		/* every column with events shows a glyph */
		if (x >= 1 && x < 41 && cols.has[x - 1])
			ck_assert_uint_ne(c->ch, ' ');
	}
	ck_assert_int_eq(marked, 1);
	cellbuf_destroy(&cb);
	rv_cols_free(&cols);
	an_summary_destroy(&sum);
	snap_free(s);
}
END_TEST

START_TEST(test_rank_of)
{
	ck_assert_int_eq(an_rankset_rank_of("rank0.pickle"), 0);
	ck_assert_int_eq(an_rankset_rank_of("/a/rank7/x_rank12.pickle"), 12);
	ck_assert_int_eq(an_rankset_rank_of("run1-rank_3.pkl"), 3);
	ck_assert_int_eq(an_rankset_rank_of("snapshot_RANK-15.pickle"), 15);
	ck_assert_int_eq(an_rankset_rank_of("rank.pickle"), -1);
	ck_assert_int_eq(an_rankset_rank_of("ranking3.pickle"), -1);
	ck_assert_int_eq(an_rankset_rank_of("dir_rank3/snap.pickle"), -1);
	ck_assert_int_eq(an_rankset_rank_of("rank1x2.pickle"), 1);
}
END_TEST

/* A set of n members with the given peaks, loaded by hand. */
static void
fake_set(struct an_rankset *rs, const uint64_t *peaks, size_t n)
{
	size_t i;

	memset(rs, 0, sizeof *rs);
	rs->m = xcalloc(n, sizeof *rs->m);
	rs->n = n;
	for (i = 0; i < n; i++) {
		struct an_rs_member *m = &rs->m[i];

		m->path = xstrdup("x.pickle");
		m->rank = (int64_t)i;
		m->state = AN_RS_OK;
		m->sum.n_dev = 1;
		m->sum.dev = xcalloc(1, sizeof *m->sum.dev);
		m->sum.dev[0].peak = peaks[i];
		m->sum.dev[0].top_site = xstrdup("");
		m->sum.dev[0].leak_site = xstrdup("");
	}
}

START_TEST(test_report)
{
	static const uint64_t odd[] = {100, 300, 200, 130, 120};
	static const uint64_t even[] = {100, 101, 102, 103};
	struct an_rankset rs;
	struct an_rs_report rp;
	char words[512];

	fake_set(&rs, odd, 5);
	rs.m[4].state = AN_RS_FAILED;
	an_rankset_report(&rs, -1, &rp);
	ck_assert_uint_eq(rp.n_rows, 4);
	ck_assert_uint_eq(rp.n_failed, 1);
	ck_assert_uint_eq(rs.m[rp.rows[0].member].rank, 1);
	ck_assert_uint_eq(rp.median, 165); /* of 100 130 200 300 */
	an_rankset_skew_text(&rs, &rp, words, sizeof words);
	ck_assert_msg(strstr(words, "Rank 1 peaked highest") != NULL, "%s",
	    words);
	an_rankset_report_free(&rp);
	an_rankset_free(&rs);

	fake_set(&rs, even, 4);
	an_rankset_report(&rs, -1, &rp);
	ck_assert_uint_eq(rp.median, 101); /* (101 + 102) / 2, rounded down */
	an_rankset_skew_text(&rs, &rp, words, sizeof words);
	ck_assert_msg(strstr(words, "within 5% of the median") != NULL, "%s",
	    words);
	ck_assert_uint_eq(rs.m[rp.rows[0].member].rank, 3);
	an_rankset_report_free(&rp);
	an_rankset_report(&rs, 5, &rp); /* no such device */
	ck_assert_uint_eq(rp.n_rows, 0);
	an_rankset_report_free(&rp);
	an_rankset_free(&rs);
}
END_TEST

static Suite *
ranks_suite(void)
{
	Suite *s = suite_create("ranks");
	TCase *tc = tcase_create("core");

	/* the fuzzed decodes take a while on a busy machine: no limit */
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_summary_matches_timeline);
	tcase_add_test(tc, test_encoding);
	tcase_add_test(tc, test_index_paths_agree);
	tcase_add_test(tc, test_summary_pyramid);
	tcase_add_test(tc, test_align_steps);
	tcase_add_test(tc, test_sparkline_peak);
	tcase_add_test(tc, test_rank_of);
	tcase_add_test(tc, test_report);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(ranks_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
