#ifndef SNAPVIEW_PICKLE_PKL_INT_H
#define SNAPVIEW_PICKLE_PKL_INT_H
/*
 * Private to src/pickle/: the reader's state and what the files of the
 * VM share. pkl_reader.h is the contract; this is how it is kept.
 *
 * Files, each calling only those listed before it (no call cycle):
 *   pkl_value.c   the values: containers in their pool and their
 *                 references, the value stack, long integers, errors
 *   pkl_memo.c    the memo: 4-byte slots, boxes for what does not fit,
 *                 the file it moves to when it grows (util/spill.h)
 *   pkl_record.c  the fast path for a record (a trace event): a dict
 *                 read whole at its EMPTY_DICT without building it
 *   pkl_json.c    a JSON snapshot as the same values and sink calls,
 *                 from libyajl's callbacks, and its strings with escapes
 *   pkl_reader.c  the VM: the opcode loop and the general path of every
 *                 opcode, pkl_run(), inspection of values
 *
 * Values on the stack are 16-byte tagged structs. Containers live in a
 * recycled pool and are reference counted (references from the stack,
 * from parent containers and from one memo slot); a reference carries
 * the pool index and a generation so a stale one is detected, never
 * followed. Each opcode and length byte of the input (r->buf) is read
 * once, into a local that is then checked and used: the file is a shared
 * mapping its owner may rewrite while we read it. A reader belongs to the
 * thread running pkl_run() (the memo's follower thread touches only the
 * fields it is given, see pkl_memo.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pickle/pkl_reader.h"
#include "util/err.h"
#include "util/spill.h"

struct follower;

#define MAX_DEPTH (1u << 20)       /* stack entries, and MARKs */
#define NO_MEMO UINT32_MAX
#define MEMO_PAGE_BITS 10          /* slots sharing one string base */

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

/* flags of the None left on the stack by a record taken when it closed
 * (pkl_sink.take_record): its list counts it and stores nothing */
#define F_TAKEN 0x8000
/* flags of a JSON string with escapes: v.off and len are its raw text
 * in the input, which pkl_str() decodes (pkl_json_str()) */
#define F_JSON_ESC 0x4000

/* JSON: objects and arrays nested this deep at most (CPython's json
 * module stops near 1000 too); buffers for strings decoded at once */
#define PKL_JSON_DEPTH 1000
#define PKL_JSON_RING 4
struct pkl_jring {
	char *buf[PKL_JSON_RING];
	size_t cap[PKL_JSON_RING];
	unsigned next;
};

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

/* A list of a record read whole (pkl_record.c): where its bytes are (a
 * MARK, memo fetches of ids and strings, an APPENDS), how many opcodes
 * they are, and what the sink's take_items() made of them. */
struct rec_seen {
	uint64_t hash;
	uint64_t gen;      /* the reader's memo_gen then */
	size_t off;
	uint32_t len, ops;
	uint64_t id;
	uint8_t cls, id_cls, set;
};

/* A memo fetch read as item i of a record (pkl_record.c, "fetches
 * remembered by place"): its opcode and operand (word, under mask, with
 * REC_TMPL_TAG set so that a zeroed entry matches nothing), their
 * length k, the value, and the reader's memo_gen then. */
#define REC_TMPL 32
#define REC_TMPL_TAG (1ull << 63)
struct rec_tmpl {
	uint64_t word, mask;
	struct pkl_value v;
	uint64_t gen;
	size_t k;
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
	 * memo_top (pkl_memo.c), and what only it touches. */
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
	/* Lists of records read whole lately, by a hash of their bytes
	 * (pkl_record.c), NULL until the first; and how many times a memo
	 * slot changed in place (a store over a set slot, a container
	 * turned into its id), which makes a list seen before stale. */
	struct rec_seen *seen;
	uint64_t memo_gen;
	struct rec_tmpl tmpl[REC_TMPL];
	/* classify() of a dict in a list of class dict_parent, when that
	 * class is one of the sink's index_free (dict_cls_set) */
	uint8_t dict_parent, dict_cls, dict_cls_set;
	/* Shapes of records read whole lately (pkl_record.c), NULL until
	 * the first: the one that matched last, the next to replace, and
	 * records read since a shape last matched. */
	struct rec_shape *shapes;
	unsigned shape_at, shape_next, shape_misses;
	/* shapes made so far; while a record read by a shape with its keys
	 * in it is taken, that shape's number (pkl_record_shape()) */
	uint64_t shapes_made, shape_taking;
	struct pkl_jring *jring; /* JSON input: its decoded strings */

	struct pkl_stats st;
};

/* ---- pkl_value.c --------------------------------------------------------- */

/* Sets err (code, the offset of the opcode being run, the message) and
 * returns -1. */
int pkl_fail(struct pkl_reader *r, struct sv_error *err,
    enum sv_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A new container of kind and class cls, with the stack's reference. */
struct pkl_value pkl_cont_new(struct pkl_reader *r, uint8_t kind, uint8_t cls);

/* Drops one reference; frees containers reaching zero. */
void pkl_decref(struct pkl_reader *r, const struct pkl_value *v);

/* Appends n values at v to c in one copy; the caller counts the
 * containers among them. */
void pkl_cont_push_run(struct cont *c, const struct pkl_value *v, size_t n);

/* Doubles the value stack, up to MAX_DEPTH (-1 and err set past it;
 * err may be NULL). */
int pkl_grow_stack(struct pkl_reader *r, struct sv_error *err);

/* The n-byte little-endian two's-complement integer at p into *v. */
void pkl_decode_long(const uint8_t *p, uint64_t n, struct pkl_value *v);

/* ---- pkl_memo.c ---------------------------------------------------------- */

/* Slot m of slot idx into *v (-1 and err set for a slot that is empty or
 * holds something consumed; err may be NULL for a slot known good). */
int pkl_memo_decode(struct pkl_reader *r, uint64_t idx, uint32_t m,
    struct pkl_value *v, struct sv_error *err);

/* Stores v in slot idx (v is the stack's top, or a value of a record
 * read whole by pkl_read_record()). */
int pkl_memo_store(struct pkl_reader *r, uint64_t idx,
    const struct pkl_value *v, struct sv_error *err);

/* Child (container c) was consumed by the sink (t: PKL_DROP, or
 * PKL_ID_REPLACE by id): the memo forgets it or maps it to the id. */
void pkl_consume(struct pkl_reader *r, struct cont *c,
    const struct pkl_value *child, int t, uint64_t id, uint8_t id_cls);

/* Once per step of the parse: a memo in its file tells its follower how
 * far it is used and gives back the pages far behind. */
void pkl_memo_step(struct pkl_reader *r);

/* Joins the memo's follower thread, if any: before the file is
 * unmapped. */
void pkl_memo_follow_stop(struct pkl_reader *r);

/* Frees the memo, its boxes and its file. */
void pkl_memo_free(struct pkl_reader *r);

/* ---- pkl_record.c -------------------------------------------------------- */

/* A record read whole from *ppos, just after its EMPTY_DICT: 1 with
 * *ppos past its SETITEMS and *pops counting its opcodes; 0, having
 * changed nothing, for a shape it does not take; -1 on error. */
int pkl_read_record(struct pkl_reader *r, uint8_t cls, size_t *ppos,
    uint64_t *pops, struct sv_error *err);

/* Whether the opcode at p (FRAMEs skipped) shows that the record just
 * closed is complete. */
int pkl_record_done(const struct pkl_reader *r, size_t p);

/* ---- pkl_json.c ---------------------------------------------------------- */

/* Whether buf is JSON: its first byte other than a blank is { or [. */
int pkl_json_is(const uint8_t *buf, size_t len);

/* Parses the JSON document r->buf[0..len) into the sink, the top-level
 * value handed to take() as pkl_run()'s is. 0, or -1 with err set. */
int pkl_json_parse(struct pkl_reader *r, struct sv_error *err);

/* The decoded text of a string flagged F_JSON_ESC, valid until
 * PKL_JSON_RING more such strings are decoded. */
const char *pkl_json_str(const struct pkl_reader *r,
    const struct pkl_value *v, size_t *len);

/* ---- shared inline helpers ----------------------------------------------- */

static inline int
is_cont(const struct pkl_value *v)
{
	return v->kind == PKL_LIST || v->kind == PKL_TUPLE ||
	       v->kind == PKL_DICT || v->kind == PKL_SET;
}

static inline struct cont *
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

/* Makes *v the None that stands for a record taken when it closed
 * (in place: a copy of it loads 16 bytes just stored in pieces, which
 * stalls). */
static inline void
set_taken(struct pkl_value *v)
{
	memset(v, 0, sizeof *v);
	v->kind = PKL_NONE;
	v->flags = F_TAKEN;
}

/* The slot of a string of len bytes at off, stored where *base is its
 * page's string base, as pkl_memo_store() makes it: 0 when it does not fit
 * one. Sets the base on the page's first string. */
static inline uint32_t
memo_str_slot(uint64_t *base, uint64_t off, uint32_t len)
{
	if (len > STR_LEN_MAX)
		return 0;
	if (*base == 0 && off < UINT64_MAX)
		*base = off + 1;
	if (off + 1 >= *base && off + 1 - *base <= STR_DELTA_MAX)
		return M_STR | len << 3 | (uint32_t)(off + 1 - *base) << 11;
	return 0;
}

/* Slot value m (not M_EMPTY) stored in slot idx when it is the next fresh
 * one and there is room, as pkl_memo_store() would: 1; 0, with nothing
 * done, for pkl_memo_store() to do it. */
static inline int
memo_put_fresh(struct pkl_reader *r, uint64_t idx, uint32_t m)
{
	if (idx != r->memo_top || idx >= r->memo_cap || idx >= UINT32_MAX)
		return 0;
	r->memo[idx] = m;
	r->memo_top = idx + 1;
	r->memo_used++;
	if (idx + 1 > r->st.memo_slots)
		r->st.memo_slots = idx + 1;
	return 1;
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

/* ---- operands ------------------------------------------------------------ */

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
static inline double
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

/* The value of a LONG1 of n bytes, 1 to 8, with 8 readable at p (addresses
 * and times: 6 or 7 bytes in every trace event): one load, the sign
 * extended from the top byte. */
static inline uint64_t
long_le(const uint8_t *p, unsigned n)
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
	return u;
}

/* pkl_decode_long() for 1 to 8 bytes with 8 readable at p. */
static inline void
long_le8(const uint8_t *p, unsigned n, struct pkl_value *v)
{
	memset(v, 0, sizeof *v);
	v->kind = PKL_INT;
	v->v.u = long_le(p, n);
}

#endif
