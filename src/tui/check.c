/*
 * The replay check in the viewer: the same as `snapview check` for the
 * device shown (forward replay from the reconstructed start must give
 * the file's final segments). It runs when the device opens if its trace
 * is short enough to replay at once (CHECK_AUTO_MAX events), else when
 * the info view opens or ! asks for it. When the file is inconsistent
 * the status line says so with the count, and ! goes to the first
 * mismatch: its event, or the segment at the end when the mismatch is in
 * the file's own totals.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/fmt.h"
#include "tui/app.h"
#include "tui/replay_bg.h"

#define CHECK_AUTO_MAX 2000000

void
check_free(struct app *a)
{
	if (a->chk_done > 0)
		replay_check_destroy(&a->chk);
	memset(&a->chk, 0, sizeof a->chk);
	a->chk_done = 0;
}

int
check_run(struct app *a, int force)
{
	struct sv_error err;
	int r;

	if (a->chk_done != 0)
		return a->chk_done;
	if (!force && a->tl.n_events > CHECK_AUTO_MAX)
		return 0;
	if (a->src.replay == NULL) {
		if (replay_bg_pending(a))
			return -1;      /* not yet: run when it comes */
		a->chk_done = -1;       /* no replay: the final state only */
		return -1;
	}
	sv_error_clear(&err);
	r = replay_check(a->src.replay, &a->chk, &err);
	cursor_replay_moved(a);
	if (r != 0) {
		app_msg(a, "check: %s", err.msg);
		a->chk_done = -1;
		return -1;
	}
	a->chk_done = 1;
	return 1;
}

const char *
check_warning(struct app *a, char *buf, size_t size)
{
	char n[FMT_BUF];

	if (a->chk_done == -1 && a->src.replay == NULL)
		snprintf(buf, size, "! no replay: final state");
	else if (a->chk_done > 0 && a->chk.n_issues > 0)
		snprintf(buf, size, "! %s mismatch%s", fmt_count(n, sizeof n,
		    a->chk.n_issues), a->chk.n_issues == 1 ? "" : "es");
	else
		return NULL;
	return buf;
}

/* The segment of the state at the cursor holding addr, selected. */
static void
select_addr(struct app *a, uint64_t addr)
{
	uint32_t s;

	for (s = 0; s < a->st->n_segments; s++)
		if (a->st->segments[s].addr <= addr && addr -
		    a->st->segments[s].addr < a->st->segments[s].size) {
			a->sv.sel_seg = s;
			a->sv.sel_block = SEGMAP_NONE;
			return;
		}
}

void
check_first(struct app *a)
{
	const struct replay_issue *first = NULL, *is;
	char e[FMT_BUF];
	uint64_t i;

	if (check_run(a, 1) < 0) {
		if (replay_bg_pending(a))
			replay_bg_say(a, "the check");
		else
			app_msg(a, "no replay to check: the segment map "
			    "shows the final state");
		return;
	}
	if (a->chk.n_issues == 0) {
		app_msg(a, "the replay reproduces the file: no mismatch");
		return;
	}
	/* the earliest event; mismatches at the end or in the file's own
	 * totals after those */
	for (i = 0; i < a->chk.n_kept; i++) {
		is = &a->chk.issues[i];
		if (first == NULL || (is->ev >= 0 && (first->ev < 0 ||
		    is->ev < first->ev)))
			first = is;
	}
	cursor_set(a, first->ev >= 0 ? first->ev :
	    (int64_t)a->tl.n_events - 1);
	a->detail = DETAIL_EVENT;
	select_addr(a, first->addr);
	app_msg(a, "mismatch 1 of %" PRIu64 " %s %s: %.150s",
	    a->chk.n_issues, first->ev >= 0 ? "at" : "in", first->ev >= 0 ?
	    fmt_event(e, sizeof e, first->ev) : first->ev == REPLAY_EV_FILE ?
	    "the file" : "the end", first->msg);
}
