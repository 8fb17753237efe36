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
static void
app(char *buf, size_t size, const char *s)
{
	size_t used = strlen(buf);

	if (used + strlen(s) < size)
		strcat(buf, s);
}

static void
describe(struct pkl_reader *r, const struct pkl_value *v, char *buf,
    size_t size)
{
	size_t used = strlen(buf), n, i, len;
	const struct pkl_value *it;
	const char *s;

	if (used + 64 >= size)
		return;
	switch (v->kind) {
	case PKL_NONE: app(buf, size, "None"); break;
	case PKL_BOOL: app(buf, size, v->v.u ? "True" : "False"); break;
	case PKL_INT:
		if (v->flags & PKL_F_UNSIGNED)
			snprintf(buf + used, size - used, "%llu",
			    (unsigned long long)v->v.u);
		else
			snprintf(buf + used, size - used, "%lld",
			    (long long)v->v.i);
		break;
	case PKL_BIGINT: app(buf, size, v->v.i < 0 ? "-big" : "big"); break;
	case PKL_FLOAT: snprintf(buf + used, size - used, "%g", v->v.f); break;
	case PKL_STR:
	case PKL_BYTES:
		s = pkl_str(r, v, &len);
		snprintf(buf + used, size - used, "%s'%.*s'",
		    v->kind == PKL_BYTES ? "b" : "", (int)len, s);
		break;
	case PKL_ID:
		if (v->cls != 3)
			snprintf(buf + used, size - used, "#%u:%llu", v->cls,
			    (unsigned long long)v->v.id);
		else
			snprintf(buf + used, size - used, "#%llu",
			    (unsigned long long)v->v.id);
		break;
	case PKL_LIST:
	case PKL_TUPLE:
	case PKL_SET:
	case PKL_DICT:
		it = pkl_items(r, v, &n);
		app(buf, size, v->kind == PKL_LIST ? "[" :
		    v->kind == PKL_TUPLE ? "(" : "{");
		for (i = 0; i < n; i++) {
			if (i)
				app(buf, size, ",");
			if (v->kind == PKL_DICT) {
				describe(r, &it[2 * i], buf, size);
				app(buf, size, ":");
				describe(r, &it[2 * i + 1], buf, size);
			} else {
				describe(r, &it[i], buf, size);
			}
		}
		app(buf, size, v->kind == PKL_LIST ? "]" :
		    v->kind == PKL_TUPLE ? ")" : "}");
		break;
	default: app(buf, size, "?"); break;
	}
}

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
    NULL, 0, NULL};

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
struct pb {
	uint8_t *b;
	size_t n, cap;
};

static void
pb_bytes(struct pb *p, const void *s, size_t n)
{
	p->b = xgrow(p->b, &p->cap, p->n + n, 1);
	memcpy(p->b + p->n, s, n);
	p->n += n;
}

#define PB_LIT(p, s) pb_bytes((p), (s), sizeof(s) - 1)

static void
pb_byte(struct pb *p, uint8_t c)
{
	pb_bytes(p, &c, 1);
}

static void
pb_u32(struct pb *p, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
	    (uint8_t)(v >> 24)};

	pb_bytes(p, x, 4);
}

/* A new string of len copies of c: SHORT_BINUNICODE or BINUNICODE. */
static void
pb_str(struct pb *p, size_t len, char c)
{
	char *s = xmalloc(len + 1);

	memset(s, c, len);
	if (len < 256) {
		pb_byte(p, 0x8c);
		pb_byte(p, (uint8_t)len);
	} else {
		pb_byte(p, 'X');
		pb_u32(p, (uint32_t)len);
	}
	pb_bytes(p, s, len);
	free(s);
}

static void
pb_put(struct pb *p, uint32_t idx) /* LONG_BINPUT idx, POP */
{
	pb_byte(p, 'r');
	pb_u32(p, idx);
	pb_byte(p, '0');
}

static void
pb_get(struct pb *p, uint32_t idx) /* LONG_BINGET idx */
{
	pb_byte(p, 'j');
	pb_u32(p, idx);
}

static void
pb_int(struct pb *p, int32_t v) /* BININT v */
{
	pb_byte(p, 'J');
	pb_u32(p, (uint32_t)v);
}

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

#define RECORDS TOP_SRCDIR "/tests/data/records/"

/* The pickles of tests/data/mkrecords.py: a list (class 1) of records
 * (class 2); a list under a record's key "fr" is class 3, a dict in it
 * (a frame) class 5, both replaced by ids; anything else is kept
 * (class 4). Every record, however it comes, is logged. */
struct recs {
	char log[16384];
	uint64_t count; /* items of the list, from pkl_count() */
	int n_ids;
	int n_from_items; /* lists taken from their items (take_items) */
	int n_item_calls; /* take_items calls, any class */
};

static uint8_t
recs_classify(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *key, uint64_t index, uint8_t kind)
{
	size_t len;
	const char *k;

	(void)ctx;
	(void)index;
	if (parent_cls == 0)
		return 1;
	if (parent_cls == 1)
		return kind == PKL_DICT ? 2 : 4;
	if (parent_cls == 2 && key != NULL && kind == PKL_LIST) {
		k = pkl_str(r, key, &len);
		if (len == 2 && memcmp(k, "fr", 2) == 0)
			return 3;
	}
	return parent_cls == 3 ? 5 : 4;
}

static int
recs_record(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, struct sv_error *err)
{
	struct recs *rc = ctx;
	size_t i, len;

	ck_assert_uint_eq(cls, 2);
	app(rc->log, sizeof rc->log, "{");
	for (i = 0; i < n; i++) {
		const char *k = pkl_str(r, &items[2 * i], &len);

		if (len == 3 && memcmp(k, "bad", 3) == 0)
			return sv_error_set(err, SV_ERR_FORMAT, SV_NO_OFFSET,
			    "bad record");
		if (i)
			app(rc->log, sizeof rc->log, ",");
		describe(r, &items[2 * i], rc->log, sizeof rc->log);
		app(rc->log, sizeof rc->log, ":");
		describe(r, &items[2 * i + 1], rc->log, sizeof rc->log);
	}
	app(rc->log, sizeof rc->log, "};");
	return 0;
}

static int
recs_take(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *parent, const struct pkl_value *key,
    uint64_t index, const struct pkl_value *child, uint64_t *id,
    uint8_t *id_cls, struct sv_error *err)
{
	struct recs *rc = ctx;
	const struct pkl_value *it;
	size_t n;

	(void)parent_cls;
	(void)key;
	(void)index;
	if (parent == NULL) {
		rc->count = pkl_count(r, child);
		return PKL_DROP;
	}
	switch (child->cls) {
	case 2: /* a record the general path built */
		it = pkl_items(r, child, &n);
		return recs_record(ctx, r, 2, it, n, err) == 0 ? PKL_DROP : -1;
	case 3:
	case 5:
		*id = 100 + (uint64_t)rc->n_ids++;
		*id_cls = 3;
		return PKL_ID_REPLACE;
	default:
		return PKL_KEEP;
	}
}

/* A class 3 list taken from its items, with the id take() would give
 * it; anything else made as usual. */
static int
recs_items(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, uint64_t *id, uint8_t *id_cls,
    struct sv_error *err)
{
	struct recs *rc = ctx;

	(void)r;
	(void)items;
	(void)n;
	(void)err;
	if (cls != 3)
		return PKL_KEEP;
	rc->n_from_items++;
	*id = 100 + (uint64_t)rc->n_ids++;
	*id_cls = 3;
	return PKL_ID_REPLACE;
}

static const struct pkl_sink recs_sink = {recs_classify, recs_take, NULL,
    recs_record, 1u << 2, NULL};
static const struct pkl_sink recs_general = {recs_classify, recs_take, NULL,
    NULL, 0, NULL};
static const struct pkl_sink recs_sink_items = {recs_classify, recs_take,
    NULL, recs_record, 1u << 2, recs_items};

static int
run_recs(const char *name, const struct pkl_sink *sink, struct recs *rc,
    struct sv_error *err, struct pkl_stats *st)
{
	char path[512];
	struct pkl_reader *keep = NULL;
	struct mapfile m;
	int r;

	snprintf(path, sizeof path, RECORDS "%s", name);
	ck_assert_msg(mapfile_open(&m, path, err) == 0, "%s", err->msg);
	memset(rc, 0, sizeof *rc);
	sv_error_clear(err);
	r = pkl_run(m.data, m.len, sink, rc, &keep, err);
	if (keep != NULL && st != NULL)
		pkl_get_stats(keep, st);
	pkl_reader_free(keep);
	mapfile_close(&m);
	return r;
}

START_TEST(test_pickle_records_agree)
{
	/* records taken when they close, most read whole, come in the order
	 * and with the items and ids the general path gives them */
	static const char *const files[] = {"p4.pickle", "p2.pickle",
	    "framed.pickle"};
	struct recs a, b;
	struct sv_error err;

	struct recs c;

	ck_assert_msg(run_recs(files[_i], &recs_sink, &a, &err, NULL) == 0,
	    "%s", err.msg);
	ck_assert_msg(run_recs(files[_i], &recs_general, &b, &err, NULL) == 0,
	    "%s", err.msg);
	ck_assert_str_eq(a.log, b.log);
	ck_assert_uint_eq(a.count, 11);
	ck_assert_uint_eq(b.count, 11);
	ck_assert_int_eq(a.n_ids, b.n_ids);
	/* lists taken from their items: the same records, ids in the same
	 * order, and a later memo fetch of such a list gives its id */
	ck_assert_msg(run_recs(files[_i], &recs_sink_items, &c, &err,
	    NULL) == 0, "%s", err.msg);
	ck_assert_str_eq(c.log, b.log);
	ck_assert_int_eq(c.n_ids, b.n_ids);
	ck_assert_int_gt(c.n_from_items, 0);
	/* the shapes the list covers, as the general path reads them */
	ck_assert_ptr_nonnull(strstr(a.log, "{'a':2,'b':'x','fr':#103};"));
	ck_assert_ptr_nonnull(strstr(a.log, "{'a':3,'fr':#104};"));
	ck_assert_ptr_nonnull(strstr(a.log, "{'a':4,'n':{'x':1}};"));
	ck_assert_ptr_nonnull(strstr(a.log, "{'a':6,'fr':#103};"));
	ck_assert_ptr_nonnull(strstr(a.log, "'big':big,'t':True,'f':False,"
	    "'n':None,"));
	ck_assert_ptr_nonnull(strstr(a.log, "'u':18446744073709551615,"
	    "'neg':-1099511627776,'i2':1000,'i4':100000};"));
	ck_assert_ptr_nonnull(strstr(a.log, "{'only':1};{};{'a':11"));
}
END_TEST

/* [{'fr': [0] * n}] in protocol 4, as a pickler writes it (batches of
 * 1000 items). */
static uint8_t *
long_list_record(size_t n, size_t *len)
{
	static const uint8_t head[] =
	    "\x80\x04]\x94(}\x94(\x8c\x02" "fr\x94]\x94";
	uint8_t *b = xmalloc(sizeof head + 2 * n + 2 * (n / 1000 + 1) + 8);
	size_t k = sizeof head - 1, i;

	memcpy(b, head, k);
	for (i = 0; i < n; i++) {
		if (i % 1000 == 0)
			b[k++] = '(';
		b[k++] = 'K';
		b[k++] = 0;
		if (i % 1000 == 999 || i == n - 1)
			b[k++] = 'e';
	}
	memcpy(b + k, "ue.", 3);
	*len = k + 3;
	return b;
}

START_TEST(test_pickle_records_long_list)
{
	/* a list in a record longer than the fast path takes goes the
	 * general way, with the same result */
	static const size_t n[] = {1000, 70000};
	struct recs a, b;
	struct sv_error err;
	size_t len;
	uint8_t *buf = long_list_record(n[_i], &len);

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	ck_assert_int_eq(pkl_run(buf, len, &recs_sink, &a, NULL, &err), 0);
	ck_assert_int_eq(pkl_run(buf, len, &recs_general, &b, NULL, &err), 0);
	ck_assert_str_eq(a.log, "{'fr':#100};");
	ck_assert_str_eq(b.log, a.log);
	ck_assert_uint_eq(a.count, 1);
	free(buf);
}
END_TEST

/* The id of a class 3 list made of its items alone, as a sink's must be
 * for the lists seen before to be answered without a call. */
static uint64_t
pure_id(struct pkl_reader *r, const struct pkl_value *items, size_t n)
{
	char d[1024] = "";
	uint64_t h = 5381;
	size_t i;

	for (i = 0; i < n; i++) {
		describe(r, &items[i], d, sizeof d);
		app(d, sizeof d, ",");
	}
	for (i = 0; d[i] != '\0'; i++)
		h = h * 33 + (uint8_t)d[i];
	return 1000 + h % 1000000;
}

static int
pure_items(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, uint64_t *id, uint8_t *id_cls,
    struct sv_error *err)
{
	struct recs *rc = ctx;

	(void)err;
	rc->n_item_calls++;
	if (cls != 3)
		return PKL_KEEP;
	rc->n_from_items++;
	*id = pure_id(r, items, n);
	*id_cls = 3;
	return PKL_ID_REPLACE;
}

static int
pure_take(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *parent, const struct pkl_value *key,
    uint64_t index, const struct pkl_value *child, uint64_t *id,
    uint8_t *id_cls, struct sv_error *err)
{
	const struct pkl_value *it;
	size_t n;

	if (parent != NULL && child->cls == 3) {
		it = pkl_items(r, child, &n);
		*id = pure_id(r, it, n);
		*id_cls = 3;
		return PKL_ID_REPLACE;
	}
	return recs_take(ctx, r, parent_cls, parent, key, index, child, id,
	    id_cls, err);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The records of a log in sorted order (a record the fast path leaves to
 * the general one is taken when its list closes, later than the others). */
static void
sort_log(const char *log, char *out, size_t size)
{
	char buf[16384], *rec[64], *save = NULL, *t;
	size_t n = 0, i;

	snprintf(buf, sizeof buf, "%s", log);
	for (t = strtok_r(buf, ";", &save); t != NULL && n < 64;
	    t = strtok_r(NULL, ";", &save))
		rec[n++] = t;
	qsort(rec, n, sizeof *rec, cmp_str);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		app(out, size, rec[i]);
		app(out, size, ";");
	}
}

static const struct pkl_sink pure_sink = {recs_classify, pure_take, NULL,
    recs_record, 1u << 2, pure_items};
static const struct pkl_sink pure_general = {recs_classify, pure_take, NULL,
    NULL, 0, NULL};

/* Reads pk[0..len) with the records read whole and their lists' answers
 * remembered (into *a), and the general way: the same records (sorted),
 * both without error. */
static void
same_as_general(const char *pk, size_t len, struct recs *a)
{
	struct recs b;
	struct sv_error err;
	char sa[4096], sb[4096];

	memset(a, 0, sizeof *a);
	memset(&b, 0, sizeof b);
	ck_assert_msg(pkl_run((const uint8_t *)pk, len, &pure_sink, a, NULL,
	    &err) == 0, "%s", err.msg);
	ck_assert_msg(pkl_run((const uint8_t *)pk, len, &pure_general, &b,
	    NULL, &err) == 0, "%s", err.msg);
	sort_log(a->log, sa, sizeof sa);
	sort_log(b.log, sb, sizeof sb);
	ck_assert_str_eq(sa, sb);
}

START_TEST(test_pickle_records_seen)
{
	/* lists of memo fetches whose bytes repeat one seen before: the
	 * answer given then, the items read where the list is more than
	 * that or of another class, and nothing kept past a memo slot
	 * changed in place; the records as the general path reads them */
#define FR "(h\x04h\x05h\x06h\x07" "e"
	static const char pk[] =
	    "\x80\x04]\x94("
	    /* memo 1-7: {'fr': ['a', 'b', 'c', 'd']}, strings stored */
	    "}\x94(\x8c\x02" "fr\x94]\x94(\x8c\x01" "a\x94\x8c\x01" "b\x94"
	    "\x8c\x01" "c\x94\x8c\x01" "d\x94" "eu"
	    /* the same list of fetches, then again: seen */
	    "}\x94(h\x02]\x94" FR "u"
	    "}\x94(h\x02]\x94" FR "u"
	    /* seen, and a second batch */
	    "}\x94(h\x02]\x94" FR "(h\x04h\x05" "eu"
	    /* seen under another key: a list of class 4 */
	    "}\x94(\x8c\x02" "fx\x94]\x94" FR "u"
	    /* seen, and an item appended */
	    "}\x94(h\x02]\x94" FR "h\x07" "au"
	    /* a record that is not complete where it ends (the string
	     * after it), which the general path takes; then slot 4 changed
	     * in place: the same bytes, other items */
	    "}\x94(\x8c\x01" "gK\x01u"
	    "\x8c\x01" "zq\x04"
	    "}\x94(h\x02]\x94" FR "u"
	    "e.";
	struct recs a;

	same_as_general(pk, sizeof pk - 1, &a);
	/* six lists of class 3 and one of class 4, which the sink keeps:
	 * only the third, the same bytes as the second, is answered without
	 * a call (the last is the same bytes too, but slot 4 changed) */
	ck_assert_int_eq(a.n_from_items, 5);
	ck_assert_int_eq(a.n_item_calls, 6);
	ck_assert_ptr_nonnull(strstr(a.log, "'fx':['a','b','c','d']"));
	/* and the last list, read after slot 4 changed, is not the first */
	ck_assert_int_ne(strncmp(strchr(a.log, '#'), strrchr(a.log, '#'), 8),
	    0);
}
END_TEST
#undef FR

START_TEST(test_pickle_records_fetch_place)
{
	/* a record's memo fetch with the bytes of the one read in its place
	 * in the record before is that one's value, until a memo slot
	 * changes in place: then it is read again */
	static const char pk[] =
	    "\x80\x04]\x94("
	    /* memo 1-2: {'k': 1} */
	    "}\x94(\x8c\x01" "k\x94K\x01u"
	    /* the key fetched, then fetched by the same bytes */
	    "}\x94(h\x02K\x02u"
	    "}\x94(h\x02K\x03u"
	    /* slot 2 changed in place: the same bytes, another key */
	    "\x8c\x01" "zq\x02"
	    "}\x94(h\x02K\x04u"
	    /* (the fast loop wants 9 bytes after an item's start) */
	    "}\x94(h\x02K\x05u"
	    "e.";
	struct recs a;

	same_as_general(pk, sizeof pk - 1, &a);
	ck_assert_ptr_nonnull(strstr(a.log, "{'k':3}"));
	ck_assert_ptr_nonnull(strstr(a.log, "{'z':5}"));
	ck_assert_ptr_nonnull(strstr(a.log, "{'z':4}"));
	ck_assert_ptr_null(strstr(a.log, "'k':4"));
}
END_TEST

START_TEST(test_pickle_records_seen_boxed)
{
	/* a list of fetches of which one is a boxed value (a float) is not
	 * remembered: the same bytes under another key are read as usual,
	 * not refused */
	static const char pk[] =
	    "\x80\x04]\x94("
	    /* memo 1-7: {'fr': ['a', 1.5, 'b', 'c']} */
	    "}\x94(\x8c\x02" "fr\x94]\x94(\x8c\x01" "a\x94"
	    "G\x3f\xf8\x00\x00\x00\x00\x00\x00\x94"
	    "\x8c\x01" "b\x94\x8c\x01" "c\x94" "eu"
	    "}\x94(h\x02]\x94(h\x04h\x05h\x06h\x07" "eu"
	    "}\x94(\x8c\x02" "fx\x94]\x94(h\x04h\x05h\x06h\x07" "eu"
	    "}\x94(h\x02]\x94(h\x04h\x05h\x06h\x07" "eu"
	    "e.";
	struct recs a;

	same_as_general(pk, sizeof pk - 1, &a);
	ck_assert_ptr_nonnull(strstr(a.log, "'fx':['a',1.5,'b','c']"));
	/* every list of class 3 went to the sink */
	ck_assert_int_eq(a.n_from_items, 3);
}
END_TEST

START_TEST(test_pickle_records_whole)
{
	/* records of scalars and lists of them are read without a dict */
	static const char *const files[] = {"whole.pickle", "whole-p2.pickle"};
	struct recs a, b;
	struct sv_error err;
	struct pkl_stats sa, sb;

	ck_assert_int_eq(run_recs(files[_i], &recs_sink, &a, &err, &sa), 0);
	ck_assert_int_eq(run_recs(files[_i], &recs_general, &b, &err, &sb),
	    0);
	ck_assert_str_eq(a.log, b.log);
	ck_assert_str_eq(a.log,
	    "{'a':1,'b':'x','fr':#100};{'a':2,'b':'x'};{};");
	/* the list and the record's "fr" list; the general path adds the
	 * record's dict */
	ck_assert_uint_eq(sa.containers_peak, 2);
	ck_assert_uint_gt(sb.containers_peak, sa.containers_peak);
	ck_assert_uint_lt(sa.memo_boxes, sb.memo_boxes);
}
END_TEST

START_TEST(test_pickle_records_errors)
{
	struct recs a;
	struct sv_error err;
	struct mapfile m;

	/* a record refused: the error is at its SETITEMS */
	ck_assert_int_eq(mapfile_open(&m, RECORDS "bad.at", &err), 0);
	ck_assert_int_eq(run_recs("bad.pickle", &recs_sink, &a, &err, NULL),
	    -1);
	ck_assert_str_eq(err.msg, "bad record");
	ck_assert_uint_eq(err.offset, strtoull((const char *)m.data, NULL, 10));
	ck_assert_str_eq(a.log, "{'a':1};{");
	mapfile_close(&m);
	/* a record taken is gone from the memo */
	ck_assert_int_eq(run_recs("again.pickle", &recs_sink, &a, &err, NULL),
	    -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "consumed record"));
}
END_TEST

/* Runs buf through both sinks: the same result, log, error and offset.
 * Returns run_recs()'s result; *fast and *general get the counters. */
static int
recs_both(const void *buf, size_t len, struct recs *a, struct sv_error *err,
    struct pkl_stats *fast, struct pkl_stats *general)
{
	struct pkl_reader *keep = NULL;
	struct recs b;
	struct sv_error e2;
	int ra, rb;

	memset(a, 0, sizeof *a);
	memset(&b, 0, sizeof b);
	memset(fast, 0, sizeof *fast);
	memset(general, 0, sizeof *general);
	sv_error_clear(err);
	sv_error_clear(&e2);
	ra = pkl_run(buf, len, &recs_sink, a, &keep, err);
	if (keep != NULL)
		pkl_get_stats(keep, fast);
	pkl_reader_free(keep);
	keep = NULL;
	rb = pkl_run(buf, len, &recs_general, &b, &keep, &e2);
	if (keep != NULL)
		pkl_get_stats(keep, general);
	pkl_reader_free(keep);
	ck_assert_int_eq(ra, rb);
	ck_assert_str_eq(a->log, b.log);
	if (ra != 0) {
		ck_assert_str_eq(err->msg, e2.msg);
		ck_assert_uint_eq(err->offset, e2.offset);
	}
	return ra;
}

/*
 * Every operand form the record reader's rec_scalar() reads, each taken
 * by the fast path (no dict built: one container fewer than the general
 * path) and agreeing with the general path: the items of a list of the
 * record (all but memo fetches of ids and strings go through it), the
 * record's items that rec_item_run() leaves to it, and the last item of
 * a file too short for rec_item_run(). Then, in a list and as an item,
 * lengths that run past the end, operands cut by the end and a fetch of
 * a slot not set: refused there, and the general path gives its message
 * at its offset.
 */
START_TEST(test_pickle_records_operands)
{
	static const struct {
		const char *b;
		size_t n;
		const char *want;
	} tail[] = {
#define T(b, w) {b, sizeof(b) - 1, w}
		T("K\x07", "7"),
		T("M\x01\x02", "513"),
		T("J\xff\xff\xff\xff", "-1"),
		T("\x8c\x01" "y", "'y'"),
		T("\x8a\x02\xff\x7f", "32767"),
		T("\x8a\x01\xfe", "-2"),
		T("\x8a\x00", "0"),
		T("h\x00", "'x'"),
		T("j\x00\x00\x00\x00", "'x'"),
		T("N", "None"),
		T("\x88", "True"),
		T("\x89", "False"),
#undef T
	};
	static const struct {
		const char *b;
		size_t n;
		const char *frag;
	} bad[] = {
#define B(b, f) {b, sizeof(b) - 1, f}
		B("X\x09\x00\x00\x00" "abcdefg", "runs past the end"),
		B("\x8c\x09" "abcdefg", "runs past the end"),
		B("\x8a\x09" "abcdefg", "runs past the end"),
		B("\x8c\xff" "abcdefghij", "runs past the end"),
		B("\x8a\xff" "abcdefghij", "runs past the end"),
		B("X\xff\xff\xff\x7f" "abcdefghij", "runs past the end"),
		B("X\x01\x00", "the file ends in the BINUNICODE operand"),
		B("\x8c", "the file ends in the SHORT_BINUNICODE operand"),
		B("\x8a", "the file ends in the LONG1 operand"),
		B("J\xff", "the file ends in the BININT operand"),
		B("M\x01", "the file ends in the BININT2 operand"),
		B("K", "the file ends in the BININT1 operand"),
		B("G\x3f\xf8", "the file ends in the BINFLOAT operand"),
		B("h", "the file ends in the BINGET operand"),
		B("j\x00\x00", "the file ends in the LONG_BINGET operand"),
		B("h\x09NNNNNNNNNN", "memo index 9 not set"),
#undef B
	};
	static const char head[] =
	    "\x80\x04"
	    "\x8c\x01x\x94" "0"                     /* slot 0: 'x' */
	    "K\x2a\x94" "0"                         /* 1: 42 */
	    "G\x3f\xf8\x00\x00\x00\x00\x00\x00\x94" "0" /* 2: 1.5, boxed */
	    "\x88\x94" "0"                          /* 3: True */
	    "N\x94" "0";                            /* 4: None */
	static const char rec[] =
	    "](}(\x8c\x01l](K\x07M\x01\x02J\xff\xff\xff\xff\x8c\x02hi"
	    "X\x03\x00\x00\x00" "abcNG\x3f\xf8\x00\x00\x00\x00\x00\x00"
	    "\x88\x89\x8a\x00\x8a\x06\x00\x00\x1a\x22\x3a\x7f"
	    "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"
	    "\x8a\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
	    "h\x01j\x02\x00\x00\x00h\x03j\x04\x00\x00\x00"
	    "K\x09\x94h\x05h\x00" "e"              /* 5: 9, fetched */
	    "\x8c\x01nN\x8c\x01t\x88\x8c\x01" "f\x89"
	    "\x8c\x01gG\x3f\xf8\x00\x00\x00\x00\x00\x00"
	    "\x8c\x01uX\x03\x00\x00\x00" "abc\x8c\x01z\x8a\x00"
	    "\x8c\x01w\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"
	    "\x8c\x01" "bh\x01\x8c\x01mj\x02\x00\x00\x00"
	    "\x8c\x01pK\x05\x94\x8c\x01qh\x06"     /* 6: 5, fetched */
	    "ue.";
	struct pb p = {NULL, 0, 0};
	struct recs a;
	struct sv_error err;
	struct pkl_stats sa, sb;
	char want[256];
	size_t i;

	PB_LIT(&p, head);
	PB_LIT(&p, rec);
	ck_assert_int_eq(recs_both(p.b, p.n, &a, &err, &sa, &sb), 0);
	ck_assert_str_eq(a.log, "{'l':[7,513,-1,'hi','abc',None,1.5,True,"
	    "False,0,139887656960000,18446744073709551615,big,42,1.5,True,"
	    "None,9,9,'x'],'n':None,'t':True,'f':False,'g':1.5,'u':'abc',"
	    "'z':0,'w':18446744073709551615,'b':42,'m':1.5,'p':5,'q':5};");
	ck_assert_uint_eq(sa.containers_peak, 2); /* the list and 'l' */
	ck_assert_uint_eq(sb.containers_peak, 3);
	ck_assert_uint_eq(sa.memo_slots, 7);
	for (i = 0; i < sizeof tail / sizeof tail[0]; i++) {
		p.n = 0;
		PB_LIT(&p, head);
		PB_LIT(&p, "](}(\x8c\x01" "a");
		pb_bytes(&p, tail[i].b, tail[i].n);
		PB_LIT(&p, "ue.");
		ck_assert_int_eq(recs_both(p.b, p.n, &a, &err, &sa, &sb), 0);
		snprintf(want, sizeof want, "{'a':%s};", tail[i].want);
		ck_assert_str_eq(a.log, want);
		ck_assert_uint_eq(sa.containers_peak, 1);
		ck_assert_uint_eq(sb.containers_peak, 2);
	}
	for (i = 0; i < 2 * sizeof bad / sizeof bad[0]; i++) {
		p.n = 0;
		PB_LIT(&p, head);
		PB_LIT(&p, "](}(\x8c\x01" "a");
		if (i & 1)
			PB_LIT(&p, "](");
		pb_bytes(&p, bad[i / 2].b, bad[i / 2].n);
		ck_assert_int_eq(recs_both(p.b, p.n, &a, &err, &sa, &sb), -1);
		ck_assert_msg(strstr(err.msg, bad[i / 2].frag) != NULL, "%s",
		    err.msg);
	}
	free(p.b);
}
END_TEST

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
	tcase_add_loop_test(tc, test_pickle_records_agree, 0, 3);
	tcase_add_loop_test(tc, test_pickle_records_whole, 0, 2);
	tcase_add_loop_test(tc, test_pickle_records_long_list, 0, 2);
	tcase_add_test(tc, test_pickle_records_errors);
	tcase_add_test(tc, test_pickle_records_operands);
	tcase_add_test(tc, test_pickle_records_seen);
	tcase_add_test(tc, test_pickle_records_fetch_place);
	tcase_add_test(tc, test_pickle_records_seen_boxed);
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
