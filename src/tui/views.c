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

#include "util/xalloc.h"

static const struct view_ops *const all[] = {&view_leaks_ops,
    &view_frag_ops, &view_top_ops};
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

void
views_sync(struct app *a)
{
	struct views *v = a->views;

	check_device(a);
	if (v->open < 0)
		return;
	a->view.hl = NULL;
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

static int
view_act(struct app *a, enum action act, const struct rect *r)
{
	struct views *v = a->views;

	return all[v->open]->action(a, v->priv[v->open], act, r);
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
