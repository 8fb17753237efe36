/*
 * Timeline pane: title with the mode, device, cursor and peak, then the
 * Active Memory Timeline (render/timeline.h). Handles cursor moves, and
 * whatever the focus: the stacking mode, the legend, picking a band at
 * the cursor (J/K; Enter goes to its alloc event), the y range (zoom,
 * pan, fit) and the annotation jumps.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/fmt.h"
#include "render/tl_sample.h"
#include "tui/modeworker.h"
#include "tui/pane.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/xalloc.h"

#define MIN_YSPAN 64   /* bytes: the y range never gets thinner */

/* ---- title --------------------------------------------------------------- */

/* Appends part to t (size bytes); the pane title cuts what does not
 * fit, so parts go in order of importance. */
static void
title_add(char *t, size_t size, const char *part)
{
	size_t n = strlen(t);

	snprintf(t + n, size - n, "%s", part);
}

int
pane_timeline_building(struct app *a)
{
	return a->view.stack != TL_STACK_ALLOC &&
	    a->tm.groups_ok[a->view.stack] == 0;
}

/* ---- sampled bands ------------------------------------------------------- */

/* Events from which a mode being built is drawn from samples
 * (render/tl_sample.h) meanwhile: a shorter trace's build takes well
 * under a second. SNAPVIEW_TEST_SAMPLE_EVENTS=N sets it (the tests' 0:
 * every trace). */
#define SAMPLE_EVENTS 1000000

static uint64_t
sample_events(void)
{
	return app_test_number("SNAPVIEW_TEST_SAMPLE_EVENTS", SAMPLE_EVENTS);
}

/* Is mode st, being built, to be drawn from samples meanwhile? Not
 * under a highlighted set (the leak view): its part of each group is
 * the built groups' (tl_hilite_update). */
static int
sample_wanted(struct app *a, int st)
{
	return a->sampling && a->view.hl == NULL &&
	    tl_model_sample_able(&a->tm, st) && modeworker_pending(a, st);
}

int
pane_timeline_probe_due(struct app *a)
{
	return a->view.stack == TL_STACK_CATEGORY && a->sampling &&
	    a->view.hl == NULL && a->tm.cat_probe == NULL &&
	    pane_timeline_building(a) && modeworker_makes_probe(a);
}

/* Microseconds of sampling one frame may take: a key pressed meanwhile
 * stays quick (at 10 GB, 5 to 9 ms a key with 3 ms, 27 to 31 ms with
 * 25), and the columns a new view needs come over the next frames, drawn
 * back to back while columns are left (tui.c), coarse to fine: the view
 * takes as long as with a larger budget (bench/tui_open.sh SAMPLED=1). */
#define SAMPLE_BUDGET_US 3000

/* The budget; SNAPVIEW_TEST_SAMPLE_BUDGET_US=N sets it (the tests' 1:
 * one event a frame, as on a machine too slow for more). */
static long long
sample_budget_us(void)
{
	return (long long)app_test_number("SNAPVIEW_TEST_SAMPLE_BUDGET_US",
	    SAMPLE_BUDGET_US);
}

/* Samples the mode shown, being built, after the events the columns of
 * the plot in r draw (tl_drawn_events), with the device's replay, which
 * goes back to the cursor after: the peak's (the bands are ranked there)
 * and the cursor's first, then every 16th column, every 8th, and so on.
 * Returns 0 when its bands can be drawn (a->sample_more: columns are
 * left for the next frames). */
static void
sampled_msg_start(struct app *a, int st);

static int
sample_plot(struct app *a, const struct rect *r)
{
	int st = a->view.stack, pw = tl_plot_width(r->w), n, k = 0, i, step;
	int moved = 0, rc, more = a->sample_more, states = 0;
	size_t had;
	char why[320];
	int64_t *col, *ev;
	long long t0 = sv_mono_us();

	a->sample_more = 0;
	/* the category mode before its probe: the replay's states, which
	 * its samples are then summed from */
	if (pane_timeline_probe_due(a) && modeworker_pending(a, st))
		states = 1;
	else if (!sample_wanted(a, st))
		return -1;
	if (pw < 1)
		return -1;
	col = xcalloc((size_t)pw + 1, sizeof *col);
	ev = xcalloc((size_t)pw + 2, sizeof *ev);
	n = tl_drawn_events(&a->tm, &a->view, r->w, col, pw + 1);
	if (n > 0)
		ev[k++] = col[0];
	ev[k++] = a->view.cursor;
	for (step = 16; step >= 1; step /= 2)
		for (i = 0; i + 1 < n; i += step)
			if (step == 16 || i % (2 * step) != 0)
				ev[k++] = col[i + 1];
	if (!more)
		a->sample_since = t0;
	had = tl_sample_count(&a->tm, st);
	if (states)
		rc = tl_model_sample_states(&a->tm, a->src.replay, ev,
		    (size_t)k, sample_budget_us(), &moved, why, sizeof why);
	else
		rc = tl_model_sample(&a->tm, st, a->src.replay, ev, (size_t)k,
		    sample_budget_us(), &moved, why, sizeof why);
	free(col);
	free(ev);
	if (moved)
		cursor_replay_moved(a); /* the state at the cursor is stale */
	/* the bands are ranked at the peak by the groups sampled, which
	 * samples summed from the live sets alone (no move) add to too */
	if (moved || tl_sample_count(&a->tm, st) != had)
		a->tlf.rank_stack = -1;
	a->sample_more = rc == 1;
	if (states)
		return -1; /* nothing to draw yet */
	if (rc >= 0)
		sampled_msg_start(a, st);
	if (rc == 0)
		modeworker_sampled(a, st, sv_mono_us() - a->sample_since);
	return rc >= 0 ? 0 : -1;
}

/* The plot of a mode whose bands are still being built: a line saying
 * so, in the middle, with how far the build is once it runs, else the
 * mode it waits for. */
static void
draw_building(struct app *a, struct cellbuf *cb, const struct rect *r)
{
	char line[128], pct[64] = "";
	int n, run;

	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	a->building_pct = modeworker_progress(a, a->view.stack);
	a->building_after = -1;
	if (a->building_pct >= 0)
		snprintf(pct, sizeof pct, " %d%%", a->building_pct);
	else if ((run = modeworker_running(a)) >= 0 &&
	    run != a->view.stack) {
		a->building_after = run;
		snprintf(pct, sizeof pct, " (after the %s bands)",
		    tl_stack_name(run));
	}
	n = snprintf(line, sizeof line, "building %s bands%s%s",
	    tl_stack_name(a->view.stack), a->utf8 ? "\xe2\x80\xa6" : "...",
	    pct);
	n = r->w > n ? (r->w - n) / 2 : 0;
	cellbuf_puts(cb, r->x + n, r->y + r->h / 2, line, r->w - n, UIC_AXIS,
	    0);
}

/* The device's name in a title: its number, or "host" for pinned host
 * memory (2.14). */
static const char *
dev_name(struct app *a, char *buf, size_t size)
{
	if (snap_is_host(a->snap, a->device))
		snprintf(buf, size, "host");
	else
		snprintf(buf, size, "%u", a->device);
	return buf;
}

/* A snapshot with no trace (include_traces=False, or no history
 * recorded): no plot, a line saying why where it would be. */
static void
draw_no_trace(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	static const char *const why[] = {
	    "no trace in this file: it holds segments, no events",
	    "(dumped with include_traces=False, or history was not recorded)",
	    "the segment map shows the state at the end",
	};
	char t[128], p[16];
	size_t k;
	int n;

	snprintf(t, sizeof t, "Timeline - dev %s - no trace", dev_name(a, p,
	    sizeof p));
	pane_title(a, cb, r, focused, t);
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	for (k = 0; k < 3 && (int)k + 1 < r->h; k++) {
		n = (int)strlen(why[k]);
		n = r->w > n ? (r->w - n) / 2 : 0;
		cellbuf_puts(cb, r->x + n, r->y + (r->h - 3) / 2 + (int)k + 1,
		    why[k], r->w - n, UIC_AXIS, 0);
	}
}

static void
show_stack(struct app *a, int st);
static void
auto_building_msg(struct app *a, char *buf, size_t size);
static void
auto_msg_text(int share, int sampled, char *buf, size_t size);

/* Draws the mode shown from samples while it is built (sample_plot);
 * returns 1 when it is being built and cannot be. The mode the view went
 * to by itself (poll_auto) then gives way to the allocations again, as
 * without samples, until it is built. */
static int
plot_building(struct app *a, const struct rect *r)
{
	char line[sizeof a->msg];
	int st = a->view.stack;

	if (!pane_timeline_building(a)) {
		a->sample_more = 0;
		return 0;
	}
	if (sample_plot(a, r) == 0)
		return 0;
	if (a->auto_sampled != st)
		return 1;
	a->auto_sampled = -1;
	a->auto_stack = st;
	show_stack(a, TL_STACK_ALLOC);
	/* what the status line said of the samples, taken back */
	auto_msg_text(a->auto_share, 1, line, sizeof line);
	if (strcmp(a->msg, line) == 0)
		auto_building_msg(a, a->msg, sizeof a->msg);
	return 0;
}

static void
tl_draw(struct app *a, struct cellbuf *cb, const struct rect *r, int focused)
{
	char t[256], p[128], n[FMT_BUF], pk[FMT_BUF], pe[FMT_BUF],
	    cur[FMT_BUF], tot[FMT_BUF], lo[FMT_BUF], hi[FMT_BUF];
	int st, wide = r->w >= 110, building, sampled, pct;

	if (a->tl.n_events == 0) {
		draw_no_trace(a, cb, r, focused);
		return;
	}
	/* a mode being built: drawn from samples, else a line saying so */
	building = plot_building(a, r);
	st = a->view.stack;
	fmt_count(n, sizeof n, a->tl.n_events);
	fmt_size(pk, sizeof pk, a->tl.peak);
	fmt_event(pe, sizeof pe, a->tl.peak_ev);
	fmt_event(cur, sizeof cur, a->view.cursor);
	fmt_size(tot, sizeof tot, st == TL_STACK_SEGMENT ?
	    tl_reserved_at(&a->tm, a->view.cursor) :
	    tl_total_at(&a->tm, a->view.cursor));
	/* "Timeline - dev 0 - #N" first, as scripts look for it */
	snprintf(t, sizeof t, "%s", st == TL_STACK_SEGMENT ? (wide ?
	    "Active Cached Segment Timeline" : "Segment Timeline") : wide ?
	    "Active Memory Timeline" : "Timeline");
	snprintf(p, sizeof p, " - dev %s - %s %s", dev_name(a, lo, sizeof lo),
	    cur, tot);
	title_add(t, sizeof t, p);
	if (st != TL_STACK_SEGMENT) {
		snprintf(p, sizeof p, " - peak %s @ %s", pk, pe);
		title_add(t, sizeof t, p);
	}
	sampled = pane_timeline_building(a) && !building;
	if (tl_modes[st].title[0] != '\0') {
		snprintf(p, sizeof p, " - %s", tl_modes[st].title);
		title_add(t, sizeof t, p);
	}
	/* drawn from samples, and how far the build is: the first field
	 * to go on a narrow terminal (the status line said it) */
	if (sampled) {
		pct = a->building_pct = modeworker_progress(a, st);
		a->building_after = modeworker_running(a);
		if (pct >= 0)
			snprintf(p, sizeof p, " - sampled, building %d%%", pct);
		else
			snprintf(p, sizeof p, " - sampled");
		title_add(t, sizeof t, p);
	}
	if (a->view.ymax > a->view.ylo) {
		snprintf(p, sizeof p, " - y %s..%s", fmt_size_short(lo,
		    sizeof lo, a->view.ylo), fmt_size_short(hi, sizeof hi,
		    a->view.ymax));
		title_add(t, sizeof t, p);
	}
	snprintf(p, sizeof p, " - %s event%s", n,
	    a->tl.n_events == 1 ? "" : "s");
	title_add(t, sizeof t, p);
	if (a->view.time_axis && a->tm.time_ok)
		title_add(t, sizeof t, " - time axis");
	pane_title(a, cb, r, focused, t);
	if (building) {
		draw_building(a, cb, r);
		return;
	}
	tl_render(&a->tm, &a->view, cb, r->x, r->y + 1, r->w, r->h - 1,
	    &a->tlf);
}

/* ---- cursor -------------------------------------------------------------- */

/* Event at the start of the column next to the cursor's. */
static int64_t
column_step(struct app *a, const struct rect *r, int dir)
{
	int pw = tl_plot_width(r->w);
	int c = tl_event_col(&a->tm, &a->view, pw, a->view.cursor);
	int64_t ev;

	if (c < 0)
		return a->view.cursor + dir;
	if (dir > 0) {
		do {
			c++;
			ev = c < pw ? tl_col_event(&a->tm, &a->view, pw, c)
			    : a->view.ev1;
		} while (c < pw && ev <= a->view.cursor);
		return ev;
	}
	if (c == 0)
		return a->view.cursor - (a->view.ev1 - a->view.ev0) / pw - 1;
	return tl_col_event(&a->tm, &a->view, pw, c - 1);
}

static int
enter_band(struct app *a);

static int
tl_action(struct app *a, enum action act, const struct rect *r)
{
	int64_t span = a->view.ev1 - a->view.ev0;

	switch (act) {
	case ACT_LEFT: cursor_set(a, column_step(a, r, -1)); break;
	case ACT_RIGHT: cursor_set(a, column_step(a, r, 1)); break;
	case ACT_UP: cursor_set(a, a->view.cursor - 1); break;
	case ACT_DOWN: cursor_set(a, a->view.cursor + 1); break;
	case ACT_PAGE_UP:
		cursor_set(a, a->view.cursor - (span + 1) / 2);
		break;
	case ACT_PAGE_DOWN:
		cursor_set(a, a->view.cursor + (span + 1) / 2);
		break;
	case ACT_FIRST: cursor_set(a, 0); break;
	case ACT_LAST: cursor_set(a, (int64_t)a->tl.n_events - 1); break;
	case ACT_ENTER:
		if (a->view.pick.kind == TL_PICK_NONE)
			return 0; /* the global Enter: the stack */
		return enter_band(a);
	default: return 0;
	}
	/* a picked band stays picked: the detail follows it */
	a->detail = a->view.pick.kind != TL_PICK_NONE ? DETAIL_BAND :
	    DETAIL_EVENT;
	a->detail_scroll = 0;
	return UI_HANDLED | UI_REDRAW;
}

/* ---- stacking modes ------------------------------------------------------ */

static void
clear_pick(struct app *a)
{
	a->view.pick.kind = TL_PICK_NONE;
	a->view.pick.id = 0;
	if (a->detail == DETAIL_BAND)
		a->detail = DETAIL_EVENT;
}

/* The view shows mode st from now on (its bands ready or not). */
static void
show_stack(struct app *a, int st)
{
	a->auto_sampled = -1;
	a->view.stack = st;
	a->tlf.rank_stack = -1;
	clear_pick(a);
}

/* Switches to mode st; returns 0, 1 when its bands are being built in
 * the background (they are drawn when they come), or -1 with the reason
 * shown. */
static int
set_stack(struct app *a, int st)
{
	char why[128];

	/* a grouped mode's build is a pass over the trace: the worker's;
	 * the segments' takes its segment events alone (a millisecond at
	 * 10 GB), built here when the worker has not yet */
	if (tl_stack_grouped(st) && a->tm.groups_ok[st] == 0 &&
	    modeworker_pending(a, st)) {
		/* one drawn from samples meanwhile waits its turn: the
		 * modes that cannot be go first (modeworker_start) */
		if (!sample_wanted(a, st))
			modeworker_want(a, st);
		show_stack(a, st);
		return 1;
	}
	/* the one table the block table and the top view use, with the
	 * user's rules (tables_categories says why when there is none) */
	if (st == TL_STACK_CATEGORY) {
		if (tables_categories(a) == NULL)
			return -1;
		tl_model_set_categories(&a->tm, tables_categories(a));
	}
	if (tl_model_prepare(&a->tm, st, why, sizeof why) != 0) {
		app_msg(a, "%s bands: %s", tl_stack_name(st), why);
		return -1;
	}
	if (a->view.hl != NULL)
		tl_hilite_update(a->view.hl, &a->tm);
	show_stack(a, st);
	return 0;
}

/* The status line while the mode the view goes to by itself is being
 * built: what comes first, for a narrow terminal. */
static void
auto_building_msg(struct app *a, char *buf, size_t size)
{
	snprintf(buf, size, "building %s bands%s (one band per allocation "
	    "shows %d%% of the peak; m: modes)", tl_stack_name(a->auto_stack),
	    a->utf8 ? "\xe2\x80\xa6" : "...", a->auto_share);
}

/* Events from which the mode the view opens in is built after the first
 * screen (about 60 ms of a pass over the trace a million events): a
 * shorter trace opens in it at once, with no flash of the allocations.
 * SNAPVIEW_TEST_DEFER_EVENTS=N sets it (the tests' 0: every trace). */
#define AUTO_DEFER_EVENTS 1000000

static uint64_t
auto_defer_events(void)
{
	return app_test_number("SNAPVIEW_TEST_DEFER_EVENTS", AUTO_DEFER_EVENTS);
}

/* Why the view went to the call-site mode by itself (sampled: while
 * the worker builds it), into buf. */
static void
auto_msg_text(int share, int sampled, char *buf, size_t size)
{
	snprintf(buf, size, "bands by call site%s: one band per allocation "
	    "would show %d%% of the peak here (m: modes)", sampled ?
	    ", sampled while they are built" : "", share);
}

static void
auto_msg(struct app *a, int share, int sampled)
{
	char line[sizeof a->msg];

	auto_msg_text(share, sampled, line, sizeof line);
	app_msg(a, "%s", line);
}

static void
stack_msg(struct app *a, int st)
{
	app_msg(a, "bands: %s%s", st == TL_STACK_SEGMENT ?
	    "segments (reserved memory)" : "by ",
	    st == TL_STACK_SEGMENT ? "" : tl_stack_name(st));
}

/* What m says of a mode drawn from samples while it is built. */
static void
sampled_msg_text(int st, char *buf, size_t size)
{
	snprintf(buf, size, "bands: by %s, sampled while they are built "
	    "(m: next mode)", tl_stack_name(st));
}

/* What m says of a mode being built. */
static void
building_msg_text(struct app *a, int st, char *buf, size_t size)
{
	snprintf(buf, size, "building %s bands%s (m: next mode)",
	    tl_stack_name(st), a->utf8 ? "\xe2\x80\xa6" : "...");
}

/* Mode st is drawn from samples from now on (the category mode once its
 * probe came): what the status line said of its build says so. */
static void
sampled_msg_start(struct app *a, int st)
{
	char line[sizeof a->msg];

	building_msg_text(a, st, line, sizeof line);
	if (strcmp(a->msg, line) != 0)
		return;
	sampled_msg_text(st, line, sizeof line);
	app_msg(a, "%s", line);
}

/* The built bands of mode st replace its samples: what the status line
 * said of the samples (and nothing else) says the bands are built. */
static void
sampled_msg_done(struct app *a, int st)
{
	char line[sizeof a->msg];

	sampled_msg_text(st, line, sizeof line);
	if (strcmp(a->msg, line) == 0) {
		stack_msg(a, st);
		return;
	}
	auto_msg_text(a->auto_share, 1, line, sizeof line);
	if (st == TL_STACK_SITE && strcmp(a->msg, line) == 0)
		auto_msg(a, a->auto_share, 0);
}

static void
cycle_stack(struct app *a, int dir)
{
	int st = a->view.stack, k, r;

	a->stack_dir = dir;
	for (k = 0; k < TL_STACK_COUNT; k++) {
		st = (st + dir + TL_STACK_COUNT) % TL_STACK_COUNT;
		/* modes without data (no categories) are passed over */
		if ((r = set_stack(a, st)) == 0) {
			stack_msg(a, st);
			return;
		}
		if (r > 0 && sample_wanted(a, st)) {
			char line[sizeof a->msg];

			sampled_msg_text(st, line, sizeof line);
			app_msg(a, "%s", line);
			return;
		}
		if (r > 0) {
			char line[sizeof a->msg];

			building_msg_text(a, st, line, sizeof line);
			app_msg(a, "%s", line);
			return;
		}
	}
}

/* The mode pane_timeline_open() chose, once the worker has built it:
 * shown, unless a band of the allocations was picked since (then it is
 * only said to be ready); forgotten when another mode was chosen; built
 * here when no worker builds it (no thread started). Returns 1 when the
 * screen changed. */
static int
poll_auto(struct app *a)
{
	char line[sizeof a->msg];
	int st = a->auto_stack, r;

	if (a->view.stack != TL_STACK_ALLOC) {
		a->auto_stack = -1; /* a mode was chosen with m or M */
		return 0;
	}
	/* shown from samples while it is built (long traces; not over a
	 * band picked meanwhile), else when it comes */
	if (a->tm.groups_ok[st] == 0 && modeworker_pending(a, st) &&
	    (!sample_wanted(a, st) || a->view.pick.kind != TL_PICK_NONE))
		return 0;
	auto_building_msg(a, line, sizeof line);
	a->auto_stack = -1;
	if (a->view.pick.kind != TL_PICK_NONE) {
		if (a->tm.groups_ok[st] > 0)
			app_msg(a, "%s bands ready (m: modes)",
			    tl_stack_name(st));
		return 1;
	}
	/* the news of the first screen (a leak suspect) stays */
	if ((r = set_stack(a, st)) >= 0 && (a->msg[0] == '\0' ||
	    strcmp(a->msg, line) == 0))
		auto_msg(a, a->auto_share, r > 0);
	/* drawn from samples: if they are refused, back (plot_building) */
	a->auto_sampled = r > 0 ? st : -1;
	return 1;
}

int
pane_timeline_poll(struct app *a)
{
	char why[256];
	int st = a->view.stack, n, was = pane_timeline_building(a);
	int sampled = was && tl_groups_drawable(&a->tm, st);

	n = modeworker_take(a);
	if (a->auto_stack >= 0 && poll_auto(a))
		return UI_REDRAW;
	/* columns left to sample: the next frame takes them */
	if (was && a->sample_more && n == 0)
		return UI_REDRAW;
	/* only a mode shown waiting for its bands has news to tell: its
	 * bands, or how far their build is */
	if (!modeworker_arrived(a, st, why, sizeof why) || !was)
		return n > 0 || (was && (modeworker_progress(a, st) !=
		    a->building_pct || (a->building_pct < 0 &&
		    modeworker_running(a) != a->building_after))) ?
		    UI_REDRAW : 0;
	if (a->tm.groups_ok[st] > 0) {
		a->tlf.rank_stack = -1;
		/* drawn from samples until now: the same bands, the news on
		 * the status line stays */
		if (!sampled)
			stack_msg(a, st);
		else
			sampled_msg_done(a, st);
	} else {
		/* as m passes over a mode without data */
		a->tm.groups_ok[st] = a->tm.groups_ok[st] == 0 ? -1 :
		    a->tm.groups_ok[st];
		cycle_stack(a, a->stack_dir != 0 ? a->stack_dir : 1);
	}
	return UI_REDRAW;
}

void
pane_timeline_set_sampling(struct app *a)
{
	a->sampling = a->src.replay != NULL && a->sample_later;
}

void
pane_timeline_open(struct app *a)
{
	const struct rect *r = &a->lay.r[LAY_TIMELINE];
	int share, st;

	a->view.stack = TL_STACK_ALLOC;
	a->view.ylo = a->view.ymax = 0;
	a->annot_cur = UINT64_MAX;
	memset(&a->tlf, 0, sizeof a->tlf);
	a->tlf.rank_stack = -1;
	clear_pick(a);
	a->auto_sampled = -1;
	a->auto_stack = -1;
	a->sample_later = a->tl.n_events >= sample_events();
	pane_timeline_set_sampling(a);
	st = tl_model_auto_stack(&a->tm, r->w, r->h - 1, &share);
	if (st == TL_STACK_ALLOC)
		return;
	if (modeworker_enabled() && a->tl.n_events >= auto_defer_events()) {
		/* the first screen does not wait for a pass over the trace
		 * (seconds at 10 GB): it shows the allocations, the worker
		 * builds this mode first, and the view goes to it when it
		 * comes (poll_auto) */
		a->auto_stack = st;
		a->auto_share = share;
		auto_building_msg(a, a->msg, sizeof a->msg);
		return;
	}
	if (set_stack(a, st) == 0)
		auto_msg(a, share, 0);
}

/* ---- picking ------------------------------------------------------------- */

/* Index of the picked band among b[0..n) (a run of segments holds the
 * picked one), or -1. */
static int
band_index(struct app *a, const struct tl_band *b, int n,
    const struct tl_pick *p)
{
	int i;

	for (i = 0; i < n; i++)
		if (b[i].kind == p->kind && (p->kind == TL_PICK_OTHER ||
		    p->kind == TL_PICK_SET || b[i].id == p->id || (b[i].n > 1 &&
		    b[i].hilite)))
			return i;
	(void)a;
	return -1;
}

static void
pick_move(struct app *a, int dir)
{
	static struct tl_band b[TL_MAX_COL_BANDS];
	int n, i;

	if (pane_timeline_building(a)) {
		app_msg(a, "the %s bands are %s yet", tl_stack_name(
		    a->view.stack), tl_groups_drawable(&a->tm, a->view.stack) ?
		    "sampled, not built" : "not built");
		return;
	}
	n = tl_bands_at(&a->tm, &a->view, &a->tlf, a->view.cursor, b,
	    TL_MAX_COL_BANDS);
	if (n == 0) {
		app_msg(a, "no bands at the cursor");
		return;
	}
	i = band_index(a, b, n, &a->view.pick);
	if (i < 0)
		i = dir > 0 ? 0 : n - 1;
	else if (i + dir < 0 || i + dir >= n) {
		app_msg(a, "%s band", dir > 0 ? "top" : "bottom");
		return;
	} else
		i += dir;
	a->view.pick.kind = b[i].kind;
	a->view.pick.id = b[i].id;
	a->detail = DETAIL_BAND;
	a->detail_scroll = 0;
	app_msg(a, "band %d of %d at the cursor (J/K move, Enter: its alloc, "
	    "Esc)", i + 1, n);
}

/* The largest element of group g alive at the cursor that was allocated
 * in the trace (ties: the earliest), or TL_NO_ELEM; *count gets how many
 * of the group's elements are alive. From the replayed state when it is
 * exact (O(live blocks x log n)), else from every element. Only Enter
 * asks: it is too slow for every frame of a large trace. */
static uint64_t
group_largest(struct app *a, uint32_t g, uint64_t *count)
{
	struct idx_elem e;
	uint64_t best = 0, k, largest = TL_NO_ELEM;
	int64_t at = a->view.cursor;
	uint32_t i;

	*count = 0;
	if (a->st != NULL && state_exact(&a->src, at)) {
		for (i = 0; i < a->st->n_blocks; i++) {
			const struct replay_block *b = &a->st->blocks[i];

			if (b->state != SNAP_BLOCK_ACTIVE_ALLOCATED &&
			    b->state != SNAP_BLOCK_ACTIVE_PENDING_FREE)
				continue;
			k = tl_model_find_elem(&a->tm, b->addr, at);
			if (k == TL_NO_ELEM ||
			    tl_model_group_of(&a->tm, a->view.stack, k) != g)
				continue;
			(*count)++;
			e = idx_tl_elem(&a->tl, k);
			if (e.alloc_ev >= 0 && (largest == TL_NO_ELEM ||
			    e.size > best || (e.size == best && k < largest))) {
				best = e.size;
				largest = k;
			}
		}
		return largest;
	}
	for (k = 0; k < a->tl.n_elems; k++) {
		e = idx_tl_elem(&a->tl, k);
		if (e.alloc_ev > at || (e.free_ev >= 0 && e.free_ev <= at) ||
		    tl_model_group_of(&a->tm, a->view.stack, k) != g)
			continue;
		(*count)++;
		if (e.alloc_ev >= 0 &&
		    (largest == TL_NO_ELEM || e.size > best)) {
			best = e.size;
			largest = k;
		}
	}
	return largest;
}

/* Enter on the picked band: its alloc event (a group: the alloc event of
 * its largest block alive at the cursor). */
static int
enter_band(struct app *a)
{
	struct idx_elem e;
	uint64_t k, count = 0;
	char ev[FMT_BUF], sz[FMT_BUF], n[FMT_BUF];

	switch (a->view.pick.kind) {
	case TL_PICK_ELEM:
		k = a->view.pick.id;
		break;
	case TL_PICK_GROUP:
		k = group_largest(a, (uint32_t)a->view.pick.id, &count);
		if (k == TL_NO_ELEM) {
			app_msg(a, count > 0 ? "every block of this band was "
			    "allocated before the trace began" :
			    "nothing of this band is alive at the cursor");
			return UI_HANDLED | UI_REDRAW;
		}
		break;
	case TL_PICK_SET:
		app_msg(a, "the leaked blocks: Enter and ]/[ in the leak view "
		    "go to them");
		return UI_HANDLED | UI_REDRAW;
	default:
		app_msg(a, "many allocations: pick one band (J/K), or zoom y "
		    "(>) to draw more of them");
		return UI_HANDLED | UI_REDRAW;
	}
	e = tl_layer_elem(&a->tm, a->view.stack, k);
	if (e.alloc_ev < 0) {
		app_msg(a, "allocated before the trace started");
		return UI_HANDLED | UI_REDRAW;
	}
	cursor_set(a, e.alloc_ev);
	a->detail = DETAIL_BAND;
	a->detail_scroll = 0;
	if (a->view.pick.kind == TL_PICK_GROUP)
		app_msg(a, "alloc of the largest of the band's %s live blocks "
		    "(%s) at %s", fmt_count(n, sizeof n, count),
		    fmt_size(sz, sizeof sz, e.size), fmt_event(ev, sizeof ev,
		    e.alloc_ev));
	else
		app_msg(a, "%s of the picked band at %s", a->view.stack ==
		    TL_STACK_SEGMENT ? "segment_alloc/map" : "alloc",
		    fmt_event(ev, sizeof ev, e.alloc_ev));
	return UI_HANDLED | UI_REDRAW;
}

/* ---- y range ------------------------------------------------------------- */

/* The y range shown now: the view's, else the last frame's fit. */
static void
y_range(struct app *a, uint64_t *lo, uint64_t *hi)
{
	if (a->view.ymax > a->view.ylo) {
		*lo = a->view.ylo;
		*hi = a->view.ymax;
	} else {
		*lo = a->tlf.ylo;
		*hi = a->tlf.yhi > a->tlf.ylo ? a->tlf.yhi : a->tlf.ylo + 1;
	}
}

/* Middle of the picked band at the cursor, or -1. */
static double
pick_level(struct app *a)
{
	static struct tl_band b[TL_MAX_COL_BANDS];
	int n, i;

	if (a->view.pick.kind == TL_PICK_NONE)
		return -1;
	n = tl_bands_at(&a->tm, &a->view, &a->tlf, a->view.cursor, b,
	    TL_MAX_COL_BANDS);
	i = band_index(a, b, n, &a->view.pick);
	return i < 0 ? -1 : ((double)b[i].lo + (double)b[i].hi) / 2;
}

static void
y_zoom(struct app *a, int in)
{
	uint64_t lo, hi, span, nspan;
	double anchor, nlo;

	y_range(a, &lo, &hi);
	span = hi - lo;
	nspan = in ? span / 2 : span * 2;
	if (nspan < MIN_YSPAN)
		nspan = MIN_YSPAN;
	if (!in && nspan >= a->tlf.yfit) {
		a->view.ylo = a->view.ymax = 0; /* back to the fit */
		return;
	}
	/* around the picked band, else the level at the cursor, else the
	 * middle */
	anchor = pick_level(a);
	if (anchor < (double)lo || anchor > (double)hi)
		anchor = (double)(a->view.stack == TL_STACK_SEGMENT ?
		    tl_reserved_at(&a->tm, a->view.cursor) :
		    tl_total_at(&a->tm, a->view.cursor));
	if (anchor < (double)lo || anchor > (double)hi)
		anchor = (double)lo + (double)span / 2;
	/* the anchor keeps its place on the screen */
	nlo = anchor - (anchor - (double)lo) * (double)nspan / (double)span;
	a->view.ylo = nlo > 0 ? (uint64_t)nlo : 0;
	a->view.ymax = a->view.ylo + nspan;
}

/* The y axis from the lowest to the highest level the columns show,
 * a sixteenth of the span below and above. */
static void
y_data(struct app *a)
{
	uint64_t lo, hi, pad;

	tl_visible_range(&a->tm, &a->view, a->lay.r[LAY_TIMELINE].w, &lo,
	    &hi);
	if (hi <= lo) {
		a->view.ylo = a->view.ymax = 0;
		app_msg(a, "nothing to fit: the visible data is flat");
		return;
	}
	pad = (hi - lo) / 16;
	a->view.ylo = lo > pad ? lo - pad : 0;
	a->view.ymax = hi + pad > hi ? hi + pad : hi;
	if (a->view.ymax - a->view.ylo < MIN_YSPAN)
		a->view.ymax = a->view.ylo + MIN_YSPAN;
}

static void
y_pan(struct app *a, int dir)
{
	uint64_t lo, hi, d;

	y_range(a, &lo, &hi);
	d = (hi - lo) / 4 > 0 ? (hi - lo) / 4 : 1;
	if (dir < 0)
		d = d < lo ? d : lo;
	a->view.ylo = dir > 0 ? lo + d : lo - d;
	a->view.ymax = a->view.ylo + (hi - lo);
}

/* ---- annotations --------------------------------------------------------- */

static void
annot_jump(struct app *a, int dir)
{
	const struct tl_model *m = &a->tm;
	const struct tl_annot *an;
	char esc[160], ev[FMT_BUF], tm[FMT_BUF];
	const char *name;
	uint64_t i;

	if (m->n_annots == 0) {
		app_msg(a, a->snap->n_annotations > 0 && !m->time_ok ?
		    "annotations need time_us, which this trace lacks" :
		    "no annotations for this device");
		return;
	}
	i = tl_model_annot_step(m, a->view.cursor, a->annot_cur, dir);
	if (i == UINT64_MAX) {
		app_msg(a, "no %s annotation", dir > 0 ? "later" : "earlier");
		return;
	}
	an = &m->annots[i];
	cursor_set(a, an->ev);
	a->annot_cur = i;
	if (a->detail != DETAIL_BAND)
		a->detail = DETAIL_EVENT;
	name = snap_str(a->snap, an->name);
	sv_escape(esc, sizeof esc, name, strlen(name));
	fmt_duration(tm, sizeof tm, an->time_us - snap_ev_time(m->trace, 0));
	app_msg(a, "%s %s %s at %s (%" PRIu64 "/%" PRIu64 ")", esc,
	    an->stage == SNAP_STAGE_START ? "starts" : "ends", tm,
	    fmt_event(ev, sizeof ev, an->ev), i + 1, m->n_annots);
}

int
pane_timeline_action(struct app *a, enum action act)
{
	switch (act) {
	case ACT_STACK_NEXT: cycle_stack(a, 1); break;
	case ACT_STACK_PREV: cycle_stack(a, -1); break;
	case ACT_LEGEND:
		a->view.legend = (a->view.legend + 1) % 3;
		app_msg(a, "legend: %s", a->view.legend == TL_LEGEND_AUTO ?
		    "automatic" : a->view.legend == TL_LEGEND_FULL ?
		    "every entry" : "hidden");
		break;
	case ACT_PICK_UP: pick_move(a, 1); break;
	case ACT_PICK_DOWN: pick_move(a, -1); break;
	case ACT_YZOOM_IN: y_zoom(a, 1); break;
	case ACT_YZOOM_OUT: y_zoom(a, 0); break;
	case ACT_YPAN_UP: y_pan(a, 1); break;
	case ACT_YPAN_DOWN: y_pan(a, -1); break;
	case ACT_YFIT: a->view.ylo = a->view.ymax = 0; break;
	case ACT_YRANGE: y_data(a); break;
	case ACT_ANNOT_NEXT: annot_jump(a, 1); break;
	case ACT_ANNOT_PREV: annot_jump(a, -1); break;
	default: return 0;
	}
	return UI_HANDLED | UI_REDRAW;
}

/* ---- detail -------------------------------------------------------------- */

static void
elem_detail(struct app *a, uint64_t k, char *title, size_t tsize,
    char *info, size_t isize)
{
	struct idx_elem e = tl_layer_elem(&a->tm, a->view.stack, k);
	char ad[FMT_BUF], sz[FMT_BUF], al[FMT_BUF], fr[FMT_BUF], site[200],
	    cat[128];
	int seg = a->view.stack == TL_STACK_SEGMENT;
	uint32_t g;
	const struct an_categories *cats;

	if (e.alloc_ev >= 0)
		fmt_event(al, sizeof al, e.alloc_ev);
	else
		snprintf(al, sizeof al, "before the trace");
	if (e.free_ev >= 0)
		fmt_event(fr, sizeof fr, e.free_ev);
	else
		snprintf(fr, sizeof fr, "never");
	snprintf(title, tsize, "%c%s %s %s - %s %s, %s %s",
	    toupper((unsigned char)tl_modes[a->view.stack].noun[0]),
	    tl_modes[a->view.stack].noun + 1, fmt_addr(ad, sizeof ad, e.addr),
	    fmt_size(sz, sizeof sz, e.size), seg ? "mapped" : "alloc", al,
	    seg ? "unmapped" : "freed", fr);
	site[0] = cat[0] = '\0';
	/* a block from before the trace is named by its free's stack:
	 * "freed at" its site */
	if (!seg && (g = tl_model_site_group(&a->tm, &e)) != TL_NO_GROUP)
		tl_group_label(&a->tm, TL_STACK_SITE, g, 0, a->utf8, site,
		    sizeof site);
	if (!seg && (cats = tables_categories_if_ready(a)) != NULL)
		snprintf(cat, sizeof cat, "%s - ", an_category_label(
		    an_category_of(cats, k)));
	else if (!seg && a->tm.cat_probe != NULL)
		/* the table being built: its probe classifies as it will */
		snprintf(cat, sizeof cat, "%s - ", an_category_label(
		    an_cat_probe_classify(a->tm.cat_probe, &e)));
	snprintf(info, isize, "%s%s%s%sstream %" PRIu64 "%s", cat,
	    seg ? "" : "site ", seg ? "" : site, seg ? "" : " - ", e.stream,
	    e.flags & IDX_ELEM_GHOST ? " - alive before and after the trace"
	    : "");
}

uint32_t
pane_timeline_band_detail(struct app *a, char *title, size_t tsize, char *info,
    size_t isize)
{
	const struct tl_pick *p = &a->view.pick;
	char cur[FMT_BUF], b[FMT_BUF], lab[300];
	uint64_t bytes;
	int st = a->view.stack, w;

	fmt_event(cur, sizeof cur, a->view.cursor);
	switch (p->kind) {
	case TL_PICK_ELEM:
		elem_detail(a, p->id, title, tsize, info, isize);
		return tl_layer_elem(&a->tm, st, p->id).stack;
	case TL_PICK_GROUP:
		bytes = tl_groups_bytes(&a->tm.groups[st], (uint32_t)p->id,
		    a->view.cursor);
		snprintf(title, tsize, "%c%s @ %s - %s - ",
		    toupper((unsigned char)tl_modes[st].noun[0]),
		    tl_modes[st].noun + 1, cur, fmt_size(b, sizeof b, bytes));
		/* the label takes the rest of the pane's title, shortened
		 * from its directories */
		w = a->lay.r[LAY_DETAIL].w - 4 - (int)strlen(title);
		tl_group_label(&a->tm, st, (uint32_t)p->id, w > 20 ? w : 20,
		    a->utf8, lab, sizeof lab);
		snprintf(title + strlen(title), tsize - strlen(title), "%s",
		    lab);
		if (tl_group_prefix(&a->tm, st, (uint32_t)p->id)[0] != '\0')
			snprintf(info, isize, "allocated before the trace: the "
			    "stack of its largest block's free:");
		else
			snprintf(info, isize, "Enter: the alloc of its "
			    "largest block alive here; the stack of its "
			    "largest block:");
		return a->tm.groups[st].stack[p->id];
	case TL_PICK_SET:
		snprintf(title, tsize, "Leaked blocks of the selected site "
		    "@ %s - %s", cur, fmt_size(b, sizeof b, a->view.hl != NULL ?
		    tl_hilite_bytes(a->view.hl, a->view.cursor) : 0));
		snprintf(info, isize, "%s", a->vdetail.title);
		return a->vdetail.stack;
	default:
		snprintf(title, tsize, "%s @ %s", tl_stack_grouped(st) ?
		    "Everything outside the top bands" :
		    "Allocations too small to draw one by one", cur);
		snprintf(info, isize, "%s", tl_stack_grouped(st) ?
		    "m: other modes" : "> zooms the y axis so more are drawn; "
		    "m: bands by call site");
		return 0;
	}
}

const struct pane_ops pane_timeline_ops = {"timeline", tl_draw, tl_action};

/* Left and right in a detail pane move the timeline's cursor. */
int
pane_timeline_move_cursor(struct app *a, enum action act)
{
	enum detail_mode d = a->detail;
	int f;

	if (act != ACT_LEFT && act != ACT_RIGHT)
		return 0;
	f = pane_timeline_ops.action(a, act, &a->lay.r[LAY_TIMELINE]);
	if (d == DETAIL_SITE)
		a->detail = d;
	return f;
}
