/*
 * The viewer's pure parts: event filters (render/evfilter.h), the call-
 * stack tree (render/stacktree.h) and the cut of long labels
 * (render/anlist.h), on snapshots built here with known stacks, so every
 * expected number is worked out by hand.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/site.h"
#include "render/anlist.h"
#include "render/evfilter.h"
#include "render/stacktree.h"
#include "tui/export.h"
#include "tui/pane.h"
#include "util/escape.h"

/* A frame "file.py:line name". */
static uint32_t
frame(struct snapshot *s, const char *file, uint64_t line, const char *name)
{
	return snap_intern_frame(s, snap_intern_str(s, name, strlen(name)),
	    snap_intern_str(s, file, strlen(file)), line);
}

/* ---- evfilter --------------------------------------------------------- */

START_TEST(test_viewer_parse_size)
{
	uint64_t v;

	ck_assert_int_eq(evfilter_parse_size("512", &v), 0);
	ck_assert_uint_eq(v, 512);
	ck_assert_int_eq(evfilter_parse_size("4K", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(evfilter_parse_size("1.5M", &v), 0);
	ck_assert_uint_eq(v, 3 << 19);
	ck_assert_int_eq(evfilter_parse_size("2GiB", &v), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(evfilter_parse_size("3mb", &v), 0);
	ck_assert_uint_eq(v, 3 << 20);
	ck_assert_int_eq(evfilter_parse_size("", &v), -1);
	ck_assert_int_eq(evfilter_parse_size("5X", &v), -1);
	ck_assert_int_eq(evfilter_parse_size("-1", &v), -1);
	ck_assert_int_eq(evfilter_parse_size("1M2", &v), -1);
	ck_assert_int_eq(evfilter_parse_size("99999999T", &v), -1);
}
END_TEST

/* Events: 0 alloc 4K at 0x1000 s0 (train.py:11), 1 alloc 2M at 0x10000 s7
 * (train.py:110), 2 free_requested 4K at 0x1000, 3 free_completed,
 * 4 segment_alloc 20M at 0x0, 5 oom 3G (addr = device free 0x1000). */
static struct snapshot *
events_snapshot(void)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, 0);
	uint32_t f11 = frame(s, "/home/a/Train.py", 11, "step"),
	    f110 = frame(s, "/home/a/train.py", 110, "loop");
	uint32_t s11 = snap_intern_stack(s, &f11, 1),
	    s110 = snap_intern_stack(s, &f110, 1);

	snap_trace_push(s, t, SNAP_ALLOC, 0x1000, 4096, 0, s11);
	snap_trace_push(s, t, SNAP_ALLOC, 0x10000, 2 << 20, 7, s110);
	snap_trace_push(s, t, SNAP_FREE_REQUESTED, 0x1000, 4096, 0, s11);
	snap_trace_push(s, t, SNAP_FREE_COMPLETED, 0x1000, 4096, 0, s11);
	snap_trace_push(s, t, SNAP_SEGMENT_ALLOC, 0x0, 20 << 20, 0, 0);
	snap_trace_push(s, t, SNAP_OOM, 0x1000, 3ull << 30, 0, s110);
	return s;
}

/* The events of the snapshot's trace that f lets through, as a bit set. */
static unsigned
passing(const struct snapshot *s, const char *q)
{
	const struct snap_trace *t = snap_trace_of(s, 0);
	struct evfilter f;
	char err[128];
	unsigned bits = 0;
	uint64_t i;

	memset(&f, 0, sizeof f);
	ck_assert_msg(evfilter_parse(&f, s, q, err, sizeof err) == 0,
	    "'%s': %s", q, err);
	for (i = 0; i < t->n; i++)
		if (evfilter_match(&f, t, i))
			bits |= 1u << i;
	evfilter_destroy(&f);
	return bits;
}

START_TEST(test_viewer_filter)
{
	struct snapshot *s = events_snapshot();
	struct evfilter f;
	char err[128];

	ck_assert_uint_eq(passing(s, ""), 0x3f);
	ck_assert_uint_eq(passing(s, "alloc"), 0x03);
	ck_assert_uint_eq(passing(s, "free"), 0x0c);
	ck_assert_uint_eq(passing(s, "segment oom"), 0x30);
	ck_assert_uint_eq(passing(s, ">1M"), 0x32);
	ck_assert_uint_eq(passing(s, "<=4K"), 0x0d);
	ck_assert_uint_eq(passing(s, "4K..2M"), 0x0f);
	ck_assert_uint_eq(passing(s, "=4096 alloc"), 0x01);
	ck_assert_uint_eq(passing(s, "stream=7"), 0x02);
	ck_assert_uint_eq(passing(s, "stream=0x7"), 0x02);
	/* an address inside a range; an oom's address is no address */
	ck_assert_uint_eq(passing(s, "0x1fff"), 0x1d);
	ck_assert_uint_eq(passing(s, "0x10000 alloc"), 0x02);
	/* frame text in any case; ":11" is not ":110" */
	ck_assert_uint_eq(passing(s, "train.py:11"), 0x0d);
	ck_assert_uint_eq(passing(s, "TRAIN.PY:110"), 0x22);
	ck_assert_uint_eq(passing(s, "train.py:1"), 0x00);
	ck_assert_uint_eq(passing(s, "loop alloc"), 0x02);
	/* the frames that match, for the detail pane after a search: the
	 * frames of the stacks that match, and only they */
	{
		uint8_t *fm = evfilter_frames(s, "train.py:11"),
		    *sm = evfilter_stacks(s, "train.py:11");
		const uint32_t *fs;
		uint32_t st, n, i, hits;

		for (st = 1; st < s->n_stacks; st++) {
			fs = snap_stack(s, st, &n);
			for (i = hits = 0; i < n; i++)
				hits += fm[fs[i]];
			ck_assert_int_eq(hits > 0, sm[st]);
		}
		free(fm);
		free(sm);
	}
	/* words that are no condition are refused, and f stays as it was */
	memset(&f, 0, sizeof f);
	ck_assert_int_eq(evfilter_parse(&f, s, "alloc", err, sizeof err), 0);
	ck_assert_int_eq(evfilter_parse(&f, s, ">5X", err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, ">5X"));
	ck_assert_int_eq(evfilter_parse(&f, s, "2M..1M", err, sizeof err), -1);
	ck_assert_int_eq(evfilter_parse(&f, s, "<0", err, sizeof err), -1);
	ck_assert_int_eq(evfilter_parse(&f, s, "stream=x", err, sizeof err),
	    -1);
	ck_assert_str_eq(f.desc, "alloc");
	evfilter_destroy(&f);
	ck_assert(evfilter_empty(&f));
	snap_free(s);
}
END_TEST

/* ---- stacktree --------------------------------------------------------- */

/* Stacks, innermost first (user frames u*, framework f*):
 *   A = site a <- caller main            100 B, 1 block
 *   B = site a <- caller other           300 B, 3 blocks
 *   C = site b <- caller main             50 B, 1 block
 *   D = torch frame, then site a <- main  20 B, 2 blocks (same path as A)
 */
struct tree_fixture {
	struct snapshot *s;
	struct an_sites sites;
	struct stree t;
	uint32_t fa, fb, fmain, fother, ftorch;
};

static void
tree_setup(struct tree_fixture *x)
{
	struct stree_entry e[4];
	uint32_t st[4][3];
	struct sv_error err;
	int i;

	x->s = snap_new();
	x->fa = frame(x->s, "/u/a.py", 1, "a");
	x->fb = frame(x->s, "/u/b.py", 2, "b");
	x->fmain = frame(x->s, "/u/main.py", 3, "main");
	x->fother = frame(x->s, "/u/main.py", 4, "other");
	x->ftorch = frame(x->s, "/x/site-packages/torch/nn.py", 5, "fwd");
	st[0][0] = x->fa; st[0][1] = x->fmain;
	st[1][0] = x->fa; st[1][1] = x->fother;
	st[2][0] = x->fb; st[2][1] = x->fmain;
	st[3][0] = x->ftorch; st[3][1] = x->fa; st[3][2] = x->fmain;
	memset(e, 0, sizeof e);
	e[0].stack = snap_intern_stack(x->s, st[0], 2);
	e[0].bytes = 100; e[0].count = 1;
	e[1].stack = snap_intern_stack(x->s, st[1], 2);
	e[1].bytes = 300; e[1].count = 3;
	e[2].stack = snap_intern_stack(x->s, st[2], 2);
	e[2].bytes = 50; e[2].count = 1;
	e[3].stack = snap_intern_stack(x->s, st[3], 3);
	e[3].bytes = 20; e[3].count = 2;
	sv_error_clear(&err);
	ck_assert_int_eq(an_sites_init(&x->sites, x->s, 1, NULL, &err), 0);
	stree_init(&x->t, x->s, &x->sites);
	stree_set(&x->t, e, 4);
	for (i = 0; i < 4; i++)
		ck_assert_uint_ne(e[i].stack, 0);
}

static void
tree_teardown(struct tree_fixture *x)
{
	stree_destroy(&x->t);
	an_sites_destroy(&x->sites);
	snap_free(x->s);
}

/* Label of row i. */
static const char *
row_label(struct tree_fixture *x, uint64_t i)
{
	static char buf[256];

	return stree_label(&x->t, x->t.rows[i].frame, buf, sizeof buf);
}

START_TEST(test_viewer_tree_levels)
{
	struct tree_fixture x;

	tree_setup(&x);
	ck_assert_uint_eq(x.t.bytes, 470);
	ck_assert_uint_eq(x.t.count, 7);
	/* roots: site a (100 + 300 + 20), then site b (50) */
	ck_assert_uint_eq(x.t.n_rows, 2);
	ck_assert_str_eq(row_label(&x, 0), "/u/a.py:1 a");
	ck_assert_uint_eq(x.t.rows[0].bytes, 420);
	ck_assert_uint_eq(x.t.rows[0].count, 6);
	ck_assert(x.t.rows[0].kids && !x.t.rows[0].open);
	ck_assert_uint_eq(x.t.rows[1].bytes, 50);
	/* open a: its callers, largest first: other (300), main (120) */
	x.t.sel = 0;
	ck_assert_int_eq(stree_open(&x.t, 1), 1);
	ck_assert_uint_eq(x.t.n_rows, 4);
	ck_assert_str_eq(row_label(&x, 1), "/u/main.py:4 other");
	ck_assert_uint_eq(x.t.rows[1].bytes, 300);
	ck_assert_str_eq(row_label(&x, 2), "/u/main.py:3 main");
	ck_assert_uint_eq(x.t.rows[2].bytes, 120);
	ck_assert_uint_eq(x.t.rows[2].count, 3);
	ck_assert_uint_eq(x.t.rows[2].depth, 1);
	/* the stack of the largest entry under a node */
	ck_assert_uint_eq(stree_row_stack(&x.t, &x.t.rows[0]),
	    x.t.ents[x.t.rows[1].lo].stack);
	/* Right on an open node: its first child; Left: back to a; Left on
	 * the open a closes it */
	ck_assert_int_eq(stree_open(&x.t, 1), 1);
	ck_assert_uint_eq(x.t.sel, 1);
	ck_assert_int_eq(stree_open(&x.t, 0), 1);
	ck_assert_uint_eq(x.t.sel, 0);
	ck_assert_int_eq(stree_open(&x.t, 0), 1);
	ck_assert_uint_eq(x.t.n_rows, 2);
	tree_teardown(&x);
}
END_TEST

START_TEST(test_viewer_tree_expand_focus)
{
	struct tree_fixture x;
	struct stree_entry e = {.stack = 0};

	tree_setup(&x);
	/* every node open, then all closed again */
	stree_expand_all(&x.t);
	ck_assert_uint_eq(x.t.n_rows, 5);
	stree_expand_all(&x.t);
	ck_assert_uint_eq(x.t.n_rows, 2);
	/* the subtree of b: b and its caller main; again: back up */
	x.t.sel = 1;
	stree_focus(&x.t);
	ck_assert_uint_eq(x.t.root_len, 1);
	ck_assert_uint_eq(x.t.n_rows, 2);
	ck_assert_uint_eq(x.t.rows[0].bytes, 50);
	ck_assert_str_eq(row_label(&x, 1), "/u/main.py:3 main");
	x.t.sel = 0;
	stree_focus(&x.t);
	ck_assert_uint_eq(x.t.root_len, 0);
	ck_assert_uint_eq(x.t.n_rows, 2);
	ck_assert_str_eq(row_label(&x, x.t.sel), "/u/b.py:2 b");
	/* new entries (the cursor moved): what was open stays open, the
	 * selection stays on its path */
	x.t.sel = 0;
	stree_open(&x.t, 1);
	x.t.sel = 2;    /* a <- main */
	e = x.t.ents[x.t.rows[2].lo];
	e.bytes = 5;
	e.count = 1;
	stree_set(&x.t, &e, 1);
	ck_assert_uint_eq(x.t.n_rows, 2);
	ck_assert(x.t.rows[0].open);
	ck_assert_uint_eq(x.t.sel, 1);
	ck_assert_str_eq(row_label(&x, 1), "/u/main.py:3 main");
	tree_teardown(&x);
}
END_TEST

START_TEST(test_viewer_tree_framework)
{
	struct tree_fixture x;

	tree_setup(&x);
	/* every frame: the torch frame of D is a root of its own */
	x.t.framework = 1;
	stree_refresh(&x.t);
	ck_assert_uint_eq(x.t.n_rows, 3);
	ck_assert_str_eq(row_label(&x, 0), "/u/a.py:1 a");
	ck_assert_uint_eq(x.t.rows[0].bytes, 400);
	ck_assert_str_eq(row_label(&x, 2),
	    "/x/site-packages/torch/nn.py:5 fwd");
	ck_assert_uint_eq(x.t.rows[2].bytes, 20);
	/* grouped: the groups first */
	x.t.framework = 0;
	x.t.grouped = 1;
	x.t.ents[0].group = 1;
	stree_refresh(&x.t);
	ck_assert_uint_eq(x.t.n_rows, 2);
	ck_assert_uint_eq(x.t.rows[0].frame, STREE_GROUP + 0);
	ck_assert_uint_eq(x.t.rows[1].frame, STREE_GROUP + 1);
	ck_assert_uint_eq(x.t.rows[0].bytes + x.t.rows[1].bytes, 470);
	tree_teardown(&x);
}
END_TEST

/* ---- export ------------------------------------------------------------- */

/* Every byte of text[0..len) is in a valid UTF-8 sequence: no character
 * was cut (what the writers write is escaped, so nothing else is
 * there). */
static void
assert_utf8(const char *text, size_t len)
{
	size_t i = 0, k;
	uint32_t cp;

	while (i < len) {
		k = sv_utf8_decode((const unsigned char *)text + i, len - i,
		    &cp);
		ck_assert_msg(k > 0, "invalid UTF-8 at byte %zu: %.40s", i,
		    text + (i > 20 ? i - 20 : 0));
		i += k;
	}
}

/* A string of n copies of U+00E9 after prefix (heap). */
static char *
long_name(const char *prefix, size_t n)
{
	size_t p = strlen(prefix), i;
	char *s = malloc(p + 2 * n + 1);

	ck_assert_ptr_nonnull(s);
	memcpy(s, prefix, p);
	for (i = 0; i < n; i++)
		memcpy(s + p + 2 * i, "\xc3\xa9", 2);
	s[p + 2 * n] = '\0';
	return s;
}

/* The tree written whole (w in the top view): a 200-frame stack, every
 * frame shown and every node open, so rows are indented up to 398
 * cells; a frame name of 1,500 U+00E9. No line ends inside a character
 * or an escape, and each row keeps its indent, mark and label
 * (issue 34: rows were cut at 256 bytes, inside the mark). */
START_TEST(test_viewer_tree_write_deep)
{
	struct snapshot *s = snap_new();
	struct an_sites sites;
	struct stree t;
	struct stree_entry e;
	struct sv_error err;
	uint32_t fr[200], i;
	char *big = long_name("fx", 1500), *out = NULL, *line, *nl;
	size_t len = 0;
	uint64_t row = 0;
	FILE *f;

	for (i = 0; i < 200; i++) {
		char name[32];

		snprintf(name, sizeof name, "g\xc3\xa9%u", i);
		fr[i] = frame(s, "/u/a.py", i + 1, i == 7 ? big : name);
	}
	memset(&e, 0, sizeof e);
	e.stack = snap_intern_stack(s, fr, 200);
	e.bytes = 4096;
	e.count = 1;
	sv_error_clear(&err);
	ck_assert_int_eq(an_sites_init(&sites, s, 1, NULL, &err), 0);
	stree_init(&t, s, &sites);
	t.utf8 = 1;
	t.framework = 1;
	stree_set(&t, &e, 1);
	stree_expand_all(&t);
	ck_assert_uint_eq(t.n_rows, 200);
	f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(stree_write(&t, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	assert_utf8(out, len);
	/* past the header, one line per row: 2 x depth spaces after the
	 * numbers, the mark, a space, the label */
	line = strchr(out, '\n') + 1;
	for (row = 0; row < t.n_rows; row++, line = nl + 1) {
		char want[64], *mark;
		const char *m = row + 1 < t.n_rows ? "\xe2\x96\xbe" : " ";
		size_t k, indent = 2 * t.rows[row].depth;

		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = '\0';
		ck_assert_uint_ge(strlen(line), 24 + indent);
		for (k = 0; k < indent; k++)
			ck_assert_int_eq(line[24 + k], ' ');
		mark = line + 24 + indent;
		ck_assert_msg(strncmp(mark, m, strlen(m)) == 0 &&
		    mark[strlen(m)] == ' ', "row %llu: no mark: %.60s",
		    (unsigned long long)row, mark);
		if (row == 7)
			snprintf(want, sizeof want, "a.py:8 fx\xc3\xa9");
		else
			snprintf(want, sizeof want, "a.py:%u g\xc3\xa9%u",
			    (unsigned)row + 1, (unsigned)row);
		ck_assert_msg(strstr(mark, want) != NULL, "row %llu: %.60s",
		    (unsigned long long)row, mark);
		/* a long label cut at a character: it ends with one whole */
		if (row == 7)
			ck_assert_str_eq(nl - 2, "\xc3\xa9");
	}
	free(out);
	stree_destroy(&t);
	an_sites_destroy(&sites);
	snap_free(s);
	free(big);
}
END_TEST

/* A list written whole (w in a list view) with a call site of 1,500
 * U+00E9, more than a label holds: cut after a whole character. */
START_TEST(test_viewer_list_write_long)
{
	struct snapshot *s = snap_new();
	struct an_sites sites;
	struct an_top top;
	struct an_top_node node;
	struct anlist l;
	struct sv_error err;
	uint32_t fr, root = 0, stack;
	char *big = long_name("fx", 1500), *out = NULL;
	size_t len = 0;
	FILE *f;

	fr = frame(s, "/u/a.py", 1, big);
	stack = snap_intern_stack(s, &fr, 1);
	sv_error_clear(&err);
	ck_assert_int_eq(an_sites_init(&sites, s, 1, NULL, &err), 0);
	memset(&node, 0, sizeof node);
	node.site = an_site_of(&sites, stack);
	node.stack = stack;
	node.bytes = 512;
	node.count = 1;
	memset(&top, 0, sizeof top);
	top.bytes = 512;
	top.count = 1;
	top.nodes = &node;
	top.n_nodes = 1;
	top.roots = &root;
	top.n_roots = 1;
	memset(&l, 0, sizeof l);
	l.kind = ANLIST_TOP;
	l.top = &top;
	l.sites = &sites;
	f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(anlist_write(&l, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	assert_utf8(out, len);
	ck_assert_ptr_nonnull(strstr(out, "a.py:1 fx\xc3\xa9\xc3\xa9"));
	ck_assert_uint_gt(len, 1000);
	ck_assert_str_eq(out + len - 3, "\xc3\xa9\n");
	free(out);
	an_sites_destroy(&sites);
	snap_free(s);
	free(big);
}
END_TEST

/* What C copies when the stack is longer than it takes: whole lines,
 * so no character and no escape is cut. */
START_TEST(test_viewer_copy_len)
{
	/* lines of 3, 14 and 3 bytes */
	const char *t = "ab\nc\xc3\xa9" "d\\u{200b}e\nfg\n";
	size_t n = strlen(t), max;

	ck_assert_uint_eq(n, 20);
	ck_assert_uint_eq(export_copy_len(t, n, 1000), n);
	ck_assert_uint_eq(export_copy_len(t, n, n), n);
	/* inside the second line: the first only */
	for (max = 3; max < 17; max++)
		ck_assert_uint_eq(export_copy_len(t, n, max), 3);
	for (max = 17; max < 20; max++)
		ck_assert_uint_eq(export_copy_len(t, n, max), 17);
	/* no line end within max: a whole character at least */
	ck_assert_uint_eq(export_copy_len("a\xc3\xa9", 3, 2), 1);
	ck_assert_uint_eq(export_copy_len("ab", 2, 0), 0);
}
END_TEST

/* ---- labels ------------------------------------------------------------- */

START_TEST(test_viewer_cut_label)
{
	char buf[256];

	/* fits: as it is */
	ck_assert_str_eq(anlist_cut_label("a.py:1 f", 20, 0, buf, sizeof buf),
	    "a.py:1 f");
	/* too long: cut at the left, at a path component */
	ck_assert_str_eq(anlist_cut_label("/home/alice/proj/model.py:40 "
	    "forward", 24, 0, buf, sizeof buf), ".../model.py:40 forward");
	/* a C++ name keeps its name, not its parameters */
	ck_assert_str_eq(anlist_cut_label("x.cpp:0 ns::Alloc::malloc(unsigned "
	    "long, CUstream_st*) [clone .lto]", 40, 0, buf, sizeof buf),
	    "x.cpp:0 ns::Alloc::malloc(...)");
	/* control characters from the file are escaped */
	ck_assert_str_eq(anlist_cut_label("a\x1b[31m.py", 40, 0, buf,
	    sizeof buf), "a\\x1b[31m.py");
}
END_TEST

/* A title too long for its pane: a path in it loses its directories,
 * then whole " - " fields go from the right; a number is never cut. */
START_TEST(test_viewer_title_fit)
{
	const char *t = "Timeline - dev 0 - #22,345 6.5 GiB - peak 6.5 GiB @ "
	    "#22,345 - by site - 19,136 events";
	char buf[256];

	pane_title_fit(t, 200, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, t);
	pane_title_fit(t, 76, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "Timeline - dev 0 - #22,345 6.5 GiB - peak 6.5 "
	    "GiB @ #22,345 - by site");
	pane_title_fit(t, 28, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "Timeline - dev 0");
	/* one field too long: cut at a space, never inside "#22,345" */
	pane_title_fit("Event #22,345 alloc 0x7f00 39.1 MiB", 16, 0, buf,
	    sizeof buf);
	ck_assert_str_eq(buf, "Event #22,345");
	/* the path first: its directories, then the "...", one at a time */
	pane_title_fit("/home/alice/proj/model.py:40 forward @ #2,141 - "
	    "320.6 MiB (37.6%) in 4 blocks", 70, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, ".../proj/model.py:40 forward @ #2,141 - "
	    "320.6 MiB (37.6%) in 4 blocks");
	pane_title_fit("/home/alice/proj/model.py:40 forward @ #2,141 - "
	    "320.6 MiB (37.6%) in 4 blocks", 60, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "model.py:40 forward @ #2,141 - 320.6 MiB "
	    "(37.6%) in 4 blocks");
	/* "1/8" is no path */
	pane_title_fit("Leak site 1/8 - 1.6 GiB in 226 blocks never freed", 30,
	    1, buf, sizeof buf);
	ck_assert_str_eq(buf, "Leak site 1/8");
}
END_TEST

static Suite *
viewer_suite(void)
{
	Suite *s = suite_create("viewer");
	TCase *tc;

	/* no wall-clock limit (Check's default is 4 s): machines are shared */
	tc = tcase_create("filter");
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_viewer_parse_size);
	tcase_add_test(tc, test_viewer_filter);
	suite_add_tcase(s, tc);
	tc = tcase_create("tree");
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_viewer_tree_levels);
	tcase_add_test(tc, test_viewer_tree_expand_focus);
	tcase_add_test(tc, test_viewer_tree_framework);
	suite_add_tcase(s, tc);
	tc = tcase_create("labels");
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_viewer_cut_label);
	tcase_add_test(tc, test_viewer_title_fit);
	suite_add_tcase(s, tc);
	tc = tcase_create("export");
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_viewer_tree_write_deep);
	tcase_add_test(tc, test_viewer_list_write_long);
	tcase_add_test(tc, test_viewer_copy_len);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(viewer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
