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
#include "util/xalloc.h"

/* A sampled event: its groups are pairs[off .. off + n). */
struct smp {
	int64_t ev;
	uint64_t off, n;
};

/* An element alive the whole trace, by its address. */
struct ghost {
	uint64_t addr, k;
};

struct tl_samples {
	int ok;                  /* 0 not set up, 1 set up, -1 cannot */
	char why[320];
	uint32_t max_groups;
	struct smp *s;           /* by event */
	size_t n_s, cap_s;
	struct tl_group_sample *pairs;
	uint64_t n_pairs, cap_pairs;
	struct ghost *ghost;     /* by address */
	uint64_t n_ghost;
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

	if (st < 0 || st >= TL_STACK_COUNT || m->groups_ok[st] != 0)
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
	free(s->ghost);
	free(s->acc);
	free(s->mark);
	free(s->touched);
	free(s);
	m->samples[st] = NULL;
}

static int
cmp_ghost(const void *a, const void *b)
{
	const struct ghost *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The mode's set-up on m, and the elements alive the whole trace by
 * address (the last n_ghost elements). */
static int
set_up(struct tl_model *m, const struct tl_sampler *how,
    struct tl_samples *s)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t k, n = tl->n_ghost < tl->n_elems ? tl->n_ghost : tl->n_elems;

	if (how->setup(m, &s->max_groups, s->why, sizeof s->why) != 0)
		return -1;
	s->ghost = xcalloc(n + 1, sizeof *s->ghost);
	for (k = tl->n_elems - n; k < tl->n_elems; k++) {
		struct idx_elem e = idx_tl_elem(tl, k);

		s->ghost[s->n_ghost].addr = e.addr;
		s->ghost[s->n_ghost++].k = k;
	}
	qsort(s->ghost, s->n_ghost, sizeof *s->ghost, cmp_ghost);
	s->acc = xcalloc((size_t)s->max_groups + 1, sizeof *s->acc);
	s->mark = xcalloc((size_t)s->max_groups + 1, 1);
	s->touched = xcalloc((size_t)s->max_groups + 1, sizeof *s->touched);
	return 0;
}

/* The element of live block b of segment sg, and its id (UINT64_MAX
 * for one made from the block). Returns -1 when the timeline has no
 * such element. */
static int
elem_of(const struct tl_model *m, const struct tl_sampler *how,
    const struct tl_samples *s, const struct replay_segment *sg,
    const struct replay_block *b, int64_t ev, struct idx_elem *e,
    uint64_t *k)
{
	const struct idx_timeline *tl = m->tl;
	uint64_t lo = 0, hi = s->n_ghost;

	if (b->alloc_ev >= 0) {
		/* the element its alloc event starts */
		if ((uint64_t)b->alloc_ev >= tl->n_events)
			return -1;
		*k = idx_tl_ev_elem(tl, (uint64_t)b->alloc_ev);
		if (*k >= tl->n_elems)
			return -1;
		*e = idx_tl_elem(tl, *k);
		return e->alloc_ev == b->alloc_ev ? 0 : -1;
	}
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (s->ghost[mid].addr < b->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->n_ghost && s->ghost[lo].addr == b->addr) {
		*k = s->ghost[lo].k;
		*e = idx_tl_elem(tl, *k);
		return 0;
	}
	/* allocated before the trace, freed in it: its element, where
	 * the mode needs its free */
	if (how->pre_elem != NULL) {
		if (how->pre_elem(m, b->addr, ev, k) != 0 ||
		    *k >= tl->n_elems)
			return -1;
		*e = idx_tl_elem(tl, *k);
		return (e->flags & IDX_ELEM_PRE) && e->addr == b->addr &&
		    e->free_ev > ev ? 0 : -1;
	}
	/* else one made as the index makes it from the free (size, stack,
	 * stream), which the backward replay gave the block */
	memset(e, 0, sizeof *e);
	e->addr = b->addr;
	e->size = b->requested_size;
	e->stream = sg->stream;
	e->alloc_ev = e->free_ev = IDX_NO_EVENT;
	e->stack = b->stack;
	e->flags = IDX_ELEM_PRE;
	*k = UINT64_MAX;
	return 0;
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

	if (s->n_s == s->cap_s) {
		s->cap_s = s->cap_s ? 2 * s->cap_s : 256;
		s->s = xreallocarray(s->s, s->cap_s, sizeof *s->s);
	}
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

/* Sums the mode's groups in the state after event ev. */
static int
take(struct tl_model *m, const struct tl_sampler *how, struct tl_samples *s,
    struct replay *r, int64_t ev)
{
	const struct idx_timeline *tl = m->tl;
	const struct replay_state *rs;
	struct sv_error err;
	uint64_t total = 0, k;
	uint32_t i, j, grp;

	sv_error_clear(&err);
	if (replay_seek(r, ev, &err) != 0) {
		snprintf(s->why, sizeof s->why, "the replay: %s", err.msg);
		return -1;
	}
	rs = replay_state(r);
	for (i = 0; i < rs->n_segments; i++) {
		const struct replay_segment *sg = &rs->segments[i];

		for (j = 0; j < sg->n_blocks &&
		    sg->first_block + j < rs->n_blocks; j++) {
			const struct replay_block *b =
			    &rs->blocks[sg->first_block + j];
			struct idx_elem e;

			if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED &&
			    b->state != SNAP_BLOCK_ACTIVE_PENDING_FREE)
				continue;
			if (elem_of(m, how, s, sg, b, ev, &e, &k) != 0) {
				snprintf(s->why, sizeof s->why, "the block at "
				    "0x%" PRIx64 " after event %" PRId64
				    " is no allocation of the timeline",
				    b->addr, ev);
				goto bad;
			}
			total += e.size;
			grp = how->group_of(m, &e, k);
			if (grp < s->max_groups)
				acc_add(s, grp, &e, k);
		}
	}
	if (total != idx_tl_total(tl, ev)) {
		snprintf(s->why, sizeof s->why, "the replay's live bytes after "
		    "event %" PRId64 " are not the timeline's", ev);
		goto bad;
	}
	push_sample(s, ev);
	return 0;
bad:
	for (i = 0; i < s->n_touched; i++) {
		memset(&s->acc[s->touched[i]], 0, sizeof s->acc[0]);
		s->mark[s->touched[i]] = 0;
	}
	s->n_touched = 0;
	return -1;
}

/* Where ev is or goes among the samples (s->s, by event). */
static size_t
sample_at(const struct tl_samples *s, int64_t ev)
{
	size_t lo = 0, hi = s->n_s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->s[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

int
tl_sample_cover(struct tl_model *m, int st, const struct tl_sampler *how,
    struct replay *r, const int64_t *ev, size_t n, long long budget_us,
    int *moved, char *why, size_t size)
{
	struct tl_samples *s;
	struct smp last;
	long long t0 = sv_mono_us();
	size_t i, at, before;
	int left = 0;

	*moved = 0;
	if (!tl_sample_able(m, st) || r == NULL) {
		snprintf(why, size, "%s", st >= 0 && st < TL_STACK_COUNT &&
		    m->samples[st] != NULL ? m->samples[st]->why :
		    "not sampled");
		return -1;
	}
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
		if (budget_us > 0 && s->n_s > before &&
		    sv_mono_us() - t0 >= budget_us) {
			left = 1;
			break;
		}
		*moved = 1;
		if (take(m, how, s, r, ev[i]) != 0) {
			s->ok = -1;
			break;
		}
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
