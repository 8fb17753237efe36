#ifndef SNAPVIEW_ANALYSIS_CATEGORY_H
#define SNAPVIEW_ANALYSIS_CATEGORY_H
/*
 * What each allocation is for: parameter, gradient, optimizer state,
 * activation, temporary, workspace or other. One category per element of
 * a device's timeline (idx_tl_elem(tl, k), k < tl->n_elems).
 *
 * A user's rules come first: lines of `CATEGORY REGEX`, the regex
 * (POSIX extended) matched against every frame of the element's stack as
 * "filename:line name"; the first rule (in file order) that matches any
 * frame decides. Blank lines and lines starting with '#' are skipped.
 *
 * Then the inference, from the frames (stack traits) and the lifetime
 * against the step's phases (steps.h):
 *   - workspace: a cuBLAS/cuDNN workspace frame (getNewWorkspace, ...),
 *     a torch_npu workspace triple, or, in a stack with no C++ frame to
 *     tell, a never-freed allocation of cuBLAS's default workspace size
 *     (8,519,680 bytes);
 *   - gradient: an AccumulateGrad frame; or allocated in backward (the
 *     autograd engine, a *Backward* node, backward() in torch) and still
 *     alive after the step's last backward allocation; or, allocated
 *     before the trace, freed by zero_grad;
 *   - optimizer state: allocated in the optimizer phase (an
 *     Optimizer.step annotation window, or a torch/optim frame) and alive
 *     after it (its window's end; without a window, its step's end);
 *     allocated before the trace and freed there;
 *   - activation: allocated outside backward and the optimizer and freed
 *     by a backward stack; or still alive with no backward after it in
 *     the whole trace (the trace stopped before the backward), and in a
 *     trace with no backward at all (inference, a forward pass) allocated
 *     inside a model's call (AN_TR_MODULE: a module's _call_impl, a
 *     forward); allocated before the trace and freed in backward;
 *   - parameter: alive before the trace and never freed (with no frame
 *     saying otherwise), or allocated by model construction (a module's
 *     __init__, .to()/.cuda(), torch.nn.init, nn.Parameter) and alive
 *     into the first step or to the end;
 *   - temporary: allocated and freed within one phase of one step;
 *   - other: everything else (the data batch, a loss or a metric kept
 *     after a backward, allocations freed in a later step with no telling
 *     frame).
 * In a file whose stacks have no C++ frame (stacks="python"), an
 * allocation with an empty stack inside a step counts as made by the
 * autograd engine's thread (it holds no Python frame).
 */
#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/steps.h"
#include "index/idx_timeline.h"
#include "snapshot/snap_model.h"
#include "util/err.h"

enum an_category {
	AN_CAT_PARAMETER,
	AN_CAT_GRADIENT,
	AN_CAT_OPTIMIZER_STATE,
	AN_CAT_ACTIVATION,
	AN_CAT_TEMPORARY,
	AN_CAT_WORKSPACE,
	AN_CAT_OTHER,
	AN_CAT_COUNT
};

/* "parameter", "gradient", "optimizer_state", "activation", "temporary",
 * "workspace", "other" (JSON, rules files); NULL past the end. */
const char *an_category_name(unsigned c);
/* The same for text: "optimizer state". */
const char *an_category_label(unsigned c);
/* Category of a name (also "optimizer-state"), or -1. */
int an_category_lookup(const char *name, size_t len);

/* ---- user rules --------------------------------------------------------- */

struct an_cat_rule {
	uint8_t cat;
	uint32_t line;
	regex_t re;
};

struct an_cat_rules {
	struct an_cat_rule *r;
	uint32_t n;
};

#define AN_CAT_RULES_MAX 4096	/* rules per file */

/* Parses rules from text (len bytes; need not be NUL-terminated). On a
 * bad line returns -1 with err "line N: reason" (SV_ERR_FORMAT). */
int an_cat_rules_parse(const char *text, size_t len,
    struct an_cat_rules *out, struct sv_error *err);
/* Reads and parses the file at path (at most 1 MiB). */
int an_cat_rules_load(const char *path, struct an_cat_rules *out,
    struct sv_error *err);
void an_cat_rules_destroy(struct an_cat_rules *r);

/* ---- categories of a device --------------------------------------------- */

struct an_cat_work;

struct an_categories {
	uint32_t device;
	uint64_t n_elems;
	uint8_t *cat;		/* per element: enum an_category */
	uint64_t n_by_rule;	/* elements a user rule decided */
	int steps_source;	/* of the steps used (enum an_steps_source) */
	uint64_t n_steps;
	struct an_cat_work *work; /* between an_categories_begin and _end */
};

/* Category of every element of tl (device tl->device of s). steps may be
 * NULL: they are found here then. rules may be NULL. Gives up with -1
 * (SV_ERR_CANCELLED) when this thread is asked to stop (util/stop.h). */
int an_categories_build(const struct snapshot *s,
    const struct idx_timeline *tl, const struct an_steps *steps,
    const struct an_cat_rules *rules, struct an_categories *out,
    struct sv_error *err);
void an_categories_destroy(struct an_categories *c);

/* an_categories_build in three steps, for a caller that decodes every
 * element anyway (the timeline's category bands, in their pass over the
 * elements): _begin does all but the elements (out->cat is then
 * allocated, not filled); _classify(out, k, e) classifies element k,
 * e = idx_tl_elem(tl, k), writes cat[k] and returns it, for k = 0, 1,
 * ... in order (any other k: AN_CAT_OTHER, and _end fails); _end
 * classifies the elements not classified yet, frees what _begin kept
 * and returns 0, or -1 with out destroyed (SV_ERR_CANCELLED when this
 * thread was asked to stop). The table is an_categories_build's, which
 * is _begin and _end. */
int an_categories_begin(const struct snapshot *s,
    const struct idx_timeline *tl, const struct an_steps *steps,
    const struct an_cat_rules *rules, struct an_categories *out,
    struct sv_error *err);
unsigned an_category_classify(struct an_categories *out, uint64_t k,
    const struct idx_elem *e);
int an_categories_end(struct an_categories *out, struct sv_error *err);

/* _begin's pass over the events runs in two parts on two threads (where
 * util/thread.h lets a second one start) on a trace of min_events or
 * more (default 1 Mi events), the second part from per_mille of the
 * events (0: the default split), the table the same as on one thread;
 * for the tests, which split small traces anywhere. */
void an_categories_split(uint64_t min_events, unsigned per_mille);

/* A classifier of single elements, in any order, made from a table
 * begun (an_categories_begin, before _end): copies of what _begin found
 * of the whole trace (phases, runs of backward and optimizer events),
 * with caches of its own, so that another thread can classify elements
 * while the table's own thread goes on (the viewer draws the category
 * bands from samples while they are built, render/tl_sample.h). It
 * reads the snapshot, the timeline and the rules, which must outlive
 * it. NULL when out was not begun. */
struct an_cat_probe;
struct an_cat_probe *an_cat_probe_new(const struct an_categories *begun);
/* The category an_category_classify gives element e. */
unsigned an_cat_probe_classify(struct an_cat_probe *p,
    const struct idx_elem *e);
void an_cat_probe_free(struct an_cat_probe *p);

/* Category of element k (AN_CAT_OTHER past the end). */
static inline unsigned
an_category_of(const struct an_categories *c, uint64_t k)
{
	return k < c->n_elems ? c->cat[k] : AN_CAT_OTHER;
}

/* Live requested bytes and blocks per category after event at (-1:
 * before the first event; past the end: the last), as the Active Memory
 * Timeline counts them. */
struct an_cat_totals {
	int64_t at;
	uint64_t bytes[AN_CAT_COUNT];
	uint64_t count[AN_CAT_COUNT];
	uint64_t total_bytes, total_count;
};
void an_categories_at(const struct idx_timeline *tl,
    const struct an_categories *c, int64_t at, struct an_cat_totals *out);
/* Counts one allocation of size bytes in category cat into t. */
void an_cat_totals_add(struct an_cat_totals *t, unsigned cat, uint64_t size);

#endif
