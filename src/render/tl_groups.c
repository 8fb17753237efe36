/*
 * Per-group byte curves for the timeline's grouped stacking modes. See
 * tl_groups.h.
 */
#include "config.h"

#include "render/tl_groups.h"

#include <stdlib.h>
#include <string.h>

#include "util/stop.h"
#include "util/xalloc.h"

/* Does group grp ever hold bytes? */
static int
used(const struct tl_groups *g, uint32_t grp)
{
	return g->base[grp] > 0 || g->c[grp].n_changes > 0;
}

/* Events ahead of the one pass 2 is at whose element it fetches. */
#define TL_GROUPS_AHEAD 16

/* Build state of an element: what its next event does. */
enum { EL_NOT_STARTED, EL_LIVE, EL_DONE };

/* What pass 2 needs of an element, in one cache line's quarter: the
 * events of a trace refer to elements at random. The group of the
 * first grouping; those of the others in a side array (groups_of). */
struct el {
	uint64_t size;
	uint32_t group;
	uint8_t state;
};

/* Where the group of element k in grouping j (of ng) is kept. */
static uint32_t *
group_slot(struct el *el, uint32_t *more, unsigned ng, uint64_t k,
    unsigned j)
{
	return j == 0 ? &el[k].group : &more[k * (ng - 1) + j - 1];
}

/* Pass 1 for grouping j of an element: its group, base bytes, changes
 * (in want[grp]) and the group's largest element. Returns 1 when the
 * element belongs to a group of j. */
static int
scan_elem(const struct tl_grouping *gj, struct el *el, uint64_t k,
    const struct idx_elem *e, uint32_t *slot, uint64_t *want, uint32_t *n)
{
	struct tl_groups *g = gj->g;
	uint32_t grp;

	grp = gj->group_of(gj->ctx, e, k);
	*slot = grp < gj->max_groups ? grp : TL_NO_GROUP;
	if (*slot == TL_NO_GROUP)
		return 0;
	if (grp + 1 > *n)
		*n = grp + 1;
	if (g->max_elem[grp] == UINT64_MAX ||
	    e->size > el[g->max_elem[grp]].size) {
		g->max_elem[grp] = k;
		g->stack[grp] = e->stack;
	}
	if (e->alloc_ev < 0) {
		/* alive from the start: the base, and its free */
		g->base[grp] += e->size;
		if (e->free_ev >= 0)
			want[grp]++;
	} else
		want[grp] += e->free_ev >= 0 ? 2 : 1;
	return 1;
}

/* Pass 1: each element's groups, size and state, and scan_elem's
 * figures per grouping (n[j]: its number of groups). Returns -1 when
 * asked to stop (util/stop.h). */
static int
scan_elems(const struct tl_grouping *gs, unsigned ng,
    const struct idx_timeline *tl, struct el *el, uint32_t *more,
    uint64_t **want, uint32_t *n)
{
	uint64_t k;
	unsigned j;
	int any;

	for (k = 0; k < tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(tl, k);

		if (sv_stop_poll(k))
			return -1;
		el[k].size = e.size;
		for (j = 0, any = 0; j < ng; j++)
			any |= scan_elem(&gs[j], el, k, &e,
			    group_slot(el, more, ng, k, j), want[j], &n[j]);
		if (!any)
			el[k].state = EL_DONE;
		else
			el[k].state = e.alloc_ev < 0 ? EL_LIVE : EL_NOT_STARTED;
	}
	return 0;
}

/* A curve being written: the last change's event and bytes. */
struct curve_fill {
	uint32_t ev;
	uint64_t live;
	size_t cap;
};

/* Writes v as a varint at p; returns the byte after it. */
static inline uint8_t *
put_uv(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint64_t
get_uv(const uint8_t **p)
{
	uint64_t v = 0;
	unsigned s = 0;

	while (**p >= 0x80) {
		v |= (uint64_t)(*(*p)++ & 0x7f) << s;
		s += 7;
	}
	return v | (uint64_t)*(*p)++ << s;
}

/* Appends the change (ev, live) to curve c. */
static void
curve_add(struct tl_group_curve *c, struct curve_fill *f, uint32_t ev,
    uint64_t live)
{
	uint64_t j = c->n_changes++, d;

	if (j % TL_GROUPS_CHUNK == 0) {
		c->cev[j / TL_GROUPS_CHUNK] = ev;
		c->clive[j / TL_GROUPS_CHUNK] = live;
		c->cpos[j / TL_GROUPS_CHUNK] = c->len;
		c->n_chunks++;
	} else {
		uint8_t *p;

		if (c->len + 20 > f->cap) {
			/* past the first guess (fill_begin): half as much
			 * again */
			f->cap = c->len + 20 + (c->len + 20) / 2;
			c->data = xreallocarray(c->data, f->cap, 1);
		}
		d = live - f->live;
		p = put_uv(c->data + c->len, ev - f->ev);
		p = put_uv(p, d << 1 ^ (uint64_t)((int64_t)d >> 63));
		c->len = (size_t)(p - c->data);
	}
	f->ev = ev;
	f->live = live;
}

/* Per grouping during pass 2: what each group's curve was sized for
 * and its running bytes. */
struct fill {
	uint64_t *want;
	uint64_t *run;
	struct curve_fill *cf;
};

static void
fill_begin(struct fill *f, const struct tl_grouping *gj, uint64_t *want,
    uint32_t n)
{
	struct tl_groups *g = gj->g;
	uint64_t nc;
	uint32_t grp;

	g->n = n;
	g->c = xcalloc((size_t)n + 1, sizeof *g->c);
	f->want = want;
	f->cf = xcalloc((size_t)n + 1, sizeof *f->cf);
	f->run = xcalloc((size_t)n + 1, sizeof *f->run);
	for (grp = 0; grp < n; grp++) {
		struct tl_group_curve *c = &g->c[grp];

		nc = (want[grp] + TL_GROUPS_CHUNK - 1) / TL_GROUPS_CHUNK;
		c->cev = xcalloc(nc + 1, sizeof *c->cev);
		c->clive = xcalloc(nc + 1, sizeof *c->clive);
		c->cpos = xcalloc(nc + 1, sizeof *c->cpos);
		/* about 4 bytes a change: room for 5, cut to size after */
		f->cf[grp].cap = want[grp] * 5 + 16;
		c->data = xmalloc(f->cf[grp].cap);
		f->run[grp] = g->base[grp];
	}
}

static void
fill_end(struct fill *f, struct tl_groups *g)
{
	uint32_t grp;

	for (grp = 0; grp < g->n; grp++) {
		struct tl_group_curve *c = &g->c[grp];

		/* no room left unused */
		c->data = xreallocarray(c->data, c->len + 1, 1);
		g->n_used += used(g, grp);
	}
	free(f->run);
	free(f->cf);
	free(f->want);
}

static void
memo_new(struct tl_groups *g)
{
	size_t i;

	g->memo = xmalloc(TL_GROUPS_MEMO * sizeof *g->memo);
	for (i = 0; i < TL_GROUPS_MEMO; i++) {
		g->memo[i].ev = INT64_MIN;
		g->memo[i].grp = 0;
		g->memo[i].bytes = 0;
	}
}

int
tl_groups_build_n(const struct tl_grouping *gs, unsigned ng,
    const struct idx_timeline *tl)
{
	struct el *el;
	uint32_t *more;
	struct fill f[TL_GROUPS_MAX_N];
	uint64_t *want[TL_GROUPS_MAX_N], k, i, size;
	uint32_t n[TL_GROUPS_MAX_N], grp;
	unsigned j;
	int start, stopped;

	if (ng == 0 || ng > TL_GROUPS_MAX_N)
		return -1;
	for (j = 0; j < ng; j++)
		memset(gs[j].g, 0, sizeof *gs[j].g);
	if (tl->n_events >= UINT32_MAX)
		return -1;
	el = xcalloc(tl->n_elems + 1, sizeof *el);
	more = xcalloc((tl->n_elems + 1) * (ng - 1) + 1, sizeof *more);
	for (j = 0; j < ng; j++) {
		struct tl_groups *g = gs[j].g;
		size_t m = (size_t)gs[j].max_groups + 1;

		want[j] = xcalloc(m, sizeof *want[j]);
		g->base = xcalloc(m, sizeof *g->base);
		g->stack = xcalloc(m, sizeof *g->stack);
		g->max_elem = xcalloc(m, sizeof *g->max_elem);
		memset(g->max_elem, 0xff, m * sizeof *g->max_elem);
		n[j] = 0;
	}
	stopped = scan_elems(gs, ng, tl, el, more, want, n) != 0;
	for (j = 0; j < ng; j++)
		fill_begin(&f[j], &gs[j], want[j], n[j]);
	/* pass 2, events in order: each group's changes come out sorted */
	for (i = 0; i < tl->n_events && !stopped; i++) {
		struct el *x;

		if (sv_stop_poll(i)) {
			stopped = 1;
			break;
		}
		/* the events refer to elements at random: the one of an
		 * event a little ahead is fetched while this one is done */
		if (i + TL_GROUPS_AHEAD < tl->n_events) {
			k = idx_tl_ev_elem(tl, i + TL_GROUPS_AHEAD);
			if (k < tl->n_elems)
				__builtin_prefetch(&el[k]);
		}
		k = idx_tl_ev_elem(tl, i);
		if (k >= tl->n_elems || el[k].state == EL_DONE)
			continue;
		x = &el[k];
		start = x->state == EL_NOT_STARTED;
		x->state = start ? EL_LIVE : EL_DONE;
		for (j = 0; j < ng; j++) {
			struct tl_group_curve *c;
			uint64_t *run;

			grp = *group_slot(el, more, ng, k, j);
			if (grp == TL_NO_GROUP)
				continue;
			c = &gs[j].g->c[grp];
			if (c->n_changes >= f[j].want[grp])
				continue; /* more events than counted: a bad
					     index */
			run = &f[j].run[grp];
			size = x->size;
			if (start)
				*run += size;
			else
				*run -= size < *run ? size : *run;
			curve_add(c, &f[j].cf[grp], (uint32_t)i, *run);
		}
	}
	for (j = 0; j < ng; j++) {
		fill_end(&f[j], gs[j].g);
		if (stopped)
			tl_groups_destroy(gs[j].g);
		else
			memo_new(gs[j].g);
	}
	free(more);
	free(el);
	return stopped ? -1 : 0;
}

int
tl_groups_build(struct tl_groups *g, const struct idx_timeline *tl,
    uint32_t max_groups, tl_group_fn group_of, void *ctx)
{
	struct tl_grouping gj = { g, max_groups, group_of, ctx };

	return tl_groups_build_n(&gj, 1, tl);
}

void
tl_groups_destroy(struct tl_groups *g)
{
	uint32_t grp;

	for (grp = 0; g->c != NULL && !g->borrowed && grp < g->n; grp++) {
		free(g->c[grp].cev);
		free(g->c[grp].clive);
		free(g->c[grp].cpos);
		free(g->c[grp].data);
	}
	free(g->c);
	free(g->base);
	free(g->stack);
	free(g->max_elem);
	free(g->memo);
	memset(g, 0, sizeof *g);
}

/* The samples' walk for tl_groups_sampled: with fill NULL, counts each
 * group's changes into want; else appends them. cur (n zeroed), seen (n,
 * UINT64_MAX) and live (n) are its work arrays. */
static void
sample_walk(struct tl_groups *g, const int64_t *ev, const uint64_t *off,
    size_t n_ev, const struct tl_group_sample *pairs, uint64_t *want,
    struct fill *f, uint64_t *cur, uint64_t *seen, uint32_t *live)
{
	uint32_t n_live = 0, i, kept;
	uint64_t s, p;

	for (s = 0; s < n_ev; s++) {
		for (p = off[s]; p < off[s + 1]; p++) {
			const struct tl_group_sample *q = &pairs[p];

			if (cur[q->grp] == 0 && q->bytes > 0)
				live[n_live++] = q->grp;
			seen[q->grp] = s;
			if (ev[s] < 0) {
				g->base[q->grp] = q->bytes;
			} else if (q->bytes != cur[q->grp]) {
				if (f == NULL)
					want[q->grp]++;
				else
					curve_add(&g->c[q->grp], &f->cf[q->grp],
					    (uint32_t)ev[s], q->bytes);
			}
			cur[q->grp] = q->bytes;
		}
		/* the groups that held bytes and are not in this sample
		 * hold none after it */
		for (i = kept = 0; i < n_live; i++) {
			uint32_t grp = live[i];

			if (seen[grp] != s && ev[s] >= 0) {
				if (f == NULL)
					want[grp]++;
				else
					curve_add(&g->c[grp], &f->cf[grp],
					    (uint32_t)ev[s], 0);
				cur[grp] = 0;
			}
			if (cur[grp] > 0)
				live[kept++] = grp;
		}
		n_live = kept;
	}
}

int
tl_groups_sampled(struct tl_groups *g, uint32_t max_groups,
    const int64_t *ev, const uint64_t *off, size_t n_ev,
    const struct tl_group_sample *pairs)
{
	struct tl_grouping gj;
	struct fill f;
	uint64_t *want, *cur, *seen, p, *max_size;
	uint32_t n = 0, *live;
	size_t s, m = (size_t)max_groups + 1;

	memset(g, 0, sizeof *g);
	for (s = 0; s < n_ev; s++) {
		if (ev[s] >= (int64_t)UINT32_MAX || (s > 0 &&
		    ev[s] <= ev[s - 1]) || off[s + 1] < off[s])
			return -1;
		for (p = off[s]; p < off[s + 1]; p++) {
			if (pairs[p].grp >= max_groups)
				return -1;
			if (pairs[p].grp + 1 > n)
				n = pairs[p].grp + 1;
		}
	}
	g->base = xcalloc(m, sizeof *g->base);
	g->stack = xcalloc(m, sizeof *g->stack);
	g->max_elem = xcalloc(m, sizeof *g->max_elem);
	memset(g->max_elem, 0xff, m * sizeof *g->max_elem);
	max_size = xcalloc(m, sizeof *max_size);
	for (p = 0; n_ev > 0 && p < off[n_ev]; p++) {
		const struct tl_group_sample *q = &pairs[p];

		if (q->max_size >= max_size[q->grp]) {
			max_size[q->grp] = q->max_size;
			g->stack[q->grp] = q->stack;
			g->max_elem[q->grp] = q->max_elem;
		}
	}
	free(max_size);
	want = xcalloc(m, sizeof *want);
	cur = xcalloc(m, sizeof *cur);
	seen = xmalloc(m * sizeof *seen);
	live = xmalloc(m * sizeof *live);
	memset(seen, 0xff, m * sizeof *seen);
	sample_walk(g, ev, off, n_ev, pairs, want, NULL, cur, seen, live);
	gj.g = g;
	gj.max_groups = max_groups;
	/* fill_begin takes the base as each curve's start */
	fill_begin(&f, &gj, want, n);
	memset(cur, 0, m * sizeof *cur);
	memset(seen, 0xff, m * sizeof *seen);
	sample_walk(g, ev, off, n_ev, pairs, want, &f, cur, seen, live);
	fill_end(&f, g);
	free(cur);
	free(seen);
	free(live);
	memo_new(g);
	return 0;
}

int
tl_groups_remap(struct tl_groups *d, const struct tl_groups *s,
    const uint32_t *map, uint32_t max_groups)
{
	uint32_t i, n = 0;
	uint8_t *seen;

	memset(d, 0, sizeof *d);
	seen = xcalloc((size_t)max_groups + 1, 1);
	for (i = 0; i < s->n; i++) {
		if (map[i] >= max_groups || seen[map[i]]) {
			free(seen);
			return -1;
		}
		seen[map[i]] = 1;
		if (map[i] + 1 > n)
			n = map[i] + 1;
	}
	free(seen);
	/* sized as tl_groups_build_n sizes them */
	d->n = n;
	d->n_used = s->n_used;
	d->c = xcalloc((size_t)n + 1, sizeof *d->c);
	d->base = xcalloc((size_t)max_groups + 1, sizeof *d->base);
	d->stack = xcalloc((size_t)max_groups + 1, sizeof *d->stack);
	d->max_elem = xcalloc((size_t)max_groups + 1, sizeof *d->max_elem);
	memset(d->max_elem, 0xff, ((size_t)max_groups + 1) *
	    sizeof *d->max_elem);
	for (i = 0; i < s->n; i++) {
		d->c[map[i]] = s->c[i];
		d->base[map[i]] = s->base[i];
		d->stack[map[i]] = s->stack[i];
		d->max_elem[map[i]] = s->max_elem[i];
	}
	d->borrowed = 1;
	memo_new(d);
	return 0;
}

/* Group grp's bytes after ev from its curve c. */
static uint64_t
curve_at(const struct tl_groups *g, const struct tl_group_curve *c,
    uint32_t grp, int64_t ev)
{
	const uint8_t *p, *end;
	uint64_t lo, hi, mid, live, e, d, z;

	if (ev < 0 || c->n_changes == 0 || c->cev[0] > ev)
		return g->base[grp];
	/* the last chunk starting at or before ev */
	lo = 0;
	hi = c->n_chunks;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (c->cev[mid] <= ev)
			lo = mid;
		else
			hi = mid;
	}
	/* then its changes up to ev */
	live = c->clive[lo];
	e = c->cev[lo];
	p = c->data + c->cpos[lo];
	end = c->data + (lo + 1 < c->n_chunks ? c->cpos[lo + 1] : c->len);
	while (p < end) {
		d = get_uv(&p);
		z = get_uv(&p);
		if (e + d > (uint64_t)ev)
			break;
		e += d;
		live += z >> 1 ^ (0 - (z & 1));
	}
	return live;
}

/* The memo's set for (grp, ev), from the high bits of a multiplicative
 * hash: the low bits of the events a frame asks for can all be the same
 * (columns that end on runs of a power of two events), and the low bits
 * of a product depend on the low bits of its factors only. */
static struct tl_groups_memo *
memo_set(const struct tl_groups *g, int64_t ev, uint32_t grp)
{
	uint64_t h = ((uint64_t)ev ^ (uint64_t)grp << 40) *
	    0x9e3779b97f4a7c15ull;

	return g->memo + (size_t)(h >> 32) %
	    (TL_GROUPS_MEMO / TL_GROUPS_MEMO_WAYS) * TL_GROUPS_MEMO_WAYS;
}

uint64_t
tl_groups_bytes(const struct tl_groups *g, uint32_t grp, int64_t ev)
{
	const struct tl_group_curve *c;
	struct tl_groups_memo *set = NULL;
	uint64_t live;
	int w;

	if (grp >= g->n)
		return 0;
	c = &g->c[grp];
	if (g->memo != NULL && c->n_changes > TL_GROUPS_CHUNK) {
		set = memo_set(g, ev, grp);
		for (w = 0; w < TL_GROUPS_MEMO_WAYS; w++)
			if (set[w].ev == ev && set[w].grp == grp)
				return set[w].bytes;
	}
	live = curve_at(g, c, grp, ev);
	if (set != NULL) {
		/* the oldest of the set goes */
		memmove(set + 1, set, (TL_GROUPS_MEMO_WAYS - 1) * sizeof *set);
		set[0].ev = ev;
		set[0].grp = grp;
		set[0].bytes = live;
	}
	return live;
}

uint64_t
tl_groups_memory(const struct tl_groups *g)
{
	uint64_t b = (uint64_t)g->n * (sizeof *g->c + sizeof *g->base +
	    sizeof *g->stack + sizeof *g->max_elem);
	uint32_t grp;

	for (grp = 0; g->c != NULL && !g->borrowed && grp < g->n; grp++)
		b += g->c[grp].len + (g->c[grp].n_chunks + 1) *
		    (sizeof *g->c[grp].cev + sizeof *g->c[grp].clive +
		    sizeof *g->c[grp].cpos);
	return b + (g->memo != NULL ? TL_GROUPS_MEMO * sizeof *g->memo : 0);
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
