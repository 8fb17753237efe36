/*
 * Unit tests of src/analysis: call-site resolution (C++, torch,
 * site-packages, Windows paths, memory_viz filter, --frames, regex, C++
 * names of stacks with no user frame), the frame rules, the leak ranking
 * on a built snapshot, the leaked blocks per site, live bytes by site
 * from a replayed state against the same from the timeline (generated
 * fixtures), and the replay's size rule per device; the suite, with the
 * tests of check_analysis_steps.c and check_analysis_categories.c.
 * Fixtures: analysis_fix.h.
 */
#include "config.h"

#include <dirent.h>

#include "analysis_fix.h"
#include "analysis/stats.h"
#include "analysis/whatif.h"
#include "index/idx.h"
#include "replay/simconf.h"

START_TEST(test_framework_frames)
{
	struct snapshot *s = snap_new();

	ck_assert(an_frame_is_framework(s, frame(s, "??", "foo", 0)));
	ck_assert(an_frame_is_framework(s, frame(s, "", "bar", 0)));
	ck_assert(an_frame_is_framework(s, frame(s, "alloc.cpp", "x", 3)));
	ck_assert(an_frame_is_framework(s,
	    frame(s, "/usr/lib/python3/site-packages/torch/nn/module.py",
		"_call_impl", 1)));
	ck_assert(an_frame_is_framework(s,
	    frame(s, "/opt/torch/functional.py", "f", 1)));
	ck_assert(an_frame_is_framework(s,
	    frame(s, "D:\\env\\Lib\\site-packages\\foo\\x.py", "g", 1)));
	ck_assert(an_frame_is_framework(s,
	    frame(s, "C:\\py\\torch\\nn\\functional.py", "linear", 1)));
	ck_assert(an_frame_is_framework(s, frame(s, "<frozen runpy>", "r", 1)));
	ck_assert(an_frame_is_framework(s,
	    frame(s, "/home/u/x.py", "PyEval_EvalFrame", 1)));
	/* user code, including a directory merely named like torch */
	ck_assert(!an_frame_is_framework(s, frame(s, "/home/u/train.py",
						"step", 12)));
	ck_assert(!an_frame_is_framework(s,
	    frame(s, "/home/u/pytorch_stuff/train.py", "step", 12)));
	ck_assert(!an_frame_is_framework(s,
	    frame(s, "D:\\proj\\train.py", "step", 12)));
	snap_free(s);
}
END_TEST

START_TEST(test_site_resolution)
{
	struct snapshot *s = snap_new();
	struct an_sites t;
	uint32_t fr[6], st, site, n, path[4];
	const uint32_t *sf;
	char buf[256];

	fr[0] = frame(s, "??", "torch::unwind::unwind()", 0);
	fr[1] = frame(s, "CUDACachingAllocator.cpp", "malloc", 10);
	fr[2] = frame(s, "/env/site-packages/torch/nn/linear.py", "forward",
	    5);
	fr[3] = frame(s, "/home/a/metrics/tracker.py", "collect", 47);
	fr[4] = frame(s, "/env/site-packages/lightning/loop.py", "run", 9);
	fr[5] = frame(s, "/home/a/train.py", "train_step", 112);
	st = snap_intern_stack(s, fr, 6);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	site = an_site_of(&t, st);
	sf = an_site_frames(&t, site, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sf[0], fr[3]);
	ck_assert(an_site_is_user(&t, site));
	ck_assert_str_eq(an_site_label(&t, site, buf, sizeof buf),
	    "/home/a/metrics/tracker.py:47 collect");
	ck_assert_uint_eq(an_site_path(&t, st, path, 4), 2);
	ck_assert_uint_eq(path[1], fr[5]);
	ck_assert_uint_eq(an_site_of(&t, st), site); /* cached */
	/* the empty stack */
	ck_assert_str_eq(an_site_label(&t, an_site_of(&t, 0), buf, sizeof buf),
	    "<no stack>");
	an_sites_destroy(&t);

	/* --frames 2: site and caller */
	ck_assert_int_eq(an_sites_init(&t, s, 2, NULL, NULL), 0);
	sf = an_site_frames(&t, an_site_of(&t, st), &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(sf[1], fr[5]);
	an_sites_destroy(&t);

	/* --site-regex: the first matching frame, even a framework one */
	ck_assert_int_eq(an_sites_init(&t, s, 1, "linear\\.py:[0-9]+ fwd|"
					      "linear\\.py:5 forward", NULL),
	    0);
	sf = an_site_frames(&t, an_site_of(&t, st), &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sf[0], fr[2]);
	an_sites_destroy(&t);
	/* a bad regex is a usage error */
	ck_assert_int_eq(an_sites_init(&t, s, 1, "(", NULL), -1);
	snap_free(s);
}
END_TEST

START_TEST(test_site_no_user_frame)
{
	struct snapshot *s = snap_new();
	struct an_sites t;
	uint32_t fr[3], st, site, n;
	const uint32_t *sf;

	fr[0] = frame(s, "??", "torch::unwind::unwind()", 0);
	fr[1] = frame(s, "??", "c10::cuda::malloc", 0);
	fr[2] = frame(s, "/env/site-packages/torch/optim/adam.py", "step", 3);
	st = snap_intern_stack(s, fr, 3);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	site = an_site_of(&t, st);
	sf = an_site_frames(&t, site, &n);
	/* no user frame: the Python frame, never the allocator */
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(sf[0], fr[2]);
	ck_assert(!an_site_is_user(&t, site));
	ck_assert_int_eq(an_site_kind(&t, site), AN_SITE_PYTHON);
	an_sites_destroy(&t);
	snap_free(s);
}
END_TEST

/* A training loop: a big one-off allocation (params) at the start, a
 * small block kept every step, a temporary freed every step. */
static struct snapshot *
build_loop(int steps, int annotate)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t p = frame(s, "/home/a/model.py", "__init__", 24);
	uint32_t l = frame(s, "/home/a/metrics.py", "collect", 47);
	uint32_t tmp = frame(s, "/home/a/train.py", "step", 100);
	uint32_t sp = snap_intern_stack(s, &p, 1);
	uint32_t sl = snap_intern_stack(s, &l, 1);
	uint32_t st = snap_intern_stack(s, &tmp, 1);
	uint64_t base = 0x7f0000000000ull, ev;
	int64_t now = 1000;
	int i, k;

	for (k = 0; k < 4; k++) {
		ev = snap_trace_push(s, t, SNAP_ALLOC, base + (uint64_t)k *
		    (5u << 20), 5u << 20, 0, sp);
		snap_trace_set_time(t, ev, now++);
	}
	for (i = 0; i < steps; i++) {
		uint64_t a = base + (64ull << 20) + (uint64_t)i * 4096;
		uint64_t tm = base + (128ull << 20);

		if (annotate) {
			struct snap_annotation an;

			memset(&an, 0, sizeof an);
			an.name = snap_intern_str(s, "ProfilerStep#1", 14);
			an.stage = SNAP_STAGE_START;
			an.time_us = now;
			snap_push_annotation(s, &an);
		}
		ev = snap_trace_push(s, t, SNAP_ALLOC, tm, 8192, 0, st);
		snap_trace_set_time(t, ev, now++);
		ev = snap_trace_push(s, t, SNAP_ALLOC, a, 1000, 0, sl);
		snap_trace_set_time(t, ev, now++);
		ev = snap_trace_push(s, t, SNAP_FREE_REQUESTED, tm, 8192, 0,
		    st);
		snap_trace_set_time(t, ev, now++);
		ev = snap_trace_push(s, t, SNAP_FREE_COMPLETED, tm, 8192, 0,
		    st);
		snap_trace_set_time(t, ev, now++);
	}
	snap_finish(s);
	return s;
}

static void
check_ranking(int annotate)
{
	struct snapshot *s = build_loop(12, annotate);
	struct idx_timeline tl;
	struct an_sites t;
	struct an_leaks l;
	char buf[256];

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_leaks(s, &tl, &t, -1, -1, &l, NULL), 0);
	ck_assert_uint_eq(l.n_sites, 2);
	ck_assert_int_eq(l.steps_source,
	    annotate ? AN_STEPS_PROFILER : AN_STEPS_PATTERN);
	ck_assert_uint_eq(l.n_steps, 12);
	ck_assert(l.judged);
	/* the per-step leak first, although params hold more bytes */
	ck_assert_str_eq(an_site_label(&t, l.sites[0].site, buf, sizeof buf),
	    "/home/a/metrics.py:47 collect");
	ck_assert(l.sites[0].periodic);
	ck_assert_uint_eq(l.sites[0].count, 12);
	ck_assert_uint_eq(l.sites[0].bytes, 12000);
	ck_assert_uint_eq(l.sites[0].rounded, 12 * 1024);
	ck_assert_uint_eq(l.sites[0].steps_hit, 12);
	ck_assert(!l.sites[1].periodic);
	ck_assert_uint_eq(l.sites[1].bytes, 20u << 20);
	ck_assert_uint_gt(l.sites[1].bytes, l.sites[0].bytes);
	an_leaks_destroy(&l);

	/* a window ending before the last steps */
	ck_assert_int_eq(an_leaks(s, &tl, &t, 4, 4 + 4 * 6 - 1, &l, NULL),
	    0);
	ck_assert_uint_eq(l.n_sites, 1);
	ck_assert_uint_eq(l.sites[0].count, 6);
	ck_assert_uint_eq(l.alive_before, 4);
	an_leaks_destroy(&l);
	an_sites_destroy(&t);
	idx_timeline_destroy(&tl);
	snap_free(s);
}

START_TEST(test_ranking_annotations)
{
	check_ranking(1);
}
END_TEST

START_TEST(test_ranking_periodicity)
{
	check_ranking(0);
}
END_TEST

START_TEST(test_top)
{
	struct snapshot *s = build_loop(5, 0);
	struct idx_timeline tl;
	struct an_sites t;
	struct an_top top;

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	/* after event 5: params, the first temporary, the first leak */
	an_top(&tl, &t, 5, 2, &top);
	ck_assert_uint_eq(top.count, 6);
	ck_assert_uint_eq(top.bytes, (20u << 20) + 8192 + 1000);
	ck_assert_uint_eq(top.n_roots, 3);
	ck_assert_uint_eq(top.nodes[top.roots[0]].bytes, 20u << 20);
	ck_assert_uint_eq(top.nodes[top.roots[1]].bytes, 8192);
	an_top_destroy(&top);
	an_top(&tl, &t, -1, 1, &top);
	ck_assert_uint_eq(top.count, 0);
	an_top_destroy(&top);
	an_sites_destroy(&t);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* The leaked blocks of each site: as many as an_leaks counted, each
 * still alive at the end, of that site, in alloc order, each with its
 * element. */
START_TEST(test_leak_elems)
{
	struct snapshot *s = build_loop(12, 1);
	struct idx_timeline tl;
	struct an_sites t;
	struct an_leaks l;
	struct an_leak_elems le;
	uint64_t k, i;

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, NULL), 0);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_leaks(s, &tl, &t, -1, -1, &l, NULL), 0);
	an_leak_elems(&tl, &t, &l, &le);
	ck_assert_uint_eq(le.n_sites, l.n_sites);
	for (k = 0; k < l.n_sites; k++) {
		uint64_t bytes = 0;

		ck_assert_uint_eq(le.off[k + 1] - le.off[k], l.sites[k].count);
		for (i = le.off[k]; i < le.off[k + 1]; i++) {
			const struct idx_elem *e = &tl.elems[le.elems[i]];

			ck_assert_mem_eq(&le.vals[i], e, sizeof *e);
			ck_assert_int_lt(e->free_ev, 0);
			ck_assert_uint_eq(an_site_of(&t, e->stack),
			    l.sites[k].site);
			if (i > le.off[k])
				ck_assert_int_gt(e->alloc_ev,
				    tl.elems[le.elems[i - 1]].alloc_ev);
			bytes += e->size;
		}
		ck_assert_uint_eq(bytes, l.sites[k].bytes);
	}
	/* the per-step site: first and last leaked allocation */
	ck_assert_int_eq(tl.elems[le.elems[le.off[0]]].alloc_ev,
	    l.sites[0].first_ev);
	ck_assert_int_eq(tl.elems[le.elems[le.off[1] - 1]].alloc_ev,
	    l.sites[0].last_ev);
	an_leak_elems_destroy(&le);
	an_leaks_destroy(&l);
	an_sites_destroy(&t);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

/* ---- frame rules and C++ names ---------------------------------------- */

START_TEST(test_frame_rules)
{
	char buf[128];

	ck_assert_int_eq(an_frame_kind("f", "/env/dist-packages/x/y.py"),
	    AN_FRAME_FRAMEWORK);
	ck_assert_int_eq(an_frame_kind("f", "/home/u/x.py"), AN_FRAME_USER);
	ck_assert_int_eq(an_frame_kind("torch::unwind::unwind()", "??"),
	    AN_FRAME_FILTERED);
	ck_assert_int_eq(an_cpp_role("c10::cuda::CUDACachingAllocator::Native::"
	    "DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)"),
	    AN_CPP_SKIP);
	ck_assert_int_eq(an_cpp_role("c10_npu::NPUCachingAllocator::malloc()"),
	    AN_CPP_SKIP);
	ck_assert_int_eq(an_cpp_role("at::_ops::bmm::redispatch(c10::"
	    "DispatchKeySet, at::Tensor const&, at::Tensor const&)"),
	    AN_CPP_OP);
	ck_assert_int_eq(an_cpp_role("torch::autograd::generated::"
	    "BmmBackward0::apply(std::vector<at::Tensor>&&)"), AN_CPP_NODE);
	ck_assert_int_eq(an_cpp_role("torch::autograd::generated::"
	    "BmmBackward0_apply_functional(std::vector<at::Tensor>&&)"),
	    AN_CPP_SKIP);
	ck_assert_int_eq(an_cpp_role("torch::autograd::Node::operator()("
	    "std::vector<at::Tensor>&&)"), AN_CPP_SKIP);
	ck_assert_int_eq(an_cpp_role("at::cuda::getNewWorkspace()"),
	    AN_CPP_WORKSPACE);
	ck_assert_int_eq(an_cpp_role("at::native::clone(at::Tensor const&)"),
	    AN_CPP_NAMED);
	ck_assert_str_eq(an_cpp_op_name("at::_ops::sum_dim_IntList::call("
	    "at::Tensor const&)", buf, sizeof buf), "at::sum");
	ck_assert_str_eq(an_cpp_op_name("at::_ops::empty_memory_format::call()",
	    buf, sizeof buf), "at::empty");
	ck_assert_str_eq(an_cpp_op_name("at::_ops::pow_Tensor_Scalar::call()",
	    buf, sizeof buf), "at::pow");
	ck_assert_str_eq(an_cpp_op_name("at::_ops::add__Tensor::call()", buf,
	    sizeof buf), "at::add_");
	ck_assert_str_eq(an_cpp_op_name("at::_ops::new_empty_strided::call()",
	    buf, sizeof buf), "at::new_empty_strided");
	ck_assert_str_eq(an_cpp_op_name("at::_ops::bmm::call("
	    "at::Tensor const&)", buf, sizeof buf), "at::bmm");
	ck_assert_str_eq(an_cpp_node_name("torch::autograd::AccumulateGrad::"
	    "apply(std::vector<at::Tensor>&&)", buf, sizeof buf),
	    "AccumulateGrad");
	ck_assert_str_eq(an_cpp_short_name("torch::autograd::InputMetadata::"
	    "reduce_grad(at::Tensor&) const", buf, sizeof buf),
	    "InputMetadata::reduce_grad");
	ck_assert_str_eq(an_cpp_short_name("at::Tensor at::_sum_to<c10::SymInt>"
	    "(at::Tensor, c10::ArrayRef<c10::SymInt>, bool)", buf, sizeof buf),
	    "at::_sum_to<c10::SymInt>");
	/* traits */
	ck_assert(an_frame_traits("step", "/p/cs336_basics/optimizer.py") &
	    AN_TR_STEP);
	ck_assert(!(an_frame_traits("step", "/p/train.py") & AN_TR_STEP));
	ck_assert(an_frame_traits("_multi_tensor_adam",
	    "/e/site-packages/torch/optim/adam.py") & AN_TR_OPTIM);
	ck_assert(an_frame_traits("torch::autograd::Engine::thread_main()",
	    "??") & AN_TR_BACKWARD);
	ck_assert(an_frame_traits("torch::autograd::AccumulateGrad::apply()",
	    "??") & AN_TR_ACCGRAD);
	ck_assert(an_frame_traits("_apply",
	    "C:\\py\\Lib\\site-packages\\torch\\nn\\modules\\module.py") &
	    AN_TR_CONSTRUCT);
	ck_assert(an_frame_traits("_call_impl",
	    "C:\\py\\Lib\\site-packages\\torch\\nn\\modules\\module.py") &
	    AN_TR_MODULE);
	ck_assert(an_frame_traits("forward", "/home/a/model.py") &
	    AN_TR_MODULE);
	ck_assert(!(an_frame_traits("_call_impl", "/home/a/model.py") &
	    AN_TR_MODULE));
	ck_assert(!(an_frame_traits("run", "/home/a/infer.py") &
	    AN_TR_MODULE));
	ck_assert(an_frame_traits("f", "<frozen runpy>") == 0);
}
END_TEST

START_TEST(test_site_cpp)
{
	struct snapshot *s = snap_new();
	struct an_sites t;
	struct an_stack_site ss;
	uint32_t bmm, acc, red, ws, alloc_only, fr[4];
	char buf[256];

	bmm = engine_stack(s, "at::_ops::bmm::call(at::Tensor const&, "
	    "at::Tensor const&)", "torch::autograd::generated::BmmBackward0::"
	    "apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)");
	acc = engine_stack(s, "at::_ops::new_empty_strided::call(c10::ArrayRef"
	    "<c10::SymInt>)", "torch::autograd::AccumulateGrad::apply(std::"
	    "vector<at::Tensor, std::allocator<at::Tensor> >&&)");
	/* no node: the op and the function that called it */
	red = engine_stack(s, "at::_ops::sum_dim_IntList::call(at::Tensor "
	    "const&)", "torch::autograd::InputMetadata::reduce_grad("
	    "at::Tensor&) const");
	fr[0] = frame(s, "??", "torch::unwind::unwind()", 0);
	fr[1] = frame(s, "CUDABlas.cpp", "at::cuda::getNewWorkspace()", 0);
	fr[2] = frame(s, "??", "at::cuda::getCurrentCUDABlasHandle()", 0);
	fr[3] = frame(s, "??", "at::native::addmm_out_cuda_impl()", 0);
	ws = snap_intern_stack(s, fr, 4);
	/* allocator frames only: never named by the allocator */
	fr[1] = frame(s, "CUDACachingAllocator.cpp", "c10::cuda::"
	    "CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
	    "unsigned long, CUstream_st*)", 0);
	fr[2] = frame(s, "??", "std::_Function_handler<void ()>::_M_invoke()",
	    0);
	fr[3] = frame(s, "??", "start_thread", 0);
	alloc_only = snap_intern_stack(s, fr, 4);
	ck_assert_int_eq(an_sites_init(&t, s, 3, NULL, NULL), 0);
	ck_assert_str_eq(an_site_label(&t, an_site_of(&t, bmm), buf,
	    sizeof buf), "BmmBackward0 -> at::bmm");
	ck_assert_int_eq(an_site_kind(&t, an_site_of(&t, bmm)), AN_SITE_CPP);
	ck_assert_str_eq(an_site_label(&t, an_site_of(&t, acc), buf,
	    sizeof buf), "AccumulateGrad -> at::new_empty_strided");
	ck_assert_str_eq(an_site_label(&t, an_site_of(&t, red), buf,
	    sizeof buf), "InputMetadata::reduce_grad -> at::sum");
	ck_assert_str_eq(an_site_label(&t, an_site_of(&t, ws), buf,
	    sizeof buf), "getNewWorkspace");
	an_site_label(&t, an_site_of(&t, alloc_only), buf, sizeof buf);
	ck_assert_ptr_null(strstr(buf, "Allocator"));
	/* different ops of one node are different sites */
	ck_assert_uint_ne(an_site_of(&t, bmm), an_site_of(&t, acc));
	/* the viewer's stateless form agrees and gives positions */
	an_stack_site(s, bmm, &ss);
	ck_assert_int_eq(ss.kind, AN_SITE_CPP);
	ck_assert_uint_eq(ss.pos, 6);
	ck_assert_uint_eq(ss.aux_pos, 5);
	an_sites_destroy(&t);
	snap_free(s);
}
END_TEST

/* ---- the replay's size rule --------------------------------------------- */

static struct snapshot *
build_sizes(uint64_t block, int npu_flag, int with_block)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint64_t a = 0x7f0000000000ull;
	int i;

	if (with_block) {
		struct snap_segment *sg = snap_push_segment(s);
		struct snap_block *b;

		memset(sg, 0, sizeof *sg);
		sg->addr = 0x7e0000000000ull;
		sg->total_size = 2u << 20;
		sg->first_block = 0;
		sg->n_blocks = 2;
		for (i = 0; i < 2; i++) {
			b = snap_push_block(s);
			memset(b, 0, sizeof *b);
			b->addr = sg->addr + (uint64_t)i * block;
			b->size = i ? (2u << 20) - block : block;
			b->requested_size = 16384;
			b->state = i ? SNAP_BLOCK_INACTIVE
				     : SNAP_BLOCK_ACTIVE_ALLOCATED;
		}
	}
	/* requests carved one after another from one free block */
	for (i = 0; i < 100 && block > 0; i++)
		snap_trace_push(s, t, SNAP_ALLOC, a + (uint64_t)i * block,
		    16384, 0, 0);
	if (npu_flag)
		s->features |= SNAP_F_NPU;
	snap_finish(s);
	return s;
}

START_TEST(test_round_rule)
{
	struct replay_round_evidence ev;
	struct snapshot *s;

	ck_assert_uint_eq(replay_round_size(REPLAY_ROUND_NPU, 16384), 16896);
	ck_assert_uint_eq(replay_round_size(REPLAY_ROUND_CUDA, 16384), 16384);
	ck_assert_uint_eq(replay_round_size(REPLAY_ROUND_CUDA, 1), 512);
	ck_assert_uint_eq(replay_round_size(REPLAY_ROUND_NPU, 480), 512);
	ck_assert_uint_eq(replay_round_size(REPLAY_ROUND_NPU, 481), 1024);
	/* the trace's gaps alone */
	s = build_sizes(16896, 0, 0);
	ck_assert_int_eq(replay_round_detect(s, 0, &ev), REPLAY_ROUND_NPU);
	ck_assert(ev.scanned);
	ck_assert_uint_gt(ev.npu_gaps, 0);
	ck_assert_uint_eq(ev.cuda_gaps, 0);
	snap_free(s);
	s = build_sizes(16384, 1, 0);
	ck_assert_int_eq(replay_round_detect(s, 0, &ev), REPLAY_ROUND_CUDA);
	ck_assert_uint_gt(ev.cuda_gaps, 0);
	snap_free(s);
	/* a live block of each */
	s = build_sizes(16896, 0, 1);
	ck_assert_int_eq(replay_round_detect(s, 0, &ev), REPLAY_ROUND_NPU);
	ck_assert_uint_eq(ev.npu_blocks, 1);
	snap_free(s);
	/* no evidence: the file's flag */
	s = build_sizes(0, 1, 0);
	ck_assert_int_eq(replay_round_detect(s, 0, &ev), REPLAY_ROUND_NPU);
	ck_assert(ev.npu_flag);
	snap_free(s);
	s = build_sizes(0, 0, 0);
	ck_assert_int_eq(replay_round_detect(s, 0, NULL), REPLAY_ROUND_CUDA);
	snap_free(s);
	/* two devices: each by its own trace */
	s = snap_new();
	{
		struct snap_trace *t0 = snap_trace_get(s, 0);
		struct snap_trace *t1;
		uint64_t a = 0x7f0000000000ull;
		int i;

		for (i = 0; i < 100; i++)
			snap_trace_push(s, t0, SNAP_ALLOC, a + (uint64_t)i *
			    16896, 16384, 0, 0);
		t1 = snap_trace_get(s, 1);
		for (i = 0; i < 100; i++)
			snap_trace_push(s, t1, SNAP_ALLOC, a + (uint64_t)i *
			    16384, 16384, 0, 0);
	}
	snap_finish(s);
	ck_assert_int_eq(replay_round_detect(s, 0, NULL), REPLAY_ROUND_NPU);
	ck_assert_int_eq(replay_round_detect(s, 1, NULL), REPLAY_ROUND_CUDA);
	snap_free(s);
}
END_TEST

/* an_top_state on the replayed state equals an_top on the timeline, at
 * events spread over each generated fixture (a site's blocks freed in
 * the trace and allocated before it, apart in an_top, counted with it:
 * a state cannot tell them). */
static const char *const top_fixtures[] = {"leak", "frag", "expandable",
    "oom", "multi", "wrapped", "npu", "graphs"};

/* The simulated state at an event (an_whatif_walk) is the same however
 * the walk got there: straight from the start, forward from an earlier
 * event, or started again after a move back; at the last event it has
 * the end figures of an_whatif()'s column of the same settings. */
static void
state_eq(const struct replay_state *a, const struct replay_state *b,
    int64_t at)
{
	uint32_t i;

	ck_assert_int_eq(a->at, at);
	ck_assert_int_eq(b->at, at);
	ck_assert_uint_eq(a->n_segments, b->n_segments);
	ck_assert_uint_eq(a->n_blocks, b->n_blocks);
	ck_assert_uint_eq(a->reserved, b->reserved);
	ck_assert_uint_eq(a->allocated, b->allocated);
	for (i = 0; i < a->n_segments; i++) {
		ck_assert_uint_eq(a->segments[i].addr, b->segments[i].addr);
		ck_assert_uint_eq(a->segments[i].size, b->segments[i].size);
		ck_assert_uint_eq(a->segments[i].n_blocks,
		    b->segments[i].n_blocks);
	}
	for (i = 0; i < a->n_blocks; i++) {
		ck_assert_uint_eq(a->blocks[i].addr, b->blocks[i].addr);
		ck_assert_uint_eq(a->blocks[i].size, b->blocks[i].size);
		ck_assert_uint_eq(a->blocks[i].state, b->blocks[i].state);
		ck_assert_int_eq(a->blocks[i].alloc_ev, b->blocks[i].alloc_ev);
	}
}

START_TEST(test_whatif_walk)
{
	static const char *const confs[] = {"expandable_segments:True",
	    "max_split_size_mb:40", ""};
	char path[1024], why[200];
	struct snapshot *s;
	struct sv_error err;
	struct replay *r;
	struct sim_conf c;
	struct an_whatif_walk *k, *fresh;
	struct an_whatif_opts o;
	struct an_whatif w;
	int64_t n, order[5];
	const struct replay_state *st;
	uint64_t reserved = 0, segs = 0;
	uint32_t i;

	snprintf(path, sizeof path, "%s/tests/data/gen/frag.pickle",
	    TOP_SRCDIR);
	ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0, "%s: %s",
	    path, err.msg);
	r = replay_new(s, 0, &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	ck_assert_int_eq(simconf_parse(confs[_i], &c, why, sizeof why), 0);
	n = (int64_t)snap_trace_of(s, 0)->n;
	ck_assert_int_gt(n, 100);
	order[0] = n / 3;
	order[1] = n - 1;
	order[2] = n / 5;	/* back: started again */
	order[3] = (2 * n) / 3;	/* forward from there */
	order[4] = -1;
	k = an_whatif_walk_new(s, 0, r, &c, 0, &err);
	ck_assert_msg(k != NULL, "%s", err.msg);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(an_whatif_walk_seek(k, order[i], &err), 0);
		st = an_whatif_walk_state(k);
		if (order[i] == n - 1) {
			reserved = st->reserved;
			segs = st->n_segments;
		}
		fresh = an_whatif_walk_new(s, 0, r, &c, 0, &err);
		ck_assert_msg(fresh != NULL, "%s", err.msg);
		ck_assert_int_eq(an_whatif_walk_seek(fresh, order[i], &err), 0);
		/* k's state stays valid: fresh has its own */
		state_eq(an_whatif_walk_state(fresh), st, order[i]);
		an_whatif_walk_free(fresh);
	}
	/* a move back costs the events from the start, no more */
	ck_assert_uint_eq(an_whatif_walk_events(k),
	    (uint64_t)(n / 3 + 1) + (uint64_t)(n - 1 - n / 3) +
	    (uint64_t)(n / 5 + 1) + (uint64_t)((2 * n) / 3 - n / 5));
	an_whatif_walk_free(k);
	memset(&o, 0, sizeof o);
	o.confs = &c;
	o.n_confs = 1;
	o.no_steps = 1;
	ck_assert_int_eq(an_whatif(s, 0, r, &o, &w, &err), 0);
	ck_assert_uint_eq(w.cols[1].end_reserved, reserved);
	ck_assert_uint_eq(w.cols[1].end_segments, segs);
	an_whatif_destroy(&w);
	replay_free(r);
	snap_free(s);
}
END_TEST

/* Every category's tree in one pass (an_top_categories) is the tree of
 * an_top_category over each, node for node, and the totals are
 * an_categories_at's, at four events of each fixture. */
START_TEST(test_top_categories)
{
	char path[1024];
	struct snapshot *s;
	struct sv_error err;
	struct idx_timeline tl;
	struct an_sites t;
	struct an_categories cats;
	uint32_t d;
	int64_t at;

	snprintf(path, sizeof path, "%s/tests/data/gen/%s.pickle", TOP_SRCDIR,
	    top_fixtures[_i]);
	ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0, "%s: %s",
	    path, err.msg);
	d = snap_default_device(s);
	ck_assert_int_eq(idx_timeline_build(s, d, &tl, &err), 0);
	ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
	ck_assert_int_eq(an_categories_build(s, &tl, NULL, NULL, &cats, &err),
	    0);
	for (at = -2; at < (int64_t)tl.n_events;
	    at += (int64_t)tl.n_events / 3 + 1) {
		struct an_top all[AN_CAT_COUNT], one;
		struct an_cat_totals ct, want;
		unsigned c;
		uint32_t k;

		an_top_categories(&tl, &t, &cats, at, 2, all, &ct);
		an_categories_at(&tl, &cats, at, &want);
		ck_assert_int_eq(ct.at, want.at);
		ck_assert_uint_eq(ct.total_bytes, want.total_bytes);
		ck_assert_uint_eq(ct.total_count, want.total_count);
		for (c = 0; c < AN_CAT_COUNT; c++) {
			ck_assert_uint_eq(ct.bytes[c], want.bytes[c]);
			ck_assert_uint_eq(ct.count[c], want.count[c]);
			an_top_category(&tl, &t, &cats, c, at, 2, &one);
			ck_assert_uint_eq(all[c].bytes, one.bytes);
			ck_assert_uint_eq(all[c].count, ct.count[c]);
			ck_assert_uint_eq(all[c].n_nodes, one.n_nodes);
			ck_assert_uint_eq(all[c].n_roots, one.n_roots);
			for (k = 0; k < one.n_nodes; k++) {
				ck_assert_uint_eq(all[c].nodes[k].site,
				    one.nodes[k].site);
				ck_assert_uint_eq(all[c].nodes[k].frame,
				    one.nodes[k].frame);
				ck_assert_uint_eq(all[c].nodes[k].bytes,
				    one.nodes[k].bytes);
				ck_assert_uint_eq(all[c].kid_off[k + 1],
				    one.kid_off[k + 1]);
			}
			for (k = 0; k < one.kid_off[one.n_nodes]; k++)
				ck_assert_uint_eq(all[c].kids[k], one.kids[k]);
			for (k = 0; k < one.n_roots; k++)
				ck_assert_uint_eq(all[c].roots[k],
				    one.roots[k]);
			an_top_destroy(&one);
			an_top_destroy(&all[c]);
		}
	}
	an_categories_destroy(&cats);
	an_sites_destroy(&t);
	idx_timeline_destroy(&tl);
	snap_free(s);
}
END_TEST

START_TEST(test_top_state_matches)
{
	char path[1024];
	struct snapshot *s;
	struct sv_error err;
	uint32_t d, n_dev;

	snprintf(path, sizeof path, "%s/tests/data/gen/%s.pickle", TOP_SRCDIR,
	    top_fixtures[_i]);
	ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0, "%s: %s",
	    path, err.msg);
	n_dev = snap_device_count(s);
	for (d = 0; d < n_dev; d++) {
		struct idx_timeline tl;
		struct an_sites t;
		struct replay *r;
		int64_t at, step;

		if (snap_trace_of(s, d) == NULL || snap_trace_of(s, d)->n == 0)
			continue;
		ck_assert_int_eq(idx_timeline_build(s, d, &tl, &err), 0);
		ck_assert_int_eq(an_sites_init(&t, s, 1, NULL, NULL), 0);
		r = replay_new(s, d, &err);
		ck_assert_msg(r != NULL, "%s: %s", path, err.msg);
		step = (int64_t)tl.n_events / 7 + 1;
		for (at = -1; at < (int64_t)tl.n_events; at += step) {
			struct an_top a, b;
			uint32_t k;

			ck_assert_int_eq(replay_seek(r, at, &err), 0);
			an_top(&tl, &t, at, 1, &a);
			an_top_state(replay_state(r), d, &t, 1, &b);
			ck_assert_msg(a.bytes == b.bytes && a.count == b.count,
			    "%s dev %u at %lld: timeline %llu B in %llu, "
			    "state %llu B in %llu", top_fixtures[_i], d,
			    (long long)at, (unsigned long long)a.bytes,
			    (unsigned long long)a.count,
			    (unsigned long long)b.bytes,
			    (unsigned long long)b.count);
			/* same sites with the same bytes (ties in bytes may
			 * come in another order) */
			for (k = 0; k < b.n_roots; k++) {
				const struct an_top_node *y, *x;
				uint64_t bytes = 0, count = 0;
				uint32_t j;

				y = &b.nodes[b.roots[k]];
				ck_assert(!y->free_stack);
				for (j = 0; j < a.n_roots; j++) {
					x = &a.nodes[a.roots[j]];
					if (x->site != y->site)
						continue;
					bytes += x->bytes;
					count += x->count;
				}
				ck_assert_uint_eq(bytes, y->bytes);
				ck_assert_uint_eq(count, y->count);
				if (k > 0)
					ck_assert_uint_ge(
					    b.nodes[b.roots[k - 1]].bytes,
					    b.nodes[b.roots[k]].bytes);
			}
			an_top_destroy(&a);
			an_top_destroy(&b);
		}
		replay_free(r);
		an_sites_destroy(&t);
		idx_timeline_destroy(&tl);
	}
	snap_free(s);
}
END_TEST

/* ---- the counts of a build's encoder ---------------------------------- */

static int
counts_eq(const struct an_ev_counts *a, const struct an_ev_counts *b)
{
	return a->events == b->events && a->streams == b->streams &&
	    memcmp(a->by_action, b->by_action, sizeof a->by_action) == 0 &&
	    a->has_time == b->has_time && (!a->has_time ||
	    (a->time_first == b->time_first && a->time_last == b->time_last));
}

/* The counts as an_ev_counts() defines them, event by event through
 * the accessors. */
static void
counts_ref(const struct snapshot *s, uint32_t d, struct an_ev_counts *c)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	uint64_t seen[64], i;
	uint32_t g, gend, k, n = 0;

	memset(c, 0, sizeof *c);
	snap_device_segments(s, d, &g, &gend);
	for (i = 0; i < (uint64_t)gend - g + (t != NULL ? t->n : 0); i++) {
		uint64_t st;

		if (i < (uint64_t)gend - g) {
			if (s->segments[g + i].device != d)
				continue;
			st = s->segments[g + i].stream;
		} else {
			uint64_t e = i - (gend - g);
			unsigned a = snap_ev_action(t, e);
			int64_t tm = snap_ev_time(t, e);

			c->by_action[a < SNAP_ACTION_COUNT ? a
			    : SNAP_ACTION_COUNT]++;
			st = snap_ev_stream(t, e);
			if (snap_trace_has_time(t) && tm != SNAP_NO_TIME) {
				if (!c->has_time || tm < c->time_first)
					c->time_first = tm;
				if (!c->has_time || tm > c->time_last)
					c->time_last = tm;
				c->has_time = 1;
			}
		}
		for (k = 0; k < n && seen[k] != st; k++)
			;
		if (k == n) {
			ck_assert_uint_lt(n, 64);
			seen[n++] = st;
		}
	}
	c->events = t != NULL ? t->n : 0;
	c->streams = n;
}

/* What the sections of one open saw (written on their threads, read
 * after idx_open() has joined them). */
static struct {
	unsigned devices, known, usable, wrong, guard_wrong;
} tally_seen;

static int
tally_section(const struct sv_index *ix, void *arg, uint8_t **data,
    size_t *len, struct sv_error *err)
{
	const struct snapshot *s = idx_snapshot(ix);
	uint32_t d;

	(void)arg;
	(void)err;
	for (d = 0; d < snap_device_count(s); d++) {
		const struct idx_ev_tally *t = idx_ev_tally(ix, d);
		const struct snap_trace *tr = snap_trace_of(s, d);
		struct idx_ev_tally bad;
		struct an_ev_counts pass, from;

		if (idx_timeline(ix, d) == NULL)
			continue;
		tally_seen.devices++;
		tally_seen.known += t != NULL;
		tally_seen.usable += t != NULL && !t->streams_over &&
		    t->events == (tr != NULL ? tr->n : 0);
		an_ev_counts(s, d, &pass);
		counts_ref(s, d, &from);
		tally_seen.wrong += !counts_eq(&pass, &from);
		an_ev_counts_from(s, d, t, &from);
		tally_seen.wrong += !counts_eq(&pass, &from);
		if (t == NULL)
			continue;
		/* a tally that cannot answer is not read: its counts zeroed,
		 * reading it would give them */
		bad = *t;
		memset(bad.by_action, 0, sizeof bad.by_action);
		bad.events++;
		an_ev_counts_from(s, d, &bad, &from);
		tally_seen.guard_wrong += !counts_eq(&pass, &from);
		bad.events--;
		bad.streams_over = 1;
		bad.n_streams = 0;
		an_ev_counts_from(s, d, &bad, &from);
		tally_seen.guard_wrong += !counts_eq(&pass, &from);
	}
	*data = xmalloc(1);
	**data = 1;
	*len = 1;
	return 0;
}

/* A snapshot whose device 0 names more streams than a tally keeps, and
 * whose device 1 has an unknown action and time on some events only. */
static int
tally_model(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t0, *t1;
	uint64_t k;

	(void)path;
	(void)lo;
	(void)err;
	s->features = SNAP_F_DICT | SNAP_F_DEVICE_TRACES | SNAP_F_TIME_US;
	s->protocol = 4;
	t0 = snap_trace_get(s, 0);
	for (k = 0; k < 2 * (IDX_TALLY_STREAMS + 2); k++)
		snap_trace_push(s, t0, k % 2 ? SNAP_FREE_COMPLETED : SNAP_ALLOC,
		    0x1000, 512, k / 2, 0);
	t1 = snap_trace_get(s, 1);
	for (k = 0; k < 40; k++) {
		snap_trace_push(s, t1, k % 2 ? SNAP_FREE_COMPLETED : SNAP_ALLOC,
		    0x2000, 512, k % 3, 0);
		if (k % 4 == 1)
			snap_trace_set_time(t1, t1->n - 1, 5000 - (int64_t)k);
	}
	snap_trace_push(s, t1, snap_action_lookup(s, "mystery", 7), 1, 2, 0,
	    0);
	*out = s;
	return 0;
}

/* Opens path with the sections secs[0, n) (an index in dir), loaded by
 * load (NULL: the file). */
static void
tally_open(const char *path, const char *dir,
    const struct idx_section_builder *secs, size_t n,
    int (*load)(const char *, const struct snap_load_opts *,
	struct snapshot **, struct sv_error *))
{
	struct idx_opts o;
	struct sv_error err;
	struct sv_index *ix;

	memset(&o, 0, sizeof o);
	o.load = load;
	o.cache_dir = dir;
	o.sections = secs;
	o.n_sections = n;
	memset(&tally_seen, 0, sizeof tally_seen);
	ck_assert_msg(idx_open(path, &o, &ix, &err) == 0, "%s: %s", path,
	    err.msg);
	idx_close(ix);
}

/* The counts the summary takes from what the build's encoder counted,
 * and those of the pass over the stripes, are what the accessors read,
 * on every fixture (generated and real); the tally is there for every
 * device the sections built after the parse see, and not for one given
 * its sections later. */
START_TEST(test_ev_counts_tally)
{
	static const char *const sub[] = {"gen", "real"};
	const struct idx_section_builder secs[2] = {
	    {.name = "test.tally", .build_index = tally_section},
	    {.name = "test.later", .build_index = tally_section}};
	char path[1024], dir[] = "/tmp/sv-tally-XXXXXX", cmd[1100];
	unsigned files = 0, k;
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (k = 0; k < 2; k++) {
		struct dirent *de;
		DIR *dp;

		snprintf(path, sizeof path, "%s/tests/data/%s", TOP_SRCDIR,
		    sub[k]);
		dp = opendir(path);
		ck_assert_msg(dp != NULL, "%s", path);
		while ((de = readdir(dp)) != NULL) {
			size_t l = strlen(de->d_name);

			if (l < 8 || strcmp(de->d_name + l - 7, ".pickle"))
				continue;
			snprintf(path, sizeof path, "%s/tests/data/%s/%s",
			    TOP_SRCDIR, sub[k], de->d_name);
			tally_open(path, dir, secs, 1, NULL);
			ck_assert_msg(tally_seen.devices > 0, "%s", path);
			ck_assert_uint_eq(tally_seen.known,
			    tally_seen.devices);
			ck_assert_uint_eq(tally_seen.usable,
			    tally_seen.devices);
			ck_assert_msg(tally_seen.wrong == 0, "%s", path);
			ck_assert_msg(tally_seen.guard_wrong == 0, "%s",
			    path);
			/* reopened: only the later section is built */
			tally_open(path, dir, secs, 2, NULL);
			ck_assert_msg(tally_seen.devices > 0, "%s", path);
			ck_assert_uint_eq(tally_seen.known, 0);
			ck_assert_msg(tally_seen.wrong == 0, "%s", path);
			files++;
		}
		closedir(dp);
	}
	ck_assert_uint_ge(files, 20);
	/* too many streams: the pass; an unknown action, some times */
	snprintf(path, sizeof path, "%s/model", dir);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("model", fp);
	ck_assert_int_eq(fclose(fp), 0);
	tally_open(path, dir, secs, 1, tally_model);
	ck_assert_uint_eq(tally_seen.devices, 2);
	ck_assert_uint_eq(tally_seen.known, 2);
	ck_assert_uint_eq(tally_seen.usable, 1);
	ck_assert_uint_eq(tally_seen.wrong, 0);
	ck_assert_uint_eq(tally_seen.guard_wrong, 0);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *
analysis_suite(void)
{
	Suite *s = suite_create("analysis");
	TCase *tc = tcase_create("core");

	/* no wall-clock limit (Check's default is 4 s): machines are shared */
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_framework_frames);
	tcase_add_test(tc, test_site_resolution);
	tcase_add_test(tc, test_site_no_user_frame);
	tcase_add_test(tc, test_frame_rules);
	tcase_add_test(tc, test_site_cpp);
	analysis_steps_tests(tc);
	analysis_categories_tests(tc);
	tcase_add_test(tc, test_round_rule);
	tcase_add_test(tc, test_ranking_annotations);
	tcase_add_test(tc, test_ranking_periodicity);
	tcase_add_test(tc, test_top);
	tcase_add_test(tc, test_leak_elems);
	tcase_add_loop_test(tc, test_whatif_walk, 0, 3);
	tcase_add_loop_test(tc, test_top_categories, 0,
	    (int)(sizeof top_fixtures / sizeof top_fixtures[0]));
	tcase_add_loop_test(tc, test_top_state_matches, 0,
	    (int)(sizeof top_fixtures / sizeof top_fixtures[0]));
	tcase_add_test(tc, test_ev_counts_tally);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(analysis_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
