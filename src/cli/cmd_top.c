/*
 * snapview top --at N: live bytes by call-site tree after event N
 * (default: the end). --frames K sets the tree depth (default 3).
 */
#include "config.h"

#include <inttypes.h>

#include "analysis/top.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "index/idx_timeline.h"
#include "util/json.h"
#include "util/units.h"

static void
text_node(struct an_sites *s, const struct an_top *t, uint32_t id,
    uint64_t limit)
{
	const struct an_top_node *n = &t->nodes[id];
	char a[32], b[32];
	uint32_t k;

	printf("  %10s %6.1f%% %7s  %*s%s", sv_fmt_size(a, sizeof a, n->bytes),
	    t->bytes ? 100.0 * (double)n->bytes / (double)t->bytes : 0.0,
	    sv_fmt_count(b, sizeof b, n->count), (int)(2 * n->depth), "",
	    n->depth ? "<- " : "");
	if (n->depth == 0)
		cli_an_site_text(stdout, s, n->site);
	else
		cli_an_frame_text(stdout, s->s, n->frame);
	printf("\n");
	for (k = t->kid_off[id]; k < t->kid_off[id + 1] &&
	     k - t->kid_off[id] < limit; k++)
		text_node(s, t, t->kids[k], limit);
}

static void
json_node(struct json *j, struct an_sites *s, const struct an_top *t,
    uint32_t id, uint64_t limit)
{
	const struct an_top_node *n = &t->nodes[id];
	uint32_t k;

	json_obj_begin(j);
	if (n->depth == 0) {
		cli_an_site_json(j, s, n->site, UINT32_MAX);
	} else {
		json_key(j, "frame");
		cli_an_frame_json(j, s->s, n->frame);
	}
	json_kv_u64(j, "bytes", n->bytes);
	json_kv_u64(j, "count", n->count);
	json_key(j, "callers");
	json_arr_begin(j);
	for (k = t->kid_off[id]; k < t->kid_off[id + 1] &&
	     k - t->kid_off[id] < limit; k++)
		json_node(j, s, t, t->kids[k], limit);
	json_arr_end(j);
	json_obj_end(j);
}

struct top_run {
	const struct cli_opts *o;
	struct an_sites *sites;
	struct json j;
	uint64_t limit;
	uint32_t depth;
};

static int
top_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct top_run *tr = ctx;
	struct json *j = &tr->j;
	struct an_top t;
	uint64_t limit = tr->limit;
	uint32_t i;
	char a[32], b[32];

	(void)err;	/* an_top cannot fail */
	an_top(dev->tl, tr->sites, tr->o->has_at ? tr->o->at : -2, tr->depth,
	    &t);
	if (tr->o->json) {
		json_obj_begin(j);
		json_kv_u64(j, "device", dev->device);
		json_kv_i64(j, "at", t.at);
		json_kv_u64(j, "bytes", t.bytes);
		json_kv_u64(j, "count", t.count);
		json_kv_u64(j, "n_sites", t.n_roots);
		json_key(j, "sites");
		json_arr_begin(j);
		for (i = 0; i < t.n_roots && i < limit; i++)
			json_node(j, tr->sites, &t, t.roots[i], limit);
		json_arr_end(j);
		json_obj_end(j);
	} else {
		if (!dev->first)
			printf("\n");
		printf("Device %u after event #%" PRId64 ": %s live in "
		       "%s blocks (requested bytes)\n\n",
		    dev->device, t.at, sv_fmt_size(a, sizeof a, t.bytes),
		    sv_fmt_count(b, sizeof b, t.count));
		printf("  %10s %7s %7s  %s\n", "bytes", "share",
		    "blocks", "call site <- callers");
		for (i = 0; i < t.n_roots && i < limit; i++)
			text_node(tr->sites, &t, t.roots[i], limit);
		if (t.n_roots > limit)
			printf("  ... %" PRIu64 " more sites (--limit)\n",
			    (uint64_t)t.n_roots - limit);
	}
	an_top_destroy(&t);
	return 0;
}

int
cmd_top(const struct cli_opts *o)
{
	struct cli_input in;
	struct an_sites sites;
	struct cli_opts so = *o;
	struct top_run tr;
	int64_t only;
	int r;

	so.frames = 1; /* --frames is the tree depth here */
	if ((r = cli_an_open(o, &so, &in, &sites, &only)) != 0)
		return r;
	tr.o = o;
	tr.sites = &sites;
	tr.limit = cli_an_limit(o);
	tr.depth = o->frames > 0 ? (uint32_t)o->frames : 3;
	if (o->json)
		cli_an_json_begin(&tr.j, o->file);
	r = cli_an_each_device(o, &in, only, 0, top_device, &tr);
	if (o->json)
		cli_an_json_end(&tr.j);
	an_sites_destroy(&sites);
	cli_close(&in);
	return r;
}
