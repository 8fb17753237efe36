/*
 * Index unit tests: extension sections (built, lazy, peeked, chunked,
 * read a piece at a time, read back after their pages were dropped),
 * the int64 rule, devices out of range, wrapped totals, the peak before
 * the first event and readers on several threads. Run by check_index.c.
 */
#include "config.h"

#include "index_fix.h"
#include "util/tape.h"
#include "util/thread.h"

/* ---- extension sections -------------------------------------------------- */

static int n_ext_builds;

static int
ext_build(const struct snapshot *s, void *arg, uint8_t **data, size_t *len,
    struct sv_error *err)
{
	uint64_t i, n = s->traces[0].n;
	uint64_t *d = xmalloc(n * 8 + 8);

	(void)err;
	n_ext_builds++;
	/* something derived from the events and the argument */
	for (i = 0; i < n; i++)
		d[i] = snap_ev_addr(&s->traces[0], i) ^
		    (uint64_t)(uintptr_t)arg;
	*data = (uint8_t *)d;
	*len = n * 8;
	return 0;
}

/* The two sections the extension tests register: "replay.ckpt" (the
 * event addresses ^ 5) and "other" (^ 9). */
static void
two_sections(struct idx_section_builder secs[2])
{
	memset(secs, 0, 2 * sizeof *secs);
	secs[0].name = "replay.ckpt";
	secs[0].build = ext_build;
	secs[0].arg = (void *)(uintptr_t)5;
	secs[1].name = "other";
	secs[1].build = ext_build;
	secs[1].arg = (void *)(uintptr_t)9;
}

/* The index of src opened as it is stored: neither built nor extended. */
static struct sv_index *
open_as_is(const char *src, const struct idx_opts *o)
{
	struct sv_index *ix;
	struct idx_info info;

	n_ext_builds = 0;
	ix = open_ok(src, o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	ck_assert_int_eq(n_ext_builds, 0);
	return ix;
}

START_TEST(test_extension_sections)
{
	char *src = tpath("m.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder secs[2];
	const uint8_t *d;
	size_t len, n0, n1;
	struct snapshot *ref = make_snap(model_events);
	uint64_t i;
	struct idx_info info;
	struct sv_index *ix0;
	struct stat st0, st1;
	uint8_t *before, *after;
	char *ipath;

	write_file(src, "model", 5);
	two_sections(secs);
	opts_init(&o, &w, 1);
	o.sections = secs;
	o.n_sections = 1;
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_uint_eq(len, ref->traces[0].n * 8);
	ck_assert_int_ne(idx_section(ix, "other", &d, &len), 0);
	idx_close(ix);

	/* reopen: stored, not rebuilt */
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 0);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	for (i = 0; i < ref->traces[0].n; i++)
		ck_assert_uint_eq(((const uint64_t *)d)[i],
		    snap_ev_addr(&ref->traces[0], i) ^ 5);
	idx_close(ix);

	/* a new section: built from the mapped index, added to the file in
	 * place (the same file, grown; what it held where it was) */
	idx_get_info(ix0 = open_ok(src, &o), &info);
	ipath = xstrdup(info.path);
	idx_close(ix0);
	ck_assert_int_eq(stat(ipath, &st0), 0);
	before = read_file(ipath, &n0);
	o.n_sections = 2;
	n_loads = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	ck_assert_int_eq(n_loads, 0);
	ck_assert_int_eq(stat(ipath, &st1), 0);
	ck_assert(st1.st_ino == st0.st_ino && st1.st_dev == st0.st_dev);
	ck_assert_int_gt(st1.st_size, st0.st_size);
	after = read_file(ipath, &n1);
	ck_assert_int_eq(memcmp(before + IDX_PRELUDE_LEN,
	    after + IDX_PRELUDE_LEN, n0 - IDX_PRELUDE_LEN), 0);
	free(before);
	free(after);
	ck_assert_int_eq(idx_section(ix, "other", &d, &len), 0);
	ck_assert_uint_eq(((const uint64_t *)d)[3],
	    snap_ev_addr(&ref->traces[0], 3) ^ 9);
	idx_close(ix);
	ix = open_as_is(src, &o);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_int_eq(idx_section(ix, "other", &d, &len), 0);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);

	/* a section no longer asked for would be dead bytes: the file is
	 * rewritten without it (another file), not extended */
	secs[1].name = "third";
	st0 = st1;
	ix = open_ok(src, &o);
	ck_assert_int_eq(idx_section(ix, "third", &d, &len), 0);
	idx_close(ix);
	ck_assert_int_eq(stat(ipath, &st1), 0);
	ck_assert(st1.st_ino != st0.st_ino);
	ck_assert_int_lt(st1.st_size, st0.st_size + 8 * (off_t)model_events);
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(ipath);
	free(src);
}
END_TEST

/* An extension in place killed after its sections were appended, before
 * the prelude that makes them part of the index (SNAPVIEW_TEST_BUILD_PAUSE
 * holds it there): the file is the index it was, reused as it is, and the
 * next extension adds the section after the dead bytes, in place. */
START_TEST(test_extension_killed)
{
	char *src = tpath("k.pickle"), *go = tpath("go"), *held, *ipath;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder secs[2];
	struct snapshot *ref = make_snap(model_events);
	struct idx_info info;
	struct stat st0, st1;
	const uint8_t *d;
	uint8_t *pre0, *pre1;
	size_t len, n;
	pid_t pid;
	int status, k;

	write_file(src, "model", 5);
	two_sections(secs);
	opts_init(&o, &w, 1);
	o.sections = secs;
	o.n_sections = 1;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ipath = xstrdup(info.path);
	idx_close(ix);
	ck_assert_int_eq(stat(ipath, &st0), 0);
	pre0 = read_file(ipath, &n);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sv_error err;

		setenv("SNAPVIEW_TEST_BUILD_PAUSE", go, 1);
		o.n_sections = 2;
		ix = NULL;
		idx_open(src, &o, &ix, &err);
		_exit(0);
	}
	xasprintf(&held, "%s.held.%ld", go, (long)pid);
	for (k = 0; k < 3000 && !exists(held); k++)
		usleep(10000);
	ck_assert_msg(exists(held), "the extension never reached the pause");
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(stat(ipath, &st1), 0);
	ck_assert(st1.st_ino == st0.st_ino);
	ck_assert_int_gt(st1.st_size, st0.st_size);
	/* the index it was: the same prelude (pointing at the old header),
	 * reused, its section there */
	pre1 = read_file(ipath, &n);
	ck_assert_int_eq(memcmp(pre0, pre1, IDX_PRELUDE_LEN), 0);
	free(pre0);
	free(pre1);
	ix = open_as_is(src, &o);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_uint_eq(((const uint64_t *)d)[2],
	    snap_ev_addr(&ref->traces[0], 2) ^ 5);
	idx_close(ix);
	/* extended again, in place */
	o.n_sections = 2;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	ck_assert_int_eq(idx_section(ix, "other", &d, &len), 0);
	ck_assert_uint_eq(((const uint64_t *)d)[3],
	    snap_ev_addr(&ref->traces[0], 3) ^ 9);
	idx_close(ix);
	ck_assert_int_eq(stat(ipath, &st1), 0);
	ck_assert(st1.st_ino == st0.st_ino);
	ix = open_as_is(src, &o);
	assert_same_snapshot(idx_snapshot(ix), ref);
	assert_same_timelines(ix, ref);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	snap_free(ref);
	free(held);
	free(ipath);
	free(go);
	free(src);
}
END_TEST

/* Makes an index whose section bytes were changed in place valid again
 * (as a hostile writer would): every TOC hash recomputed, the header
 * repacked (in place when it fits, else appended) and the prelude fixed. */
static void
rehash_index(const char *ipath)
{
	size_t n, moff = 0, out_n;
	uint8_t *b = read_file(ipath, &n), *out;
	uint64_t hoff = 0, hlen = 0, h;
	msgpack_unpacked res;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_object *toc = NULL;
	uint32_t i;
	int k;

	for (k = 0; k < 8; k++) {
		hoff |= (uint64_t)b[IDX_OFF_HEADER_OFF + k] << (8 * k);
		hlen |= (uint64_t)b[IDX_OFF_HEADER_LEN + k] << (8 * k);
	}
	msgpack_unpacked_init(&res);
	ck_assert_int_eq(msgpack_unpack_next(&res, (char *)b + hoff, hlen,
			     &moff),
	    MSGPACK_UNPACK_SUCCESS);
	for (i = 0; i < res.data.via.map.size; i++) {
		msgpack_object_kv *kv = &res.data.via.map.ptr[i];

		if (kv->key.via.str.size == 3 &&
		    memcmp(kv->key.via.str.ptr, "toc", 3) == 0)
			toc = &kv->val;
	}
	ck_assert_ptr_nonnull(toc);
	for (i = 0; i < toc->via.array.size; i++) {
		msgpack_object *e = toc->via.array.ptr[i].via.array.ptr;

		e[5].via.u64 = XXH3_64bits(b + e[1].via.u64, e[2].via.u64);
	}
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_object(&pk, res.data);
	out_n = sb.size <= hlen ? n : (size_t)hoff + sb.size;
	out = xcalloc(1, out_n);
	memcpy(out, b, n < out_n ? n : out_n);
	memcpy(out + hoff, sb.data, sb.size);
	h = XXH3_64bits(sb.data, sb.size);
	for (k = 0; k < 8; k++) {
		out[IDX_OFF_HEADER_LEN + k] = (uint8_t)(sb.size >> (8 * k));
		out[IDX_OFF_HEADER_HASH + k] = (uint8_t)(h >> (8 * k));
	}
	h = XXH3_64bits(out, IDX_OFF_PRELUDE_HASH);
	for (k = 0; k < 8; k++)
		out[IDX_OFF_PRELUDE_HASH + k] = (uint8_t)(h >> (8 * k));
	write_file(ipath, out, out_n);
	msgpack_sbuffer_destroy(&sb);
	msgpack_unpacked_destroy(&res);
	free(out);
	free(b);
}

/* A device number in an index is range-checked like the loader's: a
 * hostile index naming device 0xfffffffe is rebuilt, not believed (it
 * made `stats` allocate 4.2 GB). */
/* A device without the WRAP flag is read with int64 sums, exact only
 * while every sum stays below 2^62 in magnitude (what the builder flags
 * WRAP past): a stripe whose stored base breaks that rule (a hostile
 * writer's, hashes made right) is damage, found when its totals or
 * reserved bytes are read, not sums read modulo 2^64. */
START_TEST(test_int64_rule)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	const struct idx_timeline *tl;
	struct sv_index *ix;
	uint64_t off, len, big = (uint64_t)1 << 62;
	uint64_t neg = 0 - big;
	int fd;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	/* the good index reads without damage */
	ix = open_ok(src, &o);
	walk_all(ix);
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);
	/* base[0] (totals), then base[1] (reserved, below -2^62) */
	find_section(ipath, IDX_SEC_EVDIR, &off, &len);
	ck_assert_uint_ge(len, sizeof(struct snap_stripedir));
	fd = open(ipath, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &big, 8, (off_t)(off +
	    offsetof(struct snap_stripedir, base))), 8);
	close(fd);
	rehash_index(ipath);
	ix = open_ok(src, &o);
	ck_assert_int_eq(idx_damaged(ix), 0);
	tl = idx_timeline(ix, 0);
	ck_assert_ptr_nonnull(tl);
	ck_assert_uint_gt(tl->n_events, 0);
	(void)idx_tl_total(tl, 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	ck_assert(!exists(ipath));
	idx_close(open_ok(src, &o)); /* rebuilt */
	find_section(ipath, IDX_SEC_EVDIR, &off, &len);
	fd = open(ipath, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &neg, 8, (off_t)(off +
	    offsetof(struct snap_stripedir, base) + 8)), 8);
	close(fd);
	rehash_index(ipath);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	(void)idx_tl_reserved(tl, 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_device_out_of_range)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	uint64_t off, len;
	uint32_t dev = 0xfffffffeu;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	find_section(ipath, IDX_SEC_SEGMENTS, &off, &len);
	ck_assert_uint_ge(len, sizeof(struct snap_segment));
	{
		int fd = open(ipath, O_RDWR);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pwrite(fd, &dev, 4, (off_t)(off +
		    offsetof(struct snap_segment, device))), 4);
		close(fd);
	}
	rehash_index(ipath);
	expect_rebuild(src, &o, &w, "inconsistent");
	free(ipath);
	free(src);
}
END_TEST

static uint32_t many_segments;

/* make_snap() with many more segments (device 0, empty). */
static int
segs_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	struct snapshot *s;
	uint32_t i;

	(void)path;
	(void)lo;
	(void)err;
	s = make_snap(300);
	for (i = 0; i < many_segments; i++) {
		struct snap_segment *g = snap_push_segment(s);

		g->addr = 0x40000000ull + (uint64_t)i * 0x200000;
		g->total_size = 0x200000;
		g->first_block = s->n_blocks;
	}
	snap_finish(s);
	*out = s;
	return 0;
}

/* The quick open hashes every section but the column data, whatever its
 * size: one byte changed in a 1.6 MB segments section is seen (it was
 * accepted when sections over 1 MiB were left to a full check). */
START_TEST(test_big_section_hashed)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	uint64_t off, len;

	many_segments = 20000;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.load = segs_load;
	idx_close(open_ok(src, &o));
	find_section(ipath, IDX_SEC_SEGMENTS, &off, &len);
	ck_assert_uint_gt(len, 1u << 20);
	flip_bit(ipath, off + len / 2, 5);
	memset(&w, 0, sizeof w);
	idx_close(open_ok(src, &o));
	ck_assert_int_eq(w.n, 1);
	ck_assert_msg(strstr(w.last, "section segments") != NULL, "%s", w.all);
	free(src);
	free(ipath);
}
END_TEST

static uint64_t
small_bound(const struct snapshot *s, void *arg)
{
	(void)s;
	(void)arg;
	return 16;
}

/* idx_peek_section(): one section of an index idx_open() would use,
 * the same bytes, without opening it; nothing when there is no index, no
 * such section, a damaged one, a stale index or one it does not trust. */
START_TEST(test_peek_section)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder sec = {.name = "peek.me",
	    .build = ext_build, .arg = (void *)(uintptr_t)7};
	struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000, 0}};
	struct sv_error err;
	const uint8_t *d;
	uint8_t *p;
	size_t len, plen;
	uint64_t off, slen;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.sections = &sec;
	o.n_sections = 1;
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	ix = open_ok(src, &o);
	ck_assert_int_eq(idx_section(ix, "peek.me", &d, &len), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 0);
	ck_assert_uint_eq(plen, len);
	ck_assert_int_eq(memcmp(p, d, len), 0);
	free(p);
	idx_close(ix);
	/* too long, another name */
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", len - 1, &p,
	    &plen, &err), 1);
	ck_assert_int_eq(idx_peek_section(src, &o, "other", 1 << 20, &p,
	    &plen, &err), 1);
	ck_assert_ptr_null(p);
	/* not trusted: writable by the group */
	ck_assert_int_eq(chmod(ipath, 0620), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	ck_assert_int_eq(chmod(ipath, 0600), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 0);
	free(p);
	/* damaged */
	find_section(ipath, "x.peek.me", &off, &slen);
	flip_bit(ipath, off + slen / 2, 3);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	flip_bit(ipath, off + slen / 2, 3);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 0);
	free(p);
	/* stale: the snapshot changed */
	ck_assert_int_eq(utimensat(AT_FDCWD, src, ts, 0), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), 1);
	/* no snapshot at all */
	ck_assert_int_eq(unlink(src), 0);
	ck_assert_int_eq(idx_peek_section(src, &o, "peek.me", 1 << 20, &p,
	    &plen, &err), -1);
	ck_assert_int_eq(w.n, 0);
	free(src);
	free(ipath);
}
END_TEST

/* Extension sections: only the names the opener registers are read, each
 * checked and decompressed when first asked for, and one longer than its
 * builder's bound is not read (it is built again). */
START_TEST(test_extension_sections_lazy)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder sec = {.name = "replay.ckpt",
	    .build = ext_build, .arg = (void *)(uintptr_t)5};
	const uint8_t *d;
	size_t len;
	uint64_t off, slen;
	struct idx_info info;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	o.sections = &sec;
	o.n_sections = 1;
	idx_close(open_ok(src, &o));
	find_section(ipath, "x.replay.ckpt", &off, &slen);
	flip_bit(ipath, off + slen / 2, 1);

	/* an opener that does not know the name never reads it */
	o.n_sections = 0;
	ix = open_ok(src, &o);
	ck_assert_int_ne(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);
	ck_assert(exists(ipath));
	ck_assert_int_eq(w.n, 0);

	/* one that does: the open does not read it, the first use does and
	 * finds the damage (the index is then removed) */
	o.n_sections = 1;
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	ck_assert_int_eq(idx_damaged(ix), 0);
	ck_assert_int_ne(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	ck_assert(!exists(ipath));
	ck_assert_int_eq(w.n, 0);
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	ck_assert_int_eq(idx_section(ix, "replay.ckpt", &d, &len), 0);
	ck_assert_uint_eq(((const uint64_t *)d)[2],
	    snap_ev_addr(&idx_snapshot(ix)->traces[0], 2) ^ 5);
	idx_close(ix);

	/* over its bound: not read, built again */
	sec.max_len = small_bound;
	n_ext_builds = 0;
	ix = open_ok(src, &o);
	ck_assert_int_eq(n_ext_builds, 1);
	idx_close(ix);
	free(src);
	free(ipath);
}
END_TEST

/* Sizes a hostile file gives (2^63 and more): totals beyond 2^62 set
 * the device's WRAP flag, and the index then reads its totals by the
 * same saturating rule as the timeline builder (idx_timeline.c): a sum
 * of changes saturated to int64_t, bases saturated, totals clamped to
 * [0, 2^64 - 1]; reserved bytes exact in 128 bits, clamped. */
static int wrap_case;

static int
wrap_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	const uint64_t A = 0x7f0000000000ull, H = 1ull << 63;
	struct snap_segment *sg;
	struct snap_block *b;
	uint64_t i;

	(void)path;
	(void)lo;
	(void)err;
	switch (wrap_case) {
	case 0: /* a request of 2^64 - 1 bytes after one of 100 */
		snap_trace_push(s, t, SNAP_ALLOC, A, 100, 0, 0);
		snap_trace_push(s, t, SNAP_ALLOC, A + 512, UINT64_MAX, 0, 0);
		break;
	case 1: /* three of 2^62 */
		for (i = 0; i < 3; i++)
			snap_trace_push(s, t, SNAP_ALLOC, A + i * 512,
			    1ull << 62, 0, 0);
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, A, 1ull << 62, 0,
		    0);
		break;
	case 2: /* a segment of 2^63 made and freed */
		snap_trace_push(s, t, SNAP_SEGMENT_ALLOC, A, H, 0, 0);
		snap_trace_push(s, t, SNAP_ALLOC, A, 512, 0, 0);
		snap_trace_push(s, t, SNAP_SEGMENT_FREE, A, H, 0, 0);
		break;
	case 3: /* a final segment of 2^64 - 1 bytes */
		sg = snap_push_segment(s);
		sg->addr = 0;
		sg->total_size = UINT64_MAX;
		sg->first_block = s->n_blocks;
		sg->n_blocks = 1;
		b = snap_push_block(s);
		b->addr = 0;
		b->size = UINT64_MAX;
		b->state = SNAP_BLOCK_INACTIVE;
		t = snap_trace_get(s, 0);
		snap_trace_push(s, t, SNAP_ALLOC, 4096, 100, 0, 0);
		break;
	case 4: /* (allocator) blocks of 2^63 + 5 freed before any alloc */
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, A, H + 5, 0, 0);
		snap_trace_push(s, t, SNAP_FREE_COMPLETED, A + 512, H + 5, 0,
		    0);
		snap_trace_push(s, t, SNAP_ALLOC, A, 10, 0, 0);
		break;
	default: /* across stripes: 2^63 allocated in one, freed (saying
		  * another size) in another */
		for (i = 0; i < 3 * SNAP_STRIPE_MAX; i++) {
			uint64_t a = A + 4096 + (i / 2 % 64) * 512;

			if (i == SNAP_STRIPE_MAX + 7)
				snap_trace_push(s, t, SNAP_ALLOC, A, H, 0, 0);
			else if (i == 2 * SNAP_STRIPE_MAX + 9)
				snap_trace_push(s, t, SNAP_FREE_COMPLETED, A,
				    7, 0, 0);
			else
				snap_trace_push(s, t, i % 2 ?
				    SNAP_FREE_COMPLETED : SNAP_ALLOC, a,
				    64 + i % 100, 0, 0);
		}
		break;
	}
	snap_finish(s);
	*out = s;
	return 0;
}

START_TEST(test_wrap_totals)
{
	char *src = tpath("w.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct snapshot *ref;
	struct sv_error err;
	int pass;

	write_file(src, "wrap", 4);
	wrap_case = _i;
	wrap_load(NULL, NULL, &ref, &err);
	for (pass = 0; pass < 2; pass++) {
		opts_init(&o, &w, 1);
		o.load = wrap_load;
		ix = open_ok(src, &o);
		assert_same_timelines(ix, ref);
		ck_assert_int_eq(idx_damaged(ix), 0);
		idx_close(ix);
	}
	snap_free(ref);
	free(src);
}
END_TEST

/* Only frees of blocks allocated before the trace: the highest total is
 * the state before the first event (issue 12), peak_ev -1. With
 * model_events 2, a free and an alloc of the same size: the total comes
 * back to where it started, and the state before the first event is
 * still the first to reach the peak (issue 30: not event #1). */
static int
pre_load(const char *path, const struct snap_load_opts *lo,
    struct snapshot **out, struct sv_error *err)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);

	(void)path;
	(void)lo;
	(void)err;
	snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x1000, 1000, 0, 0);
	if (model_events == 2) {
		snap_trace_push(s, t, SNAP_ALLOC, 0x4000, 1000, 0, 0);
		snap_finish(s);
		*out = s;
		return 0;
	}
	snap_trace_push(s, t, SNAP_FREE_REQUESTED, 0x2000, 500, 0, 0);
	snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x2000, 500, 0, 0);
	if (model_events > 3) {
		/* and later an alloc above the start */
		snap_trace_push(s, t, SNAP_ALLOC, 0x3000, 4000, 0, 0);
	}
	snap_finish(s);
	*out = s;
	return 0;
}

START_TEST(test_peak_before_first_event)
{
	char *src = tpath("p.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const struct idx_timeline *tl;
	struct idx_timeline ht;
	struct snapshot *ref;
	struct sv_error err;
	int pass;

	write_file(src, "peak", 4);
	for (pass = 0; pass < 3; pass++) {
		model_events = pass == 0 ? 3 : pass == 1 ? 4 : 2;
		opts_init(&o, &w, 1);
		o.load = pre_load;
		o.force_rebuild = 1;
		ix = open_ok(src, &o);
		tl = idx_timeline(ix, 0);
		ck_assert_ptr_nonnull(tl);
		if (pass == 2) {
			ck_assert_uint_eq(tl->base_total, 1000);
			ck_assert_uint_eq(idx_tl_total(tl, 0), 0);
			ck_assert_uint_eq(idx_tl_total(tl, 1), 1000);
			ck_assert_uint_eq(tl->peak, 1000);
			ck_assert_int_eq(tl->peak_ev, IDX_NO_EVENT);
		} else {
			ck_assert_uint_eq(tl->base_total, 1500);
			ck_assert_uint_eq(idx_tl_total(tl, 0), 500);
		}
		if (pass == 2) {
			/* checked above */
		} else if (pass == 0) {
			ck_assert_uint_eq(tl->peak, 1500);
			ck_assert_int_eq(tl->peak_ev, IDX_NO_EVENT);
		} else {
			ck_assert_uint_eq(tl->peak, 4000);
			ck_assert_int_eq(tl->peak_ev, 3);
		}
		/* the heap builder agrees */
		pre_load(NULL, NULL, &ref, &err);
		ck_assert_int_eq(idx_timeline_build(ref, 0, &ht, &err), 0);
		ck_assert_uint_eq(ht.peak, tl->peak);
		ck_assert_int_eq(ht.peak_ev, tl->peak_ev);
		idx_timeline_destroy(&ht);
		snap_free(ref);
		idx_close(ix);
	}
	model_events = 3000;
	free(src);
}
END_TEST

/* Readers on several threads at once: each has its own cache entries
 * (snapshot/snap_stripe.c), so they read the same values as one alone. */
struct walker {
	const struct sv_index *ix;
	uint64_t sum;
	pthread_t th;
};

static uint64_t
sum_all(const struct sv_index *ix)
{
	const struct snapshot *s = idx_snapshot(ix);
	uint32_t d, n = snap_device_count(s);
	uint64_t acc = 0, k;

	for (d = 0; d < n; d++) {
		const struct idx_timeline *tl = idx_timeline(ix, d);
		const struct snap_trace *t = snap_trace_of(s, d);

		for (k = 0; t != NULL && k < t->n; k++)
			acc = acc * 31 + snap_ev_addr(t, k) +
			    snap_ev_size(t, k) + (uint64_t)snap_ev_time(t, k) +
			    snap_ev_stack(t, k);
		for (k = 0; tl != NULL && k < tl->n_events; k++)
			acc = acc * 31 + idx_tl_total(tl, (int64_t)k) +
			    idx_tl_ev_elem(tl, k);
		/* and out of order, across stripes */
		for (k = 0; tl != NULL && k < tl->n_elems; k += 7)
			acc = acc * 31 + idx_tl_elem(tl, (k * 7919) %
			    tl->n_elems).addr;
	}
	return acc;
}

static void *
walker_run(void *arg)
{
	struct walker *w = arg;

	w->sum = sum_all(w->ix);
	return NULL;
}

START_TEST(test_threads_read)
{
	char *src = tpath("m.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct walker wk[4];
	uint64_t want;
	int i;

	model_events = 3 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	want = sum_all(ix);
	for (i = 0; i < 4; i++) {
		wk[i].ix = ix;
		ck_assert_int_eq(pthread_create(&wk[i].th, NULL, walker_run,
		    &wk[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(pthread_join(wk[i].th, NULL), 0);
		ck_assert_uint_eq(wk[i].sum, want);
	}
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);
	model_events = 3000;
	free(src);
}
END_TEST

/* The extension sections of a build read the stripes just written
 * through the file's mapping, whose pages are given back every
 * SNAP_STRIPE_DROP_EVERY bytes of chunks read (snapshot/snap_stripe.c): a
 * builder that reads every stripe again and again, well past that, on two
 * threads at once, reads what a reopened index reads, whether the index
 * is built into a file or into memory (where nothing may be given back). */
#define DROP_PASSES 40

static int
reread_build(const struct sv_index *ix, void *arg, uint8_t **data,
    size_t *len, struct sv_error *err)
{
	uint64_t *sum = xcalloc(1, sizeof *sum);
	int k;

	(void)arg;
	(void)err;
	for (k = 0; k < DROP_PASSES; k++) {
		snap_stripe_cache_clear();
		*sum = *sum * 31 + sum_all(ix);
	}
	*data = (uint8_t *)sum;
	*len = sizeof *sum;
	return 0;
}

static uint64_t
reread_want(const struct sv_index *ix)
{
	uint64_t want = 0;
	int k;

	for (k = 0; k < DROP_PASSES; k++)
		want = want * 31 + sum_all(ix);
	return want;
}

START_TEST(test_extension_reads_dropped_pages)
{
	char *src = tpath("m.pickle");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_section_builder secs[2] = {
	    {.name = "reread.a", .build_index = reread_build},
	    {.name = "reread.b", .build_index = reread_build}};
	const uint8_t *d;
	size_t len;
	uint64_t got;
	int mem;

	model_events = 3 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	for (mem = 0; mem < 2; mem++) {
		opts_init(&o, &w, 1);
		o.sections = secs;
		o.n_sections = 2;
		o.no_cache = mem;
		ix = open_ok(src, &o);
		ck_assert_int_eq(idx_section(ix, "reread.a", &d, &len), 0);
		ck_assert_uint_eq(len, sizeof got);
		memcpy(&got, d, sizeof got);
		ck_assert_uint_eq(got, reread_want(ix));
		ck_assert_int_eq(idx_section(ix, "reread.b", &d, &len), 0);
		memcpy(&got, d, sizeof got);
		ck_assert_uint_eq(got, reread_want(ix));
		ck_assert_int_eq(idx_damaged(ix), 0);
		idx_close(ix);
	}
	model_events = 3000;
	free(src);
}
END_TEST

/* A section over IDX_LZ4_PIECE is stored as LZ4 pieces, one piece's
 * buffer at a time: it reads back whole. */
static int
big_build(const struct snapshot *s, void *arg, uint8_t **data, size_t *len,
    struct sv_error *err)
{
	size_t n = (size_t)(uintptr_t)arg, i;
	uint8_t *d = xmalloc(n);

	(void)s;
	(void)err;
	for (i = 0; i < n; i++)
		d[i] = (uint8_t)(i * 2654435761u >> 13);
	*data = d;
	*len = n;
	return 0;
}

/* The same bytes appended to a tape in three writes: past 4 MB the
 * tape is a temporary file, which the writer reads a piece at a time. */
static int
big_tape(const struct snapshot *s, void *arg, void *early, struct tape *out,
    struct sv_error *err)
{
	uint8_t *d;
	size_t n;

	(void)early;

	big_build(s, arg, &d, &n, err);
	tape_write(out, d, 5);
	tape_write(out, d + 5, n / 2);
	tape_write(out, d + 5 + n / 2, n - 5 - n / 2);
	free(d);
	return 0;
}

/* The index of src with big_build()'s section "big" of n bytes, built
 * the k-th way: onto a tape, then as one buffer (from the file each
 * wrote: the second rebuilds nothing, the section is there), then in
 * memory; opened after the build was closed. o's sections stay set. */
static struct sv_index *
open_big(const char *src, struct idx_opts *o, int k, size_t n)
{
	static struct idx_section_builder sec, tsec;

	sec = (struct idx_section_builder){.name = "big",
	    .build = big_build, .arg = (void *)(uintptr_t)n};
	tsec = (struct idx_section_builder){.name = "big",
	    .build_tape = big_tape, .arg = (void *)(uintptr_t)n};
	o->sections = k == 1 ? &sec : &tsec;
	o->n_sections = 1;
	o->no_cache = k == 2;
	idx_close(open_ok(src, o));
	return open_ok(src, o);
}

START_TEST(test_extension_chunked)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	size_t n = 2 * IDX_LZ4_PIECE + 7, len, i;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const uint8_t *d;
	uint64_t off, slen;
	int k;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	/* the same bytes read back however they were built */
	for (k = 0; k < 3; k++) {
		ix = open_big(src, &o, k, n);
		ck_assert_int_eq(idx_section(ix, "big", &d, &len), 0);
		ck_assert_uint_eq(len, n);
		for (i = 0; i < n; i++)
			if (d[i] != (uint8_t)(i * 2654435761u >> 13))
				ck_abort_msg("byte %zu differs", i);
		idx_close(ix);
	}
	o.no_cache = 0;
	/* a changed byte in the last chunk is found when read */
	find_section(ipath, "x.big", &off, &slen);
	flip_bit(ipath, off + slen - 3, 2);
	ix = open_ok(src, &o);
	ck_assert_int_ne(idx_section(ix, "big", &d, &len), 0);
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	ck_assert_int_eq(w.n, 0);
	/* crafted chunk lengths with the hashes made right: refused, no
	 * read past the section nor the buffer */
	{
		static const uint32_t bad[][2] = {{0xffffffffu, 16},
		    {16, 0xffffffffu}, {16, 0}, {0, 16}};
		for (k = 0; k < 4; k++) {
			int fd;

			idx_close(open_ok(src, &o)); /* a good one again */
			find_section(ipath, "x.big", &off, &slen);
			fd = open(ipath, O_RDWR);
			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(pwrite(fd, bad[k], 8, (off_t)off), 8);
			close(fd);
			rehash_index(ipath);
			ix = open_ok(src, &o);
			ck_assert_int_ne(idx_section(ix, "big", &d, &len), 0);
			idx_close(ix);
		}
	}
	free(src);
	free(ipath);
}
END_TEST

/* Bytes [off, off + n) of big_build()'s section, as a reader gives
 * them back: the right ones, or NULL when outside. */
static void
reader_reads(struct idx_reader *rd, uint64_t off, uint64_t n, size_t len)
{
	const uint8_t *p = idx_reader_span(rd, off, n);
	uint64_t i;

	if (off > len || n > len - off) {
		ck_assert_ptr_null(p);
		return;
	}
	ck_assert_ptr_nonnull(p);
	for (i = 0; i < n; i++)
		if (p[i] != (uint8_t)((off + i) * 2654435761u >> 13))
			ck_abort_msg("byte %llu differs",
			    (unsigned long long)(off + i));
}

/* A reader of a section in pieces gives back any span, within a piece
 * or across them, the whole section included, however it was built
 * (onto a tape, as a buffer, in memory); not past its end, nor of a
 * section not there. A piece written after the reader checked the
 * section, or one that is not LZ4 under right hashes, is refused when it
 * is read, and the index is then damaged. */
START_TEST(test_extension_reader)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	size_t n = 3 * IDX_LZ4_PIECE + 7;
	const uint64_t P = IDX_LZ4_PIECE;
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_reader *rd;
	uint64_t off, slen, len;
	int k;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	for (k = 0; k < 3; k++) {
		ix = open_big(src, &o, k, n);
		ck_assert_ptr_null(idx_reader_open(ix, "other", &len));
		rd = idx_reader_open(ix, "big", &len);
		ck_assert_ptr_nonnull(rd);
		ck_assert_uint_eq(len, n);
		reader_reads(rd, 0, 10, n);
		reader_reads(rd, 2 * P - 3, 10, n);     /* across */
		reader_reads(rd, n - 7, 7, n);          /* the last piece */
		reader_reads(rd, 5, 0, n);
		reader_reads(rd, P + 1, 16, n);         /* the slots go */
		reader_reads(rd, 2 * P + 1, 16, n);     /* round */
		reader_reads(rd, 1, 16, n);
		reader_reads(rd, P - 1, 2 * P + 2, n);  /* many pieces */
		reader_reads(rd, 0, n, n);              /* more than kept */
		reader_reads(rd, n - 1, 2, n);          /* past the end */
		reader_reads(rd, n + 1, 0, n);
		idx_reader_free(rd);
		idx_close(ix);
	}
	o.no_cache = 0;
	/* the section checked, a piece then changed in the file */
	ix = open_ok(src, &o);
	rd = idx_reader_open(ix, "big", &len);
	ck_assert_ptr_nonnull(rd);
	reader_reads(rd, 0, 10, n);
	ck_assert_int_eq(idx_damaged(ix), 0);
	find_section(ipath, "x.big", &off, &slen);
	flip_bit(ipath, off + slen - 3, 2);
	reader_reads(rd, P + 5, 10, n);         /* pieces before: good */
	ck_assert_ptr_null(idx_reader_span(rd, n - 2, 1));
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_reader_free(rd);
	idx_close(ix);
	ck_assert(!exists(ipath)); /* removed, damaged */
	/* a reader on a changed file refuses the section */
	idx_close(open_ok(src, &o));
	flip_bit(ipath, off + slen / 2, 1);
	ix = open_ok(src, &o);
	ck_assert_ptr_null(idx_reader_open(ix, "big", &len));
	ck_assert_int_eq(idx_damaged(ix), 1);
	idx_close(ix);
	/* a piece that is not LZ4, the hashes made right: the section
	 * opens, the piece is refused when read, the index damaged */
	{
		static const uint8_t junk[16] = {0xff, 0xff, 0xff, 0xff,
		    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0xff, 0xff};
		int fd;

		idx_close(open_ok(src, &o));
		find_section(ipath, "x.big", &off, &slen);
		fd = open(ipath, O_RDWR);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pwrite(fd, junk, sizeof junk,
		    (off_t)(off + 8)), (ssize_t)sizeof junk);
		close(fd);
		rehash_index(ipath);
		ix = open_ok(src, &o);
		rd = idx_reader_open(ix, "big", &len);
		ck_assert_ptr_nonnull(rd);
		ck_assert_int_eq(idx_damaged(ix), 0);
		ck_assert_ptr_null(idx_reader_span(rd, 0, 1));
		ck_assert_int_eq(idx_damaged(ix), 1);
		idx_reader_free(rd);
		idx_close(ix);
	}
	ck_assert_int_eq(w.n, 0);
	free(src);
	free(ipath);
}
END_TEST

/* A section in pieces is the same bytes whether its pieces were
 * compressed on one thread or two (idx_write.c compresses every other
 * piece on a helper): built from a tape and from a buffer, an odd
 * number of pieces and a short last one (49 of 256 KiB). */
START_TEST(test_extension_pieces_threads)
{
	char *src = tpath("t.pickle"), *ipath = tpath("t.pickle.snapidx");
	size_t n = 3 * IDX_LZ4_PIECE + 7, na, nb;
	struct idx_opts o;
	struct warns w;
	uint8_t *a, *b;
	int k;

	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	for (k = 0; k < 2; k++) {
		unlink(ipath);
		idx_close(open_big(src, &o, k, n));
		a = read_file(ipath, &na);
		unlink(ipath);
		sv_thread_set_max(1);
		idx_close(open_big(src, &o, k, n));
		sv_thread_set_max(0);
		b = read_file(ipath, &nb);
		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_nonnull(b);
		ck_assert_uint_gt(na, 0);
		ck_assert_uint_eq(na, nb);
		ck_assert_int_eq(memcmp(a, b, na), 0);
		free(a);
		free(b);
	}
	ck_assert_int_eq(w.n, 0);
	free(src);
	free(ipath);
}
END_TEST

void
index_ext_tests(TCase *tc)
{
	tcase_add_test(tc, test_extension_pieces_threads);
	tcase_add_test(tc, test_extension_sections);
	tcase_add_test(tc, test_extension_killed);
	tcase_add_test(tc, test_extension_sections_lazy);
	tcase_add_test(tc, test_peek_section);
	tcase_add_test(tc, test_device_out_of_range);
	tcase_add_test(tc, test_int64_rule);
	tcase_add_test(tc, test_big_section_hashed);
	tcase_add_test(tc, test_peak_before_first_event);
	tcase_add_loop_test(tc, test_wrap_totals, 0, 6);
	tcase_add_test(tc, test_threads_read);
	tcase_add_test(tc, test_extension_chunked);
	tcase_add_test(tc, test_extension_reader);
	tcase_add_test(tc, test_extension_reads_dropped_pages);
}
