/*
 * The timeline's grouped modes: the group of an element by call site,
 * category or stream/pool, and building each mode's data the first time
 * it is shown (tl_model_prepare). See timeline.h.
 */
#include "config.h"

#include "render/timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/tl_int.h"
#include "util/stop.h"
#include "util/xalloc.h"

#define TL_MAX_STREAM_GROUPS 4096

static uint32_t
site_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	(void)k;
	return an_site_of(ctx, e->stack);
}

static uint32_t
category_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	const struct tl_model *m = ctx;

	(void)e;
	return an_category_of(m->cats, k);
}

/* The device's final segments by address, for the pool of an element
 * (memory_viz resolves pools the same way; an element whose segment was
 * freed during the trace gets the default pool (0, 0)). Sorted as pairs,
 * with no state outside: models are prepared on more than one thread. */
struct seg_key {
	uint64_t addr;
	uint32_t g;
};

static int
cmp_seg(const void *a, const void *b)
{
	const struct seg_key *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->g < y->g ? -1 : x->g > y->g;
}

static void
build_seg_table(struct tl_model *m)
{
	struct seg_key *k;
	uint32_t g, gend, n = 0, i;

	snap_device_segments(m->snap, m->tl->device, &g, &gend);
	k = xcalloc((size_t)(gend > g ? gend - g : 0) + 1, sizeof *k);
	for (; g < gend && g < m->snap->n_segments; g++)
		if (m->snap->segments[g].device == m->tl->device) {
			k[n].addr = m->snap->segments[g].addr;
			k[n++].g = g;
		}
	qsort(k, n, sizeof *k, cmp_seg);
	free(m->seg_by_addr);
	m->seg_by_addr = xcalloc((size_t)n + 1, sizeof *m->seg_by_addr);
	for (i = 0; i < n; i++)
		m->seg_by_addr[i] = k[i].g;
	m->n_seg_by_addr = n;
	free(k);
}

static void
pool_of(const struct tl_model *m, uint64_t addr, int64_t pool[2])
{
	const struct snap_segment *sg;
	uint32_t lo = 0, hi = m->n_seg_by_addr;

	pool[0] = pool[1] = 0;
	/* the last segment starting at or below addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->snap->segments[m->seg_by_addr[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return;
	sg = &m->snap->segments[m->seg_by_addr[lo - 1]];
	if (addr - sg->addr < sg->total_size) {
		pool[0] = sg->pool_id[0];
		pool[1] = sg->pool_id[1];
	}
}

/* Group of (stream, pool); past TL_MAX_STREAM_GROUPS distinct keys the
 * rest share the last group. */
static uint32_t
stream_key_group(struct tl_model *m, uint64_t stream, const int64_t pool[2])
{
	uint32_t i;

	for (i = 0; i < m->n_skeys; i++)
		if (m->skeys[i].stream == stream &&
		    m->skeys[i].pool[0] == pool[0] &&
		    m->skeys[i].pool[1] == pool[1])
			return i;
	if (m->n_skeys == TL_MAX_STREAM_GROUPS)
		return TL_MAX_STREAM_GROUPS - 1;
	m->skeys = xreallocarray(m->skeys, (size_t)m->n_skeys + 1,
	    sizeof *m->skeys);
	m->skeys[m->n_skeys].stream = stream;
	m->skeys[m->n_skeys].pool[0] = pool[0];
	m->skeys[m->n_skeys].pool[1] = pool[1];
	return m->n_skeys++;
}

static uint32_t
stream_group(void *ctx, const struct idx_elem *e, uint64_t k)
{
	struct tl_model *m = ctx;
	int64_t pool[2];

	(void)k;
	pool_of(m, e->addr, pool);
	return stream_key_group(m, e->stream, pool);
}

/* Adds mode st's grouping to gs[*n], or says why it has none. */
static int
add_grouping(struct tl_model *m, int st, struct tl_grouping *gs,
    unsigned *n, char *why, size_t size)
{
	struct tl_grouping *gj = &gs[*n];
	uint32_t i;

	gj->g = &m->groups[st];
	if (st == TL_STACK_SITE) {
		if (tl_model_sites(m) == NULL) {
			snprintf(why, size, "call sites unavailable");
			return -1;
		}
		/* resolve every stack first: site ids are then all known */
		for (i = 0; i < m->snap->n_stacks; i++)
			an_site_of(&m->sites, i);
		gj->max_groups = m->sites.n + 1;
		gj->group_of = site_group;
		gj->ctx = &m->sites;
	} else if (st == TL_STACK_CATEGORY) {
		if (m->cats == NULL) {
			snprintf(why, size, "no categories");
			return -1;
		}
		gj->max_groups = AN_CAT_COUNT;
		gj->group_of = category_group;
		gj->ctx = m;
	} else {
		if (m->snap == NULL) {
			snprintf(why, size, "no segments");
			return -1;
		}
		build_seg_table(m);
		gj->max_groups = TL_MAX_STREAM_GROUPS;
		gj->group_of = stream_group;
		gj->ctx = m;
	}
	(*n)++;
	return 0;
}

/* Builds mode st's curves and, in the same pass, those of the other of
 * the call-site and stream/pool modes when it is not built yet: one
 * decode of the trace for both (the category mode waits for its
 * analysis, which only its first use runs). */
static int
prepare_groups(struct tl_model *m, int st, char *why, size_t size)
{
	struct tl_grouping gs[2];
	char other_why[128];
	unsigned n = 0;
	int other = -1, r;

	if (add_grouping(m, st, gs, &n, why, size) != 0)
		return -1;
	if (st == TL_STACK_SITE || st == TL_STACK_STREAM) {
		other = st == TL_STACK_SITE ? TL_STACK_STREAM : TL_STACK_SITE;
		if (m->groups_ok[other] != 0 || add_grouping(m, other, gs, &n,
		    other_why, sizeof other_why) != 0)
			other = -1;
	}
	r = tl_groups_build_n(gs, n, m->tl);
	if (r != 0)
		snprintf(why, size, "too many events for grouped bands");
	if (other >= 0)
		m->groups_ok[other] = r == 0 ? 1 : -1;
	return r;
}

struct an_sites *
tl_model_sites(struct tl_model *m)
{
	if (m->sites_ok == 0) {
		m->sites_ok = -1;
		if (m->snap != NULL &&
		    an_sites_init(&m->sites, m->snap, 1, NULL, NULL) == 0)
			m->sites_ok = 1;
	}
	return m->sites_ok > 0 ? &m->sites : NULL;
}

void
tl_model_set_categories(struct tl_model *m, const struct an_categories *c)
{
	if (c != NULL && c->n_elems != m->tl->n_elems)
		c = NULL;
	if (c == m->cats)
		return;
	/* category bands built from another table are stale */
	tl_groups_destroy(&m->groups[TL_STACK_CATEGORY]);
	m->groups_ok[TL_STACK_CATEGORY] = 0;
	m->cats = c;
}

int
tl_model_prepare(struct tl_model *m, int st, char *why, size_t size)
{
	why[0] = '\0';
	if (st < 0 || st >= TL_STACK_COUNT)
		return -1;
	if (m->groups_ok[st] != 0) {
		if (m->groups_ok[st] < 0)
			snprintf(why, size, "%s bands unavailable",
			    tl_stack_name(st));
		return m->groups_ok[st] > 0 ? 0 : -1;
	}
	if (st == TL_STACK_SEGMENT) {
		if (m->snap == NULL) {
			snprintf(why, size, "no segments");
			m->groups_ok[st] = -1;
			return -1;
		}
		tl_segs_build(&m->segs, m->snap, m->tl->device, m->trace);
		tl_build_layer(m, TL_LAYER_SEG);
		m->groups_ok[st] = 1;
		return 0;
	}
	if (prepare_groups(m, st, why, size) != 0) {
		m->groups_ok[st] = -1;
		return -1;
	}
	m->groups_ok[st] = 1;
	return 0;
}

uint32_t
tl_group_of_elem(struct tl_model *m, int st, uint64_t k,
    const struct idx_elem *e)
{
	if (k >= m->tl->n_elems || m->groups_ok[st] <= 0)
		return TL_NO_GROUP;
	switch (st) {
	case TL_STACK_SITE: return an_site_of(&m->sites, e->stack);
	case TL_STACK_CATEGORY: return an_category_of(m->cats, k);
	case TL_STACK_STREAM: return stream_group(m, e, k);
	default: return TL_NO_GROUP;
	}
}

uint32_t
tl_model_group_of(struct tl_model *m, int st, uint64_t k)
{
	struct idx_elem e;

	if (k >= m->tl->n_elems || m->groups_ok[st] <= 0)
		return TL_NO_GROUP;
	e = idx_tl_elem(m->tl, k);
	return tl_group_of_elem(m, st, k, &e);
}


/* ---- building a mode away from the model --------------------------------- */

void
tl_prep_begin(struct tl_prep *p, const struct tl_model *m, int st,
    const struct an_categories *cats)
{
	int k;

	memset(p, 0, sizeof *p);
	p->st = st;
	p->w.snap = m->snap;
	p->w.tl = m->tl;
	p->w.trace = m->trace;
	p->w.max_drawn = m->max_drawn;
	p->w.cats = cats != NULL && cats->n_elems == m->tl->n_elems ? cats :
	    NULL;
	for (k = 0; k < TL_STACK_COUNT; k++)
		p->had[k] = p->w.groups_ok[k] = m->groups_ok[k];
}

int
tl_prep_build(struct tl_prep *p)
{
	struct tl_model *w = &p->w;
	int st = p->st;

	if (st < 0 || st >= TL_STACK_COUNT || w->groups_ok[st] != 0)
		return 0;
	if (st == TL_STACK_SEGMENT) {
		if (w->snap == NULL) {
			snprintf(p->why, sizeof p->why, "no segments");
			w->groups_ok[st] = -1;
		} else {
			tl_segs_build(&w->segs, w->snap, w->tl->device,
			    w->trace);
			w->groups_ok[st] = 1;
		}
	} else
		w->groups_ok[st] = prepare_groups(w, st, p->why,
		    sizeof p->why) == 0 ? 1 : -1;
	/* asked to stop: what was built may be cut short */
	return sv_stop_requested() ? -1 : 0;
}

unsigned
tl_prep_modes(const struct tl_prep *p)
{
	unsigned mask = 0;
	int k;

	for (k = 0; k < TL_STACK_COUNT; k++)
		if (p->had[k] == 0 && p->w.groups_ok[k] != 0)
			mask |= 1u << k;
	return mask;
}

/* Moves mode k's data from w into m (m has none). */
static void
adopt_one(struct tl_model *m, struct tl_model *w, int k)
{
	m->groups[k] = w->groups[k];
	memset(&w->groups[k], 0, sizeof w->groups[k]);
	if (k == TL_STACK_SITE && w->groups_ok[k] > 0) {
		/* the site ids of the bands are w's table's */
		if (m->sites_ok > 0)
			an_sites_destroy(&m->sites);
		m->sites = w->sites;
		m->sites_ok = w->sites_ok;
		w->sites_ok = 0;
	} else if (k == TL_STACK_STREAM && w->groups_ok[k] > 0) {
		free(m->skeys);
		free(m->seg_by_addr);
		m->skeys = w->skeys;
		m->n_skeys = w->n_skeys;
		m->seg_by_addr = w->seg_by_addr;
		m->n_seg_by_addr = w->n_seg_by_addr;
		w->skeys = NULL;
		w->seg_by_addr = NULL;
	} else if (k == TL_STACK_SEGMENT && w->groups_ok[k] > 0) {
		tl_segs_destroy(&m->segs);
		m->segs = w->segs;
		memset(&w->segs, 0, sizeof w->segs);
		tl_build_layer(m, TL_LAYER_SEG);
	}
	m->groups_ok[k] = w->groups_ok[k];
}

int
tl_model_adopt(struct tl_model *m, struct tl_prep *p, char *why,
    size_t size)
{
	unsigned mask = tl_prep_modes(p);
	int k, st = p->st;

	why[0] = '\0';
	if (p->w.tl != m->tl)
		return -1; /* another device's */
	for (k = 0; k < TL_STACK_COUNT; k++) {
		if (!(mask & 1u << k) || m->groups_ok[k] != 0)
			continue;
		/* category bands go with the table they were built from */
		if (k == TL_STACK_CATEGORY && (m->cats == NULL ||
		    p->w.cats == NULL ||
		    m->cats->n_elems != p->w.cats->n_elems))
			continue;
		adopt_one(m, &p->w, k);
	}
	if (st < 0 || st >= TL_STACK_COUNT)
		return -1;
	if (m->groups_ok[st] < 0)
		snprintf(why, size, "%s", p->why[0] != '\0' ? p->why :
		    "unavailable");
	return m->groups_ok[st] > 0 ? 0 : -1;
}

void
tl_prep_destroy(struct tl_prep *p)
{
	int k;

	for (k = 0; k < TL_STACK_COUNT; k++)
		tl_groups_destroy(&p->w.groups[k]);
	tl_segs_destroy(&p->w.segs);
	if (p->w.sites_ok > 0)
		an_sites_destroy(&p->w.sites);
	free(p->w.skeys);
	free(p->w.seg_by_addr);
	memset(p, 0, sizeof *p);
}
