/*
 * The command line's checks of the event options (cli_check_args(), which
 * the viewer runs too), on snapshots built here; --limit's rows. Linked with
 * -Wl,--wrap=snap_default_device, so the test counts how often the
 * default device is worked out: it reads every trace list, and doing it
 * once per device made `--at` quadratic in the number of trace lists
 * (issue 34).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "snapshot/snap_model.h"

uint32_t __real_snap_default_device(const struct snapshot *);
uint32_t __wrap_snap_default_device(const struct snapshot *);

static unsigned default_calls;

uint32_t
__wrap_snap_default_device(const struct snapshot *s)
{
	default_calls++;
	return __real_snap_default_device(s);
}

/* n trace lists, all empty but the last, which holds events events. */
static struct snapshot *
lists(uint32_t n, uint64_t events)
{
	struct snapshot *s = snap_new();
	struct snap_trace *t = snap_trace_get(s, n - 1);
	uint64_t i;

	for (i = 0; i < events; i++)
		snap_trace_push(s, t, SNAP_ALLOC, 512 * (i + 1), 512, 0, 0);
	return s;
}

static void
opts_at(struct cli_opts *o, int64_t at)
{
	memset(o, 0, sizeof *o);
	o->device = -1;
	o->has_at = 1;
	o->at = at;
}

/* The viewer's and `state`'s uses: one device, the default one. */
#define ONE (CLI_U_AT | CLI_U_WINDOW | CLI_U_ONE_DEVICE)

START_TEST(test_cli_at_default_device)
{
	struct snapshot *s = lists(3, 2);
	struct cli_opts o;
	char msg[256];

	opts_at(&o, 1);
	ck_assert_int_eq(cli_check_args(&o, ONE, s, msg, sizeof msg), 0);
	opts_at(&o, -1);
	ck_assert_int_eq(cli_check_args(&o, ONE, s, msg, sizeof msg), 0);
	opts_at(&o, 2);
	ck_assert_int_eq(cli_check_args(&o, ONE, s, msg, sizeof msg), -1);
	ck_assert_str_eq(msg, "--at 2 is outside the events of device 2: "
	    "-1..1 (-1 or start: before the first)");
	snap_free(s);
}
END_TEST

/* 65,536 trace lists (the most a file may name; 64 KB of pickle): the
 * default device is worked out once, not once per list. */
START_TEST(test_cli_at_many_lists)
{
	struct snapshot *s = lists(65536, 1);
	struct cli_opts o;
	char msg[256];

	opts_at(&o, 0);
	default_calls = 0;
	ck_assert_int_eq(cli_check_args(&o, ONE, s, msg, sizeof msg), 0);
	ck_assert_uint_le(default_calls, 1);
	opts_at(&o, 1);
	default_calls = 0;
	ck_assert_int_eq(cli_check_args(&o, ONE, s, msg, sizeof msg), -1);
	ck_assert_uint_le(default_calls, 1);
	ck_assert_str_eq(msg, "--at 1 is outside the events of device "
	    "65535: -1..0 (-1 or start: before the first)");
	/* every device reported: the default one is not needed */
	opts_at(&o, 0);
	default_calls = 0;
	ck_assert_int_eq(cli_check_args(&o, CLI_U_AT, s, msg, sizeof msg), 0);
	ck_assert_uint_eq(default_calls, 0);
	snap_free(s);
}
END_TEST

/* --limit N prints N rows, --limit 0 all of them; without it, a text
 * report has the command's default and JSON has all. */
START_TEST(test_cli_limit)
{
	struct cli_opts o;

	memset(&o, 0, sizeof o);
	ck_assert_uint_eq(cli_limit(&o, 10), 10);
	o.json = 1;
	ck_assert_uint_eq(cli_limit(&o, 10), UINT64_MAX);
	o.has_limit = 1;
	o.limit = 5;
	ck_assert_uint_eq(cli_limit(&o, 10), 5);
	o.json = 0;
	ck_assert_uint_eq(cli_limit(&o, 10), 5);
	o.limit = 0;
	ck_assert_uint_eq(cli_limit(&o, 10), UINT64_MAX);
}
END_TEST

static Suite *
cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc;

	/* no wall-clock limit (Check's default is 4 s): machines are shared */
	tc = tcase_create("args");
	tcase_set_timeout(tc, 0);
	tcase_add_test(tc, test_cli_at_default_device);
	tcase_add_test(tc, test_cli_at_many_lists);
	tcase_add_test(tc, test_cli_limit);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(cli_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
