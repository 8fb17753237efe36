/*
 * The analysis views: a list that takes the place of one pane, over the
 * shared event cursor.
 *
 *   leaks (U)  ranked leak sites in the segment map's place; the selected
 *              site's leaked blocks are one highlighted band at the bottom
 *              of the timeline and their alloc events are marked on its
 *              axis; Enter / ] / [ move the cursor to its blocks.
 *   frag (F)   every segment_alloc/map, worst gap first, in the detail
 *              pane's place so the segment map stays visible; all of them
 *              are marked on the axis, the selected one highlighted; Enter
 *              moves the cursor there (the map shows the state and its
 *              gaps at that event).
 *   top (T)    live bytes by call site at the cursor, in the segment map's
 *              place; recomputed from the replayed state at the cursor
 *              when the cursor has moved (O(live blocks)), not per trace.
 *
 * Leaks and frag run once per device, the first time their view opens,
 * and stay in app->an until the device changes. The detail pane shows
 * the selected site's stack (DETAIL_SITE).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/fmt.h"
#include "tui/pane.h"
#include "util/escape.h"
#include "util/xalloc.h"

static const struct pane_ops pane_list_ops;

/* ---- analyses ------------------------------------------------------------ */

static int
ensure_sites(struct app *a)
{
	struct sv_error err;

	if (a->an.sites_ok != 0)
		return a->an.sites_ok > 0;
	sv_error_clear(&err);
	if (an_sites_init(&a->an.sites, a->snap, 1, NULL, &err) != 0) {
		app_msg(a, "call sites: %s", err.msg);
		a->an.sites_ok = -1;
		return 0;
	}
	a->an.sites_ok = 1;
	return 1;
}

static int
ensure_leaks(struct app *a)
{
	struct sv_error err;

	if (a->an.leaks_ok != 0)
		return a->an.leaks_ok > 0;
	sv_error_clear(&err);
	if (an_leaks(a->snap, &a->tl, &a->an.sites, -1, -1, &a->an.leaks,
	    &err) != 0) {
		app_msg(a, "leaks: %s", err.msg);
		a->an.leaks_ok = -1;
		return 0;
	}
	an_leak_elems(&a->tl, &a->an.sites, &a->an.leaks, &a->an.leak_elems);
	a->an.hl_site = UINT64_MAX;
	a->an.list[VIEW_LEAKS].leaks = &a->an.leaks;
	a->an.leaks_ok = 1;
	return 1;
}

/* The report walks the replay forward over the whole trace; the state at
 * the cursor is fetched again afterwards (the block selection, which
 * pointed into the old state, is dropped). */
static int
ensure_frag(struct app *a)
{
	struct sv_error err;
	int r;

	if (a->an.frag_ok != 0)
		return a->an.frag_ok > 0;
	sv_error_clear(&err);
	a->sv.sel_seg = SEGMAP_NONE;
	a->sv.sel_block = SEGMAP_NONE;
	r = an_frag(a->snap, &a->tl, a->src.replay, &a->an.sites, -2,
	    &a->an.frag, &err);
	a->st = NULL;
	app_set_cursor(a, a->view.cursor);
	if (r != 0) {
		an_frag_destroy(&a->an.frag);
		app_msg(a, "frag: %s", err.msg);
		a->an.frag_ok = -1;
		return 0;
	}
	a->an.list[VIEW_FRAG].frag = &a->an.frag;
	a->an.frag_ok = 1;
	return 1;
}

/* Live bytes by site at the cursor, when the cursor has moved. The
 * selection follows its site. */
static void
top_refresh(struct app *a)
{
	struct anlist *l = &a->an.list[VIEW_TOP];
	uint32_t site = AN_NO_NODE, k;

	if (a->an.top_ok && a->an.top_at == a->view.cursor)
		return;
	if (a->an.top_ok) {
		if (l->sel < a->an.top.n_roots)
			site = a->an.top.nodes[a->an.top.roots[l->sel]].site;
		an_top_destroy(&a->an.top);
	}
	if (a->st != NULL && state_exact(&a->src, a->view.cursor))
		an_top_state(a->st, a->device, &a->an.sites, 1, &a->an.top);
	else
		an_top(&a->tl, &a->an.sites, a->view.cursor, 1, &a->an.top);
	a->an.top_at = a->view.cursor;
	a->an.top_ok = 1;
	l->top = &a->an.top;
	for (k = 0; site != AN_NO_NODE && k < a->an.top.n_roots; k++)
		if (a->an.top.nodes[a->an.top.roots[k]].site == site) {
			l->sel = k;
			break;
		}
}

void
views_reset(struct app *a)
{
	struct app_an *n = &a->an;

	if (n->leaks_ok > 0) {
		an_leaks_destroy(&n->leaks);
		an_leak_elems_destroy(&n->leak_elems);
	}
	if (n->frag_ok > 0)
		an_frag_destroy(&n->frag);
	if (n->top_ok)
		an_top_destroy(&n->top);
	if (n->sites_ok > 0)
		an_sites_destroy(&n->sites);
	tl_hilite_destroy(&n->hl);
	free(n->marks);
	memset(n, 0, sizeof *n);
	a->view.hl = NULL;
	a->view.marks = NULL;
	a->view.n_marks = 0;
}

/* ---- opening and closing ------------------------------------------------- */

static int
list_slot(enum view_kind k)
{
	return k == VIEW_FRAG ? LAY_DETAIL : LAY_SEGMENTS;
}

void
views_close(struct app *a)
{
	if (a->aview == VIEW_NONE)
		return;
	a->aview = VIEW_NONE;
	a->focus = a->an.prev_focus;
	if (a->detail == DETAIL_SITE)
		a->detail = DETAIL_EVENT;
	views_sync(a);
}

int
views_toggle(struct app *a, enum view_kind kind)
{
	int ok;

	if (a->aview == kind) {
		views_close(a);
		return UI_HANDLED | UI_REDRAW;
	}
	if (!ensure_sites(a))
		return UI_HANDLED | UI_REDRAW;
	switch (kind) {
	case VIEW_LEAKS: ok = ensure_leaks(a); break;
	case VIEW_FRAG: ok = ensure_frag(a); break;
	default: ok = 1; break;
	}
	if (!ok)
		return UI_HANDLED | UI_REDRAW;
	if (a->aview == VIEW_NONE)
		a->an.prev_focus = a->focus;
	a->aview = kind;
	a->an.list[kind].kind = kind == VIEW_LEAKS ? ANLIST_LEAKS
	    : kind == VIEW_FRAG ? ANLIST_FRAG : ANLIST_TOP;
	a->an.list[kind].sites = &a->an.sites;
	a->an.list[kind].utf8 = a->utf8;
	a->focus = list_slot(kind);
	a->detail = kind == VIEW_FRAG ? DETAIL_EVENT : DETAIL_SITE;
	a->detail_scroll = 0;
	views_sync(a);
	return UI_HANDLED | UI_REDRAW;
}

const struct pane_ops *
views_pane(struct app *a, int slot)
{
	static const struct pane_ops *const base[3] = {&pane_timeline_ops,
	    &pane_segments_ops, &pane_detail_ops};

	if (a->aview != VIEW_NONE && slot == list_slot(a->aview))
		return &pane_list_ops;
	return base[slot];
}

/* ---- keeping the other panes in line -------------------------------------- */

static void
leak_hilite(struct app *a, uint64_t k)
{
	struct app_an *n = &a->an;
	const uint64_t *el = n->leak_elems.elems + n->leak_elems.off[k];
	uint64_t cnt = n->leak_elems.off[k + 1] - n->leak_elems.off[k], i;

	if (n->hl_site == k)
		return;
	tl_hilite_destroy(&n->hl);
	tl_hilite_init(&n->hl, &a->tm, el, cnt);
	free(n->marks);
	n->marks = xcalloc(cnt + 1, sizeof *n->marks);
	n->n_marks = 0;
	for (i = 0; i < cnt; i++)
		if (idx_tl_elem(&a->tl, el[i]).alloc_ev >= 0)
			n->marks[n->n_marks++] = idx_tl_elem(&a->tl, el[i]).alloc_ev;
	n->hl_site = k;
}

/* Title and info of the detail pane for the selected site. */
static void
site_detail(struct app *a)
{
	struct app_an *n = &a->an;
	char b[FMT_BUF], c[FMT_BUF], e0[FMT_BUF], e1[FMT_BUF];
	uint64_t k = n->list[a->aview].sel;

	n->site_stack = 0;
	n->site_title[0] = n->site_info[0] = '\0';
	if (a->aview == VIEW_LEAKS && k < n->leaks.n_sites) {
		const struct an_leak_site *s = &n->leaks.sites[k];

		n->site_stack = s->stack;
		snprintf(n->site_title, sizeof n->site_title, "Leak site %" PRIu64
		    "/%" PRIu64 " - %s in %s blocks never freed%s", k + 1,
		    n->leaks.n_sites, fmt_size(b, sizeof b, s->bytes),
		    fmt_count(c, sizeof c, s->count),
		    s->periodic ? " - grows every step" : "");
		if (s->first_ev >= 0)
			snprintf(n->site_info, sizeof n->site_info, "allocated "
			    "%s..%s - Enter: first block, ]/[: next/previous",
			    fmt_event(e0, sizeof e0, s->first_ev),
			    fmt_event(e1, sizeof e1, s->last_ev));
		else
			snprintf(n->site_info, sizeof n->site_info,
			    "allocated before the trace began");
	} else if (a->aview == VIEW_TOP && n->top_ok && k < n->top.n_roots) {
		const struct an_top_node *t = &n->top.nodes[n->top.roots[k]];

		n->site_stack = t->stack;
		snprintf(n->site_title, sizeof n->site_title, "Site %" PRIu64
		    "/%u @ %s - %s live in %s blocks", k + 1, n->top.n_roots,
		    fmt_event(e0, sizeof e0, n->top.at),
		    fmt_size(b, sizeof b, t->bytes),
		    fmt_count(c, sizeof c, t->count));
		snprintf(n->site_info, sizeof n->site_info, "stack of one of "
		    "its blocks; h/l move the cursor, the list follows");
	}
}

void
views_sync(struct app *a)
{
	struct app_an *n = &a->an;
	struct anlist *l = &n->list[a->aview];

	a->view.hl = NULL;
	a->view.marks = NULL;
	a->view.n_marks = 0;
	a->view.mark_sel = -2;
	if (a->aview == VIEW_NONE)
		return;
	if (a->aview == VIEW_TOP)
		top_refresh(a);
	if (anlist_rows(l) > 0 && l->sel >= anlist_rows(l))
		l->sel = anlist_rows(l) - 1;
	if (a->aview == VIEW_LEAKS && n->leaks.n_sites > 0) {
		leak_hilite(a, l->sel);
		a->view.hl = &n->hl;
		a->view.marks = n->marks;
		a->view.n_marks = n->n_marks;
	} else if (a->aview == VIEW_FRAG) {
		a->view.marks = a->tm.jumps[TL_JUMP_SEGALLOC];
		a->view.n_marks = a->tm.n_jumps[TL_JUMP_SEGALLOC];
		if (l->sel < n->frag.n_allocs)
			a->view.mark_sel = n->frag.allocs[l->sel].ev;
	}
	site_detail(a);
}

const char *
views_hint(const struct app *a)
{
	switch (a->aview) {
	case VIEW_LEAKS:
		return "j/k site  Enter first block  ]/[ next/prev  Tab pane  "
		       "q close";
	case VIEW_FRAG:
		return "j/k row  Enter go to event  ]/[ next/prev row  q close";
	case VIEW_TOP:
		return "j/k site  h/l cursor  Enter stack  Tab pane  q close";
	default: return NULL;
	}
}

/* ---- jumps ----------------------------------------------------------------- */

/* Moves the cursor to a leaked block of the selected site: the first
 * (how 0), or the next/previous one from the cursor (how 1/-1). */
static void
leak_jump(struct app *a, int how)
{
	struct app_an *n = &a->an;
	uint64_t k = n->list[VIEW_LEAKS].sel, i, cnt, found = UINT64_MAX;
	const uint64_t *el;

	if (k >= n->leaks.n_sites)
		return;
	el = n->leak_elems.elems + n->leak_elems.off[k];
	cnt = n->leak_elems.off[k + 1] - n->leak_elems.off[k];
	for (i = 0; i < cnt; i++) {
		int64_t ev = idx_tl_elem(&a->tl, el[i]).alloc_ev;

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
	app_set_cursor(a, idx_tl_elem(&a->tl, el[found]).alloc_ev);
	a->view.sel_elem = el[found];
	app_msg(a, "leaked block %" PRIu64 " of %" PRIu64 " of site %" PRIu64,
	    found + 1, cnt, k + 1);
}

static void
frag_jump(struct app *a)
{
	const struct an_frag_alloc *x;
	char g[FMT_BUF], r[FMT_BUF], f[FMT_BUF], lg[FMT_BUF], e[FMT_BUF];
	uint64_t k = a->an.list[VIEW_FRAG].sel;

	if (k >= a->an.frag.n_allocs)
		return;
	x = &a->an.frag.allocs[k];
	a->detail = DETAIL_EVENT;
	app_set_cursor(a, x->ev);
	if (x->has_state && x->req_ev >= 0)
		app_msg(a, "%s gap %s req %s: free %s, largest block %s",
		    fmt_event(e, sizeof e, x->ev),
		    fmt_size_short(g, sizeof g, x->gap),
		    fmt_size_short(r, sizeof r, x->request),
		    fmt_size_short(f, sizeof f, x->stream_free),
		    fmt_size_short(lg, sizeof lg, x->stream_largest));
	else
		app_msg(a, "%s: gap %s", fmt_event(e, sizeof e, x->ev),
		    fmt_size_short(g, sizeof g, x->gap));
}

/* ---- the list pane ----------------------------------------------------------- */

static void
list_title(struct app *a, char *t, size_t size)
{
	struct app_an *n = &a->an;
	char b[FMT_BUF], c[FMT_BUF], e[FMT_BUF];

	switch (a->aview) {
	case VIEW_LEAKS:
		snprintf(e, sizeof e, " - %" PRIu64 " steps", n->leaks.n_steps);
		snprintf(t, size, "Leaks - %" PRIu64 " site%s - %s blocks, %s "
		    "alive at the end%s", n->leaks.n_sites,
		    n->leaks.n_sites == 1 ? "" : "s",
		    fmt_count(b, sizeof b, n->leaks.count),
		    fmt_size(c, sizeof c, n->leaks.bytes),
		    n->leaks.n_steps > 0 ? e : "");
		break;
	case VIEW_FRAG:
		snprintf(t, size, "Segment allocations - %" PRIu64 ", worst gap "
		    "first - %" PRIu64 " could not use free memory (!)",
		    n->frag.n_allocs, n->frag.n_unusable);
		break;
	default:
		snprintf(t, size, "Top @ %s - %s live in %s blocks",
		    fmt_event(e, sizeof e, n->top.at),
		    fmt_size(b, sizeof b, n->top.bytes),
		    fmt_count(c, sizeof c, n->top.count));
	}
}

static void
list_draw(struct app *a, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	char title[256];

	if (a->aview == VIEW_TOP)
		top_refresh(a);
	list_title(a, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	anlist_render(&a->an.list[a->aview], cb, r->x, r->y + 1, r->w,
	    r->h - 1, focused);
}

static void
list_move(struct app *a, int64_t d)
{
	struct anlist *l = &a->an.list[a->aview];
	int64_t n = (int64_t)anlist_rows(l), s = (int64_t)l->sel + d;

	if (s >= n)
		s = n - 1;
	if (s < 0)
		s = 0;
	l->sel = (uint64_t)s;
	if (a->aview != VIEW_FRAG) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
	}
}

static int
list_action(struct app *a, enum action act, const struct rect *r)
{
	int64_t page = r->h > 3 ? r->h - 3 : 1;

	switch (act) {
	case ACT_UP: list_move(a, -1); break;
	case ACT_DOWN: list_move(a, 1); break;
	case ACT_PAGE_UP: list_move(a, -page); break;
	case ACT_PAGE_DOWN: list_move(a, page); break;
	case ACT_FIRST: list_move(a, INT64_MIN / 2); break;
	case ACT_LAST: list_move(a, INT64_MAX / 2); break;
	case ACT_LEFT:
	case ACT_RIGHT: {
		/* the cursor moves from here too (the top view follows it) */
		enum detail_mode d = a->detail;
		int f = pane_timeline_ops.action(a, act,
		    &a->lay.r[LAY_TIMELINE]);

		if (d == DETAIL_SITE)
			a->detail = d;
		return f;
	}
	case ACT_ENTER:
		if (a->aview == VIEW_LEAKS)
			leak_jump(a, 0);
		else if (a->aview == VIEW_FRAG)
			frag_jump(a);
		else
			return 0; /* top: the global Enter focuses the stack */
		break;
	default: return 0;
	}
	return UI_HANDLED | UI_REDRAW;
}

int
views_action(struct app *a, enum action act)
{
	if (a->aview == VIEW_NONE)
		return 0;
	switch (act) {
	case ACT_QUIT:
	case ACT_BACK: views_close(a); break;
	case ACT_ALLOC_NEXT:
	case ACT_ALLOC_PREV:
		if (a->aview == VIEW_LEAKS)
			leak_jump(a, act == ACT_ALLOC_NEXT ? 1 : -1);
		else if (a->aview == VIEW_FRAG) {
			list_move(a, act == ACT_ALLOC_NEXT ? 1 : -1);
			frag_jump(a);
		} else
			return 0;
		break;
	default: return 0;
	}
	return UI_HANDLED | UI_REDRAW;
}

static const struct pane_ops pane_list_ops = {"list", list_draw,
    list_action};
