/*
 * The OOM view (X): `snapview oom` in the viewer, for the OOM event at or
 * after the cursor: the request and its pool and segment, the device's
 * free memory, reserved and allocated, whether it was retried, the
 * causes that fit the numbers, free memory and the largest free block
 * per stream against the request, and what was live by call site. In
 * the segment map's place; the detail pane shows the stack of the
 * request or of the selected live site. ]/[ go to the next and previous
 * OOM; the view follows the cursor onto another OOM event (o, O).
 *
 * The analysis replays the trace to each OOM event once per device, the
 * first time the view opens.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/oom.h"
#include "analysis/whatif.h"
#include "render/anlist.h"
#include "render/fmt.h"
#include "tui/view.h"
#include "util/xalloc.h"

struct oom_row {
	char text[256];
	uint32_t stack;         /* shown in the detail pane; 0 = none */
	uint32_t site;          /* a live site row: its site, else none */
	int live;               /* a live site row */
};

struct oom_view {
	int ok;
	struct an_oom oom;
	uint64_t k;             /* the OOM shown */
	struct oom_row *rows;
	size_t n, cap;
	int width;              /* the rows are wrapped for this width */
	uint64_t built_k;
	uint64_t sel, first;
	int64_t follow;
	struct an_whatif_oom_verdict *vd; /* the simulation's verdicts */
	uint64_t n_vd;
};

static struct oom_row *
push(struct oom_view *v, uint32_t stack)
{
	struct oom_row *r;

	XGROW(v->rows, v->cap, v->n + 1);
	r = &v->rows[v->n++];
	memset(r, 0, sizeof *r);
	r->stack = stack;
	return r;
}

/* A labelled line: "label   text", the text wrapped at w under its
 * label's indent. */
static void
line(struct oom_view *v, const char *label, const char *text, int w,
    uint32_t stack)
{
	int ind = 14, room = w - ind - 1, n;
	const char *p = text;
	char lab[16];

	snprintf(lab, sizeof lab, "%-13s", label);
	if (room < 20)
		room = 20;
	do {
		n = (int)strlen(p);
		if (n > room) {
			for (n = room; n > 0 && p[n] != ' '; n--)
				;
			if (n == 0)
				n = room;
		}
		snprintf(push(v, stack)->text, sizeof v->rows[0].text,
		    "%s %.*s", p == text ? lab : "             ", n, p);
		p += n;
		while (*p == ' ')
			p++;
	} while (*p != '\0');
}

static void
build(struct app *a, struct oom_view *v, int w)
{
	const struct an_oom_event *e = &v->oom.events[v->k];
	char t[512], b0[FMT_BUF], b1[FMT_BUF], b2[FMT_BUF], b3[FMT_BUF],
	    lab[1024];
	uint32_t i;
	struct oom_row *r;

	v->n = 0;
	snprintf(t, sizeof t, "%s (rounded), stream %" PRIu64 ": a %s segment "
	    "of %s asked of the device (%s pool)", fmt_size(b0, sizeof b0,
	    e->request), e->stream, e->large ? "large" : "small",
	    fmt_size(b1, sizeof b1, e->segment_size), e->large ? "large" :
	    "small");
	line(v, "request", t, w, e->stack);
	snprintf(t, sizeof t, "%s%s", fmt_size(b0, sizeof b0, e->device_free),
	    e->enough_free ? " (enough for the request)" :
	    " (less than the request: the device was full)");
	line(v, "device free", t, w, e->stack);
	snprintf(t, sizeof t, "%s reserved, %s allocated (requested; %s in "
	    "blocks)", fmt_size(b0, sizeof b0, e->reserved), fmt_size(b1,
	    sizeof b1, e->allocated), fmt_size(b2, sizeof b2,
	    e->allocated_blocks));
	line(v, "this process", t, w, e->stack);
	an_site_label(tables_sites(a), e->site, lab, sizeof lab);
	anlist_cut_label(lab, w - 16, a->utf8, t, sizeof t);
	line(v, "requested at", t, w, e->stack);
	if (e->retry_ev >= 0)
		snprintf(t, sizeof t, "an alloc of this size followed at %s: "
		    "the program caught the error and tried again",
		    fmt_event(b0, sizeof b0, e->retry_ev));
	else
		snprintf(t, sizeof t, "no allocation of this size follows: "
		    "the request failed");
	line(v, "retried", t, w, e->stack);
	for (i = 0; i < (uint32_t)e->n_causes; i++)
		line(v, i == 0 ? "why" : "", e->causes[i].text, w, e->stack);
	for (i = 0; i < v->n_vd; i++)
		if (v->vd[i].ev == e->ev)
			line(v, "verdict", v->vd[i].text, w, e->stack);
	if (e->has_state) {
		snprintf(t, sizeof t, "%s free in the %s pool of stream %"
		    PRIu64 ", largest block %s%s", fmt_size(b0, sizeof b0,
		    e->pool_free), e->large ? "large" : "small", e->stream,
		    fmt_size(b1, sizeof b1, e->pool_largest),
		    e->pool_largest < e->request ? " < request" : "");
		line(v, "pool", t, w, e->stack);
	}
	for (i = 0; e->has_state && i < e->n_streams; i++) {
		const struct an_oom_stream *s = &e->streams[i];
		char lb[32];

		snprintf(lb, sizeof lb, "stream %" PRIu64, s->stream);
		snprintf(t, sizeof t, "%" PRIu64 " segment%s, %s reserved, %s "
		    "free, largest free block %s%s", s->segments,
		    s->segments == 1 ? "" : "s",
		    fmt_size(b0, sizeof b0, s->reserved), fmt_size(b1,
		    sizeof b1, s->free_bytes), fmt_size(b2, sizeof b2,
		    s->largest_free), s->largest_free < e->request ?
		    " < request" : "");
		line(v, lb, t, w, e->stack);
	}
	/* with a private pool: the free memory of each (pool, stream), which
	 * serves only its own requests */
	for (i = 0; e->has_state && i < e->n_groups; i++)
		if (e->groups[i].pool[0] != 0 || e->groups[i].pool[1] != 0)
			break;
	if (e->has_state && i < e->n_groups) {
		snprintf(t, sizeof t, "(%" PRId64 ",%" PRId64 ")%s, stream %"
		    PRIu64, e->pool[0], e->pool[1], e->pool[0] == 0 &&
		    e->pool[1] == 0 ? " default" : "", e->stream);
		line(v, "request pool", t, w, e->stack);
		for (i = 0; i < e->n_groups; i++) {
			const struct an_pool_stream *g = &e->groups[i];

			snprintf(t, sizeof t, "(%" PRId64 ",%" PRId64 ") "
			    "stream %" PRIu64 ": %s reserved, %s free, "
			    "largest free block %s small, %s large",
			    g->pool[0], g->pool[1], g->stream,
			    fmt_size(b0, sizeof b0, g->reserved),
			    fmt_size(b1, sizeof b1, g->free_bytes),
			    fmt_size(b2, sizeof b2, g->largest_free[0]),
			    fmt_size(b3, sizeof b3, g->largest_free[1]));
			line(v, i == 0 ? "by pool" : "", t, w, e->stack);
		}
	}
	snprintf(t, sizeof t, "live by call site (%s in %s block%s):",
	    fmt_size(b0, sizeof b0, e->live.bytes), fmt_count(b1, sizeof b1,
	    e->live.count), e->live.count == 1 ? "" : "s");
	snprintf(push(v, e->stack)->text, sizeof v->rows[0].text, "%.200s", t);
	for (i = 0; i < e->live.n_roots; i++) {
		const struct an_top_node *nd = &e->live.nodes[e->live.roots[i]];

		r = push(v, nd->stack);
		r->live = 1;
		r->site = nd->site;
		/* blocks allocated before the trace: where they are freed */
		snprintf(r->text, sizeof r->text, "  %8s %5.1f%% %6s  %s",
		    fmt_size_short(b0, sizeof b0, nd->bytes), e->live.bytes ?
		    100.0 * (double)nd->bytes / (double)e->live.bytes : 0.0,
		    fmt_count(b3, sizeof b3, nd->count), nd->free_stack ?
		    "freed at " : "");
	}
	v->width = w;
	v->built_k = v->k;
}

/* The OOM at or after event ev, else the last one. */
static uint64_t
oom_at(const struct oom_view *v, int64_t ev)
{
	uint64_t k;

	for (k = 0; k < v->oom.n_events; k++)
		if (v->oom.events[k].ev >= ev)
			return k;
	return v->oom.n_events - 1;
}

static void
go(struct app *a, struct oom_view *v, int dir)
{
	if (dir > 0 && v->k + 1 < v->oom.n_events)
		v->k++;
	else if (dir < 0 && v->k > 0)
		v->k--;
	else if (dir != 0) {
		app_msg(a, "no %s OOM", dir > 0 ? "later" : "earlier");
		return;
	}
	cursor_set(a, v->oom.events[v->k].ev);
	v->follow = a->view.cursor;
	v->sel = 0;
}

static int
oo_open(struct app *a, void *priv)
{
	struct oom_view *v = priv;
	struct an_sites *sites = tables_sites(a);
	struct sv_error err;
	int r;

	if (sites == NULL)
		return -1;
	if (!v->ok) {
		sv_error_clear(&err);
		r = an_oom(a->snap, &a->tl, a->src.replay, sites, &v->oom,
		    &err);
		/* the simulation's verdict (analysis/whatif.h), a line */
		if (r == 0 && a->src.replay != NULL &&
		    an_whatif_oom_verdicts(a->snap, a->device, a->src.replay,
		    0, &v->vd, &v->n_vd, &err) != 0)
			v->n_vd = 0;
		cursor_replay_moved(a);
		if (r != 0) {
			an_oom_destroy(&v->oom);
			memset(&v->oom, 0, sizeof v->oom);
			app_msg(a, "oom: %s", err.msg);
			return -1;
		}
		v->ok = 1;
	}
	if (v->oom.n_events == 0) {
		app_msg(a, "no OOM event on device %u", a->device);
		return -1;
	}
	/* the cursor goes to the OOM shown: the timeline, the map (when
	 * the view closes) and the detail pane agree with it */
	v->k = oom_at(v, a->view.cursor);
	v->width = 0;
	go(a, v, 0);
	a->detail = DETAIL_SITE;
	return 0;
}

static void
oo_reset(struct app *a, void *priv)
{
	struct oom_view *v = priv;

	(void)a;
	if (v->ok)
		an_oom_destroy(&v->oom);
	free(v->vd);
	free(v->rows);
}

static void
oo_sync(struct app *a, void *priv)
{
	struct oom_view *v = priv;
	struct app_vdetail *d = &a->vdetail;
	const struct an_oom_event *e;
	char b[FMT_BUF], f[FMT_BUF], ev[FMT_BUF];
	uint64_t k;

	/* the cursor went onto another OOM event: show that one */
	if (a->view.cursor != v->follow) {
		v->follow = a->view.cursor;
		for (k = 0; k < v->oom.n_events; k++)
			if (v->oom.events[k].ev == a->view.cursor &&
			    k != v->k) {
				v->k = k;
				v->sel = 0;
			}
	}
	if (v->width == 0 || v->built_k != v->k)
		build(a, v, a->lay.r[LAY_SEGMENTS].w);
	e = &v->oom.events[v->k];
	memset(d, 0, sizeof *d);
	if (v->sel >= v->n)
		v->sel = v->n > 0 ? v->n - 1 : 0;
	d->stack = v->n > 0 ? v->rows[v->sel].stack : e->stack;
	snprintf(d->title, sizeof d->title, "%s stack at the OOM %s - request "
	    "%s, device free %s", v->n > 0 && v->rows[v->sel].live ?
	    "A live site's" : "The request's", fmt_event(ev, sizeof ev, e->ev),
	    fmt_size(b, sizeof b, e->request), fmt_size(f, sizeof f,
	    e->device_free));
	snprintf(d->info, sizeof d->info, "Enter: go to the OOM event; ]/[: "
	    "next/previous OOM");
}

static void
oo_title(struct oom_view *v, char *t, size_t size)
{
	const struct an_oom_event *e = &v->oom.events[v->k];
	char ev[FMT_BUF], b[FMT_BUF];

	snprintf(t, size, "OOM %" PRIu64 "/%" PRIu64 " @ %s - request %s%s",
	    v->k + 1, v->oom.n_events, fmt_event(ev, sizeof ev, e->ev),
	    fmt_size(b, sizeof b, e->request), e->retry_ev >= 0 ?
	    " - retried" : " - failed");
}

/* The call site of a row that names one (raw file text), or NULL. */
static const char *
site_of(struct app *a, const struct oom_row *row, char *buf, size_t size)
{
	return row->live ? an_site_label(tables_sites(a), row->site, buf, size)
			 : NULL;
}

static void
oo_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct oom_view *v = priv;
	char title[256], label[1024];
	int rows = r->h - 1, k;
	uint64_t i;

	if (v->width != r->w || v->built_k != v->k)
		build(a, v, r->w);
	oo_title(v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	if (rows < 1 || v->n == 0)
		return;
	pane_list_scroll(&v->sel, &v->first, v->n, rows);
	for (i = v->first, k = 0; i < v->n && k < rows; i++, k++)
		pane_list_row(a, cb, r, r->y + 1 + k, v->rows[i].text,
		    site_of(a, &v->rows[i], label, sizeof label), i == v->sel,
		    focused, UIC_DEFAULT);
}

static int
oo_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct oom_view *v = priv;
	int f = pane_list_move(&v->sel, v->n, act, r);

	if (f != 0) {
		a->detail = DETAIL_SITE;
		a->detail_scroll = 0;
		return f;
	}
	if (act == ACT_ENTER) {
		go(a, v, 0);
		a->detail = DETAIL_SITE;
		return UI_HANDLED | UI_REDRAW;
	}
	return pane_timeline_move_cursor(a, act);
}

static int
oo_global(struct app *a, void *priv, enum action act)
{
	if (act != ACT_ALLOC_NEXT && act != ACT_ALLOC_PREV)
		return 0;
	go(a, priv, act == ACT_ALLOC_NEXT ? 1 : -1);
	a->detail = DETAIL_SITE;
	return UI_HANDLED | UI_REDRAW;
}

static int
oo_write(struct app *a, void *priv, FILE *f)
{
	struct oom_view *v = priv;
	char title[256], raw[1024];
	uint64_t i;

	build(a, v, 100);
	oo_title(v, title, sizeof title);
	fprintf(f, "%s\n", title);
	for (i = 0; i < v->n; i++)
		pane_list_write_row(f, v->rows[i].text, site_of(a, &v->rows[i],
		    raw, sizeof raw));
	v->width = 0;   /* wrapped for the screen again when drawn */
	return ferror(f) ? -1 : 0;
}

static int
oo_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct oom_view *v = priv;

	(void)x;
	return pane_list_clicked(a, priv, r, pane_list_click(&v->sel,
	    v->first, v->n, row, 1), 1, oo_action);
}

const struct view_ops view_oom_ops = {
	.name = "oom",
	.key = ACT_VIEW_OOM,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct oom_view),
	.open = oo_open,
	.reset = oo_reset,
	.sync = oo_sync,
	.draw = oo_draw,
	.action = oo_action,
	.global = oo_global,
	.hint = "j/k line  Enter go to the OOM  ]/[ next/prev OOM  q close",
	.write = oo_write,
	.click = oo_click,
	.needs_replay = 1,
};
