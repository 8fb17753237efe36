/*
 * Sampled bands of a grouped mode from replay states. See tl_sample.h.
 */
#include "config.h"

#include "render/tl_sample.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/search.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* A sampled event: its groups are pairs[off .. off + n). */
struct smp {
	int64_t ev;
	uint64_t off, n;
};

/* An element of a live set: element k of the timeline. */
struct lelem {
	struct idx_elem e;
	uint64_t k;
};

/* The replay's live blocks after an event, as elements: ids[off ..
 * off + n) index tl_live.el. */
struct lset {
	int64_t ev;
	uint64_t off, n;
};

/* What the replay's states gave, for every mode (a seek is most of a
 * sample's cost): the live sets by event, their elements each once. */
struct tl_live {
	int ok;                  /* 1, or -1: a state disagreed */
	char why[320];
	struct lelem *el;
	size_t n_el, cap_el;
	struct u64map by_alloc;  /* alloc event -> el */
	struct u64map by_addr;   /* alive before the trace: address -> el */
	struct lset *set;        /* by event */
	size_t n_set, cap_set;
	uint32_t *ids;
	size_t n_ids, cap_ids;
};

#define GRP_TODO UINT32_MAX

struct tl_samples {
	int ok;                  /* 0 not set up, 1 set up, -1 cannot */
	char why[320];
	uint32_t max_groups;
	struct smp *s;           /* by event */
	size_t n_s, cap_s;
	struct tl_group_sample *pairs;
	uint64_t n_pairs, cap_pairs;
	/* per element of the live sets: its group, or GRP_TODO */
	uint32_t *grp;
	size_t n_grp;
	/* one sample's sums: per group, and the groups it touched */
	struct tl_group_sample *acc;
	uint8_t *mark;
	uint32_t *touched;
	uint32_t n_touched;
};

int
tl_sample_able(const struct tl_model *m, int st)
{
	const struct tl_samples *s;

	if (st < 0 || st >= TL_STACK_COUNT || m->groups_ok[st] != 0 ||
	    (m->live != NULL && m->live->ok < 0))
		return 0;
	s = m->samples[st];
	return s == NULL || s->ok >= 0;
}

size_t
tl_sample_count(const struct tl_model *m, int st)
{
	return st >= 0 && st < TL_STACK_COUNT && m->samples[st] != NULL ?
	    m->samples[st]->n_s : 0;
}

/* Drops m's sampled curves of st, if it has any. */
static void
drop_groups(struct tl_model *m, int st)
{
	if (m->groups_sampled[st])
		tl_groups_destroy(&m->groups[st]);
	m->groups_sampled[st] = 0;
}

void
tl_sample_drop(struct tl_model *m, int st)
{
	struct tl_samples *s;

	if (st < 0 || st >= TL_STACK_COUNT)
		return;
	drop_groups(m, st);
	if ((s = m->samples[st]) == NULL)
		return;
	free(s->s);
	free(s->pairs);
	free(s->grp);
	free(s->acc);
	free(s->mark);
	free(s->touched);
	free(s);
	m->samples[st] = NULL;
}

void
tl_sample_live_drop(struct tl_model *m)
{
	struct tl_live *l = m->live;

	if (l == NULL)
		return;
	free(l->el);
	u64map_destroy(&l->by_alloc);
	u64map_destroy(&l->by_addr);
	free(l->set);
	free(l->ids);
	free(l);
	m->live = NULL;
}

/* m's live sets, made the first time. */
static struct tl_live *
live_of(struct tl_model *m)
{
	struct tl_live *l = m->live;

	if (l != NULL)
		return l;
	l = m->live = xcalloc(1, sizeof *l);
	l->ok = 1;
	u64map_init(&l->by_alloc);
	u64map_init(&l->by_addr);
	return l;
}

/* The mode's set-up on m. */
static int
set_up(struct tl_model *m, const struct tl_sampler *how,
    struct tl_samples *s)
{
	if (how->setup(m, &s->max_groups, s->why, sizeof s->why) != 0)
		return -1;
	s->acc = xcalloc((size_t)s->max_groups + 1, sizeof *s->acc);
	s->mark = xcalloc((size_t)s->max_groups + 1, 1);
	s->touched = xcalloc((size_t)s->max_groups + 1, sizeof *s->touched);
	return 0;
}

/* The element of live block b after event ev, in l->el (*id): the one
 * met before with the same alloc event (or, alive before the trace, at
 * the same address), else the element its alloc event starts, else the
 * one alive before the trace at its address after ev (how->find_elem:
 * a free without alloc, whose free the category mode needs, or a
 * ghost). -1 when the timeline has no such element. */
static int
elem_of(struct tl_live *l, const struct tl_model *m,
    const struct tl_sampler *how, const struct replay_block *b, int64_t ev,
    uint64_t *id)
{
	const struct idx_timeline *tl = m->tl;
	struct lelem x;

	if (u64map_get(b->alloc_ev >= 0 ? &l->by_alloc : &l->by_addr,
	    b->alloc_ev >= 0 ? (uint64_t)b->alloc_ev : b->addr, id))
		return 0;
	if (l->n_el >= UINT32_MAX)
		return -1; /* ids are 32 bits */
	if (b->alloc_ev >= 0) {
		if ((uint64_t)b->alloc_ev >= tl->n_events)
			return -1;
		x.k = idx_tl_ev_elem(tl, (uint64_t)b->alloc_ev);
	} else
		x.k = how->find_elem(m, b->addr, ev);
	if (x.k >= tl->n_elems)
		return -1;
	x.e = idx_tl_elem(tl, x.k);
	if (x.e.alloc_ev != b->alloc_ev)
		return -1;
	XGROW(l->el, l->cap_el, l->n_el + 1);
	l->el[l->n_el] = x;
	*id = l->n_el++;
	u64map_put(b->alloc_ev >= 0 ? &l->by_alloc : &l->by_addr,
	    b->alloc_ev >= 0 ? (uint64_t)b->alloc_ev : b->addr, *id);
	return 0;
}

struct ev_bound {
	const void *a;
	int64_t ev;
};

static int
set_below(const void *ctx, uint64_t i)
{
	const struct ev_bound *b = ctx;

	return ((const struct lset *)b->a)[i].ev < b->ev;
}

/* Where ev is or goes among the live sets (by event). */
static size_t
set_at(const struct tl_live *l, int64_t ev)
{
	struct ev_bound b = {l->set, ev};

	return (size_t)sv_partition(0, l->n_set, set_below, &b);
}

/* The live set after event ev, made from the replay's state (which it
 * moves) when there is none yet; NULL (l->ok -1, l->why) when the state
 * is not the timeline's: a block with no element, or live bytes that
 * are not its total. */
static const struct lset *
live_set(struct tl_live *l, const struct tl_model *m,
    const struct tl_sampler *how, struct replay *r, int64_t ev, int *moved)
{
	const struct idx_timeline *tl = m->tl;
	const struct replay_state *rs;
	struct sv_error err;
	struct lset x;
	uint64_t total = 0, id;
	size_t at = set_at(l, ev);
	uint32_t i, j;

	if (at < l->n_set && l->set[at].ev == ev)
		return &l->set[at];
	sv_error_clear(&err);
	*moved = 1;
	if (replay_seek(r, ev, &err) != 0) {
		snprintf(l->why, sizeof l->why, "the replay: %s", err.msg);
		goto bad;
	}
	rs = replay_state(r);
	x.ev = ev;
	x.off = l->n_ids;
	x.n = 0;
	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];

		for (j = 0; j < sg->n_blocks &&
		    sg->first_block + j < rs->n_blocks; j++) {
			const struct replay_block *b =
			    &rs->blocks[sg->first_block + j];

			if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED &&
			    b->state != SNAP_BLOCK_ACTIVE_PENDING_FREE)
				continue;
			if (elem_of(l, m, how, b, ev, &id) != 0) {
				snprintf(l->why, sizeof l->why, "the block at "
				    "0x%" PRIx64 " after event %" PRId64
				    " is no allocation of the timeline",
				    b->addr, ev);
				goto bad;
			}
			total += l->el[id].e.size;
			XGROW(l->ids, l->cap_ids, l->n_ids + 1);
			l->ids[l->n_ids++] = (uint32_t)id;
			x.n++;
		}
	}
	if (total != idx_tl_total(tl, ev)) {
		snprintf(l->why, sizeof l->why, "the replay's live bytes after "
		    "event %" PRId64 " are not the timeline's", ev);
		goto bad;
	}
	XGROW(l->set, l->cap_set, l->n_set + 1);
	memmove(l->set + at + 1, l->set + at, (l->n_set - at) * sizeof *l->set);
	l->set[at] = x;
	l->n_set++;
	return &l->set[at];
bad:
	l->ok = -1;
	return NULL;
}

static void
acc_add(struct tl_samples *s, uint32_t grp, const struct idx_elem *e,
    uint64_t k)
{
	struct tl_group_sample *a = &s->acc[grp];

	if (!s->mark[grp]) {
		s->mark[grp] = 1;
		s->touched[s->n_touched++] = grp;
		a->grp = grp;
		a->max_elem = UINT64_MAX;
	}
	a->bytes += e->size;
	if (e->size >= a->max_size) {
		a->max_size = e->size;
		a->stack = e->stack;
		a->max_elem = k;
	}
}

/* Appends the sums of the sample after ev to the pairs, and the sample
 * to s->s (last: tl_sample_cover moves it to its place). */
static void
push_sample(struct tl_samples *s, int64_t ev)
{
	uint32_t i;

	XGROW(s->s, s->cap_s, s->n_s + 1);
	if (s->n_pairs + s->n_touched > s->cap_pairs) {
		s->cap_pairs = 2 * (s->n_pairs + s->n_touched) + 1024;
		s->pairs = xreallocarray(s->pairs, s->cap_pairs,
		    sizeof *s->pairs);
	}
	s->s[s->n_s].ev = ev;
	s->s[s->n_s].off = s->n_pairs;
	s->s[s->n_s].n = 0;
	for (i = 0; i < s->n_touched; i++) {
		struct tl_group_sample *a = &s->acc[s->touched[i]];

		if (a->bytes > 0) {
			s->pairs[s->n_pairs++] = *a;
			s->s[s->n_s].n++;
		}
		memset(a, 0, sizeof *a);
		s->mark[s->touched[i]] = 0;
	}
	s->n_touched = 0;
	s->n_s++;
}

/* Sums the mode's groups in live set x (after event x->ev), each
 * element's group found once per mode. */
static void
take(struct tl_model *m, const struct tl_sampler *how, struct tl_samples *s,
    const struct lset *x)
{
	struct tl_live *l = m->live;
	uint64_t i;

	if (s->n_grp < l->n_el) {
		s->grp = xreallocarray(s->grp, l->n_el + 1, sizeof *s->grp);
		for (i = s->n_grp; i < l->n_el; i++)
			s->grp[i] = GRP_TODO;
		s->n_grp = l->n_el;
	}
	for (i = 0; i < x->n; i++) {
		uint32_t id = l->ids[x->off + i];
		const struct lelem *le = &l->el[id];

		if (s->grp[id] == GRP_TODO)
			s->grp[id] = how->group_of(m, &le->e, le->k);
		if (s->grp[id] < s->max_groups)
			acc_add(s, s->grp[id], &le->e, le->k);
	}
	push_sample(s, x->ev);
}

static int
sample_below(const void *ctx, uint64_t i)
{
	const struct ev_bound *b = ctx;

	return ((const struct smp *)b->a)[i].ev < b->ev;
}

/* Where ev is or goes among the samples (s->s, by event). */
static size_t
sample_at(const struct tl_samples *s, int64_t ev)
{
	struct ev_bound b = {s->s, ev};

	return (size_t)sv_partition(0, s->n_s, sample_below, &b);
}

/* m's groups of st from every sample, in event order. */
static int
rebuild(struct tl_model *m, int st, struct tl_samples *s)
{
	struct tl_group_sample *p = xmalloc((s->n_pairs + 1) * sizeof *p);
	int64_t *ev = xmalloc((s->n_s + 1) * sizeof *ev);
	uint64_t *off = xmalloc((s->n_s + 1) * sizeof *off), n = 0;
	size_t i;
	int r;

	for (i = 0; i < s->n_s; i++) {
		ev[i] = s->s[i].ev;
		off[i] = n;
		if (s->s[i].n > 0) /* pairs is NULL before the first */
			memcpy(p + n, s->pairs + s->s[i].off,
			    s->s[i].n * sizeof *p);
		n += s->s[i].n;
	}
	off[s->n_s] = n;
	drop_groups(m, st);
	r = tl_groups_sampled(&m->groups[st], s->max_groups, ev, off, s->n_s,
	    p);
	if (r == 0)
		m->groups_sampled[st] = 1;
	else
		snprintf(s->why, sizeof s->why, "too many events to sample");
	free(p);
	free(ev);
	free(off);
	return r;
}

/* Is the time up for a call that has done something (budget_us 0: no
 * limit)? */
static int
time_up(long long t0, long long budget_us, int done)
{
	return budget_us > 0 && done && sv_mono_us() - t0 >= budget_us;
}

int
tl_sample_states(struct tl_model *m, const struct tl_sampler *how,
    struct replay *r, const int64_t *ev, size_t n, long long budget_us,
    int *moved, char *why, size_t size)
{
	struct tl_live *l = live_of(m);
	long long t0 = sv_mono_us();
	size_t i, before = l->n_set;

	*moved = 0;
	for (i = 0; i < n && l->ok > 0 && r != NULL; i++) {
		size_t at;

		if (ev[i] < -1 || ev[i] >= (int64_t)m->tl->n_events)
			continue;
		at = set_at(l, ev[i]);
		if (at < l->n_set && l->set[at].ev == ev[i])
			continue;
		if (time_up(t0, budget_us, l->n_set > before))
			return 1;
		(void)live_set(l, m, how, r, ev[i], moved);
	}
	if (l->ok < 0 || r == NULL) {
		snprintf(why, size, "%s", r == NULL ? "no replay" : l->why);
		return -1;
	}
	return 0;
}

int
tl_sample_cover(struct tl_model *m, int st, const struct tl_sampler *how,
    struct replay *r, const int64_t *ev, size_t n, long long budget_us,
    int *moved, char *why, size_t size)
{
	struct tl_samples *s;
	struct tl_live *l;
	const struct lset *x;
	struct smp last;
	long long t0 = sv_mono_us();
	size_t i, at, before;
	int left = 0;

	*moved = 0;
	if (!tl_sample_able(m, st) || r == NULL) {
		snprintf(why, size, "%s", st >= 0 && st < TL_STACK_COUNT &&
		    m->samples[st] != NULL ? m->samples[st]->why :
		    m->live != NULL && m->live->ok < 0 ? m->live->why :
		    "not sampled");
		return -1;
	}
	l = live_of(m);
	if ((s = m->samples[st]) == NULL)
		s = m->samples[st] = xcalloc(1, sizeof *s);
	if (s->ok == 0)
		s->ok = set_up(m, how, s) == 0 ? 1 : -1;
	before = s->n_s;
	/* in the order asked, each once, until the time is up */
	for (i = 0; i < n && s->ok > 0; i++) {
		if (ev[i] < -1 || ev[i] >= (int64_t)m->tl->n_events)
			continue;
		at = sample_at(s, ev[i]);
		if (at < s->n_s && s->s[at].ev == ev[i])
			continue;
		if (time_up(t0, budget_us, s->n_s > before)) {
			left = 1;
			break;
		}
		if ((x = live_set(l, m, how, r, ev[i], moved)) == NULL) {
			snprintf(s->why, sizeof s->why, "%s", l->why);
			s->ok = -1;
			break;
		}
		take(m, how, s, x);
		/* take appended it: to its place */
		last = s->s[s->n_s - 1];
		memmove(s->s + at + 1, s->s + at,
		    (s->n_s - 1 - at) * sizeof *s->s);
		s->s[at] = last;
	}
	if (s->ok > 0 && s->n_s > before && rebuild(m, st, s) != 0)
		s->ok = -1;
	if (s->ok < 0) {
		/* the mode waits for its curves */
		drop_groups(m, st);
		snprintf(why, size, "%s", s->why);
		return -1;
	}
	if (!m->groups_sampled[st]) {
		snprintf(why, size, "nothing sampled");
		return -1;
	}
	return left;
}
