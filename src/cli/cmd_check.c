/*
 * snapview check: replays every device (or --device D) forward from the
 * reconstructed start state and compares with the file's final segments;
 * checks the file's own segment totals. The forward pass is the one the
 * index made (its findings are saved with the checkpoints): a reopen only
 * seeks to the end. Exit 0 when consistent, 4 when any difference is
 * found. The mismatches are counted by kind (their message with every
 * number as N), then at most --limit of them are listed. Budgets
 * (--max-peak, ...; cli_budget.h) are judged on each device too: exit 5
 * when one is broken.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_budget.h"
#include "replay/replay.h"
#include "util/json.h"
#include "util/units.h"
#include "util/xalloc.h"

/* A kind of mismatch: the message with its numbers as N. */
struct kind {
	char text[sizeof ((struct replay_issue *)0)->msg];
	uint64_t count;
	uint64_t first;		/* the first issue of this kind */
};

/* msg with every number (decimal, or 0x and hex digits) as N. */
static void
kind_of(const char *msg, char *out, size_t size)
{
	size_t n = 0;

	while (*msg != '\0' && n + 1 < size) {
		if (msg[0] == '0' && msg[1] == 'x' &&
		    isxdigit((unsigned char)msg[2])) {
			for (msg += 2; isxdigit((unsigned char)*msg); msg++)
				;
			out[n++] = 'N';
		} else if (isdigit((unsigned char)*msg)) {
			while (isdigit((unsigned char)*msg))
				msg++;
			out[n++] = 'N';
		} else
			out[n++] = *msg++;
	}
	out[n] = '\0';
}

static int
kind_cmp(const void *a, const void *b)
{
	const struct kind *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The kinds of the kept issues, the most frequent first (then in the
 * order found); *n of them, the array the caller frees. */
static struct kind *
kinds(const struct replay_check *c, size_t *n)
{
	struct kind *k = NULL;
	size_t cap = 0, j;
	uint64_t i;
	char t[sizeof k->text];

	*n = 0;
	for (i = 0; i < c->n_kept; i++) {
		kind_of(c->issues[i].msg, t, sizeof t);
		for (j = 0; j < *n && strcmp(k[j].text, t) != 0; j++)
			;
		if (j == *n) {
			XGROW(k, cap, *n + 1);
			memcpy(k[j].text, t, sizeof t);
			k[j].count = 0;
			k[j].first = i;
			(*n)++;
		}
		k[j].count++;
	}
	if (*n > 1)
		qsort(k, *n, sizeof *k, kind_cmp);
	return k;
}

static void
print_ev(char *buf, size_t n, int64_t ev)
{
	if (ev == REPLAY_EV_END)
		snprintf(buf, n, "end");
	else if (ev == REPLAY_EV_FILE)
		snprintf(buf, n, "file");
	else
		snprintf(buf, n, "event %" PRId64, ev);
}

static void
text_device(uint32_t d, const struct replay_info *in,
    const struct replay_check *c, uint64_t limit)
{
	struct kind *k;
	uint64_t i, shown;
	size_t nk, j;
	char ev[32], a[32], b[32];

	printf("Device %u: %s\n", d, c->n_issues ? "INCONSISTENT" : "OK");
	printf("  events replayed:   %" PRIu64 "%s\n", in->n_events,
	    in->legacy_no_trace ? " (no trace: state at the end only)" : "");
	printf("  segments:          %" PRIu64 "\n", c->n_segments);
	printf("  blocks:            %" PRIu64 "\n", c->n_blocks);
	printf("  pre-trace blocks:  %" PRIu64 " (alive before the first "
	       "event)\n", in->n_pre_blocks);
	printf("  ghost blocks:      %" PRIu64 " (alive at the end, allocated "
	       "before the trace)\n", in->n_ghost);
	printf("  frees w/o alloc:   %" PRIu64 "\n", in->n_free_no_alloc);
	printf("  workspace triples: %" PRIu64 "\n", in->n_workspace);
	if (in->n_unknown)
		printf("  unknown actions:   %" PRIu64 " (skipped)\n",
		    in->n_unknown);
	if (in->npu_rounding)
		printf("  block rounding:    torch_npu (requested + 32, to "
		       "512)\n");
	for (i = 0; i < c->n_notes; i++) {
		if (c->notes[i].addr != 0)
			printf("  note: 0x%" PRIx64 ": %s\n",
			    c->notes[i].addr, c->notes[i].msg);
		else
			printf("  note: %s\n", c->notes[i].msg);
	}
	if (c->n_issues == 0)
		return;
	printf("  %s mismatch%s%s\n", sv_fmt_count(a, sizeof a, c->n_issues),
	    c->n_issues == 1 ? "" : "es", c->n_issues > 1 ? ", by kind:" : "");
	k = kinds(c, &nk);
	for (j = 0; c->n_issues > 1 && j < nk; j++)
		printf("  %9s  %s\n", sv_fmt_count(a, sizeof a, k[j].count),
		    k[j].text);
	free(k);
	if (c->n_issues > c->n_kept)
		printf("  %9s  not kept: check keeps the first %s\n",
		    sv_fmt_count(a, sizeof a, c->n_issues - c->n_kept),
		    sv_fmt_count(b, sizeof b, REPLAY_MAX_ISSUES));
	shown = c->n_kept < limit ? c->n_kept : limit;
	for (i = 0; i < shown; i++) {
		print_ev(ev, sizeof ev, c->issues[i].ev);
		printf("  mismatch at %s: 0x%" PRIx64 ": %s\n", ev,
		    c->issues[i].addr, c->issues[i].msg);
	}
	if (c->n_kept > shown)
		printf("  ... %s more (--limit 0 for all)\n",
		    sv_fmt_count(a, sizeof a, c->n_kept - shown));
}

static void
json_issues(struct json *j, const char *key, const struct replay_issue *v,
    uint64_t n)
{
	uint64_t i;

	json_key(j, key);
	json_arr_begin(j);
	for (i = 0; i < n; i++) {
		json_obj_begin(j);
		if (v[i].ev >= 0)
			json_kv_i64(j, "event", v[i].ev);
		else
			json_kv_str(j, "event", v[i].ev == REPLAY_EV_FILE
				? "file" : "end");
		json_kv_u64(j, "addr", v[i].addr);
		json_kv_str(j, "msg", v[i].msg);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void
json_device(struct json *j, uint32_t d, const struct replay_info *in,
    const struct replay_check *c, uint64_t limit)
{
	struct kind *k;
	size_t nk, i;

	json_obj_begin(j);
	json_kv_u64(j, "device", d);
	json_kv_bool(j, "ok", c->n_issues == 0);
	json_kv_u64(j, "events", in->n_events);
	json_kv_bool(j, "no_trace", in->legacy_no_trace);
	json_kv_u64(j, "segments", c->n_segments);
	json_kv_u64(j, "blocks", c->n_blocks);
	json_kv_u64(j, "pre_trace_blocks", in->n_pre_blocks);
	json_kv_u64(j, "ghost_blocks", in->n_ghost);
	json_kv_u64(j, "frees_without_alloc", in->n_free_no_alloc);
	json_kv_u64(j, "workspace_triples", in->n_workspace);
	json_kv_u64(j, "unknown_actions", in->n_unknown);
	json_kv_bool(j, "npu_rounding", in->npu_rounding);
	json_kv_u64(j, "mismatch_count", c->n_issues);
	json_kv_u64(j, "mismatches_kept", c->n_kept);
	json_key(j, "mismatch_kinds");
	json_arr_begin(j);
	k = kinds(c, &nk);
	for (i = 0; i < nk; i++) {
		json_obj_begin(j);
		json_kv_str(j, "kind", k[i].text);
		json_kv_u64(j, "count", k[i].count);
		json_obj_end(j);
	}
	free(k);
	json_arr_end(j);
	json_issues(j, "mismatches", c->issues,
	    c->n_kept < limit ? c->n_kept : limit);
	json_issues(j, "notes", c->notes, c->n_notes);
}

int
cmd_check(const struct cli_opts *o)
{
	struct cli_input in;
	struct json j;
	uint64_t limit = cli_limit(o, 20);
	uint32_t d, nd, lo, hi;
	struct an_budget_limits lim;
	int rc, bad = 0, first = 1, broken = 0, nb = 0, k;

	if (cli_budget_parse(o, &lim) != 0)
		return CLI_EXIT_USAGE;
	for (k = 0; k < AN_BUDGET_COUNT; k++)
		nb += lim.set[k];
	if ((rc = cli_open(o, o->file, &in)) != 0)
		return rc;
	nd = snap_device_count(in.snap);
	lo = 0;
	hi = nd;
	if (o->device >= 0) {
		int64_t dd = cli_device(o, in.snap);

		if (dd < 0) {
			cli_close(&in);
			return CLI_EXIT_USAGE;
		}
		lo = (uint32_t)dd;
		hi = lo + 1;
	}
	if (o->json) {
		cli_json_init(&j);
		json_obj_begin(&j);
		json_kv_str(&j, "file", o->file);
		json_key(&j, "devices");
		json_arr_begin(&j);
	}
	for (d = lo; d < hi; d++) {
		struct sv_error err;
		struct replay_check c;
		struct replay *r;

		if (o->device < 0 && !snap_device_has_data(in.snap, d))
			continue;
		sv_error_clear(&err);
		/* the index's replay, with the findings of the forward pass
		 * it made of these bytes (--no-cache: a fresh replay) */
		r = cli_replay(&in, d, &err);
		if (r == NULL || replay_check(r, &c, &err) != 0) {
			replay_free(r);
			cli_close(&in);
			return cli_report(o->file, &err);
		}
		bad |= c.n_issues > 0;
		if (o->json)
			json_device(&j, d, replay_info(r), &c, limit);
		else {
			if (!first)
				printf("\n");
			text_device(d, replay_info(r), &c, limit);
		}
		first = 0;
		replay_check_destroy(&c);
		if (nb > 0 && cli_budget_device(&in, d, r, &lim, o->json ? &j :
		    NULL, &broken, &err) != 0) {
			replay_free(r);
			cli_close(&in);
			return cli_report(o->file, &err);
		}
		if (o->json)
			json_obj_end(&j);
		replay_free(r);
	}
	if (o->json) {
		json_arr_end(&j);
		json_kv_bool(&j, "ok", !bad);
		if (nb > 0)
			json_kv_bool(&j, "budgets_ok", !broken);
		json_obj_end(&j);
		json_end(&j);
	} else if (first)
		printf("%s: no device has data\n", cli_shown(o->file));
	cli_close(&in);
	if (broken)
		return CLI_EXIT_BUDGET;
	return bad ? CLI_EXIT_INCONSISTENT : CLI_EXIT_OK;
}
