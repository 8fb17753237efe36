/*
 * The recorded requests of a device replayed through the simulated
 * allocator under other settings, beside the recording, and the
 * agreement of the simulation with the recording under its own
 * settings. See whatif.h.
 */
#include "config.h"

#include "analysis/whatif.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/sim.h"
#include "util/avl.h"
#include "util/stop.h"
#include "util/u64map.h"
#include "util/units.h"
#include "util/xalloc.h"

#define OOM_TAG (1ull << 63)

/* A device action: recorded (by event) or simulated. */
struct devact {
	uint64_t addr, size;
	int64_t ev;
	uint8_t kind;		/* enum sim_dev_action */
	uint8_t used;		/* matched, or given as an address hint */
	uint8_t pad[6];
};

struct actq {
	struct devact *v;
	size_t n, cap;
};

/* A recorded segment, for the pool of the addresses in it. */
struct rseg_pool {
	struct avl_node node;	/* key: address */
	uint64_t size;
	int64_t pool[2];
};

struct wsim {
	struct sim *sim;
	struct an_whatif_col *col;
	int agree;		/* the agreement pass */
	int dead;		/* its seed failed */
	uint64_t seen;		/* reserved when observed last */
	uint64_t base_allocs, base_frees; /* device calls of its seeding */
	int64_t seen_step;	/* and its step */
};

struct wctx {
	const struct snapshot *s;
	const struct snap_trace *t;
	uint64_t n;
	struct replay *r;
	struct an_whatif *w;
	struct wsim *sims;
	uint32_t n_sims;
	struct actq rec, simq;
	int track_pools;
	struct avl rsegs;
	/* a release run being read: its last event, its owner (the malloc
	 * that made it, or -1: empty_cache) */
	int64_t run_end, run_owner;
	int run_how;
	int64_t force_ev;
	int force_how;
	int64_t skip_to;	/* workspace triples: events skipped */
	int no_agree;		/* a walk: no agreement pass */
	struct u64map *tag_ev;	/* a walk: tag -> its alloc event */
	/* the recorded column */
	uint64_t rec_reserved, rec_seen;
	int64_t rec_seen_step;
};

static void
actq_push(struct actq *q, int kind, uint64_t addr, uint64_t size, int64_t ev)
{
	struct devact *a;

	q->v = xgrow(q->v, &q->cap, q->n + 1, sizeof *q->v);
	a = &q->v[q->n++];
	memset(a, 0, sizeof *a);
	a->kind = (uint8_t)kind;
	a->addr = addr;
	a->size = size;
	a->ev = ev;
}

static int
is_alloc_kind(int kind)
{
	return kind == SIM_DEV_ALLOC || kind == SIM_DEV_MAP;
}

/* ---- hooks of the agreement pass ----------------------------------------- */

static void
hook_dev(void *ctx, int action, uint64_t addr, uint64_t size)
{
	struct wctx *c = ctx;

	actq_push(&c->simq, action, addr, size, -1);
}

/* The address the recording got for a segment of this size: the first
 * recorded segment_alloc waiting for its malloc. */
static uint64_t
hook_addr(void *ctx, uint64_t size, int expandable)
{
	struct wctx *c = ctx;
	size_t i;

	for (i = 0; i < c->rec.n; i++) {
		struct devact *a = &c->rec.v[i];

		if (a->used)
			continue;
		if (expandable && a->kind == SIM_DEV_MAP)
			return a->addr;
		if (!expandable && a->kind == SIM_DEV_ALLOC &&
		    a->size == size) {
			a->used = 1;
			return a->addr;
		}
	}
	return 0;
}

/* ---- the agreement ------------------------------------------------------- */

static void
describe_diff(struct wctx *c, int64_t ev)
{
	struct an_whatif_agree *g = &c->w->agree;
	char a[32], b[32];
	size_t i, j;

	for (i = 0; i < c->rec.n; i++) {
		const struct devact *x = &c->rec.v[i];

		if (x->used & 2)
			continue;
		for (j = 0; j < c->simq.n; j++) {
			const struct devact *y = &c->simq.v[j];

			if (!(y->used & 2) &&
			    is_alloc_kind(y->kind) == is_alloc_kind(x->kind)) {
				snprintf(g->diff, sizeof g->diff, "the "
				    "recording %s %s at event #%" PRId64
				    ", the simulation %s",
				    is_alloc_kind(x->kind) ? "allocated a "
				    "segment of" : "gave back a segment of",
				    sv_fmt_size(a, sizeof a, x->size), x->ev,
				    sv_fmt_size(b, sizeof b, y->size));
				return;
			}
		}
		snprintf(g->diff, sizeof g->diff, "the recording %s %s at "
		    "event #%" PRId64 ", the simulation %s",
		    is_alloc_kind(x->kind) ? "allocated a segment of" :
		    "gave back a segment of",
		    sv_fmt_size(a, sizeof a, x->size), x->ev,
		    is_alloc_kind(x->kind) ? "found a free block" :
		    "kept it");
		return;
	}
	for (j = 0; j < c->simq.n; j++) {
		const struct devact *y = &c->simq.v[j];

		if (!(y->used & 2)) {
			snprintf(g->diff, sizeof g->diff, "the simulation "
			    "%s %s at event #%" PRId64 ", the recording did "
			    "not", is_alloc_kind(y->kind) ? "allocated a "
			    "segment of" : "gave back a segment of",
			    sv_fmt_size(a, sizeof a, y->size), ev);
			return;
		}
	}
}

/* The device actions of the malloc or empty_cache at event ev: the
 * recorded ones (waiting since their events) against the simulated
 * ones, as multisets of (allocation or release, size). */
static void
compare_owner(struct wctx *c, int64_t ev)
{
	struct an_whatif_agree *g = &c->w->agree;
	uint64_t ok = 0, before = g->seg_allocs_ok + g->seg_frees_ok;
	size_t i, j;
	int bad = 0;

	for (i = 0; i < c->rec.n; i++) {
		struct devact *x = &c->rec.v[i];

		x->used = 0;
		for (j = 0; j < c->simq.n; j++) {
			struct devact *y = &c->simq.v[j];

			if (!(y->used & 2) && y->size == x->size &&
			    is_alloc_kind(y->kind) == is_alloc_kind(x->kind)) {
				y->used |= 2;
				x->used |= 2;
				break;
			}
		}
		if (x->used & 2) {
			ok++;
			if (is_alloc_kind(x->kind))
				g->seg_allocs_ok++;
			else
				g->seg_frees_ok++;
		} else
			bad = 1;
	}
	for (j = 0; j < c->simq.n; j++)
		if (!(c->simq.v[j].used & 2)) {
			g->sim_extra++;
			bad = 1;
		}
	if (bad && g->first_diff < 0) {
		g->first_diff = ev;
		g->ok_before = before;
		describe_diff(c, ev);
	}
	(void)ok;
	c->rec.n = 0;
	c->simq.n = 0;
}

/* ---- recorded pools ------------------------------------------------------ */

static void
rseg_add(struct wctx *c, uint64_t addr, uint64_t size, const int64_t pool[2])
{
	struct rseg_pool *p;

	if ((p = avl_find(&c->rsegs, addr)) == NULL &&
	    (p = avl_insert(&c->rsegs, addr)) == NULL)
		return;
	p->size = size;
	p->pool[0] = pool[0];
	p->pool[1] = pool[1];
}

static const int64_t *
rseg_pool(const struct wctx *c, uint64_t addr)
{
	const struct rseg_pool *p;

	if (!c->track_pools)
		return NULL;
	p = avl_le(&c->rsegs, addr);
	if (p == NULL || addr - avl_key(p) >= p->size)
		return NULL;
	return p->pool;
}

/* ---- the columns --------------------------------------------------------- */

static void
col_observe(struct an_whatif *w, struct an_whatif_col *col,
    const struct sim_stats *st, int64_t ev, int64_t step)
{
	if (st->reserved > col->peak_reserved || (col->peak_ev == -2)) {
		col->peak_reserved = st->reserved;
		col->peak_ev = ev;
		col->peak_segments = st->segments;
		col->peak_internal = st->allocated - st->requested;
		col->peak_external = st->reserved > st->allocated ?
		    st->reserved - st->allocated : 0;
	}
	if (step >= 0 && st->reserved > col->step_peak[step])
		col->step_peak[step] = st->reserved;
	if (col->series != NULL && ev >= 0)
		col->series[ev] = st->reserved;
	(void)w;
}

static void
col_init(struct an_whatif *w, struct an_whatif_col *col, int series)
{
	col->peak_ev = -2;
	col->first_oom = -1;
	col->step_peak = xcalloc(w->steps.n ? w->steps.n : 1,
	    sizeof *col->step_peak);
	if (series && w->n_events > 0)
		col->series = xcalloc(w->n_events, sizeof *col->series);
}

/* ---- seeding ------------------------------------------------------------- */

struct start {
	struct replay_segment *segs;
	uint32_t n_segs;
	struct replay_block *blks;
	uint32_t n_blks;
	uint64_t reserved, segments;
};

static void
start_copy(const struct replay_state *st, struct start *o)
{
	o->n_segs = st->n_segments;
	o->n_blks = st->n_blocks;
	o->segs = xreallocarray(NULL, o->n_segs ? o->n_segs : 1,
	    sizeof *o->segs);
	o->blks = xreallocarray(NULL, o->n_blks ? o->n_blks : 1,
	    sizeof *o->blks);
	if (o->n_segs > 0) /* memcpy from NULL is undefined, even of 0 */
		memcpy(o->segs, st->segments, o->n_segs * sizeof *o->segs);
	if (o->n_blks > 0)
		memcpy(o->blks, st->blocks, o->n_blks * sizeof *o->blks);
	o->reserved = st->reserved;
	o->segments = st->n_segments;
}

static int
seg_blocks_ok(const struct start *o, const struct replay_segment *sg)
{
	return sg->first_block <= o->n_blks &&
	    sg->n_blocks <= o->n_blks - sg->first_block;
}

/* The start as it was (the recorded settings). */
static uint64_t
seed_exact(struct sim *S, const struct start *o)
{
	uint64_t bad = 0;
	uint32_t i;

	for (i = 0; i < o->n_segs; i++) {
		const struct replay_segment *sg = &o->segs[i];

		if (!seg_blocks_ok(o, sg) ||
		    sim_seed_segment(S, sg, o->blks + sg->first_block) != 0)
			bad++;
	}
	return bad;
}

/* The start's live blocks allocated again under other settings. */
static uint64_t
seed_again(struct sim *S, const struct start *o)
{
	uint64_t failed = 0, got;
	uint32_t i, k;

	for (i = 0; i < o->n_segs; i++) {
		const struct replay_segment *sg = &o->segs[i];

		if (!seg_blocks_ok(o, sg))
			continue;
		for (k = 0; k < sg->n_blocks; k++) {
			const struct replay_block *b =
			    &o->blks[sg->first_block + k];
			uint64_t req = b->requested_size > 0 &&
			    b->requested_size <= b->size ?
			    b->requested_size : b->size;

			if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED &&
			    b->state != SNAP_BLOCK_ACTIVE_PENDING_FREE)
				continue;
			if (sim_malloc(S, b->addr, req, sg->stream,
			    sg->pool_id, &got) != 0) {
				failed++;
				continue;
			}
			if (b->state == SNAP_BLOCK_ACTIVE_PENDING_FREE)
				sim_free_requested(S, b->addr);
		}
	}
	return failed;
}

/* ---- the recorded capacity ----------------------------------------------- */

static uint64_t
segment_size_for(const struct sim_conf *c, uint64_t rounded)
{
	(void)c;
	if (rounded <= (1ull << 20))
		return 2ull << 20;
	if (rounded < (10ull << 20))
		return 20ull << 20;
	return (rounded + (2ull << 20) - 1) / (2ull << 20) * (2ull << 20);
}

/* With no capacity given and an OOM in the recording. When the device
 * reported less free than the segment that failed, the device was full:
 * it had what was reserved there plus that. Else a cap refused the
 * segment (a memory fraction): the run surely had the most it held
 * before (lo), and less than what was reserved there plus the segment
 * (hi); lo is taken, which claims nothing the run did not have. */
static void
capacity_from_oom(struct wctx *c, uint64_t start_reserved)
{
	struct an_whatif *w = c->w;
	uint64_t i, res = start_reserved, lo = start_reserved, seg, room;

	for (i = 0; i < c->n; i++) {
		unsigned a = snap_ev_action(c->t, i);

		switch (a) {
		case SNAP_SEGMENT_ALLOC:
		case SNAP_SEGMENT_MAP:
			res += snap_ev_size(c->t, i);
			if (res > lo)
				lo = res;
			break;
		case SNAP_SEGMENT_FREE:
		case SNAP_SEGMENT_UNMAP:
			res -= snap_ev_size(c->t, i) < res ?
			    snap_ev_size(c->t, i) : res;
			break;
		case SNAP_OOM:
			seg = segment_size_for(&w->recorded,
			    snap_ev_size(c->t, i));
			room = snap_ev_addr(c->t, i);
			if (room < seg) {
				w->capacity = res + room;
				w->capacity_hi = res + room;
				w->capacity_full = 1;
			} else {
				w->capacity = lo;
				w->capacity_hi = res + seg - 512 > lo ?
				    res + seg - 512 : lo;
			}
			w->capacity_source = AN_WI_CAP_OOM;
			w->capacity_oom_ev = (int64_t)i;
			return;
		default:
			break;
		}
	}
}

/* ---- release runs -------------------------------------------------------- */

static int
is_release(unsigned a)
{
	return a == SNAP_SEGMENT_FREE || a == SNAP_SEGMENT_UNMAP;
}

/* At the first event of a run of segment_free/unmap: where it ends, and
 * whether a malloc made it (a failed device allocation, or garbage
 * collection) or empty_cache: a malloc's release is followed by its
 * segment allocation or its OOM, with the malloc's own stack. */
static void
read_run(struct wctx *c, uint64_t i)
{
	const struct snap_trace *t = c->t;
	uint64_t j = i, k;
	uint32_t st = snap_ev_stack(t, i), st2;
	unsigned a;
	int all_over = 1;

	while (j < c->n && is_release(snap_ev_action(t, j))) {
		if (c->w->recorded.max_split == SIMCONF_NO_SPLIT_LIMIT ||
		    snap_ev_size(t, j) < c->w->recorded.max_split)
			all_over = 0;
		j++;
	}
	c->run_end = (int64_t)j - 1;
	c->run_owner = -1;
	if (j >= c->n)
		return;
	a = snap_ev_action(t, j);
	if (a != SNAP_SEGMENT_ALLOC && a != SNAP_SEGMENT_MAP && a != SNAP_OOM)
		return;
	st2 = snap_ev_stack(t, j);
	if (st != 0 && st2 != 0 && st != st2)
		return;
	for (k = j; k < c->n; k++) {
		a = snap_ev_action(t, k);
		if (a == SNAP_ALLOC || a == SNAP_OOM)
			break;
		if (a != SNAP_SEGMENT_ALLOC && a != SNAP_SEGMENT_MAP)
			return;
	}
	if (k >= c->n)
		return;
	c->run_owner = (int64_t)k;
	c->run_how = a == SNAP_OOM ? SIM_FORCE_ALL : all_over ?
	    SIM_FORCE_ONCE : SIM_FORCE_UNTIL_CACHED;
}

/* ---- the pass ------------------------------------------------------------ */

static void
sims_malloc(struct wctx *c, uint64_t i, uint64_t tag, uint64_t req,
    uint64_t stream, const int64_t *pool, int oom)
{
	struct an_whatif *w = c->w;
	uint64_t got;
	uint32_t k;

	for (k = 0; k < c->n_sims; k++) {
		struct wsim *x = &c->sims[k];
		int rc;

		if (x->dead)
			continue;
		if (x->agree && (oom || c->force_ev == (int64_t)i))
			sim_force_fail(x->sim, oom ? SIM_FORCE_ALL :
			    c->force_how);
		rc = sim_malloc(x->sim, tag, req, stream, pool, &got);
		if (x->agree) {
			if (!oom) {
				w->agree.allocs++;
				if (rc == 0 && got == tag)
					w->agree.allocs_at_addr++;
				else if (w->agree.first_misplaced < 0) {
					w->agree.first_misplaced = (int64_t)i;
					w->agree.misplaced_rec = tag;
					w->agree.misplaced_sim = rc == 0 ?
					    got : 0;
				}
			}
			compare_owner(c, (int64_t)i);
			continue;
		}
		if (rc != 0) {
			if (x->col->first_oom < 0) {
				x->col->first_oom = (int64_t)i;
				x->col->first_oom_request = req;
			}
			x->col->n_oom++;
		} else if (oom)
			sim_free_completed(x->sim, tag);
	}
	if (c->force_ev == (int64_t)i)
		c->force_ev = -1;
}

static void
sims_free(struct wctx *c, uint64_t tag, int completed)
{
	uint32_t k;

	for (k = 0; k < c->n_sims; k++) {
		struct wsim *x = &c->sims[k];
		int rc;

		if (x->dead)
			continue;
		rc = completed ? sim_free_completed(x->sim, tag) :
		    sim_free_requested(x->sim, tag);
		if (rc != 0 && x->agree)
			c->w->agree.n_unknown_frees++;
	}
}

static void
sims_empty_cache(struct wctx *c, int64_t i)
{
	uint32_t k;

	for (k = 0; k < c->n_sims; k++) {
		if (c->sims[k].dead)
			continue;
		sim_empty_cache(c->sims[k].sim);
		if (c->sims[k].agree)
			compare_owner(c, i);
	}
}

static void
private_freeable(struct wctx *c, uint64_t addr)
{
	const int64_t *pool = rseg_pool(c, addr);
	uint32_t k;

	if (pool == NULL || (pool[0] == 0 && pool[1] == 0))
		return;
	c->w->agree.reasons |= AN_WI_PRIVATE;
	for (k = 0; k < c->n_sims; k++)
		sim_pool_freeable(c->sims[k].sim, pool);
}

/* A recorded segment event: the recorded column, the pools, and the
 * agreement's queue. */
static void
recorded_segment(struct wctx *c, uint64_t i, unsigned a, uint64_t addr,
    uint64_t size)
{
	struct an_whatif_col *rc = &c->w->cols[0];
	struct rseg_pool *p;
	int64_t pool[2] = {0, 0};
	int large;

	switch (a) {
	case SNAP_SEGMENT_ALLOC:
	case SNAP_SEGMENT_MAP:
		c->rec_reserved += size;
		rc->device_allocs++;
		c->w->agree.seg_allocs++;
		if (!c->no_agree)
			actq_push(&c->rec, a == SNAP_SEGMENT_ALLOC ?
			    SIM_DEV_ALLOC : SIM_DEV_MAP, addr, size,
			    (int64_t)i);
		if (c->track_pools) {
			if (!replay_segment_attr(c->r, i, pool, &large))
				pool[0] = pool[1] = 0;
			rseg_add(c, addr, size, pool);
		}
		break;
	default:
		c->rec_reserved -= size < c->rec_reserved ? size :
		    c->rec_reserved;
		rc->device_frees++;
		c->w->agree.seg_frees++;
		if (!c->no_agree)
			actq_push(&c->rec, a == SNAP_SEGMENT_FREE ?
			    SIM_DEV_FREE : SIM_DEV_UNMAP, addr, size,
			    (int64_t)i);
		if (c->run_owner < 0)
			private_freeable(c, addr);
		if (c->track_pools && a == SNAP_SEGMENT_FREE &&
		    (p = avl_find(&c->rsegs, addr)) != NULL)
			avl_remove(&c->rsegs, p);
		break;
	}
}

/* The step holding event i, for i ascending one by one: the steps are
 * in event order and disjoint (steps.h). */
static int64_t
step_of(const struct an_whatif *w, int64_t i, uint64_t *k)
{
	while (*k < w->steps.n && w->step[*k].last < i)
		(*k)++;
	return *k < w->steps.n && w->step[*k].first <= i ? (int64_t)*k : -1;
}

static void
observe_all(struct wctx *c, int64_t i, uint64_t *at)
{
	struct an_whatif *w = c->w;
	struct sim_stats rs;
	int64_t step = i >= 0 ? step_of(w, i, at) : -1;
	const struct sim_stats *ag = NULL;
	uint32_t k;

	for (k = 0; k < c->n_sims; k++) {
		struct wsim *x = &c->sims[k];
		const struct sim_stats *st;

		if (x->dead)
			continue;
		st = sim_stats(x->sim);
		if (x->agree)
			ag = st;
		else if (i < 0 || st->reserved != x->seen ||
		    step != x->seen_step || x->col->series != NULL) {
			/* reserved changes only at a device action: the
			 * events between change no peak */
			col_observe(w, x->col, st, i, step);
			x->seen = st->reserved;
			x->seen_step = step;
		}
	}
	if (ag != NULL) {
		if (ag->requested > w->requested_peak || i < 0) {
			w->requested_peak = ag->requested;
			w->requested_peak_ev = i;
		}
		if (step >= 0 &&
		    (ag->requested > w->step[step].allocated_peak ||
		    w->step[step].allocated_peak_ev < 0)) {
			w->step[step].allocated_peak = ag->requested;
			w->step[step].allocated_peak_ev = i;
		}
	}
	if (i < 0 || c->rec_reserved != c->rec_seen ||
	    step != c->rec_seen_step || w->cols[0].series != NULL) {
		/* the recording's column: its reserved bytes, the
		 * agreement pass's allocated ones */
		memset(&rs, 0, sizeof rs);
		rs.reserved = c->rec_reserved;
		if (ag != NULL) {
			rs.requested = ag->requested;
			rs.allocated = ag->allocated;
		}
		col_observe(w, &w->cols[0], &rs, i, step);
		c->rec_seen = rs.reserved;
		c->rec_seen_step = step;
	}
}

/* Events from..to-1; from 0 observes the start first. */
static int
run_pass(struct wctx *c, uint64_t from, uint64_t to, struct sv_error *err)
{
	const struct snap_trace *t = c->t;
	struct an_whatif *w = c->w;
	uint64_t at = 0;
	uint64_t i;

	if (from == 0)
		observe_all(c, -1, &at);
	for (i = from; i < to; i++) {
		unsigned a = snap_ev_action(t, i);
		uint64_t addr, size;

		if (sv_stop_poll(i))
			return sv_error_set(err, SV_ERR_CANCELLED,
			    SV_NO_OFFSET, "cancelled");
		if ((int64_t)i <= c->skip_to)
			goto next;
		switch (a) {
		case SNAP_ALLOC:
			addr = snap_ev_addr(t, i);
			if (c->tag_ev != NULL)
				u64map_put(c->tag_ev, addr, i);
			sims_malloc(c, i, addr, snap_ev_size(t, i),
			    snap_ev_stream(t, i), rseg_pool(c, addr), 0);
			break;
		case SNAP_FREE_REQUESTED:
			sims_free(c, snap_ev_addr(t, i), 0);
			break;
		case SNAP_FREE_COMPLETED:
			sims_free(c, snap_ev_addr(t, i), 1);
			break;
		case SNAP_SEGMENT_ALLOC:
		case SNAP_SEGMENT_MAP:
			recorded_segment(c, i, a, snap_ev_addr(t, i),
			    snap_ev_size(t, i));
			break;
		case SNAP_SEGMENT_FREE:
		case SNAP_SEGMENT_UNMAP:
			if ((int64_t)i > c->run_end) {
				read_run(c, i);
				if (c->run_owner >= 0) {
					c->force_ev = c->run_owner;
					c->force_how = c->run_how;
					w->agree.n_forced++;
					w->agree.reasons |= AN_WI_RETRY;
					if (w->recorded.gc_threshold > 0)
						w->agree.reasons |= AN_WI_GC;
				}
			}
			addr = snap_ev_addr(t, i);
			size = snap_ev_size(t, i);
			recorded_segment(c, i, a, addr, size);
			if ((int64_t)i == c->run_end && c->run_owner < 0)
				sims_empty_cache(c, (int64_t)i);
			break;
		case SNAP_OOM:
			w->cols[0].n_oom++;
			if (w->cols[0].first_oom < 0) {
				w->cols[0].first_oom = (int64_t)i;
				w->cols[0].first_oom_request =
				    snap_ev_size(t, i);
			}
			sims_malloc(c, i, OOM_TAG | i, snap_ev_size(t, i),
			    snap_ev_stream(t, i), NULL, 1);
			break;
		case SNAP_WORKSPACE_SNAPSHOT:
			/* torch_npu: the workspace at the dump, then its
			 * segment_alloc and alloc
			 * (doc/snapshot-format.md §16.4): no request */
			w->agree.n_workspace++;
			w->agree.reasons |= AN_WI_WORKSPACE;
			addr = snap_ev_addr(t, i);
			if (i + 2 < c->n &&
			    snap_ev_action(t, i + 1) == SNAP_SEGMENT_ALLOC &&
			    snap_ev_action(t, i + 2) == SNAP_ALLOC &&
			    snap_ev_addr(t, i + 1) == addr &&
			    snap_ev_addr(t, i + 2) == addr)
				c->skip_to = (int64_t)i + 2;
			break;
		default:
			break;
		}
next:
		observe_all(c, (int64_t)i, &at);
	}
	return 0;
}

/* ---- the recorded column's state figures --------------------------------- */

static int
recorded_state(struct wctx *c, struct sv_error *err)
{
	struct an_whatif_col *col = &c->w->cols[0];
	struct replay_totals tt;

	if (col->peak_ev >= -1) {
		if (replay_seek(c->r, col->peak_ev, err) != 0)
			return -1;
		replay_totals(replay_state(c->r), &tt);
		col->peak_segments = tt.n_segments;
		col->peak_internal = tt.free_internal;
		col->peak_external = tt.free_external;
	}
	if (replay_seek(c->r, (int64_t)c->n - 1, err) != 0)
		return -1;
	replay_totals(replay_state(c->r), &tt);
	col->end_segments = tt.n_segments;
	col->end_reserved = tt.reserved;
	return 0;
}

/* ---- entry --------------------------------------------------------------- */

static int
has_private_pools(const struct snapshot *s, uint32_t d, const struct start *o)
{
	uint32_t i, end;

	for (i = 0; i < o->n_segs; i++)
		if (o->segs[i].pool_id[0] != 0 || o->segs[i].pool_id[1] != 0)
			return 1;
	snap_device_segments(s, d, &i, &end);
	for (; i < end; i++)
		if (s->segments[i].device == d &&
		    (s->segments[i].pool_id[0] != 0 ||
		    s->segments[i].pool_id[1] != 0))
			return 1;
	return 0;
}

static int
trace_maps(const struct snap_trace *t, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		unsigned a = snap_ev_action(t, i);

		if (a == SNAP_SEGMENT_MAP || a == SNAP_SEGMENT_UNMAP)
			return 1;
	}
	return 0;
}

static void
note_start(struct an_whatif *w, const struct start *o,
    const struct replay_info *ri)
{
	struct an_whatif_agree *g = &w->agree;
	uint32_t i;

	g->n_pre_blocks = ri->n_pre_blocks;
	g->n_free_no_alloc = ri->n_free_no_alloc;
	g->n_unknown = ri->n_unknown;
	g->n_undo = ri->n_undo_anomalies;
	g->n_aligned = ri->n_aligned;
	if (g->n_pre_blocks > 0 || g->n_free_no_alloc > 0)
		g->reasons |= AN_WI_PRE_TRACE;
	if (ri->npu_rounding)
		g->reasons |= AN_WI_NPU;
	if (g->n_unknown > 0)
		g->reasons |= AN_WI_UNKNOWN;
	if (g->n_undo > 0)
		g->reasons |= AN_WI_UNDO;
	for (i = 0; i < o->n_segs; i++)
		if (o->segs[i].is_expandable)
			g->reasons |= AN_WI_ES_START;
}

static void
name_col(struct an_whatif_col *col, const struct sim_conf *c,
    const char *given)
{
	char buf[sizeof col->name];

	if (given != NULL)
		snprintf(col->name, sizeof col->name, "%s", given);
	else {
		simconf_format(c, buf, sizeof buf);
		snprintf(col->name, sizeof col->name, "%s",
		    buf[0] ? buf : "defaults");
	}
	if (col->name[0] == '\0')
		snprintf(col->name, sizeof col->name, "defaults");
}

/* The column sim of setting k: made and seeded as the pass starts. */
static void
sim_make(struct wctx *c, struct wsim *x, struct an_whatif_col *col,
    const struct start *st)
{
	x->col = col;
	x->sim = sim_new(&col->conf, c->w->capacity, NULL);
	if (col->exact_start)
		(void)seed_exact(x->sim, st);
	else
		col->pre_oom = seed_again(x->sim, st);
	x->base_allocs = sim_stats(x->sim)->device_allocs;
	x->base_frees = sim_stats(x->sim)->device_frees;
}

/* Everything a pass needs before its first event: the recorded
 * settings, the steps, the start state (the replay moved to -1), the
 * capacity, the columns and their sims (the agreement pass's first,
 * unless c->no_agree). */
static int
wctx_open(struct wctx *c, const struct snapshot *s, uint32_t d,
    struct replay *r, const struct an_whatif_opts *o, struct an_whatif *w,
    struct start *st, struct sv_error *err)
{
	struct sim_hooks hk;
	const struct replay_info *ri = replay_info(r);
	uint32_t k, nc;

	memset(w, 0, sizeof *w);
	memset(st, 0, sizeof *st);
	w->device = d;
	w->agree.first_diff = -1;
	w->agree.first_misplaced = -1;
	w->capacity_oom_ev = -1;
	w->requested_peak_ev = -1;
	c->s = s;
	c->t = snap_trace_of(s, d);
	c->n = c->t != NULL ? c->t->n : 0;
	c->r = r;
	c->w = w;
	c->run_end = -1;
	c->run_owner = -1;
	c->force_ev = -1;
	c->skip_to = -1;
	w->n_events = c->n;
	avl_init(&c->rsegs, sizeof(struct rseg_pool));

	w->settings_from_file = simconf_from_snapshot(s, &w->recorded);
	w->recorded.pad = ri->npu_rounding ? 32 : 0;
	if (!w->settings_from_file && !w->recorded.expandable &&
	    trace_maps(c->t, c->n)) {
		w->recorded.expandable = 1;
		w->expandable_inferred = 1;
	}

	if (!o->no_steps && an_steps_find(s, d, &w->steps, err) != 0)
		return -1;
	if (w->steps.n > 0) {
		w->step = xcalloc(w->steps.n, sizeof *w->step);
		for (k = 0; k < w->steps.n; k++) {
			w->step[k].first = w->steps.steps[k].first;
			w->step[k].last = w->steps.steps[k].last;
			w->step[k].allocated_peak_ev = -1;
		}
	}

	if (replay_seek(r, -1, err) != 0)
		return -1;
	start_copy(replay_state(r), st);
	note_start(w, st, ri);
	c->rec_reserved = st->reserved;
	c->track_pools = has_private_pools(s, d, st);
	for (k = 0; c->track_pools && k < st->n_segs; k++)
		rseg_add(c, st->segs[k].addr, st->segs[k].size,
		    st->segs[k].pool_id);

	if (o->capacity > 0) {
		w->capacity = o->capacity;
		w->capacity_source = AN_WI_CAP_GIVEN;
	} else
		capacity_from_oom(c, st->reserved);

	nc = o->n_confs > AN_WHATIF_MAX_COLS ? AN_WHATIF_MAX_COLS :
	    o->n_confs;
	w->n_cols = nc + 1;
	w->cols = xcalloc(w->n_cols, sizeof *w->cols);
	c->sims = xcalloc(nc + 1, sizeof *c->sims);

	/* the recording, and the agreement pass under its settings */
	w->cols[0].recorded = 1;
	w->cols[0].conf = w->recorded;
	snprintf(w->cols[0].name, sizeof w->cols[0].name, "recorded");
	col_init(w, &w->cols[0], o->series);
	c->n_sims = 0;
	if (!c->no_agree) {
		memset(&hk, 0, sizeof hk);
		hk.ctx = c;
		hk.dev = hook_dev;
		hk.addr_hint = hook_addr;
		c->sims[0].agree = 1;
		c->sims[0].col = NULL;
		c->sims[0].sim = sim_new(&w->recorded, 0, &hk);
		w->agree.n_unseeded = seed_exact(c->sims[0].sim, st);
		if (w->agree.n_unseeded > 0)
			w->agree.reasons |= AN_WI_SEED;
		c->n_sims = 1;
	}

	for (k = 0; k < nc; k++) {
		struct an_whatif_col *col = &w->cols[k + 1];

		col->conf = o->confs[k];
		col->conf.pad = w->recorded.pad;
		name_col(col, &o->confs[k], o->names ? o->names[k] : NULL);
		col_init(w, col, o->series);
		col->exact_start = simconf_equal(&col->conf, &w->recorded);
		sim_make(c, &c->sims[c->n_sims++], col, st);
	}
	return 0;
}

static void
wctx_close(struct wctx *c, struct start *st)
{
	uint32_t k;

	for (k = 0; k < c->n_sims; k++)
		sim_free(c->sims[k].sim);
	free(c->sims);
	free(c->rec.v);
	free(c->simq.v);
	avl_destroy(&c->rsegs);
	free(st->segs);
	free(st->blks);
	memset(c, 0, sizeof *c);
}

int
an_whatif(const struct snapshot *s, uint32_t d, struct replay *r,
    const struct an_whatif_opts *o, struct an_whatif *out,
    struct sv_error *err)
{
	struct wctx c;
	struct an_whatif *w = out;
	struct start st;
	uint32_t k;
	int rc = -1;

	memset(&c, 0, sizeof c);
	if (wctx_open(&c, s, d, r, o, w, &st, err) != 0)
		goto out;
	if (run_pass(&c, 0, c.n, err) != 0)
		goto out;

	for (k = 0; k < c.n_sims; k++) {
		const struct sim_stats *ss = sim_stats(c.sims[k].sim);

		if (c.sims[k].agree) {
			w->agree.n_implicit_frees = 0;
			continue;
		}
		c.sims[k].col->end_reserved = ss->reserved;
		c.sims[k].col->end_segments = ss->segments;
		c.sims[k].col->device_allocs = ss->device_allocs -
		    c.sims[k].base_allocs;
		c.sims[k].col->device_frees = ss->device_frees -
		    c.sims[k].base_frees;
	}
	if (recorded_state(&c, err) != 0)
		goto out;
	w->agree.exact = w->agree.first_diff < 0 &&
	    w->agree.seg_allocs_ok == w->agree.seg_allocs &&
	    w->agree.seg_frees_ok == w->agree.seg_frees &&
	    w->agree.sim_extra == 0;
	if (w->agree.n_unknown_frees > 0)
		w->agree.reasons |= AN_WI_SKIPPED;
	rc = 0;
out:
	wctx_close(&c, &st);
	if (rc != 0)
		an_whatif_destroy(w);
	return rc;
}

/* ---- the simulated state at an event ------------------------------------- */

struct an_whatif_walk {
	struct wctx c;
	struct an_whatif w;
	struct start st;
	struct u64map tag_ev;
	int64_t at;			/* the events applied: up to at */
	struct sim_state ss;
	struct replay_state rs;
	uint64_t events_run;
};

struct an_whatif_walk *
an_whatif_walk_new(const struct snapshot *s, uint32_t d, struct replay *r,
    const struct sim_conf *conf, uint64_t capacity, struct sv_error *err)
{
	struct an_whatif_walk *k = xcalloc(1, sizeof *k);
	struct an_whatif_opts o;

	memset(&o, 0, sizeof o);
	o.confs = conf;
	o.n_confs = 1;
	o.capacity = capacity;
	o.no_steps = 1;
	k->c.no_agree = 1;
	u64map_init(&k->tag_ev);
	if (wctx_open(&k->c, s, d, r, &o, &k->w, &k->st, err) != 0) {
		an_whatif_walk_free(k);
		return NULL;
	}
	k->c.tag_ev = &k->tag_ev;
	k->at = -1;
	return k;
}

/* Back to the state before the first event: the sim made again. */
static void
walk_restart(struct an_whatif_walk *k)
{
	struct wctx *c = &k->c;
	uint32_t i;

	sim_free(c->sims[0].sim);
	memset(&c->sims[0], 0, sizeof c->sims[0]);
	c->run_end = -1;
	c->run_owner = -1;
	c->force_ev = -1;
	c->skip_to = -1;
	c->rec_reserved = k->st.reserved;
	avl_destroy(&c->rsegs);
	avl_init(&c->rsegs, sizeof(struct rseg_pool));
	for (i = 0; c->track_pools && i < k->st.n_segs; i++)
		rseg_add(c, k->st.segs[i].addr, k->st.segs[i].size,
		    k->st.segs[i].pool_id);
	u64map_destroy(&k->tag_ev);
	u64map_init(&k->tag_ev);
	sim_make(c, &c->sims[0], &k->w.cols[1], &k->st);
	k->at = -1;
}

int
an_whatif_walk_seek(struct an_whatif_walk *k, int64_t at,
    struct sv_error *err)
{
	uint64_t from;

	if (at < -1 || at >= (int64_t)k->c.n)
		return sv_error_set(err, SV_ERR_USAGE, SV_NO_OFFSET,
		    "event %" PRId64 " out of range (-1 .. %" PRId64 ")", at,
		    (int64_t)k->c.n - 1);
	if (at < k->at)
		walk_restart(k);
	from = (uint64_t)(k->at + 1);
	if (run_pass(&k->c, from, (uint64_t)(at + 1), err) != 0) {
		/* a pass stopped half way: start again next time */
		walk_restart(k);
		return -1;
	}
	k->events_run += (uint64_t)(at + 1) - from;
	k->at = at;
	return 0;
}

const struct replay_state *
an_whatif_walk_state(struct an_whatif_walk *k)
{
	struct replay_state *rs = &k->rs;
	uint32_t i;
	uint64_t ev;

	sim_state(k->c.sims[0].sim, &k->ss);
	memset(rs, 0, sizeof *rs);
	for (i = 0; i < k->ss.n_blks; i++) {
		struct replay_block *b = &k->ss.blks[i];

		if (k->ss.tags[i] == 0 || b->state == SNAP_BLOCK_INACTIVE)
			continue;
		if (u64map_get(&k->tag_ev, k->ss.tags[i], &ev)) {
			b->alloc_ev = (int64_t)ev;
			b->last_ev = (int64_t)ev;
			b->stack = snap_ev_stack(k->c.t, ev);
		}
		if (b->state == SNAP_BLOCK_ACTIVE_ALLOCATED)
			rs->allocated += b->size;
		rs->active += b->size;
		rs->requested += b->requested_size;
	}
	for (i = 0; i < k->ss.n_segs; i++)
		rs->reserved += k->ss.segs[i].size;
	rs->at = k->at;
	rs->segments = k->ss.segs;
	rs->n_segments = k->ss.n_segs;
	rs->blocks = k->ss.blks;
	rs->n_blocks = k->ss.n_blks;
	return rs;
}

const struct an_whatif_col *
an_whatif_walk_col(const struct an_whatif_walk *k)
{
	return &k->w.cols[1];
}

const struct an_whatif *
an_whatif_walk_info(const struct an_whatif_walk *k)
{
	return &k->w;
}

uint64_t
an_whatif_walk_events(const struct an_whatif_walk *k)
{
	return k->events_run;
}

void
an_whatif_walk_free(struct an_whatif_walk *k)
{
	if (k == NULL)
		return;
	wctx_close(&k->c, &k->st);
	an_whatif_destroy(&k->w);
	u64map_destroy(&k->tag_ev);
	sim_state_destroy(&k->ss);
	free(k);
}

void
an_whatif_destroy(struct an_whatif *w)
{
	uint32_t k;

	for (k = 0; k < w->n_cols; k++) {
		free(w->cols[k].step_peak);
		free(w->cols[k].series);
	}
	free(w->cols);
	free(w->step);
	an_steps_destroy(&w->steps);
	memset(w, 0, sizeof *w);
}

/* ---- words --------------------------------------------------------------- */

static const char *const reason_names[] = {
	"pre_trace", "npu", "unknown_actions", "start_uncertain",
	"start_not_seeded", "skipped_events", "garbage_collection",
	"expandable_before_trace", "npu_workspace", "failed_device_allocs",
	"private_pool_released"
};

const char *
an_whatif_reason_name(unsigned bit)
{
	unsigned k = 0;

	while (k < 31 && !(bit & (1u << k)))
		k++;
	return k < sizeof reason_names / sizeof reason_names[0] ?
	    reason_names[k] : "other";
}

const char *
an_whatif_reason_text(const struct an_whatif *w, unsigned bit, char *buf,
    size_t size)
{
	const struct an_whatif_agree *g = &w->agree;
	char a[32], b[32];

	if (!(g->reasons & bit))
		return NULL;
	switch (bit) {
	case AN_WI_PRE_TRACE:
		snprintf(buf, size, "the trace starts after the run did (%s "
		    "live block%s before the first event, %s free%s of blocks "
		    "allocated before it): their segments and blocks come "
		    "from the replayed state before the first event, not "
		    "from a simulation",
		    sv_fmt_count(a, sizeof a, g->n_pre_blocks),
		    g->n_pre_blocks == 1 ? "" : "s",
		    sv_fmt_count(b, sizeof b, g->n_free_no_alloc),
		    g->n_free_no_alloc == 1 ? "" : "s");
		break;
	case AN_WI_NPU:
		snprintf(buf, size, "torch_npu's allocator: its rounding "
		    "((size + 32) rounded up to 512) is simulated; its 16 KiB "
		    "alignment of large blocks in expandable segments is not "
		    "(%s allocation%s of the trace %s it)",
		    sv_fmt_count(a, sizeof a, g->n_aligned),
		    g->n_aligned == 1 ? "" : "s",
		    g->n_aligned == 1 ? "shows" : "show");
		break;
	case AN_WI_UNKNOWN:
		snprintf(buf, size, "%s event%s with an action snapview does "
		    "not know %s skipped", sv_fmt_count(a, sizeof a,
		    g->n_unknown), g->n_unknown == 1 ? "" : "s",
		    g->n_unknown == 1 ? "was" : "were");
		break;
	case AN_WI_UNDO:
		snprintf(buf, size, "the state before the trace is uncertain: "
		    "the backward replay could not undo %s event%s",
		    sv_fmt_count(a, sizeof a, g->n_undo),
		    g->n_undo == 1 ? "" : "s");
		break;
	case AN_WI_SEED:
		snprintf(buf, size, "%s segment%s of the state before the "
		    "trace could not be seeded (overlapping, or blocks that "
		    "do not tile it)", sv_fmt_count(a, sizeof a,
		    g->n_unseeded), g->n_unseeded == 1 ? "" : "s");
		break;
	case AN_WI_SKIPPED:
		snprintf(buf, size, "%s free%s of blocks the simulation did "
		    "not hold (events the recorder skipped, or blocks "
		    "released earlier by a retry)",
		    sv_fmt_count(a, sizeof a, g->n_unknown_frees),
		    g->n_unknown_frees == 1 ? "" : "s");
		break;
	case AN_WI_GC:
		snprintf(buf, size, "garbage_collection_threshold is set: "
		    "what it frees depends on the memory fraction, which the "
		    "file does not record");
		break;
	case AN_WI_ES_START:
		snprintf(buf, size, "an expandable segment existed before "
		    "the trace: its reservation is taken to start at its "
		    "lowest mapped page");
		break;
	case AN_WI_WORKSPACE:
		snprintf(buf, size, "torch_npu workspace triples describe the "
		    "state at the dump, not requests: not simulated");
		break;
	case AN_WI_RETRY:
		snprintf(buf, size, "%s malloc%s found the device full in the "
		    "recording (cached blocks released, then a new segment "
		    "or an OOM): the simulation's device allocation fails "
		    "there too", sv_fmt_count(a, sizeof a, g->n_forced),
		    g->n_forced == 1 ? "" : "s");
		break;
	case AN_WI_PRIVATE:
		snprintf(buf, size, "a private pool (CUDA graph, MemPool) "
		    "was released: the simulation frees it from then on");
		break;
	default:
		return NULL;
	}
	return buf;
}

void
an_whatif_agree_line(const struct an_whatif *w, char *buf, size_t size)
{
	const struct an_whatif_agree *g = &w->agree;
	char a[32], b[32], c[32], d[32], e[32], f[32];

	snprintf(buf, size, "reproduces %s of %s segment allocation%s and "
	    "%s of %s segment free%s; %s of %s allocations at the recorded "
	    "address: %s",
	    sv_fmt_count(a, sizeof a, g->seg_allocs_ok),
	    sv_fmt_count(b, sizeof b, g->seg_allocs),
	    g->seg_allocs == 1 ? "" : "s",
	    sv_fmt_count(c, sizeof c, g->seg_frees_ok),
	    sv_fmt_count(d, sizeof d, g->seg_frees),
	    g->seg_frees == 1 ? "" : "s",
	    sv_fmt_count(e, sizeof e, g->allocs_at_addr),
	    sv_fmt_count(f, sizeof f, g->allocs),
	    g->exact && g->allocs_at_addr == g->allocs ? "exact" :
	    g->exact ? "every segment exact" : "not exact");
}
