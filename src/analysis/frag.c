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

void
an_frag_state_of(const struct replay_state *rs, struct an_frag_state *st)
{
	uint32_t i, b;

	free(st->segs);
	memset(st, 0, sizeof *st);
	st->at = rs->at;
	st->segs = xcalloc((size_t)rs->n_segments + 1, sizeof *st->segs);
	st->n_segs = rs->n_segments;
	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];
		struct an_frag_seg *fs = &st->segs[i];

		fs->addr = sg->addr;
		fs->size = sg->size;
		fs->stream = sg->stream;
		fs->is_expandable = sg->is_expandable;
		st->reserved += sg->size;
		for (b = sg->first_block; b < sg->first_block + sg->n_blocks &&
		     b < rs->n_blocks; b++) {
			const struct replay_block *bl = &rs->blocks[b];

			switch (bl->state) {
			case SNAP_BLOCK_ACTIVE_ALLOCATED:
				fs->allocated += bl->size;
				st->allocated += bl->size;
				st->requested += bl->requested_size;
				if (bl->size > bl->requested_size)
					st->internal +=
					    bl->size - bl->requested_size;
				break;
			case SNAP_BLOCK_ACTIVE_PENDING_FREE:
				st->pending += bl->size;
				st->external += bl->size;
				break;
			default:
				st->external += bl->size;
				fs->free_bytes += bl->size;
				fs->gaps++;
				if (bl->size > fs->largest_free)
					fs->largest_free = bl->size;
				if (bl->size > st->largest_free)
					st->largest_free = bl->size;
				st->free_blocks++;
				st->hist[bucket_of(bl->size)]++;
				st->hist_bytes[bucket_of(bl->size)] += bl->size;
			}
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
make_hints(const struct snapshot *s, struct an_frag *f)
{
	const char *exp = snap_setting(s, "expandable_segments");
	const char *msp = snap_setting(s, "max_split_size");
	int expandable = exp != NULL && strcmp(exp, "True") == 0;
	const struct an_frag_alloc *worst = NULL;
	uint64_t i, j, lo = UINT64_MAX, hi = 0, distinct = 0, n_req = 0;
	char a[32], b[32], c[32];

	for (i = 0; i < f->n_allocs; i++) {
		const struct an_frag_alloc *x = &f->allocs[i];
		int seen = 0;

		if (x->has_state && x->req_ev >= 0 &&
		    x->stream_free >= x->request &&
		    x->stream_largest < x->request) {
			f->n_unusable++;
			if (worst == NULL)
				worst = x; /* sorted: largest gap first */
		}
		if (x->req_ev < 0 || x->request <= (1u << 20))
			continue; /* small pool: 2 MiB segments */
		n_req++;
		for (j = 0; j < i && !seen; j++)
			seen = f->allocs[j].req_ev >= 0 &&
			    f->allocs[j].request == x->request;
		/* (small requests were skipped above, so j's equal to a
		 * large x are large too) */
		distinct += !seen;
		if (x->request < lo)
			lo = x->request;
		if (x->request > hi)
			hi = x->request;
	}
	if (worst != NULL && !expandable)
		add_hint(f, AN_HINT_EXPANDABLE,
		    "%" PRIu64 " of %" PRIu64 " segment allocations happened "
		    "while their stream had enough free memory in total but "
		    "no single free block was large enough (worst: event #%"
		    PRId64 ", %s free, largest block %s, request %s). "
		    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets the "
		    "allocator grow a segment instead of reserving a new one.",
		    f->n_unusable, f->n_allocs, worst->ev,
		    sv_fmt_size(a, sizeof a, worst->stream_free),
		    sv_fmt_size(b, sizeof b, worst->stream_largest),
		    sv_fmt_size(c, sizeof c, worst->request));
	if (f->state.reserved > 0 &&
	    f->state.external * 4 >= f->state.reserved &&
	    f->state.free_blocks > 1 && !expandable &&
	    (msp == NULL || strcmp(msp, "-1") == 0) && hi > (20u << 20))
		add_hint(f, AN_HINT_MAX_SPLIT,
		    "%s of %s reserved (%.0f%%) sits in %" PRIu64 " free "
		    "blocks, the largest %s. max_split_size_mb (e.g. "
		    "max_split_size_mb:%" PRIu64 ") keeps cached blocks larger "
		    "than that from being split by smaller requests, so they "
		    "stay usable for the large ones.",
		    sv_fmt_size(a, sizeof a, f->state.external),
		    sv_fmt_size(b, sizeof b, f->state.reserved),
		    100.0 * (double)f->state.external /
			(double)f->state.reserved,
		    f->state.free_blocks,
		    sv_fmt_size(c, sizeof c, f->state.largest_free),
		    (hi >> 20) < 20 ? 20 : (hi >> 20));
	if (distinct >= 4 && hi * 2 >= lo * 3)
		add_hint(f, AN_HINT_BUCKETS,
		    "%" PRIu64 " large segment allocations were triggered by %" PRIu64
		    " distinct request sizes from %s to %s: variable-length "
		    "inputs. Padding batches to a few fixed lengths (bucketing) "
		    "lets a freed block serve the next batch.",
		    n_req, distinct, sv_fmt_size(a, sizeof a, lo),
		    sv_fmt_size(b, sizeof b, hi));
}

int
an_frag(const struct snapshot *s, const struct idx_timeline *tl,
    struct replay *r, struct an_sites *sites, int64_t at, struct an_frag *out,
    struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, tl->device);
	size_t cap = 0;
	uint64_t i, j, n = t != NULL ? t->n : 0;
	int64_t last_ev = -1;

	memset(out, 0, sizeof *out);
	out->device = tl->device;
	out->last = -1;
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
		a->size = snap_ev_size(t, i);
		a->stream = snap_ev_stream(t, i);
		a->reserved_before = i ? idx_tl_reserved(tl, i - 1) : tl->base_reserved;
		a->allocated_before = i ? idx_tl_total(tl, i - 1) : tl->base_total;
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
				break;
			}
		a->site = an_site_of(sites, a->stack);
		if (r != NULL) {
			if (replay_seek(r, (int64_t)i - 1, err) != 0) {
				an_frag_destroy(out);
				return -1;
			}
			stream_free(replay_state(r), a);
		}
		last_ev = (int64_t)i;
	}
	if (at < -1 || at >= (int64_t)n)
		at = (int64_t)n - 1;
	if (r != NULL) {
		if (replay_seek(r, at, err) != 0) {
			an_frag_destroy(out);
			return -1;
		}
		an_frag_state_of(replay_state(r), &out->state);
	} else {
		out->state.at = at;
	}
	if (out->n_allocs > 1)
		qsort(out->allocs, out->n_allocs, sizeof *out->allocs, cmp_alloc);
	for (i = 0; i < out->n_allocs; i++)
		if (out->allocs[i].ev == last_ev)
			out->last = (int64_t)i;
	make_hints(s, out);
	return 0;
}

void
an_frag_destroy(struct an_frag *f)
{
	free(f->allocs);
	free(f->state.segs);
	memset(f, 0, sizeof *f);
}
