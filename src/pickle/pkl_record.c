/*
 * The pickle VM's fast path for records (pkl_sink.take_record): a dict of
 * a record class, read whole at its EMPTY_DICT without building a
 * container. It reads up to the SETITEMS without changing anything, and
 * gives up (the general path then runs from the EMPTY_DICT) on any shape
 * it does not know; a record it takes leaves the None flagged F_TAKEN on
 * the stack that the general path's close_record() leaves, and the memo
 * as that path would. Every opcode and length byte is read once, then
 * checked and used (pkl_int.h). A list of the record that repeats the
 * bytes of one read lately is answered as that one was ("lists seen
 * before", below), and a record written as one read lately is read by
 * that one's shape ("records of a shape seen before").
 */
#include "config.h"

#include "pickle/pkl_int.h"

#include <string.h>

#include "pickle/pkl_ops.h"
#include "util/hash.h"
#include "util/xalloc.h"

#define REC_ITEMS 64      /* keys and values of a record read whole */
#define REC_LISTS 4       /* lists among its values */
#define REC_PUTS 128      /* memo stores in it */
#define REC_LIST_MAX 65536 /* items of one such list */

/* A memo store inside a record read whole: the slot, and what is stored
 * there: the dict, its item i, its list i, or item i of the lists. */
enum { P_DICT, P_ITEM, P_LIST, P_LITEM };
struct rec_put {
	uint64_t slot;
	uint32_t i;
	uint8_t what;
};

/* A list value of the record: it[item] stands for it until it is made;
 * its items are r->rec[first .. first + n). When its bytes repeat a list
 * seen before (seen: a copy of that entry) its items are not read: it
 * is what the sink made of that one, or its items are read when needed
 * (seen_items()). body, blen, bhash, bops: its one batch of memo
 * fetches, when it began with one that could be remembered; single:
 * that batch was all of it. */
struct rec_list {
	uint32_t item;
	size_t first, n;
	struct rec_seen seen;
	int hit, single;
	size_t body;
	uint32_t blen, bops;
	uint64_t bhash;
};

struct rec {
	uint64_t ops;  /* opcodes read (apart from slot: the two are
			* counted in one instruction otherwise, and a
			* 16-byte load of two 8-byte stores stalls) */
	struct pkl_value *it; /* it_own, or a shape's items */
	size_t n;
	struct rec_put put[REC_PUTS];
	size_t np;
	struct rec_list list[REC_LISTS];
	size_t nl;
	size_t nli;    /* items in r->rec */
	uint64_t slot; /* the next fresh memo slot */
	struct pkl_value it_own[REC_ITEMS];
};

/* Steps *p over FRAME opcodes (counted in *ops); 0 if the bytes end. */
static inline __attribute__((always_inline)) int
skip_frames(const uint8_t *buf, size_t len, size_t *p, uint64_t *ops)
{
	while (__builtin_expect(*p < len && buf[*p] == PKL_OP_FRAME, 0)) {
		if (len - *p - 1 < 8)
			return 0;
		*p += 9;
		(*ops)++;
	}
	return *p < len;
}

/* Whether the opcode at p (FRAMEs skipped) shows that the record just
 * closed is complete: its next sibling's EMPTY_DICT, or the APPEND(S)
 * that adds it to its list. */
int
pkl_record_done(const struct pkl_reader *r, size_t p)
{
	uint64_t ops = 0; /* not counted: the general path reads these */
	uint8_t op;

	if (!skip_frames(r->buf, r->len, &p, &ops))
		return 0;
	op = r->buf[p];
	return op == PKL_OP_EMPTY_DICT || op == PKL_OP_APPENDS ||
	    op == PKL_OP_APPEND;
}

/* A memo store at *p (MEMOIZE, BINPUT or LONG_BINPUT) of what/i into the
 * next fresh slot: 1 and *p past it; 0 if there is none at *p; -1 if it
 * is one this path does not take. */
static inline __attribute__((always_inline)) int
rec_memo(struct rec *rc, const uint8_t *buf, size_t len, size_t *p,
    uint8_t what, size_t i)
{
	switch (buf[*p]) {
	case PKL_OP_MEMOIZE:
		*p += 1;
		break;
	case PKL_OP_BINPUT:
		if (len - *p < 2 || buf[*p + 1] != rc->slot)
			return -1;
		*p += 2;
		break;
	case PKL_OP_LONG_BINPUT:
		if (len - *p < 5 || le(buf + *p + 1, 4) != rc->slot)
			return -1;
		*p += 5;
		break;
	default:
		return 0;
	}
	if (rc->np == REC_PUTS)
		return -1;
	rc->put[rc->np].slot = rc->slot++;
	rc->put[rc->np].i = (uint32_t)i;
	rc->put[rc->np++].what = what;
	rc->ops++;
	return 1;
}

/* The value of a memo fetch of slot idx: 1, or 0 if it is not a scalar or
 * an id (or not set). */
static inline __attribute__((always_inline)) int
rec_fetch(struct pkl_reader *r, const struct rec *rc, uint64_t idx,
    struct pkl_value *v)
{
	size_t k;
	uint32_t m;

	if (__builtin_expect(idx < r->memo_top, 1)) {
		m = r->memo[idx];
		if (slot_id_or_str(m, idx, r->mbase, v))
			return 1;
		switch (m & 7) {
		case M_SMALL:
			pkl_memo_decode(r, idx, m, v, NULL);
			return 1;
		case M_BOXED:
			*v = r->boxed[m >> 3];
			return !is_cont(v);
		default:
			return 0;
		}
	}
	for (k = rc->np; k > 0 && rc->put[k - 1].slot != idx; k--)
		;
	if (k == 0)
		return 0;
	if (rc->put[k - 1].what == P_ITEM)
		*v = rc->it[rc->put[k - 1].i];
	else if (rc->put[k - 1].what == P_LITEM)
		*v = r->rec[rc->put[k - 1].i];
	else
		return 0;
	return !is_cont(v); /* a list of the record: not made yet */
}

/* A scalar, or a memo fetch of one or of an id, at *p: 1 and *p past it,
 * or 0. Each byte of the input is read once, into a local that is then
 * checked and used: the file is a shared mapping its owner may rewrite
 * while we read it, and a length read again after its check could take
 * *p past the end (doc/SECURITY.md, "While mapped"). */
static inline __attribute__((always_inline)) int
rec_scalar(struct pkl_reader *r, struct rec *rc, size_t *p,
    struct pkl_value *v)
{
	const uint8_t *buf = r->buf;
	size_t len = r->len, q = *p + 1, k;
	uint8_t op = buf[*p];

	v->cls = 0;
	v->flags = 0;
	v->len = 0;
	/* compares in the order of how often each comes, not a switch: an
	 * indirect jump per value cost a seventh of this path */
	if (op == PKL_OP_LONG_BINGET) {
		if (len - q < 4 || !rec_fetch(r, rc, le(buf + q, 4), v))
			return 0;
		q += 4;
	} else if (op == PKL_OP_BINGET) {
		if (q >= len || !rec_fetch(r, rc, buf[q], v))
			return 0;
		q += 1;
	} else if (op == PKL_OP_LONG1) {
		if (q >= len)
			return 0;
		k = buf[q];
		if (k > len - q - 1)
			return 0;
		q++;
		if (k >= 1 && k <= 8 && len - q >= 8)
			long_le8(buf + q, (unsigned)k, v);
		else
			pkl_decode_long(buf + q, k, v);
		q += k;
	} else if (op == PKL_OP_BININT) {
		if (len - q < 4)
			return 0;
		v->kind = PKL_INT;
		v->v.u = (uint64_t)(int64_t)(int32_t)(uint32_t)le(buf + q, 4);
		q += 4;
	} else if (op == PKL_OP_BININT1) {
		if (q >= len)
			return 0;
		v->kind = PKL_INT;
		v->v.u = buf[q];
		q += 1;
	} else if (op == PKL_OP_SHORT_BINUNICODE) {
		if (q >= len)
			return 0;
		k = buf[q];
		if (k > len - q - 1)
			return 0;
		v->kind = PKL_STR;
		v->len = (uint32_t)k;
		v->v.off = q + 1;
		q += 1 + k;
	} else if (op == PKL_OP_BININT2) {
		if (len - q < 2)
			return 0;
		v->kind = PKL_INT;
		v->v.u = le(buf + q, 2);
		q += 2;
	} else if (op == PKL_OP_BINUNICODE) {
		if (len - q < 4)
			return 0;
		k = (size_t)le(buf + q, 4);
		if (k > len - q - 4)
			return 0;
		v->kind = PKL_STR;
		v->len = (uint32_t)k;
		v->v.off = q + 4;
		q += 4 + k;
	} else if (op == PKL_OP_NONE) {
		v->kind = PKL_NONE;
		v->v.u = 0;
	} else if (op == PKL_OP_BINFLOAT) {
		if (len - q < 8)
			return 0;
		v->kind = PKL_FLOAT;
		v->v.f = binfloat(buf + q);
		q += 8;
	} else if (op == PKL_OP_NEWTRUE || op == PKL_OP_NEWFALSE) {
		v->kind = PKL_BOOL;
		v->v.u = op == PKL_OP_NEWTRUE;
	} else {
		return 0;
	}
	*p = q;
	rc->ops++;
	return 1;
}

/* One item of a list of the record, at *p: 1, or 0 if it is no scalar.
 * (A list of C++ frames is a hundred memo fetches: this is its loop.) */
static inline __attribute__((always_inline)) int
rec_list_item(struct pkl_reader *r, struct rec *rc, size_t *p)
{
	if (rc->nli >= REC_LIST_MAX)
		return 0;
	XGROW(r->rec, r->cap_rec, rc->nli + 1);
	if (!rec_scalar(r, rc, p, &r->rec[rc->nli]))
		return 0;
	rc->nli++;
	return 1;
}

/* A run of memo fetches of ids and strings from *q into r->rec: a list of
 * C++ frames is a hundred of them, so they get a loop with everything in
 * registers, as in the VM's fetch_run() (pkl_reader.c). Stops before
 * anything else, with *q at it. */
static inline __attribute__((always_inline)) void
rec_fetch_run(struct pkl_reader *r, struct rec *rc, size_t *q)
{
	const uint8_t *buf = r->buf;
	const uint32_t *memo = r->memo;
	const uint64_t *mbase = r->mbase;
	size_t len = r->len, p = *q, top = r->memo_top, n = rc->nli, at;
	size_t end = r->cap_rec < REC_LIST_MAX ? r->cap_rec : REC_LIST_MAX;
	struct pkl_value *out = r->rec;
	uint64_t idx;
	uint32_t m;
	uint8_t op;

	while (n < end && p < len) {
		op = buf[p];
		if (op == PKL_OP_BINGET && len - p >= 2) {
			idx = buf[p + 1];
			at = p + 2;
		} else if (op == PKL_OP_LONG_BINGET && len - p >= 5) {
			idx = le(buf + p + 1, 4);
			at = p + 5;
		} else {
			break;
		}
		if (idx >= top)
			break;
		m = memo[idx];
		if (!slot_id_or_str(m, idx, mbase, &out[n]))
			break;
		n++;
		p = at;
	}
	rc->ops += n - rc->nli;
	rc->nli = n;
	*q = p;
}

/* ---- lists seen before ----------------------------------------------------
 *
 * Most trace entries bring a list of their frames, the same frames as
 * an entry before them (a C++ stack is a hundred memo fetches of frame
 * dicts: reading them one by one and interning them was a third of a
 * parse). A list that is one batch of memo fetches of ids and strings,
 * "MARK (BINGET|LONG_BINGET)* APPENDS", with the same bytes as one seen
 * while no memo slot changed in place, has the same items: the sink's
 * answer for that one (take_items()) is its answer, and its items are
 * read only where the list turns out to be more than that batch or of
 * another class. The bytes are scanned (each opcode and its operand's
 * length, no memo slot), hashed, and compared with those of the list
 * remembered under the hash: equal bytes, never the hash alone. */

#define SEEN_N 4096         /* lists remembered, by hash */
#define SEEN_MIN 4          /* fetches: fewer are read as fast as this */
#define SEEN_MAX_LEN 8192   /* bytes of one */

/* The batch of memo fetches at q (its MARK): its length, and its opcodes
 * in *ops; 0 when it is not one that can be remembered. */
static uint32_t
seen_scan(const uint8_t *buf, size_t len, size_t q, uint32_t *ops)
{
	size_t p = q + 1, lim = len - q > SEEN_MAX_LEN ? q + SEEN_MAX_LEN
						       : len;
	uint32_t n = 0;

	for (;;) {
		if (p < lim && buf[p] == PKL_OP_LONG_BINGET && lim - p > 5)
			p += 5;
		else if (p < lim && buf[p] == PKL_OP_BINGET && lim - p > 2)
			p += 2;
		else
			break;
		n++;
	}
	if (n < SEEN_MIN || p >= lim || buf[p] != PKL_OP_APPENDS)
		return 0;
	*ops = n + 2;
	return (uint32_t)(p + 1 - q);
}

/* The entry for l's batch, when it is a list seen before with the same
 * bytes; NULL otherwise. */
static const struct rec_seen *
seen_find(const struct pkl_reader *r, const struct rec_list *l)
{
	const struct rec_seen *e;

	if (r->seen == NULL)
		return NULL;
	e = &r->seen[l->bhash % SEEN_N];
	if (!e->set || e->hash != l->bhash || e->len != l->blen ||
	    e->gen != r->memo_gen || e->off > r->len ||
	    e->len > r->len - e->off ||
	    memcmp(r->buf + e->off, r->buf + l->body, l->blen) != 0)
		return NULL;
	return e;
}

/* Remembers what the sink made of list l, one batch of memo fetches. */
static void
seen_put(struct pkl_reader *r, const struct rec_list *l, uint8_t cls,
    uint64_t id, uint8_t id_cls)
{
	struct rec_seen *e;

	if (r->seen == NULL)
		r->seen = xcalloc(SEEN_N, sizeof *r->seen);
	e = &r->seen[l->bhash % SEEN_N];
	e->hash = l->bhash;
	e->gen = r->memo_gen;
	e->off = l->body;
	e->len = l->blen;
	e->ops = l->bops;
	e->id = id;
	e->cls = cls;
	e->id_cls = id_cls;
	e->set = 1;
}

/* The items of l, a list seen before whose items were not read, read now
 * into r->rec from its bytes (which were fetches of ids and strings then,
 * and the memo has not changed since): 0, or -1 if they are not. */
static int
seen_items(struct pkl_reader *r, struct rec *rc, struct rec_list *l)
{
	const uint8_t *buf = r->buf;
	size_t p = l->body + 1, end = l->body + l->blen - 1, idx;

	XGROW(r->rec, r->cap_rec, rc->nli + (l->bops - 2));
	l->first = rc->nli;
	while (p < end) {
		uint8_t op = buf[p];

		/* each byte read once (the file may change under us) */
		if (op == PKL_OP_BINGET && end - p >= 2) {
			idx = buf[p + 1];
			p += 2;
		} else if (op == PKL_OP_LONG_BINGET && end - p >= 5) {
			idx = (size_t)le(buf + p + 1, 4);
			p += 5;
		} else {
			return -1;
		}
		if (idx >= r->memo_top || rc->nli >= r->cap_rec ||
		    !slot_id_or_str(r->memo[idx], idx, r->mbase,
		    &r->rec[rc->nli]))
			return -1;
		rc->nli++;
	}
	l->n = rc->nli - l->first;
	l->hit = 0;
	return l->n == (size_t)(l->bops - 2) ? 0 : -1;
}

/* Whether an "item [memo store] APPEND" of list l comes at q, read
 * without keeping anything: after a list seen before, the list's end is
 * the next key of the record, which is no such thing. */
static int
item_appended(struct pkl_reader *r, struct rec *rc, size_t q)
{
	uint64_t ops = rc->ops, slot = rc->slot;
	size_t np = rc->np;
	struct pkl_value v;
	int t = 0;

	if (rec_scalar(r, rc, &q, &v) &&
	    skip_frames(r->buf, r->len, &q, &rc->ops) &&
	    rec_memo(rc, r->buf, r->len, &q, P_LITEM, 0) >= 0 &&
	    skip_frames(r->buf, r->len, &q, &rc->ops))
		t = r->buf[q] == PKL_OP_APPEND;
	rc->ops = ops;
	rc->np = np;
	rc->slot = slot;
	return t;
}

/*
 * A list as the value of the record's item rc->n, from just after its
 * EMPTY_LIST: [memo store] then any number of "MARK (item [memo store])*
 * APPENDS" and "item [memo store] APPEND", items being scalars. 1 with *p
 * past it, or 0.
 */
static int
rec_list(struct pkl_reader *r, struct rec *rc, size_t *p)
{
	const uint8_t *buf = r->buf;
	size_t len = r->len, q = *p, from, np, save;
	uint64_t slot, ops;
	struct rec_list *l;
	int t;

	if (rc->nl == REC_LISTS || !(rc->n & 1))
		return 0;
	l = &rc->list[rc->nl];
	l->item = (uint32_t)rc->n;
	l->first = rc->nli;
	l->hit = l->single = 0;
	l->blen = 0;
	if (!skip_frames(buf, len, &q, &rc->ops) ||
	    rec_memo(rc, buf, len, &q, P_LIST, rc->nl) < 0)
		return 0;
	if (q < len && buf[q] == PKL_OP_MARK &&
	    (l->blen = seen_scan(buf, len, q, &l->bops)) > 0) {
		const struct rec_seen *e;

		l->body = q;
		l->bhash = sv_xxh3(buf + q, l->blen);
		l->single = 1;
		if ((e = seen_find(r, l)) != NULL) {
			l->seen = *e;
			l->hit = 1;
			l->n = 0;
			rc->ops += l->bops;
			q += l->blen;
		}
	}
	for (;;) {
		if (!skip_frames(buf, len, &q, &rc->ops))
			return 0;
		if (buf[q] == PKL_OP_MARK) {
			/* more than the batch seen before: its items first */
			if (l->hit) {
				if (seen_items(r, rc, l) != 0)
					return 0;
			} else if (l->single && q != l->body)
				l->single = 0;
			q++;
			rc->ops++;
			from = rc->nli;
			if (r->cap_rec - rc->nli < 1024)
				XGROW(r->rec, r->cap_rec, rc->nli + 1024);
			for (;;) {
				rec_fetch_run(r, rc, &q);
				if (!skip_frames(buf, len, &q, &rc->ops))
					return 0;
				if (buf[q] == PKL_OP_APPENDS)
					break;
				/* not all fetches of ids and strings (a boxed
				 * value, or no room): not one to remember, as
				 * seen_items() could not read it again */
				l->single = 0;
				t = rec_memo(rc, buf, len, &q, P_LITEM,
				    rc->nli - 1);
				if (t < 0 || (t > 0 && rc->nli == from))
					return 0;
				if (t == 0 && !rec_list_item(r, rc, &q))
					return 0;
			}
			q++;
			rc->ops++;
			continue;
		}
		/* "item APPEND", or past the list's end (its next key) */
		if (l->hit || l->single) {
			if (!item_appended(r, rc, q))
				break;
			if (l->hit && seen_items(r, rc, l) != 0)
				return 0;
			l->single = 0;
		}
		save = q;
		np = rc->np;
		slot = rc->slot;
		ops = rc->ops;
		if (rec_list_item(r, rc, &q)) {
			if (!skip_frames(buf, len, &q, &rc->ops))
				return 0;
			t = rec_memo(rc, buf, len, &q, P_LITEM, rc->nli - 1);
			if (t < 0 || !skip_frames(buf, len, &q, &rc->ops))
				return 0;
			if (buf[q] == PKL_OP_APPEND) {
				q++;
				rc->ops++;
				continue;
			}
			rc->nli--;
		}
		q = save;
		rc->np = np;
		rc->slot = slot;
		rc->ops = ops;
		break;
	}
	if (!l->hit)
		l->n = rc->nli - l->first;
	rc->nl++;
	*p = q;
	return 1;
}

/*
 * The record read whole becomes what the general path would have made of
 * it by its SETITEMS: its lists made and taken, the memo stores done,
 * then the record handed to take_record(). setitems is its offset.
 */
static int
rec_commit(struct pkl_reader *r, struct rec *rc, uint8_t cls,
    size_t setitems, struct sv_error *err)
{
	static const struct pkl_value none;
	struct pkl_value parent;
	uint32_t taken = 0; /* bit i: list i taken from its items */
	size_t i;
	int t;

	for (i = 0; i < rc->nl; i++) {
		struct rec_list *l = &rc->list[i];
		uint8_t lcls = r->sink->classify(r->ctx, r, cls,
		    &rc->it[l->item - 1], 0, PKL_LIST);
		struct pkl_value v;
		struct cont *c;

		if (l->hit && (r->sink->take_items == NULL ||
		    l->seen.cls != lcls) && seen_items(r, rc, l) != 0) {
			t = pkl_fail(r, err, SV_ERR_FORMAT,
			    "a list changed while it was read");
			goto failed;
		}
		if (r->sink->take_items != NULL) {
			uint64_t id = l->hit ? l->seen.id : 0;
			uint8_t id_cls = l->hit ? l->seen.id_cls : 0;

			/* a list seen before: the sink's answer then */
			t = l->hit ? PKL_ID_REPLACE : r->sink->take_items(
			    r->ctx, r, lcls, r->rec + l->first, l->n, &id,
			    &id_cls, err);
			if (t < 0)
				goto failed;
			if (t == PKL_ID_REPLACE && !l->hit && l->single)
				seen_put(r, l, lcls, id, id_cls);
			if (t == PKL_ID_REPLACE) {
				/* stored field by field: a value built on
				 * the stack by its fields and copied whole
				 * read back 16 bytes that the stores before
				 * it could not forward, a stall of a third
				 * of this function (perf) */
				struct pkl_value *d = &rc->it[l->item];

				d->kind = PKL_ID;
				d->cls = id_cls;
				d->flags = 0;
				d->len = 0;
				d->v.id = id;
				taken |= 1u << i;
				continue;
			}
		}
		v = pkl_cont_new(r, PKL_LIST, lcls);
		c = cont_of(r, &v);
		if (l->n > 0)
			pkl_cont_push_run(c, r->rec + l->first, l->n);
		c->count = l->n;
		rc->it[l->item] = v;
	}
	for (i = 0; i < rc->np; i++) {
		const struct rec_put *u = &rc->put[i];
		const struct pkl_value *v =
		    u->what == P_DICT ? &none :
		    u->what == P_ITEM ? &rc->it[u->i] :
		    u->what == P_LIST ? &rc->it[rc->list[u->i].item] :
		    &r->rec[u->i];
		uint32_t m = 0;

		/* the record's own slot and a short string, in place: each
		 * entry of a trace has them */
		if (u->what == P_DICT)
			m = M_GONE;
		else if (v->kind == PKL_STR && u->slot < r->memo_cap)
			m = memo_str_slot(&r->mbase[u->slot >> MEMO_PAGE_BITS],
			    v->v.off, v->len);
		if (m != 0 && memo_put_fresh(r, u->slot, m))
			continue;
		if (pkl_memo_store(r, u->slot, v, err) != 0)
			return -1;
		if (u->what == P_DICT)
			r->memo[u->slot] = M_GONE;
	}
	r->op_pos = setitems;
	/* a parent that names no container: the record is not one */
	memset(&parent, 0, sizeof parent);
	parent.kind = PKL_DICT;
	parent.cls = cls;
	parent.v.ref = UINT64_MAX;
	for (i = 0; i < rc->nl; i++) {
		struct pkl_value *v = &rc->it[rc->list[i].item];
		uint64_t id = 0;
		uint8_t id_cls = 0;

		if (taken & 1u << i)
			continue;
		t = r->sink->take(r->ctx, r, cls, &parent, v - 1, 0, v, &id,
		    &id_cls, err);
		if (t < 0)
			goto failed;
		if (t == PKL_KEEP || t == PKL_SKIP) /* all go to take_record */
			continue;
		pkl_consume(r, cont_of(r, v), v, t, id, id_cls);
		pkl_decref(r, v);
		memset(v, 0, sizeof *v);
		if (t == PKL_ID_REPLACE) {
			v->kind = PKL_ID;
			v->cls = id_cls;
			v->v.id = id;
		}
	}
	t = r->sink->take_record(r->ctx, r, cls, rc->it, rc->n / 2, err);
	for (i = 0; i < rc->nl; i++) /* lists it kept */
		pkl_decref(r, &rc->it[rc->list[i].item]);
	if (t == 0)
		return 0;
failed:
	if (err != NULL && err->offset == SV_NO_OFFSET)
		err->offset = r->op_pos;
	return -1;
}

/* The record's items from *p while they are the common ones (memo fetches
 * of ids and strings, ints, short strings), with everything in registers;
 * stops before anything else, with *p at it.
 *
 * Fetches remembered by place: a trace entry's keys are memo fetches of
 * the same strings in the same order as the entry before it's, so the
 * fetch read as item i is remembered (r->tmpl[i]): an item whose opcode
 * and operand are the same bytes, while no memo slot has changed in
 * place since (memo_gen), is the same value, without the slot's lookup
 * and decoding. The bytes are compared, never assumed. */
static inline __attribute__((always_inline)) void
rec_item_run(struct pkl_reader *r, struct rec *rc, size_t *q)
{
	const uint8_t *buf = r->buf;
	const uint32_t *memo = r->memo;
	const uint64_t *mbase = r->mbase;
	size_t len = r->len, p = *q, top = r->memo_top, n = rc->n, k;
	uint64_t gen = r->memo_gen, w, mask;
	struct rec_tmpl *t;
	struct pkl_value *v;
	uint64_t idx;
	uint32_t m;
	uint8_t op;

	for (; n < REC_ITEMS && len - p >= 9; n++) {
		/* 9 bytes: the longest operand read here but LONG1's, which
		 * checks its own */
		v = &rc->it[n];
		w = le(buf + p, 8);
		t = &r->tmpl[n % REC_TMPL];
		if (((w & t->mask) | REC_TMPL_TAG) == t->word &&
		    t->gen == gen) {
			*v = t->v;
			p += t->k;
			continue;
		}
		v->cls = 0;
		v->flags = 0;
		v->len = 0;
		op = (uint8_t)w;
		switch (op) {
		case PKL_OP_BINGET:
		case PKL_OP_LONG_BINGET:
			if (op == PKL_OP_BINGET) {
				idx = (uint8_t)(w >> 8);
				k = 2;
				mask = 0xffff;
			} else {
				idx = (uint32_t)(w >> 8);
				k = 5;
				mask = 0xffffffffffull;
			}
			if (idx >= top)
				goto out;
			m = memo[idx];
			if (!slot_id_or_str(m, idx, mbase, v))
				goto out;
			/* made again, not copied from *v: a 16-byte load of
			 * the fields just stored stalls (a ninth of this
			 * function, perf) */
			(void)slot_id_or_str(m, idx, mbase, &t->v);
			t->word = (w & mask) | REC_TMPL_TAG;
			t->mask = mask;
			t->gen = gen;
			t->k = k;
			p += k;
			break;
		case PKL_OP_LONG1:
			k = buf[p + 1];
			if (k < 1 || k > 8 || len - p - 2 < 8)
				goto out;
			long_le8(buf + p + 2, (unsigned)k, v);
			p += 2 + k;
			break;
		case PKL_OP_BININT:
			v->kind = PKL_INT;
			v->v.u = (uint64_t)(int64_t)(int32_t)(uint32_t)
			    le(buf + p + 1, 4);
			p += 5;
			break;
		case PKL_OP_BININT1:
			v->kind = PKL_INT;
			v->v.u = buf[p + 1];
			p += 2;
			break;
		case PKL_OP_BININT2:
			v->kind = PKL_INT;
			v->v.u = le(buf + p + 1, 2);
			p += 3;
			break;
		case PKL_OP_SHORT_BINUNICODE:
			k = buf[p + 1];
			if (k > len - p - 2)
				goto out;
			v->kind = PKL_STR;
			v->len = (uint32_t)k;
			v->v.off = p + 2;
			p += 2 + k;
			break;
		default:
			goto out;
		}
	}
out:
	rc->ops += n - rc->n;
	rc->n = n;
	*q = p;
}

/* ---- records of a shape seen before --------------------------------------
 *
 * A trace's entries are written alike: the same opcodes, the keys as the
 * same memo fetches, values of the same widths; only the values' operands
 * differ. A record read whole leaves its shape: its bytes, a mask of those
 * that must be the same (opcodes, length bytes, the keys' fetches), and
 * where each value's operand is. A record whose bytes under the mask are
 * the shape's, while no memo slot has changed in place, has the shape's
 * keys, and its values are read from their operands alone: a compare of
 * 8 bytes at a time and a value per variable item, where the general loop
 * decodes every opcode and takes a branch on what it finds (an entry's
 * action, the width of its size, a key fetched by the same bytes or not:
 * data the processor cannot predict, which cost more than the reading).
 * A record whose last value is a list (a stack's frames) has the shape
 * of the bytes up to the list's EMPTY_LIST, and its list is read as the
 * general loop reads one. Any record that differs (a FRAME inside it, a
 * wider value, a fetch of a slot that is no id or string, a value after
 * its list) is read by the general loop, and may leave its shape in turn.
 * The bytes under the mask are compared, never assumed; an operand's
 * bytes are read once, by the value made of them.
 */

#define SHAPES 8          /* shapes remembered */
#define SHAPE_MAX 256     /* bytes of a record with a shape */
#define SHAPE_ITEMS 48    /* its keys and values */
#define SHAPE_TRIES 64    /* records missed before shapes are made rarely */

/* How a value of a shape is read from its operand. */
enum { S_FETCH1, S_FETCH4, S_INT1, S_INT2, S_INT4, S_LONG1, S_STR, S_FLOAT };

struct rec_shape {
	uint64_t word[SHAPE_MAX / 8], mask[SHAPE_MAX / 8];
	uint64_t gen;  /* memo_gen when made: its keys' fetches hold */
	uint64_t ops;  /* opcodes but its SETITEMS */
	uint32_t len;  /* bytes from after the EMPTY_DICT to past SETITEMS */
	uint32_t nw;   /* words of them, 0: no shape */
	uint32_t n, nv, np;
	int list;      /* its last value a list: its last byte EMPTY_LIST */
	int keys;      /* its keys are in it (fetches), not read each time */
	uint64_t id;   /* its number among the reader's shapes, from 1 */
	struct {
		uint16_t at; /* the operand's offset */
		uint8_t i, how, w;
	} var[SHAPE_ITEMS];
	struct rec_put put[SHAPE_ITEMS + 1]; /* slots from the first fresh */
	struct pkl_value it[SHAPE_ITEMS];    /* the keys; values as read */
};

/* Sets bytes [from, to) of s's mask, offsets from the record's p. */
static void
shape_mask(struct rec_shape *s, size_t p, size_t from, size_t to)
{
	for (from -= p, to -= p; from < to; from++)
		s->mask[from / 8] |= 0xffull << (from % 8 * 8);
}

/* A variable value i of s at operand offset at. */
static void
shape_var(struct rec_shape *s, size_t i, uint8_t how, size_t at, size_t w)
{
	if (!(i & 1))
		s->keys = 0;
	s->var[s->nv].i = (uint8_t)i;
	s->var[s->nv].how = how;
	s->var[s->nv].at = (uint16_t)at;
	s->var[s->nv++].w = (uint8_t)w;
}

/*
 * The shape of the record at p (just after its EMPTY_DICT) to its
 * SETITEMS at set, read whole by the general loop and not committed yet
 * (its memo stores not done): "[MEMOIZE] MARK (item [MEMOIZE])* SETITEMS"
 * with items memo fetches, ints, strings, floats, None and bools. Its
 * bytes are read again here, each once, so a shape made of bytes that
 * changed since is a wrong guess that later records will not match, not
 * a wrong record. 0, or -1 for a record without a shape.
 */
static int
shape_make(struct pkl_reader *r, struct rec_shape *s, size_t p, size_t set,
    int list)
{
	const uint8_t *buf = r->buf;
	size_t q = p, n = 0, end, k, at, fixed, w;
	uint64_t idx;
	uint8_t op;

	/* set is past the shape of a record that ends with a list */
	if (set < p || r->len - p < SHAPE_MAX + 8)
		return -1;
	end = set - p < SHAPE_MAX ? set + 1 : p + SHAPE_MAX;
	memset(s, 0, offsetof(struct rec_shape, var));
	s->keys = 1;
	if (buf[q] == PKL_OP_MEMOIZE) {
		s->put[s->np].what = P_DICT;
		s->put[s->np++].i = 0;
		q++;
		s->ops++;
	}
	if (buf[q] != PKL_OP_MARK)
		return -1;
	q++;
	s->ops++;
	shape_mask(s, p, p, q);
	for (;;) {
		if (q >= end)
			return -1;
		op = buf[q];
		at = q + 1 - p;
		if (op == PKL_OP_SETITEMS) {
			if (q != set)
				return -1;
			shape_mask(s, p, q, q + 1);
			q++;
			break;
		}
		if (op == PKL_OP_MEMOIZE) {
			/* an item stored in more slots than a shape holds:
			 * none (the general loop takes up to REC_PUTS) */
			if (n == 0 || s->np == SHAPE_ITEMS + 1)
				return -1;
			s->put[s->np].what = P_ITEM;
			s->put[s->np++].i = (uint32_t)(n - 1);
			shape_mask(s, p, q, q + 1);
			q++;
			s->ops++;
			continue;
		}
		if (n == SHAPE_ITEMS)
			return -1;
		k = 0;     /* operand bytes */
		fixed = 1; /* bytes that must be the same: the opcode */
		memset(&s->it[n], 0, sizeof s->it[n]);
		switch (op) {
		case PKL_OP_BINGET:
		case PKL_OP_LONG_BINGET:
			k = op == PKL_OP_BINGET ? 1 : 4;
			if (end - q <= k)
				return -1;
			if (n & 1) {
				shape_var(s, n, k == 1 ? S_FETCH1 : S_FETCH4,
				    at, 0);
				break;
			}
			/* a key: the same slot, the same value */
			idx = le(buf + q + 1, k);
			if (idx >= r->memo_top ||
			    !slot_id_or_str(r->memo[idx], idx, r->mbase,
			    &s->it[n]))
				return -1;
			fixed += k;
			break;
		case PKL_OP_BININT1:
			k = 1;
			shape_var(s, n, S_INT1, at, k);
			break;
		case PKL_OP_BININT2:
			k = 2;
			shape_var(s, n, S_INT2, at, k);
			break;
		case PKL_OP_BININT:
			k = 4;
			shape_var(s, n, S_INT4, at, k);
			break;
		case PKL_OP_BINFLOAT:
			k = 8;
			shape_var(s, n, S_FLOAT, at, k);
			break;
		case PKL_OP_LONG1:
		case PKL_OP_SHORT_BINUNICODE:
			if (end - q <= 1)
				return -1;
			w = buf[q + 1];
			if (op == PKL_OP_LONG1 && (w < 1 || w > 8))
				return -1;
			shape_var(s, n, op == PKL_OP_LONG1 ? S_LONG1 : S_STR,
			    at + 1, w);
			k = 1 + w;
			fixed = 2; /* and the length */
			break;
		case PKL_OP_EMPTY_LIST:
			if (!list || !(n & 1))
				return -1;
			/* the shape ends with it: its items are read as
			 * they come */
			shape_mask(s, p, q, q + 1);
			s->ops++;
			n++;
			end = q + 1;
			q = end;
			s->list = 1;
			goto done;
		case PKL_OP_NONE:
			s->it[n].kind = PKL_NONE;
			break;
		case PKL_OP_NEWTRUE:
		case PKL_OP_NEWFALSE:
			s->it[n].kind = PKL_BOOL;
			s->it[n].v.u = op == PKL_OP_NEWTRUE;
			break;
		default:
			return -1;
		}
		if (end - q <= k)
			return -1;
		shape_mask(s, p, q, q + fixed);
		q += 1 + k;
		s->ops++;
		n++;
	}
done:
	if (n == 0 || (n & 1) || q != end)
		return -1;
	s->len = (uint32_t)(end - p);
	s->nw = (s->len + 7) / 8;
	s->n = (uint32_t)n;
	s->gen = r->memo_gen;
	for (k = 0; k < s->nw; k++)
		s->word[k] = le(buf + p + 8 * k, 8) & s->mask[k];
	return 0;
}

/* Remembers the shape of the record at p to its SETITEMS at set, read by
 * the general loop, in place of the oldest; records that keep missing
 * every shape make one only now and then. */
static void
shape_learn(struct pkl_reader *r, size_t p, size_t set, int list)
{
	struct rec_shape *s;

	if (r->shapes == NULL)
		r->shapes = xcalloc(SHAPES + 1, sizeof *r->shapes);
	if (r->shape_misses++ >= SHAPE_TRIES &&
	    r->shape_misses % SHAPE_TRIES != 0)
		return;
	/* made in the spare, kept only when it is one */
	s = &r->shapes[SHAPES];
	if (shape_make(r, s, p, set, list) != 0)
		return;
	s->id = ++r->shapes_made;
	r->shapes[r->shape_next] = *s;
	r->shape_at = r->shape_next;
	r->shape_next = (r->shape_next + 1) % SHAPES;
}

/* A value made of its fields (stores the fields' widths: see
 * rec_item_run() on a copy of a whole value). */
static inline __attribute__((always_inline)) void
shape_value(struct pkl_value *v, uint8_t kind, uint32_t len, uint64_t u)
{
	v->kind = kind;
	v->cls = 0;
	v->flags = 0;
	v->len = len;
	v->v.u = u;
}

/* The record at p (just after its EMPTY_DICT) read by a shape remembered:
 * 1 with its items, memo stores and opcodes in *rc and *end past its
 * SETITEMS; 0, with nothing of *rc changed, when it has none of them. */
static inline __attribute__((always_inline)) int
shape_read(struct pkl_reader *r, struct rec *rc, size_t p, size_t *end)
{
	const uint8_t *buf = r->buf;
	struct rec_shape *s;
	uint64_t d, idx;
	unsigned j, at;
	uint32_t i;

	for (j = 0; j < SHAPES; j++) {
		at = (r->shape_at + j) % SHAPES;
		s = &r->shapes[at];
		/* the first and the last words first: where a record
		 * of another shape shows it */
		if (s->nw == 0 || s->gen != r->memo_gen ||
		    r->len - p < (size_t)s->nw * 8 + 8 ||
		    ((le(buf + p, 8) ^ s->word[0]) & s->mask[0]) != 0 ||
		    ((le(buf + p + 8 * (s->nw - 1), 8) ^ s->word[s->nw - 1]) &
		    s->mask[s->nw - 1]) != 0)
			continue;
		d = 0;
		for (i = 1; i + 1 < s->nw; i++)
			d |= (le(buf + p + 8 * i, 8) ^ s->word[i]) &
			    s->mask[i];
		if (d != 0)
			continue;
		for (i = 0; i < s->nv; i++) {
			const uint8_t *o = buf + p + s->var[i].at;
			struct pkl_value *v = &s->it[s->var[i].i];

			switch (s->var[i].how) {
			case S_FETCH1:
			case S_FETCH4:
				idx = s->var[i].how == S_FETCH1 ? o[0]
								: le(o, 4);
				if (idx >= r->memo_top ||
				    !slot_id_or_str(r->memo[idx], idx,
				    r->mbase, v))
					return 0;
				break;
			case S_INT1:
				shape_value(v, PKL_INT, 0, o[0]);
				break;
			case S_INT2:
				shape_value(v, PKL_INT, 0, le(o, 2));
				break;
			case S_INT4:
				shape_value(v, PKL_INT, 0, (uint64_t)(int64_t)
				    (int32_t)(uint32_t)le(o, 4));
				break;
			case S_LONG1:
				shape_value(v, PKL_INT, 0, long_le(o,
				    s->var[i].w));
				break;
			case S_STR:
				shape_value(v, PKL_STR, s->var[i].w,
				    (uint64_t)(o - buf));
				break;
			default:
				shape_value(v, PKL_FLOAT, 0, 0);
				v->v.f = binfloat(o);
				break;
			}
		}
		rc->it = s->it;
		rc->n = s->n - (uint32_t)s->list;
		for (i = 0; i < s->np; i++) {
			rc->put[i].slot = rc->slot++;
			rc->put[i].i = s->put[i].i;
			rc->put[i].what = s->put[i].what;
		}
		rc->np = s->np;
		rc->ops += s->ops;
		r->shape_at = at;
		*end = p + s->len;
		return 1;
	}
	return 0;
}

/* An empty record being read whole by r. */
static inline __attribute__((always_inline)) void
rec_init(struct rec *rc, const struct pkl_reader *r)
{
	rc->n = rc->np = rc->nl = rc->nli = 0;
	rc->slot = r->memo_used;
	rc->ops = 0;
	rc->it = rc->it_own;
}

/* The record at *ppos read by a shape remembered, as pkl_read_record()
 * would read it: 1 with it taken, -1 on error, or 0 when no shape is its,
 * with *rc to be made empty again. A shape that ends with a list reads
 * the list as the general loop does (rec_list()), then the record's end. */
static inline __attribute__((always_inline)) int
rec_shaped(struct pkl_reader *r, struct rec *rc, uint8_t cls, size_t *ppos,
    uint64_t *pops, struct sv_error *err)
{
	const struct rec_shape *s;
	size_t set;
	int t;

	if (!shape_read(r, rc, *ppos, &set))
		return 0;
	s = &r->shapes[r->shape_at];
	if (s->list) {
		memset(&rc->it[rc->n], 0, sizeof rc->it[rc->n]);
		rc->it[rc->n].kind = PKL_LIST; /* made by rec_commit() */
		if (!rec_list(r, rc, &set) ||
		    !skip_frames(r->buf, r->len, &set, &rc->ops) ||
		    r->buf[set] != PKL_OP_SETITEMS)
			return 0;
		rc->n++;
		set++;
	}
	if (!pkl_record_done(r, set))
		return 0;
	r->shape_taking = s->keys ? s->id : 0;
	t = rec_commit(r, rc, cls, set - 1, err);
	r->shape_taking = 0;
	if (t != 0)
		return -1;
	r->shape_misses = 0;
	r->st.records_shaped++;
	set_taken(&r->stack[r->sp++]);
	*ppos = set;
	*pops += rc->ops + 1;
	return 1;
}

/*
 * The fast path for a record (pkl_sink.take_record), from just after its
 * EMPTY_DICT: reads the dict whole if it has the shape a pickler writes
 * for a dict of scalars and lists of scalars,
 *   [memo store] MARK (key|value [memo store])* SETITEMS
 * (FRAMEs anywhere; see rec_scalar() and rec_list()) where every memo
 * store takes the next fresh slot and the record is complete
 * (pkl_record_done()). Then rec_commit() and the placeholder left on the
 * stack, as the general path would end. Returns 1 so, with *ppos past
 * the SETITEMS; 0, having changed nothing, for anything else (the caller
 * builds the dict as usual); -1 on error.
 *
 * It starts on a cache line: its loop is half of a parse, and where the
 * linker happened to place it (a change in any other file moves it by
 * multiples of 16 bytes) moved the parse of a 1 GB file by 5%.
 */
int __attribute__((aligned(64)))
pkl_read_record(struct pkl_reader *r, uint8_t cls, size_t *ppos, uint64_t *pops,
    struct sv_error *err)
{
	const uint8_t *buf = r->buf;
	size_t len = r->len, p = *ppos;
	struct rec rc;
	int t;

	/* every store must take a fresh slot, and the stack must have room
	 * for all the general path would push */
	while (r->stack_cap - r->sp < REC_ITEMS + 2 &&
	    r->stack_cap < MAX_DEPTH)
		pkl_grow_stack(r, NULL);
	if (r->memo_used != r->memo_top ||
	    r->memo_used >= UINT32_MAX - REC_PUTS - 1 ||
	    r->stack_cap - r->sp < REC_ITEMS + 2)
		return 0;
	if (r->shapes != NULL) {
		rec_init(&rc, r);
		if ((t = rec_shaped(r, &rc, cls, ppos, pops, err)) != 0)
			return t;
	}
	rec_init(&rc, r);
	if (!skip_frames(buf, len, &p, &rc.ops))
		return 0;
	if ((t = rec_memo(&rc, buf, len, &p, P_DICT, 0)) < 0 ||
	    (t > 0 && !skip_frames(buf, len, &p, &rc.ops)))
		return 0;
	if (buf[p] != PKL_OP_MARK) {
		/* an empty record is complete as it stands */
		if (!pkl_record_done(r, p))
			return 0;
		if (rec_commit(r, &rc, cls, r->op_pos, err) != 0)
			return -1;
		set_taken(&r->stack[r->sp++]);
		*ppos = p;
		*pops += rc.ops;
		return 1;
	}
	p++;
	rc.ops++;
	for (;;) {
		rec_item_run(r, &rc, &p);
		if (!skip_frames(buf, len, &p, &rc.ops))
			return 0;
		if (rc.n == REC_ITEMS)
			return 0;
		if (rec_scalar(r, &rc, &p, &rc.it[rc.n])) {
			rc.n++;
			continue;
		}
		if (buf[p] == PKL_OP_SETITEMS)
			break;
		t = rec_memo(&rc, buf, len, &p, P_ITEM, rc.n - 1);
		if (t < 0 || (t > 0 && rc.n == 0))
			return 0;
		if (t > 0)
			continue;
		if (buf[p] == PKL_OP_EMPTY_LIST) {
			p++;
			rc.ops++;
			memset(&rc.it[rc.n], 0, sizeof rc.it[rc.n]);
			rc.it[rc.n].kind = PKL_LIST; /* made by rec_commit() */
			if (!rec_list(r, &rc, &p))
				return 0;
			rc.n++;
			continue;
		}
		return 0;
	}
	if (rc.n == 0 || (rc.n & 1) || !pkl_record_done(r, p + 1))
		return 0;
	if (rc.nl == 0 || (rc.nl == 1 && rc.list[0].item == rc.n - 1))
		shape_learn(r, *ppos, p, rc.nl == 1);
	if (rec_commit(r, &rc, cls, p, err) != 0)
		return -1;
	set_taken(&r->stack[r->sp++]);
	*ppos = p + 1;
	*pops += rc.ops + 1;
	return 1;
}
