/*
 * The generic part of the views (view.h): which views exist, which one
 * is open, the pane it takes, and the actions that open and close them.
 * Everything a view computes lives in its own state, allocated here and
 * dropped when the device changes.
 */
#include "config.h"

#include "tui/view.h"

#include <stdlib.h>
#include <string.h>

#include "tui/replay_bg.h"
#include "util/xalloc.h"

static const struct view_ops *const all[] = {&view_leaks_ops,
    &view_frag_ops, &view_top_ops, &view_events_ops, &view_blocks_ops,
    &view_oom_ops, &view_info_ops, &view_phases_ops};
#define N_VIEWS (sizeof all / sizeof all[0])

struct views {
	int open;               /* index into all[], -1 = none */
	int prev_focus;         /* focus before the view opened */
	uint32_t dev_gen;       /* a->dev_gen the states belong to */
	void *priv[N_VIEWS];
};

void
views_init(struct app *a)
{
	size_t i;

	a->views = xcalloc(1, sizeof *a->views);
	a->views->open = -1;
	a->views->dev_gen = a->dev_gen;
	for (i = 0; i < N_VIEWS; i++)
		a->views->priv[i] = xcalloc(1, all[i]->priv_size);
}

static void
reset_all(struct app *a)
{
	struct views *v = a->views;
	size_t i;

	for (i = 0; i < N_VIEWS; i++) {
		all[i]->reset(a, v->priv[i]);
		memset(v->priv[i], 0, all[i]->priv_size);
	}
}

void
views_free(struct app *a)
{
	size_t i;

	if (a->views == NULL)
		return;
	reset_all(a);
	for (i = 0; i < N_VIEWS; i++)
		free(a->views->priv[i]);
	free(a->views);
	a->views = NULL;
}

const struct view_ops *
views_open_ops(const struct app *a)
{
	return a->views != NULL && a->views->open >= 0 ?
	    all[a->views->open] : NULL;
}

static void
close_view(struct app *a)
{
	struct views *v = a->views;

	if (v->open < 0)
		return;
	v->open = -1;
	a->focus = v->prev_focus;
	if (a->detail == DETAIL_SITE)
		a->detail = DETAIL_EVENT;
	a->view.hl = NULL;
	a->view.hl_label = NULL;
	a->view.marks = NULL;
	a->view.n_marks = 0;
	a->view.mark_sel = -2;
}

static int
toggle(struct app *a, int k)
{
	struct views *v = a->views;

	if (v->open == k) {
		close_view(a);
		return UI_HANDLED | UI_REDRAW;
	}
	if (all[k]->needs_replay && replay_bg_pending(a)) {
		char what[64];

		snprintf(what, sizeof what, "the %s view", all[k]->name);
		replay_bg_say(a, what);
		return UI_HANDLED | UI_REDRAW;
	}
	/* one view at a time: the focus goes back to where it was before
	 * the first one opened */
	close_view(a);
	if (all[k]->open(a, v->priv[k]) != 0)
		return UI_HANDLED | UI_REDRAW;
	v->prev_focus = a->focus;
	v->open = k;
	a->focus = all[k]->slot;
	a->detail_scroll = 0;
	return UI_HANDLED | UI_REDRAW;
}

/* Drops every view's state when the device has changed. */
static void
check_device(struct app *a)
{
	struct views *v = a->views;

	if (v->dev_gen == a->dev_gen)
		return;
	close_view(a);
	reset_all(a);
	v->dev_gen = a->dev_gen;
}

int
views_action(struct app *a, enum action act)
{
	struct views *v = a->views;
	size_t i;

	check_device(a);
	for (i = 0; i < N_VIEWS; i++)
		if (all[i]->key == act)
			return toggle(a, (int)i);
	if (v->open < 0)
		return 0;
	switch (act) {
	case ACT_QUIT:
	case ACT_BACK:
		close_view(a);
		return UI_HANDLED | UI_REDRAW;
	default:
		if (all[v->open]->global == NULL)
			return 0;
		return all[v->open]->global(a, v->priv[v->open], act);
	}
}

/* With no view open, the ends of the leak window are marked on the
 * timeline's axis; with no window, the OOM events. */
static void
window_marks(struct app *a)
{
	size_t n = 0;

	if (a->win_from >= 0)
		a->win_marks[n++] = a->win_from;
	if (a->win_to >= 0 && a->win_to != a->win_from)
		a->win_marks[n++] = a->win_to;
	a->view.marks = n > 0 ? a->win_marks : NULL;
	a->view.n_marks = n;
	a->view.mark_sel = -2;
	if (n == 0 && a->tm.n_jumps[TL_JUMP_OOM] > 0) {
		a->view.marks = a->tm.jumps[TL_JUMP_OOM];
		a->view.n_marks = a->tm.n_jumps[TL_JUMP_OOM];
	}
}

void
views_sync(struct app *a)
{
	struct views *v = a->views;

	check_device(a);
	if (v->open < 0) {
		window_marks(a);
		return;
	}
	a->view.hl = NULL;
	a->view.hl_label = NULL;
	a->view.marks = NULL;
	a->view.n_marks = 0;
	a->view.mark_sel = -2;
	all[v->open]->sync(a, v->priv[v->open]);
}

const char *
views_hint(const struct app *a)
{
	const struct view_ops *o = views_open_ops(a);

	return o != NULL ? o->hint : NULL;
}

void
views_prompt(struct app *a, const char *text)
{
	struct views *v = a->views;

	if (v->open >= 0 && all[v->open]->prompt != NULL)
		all[v->open]->prompt(a, v->priv[v->open], text);
}

int
views_write(struct app *a, FILE *f)
{
	struct views *v = a->views;

	if (v->open < 0 || all[v->open]->write == NULL)
		return 1;
	return all[v->open]->write(a, v->priv[v->open], f);
}

/* ---- the pane of the open view ------------------------------------------- */

static void
view_draw(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct views *v = a->views;

	all[v->open]->draw(a, v->priv[v->open], cb, r, focused);
}

/* A view asked to close (UI_CLOSE_VIEW): what it covered comes back,
 * focused. */
static int
finish(struct app *a, int f)
{
	struct views *v = a->views;
	int slot;

	if ((f & UI_CLOSE_VIEW) && v->open >= 0) {
		slot = all[v->open]->slot;
		close_view(a);
		a->focus = slot;
	}
	return f & ~UI_CLOSE_VIEW;
}

static int
view_act(struct app *a, enum action act, const struct rect *r)
{
	struct views *v = a->views;

	return finish(a, all[v->open]->action(a, v->priv[v->open], act, r));
}

int
views_click(struct app *a, int slot, int x, int row)
{
	struct views *v = a->views;
	const struct view_ops *o = views_open_ops(a);

	if (o == NULL || o->slot != slot)
		return 0;
	if (o->click == NULL)
		return UI_HANDLED | UI_REDRAW;
	return finish(a, o->click(a, v->priv[v->open], x, row,
	    &a->lay.r[slot]));
}

static const struct pane_ops pane_view_ops = {"view", view_draw, view_act};

const struct pane_ops *
views_pane(struct app *a, int slot)
{
	static const struct pane_ops *const base[3] = {&pane_timeline_ops,
	    &pane_segments_ops, &pane_detail_ops};
	const struct view_ops *o = views_open_ops(a);

	if (o != NULL && slot == o->slot)
		return &pane_view_ops;
	return base[slot];
}
