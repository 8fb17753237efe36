/*
 * Categories of allocations: user rules, then frames and lifetimes
 * against the step's phases. See category.h.
 */
#include "config.h"

#include "analysis/category.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/frame.h"
#include "analysis/rulefile.h"
#include "snapshot/snap_stripe.h"
#include "util/escape.h"
#include "util/stop.h"
#include "util/thread.h"
#include "util/xalloc.h"

static const char *const cat_names[AN_CAT_COUNT] = {"parameter", "gradient",
    "optimizer_state", "activation", "temporary", "workspace", "other"};
static const char *const cat_labels[AN_CAT_COUNT] = {"parameter",
    "gradient", "optimizer state", "activation", "temporary", "workspace",
    "other"};

const char *
an_category_name(unsigned c)
{
	return c < AN_CAT_COUNT ? cat_names[c] : NULL;
}

const char *
an_category_label(unsigned c)
{
	return c < AN_CAT_COUNT ? cat_labels[c] : NULL;
}

int
an_category_lookup(const char *name, size_t len)
{
	unsigned c;

	for (c = 0; c < AN_CAT_COUNT; c++)
		if (strlen(cat_names[c]) == len &&
		    strncmp(cat_names[c], name, len) == 0)
			return (int)c;
	if (len == 15 && strncmp(name, "optimizer-state", 15) == 0)
		return AN_CAT_OPTIMIZER_STATE;
	return -1;
}

/* ---- rules -------------------------------------------------------------- */


static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* What parse_line() fills: the rules and their array's room. */
struct cat_fill {
	struct an_cat_rules *out;
	size_t cap;
};

static int
parse_line(void *ctx, const char *p, size_t n, uint32_t line,
    struct sv_error *err)
{
	struct an_cat_rules *out = ((struct cat_fill *)ctx)->out;
	size_t *cap = &((struct cat_fill *)ctx)->cap;
	char re[RULE_LINE_MAX + 1], msg[128];
	size_t i = 0, w;
	int cat, rc;
	struct an_cat_rule *r;

	while (i < n && is_space(p[i]))
		i++;
	while (n > i && is_space(p[n - 1]))
		n--;
	if (i == n || p[i] == '#')
		return 0;
	for (w = i; w < n && !is_space(p[w]); w++)
		;
	cat = an_category_lookup(p + i, w - i);
	if (cat < 0) {
		char word[64];

		/* the word is the user's text: escaped for the terminal */
		sv_escape(word, sizeof word, p + i, w - i > 40 ? 40 : w - i);
		return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "line %u: unknown category '%s' (expected parameter, "
		    "gradient, optimizer_state, activation, temporary, "
		    "workspace or other)", line, word);
	}
	while (w < n && is_space(p[w]))
		w++;
	if (w == n)
		return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "line %u: no regular expression after '%s'", line,
		    cat_names[cat]);
	if (out->n >= AN_CAT_RULES_MAX)
		return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "line %u: more than %u rules", line, AN_CAT_RULES_MAX);
	memcpy(re, p + w, n - w);
	re[n - w] = '\0';
	XGROW(out->r, *cap, (size_t)out->n + 1);
	r = &out->r[out->n];
	rc = regcomp(&r->re, re, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &r->re, msg, sizeof msg);
		return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
		    "line %u: bad regular expression: %s", line, msg);
	}
	r->cat = (uint8_t)cat;
	r->line = line;
	out->n++;
	return 0;
}

int
an_cat_rules_parse(const char *text, size_t len, struct an_cat_rules *out,
    struct sv_error *err)
{
	struct cat_fill f = {out, 0};

	memset(out, 0, sizeof *out);
	if (an_rulefile_lines(text, len, parse_line, &f, err) != 0) {
		an_cat_rules_destroy(out);
		return -1;
	}
	return 0;
}

int
an_cat_rules_load(const char *path, struct an_cat_rules *out,
    struct sv_error *err)
{
	struct cat_fill f = {out, 0};

	memset(out, 0, sizeof *out);
	if (an_rulefile_load(path, parse_line, &f, err) != 0) {
		an_cat_rules_destroy(out);
		return -1;
	}
	return 0;
}

void
an_cat_rules_destroy(struct an_cat_rules *r)
{
	uint32_t i;

	for (i = 0; i < r->n; i++)
		regfree(&r->r[i].re);
	free(r->r);
	memset(r, 0, sizeof *r);
}

/* ---- inference ---------------------------------------------------------- */

/* cuBLAS's default workspace before Hopper (CUBLAS_WORKSPACE_CONFIG
 * :4096:2:16:8, two 4 MiB chunks and eight of 16 KiB; PyTorch's
 * CublasHandlePool.cpp) */
#define CUBLAS_WORKSPACE (2 * 4096 * 1024 + 8 * 16 * 1024)

#define ST_DONE 0x80000000u
#define ST_EMPTY 0x40000000u	/* the stack has no frame */
#define NO_RULE 0xffu
#define RULE_TODO 0xfeu

/* The window lists classify looks events up in, each with its cursor. */
enum { H_PHASE, H_OPT, H_ZERO_GRAD, H_OPT_RUN, H_BWD_RUN, HINTS };

struct ctx {
	const struct snapshot *s;
	const struct snap_trace *t;
	const struct idx_timeline *tl;
	const struct an_steps *steps;
	const struct an_cat_rules *rules;
	struct an_frame_cache fc;
	uint32_t *st;		/* per stack: traits | ST_* */
	uint8_t *st_rule;	/* per stack: rule category, NO_RULE */
	uint32_t *fr_rule;	/* per frame: first matching rule + 1, or
				   UINT32_MAX when none; 0 = not yet */
	int py_only;		/* stacks hold Python frames and no C++ */
	/* phases per step (or one pseudo step: the whole trace) */
	const struct an_step *ph;
	uint64_t n_ph;
	struct an_step *ph_own;
	int64_t *bwd_last;		/* per phase: last backward event */
	struct an_window *bwd_runs, *opt_runs;	/* see scan_events */
	uint64_t n_bwd_runs, n_opt_runs;
	int64_t first_bwd;		/* first backward event, -1 */
	int64_t last_bwd;		/* last backward event, -1 */
	int64_t ws_end;			/* allocs <= this in the leading
					   torch_npu workspace triples */
	uint64_t *ws;			/* their alloc events */
	uint64_t n_ws;
	struct an_at at[HINTS];		/* window_near's cursors */
};

static uint32_t
stack_traits(struct ctx *c, uint32_t stack)
{
	const uint32_t *fr;
	uint32_t n, i, v = ST_DONE;
	int user_seen = 0;

	if (stack >= c->s->n_stacks)
		stack = 0;
	if (c->st[stack] != 0)
		return c->st[stack];
	fr = snap_stack(c->s, stack, &n);
	if (n == 0)
		v |= ST_EMPTY;
	for (i = 0; i < n; i++) {
		unsigned tr = an_frame_cache_traits(&c->fc, fr[i]);

		/* a user __init__ counts only as the innermost user frame */
		if (an_frame_cache_kind(&c->fc, fr[i]) == AN_FRAME_USER) {
			if (user_seen)
				tr &= ~(unsigned)AN_TR_INIT;
			user_seen = 1;
		}
		v |= tr;
	}
	c->st[stack] = v;
	return v;
}

static uint32_t
frame_rule(struct ctx *c, uint32_t f)
{
	char buf[4096];
	const struct snap_frame *fr;
	uint32_t i;

	if (f >= c->s->n_frames)
		return UINT32_MAX;
	if (c->fr_rule[f] != 0)
		return c->fr_rule[f];
	fr = &c->s->frames[f];
	if (fr->line == UINT64_MAX)
		snprintf(buf, sizeof buf, "%s:? %s",
		    snap_str(c->s, fr->filename), snap_str(c->s, fr->name));
	else
		snprintf(buf, sizeof buf, "%s:%llu %s",
		    snap_str(c->s, fr->filename), (unsigned long long)fr->line,
		    snap_str(c->s, fr->name));
	c->fr_rule[f] = UINT32_MAX;
	for (i = 0; i < c->rules->n; i++)
		if (regexec(&c->rules->r[i].re, buf, 0, NULL, 0) == 0) {
			c->fr_rule[f] = i + 1;
			break;
		}
	return c->fr_rule[f];
}

/* Category a user rule gives stack, or NO_RULE. */
static unsigned
stack_rule(struct ctx *c, uint32_t stack)
{
	const uint32_t *fr;
	uint32_t n, i, best = UINT32_MAX;

	if (c->rules == NULL || c->rules->n == 0)
		return NO_RULE;
	if (stack >= c->s->n_stacks)
		stack = 0;
	if (c->st_rule[stack] != RULE_TODO)
		return c->st_rule[stack];
	fr = snap_stack(c->s, stack, &n);
	for (i = 0; i < n; i++) {
		uint32_t r = frame_rule(c, fr[i]);

		if (r < best)
			best = r;
	}
	c->st_rule[stack] = best == UINT32_MAX ? NO_RULE
	    : c->rules->r[best - 1].cat;
	return c->st_rule[stack];
}

/* Traits of stack, with an empty stack in a Python-only file standing for
 * the autograd engine's thread. */
static uint32_t
event_traits(struct ctx *c, uint32_t stack)
{
	uint32_t v = stack_traits(c, stack);

	if (c->py_only && (v & ST_EMPTY))
		v |= AN_TR_BACKWARD;
	return v;
}

static void
find_py_only(struct ctx *c)
{
	uint32_t f;
	int py = 0, cpp = 0;

	for (f = 0; f < c->s->n_frames && !cpp; f++) {
		unsigned tr = an_frame_cache_traits(&c->fc, f);

		py |= (tr & AN_TR_PYTHON) != 0;
		cpp |= (tr & AN_TR_CPP) != 0;
	}
	c->py_only = py && !cpp;
}

/* The leading torch_npu workspace triples: workspace_snapshot,
 * segment_alloc, alloc (doc/snapshot-format.md §16.4); their allocs are
 * workspaces. */
static void
find_workspace(struct ctx *c)
{
	uint64_t i;
	size_t cap = 0;

	for (i = 0; c->t != NULL && i + 2 < c->t->n; i += 3) {
		if (snap_ev_action(c->t, i) != SNAP_WORKSPACE_SNAPSHOT ||
		    snap_ev_action(c->t, i + 1) != SNAP_SEGMENT_ALLOC ||
		    snap_ev_action(c->t, i + 2) != SNAP_ALLOC ||
		    snap_ev_addr(c->t, i + 1) != snap_ev_addr(c->t, i + 2))
			break;
		XGROW(c->ws, cap, (size_t)c->n_ws + 1);
		c->ws[c->n_ws++] = i + 2;
	}
}

static int
is_workspace_alloc(const struct ctx *c, int64_t a)
{
	uint64_t i;

	if (a < 0 || c->n_ws == 0 || (uint64_t)a > c->ws[c->n_ws - 1])
		return 0;
	for (i = 0; i < c->n_ws; i++)
		if (c->ws[i] == (uint64_t)a)
			return 1;
	return 0;
}

/* A run of events of one phase (backward, optimizer): it goes on while
 * the phase's events come, with at most RUN_GAP other allocations in
 * between (another thread's), and ends at its last own event. */
#define RUN_GAP 4

struct runs {
	struct an_window *w;
	size_t cap;
	uint64_t n;
	uint64_t others;	/* other allocations since the last own */
	int open;
	int seen;		/* an own event came */
	uint64_t lead;		/* other allocations before the first own */
};

static void
run_own(struct runs *r, int64_t i)
{
	if (!r->open) {
		XGROW(r->w, r->cap, (size_t)r->n + 1);
		r->w[r->n].first = i;
		r->n++;
		r->open = 1;
	}
	r->w[r->n - 1].last = i;
	r->others = 0;
	r->seen = 1;
}

static void
run_other(struct runs *r)
{
	if (!r->seen)
		r->lead++;
	if (r->open && ++r->others > RUN_GAP)
		r->open = 0;
}

/* b's runs after a's, as one pass over a's events and then b's would
 * have made them: b's pass began with no run open, so where a's last
 * run was open and b's first own event came before it would have closed
 * (RUN_GAP), that event went on a's run. b is the last part: the state
 * a pass would go on from is not kept. b is left empty. */
static void
runs_join(struct runs *a, struct runs *b)
{
	uint64_t from = 0;

	if (a->open && b->seen && a->others + b->lead <= RUN_GAP) {
		a->w[a->n - 1].last = b->w[0].last;
		from = 1;
	}
	if (b->n > from) {
		XGROW(a->w, a->cap, (size_t)(a->n + b->n - from));
		memcpy(a->w + a->n, b->w + from,
		    (size_t)(b->n - from) * sizeof *b->w);
		a->n += b->n - from;
	}
	free(b->w);
	memset(b, 0, sizeof *b);
}

/* Is event i one of the backward phase's (AN_TR_BACKWARD, not the
 * optimizer's)? *act and *tr: its action and its stack's traits. */
static int
event_bwd(struct ctx *c, uint64_t i, unsigned *act, uint32_t *tr)
{
	*act = snap_ev_action(c->t, i);
	if (*act != SNAP_ALLOC && *act != SNAP_FREE_REQUESTED &&
	    *act != SNAP_FREE_COMPLETED)
		return 0;
	*tr = event_traits(c, snap_ev_stack(c->t, i));
	return (*tr & AN_TR_BACKWARD) && !(*tr & (AN_TR_OPTIM | AN_TR_STEP));
}

/* A part of the pass over the events, [lo, hi): its runs, and its first
 * and last backward event. Parts run on threads of their own: each reads
 * the trace with a stripe cache of its own and the stack traits, all
 * found before. */
struct scan {
	struct ctx *c;
	uint64_t lo, hi;
	struct runs bwd, opt;
	int64_t first_bwd, last_bwd;
	/* the thread that made it: its stop flag and meter (util/stop.h) */
	const atomic_int *stop;
	atomic_uint_fast64_t *meter;
};

static void
scan_part(struct scan *p)
{
	struct ctx *c = p->c;
	uint64_t i;
	unsigned act;
	uint32_t tr = 0;
	int is_opt, is_bwd;

	p->first_bwd = p->last_bwd = -1;
	for (i = p->lo; i < p->hi; i++) {
		if (sv_stop_poll(i - p->lo))
			break; /* an_categories_build gives up */
		is_bwd = event_bwd(c, i, &act, &tr);
		if (act != SNAP_ALLOC && act != SNAP_FREE_REQUESTED &&
		    act != SNAP_FREE_COMPLETED)
			continue;
		is_opt = (tr & (AN_TR_OPTIM | AN_TR_STEP)) != 0;
		if (is_opt)
			run_own(&p->opt, (int64_t)i);
		else if (act == SNAP_ALLOC)
			run_other(&p->opt);
		if (!is_bwd) {
			if (act == SNAP_ALLOC)
				run_other(&p->bwd);
			continue;
		}
		run_own(&p->bwd, (int64_t)i);
		if (p->first_bwd < 0)
			p->first_bwd = (int64_t)i;
		p->last_bwd = (int64_t)i;
	}
}

static void *
scan_thread(void *arg)
{
	struct scan *p = arg;

	sv_stop_flag = p->stop;
	sv_stop_meter = p->meter;
	scan_part(p);
	/* this thread's decoded stripes go with it */
	snap_stripe_cache_clear();
	return NULL;
}

/* b after a (b is left empty). */
static void
scan_join(struct scan *a, struct scan *b)
{
	runs_join(&a->bwd, &b->bwd);
	runs_join(&a->opt, &b->opt);
	if (a->first_bwd < 0)
		a->first_bwd = b->first_bwd;
	if (b->last_bwd >= 0)
		a->last_bwd = b->last_bwd;
	memset(b, 0, sizeof *b);
}

/* The last backward event of each phase, from the backward runs (every
 * backward event is in one, and each run's ends are backward events):
 * the end of the last run that starts in the phase, or before it; for
 * a run that goes on past the phase, the last backward event of the
 * phase is found by reading back from the phase's end. */
static void
phase_last_bwd(struct ctx *c)
{
	uint64_t k, r = 0;
	unsigned act;
	uint32_t tr;

	c->bwd_last = xmalloc(((size_t)c->n_ph + 1) * sizeof *c->bwd_last);
	for (k = 0; k < c->n_ph; k++) {
		int64_t f = c->ph[k].first, l = c->ph[k].last, i, lo;
		const struct an_window *w;

		c->bwd_last[k] = -1;
		/* the last run that starts at or before the phase's end */
		while (r < c->n_bwd_runs && c->bwd_runs[r].first <= l)
			r++;
		if (r == 0)
			continue;
		w = &c->bwd_runs[r - 1];
		if (w->last <= l) {
			c->bwd_last[k] = w->last >= f ? w->last : -1;
			continue;
		}
		lo = w->first > f ? w->first : f;
		for (i = l; i >= lo; i--)
			if (event_bwd(c, (uint64_t)i, &act, &tr)) {
				c->bwd_last[k] = i;
				break;
			}
	}
}

/* Below this many events the pass is not split (an_categories_split). */
static uint64_t split_events = 1u << 20;
static unsigned split_per_mille;

void
an_categories_split(uint64_t min_events, unsigned per_mille)
{
	split_events = min_events;
	split_per_mille = per_mille < 1000 ? per_mille : 0;
}

/* One pass over the events (scan_part), in two parts on two threads
 * where they may run (util/thread.h) and the trace is long: the steps,
 * when they are to be found, and the first part on this thread, the
 * second on another; then the phases and each one's last backward
 * event. The result is a pass on one thread's. */
static int
scan_events(struct ctx *c, const struct an_steps **steps,
    struct an_steps *own, struct sv_error *err)
{
	uint64_t n = c->t != NULL ? c->t->n : 0, m = n;
	struct scan a, b;
	pthread_t th;
	int two = 0, r = 0;

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.c = b.c = c;
	b.stop = sv_stop_flag;
	b.meter = sv_stop_meter;
	if (n >= split_events && n >= 2) {
		/* finding the steps takes about a quarter of the pass */
		m = split_per_mille > 0 ? n * split_per_mille / 1000 :
		    *steps == NULL ? n * 2 / 5 : n / 2;
		b.lo = m;
		b.hi = n;
		two = m > 0 && m < n && sv_thread_start(&th, scan_thread,
		    &b) == 0;
		if (!two)
			m = n;
	}
	if (*steps == NULL) {
		if (an_steps_find(c->s, c->tl->device, own, err) != 0)
			r = -1;
		*steps = own;
	}
	a.hi = m;
	if (r == 0)
		scan_part(&a);
	if (two) {
		pthread_join(th, NULL);
		scan_join(&a, &b);
	}
	c->bwd_runs = a.bwd.w;
	c->n_bwd_runs = a.bwd.n;
	c->opt_runs = a.opt.w;
	c->n_opt_runs = a.opt.n;
	c->first_bwd = a.first_bwd;
	c->last_bwd = a.last_bwd;
	return r;
}

/* an_window_at (w) or an_step_at (st) over n windows in event order,
 * searched from the last answer for this list (*at): the elements come
 * in event order, so it is nearly always the same window or the next.
 * The answer is the plain search's, whatever the order of the lookups. */
static int64_t
window_near(const struct an_window *w, const struct an_step *st,
    uint64_t n, struct an_at *at, int64_t ev)
{
	if (w != NULL)
		return an_window_at_near(w, n, ev, at);
	return an_step_list_at_near(st, n, ev, at);
}

static int64_t
phase_at(struct ctx *c, int64_t ev)
{
	return window_near(NULL, c->ph, c->n_ph, &c->at[H_PHASE], ev);
}

/* Alive before the trace: never freed (tr: its own stack's traits), or
 * freed by the stack in e's stack (frees without an alloc carry the
 * free's stack; etr: its traits as an event). */
static unsigned
classify_before(struct ctx *c, const struct idx_elem *e, uint32_t tr,
    uint32_t etr)
{
	if (e->free_ev < 0) {
		if (tr & (AN_TR_OPTIM | AN_TR_STEP))
			return AN_CAT_OPTIMIZER_STATE;
		if (tr & (AN_TR_ACCGRAD | AN_TR_BACKWARD))
			return AN_CAT_GRADIENT;
		return AN_CAT_PARAMETER;
	}
	if ((etr & (AN_TR_OPTIM | AN_TR_STEP)) || window_near(c->steps->opt,
	    NULL, c->steps->n_opt, &c->at[H_OPT], e->free_ev) >= 0)
		return AN_CAT_OPTIMIZER_STATE;
	if ((etr & AN_TR_ZERO_GRAD) || window_near(c->steps->zero_grad,
	    NULL, c->steps->n_zero_grad, &c->at[H_ZERO_GRAD],
	    e->free_ev) >= 0)
		return AN_CAT_GRADIENT;
	if (etr & AN_TR_BACKWARD)
		return AN_CAT_ACTIVATION;
	return AN_CAT_OTHER;
}

/* Traits of the stack that freed an element at event f (>= 0). */
static uint32_t
free_traits(struct ctx *c, int64_t f)
{
	if (c->t == NULL || (uint64_t)f >= c->t->n)
		return 0;
	return event_traits(c, snap_ev_stack(c->t, (uint64_t)f));
}

static unsigned
classify(struct ctx *c, const struct idx_elem *e, uint32_t tr,
    uint32_t etr)
{
	int64_t a = e->alloc_ev, f = e->free_ev, p, w, end, bl;

	if ((tr & AN_TR_WORKSPACE) || is_workspace_alloc(c, a))
		return AN_CAT_WORKSPACE;
	/* a stack with no C++ frame cannot show getNewWorkspace: cuBLAS's
	 * default workspace size, kept to the end, says it instead */
	if (e->size == CUBLAS_WORKSPACE && f < 0 && !(tr & AN_TR_CPP))
		return AN_CAT_WORKSPACE;
	if (tr & AN_TR_ACCGRAD)
		return AN_CAT_GRADIENT;
	if (a < 0)
		return classify_before(c, e, tr, etr);
	p = phase_at(c, a);
	if (p < 0)
		return AN_CAT_OTHER; /* only a hostile timeline gets here */
	bl = c->bwd_last[p];
	/* optimizer: alive after its annotation window, else after its
	 * run of optimizer events */
	w = window_near(c->steps->opt, NULL, c->steps->n_opt,
	    &c->at[H_OPT], a);
	if (w >= 0 || (etr & (AN_TR_OPTIM | AN_TR_STEP))) {
		if (w >= 0)
			end = c->steps->opt[w].last;
		else if ((w = window_near(c->opt_runs, NULL, c->n_opt_runs,
		    &c->at[H_OPT_RUN], a)) >= 0)
			end = c->opt_runs[w].last;
		else
			end = c->ph[p].last;
		return f < 0 || f > end ? AN_CAT_OPTIMIZER_STATE
					: AN_CAT_TEMPORARY;
	}
	/* backward: alive after its run of backward events */
	if (etr & AN_TR_BACKWARD) {
		w = window_near(c->bwd_runs, NULL, c->n_bwd_runs,
		    &c->at[H_BWD_RUN], a);
		end = w >= 0 ? c->bwd_runs[w].last : bl;
		return f < 0 || f > end ? AN_CAT_GRADIENT : AN_CAT_TEMPORARY;
	}
	if (etr & (AN_TR_CONSTRUCT | AN_TR_INIT))
		return f < 0 || (c->first_bwd >= 0 && f > c->first_bwd)
		    ? AN_CAT_PARAMETER : AN_CAT_TEMPORARY;
	/* forward, or between phases */
	if (f < 0) {
		/* kept after a backward, or made after its step's */
		if (c->last_bwd > a || bl >= 0)
			return AN_CAT_OTHER;
		/* no backward after it: the trace stopped before one; in a
		 * trace with no backward at all (inference, a forward
		 * pass), what a model's call made */
		if (c->first_bwd >= 0 || (tr & AN_TR_MODULE))
			return AN_CAT_ACTIVATION;
		return AN_CAT_OTHER;
	}
	if (free_traits(c, f) & AN_TR_BACKWARD)
		return AN_CAT_ACTIVATION;
	if (f <= c->ph[p].last)
		return AN_CAT_TEMPORARY;
	return AN_CAT_OTHER;
}

/* Phases cover the whole trace: the steps, and pseudo steps for the
 * events before, between and after them. */
static void
make_phases(struct ctx *c, const struct an_steps *steps, int64_t n_ev)
{
	struct an_step *ph = NULL;
	size_t cap = 0;
	int64_t next = 0;
	uint64_t i;

	for (i = 0; i <= steps->n; i++) {
		int64_t first = i < steps->n ? steps->steps[i].first : n_ev;

		if (first > next) {
			XGROW(ph, cap, (size_t)c->n_ph + 1);
			ph[c->n_ph].first = next;
			ph[c->n_ph].last = first - 1;
			ph[c->n_ph].complete = 0;
			c->n_ph++;
		}
		if (i == steps->n)
			break;
		if (steps->steps[i].first < next)
			continue; /* overlapping: not from an_steps_find */
		XGROW(ph, cap, (size_t)c->n_ph + 1);
		ph[c->n_ph++] = steps->steps[i];
		next = steps->steps[i].last + 1;
	}
	c->ph_own = ph;
	c->ph = ph;
}

/* What an_categories_begin leaves for an_category_classify: the
 * analysis's state, the steps it found, the element due next, and
 * whether one was asked out of turn. */
struct an_cat_work {
	struct ctx c;
	struct an_steps own;
	uint64_t next;
	int skewed;
};

static void
work_free(struct an_categories *out)
{
	struct an_cat_work *w = out->work;

	if (w == NULL)
		return;
	free(w->c.bwd_last);
	free(w->c.bwd_runs);
	free(w->c.opt_runs);
	free(w->c.ph_own);
	free(w->c.ws);
	free(w->c.st);
	free(w->c.st_rule);
	free(w->c.fr_rule);
	an_frame_cache_destroy(&w->c.fc);
	an_steps_destroy(&w->own);
	free(w);
	out->work = NULL;
}

int
an_categories_begin(const struct snapshot *s, const struct idx_timeline *tl,
    const struct an_steps *steps, const struct an_cat_rules *rules,
    struct an_categories *out, struct sv_error *err)
{
	struct an_cat_work *w;
	struct ctx *c;
	uint32_t k;

	memset(out, 0, sizeof *out);
	out->device = tl->device;
	w = xcalloc(1, sizeof *w);
	out->work = w;
	c = &w->c;
	c->s = s;
	c->t = snap_trace_of(s, tl->device);
	c->tl = tl;
	c->rules = rules;
	an_frame_cache_init(&c->fc, s);
	c->st = xcalloc((size_t)s->n_stacks + 1, sizeof *c->st);
	c->st_rule = xmalloc((size_t)s->n_stacks + 1);
	memset(c->st_rule, RULE_TODO, (size_t)s->n_stacks + 1);
	c->fr_rule = xcalloc((size_t)s->n_frames + 1, sizeof *c->fr_rule);
	find_py_only(c);
	find_workspace(c);
	/* every stack's traits, read and no longer written by the pass
	 * over the events, which may run on two threads */
	for (k = 0; k == 0 || k < s->n_stacks; k++)
		(void)stack_traits(c, k);
	if (scan_events(c, &steps, &w->own, err) != 0) {
		an_categories_destroy(out);
		return -1;
	}
	c->steps = steps;
	make_phases(c, steps, (int64_t)tl->n_events);
	phase_last_bwd(c);
	out->n_elems = tl->n_elems;
	out->cat = xmalloc((size_t)tl->n_elems + 1);
	out->steps_source = steps->source;
	out->n_steps = steps->n;
	if (sv_stop_requested()) {
		an_categories_destroy(out);
		return sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
		    "stopped");
	}
	return 0;
}

unsigned
an_category_classify(struct an_categories *out, uint64_t k,
    const struct idx_elem *e)
{
	struct an_cat_work *w = out->work;
	struct ctx *c;
	unsigned r;

	if (w == NULL || k != w->next || k >= out->n_elems) {
		if (w != NULL)
			w->skewed = 1; /* an_categories_end refuses the table */
		return AN_CAT_OTHER;
	}
	c = &w->c;
	w->next++;
	r = stack_rule(c, e->stack);
	if (r != NO_RULE) {
		out->cat[k] = (uint8_t)r;
		out->n_by_rule++;
		return r;
	}
	out->cat[k] = (uint8_t)classify(c, e, stack_traits(c, e->stack),
	    event_traits(c, e->stack));
	return out->cat[k];
}

int
an_categories_end(struct an_categories *out, struct sv_error *err)
{
	struct an_cat_work *w = out->work;
	uint64_t k;
	int whole;

	/* the elements not classified yet: all of them, for
	 * an_categories_build */
	for (k = w != NULL ? w->next : 0; w != NULL && k < out->n_elems;
	    k++) {
		struct idx_elem e = idx_tl_elem(w->c.tl, k);

		if (sv_stop_poll(k))
			break;
		an_category_classify(out, k, &e);
	}
	whole = w != NULL && w->next == out->n_elems && !w->skewed;
	work_free(out);
	if (sv_stop_requested()) {
		an_categories_destroy(out);
		return sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
		    "stopped");
	}
	if (!whole) {
		/* classify was called out of order */
		an_categories_destroy(out);
		return sv_error_set(err, SV_ERR_LIMIT, SV_NO_OFFSET,
		    "categories: allocations classified out of order");
	}
	return 0;
}

int
an_categories_build(const struct snapshot *s, const struct idx_timeline *tl,
    const struct an_steps *steps, const struct an_cat_rules *rules,
    struct an_categories *out, struct sv_error *err)
{
	if (an_categories_begin(s, tl, steps, rules, out, err) != 0)
		return -1;
	return an_categories_end(out, err);
}

void
an_categories_destroy(struct an_categories *c)
{
	work_free(c);
	free(c->cat);
	memset(c, 0, sizeof *c);
}

/* ---- classifying on another thread -------------------------------------- */

struct an_cat_probe {
	struct ctx c;
	struct an_steps steps;	/* the windows classify reads */
};

static void *
dup_array(const void *p, size_t n, size_t size)
{
	void *d = xmalloc(n * size + 1);

	if (n > 0)
		memcpy(d, p, n * size);
	return d;
}

struct an_cat_probe *
an_cat_probe_new(const struct an_categories *begun)
{
	const struct ctx *w;
	struct an_cat_probe *p;
	struct ctx *c;

	if (begun == NULL || begun->work == NULL)
		return NULL;
	w = &begun->work->c;
	p = xcalloc(1, sizeof *p);
	c = &p->c;
	c->s = w->s;
	c->t = w->t;
	c->tl = w->tl;
	c->rules = w->rules;
	c->py_only = w->py_only;
	p->steps.opt = dup_array(w->steps->opt, w->steps->n_opt,
	    sizeof *w->steps->opt);
	p->steps.n_opt = w->steps->n_opt;
	p->steps.zero_grad = dup_array(w->steps->zero_grad,
	    w->steps->n_zero_grad, sizeof *w->steps->zero_grad);
	p->steps.n_zero_grad = w->steps->n_zero_grad;
	c->steps = &p->steps;
	c->ph = c->ph_own = dup_array(w->ph, w->n_ph, sizeof *w->ph);
	c->n_ph = w->n_ph;
	c->bwd_last = dup_array(w->bwd_last, w->n_ph, sizeof *w->bwd_last);
	c->bwd_runs = dup_array(w->bwd_runs, w->n_bwd_runs,
	    sizeof *w->bwd_runs);
	c->n_bwd_runs = w->n_bwd_runs;
	c->opt_runs = dup_array(w->opt_runs, w->n_opt_runs,
	    sizeof *w->opt_runs);
	c->n_opt_runs = w->n_opt_runs;
	c->first_bwd = w->first_bwd;
	c->last_bwd = w->last_bwd;
	c->ws = dup_array(w->ws, w->n_ws, sizeof *w->ws);
	c->n_ws = w->n_ws;
	/* caches of its own */
	an_frame_cache_init(&c->fc, c->s);
	c->st = xcalloc((size_t)c->s->n_stacks + 1, sizeof *c->st);
	c->st_rule = xmalloc((size_t)c->s->n_stacks + 1);
	memset(c->st_rule, RULE_TODO, (size_t)c->s->n_stacks + 1);
	c->fr_rule = xcalloc((size_t)c->s->n_frames + 1, sizeof *c->fr_rule);
	return p;
}

unsigned
an_cat_probe_classify(struct an_cat_probe *p, const struct idx_elem *e)
{
	struct ctx *c = &p->c;
	unsigned r = stack_rule(c, e->stack);

	if (r != NO_RULE)
		return r;
	return classify(c, e, stack_traits(c, e->stack),
	    event_traits(c, e->stack));
}

void
an_cat_probe_free(struct an_cat_probe *p)
{
	struct ctx *c;

	if (p == NULL)
		return;
	c = &p->c;
	free(p->steps.opt);
	free(p->steps.zero_grad);
	free(c->ph_own);
	free(c->bwd_last);
	free(c->bwd_runs);
	free(c->opt_runs);
	free(c->ws);
	free(c->st);
	free(c->st_rule);
	free(c->fr_rule);
	an_frame_cache_destroy(&c->fc);
	free(p);
}

void
an_cat_totals_add(struct an_cat_totals *t, unsigned cat, uint64_t size)
{
	t->bytes[cat] += size;
	t->count[cat]++;
	t->total_bytes += size;
	t->total_count++;
}

void
an_categories_at(const struct idx_timeline *tl, const struct an_categories *c,
    int64_t at, struct an_cat_totals *out)
{
	uint64_t k;

	memset(out, 0, sizeof *out);
	if (at < -1 || at >= (int64_t)tl->n_events)
		at = (int64_t)tl->n_events - 1;
	out->at = at;
	for (k = 0; k < tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(tl, k);

		if (idx_alive_after(e.alloc_ev, e.free_ev, at))
			an_cat_totals_add(out, an_category_of(c, k), e.size);
	}
}
