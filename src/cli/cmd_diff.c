/*
 * snapview diff A B: two snapshots compared by call site (live at the
 * point compared, B - A, allocations), overall peaks and the allocator
 * settings that differ. Each file's device is --device, else its default
 * device. Each file is taken at its peak, which answers "why does B peak
 * higher?"; --at N (N,M: N in A, M in B) compares what was live after
 * those events instead; --step K each file at its highest point in step
 * K: the question the viewer's comparison answers at its cursor. Sites
 * come largest change first.
 */
#include "config.h"

#include <inttypes.h>

#include "analysis/diff.h"
#include "analysis/stats.h"
#include "analysis/steps.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "index/idx_timeline.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/units.h"

static char *
ev_text(char *buf, size_t size, int64_t ev)
{
	if (ev < 0)
		snprintf(buf, size, "start");
	else
		snprintf(buf, size, "#%" PRId64, ev);
	return buf;
}

/* Where the files are compared, in words, for the header. */
static void
print_point(const struct cli_opts *o, const struct an_diff *df)
{
	char ea[32], eb[32], a[32], b[32];

	ev_text(ea, sizeof ea, df->at[0]);
	ev_text(eb, sizeof eb, df->at[1]);
	sv_fmt_size(a, sizeof a, df->live_at[0]);
	sv_fmt_size(b, sizeof b, df->live_at[1]);
	if (o->has_step)
		printf("At each file's highest point in step %" PRId64 ": "
		       "A %s %s, B %s %s\n", o->step, ea, a, eb, b);
	else if (o->has_at)
		printf("After events: A %s %s, B %s %s\n", ea, a, eb, b);
	else
		printf("At the peaks: A %s %s, B %s %s\n", ea, a, eb, b);
}

static void
print_text(const struct cli_opts *o, const struct an_diff *df,
    uint64_t limit)
{
	char a[32], b[32], c[32];
	uint64_t i;
	uint32_t k;

	printf("A: ");
	sv_escape_fputs(stdout, o->file);
	printf("\nB: ");
	sv_escape_fputs(stdout, o->file2);
	printf("\n");
	print_point(o, df);
	printf("\n  %-14s %12s %12s %12s\n", "", "A", "B", "B - A");
	printf("  %-14s %12" PRIu64 " %12" PRIu64 "\n", "events",
	    df->events[0], df->events[1]);
	sv_fmt_size_delta(c, sizeof c, df->peak[0], df->peak[1]);
	printf("  %-14s %12s %12s %12s\n", "peak", sv_fmt_size(a, sizeof a,
	    df->peak[0]), sv_fmt_size(b, sizeof b, df->peak[1]), c);
	printf("  %-14s %12s %12s\n", "compared at",
	    ev_text(a, sizeof a, df->at[0]), ev_text(b, sizeof b, df->at[1]));
	sv_fmt_size_delta(c, sizeof c, df->live_at[0], df->live_at[1]);
	printf("  %-14s %12s %12s %12s\n", "live there",
	    sv_fmt_size(a, sizeof a, df->live_at[0]),
	    sv_fmt_size(b, sizeof b, df->live_at[1]), c);
	sv_fmt_size_delta(c, sizeof c, df->reserved_at[0], df->reserved_at[1]);
	printf("  %-14s %12s %12s %12s\n", "reserved there",
	    sv_fmt_size(a, sizeof a, df->reserved_at[0]),
	    sv_fmt_size(b, sizeof b, df->reserved_at[1]), c);
	sv_fmt_size_delta(c, sizeof c, df->live_end[0], df->live_end[1]);
	printf("  %-14s %12s %12s %12s\n", "live at end",
	    sv_fmt_size(a, sizeof a, df->live_end[0]),
	    sv_fmt_size(b, sizeof b, df->live_end[1]), c);
	sv_fmt_size_delta(c, sizeof c, df->reserved_end[0],
	    df->reserved_end[1]);
	printf("  %-14s %12s %12s %12s\n", "reserved end",
	    sv_fmt_size(a, sizeof a, df->reserved_end[0]),
	    sv_fmt_size(b, sizeof b, df->reserved_end[1]), c);
	if (df->n_settings > 0) {
		printf("\nSettings that differ:\n");
		for (k = 0; k < df->n_settings; k++) {
			printf("  ");
			sv_escape_fputs(stdout, df->settings[k].key);
			printf(": A ");
			sv_escape_fputs(stdout, df->settings[k].a
				? df->settings[k].a : "(absent)");
			printf(", B ");
			sv_escape_fputs(stdout, df->settings[k].b
				? df->settings[k].b : "(absent)");
			printf("\n");
		}
	}
	printf("\nBy call site, live %s (largest change first):\n",
	    o->has_step ? "at those points" : o->has_at ? "after those events"
	    : "at the peaks");
	printf("  %11s %11s %11s %8s %8s  %s\n", "live A", "live B",
	    "B - A", "allocs A", "allocs B", "site");
	for (i = 0; i < df->n_rows && i < limit; i++) {
		const struct an_diff_row *r = &df->rows[i];

		sv_fmt_size_delta(c, sizeof c, r->a.live, r->b.live);
		printf("  %11s %11s %11s %8" PRIu64 " %8" PRIu64 "  ",
		    sv_fmt_size(a, sizeof a, r->a.live),
		    sv_fmt_size(b, sizeof b, r->b.live), c, r->a.allocs,
		    r->b.allocs);
		sv_escape_fputs(stdout, r->label);
		printf("\n");
	}
	if (df->n_rows > limit)
		printf("  ... %" PRIu64 " more sites (--limit 0 for all)\n",
		    df->n_rows - limit);
}

static void
json_side(struct json *j, const char *key, const struct an_diff_side *s)
{
	json_key(j, key);
	json_obj_begin(j);
	json_kv_u64(j, "live_bytes", s->live);
	json_kv_u64(j, "live_count", s->live_n);
	json_kv_u64(j, "peak_bytes", s->peak);
	json_kv_u64(j, "allocs", s->allocs);
	json_obj_end(j);
}

static void
json_diff(struct json *j, const struct cli_opts *o, uint32_t da, uint32_t db,
    const struct an_diff *df, uint64_t limit)
{
	uint64_t i;
	uint32_t k;
	int x;

	json_obj_begin(j);
	for (x = 0; x < 2; x++) {
		json_key(j, x ? "b" : "a");
		json_obj_begin(j);
		json_kv_str(j, "file", x ? o->file2 : o->file);
		json_kv_u64(j, "device", x ? db : da);
		json_kv_u64(j, "events", df->events[x]);
		json_kv_u64(j, "peak", df->peak[x]);
		json_kv_i64(j, "peak_event", df->peak_ev[x]);
		json_kv_u64(j, "live_end", df->live_end[x]);
		json_kv_u64(j, "reserved_end", df->reserved_end[x]);
		json_kv_i64(j, "at_event", df->at[x]);
		json_kv_u64(j, "live_at", df->live_at[x]);
		json_kv_u64(j, "reserved_at", df->reserved_at[x]);
		json_obj_end(j);
	}
	json_kv_str(j, "compared_at", o->has_step ? "step" : o->has_at ?
	    "events" : "peaks");
	json_key(j, "step");
	if (o->has_step)
		json_i64(j, o->step);
	else
		json_null(j);
	json_key(j, "settings");
	json_arr_begin(j);
	for (k = 0; k < df->n_settings; k++) {
		json_obj_begin(j);
		json_kv_str(j, "key", df->settings[k].key);
		json_key(j, "a");
		if (df->settings[k].a)
			json_str(j, df->settings[k].a);
		else
			json_null(j);
		json_key(j, "b");
		if (df->settings[k].b)
			json_str(j, df->settings[k].b);
		else
			json_null(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_u64(j, "n_sites", df->n_rows);
	json_key(j, "sites");
	json_arr_begin(j);
	for (i = 0; i < df->n_rows && i < limit; i++) {
		json_obj_begin(j);
		json_kv_str(j, "site", df->rows[i].label);
		json_side(j, "a", &df->rows[i].a);
		json_side(j, "b", &df->rows[i].b);
		json_key(j, "live_delta");
		json_u64_delta(j, df->rows[i].a.live, df->rows[i].b.live);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	json_end(j);
}

/* Sets in->at from --at or --step for side x. Returns 0, or the exit
 * status with the reason printed. */
static int
diff_point(const struct cli_opts *o, int x, const struct snapshot *s,
    struct an_diff_input *in)
{
	const char *file = x ? o->file2 : o->file;
	const struct idx_timeline *tl = in->tl;
	struct an_steps st;
	struct sv_error err;
	int64_t at;

	if (o->has_step) {
		sv_error_clear(&err);
		if (an_steps_find(s, tl->device, &st, &err) != 0)
			return cli_report(file, &err);
		at = an_diff_step_at(tl, &st, (uint64_t)o->step - 1);
		if (at == -2) {
			cli_error(file, SV_NO_OFFSET, "--step %" PRId64 ": "
			    "device %u has %" PRIu64 " step%s (%s)",
			    o->step, tl->device, st.n,
			    st.n == 1 ? "" : "s",
			    an_steps_source_text(st.source));
			an_steps_destroy(&st);
			return CLI_EXIT_USAGE;
		}
		an_steps_destroy(&st);
	} else if (o->has_at) {
		at = x && o->has_at_b ? o->at_b : o->at;
		if (at < -1 || (at >= 0 && (uint64_t)at >= tl->n_events)) {
			cli_error(file, SV_NO_OFFSET, "--at %" PRId64 ": "
			    "device %u has events #0..#%" PRId64 " (or "
			    "start)", at, tl->device,
			    (int64_t)tl->n_events - 1);
			return CLI_EXIT_USAGE;
		}
	} else {
		/* each file at its peak */
		at = an_peak_ev(tl);
	}
	in->has_at = 1;
	in->at = at;
	return 0;
}

int
cmd_diff(const struct cli_opts *o)
{
	struct cli_input in[2];
	struct an_sites sites[2];
	struct idx_timeline tl[2];
	struct an_diff_input din[2];
	struct an_diff df;
	struct json j;
	struct sv_error err;
	int64_t dev[2];
	uint64_t limit = cli_limit(o, 20);
	int r, x, built = 0;

	if (o->file2 == NULL) {
		cli_error(NULL, SV_NO_OFFSET, "diff needs two files");
		fprintf(stderr, "Try 'snapview --help'.\n");
		return CLI_EXIT_USAGE;
	}
	if (o->has_step && o->has_at) {
		cli_error(NULL, SV_NO_OFFSET, "--at and --step: one or the "
		    "other");
		fprintf(stderr, "Try 'snapview --help'.\n");
		return CLI_EXIT_USAGE;
	}
	if ((r = cli_open(o, o->file, &in[0])) != 0)
		return r;
	if ((r = cli_open(o, o->file2, &in[1])) != 0) {
		cli_close(&in[0]);
		return r;
	}
	for (x = 0; x < 2 && r == 0; x++) {
		dev[x] = cli_device(o, in[x].snap);
		if (dev[x] < 0) {
			r = CLI_EXIT_USAGE;
			break;
		}
		if ((r = cli_an_sites(o, in[x].snap, &sites[x], 1)) != 0)
			break;
		if ((din[x].tl = cli_an_timeline(&in[x], (uint32_t)dev[x],
			 &tl[x], &err)) == NULL) {
			r = cli_report(x ? o->file2 : o->file, &err);
			an_sites_destroy(&sites[x]);
			break;
		}
		din[x].s = in[x].snap;
		din[x].sites = &sites[x];
		din[x].has_at = 0;
		built++;
		if ((r = diff_point(o, x, in[x].snap, &din[x])) != 0)
			break;
	}
	if (r == 0) {
		an_diff(&din[0], &din[1], &df);
		if (o->json) {
			cli_json_init(&j);
			json_diff(&j, o, (uint32_t)dev[0], (uint32_t)dev[1],
			    &df, limit);
		} else {
			print_text(o, &df, limit);
		}
		an_diff_destroy(&df);
	}
	for (x = 0; x < built; x++) {
		idx_timeline_destroy(&tl[x]);
		an_sites_destroy(&sites[x]);
	}
	cli_close(&in[0]);
	cli_close(&in[1]);
	return r;
}
