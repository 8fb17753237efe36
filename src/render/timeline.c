/*
 * Active Memory Timeline rendering: model preparation (drawn set, LOD
 * blocks, jump lists) and the column-by-column stacked drawing. Semantics
 * and cost bounds in timeline.h.
 */
#include "config.h"

#include "render/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "render/fmt.h"
#include "render/frames.h"
#include "util/search.h"
#include "util/xalloc.h"

/* Time axis only for |time_us| below this: spans cannot overflow. */
#define TL_TIME_LIMIT ((int64_t)1 << 62)

#define TL_LOD_BLOCK 256
#define MAX_BANDS_PER_COL 4096

/* ---- model ------------------------------------------------------------ */

static uint32_t
hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* Stacking key of element i: ghosts reversed, then pre-trace frees
 * reversed, then trace allocations in order (memory_viz phase 3). */
struct keyed {
	uint64_t key;
	uint64_t elem;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Min-heap on size of element ids (the max_drawn largest survive). */
static void
heap_sift(uint64_t *h, uint32_t n, uint32_t i, const struct idx_timeline *tl)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		uint64_t t;

		if (l < n && idx_tl_elem(tl, h[l]).size <
		    idx_tl_elem(tl, h[m]).size)
			m = l;
		if (r < n && idx_tl_elem(tl, h[r]).size <
		    idx_tl_elem(tl, h[m]).size)
			m = r;
		if (m == i)
			return;
		t = h[i], h[i] = h[m], h[m] = t;
		i = m;
	}
}

static uint32_t
pick_largest(const struct idx_timeline *tl, uint32_t k, uint64_t *out)
{
	uint64_t i;
	uint32_t n = 0, j;

	for (i = 0; i < tl->n_elems; i++) {
		if (idx_tl_elem(tl, i).size == 0)
			continue;
		if (n < k) {
			out[n++] = i;
			if (n == k)
				for (j = k / 2 + 1; j-- > 0;)
					heap_sift(out, n, j, tl);
		} else if (idx_tl_elem(tl, i).size > idx_tl_elem(tl, out[0]).size) {
			out[0] = i;
			heap_sift(out, n, 0, tl);
		}
	}
	return n;
}

static void
build_drawn(struct tl_model *m, uint32_t max_drawn)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t *ids = xcalloc(max_drawn + 1, sizeof *ids);
	uint64_t *ord = xcalloc(tl->n_elems + 1, sizeof *ord);
	uint64_t i, ng = 0, np = 0, g = 0, p = 0;
	struct keyed *kd;
	uint32_t n, j;

	for (i = 0; i < tl->n_elems; i++) {
		if (idx_tl_elem(tl, i).flags & IDX_ELEM_GHOST)
			ord[i] = ng++;
		else if (idx_tl_elem(tl, i).flags & IDX_ELEM_PRE)
			ord[i] = np++;
	}
	n = pick_largest(tl, max_drawn, ids);
	kd = xcalloc(n + 1, sizeof *kd);
	for (j = 0; j < n; j++) {
		const struct idx_elem e_v = idx_tl_elem(tl, ids[j]);
		const struct idx_elem *e = &e_v;

		if (e->flags & IDX_ELEM_GHOST)
			kd[j].key = ng - 1 - ord[ids[j]];
		else if (e->flags & IDX_ELEM_PRE)
			kd[j].key = ng + np - 1 - ord[ids[j]];
		else
			kd[j].key = ng + np + ids[j];
		kd[j].elem = ids[j];
	}
	(void)g;
	(void)p;
	qsort(kd, n, sizeof *kd, cmp_keyed);
	m->drawn = xcalloc(n + 1, sizeof *m->drawn);
	m->color_alloc = xcalloc(n + 1, 1);
	m->color_site = xcalloc(n + 1, 1);
	for (j = 0; j < n; j++) {
		const struct idx_elem e_v = idx_tl_elem(tl, kd[j].elem);
		const struct idx_elem *e = &e_v;
		uint32_t site = m->snap != NULL ?
		    frames_call_site(m->snap, e->stack) : e->stack;

		m->drawn[j] = kd[j].elem;
		m->color_alloc[j] = (uint8_t)(hash64(e->addr * 31 +
		    (uint64_t)e->alloc_ev) % UIC_NBANDS);
		m->color_site[j] = (uint8_t)(hash64(site) % UIC_NBANDS);
		/* Neighbours in the stack differ, so bands stay apart. */
		if (j > 0 && m->color_alloc[j] == m->color_alloc[j - 1])
			m->color_alloc[j] = (m->color_alloc[j] + 1) % UIC_NBANDS;
	}
	m->n_drawn = n;
	free(kd);
	free(ord);
	free(ids);
}

static void
build_lod(struct tl_model *m)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t b, i;

	m->n_blk = (tl->n_events + TL_LOD_BLOCK - 1) / TL_LOD_BLOCK;
	m->blk_argmax = xcalloc(m->n_blk + 1, sizeof *m->blk_argmax);
	m->blk_maxres = xcalloc(m->n_blk + 1, sizeof *m->blk_maxres);
	for (b = 0; b < m->n_blk; b++) {
		uint64_t lo = b * TL_LOD_BLOCK, hi = lo + TL_LOD_BLOCK;
		uint64_t am = lo, mr = 0;

		if (hi > tl->n_events)
			hi = tl->n_events;
		for (i = lo; i < hi; i++) {
			if (idx_tl_total(tl, i) > idx_tl_total(tl, am))
				am = i;
			if (idx_tl_reserved(tl, i) > mr)
				mr = idx_tl_reserved(tl, i);
		}
		m->blk_argmax[b] = am;
		m->blk_maxres[b] = mr;
	}
}

static void
build_jumps(struct tl_model *m)
{
	const struct snap_trace *t = m->trace;
	static const unsigned act[3] = {SNAP_OOM, SNAP_SEGMENT_ALLOC,
	    SNAP_SNAPSHOT};
	uint64_t i, cap[3] = {0, 0, 0};
	int k;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		for (k = 0; k < 3; k++)
			if (snap_ev_action(t, i) == act[k] ||
			    (k == 1 && snap_ev_action(t, i) == SNAP_SEGMENT_MAP)) {
				XGROW(m->jumps[k], cap[k], m->n_jumps[k] + 1);
				m->jumps[k][m->n_jumps[k]++] = (int64_t)i;
			}
}

static const struct idx_timeline *cmp_tl;

static int
cmp_addr(const void *a, const void *b)
{
	const struct idx_elem x_v = idx_tl_elem(cmp_tl, *(const uint64_t *)a);
	const struct idx_elem *x = &x_v;
	const struct idx_elem y_v = idx_tl_elem(cmp_tl, *(const uint64_t *)b);
	const struct idx_elem *y = &y_v;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

void
tl_model_init(struct tl_model *m, const struct snapshot *s,
    const struct idx_timeline *tl, uint32_t max_drawn)
{
	uint64_t i;

	memset(m, 0, sizeof *m);
	m->snap = s;
	m->tl = tl;
	m->trace = s != NULL ? snap_trace_of(s, tl->device) : NULL;
	if (m->trace != NULL && m->trace->n != tl->n_events)
		m->trace = NULL;
	build_drawn(m, max_drawn);
	build_lod(m);
	build_jumps(m);
	m->by_addr = xcalloc(tl->n_elems + 1, sizeof *m->by_addr);
	for (i = 0; i < tl->n_elems; i++)
		m->by_addr[i] = i;
	cmp_tl = tl;
	qsort(m->by_addr, tl->n_elems, sizeof *m->by_addr, cmp_addr);
	m->time_ok = m->trace != NULL && snap_trace_has_time(m->trace) &&
	    tl->n_events > 0;
	/* a time axis needs times that never go back, and within +-2^62 us
	 * so that spans and "+ 1" cannot overflow on a crafted file */
	for (i = 0; m->time_ok && i < tl->n_events; i++)
		if (snap_ev_time(m->trace, i) == SNAP_NO_TIME ||
		    snap_ev_time(m->trace, i) < -TL_TIME_LIMIT ||
		    snap_ev_time(m->trace, i) >= TL_TIME_LIMIT ||
		    (i > 0 && snap_ev_time(m->trace, i) < snap_ev_time(m->trace, i - 1)))
			m->time_ok = 0;
}

void
tl_model_destroy(struct tl_model *m)
{
	int k;

	free(m->drawn);
	free(m->color_alloc);
	free(m->color_site);
	free(m->blk_argmax);
	free(m->blk_maxres);
	free(m->by_addr);
	for (k = 0; k < 3; k++)
		free(m->jumps[k]);
	memset(m, 0, sizeof *m);
}

uint64_t
tl_total_at(const struct tl_model *m, int64_t ev)
{
	if (ev < 0 || (uint64_t)ev >= m->tl->n_events)
		return ev < 0 ? m->tl->base_total : idx_tl_total(m->tl, m->tl->n_events
		    - 1);
	return idx_tl_total(m->tl, ev);
}

uint64_t
tl_reserved_at(const struct tl_model *m, int64_t ev)
{
	if (ev < 0 || (uint64_t)ev >= m->tl->n_events)
		return ev < 0 ? m->tl->base_reserved :
		    idx_tl_reserved(m->tl, m->tl->n_events - 1);
	return idx_tl_reserved(m->tl, ev);
}

static int
live_at(const struct idx_elem *e, int64_t at)
{
	return e->alloc_ev <= at && (e->free_ev < 0 || e->free_ev > at);
}

struct addr_bound {
	const struct tl_model *m;
	uint64_t addr;
};

static int
addr_below(const void *ctx, uint64_t i)
{
	const struct addr_bound *b = ctx;

	return idx_tl_elem(b->m->tl, b->m->by_addr[i]).addr < b->addr;
}

uint64_t
tl_model_find_elem(const struct tl_model *m, uint64_t addr, int64_t at)
{
	const struct idx_timeline *tl = m->tl;
	struct addr_bound b = {m, addr};
	uint64_t i;

	for (i = sv_partition(0, tl->n_elems, addr_below, &b);
	    i < tl->n_elems; i++) {
		struct idx_elem e = idx_tl_elem(tl, m->by_addr[i]);

		if (e.addr != addr)
			break;
		if (live_at(&e, at))
			return m->by_addr[i];
	}
	return TL_NO_ELEM;
}

int64_t
tl_model_jump(const struct tl_model *m, enum tl_jump j, int64_t from,
    int dir)
{
	const int64_t *a = m->jumps[j];
	uint64_t lo = sv_count_le_i64(a, m->n_jumps[j], from);

	if (dir > 0)
		return lo < m->n_jumps[j] ? a[lo] : -2;
	while (lo > 0 && a[lo - 1] >= from)
		lo--;
	return lo > 0 ? a[lo - 1] : -2;
}

/* ---- highlighted set ------------------------------------------------- */

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

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
	return cmp_i64(&((const struct ev_size *)a)->ev,
	    &((const struct ev_size *)b)->ev);
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

void
tl_hilite_init(struct tl_hilite *h, const struct tl_model *m,
    const uint64_t *elems, uint64_t n)
{
	const struct idx_timeline *tl = m->tl;
	struct ev_size *al = xcalloc(n + 1, sizeof *al);
	struct ev_size *fr = xcalloc(n + 1, sizeof *fr);
	uint64_t *ids = xcalloc(n + 1, sizeof *ids), i, na = 0, nf = 0;
	uint32_t j;

	memset(h, 0, sizeof *h);
	for (i = 0; i < n; i++) {
		struct idx_elem e;

		if (elems[i] >= tl->n_elems)
			continue;
		e = idx_tl_elem(tl, elems[i]);
		ids[na] = elems[i];
		al[na].ev = e.alloc_ev;
		al[na++].size = e.size;
		if (e.free_ev >= 0) {
			fr[nf].ev = e.free_ev;
			fr[nf++].size = e.size;
		}
	}
	sums_of(al, na, &h->alloc_ev, &h->alloc_cum);
	sums_of(fr, nf, &h->free_ev, &h->free_cum);
	h->n_alloc = na;
	h->n_free = nf;
	qsort(ids, na, sizeof *ids, cmp_u64);
	h->n_drawn = m->n_drawn;
	h->drawn = xcalloc(m->n_drawn + 1, 1);
	for (j = 0; j < m->n_drawn; j++)
		h->drawn[j] = bsearch(&m->drawn[j], ids, na, sizeof *ids,
		    cmp_u64) != NULL;
	free(ids);
	free(fr);
	free(al);
}

void
tl_hilite_destroy(struct tl_hilite *h)
{
	free(h->alloc_ev);
	free(h->alloc_cum);
	free(h->free_ev);
	free(h->free_cum);
	free(h->drawn);
	memset(h, 0, sizeof *h);
}

/* Running sum of the entries with ev[i] <= at. */
static uint64_t
sum_upto(const int64_t *ev, const uint64_t *cum, uint64_t n, int64_t at)
{
	uint64_t k = sv_count_le_i64(ev, n, at);

	return k > 0 ? cum[k - 1] : 0;
}

uint64_t
tl_hilite_bytes(const struct tl_hilite *h, int64_t ev)
{
	uint64_t a = sum_upto(h->alloc_ev, h->alloc_cum, h->n_alloc, ev);
	uint64_t f = sum_upto(h->free_ev, h->free_cum, h->n_free, ev);

	return a > f ? a - f : 0;
}

/* ---- columns ---------------------------------------------------------- */

int
tl_plot_width(int w)
{
	return w > TL_YAXIS_W ? w - TL_YAXIS_W : 0;
}

static int64_t
time_of(const struct tl_model *m, int64_t ev)
{
	return snap_ev_time(m->trace, ev);
}

/* First event with time >= t in [lo, hi) (0 <= lo <= hi). */
static int64_t
time_lower_bound(const struct tl_model *m, int64_t lo, int64_t hi,
    int64_t t)
{
	return (int64_t)snap_ev_at_time(m->trace, (uint64_t)lo, (uint64_t)hi,
	    t);
}

static int
use_time(const struct tl_model *m, const struct tl_view *v)
{
	return v->time_axis && m->time_ok;
}

int64_t
tl_col_event(const struct tl_model *m, const struct tl_view *v, int pw,
    int col)
{
	int64_t span = v->ev1 - v->ev0;

	if (pw <= 0)
		return v->ev0;
	if (use_time(m, v)) {
		int64_t t0 = time_of(m, v->ev0), t1 = time_of(m, v->ev1 - 1) + 1;
		int64_t t = t0 + (int64_t)((double)(t1 - t0) * col / pw);

		return time_lower_bound(m, v->ev0, v->ev1, t);
	}
	return v->ev0 + (int64_t)((double)span * col / pw);
}

int
tl_event_col(const struct tl_model *m, const struct tl_view *v, int pw,
    int64_t ev)
{
	int64_t span = v->ev1 - v->ev0;
	int c;

	if (ev < v->ev0 || ev >= v->ev1 || pw <= 0)
		return -1;
	if (use_time(m, v)) {
		int64_t t0 = time_of(m, v->ev0), t1 = time_of(m, v->ev1 - 1) + 1;

		c = (int)((double)(time_of(m, ev) - t0) * pw / (double)(t1 - t0));
	} else
		c = (int)((double)(ev - v->ev0) * pw / (double)span);
	/* The column whose range starts at or before ev. */
	while (c > 0 && tl_col_event(m, v, pw, c) > ev)
		c--;
	while (c + 1 < pw && tl_col_event(m, v, pw, c + 1) <= ev &&
	    tl_col_event(m, v, pw, c + 1) < v->ev1)
		c++;
	return c < pw ? c : pw - 1;
}

/* The aggregate of events [lo, hi): the event with the highest total and
 * the highest reserved. An empty range shows the state before it. This
 * is the one place to switch to the index's LOD pyramid. */
static void
col_agg(const struct tl_model *m, int64_t lo, int64_t hi, int64_t *ev,
    uint64_t *maxres)
{
	const struct idx_timeline *tl = m->tl;
	int64_t i, am, b, b0, b1;
	uint64_t mr = 0;

	if (lo >= hi || tl->n_events == 0) {
		*ev = lo - 1;
		*maxres = tl_reserved_at(m, lo - 1);
		return;
	}
	am = lo;
	b0 = (lo + TL_LOD_BLOCK - 1) / TL_LOD_BLOCK;
	b1 = hi / TL_LOD_BLOCK;
	if (b0 >= b1) {
		b0 = b1 = hi; /* no full block: plain scan */
		for (i = lo; i < hi; i++) {
			if (idx_tl_total(tl, i) > idx_tl_total(tl, am))
				am = i;
			if (idx_tl_reserved(tl, i) > mr)
				mr = idx_tl_reserved(tl, i);
		}
	} else {
		for (i = lo; i < b0 * TL_LOD_BLOCK; i++) {
			if (idx_tl_total(tl, i) > idx_tl_total(tl, am))
				am = i;
			if (idx_tl_reserved(tl, i) > mr)
				mr = idx_tl_reserved(tl, i);
		}
		for (b = b0; b < b1; b++) {
			if (idx_tl_total(tl, m->blk_argmax[b]) > idx_tl_total(tl, am))
				am = (int64_t)m->blk_argmax[b];
			if (m->blk_maxres[b] > mr)
				mr = m->blk_maxres[b];
		}
		for (i = b1 * TL_LOD_BLOCK; i < hi; i++) {
			if (idx_tl_total(tl, i) > idx_tl_total(tl, am))
				am = i;
			if (idx_tl_reserved(tl, i) > mr)
				mr = idx_tl_reserved(tl, i);
		}
	}
	*ev = am;
	*maxres = mr;
}

/* ---- drawing ---------------------------------------------------------- */

struct band {
	uint64_t lo, hi;   /* bytes */
	uint8_t color;
	uint8_t hilite;
	uint8_t summary;
	uint8_t set;       /* the highlighted set (tl_view.hl) */
};

static const uint32_t pat_utf8[] = {0x2588, 0x2593, 0x2592, 0x2591};
static const char pat_ascii[] = "#%=+ox&$";
static const uint32_t eighths[] = {' ', 0x2581, 0x2582, 0x2583, 0x2584,
    0x2585, 0x2586, 0x2587, 0x2588};

static uint32_t
band_glyph(const struct tl_view *v, const struct band *b)
{
	if (b->set)
		return v->utf8 ? (v->mono ? 0x259a : 0x2588) : '!';
	if (b->summary)
		return v->utf8 ? 0x2591 : ':';
	if (b->hilite)
		return v->utf8 ? (v->mono ? 0x2593 : 0x2588) : '@';
	if (!v->mono)
		return v->utf8 ? 0x2588 : '#';
	return v->utf8 ? pat_utf8[b->color % 4] : (uint32_t)pat_ascii[b->color];
}

static unsigned
band_color(const struct band *b)
{
	if (b->set)
		return UIC_LEAK;
	if (b->summary)
		return UIC_SUMMARY;
	if (b->hilite)
		return UIC_HILITE;
	return UIC_BAND0 + b->color;
}

/* Collects the bands of the state after event ev, bottom to top. */
static int
col_bands(const struct tl_model *m, const struct tl_view *v, int64_t ev,
    double row_bytes, struct band *out)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t off = 0, total = tl_total_at(m, ev);
	const struct tl_hilite *hl = v->hl;
	uint32_t j;
	int n = 0;

	memset(out, 0, sizeof *out);
	if (hl != NULL && (off = tl_hilite_bytes(hl, ev)) > 0) {
		out[0].hi = off < total ? off : total;
		out[0].set = 1;
		off = out[0].hi;
		n++;
	}
	for (j = 0; j < m->n_drawn && n < MAX_BANDS_PER_COL - 1; j++) {
		const struct idx_elem e_v = idx_tl_elem(tl, m->drawn[j]);
		const struct idx_elem *e = &e_v;

		if (!live_at(e, ev) || (double)e->size < row_bytes / 4 ||
		    (hl != NULL && j < hl->n_drawn && hl->drawn[j]))
			continue;
		out[n].lo = off;
		out[n].hi = off + e->size;
		out[n].color = v->by_site ? m->color_site[j] : m->color_alloc[j];
		out[n].hilite = m->drawn[j] == v->sel_elem;
		out[n].summary = 0;
		out[n].set = 0;
		off += e->size;
		n++;
	}
	if (total > off) {
		out[n].lo = off;
		out[n].hi = total;
		out[n].color = 0;
		out[n].hilite = 0;
		out[n].summary = 1;
		out[n].set = 0;
		n++;
	}
	return n;
}

static void
draw_column(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int x, int ybot, int ph, int64_t ev, uint64_t res,
    double row_bytes, struct band *bands)
{
	int n = col_bands(m, v, ev, row_bytes, bands), j = 0, r, rr;
	uint64_t top = n > 0 ? bands[n - 1].hi : 0;

	for (r = 0; r < ph && n > 0; r++) {
		double lo = r * row_bytes, mid = lo + row_bytes / 2;

		if (lo >= (double)top)
			break;
		while (j + 1 < n && (double)bands[j].hi <= mid)
			j++;
		if (mid < (double)top) {
			/* the highlighted set rests at the bottom: its cell
			 * shows from an eighth of a row on, so it is seen */
			int b = r == 0 && bands[0].set &&
			    (double)bands[0].hi >= row_bytes / 8 ? 0 : j;

			cellbuf_put(cb, x, ybot - r, band_glyph(v, &bands[b]),
			    band_color(&bands[b]), 0);
		} else {
			int e8 = (int)(((double)top - lo) * 8 / row_bytes);
			uint32_t g;

			if (e8 <= 0)
				continue;
			if (v->utf8)
				g = eighths[e8];
			else
				g = e8 >= 4 ? band_glyph(v, &bands[n - 1]) : '_';
			cellbuf_put(cb, x, ybot - r, g, band_color(&bands[n - 1]),
			    0);
		}
	}
	rr = (int)((double)res / row_bytes);
	if (res > 0 && rr >= 0 && (rr < ph || res <= (uint64_t)(row_bytes * ph))) {
		struct cell *c;

		if (rr >= ph)
			rr = ph - 1;
		c = cellbuf_at(cb, x, ybot - rr);
		if (c != NULL && (c->ch == ' ' || (c->ch >= 0x2581 &&
		    c->ch < 0x2588) || c->ch == '_'))
			cellbuf_put(cb, x, ybot - rr, v->utf8 ? 0x2500 : '-',
			    UIC_RESERVED, 0);
	}
}

static void
label_for(const struct tl_model *m, const struct tl_view *v, int64_t ev,
    char *buf, size_t size)
{
	if (use_time(m, v) && ev >= 0)
		fmt_duration(buf, size, time_of(m, ev) - time_of(m, 0));
	else
		fmt_event(buf, size, ev);
}

/* Marks (tl_view.marks) in the view on the x axis row at (px, y). */
static void
draw_marks(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int px, int y, int pw)
{
	uint64_t i;
	int sel = -1, c;

	if (v->marks == NULL)
		return;
	for (i = sv_count_le_i64(v->marks, v->n_marks, v->ev0 - 1); i < v->n_marks && v->marks[i] < v->ev1; i++) {
		c = tl_event_col(m, v, pw, v->marks[i]);
		if (c < 0)
			continue;
		if (v->marks[i] == v->mark_sel)
			sel = c;
		cellbuf_put(cb, px + c, y, v->utf8 ? 0x25b2 : '^', UIC_MARK, 0);
	}
	if (sel >= 0)
		cellbuf_put(cb, px + sel, y, v->utf8 ? 0x25b2 : '^', UIC_HILITE,
		    0);
}

static void
draw_axes(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int x, int y, int w, int h, uint64_t ymax)
{
	int pw = tl_plot_width(w), ph = h - 2, r, cc, len, pos;
	int px = x + TL_YAXIS_W;
	char buf[FMT_BUF], lab[FMT_BUF + 8];

	for (r = 0; r < ph; r++)
		cellbuf_put(cb, px - 1, y + r, v->utf8 ? 0x2595 : '|', UIC_AXIS,
		    0);
	fmt_size_short(buf, sizeof buf, ymax);
	cellbuf_printf(cb, x, y, TL_YAXIS_W - 1, UIC_AXIS, 0, "%5s", buf);
	if (ph >= 5) {
		fmt_size_short(buf, sizeof buf, ymax / 2);
		cellbuf_printf(cb, x, y + ph / 2, TL_YAXIS_W - 1, UIC_AXIS, 0,
		    "%5s", buf);
	}
	if (ph >= 2)
		cellbuf_printf(cb, x, y + ph - 1, TL_YAXIS_W - 1, UIC_AXIS, 0,
		    "%5s", "0");
	/* x axis row: rule, selected element's lifetime, cursor mark */
	cellbuf_fill(cb, px, y + ph, pw, 1, v->utf8 ? 0x2500 : '-', UIC_AXIS,
	    0);
	cellbuf_put(cb, px - 1, y + ph, v->utf8 ? 0x2514 : '+', UIC_AXIS, 0);
	if (v->sel_elem != TL_NO_ELEM && v->sel_elem < m->tl->n_elems) {
		const struct idx_elem e_v = idx_tl_elem(m->tl, v->sel_elem);
		const struct idx_elem *e = &e_v;
		int64_t a = e->alloc_ev < v->ev0 ? v->ev0 : e->alloc_ev;
		int64_t f = e->free_ev < 0 || e->free_ev >= v->ev1 ?
		    v->ev1 - 1 : e->free_ev;
		int ca = tl_event_col(m, v, pw, a), cf = tl_event_col(m, v, pw, f);

		if (a <= f && ca >= 0 && cf >= 0)
			cellbuf_fill(cb, px + ca, y + ph, cf - ca + 1, 1,
			    v->utf8 ? 0x2501 : '=', UIC_HILITE, 0);
	}
	draw_marks(m, v, cb, px, y + ph, pw);
	cc = tl_event_col(m, v, pw, v->cursor);
	if (cc >= 0) {
		for (r = 0; r < ph; r++) {
			struct cell *c = cellbuf_at(cb, px + cc, y + r);

			if (c == NULL)
				continue;
			if (c->ch == ' ')
				cellbuf_put(cb, px + cc, y + r,
				    v->utf8 ? 0x2502 : '|', UIC_CURSOR, 0);
			else
				c->attr |= CB_A_REVERSE;
		}
		cellbuf_put(cb, px + cc, y + ph, v->utf8 ? 0x253c : '+',
		    UIC_CURSOR, 0);
	}
	/* label row: first event, last event, cursor */
	label_for(m, v, v->ev0, buf, sizeof buf);
	len = cellbuf_puts(cb, px, y + ph + 1, buf, pw, UIC_AXIS, 0);
	label_for(m, v, v->ev1 - 1, buf, sizeof buf);
	pos = px + pw - (int)strlen(buf);
	if (pos > px + len + 1)
		cellbuf_puts(cb, pos, y + ph + 1, buf, pw, UIC_AXIS, 0);
	else
		pos = px + pw;
	if (cc >= 0) {
		label_for(m, v, v->cursor, buf, sizeof buf);
		snprintf(lab, sizeof lab, "^%s", buf);
		r = (int)strlen(lab);
		if (px + cc + r >= pos)
			cc = pos - px - r - 1;
		if (px + cc > px + len)
			cellbuf_puts(cb, px + cc, y + ph + 1, lab, r, UIC_CURSOR,
			    0);
	}
}

void
tl_render(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int x, int y, int w, int h)
{
	int pw = tl_plot_width(w), ph = h - 2, c;
	int64_t *evs;
	uint64_t *res, ymax = v->ymax;
	struct band *bands;
	double row_bytes;

	cellbuf_fill(cb, x, y, w, h, ' ', UIC_DEFAULT, 0);
	if (pw < 2 || ph < 1 || v->ev1 <= v->ev0)
		return;
	evs = xcalloc(pw, sizeof *evs);
	res = xcalloc(pw, sizeof *res);
	for (c = 0; c < pw; c++) {
		int64_t lo = tl_col_event(m, v, pw, c);
		int64_t hi = c + 1 < pw ? tl_col_event(m, v, pw, c + 1) : v->ev1;

		if (hi <= lo && lo < v->ev1 && !use_time(m, v))
			hi = lo + 1;
		col_agg(m, lo, hi, &evs[c], &res[c]);
		if (v->ymax == 0) {
			if (res[c] > ymax)
				ymax = res[c];
			if (tl_total_at(m, evs[c]) > ymax)
				ymax = tl_total_at(m, evs[c]);
		}
	}
	if (ymax == 0)
		ymax = 1;
	row_bytes = (double)ymax / ph;
	bands = xcalloc(MAX_BANDS_PER_COL, sizeof *bands);
	for (c = 0; c < pw; c++)
		draw_column(m, v, cb, x + TL_YAXIS_W + c, y + ph - 1, ph, evs[c],
		    res[c], row_bytes, bands);
	draw_axes(m, v, cb, x, y, w, h, ymax);
	free(bands);
	free(res);
	free(evs);
}
