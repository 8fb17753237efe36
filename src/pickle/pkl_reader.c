/*
 * The streaming pickle VM: the opcode loop and the general path of every
 * opcode. See pkl_reader.h for the contract, and pkl_int.h for the files
 * it is split into (the values, the memo, records read whole).
 *
 * Records (pkl_sink.take_record): a dict of a record class is taken when
 * the pickle has filled it. Most are read whole at their EMPTY_DICT by
 * pkl_read_record() (pkl_record.c), which builds no container. Those the
 * general path builds are taken at their SETITEM(S) by close_record().
 * Either way the record leaves a None flagged F_TAKEN on the stack, which
 * its list counts and does not store.
 *
 * What it does not do: text protocols 0/1 opcodes (INT, STRING, PUT, ...)
 * are refused; opcodes that import or call code (GLOBAL, REDUCE, BUILD,
 * ...) are refused with the opcode named; PROTO above 5 is refused.
 */
#include "config.h"

#include "pickle/pkl_reader.h"

#include <stdlib.h>
#include <string.h>

#include "pickle/pkl_int.h"
#include "pickle/pkl_ops.h"
#include "util/xalloc.h"

#define PROGRESS_STEP (1u << 20)

static const char *const op_names[256] = {
#define PKL_OP_NAME(id, byte, name, kind) [byte] = name,
    PKL_OPS_INFO(PKL_OP_NAME)
#undef PKL_OP_NAME
};
static const uint8_t op_kinds[256] = {
#define PKL_OP_KIND(id, byte, name, kind) [byte] = kind + 1,
    PKL_OPS_INFO(PKL_OP_KIND)
#undef PKL_OP_KIND
};

const char *
pkl_op_name(uint8_t op)
{
	return op_names[op];
}

/* ---- containers -------------------------------------------------------- */

static int
is_taken(const struct pkl_value *v)
{
	return v->kind == PKL_NONE && (v->flags & F_TAKEN);
}

static void
incref(struct pkl_reader *r, const struct pkl_value *v)
{
	struct cont *c = cont_of(r, v);

	if (c != NULL)
		c->refs++;
}

static void
cont_push(struct cont *c, const struct pkl_value *v)
{
	if (c->n == c->cap) {
		/* start at one item: a file of nested one-item lists costs
		 * two bytes per list and must not cost 128 bytes of items */
		c->cap = c->cap ? c->cap * 2 : 1;
		c->items = xreallocarray(c->items, c->cap, sizeof *c->items);
	}
	c->items[c->n++] = *v;
	if (is_cont(v))
		c->n_cont++;
}

/* ---- stack ------------------------------------------------------------- */

static inline int
push(struct pkl_reader *r, const struct pkl_value *v, struct sv_error *err)
{
	if (__builtin_expect(r->sp == r->stack_cap, 0) &&
	    pkl_grow_stack(r, err) != 0)
		return -1;
	r->stack[r->sp++] = *v;
	return 0;
}

static int
memo_put(struct pkl_reader *r, uint64_t idx, struct sv_error *err)
{
	if (r->sp == 0 || (r->n_marks > 0 && r->marks[r->n_marks - 1] == r->sp))
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "memo store with empty stack");
	return pkl_memo_store(r, idx, &r->stack[r->sp - 1], err);
}

static inline int
memo_get(struct pkl_reader *r, uint64_t idx, struct sv_error *err)
{
	struct pkl_value v;

	/* fast paths: interned ids (shared frames, stacks) and strings (dict
	 * keys) are almost every memo fetch in a real file */
	if (__builtin_expect(idx < r->memo_top, 1)) {
		if (slot_id_or_str(r->memo[idx], idx, r->mbase, &v))
			return push(r, &v, err);
	}
	if (idx >= r->memo_top || (r->memo[idx] & 7) == M_EMPTY)
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "memo index %llu not set", (unsigned long long)idx);
	if (pkl_memo_decode(r, idx, r->memo[idx], &v, err) != 0)
		return -1;
	incref(r, &v);
	return push(r, &v, err);
}

static size_t
top_mark(const struct pkl_reader *r)
{
	return r->n_marks > 0 ? r->marks[r->n_marks - 1] : 0;
}

/* Values above the top mark; fails if there is no value. */
static int
need(struct pkl_reader *r, size_t n, struct sv_error *err)
{
	if (r->sp - top_mark(r) < n)
		return pkl_fail(r, err, SV_ERR_FORMAT, "stack underflow");
	return 0;
}

static int
pop_mark(struct pkl_reader *r, size_t *mark, struct sv_error *err)
{
	if (r->n_marks == 0)
		return pkl_fail(r, err, SV_ERR_FORMAT, "no MARK on the stack");
	*mark = r->marks[--r->n_marks];
	return 0;
}

/* ---- containers taken --------------------------------------------------- */

/* True for a container that has never received an item. */
static int
unfilled(const struct pkl_reader *r, const struct pkl_value *v, uint8_t kind)
{
	struct cont *c = cont_of(r, v);

	return c != NULL && c->kind == kind && c->n == 0 && c->count == 0;
}

/*
 * Class for a container of the given kind about to be pushed. Where it
 * will land is decided by what follows, so the candidate parents CPython's
 * pickler can produce are offered to the sink in turn, and the first class
 * it accepts (non-zero) wins:
 *   1. `list X APPEND`: an unfilled list right below;
 *   2. `dict key X SETITEM`: a key right below an unfilled dict;
 *   3. `parent MARK ... X ...`: the container below the top mark (list:
 *      index from the mark; dict: X is a value when it sits at an odd
 *      position after the mark).
 */
static uint8_t
classify_new(struct pkl_reader *r, uint8_t kind)
{
	size_t t = r->sp, lo = top_mark(r);
	const struct pkl_value *p;
	struct cont *pc;
	uint8_t cls;

	if (r->n_marks == 0 && t == 0)
		return r->sink->classify(r->ctx, r, 0, NULL, 0, kind);
	if (t >= lo + 1) {
		p = &r->stack[t - 1];
		if (unfilled(r, p, PKL_LIST) || unfilled(r, p, PKL_SET)) {
			pc = cont_of(r, p);
			cls = r->sink->classify(r->ctx, r, pc->cls, NULL, 0,
			    kind);
			if (cls != 0)
				return cls;
		}
	}
	if (t >= lo + 2 && unfilled(r, &r->stack[t - 2], PKL_DICT) &&
	    !is_cont(&r->stack[t - 1])) {
		pc = cont_of(r, &r->stack[t - 2]);
		cls = r->sink->classify(r->ctx, r, pc->cls, &r->stack[t - 1], 0,
		    kind);
		if (cls != 0)
			return cls;
	}
	if (r->n_marks == 0 || lo == 0)
		return 0;
	pc = cont_of(r, &r->stack[lo - 1]);
	if (pc == NULL)
		return 0;
	if (pc->kind == PKL_DICT) {
		if (((t - lo) & 1) == 0)
			return 0; /* X would be a key */
		return r->sink->classify(r->ctx, r, pc->cls, &r->stack[t - 1],
		    0, kind);
	}
	if (pc->kind == PKL_LIST || pc->kind == PKL_SET) {
		cls = r->sink->classify(r->ctx, r, pc->cls, NULL,
		    pc->count + (t - lo), kind);
		if (kind == PKL_DICT && pc->cls < 32 &&
		    (r->sink->index_free >> pc->cls & 1)) {
			r->dict_parent = pc->cls;
			r->dict_cls = cls;
			r->dict_cls_set = 1;
		}
		return cls;
	}
	return 0;
}

/* classify_new(r, PKL_DICT) for a dict whose parent is the list below the
 * top mark, one of the sink's index_free: the answer classify_new() had
 * for a dict in a list of that class, without the call; else the call.
 * The parent is that list when the stack from the mark holds nothing
 * that classify_new() would offer first: no container on top (an
 * unfilled list there would take the dict), and no unfilled dict below
 * it (whose value the dict would be). */
static inline __attribute__((always_inline)) uint8_t
dict_class(struct pkl_reader *r)
{
	size_t t = r->sp, lo;
	const struct cont *pc;

	if (r->dict_cls_set && r->n_marks > 0 &&
	    (lo = top_mark(r)) > 0 && t >= lo &&
	    (t == lo || !is_cont(&r->stack[t - 1])) &&
	    (t < lo + 2 || !unfilled(r, &r->stack[t - 2], PKL_DICT)) &&
	    (pc = cont_of(r, &r->stack[lo - 1])) != NULL &&
	    (pc->kind == PKL_LIST || pc->kind == PKL_SET) &&
	    pc->cls == r->dict_parent)
		return r->dict_cls;
	return classify_new(r, PKL_DICT);
}

static int
push_cont(struct pkl_reader *r, uint8_t kind, uint8_t cls,
    struct sv_error *err)
{
	struct pkl_value v = pkl_cont_new(r, kind, cls);

	if (push(r, &v, err) != 0) {
		pkl_decref(r, &v);
		return -1;
	}
	return 0;
}

static int
push_new_cont(struct pkl_reader *r, uint8_t kind, struct sv_error *err)
{
	return push_cont(r, kind, classify_new(r, kind), err);
}

/*
 * Hands child (owned by the caller: one reference) to the sink as taken by
 * a parent of class pcls, then stores it in pc (NULL: nowhere, the root).
 */
static int
give(struct pkl_reader *r, struct cont *pc, uint8_t pcls,
    const struct pkl_value *parent, const struct pkl_value *key,
    uint64_t index, struct pkl_value *child, struct sv_error *err)
{
	struct cont *c = cont_of(r, child);
	uint64_t id = 0;
	uint8_t id_cls = 0;
	int t;

	if (c == NULL) {
		if (pc != NULL)
			cont_push(pc, child);
		return 0;
	}
	if (c->taken) {
		/* a second reference to a consumed container (held on the
		 * stack since before it was taken): same answer as the first */
		t = c->taken;
		id = c->id;
		id_cls = c->id_cls;
		pkl_decref(r, child);
		goto stored;
	}
	t = r->sink->take(r->ctx, r, pcls, parent, key, index, child, &id,
	    &id_cls, err);
	if (t < 0) {
		if (err != NULL && err->offset == SV_NO_OFFSET)
			err->offset = r->op_pos;
		pkl_decref(r, child);
		return -1;
	}
	if (t == PKL_KEEP) {
		if (pc != NULL)
			cont_push(pc, child);
		else
			pkl_decref(r, child);
		return 0;
	}
	if (t == PKL_SKIP) {
		/* not stored: the memo's reference, if any, keeps it */
		pkl_decref(r, child);
		return 0;
	}
	pkl_consume(r, c, child, t, id, id_cls);
	pkl_decref(r, child);
stored:
	if (t == PKL_ID_REPLACE && pc != NULL) {
		struct pkl_value idv;

		memset(&idv, 0, sizeof idv);
		idv.kind = PKL_ID;
		idv.cls = id_cls;
		idv.v.id = id;
		cont_push(pc, &idv);
	}
	return 0;
}

/* APPENDS/ADDITEMS: items above the mark go into the list below it. */
static int
op_appends(struct pkl_reader *r, int set, struct sv_error *err)
{
	size_t m = 0, i;
	struct cont *pc;

	if (pop_mark(r, &m, err) != 0)
		return -1;
	if (m == 0 || (pc = cont_of(r, &r->stack[m - 1])) == NULL ||
	    pc->kind != (set ? PKL_SET : PKL_LIST))
		return pkl_fail(r, err, SV_ERR_FORMAT, "%s target is not a %s",
		    set ? "ADDITEMS" : "APPENDS", set ? "set" : "list");
	for (i = m; i < r->sp; i++) {
		uint64_t index;

		if (is_taken(&r->stack[i])) {
			pc->count++;
			continue;
		}
		if (!is_cont(&r->stack[i])) {
			/* scalars and ids: copy the run in one go */
			size_t j = i + 1;

			while (j < r->sp && !is_cont(&r->stack[j]) &&
			    !is_taken(&r->stack[j]))
				j++;
			pkl_cont_push_run(pc, &r->stack[i], j - i);
			pc->count += j - i;
			i = j - 1;
			continue;
		}
		index = pc->count++;

		if (give(r, pc, pc->cls, &r->stack[m - 1], NULL, index,
		    &r->stack[i], err) != 0) {
			for (i++; i < r->sp; i++)
				pkl_decref(r, &r->stack[i]);
			r->sp = m;
			return -1;
		}
		pc = &r->conts[(uint32_t)r->stack[m - 1].v.ref];
	}
	r->sp = m;
	return 0;
}

static int
op_append(struct pkl_reader *r, struct sv_error *err)
{
	struct cont *pc;
	uint64_t index;

	if (need(r, 2, err) != 0)
		return -1;
	pc = cont_of(r, &r->stack[r->sp - 2]);
	if (pc == NULL || pc->kind != PKL_LIST)
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "APPEND target is not a list");
	index = pc->count++;
	r->sp--;
	if (is_taken(&r->stack[r->sp]))
		return 0;
	return give(r, pc, pc->cls, &r->stack[r->sp - 1], NULL, index,
	    &r->stack[r->sp], err);
}

/* SETITEMS over [from, sp) into the dict at below. */
static int
set_items(struct pkl_reader *r, size_t below, size_t from,
    struct sv_error *err)
{
	struct cont *pc;
	size_t i, k;

	pc = cont_of(r, &r->stack[below]);
	if (pc == NULL || pc->kind != PKL_DICT)
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "SETITEM target is not a dict");
	if ((r->sp - from) & 1)
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "odd number of dict items");
	for (i = from; i < r->sp; i += 2) {
		struct pkl_value key = r->stack[i];

		if (!is_cont(&r->stack[i + 1])) {
			/* pairs whose value is no container: copy the run in
			 * one go (keys are stored as they are either way) */
			size_t j = i + 2;

			while (j < r->sp && !is_cont(&r->stack[j + 1]))
				j += 2;
			pkl_cont_push_run(pc, &r->stack[i], j - i);
			for (k = i; k < j; k += 2) /* a key can be one */
				if (is_cont(&r->stack[k]))
					pc->n_cont++;
			pc->count += (j - i) / 2;
			i = j - 2;
			continue;
		}
		cont_push(pc, &key);
		if (give(r, pc, pc->cls, &r->stack[below], &key, 0,
		    &r->stack[i + 1], err) != 0) {
			for (i += 2; i < r->sp; i++)
				pkl_decref(r, &r->stack[i]);
			r->sp = from;
			return -1;
		}
		pc = &r->conts[(uint32_t)r->stack[below].v.ref];
		if (pc->n % 2 == 1) {
			/* value was consumed (dropped): keep the pair shape */
			struct pkl_value none;

			memset(&none, 0, sizeof none);
			cont_push(pc, &none);
		}
		pc->count++;
	}
	r->sp = from;
	return 0;
}

static int
is_record_class(const struct pkl_reader *r, uint8_t cls)
{
	return r->sink->take_record != NULL && cls < 32 &&
	       (r->sink->record_classes >> cls & 1);
}

/* After a SETITEM(S) filled the dict on the stack's top: takes it now if
 * it is a complete record (pkl_sink.take_record). */
static int
close_record(struct pkl_reader *r, struct sv_error *err)
{
	struct pkl_value *top = &r->stack[r->sp - 1];
	struct cont *c;

	if (top->kind != PKL_DICT || !is_record_class(r, top->cls) ||
	    !pkl_record_done(r, r->pos))
		return 0;
	c = cont_of(r, top);
	if (c == NULL || c->taken)
		return 0;
	if (r->sink->take_record(r->ctx, r, top->cls, c->items, c->n / 2,
	    err) != 0) {
		if (err != NULL && err->offset == SV_NO_OFFSET)
			err->offset = r->op_pos;
		return -1;
	}
	pkl_consume(r, c, top, PKL_DROP, 0, 0);
	pkl_decref(r, top);
	set_taken(top);
	return 0;
}

static int
op_setitems(struct pkl_reader *r, struct sv_error *err)
{
	size_t m = 0;

	if (pop_mark(r, &m, err) != 0)
		return -1;
	if (m == 0)
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "SETITEMS without a dict");
	if (set_items(r, m - 1, m, err) != 0)
		return -1;
	return close_record(r, err);
}

static int
op_setitem(struct pkl_reader *r, struct sv_error *err)
{
	if (need(r, 3, err) != 0)
		return -1;
	if (set_items(r, r->sp - 3, r->sp - 2, err) != 0)
		return -1;
	return close_record(r, err);
}

/* TUPLE/LIST/DICT/FROZENSET from the items above the mark, or TUPLEn. */
static int
op_build_from(struct pkl_reader *r, uint8_t kind, size_t from,
    struct sv_error *err)
{
	size_t n = r->sp - from, i;
	struct pkl_value v;
	struct cont *c;
	struct pkl_value *tmp;

	tmp = xreallocarray(NULL, n ? n : 1, sizeof *tmp);
	if (n > 0) /* the stack may not exist yet: no pointer arithmetic */
		memcpy(tmp, &r->stack[from], n * sizeof *tmp);
	r->sp = from;
	if (kind == PKL_DICT && (n & 1)) {
		for (i = 0; i < n; i++)
			pkl_decref(r, &tmp[i]);
		free(tmp);
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "odd number of dict items");
	}
	v = pkl_cont_new(r, kind, classify_new(r, kind));
	c = cont_of(r, &v);
	if (n > c->cap) { /* exactly the items it will hold */
		c->items = xreallocarray(c->items, n, sizeof *c->items);
		c->cap = n;
	}
	for (i = 0; i < n; i++) {
		const struct pkl_value *key = NULL;

		if (kind == PKL_DICT) {
			if ((i & 1) == 0) {
				cont_push(c, &tmp[i]);
				continue;
			}
			key = &tmp[i - 1];
		}
		if (give(r, c, c->cls, &v, key, c->count, &tmp[i], err) != 0) {
			for (i++; i < n; i++)
				pkl_decref(r, &tmp[i]);
			free(tmp);
			pkl_decref(r, &v);
			return -1;
		}
		c = cont_of(r, &v);
		if (kind == PKL_DICT && c->n % 2 == 1) {
			struct pkl_value none;

			memset(&none, 0, sizeof none);
			cont_push(c, &none);
		}
		c->count++;
	}
	free(tmp);
	if (push(r, &v, err) != 0) {
		pkl_decref(r, &v);
		return -1;
	}
	return 0;
}

/* ---- operands ---------------------------------------------------------- */

/* The n operand bytes of op (the opcode just read, named in the
 * message: the byte at op_pos is not read again) at *p. */
static int
operand(struct pkl_reader *r, uint8_t op, size_t n, const uint8_t **p,
    struct sv_error *err)
{
	if (r->len - r->pos < n)
		return pkl_fail(r, err, SV_ERR_FORMAT, "%s: the file ends in "
		    "the %s operand", PKL_CUT_OFF, op_names[op]);
	*p = r->buf + r->pos;
	r->pos += n;
	return 0;
}

static int
op_string(struct pkl_reader *r, uint8_t op, uint8_t kind, size_t lenbytes,
    int sign, struct sv_error *err)
{
	const uint8_t *p = NULL;
	uint64_t n;
	struct pkl_value v;

	if (operand(r, op, lenbytes, &p, err) != 0)
		return -1;
	n = le(p, lenbytes);
	if (sign && (n & 0x80000000u))
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "negative string length");
	if (n > r->len - r->pos)
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "%s: %s length %llu runs past the end of the file",
		    PKL_CUT_OFF, op_names[op], (unsigned long long)n);
	if (n > UINT32_MAX)
		return pkl_fail(r, err, SV_ERR_LIMIT,
		    "string longer than 4 GiB");
	memset(&v, 0, sizeof v);
	v.kind = kind;
	v.len = (uint32_t)n;
	v.v.off = r->pos;
	r->pos += (size_t)n;
	return push(r, &v, err);
}

static int
push_scalar(struct pkl_reader *r, uint8_t kind, uint64_t u,
    struct sv_error *err)
{
	struct pkl_value v;

	memset(&v, 0, sizeof v);
	v.kind = kind;
	v.v.u = u;
	return push(r, &v, err);
}

/* ---- the loop ---------------------------------------------------------- */

/* BINGET, LONG_BINGET, MEMOIZE, BINPUT, LONG_BINPUT. */
static int
op_memo(struct pkl_reader *r, uint8_t op, struct sv_error *err)
{
	const uint8_t *p = NULL;

	switch (op) {
	case PKL_OP_BINGET:
		if (operand(r, op, 1, &p, err) != 0)
			return -1;
		return memo_get(r, p[0], err);
	case PKL_OP_LONG_BINGET:
		if (operand(r, op, 4, &p, err) != 0)
			return -1;
		return memo_get(r, le(p, 4), err);
	case PKL_OP_MEMOIZE:
		return memo_put(r, r->memo_used, err);
	case PKL_OP_BINPUT:
		if (operand(r, op, 1, &p, err) != 0)
			return -1;
		return memo_put(r, p[0], err);
	default: /* PKL_OP_LONG_BINPUT */
		if (operand(r, op, 4, &p, err) != 0)
			return -1;
		return memo_put(r, le(p, 4), err);
	}
}

/* BININT1, BININT2, BININT, LONG1, LONG4, BINFLOAT. */
static int
op_number(struct pkl_reader *r, uint8_t op, struct sv_error *err)
{
	const uint8_t *p = NULL;
	struct pkl_value v;
	size_t nb;
	uint64_t n;

	switch (op) {
	case PKL_OP_BININT1:
		if (operand(r, op, 1, &p, err) != 0)
			return -1;
		return push_scalar(r, PKL_INT, p[0], err);
	case PKL_OP_BININT2:
		if (operand(r, op, 2, &p, err) != 0)
			return -1;
		return push_scalar(r, PKL_INT, le(p, 2), err);
	case PKL_OP_BININT:
		if (operand(r, op, 4, &p, err) != 0)
			return -1;
		return push_scalar(r, PKL_INT,
		    (uint64_t)(int64_t)(int32_t)(uint32_t)le(p, 4), err);
	case PKL_OP_LONG1:
	case PKL_OP_LONG4:
		nb = op == PKL_OP_LONG1 ? 1 : 4;
		if (operand(r, op, nb, &p, err) != 0)
			return -1;
		n = le(p, nb);
		if (op == PKL_OP_LONG4 && (n & 0x80000000u))
			return pkl_fail(r, err, SV_ERR_FORMAT,
			    "negative LONG4 size");
		if (n > r->len - r->pos)
			return pkl_fail(r, err, SV_ERR_FORMAT,
			    "%s: %s length %llu runs past the end of the "
			    "file", PKL_CUT_OFF, op_names[op],
			    (unsigned long long)n);
		pkl_decode_long(r->buf + r->pos, n, &v);
		r->pos += (size_t)n;
		return push(r, &v, err);
	default: /* PKL_OP_BINFLOAT */
		if (operand(r, op, 8, &p, err) != 0)
			return -1;
		memset(&v, 0, sizeof v);
		v.kind = PKL_FLOAT;
		v.v.f = binfloat(p);
		return push(r, &v, err);
	}
}

/* POP, POP_MARK, DUP, and the tuples, lists, dicts and frozensets built
 * from the stack: TUPLE1-3, TUPLE, LIST, DICT, FROZENSET. */
static int
op_stack(struct pkl_reader *r, uint8_t op, struct sv_error *err)
{
	struct pkl_value v;
	size_t m = 0, n;

	switch (op) {
	case PKL_OP_TUPLE1:
	case PKL_OP_TUPLE2:
	case PKL_OP_TUPLE3:
		n = (size_t)(op - PKL_OP_TUPLE1 + 1);
		if (need(r, n, err) != 0)
			return -1;
		return op_build_from(r, PKL_TUPLE, r->sp - n, err);
	case PKL_OP_TUPLE:
	case PKL_OP_LIST:
	case PKL_OP_DICT:
	case PKL_OP_FROZENSET:
		if (pop_mark(r, &m, err) != 0)
			return -1;
		return op_build_from(r, op == PKL_OP_TUPLE ? PKL_TUPLE
				     : op == PKL_OP_LIST   ? PKL_LIST
				     : op == PKL_OP_DICT   ? PKL_DICT
							   : PKL_SET,
		    m, err);
	case PKL_OP_POP:
		if (r->sp > top_mark(r)) {
			pkl_decref(r, &r->stack[--r->sp]);
			return 0;
		}
		return pop_mark(r, &m, err);
	case PKL_OP_POP_MARK:
		if (pop_mark(r, &m, err) != 0)
			return -1;
		while (r->sp > m)
			pkl_decref(r, &r->stack[--r->sp]);
		return 0;
	default: /* PKL_OP_DUP */
		if (need(r, 1, err) != 0)
			return -1;
		v = r->stack[r->sp - 1];
		incref(r, &v);
		return push(r, &v, err);
	}
}

static int op_refused(struct pkl_reader *r, uint8_t op, struct sv_error *err);

/* The general path of opcode op, its operand at r->pos: every check and
 * message. */
static int
step(struct pkl_reader *r, uint8_t op, struct sv_error *err)
{
	const uint8_t *p = NULL;
	uint8_t proto;

	switch (op) {
	case PKL_OP_BINGET:
	case PKL_OP_LONG_BINGET:
	case PKL_OP_MEMOIZE:
	case PKL_OP_BINPUT:
	case PKL_OP_LONG_BINPUT:
		return op_memo(r, op, err);
	case PKL_OP_MARK:
		if (r->n_marks >= MAX_DEPTH)
			return pkl_fail(r, err, SV_ERR_LIMIT, "marks nested "
			    "deeper than %u", MAX_DEPTH);
		XGROW(r->marks, r->marks_cap, r->n_marks + 1);
		r->marks[r->n_marks++] = r->sp;
		return 0;
	case PKL_OP_EMPTY_DICT: return push_new_cont(r, PKL_DICT, err);
	case PKL_OP_EMPTY_LIST: return push_new_cont(r, PKL_LIST, err);
	case PKL_OP_EMPTY_TUPLE: return push_new_cont(r, PKL_TUPLE, err);
	case PKL_OP_EMPTY_SET: return push_new_cont(r, PKL_SET, err);
	case PKL_OP_SETITEMS: return op_setitems(r, err);
	case PKL_OP_SETITEM: return op_setitem(r, err);
	case PKL_OP_APPENDS: return op_appends(r, 0, err);
	case PKL_OP_ADDITEMS: return op_appends(r, 1, err);
	case PKL_OP_APPEND: return op_append(r, err);
	case PKL_OP_SHORT_BINUNICODE:
		return op_string(r, op, PKL_STR, 1, 0, err);
	case PKL_OP_BINUNICODE:
		return op_string(r, op, PKL_STR, 4, 0, err);
	case PKL_OP_BINUNICODE8:
		return op_string(r, op, PKL_STR, 8, 0, err);
	case PKL_OP_SHORT_BINSTRING:
		return op_string(r, op, PKL_STR, 1, 0, err);
	case PKL_OP_BINSTRING:
		return op_string(r, op, PKL_STR, 4, 1, err);
	case PKL_OP_SHORT_BINBYTES:
		return op_string(r, op, PKL_BYTES, 1, 0, err);
	case PKL_OP_BINBYTES:
		return op_string(r, op, PKL_BYTES, 4, 0, err);
	case PKL_OP_BINBYTES8:
	case PKL_OP_BYTEARRAY8:
		return op_string(r, op, PKL_BYTES, 8, 0, err);
	case PKL_OP_BININT1:
	case PKL_OP_BININT2:
	case PKL_OP_BININT:
	case PKL_OP_LONG1:
	case PKL_OP_LONG4:
	case PKL_OP_BINFLOAT:
		return op_number(r, op, err);
	case PKL_OP_NONE: return push_scalar(r, PKL_NONE, 0, err);
	case PKL_OP_NEWTRUE: return push_scalar(r, PKL_BOOL, 1, err);
	case PKL_OP_NEWFALSE: return push_scalar(r, PKL_BOOL, 0, err);
	case PKL_OP_TUPLE1:
	case PKL_OP_TUPLE2:
	case PKL_OP_TUPLE3:
	case PKL_OP_TUPLE:
	case PKL_OP_LIST:
	case PKL_OP_DICT:
	case PKL_OP_FROZENSET:
	case PKL_OP_POP:
	case PKL_OP_POP_MARK:
	case PKL_OP_DUP:
		return op_stack(r, op, err);
	case PKL_OP_FRAME:
		return operand(r, op, 8, &p, err);
	case PKL_OP_PROTO:
		if (operand(r, op, 1, &p, err) != 0)
			return -1;
		proto = p[0];
		if (proto > 5)
			return pkl_fail(r, err, SV_ERR_UNSUPPORTED,
			    "pickle protocol %d is newer than 5", proto);
		r->protocol = proto;
		return 0;
	default:
		return op_refused(r, op, err);
	}
}

static int
op_refused(struct pkl_reader *r, uint8_t op, struct sv_error *err)
{
	switch (op_kinds[op]) {
	case PKL_OPK_CODE + 1:
		return pkl_fail(r, err, SV_ERR_UNSUPPORTED,
		    "opcode %s (0x%02x) imports or calls code; refusing",
		    op_names[op], op);
	case PKL_OPK_TEXT + 1:
		return pkl_fail(r, err, SV_ERR_UNSUPPORTED,
		    "opcode %s (0x%02x) of text protocols 0/1 is not supported",
		    op_names[op], op);
	default:
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "not a pickle: unknown opcode 0x%02x", op);
	}
}

static void
reader_init(struct pkl_reader *r, const uint8_t *buf, size_t len,
    const struct pkl_sink *sink, void *ctx)
{
	memset(r, 0, sizeof *r);
	r->buf = buf;
	r->len = len;
	r->sink = sink;
	r->ctx = ctx;
	r->next_progress = PROGRESS_STEP;
}

static int
finish(struct pkl_reader *r, struct sv_error *err)
{
	struct pkl_value top;

	if (r->sp == 0 || r->sp == top_mark(r))
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "STOP with an empty stack");
	top = r->stack[--r->sp];
	return give(r, NULL, 0, NULL, NULL, 0, &top, err);
}

/* Whether buf can be a pickle at all: 0, or -1 with err set. */
static int
check_start(const uint8_t *buf, size_t len, struct sv_error *err)
{
	uint8_t b;

	if (len == 0)
		return sv_error_set(err, SV_ERR_FORMAT, 0, "%s", PKL_EMPTY);
	b = buf[0];
	if (b != PKL_OP_PROTO && b != PKL_OP_MARK && b != PKL_OP_EMPTY_DICT &&
	    b != PKL_OP_EMPTY_LIST)
		return sv_error_set(err, SV_ERR_FORMAT, 0,
		    "not a pickle (first byte 0x%02x)", b);
	return 0;
}

/*
 * A run of memo fetches (BINGET, LONG_BINGET) from the one whose operand
 * is at *pos (a frame list is a hundred in a row), with the stack in
 * locals. Each pushed is an id or a string; stops before anything else,
 * with *op, r->op_pos, *pos and *ops at the last one read. Returns 1 when
 * that one was done, 0 when it must go the general way (step()).
 */
static inline __attribute__((always_inline)) int
fetch_run(struct pkl_reader *r, uint8_t *pop, size_t *ppos, uint64_t *pops)
{
	const uint8_t *buf = r->buf;
	struct pkl_value *stk = r->stack;
	const uint32_t *memo = r->memo;
	const uint64_t *mbase = r->mbase;
	size_t len = r->len, pos = *ppos, sp = r->sp, cap = r->stack_cap;
	size_t mcap = r->memo_top, at;
	uint64_t idx, ops = *pops;
	uint8_t op = *pop, next;

	for (;;) {
		if (op == PKL_OP_BINGET) {
			if (__builtin_expect(pos >= len, 0))
				break;
			idx = buf[pos];
			at = pos + 1;
		} else {
			if (__builtin_expect(len - pos < 4, 0))
				break;
			idx = le(buf + pos, 4);
			at = pos + 4;
		}
		if (__builtin_expect(idx >= mcap || sp == cap, 0))
			break;
		if (!slot_id_or_str(memo[idx], idx, mbase, &stk[sp]))
			break;
		sp++;
		pos = at;
		if (__builtin_expect(pos >= len, 0))
			break;
		next = buf[pos]; /* read once: checked, used */
		if (next != PKL_OP_BINGET && next != PKL_OP_LONG_BINGET)
			break;
		r->op_pos = pos++;
		op = next;
		ops++;
	}
	r->sp = sp;
	*pop = op;
	*ppos = pos;
	*pops = ops;
	return pos != r->op_pos + 1; /* else the last one was not done */
}

/* EMPTY_DICT, its operand at *ppos: a record read whole when it is one
 * (pkl_read_record()), else a dict pushed. */
static inline __attribute__((always_inline)) int
op_empty_dict(struct pkl_reader *r, size_t *ppos, uint64_t *pops,
    struct sv_error *err)
{
	uint8_t cls;
	int t;

	/* may call the sink: keep r->pos current */
	r->pos = *ppos;
	cls = dict_class(r);
	if (is_record_class(r, cls)) {
		t = pkl_read_record(r, cls, ppos, pops, err);
		if (t != 0)
			return t < 0 ? -1 : 0;
	}
	return push_cont(r, PKL_DICT, cls, err);
}

/* Every PROGRESS_STEP bytes, at pos: the memo's pages behind given back,
 * the sink told (-1 with err set when it cancels). */
static int __attribute__((noinline))
progress(struct pkl_reader *r, size_t pos, struct sv_error *err)
{
	pkl_memo_step(r);
	if (r->sink->progress != NULL &&
	    r->sink->progress(r->ctx, pos) != 0)
		return sv_error_set(err, SV_ERR_CANCELLED, pos, "cancelled");
	return 0;
}

/*
 * Runs the opcodes from the start to STOP: 0 with r->pos just past it,
 * or -1 with err set. The hottest opcodes are decoded here with pos, buf
 * and len in locals and one bounds check each; anything unusual (a short
 * operand, a full stack, a memo slot that is not an id or a string, ...)
 * falls back to step() from the opcode's start, which redoes it with
 * every check and error message.
 */
static int
run_ops(struct pkl_reader *r, struct sv_error *err)
{
	const uint8_t *buf = r->buf;
	size_t len = r->len, pos = 0;
	uint64_t ops = 0, next_progress = r->next_progress, idx;
	struct pkl_value *sv;
	uint8_t op;
	int rc = -1;

	for (;;) {
		if (__builtin_expect(pos >= len, 0)) {
			sv_error_set(err, SV_ERR_FORMAT, len,
			    "%s: the file ends before STOP", PKL_CUT_OFF);
			goto out;
		}
		r->op_pos = pos;
		op = buf[pos++];
		ops++;
		switch (op) {
		case PKL_OP_BINGET:
		case PKL_OP_LONG_BINGET:
			if (fetch_run(r, &op, &pos, &ops))
				break;
			goto slow;
		case PKL_OP_MARK:
			if (__builtin_expect(r->n_marks >= r->marks_cap ||
			    r->n_marks >= MAX_DEPTH, 0))
				goto slow;
			r->marks[r->n_marks++] = r->sp;
			break;
		case PKL_OP_SHORT_BINUNICODE:
			if (__builtin_expect(pos >= len, 0))
				goto slow;
			idx = buf[pos];
			if (__builtin_expect(idx > len - pos - 1 ||
			    r->sp == r->stack_cap, 0))
				goto slow;
			sv = &r->stack[r->sp++];
			sv->kind = PKL_STR;
			sv->cls = 0;
			sv->flags = 0;
			sv->len = (uint32_t)idx;
			sv->v.off = pos + 1;
			pos += 1 + (size_t)idx;
			break;
		case PKL_OP_BININT1:
		case PKL_OP_BININT2:
		case PKL_OP_BININT:
			idx = op == PKL_OP_BININT1 ? 1 :
			    op == PKL_OP_BININT2 ? 2 : 4;
			if (__builtin_expect(len - pos < idx ||
			    r->sp == r->stack_cap, 0))
				goto slow;
			sv = &r->stack[r->sp++];
			memset(sv, 0, sizeof *sv);
			sv->kind = PKL_INT;
			if (op == PKL_OP_BININT1)
				sv->v.u = buf[pos];
			else if (op == PKL_OP_BININT2)
				sv->v.u = le(buf + pos, 2);
			else
				sv->v.u = (uint64_t)(int64_t)(int32_t)
				    (uint32_t)le(buf + pos, 4);
			pos += (size_t)idx;
			break;
		case PKL_OP_LONG1:
			if (__builtin_expect(pos >= len, 0))
				goto slow;
			idx = buf[pos];
			if (__builtin_expect(idx > len - pos - 1 ||
			    r->sp == r->stack_cap, 0))
				goto slow;
			sv = &r->stack[r->sp++];
			if (idx >= 1 && idx <= 8 && len - pos - 1 >= 8)
				long_le8(buf + pos + 1, (unsigned)idx, sv);
			else
				pkl_decode_long(buf + pos + 1, idx, sv);
			pos += 1 + (size_t)idx;
			break;
		case PKL_OP_NONE:
		case PKL_OP_NEWTRUE:
		case PKL_OP_NEWFALSE:
			if (__builtin_expect(r->sp == r->stack_cap, 0))
				goto slow;
			sv = &r->stack[r->sp++];
			memset(sv, 0, sizeof *sv);
			sv->kind = op == PKL_OP_NONE ? PKL_NONE : PKL_BOOL;
			sv->v.u = op == PKL_OP_NEWTRUE;
			break;
		case PKL_OP_FRAME:
			if (__builtin_expect(len - pos < 8, 0))
				goto slow;
			pos += 8;
			break;
		case PKL_OP_STOP:
			r->pos = pos;
			rc = 0;
			goto out;
		case PKL_OP_MEMOIZE:
			if (memo_put(r, r->memo_used, err) != 0)
				goto out;
			break;
		case PKL_OP_EMPTY_DICT:
			if (op_empty_dict(r, &pos, &ops, err) != 0)
				goto out;
			break;
		case PKL_OP_EMPTY_LIST:
		case PKL_OP_SETITEMS:
		case PKL_OP_APPENDS:
			/* these may call the sink: keep r->pos current */
			r->pos = pos;
			if ((op == PKL_OP_EMPTY_LIST
				    ? push_new_cont(r, PKL_LIST, err)
				: op == PKL_OP_SETITEMS
				    ? op_setitems(r, err)
				    : op_appends(r, 0, err)) != 0)
				goto out;
			break;
		default:
		slow:
			pos = (size_t)r->op_pos + 1;
			r->pos = pos;
			if (step(r, op, err) != 0)
				goto out;
			pos = r->pos;
			break;
		}
		if (__builtin_expect(pos >= next_progress, 0)) {
			next_progress = pos + PROGRESS_STEP;
			if (progress(r, pos, err) != 0)
				goto out;
		}
	}
out:
	r->st.opcodes += ops;
	return rc;
}

int
pkl_run(const uint8_t *buf, size_t len, const struct pkl_sink *sink,
    void *ctx, struct pkl_reader **keep, struct sv_error *err)
{
	struct pkl_reader *r = xmalloc(sizeof *r);
	int rc = -1;

	reader_init(r, buf, len, sink, ctx);
	if (keep != NULL)
		*keep = NULL;
	if (pkl_json_is(buf, len))
		rc = pkl_json_parse(r, err);	/* a JSON snapshot */
	else if (check_start(buf, len, err) == 0 && run_ops(r, err) == 0)
		rc = finish(r, err);
	pkl_memo_follow_stop(r); /* the memo is only read from here on */
	if (keep != NULL && rc == 0)
		*keep = r;
	else
		pkl_reader_free(r);
	return rc;
}

void
pkl_reader_free(struct pkl_reader *r)
{
	uint32_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n_conts; i++)
		free(r->conts[i].items);
	free(r->conts);
	free(r->free_conts);
	free(r->stack);
	free(r->marks);
	pkl_memo_free(r);
	free(r->work);
	free(r->rec);
	free(r->seen);
	free(r->shapes);
	if (r->jring != NULL)
		for (i = 0; i < PKL_JSON_RING; i++)
			free(r->jring->buf[i]);
	free(r->jring);
	free(r);
}

/* ---- inspection --------------------------------------------------------- */

const char *
pkl_str(const struct pkl_reader *r, const struct pkl_value *v, size_t *len)
{
	if (__builtin_expect(v->flags & F_JSON_ESC, 0) && v->kind == PKL_STR)
		return pkl_json_str(r, v, len);
	if ((v->kind != PKL_STR && v->kind != PKL_BYTES) ||
	    v->v.off > r->len || v->len > r->len - v->v.off) {
		*len = 0;
		return "";
	}
	*len = v->len;
	return (const char *)r->buf + v->v.off;
}

const struct pkl_value *
pkl_items(const struct pkl_reader *r, const struct pkl_value *v, size_t *n)
{
	struct cont *c = cont_of(r, v);

	if (c == NULL) {
		*n = 0;
		return NULL;
	}
	*n = c->kind == PKL_DICT ? c->n / 2 : c->n;
	return c->items;
}

uint64_t
pkl_count(const struct pkl_reader *r, const struct pkl_value *v)
{
	struct cont *c = cont_of(r, v);

	return c == NULL ? 0 : c->count;
}

int
pkl_protocol(const struct pkl_reader *r)
{
	return r->protocol;
}

uint64_t
pkl_record_shape(const struct pkl_reader *r)
{
	return r->shape_taking;
}

uint64_t
pkl_offset(const struct pkl_reader *r)
{
	return r->op_pos;
}

void
pkl_get_stats(const struct pkl_reader *r, struct pkl_stats *st)
{
	*st = r->st;
	st->memo_boxes = r->n_boxed;
	st->memo_spilled = r->spilled == 1;
}
