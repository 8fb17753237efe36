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
#include "replay/replay_round.h"
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

static int
cmp_group(const void *a, const void *b)
{
	const struct an_pool_stream *x = a, *y = b;
	int dx = x->pool[0] == 0 && x->pool[1] == 0;
	int dy = y->pool[0] == 0 && y->pool[1] == 0;

	if (dx != dy)
		return dx ? -1 : 1;
	if (x->pool[0] != y->pool[0])
		return x->pool[0] < y->pool[0] ? -1 : 1;
	if (x->pool[1] != y->pool[1])
		return x->pool[1] < y->pool[1] ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

uint32_t
an_pool_streams(const struct replay_state *rs, struct an_pool_stream **out)
{
	struct an_pool_stream *g = NULL, *x;
	size_t cap = 0;
	uint32_t n = 0, i, k, b;

	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];

		/* a device has a few pools and streams: a scan is enough */
		x = NULL;
		for (k = n; k > 0 && x == NULL; k--)
			if (g[k - 1].stream == sg->stream &&
			    g[k - 1].pool[0] == sg->pool_id[0] &&
			    g[k - 1].pool[1] == sg->pool_id[1])
				x = &g[k - 1];
		if (x == NULL) {
			XGROW(g, cap, (size_t)n + 1);
			x = &g[n++];
			memset(x, 0, sizeof *x);
			x->pool[0] = sg->pool_id[0];
			x->pool[1] = sg->pool_id[1];
			x->stream = sg->stream;
		}
		x->segments++;
		x->reserved += sg->size;
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		     b < rs->n_blocks; b++) {
			const struct replay_block *bl = &rs->blocks[b];

			if (bl->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
				x->allocated += bl->size;
			if (bl->state != SNAP_BLOCK_INACTIVE)
				continue;
			x->free_bytes += bl->size;
			x->free_blocks++;
			if (bl->size > x->largest_free[sg->is_large != 0])
				x->largest_free[sg->is_large != 0] = bl->size;
		}
	}
	if (n > 1)
		qsort(g, n, sizeof *g, cmp_group);
	*out = g;
	return n;
}

void
an_isolation_of(const struct an_pool_stream *g, uint32_t n,
    const int64_t pool[2], uint64_t stream, int large, uint64_t size,
    struct an_isolation *iso)
{
	uint32_t i;
	int c = large != 0;

	memset(iso, 0, sizeof *iso);
	for (i = 0; i < n; i++) {
		if (g[i].pool[0] == pool[0] && g[i].pool[1] == pool[1] &&
		    g[i].stream == stream) {
			if (g[i].largest_free[c] >= size)
				return; /* its own group could serve it */
			continue;
		}
		iso->other_free += g[i].free_bytes;
		if (g[i].largest_free[c] >= size &&
		    g[i].largest_free[c] > iso->largest) {
			iso->largest = g[i].largest_free[c];
			iso->pool[0] = g[i].pool[0];
			iso->pool[1] = g[i].pool[1];
			iso->stream = g[i].stream;
		}
	}
	iso->isolated = iso->largest > 0;
}

void
an_frag_state_of(const struct replay_state *rs, struct an_frag_state *st)
{
	struct replay_totals t;
	uint32_t i, b;

	free(st->segs);
	free(st->groups);
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
	st->n_groups = an_pool_streams(rs, &st->groups);
	for (i = 0; i < st->n_groups; i++)
		if (st->groups[i].pool[0] != 0 || st->groups[i].pool[1] != 0)
			st->has_private = 1;
}

static void
stream_free(const struct replay_state *rs, struct an_frag_alloc *a)
{
	struct an_pool_stream *g;
	uint32_t i, b, n;

	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];
		int same_pool = (sg->is_large != 0) == (a->large != 0) &&
		    sg->pool_id[0] == a->pool[0] &&
		    sg->pool_id[1] == a->pool[1];

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
	if (a->req_ev < 0)
		return;
	n = an_pool_streams(rs, &g);
	an_isolation_of(g, n, a->pool, a->stream, a->large, a->rounded,
	    &a->iso);
	free(g);
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

const char *
an_pool_name(char *buf, size_t size, const int64_t pool[2])
{
	if (pool[0] == 0 && pool[1] == 0)
		snprintf(buf, size, "the default pool");
	else
		snprintf(buf, size, "pool (%" PRId64 ",%" PRId64 ")", pool[0],
		    pool[1]);
	return buf;
}

static void
isolated_hint(struct an_frag *f)
{
	const struct an_frag_alloc *w = NULL;
	char a[32], b[32], p1[64], p2[64];
	uint64_t i;

	for (i = 0; i < f->n_allocs && w == NULL; i++)
		if (f->allocs[i].has_state && f->allocs[i].iso.isolated)
			w = &f->allocs[i]; /* sorted: largest gap first */
	if (w == NULL)
		return;
	add_hint(f, AN_HINT_ISOLATED,
	    "%" PRIu64 " of %" PRIu64 " segment allocations%s happened "
	    "while a free block large enough sat in another pool or stream "
	    "(worst: event #%" PRId64 ", a %s request on stream %" PRIu64
	    " in %s; a %s block free in %s on stream %" PRIu64 "). The "
	    "allocator serves a request only from the free blocks of its own "
	    "pool and stream: memory cached in a CUDA graph's or a MemPool's "
	    "pool, or on another stream, cannot serve it.",
	    f->n_isolated, f->n_examined, f->n_examined < f->n_allocs ?
	    " examined (those with the largest gaps)" : "", w->ev,
	    sv_fmt_size(a, sizeof a, w->request), w->stream,
	    an_pool_name(p1, sizeof p1, w->pool),
	    sv_fmt_size(b, sizeof b, w->iso.largest),
	    an_pool_name(p2, sizeof p2, w->iso.pool), w->iso.stream);
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
	isolated_hint(f);
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
/* The pool of the segment event ev made: the final segments' (the
 * replay's backward pass), else the event's own pool_id, else the
 * default pool. */
static void
segment_pool(const struct snapshot *s, const struct snap_trace *t,
    struct replay *r, uint64_t ev, int64_t pool[2])
{
	int large;

	if (replay_segment_attr(r, ev, pool, &large))
		return;
	if (t != NULL && ev < t->n && snap_ev_pool(s, t, ev, pool))
		return;
	pool[0] = pool[1] = 0;
}

static int
examine(const struct snapshot *s, const struct snap_trace *t,
    struct replay *r, struct an_frag *f, int64_t last_ev,
    struct sv_error *err)
{
	int rule = replay_info(r)->npu_rounding ? REPLAY_ROUND_NPU :
	    REPLAY_ROUND_CUDA;
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
		segment_pool(s, t, r, (uint64_t)pick[i]->ev, pick[i]->pool);
		pick[i]->rounded = replay_round_size(rule, pick[i]->request);
		stream_free(replay_state(r), pick[i]);
		f->n_isolated += pick[i]->iso.isolated;
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
	if (r != NULL && examine(s, t, r, out, last_ev, err) != 0) {
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
	free(f->state.groups);
	memset(f, 0, sizeof *f);
}
