/*
 * snapview cut's writer: one device's event window and the replayed
 * allocator state at its end, as a snapshot pickle (cut.h).
 */
#include "config.h"

#include "analysis/cut.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pickle/pkl_write.h"
#include "util/xalloc.h"

#define NO_MEMO UINT32_MAX

/* Keys, each written once and fetched from the memo after. */
#define CUT_KEYS(_)                                                            \
	_(K_SEGMENTS, "segments")                                              \
	_(K_TRACES, "device_traces")                                           \
	_(K_SETTINGS, "allocator_settings")                                    \
	_(K_ANNOTATIONS, "external_annotations")                               \
	_(K_DEVICE, "device")                                                  \
	_(K_ADDRESS, "address")                                                \
	_(K_TOTAL, "total_size")                                               \
	_(K_ALLOCATED, "allocated_size")                                       \
	_(K_ACTIVE, "active_size")                                             \
	_(K_REQUESTED, "requested_size")                                       \
	_(K_STREAM, "stream")                                                  \
	_(K_SEGTYPE, "segment_type")                                           \
	_(K_POOL, "segment_pool_id")                                           \
	_(K_EXPANDABLE, "is_expandable")                                       \
	_(K_FRAMES, "frames")                                                  \
	_(K_BLOCKS, "blocks")                                                  \
	_(K_SIZE, "size")                                                      \
	_(K_STATE, "state")                                                    \
	_(K_HISTORY, "history")                                                \
	_(K_ADDR, "addr")                                                      \
	_(K_REAL_SIZE, "real_size")                                            \
	_(K_ACTION, "action")                                                  \
	_(K_DEVICE_FREE, "device_free")                                        \
	_(K_TIME, "time_us")                                                   \
	_(K_CTX, "compile_context")                                            \
	_(K_META, "user_metadata")                                             \
	_(K_NAME, "name")                                                      \
	_(K_FILENAME, "filename")                                              \
	_(K_LINE, "line")                                                      \
	_(K_STAGE, "stage")

enum cut_key {
#define CUT_KEY_ENUM(id, name) id,
	CUT_KEYS(CUT_KEY_ENUM)
#undef CUT_KEY_ENUM
	K_COUNT
};

static const char *key_names[K_COUNT] = {
#define CUT_KEY_NAME(id, name) name,
	CUT_KEYS(CUT_KEY_NAME)
#undef CUT_KEY_NAME
};

struct cut {
	const struct snapshot *s;
	struct pkl_writer w;
	uint32_t key_memo[K_COUNT];
	uint32_t *str_memo;     /* per string id */
	uint32_t *frame_memo;   /* per frame id */
	uint32_t *stack_memo;   /* per stack id */
};

static void
key(struct cut *c, enum cut_key k)
{
	if (c->key_memo[k] != NO_MEMO) {
		pkl_w_get(&c->w, c->key_memo[k]);
		return;
	}
	pkl_w_str(&c->w, key_names[k], strlen(key_names[k]));
	c->key_memo[k] = pkl_w_memoize(&c->w);
}

/* String id as its bytes: the table keeps each one NUL-terminated, so
 * its length is the distance to the next (a NUL inside it is kept). */
static void
str(struct cut *c, uint32_t id)
{
	const struct snap_strtab *t = &c->s->strs;
	uint64_t start, end;

	if (id >= t->n) {
		pkl_w_str(&c->w, "", 0);
		return;
	}
	if (c->str_memo[id] != NO_MEMO) {
		pkl_w_get(&c->w, c->str_memo[id]);
		return;
	}
	start = t->off[id];
	end = id + 1 < t->n ? t->off[id + 1] : t->len;
	if (end <= start)
		end = start + 1;
	pkl_w_str(&c->w, t->data + start, (size_t)(end - start - 1));
	c->str_memo[id] = pkl_w_memoize(&c->w);
}

static void
cstr(struct cut *c, const char *s)
{
	pkl_w_str(&c->w, s, strlen(s));
}

static void
frame(struct cut *c, uint32_t id)
{
	const struct snap_frame *fr = &c->s->frames[id];

	if (c->frame_memo[id] != NO_MEMO) {
		pkl_w_get(&c->w, c->frame_memo[id]);
		return;
	}
	pkl_w_empty_dict(&c->w);
	c->frame_memo[id] = pkl_w_memoize(&c->w);
	pkl_w_mark(&c->w);
	key(c, K_NAME);
	str(c, fr->name);
	key(c, K_FILENAME);
	str(c, fr->filename);
	key(c, K_LINE);
	pkl_w_u64(&c->w, fr->line);
	pkl_w_setitems(&c->w);
}

/* The frames list of a stack, shared through the memo as PyTorch's own
 * files share it. */
static void
stack(struct cut *c, uint32_t id)
{
	const uint32_t *fr;
	uint32_t n, i;

	if (id < c->s->n_stacks && c->stack_memo[id] != NO_MEMO) {
		pkl_w_get(&c->w, c->stack_memo[id]);
		return;
	}
	fr = snap_stack(c->s, id, &n);
	pkl_w_empty_list(&c->w);
	if (id < c->s->n_stacks)
		c->stack_memo[id] = pkl_w_memoize(&c->w);
	else
		pkl_w_memoize(&c->w);
	for (i = 0; i < n; i += 1000) {
		uint32_t k;

		pkl_w_mark(&c->w);
		for (k = i; k < n && k < i + 1000; k++)
			if (fr[k] < c->s->n_frames)
				frame(c, fr[k]);
		pkl_w_appends(&c->w);
	}
}

static const char *
state_name(unsigned st)
{
	switch (st) {
	case SNAP_BLOCK_ACTIVE_ALLOCATED:
		return "active_allocated";
	case SNAP_BLOCK_ACTIVE_PENDING_FREE:
		return "active_pending_free";
	default:
		return "inactive";
	}
}

static void
block(struct cut *c, const struct replay_block *b)
{
	uint32_t f = c->s->features;

	pkl_w_empty_dict(&c->w);
	pkl_w_memoize(&c->w);
	pkl_w_mark(&c->w);
	if (f & SNAP_F_BLOCK_ADDRESS) {
		key(c, K_ADDRESS);
		pkl_w_u64(&c->w, b->addr);
	}
	key(c, K_SIZE);
	pkl_w_u64(&c->w, b->size);
	if (f & SNAP_F_REQUESTED) {
		key(c, K_REQUESTED);
		pkl_w_u64(&c->w, b->requested_size);
	}
	key(c, K_STATE);
	cstr(c, state_name(b->state));
	if (f & SNAP_F_BLOCK_FRAMES) {
		key(c, K_FRAMES);
		stack(c, b->state == SNAP_BLOCK_INACTIVE ? 0 : b->stack);
	} else if ((f & SNAP_F_HISTORY) && b->state != SNAP_BLOCK_INACTIVE) {
		/* the older form: history[0] is the allocation */
		key(c, K_HISTORY);
		pkl_w_empty_list(&c->w);
		pkl_w_memoize(&c->w);
		pkl_w_mark(&c->w);
		pkl_w_empty_dict(&c->w);
		pkl_w_memoize(&c->w);
		pkl_w_mark(&c->w);
		key(c, K_ADDR);
		pkl_w_u64(&c->w, b->addr);
		key(c, K_REAL_SIZE);
		pkl_w_u64(&c->w, b->requested_size);
		if (b->stack != 0) {
			key(c, K_FRAMES);
			stack(c, b->stack);
		}
		pkl_w_setitems(&c->w);
		pkl_w_appends(&c->w);
	}
	pkl_w_setitems(&c->w);
}

static void
segment(struct cut *c, uint32_t d, const struct replay_state *st,
    const struct replay_segment *sg)
{
	uint32_t f = c->s->features, b, end;

	pkl_w_empty_dict(&c->w);
	pkl_w_memoize(&c->w);
	pkl_w_mark(&c->w);
	key(c, K_DEVICE);
	pkl_w_u64(&c->w, d);
	key(c, K_ADDRESS);
	pkl_w_u64(&c->w, sg->addr);
	key(c, K_TOTAL);
	pkl_w_u64(&c->w, sg->size);
	key(c, K_ALLOCATED);
	pkl_w_u64(&c->w, sg->allocated);
	key(c, K_ACTIVE);
	pkl_w_u64(&c->w, sg->active);
	if (f & SNAP_F_REQUESTED) {
		key(c, K_REQUESTED);
		pkl_w_u64(&c->w, sg->requested);
	}
	key(c, K_STREAM);
	pkl_w_u64(&c->w, sg->stream);
	key(c, K_SEGTYPE);
	cstr(c, sg->is_large ? "large" : "small");
	if (f & SNAP_F_POOL_ID) {
		key(c, K_POOL);
		pkl_w_i64(&c->w, sg->pool_id[0]);
		pkl_w_i64(&c->w, sg->pool_id[1]);
		pkl_w_tuple2(&c->w);
		pkl_w_memoize(&c->w);
	}
	if (f & SNAP_F_EXPANDABLE) {
		key(c, K_EXPANDABLE);
		pkl_w_bool(&c->w, sg->is_expandable);
	}
	if (f & SNAP_F_BLOCK_FRAMES) {
		key(c, K_FRAMES);
		stack(c, sg->stack);
	}
	key(c, K_BLOCKS);
	pkl_w_empty_list(&c->w);
	pkl_w_memoize(&c->w);
	end = sg->first_block + sg->n_blocks;
	if (end > st->n_blocks)
		end = st->n_blocks;
	for (b = sg->first_block; b < end; b += 1000) {
		uint32_t k;

		pkl_w_mark(&c->w);
		for (k = b; k < end && k < b + 1000; k++)
			block(c, &st->blocks[k]);
		pkl_w_appends(&c->w);
	}
	pkl_w_setitems(&c->w);
}

static void
event(struct cut *c, const struct snap_trace *t, uint32_t cols, uint64_t i)
{
	const struct snapshot *s = c->s;
	struct snap_event ev;
	const char *name;

	snap_ev_get(t, i, &ev);
	pkl_w_empty_dict(&c->w);
	pkl_w_memoize(&c->w);
	pkl_w_mark(&c->w);
	key(c, K_ACTION);
	name = snap_action_name(ev.action);
	if (name != NULL)
		cstr(c, name);
	else if ((unsigned)ev.action - SNAP_ACTION_COUNT < s->n_unknown_actions)
		str(c, s->unknown_actions[ev.action - SNAP_ACTION_COUNT]);
	else
		cstr(c, "");
	key(c, ev.action == SNAP_OOM ? K_DEVICE_FREE : K_ADDR);
	pkl_w_u64(&c->w, ev.addr);
	key(c, K_SIZE);
	pkl_w_u64(&c->w, ev.size);
	key(c, K_STREAM);
	pkl_w_u64(&c->w, ev.stream);
	if ((cols & SNAP_TRACE_TIME) && ev.time_us != SNAP_NO_TIME) {
		key(c, K_TIME);
		pkl_w_i64(&c->w, ev.time_us);
	}
	if ((cols & SNAP_TRACE_CTX) || (s->features & SNAP_F_COMPILE_CONTEXT)) {
		key(c, K_CTX);
		str(c, ev.compile_context);
	}
	if ((cols & SNAP_TRACE_META) || (s->features & SNAP_F_USER_METADATA)) {
		key(c, K_META);
		str(c, ev.user_metadata);
	}
	if ((s->features & SNAP_F_TRACE_FRAMES) || ev.stack != 0) {
		key(c, K_FRAMES);
		stack(c, ev.stack);
	}
	pkl_w_setitems(&c->w);
}

/* A setting's text back to the value it renders: an integer, a float,
 * a bool, None, a dict of integers ("{1: 0, 2: 4}"), else the text. */
static void
setting_value(struct cut *c, uint32_t id)
{
	const char *v = snap_str(c->s, id), *p;
	char *end;
	long long n, m;
	double x;

	if (strcmp(v, "True") == 0 || strcmp(v, "False") == 0) {
		pkl_w_bool(&c->w, v[0] == 'T');
		return;
	}
	if (strcmp(v, "None") == 0) {
		pkl_w_none(&c->w);
		return;
	}
	if (*v != '\0' && strspn(v, "-0123456789") == strlen(v)) {
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno == 0 && *end == '\0') {
			pkl_w_i64(&c->w, n);
			return;
		}
	}
	if (*v != '\0' && strspn(v, "-+.0123456789eE") == strlen(v)) {
		errno = 0;
		x = strtod(v, &end);
		if (errno == 0 && *end == '\0') {
			pkl_w_double(&c->w, x);
			return;
		}
	}
	if (v[0] == '{' && v[strlen(v) - 1] == '}') {
		/* check the whole text first: nothing is written unless it
		 * is a dict of integers */
		int ok = 1, count = 0;

		for (p = v + 1; *p != '}' && ok; count++) {
			errno = 0;
			n = strtoll(p, &end, 10);
			if (errno != 0 || end == p || end[0] != ':' ||
			    end[1] != ' ') {
				ok = 0;
				break;
			}
			p = end + 2;
			m = strtoll(p, &end, 10);
			if (errno != 0 || end == p) {
				ok = 0;
				break;
			}
			p = end;
			if (p[0] == ',' && p[1] == ' ')
				p += 2;
			else if (p[0] != '}')
				ok = 0;
		}
		(void)m;
		if (ok && p[1] == '\0') {
			pkl_w_empty_dict(&c->w);
			pkl_w_memoize(&c->w);
			if (count > 0) {
				pkl_w_mark(&c->w);
				for (p = v + 1; *p != '}';) {
					n = strtoll(p, &end, 10);
					pkl_w_i64(&c->w, n);
					p = end + 2;
					m = strtoll(p, &end, 10);
					pkl_w_i64(&c->w, m);
					p = end;
					if (*p == ',')
						p += 2;
				}
				pkl_w_setitems(&c->w);
			}
			return;
		}
	}
	str(c, id);
}

static void
settings(struct cut *c)
{
	uint32_t i;

	key(c, K_SETTINGS);
	pkl_w_empty_dict(&c->w);
	pkl_w_memoize(&c->w);
	if (c->s->n_settings == 0)
		return;
	pkl_w_mark(&c->w);
	for (i = 0; i < c->s->n_settings; i++) {
		str(c, c->s->settings[i].key);
		setting_value(c, c->s->settings[i].value);
	}
	pkl_w_setitems(&c->w);
}

/* The annotations of device d between the event before the window and
 * the event after it (by time_us), less an END before its first event
 * and a START after its last: the range of each holds no event of the
 * window (and a reader would take such an END for a range the trace cut,
 * steps.h). */
static uint64_t
annotations(struct cut *c, uint32_t d, const struct snap_trace *t,
    int64_t from, int64_t to)
{
	const struct snapshot *s = c->s;
	int64_t lo = INT64_MIN, hi = INT64_MAX, first, last;
	uint64_t n = 0, k = 0;
	uint32_t i;

	if (from > 0 && snap_ev_time(t, (uint64_t)from - 1) != SNAP_NO_TIME)
		lo = snap_ev_time(t, (uint64_t)from - 1);
	if ((uint64_t)to + 1 < t->n &&
	    snap_ev_time(t, (uint64_t)to + 1) != SNAP_NO_TIME)
		hi = snap_ev_time(t, (uint64_t)to + 1);
	first = snap_ev_time(t, (uint64_t)from);
	last = snap_ev_time(t, (uint64_t)to);
	key(c, K_ANNOTATIONS);
	pkl_w_empty_list(&c->w);
	pkl_w_memoize(&c->w);
	for (i = 0; i < s->n_annotations; i++) {
		const struct snap_annotation *a = &s->annotations[i];

		if (a->device != d || a->stage == SNAP_STAGE_OTHER ||
		    a->time_us <= lo || a->time_us >= hi)
			continue;
		if (first != SNAP_NO_TIME && a->stage == SNAP_STAGE_END &&
		    a->time_us < first)
			continue;
		if (last != SNAP_NO_TIME && a->stage == SNAP_STAGE_START &&
		    a->time_us > last)
			continue;
		if (k == 0)
			pkl_w_mark(&c->w);
		pkl_w_empty_dict(&c->w);
		pkl_w_memoize(&c->w);
		pkl_w_mark(&c->w);
		key(c, K_NAME);
		str(c, a->name);
		key(c, K_STAGE);
		cstr(c, a->stage == SNAP_STAGE_START ? "START" : "END");
		key(c, K_DEVICE);
		pkl_w_u64(&c->w, a->device);
		key(c, K_TIME);
		pkl_w_i64(&c->w, a->time_us);
		pkl_w_setitems(&c->w);
		n++;
		if (++k == 1000) {
			pkl_w_appends(&c->w);
			k = 0;
		}
	}
	if (k > 0)
		pkl_w_appends(&c->w);
	return n;
}

static void
traces(struct cut *c, uint32_t d, const struct snap_trace *t, int64_t from,
    int64_t to)
{
	uint32_t cols = snap_trace_cols(t), dd, nd;
	uint64_t i, k;

	key(c, K_TRACES);
	pkl_w_empty_list(&c->w);
	pkl_w_memoize(&c->w);
	nd = c->s->n_traces > d ? c->s->n_traces : d + 1;
	pkl_w_mark(&c->w);
	for (dd = 0; dd < nd; dd++) {
		pkl_w_empty_list(&c->w);
		pkl_w_memoize(&c->w);
		if (dd != d)
			continue;
		for (i = (uint64_t)from; i <= (uint64_t)to; i = k) {
			pkl_w_mark(&c->w);
			for (k = i; k <= (uint64_t)to && k < i + 1000; k++)
				event(c, t, cols, k);
			pkl_w_appends(&c->w);
		}
	}
	pkl_w_appends(&c->w);
}

int
an_cut_write(const struct snapshot *s, uint32_t d, struct replay *r,
    int64_t from, int64_t to, FILE *f, struct an_cut_info *info,
    struct sv_error *err)
{
	const struct snap_trace *t = snap_trace_of(s, d);
	const struct replay_state *st;
	struct cut c;
	uint32_t i;

	memset(info, 0, sizeof *info);
	if (!(s->features & SNAP_F_DICT) || t == NULL || t->n == 0)
		return sv_error_set(err, SV_ERR_USAGE, 0, "device %u has no "
		    "trace to cut", d);
	if (from < 0 || to < from || (uint64_t)to >= t->n)
		return sv_error_set(err, SV_ERR_USAGE, 0, "window %lld..%lld "
		    "is not in the trace (0..%llu)", (long long)from,
		    (long long)to, (unsigned long long)t->n - 1);
	if (replay_seek(r, to, err) != 0)
		return -1;
	st = replay_state(r);
	memset(&c, 0, sizeof c);
	c.s = s;
	pkl_w_init(&c.w, f);
	for (i = 0; i < K_COUNT; i++)
		c.key_memo[i] = NO_MEMO;
	c.str_memo = xmalloc(((size_t)s->strs.n + 1) * sizeof *c.str_memo);
	memset(c.str_memo, 0xff, ((size_t)s->strs.n + 1) * sizeof *c.str_memo);
	c.frame_memo = xmalloc(((size_t)s->n_frames + 1) *
	    sizeof *c.frame_memo);
	memset(c.frame_memo, 0xff, ((size_t)s->n_frames + 1) *
	    sizeof *c.frame_memo);
	c.stack_memo = xmalloc(((size_t)s->n_stacks + 1) *
	    sizeof *c.stack_memo);
	memset(c.stack_memo, 0xff, ((size_t)s->n_stacks + 1) *
	    sizeof *c.stack_memo);

	pkl_w_proto(&c.w);
	pkl_w_empty_dict(&c.w);
	pkl_w_memoize(&c.w);
	pkl_w_mark(&c.w);
	key(&c, K_SEGMENTS);
	pkl_w_empty_list(&c.w);
	pkl_w_memoize(&c.w);
	for (i = 0; i < st->n_segments; i += 1000) {
		uint32_t k;

		pkl_w_mark(&c.w);
		for (k = i; k < st->n_segments && k < i + 1000; k++)
			segment(&c, d, st, &st->segments[k]);
		pkl_w_appends(&c.w);
	}
	info->segments = st->n_segments;
	info->blocks = st->n_blocks;
	if (s->features & SNAP_F_DEVICE_TRACES)
		traces(&c, d, t, from, to);
	info->events = (uint64_t)(to - from + 1);
	if (s->features & SNAP_F_SETTINGS)
		settings(&c);
	if (s->features & SNAP_F_ANNOTATIONS)
		info->annotations = annotations(&c, d, t, from, to);
	pkl_w_setitems(&c.w);
	pkl_w_stop(&c.w);
	free(c.str_memo);
	free(c.frame_memo);
	free(c.stack_memo);
	if (fflush(f) != 0 || ferror(f))
		return sv_error_set(err, SV_ERR_IO, 0, "writing the cut: %s",
		    strerror(errno));
	return 0;
}
