/*
 * snapview oom: every out-of-memory event with the request, free device
 * memory, reserved and allocated, the largest free block per stream, and
 * what was live by call site.
 */
#include "config.h"

#include <inttypes.h>

#include "analysis/oom.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "index/idx_timeline.h"
#include "util/json.h"
#include "util/units.h"

static void
text_event(struct an_sites *s, const struct an_oom_event *e, uint64_t limit)
{
	char a[32], b[32], c[32];
	uint32_t i;

	printf("OOM at event #%" PRId64 " (stream %#" PRIx64 ")\n", e->ev,
	    e->stream);
	printf("  request:       %s (rounded)\n",
	    sv_fmt_size(a, sizeof a, e->request));
	printf("  device free:   %s\n", sv_fmt_size(a, sizeof a, e->device_free));
	printf("  reserved:      %s\n", sv_fmt_size(a, sizeof a, e->reserved));
	printf("  allocated:     %s (requested; %s in blocks)\n",
	    sv_fmt_size(a, sizeof a, e->allocated),
	    sv_fmt_size(b, sizeof b, e->allocated_blocks));
	printf("  requested at:  ");
	cli_an_site_text(stdout, s, e->site);
	printf("\n");
	for (i = 0; i < e->n_streams; i++) {
		const struct an_oom_stream *x = &e->streams[i];

		printf("  stream %#" PRIx64 ": %" PRIu64 " segments, %s "
		       "reserved, %s free, largest free block %s%s\n",
		    x->stream, x->segments, sv_fmt_size(a, sizeof a, x->reserved),
		    sv_fmt_size(b, sizeof b, x->free_bytes),
		    sv_fmt_size(c, sizeof c, x->largest_free),
		    x->largest_free < e->request ? " < request" : " >= request");
	}
	printf("\n  live by call site (%s in %s blocks):\n",
	    sv_fmt_size(a, sizeof a, e->live.bytes),
	    sv_fmt_count(b, sizeof b, e->live.count));
	for (i = 0; i < e->live.n_roots && i < limit; i++) {
		const struct an_top_node *n = &e->live.nodes[e->live.roots[i]];

		printf("  %10s %7s  ", sv_fmt_size(a, sizeof a, n->bytes),
		    sv_fmt_count(b, sizeof b, n->count));
		cli_an_site_text(stdout, s, n->site);
		printf("\n");
	}
}

static void
json_event(struct json *j, struct an_sites *s, const struct an_oom_event *e,
    uint64_t limit)
{
	uint32_t i;

	json_obj_begin(j);
	json_kv_i64(j, "event", e->ev);
	json_kv_u64(j, "request", e->request);
	json_kv_u64(j, "device_free", e->device_free);
	json_kv_u64(j, "stream", e->stream);
	json_kv_u64(j, "reserved", e->reserved);
	json_kv_u64(j, "allocated", e->allocated);
	json_kv_u64(j, "allocated_blocks", e->allocated_blocks);
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
		json_kv_u64(j, "largest_free_block", e->streams[i].largest_free);
		json_kv_bool(j, "fits_request",
		    e->streams[i].largest_free >= e->request);
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
		cli_an_site_json(j, s, n->site, n->stack);
		json_kv_u64(j, "bytes", n->bytes);
		json_kv_u64(j, "count", n->count);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

int
cmd_oom(const struct cli_opts *o)
{
	struct cli_input in;
	struct an_sites sites;
	struct json j;
	uint32_t d, n_dev;
	int64_t only;
	uint64_t limit = cli_an_limit(o);
	uint64_t total = 0, i;
	int r;

	if ((r = cli_an_open(o, o, &in, &sites, &only)) != 0)
		return r;
	n_dev = snap_device_count(in.snap);
	if (o->json)
		cli_an_json_begin(&j, o->file);
	for (d = 0; d < n_dev; d++) {
		struct idx_timeline tl;
		const struct idx_timeline *itl;
		struct an_oom oo;
		struct replay *rp;
		struct sv_error err;

		if (!cli_an_want_device(in.snap, only, d))
			continue;
		if ((itl = cli_an_timeline(&in, d, &tl, &err)) == NULL) {
			r = cli_report(o->file, &err);
			break;
		}
		rp = cli_replay(&in, d, &err);
		if (rp == NULL || an_oom(in.snap, itl, rp, &sites, &oo,
				      &err) != 0) {
			r = cli_report(o->file, &err);
			replay_free(rp);
			idx_timeline_destroy(&tl);
			break;
		}
		if (o->json) {
			json_obj_begin(&j);
			json_kv_u64(&j, "device", d);
			json_key(&j, "ooms");
			json_arr_begin(&j);
		}
		for (i = 0; i < oo.n_events; i++) {
			if (o->json) {
				json_event(&j, &sites, &oo.events[i], limit);
			} else {
				printf("%sDevice %u: ", total ? "\n" : "", d);
				text_event(&sites, &oo.events[i], limit);
			}
			total++;
		}
		if (o->json) {
			json_arr_end(&j);
			json_obj_end(&j);
		}
		an_oom_destroy(&oo);
		replay_free(rp);
		idx_timeline_destroy(&tl);
	}
	if (o->json) {
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else if (r == 0 && total == 0) {
		printf("No OOM event in the trace.\n");
	}
	an_sites_destroy(&sites);
	cli_close(&in);
	return r;
}
