/*
 * The streaming pickle VM. See pkl_reader.h for the contract.
 *
 * Values on the stack are 16-byte tagged structs. Containers live in a
 * recycled pool and are reference counted (references from the stack,
 * from parent containers and from one memo slot); a reference carries the
 * pool index and a generation so a stale one is detected, never followed.
 * The memo is an array of 4-byte encoded slots: a short string as its
 * length and its offset from a base kept per page of MEMO_PAGE slots, an
 * id, a small scalar, or "consumed" fit in the slot; anything else
 * (containers, long strings, floats, big ids) sits in a box the slot
 * names, and a box is reused once its slot lets go of it. A pickle
 * memoizes about every object it writes (two or three per trace event,
 * dozens with fresh frames), so the memo is the parse's biggest array:
 * a file with 16M memo entries costs 64 MB of slots, and past
 * MEMO_HEAP_MAX the slots move to an unlinked temporary file of which only
 * the last MEMO_KEEP bytes stay resident (util/spill.h): the memory of a
 * parse then does not grow with the file. Slots far back are still
 * there, read back from the page cache. (Every byte of slots is fresh
 * memory the kernel must provide: at 8 bytes a slot that was a tenth of
 * a python-stack parse.)
 *
 * Records (pkl_sink.take_record): a dict of a record class is taken when
 * the pickle has filled it. Most are read whole at their EMPTY_DICT by
 * read_record(), which builds no container: it reads up to the SETITEMS
 * without changing anything, and gives up (the general path then runs
 * from the EMPTY_DICT) on any shape it does not know. Those the general
 * path builds are taken at their SETITEM(S) by close_record(). Either
 * way the record leaves a None flagged F_TAKEN on the stack, which its
 * list counts and does not store.
 *
 * What it does not do: text protocols 0/1 opcodes (INT, STRING, PUT, ...)
 * are refused; opcodes that import or call code (GLOBAL, REDUCE, BUILD,
 * ...) are refused with the opcode named; PROTO above 5 is refused.
 */
#include "config.h"

#include "pickle/pkl_reader.h"

#include <stdlib.h>
#include <string.h>

#include "pickle/pkl_ops.h"
#include "util/follow.h"
#include "util/spill.h"
#include "util/xalloc.h"

#define MAX_DEPTH (1u << 20)
#define PROGRESS_STEP (1u << 20)
#define NO_MEMO UINT32_MAX
#define MEMO_HEAP_MAX (16u << 20) /* bytes of memo kept on the heap */
#define MEMO_KEEP (16u << 20)     /* bytes of a spilled memo kept resident */
#define MEMO_RELEASE (4u << 20)   /* and given back by at least this much */
#define MEMO_AHEAD (4u << 20)     /* bytes of a spilled memo mapped ahead */
#define MEMO_RESERVE ((size_t)UINT32_MAX * 4) /* every slot memo_put allows */
#define MEMO_PAGE_BITS 10          /* slots sharing one string base */
#define BOX_MAX (1u << 29)         /* boxes a slot can name */

/*
 * memo slot tags (low 3 bits) and their payloads (the upper 29 bits):
 *   M_STR    len (8 bits) | offset - page base (21 bits)
 *   M_ID     class (5 bits) | id (24 bits)
 *   M_SMALL  kind (2 bits: None, bool, int) | signed value (27 bits)
 *   M_BOXED  box index
 */
enum { M_EMPTY, M_STR, M_UNUSED, M_ID, M_SMALL, M_BOXED, M_GONE };
#define STR_LEN_MAX 0xffu
#define STR_DELTA_MAX ((1u << 21) - 1)

struct cont {
	uint8_t kind;
	uint8_t cls;
	uint8_t live;
	uint32_t gen;
	uint32_t refs;
	uint32_t memo;   /* memo slot that references it, or NO_MEMO */
	uint64_t count;  /* items ever added (lists: index of the next) */
	uint8_t taken;   /* the sink consumed it (PKL_DROP or an id) */
	uint8_t id_cls;
	uint64_t id;     /* the id it was replaced by */
	struct pkl_value *items;
	size_t n, cap;
	size_t n_cont;   /* items that are containers (references to drop) */
};

struct pkl_reader {
	const uint8_t *buf;
	size_t len, pos, op_pos;
	const struct pkl_sink *sink;
	void *ctx;
	int protocol;

	struct pkl_value *stack;
	size_t sp, stack_cap;
	size_t *marks;
	size_t n_marks, marks_cap;

	uint32_t *memo;
	size_t memo_cap;     /* slots allocated */
	size_t memo_top;     /* slots below are initialised; the rest of
			      * the allocation is never read, so growing
			      * it touches no fresh page ahead of use */
	uint64_t memo_used;  /* distinct slots set: MEMOIZE's next index */
	struct spill spill;  /* the memo's file once past MEMO_HEAP_MAX */
	int spilled;         /* 1 in the file, -1 cannot be, 0 not yet */
	/* While spilled: the thread that maps the file's pages ahead of
	 * memo_top (memo_follow()), and what only it touches. */
	struct follower *memo_ahead;
	size_t memo_populated;
	int memo_no_populate;
	uint64_t *mbase;     /* per page of slots: string base offset + 1,
			      * 0 while no string slot of it set one */
	size_t mbase_cap;

	struct cont *conts;
	uint32_t n_conts, cap_conts;
	uint32_t *free_conts;
	uint32_t n_free;
	size_t cap_free;
	uint32_t live_conts;

	struct pkl_value *boxed;
	size_t n_boxed, cap_boxed;
	uint32_t *free_boxes; /* boxes no slot names any more */
	size_t n_free_boxes, cap_free_boxes;

	uint32_t *work; /* release worklist */
	size_t n_work, cap_work;

	uint64_t next_progress;
	struct pkl_value *rec; /* items of lists of records read whole */
	size_t cap_rec;

	struct pkl_stats st;
};

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

static int
fail(struct pkl_reader *r, struct sv_error *err, enum sv_errcode code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
fail(struct pkl_reader *r, struct sv_error *err, enum sv_errcode code,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sv_error_vset(err, code, r->op_pos, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- containers -------------------------------------------------------- */

/* flags of the None left on the stack by a record taken when it closed
 * (pkl_sink.take_record): its list counts it and stores nothing */
#define F_TAKEN 0x8000

static int
is_taken(const struct pkl_value *v)
{
	return v->kind == PKL_NONE && (v->flags & F_TAKEN);
}

static int
is_cont(const struct pkl_value *v)
{
	return v->kind == PKL_LIST || v->kind == PKL_TUPLE ||
	       v->kind == PKL_DICT || v->kind == PKL_SET;
}

static struct cont *
cont_of(const struct pkl_reader *r, const struct pkl_value *v)
{
	uint32_t idx = (uint32_t)v->v.ref;
	uint32_t gen = (uint32_t)(v->v.ref >> 32);
	struct cont *c;

	if (!is_cont(v) || idx >= r->n_conts)
		return NULL;
	c = &r->conts[idx];
	if (!c->live || c->gen != gen)
		return NULL;
	return c;
}

static struct pkl_value
cont_new(struct pkl_reader *r, uint8_t kind, uint8_t cls)
{
	struct pkl_value v;
	struct cont *c;
	uint32_t idx;

	if (r->n_free > 0) {
		idx = r->free_conts[--r->n_free];
	} else {
		if (r->n_conts == r->cap_conts) {
			r->cap_conts = r->cap_conts ? r->cap_conts * 2 : 256;
			r->conts = xreallocarray(r->conts, r->cap_conts,
			    sizeof *r->conts);
		}
		idx = r->n_conts++;
		memset(&r->conts[idx], 0, sizeof r->conts[idx]);
	}
	c = &r->conts[idx];
	c->kind = kind;
	c->cls = cls;
	c->live = 1;
	c->refs = 1; /* the stack's reference */
	c->memo = NO_MEMO;
	c->count = 0;
	c->n = 0;
	c->n_cont = 0;
	c->taken = 0;
	if (++r->live_conts > r->st.containers_peak)
		r->st.containers_peak = r->live_conts;
	memset(&v, 0, sizeof v);
	v.kind = kind;
	v.cls = cls;
	/* gen is kept 29 bits wide so a memo slot can hold it */
	v.v.ref = ((uint64_t)c->gen << 32) | idx;
	return v;
}

static void
incref(struct pkl_reader *r, const struct pkl_value *v)
{
	struct cont *c = cont_of(r, v);

	if (c != NULL)
		c->refs++;
}

/* Drops one reference; frees containers reaching zero, iteratively so a
 * million-deep nesting cannot overflow the C stack. */
static void
decref(struct pkl_reader *r, const struct pkl_value *v)
{
	struct cont *c = cont_of(r, v);

	if (c == NULL || --c->refs > 0)
		return;
	r->n_work = 0;
	XGROW(r->work, r->cap_work, 1);
	r->work[r->n_work++] = (uint32_t)v->v.ref;
	while (r->n_work > 0) {
		uint32_t idx = r->work[--r->n_work];
		size_t i;

		c = &r->conts[idx];
		/* a record of scalars and ids (most of them) holds none */
		for (i = 0; i < c->n && c->n_cont > 0; i++) {
			struct cont *k = cont_of(r, &c->items[i]);

			if (k != NULL && --k->refs == 0) {
				XGROW(r->work, r->cap_work, r->n_work + 1);
				r->work[r->n_work++] =
				    (uint32_t)c->items[i].v.ref;
			}
		}
		c->n = 0;
		c->n_cont = 0;
		c->live = 0;
		c->gen = (c->gen + 1) & 0x1fffffff;
		r->live_conts--;
		XGROW(r->free_conts, r->cap_free, r->n_free + 1);
		r->free_conts[r->n_free++] = idx;
	}
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

/* Appends n stack values at v in one copy; the caller counts the
 * containers among them. Grows to at least twice the capacity, so a long
 * run of APPENDS batches stays linear. */
static void
cont_push_run(struct cont *c, const struct pkl_value *v, size_t n)
{
	if (c->n + n > c->cap) {
		c->cap = c->n + n > 2 * c->cap ? c->n + n : 2 * c->cap;
		c->items = xreallocarray(c->items, c->cap, sizeof *c->items);
	}
	memcpy(c->items + c->n, v, n * sizeof *c->items);
	c->n += n;
}

/* ---- memo -------------------------------------------------------------- */

/* A box for v; fails (-1) past BOX_MAX boxes. */
static int64_t
box_new(struct pkl_reader *r, const struct pkl_value *v)
{
	size_t b;

	if (r->n_free_boxes > 0) {
		b = r->free_boxes[--r->n_free_boxes];
	} else {
		if (r->n_boxed >= BOX_MAX)
			return -1;
		XGROW(r->boxed, r->cap_boxed, r->n_boxed + 1);
		b = r->n_boxed++;
	}
	r->boxed[b] = *v;
	return (int64_t)b;
}

static void
box_free(struct pkl_reader *r, uint32_t m)
{
	XGROW(r->free_boxes, r->cap_free_boxes, r->n_free_boxes + 1);
	r->free_boxes[r->n_free_boxes++] = m >> 3;
}

/* Slot m of slot idx into *v when it is an id or a short string (the memo
 * fetches of a real file, nearly all): 1, or 0 for any other slot. mbase
 * is the reader's, passed for the hot loops that keep it in a register. */
static inline __attribute__((always_inline)) int
slot_id_or_str(uint32_t m, uint64_t idx, const uint64_t *mbase,
    struct pkl_value *v)
{
	if ((m & 7) == M_ID) {
		v->kind = PKL_ID;
		v->cls = (uint8_t)((m >> 3) & 31);
		v->len = 0;
		v->v.id = m >> 8;
	} else if ((m & 7) == M_STR) {
		v->kind = PKL_STR;
		v->cls = 0;
		v->len = (m >> 3) & STR_LEN_MAX;
		v->v.off = mbase[idx >> MEMO_PAGE_BITS] - 1 + (m >> 11);
	} else {
		return 0;
	}
	v->flags = 0;
	return 1;
}

/* The slot for v stored at idx, boxing what does not fit (0: none could
 * be had). Sets the page's string base on its first string. */
static uint32_t
memo_encode(struct pkl_reader *r, uint64_t idx, const struct pkl_value *v)
{
	uint64_t *base = &r->mbase[idx >> MEMO_PAGE_BITS];
	int64_t b;

	switch (v->kind) {
	case PKL_STR:
		if (v->len > STR_LEN_MAX)
			break;
		if (*base == 0 && v->v.off < UINT64_MAX)
			*base = v->v.off + 1;
		if (v->v.off + 1 >= *base &&
		    v->v.off + 1 - *base <= STR_DELTA_MAX)
			return M_STR | v->len << 3 |
			       (uint32_t)(v->v.off + 1 - *base) << 11;
		break;
	case PKL_ID:
		if (v->cls < 32 && v->v.id < (1u << 24))
			return M_ID | (uint32_t)v->cls << 3 |
			       (uint32_t)v->v.id << 8;
		break;
	case PKL_NONE:
		return M_SMALL;
	case PKL_BOOL:
		return M_SMALL | 1u << 3 | (uint32_t)(v->v.u != 0) << 5;
	case PKL_INT:
		if (!(v->flags & PKL_F_UNSIGNED) && v->v.i >= -(1ll << 26) &&
		    v->v.i < (1ll << 26))
			return M_SMALL | 2u << 3 | (uint32_t)v->v.i << 5;
		break;
	default:
		break;
	}
	b = box_new(r, v);
	return b < 0 ? 0 : M_BOXED | (uint32_t)b << 3;
}

static int
memo_decode(struct pkl_reader *r, uint64_t idx, uint32_t m,
    struct pkl_value *v, struct sv_error *err)
{
	memset(v, 0, sizeof *v);
	if (slot_id_or_str(m, idx, r->mbase, v))
		return 0;
	switch (m & 7) {
	case M_SMALL:
		v->kind = (m >> 3 & 3) == 0 ? PKL_NONE :
		    (m >> 3 & 3) == 1 ? PKL_BOOL : PKL_INT;
		v->v.i = (int64_t)((int32_t)m >> 5);
		return 0;
	case M_BOXED:
		*v = r->boxed[m >> 3];
		if (is_cont(v) && cont_of(r, v) == NULL)
			return fail(r, err, SV_ERR_FORMAT,
			    "memo refers to a consumed object");
		return 0;
	case M_GONE:
		return fail(r, err, SV_ERR_FORMAT,
		    "memo refers to a consumed record");
	default:
		return fail(r, err, SV_ERR_FORMAT, "memo slot is empty");
	}
}

/* The memo's follower (util/follow.h): the file's pages past the slots
 * in use mapped writable before the parser stores there. Each would
 * otherwise be a page fault on the parser's thread, and a costly one (a
 * page of a shared file mapping): 45% of the parser's page faults on a
 * 1 GB python-stack file, about 0.1 s on a VM (perf); 40% of that is
 * left with the follower. */
static void
memo_ahead_run(void *arg, size_t upto, size_t limit)
{
	struct pkl_reader *r = arg;

	spill_populate(&r->spill, &r->memo_populated, upto, MEMO_AHEAD,
	    limit, &r->memo_no_populate);
}

/* Tells the follower where the slots in use end (once per step of the
 * parse), before the file's pages behind them go back. */
static void
memo_follow(struct pkl_reader *r)
{
	if (r->memo_ahead != NULL)
		follow_tell(r->memo_ahead, r->memo_top * sizeof *r->memo,
		    r->spill.cap);
}

/* Joins the follower: before the file is unmapped. */
static void
memo_follow_stop(struct pkl_reader *r)
{
	follow_stop(r->memo_ahead);
	r->memo_ahead = NULL;
}

/* Moves the memo into its file (0), or says it cannot (-1). */
static int
memo_spill(struct pkl_reader *r)
{
	if (spill_adopt(&r->spill, MEMO_RESERVE, r->memo,
	    r->memo_top * sizeof *r->memo,
	    r->memo_cap * sizeof *r->memo) != 0) {
		r->spilled = -1;
		return -1;
	}
	r->memo = (uint32_t *)(void *)r->spill.base;
	r->memo_cap = r->spill.cap / sizeof *r->memo;
	r->spilled = 1;
	r->memo_ahead = follow_start(memo_ahead_run, r, MEMO_AHEAD / 4);
	memo_follow(r);
	return 0;
}

/* Room for need slots: on the heap, or in the memo's file past
 * MEMO_HEAP_MAX; back on the heap if the file cannot grow (a full disk). */
static void
memo_grow_slots(struct pkl_reader *r, size_t need)
{
	size_t cap = r->memo_cap;

	if (r->spilled == 0 && need * sizeof *r->memo > MEMO_HEAP_MAX)
		memo_spill(r);
	if (r->spilled == 1) {
		uint32_t *heap;

		if (spill_grow(&r->spill, need * sizeof *r->memo) != NULL) {
			r->memo_cap = r->spill.cap / sizeof *r->memo;
			return;
		}
		cap = need > 2 * cap ? need : 2 * cap;
		memo_follow_stop(r);
		heap = spill_to_heap(&r->spill, r->memo_top * sizeof *heap,
		    cap, sizeof *heap);
		r->spilled = -1;
		r->memo = heap;
		r->memo_cap = cap;
		return;
	}
	r->memo = xgrow(r->memo, &cap, need, sizeof *r->memo);
	xalloc_hint_huge(r->memo, cap * sizeof *r->memo);
	r->memo_cap = cap;
}

/* memo_grow_slots(), and a page base for every slot there is room for. */
static void
memo_grow(struct pkl_reader *r, size_t need)
{
	size_t old = r->mbase_cap, pages;

	memo_grow_slots(r, need);
	pages = ((r->memo_cap - 1) >> MEMO_PAGE_BITS) + 1;
	if (pages > old) {
		r->mbase = xgrow(r->mbase, &r->mbase_cap, pages,
		    sizeof *r->mbase);
		memset(r->mbase + old, 0,
		    (r->mbase_cap - old) * sizeof *r->mbase);
	}
}

/* Empties slot idx, letting go of its box and of the container in it. */
static void
memo_clear(struct pkl_reader *r, uint64_t idx)
{
	uint32_t old = r->memo[idx];

	if ((old & 7) != M_BOXED)
		return;
	if (is_cont(&r->boxed[old >> 3])) {
		struct pkl_value ov = r->boxed[old >> 3];

		decref(r, &ov);
	}
	box_free(r, old);
	r->memo[idx] = M_EMPTY;
}

/* Stores v in slot idx (v is the stack's top, or a value of a record
 * read whole by read_record()). */
static int
memo_store(struct pkl_reader *r, uint64_t idx, const struct pkl_value *v,
    struct sv_error *err)
{
	uint32_t m;

	/* bounded by the slots actually set, not the slots allocated: a
	 * ladder of puts each at twice the capacity would otherwise grow the
	 * memo to 16 GiB in two dozen opcodes. CPython numbers memo slots
	 * 0, 1, 2, ... so a real file never comes near this. */
	if (idx >= UINT32_MAX || idx > 2 * r->memo_used + (1u << 20))
		return fail(r, err, SV_ERR_LIMIT, "memo index %llu too large",
		    (unsigned long long)idx);
	if (idx >= r->memo_cap)
		memo_grow(r, idx + 1);
	if (idx >= r->memo_top) {
		if (idx > r->memo_top) /* MEMOIZE never skips a slot */
			memset(r->memo + r->memo_top, 0,
			    (idx - r->memo_top) * sizeof *r->memo);
		r->memo[idx] = M_EMPTY;
		r->memo_top = idx + 1;
	}
	if ((r->memo[idx] & 7) == M_EMPTY)
		r->memo_used++;
	else
		memo_clear(r, idx);
	m = memo_encode(r, idx, v);
	if (m == 0)
		return fail(r, err, SV_ERR_LIMIT, "more than %u boxed memo "
		    "values", BOX_MAX);
	r->memo[idx] = m;
	if (is_cont(v)) {
		struct cont *c = cont_of(r, v);

		c->refs++;
		c->memo = (uint32_t)idx;
	}
	if (idx + 1 > r->st.memo_slots)
		r->st.memo_slots = idx + 1;
	return 0;
}

static int
memo_put(struct pkl_reader *r, uint64_t idx, struct sv_error *err)
{
	if (r->sp == 0 || (r->n_marks > 0 && r->marks[r->n_marks - 1] == r->sp))
		return fail(r, err, SV_ERR_FORMAT,
		    "memo store with empty stack");
	return memo_store(r, idx, &r->stack[r->sp - 1], err);
}

static int
memo_get(struct pkl_reader *r, uint64_t idx, struct sv_error *err);

/* ---- stack ------------------------------------------------------------- */

static int __attribute__((noinline))
grow_stack(struct pkl_reader *r, struct sv_error *err)
{
	if (r->stack_cap >= MAX_DEPTH)
		return fail(r, err, SV_ERR_LIMIT, "stack deeper than %u",
		    MAX_DEPTH);
	r->stack_cap = r->stack_cap ? r->stack_cap * 2 : 256;
	r->stack = xreallocarray(r->stack, r->stack_cap, sizeof *r->stack);
	if (r->stack_cap > r->st.max_stack)
		r->st.max_stack = r->stack_cap;
	return 0;
}

static inline int
push(struct pkl_reader *r, const struct pkl_value *v, struct sv_error *err)
{
	if (__builtin_expect(r->sp == r->stack_cap, 0) &&
	    grow_stack(r, err) != 0)
		return -1;
	r->stack[r->sp++] = *v;
	return 0;
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
		return fail(r, err, SV_ERR_FORMAT, "memo index %llu not set",
		    (unsigned long long)idx);
	if (memo_decode(r, idx, r->memo[idx], &v, err) != 0)
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
		return fail(r, err, SV_ERR_FORMAT, "stack underflow");
	return 0;
}

static int
pop_mark(struct pkl_reader *r, size_t *mark, struct sv_error *err)
{
	if (r->n_marks == 0)
		return fail(r, err, SV_ERR_FORMAT, "no MARK on the stack");
	*mark = r->marks[--r->n_marks];
	return 0;
}

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
	if (pc->kind == PKL_LIST || pc->kind == PKL_SET)
		return r->sink->classify(r->ctx, r, pc->cls, NULL,
		    pc->count + (t - lo), kind);
	return 0;
}

static int
push_cont(struct pkl_reader *r, uint8_t kind, uint8_t cls,
    struct sv_error *err)
{
	struct pkl_value v = cont_new(r, kind, cls);

	if (push(r, &v, err) != 0) {
		decref(r, &v);
		return -1;
	}
	return 0;
}

static int
push_new_cont(struct pkl_reader *r, uint8_t kind, struct sv_error *err)
{
	return push_cont(r, kind, classify_new(r, kind), err);
}

/* child (container c) was consumed by the sink (t: PKL_DROP, or
 * PKL_ID_REPLACE by id): the memo forgets it or maps it to the id. */
static void
consume(struct pkl_reader *r, struct cont *c, const struct pkl_value *child,
    int t, uint64_t id, uint8_t id_cls)
{
	if (c->memo != NO_MEMO && c->memo < r->memo_top &&
	    (r->memo[c->memo] & 7) == M_BOXED &&
	    r->boxed[r->memo[c->memo] >> 3].v.ref == child->v.ref &&
	    is_cont(&r->boxed[r->memo[c->memo] >> 3])) {
		struct pkl_value idv;

		memset(&idv, 0, sizeof idv);
		idv.kind = PKL_ID;
		idv.cls = id_cls;
		idv.v.id = id;
		box_free(r, r->memo[c->memo]);
		/* the box just freed is there for an id that needs one */
		r->memo[c->memo] = t == PKL_DROP ? (uint32_t)M_GONE
		    : memo_encode(r, c->memo, &idv);
		c->refs--;
	}
	c->taken = (uint8_t)t;
	c->id = id;
	c->id_cls = id_cls;
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
		decref(r, child);
		goto stored;
	}
	t = r->sink->take(r->ctx, r, pcls, parent, key, index, child, &id,
	    &id_cls, err);
	if (t < 0) {
		if (err != NULL && err->offset == SV_NO_OFFSET)
			err->offset = r->op_pos;
		decref(r, child);
		return -1;
	}
	if (t == PKL_KEEP) {
		if (pc != NULL)
			cont_push(pc, child);
		else
			decref(r, child);
		return 0;
	}
	if (t == PKL_SKIP) {
		/* not stored: the memo's reference, if any, keeps it */
		decref(r, child);
		return 0;
	}
	consume(r, c, child, t, id, id_cls);
	decref(r, child);
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
		return fail(r, err, SV_ERR_FORMAT, "%s target is not a %s",
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
			cont_push_run(pc, &r->stack[i], j - i);
			pc->count += j - i;
			i = j - 1;
			continue;
		}
		index = pc->count++;

		if (give(r, pc, pc->cls, &r->stack[m - 1], NULL, index,
		    &r->stack[i], err) != 0) {
			for (i++; i < r->sp; i++)
				decref(r, &r->stack[i]);
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
		return fail(r, err, SV_ERR_FORMAT,
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
		return fail(r, err, SV_ERR_FORMAT,
		    "SETITEM target is not a dict");
	if ((r->sp - from) & 1)
		return fail(r, err, SV_ERR_FORMAT, "odd number of dict items");
	for (i = from; i < r->sp; i += 2) {
		struct pkl_value key = r->stack[i];

		if (!is_cont(&r->stack[i + 1])) {
			/* pairs whose value is no container: copy the run in
			 * one go (keys are stored as they are either way) */
			size_t j = i + 2;

			while (j < r->sp && !is_cont(&r->stack[j + 1]))
				j += 2;
			cont_push_run(pc, &r->stack[i], j - i);
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
				decref(r, &r->stack[i]);
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
static int
record_done(const struct pkl_reader *r, size_t p)
{
	uint64_t ops = 0; /* not counted: the general path reads these */

	return skip_frames(r->buf, r->len, &p, &ops) &&
	    (r->buf[p] == PKL_OP_EMPTY_DICT || r->buf[p] == PKL_OP_APPENDS ||
	    r->buf[p] == PKL_OP_APPEND);
}

static int
is_record_class(const struct pkl_reader *r, uint8_t cls)
{
	return r->sink->take_record != NULL && cls < 32 &&
	       (r->sink->record_classes >> cls & 1);
}

/* Makes *v the None that stands for a record taken when it closed
 * (in place: a copy of it loads 16 bytes just stored in pieces, which
 * stalls). */
static void
set_taken(struct pkl_value *v)
{
	memset(v, 0, sizeof *v);
	v->kind = PKL_NONE;
	v->flags = F_TAKEN;
}

/* After a SETITEM(S) filled the dict on the stack's top: takes it now if
 * it is a complete record (pkl_sink.take_record). */
static int
close_record(struct pkl_reader *r, struct sv_error *err)
{
	struct pkl_value *top = &r->stack[r->sp - 1];
	struct cont *c;

	if (top->kind != PKL_DICT || !is_record_class(r, top->cls) ||
	    !record_done(r, r->pos))
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
	consume(r, c, top, PKL_DROP, 0, 0);
	decref(r, top);
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
		return fail(r, err, SV_ERR_FORMAT, "SETITEMS without a dict");
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
			decref(r, &tmp[i]);
		free(tmp);
		return fail(r, err, SV_ERR_FORMAT, "odd number of dict items");
	}
	v = cont_new(r, kind, classify_new(r, kind));
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
				decref(r, &tmp[i]);
			free(tmp);
			decref(r, &v);
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
		decref(r, &v);
		return -1;
	}
	return 0;
}

/* ---- operands ---------------------------------------------------------- */

static int
operand(struct pkl_reader *r, size_t n, const uint8_t **p,
    struct sv_error *err)
{
	if (r->len - r->pos < n)
		return fail(r, err, SV_ERR_FORMAT, "truncated %s operand",
		    op_names[r->buf[r->op_pos]]);
	*p = r->buf + r->pos;
	r->pos += n;
	return 0;
}

static inline uint64_t
le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	switch (n) {
	case 1: return p[0];
	case 2: { uint16_t x; memcpy(&x, p, 2); return x; }
	case 4: { uint32_t x; memcpy(&x, p, 4); return x; }
	case 8: memcpy(&v, p, 8); return v;
	default: break;
	}
#endif
	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* BINFLOAT's operand: an IEEE 754 double, big-endian. */
static double
binfloat(const uint8_t *p)
{
	uint64_t u = 0;
	double f;
	int i;

	for (i = 0; i < 8; i++)
		u = u << 8 | p[i];
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Decodes an n-byte little-endian two's-complement integer. */
static void
decode_long(const uint8_t *p, uint64_t n, struct pkl_value *v)
{
	int neg;

	memset(v, 0, sizeof *v);
	v->kind = PKL_INT;
	if (n == 0)
		return;
	neg = (p[n - 1] & 0x80) != 0;
	/* strip redundant sign bytes */
	while (n > 1 && p[n - 1] == (neg ? 0xff : 0x00) &&
	    ((p[n - 2] & 0x80) != 0) == neg)
		n--;
	if (n <= 8) {
		uint64_t u = le(p, (size_t)n);

		if (neg && n < 8)
			u |= ~0ull << (8 * n);
		v->v.u = u;
		return;
	}
	if (n == 9 && !neg && p[8] == 0) {
		v->v.u = le(p, 8);
		v->flags = PKL_F_UNSIGNED;
		return;
	}
	v->kind = PKL_BIGINT;
	v->v.i = neg ? -1 : 1;
}

/* decode_long() for 1 to 8 bytes with 8 readable at p (addresses and
 * times: LONG1 of 6 or 7 bytes in every trace event): one load, the
 * sign extended from the top byte. */
static inline void
long_le8(const uint8_t *p, unsigned n, struct pkl_value *v)
{
	uint64_t u;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&u, p, 8);
#else
	unsigned i;

	for (u = 0, i = 0; i < 8; i++)
		u |= (uint64_t)p[i] << (8 * i);
#endif
	if (n < 8) {
		unsigned sh = 64 - 8 * n;
		uint64_t top = 1ull << (8 * n - 1);

		u &= ~0ull >> sh;
		u = (u ^ top) - top; /* two's complement of n bytes */
	}
	memset(v, 0, sizeof *v);
	v->kind = PKL_INT;
	v->v.u = u;
}

static int
op_string(struct pkl_reader *r, uint8_t kind, size_t lenbytes, int sign,
    struct sv_error *err)
{
	const uint8_t *p = NULL;
	uint64_t n;
	struct pkl_value v;

	if (operand(r, lenbytes, &p, err) != 0)
		return -1;
	n = le(p, lenbytes);
	if (sign && (n & 0x80000000u))
		return fail(r, err, SV_ERR_FORMAT, "negative string length");
	if (n > r->len - r->pos)
		return fail(r, err, SV_ERR_FORMAT,
		    "%s length %llu runs past the end of the file",
		    op_names[r->buf[r->op_pos]], (unsigned long long)n);
	if (n > UINT32_MAX)
		return fail(r, err, SV_ERR_LIMIT, "string longer than 4 GiB");
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

/* ---- records read whole ------------------------------------------------ */

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
 * its items are r->rec[first .. first + n). */
struct rec_list {
	uint32_t item;
	size_t first, n;
};

struct rec {
	uint64_t ops;  /* opcodes read (apart from slot: the two are
			* counted in one instruction otherwise, and a
			* 16-byte load of two 8-byte stores stalls) */
	struct pkl_value it[REC_ITEMS];
	size_t n;
	struct rec_put put[REC_PUTS];
	size_t np;
	struct rec_list list[REC_LISTS];
	size_t nl;
	size_t nli;    /* items in r->rec */
	uint64_t slot; /* the next fresh memo slot */
};

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
			memo_decode(r, idx, m, v, NULL);
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
 * or 0. */
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
		if (q >= len || buf[q] > len - q - 1)
			return 0;
		k = buf[q++];
		if (k >= 1 && k <= 8 && len - q >= 8)
			long_le8(buf + q, (unsigned)k, v);
		else
			decode_long(buf + q, k, v);
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
		if (q >= len || buf[q] > len - q - 1)
			return 0;
		v->kind = PKL_STR;
		v->len = buf[q];
		v->v.off = q + 1;
		q += 1 + (size_t)buf[q];
	} else if (op == PKL_OP_BININT2) {
		if (len - q < 2)
			return 0;
		v->kind = PKL_INT;
		v->v.u = le(buf + q, 2);
		q += 2;
	} else if (op == PKL_OP_BINUNICODE) {
		if (len - q < 4 || le(buf + q, 4) > len - q - 4)
			return 0;
		v->kind = PKL_STR;
		v->len = (uint32_t)le(buf + q, 4);
		v->v.off = q + 4;
		q += 4 + (size_t)v->len;
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
 * registers, as in pkl_run(). Stops before anything else, with *q at it. */
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

	while (n < end && p < len) {
		if (buf[p] == PKL_OP_BINGET && len - p >= 2) {
			idx = buf[p + 1];
			at = p + 2;
		} else if (buf[p] == PKL_OP_LONG_BINGET && len - p >= 5) {
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
	if (!skip_frames(buf, len, &q, &rc->ops) ||
	    rec_memo(rc, buf, len, &q, P_LIST, rc->nl) < 0)
		return 0;
	for (;;) {
		if (!skip_frames(buf, len, &q, &rc->ops))
			return 0;
		if (buf[q] == PKL_OP_MARK) {
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
	size_t i;
	int t;

	for (i = 0; i < rc->nl; i++) {
		const struct rec_list *l = &rc->list[i];
		uint8_t lcls = r->sink->classify(r->ctx, r, cls,
		    &rc->it[l->item - 1], 0, PKL_LIST);
		struct pkl_value v = cont_new(r, PKL_LIST, lcls);
		struct cont *c = cont_of(r, &v);

		if (l->n > 0)
			cont_push_run(c, r->rec + l->first, l->n);
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

		if (memo_store(r, u->slot, v, err) != 0)
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

		t = r->sink->take(r->ctx, r, cls, &parent, v - 1, 0, v, &id,
		    &id_cls, err);
		if (t < 0)
			goto failed;
		if (t == PKL_KEEP || t == PKL_SKIP) /* all go to take_record */
			continue;
		consume(r, cont_of(r, v), v, t, id, id_cls);
		decref(r, v);
		memset(v, 0, sizeof *v);
		if (t == PKL_ID_REPLACE) {
			v->kind = PKL_ID;
			v->cls = id_cls;
			v->v.id = id;
		}
	}
	t = r->sink->take_record(r->ctx, r, cls, rc->it, rc->n / 2, err);
	for (i = 0; i < rc->nl; i++) /* lists it kept */
		decref(r, &rc->it[rc->list[i].item]);
	if (t == 0)
		return 0;
failed:
	if (err != NULL && err->offset == SV_NO_OFFSET)
		err->offset = r->op_pos;
	return -1;
}

/* The record's items from *p while they are the common ones (memo fetches
 * of ids and strings, ints, short strings), with everything in registers;
 * stops before anything else, with *p at it. */
static inline __attribute__((always_inline)) void
rec_item_run(struct pkl_reader *r, struct rec *rc, size_t *q)
{
	const uint8_t *buf = r->buf;
	const uint32_t *memo = r->memo;
	const uint64_t *mbase = r->mbase;
	size_t len = r->len, p = *q, top = r->memo_top, n = rc->n, k;
	struct pkl_value *v;
	uint64_t idx;
	uint32_t m;

	for (; n < REC_ITEMS && len - p >= 9; n++) {
		/* 9 bytes: the longest operand read here but LONG1's, which
		 * checks its own */
		v = &rc->it[n];
		v->cls = 0;
		v->flags = 0;
		v->len = 0;
		switch (buf[p]) {
		case PKL_OP_BINGET:
		case PKL_OP_LONG_BINGET:
			if (buf[p] == PKL_OP_BINGET) {
				idx = buf[p + 1];
				k = 2;
			} else {
				idx = le(buf + p + 1, 4);
				k = 5;
			}
			if (idx >= top)
				goto out;
			m = memo[idx];
			if (!slot_id_or_str(m, idx, mbase, v))
				goto out;
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

/*
 * The fast path for a record (pkl_sink.take_record), from just after its
 * EMPTY_DICT: reads the dict whole if it has the shape a pickler writes
 * for a dict of scalars and lists of scalars,
 *   [memo store] MARK (key|value [memo store])* SETITEMS
 * (FRAMEs anywhere; see rec_scalar() and rec_list()) where every memo
 * store takes the next fresh slot and the record is complete
 * (record_done()). Then rec_commit() and the placeholder left on the
 * stack, as the general path would end. Returns 1 so, with *ppos past
 * the SETITEMS; 0, having changed nothing, for anything else (the caller
 * builds the dict as usual); -1 on error.
 */
static int
read_record(struct pkl_reader *r, uint8_t cls, size_t *ppos, uint64_t *pops,
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
		grow_stack(r, NULL);
	if (r->memo_used != r->memo_top ||
	    r->memo_used >= UINT32_MAX - REC_PUTS - 1 ||
	    r->stack_cap - r->sp < REC_ITEMS + 2)
		return 0;
	rc.n = rc.np = rc.nl = rc.nli = 0;
	rc.slot = r->memo_used;
	rc.ops = 0;
	if (!skip_frames(buf, len, &p, &rc.ops))
		return 0;
	if ((t = rec_memo(&rc, buf, len, &p, P_DICT, 0)) < 0 ||
	    (t > 0 && !skip_frames(buf, len, &p, &rc.ops)))
		return 0;
	if (buf[p] != PKL_OP_MARK) {
		/* an empty record is complete as it stands */
		if (!record_done(r, p))
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
	if (rc.n == 0 || (rc.n & 1) || !record_done(r, p + 1))
		return 0;
	if (rec_commit(r, &rc, cls, p, err) != 0)
		return -1;
	set_taken(&r->stack[r->sp++]);
	*ppos = p + 1;
	*pops += rc.ops + 1;
	return 1;
}

/* ---- the loop ---------------------------------------------------------- */

static int op_refused(struct pkl_reader *r, uint8_t op, struct sv_error *err);

static int
step(struct pkl_reader *r, uint8_t op, struct sv_error *err)
{
	const uint8_t *p = NULL;
	struct pkl_value v;
	size_t m = 0;

	switch (op) {
	case PKL_OP_BINGET:
		if (operand(r, 1, &p, err) != 0)
			return -1;
		return memo_get(r, p[0], err);
	case PKL_OP_LONG_BINGET:
		if (operand(r, 4, &p, err) != 0)
			return -1;
		return memo_get(r, le(p, 4), err);
	case PKL_OP_MEMOIZE:
		return memo_put(r, r->memo_used, err);
	case PKL_OP_BINPUT:
		if (operand(r, 1, &p, err) != 0)
			return -1;
		return memo_put(r, p[0], err);
	case PKL_OP_LONG_BINPUT:
		if (operand(r, 4, &p, err) != 0)
			return -1;
		return memo_put(r, le(p, 4), err);
	case PKL_OP_MARK:
		if (r->n_marks >= MAX_DEPTH)
			return fail(r, err, SV_ERR_LIMIT, "marks nested deeper "
			    "than %u", MAX_DEPTH);
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
	case PKL_OP_SHORT_BINUNICODE: return op_string(r, PKL_STR, 1, 0, err);
	case PKL_OP_BINUNICODE: return op_string(r, PKL_STR, 4, 0, err);
	case PKL_OP_BINUNICODE8: return op_string(r, PKL_STR, 8, 0, err);
	case PKL_OP_SHORT_BINSTRING: return op_string(r, PKL_STR, 1, 0, err);
	case PKL_OP_BINSTRING: return op_string(r, PKL_STR, 4, 1, err);
	case PKL_OP_SHORT_BINBYTES: return op_string(r, PKL_BYTES, 1, 0, err);
	case PKL_OP_BINBYTES: return op_string(r, PKL_BYTES, 4, 0, err);
	case PKL_OP_BINBYTES8:
	case PKL_OP_BYTEARRAY8: return op_string(r, PKL_BYTES, 8, 0, err);
	case PKL_OP_BININT1:
		if (operand(r, 1, &p, err) != 0)
			return -1;
		return push_scalar(r, PKL_INT, p[0], err);
	case PKL_OP_BININT2:
		if (operand(r, 2, &p, err) != 0)
			return -1;
		return push_scalar(r, PKL_INT, le(p, 2), err);
	case PKL_OP_BININT:
		if (operand(r, 4, &p, err) != 0)
			return -1;
		return push_scalar(r, PKL_INT,
		    (uint64_t)(int64_t)(int32_t)(uint32_t)le(p, 4), err);
	case PKL_OP_LONG1:
	case PKL_OP_LONG4: {
		size_t nb = op == PKL_OP_LONG1 ? 1 : 4;
		uint64_t n;

		if (operand(r, nb, &p, err) != 0)
			return -1;
		n = le(p, nb);
		if (op == PKL_OP_LONG4 && (n & 0x80000000u))
			return fail(r, err, SV_ERR_FORMAT,
			    "negative LONG4 size");
		if (n > r->len - r->pos)
			return fail(r, err, SV_ERR_FORMAT,
			    "%s length %llu runs past the end of the file",
			    op_names[op], (unsigned long long)n);
		decode_long(r->buf + r->pos, n, &v);
		r->pos += (size_t)n;
		return push(r, &v, err);
	}
	case PKL_OP_BINFLOAT:
		if (operand(r, 8, &p, err) != 0)
			return -1;
		memset(&v, 0, sizeof v);
		v.kind = PKL_FLOAT;
		v.v.f = binfloat(p);
		return push(r, &v, err);
	case PKL_OP_NONE: return push_scalar(r, PKL_NONE, 0, err);
	case PKL_OP_NEWTRUE: return push_scalar(r, PKL_BOOL, 1, err);
	case PKL_OP_NEWFALSE: return push_scalar(r, PKL_BOOL, 0, err);
	case PKL_OP_TUPLE1:
	case PKL_OP_TUPLE2:
	case PKL_OP_TUPLE3: {
		size_t n = (size_t)(op - PKL_OP_TUPLE1 + 1);

		if (need(r, n, err) != 0)
			return -1;
		return op_build_from(r, PKL_TUPLE, r->sp - n, err);
	}
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
	case PKL_OP_FRAME:
		return operand(r, 8, &p, err);
	case PKL_OP_PROTO:
		if (operand(r, 1, &p, err) != 0)
			return -1;
		if (p[0] > 5)
			return fail(r, err, SV_ERR_UNSUPPORTED,
			    "pickle protocol %d is newer than 5", p[0]);
		r->protocol = p[0];
		return 0;
	case PKL_OP_POP:
		if (r->sp > top_mark(r)) {
			decref(r, &r->stack[--r->sp]);
			return 0;
		}
		return pop_mark(r, &m, err);
	case PKL_OP_POP_MARK:
		if (pop_mark(r, &m, err) != 0)
			return -1;
		while (r->sp > m)
			decref(r, &r->stack[--r->sp]);
		return 0;
	case PKL_OP_DUP:
		if (need(r, 1, err) != 0)
			return -1;
		v = r->stack[r->sp - 1];
		incref(r, &v);
		return push(r, &v, err);
	default:
		return op_refused(r, op, err);
	}
}

static int
op_refused(struct pkl_reader *r, uint8_t op, struct sv_error *err)
{
	switch (op_kinds[op]) {
	case PKL_OPK_CODE + 1:
		return fail(r, err, SV_ERR_UNSUPPORTED,
		    "opcode %s (0x%02x) imports or calls code; refusing",
		    op_names[op], op);
	case PKL_OPK_TEXT + 1:
		return fail(r, err, SV_ERR_UNSUPPORTED,
		    "opcode %s (0x%02x) of text protocols 0/1 is not supported",
		    op_names[op], op);
	default:
		return fail(r, err, SV_ERR_FORMAT,
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
		return fail(r, err, SV_ERR_FORMAT, "STOP with an empty stack");
	top = r->stack[--r->sp];
	return give(r, NULL, 0, NULL, NULL, 0, &top, err);
}

int
pkl_run(const uint8_t *buf, size_t len, const struct pkl_sink *sink,
    void *ctx, struct pkl_reader **keep, struct sv_error *err)
{
	struct pkl_reader *r = xmalloc(sizeof *r);
	size_t pos = 0;
	uint64_t ops = 0, next_progress;
	int rc = -1;

	reader_init(r, buf, len, sink, ctx);
	if (keep != NULL)
		*keep = NULL;
	if (len == 0) {
		sv_error_set(err, SV_ERR_FORMAT, 0, "empty file");
		goto out;
	}
	if (buf[0] != PKL_OP_PROTO && buf[0] != PKL_OP_MARK &&
	    buf[0] != PKL_OP_EMPTY_DICT && buf[0] != PKL_OP_EMPTY_LIST) {
		sv_error_set(err, SV_ERR_FORMAT, 0,
		    "not a pickle (first byte 0x%02x)", buf[0]);
		goto out;
	}
	/*
	 * The hottest opcodes are decoded here with pos/buf/len in locals and
	 * one bounds check each; anything unusual (a short operand, a full
	 * stack, a memo slot that is not an id or a string, ...) falls back
	 * to step() from the opcode's start, which redoes it with every
	 * check and error message.
	 */
	pos = 0;
	ops = 0;
	next_progress = r->next_progress;
	for (;;) {
		uint8_t op;
		uint64_t m, idx;
		struct pkl_value *sv;

		if (__builtin_expect(pos >= len, 0)) {
			sv_error_set(err, SV_ERR_FORMAT, len,
			    "truncated: the file ends before STOP");
			goto out;
		}
		r->op_pos = pos;
		op = buf[pos++];
		ops++;
		switch (op) {
		case PKL_OP_BINGET:
		case PKL_OP_LONG_BINGET: {
			/* A run of memo fetches (a frame list is a hundred in a
			 * row) stays in this loop with the stack in locals. */
			struct pkl_value *stk = r->stack;
			const uint32_t *memo = r->memo;
			const uint64_t *mbase = r->mbase;
			size_t sp = r->sp, cap = r->stack_cap;
			size_t mcap = r->memo_top, at;

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
				if (__builtin_expect(idx >= mcap || sp == cap,
				    0))
					break;
				m = memo[idx];
				sv = &stk[sp];
				if (!slot_id_or_str(m, idx, mbase, sv))
					break;
				sp++;
				pos = at;
				if (__builtin_expect(pos >= len, 0) ||
				    (buf[pos] != PKL_OP_BINGET &&
				    buf[pos] != PKL_OP_LONG_BINGET))
					break;
				r->op_pos = pos;
				op = buf[pos++];
				ops++;
			}
			r->sp = sp;
			if (pos != r->op_pos + 1)
				break; /* the last one was done */
			goto slow;
		}
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
				decode_long(buf + pos + 1, idx, sv);
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
			goto stop;
		case PKL_OP_MEMOIZE:
			if (memo_put(r, r->memo_used, err) != 0)
				goto out;
			break;
		case PKL_OP_EMPTY_DICT: {
			uint8_t cls;
			int t;

			/* may call the sink: keep r->pos current */
			r->pos = pos;
			cls = classify_new(r, PKL_DICT);
			if (is_record_class(r, cls)) {
				t = read_record(r, cls, &pos, &ops, err);
				if (t < 0)
					goto out;
				if (t > 0)
					break;
			}
			if (push_cont(r, PKL_DICT, cls, err) != 0)
				goto out;
			break;
		}
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
			if (r->spilled == 1) {
				memo_follow(r);
				spill_release(&r->spill,
				    r->memo_top * sizeof *r->memo, MEMO_KEEP,
				    MEMO_RELEASE);
			}
			if (sink->progress != NULL &&
			    sink->progress(ctx, pos) != 0) {
				sv_error_set(err, SV_ERR_CANCELLED, pos,
				    "cancelled");
				goto out;
			}
		}
	}
stop:
	r->pos = pos;
	rc = finish(r, err);
out:
	memo_follow_stop(r); /* the memo is only read from here on */
	r->st.opcodes += ops;
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
	memo_follow_stop(r);
	if (r->spilled == 1)
		spill_free(&r->spill);
	else
		free(r->memo);
	free(r->mbase);
	free(r->boxed);
	free(r->free_boxes);
	free(r->work);
	free(r->rec);
	free(r);
}

/* ---- inspection --------------------------------------------------------- */

const char *
pkl_str(const struct pkl_reader *r, const struct pkl_value *v, size_t *len)
{
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
