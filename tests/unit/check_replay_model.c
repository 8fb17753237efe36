/*
 * Replay tests against a small independent allocator model: ground truth
 * at every event, checkpoints vs full replay, +-1 stepping, truncated
 * traces, the build's shortcuts on the model, on churn and on the real
 * files, stripe-coded events. Run by check_replay.c.
 */
#include "config.h"

#include "replay_fix.h"

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

void
replay_model_tests(TCase *tp)
{
	tcase_add_loop_test(tp, test_replay_model_truth, 0, 6);
	tcase_add_test(tp, test_replay_checkpoint_lists);
	tcase_add_loop_test(tp, test_replay_truncated_paths, 0, 3);
	tcase_add_loop_test(tp, test_replay_build_shortcuts_model, 0, 3);
	tcase_add_test(tp, test_replay_build_shortcuts_files);
	tcase_add_loop_test(tp, test_replay_build_shortcuts_churn, 0, 3);
	tcase_add_test(tp, test_replay_build_stripe_coded);
}
