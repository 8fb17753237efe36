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

int
an_leaks_ex(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, const struct an_leaks_with *with, int64_t from,
    int64_t to, struct an_leaks *out, struct sv_error *err)
{
	static const struct an_leaks_with none;
	const struct replay_state *rs = NULL;
	struct an_steps own;
	const struct an_steps *steps;
	uint32_t *slot_of = NULL, n_slots = 0;
	struct slot *slots = NULL;
	size_t cap_of = 0, cap_sl = 0, cap_ls = 0;
	int rule = REPLAY_ROUND_CUDA;
	int64_t last_step;
	uint64_t i;
	struct an_at at = {0, 0};

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
	steps = with->steps;
	if (steps == NULL) {
		if (an_steps_find(s, tl->device, &own, err) != 0)
			return -1;
		steps = &own;
	}
	window_steps(out, steps);
	last_step = an_step_at(steps, to);
	out->has_categories = with->cats != NULL &&
	    with->cats->n_elems == tl->n_elems;
	if (with->replay != NULL) {
		if (replay_seek(with->replay, to, err) != 0) {
			an_steps_destroy(&own);
			return -1;
		}
		rs = replay_state(with->replay);
		out->rounded_from_state = 1;
	} else {
		rule = replay_round_detect(s, tl->device, NULL);
	}
	for (i = 0; i < tl->n_elems; i++) {
		const struct idx_elem e = idx_tl_elem(tl, i);
		struct an_leak_site *ls;
		uint64_t k, key, bs = 0;
		uint32_t site;
		int64_t st;
		unsigned cat;

		if (!leaked(&e, from, to)) {
			if (e.alloc_ev < from &&
			    (e.free_ev < 0 || e.free_ev > to)) {
				out->alive_before++;
				out->alive_before_bytes += e.size;
			}
			continue;
		}
		site = an_site_of(sites, e.stack);
		key = site_key(site, &e);
		if (key >= cap_of) {
			size_t old = cap_of;

			XGROW(slot_of, cap_of, (size_t)key + 1);
			memset(slot_of + old, 0xff,
			    (cap_of - old) * sizeof *slot_of);
		}
		if (slot_of[key] == UINT32_MAX) {
			XGROW(slots, cap_sl, (size_t)n_slots + 1);
			XGROW(out->sites, cap_ls, (size_t)n_slots + 1);
			memset(&slots[n_slots], 0, sizeof slots[n_slots]);
			slots[n_slots].last_step = -1;
			slots[n_slots].lo = UINT64_MAX;
			ls = &out->sites[n_slots];
			memset(ls, 0, sizeof *ls);
			ls->site = site;
			ls->stack = e.stack;
			ls->first_ev = e.alloc_ev;
			ls->last_ev = e.alloc_ev;
			ls->category = -1;
			ls->free_stack = (e.flags & IDX_ELEM_PRE) != 0;
			slot_of[key] = n_slots++;
		}
		k = slot_of[key];
		ls = &out->sites[k];
		if (rs != NULL)
			bs = block_size_at(rs, e.addr);
		if (bs == 0)
			bs = replay_round_size(rule, e.size);
		if (e.alloc_ev < 0) {
			ls->before_trace++;
			out->before_trace++;
		} else if ((st = an_step_at_c(steps, e.alloc_ev, &at)) >= 0) {
			struct slot *sl = &slots[k];

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
		ls->count++;
		ls->bytes += e.size;
		ls->rounded += bs;
		if (e.alloc_ev >= 0 && (ls->first_ev < 0 ||
		    e.alloc_ev < ls->first_ev))
			ls->first_ev = e.alloc_ev;
		if (e.alloc_ev > ls->last_ev)
			ls->last_ev = e.alloc_ev;
		if (out->has_categories) {
			cat = an_category_of(with->cats, i);
			slots[k].cat_bytes[cat] += e.size;
			out->cat_bytes[cat] += e.size;
			out->cat_count[cat]++;
		}
		out->count++;
		out->bytes += e.size;
		out->rounded += bs;
	}
	out->n_sites = n_slots;
	for (i = 0; i < n_slots; i++) {
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
	if (n_slots > 0)
		qsort(out->sites, out->n_sites, sizeof *out->sites, cmp_site);
	free(slots);
	free(slot_of);
	an_steps_destroy(&own);
	return 0;
}

int
an_leaks(const struct snapshot *s, const struct idx_timeline *tl,
    struct an_sites *sites, int64_t from, int64_t to, struct an_leaks *out,
    struct sv_error *err)
{
	return an_leaks_ex(s, tl, sites, NULL, from, to, out, err);
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
	for (i = 0; i < tl->n_elems; i++) {
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
