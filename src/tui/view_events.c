/*
 * The event table (E): the events around the cursor, one row each
 * (event, action, address, size, stream, call site), in the segment
 * map's place (a free whose own stack has no Python frame is named by
 * its block's allocation site, "alloc FILE:LINE NAME"); & filters them
 * (render/evfilter.h: actions, size range, stream, address, frame text,
 * all combined); Enter moves the cursor to
 * the selected event. The detail pane shows the selected event's stack.
 *
 * Sized for 10^8 events: nothing is materialised. The table keeps the
 * matching events of one range of the trace, [lo, hi], read in order
 * from the cursor outward (the accessors make sequential reads cheap),
 * and extends it one screen at a time as the selection moves, reading
 * at most SCAN_BUDGET events per key: a filter that matches nothing
 * nearby says where it stopped and the next key goes on. It follows the
 * cursor: a cursor outside the range starts a new range there.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/evfilter.h"
#include "render/fmt.h"
#include "tui/view.h"
#include "util/escape.h"
#include "util/xalloc.h"

#define SCAN_BUDGET (1u << 21)  /* events read per extension */
#define CACHE_MAX 16384         /* matches kept; the far side is dropped */

struct events_view {
	struct evfilter f;
	int64_t *m;             /* matching events in [lo, hi], ascending */
	size_t n, cap;
	int64_t lo, hi;         /* range read; empty when lo > hi */
	uint64_t sel, first;
	int64_t follow;         /* the cursor the table last followed */
	int64_t stopped;        /* event a budget-limited scan stopped at */
	int ready;
};

static const struct snap_trace *
trace(struct app *a)
{
	return snap_trace_of(a->snap, a->device);
}

static int64_t
n_events(struct app *a)
{
	const struct snap_trace *t = trace(a);

	return t != NULL ? (int64_t)t->n : 0;
}

/* Reads forward from hi + 1 until want more matches, the end, or the
 * budget. Returns the number found. */
static size_t
extend_fwd(struct app *a, struct events_view *v, size_t want)
{
	const struct snap_trace *t = trace(a);
	int64_t i, end = n_events(a), stop;
	size_t got = 0;

	v->stopped = -1;
	if (t == NULL)
		return 0;
	stop = v->hi + 1 + (int64_t)SCAN_BUDGET;
	for (i = v->hi + 1; i < end && got < want; i++) {
		if (i >= stop) {
			v->stopped = i;
			break;
		}
		if (!evfilter_match(&v->f, t, (uint64_t)i))
			continue;
		XGROW(v->m, v->cap, v->n + 1);
		v->m[v->n++] = i;
		got++;
	}
	v->hi = i - 1;
	if (v->n > CACHE_MAX) {
		/* drop the oldest above the screen, and the range they were
		 * in: every match in [lo, hi] stays in m */
		size_t k = v->n - CACHE_MAX / 2;

		if (k > v->first)
			k = v->first;
		memmove(v->m, v->m + k, (v->n - k) * sizeof *v->m);
		v->n -= k;
		v->lo = v->m[0];
		v->sel = v->sel >= k ? v->sel - k : 0;
		v->first = v->first >= k ? v->first - k : 0;
	}
	return got;
}

/* Reads backward from lo - 1; the matches go in front. */
static size_t
extend_back(struct app *a, struct events_view *v, size_t want)
{
	const struct snap_trace *t = trace(a);
	int64_t i, stop;
	int64_t *found = NULL;
	size_t got = 0, cap = 0, k;

	v->stopped = -1;
	if (t == NULL)
		return 0;
	stop = v->lo - 1 - (int64_t)SCAN_BUDGET;
	for (i = v->lo - 1; i >= 0 && got < want; i--) {
		if (i <= stop) {
			v->stopped = i;
			break;
		}
		if (!evfilter_match(&v->f, t, (uint64_t)i))
			continue;
		XGROW(found, cap, got + 1);
		found[got++] = i;
	}
	v->lo = i + 1;
	if (got == 0)
		return 0;
	XGROW(v->m, v->cap, v->n + got);
	memmove(v->m + got, v->m, v->n * sizeof *v->m);
	for (k = 0; k < got; k++)
		v->m[k] = found[got - 1 - k];
	v->n += got;
	v->sel += got;
	v->first += got;
	free(found);
	if (v->n > CACHE_MAX) {
		/* drop the newest below the selection */
		size_t keep = v->sel + 1 > CACHE_MAX / 2 ? v->sel + 1 :
		    CACHE_MAX / 2;

		if (keep < v->n) {
			v->n = keep;
			v->hi = v->m[v->n - 1];
		}
	}
	return got;
}

/* A new range at event ev: the selection is the last match at or before
 * ev, else the first after it. */
static void
place(struct app *a, struct events_view *v, int64_t ev, size_t rows)
{
	v->n = v->sel = v->first = 0;
	v->lo = ev + 1;
	v->hi = ev;
	extend_back(a, v, rows / 2 + 1);
	v->sel = v->n > 0 ? v->n - 1 : 0;
	extend_fwd(a, v, rows);
	if (v->n > 0 && v->m[v->sel] > ev)
		v->sel = 0;
	/* the selection in the middle, the events before it above */
	v->first = v->sel > rows / 2 ? v->sel - rows / 2 : 0;
	v->ready = 1;
}

static void
detail(struct app *a, struct events_view *v)
{
	struct app_vdetail *d = &a->vdetail;
	const struct snap_trace *t = trace(a);
	char ev[FMT_BUF], ad[FMT_BUF], sz[FMT_BUF], fr[FMT_BUF];
	const char *an;
	uint64_t i;

	memset(d, 0, sizeof *d);
	if (v->sel >= v->n || t == NULL) {
		snprintf(d->title, sizeof d->title, "No matching event");
		return;
	}
	i = (uint64_t)v->m[v->sel];
	an = snap_action_name(snap_ev_action(t, i));
	fmt_event(ev, sizeof ev, (int64_t)i);
	if (snap_ev_action(t, i) == SNAP_OOM)
		snprintf(d->title, sizeof d->title, "Event %s oom - "
		    "request %s, device free %s", ev,
		    fmt_size(sz, sizeof sz, snap_ev_size(t, i)),
		    fmt_size(fr, sizeof fr, snap_ev_addr(t, i)));
	else
		snprintf(d->title, sizeof d->title, "Event %s %s %s %s", ev,
		    an != NULL ? an : "(unknown action)",
		    fmt_addr(ad, sizeof ad, snap_ev_addr(t, i)),
		    fmt_size(sz, sizeof sz, snap_ev_size(t, i)));
	snprintf(d->info, sizeof d->info, "stream %" PRIu64 " - Enter: move "
	    "the cursor here", snap_ev_stream(t, i));
	if (snap_ev_action(t, i) == SNAP_ANNOTATE) {
		const char *m = snap_str(a->snap, snap_ev_meta(t, i));
		char esc[128];

		sv_escape(esc, sizeof esc, m, strlen(m));
		snprintf(d->info, sizeof d->info, "metadata %s - Enter: move "
		    "the cursor here", esc);
	}
	d->stack = snap_ev_stack(t, i);
	d->ev1 = i + 1;
}

static int
ev_open(struct app *a, void *priv)
{
	struct events_view *v = priv;

	if (tables_sites(a) == NULL)
		return -1;
	if (!v->ready)
		evfilter_destroy(&v->f);
	v->ready = 0;   /* placed at the cursor when drawn */
	v->follow = a->view.cursor;
	a->detail = DETAIL_SITE;
	return 0;
}

static void
ev_reset(struct app *a, void *priv)
{
	struct events_view *v = priv;

	(void)a;
	evfilter_destroy(&v->f);
	free(v->m);
}

static void
ev_sync(struct app *a, void *priv)
{
	struct events_view *v = priv;
	int64_t c = a->view.cursor;
	size_t k;

	if (v->ready && c != v->follow) {
		/* follow the cursor: within the range, select its event */
		v->follow = c;
		if (c < v->lo || c > v->hi)
			v->ready = 0;
		else {
			for (k = v->n; k > 0 && v->m[k - 1] > c; k--)
				;
			v->sel = k > 0 ? k - 1 : 0;
		}
	}
	if (!v->ready)
		place(a, v, c, (size_t)(a->lay.r[LAY_SEGMENTS].h > 2 ?
		    a->lay.r[LAY_SEGMENTS].h : 8));
	detail(a, v);
}

static void
row(struct app *a, struct events_view *v, size_t k, char *buf, size_t size,
    uint32_t *site)
{
	const struct snap_trace *t = trace(a);
	uint64_t i = (uint64_t)v->m[k];
	unsigned act = snap_ev_action(t, i);
	const char *an = snap_action_name(act);
	char ev[FMT_BUF], ad[FMT_BUF], sz[FMT_BUF], st[FMT_BUF];
	int alloc;

	*site = tables_event_site(a, t, i, &alloc);
	fmt_event(ev, sizeof ev, (int64_t)i);
	if (act == SNAP_OOM)
		snprintf(ad, sizeof ad, "free %s", fmt_size_short(st, sizeof st,
		    snap_ev_addr(t, i)));
	else
		fmt_addr(ad, sizeof ad, snap_ev_addr(t, i));
	snprintf(st, sizeof st, "%" PRIu64, snap_ev_stream(t, i));
	snprintf(buf, size, "%-11s %-14.14s %-15s %7s %5s%s  %s", ev,
	    an != NULL ? an : "(unknown)", ad,
	    fmt_size_short(sz, sizeof sz, snap_ev_size(t, i)),
	    strlen(st) <= 5 ? st : "...", strlen(st) <= 5 ? "" :
	    st + strlen(st) - 3, alloc ? "alloc " : "");
}

static const char header[] =
    "event       action         address            size stream  call site";

static void
ev_title(struct app *a, struct events_view *v, char *t, size_t size)
{
	char c[FMT_BUF];

	snprintf(t, size, "Events around %s - %s%s", fmt_event(c, sizeof c,
	    a->view.cursor), evfilter_empty(&v->f) ? "all (& filters)" :
	    "filter: ", v->f.desc);
}

static void
ev_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct events_view *v = priv;
	char title[512], text[256], label[1024], e0[FMT_BUF], e1[FMT_BUF];
	int rows = r->h - 2, k;
	size_t i;
	uint32_t site;

	ev_title(a, v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	cellbuf_puts(cb, r->x + 1, r->y + 1, header, r->w - 1, UIC_AXIS,
	    CB_A_BOLD);
	if (rows < 1)
		return;
	/* a screen of matches around the selection */
	if (v->n - v->sel < (size_t)rows && v->hi + 1 < n_events(a))
		extend_fwd(a, v, (size_t)rows);
	if (v->n == 0) {
		snprintf(text, sizeof text, "(no matching event in %s..%s%s)",
		    fmt_event(e0, sizeof e0, v->lo), fmt_event(e1, sizeof e1,
		    v->hi), v->stopped >= 0 ? "; j and k read further" : "");
		cellbuf_puts(cb, r->x + 1, r->y + 2, text, r->w - 1, UIC_AXIS,
		    0);
		return;
	}
	pane_list_scroll(&v->sel, &v->first, v->n, rows);
	for (i = v->first, k = 0; i < v->n && k < rows; i++, k++) {
		row(a, v, i, text, sizeof text, &site);
		pane_list_row(a, cb, r, r->y + 2 + k, text,
		    an_site_label(tables_sites(a), site, label, sizeof label),
		    i == v->sel, focused, v->m[i] == a->view.cursor ?
		    UIC_CURSOR : UIC_DEFAULT);
	}
}

/* Moves the selection by d rows, reading further when it leaves the
 * range. */
static void
move(struct app *a, struct events_view *v, int64_t d)
{
	char e[FMT_BUF];
	size_t want = (size_t)(d < 0 ? -d : d);

	if (d > 0 && v->sel + want >= v->n && v->hi + 1 < n_events(a)) {
		extend_fwd(a, v, want + 1);
		if (v->stopped >= 0 && v->sel + want >= v->n)
			app_msg(a, "no match up to %s yet: j reads further",
			    fmt_event(e, sizeof e, v->stopped));
	}
	if (d < 0 && v->sel < want && v->lo > 0) {
		extend_back(a, v, want + 1);
		if (v->stopped >= 0 && v->sel < want)
			app_msg(a, "no match back to %s yet: k reads further",
			    fmt_event(e, sizeof e, v->stopped));
	}
	if (v->n == 0)
		return;
	if (d > 0)
		v->sel = v->sel + want < v->n ? v->sel + want : v->n - 1;
	else
		v->sel = v->sel >= want ? v->sel - want : 0;
}

static int
ev_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct events_view *v = priv;
	int64_t page = r->h > 4 ? r->h - 4 : 1;
	char label[160];

	switch (act) {
	case ACT_UP: move(a, v, -1); break;
	case ACT_DOWN: move(a, v, 1); break;
	case ACT_PAGE_UP: move(a, v, -page); break;
	case ACT_PAGE_DOWN: move(a, v, page); break;
	case ACT_FIRST:
		place(a, v, -1, (size_t)r->h);
		v->sel = 0;
		break;
	case ACT_LAST:
		place(a, v, n_events(a) - 1, (size_t)r->h);
		break;
	case ACT_ENTER:
		if (v->sel < v->n) {
			cursor_set(a, v->m[v->sel]);
			v->follow = a->view.cursor;
		}
		break;
	case ACT_FILTER:
		snprintf(label, sizeof label, "filter%s%.60s%s (alloc free "
		    "segment oom >1M 4K..2M stream=N 0xADDR text; empty: "
		    "none): ", v->f.desc[0] != '\0' ? " [" : "", v->f.desc,
		    v->f.desc[0] != '\0' ? "]" : "");
		app_prompt(a, PROMPT_VIEW, label, NULL);
		return UI_HANDLED | UI_REDRAW;
	default: return pane_timeline_move_cursor(a, act);
	}
	a->detail = DETAIL_SITE;
	a->detail_scroll = 0;
	return UI_HANDLED | UI_REDRAW;
}

static void
ev_prompt(struct app *a, void *priv, const char *text)
{
	struct events_view *v = priv;
	char err[256];

	if (evfilter_parse(&v->f, a->snap, text, err, sizeof err) != 0) {
		app_msg(a, "filter: %s", err);
		return;
	}
	/* read again from the cursor */
	v->ready = 0;
	a->detail = DETAIL_SITE;
}

static int
ev_global(struct app *a, void *priv, enum action act)
{
	/* & filters the table whatever the focus */
	if (act != ACT_FILTER)
		return 0;
	return ev_action(a, priv, act, &a->lay.r[LAY_SEGMENTS]);
}

static int
ev_write(struct app *a, void *priv, FILE *f)
{
	struct events_view *v = priv;
	char title[512], text[256], raw[1024];
	size_t i;
	uint32_t site;

	ev_title(a, v, title, sizeof title);
	fprintf(f, "%s\n%s\n", title, header);
	for (i = 0; i < v->n; i++) {
		row(a, v, i, text, sizeof text, &site);
		pane_list_write_row(f, text, an_site_label(tables_sites(a),
		    site, raw, sizeof raw));
	}
	return ferror(f) ? -1 : 0;
}

static int
ev_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct events_view *v = priv;
	int c = pane_list_click(&v->sel, v->first, v->n, row, 2);

	(void)x;
	return pane_list_clicked(a, priv, r, c, 1, ev_action);
}

const struct view_ops view_events_ops = {
	.name = "events",
	.key = ACT_VIEW_EVENTS,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct events_view),
	.open = ev_open,
	.reset = ev_reset,
	.sync = ev_sync,
	.draw = ev_draw,
	.action = ev_action,
	.global = ev_global,
	.hint = "j/k event  Enter go there  & filter  h/l cursor  q close",
	.write = ev_write,
	.prompt = ev_prompt,
	.click = ev_click,
};
