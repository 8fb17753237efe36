#ifndef SNAPVIEW_ANALYSIS_SITE_H
#define SNAPVIEW_ANALYSIS_SITE_H
/*
 * Call sites: where user code asked for memory.
 *
 * A stack is innermost first and starts, with stacks='all', with C++
 * frames, then PyTorch's own Python. The frame rules are frame.h's. The
 * call site is the first user frame (not framework, not filtered): what
 * users mean by "the line that allocated". With frames = K the site is
 * the first K user frames (site, caller, ...); with a regex, the path
 * starts at the first frame whose "filename:line name" matches instead.
 *
 * A stack with no user frame is named by what a person recognises:
 *   - its innermost Python frame that memory_viz shows (framework code
 *     run without user code around it), else
 *   - a cuBLAS/cuDNN workspace frame ("getNewWorkspace"), else
 *   - the innermost autograd node and the operator it called
 *     ("BmmBackward0 -> at::bmm": gradients are made on the autograd
 *     engine's thread, whose stacks hold no Python frame), else
 *   - the outermost operator and the function that called it
 *     ("InputMetadata::reduce_grad -> at::sum"), else
 *   - its first C++ function that is no allocator, unwinding or dispatch
 *     frame, else its first frame memory_viz shows, else its first frame.
 * An empty stack is the site "<no stack>".
 *
 * Sites are interned per table: an id indexes the table's paths. The
 * table caches the site of every stack id, so resolving an event is O(1)
 * after the first time its stack is seen.
 */
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/frame.h"
#include "snapshot/snap_model.h"
#include "util/err.h"
#include "util/u64map.h"

#define AN_SITE_MAX_FRAMES 64

enum an_site_kind {
	AN_SITE_NONE,	/* the empty stack */
	AN_SITE_USER,	/* user frames */
	AN_SITE_PYTHON,	/* a framework Python frame */
	AN_SITE_CPP,	/* a C++ name: node/workspace/function (+ op) */
	AN_SITE_FRAME	/* a frame as it is (--site-regex, fallback) */
};

/* The site of one stack, for a reader without a table (the viewer):
 * kind, the frame that names it and, for a C++ site, the operator frame
 * (UINT32_MAX when none), with their positions in the stack. */
struct an_stack_site {
	int kind;
	uint32_t frame, aux;
	uint32_t pos, aux_pos;
};
void an_stack_site(const struct snapshot *s, uint32_t stack,
    struct an_stack_site *out);

struct an_sites {
	const struct snapshot *s;   /* borrowed */
	uint32_t k;                 /* frames per site (>= 1) */
	int has_re;
	regex_t re;
	uint32_t *by_stack;         /* site id + 1 per stack; 0 = unresolved */
	/* Interned paths: site i is frames[off[i] .. off[i+1]). */
	uint32_t *off;
	uint32_t *frames;
	uint8_t *user;              /* site i: enum an_site_kind */
	uint32_t *aux;              /* site i: C++ operator frame, or
				       UINT32_MAX */
	struct an_frame_cache fc;
	uint32_t n, cap, cap_frames;
	struct u64map ids;          /* path hash -> site id */
};

/* Is frame f framework code (PyTorch, site-packages, C++, interpreter)
 * rather than user code? */
int an_frame_is_framework(const struct snapshot *s, uint32_t f);

/* Is frame f dropped by memory_viz's frame filter? */
int an_frame_filtered(const struct snapshot *s, uint32_t f);
/* Is frame f a caching allocator's own (frame.h, an_cpp_allocator)? */
int an_frame_allocator(const struct snapshot *s, uint32_t f);

/* Sets up a table for s (borrowed). k = 0 means 1. regex may be NULL;
 * a bad regex gives -1 with err set (SV_ERR_USAGE). */
int an_sites_init(struct an_sites *t, const struct snapshot *s, uint32_t k,
    const char *regex, struct sv_error *err);
void an_sites_destroy(struct an_sites *t);

/* Site id of a stack id. */
uint32_t an_site_of(struct an_sites *t, uint32_t stack);

/* The path from the site frame outward: up to max frame ids into out
 * (site first, then the user frames that called it). Returns the count
 * (0 for an empty stack). Independent of k. */
uint32_t an_site_path(struct an_sites *t, uint32_t stack, uint32_t *out,
    uint32_t max);

/* Frames of site id (borrowed): *n receives the count (0 = no stack). */
const uint32_t *an_site_frames(const struct an_sites *t, uint32_t site,
    uint32_t *n);

/* Does site id start at a user frame? */
int an_site_is_user(const struct an_sites *t, uint32_t site);
/* enum an_site_kind of site id; "user", "framework", "cpp", "frame",
 * "none" for JSON. */
int an_site_kind(const struct an_sites *t, uint32_t site);
const char *an_site_kind_name(int kind);

/* "filename:line name" of frame f into buf (raw file text: escape it
 * before printing). Returns buf. */
char *an_frame_label(const struct snapshot *s, uint32_t f, char *buf,
    size_t size);

/* Label of a site: its first frame's label, a C++ name
 * ("BmmBackward0 -> at::bmm"), or "<no stack>". */
char *an_site_label(const struct an_sites *t, uint32_t site, char *buf,
    size_t size);

#endif
