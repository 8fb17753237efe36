/*
 * snapview leaks: allocations of a window (--from/--to, default the whole
 * trace) still alive at its end, by call site, the per-step leak first.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "analysis/leaks.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "index/idx_timeline.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/units.h"

static uint64_t
per_step(const struct an_leak_site *ls)
{
	return ls->steps_hit ? ls->bytes / ls->steps_hit : ls->bytes;
}

static void
print_header(const struct an_leaks *l, int no_trace)
{
	char a[32], b[32], c[32], e[32];

	if (no_trace) {
		/* a leak is judged from events: none here */
		printf("Device %u: no trace in this file (its segments only)\n"
		    "  Leaks are judged from a trace: with none, nothing is "
		    "judged ('snapview top' lists what is alive at the end).\n",
		    l->device);
		return;
	}
	if (l->from < 0)
		printf("Device %u: events start..#%" PRId64, l->device, l->to);
	else
		printf("Device %u: events #%" PRId64 "..#%" PRId64, l->device,
		    l->from, l->to);
	if (l->steps_source == AN_STEPS_NONE && l->layers > 0)
		printf(", no steps (the trace repeats %s times inside one "
		    "call: a loop over layers, not steps)\n",
		    sv_fmt_count(a, sizeof a, l->layers));
	else if (l->steps_source == AN_STEPS_NONE)
		printf(", no steps found\n");
	else
		printf(", %s step%s (%s)\n",
		    sv_fmt_count(a, sizeof a, l->n_steps),
		    l->n_steps == 1 ? "" : "s",
		    an_steps_source_text(l->steps_source));
	if (l->from < 0)
		printf("  %s block%s, %s alive at the end (%s of them "
		       "allocated before the trace began)\n",
		    sv_fmt_count(a, sizeof a, l->count),
		    l->count == 1 ? "" : "s",
		    sv_fmt_size(b, sizeof b, l->bytes),
		    sv_fmt_count(c, sizeof c, l->before_trace));
	else
		printf("  %s block%s, %s allocated in the window and alive "
		       "at its end; %s block%s (%s) alive from before it\n",
		    sv_fmt_count(a, sizeof a, l->count),
		    l->count == 1 ? "" : "s",
		    sv_fmt_size(b, sizeof b, l->bytes),
		    sv_fmt_count(c, sizeof c, l->alive_before),
		    l->alive_before == 1 ? "" : "s",
		    sv_fmt_size(e, sizeof e, l->alive_before_bytes));
	if (!l->judged && l->steps_source == AN_STEPS_NONE)
		printf("  With no steps, nothing is judged as growing from "
		    "step to step.\n");
	else if (!l->judged)
		printf("  A leak across steps cannot be judged from this "
		       "trace: it holds %" PRIu64 " complete step%s, at least "
		       "2 are needed.\n", l->n_complete,
		    l->n_complete == 1 ? "" : "s");
}

static void
print_categories(const struct an_leaks *l)
{
	char a[32], b[32];
	unsigned order[AN_CAT_COUNT], n, i;

	if (!l->has_categories || l->count == 0)
		return;
	n = cli_an_rank_categories(l->cat_bytes, l->cat_count, order);
	printf("  %s by category:\n", l->from < 0 ? "Alive at the end"
						   : "Leaked in the window");
	for (i = 0; i < n; i++)
		printf("  %12s %7s %-6s  %s\n",
		    sv_fmt_size(a, sizeof a, l->cat_bytes[order[i]]),
		    sv_fmt_count(b, sizeof b, l->cat_count[order[i]]),
		    l->cat_count[order[i]] == 1 ? "block" : "blocks",
		    an_category_label(order[i]));
}

static void
print_text(struct an_sites *t, const struct an_leaks *l, uint64_t limit,
    int no_trace, int overflowed)
{
	char a[32], b[32], c[32];
	uint64_t i;

	print_header(l, no_trace);
	if (overflowed > 0)
		printf("  %s\n", CLI_RING_LOST);
	print_categories(l);
	if (l->n_sites == 0) {
		printf("  no leaked blocks\n");
		return;
	}
	printf("\n  %3s %10s %7s %10s %5s  %-15s  %s\n", "#", "bytes",
	    "blocks", "per step", "steps", "category", "call site");
	for (i = 0; i < l->n_sites && i < limit; i++) {
		const struct an_leak_site *ls = &l->sites[i];
		uint32_t caller = cli_an_caller(t, ls->stack);
		char steps[32];

		snprintf(steps, sizeof steps, "%" PRIu64, ls->steps_hit);
		printf("  %3" PRIu64 " %10s %7s %10s %5s  %-15s  ", i + 1,
		    sv_fmt_size(a, sizeof a, ls->bytes),
		    sv_fmt_count(b, sizeof b, ls->count),
		    ls->periodic ? sv_fmt_size(c, sizeof c, per_step(ls)) : "-",
		    steps, ls->category >= 0 ?
			an_category_label((unsigned)ls->category) : "-");
		cli_an_blocks_site_text(stdout, t, ls->site, ls->free_stack);
		printf("%s\n", ls->periodic ? "   <- grows every step" : "");
		if (caller != UINT32_MAX) {
			printf("  %57s called from ", "");
			cli_an_frame_text(stdout, t->s, caller);
			printf("\n");
		}
		if (ls->first_ev >= 0)
			printf("  %57s allocated #%" PRId64 "..#%" PRId64, "",
			    ls->first_ev, ls->last_ev);
		else
			printf("  %57s", "");
		if (ls->before_trace > 0)
			printf("%s%" PRIu64 " before the trace",
			    ls->first_ev >= 0 ? ", " : "", ls->before_trace);
		printf("\n");
	}
	if (l->n_sites > limit)
		printf("  ... %" PRIu64 " more sites (--limit 0 for all)\n",
		    l->n_sites - limit);
}

static void
json_leaks(struct json *j, struct an_sites *t, const struct an_leaks *l,
    uint64_t limit, int overflowed)
{
	uint64_t i;
	unsigned c;

	json_obj_begin(j);
	json_kv_u64(j, "device", l->device);
	json_kv_i64(j, "from", l->from);
	json_kv_i64(j, "to", l->to);
	json_kv_str(j, "steps_source", an_steps_source_name(l->steps_source));
	json_kv_u64(j, "steps", l->n_steps);
	json_kv_u64(j, "complete_steps", l->n_complete);
	json_kv_u64(j, "repeats_in_one_call", l->layers);
	json_kv_bool(j, "judged", l->judged);
	if (overflowed >= 0)
		json_kv_bool(j, "ring_buffer_overflowed", overflowed);
	json_kv_u64(j, "period_events", l->period);
	json_kv_u64(j, "count", l->count);
	json_kv_u64(j, "bytes", l->bytes);
	json_kv_u64(j, "rounded_bytes", l->rounded);
	json_kv_str(j, "rounded_from", l->rounded_from_state ? "blocks"
							     : "rule");
	json_kv_u64(j, "before_trace_count", l->before_trace);
	json_kv_u64(j, "alive_before_count", l->alive_before);
	json_kv_u64(j, "alive_before_bytes", l->alive_before_bytes);
	json_key(j, "categories");
	json_arr_begin(j);
	for (c = 0; l->has_categories && c < AN_CAT_COUNT; c++) {
		if (l->cat_count[c] == 0)
			continue;
		json_obj_begin(j);
		cli_an_category_json(j, c, l->cat_bytes[c], l->cat_count[c]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_u64(j, "n_sites", l->n_sites);
	json_key(j, "sites");
	json_arr_begin(j);
	for (i = 0; i < l->n_sites && i < limit; i++) {
		const struct an_leak_site *ls = &l->sites[i];

		json_obj_begin(j);
		json_kv_u64(j, "rank", i + 1);
		cli_an_blocks_site_json(j, t, ls->site, ls->stack,
		    ls->free_stack);
		json_kv_u64(j, "count", ls->count);
		json_kv_u64(j, "bytes", ls->bytes);
		json_kv_u64(j, "rounded_bytes", ls->rounded);
		json_kv_u64(j, "before_trace_count", ls->before_trace);
		json_key(j, "category");
		if (ls->category >= 0)
			json_str(j, an_category_name((unsigned)ls->category));
		else
			json_null(j);
		json_kv_bool(j, "periodic", ls->periodic);
		json_kv_u64(j, "steps_hit", ls->steps_hit);
		json_kv_u64(j, "per_step_bytes", per_step(ls));
		json_kv_i64(j, "first_event", ls->first_ev);
		json_kv_i64(j, "last_event", ls->last_ev);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static int
leaks_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct cli_an_run *lr = ctx;
	const struct cli_opts *o = lr->o;
	struct cli_an_classes cl;
	struct an_leaks_with with;
	struct an_leaks l;
	int r;

	if (cli_an_classes(o, lr->snap, dev->tl, &lr->rules, &cl, err) != 0)
		return -1;
	with.steps = &cl.steps;
	with.cats = &cl.cats;
	with.replay = dev->replay;
	r = an_leaks_using(lr->snap, dev->tl, lr->sites, &with,
	    o->has_from ? o->from : -1, o->has_to ? o->to : -1, &l, err);
	cli_an_classes_destroy(&cl);
	if (r != 0)
		return -1;
	if (o->json) {
		json_leaks(&lr->j, lr->sites, &l, lr->limit,
		    snap_ring_overflowed(lr->snap, dev->device));
	} else {
		if (!dev->first)
			printf("\n");
		print_text(lr->sites, &l, lr->limit, dev->tl == NULL ||
		    dev->tl->n_events == 0,
		    snap_ring_overflowed(lr->snap, dev->device));
	}
	an_leaks_destroy(&l);
	return 0;
}

int
cmd_leaks(const struct cli_opts *o)
{
	struct cli_an_run lr;

	return cli_an_run(o, o, CLI_AN_REPLAY | CLI_AN_RULES, &lr,
	    leaks_device, &lr);
}
