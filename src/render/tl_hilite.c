/*
 * The highlighted set of the timeline (the leak view's blocks): running
 * sums of its bytes over the trace, the drawn bands it holds, and its
 * bytes per group of each grouped mode. See timeline.h.
 */
#include "config.h"

#include "render/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "render/tl_int.h"
#include "util/search.h"
#include "util/xalloc.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct ev_size {
	int64_t ev;
	uint64_t size;
};

static int
cmp_ev_size(const void *a, const void *b)
{
	int64_t x = ((const struct ev_size *)a)->ev;
	int64_t y = ((const struct ev_size *)b)->ev;

	return x < y ? -1 : x > y;
}

/* Sorts n (event, size) pairs into ev[] and running sums cum[]. */
static void
sums_of(struct ev_size *p, uint64_t n, int64_t **ev, uint64_t **cum)
{
	uint64_t i, sum = 0;

	qsort(p, n, sizeof *p, cmp_ev_size);
	*ev = xcalloc(n + 1, sizeof **ev);
	*cum = xcalloc(n + 1, sizeof **cum);
	for (i = 0; i < n; i++) {
		sum += p[i].size;
		(*ev)[i] = p[i].ev;
		(*cum)[i] = sum;
	}
}

/* Running sums of the elements vals[0..n). */
static void
sums_build(struct tl_sums *s, const struct idx_elem *vals, uint64_t n)
{
	struct ev_size *al = xcalloc(n + 1, sizeof *al);
	struct ev_size *fr = xcalloc(n + 1, sizeof *fr);
	uint64_t i, na = 0, nf = 0;

	for (i = 0; i < n; i++) {
		const struct idx_elem *e = &vals[i];

		al[na].ev = e->alloc_ev;
		al[na++].size = e->size;
		if (e->free_ev >= 0) {
			fr[nf].ev = e->free_ev;
			fr[nf++].size = e->size;
		}
	}
	sums_of(al, na, &s->alloc_ev, &s->alloc_cum);
	sums_of(fr, nf, &s->free_ev, &s->free_cum);
	s->n_alloc = na;
	s->n_free = nf;
	free(fr);
	free(al);
}

static void
sums_destroy(struct tl_sums *s)
{
	free(s->alloc_ev);
	free(s->alloc_cum);
	free(s->free_ev);
	free(s->free_cum);
	memset(s, 0, sizeof *s);
}

/* Running sum of the entries with ev[i] <= at. */
static uint64_t
sum_upto(const int64_t *ev, const uint64_t *cum, uint64_t n, int64_t at)
{
	uint64_t k = sv_count_le_i64(ev, n, at);

	return k > 0 ? cum[k - 1] : 0;
}

static uint64_t
sums_bytes(const struct tl_sums *s, int64_t ev)
{
	uint64_t a = sum_upto(s->alloc_ev, s->alloc_cum, s->n_alloc, ev);
	uint64_t f = sum_upto(s->free_ev, s->free_cum, s->n_free, ev);

	return a > f ? a - f : 0;
}

/* The set's elements split by group of mode st. */
static void
hilite_parts(struct tl_hilite *h, struct tl_model *m, int st)
{
	struct idx_elem *vals = xcalloc(h->n_elems + 1, sizeof *vals);
	uint64_t i, j, n;
	uint32_t *grp = xcalloc(h->n_elems + 1, sizeof *grp), np = 0, g;

	for (i = 0; i < h->n_elems; i++)
		grp[i] = tl_group_of_elem(m, st, h->elems[i], &h->vals[i]);
	/* one part per distinct group (sets are small: quadratic is fine
	 * up to the few groups a leak site spans) */
	for (i = 0; i < h->n_elems; i++) {
		g = grp[i];
		for (j = 0; j < i && grp[j] != g; j++)
			;
		if (j < i || g == TL_NO_GROUP)
			continue;
		for (n = 0, j = i; j < h->n_elems; j++)
			if (grp[j] == g)
				vals[n++] = h->vals[j];
		h->parts[st] = xreallocarray(h->parts[st], (size_t)np + 1,
		    sizeof *h->parts[st]);
		h->parts[st][np].group = g;
		sums_build(&h->parts[st][np].sums, vals, n);
		np++;
		if (np >= 64)
			break;
	}
	h->n_parts[st] = np;
	h->parts_ok[st] = 1;
	free(grp);
	free(vals);
}

struct id_val {
	uint64_t id;
	struct idx_elem e;
};

static int
cmp_id_val(const void *a, const void *b)
{
	uint64_t x = ((const struct id_val *)a)->id;
	uint64_t y = ((const struct id_val *)b)->id;

	return x < y ? -1 : x > y;
}

void
tl_hilite_init(struct tl_hilite *h, const struct tl_model *m,
    const uint64_t *elems, const struct idx_elem *vals, uint64_t n)
{
	const struct idx_timeline *tl = m->tl;
	const struct tl_layer *L = &m->layer[TL_LAYER_ALLOC];
	struct id_val *iv = xcalloc(n + 1, sizeof *iv);
	uint64_t i;
	uint32_t j;

	memset(h, 0, sizeof *h);
	for (i = 0; i < n; i++)
		if (elems[i] < tl->n_elems) {
			iv[h->n_elems].id = elems[i];
			if (vals != NULL)
				iv[h->n_elems].e = vals[i];
			h->n_elems++;
		}
	qsort(iv, h->n_elems, sizeof *iv, cmp_id_val);
	h->elems = xcalloc(h->n_elems + 1, sizeof *h->elems);
	h->vals = xcalloc(h->n_elems + 1, sizeof *h->vals);
	for (i = 0; i < h->n_elems; i++) {
		h->elems[i] = iv[i].id;
		/* in id order: each element stripe is decoded once */
		h->vals[i] = vals != NULL ? iv[i].e :
		    idx_tl_elem(tl, iv[i].id);
	}
	free(iv);
	sums_build(&h->all, h->vals, h->n_elems);
	h->n_drawn = L->n;
	h->drawn = xcalloc((size_t)L->n + 1, 1);
	for (j = 0; j < L->n; j++)
		h->drawn[j] = bsearch(&L->d[j].elem, h->elems, h->n_elems,
		    sizeof *h->elems, cmp_u64) != NULL;
	/* the grouped modes prepared so far; others in tl_hilite_update */
	tl_hilite_update(h, (struct tl_model *)m);
}

void
tl_hilite_update(struct tl_hilite *h, struct tl_model *m)
{
	int st;

	for (st = 0; st < TL_STACK_COUNT; st++)
		if (tl_stack_grouped(st) && m->groups_ok[st] > 0 &&
		    !h->parts_ok[st])
			hilite_parts(h, m, st);
}

void
tl_hilite_destroy(struct tl_hilite *h)
{
	uint32_t i;
	int st;

	sums_destroy(&h->all);
	free(h->drawn);
	free(h->elems);
	free(h->vals);
	for (st = 0; st < TL_STACK_COUNT; st++) {
		for (i = 0; i < h->n_parts[st]; i++)
			sums_destroy(&h->parts[st][i].sums);
		free(h->parts[st]);
	}
	memset(h, 0, sizeof *h);
}

uint64_t
tl_hilite_bytes(const struct tl_hilite *h, int64_t ev)
{
	return sums_bytes(&h->all, ev);
}

uint64_t
tl_hilite_group_bytes(const struct tl_hilite *h, int st, uint32_t g,
    int64_t ev)
{
	uint32_t i;

	for (i = 0; i < h->n_parts[st]; i++)
		if (h->parts[st][i].group == g)
			return sums_bytes(&h->parts[st][i].sums, ev);
	return 0;
}

