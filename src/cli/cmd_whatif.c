/*
 * snapview whatif: the trace replayed through the simulated caching
 * allocator under other settings (--alloc-conf, one column each), beside
 * the recording, with the agreement of the simulation under the recorded
 * settings; and the verdicts snapview oom and frag print (cli_whatif.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/top.h"
#include "analysis/whatif.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "cli/cli_whatif.h"
#include "replay/replay.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/units.h"

/* The settings of --alloc-conf (checked when parsed). */
static uint32_t
confs_of(const struct cli_opts *o, struct sim_conf *confs,
    const char **names)
{
	char why[200];
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < o->n_alloc_conf && n < AN_WHATIF_MAX_COLS; i++) {
		if (simconf_parse(o->alloc_conf[i], &confs[n], why,
		    sizeof why) != 0)
			continue;
		names[n++] = o->alloc_conf[i][0] != '\0' ? o->alloc_conf[i] :
		    "defaults";
	}
	return n;
}

static const char *
capacity_text(const struct an_whatif *w, char *buf, size_t size)
{
	char a[32], b[32];

	switch (w->capacity_source) {
	case AN_WI_CAP_GIVEN:
		snprintf(buf, size, "%s (--capacity)",
		    sv_fmt_size(a, sizeof a, w->capacity));
		break;
	case AN_WI_CAP_OOM:
		if (w->capacity_full)
			snprintf(buf, size, "%s, reserved + free at the OOM at "
			    "event #%" PRId64 " (the device was full)",
			    sv_fmt_size(a, sizeof a, w->capacity),
			    w->capacity_oom_ev);
		else
			snprintf(buf, size, "%s, the most reserved before the "
			    "OOM at event #%" PRId64 " (a cap refused it: the "
			    "device had less than %s)",
			    sv_fmt_size(a, sizeof a, w->capacity),
			    w->capacity_oom_ev,
			    sv_fmt_size(b, sizeof b, w->capacity_hi));
		break;
	default:
		snprintf(buf, size, "none given: the device is taken as "
		    "unbounded (--capacity BYTES)");
		break;
	}
	return buf;
}

static void
text_agreement(const struct an_whatif *w)
{
	const struct an_whatif_agree *g = &w->agree;
	char line[400], buf[400];
	unsigned bit;

	an_whatif_agree_line(w, line, sizeof line);
	printf("Agreement: under the recorded settings the simulation %s\n",
	    line);
	if (g->first_diff >= 0) {
		printf("  first difference at event #%" PRId64 ": ",
		    g->first_diff);
		sv_escape_fputs(stdout, g->diff);
		printf(" (%" PRIu64 " segment action%s agreed before it)\n",
		    g->ok_before, g->ok_before == 1 ? "" : "s");
	}
	if (g->first_misplaced >= 0)
		printf("  first allocation placed elsewhere: event #%" PRId64
		    " (recorded %#" PRIx64 ", simulated %#" PRIx64 ")\n",
		    g->first_misplaced, g->misplaced_rec, g->misplaced_sim);
	for (bit = 1; bit != 0 && bit <= AN_WI_PRIVATE; bit <<= 1)
		if (an_whatif_reason_text(w, bit, buf, sizeof buf) != NULL)
			printf("  %s %s\n", g->exact ? "note:" : "why: ",
			    buf);
}

/* One row of the columns' table: the uint64_t at off in each column,
 * written by fmt (sv_fmt_size or sv_fmt_count). */
static void
row(const struct an_whatif *w, const char *label, size_t width, size_t off,
    char *(*fmt)(char *, size_t, uint64_t))
{
	char a[32];
	uint32_t k;

	printf("  %-22s", label);
	for (k = 0; k < w->n_cols; k++) {
		const uint64_t *v = (const uint64_t *)(const void *)
		    ((const char *)&w->cols[k] + off);

		printf("  %*s", (int)width, fmt(a, sizeof a, *v));
	}
	printf("\n");
}

static void
row_size(const struct an_whatif *w, const char *label, size_t width,
    size_t off)
{
	row(w, label, width, off, sv_fmt_size);
}

static void
row_count(const struct an_whatif *w, const char *label, size_t width,
    size_t off)
{
	row(w, label, width, off, sv_fmt_count);
}

static void
text_columns(const struct an_whatif *w)
{
	size_t width = 10, l;
	char a[48], b[32];
	uint32_t k;

	for (k = 0; k < w->n_cols; k++)
		if ((l = strlen(w->cols[k].name)) > width)
			width = l > 40 ? 40 : l;
	printf("\n  %-22s", "");
	for (k = 0; k < w->n_cols; k++)
		printf("  %*.*s", (int)width, (int)width,
		    cli_shown(w->cols[k].name));
	printf("\n");
	row_size(w, "peak reserved", width,
	    offsetof(struct an_whatif_col, peak_reserved));
	printf("  %-22s", "  at event");
	for (k = 0; k < w->n_cols; k++) {
		if (w->cols[k].peak_ev < 0)
			snprintf(a, sizeof a, "start");
		else
			snprintf(a, sizeof a, "#%s", sv_fmt_count(b, sizeof b,
			    (uint64_t)w->cols[k].peak_ev));
		printf("  %*s", (int)width, a);
	}
	printf("\n");
	row_count(w, "segments at the peak", width,
	    offsetof(struct an_whatif_col, peak_segments));
	row_size(w, "internal waste at peak", width,
	    offsetof(struct an_whatif_col, peak_internal));
	row_size(w, "external waste at peak", width,
	    offsetof(struct an_whatif_col, peak_external));
	row_count(w, "cudaMalloc/map calls", width,
	    offsetof(struct an_whatif_col, device_allocs));
	row_count(w, "cudaFree/unmap calls", width,
	    offsetof(struct an_whatif_col, device_frees));
	row_count(w, "segments at the end", width,
	    offsetof(struct an_whatif_col, end_segments));
	row_size(w, "reserved at the end", width,
	    offsetof(struct an_whatif_col, end_reserved));
	printf("  %-22s", "OOM");
	for (k = 0; k < w->n_cols; k++) {
		if (w->cols[k].first_oom < 0)
			snprintf(a, sizeof a, "none");
		else
			snprintf(a, sizeof a, "#%s", sv_fmt_count(b, sizeof b,
			    (uint64_t)w->cols[k].first_oom));
		printf("  %*s", (int)width, a);
	}
	printf("\n");
	for (k = 1; k < w->n_cols; k++) {
		const struct an_whatif_col *c = &w->cols[k];

		if (c->n_oom > 0)
			printf("  %s: out of memory at event #%" PRId64
			    " (a request of %s), %" PRIu64 " time%s in all\n",
			    cli_shown(c->name), c->first_oom,
			    sv_fmt_size(a, sizeof a, c->first_oom_request),
			    c->n_oom, c->n_oom == 1 ? "" : "s");
		if (c->pre_oom > 0)
			printf("  %s: %" PRIu64 " block%s live before the "
			    "trace did not fit\n", cli_shown(c->name),
			    c->pre_oom, c->pre_oom == 1 ? "" : "s");
	}
}

static void
text_steps(const struct an_whatif *w, uint64_t limit)
{
	char a[32], b[32], r[48];
	uint64_t s;
	uint32_t k;

	if (w->steps.n == 0)
		return;
	printf("\nPer step (most reserved; allocated = requested bytes "
	    "live, the most):\n");
	printf("  %-6s %-21s %10s", "step", "events", "allocated");
	for (k = 0; k < w->n_cols; k++)
		printf("  %10.10s", cli_shown(w->cols[k].name));
	printf("\n");
	for (s = 0; s < w->steps.n && s < limit; s++) {
		snprintf(r, sizeof r, "#%s..#%s",
		    sv_fmt_count(a, sizeof a, (uint64_t)w->step[s].first),
		    sv_fmt_count(b, sizeof b, (uint64_t)w->step[s].last));
		printf("  %-6" PRIu64 " %-21s %10s", s + 1, r,
		    sv_fmt_size(a, sizeof a, w->step[s].allocated_peak));
		for (k = 0; k < w->n_cols; k++)
			printf("  %10s", sv_fmt_size(a, sizeof a,
			    w->cols[k].step_peak[s]));
		printf("\n");
	}
	if (w->steps.n > limit)
		printf("  (%" PRIu64 " more; --limit N)\n", w->steps.n - limit);
}

static void
json_agreement(struct json *j, const struct an_whatif *w)
{
	const struct an_whatif_agree *g = &w->agree;
	char buf[400];
	unsigned bit;

	json_key(j, "agreement");
	json_obj_begin(j);
	an_whatif_agree_line(w, buf, sizeof buf);
	json_kv_str(j, "text", buf);
	json_kv_u64(j, "segment_allocs", g->seg_allocs);
	json_kv_u64(j, "segment_allocs_reproduced", g->seg_allocs_ok);
	json_kv_u64(j, "segment_frees", g->seg_frees);
	json_kv_u64(j, "segment_frees_reproduced", g->seg_frees_ok);
	json_kv_u64(j, "simulated_only", g->sim_extra);
	json_kv_u64(j, "allocations", g->allocs);
	json_kv_u64(j, "allocations_at_recorded_address", g->allocs_at_addr);
	json_kv_i64(j, "first_misplaced_event", g->first_misplaced);
	json_kv_bool(j, "exact", g->exact);
	json_kv_i64(j, "first_difference_event", g->first_diff);
	json_key(j, "first_difference");
	if (g->first_diff >= 0)
		json_str(j, g->diff);
	else
		json_null(j);
	json_key(j, "reasons");
	json_arr_begin(j);
	for (bit = 1; bit != 0 && bit <= AN_WI_PRIVATE; bit <<= 1)
		if (an_whatif_reason_text(w, bit, buf, sizeof buf) != NULL) {
			json_obj_begin(j);
			json_kv_str(j, "reason", an_whatif_reason_name(bit));
			json_kv_str(j, "text", buf);
			json_obj_end(j);
		}
	json_arr_end(j);
	json_obj_end(j);
}

static void
json_column(struct json *j, const struct an_whatif *w,
    const struct an_whatif_col *c)
{
	char buf[200];
	uint64_t s;

	json_obj_begin(j);
	json_kv_str(j, "name", c->name);
	simconf_format(&c->conf, buf, sizeof buf);
	json_kv_str(j, "settings", buf);
	json_kv_bool(j, "recorded", c->recorded);
	json_kv_bool(j, "start_as_recorded", c->recorded || c->exact_start);
	json_kv_u64(j, "peak_reserved", c->peak_reserved);
	json_kv_i64(j, "peak_event", c->peak_ev);
	json_kv_u64(j, "segments_at_peak", c->peak_segments);
	json_kv_u64(j, "internal_waste_at_peak", c->peak_internal);
	json_kv_u64(j, "external_waste_at_peak", c->peak_external);
	json_kv_u64(j, "device_allocs", c->device_allocs);
	json_kv_u64(j, "device_frees", c->device_frees);
	json_kv_u64(j, "segments_at_end", c->end_segments);
	json_kv_u64(j, "reserved_at_end", c->end_reserved);
	json_key(j, "oom");
	if (c->n_oom == 0)
		json_null(j);
	else {
		json_obj_begin(j);
		json_kv_i64(j, "event", c->first_oom);
		json_kv_u64(j, "request", c->first_oom_request);
		json_kv_u64(j, "count", c->n_oom);
		json_obj_end(j);
	}
	json_kv_u64(j, "start_blocks_not_fitting", c->pre_oom);
	json_key(j, "step_peak_reserved");
	json_arr_begin(j);
	for (s = 0; s < w->steps.n; s++)
		json_u64(j, c->step_peak[s]);
	json_arr_end(j);
	json_obj_end(j);
}

static void
json_report(struct json *j, const struct an_whatif *w)
{
	char buf[300];
	uint64_t s;
	uint32_t k;

	json_obj_begin(j);
	json_kv_u64(j, "device", w->device);
	json_kv_u64(j, "events", w->n_events);
	simconf_format(&w->recorded, buf, sizeof buf);
	json_kv_str(j, "recorded_settings", buf);
	json_kv_str(j, "recorded_settings_source", w->settings_from_file ?
	    "allocator_settings" : w->expandable_inferred ?
	    "segment_map events" : "defaults");
	json_key(j, "capacity");
	if (w->capacity_source == AN_WI_CAP_NONE)
		json_null(j);
	else
		json_u64(j, w->capacity);
	json_kv_str(j, "capacity_source",
	    w->capacity_source == AN_WI_CAP_GIVEN ? "given" :
	    w->capacity_source == AN_WI_CAP_OOM ? "recorded_oom" : "none");
	json_agreement(j, w);
	json_key(j, "columns");
	json_arr_begin(j);
	for (k = 0; k < w->n_cols; k++)
		json_column(j, w, &w->cols[k]);
	json_arr_end(j);
	json_key(j, "steps");
	json_arr_begin(j);
	for (s = 0; s < w->steps.n; s++) {
		json_obj_begin(j);
		json_kv_u64(j, "step", s + 1);
		json_kv_i64(j, "first_event", w->step[s].first);
		json_kv_i64(j, "last_event", w->step[s].last);
		json_kv_u64(j, "allocated_peak", w->step[s].allocated_peak);
		json_kv_i64(j, "allocated_peak_event",
		    w->step[s].allocated_peak_ev);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

struct whatif_run {
	struct cli_an_run r;
	struct sim_conf confs[AN_WHATIF_MAX_COLS];
	const char *names[AN_WHATIF_MAX_COLS];
	uint32_t n_confs;
	uint64_t done;
};

/* --at N: the simulated state after event N under the one setting, as
 * snapview state prints the recorded one. */
static int
whatif_at(struct whatif_run *run, const struct cli_an_dev *dev,
    struct sv_error *err)
{
	struct an_whatif_walk *k;
	const struct replay_state *st;
	const struct an_whatif_col *col;
	struct json *j = &run->r.j;
	char head[400], when[64], cap[300];

	k = an_whatif_walk_new(run->r.snap, dev->device, dev->replay,
	    &run->confs[0], run->r.o->capacity, err);
	if (k == NULL)
		return -1;
	if (an_whatif_walk_seek(k, run->r.o->at, err) != 0) {
		an_whatif_walk_free(k);
		return -1;
	}
	st = an_whatif_walk_state(k);
	col = an_whatif_walk_col(k);
	if (run->r.o->json) {
		json_obj_begin(j);
		json_kv_str(j, "alloc_conf", col->name);
		json_kv_bool(j, "simulated", 1);
		json_kv_u64(j, "capacity", an_whatif_walk_info(k)->capacity);
		cli_state_json_keys(j, dev->device, st);
		json_obj_end(j);
	} else {
		if (st->at < 0)
			snprintf(when, sizeof when, "before the first event");
		else
			snprintf(when, sizeof when, "after event %" PRId64,
			    st->at);
		snprintf(head, sizeof head, "%sDevice %u: simulated state "
		    "under %s, %s\nCapacity: %s", run->done ? "\n" : "",
		    dev->device, col->name, when,
		    capacity_text(an_whatif_walk_info(k), cap, sizeof cap));
		cli_state_text(head, st);
	}
	run->done++;
	an_whatif_walk_free(k);
	return 0;
}

static int
whatif_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct whatif_run *run = ctx;
	struct an_whatif_opts wo;
	struct an_whatif w;
	char buf[300], set[200];

	if (run->r.o->has_at)
		return whatif_at(run, dev, err);
	memset(&wo, 0, sizeof wo);
	wo.confs = run->confs;
	wo.names = run->names;
	wo.n_confs = run->n_confs;
	wo.capacity = run->r.o->capacity;
	if (an_whatif(run->r.snap, dev->device, dev->replay, &wo, &w,
	    err) != 0)
		return -1;
	if (run->r.o->json)
		json_report(&run->r.j, &w);
	else {
		simconf_format(&w.recorded, set, sizeof set);
		printf("%sDevice %u: %s events\n", run->done ? "\n" : "",
		    dev->device, sv_fmt_count(buf, sizeof buf, w.n_events));
		printf("Recorded settings: %s (%s)\n", set[0] ? set :
		    "defaults", w.settings_from_file ? "allocator_settings" :
		    w.expandable_inferred ? "expandable: the trace maps "
		    "pages" : "the file records none");
		printf("Capacity: %s\n", capacity_text(&w, buf, sizeof buf));
		text_agreement(&w);
		text_columns(&w);
		text_steps(&w, run->r.limit);
	}
	run->done++;
	an_whatif_destroy(&w);
	return 0;
}

int
cmd_whatif(const struct cli_opts *o)
{
	struct whatif_run run;

	memset(&run, 0, sizeof run);
	run.n_confs = confs_of(o, run.confs, run.names);
	if (o->has_at && run.n_confs != 1) {
		fprintf(stderr, "snapview: whatif --at N: give one "
		    "--alloc-conf (the settings whose state to list)\n");
		return CLI_EXIT_USAGE;
	}
	return cli_an_run(o, o, CLI_AN_REPLAY, &run.r, whatif_device, &run);
}

/* ---- the verdicts of oom and frag ---------------------------------------- */

static const char *
verdict_name(int kind)
{
	switch (kind) {
	case AN_WI_V_NEVER: return "never_fits";
	case AN_WI_V_EXPANDABLE: return "expandable_segments";
	case AN_WI_V_UNDECIDED: return "undecided";
	default: return "contiguous";
	}
}

void
cli_whatif_oom_text(const struct an_whatif_oom_verdict *v, uint64_t n,
    int64_t ev)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		if (v[i].ev == ev) {
			printf("  verdict:       ");
			sv_escape_fputs(stdout, v[i].text);
			printf("\n");
		}
}

void
cli_whatif_oom_json(struct json *j, const struct an_whatif_oom_verdict *v,
    uint64_t n)
{
	uint64_t i;

	json_key(j, "verdicts");
	json_arr_begin(j);
	for (i = 0; i < n; i++) {
		json_obj_begin(j);
		json_kv_i64(j, "event", v[i].ev);
		json_kv_str(j, "verdict", verdict_name(v[i].kind));
		json_kv_str(j, "text", v[i].text);
		json_kv_u64(j, "live", v[i].live);
		json_kv_u64(j, "request", v[i].request);
		json_kv_u64(j, "capacity", v[i].capacity);
		json_kv_u64(j, "held", v[i].held);
		json_kv_u64(j, "expandable_peak_reserved", v[i].sim_peak);
		json_kv_i64(j, "expandable_first_oom_event", v[i].sim_oom);
		json_obj_end(j);
	}
	json_arr_end(j);
}

int
cli_whatif_frag(const struct snapshot *s, uint32_t d, struct replay *r,
    const struct idx_timeline *tl, struct an_sites *sites,
    const struct an_frag *f, struct json *j, struct sv_error *err)
{
	struct an_whatif_frag w;
	uint64_t i, hi = 0, mb;
	char a[32], b[32], c[32], e[32], g[32];
	int k;

	for (i = 0; i < f->n_allocs; i++)
		if (f->allocs[i].req_ev >= 0 && f->allocs[i].request > hi)
			hi = f->allocs[i].request;
	mb = hi >> 20 < 20 ? 20 : hi >> 20;
	if (an_whatif_frag(s, d, r, tl, sites, mb, &w, err) != 0)
		return -1;
	if (j != NULL) {
		json_key(j, "whatif");
		json_obj_begin(j);
		json_kv_u64(j, "recorded_peak_reserved", w.rec_peak);
		json_kv_u64(j, "recorded_waste_at_peak", w.rec_waste);
		json_kv_bool(j, "agreement_exact", w.agree_exact);
		json_key(j, "settings");
		json_arr_begin(j);
		for (k = 0; k < w.n_set; k++) {
			json_obj_begin(j);
			json_kv_str(j, "settings", w.set[k].name);
			json_kv_u64(j, "peak_reserved", w.set[k].peak_reserved);
			json_kv_u64(j, "waste_at_peak", w.set[k].waste);
			json_kv_u64(j, "waste_removed",
			    w.rec_waste > w.set[k].waste ?
			    w.rec_waste - w.set[k].waste : 0);
			json_kv_i64(j, "first_oom_event", w.set[k].first_oom);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_key(j, "step");
		if (w.step >= 0)
			json_i64(j, w.step + 1);
		else
			json_null(j);
		json_kv_u64(j, "allocated_peak", w.alloc_peak);
		json_kv_i64(j, "allocated_peak_event", w.alloc_peak_ev);
		json_kv_u64(j, "short_lived_bytes", w.short_bytes);
		json_key(j, "short_lived_sites");
		json_arr_begin(j);
		for (k = 0; k < w.n_sites; k++) {
			json_obj_begin(j);
			cli_an_site_json(j, sites, w.sites[k], UINT32_MAX);
			json_kv_u64(j, "bytes", w.site_bytes[k]);
			json_kv_u64(j, "count", w.site_count[k]);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_kv_str(j, "text", w.text);
		json_obj_end(j);
		return 0;
	}
	printf("\nWhat if (simulated, snapview whatif; the simulation %s "
	    "the recording):\n", w.agree_exact ? "reproduces" :
	    "does not exactly reproduce");
	for (k = 0; k < w.n_set; k++)
		printf("  %-26s peak reserved %s -> %s; waste at the peak %s "
		    "-> %s (%s removed)%s\n", w.set[k].name,
		    sv_fmt_size(a, sizeof a, w.rec_peak),
		    sv_fmt_size(b, sizeof b, w.set[k].peak_reserved),
		    sv_fmt_size(c, sizeof c, w.rec_waste),
		    sv_fmt_size(e, sizeof e, w.set[k].waste),
		    sv_fmt_size(g, sizeof g, w.rec_waste > w.set[k].waste ?
		    w.rec_waste - w.set[k].waste : 0),
		    w.set[k].first_oom >= 0 ? ", runs out of memory" : "");
	printf("  ");
	sv_escape_fputs(stdout, w.text);
	printf("\n");
	return 0;
}
