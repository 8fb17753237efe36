/*
 * Unit tests of hostile indexes (doc/SECURITY.md, "While mapped" and the
 * index limits): an index its owner rewrites in place while it is open,
 * and forged indexes whose every checksum is right (tests/unit/idx_forge.c):
 * a raw length of 2^62, TOC entries aliasing one section or naming an
 * unknown one, a header past its bound, stripes sharing one payload, a
 * chunk claiming more raw bytes than its stored bytes can hold. Each is
 * opened through idx_open() as a command opens it: the rewrite must not
 * change what is read, and each forgery must be refused (and the index
 * rebuilt, with one warning), not trusted, aborted on or slow.
 */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fuzz/idx_walk.h"
#include "idx_forge.h"
#include "index/idx.h"
#include "index/idx_format.h"
#include "snapshot/snap_stripe.h"
#include "util/xalloc.h"

static char tmpdir[256];

static void
setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/sv-hostile.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

struct warns {
	int n;
	char all[4096];
};

static void
collect(void *ctx, const char *msg)
{
	struct warns *w = ctx;
	size_t l = strlen(w->all);

	w->n++;
	snprintf(w->all + l, sizeof w->all - l, "%s\n", msg);
}

static void
opts(struct idx_opts *o, struct warns *w)
{
	memset(o, 0, sizeof *o);
	memset(w, 0, sizeof *w);
	o->warn = collect;
	o->warn_ctx = w;
}

/* A copy of the real training snapshot (19,136 events: two event stripes
 * and two element stripes) in the test's directory, indexed beside it;
 * *ipath gets the index's path. */
static char *
indexed_copy(char **ipath)
{
	char *from, *src, cmd[1200];
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;

	xasprintf(&from, "%s/tests/data/real/cuda_train_one_step.pickle",
	    TOP_SRCDIR);
	xasprintf(&src, "%s/snap.pickle", tmpdir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, src);
	ck_assert_int_eq(system(cmd), 0);
	free(from);
	opts(&o, &w);
	ck_assert_int_eq(idx_open(src, &o, &ix, &err), 0);
	idx_close(ix);
	xasprintf(ipath, "%s%s", src, IDX_SUFFIX);
	return src;
}

/* Opens src (its index forged) and checks that the index was refused
 * with one warning naming what, and built again. */
static void
expect_refused(const char *src, const char *what)
{
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct idx_info info;

	opts(&o, &w);
	ck_assert_msg(idx_open(src, &o, &ix, &err) == 0, "open: %s", err.msg);
	idx_get_info(ix, &info);
	ck_assert_msg(info.built == 1, "forged index (%s) was used", what);
	ck_assert_msg(w.n == 1 && strstr(w.all, what) != NULL,
	    "warnings '%s' lack '%s'", w.all, what);
	idx_close(ix);
}

static void
overwrite(int fd, uint64_t off, uint64_t len, uint8_t c)
{
	uint8_t buf[4096];

	memset(buf, c, sizeof buf);
	while (len > 0) {
		size_t n = len < sizeof buf ? (size_t)len : sizeof buf;

		ck_assert_int_eq(pwrite(fd, buf, n, (off_t)off), (ssize_t)n);
		off += n;
		len -= n;
	}
}

/* ---- rewritten in place while open ----------------------------------- */

START_TEST(test_rewritten_while_mapped)
{
	char *ipath, *src = indexed_copy(&ipath);
	struct idx_opts o;
	struct warns w;
	struct sv_index *ix;
	struct sv_error err;
	struct forge fg;
	struct idx_info info;
	uint64_t before, after;
	size_t i;
	int fd;

	forge_load(&fg, ipath);
	opts(&o, &w);
	ck_assert_int_eq(idx_open(src, &o, &ix, &err), 0);
	idx_get_info(ix, &info);
	ck_assert_int_eq(info.built, 0);
	before = idx_walk(ix, 8, 1);
	/* the owner rewrites every byte of the file but the column data and
	 * the pyramid with the same number of others: the prelude, the
	 * header, every directory, record, offset and string; nothing of
	 * it may be read again (and the cache entries are dropped, so the
	 * walk decodes every stripe again through the directories) */
	fd = open(ipath, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	overwrite(fd, 0, IDX_PRELUDE_LEN, 0xa5);
	for (i = 0; i < fg.n_sec; i++)
		if (strcmp(fg.sec[i].name, IDX_SEC_COLDATA) != 0 &&
		    strcmp(fg.sec[i].name, IDX_SEC_LOD) != 0)
			overwrite(fd, fg.sec[i].off, fg.sec[i].len,
			    (uint8_t)(0x5a + i));
	snap_stripe_cache_clear();
	after = idx_walk(ix, 8, 1);
	ck_assert_msg(after == before, "what was read changed with the file");
	ck_assert_int_eq(idx_damaged(ix), 0);
	/* the column data rewritten: a stripe read from now on fails its
	 * check (the copy of its stored bytes is hashed) and reads as
	 * zeros; the pyramid rewritten: other figures, nothing else */
	{
		struct forge_sec *cd = forge_find(&fg, IDX_SEC_COLDATA);
		struct forge_sec *lod = forge_find(&fg, IDX_SEC_LOD);

		ck_assert_ptr_nonnull(cd);
		ck_assert_ptr_nonnull(lod);
		overwrite(fd, cd->off, cd->len, 0xff);
		overwrite(fd, lod->off, lod->len, 0x80);
	}
	snap_stripe_cache_clear();
	after = idx_walk(ix, 8, 1);
	ck_assert_uint_ne(after, before);
	ck_assert_int_eq(idx_damaged(ix), 1);
	/* an element's two events alone: the chunks fail their check too,
	 * and the element reads as the decoded stripe has it, zeros */
	{
		const struct idx_timeline *tl = idx_timeline(ix, 0);
		int64_t a, f;
		uint64_t k;

		ck_assert_ptr_nonnull(tl);
		ck_assert_uint_gt(tl->n_elems, 0);
		for (k = 0; k < tl->n_elems; k += 97) {
			struct idx_elem e = idx_tl_elem(tl, k);

			ck_assert_int_eq(idx_tl_elem_life_read(tl, k, &a, &f),
			    -1);
			snap_stripe_cache_clear();
			idx_tl_elem_life(tl, k, &a, &f);
			ck_assert_int_eq(a, e.alloc_ev);
			ck_assert_int_eq(f, e.free_ev);
		}
	}
	close(fd);
	idx_close(ix);
	forge_free(&fg);
	free(ipath);
	free(src);
}
END_TEST

/* ---- forged: every checksum right ------------------------------------- */

START_TEST(test_huge_raw_length)
{
	char *ipath, *src = indexed_copy(&ipath);
	struct forge fg;
	struct forge_sec *t;

	forge_load(&fg, ipath);
	t = forge_find(&fg, IDX_SEC_STACK_FRAMES);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_ne(t->comp, 0);
	t->raw = (uint64_t)1 << 62;
	forge_write(&fg, ipath);
	forge_free(&fg);
	/* allocated before the fix: every open aborted, out of memory */
	expect_refused(src, "stack.frames cannot be decoded");
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_toc_aliases)
{
	char *ipath, *src = indexed_copy(&ipath);
	struct forge fg;
	struct forge_sec *strs, *t;
	char name[32];
	int k;

	/* 1,000 extension entries all naming the string data: each was
	 * hashed at every open */
	forge_load(&fg, ipath);
	strs = forge_find(&fg, IDX_SEC_STRS_DATA);
	ck_assert_ptr_nonnull(strs);
	for (k = 0; k < 1000; k++) {
		struct forge_sec copy;

		strs = forge_find(&fg, IDX_SEC_STRS_DATA);
		copy = *strs;
		snprintf(name, sizeof name, "x.alias%d", k);
		t = forge_add(&fg, name);
		*t = copy;
		snprintf(t->name, sizeof t->name, "%s", name);
	}
	forge_write(&fg, ipath);
	forge_free(&fg);
	expect_refused(src, "sections overlap");

	/* a name this reader does not know, not an extension's */
	forge_load(&fg, ipath);
	t = forge_add(&fg, "zzz");
	t->off = (fg.n + IDX_ALIGN - 1) / IDX_ALIGN * IDX_ALIGN;
	forge_write(&fg, ipath);
	forge_free(&fg);
	expect_refused(src, "bad table of contents");
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_header_too_large)
{
	char *ipath, *src = indexed_copy(&ipath);
	struct forge fg;

	forge_load(&fg, ipath);
	fg.pad = (size_t)IDX_MAX_HEADER + 1;
	forge_write(&fg, ipath);
	forge_free(&fg);
	expect_refused(src, "header too large");
	free(ipath);
	free(src);
}
END_TEST

/* The directory entry b of the event stripes in fg's bytes. */
static struct snap_stripedir *
evdir_at(struct forge *fg, uint64_t b)
{
	struct forge_sec *t = forge_find(fg, IDX_SEC_EVDIR);

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->comp, 0);
	ck_assert_uint_ge(t->len, (b + 1) * sizeof(struct snap_stripedir));
	return (struct snap_stripedir *)(void *)(fg->f + t->off +
	    b * sizeof(struct snap_stripedir));
}

START_TEST(test_shared_payloads)
{
	char *ipath, *src = indexed_copy(&ipath);
	struct forge fg;
	struct snap_stripedir d0, d1;

	/* the second event stripe's payload is the first's: every stripe of
	 * a directory could name one payload, and a small index then
	 * decoded far more than it stored */
	forge_load(&fg, ipath);
	memcpy(&d0, evdir_at(&fg, 0), sizeof d0);
	memcpy(&d1, evdir_at(&fg, 1), sizeof d1);
	ck_assert_uint_gt(d1.off, d0.off);
	d1.off = d0.off;
	memcpy(evdir_at(&fg, 1), &d1, sizeof d1);
	forge_write(&fg, ipath);
	forge_free(&fg);
	expect_refused(src, "bad device records");
	free(ipath);
	free(src);
}
END_TEST

START_TEST(test_chunk_ratio)
{
	char *ipath, *src = indexed_copy(&ipath);
	struct forge fg;
	struct snap_stripedir d;
	unsigned c, pick = SNAP_STRIPE_NCHUNK;

	/* a chunk claiming more raw bytes than LZ4 can make of its stored
	 * bytes: the most compressible chunk of the first stripe */
	forge_load(&fg, ipath);
	memcpy(&d, evdir_at(&fg, 0), sizeof d);
	for (c = 0; c < SNAP_STRIPE_NCHUNK; c++)
		if (d.clen[c] > 0 && d.clen[c] < d.rlen[c] &&
		    (pick == SNAP_STRIPE_NCHUNK || d.clen[c] < d.clen[pick]))
			pick = c;
	ck_assert_uint_lt(pick, SNAP_STRIPE_NCHUNK);
	d.rlen[pick] = d.clen[pick] * 256u + 65u;
	ck_assert_uint_le(d.rlen[pick], SNAP_CHUNK_MAX(d.n));
	memcpy(evdir_at(&fg, 0), &d, sizeof d);
	forge_write(&fg, ipath);
	forge_free(&fg);
	expect_refused(src, "bad device records");
	free(ipath);
	free(src);
}
END_TEST

static Suite *
hostile_suite(void)
{
	Suite *s = suite_create("idx_hostile");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_rewritten_while_mapped);
	tcase_add_test(tc, test_huge_raw_length);
	tcase_add_test(tc, test_toc_aliases);
	tcase_add_test(tc, test_header_too_large);
	tcase_add_test(tc, test_shared_payloads);
	tcase_add_test(tc, test_chunk_ratio);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(hostile_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
