/*
 * Unit tests of the streaming pickle VM: every opcode it executes, memo
 * sharing, the take() protocol (keep, drop, replace by id), refused
 * opcodes and limits.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pickle/pkl_ops.h"
#include "pickle/pkl_reader.h"
#include "util/mapfile.h"
#include "util/xalloc.h"

#include "pkl_fix.h"

/* A sink that keeps everything and remembers the root's value; frames
 * classified 7 are replaced by id 1000+n, class 8 dicts are dropped;
 * class 9 ("bigid") and 10 ("clsid") are replaced by ids that do not fit
 * a memo slot: 2^24+n of class 3, and n of class 40. */
struct rec {
	struct pkl_value root;
	int took_root;
	int n_replaced, n_dropped;
	char root_items[4096];
};

static uint8_t
rec_classify(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *key, uint64_t index, uint8_t kind)
{
	size_t len;
	const char *k;

	(void)ctx;
	(void)index;
	(void)kind;
	if (key != NULL) {
		k = pkl_str(r, key, &len);
		if (len == 6 && memcmp(k, "intern", 6) == 0)
			return 7;
		if (len == 4 && memcmp(k, "drop", 4) == 0)
			return 8;
		if (len == 5 && memcmp(k, "bigid", 5) == 0)
			return 9;
		if (len == 5 && memcmp(k, "clsid", 5) == 0)
			return 10;
	}
	return parent_cls == 0 ? 1 : 2;
}

/* strcat that never overflows buf */

static int
rec_take(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *parent, const struct pkl_value *key,
    uint64_t index, const struct pkl_value *child, uint64_t *id,
    uint8_t *id_cls, struct sv_error *err)
{
	struct rec *rc = ctx;

	(void)parent_cls;
	(void)key;
	(void)index;
	(void)err;
	if (parent == NULL) {
		rc->took_root = 1;
		rc->root = *child;
		rc->root_items[0] = '\0';
		describe(r, child, rc->root_items, sizeof rc->root_items);
		return PKL_DROP;
	}
	if (child->cls == 7) {
		*id = 1000 + (uint64_t)rc->n_replaced++;
		*id_cls = 3;
		return PKL_ID_REPLACE;
	}
	if (child->cls == 8) {
		rc->n_dropped++;
		return PKL_DROP;
	}
	if (child->cls == 9 || child->cls == 10) {
		*id = (child->cls == 9 ? 1u << 24 : 0) +
		    (uint64_t)rc->n_replaced++;
		*id_cls = child->cls == 9 ? 3 : 40;
		return PKL_ID_REPLACE;
	}
	return PKL_KEEP;
}

static const struct pkl_sink rec_sink = {rec_classify, rec_take, NULL,
    NULL, 0, NULL, 0};

/* Runs bytes; on success returns the root's description. */
static int
run(const void *buf, size_t len, struct rec *rc, struct sv_error *err)
{
	memset(rc, 0, sizeof *rc);
	sv_error_clear(err);
	return pkl_run(buf, len, &rec_sink, rc, NULL, err);
}

/* run(), and the reader's counters after it. */
static int
run_stats(const void *buf, size_t len, struct rec *rc, struct sv_error *err,
    struct pkl_stats *st)
{
	struct pkl_reader *keep = NULL;
	int r;

	memset(rc, 0, sizeof *rc);
	memset(st, 0, sizeof *st);
	sv_error_clear(err);
	r = pkl_run(buf, len, &rec_sink, rc, &keep, err);
	if (keep != NULL)
		pkl_get_stats(keep, st);
	pkl_reader_free(keep);
	return r;
}

#define RUN_OK(bytes, want)                                                    \
	do {                                                                   \
		struct rec rc_;                                                \
		struct sv_error e_;                                            \
		int r_ = run(bytes, sizeof(bytes) - 1, &rc_, &e_);             \
		ck_assert_msg(r_ == 0, "failed: %s", e_.msg);                  \
		ck_assert_str_eq(rc_.root_items, want);                        \
	} while (0)

#define RUN_FAIL(bytes, want_code, frag)                                       \
	do {                                                                   \
		struct rec rc_;                                                \
		struct sv_error e_;                                            \
		int r_ = run(bytes, sizeof(bytes) - 1, &rc_, &e_);             \
		ck_assert_int_eq(r_, -1);                                      \
		ck_assert_int_eq(e_.code, want_code);                          \
		ck_assert_msg(strstr(e_.msg, frag) != NULL,                    \
		    "msg: %s", e_.msg);                                        \
	} while (0)

START_TEST(test_pickle_ints)
{
	/* BININT1 7, BININT2 513, BININT -1, LONG1 empty = 0 */
	RUN_OK("\x80\x04(K\x07M\x01\x02J\xff\xff\xff\xff\x8a\x00l.",
	    "[7,513,-1,0]");
	/* LONG1 2^63 (9 bytes), 2^64-1 (9 bytes), -2^63 (8 bytes) */
	RUN_OK("\x80\x04(\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00"
	       "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"
	       "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80l.",
	    "[9223372036854775808,18446744073709551615,-9223372036854775808]");
	/* LONG4 with padding, and a 2^72 that does not fit */
	RUN_OK("\x80\x04(\x8b\x03\x00\x00\x00\x05\x00\x00"
	       "\x8a\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
	       "\x8a\x02\xff\x7fl.",
	    "[5,big,32767]");
	/* a redundant sign byte: -1 written on 3 bytes */
	RUN_OK("\x80\x04(\x8a\x03\xff\xff\xffl.", "[-1]");
	/* 6 and 7 bytes (an address, a time in us), negative on 5 and 1,
	 * 127 on 1 with its sign byte, each with 8 bytes after it (read at
	 * once) and the last near the end (read byte by byte) */
	RUN_OK("\x80\x04(\x8a\x06\x00\x00\x1a\x22\x3a\x7f"
	       "\x8a\x07\x0e\xe4\x9a\x42\x4f\x1a\x06"
	       "\x8a\x05\x00\x00\x00\x00\x80"
	       "\x8a\x01\xfe\x8a\x02\x7f\x00NNNNNNNN"
	       "\x8a\x06\x00\x00\x1a\x22\x3a\x7fl.",
	    "[139887656960000,1717777582449678,-549755813888,-2,127,"
	    "None,None,None,None,None,None,None,None,139887656960000]");
}
END_TEST

START_TEST(test_pickle_scalars)
{
	/* BINFLOAT is big-endian: 1.5 = 3f f8 00.. */
	RUN_OK("\x80\x04(G\x3f\xf8\x00\x00\x00\x00\x00\x00N\x88\x89l.",
	    "[1.5,None,True,False]");
	RUN_OK("\x80\x04(\x8c\x02hiX\x03\x00\x00\x00" "abc"
	       "\x8d\x01\x00\x00\x00\x00\x00\x00\x00zC\x01\x01l.",
	    "['hi','abc','z',b'\001']");
	RUN_OK("\x80\x04(B\x02\x00\x00\x00" "ab"
	       "\x8e\x01\x00\x00\x00\x00\x00\x00\x00" "c"
	       "\x96\x00\x00\x00\x00\x00\x00\x00\x00"
	       "U\x01" "dT\x01\x00\x00\x00" "el.",
	    "[b'ab',b'c',b'','d','e']");
}
END_TEST

START_TEST(test_pickle_containers)
{
	RUN_OK("\x80\x04()K\x01\x85K\x01K\x02\x86K\x01K\x02K\x03\x87"
	       "(K\x01K\x02K\x03K\x04tl.",
	    "[(),(1),(1,2),(1,2,3),(1,2,3,4)]");
	/* single SETITEM and APPEND; DICT and LIST from a mark */
	RUN_OK("\x80\x04}\x8c\x01" "aK\x01s.", "{'a':1}");
	RUN_OK("\x80\x04]K\x01" "a.", "[1]");
	RUN_OK("\x80\x04(\x8c\x01" "aK\x01\x8c\x01" "b]d.", "{'a':1,'b':[]}");
	/* sets */
	RUN_OK("\x80\x04\x8f(K\x01K\x02\x90.", "{1,2}");
	RUN_OK("\x80\x04(K\x03\x91.", "{3}");
	/* POP, POP_MARK, DUP, FRAME */
	RUN_OK("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00(K\x01K\x09" "0"
	       "(K\x02K\x03" "1" "2l.",
	    "[1,1]");
}
END_TEST

START_TEST(test_pickle_memo)
{
	/* MEMOIZE / BINGET share one list; BINPUT / LONG_BINPUT /
	 * LONG_BINGET */
	RUN_OK("\x80\x04(]\x94K\x01" "ah\x00l.", "[[1],[1]]");
	RUN_OK("\x80\x02(\x8c\x01xq\x05\x8c\x01yr\x00\x01\x00\x00"
	       "h\x05j\x00\x01\x00\x00l.",
	    "['x','y','x','y']");
	/* a memo slot overwritten by a later BINPUT */
	RUN_OK("\x80\x02(K\x01q\x00K\x02q\x00h\x00l.", "[1,2,2]");
	RUN_FAIL("\x80\x04(h\x03l.", SV_ERR_FORMAT, "not set");
	RUN_FAIL("\x80\x04K\x01r\xf0\xff\xff\xff.", SV_ERR_LIMIT, "too large");
	/* slots skipped by a BINPUT stay unset, below and above the top */
	RUN_FAIL("\x80\x02(K\x01q\x05h\x02l.", SV_ERR_FORMAT, "not set");
	RUN_FAIL("\x80\x02(K\x01r\x00\x04\x00\x00j\xff\x03\x00\x00l.",
	    SV_ERR_FORMAT, "not set");
	RUN_FAIL("\x80\x02(K\x01q\x00h\x00h\x06l.", SV_ERR_FORMAT, "not set");
	/* a run of fetches mixing widths, strings and a container slot */
	RUN_OK("\x80\x02(]q\x00\x8c\x01xq\x01h\x01h\x00h\x01j\x01\x00\x00\x00"
	       "j\x00\x00\x00\x00l.",
	    "[[],'x','x',[],'x','x',[]]");
	/* a run cut by the end of the file, in either width */
	RUN_FAIL("\x80\x02(K\x01q\x00h\x00h", SV_ERR_FORMAT,
	    "cut off (the dump did not finish?)");
	RUN_FAIL("\x80\x02(K\x01q\x00h\x00j\x00\x00", SV_ERR_FORMAT,
	    "cut off (the dump did not finish?)");
	/* a container as a dict key among scalar values, freed with it */
	RUN_OK("\x80\x04(}(K\x01\x85K\x02K\x03K\x04u0K\x05l.", "[5]");
}
END_TEST

/* A memo bigger than the part kept on the heap moves to a temporary file
 * and its old pages are given back (util/spill.h): a slot far back, and
 * the last one, still read right, and a slot far back written again. 5M
 * slots (20 MB of memo) through a 35 MB pickle, read far behind the
 * parse. */
START_TEST(test_pickle_memo_spilled)
{
	size_t n = 5u << 20, i, len = 0;
	struct pkl_stats st;
	uint8_t *b = xmalloc(n * 7 + 64);
	struct rec rc;
	struct sv_error err;
	char want[64];

	b[len++] = 0x80;
	b[len++] = 4;
	b[len++] = 0x8c; /* SHORT_BINUNICODE 'x', MEMOIZE: slot 0 */
	b[len++] = 1;
	b[len++] = 'x';
	b[len++] = 0x94;
	b[len++] = '0';
	for (i = 1; i < n; i++) {
		b[len++] = 'J'; /* BININT i, MEMOIZE: slot i, POP */
		b[len++] = (uint8_t)i;
		b[len++] = (uint8_t)(i >> 8);
		b[len++] = (uint8_t)(i >> 16);
		b[len++] = (uint8_t)(i >> 24);
		b[len++] = 0x94;
		b[len++] = '0';
	}
	b[len++] = '(';
	b[len++] = 'h';  /* BINGET 0 */
	b[len++] = 0;
	b[len++] = 'j';  /* LONG_BINGET n - 1 */
	b[len++] = (uint8_t)(n - 1);
	b[len++] = (uint8_t)((n - 1) >> 8);
	b[len++] = (uint8_t)((n - 1) >> 16);
	b[len++] = (uint8_t)((n - 1) >> 24);
	b[len++] = 'j';  /* LONG_BINGET 12345 */
	b[len++] = 0x39;
	b[len++] = 0x30;
	b[len++] = 0;
	b[len++] = 0;
	/* BININT1 7, LONG_BINPUT 12345: a store into a slot given back,
	 * then LONG_BINGET 12345 reads it */
	b[len++] = 'K';
	b[len++] = 7;
	b[len++] = 'r';
	memcpy(b + len, "\x39\x30\0\0", 4);
	len += 4;
	b[len++] = 'j';
	memcpy(b + len, "\x39\x30\0\0", 4);
	len += 4;
	b[len++] = 'l';
	b[len++] = '.';
	ck_assert_int_eq(run_stats(b, len, &rc, &err, &st), 0);
	snprintf(want, sizeof want, "['x',%zu,12345,7,7]", n - 1);
	ck_assert_str_eq(rc.root_items, want);
	ck_assert_uint_eq(st.memo_spilled, 1);
	/* no temporary file to be had: the memo stays on the heap */
	{
		char *old = getenv("TMPDIR") != NULL ?
		    xstrdup(getenv("TMPDIR")) : NULL;

		setenv("TMPDIR", "/nonexistent-snapview-dir", 1);
		ck_assert_int_eq(run_stats(b, len, &rc, &err, &st), 0);
		ck_assert_str_eq(rc.root_items, want);
		ck_assert_uint_eq(st.memo_spilled, 0);
		if (old != NULL)
			setenv("TMPDIR", old, 1);
		else
			unsetenv("TMPDIR");
		free(old);
	}
	free(b);
}
END_TEST

/* A pickle under construction, for the memo's encodings. */

/* Values on both sides of every limit of a 4-byte memo slot come back
 * from the memo as they went in: strings of 255 and 256 bytes, a string
 * below its page's base and one more than 2 MiB past it, ints at +-2^26,
 * bools, None, a float, and ids too wide or of a class too high. */
START_TEST(test_pickle_memo_compact)
{
	struct pb p = {NULL, 0, 0};
	struct rec rc;
	struct sv_error err;
	struct pkl_stats st;
	char *want = xmalloc(4096), a255[256], a256[257];
	uint32_t i;

	memset(a255, 'a', 255);
	a255[255] = '\0';
	memset(a256, 'b', 256);
	a256[256] = '\0';
	PB_LIT(&p, "\x80\x04");
	pb_str(&p, 255, 'a');
	pb_put(&p, 0);
	pb_str(&p, 256, 'b');
	pb_put(&p, 1);
	pb_int(&p, (1 << 26) - 1);
	pb_put(&p, 2);
	pb_int(&p, 1 << 26);
	pb_put(&p, 3);
	pb_int(&p, -(1 << 26));
	pb_put(&p, 4);
	pb_int(&p, -(1 << 26) - 1);
	pb_put(&p, 5);
	PB_LIT(&p, "\x88"); /* NEWTRUE */
	pb_put(&p, 6);
	PB_LIT(&p, "\x89"); /* NEWFALSE */
	pb_put(&p, 7);
	PB_LIT(&p, "N");
	pb_put(&p, 8);
	PB_LIT(&p, "G\x3f\xf8\0\0\0\0\0\0"); /* BINFLOAT 1.5 */
	pb_put(&p, 9);
	/* page 1 gets its base from a late string; an earlier string put
	 * there lies below it */
	pb_str(&p, 4, 'l');
	pb_put(&p, 1024);
	pb_get(&p, 0);
	pb_put(&p, 1025);
	/* 3 MiB on: a new string in page 0 lies too far past its base */
	pb_str(&p, 3u << 20, 'p');
	pb_byte(&p, '0');
	pb_str(&p, 3, 'z');
	pb_put(&p, 10);
	/* a dict (boxed) whose lists become ids that need a box, one too
	 * wide, one of a class too high */
	PB_LIT(&p, "}r\x0b\0\0\0(\x8c\x05" "bigid]r\x0c\0\0\0K\x01" "a"
	    "\x8c\x05" "clsid]r\x0d\0\0\0K\x02" "au0");
	pb_byte(&p, '(');
	for (i = 0; i <= 13; i++)
		pb_get(&p, i);
	pb_get(&p, 1024);
	pb_get(&p, 1025);
	PB_LIT(&p, "l.");
	ck_assert_int_eq(run_stats(p.b, p.n, &rc, &err, &st), 0);
	snprintf(want, 4096, "['%s','%s',%d,%d,%d,%d,True,False,None,1.5,'zzz',"
	    "{'bigid':#%u,'clsid':#40:1},#%u,#40:1,'llll','%s']", a255, a256,
	    (1 << 26) - 1, 1 << 26, -(1 << 26), -(1 << 26) - 1, 1u << 24,
	    1u << 24, a255);
	ck_assert_str_eq(rc.root_items, want);
	/* boxed: the 256-byte string, 2^26, -2^26-1, the float, the far
	 * string, the dict, its two ids (in the boxes their lists had), the
	 * string below its base */
	ck_assert_uint_eq(st.memo_boxes, 9);
	free(p.b);
	free(want);
}
END_TEST

/* A box is reused once its slot lets go of it: ten thousand memoized
 * dicts, each dropped by the sink, use one. */
START_TEST(test_pickle_memo_boxes_reused)
{
	struct pb p = {NULL, 0, 0};
	struct rec rc;
	struct sv_error err;
	struct pkl_stats st;
	int i;

	PB_LIT(&p, "\x80\x04}");
	for (i = 0; i < 10000; i++)
		PB_LIT(&p, "(\x8c\x04" "drop}\x94u");
	pb_byte(&p, '.');
	ck_assert_int_eq(run_stats(p.b, p.n, &rc, &err, &st), 0);
	ck_assert_int_eq(rc.n_dropped, 10000);
	ck_assert_uint_eq(st.memo_slots, 10000);
	ck_assert_uint_le(st.memo_boxes, 1);
	/* and a reference to one of them is still an error */
	p.n--;
	PB_LIT(&p, "(\x8c\x05" "againj\x10\x27\0\0u.");
	ck_assert_int_eq(run_stats(p.b, p.n, &rc, &err, &st), -1);
	free(p.b);
}
END_TEST

START_TEST(test_pickle_take)
{
	struct rec rc;
	struct sv_error err;
	/* {'intern': [1], 'other': <memo ref to the interned list>}: the
	 * second reference yields the id. */
	static const char replaced[] =
	    "\x80\x04}(\x8c\x06intern]\x94K\x01" "a\x8c\x05otherh\x00u.";
	/* a dropped dict referenced again from the memo is an error */
	static const char dropped[] =
	    "\x80\x04}(\x8c\x04" "drop}\x94u\x8c\x05" "againh\x00s.";

	ck_assert_int_eq(run(replaced, sizeof replaced - 1, &rc, &err), 0);
	ck_assert_str_eq(rc.root_items, "{'intern':#1000,'other':#1000}");
	ck_assert_int_eq(rc.n_replaced, 1);
	ck_assert_int_eq(run(dropped, sizeof dropped - 1, &rc, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "consumed"));
}
END_TEST

START_TEST(test_pickle_refused)
{
	unsigned op;
	int n = 0;

	for (op = 0; op < 256; op++) {
		unsigned char buf[4] = {0x80, 4, (unsigned char)op, '.'};
		struct rec rc;
		struct sv_error err;
		const char *name = pkl_op_name((uint8_t)op);
		char want[64];

		if (name == NULL)
			continue;
		switch (op) {
#define PKL_CASE(id, byte, nm, kind) \
		case byte: if (kind != PKL_OPK_CODE) continue; break;
			PKL_OPS_INFO(PKL_CASE)
#undef PKL_CASE
		default: continue;
		}
		ck_assert_int_eq(run(buf, sizeof buf, &rc, &err), -1);
		snprintf(want, sizeof want, "%s (0x%02x) imports or calls code",
		    name, op);
		ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
		ck_assert_uint_eq(err.offset, 2);
		n++;
	}
	ck_assert_int_eq(n, 15);
	RUN_FAIL("\x80\x04I1\n.", SV_ERR_UNSUPPORTED, "text protocols");
	RUN_FAIL("\x80\x06N.", SV_ERR_UNSUPPORTED, "protocol 6");
	RUN_FAIL("\x80\x04\xff.", SV_ERR_FORMAT, "unknown opcode 0xff");
}
END_TEST

START_TEST(test_pickle_malformed)
{
	RUN_FAIL("\x80\x04(K\x01", SV_ERR_FORMAT, "before STOP");
	RUN_FAIL("\x80\x04\x8c\x09" "abc.", SV_ERR_FORMAT, "past the end");
	RUN_FAIL("\x80\x04X\xff\xff\xff\xff.", SV_ERR_FORMAT, "past the end");
	RUN_FAIL("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f.", SV_ERR_FORMAT,
	    "past the end");
	RUN_FAIL("\x80\x04\x8b\xff\xff\xff\x7f.", SV_ERR_FORMAT,
	    "past the end");
	RUN_FAIL("\x80\x04K\x01K\x02s.", SV_ERR_FORMAT, "underflow");
	RUN_FAIL("\x80\x04K\x01K\x02K\x03s.", SV_ERR_FORMAT, "not a dict");
	RUN_FAIL("\x80\x04K\x01(K\x02" "e.", SV_ERR_FORMAT, "not a list");
	RUN_FAIL("\x80\x04}(K\x01u.", SV_ERR_FORMAT, "odd number");
	RUN_FAIL("\x80\x04" "e.", SV_ERR_FORMAT, "no MARK");
	RUN_FAIL("\x80\x04.", SV_ERR_FORMAT, "empty stack");
	RUN_FAIL("\x80\x04\x94.", SV_ERR_FORMAT, "empty stack");
	RUN_FAIL("Z", SV_ERR_FORMAT, "not a pickle");
}
END_TEST

START_TEST(test_pickle_deep)
{
	/* 2^20 + 1 nested lists: refused, not a crash */
	size_t n = (1u << 20) + 1, i;
	unsigned char *buf = xmalloc(n + 3);
	struct rec rc;
	struct sv_error err;

	buf[0] = 0x80;
	buf[1] = 4;
	memset(buf + 2, ']', n);
	buf[n + 2] = '.';
	ck_assert_int_eq(run(buf, n + 3, &rc, &err), -1);
	ck_assert_int_eq(err.code, SV_ERR_LIMIT);
	free(buf);

	/* 300000 lists appended into each other: a chain freed without
	 * recursion */
	n = 300000;
	buf = xmalloc(2 * n + 3);
	buf[0] = 0x80;
	buf[1] = 4;
	for (i = 0; i < n; i++)
		buf[2 + i] = ']';
	for (i = 0; i < n - 1; i++)
		buf[2 + n + i] = 'a';
	buf[2 + n + n - 1] = '.';
	ck_assert_int_eq(run(buf, 2 * n + 2, &rc, &err), 0);
	free(buf);
}
END_TEST

START_TEST(test_pickle_self_reference)
{
	/* l = []; l.append(l): a cycle the reader must survive */
	static const char buf[] = "\x80\x04]\x94h\x00" "a.";
	struct rec rc;
	struct sv_error err;

	ck_assert_int_eq(run(buf, sizeof buf - 1, &rc, &err), 0);
	ck_assert_int_eq(strncmp(rc.root_items, "[[[[", 4), 0);
}
END_TEST

/* ---- records read when they close (pkl_sink.take_record) -------------- */

static Suite *
pickle_suite(void)
{
	Suite *s = suite_create("pickle");
	TCase *tc = tcase_create("opcodes");
	TCase *tl = tcase_create("limits");

	tcase_add_test(tc, test_pickle_ints);
	tcase_add_test(tc, test_pickle_scalars);
	tcase_add_test(tc, test_pickle_containers);
	tcase_add_test(tc, test_pickle_memo);
	tcase_add_test(tc, test_pickle_memo_spilled);
	tcase_add_test(tc, test_pickle_memo_compact);
	tcase_add_test(tc, test_pickle_memo_boxes_reused);
	tcase_add_test(tc, test_pickle_take);
	pkl_records_tests(tc);
	tcase_add_test(tl, test_pickle_refused);
	tcase_add_test(tl, test_pickle_malformed);
	tcase_add_test(tl, test_pickle_deep);
	tcase_add_test(tl, test_pickle_self_reference);
	tcase_set_timeout(tl, 60);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tl);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(pickle_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
