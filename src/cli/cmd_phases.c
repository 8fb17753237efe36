/*
 * snapview phases: the phase instances of each device (record_function
 * ranges, or the --phase rules), each one's peak and where it falls,
 * what it found alive and freed, what it leaves behind by call site and
 * the reserved bytes at its end; and, per phase, what it leaves behind
 * that grows from iteration to iteration.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "analysis/phases.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "index/idx_timeline.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/units.h"

#define TEXT_SITES 3	/* sites left behind shown per instance */

static void
print_header(const struct an_phases *ph, const struct an_steps *st)
{
	char a[32], b[32], s[160];

	printf("Device %u: %s phase%s, %s instance%s (%s); %s\n", ph->device,
	    sv_fmt_count(a, sizeof a, ph->n_phases),
	    ph->n_phases == 1 ? "" : "s",
	    sv_fmt_count(b, sizeof b, ph->n_inst), ph->n_inst == 1 ? "" : "s",
	    ph->from_rules ? "from the --phase rules" : ph->n_annotate > 0 ?
	    "record_function ranges, annotate events" :
	    "record_function ranges", cli_an_steps_text(st, s, sizeof s));
	if (ph->n_phases > 0)
		return;
	if (ph->no_time)
		printf("  The annotations have no time_us: no range can be "
		    "placed among the events.\n");
	else if (!ph->from_rules)
		printf("  No annotation range: name phases with --phase "
		    "NAME=REGEX.\n");
	else
		printf("  No rule matched an annotation or a user frame.\n");
}

/* The phases whose leftovers grow, the innermost phase of each site. */
static void
print_growing(struct an_sites *t, const struct an_phases *ph)
{
	char a[32], b[32], c[32];
	uint64_t i, n = 0;
	uint32_t q;

	for (q = 0; q < ph->n_phases; q++)
		for (i = 0; i < ph->phases[q].n_grow; i++) {
			const struct an_phase_grow *g = &ph->phases[q].grow[i];

			if (!g->innermost)
				continue;
			if (n++ == 0)
				printf("  Growing from iteration to iteration:"
				    "\n");
			printf("  %12s per iteration in %s: ",
			    sv_fmt_size(a, sizeof a, g->per_iter),
			    cli_shown(ph->phases[q].name));
			cli_an_site_text(stdout, t, g->site);
			printf(" (left in %s of %s iterations, %s alive)\n",
			    sv_fmt_count(b, sizeof b, g->hits),
			    sv_fmt_count(c, sizeof c, ph->phases[q].n_complete),
			    sv_fmt_size(a, sizeof a, g->bytes));
		}
	if (n == 0 && ph->n_phases > 0)
		printf("  Nothing a phase leaves behind grows from iteration "
		    "to iteration.\n");
}

static void
print_inst(struct an_sites *t, const struct an_phase_inst *p)
{
	char ev[48], a[32], b[32], c[32], d[32], e[32], f[32], g[32];
	uint64_t k;

	snprintf(ev, sizeof ev, "#%" PRId64 "..#%" PRId64 "%s", p->first,
	    p->last, p->complete ? "" : "*");
	snprintf(g, sizeof g, "#%" PRId64, p->peak_ev);
	printf("  %5" PRIu64 "  %-17s %10s %-8s %10s %10s %10s %10s %10s\n",
	    p->iteration, ev, sv_fmt_size(a, sizeof a, p->peak), g,
	    sv_fmt_size(b, sizeof b, p->before_bytes),
	    sv_fmt_size(c, sizeof c, p->freed_before_bytes),
	    sv_fmt_size(d, sizeof d, p->left_bytes),
	    sv_fmt_size(e, sizeof e, p->total_end),
	    sv_fmt_size(f, sizeof f, p->reserved_end));
	if (p->peak_site != UINT32_MAX) {
		printf("  %7s peak at ", "");
		cli_an_site_text(stdout, t, p->peak_site);
		printf("\n");
	}
	for (k = 0; k < p->n_left && k < TEXT_SITES; k++) {
		printf("  %7s left %s in %s block%s at ", "",
		    sv_fmt_size(a, sizeof a, p->left[k].bytes),
		    sv_fmt_count(b, sizeof b, p->left[k].count),
		    p->left[k].count == 1 ? "" : "s");
		cli_an_site_text(stdout, t, p->left[k].site);
		printf("\n");
	}
	if (p->n_left > TEXT_SITES)
		printf("  %7s ... %" PRIu64 " more sites\n", "",
		    p->n_left - TEXT_SITES);
}

static void
print_phase(struct an_sites *t, const struct an_phases *ph, uint32_t q,
    uint64_t limit)
{
	const struct an_phase *p = &ph->phases[q];
	char a[32], b[32], why[160];
	uint64_t i, n = 0;

	printf("\nPhase %s (%s): %s instance%s, %s complete; the highest "
	    "peak %s in iteration %" PRIu64 "\n", cli_shown(p->name),
	    an_phase_source_text(p->source),
	    sv_fmt_count(a, sizeof a, p->n_inst), p->n_inst == 1 ? "" : "s",
	    sv_fmt_count(b, sizeof b, p->n_complete),
	    sv_fmt_size(why, sizeof why, p->peak),
	    ph->inst[p->peak_inst].iteration);
	printf("  %5s  %-17s %10s %-8s %10s %10s %10s %10s %10s\n", "iter",
	    "events", "peak", "at", "before", "freed", "left", "allocated",
	    "reserved");
	for (i = 0; i < ph->n_inst; i++) {
		if (ph->inst[i].phase != q)
			continue;
		if (n++ >= limit)
			continue;
		print_inst(t, &ph->inst[i]);
	}
	if (n > limit)
		printf("  ... %" PRIu64 " more instances (--limit)\n",
		    n - limit);
	if (p->verdict != AN_PH_JUDGED) {
		printf("  Not judged from iteration to iteration: %s.\n",
		    an_phase_verdict_text(p, why, sizeof why));
		return;
	}
	if (p->n_grow == 0) {
		printf("  What it leaves behind does not grow from iteration "
		    "to iteration.\n");
		return;
	}
	for (i = 0; i < p->n_grow; i++) {
		const struct an_phase_grow *g = &p->grow[i];

		printf("  grows %s per iteration (left in %s of %s): ",
		    sv_fmt_size(a, sizeof a, g->per_iter),
		    sv_fmt_count(b, sizeof b, g->hits),
		    sv_fmt_count(why, sizeof why, p->n_complete));
		cli_an_site_text(stdout, t, g->site);
		printf("%s\n", g->innermost ? "" : " (inside a phase nested "
		    "in it)");
	}
}

static void
print_text(struct an_sites *t, const struct an_phases *ph,
    const struct an_steps *st, uint64_t limit)
{
	uint32_t q;

	print_header(ph, st);
	print_growing(t, ph);
	if (ph->n_phases > 0)
		printf("  before: live at its start; freed: of that, freed "
		    "in it; left: allocated in it,\n  alive at its end; "
		    "allocated, reserved: after its last event; * cut by "
		    "the trace\n");
	for (q = 0; q < ph->n_phases; q++)
		print_phase(t, ph, q, limit);
}

static void
json_grow(struct json *j, struct an_sites *t, const struct an_phase_grow *g)
{
	cli_an_site_json(j, t, g->site, g->stack);
	json_kv_u64(j, "count", g->count);
	json_kv_u64(j, "bytes", g->bytes);
	json_kv_u64(j, "iterations", g->hits);
	json_kv_u64(j, "per_iteration_bytes", g->per_iter);
	json_kv_bool(j, "innermost", g->innermost);
}

static void
json_phase(struct json *j, struct an_sites *t, const struct an_phases *ph,
    const struct an_phase *p)
{
	char why[160];
	uint64_t i;

	json_obj_begin(j);
	json_kv_str(j, "name", p->name);
	json_kv_str(j, "source", an_phase_source_name(p->source));
	json_kv_u64(j, "instances", p->n_inst);
	json_kv_u64(j, "complete_instances", p->n_complete);
	json_kv_u64(j, "mean_events", p->mean_len);
	json_kv_u64(j, "peak_bytes", p->peak);
	json_kv_u64(j, "peak_iteration", ph->inst[p->peak_inst].iteration);
	json_kv_bool(j, "judged", p->verdict == AN_PH_JUDGED);
	json_key(j, "why_not_judged");
	if (p->verdict == AN_PH_JUDGED)
		json_null(j);
	else
		json_str(j, an_phase_verdict_text(p, why, sizeof why));
	json_key(j, "growing");
	json_arr_begin(j);
	for (i = 0; i < p->n_grow; i++) {
		json_obj_begin(j);
		json_grow(j, t, &p->grow[i]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void
json_inst(struct json *j, struct an_sites *t, const struct an_phases *ph,
    const struct an_phase_inst *p, uint64_t limit)
{
	uint64_t k;

	json_obj_begin(j);
	json_kv_str(j, "phase", ph->phases[p->phase].name);
	json_kv_u64(j, "iteration", p->iteration);
	json_kv_i64(j, "step", p->step);
	json_kv_i64(j, "first_event", p->first);
	json_kv_i64(j, "last_event", p->last);
	json_kv_bool(j, "complete", p->complete);
	json_kv_u64(j, "alive_before_bytes", p->before_bytes);
	json_kv_u64(j, "freed_inside_count", p->freed_before_count);
	json_kv_u64(j, "freed_inside_bytes", p->freed_before_bytes);
	json_kv_u64(j, "peak_bytes", p->peak);
	json_kv_i64(j, "peak_event", p->peak_ev);
	json_key(j, "peak_site");
	if (p->peak_site == UINT32_MAX) {
		json_null(j);
	} else {
		json_obj_begin(j);
		cli_an_site_json(j, t, p->peak_site, UINT32_MAX);
		json_obj_end(j);
	}
	json_kv_u64(j, "allocated_count", p->alloc_count);
	json_kv_u64(j, "allocated_bytes", p->alloc_bytes);
	json_kv_u64(j, "left_count", p->left_count);
	json_kv_u64(j, "left_bytes", p->left_bytes);
	json_kv_u64(j, "n_left_sites", p->n_left);
	json_key(j, "left_sites");
	json_arr_begin(j);
	for (k = 0; k < p->n_left && k < limit; k++) {
		json_obj_begin(j);
		cli_an_site_json(j, t, p->left[k].site, p->left[k].stack);
		json_kv_u64(j, "count", p->left[k].count);
		json_kv_u64(j, "bytes", p->left[k].bytes);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_u64(j, "allocated_end_bytes", p->total_end);
	json_kv_u64(j, "reserved_end_bytes", p->reserved_end);
	json_obj_end(j);
}

static void
json_phases(struct json *j, struct an_sites *t, const struct an_phases *ph,
    const struct an_steps *st, uint64_t limit)
{
	uint64_t i;
	uint32_t q;

	json_obj_begin(j);
	json_kv_u64(j, "device", ph->device);
	json_kv_str(j, "steps_source", an_steps_source_name(st->source));
	json_kv_u64(j, "steps", st->n);
	json_kv_u64(j, "repeats_in_one_call", st->layers);
	json_kv_str(j, "phases_from", ph->from_rules ? "rules" :
	    "annotations");
	json_kv_u64(j, "annotations", ph->n_annotations);
	json_kv_u64(j, "annotate_events", ph->n_annotate);
	json_kv_bool(j, "annotations_without_time", ph->no_time);
	json_key(j, "growing");
	json_arr_begin(j);
	for (q = 0; q < ph->n_phases; q++)
		for (i = 0; i < ph->phases[q].n_grow; i++) {
			if (!ph->phases[q].grow[i].innermost)
				continue;
			json_obj_begin(j);
			json_kv_str(j, "phase", ph->phases[q].name);
			json_grow(j, t, &ph->phases[q].grow[i]);
			json_obj_end(j);
		}
	json_arr_end(j);
	json_key(j, "phases");
	json_arr_begin(j);
	for (q = 0; q < ph->n_phases; q++)
		json_phase(j, t, ph, &ph->phases[q]);
	json_arr_end(j);
	json_key(j, "instances");
	json_arr_begin(j);
	for (i = 0; i < ph->n_inst; i++)
		json_inst(j, t, ph, &ph->inst[i], limit);
	json_arr_end(j);
	json_obj_end(j);
}

static int
phases_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct cli_an_run *run = ctx;
	const struct cli_opts *o = run->o;
	struct an_steps st;
	struct an_phases ph;

	if (an_steps_find(run->snap, dev->device, &st, err) != 0)
		return -1;
	if (an_phases_find(run->snap, dev->device, o->phase_rules, &st, &ph,
	    err) != 0 || an_phases_measure(run->snap, dev->tl, run->sites,
	    &st, &ph, err) != 0) {
		an_phases_destroy(&ph);
		an_steps_destroy(&st);
		return -1;
	}
	if (ph.n_bad > 0)
		fprintf(stderr, "snapview: warning: %s: device %u: %s%s\n",
		    cli_shown(o->file), dev->device, cli_shown(ph.bad),
		    ph.n_bad > 1 ? " (and more like it)" : "");
	if (o->json) {
		json_phases(&run->j, run->sites, &ph, &st, run->limit);
	} else {
		if (!dev->first)
			printf("\n");
		print_text(run->sites, &ph, &st, run->limit);
	}
	an_phases_destroy(&ph);
	an_steps_destroy(&st);
	return 0;
}

int
cmd_phases(const struct cli_opts *o)
{
	struct cli_an_run run;

	return cli_an_run(o, o, 0, &run, phases_device, &run);
}
