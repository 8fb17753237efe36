/*
 * The rank overview and the comparison of two ranks. See ranks.h.
 */
#include "config.h"

#include "tui/ranks.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/diff.h"
#include "analysis/rankset.h"
#include "analysis/site.h"
#include "analysis/steps.h"
#include "index/idx.h"
#include "render/align.h"
#include "render/fmt.h"
#include "render/frames.h"
#include "render/rankview.h"
#include "replay/replay_idx.h"
#include "tui/keys.h"
#include "util/escape.h"
#include "util/units.h"
#include "util/xalloc.h"

#define LABEL_W 10      /* "A 198.5M " left of a chart */
#define DETAIL_H 5      /* the overview's lines about the selected rank */

/* ---- state --------------------------------------------------------------- */

struct rk_row {
	size_t member;                  /* in rs.m */
	const struct an_sum_dev *dev;   /* NULL: the member failed */
};

struct cmp_side {
	const char *path;               /* borrowed from the set */
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

struct cmp {
	struct cmp_side s[2];
	struct align al;
	int w;                          /* chart columns the cols are for */
	int cursor;                     /* column */
	int64_t step;                   /* -1: the cursor's columns; else
					   each side at its peak of step k */
	int64_t at[2];                  /* the events compared */
	struct an_diff df;
	int df_ok;
	int64_t df_at[2];
	uint64_t sel, top;              /* the site list */
	int stacks;                     /* Enter: both stacks shown */
	int list_h;                     /* rows of the list last drawn */
};

struct rk {
	struct an_rankset rs;
	struct an_rs_report rp;
	struct rk_row *rows;            /* ok rows (sorted), then failed */
	size_t n_rows;
	struct align_trace *tr;         /* per ok row */
	struct align al;
	size_t sel, top;
	int by_rank;                    /* sorted by rank, else by peak */
	uint8_t *marked;                /* per member */
	int list_h;
	struct cmp *cmp;                /* the comparison open, or NULL */
	int cmp_only;                   /* started on two files */
	int help;
	int64_t want_device;            /* --device, -1 */
	size_t target;                  /* the row RK_OPEN opens */
	const struct tui_opts *o;       /* borrowed */
	char msg[256];
};

static void
rk_msgf(struct rk *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
rk_msgf(struct rk *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

void
rk_message(struct rk *r, const char *msg)
{
	char esc[sizeof r->msg];

	sv_escape(esc, sizeof esc, msg, strlen(msg));
	snprintf(r->msg, sizeof r->msg, "%s", esc);
}

static const char *
base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL && b[1] != '\0' ? b + 1 : path;
}

/* s escaped into buf (file text reaches the screen only so). */
static const char *
shown(char *buf, size_t size, const char *s)
{
	sv_escape(buf, size, s, strlen(s));
	return buf;
}

/* The last maxw columns of s (escaped text) after an ellipsis when it is
 * wider: the end of a call site (file, line, function) tells most. */
static const char *
fit_left(char *buf, size_t size, const char *s, int maxw, int utf8)
{
	int cols = 0;
	const char *p;

	for (p = s; *p != '\0'; p++)
		if (((unsigned char)*p & 0xc0) != 0x80)
			cols++;
	if (cols <= maxw || maxw < 4) {
		snprintf(buf, size, "%s", s);
		return buf;
	}
	/* skip cols - maxw + 1 characters, the ellipsis takes one */
	cols -= maxw - (utf8 ? 1 : 2);
	for (p = s; *p != '\0' && cols > 0; p++)
		if (((unsigned char)p[1] & 0xc0) != 0x80)
			cols--;
	snprintf(buf, size, "%s%s", utf8 ? "\xe2\x80\xa6" : "..", p);
	return buf;
}

/* ---- the overview's rows ------------------------------------------------- */

static const struct rk *sort_rk;

static int
cmp_by_rank(const void *a, const void *b)
{
	const struct rk_row *x = a, *y = b;
	int64_t rx = sort_rk->rs.m[x->member].rank;
	int64_t ry = sort_rk->rs.m[y->member].rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x->dev->device < y->dev->device ? -1 : 1;
}

static void
build_rows(struct rk *r)
{
	size_t i, n = 0;

	free(r->rows);
	r->rows = xcalloc(r->rp.n_rows + r->rs.n + 1, sizeof *r->rows);
	for (i = 0; i < r->rp.n_rows; i++) {
		r->rows[n].member = r->rp.rows[i].member;
		r->rows[n++].dev = r->rp.rows[i].dev;
	}
	if (r->by_rank) {
		sort_rk = r;
		qsort(r->rows, n, sizeof *r->rows, cmp_by_rank);
	}
	for (i = 0; i < r->rs.n; i++)
		if (r->rs.m[i].state != AN_RS_OK) {
			r->rows[n].member = i;
			r->rows[n++].dev = NULL;
		}
	r->n_rows = n;
	free(r->tr);
	r->tr = xcalloc(n + 1, sizeof *r->tr);
	for (i = 0; i < n && r->rows[i].dev != NULL; i++) {
		r->tr[i].events = r->rows[i].dev->events;
		r->tr[i].steps = r->rows[i].dev->steps;
		r->tr[i].n_steps = r->rows[i].dev->n_kept;
	}
	align_init(&r->al, r->tr, r->rp.n_rows, 1);
	if (r->sel >= n)
		r->sel = n > 0 ? n - 1 : 0;
}

/* ---- the comparison ------------------------------------------------------ */

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

static void
cmp_close(struct cmp *c)
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
	shown(name, sizeof name, base_name(m->path));
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

/* Opens the comparison of members a and b (devices da, db; -1: each
 * file's default). */
static int
cmp_open(struct rk *r, size_t a, int64_t da, size_t b, int64_t db,
    const struct tui_opts *o)
{
	struct cmp *c = xcalloc(1, sizeof *c);
	struct align_trace tr[2];
	char msg[1024];

	if (side_open(&c->s[0], &r->rs.m[a], da, o, msg, sizeof msg) != 0 ||
	    side_open(&c->s[1], &r->rs.m[b], db, o, msg, sizeof msg) != 0) {
		cmp_close(c);
		rk_message(r, msg);
		return -1;
	}
	tr[0] = c->s[0].tr;
	tr[1] = c->s[1].tr;
	align_init(&c->al, tr, 2, 1);
	c->step = -1;
	c->cursor = -1;
	c->df_at[0] = c->df_at[1] = INT64_MIN;
	cmp_close(r->cmp);
	r->cmp = c;
	return 0;
}

/* Columns for a chart w wide; the cursor starts on A's peak. */
static void
cmp_layout(struct cmp *c, int w)
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
	if (c->cursor < 0 || c->w <= 0)
		c->cursor = c->s[0].cols.peak >= 0 ? c->s[0].cols.peak : 0;
	else
		c->cursor = (int)((int64_t)c->cursor * w / c->w);
	if (c->cursor >= w)
		c->cursor = w - 1;
	c->w = w;
}

/* The event side x is compared after: its step peak in step mode, else
 * the highest in the cursor's column, else the last one before it. */
static int64_t
side_event(struct cmp *c, int x)
{
	struct cmp_side *sd = &c->s[x];
	int64_t e0, e1;

	if (c->step >= 0)
		return an_diff_step_at(sd->tl, &sd->steps, (uint64_t)c->step);
	if (c->cursor >= 0 && c->cursor < sd->cols.w &&
	    sd->cols.has[c->cursor])
		return sd->cols.arg[c->cursor];
	align_col_events(&c->al, &sd->tr, c->cursor, c->w, &e0, &e1);
	return e0 - 1;
}

static void
cmp_update(struct cmp *c)
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
cmp_step(struct rk *r, struct cmp *c, int64_t k)
{
	uint64_t na = c->s[0].steps.n, nb = c->s[1].steps.n;

	if (k < 0 || (uint64_t)k >= na || (uint64_t)k >= nb) {
		rk_msgf(r, "A has %" PRIu64 " step%s, B %" PRIu64, na,
		    na == 1 ? "" : "s", nb);
		return;
	}
	c->step = k;
	c->cursor = align_col(&c->al, &c->s[0].tr,
	    an_diff_step_at(c->s[0].tl, &c->s[0].steps, (uint64_t)k), c->w);
}

/* The step the cursor is in (on A's axis), or -1. */
static int64_t
cursor_step(struct cmp *c)
{
	int64_t e0, e1;

	if (c->step >= 0)
		return c->step;
	align_col_events(&c->al, &c->s[0].tr, c->cursor, c->w, &e0, &e1);
	if (e0 >= (int64_t)c->s[0].tl->n_events)
		return (int64_t)c->s[0].steps.n;
	return an_step_at(&c->s[0].steps, e0 > 0 ? e0 : 0);
}

static enum rk_result
cmp_key(struct rk *r, struct cmp *c, int key, enum action act)
{
	int page = c->list_h > 1 ? c->list_h - 1 : 1;
	int64_t k;

	if (c->stacks) {
		if (act == ACT_ENTER || act == ACT_BACK || act == ACT_QUIT) {
			c->stacks = 0;
			return RK_REDRAW;
		}
	}
	switch (key) {
	case '[':
	case ']':
		k = cursor_step(c);
		if (key == ']')
			k = c->step >= 0 || k < 0 ? k + 1 : k;
		else
			k = c->step >= 0 ? k - 1 : k;
		if (k < 0)
			k = 0;
		cmp_step(r, c, k);
		return RK_REDRAW;
	case 'P':
		c->step = -1;
		c->cursor = c->s[1].cols.peak >= 0 ? c->s[1].cols.peak : 0;
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
	case ACT_LAST: c->step = -1; c->cursor = c->w - 1; break;
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
			rk_msgf(r, "two files: no overview (q quits)");
			return RK_REDRAW;
		}
		cmp_close(c);
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

/* ---- drawing the comparison ---------------------------------------------- */

static void
title_bar(struct cellbuf *cb, int y, const char *text, int utf8)
{
	cellbuf_fill(cb, 0, y, cb->w, 1, utf8 ? 0x2500 : '-', UIC_TITLE, 0);
	cellbuf_printf(cb, 0, y, cb->w, UIC_TITLE, CB_A_BOLD, "%s %s ",
	    utf8 ? "\xe2\x94\x80" : "-", text);
}

static void
draw_chart(struct cellbuf *cb, struct cmp *c, int x, int y, int h,
    uint64_t scale, int utf8)
{
	struct cmp_side *sd = &c->s[x];
	char sz[32];
	int r;

	cellbuf_fill(cb, 0, y, LABEL_W, h, ' ', UIC_DEFAULT, 0);
	cellbuf_printf(cb, 0, y, LABEL_W - 1, UIC_DEFAULT, CB_A_BOLD, "%c %s",
	    x ? 'B' : 'A', fmt_size_short(sz, sizeof sz, sd->tl->peak));
	for (r = 0; r < h; r++)
		cellbuf_put(cb, LABEL_W - 1, y + r, utf8 ? 0x2595 : '|',
		    UIC_AXIS, 0);
	rv_area(cb, LABEL_W, y, h, &sd->cols, scale, c->cursor,
	    x ? UIC_BAND1 : UIC_BAND0, utf8);
}

static void
draw_cursor_line(struct cellbuf *cb, struct cmp *c, int y)
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
	uint64_t dv = row->b.live >= row->a.live ? row->b.live - row->a.live
						 : row->a.live - row->b.live;

	fmt_size_short(d, sizeof d, dv);
	snprintf(line, sizeof line, " %9s %9s %c%9s  %s",
	    fmt_size_short(a, sizeof a, row->a.live),
	    fmt_size_short(b, sizeof b, row->b.live),
	    dv == 0 ? ' ' : row->b.live > row->a.live ? '+' : '-', d,
	    fit_left(fit, sizeof fit, shown(lab, sizeof lab, row->label),
	    cb->w - 33, utf8));
	cellbuf_fill(cb, 0, y, cb->w, 1, ' ', sel ? UIC_SELECT : UIC_DEFAULT,
	    0);
	cellbuf_puts(cb, 0, y, line, cb->w, sel ? UIC_SELECT : UIC_DEFAULT,
	    sel ? CB_A_REVERSE : 0);
}

static void
draw_sites(struct cellbuf *cb, struct cmp *c, int y, int h, int utf8)
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
draw_stack(struct cellbuf *cb, struct cmp *c, int x, int y, int h, int utf8)
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
		    shown(name, sizeof name, base_name(c->s[x].path)));
		return;
	}
	cellbuf_printf(cb, 0, y, cb->w, UIC_DEFAULT, CB_A_BOLD,
	    " %c %s: %s in %" PRIu64 " block%s; the largest, %s, from:",
	    x ? 'B' : 'A', shown(name, sizeof name, base_name(c->s[x].path)),
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

static void
draw_cmp(struct cmp *c, struct cellbuf *cb, int utf8)
{
	char a[256], b[256], title[700], lab[512];
	int hc = (cb->h - 12) / 3, y, list_y, list_h;
	uint64_t scale;

	if (hc < 2)
		hc = 2;
	cmp_layout(c, cb->w - LABEL_W);
	cmp_update(c);
	snprintf(title, sizeof title, "Compare - A: %s - B: %s - by %s",
	    shown(a, sizeof a, base_name(c->s[0].path)),
	    shown(b, sizeof b, base_name(c->s[1].path)),
	    c->al.by_step ? "step" : "position");
	title_bar(cb, 0, title, utf8);
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
		    shown(lab, sizeof lab, c->df.rows[c->sel].label));
		title_bar(cb, y + 2, title, utf8);
		draw_stack(cb, c, 0, list_y, list_h / 2, utf8);
		draw_stack(cb, c, 1, list_y + list_h / 2,
		    list_h - list_h / 2, utf8);
	} else {
		snprintf(title, sizeof title, "Call sites by the change in "
		    "live bytes at the cursor, B - A - %" PRIu64 " site%s",
		    c->df.n_rows, c->df.n_rows == 1 ? "" : "s");
		title_bar(cb, y + 2, title, utf8);
		draw_sites(cb, c, list_y, list_h, utf8);
	}
}

/* ---- drawing the overview ------------------------------------------------ */

static void
draw_row(struct rk *r, struct cellbuf *cb, size_t i, int y, int sx,
    uint64_t scale, int utf8)
{
	const struct rk_row *row = &r->rows[i];
	const struct an_rs_member *m = &r->rs.m[row->member];
	char a[32], b[32], c[32], name[256], line[1024];
	unsigned color = i == r->sel ? UIC_SELECT : UIC_DEFAULT;
	unsigned attr = i == r->sel ? CB_A_REVERSE : 0;
	struct rv_cols cols;

	cellbuf_fill(cb, 0, y, cb->w, 1, ' ', UIC_DEFAULT, 0);
	if (row->dev == NULL) {
		char why[300];

		if (m->err.offset != SV_NO_OFFSET)
			snprintf(a, sizeof a, "byte %" PRIu64 ": ",
			    m->err.offset);
		else
			a[0] = '\0';
		snprintf(line, sizeof line, "%c%5" PRId64 "  failed: %s: %s%s",
		    r->marked[row->member] ? '*' : ' ', m->rank,
		    shown(name, sizeof name, base_name(m->path)), a,
		    shown(why, sizeof why, m->err.msg));
		cellbuf_puts(cb, 0, y, line, cb->w,
		    i == r->sel ? color : UIC_ERROR, attr);
		return;
	}
	if (row->dev->leak_site[0] != '\0')
		fmt_size_short(c, sizeof c, row->dev->leak_per_step);
	else
		snprintf(c, sizeof c, "%s", row->dev->flags & AN_SUM_F_JUDGED ?
		    "-" : "?");
	snprintf(line, sizeof line, "%c%5" PRId64 " %2u %7s %7s %3" PRIu64
	    " %6s ", r->marked[row->member] ? '*' : ' ', m->rank,
	    row->dev->device, fmt_size_short(a, sizeof a, row->dev->peak),
	    fmt_size_short(b, sizeof b, row->dev->reserved_max),
	    row->dev->ooms, c);
	cellbuf_fill(cb, 0, y, sx, 1, ' ', color, attr);
	cellbuf_puts(cb, 0, y, line, sx, color, attr);
	rv_cols_init(&cols, cb->w - sx - 1);
	rv_cols_summary(&cols, &r->al, &r->tr[i], row->dev);
	rv_sparkline(cb, sx, y, &cols, scale, utf8);
	rv_cols_free(&cols);
}

static void
draw_detail(struct rk *r, struct cellbuf *cb, int y, int utf8)
{
	const struct rk_row *row;
	const struct an_rs_member *m;
	const struct an_sum_dev *d;
	char a[32], b[32], c[32], e[32], name[256], site[600], line[800];
	char title[400], fit[600];

	cellbuf_fill(cb, 0, y, cb->w, DETAIL_H + 1, ' ', UIC_DEFAULT, 0);
	if (r->n_rows == 0)
		return;
	row = &r->rows[r->sel];
	m = &r->rs.m[row->member];
	d = row->dev;
	snprintf(title, sizeof title, "Rank %" PRId64 " - %s", m->rank,
	    shown(name, sizeof name, m->path));
	title_bar(cb, y, title, utf8);
	if (d == NULL) {
		cellbuf_puts(cb, 1, y + 1, "could not be read:", cb->w - 1,
		    UIC_ERROR, 0);
		shown(line, sizeof line, m->err.msg);
		cellbuf_puts(cb, 1, y + 2, line, cb->w - 1, UIC_DEFAULT, 0);
		return;
	}
	snprintf(line, sizeof line, " device %u, %s event%s, %"
	    PRIu64 " step%s (%s), %" PRIu64 " OOM%s", d->device,
	    sv_fmt_count(c, sizeof c, d->events), d->events == 1 ? "" : "s",
	    d->n_steps, d->n_steps == 1 ? "" : "s",
	    an_steps_source_text((int)d->steps_source), d->ooms,
	    d->ooms == 1 ? "" : "s");
	cellbuf_puts(cb, 0, y + 1, line, cb->w, UIC_DEFAULT, 0);
	fmt_event(e, sizeof e, d->peak_ev);
	snprintf(line, sizeof line, " peak %s at %s", sv_fmt_size(a,
	    sizeof a, d->peak), e);
	if (d->peak_step >= 0)
		snprintf(line + strlen(line), sizeof line - strlen(line),
		    ", step %" PRId64, d->peak_step + 1);
	if (d->flags & AN_SUM_F_TIME)
		snprintf(line + strlen(line), sizeof line - strlen(line),
		    ", +%.3fs", (double)d->peak_time / 1e6);
	snprintf(line + strlen(line), sizeof line - strlen(line),
	    "; %s at the end", sv_fmt_size(b, sizeof b, d->allocated_end));
	cellbuf_puts(cb, 0, y + 2, line, cb->w, UIC_DEFAULT, 0);
	fmt_event(e, sizeof e, d->reserved_max_ev);
	snprintf(line, sizeof line, " reserved at most %s at %s, %s of it "
	    "unused; %s at the end", sv_fmt_size(a, sizeof a,
	    d->reserved_max), e, sv_fmt_size(b, sizeof b, d->waste),
	    sv_fmt_size(c, sizeof c, d->reserved_end));
	cellbuf_puts(cb, 0, y + 3, line, cb->w, UIC_DEFAULT, 0);
	if (d->top_site[0] != '\0') {
		snprintf(line, sizeof line, " top at the peak: %s at ",
		    sv_fmt_size(a, sizeof a, d->top_bytes));
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s",
		    fit_left(fit, sizeof fit, shown(site, sizeof site,
		    d->top_site), cb->w - (int)strlen(line) - 1, utf8));
	} else {
		snprintf(line, sizeof line, " top at the peak: nothing live");
	}
	cellbuf_puts(cb, 0, y + 4, line, cb->w, UIC_DEFAULT, 0);
	if (d->leak_site[0] != '\0') {
		snprintf(line, sizeof line, " leak suspect: +%s a step (%"
		    PRIu64 " step%s) at ", sv_fmt_size(a, sizeof a,
		    d->leak_per_step), d->leak_steps,
		    d->leak_steps == 1 ? "" : "s");
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s",
		    fit_left(fit, sizeof fit, shown(site, sizeof site,
		    d->leak_site), cb->w - (int)strlen(line) - 1, utf8));
	}
	else if (d->flags & AN_SUM_F_JUDGED)
		snprintf(line, sizeof line, " leak suspect: none, no call site "
		    "grows every step");
	else
		snprintf(line, sizeof line, " leak suspect: not judged, fewer "
		    "than two complete steps");
	cellbuf_puts(cb, 0, y + 5, line, cb->w,
	    d->leak_site[0] != '\0' ? UIC_LEAK : UIC_DEFAULT, 0);
}

static const char *const help_lines[] = {
    "Rank overview",
    "  j/k, Up/Down, PgUp/PgDn, g/G   select a rank",
    "  Enter      open the rank's full view (Backspace comes back)",
    "  Space      mark a rank; c compares the two marked ranks",
    "  c          compare the two marked ranks (or the selected one",
    "             with the peak rank)",
    "  s          sort by peak / by rank",
    "  q          quit",
    "Comparison",
    "  h/l, H/L, g/G   move the cursor (both timelines)",
    "  p / P      A's peak / B's peak",
    "  ] / [      next / previous step: each file at its step peak",
    "  j/k        select a call site; Enter shows both stacks",
    "  q, Esc     back to the overview (quits on two files)",
};

static void
draw_help(struct cellbuf *cb, int utf8)
{
	size_t i;

	cellbuf_fill(cb, 0, 0, cb->w, cb->h, ' ', UIC_DEFAULT, 0);
	title_bar(cb, 0, "Help - ranks", utf8);
	for (i = 0; i < sizeof help_lines / sizeof help_lines[0] &&
	     (int)i + 1 < cb->h - 1; i++)
		cellbuf_puts(cb, 1, (int)i + 1, help_lines[i], cb->w - 1,
		    help_lines[i][0] == ' ' ? UIC_DEFAULT : UIC_TITLE, 0);
}

static void
draw_overview(struct rk *r, struct cellbuf *cb, int utf8)
{
	char title[600], name[256], words[512];
	int sx = 37, list_y = 3, i, x;
	uint64_t scale = r->rp.n_rows > 0 ? r->rp.rows[0].dev->peak : 0;
	size_t k;

	snprintf(title, sizeof title, "Ranks - %zu file%s%s%s - %s",
	    r->rs.n, r->rs.n == 1 ? "" : "s", r->rs.dir ? " in " : "",
	    r->rs.dir ? shown(name, sizeof name, r->rs.dir) : "",
	    r->al.by_step ? "aligned by step" : "aligned by position");
	title_bar(cb, 0, title, utf8);
	an_rankset_skew_text(&r->rs, &r->rp, words, sizeof words);
	cellbuf_fill(cb, 0, 1, cb->w, 2, ' ', UIC_DEFAULT, 0);
	/* the margin goes first when the sentence needs the whole line */
	x = (int)strlen(words) < cb->w ? 1 : 0;
	cellbuf_puts(cb, x, 1, words, cb->w - x, UIC_DEFAULT, CB_A_BOLD);
	cellbuf_printf(cb, 0, 2, cb->w, UIC_AXIS, 0, " %5s %2s %7s %7s %3s "
	    "%6s %s", "rank", "dv", "peak", "reservd", "OOM", "leak/s",
	    "timeline (peak marked)");
	r->list_h = cb->h - list_y - DETAIL_H - 2;
	if (r->list_h < 1)
		r->list_h = 1;
	if (r->sel < r->top)
		r->top = r->sel;
	if (r->sel >= r->top + (size_t)r->list_h)
		r->top = r->sel - (size_t)r->list_h + 1;
	for (i = 0; i < r->list_h; i++) {
		k = r->top + (size_t)i;
		if (k >= r->n_rows) {
			cellbuf_fill(cb, 0, list_y + i, cb->w, 1, ' ',
			    UIC_DEFAULT, 0);
			continue;
		}
		draw_row(r, cb, k, list_y + i, sx, scale, utf8);
	}
	draw_detail(r, cb, list_y + r->list_h, utf8);
}

static void
draw_status(struct rk *r, struct cellbuf *cb)
{
	char right[64];
	const char *left;
	int rw;

	cellbuf_fill(cb, 0, cb->h - 1, cb->w, 1, ' ', UIC_STATUS, 0);
	if (r->msg[0] != '\0')
		left = r->msg;
	else if (r->help)
		left = "? or Esc closes the help";
	else if (r->cmp != NULL && r->cmp->stacks)
		left = "Enter/Esc back to the sites  h/l move  q back";
	else if (r->cmp != NULL)
		left = "h/l move  ]/[ step  p/P peak  j/k site  Enter stacks  "
		       "q back";
	else
		left = "Enter open  Space mark  c compare  s sort  ? help  "
		       "q quit";
	if (r->cmp != NULL)
		snprintf(right, sizeof right, " %" PRIu64 "/%" PRIu64 " ",
		    r->cmp->df.n_rows ? r->cmp->sel + 1 : 0, r->cmp->df.n_rows);
	else
		snprintf(right, sizeof right, " %zu/%zu ", r->n_rows ?
		    r->sel + 1 : 0, r->n_rows);
	rw = (int)strlen(right);
	cellbuf_puts(cb, 0, cb->h - 1, left, cb->w - rw - 1, UIC_STATUS, 0);
	cellbuf_puts(cb, cb->w - rw, cb->h - 1, right, rw, UIC_STATUS,
	    CB_A_BOLD);
}

void
rk_draw(struct rk *r, struct cellbuf *cb, int utf8)
{
	if (r->help)
		draw_help(cb, utf8);
	else if (r->cmp != NULL)
		draw_cmp(r->cmp, cb, utf8);
	else
		draw_overview(r, cb, utf8);
	draw_status(r, cb);
}

/* ---- keys ---------------------------------------------------------------- */

/* c: the two marked ranks, or the selected one against the peak rank. */
static void
compare_marked(struct rk *r)
{
	size_t i, n = 0, pick[2] = {0, 0};
	int64_t dev[2] = {-1, -1};

	for (i = 0; i < r->n_rows; i++) {
		if (r->rows[i].dev == NULL || !r->marked[r->rows[i].member])
			continue;
		if (n < 2) {
			pick[n] = r->rows[i].member;
			dev[n] = r->rows[i].dev->device;
		}
		n++;
	}
	if (n == 0 && r->rp.n_rows > 1 && r->rows[r->sel].dev != NULL &&
	    r->rows[r->sel].dev != r->rp.rows[0].dev) {
		pick[0] = r->rp.rows[0].member;
		dev[0] = r->rp.rows[0].dev->device;
		pick[1] = r->rows[r->sel].member;
		dev[1] = r->rows[r->sel].dev->device;
		n = 2;
	}
	if (n != 2) {
		rk_msgf(r, "mark two ranks with Space (%zu marked), then c", n);
		return;
	}
	cmp_open(r, pick[0], dev[0], pick[1], dev[1], r->o);
}

static enum rk_result
overview_key(struct rk *r, int key, enum action act)
{
	size_t page = r->list_h > 1 ? (size_t)r->list_h - 1 : 1;

	switch (key) {
	case ' ':
		if (r->n_rows > 0) {
			r->marked[r->rows[r->sel].member] ^= 1;
			if (r->sel + 1 < r->n_rows)
				r->sel++;
		}
		return RK_REDRAW;
	case 'c':
		compare_marked(r);
		return RK_REDRAW;
	case 's':
		r->by_rank = !r->by_rank;
		build_rows(r);
		rk_msgf(r, "sorted by %s", r->by_rank ? "rank" : "peak");
		return RK_REDRAW;
	default:
		break;
	}
	switch (act) {
	case ACT_UP: if (r->sel > 0) r->sel--; break;
	case ACT_DOWN: if (r->sel + 1 < r->n_rows) r->sel++; break;
	case ACT_PAGE_UP: r->sel = r->sel > page ? r->sel - page : 0; break;
	case ACT_PAGE_DOWN:
		r->sel += page;
		if (r->sel >= r->n_rows)
			r->sel = r->n_rows > 0 ? r->n_rows - 1 : 0;
		break;
	case ACT_FIRST: r->sel = 0; break;
	case ACT_LAST: r->sel = r->n_rows > 0 ? r->n_rows - 1 : 0; break;
	case ACT_ENTER:
		if (r->n_rows == 0 || r->rows[r->sel].dev == NULL) {
			rk_msgf(r, "this file could not be read");
			break;
		}
		r->target = r->sel;
		return RK_OPEN;
	case ACT_QUIT: return RK_QUIT;
	case ACT_BACK: memset(r->marked, 0, r->rs.n); break;
	default: return RK_NONE;
	}
	return RK_REDRAW;
}

enum rk_result
rk_key(struct rk *r, int key, enum action act)
{
	enum rk_result res;

	r->msg[0] = '\0';
	if (act == ACT_HELP) {
		r->help = !r->help;
		return RK_REDRAW;
	}
	if (r->help) {
		if (act == ACT_BACK || act == ACT_QUIT)
			r->help = 0;
		return RK_REDRAW;
	}
	if (act == ACT_REDRAW)
		return RK_REDRAW;
	res = r->cmp != NULL ? cmp_key(r, r->cmp, key, act)
			     : overview_key(r, key, act);
	if (res == RK_NONE && key != 0)
		rk_msgf(r, "key %s does nothing here; ? shows the keys",
		    keys_name(key));
	return res == RK_NONE ? RK_REDRAW : res;
}

void
rk_target(const struct rk *r, const char **path, uint32_t *device)
{
	const struct rk_row *row = &r->rows[r->target];

	*path = r->rs.m[row->member].path;
	*device = row->dev->device;
}

const char *
rk_hint(void)
{
	return "Backspace: back to the ranks  h/l move  p peak  ? help  q quit";
}

/* ---- opening ------------------------------------------------------------- */

struct load_ctx {
	rk_progress_fn fn;
	void *ctx;
};

static int
load_progress(void *ctx, const struct an_rankset_progress *p)
{
	struct load_ctx *lc = ctx;
	char line[160];
	int pct = p->bytes_total ? (int)(p->bytes_done * 100 / p->bytes_total)
				 : 0;

	snprintf(line, sizeof line, "Indexing ranks: %zu of %zu done, %zu "
	    "building", p->done, p->total, p->building);
	return lc->fn(lc->ctx, line, pct);
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int
rk_open(struct rk **out, const struct tui_opts *o, rk_progress_fn fn,
    void *ctx, char *msg, size_t ml)
{
	struct rk *r = xcalloc(1, sizeof *r);
	struct an_rankset_opts ro;
	struct idx_opts io;
	struct load_ctx lc = {fn, ctx};
	struct sv_error err;
	char name[256];

	*out = NULL;
	r->o = o;
	sv_error_clear(&err);
	r->want_device = o->device;
	if (an_rankset_collect(o->files, o->n_files, &r->rs, &err) != 0) {
		snprintf(msg, ml, "%s: %s", shown(name, sizeof name, o->file),
		    err.msg);
		free(r);
		return sv_errcode_status(err.code);
	}
	memset(&io, 0, sizeof io);
	io.cache_dir = o->cache_dir;
	io.no_cache = o->no_cache;
	memset(&ro, 0, sizeof ro);
	ro.io = &io;
	ro.progress = load_progress;
	ro.progress_ctx = &lc;
	ro.child_exit = _exit;
	fn(ctx, "Opening ranks", 0);
	if (an_rankset_load(&r->rs, &ro, &err) != 0) {
		snprintf(msg, ml, "%s", err.msg);
		an_rankset_free(&r->rs);
		free(r);
		return sv_errcode_status(err.code);
	}
	an_rankset_report(&r->rs, o->device, &r->rp);
	r->marked = xcalloc(r->rs.n + 1, 1);
	build_rows(r);
	r->cmp_only = o->n_files == 2 && !is_dir(o->files[0]) &&
	    !is_dir(o->files[1]) && r->rp.n_failed == 0;
	if (r->cmp_only) {
		/* the files in the order given, A then B */
		size_t a = strcmp(r->rs.m[0].path, o->files[0]) == 0 ? 0 : 1;

		if (cmp_open(r, a, o->device, 1 - a, o->device, o) != 0)
			r->cmp_only = 0;
	}
	*out = r;
	return 0;
}

void
rk_free(struct rk *r)
{
	if (r == NULL)
		return;
	cmp_close(r->cmp);
	an_rankset_report_free(&r->rp);
	an_rankset_free(&r->rs);
	free(r->rows);
	free(r->tr);
	free(r->marked);
	free(r);
}
