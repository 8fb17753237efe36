/*
 * Fragmentation report: state at N, every segment_alloc with its gap and
 * trigger, hints. See frag.h.
 */
#include "config.h"

#include "analysis/frag.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "util/u64map.h"
#include "util/units.h"
#include "util/xalloc.h"

/* Events scanned after a segment_alloc for the alloc it was made for. */
#define REQUEST_SCAN 256

static unsigned
bucket_of(uint64_t size)
{
	unsigned k = 0;

	while (size > 1 && k + 1 < AN_FRAG_BUCKETS) {
		size >>= 1;
		k++;
	}
	return k;
}

static int
cmp_seg(const void *a, const void *b)
{
	const struct an_frag_seg *x = a, *y = b;

	if (x->free_bytes != y->free_bytes)
		return x->free_bytes > y->free_bytes ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

#define PAGE (2ull << 20) /* expandable segments map 2 MiB pages */

static int
default_pool(const struct replay_segment *sg)
{
	return sg->pool_id[0] == 0 && sg->pool_id[1] == 0;
}

/* Bytes of the whole 2 MiB pages inside [addr, addr + size). */
static uint64_t
pages_inside(uint64_t addr, uint64_t size)
{
	uint64_t lo, hi;

	if (addr > UINT64_MAX - PAGE || size > UINT64_MAX - addr)
		return 0;
	lo = (addr + PAGE - 1) / PAGE * PAGE;
	hi = (addr + size) / PAGE * PAGE;
	return hi > lo ? hi - lo : 0;
}

void
an_frag_state_of(const struct replay_state *rs, struct an_frag_state *st)
{
	struct replay_totals t;
	uint32_t i, b;

	free(st->segs);
	memset(st, 0, sizeof *st);
	/* the totals are the replay's (replay_totals), as stats --at N */
	replay_totals(rs, &t);
	st->at = rs->at;
	st->reserved = t.reserved;
	st->allocated = t.allocated;
	st->requested = t.alloc_requested;
	st->internal = t.free_internal;
	st->external = t.free_external;
	st->pending = t.pending;
	st->largest_free = t.largest_free;
	st->segs = xcalloc((size_t)rs->n_segments + 1, sizeof *st->segs);
	st->n_segs = rs->n_segments;
	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];
		struct an_frag_seg *fs = &st->segs[i];
		struct an_frag_pool *pl = &st->pools[sg->is_large ? 1 : 0];

		fs->addr = sg->addr;
		fs->size = sg->size;
		fs->stream = sg->stream;
		fs->is_expandable = sg->is_expandable;
		pl->segments++;
		pl->reserved += sg->size;
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		     b < rs->n_blocks; b++) {
			const struct replay_block *bl = &rs->blocks[b];

			if (bl->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				fs->allocated += bl->size;
			if (bl->state == SNAP_BLOCK_ACTIVE_ALLOCATED ||
			    bl->state == SNAP_BLOCK_ACTIVE_PENDING_FREE)
				continue;
			/* a free (inactive) block */
			fs->free_bytes += bl->size;
			fs->gaps++;
			pl->free_bytes += bl->size;
			pl->free_blocks++;
			if (bl->size > pl->largest_free)
				pl->largest_free = bl->size;
			if (sg->is_expandable && default_pool(sg))
				st->release_bytes += pages_inside(bl->addr,
				    bl->size);
			if (bl->size > fs->largest_free)
				fs->largest_free = bl->size;
			st->free_blocks++;
			st->hist[bucket_of(bl->size)]++;
			st->hist_bytes[bucket_of(bl->size)] += bl->size;
		}
		if (fs->free_bytes != sg->size)
			continue;
		/* no live block: cached memory */
		st->whole_free_segs++;
		st->whole_free_bytes += sg->size;
		if (!default_pool(sg)) {
			st->private_free_bytes += sg->size;
		} else if (!sg->is_expandable) {
			st->release_bytes += sg->size;
			st->release_segs++;
		}
	}
	if (st->n_segs > 1)
		qsort(st->segs, st->n_segs, sizeof *st->segs, cmp_seg);
}

static void
stream_free(const struct replay_state *rs, struct an_frag_alloc *a)
{
	uint32_t i, b;

	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];
		int same_pool = (sg->is_large != 0) == (a->large != 0);

		if (sg->stream != a->stream)
			continue;
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		     b < rs->n_blocks; b++) {
			const struct replay_block *bl = &rs->blocks[b];

			if (bl->state != SNAP_BLOCK_INACTIVE)
				continue;
			a->stream_free += bl->size;
			if (bl->size > a->stream_largest)
				a->stream_largest = bl->size;
			if (!same_pool)
				continue;
			a->pool_free += bl->size;
			if (bl->size > a->pool_largest)
				a->pool_largest = bl->size;
		}
	}
	a->has_state = 1;
}

static int
cmp_alloc(const void *a, const void *b)
{
	const struct an_frag_alloc *x = a, *y = b;

	if (x->gap != y->gap)
		return x->gap > y->gap ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static void
add_hint(struct an_frag *f, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
add_hint(struct an_frag *f, int kind, const char *fmt, ...)
{
	va_list ap;

	if (f->n_hints >= AN_FRAG_MAX_HINTS)
		return;
	f->hints[f->n_hints].kind = kind;
	va_start(ap, fmt);
	vsnprintf(f->hints[f->n_hints].text, sizeof f->hints[0].text, fmt, ap);
	va_end(ap);
	f->n_hints++;
}

static void
make_hints(const struct snapshot *s, struct an_frag *f, uint64_t n_varying_req)
{
	const char *msp = snap_setting(s, "max_split_size");
	const struct an_frag_alloc *worst = NULL;
	uint64_t i, hi = 0;
	char a[32], b[32], c[32], d[32], e[32], pk[48];

	for (i = 0; i < f->n_allocs; i++) {
		const struct an_frag_alloc *x = &f->allocs[i];

		if (x->has_state && x->req_ev >= 0 &&
		    x->pool_free >= x->request &&
		    x->pool_largest < x->request) {
			f->n_unusable++;
			if (worst == NULL)
				worst = x; /* sorted: largest gap first */
		}
		if (x->req_ev >= 0 && x->request > hi)
			hi = x->request;
	}
	if (worst != NULL && !f->expandable_in_use)
		add_hint(f, AN_HINT_EXPANDABLE,
		    "%" PRIu64 " of %" PRIu64 " segment allocations%s happened "
		    "while their stream had enough free memory in the pool the "
		    "request needed, but no single free block was large enough "
		    "(worst: event #%" PRId64 ", %s free in the %s pool, "
		    "largest block %s, request %s). "
		    "%s=expandable_segments:True lets "
		    "the allocator grow a segment instead of reserving a new "
		    "one.", f->n_unusable, f->n_examined,
		    f->n_examined < f->n_allocs ? " examined (those with the "
		    "largest gaps)" : "", worst->ev,
		    sv_fmt_size(a, sizeof a, worst->pool_free),
		    worst->large ? "large" : "small",
		    sv_fmt_size(b, sizeof b, worst->pool_largest),
		    sv_fmt_size(c, sizeof c, worst->request), f->conf_env);
	if (f->state.reserved > 0 &&
	    f->state.external * 4 >= f->state.reserved &&
	    f->state.free_blocks > 1 && !f->expandable_in_use &&
	    (msp == NULL || strcmp(msp, "-1") == 0) && hi > (20u << 20))
		add_hint(f, AN_HINT_MAX_SPLIT,
		    "%s of %s reserved (%.0f%%) sits in %" PRIu64 " free "
		    "blocks, the largest %s. %s=max_split_size_mb:%" PRIu64
		    " keeps cached blocks larger than that from being split "
		    "by smaller requests, so they stay usable for the large "
		    "ones.",
		    sv_fmt_size(a, sizeof a, f->state.external),
		    sv_fmt_size(b, sizeof b, f->state.reserved),
		    100.0 * (double)f->state.external /
			(double)f->state.reserved,
		    f->state.free_blocks,
		    sv_fmt_size(c, sizeof c, f->state.largest_free),
		    f->conf_env,
		    (hi >> 20) < 20 ? 20 : (hi >> 20));
	if (f->n_varying > 0 && n_varying_req > 0)
		add_hint(f, AN_HINT_BUCKETS,
		    "%" PRIu64 " call site%s ask%s for large blocks of a "
		    "different size from step to step (one: %s to %s over %"
		    PRIu64 " steps), and %" PRIu64 " segment allocation%s "
		    "served such a request: variable-length inputs. Padding "
		    "batches to a few fixed lengths (bucketing) lets a freed "
		    "block serve the next batch.", f->n_varying,
		    f->n_varying == 1 ? "" : "s", f->n_varying == 1 ? "s" : "",
		    sv_fmt_size(a, sizeof a, f->varying_lo),
		    sv_fmt_size(b, sizeof b, f->varying_hi), f->varying_steps,
		    n_varying_req, n_varying_req == 1 ? "" : "s");
	if (f->peak_ev >= 0)
		snprintf(pk, sizeof pk, "event #%" PRId64, f->peak_ev);
	else
		snprintf(pk, sizeof pk, "before the trace");
	if (f->state.reserved > 0 && f->state.whole_free_segs > 0 &&
	    f->state.whole_free_bytes * 4 >= f->state.reserved)
		add_hint(f, AN_HINT_EMPTY_CACHE,
		    "%s of %s reserved (%.0f%%) is cached: %" PRIu64
		    " segment%s no live block. They were reserved for a "
		    "peak "
		    "(reserved %s at the allocation peak, %s; most reserved "
		    "%s). %s gives back %s to the device; the allocator "
		    "reserves it again when a later peak needs it.",
		    sv_fmt_size(a, sizeof a, f->state.whole_free_bytes),
		    sv_fmt_size(b, sizeof b, f->state.reserved),
		    100.0 * (double)f->state.whole_free_bytes /
			(double)f->state.reserved,
		    f->state.whole_free_segs,
		    f->state.whole_free_segs == 1 ? " holds" : "s hold",
		    sv_fmt_size(c, sizeof c, f->reserved_at_peak), pk,
		    sv_fmt_size(d, sizeof d, f->reserved_max),
		    f->npu ? "torch.npu.empty_cache()"
			   : "torch.cuda.empty_cache()",
		    sv_fmt_size(e, sizeof e, f->state.release_bytes));
}

/* Call sites whose large requests change size from step to step: for
 * each stack, the size of its first large request in every step. */
struct vary {
	int64_t last_step;
	uint64_t steps, lo, hi, n;
	uint64_t sizes[3];
	uint32_t n_sizes;
	uint32_t stack;
};

static void
find_varying(const struct snap_trace *t, const struct an_steps *steps,
    struct an_frag *f, struct u64map *varying)
{
	struct u64map by_stack;
	struct vary *v = NULL;
	size_t cap = 0;
	uint64_t i, nv = 0, k, best = 0, val;
	int64_t st;
	struct an_at at = {0, 0};

	u64map_init(&by_stack);
	for (i = 0; t != NULL && steps->n >= 3 && i < t->n; i++) {
		uint64_t size = snap_ev_size(t, i), j;
		struct vary *x;

		if (snap_ev_action(t, i) != SNAP_ALLOC ||
		    size <= AN_SMALL_REQUEST ||
		    (st = an_step_at_gallop(steps, (int64_t)i, &at)) < 0)
			continue;
		if (!u64map_get(&by_stack, snap_ev_stack(t, i), &val)) {
			XGROW(v, cap, (size_t)nv + 1);
			memset(&v[nv], 0, sizeof v[nv]);
			v[nv].last_step = -1;
			v[nv].lo = UINT64_MAX;
			v[nv].stack = snap_ev_stack(t, i);
			u64map_put(&by_stack, snap_ev_stack(t, i), nv);
			val = nv++;
		}
		x = &v[val];
		x->n++;
		if (x->last_step == st)
			continue;
		x->last_step = st;
		x->steps++;
		if (size < x->lo)
			x->lo = size;
		if (size > x->hi)
			x->hi = size;
		for (j = 0; j < x->n_sizes && x->sizes[j] != size; j++)
			;
		if (j == x->n_sizes && x->n_sizes < 3)
			x->sizes[x->n_sizes++] = size;
	}
	/* in the order the stacks first occur, not the map's (which is
	 * keyed anew each run): of equal counts the first stack wins */
	for (k = 0; k < nv; k++) {
		struct vary *x = &v[k];

		/* three sizes over at least three steps, one 1.5x another */
		if (x->steps < 3 || x->n_sizes < 3 || x->hi * 2 < x->lo * 3)
			continue;
		f->n_varying++;
		u64map_put(varying, x->stack, 1);
		if (x->n > best) {
			best = x->n;
			f->varying_stack = x->stack;
			f->varying_lo = x->lo;
			f->varying_hi = x->hi;
			f->varying_steps = x->steps;
		}
	}
	free(v);
	u64map_destroy(&by_stack);
}

static int
expandable_in_use(const struct snapshot *s, uint32_t d)
{
	const char *exp = snap_setting(s, "expandable_segments");
	uint32_t i, end;

	if (exp != NULL && strcmp(exp, "True") == 0)
		return 1;
	snap_device_segments(s, d, &i, &end);
	for (; i < end; i++)
		if (s->segments[i].device == d && s->segments[i].is_expandable)
			return 1;
	return 0;
}

/* Reserved at the timeline's peak and the most reserved. */
static void
reserved_figures(const struct idx_timeline *tl, struct an_frag *f)
{
	int64_t i;

	f->peak_ev = an_peak_ev(tl);
	f->peak_allocated = tl->peak;
	f->reserved_at_peak = idx_tl_reserved(tl, f->peak_ev);
	f->reserved_max_ev = -1;
	f->reserved_max = idx_tl_reserved(tl, -1);
	for (i = 0; i < (int64_t)tl->n_events; i++)
		if (idx_tl_reserved(tl, i) > f->reserved_max) {
			f->reserved_max = idx_tl_reserved(tl, i);
			f->reserved_max_ev = i;
		}
}

static int
cmp_alloc_ev(const void *a, const void *b)
{
	const struct an_frag_alloc *x = *(const struct an_frag_alloc *const *)a;
	const struct an_frag_alloc *y = *(const struct an_frag_alloc *const *)b;

	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The allocator state just before each segment alloc: its stream's free
 * memory in all pools and in the request's pool. Each look scans the
 * whole state, so with more than AN_FRAG_EXAMINE allocs only the
 * AN_FRAG_EXAMINE - 1 with the largest gaps and the last are looked at
 * (AN_FRAG_EXAMINE in all, one fewer when the last is among them): a
 * trace that reserves tens of thousands of segments would otherwise cost
 * their number times the state's size. Seeks go in event order. */
static int
examine(struct replay *r, struct an_frag *f, int64_t last_ev,
    struct sv_error *err)
{
	struct an_frag_alloc **pick;
	uint64_t i, n = 0;

	if (f->n_allocs == 0)
		return 0;
	pick = xmalloc(f->n_allocs * sizeof *pick);
	if (f->n_allocs > AN_FRAG_EXAMINE) {
		/* largest gaps first, then the last one */
		qsort(f->allocs, f->n_allocs, sizeof *f->allocs, cmp_alloc);
		for (i = 0; i < f->n_allocs; i++)
			if (n < AN_FRAG_EXAMINE - 1 ||
			    f->allocs[i].ev == last_ev)
				pick[n++] = &f->allocs[i];
	} else {
		for (i = 0; i < f->n_allocs; i++)
			pick[n++] = &f->allocs[i];
	}
	qsort(pick, n, sizeof *pick, cmp_alloc_ev);
	for (i = 0; i < n; i++) {
		if (replay_seek(r, pick[i]->ev - 1, err) != 0) {
			free(pick);
			return -1;
		}
		stream_free(replay_state(r), pick[i]);
	}
	f->n_examined = n;
	free(pick);
	return 0;
}

int
an_frag_with_steps(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, const struct an_steps *steps,
    int64_t at, struct an_frag *out, struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, tl->device);
	struct an_steps own;
	struct u64map varying;
	size_t cap = 0;
	uint64_t i, j, n = t != NULL ? t->n : 0, n_varying_req = 0, v;
	int64_t last_ev = -1;

	memset(out, 0, sizeof *out);
	memset(&own, 0, sizeof own);
	out->device = tl->device;
	out->last = -1;
	if (steps == NULL) {
		if (an_steps_find(s, tl->device, &own, err) != 0)
			return -1;
		steps = &own;
	}
	out->expandable_in_use = expandable_in_use(s, tl->device);
	out->npu = (s->features & SNAP_F_NPU) != 0 ||
	    (r != NULL && replay_info(r)->npu_rounding);
	out->conf_env = out->npu ? "PYTORCH_NPU_ALLOC_CONF"
				 : "PYTORCH_CUDA_ALLOC_CONF";
	reserved_figures(tl, out);
	u64map_init(&varying);
	find_varying(t, steps, out, &varying);
	for (i = 0; i < n; i++) {
		struct an_frag_alloc *a;

		if (snap_ev_action(t, i) != SNAP_SEGMENT_ALLOC &&
		    snap_ev_action(t, i) != SNAP_SEGMENT_MAP)
			continue;
		XGROW(out->allocs, cap, (size_t)out->n_allocs + 1);
		a = &out->allocs[out->n_allocs++];
		memset(a, 0, sizeof *a);
		a->ev = (int64_t)i;
		a->is_map = snap_ev_action(t, i) == SNAP_SEGMENT_MAP;
		if (a->is_map)
			out->expandable_in_use = 1;
		a->size = snap_ev_size(t, i);
		a->stream = snap_ev_stream(t, i);
		a->reserved_before = i ? idx_tl_reserved(tl, (int64_t)i - 1)
				       : tl->base_reserved;
		a->allocated_before = i ? idx_tl_total(tl, (int64_t)i - 1)
					: tl->base_total;
		a->gap = a->reserved_before > a->allocated_before
		    ? a->reserved_before - a->allocated_before : 0;
		a->req_ev = -1;
		a->stack = snap_ev_stack(t, i);
		for (j = i + 1; j < n && j <= i + REQUEST_SCAN; j++)
			if (snap_ev_action(t, j) == SNAP_ALLOC) {
				a->req_ev = (int64_t)j;
				a->request = snap_ev_size(t, j);
				if (snap_ev_stack(t, j) != 0)
					a->stack = snap_ev_stack(t, j);
				n_varying_req += u64map_get(&varying,
				    snap_ev_stack(t, j), &v);
				break;
			}
		a->large = a->request > AN_SMALL_REQUEST;
		a->site = an_site_of(sites, a->stack);
		last_ev = (int64_t)i;
	}
	u64map_destroy(&varying);
	if (r != NULL && examine(r, out, last_ev, err) != 0) {
		an_steps_destroy(&own);
		an_frag_destroy(out);
		return -1;
	}
	if (at < -1 || at >= (int64_t)n)
		at = (int64_t)n - 1;
	if (r != NULL) {
		if (replay_seek(r, at, err) != 0) {
			an_steps_destroy(&own);
			an_frag_destroy(out);
			return -1;
		}
		an_frag_state_of(replay_state(r), &out->state);
	} else {
		out->state.at = at;
	}
	if (out->n_allocs > 0)
		qsort(out->allocs, out->n_allocs, sizeof *out->allocs,
		    cmp_alloc);
	for (i = 0; i < out->n_allocs; i++)
		if (out->allocs[i].ev == last_ev)
			out->last = (int64_t)i;
	make_hints(s, out, n_varying_req);
	an_steps_destroy(&own);
	return 0;
}

int
an_frag(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, int64_t at, struct an_frag *out,
    struct sv_error *err)
{
	return an_frag_with_steps(s, tl, r, sites, NULL, at, out, err);
}

void
an_frag_destroy(struct an_frag *f)
{
	free(f->allocs);
	free(f->state.segs);
	memset(f, 0, sizeof *f);
}
