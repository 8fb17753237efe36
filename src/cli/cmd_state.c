/*
 * snapview state [--at N]: the allocator state after event N (--at -1 or
 * start: before the first event; without --at, at the end of the trace),
 * segment by segment, each with the map of `_memory_viz.py stats`
 * (doc/snapshot-format.md §11 segsum, but for every segment, not only
 * those >= 20 MiB) and its free bytes said plainly, then totals. --json
 * lists every block with exact byte counts.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "replay/replay.h"
#include "util/json.h"
#include "util/sat.h"
#include "util/units.h"

#define PAGE (20ull * 1024 * 1024)

/* "X (Y% internal)": total_free's form, as memory_viz writes it. */
static void
vz_free(char *buf, size_t n, uint64_t ext, uint64_t in)
{
	char b[32];
	uint64_t tot = sv_sat_add(ext, in);

	if (tot == 0)
		snprintf(buf, n, "%s", sv_fmt_vz_bytes(b, sizeof b, tot));
	else
		snprintf(buf, n, "%s (%.1f%% internal)",
		    sv_fmt_vz_bytes(b, sizeof b, tot),
		    100.0 * (double)in / (double)tot);
}

/* One segment's line: its map (one character per 20 MiB page, memory_viz's
 * segsum: a letter where one allocated block starts covering it, a digit
 * for the tenths of it allocated once more blocks do, * when full, blank
 * when none does), its size, its free bytes split into internal (the
 * rounding inside allocated blocks) and external (free blocks), its
 * stream. The replay keeps every block inside its segment and its
 * requested size within the block; the clamps below hold whatever the
 * state says. */
static void
segsum_line(const struct replay_state *st, const struct replay_segment *sg)
{
	uint64_t np = sg->size / PAGE + (sg->size % PAGE != 0), ext = 0, in = 0;
	uint64_t j, k = 0;
	char body[1024], a[32], f[64];
	double frac[1024];

	if (np == 0)
		np = 1;
	if (np > sizeof body - 1)
		np = sizeof body - 1;
	memset(body, ' ', np);
	body[np] = '\0';
	memset(frac, 0, sizeof frac);
	for (j = 0; j < sg->n_blocks && sg->first_block + j < st->n_blocks;
	     j++) {
		const struct replay_block *b = &st->blocks[sg->first_block + j];
		uint64_t s0, e0, p, req;

		if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED) {
			ext = sv_sat_add(ext, b->size);
			continue;
		}
		req = b->requested_size < b->size ? b->requested_size : b->size;
		in = sv_sat_add(in, b->size - req);
		if (b->addr < sg->addr || b->addr - sg->addr >= sg->size)
			continue;
		s0 = b->addr - sg->addr;
		e0 = req > sg->size - s0 ? sg->size : s0 + req;
		for (p = s0 / PAGE; p < np && p * PAGE < e0; p++) {
			uint64_t s = s0 > p * PAGE ? s0 : p * PAGE;
			uint64_t e = e0 - p * PAGE < PAGE ? e0 : (p + 1) * PAGE;
			int idx;

			frac[p] += (double)(e - s) / (double)PAGE;
			idx = frac[p] >= 1.0 ? 10 : (int)(frac[p] * 10);
			if (body[p] != ' ')
				body[p] = "0123456789*"[idx];
			else
				body[p] = (char)('a' + k % 26);
		}
		k++;
	}
	printf("  [%s] %s segment, %s free: ", body,
	    sv_fmt_vz_bytes(a, sizeof a, sg->size),
	    sv_fmt_vz_bytes(f, sizeof f, sv_sat_add(ext, in)));
	printf("%s rounding in allocated blocks, ",
	    sv_fmt_vz_bytes(a, sizeof a, in));
	printf("%s in free blocks", sv_fmt_vz_bytes(a, sizeof a, ext));
	if (sg->stream != 0)
		printf(", stream %" PRIu64, sg->stream);
	printf("\n");
}

void
cli_state_text(const char *head, const struct replay_state *st)
{
	struct replay_totals t;
	char a[32], f[64];
	uint32_t i;

	replay_totals(st, &t);
	printf("%s\n", head);
	if (st->n_segments > 0)
		printf("Map [...]: a character per 20 MiB of the segment: a "
		       "letter where an allocated\nblock starts covering it, "
		       "a digit for the tenths allocated once more blocks\n"
		       "do, * when full, blank when none does.\n");
	for (i = 0; i < st->n_segments; i++) {
		const struct replay_segment *sg = &st->segments[i];

		printf("seg 0x%" PRIx64 " %s %s%s pool (%" PRId64 ", %" PRId64
		       ") %u block%s\n",
		    sg->addr, sv_fmt_vz_bytes(a, sizeof a, sg->size),
		    sg->is_large ? "large" : "small",
		    sg->is_expandable ? " expandable" : "", sg->pool_id[0],
		    sg->pool_id[1], sg->n_blocks, sg->n_blocks == 1 ? "" : "s");
		segsum_line(st, sg);
	}
	printf("segments: %" PRIu64 "\n", t.n_segments);
	printf("blocks: %" PRIu64 "\n", t.n_blocks);
	printf("total_reserved: %s\n",
	    sv_fmt_vz_bytes(a, sizeof a, t.reserved));
	printf("total_allocated: %s\n",
	    sv_fmt_vz_bytes(a, sizeof a, t.alloc_requested));
	printf("total_active: %s\n", sv_fmt_vz_bytes(a, sizeof a, t.active));
	vz_free(f, sizeof f, t.free_external, t.free_internal);
	printf("total_free: %s\n", f);
	printf("free_internal: %s\n",
	    sv_fmt_vz_bytes(a, sizeof a, t.free_internal));
	printf("free_external: %s\n",
	    sv_fmt_vz_bytes(a, sizeof a, t.free_external));
	printf("largest_free_block: %s\n",
	    sv_fmt_vz_bytes(a, sizeof a, t.largest_free));
}

static void
text_state(uint32_t d, const struct replay *r, const struct replay_state *st,
    int at_end)
{
	char head[200], when[80];

	if (replay_n_events(r) == 0)
		snprintf(when, sizeof when, "at the end");
	else if (at_end && st->at >= 0)
		snprintf(when, sizeof when, "at the end, after event %" PRId64,
		    st->at);
	else if (st->at < 0)
		snprintf(when, sizeof when, "before the first event");
	else
		snprintf(when, sizeof when, "after event %" PRId64, st->at);
	snprintf(head, sizeof head, "Device %u: state %s (%" PRIu64
	    " event%s)%s", d, when, replay_n_events(r),
	    replay_n_events(r) == 1 ? "" : "s",
	    replay_info(r)->legacy_no_trace
		? "; no trace in this file: the state at the end only" : "");
	cli_state_text(head, st);
}

static const char *
state_str(unsigned s)
{
	switch (s) {
	case SNAP_BLOCK_ACTIVE_ALLOCATED: return "active_allocated";
	case SNAP_BLOCK_ACTIVE_PENDING_FREE: return "active_pending_free";
	default: return "inactive";
	}
}

void
cli_state_json_keys(struct json *j, uint32_t d, const struct replay_state *st)
{
	struct replay_totals t;
	uint32_t i, k;

	replay_totals(st, &t);
	json_kv_u64(j, "device", d);
	json_kv_i64(j, "at", st->at);
	json_key(j, "totals");
	json_obj_begin(j);
	json_kv_u64(j, "segments", t.n_segments);
	json_kv_u64(j, "blocks", t.n_blocks);
	json_kv_u64(j, "reserved", t.reserved);
	json_kv_u64(j, "allocated", t.allocated);
	json_kv_u64(j, "allocated_requested", t.alloc_requested);
	json_kv_u64(j, "active", t.active);
	json_kv_u64(j, "requested", t.requested);
	json_kv_u64(j, "pending_free", t.pending);
	json_kv_u64(j, "free_internal", t.free_internal);
	json_kv_u64(j, "free_external", t.free_external);
	json_kv_u64(j, "largest_free_block", t.largest_free);
	json_obj_end(j);
	json_key(j, "segments");
	json_arr_begin(j);
	for (i = 0; i < st->n_segments; i++) {
		const struct replay_segment *sg = &st->segments[i];

		json_obj_begin(j);
		json_kv_u64(j, "address", sg->addr);
		json_kv_u64(j, "total_size", sg->size);
		json_kv_u64(j, "allocated_size", sg->allocated);
		json_kv_u64(j, "active_size", sg->active);
		json_kv_u64(j, "requested_size", sg->requested);
		json_kv_u64(j, "stream", sg->stream);
		json_kv_str(j, "segment_type",
		    sg->is_large ? "large" : "small");
		json_key(j, "segment_pool_id");
		json_arr_begin(j);
		json_i64(j, sg->pool_id[0]);
		json_i64(j, sg->pool_id[1]);
		json_arr_end(j);
		json_kv_bool(j, "is_expandable", sg->is_expandable);
		json_kv_i64(j, "alloc_event", sg->alloc_ev);
		json_key(j, "blocks");
		json_arr_begin(j);
		for (k = 0; k < sg->n_blocks; k++) {
			const struct replay_block *b =
			    &st->blocks[sg->first_block + k];

			json_obj_begin(j);
			json_kv_u64(j, "address", b->addr);
			json_kv_u64(j, "size", b->size);
			json_kv_u64(j, "requested_size", b->requested_size);
			json_kv_str(j, "state", state_str(b->state));
			json_kv_i64(j, "alloc_event", b->alloc_ev);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void
json_state(uint32_t d, const struct replay_state *st)
{
	struct json j;

	cli_json_init(&j);
	json_obj_begin(&j);
	cli_state_json_keys(&j, d, st);
	json_obj_end(&j);
	json_end(&j);
}

int
cmd_state(const struct cli_opts *o)
{
	struct cli_input in;
	struct sv_error err;
	struct replay *r;
	int64_t d, at;
	int rc = cli_open(o, o->file, &in);

	if (rc != 0)
		return rc;
	d = cli_device(o, in.snap);
	if (d < 0) {
		cli_close(&in);
		return CLI_EXIT_USAGE;
	}
	sv_error_clear(&err);
	r = cli_replay(&in, (uint32_t)d, &err);
	if (r == NULL) {
		cli_close(&in);
		return cli_report(o->file, &err);
	}
	/* without --at: the end of the trace */
	at = o->has_at ? o->at : (int64_t)replay_n_events(r) - 1;
	if (replay_seek(r, at, &err) != 0) {
		/* out of range: usage (1); a corrupt checkpoint: bad input */
		rc = cli_report(o->file, &err);
		replay_free(r);
		cli_close(&in);
		return rc;
	}
	if (o->json)
		json_state((uint32_t)d, replay_state(r));
	else
		text_state((uint32_t)d, r, replay_state(r), !o->has_at);
	replay_free(r);
	cli_close(&in);
	return CLI_EXIT_OK;
}
