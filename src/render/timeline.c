/*
 * Active Memory Timeline model: the drawn sets, LOD blocks, jump lists
 * and annotations of a device, totals and lookups, and the columns. The
 * grouped modes are in tl_modes.c, the highlighted set in tl_hilite.c,
 * the bands of a column in tl_bands.c, drawing in tl_draw.c and
 * tl_legend.c. Semantics and cost bounds in timeline.h.
 */
#include "config.h"

#include "render/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "render/frames.h"
#include "render/tl_int.h"
#include "util/search.h"
#include "util/xalloc.h"

static const char *const stack_names[TL_STACK_COUNT] = {"allocation",
    "call site", "category", "stream/pool", "segment"};

const char *
tl_stack_name(int st)
{
	return st >= 0 && st < TL_STACK_COUNT ? stack_names[st] : "?";
}

/* ---- drawn sets ---------------------------------------------------------- */

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

struct idx_elem
tl_layer_elem(const struct tl_model *m, int st, uint64_t k)
{
	if (st == TL_STACK_SEGMENT)
		return m->segs.elems[k];
	return idx_tl_elem(m->tl, k);
}

static uint64_t
layer_count(const struct tl_model *m, int layer)
{
	return layer == TL_LAYER_SEG ? m->segs.n : m->tl->n_elems;
}

static struct idx_elem
layer_elem(const struct tl_model *m, int layer, uint64_t k)
{
	return tl_layer_elem(m, layer == TL_LAYER_SEG ? TL_STACK_SEGMENT :
	    TL_STACK_ALLOC, k);
}

/* Stacking key of an element: ghosts reversed, then pre-trace frees
 * reversed, then trace allocations in order (memory_viz phase 3). */
struct keyed {
	uint64_t key;
	uint64_t elem;
	uint64_t size;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Min-heap on size (the k largest survive; ties keep the earlier). */
static int
heap_less(const struct keyed *x, const struct keyed *y)
{
	return x->size < y->size || (x->size == y->size && x->elem > y->elem);
}

static void
heap_sift(struct keyed *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct keyed t;

		if (l < n && heap_less(&h[l], &h[m]))
			m = l;
		if (r < n && heap_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i], h[i] = h[m], h[m] = t;
		i = m;
	}
}

/* The k largest elements of the layer, with their stacking keys. */
static uint32_t
pick_largest(const struct tl_model *m, int layer, uint32_t k,
    struct keyed *out)
{
	uint64_t i, n = layer_count(m, layer), ng = 0, np = 0, *ord;
	uint32_t cnt = 0, j;

	/* ranks among ghosts and among pre-trace elements */
	ord = xcalloc(n + 1, sizeof *ord);
	for (i = 0; i < n; i++) {
		struct idx_elem e = layer_elem(m, layer, i);

		if (e.flags & IDX_ELEM_GHOST)
			ord[i] = ng++;
		else if (e.flags & IDX_ELEM_PRE)
			ord[i] = np++;
	}
	for (i = 0; i < n && k > 0; i++) {
		struct idx_elem e = layer_elem(m, layer, i);
		struct keyed kd;

		if (e.size == 0)
			continue;
		kd.elem = i;
		kd.size = e.size;
		if (e.flags & IDX_ELEM_GHOST)
			kd.key = ng - 1 - ord[i];
		else if (e.flags & IDX_ELEM_PRE)
			kd.key = ng + np - 1 - ord[i];
		else
			kd.key = ng + np + i;
		if (cnt < k) {
			out[cnt++] = kd;
			if (cnt == k)
				for (j = k / 2 + 1; j-- > 0;)
					heap_sift(out, cnt, j);
		} else if (heap_less(&out[0], &kd)) {
			out[0] = kd;
			heap_sift(out, cnt, 0);
		}
	}
	free(ord);
	return cnt;
}

void
tl_build_layer(struct tl_model *m, int layer)
{
	struct tl_layer *L = &m->layer[layer];
	struct keyed *kd = xcalloc((size_t)m->max_drawn + 1, sizeof *kd);
	uint32_t n = pick_largest(m, layer, m->max_drawn, kd), j;

	qsort(kd, n, sizeof *kd, cmp_keyed);
	L->d = xcalloc((size_t)n + 1, sizeof *L->d);
	for (j = 0; j < n; j++) {
		struct idx_elem e = layer_elem(m, layer, kd[j].elem);
		uint32_t site = m->snap != NULL ?
		    frames_call_site(m->snap, e.stack) : e.stack;
		struct tl_drawn *d = &L->d[j];

		d->elem = kd[j].elem;
		d->size = e.size;
		d->alloc_ev = e.alloc_ev;
		d->free_ev = e.free_ev;
		d->color_alloc = (uint8_t)(hash64(e.addr * 31 +
		    (uint64_t)e.alloc_ev) % UIC_NBANDS);
		d->color_site = (uint8_t)(hash64(site) % UIC_NBANDS);
		/* Neighbours in the stack differ, so bands stay apart. */
		if (j > 0 && d->color_alloc == L->d[j - 1].color_alloc)
			d->color_alloc = (d->color_alloc + 1) % UIC_NBANDS;
	}
	L->n = n;
	L->ok = 1;
	free(kd);
}

/* ---- LOD blocks, jumps, annotations -------------------------------------- */

static void
build_lod(struct tl_model *m)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t b, i;

	m->n_blk = (tl->n_events + TL_LOD_BLOCK - 1) / TL_LOD_BLOCK;
	m->blk_argmax = xcalloc(m->n_blk + 1, sizeof *m->blk_argmax);
	m->blk_argres = xcalloc(m->n_blk + 1, sizeof *m->blk_argres);
	m->blk_maxres = xcalloc(m->n_blk + 1, sizeof *m->blk_maxres);
	m->blk_maxtot = xcalloc(m->n_blk + 1, sizeof *m->blk_maxtot);
	for (b = 0; b < m->n_blk; b++) {
		uint64_t lo = b * TL_LOD_BLOCK, hi = lo + TL_LOD_BLOCK;
		uint64_t am = lo, ar = lo, mt = idx_tl_total(tl, lo);
		uint64_t mr = idx_tl_reserved(tl, lo);

		if (hi > tl->n_events)
			hi = tl->n_events;
		for (i = lo + 1; i < hi; i++) {
			uint64_t t = idx_tl_total(tl, i);
			uint64_t r = idx_tl_reserved(tl, i);

			if (t > mt)
				mt = t, am = i;
			if (r > mr)
				mr = r, ar = i;
		}
		m->blk_argmax[b] = am;
		m->blk_argres[b] = ar;
		m->blk_maxres[b] = mr;
		m->blk_maxtot[b] = mt;
	}
}

static void
build_jumps(struct tl_model *m)
{
	const struct snap_trace *t = m->trace;
	static const unsigned act[3] = {SNAP_OOM, SNAP_SEGMENT_ALLOC,
	    SNAP_SNAPSHOT};
	uint64_t i;
	size_t cap[3] = {0, 0, 0};
	int k;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		for (k = 0; k < 3; k++)
			if (snap_ev_action(t, i) == act[k] ||
			    (k == 1 &&
			    snap_ev_action(t, i) == SNAP_SEGMENT_MAP)) {
				XGROW(m->jumps[k], cap[k], m->n_jumps[k] + 1);
				m->jumps[k][m->n_jumps[k]++] = (int64_t)i;
			}
}

static int
cmp_annot(const void *a, const void *b)
{
	const struct tl_annot *x = a, *y = b;

	if (x->ev != y->ev)
		return x->ev < y->ev ? -1 : 1;
	if (x->time_us != y->time_us)
		return x->time_us < y->time_us ? -1 : 1;
	return (x->stage == SNAP_STAGE_END) - (y->stage == SNAP_STAGE_END);
}

/* The device's annotations at events: a START at the first event at or
 * after its time (after the last event: the last), an END at the last
 * event at or before it (before the first: the first). Needs the time
 * axis. */
static void
build_annots(struct tl_model *m)
{
	const struct snapshot *s = m->snap;
	uint64_t n = m->tl->n_events;
	size_t cap = 0;
	uint32_t i;

	if (s == NULL || !m->time_ok)
		return;
	for (i = 0; i < s->n_annotations; i++) {
		const struct snap_annotation *a = &s->annotations[i];
		uint64_t lo = 0, hi = n;
		struct tl_annot *o;

		if (a->device != m->tl->device || a->stage == SNAP_STAGE_OTHER)
			continue;
		/* the first event at or after a START, the last at or
		 * before an END (as steps.h maps them) */
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (a->stage == SNAP_STAGE_START ?
			    snap_ev_time(m->trace, mid) < a->time_us :
			    snap_ev_time(m->trace, mid) <= a->time_us)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (a->stage == SNAP_STAGE_END)
			lo = lo > 0 ? lo - 1 : 0;
		XGROW(m->annots, cap, m->n_annots + 1);
		o = &m->annots[m->n_annots++];
		o->ev = (int64_t)(lo < n ? lo : n - 1);
		o->time_us = a->time_us;
		o->name = a->name;
		o->stage = a->stage;
	}
	if (m->n_annots > 1)
		qsort(m->annots, m->n_annots, sizeof *m->annots, cmp_annot);
}

uint64_t
tl_model_annot_step(const struct tl_model *m, int64_t from, uint64_t cur,
    int dir)
{
	uint64_t i;

	if (m->n_annots == 0)
		return UINT64_MAX;
	if (cur < m->n_annots && m->annots[cur].ev == from) {
		if (dir > 0)
			return cur + 1 < m->n_annots ? cur + 1 : UINT64_MAX;
		return cur > 0 ? cur - 1 : UINT64_MAX;
	}
	if (dir > 0) {
		for (i = 0; i < m->n_annots; i++)
			if (m->annots[i].ev > from)
				return i;
		return UINT64_MAX;
	}
	for (i = m->n_annots; i-- > 0;)
		if (m->annots[i].ev < from)
			return i;
	return UINT64_MAX;
}

/* ---- model --------------------------------------------------------------- */

struct addr_id {
	uint64_t addr, id;
};

/* Elements by (address, id): an LSD radix sort of (address, id) pairs,
 * 11 bits a pass, passes where every address has the same digit
 * skipped. Stable, so equal addresses stay in id order; it reads no
 * element columns at random and costs O(n) a pass. */
static void
build_by_addr(struct tl_model *m)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t n = tl->n_elems, i, cnt[2048], or_ = 0, and_ = UINT64_MAX;
	struct addr_id *a = xcalloc(n + 1, sizeof *a);
	struct addr_id *b = xcalloc(n + 1, sizeof *b), *t;
	int shift;

	for (i = 0; i < n; i++) {
		a[i].addr = idx_tl_elem(tl, i).addr;
		a[i].id = i;
		or_ |= a[i].addr;
		and_ &= a[i].addr;
	}
	for (shift = 0; shift < 64; shift += 11) {
		uint64_t sum = 0, c;

		if ((((or_ ^ and_) >> shift) & 2047) == 0)
			continue; /* the same digit everywhere */
		memset(cnt, 0, sizeof cnt);
		for (i = 0; i < n; i++)
			cnt[(a[i].addr >> shift) & 2047]++;
		for (i = 0; i < 2048; i++) {
			c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			b[cnt[(a[i].addr >> shift) & 2047]++] = a[i];
		t = a, a = b, b = t;
	}
	m->by_addr = xcalloc(n + 1, sizeof *m->by_addr);
	for (i = 0; i < n; i++)
		m->by_addr[i] = a[i].id;
	free(b);
	free(a);
}

static int
times_ok(const struct tl_model *m)
{
	uint64_t i;

	if (m->trace == NULL || !snap_trace_has_time(m->trace) ||
	    m->tl->n_events == 0)
		return 0;
	/* a time axis needs times that never go back, and within +-2^62 us
	 * so that spans and "+ 1" cannot overflow on a crafted file */
	for (i = 0; i < m->tl->n_events; i++) {
		int64_t t = snap_ev_time(m->trace, i);

		if (t == SNAP_NO_TIME || t < -TL_TIME_LIMIT ||
		    t >= TL_TIME_LIMIT ||
		    (i > 0 && t < snap_ev_time(m->trace, i - 1)))
			return 0;
	}
	return 1;
}

void
tl_model_init(struct tl_model *m, const struct snapshot *s,
    const struct idx_timeline *tl, uint32_t max_drawn)
{
	memset(m, 0, sizeof *m);
	m->snap = s;
	m->tl = tl;
	m->max_drawn = max_drawn;
	m->trace = s != NULL ? snap_trace_of(s, tl->device) : NULL;
	if (m->trace != NULL && m->trace->n != tl->n_events)
		m->trace = NULL;
	tl_build_layer(m, TL_LAYER_ALLOC);
	build_lod(m);
	build_jumps(m);
	build_by_addr(m);
	m->time_ok = times_ok(m);
	build_annots(m);
	m->groups_ok[TL_STACK_ALLOC] = 1;
}

void
tl_model_destroy(struct tl_model *m)
{
	int k;

	for (k = 0; k < 2; k++)
		free(m->layer[k].d);
	free(m->blk_argmax);
	free(m->blk_argres);
	free(m->blk_maxres);
	free(m->blk_maxtot);
	free(m->by_addr);
	for (k = 0; k < 3; k++)
		free(m->jumps[k]);
	free(m->annots);
	tl_segs_destroy(&m->segs);
	for (k = 0; k < TL_STACK_COUNT; k++)
		tl_groups_destroy(&m->groups[k]);
	if (m->sites_ok > 0)
		an_sites_destroy(&m->sites);
	free(m->skeys);
	free(m->seg_by_addr);
	memset(m, 0, sizeof *m);
}

/* ---- totals and lookups -------------------------------------------------- */

uint64_t
tl_total_at(const struct tl_model *m, int64_t ev)
{
	if (ev < 0 || (uint64_t)ev >= m->tl->n_events)
		return ev < 0 ? m->tl->base_total :
		    idx_tl_total(m->tl, m->tl->n_events - 1);
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

uint64_t
tl_stack_total(const struct tl_model *m, int st, int64_t ev)
{
	return st == TL_STACK_SEGMENT ? tl_reserved_at(m, ev) :
	    tl_total_at(m, ev);
}

int
tl_live_at(int64_t alloc_ev, int64_t free_ev, int64_t at)
{
	return alloc_ev <= at && (free_ev < 0 || free_ev > at);
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
		if (tl_live_at(e.alloc_ev, e.free_ev, at))
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

/* ---- columns ------------------------------------------------------------- */

int
tl_plot_width(int w)
{
	return w > TL_YAXIS_W ? w - TL_YAXIS_W : 0;
}

int64_t
tl_time_of(const struct tl_model *m, int64_t ev)
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

int
tl_use_time(const struct tl_model *m, const struct tl_view *v)
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
	if (tl_use_time(m, v)) {
		int64_t t0 = tl_time_of(m, v->ev0);
		int64_t t1 = tl_time_of(m, v->ev1 - 1) + 1;
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
	if (tl_use_time(m, v)) {
		int64_t t0 = tl_time_of(m, v->ev0);
		int64_t t1 = tl_time_of(m, v->ev1 - 1) + 1;

		c = (int)((double)(tl_time_of(m, ev) - t0) * pw /
		    (double)(t1 - t0));
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

/* Folds events [lo, hi) into the running argmax *am (of the stacked
 * total) and maximum reserved *mr. */
static void
scan_events(const struct tl_model *m, int st, int64_t lo, int64_t hi,
    int64_t *am, uint64_t *mr)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t best = tl_stack_total(m, st, *am), t, r;
	int64_t i;

	/* lo .. hi - 1 are events of the trace: read them directly */
	for (i = lo; i < hi; i++) {
		r = idx_tl_reserved(tl, i);
		t = st == TL_STACK_SEGMENT ? r : idx_tl_total(tl, i);
		if (t > best) {
			best = t;
			*am = i;
		}
		if (r > *mr)
			*mr = r;
	}
}

void
tl_col_agg(const struct tl_model *m, int st, int64_t lo, int64_t hi,
    int64_t *ev, uint64_t *maxres)
{
	int seg = st == TL_STACK_SEGMENT;
	const uint64_t *arg = seg ? m->blk_argres : m->blk_argmax;
	const uint64_t *max = seg ? m->blk_maxres : m->blk_maxtot;
	int64_t am, b, b0, b1;
	uint64_t mr = 0, best;

	if (lo >= hi || m->tl->n_events == 0) {
		*ev = lo - 1;
		*maxres = tl_reserved_at(m, lo - 1);
		return;
	}
	am = lo;
	b0 = (lo + TL_LOD_BLOCK - 1) / TL_LOD_BLOCK;
	b1 = hi / TL_LOD_BLOCK;
	if (b0 >= b1) {
		scan_events(m, st, lo, hi, &am, &mr);
	} else {
		scan_events(m, st, lo, b0 * TL_LOD_BLOCK, &am, &mr);
		/* whole blocks: their maxima, read in order */
		best = tl_stack_total(m, st, am);
		for (b = b0; b < b1; b++) {
			if (max[b] > best) {
				best = max[b];
				am = (int64_t)arg[b];
			}
			if (m->blk_maxres[b] > mr)
				mr = m->blk_maxres[b];
		}
		scan_events(m, st, b1 * TL_LOD_BLOCK, hi, &am, &mr);
	}
	*ev = am;
	*maxres = mr;
}
