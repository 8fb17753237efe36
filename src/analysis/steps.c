/*
 * Training steps: from ProfilerStep and Optimizer annotations, else from
 * the trace repeating itself. See steps.h.
 */
#include "config.h"

#include "analysis/steps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/frame.h"
#include "util/search.h"
#include "util/spill.h"
#include "util/stop.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* Pattern acceptance: share of allocations whose key occurs in every
 * step, and the smallest step against the largest (allocations). */
#define PATTERN_COVERAGE 0.70
#define PATTERN_BALANCE 0.25
#define PATTERN_CANDIDATES 6
#define PATTERN_ANCHORS 3	/* keys tried as step starts per count */

/* Annotation searches gallop (after a pass over every event's time) when
 * there is one per GALLOP_MIN events or more, else each is a binary
 * search. On a generated 1 GB leak file (11.6 M events, 183,690
 * annotations) the pass took about 34 ms, a binary search about 0.5 us:
 * they cost the same at about one search per 170 events. */
#define GALLOP_MIN 128

enum ann_kind { ANN_PROFILER, ANN_OPT_STEP, ANN_ZERO_GRAD, ANN_KINDS };

static const char *const ann_prefix[ANN_KINDS] = {
    "ProfilerStep#", "Optimizer.step#", "Optimizer.zero_grad#"};

const char *
an_steps_source_name(int source)
{
	switch (source) {
	case AN_STEPS_PROFILER: return "profiler_step";
	case AN_STEPS_OPTIMIZER: return "optimizer";
	case AN_STEPS_PATTERN: return "pattern";
	default: return "none";
	}
}

const char *
an_steps_source_text(int source)
{
	switch (source) {
	case AN_STEPS_PROFILER: return "ProfilerStep annotations";
	case AN_STEPS_OPTIMIZER: return "Optimizer.step annotations";
	case AN_STEPS_PATTERN: return "the trace repeating itself";
	default: return "none found";
	}
}

static int
ann_kind_of(const char *name)
{
	int k;

	for (k = 0; k < ANN_KINDS; k++)
		if (strncmp(name, ann_prefix[k], strlen(ann_prefix[k])) == 0)
			return k;
	return -1;
}

static int
times_ascend(const struct snap_trace *t)
{
	int64_t prev, cur;
	uint64_t i;

	if (t->n == 0)
		return 1;
	prev = snap_ev_time(t, 0);
	for (i = 1; i < t->n; i++) {
		if ((cur = snap_ev_time(t, i)) < prev)
			return 0;
		prev = cur;
	}
	return 1;
}

/* When the times ascend, "time < t" holds on a prefix of the trace only
 * and any search finds its end: this one gallops from *hint, reading a
 * few events next to the last answer instead of about log2(n) across the
 * trace (with 10^5 annotations that was most of finding the steps).
 * Where a crafted file's times go back, searches along different paths
 * can stop at different places where the times cross t, so the trace
 * gets the whole-trace binary search itself. */
uint64_t
an_ev_at_time_gallop(struct an_times *tm, uint64_t *hint, int64_t time)
{
	const struct snap_trace *t = tm->t;
	uint64_t n = t->n, h = *hint < n ? *hint : n, lo, hi, step;

	if (tm->gallop == 0)
		tm->gallop = times_ascend(t) ? 1 : -1;
	if (tm->gallop < 0)
		return snap_ev_at_time(t, 0, n, time);
	if (h < n && snap_ev_time(t, h) < time) {
		/* the answer is past h: steps of 1, 2, 4, ... forward */
		lo = h + 1;
		for (step = 1; (hi = h + step) < n; step *= 2) {
			if (snap_ev_time(t, hi) >= time)
				break;
			lo = hi + 1;
		}
		if (hi > n)
			hi = n;
	} else {
		/* at or before h: backward */
		lo = 0;
		hi = h;
		for (step = 1; step <= h; step *= 2) {
			if (snap_ev_time(t, h - step) < time) {
				lo = h - step + 1;
				break;
			}
			hi = h - step;
		}
	}
	*hint = snap_ev_at_time(t, lo, hi, time);
	return *hint;
}

/* First event with time >= t. */
static int64_t
ev_at_or_after(struct an_times *tm, uint64_t *hint, int64_t time)
{
	return (int64_t)an_ev_at_time_gallop(tm, hint, time);
}

/* Last event with time <= t (-1 if none): the one before the first
 * event after t. */
static int64_t
ev_at_or_before(struct an_times *tm, uint64_t *hint, int64_t time)
{
	if (time == INT64_MAX)
		return (int64_t)tm->t->n - 1;
	return (int64_t)an_ev_at_time_gallop(tm, hint, time + 1) - 1;
}

static void
bad(struct an_steps *out, uint32_t i, const char *name, const char *why)
{
	if (out->n_bad++ > 0)
		return;
	snprintf(out->bad, sizeof out->bad, "annotation %" PRIu32
	    " (%.60s): %s; ignored", i, name, why);
}

/* Windows of one kind of annotation, paired START..END in file order. */
struct pairing {
	struct an_window *w;
	size_t cap;
	uint64_t n;
	int64_t open;		/* START event of the open window, -1 */
	int64_t last_time;
	uint64_t hint;		/* the last search's answer
				   (an_ev_at_time_gallop) */
	int seen;
	int first_is_end;	/* the first window began before the trace */
	int implicit_end;	/* a START closes the open window */
	int last_open;		/* the last window has no END */
};

static void
pair_push(struct pairing *p, int64_t first, int64_t last)
{
	XGROW(p->w, p->cap, (size_t)p->n + 1);
	p->w[p->n].first = first;
	p->w[p->n].last = last;
	p->n++;
}

static void
pair_one(struct an_steps *out, struct an_times *tm, struct pairing *p,
    uint32_t i, const struct snap_annotation *a, const char *name)
{
	if (a->time_us == SNAP_NO_TIME) {
		bad(out, i, name, "no time_us");
		return;
	}
	if (a->stage == SNAP_STAGE_OTHER) {
		bad(out, i, name, "stage is neither START nor END");
		return;
	}
	if (p->seen && a->time_us < p->last_time) {
		bad(out, i, name, "time goes backwards");
		return;
	}
	if (a->stage == SNAP_STAGE_START) {
		int64_t ev = ev_at_or_after(tm, &p->hint, a->time_us);

		if (p->open >= 0 && !p->implicit_end) {
			bad(out, i, name, "START while the previous one is "
			    "still open");
			return;
		}
		/* a profiler step ends where the next one starts */
		if (p->open >= 0)
			pair_push(p, p->open, ev - 1);
		p->open = ev;
	} else if (p->open >= 0) {
		pair_push(p, p->open, ev_at_or_before(tm, &p->hint,
		    a->time_us));
		p->open = -1;
	} else if (!p->seen) {
		/* the trace began inside this window */
		pair_push(p, 0, ev_at_or_before(tm, &p->hint, a->time_us));
		p->first_is_end = 1;
	} else {
		bad(out, i, name, "END without a START");
		return;
	}
	p->seen = 1;
	p->last_time = a->time_us;
}

static void
push_step(struct an_steps *out, size_t *cap, int64_t first, int64_t last,
    int complete)
{
	if (last < first)
		return;
	XGROW(out->steps, *cap, (size_t)out->n + 1);
	out->steps[out->n].first = first;
	out->steps[out->n].last = last;
	out->steps[out->n].complete = complete;
	out->n++;
	out->n_complete += complete != 0;
}

/* ProfilerStep windows: each step runs to the next one's start. */
static void
steps_profiler(struct an_steps *out, const struct pairing *p)
{
	size_t cap = 0;
	uint64_t k;

	for (k = 0; k < p->n; k++) {
		int64_t first = p->w[k].first, last;
		int complete = !(k == 0 && p->first_is_end);

		if (k + 1 < p->n) {
			last = p->w[k + 1].first - 1;
		} else {
			last = p->w[k].last;
			if (p->last_open)
				complete = 0;
		}
		if (first < 0)
			first = 0;
		push_step(out, &cap, first, last, complete);
	}
	if (out->n > 0)
		out->source = AN_STEPS_PROFILER;
}

/* Optimizer.step windows: each END ends a step. */
static void
steps_optimizer(struct an_steps *out, const struct pairing *p)
{
	size_t cap = 0;
	int64_t from = 0;
	uint64_t k;

	for (k = 0; k < p->n; k++) {
		if (k + 1 == p->n && p->last_open)
			break;
		push_step(out, &cap, from, p->w[k].last, 1);
		if (p->w[k].last + 1 > from)
			from = p->w[k].last + 1;
	}
	if (out->n > 0)
		out->source = AN_STEPS_OPTIMIZER;
}

/* ---- the trace repeating itself ----------------------------------------- */

/*
 * The key of every allocation is written once and then read in order a
 * few times (once per step count and anchor tried): past keys_heap_max
 * bytes it moves to a temporary file (util/spill.h), and each reading
 * gives back the pages behind it, so finding steps in a trace without
 * annotations costs memory for its distinct keys, not for its events.
 * Where no file can be had the keys stay on the heap.
 */
static size_t keys_heap_max = (size_t)16 << 20;
#define KEYS_KEEP ((size_t)4 << 20)  /* bytes kept resident while written */
#define KEYS_STRIDE ((uint64_t)1 << 20) /* keys between two give-backs */

struct keys {
	uint32_t *key;		/* per allocation: key id */
	uint64_t n;		/* allocations */
	size_t cap;		/* room for keys on the heap */
	struct spill *sp;	/* the keys' file, or NULL */
	int heap_only;		/* no file to be had */
	uint32_t n_keys;
	uint32_t *count;	/* per key */
	uint32_t *first;	/* per key: first allocation */
};

void
an_steps_set_keys_heap_max(size_t bytes)
{
	keys_heap_max = bytes;
}

static void
keys_free_array(struct keys *k)
{
	if (k->sp != NULL) {
		spill_free(k->sp);
		free(k->sp);
		k->sp = NULL;
	} else {
		free(k->key);
	}
	k->key = NULL;
}

static void
keys_destroy(struct keys *k)
{
	keys_free_array(k);
	free(k->count);
	free(k->first);
	memset(k, 0, sizeof *k);
}

/* Moves the keys to a file with room for most of them, or says it
 * cannot (they stay on the heap for good). */
static int
keys_spill(struct keys *k, uint64_t most, size_t need)
{
	struct spill *sp = xcalloc(1, sizeof *sp);

	if (most <= SIZE_MAX / sizeof *k->key &&
	    spill_adopt(sp, (size_t)most * sizeof *k->key, k->key,
	    (size_t)k->n * sizeof *k->key, need) == 0) {
		k->key = (uint32_t *)(void *)sp->base;
		k->sp = sp;
		return 0;
	}
	free(sp);
	k->heap_only = 1;
	return -1;
}

/* Appends a key (most: how many there can be in all). */
static void
keys_push(struct keys *k, uint32_t id, uint64_t most)
{
	size_t need = ((size_t)k->n + 1) * sizeof *k->key;

	if (k->sp == NULL && !k->heap_only && need > keys_heap_max)
		(void)keys_spill(k, most, need);
	if (k->sp != NULL && need > k->sp->cap &&
	    spill_grow(k->sp, need) == NULL) {
		/* the range is full: back to the heap */
		k->key = spill_to_heap(k->sp, (size_t)k->n * sizeof *k->key,
		    (size_t)k->n + 1, sizeof *k->key);
		free(k->sp);
		k->sp = NULL;
		k->cap = (size_t)k->n + 1;
		k->heap_only = 1;
	}
	if (k->sp == NULL)
		XGROW(k->key, k->cap, (size_t)k->n + 1);
	k->key[k->n++] = id;
	if (k->sp != NULL && k->n % KEYS_STRIDE == 0)
		spill_release(k->sp, (size_t)k->n * sizeof *k->key,
		    KEYS_KEEP, 0);
}

/* Called as keys are read in order, before key j: gives back the pages
 * read since *from. */
static void
keys_read(const struct keys *k, uint64_t j, uint64_t *from)
{
	if (k->sp == NULL || j % KEYS_STRIDE != 0 || j == *from)
		return;
	spill_drop(k->sp, (size_t)*from * sizeof *k->key,
	    (size_t)j * sizeof *k->key);
	*from = j;
}

static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* Key ids of every allocation: by stack and size (with_size) or by
 * stack alone. Two (stack, size) pairs whose mixed hash collides share a
 * key: that only blurs the pattern, never breaks a bound. */
static void
keys_build(const struct snap_trace *t, int with_size, struct keys *k)
{
	struct u64map ids;
	size_t cap_keys = 0;
	uint64_t i, v;

	memset(k, 0, sizeof *k);
	u64map_init(&ids);
	for (i = 0; i < t->n; i++) {
		uint64_t h;
		uint32_t id;

		if (sv_stop_poll(i))
			break;
		if (snap_ev_action(t, i) != SNAP_ALLOC)
			continue;
		h = with_size ? mix(snap_ev_stack(t, i), snap_ev_size(t, i))
			      : snap_ev_stack(t, i);
		if (u64map_get(&ids, h, &v)) {
			id = (uint32_t)v;
		} else {
			id = k->n_keys++;
			u64map_put(&ids, h, id);
			if (id >= cap_keys) {
				size_t c2 = cap_keys;

				XGROW(k->count, cap_keys, (size_t)id + 1);
				XGROW(k->first, c2, (size_t)id + 1);
			}
			k->count[id] = 0;
			k->first[id] = (uint32_t)k->n;
		}
		if (k->n > UINT32_MAX - 1)
			break; /* 4 billion allocations are plenty to judge */
		keys_push(k, id, t->n);
		k->count[id]++;
	}
	u64map_destroy(&ids);
	/* written: all of it to the file, read back as it is needed */
	if (k->sp != NULL)
		spill_release(k->sp, (size_t)k->n * sizeof *k->key, 0, 0);
}

struct cand {
	uint64_t s, mass;
};

static int
cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->mass != y->mass)
		return x->mass > y->mass ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* Step counts worth testing: S >= 3 that some key occurs exactly S times
 * (it cuts the trace), ranked by the allocations whose key count is a
 * multiple of S. */
static uint64_t
candidates(const struct keys *k, struct cand *out, uint64_t max)
{
	struct u64map by_count, mass;
	struct cand *all = NULL;
	size_t cap = 0;
	uint64_t n = 0, i, m;
	uint32_t id;

	u64map_init(&by_count);
	u64map_init(&mass);
	for (id = 0; id < k->n_keys; id++) {
		uint64_t c = k->count[id], old = 0;

		if (c < 3)
			continue;
		u64map_get(&by_count, c, &old);
		u64map_put(&by_count, c, old + c);
	}
	for (i = 0; i < by_count.cap; i++) {
		uint64_t c = by_count.slots[i].key, d;

		if (!by_count.used[i])
			continue;
		m = by_count.slots[i].val;
		for (d = 1; d * d <= c; d++) {
			uint64_t e = c / d, old;

			if (c % d != 0)
				continue;
			if (d >= 3 && u64map_get(&by_count, d, &old)) {
				old = 0;
				u64map_get(&mass, d, &old);
				u64map_put(&mass, d, old + m);
			}
			if (e != d && e >= 3 &&
			    u64map_get(&by_count, e, &old)) {
				old = 0;
				u64map_get(&mass, e, &old);
				u64map_put(&mass, e, old + m);
			}
		}
	}
	for (i = 0; i < mass.cap; i++) {
		if (!mass.used[i])
			continue;
		XGROW(all, cap, (size_t)n + 1);
		all[n].s = mass.slots[i].key;
		all[n].mass = mass.slots[i].val;
		n++;
	}
	if (n > 0)
		qsort(all, n, sizeof *all, cmp_cand);
	if (n > max)
		n = max;
	if (n > 0)
		memcpy(out, all, n * sizeof *out);
	free(all);
	u64map_destroy(&by_count);
	u64map_destroy(&mass);
	return n;
}

/* Cuts the allocations at each occurrence of anchor into steps. The
 * coverage is the share of the allocations from the first step on whose
 * key occurs in every step; the balance the smallest step against the
 * largest (allocations). The allocations before the first step (model
 * construction, a step cut by the start of recording) may be at most
 * twice as many as the largest step has: else the repetition is only part
 * of the trace (a loop inside one step) and the coverage is 0. */
static double
verify(const struct keys *k, uint32_t anchor, uint64_t s, int32_t *last_seg,
    uint32_t *nseg, uint64_t *post, double *balance)
{
	uint64_t *size = xcalloc(s, sizeof *size), j, covered = 0, lo, hi;
	uint64_t after = 0, read = 0;
	int64_t seg = -1;
	uint32_t id;

	for (id = 0; id < k->n_keys; id++) {
		last_seg[id] = -1;
		nseg[id] = 0;
		post[id] = 0;
	}
	for (j = 0; j < k->n; j++) {
		if (sv_stop_poll(j))
			break;
		keys_read(k, j, &read);
		id = k->key[j];
		if (id == anchor && seg + 1 < (int64_t)s)
			seg++;
		if (seg < 0)
			continue;
		size[seg]++;
		post[id]++;
		after++;
		if (last_seg[id] != (int32_t)seg) {
			last_seg[id] = (int32_t)seg;
			nseg[id]++;
		}
	}
	for (id = 0; id < k->n_keys; id++)
		if (nseg[id] == s)
			covered += post[id];
	lo = UINT64_MAX;
	hi = 0;
	for (j = 0; j < s; j++) {
		if (size[j] < lo)
			lo = size[j];
		if (size[j] > hi)
			hi = size[j];
	}
	free(size);
	*balance = hi ? (double)lo / (double)hi : 0.0;
	if (after == 0 || k->n - after > 2 * hi)
		return 0.0;
	return (double)covered / (double)after;
}

struct best {
	double coverage;
	uint64_t s;
	uint32_t anchor;
	int with_size;
};

static void
try_keys(const struct snap_trace *t, int with_size, struct best *best,
    struct keys *keep)
{
	struct keys k;
	struct cand c[PATTERN_CANDIDATES];
	uint64_t n_c, i;
	int32_t *last_seg;
	uint32_t *nseg, id;
	uint64_t *post;
	int took = 0;

	keys_build(t, with_size, &k);
	n_c = candidates(&k, c, PATTERN_CANDIDATES);
	last_seg = xmalloc(((size_t)k.n_keys + 1) * sizeof *last_seg);
	nseg = xmalloc(((size_t)k.n_keys + 1) * sizeof *nseg);
	post = xmalloc(((size_t)k.n_keys + 1) * sizeof *post);
	for (i = 0; i < n_c && !sv_stop_requested(); i++) {
		uint32_t anchor[PATTERN_ANCHORS];
		unsigned n_a = 0, a, m;
		double cov, bal;

		/* the keys that occur exactly S times, earliest first */
		for (id = 0; id < k.n_keys; id++) {
			if (k.count[id] != c[i].s)
				continue;
			for (m = n_a; m > 0 &&
			     k.first[anchor[m - 1]] > k.first[id]; m--)
				if (m < PATTERN_ANCHORS)
					anchor[m] = anchor[m - 1];
			if (m < PATTERN_ANCHORS)
				anchor[m] = id;
			if (n_a < PATTERN_ANCHORS)
				n_a++;
		}
		for (a = 0; a < n_a; a++) {
			cov = verify(&k, anchor[a], c[i].s, last_seg, nseg,
			    post, &bal);
			if (cov < PATTERN_COVERAGE || bal < PATTERN_BALANCE)
				continue;
			if (cov > best->coverage || (cov == best->coverage &&
			    c[i].s > best->s)) {
				best->coverage = cov;
				best->s = c[i].s;
				best->anchor = anchor[a];
				best->with_size = with_size;
				took = 1;
			}
		}
	}
	free(post);
	free(last_seg);
	free(nseg);
	if (took) {
		keys_destroy(keep);
		*keep = k;
	} else {
		keys_destroy(&k);
	}
}

/* ---- is the repetition the program's loop? ------------------------------ */

/*
 * A trace that repeats itself S times may be S iterations of the program
 * (steps) or S iterations of a loop inside one call: the 24 layers of one
 * forward pass repeat as well as any step does. The evidence that tells
 * them apart is where the loop is. Below the user frames every
 * allocation of the repetition shares (the script's entry, its loop,
 * the call into one step), the first user frame of an allocation, its
 * outer frame, says which part of an iteration made it: a step's
 * allocations come from several such calls (the forward pass, the loss,
 * the optimizer), a layer's from the one line of the loop over the
 * layers. So pattern steps are taken only when most of them hold
 * allocations of at least two outer frames. Allocations with no user
 * frame (C++ stacks of the autograd thread) say nothing; a trace where
 * no allocation has one gives no evidence against its steps, and keeps
 * them.
 */
#define OUTER_DEPTH 256
#define NO_OUTER UINT32_MAX
#define NOT_SEEN (UINT32_MAX - 1)

/* The user frames of stack, outermost first, into buf (at most
 * OUTER_DEPTH): their count. */
static uint32_t
user_frames(const struct snapshot *s, struct an_frame_cache *fc,
    uint32_t stack, uint32_t *buf)
{
	uint32_t nf, i, n = 0;
	const uint32_t *f = snap_stack(s, stack, &nf);

	for (i = nf; i > 0 && n < OUTER_DEPTH; i--)
		if (an_frame_cache_kind(fc, f[i - 1]) == AN_FRAME_USER)
			buf[n++] = f[i - 1];
	return n;
}

/* outer[stack] for the stacks of the allocations in [from, t->n): the
 * first user frame below the ones all of them share, NO_OUTER for a
 * stack with no user frame (or none below the shared ones); NOT_SEEN
 * for stacks not used there. Returns how many used stacks have a user
 * frame. */
static uint64_t
outer_frames(const struct snapshot *s, const struct snap_trace *t,
    int64_t from, uint32_t *outer)
{
	struct an_frame_cache fc;
	uint32_t *ref = xmalloc(OUTER_DEPTH * sizeof *ref);
	uint32_t *buf = xmalloc(OUTER_DEPTH * sizeof *buf);
	uint32_t n_ref = 0, shared = 0, st, n, k;
	uint64_t i, with_user = 0;

	an_frame_cache_init(&fc, s);
	for (st = 0; st < s->n_stacks; st++)
		outer[st] = NOT_SEEN;
	for (i = (uint64_t)from; i < t->n; i++)
		if (snap_ev_action(t, i) == SNAP_ALLOC &&
		    (st = snap_ev_stack(t, i)) < s->n_stacks)
			outer[st] = NO_OUTER;
	for (st = 0; st < s->n_stacks; st++) {
		if (outer[st] == NOT_SEEN ||
		    (n = user_frames(s, &fc, st, buf)) == 0)
			continue;
		if (with_user++ == 0) {
			memcpy(ref, buf, n * sizeof *buf);
			n_ref = shared = n;
			continue;
		}
		for (k = 0; k < shared && k < n && buf[k] == ref[k]; k++)
			;
		shared = k;
	}
	for (st = 0; st < s->n_stacks; st++) {
		if (outer[st] == NOT_SEEN)
			continue;
		n = user_frames(s, &fc, st, buf);
		outer[st] = n > shared ? buf[shared] : NO_OUTER;
	}
	(void)n_ref;
	free(ref);
	free(buf);
	an_frame_cache_destroy(&fc);
	return with_user;
}

/* 1 when the m steps starting at start[] are iterations of the program
 * (see above), 0 when they are a loop inside one call. */
static int
program_loop(const struct snapshot *s, const struct snap_trace *t,
    const int64_t *start, uint64_t m)
{
	uint32_t *outer = xmalloc(((size_t)s->n_stacks + 1) * sizeof *outer);
	uint64_t j, i, with_user = 0, varied = 0;
	int r = 1;

	if (outer_frames(s, t, start[0], outer) == 0)
		goto out; /* no user frame anywhere: no evidence */
	for (j = 0; j < m; j++) {
		uint64_t end = j + 1 < m ? (uint64_t)start[j + 1] : t->n;
		uint32_t first = NOT_SEEN, st, o;
		int user = 0, two = 0;

		for (i = (uint64_t)start[j]; i < end && !two; i++) {
			if (snap_ev_action(t, i) != SNAP_ALLOC ||
			    (st = snap_ev_stack(t, i)) >= s->n_stacks ||
			    (o = outer[st]) == NO_OUTER)
				continue;
			user = 1;
			if (first == NOT_SEEN)
				first = o;
			else if (o != first)
				two = 1;
		}
		with_user += user;
		varied += two;
	}
	r = with_user == 0 || 2 * varied > with_user;
out:
	free(outer);
	return r;
}

static void
steps_pattern(struct an_steps *out, const struct snapshot *s,
    const struct snap_trace *t)
{
	struct best best = {0.0, 0, 0, 0};
	struct keys k;
	size_t cap = 0;
	int64_t *start;
	uint64_t i, j = 0, m = 0, read = 0;

	memset(&k, 0, sizeof k);
	try_keys(t, 1, &best, &k);
	if (best.s == 0)
		try_keys(t, 0, &best, &k);
	if (best.s == 0) {
		keys_destroy(&k);
		return;
	}
	start = xmalloc(best.s * sizeof *start);
	for (i = 0; i < t->n && j < k.n && m < best.s; i++) {
		if (sv_stop_poll(i))
			break;
		if (snap_ev_action(t, i) != SNAP_ALLOC)
			continue;
		keys_read(&k, j, &read);
		if (k.key[j++] == best.anchor)
			start[m++] = (int64_t)i;
	}
	if (m > 0 && !program_loop(s, t, start, m)) {
		out->layers = m; /* a loop inside one call, not steps */
		m = 0;
	}
	for (i = 0; i < m; i++)
		push_step(out, &cap, start[i],
		    i + 1 < m ? start[i + 1] - 1 : (int64_t)t->n - 1, 1);
	if (out->n > 0)
		out->source = AN_STEPS_PATTERN;
	free(start);
	keys_destroy(&k);
}

/* ---- public ------------------------------------------------------------- */

int
an_steps_find(const struct snapshot *s, uint32_t d, struct an_steps *out,
    struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	struct pairing p[ANN_KINDS];
	struct an_times tm = {t, 0};
	uint64_t m = 0;
	uint32_t i;
	int k;

	memset(out, 0, sizeof *out);
	memset(p, 0, sizeof p);
	out->device = d;
	if (t == NULL || t->n == 0)
		return 0;
	/* at most one search per annotation: with few, binary searches
	 * read fewer events than the pass that lets them gallop */
	for (i = 0; i < s->n_annotations; i++)
		m += s->annotations[i].device == d;
	if (m < t->n / GALLOP_MIN)
		tm.gallop = -1;
	for (k = 0; k < ANN_KINDS; k++)
		p[k].open = -1;
	p[ANN_PROFILER].implicit_end = 1;
	for (i = 0; i < s->n_annotations; i++) {
		const struct snap_annotation *a = &s->annotations[i];
		const char *name;

		if (a->device != d)
			continue;
		out->n_annotations++;
		name = snap_str(s, a->name);
		if ((k = ann_kind_of(name)) < 0)
			continue;
		if (!snap_trace_has_time(t)) {
			out->no_time = 1;
			continue;
		}
		pair_one(out, &tm, &p[k], i, a, name);
	}
	for (k = 0; k < ANN_KINDS; k++)
		if (p[k].open >= 0) {
			/* the trace ended inside this window */
			pair_push(&p[k], p[k].open, (int64_t)t->n - 1);
			p[k].last_open = 1;
		}
	steps_profiler(out, &p[ANN_PROFILER]);
	if (out->n == 0)
		steps_optimizer(out, &p[ANN_OPT_STEP]);
	if (out->n == 0)
		steps_pattern(out, s, t);
	out->opt = p[ANN_OPT_STEP].w;
	out->n_opt = p[ANN_OPT_STEP].n;
	out->zero_grad = p[ANN_ZERO_GRAD].w;
	out->n_zero_grad = p[ANN_ZERO_GRAD].n;
	free(p[ANN_PROFILER].w);
	if (sv_stop_requested()) {
		/* the passes above ended early: what they found is partial */
		an_steps_destroy(out);
		return sv_error_set(err, SV_ERR_CANCELLED, SV_NO_OFFSET,
		    "stopped");
	}
	return 0;
}

void
an_steps_destroy(struct an_steps *st)
{
	free(st->steps);
	free(st->opt);
	free(st->zero_grad);
	memset(st, 0, sizeof *st);
}

struct starts_by {
	const struct an_window *w;
	const struct an_step *s;
	int64_t ev;
};

/* Windows (or steps) in event order that start at or before ev. */
static int
starts_by(const void *ctx, uint64_t i)
{
	const struct starts_by *b = ctx;

	return (b->w != NULL ? b->w[i].first : b->s[i].first) <= b->ev;
}

int64_t
an_window_at(const struct an_window *w, uint64_t n, int64_t ev)
{
	struct starts_by b = {w, NULL, ev};
	uint64_t lo;

	/* windows are in event order: the last one starting at or before
	 * ev is the only one that can hold it */
	lo = sv_partition(0, n, starts_by, &b);
	if (lo == 0 || w[lo - 1].last < ev)
		return -1;
	return (int64_t)lo - 1;
}

static int64_t
first_of(const struct starts_by *b, uint64_t i)
{
	return b->w != NULL ? b->w[i].first : b->s[i].first;
}

/* sv_partition(0, n, starts_by, b), from c's last answer when the starts
 * ascend: then starts_by holds on a prefix only, and any search finds
 * its end. When they do not (a hostile timeline) searches along
 * different paths could stop at different places, so the cursor runs
 * that very binary search, and the answer never depends on the lookups
 * before. Lookups in event order read the two starts around the last
 * answer, or a few more. */
static uint64_t
starts_point(const struct starts_by *b, uint64_t n, struct an_at *c)
{
	uint64_t lo, hi, q, step = 1, i;

	if (c->sorted == 0) {
		c->sorted = 1;
		for (i = 1; i < n; i++)
			if (first_of(b, i - 1) > first_of(b, i)) {
				c->sorted = -1;
				break;
			}
	}
	if (c->sorted < 0)
		return sv_partition(0, n, starts_by, b);
	hi = c->hint < n ? c->hint : n;
	if (hi < n && starts_by(b, hi)) {
		/* the point is past the hint: probe hint + 1, + 2, + 4, ...
		 * until one starts after ev */
		lo = hi + 1;
		for (;;) {
			if (n - lo < step) {
				hi = n;
				break;
			}
			q = lo + step - 1;
			if (!starts_by(b, q)) {
				hi = q;
				break;
			}
			lo = q + 1;
			step *= 2;
		}
	} else {
		/* at or before the hint: probe downwards the same way until
		 * one starts at or before ev */
		lo = hi;
		while (lo > 0 && !starts_by(b, lo - 1)) {
			hi = lo - 1;
			lo = hi > step ? hi - step : 0;
			step *= 2;
		}
	}
	/* the point is in [lo, hi] */
	c->hint = sv_partition(lo, hi, starts_by, b);
	return c->hint;
}

int64_t
an_window_at_gallop(const struct an_window *w, uint64_t n, int64_t ev,
    struct an_at *c)
{
	struct starts_by b = {w, NULL, ev};
	uint64_t lo = starts_point(&b, n, c);

	if (lo == 0 || w[lo - 1].last < ev)
		return -1;
	return (int64_t)lo - 1;
}

int64_t
an_step_list_at_gallop(const struct an_step *s, uint64_t n, int64_t ev,
    struct an_at *c)
{
	struct starts_by b = {NULL, s, ev};
	uint64_t lo = starts_point(&b, n, c);

	if (lo == 0 || s[lo - 1].last < ev)
		return -1;
	return (int64_t)lo - 1;
}

int64_t
an_step_at_gallop(const struct an_steps *st, int64_t ev, struct an_at *c)
{
	return an_step_list_at_gallop(st->steps, st->n, ev, c);
}

int64_t
an_step_at(const struct an_steps *st, int64_t ev)
{
	struct starts_by b = {NULL, st->steps, ev};
	uint64_t lo = sv_partition(0, st->n, starts_by, &b);

	if (lo == 0 || st->steps[lo - 1].last < ev)
		return -1;
	return (int64_t)lo - 1;
}
