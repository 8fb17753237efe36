/*
 * Leak ranking: surviving allocations of a window grouped by call site,
 * with the steps they fall into. See leaks.h.
 */
#include "config.h"

#include "analysis/leaks.h"

#include <stdlib.h>
#include <string.h>

#include "replay/replay_round.h"
#include "util/search.h"
#include "util/stop.h"
#include "util/xalloc.h"

static int
leaked(const struct idx_elem *e, int64_t from, int64_t to)
{
	return e->alloc_ev >= from && e->alloc_ev <= to &&
	    (e->free_ev < 0 || e->free_ev > to);
}

/* Sites are keyed apart for the blocks named by the stack of their free
 * (allocated before the trace, freed in it). */
static uint64_t
site_key(uint32_t site, const struct idx_elem *e)
{
	return (uint64_t)site * 2 + ((e->flags & IDX_ELEM_PRE) != 0);
}

static uint64_t
leak_key(const struct an_leak_site *ls)
{
	return (uint64_t)ls->site * 2 + (ls->free_stack != 0);
}

static int
cmp_site(const void *a, const void *b)
{
	const struct an_leak_site *x = a, *y = b;

	if (x->periodic != y->periodic)
		return x->periodic ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

struct addr_bound {
	const struct replay_state *st;
	uint64_t addr;
};

static int
block_below(const void *ctx, uint64_t i)
{
	const struct addr_bound *b = ctx;

	return b->st->blocks[i].addr < b->addr;
}

/* Size of the block at addr in a replayed state (blocks by address), or
 * 0 when no live block starts there. */
static uint64_t
block_size_at(const struct replay_state *st, uint64_t addr)
{
	struct addr_bound b = {st, addr};
	uint32_t lo = (uint32_t)sv_partition(0, st->n_blocks, block_below, &b);

	if (lo < st->n_blocks && st->blocks[lo].addr == addr &&
	    st->blocks[lo].state != SNAP_BLOCK_INACTIVE)
		return st->blocks[lo].size;
	return 0;
}

/* Steps overlapping the window, complete ones inside it, mean length. */
static void
window_steps(struct an_leaks *out, const struct an_steps *st)
{
	int64_t from = out->from < 0 ? 0 : out->from;
	uint64_t i, len = 0;

	out->steps_source = st->source;
	out->layers = st->layers;
	for (i = 0; i < st->n; i++) {
		const struct an_step *p = &st->steps[i];

		if (p->last < from || p->first > out->to)
			continue;
		out->n_steps++;
		len += (uint64_t)(p->last - p->first + 1);
		if (p->complete && p->first >= from && p->last <= out->to)
			out->n_complete++;
	}
	out->judged = out->n_complete >= 2;
	out->period = out->n_steps ? len / out->n_steps : 0;
}

/* Per site: the step of its last leaked block, how many it left in that
 * step (cur) and in the steps before (fewest lo, most hi). */
struct slot {
	int64_t last_step;
	uint64_t cur, lo, hi;
	uint64_t cat_bytes[AN_CAT_COUNT];
};

/* A leak leaves about as many blocks in every step it hits: at most
 * twice as many in one as in another. The window's last step may hold
 * more (what it allocated had no time to be freed yet), so it may be
 * left out when at least two other steps are steady. */
static int
steady(const struct slot *sl, uint64_t hits, int last_is_window_end)
{
	uint64_t lo = sl->lo < sl->cur ? sl->lo : sl->cur;
	uint64_t hi = sl->hi > sl->cur ? sl->hi : sl->cur;

	if (hi <= 2 * lo)
		return 1;
	return last_is_window_end && hits >= 3 && sl->hi <= 2 * sl->lo;
}

/* The pass of an_leaks_using() over the timeline's elements: each site's
 * slot (out->sites[k] and slots[k], found by site_key() in slot_of), and
 * where the block sizes come from. */
struct pass {
	struct an_leaks *out;
	const struct an_steps *steps;
	const struct an_categories *cats; /* used when out->has_categories */
	const struct replay_state *rs;    /* the window's end, or NULL */
	int rule;                         /* the size rule without rs */
	uint32_t *slot_of;                /* UINT32_MAX: none yet */
	size_t cap_of;
	struct slot *slots;
	size_t cap_sl, cap_ls;
	uint32_t n_slots;
	struct an_at at;                  /* an_step_at_gallop()'s place */
};

/* Where the block sizes at the window's end come from: the replay, moved
 * there, or the device's size rule. */
static int
pass_sizes(struct pass *p, const struct snapshot *s,
    const struct idx_timeline *tl, struct replay *replay, int64_t to,
    struct sv_error *err)
{
	if (replay == NULL) {
		p->rule = replay_round_detect(s, tl->device, NULL);
		return 0;
	}
	if (replay_seek(replay, to, err) != 0)
		return -1;
	p->rs = replay_state(replay);
	p->out->rounded_from_state = 1;
	return 0;
}

/* The slot of site, for e its leaked block; made on the site's first. */
static uint32_t
pass_slot(struct pass *p, uint32_t site, const struct idx_elem *e)
{
	uint64_t key = site_key(site, e);
	struct an_leak_site *ls;
	uint32_t k;

	if (key >= p->cap_of) {
		size_t old = p->cap_of;

		XGROW(p->slot_of, p->cap_of, (size_t)key + 1);
		memset(p->slot_of + old, 0xff,
		    (p->cap_of - old) * sizeof *p->slot_of);
	}
	if (p->slot_of[key] != UINT32_MAX)
		return p->slot_of[key];
	k = p->n_slots;
	XGROW(p->slots, p->cap_sl, (size_t)k + 1);
	XGROW(p->out->sites, p->cap_ls, (size_t)k + 1);
	memset(&p->slots[k], 0, sizeof p->slots[k]);
	p->slots[k].last_step = -1;
	p->slots[k].lo = UINT64_MAX;
	ls = &p->out->sites[k];
	memset(ls, 0, sizeof *ls);
	ls->site = site;
	ls->stack = e->stack;
	ls->first_ev = e->alloc_ev;
	ls->last_ev = e->alloc_ev;
	ls->category = -1;
	ls->free_stack = (e->flags & IDX_ELEM_PRE) != 0;
	p->slot_of[key] = p->n_slots++;
	return k;
}

/* Counts e, a leaked block of slot k, in the step that allocated it, or
 * as allocated before the trace. */
static void
pass_step(struct pass *p, uint32_t k, const struct idx_elem *e)
{
	struct an_leak_site *ls = &p->out->sites[k];
	struct slot *sl = &p->slots[k];
	int64_t st;

	if (e->alloc_ev < 0) {
		ls->before_trace++;
		p->out->before_trace++;
		return;
	}
	if ((st = an_step_at_gallop(p->steps, e->alloc_ev, &p->at)) < 0)
		return;
	/* elements come in alloc order: steps only grow */
	if (st != sl->last_step) {
		if (sl->last_step >= 0) {
			if (sl->cur < sl->lo)
				sl->lo = sl->cur;
			if (sl->cur > sl->hi)
				sl->hi = sl->cur;
		}
		ls->steps_hit++;
		sl->last_step = st;
		sl->cur = 0;
	}
	sl->cur++;
}

/* Adds e, element i and a leaked block of slot k, to its site and to the
 * totals: bytes, its block's size, its step, its category. */
static void
pass_add(struct pass *p, uint64_t i, uint32_t k, const struct idx_elem *e)
{
	struct an_leaks *out = p->out;
	struct an_leak_site *ls = &out->sites[k];
	uint64_t bs = 0;
	unsigned cat;

	if (p->rs != NULL)
		bs = block_size_at(p->rs, e->addr);
	if (bs == 0)
		bs = replay_round_size(p->rule, e->size);
	pass_step(p, k, e);
	ls->count++;
	ls->bytes += e->size;
	ls->rounded += bs;
	if (e->alloc_ev >= 0 && (ls->first_ev < 0 ||
	    e->alloc_ev < ls->first_ev))
		ls->first_ev = e->alloc_ev;
	if (e->alloc_ev > ls->last_ev)
		ls->last_ev = e->alloc_ev;
	if (out->has_categories) {
		cat = an_category_of(p->cats, i);
		p->slots[k].cat_bytes[cat] += e->size;
		out->cat_bytes[cat] += e->size;
		out->cat_count[cat]++;
	}
	out->count++;
	out->bytes += e->size;
	out->rounded += bs;
}

/* pass_run()'s window and its place in the elements. */
struct pass_walk {
	struct pass *p;
	struct an_sites *sites;
	int64_t from, to;
	uint64_t seen;
};

/* Element i into its site's slot when it leaked in the window, or into
 * the count of those alive across its start. */
static void
pass_elem(struct pass_walk *w, uint64_t i, const struct idx_elem *e)
{
	struct an_leaks *out = w->p->out;

	if (!leaked(e, w->from, w->to)) {
		if (e->alloc_ev < w->from &&
		    (e->free_ev < 0 || e->free_ev > w->to)) {
			out->alive_before++;
			out->alive_before_bytes += e->size;
		}
		return;
	}
	pass_add(w->p, i, pass_slot(w->p, an_site_of(w->sites, e->stack), e),
	    e);
}

static int
pass_alive(void *arg, uint64_t i, const struct idx_elem *e)
{
	struct pass_walk *w = arg;

	if (sv_stop_poll(w->seen++))
		return 1;
	pass_elem(w, i, e);
	return 0;
}

/* Every element leaked in [from, to] into its site's slot; those alive
 * across the window's start counted apart. */
static void
pass_run(struct pass *p, const struct idx_timeline *tl,
    struct an_sites *sites, int64_t from, int64_t to)
{
	struct pass_walk w = {p, sites, from, to, 0};
	uint64_t i;

	/* up to the last event, the elements that leak or live across the
	 * window are among those alive at the end, read without decoding
	 * the rest (most of a training run's) */
	if (to >= 0 && (uint64_t)to + 1 == tl->n_events) {
		(void)idx_tl_alive_each(tl, INT64_MAX, 0, tl->n_elems,
		    p->rs != NULL, pass_alive, &w);
		return;
	}
	for (i = 0; i < tl->n_elems && !sv_stop_poll(i); i++) {
		struct idx_elem e = idx_tl_elem(tl, i);

		pass_elem(&w, i, &e);
	}
}

/* Each site's verdicts: periodic (it leaks in steady amounts in most
 * steps) and, with categories, the one holding most of its bytes. */
static void
judge_sites(struct an_leaks *out, const struct slot *slots,
    int64_t last_step)
{
	uint64_t i;

	for (i = 0; i < out->n_sites; i++) {
		struct an_leak_site *ls = &out->sites[i];
		unsigned c, best = 0;

		ls->periodic = out->judged && ls->steps_hit >= 2 &&
		    ls->steps_hit * 2 >= out->n_steps &&
		    steady(&slots[i], ls->steps_hit,
			slots[i].last_step == last_step);
		if (!out->has_categories)
			continue;
		for (c = 1; c < AN_CAT_COUNT; c++)
			if (slots[i].cat_bytes[c] > slots[i].cat_bytes[best])
				best = c;
		ls->category = (int)best;
	}
}

int
an_leaks_using(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, const struct an_leaks_with *with, int64_t from,
    int64_t to, struct an_leaks *out, struct sv_error *err)
{
	static const struct an_leaks_with none;
	struct an_steps own;
	struct pass p;
	int64_t last_step;

	if (with == NULL)
		with = &none;
	memset(out, 0, sizeof *out);
	memset(&own, 0, sizeof own);
	out->device = tl->device;
	if (from < -1)
		from = -1;
	if (to < 0 || (uint64_t)to >= tl->n_events)
		to = (int64_t)tl->n_events - 1;
	out->from = from;
	out->to = to;
	if (tl->n_events == 0 || from > to)
		return 0;
	memset(&p, 0, sizeof p);
	p.out = out;
	p.rule = REPLAY_ROUND_CUDA;
	p.steps = with->steps;
	if (p.steps == NULL) {
		if (an_steps_find(s, tl->device, &own, err) != 0)
			return -1;
		p.steps = &own;
	}
	window_steps(out, p.steps);
	last_step = an_step_at(p.steps, to);
	out->has_categories = with->cats != NULL &&
	    with->cats->n_elems == tl->n_elems;
	p.cats = with->cats;
	if (pass_sizes(&p, s, tl, with->replay, to, err) != 0) {
		an_steps_destroy(&own);
		return -1;
	}
	pass_run(&p, tl, sites, from, to);
	out->n_sites = p.n_slots;
	judge_sites(out, p.slots, last_step);
	if (p.n_slots > 0)
		qsort(out->sites, out->n_sites, sizeof *out->sites, cmp_site);
	free(p.slots);
	free(p.slot_of);
	an_steps_destroy(&own);
	return 0;
}

int
an_leaks(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, int64_t from, int64_t to, struct an_leaks *out,
    struct sv_error *err)
{
	return an_leaks_using(s, tl, sites, NULL, from, to, out, err);
}

void
an_leaks_destroy(struct an_leaks *l)
{
	free(l->sites);
	memset(l, 0, sizeof *l);
}

struct leak_el {
	uint64_t id;
	struct idx_elem e;
};

static int
cmp_elem_alloc(const void *a, const void *b)
{
	const struct leak_el *x = a, *y = b;

	if (x->e.alloc_ev != y->e.alloc_ev)
		return x->e.alloc_ev < y->e.alloc_ev ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void
an_leak_elems(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_leaks *l, struct an_leak_elems *out)
{
	uint32_t *rank = NULL, *in_site = NULL;
	uint64_t i, k, key, max_key = 0, *pos, n = 0;
	struct leak_el *found = NULL, *all;
	size_t cap = 0, cap_site = 0;

	memset(out, 0, sizeof *out);
	out->n_sites = l->n_sites;
	out->off = xcalloc(l->n_sites + 2, sizeof *out->off);
	for (k = 0; k < l->n_sites; k++)
		if (leak_key(&l->sites[k]) + 1 > max_key)
			max_key = leak_key(&l->sites[k]) + 1;
	rank = xmalloc(((size_t)max_key + 1) * sizeof *rank);
	memset(rank, 0xff, ((size_t)max_key + 1) * sizeof *rank);
	for (k = 0; k < l->n_sites; k++)
		rank[leak_key(&l->sites[k])] = (uint32_t)k;
	/* one pass over the elements (decoding them is the cost): the
	 * leaked ones of the listed sites, with their site's rank */
	for (i = 0; i < tl->n_elems && !sv_stop_poll(i); i++) {
		const struct idx_elem e = idx_tl_elem(tl, i);

		if (!leaked(&e, l->from, l->to))
			continue;
		key = site_key(an_site_of(sites, e.stack), &e);
		if (key >= max_key || rank[key] == UINT32_MAX)
			continue;
		XGROW(found, cap, (size_t)n + 1);
		XGROW(in_site, cap_site, (size_t)n + 1);
		found[n].id = i;
		found[n].e = e;
		in_site[n++] = rank[key];
		out->off[rank[key] + 1]++;
	}
	for (k = 0; k < l->n_sites; k++)
		out->off[k + 1] += out->off[k];
	all = xmalloc((n + 1) * sizeof *all);
	pos = xmalloc((l->n_sites + 1) * sizeof *pos);
	memcpy(pos, out->off, (l->n_sites + 1) * sizeof *pos);
	for (i = 0; i < n; i++)
		all[pos[in_site[i]]++] = found[i];
	free(found);
	free(in_site);
	for (k = 0; k < l->n_sites; k++)
		qsort(all + out->off[k], out->off[k + 1] - out->off[k],
		    sizeof *all, cmp_elem_alloc);
	out->elems = xmalloc((n + 1) * sizeof *out->elems);
	out->vals = xmalloc((n + 1) * sizeof *out->vals);
	for (i = 0; i < n; i++) {
		out->elems[i] = all[i].id;
		out->vals[i] = all[i].e;
	}
	free(all);
	free(pos);
	free(rank);
}

void
an_leak_elems_destroy(struct an_leak_elems *le)
{
	free(le->elems);
	free(le->vals);
	free(le->off);
	memset(le, 0, sizeof *le);
}
