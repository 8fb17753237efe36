/*
 * Active Memory Timeline model: the drawn sets, LOD blocks, jump lists
 * and annotations of a device, totals and lookups, and the columns. The
 * stacking modes are in tl_modes.c, the highlighted set in tl_hilite.c,
 * the bands of a column in tl_bands.c, drawing in tl_draw.c and
 * tl_legend.c. Semantics and cost bounds in timeline.h.
 */
#include "config.h"

#include "render/timeline.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "render/frames.h"
#include "render/tl_int.h"
#include "render/tl_sample.h"
#include "util/search.h"
#include "util/thread.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* Elements from which tl_model_init() reads them on a second thread. */
#define TL_ELEMS_THREAD_MIN 65536

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

void
tl_layer_life(const struct tl_model *m, int st, uint64_t k,
    int64_t *alloc_ev, int64_t *free_ev)
{
	if (st == TL_STACK_SEGMENT) {
		*alloc_ev = m->segs.elems[k].alloc_ev;
		*free_ev = m->segs.elems[k].free_ev;
		return;
	}
	idx_tl_elem_life(m->tl, k, alloc_ev, free_ev);
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

/* Stacking order of an element: ghosts reversed, then pre-trace frees
 * reversed, then trace allocations in order (memory_viz phase 3). */
enum { CLS_GHOST, CLS_PRE, CLS_TRACE };

struct keyed {
	int cls;
	uint64_t ord;   /* rank among the ghosts or the pre-trace frees, or
			   the element */
	uint64_t elem;
	struct idx_elem e;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->cls != CLS_TRACE)
		return x->ord > y->ord ? -1 : x->ord < y->ord;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Min-heap on size (the k largest survive; ties keep the earlier). */
static int
heap_less(const struct keyed *x, const struct keyed *y)
{
	return x->e.size < y->e.size || (x->e.size == y->e.size &&
	    x->elem > y->elem);
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

/* The k largest elements of a layer, given one by one in order, with
 * what drawing them needs. */
struct picker {
	struct keyed *h;
	uint32_t k, n;
	uint64_t ng, np;   /* ghosts and pre-trace frees seen */
};

static void
pick_init(struct picker *p, uint32_t k)
{
	memset(p, 0, sizeof *p);
	p->h = xcalloc((size_t)k + 1, sizeof *p->h);
	p->k = k;
}

static void
pick_add(struct picker *p, uint64_t i, const struct idx_elem *e)
{
	struct keyed kd;
	uint32_t j;

	kd.elem = i;
	kd.e = *e;
	if (e->flags & IDX_ELEM_GHOST) {
		kd.cls = CLS_GHOST;
		kd.ord = p->ng++;
	} else if (e->flags & IDX_ELEM_PRE) {
		kd.cls = CLS_PRE;
		kd.ord = p->np++;
	} else {
		kd.cls = CLS_TRACE;
		kd.ord = i;
	}
	if (e->size == 0 || p->k == 0)
		return;
	if (p->n < p->k) {
		p->h[p->n++] = kd;
		if (p->n == p->k)
			for (j = p->k / 2 + 1; j-- > 0;)
				heap_sift(p->h, p->n, j);
	} else if (heap_less(&p->h[0], &kd)) {
		p->h[0] = kd;
		heap_sift(p->h, p->n, 0);
	}
}

/* The drawn set of a layer from what p picked. */
static void
pick_finish(struct tl_model *m, int layer, struct picker *p)
{
	struct tl_layer *L = &m->layer[layer];
	uint32_t n = p->n, j;

	qsort(p->h, n, sizeof *p->h, cmp_keyed);
	L->d = xcalloc((size_t)n + 1, sizeof *L->d);
	for (j = 0; j < n; j++) {
		const struct idx_elem *e = &p->h[j].e;
		uint32_t site = m->snap != NULL ?
		    frames_call_site(m->snap, e->stack) : e->stack;
		struct tl_drawn *d = &L->d[j];

		d->elem = p->h[j].elem;
		d->size = e->size;
		d->alloc_ev = e->alloc_ev;
		d->free_ev = e->free_ev;
		d->color_alloc = (uint8_t)(hash64(e->addr * 31 +
		    (uint64_t)e->alloc_ev) % UIC_NBANDS);
		d->color_site = (uint8_t)(hash64(site) % UIC_NBANDS);
		/* Neighbours in the stack differ, so bands stay apart. */
		if (j > 0 && d->color_alloc == L->d[j - 1].color_alloc)
			d->color_alloc = (d->color_alloc + 1) % UIC_NBANDS;
	}
	L->n = n;
	L->ok = 1;
	free(p->h);
	p->h = NULL;
}

void
tl_build_layer(struct tl_model *m, int layer)
{
	struct picker p;
	uint64_t i, n = layer_count(m, layer);

	pick_init(&p, m->max_drawn);
	for (i = 0; i < n; i++) {
		struct idx_elem e = layer_elem(m, layer, i);

		pick_add(&p, i, &e);
	}
	pick_finish(m, layer, &p);
}

/* ---- LOD blocks, jumps, annotations -------------------------------------- */

static void
level_alloc(struct tl_lod_level *L, uint64_t n)
{
	int k;

	L->n = n;
	for (k = 0; k < 2; k++) {
		L->arg[k] = xcalloc(n + 1, sizeof *L->arg[k]);
		L->max[k] = xcalloc(n + 1, sizeof *L->max[k]);
	}
}

static void
sub_alloc(struct tl_lod_sub *S, uint64_t n)
{
	int k;

	S->n = n;
	for (k = 0; k < 2; k++) {
		S->below[k] = xcalloc(n + 1, sizeof *S->below[k]);
		S->arg[k] = xcalloc(n + 1, 1);
	}
}

static void
sub_free(struct tl_lod_sub *S)
{
	int k;

	for (k = 0; k < 2; k++) {
		free(S->below[k]);
		free(S->arg[k]);
		free(S->big_at[k]);
		free(S->big[k]);
	}
	memset(S, 0, sizeof *S);
}

/* The runs of TL_LOD_SUB of run b of level 0 (cnt events), from their
 * maxima smax, below the run's: in 32 bits, and the few of 4 GiB and
 * more in a table of their own (a run without them used to be read
 * event by event at a column's edge, 64 decodes a column at 10 GB). */
static void
sub_below(struct tl_model *m, uint64_t b, uint64_t cnt,
    uint64_t smax[2][TL_LOD_SUBS])
{
	struct tl_lod_sub *S = &m->sub;
	uint64_t j, d, top, r;
	int k;

	for (k = 0; k < 2; k++) {
		top = m->lod[0].max[k][b];
		for (j = 0; j * TL_LOD_SUB < cnt; j++) {
			d = top - smax[k][j];
			r = b * TL_LOD_SUBS + j;
			S->below[k][r] = d < UINT32_MAX ? (uint32_t)d
			    : UINT32_MAX;
			if (d < UINT32_MAX)
				continue;
			if (S->n_big[k] == S->cap_big[k]) {
				size_t cap = S->cap_big[k];

				S->big_at[k] = xgrow(S->big_at[k], &cap,
				    S->n_big[k] + 1, sizeof *S->big_at[k]);
				S->big[k] = xgrow(S->big[k], &S->cap_big[k],
				    S->n_big[k] + 1, sizeof *S->big[k]);
			}
			S->big_at[k][S->n_big[k]] = (int64_t)r;
			S->big[k][S->n_big[k]++] = d;
		}
	}
}

/* How far sub-run r's maximum of series k is below its run's. */
static uint64_t
sub_dist(const struct tl_lod_sub *S, int k, uint64_t r)
{
	uint64_t i;

	if (S->below[k][r] != UINT32_MAX)
		return S->below[k][r];
	/* appended in order: the entry of r is the last at or before it */
	i = sv_count_le_i64(S->big_at[k], S->n_big[k], (int64_t)r);
	return i > 0 && S->big_at[k][i - 1] == (int64_t)r ? S->big[k][i - 1]
	    : 0;
}

/* What the pass over the events at open gathers besides the maxima. */
struct ev_pass {
	size_t cap[3];          /* of the jump lists */
	size_t cap_seg;         /* of seg_evs */
	int time_ok;
	int64_t prev;
	/* the device's annotations by time, placed on the events as the
	 * pass reaches their time (ev[], by annotation) */
	uint32_t *by_time[2];   /* START, END */
	uint32_t n[2], next[2];
	int64_t next_t[2];      /* the time of each next one (INT64_MAX:
				   none left) */
	int64_t *ev;
	int64_t *run_time;      /* first time of each run of level 0 */
};

static const struct snap_annotation *sort_ann;

static int
cmp_ann_time(const void *a, const void *b)
{
	int64_t x = sort_ann[*(const uint32_t *)a].time_us;
	int64_t y = sort_ann[*(const uint32_t *)b].time_us;

	return x < y ? -1 : x > y;
}

/* The times of the next START and END the pass places. */
static void
ev_pass_next(const struct tl_model *m, struct ev_pass *p)
{
	int k;

	for (k = 0; k < 2; k++)
		p->next_t[k] = p->next[k] < p->n[k] ?
		    m->snap->annotations[p->by_time[k][p->next[k]]].time_us :
		    INT64_MAX;
}

static void
ev_pass_init(struct tl_model *m, struct ev_pass *p)
{
	const struct snapshot *s = m->snap;
	uint32_t i;
	int k;

	memset(p, 0, sizeof *p);
	p->time_ok = m->trace != NULL && snap_trace_has_time(m->trace) &&
	    m->tl->n_events > 0;
	if (s == NULL || !p->time_ok)
		return;
	p->run_time = xcalloc((m->tl->n_events + TL_LOD_BLOCK - 1) /
	    TL_LOD_BLOCK + 1, sizeof *p->run_time);
	p->ev = xcalloc((size_t)s->n_annotations + 1, sizeof *p->ev);
	for (k = 0; k < 2; k++)
		p->by_time[k] = xcalloc((size_t)s->n_annotations + 1,
		    sizeof *p->by_time[k]);
	for (i = 0; i < s->n_annotations; i++) {
		const struct snap_annotation *a = &s->annotations[i];

		if (a->device != m->tl->device || a->stage == SNAP_STAGE_OTHER)
			continue;
		k = a->stage == SNAP_STAGE_START ? 0 : 1;
		p->by_time[k][p->n[k]++] = i;
	}
	sort_ann = s->annotations;
	for (k = 0; k < 2; k++)
		qsort(p->by_time[k], p->n[k], sizeof *p->by_time[k],
		    cmp_ann_time);
	ev_pass_next(m, p);
}

/* Event i, with time t: a time axis needs times that never go back, and
 * within +-2^62 us so that spans and "+ 1" cannot overflow on a crafted
 * file. An annotation START goes at the first event at or after its
 * time, an END at the last at or before it (as steps.h maps them). */
static void
ev_pass_time(const struct tl_model *m, struct ev_pass *p, uint64_t i,
    int64_t t)
{
	const struct snap_annotation *an = m->snap != NULL ?
	    m->snap->annotations : NULL;
	uint32_t *st = p->by_time[0], *en = p->by_time[1];

	if (t == SNAP_NO_TIME || t < -TL_TIME_LIMIT || t >= TL_TIME_LIMIT ||
	    (i > 0 && t < p->prev)) {
		p->time_ok = 0;
		return;
	}
	p->prev = t;
	/* most events place no annotation: two compares */
	if (t < p->next_t[0] && t <= p->next_t[1])
		return;
	while (p->next[0] < p->n[0] && an[st[p->next[0]]].time_us <= t)
		p->ev[st[p->next[0]++]] = (int64_t)i;
	while (p->next[1] < p->n[1] && an[en[p->next[1]]].time_us < t)
		p->ev[en[p->next[1]++]] = i > 0 ? (int64_t)i - 1 : 0;
	ev_pass_next(m, p);
}

static void
push_jump(struct tl_model *m, struct ev_pass *p, int k, uint64_t i)
{
	XGROW(m->jumps[k], p->cap[k], m->n_jumps[k] + 1);
	m->jumps[k][m->n_jumps[k]++] = (int64_t)i;
}

static void
push_seg(struct tl_model *m, struct ev_pass *p, uint64_t i)
{
	XGROW(m->seg_evs, p->cap_seg, m->n_seg_evs + 1);
	m->seg_evs[m->n_seg_evs++] = (int64_t)i;
}

/* One pass over the events, in order: the maxima of level 0 (then level
 * 1 from them), the jump lists, whether the times make an axis, and
 * where the annotations fall. */
static void
scan_events(struct tl_model *m, struct ev_pass *p)
{
	const struct idx_timeline *tl = m->tl;
	const struct snap_trace *t = m->trace;
	struct tl_lod_level *L0 = &m->lod[0], *L1 = &m->lod[1];
	uint64_t b, i, j, s, v[2], smax[2][TL_LOD_SUBS];
	unsigned act;
	int k;

	level_alloc(L0, (tl->n_events + TL_LOD_BLOCK - 1) / TL_LOD_BLOCK);
	level_alloc(L1, (L0->n + TL_LOD_FAN - 1) / TL_LOD_FAN);
	sub_alloc(&m->sub, (tl->n_events + TL_LOD_SUB - 1) / TL_LOD_SUB);
	for (b = 0; b < L0->n; b++) {
		uint64_t lo = b * TL_LOD_BLOCK, hi = lo + TL_LOD_BLOCK;

		if (hi > tl->n_events)
			hi = tl->n_events;
		/* each run of TL_LOD_SUB with its maxima in locals, then
		 * the block's from the runs' (the first event of the
		 * highest value either way): ten times the events of a
		 * 1 GB file go through this loop at 10 GB */
		for (s = lo, j = 0; s < hi; s += TL_LOD_SUB, j++) {
			uint64_t e = s + TL_LOD_SUB < hi ? s + TL_LOD_SUB : hi;
			unsigned a[2] = {0, 0};

			v[TL_SER_TOTAL] = idx_tl_total(tl, (int64_t)s);
			v[TL_SER_RESERVED] = idx_tl_reserved(tl, (int64_t)s);
			for (i = s + 1; i < e; i++) {
				uint64_t x = idx_tl_total(tl, (int64_t)i);
				uint64_t y = idx_tl_reserved(tl, (int64_t)i);

				if (x > v[TL_SER_TOTAL]) {
					v[TL_SER_TOTAL] = x;
					a[TL_SER_TOTAL] = (unsigned)(i - s);
				}
				if (y > v[TL_SER_RESERVED]) {
					v[TL_SER_RESERVED] = y;
					a[TL_SER_RESERVED] = (unsigned)(i - s);
				}
			}
			for (k = 0; k < 2; k++) {
				smax[k][j] = v[k];
				m->sub.arg[k][s / TL_LOD_SUB] = (uint8_t)a[k];
				if (s == lo || v[k] > L0->max[k][b]) {
					L0->max[k][b] = v[k];
					L0->arg[k][b] = s + a[k];
				}
			}
		}
		for (i = lo; i < hi && t != NULL; i++) {
			act = snap_ev_action(t, i);
			if (act == SNAP_OOM)
				push_jump(m, p, TL_JUMP_OOM, i);
			else if (act == SNAP_SEGMENT_ALLOC ||
			    act == SNAP_SEGMENT_MAP) {
				push_jump(m, p, TL_JUMP_SEGALLOC, i);
				push_seg(m, p, i);
			} else if (act == SNAP_SEGMENT_FREE ||
			    act == SNAP_SEGMENT_UNMAP)
				push_seg(m, p, i);
			else if (act == SNAP_SNAPSHOT)
				push_jump(m, p, TL_JUMP_SNAPSHOT, i);
			if (!p->time_ok)
				continue;
			ev_pass_time(m, p, i, snap_ev_time(t, i));
			if (i == lo)
				p->run_time[b] = p->prev;
		}
		sub_below(m, b, hi - lo, smax);
	}
	for (b = 0; b < L0->n; b++)
		for (k = 0; k < 2; k++)
			if (b % TL_LOD_FAN == 0 ||
			    L0->max[k][b] > L1->max[k][b / TL_LOD_FAN]) {
				L1->max[k][b / TL_LOD_FAN] = L0->max[k][b];
				L1->arg[k][b / TL_LOD_FAN] = L0->arg[k][b];
			}
	m->time_ok = p->time_ok;
	if (m->time_ok) {
		m->run_time = p->run_time;
		p->run_time = NULL;
	}
	free(p->run_time);
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

/* The device's annotations at the events the pass placed them (after
 * the last event: the last), in the file's order, then sorted. Needs the
 * time axis. */
static void
build_annots(struct tl_model *m, struct ev_pass *p)
{
	const struct snapshot *s = m->snap;
	int64_t n = (int64_t)m->tl->n_events;
	size_t cap = 0;
	uint32_t i;
	int k;

	for (k = 0; k < 2 && p->ev != NULL; k++)
		for (; p->next[k] < p->n[k]; p->next[k]++)
			p->ev[p->by_time[k][p->next[k]]] = n - 1;
	for (i = 0; m->time_ok && i < s->n_annotations; i++) {
		const struct snap_annotation *a = &s->annotations[i];
		struct tl_annot *o;

		if (a->device != m->tl->device || a->stage == SNAP_STAGE_OTHER)
			continue;
		XGROW(m->annots, cap, m->n_annots + 1);
		o = &m->annots[m->n_annots++];
		o->ev = p->ev[i];
		o->time_us = a->time_us;
		o->name = a->name;
		o->stage = a->stage;
	}
	if (m->n_annots > 1)
		qsort(m->annots, m->n_annots, sizeof *m->annots, cmp_annot);
	for (k = 0; k < 2; k++)
		free(p->by_time[k]);
	free(p->ev);
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

static int
cmp_addr_elem(const void *a, const void *b)
{
	const struct tl_addr_elem *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->elem < y->elem ? -1 : x->elem > y->elem;
}

static const uint64_t *sort_addr;

static int
cmp_run(const void *a, const void *b)
{
	uint64_t x = sort_addr[*(const uint32_t *)a];
	uint64_t y = sort_addr[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

/* Building struct tl_addrs: each address gets a run, numbered as first
 * seen; then the runs are put in address order and the elements dealt
 * into them in creation order. */
struct addrs_build {
	struct u64map runs;
	uint64_t *first;        /* address of each run */
	uint32_t *cnt;          /* elements of each run */
	size_t cap, cap_pre;
	uint32_t *run, *fr;     /* per element: its run, its free event */
};

static void
addrs_begin(struct tl_model *m, struct addrs_build *ab)
{
	uint64_t n = m->tl->n_elems;

	memset(ab, 0, sizeof *ab);
	memset(&m->addrs, 0, sizeof m->addrs);
	if (n >= UINT32_MAX || m->tl->n_events >= UINT32_MAX)
		return; /* too many for 32 bits: tl_model_find_elem scans */
	u64map_init(&ab->runs);
	ab->run = xcalloc(n + 1, sizeof *ab->run);
	ab->fr = xcalloc(n + 1, sizeof *ab->fr);
}

static void
addrs_add(struct tl_model *m, struct addrs_build *ab, uint64_t k,
    const struct idx_elem *e)
{
	struct tl_addrs *A = &m->addrs;
	uint64_t r;

	if (ab->run == NULL)
		return;
	if (!u64map_get(&ab->runs, e->addr, &r)) {
		r = A->n_addr++;
		u64map_put(&ab->runs, e->addr, r);
		if (r + 1 > ab->cap) {
			ab->first = xgrow(ab->first, &ab->cap, r + 1,
			    sizeof *ab->first);
			ab->cnt = xreallocarray(ab->cnt, ab->cap,
			    sizeof *ab->cnt);
		}
		ab->first[r] = e->addr;
		ab->cnt[r] = 0;
	}
	ab->run[k] = (uint32_t)r;
	ab->cnt[r]++;
	ab->fr[k] = e->free_ev < 0 ? UINT32_MAX : (uint32_t)e->free_ev;
	if (e->flags & (IDX_ELEM_PRE | IDX_ELEM_GHOST)) {
		XGROW(A->pre, ab->cap_pre, A->n_pre + 1);
		A->pre[A->n_pre].addr = e->addr;
		A->pre[A->n_pre++].elem = k;
	}
}

static void
addrs_finish(struct tl_model *m, struct addrs_build *ab)
{
	struct tl_addrs *A = &m->addrs;
	uint64_t n = m->tl->n_elems, k, r;
	uint32_t *ord, j;

	if (ab->run == NULL)
		return;
	u64map_destroy(&ab->runs);
	/* runs in address order: ord[i] is the i-th */
	ord = xcalloc(A->n_addr + 1, sizeof *ord);
	for (r = 0; r < A->n_addr; r++)
		ord[r] = (uint32_t)r;
	sort_addr = ab->first;
	qsort(ord, A->n_addr, sizeof *ord, cmp_run);
	A->addr = xcalloc(A->n_addr + 1, sizeof *A->addr);
	A->off = xcalloc(A->n_addr + 1, sizeof *A->off);
	for (r = 0; r < A->n_addr; r++) {
		A->addr[r] = ab->first[ord[r]];
		A->off[r + 1] = A->off[r] + ab->cnt[ord[r]];
	}
	/* deal the elements into their runs, cnt[] now the fill */
	for (r = 0; r < A->n_addr; r++)
		ab->cnt[ord[r]] = A->off[r];
	A->elem = xcalloc(n + 1, sizeof *A->elem);
	A->free_max = xcalloc(n + 1, sizeof *A->free_max);
	for (k = 0; k < n; k++) {
		j = ab->cnt[ab->run[k]]++;
		A->elem[j] = (uint32_t)k;
		A->free_max[j] = ab->fr[k];
	}
	for (r = 0; r < A->n_addr; r++)
		for (j = A->off[r] + 1; j < A->off[r + 1]; j++)
			if (A->free_max[j - 1] > A->free_max[j])
				A->free_max[j] = A->free_max[j - 1];
	if (A->n_pre > 1) /* qsort takes no NULL, even for no element */
		qsort(A->pre, A->n_pre, sizeof *A->pre, cmp_addr_elem);
	free(ord);
	free(ab->cnt);
	free(ab->first);
	free(ab->fr);
	free(ab->run);
	A->ok = 1;
}

/* One pass over the elements, in order: the drawn set of allocations
 * and the elements by address. */
static void
scan_elems(struct tl_model *m)
{
	struct addrs_build ab;
	struct picker p;
	uint64_t k;

	pick_init(&p, m->max_drawn);
	addrs_begin(m, &ab);
	for (k = 0; k < m->tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(m->tl, k);

		pick_add(&p, k, &e);
		addrs_add(m, &ab, k, &e);
	}
	pick_finish(m, TL_LAYER_ALLOC, &p);
	addrs_finish(m, &ab);
}

static void
addrs_destroy(struct tl_addrs *A)
{
	free(A->addr);
	free(A->off);
	free(A->elem);
	free(A->free_max);
	free(A->pre);
	memset(A, 0, sizeof *A);
}

/* The element pass on a thread of its own, beside the event pass: the
 * two write different parts of the model and only read the timeline,
 * each through its own thread's cache of decoded stripes (freed when the
 * thread ends). */
static void *
scan_elems_run(void *arg)
{
	scan_elems(arg);
	return NULL;
}

void
tl_model_init(struct tl_model *m, const struct snapshot *s,
    const struct idx_timeline *tl, uint32_t max_drawn)
{
	struct ev_pass p;
	pthread_t th;
	int threaded;

	memset(m, 0, sizeof *m);
	m->snap = s;
	m->tl = tl;
	m->max_drawn = max_drawn;
	m->trace = s != NULL ? snap_trace_of(s, tl->device) : NULL;
	if (m->trace != NULL && m->trace->n != tl->n_events)
		m->trace = NULL;
	m->cols = xcalloc(2, sizeof *m->cols);
	/* two passes that are each a read of every stripe at 10 GB: no
	 * thread for a trace that takes a millisecond */
	threaded = tl->n_elems >= TL_ELEMS_THREAD_MIN &&
	    sv_thread_start(&th, scan_elems_run, m) == 0;
	if (!threaded)
		scan_elems(m);
	ev_pass_init(m, &p);
	scan_events(m, &p);
	if (threaded)
		pthread_join(th, NULL);
	build_annots(m, &p);
	m->groups_ok[TL_STACK_ALLOC] = 1;
}

void
tl_model_destroy(struct tl_model *m)
{
	int k;

	for (k = 0; k < 2; k++)
		free(m->layer[k].d);
	for (k = 0; k < 4; k++) {
		free(m->lod[k / 2].arg[k % 2]);
		free(m->lod[k / 2].max[k % 2]);
	}
	sub_free(&m->sub);
	free(m->run_time);
	for (k = 0; m->cols != NULL && k < 2; k++) {
		free(m->cols[k].lo);
		free(m->cols[k].ev);
		free(m->cols[k].top);
		free(m->cols[k].res);
	}
	free(m->cols);
	addrs_destroy(&m->addrs);
	for (k = 0; k < 3; k++)
		free(m->jumps[k]);
	free(m->seg_evs);
	free(m->annots);
	tl_segs_destroy(&m->segs);
	for (k = 0; k < TL_STACK_COUNT; k++) {
		tl_sample_drop(m, k);
		tl_groups_destroy(&m->groups[k]);
	}
	an_cat_probe_free(m->cat_probe);
	tl_sample_live_drop(m);
	if (m->sites_ok > 0)
		an_sites_destroy(&m->sites);
	free(m->skeys);
	free(m->seg_by_addr);
	free(m->seg_memo);
	for (k = 0; k < (int)m->n_pkeys && m->penv != NULL; k++) {
		free(m->penv[k].ev);
		free(m->penv[k].res);
	}
	free(m->penv);
	free(m->pkeys);
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
	return idx_alive_after(alloc_ev, free_ev, at);
}

/* The first element (lowest id) with address addr alive after event at,
 * by reading every element: for a model without struct tl_addrs. */
static uint64_t
find_elem_scan(const struct tl_model *m, uint64_t addr, int64_t at)
{
	uint64_t k;

	for (k = 0; k < m->tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(m->tl, k);

		if (e.addr == addr && tl_live_at(e.alloc_ev, e.free_ev, at))
			return k;
	}
	return TL_NO_ELEM;
}

struct run_bound {
	const struct tl_addrs *A;
	uint64_t x, y;
};

static int
addr_below(const void *ctx, uint64_t i)
{
	const struct run_bound *b = ctx;

	return b->A->addr[i] < b->x;
}

static int
elem_below(const void *ctx, uint64_t i)
{
	const struct run_bound *b = ctx;

	return b->A->elem[i] < b->x;
}

static int
freed_by(const void *ctx, uint64_t i)
{
	const struct run_bound *b = ctx;

	return b->A->free_max[i] <= b->x;
}

/* (address, element) of the elements alive before the trace below
 * (x, y). */
static int
pre_below(const void *ctx, uint64_t i)
{
	const struct run_bound *b = ctx;
	const struct tl_addr_elem *e = &b->A->pre[i];

	return e->addr < b->x || (e->addr == b->x && e->elem < b->y);
}

/*
 * The elements with address addr, in creation order, are: those created
 * by events up to at (the first c = idx_tl_created(at) elements; alive
 * when not freed by at, except a free without alloc, already freed),
 * then those created later (alive only when allocated before the trace:
 * frees without alloc, ghosts). So the first alive is the first of the
 * run before c whose latest free so far is past at, else the first
 * element alive before the trace with an id of at least c.
 */
uint64_t
tl_model_find_elem(const struct tl_model *m, uint64_t addr, int64_t at)
{
	const struct tl_addrs *A = &m->addrs;
	struct run_bound b = {A, addr, 0};
	uint64_t i, p, q, c;

	if (!A->ok)
		return find_elem_scan(m, addr, at);
	if (at < -1)
		return TL_NO_ELEM; /* before the state before the trace */
	/* nothing happens after the last event */
	if (at >= (int64_t)m->tl->n_events)
		at = (int64_t)m->tl->n_events - 1;
	c = idx_tl_created(m->tl, at);
	i = sv_partition(0, A->n_addr, addr_below, &b);
	if (i < A->n_addr && A->addr[i] == addr && at >= 0) {
		b.x = c;
		p = sv_partition(A->off[i], A->off[i + 1], elem_below, &b);
		b.x = (uint64_t)at;
		q = sv_partition(A->off[i], p, freed_by, &b);
		if (q < p)
			return A->elem[q];
	}
	b.x = addr;
	b.y = c;
	i = sv_partition(0, A->n_pre, pre_below, &b);
	return i < A->n_pre && A->pre[i].addr == addr ? A->pre[i].elem :
	    TL_NO_ELEM;
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

struct time_bound {
	const int64_t *run_time;
	int64_t t;
};

static int
run_before(const void *ctx, uint64_t r)
{
	const struct time_bound *b = ctx;

	return b->run_time[r] < b->t;
}

/* First event with time >= t in [lo, hi) (0 <= lo <= hi). The times
 * never go back: that is the first of the whole trace, held to [lo,
 * hi], and it lies in the run before the first run starting at or after
 * t (the runs' first times are in memory), so only that run is read. */
static int64_t
time_lower_bound(const struct tl_model *m, int64_t lo, int64_t hi,
    int64_t t)
{
	struct time_bound b = {m->run_time, t};
	uint64_t r, n = m->tl->n_events;
	int64_t e;

	if (m->run_time == NULL)
		return (int64_t)snap_ev_at_time(m->trace, (uint64_t)lo,
		    (uint64_t)hi, t);
	r = sv_partition(0, m->lod[0].n, run_before, &b);
	if (r == 0)
		e = 0;
	else
		e = (int64_t)snap_ev_at_time(m->trace, (r - 1) * TL_LOD_BLOCK,
		    r * TL_LOD_BLOCK < n ? r * TL_LOD_BLOCK : n, t);
	return e < lo ? lo : e > hi ? hi : e;
}

int
tl_use_time(const struct tl_model *m, const struct tl_view *v)
{
	return v->time_axis && m->time_ok;
}

/* Columns of at least 16 runs of the pyramid's (TL_LOD_BLOCK events)
 * start on one, and columns of at least 16 sub-runs (TL_LOD_SUB) on one
 * of those: their maxima then come whole from the pyramid, where a
 * ragged edge is read event by event, a stripe decoded for each (at 10
 * GB, 47 ms a zoom key at 200 columns). An edge moves by less than a
 * sixteenth of a column. */
static int64_t
col_align(int64_t per_col)
{
	return per_col >= 16 * TL_LOD_BLOCK ? TL_LOD_BLOCK :
	    per_col >= 16 * TL_LOD_SUB ? TL_LOD_SUB : 1;
}

int64_t
tl_col_event(const struct tl_model *m, const struct tl_view *v, int pw,
    int col)
{
	int64_t span = v->ev1 - v->ev0, e, a;

	if (pw <= 0)
		return v->ev0;
	if (tl_use_time(m, v)) {
		int64_t t0 = tl_time_of(m, v->ev0);
		int64_t t1 = tl_time_of(m, v->ev1 - 1) + 1;
		int64_t t = t0 + (int64_t)((double)(t1 - t0) * col / pw);

		e = time_lower_bound(m, v->ev0, v->ev1, t);
	} else {
		e = v->ev0 + (int64_t)((double)span * col / pw);
	}
	a = col_align(span / pw);
	if (col > 0 && col < pw && e - e % a > v->ev0)
		e -= e % a;
	return e;
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

/* ---- column aggregates --------------------------------------------------- */

/* A first maximum: the highest value v, first reached at event at (-2:
 * nothing yet). Parts are added in event order, so that equal values
 * keep the earlier event. */
struct fmax {
	uint64_t v;
	int64_t at;
};

static void
fmax_add(struct fmax *f, uint64_t v, int64_t at)
{
	if (f->at == -2 || v > f->v) {
		f->v = v;
		f->at = at;
	}
}

static void
fmax_merge(struct fmax *f, const struct fmax *g)
{
	if (g->at != -2)
		fmax_add(f, g->v, g->at);
}

/* Series k (TL_SER_*) over events [lo, hi), read one by one. */
static struct fmax
scan_series(const struct tl_model *m, int k, int64_t lo, int64_t hi)
{
	struct fmax f = {0, -2};
	int64_t i;

	for (i = lo; i < hi; i++)
		fmax_add(&f, k == TL_SER_TOTAL ? idx_tl_total(m->tl, i) :
		    idx_tl_reserved(m->tl, i), i);
	return f;
}

/* Series k over the whole runs [r0, r1) of level 0, by level 1 where a
 * whole run of it fits. */
static struct fmax
runs_series(const struct tl_model *m, int k, uint64_t r0, uint64_t r1)
{
	const struct tl_lod_level *L0 = &m->lod[0], *L1 = &m->lod[1];
	struct fmax f = {0, -2};
	uint64_t r = r0;

	while (r < r1) {
		if (r % TL_LOD_FAN == 0 && r + TL_LOD_FAN <= r1) {
			fmax_add(&f, L1->max[k][r / TL_LOD_FAN],
			    (int64_t)L1->arg[k][r / TL_LOD_FAN]);
			r += TL_LOD_FAN;
		} else {
			fmax_add(&f, L0->max[k][r], (int64_t)L0->arg[k][r]);
			r++;
		}
	}
	return f;
}

/* The levels a range descends through: runs of TL_LOD_BLOCK events (and
 * TL_LOD_FAN of those), runs of TL_LOD_SUB inside one of those, events. */
enum { LV_EVENTS, LV_SUBS, LV_RUNS };

/* The maximum of run r of level lv of series k. */
static struct fmax
run_max(const struct tl_model *m, int k, int lv, uint64_t r)
{
	const struct tl_lod_level *L0 = &m->lod[0];
	struct fmax f;

	if (lv == LV_RUNS) {
		f.v = L0->max[k][r];
		f.at = (int64_t)L0->arg[k][r];
	} else {
		f.v = L0->max[k][r / TL_LOD_SUBS] - sub_dist(&m->sub, k, r);
		f.at = (int64_t)(r * TL_LOD_SUB + m->sub.arg[k][r]);
	}
	return f;
}

static struct fmax
whole_runs(const struct tl_model *m, int k, int lv, uint64_t r0,
    uint64_t r1)
{
	struct fmax f = {0, -2}, g;

	if (lv == LV_RUNS)
		return runs_series(m, k, r0, r1);
	for (; r0 < r1; r0++) {
		g = run_max(m, k, lv, r0);
		fmax_merge(&f, &g);
	}
	return f;
}

/*
 * The first maximum of series k over events [lo, hi) (lo < hi) at level
 * lv: the part of a run at its left end, its whole runs, the part of a
 * run at its right end. A part holding its run's maximum has it; a part
 * whose run has its maximum outside it is looked at one level down only
 * when that maximum could win the range: on the left when it is at least
 * what the rest reaches (the left wins ties), on the right when it is
 * above what comes before it. A part of a run of TL_LOD_BLOCK lies in
 * one run, so one level down it has runs of TL_LOD_SUB or, where that
 * run has none, events.
 */
static struct fmax
range_series(const struct tl_model *m, int k, int lv, int64_t lo,
    int64_t hi)
{
	int64_t n = (int64_t)m->tl->n_events;
	int64_t B = lv == LV_RUNS ? TL_LOD_BLOCK : TL_LOD_SUB, lhi = 0, rlo = 0;
	struct fmax l = {0, -2}, r = {0, -2}, mid, rest, f = {0, -2};
	uint64_t r0, r1;
	int lx = 1, rx = 1;

	if (lv == LV_EVENTS)
		return scan_series(m, k, lo, hi);
	r0 = (uint64_t)(lo / B);
	r1 = (uint64_t)((hi - 1) / B) + 1;
	if (lo % B != 0) {
		l = run_max(m, k, lv, r0++);
		lhi = (int64_t)r0 * B < hi ? (int64_t)r0 * B : hi;
		lx = l.at >= lo && l.at < lhi;
	}
	if (hi % B != 0 && hi != n && r1 > r0) {
		r = run_max(m, k, lv, --r1);
		rlo = (int64_t)r1 * B;
		rx = r.at >= rlo && r.at < hi;
	}
	mid = whole_runs(m, k, lv, r0, r1);
	if (!lx) {
		rest = mid;
		if (rx)
			fmax_merge(&rest, &r);
		if (rest.at != -2 && l.v < rest.v)
			l.at = -2; /* below the rest: cannot win */
		else
			l = range_series(m, k, lv - 1, lo, lhi);
	}
	if (!rx) {
		rest = l;
		fmax_merge(&rest, &mid);
		if (rest.at != -2 && r.v <= rest.v)
			r.at = -2;
		else
			r = range_series(m, k, lv - 1, rlo, hi);
	}
	fmax_merge(&f, &l);
	fmax_merge(&f, &mid);
	fmax_merge(&f, &r);
	return f;
}

void
tl_col_agg(const struct tl_model *m, int st, int64_t lo, int64_t hi,
    int64_t *ev, uint64_t *top, uint64_t *maxres)
{
	int64_t n = (int64_t)m->tl->n_events;
	int ks = st == TL_STACK_SEGMENT ? TL_SER_RESERVED : TL_SER_TOTAL;
	struct fmax fs, fr;

	if (hi > n)
		hi = n;
	if (lo < 0)
		lo = 0;
	if (lo >= hi || n == 0) {
		*ev = lo - 1;
		*top = tl_stack_total(m, st, lo - 1);
		*maxres = tl_reserved_at(m, lo - 1);
		return;
	}
	fs = range_series(m, ks, LV_RUNS, lo, hi);
	fr = ks == TL_SER_RESERVED ? fs :
	    range_series(m, TL_SER_RESERVED, LV_RUNS, lo, hi);
	*ev = fs.at;
	*top = fs.v;
	*maxres = fr.v;
}

/* The aggregates of every column of v at width pw into c. */
static void
columns_build(const struct tl_model *m, const struct tl_view *v, int pw,
    struct tl_cols *c)
{
	uint64_t ymax = 0, best = 0;
	int i, use_time = tl_use_time(m, v);

	if (pw > c->cap) {
		c->lo = xreallocarray(c->lo, (size_t)pw + 1, sizeof *c->lo);
		c->ev = xreallocarray(c->ev, (size_t)pw, sizeof *c->ev);
		c->top = xreallocarray(c->top, (size_t)pw, sizeof *c->top);
		c->res = xreallocarray(c->res, (size_t)pw, sizeof *c->res);
		c->cap = pw;
	}
	for (i = 0; i < pw; i++)
		c->lo[i] = tl_col_event(m, v, pw, i);
	c->lo[pw] = v->ev1;
	c->peak_ev = v->ev0;
	for (i = 0; i < pw; i++) {
		int64_t lo = c->lo[i], hi = c->lo[i + 1];

		if (hi <= lo && lo < v->ev1 && !use_time)
			hi = lo + 1;
		tl_col_agg(m, v->stack, lo, hi, &c->ev[i], &c->top[i],
		    &c->res[i]);
		if (c->res[i] > ymax)
			ymax = c->res[i];
		if (c->top[i] > ymax)
			ymax = c->top[i];
		if (i == 0 || c->top[i] > best) {
			best = c->top[i];
			c->peak_ev = c->ev[i];
		}
	}
	c->yfit = ymax > 0 ? ymax : 1;
	c->ev0 = v->ev0;
	c->ev1 = v->ev1;
	c->pw = pw;
	c->seg = v->stack == TL_STACK_SEGMENT;
	c->time = use_time;
	c->valid = 1;
	c->n_built++;
}

const struct tl_cols *
tl_columns(const struct tl_model *m, const struct tl_view *v, int pw)
{
	int seg = v->stack == TL_STACK_SEGMENT;
	struct tl_cols *c = &m->cols[seg];

	if (!c->valid || c->ev0 != v->ev0 || c->ev1 != v->ev1 ||
	    c->pw != pw || c->seg != seg || c->time != tl_use_time(m, v))
		columns_build(m, v, pw, c);
	return c;
}

int
tl_drawn_events(const struct tl_model *m, const struct tl_view *v, int w,
    int64_t *ev, int max)
{
	const struct tl_cols *c;
	int pw = tl_plot_width(w), i, n = 0;

	if (pw < 1 || v->ev1 <= v->ev0 || max < 1)
		return 0;
	c = tl_columns(m, v, pw);
	ev[n++] = c->peak_ev;
	for (i = 0; i < pw && n < max; i++)
		ev[n++] = c->ev[i];
	return n;
}

void
tl_visible_range(const struct tl_model *m, const struct tl_view *v, int w,
    uint64_t *lo, uint64_t *hi)
{
	const struct tl_cols *c;
	int pw = tl_plot_width(w), i;

	*lo = *hi = 0;
	if (pw < 1 || v->ev1 <= v->ev0)
		return;
	c = tl_columns(m, v, pw);
	*lo = UINT64_MAX;
	for (i = 0; i < pw; i++) {
		if (c->top[i] < *lo)
			*lo = c->top[i];
		if (c->top[i] > *hi)
			*hi = c->top[i];
		if (c->res[i] > *hi)
			*hi = c->res[i];
	}
}
