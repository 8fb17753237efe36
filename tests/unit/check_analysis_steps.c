/*
 * Unit tests of the steps (src/analysis/steps.c): profiler and optimizer
 * annotations, malformed ones, the repeated pattern, a loop or layers
 * that are no steps, the real files, a stop, the cursor and the time
 * search over steps. Run by check_analysis.c.
 */
#include "config.h"

#include "analysis_fix.h"

/* ---- steps ------------------------------------------------------------- */

/* n events alloc/free of one stack, time = event number. */
static struct snapshot *
build_timed(int n)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t f = frame(s, "/home/a/train.py", "step", 1);
	uint32_t st = snap_intern_stack(s, &f, 1);
	uint64_t ev;
	int i;

	for (i = 0; i < n; i++) {
		ev = snap_trace_push(s, t, i % 2 ? SNAP_FREE_COMPLETED
		    : SNAP_ALLOC, 0x1000000, 512, 0, st);
		snap_trace_set_time(t, ev, i);
	}
	return s;
}

START_TEST(test_steps_annotations)
{
	struct snapshot *s = build_timed(20);
	struct an_steps st;

	annotate(s, "ProfilerStep#1", SNAP_STAGE_START, 2);
	annotate(s, "ProfilerStep#1", SNAP_STAGE_END, 4);
	annotate(s, "ProfilerStep#2", SNAP_STAGE_START, 5);
	annotate(s, "ProfilerStep#2", SNAP_STAGE_END, 7);
	annotate(s, "Optimizer.step#SGD.step", SNAP_STAGE_START, 3);
	annotate(s, "Optimizer.step#SGD.step", SNAP_STAGE_END, 4);
	snap_finish(s);
	ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
	ck_assert_int_eq(st.source, AN_STEPS_PROFILER);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_int_eq(st.steps[0].first, 2);
	ck_assert_int_eq(st.steps[0].last, 4);
	ck_assert_int_eq(st.steps[1].first, 5);
	ck_assert_int_eq(st.steps[1].last, 7);
	ck_assert_int_eq(an_step_at(&st, 6), 1);
	ck_assert_int_eq(an_step_at(&st, 1), -1);
	ck_assert_int_eq(an_step_at(&st, 9), -1);
	/* the optimizer window is kept for phases */
	ck_assert_uint_eq(st.n_opt, 1);
	ck_assert_int_eq(an_window_at(st.opt, st.n_opt, 4), 0);
	ck_assert_uint_eq(st.n_bad, 0);
	an_steps_destroy(&st);
	snap_free(s);
}
END_TEST

/* Optimizer windows over a trace with equal and missing times, paired
 * from many annotations whose times jump by a little or a lot (and stay
 * put): each bound is the event a scan of every event finds. */
START_TEST(test_steps_many_windows)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t f = frame(s, "/home/a/train.py", "step", 1);
	uint32_t stk = snap_intern_stack(s, &f, 1);
	const int n = 6000;
	int64_t time = -5, want_first, want_last, tm[2];
	uint64_t rng = 11, ev, k;
	struct an_steps st;
	int i, w, nw = 0;

	for (i = 0; i < n; i++) {
		ev = snap_trace_push(s, t, i % 2 ? SNAP_FREE_COMPLETED
		    : SNAP_ALLOC, 0x1000000, 512, 0, stk);
		/* three events a time, even times only */
		snap_trace_set_time(t, ev, (i / 3) * 2);
	}
	while (time < 2 * (n / 3) + 40) {
		for (w = 0; w < 2; w++) {
			rng = rng * 6364136223846793005ull + 1;
			k = rng >> 33;
			/* stay, step a little, or jump far */
			time += k % 4 == 0 ? 0 : k % 4 == 1 ? (int64_t)(k % 7)
			    : (int64_t)(k % 900);
			annotate(s, "Optimizer.step#SGD.step", w == 0 ?
			    SNAP_STAGE_START : SNAP_STAGE_END, time);
		}
		nw++;
	}
	snap_finish(s);
	ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
	ck_assert_uint_eq(st.n_bad, 0);
	ck_assert_uint_eq(st.n_opt, (uint64_t)nw);
	for (k = 0; k < st.n_opt; k++) {
		/* the annotations' times, back from the snapshot */
		tm[0] = s->annotations[2 * k].time_us;
		tm[1] = s->annotations[2 * k + 1].time_us;
		want_first = n;
		want_last = -1;
		for (i = 0; i < n; i++) {
			if (want_first == n && (i / 3) * 2 >= tm[0])
				want_first = i;
			if ((i / 3) * 2 <= tm[1])
				want_last = i;
		}
		ck_assert_int_eq(st.opt[k].first, want_first);
		ck_assert_int_eq(st.opt[k].last, want_last);
	}
	an_steps_destroy(&st);
	snap_free(s);
}
END_TEST

START_TEST(test_steps_optimizer_and_bad)
{
	struct snapshot *s = build_timed(20);
	const char *n = "Optimizer.step#AdamW.step";
	struct an_steps st;

	annotate(s, n, SNAP_STAGE_END, 5);	/* the trace began inside */
	annotate(s, n, SNAP_STAGE_END, 8);	/* END without a START */
	annotate(s, n, SNAP_STAGE_START, SNAP_NO_TIME);
	annotate(s, n, SNAP_STAGE_OTHER, 9);
	annotate(s, n, SNAP_STAGE_START, 10);
	annotate(s, n, SNAP_STAGE_START, 11);	/* still open */
	annotate(s, n, SNAP_STAGE_END, 3);	/* backwards */
	annotate(s, n, SNAP_STAGE_END, 12);
	annotate(s, n, SNAP_STAGE_START, 15);	/* the trace ends inside */
	snap_finish(s);
	ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
	ck_assert_int_eq(st.source, AN_STEPS_OPTIMIZER);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_int_eq(st.steps[0].first, 0);
	ck_assert_int_eq(st.steps[0].last, 5);
	ck_assert_int_eq(st.steps[1].first, 6);
	ck_assert_int_eq(st.steps[1].last, 12);
	ck_assert_uint_eq(st.n_bad, 5);
	ck_assert_str_eq(st.bad, "annotation 1 (Optimizer.step#AdamW.step): "
	    "END without a START; ignored");
	/* windows: [0,5], [10,12] and the open one to the end */
	ck_assert_uint_eq(st.n_opt, 3);
	ck_assert_int_eq(st.opt[2].first, 15);
	ck_assert_int_eq(st.opt[2].last, 19);
	an_steps_destroy(&st);
	snap_free(s);
}
END_TEST

/* Annotations but no time_us in the trace: no annotation steps; the
 * trace repeats six times (a temporary and a kept block per step). */
START_TEST(test_steps_no_time)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t f = frame(s, "/home/a/train.py", "step", 1);
	uint32_t g = frame(s, "/home/a/metrics.py", "collect", 2);
	uint32_t a = snap_intern_stack(s, &f, 1);
	uint32_t b = snap_intern_stack(s, &g, 1);
	struct an_steps st;
	int i;

	for (i = 0; i < 6; i++) {
		uint64_t addr = 0x10000000 + (uint64_t)i * 0x100000;

		snap_trace_push(s, t, SNAP_ALLOC, 0x1000, 512, 0, a);
		snap_trace_push(s, t, SNAP_ALLOC, addr, 512, 0, b);
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x1000, 512, 0, a);
	}
	annotate(s, "ProfilerStep#1", SNAP_STAGE_START, 1);
	snap_finish(s);
	ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
	ck_assert(st.no_time);
	ck_assert_int_eq(st.source, AN_STEPS_PATTERN);
	ck_assert_uint_eq(st.n, 6);
	ck_assert_int_eq(st.steps[1].first, 3);
	ck_assert_int_eq(st.steps[5].last, 17);
	an_steps_destroy(&st);
	snap_free(s);
}
END_TEST

/* Six steps of n allocations each, from sites stacks of one frame: the
 * first of a step from a site of its own, the others a scramble of the
 * rest, the same in every step. No annotations: the steps can only be
 * found in the repetition. */
static struct snapshot *
build_repeats(uint64_t n, uint32_t sites)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t *stk = xmalloc(((size_t)sites + 1) * sizeof *stk);
	uint64_t i;
	uint32_t k;

	for (k = 0; k <= sites; k++) {
		uint32_t f = frame(s, "/home/a/train.py", "step",
		    (uint64_t)k + 1);

		stk[k] = snap_intern_stack(s, &f, 1);
	}
	for (k = 0; k < 6; k++)
		for (i = 0; i < n; i++)
			snap_trace_push(s, t, SNAP_ALLOC, 0x10000000 + i * 512,
			    512, 0, i == 0 ? stk[sites] :
			    stk[(i * 2654435761u >> 7) % sites]);
	snap_finish(s);
	free(stk);
	return s;
}

/* Steps from the trace's repetition with the allocation keys in a
 * temporary file (an_steps_set_keys_heap_max): six steps of 2^19
 * allocations each, enough for pages to be given back as the keys are
 * written and read; the steps are the ones built in, and the same as
 * with the keys on the heap. */
START_TEST(test_steps_pattern_spilled)
{
	uint64_t n = 1u << 19;
	struct snapshot *s = build_repeats(n, 1000);
	struct an_steps heap, file;
	int k;

	an_steps_set_keys_heap_max(4096);
	ck_assert_int_eq(an_steps_find(s, 0, &file, NULL), 0);
	an_steps_set_keys_heap_max(SIZE_MAX);
	ck_assert_int_eq(an_steps_find(s, 0, &heap, NULL), 0);
	an_steps_set_keys_heap_max((size_t)16 << 20);
	ck_assert_int_eq(file.source, AN_STEPS_PATTERN);
	ck_assert_uint_eq(file.n, 6);
	ck_assert_uint_eq(heap.n, 6);
	for (k = 0; k < 6; k++) {
		ck_assert_int_eq(file.steps[k].first, (int64_t)((uint64_t)k *
		    n));
		ck_assert_int_eq(heap.steps[k].first, file.steps[k].first);
		ck_assert_int_eq(heap.steps[k].last, file.steps[k].last);
	}
	an_steps_destroy(&file);
	an_steps_destroy(&heap);
	snap_free(s);
}
END_TEST

/* A thread asked to stop gets no steps and SV_ERR_CANCELLED from the
 * pattern search (and from the categories, which search for steps
 * first), never a partial answer; the same search unasked finds the
 * steps. */
START_TEST(test_steps_stop)
{
	struct snapshot *s = build_repeats(4096, 100);
	struct an_steps st;
	struct an_categories cats;
	struct idx_timeline tl;
	struct sv_error err;
	atomic_int stop;

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	atomic_init(&stop, 1);
	sv_stop_flag = &stop;
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(an_steps_find(s, 0, &st, &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_CANCELLED);
	ck_assert_uint_eq(st.n, 0);
	ck_assert_ptr_null(st.steps);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(an_categories_build(s, &tl, NULL, NULL, &cats, &err),
	    -1);
	ck_assert_int_eq(err.code, SV_ERR_CANCELLED);
	ck_assert_ptr_null(cats.cat);
	sv_stop_flag = NULL;
	ck_assert_int_eq(an_steps_find(s, 0, &st, &err), 0);
	ck_assert_int_eq(st.source, AN_STEPS_PATTERN);
	ck_assert_uint_eq(st.n, 6);
	an_steps_destroy(&st);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* One step: a forward of 30 distinct allocations, then an optimizer
 * loop over 20 parameters from one line. The loop repeats, the trace
 * does not: no steps. */
START_TEST(test_steps_loop_is_no_step)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t f, st, loop;
	struct an_steps out;
	int i;

	f = frame(s, "/home/a/optim.py", "step", 76);
	loop = snap_intern_stack(s, &f, 1);
	for (i = 0; i < 30; i++) {
		f = frame(s, "/home/a/model.py", "forward", (uint64_t)i + 1);
		st = snap_intern_stack(s, &f, 1);
		snap_trace_push(s, t, SNAP_ALLOC, 0x1000000 + (uint64_t)i *
		    0x10000, 4096, 0, st);
	}
	for (i = 0; i < 20; i++)
		snap_trace_push(s, t, SNAP_ALLOC, 0x8000000 + (uint64_t)i *
		    0x10000, 4096, 0, loop);
	snap_finish(s);
	ck_assert_int_eq(an_steps_find(s, 0, &out, NULL), 0);
	ck_assert_int_eq(out.source, AN_STEPS_NONE);
	ck_assert_uint_eq(out.n, 0);
	an_steps_destroy(&out);
	snap_free(s);
}
END_TEST

/* A model call whose 24 layers repeat (the stack: <module>, main's call
 * of the model, the model's loop over its layers, the layer's lines) and,
 * with training, the same 24 times as iterations of the script's loop,
 * each with the loss and the optimizer besides the forward pass. The
 * layers alone are no steps (the repetition's outer frame is the one line
 * of the layer loop); the training loop is. */
static struct snapshot *
build_layers(int training)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t mod = frame(s, "/home/a/infer.py", "<module>", 90);
	uint32_t call = frame(s, "/home/a/infer.py", "main", 50);
	uint32_t loop = frame(s, "/home/a/model.py", "forward", 30);
	uint32_t head = frame(s, "/home/a/model.py", "forward", 35);
	uint32_t lin[3], fr[5], st_lin[3], st_head, st_loss, st_opt;
	uint64_t a = 0x7f0000000000ull;
	int i, k;

	for (k = 0; k < 3; k++) {
		lin[k] = frame(s, "/home/a/model.py", "Layer.forward",
		    (uint64_t)(40 + k));
		fr[0] = lin[k];
		fr[1] = loop;
		fr[2] = call;
		fr[3] = mod;
		st_lin[k] = snap_intern_stack(s, fr, 4);
	}
	fr[0] = head;
	fr[1] = call;
	fr[2] = mod;
	st_head = snap_intern_stack(s, fr, 3);
	fr[0] = frame(s, "/home/a/infer.py", "main", 51);
	fr[1] = mod;
	st_loss = snap_intern_stack(s, fr, 2);
	fr[0] = frame(s, "/home/a/infer.py", "main", 53);
	st_opt = snap_intern_stack(s, fr, 2);
	for (i = 0; i < 24; i++) {
		for (k = 0; k < 3; k++)
			snap_trace_push(s, t, SNAP_ALLOC, a += 4096, 1024, 0,
			    st_lin[k]);
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, a - 4096, 1024, 0,
		    st_lin[2]);
		if (training) {
			snap_trace_push(s, t, SNAP_ALLOC, a += 4096, 4, 0,
			    st_loss);
			snap_trace_push(s, t, SNAP_ALLOC, a += 4096, 512, 0,
			    st_opt);
		}
	}
	snap_trace_push(s, t, SNAP_ALLOC, a + 4096, 2048, 0, st_head);
	snap_finish(s);
	return s;
}

START_TEST(test_steps_layers_not_steps)
{
	struct snapshot *s = build_layers(0);
	struct an_steps st;

	ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
	ck_assert_int_eq(st.source, AN_STEPS_NONE);
	ck_assert_uint_eq(st.n, 0);
	ck_assert_uint_eq(st.layers, 24);
	an_steps_destroy(&st);
	snap_free(s);

	s = build_layers(1);
	ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
	ck_assert_int_eq(st.source, AN_STEPS_PATTERN);
	ck_assert_uint_eq(st.n, 24);
	ck_assert_uint_eq(st.layers, 0);
	an_steps_destroy(&st);
	snap_free(s);
}
END_TEST

/* The real files: the one-step CUDA capture without its annotations has
 * no steps (its optimizer loop over 219 parameters repeats, the trace
 * does not); the torch_npu traces repeat three training steps (one of
 * them after the model's construction). */
START_TEST(test_steps_real)
{
	static const struct {
		const char *file;
		int source;
		uint64_t n;
	} want[] = {
	    {"cuda_train_one_step", AN_STEPS_NONE, 0},
	    {"npu_leak_empty_cache", AN_STEPS_PATTERN, 3},
	    {"npu_leak_expandable", AN_STEPS_PATTERN, 3},
	    {"npu_all_freed", AN_STEPS_PATTERN, 3}};
	char path[1024];
	struct snapshot *s;
	struct sv_error err;
	struct an_steps st;
	size_t i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		snprintf(path, sizeof path, "%s/tests/data/real/%s.pickle",
		    TOP_SRCDIR, want[i].file);
		ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0,
		    "%s: %s", path, err.msg);
		s->n_annotations = 0;
		ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
		ck_assert_msg(st.source == want[i].source && st.n == want[i].n,
		    "%s: source %d, %llu steps", want[i].file, st.source,
		    (unsigned long long)st.n);
		an_steps_destroy(&st);
		snap_free(s);
	}
}
END_TEST

static uint64_t
lcg(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return *seed;
}

/* n windows (and steps) starting in event order, with some starts moved
 * back (shuffled 1) or in any order (2); lookups ascending (order 0),
 * descending (1) or at random (2), each against the plain lookup. */
static void
cursor_case(uint64_t n, int shuffled, int order, uint64_t *seed)
{
	struct an_window *w = xcalloc(n + 1, sizeof *w);
	struct an_step *st = xcalloc(n + 1, sizeof *st);
	struct an_steps steps;
	struct an_at cw = {0, 0}, cs = {0, 0}, nw = {0, 0}, ns = {0, 0};
	int64_t at = 0, ev, k, span = 4 * (int64_t)n + 40;
	uint64_t i, r;

	for (i = 0; i < n; i++) {
		r = lcg(seed);
		at += (int64_t)(r >> 61); /* 0..7: gaps, touching, equal */
		w[i].first = at;
		w[i].last = at + (int64_t)(r >> 59 & 3);
		if (shuffled == 1 && i > 0 && (r >> 58 & 1))
			w[i].first = w[i - 1].first - 3;
		if (shuffled == 2) {
			/* any order, many equal */
			w[i].first = (int64_t)(r >> 44 & 15);
			w[i].last = w[i].first + (int64_t)(r >> 59 & 3);
		}
		st[i].first = w[i].first;
		st[i].last = w[i].last;
	}
	memset(&steps, 0, sizeof steps);
	steps.steps = st;
	steps.n = n;
	for (k = 0; k < span; k++) {
		r = lcg(seed);
		ev = order == 0 ? k - 10 : order == 1 ? span - 10 - k
		    : (int64_t)(r >> 40) % span - 10;
		ck_assert_int_eq(an_window_at_gallop(w, n, ev, &cw),
		    an_window_at(w, n, ev));
		ck_assert_int_eq(an_step_at_gallop(&steps, ev, &cs),
		    an_step_at(&steps, ev));
		ck_assert_int_eq(an_window_at_near(w, n, ev, &nw),
		    an_window_at(w, n, ev));
		ck_assert_int_eq(an_step_list_at_near(st, n, ev, &ns),
		    an_step_at(&steps, ev));
	}
	free(w);
	free(st);
}

/* an_step_at_gallop(), an_window_at_gallop() and their inline forms for
 * lookups near the last one (an_*_at_near) answer as an_step_at() and
 * an_window_at() whatever the order of the lookups; on windows in event
 * order (with gaps, touching, equal starts), none, one, and out of order
 * (a hostile timeline: the cursor then searches as the plain lookup
 * does). */
START_TEST(test_steps_cursor)
{
	static const uint64_t sizes[] = {0, 1, 2, 5, 300};
	uint64_t seed = 0x2545f4914f6cdd1dull;
	size_t z;
	int order, shuffled;

	for (z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
		for (shuffled = 0; shuffled < 3; shuffled++)
			for (order = 0; order < 3; order++)
				cursor_case(sizes[z], shuffled, order, &seed);
}
END_TEST

/* Times of n events by kind: ascending with equal runs (0), ascending
 * with some missing (SNAP_NO_TIME, as a trace where only some events
 * carry time_us: the times then go down) (1), ascending with some steps
 * back (2), at random from a few values (3), descending (4). */
static int64_t
time_of(int kind, uint64_t i, uint64_t n, int64_t *at, uint64_t *seed)
{
	uint64_t r = lcg(seed);

	switch (kind) {
	case 0:
		return *at += (int64_t)(r >> 62);
	case 1:
		*at += (int64_t)(r >> 62);
		return (r >> 57 & 7) == 0 ? SNAP_NO_TIME : *at;
	case 2:
		*at += (int64_t)(r >> 62);
		return (r >> 57 & 7) == 0 ? *at - (int64_t)(r >> 40 & 15) : *at;
	case 3:
		return (int64_t)(r >> 60) - 4;
	default:
		return (int64_t)(n - i) / 2;
	}
}

/* Searches of the times of one trace from three runs of hints (as three
 * kinds of annotation), times ascending (order 0), descending (1) or at
 * random (2) and the extremes, each against the binary search over the
 * whole trace. */
static void
time_search_case(uint64_t n, int kind, int order, uint64_t *seed)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	struct an_times tm;
	uint64_t i, ev, hint[3] = {0, 0, 0}, q, nq = 3 * n + 30, got;
	int64_t at = -3, lo = INT64_MAX, hi = INT64_MIN, time, v, span;

	for (i = 0; i < n; i++) {
		ev = snap_trace_push(s, t, i % 2 ? SNAP_FREE_COMPLETED
		    : SNAP_ALLOC, 0x1000000, 512, 0, 0);
		v = time_of(kind, i, n, &at, seed);
		snap_trace_set_time(t, ev, v);
		if (v != SNAP_NO_TIME && v < lo)
			lo = v;
		if (v != SNAP_NO_TIME && v > hi)
			hi = v;
	}
	snap_finish(s);
	if (lo > hi)
		lo = hi = 0;
	span = hi - lo + 7;
	tm.t = t;
	tm.gallop = 0;
	for (q = 0; q < nq; q++) {
		uint64_t r = lcg(seed);

		if (q < 2)
			time = q == 0 ? INT64_MIN : INT64_MAX;
		else if (order == 0)
			time = lo - 3 + (int64_t)(q * (uint64_t)span / nq);
		else if (order == 1)
			time = hi + 3 - (int64_t)(q * (uint64_t)span / nq);
		else
			time = lo - 3 + (int64_t)((r >> 20) % (uint64_t)span);
		got = an_ev_at_time_gallop(&tm,
		    &hint[r >> 62 == 3 ? 0 : r >> 62], time);
		ck_assert_uint_eq(got, snap_ev_at_time(t, 0, n, time));
	}
	/* the pass found what the times are */
	if (n > 1 && (kind == 0 || kind == 4))
		ck_assert_int_eq(tm.gallop, kind == 0 ? 1 : -1);
	snap_free(s);
}

/* an_ev_at_time_gallop() answers as the binary search over the whole
 * trace (snap_ev_at_time) on any times and searches in any order: on
 * ascending times by galloping, on times that go down somewhere by that
 * search. */
START_TEST(test_steps_time_search)
{
	static const uint64_t sizes[] = {0, 1, 2, 3, 17, 300, 3000};
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t z;
	int kind, order, rep;

	for (z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
		for (kind = 0; kind < 5; kind++)
			for (order = 0; order < 3; order++)
				for (rep = 0; rep < 3; rep++)
					time_search_case(sizes[z], kind, order,
					    &seed);
}
END_TEST

/* Optimizer windows over a trace whose times go back now and then: each
 * bound is the one the binary search over the whole trace finds, as if
 * every annotation were looked up on its own. */
START_TEST(test_steps_times_back)
{
	uint64_t seed = 0x1234567887654321ull;
	int rep;

	for (rep = 0; rep < 40; rep++) {
		struct snapshot *s = snap_new();
		struct snap_trace *t = snap_trace_get(s, 0);
		const uint64_t n = 400 + (uint64_t)rep * 37;
		struct an_steps st;
		int64_t at = 0, time = -2, tm[2];
		uint64_t i, ev, k, nw = 0;
		int w;

		for (i = 0; i < n; i++) {
			ev = snap_trace_push(s, t, i % 2 ? SNAP_FREE_COMPLETED
			    : SNAP_ALLOC, 0x1000000, 512, 0, 0);
			snap_trace_set_time(t, ev, time_of(rep % 3 == 0 ? 1 :
			    2, i, n, &at, &seed));
		}
		/* a window per event or two: galloping, not binary search */
		while (time < at + 5) {
			for (w = 0; w < 2; w++) {
				time += (int64_t)(lcg(&seed) >> 62);
				annotate(s, "Optimizer.step#SGD.step", w == 0 ?
				    SNAP_STAGE_START : SNAP_STAGE_END, time);
			}
			nw++;
		}
		snap_finish(s);
		ck_assert_int_eq(an_steps_find(s, 0, &st, NULL), 0);
		ck_assert_uint_eq(st.n_bad, 0);
		ck_assert_uint_eq(st.n_opt, nw);
		for (k = 0; k < st.n_opt; k++) {
			tm[0] = s->annotations[2 * k].time_us;
			tm[1] = s->annotations[2 * k + 1].time_us;
			ck_assert_int_eq(st.opt[k].first,
			    (int64_t)snap_ev_at_time(t, 0, n, tm[0]));
			ck_assert_int_eq(st.opt[k].last,
			    (int64_t)snap_ev_at_time(t, 0, n, tm[1] + 1) - 1);
		}
		an_steps_destroy(&st);
		snap_free(s);
	}
}
END_TEST

void
analysis_steps_tests(TCase *tc)
{
	tcase_add_test(tc, test_steps_annotations);
	tcase_add_test(tc, test_steps_many_windows);
	tcase_add_test(tc, test_steps_optimizer_and_bad);
	tcase_add_test(tc, test_steps_no_time);
	tcase_add_test(tc, test_steps_pattern_spilled);
	tcase_add_test(tc, test_steps_layers_not_steps);
	tcase_add_test(tc, test_steps_stop);
	tcase_add_test(tc, test_steps_loop_is_no_step);
	tcase_add_test(tc, test_steps_real);
	tcase_add_test(tc, test_steps_cursor);
	tcase_add_test(tc, test_steps_time_search);
	tcase_add_test(tc, test_steps_times_back);
}
