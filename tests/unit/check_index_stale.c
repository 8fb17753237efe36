/*
 * Index unit tests: invalidation (size, mtime, content, truncation, a
 * flipped bit in every section and byte in every stripe, another
 * version, another file's index), damaged indexes removed only when
 * they are ours, never replacing a foreign file; the LOD columns of the
 * stripes. Run by check_index.c.
 */
#include "config.h"

#include "index_fix.h"

/* ---- invalidation -------------------------------------------------------- */

/* A pid that no process has (a reaped child's). */
static pid_t
dead_pid(void)
{
	pid_t p = fork();

	ck_assert_int_ge(p, 0);
	if (p == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(p, NULL, 0), p);
	return p;
}

/* Writes TARGET.tmp.PID.SEQ.abc (a build's temp name); magic: it starts
 * with the index magic; old: its mtime is an hour back. */
static char *
fake_temp(const char *target, long pid, int seq, int magic, int old)
{
	char *p, body[64];
	struct timespec ts[2];

	xasprintf(&p, "%s%s%ld.%d.abc", target, IDX_TMP_INFIX, pid, seq);
	memset(body, 0, sizeof body);
	memcpy(body, magic ? IDX_MAGIC : "NOTOURS!", IDX_MAGIC_LEN);
	write_file(p, body, sizeof body);
	if (old) {
		ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &ts[0]), 0);
		ts[0].tv_sec -= 3600;
		ts[1] = ts[0];
		ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	}
	return p;
}

START_TEST(test_stale_temps_cleaned)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("st.pickle", &o, &w), *ipath;
	char *gone, *foreign, *fresh, *live;
	long dead = (long)dead_pid();

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	gone = fake_temp(ipath, dead, 0, 1, 1);    /* killed build: removed */
	foreign = fake_temp(ipath, dead, 1, 0, 1); /* not ours: kept */
	fresh = fake_temp(ipath, dead, 2, 1, 0);   /* too recent: kept */
	live = fake_temp(ipath, (long)getpid(), 3, 1, 1); /* builder alive */
	o.force_rebuild = 1;
	idx_close(open_ok(src, &o));
	ck_assert(!exists(gone));
	ck_assert(exists(foreign));
	ck_assert(exists(fresh));
	ck_assert(exists(live));
	unlink(foreign);
	unlink(fresh);
	unlink(live);
	free(gone);
	free(foreign);
	free(fresh);
	free(live);
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_stale_size)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w);
	FILE *f = fopen(src, "ab");

	fputc('.', f); /* a trailing byte: the pickle still loads (STOP) */
	fclose(f);
	expect_rebuild(src, &o, &w, "another file");
	free(src);
}
END_TEST

START_TEST(test_stale_mtime)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w);
	struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000, 0}};

	ck_assert_int_eq(utimensat(AT_FDCWD, src, ts, 0), 0);
	expect_rebuild(src, &o, &w, "modified");
	free(src);
}
END_TEST

START_TEST(test_stale_content)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w);
	struct stat st;
	struct timespec ts[2];
	size_t n;
	uint8_t *b;

	/* Same size and mtime, other bytes: only the content hash sees it.
	 * Swap two bytes of a string in the middle of the file. */
	ck_assert_int_eq(stat(src, &st), 0);
	b = read_file(src, &n);
	{
		uint8_t *p = memmem(b, n, "segment_map", 11);

		ck_assert_ptr_nonnull(p);
		p[8] = 'x'; /* "segment_xap": still loads, an unknown action */
	}
	write_file(src, b, n);
	free(b);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	ck_assert_int_eq(utimensat(AT_FDCWD, src, ts, 0), 0);
	expect_rebuild(src, &o, &w, "another file");
	free(src);
}
END_TEST

START_TEST(test_truncated)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	struct stat st;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	ck_assert_int_eq(stat(ipath, &st), 0);
	ck_assert_int_eq(truncate(ipath, st.st_size / 2), 0);
	expect_rebuild(src, &o, &w, "truncated");
	ck_assert_int_eq(truncate(ipath, 40), 0);
	expect_rebuild(src, &o, &w, "truncated");
	ck_assert_int_eq(truncate(ipath, 0), 0);
	/* an empty file has no magic: it is not ours, left alone */
	memset(&w, 0, sizeof w);
	{
		struct sv_index *ix = open_ok(src, &o);
		struct idx_info info;

		idx_get_info(ix, &info);
		ck_assert(strstr(info.path, "/cache/snapview/") != NULL);
		idx_close(ix);
	}
	ck_assert_int_eq(stat(ipath, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_flipped_bit_each_section)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	struct tsec sec[64];
	int n, i, tested = 0;
	uint64_t hoff = 0;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	n = read_toc(ipath, sec, 64);
	ck_assert_int_ge(n, 15);
	for (i = 0; i < n; i++) {
		char what[96];

		/* the column data is checked stripe by stripe when read (see
		 * test_flipped_byte_each_stripe) */
		if (sec[i].len == 0 ||
		    strcmp(sec[i].name, IDX_SEC_COLDATA) == 0)
			continue;
		flip_bit(ipath, sec[i].off + sec[i].len / 2, i % 8);
		snprintf(what, sizeof what, "section %.60s", sec[i].name);
		expect_rebuild(src, &o, &w, what);
		tested++;
		/* the rebuilt file has the same layout */
		ck_assert_int_eq(read_toc(ipath, sec, 64), n);
	}
	ck_assert_int_ge(tested, 10);
	/* the prelude, then the header */
	flip_bit(ipath, IDX_OFF_HEADER_LEN, 0);
	expect_rebuild(src, &o, &w, "damaged");
	{
		size_t len;
		uint8_t *b = read_file(ipath, &len);
		int k;

		for (k = 0; k < 8; k++)
			hoff |= (uint64_t)b[IDX_OFF_HEADER_OFF + k] << (8 * k);
		free(b);
		flip_bit(ipath, hoff + (len - hoff) / 2, 3);
	}
	expect_rebuild(src, &o, &w, "header");
	free(ipath);
	free(src);
}
END_TEST

/* Where each stored chunk of the index's stripes lies (file offsets),
 * from its directories. */
static int
chunk_offsets(const char *ipath, uint64_t *where, int max)
{
	static const char *const dirs[2] = {IDX_SEC_EVDIR, IDX_SEC_ELDIR};
	uint64_t cd_off, cd_len;
	size_t flen;
	uint8_t *f = read_file(ipath, &flen);
	int n = 0, k;

	find_section(ipath, IDX_SEC_COLDATA, &cd_off, &cd_len);
	for (k = 0; k < 2; k++) {
		uint64_t off, len, b;

		find_section(ipath, dirs[k], &off, &len);
		ck_assert_uint_eq(len % sizeof(struct snap_stripedir), 0);
		for (b = 0; b < len / sizeof(struct snap_stripedir); b++) {
			struct snap_stripedir d;
			uint64_t at;
			unsigned c;

			unsigned present = 0, pick;

			memcpy(&d, f + off + b * sizeof d, sizeof d);
			for (c = 0; c < SNAP_STRIPE_NCHUNK; c++)
				present += d.clen[c] > 0;
			/* every chunk of a device's first stripes, one chunk
			 * (a different kind each time) of the others */
			pick = (unsigned)(b % present);
			at = cd_off + d.off;
			for (c = 0; c < SNAP_STRIPE_NCHUNK; c++) {
				if (d.clen[c] > 0 && n < max &&
				    (b == 0 || pick == 0))
					where[n++] = at + d.clen[c] / 2;
				if (d.clen[c] > 0)
					pick--;
				at += d.clen[c];
			}
		}
	}
	free(f);
	return n;
}

START_TEST(test_flipped_byte_each_stripe)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct idx_info info;
	uint64_t where[512];
	int n, k, n_ev_stripes;

	/* several stripes of events and of elements */
	model_events = 7 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	idx_close(open_ok(src, &o));
	{
		uint64_t off, len;

		find_section(ipath, IDX_SEC_EVDIR, &off, &len);
		n_ev_stripes = (int)(len / sizeof(struct snap_stripedir));
		ck_assert_int_ge(n_ev_stripes, 6);
		find_section(ipath, IDX_SEC_ELDIR, &off, &len);
		ck_assert_uint_ge(len / sizeof(struct snap_stripedir), 3);
	}
	n = chunk_offsets(ipath, where, 512);
	ck_assert_int_gt(n, 20);
	for (k = 0; k < n; k++) {
		/* a quick open does not read the stripe; reading it finds
		 * the damage, and closing removes the file */
		flip_bit(ipath, where[k], k % 8);
		memset(&w, 0, sizeof w);
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, 0);
		ck_assert_int_eq(idx_damaged(ix), 0);
		walk_all(ix);
		ck_assert_msg(idx_damaged(ix), "chunk %d: damage not seen", k);
		idx_close(ix);
		ck_assert_msg(!exists(ipath), "damaged index kept");
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, 1);
		walk_all(ix);
		ck_assert_int_eq(idx_damaged(ix), 0);
		idx_close(ix);
		ck_assert_int_eq(w.n, 0);
		/* a full check (snapview index) finds it at open */
		flip_bit(ipath, where[k], (k + 3) % 8);
		o.verify = IDX_VERIFY_FULL;
		memset(&w, 0, sizeof w);
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.built, 1);
		ck_assert_msg(strstr(w.last, "coldata") != NULL, "warning: %s",
		    w.all);
		idx_close(ix);
		o.verify = IDX_VERIFY_QUICK;
	}
	model_events = 3000;
	free(src);
	free(ipath);
}
END_TEST

/* Opens src's index (at ipath, its first chunk damaged), reads it whole
 * so that the damage is seen, and hands it back open. */
static struct sv_index *
open_damaged(const char *src, const char *ipath, const struct idx_opts *o)
{
	struct sv_index *ix;
	struct idx_info info;
	uint64_t where[512];

	ck_assert_int_gt(chunk_offsets(ipath, where, 512), 0);
	flip_bit(ipath, where[0], 1);
	ix = open_ok(src, o);
	idx_get_info(ix, &info);
	ck_assert_str_eq(info.path, ipath);
	ck_assert_int_eq(info.built, 0);
	walk_all(ix);
	ck_assert_int_eq(idx_damaged(ix), 1);
	return ix;
}

/* A damaged index is removed on close only when the file at its path is
 * still the one it was mapped from, and the invoking user's (issue 34):
 * never a file put there meanwhile, nor another user's index (which the
 * trust rule uses when its owner owns the snapshot). */
START_TEST(test_damaged_removed_only_ours)
{
	char *src = tpath("m.pickle"), *ipath = tpath("m.pickle.snapidx");
	char *other = tpath("other.snapidx");
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct stat st;

	model_events = 2 * SNAP_STRIPE_MAX;
	write_file(src, "model", 5);
	opts_init(&o, &w, 1);
	idx_close(open_ok(src, &o));
	/* ours and the same file: removed */
	ix = open_damaged(src, ipath, &o);
	idx_close(ix);
	ck_assert_msg(!exists(ipath), "our damaged index kept");
	/* another file of ours at the path, with our magic: kept */
	idx_close(open_ok(src, &o));
	ix = open_damaged(src, ipath, &o);
	copy_file(ipath, other);
	ck_assert_int_eq(rename(other, ipath), 0);
	idx_close(ix);
	ck_assert_msg(exists(ipath), "a file that replaced the index removed");
	ck_assert_int_eq(unlink(ipath), 0);
	/* another user's index, trusted as the snapshot's owner's: kept
	 * (only root can give files away) */
	if (geteuid() == 0) {
		idx_close(open_ok(src, &o));
		ck_assert_int_eq(chown(ipath, 65534, 65534), 0);
		ck_assert_int_eq(chown(src, 65534, 65534), 0);
		ix = open_damaged(src, ipath, &o);
		idx_close(ix);
		ck_assert_msg(exists(ipath), "another user's index removed");
		ck_assert_int_eq(lstat(ipath, &st), 0);
		ck_assert_uint_eq(st.st_uid, 65534);
	}
	model_events = 3000;
	free(other);
	free(src);
	free(ipath);
}
END_TEST

/* idx_lod_columns() of [from, to) against the accessors, column by
 * column (columns as idx_lod_columns cuts them). */
static void
check_columns(const struct idx_lod *lod, const struct idx_timeline *tl,
    uint64_t from, uint64_t to, uint32_t ncols, int cold)
{
	struct idx_lod_bucket *cols = xcalloc(ncols, sizeof *cols), b;
	uint64_t span = to - from;
	uint32_t c;

	if (cold)
		snap_stripe_cache_clear();
	idx_lod_columns(lod, tl, from, to, ncols, cols);
	for (c = 0; c < ncols; c++) {
		uint64_t lo = from + span * c / ncols;
		uint64_t hi = from + span * (c + 1) / ncols;

		/* fewer events than columns: each shows one at least */
		if (hi <= lo)
			hi = lo + 1;
		brute(tl, lo, hi, &b);
		ck_assert_msg(memcmp(&cols[c], &b, sizeof b) == 0,
		    "[%llu, %llu) in %u columns, column %u [%llu, %llu)%s",
		    (unsigned long long)from, (unsigned long long)to, ncols,
		    c, (unsigned long long)lo, (unsigned long long)hi,
		    cold ? ", cold" : "");
	}
	free(cols);
}

/* The pyramid's ragged ends are read straight from the event stripes
 * (idx_tl_extremes), several per stripe pass: the same values as the
 * accessors, from a cold cache or a hot one, for columns of any width,
 * runs across stripe boundaries, and a damaged stripe (read as zeros and
 * marked, as through the accessors). */
START_TEST(test_lod_columns_stripes)
{
	char *src = tpath("c.pickle"), *ipath = tpath("c.pickle.snapidx");
	static const uint32_t widths[] = {1, 7, 80, 200, 997, 5000};
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	const struct idx_timeline *tl;
	const struct idx_lod *lod;
	struct idx_tl_run runs[6];
	struct idx_lod_bucket b;
	uint64_t n, rng = 7, off, len, cd_off, cd_len, k;
	struct snap_stripedir d;
	size_t flen;
	uint8_t *f;
	unsigned c, i;

	model_events = 8 * SNAP_STRIPE_MAX + 1234;
	write_file(src, "cols", 4);
	opts_init(&o, &w, 1);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	lod = idx_lod(ix, 0);
	n = tl->n_events;
	ck_assert_uint_ge(tl->ev_stripes->n_stripe, 6);
	for (i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		check_columns(lod, tl, 0, n, widths[i], 1);
		check_columns(lod, tl, 0, n, widths[i], 0);
		check_columns(lod, tl, 300, n - 77, widths[i], 1);
	}
	for (k = 0; k < 40; k++) {
		uint64_t lo, hi;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		lo = (rng >> 20) % n;
		hi = lo + 1 + (rng >> 44) % (n - lo);
		check_columns(lod, tl, lo, hi, 1 + (uint32_t)(rng % 300),
		    (int)(k % 2));
	}
	/* runs across stripe boundaries, next to each other, and empty */
	runs[0].from = 5;
	runs[0].to = SNAP_STRIPE_MAX + 9;
	runs[1].from = SNAP_STRIPE_MAX + 9;
	runs[1].to = SNAP_STRIPE_MAX + 10;
	runs[2].from = 2 * SNAP_STRIPE_MAX - 1;
	runs[2].to = 4 * SNAP_STRIPE_MAX + 1;
	runs[3].from = 4 * SNAP_STRIPE_MAX + 1;
	runs[3].to = 4 * SNAP_STRIPE_MAX + 1;
	runs[4].from = 5 * SNAP_STRIPE_MAX;
	runs[4].to = n;
	runs[5].from = n;
	runs[5].to = n + 10;
	snap_stripe_cache_clear();
	idx_tl_extremes(tl, runs, 6);
	for (i = 0; i < 6; i++) {
		if (runs[i].from >= runs[i].to) {
			ck_assert_uint_eq(runs[i].min_total, 0);
			ck_assert_uint_eq(runs[i].max_total, 0);
			ck_assert_uint_eq(runs[i].max_reserved, 0);
			continue;
		}
		brute(tl, runs[i].from, runs[i].to, &b);
		ck_assert_uint_eq(runs[i].min_total, b.min_total);
		ck_assert_uint_eq(runs[i].max_total, b.max_total);
		ck_assert_uint_eq(runs[i].max_reserved, b.max_reserved);
	}
	ck_assert_int_eq(idx_damaged(ix), 0);
	idx_close(ix);

	/* the size chunk of event stripe 2 damaged: its events read as
	 * zeros, through the columns as through the accessors */
	find_section(ipath, IDX_SEC_COLDATA, &cd_off, &cd_len);
	find_section(ipath, IDX_SEC_EVDIR, &off, &len);
	f = read_file(ipath, &flen);
	memcpy(&d, f + off + 2 * sizeof d, sizeof d);
	free(f);
	off = cd_off + d.off;
	for (c = 0; c < SNAP_EVC_SIZE; c++)
		off += d.clen[c];
	ck_assert_uint_gt(d.clen[SNAP_EVC_SIZE], 0);
	flip_bit(ipath, off + d.clen[SNAP_EVC_SIZE] / 2, 5);
	ix = open_ok(src, &o);
	tl = idx_timeline(ix, 0);
	lod = idx_lod(ix, 0);
	ck_assert_int_eq(idx_damaged(ix), 0);
	check_columns(lod, tl, 0, n, 997, 1);
	ck_assert_int_eq(idx_damaged(ix), 1);
	ck_assert_uint_eq(idx_tl_total(tl, (int64_t)d.first + 100), 0);
	idx_close(ix);
	model_events = 3000;
	free(src);
	free(ipath);
}
END_TEST

START_TEST(test_other_version)
{
	struct idx_opts o;
	struct warns w;
	char *src = built_fixture("a.pickle", &o, &w), *ipath;
	size_t n;
	uint8_t *b;
	uint64_t h;
	int i;

	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	b = read_file(ipath, &n);
	b[IDX_OFF_VERSION] = (uint8_t)(IDX_VERSION + 1);
	h = XXH3_64bits(b, IDX_OFF_PRELUDE_HASH);
	for (i = 0; i < 8; i++)
		b[IDX_OFF_PRELUDE_HASH + i] = (uint8_t)(h >> (8 * i));
	write_file(ipath, b, n);
	free(b);
	expect_rebuild(src, &o, &w, "version");
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_index_of_other_file)
{
	struct idx_opts o;
	struct warns w;
	char *a = built_fixture("a.pickle", &o, &w), *ia, *b, *ib, *from;

	b = tpath("b.pickle");
	xasprintf(&from, "%s/tests/data/real/npu_leak_empty_cache.pickle",
	    TOP_SRCDIR);
	copy_file(from, b);
	xasprintf(&ia, "%s%s", a, IDX_SUFFIX);
	xasprintf(&ib, "%s%s", b, IDX_SUFFIX);
	copy_file(ia, ib);
	expect_rebuild(b, &o, &w, "another file");
	free(from);
	free(a);
	free(b);
	free(ia);
	free(ib);
}
END_TEST

START_TEST(test_foreign_file_kept)
{
	struct idx_opts o;
	struct warns w;
	char *src = tpath("a.pickle"), *ipath, *from;
	static const char text[] = "my notes, not an index\n";
	struct sv_index *ix;
	struct idx_info info;
	size_t n;
	uint8_t *b;
	int pass;

	xasprintf(&from, "%s/tests/data/real/npu_leak_expandable.pickle",
	    TOP_SRCDIR);
	copy_file(from, src);
	xasprintf(&ipath, "%s%s", src, IDX_SUFFIX);
	write_file(ipath, text, sizeof text - 1);
	opts_init(&o, &w, 0);
	for (pass = 0; pass < 3; pass++) {
		o.force_rebuild = pass == 2;
		memset(&w, 0, sizeof w);
		ix = open_ok(src, &o);
		idx_get_info(ix, &info);
		ck_assert_int_eq(info.in_memory, 0);
		ck_assert(strstr(info.path, "/cache/snapview/") != NULL);
		ck_assert_int_eq(info.built, pass != 1);
		ck_assert_msg(strstr(w.all, "left alone") != NULL, "%s",
		    w.all);
		idx_close(ix);
		b = read_file(ipath, &n);
		ck_assert_uint_eq(n, sizeof text - 1);
		ck_assert_mem_eq(b, text, n);
		free(b);
	}
	/* a symlink at the index path is not ours either */
	unlink(ipath);
	ck_assert_int_eq(symlink("/etc/passwd", ipath), 0);
	o.force_rebuild = 1;
	ix = open_ok(src, &o);
	idx_close(ix);
	{
		char lnk[64];
		ssize_t l = readlink(ipath, lnk, sizeof lnk - 1);

		ck_assert_int_gt(l, 0);
		lnk[l] = '\0';
		ck_assert_str_eq(lnk, "/etc/passwd");
	}
	free(from);
	free(ipath);
	free(src);
}
END_TEST

void
index_stale_tests(TCase *tc)
{
	tcase_add_test(tc, test_lod_columns_stripes);
	tcase_add_test(tc, test_stale_size);
	tcase_add_test(tc, test_stale_mtime);
	tcase_add_test(tc, test_stale_content);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_flipped_bit_each_section);
	tcase_add_test(tc, test_flipped_byte_each_stripe);
	tcase_add_test(tc, test_damaged_removed_only_ours);
	tcase_add_test(tc, test_other_version);
	tcase_add_test(tc, test_index_of_other_file);
	tcase_add_test(tc, test_foreign_file_kept);
	tcase_add_test(tc, test_stale_temps_cleaned);
}
