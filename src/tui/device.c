/*
 * Opening a device of the snapshot (its timeline, the timeline model,
 * the state at the cursor, the check of a short trace) in place of the
 * one shown, and closing everything the viewer holds when it quits.
 */
#include "config.h"

#include "tui/app.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/leaks.h"
#include "index/idx.h"
#include "render/fmt.h"
#include "render/frames.h"
#include "tui/modeworker.h"
#include "tui/replay_bg.h"
#include "tui/simulate.h"
#include "util/escape.h"

/* Traces up to this many events get their leak suspect named on the
 * first screen (one pass over the elements, as the leak view's). */
#define NEWS_LEAKS_MAX 2000000

static int64_t
n_events(const struct app *a)
{
	return (int64_t)a->tl.n_events;
}

static void
device_free(struct app *a)
{
	modeworker_stop(a);
	if (a->cats_ok > 0)
		an_categories_destroy(&a->cats);
	a->cats_ok = 0;
	check_free(a);
	phaseset_free(a);
	tl_model_destroy(&a->tm);
	idx_timeline_destroy(&a->tl);
	state_close(&a->src);
	a->st = NULL;
}

/* The leak suspect of a short trace as leaks.h ranks it (the first site
 * when it grows every step, judged with two complete steps) into buf,
 * shortened; 0 when there is none. */
static int
leak_suspect(struct app *a, int w, char *buf, size_t size)
{
	struct an_sites *sites;
	struct an_leaks l;
	struct sv_error err;
	char raw[512], esc[512];
	int found = 0;

	if (a->tl.n_events > NEWS_LEAKS_MAX || a->n_devices == 0 ||
	    (sites = tables_sites(a)) == NULL)
		return 0;
	sv_error_clear(&err);
	if (an_leaks(a->snap, &a->tl, sites, -1, -1, &l, &err) != 0)
		return 0;
	if (l.judged && l.n_sites > 0 && l.sites[0].periodic) {
		an_site_label(sites, l.sites[0].site, raw, sizeof raw);
		sv_escape(esc, sizeof esc, raw, strlen(raw));
		frames_shorten(buf, size, esc, w > 12 ? w : 12, a->utf8);
		found = 1;
	}
	an_leaks_destroy(&l);
	return found;
}

void
device_news(struct app *a)
{
	const struct tl_model *m = &a->tm;
	char ev[FMT_BUF], site[128], oom[96];
	int w;

	/* a trace that lost its start says so first: every other answer
	 * is weighed by it */
	if (snap_ring_overflowed(a->snap, a->device) > 0) {
		app_msg(a, "ring buffer overflowed: the trace lost its start "
		    "(leaks and steps are judged on what remains)");
		return;
	}
	oom[0] = '\0';
	if (m->n_jumps[TL_JUMP_OOM] > 0) {
		fmt_event(ev, sizeof ev, m->jumps[TL_JUMP_OOM][0]);
		if (m->n_jumps[TL_JUMP_OOM] == 1)
			snprintf(oom, sizeof oom, "1 OOM at %s (X to see why)",
			    ev);
		else
			snprintf(oom, sizeof oom, "%" PRIu64 " OOMs, the first "
			    "at %s (X to see why, o: next)",
			    m->n_jumps[TL_JUMP_OOM], ev);
	}
	/* the site takes what the status line has left (its right end
	 * holds the cursor, "#9,966/19,136") */
	w = a->lay.cols - 16 - (int)strlen(oom) - (oom[0] != '\0' ? 2 : 0) -
	    (int)strlen("leak suspect:  grows every step (U)");
	if (leak_suspect(a, w, site, sizeof site))
		app_msg(a, "%s%sleak suspect: %s grows every step (U)", oom,
		    oom[0] != '\0' ? "; " : "", site);
	else if (oom[0] != '\0')
		app_msg(a, "%s", oom);
}

int
device_set(struct app *a, uint32_t d)
{
	struct sv_error err;
	struct idx_timeline tl;

	sv_error_clear(&err);
	memset(&tl, 0, sizeof tl);
	/* the worker reads the device's timeline and model: it ends first */
	modeworker_stop(a);
	/* the index holds the timeline (borrowed arrays: owned = 0) */
	if (a->ix != NULL && idx_timeline(a->ix, d) != NULL) {
		tl = *idx_timeline(a->ix, d);
		tl.owned = 0; /* the index frees it */
	} else if (idx_timeline_build(a->snap, d, &tl, &err) != 0) {
		app_msg(a, "device %u: %s", d, err.msg);
		return -1;
	}
	if (a->st != NULL)
		device_free(a);
	check_free(a);
	simulate_drop(a);
	/* the views drop what they computed for the old device (view.h) */
	a->dev_gen++;
	a->view.hl = NULL;
	a->view.hl_label = NULL;
	a->view.marks = NULL;
	a->view.n_marks = 0;
	a->view.mark_sel = -2;
	a->tl = tl;
	a->device = d;
	tl_model_init(&a->tm, a->snap, &a->tl, TL_DEFAULT_DRAWN);
	phaseset_open(a);
	/* the replay from the index the background made (replay_bg.h),
	 * none while it is being made, else from the index */
	if (replay_bg_pending(a))
		state_open_final(&a->src, a->snap, d);
	else
		state_open(&a->src, replay_bg_index(a) != NULL ?
		    replay_bg_index(a) : a->ix, a->snap, d, &err);
	a->view.ev0 = 0;
	a->view.ev1 = n_events(a) > 0 ? n_events(a) : 1;
	a->view.sel_elem = TL_NO_ELEM;
	a->view.time_axis = 0;
	a->sv.first = 0;
	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	a->detail = DETAIL_EVENT;
	free(a->stack_match);
	free(a->frame_match);
	a->stack_match = a->frame_match = NULL;
	a->st = NULL;
	cursor_goto(a, a->tl.peak_ev);
	pane_timeline_open(a);
	/* allocator_settings says the trace lost its start (2.14) */
	if (snap_ring_overflowed(a->snap, d) > 0)
		app_msg(a, "ring buffer overflowed: the trace lost its start "
		    "(leaks and steps are judged on what remains)");
	/* a short trace is checked at once: the status line warns when the
	 * replay does not reproduce the file */
	check_run(a, 0);
	return 0;
}

void
device_replay_came(struct app *a)
{
	struct sv_error err;

	if (replay_bg_index(a) != NULL) {
		sv_error_clear(&err);
		state_close(&a->src);
		state_open(&a->src, replay_bg_index(a), a->snap, a->device,
		    &err);
	}
	/* the modes still to build are drawn from samples meanwhile, the
	 * first screen's mode, held for it, among them (modeworker_start;
	 * the category mode not: its worker began without a probe) */
	pane_timeline_set_sampling(a);
	/* the check waited for it (or says there is none) */
	check_free(a);
	check_run(a, 0);
	cursor_replay_moved(a);
}

void
device_close(struct app *a)
{
	modeworker_stop(a);
	simulate_drop(a);
	if (a->sites_ok > 0)
		an_sites_destroy(&a->sites);
	a->sites_ok = 0;
	if (a->st != NULL || a->tl.elems != NULL || a->tl.el_stripes != NULL)
		device_free(a);
	/* after the state: its replay reads the index the thread made */
	replay_bg_stop(a);
	free(a->stack_match);
	free(a->frame_match);
	a->stack_match = a->frame_match = NULL;
	if (a->ix != NULL)
		idx_close(a->ix);
	else
		snap_free(a->snap);
	a->ix = NULL;
	a->snap = NULL;
}
