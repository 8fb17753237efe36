/*
 * The top view (T): live bytes by call site at the cursor, in the segment
 * map's place. Recomputed from the replayed state at the cursor when the
 * cursor has moved (O(live blocks)), not per trace; the selection follows
 * its site.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/top.h"
#include "render/anlist.h"
#include "render/fmt.h"
#include "tui/view.h"

struct top_view {
	int ok;                 /* top holds the tree at `at` */
	struct an_top top;
	int64_t at;
	struct anlist list;
};

static void
refresh(struct app *a, struct top_view *v)
{
	uint32_t site = AN_NO_NODE, k;

	if (v->ok && v->at == a->view.cursor)
		return;
	if (v->ok) {
		if (v->list.sel < v->top.n_roots)
			site = v->top.nodes[v->top.roots[v->list.sel]].site;
		an_top_destroy(&v->top);
	}
	if (a->st != NULL && state_exact(&a->src, a->view.cursor))
		an_top_state(a->st, a->device, v->list.sites, 1, &v->top);
	else
		an_top(&a->tl, v->list.sites, a->view.cursor, 1, &v->top);
	v->at = a->view.cursor;
	v->ok = 1;
	v->list.top = &v->top;
	for (k = 0; site != AN_NO_NODE && k < v->top.n_roots; k++)
		if (v->top.nodes[v->top.roots[k]].site == site) {
			v->list.sel = k;
			break;
		}
}

static int
tp_open(struct app *a, void *priv)
{
	struct top_view *v = priv;
	struct an_sites *sites = app_sites(a);

	if (sites == NULL)
		return -1;
	v->list.kind = ANLIST_TOP;
	v->list.sites = sites;
	v->list.utf8 = a->utf8;
	refresh(a, v);
	a->detail = DETAIL_SITE;
	return 0;
}

static void
tp_reset(struct app *a, void *priv)
{
	struct top_view *v = priv;

	(void)a;
	if (v->ok)
		an_top_destroy(&v->top);
}

static void
tp_sync(struct app *a, void *priv)
{
	struct top_view *v = priv;
	struct app_vdetail *d = &a->vdetail;
	char b[FMT_BUF], c[FMT_BUF], e[FMT_BUF];
	uint64_t k;
	const struct an_top_node *t;

	refresh(a, v);
	if (v->top.n_roots > 0 && v->list.sel >= v->top.n_roots)
		v->list.sel = v->top.n_roots - 1;
	k = v->list.sel;
	memset(d, 0, sizeof *d);
	if (k >= v->top.n_roots)
		return;
	t = &v->top.nodes[v->top.roots[k]];
	d->stack = t->stack;
	snprintf(d->title, sizeof d->title, "Site %" PRIu64 "/%u @ %s - %s "
	    "live in %s blocks", k + 1, v->top.n_roots,
	    fmt_event(e, sizeof e, v->top.at), fmt_size(b, sizeof b, t->bytes),
	    fmt_count(c, sizeof c, t->count));
	snprintf(d->info, sizeof d->info, "stack of one of its blocks; h/l "
	    "move the cursor, the list follows");
}

static void
tp_title(struct top_view *v, char *t, size_t size)
{
	char b[FMT_BUF], c[FMT_BUF], e[FMT_BUF];

	snprintf(t, size, "Top @ %s - %s live in %s blocks",
	    fmt_event(e, sizeof e, v->top.at),
	    fmt_size(b, sizeof b, v->top.bytes),
	    fmt_count(c, sizeof c, v->top.count));
}

static void
tp_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct top_view *v = priv;
	char title[256];

	refresh(a, v);
	tp_title(v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	anlist_render(&v->list, cb, r->x, r->y + 1, r->w, r->h - 1, focused);
}

static int
tp_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct top_view *v = priv;
	int f = pane_list_move(&v->list.sel, anlist_rows(&v->list), act, r);

	if (f != 0) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
		return f;
	}
	/* Enter: the global Enter focuses the stack */
	return pane_move_cursor(a, act);
}

static int
tp_write(struct app *a, void *priv, FILE *f)
{
	struct top_view *v = priv;
	char title[256];

	refresh(a, v);
	tp_title(v, title, sizeof title);
	fprintf(f, "%s\n", title);
	return anlist_write(&v->list, f);
}

const struct view_ops view_top_ops = {
	.name = "top",
	.key = ACT_VIEW_TOP,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct top_view),
	.open = tp_open,
	.reset = tp_reset,
	.sync = tp_sync,
	.draw = tp_draw,
	.action = tp_action,
	.hint = "j/k site  h/l cursor  Enter stack  Tab pane  q close",
	.write = tp_write,
};
