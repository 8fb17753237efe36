/*
 * Unit tests of records read whole (src/pickle/pkl_record.c): each against
 * the reader's general path, which builds every dict. Run by check_pickle
 * (pkl_records_tests()).
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pickle/pkl_ops.h"
#include "pickle/pkl_reader.h"
#include "util/mapfile.h"
#include "util/xalloc.h"

#include "pkl_fix.h"

#define RECORDS TOP_SRCDIR "/tests/data/records/"

/* The pickles of tests/data/mkrecords.py: a list (class 1) of records
 * (class 2); a list under a record's key "fr" is class 3, a dict in it
 * (a frame) class 5, both replaced by ids; anything else is kept
 * (class 4). Every record, however it comes, is logged. */
#define RECS_SHAPES 32

struct recs {
	char log[16384];
	/* the keys of the records taken under each shape of the reader
	 * (pkl_record_shape()), which must be the same under one */
	uint64_t shape[RECS_SHAPES];
	char shape_keys[RECS_SHAPES][128];
	int n_shapes, n_by_shape;
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

/* A record taken under a shape has the keys of every record taken under
 * it (pkl_record_shape()). */
static void
shape_keys(struct recs *rc, struct pkl_reader *r,
    const struct pkl_value *items, size_t n)
{
	uint64_t id = pkl_record_shape(r);
	char keys[128] = "";
	int k;
	size_t i;

	if (id == 0)
		return;
	rc->n_by_shape++;
	for (i = 0; i < n; i++)
		describe(r, &items[2 * i], keys, sizeof keys);
	for (k = 0; k < rc->n_shapes; k++)
		if (rc->shape[k] == id) {
			ck_assert_str_eq(keys, rc->shape_keys[k]);
			return;
		}
	ck_assert_int_lt(rc->n_shapes, RECS_SHAPES);
	rc->shape[rc->n_shapes] = id;
	strcpy(rc->shape_keys[rc->n_shapes++], keys);
}

static int
recs_record(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, struct sv_error *err)
{
	struct recs *rc = ctx;
	size_t i, len;

	ck_assert_uint_eq(cls, 2);
	shape_keys(rc, r, items, n);
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

/* (a dict in a list of class 1 is of class 2 at any index: the fast
 * sinks say so, the general ones do not) */
static const struct pkl_sink recs_sink = {recs_classify, recs_take, NULL,
    recs_record, 1u << 2, NULL, 1u << 1};
static const struct pkl_sink recs_general = {recs_classify, recs_take, NULL,
    NULL, 0, NULL, 0};
static const struct pkl_sink recs_sink_items = {recs_classify, recs_take,
    NULL, recs_record, 1u << 2, recs_items, 1u << 1};

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
    recs_record, 1u << 2, pure_items, 1u << 1};
static const struct pkl_sink pure_general = {recs_classify, pure_take, NULL,
    NULL, 0, NULL, 0};

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

/* A pickle made for a test, and its next fresh memo slot. */
struct pkb {
	struct pb pb;
	unsigned slot;
};

static void
pkb_raw(struct pkb *p, const void *s, size_t n)
{
	pb_bytes(&p->pb, s, n);
}

/* MEMOIZE: the slot it stores to. */
static unsigned
pkb_memo(struct pkb *p)
{
	pkb_raw(p, "\x94", 1);
	return p->slot++;
}

/* A SHORT_BINUNICODE of s, memoized: its slot. */
static unsigned
pkb_str(struct pkb *p, const char *s)
{
	uint8_t n = (uint8_t)strlen(s);

	pkb_raw(p, "\x8c", 1);
	pkb_raw(p, &n, 1);
	pkb_raw(p, s, n);
	return pkb_memo(p);
}

/* A fetch of slot: BINGET, or LONG_BINGET when long is set. */
static void
pkb_get(struct pkb *p, unsigned slot, int lng)
{
	uint8_t b[5];

	if (!lng) {
		b[0] = 'h';
		b[1] = (uint8_t)slot;
		pkb_raw(p, b, 2);
		return;
	}
	b[0] = 'j';
	b[1] = (uint8_t)slot;
	b[2] = (uint8_t)(slot >> 8);
	b[3] = b[4] = 0;
	pkb_raw(p, b, 5);
}

/* An int of the opcode op (BININT1, BININT2, BININT, or LONG1 of w
 * bytes). */
static void
pkb_int(struct pkb *p, char op, int64_t v, unsigned w)
{
	uint8_t b[10];
	unsigned i, n = op == 'K' ? 1 : op == 'M' ? 2 : op == 'J' ? 4 : w;

	b[0] = (uint8_t)op;
	pkb_raw(p, b, 1);
	if (op == '\x8a') {
		b[0] = (uint8_t)w;
		pkb_raw(p, b, 1);
	}
	for (i = 0; i < n; i++)
		b[i] = (uint8_t)((uint64_t)v >> (8 * i));
	pkb_raw(p, b, n);
}

/* A BINFLOAT of v (big-endian). */
static void
pkb_float(struct pkb *p, double v)
{
	uint8_t b[9];
	uint64_t u;
	int i;

	memcpy(&u, &v, 8);
	b[0] = 'G';
	for (i = 0; i < 8; i++)
		b[1 + i] = (uint8_t)(u >> (56 - 8 * i));
	pkb_raw(p, b, 9);
}

START_TEST(test_pickle_records_shapes)
{
	/* records written alike are read by the shape of the one before
	 * them: the same records as the general path reads, and records that
	 * only look alike (another width, a FRAME inside, a value that is no
	 * id or string, a list that is not the last value, a key's slot
	 * changed in place) read as they are */
	static const char pad[300] = {0};
	struct pkb pk = {0}, *p = &pk;
	struct recs a;
	struct pkl_reader *keep = NULL;
	struct pkl_stats st;
	struct sv_error err;
	unsigned ka, kb, kc, kd, ke, kf, kg, fr, x1, x2, flt, nb = 0, k;
	char want[64];
	uint8_t put[5];
	int i;

	pkb_raw(p, "\x80\x04]", 3);
	(void)pkb_memo(p);
	pkb_raw(p, "(", 1);
	/* the keys, and values to fetch, in a first record */
	pkb_raw(p, "}", 1);
	(void)pkb_memo(p);
	pkb_raw(p, "(", 1);
	ka = pkb_str(p, "a");
	x1 = pkb_str(p, "alloc");
	kb = pkb_str(p, "b");
	x2 = pkb_str(p, "free");
	kc = pkb_str(p, "c");
	pkb_raw(p, "G\x3f\xf8\0\0\0\0\0\0", 9);
	flt = pkb_memo(p);
	kd = pkb_str(p, "d");
	pkb_raw(p, "N", 1);
	ke = pkb_str(p, "e");
	pkb_raw(p, "\x88", 1);
	kf = pkb_str(p, "f");
	pkb_raw(p, "K\x01", 2);
	kg = pkb_str(p, "g");
	pkb_raw(p, "K\x02", 2);
	fr = pkb_str(p, "fr");
	pkb_raw(p, "K\x03u", 3);
	for (i = 0; i < 12; i++) {
		pkb_raw(p, "}", 1);
		(void)pkb_memo(p);
		pkb_raw(p, "(", 1);
		pkb_get(p, ka, 1);
		/* a fetch of a float (boxed) in the tenth */
		pkb_get(p, i == 9 ? flt : i & 1 ? x2 : x1, 1);
		pkb_get(p, kb, 0);
		pkb_int(p, '\x8a', 0x7f0000000000 + 512 * i - 7 * (i == 4),
		    6);
		pkb_get(p, kc, 0);
		/* a wider one in the sixth and seventh */
		pkb_int(p, i == 5 || i == 6 ? 'J' : 'M', i == 6 ? -5 :
		    -3 * i + 60000, 0);
		pkb_get(p, kd, 0);
		k = pkb_str(p, i == 8 ? "N/B" : "N/A");
		if (i == 8)
			nb = k;
		pkb_get(p, ke, 0);
		pkb_raw(p, i == 2 ? "\x88" : "\x89", 1);
		pkb_get(p, kf, 0);
		pkb_raw(p, i == 3 ? "N" : "\x89", 1);
		if (i == 7) /* a FRAME inside (of the bytes that follow) */
			pkb_raw(p, "\x95\x00\x01\0\0\0\0\0\0", 9);
		pkb_get(p, kg, 0);
		pkb_float(p, 2.25 + i);
		pkb_raw(p, "u", 1);
	}
	/* records that end with a list of fetches, of 2 to 5 of them, one
	 * of which repeats, one an APPEND after, one a value after it */
	for (i = 0; i < 8; i++) {
		int j;

		pkb_raw(p, "}", 1);
		(void)pkb_memo(p);
		pkb_raw(p, "(", 1);
		pkb_get(p, ka, 1);
		pkb_int(p, 'J', 1000 + i, 0);
		pkb_get(p, fr, 0);
		pkb_raw(p, "]", 1);
		(void)pkb_memo(p);
		pkb_raw(p, "(", 1);
		for (j = 0; j < 2 + (i == 5 ? 2 : i % 4); j++)
			pkb_get(p, j & 1 ? x2 : x1, 0);
		pkb_raw(p, "e", 1);
		if (i == 6) {
			pkb_get(p, x1, 0);
			pkb_raw(p, "a", 1);
		}
		if (i == 7) {
			pkb_get(p, kb, 0);
			pkb_raw(p, "K\x09", 2);
		}
		pkb_raw(p, "u", 1);
	}
	/* records of one shape; after the third, key a's slot changed in
	 * place (LONG_BINPUT): the same bytes, another key */
	for (i = 0; i < 6; i++) {
		if (i == 3) {
			pkb_raw(p, "\x8c\x01z", 3);
			put[0] = 'r';
			put[1] = (uint8_t)ka;
			put[2] = (uint8_t)(ka >> 8);
			put[3] = put[4] = 0;
			pkb_raw(p, put, 5);
		}
		pkb_raw(p, "}", 1);
		(void)pkb_memo(p);
		pkb_raw(p, "(", 1);
		pkb_get(p, ka, 1);
		pkb_int(p, 'K', 20 + i, 0);
		/* a string a record stored in its slot, fetched */
		pkb_get(p, kb, 0);
		pkb_get(p, nb, 1);
		pkb_raw(p, "u", 1);
	}
	/* room after the records: a shape wants it to read 8 bytes at a
	 * time */
	pkb_raw(p, "\x8c\xff", 2);
	pkb_raw(p, pad, 255);
	pkb_raw(p, "e.", 2);

	same_as_general((const char *)p->pb.b, p->pb.n, &a);
	snprintf(want, sizeof want, "'b':%lld", 0x7f0000000000ll + 2048 - 7);
	ck_assert_ptr_nonnull(strstr(a.log, want));
	ck_assert_ptr_nonnull(strstr(a.log, "'g':12.25"));
	ck_assert_ptr_nonnull(strstr(a.log, "'c':59985"));
	ck_assert_ptr_nonnull(strstr(a.log, "'d':'N/B'"));
	ck_assert_ptr_nonnull(strstr(a.log, "'a':1.5"));
	ck_assert_ptr_nonnull(strstr(a.log, "'c':-5"));
	ck_assert_ptr_nonnull(strstr(a.log, "'a':22,'b':'N/B'}"));
	ck_assert_ptr_nonnull(strstr(a.log, "'z':24,"));
	ck_assert_ptr_null(strstr(a.log, "'a':24,"));
	memset(&a, 0, sizeof a);
	ck_assert_msg(pkl_run(p->pb.b, p->pb.n, &pure_sink, &a, &keep, &err) ==
	    0, "%s", err.msg);
	pkl_get_stats(keep, &st);
	pkl_reader_free(keep);
	/* records after the first of their shape (13 of 26 now), all but
	 * the first block's with their keys in their shape; the keys under
	 * one shape are the same (shape_keys()) */
	ck_assert_uint_ge(st.records_shaped, 10);
	ck_assert_int_ge(a.n_by_shape, 8);
	ck_assert_int_le(a.n_by_shape, (int)st.records_shaped);
	/* 'z', read under a shape made after the key's slot changed */
	ck_assert_int_ge(a.n_shapes, 3);
	free(p->pb.b);
}
END_TEST

START_TEST(test_pickle_records_shape_puts)
{
	/* a record whose item is stored in more memo slots than a shape
	 * holds (a fuzzer's find): no shape, and the records after it read
	 * as the general path reads them */
	static const char pad[300] = {0};
	struct pb p = {0};
	struct recs a;
	int i, j;

	PB_LIT(&p, "\x80\x04]\x94(");
	for (i = 0; i < 6; i++) {
		PB_LIT(&p, "}\x94(\x8c\x01" "a");
		for (j = 0; j < 60; j++)
			pb_byte(&p, 0x94);
		pb_byte(&p, 'K');
		pb_byte(&p, (uint8_t)i);
		PB_LIT(&p, "u");
	}
	PB_LIT(&p, "\x8c\xff");
	pb_bytes(&p, pad, 255);
	PB_LIT(&p, "e.");
	same_as_general((const char *)p.b, p.n, &a);
	ck_assert_ptr_nonnull(strstr(a.log, "{'a':5}"));
	free(p.b);
}
END_TEST

START_TEST(test_pickle_records_dict_class)
{
	/* a dict after another in a list whose dicts the sink classes alike
	 * wherever they are (index_free) gets that class without a call,
	 * but not where the list below the mark is not its parent: an
	 * unfilled list on top of the stack, an unfilled dict below a key */
	static const char pk[] =
	    "\x80\x04]\x94("
	    "}\x94(\x8c\x01" "a\x94K\x01u"
	    "}\x94(h\x02K\x02u"
	    /* a list, then a dict that goes into it (APPEND) */
	    "]\x94}\x94(h\x02K\x03ua"
	    /* a dict whose value under 'b' is a dict */
	    "}\x94\x8c\x01" "b\x94}\x94(h\x02K\x04us"
	    "}\x94(h\x02K\x05u"
	    /* a list of dicts under a mark of its own */
	    "]\x94(}\x94(h\x02K\x06u}\x94(h\x02K\x07ue"
	    "}\x94(h\x02K\x08u"
	    "e.";
	struct recs a;

	same_as_general(pk, sizeof pk - 1, &a);
	ck_assert_ptr_nonnull(strstr(a.log, "{'a':2}"));
	ck_assert_ptr_nonnull(strstr(a.log, "{'a':8}"));
	/* taken as records: the dicts of the outer list alone */
	ck_assert_ptr_null(strstr(a.log, "{'a':3}"));
	ck_assert_ptr_null(strstr(a.log, "{'a':6}"));
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

void
pkl_records_tests(TCase *tc)
{
	tcase_add_loop_test(tc, test_pickle_records_agree, 0, 3);
	tcase_add_loop_test(tc, test_pickle_records_whole, 0, 2);
	tcase_add_loop_test(tc, test_pickle_records_long_list, 0, 2);
	tcase_add_test(tc, test_pickle_records_errors);
	tcase_add_test(tc, test_pickle_records_operands);
	tcase_add_test(tc, test_pickle_records_seen);
	tcase_add_test(tc, test_pickle_records_fetch_place);
	tcase_add_test(tc, test_pickle_records_shapes);
	tcase_add_test(tc, test_pickle_records_dict_class);
	tcase_add_test(tc, test_pickle_records_shape_puts);
	tcase_add_test(tc, test_pickle_records_seen_boxed);
}
