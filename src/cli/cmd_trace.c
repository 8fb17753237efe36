/*
 * snapview trace [--from N] [--to M]: the event listing of
 * `_memory_viz.py trace` (doc/snapshot-format.md §11), each line
 * prefixed by its event number, with its bugs fixed: a name (a..z,
 * a1..z1, ...) lives from an alloc to its free_completed and from a
 * segment_alloc to its segment_free, then is recycled; a freed segment no
 * longer names addresses; the closing
 * TOTAL MEM is the requested bytes of active blocks after the last listed
 * event (from the replay, so pre-trace blocks count). Events memory_viz
 * prints as Python reprs get readable lines; strings from the file are
 * escaped.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "replay/replay.h"
#include "util/avl.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/sat.h"
#include "util/search.h"
#include "util/units.h"
#include "util/xalloc.h"

/* Names by address, in ordered maps (util/avl): a file picks the
 * addresses, so no hash it could flood and no list searched per event. */
struct named {
	struct avl_node node;    /* key: address */
	uint64_t size;           /* segments: bytes from the segment_alloc */
	uint32_t name;
};

/* The file's final segments of the device by address, for addresses no
 * live segment_alloc names: span[i] ascending; reach[i] = the span of
 * span[0..i] that ends highest (it holds an address past span[i]'s end
 * when any earlier one does). */
struct fspan {
	uint64_t addr, end;
	uint32_t seg;            /* index in s->segments */
};

struct names {
	uint32_t *free;          /* recycled name numbers (a stack) */
	size_t n_free, cap_free;
	uint32_t next;
	struct avl alloc, seg;   /* live allocations, live segments */
	struct fspan *span;
	uint32_t *reach;
	uint32_t n_span;
};

static uint32_t
name_new(struct names *nm)
{
	if (nm->n_free > 0)
		return nm->free[--nm->n_free];
	return nm->next++;
}

static void
name_release(struct names *nm, uint32_t v)
{
	if (nm->n_free == nm->cap_free)
		nm->free = xgrow(nm->free, &nm->cap_free, nm->n_free + 1,
		    sizeof *nm->free);
	nm->free[nm->n_free++] = v;
}

static char *
name_str(char *buf, size_t n, uint32_t v)
{
	if (v / 26 == 0)
		snprintf(buf, n, "%c", 'a' + v % 26);
	else
		snprintf(buf, n, "%c%u", 'a' + v % 26, v / 26);
	return buf;
}

/* Sets the name at addr (replacing one there). */
static struct named *
name_put(struct avl *m, uint64_t addr, uint32_t v)
{
	struct named *x = avl_insert(m, addr);

	if (x == NULL)
		x = avl_find(m, addr);
	x->name = v;
	return x;
}

/* Takes the name at addr out of m: 1 and *v when there was one. */
static int
name_take(struct avl *m, uint64_t addr, uint32_t *v)
{
	struct named *x = avl_find(m, addr);

	if (x == NULL)
		return 0;
	*v = x->name;
	avl_remove(m, x);
	return 1;
}

static int
span_cmp(const void *a, const void *b)
{
	const struct fspan *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seg < y->seg ? -1 : x->seg > y->seg;
}

static void
names_init(struct names *nm, const struct snapshot *s, uint32_t d)
{
	uint32_t k, kend, i;

	memset(nm, 0, sizeof *nm);
	avl_init(&nm->alloc, sizeof(struct named));
	avl_init(&nm->seg, sizeof(struct named));
	snap_device_segments(s, d, &k, &kend);
	nm->span = xreallocarray(NULL, (size_t)(kend - k) + 1,
	    sizeof *nm->span);
	nm->reach = xreallocarray(NULL, (size_t)(kend - k) + 1,
	    sizeof *nm->reach);
	for (; k < kend; k++) {
		const struct snap_segment *sg = &s->segments[k];

		if (sg->device != d || sg->total_size == 0)
			continue;
		nm->span[nm->n_span].addr = sg->addr;
		nm->span[nm->n_span].end = sv_sat_add(sg->addr, sg->total_size);
		nm->span[nm->n_span++].seg = k;
	}
	if (nm->n_span > 1)
		qsort(nm->span, nm->n_span, sizeof *nm->span, span_cmp);
	for (i = 0; i < nm->n_span; i++)
		nm->reach[i] = i > 0 && nm->span[nm->reach[i - 1]].end >
		    nm->span[i].end ? nm->reach[i - 1] : i;
}

static void
names_destroy(struct names *nm)
{
	avl_destroy(&nm->alloc);
	avl_destroy(&nm->seg);
	free(nm->free);
	free(nm->span);
	free(nm->reach);
}

struct span_at {
	const struct fspan *span;
	uint64_t addr;
};

static int
span_below(const void *ctx, uint64_t i)
{
	const struct span_at *b = ctx;

	return b->span[i].addr <= b->addr;
}

/* Segment that holds addr: "s0" from a live segment_alloc, else seg_<i>
 * of the file's final segments (by total_size), else MEM. */
static void
seg_of(const struct names *nm, uint64_t addr, char *name, size_t n,
    uint64_t *base)
{
	const struct named *x = avl_le(&nm->seg, addr);
	struct span_at at = {nm->span, addr};
	uint64_t lo;

	if (x != NULL && addr - avl_key(x) < x->size) {
		name_str(name, n, x->name);
		*base = avl_key(x);
		return;
	}
	lo = sv_partition(0, nm->n_span, span_below, &at);
	if (lo > 0) {
		const struct fspan *f = &nm->span[lo - 1];

		if (addr >= f->end)
			f = &nm->span[nm->reach[lo - 1]];
		if (addr < f->end) {
			snprintf(name, n, "seg_%u", f->seg);
			*base = f->addr;
			return;
		}
	}
	snprintf(name, n, "MEM");
	*base = 0;
}

/* What the listing calls event i's address: the name of the allocation or
 * segment (memory_viz's a, b, ..., a1, ...), and for an alloc the
 * segment holding it and the offset there. */
struct evname {
	char name[32];          /* "" when unnamed: the address is shown */
	char seg[32];           /* alloc only */
	uint64_t off;
};

/* A free (of an allocation or a segment): its name at addr in m, if it
 * had one, goes back for reuse and into *en when en != NULL. */
static void
name_end(struct names *nm, struct avl *m, uint64_t addr, struct evname *en)
{
	uint32_t v;

	if (!name_take(m, addr, &v))
		return;
	name_release(nm, v);
	if (en != NULL)
		name_str(en->name, sizeof en->name, v);
}

/* Updates the names for event i; fills *en when en != NULL. */
static void
event_names(struct names *nm, const struct snap_trace *t, uint64_t i,
    struct evname *en)
{
	uint64_t a = snap_ev_addr(t, i), base;
	uint32_t v;

	if (en != NULL)
		memset(en, 0, sizeof *en);
	switch (snap_ev_action(t, i)) {
	case SNAP_ALLOC:
		v = name_new(nm);
		name_put(&nm->alloc, a, v);
		if (en == NULL)
			break;
		name_str(en->name, sizeof en->name, v);
		seg_of(nm, a, en->seg, sizeof en->seg, &base);
		en->off = a - base;
		break;
	case SNAP_FREE_REQUESTED:
	case SNAP_ANNOTATE:
		if (en != NULL) {
			const struct named *x = avl_find(&nm->alloc, a);

			if (x != NULL)
				name_str(en->name, sizeof en->name, x->name);
		}
		break;
	case SNAP_FREE_COMPLETED:
		name_end(nm, &nm->alloc, a, en);
		break;
	case SNAP_SEGMENT_ALLOC:
		v = name_new(nm);
		name_put(&nm->seg, a, v)->size = snap_ev_size(t, i);
		if (en != NULL)
			name_str(en->name, sizeof en->name, v);
		break;
	case SNAP_SEGMENT_FREE:
		name_end(nm, &nm->seg, a, en);
		break;
	}
}

/* The name, or the address in decimal as memory_viz prints it. */
static const char *
shown_name(const struct evname *en, uint64_t a, char *buf, size_t n)
{
	if (en->name[0] != '\0')
		return en->name;
	snprintf(buf, n, "%" PRIu64, a);
	return buf;
}

static void
unknown_action(FILE *out, const struct snapshot *s, unsigned act)
{
	unsigned k = act - SNAP_ACTION_COUNT;

	sv_escape_fputs(out, k < s->n_unknown_actions
	    ? snap_str(s, s->unknown_actions[k]) : "?");
}

/* Event i's line of the listing. */
static void
text_line(FILE *out, const struct snapshot *s, const struct snap_trace *t,
    uint64_t i, const struct evname *en)
{
	uint64_t a = snap_ev_addr(t, i), z = snap_ev_size(t, i);
	char nb[32], sb[32], fb[32];
	unsigned act = snap_ev_action(t, i);

	fprintf(out, "#%" PRIu64 " ", i);
	switch (act) {
	case SNAP_ALLOC:
		fprintf(out, "%s = %s[%" PRIu64 ":%s]\n", en->name, en->seg,
		    en->off, sv_fmt_vz_bytes(sb, sizeof sb, z));
		break;
	case SNAP_FREE_REQUESTED:
		fprintf(out, "del %s # %s\n", shown_name(en, a, nb, sizeof nb),
		    sv_fmt_vz_bytes(sb, sizeof sb, z));
		break;
	case SNAP_FREE_COMPLETED:
		fprintf(out, "# free completed for %s %s\n",
		    shown_name(en, a, nb, sizeof nb),
		    sv_fmt_vz_bytes(sb, sizeof sb, z));
		break;
	case SNAP_SEGMENT_ALLOC:
		fprintf(out, "%s = cudaMalloc(%" PRIu64 ", %s)\n", en->name, a,
		    sv_fmt_vz_bytes(sb, sizeof sb, z));
		break;
	case SNAP_SEGMENT_FREE:
		fprintf(out, "cudaFree(%s) # %s\n",
		    shown_name(en, a, nb, sizeof nb),
		    sv_fmt_vz_bytes(sb, sizeof sb, z));
		break;
	case SNAP_SEGMENT_MAP:
		fprintf(out, "cuMemMap(%" PRIu64 ", %s) # stream %" PRIu64 "\n",
		    a, sv_fmt_vz_bytes(sb, sizeof sb, z), snap_ev_stream(t, i));
		break;
	case SNAP_SEGMENT_UNMAP:
		fprintf(out, "cuMemUnmap(%" PRIu64 ", %s) # stream %" PRIu64
		    "\n", a, sv_fmt_vz_bytes(sb, sizeof sb, z),
		    snap_ev_stream(t, i));
		break;
	case SNAP_OOM:
		fprintf(out, "raise OutOfMemoryError() # %s requested, %s free "
		    "in CUDA\n", sv_fmt_vz_bytes(sb, sizeof sb, z),
		    sv_fmt_vz_bytes(fb, sizeof fb, a));
		break;
	case SNAP_SNAPSHOT:
		fprintf(out, "# snapshot taken: %s active\n",
		    sv_fmt_vz_bytes(sb, sizeof sb, z));
		break;
	case SNAP_WORKSPACE_SNAPSHOT:
		fprintf(out, "# workspace_snapshot(%" PRIu64 ", %s)\n", a,
		    sv_fmt_vz_bytes(sb, sizeof sb, z));
		break;
	case SNAP_ANNOTATE:
		/* on the live allocation at its address (its name) */
		fprintf(out, "# annotate %s: ", shown_name(en, a, nb,
		    sizeof nb));
		sv_escape_fputs(out, snap_str(s, snap_ev_meta(t, i)));
		fputc('\n', out);
		break;
	default:
		fprintf(out, "# unknown action '");
		unknown_action(out, s, act);
		fprintf(out, "' addr %" PRIu64 " size %" PRIu64 "\n", a, z);
	}
}

/* Event i as one JSON object on one line (doc/json-schema.md). */
static void
json_event(FILE *out, const struct snapshot *s, const struct snap_trace *t,
    uint64_t i, const struct evname *en)
{
	unsigned act = snap_ev_action(t, i);
	const char *an = snap_action_name(act);
	struct json j;
	int64_t pool[2];

	json_init(&j, out, 0);
	json_obj_begin(&j);
	json_kv_u64(&j, "event", i);
	if (an != NULL)
		json_kv_str(&j, "action", an);
	else {
		unsigned k = act - SNAP_ACTION_COUNT;

		json_kv_str(&j, "action", k < s->n_unknown_actions
		    ? snap_str(s, s->unknown_actions[k]) : "?");
	}
	json_kv_u64(&j, "addr", snap_ev_addr(t, i));
	json_kv_u64(&j, "size", snap_ev_size(t, i));
	json_kv_u64(&j, "stream", snap_ev_stream(t, i));
	if (snap_trace_has_time(t) && snap_ev_time(t, i) != SNAP_NO_TIME)
		json_kv_i64(&j, "time_us", snap_ev_time(t, i));
	if (en->name[0] != '\0')
		json_kv_str(&j, "name", en->name);
	if (act == SNAP_ALLOC) {
		json_kv_str(&j, "segment", en->seg);
		json_kv_u64(&j, "offset", en->off);
	}
	if (act == SNAP_ANNOTATE)
		json_kv_str(&j, "user_metadata", snap_str(s,
		    snap_ev_meta(t, i)));
	if (snap_ev_pool(s, t, i, pool)) {
		json_key(&j, "pool_id");
		json_arr_begin(&j);
		json_i64(&j, pool[0]);
		json_i64(&j, pool[1]);
		json_arr_end(&j);
	}
	json_obj_end(&j);
}

/* The requested bytes of active blocks after event to, from the replay;
 * 0 when the replay cannot be built. */
static int
total_mem(const struct cli_input *in, uint32_t d, int64_t to, uint64_t *v)
{
	struct sv_error err;
	struct replay *r;
	int ok = 0;

	sv_error_clear(&err);
	r = cli_replay(in, d, &err);
	if (r != NULL && replay_seek(r, to, &err) == 0) {
		*v = replay_state(r)->requested;
		ok = 1;
	}
	replay_free(r);
	return ok;
}

static void
trace_device(const struct cli_opts *o, const struct cli_input *in, uint32_t d,
    int first)
{
	const struct snapshot *s = in->snap;
	const struct snap_trace *t = snap_trace_of(s, d);
	struct names nm;
	struct evname en;
	int64_t from = o->has_from ? o->from : 0, to;
	uint64_t i, mem;
	char sb[32];
	int ok;

	to = o->has_to ? o->to : (int64_t)t->n - 1;
	if (from < 0)
		from = 0;
	if (to >= (int64_t)t->n)
		to = (int64_t)t->n - 1;
	names_init(&nm, s, d);
	if (o->json)
		printf("%s\n{\"device\": %u, \"from\": %" PRId64 ", \"to\": %"
		    PRId64 ", \"entries\": %" PRId64 ", \"events\": [",
		    first ? "" : ",", d, from, to,
		    to >= from ? to - from + 1 : 0);
	else {
		printf("Device %u ----------------\n", d);
		printf("%" PRId64 " entr%s\n", to >= from ? to - from + 1 : 0,
		    to == from ? "y" : "ies");
	}
	for (i = 0; (int64_t)i <= to; i++) {
		int shown = (int64_t)i >= from;

		event_names(&nm, t, i, shown ? &en : NULL);
		if (!shown)
			continue;
		if (o->json) {
			fputs((int64_t)i > from ? ",\n" : "\n", stdout);
			json_event(stdout, s, t, i, &en);
		} else
			text_line(stdout, s, t, i, &en);
	}
	ok = total_mem(in, d, to, &mem);
	if (o->json) {
		printf("\n], \"total_mem\": ");
		if (ok)
			printf("%" PRIu64 "}", mem);
		else
			printf("null}");
	} else if (ok)
		printf("TOTAL MEM: %s\n", sv_fmt_vz_bytes(sb, sizeof sb, mem));
	names_destroy(&nm);
}

int
cmd_trace(const struct cli_opts *o)
{
	struct cli_input in;
	uint32_t d, nd;
	int rc = cli_open(o, o->file, &in), any = 0;

	if (rc != 0)
		return rc;
	if (o->json) {
		cli_json_begun();
		printf("{\"file\": ");
		sv_json_string(stdout, o->file, strlen(o->file));
		printf(", \"devices\": [");
	}
	nd = snap_device_count(in.snap);
	for (d = 0; d < nd; d++) {
		const struct snap_trace *t = snap_trace_of(in.snap, d);

		if (o->device >= 0 && (uint32_t)o->device != d)
			continue;
		if (t == NULL || t->n == 0)
			continue;
		trace_device(o, &in, d, !any);
		any = 1;
	}
	if (o->json)
		printf("%s]}\n", any ? "\n" : "");
	else if (!any)
		printf("%s: no trace events%s\n", cli_shown(o->file),
		    o->device >= 0 ? " on that device" : "");
	cli_close(&in);
	return CLI_EXIT_OK;
}
