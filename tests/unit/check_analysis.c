/*
 * Unit tests of src/analysis: call-site resolution (C++, torch,
 * site-packages, Windows paths, memory_viz filter, --frames, regex, C++
 * names of stacks with no user frame), the frame rules, steps (profiler,
 * optimizer, pattern, malformed annotations), categories of a built
 * training step, of a forward pass with no backward, and user rules,
 * the leak ranking on a built snapshot, the leaked blocks per site, live
 * bytes by site from a replayed state against the same from the timeline
 * (generated fixtures), and the replay's size rule per device.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/category.h"
#include "analysis/frame.h"
#include "analysis/leaks.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "analysis/top.h"
#include "analysis/whatif.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"
#include "replay/replay_round.h"
#include "replay/simconf.h"
#include "snapshot/snap_load.h"
#include "snapshot/snap_model.h"
#include "util/stop.h"
#include "util/xalloc.h"

static uint32_t
frame(struct snapshot *s, const char *file, const char *name, uint64_t line)
{
	return snap_intern_frame(s, snap_intern_str(s, name, strlen(name)),
	    snap_intern_str(s, file, strlen(file)), line);
}

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

/* Frames of the autograd engine's thread, innermost first, ending with
 * the node and op given. */
static uint32_t
engine_stack(struct snapshot *s, const char *op, const char *node)
{
	uint32_t fr[9];

	fr[0] = frame(s, "??", "torch::unwind::unwind()", 0);
	fr[1] = frame(s, "memory_snapshot.cpp",
	    "torch::cuda::(anonymous namespace)::gather_with_cpp()", 0);
	fr[2] = frame(s, "CUDACachingAllocator.cpp", "c10::cuda::"
	    "CUDACachingAllocator::Native::DeviceCachingAllocator::malloc("
	    "unsigned long, CUstream_st*)", 0);
	fr[3] = frame(s, "??", "at::detail::empty_generic(c10::ArrayRef<long>)",
	    0);
	fr[4] = frame(s, "RegisterCUDA_0.cpp", "c10::impl::wrap_kernel_functor_"
	    "unboxed_<...>::call(c10::OperatorKernel*)", 0);
	fr[5] = frame(s, "??", op, 0);
	fr[6] = frame(s, "??", node, 0);
	fr[7] = frame(s, "??", "torch::autograd::Node::operator()(std::vector<"
	    "at::Tensor, std::allocator<at::Tensor> >&&)", 0);
	fr[8] = frame(s, "??", "torch::autograd::Engine::thread_main(std::"
	    "shared_ptr<torch::autograd::GraphTask> const&)", 0);
	return snap_intern_stack(s, fr, 9);
}

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

/* ---- steps ------------------------------------------------------------- */

static void
annotate(struct snapshot *s, const char *name, int stage, int64_t time)
{
	struct snap_annotation an;

	memset(&an, 0, sizeof an);
	an.name = snap_intern_str(s, name, strlen(name));
	an.stage = (uint8_t)stage;
	an.time_us = time;
	snap_push_annotation(s, &an);
}

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
	snap_trace_push(s, t, SNAP_ALLOC, A + 0x300000, 8192, 0, mod);	/* 5 */
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
	tcase_add_test(tc, test_categories_step);
	tcase_add_test(tc, test_categories_forward_only);
	tcase_add_test(tc, test_category_rules);
	tcase_add_test(tc, test_leaks_one_step);
	tcase_add_test(tc, test_round_rule);
	tcase_add_test(tc, test_ranking_annotations);
	tcase_add_test(tc, test_ranking_periodicity);
	tcase_add_test(tc, test_top);
	tcase_add_test(tc, test_leak_elems);
	tcase_add_loop_test(tc, test_whatif_walk, 0, 3);
	tcase_add_loop_test(tc, test_top_state_matches, 0,
	    (int)(sizeof top_fixtures / sizeof top_fixtures[0]));
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
