/*
 * snapview cut FILE -o OUT: a smaller snapshot of one device's window
 * (--from/--to as events or times, --step K, --phase NAME[@K]: one
 * instance of a phase), with the allocator state at its end
 * (analysis/cut.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cut.h"
#include "analysis/phases.h"
#include "analysis/steps.h"
#include "cli/cli.h"
#include "cli/cli_out.h"
#include "replay/replay.h"
#include "util/json.h"
#include "util/units.h"
#include "util/xalloc.h"

/* The phase --phase chose: its name, the instance cut. */
struct cut_phase {
	char *name;		/* owned; NULL: no --phase */
	uint64_t iteration;
	int complete;
};

/* The phase of ph named name (len bytes), or -1. */
static int64_t
phase_named(const struct an_phases *ph, const char *name, size_t len)
{
	uint32_t q;

	for (q = 0; q < ph->n_phases; q++)
		if (strlen(ph->phases[q].name) == len &&
		    memcmp(ph->phases[q].name, name, len) == 0)
			return q;
	return -1;
}

/* Says which phases device d has, after "no phase NAME". */
static void
no_phase(const struct cli_opts *o, const struct an_phases *ph, uint32_t d,
    const char *spec)
{
	uint32_t q;

	fprintf(stderr, "snapview: %s: device %u has no phase '%s'",
	    cli_shown(o->file), d, cli_shown(spec));
	if (ph->n_phases == 0)
		fprintf(stderr, " (it has no phases: see snapview phases)\n");
	for (q = 0; q < ph->n_phases; q++)
		fprintf(stderr, "%s%s%s", q == 0 ? " (its phases: " : ", ",
		    cli_shown(ph->phases[q].name),
		    q + 1 == ph->n_phases ? ")\n" : "");
}

/* The window of --phase NAME[@K]: iteration K (from 0, as snapview
 * phases numbers them) of phase NAME of device d, or its one instance
 * when K is left out. A name that is a phase's whole is taken before
 * NAME@K. Returns 0, or -1 with the reason printed. */
static int
phase_window(const struct cli_opts *o, const struct snapshot *s, uint32_t d,
    int64_t *from, int64_t *to, struct cut_phase *cp)
{
	const char *spec = o->cut_phase, *at = strrchr(spec, '@');
	struct an_phases ph;
	struct sv_error err;
	const struct an_phase *p;
	size_t len = strlen(spec);
	uint64_t k = UINT64_MAX, i;
	int64_t q;
	char *end;

	sv_error_clear(&err);
	if (an_phases_find(s, d, o->phase_rules, NULL, &ph, &err) != 0) {
		cli_report(o->file, &err);
		return -1;
	}
	q = phase_named(&ph, spec, len);
	if (q < 0 && at != NULL && at[1] >= '0' && at[1] <= '9') {
		k = strtoull(at + 1, &end, 10);
		if (*end == '\0')
			q = phase_named(&ph, spec, (size_t)(at - spec));
	}
	if (q < 0) {
		no_phase(o, &ph, d, spec);
		an_phases_destroy(&ph);
		return -1;
	}
	p = &ph.phases[q];
	if (k == UINT64_MAX && p->n_inst > 1) {
		fprintf(stderr, "snapview: %s: phase '%s' has %" PRIu64
		    " instances on device %u: name one, --phase '%s@K' (K "
		    "from 0 to %" PRIu64 ", as snapview phases numbers "
		    "them)\n", cli_shown(o->file), cli_shown(p->name),
		    p->n_inst, d, cli_shown(p->name), p->n_inst - 1);
		an_phases_destroy(&ph);
		return -1;
	}
	if (k == UINT64_MAX)
		k = 0;
	if (k >= p->n_inst) {
		fprintf(stderr, "snapview: %s: phase '%s' has %" PRIu64
		    " instance%s on device %u: K from 0 to %" PRIu64 "\n",
		    cli_shown(o->file), cli_shown(p->name), p->n_inst,
		    p->n_inst == 1 ? "" : "s", d, p->n_inst - 1);
		an_phases_destroy(&ph);
		return -1;
	}
	for (i = 0; i < ph.n_inst; i++)
		if (ph.inst[i].phase == (uint32_t)q &&
		    ph.inst[i].iteration == k) {
			*from = ph.inst[i].first;
			*to = ph.inst[i].last;
			cp->complete = ph.inst[i].complete;
			break;
		}
	cp->name = xstrdup(p->name);
	cp->iteration = k;
	an_phases_destroy(&ph);
	return 0;
}

/* The window [*from, *to] of trace t from the options; -1 with the
 * reason printed. */
static int
window(const struct cli_opts *o, const struct snapshot *s, uint32_t d,
    const struct snap_trace *t, int64_t *from, int64_t *to,
    struct cut_phase *cp)
{
	int64_t n = (int64_t)t->n, t0;

	*from = 0;
	*to = n - 1;
	if (o->cut_phase != NULL) {
		if (o->has_step || o->has_from || o->has_to) {
			fprintf(stderr, "snapview: cut: --phase or --step or "
			    "--from/--to, one of them\n");
			return -1;
		}
		return phase_window(o, s, d, from, to, cp);
	}
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
	struct cut_phase cp;
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
	memset(&cp, 0, sizeof cp);
	if (window(o, in.snap, d, t, &from, &to, &cp) != 0) {
		cli_close(&in);
		return CLI_EXIT_USAGE;
	}
	sv_error_clear(&err);
	if ((r = cli_replay(&in, d, &err)) == NULL) {
		free(cp.name);
		cli_close(&in);
		return cli_report(o->file, &err);
	}
	if ((rc = cli_out_open(o, &out)) != 0) {
		free(cp.name);
		replay_free(r);
		cli_close(&in);
		return rc;
	}
	if (an_cut_write(in.snap, d, r, from, to, out.f, &info, &err) != 0) {
		free(cp.name);
		cli_out_abort(&out);
		replay_free(r);
		cli_close(&in);
		return cli_report(o->output, &err);
	}
	replay_free(r);
	cli_close(&in);
	if ((rc = cli_out_commit(&out)) != 0) {
		free(cp.name);
		return rc;
	}
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
		if (cp.name != NULL) {
			json_kv_str(&j, "phase", cp.name);
			json_kv_u64(&j, "iteration", cp.iteration);
			json_kv_bool(&j, "complete", cp.complete);
		}
		json_kv_u64(&j, "events", info.events);
		json_kv_u64(&j, "segments", info.segments);
		json_kv_u64(&j, "blocks", info.blocks);
		json_kv_u64(&j, "annotations", info.annotations);
		json_kv_u64(&j, "bytes", (uint64_t)st.st_size);
		json_obj_end(&j);
		json_end(&j);
	} else {
		printf("%s: device %u, ", cli_shown(o->output), d);
		if (cp.name != NULL)
			printf("phase %s iteration %" PRIu64 "%s, ",
			    cli_shown(cp.name), cp.iteration, cp.complete ?
			    "" : " (cut by the trace)");
		printf("events %" PRId64 "..%" PRId64 " (%" PRIu64 "), %"
		    PRIu64 " segments and %" PRIu64 " blocks at the end, %"
		    PRIu64 " annotations: %s\n", from, to, info.events,
		    info.segments, info.blocks, info.annotations,
		    sv_fmt_size(sz, sizeof sz, (uint64_t)st.st_size));
	}
	free(cp.name);
	return CLI_EXIT_OK;
}
