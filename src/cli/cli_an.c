/*
 * Output helpers shared by the analysis commands. See cli_an.h.
 */
#include "config.h"

#include "cli/cli_an.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "index/idx.h"
#include "replay/replay.h"

#include "util/escape.h"
#include "util/units.h"

const char *
cli_an_at(char *buf, size_t size, const struct cli_an_dev *dev, int64_t at)
{
	if (dev->tl == NULL || dev->tl->n_events == 0)
		snprintf(buf, size, "at the end (no trace in this file: its "
		    "segments only)");
	else
		snprintf(buf, size, "after event #%" PRId64, at);
	return buf;
}

int
cli_an_want_device(const struct snapshot *s, int64_t only, uint32_t d)
{
	if (only >= 0)
		return d == (uint64_t)only;
	return snap_device_has_data(s, d);
}

int
cli_an_each_device(const struct cli_opts *o, struct cli_input *in,
    int64_t only, int with_replay,
    int (*report)(void *ctx, const struct cli_an_dev *dev,
	struct sv_error *err),
    void *ctx)
{
	uint32_t d, n_dev = snap_device_count(in->snap);
	int first = 1;

	for (d = 0; d < n_dev; d++) {
		struct idx_timeline own;
		struct cli_an_dev dev = {d, NULL, NULL, first, in};
		struct sv_error err;
		int rc = -1;

		if (!cli_an_want_device(in->snap, only, d))
			continue;
		dev.tl = cli_an_timeline(in, d, &own, &err);
		if (dev.tl != NULL && with_replay)
			dev.replay = cli_replay(in, d, &err);
		if (dev.tl != NULL && (!with_replay || dev.replay != NULL))
			rc = report(ctx, &dev, &err);
		replay_free(dev.replay);
		idx_timeline_destroy(&own);
		if (rc != 0)
			return cli_report(o->file, &err);
		first = 0;
	}
	return 0;
}

int64_t
cli_an_only(const struct cli_opts *o, const struct snapshot *s)
{
	int64_t d;

	if (o->device < 0)
		return -1;
	d = cli_device(o, s);
	return d < 0 ? -2 : d;
}

int
cli_an_sites(const struct cli_opts *o, const struct snapshot *s,
    struct an_sites *t, uint32_t default_k)
{
	struct sv_error err;
	uint32_t k = default_k;

	sv_error_clear(&err);
	if (o->frames < 0) {
		cli_error(NULL, SV_NO_OFFSET, "--frames must be positive");
		return CLI_EXIT_USAGE;
	}
	if (o->frames > 0)
		k = o->frames > AN_SITE_MAX_FRAMES ? AN_SITE_MAX_FRAMES
						   : (uint32_t)o->frames;
	if (an_sites_init(t, s, k, o->site_regex, &err) != 0) {
		cli_error(NULL, SV_NO_OFFSET, "%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	return 0;
}

void
cli_an_frame_text(FILE *f, const struct snapshot *s, uint32_t frame)
{
	char buf[4096];

	sv_escape_fputs(f, an_frame_label(s, frame, buf, sizeof buf));
}

void
cli_an_site_text(FILE *f, const struct an_sites *t, uint32_t site)
{
	char buf[4096];

	sv_escape_fputs(f, an_site_label(t, site, buf, sizeof buf));
}

void
cli_an_blocks_site_text(FILE *f, const struct an_sites *t, uint32_t site,
    int free_stack)
{
	cli_an_site_text(f, t, site);
	if (free_stack)
		fputs(" (freed here; allocated before the trace)", f);
}

void
cli_an_frame_json(struct json *j, const struct snapshot *s, uint32_t frame)
{
	const struct snap_frame *fr = &s->frames[frame];

	json_obj_begin(j);
	json_kv_str(j, "filename", snap_str(s, fr->filename));
	json_key(j, "line");
	if (fr->line == UINT64_MAX)
		json_null(j);
	else
		json_u64(j, fr->line);
	json_kv_str(j, "name", snap_str(s, fr->name));
	json_obj_end(j);
}

uint32_t
cli_an_caller(struct an_sites *t, uint32_t stack)
{
	uint32_t path[2];

	if (an_site_path(t, stack, path, 2) < 2)
		return UINT32_MAX;
	return path[1];
}

void
cli_an_site_json(struct json *j, struct an_sites *t, uint32_t site,
    uint32_t stack)
{
	char buf[4096];
	uint32_t n, i, caller;
	const uint32_t *f = an_site_frames(t, site, &n);
	const struct snapshot *s = t->s;

	json_kv_str(j, "site", an_site_label(t, site, buf, sizeof buf));
	if (n > 0) {
		json_kv_str(j, "filename",
		    snap_str(s, s->frames[f[0]].filename));
		json_key(j, "line");
		if (s->frames[f[0]].line == UINT64_MAX)
			json_null(j);
		else
			json_u64(j, s->frames[f[0]].line);
		json_kv_str(j, "name", snap_str(s, s->frames[f[0]].name));
	} else {
		json_kv_str(j, "filename", "");
		json_key(j, "line");
		json_null(j);
		json_kv_str(j, "name", "");
	}
	json_kv_bool(j, "user_code", an_site_is_user(t, site));
	json_kv_str(j, "kind", an_site_kind_name(an_site_kind(t, site)));
	json_key(j, "frames");
	json_arr_begin(j);
	for (i = 0; i < n; i++)
		cli_an_frame_json(j, s, f[i]);
	json_arr_end(j);
	if (stack == UINT32_MAX)
		return;
	json_key(j, "caller");
	caller = cli_an_caller(t, stack);
	if (caller == UINT32_MAX)
		json_null(j);
	else
		cli_an_frame_json(j, s, caller);
}

const struct idx_timeline *
cli_an_timeline(const struct cli_input *in, uint32_t d,
    struct idx_timeline *own, struct sv_error *err)
{
	const struct idx_timeline *tl;

	memset(own, 0, sizeof *own);
	tl = in->index != NULL ? idx_timeline(in->index, d) : NULL;
	if (tl != NULL)
		return tl;
	if (idx_timeline_build(in->snap, d, own, err) != 0)
		return NULL;
	return own;
}

uint64_t
cli_an_limit(const struct cli_opts *o)
{
	return cli_limit(o, 10);
}

void
cli_an_json_begin(struct json *j, const char *file)
{
	cli_json_init(j);
	json_obj_begin(j);
	json_kv_str(j, "file", file);
	json_key(j, "devices");
	json_arr_begin(j);
}

void
cli_an_json_end(struct json *j)
{
	json_arr_end(j);
	json_obj_end(j);
	json_end(j);
}

int
cli_an_open(const struct cli_opts *o, const struct cli_opts *site_opts,
    struct cli_input *in, struct an_sites *sites, int64_t *only)
{
	int r = cli_open(o, o->file, in);

	if (r != 0)
		return r;
	if ((*only = cli_an_only(o, in->snap)) == -2 ||
	    (r = cli_an_sites(site_opts, in->snap, sites, 1)) != 0) {
		cli_close(in);
		return r ? r : CLI_EXIT_USAGE;
	}
	return 0;
}

int
cli_an_rules(const struct cli_opts *o, struct an_cat_rules *rules)
{
	struct sv_error err;

	memset(rules, 0, sizeof *rules);
	if (o->categories == NULL)
		return 0;
	sv_error_clear(&err);
	if (an_cat_rules_load(o->categories, rules, &err) != 0)
		return cli_report(o->categories, &err);
	return 0;
}

int
cli_an_classes(const struct cli_opts *o, const struct snapshot *s,
    const struct idx_timeline *tl, const struct an_cat_rules *rules,
    struct cli_an_classes *out, struct sv_error *err)
{
	memset(out, 0, sizeof *out);
	if (an_steps_find(s, tl->device, &out->steps, err) != 0)
		return -1;
	if (out->steps.n_bad > 0)
		fprintf(stderr, "snapview: warning: %s: device %u: %s%s\n",
		    cli_shown(o->file), tl->device, cli_shown(out->steps.bad),
		    out->steps.n_bad > 1 ? " (and more like it)" : "");
	if (an_categories_build(s, tl, &out->steps, rules, &out->cats,
		err) != 0) {
		an_steps_destroy(&out->steps);
		return -1;
	}
	return 0;
}

void
cli_an_classes_destroy(struct cli_an_classes *c)
{
	an_categories_destroy(&c->cats);
	an_steps_destroy(&c->steps);
}

const char *
cli_an_steps_text(const struct an_steps *st, char *buf, size_t size)
{
	char n[32];

	if (st->source == AN_STEPS_NONE && st->layers > 0)
		snprintf(buf, size, "no steps (the trace repeats %s times "
		    "inside one call: layers, not steps)",
		    sv_fmt_count(n, sizeof n, st->layers));
	else if (st->source == AN_STEPS_NONE)
		snprintf(buf, size, "no steps found");
	else
		snprintf(buf, size, "%s step%s (%s)",
		    sv_fmt_count(n, sizeof n, st->n), st->n == 1 ? "" : "s",
		    an_steps_source_text(st->source));
	return buf;
}

int
cli_an_run(const struct cli_opts *o, const struct cli_opts *site_opts,
    unsigned flags, struct cli_an_run *run,
    int (*report)(void *ctx, const struct cli_an_dev *dev,
	struct sv_error *err),
    void *ctx)
{
	struct cli_input in;
	struct an_sites sites;
	int64_t only;
	int r;

	memset(&run->rules, 0, sizeof run->rules);
	if ((r = cli_an_open(o, site_opts, &in, &sites, &only)) != 0)
		return r;
	if ((flags & CLI_AN_RULES) && (r = cli_an_rules(o, &run->rules)) != 0) {
		an_sites_destroy(&sites);
		cli_close(&in);
		return r;
	}
	run->o = o;
	run->snap = in.snap;
	run->sites = &sites;
	run->limit = cli_an_limit(o);
	if (o->json)
		cli_an_json_begin(&run->j, o->file);
	r = cli_an_each_device(o, &in, only, (flags & CLI_AN_REPLAY) != 0,
	    report, ctx);
	if (o->json)
		cli_an_json_end(&run->j);
	an_cat_rules_destroy(&run->rules);
	an_sites_destroy(&sites);
	cli_close(&in);
	run->sites = NULL;
	run->snap = NULL;
	return r;
}

unsigned
cli_an_rank_categories(const uint64_t *bytes, const uint64_t *count,
    unsigned *order)
{
	unsigned c, i, n = 0;

	for (c = 0; c < AN_CAT_COUNT; c++) {
		if (count[c] == 0)
			continue;
		for (i = n; i > 0 && bytes[order[i - 1]] < bytes[c]; i--)
			order[i] = order[i - 1];
		order[i] = c;
		n++;
	}
	return n;
}

void
cli_an_category_json(struct json *j, unsigned c, uint64_t bytes,
    uint64_t count)
{
	json_kv_str(j, "category", an_category_name(c));
	json_kv_u64(j, "bytes", bytes);
	json_kv_u64(j, "count", count);
}

void
cli_an_blocks_site_json(struct json *j, struct an_sites *t, uint32_t site,
    uint32_t stack, int free_stack)
{
	cli_an_site_json(j, t, site, stack);
	json_kv_bool(j, "free_stack", free_stack);
}

void
cli_an_pool_streams_text(const struct an_pool_stream *g, uint32_t n,
    const char *indent)
{
	char a[32], b[32], c[32], d[32];
	uint32_t i;

	for (i = 0; i < n; i++)
		printf("%spool (%" PRId64 ",%" PRId64 ")%s, stream %" PRIu64
		    ": %s reserved in %" PRIu64 " segment%s, %s free (largest "
		    "block %s small, %s large)\n", indent, g[i].pool[0],
		    g[i].pool[1], g[i].pool[0] == 0 && g[i].pool[1] == 0 ?
		    " default" : "", g[i].stream,
		    sv_fmt_size(a, sizeof a, g[i].reserved), g[i].segments,
		    g[i].segments == 1 ? "" : "s",
		    sv_fmt_size(b, sizeof b, g[i].free_bytes),
		    sv_fmt_size(c, sizeof c, g[i].largest_free[0]),
		    sv_fmt_size(d, sizeof d, g[i].largest_free[1]));
}

static void
pool_json(struct json *j, const int64_t pool[2])
{
	json_key(j, "pool_id");
	json_arr_begin(j);
	json_i64(j, pool[0]);
	json_i64(j, pool[1]);
	json_arr_end(j);
}

void
cli_an_pool_streams_json(struct json *j, const char *key,
    const struct an_pool_stream *g, uint32_t n)
{
	uint32_t i;

	json_key(j, key);
	json_arr_begin(j);
	for (i = 0; i < n; i++) {
		json_obj_begin(j);
		pool_json(j, g[i].pool);
		json_kv_bool(j, "private", g[i].pool[0] != 0 ||
		    g[i].pool[1] != 0);
		json_kv_u64(j, "stream", g[i].stream);
		json_kv_u64(j, "segments", g[i].segments);
		json_kv_u64(j, "reserved", g[i].reserved);
		json_kv_u64(j, "allocated_blocks", g[i].allocated);
		json_kv_u64(j, "free", g[i].free_bytes);
		json_kv_u64(j, "free_blocks", g[i].free_blocks);
		json_kv_u64(j, "largest_free_small", g[i].largest_free[0]);
		json_kv_u64(j, "largest_free_large", g[i].largest_free[1]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void
cli_an_isolation_json(struct json *j, const char *key,
    const struct an_isolation *iso)
{
	json_key(j, key);
	if (!iso->isolated) {
		json_null(j);
		return;
	}
	json_obj_begin(j);
	pool_json(j, iso->pool);
	json_kv_u64(j, "stream", iso->stream);
	json_kv_u64(j, "largest_free_block", iso->largest);
	json_kv_u64(j, "other_free", iso->other_free);
	json_obj_end(j);
}

void
cli_an_isolation_text(const struct an_isolation *iso, const char *indent)
{
	char a[32], b[32], p[64];

	if (!iso->isolated)
		return;
	printf("%sisolated: a %s block free in %s on stream %" PRIu64
	    " (%s free in other pools and streams)\n", indent,
	    sv_fmt_size(a, sizeof a, iso->largest),
	    an_pool_name(p, sizeof p, iso->pool), iso->stream,
	    sv_fmt_size(b, sizeof b, iso->other_free));
}
