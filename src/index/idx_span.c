/*
 * Extremes of the Active Memory Timeline over runs of events, read
 * straight from the event stripes (doc/FORMAT.md, "Decoding"): the lowest
 * and the highest total and the highest reserved bytes, for the events
 * the pyramid does not cover (idx_lod.c). One pass over a stripe's
 * action, size and exception chunks serves every run in it, and fills no
 * cache entry: the timeline's columns want a few events of each of many
 * stripes, and the cache would decode four whole columns of each.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "index/idx_dec_int.h"
#include "index/idx_int.h"
#include "util/stop.h"
#include "util/xalloc.h"

/* snap_get_uv, eight bytes at a time where eight are left: the hot loop
 * of span_stripe reads one size per event, and sizes take 2 to 4 bytes
 * with the length changing from one to the next (a byte loop mispredicts
 * its exit). A varint that ends in those eight bytes holds at most 56
 * bits, so none of snap_get_uv's checks can fail on it; a longer one or
 * one near the end goes to snap_get_uv. */
static inline int
uv_fast(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x, stop;
	unsigned len;

	if (end - *p < 8)
		return snap_get_uv(p, end, v);
	x = sv_le64_get(*p);
	stop = ~x & 0x8080808080808080ull;
	if (stop == 0)
		return snap_get_uv(p, end, v);
	len = (unsigned)__builtin_ctzll(stop) / 8 + 1;
	if (len < 8)
		x &= ((uint64_t)1 << (8 * len)) - 1;
	/* the 7-bit groups together: pairs, then fours, then eights */
	x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
	x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
	x = (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
	*v = x;
	*p += len;
	return 0;
}

/* The extremes of one run, while they are summed up. */
struct span {
	uint64_t min_total, max_total, max_reserved;
	int any;
};

static void
span_add(struct span *sp, uint64_t total, uint64_t reserved)
{
	if (!sp->any) {
		sp->min_total = sp->max_total = total;
		sp->max_reserved = reserved;
		sp->any = 1;
		return;
	}
	if (total < sp->min_total)
		sp->min_total = total;
	if (total > sp->max_total)
		sp->max_total = total;
	if (reserved > sp->max_reserved)
		sp->max_reserved = reserved;
}

/* The events of a run inside one stripe, numbered in the stripe. */
struct window {
	uint32_t lo, hi;
	struct span *sp;
};

/*
 * The windows w[0, nw) (ascending, disjoint) of event stripe b of a
 * device without WRAP, added to their spans in one pass over the stripe's
 * action, size and exception chunks, with no column decoded into the
 * cache: the timeline's columns want a few events of many stripes, and
 * the cache would decode four whole columns of each.
 *
 * The three chunks are checked whole (hash, exact LZ4 length), as when
 * they are decoded, and every event the pass reads is held to the checks
 * its column decoders make (snap_stripe_decode_trace for actions and sizes,
 * dec_sums_x for both sums): a stripe with any of those faults gives -1,
 * with some spans partly summed (the caller starts them again through
 * the cache, which reads such a stripe as zeros and marks the index
 * damaged). The pass stops after the last window, though: what only the
 * events after it can break (their values, the chunks ending with the
 * last of them, the sums meeting the next stripe's) is found when the
 * stripe is read whole. Only a crafted stripe, its hashes made to match,
 * can pass here and fail there; reading past the windows would double
 * the cost of the timeline's columns (the window is anywhere in the
 * stripe).
 */
static int
span_stripe(const struct idx_dev *v, uint64_t b, const struct window *w,
    size_t nw)
{
	const struct snap_stripeset *bs = &v->ev;
	const struct snap_stripedir *d = &bs->dir[b];
	const uint8_t *act, *sz, *szend, *p, *end;
	uint64_t st = d->base[0], sr = d->base[1], left = 0, next = UINT64_MAX;
	uint64_t xv = 0, size, dt, dr, bt = v->tl.base_total;
	uint64_t br = (uint64_t)v->rec.base_reserved;
	uint32_t alen, slen, xlen, j, stop;
	size_t k = 0;

	act = snap_stripe_chunk(bs, b, SNAP_EVC_ACTION, &alen, 0);
	if (act == NULL || alen == 0 || alen != d->n)
		return -1;
	sz = snap_stripe_chunk(bs, b, SNAP_EVC_SIZE, &slen, 2);
	if (sz == NULL || slen == 0)
		return -1;
	szend = sz + slen;
	p = snap_stripe_chunk(bs, b, SNAP_EVC_TEXC, &xlen, 1);
	if (p == NULL)
		return -1;
	end = p + xlen;
	if (xlen > 0 && (snap_get_uv(&p, end, &left) != 0 || left == 0 ||
	    left > d->n ||
	    exc_next(&p, end, &left, &next, &xv, UINT64_MAX, d->n) != 0))
		return -1;
	if (out_of_rule(st) || out_of_rule(sr))
		return -1;
	stop = nw > 0 && w[nw - 1].hi < d->n ? w[nw - 1].hi : d->n;
	for (j = 0; j < stop; j++) {
		uint8_t a = act[j];
		int big;

		if (a >= bs->lim.n_actions || uv_fast(&sz, szend, &size))
			return -1;
		/* a change of 2^63 or more in magnitude leaves the rule */
		big = (int64_t)size < 0;
		dr = reserved_delta(a, size);
		if (big && dr != 0)
			return -1;
		if (j == next) {
			__int128 e = exact_delta(a, snap_unzz(xv));

			dt = snap_unzz(xv);
			big = e >= 2 * IDX_SUM_LIMIT || e <= -2 * IDX_SUM_LIMIT;
			if (exc_next(&p, end, &left, &next, &xv, j, d->n) != 0)
				return -1;
		} else {
			dt = total_delta(a, size);
		}
		if (big && dt != 0)
			return -1;
		st += dt;
		sr += dr;
		if (out_of_rule(st) || out_of_rule(sr))
			return -1;
		while (k < nw && j >= w[k].hi)
			k++;
		if (k < nw && j >= w[k].lo)
			span_add(w[k].sp, clamp_sum(bt, st), clamp_sum(br, sr));
	}
	if (stop < d->n)
		return 0;
	if (sz != szend || p != end || next != UINT64_MAX)
		return -1;
	/* the sums must meet the next stripe's */
	if (b + 1 < bs->n_stripe && (bs->dir[b + 1].base[0] != st ||
	    bs->dir[b + 1].base[1] != sr))
		return -1;
	return 0;
}

/* Events [lo, hi) through the accessors (and the cache). */
static void
span_cached(const struct idx_timeline *tl, uint64_t lo, uint64_t hi,
    struct span *sp)
{
	uint64_t i;

	for (i = lo; i < hi; i++)
		span_add(sp, idx_tl_total(tl, (int64_t)i),
		    idx_tl_reserved(tl, (int64_t)i));
}

/* Both columns of the events [lo, hi) are in this thread's hot slots:
 * cheaper to read there. */
static int
span_hot(const struct snap_stripeset *bs, uint64_t lo, uint64_t hi)
{
	const struct snap_hot *t = &snap_hot[SNAP_COL_TOTAL];
	const struct snap_hot *r = &snap_hot[SNAP_COL_RESERVED];

	return t->id == bs->id && r->id == bs->id && lo - t->lo < t->n &&
	    hi - 1 - t->lo < t->n && lo - r->lo < r->n &&
	    hi - 1 - r->lo < r->n;
}

/* Runs k.. that lie in stripe b (from its first event on), as windows of
 * the stripe into w (at most n); *m gets the first run after them. 1 when
 * they are all in the hot slots. */
static int
stripe_windows(const struct snap_stripeset *bs, uint64_t b,
    struct idx_tl_run *runs, struct span *sp, size_t k, size_t n,
    struct window *w, size_t *m)
{
	uint64_t blo = bs->dir[b].first, bhi = blo + bs->dir[b].n;
	uint64_t lo, hi;
	int hot = 1;

	for (*m = k; *m < n && runs[*m].from < bhi; (*m)++) {
		lo = runs[*m].from > blo ? runs[*m].from : blo;
		hi = runs[*m].to < bhi ? runs[*m].to : bhi;
		if (hi < lo)
			hi = lo; /* runs out of order: not read */
		w[*m - k].lo = (uint32_t)(lo - blo);
		w[*m - k].hi = (uint32_t)(hi - blo);
		w[*m - k].sp = &sp[*m];
		if (!span_hot(bs, lo, hi))
			hot = 0;
	}
	return hot;
}

void
idx_tl_extremes(const struct idx_timeline *tl, struct idx_tl_run *runs,
    size_t n)
{
	const struct snap_stripeset *bs = tl->ev_stripes;
	const struct idx_dev *v = bs != NULL ? bs->owner : NULL;
	struct span sp_small[8], *sp = sp_small, save;
	struct window w_small[8], *w = w_small;
	uint64_t pos = 0, blo, bhi, b;
	size_t k, m, j;

	if (n > 8) {
		sp = xcalloc(n, sizeof *sp);
		w = xcalloc(n, sizeof *w);
	} else {
		memset(sp, 0, sizeof sp_small);
	}
	for (k = 0; k < n; k++)
		if (runs[k].to > tl->n_events)
			runs[k].to = tl->n_events;
	k = 0;
	/* a stripe at a time: a stop asked (util/stop.h) leaves the rest
	 * zeros, for a caller that throws them away */
	while (k < n && !sv_stop_requested()) {
		if (runs[k].from >= runs[k].to) {
			k++;
			continue;
		}
		if (bs == NULL || v->xb != NULL) {
			/* heap arrays, or the exact sums of a WRAP device */
			span_cached(tl, runs[k].from, runs[k].to, &sp[k]);
			k++;
			continue;
		}
		if (pos < runs[k].from)
			pos = runs[k].from;
		b = snap_stripe_find(bs, pos);
		blo = bs->dir[b].first;
		bhi = blo + bs->dir[b].n;
		if (pos < blo || pos >= bhi) {
			/* a directory that does not cover pos (checked at
			 * open: cannot happen) */
			span_cached(tl, pos, runs[k].to, &sp[k]);
			k++;
			continue;
		}
		/* only run k can have begun in an earlier stripe */
		save = sp[k];
		if (stripe_windows(bs, b, runs, sp, k, n, w, &m) ||
		    span_stripe(v, b, w, m - k) != 0) {
			/* the stripe's part of each run, again, through the
			 * cache */
			sp[k] = save;
			for (j = k; j < m; j++) {
				if (j > k)
					memset(&sp[j], 0, sizeof sp[j]);
				span_cached(tl, w[j - k].lo + blo,
				    w[j - k].hi + blo, &sp[j]);
			}
		}
		pos = bhi;
		while (k < n && runs[k].to <= bhi)
			k++;
	}
	for (k = 0; k < n; k++) {
		runs[k].min_total = sp[k].min_total;
		runs[k].max_total = sp[k].max_total;
		runs[k].max_reserved = sp[k].max_reserved;
	}
	if (sp != sp_small) {
		free(sp);
		free(w);
	}
}

