/*
 * The pickle VM's memo. See pkl_int.h for the reader it belongs to.
 *
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
 */
#include "config.h"

#include "pickle/pkl_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/follow.h"
#include "util/spill.h"
#include "util/xalloc.h"

#define MEMO_HEAP_MAX (16u << 20) /* bytes of memo kept on the heap */
#define MEMO_KEEP (16u << 20)     /* bytes of a spilled memo kept resident */
#define MEMO_RELEASE (4u << 20)   /* and given back by at least this much */
#define MEMO_AHEAD (4u << 20)     /* bytes of a spilled memo mapped ahead */
#define MEMO_RESERVE ((size_t)UINT32_MAX * 4) /* every slot memo_put allows */
#define BOX_MAX (1u << 29)         /* boxes a slot can name */

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

/* The slot for v stored at idx, boxing what does not fit (0: none could
 * be had). Sets the page's string base on its first string. */
static uint32_t
memo_encode(struct pkl_reader *r, uint64_t idx, const struct pkl_value *v)
{
	uint32_t m;
	int64_t b;

	switch (v->kind) {
	case PKL_STR:
		m = memo_str_slot(&r->mbase[idx >> MEMO_PAGE_BITS], v->v.off,
		    v->len);
		if (m != 0)
			return m;
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

int
pkl_memo_decode(struct pkl_reader *r, uint64_t idx, uint32_t m,
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
			return pkl_fail(r, err, SV_ERR_FORMAT,
			    "memo refers to a consumed object");
		return 0;
	case M_GONE:
		return pkl_fail(r, err, SV_ERR_FORMAT,
		    "memo refers to a consumed record");
	default:
		return pkl_fail(r, err, SV_ERR_FORMAT, "memo slot is empty");
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
void
pkl_memo_follow_stop(struct pkl_reader *r)
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
		pkl_memo_follow_stop(r);
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

		pkl_decref(r, &ov);
	}
	box_free(r, old);
	r->memo[idx] = M_EMPTY;
}

/* Stores v in slot idx (v is the stack's top, or a value of a record
 * read whole by pkl_read_record()). */
int
pkl_memo_store(struct pkl_reader *r, uint64_t idx, const struct pkl_value *v,
    struct sv_error *err)
{
	uint32_t m;

	/* bounded by the slots actually set, not the slots allocated: a
	 * ladder of puts each at twice the capacity would otherwise grow the
	 * memo to 16 GiB in two dozen opcodes. CPython numbers memo slots
	 * 0, 1, 2, ... so a real file never comes near this. */
	if (idx >= UINT32_MAX || idx > 2 * r->memo_used + (1u << 20))
		return pkl_fail(r, err, SV_ERR_LIMIT,
		    "memo index %llu too large", (unsigned long long)idx);
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
	else {
		memo_clear(r, idx);
		r->memo_gen++;
	}
	m = memo_encode(r, idx, v);
	if (m == 0)
		return pkl_fail(r, err, SV_ERR_LIMIT, "more than %u boxed memo "
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

/* child (container c) was consumed by the sink (t: PKL_DROP, or
 * PKL_ID_REPLACE by id): the memo forgets it or maps it to the id. */
void
pkl_consume(struct pkl_reader *r, struct cont *c, const struct pkl_value *child,
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
		r->memo_gen++;
		/* the box just freed is there for an id that needs one */
		r->memo[c->memo] = t == PKL_DROP ? (uint32_t)M_GONE
		    : memo_encode(r, c->memo, &idv);
		c->refs--;
	}
	c->taken = (uint8_t)t;
	c->id = id;
	c->id_cls = id_cls;
}

void
pkl_memo_step(struct pkl_reader *r)
{
	if (r->spilled == 1) {
		memo_follow(r);
		spill_release(&r->spill, r->memo_top * sizeof *r->memo,
		    MEMO_KEEP, MEMO_RELEASE);
	}
}

void
pkl_memo_free(struct pkl_reader *r)
{
	pkl_memo_follow_stop(r);
	if (r->spilled == 1)
		spill_free(&r->spill);
	else
		free(r->memo);
	free(r->mbase);
	free(r->boxed);
	free(r->free_boxes);
}
