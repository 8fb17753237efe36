/*
 * Unit tests for src/util: escape (what reaches the terminal and JSON
 * from an untrusted string), units (sizes and counts as printed), the
 * binary search, address arithmetic (sat.h), the ordered map (avl) and
 * the hash map (u64map).
 */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>
#include <xxhash.h>

#include "util/avl.h"
#include "util/escape.h"
#include "util/fdio.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/mapfile.h"
#include "util/sat.h"
#include "util/search.h"
#include "util/tape.h"
#include "util/thread.h"
#include "util/u64map.h"
#include "util/units.h"

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
	ck_assert_str_eq(esc("a\x1b[2Jb", 6), "a\\x1b[2Jb");
	ck_assert_str_eq(esc("x\n\t\r", 4), "x\\x0a\\x09\\x0d");
	ck_assert_str_eq(esc("\x07\x7f", 2), "\\x07\\x7f");
	/* C1 CSI (U+009B) is two bytes in UTF-8: both shown */
	ck_assert_str_eq(esc("\xc2\x9b" "31m", 5), "\\xc2\\x9b31m");
	/* a NUL inside the given length is shown, not a terminator */
	ck_assert_str_eq(esc("a\0b", 3), "a\\x00b");
}
END_TEST

/* Reads escaped text back as escape.h says to, from the left: \xHH is
 * the byte HH, \u{H...} the code point, any other backslash itself. */
static size_t
unescape(const char *s, char *out)
{
	size_t n = 0;
	unsigned v;
	int k;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] == 'x' &&
		    isxdigit((unsigned char)s[2]) &&
		    isxdigit((unsigned char)s[3]) &&
		    sscanf(s + 2, "%2x", &v) == 1) {
			out[n++] = (char)v;
			s += 4;
		} else if (s[0] == '\\' && s[1] == 'u' && s[2] == '{' &&
		    sscanf(s + 3, "%x}%n", &v, &k) == 1 && k > 0) {
			n += (size_t)sv_utf8_encode(v, out + n);
			s += 3 + k;
		} else
			out[n++] = *s++;
	}
	out[n] = '\0';
	return n;
}

/* A backslash is itself (a Windows path reads as in the file), and only
 * \xHH and \u{...} are escapes: a backslash that would start one is
 * written \x5c, so every string reads back as it was. */
START_TEST(test_escape_backslash)
{
	static const char *const tricky[] = {"\\x41", "\\u{41}", "\\\\x41",
	    "a\\", "\\\x1b", "\\e\\n\\t\\r\\\\", "\\x4", "\\xg1", "\\u41",
	    "\\\xe2\x80\x8b", "x\\\\\\x5c", "\\\xff"};
	const char *win = "C:\\Users\\me\\envs\\torch\\nn\\train.py";
	char back[64];
	size_t i;

	ck_assert_str_eq(esc(win, strlen(win)), win);
	ck_assert_str_eq(esc("\\\\server\\share", 14), "\\\\server\\share");
	ck_assert_str_eq(esc("\\x41", 4), "\\x5cx41");
	ck_assert_str_eq(esc("\\xFF", 4), "\\x5cxFF");
	ck_assert_str_eq(esc("\\u{41}", 6), "\\x5cu{41}");
	ck_assert_str_eq(esc("\\x4", 3), "\\x4");
	ck_assert_str_eq(esc("\\\x1b", 2), "\\\\x1b");
	for (i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
		const char *e = esc(tricky[i], strlen(tricky[i]));

		ck_assert_uint_eq(unescape(e, back), strlen(tricky[i]));
		ck_assert_msg(strcmp(back, tricky[i]) == 0,
		    "'%s' reads back as '%s'", e, back);
	}
}
END_TEST

/* sv_escape_fputs() escapes a long string in pieces: a backslash at the
 * end of one still sees what follows it. */
START_TEST(test_escape_fputs_backslash)
{
	char in[700], out[1024];
	FILE *f;
	size_t i;

	for (i = 0; i < sizeof in - 1; i++)
		in[i] = 'a';
	in[sizeof in - 1] = '\0';
	for (i = 97; i < 103; i++) {
		memcpy(in + i, "\\x41", 4);
		f = fmemopen(out, sizeof out, "w");
		ck_assert_ptr_nonnull(f);
		sv_escape_fputs(f, in);
		fclose(f);
		ck_assert_uint_eq(strlen(out), sizeof in - 1 + 3);
		ck_assert_ptr_nonnull(strstr(out, "a\\x5cx41a"));
		memset(in + i, 'a', 4);
	}
}
END_TEST

/* The one decoder refuses what the screen's used to accept: overlong
 * forms and surrogates. */
static size_t
dec(const char *s, size_t n, uint32_t *cp)
{
	return sv_utf8_decode((const unsigned char *)s, n, cp);
}

START_TEST(test_utf8_decode)
{
	uint32_t cp = 0;

	ck_assert_uint_eq(dec("\xe6\x97\xa5", 3, &cp), 3);
	ck_assert_uint_eq(cp, 0x65e5);
	ck_assert_uint_eq(dec("\xf4\x8f\xbf\xbf", 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x10ffff);
	ck_assert_uint_eq(dec("\xe0\x80\xaf", 3, &cp), 0);
	ck_assert_uint_eq(dec("\xc0\xaf", 2, &cp), 0);
	ck_assert_uint_eq(dec("\xed\xa0\x80", 3, &cp), 0);
	ck_assert_uint_eq(dec("\xf4\x90\x80\x80", 4, &cp), 0);
	ck_assert_uint_eq(dec("\xe6\x97", 2, &cp), 0);
	ck_assert_uint_eq(dec("x", 0, &cp), 0);
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
	/* the ones issue 18 found passing: a tag character, the line
	 * separator, the Mongolian vowel separator, the grapheme joiner, the
	 * Hangul fillers, a variation selector, an annotation anchor */
	ck_assert_str_eq(esc("a\xf3\xa0\x80\x81" "b", 6), "a\\u{e0001}b");
	ck_assert_str_eq(esc("\xe2\x80\xa8", 3), "\\u{2028}");
	ck_assert_str_eq(esc("\xe1\xa0\x8e", 3), "\\u{180e}");
	ck_assert_str_eq(esc("\xcd\x8f", 2), "\\u{034f}");
	ck_assert_str_eq(esc("\xe3\x85\xa4", 3), "\\u{3164}");
	ck_assert_str_eq(esc("\xe1\x85\x9f", 3), "\\u{115f}");
	ck_assert_str_eq(esc("\xef\xb8\x8f", 3), "\\u{fe0f}");
	ck_assert_str_eq(esc("\xef\xbf\xb9", 3), "\\u{fff9}");
	/* a space that passes for U+0020 */
	ck_assert_str_eq(esc("\xe2\x80\xaf", 3), "\\u{202f}");
	/* private use (each font draws what it likes there) and
	 * noncharacters (issue 34): the ends of each range */
	ck_assert_str_eq(esc("\xee\x80\x80", 3), "\\u{e000}");
	ck_assert_str_eq(esc("\xef\xa3\xbf", 3), "\\u{f8ff}");
	ck_assert_str_eq(esc("\xf3\xb0\x80\x80", 4), "\\u{f0000}");
	ck_assert_str_eq(esc("\xf3\xbf\xbf\xbd", 4), "\\u{ffffd}");
	ck_assert_str_eq(esc("\xf4\x80\x80\x80", 4), "\\u{100000}");
	ck_assert_str_eq(esc("\xf4\x8f\xbf\xbd", 4), "\\u{10fffd}");
	ck_assert_str_eq(esc("\xef\xb7\x90", 3), "\\u{fdd0}");
	ck_assert_str_eq(esc("\xef\xb7\xaf", 3), "\\u{fdef}");
	ck_assert_str_eq(esc("\xef\xbf\xbe", 3), "\\u{fffe}");
	ck_assert_str_eq(esc("\xef\xbf\xbf", 3), "\\u{ffff}");
	ck_assert_str_eq(esc("\xf0\x9f\xbf\xbe", 4), "\\u{1fffe}");
	ck_assert_str_eq(esc("\xf4\x8f\xbf\xbf", 4), "\\u{10ffff}");
	/* and their neighbours are not: U+F900 a CJK ideograph, U+FDCF and
	 * U+FDF0 Arabic ligatures, U+1FFFD unassigned */
	ck_assert_str_eq(esc("\xef\xa4\x80", 3), "\xef\xa4\x80");
	ck_assert_str_eq(esc("\xef\xb7\x8f", 3), "\xef\xb7\x8f");
	ck_assert_str_eq(esc("\xef\xb7\xb0", 3), "\xef\xb7\xb0");
	ck_assert_str_eq(esc("\xf0\x9f\xbf\xbd", 4),
	    "\xf0\x9f\xbf\xbd");
	/* neighbours of the ranges are ordinary printable characters:
	 * U+2010, U+2030 */
	ck_assert_str_eq(esc("\xe2\x80\x90", 3), "\xe2\x80\x90");
	ck_assert_str_eq(esc("\xe2\x80\xb0", 3), "\xe2\x80\xb0");
	ck_assert_str_eq(esc(" ", 1), " ");
}
END_TEST

START_TEST(test_escape_truncation)
{
	char buf[5];
	size_t n = sv_escape(buf, sizeof buf, "ab\x1b" "cd", 5);

	/* the full result is a b \ x 1 b c d: 8 bytes; the escape does not
	 * fit in the 2 bytes left */
	ck_assert_uint_eq(n, 8);
	ck_assert_str_eq(buf, "ab");
	n = sv_escape(buf, 0, "abc", 3);
	ck_assert_uint_eq(n, 3);
}
END_TEST

/* A cut never ends inside a character or an escape (issue 34): a piece
 * goes in whole or not at all, and nothing after one that did not. */
START_TEST(test_escape_cut_whole)
{
	char buf[8];

	/* U+00E9 (2 bytes) after "a", 1 byte of room left */
	ck_assert_uint_eq(sv_escape(buf, 3, "a\xc3\xa9", 3), 3);
	ck_assert_str_eq(buf, "a");
	/* nor a shorter piece after it */
	ck_assert_uint_eq(sv_escape(buf, 3, "a\xc3\xa9" "b", 4), 4);
	ck_assert_str_eq(buf, "a");
	/* U+20AC (3 bytes) */
	ck_assert_uint_eq(sv_escape(buf, 4, "ab\xe2\x82\xac", 5), 5);
	ck_assert_str_eq(buf, "ab");
	/* \u{200b}: 8 bytes, 6 of room */
	ck_assert_uint_eq(sv_escape(buf, 7, "a\xe2\x80\x8b", 4), 9);
	ck_assert_str_eq(buf, "a");
	/* U+009B (CSI) is one piece, \xc2\x9b: not \xc2 alone */
	ck_assert_uint_eq(sv_escape(buf, 8, "a\xc2\x9b", 3), 9);
	ck_assert_str_eq(buf, "a");
	/* \x1b: 4 bytes, 3 of room */
	ck_assert_uint_eq(sv_escape(buf, 5, "a\x1b", 2), 5);
	ck_assert_str_eq(buf, "a");
	/* exactly full */
	ck_assert_uint_eq(sv_escape(buf, 4, "a\xc3\xa9", 3), 3);
	ck_assert_str_eq(buf, "a\xc3\xa9");
}
END_TEST

/* s cut into buf as snprintf(buf, size, "%s", s) cuts it, then mended
 * (sv_utf8_mend). */
static const char *
mended(char *buf, size_t size, const char *s)
{
	size_t n = strlen(s), k = n < size - 1 ? n : size - 1;

	memcpy(buf, s, k);
	buf[k] = '\0';
	return sv_utf8_mend(buf, size, (int)n);
}

START_TEST(test_utf8_fit)
{
	char buf[6];

	/* a sequence cut at the end is dropped, a whole one kept */
	ck_assert_uint_eq(sv_utf8_fit("a\xc3\xa9", 3), 3);
	ck_assert_uint_eq(sv_utf8_fit("a\xc3\xa9", 2), 1);
	ck_assert_uint_eq(sv_utf8_fit("a\xe2\x82\xac", 3), 1);
	ck_assert_uint_eq(sv_utf8_fit("a\xe2\x82\xac", 2), 1);
	ck_assert_uint_eq(sv_utf8_fit("a\xf0\x9f\x98\x80", 4), 1);
	ck_assert_uint_eq(sv_utf8_fit("a\xf0\x9f\x98\x80", 5), 5);
	ck_assert_uint_eq(sv_utf8_fit("", 0), 0);
	/* bytes that are no start of a valid sequence stay (they are
	 * escaped one by one) */
	ck_assert_uint_eq(sv_utf8_fit("a\xff", 2), 2);
	ck_assert_uint_eq(sv_utf8_fit("a\x80", 2), 2);
	ck_assert_uint_eq(sv_utf8_fit("a\xc0", 2), 2);
	ck_assert_uint_eq(sv_utf8_fit("\x80\x80\x80", 3), 3);
	ck_assert_uint_eq(sv_utf8_fit("a\xe0\x80", 3), 3);
	/* snprintf's cut mended: only when it did cut */
	ck_assert_str_eq(mended(buf, sizeof buf, "abcd\xc3\xa9"), "abcd");
	ck_assert_str_eq(mended(buf, sizeof buf, "ab\xc3"), "ab\xc3");
	ck_assert_str_eq(mended(buf, sizeof buf, "abc\xc3\xa9"),
	    "abc\xc3\xa9");
}
END_TEST

START_TEST(test_json_string)
{
	ck_assert_str_eq(json("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(json("\x1b\n", 2), "\"\\u001b\\u000a\"");
	ck_assert_str_eq(json("\xff" "x", 2), "\"\\ufffdx\"");
	ck_assert_str_eq(json("\xe2\x80\xae", 3), "\"\\u202e\"");
	/* past U+FFFF: a UTF-16 surrogate pair, as JSON requires */
	ck_assert_str_eq(json("\xf3\xa0\x80\x81", 4), "\"\\udb40\\udc01\"");
	ck_assert_str_eq(json("\xe2\x80\xa8", 3), "\"\\u2028\"");
	/* private use and noncharacters as invisible (issue 34) */
	ck_assert_str_eq(json("\xee\x80\x80", 3), "\"\\ue000\"");
	ck_assert_str_eq(json("\xef\xbf\xbe", 3), "\"\\ufffe\"");
	ck_assert_str_eq(json("\xf4\x8f\xbf\xbd", 4),
	    "\"\\udbff\\udffd\"");
	ck_assert_str_eq(json("\xc3\xa9", 2), "\"\xc3\xa9\"");
}
END_TEST

/* ---- avl ----------------------------------------------------------------- */

struct elem {
	struct avl_node node;
	uint64_t val;
};

/* The node an in-order walk met last (avl_verify()): each node's list
 * links must name its neighbours in that walk. */
static const struct avl_node *avl_walk_last;

/* Checks order, parent links, heights, balance and the list links of the
 * subtree at x (the walk in key order from avl_walk_last); returns its
 * height and counts its nodes. */
static int32_t
avl_verify_from(const struct avl_node *x, const struct avl_node *parent,
    size_t *n)
{
	int32_t a, b;

	if (x == NULL)
		return 0;
	ck_assert_ptr_eq(x->p, parent);
	a = avl_verify_from(x->l, x, n);
	ck_assert_ptr_eq(x->prev, avl_walk_last);
	if (avl_walk_last != NULL)
		ck_assert_ptr_eq(avl_walk_last->next, x);
	avl_walk_last = x;
	b = avl_verify_from(x->r, x, n);
	if (x->l != NULL)
		ck_assert_uint_lt(x->l->key, x->key);
	if (x->r != NULL)
		ck_assert_uint_gt(x->r->key, x->key);
	ck_assert_int_le(a - b, 1);
	ck_assert_int_ge(a - b, -1);
	ck_assert_int_eq(x->h, (a > b ? a : b) + 1);
	(*n)++;
	return x->h;
}

/* The whole tree at root: avl_verify_from(), and the last node's next
 * link NULL. */
static int32_t
avl_verify(const struct avl_node *root, const struct avl_node *parent,
    size_t *n)
{
	int32_t h;

	avl_walk_last = NULL;
	h = avl_verify_from(root, parent, n);
	if (avl_walk_last != NULL)
		ck_assert_ptr_null(avl_walk_last->next);
	return h;
}

/* Random inserts and removes against a bitmap of the keys present. */
START_TEST(test_avl_random)
{
	enum { N = 4096 };
	static unsigned char in[N];
	struct avl t;
	uint64_t x = 88172645463325252ull;
	size_t i, n, count = 0, ge_key;
	int64_t le_key;

	memset(in, 0, sizeof in);
	avl_init(&t, sizeof(struct elem));
	for (i = 0; i < 100000; i++) {
		uint64_t k;
		struct elem *e;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = (x >> 8) % N;
		if (x & 1) {
			e = avl_insert(&t, k);
			ck_assert_int_eq(e == NULL, in[k]);
			if (e != NULL) {
				ck_assert_uint_eq(e->val, 0);
				e->val = k * 3;
				in[k] = 1;
				count++;
			}
		} else if ((e = avl_find(&t, k)) != NULL) {
			ck_assert(in[k]);
			ck_assert_uint_eq(e->val, k * 3);
			avl_remove(&t, e);
			in[k] = 0;
			count--;
		} else
			ck_assert(!in[k]);
		if (i % 4999 == 0) {
			n = 0;
			avl_verify(t.root, NULL, &n);
			ck_assert_uint_eq(n, count);
			ck_assert_uint_eq(t.n, count);
		}
	}
	/* le / ge / next / prev agree with the bitmap */
	for (i = 0, le_key = -1; i < N; i++) {
		struct elem *le = avl_le(&t, i);

		if (in[i])
			le_key = (int64_t)i;
		if (le_key < 0)
			ck_assert_ptr_null(le);
		else
			ck_assert_uint_eq(avl_key(le), (uint64_t)le_key);
	}
	for (i = N, ge_key = N; i-- > 0;) {
		struct elem *ge = avl_ge(&t, i);

		if (in[i])
			ge_key = i;
		if (ge_key == N) {
			ck_assert_ptr_null(ge);
			continue;
		}
		ck_assert_uint_eq(avl_key(ge), ge_key);
		if (avl_next(ge) != NULL)
			ck_assert(avl_key(avl_next(ge)) > ge_key);
		if (avl_prev(ge) != NULL)
			ck_assert(avl_key(avl_prev(ge)) < ge_key);
	}
	n = 0;
	for (struct elem *e = avl_first(&t); e != NULL; e = avl_next(e))
		n++;
	ck_assert_uint_eq(n, count);
	avl_clear(&t);
	ck_assert_ptr_null(avl_first(&t));
	ck_assert_ptr_nonnull(avl_insert(&t, 7));
	avl_destroy(&t);
}
END_TEST

/* Keys in descending order, the order a hostile file picks: the tree
 * stays balanced (height <= 1.45 log2 n) and elements do not move. */
START_TEST(test_avl_descending)
{
	enum { N = 100000 };
	struct avl t;
	struct elem *first;
	size_t i, n = 0;

	avl_init(&t, sizeof(struct elem));
	first = avl_insert(&t, N);
	first->val = 42;
	for (i = N; i-- > 0;)
		ck_assert_ptr_nonnull(avl_insert(&t, i));
	avl_verify(t.root, NULL, &n);
	ck_assert_uint_eq(n, N + 1);
	ck_assert_int_le(t.root->h, 25);
	ck_assert_ptr_eq(avl_find(&t, N), first);
	ck_assert_uint_eq(first->val, 42);
	ck_assert_uint_eq(avl_key(avl_first(&t)), 0);
	ck_assert_uint_eq(avl_key(avl_last(&t)), N);
	avl_destroy(&t);
}
END_TEST

/* Same keys in the same places: the shapes of two subtrees agree. */
static void
avl_same_shape(const struct avl_node *x, const struct avl_node *y)
{
	ck_assert_int_eq(x == NULL, y == NULL);
	if (x == NULL)
		return;
	ck_assert_uint_eq(x->key, y->key);
	ck_assert_int_eq(x->h, y->h);
	avl_same_shape(x->l, y->l);
	avl_same_shape(x->r, y->r);
}

/* Splitting ranges as the replay does: avl_insert_after next to the
 * element being split, or next to a wrong one (the plain insert then),
 * gives the tree avl_insert gives, and NULL for a key already there. */
START_TEST(test_avl_insert_after)
{
	struct avl t, ref;
	uint64_t x = 2463534242ull;
	size_t i, n = 0;

	avl_init(&t, sizeof(struct elem));
	avl_init(&ref, sizeof(struct elem));
	ck_assert_ptr_nonnull(avl_insert(&t, 0));
	ck_assert_ptr_nonnull(avl_insert(&ref, 0));
	ck_assert_ptr_nonnull(avl_insert(&t, 1ull << 40));
	ck_assert_ptr_nonnull(avl_insert(&ref, 1ull << 40));
	for (i = 0; i < 60000; i++) {
		struct elem *e, *nx, *hint;
		uint64_t k, lo, hi;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		e = avl_le(&t, (x >> 4) % (1ull << 40));
		nx = avl_next(e);
		lo = avl_key(e);
		hi = avl_key(nx);
		if (hi - lo < 2)
			continue;
		k = lo + 1 + (x >> 20) % (hi - lo - 1);
		switch (x % 8) {
		case 0: hint = nx; break;                 /* after the key */
		case 1: hint = avl_prev(e) != NULL ? avl_prev(e) : e; break;
		case 2: hint = e; k = lo; break;          /* already there */
		default: hint = e; break;                 /* the right one */
		}
		ck_assert_int_eq(avl_insert_after(&t, hint, k) == NULL,
		    avl_insert(&ref, k) == NULL);
		if (x % 64 == 5) {
			/* and removals between the splits */
			avl_remove(&t, avl_find(&t, k));
			avl_remove(&ref, avl_find(&ref, k));
		}
	}
	avl_verify(t.root, NULL, &n);
	ck_assert_uint_eq(n, t.n);
	ck_assert_uint_eq(t.n, ref.n);
	ck_assert_uint_gt(t.n, 20000);
	avl_same_shape(t.root, ref.root);
	avl_destroy(&t);
	avl_destroy(&ref);
}
END_TEST

static int
fill_sq(void *el, size_t i, void *arg)
{
	struct elem *e = el;
	const size_t *bad_at = arg;

	avl_rekey(e, i == *bad_at ? 0 : (uint64_t)i * i);
	e->val = i;
	return 0;
}

/* avl_load builds a balanced map in order, and refuses keys that do not
 * ascend (leaving it empty). */
START_TEST(test_avl_load)
{
	struct avl t;
	struct elem *e;
	size_t n = 0, bad_at = SIZE_MAX, i = 0;

	avl_init(&t, sizeof(struct elem));
	ck_assert_ptr_nonnull(avl_insert(&t, 5));
	ck_assert_int_eq(avl_load(&t, 3000, fill_sq, &bad_at), 0);
	avl_verify(t.root, NULL, &n);
	ck_assert_uint_eq(n, 3000);
	ck_assert_ptr_null(avl_find(&t, 5));
	for (e = avl_first(&t); e != NULL; e = avl_next(e), i++)
		ck_assert_uint_eq(avl_key(e), i * i);
	ck_assert_uint_eq(i, 3000);
	e = avl_find(&t, 49);
	ck_assert_uint_eq(e->val, 7);
	avl_remove(&t, e);
	ck_assert_ptr_nonnull(avl_insert(&t, 50));
	n = 0;
	avl_verify(t.root, NULL, &n);
	ck_assert_uint_eq(n, 3000);
	bad_at = 10;
	ck_assert_int_eq(avl_load(&t, 100, fill_sq, &bad_at), -1);
	ck_assert_ptr_null(avl_first(&t));
	ck_assert_uint_eq(t.n, 0);
	avl_destroy(&t);
}
END_TEST

/* The map against a plain array: puts, replacements, gets and
 * deletions (backward shifts) in a pseudo-random order. */
START_TEST(test_u64map_ops)
{
	static uint8_t have[4096];
	static uint64_t val[4096];
	struct u64map m;
	uint64_t x = 88172645463325252ull, v;
	size_t i, n = 0;

	memset(have, 0, sizeof have);
	u64map_init(&m);
	for (i = 0; i < 200000; i++) {
		uint64_t k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % 4096;
		if (x >> 62 == 0) {
			ck_assert_int_eq(u64map_del(&m, k * 0x10000), have[k]);
			n -= have[k];
			have[k] = 0;
		} else {
			u64map_put(&m, k * 0x10000, x);
			n += !have[k];
			have[k] = 1;
			val[k] = x;
		}
		ck_assert_uint_eq(m.n, n);
	}
	for (i = 0; i < 4096; i++) {
		ck_assert_int_eq(u64map_get(&m, i * 0x10000, &v), have[i]);
		if (have[i])
			ck_assert_uint_eq(v, val[i]);
	}
	u64map_destroy(&m);
	ck_assert_int_eq(u64map_get(&m, 0, &v), 0);
}
END_TEST

/* The mixing function the map used to place keys with, undone: keys that
 * it sent to one slot whatever the table size. */
static uint64_t
unmix(uint64_t h)
{
	uint64_t a = 0xff51afd7ed558ccdull, inv = a;
	int i;

	for (i = 0; i < 6; i++) /* Newton: inverse of a mod 2^64 */
		inv *= 2 - a * inv;
	h ^= h >> 33;
	h *= inv;
	h ^= h >> 33;
	return h;
}

/* A file chooses its addresses: 100,000 keys that a fixed mix put in one
 * slot (each insert walked past all the others) spread over the table
 * like any keys once the hash is keyed. */
START_TEST(test_u64map_flood)
{
	struct u64map m;
	uint64_t j, v, k = unmix(1ull << 32);
	size_t i, run = 0, longest = 0;

	/* the keys really did collide under the old mix */
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	ck_assert_uint_eq(k, 1ull << 32);
	u64map_init(&m);
	for (j = 1; j <= 100000; j++)
		u64map_put(&m, unmix(j << 32), j);
	for (i = 0; i < 2 * m.cap; i++) {
		run = m.used[i & (m.cap - 1)] ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	ck_assert_uint_lt(longest, 1000);
	for (j = 1; j <= 100000; j++) {
		ck_assert_int_eq(u64map_get(&m, unmix(j << 32), &v), 1);
		ck_assert_uint_eq(v, j);
	}
	u64map_destroy(&m);
}
END_TEST

/* json_kv_double: exact enough to read back, null where JSON has no
 * number (NaN, infinities). */
START_TEST(test_json_double)
{
	char out[256];
	FILE *f = fmemopen(out, sizeof out, "w");
	struct json j;

	ck_assert_ptr_nonnull(f);
	json_init(&j, f, 0);
	json_obj_begin(&j);
	json_kv_double(&j, "a", 0.1);
	json_kv_double(&j, "b", -2.5);
	json_kv_double(&j, "c", INFINITY);
	json_kv_double(&j, "d", NAN);
	json_obj_end(&j);
	fclose(f);
	ck_assert_str_eq(out,
	    "{\"a\":0.10000000000000001,\"b\":-2.5,\"c\":null,\"d\":null}");
}
END_TEST

static const char *
size_str(uint64_t bytes)
{
	static char buf[32];

	return sv_fmt_size(buf, sizeof buf, bytes);
}

START_TEST(test_size_text)
{
	ck_assert_str_eq(size_str(0), "0 B");
	ck_assert_str_eq(size_str(1023), "1023 B");
	ck_assert_str_eq(size_str(1024), "1.0 KiB");
	/* 1.25 KiB: a tie, rounded up (printf's %.1f gives "1.2") */
	ck_assert_str_eq(size_str(1280), "1.3 KiB");
	ck_assert_str_eq(size_str(2304), "2.3 KiB");
	ck_assert_str_eq(size_str(1279), "1.2 KiB");
	ck_assert_str_eq(size_str(1536), "1.5 KiB");
	/* the last KiB value and the first that rounds to 1024.0 */
	ck_assert_str_eq(size_str(1048524), "1023.9 KiB");
	ck_assert_str_eq(size_str(1048525), "1.0 MiB");
	ck_assert_str_eq(size_str(20ull << 20), "20.0 MiB");
	ck_assert_str_eq(size_str((5ull << 30) + (1ull << 28)), "5.3 GiB");
	ck_assert_str_eq(size_str(1ull << 60), "1.0 EiB");
	ck_assert_str_eq(size_str(UINT64_MAX), "16.0 EiB");
}
END_TEST

/* A change keeps its sign with its number: padded as a whole, never
 * "-     277.0 MiB". */
START_TEST(test_size_delta)
{
	char b[32], line[32];

	ck_assert_str_eq(sv_fmt_size_delta(b, sizeof b, 300ull << 20,
	    23ull << 20), "-277.0 MiB");
	ck_assert_str_eq(sv_fmt_size_delta(b, sizeof b, 1ull << 30,
	    (1ull << 30) + (1ull << 28)), "+256.0 MiB");
	ck_assert_str_eq(sv_fmt_size_delta(b, sizeof b, 5, 5), "0 B");
	ck_assert_str_eq(sv_fmt_size_delta(b, sizeof b, UINT64_MAX, 0),
	    "-16.0 EiB");
	snprintf(line, sizeof line, "%12s", sv_fmt_size_delta(b, sizeof b,
	    300ull << 20, 23ull << 20));
	ck_assert_str_eq(line, "  -277.0 MiB");
}
END_TEST

/* The tenths of sv_size_tenths against the definition, in 128-bit
 * arithmetic: t is the nearest tenth of bytes / 1024^unit, ties up
 * (2 * 10 * bytes in [(2t - 1) d, (2t + 1) d)), and the unit is the first
 * whose t is below 10240. Returns what is wrong, or NULL. (No Check
 * assertion per value: each one costs a write to the test's pipe.) */
static const char *
tenths_wrong(uint64_t bytes)
{
	uint64_t t;
	int unit = sv_size_tenths(bytes, &t);
	unsigned __int128 d, x = (unsigned __int128)bytes * 20;

	if (bytes < 1024)
		return unit == 0 ? NULL : "bytes below 1024 not in B";
	if (unit < 1 || unit > 6)
		return "unit out of range";
	d = (unsigned __int128)1 << (10 * unit);
	if (x + d < (unsigned __int128)2 * t * d ||
	    x + d >= (unsigned __int128)(2 * t + 2) * d)
		return "not the nearest tenth (ties up)";
	if (t >= 10240 && unit < 6)
		return "rounds to 1024.0 or more";
	if (unit > 1 && (x + (d >> 10)) / (2 * (d >> 10)) < 10240)
		return "a smaller unit would do";
	return NULL;
}

static void
check_tenths(uint64_t bytes)
{
	const char *why = tenths_wrong(bytes);

	if (why != NULL)
		ck_abort_msg("%llu: %s", (unsigned long long)bytes, why);
}

START_TEST(test_size_tenths)
{
	uint64_t b, s = 0x9e3779b97f4a7c15ull;
	int i, u;

	for (b = 0; b < (4u << 20); b++)
		check_tenths(b);
	for (u = 1; u <= 6; u++) {
		uint64_t edge = (uint64_t)((1ull << (10 * u)) / 20 * 20479);

		for (b = edge - 2000; b < edge + 2000; b++)
			check_tenths(b);
	}
	for (i = 0; i < 1000000; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		check_tenths(s >> (s % 61));
	}
	check_tenths(UINT64_MAX);
}
END_TEST

START_TEST(test_count_text)
{
	char b[32], small[4];

	ck_assert_str_eq(sv_fmt_count(b, sizeof b, 0), "0");
	ck_assert_str_eq(sv_fmt_count(b, sizeof b, 999), "999");
	ck_assert_str_eq(sv_fmt_count(b, sizeof b, 1000), "1,000");
	ck_assert_str_eq(sv_fmt_count(b, sizeof b, 1204551), "1,204,551");
	ck_assert_str_eq(sv_fmt_count(b, sizeof b, UINT64_MAX),
	    "18,446,744,073,709,551,615");
	/* cut short, always terminated */
	ck_assert_str_eq(sv_fmt_count(small, sizeof small, 1204551), "1,2");
	ck_assert_str_eq(sv_fmt_count(small, 1, 5), "");
}
END_TEST

/* sv_count_le_i64 (on sv_partition) against a scan, on every prefix of a
 * sorted array with runs of equal values. */
START_TEST(test_search_count_le)
{
	static const int64_t a[] = {-5, -5, 0, 3, 3, 3, 7, 100, 100, 101};
	uint64_t n, want, i;
	int64_t x;

	for (n = 0; n <= sizeof a / sizeof a[0]; n++)
		for (x = -7; x <= 103; x++) {
			for (want = 0, i = 0; i < n; i++)
				want += a[i] <= x;
			ck_assert_uint_eq(sv_count_le_i64(a, n, x), want);
		}
}
END_TEST

START_TEST(test_span_ends_by)
{
	static const uint64_t v[] = {0, 1, 2, 4096, 0x7f0000000000ull,
	    UINT64_MAX / 2, UINT64_MAX - 4096, UINT64_MAX - 1, UINT64_MAX};
	size_t n = sizeof v / sizeof v[0], i, j, k;

	/* against the sum where it fits (a span that wraps ends nowhere) */
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			for (k = 0; k < n; k++) {
				int fits = v[j] <= UINT64_MAX - v[i];

				ck_assert_int_eq(sv_span_ends_by(v[i], v[j],
				    v[k]), fits && v[i] + v[j] <= v[k]);
			}
	/* the case the plain sum gets wrong: a span to the very top */
	ck_assert(!sv_span_ends_by(UINT64_MAX - 4095, 4096, 0x1000));
	ck_assert(sv_span_wraps(UINT64_MAX - 4095, 4096));
	ck_assert_uint_eq(sv_sat_add(UINT64_MAX - 1, 5), UINT64_MAX);
}
END_TEST

/* sv_xxh3 gives the library's XXH3_64bits, whatever code path it takes
 * (AVX2 where the CPU has it): every length up to 2 KiB, across XXH3's
 * size classes and its stripes, and a few long ones, at odd offsets. */
START_TEST(test_xxh3_same)
{
	size_t n = (1u << 20) + 77, len, off;
	uint8_t *b = malloc(n + 8);
	uint64_t x = 88172645463325252ull;

	ck_assert_ptr_nonnull(b);
	for (len = 0; len < n + 8; len++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[len] = (uint8_t)x;
	}
	for (len = 0; len <= 2048; len++)
		for (off = 0; off < 3; off++)
			ck_assert_uint_eq(sv_xxh3(b + off, len),
			    XXH3_64bits(b + off, len));
	ck_assert_uint_eq(sv_xxh3(b, n), XXH3_64bits(b, n));
	ck_assert_uint_eq(sv_xxh3(b + 5, n), XXH3_64bits(b + 5, n));
	ck_assert_uint_eq(sv_xxh3(b, 65536), XXH3_64bits(b, 65536));
	/* in pieces of every size from 1 to 3,000 bytes, and of one byte
	 * then the rest: the digest of the whole at each length */
	for (len = 1; len <= 3000; len += 37) {
		struct sv_xxh3_stream *st = sv_xxh3_stream_new();

		ck_assert_ptr_nonnull(st);
		for (off = 0; off < n; off += len)
			sv_xxh3_stream_update(st, b + off,
			    n - off < len ? n - off : len);
		ck_assert_uint_eq(sv_xxh3_stream_digest(st),
		    XXH3_64bits(b, n));
		sv_xxh3_stream_free(st);
	}
	for (len = 0; len <= 1100; len += 11) {
		struct sv_xxh3_stream *st = sv_xxh3_stream_new();

		if (len > 0) {
			sv_xxh3_stream_update(st, b, 1);
			sv_xxh3_stream_update(st, b + 1, len - 1);
		}
		ck_assert_uint_eq(sv_xxh3_stream_digest(st),
		    XXH3_64bits(b, len));
		sv_xxh3_stream_free(st);
	}
	free(b);
}
END_TEST

static void *
read_mask(void *arg)
{
	pthread_sigmask(SIG_BLOCK, NULL, (sigset_t *)arg);
	return NULL;
}

/* A worker is born with the asynchronous signals blocked and the
 * synchronous ones open, and its creator's mask is left as it was. */
START_TEST(test_thread_signals)
{
	static const int async[] = {SIGINT, SIGTERM, SIGWINCH, SIGHUP,
	    SIGCHLD, SIGUSR1, SIGPIPE, SIGALRM};
	static const int sync[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
	    SIGTRAP, SIGSYS};
	sigset_t in_thread, before, after, set;
	pthread_t th;
	size_t k;

	/* the creator has SIGUSR1 and SIGINT open, SIGUSR2 blocked */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	sigemptyset(&in_thread);
	ck_assert_int_eq(sv_thread_start(&th, read_mask, &in_thread), 0);
	pthread_join(th, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	for (k = 0; k < sizeof async / sizeof async[0]; k++)
		ck_assert_msg(sigismember(&in_thread, async[k]) == 1,
		    "signal %d open in the worker", async[k]);
	for (k = 0; k < sizeof sync / sizeof sync[0]; k++)
		ck_assert_msg(sigismember(&in_thread, sync[k]) == 0,
		    "signal %d blocked in the worker", sync[k]);
	for (k = 1; k < 32; k++)
		ck_assert_int_eq(sigismember(&after, (int)k),
		    sigismember(&before, (int)k));
	ck_assert_int_eq(sigismember(&after, SIGUSR1), 0);
	ck_assert_int_eq(sigismember(&after, SIGUSR2), 1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
END_TEST

#ifdef __linux__
struct prio {
	int before, after;
};

static void *
yield_cores(void *arg)
{
	struct prio *p = arg;

	p->before = getpriority(PRIO_PROCESS, 0);
	sv_thread_yield_cores(5);
	p->after = getpriority(PRIO_PROCESS, 0);
	return NULL;
}

/* A thread that yields the cores runs 5 nice steps lower; the thread
 * that started it, and one it starts after, keep their priority. */
START_TEST(test_thread_yield_cores)
{
	int mine = getpriority(PRIO_PROCESS, 0);
	struct prio p, q;
	pthread_t th;

	ck_assert_int_eq(sv_thread_start(&th, yield_cores, &p), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(p.before, mine);
	ck_assert_int_eq(p.after, mine + 5 < 19 ? mine + 5 : 19);
	ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), mine);
	ck_assert_int_eq(sv_thread_start(&th, yield_cores, &q), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(q.before, mine);
}
END_TEST
#endif

/* A temporary file of len bytes of a pattern (mul), mapped into m and
 * unlinked; returns its bytes (the caller frees them). */
static uint8_t *
map_pattern(struct mapfile *m, size_t len, unsigned mul)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	struct sv_error err;
	uint8_t *buf = malloc(len);
	size_t i;
	int fd;

	ck_assert_ptr_nonnull(buf);
	snprintf(path, sizeof path, "%s/check_util.XXXXXX",
	    dir != NULL && *dir != '\0' ? dir : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * mul + (i >> 12));
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	ck_assert_int_eq(mapfile_open(m, path, &err), 0);
	unlink(path);
	return buf;
}

/* A sequential reader's mapping: pages go back only in steps of the
 * size asked, pages are mapped ahead only when half of what was mapped
 * ahead has been read, and the bytes read are the file's throughout. */
/* A tape reads back what was written, at any offset and across the
 * write buffer's edge, whether it stayed in memory (limit 0) or went to
 * a file (past 1,000 bytes; writes of 1 byte to 3 MB, so the buffer is
 * flushed, bypassed and straddled); a read past the end fails. */
START_TEST(test_tape_roundtrip)
{
	static const size_t lens[] = {1, 999, 7, 3u << 20, 5, 65536, 1u << 20};
	size_t total = 0, i, k, limit;
	uint8_t *want, *got;

	for (i = 0; i < sizeof lens / sizeof lens[0]; i++)
		total += lens[i];
	want = malloc(total);
	got = malloc(total);
	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	for (i = 0; i < total; i++)
		want[i] = (uint8_t)(i * 2654435761u >> 13);
	for (limit = 0; limit <= 1000; limit += 1000) {
		struct tape t;
		size_t off = 0;
		const size_t at[][2] = {{0, total}, {1, 2}, {998, 10},
		    {total - 3, 3}, {(1u << 20) - 5, 11}, {4000000, 70000}};

		tape_init(&t, limit);
		for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
			tape_write(&t, want + off, lens[i]);
			off += lens[i];
			ck_assert_uint_eq(tape_len(&t), off);
		}
		ck_assert_int_eq(tape_in_file(&t), limit > 0);
		for (k = 0; k < sizeof at / sizeof at[0]; k++) {
			memset(got, 0, total);
			ck_assert_int_eq(tape_read(&t, at[k][0], got,
			    at[k][1]), 0);
			ck_assert_int_eq(memcmp(got, want + at[k][0],
			    at[k][1]), 0);
		}
		ck_assert_int_eq(t.err, 0);
		ck_assert_int_ne(tape_read(&t, total - 1, got, 2), 0);
		tape_free(&t);
	}
	free(want);
	free(got);
}
END_TEST

/* A tape that takes others over reads back their bytes after its own, in
 * order, at any offset across the parts' edges: parts in memory and in
 * files (with a tail not yet flushed), a taken tape that had taken one
 * itself, an empty one, and bytes written after a take. The taken tapes
 * are left empty and go on being usable. */
START_TEST(test_tape_take)
{
	enum { TOTAL = 5000000 };
	uint8_t *want = malloc(TOTAL), *got = malloc(TOTAL);
	struct tape a, b, c, d, e;
	uint64_t off = 0, k;
	size_t i;

	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	for (i = 0; i < TOTAL; i++)
		want[i] = (uint8_t)(i * 2654435761u >> 11);
	tape_init(&a, 1000);    /* a file */
	tape_init(&b, 0);       /* memory */
	tape_init(&c, 100);     /* a file, then takes d */
	tape_init(&d, 0);
	tape_init(&e, 0);       /* empty */
	tape_write(&a, want, 1500000);
	tape_write(&b, want + 1500000, 777);
	tape_write(&c, want + 1500777, 2000000);
	tape_write(&d, want + 3500777, 99);
	tape_take(&c, &d);
	ck_assert_uint_eq(tape_len(&d), 0);
	tape_take(&a, &b);
	tape_take(&a, &e);
	tape_take(&a, &c);
	off = 3500876;
	tape_write(&a, want + off, TOTAL - 1 - off);
	off = TOTAL - 1;
	ck_assert_uint_eq(tape_len(&a), off);
	ck_assert_uint_eq(tape_len(&b), 0);
	ck_assert_uint_eq(tape_len(&c), 0);
	ck_assert_int_eq(tape_in_file(&a), 1);
	ck_assert_int_eq(tape_read(&a, 0, got, (size_t)off), 0);
	ck_assert_int_eq(memcmp(got, want, (size_t)off), 0);
	for (k = 0; k + 4096 < off; k += 99991) {
		memset(got, 0, 4096);
		ck_assert_int_eq(tape_read(&a, k, got, 4096), 0);
		ck_assert_int_eq(memcmp(got, want + k, 4096), 0);
	}
	/* the edges: 1500000, 1500777, 3500777, 3500876 */
	ck_assert_int_eq(tape_read(&a, 1499999, got, 2), 0);
	ck_assert_int_eq(memcmp(got, want + 1499999, 2), 0);
	ck_assert_int_eq(tape_read(&a, 1500776, got, 2000102), 0);
	ck_assert_int_eq(memcmp(got, want + 1500776, 2000102), 0);
	ck_assert_int_ne(tape_read(&a, off - 1, got, 2), 0);
	/* a taken tape is empty, not spent */
	tape_write(&b, want, 10);
	ck_assert_int_eq(tape_read(&b, 0, got, 10), 0);
	ck_assert_int_eq(memcmp(got, want, 10), 0);
	tape_free(&a);
	tape_free(&b);
	tape_free(&c);
	tape_free(&d);
	tape_free(&e);
	free(want);
	free(got);
}
END_TEST

/* The reader of test_fdio_pipe's pipe: slow, in small reads, with
 * SIGALRM blocked so that the writer is the one interrupted. */
struct slow_reader {
	int fd;
	uint8_t *got;
	size_t n, len;
};

static void *
slow_read(void *arg)
{
	struct slow_reader *r = arg;
	sigset_t set;
	ssize_t k;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	while (r->n < r->len &&
	    (k = read(r->fd, r->got + r->n, 4096)) != 0) {
		if (k > 0)
			r->n += (size_t)k;
		if (r->n % 65536 < 4096)
			usleep(5000); /* the pipe fills: the write blocks */
	}
	return NULL;
}

static void
on_alarm(int sig)
{
	(void)sig;
}

/* sv_write_all() into a pipe that a slow reader drains, with a timer
 * interrupting the blocked write() every millisecond (no SA_RESTART):
 * the interrupted and the short writes go on, and every byte arrives
 * in order. */
START_TEST(test_fdio_pipe)
{
	const size_t len = 4u << 20;
	struct slow_reader r = {-1, NULL, 0, len};
	struct sigaction sa, old;
	struct itimerval it = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
	uint8_t *want = malloc(len);
	pthread_t th;
	int p[2];
	size_t i;

	ck_assert_ptr_nonnull(want);
	r.got = calloc(1, len);
	ck_assert_ptr_nonnull(r.got);
	for (i = 0; i < len; i++)
		want[i] = (uint8_t)(i * 2654435761u >> 13);
	ck_assert_int_eq(pipe(p), 0);
	r.fd = p[0];
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, &old), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, slow_read, &r), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	ck_assert_int_eq(sv_write_all(p[1], want, len), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	close(p[1]);
	pthread_join(th, NULL);
	sigaction(SIGALRM, &old, NULL);
	close(p[0]);
	ck_assert_uint_eq(r.n, len);
	ck_assert_int_eq(memcmp(r.got, want, len), 0);
	free(r.got);
	free(want);
}
END_TEST

/* sv_pread_all() reads back what sv_write_all() wrote, at any offset; a
 * read past the end is EIO, on a pipe ESPIPE, a write to a descriptor
 * open for reading EBADF. */
START_TEST(test_fdio_file)
{
	char path[] = "/tmp/snapview-fdio-XXXXXX";
	const size_t len = (3u << 20) + 5;
	uint8_t *want = malloc(len), *got = malloc(len);
	int fd = mkstemp(path), p[2], ro;
	size_t i;

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	for (i = 0; i < len; i++)
		want[i] = (uint8_t)(i * 40503u >> 7);
	ck_assert_int_eq(sv_write_all(fd, want, len), 0);
	ck_assert_int_eq(sv_pread_all(fd, got, len, 0), 0);
	ck_assert_int_eq(memcmp(got, want, len), 0);
	ck_assert_int_eq(sv_pread_all(fd, got, 10, len - 10), 0);
	ck_assert_int_eq(memcmp(got, want + len - 10, 10), 0);
	ck_assert_int_eq(sv_pread_all(fd, got, 0, len + 5), 0);
	ck_assert_int_eq(sv_pread_all(fd, got, 11, len - 10), EIO);
	ro = open(path, O_RDONLY);
	ck_assert_int_ge(ro, 0);
	ck_assert_int_eq(sv_write_all(ro, want, 1), EBADF);
	close(ro);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(sv_pread_all(p[0], got, 1, 0), ESPIPE);
	close(p[0]);
	close(p[1]);
	close(fd);
	unlink(path);
	free(want);
	free(got);
}
END_TEST

START_TEST(test_mapfile_steps)
{
	const size_t mb = 1u << 20, len = 24 * mb;
	struct mapfile m;
	uint8_t *buf = map_pattern(&m, len, 7);
	size_t i, bad = 0;

	mapfile_release(&m, 10 * mb, 8 * mb, 16 * mb); /* 2 MiB < step */
	ck_assert_uint_eq(m.released, 0);
	mapfile_release(&m, len, 4 * mb, 16 * mb);
	ck_assert_uint_eq(m.released, 20 * mb);
	mapfile_release(&m, len, 2 * mb, 16 * mb);     /* 2 MiB more */
	ck_assert_uint_eq(m.released, 20 * mb);
	mapfile_release(&m, len, 2 * mb, 0);
	ck_assert_uint_eq(m.released, 22 * mb);

	mapfile_populate(&m, 0, 4 * mb);
	ck_assert_uint_eq(m.populated, 4 * mb);
	mapfile_populate(&m, 1 * mb, 4 * mb);  /* 3 MiB still ahead */
	ck_assert_uint_eq(m.populated, 4 * mb);
	mapfile_populate(&m, 3 * mb, 4 * mb);  /* 1 MiB ahead: on */
	ck_assert_uint_eq(m.populated, 7 * mb);
	mapfile_populate(&m, 22 * mb, 4 * mb); /* up to the end only */
	ck_assert_uint_eq(m.populated, len);
	mapfile_populate(&m, len, 4 * mb);
	ck_assert_uint_eq(m.populated, len);

	for (i = 0; i < len; i++)
		bad += m.data[i] != buf[i];
	ck_assert_uint_eq(bad, 0);
	mapfile_close(&m);
	free(buf);
}
END_TEST

/* The follower's thread makes the calls the reader would: after the
 * join, what the last position asks is done, and the bytes read are the
 * file's; closing a mapping joins a follower left running. */
START_TEST(test_mapfile_follow)
{
	const size_t mb = 1u << 20, len = 24 * mb;
	struct mapfile m;
	uint8_t *buf = map_pattern(&m, len, 13);
	size_t i, bad = 0;

	mapfile_follow_start(&m, 2 * mb, 0, 4 * mb);
	ck_assert_ptr_nonnull(m.follow);
	for (i = 0; i < 20 * mb; i += 4096) {
		bad += m.data[i] != buf[i];
		mapfile_follow(&m, i);
	}
	mapfile_follow(&m, 20 * mb);
	mapfile_follow_stop(&m);
	ck_assert_ptr_null(m.follow);
	ck_assert_uint_eq(m.released, 18 * mb);
	/* at least half of ahead mapped past the last position (which
	 * earlier positions did depends on how the thread was woken) */
	ck_assert_uint_ge(m.populated, 22 * mb);
	ck_assert_uint_le(m.populated, len);
	for (i = 0; i < len; i++)
		bad += m.data[i] != buf[i];
	ck_assert_uint_eq(bad, 0);

	mapfile_follow_start(&m, 2 * mb, 0, 4 * mb);
	mapfile_follow(&m, 8 * mb);
	mapfile_close(&m);
	ck_assert_ptr_null(m.follow);
	ck_assert_ptr_null(m.data);
	free(buf);
}
END_TEST

/* However late the follower's thread runs, the pages below a position
 * past keep and a step and a half are given back when mapfile_follow()
 * returns: by the follower, or by the reader. */
START_TEST(test_mapfile_follow_late)
{
	const size_t mb = 1u << 20, len = 40 * mb, keep = 2 * mb;
	const size_t step = 4 * mb, pg = (size_t)sysconf(_SC_PAGESIZE);
	struct mapfile m;
	uint8_t *buf = map_pattern(&m, len, 17);
	size_t i, done, bad = 0, late = 0;

	mapfile_follow_start(&m, keep, step, 4 * mb);
	for (i = 0; i < len; i += 4096) {
		bad += m.data[i] != buf[i];
		mapfile_follow(&m, i);
		done = atomic_load(&m.given_back);
		if (done < m.reader_back)
			done = m.reader_back;
		late += i > keep + step + step / 2 + pg &&
		    done < i - keep - step - step / 2 - pg;
	}
	ck_assert_uint_eq(late, 0);
	mapfile_follow_stop(&m);
	ck_assert_uint_ge(m.released, len - keep - step - pg);
	for (i = 0; i < len; i++)
		bad += m.data[i] != buf[i];
	ck_assert_uint_eq(bad, 0);
	mapfile_close(&m);
	free(buf);
}
END_TEST

static Suite *
util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("escape");
	TCase *ta = tcase_create("avl");
	TCase *tu = tcase_create("units");
	TCase *th = tcase_create("u64map");

	/* no wall-clock limit (Check's default is 4 s): machines are shared */
	tcase_set_timeout(tc, 0);
	tcase_set_timeout(ta, 0);
	tcase_set_timeout(tu, 0);
	tcase_set_timeout(th, 0);
	tcase_add_test(tc, test_escape_controls);
	tcase_add_test(tc, test_escape_backslash);
	tcase_add_test(tc, test_escape_fputs_backslash);
	tcase_add_test(tc, test_utf8_decode);
	tcase_add_test(tc, test_escape_utf8);
	tcase_add_test(tc, test_escape_invisible);
	tcase_add_test(tc, test_escape_truncation);
	tcase_add_test(tc, test_escape_cut_whole);
	tcase_add_test(tc, test_utf8_fit);
	tcase_add_test(tc, test_json_string);
	tcase_add_test(tc, test_json_double);
	suite_add_tcase(s, tc);
	tcase_add_test(tu, test_size_text);
	tcase_add_test(tu, test_size_delta);
	tcase_add_test(tu, test_size_tenths);
	tcase_add_test(tu, test_count_text);
	tcase_add_test(tu, test_search_count_le);
	tcase_add_test(tu, test_span_ends_by);
	suite_add_tcase(s, tu);
	tcase_add_test(ta, test_avl_random);
	tcase_add_test(ta, test_avl_descending);
	tcase_add_test(ta, test_avl_insert_after);
	tcase_add_test(ta, test_avl_load);
	suite_add_tcase(s, ta);
	tcase_add_test(th, test_u64map_ops);
	tcase_add_test(th, test_u64map_flood);
	tcase_add_test(tu, test_xxh3_same);
	tcase_add_test(tu, test_thread_signals);
#ifdef __linux__
	tcase_add_test(tu, test_thread_yield_cores);
#endif
	tcase_add_test(tu, test_tape_roundtrip);
	tcase_add_test(tu, test_tape_take);
	tcase_add_test(tu, test_fdio_pipe);
	tcase_add_test(tu, test_fdio_file);
	tcase_add_test(tu, test_mapfile_steps);
	tcase_add_test(tu, test_mapfile_follow);
	tcase_add_test(tu, test_mapfile_follow_late);
	suite_add_tcase(s, th);
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
