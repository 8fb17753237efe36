/*
 * Replay engine tests: every action forward and undone, on hand-built
 * snapshots; a property test against a small independent allocator model
 * (ground truth at every event, checkpoints vs full replay, +-1 stepping,
 * checkpoint save/load); the real fixtures through snap_load.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "analysis/frag.h"
#include "analysis/oom.h"
#include "analysis/site.h"
#include "index/idx_timeline.h"
#include "index/idx.h"
#include "replay/replay.h"
#include "replay/replay_idx.h"
#include "replay/replay_int.h"
#include "snapshot/snap_load.h"
#include "util/xalloc.h"

#define MIB (1024ull * 1024)
#define A SNAP_BLOCK_ACTIVE_ALLOCATED
#define P SNAP_BLOCK_ACTIVE_PENDING_FREE
#define I SNAP_BLOCK_INACTIVE
#define BASE 0x7f0000000000ull

struct fb {
	uint64_t size;
	int state;
	uint64_t req;
};

/* Pushes a final segment with blocks; totals computed from them. */
static void
push_seg(struct snapshot *s, uint64_t addr, uint64_t stream, int large,
    int exp, const struct fb *b, int nb)
{
	struct snap_segment *sg = snap_push_segment(s);
	uint64_t off = addr;
	int i;

	sg->addr = addr;
	sg->stream = stream;
	sg->is_large = (uint8_t)large;
	sg->is_expandable = (uint8_t)exp;
	sg->first_block = s->n_blocks;
	sg->n_blocks = (uint32_t)nb;
	for (i = 0; i < nb; i++) {
		struct snap_block *k = snap_push_block(s);

		sg = &s->segments[s->n_segments - 1];
		k->addr = off;
		k->size = b[i].size;
		k->state = (uint8_t)b[i].state;
		k->requested_size = b[i].req;
		off += b[i].size;
		sg->total_size += b[i].size;
		if (b[i].state == A)
			sg->allocated_size += b[i].size;
		if (b[i].state != I) {
			sg->active_size += b[i].size;
			sg->requested_size += b[i].req;
		}
	}
	s->features |= SNAP_F_REQUESTED;
}

static void
ev(struct snapshot *s, unsigned action, uint64_t addr, uint64_t size)
{
	snap_trace_push(s, snap_trace_get(s, 0), action, addr, size, 0, 0);
}

static struct replay *
open_ok(const struct snapshot *s)
{
	struct sv_error err;
	struct replay *r = replay_new(s, 0, &err);

	ck_assert_ptr_nonnull(r);
	return r;
}

static void
seek_ok(struct replay *r, int64_t at)
{
	struct sv_error err;

	ck_assert_int_eq(replay_seek(r, at, &err), 0);
}

static uint64_t
check_issues(struct replay *r)
{
	struct sv_error err;
	struct replay_check c;
	uint64_t n, i;

	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	n = c.n_issues;
	for (i = 0; i < c.n_kept && i < 5; i++)
		fprintf(stderr, "issue ev %lld 0x%llx: %s\n",
		    (long long)c.issues[i].ev,
		    (unsigned long long)c.issues[i].addr, c.issues[i].msg);
	replay_check_destroy(&c);
	return n;
}

/* Asserts block k of the current state. */
static void
blk_is(struct replay *r, uint32_t k, uint64_t addr, uint64_t size, int state)
{
	const struct replay_state *st = replay_state(r);

	ck_assert_uint_lt(k, st->n_blocks);
	ck_assert_uint_eq(st->blocks[k].addr, addr);
	ck_assert_uint_eq(st->blocks[k].size, size);
	ck_assert_int_eq(st->blocks[k].state, state);
}

START_TEST(test_replay_split_merge_pending)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{512, A, 100}, {2 * MIB - 512, I, 0}};
	struct replay *r;
	const struct replay_state *st;

	push_seg(s, BASE, 0, 0, 0, fin, 2);
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);      /* 0 */
	ev(s, SNAP_ALLOC, BASE, 100);                  /* 1 */
	ev(s, SNAP_ALLOC, BASE + 512, 1000);           /* 2 */
	ev(s, SNAP_ALLOC, BASE + 1536, 600);           /* 3 */
	ev(s, SNAP_FREE_REQUESTED, BASE + 512, 1000);  /* 4 */
	ev(s, SNAP_FREE_COMPLETED, BASE + 512, 1000);  /* 5 */
	ev(s, SNAP_FREE_REQUESTED, BASE + 1536, 600);  /* 6 */
	ev(s, SNAP_FREE_COMPLETED, BASE + 1536, 600);  /* 7 */
	r = open_ok(s);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 0);
	seek_ok(r, 0);
	blk_is(r, 0, BASE, 2 * MIB, I);
	seek_ok(r, 3);
	blk_is(r, 0, BASE, 512, A);
	blk_is(r, 1, BASE + 512, 1024, A);
	blk_is(r, 2, BASE + 1536, 1024, A);
	blk_is(r, 3, BASE + 2560, 2 * MIB - 2560, I);
	seek_ok(r, 4);
	blk_is(r, 1, BASE + 512, 1024, P);
	seek_ok(r, 5); /* freed between two allocated blocks: no merge */
	blk_is(r, 1, BASE + 512, 1024, I);
	blk_is(r, 2, BASE + 1536, 1024, A);
	seek_ok(r, 7); /* merges with both neighbours */
	st = replay_state(r);
	ck_assert_uint_eq(st->n_blocks, 2);
	blk_is(r, 1, BASE + 512, 2 * MIB - 512, I);
	ck_assert_uint_eq(st->allocated, 512);
	ck_assert_uint_eq(st->requested, 100);
	seek_ok(r, 4); /* stepping back through the undo log */
	blk_is(r, 1, BASE + 512, 1024, P);
	blk_is(r, 2, BASE + 1536, 1024, A);
	ck_assert_uint_eq(replay_state(r)->blocks[2].alloc_ev, 3);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_pre_trace_free)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{2 * MIB, I, 0}};
	struct replay *r;
	const struct replay_info *in;

	push_seg(s, BASE, 0, 0, 0, fin, 1);
	ev(s, SNAP_FREE_REQUESTED, BASE + 4096, 1000);
	ev(s, SNAP_FREE_COMPLETED, BASE + 4096, 1000);
	ev(s, SNAP_FREE_COMPLETED, BASE, 3000); /* no free_requested */
	r = open_ok(s);
	seek_ok(r, -1);
	blk_is(r, 0, BASE, 3072, A);
	blk_is(r, 1, BASE + 3072, 1024, I);
	blk_is(r, 2, BASE + 4096, 1024, A);
	ck_assert_int_eq(replay_state(r)->blocks[0].alloc_ev, -1);
	ck_assert_uint_eq(replay_state(r)->blocks[2].requested_size, 1000);
	seek_ok(r, 0);
	blk_is(r, 2, BASE + 4096, 1024, P);
	in = replay_info(r);
	ck_assert_uint_eq(in->n_pre_blocks, 2);
	ck_assert_uint_eq(in->n_free_no_alloc, 2);
	ck_assert_uint_eq(in->n_ghost, 0);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_ghost_oom_unknown)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, A, 1000}, {1024, A, 700},
	    {2 * MIB - 2048, I, 0}};
	struct replay *r;
	unsigned unk = snap_action_lookup(s, "frobnicate", 10);

	push_seg(s, BASE, 0, 0, 0, fin, 3);
	ev(s, SNAP_ALLOC, BASE + 1024, 700);
	ev(s, SNAP_OOM, 12345, 40 * MIB);
	ev(s, SNAP_SNAPSHOT, 0, 4096);
	ev(s, unk, BASE, 1);
	r = open_ok(s);
	seek_ok(r, -1);
	blk_is(r, 0, BASE, 1024, A);
	blk_is(r, 1, BASE + 1024, 2 * MIB - 1024, I);
	seek_ok(r, 3);
	blk_is(r, 1, BASE + 1024, 1024, A);
	ck_assert_uint_eq(replay_info(r)->n_ghost, 1);
	ck_assert_uint_eq(replay_info(r)->n_unknown, 1);
	ck_assert_uint_eq(replay_info(r)->n_oom, 1);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_large_split_rule)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{5 * MIB, A, 5 * MIB}, {15 * MIB, I, 0}};
	uint64_t big = 19 * MIB + MIB / 2;
	struct replay *r;

	push_seg(s, BASE, 0, 1, 0, fin, 2);
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 20 * MIB);
	ev(s, SNAP_ALLOC, BASE, big);           /* remainder 0.5 MiB: whole */
	ev(s, SNAP_FREE_REQUESTED, BASE, big);
	ev(s, SNAP_FREE_COMPLETED, BASE, big);
	ev(s, SNAP_ALLOC, BASE, 5 * MIB);       /* remainder 15 MiB: split */
	r = open_ok(s);
	seek_ok(r, 1);
	ck_assert_uint_eq(replay_state(r)->n_blocks, 1);
	blk_is(r, 0, BASE, 20 * MIB, A);
	seek_ok(r, 4);
	blk_is(r, 0, BASE, 5 * MIB, A);
	blk_is(r, 1, BASE + 5 * MIB, 15 * MIB, I);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 0);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_segment_free)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{2 * MIB, I, 0}};
	struct replay *r;

	push_seg(s, BASE + 8 * MIB, 0, 0, 0, fin, 1);
	ev(s, SNAP_SEGMENT_FREE, BASE, 20 * MIB);      /* before the trace */
	ev(s, SNAP_SEGMENT_ALLOC, BASE + 4 * MIB, 2 * MIB);
	ev(s, SNAP_SEGMENT_ALLOC, BASE + 8 * MIB, 2 * MIB);
	ev(s, SNAP_SEGMENT_FREE, BASE + 4 * MIB, 2 * MIB);
	r = open_ok(s);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 1);
	ck_assert_uint_eq(replay_state(r)->segments[0].size, 20 * MIB);
	ck_assert_uint_eq(replay_state(r)->segments[0].is_large, 1);
	seek_ok(r, 2);
	ck_assert_uint_eq(replay_state(r)->n_segments, 2);
	ck_assert_uint_eq(replay_state(r)->reserved, 4 * MIB);
	seek_ok(r, 3);
	ck_assert_uint_eq(replay_state(r)->n_segments, 1);
	seek_ok(r, 1);
	ck_assert_uint_eq(replay_state(r)->segments[0].addr, BASE + 4 * MIB);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_expandable)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, A, 1000}, {4 * MIB - 1024, I, 0}};
	struct replay *r;
	const struct replay_state *st;

	push_seg(s, BASE, 7, 0, 1, fin, 2);
	snap_trace_get(s, 0);
	ev(s, SNAP_SEGMENT_MAP, BASE, 2 * MIB);              /* 0 */
	ev(s, SNAP_SEGMENT_MAP, BASE + 4 * MIB, 2 * MIB);    /* 1: 2 runs */
	ev(s, SNAP_SEGMENT_MAP, BASE + 2 * MIB, 2 * MIB);    /* 2: merged */
	ev(s, SNAP_ALLOC, BASE, 1000);                       /* 3 */
	ev(s, SNAP_SEGMENT_UNMAP, BASE + 2 * MIB, 2 * MIB);  /* 4: split */
	ev(s, SNAP_SEGMENT_MAP, BASE + 2 * MIB, 2 * MIB);    /* 5 */
	ev(s, SNAP_SEGMENT_UNMAP, BASE + 4 * MIB, 2 * MIB);  /* 6: trim */
	/* streams: the builder pushed 0; the segment is on stream 7 */
	{
		struct snap_trace *t = snap_trace_get(s, 0);
		uint64_t i;

		for (i = 0; i < t->n; i++)
			t->stream[i] = 7;
	}
	r = open_ok(s);
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 0);
	seek_ok(r, 1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 2);
	seek_ok(r, 2);
	st = replay_state(r);
	ck_assert_uint_eq(st->n_segments, 1);
	ck_assert_uint_eq(st->segments[0].size, 6 * MIB);
	ck_assert_uint_eq(st->n_blocks, 1);
	ck_assert_uint_eq(st->segments[0].is_expandable, 1);
	seek_ok(r, 4);
	st = replay_state(r);
	ck_assert_uint_eq(st->n_segments, 2);
	blk_is(r, 0, BASE, 1024, A);
	blk_is(r, 1, BASE + 1024, 2 * MIB - 1024, I);
	blk_is(r, 2, BASE + 4 * MIB, 2 * MIB, I);
	seek_ok(r, 6);
	st = replay_state(r);
	ck_assert_uint_eq(st->n_segments, 1);
	ck_assert_uint_eq(st->segments[0].size, 4 * MIB);
	seek_ok(r, 3); /* back through unmap/map */
	ck_assert_uint_eq(replay_state(r)->n_segments, 1);
	ck_assert_uint_eq(replay_state(r)->segments[0].size, 6 * MIB);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_workspace_triple)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{8 * MIB, I, 0}};
	struct replay *r;
	struct replay_check c;
	struct sv_error err;

	push_seg(s, BASE, 0, 1, 0, fin, 1);
	ev(s, SNAP_WORKSPACE_SNAPSHOT, BASE, 8 * MIB);
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 8 * MIB);
	ev(s, SNAP_ALLOC, BASE, 8 * MIB);
	r = open_ok(s);
	ck_assert_uint_eq(replay_info(r)->n_workspace, 1);
	seek_ok(r, 2);
	blk_is(r, 0, BASE, 8 * MIB, A);
	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	ck_assert_uint_eq(c.n_issues, 0);
	/* the workspace segment's, and the trace's alloc with no free
	 * (replay_check.c, missing_actions(): skip_actions or short) */
	ck_assert_uint_eq(c.n_notes, 2);
	ck_assert_ptr_nonnull(strstr(c.notes[0].msg, "workspace"));
	ck_assert_ptr_nonnull(strstr(c.notes[1].msg, "skip_actions"));
	replay_check_destroy(&c);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_mismatch_and_file)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, I, 0}, {2 * MIB - 1024, I, 0}};
	struct replay *r;
	struct replay_check c;
	struct sv_error err;

	push_seg(s, BASE, 0, 0, 0, fin, 2);
	s->segments[0].allocated_size = 99; /* the file lies */
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	ev(s, SNAP_ALLOC, BASE + 512, 1000);
	ev(s, SNAP_ALLOC, BASE + 4 * MIB, 10); /* no segment there */
	r = open_ok(s);
	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	ck_assert_uint_ge(c.n_issues, 3);
	{
		int file = 0, ev1 = 0, ev2 = 0;
		uint64_t i;

		for (i = 0; i < c.n_kept; i++) {
			file += c.issues[i].ev == REPLAY_EV_FILE;
			ev1 += c.issues[i].ev == 1;
			ev2 += c.issues[i].ev == 2;
		}
		ck_assert_int_ge(file, 1);
		ck_assert_int_ge(ev1, 1);
		ck_assert_int_ge(ev2, 1);
	}
	replay_check_destroy(&c);
	replay_free(r);
	snap_free(s);
}
END_TEST

/* Overlapping final segments: each one that overlaps an earlier one (in
 * file order) is reported once, naming the earlier one; disjoint ones and
 * segments of another device are not. */
START_TEST(test_replay_check_overlaps)
{
	struct snapshot *s = snap_new();
	struct fb two[] = {{2 * MIB, I, 0}};
	struct fb one[] = {{MIB, I, 0}};
	struct replay *r;
	struct replay_check c;
	struct sv_error err;
	uint64_t i;
	int over = 0, named_a = 0;

	push_seg(s, BASE + 8 * MIB, 0, 1, 0, two, 1);	/* A */
	push_seg(s, BASE, 0, 1, 0, two, 1);		/* B: disjoint */
	push_seg(s, BASE + 9 * MIB, 0, 1, 0, one, 1);	/* C: inside A */
	push_seg(s, BASE + 7 * MIB, 0, 1, 0, two, 1);	/* D: over A */
	push_seg(s, BASE + 8 * MIB, 0, 1, 0, two, 1);	/* E: device 1 */
	s->segments[4].device = 1;
	snap_finish(s);
	r = open_ok(s);
	ck_assert_int_eq(replay_check(r, &c, &err), 0);
	for (i = 0; i < c.n_kept; i++) {
		if (strstr(c.issues[i].msg, "overlaps segment") == NULL)
			continue;
		over++;
		ck_assert(c.issues[i].addr == BASE + 9 * MIB ||
		    c.issues[i].addr == BASE + 7 * MIB);
		named_a += strstr(c.issues[i].msg, "0x7f0000800000") != NULL;
	}
	/* C and D are the later ones of their pairs with A (D ends where C
	 * starts: no overlap); B and E overlap nothing on device 0 */
	ck_assert_int_eq(over, 2);
	ck_assert_int_eq(named_a, 2);
	replay_check_destroy(&c);
	replay_free(r);
	snap_free(s);
}
END_TEST

START_TEST(test_replay_legacy_no_trace)
{
	struct snapshot *s = snap_new();
	struct fb fin[] = {{1024, A, 1000}, {2 * MIB - 1024, I, 0}};
	struct replay *r;

	push_seg(s, BASE, 0, 0, 0, fin, 2);
	r = open_ok(s);
	ck_assert_int_eq(replay_info(r)->legacy_no_trace, 1);
	seek_ok(r, -1);
	blk_is(r, 0, BASE, 1024, A);
	ck_assert_uint_eq(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}
END_TEST

/* ---- a small independent allocator model --------------------------------
 * Non-expandable CUDA rules (doc/snapshot-format.md §13.3-13.6): best fit
 * on the same stream and pool, 2 MiB small / 20 MiB or 2 MiB-rounded
 * large segments, lowest part to the allocation, should_split, merges on
 * free, deferred frees, empty_cache. It records a hash of its state after
 * every event. */
#define MS 256
#define MB 512
struct mblk {
	uint64_t addr, size, req;
	int state;
};
struct mseg {
	uint64_t addr, size, stream;
	int large, n;
	struct mblk b[MB];
};
struct model {
	struct mseg seg[MS];
	int n;
	uint64_t next;
	struct snapshot *s;
	uint64_t *hash; /* after each event */
	uint64_t n_ev, cap;
	uint64_t rng;
	uint64_t pend[64];
	int n_pend;
};

static uint64_t
rnd(struct model *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return m->rng;
}

static uint64_t
h_mix(uint64_t h, uint64_t v)
{
	return XXH3_64bits_withSeed(&v, sizeof v, h);
}

static uint64_t
model_hash(const struct model *m)
{
	uint64_t h = 1;
	int i, j;

	for (i = 0; i < m->n; i++) {
		h = h_mix(h, m->seg[i].addr);
		h = h_mix(h, m->seg[i].size);
		for (j = 0; j < m->seg[i].n; j++) {
			const struct mblk *b = &m->seg[i].b[j];

			h = h_mix(h, b->addr);
			h = h_mix(h, b->size);
			h = h_mix(h, (uint64_t)b->state);
			h = h_mix(h, b->state == I ? 0 : b->req);
		}
	}
	return h;
}

static uint64_t
replay_hash(const struct replay_state *st)
{
	uint64_t h = 1;
	uint32_t i, j;

	for (i = 0; i < st->n_segments; i++) {
		const struct replay_segment *sg = &st->segments[i];

		h = h_mix(h, sg->addr);
		h = h_mix(h, sg->size);
		for (j = 0; j < sg->n_blocks; j++) {
			const struct replay_block *b =
			    &st->blocks[sg->first_block + j];

			h = h_mix(h, b->addr);
			h = h_mix(h, b->size);
			h = h_mix(h, b->state);
			h = h_mix(h, b->state == I ? 0 : b->requested_size);
		}
	}
	return h;
}

static void
m_emit(struct model *m, unsigned action, uint64_t addr, uint64_t size,
    uint64_t stream)
{
	snap_trace_push(m->s, snap_trace_get(m->s, 0), action, addr, size,
	    stream, 0);
	if (m->n_ev == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->hash = realloc(m->hash, m->cap * sizeof *m->hash);
	}
	m->hash[m->n_ev++] = model_hash(m);
}

static void
m_merge(struct mseg *sg, int k)
{
	if (k + 1 < sg->n && sg->b[k + 1].state == I) {
		sg->b[k].size += sg->b[k + 1].size;
		memmove(&sg->b[k + 1], &sg->b[k + 2],
		    (size_t)(sg->n - k - 2) * sizeof sg->b[0]);
		sg->n--;
	}
	if (k > 0 && sg->b[k - 1].state == I) {
		sg->b[k - 1].size += sg->b[k].size;
		memmove(&sg->b[k], &sg->b[k + 1],
		    (size_t)(sg->n - k - 1) * sizeof sg->b[0]);
		sg->n--;
	}
}

static void
m_alloc(struct model *m, uint64_t req, uint64_t stream)
{
	uint64_t rs = req < 512 ? 512 : (req + 511) / 512 * 512, rem;
	int large = rs > MIB, bi = -1, bk = -1, i, k;
	struct mseg *sg;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->seg[i].n; k++) {
			struct mblk *b = &m->seg[i].b[k];

			if (m->seg[i].stream != stream ||
			    m->seg[i].large != large || b->state != I ||
			    b->size < rs)
				continue;
			if (bi < 0 || b->size < m->seg[bi].b[bk].size) {
				bi = i;
				bk = k;
			}
		}
	if (bi < 0) {
		uint64_t ss = !large ? 2 * MIB : rs < 10 * MIB ? 20 * MIB :
		    (rs + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);

		if (m->n == MS)
			return;
		sg = &m->seg[m->n];
		memset(sg, 0, sizeof *sg);
		sg->addr = m->next;
		sg->size = ss;
		sg->stream = stream;
		sg->large = large;
		sg->n = 1;
		sg->b[0].addr = sg->addr;
		sg->b[0].size = ss;
		sg->b[0].state = I;
		m->next += ss + (rnd(m) % 2) * 2 * MIB;
		m->n++;
		m_emit(m, SNAP_SEGMENT_ALLOC, sg->addr, ss, stream);
		bi = m->n - 1;
		bk = 0;
	}
	sg = &m->seg[bi];
	if (sg->n == MB)
		return;
	rem = sg->b[bk].size - rs;
	if (large ? rem > MIB : rem >= 512) {
		memmove(&sg->b[bk + 2], &sg->b[bk + 1],
		    (size_t)(sg->n - bk - 1) * sizeof sg->b[0]);
		sg->n++;
		sg->b[bk + 1].addr = sg->b[bk].addr + rs;
		sg->b[bk + 1].size = rem;
		sg->b[bk + 1].state = I;
		sg->b[bk].size = rs;
	}
	sg->b[bk].state = A;
	sg->b[bk].req = req;
	m_emit(m, SNAP_ALLOC, sg->b[bk].addr, req, stream);
}

static struct mblk *
m_find(struct model *m, uint64_t addr, int *pi, int *pk)
{
	int i, k;

	for (i = 0; i < m->n; i++)
		for (k = 0; k < m->seg[i].n; k++)
			if (m->seg[i].b[k].addr == addr) {
				*pi = i;
				*pk = k;
				return &m->seg[i].b[k];
			}
	return NULL;
}

static void
m_complete(struct model *m, uint64_t addr)
{
	int i = 0, k = 0;
	struct mblk *b = m_find(m, addr, &i, &k);
	uint64_t req = b->req;

	b->state = I;
	m_merge(&m->seg[i], k);
	m_emit(m, SNAP_FREE_COMPLETED, addr, req, m->seg[i].stream);
}

static void
m_free_random(struct model *m)
{
	int i = 0, k = 0, tries;

	for (tries = 0; tries < 20; tries++) {
		if (m->n == 0)
			return;
		i = (int)(rnd(m) % (uint64_t)m->n);
		k = (int)(rnd(m) % (uint64_t)m->seg[i].n);
		if (m->seg[i].b[k].state == A)
			break;
	}
	if (tries == 20)
		return;
	m->seg[i].b[k].state = P;
	m_emit(m, SNAP_FREE_REQUESTED, m->seg[i].b[k].addr,
	    m->seg[i].b[k].req, m->seg[i].stream);
	if (rnd(m) % 4 == 0 && m->n_pend < 64)
		m->pend[m->n_pend++] = m->seg[i].b[k].addr;
	else
		m_complete(m, m->seg[i].b[k].addr);
}

static void
m_empty_cache(struct model *m)
{
	int i;

	while (m->n_pend > 0)
		m_complete(m, m->pend[--m->n_pend]);
	for (i = 0; i < m->n;) {
		struct mseg *sg = &m->seg[i];

		if (sg->n == 1 && sg->b[0].state == I) {
			uint64_t a = sg->addr, z = sg->size, st = sg->stream;

			memmove(sg, sg + 1,
			    (size_t)(m->n - i - 1) * sizeof *sg);
			m->n--;
			m_emit(m, SNAP_SEGMENT_FREE, a, z, st);
		} else
			i++;
	}
}

/* Runs the model for n_ops operations; writes the final segments. */
static struct snapshot *
model_run(struct model *m, uint64_t seed, int n_ops)
{
	static const uint64_t sizes[] = {40, 512, 700, 4096, 100000, 600000,
	    1048576, 1500000, 3 * MIB, 9 * MIB + 7, 12 * MIB, 19 * MIB + 1};
	int op, i, k;

	memset(m, 0, sizeof *m);
	m->s = snap_new();
	m->s->features |= SNAP_F_REQUESTED;
	m->next = BASE;
	m->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	for (op = 0; op < n_ops; op++) {
		uint64_t x = rnd(m) % 100, stream = (rnd(m) % 8 == 0) ? 77 : 0;

		if (x < 50)
			m_alloc(m, sizes[rnd(m) % 12] + rnd(m) % 300, stream);
		else if (x < 90)
			m_free_random(m);
		else if (x < 96 && m->n_pend > 0) {
			k = (int)(rnd(m) % (uint64_t)m->n_pend);
			m_complete(m, m->pend[k]);
			m->pend[k] = m->pend[--m->n_pend];
		} else if (x < 98)
			m_empty_cache(m);
		else
			m_emit(m, SNAP_OOM, 0, 1 << 30, 0);
	}
	for (i = 0; i < m->n; i++) {
		struct fb b[MB];

		for (k = 0; k < m->seg[i].n; k++) {
			b[k].size = m->seg[i].b[k].size;
			b[k].state = m->seg[i].b[k].state;
			b[k].req = m->seg[i].b[k].req;
		}
		push_seg(m->s, m->seg[i].addr, m->seg[i].stream,
		    m->seg[i].large, 0, b, m->seg[i].n);
	}
	return m->s;
}

/* Drops the first `drop` events (ring buffer truncation). */
static void
truncate_trace(struct snapshot *s, uint64_t drop)
{
	struct snap_trace *t = snap_trace_get(s, 0);
	uint64_t n = t->n - drop;

	memmove(t->action, t->action + drop, n);
	memmove(t->addr, t->addr + drop, n * 8);
	memmove(t->size, t->size + drop, n * 8);
	memmove(t->stream, t->stream + drop, n * 8);
	memmove(t->stack, t->stack + drop, n * 4);
	t->n = n;
}

START_TEST(test_replay_model_truth)
{
	struct model *m = malloc(sizeof *m);
	uint64_t seed = (uint64_t)_i + 1, i, n;
	struct snapshot *s = model_run(m, seed, 3000);
	struct replay *r = open_ok(s);

	n = replay_n_events(r);
	ck_assert_uint_eq(n, m->n_ev);
	ck_assert_uint_eq(check_issues(r), 0);
	/* forward, one step at a time: equals the model at every event */
	seek_ok(r, -1);
	ck_assert_uint_eq(replay_state(r)->n_segments, 0);
	for (i = 0; i < n; i++) {
		seek_ok(r, (int64_t)i);
		ck_assert_msg(replay_hash(replay_state(r)) == m->hash[i],
		    "seed %llu: state differs from the model after event %llu",
		    (unsigned long long)seed, (unsigned long long)i);
	}
	/* backward, one step at a time */
	for (i = n; i-- > 0;) {
		seek_ok(r, (int64_t)i);
		ck_assert(replay_hash(replay_state(r)) == m->hash[i]);
	}
	/* random seeks */
	for (i = 0; i < 300; i++) {
		uint64_t at = rnd(m) % n;

		seek_ok(r, (int64_t)at);
		ck_assert(replay_hash(replay_state(r)) == m->hash[at]);
	}
	replay_free(r);
	snap_free(s);
	free(m->hash);
	free(m);
}
END_TEST

/* Ring buffer truncation: no ground truth for pre-trace block sizes, but
 * check must pass, and every path to a state must agree: sequential
 * forward, checkpoint + replay, backward steps, a saved and reloaded
 * replay. */
START_TEST(test_replay_truncated_paths)
{
	struct model *m = malloc(sizeof *m);
	uint64_t seed = (uint64_t)_i + 100, i, n, *h;
	struct snapshot *s = model_run(m, seed, 12000);
	struct replay *r, *r2;
	struct sv_error err;
	uint8_t *buf;
	size_t len;

	truncate_trace(s, m->n_ev / 3);
	r = open_ok(s);
	n = replay_n_events(r);
	ck_assert_uint_gt(n, 8192); /* several checkpoints */
	ck_assert_uint_eq(check_issues(r), 0);
	ck_assert_uint_gt(replay_info(r)->n_pre_blocks, 0);
	/* the tail of the model's history is known exactly */
	seek_ok(r, (int64_t)n - 1);
	ck_assert(replay_hash(replay_state(r)) == m->hash[m->n_ev - 1]);
	h = malloc(n * sizeof *h);
	seek_ok(r, -1);
	for (i = 0; i < n; i++) {
		seek_ok(r, (int64_t)i);
		h[i] = replay_hash(replay_state(r));
	}
	for (i = n; i-- > 0;) {
		seek_ok(r, (int64_t)i);
		ck_assert(replay_hash(replay_state(r)) == h[i]);
	}
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, &len), 0);
	r2 = replay_new_saved(s, 0, buf, len, &err);
	ck_assert_ptr_nonnull(r2);
	ck_assert_uint_eq(replay_info(r2)->n_pre_blocks,
	    replay_info(r)->n_pre_blocks);
	for (i = 0; i < 200; i++) {
		uint64_t at = rnd(m) % n;

		seek_ok(r, (int64_t)at);
		seek_ok(r2, (int64_t)at);
		ck_assert(replay_hash(replay_state(r)) == h[at]);
		ck_assert(replay_hash(replay_state(r2)) == h[at]);
		seek_ok(r2, (int64_t)at - 1);
		ck_assert(at == 0 ||
		    replay_hash(replay_state(r2)) == h[at - 1]);
	}
	/* corrupt or stale buffers are refused */
	buf[len / 2] ^= 0x40;
	ck_assert_ptr_null(replay_new_saved(s, 0, buf, len, &err));
	buf[len / 2] ^= 0x40;
	ck_assert_ptr_null(replay_new_saved(s, 1, buf, len, &err));
	ck_assert_ptr_null(replay_new_saved(s, 0, buf, len - 9, &err));
	free(buf);
	free(h);
	replay_free(r2);
	replay_free(r);
	snap_free(s);
	free(m->hash);
	free(m);
}
END_TEST

static void
check_real(const char *name, int want_ok)
{
	char path[1024];
	struct snapshot *s;
	struct sv_error err;
	struct replay *r;

	snprintf(path, sizeof path, "%s/tests/data/real/%s", TOP_SRCDIR, name);
	ck_assert_int_eq(snap_load_file(path, NULL, &s, &err), 0);
	r = replay_new(s, snap_default_device(s), &err);
	ck_assert_ptr_nonnull(r);
	if (want_ok)
		ck_assert_uint_eq(check_issues(r), 0);
	else
		ck_assert_uint_gt(check_issues(r), 0);
	replay_free(r);
	snap_free(s);
}

/* A saved replay whose last checkpoint is corrupt (hash recomputed, as
 * whoever wrote the index can): it loads (checkpoint 0 is sound), a seek
 * through that checkpoint is refused as bad input, and oom and frag give
 * the error back with nothing left allocated (ASan checks the leak they
 * had). */
START_TEST(test_replay_corrupt_checkpoint)
{
	struct snapshot *s = snap_new();
	struct replay *r, *r2;
	struct idx_timeline tl;
	struct an_sites sites;
	struct an_frag f;
	struct an_oom o;
	struct sv_error err;
	uint8_t *buf;
	size_t len;
	uint64_t i, h, n;

	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	for (i = 0; i < 4000; i++) {
		ev(s, SNAP_ALLOC, BASE, 512);
		ev(s, SNAP_FREE_REQUESTED, BASE, 512);
		ev(s, SNAP_FREE_COMPLETED, BASE, 512);
	}
	ev(s, SNAP_SEGMENT_ALLOC, BASE + 4 * MIB, 2 * MIB);
	ev(s, SNAP_ALLOC, BASE + 4 * MIB, 4096);
	ev(s, SNAP_OOM, 0, 1ull << 40);
	push_seg(s, BASE, 0, 1, 0, (const struct fb[]){{2 * MIB, I, 0}}, 1);
	push_seg(s, BASE + 4 * MIB, 0, 1, 0,
	    (const struct fb[]){{4096, A, 4096}, {2 * MIB - 4096, I, 0}}, 2);
	snap_finish(s);
	r = open_ok(s);
	n = replay_n_events(r);
	ck_assert_uint_ge(replay_info(r)->n_checkpoints, 3);
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, &len), 0);
	replay_free(r);
	/* the last byte of the arena ends the last checkpoint's last blob */
	buf[len - 9] |= 0x80;
	h = XXH3_64bits(buf, len - 8);
	for (i = 0; i < 8; i++)
		buf[len - 8 + i] = (uint8_t)(h >> (8 * i));

	r2 = replay_new_saved(s, 0, buf, len, &err);
	ck_assert_ptr_nonnull(r2);
	ck_assert_int_ne(replay_seek(r2, (int64_t)n - 1, &err), 0);
	ck_assert_int_eq(err.code, SV_ERR_FORMAT);
	ck_assert_int_eq(sv_errcode_status(err.code), 2);
	seek_ok(r2, 10);
	replay_free(r2);

	ck_assert_int_eq(idx_timeline_build(s, 0, &tl, &err), 0);
	ck_assert_int_eq(an_sites_init(&sites, s, 1, NULL, NULL), 0);
	r2 = replay_new_saved(s, 0, buf, len, &err);
	sv_error_clear(&err);
	ck_assert_int_ne(an_frag(s, &tl, r2, &sites, -2, &f, &err), 0);
	ck_assert_int_eq(err.code, SV_ERR_FORMAT);
	ck_assert_ptr_null(f.allocs);
	replay_free(r2);
	r2 = replay_new_saved(s, 0, buf, len, &err);
	sv_error_clear(&err);
	ck_assert_int_ne(an_oom(s, &tl, r2, &sites, &o, &err), 0);
	ck_assert_int_eq(err.code, SV_ERR_FORMAT);
	ck_assert_ptr_null(o.events);
	replay_free(r2);
	an_sites_destroy(&sites);
	idx_timeline_destroy(&tl);
	free(buf);
	snap_free(s);
}
END_TEST

/* Many segments, few of which change between checkpoints, some freed
 * and made again: each checkpoint's list of segments is kept as its
 * change from the one before (copied, skipped and new runs, a key list
 * now and then), so the saved checkpoints stay far below a list per
 * checkpoint; restoring any of them, directly or from the saved bytes,
 * gives the state that stepping one event at a time gives. */
START_TEST(test_replay_checkpoint_lists)
{
	enum { NSEG = 600, HOT = 5, ITER = 50000 };
	struct snapshot *s = snap_new();
	struct replay *r, *r2;
	struct sv_error err;
	static uint8_t alive[NSEG];
	uint64_t *h, x = 0x9e3779b97f4a7c15ull, n, i, nck;
	uint8_t *buf;
	size_t len;
	int g;

	for (g = 0; g < NSEG; g++) {
		ev(s, SNAP_SEGMENT_ALLOC, BASE + (uint64_t)g * 4 * MIB,
		    2 * MIB);
		alive[g] = 1;
	}
	for (i = 0; i < ITER; i++) {
		uint64_t a;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		g = (int)((x >> 32) % (x % 100 < 99 ? HOT : NSEG - HOT));
		g += x % 100 < 99 ? 0 : HOT;
		a = BASE + (uint64_t)g * 4 * MIB;
		if (i % 500 == 499 && g >= HOT && alive[g]) {
			ev(s, SNAP_SEGMENT_FREE, a, 2 * MIB);
			alive[g] = 0;
			continue;
		}
		if (!alive[g]) {
			ev(s, SNAP_SEGMENT_ALLOC, a, 2 * MIB);
			alive[g] = 1;
		}
		ev(s, SNAP_ALLOC, a, 512);
		ev(s, SNAP_FREE_REQUESTED, a, 512);
		ev(s, SNAP_FREE_COMPLETED, a, 512);
	}
	for (g = 0; g < NSEG; g++)
		if (alive[g])
			push_seg(s, BASE + (uint64_t)g * 4 * MIB, 0, 1, 0,
			    (const struct fb[]){{2 * MIB, I, 0}}, 1);
	snap_finish(s);
	r = open_ok(s);
	n = replay_n_events(r);
	nck = replay_info(r)->n_checkpoints;
	ck_assert_uint_ge(nck, 2 * 16 + 2); /* past a key list's chain */
	ck_assert_uint_eq(check_issues(r), 0);
	/* every fifth state, stepping one event at a time */
	h = malloc(n * sizeof *h);
	seek_ok(r, -1);
	for (i = 0; i < n; i++) {
		seek_ok(r, (int64_t)i);
		if (i % 5 == 0)
			h[i] = replay_hash(replay_state(r));
	}
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, &len), 0);
	/* a list of NSEG ids a checkpoint took 4 NSEG bytes in memory, 8 NSEG
	 * saved */
	ck_assert_uint_lt(len, nck * NSEG * 4);
	r2 = replay_new_saved(s, 0, buf, len, &err);
	ck_assert_ptr_nonnull(r2);
	for (i = 0; i < 3000; i++) {
		uint64_t at = x % n / 5 * 5;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		seek_ok(r, (int64_t)at);
		ck_assert(replay_hash(replay_state(r)) == h[at]);
		if (i % 3 == 0) {
			seek_ok(r2, (int64_t)at);
			ck_assert(replay_hash(replay_state(r2)) == h[at]);
		}
	}
	free(buf);
	free(h);
	replay_free(r2);
	replay_free(r);
	snap_free(s);
}
END_TEST

/*
 * The build's shortcuts (rstate.h: the exact-address index of the
 * blocks, the segment a block remembers) find only what the ordered maps
 * find: a build with the index always on, on from a few blocks (so that
 * it comes and goes), and never on saves the same bytes (checkpoints,
 * learned sizes, segment attributes, counts) and the same anomalies; and
 * the state at every event reached by a plain forward replay from the
 * start equals the state a seek reaches through those checkpoints.
 */
static void
same_builds(const struct snapshot *s, uint32_t d, const char *what)
{
	/* the index from how many blocks, the read-ahead thread from how
	 * many events; the first is the reference, the last kept */
	static const struct {
		size_t index_min, read_min;
	} v[] = {{SIZE_MAX, SIZE_MAX}, {0, SIZE_MAX}, {0, 0}, {8, 0}};
	uint8_t *buf[4];
	size_t len[4];
	uint64_t n_issues[4], i, n, *h, x = 0x9e3779b97f4a7c15ull;
	struct replay *r = NULL;
	struct sv_error err;
	struct replay_check c;
	int k;

	for (k = 0; k < 4; k++) {
		rstate_index_min = v[k].index_min;
		replay_read_ahead_min = v[k].read_min;
		if (r != NULL)
			replay_free(r);
		r = replay_new(s, d, &err);
		ck_assert_ptr_nonnull(r);
		ck_assert_int_eq(replay_checkpoints_save(r, &buf[k], &len[k]),
		    0);
		ck_assert_int_eq(replay_check(r, &c, &err), 0);
		n_issues[k] = c.n_issues;
		replay_check_destroy(&c);
		ck_assert_msg(len[k] == len[0] &&
		    memcmp(buf[k], buf[0], len[0]) == 0 &&
		    n_issues[k] == n_issues[0],
		    "%s device %u: build %d differs", what, d, k);
	}
	rstate_index_min = 512;
	replay_read_ahead_min = 4 * EVS_CHUNK;
	/* r: the build with the index on from 8 blocks, read ahead */
	n = replay_n_events(r);
	h = malloc((n + 1) * sizeof *h);
	seek_ok(r, -1);
	h[0] = replay_hash(replay_state(r));
	for (i = 0; i < n; i++) {
		seek_ok(r, (int64_t)i);
		h[i + 1] = replay_hash(replay_state(r));
	}
	for (i = 0; i < 400 && n > 0; i++) {
		uint64_t at;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		at = x % (n + 1);
		seek_ok(r, (int64_t)at - 1);
		ck_assert_msg(replay_hash(replay_state(r)) == h[at],
		    "%s device %u: state after %lld events differs", what, d,
		    (long long)at);
	}
	free(h);
	for (k = 0; k < 4; k++)
		free(buf[k]);
	replay_free(r);
}

START_TEST(test_replay_build_shortcuts_model)
{
	struct model *m = malloc(sizeof *m);
	uint64_t seed = (uint64_t)_i + 300;
	struct snapshot *s = model_run(m, seed, 6000);

	/* the whole history, then a ring buffer's tail of it (frees of
	 * blocks the trace never allocated) */
	same_builds(s, 0, "model");
	truncate_trace(s, m->n_ev / 3);
	same_builds(s, 0, "truncated model");
	snap_free(s);
	free(m->hash);
	free(m);
}
END_TEST

/*
 * Expandable segments under churn: pages mapped and unmapped one at a
 * time, so that runs merge (a segment absorbs the one above it) and
 * split (the part above an unmap becomes a segment of its own) while
 * their blocks stay, and blocks are allocated and freed all over them
 * meanwhile. Every event fits the allocator's rules: an alloc starts its
 * free block (the highest live block of a page ends where the next one
 * goes), sizes are multiples of 512, a page is unmapped only when free.
 * The final segments are what a first replay gives at the end, so that
 * the file is consistent.
 */
#define XPAGES 48
static struct snapshot *
churn_snapshot(uint64_t seed, uint64_t n_ev)
{
	struct snapshot *s = snap_new();
	static struct { uint64_t a, size; } live[XPAGES][64];
	int n_live[XPAGES] = {0}, mapped[XPAGES] = {0};
	uint64_t cur[XPAGES] = {0}, x = seed * 2654435761u + 1, i;
	const struct replay_state *st;
	struct snapshot *f;
	struct replay *r;
	uint32_t k, j;

	snap_trace_get(s, 0);
	while (snap_trace_get(s, 0)->n < n_ev) {
		int p, op;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p = (int)((x >> 8) % XPAGES);
		op = (int)((x >> 20) % 20);
		if (!mapped[p]) {
			ev(s, SNAP_SEGMENT_MAP, BASE + (uint64_t)p * 2 * MIB,
			    2 * MIB);
			mapped[p] = 1;
		} else if (op < 10 && n_live[p] < 64 && cur[p] < 2 * MIB &&
		    (cur[p] > 0 || p == 0 || !mapped[p - 1] ||
		    cur[p - 1] == 2 * MIB)) {
			uint64_t sz = 512 * (1 + (x >> 32) % 600);
			uint64_t a = BASE + (uint64_t)p * 2 * MIB + cur[p];

			if (sz > 2 * MIB - cur[p])
				sz = 2 * MIB - cur[p];
			ev(s, SNAP_ALLOC, a, sz);
			live[p][n_live[p]].a = a;
			live[p][n_live[p]++].size = sz;
			cur[p] += sz;
		} else if (op < 19 && n_live[p] > 0) {
			int v = (int)((x >> 40) % (uint64_t)n_live[p]), w;

			if (op & 1)
				ev(s, SNAP_FREE_REQUESTED, live[p][v].a,
				    live[p][v].size);
			ev(s, SNAP_FREE_COMPLETED, live[p][v].a,
			    live[p][v].size);
			live[p][v] = live[p][--n_live[p]];
			/* the highest live block ends where the next goes */
			cur[p] = 0;
			for (w = 0; w < n_live[p]; w++)
				if (live[p][w].a + live[p][w].size -
				    (BASE + (uint64_t)p * 2 * MIB) > cur[p])
					cur[p] = live[p][w].a +
					    live[p][w].size -
					    (BASE + (uint64_t)p * 2 * MIB);
		} else if (n_live[p] == 0) {
			ev(s, SNAP_SEGMENT_UNMAP, BASE + (uint64_t)p * 2 * MIB,
			    2 * MIB);
			mapped[p] = 0;
		}
	}
	/* the same trace with the final state a replay of it ends in */
	r = open_ok(s);
	seek_ok(r, (int64_t)replay_n_events(r) - 1);
	st = replay_state(r);
	f = snap_new();
	for (k = 0; k < st->n_segments; k++) {
		const struct replay_segment *sg = &st->segments[k];
		struct fb *b = malloc(sg->n_blocks * sizeof *b);

		for (j = 0; j < sg->n_blocks; j++) {
			const struct replay_block *rb =
			    &st->blocks[sg->first_block + j];

			b[j].size = rb->size;
			b[j].state = rb->state;
			b[j].req = rb->requested_size;
		}
		push_seg(f, sg->addr, sg->stream, sg->is_large, 1, b,
		    (int)sg->n_blocks);
		free(b);
	}
	snap_trace_get(f, 0);
	for (i = 0; i < replay_n_events(r); i++) {
		const struct snap_trace *t = snap_trace_of(s, 0);

		ev(f, snap_ev_action(t, i), snap_ev_addr(t, i),
		    snap_ev_size(t, i));
	}
	replay_free(r);
	snap_free(s);
	snap_finish(f);
	return f;
}

START_TEST(test_replay_build_shortcuts_churn)
{
	/* 5 to 10 chunks of events: the read-ahead ring wraps */
	struct snapshot *s = churn_snapshot((uint64_t)_i + 1,
	    40000 + 20000 * (uint64_t)_i);
	struct replay *r = open_ok(s);
	const struct replay_info *in = replay_info(r);

	/* a sound file, checkpoints all through, runs merged and split */
	ck_assert_uint_eq(check_issues(r), 0);
	ck_assert_uint_eq(in->n_undo_anomalies, 0);
	ck_assert_uint_gt(in->n_checkpoints, 5);
	replay_free(r);
	same_builds(s, 0, "churn");
	snap_free(s);
}
END_TEST

/* The same on every committed snapshot with a trace: CUDA and torch_npu
 * (its rounding, expandable segments, workspace triples), the generated
 * scenarios and the fixtures. */
START_TEST(test_replay_build_shortcuts_files)
{
	static const char *dirs[] = {"tests/data/real", "tests/data/gen",
	    "tests/data/fixtures", "tests/data"};
	static const char *names[] = {
	    "cuda_inference_forward", "cuda_train_one_step", "npu_all_freed",
	    "npu_leak_empty_cache", "npu_leak_expandable",
	    "synthetic_inconsistent", NULL,
	    "expandable", "frag", "graphs", "leak", "leak-cpp", "multi", "npu",
	    "oom", "training", "training-leak", "wrapped", NULL,
	    "newest", "notime", "two_traces", "small_p4", NULL,
	    "demo", NULL};
	char path[1024];
	struct snapshot *s;
	struct sv_error err;
	size_t k, dir = 0, n_files = 0;
	uint32_t d;

	for (k = 0; k < sizeof names / sizeof names[0]; k++) {
		if (names[k] == NULL) {
			dir++;
			continue;
		}
		snprintf(path, sizeof path, "%s/%s/%s.pickle", TOP_SRCDIR,
		    dirs[dir], names[k]);
		ck_assert_msg(snap_load_file(path, NULL, &s, &err) == 0,
		    "%s: %s", path, err.msg);
		for (d = 0; d < snap_device_count(s); d++) {
			const struct snap_trace *t = snap_trace_of(s, d);

			if (t != NULL && t->n > 0)
				same_builds(s, d, path);
		}
		snap_free(s);
		n_files++;
	}
	ck_assert_uint_eq(n_files, 22);
}
END_TEST

/* A pass's records of a stripe-coded trace (read a stripe's columns at a
 * time) are rev_read()'s, either way, on a thread or not, across the
 * stripes (cuda_train_one_step has two). */
static void
same_records(const struct snap_trace *t, uint64_t n)
{
	static const size_t read_min[] = {0, SIZE_MAX};
	struct evs es;
	struct rev want;
	uint64_t i, j, bad;
	int down, k;

	for (k = 0; k < 2; k++)
		for (down = 0; down < 2; down++) {
			replay_read_ahead_min = read_min[k];
			evs_open(&es, t, n, down);
			for (j = 0, bad = 0; j < n; j++) {
				i = down ? n - 1 - j : j;
				rev_read(t, i, &want);
				bad += memcmp(evs_next(&es, i), &want,
				    sizeof want) != 0;
			}
			evs_close(&es);
			ck_assert_msg(bad == 0, "%llu records differ (%s, %s)",
			    (unsigned long long)bad, down ? "down" : "up",
			    k ? "no thread" : "thread");
		}
	replay_read_ahead_min = 4 * EVS_CHUNK;
}

/* The same on an index's stripe-coded events, which the read-ahead thread
 * decodes into cache entries of its own. */
START_TEST(test_replay_build_stripe_coded)
{
	static const char *names[] = {"cuda_train_one_step",
	    "npu_leak_expandable"};
	char path[1024];
	struct sv_index *ix;
	struct idx_opts o;
	struct sv_error err;
	size_t k;

	for (k = 0; k < 2; k++) {
		const struct snapshot *s;
		const struct snap_trace *t;

		snprintf(path, sizeof path, "%s/tests/data/real/%s.pickle",
		    TOP_SRCDIR, names[k]);
		memset(&o, 0, sizeof o);
		o.no_cache = 1;
		ck_assert_msg(idx_open(path, &o, &ix, &err) == 0, "%s: %s",
		    path, err.msg);
		s = idx_snapshot(ix);
		t = snap_trace_of(s, snap_default_device(s));
		ck_assert_ptr_nonnull(t->stripes);
		if (k == 0)
			ck_assert_uint_gt(t->stripes->n_stripe, 1);
		same_records(t, t->n);
		same_builds(s, snap_default_device(s), path);
		idx_close(ix);
	}
}
END_TEST

/* ---- the forward pass's findings, saved ---------------------------------- */

/* Asserts that two checks found the same, issue by issue. */
static void
same_check(const struct replay_check *a, const struct replay_check *b)
{
	uint64_t i;

	ck_assert_uint_eq(a->n_issues, b->n_issues);
	ck_assert_uint_eq(a->n_kept, b->n_kept);
	ck_assert_uint_eq(a->n_notes, b->n_notes);
	ck_assert_uint_eq(a->n_segments, b->n_segments);
	ck_assert_uint_eq(a->n_blocks, b->n_blocks);
	for (i = 0; i < a->n_kept; i++) {
		ck_assert_int_eq(a->issues[i].ev, b->issues[i].ev);
		ck_assert_uint_eq(a->issues[i].addr, b->issues[i].addr);
		ck_assert_str_eq(a->issues[i].msg, b->issues[i].msg);
	}
	for (i = 0; i < a->n_notes; i++) {
		ck_assert_int_eq(a->notes[i].ev, b->notes[i].ev);
		ck_assert_uint_eq(a->notes[i].addr, b->notes[i].addr);
		ck_assert_str_eq(a->notes[i].msg, b->notes[i].msg);
	}
}

/* A segment, then n allocs where no segment is (each one a finding of
 * the forward pass), a few of them in the segment. */
static struct snapshot *
findings_snap(uint64_t n)
{
	struct snapshot *s = snap_new();
	uint64_t i;

	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	for (i = 0; i < n; i++) {
		ev(s, SNAP_ALLOC, BASE + 64 * MIB + i * 512, 512);
		if (i % 100 == 0) {
			ev(s, SNAP_ALLOC, BASE, 512);
			ev(s, SNAP_FREE_REQUESTED, BASE, 512);
			ev(s, SNAP_FREE_COMPLETED, BASE, 512);
		}
	}
	push_seg(s, BASE, 0, 0, 0, (const struct fb[]){{2 * MIB, I, 0}}, 1);
	snap_finish(s);
	return s;
}

/* Where the findings start in a saved replay (see replay.h). */
static size_t
findings_off(const struct replay *r)
{
	return 8 + 16 + 12 * 8 + 8 + r->n_learned * 16 + 8 + r->n_attrs * 32;
}

/* More findings than are kept: a saved and reloaded replay checks the
 * same as the one that made them (kept ones, the count of the rest, and
 * the comparison at the end, which seeks there from a checkpoint). */
START_TEST(test_replay_saved_findings)
{
	struct snapshot *s = findings_snap(REPLAY_MAX_ISSUES + 234);
	struct replay *r = open_ok(s), *r2;
	struct replay_check c1, c2;
	struct sv_error err;
	uint8_t *buf;
	size_t len;

	ck_assert_uint_eq(r->n_fwd_issues, REPLAY_MAX_ISSUES + 234);
	ck_assert_uint_eq(r->n_fwd_kept, REPLAY_MAX_ISSUES);
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, &len), 0);
	ck_assert_int_eq(replay_check(r, &c1, &err), 0);
	ck_assert_uint_ge(c1.n_issues, REPLAY_MAX_ISSUES + 234);
	replay_free(r);
	r2 = replay_new_saved(s, 0, buf, len, &err);
	ck_assert_ptr_nonnull(r2);
	ck_assert_uint_eq(r2->n_fwd_issues, REPLAY_MAX_ISSUES + 234);
	ck_assert_int_eq(replay_check(r2, &c2, &err), 0);
	same_check(&c1, &c2);
	replay_check_destroy(&c1);
	replay_check_destroy(&c2);
	replay_free(r2);
	free(buf);
	snap_free(s);
}
END_TEST

/* buf with its findings (at off, flen bytes) replaced by f (fl bytes),
 * its checksum recomputed as whoever writes the index can. */
static uint8_t *
splice(const uint8_t *buf, size_t len, size_t off, size_t flen,
    const uint8_t *f, size_t fl, size_t *out_len)
{
	size_t n = len - flen + fl;
	uint8_t *p = xmalloc(n);
	uint64_t h;
	int i;

	memcpy(p, buf, off);
	memcpy(p + off, f, fl);
	memcpy(p + off + fl, buf + off + flen, len - off - flen);
	h = XXH3_64bits(p, n - 8);
	for (i = 0; i < 8; i++)
		p[n - 8 + (size_t)i] = (uint8_t)(h >> (8 * i));
	*out_len = n;
	return p;
}

static size_t
put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 8;
}

/* Findings of n counted and kept issues {ev, addr, msg} into p. */
static size_t
findings(uint8_t *p, uint64_t total, uint64_t kept, const int64_t *evs,
    const char *const *msgs, uint64_t n)
{
	size_t o = 0;
	uint64_t i;

	o += put64(p + o, total);
	o += put64(p + o, kept);
	for (i = 0; i < n; i++) {
		size_t ml = strlen(msgs[i]);

		o += put64(p + o, (uint64_t)evs[i]);
		o += put64(p + o, 0x1000 + i);
		o += put64(p + o, ml);
		memcpy(p + o, msgs[i], ml);
		o += ml;
	}
	return o;
}

/* Loads buf with its findings replaced; NULL when refused. */
static struct replay *
load_with(const struct snapshot *s, const uint8_t *buf, size_t len,
    size_t off, size_t flen, const uint8_t *f, size_t fl)
{
	struct sv_error err;
	size_t n;
	uint8_t *p = splice(buf, len, off, flen, f, fl, &n);
	struct replay *r;

	sv_error_clear(&err);
	r = replay_new_saved(s, 0, p, n, &err);
	if (r == NULL)
		ck_assert_int_eq(err.code, SV_ERR_FORMAT);
	free(p);
	return r;
}

/* The saved findings are untrusted: a count past the events, kept ones
 * that are not the first min(count, REPLAY_MAX_ISSUES), an event that
 * is not one of the trace's (the forward pass names no other), out of
 * order, a message too long for the struct, running past the buffer or
 * holding a byte that is not printable: each refused (the caller then
 * replays afresh). The longest message that fits loads, terminated. */
START_TEST(test_replay_saved_findings_corrupt)
{
	struct snapshot *s = findings_snap(3);
	struct replay *r = open_ok(s), *r2;
	char longest[sizeof r->fwd_issues[0].msg], over[sizeof longest + 1];
	const char *ok3[3] = {"a", "b", "c"};
	int64_t evs[3];
	uint8_t *buf, f[4096];
	size_t len, off, flen, fl;
	uint64_t n, i;

	ck_assert_uint_eq(r->n_fwd_issues, 3);
	n = replay_n_events(r);
	for (i = 0; i < 3; i++)
		evs[i] = r->fwd_issues[i].ev;
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, &len), 0);
	off = findings_off(r);
	flen = 16;
	for (i = 0; i < 3; i++)
		flen += 24 + strlen(r->fwd_issues[i].msg);
	replay_free(r);

	/* as saved, rewritten here: loads */
	fl = findings(f, 3, 3, evs, ok3, 3);
	r2 = load_with(s, buf, len, off, flen, f, fl);
	ck_assert_ptr_nonnull(r2);
	ck_assert_str_eq(r2->fwd_issues[2].msg, "c");
	replay_free(r2);
	/* none at all: loads */
	fl = findings(f, 0, 0, evs, ok3, 0);
	r2 = load_with(s, buf, len, off, flen, f, fl);
	ck_assert_ptr_nonnull(r2);
	replay_free(r2);

	/* counts */
	fl = findings(f, UINT64_MAX, REPLAY_MAX_ISSUES, evs, ok3, 0);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	{
		/* at most 8 per event, all kept (fewer than the most kept) */
		int64_t ev8[128];
		const char *m8[128];

		ck_assert_uint_lt(8 * n + 8, 128);
		for (i = 0; i < 8 * n + 8; i++) {
			ev8[i] = evs[0];
			m8[i] = "m";
		}
		fl = findings(f, 8 * n + 7, 8 * n + 7, ev8, m8, 8 * n + 7);
		r2 = load_with(s, buf, len, off, flen, f, fl);
		ck_assert_ptr_nonnull(r2);
		replay_free(r2);
		fl = findings(f, 8 * n + 8, 8 * n + 8, ev8, m8, 8 * n + 8);
		ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	}
	fl = findings(f, 2, 3, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	fl = findings(f, 4, 3, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	fl = findings(f, 5000, REPLAY_MAX_ISSUES + 1, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	fl = findings(f, UINT64_MAX, UINT64_MAX, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));

	/* events */
	evs[1] = (int64_t)n;
	fl = findings(f, 3, 3, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	evs[1] = REPLAY_EV_END;
	fl = findings(f, 3, 3, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	evs[1] = REPLAY_EV_FILE;
	fl = findings(f, 3, 3, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	evs[1] = evs[0] - 1;
	fl = findings(f, 3, 3, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	evs[1] = evs[0];

	/* messages */
	memset(longest, 'x', sizeof longest - 1);
	longest[sizeof longest - 1] = '\0';
	memset(over, 'y', sizeof over - 1);
	over[sizeof over - 1] = '\0';
	fl = findings(f, 3, 3, evs, (const char *const[]){"a", longest, "c"},
	    3);
	r2 = load_with(s, buf, len, off, flen, f, fl);
	ck_assert_ptr_nonnull(r2);
	ck_assert_uint_eq(strlen(r2->fwd_issues[1].msg), sizeof longest - 1);
	replay_free(r2);
	fl = findings(f, 3, 3, evs, (const char *const[]){"a", over, "c"}, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	fl = findings(f, 3, 3, evs, (const char *const[]){"a", "\033[2J",
	    "c"}, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	fl = findings(f, 3, 3, evs, (const char *const[]){"a", "b\xc3\xa9",
	    "c"}, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	/* a NUL inside: the second message "b" given one byte more (the
	 * first issue is 16 + 24 + 1 bytes in, its length 16 further) */
	fl = findings(f, 3, 3, evs, ok3, 3);
	f[16 + 24 + 1 + 16] = 2;
	{
		uint8_t g[4096];
		size_t at = 16 + 24 + 1 + 24 + 1;

		memcpy(g, f, at);
		g[at] = 0;
		memcpy(g + at + 1, f + at, fl - at);
		ck_assert_ptr_null(load_with(s, buf, len, off, flen, g,
		    fl + 1));
	}
	/* a length past the buffer, and one within it but past the struct */
	fl = findings(f, 1, 1, evs, ok3, 1);
	put64(f + 16 + 16, UINT64_MAX - 4);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	put64(f + 16 + 16, len);
	ck_assert_ptr_null(load_with(s, buf, len, off, flen, f, fl));
	/* a message that fits the struct but runs past the end of the
	 * buffer (the checkpoints after it left out) */
	fl = findings(f, 1, 1, evs, (const char *const[]){"0123456789"}, 1);
	put64(f + 16 + 16, 150);
	ck_assert_ptr_null(load_with(s, buf, len, off, len - 8 - off, f, fl));
	/* cut short: the last message ends past the end */
	fl = findings(f, 3, 3, evs, ok3, 3);
	ck_assert_ptr_null(load_with(s, buf, len, off, len - 8 - off, f,
	    fl - 1));
	free(buf);
	snap_free(s);
}
END_TEST

/* An index written before the findings were saved (its replay section
 * under the older name): the next open builds the new section, the
 * rewrite leaves the old one out, and check answers from it what a fresh
 * replay does, on the file whose forward pass finds the most. */
START_TEST(test_replay_index_old_section)
{
	char dir[] = "/tmp/svreplay.XXXXXX", path[1200], src[1024];
	struct idx_section_builder old = replay_idx_section;
	struct idx_opts o;
	struct sv_index *ix;
	struct idx_info info;
	struct sv_error err;
	struct replay *r;
	struct replay_check c1, c2;
	const uint8_t *d;
	size_t len;
	FILE *f;
	uint8_t *b;
	long n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(src, sizeof src, "%s/tests/data/real/"
	    "synthetic_inconsistent.pickle", TOP_SRCDIR);
	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	old.name = "replay.2";
	o.sections = &old;
	o.n_sections = 1;
	ck_assert_int_eq(idx_open(src, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_ptr_nonnull(info.path);
	snprintf(path, sizeof path, "%s", info.path);
	idx_close(ix);

	o.sections = &replay_idx_section;
	ck_assert_int_eq(idx_open(src, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 1);
	ck_assert_int_eq(idx_section(ix, "replay.3", &d, &len), 0);
	ck_assert_uint_gt(len, 16);
	/* the section's record for device 0 loads (no fallback) */
	r = replay_new_saved(idx_snapshot(ix), 0, d + 16, len - 16, &err);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_gt(r->n_fwd_issues, 0);
	replay_free(r);
	r = replay_from_index(ix, 0, &err);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(replay_check(r, &c1, &err), 0);
	replay_free(r);
	r = replay_new(idx_snapshot(ix), 0, &err);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(replay_check(r, &c2, &err), 0);
	replay_free(r);
	ck_assert_uint_gt(c1.n_issues, 0);
	same_check(&c1, &c2);
	replay_check_destroy(&c1);
	replay_check_destroy(&c2);
	idx_close(ix);

	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = xmalloc((size_t)n);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	ck_assert_ptr_nonnull(memmem(b, (size_t)n, "x.replay.3", 10));
	ck_assert_ptr_null(memmem(b, (size_t)n, "x.replay.2", 10));
	free(b);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_replay_real_files)
{
	check_real("npu_leak_expandable.pickle", 1);
	check_real("npu_leak_empty_cache.pickle", 1);
	check_real("synthetic_inconsistent.pickle", 0);
}
END_TEST

static Suite *
replay_suite(void)
{
	Suite *s = suite_create("replay");
	TCase *tc = tcase_create("actions");
	TCase *tp = tcase_create("property");

	tcase_add_test(tc, test_replay_split_merge_pending);
	tcase_add_test(tc, test_replay_pre_trace_free);
	tcase_add_test(tc, test_replay_ghost_oom_unknown);
	tcase_add_test(tc, test_replay_large_split_rule);
	tcase_add_test(tc, test_replay_segment_free);
	tcase_add_test(tc, test_replay_expandable);
	tcase_add_test(tc, test_replay_workspace_triple);
	tcase_add_test(tc, test_replay_mismatch_and_file);
	tcase_add_test(tc, test_replay_check_overlaps);
	tcase_add_test(tc, test_replay_legacy_no_trace);
	tcase_add_test(tc, test_replay_corrupt_checkpoint);
	tcase_add_test(tc, test_replay_real_files);
	tcase_add_test(tc, test_replay_saved_findings);
	tcase_add_test(tc, test_replay_saved_findings_corrupt);
	tcase_add_test(tc, test_replay_index_old_section);
	suite_add_tcase(s, tc);
	tcase_add_loop_test(tp, test_replay_model_truth, 0, 6);
	tcase_add_test(tp, test_replay_checkpoint_lists);
	tcase_add_loop_test(tp, test_replay_truncated_paths, 0, 3);
	tcase_add_loop_test(tp, test_replay_build_shortcuts_model, 0, 3);
	tcase_add_test(tp, test_replay_build_shortcuts_files);
	tcase_add_loop_test(tp, test_replay_build_shortcuts_churn, 0, 3);
	tcase_add_test(tp, test_replay_build_stripe_coded);
	tcase_set_timeout(tp, 120);
	suite_add_tcase(s, tp);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(replay_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
