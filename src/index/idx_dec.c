/*
 * Devices of an index bound to their stripe-coded columns, and the
 * decoders of the timeline's columns (doc/FORMAT.md, "Decoding"): the
 * element of each event, the running totals and reserved bytes (derived
 * from the actions and sizes), and the elements themselves.
 *
 * Binding checks every device record and directory entry against the
 * column data and the counts (so a decoder can trust where a chunk is and
 * how long it says it is); the decoders check every value they produce
 * (ids, event numbers, the sums at stripe boundaries). A check that fails
 * at open rejects the index; one that fails in a decoder reads as zeros
 * and marks the index damaged (idx_damaged()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/idx_dec_int.h"
#include "index/idx_int.h"
#include "util/xalloc.h"

/* ---- decoders --------------------------------------------------------- */

/* The rule of a WRAP device (and of idx_timeline.c for any): a byte
 * count clamped to [0, 2^64 - 1], a sum of changes to int64_t. */
static uint64_t
clamp_bytes(__int128 v)
{
	return v < 0 ? 0 : v > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static __int128
sat_int64(__int128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : v;
}

/* Totals (which 0) or reserved bytes (which 1) of event stripe b; with
 * xend, the exact sum of the changes after the stripe too (v->xb[b] must
 * be known, the rest of v->xb need not be). */
static int
dec_sums_x(const struct idx_dev *v, uint64_t b, uint64_t *out, int which,
    __int128 *xend)
{
	const struct snap_stripedir *d = &v->ev.dir[b];
	const uint8_t *act = snap_stripe_pin(&v->ev, SNAP_COL_ACTION, b, 1);
	const uint64_t *size = snap_stripe_pin(&v->ev, SNAP_COL_SIZE, b, 8);
	const uint8_t *p = (const uint8_t *)"", *end = p;
	uint64_t sum = d->base[which], base, left = 0, next = UINT64_MAX;
	uint64_t xv = 0, delta;
	uint32_t j, rlen;
	int r = -1, big;
	__int128 x = v->xb != NULL ? v->xb[2 * b + (uint64_t)which] : 0;

	if (which == 0) {
		base = v->tl.base_total;
		p = snap_stripe_chunk(&v->ev, b, SNAP_EVC_TEXC, &rlen, 1);
		if (p == NULL)
			goto out;
		end = p + rlen;
		if (rlen > 0 && (snap_get_uv(&p, end, &left) != 0 ||
		    left == 0 || left > d->n ||
		    exc_next(&p, end, &left, &next, &xv, UINT64_MAX, d->n)))
			goto out;
	} else {
		base = (uint64_t)v->rec.base_reserved;
	}
	/* not WRAP (idx_int.h): the sums stay inside (-2^62, 2^62), the
	 * base before the stripe too */
	if (v->xb == NULL && out_of_rule(sum))
		goto out;
	for (j = 0; j < d->n; j++) {
		if (which == 1) {
			delta = reserved_delta(act[j], size[j]);
			big = (int64_t)size[j] < 0;
		} else if (j == next) {
			__int128 e = exact_delta(act[j], snap_unzz(xv));

			delta = snap_unzz(xv);
			big = e >= 2 * IDX_SUM_LIMIT || e <= -2 * IDX_SUM_LIMIT;
			if (exc_next(&p, end, &left, &next, &xv, j, d->n) != 0)
				goto out;
		} else {
			delta = total_delta(act[j], size[j]);
			big = (int64_t)size[j] < 0;
		}
		sum += delta;
		if (v->xb == NULL) {
			/* a change below 2^63 in magnitude from a sum inside
			 * the rule: the exact sum leaves it exactly when the
			 * int64 reading does; a bigger change always does */
			if ((big && delta != 0) || out_of_rule(sum))
				goto out;
			out[j] = clamp_sum(base, sum);
			continue;
		}
		x += exact_delta(act[j], delta);
		out[j] = which == 1 ? clamp_bytes(v->xbase_r + x)
		    : clamp_bytes((__int128)base + sat_int64(x));
	}
	if (xend != NULL)
		*xend = x;
	if (p != end || next != UINT64_MAX)
		goto out;
	/* the sums must meet the next stripe's */
	if (b + 1 < v->ev.n_stripe && v->ev.dir[b + 1].base[which] != sum)
		goto out;
	r = 0;
out:
	snap_stripe_unpin(size);
	snap_stripe_unpin(act);
	return r;
}

static int
dec_sums(const struct idx_dev *v, uint64_t b, uint64_t *out, int which)
{
	return dec_sums_x(v, b, out, which, NULL);
}

/* The exact sums before each stripe of a WRAP device, and the reserved
 * bytes before its first event: the final segments less every change of
 * the trace, in 128 bits (idx_timeline.c reserved_pass). A stripe that
 * does not decode adds nothing (it reads as zeros). */
static void
wrap_sums(struct idx_dev *v, const struct snapshot *s)
{
	uint64_t b, *tmp = xmalloc(SNAP_STRIPE_MAX * sizeof *tmp);
	__int128 t = 0, r = 0, end, fin = 0;
	uint32_t g, gend;

	v->xb = xcalloc(2 * (v->ev.n_stripe + 1), sizeof *v->xb);
	for (b = 0; b < v->ev.n_stripe; b++) {
		v->xb[2 * b] = t;
		v->xb[2 * b + 1] = r;
		if (dec_sums_x(v, b, tmp, 0, &end) == 0)
			t = end;
		else if (v->ev.damaged != NULL)
			__atomic_store_n(v->ev.damaged, 1, __ATOMIC_RELAXED);
		if (dec_sums_x(v, b, tmp, 1, &end) == 0)
			r = end;
	}
	free(tmp);
	snap_device_segments(s, v->rec.device, &g, &gend);
	for (; g < gend; g++)
		if (s->segments[g].device == v->rec.device)
			fin += s->segments[g].total_size;
	v->xbase_r = fin - r;
}

static int
dec_ev_elem(const struct idx_dev *v, uint64_t b, uint64_t *out)
{
	const struct snap_stripedir *d = &v->ev.dir[b];
	const uint8_t *act = snap_stripe_pin(&v->ev, SNAP_COL_ACTION, b, 1);
	const uint8_t *p, *end;
	uint64_t cnt = d->base[2], lv, want;
	uint32_t j, rlen;
	int r = -1;

	p = snap_stripe_chunk(&v->ev, b, SNAP_EVC_LINK, &rlen, 1);
	if (p == NULL)
		goto out;
	end = p + rlen;
	for (j = 0; j < d->n; j++) {
		switch (act[j]) {
		case SNAP_ALLOC:
			out[j] = cnt++;
			break;
		case SNAP_FREE_COMPLETED:
			if (snap_get_uv(&p, end, &lv) != 0 || lv > cnt)
				goto out;
			out[j] = lv == 0 ? cnt++ : cnt - lv;
			break;
		default:
			out[j] = UINT64_MAX;
			break;
		}
		if (cnt > v->n_trace_elems)
			goto out;
	}
	want = b + 1 < v->ev.n_stripe ? v->ev.dir[b + 1].base[2]
	    : v->n_trace_elems;
	if (p == end && cnt == want)
		r = 0;
out:
	snap_stripe_unpin(act);
	return r;
}

static int
ev_decode(const struct snap_stripeset *bs, unsigned col, uint64_t b, void *out)
{
	const struct idx_dev *v = bs->owner;

	switch (col) {
	case SNAP_COL_EV_ELEM: return dec_ev_elem(v, b, out);
	case SNAP_COL_TOTAL: return dec_sums(v, b, out, 0);
	case SNAP_COL_RESERVED: return dec_sums(v, b, out, 1);
	default: return snap_stripe_decode_trace(bs, col, b, out);
	}
}

/* Free event of element k from the late frees, or -1. */
static int64_t
late_free(const struct idx_dev *v, uint64_t k)
{
	uint64_t lo = 0, hi = v->n_late, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v->late[2 * mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < v->n_late && v->late[2 * lo] == k)
		return (int64_t)v->late[2 * lo + 1];
	return IDX_NO_EVENT;
}

/* Decodes chunk c of element stripe b as n values into tmp (varints,
 * zig-zag deltas or a dictionary, by chunk). */
static int
el_chunk(const struct idx_dev *v, uint64_t b, unsigned c, uint64_t *tmp)
{
	uint32_t n = v->el.dir[b].n, rlen;
	const uint8_t *p = snap_stripe_chunk(&v->el, b, c, &rlen, 1);

	if (p == NULL || rlen == 0)
		return -1;
	switch (c) {
	case SNAP_ELC_EV:
	case SNAP_ELC_ADDR: return snap_dec_zd(p, rlen, n, tmp);
	case SNAP_ELC_STREAM: return snap_dec_dict(p, rlen, n, tmp);
	default: return snap_dec_uv(p, rlen, n, tmp);
	}
}

/* Whether fl is the flags element k may have (doc/FORMAT.md): a ghost's
 * past the trace's elements, else none or a pre-trace free's. */
static inline int
el_flags_ok(const struct idx_dev *v, uint64_t k, uint8_t fl)
{
	return k >= v->n_trace_elems ? fl == IDX_ELEM_GHOST
	    : fl == 0 || fl == IDX_ELEM_PRE;
}

/* Element k's alloc_ev and free_ev from its flags fl (el_flags_ok()),
 * its stored event ev and free fv: -1 for values no writer makes. The
 * one reading of them, for el_decode() and el_life(). */
static inline int
el_events(const struct idx_dev *v, uint64_t k, uint8_t fl, uint64_t ev,
    uint64_t fv, int64_t *alloc_ev, int64_t *free_ev)
{
	uint64_t n_ev = v->rec.n_events;

	if (fl == IDX_ELEM_GHOST) {
		if (fv != 0)
			return -1;
		*alloc_ev = *free_ev = IDX_NO_EVENT;
		return 0;
	}
	if (ev >= n_ev)
		return -1;
	if (fl == IDX_ELEM_PRE) {
		if (fv != 1)
			return -1;
		*alloc_ev = IDX_NO_EVENT;
		*free_ev = (int64_t)ev;
		return 0;
	}
	if (fv == 0)
		*free_ev = late_free(v, k);
	else if (fv - 1 < n_ev - ev)
		*free_ev = (int64_t)(ev + fv - 1);
	else
		return -1;
	*alloc_ev = (int64_t)ev;
	return 0;
}

/* el_decode() writes each of these fields: one more must be written
 * there too */
_Static_assert(sizeof(struct idx_elem) == 5 * 8 + 2 * 4,
    "a field of struct idx_elem that el_decode() does not write");

static int
el_decode(const struct snap_stripeset *bs, unsigned col, uint64_t b, void *out)
{
	const struct idx_dev *v = bs->owner;
	const struct snap_stripedir *d = &bs->dir[b];
	struct idx_elem *o = out;
	uint64_t *tmp = NULL;
	uint32_t n = d->n, j, rlen;
	const uint8_t *p;
	int r = -1;

	if (col != SNAP_COL_ELEM)
		return -1;
	/* every field of every element is written below (a failure
	 * zeroes them all): no memset of the stripe first, which was a
	 * twelfth of a pass over the elements */
	p = snap_stripe_chunk(bs, b, SNAP_ELC_FLAGS, &rlen, 1);
	if (p == NULL || rlen != n)
		goto out;
	for (j = 0; j < n; j++) {
		o[j].flags = p[j];
		if (!el_flags_ok(v, d->first + j, p[j]))
			goto out;
	}
	tmp = xmalloc((size_t)n * sizeof *tmp);
	if (el_chunk(v, b, SNAP_ELC_EV, tmp) != 0)
		goto out;
	for (j = 0; j < n; j++)
		o[j].alloc_ev = (int64_t)tmp[j];
	if (el_chunk(v, b, SNAP_ELC_FREE, tmp) != 0)
		goto out;
	for (j = 0; j < n; j++)
		if (el_events(v, d->first + j, o[j].flags,
		    (uint64_t)o[j].alloc_ev, tmp[j], &o[j].alloc_ev,
		    &o[j].free_ev) != 0)
			goto out;
	if (el_chunk(v, b, SNAP_ELC_ADDR, tmp) != 0)
		goto out;
	for (j = 0; j < n; j++)
		o[j].addr = tmp[j];
	if (el_chunk(v, b, SNAP_ELC_SIZE, tmp) != 0)
		goto out;
	for (j = 0; j < n; j++)
		o[j].size = tmp[j];
	if (el_chunk(v, b, SNAP_ELC_STREAM, tmp) != 0)
		goto out;
	for (j = 0; j < n; j++)
		o[j].stream = tmp[j];
	if (el_chunk(v, b, SNAP_ELC_STACK, tmp) != 0)
		goto out;
	for (j = 0; j < n; j++) {
		if (tmp[j] >= bs->lim.n_stacks)
			goto out;
		o[j].stack = (uint32_t)tmp[j];
	}
	r = 0;
out:
	free(tmp);
	if (r != 0)
		memset(o, 0, (size_t)n * sizeof *o);
	return r;
}

/* Value j of chunk c of element stripe b (varints, zig-zag deltas for
 * zd): only the values up to it are read. The whole chunk is still
 * hashed, as el_decode() has it. */
static int
el_value(const struct idx_dev *v, uint64_t b, unsigned c, int zd, uint32_t j,
    uint64_t *out)
{
	uint32_t rlen, i;
	const uint8_t *p = snap_stripe_chunk(&v->el, b, c, &rlen, 1);
	const uint8_t *end;
	uint64_t prev = 0, x;

	if (p == NULL || rlen == 0)
		return -1;
	end = p + rlen;
	for (i = 0; i <= j; i++) {
		if (snap_get_uv(&p, end, &x) != 0)
			return -1;
		prev = zd ? prev + snap_unzz(x) : x;
	}
	*out = prev;
	return 0;
}

/* Element k's alloc_ev and free_ev as el_decode() gives them, from the
 * flags, event and free chunks up to k, with el_decode()'s checks of
 * element k: -1 when one fails (the caller then decodes the stripe,
 * which marks it damaged). The values after k are not read, so a stripe
 * damaged only there still gives k here, where el_decode() gives
 * zeros. */
static int
el_life(const struct idx_dev *v, uint64_t k, int64_t *alloc_ev,
    int64_t *free_ev)
{
	const struct snap_stripeset *bs = &v->el;
	uint64_t b = snap_stripe_find(bs, k), ev, fv;
	const struct snap_stripedir *d = &bs->dir[b];
	uint32_t j, rlen;
	const uint8_t *p;
	uint8_t fl;

	if (k - d->first >= d->n)
		return -1;
	j = (uint32_t)(k - d->first);
	p = snap_stripe_chunk(bs, b, SNAP_ELC_FLAGS, &rlen, 1);
	if (p == NULL || rlen != d->n)
		return -1;
	fl = p[j];
	if (!el_flags_ok(v, k, fl) ||
	    el_value(v, b, SNAP_ELC_EV, 1, j, &ev) != 0 ||
	    el_value(v, b, SNAP_ELC_FREE, 0, j, &fv) != 0)
		return -1;
	return el_events(v, k, fl, ev, fv, alloc_ev, free_ev);
}

int
idx_tl_elem_life_read(const struct idx_timeline *tl, uint64_t k,
    int64_t *alloc_ev, int64_t *free_ev)
{
	const struct snap_stripeset *bs = tl->el_stripes;

	if (bs == NULL || bs->decode != el_decode || k >= bs->n)
		return -1;
	return el_life(bs->owner, k, alloc_ev, free_ev);
}

/* Scratch of idx_tl_alive_each(), for one stripe: the values of a chunk
 * (the events, then the sizes), the frees (then the stacks), and of the
 * elements alive their offsets in the stripe, events and flags; place:
 * the addresses and streams, with want_place. */
struct alive_scratch {
	uint64_t tmp[SNAP_STRIPE_MAX], fv[SNAP_STRIPE_MAX];
	int64_t a[SNAP_STRIPE_MAX], f[SNAP_STRIPE_MAX];
	uint32_t sel[SNAP_STRIPE_MAX];
	uint8_t fl[SNAP_STRIPE_MAX];
	uint64_t *addr, *stream;
};

/* fn for the elements of stripe b in [k0, k1) alive after event at, read
 * with el_decode()'s checks of each chunk read, *stop set to fn's
 * nonzero: 0, or -1 when a chunk does not read (fn not called then).
 * Nothing past the flags, event and free chunks is read for a stripe
 * with none alive. */
static int
alive_in_stripe(const struct idx_dev *v, uint64_t b, int64_t at,
    uint64_t k0, uint64_t k1, struct alive_scratch *x, idx_elem_fn fn,
    void *arg, int *stop)
{
	const struct snap_stripedir *d = &v->el.dir[b];
	const uint8_t *fl;
	struct idx_elem e;
	uint32_t j, m = 0, rlen;
	uint64_t k;

	/* the flags last: they are read into the scratch slot el_chunk()
	 * reads the others into */
	if (el_chunk(v, b, SNAP_ELC_EV, x->tmp) != 0 ||
	    el_chunk(v, b, SNAP_ELC_FREE, x->fv) != 0)
		return -1;
	fl = snap_stripe_chunk(&v->el, b, SNAP_ELC_FLAGS, &rlen, 1);
	if (fl == NULL || rlen != d->n)
		return -1;
	for (j = 0; j < d->n; j++) {
		if (!el_flags_ok(v, d->first + j, fl[j]) ||
		    el_events(v, d->first + j, fl[j], x->tmp[j], x->fv[j],
		    &x->a[m], &x->f[m]) != 0)
			return -1;
		k = d->first + j;
		if (k < k0 || k >= k1 ||
		    !idx_alive_after(x->a[m], x->f[m], at))
			continue;
		x->fl[m] = fl[j];
		x->sel[m++] = j;
	}
	if (m == 0)
		return 0;
	if (el_chunk(v, b, SNAP_ELC_SIZE, x->tmp) != 0 ||
	    el_chunk(v, b, SNAP_ELC_STACK, x->fv) != 0)
		return -1;
	for (j = 0; j < d->n; j++)
		if (x->fv[j] >= v->el.lim.n_stacks)
			return -1;
	if (x->addr != NULL &&
	    (el_chunk(v, b, SNAP_ELC_ADDR, x->addr) != 0 ||
	    el_chunk(v, b, SNAP_ELC_STREAM, x->stream) != 0))
		return -1;
	for (j = 0; j < m && *stop == 0; j++) {
		uint32_t i = x->sel[j];

		e.size = x->tmp[i];
		e.stack = (uint32_t)x->fv[i];
		e.alloc_ev = x->a[j];
		e.free_ev = x->f[j];
		e.flags = x->fl[j];
		e.addr = x->addr != NULL ? x->addr[i] : 0;
		e.stream = x->addr != NULL ? x->stream[i] : 0;
		*stop = fn(arg, d->first + i, &e);
	}
	return 0;
}

/* The first element stripe holding element k (or past them all). */
static uint64_t
stripe_of(const struct snap_stripeset *bs, uint64_t k)
{
	uint64_t lo = 0, hi = bs->n_stripe, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (bs->dir[mid].first + bs->dir[mid].n <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* idx_tl_alive_each() element by element, each as idx_tl_elem() has it */
static int
alive_each_whole(const struct idx_timeline *tl, int64_t at, uint64_t k0,
    uint64_t k1, int want_place, idx_elem_fn fn, void *arg)
{
	struct idx_elem e;
	uint64_t k;
	int r = 0;

	for (k = k0; k < k1 && r == 0; k++) {
		e = idx_tl_elem(tl, k);
		if (!idx_alive_after(e.alloc_ev, e.free_ev, at))
			continue;
		if (!want_place)
			e.addr = e.stream = 0;
		r = fn(arg, k, &e);
	}
	return r;
}

int
idx_tl_alive_each(const struct idx_timeline *tl, int64_t at, uint64_t k0,
    uint64_t k1, int want_place, idx_elem_fn fn, void *arg)
{
	const struct snap_stripeset *bs = tl->el_stripes;
	struct alive_scratch *x;
	uint64_t b;
	int r = 0;

	if (k1 > tl->n_elems)
		k1 = tl->n_elems;
	if (bs == NULL || bs->decode != el_decode)
		return alive_each_whole(tl, at, k0, k1, want_place, fn, arg);
	x = xmalloc(sizeof *x);
	x->addr = x->stream = NULL;
	if (want_place) {
		x->addr = xmalloc(SNAP_STRIPE_MAX * sizeof *x->addr);
		x->stream = xmalloc(SNAP_STRIPE_MAX * sizeof *x->stream);
	}
	for (b = stripe_of(bs, k0); b < bs->n_stripe && r == 0 &&
	    bs->dir[b].first < k1; b++) {
		const struct snap_stripedir *d = &bs->dir[b];

		/* a stripe that does not read: as idx_tl_elem() has it */
		if (d->n > SNAP_STRIPE_MAX || alive_in_stripe(bs->owner, b,
		    at, k0, k1, x, fn, arg, &r) != 0)
			r = alive_each_whole(tl, at, d->first > k0 ? d->first
			    : k0, d->first + d->n < k1 ? d->first + d->n : k1,
			    want_place, fn, arg);
	}
	free(x->addr);
	free(x->stream);
	free(x);
	return r;
}

/* The element el_life() last read on this thread, and its stripe. A
 * screen asks for the cursor's element twice (its line on the timeline,
 * the detail pane): the second asks the first. A cursor that jumps far
 * lands in a new stripe at every key, where reading three chunks up to
 * the element costs a fraction of decoding the stripe; a cursor that
 * moves a little comes back to the same stripe, which is then decoded
 * into the cache, where the next keys find it. */
static __thread struct {
	uint64_t id, k, stripe;
	int64_t alloc_ev, free_ev;
} last_life;

void
idx_tl_elem_life(const struct idx_timeline *tl, uint64_t k,
    int64_t *alloc_ev, int64_t *free_ev)
{
	const struct snap_stripeset *bs = tl->el_stripes;
	const struct idx_elem *c;
	struct idx_elem e;
	uint64_t b;

	if (bs != NULL && bs->decode == el_decode && k < bs->n) {
		c = snap_stripe_peek(bs, SNAP_COL_ELEM, k, sizeof *c);
		if (c != NULL) {
			*alloc_ev = c->alloc_ev;
			*free_ev = c->free_ev;
			return;
		}
		if (last_life.id == bs->id && last_life.k == k) {
			*alloc_ev = last_life.alloc_ev;
			*free_ev = last_life.free_ev;
			return;
		}
		b = snap_stripe_find(bs, k);
		if ((last_life.id != bs->id || last_life.stripe != b) &&
		    idx_tl_elem_life_read(tl, k, alloc_ev, free_ev) == 0) {
			last_life.id = bs->id;
			last_life.k = k;
			last_life.stripe = b;
			last_life.alloc_ev = *alloc_ev;
			last_life.free_ev = *free_ev;
			return;
		}
	}
	e = idx_tl_elem(tl, k);
	*alloc_ev = e.alloc_ev;
	*free_ev = e.free_ev;
}

/* ---- binding ---------------------------------------------------------- */

/* &base[k] of an array of rec-byte records, NULL for an empty (NULL)
 * section: NULL + 0 is undefined. */
static const void *
rec_at(const void *base, uint64_t k, size_t rec)
{
	return base != NULL ? (const uint8_t *)base + k * rec : NULL;
}

/* The most raw bytes a stored chunk of clen bytes may claim: LZ4 makes
 * at most about 255 bytes of one (a match grows by 255 per byte), so no
 * encoder's chunk comes near this. With the first chunk of every stripe
 * one byte per value (actions, element flags), a stripe holds at most
 * CHUNK_RATIO values per stored byte of it: what a directory can make a
 * reader decode is bounded by the bytes stored. */
#define CHUNK_RATIO 256u
#define CHUNK_SLACK 64u

/* The directory entries dir[0, n) tile [0, total) in order, each one's
 * chunks within what their stored bytes can hold. */
static int
check_dir(const struct snap_stripedir *dir, uint64_t n, uint64_t total,
    unsigned nchunk, uint64_t data_len)
{
	uint64_t b, next = 0;
	unsigned c;

	for (b = 0; b < n; b++) {
		const struct snap_stripedir *d = &dir[b];

		if (snap_stripedir_check(d, nchunk, data_len) != 0 ||
		    d->first != next || d->rlen[0] != d->n)
			return -1;
		for (c = 0; c < nchunk; c++)
			if ((uint64_t)d->rlen[c] >
			    (uint64_t)d->clen[c] * CHUNK_RATIO + CHUNK_SLACK)
				return -1;
		next += d->n;
	}
	return next == total ? 0 : -1;
}

struct span {
	uint64_t off, len;
};

static int
cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The payloads of every stripe the records name tile the column data in
 * order, so that no two stripes (of one device or of two) share stored
 * bytes and every stored byte is read for at most one stripe: the cost
 * of reading every stripe is then bounded by the size of the file. */
static int
check_tiling(const struct idx_devsrc *src)
{
	struct span *sp;
	uint64_t k, b, n = 0, at = 0;
	int r = 0;

	for (k = 0; k < src->n_recs; k++)
		n += src->recs[k].n_ev_stripe + src->recs[k].n_el_stripe;
	if (n == 0)
		return src->data_len == 0 ? 0 : -1;
	sp = xcalloc(n, sizeof *sp);
	n = 0;
	for (k = 0; k < src->n_recs; k++) {
		const struct idx_devrec *rec = &src->recs[k];

		for (b = 0; b < rec->n_ev_stripe; b++, n++) {
			sp[n].off = src->evdir[rec->ev_stripe + b].off;
			sp[n].len = src->evdir[rec->ev_stripe + b].len;
		}
		for (b = 0; b < rec->n_el_stripe; b++, n++) {
			sp[n].off = src->eldir[rec->el_stripe + b].off;
			sp[n].len = src->eldir[rec->el_stripe + b].len;
		}
	}
	qsort(sp, n, sizeof *sp, cmp_span);
	for (k = 0; k < n && r == 0; k++) {
		if (sp[k].off != at || sp[k].len == 0)
			r = -1;
		at += sp[k].len;
	}
	free(sp);
	return r == 0 && at == src->data_len ? 0 : -1;
}

/* rec's ranges inside the sections of src, and its counts coherent. */
static int
check_rec(const struct idx_devrec *rec, const struct idx_devsrc *src,
    const struct snapshot *s)
{
	uint32_t n_traces = s->n_traces;
	uint64_t k, prev;
	const uint64_t *late;

	/* every element is an allocation of the trace or an (allocator)
	 * block of the file */
	if (rec->n_elems > rec->n_events + s->n_blocks)
		return -1;
	if (rec->device >= IDX_MAX_DEVICES ||
	    (rec->flags & ~(uint32_t)IDX_DEV_FLAGS) != 0 ||
	    (rec->n_events > 0 && rec->device >= n_traces) ||
	    rec->n_ghost > rec->n_elems ||
	    rec->n_pre > rec->n_elems - rec->n_ghost ||
	    rec->ev_stripe > src->n_evdir || rec->n_ev_stripe >
	    src->n_evdir - rec->ev_stripe ||
	    rec->el_stripe > src->n_eldir || rec->n_el_stripe >
	    src->n_eldir - rec->el_stripe ||
	    rec->late > src->n_late || rec->n_late > src->n_late - rec->late ||
	    rec->lod > src->n_lod || rec->n_lod > src->n_lod - rec->lod)
		return -1;
	if (check_dir(rec_at(src->evdir, rec->ev_stripe, sizeof *src->evdir),
		rec->n_ev_stripe, rec->n_events, SNAP_EVC_N,
		src->data_len) != 0 ||
	    check_dir(rec_at(src->eldir, rec->el_stripe, sizeof *src->eldir),
		rec->n_el_stripe, rec->n_elems, SNAP_ELC_N, src->data_len) != 0)
		return -1;
	late = rec_at(src->late, rec->late, 16);
	for (k = 0, prev = 0; k < rec->n_late; k++) {
		if ((k > 0 && late[2 * k] <= prev) ||
		    late[2 * k] >= rec->n_elems - rec->n_ghost ||
		    late[2 * k + 1] >= rec->n_events)
			return -1;
		prev = late[2 * k];
	}
	if (rec->flags & IDX_DEV_WRAP)
		return rec->n_lod == 0 ? 0 : -1;
	/* not WRAP: both bases inside the int64 rule (idx_int.h) */
	if ((__int128)rec->base_total >= IDX_SUM_LIMIT ||
	    rec->base_reserved >= IDX_SUM_LIMIT ||
	    rec->base_reserved <= -IDX_SUM_LIMIT)
		return -1;
	if (rec->n_lod != idx_lod_count(rec->n_events, NULL))
		return -1;
	return rec->peak_ev >= IDX_NO_EVENT &&
	    rec->peak_ev < (int64_t)rec->n_events ? 0 : -1;
}

static void
bind_one(struct sv_index *ix, struct idx_dev *v, const struct idx_devsrc *src)
{
	const struct idx_devrec *rec = &v->rec;
	struct snapshot *s = ix->snap;
	struct snap_stripelim lim;
	struct idx_timeline *tl = &v->tl;

	memset(&lim, 0, sizeof lim);
	lim.n_actions = SNAP_ACTION_COUNT + s->n_unknown_actions;
	lim.n_stacks = s->n_stacks;
	lim.n_strs = s->strs.n;
	lim.n_events = rec->n_events;
	v->n_trace_elems = rec->n_elems - rec->n_ghost;
	v->late = rec_at(src->late, rec->late, 16);
	v->n_late = rec->n_late;
	v->ev.id = snap_stripe_new_id();
	v->ev.dir = rec_at(src->evdir, rec->ev_stripe, sizeof *src->evdir);
	v->ev.n_stripe = rec->n_ev_stripe;
	v->ev.n = rec->n_events;
	v->ev.data = src->data;
	v->ev.data_len = src->data_len;
	v->ev.lim = lim;
	v->ev.decode = ev_decode;
	v->ev.owner = v;
	v->ev.damaged = &ix->mut->damaged;
	v->ev.drop = src->drop;
	v->el = v->ev;
	v->el.id = snap_stripe_new_id();
	v->el.dir = rec_at(src->eldir, rec->el_stripe, sizeof *src->eldir);
	v->el.n_stripe = rec->n_el_stripe;
	v->el.n = rec->n_elems;
	v->el.decode = el_decode;
	if (rec->n_events > 0) {
		struct snap_trace *t = &s->traces[rec->device];

		t->n = rec->n_events;
		t->cols = rec->flags & (SNAP_TRACE_TIME | SNAP_TRACE_CTX |
		    SNAP_TRACE_META | SNAP_TRACE_POOL);
		t->stripes = &v->ev;
	}
	memset(tl, 0, sizeof *tl);
	tl->device = rec->device;
	tl->n_events = rec->n_events;
	tl->n_elems = rec->n_elems;
	tl->base_total = rec->base_total;
	tl->base_reserved = rec->base_reserved < 0 ? 0
	    : (uint64_t)rec->base_reserved;
	tl->n_pre = rec->n_pre;
	tl->n_ghost = rec->n_ghost;
	tl->ev_stripes = &v->ev;
	tl->el_stripes = &v->el;
	if (rec->flags & IDX_DEV_WRAP) {
		/* sums beyond 2^62: exact sums, then the peak and the
		 * pyramid from the totals themselves */
		wrap_sums(v, s);
		tl->base_reserved = clamp_bytes(v->xbase_r);
		idx_timeline_peak(tl);
		idx_lod_build(&v->lod, tl);
	} else {
		tl->peak = rec->peak;
		tl->peak_ev = rec->peak_ev;
		idx_lod_init_cum(&v->lod, rec->n_events, rec_at(src->lod,
		    rec->lod, sizeof *src->lod), rec->base_total,
		    rec->base_reserved);
	}
}

int
idx_bind_devices(struct sv_index *ix, const struct idx_devsrc *src,
    char *why, size_t wl)
{
	uint64_t k;

	if (src->n_recs > IDX_MAX_DEVICES)
		goto bad;
	for (k = 0; k < src->n_recs; k++)
		if ((k > 0 && src->recs[k].device <= src->recs[k - 1].device) ||
		    check_rec(&src->recs[k], src, ix->snap) != 0)
			goto bad;
	if (check_tiling(src) != 0)
		goto bad;
	ix->n_devs = (uint32_t)src->n_recs;
	ix->devs = xcalloc(ix->n_devs + 1, sizeof *ix->devs);
	for (k = 0; k < src->n_recs; k++) {
		ix->devs[k].rec = src->recs[k];
		bind_one(ix, &ix->devs[k], src);
	}
	return 0;
bad:
	snprintf(why, wl, "bad device records");
	return -1;
}

void
idx_unbind_devices(struct sv_index *ix)
{
	uint32_t d;

	for (d = 0; d < ix->n_devs; d++) {
		const struct idx_devrec *rec = &ix->devs[d].rec;

		if (ix->snap != NULL && rec->device < ix->snap->n_traces)
			ix->snap->traces[rec->device].stripes = NULL;
		idx_lod_destroy(&ix->devs[d].lod);
		free(ix->devs[d].xb);
	}
	free(ix->devs);
	ix->devs = NULL;
	ix->n_devs = 0;
	/* this thread's cache entries of these devices are of no more use */
	snap_stripe_cache_clear();
}
