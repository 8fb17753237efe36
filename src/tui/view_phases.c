/*
 * The phase view (P): every phase instance in event order, in the
 * segment map's place: its phase and iteration, its events, its peak and
 * where it falls, what it leaves behind and the reserved bytes at its
 * end; the title says what grows from iteration to iteration. The
 * selected instance is highlighted among the spans under the timeline's
 * axis and its ends are marked on it; the detail pane shows the stack of
 * what it leaves behind most of (else of its peak). Enter moves the
 * cursor to its peak; W makes it the leak window, so that U lists what
 * it allocated and left behind (the leak view judges the phase). The
 * measures are taken once per device, the first time the view opens.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/fmt.h"
#include "tui/view.h"
#include "util/escape.h"

struct phases_view {
	const struct an_phases *ph;	/* the app's, measured */
	uint64_t sel, first;
	int64_t marks[2];
	int rows;			/* of the list, last drawn */
};

static int
ph_open(struct app *a, void *priv)
{
	struct phases_view *v = priv;

	if ((v->ph = phaseset_measured(a)) == NULL)
		return -1;
	a->detail = DETAIL_SITE;
	return 0;
}

static void
ph_reset(struct app *a, void *priv)
{
	(void)a;
	(void)priv;
}

static void
ph_sync(struct app *a, void *priv)
{
	struct phases_view *v = priv;
	const struct an_phase_inst *p;
	struct app_vdetail *d = &a->vdetail;
	char name[64], b[FMT_BUF], c[FMT_BUF], e0[FMT_BUF], e1[FMT_BUF],
	    f[FMT_BUF], g[FMT_BUF], r[FMT_BUF];

	memset(d, 0, sizeof *d);
	if (v->ph == NULL || v->ph->n_inst == 0)
		return;
	if (v->sel >= v->ph->n_inst)
		v->sel = v->ph->n_inst - 1;
	p = &v->ph->inst[v->sel];
	v->marks[0] = p->first;
	v->marks[1] = p->last;
	a->view.marks = v->marks;
	a->view.n_marks = p->last > p->first ? 2 : 1;
	a->view.phase_sel = v->sel + 1;
	sv_escape(name, sizeof name, v->ph->phases[p->phase].name,
	    strlen(v->ph->phases[p->phase].name));
	snprintf(d->title, sizeof d->title, "Phase %s #%" PRIu64 " - %s..%s - "
	    "peak %s at %s", name, p->iteration, fmt_event(e0, sizeof e0,
	    p->first), fmt_event(e1, sizeof e1, p->last),
	    fmt_size(b, sizeof b, p->peak), fmt_event(c, sizeof c,
	    p->peak_ev));
	snprintf(d->info, sizeof d->info, "before %s (%s freed in it) - left "
	    "%s in %" PRIu64 " site%s%s - at its end %s allocated, %s "
	    "reserved - W: leak window", fmt_size(f, sizeof f,
	    p->before_bytes), fmt_size(g, sizeof g, p->freed_before_bytes),
	    fmt_size(b, sizeof b, p->left_bytes), p->n_left,
	    p->n_left == 1 ? "" : "s", p->n_left > 0 ? " (below: the "
	    "largest)" : "", fmt_size(c, sizeof c, p->total_end),
	    fmt_size(r, sizeof r, p->reserved_end));
	/* what it left most of, else the allocation at its peak */
	d->stack = p->n_left > 0 ? p->left[0].stack : p->peak_stack;
}

/* What grows, for the title: the first site of the first phase that
 * grows (innermost), and how many more. */
static void
ph_title(struct phases_view *v, char *t, size_t size)
{
	const struct an_phases *ph = v->ph;
	const struct an_phase *first = NULL;
	char name[64], b[FMT_BUF];
	uint64_t n = 0, i;
	uint32_t q;

	for (q = 0; q < ph->n_phases; q++)
		for (i = 0; i < ph->phases[q].n_grow; i++)
			if (ph->phases[q].grow[i].innermost && n++ == 0)
				first = &ph->phases[q];
	if (first == NULL) {
		snprintf(t, size, "Phases - %" PRIu64 " instance%s of %" PRIu32
		    " phase%s - nothing left behind grows per iteration",
		    ph->n_inst, ph->n_inst == 1 ? "" : "s", ph->n_phases,
		    ph->n_phases == 1 ? "" : "s");
		return;
	}
	sv_escape(name, sizeof name, first->name, strlen(first->name));
	for (i = 0; !first->grow[i].innermost; i++)
		;
	snprintf(t, size, "Phases - %" PRIu64 " instances of %" PRIu32
	    " phases - grows %s/iteration in %s%s", ph->n_inst, ph->n_phases,
	    fmt_size(b, sizeof b, first->grow[i].per_iter), name,
	    n > 1 ? " (and more: w)" : "");
}

/* Row k as text, and the site it leaves behind most of (raw). */
static const char *
row_text(struct phases_view *v, uint64_t k, struct an_sites *sites,
    char *buf, size_t size, char *raw, size_t rsize)
{
	const struct an_phase_inst *p = &v->ph->inst[k];
	char name[64], ev[48], e0[FMT_BUF], e1[FMT_BUF], pk[FMT_BUF],
	    at[FMT_BUF], l[FMT_BUF], r[FMT_BUF];

	sv_escape(name, sizeof name, v->ph->phases[p->phase].name,
	    strlen(v->ph->phases[p->phase].name));
	snprintf(ev, sizeof ev, "%s..%s%s", fmt_event(e0, sizeof e0, p->first),
	    fmt_event(e1, sizeof e1, p->last), p->complete ? "" : "*");
	snprintf(buf, size, "%-14.14s %4" PRIu64 " %-19s %6s %-8s %6s %6s  ",
	    name, p->iteration, ev, fmt_size_short(pk, sizeof pk, p->peak),
	    fmt_event(at, sizeof at, p->peak_ev),
	    fmt_size_short(l, sizeof l, p->left_bytes),
	    fmt_size_short(r, sizeof r, p->reserved_end));
	raw[0] = '\0';
	if (p->n_left > 0 && sites != NULL)
		an_site_label(sites, p->left[0].site, raw, rsize);
	return buf;
}

static void
ph_draw(struct app *a, void *priv, struct cellbuf *cb, const struct rect *r,
    int focused)
{
	struct phases_view *v = priv;
	struct an_sites *sites = tables_sites(a);
	char title[256], text[256], raw[512];
	uint64_t k;
	int y, rows = r->h - 2;

	ph_title(v, title, sizeof title);
	pane_title(a, cb, r, focused, title);
	cellbuf_fill(cb, r->x, r->y + 1, r->w, r->h - 1, ' ', UIC_DEFAULT, 0);
	if (rows < 1)
		return;
	cellbuf_printf(cb, r->x + 1, r->y + 1, r->w - 1, UIC_AXIS, 0,
	    "%-14s %4s %-19s %6s %-8s %6s %6s  %s", "phase", "iter", "events",
	    "peak", "at", "left", "resvd", "left most by");
	v->rows = rows;
	pane_list_scroll(&v->sel, &v->first, v->ph->n_inst, rows);
	for (k = v->first, y = r->y + 2; k < v->ph->n_inst &&
	    y < r->y + r->h; k++, y++) {
		row_text(v, k, sites, text, sizeof text, raw, sizeof raw);
		pane_list_row(a, cb, r, y, text, raw[0] != '\0' ? raw : NULL,
		    k == v->sel, focused, UIC_DEFAULT);
	}
}

/* Enter: the cursor to the selected instance's peak. */
static void
go(struct app *a, struct phases_view *v)
{
	const struct an_phase_inst *p = &v->ph->inst[v->sel];
	char name[64], e[FMT_BUF], b[FMT_BUF];

	cursor_set(a, p->peak_ev >= 0 ? p->peak_ev : p->first);
	sv_escape(name, sizeof name, v->ph->phases[p->phase].name,
	    strlen(v->ph->phases[p->phase].name));
	app_msg(a, "%s #%" PRIu64 ": its peak, %s at %s", name, p->iteration,
	    fmt_size(b, sizeof b, p->peak), fmt_event(e, sizeof e,
	    p->peak_ev));
}

/* W: the leak window is the selected instance. */
static void
window(struct app *a, struct phases_view *v)
{
	const struct an_phase_inst *p = &v->ph->inst[v->sel];
	char name[64], e0[FMT_BUF], e1[FMT_BUF];

	a->win_from = p->first;
	a->win_to = p->last;
	sv_escape(name, sizeof name, v->ph->phases[p->phase].name,
	    strlen(v->ph->phases[p->phase].name));
	app_msg(a, "leak window %s..%s (%s #%" PRIu64 "): U lists what it "
	    "left behind", fmt_event(e0, sizeof e0, p->first),
	    fmt_event(e1, sizeof e1, p->last), name, p->iteration);
}

static int
ph_action(struct app *a, void *priv, enum action act, const struct rect *r)
{
	struct phases_view *v = priv;
	int f = pane_list_move(&v->sel, v->ph->n_inst, act, r);

	if (f != 0) {
		a->detail = DETAIL_SITE;
		return f;
	}
	if ((f = pane_timeline_move_cursor(a, act)) != 0)
		return f;
	if (act != ACT_ENTER)
		return 0;
	go(a, v);
	return UI_HANDLED | UI_REDRAW;
}

static int
ph_global(struct app *a, void *priv, enum action act)
{
	struct phases_view *v = priv;

	switch (act) {
	case ACT_PHASE_WINDOW:
		window(a, v);
		return UI_HANDLED | UI_REDRAW;
	case ACT_ALLOC_NEXT:
		if (v->sel + 1 < v->ph->n_inst)
			v->sel++;
		go(a, v);
		return UI_HANDLED | UI_REDRAW;
	case ACT_ALLOC_PREV:
		if (v->sel > 0)
			v->sel--;
		go(a, v);
		return UI_HANDLED | UI_REDRAW;
	default:
		return 0;
	}
}

/* The table with exact bytes, then what grows, one line each. */
static int
ph_write(struct app *a, void *priv, FILE *f)
{
	struct phases_view *v = priv;
	const struct an_phases *ph = v->ph;
	struct an_sites *sites = tables_sites(a);
	char title[256], name[128], raw[512];
	uint64_t k, i;
	uint32_t q;

	ph_title(v, title, sizeof title);
	fprintf(f, "%s\n", title);
	fprintf(f, "phase iteration events peak_bytes peak_event left_bytes "
	    "reserved_end_bytes left_most_by\n");
	for (k = 0; k < ph->n_inst; k++) {
		const struct an_phase_inst *p = &ph->inst[k];

		sv_escape(name, sizeof name, ph->phases[p->phase].name,
		    strlen(ph->phases[p->phase].name));
		fprintf(f, "%s %" PRIu64 " %" PRId64 "..%" PRId64 "%s %" PRIu64
		    " %" PRId64 " %" PRIu64 " %" PRIu64 " ", name,
		    p->iteration, p->first, p->last, p->complete ? "" : "*",
		    p->peak, p->peak_ev, p->left_bytes, p->reserved_end);
		raw[0] = '\0';
		if (p->n_left > 0 && sites != NULL)
			an_site_label(sites, p->left[0].site, raw, sizeof raw);
		pane_list_write_row(f, "", raw);
	}
	for (q = 0; q < ph->n_phases; q++)
		for (i = 0; i < ph->phases[q].n_grow; i++) {
			const struct an_phase_grow *g = &ph->phases[q].grow[i];

			if (!g->innermost || sites == NULL)
				continue;
			sv_escape(name, sizeof name, ph->phases[q].name,
			    strlen(ph->phases[q].name));
			an_site_label(sites, g->site, raw, sizeof raw);
			fprintf(f, "grows %" PRIu64 " bytes per iteration in "
			    "%s at ", g->per_iter, name);
			pane_list_write_row(f, "", raw);
		}
	return 0;
}

static int
ph_click(struct app *a, void *priv, int x, int row, const struct rect *r)
{
	struct phases_view *v = priv;

	(void)x;
	return pane_list_clicked(a, priv, r, pane_list_click(&v->sel,
	    v->first, v->ph->n_inst, row, 2), 1, ph_action);
}

const struct view_ops view_phases_ops = {
	.name = "phases",
	.key = ACT_VIEW_PHASES,
	.slot = LAY_SEGMENTS,
	.priv_size = sizeof(struct phases_view),
	.open = ph_open,
	.reset = ph_reset,
	.sync = ph_sync,
	.draw = ph_draw,
	.action = ph_action,
	.global = ph_global,
	.hint = "j/k row  Enter its peak  W leak window (then U)  ]/[ "
		"next/prev  q close",
	.write = ph_write,
	.click = ph_click,
};
