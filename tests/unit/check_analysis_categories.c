/*
 * Unit tests of the categories (src/analysis/category.c): a built
 * training step, a forward pass with no backward, the user's rules, the
 * probe that classifies single elements on another thread, and the
 * leaks of one step. Run by check_analysis.c.
 */
#include "config.h"

#include "analysis_fix.h"

/* ---- categories ---------------------------------------------------------- */

enum {
	E_ACT, E_TMP, E_LOSS, E_WS, E_BWTMP, E_GRAD1, E_GRAD2, E_STATE,
	E_OTMP, E_NEXT, E_PARAM, E_N
};

/* One training step with C++ stacks: forward, backward on the engine's
 * thread, an Optimizer.step window, and a parameter alive before the
 * trace (a block of the final segments never allocated in it). */
static struct snapshot *
build_step(void)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	struct snap_segment *sg;
	struct snap_block *b;
	uint32_t fr[2], fwd, fwd2, opt, ws, mul, acc, bmm;
	const uint64_t A = 0x7f0000000000ull;
	int64_t now = 0;
	uint64_t ev;

#define PUSH(act, addr, size, stack)                                           \
	do {                                                                   \
		ev = snap_trace_push(s, t, act, addr, size, 0, stack);         \
		snap_trace_set_time(t, ev, now++);                             \
	} while (0)
	fr[0] = frame(s, "/home/a/model.py", "forward", 40);
	fr[1] = frame(s, "/home/a/train.py", "train_step", 100);
	fwd = snap_intern_stack(s, fr, 2);
	fr[0] = frame(s, "/home/a/model.py", "forward", 41);
	fwd2 = snap_intern_stack(s, fr, 2);
	fr[0] = frame(s, "/home/a/my_optim.py", "step", 76);
	opt = snap_intern_stack(s, fr, 2);
	fr[0] = frame(s, "??", "at::cuda::getNewWorkspace()", 0);
	ws = snap_intern_stack(s, fr, 2);
	mul = engine_stack(s, "at::_ops::mul_Tensor::call()",
	    "torch::autograd::generated::MulBackward0::apply()");
	acc = engine_stack(s, "at::_ops::new_empty_strided::call()",
	    "torch::autograd::AccumulateGrad::apply()");
	bmm = engine_stack(s, "at::_ops::bmm::call()",
	    "torch::autograd::generated::BmmBackward0::apply()");
	PUSH(SNAP_ALLOC, A + 0x000000, 4096, fwd);		/* 0 act */
	PUSH(SNAP_ALLOC, A + 0x100000, 8192, fwd2);		/* 1 tmp */
	PUSH(SNAP_FREE_REQUESTED, A + 0x100000, 8192, fwd2);
	PUSH(SNAP_FREE_COMPLETED, A + 0x100000, 8192, fwd2);
	PUSH(SNAP_ALLOC, A + 0x180000, 4, fwd);		/* 4 loss */
	PUSH(SNAP_ALLOC, A + 0x200000, 1u << 20, ws);		/* 5 ws */
	PUSH(SNAP_ALLOC, A + 0x400000, 2048, mul);		/* 6 bwtmp */
	PUSH(SNAP_FREE_REQUESTED, A + 0x000000, 4096, mul);
	PUSH(SNAP_FREE_COMPLETED, A + 0x000000, 4096, mul);
	PUSH(SNAP_ALLOC, A + 0x500000, 65536, acc);		/* 9 grad1 */
	PUSH(SNAP_ALLOC, A + 0x600000, 65536, bmm);	/* 10 grad2 */
	PUSH(SNAP_FREE_REQUESTED, A + 0x400000, 2048, mul);
	PUSH(SNAP_FREE_COMPLETED, A + 0x400000, 2048, mul);
	PUSH(SNAP_ALLOC, A + 0x700000, 65536, opt);	/* 13 state */
	PUSH(SNAP_ALLOC, A + 0x800000, 65536, opt);		/* 14 otmp */
	PUSH(SNAP_FREE_REQUESTED, A + 0x800000, 65536, opt);
	PUSH(SNAP_FREE_COMPLETED, A + 0x800000, 65536, opt);
	/* the next step's forward, cut by the end of the trace */
	PUSH(SNAP_ALLOC, A + 0x900000, 512, fwd);		/* 17 */
#undef PUSH
	annotate(s, "Optimizer.step#MyOpt.step", SNAP_STAGE_START, 13);
	annotate(s, "Optimizer.step#MyOpt.step", SNAP_STAGE_END, 16);
	/* the parameter: a live block nobody allocated in the trace */
	sg = snap_push_segment(s);
	memset(sg, 0, sizeof *sg);
	sg->addr = A + 0x10000000;
	sg->total_size = 2u << 20;
	sg->first_block = s->n_blocks;
	sg->n_blocks = 2;
	b = snap_push_block(s);
	memset(b, 0, sizeof *b);
	b->addr = sg->addr;
	b->size = 1u << 20;
	b->requested_size = 1u << 20;
	b->state = SNAP_BLOCK_ACTIVE_ALLOCATED;
	b = snap_push_block(s);
	memset(b, 0, sizeof *b);
	b->addr = sg->addr + (1u << 20);
	b->size = 1u << 20;
	b->state = SNAP_BLOCK_INACTIVE;
	snap_finish(s);
	return s;
}

/* Element of the alloc at event ev (or the ghost when ev < 0). */
static uint64_t
elem_of(const struct idx_timeline *tl, int64_t ev)
{
	uint64_t k;

	for (k = 0; k < tl->n_elems; k++)
		if (idx_tl_elem(tl, k).alloc_ev == ev)
			return k;
	ck_abort_msg("no element for event %lld", (long long)ev);
	return 0;
}

START_TEST(test_categories_step)
{
	static const int64_t ev[E_N] = {0, 1, 4, 5, 6, 9, 10, 13, 14, 17, -1};
	static const unsigned want[E_N] = {AN_CAT_ACTIVATION,
	    AN_CAT_TEMPORARY, AN_CAT_OTHER, AN_CAT_WORKSPACE,
	    AN_CAT_TEMPORARY, AN_CAT_GRADIENT, AN_CAT_GRADIENT,
	    AN_CAT_OPTIMIZER_STATE, AN_CAT_TEMPORARY, AN_CAT_ACTIVATION,
	    AN_CAT_PARAMETER};
	struct snapshot *s = build_step();
	struct idx_timeline tl;
	struct an_categories c;
	struct an_cat_totals ct;
	int i;

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_categories_build(s, &tl, NULL, NULL, &c, NULL), 0);
	ck_assert_int_eq(c.steps_source, AN_STEPS_OPTIMIZER);
	ck_assert_uint_eq(c.n_steps, 1);
	for (i = 0; i < E_N; i++)
		ck_assert_msg(an_category_of(&c, elem_of(&tl, ev[i])) ==
		    want[i], "element %d: %s, want %s", i,
		    an_category_name(an_category_of(&c, elem_of(&tl, ev[i]))),
		    an_category_name(want[i]));
	/* after the last event: ws, grads, state, the parameter, the loss
	 * kept after backward and the next step's first activation */
	an_categories_at(&tl, &c, -2, &ct);
	ck_assert_uint_eq(ct.bytes[AN_CAT_GRADIENT], 2 * 65536);
	ck_assert_uint_eq(ct.bytes[AN_CAT_OPTIMIZER_STATE], 65536);
	ck_assert_uint_eq(ct.bytes[AN_CAT_PARAMETER], 1u << 20);
	ck_assert_uint_eq(ct.bytes[AN_CAT_WORKSPACE], 1u << 20);
	ck_assert_uint_eq(ct.bytes[AN_CAT_OTHER], 4);
	ck_assert_uint_eq(ct.bytes[AN_CAT_ACTIVATION], 512);
	ck_assert_uint_eq(ct.total_count, 7);
	/* before the first event: only the parameter */
	an_categories_at(&tl, &c, -1, &ct);
	ck_assert_uint_eq(ct.total_bytes, 1u << 20);
	an_categories_destroy(&c);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* A forward pass with no backward anywhere (inference): what the model's
 * call made and is alive when the trace ends is activation memory; the
 * input batch made outside the model stays other, and what the model
 * freed again is temporary. */
START_TEST(test_categories_forward_only)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	struct idx_timeline tl;
	struct an_categories c;
	struct an_cat_totals ct;
	uint32_t fr[4], batch, mod, fwd;
	const uint64_t A = 0x7f0000000000ull;

	fr[0] = frame(s, "/home/a/infer.py", "run", 10);
	batch = snap_intern_stack(s, fr, 1);
	/* a layer's forward under the module's call */
	fr[0] = frame(s, "/home/a/model.py", "forward", 54);
	fr[1] = frame(s, "/env/site-packages/torch/nn/modules/module.py",
	    "_call_impl", 1790);
	fr[2] = frame(s, "/env/site-packages/torch/nn/modules/module.py",
	    "_wrapped_call_impl", 1779);
	fr[3] = frame(s, "/home/a/infer.py", "run", 11);
	fwd = snap_intern_stack(s, fr, 4);
	/* a torch function called from the module's call, no forward */
	fr[0] = frame(s, "/env/site-packages/torch/nn/functional.py", "silu",
	    2000);
	mod = snap_intern_stack(s, fr, 4);
	snap_trace_push(s, t, SNAP_ALLOC, A, 1000, 0, batch);	/* 0 */
	snap_trace_push(s, t, SNAP_ALLOC, A + 0x100000, 2048, 0, fwd);
	snap_trace_push(s, t, SNAP_ALLOC, A + 0x200000, 4096, 0, fwd);
	snap_trace_push(s, t, SNAP_FREE_REQUESTED, A + 0x200000, 4096, 0, fwd);
	snap_trace_push(s, t, SNAP_FREE_COMPLETED, A + 0x200000, 4096, 0, fwd);
	snap_trace_push(s, t, SNAP_ALLOC, A + 0x300000, 8192, 0, mod); /* 5 */
	snap_finish(s);
	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_categories_build(s, &tl, NULL, NULL, &c, NULL), 0);
	ck_assert_uint_eq(c.n_steps, 0);
	ck_assert_str_eq(an_category_name(an_category_of(&c, elem_of(&tl,
	    0))), "other");
	ck_assert_str_eq(an_category_name(an_category_of(&c, elem_of(&tl,
	    1))), "activation");
	ck_assert_str_eq(an_category_name(an_category_of(&c, elem_of(&tl,
	    2))), "temporary");
	ck_assert_str_eq(an_category_name(an_category_of(&c, elem_of(&tl,
	    5))), "activation");
	an_categories_at(&tl, &c, -2, &ct);
	ck_assert_uint_eq(ct.bytes[AN_CAT_ACTIVATION], 2048 + 8192);
	ck_assert_uint_eq(ct.bytes[AN_CAT_OTHER], 1000);
	ck_assert_uint_eq(ct.total_count, 3);
	an_categories_destroy(&c);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

START_TEST(test_category_rules)
{
	static const char good[] = "# my rules\n\n"
	    "other   BmmBackward0\n"
	    "optimizer-state\tmodel\\.py:4[01] \r\n"
	    "gradient AccumulateGrad";
	struct snapshot *s = build_step();
	struct idx_timeline tl;
	struct an_cat_rules r;
	struct an_categories c;
	struct sv_error err;

	ck_assert_int_eq(an_cat_rules_parse(good, strlen(good), &r, &err), 0);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(r.r[1].line, 4);
	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_categories_build(s, &tl, NULL, &r, &c, NULL), 0);
	ck_assert_uint_eq(an_category_of(&c, elem_of(&tl, 10)), AN_CAT_OTHER);
	ck_assert_uint_eq(an_category_of(&c, elem_of(&tl, 0)),
	    AN_CAT_OPTIMIZER_STATE);
	ck_assert_uint_eq(an_category_of(&c, elem_of(&tl, 1)),
	    AN_CAT_OPTIMIZER_STATE);
	ck_assert_uint_eq(an_category_of(&c, elem_of(&tl, 13)),
	    AN_CAT_OPTIMIZER_STATE);
	ck_assert_uint_eq(an_category_of(&c, elem_of(&tl, 5)),
	    AN_CAT_WORKSPACE);
	/* three allocs of fwd, one of fwd2, grad2, grad1 */
	ck_assert_uint_eq(c.n_by_rule, 6);
	an_categories_destroy(&c);
	an_cat_rules_destroy(&r);

	ck_assert_int_eq(an_cat_rules_parse("gradient x\ngrad y\n", 18, &r,
	    &err), -1);
	ck_assert_str_eq(err.msg, "line 2: unknown category 'grad' (expected "
	    "parameter, gradient, optimizer_state, activation, temporary, "
	    "workspace or other)");
	ck_assert_uint_eq(r.n, 0);
	ck_assert_int_eq(an_cat_rules_parse("\nother\n", 7, &r, &err), -1);
	ck_assert_str_eq(err.msg, "line 2: no regular expression after "
	    "'other'");
	ck_assert_int_eq(an_cat_rules_parse("other (a\n", 9, &r, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg,
	    "line 1: bad regular expression"));
	ck_assert_int_eq(an_cat_rules_parse("other a\0b\n", 10, &r, &err), -1);
	ck_assert_str_eq(err.msg, "line 1: a NUL byte");
	ck_assert_int_eq(an_cat_rules_load("/nonexistent/rules", &r, &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_IO);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* ---- the probe ---------------------------------------------------------- */

/* The probe of a begun table classifies every element of f (default
 * device) as the table does, in any order (here backwards), after the
 * table is ended and freed, the table begun with its pass over the
 * events split at per_mille (0: one pass). */
static void
probe_check(struct snapshot *s, const struct an_cat_rules *rules,
    unsigned per_mille, const char *name)
{
	struct idx_timeline tl;
	struct an_categories c, begun;
	struct an_cat_probe *p;
	struct sv_error err;
	uint64_t k;
	uint32_t d = snap_default_device(s);

	ck_assert_int_eq(idx_timeline_build(s, d, &tl, &err), 0);
	ck_assert_int_eq(an_categories_build(s, &tl, NULL, rules, &c, &err), 0);
	an_categories_split(per_mille > 0 ? 0 : UINT64_MAX, per_mille);
	ck_assert_int_eq(an_categories_begin(s, &tl, NULL, rules, &begun,
	    &err), 0);
	an_categories_split(1u << 20, 0);
	p = an_cat_probe_new(&begun);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(an_categories_end(&begun, &err), 0);
	an_categories_destroy(&begun);
	ck_assert_ptr_null(an_cat_probe_new(&begun));
	for (k = tl.n_elems; k-- > 0;) {
		struct idx_elem e = idx_tl_elem(&tl, k);

		ck_assert_msg(an_cat_probe_classify(p, &e) ==
		    an_category_of(&c, k), "%s: element %llu: %s, want %s",
		    name, (unsigned long long)k,
		    an_category_name(an_cat_probe_classify(p, &e)),
		    an_category_name(an_category_of(&c, k)));
	}
	an_cat_probe_free(p);
	an_categories_destroy(&c);
	idx_timeline_destroy(&tl);
}

START_TEST(test_category_probe)
{
	static const char *const files[] = {"real/cuda_train_one_step",
	    "real/cuda_inference_forward", "real/npu_leak_expandable",
	    "real/npu_all_freed", "real/synthetic_inconsistent",
	    "gen/wrapped", "gen/training-leak", "gen/leak-cpp", "gen/oom"};
	/* rules that decide some of the elements, the rest inferred */
	static const char rules_text[] =
	    "optimizer_state step\nactivation forward\n";
	struct an_cat_rules rules;
	struct snapshot *s;
	struct sv_error err;
	char path[1024];
	size_t i;

	s = build_step();
	probe_check(s, NULL, 0, "one step");
	snap_free(s);
	ck_assert_int_eq(an_cat_rules_parse(rules_text, strlen(rules_text),
	    &rules, &err), 0);
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/tests/data/%s.pickle",
		    TOP_SRCDIR, files[i]);
		ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0,
		    "%s: %s", path, err.msg);
		probe_check(s, NULL, 0, files[i]);
		probe_check(s, &rules, 0, files[i]);
		probe_check(s, NULL, 101, files[i]);
		probe_check(s, NULL, 500, files[i]);
		snap_free(s);
	}
	an_cat_rules_destroy(&rules);
}
END_TEST

/* The pass over the events split in two anywhere (on two threads, the
 * runs of backward and optimizer events joined where the split cuts
 * them) gives the table a pass on one thread gives, with the steps
 * found there or given. */
START_TEST(test_category_split)
{
	static const char *const files[] = {"real/cuda_train_one_step",
	    "real/npu_leak_expandable", "gen/wrapped", "gen/training-leak",
	    "gen/leak-cpp"};
	struct snapshot *s;
	struct idx_timeline tl;
	struct an_categories one, two;
	struct an_steps st;
	struct sv_error err;
	char path[1024];
	unsigned pm, given, diff = 0;
	uint64_t k;
	size_t i;

	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/tests/data/%s.pickle",
		    TOP_SRCDIR, files[i]);
		ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0,
		    "%s: %s", path, err.msg);
		ck_assert_int_eq(idx_timeline_build(s, snap_default_device(s),
		    &tl, &err), 0);
		ck_assert_int_eq(an_steps_find(s, tl.device, &st, &err), 0);
		an_categories_split(UINT64_MAX, 0);
		ck_assert_int_eq(an_categories_build(s, &tl, NULL, NULL, &one,
		    &err), 0);
		for (pm = 1; pm < 1000; pm += 13)
			for (given = 0; given < 2; given++) {
				an_categories_split(0, pm);
				ck_assert_int_eq(an_categories_build(s, &tl,
				    given ? &st : NULL, NULL, &two, &err), 0);
				for (k = 0; k < tl.n_elems; k++)
					ck_assert_msg(two.cat[k] == one.cat[k],
					    "%s split at %u/1000: element %llu:"
					    " %s, want %s", files[i], pm,
					    (unsigned long long)k,
					    an_category_name(two.cat[k]),
					    an_category_name(one.cat[k]));
				an_categories_destroy(&two);
			}
		/* the files tell categories apart */
		for (k = 1; k < tl.n_elems; k++)
			diff |= one.cat[k] != one.cat[0];
		an_categories_destroy(&one);
		an_steps_destroy(&st);
		idx_timeline_destroy(&tl);
		snap_free(s);
	}
	ck_assert(diff);
	an_categories_split(1u << 20, 0);
}
END_TEST

/* One optimizer step: nothing can grow every step. */
START_TEST(test_leaks_one_step)
{
	struct snapshot *s = build_step();
	struct idx_timeline tl;
	struct an_sites t;
	struct an_leaks l;
	uint64_t i;

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_leaks(s, &tl, &t, -1, -1, &l, NULL), 0);
	ck_assert_int_eq(l.steps_source, AN_STEPS_OPTIMIZER);
	ck_assert_uint_eq(l.n_steps, 1);
	ck_assert(!l.judged);
	for (i = 0; i < l.n_sites; i++)
		ck_assert(!l.sites[i].periodic);
	an_leaks_destroy(&l);
	an_sites_destroy(&t);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

void
analysis_categories_tests(TCase *tc)
{
	tcase_add_test(tc, test_categories_step);
	tcase_add_test(tc, test_categories_forward_only);
	tcase_add_test(tc, test_category_rules);
	tcase_add_test(tc, test_category_probe);
	tcase_add_test(tc, test_category_split);
	tcase_add_test(tc, test_leaks_one_step);
}
