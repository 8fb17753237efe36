/*
 * The snapshot schema on top of the streaming pickle reader: classifies
 * containers by where they sit (segments[i].blocks[j], device_traces[d][i],
 * ...), turns each completed record into model rows, and interns frames
 * and stacks (a frame list becomes a stack id the first time it is taken,
 * so its later memo references cost nothing).
 *
 * Every key is decided per record, never by position or order
 * (doc/snapshot-format.md §16.6);
 * unknown keys are counted, unknown actions kept. Legacy blocks use
 * history[0] for their stack and, when requested_size is absent, its
 * real_size (as memory_viz's annotate_snapshot does).
 */
#include "config.h"

#include "snapshot/snap_load.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pickle/pkl_reader.h"
#include "util/gunzip.h"
#include "util/mapfile.h"
#include "util/u64map.h"
#include "util/xalloc.h"

/* Container classes (pkl_sink classify). 0 = unknown. */
enum {
	C_NONE,
	C_ROOT,
	C_SEGMENTS,
	C_SEGMENT,
	C_BLOCKS,
	C_BLOCK,
	C_HISTORY,
	C_HIST,
	C_FRAMES,
	C_FRAME,
	C_TRACES,
	C_TRACE,
	C_EVENT,
	C_SETTINGS,
	C_ANNOTATIONS,
	C_ANNOTATION,
	C_POOL,
	C_SETVAL, /* a setting's value, or inside one: read as text */
	C_HSEGMENTS, /* host_segments: segments of SNAP_HOST_DEVICE */
	C_HSEGMENT,
	C_HTRACES,   /* host_traces: entries, or lists of them */
	C_SETLIST,   /* the ring buffer settings' per-device list */
	C_OTHER   /* nobody reads its items */
};

/* Id classes (PKL_ID values). */
enum { ID_FRAME = 1, ID_STACK };

/* Dict keys the schema knows. */
#define KEY_INFO(_)                                                            \
	_(K_ACTION, "action")                                                  \
	_(K_ADDR, "addr")                                                      \
	_(K_SIZE, "size")                                                      \
	_(K_STREAM, "stream")                                                  \
	_(K_TIME_US, "time_us")                                                \
	_(K_FRAMES, "frames")                                                  \
	_(K_DEVICE_FREE, "device_free")                                        \
	_(K_COMPILE_CONTEXT, "compile_context")                                \
	_(K_USER_METADATA, "user_metadata")                                    \
	_(K_CATEGORY, "category")                                              \
	_(K_POOL_ID, "pool_id")                                                \
	_(K_FORWARD_FRAMES, "forward_frames")                                  \
	_(K_DEVICE, "device")                                                  \
	_(K_ADDRESS, "address")                                                \
	_(K_TOTAL_SIZE, "total_size")                                          \
	_(K_ALLOCATED_SIZE, "allocated_size")                                  \
	_(K_ACTIVE_SIZE, "active_size")                                        \
	_(K_REQUESTED_SIZE, "requested_size")                                  \
	_(K_SEGMENT_TYPE, "segment_type")                                      \
	_(K_SEGMENT_POOL_ID, "segment_pool_id")                                \
	_(K_IS_EXPANDABLE, "is_expandable")                                    \
	_(K_BLOCKS, "blocks")                                                  \
	_(K_STATE, "state")                                                    \
	_(K_HISTORY, "history")                                                \
	_(K_REAL_SIZE, "real_size")                                            \
	_(K_NAME, "name")                                                      \
	_(K_FILENAME, "filename")                                              \
	_(K_LINE, "line")                                                      \
	_(K_STAGE, "stage")                                                    \
	_(K_SEGMENTS, "segments")                                              \
	_(K_DEVICE_TRACES, "device_traces")                                    \
	_(K_ALLOCATOR_SETTINGS, "allocator_settings")                          \
	_(K_EXTERNAL_ANNOTATIONS, "external_annotations")                      \
	_(K_CPP_FRAMES, "cpp_frames")                                          \
	_(K_HOST_SEGMENTS, "host_segments")                                    \
	_(K_HOST_TRACES, "host_traces")                                        \
	_(K_DEVICE_TYPE, "device_type")                                        \
	_(K_TRACE_ALLOC_OVERFLOWED, "trace_alloc_overflowed")                  \
	_(K_TRACE_ALLOC_MAX_ENTRIES, "trace_alloc_max_entries")

enum key {
	K_UNKNOWN,
#define KEY_ENUM(id, name) id,
	KEY_INFO(KEY_ENUM)
#undef KEY_ENUM
	K_COUNT
};

static const char *const key_names[] = {
    "",
#define KEY_NAME(id, name) name,
    KEY_INFO(KEY_NAME)
#undef KEY_NAME
};

/* A direct-mapped cache from a string's offset in the file to a small
 * code: memo-shared key and action strings always sit at one offset, so
 * the string compare happens once per distinct string object. */
#define SCACHE_BITS 10
struct scache {
	uint64_t off[1u << SCACHE_BITS]; /* offset + 1, 0 = empty */
	uint16_t code[1u << SCACHE_BITS];
};

/* The last short string interned for one key: a trace's compile_context
 * is the same text ("N/A") as a new string object in every event, and its
 * user_metadata the empty string, so comparing it with the previous one
 * saves a hash per event. */
#define LASTSTR_MAX 32
struct laststr {
	uint8_t full;   /* 0: empty cache */
	uint32_t len;
	uint32_t id;
	char text[LASTSTR_MAX];
};

/*
 * A trace entry's plan: the entries of a trace name their keys with the
 * same strings (memo fetches, each at one offset) in the same order, so
 * an entry whose keys sit at a plan's offsets takes its fields from the
 * items the plan names, without a key lookup or a dispatch per key (a
 * third of the entry's intake, perf).
 */
#define PLAN_MAX 12
enum { PF_ACTION, PF_ADDR, PF_SIZE, PF_STREAM, PF_TIME, PF_FRAMES,
	PF_CTX, PF_META, PF_POOL, PF_COUNT }; /* interned from PF_CTX on */
struct plan {
	uint32_t n;              /* keys; 0: no plan */
	uint32_t n_unknown;      /* keys counted as unknown */
	uint32_t features;       /* what the keys say the file has */
	int8_t at[PF_COUNT];     /* item of each field's value, or -1 */
	uint8_t interned[3];     /* PF_CTX.. present, in the entry's order */
	uint8_t n_interned;
	uint8_t action_first;    /* no text interned before the action */
	uint64_t shape;          /* pkl_record_shape() of keys it matched */
	uint64_t off[PLAN_MAX];  /* the keys' offsets */
};

/* A block range or first-history entry waiting for its parent dict. */
struct pending {
	uint64_t parent_ref;
	int kind;  /* C_BLOCKS or C_HISTORY */
	uint32_t first, n;           /* C_BLOCKS: block range */
	uint64_t addr, real_size;    /* C_HISTORY: history[0] */
	uint32_t stack;
};

struct loader {
	struct snapshot *s;
	struct pkl_reader *r;
	const struct snap_load_opts *opts;
	struct mapfile *map;
	uint64_t total;
	struct scache keys;
	struct scache actions;
	struct laststr last_ctx, last_meta;
	struct plan plan[2];     /* the last two made */
	int plan_next;           /* plan[plan_next] is the newer */
	uint32_t cur_device;     /* device of the trace being filled */
	struct pending *pend;    /* unordered: removal moves the last in */
	size_t n_pend, cap_pend;
	struct u64map pend_map;  /* pend_key(parent, kind) -> index */
	size_t hist_open;        /* pend index of history[0] awaiting its
				  * block, or SIZE_MAX */
	uint32_t *frame_buf;
	size_t cap_frame_buf;
	uint64_t root_segments;  /* dict items seen in a list root */
	int saw_segments, saw_traces, saw_host;
	int events_begun;        /* opts->events_begin called */
	int root_kind;
	int root_taken;
	uint32_t blocks_claimed; /* blocks before this belong to a list */
};

/* Fibonacci hashing: the multiply spreads nearby offsets apart. */
static inline uint32_t
scache_slot(uint64_t off)
{
	return (uint32_t)((off * 0x9E3779B97F4A7C15ull) >> (64 - SCACHE_BITS));
}

static inline uint16_t
scache_get(struct scache *c, uint64_t off, int *hit)
{
	uint32_t h = scache_slot(off);

	*hit = c->off[h] == off + 1;
	return c->code[h];
}

static void
scache_put(struct scache *c, uint64_t off, uint16_t code)
{
	uint32_t h = scache_slot(off);

	c->off[h] = off + 1;
	c->code[h] = code;
}

static enum key __attribute__((noinline))
key_lookup(struct loader *L, const struct pkl_value *k)
{
	const char *p;
	size_t len;
	int i;
	uint16_t code;

	p = pkl_str(L->r, k, &len);
	code = K_UNKNOWN;
	for (i = 1; i < K_COUNT; i++)
		if (strlen(key_names[i]) == len &&
		    memcmp(key_names[i], p, len) == 0) {
			code = (uint16_t)i;
			break;
		}
	scache_put(&L->keys, k->v.off, code);
	return (enum key)code;
}

static inline enum key
key_of(struct loader *L, const struct pkl_value *k)
{
	int hit;
	uint16_t code;

	if (k == NULL || k->kind != PKL_STR)
		return K_UNKNOWN;
	code = scache_get(&L->keys, k->v.off, &hit);
	if (__builtin_expect(hit, 1))
		return (enum key)code;
	return key_lookup(L, k);
}

/* ---- scalar helpers ---------------------------------------------------- */

static int
as_u64(const struct pkl_value *v, uint64_t *out)
{
	if (v->kind == PKL_INT || v->kind == PKL_BOOL) {
		*out = v->v.u;
		return 0;
	}
	return -1;
}

static uint32_t
intern_value_str(struct loader *L, const struct pkl_value *v)
{
	const char *p;
	size_t len;

	if (v->kind != PKL_STR)
		return 0;
	p = pkl_str(L->r, v, &len);
	return snap_intern_str(L->s, p, len);
}

/* Whether the n bytes at a and b are the same, n at most LASTSTR_MAX: a
 * loop, where glibc's memcmp() took a thirtieth of a parse to compare a
 * trace's "N/A" once per event (perf; its vector code for short inputs
 * checks for a page's end first). */
static inline int
text_eq(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* intern_value_str() through a one-entry cache of the same text. */
static uint32_t
intern_value_cached(struct loader *L, struct laststr *c,
    const struct pkl_value *v)
{
	const char *p;
	size_t len;

	if (v->kind != PKL_STR)
		return 0;
	p = pkl_str(L->r, v, &len);
	/*
	 * The empty string is answered without reading it. Its bytes sit where
	 * the pickle first wrote it, in a page the mapping has long given back,
	 * and glibc's vector memcmp() reads zero bytes with a masked load that
	 * does not map the page again: each such call cost 73 ns against 1 ns,
	 * 0.85 s over the 11.6 M events of a 1 GB snapshot.
	 */
	if (c->full && len == c->len && text_eq(p, c->text, len))
		return c->id;
	c->full = 0;
	c->id = snap_intern_str(L->s, p, len);
	if (len <= LASTSTR_MAX) {
		memcpy(c->text, p, len);
		c->len = (uint32_t)len;
		c->full = 1;
	}
	return c->id;
}

static uint32_t
stack_of(const struct pkl_value *v)
{
	if (v->kind == PKL_ID && v->cls == ID_STACK)
		return (uint32_t)v->v.id;
	return 0;
}

static int
bad(struct loader *L, struct sv_error *err, const char *what,
    const char *key)
{
	return sv_error_set(err, SV_ERR_FORMAT, pkl_offset(L->r),
	    "%s: '%s' has the wrong type", what, key);
}

/* ---- classify ---------------------------------------------------------- */

static uint8_t
classify(void *ctx, struct pkl_reader *r, uint8_t parent,
    const struct pkl_value *key, uint64_t index, uint8_t kind)
{
	struct loader *L = ctx;
	enum key k;

	L->r = r;
	k = key_of(L, key);
	switch (parent) {
	case C_NONE:
		if (key == NULL && index == 0 && L->root_kind == 0 &&
		    (kind == PKL_LIST || kind == PKL_DICT)) {
			L->root_kind = kind;
			return C_ROOT;
		}
		return 0;
	case C_ROOT:
		if (key == NULL)
			return kind == PKL_DICT ? C_SEGMENT : 0;
		switch (k) {
		case K_SEGMENTS: return kind == PKL_LIST ? C_SEGMENTS : 0;
		case K_DEVICE_TRACES: return kind == PKL_LIST ? C_TRACES : 0;
		case K_ALLOCATOR_SETTINGS:
			return kind == PKL_DICT ? C_SETTINGS : 0;
		case K_EXTERNAL_ANNOTATIONS:
			if (kind != PKL_LIST)
				return 0;
			/* the key is there, even with no annotation in it
			 * (a cut keeps the file's keys) */
			L->s->features |= SNAP_F_ANNOTATIONS;
			return C_ANNOTATIONS;
		case K_HOST_SEGMENTS:
			return kind == PKL_LIST ? C_HSEGMENTS : 0;
		case K_HOST_TRACES:
			if (kind != PKL_LIST)
				return 0;
			L->cur_device = SNAP_HOST_DEVICE;
			snap_trace_get(L->s, L->cur_device);
			return C_HTRACES;
		default: return C_OTHER;
		}
	case C_HSEGMENTS:
		return kind == PKL_DICT && key == NULL ? C_HSEGMENT : 0;
	case C_HTRACES:
		/* one list of entries, or a list of lists: all the host's */
		if (key != NULL)
			return 0;
		L->cur_device = SNAP_HOST_DEVICE;
		if (kind == PKL_DICT)
			return C_EVENT;
		return kind == PKL_LIST ? C_TRACE : 0;
	case C_SEGMENTS: return kind == PKL_DICT && key == NULL ? C_SEGMENT : 0;
	case C_BLOCKS: return kind == PKL_DICT && key == NULL ? C_BLOCK : 0;
	case C_HISTORY: return kind == PKL_DICT && key == NULL ? C_HIST : 0;
	case C_FRAMES: return kind == PKL_DICT && key == NULL ? C_FRAME : 0;
	case C_TRACE: return kind == PKL_DICT && key == NULL ? C_EVENT : 0;
	case C_ANNOTATIONS:
		return kind == PKL_DICT && key == NULL ? C_ANNOTATION : 0;
	case C_TRACES:
		if (kind != PKL_LIST || key != NULL || index > UINT16_MAX)
			return 0;
		L->cur_device = (uint32_t)index;
		snap_trace_get(L->s, L->cur_device);
		return C_TRACE;
	case C_SEGMENT:
	case C_HSEGMENT:
		if (key == NULL)
			return 0;
		if (k == K_BLOCKS)
			return kind == PKL_LIST ? C_BLOCKS : 0;
		if (k == K_FRAMES)
			return kind == PKL_LIST ? C_FRAMES : 0;
		if (k == K_SEGMENT_POOL_ID)
			return C_POOL;
		return C_OTHER;
	case C_BLOCK:
		if (key == NULL)
			return 0;
		if (k == K_FRAMES)
			return kind == PKL_LIST ? C_FRAMES : 0;
		if (k == K_HISTORY)
			return kind == PKL_LIST ? C_HISTORY : 0;
		return C_OTHER;
	case C_HIST:
	case C_EVENT:
		if (key == NULL)
			return 0;
		if (k == K_FRAMES)
			return kind == PKL_LIST ? C_FRAMES : 0;
		if (k == K_POOL_ID && parent == C_EVENT)
			return C_POOL;
		return C_OTHER;
	case C_SETTINGS:
		/* the ring buffer's keys (2.14) may hold a list per device:
		 * its items are read; any other list stays unread ("?") */
		if ((k == K_TRACE_ALLOC_OVERFLOWED ||
		    k == K_TRACE_ALLOC_MAX_ENTRIES) &&
		    (kind == PKL_LIST || kind == PKL_TUPLE))
			return C_SETLIST;
		return C_SETVAL;
	case C_SETVAL:
		return C_SETVAL;
	case C_SETLIST:
		return C_OTHER;
	case C_FRAME:
	case C_ANNOTATION:
	case C_POOL:
	case C_OTHER:
		return C_OTHER;
	default:
		return 0;
	}
}

/* ---- records ----------------------------------------------------------- */

/*
 * Pending entries are found by (parent dict, kind) through a hash map, not
 * by a scan: a file can leave any number of them behind (a segment dict
 * with a blocks list that is then popped instead of stored), and a scan
 * per segment made such a 700 KB file take 11 s.
 */
static uint64_t
pend_key(uint64_t parent_ref, int kind)
{
	return parent_ref << 1 | (kind == C_BLOCKS);
}

/* Adds an entry for parent (NULL: not known yet, see C_HISTORY). An
 * entry already there for the same parent and kind is kept (the first
 * blocks list of a segment wins) and the new one goes nowhere. */
static struct pending *
pending_add(struct loader *L, const struct pkl_value *parent, int kind)
{
	static struct pending scratch;
	struct pending *p;
	uint64_t ref = parent != NULL ? parent->v.ref : UINT64_MAX, at;

	if (parent != NULL &&
	    u64map_get(&L->pend_map, pend_key(ref, kind), &at))
		return memset(&scratch, 0, sizeof scratch);
	XGROW(L->pend, L->cap_pend, L->n_pend + 1);
	p = &L->pend[L->n_pend];
	memset(p, 0, sizeof *p);
	p->parent_ref = ref;
	p->kind = kind;
	if (parent != NULL)
		u64map_put(&L->pend_map, pend_key(ref, kind), L->n_pend);
	L->n_pend++;
	return p;
}

/* Removes and returns (by copy) the pending entry of kind for this dict. */
static int
pending_take(struct loader *L, const struct pkl_value *dict, int kind,
    struct pending *out)
{
	uint64_t at;
	size_t last;

	if (!u64map_get(&L->pend_map, pend_key(dict->v.ref, kind), &at))
		return 0;
	u64map_del(&L->pend_map, pend_key(dict->v.ref, kind));
	*out = L->pend[at];
	last = L->n_pend - 1;
	if (at != last) {
		L->pend[at] = L->pend[last];
		if (L->pend[at].parent_ref != UINT64_MAX)
			u64map_put(&L->pend_map,
			    pend_key(L->pend[at].parent_ref, L->pend[at].kind),
			    at);
		if (L->hist_open == last)
			L->hist_open = at;
	}
	L->n_pend--;
	return 1;
}

static int
take_frame(struct loader *L, const struct pkl_value *d, uint64_t *id)
{
	size_t n, i;
	const struct pkl_value *it = pkl_items(L->r, d, &n);
	uint32_t name = 0, file = 0;
	uint64_t line = 0;

	for (i = 0; i < n; i++) {
		const struct pkl_value *v = &it[2 * i + 1];

		switch (key_of(L, &it[2 * i])) {
		case K_NAME: name = intern_value_str(L, v); break;
		case K_FILENAME: file = intern_value_str(L, v); break;
		case K_LINE: as_u64(v, &line); break;
		default: break;
		}
	}
	*id = snap_intern_frame(L->s, name, file, line);
	return PKL_ID_REPLACE;
}

/* A stack from the n items of a frames list: its frame ids. */
static int
take_frame_ids(struct loader *L, const struct pkl_value *it, size_t n,
    uint64_t *id)
{
	size_t i, k = 0;

	if (n > L->cap_frame_buf) {
		L->cap_frame_buf = n;
		L->frame_buf = xreallocarray(L->frame_buf, n,
		    sizeof *L->frame_buf);
	}
	for (i = 0; i < n; i++)
		if (it[i].kind == PKL_ID && it[i].cls == ID_FRAME)
			L->frame_buf[k++] = (uint32_t)it[i].v.id;
	*id = snap_intern_stack(L->s, L->frame_buf, (uint32_t)k);
	return PKL_ID_REPLACE;
}

static int
take_frames(struct loader *L, const struct pkl_value *list, uint64_t *id)
{
	size_t n;
	const struct pkl_value *it = pkl_items(L->r, list, &n);

	return take_frame_ids(L, it, n, id);
}

/* A trace entry's pool_id, (int, int) as a segment's segment_pool_id:
 * the string id of its "A,B" text, 0 for anything else. */
static uint32_t
event_pool(struct loader *L, const struct pkl_value *v)
{
	const struct pkl_value *pi;
	char buf[48];
	size_t m;
	int n;

	if (v->kind != PKL_TUPLE && v->kind != PKL_LIST)
		return 0;
	pi = pkl_items(L->r, v, &m);
	if (m != 2 || pi[0].kind != PKL_INT || pi[1].kind != PKL_INT ||
	    (pi[0].flags & PKL_F_UNSIGNED) || (pi[1].flags & PKL_F_UNSIGNED))
		return 0;
	L->s->features |= SNAP_F_EVENT_POOL;
	n = snprintf(buf, sizeof buf, "%" PRId64 ",%" PRId64, pi[0].v.i,
	    pi[1].v.i);
	return snap_intern_str(L->s, buf, (size_t)n);
}

/* The code of the action named by v (a string) that the cache of
 * actions lacks, cached now (an unknown action's name is interned). */
static uint16_t
action_lookup(struct loader *L, const struct pkl_value *v)
{
	size_t len;
	const char *name = pkl_str(L->r, v, &len);
	uint16_t code = (uint16_t)snap_action_lookup(L->s, name, len);

	scache_put(&L->actions, v->v.off, code);
	return code;
}

/* What a trace entry says, read by its keys or by a plan. */
struct evfields {
	uint64_t addr, size, stream;
	int64_t time_us;
	uint32_t stack, ctx, meta, pool;
	unsigned action;
	int has_time;
};

/* A trace entry's n key/value pairs at it, key by key into *f. Returns 0,
 * or -1 with err set. */
static int
read_by_keys(struct loader *L, const struct pkl_value *it, size_t n,
    struct evfields *f, struct sv_error *err)
{
	struct snapshot *s = L->s;
	size_t i;

	memset(f, 0, sizeof *f);
	f->action = SNAP_ACTION_COUNT + SNAP_MAX_UNKNOWN_ACTIONS;
	f->time_us = SNAP_NO_TIME;
	for (i = 0; i < n; i++) {
		const struct pkl_value *v = &it[2 * i + 1];
		enum key k = key_of(L, &it[2 * i]);

		switch (k) {
		case K_ACTION: {
			int hit;
			uint16_t code;

			if (v->kind != PKL_STR)
				return bad(L, err, "trace entry", "action");
			code = scache_get(&L->actions, v->v.off, &hit);
			f->action = hit ? code : action_lookup(L, v);
			break;
		}
		case K_ADDR:
		case K_DEVICE_FREE:
			if (as_u64(v, &f->addr) != 0)
				return bad(L, err, "trace entry", key_names[k]);
			break;
		case K_SIZE:
			if (as_u64(v, &f->size) != 0)
				return bad(L, err, "trace entry", "size");
			break;
		case K_STREAM:
			if (as_u64(v, &f->stream) != 0)
				return bad(L, err, "trace entry", "stream");
			break;
		case K_TIME_US:
			if (v->kind == PKL_INT) {
				f->time_us = v->v.i;
				f->has_time = 1;
			}
			break;
		case K_FRAMES:
			f->stack = stack_of(v);
			s->features |= SNAP_F_TRACE_FRAMES;
			break;
		case K_COMPILE_CONTEXT:
			f->ctx = intern_value_cached(L, &L->last_ctx, v);
			s->features |= SNAP_F_COMPILE_CONTEXT;
			break;
		case K_USER_METADATA:
			f->meta = intern_value_cached(L, &L->last_meta, v);
			s->features |= SNAP_F_USER_METADATA;
			break;
		case K_CATEGORY:
			s->features |= SNAP_F_CATEGORY;
			break;
		case K_POOL_ID:
			f->pool = event_pool(L, v);
			break;
		case K_FORWARD_FRAMES:
			break;
		default:
			s->unknown_keys++;
			break;
		}
	}
	return 0;
}

/* Makes a plan of the entry just read by its keys, in *p: none (p->n 0)
 * when a key is not a string or a field is named twice, which only
 * read_by_keys() reads as the file has it. */
static void
plan_make(struct loader *L, struct plan *p, const struct pkl_value *it,
    size_t n)
{
	size_t i;

	memset(p, 0, sizeof *p);
	memset(p->at, -1, sizeof p->at);
	if (n == 0 || n > PLAN_MAX)
		return;
	for (i = 0; i < n; i++) {
		enum key k = key_of(L, &it[2 * i]);
		int f = -1;

		if (it[2 * i].kind != PKL_STR)
			return;
		p->off[i] = it[2 * i].v.off;
		switch (k) {
		case K_ACTION: f = PF_ACTION; break;
		case K_ADDR: case K_DEVICE_FREE: f = PF_ADDR; break;
		case K_SIZE: f = PF_SIZE; break;
		case K_STREAM: f = PF_STREAM; break;
		case K_TIME_US: f = PF_TIME; break;
		case K_FRAMES:
			f = PF_FRAMES;
			p->features |= SNAP_F_TRACE_FRAMES;
			break;
		case K_COMPILE_CONTEXT:
			f = PF_CTX;
			p->features |= SNAP_F_COMPILE_CONTEXT;
			break;
		case K_USER_METADATA:
			f = PF_META;
			p->features |= SNAP_F_USER_METADATA;
			break;
		case K_POOL_ID: f = PF_POOL; break;
		case K_CATEGORY: p->features |= SNAP_F_CATEGORY; break;
		case K_FORWARD_FRAMES: break;
		default: p->n_unknown++; break;
		}
		if (f < 0)
			continue;
		if (p->at[f] >= 0)
			return;
		p->at[f] = (int8_t)(2 * i + 1);
		if (f >= PF_CTX)
			p->interned[p->n_interned++] = (uint8_t)f;
		if (f == PF_ACTION)
			p->action_first = p->n_interned == 0;
	}
	if (p->at[PF_ACTION] >= 0)
		p->n = (uint32_t)n;
}

/* Reads an entry by plan p into *f, as read_by_keys() would, when its
 * keys are the plan's strings in the plan's order (or it was read by the
 * reader's shape of an entry whose were: shape) and nothing in it is out
 * of the plan's reach (a bad value, a new action after a text); returns
 * 1, or 0 with nothing done that read_by_keys() would not redo alike. */
static int
plan_read(struct loader *L, struct plan *p, const struct pkl_value *it,
    size_t n, uint64_t shape, struct evfields *f)
{
	const struct pkl_value *v;
	size_t i;
	int hit;
	uint16_t code;

	if (p->n == 0 || p->n != n)
		return 0;
	for (i = 0; (shape == 0 || shape != p->shape) && i < n; i++)
		if (it[2 * i].kind != PKL_STR || it[2 * i].v.off != p->off[i])
			return 0;
	v = &it[p->at[PF_ACTION]];
	if (v->kind != PKL_STR)
		return 0;
	code = scache_get(&L->actions, v->v.off, &hit);
	/* an unknown action's name is interned: before the texts of the
	 * entry only when it comes before them */
	if (!hit && !p->action_first)
		return 0;
	f->action = hit ? code : action_lookup(L, v);
	f->addr = f->size = f->stream = 0;
	if ((p->at[PF_ADDR] >= 0 && as_u64(&it[p->at[PF_ADDR]], &f->addr)) ||
	    (p->at[PF_SIZE] >= 0 && as_u64(&it[p->at[PF_SIZE]], &f->size)) ||
	    (p->at[PF_STREAM] >= 0 &&
	    as_u64(&it[p->at[PF_STREAM]], &f->stream)))
		return 0;
	f->time_us = SNAP_NO_TIME;
	f->has_time = 0;
	if (p->at[PF_TIME] >= 0 && it[p->at[PF_TIME]].kind == PKL_INT) {
		f->time_us = it[p->at[PF_TIME]].v.i;
		f->has_time = 1;
	}
	f->stack = p->at[PF_FRAMES] >= 0 ? stack_of(&it[p->at[PF_FRAMES]]) : 0;
	f->ctx = f->meta = f->pool = 0;
	for (i = 0; i < p->n_interned; i++) {
		v = &it[p->at[p->interned[i]]];
		if (p->interned[i] == PF_CTX)
			f->ctx = intern_value_cached(L, &L->last_ctx, v);
		else if (p->interned[i] == PF_META)
			f->meta = intern_value_cached(L, &L->last_meta, v);
		else
			f->pool = event_pool(L, v);
	}
	L->s->features |= p->features;
	L->s->unknown_keys += p->n_unknown;
	p->shape = shape;
	return 1;
}

/* A trace entry: n key/value pairs at it. */
static int
take_event(struct loader *L, const struct pkl_value *it, size_t n,
    struct sv_error *err)
{
	struct snapshot *s = L->s;
	struct snap_trace *t = snap_trace_get(s, L->cur_device);
	struct evfields f;
	uint64_t ev, shape = pkl_record_shape(L->r);

	if (!plan_read(L, &L->plan[0], it, n, shape, &f) &&
	    !plan_read(L, &L->plan[1], it, n, shape, &f)) {
		if (read_by_keys(L, it, n, &f, err) != 0)
			return -1;
		L->plan_next ^= 1;
		plan_make(L, &L->plan[L->plan_next], it, n);
	}
	if (f.action == SNAP_ACTION_COUNT + SNAP_MAX_UNKNOWN_ACTIONS)
		return sv_error_set(err, SV_ERR_FORMAT, pkl_offset(L->r),
		    "trace entry without an action");
	if (t->n >= UINT32_MAX * 16ull)
		return sv_error_set(err, SV_ERR_LIMIT, pkl_offset(L->r),
		    "too many trace events");
	if (f.action == SNAP_WORKSPACE_SNAPSHOT)
		s->features |= SNAP_F_NPU;
	if (f.action == SNAP_ANNOTATE)
		s->features |= SNAP_F_ANNOTATE;
	if (f.has_time)
		s->features |= SNAP_F_TIME_US;
	if (L->opts != NULL && L->opts->event != NULL) {
		struct snap_evrec r;

		if (!L->events_begun && L->opts->events_begin != NULL)
			L->opts->events_begin(L->opts->event_ctx, s);
		L->events_begun = 1;

		r.addr = f.addr;
		r.size = f.size;
		r.stream = f.stream;
		r.time_us = f.has_time ? f.time_us : SNAP_NO_TIME;
		r.device = L->cur_device;
		r.stack = f.stack;
		r.ctx = f.ctx;
		r.meta = f.meta;
		r.pool = f.pool;
		r.action = (uint8_t)f.action;
		r.has_time = (uint8_t)f.has_time;
		t->n++;
		if (L->opts->event(L->opts->event_ctx, &r) != 0)
			return sv_error_set(err, SV_ERR_CANCELLED,
			    pkl_offset(L->r), "cancelled");
		return PKL_DROP;
	}
	ev = snap_trace_push(s, t, f.action, f.addr, f.size, f.stream,
	    f.stack);
	if (f.has_time)
		snap_trace_set_time(t, ev, f.time_us);
	if (f.ctx != 0 || f.meta != 0 || t->compile_context != NULL ||
	    t->user_metadata != NULL)
		snap_trace_set_ctx(t, ev, f.ctx, f.meta);
	if (f.pool != 0 || t->pool_id != NULL)
		snap_trace_set_pool(t, ev, f.pool);
	return PKL_DROP;
}

static enum snap_block_state
state_of(struct loader *L, const struct pkl_value *v)
{
	const char *p;
	size_t len;

	p = pkl_str(L->r, v, &len);
	if (len == 16 && memcmp(p, "active_allocated", 16) == 0)
		return SNAP_BLOCK_ACTIVE_ALLOCATED;
	if ((len == 19 && memcmp(p, "active_pending_free", 19) == 0) ||
	    (len == 20 && memcmp(p, "active_awaiting_free", 20) == 0))
		return SNAP_BLOCK_ACTIVE_PENDING_FREE;
	if (len == 8 && memcmp(p, "inactive", 8) == 0)
		return SNAP_BLOCK_INACTIVE;
	return SNAP_BLOCK_UNKNOWN_STATE;
}

static int
take_block(struct loader *L, const struct pkl_value *d, struct sv_error *err)
{
	struct snapshot *s = L->s;
	struct snap_block b;
	struct pending hist;
	size_t n, i;
	const struct pkl_value *it = pkl_items(L->r, d, &n);
	int has_addr = 0, has_req = 0;

	memset(&b, 0, sizeof b);
	b.state = SNAP_BLOCK_UNKNOWN_STATE;
	for (i = 0; i < n; i++) {
		const struct pkl_value *v = &it[2 * i + 1];
		enum key k = key_of(L, &it[2 * i]);

		switch (k) {
		case K_ADDRESS:
			if (as_u64(v, &b.addr) != 0)
				return bad(L, err, "block", "address");
			has_addr = 1;
			break;
		case K_SIZE:
			if (as_u64(v, &b.size) != 0)
				return bad(L, err, "block", "size");
			break;
		case K_REQUESTED_SIZE:
			if (as_u64(v, &b.requested_size) != 0)
				return bad(L, err, "block", "requested_size");
			has_req = 1;
			break;
		case K_STATE:
			if (v->kind != PKL_STR)
				return bad(L, err, "block", "state");
			b.state = (uint8_t)state_of(L, v);
			break;
		case K_FRAMES:
			b.stack = stack_of(v);
			s->features |= SNAP_F_BLOCK_FRAMES;
			break;
		case K_HISTORY:
			s->features |= SNAP_F_HISTORY;
			break;
		default:
			s->unknown_keys++;
			break;
		}
	}
	if (pending_take(L, d, C_HISTORY, &hist)) {
		if (b.stack == 0)
			b.stack = hist.stack;
		if (!has_req)
			b.requested_size = hist.real_size;
	}
	if (has_addr)
		s->features |= SNAP_F_BLOCK_ADDRESS;
	else
		b.flags |= SNAP_BLOCK_F_ADDR_DERIVED;
	if (has_req)
		s->features |= SNAP_F_REQUESTED;
	else if (b.requested_size == 0)
		b.flags |= SNAP_BLOCK_F_NO_REQUESTED;
	if (s->n_blocks == UINT32_MAX)
		return sv_error_set(err, SV_ERR_LIMIT, pkl_offset(L->r),
		    "too many blocks");
	*snap_push_block(s) = b;
	return PKL_DROP;
}

static int
take_hist(struct loader *L, const struct pkl_value *parent,
    const struct pkl_value *d)
{
	size_t n, i;
	const struct pkl_value *it = pkl_items(L->r, d, &n);
	struct pending *p;

	/* only history[0] matters: the list's first entry */
	if (parent != NULL && pkl_count(L->r, parent) > 1)
		return PKL_DROP;
	p = pending_add(L, NULL, C_HIST);
	L->hist_open = L->n_pend - 1;
	for (i = 0; i < n; i++) {
		const struct pkl_value *v = &it[2 * i + 1];

		switch (key_of(L, &it[2 * i])) {
		case K_ADDR: as_u64(v, &p->addr); break;
		case K_REAL_SIZE: as_u64(v, &p->real_size); break;
		case K_FRAMES: p->stack = stack_of(v); break;
		default: break;
		}
	}
	return PKL_DROP;
}

static int
take_segment(struct loader *L, const struct pkl_value *d, struct sv_error *err)
{
	struct snapshot *s = L->s;
	struct snap_segment g;
	struct pending blocks;
	size_t n, i;
	const struct pkl_value *it = pkl_items(L->r, d, &n);
	int saw_type = 0;
	uint64_t off;

	memset(&g, 0, sizeof g);
	for (i = 0; i < n; i++) {
		const struct pkl_value *v = &it[2 * i + 1];
		enum key k = key_of(L, &it[2 * i]);
		uint64_t u = 0;

		switch (k) {
		case K_DEVICE:
			if (as_u64(v, &u) != 0 || u > UINT16_MAX)
				return bad(L, err, "segment", "device");
			g.device = (uint32_t)u;
			break;
		case K_ADDRESS:
			if (as_u64(v, &g.addr) != 0)
				return bad(L, err, "segment", "address");
			break;
		case K_TOTAL_SIZE:
			if (as_u64(v, &g.total_size) != 0)
				return bad(L, err, "segment", "total_size");
			break;
		case K_ALLOCATED_SIZE: as_u64(v, &g.allocated_size); break;
		case K_ACTIVE_SIZE: as_u64(v, &g.active_size); break;
		case K_REQUESTED_SIZE: as_u64(v, &g.requested_size); break;
		case K_STREAM: as_u64(v, &g.stream); break;
		case K_SEGMENT_TYPE: {
			size_t len;
			const char *p = pkl_str(L->r, v, &len);

			g.is_large = len == 5 && memcmp(p, "large", 5) == 0;
			saw_type = 1;
			break;
		}
		case K_SEGMENT_POOL_ID: {
			size_t m;
			const struct pkl_value *pi = pkl_items(L->r, v, &m);

			if (m >= 2) {
				g.pool_id[0] = pi[0].v.i;
				g.pool_id[1] = pi[1].v.i;
			}
			if (!saw_type)
				s->features |= SNAP_F_NPU;
			s->features |= SNAP_F_POOL_ID;
			break;
		}
		case K_IS_EXPANDABLE:
			g.is_expandable = v->kind == PKL_BOOL && v->v.u != 0;
			s->features |= SNAP_F_EXPANDABLE;
			break;
		case K_FRAMES: g.stack = stack_of(v); break;
		case K_BLOCKS: break;
		default: s->unknown_keys++; break;
		}
	}
	g.first_block = s->n_blocks;
	if (pending_take(L, d, C_BLOCKS, &blocks)) {
		g.first_block = blocks.first;
		g.n_blocks = blocks.n;
	}
	/* blocks without an address key (2.0 and older) follow each other
	 * from the segment start */
	off = g.addr;
	for (i = 0; i < g.n_blocks; i++) {
		struct snap_block *b = &s->blocks[g.first_block + i];

		if (b->flags & SNAP_BLOCK_F_ADDR_DERIVED)
			b->addr = off;
		off = b->addr + b->size;
	}
	if (s->n_segments == UINT32_MAX)
		return sv_error_set(err, SV_ERR_LIMIT, pkl_offset(L->r),
		    "too many segments");
	*snap_push_segment(s) = g;
	return PKL_DROP;
}

/* Nested dicts in a setting value are rendered this deep, then "{...}":
 * a file can nest them a million deep, or make one contain itself. */
#define SETTING_DEPTH 4

static void
setting_text(struct loader *L, const struct pkl_value *v, char *buf,
    size_t size, int depth)
{
	const char *p;
	size_t len, n, i, used;
	const struct pkl_value *it;

	switch (v->kind) {
	case PKL_NONE: snprintf(buf, size, "None"); return;
	case PKL_BOOL: snprintf(buf, size, v->v.u ? "True" : "False"); return;
	case PKL_INT:
		if (v->flags & PKL_F_UNSIGNED)
			snprintf(buf, size, "%" PRIu64, v->v.u);
		else
			snprintf(buf, size, "%" PRId64, v->v.i);
		return;
	case PKL_FLOAT: snprintf(buf, size, "%g", v->v.f); return;
	case PKL_STR:
		p = pkl_str(L->r, v, &len);
		snprintf(buf, size, "%.*s", (int)(len > 1000 ? 1000 : len), p);
		return;
	case PKL_LIST:
	case PKL_TUPLE:
		/* a per-device value (trace_alloc_overflowed): [a, b, ...];
		 * the items of any other list were not kept */
		if (v->cls != C_SETLIST) {
			snprintf(buf, size, "?");
			return;
		}
		if (depth >= SETTING_DEPTH) {
			snprintf(buf, size, "[...]");
			return;
		}
		it = pkl_items(L->r, v, &n);
		used = (size_t)snprintf(buf, size, "[");
		for (i = 0; i < n && used + 1 < size; i++) {
			char val[64];

			setting_text(L, &it[i], val, sizeof val, depth + 1);
			used += (size_t)snprintf(buf + used, size - used,
			    "%s%s", i ? ", " : "", val);
		}
		if (used + 1 < size)
			snprintf(buf + used, size - used, "]");
		return;
	case PKL_DICT:
		if (depth >= SETTING_DEPTH) {
			snprintf(buf, size, "{...}");
			return;
		}
		it = pkl_items(L->r, v, &n);
		used = (size_t)snprintf(buf, size, "{");
		for (i = 0; i < n && used + 1 < size; i++) {
			char k[64], val[64];

			setting_text(L, &it[2 * i], k, sizeof k, depth + 1);
			setting_text(L, &it[2 * i + 1], val, sizeof val,
			    depth + 1);
			used += (size_t)snprintf(buf + used, size - used,
			    "%s%s: %s", i ? ", " : "", k, val);
		}
		if (used + 1 < size)
			snprintf(buf + used, size - used, "}");
		return;
	default: snprintf(buf, size, "?"); return;
	}
}

static int
take_settings(struct loader *L, const struct pkl_value *d)
{
	size_t n, i;
	const struct pkl_value *it = pkl_items(L->r, d, &n);
	char buf[1024];

	L->s->features |= SNAP_F_SETTINGS;
	for (i = 0; i < n && i < 256; i++) {
		uint32_t key = intern_value_str(L, &it[2 * i]);

		/* an XPU's allocator names its configuration so */
		if (strncmp(snap_str(L->s, key), "PYTORCH_XPU_", 12) == 0)
			L->s->features |= SNAP_F_XPU;

		setting_text(L, &it[2 * i + 1], buf, sizeof buf, 0);
		snap_push_setting(L->s, key,
		    snap_intern_str(L->s, buf, strlen(buf)));
	}
	return PKL_DROP;
}

static int
take_annotation(struct loader *L, const struct pkl_value *d)
{
	struct snap_annotation a;
	size_t n, i, len;
	const struct pkl_value *it = pkl_items(L->r, d, &n);
	const char *p;
	uint64_t u;

	memset(&a, 0, sizeof a);
	a.time_us = SNAP_NO_TIME;
	a.stage = SNAP_STAGE_OTHER;
	for (i = 0; i < n; i++) {
		const struct pkl_value *v = &it[2 * i + 1];

		switch (key_of(L, &it[2 * i])) {
		case K_NAME: a.name = intern_value_str(L, v); break;
		case K_STAGE:
			p = pkl_str(L->r, v, &len);
			if (len == 5 && memcmp(p, "START", 5) == 0)
				a.stage = SNAP_STAGE_START;
			else if (len == 3 && memcmp(p, "END", 3) == 0)
				a.stage = SNAP_STAGE_END;
			break;
		case K_DEVICE:
			if (as_u64(v, &u) == 0 && u <= UINT16_MAX)
				a.device = (uint32_t)u;
			break;
		case K_TIME_US:
			if (v->kind == PKL_INT)
				a.time_us = v->v.i;
			break;
		default: break;
		}
	}
	L->s->features |= SNAP_F_ANNOTATIONS;
	snap_push_annotation(L->s, &a);
	return PKL_DROP;
}

static int
take_root(struct loader *L, const struct pkl_value *root, struct sv_error *err)
{
	struct snapshot *s = L->s;
	size_t n, i;
	const struct pkl_value *it;

	if (root->kind == PKL_LIST) {
		s->features |= SNAP_F_LEGACY_LIST;
		if (pkl_count(L->r, root) > 0 && s->n_segments == 0)
			return sv_error_set(err, SV_ERR_FORMAT,
			    pkl_offset(L->r),
			    "not a memory snapshot: a list that holds no "
			    "segment dicts");
		return PKL_DROP;
	}
	it = pkl_items(L->r, root, &n);
	for (i = 0; i < n; i++)
		switch (key_of(L, &it[2 * i])) {
		case K_SEGMENTS: L->saw_segments = 1; break;
		case K_DEVICE_TRACES: L->saw_traces = 1; break;
		case K_HOST_SEGMENTS:
		case K_HOST_TRACES: L->saw_host = 1; break;
		case K_DEVICE_TYPE: {
			size_t len;
			const char *p;

			if (it[2 * i + 1].kind != PKL_STR)
				break;
			p = pkl_str(L->r, &it[2 * i + 1], &len);
			if (len == 3 && strncasecmp(p, "xpu", 3) == 0)
				s->features |= SNAP_F_XPU;
			break;
		}
		default: break;
		}
	if (!L->saw_segments && !L->saw_traces && !L->saw_host)
		return sv_error_set(err, SV_ERR_FORMAT, pkl_offset(L->r),
		    "not a memory snapshot: no 'segments' or 'device_traces' "
		    "key");
	s->features |= SNAP_F_DICT;
	if (L->saw_traces)
		s->features |= SNAP_F_DEVICE_TRACES;
	return PKL_DROP;
}

/* Containers of class cls and kind kind whose items nobody reads (only
 * counts, keys and the records taken from them): a container that is no
 * record need not be stored in one. A list of 1.9 M empty lists (1.9 MB)
 * kept them all, 182 MB (issue 34). */
static int
items_unread(uint8_t cls, uint8_t kind)
{
	switch (cls) {
	case C_SETVAL:
		return kind != PKL_DICT; /* a list is shown as "?" */
	case C_SETLIST:
		return 0;
	case C_NONE:
	case C_ROOT:
	case C_SEGMENTS:
	case C_HSEGMENTS:
	case C_BLOCKS:
	case C_HISTORY:
	case C_FRAMES:
	case C_TRACES:
	case C_HTRACES:
	case C_TRACE:
	case C_ANNOTATIONS:
	case C_OTHER:
		return 1;
	default:
		return 0;
	}
}

static int
take(void *ctx, struct pkl_reader *r, uint8_t parent_cls,
    const struct pkl_value *parent, const struct pkl_value *key,
    uint64_t index, const struct pkl_value *child, uint64_t *id,
    uint8_t *id_cls, struct sv_error *err)
{
	struct loader *L = ctx;
	struct pending *p;

	(void)index;
	L->r = r;
	if (parent == NULL) {
		L->root_taken = 1;
		if (child->cls != C_ROOT)
			return sv_error_set(err, SV_ERR_FORMAT, pkl_offset(r),
			    "not a memory snapshot: the top level is not a "
			    "dict or a list");
		return take_root(L, child, err);
	}
	switch (child->cls) {
	case C_FRAME:
		*id_cls = ID_FRAME;
		return take_frame(L, child, id);
	case C_FRAMES:
		*id_cls = ID_STACK;
		return take_frames(L, child, id);
	case C_EVENT: {
		size_t n;
		const struct pkl_value *it = pkl_items(r, child, &n);

		return take_event(L, it, n, err);
	}
	case C_BLOCK:
		return take_block(L, child, err);
	case C_HIST:
		return take_hist(L, parent, child);
	case C_HISTORY:
		/* history[0] (pending C_HIST with no parent yet) now belongs
		 * to this block dict */
		if (L->hist_open != SIZE_MAX) {
			struct pending *h = &L->pend[L->hist_open];
			uint64_t hk = pend_key(parent->v.ref, C_HISTORY), at;

			L->hist_open = SIZE_MAX;
			if (!u64map_get(&L->pend_map, hk, &at)) {
				h->parent_ref = parent->v.ref;
				h->kind = C_HISTORY;
				u64map_put(&L->pend_map, hk,
				    (uint64_t)(h - L->pend));
			}
		}
		return PKL_DROP;
	case C_BLOCKS:
		/* the blocks taken since the last segment belong here */
		p = pending_add(L, parent, C_BLOCKS);
		p->first = L->blocks_claimed;
		L->blocks_claimed = L->s->n_blocks;
		p->n = L->s->n_blocks - p->first;
		return PKL_DROP;
	case C_SEGMENT:
		if (parent_cls == C_ROOT)
			L->root_segments++;
		return take_segment(L, child, err);
	case C_HSEGMENT:
		/* pinned host memory: the host's device, whatever it says */
		if (take_segment(L, child, err) != PKL_DROP)
			return -1;
		L->s->segments[L->s->n_segments - 1].device = SNAP_HOST_DEVICE;
		L->s->features |= SNAP_F_HOST;
		return PKL_DROP;
	case C_SETTINGS:
		return take_settings(L, child);
	case C_ANNOTATION:
		return take_annotation(L, child);
	case C_HTRACES:
		L->s->features |= SNAP_F_HOST;
		/* FALLTHROUGH */
	case C_SEGMENTS:
	case C_HSEGMENTS:
	case C_TRACES:
	case C_TRACE:
	case C_ANNOTATIONS:
		return PKL_DROP;
	default:
		(void)key;
		return items_unread(parent_cls, parent->kind) ? PKL_SKIP :
		    PKL_KEEP;
	}
}

/* A trace entry's frames, taken from the items the reader holds, as
 * take() takes the list (pkl_sink); any other list is made. */
static int
take_items(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, uint64_t *id, uint8_t *id_cls,
    struct sv_error *err)
{
	struct loader *L = ctx;

	(void)err;
	if (cls != C_FRAMES)
		return PKL_KEEP;
	L->r = r;
	*id_cls = ID_STACK;
	return take_frame_ids(L, items, n, id);
}

/* Trace entries are taken as soon as each is complete (pkl_sink), most
 * of them without the reader building a dict. */
static int
take_record(void *ctx, struct pkl_reader *r, uint8_t cls,
    const struct pkl_value *items, size_t n, struct sv_error *err)
{
	struct loader *L = ctx;

	(void)cls; /* record_classes names C_EVENT alone */
	L->r = r;
	return take_event(L, items, n, err) == PKL_DROP ? 0 : -1;
}

static int
progress(void *ctx, uint64_t offset)
{
	struct loader *L = ctx;

	/* The pages already parsed go back and the next are mapped ahead
	 * (load() says how), off this thread. */
	if (L->map != NULL)
		mapfile_follow(L->map, (size_t)offset);
	if (L->opts != NULL && L->opts->progress != NULL)
		return L->opts->progress(L->opts->progress_ctx, offset,
		    L->total);
	return 0;
}

static int
load(const uint8_t *buf, size_t len, struct mapfile *map,
    const struct snap_load_opts *opts, struct snapshot **out,
    struct sv_error *err)
{
	static const struct pkl_sink sink = {classify, take, progress,
	    take_record, 1u << C_EVENT, take_items, 1u << C_TRACE |
	    1u << C_SEGMENTS | 1u << C_BLOCKS | 1u << C_FRAMES};
	static const struct pkl_sink general = {classify, take, progress,
	    NULL, 0, NULL, 0};
	struct loader *L = xcalloc(1, sizeof *L);
	struct pkl_reader *r = NULL;
	int rc;

	L->s = snap_new();
	u64map_init(&L->pend_map);
	L->hist_open = SIZE_MAX;
	L->opts = opts;
	L->map = map;
	L->total = len;
	L->s->source_size = len;
	/* Give back the pages already parsed, keeping a window for the
	 * strings of the memo that are read again (they fault back in from
	 * the page cache if needed). Mapped pages count in the process's
	 * RSS: 8 MiB instead of 64 took 60 MB off a 1 GB file's first open,
	 * at no cost in time (key and action strings are cached by offset,
	 * frames and stacks interned once). They go back 16 MiB at a time,
	 * not at every MiB: each madvise() is a TLB flush on both cores,
	 * and 940 of them were 0.15 s of a 1 GB first open on a VM (perf).
	 * The next 16 MiB are mapped in one call, not by a fault every 64
	 * KiB. Both calls are a follower thread's (util/follow.h): on the
	 * parser's thread they took about 0.12 s of a 1 GB first open on a
	 * VM (perf), and the second core is mostly idle while it parses. */
	if (map != NULL)
		mapfile_follow_start(map, 8u << 20, 16u << 20, 16u << 20);
	rc = pkl_run(buf, len, opts != NULL && opts->general_path ? &general :
	    &sink, L, &r, err);
	if (map != NULL)
		mapfile_follow_stop(map);
	if (rc == 0 && !L->root_taken)
		rc = sv_error_set(err, SV_ERR_FORMAT, len,
		    "not a memory snapshot: the top level is not a dict or a "
		    "list");
	if (rc == 0) {
		L->s->protocol = pkl_protocol(r);
		snap_finish(L->s);
		*out = L->s;
		if (opts != NULL && opts->progress != NULL)
			opts->progress(opts->progress_ctx, len, len);
	} else {
		snap_free(L->s);
		*out = NULL;
	}
	pkl_reader_free(r);
	free(L->pend);
	u64map_destroy(&L->pend_map);
	free(L->frame_buf);
	free(L);
	return rc;
}

int
snap_load_buffer(const uint8_t *buf, size_t len,
    const struct snap_load_opts *opts, struct snapshot **out,
    struct sv_error *err)
{
	return load(buf, len, NULL, opts, out, err);
}

int
snap_load_file(const char *path, const struct snap_load_opts *opts,
    struct snapshot **out, struct sv_error *err)
{
	struct mapfile map;
	int rc;

	*out = NULL;
	if (mapfile_open(&map, path, err) != 0)
		return -1;
	/* a .pickle.gz: read from an inflated copy (util/gunzip.h) */
	if (mapfile_is_gzip(&map) && mapfile_gunzip(&map, err) != 0) {
		mapfile_close(&map);
		return -1;
	}
	rc = load(map.data, map.len, &map, opts, out, err);
	mapfile_close(&map);
	return rc;
}
