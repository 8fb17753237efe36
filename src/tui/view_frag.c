/*
 * The frag view (F): every segment_alloc/map, worst gap first, in the
 * detail pane's place so the segment map stays visible. All of them are
 * marked on the timeline's axis, the selected one highlighted; Enter
 * moves the cursor there (the map shows the state and its gaps at that
 * event). The report walks the replay over the whole trace once per
 * device, the first time the view opens.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/frag.h"
#include "render/anlist.h"
#include "render/fmt.h"
#include "tui/view.h"

struct frag_view {
	int ok;
	struct an_frag frag;
	struct anlist list;
};

/* The analysis moves the replay: cursor_replay_moved afterwards. */
static int
fr_open(struct app *a, void *priv)
{
	struct frag_view *v = priv;
	struct an_sites *sites = tables_sites(a);
	struct sv_error err;
	int r;

	if (sites == NULL)
		return -1;
	if (!v->ok) {
		sv_error_clear(&err);
		r = an_frag(a->snap, &a->tl, a->src.replay, sites, -2,
		    &v->frag, &err);
		cursor_replay_moved(a);
		if (r != 0) {
			an_frag_destroy(&v->frag);
			memset(&v->frag, 0, sizeof v->frag);
			app_msg(a, "frag: %s", err.msg);
			return -1;
		}
		v->list.kind = ANLIST_FRAG;
		v->list.frag = &v->frag;
		v->list.sites = sites;
		v->ok = 1;
	}
	v->list.utf8 = a->utf8;
	a->detail = DETAIL_EVENT;
	return 0;
}

static void
fr_reset(struct app *a, void *priv)
{
	struct frag_view *v = priv;

	(void)a;
	if (v->ok)
		an_frag_destroy(&v->frag);
}

static void
fr_sync(struct app *a, void *priv)
{
	struct frag_view *v = priv;

	a->view.marks = a->tm.jumps[TL_JUMP_SEGALLOC];
	a->view.n_marks = a->tm.n_jumps[TL_JUMP_SEGALLOC];
	if (v->list.sel < v->frag.n_allocs)
		a->view.mark_sel = v->frag.allocs[v->list.sel].ev;
}

static void
go(struct app *a, struct frag_view *v)
{
	const struct an_frag_alloc *x;
	char g[FMT_BUF], r[FMT_BUF], f[FMT_BUF], lg[FMT_BUF], e[FMT_BUF];

	if (v->list.sel >= v->frag.n_allocs)
		return;
	x = &v->frag.allocs[v->list.sel];
	a->detail = DETAIL_EVENT;
	cursor_set(a, x->ev);
	/* measured in the pool the request needed, as snapview frag does */
	if (x->has_state && x->req_ev >= 0)
		app_msg(a, "%s gap %s req %s: %s pool free %s, largest %s",
		    fmt_event(e, sizeof e, x->ev),
		    fmt_size_short(g, sizeof g, x->gap),
		    fmt_size_short(r, sizeof r, x->request),
		    x->large ? "large" : "small",
		    fmt_size_short(f, sizeof f, x->pool_free),
		    fmt_size_short(lg, sizeof lg, x->pool_largest));
	else if (x->has_state)
		app_msg(a, "%s gap %s: free on its stream %s, largest %s",
		    fmt_event(e, sizeof e, x->ev),
		    fmt_size_short(g, sizeof g, x->gap),
		    fmt_size_short(f, sizeof f, x->stream_free),
		    fmt_size_short(lg, sizeof lg, x->stream_largest));
	else
		app_msg(a, "%s: gap %s", fmt_event(e, sizeof e, x->ev),
		    fmt_size_short(g, sizeof g, x->gap));
}

static void
fr_title(struct frag_view *v, char *t, size_t size)
{
	snprintf(t, size, "Segment allocations - %" PRIu64 ", worst gap first "
	    "- %" PRIu64 " could not use free memory (!)", v->frag.n_allocs,
	    v->frag.n_unusable);
}

static void
fr_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct frag_view *v = priv;
	char title[256];

	fr_title(v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	anlist_render(&v->list, cb, r->x, r->y + 1, r->w, r->h - 1, focused);
}

static int
fr_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct frag_view *v = priv;
	int f = pane_list_move(&v->list.sel, anlist_rows(&v->list), act, r);

	if (f != 0)
		return f;
	if ((f = pane_timeline_move_cursor(a, act)) != 0)
		return f;
	if (act != ACT_ENTER)
		return 0;
	go(a, v);
	return UI_HANDLED | UI_REDRAW;
}

static int
fr_global(struct app *a, void *priv, enum action act)
{
	struct frag_view *v = priv;
	uint64_t n = anlist_rows(&v->list);

	if (act != ACT_ALLOC_NEXT && act != ACT_ALLOC_PREV)
		return 0;
	if (act == ACT_ALLOC_NEXT && v->list.sel + 1 < n)
		v->list.sel++;
	else if (act == ACT_ALLOC_PREV && v->list.sel > 0)
		v->list.sel--;
	go(a, v);
	return UI_HANDLED | UI_REDRAW;
}

static int
fr_write(struct app *a, void *priv, FILE *f)
{
	struct frag_view *v = priv;
	char title[256];

	(void)a;
	fr_title(v, title, sizeof title);
	fprintf(f, "%s\n", title);
	return anlist_write(&v->list, f);
}

static int
fr_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct frag_view *v = priv;

	(void)x;
	/* the view is in the detail pane's place: no site to show there */
	return pane_list_clicked(a, priv, r, pane_list_click(&v->list.sel,
	    v->list.first, anlist_rows(&v->list), row, 2), 0, fr_action);
}

const struct view_ops view_frag_ops = {
	.name = "frag",
	.key = ACT_VIEW_FRAG,
	.slot = LAY_DETAIL,
	.priv_size = sizeof(struct frag_view),
	.open = fr_open,
	.reset = fr_reset,
	.sync = fr_sync,
	.draw = fr_draw,
	.action = fr_action,
	.global = fr_global,
	.hint = "j/k row  Enter go to event  ]/[ next/prev row  q close",
	.write = fr_write,
	.click = fr_click,
	.needs_replay = 1,
};
