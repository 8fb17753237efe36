/*
 * snapview cut FILE -o OUT: a smaller snapshot of one device's window
 * (--from/--to as events or times, --step K), with the allocator state
 * at its end (analysis/cut.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/cut.h"
#include "analysis/steps.h"
#include "cli/cli.h"
#include "cli/cli_out.h"
#include "replay/replay.h"
#include "util/json.h"
#include "util/units.h"

/* The window [*from, *to] of trace t from the options; -1 with the
 * reason printed. */
static int
window(const struct cli_opts *o, const struct snapshot *s, uint32_t d,
    const struct snap_trace *t, int64_t *from, int64_t *to)
{
	int64_t n = (int64_t)t->n, t0;

	*from = 0;
	*to = n - 1;
	if (o->has_step) {
		struct an_steps st;
		struct sv_error err;

		if (o->has_from || o->has_to) {
			fprintf(stderr, "snapview: cut: --step or --from/--to, "
			    "not both\n");
			return -1;
		}
		sv_error_clear(&err);
		if (an_steps_find(s, d, &st, &err) != 0) {
			cli_report(o->file, &err);
			return -1;
		}
		if ((uint64_t)o->step > st.n) {
			fprintf(stderr, "snapview: %s: device %u has %" PRIu64
			    " step%s (%s)\n", cli_shown(o->file), d, st.n,
			    st.n == 1 ? "" : "s",
			    an_steps_source_text(st.source));
			an_steps_destroy(&st);
			return -1;
		}
		*from = st.steps[o->step - 1].first;
		*to = st.steps[o->step - 1].last;
		an_steps_destroy(&st);
		return 0;
	}
	if ((o->from_time || o->to_time) && !snap_trace_has_time(t)) {
		fprintf(stderr, "snapview: %s: no time_us in the trace: give "
		    "--from/--to as events\n", cli_shown(o->file));
		return -1;
	}
	t0 = snap_trace_has_time(t) ? snap_ev_time(t, 0) : 0;
	if (o->has_from)
		*from = o->from_time ? (int64_t)snap_ev_at_time(t, 0, t->n,
		    t0 + o->from) : o->from;
	if (o->has_to)
		*to = o->to_time ? (int64_t)snap_ev_at_time(t, 0, t->n,
		    t0 + o->to + 1) - 1 : o->to;
	if (*from < 0 || *from >= n || *to < 0 || *to >= n || *from > *to) {
		fprintf(stderr, "snapview: %s: no event in the window (device "
		    "%u has events 0..%" PRId64 "%s)\n", cli_shown(o->file), d,
		    n - 1, o->from_time || o->to_time ? "; times count from "
		    "its first event" : "");
		return -1;
	}
	return 0;
}

int
cmd_cut(const struct cli_opts *o)
{
	struct cli_input in;
	struct cli_out out;
	struct an_cut_info info;
	struct sv_error err;
	const struct snap_trace *t;
	struct replay *r;
	struct stat st;
	int64_t dd, from, to;
	uint32_t d;
	char sz[32];
	int rc;

	if (o->output == NULL) {
		fprintf(stderr, "snapview: cut needs -o FILE\nTry 'snapview "
		    "--help'.\n");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_open(o, o->file, &in)) != 0)
		return rc;
	if ((dd = cli_device(o, in.snap)) < 0) {
		cli_close(&in);
		return CLI_EXIT_USAGE;
	}
	d = (uint32_t)dd;
	t = snap_trace_of(in.snap, d);
	if (!(in.snap->features & SNAP_F_DICT) || t == NULL || t->n == 0) {
		fprintf(stderr, "snapview: %s: device %u has no trace to cut\n",
		    cli_shown(o->file), d);
		cli_close(&in);
		return CLI_EXIT_USAGE;
	}
	if (window(o, in.snap, d, t, &from, &to) != 0) {
		cli_close(&in);
		return CLI_EXIT_USAGE;
	}
	sv_error_clear(&err);
	if ((r = cli_replay(&in, d, &err)) == NULL) {
		cli_close(&in);
		return cli_report(o->file, &err);
	}
	if ((rc = cli_out_open(o, &out)) != 0) {
		replay_free(r);
		cli_close(&in);
		return rc;
	}
	if (an_cut_write(in.snap, d, r, from, to, out.f, &info, &err) != 0) {
		cli_out_abort(&out);
		replay_free(r);
		cli_close(&in);
		return cli_report(o->output, &err);
	}
	replay_free(r);
	cli_close(&in);
	if ((rc = cli_out_commit(&out)) != 0)
		return rc;
	if (stat(o->output, &st) != 0)
		st.st_size = 0;
	if (o->json) {
		struct json j;

		json_init(&j, stdout, 1);
		json_obj_begin(&j);
		json_kv_str(&j, "file", o->file);
		json_kv_str(&j, "output", o->output);
		json_kv_u64(&j, "device", d);
		json_kv_i64(&j, "from", from);
		json_kv_i64(&j, "to", to);
		json_kv_u64(&j, "events", info.events);
		json_kv_u64(&j, "segments", info.segments);
		json_kv_u64(&j, "blocks", info.blocks);
		json_kv_u64(&j, "annotations", info.annotations);
		json_kv_u64(&j, "bytes", (uint64_t)st.st_size);
		json_obj_end(&j);
		json_end(&j);
	} else
		printf("%s: device %u, events %" PRId64 "..%" PRId64 " (%"
		    PRIu64 "), %" PRIu64 " segments and %" PRIu64 " blocks at "
		    "the end, %" PRIu64 " annotations: %s\n",
		    cli_shown(o->output), d, from, to, info.events,
		    info.segments, info.blocks, info.annotations,
		    sv_fmt_size(sz, sizeof sz, (uint64_t)st.st_size));
	return CLI_EXIT_OK;
}
