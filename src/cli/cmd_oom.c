/*
 * snapview oom: every out-of-memory event with the request, free device
 * memory, reserved and allocated, the largest free block per stream, and
 * what was live by call site.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/oom.h"
#include "analysis/stats.h"
#include "analysis/summary.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "cli/cli_whatif.h"
#include "index/idx_timeline.h"
#include "replay/replay.h"
#include "util/json.h"
#include "util/units.h"
#include "util/xalloc.h"

static void
text_event(struct an_sites *s, const struct an_oom_event *e,
    const struct an_cat_totals *ct, uint64_t limit)
{
	unsigned order[AN_CAT_COUNT], nc, k;
	char a[32], b[32], c[32];
	uint32_t i;

	printf("OOM at event #%" PRId64 " (stream %" PRIu64 ")\n", e->ev,
	    e->stream);
	printf("  request:       %s (rounded)\n",
	    sv_fmt_size(a, sizeof a, e->request));
	printf("  device free:   %s\n",
	    sv_fmt_size(a, sizeof a, e->device_free));
	printf("  reserved:      %s\n", sv_fmt_size(a, sizeof a, e->reserved));
	printf("  allocated:     %s (requested; %s in blocks)\n",
	    sv_fmt_size(a, sizeof a, e->allocated),
	    sv_fmt_size(b, sizeof b, e->allocated_blocks));
	printf("  requested at:  ");
	cli_an_site_text(stdout, s, e->site);
	printf("\n");
	printf("  segment:       %s asked of the device (%s pool)\n",
	    sv_fmt_size(a, sizeof a, e->segment_size),
	    e->large ? "large" : "small");
	if (e->retry_ev >= 0)
		printf("  retried:       an allocation of this size follows at "
		       "#%" PRId64 "\n", e->retry_ev);
	else
		printf("  retried:       no allocation of this size follows: "
		       "the request failed\n");
	if (e->enough_free)
		printf("  The device reported %s free, enough for the request; "
		       "causes that fit:\n",
		    sv_fmt_size(a, sizeof a, e->device_free));
	else
		printf("  Causes that fit:\n");
	for (i = 0; i < (uint32_t)e->n_causes; i++)
		printf("    - %s\n", e->causes[i].text);
	for (i = 0; i < e->n_streams; i++) {
		const struct an_oom_stream *x = &e->streams[i];

		printf("  stream %" PRIu64 ": %" PRIu64 " segment%s, %s "
		       "reserved, %s free, largest free block %s%s\n",
		    x->stream, x->segments, x->segments == 1 ? "" : "s",
		    sv_fmt_size(a, sizeof a, x->reserved),
		    sv_fmt_size(b, sizeof b, x->free_bytes),
		    sv_fmt_size(c, sizeof c, x->largest_free),
		    x->largest_free < e->request ? " < request" :
		    " >= request");
	}
	for (i = 0; i < e->n_groups; i++)
		if (e->groups[i].pool[0] != 0 || e->groups[i].pool[1] != 0)
			break;
	if (i < e->n_groups) {
		char pn[64];

		/* only with private pools: other files print what they did */
		printf("  request in:    %s, stream %" PRIu64 "\n",
		    an_pool_name(pn, sizeof pn, e->pool), e->stream);
		printf("  by pool and stream (free memory serves only its "
		    "own):\n");
		cli_an_pool_streams_text(e->groups, e->n_groups, "    ");
	}
	nc = cli_an_rank_categories(ct->bytes, ct->count, order);
	printf("\n  live by category:");
	for (k = 0; k < nc; k++)
		printf("%s %s %s", k ? "," : "", an_category_label(order[k]),
		    sv_fmt_size(a, sizeof a, ct->bytes[order[k]]));
	printf("%s\n", nc ? "" : " nothing");
	printf("  live by call site (%s in %s block%s):\n",
	    sv_fmt_size(a, sizeof a, e->live.bytes),
	    sv_fmt_count(b, sizeof b, e->live.count),
	    e->live.count == 1 ? "" : "s");
	for (i = 0; i < e->live.n_roots && i < limit; i++) {
		const struct an_top_node *n = &e->live.nodes[e->live.roots[i]];

		printf("  %10s %7s  ", sv_fmt_size(a, sizeof a, n->bytes),
		    sv_fmt_count(b, sizeof b, n->count));
		cli_an_blocks_site_text(stdout, s, n->site, n->free_stack);
		printf("\n");
	}
}

static const char *
cause_name(int kind)
{
	switch (kind) {
	case AN_OOM_POOL: return "pool";
	case AN_OOM_FRACTION: return "memory_fraction";
	case AN_OOM_OTHERS: return "other_processes";
	case AN_OOM_ISOLATED: return "pool_stream_isolation";
	default: return "fragmentation";
	}
}

static void
json_event(struct json *j, struct an_sites *s, const struct an_oom_event *e,
    const struct an_cat_totals *ct, uint64_t limit)
{
	uint32_t i;
	unsigned order[AN_CAT_COUNT], nc, c;

	json_obj_begin(j);
	json_kv_i64(j, "event", e->ev);
	json_kv_u64(j, "request", e->request);
	json_kv_u64(j, "device_free", e->device_free);
	json_kv_u64(j, "stream", e->stream);
	json_kv_u64(j, "reserved", e->reserved);
	json_kv_u64(j, "allocated", e->allocated);
	json_kv_u64(j, "allocated_blocks", e->allocated_blocks);
	json_kv_str(j, "request_pool", e->large ? "large" : "small");
	json_kv_u64(j, "segment_size", e->segment_size);
	json_kv_bool(j, "enough_free", e->enough_free);
	json_key(j, "pool_free");
	if (e->has_state)
		json_u64(j, e->pool_free);
	else
		json_null(j);
	json_key(j, "pool_largest_free_block");
	if (e->has_state)
		json_u64(j, e->pool_largest);
	else
		json_null(j);
	json_key(j, "request_pool_id");
	json_arr_begin(j);
	json_i64(j, e->pool[0]);
	json_i64(j, e->pool[1]);
	json_arr_end(j);
	if (e->has_state)
		cli_an_isolation_json(j, "isolated", &e->iso);
	else {
		json_key(j, "isolated");
		json_null(j);
	}
	cli_an_pool_streams_json(j, "pool_streams", e->groups, e->n_groups);
	json_kv_i64(j, "retry_event", e->retry_ev);
	json_key(j, "causes");
	json_arr_begin(j);
	for (i = 0; i < (uint32_t)e->n_causes; i++) {
		json_obj_begin(j);
		json_kv_str(j, "cause", cause_name(e->causes[i].kind));
		json_kv_str(j, "text", e->causes[i].text);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "request_site");
	json_obj_begin(j);
	cli_an_site_json(j, s, e->site, e->stack);
	json_obj_end(j);
	json_key(j, "streams");
	json_arr_begin(j);
	for (i = 0; i < e->n_streams; i++) {
		json_obj_begin(j);
		json_kv_u64(j, "stream", e->streams[i].stream);
		json_kv_u64(j, "segments", e->streams[i].segments);
		json_kv_u64(j, "reserved", e->streams[i].reserved);
		json_kv_u64(j, "free", e->streams[i].free_bytes);
		json_kv_u64(j, "largest_free_block",
		    e->streams[i].largest_free);
		json_kv_bool(j, "fits_request",
		    e->streams[i].largest_free >= e->request);
		json_obj_end(j);
	}
	json_arr_end(j);
	nc = cli_an_rank_categories(ct->bytes, ct->count, order);
	json_key(j, "live_categories");
	json_arr_begin(j);
	for (c = 0; c < nc; c++) {
		json_obj_begin(j);
		cli_an_category_json(j, order[c], ct->bytes[order[c]],
		    ct->count[order[c]]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_u64(j, "live_bytes", e->live.bytes);
	json_kv_u64(j, "live_count", e->live.count);
	json_key(j, "live_sites");
	json_arr_begin(j);
	for (i = 0; i < e->live.n_roots && i < limit; i++) {
		const struct an_top_node *n = &e->live.nodes[e->live.roots[i]];

		json_obj_begin(j);
		cli_an_blocks_site_json(j, s, n->site, n->stack,
		    n->free_stack);
		json_kv_u64(j, "bytes", n->bytes);
		json_kv_u64(j, "count", n->count);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

/* A device whose trace has one entry: history was switched on just
 * before the snapshot, so no OOM can show; how full the device was at
 * that entry, from the file's segments. */
struct oom_one {
	uint32_t device;
	struct an_seg_totals seg;
};

struct oom_run {
	struct cli_an_run r;
	uint64_t total;		/* OOM events reported so far */
	struct oom_one *one;	/* text: said after the OOMs */
	size_t n_one, cap_one;
	struct an_summary sum;	/* the index's, decoded once for all devices */
	int sum_state;		/* 0 not read yet, 1 in sum, -1 none */
};

/* Does device d have an OOM event? The index's summary counts them (a
 * reopen then reads no event); else the events are read. */
static int
has_oom(struct oom_run *run, const struct cli_an_dev *dev,
    const struct snapshot *s)
{
	const struct snap_trace *t = snap_trace_of(s, dev->device);
	const struct an_sum_dev *sd;
	int known = 0, has = 0;
	uint64_t i;

	if (t == NULL || t->n == 0)
		return 0;
	if (run->sum_state == 0)
		run->sum_state = dev->in->index != NULL &&
		    an_summary_section_of(dev->in->index, &run->sum) == 0 ?
		    1 : -1;
	if (run->sum_state == 1 &&
	    (sd = an_summary_dev(&run->sum, dev->device)) != NULL &&
	    sd->counts.events == t->n) {
		known = 1;
		has = sd->counts.by_action[SNAP_OOM] > 0;
	}
	for (i = 0; !known && i < t->n && !has; i++)
		has = snap_ev_action(t, i) == SNAP_OOM;
	return has;
}

static int
oom_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct oom_run *run = ctx;
	struct cli_an_run *r = &run->r;
	struct cli_an_classes cl;
	struct an_cat_totals ct;
	struct an_oom oo;
	struct an_whatif_oom_verdict *vd = NULL;
	uint64_t i, nvd = 0;
	const struct snap_trace *t = snap_trace_of(r->snap, dev->device);
	struct an_seg_totals seg;

	/* the replay (the allocator's state at each OOM) only for a device
	 * with one: loading it is most of what a reopen costs */
	if (has_oom(run, dev, r->snap)) {
		struct replay *rp = cli_replay(dev->in, dev->device, err);
		int rc;

		if (rp == NULL)
			return -1;
		rc = an_oom(r->snap, dev->tl, rp, r->sites, &oo, err);
		if (rc == 0 && (rc = an_whatif_oom_verdicts(r->snap,
		    dev->device, rp, r->o->capacity, &vd, &nvd, err)) != 0)
			an_oom_destroy(&oo);
		replay_free(rp);
		if (rc != 0)
			return -1;
	} else {
		memset(&oo, 0, sizeof oo);
		oo.device = dev->device;
	}
	if (oo.n_events > 0 && cli_an_classes(r->o, r->snap, dev->tl,
	    &r->rules, &cl, err) != 0) {
		an_oom_destroy(&oo);
		return -1;
	}
	if (r->o->json) {
		json_obj_begin(&r->j);
		json_kv_u64(&r->j, "device", dev->device);
		json_key(&r->j, "ooms");
		json_arr_begin(&r->j);
	}
	for (i = 0; i < oo.n_events; i++) {
		an_categories_at(dev->tl, &cl.cats, oo.events[i].ev, &ct);
		if (r->o->json) {
			json_event(&r->j, r->sites, &oo.events[i], &ct,
			    r->limit);
		} else {
			printf("%sDevice %u: ", run->total ? "\n" : "",
			    dev->device);
			text_event(r->sites, &oo.events[i], &ct, r->limit);
			cli_whatif_oom_text(vd, nvd, oo.events[i].ev);
		}
		run->total++;
	}
	if (oo.n_events > 0)
		cli_an_classes_destroy(&cl);
	if (t != NULL && t->n == 1)
		an_seg_totals(r->snap, dev->device, &seg);
	if (r->o->json) {
		json_arr_end(&r->j);
		cli_whatif_oom_json(&r->j, vd, nvd);
		if (t != NULL && t->n == 1) {
			json_key(&r->j, "one_entry");
			json_obj_begin(&r->j);
			json_kv_u64(&r->j, "reserved", seg.sum.reserved);
			json_kv_u64(&r->j, "allocated",
			    seg.sum.alloc_requested);
			json_kv_u64(&r->j, "largest_free_block",
			    seg.sum.largest_free);
			json_obj_end(&r->j);
		}
		json_obj_end(&r->j);
	} else if (t != NULL && t->n == 1) {
		XGROW(run->one, run->cap_one, run->n_one + 1);
		run->one[run->n_one].device = dev->device;
		run->one[run->n_one++].seg = seg;
	}
	free(vd);
	an_oom_destroy(&oo);
	return 0;
}

static void
text_one(const struct oom_one *one)
{
	char a[32], b[32], c[32];

	printf("Device %u: a trace of one entry cannot show an OOM "
	       "(recording began there).\n", one->device);
	printf("  At that entry: reserved %s, allocated %s, largest free "
	       "block %s\n", sv_fmt_size(a, sizeof a, one->seg.sum.reserved),
	    sv_fmt_size(b, sizeof b, one->seg.sum.alloc_requested),
	    sv_fmt_size(c, sizeof c, one->seg.sum.largest_free));
}

int
cmd_oom(const struct cli_opts *o)
{
	struct oom_run run;
	size_t i;
	int r;

	memset(&run, 0, sizeof run);
	r = cli_an_run(o, o, CLI_AN_RULES, &run.r, oom_device, &run);
	if (run.sum_state == 1)
		an_summary_destroy(&run.sum);
	if (!o->json && r == 0 && run.total == 0)
		printf("No OOM event in the trace.\n");
	for (i = 0; r == 0 && i < run.n_one; i++)
		text_one(&run.one[i]);
	free(run.one);
	return r;
}
