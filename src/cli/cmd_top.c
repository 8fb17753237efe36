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
		cli_an_blocks_site_text(stdout, s, n->site, n->free_stack);
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
		cli_an_blocks_site_json(j, s, n->site, UINT32_MAX,
		    n->free_stack);
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
	struct cli_an_run r;
	uint32_t depth;
};

static int
top_cat_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct top_run *tr = ctx;
	struct cli_an_run *r = &tr->r;
	struct json *j = &r->j;
	struct cli_an_classes cl;
	struct an_cat_totals ct;
	struct an_top tops[AN_CAT_COUNT];
	unsigned order[AN_CAT_COUNT], n, i;
	uint32_t k;
	char a[32], b[32], st[96], where[64];

	if (cli_an_classes(r->o, r->snap, dev->tl, &r->rules, &cl,
		err) != 0)
		return -1;
	/* every category's sites and the totals in one pass over the
	 * allocations */
	an_top_categories(dev->tl, r->sites, &cl.cats, r->o->has_at ?
	    r->o->at : -2, 1, tops, &ct);
	n = cli_an_rank_categories(ct.bytes, ct.count, order);
	if (r->o->json) {
		json_obj_begin(j);
		json_kv_u64(j, "device", dev->device);
		json_kv_i64(j, "at", ct.at);
		json_kv_u64(j, "bytes", ct.total_bytes);
		json_kv_u64(j, "count", ct.total_count);
		json_kv_str(j, "steps_source",
		    an_steps_source_name(cl.steps.source));
		json_kv_u64(j, "steps", cl.steps.n);
		json_kv_u64(j, "by_rule_count", cl.cats.n_by_rule);
		json_key(j, "categories");
		json_arr_begin(j);
	} else {
		if (!dev->first)
			printf("\n");
		printf("Device %u %s: %s live in %s "
		       "block%s (requested bytes), by category\n"
		       "  steps: %s\n\n",
		    dev->device, cli_an_at(where, sizeof where, dev, ct.at),
		    sv_fmt_size(a, sizeof a, ct.total_bytes),
		    sv_fmt_count(b, sizeof b, ct.total_count),
		    ct.total_count == 1 ? "" : "s",
		    cli_an_steps_text(&cl.steps, st, sizeof st));
		printf("  %10s %7s %7s  %s\n", "bytes", "share", "blocks",
		    "category, then its call sites");
	}
	for (i = 0; i < n; i++) {
		unsigned c = order[i];
		const struct an_top t = tops[c];

		if (r->o->json) {
			json_obj_begin(j);
			cli_an_category_json(j, c, ct.bytes[c], ct.count[c]);
			json_kv_u64(j, "n_sites", t.n_roots);
			json_key(j, "sites");
			json_arr_begin(j);
			for (k = 0; k < t.n_roots && k < r->limit; k++)
				json_node(j, r->sites, &t, t.roots[k], 0);
			json_arr_end(j);
			json_obj_end(j);
		} else {
			printf("  %10s %6.1f%% %7s  %s\n",
			    sv_fmt_size(a, sizeof a, ct.bytes[c]),
			    ct.total_bytes ? 100.0 * (double)ct.bytes[c] /
				(double)ct.total_bytes : 0.0,
			    sv_fmt_count(b, sizeof b, ct.count[c]),
			    an_category_label(c));
			for (k = 0; k < t.n_roots && k < r->limit; k++) {
				const struct an_top_node *nd =
				    &t.nodes[t.roots[k]];

				printf("  %10s %7s %7s    ",
				    sv_fmt_size(a, sizeof a, nd->bytes), "",
				    sv_fmt_count(b, sizeof b, nd->count));
				cli_an_blocks_site_text(stdout, r->sites,
				    nd->site, nd->free_stack);
				printf("\n");
			}
			if (t.n_roots > r->limit)
				printf("  %30s ... %" PRIu64 " more sites "
				       "(--limit 0 for all)\n", "",
				    (uint64_t)t.n_roots - r->limit);
		}
	}
	if (r->o->json) {
		json_arr_end(j);
		json_obj_end(j);
	}
	for (i = 0; i < AN_CAT_COUNT; i++)
		an_top_destroy(&tops[i]);
	cli_an_classes_destroy(&cl);
	return 0;
}

static int
top_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct top_run *tr = ctx;
	struct cli_an_run *r = &tr->r;
	struct json *j = &r->j;
	struct an_top t;
	uint64_t limit = r->limit;
	uint32_t i;
	char a[32], b[32], where[64];

	(void)err;	/* an_top cannot fail */
	an_top(dev->tl, r->sites, r->o->has_at ? r->o->at : -2, tr->depth,
	    &t);
	if (r->o->json) {
		json_obj_begin(j);
		json_kv_u64(j, "device", dev->device);
		json_kv_i64(j, "at", t.at);
		json_kv_u64(j, "bytes", t.bytes);
		json_kv_u64(j, "count", t.count);
		json_kv_u64(j, "n_sites", t.n_roots);
		json_key(j, "sites");
		json_arr_begin(j);
		for (i = 0; i < t.n_roots && i < limit; i++)
			json_node(j, r->sites, &t, t.roots[i], limit);
		json_arr_end(j);
		json_obj_end(j);
	} else {
		if (!dev->first)
			printf("\n");
		printf("Device %u %s: %s live in "
		       "%s block%s (requested bytes)\n\n",
		    dev->device, cli_an_at(where, sizeof where, dev, t.at),
		    sv_fmt_size(a, sizeof a, t.bytes),
		    sv_fmt_count(b, sizeof b, t.count),
		    t.count == 1 ? "" : "s");
		printf("  %10s %7s %7s  %s\n", "bytes", "share",
		    "blocks", "call site <- callers");
		for (i = 0; i < t.n_roots && i < limit; i++)
			text_node(r->sites, &t, t.roots[i], limit);
		if (t.n_roots > limit)
			printf("  ... %" PRIu64 " more sites (--limit 0 "
			       "for all)\n", (uint64_t)t.n_roots - limit);
	}
	an_top_destroy(&t);
	return 0;
}

int
cmd_top(const struct cli_opts *o)
{
	struct cli_opts so = *o;
	struct top_run tr;

	so.frames = 1; /* --frames is the tree depth here */
	tr.depth = o->frames > 0 ? (uint32_t)o->frames : 3;
	return cli_an_run(o, &so, CLI_AN_RULES, &tr.r,
	    o->by_category ? top_cat_device : top_device, &tr);
}
