/*
 * Render layer tests of sampled bands (tl_sample.h, tl_groups_sampled):
 * a grouped mode's groups from replay states at chosen events are the
 * built curves' there, on real and generated files, labels and all; a
 * file whose replay disagrees with its timeline is refused; the built
 * curves replace the sampled ones. Run by check_render.c.
 */
#include "config.h"

#include "render_fix.h"
#include "render/tl_modes.h"
#include "render/tl_sample.h"
#include "replay/replay.h"
#include "util/xalloc.h"

/* ---- the curves of samples ----------------------------------------------- */

/* Samples after events -1, 3 and 9: group 0 holds 10, then 30, then
 * none (left out); group 2 none, then 5, then 7. */
START_TEST(test_render_sample_curves)
{
	static const int64_t ev[3] = {-1, 3, 9};
	static const uint64_t off[4] = {0, 1, 3, 4};
	static const struct tl_group_sample p[4] = {
		{0, 11, 10, 10, 4}, {0, 12, 30, 20, 6}, {2, 13, 5, 5, 7},
		{2, 14, 7, 4, 8}};
	static const int64_t bad_ev[3] = {-1, 9, 3};
	struct tl_groups g;
	uint32_t top[4];

	ck_assert_int_eq(tl_groups_sampled(&g, 4, ev, off, 3, p), 0);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_uint_eq(g.n_used, 2);
	ck_assert_uint_eq(tl_groups_bytes(&g, 0, -1), 10);
	ck_assert_uint_eq(tl_groups_bytes(&g, 0, 2), 10);  /* held */
	ck_assert_uint_eq(tl_groups_bytes(&g, 0, 3), 30);
	ck_assert_uint_eq(tl_groups_bytes(&g, 0, 8), 30);
	ck_assert_uint_eq(tl_groups_bytes(&g, 0, 9), 0);   /* left out */
	ck_assert_uint_eq(tl_groups_bytes(&g, 2, -1), 0);
	ck_assert_uint_eq(tl_groups_bytes(&g, 2, 3), 5);
	ck_assert_uint_eq(tl_groups_bytes(&g, 2, 100), 7);
	ck_assert_uint_eq(tl_groups_bytes(&g, 1, 3), 0);
	/* the largest element names each group */
	ck_assert_uint_eq(g.max_elem[0], 6);
	ck_assert_uint_eq(g.stack[0], 12);
	ck_assert_uint_eq(g.max_elem[2], 7);
	ck_assert_uint_eq(tl_groups_top(&g, 9, 1, top), 1);
	ck_assert_uint_eq(top[0], 2);
	tl_groups_destroy(&g);
	/* out of order, or an id past max_groups: refused, g empty */
	ck_assert_int_eq(tl_groups_sampled(&g, 4, bad_ev, off, 3, p), -1);
	ck_assert_ptr_null(g.c);
	ck_assert_int_eq(tl_groups_sampled(&g, 2, ev, off, 3, p), -1);
	ck_assert_ptr_null(g.c);
}
END_TEST

/* ---- sampled against built ----------------------------------------------- */

/* A file, its default device's timeline and replay. */
struct fix {
	struct snapshot *s;
	struct idx_timeline tl;
	struct replay *r;
};

static void
fix_open(struct fix *f, const char *rel)
{
	struct sv_error err;
	uint32_t d;

	f->s = load_data(rel);
	d = snap_default_device(f->s);
	ck_assert_int_eq(idx_timeline_build(f->s, d, &f->tl, &err), 0);
	f->r = replay_new(f->s, d, &err);
	ck_assert_msg(f->r != NULL, "%s: %s", rel, err.msg);
}

static void
fix_close(struct fix *f)
{
	replay_free(f->r);
	idx_timeline_destroy(&f->tl);
	snap_free(f->s);
}

/* Files whose replay agrees with their timeline: the real ones (blocks
 * alive since before the trace, NPU rounding, expandable segments) and
 * generated ones (pools and graphs, several streams, a leak). */
static const char *const files[] = {"real/cuda_train_one_step.pickle",
    "real/cuda_inference_forward.pickle", "real/npu_leak_expandable.pickle",
    "real/npu_leak_empty_cache.pickle", "real/npu_all_freed.pickle",
    "gen/pools.pickle", "gen/graphs.pickle", "gen/training-leak.pickle",
    "gen/expandable.pickle", "gen/wrapped.pickle", "gen/multi.pickle"};

static const int modes[] = {TL_STACK_SITE, TL_STACK_STREAM, TL_STACK_POOL,
    TL_STACK_CATEGORY};

/* The category table of f into full (built, with rules when given),
 * and m's probe, from a table begun with the same rules and freed
 * before m uses it. */
static void
cats_set_up(struct fix *f, struct tl_model *full, struct tl_model *m,
    struct an_categories *cats, const struct an_cat_rules *rules)
{
	struct an_categories begun;
	struct sv_error err;

	ck_assert_int_eq(an_categories_build(f->s, &f->tl, NULL, rules, cats,
	    &err), 0);
	tl_model_set_categories(full, cats);
	ck_assert(!tl_model_sample_able(m, TL_STACK_CATEGORY));
	ck_assert_int_eq(an_categories_begin(f->s, &f->tl, NULL, rules,
	    &begun, &err), 0);
	tl_model_set_cat_probe(m, an_cat_probe_new(&begun));
	an_categories_destroy(&begun);
	ck_assert_ptr_nonnull(m->cat_probe);
}

/* Group id in b of group g of a (TL_NO_GROUP: none): the same id in
 * the call-site mode, whose ids are its table's (two sites can share a
 * label), else the group of the same label (a stream and pool). */
static uint32_t
same_label(const struct tl_model *a, const struct tl_model *b, int st,
    uint32_t g)
{
	char la[512], lb[512];
	uint32_t h;

	tl_group_label(a, st, g, 0, 1, la, sizeof la);
	if (st == TL_STACK_SITE)
		return g < b->groups[st].n && strcmp(la, tl_group_label(b,
		    st, g, 0, 1, lb, sizeof lb)) == 0 ? g : TL_NO_GROUP;
	for (h = 0; h < b->groups[st].n; h++)
		if (strcmp(la, tl_group_label(b, st, h, 0, 1, lb,
		    sizeof lb)) == 0)
			return h;
	return TL_NO_GROUP;
}

/* Mode st sampled in m after the events of ev equals the built mode of
 * full there: every group of full with bytes at a sampled event has a
 * group of the same label with the same bytes, and the sampled groups'
 * bytes add up to the same. */
static void
check_mode(const struct tl_model *full, struct tl_model *m, int st,
    const int64_t *ev, size_t n, const char *name)
{
	const struct tl_groups *a = &full->groups[st], *b = &m->groups[st];
	uint32_t *map = xcalloc((size_t)a->n + 1, sizeof *map), g;
	uint64_t sa, sb;
	size_t i;

	for (g = 0; g < a->n; g++)
		map[g] = same_label(full, m, st, g);
	for (i = 0; i < n; i++) {
		sa = sb = 0;
		for (g = 0; g < a->n; g++) {
			uint64_t want = tl_groups_bytes(a, g, ev[i]);

			sa += want;
			if (want == 0)
				continue;
			ck_assert_msg(map[g] != TL_NO_GROUP,
			    "%s %s: group %u not sampled", name,
			    tl_stack_name(st), g);
			ck_assert_msg(tl_groups_bytes(b, map[g], ev[i]) == want,
			    "%s %s: group %u after %lld: %llu, want %llu",
			    name, tl_stack_name(st), g, (long long)ev[i],
			    (unsigned long long)tl_groups_bytes(b, map[g],
			    ev[i]), (unsigned long long)want);
		}
		for (g = 0; g < b->n; g++)
			sb += tl_groups_bytes(b, g, ev[i]);
		ck_assert_msg(sa == sb, "%s %s: after %lld %llu, want %llu",
		    name, tl_stack_name(st), (long long)ev[i],
		    (unsigned long long)sb, (unsigned long long)sa);
	}
	free(map);
}

START_TEST(test_render_sample_exact)
{
	const char *rel = files[_i];
	struct fix f;
	struct tl_model full, m;
	struct an_categories cats;
	char why[256];
	int64_t *ev;
	size_t n = 0, k;
	int moved, again;

	fix_open(&f, rel);
	/* before the first event, a spread of 97, the peak, the last */
	ev = xcalloc(100, sizeof *ev);
	ev[n++] = -1;
	for (k = 0; k < 97 && f.tl.n_events > 0; k++)
		ev[n++] = (int64_t)(f.tl.n_events * k / 97);
	if (f.tl.peak_ev >= 0)
		ev[n++] = f.tl.peak_ev;
	if (f.tl.n_events > 0)
		ev[n++] = (int64_t)f.tl.n_events - 1;
	tl_model_init(&full, f.s, &f.tl, TL_DEFAULT_DRAWN);
	tl_model_init(&m, f.s, &f.tl, TL_DEFAULT_DRAWN);
	cats_set_up(&f, &full, &m, &cats, NULL);
	for (k = 0; k < sizeof modes / sizeof modes[0]; k++) {
		int st = modes[k];

		ck_assert_int_eq(tl_model_prepare(&full, st, why, sizeof why),
		    0);
		ck_assert(tl_model_sample_able(&m, st));
		/* in two calls, the second asking for some again; the
		 * first mode reads the replay's states, the others sum
		 * the same states' blocks */
		ck_assert_msg(tl_model_sample(&m, st, f.r, ev, n / 2, 0, &moved,
		    why, sizeof why) == 0, "%s %s: %s", files[_i],
		    tl_stack_name(st), why);
		ck_assert_int_eq(moved, k == 0);
		ck_assert_int_eq(tl_model_sample(&m, st, f.r, ev, n, 0, &moved,
		    why, sizeof why), 0);
		ck_assert_int_eq(moved, k == 0);
		ck_assert_uint_le(tl_sample_count(&m, st), n);
		ck_assert(tl_groups_drawable(&m, st));
		ck_assert_int_eq(m.groups_ok[st], 0);
		check_mode(&full, &m, st, ev, n, files[_i]);
		/* all sampled: the replay is not moved again */
		again = tl_model_sample(&m, st, f.r, ev, n, 0, &moved, why,
		    sizeof why);
		ck_assert_int_eq(again, 0);
		ck_assert_int_eq(moved, 0);
	}
	tl_model_destroy(&m);
	tl_model_destroy(&full);
	an_categories_destroy(&cats);
	free(ev);
	fix_close(&f);
}
END_TEST

/* The replay's states read before any mode is sampled (the viewer does
 * while the category mode waits for its probe; with a budget, a call
 * at a time): the category mode sampled after the same events then
 * moves no replay, and its bands are the built ones, the blocks alive
 * before the trace included. */
START_TEST(test_render_sample_states)
{
	static const char *const two[] = {"real/cuda_train_one_step.pickle",
	    "gen/wrapped.pickle"};
	struct fix f;
	struct tl_model full, m;
	struct an_categories cats;
	char why[256];
	int64_t ev[40];
	int moved, rc, calls = 0, k;

	fix_open(&f, two[_i]);
	for (k = 0; k < 40; k++)
		ev[k] = (int64_t)(f.tl.n_events * (uint64_t)k / 40) - 1;
	tl_model_init(&full, f.s, &f.tl, TL_DEFAULT_DRAWN);
	tl_model_init(&m, f.s, &f.tl, TL_DEFAULT_DRAWN);
	do {
		rc = tl_model_sample_states(&m, f.r, ev, 40, 1, &moved, why,
		    sizeof why);
		ck_assert_int_ge(rc, 0);
		ck_assert_int_eq(moved, 1);
	} while (rc == 1 && ++calls < 100);
	ck_assert_int_eq(calls, 39);
	ck_assert_int_eq(tl_model_sample_states(&m, f.r, ev, 40, 1, &moved,
	    why, sizeof why), 0);
	ck_assert_int_eq(moved, 0);
	ck_assert(!tl_groups_drawable(&m, TL_STACK_CATEGORY));
	cats_set_up(&f, &full, &m, &cats, NULL);
	ck_assert_int_eq(tl_model_prepare(&full, TL_STACK_CATEGORY, why,
	    sizeof why), 0);
	ck_assert_int_eq(tl_model_sample(&m, TL_STACK_CATEGORY, f.r, ev, 40, 0,
	    &moved, why, sizeof why), 0);
	ck_assert_int_eq(moved, 0);
	check_mode(&full, &m, TL_STACK_CATEGORY, ev, 40, two[_i]);
	/* the table comes (the viewer lends it before it adopts the
	 * bands): the samples stay until the bands are built, and then go
	 * with the probe */
	tl_model_set_categories(&m, &cats);
	ck_assert(tl_groups_drawable(&m, TL_STACK_CATEGORY));
	check_mode(&full, &m, TL_STACK_CATEGORY, ev, 40, two[_i]);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_CATEGORY, why,
	    sizeof why), 0);
	ck_assert_int_eq(m.groups_sampled[TL_STACK_CATEGORY], 0);
	ck_assert_ptr_null(m.cat_probe);
	check_mode(&full, &m, TL_STACK_CATEGORY, ev, 40, two[_i]);
	tl_model_destroy(&m);
	tl_model_destroy(&full);
	an_categories_destroy(&cats);
	fix_close(&f);
}
END_TEST

/* With a time budget each call samples one event at least and says
 * when some are left; the calls until none is left give the groups one
 * call gives. */
START_TEST(test_render_sample_budget)
{
	const char *rel = "gen/pools.pickle";
	struct fix f;
	struct tl_model full, m;
	char why[256];
	int64_t ev[41];
	int moved, rc, calls = 0, k;

	fix_open(&f, rel);
	/* 40 events, the last one twice */
	for (k = 0; k < 40; k++)
		ev[k] = (int64_t)(f.tl.n_events * (uint64_t)k / 40);
	ev[40] = ev[39];
	tl_model_init(&full, f.s, &f.tl, TL_DEFAULT_DRAWN);
	tl_model_init(&m, f.s, &f.tl, TL_DEFAULT_DRAWN);
	ck_assert_int_eq(tl_model_prepare(&full, TL_STACK_STREAM, why,
	    sizeof why), 0);
	do {
		rc = tl_model_sample(&m, TL_STACK_STREAM, f.r, ev, 41, 1,
		    &moved, why, sizeof why);
		ck_assert_int_ge(rc, 0);
		ck_assert_int_eq(moved, 1);
		calls++;
		ck_assert_uint_eq(tl_sample_count(&m, TL_STACK_STREAM),
		    (size_t)calls);
	} while (rc == 1 && calls < 100);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(calls, 40);
	check_mode(&full, &m, TL_STACK_STREAM, ev, 41, "budget");
	tl_model_destroy(&m);
	tl_model_destroy(&full);
	fix_close(&f);
}
END_TEST

/* A file whose frees and allocations do not add up: where the replay's
 * live bytes are not the timeline's, the mode is not sampled, and says
 * so from then on. */
START_TEST(test_render_sample_refused)
{
	const char *rel = "real/synthetic_inconsistent.pickle";
	struct fix f;
	struct tl_model m;
	char why[256];
	int64_t ev, *all;
	int moved, refused = 0;

	fix_open(&f, rel);
	tl_model_init(&m, f.s, &f.tl, TL_DEFAULT_DRAWN);
	all = xcalloc(f.tl.n_events + 1, sizeof *all);
	for (ev = -1; ev < (int64_t)f.tl.n_events; ev++)
		all[ev + 1] = ev;
	if (tl_model_sample(&m, TL_STACK_SITE, f.r, all, f.tl.n_events + 1,
	    0, &moved, why, sizeof why) != 0)
		refused = 1;
	ck_assert_msg(refused, "every state agrees with the timeline");
	ck_assert_msg(strstr(why, "not the timeline's") != NULL ||
	    strstr(why, "no allocation of the timeline") != NULL, "%s", why);
	ck_assert(!tl_model_sample_able(&m, TL_STACK_SITE));
	ck_assert(!tl_groups_drawable(&m, TL_STACK_SITE));
	/* the states disagree for every mode */
	ck_assert(!tl_model_sample_able(&m, TL_STACK_STREAM));
	ck_assert_int_eq(tl_model_sample_states(&m, f.r, all, 1, 0, &moved,
	    why, sizeof why), -1);
	ck_assert_int_eq(tl_model_sample(&m, TL_STACK_SITE, f.r, all, 1, 0,
	    &moved, why, sizeof why), -1);
	ck_assert_int_eq(moved, 0);
	/* the category mode needs the whole trace's phases: not sampled
	 * without its probe; nor the segment mode */
	ck_assert(!tl_model_sample_able(&m, TL_STACK_CATEGORY));
	ck_assert_int_eq(tl_model_sample(&m, TL_STACK_CATEGORY, f.r, all, 1,
	    0, &moved, why, sizeof why), -1);
	ck_assert(!tl_model_sample_able(&m, TL_STACK_SEGMENT));
	free(all);
	tl_model_destroy(&m);
	fix_close(&f);
}
END_TEST

/* The built curves, built away from the model as the viewer's worker
 * builds them, replace the sampled ones (each array freed once: ASan),
 * and are what a build on the model gives; so do curves built on the
 * model itself after samples (a viewer whose worker ended first). */
START_TEST(test_render_sample_adopted)
{
	const char *rel = "gen/pools.pickle";
	struct fix f;
	struct tl_model m, full;
	struct tl_prep p;
	char why[256];
	int64_t ev[3];
	int moved, k;

	fix_open(&f, rel);
	ev[0] = 0;
	ev[1] = (int64_t)f.tl.n_events / 2;
	ev[2] = f.tl.peak_ev;
	tl_model_init(&m, f.s, &f.tl, TL_DEFAULT_DRAWN);
	tl_prep_begin(&p, &m, TL_STACK_SITE, NULL);
	for (k = 0; k < 3; k++)
		ck_assert_int_eq(tl_model_sample(&m, modes[k], f.r, ev, 3,
		    0, &moved, why, sizeof why), 0);
	ck_assert_int_eq(tl_prep_build(&p), 0);
	ck_assert_int_eq(tl_model_adopt(&m, &p, why, sizeof why), 0);
	tl_prep_destroy(&p);
	tl_model_init(&full, f.s, &f.tl, TL_DEFAULT_DRAWN);
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(m.groups_ok[modes[k]], 1);
		ck_assert_int_eq(m.groups_sampled[modes[k]], 0);
		ck_assert_uint_eq(tl_sample_count(&m, modes[k]), 0);
		ck_assert(!tl_model_sample_able(&m, modes[k]));
		ck_assert_int_eq(tl_model_prepare(&full, modes[k], why,
		    sizeof why), 0);
		ck_assert_uint_eq(m.groups[modes[k]].n,
		    full.groups[modes[k]].n);
		check_mode(&full, &m, modes[k], ev, 3, "adopted");
	}
	tl_model_destroy(&m);
	tl_model_init(&m, f.s, &f.tl, TL_DEFAULT_DRAWN);
	for (k = 0; k < 3; k++)
		ck_assert_int_eq(tl_model_sample(&m, modes[k], f.r, ev, 3,
		    0, &moved, why, sizeof why), 0);
	ck_assert_int_eq(tl_model_prepare(&m, TL_STACK_SITE, why,
	    sizeof why), 0);
	for (k = 0; k < 3; k++) {
		ck_assert_int_eq(m.groups_ok[modes[k]], 1);
		ck_assert_int_eq(m.groups_sampled[modes[k]], 0);
		ck_assert_uint_eq(m.groups[modes[k]].n_used,
		    full.groups[modes[k]].n_used);
		check_mode(&full, &m, modes[k], ev, 3, "built on it");
	}
	tl_model_destroy(&full);
	tl_model_destroy(&m);
	fix_close(&f);
}
END_TEST

void
render_sample_tests(TCase *tl)
{
	tcase_add_test(tl, test_render_sample_curves);
	tcase_add_loop_test(tl, test_render_sample_exact, 0,
	    (int)(sizeof files / sizeof files[0]));
	tcase_add_test(tl, test_render_sample_budget);
	tcase_add_loop_test(tl, test_render_sample_states, 0, 2);
	tcase_add_test(tl, test_render_sample_refused);
	tcase_add_test(tl, test_render_sample_adopted);
}
