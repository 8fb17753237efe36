/*
 * The streamed encoder (idx_enc.h): event intake, pairing, running sums
 * and the stripe coding of events and elements (layout in doc/FORMAT.md),
 * and the tally of each device's events the sections built after the
 * parse read instead of a pass over them (idx_ev_tally()).
 *
 * Pairing follows idx_timeline.c exactly (it is the reference the tests
 * compare with): an alloc starts an element and maps its address to it,
 * replacing an element already there (which then stays alive); a
 * free_completed ends the element at its address, or, with none, is an
 * element alive from the start (IDX_ELEM_PRE).
 *
 * Per event the index stores no total and no reserved bytes: an event
 * stripe keeps the running sums of their deltas before its first event,
 * and the deltas follow from the action and the size (+size for an alloc,
 * -size for a free_completed, +-size for segment events). The one case
 * where they do not, a free whose size differs from its alloc's, is kept
 * as an exception of its stripe. Totals are then base + sum, where the
 * bases (allocations alive before the trace, reserved bytes before it)
 * are known only at the end.
 */
#include "config.h"

#include "index/idx_enc.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/u64map.h"
#include "util/xalloc.h"

/* Elements per element stripe: the stripe size, as for events (the
 * scratch arrays below hold one stripe of either). */
#define EL_STRIPE SNAP_STRIPE_MAX
#define EL_WINDOW 4   /* element stripes kept open for their frees */

/* An element not yet written. */
struct el_stage {
	uint64_t ev;     /* creation event (alloc, or the free of a PRE) */
	uint64_t free;   /* free event + 1, 0 = none yet */
	uint64_t addr, size, stream;
	uint32_t stack;
	uint8_t flags;
};

struct el_open {
	uint64_t first;
	uint32_t n, cap;
	struct el_stage *v;
};

/* A live allocation: its element and requested size. */
struct live_ent {
	uint64_t k, size;
};

struct enc_dev {
	uint32_t device;
	uint32_t cols;           /* SNAP_TRACE_* seen */
	uint64_t n;              /* events */
	/* timeline */
	struct u64map live;      /* address -> index into pool */
	struct live_ent *pool;
	size_t n_pool, cap_pool;
	uint64_t *pool_free;
	size_t n_pool_free, cap_pool_free;
	uint64_t n_elems;        /* trace elements so far */
	uint64_t sum_t, sum_r;   /* running sums, mod 2^64 */
	__int128 xsum_t, xsum_r; /* the same, exact */
	uint64_t pre;            /* bytes of PRE elements, mod 2^64 */
	__int128 xpre;
	uint64_t n_pre;
	int wrap;
	int64_t max_t;           /* highest sum_t, and its first event */
	int64_t max_ev;
	/* pyramid, level 0, in sum space */
	struct idx_lod_cum *lod0;
	size_t n_lod0, cap_lod0;
	/* element stripes still open (their elements' frees to come) */
	struct el_open open[EL_WINDOW + 1];
	unsigned n_open;
	/* written */
	struct snap_stripedir *evdir, *eldir;
	size_t n_evdir, cap_evdir, n_eldir, cap_eldir;
	uint64_t *late;          /* (element, free event) pairs */
	size_t n_late, cap_late; /* values */
	/* this device's bases and peak, set by finish */
	struct idx_devrec rec;
	struct idx_ev_tally tally; /* of the stripes flushed */
};

struct idx_enc {
	struct writer *w;
	uint64_t data_off;
	XXH3_state_t *hash;
	struct enc_dev **dev;     /* by device id */
	size_t n_dev, cap_dev;
	/* the event stripe being filled (one device at a time) */
	struct enc_dev *cur;
	uint32_t bn;
	uint32_t bcols;
	uint64_t base[3];
	uint8_t action[SNAP_STRIPE_MAX];
	uint64_t addr[SNAP_STRIPE_MAX], size[SNAP_STRIPE_MAX];
	uint64_t stream[SNAP_STRIPE_MAX];
	uint64_t time[SNAP_STRIPE_MAX];
	uint32_t stack[SNAP_STRIPE_MAX], ctx[SNAP_STRIPE_MAX];
	uint32_t meta[SNAP_STRIPE_MAX];
	uint32_t pool[SNAP_STRIPE_MAX];
	uint64_t link[SNAP_STRIPE_MAX];
	uint32_t n_link;
	struct snap_buf texc;     /* exceptions of the stripe */
	uint32_t n_texc;
	/* scratch */
	struct snap_buf raw, payload;
	uint64_t tmp[SNAP_STRIPE_MAX];
	uint32_t tmp32[SNAP_STRIPE_MAX];
	uint8_t tmp8[SNAP_STRIPE_MAX];
	struct idx_enc_out out;
};

struct idx_enc *
idx_enc_new(struct writer *w)
{
	struct idx_enc *e = xcalloc(1, sizeof *e);

	e->w = w;
	e->data_off = w->off;
	e->hash = XXH3_createState();
	XXH3_64bits_reset(e->hash);
	return e;
}

static struct enc_dev *
dev_get(struct idx_enc *e, uint32_t d)
{
	struct enc_dev *v;

	if (d >= e->n_dev) {
		size_t i, old = e->n_dev;

		XGROW(e->dev, e->cap_dev, (size_t)d + 1);
		for (i = old; i <= d; i++)
			e->dev[i] = NULL;
		e->n_dev = (size_t)d + 1;
	}
	v = e->dev[d];
	if (v == NULL) {
		v = e->dev[d] = xcalloc(1, sizeof *v);
		v->device = d;
		v->max_ev = -1;
		u64map_init(&v->live);
	}
	return v;
}

/* Appends the payload (one stripe's chunks) to the column data. */
static uint64_t
put_payload(struct idx_enc *e)
{
	uint64_t off = e->w->off - e->data_off;

	XXH3_64bits_update(e->hash, e->payload.p, e->payload.len);
	idx_w_raw(e->w, e->payload.p, e->payload.len);
	return off;
}

/* Stores the raw chunk e->raw as chunk c of d. */
static void
put_chunk(struct idx_enc *e, struct snap_stripedir *d, unsigned c)
{
	d->rlen[c] = (uint32_t)e->raw.len;
	d->clen[c] = snap_chunk_store(&e->payload, e->raw.p,
	    (uint32_t)e->raw.len, &d->chash[c]);
	d->len += d->clen[c];
	e->raw.len = 0;
}

/* ---- event stripes ---------------------------------------------------- */

/* Adds the n events of the stripe being flushed to v's tally: the values
 * it stores, so that they are what the accessors read back (a stripe
 * without the time column reads as no time). Runs of one stream are the
 * rule: the kept ones are searched when the stream changes. */
static void
tally_stripe(const struct idx_enc *e, struct enc_dev *v, uint32_t n)
{
	struct idx_ev_tally *t = &v->tally;
	uint64_t last = 0;
	uint32_t j, k;

	for (j = 0; j < n; j++) {
		unsigned a = e->action[j];

		t->by_action[a < SNAP_ACTION_COUNT ? a : SNAP_ACTION_COUNT]++;
		if (t->streams_over || (j > 0 && e->stream[j] == last))
			continue;
		last = e->stream[j];
		for (k = 0; k < t->n_streams && t->streams[k] != last; k++)
			;
		if (k < t->n_streams)
			continue;
		if (t->n_streams == IDX_TALLY_STREAMS)
			t->streams_over = 1;
		else
			t->streams[t->n_streams++] = last;
	}
	t->events += n;
	if (e->bcols & SNAP_TRACE_TIME)
		snap_time_widen((const int64_t *)e->time, n, &t->has_time,
		    &t->time_first, &t->time_last);
}

static void
flush_events(struct idx_enc *e)
{
	struct enc_dev *v = e->cur;
	struct snap_stripedir d;
	uint32_t n = e->bn;

	if (v == NULL || n == 0)
		return;
	tally_stripe(e, v, n);
	memset(&d, 0, sizeof d);
	d.first = v->n - n;
	d.n = n;
	memcpy(d.base, e->base, sizeof d.base);
	e->payload.len = 0;
	e->raw.len = 0;
	snap_enc_u8(&e->raw, e->action, n);
	put_chunk(e, &d, SNAP_EVC_ACTION);
	snap_enc_zd(&e->raw, e->addr, n);
	put_chunk(e, &d, SNAP_EVC_ADDR);
	snap_enc_uv(&e->raw, e->size, n);
	put_chunk(e, &d, SNAP_EVC_SIZE);
	snap_enc_dict(&e->raw, e->stream, n);
	put_chunk(e, &d, SNAP_EVC_STREAM);
	snap_enc_uv32(&e->raw, e->stack, n);
	put_chunk(e, &d, SNAP_EVC_STACK);
	if (e->bcols & SNAP_TRACE_TIME) {
		snap_enc_zd(&e->raw, e->time, n);
		put_chunk(e, &d, SNAP_EVC_TIME);
	}
	if (e->bcols & SNAP_TRACE_CTX) {
		snap_enc_uv32(&e->raw, e->ctx, n);
		put_chunk(e, &d, SNAP_EVC_CTX);
	}
	if (e->bcols & SNAP_TRACE_META) {
		snap_enc_uv32(&e->raw, e->meta, n);
		put_chunk(e, &d, SNAP_EVC_META);
	}
	if (e->bcols & SNAP_TRACE_POOL) {
		snap_enc_uv32(&e->raw, e->pool, n);
		put_chunk(e, &d, SNAP_EVC_POOL);
	}
	if (e->n_link > 0) {
		snap_enc_uv(&e->raw, e->link, e->n_link);
		put_chunk(e, &d, SNAP_EVC_LINK);
	}
	if (e->n_texc > 0) {
		snap_put_uv(&e->raw, e->n_texc);
		snap_buf_reserve(&e->raw, e->texc.len);
		memcpy(e->raw.p + e->raw.len, e->texc.p, e->texc.len);
		e->raw.len += e->texc.len;
		put_chunk(e, &d, SNAP_EVC_TEXC);
	}
	d.off = put_payload(e);
	XGROW(v->evdir, v->cap_evdir, v->n_evdir + 1);
	v->evdir[v->n_evdir++] = d;
	v->cols |= e->bcols;
	e->bn = 0;
	e->bcols = 0;
	e->n_link = 0;
	e->n_texc = 0;
	e->texc.len = 0;
}

/* ---- element stripes -------------------------------------------------- */

static void
flush_elems(struct idx_enc *e, struct enc_dev *v, struct el_open *b)
{
	struct snap_stripedir d;
	uint32_t n = b->n, i;
	uint64_t prev_ev = 0;

	if (n == 0)
		return;
	memset(&d, 0, sizeof d);
	d.first = b->first;
	d.n = n;
	e->payload.len = 0;
	e->raw.len = 0;
	for (i = 0; i < n; i++)
		e->tmp8[i] = b->v[i].flags;
	snap_enc_u8(&e->raw, e->tmp8, n);
	put_chunk(e, &d, SNAP_ELC_FLAGS);
	for (i = 0; i < n; i++) {
		/* a ghost has no event: repeat the last (a zero delta) */
		if (!(b->v[i].flags & IDX_ELEM_GHOST))
			prev_ev = b->v[i].ev;
		e->tmp[i] = prev_ev;
	}
	snap_enc_zd(&e->raw, e->tmp, n);
	put_chunk(e, &d, SNAP_ELC_EV);
	for (i = 0; i < n; i++)
		e->tmp[i] = b->v[i].free == 0 ? 0 :
		    b->v[i].free - 1 - b->v[i].ev + 1;
	snap_enc_uv(&e->raw, e->tmp, n);
	put_chunk(e, &d, SNAP_ELC_FREE);
	for (i = 0; i < n; i++)
		e->tmp[i] = b->v[i].addr;
	snap_enc_zd(&e->raw, e->tmp, n);
	put_chunk(e, &d, SNAP_ELC_ADDR);
	for (i = 0; i < n; i++)
		e->tmp[i] = b->v[i].size;
	snap_enc_uv(&e->raw, e->tmp, n);
	put_chunk(e, &d, SNAP_ELC_SIZE);
	for (i = 0; i < n; i++)
		e->tmp[i] = b->v[i].stream;
	snap_enc_dict(&e->raw, e->tmp, n);
	put_chunk(e, &d, SNAP_ELC_STREAM);
	for (i = 0; i < n; i++)
		e->tmp32[i] = b->v[i].stack;
	snap_enc_uv32(&e->raw, e->tmp32, n);
	put_chunk(e, &d, SNAP_ELC_STACK);
	d.off = put_payload(e);
	XGROW(v->eldir, v->cap_eldir, v->n_eldir + 1);
	v->eldir[v->n_eldir++] = d;
	b->n = 0;
}

/* Writes the oldest open element stripe and drops it from the window. */
static void
close_oldest(struct idx_enc *e, struct enc_dev *v)
{
	struct el_open b = v->open[0];

	flush_elems(e, v, &b);
	memmove(&v->open[0], &v->open[1], (v->n_open - 1) * sizeof v->open[0]);
	v->n_open--;
	/* keep its buffer for the next stripe */
	v->open[v->n_open] = b;
}

static struct el_stage *
elem_new(struct idx_enc *e, struct enc_dev *v)
{
	struct el_open *b;

	if (v->n_open == 0 || v->open[v->n_open - 1].n == EL_STRIPE) {
		if (v->n_open == EL_WINDOW)
			close_oldest(e, v);
		b = &v->open[v->n_open++];
		b->first = v->n_elems;
		b->n = 0;
	}
	b = &v->open[v->n_open - 1];
	if (b->n == b->cap) {
		size_t cap = b->cap;

		b->v = xgrow(b->v, &cap, (size_t)b->n + 1, sizeof *b->v);
		b->cap = cap > EL_STRIPE ? EL_STRIPE : (uint32_t)cap;
	}
	v->n_elems++;
	return &b->v[b->n++];
}

/* Records that element k ended at event i. */
static void
elem_freed(struct enc_dev *v, uint64_t k, uint64_t i)
{
	unsigned j;

	for (j = 0; j < v->n_open; j++) {
		struct el_open *b = &v->open[j];

		if (k >= b->first && k - b->first < b->n) {
			b->v[k - b->first].free = i + 1;
			return;
		}
	}
	/* its stripe is written: a late free */
	XGROW(v->late, v->cap_late, v->n_late + 2);
	v->late[v->n_late++] = k;
	v->late[v->n_late++] = i;
}

/* ---- live allocations ------------------------------------------------- */

static void
live_put(struct enc_dev *v, uint64_t addr, uint64_t k, uint64_t size)
{
	uint64_t at;

	if (u64map_get(&v->live, addr, &at)) {
		/* an alloc over a live one: that one stays alive, unmapped */
		v->pool[at].k = k;
		v->pool[at].size = size;
		return;
	}
	if (v->n_pool_free > 0) {
		at = v->pool_free[--v->n_pool_free];
	} else {
		XGROW(v->pool, v->cap_pool, v->n_pool + 1);
		at = v->n_pool++;
	}
	v->pool[at].k = k;
	v->pool[at].size = size;
	u64map_put(&v->live, addr, at);
}

static int
live_take(struct enc_dev *v, uint64_t addr, struct live_ent *le)
{
	uint64_t at;

	if (!u64map_get(&v->live, addr, &at))
		return 0;
	u64map_del(&v->live, addr);
	*le = v->pool[at];
	XGROW(v->pool_free, v->cap_pool_free, v->n_pool_free + 1);
	v->pool_free[v->n_pool_free++] = at;
	return 1;
}

/* ---- intake ----------------------------------------------------------- */

static void
switch_to(struct idx_enc *e, struct enc_dev *v)
{
	/* one stripe of events is staged at a time: a device switch (only a
	 * hostile or odd file interleaves devices) ends the stripe */
	flush_events(e);
	e->cur = v;
}

static void
lod_add(struct enc_dev *v, uint64_t i)
{
	struct idx_lod_cum *b;
	int64_t t = (int64_t)v->sum_t, r = (int64_t)v->sum_r;

	if ((i & ((1u << IDX_LOD_MIN_SHIFT) - 1)) == 0) {
		XGROW(v->lod0, v->cap_lod0, v->n_lod0 + 1);
		b = &v->lod0[v->n_lod0++];
		b->min_total = b->max_total = t;
		b->max_reserved = r;
		return;
	}
	b = &v->lod0[v->n_lod0 - 1];
	if (t < b->min_total)
		b->min_total = t;
	if (t > b->max_total)
		b->max_total = t;
	if (r > b->max_reserved)
		b->max_reserved = r;
}

static void
take_one(struct idx_enc *e, const struct snap_evrec *r)
{
	struct enc_dev *v = e->cur;
	uint32_t j;
	uint64_t i, delta = 0, rdelta = 0;
	struct live_ent le;
	struct el_stage *el;

	if (v == NULL || v->device != r->device)
		switch_to(e, dev_get(e, r->device));
	v = e->cur;
	if (e->bn == 0) {
		e->base[0] = v->sum_t;
		e->base[1] = v->sum_r;
		e->base[2] = v->n_elems;
	}
	i = v->n++;
	j = e->bn++;
	e->action[j] = r->action;
	e->addr[j] = r->addr;
	e->size[j] = r->size;
	e->stream[j] = r->stream;
	e->stack[j] = r->stack;
	e->time[j] = (uint64_t)r->time_us;
	e->ctx[j] = r->ctx;
	e->meta[j] = r->meta;
	e->pool[j] = r->pool;
	if (r->has_time)
		e->bcols |= SNAP_TRACE_TIME;
	if (r->ctx != 0)
		e->bcols |= SNAP_TRACE_CTX;
	if (r->meta != 0)
		e->bcols |= SNAP_TRACE_META;
	if (r->pool != 0)
		e->bcols |= SNAP_TRACE_POOL;
	switch (r->action) {
	case SNAP_ALLOC:
		el = elem_new(e, v);
		memset(el, 0, sizeof *el);
		el->ev = i;
		el->addr = r->addr;
		el->size = r->size;
		el->stream = r->stream;
		el->stack = r->stack;
		live_put(v, r->addr, v->n_elems - 1, r->size);
		delta = r->size;
		break;
	case SNAP_FREE_COMPLETED:
		if (live_take(v, r->addr, &le)) {
			e->link[e->n_link++] = v->n_elems - le.k;
			elem_freed(v, le.k, i);
			delta = 0 - le.size;
			if (le.size != r->size) {
				snap_put_uv(&e->texc, j);
				snap_put_uv(&e->texc, snap_zz(delta));
				e->n_texc++;
			}
			break;
		}
		/* freed before any alloc: alive from the start */
		e->link[e->n_link++] = 0;
		el = elem_new(e, v);
		memset(el, 0, sizeof *el);
		el->ev = i;
		el->free = i + 1;
		el->addr = r->addr;
		el->size = r->size;
		el->stream = r->stream;
		el->stack = r->stack;
		el->flags = IDX_ELEM_PRE;
		v->pre += r->size;
		v->xpre += r->size;
		v->n_pre++;
		delta = 0 - r->size;
		break;
	case SNAP_SEGMENT_ALLOC:
	case SNAP_SEGMENT_MAP:
		rdelta = r->size;
		break;
	case SNAP_SEGMENT_FREE:
	case SNAP_SEGMENT_UNMAP:
		rdelta = 0 - r->size;
		break;
	default:
		break;
	}
	v->sum_t += delta;
	v->sum_r += rdelta;
	if (delta != 0) {
		v->xsum_t += r->action == SNAP_ALLOC ? (__int128)delta
		    : -(__int128)(0 - delta);
		if (v->xsum_t >= IDX_SUM_LIMIT || v->xsum_t <= -IDX_SUM_LIMIT)
			v->wrap = 1;
	}
	if (rdelta != 0) {
		v->xsum_r += r->action == SNAP_SEGMENT_ALLOC ||
		    r->action == SNAP_SEGMENT_MAP ? (__int128)rdelta
		    : -(__int128)(0 - rdelta);
		if (v->xsum_r >= IDX_SUM_LIMIT || v->xsum_r <= -IDX_SUM_LIMIT)
			v->wrap = 1;
	}
	if (v->max_ev < 0 || (int64_t)v->sum_t > v->max_t) {
		v->max_t = (int64_t)v->sum_t;
		v->max_ev = (int64_t)i;
	}
	lod_add(v, i);
	if (e->bn == SNAP_STRIPE_MAX)
		flush_events(e);
}

void
idx_enc_events(struct idx_enc *e, const struct idx_enc_slot *s, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		take_one(e, &s[k].r);
}

/* ---- the end ---------------------------------------------------------- */

/* Ghosts of device d: active blocks of the final segments whose address
 * is not live at the end of the trace (idx_timeline.c add_ghosts). */
static void
add_ghosts(struct idx_enc *e, struct enc_dev *v, const struct snapshot *s)
{
	uint32_t i, j, end;
	uint64_t at;

	snap_device_segments(s, v->device, &i, &end);
	for (; i < end; i++) {
		const struct snap_segment *g = &s->segments[i];

		if (g->device != v->device)
			continue;
		for (j = 0; j < g->n_blocks; j++) {
			const struct snap_block *b;
			struct el_stage *el;

			if ((uint64_t)g->first_block + j >= s->n_blocks)
				break;
			b = &s->blocks[g->first_block + j];
			if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED ||
			    u64map_get(&v->live, b->addr, &at))
				continue;
			el = elem_new(e, v);
			memset(el, 0, sizeof *el);
			el->addr = b->addr;
			el->size = b->requested_size;
			el->stream = g->stream;
			el->stack = b->stack;
			el->flags = IDX_ELEM_GHOST;
			v->rec.n_ghost++;
			v->rec.base_total += b->requested_size;
			v->xpre += b->requested_size;
		}
	}
}

static int
cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Bases, peak and records of device v (all its events taken). */
static void
close_device(struct idx_enc *e, struct enc_dev *v, const struct snapshot *s)
{
	struct idx_devrec *rec = &v->rec;
	uint32_t g, gend;
	uint64_t fin = 0;
	__int128 xfin = 0, xbase_r;

	if (e->cur == v)
		flush_events(e);
	rec->device = v->device;
	rec->n_events = v->n;
	rec->base_total = v->pre;
	add_ghosts(e, v, s);
	while (v->n_open > 0)
		close_oldest(e, v);
	rec->n_elems = v->n_elems;
	rec->n_pre = v->n_pre;
	/* reserved before the trace: the final segments, minus every
	 * segment delta of the trace (idx_timeline.c reserved_pass) */
	snap_device_segments(s, v->device, &g, &gend);
	for (; g < gend; g++)
		if (s->segments[g].device == v->device) {
			fin += s->segments[g].total_size;
			xfin += s->segments[g].total_size;
		}
	rec->base_reserved = (int64_t)(fin - v->sum_r);
	xbase_r = xfin - v->xsum_r;
	if (v->xpre >= IDX_SUM_LIMIT || xbase_r >= IDX_SUM_LIMIT ||
	    xbase_r <= -IDX_SUM_LIMIT)
		v->wrap = 1;
	/* past 2^64 (WRAP) the bytes before the trace saturate */
	rec->base_total = v->xpre > (__int128)UINT64_MAX ? UINT64_MAX
	    : (uint64_t)v->xpre;
	rec->flags = v->cols;
	if (v->wrap) {
		rec->flags |= IDX_DEV_WRAP;
	} else if (v->n == 0 || v->max_t <= 0) {
		/* the state before the first event is the highest (or the
		 * only) one, or the first to reach it: a trace that only
		 * comes back to it peaks before its first event */
		rec->peak = rec->base_total;
		rec->peak_ev = IDX_NO_EVENT;
	} else {
		rec->peak = rec->base_total + (uint64_t)v->max_t;
		rec->peak_ev = v->max_ev;
	}
	if (v->n_late > 2)
		qsort(v->late, v->n_late / 2, 2 * sizeof *v->late, cmp_pair);
}

/* Appends src (n records of size rec) to *dst, growing it. */
static void
append(void **dst, uint64_t *n, const void *src, uint64_t k, size_t rec)
{
	*dst = xreallocarray(*dst, (size_t)(*n + k) + 1, rec);
	if (k > 0)
		memcpy((uint8_t *)*dst + *n * rec, src, (size_t)k * rec);
	*n += k;
}

int
idx_enc_finish(struct idx_enc *e, const struct snapshot *s,
    struct idx_enc_out *out)
{
	struct idx_enc_out *o = &e->out;
	uint32_t nd = snap_device_count(s), d;

	flush_events(e);
	e->cur = NULL;
	memset(o, 0, sizeof *o);
	/* devices with events, or segments only */
	for (d = 0; d < nd; d++)
		if (snap_device_has_data(s, d))
			dev_get(e, d);
	for (d = 0; d < e->n_dev; d++) {
		struct enc_dev *v = e->dev[d];
		struct idx_devrec *rec;
		uint64_t nl;

		if (v == NULL || (v->n == 0 && !snap_device_has_data(s, d)))
			continue;
		close_device(e, v, s);
		rec = &v->rec;
		rec->ev_stripe = o->n_evdir;
		rec->n_ev_stripe = v->n_evdir;
		append((void **)&o->evdir, &o->n_evdir, v->evdir, v->n_evdir,
		    sizeof *v->evdir);
		rec->el_stripe = o->n_eldir;
		rec->n_el_stripe = v->n_eldir;
		append((void **)&o->eldir, &o->n_eldir, v->eldir, v->n_eldir,
		    sizeof *v->eldir);
		rec->late = o->n_late;
		rec->n_late = v->n_late / 2;
		append((void **)&o->late, &o->n_late, v->late, v->n_late / 2,
		    2 * sizeof *v->late);
		rec->lod = o->n_lod;
		rec->n_lod = 0;
		if (!(rec->flags & IDX_DEV_WRAP) && v->n > 0) {
			nl = idx_lod_count(v->n, NULL);
			v->lod0 = xreallocarray(v->lod0, (size_t)nl, sizeof
			    *v->lod0);
			idx_lod_cum_levels(v->lod0, v->n);
			rec->n_lod = nl;
			if (o->lod == NULL) {
				/* the first (often the only) device's
				 * pyramid is taken, not copied: two copies
				 * of tens of MB were the peak of this step */
				o->lod = v->lod0;
				o->n_lod = nl;
				v->lod0 = NULL;
			} else {
				append((void **)&o->lod, &o->n_lod, v->lod0,
				    nl, sizeof *v->lod0);
			}
		}
		free(v->lod0);
		v->lod0 = NULL;
		o->tally = xreallocarray(o->tally, (size_t)o->n_recs + 1,
		    sizeof *o->tally);
		o->tally[o->n_recs] = v->tally;
		o->tally[o->n_recs].device = v->device;
		append((void **)&o->recs, &o->n_recs, rec, 1, sizeof *rec);
	}
	o->data_off = e->data_off;
	o->data_len = e->w->off - e->data_off;
	o->data_hash = XXH3_64bits_digest(e->hash);
	*out = *o;
	o->tally = NULL; /* the caller's */
	return e->w->err == 0 ? 0 : -1;
}

void
idx_enc_free(struct idx_enc *e)
{
	size_t d;
	unsigned k;

	if (e == NULL)
		return;
	for (d = 0; d < e->n_dev; d++) {
		struct enc_dev *v = e->dev[d];

		if (v == NULL)
			continue;
		u64map_destroy(&v->live);
		free(v->pool);
		free(v->pool_free);
		free(v->lod0);
		for (k = 0; k <= EL_WINDOW; k++)
			free(v->open[k].v);
		free(v->evdir);
		free(v->eldir);
		free(v->late);
		free(v);
	}
	free(e->dev);
	free(e->out.recs);
	free(e->out.evdir);
	free(e->out.eldir);
	free(e->out.late);
	free(e->out.lod);
	snap_buf_free(&e->texc);
	snap_buf_free(&e->raw);
	snap_buf_free(&e->payload);
	XXH3_freeState(e->hash);
	free(e);
}
