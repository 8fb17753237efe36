/*
 * The comparison of two ranks or runs (ranks.h): both timelines over one
 * axis with one cursor, and the call sites ranked by the change in live
 * bytes at the cursor, as snapview diff --at / --step ranks them; Enter
 * shows both stacks of a site. Its keys are the actions of KM_COMPARE.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "index/idx.h"
#include "render/fmt.h"
#include "render/frames.h"
#include "render/rankview.h"
#include "replay/replay_idx.h"
#include "tui/keys.h"
#include "tui/ranks_int.h"
#include "util/units.h"
#include "util/xalloc.h"

#define LABEL_W 10      /* "A 198.5M " left of a chart */

struct cmp_side {
	const char *path;               /* borrowed from the set */
	char label[128];                /* as the screens name it, escaped */
	int64_t rank;
	struct sv_index *ix;
	const struct snapshot *s;
	const struct idx_timeline *tl;
	uint32_t device;
	struct an_sites sites;
	int sites_ok;
	struct an_steps steps;
	int steps_ok;
	struct an_sum_step *stp;        /* the steps for the axis */
	struct align_trace tr;
	struct rv_cols cols;
};

/* The comparison: two sides on one axis, one cursor, their diff. */
struct rk_cmp {
	struct cmp_side s[2];
	struct align al;
	int w;                          /* chart columns the cols are for */
	int cursor;                     /* column */
	int64_t step;                   /* -1: the cursor's columns; else
					   each side at its peak of step k */
	int at_end;                     /* each side after its last event
					   (the state it was written in) */
	int at_peaks;                   /* each side at its own peak (how
					   it opens, as diff compares) */
	int64_t at[2];                  /* the events compared */
	struct an_diff df;
	int df_ok;
	int64_t df_at[2];
	uint64_t sel, top;              /* the site list */
	int stacks;                     /* Enter: both stacks shown */
	int list_h;                     /* rows of the list last drawn */
};

static void
side_close(struct cmp_side *sd)
{
	if (sd->sites_ok)
		an_sites_destroy(&sd->sites);
	if (sd->steps_ok)
		an_steps_destroy(&sd->steps);
	free(sd->stp);
	rv_cols_free(&sd->cols);
	if (sd->ix != NULL)
		idx_close(sd->ix);
	memset(sd, 0, sizeof *sd);
}

void
ranks_compare_close(struct rk_cmp *c)
{
	if (c == NULL)
		return;
	if (c->df_ok)
		an_diff_destroy(&c->df);
	side_close(&c->s[0]);
	side_close(&c->s[1]);
	free(c);
}

static int
side_open(struct cmp_side *sd, const struct an_rs_member *m, int64_t device,
    const struct tui_opts *o, char *msg, size_t ml)
{
	struct idx_section_builder sec[2];
	struct idx_opts io;
	struct sv_error err;
	uint64_t k;
	char name[256];

	memset(&io, 0, sizeof io);
	sv_error_clear(&err);
	io.cache_dir = o->cache_dir;
	io.no_cache = o->no_cache;
	if (!o->no_cache) {
		/* the sections every command asks for (cli.c) */
		sec[0] = replay_idx_section;
		sec[1] = an_summary_section;
		io.sections = sec;
		io.n_sections = 2;
	}
	sd->path = m->path;
	sd->rank = m->rank;
	ranks_common_shown(name, sizeof name, ranks_common_base_name(m->path));
	if (idx_open(m->path, &io, &sd->ix, &err) != 0) {
		snprintf(msg, ml, "%s: %s", name, err.msg);
		return -1;
	}
	sd->s = idx_snapshot(sd->ix);
	sd->device = device >= 0 ? (uint32_t)device
				 : snap_default_device(sd->s);
	sd->tl = idx_timeline(sd->ix, sd->device);
	if (sd->tl == NULL) {
		snprintf(msg, ml, "%s: no data for device %u", name,
		    sd->device);
		return -1;
	}
	if (an_sites_init(&sd->sites, sd->s, 1, NULL, &err) != 0) {
		snprintf(msg, ml, "%s: %s", name, err.msg);
		return -1;
	}
	sd->sites_ok = 1;
	if (an_steps_find(sd->s, sd->device, &sd->steps, &err) != 0) {
		snprintf(msg, ml, "%s: %s", name, err.msg);
		return -1;
	}
	sd->steps_ok = 1;
	sd->stp = xcalloc(sd->steps.n + 1, sizeof *sd->stp);
	for (k = 0; k < sd->steps.n; k++) {
		sd->stp[k].first = sd->steps.steps[k].first;
		sd->stp[k].last = sd->steps.steps[k].last;
	}
	sd->tr.events = sd->tl->n_events;
	sd->tr.steps = sd->stp;
	sd->tr.n_steps = (uint32_t)sd->steps.n;
	return 0;
}

void
ranks_compare_at_end(struct rk_cmp *c)
{
	c->at_end = 1;
	c->at_peaks = 0;
	c->step = -1;
}

int
ranks_compare_open(struct rk *r, size_t a, int64_t da, size_t b, int64_t db)
{
	struct rk_cmp *c = xcalloc(1, sizeof *c);
	struct align_trace tr[2];
	char msg[1024];

	if (side_open(&c->s[0], &r->rs.m[a], da, r->o, msg, sizeof msg) != 0 ||
	    side_open(&c->s[1], &r->rs.m[b], db, r->o, msg, sizeof msg) != 0) {
		ranks_compare_close(c);
		ranks_common_message(r, msg);
		return -1;
	}
	ranks_common_member_label(r, a, c->s[0].label, sizeof c->s[0].label);
	ranks_common_member_label(r, b, c->s[1].label, sizeof c->s[1].label);
	tr[0] = c->s[0].tr;
	tr[1] = c->s[1].tr;
	align_init(&c->al, tr, 2, 1);
	c->step = -1;
	c->at_peaks = 1;
	c->cursor = -1;
	c->df_at[0] = c->df_at[1] = INT64_MIN;
	ranks_compare_close(r->cmp);
	r->cmp = c;
	return 0;
}

/* Columns for a chart w wide; the cursor starts on A's peak. */
static void
cmp_layout(struct rk_cmp *c, int w)
{
	int x;

	if (w == c->w)
		return;
	for (x = 0; x < 2; x++) {
		rv_cols_free(&c->s[x].cols);
		rv_cols_init(&c->s[x].cols, w);
		rv_cols_timeline(&c->s[x].cols, &c->al, &c->s[x].tr,
		    c->s[x].tl);
	}
	if (c->at_end)
		c->cursor = w - 1;
	else if (c->cursor < 0 || c->w <= 0)
		c->cursor = c->s[0].cols.peak >= 0 ? c->s[0].cols.peak : 0;
	else
		c->cursor = (int)((int64_t)c->cursor * w / c->w);
	if (c->cursor >= w)
		c->cursor = w - 1;
	c->w = w;
}

/* The event side x is compared after: its last at the end, its peak on
 * opening, its step peak in step mode, else the highest in the cursor's
 * column, else the last one before it. */
static int64_t
side_event(struct rk_cmp *c, int x)
{
	struct cmp_side *sd = &c->s[x];
	int64_t e0, e1;

	if (c->at_end)
		return (int64_t)sd->tl->n_events - 1;
	if (c->at_peaks)
		return sd->tl->peak_ev;
	if (c->step >= 0)
		return an_diff_step_at(sd->tl, &sd->steps, (uint64_t)c->step);
	if (c->cursor >= 0 && c->cursor < sd->cols.w &&
	    sd->cols.has[c->cursor])
		return sd->cols.arg[c->cursor];
	align_col_events(&c->al, &sd->tr, c->cursor, c->w, &e0, &e1);
	return e0 - 1;
}

static void
cmp_update(struct rk_cmp *c)
{
	struct an_diff_input in[2];
	int x;

	for (x = 0; x < 2; x++)
		c->at[x] = side_event(c, x);
	if (c->df_ok && c->df_at[0] == c->at[0] && c->df_at[1] == c->at[1])
		return;
	if (c->df_ok)
		an_diff_destroy(&c->df);
	for (x = 0; x < 2; x++) {
		memset(&in[x], 0, sizeof in[x]);
		in[x].s = c->s[x].s;
		in[x].tl = c->s[x].tl;
		in[x].sites = &c->s[x].sites;
		in[x].has_at = 1;
		in[x].at = c->at[x];
	}
	an_diff(&in[0], &in[1], &c->df);
	c->df_ok = 1;
	c->df_at[0] = c->at[0];
	c->df_at[1] = c->at[1];
	if (c->sel >= c->df.n_rows)
		c->sel = c->df.n_rows > 0 ? c->df.n_rows - 1 : 0;
}

/* Step mode on step k, when both sides have it. */
static void
cmp_step(struct rk *r, struct rk_cmp *c, int64_t k)
{
	uint64_t na = c->s[0].steps.n, nb = c->s[1].steps.n;

	if (na == 0 || nb == 0) {
		/* one forward pass has no steps: its layers are none */
		ranks_common_msgf(r, "no steps to go to: %s",
		    na == 0 && nb == 0 ? "neither file has any" :
		    na == 0 ? "A has none" : "B has none");
		return;
	}
	if (k < 0 || (uint64_t)k >= na || (uint64_t)k >= nb) {
		ranks_common_msgf(r, "A has %" PRIu64 " step%s, B %" PRIu64, na,
		    na == 1 ? "" : "s", nb);
		return;
	}
	c->step = k;
	c->cursor = align_col(&c->al, &c->s[0].tr,
	    an_diff_step_at(c->s[0].tl, &c->s[0].steps, (uint64_t)k), c->w);
}

/* The step the cursor is in (on A's axis), or -1. */
static int64_t
cursor_step(struct rk_cmp *c)
{
	int64_t e0, e1;

	if (c->step >= 0)
		return c->step;
	align_col_events(&c->al, &c->s[0].tr, c->cursor, c->w, &e0, &e1);
	if (e0 >= (int64_t)c->s[0].tl->n_events)
		return (int64_t)c->s[0].steps.n;
	return an_step_at(&c->s[0].steps, e0 > 0 ? e0 : 0);
}

enum rk_result
ranks_compare_key(struct rk *r, struct rk_cmp *c, enum action act)
{
	int page = c->list_h > 1 ? c->list_h - 1 : 1;
	int64_t k;
	char q[16];

	if (c->stacks) {
		if (act == ACT_ENTER || act == ACT_BACK || act == ACT_QUIT) {
			c->stacks = 0;
			return RK_REDRAW;
		}
	}
	/* a step, B's peak: the cursor only, in the stacks too */
	switch (act) {
	case ACT_LEFT: case ACT_RIGHT: case ACT_PAN_LEFT: case ACT_PAN_RIGHT:
	case ACT_PEAK: case ACT_PEAK_B: case ACT_FIRST: case ACT_STEP_NEXT:
	case ACT_STEP_PREV:
		c->at_end = 0;
		c->at_peaks = 0;
		break;
	case ACT_LAST:
		c->at_peaks = 0;
		break;
	default:
		break;
	}
	switch (act) {
	case ACT_STEP_NEXT:
	case ACT_STEP_PREV:
		k = cursor_step(c);
		if (act == ACT_STEP_NEXT)
			k = c->step >= 0 || k < 0 ? k + 1 : k;
		else
			k = c->step >= 0 ? k - 1 : k;
		if (k < 0)
			k = 0;
		cmp_step(r, c, k);
		return RK_REDRAW;
	case ACT_PEAK_B:
		c->step = -1;
		c->cursor = c->s[1].cols.peak >= 0 ? c->s[1].cols.peak : 0;
		return RK_REDRAW;
	case ACT_PEAKS: /* as on opening: the cursor on A's peak */
		c->at_end = 0;
		c->at_peaks = 1;
		c->step = -1;
		c->cursor = c->s[0].cols.peak >= 0 ? c->s[0].cols.peak : 0;
		return RK_REDRAW;
	default:
		break;
	}
	switch (act) {
	case ACT_LEFT: c->step = -1; c->cursor--; break;
	case ACT_RIGHT: c->step = -1; c->cursor++; break;
	case ACT_PAN_LEFT: c->step = -1; c->cursor -= c->w / 8 + 1; break;
	case ACT_PAN_RIGHT: c->step = -1; c->cursor += c->w / 8 + 1; break;
	case ACT_PEAK:
		c->step = -1;
		c->cursor = c->s[0].cols.peak >= 0 ? c->s[0].cols.peak : 0;
		break;
	case ACT_UP: if (c->sel > 0) c->sel--; break;
	case ACT_DOWN: c->sel++; break;
	case ACT_PAGE_UP:
		c->sel = c->sel > (uint64_t)page ? c->sel - (uint64_t)page : 0;
		break;
	case ACT_PAGE_DOWN: c->sel += (uint64_t)page; break;
	case ACT_FIRST: c->step = -1; c->cursor = 0; break;
	case ACT_LAST:
		c->step = -1;
		c->at_end = 1;
		c->cursor = c->w - 1;
		break;
	case ACT_ENTER:
		if (c->df_ok && c->df.n_rows > 0)
			c->stacks = 1;
		break;
	case ACT_BACK:
	case ACT_QUIT:
	case ACT_RANKS:
		if (r->cmp_only && act != ACT_RANKS)
			return RK_QUIT;
		if (r->cmp_only) {
			ranks_common_msgf(r, "two files: no overview "
			    "(%s quits)", keys_action_shown(ACT_QUIT, q,
			    sizeof q));
			return RK_REDRAW;
		}
		ranks_compare_close(c);
		r->cmp = NULL;
		return RK_REDRAW;
	default:
		return RK_NONE;
	}
	if (c->cursor < 0)
		c->cursor = 0;
	if (c->cursor >= c->w)
		c->cursor = c->w > 0 ? c->w - 1 : 0;
	if (c->df_ok && c->sel >= c->df.n_rows)
		c->sel = c->df.n_rows > 0 ? c->df.n_rows - 1 : 0;
	return RK_REDRAW;
}

/* ---- drawing ------------------------------------------------------------- */

/* Side x's chart, h rows at y. Both are drawn to one scale, labelled
 * once: its top, ticked on each chart's first row, is written on A's
 * (a label per chart read as each file's own peak); each chart's letter
 * is on its second row. */
static void
draw_chart(struct cellbuf *cb, struct rk_cmp *c, int x, int y, int h,
    uint64_t scale, int utf8)
{
	struct cmp_side *sd = &c->s[x];
	char sz[32];
	int r;

	cellbuf_fill(cb, 0, y, LABEL_W, h, ' ', UIC_DEFAULT, 0);
	if (x == 0)
		cellbuf_printf(cb, 0, y, LABEL_W - 1, UIC_AXIS, 0, "%*s",
		    LABEL_W - 2, fmt_size_short(sz, sizeof sz, scale));
	cellbuf_put(cb, 0, y + (h > 1 ? 1 : 0), x ? 'B' : 'A', UIC_DEFAULT,
	    CB_A_BOLD);
	for (r = 0; r < h; r++)
		cellbuf_put(cb, LABEL_W - 1, y + r, r > 0 ? (utf8 ? 0x2595 :
		    '|') : (utf8 ? 0x2524 : '+'), UIC_AXIS, 0);
	rv_area(cb, LABEL_W, y, h, &sd->cols, scale, c->cursor,
	    x ? UIC_BAND1 : UIC_BAND0, utf8);
}

static void
draw_cursor_line(struct cellbuf *cb, struct rk_cmp *c, int y)
{
	char a[32], b[32], ea[32], eb[32], line[256], cmd[96], na[24], nb[24];
	int x;

	for (x = 0; x < 2; x++)
		fmt_size_short(x ? b : a, sizeof a,
		    idx_tl_total(c->s[x].tl, c->at[x]));
	fmt_event(ea, sizeof ea, c->at[0]);
	fmt_event(eb, sizeof eb, c->at[1]);
	/* the same question as a command: events without separators */
	snprintf(na, sizeof na, "%" PRId64, c->at[0]);
	snprintf(nb, sizeof nb, "%" PRId64, c->at[1]);
	if (c->step >= 0)
		snprintf(cmd, sizeof cmd, "step %" PRId64 " peaks = diff "
		    "--step %" PRId64, c->step + 1, c->step + 1);
	else if (c->at_peaks)
		snprintf(cmd, sizeof cmd, "each at its peak = diff");
	else
		snprintf(cmd, sizeof cmd, "= diff --at %s,%s",
		    c->at[0] < 0 ? "start" : na, c->at[1] < 0 ? "start" : nb);
	snprintf(line, sizeof line, " A %s %s   B %s %s   %s",
	    c->at[0] < 0 ? "start" : ea, a, c->at[1] < 0 ? "start" : eb, b,
	    cmd);
	cellbuf_fill(cb, 0, y, cb->w, 1, ' ', UIC_DEFAULT, 0);
	cellbuf_puts(cb, 0, y, line, cb->w, UIC_DEFAULT, 0);
}

static void
draw_site_row(struct cellbuf *cb, const struct an_diff_row *row, int y,
    int sel, int utf8)
{
	char a[32], b[32], d[32], lab[512], fit[512], line[700];

	/* the sign glued to the number: "-277M", never "-     277M" */
	fmt_size_short_delta(d, sizeof d, row->a.live, row->b.live);
	snprintf(line, sizeof line, " %9s %9s %10s  %s",
	    fmt_size_short(a, sizeof a, row->a.live),
	    fmt_size_short(b, sizeof b, row->b.live), d,
	    ranks_common_fit_left(fit, sizeof fit, ranks_common_shown(lab,
	    sizeof lab, row->label), cb->w - 33, utf8));
	cellbuf_fill(cb, 0, y, cb->w, 1, ' ', sel ? UIC_SELECT : UIC_DEFAULT,
	    0);
	/* UIC_SELECT alone, as every list (not reversed again) */
	cellbuf_puts(cb, 0, y, line, cb->w, sel ? UIC_SELECT : UIC_DEFAULT,
	    0);
}

static void
draw_sites(struct cellbuf *cb, struct rk_cmp *c, int y, int h, int utf8)
{
	uint64_t i;
	int row;

	c->list_h = h;
	cellbuf_fill(cb, 0, y, cb->w, h, ' ', UIC_DEFAULT, 0);
	cellbuf_printf(cb, 0, y, cb->w, UIC_AXIS, 0, " %9s %9s %10s  %s",
	    "live A", "live B", "B - A", "call site");
	if (h < 2)
		return;
	if (c->sel < c->top)
		c->top = c->sel;
	if (c->sel >= c->top + (uint64_t)(h - 1))
		c->top = c->sel - (uint64_t)(h - 2);
	for (i = c->top, row = 1; i < c->df.n_rows && row < h; i++, row++)
		draw_site_row(cb, &c->df.rows[i], y + row, i == c->sel, utf8);
	if (c->df.n_rows == 0)
		cellbuf_puts(cb, 1, y + 1, "nothing live in either file here",
		    cb->w - 1, UIC_AXIS, 0);
}

/* Side x's stack of the selected site in rows y .. y + h - 1. */
static void
draw_stack(struct cellbuf *cb, struct rk_cmp *c, int x, int y, int h, int utf8)
{
	const struct an_diff_row *row = &c->df.rows[c->sel];
	const struct an_diff_side *sd = x ? &row->b : &row->a;
	const struct snapshot *s = c->s[x].s;
	struct frame_line *fl;
	char a[32], b[32], name[256], line[600];
	size_t n, i;
	int k;

	cellbuf_fill(cb, 0, y, cb->w, h, ' ', UIC_DEFAULT, 0);
	if (sd->live_n == 0) {
		cellbuf_printf(cb, 0, y, cb->w, UIC_DEFAULT, CB_A_BOLD,
		    " %c %s: nothing live here", x ? 'B' : 'A',
		    c->s[x].label);
		return;
	}
	cellbuf_printf(cb, 0, y, cb->w, UIC_DEFAULT, CB_A_BOLD,
	    " %c %s: %s in %" PRIu64 " block%s; the largest, %s, from:",
	    x ? 'B' : 'A', c->s[x].label,
	    sv_fmt_size(a, sizeof a, sd->live), sd->live_n,
	    sd->live_n == 1 ? "" : "s", sv_fmt_size(b, sizeof b,
	    sd->stack_size));
	n = frames_layout(s, sd->stack, 0, NULL, 0);
	fl = xcalloc(n + 1, sizeof *fl);
	frames_layout(s, sd->stack, 0, fl, n);
	for (i = 0, k = 1; i < n && k < h; i++, k++) {
		if (fl[i].nfold > 0) {
			snprintf(line, sizeof line, "   %s %u framework "
			    "frame%s", utf8 ? "\xe2\x96\xb8" : "+",
			    fl[i].nfold, fl[i].nfold == 1 ? "" : "s");
			cellbuf_puts(cb, 0, y + k, line, cb->w, UIC_FRAMEWORK,
			    0);
			continue;
		}
		frames_format(s, fl[i].frame, name, sizeof name);
		snprintf(line, sizeof line, "   %s", name);
		cellbuf_puts(cb, 0, y + k, line, cb->w, fl[i].kind == FRAME_USER
		    ? UIC_DEFAULT : UIC_FRAMEWORK, 0);
	}
	free(fl);
}

/* "Compare - A: NAME - B: NAME - by step" in a title bar w wide: long
 * names lose their middle, each at most half the room left when both
 * need it, so that the whole title shows. */
static void
cmp_title(const struct rk_cmp *c, char *title, size_t size, int w, int utf8)
{
	char a[sizeof c->s[0].label], b[sizeof c->s[1].label];
	const char *by = c->al.by_step ? "step" : "position";
	int room, la, lb, ma, mb;

	/* the bar's "─ ", the space and one "─" after the title, the words
	 * around the names */
	room = w - 4 - (int)strlen("Compare - A:  - B:  - by ") -
	    (int)strlen(by);
	la = (int)strlen(c->s[0].label);
	lb = (int)strlen(c->s[1].label);
	ma = mb = room / 2;
	if (la < ma)
		mb = room - la;
	else if (lb < mb)
		ma = room - lb;
	ranks_common_fit_middle(a, sizeof a, c->s[0].label, ma, utf8);
	ranks_common_fit_middle(b, sizeof b, c->s[1].label, mb, utf8);
	snprintf(title, size, "Compare - A: %s - B: %s - by %s", a, b, by);
}

void
ranks_compare_draw(struct rk_cmp *c, struct cellbuf *cb, int utf8)
{
	char title[700], lab[512];
	int hc = (cb->h - 12) / 3, y, list_y, list_h;
	uint64_t scale;

	if (hc < 2)
		hc = 2;
	cmp_layout(c, cb->w - LABEL_W);
	cmp_update(c);
	cmp_title(c, title, sizeof title, cb->w, utf8);
	ranks_common_title_bar(cb, 0, title, utf8);
	scale = c->s[0].tl->peak > c->s[1].tl->peak ? c->s[0].tl->peak
						    : c->s[1].tl->peak;
	draw_chart(cb, c, 0, 1, hc, scale, utf8);
	draw_chart(cb, c, 1, 1 + hc, hc, scale, utf8);
	y = 1 + 2 * hc;
	cellbuf_fill(cb, 0, y, LABEL_W, 1, ' ', UIC_DEFAULT, 0);
	rv_axis(cb, LABEL_W, y, c->w, &c->al, c->cursor, utf8);
	draw_cursor_line(cb, c, y + 1);
	list_y = y + 3;
	list_h = cb->h - 1 - list_y;
	if (c->stacks && c->df.n_rows > 0) {
		snprintf(title, sizeof title, "%s",
		    ranks_common_shown(lab, sizeof lab,
		    c->df.rows[c->sel].label));
		ranks_common_title_bar(cb, y + 2, title, utf8);
		draw_stack(cb, c, 0, list_y, list_h / 2, utf8);
		draw_stack(cb, c, 1, list_y + list_h / 2,
		    list_h - list_h / 2, utf8);
	} else {
		snprintf(title, sizeof title, "Call sites by the change in "
		    "live bytes at %s, B - A - %" PRIu64 " site%s",
		    c->at_peaks ? "the peaks" : c->at_end ? "the end" :
		    "the cursor", c->df.n_rows, c->df.n_rows == 1 ? "" : "s");
		ranks_common_title_bar(cb, y + 2, title, utf8);
		draw_sites(cb, c, list_y, list_h, utf8);
	}
}

void
ranks_compare_status(const struct rk_cmp *c, char *left, size_t ll, char *right,
    size_t rl)
{
	if (c->stacks)
		keys_hint(left, ll, "%k/%k back to the sites  %k/%k move  "
		    "%k back", ACT_ENTER, ACT_BACK, ACT_LEFT, ACT_RIGHT,
		    ACT_QUIT);
	else if (c->s[0].steps.n == 0 || c->s[1].steps.n == 0)
		/* no steps to put both files at (a forward pass has none) */
		keys_hint(left, ll, "%k/%k move  %k/%k peak  %k/%k site  "
		    "%k stacks  %k back", ACT_LEFT, ACT_RIGHT, ACT_PEAK,
		    ACT_PEAK_B, ACT_DOWN, ACT_UP, ACT_ENTER, ACT_QUIT);
	else
		keys_hint(left, ll, "%k/%k move  %k/%k step  %k/%k peak  "
		    "%k/%k site  %k stacks  %k back", ACT_LEFT, ACT_RIGHT,
		    ACT_STEP_NEXT, ACT_STEP_PREV, ACT_PEAK, ACT_PEAK_B,
		    ACT_DOWN, ACT_UP, ACT_ENTER, ACT_QUIT);
	snprintf(right, rl, " %" PRIu64 "/%" PRIu64 " ",
	    c->df.n_rows ? c->sel + 1 : 0, c->df.n_rows);
}

static const struct help_entry keys[] = {
    {{ACT_LEFT, ACT_RIGHT}, "move the cursor (both timelines)"},
    {{ACT_PAN_LEFT, ACT_PAN_RIGHT}, "an eighth of the axis left / right"},
    {{ACT_FIRST, ACT_LAST},
	"start / end of the axis (the end: each file after its last event)"},
    {{ACT_PEAK, ACT_PEAK_B}, "A's peak / B's peak"},
    {{ACT_PEAKS}, "each file at its own peak"},
    {{ACT_STEP_NEXT, ACT_STEP_PREV},
	"next / previous step: each file at its step peak (diff --step)"},
    {{ACT_UP, ACT_DOWN}, "select a call site"},
    {{ACT_PAGE_UP, ACT_PAGE_DOWN}, "a page of call sites"},
    {{ACT_ENTER}, "both stacks of the site (again: back)"},
    {{ACT_BACK, ACT_QUIT}, "back to the overview (two files: quit)"},
    {{ACT_RANKS}, "back to the overview"},
};

const struct help_group ranks_compare_help = {
	"Comparison", keys, sizeof keys / sizeof keys[0]
};
