#ifndef SNAPVIEW_PICKLE_PKL_READER_H
#define SNAPVIEW_PICKLE_PKL_READER_H
/*
 * A streaming pickle VM (protocols 2-5) that never executes code and never
 * builds the whole file as a value tree.
 *
 * Containers are classified when they are created: the sink's classify()
 * is told the class of the parent container and the dict key (or list
 * index) the new container will sit under, and returns a small class id
 * of its own choosing. When a parent takes a child container (APPEND(S),
 * SETITEM(S), ADDITEMS), the sink's take() sees it first and decides:
 *   PKL_KEEP    store it in the parent as usual;
 *   PKL_DROP    the sink consumed it: free it and forget its memo slot
 *               (a later reference to that slot is an error);
 *   PKL_ID      replace it, in the parent and in its memo slot, by an
 *               interned id (e.g. a frame list becomes a stack id), so
 *               later memo references yield the id directly;
 *   PKL_SKIP    nothing reads the parent's items: leave it out of them
 *               (the parent counts it); it lives on while its memo slot
 *               or the stack holds it.
 * That is how records (trace events, blocks, segments) flow to the
 * snapshot layer one at a time while shared frames stay interned.
 *
 * Strings are never copied: a string value is an (offset, length) into
 * the input buffer, which must outlive the reader.
 *
 * A JSON snapshot (its first byte other than a blank is { or [) runs
 * through the same sink as the pickle it was dumped from: libyajl's
 * callbacks make the same values, containers, classify() and take()
 * calls (pkl_json.c); only the opcodes' own statistics stay 0.
 *
 * Limits (all checked, errors carry the byte offset): stack and mark depth
 * 1M, memo indexes up to 2x the slots set + 1M, string lengths within the
 * buffer, integers up to 64 bits (wider ones are kept as PKL_BIGINT with a
 * sign only).
 */
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum pkl_kind {
	PKL_NONE,
	PKL_BOOL,
	PKL_INT,    /* v.i; flags PKL_F_UNSIGNED: v.u holds 2^63..2^64-1 */
	PKL_BIGINT, /* wider than 64 bits; v.i is its sign (-1 or 1) */
	PKL_FLOAT,
	PKL_STR,    /* UTF-8 bytes at buffer + v.off, len bytes */
	PKL_BYTES,
	PKL_LIST,
	PKL_TUPLE,
	PKL_DICT,
	PKL_SET,
	PKL_ID,     /* an id returned by take(); cls is its class */
	PKL_KIND_COUNT
};

#define PKL_F_UNSIGNED 0x1

/* What an input that stops short is called: a file of no bytes, and the
 * start of the message of one that ends inside an opcode or before STOP
 * (a dump killed or crashed mid-write leaves both). */
#define PKL_EMPTY "empty file (a dump that did not finish?)"
#define PKL_CUT_OFF "cut off (the dump did not finish?)"

struct pkl_value {
	uint8_t kind;  /* enum pkl_kind */
	uint8_t cls;   /* containers and ids: the sink's class */
	uint16_t flags;
	uint32_t len;  /* PKL_STR/PKL_BYTES length */
	union {
		int64_t i;
		uint64_t u;
		double f;
		uint64_t off; /* PKL_STR/PKL_BYTES */
		uint64_t ref; /* containers (private) */
		uint64_t id;  /* PKL_ID */
	} v;
};

enum pkl_take { PKL_KEEP, PKL_DROP, PKL_ID_REPLACE, PKL_SKIP };

struct pkl_reader;

struct pkl_sink {
	/* Class of a new container of kind `kind`. parent_cls is 0 at top
	 * level; key is the dict key it will be stored under (NULL when the
	 * parent is a list, then index is its position in that list).
	 * Return 0 when the placement makes no sense for the schema: the
	 * reader may then offer another candidate parent (see pkl_reader.c)
	 * and uses class 0 if none fits. */
	uint8_t (*classify)(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
	    const struct pkl_value *key, uint64_t index, uint8_t kind);
	/* A parent (class parent_cls; parent is NULL for the root) takes
	 * child (a container). key as above. parent->v.ref identifies the
	 * parent container while it lives. Return PKL_KEEP, PKL_DROP,
	 * PKL_SKIP, or PKL_ID_REPLACE with *id and *id_cls set; -1 with err
	 * set aborts the load. */
	int (*take)(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
	    const struct pkl_value *parent, const struct pkl_value *key,
	    uint64_t index,
	    const struct pkl_value *child, uint64_t *id, uint8_t *id_cls,
	    struct sv_error *err);
	/* Called every ~1 MiB of input with the offset reached; non-zero
	 * cancels. May be NULL. */
	int (*progress)(void *ctx, uint64_t offset);
	/*
	 * Records taken when they close. May be NULL. A dict whose class c
	 * (< 32) has bit c set in record_classes is handed here as soon as
	 * the pickle has filled it, not when its parent takes it: at the
	 * SETITEM(S) followed (FRAMEs aside) by the EMPTY_DICT of its next
	 * sibling or by the APPEND(S) that adds it to its list, which is
	 * where a pickler writes the end of a record. items holds n
	 * key/value pairs (2n values). The record is then consumed as by
	 * PKL_DROP: its memo slot refers to a consumed record, and the list
	 * it is appended to counts it (pkl_count) without storing it. A
	 * dict of scalars, ids, memo fetches of them and lists of those, in
	 * the shape a pickler writes, is read without building a dict: its
	 * lists are made and handed to take() first, as they would be, but
	 * with a parent that names no container (pkl_items() of it gives
	 * nothing); an empty one is taken right after its EMPTY_DICT and
	 * memo store.
	 * Returns 0, or -1 with err set (err->offset defaults to the
	 * SETITEM(S)).
	 */
	int (*take_record)(void *ctx, struct pkl_reader *r, uint8_t cls,
	    const struct pkl_value *items, size_t n, struct sv_error *err);
	uint32_t record_classes;
	/*
	 * A list of class cls read whole inside a record, before it is made:
	 * its n items. PKL_ID_REPLACE with *id and *id_cls set takes it as
	 * take() would have (the list is never made: its memo slot holds
	 * the id, and take() does not see it); PKL_KEEP makes the list and
	 * hands it to take() as usual; -1 with err set aborts the load. May
	 * be NULL. Most trace entries bring a list of their own, their
	 * frames, and making it only to turn it into an id was a tenth of
	 * a parse. Its answer must depend on cls and the items alone: a
	 * list whose bytes repeat those of one it answered PKL_ID_REPLACE
	 * (while no memo slot changed) gets that answer without a call
	 * (pkl_record.c).
	 */
	int (*take_items)(void *ctx, struct pkl_reader *r, uint8_t cls,
	    const struct pkl_value *items, size_t n, uint64_t *id,
	    uint8_t *id_cls, struct sv_error *err);
	/*
	 * Bit c (c < 32) set: classify() of a dict in a list of class c,
	 * with its key NULL, gives the same class at any index and does
	 * nothing else that a call with the same arguments before did not
	 * do. A dict after the first in such a list (a trace's entries)
	 * then gets that answer without a call.
	 */
	uint32_t index_free;
};

/* Runs the pickle in buf[0..len) to its STOP, or the JSON document in it
 * to its end. The top-level value is handed to take() with parent_cls 0
 * and key NULL. Returns 0, or -1 with err set (err->offset is the offset
 * of the failing opcode, or of the JSON token's last byte). */
int pkl_run(const uint8_t *buf, size_t len, const struct pkl_sink *sink,
    void *ctx, struct pkl_reader **keep, struct sv_error *err);

/* ---- inspecting values during classify()/take() ------------------------ */

/* Pointer to a string's bytes (not NUL-terminated) and its length. */
const char *pkl_str(const struct pkl_reader *r, const struct pkl_value *v,
    size_t *len);

/* Items of a container: a dict has 2*n entries (key, value, ...); other
 * containers n entries. Borrowed, valid during the callback. */
const struct pkl_value *pkl_items(const struct pkl_reader *r,
    const struct pkl_value *v, size_t *n);

/* Number of items ever appended to a list (including dropped ones). */
uint64_t pkl_count(const struct pkl_reader *r, const struct pkl_value *v);

/* Protocol seen in PROTO (0 if none). */
int pkl_protocol(const struct pkl_reader *r);

/* Offset of the opcode being executed (for error messages). */
uint64_t pkl_offset(const struct pkl_reader *r);

/* In take_record(): the shape the record was read by (pkl_record.c),
 * with its keys in it, or 0 when it was read otherwise. Two records
 * taken with the same non-zero shape have the same keys in the same
 * order, so what the sink made of one's keys holds for the other's. */
uint64_t pkl_record_shape(const struct pkl_reader *r);

/* Statistics of a finished run. */
struct pkl_stats {
	uint64_t opcodes;
	uint64_t memo_slots;
	uint64_t max_stack;
	uint64_t containers_peak;
	uint64_t memo_boxes;   /* memo boxes ever allocated (reused ones
				* not counted again) */
	uint64_t memo_spilled; /* 1 when the memo moved to its file */
	uint64_t records_shaped; /* records read by the shape of one
				  * before them (pkl_record.c) */
};
void pkl_get_stats(const struct pkl_reader *r, struct pkl_stats *st);

/* Frees a reader kept by pkl_run(..., &keep, ...). NULL is a no-op. */
void pkl_reader_free(struct pkl_reader *r);

/* Name of an opcode byte ("BINGET"), or NULL if it is no opcode. */
const char *pkl_op_name(uint8_t op);

#endif
