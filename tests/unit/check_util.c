/*
 * Unit tests for src/util/escape: what reaches the terminal and JSON
 * from an untrusted string.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/escape.h"

static const char *
esc(const char *s, size_t len)
{
	static char buf[256];

	sv_escape(buf, sizeof buf, s, len);
	return buf;
}

static const char *
json(const char *s, size_t len)
{
	static char out[256];
	FILE *f = fmemopen(out, sizeof out, "w");

	ck_assert_ptr_nonnull(f);
	sv_json_string(f, s, len);
	fclose(f);
	return out;
}

START_TEST(test_escape_controls)
{
	ck_assert_str_eq(esc("a\x1b[2Jb", 6), "a\\e[2Jb");
	ck_assert_str_eq(esc("x\n\t\r\\", 5), "x\\n\\t\\r\\\\");
	ck_assert_str_eq(esc("\x07\x7f", 2), "\\x07\\x7f");
	/* C1 CSI (U+009B) is two bytes in UTF-8: both shown */
	ck_assert_str_eq(esc("\xc2\x9b" "31m", 5), "\\xc2\\x9b31m");
	/* a NUL inside the given length is shown, not a terminator */
	ck_assert_str_eq(esc("a\0b", 3), "a\\x00b");
}
END_TEST

START_TEST(test_escape_utf8)
{
	/* printable UTF-8 passes through */
	ck_assert_str_eq(esc("na\xc3\xafve \xe6\x97\xa5", 10),
	    "na\xc3\xafve \xe6\x97\xa5");
	/* invalid: lone continuation, overlong, surrogate, truncated */
	ck_assert_str_eq(esc("\x80", 1), "\\x80");
	ck_assert_str_eq(esc("\xc0\xaf", 2), "\\xc0\\xaf");
	ck_assert_str_eq(esc("\xed\xa0\x80", 3), "\\xed\\xa0\\x80");
	ck_assert_str_eq(esc("\xe6\x97", 2), "\\xe6\\x97");
}
END_TEST

START_TEST(test_escape_invisible)
{
	/* RIGHT-TO-LEFT OVERRIDE would show "evil.py" reversed-looking */
	ck_assert_str_eq(esc("a\xe2\x80\xae" "b", 5), "a\\u{202e}b");
	/* zero-width space, LRI isolate, BOM, soft hyphen */
	ck_assert_str_eq(esc("\xe2\x80\x8b", 3), "\\u{200b}");
	ck_assert_str_eq(esc("\xe2\x81\xa6", 3), "\\u{2066}");
	ck_assert_str_eq(esc("\xef\xbb\xbf", 3), "\\u{feff}");
	ck_assert_str_eq(esc("\xc2\xad", 2), "\\u{00ad}");
	/* neighbours of the ranges are ordinary printable characters */
	ck_assert_str_eq(esc("\xe2\x80\x90", 3), "\xe2\x80\x90");	/* U+2010 */
	ck_assert_str_eq(esc("\xe2\x80\xaf", 3), "\xe2\x80\xaf");	/* U+202F */
}
END_TEST

START_TEST(test_escape_truncation)
{
	char buf[5];
	size_t n = sv_escape(buf, sizeof buf, "ab\x1b" "cd", 5);

	/* the full result is a b \ e c d: 6 bytes; buf holds 4 and the NUL */
	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(buf, "ab\\e");
	n = sv_escape(buf, 0, "abc", 3);
	ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(test_json_string)
{
	ck_assert_str_eq(json("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(json("\x1b\n", 2), "\"\\u001b\\u000a\"");
	ck_assert_str_eq(json("\xff" "x", 2), "\"\\ufffdx\"");
	ck_assert_str_eq(json("\xe2\x80\xae", 3), "\"\\u202e\"");
	ck_assert_str_eq(json("\xc3\xa9", 2), "\"\xc3\xa9\"");
}
END_TEST

static Suite *
util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("escape");

	tcase_add_test(tc, test_escape_controls);
	tcase_add_test(tc, test_escape_utf8);
	tcase_add_test(tc, test_escape_invisible);
	tcase_add_test(tc, test_escape_truncation);
	tcase_add_test(tc, test_json_string);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(util_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
