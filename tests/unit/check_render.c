/*
 * Render layer tests: cell buffer, number formats, frame folding, and the
 * timeline and segment map drawn into cell buffers, compared with golden
 * text under tests/unit/golden/ (tests/lib/golden.sh) and with cells
 * checked against values worked out from the spec by hand; the suite,
 * with the tests of check_render_modes.c. Fixtures: render_fix.h.
 */
#include "config.h"

#include "render_fix.h"

/* Compares the buffer's text with the golden tests/unit/golden/NAME
 * through tests/lib/golden.sh, the shell tests' comparison: its diff on
 * a difference, SV_UPDATE_GOLDEN=1 rewriting the golden. */
static void
golden_check(const struct cellbuf *cb, const char *name)
{
	char path[1024], tmp[] = "/tmp/snapview-golden.XXXXXX", cmd[3200];
	char *got = cellbuf_to_text(cb);
	FILE *f;
	int fd, rc;

	snprintf(path, sizeof path, "%s/tests/unit/golden/%s", TOP_SRCDIR,
	    name);
	fd = mkstemp(tmp);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(got, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(cmd, sizeof cmd, "sh '%s/tests/lib/golden.sh' '%s' '%s' >&2",
	    TOP_SRCDIR, path, tmp);
	rc = system(cmd);
	unlink(tmp);
	ck_assert_msg(rc == 0, "%s differs from its golden (the diff is "
	    "above)", name);
	free(got);
}

/* ---- cellbuf / fmt ----------------------------------------------------- */

START_TEST(test_render_cellbuf_text)
{
	struct cellbuf cb;
	char *s;

	cellbuf_init(&cb, 6, 2);
	ck_assert_int_eq(cellbuf_puts(&cb, 1, 0, "abcdefgh", 99, 0, 0), 5);
	cellbuf_puts(&cb, 0, 1, "\xe2\x96\x88x\x1b", 3, 0, 0);
	cellbuf_put(&cb, 99, 99, 'z', 0, 0); /* ignored */
	s = cellbuf_to_text(&cb);
	ck_assert_str_eq(s, " abcde\n\xe2\x96\x88x?\n");
	free(s);
	cellbuf_destroy(&cb);
}
END_TEST

/* The screen decodes UTF-8 as strictly as the escaping does: an overlong
 * '/', a surrogate and an invisible RLO each show as '?' per byte or
 * code point, never as what they would pass for. */
/* Labels are measured in cells before they are cut: one cell a code
 * point, whatever its length in bytes. */
START_TEST(test_render_utf8_cells)
{
	ck_assert_int_eq(sv_utf8_cells(""), 0);
	ck_assert_int_eq(sv_utf8_cells("abc"), 3);
	/* "a…b": the ellipsis is 3 bytes, 1 cell */
	ck_assert_int_eq(sv_utf8_cells("a\xe2\x80\xa6" "b"), 3);
	/* U+1F600, 4 bytes */
	ck_assert_int_eq(sv_utf8_cells("\xf0\x9f\x98\x80"), 1);
}
END_TEST

/* What the screen's text dump encodes, the one decoder reads back. */
START_TEST(test_render_utf8_encode)
{
	static const uint32_t cps[] = {0, 0x7f, 0x80, 0x7ff, 0x800, 0x2588,
	    0xffff, 0x10000, 0x1f600, 0x10ffff};
	unsigned i;

	for (i = 0; i < sizeof cps / sizeof cps[0]; i++) {
		char buf[4];
		uint32_t cp = UINT32_MAX;
		int n = sv_utf8_encode(cps[i], buf);

		ck_assert_int_eq(n, cps[i] < 0x80 ? 1 : cps[i] < 0x800 ? 2 :
		    cps[i] < 0x10000 ? 3 : 4);
		ck_assert_uint_eq(sv_utf8_decode((const unsigned char *)buf,
		    (size_t)n, &cp), (size_t)n);
		ck_assert_uint_eq(cp, cps[i]);
	}
}
END_TEST

START_TEST(test_render_cellbuf_strict)
{
	struct cellbuf cb;
	char *s;

	cellbuf_init(&cb, 12, 1);
	ck_assert_int_eq(cellbuf_puts(&cb, 0, 0,
	    "a\xe0\x80\xaf" "b\xed\xa0\x80" "c\xe2\x80\xae" "d", 99, 0, 0),
	    11);
	s = cellbuf_to_text(&cb);
	ck_assert_str_eq(s, "a???b???c?d\n");
	free(s);
	cellbuf_destroy(&cb);
}
END_TEST

START_TEST(test_render_fmt_units)
{
	char b[FMT_BUF];
	uint64_t v;

	ck_assert_str_eq(fmt_size(b, sizeof b, 0), "0 B");
	ck_assert_str_eq(fmt_size(b, sizeof b, 1023), "1023 B");
	ck_assert_str_eq(fmt_size(b, sizeof b, 1024), "1.0 KiB");
	ck_assert_str_eq(fmt_size(b, sizeof b, 1536), "1.5 KiB");
	ck_assert_str_eq(fmt_size(b, sizeof b, 20ull << 20), "20.0 MiB");
	ck_assert_str_eq(fmt_size(b, sizeof b, (uint64_t)(61.2 * (1 << 30))),
	    "61.2 GiB");
	ck_assert_str_eq(fmt_size_short(b, sizeof b, 512ull << 20), "512M");
	ck_assert_str_eq(fmt_size_short(b, sizeof b, 3ull << 29), "1.5G");
	/* a change keeps its sign with its number, padded as a whole */
	ck_assert_str_eq(fmt_size_short_delta(b, sizeof b, 300ull << 20,
	    23ull << 20), "-277M");
	ck_assert_str_eq(fmt_size_short_delta(b, sizeof b, 0, 3ull << 29),
	    "+1.5G");
	ck_assert_str_eq(fmt_size_short_delta(b, sizeof b, 7, 7), "0B");
	{
		char line[32];

		snprintf(line, sizeof line, "%10s", fmt_size_short_delta(b,
		    sizeof b, 300ull << 20, 23ull << 20));
		ck_assert_str_eq(line, "     -277M");
	}
	ck_assert_str_eq(fmt_count(b, sizeof b, 0), "0");
	ck_assert_str_eq(fmt_count(b, sizeof b, 999), "999");
	ck_assert_str_eq(fmt_count(b, sizeof b, 1000), "1,000");
	ck_assert_str_eq(fmt_count(b, sizeof b, 1204551), "1,204,551");
	ck_assert_str_eq(fmt_event(b, sizeof b, -1), "start");
	ck_assert_str_eq(fmt_event(b, sizeof b, 873120), "#873,120");
	ck_assert_str_eq(fmt_addr(b, sizeof b, 0x7f3a00000000ull),
	    "0x7f3a00000000");
	ck_assert_str_eq(fmt_duration(b, sizeof b, 12345678), "+12.345s");
	/* the time axis starts at "0", not "+0us" */
	ck_assert_str_eq(fmt_duration(b, sizeof b, 0), "0");
	ck_assert_str_eq(fmt_duration(b, sizeof b, 1), "+1us");
	ck_assert_str_eq(fmt_duration(b, sizeof b, -1), "-1us");
	ck_assert_int_eq(fmt_parse_u64("1,204,551", &v), 0);
	ck_assert_uint_eq(v, 1204551);
	ck_assert_int_eq(fmt_parse_u64("0x7f3a", &v), 0);
	ck_assert_uint_eq(v, 0x7f3a);
	ck_assert_int_eq(fmt_parse_u64("7f3a00", &v), 0);
	ck_assert_uint_eq(v, 0x7f3a00);
	ck_assert_int_eq(fmt_parse_u64("zz", &v), -1);
	ck_assert_int_eq(fmt_parse_u64("", &v), -1);
}
END_TEST

/* ---- frames ------------------------------------------------------------ */

START_TEST(test_render_frames_classify)
{
	ck_assert_int_eq(frames_classify("forward",
	    "/usr/lib/python3/dist-packages/torch/nn/modules/module.py"),
	    FRAME_FRAMEWORK);
	ck_assert_int_eq(frames_classify("f",
	    "D:\\venv\\Lib\\site-packages\\apex\\x.py"), FRAME_FRAMEWORK);
	ck_assert_int_eq(frames_classify("f", "C:\\w\\torch\\x.py"),
	    FRAME_FRAMEWORK);
	ck_assert_int_eq(frames_classify("train_step", "/home/u/train.py"),
	    FRAME_USER);
	ck_assert_int_eq(frames_classify("f", "/home/u/mytorch/x.py"),
	    FRAME_USER);
	ck_assert_int_eq(frames_classify("at::empty", "??"), FRAME_FRAMEWORK);
	ck_assert_int_eq(frames_classify("at::empty", ""), FRAME_FRAMEWORK);
	ck_assert_int_eq(frames_classify("f", "Allocator.cpp"),
	    FRAME_FRAMEWORK);
	ck_assert_int_eq(frames_classify("_PyEval_EvalFrameDefault", "x.py"),
	    FRAME_FILTERED);
	ck_assert_int_eq(frames_classify("call", "Objects/call.c"),
	    FRAME_FILTERED);
}
END_TEST

START_TEST(test_render_frames_fold)
{
	struct snapshot *s = snap_new();
	uint32_t f[5], st;
	struct frame_line lines[8];
	char buf[256];
	size_t n;

#define FR(name, file, line)                                                   \
	snap_intern_frame(s, snap_intern_str(s, name, strlen(name)),           \
	    snap_intern_str(s, file, strlen(file)), line)
	f[0] = FR("at::empty", "??", UINT64_MAX);
	f[1] = FR("_PyEval_EvalFrameDefault", "ceval.c", 0);
	f[2] = FR("forward", "/x/torch/nn/linear.py", 114);
	f[3] = FR("train_step", "/w/train.py", 112);
	f[4] = FR("<module>", "/w/\x1b[2Jevil.py", 1);
	st = snap_intern_stack(s, f, 5);
	n = frames_layout(s, st, 0, lines, 8);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(lines[0].nfold, 3);
	ck_assert_uint_eq(lines[1].frame, f[3]);
	ck_assert_uint_eq(lines[1].nfold, 0);
	ck_assert_uint_eq(frames_layout(s, st, 1, lines, 8), 5);
	ck_assert_uint_eq(frames_layout(s, st, 0, lines, 1), 3);
	ck_assert_uint_eq(frames_call_site(s, st), f[3]);
	frames_format(s, f[3], buf, sizeof buf);
	ck_assert_str_eq(buf, "/w/train.py:112 train_step");
	frames_format(s, f[4], buf, sizeof buf);
	ck_assert_ptr_null(strchr(buf, '\x1b'));
	snap_free(s);
}
END_TEST

/* ---- timeline ---------------------------------------------------------- */

static uint32_t
ch_at(struct cellbuf *cb, int x, int y)
{
	return cellbuf_at(cb, x, y)->ch;
}

/* The time axis needs sane times: a crafted file with times near the
 * int64 limits (spans would overflow) or going back gets the event axis. */
START_TEST(test_render_timeline_time_limits)
{
	static const int64_t ok[5] = {1000, 2000, 2000, 5000, 9000};
	static const int64_t huge[5] = {-(INT64_C(1) << 62) - 5, 0, 1, 2,
					INT64_MAX};
	static const int64_t back[5] = {1000, 2000, 1500, 5000, 9000};
	const int64_t *cases[3] = {ok, huge, back};
	int k;

	for (k = 0; k < 3; k++) {
		struct snapshot *s = snap_new();
		struct snap_trace *t = snap_trace_get(s, 0);
		struct idx_timeline tl;
		struct tl_model m;
		uint64_t i;

		for (i = 0; i < 5; i++) {
			snap_trace_push(s, t, SNAP_ALLOC, 0x1000 * (i + 1), 512,
			    0, 0);
			t = snap_trace_get(s, 0);
			snap_trace_set_time(t, i, cases[k][i]);
		}
		example(&tl);
		tl_model_init(&m, s, &tl, 100);
		ck_assert_int_eq(m.time_ok, k == 0);
		tl_model_destroy(&m);
		snap_free(s);
	}
}
END_TEST

START_TEST(test_render_timeline_stacking)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct tl_view v = {.ev0 = 0, .ev1 = 5, .cursor = 4,
	    .sel_elem = TL_NO_ELEM, .ymax = 350, .mono = 1,
	    .legend = TL_LEGEND_OFF, .mark_sel = -2};
	struct cellbuf cb;
	int px = TL_YAXIS_W, bot = 6; /* 7 plot rows: 50 bytes each */

	example(&tl);
	tl_model_init(&m, NULL, &tl, 100);
	ck_assert_uint_eq(m.layer[0].n, 3);
	/* the ghost at the bottom */
	ck_assert_uint_eq(m.layer[0].d[0].elem, 2);
	cellbuf_init(&cb, TL_YAXIS_W + 5, 9);
	tl_render(&m, &v, &cb, 0, 0, cb.w, cb.h, NULL);
	/* column 2 (after alloc B): C row 0, A rows 1-2, B rows 3-6 */
	ck_assert_uint_ne(ch_at(&cb, px + 2, bot - 1), ' ');
	ck_assert_uint_eq(ch_at(&cb, px + 2, bot - 3), ch_at(&cb, px + 2, 0));
	/* column 3 (after free A): B slid down to rows 1-4, row 5 empty */
	ck_assert_uint_eq(ch_at(&cb, px + 3, bot - 1), ch_at(&cb, px + 2,
	    bot - 3));
	ck_assert_uint_eq(ch_at(&cb, px + 3, bot - 4), ch_at(&cb, px + 2,
	    bot - 3));
	ck_assert_uint_eq(ch_at(&cb, px + 3, bot - 5), ' ');
	/* the ghost is alive from the start */
	ck_assert_uint_eq(ch_at(&cb, px + 0, bot), ch_at(&cb, px + 4, bot));
	golden_check(&cb, "timeline_example_ascii.txt");

	/* Only the largest drawn: A and C fall into the summary band. */
	tl_model_destroy(&m);
	tl_model_init(&m, NULL, &tl, 1);
	ck_assert_uint_eq(m.layer[0].n, 1);
	ck_assert_uint_eq(m.layer[0].d[0].elem, 1);
	tl_render(&m, &v, &cb, 0, 0, cb.w, cb.h, NULL);
	ck_assert_uint_eq(ch_at(&cb, px + 2, bot - 5), ':');  /* A+C on top */
	ck_assert_uint_ne(ch_at(&cb, px + 2, bot), ':');      /* B at bottom */
	golden_check(&cb, "timeline_example_summary.txt");
	tl_model_destroy(&m);
	cellbuf_destroy(&cb);
}
END_TEST

START_TEST(test_render_timeline_utf8_select)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct tl_view v = {.ev0 = 0, .ev1 = 5, .cursor = 2, .sel_elem = 1,
	    .utf8 = 1, .legend = TL_LEGEND_OFF, .mark_sel = -2};
	struct cellbuf cb;

	example(&tl);
	tl_model_init(&m, NULL, &tl, 100);
	cellbuf_init(&cb, 40, 10);
	tl_render(&m, &v, &cb, 0, 0, cb.w, cb.h, NULL);
	golden_check(&cb, "timeline_example_utf8.txt");
	tl_model_destroy(&m);
	cellbuf_destroy(&cb);
}
END_TEST

START_TEST(test_render_timeline_columns)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct tl_view v = {.ev0 = 0, .ev1 = 5, .sel_elem = TL_NO_ELEM,
	    .mono = 1,
	    .mark_sel = -2};
	int c;

	example(&tl);
	tl_model_init(&m, NULL, &tl, 100);
	for (c = 0; c < 5; c++) {
		ck_assert_int_eq(tl_col_event(&m, &v, 5, c), c);
		ck_assert_int_eq(tl_event_col(&m, &v, 5, c), c);
	}
	ck_assert_int_eq(tl_event_col(&m, &v, 5, 5), -1);
	/* two events per column */
	ck_assert_int_eq(tl_event_col(&m, &v, 2, 3), 1);
	ck_assert_int_eq(tl_model_find_elem(&m, 0x1000, 2), 0);
	ck_assert_uint_eq(tl_model_find_elem(&m, 0x1000, 3), TL_NO_ELEM);
	ck_assert_int_eq(tl_model_find_elem(&m, 0x3000, -1), 2);
	ck_assert_uint_eq(tl_total_at(&m, -1), 50);
	tl_model_destroy(&m);
}
END_TEST

/* The leak view's highlighted set (element A: alloc 1, free 3) rests at
 * the bottom of each column while alive; marks on the axis row, the
 * selected one highlighted. ASCII, no colour. */
START_TEST(test_render_timeline_hilite)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct tl_hilite h;
	static const int64_t marks[] = {1, 3};
	struct tl_view v = {.ev0 = 0, .ev1 = 5, .cursor = 4, .sel_elem =
	    TL_NO_ELEM, .ymax = 350, .mono = 1, .legend = TL_LEGEND_OFF,
	    .marks = marks, .n_marks = 2, .mark_sel = 3};
	struct cellbuf cb;
	uint64_t a = 0;
	int px = TL_YAXIS_W, bot = 6;

	example(&tl);
	tl_model_init(&m, NULL, &tl, 100);
	tl_hilite_init(&h, &m, &a, NULL, 1);
	ck_assert_uint_eq(tl_hilite_bytes(&h, -1), 0);
	ck_assert_uint_eq(tl_hilite_bytes(&h, 0), 0);
	ck_assert_uint_eq(tl_hilite_bytes(&h, 1), 100);
	ck_assert_uint_eq(tl_hilite_bytes(&h, 2), 100);
	ck_assert_uint_eq(tl_hilite_bytes(&h, 3), 0);
	v.hl = &h;
	cellbuf_init(&cb, TL_YAXIS_W + 5, 9);
	tl_render(&m, &v, &cb, 0, 0, cb.w, cb.h, NULL);
	/* A (100 bytes = 2 rows) at the bottom after events 1 and 2, then
	 * the ghost C, then B; gone after its free */
	ck_assert_uint_eq(ch_at(&cb, px + 1, bot), '!');
	ck_assert_uint_eq(ch_at(&cb, px + 2, bot), '!');
	ck_assert_uint_eq(ch_at(&cb, px + 2, bot - 1), '!');
	ck_assert_uint_ne(ch_at(&cb, px + 2, bot - 2), '!');
	ck_assert_uint_ne(ch_at(&cb, px + 2, bot - 3), '!');
	ck_assert_uint_ne(ch_at(&cb, px + 0, bot), '!');
	ck_assert_uint_ne(ch_at(&cb, px + 3, bot), '!');
	ck_assert_uint_eq(cellbuf_at(&cb, px + 2, bot)->color, UIC_LEAK);
	/* marks at events 1 and 3 on the axis row; the cursor (4) wins */
	ck_assert_uint_eq(ch_at(&cb, px + 1, bot + 1), '^');
	ck_assert_uint_eq(cellbuf_at(&cb, px + 1, bot + 1)->color, UIC_MARK);
	ck_assert_uint_eq(ch_at(&cb, px + 3, bot + 1), '^');
	ck_assert_uint_eq(cellbuf_at(&cb, px + 3, bot + 1)->color, UIC_HILITE);
	ck_assert_uint_eq(ch_at(&cb, px + 2, bot + 1), '-');
	ck_assert_uint_eq(ch_at(&cb, px + 4, bot + 1), '+');
	tl_hilite_destroy(&h);
	tl_model_destroy(&m);
	cellbuf_destroy(&cb);
}
END_TEST

/* A leaked set far thinner than a cell (100 bytes of a 35,000-byte
 * range: a fiftieth of a row) still marks the bottom row wherever it is
 * alive, not only the axis. */
START_TEST(test_render_thin_leak)
{
	struct idx_timeline tl;
	struct tl_model m;
	struct tl_hilite h;
	struct tl_view v = {.ev0 = 0, .ev1 = 5, .cursor = 4, .sel_elem =
	    TL_NO_ELEM, .ymax = 35000, .mono = 1, .legend = TL_LEGEND_OFF,
	    .mark_sel = -2};
	struct cellbuf cb;
	uint64_t a = 0;
	int px = TL_YAXIS_W, bot = 6, x;

	example(&tl);
	tl_model_init(&m, NULL, &tl, 100);
	tl_hilite_init(&h, &m, &a, NULL, 1);
	v.hl = &h;
	cellbuf_init(&cb, TL_YAXIS_W + 5, 9);
	tl_render(&m, &v, &cb, 0, 0, cb.w, cb.h, NULL);
	/* A is alive after events 1 and 2 */
	for (x = 0; x < 5; x++) {
		ck_assert_uint_eq(ch_at(&cb, px + x, bot) == '!', x == 1 ||
		    x == 2);
		if (x == 1 || x == 2)
			ck_assert_uint_eq(cellbuf_at(&cb, px + x, bot)->color,
			    UIC_LEAK);
		ck_assert_uint_ne(ch_at(&cb, px + x, bot - 1), '!');
	}
	tl_hilite_destroy(&h);
	tl_model_destroy(&m);
	cellbuf_destroy(&cb);
}
END_TEST

/* ---- segment map -------------------------------------------------------- */

static const struct replay_block sm_blocks[] = {
    {.addr = 0x1000, .size = 256, .requested_size = 200,
	.state = SNAP_BLOCK_ACTIVE_ALLOCATED, .alloc_ev = 1, .last_ev = 1},
    {.addr = 0x1100, .size = 256, .requested_size = 0,
	.state = SNAP_BLOCK_INACTIVE, .alloc_ev = -1, .last_ev = -1},
    {.addr = 0x1200, .size = 512, .requested_size = 512,
	.state = SNAP_BLOCK_ACTIVE_PENDING_FREE, .alloc_ev = 2, .last_ev = 2},
    {.addr = 0x10000, .size = 4096, .requested_size = 4096,
	.state = SNAP_BLOCK_ACTIVE_ALLOCATED, .alloc_ev = 3, .last_ev = 3},
};
static const struct replay_segment sm_segs[] = {
    {.addr = 0x1000, .size = 1024, .stream = 0, .first_block = 0,
	.n_blocks = 3, .allocated = 256, .active = 768, .requested = 712},
    {.addr = 0x10000, .size = 8192, .stream = 7, .pool_id = {1, 2},
	.is_large = 1, .is_expandable = 1, .first_block = 3, .n_blocks = 1,
	.allocated = 4096, .active = 4096, .requested = 4096},
};

static void
sm_state(struct replay_state *st)
{
	memset(st, 0, sizeof *st);
	st->at = 4;
	st->segments = sm_segs;
	st->n_segments = 2;
	st->blocks = sm_blocks;
	st->n_blocks = 4;
}

START_TEST(test_render_segmap_cells)
{
	struct replay_state st;
	struct segmap_view v = {0, SEGMAP_NONE, SEGMAP_NONE, 0, 1};
	struct replay_totals t;
	struct cellbuf cb;
	char *s, *row;

	sm_state(&st);
	/* bar width 16: 64 bytes per cell in segment 0 */
	cellbuf_init(&cb, SEGMAP_PREFIX_W + 2 + 5 + 16, 2);
	segmap_render(&st, &v, &cb, 0, 0, cb.w, cb.h);
	s = cellbuf_to_text(&cb);
	row = strchr(s, '[');
	ck_assert_ptr_nonnull(row);
	ck_assert_int_eq(strncmp(row, "[AAA+....~~~~~~~~]  25%", 23), 0);
	ck_assert_ptr_nonnull(strstr(s, "0x10000"));
	ck_assert_ptr_nonnull(strstr(s, "[AAAAAAAA........]  50%"));
	free(s);
	golden_check(&cb, "segmap_basic.txt");

	/* the title's totals: replay_totals, as stats --at N counts them
	 * (free external = the inactive and pending-free blocks; internal
	 * = the rounding of allocated ones; the largest free block) */
	replay_totals(&st, &t);
	ck_assert_uint_eq(t.reserved, 1024 + 8192);
	ck_assert_uint_eq(t.allocated, 256 + 4096);
	ck_assert_uint_eq(t.pending, 512);
	ck_assert_uint_eq(t.free_internal, 56);
	ck_assert_uint_eq(t.free_external, 256 + 512);
	ck_assert_uint_eq(t.largest_free, 256);

	/* selecting block 0 draws its cells and its segment's address in
	 * the lists' one selection style: UIC_SELECT, not reversed again
	 * (black on white reversed is white on black, unseen on a dark
	 * terminal; in monochrome UIC_SELECT reverses by itself) */
	v.sel_seg = 0;
	v.sel_block = 0;
	segmap_render(&st, &v, &cb, 0, 0, cb.w, cb.h);
	ck_assert_int_eq(cellbuf_at(&cb, SEGMAP_PREFIX_W + 1, 0)->color,
	    UIC_SELECT);
	ck_assert_int_eq(cellbuf_at(&cb, SEGMAP_PREFIX_W + 1, 0)->attr, 0);
	ck_assert_int_eq(cellbuf_at(&cb, 0, 0)->color, UIC_SELECT);
	ck_assert_int_eq(cellbuf_at(&cb, 0, 0)->attr, 0);
	ck_assert_int_ne(cellbuf_at(&cb, SEGMAP_PREFIX_W + 6, 0)->color,
	    UIC_SELECT);
	ck_assert_int_eq(cellbuf_at(&cb, SEGMAP_PREFIX_W + 6, 0)->attr, 0);
	cellbuf_destroy(&cb);
}
END_TEST

/* A state that claims the impossible (what a file can say): a block of
 * 2^64 - 1 bytes inside a 1 KiB segment, a segment that runs past the
 * end of the address space, more allocated than reserved. Drawn clipped
 * to the segment, percentages at most 100, totals saturated. */
static const struct replay_block bad_blocks[] = {
    {.addr = 0x1000, .size = 512, .state = SNAP_BLOCK_INACTIVE,
	.alloc_ev = -1, .last_ev = -1},
    {.addr = 0x1200, .size = UINT64_MAX, .requested_size = UINT64_MAX,
	.state = SNAP_BLOCK_ACTIVE_ALLOCATED, .alloc_ev = 1, .last_ev = 1},
    {.addr = UINT64_MAX - 4095, .size = 8192, .requested_size = 100,
	.state = SNAP_BLOCK_ACTIVE_ALLOCATED, .alloc_ev = 2, .last_ev = 2},
};
static const struct replay_segment bad_segs[] = {
    {.addr = 0x1000, .size = 1024, .first_block = 0, .n_blocks = 2,
	.allocated = UINT64_MAX, .active = UINT64_MAX},
    {.addr = UINT64_MAX - 4095, .size = 8192, .first_block = 2,
	.n_blocks = 5, .allocated = 8192, .active = 8192},
};

START_TEST(test_render_segmap_clipped)
{
	struct replay_state st;
	struct segmap_view v = {0, SEGMAP_NONE, SEGMAP_NONE, 0, 1};
	struct replay_totals t;
	struct cellbuf cb;
	char *s;

	memset(&st, 0, sizeof st);
	st.segments = bad_segs;
	st.n_segments = 2;
	st.blocks = bad_blocks;
	st.n_blocks = 3;
	cellbuf_init(&cb, SEGMAP_PREFIX_W + 2 + 5 + 16, 2);
	segmap_render(&st, &v, &cb, 0, 0, cb.w, cb.h);
	s = cellbuf_to_text(&cb);
	ck_assert_msg(strstr(s, "[........BBBBBBBB] 100%") != NULL, "%s", s);
	ck_assert_msg(strstr(s, "[++++++++++++++++] 100%") != NULL, "%s", s);
	free(s);
	/* totals saturate, not wrap: 2^64 - 1 + 8192 allocated bytes */
	replay_totals(&st, &t);
	ck_assert_uint_eq(t.allocated, UINT64_MAX);
	ck_assert_uint_eq(t.reserved, 1024 + 8192);
	cellbuf_destroy(&cb);
}
END_TEST

static Suite *
render_suite(void)
{
	Suite *s = suite_create("render");
	TCase *tc = tcase_create("basics");
	TCase *tl = tcase_create("timeline");
	TCase *sm = tcase_create("segmap");

	tcase_add_test(tc, test_render_cellbuf_text);
	tcase_add_test(tc, test_render_cellbuf_strict);
	tcase_add_test(tc, test_render_utf8_cells);
	tcase_add_test(tc, test_render_utf8_encode);
	tcase_add_test(tc, test_render_fmt_units);
	tcase_add_test(tc, test_render_frames_classify);
	tcase_add_test(tc, test_render_frames_fold);
	tcase_add_test(tl, test_render_timeline_stacking);
	tcase_add_test(tl, test_render_timeline_time_limits);
	tcase_add_test(tl, test_render_timeline_utf8_select);
	tcase_add_test(tl, test_render_timeline_columns);
	tcase_add_test(tl, test_render_timeline_hilite);
	tcase_add_test(tl, test_render_thin_leak);
	render_modes_tests(tl);
	render_sample_tests(tl);
	tcase_set_timeout(tl, 60);
	tcase_add_test(sm, test_render_segmap_cells);
	tcase_add_test(sm, test_render_segmap_clipped);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tl);
	suite_add_tcase(s, sm);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(render_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
