/*
 * check's budgets: the four --max-* options parsed, each device's
 * figures judged (analysis/budget.c) and printed, one line per budget in
 * text, the "budgets" array in JSON.
 */
#include "config.h"

#include "cli/cli_budget.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_an.h"
#include "index/idx_timeline.h"
#include "util/units.h"

int
cli_budget_parse(const struct cli_opts *o, struct an_budget_limits *lim)
{
	int k, bad;

	memset(lim, 0, sizeof *lim);
	for (k = 0; k < AN_BUDGET_COUNT; k++) {
		if (o->max[k] == NULL)
			continue;
		lim->set[k] = 1;
		if (k == AN_BUDGET_FRAG)
			bad = an_budget_parse_pct(o->max[k], &lim->pct) != 0;
		else
			bad = an_budget_parse_size(o->max[k],
			    &lim->bytes[k]) != 0;
		if (bad) {
			fprintf(stderr, "snapview: %s: '%s': expected %s\n",
			    an_budget_option(k), cli_shown(o->max[k]),
			    k == AN_BUDGET_FRAG ? "a percentage, 0 to 100 "
			    "(10%)" : "a size (70G, 100M, 4096)");
			return -1;
		}
	}
	return 0;
}

/* "70.0 GiB" or, for a negative growth, "-1.0 MiB". */
static const char *
signed_size(char *buf, size_t size, int64_t v)
{
	if (v >= 0)
		return sv_fmt_size(buf, size, (uint64_t)v);
	buf[0] = '-';
	sv_fmt_size(buf + 1, size - 1, (uint64_t)-v);
	return buf;
}

static void
text_budget(uint32_t d, const struct an_budget *b)
{
	char l[32], a[32];

	printf("  budget %-16s %-6s ", an_budget_name(b->kind),
	    !b->judged ? "-" : b->ok ? "ok" : "BROKEN");
	if (b->kind == AN_BUDGET_FRAG)
		printf("limit %.2f%%, actual %.2f%% (%s waste)", b->limit_pct,
		    b->actual_pct, signed_size(a, sizeof a, b->actual));
	else if (b->judged)
		printf("limit %s, actual %s", sv_fmt_size(l, sizeof l,
		    b->limit), signed_size(a, sizeof a, b->actual));
	else
		printf("limit %s, not judged: fewer than two complete steps",
		    sv_fmt_size(l, sizeof l, b->limit));
	if (b->kind == AN_BUDGET_GROWTH && b->judged)
		printf(", device %u step %" PRId64 " (events %" PRId64 "-%"
		    PRId64 ")", d, b->step, b->step_first, b->step_last);
	else if (b->judged && b->event >= 0)
		printf(", device %u event %" PRId64, d, b->event);
	else if (b->judged)
		printf(", device %u before the first event", d);
	printf("\n");
}

static void
json_budget(struct json *j, const struct an_budget *b)
{
	json_obj_begin(j);
	json_kv_str(j, "name", an_budget_name(b->kind));
	json_kv_str(j, "unit", b->kind == AN_BUDGET_FRAG ? "percent" :
	    "bytes");
	if (b->kind == AN_BUDGET_FRAG) {
		json_kv_double(j, "limit", b->limit_pct);
		json_kv_double(j, "actual", b->actual_pct);
		json_kv_i64(j, "waste", b->actual);
	} else {
		json_kv_u64(j, "limit", b->limit);
		json_key(j, "actual");
		if (b->judged)
			json_i64(j, b->actual);
		else
			json_null(j);
	}
	json_kv_bool(j, "ok", b->ok);
	json_kv_bool(j, "judged", b->judged);
	json_key(j, "event");
	if (b->judged)
		json_i64(j, b->event);
	else
		json_null(j);
	json_key(j, "step");
	if (b->step > 0) {
		json_i64(j, b->step);
		json_kv_i64(j, "step_first", b->step_first);
		json_kv_i64(j, "step_last", b->step_last);
	} else
		json_null(j);
	json_obj_end(j);
}

int
cli_budget_device(const struct cli_input *in, uint32_t d, struct replay *r,
    const struct an_budget_limits *lim, struct json *j, int *broken,
    struct sv_error *err)
{
	struct an_budget b[AN_BUDGET_COUNT];
	struct idx_timeline own;
	const struct idx_timeline *tl;
	int n, i;

	tl = cli_an_timeline(in, d, &own, err);
	if (tl == NULL) {
		idx_timeline_destroy(&own);
		return -1;
	}
	n = an_budget_eval(in->snap, d, tl, r, lim, b, err);
	idx_timeline_destroy(&own);
	if (n < 0)
		return -1;
	if (j != NULL) {
		json_key(j, "budgets");
		json_arr_begin(j);
	}
	for (i = 0; i < n; i++) {
		if (!b[i].ok)
			*broken = 1;
		if (j != NULL)
			json_budget(j, &b[i]);
		else
			text_budget(d, &b[i]);
	}
	if (j != NULL)
		json_arr_end(j);
	return 0;
}
