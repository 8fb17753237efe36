/*
 * Live bytes by call-site tree at one event. See top.h.
 */
#include "config.h"

#include "analysis/top.h"

#include <stdlib.h>
#include <string.h>

#include "util/stop.h"
#include "util/u64map.h"
#include "util/xalloc.h"

int
an_elem_alive(const struct idx_elem *e, int64_t at)
{
	return idx_alive_after(e->alloc_ev, e->free_ev, at);
}

static const struct an_top *sort_ctx;

static int
cmp_node(const void *a, const void *b)
{
	const struct an_top_node *x = &sort_ctx->nodes[*(const uint32_t *)a];
	const struct an_top_node *y = &sort_ctx->nodes[*(const uint32_t *)b];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The node under parent for key (a site at level 0, else a frame); the
 * free-stack sites are keyed apart under a parent no node has. */
static uint32_t
node_get(struct an_top *t, struct u64map *m, size_t *cap, uint32_t parent,
    uint32_t key, uint32_t depth, uint32_t stack, int free_stack)
{
	uint64_t k = ((uint64_t)(parent - (free_stack != 0)) << 32) | key, v;
	struct an_top_node *n;

	if (u64map_get(m, k, &v))
		return (uint32_t)v;
	XGROW(t->nodes, *cap, (size_t)t->n_nodes + 1);
	n = &t->nodes[t->n_nodes];
	memset(n, 0, sizeof *n);
	n->parent = parent;
	n->depth = depth;
	n->stack = stack;
	n->site = depth == 0 ? key : AN_NO_NODE;
	n->frame = depth == 0 ? AN_NO_NODE : key;
	n->free_stack = free_stack;
	u64map_put(m, k, t->n_nodes);
	return t->n_nodes++;
}

/* Adds one live allocation (size bytes, stack; free_stack: the stack of
 * its free) under its site node and up to out->depth - 1 caller
 * levels. */
static void
top_add(struct an_top *out, struct u64map *m, size_t *cap,
    struct an_sites *sites, uint64_t size, uint32_t stack, int free_stack)
{
	uint32_t path[AN_SITE_MAX_FRAMES], n, node, d;

	out->bytes += size;
	out->count++;
	node = node_get(out, m, cap, AN_NO_NODE, an_site_of(sites, stack), 0,
	    stack, free_stack);
	out->nodes[node].bytes += size;
	out->nodes[node].count++;
	n = out->depth > 1 ? an_site_path(sites, stack, path, out->depth) : 0;
	for (d = 1; d < n; d++) {
		node = node_get(out, m, cap, node, path[d], d, stack, 0);
		out->nodes[node].bytes += size;
		out->nodes[node].count++;
	}
}

static void
top_begin(struct an_top *out, uint32_t device, int64_t at, uint32_t depth)
{
	memset(out, 0, sizeof *out);
	out->device = device;
	out->at = at;
	if (depth == 0)
		out->depth = 1;
	else if (depth > AN_SITE_MAX_FRAMES)
		out->depth = AN_SITE_MAX_FRAMES;
	else
		out->depth = depth;
}

/* Children lists, then each sorted by bytes. */
static void
top_finish(struct an_top *out)
{
	uint32_t j, *pos;

	out->kid_off = xcalloc((size_t)out->n_nodes + 1, sizeof *out->kid_off);
	out->kids = xmalloc(((size_t)out->n_nodes + 1) * sizeof *out->kids);
	out->roots = xmalloc(((size_t)out->n_nodes + 1) * sizeof *out->roots);
	for (j = 0; j < out->n_nodes; j++)
		if (out->nodes[j].parent != AN_NO_NODE)
			out->kid_off[out->nodes[j].parent + 1]++;
	for (j = 0; j < out->n_nodes; j++)
		out->kid_off[j + 1] += out->kid_off[j];
	pos = xmalloc(((size_t)out->n_nodes + 1) * sizeof *pos);
	memcpy(pos, out->kid_off, (size_t)out->n_nodes * sizeof *pos);
	for (j = 0; j < out->n_nodes; j++) {
		if (out->nodes[j].parent == AN_NO_NODE)
			out->roots[out->n_roots++] = j;
		else
			out->kids[pos[out->nodes[j].parent]++] = j;
	}
	free(pos);
	sort_ctx = out;
	qsort(out->roots, out->n_roots, sizeof *out->roots, cmp_node);
	for (j = 0; j < out->n_nodes; j++)
		qsort(out->kids + out->kid_off[j],
		    out->kid_off[j + 1] - out->kid_off[j], sizeof *out->kids,
		    cmp_node);
	sort_ctx = NULL;
}

/* Elements [*lo, *hi) of tl, none of them alive after event at: those
 * created by later events (idx_tl_created()), but for the ghosts, alive
 * from the start, and none when the trace has frees without alloc,
 * whose elements its frees create, alive until then. A scan of the
 * elements alive at an early event (the peak of a training run is often
 * in its first step) then reads the elements created before it. */
static void
never_alive(const struct idx_timeline *tl, int64_t at, uint64_t *lo,
    uint64_t *hi)
{
	uint64_t ghosts = tl->n_ghost <= tl->n_elems ? tl->n_ghost : 0;

	*lo = *hi = 0;
	if (tl->n_pre != 0)
		return;
	*hi = tl->n_elems - ghosts;
	*lo = idx_tl_created(tl, at);
	if (*lo > *hi)
		*lo = *hi;
}

/* top_elems()'s tree and what it takes into it. */
struct top_walk {
	struct an_top *out;
	struct u64map m;
	size_t cap;
	struct an_sites *sites;
	const struct an_categories *cats;
	unsigned cat;
	uint64_t seen;
};

static int
top_alive(void *arg, uint64_t i, const struct idx_elem *e)
{
	struct top_walk *w = arg;

	if (sv_stop_poll(w->seen++))
		return 1;
	if (w->cats == NULL || an_category_of(w->cats, i) == w->cat)
		top_add(w->out, &w->m, &w->cap, w->sites, e->size, e->stack,
		    (e->flags & IDX_ELEM_PRE) != 0);
	return 0;
}

/* fn for each element alive after event at, those never alive then
 * (never_alive()) not read. */
static void
alive_each(const struct idx_timeline *tl, int64_t at, idx_elem_fn fn,
    void *arg)
{
	uint64_t lo, hi;

	never_alive(tl, at, &lo, &hi);
	if (hi <= lo) {
		(void)idx_tl_alive_each(tl, at, 0, tl->n_elems, 0, fn, arg);
		return;
	}
	if (idx_tl_alive_each(tl, at, 0, lo, 0, fn, arg) == 0)
		(void)idx_tl_alive_each(tl, at, hi, tl->n_elems, 0, fn, arg);
}

/* The tree of the elements alive after event at; with cats, of those of
 * category cat only. */
static int
top_elems(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_categories *cats, unsigned cat, int64_t at,
    uint32_t depth, struct an_top *out)
{
	struct top_walk w;

	if (at < -1 || at >= (int64_t)tl->n_events)
		at = (int64_t)tl->n_events - 1;
	top_begin(out, tl->device, at, depth);
	memset(&w, 0, sizeof w);
	w.out = out;
	w.sites = sites;
	w.cats = cats;
	w.cat = cat;
	u64map_init(&w.m);
	alive_each(tl, at, top_alive, &w);
	u64map_destroy(&w.m);
	top_finish(out);
	return 0;
}

int
an_top(const struct idx_timeline *tl, struct an_sites *sites, int64_t at,
    uint32_t depth, struct an_top *out)
{
	return top_elems(tl, sites, NULL, 0, at, depth, out);
}

int
an_top_category(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_categories *cats, unsigned cat, int64_t at,
    uint32_t depth, struct an_top *out)
{
	return top_elems(tl, sites, cats, cat, at, depth, out);
}

/* an_top_categories()'s trees and totals. */
struct cats_walk {
	struct an_top *out;
	struct u64map m[AN_CAT_COUNT];
	size_t cap[AN_CAT_COUNT];
	struct an_sites *sites;
	const struct an_categories *cats;
	struct an_cat_totals *ct;
	uint64_t seen;
};

static int
cats_alive(void *arg, uint64_t i, const struct idx_elem *e)
{
	struct cats_walk *w = arg;
	unsigned c;

	if (sv_stop_poll(w->seen++))
		return 1;
	c = an_category_of(w->cats, i);
	an_cat_totals_add(w->ct, c, e->size);
	top_add(&w->out[c], &w->m[c], &w->cap[c], w->sites, e->size,
	    e->stack, (e->flags & IDX_ELEM_PRE) != 0);
	return 0;
}

int
an_top_categories(const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_categories *cats, int64_t at, uint32_t depth,
    struct an_top out[AN_CAT_COUNT], struct an_cat_totals *ct)
{
	struct cats_walk w;
	unsigned c;

	if (at < -1 || at >= (int64_t)tl->n_events)
		at = (int64_t)tl->n_events - 1;
	memset(ct, 0, sizeof *ct);
	ct->at = at;
	memset(&w, 0, sizeof w);
	w.out = out;
	w.sites = sites;
	w.cats = cats;
	w.ct = ct;
	for (c = 0; c < AN_CAT_COUNT; c++) {
		top_begin(&out[c], tl->device, at, depth);
		u64map_init(&w.m[c]);
	}
	alive_each(tl, at, cats_alive, &w);
	for (c = 0; c < AN_CAT_COUNT; c++) {
		u64map_destroy(&w.m[c]);
		top_finish(&out[c]);
	}
	return 0;
}

int
an_top_state(const struct replay_state *st, uint32_t device,
    struct an_sites *sites, uint32_t depth, struct an_top *out)
{
	struct u64map m;
	size_t cap = 0;
	uint32_t i;

	top_begin(out, device, st->at, depth);
	u64map_init(&m);
	for (i = 0; i < st->n_blocks; i++) {
		const struct replay_block *b = &st->blocks[i];

		if (b->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
		    b->state == SNAP_BLOCK_ACTIVE_PENDING_FREE)
			top_add(out, &m, &cap, sites, b->requested_size,
			    b->stack, 0);
	}
	u64map_destroy(&m);
	top_finish(out);
	return 0;
}

void
an_top_destroy(struct an_top *t)
{
	free(t->nodes);
	free(t->kids);
	free(t->kid_off);
	free(t->roots);
	memset(t, 0, sizeof *t);
}
