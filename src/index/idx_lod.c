/*
 * Level-of-detail pyramid: bottom level from the raw per-event totals,
 * each higher level from pairs of the one below; range queries walk
 * aligned buckets greedily from the left.
 */
#include "config.h"

#include "index/idx_lod.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

uint64_t
idx_lod_count(uint64_t n, uint32_t *n_levels)
{
	uint64_t total = 0, nb;
	uint32_t levels = 0, s = IDX_LOD_MIN_SHIFT;

	while (n > 0 && levels < IDX_LOD_MAX_LEVELS) {
		nb = ((n - 1) >> s) + 1;
		total += nb;
		levels++;
		s++;
		if (nb <= 1)
			break;
	}
	if (n_levels != NULL)
		*n_levels = levels;
	return total;
}

static void
merge(struct idx_lod_bucket *a, const struct idx_lod_bucket *b)
{
	if (b->min_total < a->min_total)
		a->min_total = b->min_total;
	if (b->max_total > a->max_total)
		a->max_total = b->max_total;
	if (b->max_reserved > a->max_reserved)
		a->max_reserved = b->max_reserved;
}

static void
raw_bucket(const struct idx_timeline *tl, uint64_t i,
    struct idx_lod_bucket *b)
{
	b->min_total = idx_tl_total(tl, i);
	b->max_total = idx_tl_total(tl, i);
	b->max_reserved = idx_tl_reserved(tl, i);
}

static void
lod_levels(struct idx_lod *lod, uint64_t n)
{
	uint64_t off = 0, nb;
	uint32_t j, s = IDX_LOD_MIN_SHIFT;

	lod->n_events = n;
	idx_lod_count(n, &lod->n_levels);
	for (j = 0; j < lod->n_levels; j++, s++) {
		nb = ((n - 1) >> s) + 1;
		lod->level_off[j] = off;
		lod->level_n[j] = nb;
		off += nb;
	}
}

void
idx_lod_init(struct idx_lod *lod, uint64_t n, const struct idx_lod_bucket *b)
{
	memset(lod, 0, sizeof *lod);
	lod_levels(lod, n);
	lod->buckets = b;
}

void
idx_lod_init_cum(struct idx_lod *lod, uint64_t n,
    const struct idx_lod_cum *cum, uint64_t base_total,
    int64_t base_reserved)
{
	memset(lod, 0, sizeof *lod);
	lod_levels(lod, n);
	lod->cum = cum;
	lod->base_total = base_total;
	lod->base_reserved = (uint64_t)base_reserved;
}

/* The total or reserved value for base + sum (idx_timeline.h). */
static uint64_t
clamp_sum(uint64_t base, int64_t sum)
{
	int64_t v = (int64_t)(base + (uint64_t)sum);

	return v < 0 ? 0 : (uint64_t)v;
}

void
idx_lod_get(const struct idx_lod *lod, uint64_t k, struct idx_lod_bucket *b)
{
	const struct idx_lod_cum *c;

	if (lod->buckets != NULL) {
		*b = lod->buckets[k];
		return;
	}
	c = &lod->cum[k];
	b->min_total = clamp_sum(lod->base_total, c->min_total);
	b->max_total = clamp_sum(lod->base_total, c->max_total);
	b->max_reserved = clamp_sum(lod->base_reserved, c->max_reserved);
}

void
idx_lod_cum_levels(struct idx_lod_cum *all, uint64_t n)
{
	struct idx_lod lod;
	uint64_t k;
	uint32_t j;

	memset(&lod, 0, sizeof lod);
	lod_levels(&lod, n);
	for (j = 1; j < lod.n_levels; j++) {
		const struct idx_lod_cum *below = all + lod.level_off[j - 1];
		struct idx_lod_cum *cur = all + lod.level_off[j];

		for (k = 0; k < lod.level_n[j]; k++) {
			cur[k] = below[2 * k];
			if (2 * k + 1 < lod.level_n[j - 1]) {
				const struct idx_lod_cum *o = &below[2 * k + 1];

				if (o->min_total < cur[k].min_total)
					cur[k].min_total = o->min_total;
				if (o->max_total > cur[k].max_total)
					cur[k].max_total = o->max_total;
				if (o->max_reserved > cur[k].max_reserved)
					cur[k].max_reserved = o->max_reserved;
			}
		}
	}
}

void
idx_lod_fill(const struct idx_timeline *tl, struct idx_lod_bucket *out)
{
	struct idx_lod lod;
	uint64_t k, i, n = tl->n_events;
	uint32_t j;

	idx_lod_init(&lod, n, out);
	if (lod.n_levels == 0)
		return;
	for (k = 0; k < lod.level_n[0]; k++) {
		uint64_t lo = k << IDX_LOD_MIN_SHIFT;
		uint64_t hi = lo + (1u << IDX_LOD_MIN_SHIFT);
		struct idx_lod_bucket *b = &out[k], r;

		if (hi > n)
			hi = n;
		raw_bucket(tl, lo, b);
		for (i = lo + 1; i < hi; i++) {
			raw_bucket(tl, i, &r);
			merge(b, &r);
		}
	}
	for (j = 1; j < lod.n_levels; j++) {
		const struct idx_lod_bucket *below = out + lod.level_off[j - 1];
		struct idx_lod_bucket *cur = out + lod.level_off[j];

		for (k = 0; k < lod.level_n[j]; k++) {
			cur[k] = below[2 * k];
			if (2 * k + 1 < lod.level_n[j - 1])
				merge(&cur[k], &below[2 * k + 1]);
		}
	}
}

void
idx_lod_build(struct idx_lod *lod, const struct idx_timeline *tl)
{
	uint64_t n = idx_lod_count(tl->n_events, NULL);
	struct idx_lod_bucket *b = xmalloc((n ? n : 1) * sizeof *b);

	idx_lod_fill(tl, b);
	idx_lod_init(lod, tl->n_events, b);
	lod->owned = b;
}

void
idx_lod_destroy(struct idx_lod *lod)
{
	free(lod->owned);
	memset(lod, 0, sizeof *lod);
}

/* Runs of events that no bucket covers, in one range: at most one before
 * the first bucket and one after the last (lod_plan). */
#define LOD_RUNS 2

static void
merge_into(struct idx_lod_bucket *out, const struct idx_lod_bucket *b,
    int *any)
{
	if (*any)
		merge(out, b);
	else
		*out = *b;
	*any = 1;
}

static void
merge_run(struct idx_lod_bucket *out, const struct idx_tl_run *run,
    int *any)
{
	struct idx_lod_bucket b;

	b.min_total = run->min_total;
	b.max_total = run->max_total;
	b.max_reserved = run->max_reserved;
	merge_into(out, &b, any);
}

/*
 * The buckets of [from, to) (from < to <= n), greedily from the left: at
 * each event the largest one that starts there and ends by to. They are
 * merged into *out (*any set when there was one); the events no bucket
 * covers go to run[0, *nrun) unread, for idx_tl_extremes() to read
 * together with others. Those are the events up to the first bucket
 * boundary, and those after the last boundary that a whole bucket
 * fits before to: from a boundary on, a bucket fits until one does not,
 * and then none does. A third run cannot happen; it would be read here.
 */
static void
lod_plan(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t from, uint64_t to, struct idx_lod_bucket *out, int *any,
    struct idx_tl_run *run, int *nrun)
{
	uint64_t n = tl->n_events, i = from, e;
	struct idx_lod_bucket r;

	*any = 0;
	*nrun = 0;
	while (i < to) {
		int32_t j;
		int used = 0;

		/* The largest level whose bucket starts at i and ends by to. */
		for (j = (int32_t)lod->n_levels - 1; j >= 0; j--) {
			uint32_t s = IDX_LOD_MIN_SHIFT + (uint32_t)j;
			uint64_t span = (uint64_t)1 << s, end;

			if ((i & (span - 1)) != 0)
				continue;
			end = i + span > n ? n : i + span;
			if (end > to)
				continue;
			idx_lod_get(lod, lod->level_off[j] + (i >> s), &r);
			merge_into(out, &r, any);
			i = end;
			used = 1;
			break;
		}
		if (used)
			continue;
		/* events one by one up to the next bucket boundary */
		e = (i | (((uint64_t)1 << IDX_LOD_MIN_SHIFT) - 1)) + 1;
		if (e > to)
			e = to;
		if (*nrun == LOD_RUNS) {
			struct idx_tl_run x = {i, e, 0, 0, 0};

			idx_tl_extremes(tl, &x, 1);
			merge_run(out, &x, any);
		} else {
			run[*nrun].from = i;
			run[(*nrun)++].to = e;
		}
		i = e;
	}
}

/* Min/max of one event, or of the bases when there is none (the empty
 * range's answer). */
static void
lod_point(const struct idx_timeline *tl, uint64_t from,
    struct idx_lod_bucket *out)
{
	uint64_t n = tl->n_events;

	if (from < n) {
		raw_bucket(tl, from, out);
	} else if (n > 0) {
		raw_bucket(tl, n - 1, out);
	} else {
		out->min_total = out->max_total = tl->base_total;
		out->max_reserved = tl->base_reserved;
	}
}

void
idx_lod_range(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t from, uint64_t to, struct idx_lod_bucket *out)
{
	struct idx_tl_run run[LOD_RUNS];
	int any, nrun, k;

	if (to > tl->n_events)
		to = tl->n_events;
	if (from >= to) {
		lod_point(tl, from, out);
		return;
	}
	lod_plan(lod, tl, from, to, out, &any, run, &nrun);
	if (nrun > 0)
		idx_tl_extremes(tl, run, (size_t)nrun);
	for (k = 0; k < nrun; k++)
		merge_run(out, &run[k], &any);
}

void
idx_lod_columns(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t from, uint64_t to, uint32_t ncols, struct idx_lod_bucket *out)
{
	uint64_t span, lo, hi, *bound;
	uint32_t c;

	if (ncols == 0)
		return;
	if (to > tl->n_events)
		to = tl->n_events;
	span = to > from ? to - from : 0;
	if (span < ncols) {
		/* fewer events than columns: some columns show the same
		 * event; one column at a time */
		for (c = 0; c < ncols; c++) {
			lo = from + (uint64_t)((unsigned __int128)span * c /
			    ncols);
			hi = from + (uint64_t)((unsigned __int128)span *
			    (c + 1) / ncols);
			if (hi <= lo)
				hi = lo + 1;
			idx_lod_range(lod, tl, lo, hi, &out[c]);
		}
		return;
	}
	bound = xreallocarray(NULL, (size_t)ncols + 1, sizeof *bound);
	for (c = 0; c <= ncols; c++)
		bound[c] = from + (uint64_t)((unsigned __int128)span * c /
		    ncols);
	idx_lod_spans(lod, tl, bound, ncols, out);
	free(bound);
}

void
idx_lod_spans(const struct idx_lod *lod, const struct idx_timeline *tl,
    const uint64_t *bound, uint32_t n, struct idx_lod_bucket *out)
{
	struct idx_tl_run *runs;
	uint32_t *col_of, c;
	size_t nr = 0, k;
	int *any, nrun;

	if (n == 0)
		return;
	/* Their pyramid parts first, then the events no bucket covers, all
	 * in one pass over their stripes (two spans meet inside one stripe,
	 * where both want a few events of it). */
	runs = xreallocarray(NULL, (size_t)n * LOD_RUNS, sizeof *runs);
	col_of = xreallocarray(NULL, (size_t)n * LOD_RUNS, sizeof *col_of);
	any = xreallocarray(NULL, n, sizeof *any);
	for (c = 0; c < n; c++) {
		uint64_t lo = bound[c], hi = bound[c + 1];

		if (hi > tl->n_events)
			hi = tl->n_events;
		if (lo >= hi) {
			lod_point(tl, lo, &out[c]);
			any[c] = 1;
			continue;
		}
		lod_plan(lod, tl, lo, hi, &out[c], &any[c], runs + nr, &nrun);
		for (k = 0; k < (size_t)nrun; k++)
			col_of[nr++] = c;
	}
	idx_tl_extremes(tl, runs, nr);
	for (k = 0; k < nr; k++)
		merge_run(&out[col_of[k]], &runs[k], &any[col_of[k]]);
	free(runs);
	free(col_of);
	free(any);
}
