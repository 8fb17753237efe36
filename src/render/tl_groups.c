/*
 * Per-group byte curves for the timeline's grouped stacking modes. See
 * tl_groups.h.
 */
#include "config.h"

#include "render/tl_groups.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* Does group grp ever hold bytes? */
static int
used(const struct tl_groups *g, uint32_t grp)
{
	return g->base[grp] > 0 || g->off[grp + 1] > g->off[grp];
}

/* Build state of an element: what its next event does. */
enum { EL_NOT_STARTED, EL_LIVE, EL_DONE };

/* What pass 2 needs of an element, in one cache line's quarter: the
 * events of a trace refer to elements at random. */
struct el {
	uint64_t size;
	uint32_t group;
	uint8_t state;
};

/* Pass 1: each element's group, size and state; changes per group (in
 * g->off[grp + 1]), base bytes, largest element. Returns the number of
 * groups. */
static uint32_t
scan_elems(struct tl_groups *g, const struct idx_timeline *tl,
    uint32_t max_groups, tl_group_fn group_of, void *ctx, struct el *el)
{
	uint32_t n = 0, grp;
	uint64_t k;

	for (k = 0; k < tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(tl, k);

		grp = group_of(ctx, &e, k);
		el[k].size = e.size;
		el[k].group = grp < max_groups ? grp : TL_NO_GROUP;
		if (el[k].group == TL_NO_GROUP) {
			el[k].state = EL_DONE;
			continue;
		}
		if (grp + 1 > n)
			n = grp + 1;
		if (g->max_elem[grp] == UINT64_MAX ||
		    e.size > el[g->max_elem[grp]].size) {
			g->max_elem[grp] = k;
			g->stack[grp] = e.stack;
		}
		if (e.alloc_ev < 0) {
			/* alive from the start: the base, and its free */
			g->base[grp] += e.size;
			el[k].state = EL_LIVE;
			if (e.free_ev >= 0)
				g->off[grp + 1]++;
		} else {
			el[k].state = EL_NOT_STARTED;
			g->off[grp + 1] += e.free_ev >= 0 ? 2 : 1;
		}
	}
	return n;
}

int
tl_groups_build(struct tl_groups *g, const struct idx_timeline *tl,
    uint32_t max_groups, tl_group_fn group_of, void *ctx)
{
	struct el *el;
	uint64_t *fill, *run, k, i, total;
	uint32_t n, grp;

	memset(g, 0, sizeof *g);
	if (tl->n_events >= UINT32_MAX)
		return -1;
	el = xcalloc(tl->n_elems + 1, sizeof *el);
	g->off = xcalloc((size_t)max_groups + 2, sizeof *g->off);
	g->base = xcalloc((size_t)max_groups + 1, sizeof *g->base);
	g->stack = xcalloc((size_t)max_groups + 1, sizeof *g->stack);
	g->max_elem = xcalloc((size_t)max_groups + 1, sizeof *g->max_elem);
	memset(g->max_elem, 0xff, ((size_t)max_groups + 1) *
	    sizeof *g->max_elem);
	n = scan_elems(g, tl, max_groups, group_of, ctx, el);
	g->n = n;
	for (grp = 0; grp < n; grp++)
		g->off[grp + 1] += g->off[grp];
	total = g->off[n];
	g->ev = xcalloc(total + 1, sizeof *g->ev);
	g->live = xcalloc(total + 1, sizeof *g->live);
	fill = xcalloc((size_t)n + 1, sizeof *fill);
	run = xcalloc((size_t)n + 1, sizeof *run);
	memcpy(fill, g->off, (size_t)n * sizeof *fill);
	memcpy(run, g->base, (size_t)n * sizeof *run);
	/* pass 2, events in order: each group's changes come out sorted */
	for (i = 0; i < tl->n_events; i++) {
		struct el *x;

		k = idx_tl_ev_elem(tl, i);
		if (k >= tl->n_elems || el[k].state == EL_DONE)
			continue;
		x = &el[k];
		grp = x->group;
		if (fill[grp] >= g->off[grp + 1])
			continue; /* more events than counted: a bad index */
		if (x->state == EL_NOT_STARTED) {
			run[grp] += x->size;
			x->state = EL_LIVE;
		} else {
			run[grp] -= x->size < run[grp] ? x->size : run[grp];
			x->state = EL_DONE;
		}
		g->ev[fill[grp]] = (uint32_t)i;
		g->live[fill[grp]++] = run[grp];
	}
	/* an index whose ev_elem misses events leaves slots unfilled: cut
	 * each group to what was filled, keeping offsets consistent */
	for (grp = 0, k = 0; grp < n; grp++) {
		uint64_t from = g->off[grp], m = fill[grp] - from;

		memmove(g->ev + k, g->ev + from, m * sizeof *g->ev);
		memmove(g->live + k, g->live + from, m * sizeof *g->live);
		g->off[grp] = k;
		k += m;
	}
	g->off[n] = k;
	for (grp = 0; grp < n; grp++)
		g->n_used += used(g, grp);
	free(run);
	free(fill);
	free(el);
	return 0;
}

void
tl_groups_destroy(struct tl_groups *g)
{
	free(g->off);
	free(g->ev);
	free(g->live);
	free(g->base);
	free(g->stack);
	free(g->max_elem);
	memset(g, 0, sizeof *g);
}

uint64_t
tl_groups_bytes(const struct tl_groups *g, uint32_t grp, int64_t ev)
{
	uint64_t lo, hi;

	if (grp >= g->n)
		return 0;
	lo = g->off[grp];
	hi = g->off[grp + 1];
	if (ev < 0 || lo == hi || g->ev[lo] > ev)
		return g->base[grp];
	/* last change at or before ev */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (g->ev[mid] <= ev)
			lo = mid;
		else
			hi = mid;
	}
	return g->live[lo];
}

uint64_t
tl_groups_memory(const struct tl_groups *g)
{
	return g->off != NULL ? g->off[g->n] * (sizeof *g->ev +
	    sizeof *g->live) + (uint64_t)g->n * (sizeof *g->off +
	    sizeof *g->base + sizeof *g->stack + sizeof *g->max_elem) : 0;
}

uint32_t
tl_groups_top(const struct tl_groups *g, int64_t ev, uint32_t k,
    uint32_t *out)
{
	uint64_t bytes[64];
	uint32_t grp, n = 0, j;
	int all;

	if (k > 64)
		k = 64;
	/* few groups: every one that ever holds bytes gets a band */
	all = g->n_used <= k;
	for (grp = 0; grp < g->n; grp++) {
		uint64_t b = tl_groups_bytes(g, grp, ev);

		if ((b == 0 && !(all && used(g, grp))) ||
		    (n == k && b <= bytes[n - 1]))
			continue;
		/* insertion into the sorted top k; ties keep the lower id */
		j = n < k ? n++ : n - 1;
		while (j > 0 && bytes[j - 1] < b) {
			bytes[j] = bytes[j - 1];
			out[j] = out[j - 1];
			j--;
		}
		bytes[j] = b;
		out[j] = grp;
	}
	return n;
}
