#ifndef SNAPVIEW_ANALYSIS_FRAME_H
#define SNAPVIEW_ANALYSIS_FRAME_H
/*
 * The frame rules: one place that says what a frame of a call stack is.
 * Call sites (site.h), categories (category.h) and the viewer's folding
 * of stacks (render/frames.c) all read frames through these rules.
 *
 * Kind, for folding and for finding user code:
 *   FILTERED  memory_viz's frame filter drops it (doc/snapshot-format.md
 *             §5): unwinding, CapturedTraceback, the interpreter's eval loop,
 *             dispatcher boxing and Register/Redispatch files;
 *   FRAMEWORK a C++ frame (filename "??", empty or not ending in .py), or
 *             Python under a torch, site-packages or dist-packages
 *             directory (either slash), or a <frozen ...> module;
 *   USER      any other Python frame.
 *
 * Role of a C++ frame, for naming a site with no user frame:
 *   SKIP      the allocator (CUDA, torch_npu, XPU caching allocators:
 *             an_cpp_allocator), unwinding and traceback capture,
 *             dispatcher plumbing (kernel wrappers, redispatch,
 *             VariableType, boxing), tensor factories and TensorIterator
 *             set-up, the autograd engine's loop, the interpreter, libc
 *             and std:: frames: nobody recognises a site by them;
 *   NODE      an autograd node's apply (torch::autograd::...::X::apply):
 *             named by X, e.g. BmmBackward0, AccumulateGrad;
 *   OP        an operator entry (at::_ops::X::call or ::redispatch):
 *             named at::X with the overload dropped, e.g. at::bmm;
 *   WORKSPACE a cuBLAS/cuDNN workspace (getNewWorkspace, ...);
 *   NAMED     any other function: named by its last two components.
 *
 * Traits feed the categories: which phase of a training step a frame
 * belongs to.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_model.h"

enum an_frame_kind { AN_FRAME_USER, AN_FRAME_FRAMEWORK, AN_FRAME_FILTERED };

enum an_cpp_role {
	AN_CPP_NAMED,
	AN_CPP_SKIP,
	AN_CPP_NODE,
	AN_CPP_OP,
	AN_CPP_WORKSPACE
};

#define AN_TR_PYTHON	0x0001	/* a Python frame */
#define AN_TR_CPP	0x0002	/* a C++ frame memory_viz keeps */
#define AN_TR_BACKWARD	0x0004	/* the engine, a node, backward */
#define AN_TR_ACCGRAD	0x0008	/* AccumulateGrad */
#define AN_TR_OPTIM	0x0010	/* torch/optim, a fused optimizer op */
#define AN_TR_STEP	0x0020	/* step() in a file named *optim* */
#define AN_TR_ZERO_GRAD	0x0040	/* zero_grad */
#define AN_TR_WORKSPACE	0x0080	/* cuBLAS/cuDNN workspace */
#define AN_TR_CONSTRUCT	0x0100	/* .to(), .cuda(), nn.init */
#define AN_TR_INIT	0x0200	/* a user __init__ */
#define AN_TR_MODULE	0x0400	/* a model's call: a module's
				   _call_impl, a forward */

enum an_frame_kind an_frame_kind(const char *name, const char *filename);
int an_cpp_role(const char *name);
/* Is name a caching allocator's own function (its malloc, free,
 * allocate, ...)? Such frames come first in every stack of an alloc or a
 * free; a view of every frame starts below them. */
int an_cpp_allocator(const char *name);
unsigned an_frame_traits(const char *name, const char *filename);

/* Short names (into buf, NUL-terminated, truncated to size; returns
 * buf): the node of a NODE frame ("BmmBackward0"), the operator of an
 * OP frame ("at::bmm"), and the last two components of a C++ function
 * name without its arguments ("InputMetadata::reduce_grad"). */
char *an_cpp_node_name(const char *name, char *buf, size_t size);
char *an_cpp_op_name(const char *name, char *buf, size_t size);
char *an_cpp_short_name(const char *name, char *buf, size_t size);

/* Per-snapshot cache of the rules, one entry per frame id (computed on
 * first use). */
struct an_frame_cache {
	const struct snapshot *s;	/* borrowed */
	uint32_t *info;			/* 0 = not yet (frame.c) */
	uint32_t n;
};

void an_frame_cache_init(struct an_frame_cache *c, const struct snapshot *s);
void an_frame_cache_destroy(struct an_frame_cache *c);
enum an_frame_kind an_frame_cache_kind(struct an_frame_cache *c, uint32_t f);
int an_frame_cache_role(struct an_frame_cache *c, uint32_t f);
unsigned an_frame_cache_traits(struct an_frame_cache *c, uint32_t f);

#endif
