#ifndef SNAPVIEW_SNAPSHOT_SNAP_MODEL_H
#define SNAPVIEW_SNAPSHOT_SNAP_MODEL_H
/*
 * The snapshot model: plain, compact records for everything a PyTorch
 * memory snapshot holds, whatever its format version.
 *
 * struct snapshot is what every layer above reads. Its arrays are either
 * owned heap arrays (built by snap_load from a pickle, or by tests
 * through the builder functions at the end of this file) or borrowed
 * views into a memory-mapped index (filled by index/). Readers never care
 * which.
 *
 * Strings (file names, function names, annotation names, ...) are interned
 * once: a string id indexes strs; id 0 is the empty string. Frames are
 * interned by content; a stack is a sequence of frame ids, innermost first
 * (index 0 = the function that allocated), interned by content; stack id 0
 * is the empty stack.
 *
 * Trace events are columns per device (struct snap_trace), numbered from
 * 0 per device in file order: an action, an address, a size, a stream, a
 * stack, and where the file has them a time, a compile context and user
 * metadata. The columns are heap arrays or an index's stripes
 * (snap_stripe.h); either way they are read only through the snap_ev_*
 * accessors below, never through the arrays (see struct snap_trace).
 */
#include <stddef.h>
#include <stdint.h>

#include "snapshot/snap_stripe.h"

/* X-macro: enum id, name in the file. Order is stable: it is stored in
 * the index. */
#define SNAP_ACTION_INFO(_)                                                    \
	_(SNAP_ALLOC, "alloc")                                                 \
	_(SNAP_FREE_REQUESTED, "free_requested")                               \
	_(SNAP_FREE_COMPLETED, "free_completed")                               \
	_(SNAP_SEGMENT_ALLOC, "segment_alloc")                                 \
	_(SNAP_SEGMENT_FREE, "segment_free")                                   \
	_(SNAP_SEGMENT_MAP, "segment_map")                                     \
	_(SNAP_SEGMENT_UNMAP, "segment_unmap")                                 \
	_(SNAP_SNAPSHOT, "snapshot")                                           \
	_(SNAP_OOM, "oom")                                                     \
	_(SNAP_WORKSPACE_SNAPSHOT, "workspace_snapshot")                       \
	_(SNAP_ANNOTATE, "annotate")

enum snap_action {
#define SNAP_ACTION_ENUM(id, name) id,
	SNAP_ACTION_INFO(SNAP_ACTION_ENUM)
#undef SNAP_ACTION_ENUM
	SNAP_ACTION_COUNT
	/* Values >= SNAP_ACTION_COUNT are unknown actions: value
	 * SNAP_ACTION_COUNT + k names snapshot.unknown_actions[k]. */
};
#define SNAP_MAX_UNKNOWN_ACTIONS 64

/* Pinned host memory (host_segments, host_traces; PyTorch 2.14) is read
 * as one more device with this number, named "host" (snap_is_host()). */
#define SNAP_HOST_DEVICE 1024u

/* Name of a known action, or NULL for an unknown value. */
const char *snap_action_name(unsigned action);

enum snap_block_state {
	SNAP_BLOCK_INACTIVE,
	SNAP_BLOCK_ACTIVE_ALLOCATED,
	SNAP_BLOCK_ACTIVE_PENDING_FREE,
	SNAP_BLOCK_UNKNOWN_STATE
};

/* Format features seen in the file (snapshot.features). */
enum snap_feature {
	SNAP_F_LEGACY_LIST = 1u << 0,    /* 1.13: top level is a segment list */
	SNAP_F_DICT = 1u << 1,           /* 2.0+: top level dict */
	SNAP_F_DEVICE_TRACES = 1u << 2,  /* device_traces key present */
	SNAP_F_BLOCK_ADDRESS = 1u << 3,  /* blocks carry address (2.1+) */
	SNAP_F_BLOCK_FRAMES = 1u << 4,   /* blocks carry frames (2.1+) */
	SNAP_F_HISTORY = 1u << 5,        /* blocks carry legacy history */
	SNAP_F_REQUESTED = 1u << 6,      /* requested_size present (2.0+) */
	SNAP_F_TIME_US = 1u << 7,        /* trace entries have time_us (2.2+) */
	SNAP_F_SETTINGS = 1u << 8,       /* allocator_settings (2.3+) */
	SNAP_F_ANNOTATIONS = 1u << 9,    /* external_annotations (2.5+) */
	SNAP_F_COMPILE_CONTEXT = 1u << 10, /* compile_context (2.8+) */
	SNAP_F_USER_METADATA = 1u << 11, /* user_metadata (newest) */
	SNAP_F_POOL_ID = 1u << 12,       /* segment_pool_id */
	SNAP_F_EXPANDABLE = 1u << 13,    /* is_expandable key */
	SNAP_F_TRACE_FRAMES = 1u << 14,  /* some trace entry has frames */
	SNAP_F_NPU = 1u << 15,           /* torch_npu style (workspace events,
					    pool id before segment_type) */
	SNAP_F_CATEGORY = 1u << 16,      /* profiler-derived: category key */
	SNAP_F_ANNOTATE = 1u << 17,      /* annotate events (2.14) */
	SNAP_F_EVENT_POOL = 1u << 18,    /* pool_id on trace entries (2.14) */
	SNAP_F_HOST = 1u << 19,          /* host_segments or host_traces:
					    pinned host memory (2.14) */
	SNAP_F_XPU = 1u << 20            /* the file says its devices are
					    Intel XPUs (snap_device_family) */
};

struct snap_frame {
	uint32_t name;     /* string id */
	uint32_t filename; /* string id */
	uint64_t line;     /* 2^64-1 appears for C++ frames with no line */
};

struct snap_block {
	uint64_t addr;           /* given, or derived from the segment */
	uint64_t size;
	uint64_t requested_size; /* stale for inactive blocks */
	uint32_t stack;          /* alloc stack (history[0] for legacy) */
	uint8_t state;           /* enum snap_block_state */
	uint8_t flags;           /* SNAP_BLOCK_F_* */
	uint16_t pad;
};
#define SNAP_BLOCK_F_ADDR_DERIVED 0x01 /* no address key: computed */
#define SNAP_BLOCK_F_NO_REQUESTED 0x02 /* no requested_size key */

struct snap_segment {
	uint64_t addr;
	uint64_t total_size;
	uint64_t allocated_size; /* as stored in the file */
	uint64_t active_size;    /* as stored in the file */
	uint64_t requested_size; /* as stored in the file (0 if absent) */
	uint64_t stream;         /* raw cudaStream_t value */
	int64_t pool_id[2];      /* segment_pool_id; (0,0) = default pool */
	uint32_t device;
	uint32_t stack;          /* cudaMalloc stack, 0 if none */
	uint32_t first_block;    /* index into snapshot.blocks */
	uint32_t n_blocks;
	uint8_t is_large;        /* segment_type == "large" */
	uint8_t is_expandable;
	uint8_t pad[6];
};

/* Columns a trace has (snap_trace.cols, for stripe-coded traces). */
#define SNAP_TRACE_TIME 1u /* some event has time_us */
#define SNAP_TRACE_CTX 2u  /* some event has a compile_context */
#define SNAP_TRACE_META 4u /* some event has user_metadata */
#define SNAP_TRACE_POOL 8u /* some event has pool_id */

/*
 * A trace's events are either owned heap columns (the arrays below, from
 * the builder functions) or stripe-coded columns (stripes, an index's;
 * the arrays are then NULL; snap_stripe.h). Readers use the snap_ev_*
 * accessors, which read either.
 */
struct snap_trace {
	uint32_t device;
	uint32_t cols;           /* SNAP_TRACE_* when stripes is set */
	uint64_t n;              /* number of events */
	const struct snap_stripeset *stripes; /* coded events, or NULL */
	uint8_t *action;         /* enum snap_action or unknown index */
	uint64_t *addr;          /* block/segment address; oom: device_free */
	uint64_t *size;
	uint64_t *stream;
	int64_t *time_us;        /* NULL when no event has time_us */
	uint32_t *stack;         /* stack id per event, 0 = none */
	uint32_t *compile_context; /* string id per event, NULL if absent */
	uint32_t *user_metadata;   /* string id per event, NULL if absent */
	uint32_t *pool_id;         /* string id of "A,B" (its pool_id),
				      0 = none; NULL if absent */
	uint64_t cap;            /* builder capacity (owned arrays only) */
};

#define SNAP_NO_TIME INT64_MIN /* time_us column value when absent */

/* Widens the span [*first, *last] (none yet while *has is 0) to the
 * times of t[0, n) that are not SNAP_NO_TIME. */
static inline void
snap_time_widen(const int64_t *t, size_t n, int *has, int64_t *first,
    int64_t *last)
{
	size_t k;

	for (k = 0; k < n; k++) {
		if (t[k] == SNAP_NO_TIME)
			continue;
		if (!*has || t[k] < *first)
			*first = t[k];
		if (!*has || t[k] > *last)
			*last = t[k];
		*has = 1;
	}
}

enum snap_stage { SNAP_STAGE_START, SNAP_STAGE_END, SNAP_STAGE_OTHER };

struct snap_annotation {
	uint32_t name;   /* string id */
	uint32_t device;
	int64_t time_us;
	uint8_t stage;   /* enum snap_stage */
	uint8_t pad[7];
};

/* One allocator_settings entry, value rendered as text (e.g. "-1",
 * "True", "0.0", "{'1': 0, ...}"). */
struct snap_setting {
	uint32_t key;   /* string id */
	uint32_t value; /* string id */
};

struct snap_strtab {
	char *data;        /* all strings, each NUL-terminated */
	uint64_t len, cap;
	uint64_t *off;     /* off[id] = offset of string id in data */
	uint32_t n, cap_n;
	/* content hash table (builder only; NULL in index views) */
	uint32_t *hash;
	uint32_t hash_cap;
};

struct spill;

struct snapshot {
	uint32_t features;       /* enum snap_feature bits */
	int protocol;            /* pickle protocol, 0 if none */
	uint64_t source_size;    /* bytes of the source file */

	struct snap_strtab strs;

	struct snap_frame *frames;
	uint32_t n_frames, cap_frames;

	uint32_t *stack_off;     /* n_stacks + 1 offsets into stack_frames */
	uint32_t *stack_frames;  /* frame ids, innermost first */
	uint32_t n_stacks, cap_stacks;
	uint64_t n_stack_frames, cap_stack_frames;

	struct snap_segment *segments; /* file order, grouped by device */
	uint32_t n_segments, cap_segments;
	int segs_by_device;      /* segments grouped by ascending device
				    (snap_finish, index): see
				    snap_device_segments() */
	struct snap_block *blocks;
	uint32_t n_blocks, cap_blocks;

	struct snap_trace *traces; /* traces[d] for device d, may be n = 0 */
	uint32_t n_traces, cap_traces;

	struct snap_annotation *annotations;
	uint32_t n_annotations, cap_annotations;

	struct snap_setting *settings;
	uint32_t n_settings, cap_settings;

	uint32_t unknown_actions[SNAP_MAX_UNKNOWN_ACTIONS]; /* string ids */
	uint32_t n_unknown_actions;
	uint64_t unknown_keys;    /* dict keys ignored while loading */

	/* Private: how the arrays are backed. */
	void *backing;
	void (*backing_free)(struct snapshot *);
	void *stack_hash;         /* builder only */
	void *frame_hash;         /* builder only */
	struct spill *ann_spill;  /* builder only: the annotations' file
				     (util/spill.h) once they are many */
};

/* ---- reading ---------------------------------------------------------- */

/* String for id (borrowed, NUL-terminated); "" for an out-of-range id. */
const char *snap_str(const struct snapshot *s, uint32_t id);

/*
 * Event i (i < t->n) of a trace. Every reader above this layer reads the
 * per-event columns only through these accessors, never through the
 * arrays, so that the storage behind a trace (heap arrays from a parse,
 * columns in a mapped index, stripe-coded columns) can change without
 * touching a reader.
 */
struct snap_event {
	uint64_t addr;    /* block/segment address; device_free for oom */
	uint64_t size;
	uint64_t stream;
	int64_t time_us;  /* SNAP_NO_TIME when absent */
	uint32_t stack;   /* stack id, 0 = none */
	uint32_t compile_context; /* string id, 0 = none */
	uint32_t user_metadata;   /* string id, 0 = none */
	uint32_t pool_id; /* string id of "A,B", 0 = none (snap_ev_pool) */
	uint8_t action;   /* enum snap_action or unknown index */
};

static inline unsigned
snap_ev_action(const struct snap_trace *t, uint64_t i)
{
	if (t->stripes == NULL)
		return t->action[i];
	return *(const uint8_t *)snap_stripe_at(t->stripes, SNAP_COL_ACTION, i,
	    1);
}

static inline uint64_t
snap_ev_u64_(const struct snap_trace *t, const uint64_t *col, unsigned c,
    uint64_t i)
{
	if (t->stripes == NULL)
		return col[i];
	return *(const uint64_t *)snap_stripe_at(t->stripes, c, i, 8);
}

static inline uint64_t
snap_ev_addr(const struct snap_trace *t, uint64_t i)
{
	return snap_ev_u64_(t, t->addr, SNAP_COL_ADDR, i);
}

static inline uint64_t
snap_ev_size(const struct snap_trace *t, uint64_t i)
{
	return snap_ev_u64_(t, t->size, SNAP_COL_SIZE, i);
}

static inline uint64_t
snap_ev_stream(const struct snap_trace *t, uint64_t i)
{
	return snap_ev_u64_(t, t->stream, SNAP_COL_STREAM, i);
}

static inline uint32_t
snap_ev_stack(const struct snap_trace *t, uint64_t i)
{
	if (t->stripes == NULL)
		return t->stack[i];
	return *(const uint32_t *)snap_stripe_at(t->stripes, SNAP_COL_STACK, i,
	    4);
}

/* 1 when some event of t carries time_us (else every time is
 * SNAP_NO_TIME). */
static inline int
snap_trace_has_time(const struct snap_trace *t)
{
	if (t->stripes == NULL)
		return t->time_us != NULL;
	return (t->cols & SNAP_TRACE_TIME) != 0;
}

static inline int64_t
snap_ev_time(const struct snap_trace *t, uint64_t i)
{
	if (t->stripes == NULL)
		return t->time_us != NULL ? t->time_us[i] : SNAP_NO_TIME;
	if (!(t->cols & SNAP_TRACE_TIME))
		return SNAP_NO_TIME;
	return *(const int64_t *)snap_stripe_at(t->stripes, SNAP_COL_TIME, i,
	    8);
}

static inline uint32_t
snap_ev_ctx(const struct snap_trace *t, uint64_t i)
{
	if (t->stripes == NULL)
		return t->compile_context != NULL ? t->compile_context[i] : 0;
	if (!(t->cols & SNAP_TRACE_CTX))
		return 0;
	return *(const uint32_t *)snap_stripe_at(t->stripes, SNAP_COL_CTX, i,
	    4);
}

static inline uint32_t
snap_ev_meta(const struct snap_trace *t, uint64_t i)
{
	if (t->stripes == NULL)
		return t->user_metadata != NULL ? t->user_metadata[i] : 0;
	if (!(t->cols & SNAP_TRACE_META))
		return 0;
	return *(const uint32_t *)snap_stripe_at(t->stripes, SNAP_COL_META, i,
	    4);
}

/* The pool_id of event i as a string id ("A,B"), 0 when it has none. */
static inline uint32_t
snap_ev_pool_str(const struct snap_trace *t, uint64_t i)
{
	if (t->stripes == NULL)
		return t->pool_id != NULL ? t->pool_id[i] : 0;
	if (!(t->cols & SNAP_TRACE_POOL))
		return 0;
	return *(const uint32_t *)snap_stripe_at(t->stripes, SNAP_COL_POOL, i,
	    4);
}

/* Which optional columns t has (SNAP_TRACE_*), whatever its storage. */
static inline uint32_t
snap_trace_cols(const struct snap_trace *t)
{
	if (t->stripes != NULL)
		return t->cols;
	return (t->time_us != NULL ? SNAP_TRACE_TIME : 0) |
	    (t->compile_context != NULL ? SNAP_TRACE_CTX : 0) |
	    (t->user_metadata != NULL ? SNAP_TRACE_META : 0) |
	    (t->pool_id != NULL ? SNAP_TRACE_POOL : 0);
}

/* All of event i at once. */
static inline void
snap_ev_get(const struct snap_trace *t, uint64_t i, struct snap_event *ev)
{
	ev->action = (uint8_t)snap_ev_action(t, i);
	ev->addr = snap_ev_addr(t, i);
	ev->size = snap_ev_size(t, i);
	ev->stream = snap_ev_stream(t, i);
	ev->stack = snap_ev_stack(t, i);
	ev->time_us = snap_ev_time(t, i);
	ev->compile_context = snap_ev_ctx(t, i);
	ev->user_metadata = snap_ev_meta(t, i);
	ev->pool_id = snap_ev_pool_str(t, i);
}

/* The private pool event i names (its pool_id, PyTorch 2.14: the same
 * (int, int) as a segment's segment_pool_id) into pool: 1, or 0 with
 * pool (0, 0) when the event has none. */
int snap_ev_pool(const struct snapshot *s, const struct snap_trace *t,
    uint64_t i, int64_t pool[2]);

/* The first event of [lo, hi) whose time_us is at or after time_us, or
 * hi when none is; times must not decrease over the range (a file where
 * they do gets some event of the range, never one outside it). */
uint64_t snap_ev_at_time(const struct snap_trace *t, uint64_t lo,
    uint64_t hi, int64_t time_us);

/* Frames of a stack (borrowed): *n receives the count; innermost first. */
const uint32_t *snap_stack(const struct snapshot *s, uint32_t stack,
    uint32_t *n);

/* Trace of device d, or NULL if the file has no trace list for d. */
const struct snap_trace *snap_trace_of(const struct snapshot *s, uint32_t d);

/* Range of device d's segments, s->segments[*first .. *end). Once the
 * segments are grouped by device (snap_finish(), an index) this is a
 * binary search; before that it is the whole array. Either way callers
 * still skip segments of other devices, so the range is only ever a
 * speed-up and a hostile order cannot make a loop wrong. */
void snap_device_segments(const struct snapshot *s, uint32_t d,
    uint32_t *first, uint32_t *end);

/* Value of the allocator setting key (borrowed), or NULL if the file
 * does not name it. */
const char *snap_setting(const struct snapshot *s, const char *key);

/* 1 if device d has trace events or segments. */
int snap_device_has_data(const struct snapshot *s, uint32_t d);

/* Number of devices with data: max(device of any segment, trace index)+1. */
uint32_t snap_device_count(const struct snapshot *s);

/* Device with the most trace events (ties: lowest); else the lowest device
 * owning a segment; else 0 (as memory_viz picks it). */
uint32_t snap_default_device(const struct snapshot *s);

/* Human label for the detected format, e.g. "2.1+", "1.13 (legacy list)". */
const char *snap_format_label(const struct snapshot *s);

/*
 * The ring buffer of trace events, from allocator_settings (PyTorch
 * 2.14, pytorch#179276): trace_alloc_overflowed and
 * trace_alloc_max_entries, each one value for every device, a list
 * indexed by device or a dict keyed by it (read leniently: the form is
 * not settled). snap_ring_overflowed() returns 1 when device d's ring
 * overflowed (the trace lost its start), 0 when the file says it did
 * not, -1 when it does not say. snap_ring_max_entries() returns the
 * ring's size for d, 0 when the file does not say.
 */
int snap_ring_overflowed(const struct snapshot *s, uint32_t d);

/* Whether device d is the file's pinned host memory (SNAP_HOST_DEVICE in
 * a file with host_segments or host_traces). */
int snap_is_host(const struct snapshot *s, uint32_t d);

/* The device family when the file names one: "XPU" (a top-level
 * device_type of "xpu", or allocator_settings keyed PYTORCH_XPU_...),
 * else NULL: the format is the same for CUDA, XPU and torch_npu, and a
 * file that does not say is not labelled. */
const char *snap_device_family(const struct snapshot *s);
uint64_t snap_ring_max_entries(const struct snapshot *s, uint32_t d);

/* Frees everything; NULL is a no-op. */
void snap_free(struct snapshot *s);

/* ---- building (snap_load and tests) ----------------------------------- */

struct snapshot *snap_new(void);
uint32_t snap_intern_str(struct snapshot *s, const char *p, size_t len);
uint32_t snap_intern_frame(struct snapshot *s, uint32_t name,
    uint32_t filename, uint64_t line);
/* Interns the stack of n frame ids; n == 0 gives stack 0. */
uint32_t snap_intern_stack(struct snapshot *s, const uint32_t *frames,
    uint32_t n);
/* Returns the trace of device d, creating empty traces up to d. */
struct snap_trace *snap_trace_get(struct snapshot *s, uint32_t d);
/* Appends one event; time_us/ctx/meta columns are created on first use
 * (earlier events get INT64_MIN / 0). Returns the event index. */
uint64_t snap_trace_push(struct snapshot *s, struct snap_trace *t,
    unsigned action, uint64_t addr, uint64_t size, uint64_t stream,
    uint32_t stack);
/* Frees t's columns and sets them to NULL (t itself and t->n stay). */
void snap_trace_free_columns(struct snap_trace *t);
void snap_trace_set_time(struct snap_trace *t, uint64_t i, int64_t time_us);
/* Event i's pool_id: the string id of its "A,B" text (snap_ev_pool()). */
void snap_trace_set_pool(struct snap_trace *t, uint64_t i, uint32_t pool);
void snap_trace_set_ctx(struct snap_trace *t, uint64_t i, uint32_t ctx,
    uint32_t meta);
/* Appends a segment (first_block/n_blocks must be set by the caller) and
 * blocks. */
struct snap_segment *snap_push_segment(struct snapshot *s);
struct snap_block *snap_push_block(struct snapshot *s);
void snap_push_annotation(struct snapshot *s, const struct snap_annotation *a);
/* Frees the annotations' array (heap or file), leaving their count:
 * for a builder that has copied them elsewhere. */
void snap_free_annotations(struct snapshot *s);
void snap_push_setting(struct snapshot *s, uint32_t key, uint32_t value);
/* Maps an action name to its value (known, or a new/old unknown index). */
unsigned snap_action_lookup(struct snapshot *s, const char *name, size_t len);
/* Drops builder-only hash tables once loading is done, and groups the
 * segments by device (a stable sort: file order within a device). */
void snap_finish(struct snapshot *s);

#endif
