/*
 * snapview frag [--at N]: reserved vs allocated, internal vs external
 * waste, free blocks, every segment_alloc with its gap and trigger
 * (worst first), and hints tied to the numbers.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "analysis/frag.h"
#include "cli/cli.h"
#include "cli/cli_an.h"
#include "cli/cli_whatif.h"
#include "index/idx_timeline.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/units.h"

static double
pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void
text_alloc(struct an_sites *s, const struct an_frag_alloc *x)
{
	char a[32], b[32], c[32], e[32];

	printf("  #%-8" PRId64 " %-7s %10s  gap %10s  request %10s",
	    x->ev, x->is_map ? "map" : "segment", sv_fmt_size(a, sizeof a,
						       x->size),
	    sv_fmt_size(b, sizeof b, x->gap),
	    x->req_ev >= 0 ? sv_fmt_size(c, sizeof c, x->request) : "-");
	if (x->has_state && x->req_ev >= 0 && (x->pool[0] != 0 ||
	    x->pool[1] != 0))
		printf("\n             free on its stream in pool (%" PRId64
		       ",%" PRId64 "), %s blocks, %s, largest block %s "
		       "(all pools %s)", x->pool[0], x->pool[1],
		    x->large ? "large" : "small",
		    sv_fmt_size(e, sizeof e, x->pool_free),
		    sv_fmt_size(a, sizeof a, x->pool_largest),
		    sv_fmt_size(b, sizeof b, x->stream_free));
	else if (x->has_state && x->req_ev >= 0)
		printf("\n             free on its stream in the %s pool %s, "
		       "largest block %s (all pools %s)",
		    x->large ? "large" : "small",
		    sv_fmt_size(e, sizeof e, x->pool_free),
		    sv_fmt_size(a, sizeof a, x->pool_largest),
		    sv_fmt_size(b, sizeof b, x->stream_free));
	else if (x->has_state)
		printf("\n             free on its stream %s, largest block %s",
		    sv_fmt_size(e, sizeof e, x->stream_free),
		    sv_fmt_size(a, sizeof a, x->stream_largest));
	printf("\n             at ");
	cli_an_site_text(stdout, s, x->site);
	printf("\n");
	if (x->has_state)
		cli_an_isolation_text(&x->iso, "             ");
}

static void
print_pool(const char *name, const struct an_frag_pool *p)
{
	char a[32], b[32], c[32];

	printf("%s %" PRIu64 " segment%s, %s reserved, %s free in %" PRIu64
	       " block%s (largest %s)\n", name, p->segments,
	    p->segments == 1 ? "" : "s",
	    sv_fmt_size(a, sizeof a, p->reserved),
	    sv_fmt_size(b, sizeof b, p->free_bytes), p->free_blocks,
	    p->free_blocks == 1 ? "" : "s",
	    sv_fmt_size(c, sizeof c, p->largest_free));
}

/* Cached memory, pools and reserved over the trace. */
static void
print_cached(const struct an_frag *f)
{
	const struct an_frag_state *st = &f->state;
	char a[32], b[32], c[32];

	printf("  cached:        %" PRIu64 " of %u segment%s hold%s no live "
	       "block: %s; empty_cache() would give back %s\n",
	    st->whole_free_segs, st->n_segs, st->n_segs == 1 ? "" : "s",
	    st->whole_free_segs == 1 ? "s" : "",
	    sv_fmt_size(a, sizeof a, st->whole_free_bytes),
	    sv_fmt_size(b, sizeof b, st->release_bytes));
	if (st->private_free_bytes > 0)
		printf("                 (%s of them in CUDA graph pools, "
		       "released only with their graphs)\n",
		    sv_fmt_size(a, sizeof a, st->private_free_bytes));
	print_pool("  small pool:   ", &st->pools[0]);
	print_pool("  large pool:   ", &st->pools[1]);
	if (st->has_private) {
		/* only with private pools: other files print what they did */
		printf("  by pool and stream (free memory serves only its "
		    "own):\n");
		cli_an_pool_streams_text(st->groups, st->n_groups, "    ");
	}
	printf("  reserved:      %s now; %s at the allocation peak (",
	    sv_fmt_size(a, sizeof a, st->reserved),
	    sv_fmt_size(b, sizeof b, f->reserved_at_peak));
	if (f->peak_ev >= 0)
		printf("#%" PRId64, f->peak_ev);
	else
		printf("before the trace");
	printf(", %s allocated); at most %s (",
	    sv_fmt_size(c, sizeof c, f->peak_allocated),
	    sv_fmt_size(a, sizeof a, f->reserved_max));
	if (f->reserved_max_ev >= 0)
		printf("#%" PRId64 ")\n", f->reserved_max_ev);
	else
		printf("before the trace)\n");
	printf("  expandable segments: %s\n", f->expandable_in_use ?
	    "in use" : "not in use");
}

static void
print_text(struct an_sites *s, const struct an_frag *f, uint64_t limit,
    const char *where)
{
	const struct an_frag_state *st = &f->state;
	char a[32], b[32], c[32];
	uint64_t i;
	unsigned k;

	printf("Device %u %s\n", f->device, where);
	printf("  reserved:      %s in %u segment%s\n",
	    sv_fmt_size(a, sizeof a, st->reserved), st->n_segs,
	    st->n_segs == 1 ? "" : "s");
	printf("  allocated:     %s in blocks (%s requested)\n",
	    sv_fmt_size(a, sizeof a, st->allocated),
	    sv_fmt_size(b, sizeof b, st->requested));
	printf("  waste:         internal (rounding) %s, external (free "
	       "blocks) %s = %.1f%% of reserved\n",
	    sv_fmt_size(a, sizeof a, st->internal),
	    sv_fmt_size(b, sizeof b, st->external),
	    pct(st->internal + st->external, st->reserved));
	printf("  free blocks:   %" PRIu64 ", largest %s%s%s\n",
	    st->free_blocks, sv_fmt_size(a, sizeof a, st->largest_free),
	    st->pending ? ", pending free " : "",
	    st->pending ? sv_fmt_size(b, sizeof b, st->pending) : "");
	print_cached(f);
	if (st->free_blocks > 0) {
		printf("  free block sizes:\n");
		for (k = 0; k < AN_FRAG_BUCKETS; k++)
			if (st->hist[k])
				printf("    %10s .. %-10s %6" PRIu64
				       " %-6s %10s\n",
				    sv_fmt_size(a, sizeof a, (uint64_t)1 << k),
				    sv_fmt_size(b, sizeof b,
					((uint64_t)1 << (k + 1)) - 1),
				    st->hist[k],
				    st->hist[k] == 1 ? "block" : "blocks",
				    sv_fmt_size(c, sizeof c,
					st->hist_bytes[k]));
	}
	if (st->n_segs > 0) {
		printf("  segments with the most free memory:\n");
		for (i = 0; i < st->n_segs && i < limit; i++) {
			const struct an_frag_seg *g = &st->segs[i];

			if (g->free_bytes == 0)
				break;
			printf("    %#" PRIx64 " %10s stream %" PRIu64
			       ": %s free in %" PRIu64 " gap%s, largest %s\n",
			    g->addr, sv_fmt_size(a, sizeof a, g->size),
			    g->stream, sv_fmt_size(b, sizeof b, g->free_bytes),
			    g->gaps, g->gaps == 1 ? "" : "s",
			    sv_fmt_size(c, sizeof c, g->largest_free));
		}
	}
	printf("\nSegment allocations: %" PRIu64 " (largest gap reserved - "
	       "allocated first)\n", f->n_allocs);
	if (f->n_examined < f->n_allocs && f->n_examined > 0)
		printf("  (free memory at the moment looked up for %" PRIu64
		       " of them: the %u with the largest gaps and the "
		       "last%s)\n", f->n_examined, AN_FRAG_EXAMINE - 1,
		    f->n_examined < AN_FRAG_EXAMINE ? ", one of them" : "");
	for (i = 0; i < f->n_allocs && i < limit; i++)
		text_alloc(s, &f->allocs[i]);
	if (f->last >= 0) {
		printf("\nLast segment allocation:\n");
		text_alloc(s, &f->allocs[f->last]);
	}
	if (f->n_hints > 0) {
		printf("\nHints:\n");
		for (k = 0; k < (unsigned)f->n_hints; k++) {
			printf("  - ");
			sv_escape_fputs(stdout, f->hints[k].text);
			printf("\n");
		}
	}
}

static const char *
hint_name(int kind)
{
	switch (kind) {
	case AN_HINT_EXPANDABLE: return "expandable_segments";
	case AN_HINT_MAX_SPLIT: return "max_split_size_mb";
	case AN_HINT_EMPTY_CACHE: return "empty_cache";
	case AN_HINT_ISOLATED: return "pool_stream_isolation";
	default: return "bucketing";
	}
}

static void
json_alloc(struct json *j, struct an_sites *s, const struct an_frag_alloc *x)
{
	json_obj_begin(j);
	json_kv_i64(j, "event", x->ev);
	json_kv_str(j, "action", x->is_map ? "segment_map" : "segment_alloc");
	json_kv_u64(j, "size", x->size);
	json_kv_u64(j, "stream", x->stream);
	json_kv_u64(j, "reserved_before", x->reserved_before);
	json_kv_u64(j, "allocated_before", x->allocated_before);
	json_kv_u64(j, "gap", x->gap);
	json_kv_i64(j, "request_event", x->req_ev);
	json_key(j, "request");
	if (x->req_ev >= 0)
		json_u64(j, x->request);
	else
		json_null(j);
	json_key(j, "stream_free");
	if (x->has_state)
		json_u64(j, x->stream_free);
	else
		json_null(j);
	json_key(j, "stream_largest_free_block");
	if (x->has_state)
		json_u64(j, x->stream_largest);
	else
		json_null(j);
	json_key(j, "request_pool");
	if (x->req_ev >= 0)
		json_str(j, x->large ? "large" : "small");
	else
		json_null(j);
	json_key(j, "pool_free");
	if (x->has_state && x->req_ev >= 0)
		json_u64(j, x->pool_free);
	else
		json_null(j);
	json_key(j, "pool_largest_free_block");
	if (x->has_state && x->req_ev >= 0)
		json_u64(j, x->pool_largest);
	else
		json_null(j);
	json_key(j, "request_pool_id");
	if (x->has_state && x->req_ev >= 0) {
		json_arr_begin(j);
		json_i64(j, x->pool[0]);
		json_i64(j, x->pool[1]);
		json_arr_end(j);
	} else {
		json_null(j);
	}
	if (x->has_state && x->req_ev >= 0)
		cli_an_isolation_json(j, "isolated", &x->iso);
	else {
		json_key(j, "isolated");
		json_null(j);
	}
	json_key(j, "site");
	json_obj_begin(j);
	cli_an_site_json(j, s, x->site, x->stack);
	json_obj_end(j);
	json_obj_end(j);
}

static void
json_frag(struct json *j, struct an_sites *s, const struct an_frag *f,
    uint64_t limit)
{
	const struct an_frag_state *st = &f->state;
	uint64_t i;
	unsigned k;

	json_obj_begin(j);
	json_kv_u64(j, "device", f->device);
	json_kv_i64(j, "at", st->at);
	json_kv_u64(j, "reserved", st->reserved);
	json_kv_u64(j, "allocated_blocks", st->allocated);
	json_kv_u64(j, "allocated", st->requested);
	json_kv_u64(j, "internal", st->internal);
	json_kv_u64(j, "external", st->external);
	json_kv_u64(j, "pending_free", st->pending);
	json_kv_u64(j, "largest_free_block", st->largest_free);
	json_kv_u64(j, "free_blocks", st->free_blocks);
	json_kv_u64(j, "whole_free_segments", st->whole_free_segs);
	json_kv_u64(j, "whole_free_bytes", st->whole_free_bytes);
	json_kv_u64(j, "empty_cache_releases", st->release_bytes);
	json_kv_u64(j, "graph_pool_free_bytes", st->private_free_bytes);
	cli_an_pool_streams_json(j, "pool_streams", st->groups, st->n_groups);
	json_key(j, "pools");
	json_arr_begin(j);
	for (k = 0; k < 2; k++) {
		json_obj_begin(j);
		json_kv_str(j, "pool", k ? "large" : "small");
		json_kv_u64(j, "segments", st->pools[k].segments);
		json_kv_u64(j, "reserved", st->pools[k].reserved);
		json_kv_u64(j, "free", st->pools[k].free_bytes);
		json_kv_u64(j, "free_blocks", st->pools[k].free_blocks);
		json_kv_u64(j, "largest_free_block",
		    st->pools[k].largest_free);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_i64(j, "peak_event", f->peak_ev);
	json_kv_u64(j, "peak_allocated", f->peak_allocated);
	json_kv_u64(j, "reserved_at_peak", f->reserved_at_peak);
	json_kv_i64(j, "reserved_max_event", f->reserved_max_ev);
	json_kv_u64(j, "reserved_max", f->reserved_max);
	json_kv_bool(j, "expandable_in_use", f->expandable_in_use);
	json_kv_str(j, "alloc_conf_env", f->conf_env);
	json_kv_u64(j, "varying_sites", f->n_varying);
	json_key(j, "free_histogram");
	json_arr_begin(j);
	for (k = 0; k < AN_FRAG_BUCKETS; k++) {
		if (!st->hist[k])
			continue;
		json_obj_begin(j);
		json_kv_u64(j, "min", (uint64_t)1 << k);
		json_kv_u64(j, "max", ((uint64_t)1 << (k + 1)) - 1);
		json_kv_u64(j, "count", st->hist[k]);
		json_kv_u64(j, "bytes", st->hist_bytes[k]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_key(j, "segments");
	json_arr_begin(j);
	for (i = 0; i < st->n_segs && i < limit; i++) {
		json_obj_begin(j);
		json_kv_u64(j, "address", st->segs[i].addr);
		json_kv_u64(j, "size", st->segs[i].size);
		json_kv_u64(j, "stream", st->segs[i].stream);
		json_kv_u64(j, "allocated", st->segs[i].allocated);
		json_kv_u64(j, "free", st->segs[i].free_bytes);
		json_kv_u64(j, "gaps", st->segs[i].gaps);
		json_kv_u64(j, "largest_free_block", st->segs[i].largest_free);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_u64(j, "n_segment_allocs", f->n_allocs);
	json_kv_u64(j, "examined_segment_allocs", f->n_examined);
	json_kv_u64(j, "unusable_free_count", f->n_unusable);
	json_kv_u64(j, "isolated_count", f->n_isolated);
	json_key(j, "segment_allocs");
	json_arr_begin(j);
	for (i = 0; i < f->n_allocs && i < limit; i++)
		json_alloc(j, s, &f->allocs[i]);
	json_arr_end(j);
	json_key(j, "last_segment_alloc");
	if (f->last >= 0)
		json_alloc(j, s, &f->allocs[f->last]);
	else
		json_null(j);
	json_key(j, "hints");
	json_arr_begin(j);
	for (k = 0; k < (unsigned)f->n_hints; k++) {
		json_obj_begin(j);
		json_kv_str(j, "kind", hint_name(f->hints[k].kind));
		json_kv_str(j, "text", f->hints[k].text);
		json_obj_end(j);
	}
	json_arr_end(j);
	/* the object is closed by frag_device(), after the whatif key */
}

static int
frag_device(void *ctx, const struct cli_an_dev *dev, struct sv_error *err)
{
	struct cli_an_run *fr = ctx;
	struct an_frag f;
	struct an_steps st;
	char where[64];
	int r;

	if (an_steps_find(fr->snap, dev->device, &st, err) != 0)
		return -1;
	if (st.n_bad > 0)
		fprintf(stderr, "snapview: warning: %s: device %u: %s\n",
		    cli_shown(fr->o->file), dev->device, cli_shown(st.bad));
	r = an_frag_with_steps(fr->snap, dev->tl, dev->replay, fr->sites,
	    &st, fr->o->has_at ? fr->o->at : -2, &f, err);
	an_steps_destroy(&st);
	if (r != 0)
		return -1;
	if (fr->o->json) {
		json_frag(&fr->j, fr->sites, &f, fr->limit);
		r = cli_whatif_frag(fr->snap, dev->device, dev->replay,
		    dev->tl, fr->sites, &f, &fr->j, err);
		json_obj_end(&fr->j);
	} else {
		if (!dev->first)
			printf("\n");
		print_text(fr->sites, &f, fr->limit, cli_an_at(where,
		    sizeof where, dev, f.state.at));
		r = cli_whatif_frag(fr->snap, dev->device, dev->replay,
		    dev->tl, fr->sites, &f, NULL, err);
	}
	an_frag_destroy(&f);
	return r;
}

int
cmd_frag(const struct cli_opts *o)
{
	struct cli_an_run fr;

	return cli_an_run(o, o, CLI_AN_REPLAY, &fr, frag_device, &fr);
}
