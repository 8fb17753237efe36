/*
 * Layout tests: pane rectangles tile the screen, respect the minimums,
 * and too-small sizes are reported. Keymap tests: within one keymap of
 * the action table a key means one action, and keys show as the help and
 * the status lines name them.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tui/keys.h"
#include "tui/layout.h"

static void
check_tiling(int cols, int rows)
{
	struct layout l;
	int i, y = 0;

	ck_assert_int_eq(layout_compute(cols, rows, &l), 0);
	ck_assert_int_eq(l.too_small, 0);
	for (i = 0; i < LAY_N; i++) {
		ck_assert_int_eq(l.r[i].x, 0);
		ck_assert_int_eq(l.r[i].w, cols);
		ck_assert_int_eq(l.r[i].y, y);
		y += l.r[i].h;
	}
	ck_assert_int_eq(y, rows);
	ck_assert_int_eq(l.r[LAY_STATUS].h, 1);
	ck_assert_int_ge(l.r[LAY_TIMELINE].h, 6);
	ck_assert_int_ge(l.r[LAY_SEGMENTS].h, 3);
	ck_assert_int_ge(l.r[LAY_DETAIL].h, 3);
	ck_assert_int_eq(l.full.h, rows - 1);
}

START_TEST(test_layout_tiles)
{
	check_tiling(80, 24);
	check_tiling(120, 40);
	check_tiling(60, 15);
	check_tiling(LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
	check_tiling(400, 200);
}
END_TEST

START_TEST(test_layout_timeline_largest)
{
	struct layout l;

	layout_compute(80, 24, &l);
	ck_assert_int_gt(l.r[LAY_TIMELINE].h, l.r[LAY_SEGMENTS].h);
	ck_assert_int_gt(l.r[LAY_SEGMENTS].h, l.r[LAY_DETAIL].h - 1);
}
END_TEST

START_TEST(test_layout_too_small)
{
	struct layout l;

	ck_assert_int_eq(layout_compute(LAYOUT_MIN_COLS - 1, 24, &l), -1);
	ck_assert_int_eq(l.too_small, 1);
	ck_assert_int_eq(l.r[LAY_STATUS].w, LAYOUT_MIN_COLS - 1);
	ck_assert_int_eq(layout_compute(80, LAYOUT_MIN_ROWS - 1, &l), -1);
	ck_assert_int_eq(layout_compute(0, 0, &l), -1);
	ck_assert_int_eq(l.r[LAY_STATUS].h, 0);
}
END_TEST

/* Every key of every action finds that action again in each keymap the
 * action is in: no other action of the keymap holds the key first. */
START_TEST(test_keymaps_one_action_a_key)
{
	static const unsigned km[] = {KM_VIEW, KM_RANKS, KM_COMPARE};
	size_t j, len;
	int a, w, code;

	for (j = 0; j < sizeof km / sizeof km[0]; j++) {
		for (a = 1; a < ACT_COUNT; a++) {
			if ((keys_action_keymaps((enum action)a) & km[j]) == 0)
				continue;
			for (w = 0; w < 2; w++) {
				const char *k = keys_action_key((enum action)a,
				    w);

				if (k[0] == '\0')
					continue;
				code = keys_parse(k, &len);
				ck_assert_int_ge(code, 0);
				ck_assert_int_eq(keys_action_in(code, km[j]),
				    a);
			}
		}
	}
	/* one key, an action per screen */
	ck_assert_int_eq(keys_action('c'), ACT_COLOR);
	ck_assert_int_eq(keys_action_in('c', KM_RANKS), ACT_RANK_COMPARE);
	ck_assert_int_eq(keys_action_in('c', KM_COMPARE), ACT_NONE);
	ck_assert_int_eq(keys_action(']'), ACT_ALLOC_NEXT);
	ck_assert_int_eq(keys_action_in(']', KM_COMPARE), ACT_STEP_NEXT);
	ck_assert_int_eq(keys_action(' '), ACT_NONE);
	ck_assert_int_eq(keys_action_in('q', KM_RANKS), ACT_QUIT);
}
END_TEST

START_TEST(test_keys_shown)
{
	char buf[64];

	ck_assert_str_eq(keys_action_shown(ACT_LEFT, buf, sizeof buf), "h");
	ck_assert_str_eq(keys_action_shown(ACT_PAGE_UP, buf, sizeof buf),
	    "PgUp");
	ck_assert_str_eq(keys_action_shown(ACT_RANK_MARK, buf, sizeof buf),
	    "Space");
	keys_hint(buf, sizeof buf, "%k/%k move  %k help", ACT_LEFT,
	    ACT_RIGHT, ACT_HELP);
	ck_assert_str_eq(buf, "h/l move  ? help");
	/* cut to the buffer, never past it */
	keys_hint(buf, 6, "%k/%k move", ACT_LEFT, ACT_RIGHT);
	ck_assert_str_eq(buf, "h/l m");
	keys_hint(buf, 2, "%k", ACT_RANKS);
	ck_assert_str_eq(buf, "B");
}
END_TEST

/* Z: the timeline takes every row above the status line; the panes
 * below have none (and are not drawn); a too-small layout stays so. */
START_TEST(test_layout_timeline_only)
{
	struct layout l, n;
	int i;

	ck_assert_int_eq(layout_compute(80, 24, &n), 0);
	l = n;
	layout_timeline_only(&l);
	ck_assert_int_eq(l.r[LAY_TIMELINE].y, 0);
	ck_assert_int_eq(l.r[LAY_TIMELINE].h, 23);
	ck_assert_int_eq(l.r[LAY_TIMELINE].h, n.r[LAY_TIMELINE].h +
	    n.r[LAY_SEGMENTS].h + n.r[LAY_DETAIL].h);
	for (i = LAY_SEGMENTS; i <= LAY_DETAIL; i++)
		ck_assert_int_eq(l.r[i].h, 0);
	ck_assert_int_eq(l.r[LAY_STATUS].y, 23);
	ck_assert_int_eq(l.r[LAY_STATUS].h, 1);
	ck_assert_int_eq(l.full.h, 23);
	ck_assert_int_eq(layout_compute(30, 10, &l), -1);
	layout_timeline_only(&l);
	ck_assert_int_eq(l.too_small, 1);
	ck_assert_int_eq(l.r[LAY_TIMELINE].h, 0);
}
END_TEST

static Suite *
layout_suite(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("core");
	TCase *tk = tcase_create("keys");

	/* no wall-clock limit (Check's default is 4 s): machines are shared */
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_layout_tiles);
	tcase_add_test(tc, test_layout_timeline_largest);
	tcase_add_test(tc, test_layout_too_small);
	tcase_add_test(tc, test_layout_timeline_only);
	suite_add_tcase(s, tc);
	tcase_add_test(tk, test_keymaps_one_action_a_key);
	tcase_add_test(tk, test_keys_shown);
	suite_add_tcase(s, tk);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(layout_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
