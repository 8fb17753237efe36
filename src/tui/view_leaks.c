/*
 * The leak view (U): ranked leak sites in the segment map's place: the
 * blocks allocated in the leak window (b and e mark it on the timeline;
 * the whole trace when none is set) and still alive at its end. The
 * selected site's leaked blocks are one highlighted band at the bottom
 * of the timeline and their alloc events are marked on its axis; Enter
 * and ]/[ move the cursor to its blocks. Each site has the category
 * holding most of its bytes (the viewer's one table, with the user's
 * rules); with fewer than two complete steps in the window, no site is
 * said to grow every step (analysis/leaks.h: judged), so the view says
 * so first and lists what is alive at the end by category instead of
 * ranking sites as leaks (parameters and optimizer state would rank
 * first). The analysis runs
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

/* What is alive at the window's end in one category, when leaks cannot
 * be judged: its elements, bytes and blocks. */
struct alive_cat {
	unsigned cat;
	uint64_t bytes, count;
	uint64_t *elems;
	struct idx_elem *vals;
};

struct leaks_view {
	int ok;                         /* analysis done */
	int64_t from, to;               /* its window (app's win_*) */
	struct an_leaks leaks;
	struct an_leak_elems elems;
	struct tl_hilite hl;            /* blocks of site (or category)
					   hl_site */
	uint64_t hl_site;
	int64_t *marks;                 /* their alloc events, sorted */
	uint64_t n_marks;
	struct anlist list;
	/* fewer than two complete steps: no leak can be judged, the view
	 * lists what is alive at the end by category instead */
	struct alive_cat alive[AN_CAT_COUNT];
	unsigned n_alive;
	uint64_t alive_bytes, alive_count;
	uint64_t sel, first;            /* in alive[] */
};

/* With no leak judged: what is alive at the window's end, by category
 * (the most bytes first), each with its blocks for the timeline. One
 * pass over the elements. Leaves n_alive 0 without categories. */
static void
alive_by_category(struct app *a, struct leaks_view *v,
    const struct an_categories *cats)
{
	struct alive_cat byc[AN_CAT_COUNT], t;
	uint64_t k, cap[AN_CAT_COUNT] = {0};
	int64_t at = v->leaks.to;
	unsigned c, i, j;
	struct idx_elem e;

	v->n_alive = 0;
	v->alive_bytes = v->alive_count = 0;
	if (cats == NULL)
		return;
	memset(byc, 0, sizeof byc);
	for (k = 0; k < a->tl.n_elems; k++) {
		e = idx_tl_elem(&a->tl, k);
		if (!idx_alive_after(e.alloc_ev, e.free_ev, at))
			continue;
		c = an_category_of(cats, k);
		if (byc[c].count == cap[c]) {
			cap[c] = cap[c] > 0 ? cap[c] * 2 : 16;
			byc[c].elems = xreallocarray(byc[c].elems, cap[c],
			    sizeof *byc[c].elems);
			byc[c].vals = xreallocarray(byc[c].vals, cap[c],
			    sizeof *byc[c].vals);
		}
		byc[c].elems[byc[c].count] = k;
		byc[c].vals[byc[c].count++] = e;
		byc[c].bytes += e.size;
	}
	for (c = 0; c < AN_CAT_COUNT; c++) {
		byc[c].cat = c;
		if (byc[c].count == 0)
			continue;
		v->alive[v->n_alive++] = byc[c];
		v->alive_bytes += byc[c].bytes;
		v->alive_count += byc[c].count;
	}
	for (i = 1; i < v->n_alive; i++)
		for (j = i; j > 0 && v->alive[j].bytes > v->alive[j - 1].bytes;
		    j--) {
			t = v->alive[j];
			v->alive[j] = v->alive[j - 1];
			v->alive[j - 1] = t;
		}
}

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
	/* the whole trace with no leak judged: what is alive instead; a
	 * window (b/e, or a phase instance's) lists what it left, judged
	 * or not */
	if (!v->leaks.judged && a->win_from < -1 && a->win_to < 0)
		alive_by_category(a, v, with.cats);
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
	unsigned i;

	if (v->ok) {
		an_leaks_destroy(&v->leaks);
		an_leak_elems_destroy(&v->elems);
	}
	for (i = 0; i < v->n_alive; i++) {
		free(v->alive[i].elems);
		free(v->alive[i].vals);
	}
	v->n_alive = 0;
	v->sel = v->first = 0;
	v->ok = 0;
	v->hl_site = UINT64_MAX;
	v->list.sel = v->list.first = 0;
}

/* Why no leak is judged: "1 complete step", or "no steps found". */
static void
why_not(const struct leaks_view *v, char *buf, size_t size)
{
	if (v->leaks.n_steps == 0)
		snprintf(buf, size, "no steps found");
	else
		snprintf(buf, size, "%" PRIu64 " complete step%s",
		    v->leaks.n_complete, v->leaks.n_complete == 1 ? "" : "s");
}

static int
lk_open(struct app *a, void *priv)
{
	struct leaks_view *v = priv;
	char why[64];

	if (v->ok && (v->from != a->win_from || v->to != a->win_to))
		drop(v);
	if (!v->ok && compute(a, v) != 0)
		return -1;
	v->list.utf8 = a->utf8;
	a->detail = DETAIL_SITE;
	if (!v->leaks.judged && v->n_alive > 0) {
		why_not(v, why, sizeof why);
		app_msg(a, "leaks cannot be judged: %s (2 needed)%s", why,
		    v->n_alive > 0 ? "; alive at the end, by category" : "");
	}
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

static int
cmp_event(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;

	return *a < *b ? -1 : *a > *b;
}

/* The blocks of category row k alive at the end, as the timeline's set
 * (hl_site is UINT64_MAX - 1 - k then: apart from the site ids). */
static void
hilite_alive(struct app *a, struct leaks_view *v, uint64_t k)
{
	const struct alive_cat *c = &v->alive[k];
	uint64_t i;

	if (v->hl_site == UINT64_MAX - 1 - k)
		return;
	tl_hilite_destroy(&v->hl);
	tl_hilite_init(&v->hl, &a->tm, c->elems, c->vals, c->count);
	free(v->marks);
	v->marks = xcalloc(c->count + 1, sizeof *v->marks);
	v->n_marks = 0;
	for (i = 0; i < c->count; i++)
		if (c->vals[i].alloc_ev >= 0)
			v->marks[v->n_marks++] = c->vals[i].alloc_ev;
	qsort(v->marks, v->n_marks, sizeof *v->marks, cmp_event);
	v->hl_site = UINT64_MAX - 1 - k;
}

/* The largest block of category row k (allocated in the trace when
 * in_trace), or NULL. */
static const struct idx_elem *
alive_largest(const struct leaks_view *v, uint64_t k, int in_trace)
{
	const struct alive_cat *c = &v->alive[k];
	const struct idx_elem *best = NULL;
	uint64_t i;

	for (i = 0; i < c->count; i++)
		if ((!in_trace || c->vals[i].alloc_ev >= 0) &&
		    (best == NULL || c->vals[i].size > best->size))
			best = &c->vals[i];
	return best;
}

static void
alive_detail(struct app *a, struct leaks_view *v)
{
	struct app_vdetail *d = &a->vdetail;
	const struct alive_cat *c;
	const struct idx_elem *e;
	char b[FMT_BUF], n[FMT_BUF], why[64];

	memset(d, 0, sizeof *d);
	if (v->sel >= v->n_alive)
		return;
	c = &v->alive[v->sel];
	why_not(v, why, sizeof why);
	snprintf(d->title, sizeof d->title, "%s - %s in %s block%s alive at "
	    "the end", an_category_label(c->cat), fmt_size(b, sizeof b,
	    c->bytes), fmt_count(n, sizeof n, c->count), c->count == 1 ? "" :
	    "s");
	snprintf(d->info, sizeof d->info, "no leak judged (%s, 2 needed); "
	    "the stack of its largest block:", why);
	if ((e = alive_largest(v, v->sel, 0)) != NULL)
		d->stack = e->stack;
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
	if (v->ok && v->n_alive > 0) {
		if (v->sel >= v->n_alive)
			v->sel = v->n_alive - 1;
		hilite_alive(a, v, v->sel);
		a->view.hl = &v->hl;
		a->view.hl_label = "alive at the end";
		a->view.marks = v->marks;
		a->view.n_marks = v->n_marks;
		alive_detail(a, v);
		return;
	}
	if (v->ok && v->leaks.n_sites == 0)
		snprintf(a->vdetail.title, sizeof a->vdetail.title,
		    "Leak site - none");
	if (!v->ok || v->leaks.n_sites == 0)
		return;
	if (v->list.sel >= v->leaks.n_sites)
		v->list.sel = v->leaks.n_sites - 1;
	hilite(a, v, v->list.sel);
	a->view.hl = &v->hl;
	a->view.hl_label = NULL;
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
	if (v->n_alive > 0) {
		/* no leak judged: that first, then what is alive */
		why_not(v, e, sizeof e);
		snprintf(t, size, "No leak judged%s (%s) - alive at %s: %s in "
		    "%s block%s", w, e, w[0] != '\0' ? "its end" : "the end",
		    fmt_size(c, sizeof c, v->alive_bytes), fmt_count(b,
		    sizeof b, v->alive_count), v->alive_count == 1 ? "" : "s");
		return;
	}
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

/* Row k of what is alive at the end: bytes, blocks, share, category. */
static void
alive_row(const struct leaks_view *v, uint64_t k, char *buf, size_t size)
{
	const struct alive_cat *c = &v->alive[k];
	char b[FMT_BUF], n[FMT_BUF];

	snprintf(buf, size, "%8s %6s %5.1f%%  %s", fmt_size_short(b, sizeof b,
	    c->bytes), fmt_count(n, sizeof n, c->count), v->alive_bytes ?
	    100.0 * (double)c->bytes / (double)v->alive_bytes : 0.0,
	    an_category_label(c->cat));
}

static const char alive_note[] = "Fewer than 2 complete steps: leaks "
    "cannot be judged. Alive at the end:";
static const char alive_header[] = "   bytes blocks  share  category";

static void
lk_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct leaks_view *v = priv;
	char title[256], text[256];
	int rows = r->h - 3, k;
	uint64_t i;

	lk_title(v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	if (v->n_alive == 0) {
		anlist_render(&v->list, cb, r->x, r->y + 1, r->w, r->h - 1,
		    focused);
		return;
	}
	/* no leak judged: say so first, then what is alive */
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	cellbuf_puts(cb, r->x + 1, r->y + 1, alive_note, r->w - 1, UIC_DEFAULT,
	    CB_A_BOLD);
	cellbuf_puts(cb, r->x + 1, r->y + 2, alive_header, r->w - 1, UIC_AXIS,
	    CB_A_BOLD);
	if (rows < 1)
		return;
	pane_list_scroll(&v->sel, &v->first, v->n_alive, rows);
	for (i = v->first, k = 0; i < v->n_alive && k < rows; i++, k++) {
		alive_row(v, i, text, sizeof text);
		pane_list_row(a, cb, r, r->y + 3 + k, text, NULL, i == v->sel,
		    focused, UIC_DEFAULT);
	}
}

/* Enter on a category: the alloc of its largest block allocated in the
 * trace. */
static void
alive_enter(struct app *a, struct leaks_view *v)
{
	const struct idx_elem *e;
	char ev[FMT_BUF], sz[FMT_BUF];

	if (v->sel >= v->n_alive)
		return;
	if ((e = alive_largest(v, v->sel, 1)) == NULL) {
		app_msg(a, "every block of this category was allocated before "
		    "the trace");
		return;
	}
	a->detail = DETAIL_EVENT;
	a->detail_scroll = 0;
	cursor_set(a, e->alloc_ev);
	app_msg(a, "alloc of its largest block allocated in the trace (%s) at "
	    "%s", fmt_size(sz, sizeof sz, e->size), fmt_event(ev, sizeof ev,
	    e->alloc_ev));
}

static int
lk_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct leaks_view *v = priv;
	struct rect rr = *r;
	int f;

	rr.h -= v->n_alive > 0 ? 2 : 0; /* the note and the header */
	f = v->n_alive > 0 ? pane_list_move(&v->sel, v->n_alive, act, &rr) :
	    pane_list_move(&v->list.sel, anlist_rows(&v->list), act, r);
	if (f == 0 && (f = pane_timeline_move_cursor(a, act)) != 0)
		return f;
	if (f != 0) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
		return f;
	}
	if (act != ACT_ENTER)
		return 0;
	if (v->n_alive > 0)
		alive_enter(a, v);
	else
		jump(a, v, 0);
	return UI_HANDLED | UI_REDRAW;
}

static int
lk_global(struct app *a, void *priv, enum action act)
{
	struct leaks_view *v = priv;

	if (act != ACT_ALLOC_NEXT && act != ACT_ALLOC_PREV)
		return 0;
	if (v->n_alive > 0)
		app_msg(a, "no leak to step through: they cannot be judged "
		    "here");
	else
		jump(a, priv, act == ACT_ALLOC_NEXT ? 1 : -1);
	return UI_HANDLED | UI_REDRAW;
}

static int
lk_write(struct app *a, void *priv, FILE *f)
{
	struct leaks_view *v = priv;
	char title[256];

	char text[256];
	uint64_t i;

	(void)a;
	lk_title(v, title, sizeof title);
	fprintf(f, "%s\n", title);
	if (v->n_alive == 0)
		return anlist_write(&v->list, f);
	fprintf(f, "%s\n%s\n", alive_note, alive_header);
	for (i = 0; i < v->n_alive; i++) {
		alive_row(v, i, text, sizeof text);
		fprintf(f, "%s\n", text);
	}
	return ferror(f) ? -1 : 0;
}

static int
lk_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct leaks_view *v = priv;
	int c = v->n_alive > 0 ? pane_list_click(&v->sel, v->first,
	    v->n_alive, row, 3) : pane_list_click(&v->list.sel, v->list.first,
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
