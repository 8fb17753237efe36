/*
 * Fixtures of the analysis' unit tests (analysis_fix.h).
 */
#include "config.h"

#include "analysis_fix.h"

uint32_t
frame(struct snapshot *s, const char *file, const char *name, uint64_t line)
{
	return snap_intern_frame(s, snap_intern_str(s, name, strlen(name)),
	    snap_intern_str(s, file, strlen(file)), line);
}

/* Frames of the autograd engine's thread, innermost first, ending with
 * the node and op given. */
uint32_t
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

void
annotate(struct snapshot *s, const char *name, int stage, int64_t time)
{
	struct snap_annotation an;

	memset(&an, 0, sizeof an);
	an.name = snap_intern_str(s, name, strlen(name));
	an.stage = (uint8_t)stage;
	an.time_us = time;
	snap_push_annotation(s, &an);
}
