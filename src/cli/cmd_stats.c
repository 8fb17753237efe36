/*
 * snapview stats: format, events by action, segments, reserved vs
 * allocated, free split internal/external, largest free block, frees
 * without alloc, the Active Memory Timeline peak, per device.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "analysis/summary.h"
#include "cli/cli.h"
#include "index/idx.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/units.h"
#include "util/xalloc.h"

/* Which devices have anything to report, in one pass: a file can name
 * device 65535, and asking per device scanned every segment 65536 times
 * (14 s on a 1.2 MB file). Caller frees. */
static uint8_t *
devices_with_data(const struct snapshot *s, uint32_t n_dev)
{
	uint8_t *has = xcalloc(n_dev ? n_dev : 1, 1);
	uint32_t i;

	for (i = 0; i < n_dev; i++) {
		const struct snap_trace *t = snap_trace_of(s, i);

		has[i] = t != NULL && t->n > 0;
	}
	for (i = 0; i < s->n_segments; i++)
		if (s->segments[i].device < n_dev)
			has[s->segments[i].device] = 1;
	return has;
}

static double
pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The ring buffer's line, when allocator_settings says (2.14). */
static void
ring_text(const struct snapshot *s, uint32_t d)
{
	int ov = snap_ring_overflowed(s, d);
	uint64_t max = snap_ring_max_entries(s, d);
	char m[48] = "";

	if (ov < 0)
		return;
	if (max > 0)
		snprintf(m, sizeof m, " (%" PRIu64 " entries at most)", max);
	printf("  ring buffer:   %s%s\n", ov ? "overflowed: the trace lost "
	    "its start" : "not overflowed: the trace is complete", m);
}

static int
is_default(const struct an_pool_total *p)
{
	return p->pool[0] == 0 && p->pool[1] == 0;
}

/* Reserved bytes per pool, when a private pool holds any segment. */
static void
pools_text(const struct an_seg_totals *t)
{
	char a[32], b[32];
	uint32_t i;

	if (t->private_pool == 0)
		return;
	for (i = 0; i < t->n_pools; i++) {
		const struct an_pool_total *p = &t->pools[i];

		printf("%s%s (%" PRId64 ",%" PRId64 ") %s reserved (%" PRIu64
		    " segment%s, %s allocated)\n",
		    i == 0 ? "  pools:         " : "                 ",
		    is_default(p) ? "default" : "private", p->pool[0],
		    p->pool[1], sv_fmt_size(a, sizeof a, p->reserved),
		    p->segments, p->segments == 1 ? "" : "s",
		    sv_fmt_size(b, sizeof b, p->allocated));
	}
	if (t->more_pools > 0)
		printf("                 %" PRIu64 " more private pool%s: %s "
		    "reserved\n", t->more_pools, t->more_pools == 1 ? "" : "s",
		    sv_fmt_size(a, sizeof a, t->more_reserved));
}

static void
pools_json(struct json *j, const struct an_seg_totals *t)
{
	uint32_t i;

	json_key(j, "pools");
	json_arr_begin(j);
	for (i = 0; i < t->n_pools; i++) {
		const struct an_pool_total *p = &t->pools[i];

		json_obj_begin(j);
		json_key(j, "pool_id");
		json_arr_begin(j);
		json_i64(j, p->pool[0]);
		json_i64(j, p->pool[1]);
		json_arr_end(j);
		json_kv_bool(j, "private", !is_default(p));
		json_kv_u64(j, "segments", p->segments);
		json_kv_u64(j, "reserved", p->reserved);
		json_kv_u64(j, "allocated", p->allocated);
		json_obj_end(j);
	}
	json_arr_end(j);
	if (t->more_pools > 0) {
		json_key(j, "more_pools");
		json_obj_begin(j);
		json_kv_u64(j, "pools", t->more_pools);
		json_kv_u64(j, "reserved", t->more_reserved);
		json_obj_end(j);
	}
}

static void
print_text_device(const struct snapshot *s, const struct an_stats *st)
{
	char a[32], b[32], c[32];
	unsigned i;
	int first = 1;

	if (snap_is_host(s, st->device))
		printf("\nHost (pinned memory, --device host)\n");
	else
		printf("\nDevice %u\n", st->device);
	printf("  events:        %s", sv_fmt_count(a, sizeof a, st->events));
	for (i = 0; i <= SNAP_ACTION_COUNT; i++) {
		const char *name = i < SNAP_ACTION_COUNT ? snap_action_name(i)
							 : "unknown";

		if (st->by_action[i] == 0)
			continue;
		printf("%s%s %s", first ? " (" : ", ", name,
		    sv_fmt_count(a, sizeof a, st->by_action[i]));
		first = 0;
	}
	printf("%s\n", first ? "" : ")");
	if (st->has_at)
		printf("  state after:   event #%" PRId64
		       "%s (timeline total %s)\n",
		    st->at, st->at < 0 ? " (before the first event)" : "",
		    sv_fmt_size(a, sizeof a, st->at_total));
	printf("  segments:      %" PRIu64 " (%" PRIu64 " block%s, %" PRIu64
	       " stream%s%s)\n",
	    st->seg.sum.n_segments, st->seg.sum.n_blocks,
	    st->seg.sum.n_blocks == 1 ? "" : "s", st->streams,
	    st->streams == 1 ? "" : "s",
	    st->seg.expandable ? ", expandable" : "");
	printf("  reserved:      %s\n",
	    sv_fmt_size(a, sizeof a, st->seg.sum.reserved));
	printf("  allocated:     %s (requested; %s in blocks)\n",
	    sv_fmt_size(a, sizeof a, st->seg.sum.alloc_requested),
	    sv_fmt_size(b, sizeof b, st->seg.sum.allocated));
	printf("  active:        %s (%s pending free)\n",
	    sv_fmt_size(a, sizeof a, st->seg.sum.active),
	    sv_fmt_size(b, sizeof b, st->seg.sum.pending));
	printf("  free:          %s (%.1f%% of reserved): internal %s, "
	       "external %s\n",
	    sv_fmt_size(a, sizeof a,
		st->seg.sum.free_internal + st->seg.sum.free_external),
	    pct(st->seg.sum.free_internal + st->seg.sum.free_external,
		st->seg.sum.reserved),
	    sv_fmt_size(b, sizeof b, st->seg.sum.free_internal),
	    sv_fmt_size(c, sizeof c, st->seg.sum.free_external));
	printf("  largest free:  %s\n",
	    sv_fmt_size(a, sizeof a, st->seg.sum.largest_free));
	pools_text(&st->seg);
	if (snap_is_host(s, st->device))
		/* the host allocator rounds a request up to a power of 2 */
		printf("  rounding:      %s (block sizes over the requested "
		    "bytes, %.1f%% of the blocks)\n",
		    sv_fmt_size(a, sizeof a, st->seg.sum.free_internal),
		    pct(st->seg.sum.free_internal, st->seg.sum.allocated));
	if (st->events > 0 && st->peak_ev < 0) {
		/* blocks alive from the start were the most */
		printf("  peak:          %s before the first event (Active "
		       "Memory Timeline)\n", sv_fmt_size(a, sizeof a,
			   st->peak));
	} else if (st->events > 0) {
		printf("  peak:          %s at event #%s (Active Memory "
		       "Timeline)\n",
		    sv_fmt_size(a, sizeof a, st->peak),
		    sv_fmt_count(b, sizeof b, (uint64_t)st->peak_ev));
	}
	if (st->events > 0) {
		printf("  before trace:  %" PRIu64 " free%s without alloc "
		       "(ring buffer wrapped), %" PRIu64
		       " live block%s never allocated in the trace\n",
		    st->frees_without_alloc,
		    st->frees_without_alloc == 1 ? "" : "s", st->ghost_blocks,
		    st->ghost_blocks == 1 ? "" : "s");
	} else {
		printf("  trace:         none (state at the end only)\n");
	}
	ring_text(s, st->device);
	if (st->has_time)
		printf("  time span:     %.3f s (time_us %" PRId64
		       " .. %" PRId64 ")\n",
		    ((double)st->time_last - (double)st->time_first) / 1e6,
		    st->time_first, st->time_last);
	(void)s;
}

static void
json_device(struct json *j, const struct snapshot *s,
    const struct an_stats *st)
{
	unsigned i;

	json_obj_begin(j);
	json_kv_u64(j, "device", st->device);
	if (snap_is_host(s, st->device)) {
		json_kv_bool(j, "host", 1);
		json_kv_u64(j, "rounding_waste", st->seg.sum.free_internal);
	}
	json_kv_u64(j, "events", st->events);
	if (st->has_at) {
		json_kv_i64(j, "at", st->at);
		json_kv_u64(j, "timeline_total_at", st->at_total);
	}
	json_key(j, "actions");
	json_obj_begin(j);
	for (i = 0; i <= SNAP_ACTION_COUNT; i++)
		if (st->by_action[i] > 0)
			json_kv_u64(j,
			    i < SNAP_ACTION_COUNT ? snap_action_name(i)
						  : "unknown",
			    st->by_action[i]);
	json_obj_end(j);
	json_kv_u64(j, "segments", st->seg.sum.n_segments);
	json_kv_u64(j, "blocks", st->seg.sum.n_blocks);
	json_kv_u64(j, "streams", st->streams);
	json_kv_u64(j, "expandable_segments", st->seg.expandable);
	json_kv_u64(j, "private_pool_segments", st->seg.private_pool);
	pools_json(j, &st->seg);
	json_kv_u64(j, "reserved", st->seg.sum.reserved);
	json_kv_u64(j, "allocated", st->seg.sum.alloc_requested);
	json_kv_u64(j, "allocated_blocks", st->seg.sum.allocated);
	json_kv_u64(j, "active", st->seg.sum.active);
	json_kv_u64(j, "pending_free", st->seg.sum.pending);
	json_kv_u64(j, "free_internal", st->seg.sum.free_internal);
	json_kv_u64(j, "free_external", st->seg.sum.free_external);
	json_kv_u64(j, "largest_free_block", st->seg.sum.largest_free);
	json_kv_u64(j, "frees_without_alloc", st->frees_without_alloc);
	json_kv_u64(j, "blocks_before_trace", st->ghost_blocks);
	if (snap_ring_overflowed(s, st->device) >= 0)
		json_kv_bool(j, "ring_buffer_overflowed",
		    snap_ring_overflowed(s, st->device));
	if (snap_ring_max_entries(s, st->device) > 0)
		json_kv_u64(j, "trace_alloc_max_entries",
		    snap_ring_max_entries(s, st->device));
	json_kv_u64(j, "peak", st->peak);
	json_kv_i64(j, "peak_event", st->peak_ev);
	json_key(j, "time_us");
	if (st->has_time) {
		json_obj_begin(j);
		json_kv_i64(j, "first", st->time_first);
		json_kv_i64(j, "last", st->time_last);
		json_obj_end(j);
	} else {
		json_null(j);
	}
	json_obj_end(j);
}

/* Replaces the final-state totals of st by those after event o->at.
 * Returns 0 or the exit status. */
static int
stats_at(const struct cli_opts *o, const struct cli_input *in, uint32_t d,
    const struct idx_timeline *tl, struct an_stats *st)
{
	struct sv_error err;
	struct replay *r;

	if (o->at < -1 || (o->at >= 0 && (uint64_t)o->at >= tl->n_events)) {
		cli_error(o->file, SV_NO_OFFSET, "--at %" PRId64 " is outside "
		    "events -1..%" PRId64 " of device %u", o->at,
		    (int64_t)tl->n_events - 1, d);
		return CLI_EXIT_USAGE;
	}
	sv_error_clear(&err);
	r = cli_replay(in, d, &err);
	if (r == NULL || replay_seek(r, o->at, &err) != 0) {
		cli_error(o->file, SV_NO_OFFSET, "device %u: %s", d, err.msg);
		replay_free(r);
		/* a corrupt checkpoint is bad input, not a usage error */
		return sv_errcode_status(err.code);
	}
	replay_totals(replay_state(r), &st->seg.sum);
	an_seg_pools_of_state(replay_state(r), &st->seg);
	replay_free(r);
	st->has_at = 1;
	st->at = o->at;
	st->at_total = o->at < 0 ? tl->base_total : idx_tl_total(tl, o->at);
	return 0;
}

static void
json_header(struct json *j, const struct cli_opts *o, const struct snapshot *s)
{
	uint32_t i;

	json_kv_str(j, "file", o->file);
	json_kv_str(j, "format", snap_format_label(s));
	if (snap_device_family(s) != NULL)
		json_kv_str(j, "device_family", snap_device_family(s));
	json_kv_i64(j, "protocol", s->protocol);
	json_kv_u64(j, "source_bytes", s->source_size);
	json_kv_u64(j, "frames", s->n_frames);
	json_kv_u64(j, "stacks", s->n_stacks ? s->n_stacks - 1 : 0);
	json_kv_u64(j, "annotations", s->n_annotations);
	json_kv_u64(j, "unknown_keys", s->unknown_keys);
	json_key(j, "unknown_actions");
	json_arr_begin(j);
	for (i = 0; i < s->n_unknown_actions; i++)
		json_str(j, snap_str(s, s->unknown_actions[i]));
	json_arr_end(j);
	json_key(j, "allocator_settings");
	json_obj_begin(j);
	for (i = 0; i < s->n_settings; i++)
		json_kv_str(j, snap_str(s, s->settings[i].key),
		    snap_str(s, s->settings[i].value));
	json_obj_end(j);
}

static void
text_header(const struct cli_opts *o, const struct snapshot *s)
{
	char a[32];
	uint32_t i, ns;

	printf("File:     ");
	sv_escape_fputs(stdout, o->file);
	printf("\nFormat:   %s, pickle protocol %d, %s\n", snap_format_label(s),
	    s->protocol, sv_fmt_size(a, sizeof a, s->source_size));
	if (snap_device_family(s) != NULL)
		printf("Devices:  %s (as the file says)\n",
		    snap_device_family(s));
	ns = s->n_stacks ? s->n_stacks - 1 : 0;
	printf("Stacks:   %u distinct stack%s over %u distinct frame%s\n",
	    ns, ns == 1 ? "" : "s", s->n_frames, s->n_frames == 1 ? "" : "s");
	if (s->n_annotations > 0)
		printf("Annotations: %u\n", s->n_annotations);
	if (s->n_unknown_actions > 0) {
		printf("Unknown actions:");
		for (i = 0; i < s->n_unknown_actions; i++) {
			printf(" ");
			sv_escape_fputs(stdout,
			    snap_str(s, s->unknown_actions[i]));
		}
		printf("\n");
	}
	for (i = 0; i < s->n_settings; i++) {
		printf("%s", i == 0 ? "Settings: " : "          ");
		sv_escape_fputs(stdout, snap_str(s, s->settings[i].key));
		printf(" = ");
		sv_escape_fputs(stdout, snap_str(s, s->settings[i].value));
		printf("\n");
	}
}

int
cmd_stats(const struct cli_opts *o)
{
	struct cli_input in;
	struct json j;
	struct an_summary sum;
	const struct an_sum_dev *sd;
	uint32_t d, n_dev;
	int64_t only = -1;
	uint8_t *has;
	int r = cli_open(o, o->file, &in);

	if (r != 0)
		return r;
	if (o->device >= 0 && (only = cli_device(o, in.snap)) < 0) {
		cli_close(&in);
		return CLI_EXIT_USAGE;
	}
	n_dev = snap_device_count(in.snap);
	has = devices_with_data(in.snap, n_dev);
	/* the index's summary holds what stats counts over the events: a
	 * reopen then reads none */
	if (in.index == NULL || an_summary_section_of(in.index, &sum) != 0)
		memset(&sum, 0, sizeof sum);
	if (o->json) {
		cli_json_init(&j);
		json_obj_begin(&j);
		json_header(&j, o, in.snap);
		json_key(&j, "devices");
		json_arr_begin(&j);
	} else {
		text_header(o, in.snap);
	}
	for (d = 0; d < n_dev; d++) {
		struct idx_timeline tl;
		const struct idx_timeline *itl;
		struct an_stats st;
		struct sv_error err;

		if ((only >= 0 && d != only) ||
		    (only < 0 && !has[d]))
			continue;
		/* The index holds the timeline; build it only without one. */
		memset(&tl, 0, sizeof tl);
		itl = in.index != NULL ? idx_timeline(in.index, d) : NULL;
		if (itl == NULL) {
			if (idx_timeline_build(in.snap, d, &tl, &err) != 0) {
				r = cli_report(o->file, &err);
				break;
			}
			itl = &tl;
		}
		sd = an_summary_dev(&sum, d);
		an_stats_with(in.snap, d, itl, sd != NULL ? &sd->counts : NULL,
		    &st);
		if (o->has_at && (r = stats_at(o, &in, d, itl, &st)) != 0) {
			idx_timeline_destroy(&tl);
			break;
		}
		if (o->json)
			json_device(&j, in.snap, &st);
		else
			print_text_device(in.snap, &st);
		idx_timeline_destroy(&tl);
	}
	if (o->json) {
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else if (n_dev == 0) {
		printf("\nNo device holds any segment or trace event.\n");
	}
	free(has);
	an_summary_destroy(&sum);
	cli_close(&in);
	return r;
}
