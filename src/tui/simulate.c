/*
 * The viewer's what-if: a simulation under other allocator settings,
 * drawn over the timeline, and its state at the cursor in the state
 * pane. See simulate.h.
 */
#include "config.h"

#include "tui/simulate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/whatif.h"
#include "render/timeline.h"
#include "replay/simconf.h"
#include "tui/replay_bg.h"
#include "util/units.h"
#include "util/xalloc.h"

struct simulate {
	uint32_t dev_gen;	/* the device it was made for */
	char text[256];		/* the settings as typed */
	struct sim_conf conf;	/* as parsed */
	struct an_whatif w;
	struct tl_overlay ov;
	int on;
	char hint[640];
	/* the state pane's simulated state (D) */
	int show;
	struct an_whatif_walk *walk;
	const struct replay_state *st;	/* at st_at, when st_ok */
	int64_t st_at;
	int st_ok;
	struct replay_totals tot;
	struct segmap_view sv;		/* its own selection */
};

static struct simulate *
state(struct app *a)
{
	if (a->simulate == NULL) {
		a->simulate = xcalloc(1, sizeof *a->simulate);
		snprintf(a->simulate->text, sizeof a->simulate->text,
		    "expandable_segments:True");
	}
	return a->simulate;
}

static void
off(struct app *a)
{
	struct simulate *x = a->simulate;

	if (x == NULL || !x->on)
		return;
	if (a->view.overlay == &x->ov)
		a->view.overlay = NULL;
	tl_overlay_destroy(&x->ov);
	an_whatif_destroy(&x->w);
	an_whatif_walk_free(x->walk);
	x->walk = NULL;
	x->st = NULL;
	x->st_ok = 0;
	x->show = 0;
	x->on = 0;
}

void
simulate_begin(struct app *a)
{
	app_prompt(a, PROMPT_WHATIF, "what if (PYTORCH_CUDA_ALLOC_CONF; "
	    "empty: off): ", state(a)->text);
}

/* The state pane shows the simulated state: the walk made (it moves the
 * replay: the state at the cursor again). -1 with a sentence in why. */
static int
show_on(struct app *a, struct simulate *x, char *why, size_t wl)
{
	struct sv_error err;

	if (x->walk == NULL) {
		x->walk = an_whatif_walk_new(a->snap, a->device,
		    a->src.replay, &x->conf, 0, &err);
		cursor_replay_moved(a);
		if (x->walk == NULL) {
			snprintf(why, wl, "%s", err.msg);
			return -1;
		}
	}
	x->show = 1;
	x->st_ok = 0;
	x->sv.first = 0;
	x->sv.sel_seg = SEGMAP_NONE;
	x->sv.sel_block = SEGMAP_NONE;
	return 0;
}

void
simulate_run(struct app *a, const char *text)
{
	struct simulate *x = state(a);
	struct an_whatif_opts wo;
	struct sim_conf c;
	struct sv_error err;
	const struct an_whatif_agree *g;
	char why[256], agree[96], p0[32], p1[32], n0[32], n1[32];
	int shown = x->on && x->show;

	off(a);
	if (text[0] == '\0' || strcmp(text, "off") == 0) {
		app_msg(a, "what-if line removed");
		return;
	}
	if (simconf_parse(text, &c, why, sizeof why) != 0) {
		app_msg(a, "alloc conf: %s", why);
		return;
	}
	snprintf(x->text, sizeof x->text, "%s", text);
	x->conf = c;
	if (a->src.replay == NULL) {
		if (replay_bg_pending(a))
			replay_bg_say(a, "what if");
		else
			app_msg(a, "what if: no replay of this device (the "
			    "final state only)");
		return;
	}
	memset(&wo, 0, sizeof wo);
	wo.confs = &c;
	wo.n_confs = 1;
	wo.series = 1;
	wo.no_steps = 1;
	if (an_whatif(a->snap, a->device, a->src.replay, &wo, &x->w,
	    &err) != 0) {
		cursor_replay_moved(a);
		app_msg(a, "what if: %s", err.msg);
		return;
	}
	/* the simulation moved the replay: the state at the cursor again */
	cursor_replay_moved(a);
	tl_overlay_init(&x->ov, x->w.cols[1].series, x->w.n_events);
	a->view.overlay = &x->ov;
	x->dev_gen = a->dev_gen;
	x->on = 1;
	g = &x->w.agree;
	snprintf(agree, sizeof agree, "%s/%s", sv_fmt_count(n0, sizeof n0,
	    g->seg_allocs_ok + g->seg_frees_ok), sv_fmt_count(n1, sizeof n1,
	    g->seg_allocs + g->seg_frees));
	snprintf(x->hint, sizeof x->hint, "%s %s: peak %s, recorded %s%s; "
	    "agrees %s%s", a->utf8 ? "\u2504" : "~",
	    x->w.cols[1].name,
	    sv_fmt_size(p1, sizeof p1, x->w.cols[1].peak_reserved),
	    sv_fmt_size(p0, sizeof p0, x->w.cols[0].peak_reserved),
	    x->w.cols[1].first_oom >= 0 ? ", OOM" : "", agree,
	    g->exact ? " exact" : " (not exact)");
	app_msg(a, "%s", x->hint);
	/* the state pane showed the simulated state: it shows the new one */
	if (shown && show_on(a, x, why, sizeof why) != 0)
		app_msg(a, "simulated state: %s", why);
}

const char *
simulate_hint(struct app *a)
{
	struct simulate *x = a->simulate;

	if (x == NULL || !x->on)
		return NULL;
	if (x->dev_gen != a->dev_gen) {
		off(a);
		return NULL;
	}
	return x->hint;
}

void
simulate_toggle_state(struct app *a)
{
	struct simulate *x = a->simulate;
	char why[256];

	if (x != NULL && x->on && x->dev_gen != a->dev_gen)
		off(a);
	if (x == NULL || !x->on) {
		app_msg(a, "no simulation to show: A runs one");
		return;
	}
	if (x->show) {
		x->show = 0;
		app_msg(a, "state pane: the recorded state");
		return;
	}
	if (show_on(a, x, why, sizeof why) != 0) {
		app_msg(a, "simulated state: %s", why);
		return;
	}
	app_msg(a, "state pane: simulated (D: recorded)");
}

const struct replay_state *
simulate_state(struct app *a, struct replay_totals *t, const char **name,
    struct segmap_view **sv)
{
	struct simulate *x = a->simulate;
	struct sv_error err;
	int64_t at = a->view.cursor;

	if (x == NULL || !x->on || !x->show || x->walk == NULL)
		return NULL;
	if (x->dev_gen != a->dev_gen) {
		off(a);
		return NULL;
	}
	if (!x->st_ok || x->st_at != at) {
		x->st_ok = 0;
		if (an_whatif_walk_seek(x->walk, at, &err) != 0) {
			x->show = 0;
			app_msg(a, "simulated state: %s", err.msg);
			return NULL;
		}
		x->st = an_whatif_walk_state(x->walk);
		replay_totals(x->st, &x->tot);
		x->st_at = at;
		x->st_ok = 1;
		if (x->sv.sel_seg != SEGMAP_NONE &&
		    x->sv.sel_seg >= x->st->n_segments) {
			x->sv.sel_seg = SEGMAP_NONE;
			x->sv.sel_block = SEGMAP_NONE;
		}
		if (x->sv.sel_block != SEGMAP_NONE &&
		    x->sv.sel_block >= x->st->n_blocks)
			x->sv.sel_block = SEGMAP_NONE;
		if (x->sv.first >= x->st->n_segments)
			x->sv.first = 0;
	}
	x->sv.utf8 = a->sv.utf8;
	x->sv.mono = a->sv.mono;
	if (t != NULL)
		*t = x->tot;
	if (name != NULL)
		*name = x->w.cols[1].name;
	if (sv != NULL)
		*sv = &x->sv;
	return x->st;
}

const struct replay_block *
simulate_block(struct app *a, const struct replay_segment **seg)
{
	const struct replay_state *st;
	struct segmap_view *sv;

	if ((st = simulate_state(a, NULL, NULL, &sv)) == NULL ||
	    sv->sel_seg == SEGMAP_NONE || sv->sel_seg >= st->n_segments ||
	    sv->sel_block == SEGMAP_NONE || sv->sel_block >= st->n_blocks)
		return NULL;
	*seg = &st->segments[sv->sel_seg];
	return &st->blocks[sv->sel_block];
}

void
simulate_drop(struct app *a)
{
	off(a);
	free(a->simulate);
	a->simulate = NULL;
}
