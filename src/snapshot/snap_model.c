/*
 * The snapshot model: interning of strings, frames and stacks, trace
 * columns, and the accessors every upper layer uses. Builder functions
 * grow owned arrays; index views fill the same struct with borrowed
 * pointers and a backing_free hook.
 */
#include "config.h"

#include "snapshot/snap_model.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "util/search.h"
#include "util/spill.h"
#include "util/xalloc.h"

static const char *const action_names[] = {
#define SNAP_ACTION_NAME(id, name) name,
    SNAP_ACTION_INFO(SNAP_ACTION_NAME)
#undef SNAP_ACTION_NAME
};

/* Open-addressing table of uint32 ids keyed by a 64-bit hash; the key
 * comparison is done by the caller through the eq callback. */
struct idtab {
	uint32_t *slot; /* id + 1, 0 = empty */
	uint32_t cap;   /* power of two */
	uint32_t n;
};

const char *
snap_action_name(unsigned action)
{
	if (action >= SNAP_ACTION_COUNT)
		return NULL;
	return action_names[action];
}

struct snapshot *
snap_new(void)
{
	struct snapshot *s = xcalloc(1, sizeof *s);

	snap_intern_str(s, "", 0);
	/* stack 0 is the empty stack */
	s->cap_stacks = 64;
	s->stack_off = xcalloc(s->cap_stacks + 1, sizeof *s->stack_off);
	s->n_stacks = 1;
	s->stack_hash = xcalloc(1, sizeof(struct idtab));
	s->frame_hash = xcalloc(1, sizeof(struct idtab));
	return s;
}

static void
idtab_free(struct idtab *t)
{
	if (t == NULL)
		return;
	free(t->slot);
	free(t);
}

static void
owned_free(struct snapshot *s)
{
	uint32_t i;

	free(s->strs.data);
	free(s->strs.off);
	free(s->strs.hash);
	free(s->frames);
	free(s->stack_off);
	free(s->stack_frames);
	free(s->segments);
	free(s->blocks);
	for (i = 0; i < s->n_traces; i++)
		snap_trace_free_columns(&s->traces[i]);
	free(s->traces);
	snap_free_annotations(s);
	free(s->settings);
}

void
snap_trace_free_columns(struct snap_trace *t)
{
	free(t->action);
	free(t->addr);
	free(t->size);
	free(t->stream);
	free(t->time_us);
	free(t->stack);
	free(t->compile_context);
	free(t->user_metadata);
	free(t->pool_id);
	t->action = NULL;
	t->addr = t->size = t->stream = NULL;
	t->time_us = NULL;
	t->stack = t->compile_context = t->user_metadata = t->pool_id = NULL;
}

void
snap_free(struct snapshot *s)
{
	if (s == NULL)
		return;
	if (s->backing_free != NULL)
		s->backing_free(s);
	else
		owned_free(s);
	idtab_free(s->stack_hash);
	idtab_free(s->frame_hash);
	free(s);
}

/*
 * Stable counting sort of the segments by device, so that per-device
 * loops cost their device's segments and not all of them (a file with
 * 65536 devices would otherwise make stats quadratic). Blocks stay where
 * they are: segments point at them by index.
 */
static void
snap_group_segments(struct snapshot *s)
{
	struct snap_segment *out;
	uint32_t *count, i;
	size_t ndev = 0, k;

	s->segs_by_device = 1;
	for (i = 1; i < s->n_segments; i++)
		if (s->segments[i].device < s->segments[i - 1].device)
			s->segs_by_device = 0;
	if (s->segs_by_device)
		return;
	for (i = 0; i < s->n_segments; i++)
		if (s->segments[i].device >= ndev)
			ndev = (size_t)s->segments[i].device + 1;
	count = xcalloc(ndev + 1, sizeof *count);
	for (i = 0; i < s->n_segments; i++)
		count[s->segments[i].device + 1]++;
	for (k = 1; k <= ndev; k++)
		count[k] += count[k - 1];
	out = xreallocarray(NULL, s->n_segments, sizeof *out);
	for (i = 0; i < s->n_segments; i++)
		out[count[s->segments[i].device]++] = s->segments[i];
	free(s->segments);
	free(count);
	s->segments = out;
	s->cap_segments = s->n_segments;
	s->segs_by_device = 1;
}

const char *
snap_setting(const struct snapshot *s, const char *key)
{
	uint32_t i;

	for (i = 0; i < s->n_settings; i++)
		if (strcmp(snap_str(s, s->settings[i].key), key) == 0)
			return snap_str(s, s->settings[i].value);
	return NULL;
}

int
snap_device_has_data(const struct snapshot *s, uint32_t d)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	uint32_t i, end;

	if (t != NULL && t->n > 0)
		return 1;
	snap_device_segments(s, d, &i, &end);
	for (; i < end; i++)
		if (s->segments[i].device == d)
			return 1;
	return 0;
}

/* Segments of devices below d (dev_bound.upper: of devices up to d). */
struct dev_bound {
	const struct snapshot *s;
	uint32_t d;
	int upper;
};

static int
dev_below(const void *ctx, uint64_t i)
{
	const struct dev_bound *b = ctx;
	uint32_t dev = b->s->segments[i].device;

	return b->upper ? dev <= b->d : dev < b->d;
}

void
snap_device_segments(const struct snapshot *s, uint32_t d, uint32_t *first,
    uint32_t *end)
{
	struct dev_bound b = {s, d, 0};

	if (!s->segs_by_device) {
		*first = 0;
		*end = s->n_segments;
		return;
	}
	*first = (uint32_t)sv_partition(0, s->n_segments, dev_below, &b);
	b.upper = 1;
	*end = (uint32_t)sv_partition(*first, s->n_segments, dev_below, &b);
}

struct time_bound {
	const struct snap_trace *t;
	int64_t time_us;
};

static int
time_below(const void *ctx, uint64_t i)
{
	const struct time_bound *b = ctx;

	return snap_ev_time(b->t, i) < b->time_us;
}

uint64_t
snap_ev_at_time(const struct snap_trace *t, uint64_t lo, uint64_t hi,
    int64_t time_us)
{
	struct time_bound b = {t, time_us};

	return sv_partition(lo, hi, time_below, &b);
}

void
snap_finish(struct snapshot *s)
{
	snap_group_segments(s);
	idtab_free(s->stack_hash);
	idtab_free(s->frame_hash);
	s->stack_hash = NULL;
	s->frame_hash = NULL;
	free(s->strs.hash);
	s->strs.hash = NULL;
	s->strs.hash_cap = 0;
}

/* ---- strings ---------------------------------------------------------- */

const char *
snap_str(const struct snapshot *s, uint32_t id)
{
	if (id >= s->strs.n)
		return "";
	return s->strs.data + s->strs.off[id];
}

static void
strtab_rehash(struct snap_strtab *t)
{
	uint32_t ncap = t->hash_cap ? t->hash_cap * 2 : 1024;
	uint32_t i;

	free(t->hash);
	t->hash = xcalloc(ncap, sizeof *t->hash);
	t->hash_cap = ncap;
	for (i = 0; i < t->n; i++) {
		const char *p = t->data + t->off[i];
		uint32_t h = (uint32_t)XXH3_64bits(p, strlen(p)) & (ncap - 1);

		while (t->hash[h] != 0)
			h = (h + 1) & (ncap - 1);
		t->hash[h] = i + 1;
	}
}

uint32_t
snap_intern_str(struct snapshot *s, const char *p, size_t len)
{
	struct snap_strtab *t = &s->strs;
	uint32_t h, id;

	/* Strings with an embedded NUL are cut there: the model stores C
	 * strings. */
	len = strnlen(p, len);
	if (t->hash == NULL || (uint64_t)t->n * 2 >= t->hash_cap)
		strtab_rehash(t);
	h = (uint32_t)XXH3_64bits(p, len) & (t->hash_cap - 1);
	while ((id = t->hash[h]) != 0) {
		const char *q = t->data + t->off[id - 1];

		if (strncmp(q, p, len) == 0 && q[len] == '\0')
			return id - 1;
		h = (h + 1) & (t->hash_cap - 1);
	}
	id = t->n;
	if (t->n == t->cap_n) {
		t->cap_n = t->cap_n ? t->cap_n * 2 : 1024;
		t->off = xreallocarray(t->off, t->cap_n, sizeof *t->off);
	}
	if (t->len + len + 1 > t->cap) {
		size_t cap = t->cap;

		t->data = xgrow(t->data, &cap, t->len + len + 1, 1);
		t->cap = cap;
	}
	memcpy(t->data + t->len, p, len);
	t->data[t->len + len] = '\0';
	t->off[id] = t->len;
	t->len += len + 1;
	t->n++;
	t->hash[h] = id + 1;
	return id;
}

/* ---- frames and stacks ------------------------------------------------ */

typedef int (*idtab_eq)(const struct snapshot *, uint32_t id, const void *key);
typedef uint64_t (*idtab_hash_of)(const struct snapshot *, uint32_t id);

static void
idtab_grow(const struct snapshot *s, struct idtab *t, idtab_hash_of hash_of)
{
	uint32_t ncap = t->cap ? t->cap * 2 : 1024;
	uint32_t *slot = xcalloc(ncap, sizeof *slot);
	uint32_t i;

	for (i = 0; i < t->cap; i++) {
		uint32_t h;

		if (t->slot[i] == 0)
			continue;
		h = (uint32_t)hash_of(s, t->slot[i] - 1) & (ncap - 1);
		while (slot[h] != 0)
			h = (h + 1) & (ncap - 1);
		slot[h] = t->slot[i];
	}
	free(t->slot);
	t->slot = slot;
	t->cap = ncap;
}

/* Finds key; returns its id, or UINT32_MAX with *where set to the free
 * slot to fill. */
static uint32_t
idtab_find(const struct snapshot *s, struct idtab *t, uint64_t hash,
    const void *key, idtab_eq eq, idtab_hash_of hash_of, uint32_t *where)
{
	uint32_t h;

	if ((uint64_t)(t->n + 1) * 2 > t->cap)
		idtab_grow(s, t, hash_of);
	h = (uint32_t)hash & (t->cap - 1);
	while (t->slot[h] != 0) {
		if (eq(s, t->slot[h] - 1, key))
			return t->slot[h] - 1;
		h = (h + 1) & (t->cap - 1);
	}
	*where = h;
	return UINT32_MAX;
}

static uint64_t
frame_hash(const struct snap_frame *f)
{
	return XXH3_64bits(f, sizeof *f);
}

static uint64_t
frame_hash_of(const struct snapshot *s, uint32_t id)
{
	return frame_hash(&s->frames[id]);
}

static int
frame_eq(const struct snapshot *s, uint32_t id, const void *key)
{
	return memcmp(&s->frames[id], key, sizeof(struct snap_frame)) == 0;
}

uint32_t
snap_intern_frame(struct snapshot *s, uint32_t name, uint32_t filename,
    uint64_t line)
{
	struct snap_frame f;
	struct idtab *t = s->frame_hash;
	uint32_t id, where = 0;

	memset(&f, 0, sizeof f);
	f.name = name;
	f.filename = filename;
	f.line = line;
	id = idtab_find(s, t, frame_hash(&f), &f, frame_eq, frame_hash_of,
	    &where);
	if (id != UINT32_MAX)
		return id;
	if (s->n_frames == s->cap_frames) {
		s->cap_frames = s->cap_frames ? s->cap_frames * 2 : 256;
		s->frames = xreallocarray(s->frames, s->cap_frames,
		    sizeof *s->frames);
	}
	id = s->n_frames++;
	s->frames[id] = f;
	t->slot[where] = id + 1;
	t->n++;
	return id;
}

const uint32_t *
snap_stack(const struct snapshot *s, uint32_t stack, uint32_t *n)
{
	if (stack >= s->n_stacks || s->stack_frames == NULL) {
		*n = 0;
		return NULL;
	}
	*n = s->stack_off[stack + 1] - s->stack_off[stack];
	return s->stack_frames + s->stack_off[stack];
}

struct stack_key {
	const uint32_t *frames;
	uint32_t n;
};

static uint64_t
stack_hash_of(const struct snapshot *s, uint32_t id)
{
	uint32_t n;
	const uint32_t *f = snap_stack(s, id, &n);

	return XXH3_64bits(f, (size_t)n * sizeof *f);
}

static int
stack_eq(const struct snapshot *s, uint32_t id, const void *key)
{
	const struct stack_key *k = key;
	uint32_t n;
	const uint32_t *f = snap_stack(s, id, &n);

	return n == k->n && memcmp(f, k->frames, (size_t)n * sizeof *f) == 0;
}

uint32_t
snap_intern_stack(struct snapshot *s, const uint32_t *frames, uint32_t n)
{
	struct stack_key k = {frames, n};
	struct idtab *t = s->stack_hash;
	uint32_t id, where = 0;
	uint64_t need;

	if (n == 0)
		return 0;
	id = idtab_find(s, t, XXH3_64bits(frames, (size_t)n * sizeof *frames),
	    &k, stack_eq, stack_hash_of, &where);
	if (id != UINT32_MAX)
		return id;
	if (s->n_stacks == s->cap_stacks) {
		s->cap_stacks *= 2;
		s->stack_off = xreallocarray(s->stack_off, s->cap_stacks + 1,
		    sizeof *s->stack_off);
	}
	need = s->n_stack_frames + n;
	if (need > UINT32_MAX)
		return 0; /* cannot address more frames: drop the stack */
	if (need > s->cap_stack_frames) {
		size_t cap = s->cap_stack_frames;

		s->stack_frames = xgrow(s->stack_frames, &cap, need,
		    sizeof *s->stack_frames);
		s->cap_stack_frames = cap;
	}
	memcpy(s->stack_frames + s->n_stack_frames, frames,
	    (size_t)n * sizeof *frames);
	s->n_stack_frames = need;
	id = s->n_stacks++;
	s->stack_off[id + 1] = (uint32_t)need;
	t->slot[where] = id + 1;
	t->n++;
	return id;
}

/* ---- traces ------------------------------------------------------------ */

const struct snap_trace *
snap_trace_of(const struct snapshot *s, uint32_t d)
{
	if (d >= s->n_traces)
		return NULL;
	return &s->traces[d];
}

struct snap_trace *
snap_trace_get(struct snapshot *s, uint32_t d)
{
	if (d >= s->n_traces) {
		uint32_t i;

		/* grown geometrically: a file can name 65,536 trace lists
		 * one at a time */
		if (d >= s->cap_traces) {
			size_t cap = s->cap_traces;

			s->traces = xgrow(s->traces, &cap, (size_t)d + 1,
			    sizeof *s->traces);
			s->cap_traces = (uint32_t)(cap > UINT32_MAX ?
			    UINT32_MAX : cap);
		}
		for (i = s->n_traces; i <= d; i++) {
			memset(&s->traces[i], 0, sizeof s->traces[i]);
			s->traces[i].device = i;
		}
		s->n_traces = d + 1;
	}
	return &s->traces[d];
}

static void
trace_grow(struct snap_trace *t)
{
	uint64_t ncap = t->cap ? t->cap * 2 : 1024;

	t->action = xreallocarray(t->action, ncap, 1);
	t->addr = xreallocarray(t->addr, ncap, 8);
	t->size = xreallocarray(t->size, ncap, 8);
	t->stream = xreallocarray(t->stream, ncap, 8);
	t->stack = xreallocarray(t->stack, ncap, 4);
	if (t->time_us != NULL)
		t->time_us = xreallocarray(t->time_us, ncap, 8);
	if (t->compile_context != NULL)
		t->compile_context = xreallocarray(t->compile_context, ncap, 4);
	if (t->user_metadata != NULL)
		t->user_metadata = xreallocarray(t->user_metadata, ncap, 4);
	if (t->pool_id != NULL)
		t->pool_id = xreallocarray(t->pool_id, ncap, 4);
	t->cap = ncap;
	xalloc_hint_huge(t->action, ncap);
	xalloc_hint_huge(t->addr, ncap * 8);
	xalloc_hint_huge(t->size, ncap * 8);
	xalloc_hint_huge(t->stream, ncap * 8);
	xalloc_hint_huge(t->stack, ncap * 4);
	if (t->time_us != NULL)
		xalloc_hint_huge(t->time_us, ncap * 8);
	if (t->compile_context != NULL)
		xalloc_hint_huge(t->compile_context, ncap * 4);
	if (t->user_metadata != NULL)
		xalloc_hint_huge(t->user_metadata, ncap * 4);
	if (t->pool_id != NULL)
		xalloc_hint_huge(t->pool_id, ncap * 4);
}

uint64_t
snap_trace_push(struct snapshot *s, struct snap_trace *t, unsigned action,
    uint64_t addr, uint64_t size, uint64_t stream, uint32_t stack)
{
	uint64_t i = t->n;

	(void)s;
	if (t->n == t->cap)
		trace_grow(t);
	t->action[i] = (uint8_t)action;
	t->addr[i] = addr;
	t->size[i] = size;
	t->stream[i] = stream;
	t->stack[i] = stack;
	if (t->time_us != NULL)
		t->time_us[i] = SNAP_NO_TIME;
	if (t->compile_context != NULL)
		t->compile_context[i] = 0;
	if (t->user_metadata != NULL)
		t->user_metadata[i] = 0;
	if (t->pool_id != NULL)
		t->pool_id[i] = 0;
	t->n++;
	return i;
}

void
snap_trace_set_time(struct snap_trace *t, uint64_t i, int64_t time_us)
{
	if (t->time_us == NULL) {
		uint64_t k;

		t->time_us = xreallocarray(NULL, t->cap, 8);
		xalloc_hint_huge(t->time_us, t->cap * 8);
		for (k = 0; k < t->n; k++)
			t->time_us[k] = SNAP_NO_TIME;
	}
	t->time_us[i] = time_us;
}

static uint32_t *
ensure_u32_column(uint32_t *col, const struct snap_trace *t)
{
	if (col == NULL) {
		col = xcalloc(t->cap, sizeof *col);
		xalloc_hint_huge(col, t->cap * sizeof *col);
	}
	return col;
}

void
snap_trace_set_ctx(struct snap_trace *t, uint64_t i, uint32_t ctx,
    uint32_t meta)
{
	if (ctx != 0 || t->compile_context != NULL) {
		t->compile_context = ensure_u32_column(t->compile_context, t);
		t->compile_context[i] = ctx;
	}
	if (meta != 0 || t->user_metadata != NULL) {
		t->user_metadata = ensure_u32_column(t->user_metadata, t);
		t->user_metadata[i] = meta;
	}
}

void
snap_trace_set_pool(struct snap_trace *t, uint64_t i, uint32_t pool)
{
	if (pool != 0 || t->pool_id != NULL) {
		t->pool_id = ensure_u32_column(t->pool_id, t);
		t->pool_id[i] = pool;
	}
}

int
snap_ev_pool(const struct snapshot *s, const struct snap_trace *t,
    uint64_t i, int64_t pool[2])
{
	uint32_t id = snap_ev_pool_str(t, i);
	const char *p;
	char *end;

	pool[0] = pool[1] = 0;
	if (id == 0)
		return 0;
	/* the loader wrote "A,B" (two decimal int64): read it back */
	p = snap_str(s, id);
	pool[0] = strtoll(p, &end, 10);
	if (end == p || *end != ',') {
		pool[0] = 0;
		return 0;
	}
	p = end + 1;
	pool[1] = strtoll(p, &end, 10);
	if (end == p || *end != '\0') {
		pool[0] = pool[1] = 0;
		return 0;
	}
	return 1;
}

/* ---- segments, blocks, annotations, settings ------------------------- */

struct snap_segment *
snap_push_segment(struct snapshot *s)
{
	struct snap_segment *seg;

	if (s->n_segments == s->cap_segments) {
		s->cap_segments = s->cap_segments ? s->cap_segments * 2 : 64;
		s->segments = xreallocarray(s->segments, s->cap_segments,
		    sizeof *s->segments);
	}
	seg = &s->segments[s->n_segments++];
	memset(seg, 0, sizeof *seg);
	return seg;
}

struct snap_block *
snap_push_block(struct snapshot *s)
{
	struct snap_block *b;

	if (s->n_blocks == s->cap_blocks) {
		s->cap_blocks = s->cap_blocks ? s->cap_blocks * 2 : 256;
		s->blocks = xreallocarray(s->blocks, s->cap_blocks,
		    sizeof *s->blocks);
	}
	b = &s->blocks[s->n_blocks++];
	memset(b, 0, sizeof *b);
	return b;
}

/*
 * Annotations grow with the file (ProfilerStep annotations: two per
 * step, tens of MB in a 10 GB snapshot) and are appended to while the
 * file is parsed, then read once or twice: past ANN_HEAP_MAX bytes they
 * move to a temporary file (util/spill.h) of which only the end stays
 * resident. Where no file can be made they stay on the heap.
 */
#define ANN_HEAP_MAX (1u << 20)
#define ANN_RESERVE ((size_t)UINT32_MAX * sizeof(struct snap_annotation))
#define ANN_KEEP (64u << 10)   /* bytes kept resident below the end */
#define ANN_RELEASE 4096       /* annotations between two give-backs */

static void
ann_to_heap(struct snapshot *s, uint32_t cap)
{
	struct snap_annotation *a = spill_to_heap(s->ann_spill,
	    (size_t)s->n_annotations * sizeof *a, cap, sizeof *a);

	free(s->ann_spill);
	s->ann_spill = NULL;
	s->annotations = a;
	s->cap_annotations = cap;
}

static void
ann_grow(struct snapshot *s)
{
	size_t sz = sizeof *s->annotations;
	uint32_t cap = s->cap_annotations ? s->cap_annotations * 2 : 64;

	if (s->cap_annotations > UINT32_MAX / 2)
		cap = UINT32_MAX;
	if (s->ann_spill == NULL && (size_t)cap * sz > ANN_HEAP_MAX) {
		struct spill *sp = xcalloc(1, sizeof *sp);

		if (spill_adopt(sp, ANN_RESERVE, s->annotations,
		    (size_t)s->n_annotations * sz, (size_t)cap * sz) == 0) {
			s->annotations = (struct snap_annotation *)(void *)
			    sp->base;
			s->ann_spill = sp;
			s->cap_annotations = (uint32_t)((sp->cap / sz) >
			    UINT32_MAX ? UINT32_MAX : sp->cap / sz);
			return;
		}
		free(sp);
	}
	if (s->ann_spill != NULL) {
		if (spill_grow(s->ann_spill, (size_t)cap * sz) == NULL) {
			/* the file cannot grow: back to the heap */
			ann_to_heap(s, cap);
			return;
		}
		s->cap_annotations = (uint32_t)((s->ann_spill->cap / sz) >
		    UINT32_MAX ? UINT32_MAX : s->ann_spill->cap / sz);
		return;
	}
	s->annotations = xreallocarray(s->annotations, cap, sz);
	s->cap_annotations = cap;
}

void
snap_push_annotation(struct snapshot *s, const struct snap_annotation *a)
{
	if (s->n_annotations == s->cap_annotations)
		ann_grow(s);
	s->annotations[s->n_annotations++] = *a;
	if (s->ann_spill != NULL && s->n_annotations % ANN_RELEASE == 0)
		spill_release(s->ann_spill, (size_t)s->n_annotations *
		    sizeof *a, ANN_KEEP, 0);
}

void
snap_free_annotations(struct snapshot *s)
{
	if (s->ann_spill != NULL) {
		spill_free(s->ann_spill);
		free(s->ann_spill);
		s->ann_spill = NULL;
	} else {
		free(s->annotations);
	}
	s->annotations = NULL;
	s->cap_annotations = 0;
}

void
snap_push_setting(struct snapshot *s, uint32_t key, uint32_t value)
{
	if (s->n_settings == s->cap_settings) {
		s->cap_settings = s->cap_settings ? s->cap_settings * 2 : 16;
		s->settings = xreallocarray(s->settings, s->cap_settings,
		    sizeof *s->settings);
	}
	s->settings[s->n_settings].key = key;
	s->settings[s->n_settings].value = value;
	s->n_settings++;
}

unsigned
snap_action_lookup(struct snapshot *s, const char *name, size_t len)
{
	unsigned i;
	uint32_t id;

	for (i = 0; i < SNAP_ACTION_COUNT; i++)
		if (strlen(action_names[i]) == len &&
		    memcmp(action_names[i], name, len) == 0)
			return i;
	id = snap_intern_str(s, name, len);
	for (i = 0; i < s->n_unknown_actions; i++)
		if (s->unknown_actions[i] == id)
			return SNAP_ACTION_COUNT + i;
	if (s->n_unknown_actions == SNAP_MAX_UNKNOWN_ACTIONS)
		return SNAP_ACTION_COUNT + SNAP_MAX_UNKNOWN_ACTIONS - 1;
	s->unknown_actions[s->n_unknown_actions] = id;
	return SNAP_ACTION_COUNT + s->n_unknown_actions++;
}

/* ---- whole-snapshot queries ------------------------------------------ */

uint32_t
snap_device_count(const struct snapshot *s)
{
	uint32_t n = 0, i;

	for (i = 0; i < s->n_traces; i++)
		if (s->traces[i].n > 0 && i + 1 > n)
			n = i + 1;
	for (i = 0; i < s->n_segments; i++)
		if (s->segments[i].device + 1 > n)
			n = s->segments[i].device + 1;
	return n;
}

uint32_t
snap_default_device(const struct snapshot *s)
{
	uint32_t i, k, best = 0;
	uint64_t most = 0;

	/* a GPU before the pinned host memory, whatever their events */
	for (i = 0; i < s->n_traces; i++)
		if (s->traces[i].n > most && !snap_is_host(s, i)) {
			most = s->traces[i].n;
			best = i;
		}
	if (most > 0)
		return best;
	for (i = 0, k = 0; i < s->n_segments; i++)
		if (!snap_is_host(s, s->segments[i].device) &&
		    (k++ == 0 || s->segments[i].device < best))
			best = s->segments[i].device;
	if (k > 0)
		return best;
	if (s->features & SNAP_F_HOST)
		return SNAP_HOST_DEVICE;
	return best;
}

const char *
snap_format_label(const struct snapshot *s)
{
	uint32_t f = s->features;

	if (f & SNAP_F_LEGACY_LIST)
		return "1.13 (segment list)";
	if (f & SNAP_F_NPU)
		return "torch_npu";
	if (f & SNAP_F_ANNOTATE)
		return "2.14+";
	if (f & (SNAP_F_COMPILE_CONTEXT | SNAP_F_USER_METADATA))
		return "2.8+";
	if (f & SNAP_F_ANNOTATIONS)
		return "2.5+";
	if (f & SNAP_F_SETTINGS)
		return "2.3+";
	if (f & SNAP_F_TIME_US)
		return "2.2+";
	if (f & (SNAP_F_BLOCK_ADDRESS | SNAP_F_BLOCK_FRAMES))
		return "2.1+";
	if (f & SNAP_F_DICT)
		return "2.0";
	return "unknown";
}

/* The text of setting key for device d (see snap_ring_overflowed()) into
 * buf; -1 when absent. */
static int
setting_for_device(const struct snapshot *s, const char *key, uint32_t d,
    char *buf, size_t size)
{
	const char *v = NULL, *p, *e;
	uint32_t i, k;
	size_t n;

	for (i = 0; i < s->n_settings; i++)
		if (strcmp(snap_str(s, s->settings[i].key), key) == 0)
			v = snap_str(s, s->settings[i].value);
	if (v == NULL || size == 0)
		return -1;
	p = v;
	if (*p == '[' || *p == '{') {
		/* item d of a list, or the value of key d of a dict */
		int dict = *p == '{';

		p++;
		for (k = 0;; k++) {
			while (*p == ' ')
				p++;
			e = p + strcspn(p, ",]}");
			if (e == p && *e != ',')
				return -1;
			if (dict) {
				const char *c = memchr(p, ':', (size_t)(e - p));
				char *end;
				unsigned long long key_d;

				if (c == NULL)
					return -1;
				key_d = strtoull(p, &end, 10);
				if (end == c && end != p && key_d == d) {
					p = c + 1;
					while (*p == ' ')
						p++;
					break;
				}
			} else if (k == d)
				break;
			if (*e != ',')
				return -1;
			p = e + 1;
		}
	} else
		e = p + strlen(p);
	n = (size_t)(e - p);
	if (n >= size)
		n = size - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
}

int
snap_ring_overflowed(const struct snapshot *s, uint32_t d)
{
	char v[32];

	if (setting_for_device(s, "trace_alloc_overflowed", d, v,
	    sizeof v) != 0)
		return -1;
	if (strcmp(v, "True") == 0 || strcmp(v, "true") == 0)
		return 1;
	if (strcmp(v, "False") == 0 || strcmp(v, "false") == 0)
		return 0;
	if (v[0] >= '0' && v[0] <= '9')
		return strtoull(v, NULL, 10) != 0;
	return -1;
}

uint64_t
snap_ring_max_entries(const struct snapshot *s, uint32_t d)
{
	char v[32], *end;
	unsigned long long n;

	if (setting_for_device(s, "trace_alloc_max_entries", d, v,
	    sizeof v) != 0 || v[0] < '0' || v[0] > '9')
		return 0;
	n = strtoull(v, &end, 10);
	return *end == '\0' ? (uint64_t)n : 0;
}

int
snap_is_host(const struct snapshot *s, uint32_t d)
{
	return d == SNAP_HOST_DEVICE && (s->features & SNAP_F_HOST) != 0;
}

const char *
snap_device_family(const struct snapshot *s)
{
	return (s->features & SNAP_F_XPU) ? "XPU" : NULL;
}
