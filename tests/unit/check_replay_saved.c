/*
 * Replay tests of what the replay saves in the index: a corrupt
 * checkpoint, the forward pass's findings (saved, corrupt, an index
 * with the old section). Run by check_replay.c.
 */
#include "config.h"

#include <dirent.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#include "replay_fix.h"
#include "util/tape.h"
#include "util/thread.h"

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

/* The bytes replay_checkpoints_write() appends to a tape. */
static uint8_t *
written(struct replay *r, size_t tape_mem, size_t *len)
{
	struct tape t;
	uint8_t *p;
	int e;

	tape_init(&t, tape_mem);
	ck_assert_int_eq(replay_checkpoints_write(r, &t, &e), 0);
	ck_assert_int_eq(t.err, 0);
	ck_assert_int_eq(tape_in_file(&t), tape_mem > 0);
	*len = (size_t)tape_len(&t);
	p = xmalloc(*len + 1);
	ck_assert_int_eq(tape_read(&t, 0, p, *len), 0);
	tape_free(&t);
	return p;
}

/* replay_checkpoints_write(), which the index build calls, writes the
 * bytes replay_checkpoints_save() does, with several checkpoints: from a
 * replay whose checkpoints are in memory, and from one built for saving
 * whose checkpoints went to temporary files (a tiny limit sends them
 * there at once), to a tape in memory or in a file; they load. */
START_TEST(test_replay_write_same_bytes)
{
	struct snapshot *s = snap_new();
	struct replay *r, *r2, *rt;
	struct sv_error err;
	uint8_t *buf, *buf2;
	size_t len, len2, mem;
	uint64_t i;

	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	for (i = 0; i < 4000; i++) {
		ev(s, SNAP_ALLOC, BASE + (i % 7) * 512, 512);
		ev(s, SNAP_FREE_REQUESTED, BASE + (i % 7) * 512, 512);
		ev(s, SNAP_FREE_COMPLETED, BASE + (i % 7) * 512, 512);
	}
	ev(s, SNAP_ALLOC, BASE, 4096);
	push_seg(s, BASE, 0, 1, 0,
	    (const struct fb[]){{4096, A, 4096}, {2 * MIB - 4096, I, 0}}, 2);
	snap_finish(s);
	r = open_ok(s);
	ck_assert_uint_ge(replay_info(r)->n_checkpoints, 2);
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, &len), 0);
	ck_assert_uint_gt(len, 100);
	ck_assert_uint_eq(replay_checkpoints_len(r), len);
	for (mem = 0; mem <= 64; mem += 64) {
		buf2 = written(r, mem, &len2);
		ck_assert_uint_eq(len2, len);
		ck_assert_int_eq(memcmp(buf, buf2, len), 0);
		free(buf2);
	}
	replay_free(r);
	rt = replay_build(s, 0, 16, NULL, &err);
	ck_assert_ptr_nonnull(rt);
	ck_assert(tape_in_file(&rt->ck.tape[0]));
	ck_assert(tape_in_file(&rt->ck.tape[1]));
	ck_assert_uint_eq(replay_checkpoints_len(rt), len);
	/* it cannot seek, nor be saved the other way */
	ck_assert_int_ne(replay_seek(rt, 5, &err), 0);
	ck_assert_int_ne(replay_checkpoints_save(rt, &buf2, &len2), 0);
	buf2 = written(rt, 64, &len2);
	replay_free(rt);
	ck_assert_uint_eq(len2, len);
	ck_assert_int_eq(memcmp(buf, buf2, len), 0);
	r2 = replay_new_saved(s, 0, buf2, len2, &err);
	ck_assert_ptr_nonnull(r2);
	seek_ok(r2, (int64_t)replay_n_events(r2) - 1);
	replay_free(r2);
	free(buf);
	free(buf2);
	snap_free(s);
}
END_TEST

/* Saved bytes handed out as replay_from_index()'s reader does: each
 * span in a scratch buffer of its own that the next call overwrites
 * (a reader that kept a span across calls would read the wrong bytes),
 * counting the bytes read; a span past fail_at, or of a blob's table
 * entry made bad, is refused or wrong. */
struct test_src {
	const uint8_t *buf;
	uint64_t len, fail_at;
	uint64_t tab, read;          /* bytes read at tab or after */
	uint8_t *scratch;
	int released;
};

static const uint8_t *
test_span(void *ctx, uint64_t off, uint64_t n)
{
	struct test_src *t = ctx;

	ck_assert_uint_le(off, t->len);
	ck_assert_uint_le(n, t->len - off);
	if (off + n > t->fail_at)
		return NULL;
	free(t->scratch);
	t->scratch = xmalloc(n + 1);
	memcpy(t->scratch, t->buf + off, n);
	if (off >= t->tab)
		t->read += n;
	return t->scratch;
}

static void
test_release(void *ctx)
{
	((struct test_src *)ctx)->released++;
}

/* A replay that reads its checkpoints through a src (as
 * replay_from_index() opens one) seeks to the states of one that loaded
 * them whole, in both directions and across checkpoints, having read a
 * fraction of the bytes; it is released once, loaded or not; a blob's
 * table entry out of the arena, or bytes that cannot be read, fail the
 * seek that needs them as bad input, and the replay goes on. */
START_TEST(test_replay_saved_src)
{
	struct snapshot *s = snap_new();
	struct replay *r, *r2;
	struct sv_error err;
	const int64_t at[] = {9000, 5, 30000, 12000, 4100, 36000, 11999, 0,
	    8191};
	struct test_src t = {NULL, 0, UINT64_MAX, 0, 0, NULL, 0};
	struct replay_src src = {test_span, &t, test_release};
	uint8_t *buf, *bad;
	size_t len, i;
	uint64_t n_blobs, tab;

	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	for (i = 0; i < 4000; i++) {
		ev(s, SNAP_ALLOC, BASE + (i % 7) * 512, 512 + i % 3);
		ev(s, SNAP_FREE_REQUESTED, BASE + (i % 7) * 512, 512 + i % 3);
		ev(s, SNAP_FREE_COMPLETED, BASE + (i % 7) * 512, 512 + i % 3);
	}
	/* 32 segments more, changing throughout: hundreds of blobs */
	for (i = 0; i < 32; i++)
		ev(s, SNAP_SEGMENT_ALLOC, BASE + (4 + 2 * i) * MIB, 2 * MIB);
	for (i = 0; i < 8000; i++) {
		uint64_t a = BASE + (4 + 2 * (i % 32)) * MIB + i / 32 % 5 * 512;

		ev(s, SNAP_ALLOC, a, 512);
		ev(s, SNAP_FREE_REQUESTED, a, 512);
		ev(s, SNAP_FREE_COMPLETED, a, 512);
	}
	ev(s, SNAP_ALLOC, BASE, 4096);
	push_seg(s, BASE, 0, 1, 0,
	    (const struct fb[]){{4096, A, 4096}, {2 * MIB - 4096, I, 0}}, 2);
	for (i = 0; i < 32; i++)
		push_seg(s, BASE + (4 + 2 * i) * MIB, 0, 1, 0,
		    (const struct fb[]){{2 * MIB, I, 0}}, 1);
	snap_finish(s);
	r = open_ok(s);
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, &len), 0);
	replay_free(r);
	r = replay_new_saved(s, 0, buf, len, &err);
	ck_assert_ptr_nonnull(r);
	/* the blobs' table, then the arena, end the bytes */
	n_blobs = r->ck.n_blobs;
	tab = len - 8 - r->ck.arena_len - 16 * n_blobs;
	ck_assert_uint_gt(n_blobs, 100);
	t.buf = buf;
	t.len = len;
	t.tab = tab;
	r2 = replay_new_saved_src(s, 0, &src, len, &err);
	ck_assert_ptr_nonnull(r2);
	ck_assert_uint_ge(replay_info(r2)->n_checkpoints, 2);
	/* the bytes before the table and checkpoint 0's blobs: a few of
	 * the table's and the arena's */
	ck_assert_uint_lt(t.read, (len - 8 - tab) / 8);
	seek_ok(r2, 12000);
	ck_assert_uint_lt(t.read, (len - 8 - tab) / 4);
	for (i = 0; i < sizeof at / sizeof at[0]; i++) {
		const struct replay_state *a, *b;

		seek_ok(r, at[i]);
		seek_ok(r2, at[i]);
		a = replay_state(r);
		b = replay_state(r2);
		ck_assert_int_eq(b->at, at[i]);
		ck_assert_uint_eq(a->n_segments, b->n_segments);
		ck_assert_uint_eq(a->n_blocks, b->n_blocks);
		ck_assert_int_eq(memcmp(a->blocks, b->blocks,
		    a->n_blocks * sizeof *a->blocks), 0);
		ck_assert_uint_eq(a->allocated, b->allocated);
		ck_assert_uint_eq(a->requested, b->requested);
	}
	ck_assert_int_eq(t.released, 0);
	/* it reads where the bytes are: it cannot write them back */
	ck_assert_int_ne(replay_checkpoints_save(r2, &bad, &i), 0);
	replay_free(r2);
	ck_assert_int_eq(t.released, 1);
	replay_free(r);

	/* the blobs' table is checked as it is used: every entry made to
	 * point past the arena */
	bad = xmalloc(len);
	memcpy(bad, buf, len);
	for (i = 0; i < n_blobs; i++)
		sv_le64_put(bad + tab + 16 * i, len);
	t.buf = bad;
	t.released = 0;
	r2 = replay_new_saved_src(s, 0, &src, len, &err);
	ck_assert_ptr_nonnull(r2); /* checkpoint 0 is empty: it loads */
	ck_assert_int_ne(replay_seek(r2, 30000, &err), 0);
	ck_assert_int_eq(err.code, SV_ERR_FORMAT);
	seek_ok(r2, 3);
	replay_free(r2);
	ck_assert_int_eq(t.released, 1);

	/* bytes that cannot be read: the head refused, or the seek that
	 * needs the arena's last byte (the last checkpoint's last blob's) */
	t.buf = buf;
	t.fail_at = 100;
	ck_assert_ptr_null(replay_new_saved_src(s, 0, &src, len, &err));
	ck_assert_int_eq(t.released, 2);
	t.fail_at = len - 9;
	r2 = replay_new_saved_src(s, 0, &src, len, &err);
	ck_assert_ptr_nonnull(r2);
	ck_assert_int_ne(replay_seek(r2,
	    (int64_t)replay_n_events(r2) - 1, &err), 0);
	ck_assert_int_eq(err.code, SV_ERR_FORMAT);
	seek_ok(r2, 5);
	replay_free(r2);
	ck_assert_int_eq(t.released, 3);
	free(t.scratch);
	free(bad);
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
	/* read through the index's reader, not built again */
	ck_assert_ptr_nonnull(r->src.span);
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

/* Removes dir's two caches (files only) and dir. */
static void
rm_tree(const char *dir)
{
	static const char *const sub[] = {"one", "two"};
	char p[1200];
	size_t k;

	for (k = 0; k < 2; k++) {
		struct dirent *e;
		DIR *dp;

		snprintf(p, sizeof p, "%s/%s", dir, sub[k]);
		if ((dp = opendir(p)) == NULL)
			continue;
		while ((e = readdir(dp)) != NULL) {
			char f[1500];

			if (e->d_name[0] == '.')
				continue;
			snprintf(f, sizeof f, "%s/%s", p, e->d_name);
			unlink(f);
		}
		closedir(dp);
		rmdir(p);
	}
	rmdir(dir);
}

/* The replay section of src built with the default threads, or on one
 * (one_thread), into a cache of its own under dir: its bytes in *out
 * (*len), or 0 when src does not index. */
static int
early_section(const char *src, const char *dir, int one_thread,
    uint8_t **out, size_t *len)
{
	char cache[1100];
	struct idx_opts o;
	struct sv_index *ix;
	struct sv_error err;
	const uint8_t *d;
	int ok = 0;

	snprintf(cache, sizeof cache, "%s/%s", dir, one_thread ? "one" : "two");
	mkdir(cache, 0700);
	memset(&o, 0, sizeof o);
	o.cache_dir = cache;
	o.sections = &replay_idx_section;
	o.n_sections = 1;
	sv_thread_set_max(one_thread ? 1 : 0);
	if (idx_open(src, &o, &ix, &err) == 0) {
		if (idx_section(ix, "replay.3", &d, len) == 0) {
			*out = xmalloc(*len + 1);
			memcpy(*out, d, *len);
			ok = 1;
		}
		idx_close(ix);
	}
	sv_thread_set_max(0);
	return ok;
}

/* The forward pass made beside the parse (replay_early.c) is taken by
 * the builds of files whose trace starts empty, most of them with no
 * backward pass, and the replay section is then the same bytes as a
 * build on one thread (which never has such a pass) makes: every
 * snapshot of the test data, built both ways. */
START_TEST(test_replay_early_same)
{
	static const char *dirs[] = {"tests/data", "tests/data/gen",
	    "tests/data/fixtures", "tests/data/real"};
	char dir[] = "/tmp/svearly.XXXXXX", path[1200];
	uint64_t taken = 0, whole = 0, before, before_whole;
	size_t k, n_files = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
		char dpath[1100];
		struct dirent *e;
		DIR *dp;

		snprintf(dpath, sizeof dpath, "%s/%s", TOP_SRCDIR, dirs[k]);
		dp = opendir(dpath);
		ck_assert_ptr_nonnull(dp);
		while ((e = readdir(dp)) != NULL) {
			size_t l = strlen(e->d_name), la, lb;
			uint8_t *a = NULL, *b = NULL;
			int oka, okb;

			if (l < 8 || strcmp(e->d_name + l - 7, ".pickle") != 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", dpath, e->d_name);
			before = atomic_load(&replay_early_adopted);
			before_whole = atomic_load(&replay_early_whole_taken);
			oka = early_section(path, dir, 0, &a, &la);
			taken += atomic_load(&replay_early_adopted) - before;
			whole += atomic_load(&replay_early_whole_taken) -
			    before_whole;
			before = atomic_load(&replay_early_adopted);
			okb = early_section(path, dir, 1, &b, &lb);
			/* one thread: no pass beside the parse */
			ck_assert_uint_eq(atomic_load(&replay_early_adopted),
			    before);
			ck_assert_int_eq(oka, okb);
			if (oka) {
				if (la != lb || memcmp(a, b, la) != 0)
					ck_abort_msg("%s: the replay section "
					    "differs on one thread", path);
				n_files++;
			}
			free(a);
			free(b);
		}
		closedir(dp);
	}
	rm_tree(dir);
	ck_assert_uint_ge(n_files, 30);
	/* the demo, the fixtures that start empty, gensnap's files */
	ck_assert_uint_ge(taken, 10);
	/* most with no backward pass (replay_early_whole()), and some
	 * after one (an expandable segment, a pool of an event's own) */
	ck_assert_uint_ge(whole, 10);
	ck_assert_uint_gt(taken, whole);
}
END_TEST

/* Copies src to dst, with a modification time of sec seconds. */
static void
copy_file(const char *src, const char *dst, time_t sec)
{
	struct timespec ts[2] = {{sec, 0}, {sec, 0}};
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	char buf[65536];
	size_t n;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	ck_assert_int_eq(fflush(out), 0);
	ck_assert_int_eq(futimens(fileno(out), ts), 0);
	ck_assert_int_eq(fclose(out), 0);
}

/* An open of src into the cache under dir/name with the replay section
 * left for later: what its streams gathered (NULL: none). */
static struct idx_streamed *
streamed_of(const char *src, const char *dir, const char *name)
{
	char cache[1100];
	struct idx_streamed *st = NULL;
	struct idx_opts o;
	struct sv_index *ix;
	struct sv_error err;
	const uint8_t *d;
	size_t len;

	snprintf(cache, sizeof cache, "%s/%s", dir, name);
	mkdir(cache, 0700);
	memset(&o, 0, sizeof o);
	o.cache_dir = cache;
	o.sections = &replay_idx_section;
	o.n_sections = 1;
	o.sections_later = 1;
	o.streamed_out = &st;
	ck_assert_int_eq(idx_open(src, &o, &ix, &err), 0);
	/* not built, nor asked to be */
	ck_assert_int_ne(idx_section(ix, "replay.3", &d, &len), 0);
	ck_assert(idx_missing_extensions(ix, &o));
	idx_close(ix);
	return st;
}

/* The section added to the index under dir/name of src, with st: its
 * bytes in *len; *taken: early passes the build took. */
static uint8_t *
added_with(const char *src, const char *dir, const char *name,
    struct idx_streamed *st, size_t *len, uint64_t *taken)
{
	char cache[1100];
	uint64_t before = atomic_load(&replay_early_adopted);
	struct idx_opts o;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;
	const uint8_t *d;
	uint8_t *out;

	snprintf(cache, sizeof cache, "%s/%s", dir, name);
	mkdir(cache, 0700);
	memset(&o, 0, sizeof o);
	o.cache_dir = cache;
	o.sections = &replay_idx_section;
	o.n_sections = 1;
	o.streamed = st;
	ck_assert_int_eq(idx_open(src, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert(info.built);
	ck_assert_int_eq(idx_section(ix, "replay.3", &d, len), 0);
	out = xmalloc(*len + 1);
	memcpy(out, d, *len);
	idx_close(ix);
	*taken = atomic_load(&replay_early_adopted) - before;
	return out;
}

/* added_with(), st then freed: the section must be a[la]; returns the
 * early passes the build took. */
static uint64_t
same_added(const char *src, const char *dir, const char *name,
    struct idx_streamed *st, const uint8_t *a, size_t la)
{
	uint64_t taken;
	size_t lb;
	uint8_t *b = added_with(src, dir, name, st, &lb, &taken);

	idx_streamed_free(st);
	ck_assert_uint_eq(la, lb);
	ck_assert_int_eq(memcmp(a, b, la), 0);
	free(b);
	return taken;
}

/* The viewer's first open of a large snapshot builds its sections behind
 * the first screen (idx_opts.sections_later): the passes made beside
 * that open's parse are taken by the open that adds them, to the same
 * bytes, and not by one that adds them to another file's index. */
START_TEST(test_replay_early_later)
{
	char dir[] = "/tmp/svlater.XXXXXX", leak[1100], frag[1100];
	struct idx_streamed *st;
	uint8_t *a;
	size_t la;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(leak, sizeof leak, "%s/tests/data/gen/leak.pickle",
	    TOP_SRCDIR);
	snprintf(frag, sizeof frag, "%s/tests/data/gen/frag.pickle",
	    TOP_SRCDIR);
	ck_assert(early_section(leak, dir, 1, &a, &la));
	st = streamed_of(leak, dir, "later");
	ck_assert_ptr_nonnull(st);
	ck_assert_uint_ge(same_added(leak, dir, "later", st, a, la), 1);
	/* another file's: not taken, the same bytes */
	idx_streamed_free(streamed_of(leak, dir, "other"));
	st = streamed_of(frag, dir, "frag");
	ck_assert_ptr_nonnull(st);
	ck_assert_uint_eq(same_added(leak, dir, "other", st, a, la), 0);
	/* a copy of the same bytes, of another time: not taken either
	 * (the file might have been rewritten in between) */
	snprintf(frag, sizeof frag, "%s/copy.pickle", dir);
	copy_file(leak, frag, 1000000000);
	st = streamed_of(frag, dir, "copy");
	snprintf(frag, sizeof frag, "%s/copy2.pickle", dir);
	copy_file(leak, frag, 2000000000);
	idx_streamed_free(streamed_of(frag, dir, "copy2"));
	ck_assert_uint_eq(same_added(frag, dir, "copy2", st, a, la), 0);
	free(a);
	rm_tree(dir);
}
END_TEST

/* Device 0's checkpoints as replay_build() makes them with an early
 * pass over s's events (early) or without one; *whole and *taken: 1
 * when the build took the pass with no backward pass, or at all. */
static uint8_t *
built_bytes(const struct snapshot *s, int early, size_t *len, int *whole,
    int *taken)
{
	struct finseg *fin[1];
	size_t n_fin[1];
	uint64_t w = atomic_load(&replay_early_whole_taken);
	uint64_t a = atomic_load(&replay_early_adopted);
	struct replay *x = NULL, *r;
	const struct snap_trace *t = snap_trace_of(s, 0);
	struct sv_error err;
	uint8_t *buf;
	uint64_t i;

	replay_early_final(s, 1, fin, n_fin);
	if (early) {
		x = replay_early_new(0, 0, fin[0], n_fin[0]);
		for (i = 0; x != NULL && i < t->n; i++) {
			struct rev e;

			rev_read(t, i, &e);
			if (replay_early_event(x, &e, 0) != 0) {
				replay_free(x);
				x = NULL;
			}
		}
		ck_assert_ptr_nonnull(x);
	}
	r = replay_build(s, 0, 0, x, &err);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(replay_checkpoints_save(r, &buf, len), 0);
	replay_free(r);
	free(fin[0]);
	*whole = atomic_load(&replay_early_whole_taken) != w;
	*taken = atomic_load(&replay_early_adopted) != a;
	return buf;
}

/* s's checkpoints are the same bytes with its events' early pass as
 * without; it was taken with no backward pass (whole) or not at all. */
static void
early_case(struct snapshot *s, int whole, int taken)
{
	uint8_t *a, *b;
	size_t la, lb;
	int w, t;

	snap_finish(s);
	a = built_bytes(s, 0, &la, &w, &t);
	ck_assert(!w && !t);
	b = built_bytes(s, 1, &lb, &w, &t);
	ck_assert_int_eq(w, whole);
	ck_assert_int_eq(t, taken);
	ck_assert_uint_eq(la, lb);
	ck_assert_int_eq(memcmp(a, b, la), 0);
	free(a);
	free(b);
	snap_free(s);
}

/* A trace from an empty start that ends in the file's final state is
 * taken with no backward pass; one that leaves something to a backward
 * pass (a segment freed with attributes no guess gives it, a state that
 * is not the file's) is not, and the bytes are the same every way. */
START_TEST(test_replay_early_whole)
{
	const uint64_t big = BASE + 64 * MIB;
	struct snapshot *s;
	uint64_t i;
	int large;

	/* blocks come and go, a 20 MiB segment too */
	s = snap_new();
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	for (i = 0; i < 2000; i++) {
		ev(s, SNAP_ALLOC, BASE, 512);
		ev(s, SNAP_ALLOC, BASE + 512, 1000);
		ev(s, SNAP_FREE_REQUESTED, BASE + 512, 1000);
		ev(s, SNAP_FREE_COMPLETED, BASE + 512, 1000);
		ev(s, SNAP_FREE_COMPLETED, BASE, 512);
	}
	ev(s, SNAP_SEGMENT_ALLOC, big, 20 * MIB);
	ev(s, SNAP_ALLOC, big, 12 * MIB);
	ev(s, SNAP_FREE_COMPLETED, big, 12 * MIB);
	ev(s, SNAP_SEGMENT_FREE, big, 20 * MIB);
	ev(s, SNAP_ALLOC, BASE, 1000);
	ev(s, SNAP_ALLOC, BASE + 1024, 4096);
	ev(s, SNAP_FREE_REQUESTED, BASE + 1024, 4096);
	push_seg(s, BASE, 0, 0, 0, (const struct fb[]){{1024, A, 1000},
	    {4096, P, 4096}, {2 * MIB - 5120, I, 0}}, 3);
	early_case(s, 1, 1);

	/* the same address and size made twice, the first freed: the
	 * final segment's attributes (large) are not what a backward pass
	 * gives the first (a 2 MiB segment is small); with a small final
	 * segment, a guess either way */
	for (large = 0; large <= 1; large++) {
		s = snap_new();
		ev(s, SNAP_SEGMENT_ALLOC, big, 2 * MIB);
		ev(s, SNAP_SEGMENT_FREE, big, 2 * MIB);
		ev(s, SNAP_SEGMENT_ALLOC, big, 2 * MIB);
		ev(s, SNAP_ALLOC, big, 2 * MIB);
		push_seg(s, big, 0, large, 0, (const struct fb[]){{2 * MIB,
		    A, 2 * MIB}}, 1);
		early_case(s, !large, !large);
	}

	/* the file's final state has a block the trace freed */
	s = snap_new();
	ev(s, SNAP_SEGMENT_ALLOC, BASE, 2 * MIB);
	ev(s, SNAP_ALLOC, BASE, 512);
	ev(s, SNAP_ALLOC, BASE + 512, 512);
	ev(s, SNAP_FREE_COMPLETED, BASE + 512, 512);
	push_seg(s, BASE, 0, 0, 0, (const struct fb[]){{512, A, 512},
	    {512, A, 512}, {2 * MIB - 1024, I, 0}}, 3);
	early_case(s, 0, 0);
}
END_TEST

void
replay_saved_tests(TCase *tc)
{
	tcase_add_test(tc, test_replay_corrupt_checkpoint);
	tcase_add_test(tc, test_replay_saved_findings);
	tcase_add_test(tc, test_replay_write_same_bytes);
	tcase_add_test(tc, test_replay_saved_src);
	tcase_add_test(tc, test_replay_saved_findings_corrupt);
	tcase_add_test(tc, test_replay_index_old_section);
	tcase_add_test(tc, test_replay_early_same);
	tcase_add_test(tc, test_replay_early_whole);
	tcase_add_test(tc, test_replay_early_later);
}
