/*
 * The leak view (U): ranked leak sites in the segment map's place: the
 * blocks allocated in the leak window (b and e mark it on the timeline;
 * the whole trace when none is set) and still alive at its end. The
 * selected site's leaked blocks are one highlighted band at the bottom
 * of the timeline and their alloc events are marked on its axis; Enter
 * and ]/[ move the cursor to its blocks. Each site has the category
 * holding most of its bytes (the viewer's one table, with the user's
 * rules); with fewer than two complete steps in the window, no site is
 * said to grow every step (analysis/leaks.h: judged). The analysis runs
 * once per device and window, when the view first needs it
 * (O(elements)).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/leaks.h"
#include "render/anlist.h"
#include "render/fmt.h"
#include "tui/view.h"
#include "util/xalloc.h"

struct leaks_view {
	int ok;                         /* analysis done */
	int64_t from, to;               /* its window (app's win_*) */
	struct an_leaks leaks;
	struct an_leak_elems elems;
	struct tl_hilite hl;            /* blocks of site hl_site */
	uint64_t hl_site;
	int64_t *marks;                 /* their alloc events, sorted */
	uint64_t n_marks;
	struct anlist list;
};

/* The leaks of the app's window (the whole trace when none is set). */
static int
compute(struct app *a, struct leaks_view *v)
{
	struct an_sites *sites = tables_sites(a);
	struct an_leaks_with with;
	struct sv_error err;

	if (sites == NULL)
		return -1;
	memset(&with, 0, sizeof with);
	with.cats = tables_categories(a);
	sv_error_clear(&err);
	if (an_leaks_using(a->snap, &a->tl, sites, &with, a->win_from >= -1 ?
	    a->win_from : -1, a->win_to >= 0 ? a->win_to : -1, &v->leaks,
	    &err) != 0) {
		app_msg(a, "leaks: %s", err.msg);
		return -1;
	}
	an_leak_elems(&a->tl, sites, &v->leaks, &v->elems);
	v->hl_site = UINT64_MAX;
	v->list.kind = ANLIST_LEAKS;
	v->list.leaks = &v->leaks;
	v->list.sites = sites;
	v->from = a->win_from;
	v->to = a->win_to;
	v->ok = 1;
	return 0;
}

static void
drop(struct leaks_view *v)
{
	if (v->ok) {
		an_leaks_destroy(&v->leaks);
		an_leak_elems_destroy(&v->elems);
	}
	v->ok = 0;
	v->hl_site = UINT64_MAX;
	v->list.sel = v->list.first = 0;
}

static int
lk_open(struct app *a, void *priv)
{
	struct leaks_view *v = priv;

	if (v->ok && (v->from != a->win_from || v->to != a->win_to))
		drop(v);
	if (!v->ok && compute(a, v) != 0)
		return -1;
	v->list.utf8 = a->utf8;
	a->detail = DETAIL_SITE;
	if (!v->leaks.judged)
		app_msg(a, "leaks across steps not judged: %" PRIu64
		    " complete step%s (2 needed)", v->leaks.n_complete,
		    v->leaks.n_complete == 1 ? "" : "s");
	return 0;
}

static void
lk_reset(struct app *a, void *priv)
{
	struct leaks_view *v = priv;

	(void)a;
	drop(v);
	tl_hilite_destroy(&v->hl);
	free(v->marks);
}

static void
hilite(struct app *a, struct leaks_view *v, uint64_t k)
{
	const uint64_t *el = v->elems.elems + v->elems.off[k];
	const struct idx_elem *ev = v->elems.vals + v->elems.off[k];
	uint64_t cnt = v->elems.off[k + 1] - v->elems.off[k], i;

	if (v->hl_site == k)
		return;
	tl_hilite_destroy(&v->hl);
	tl_hilite_init(&v->hl, &a->tm, el, ev, cnt);
	free(v->marks);
	v->marks = xcalloc(cnt + 1, sizeof *v->marks);
	v->n_marks = 0;
	for (i = 0; i < cnt; i++)
		if (ev[i].alloc_ev >= 0)
			v->marks[v->n_marks++] = ev[i].alloc_ev;
	v->hl_site = k;
}

/* Title and info of the detail pane for the selected site. */
static void
site_detail(struct app *a, struct leaks_view *v)
{
	struct app_vdetail *d = &a->vdetail;
	char b[FMT_BUF], c[FMT_BUF], e0[FMT_BUF], e1[FMT_BUF];
	uint64_t k = v->list.sel;
	const struct an_leak_site *s;
	const char *cat;

	memset(d, 0, sizeof *d);
	if (k >= v->leaks.n_sites)
		return;
	s = &v->leaks.sites[k];
	d->stack = s->stack;
	/* with a window, blocks alive at its end may be freed later */
	snprintf(d->title, sizeof d->title, "Leak site %" PRIu64 "/%" PRIu64
	    " - %s in %s block%s %s%s", k + 1, v->leaks.n_sites,
	    fmt_size(b, sizeof b, s->bytes), fmt_count(c, sizeof c, s->count),
	    s->count == 1 ? "" : "s",
	    v->to >= 0 ? "alive at its end" : "never freed",
	    s->periodic ? " - grows every step" : "");
	cat = s->category >= 0 ? an_category_label((unsigned)s->category) :
	    "no category";
	if (s->free_stack)
		snprintf(d->info, sizeof d->info, "%s - allocated before the "
		    "trace; the stack of their free", cat);
	else if (s->first_ev >= 0)
		snprintf(d->info, sizeof d->info, "%s - allocated %s..%s - "
		    "Enter: first block, ]/[: next/previous", cat,
		    fmt_event(e0, sizeof e0, s->first_ev),
		    fmt_event(e1, sizeof e1, s->last_ev));
	else
		snprintf(d->info, sizeof d->info,
		    "%s - allocated before the trace began", cat);
}

static void
lk_sync(struct app *a, void *priv)
{
	struct leaks_view *v = priv;

	/* the window moved (b, e, u): the leaks of the new one */
	if (v->ok && (v->from != a->win_from || v->to != a->win_to)) {
		drop(v);
		compute(a, v);
	}
	memset(&a->vdetail, 0, sizeof a->vdetail);
	if (v->ok && v->leaks.n_sites == 0)
		snprintf(a->vdetail.title, sizeof a->vdetail.title,
		    "Leak site - none");
	if (!v->ok || v->leaks.n_sites == 0)
		return;
	if (v->list.sel >= v->leaks.n_sites)
		v->list.sel = v->leaks.n_sites - 1;
	hilite(a, v, v->list.sel);
	a->view.hl = &v->hl;
	a->view.marks = v->marks;
	a->view.n_marks = v->n_marks;
	site_detail(a, v);
}

/* Moves the cursor to a leaked block of the selected site: the first
 * (how 0), or the next/previous one from the cursor (how 1/-1). */
static void
jump(struct app *a, struct leaks_view *v, int how)
{
	uint64_t k = v->list.sel, i, cnt, found = UINT64_MAX;
	const uint64_t *el;
	const struct idx_elem *vals;

	if (k >= v->leaks.n_sites)
		return;
	el = v->elems.elems + v->elems.off[k];
	vals = v->elems.vals + v->elems.off[k];
	cnt = v->elems.off[k + 1] - v->elems.off[k];
	for (i = 0; i < cnt; i++) {
		int64_t ev = vals[i].alloc_ev;

		if (ev < 0)
			continue;
		if (how == 0 || (how > 0 && ev > a->view.cursor)) {
			found = i;
			break;
		}
		if (how < 0 && ev < a->view.cursor)
			found = i;
	}
	if (found == UINT64_MAX) {
		app_msg(a, how == 0 ? "every block of this site was allocated "
		    "before the trace" : how > 0 ? "no later leaked block of "
		    "this site" : "no earlier leaked block of this site");
		return;
	}
	a->detail = DETAIL_EVENT;
	a->detail_scroll = 0;
	cursor_set(a, vals[found].alloc_ev);
	a->view.sel_elem = el[found];
	app_msg(a, "leaked block %" PRIu64 " of %" PRIu64 " of site %" PRIu64,
	    found + 1, cnt, k + 1);
}

static void
lk_title(struct leaks_view *v, char *t, size_t size)
{
	char b[FMT_BUF], c[FMT_BUF], e[FMT_BUF], w[96], e0[FMT_BUF],
	    e1[FMT_BUF];

	w[0] = '\0';
	if (v->from >= 0 || v->to >= 0)
		snprintf(w, sizeof w, " in %s..%s", v->from >= 0 ?
		    fmt_event(e0, sizeof e0, v->from) : "start", v->to >= 0 ?
		    fmt_event(e1, sizeof e1, v->to) : "end");
	e[0] = '\0';
	if (v->leaks.n_steps > 0 || !v->leaks.judged)
		snprintf(e, sizeof e, " - %" PRIu64 " step%s%s",
		    v->leaks.n_steps, v->leaks.n_steps == 1 ? "" : "s",
		    v->leaks.judged ? "" : ", not judged");
	snprintf(t, size, "Leaks%s - %" PRIu64 " site%s - %s block%s, %s "
	    "alive at %s%s", w, v->leaks.n_sites, v->leaks.n_sites == 1 ? "" :
	    "s", fmt_count(b, sizeof b, v->leaks.count),
	    v->leaks.count == 1 ? "" : "s",
	    fmt_size(c, sizeof c, v->leaks.bytes), w[0] != '\0' ? "its end" :
	    "the end", e);
}

static void
lk_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct leaks_view *v = priv;
	char title[256];

	lk_title(v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	anlist_render(&v->list, cb, r->x, r->y + 1, r->w, r->h - 1, focused);
}

static int
lk_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct leaks_view *v = priv;
	int f = pane_list_move(&v->list.sel, anlist_rows(&v->list), act, r);

	if (f == 0 && (f = pane_timeline_move_cursor(a, act)) != 0)
		return f;
	if (f != 0) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
		return f;
	}
	if (act != ACT_ENTER)
		return 0;
	jump(a, v, 0);
	return UI_HANDLED | UI_REDRAW;
}

static int
lk_global(struct app *a, void *priv, enum action act)
{
	if (act != ACT_ALLOC_NEXT && act != ACT_ALLOC_PREV)
		return 0;
	jump(a, priv, act == ACT_ALLOC_NEXT ? 1 : -1);
	return UI_HANDLED | UI_REDRAW;
}

static int
lk_write(struct app *a, void *priv, FILE *f)
{
	struct leaks_view *v = priv;
	char title[256];

	(void)a;
	lk_title(v, title, sizeof title);
	fprintf(f, "%s\n", title);
	return anlist_write(&v->list, f);
}

static int
lk_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct leaks_view *v = priv;
	int c = pane_list_click(&v->list.sel, v->list.first,
	    anlist_rows(&v->list), row, 2);

	(void)x;
	return pane_list_clicked(a, priv, r, c, 1, lk_action);
}

const struct view_ops view_leaks_ops = {
	.name = "leaks",
	.key = ACT_VIEW_LEAKS,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct leaks_view),
	.open = lk_open,
	.reset = lk_reset,
	.sync = lk_sync,
	.draw = lk_draw,
	.action = lk_action,
	.global = lk_global,
	.hint = "j/k site  Enter first block  ]/[ next/prev  Tab pane  "
		"q close",
	.write = lk_write,
	.click = lk_click,
};
