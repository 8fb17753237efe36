/*
 * Active Memory Timeline drawing: columns of stacked bands, the y axis,
 * the x axis row (cursor, marks, the picked band's lifetime, annotation
 * ticks), annotation names, axis labels; the legend is in tl_legend.c.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/fmt.h"
#include "render/tl_int.h"
#include "util/escape.h"
#include "util/search.h"
#include "util/xalloc.h"

static const uint32_t eighths[] = {' ', 0x2581, 0x2582, 0x2583, 0x2584,
    0x2585, 0x2586, 0x2587, 0x2588};

#define G_HAIR_UTF8 0x2501    /* ━ a picked band thinner than a cell */
#define G_MARKER_UTF8 0x25b8  /* ▸ the picked band's level */

/* ---- one column ---------------------------------------------------------- */

struct col_ctx {
	const struct tl_model *m;
	const struct tl_view *v;
	const struct tl_frame *fr;
	struct cellbuf *cb;
	int ybot;           /* row of the bottom plot row */
	struct tl_band *bands;
};

/* Fills the cells of column x from bands[0..n); returns 1 when a cell
 * shows the picked band. */
static int
fill_cells(struct col_ctx *c, int x, const struct tl_band *bands, int n)
{
	const struct tl_view *v = c->v;
	double rb = c->fr->row_bytes, ylo = (double)c->fr->ylo;
	uint64_t top = n > 0 ? bands[n - 1].hi : 0;
	int r, j = 0, shown = 0, set;

	for (r = 0; r < c->fr->ph && n > 0; r++) {
		double lo = ylo + r * rb, mid = lo + rb / 2;
		const struct tl_band *b;

		if (lo >= (double)top)
			break;
		while (j + 1 < n && (double)bands[j].hi <= mid)
			j++;
		/* the highlighted set rests at the bottom: wherever it has
		 * bytes its cell shows it, however thin (a leak of a few
		 * bytes is a row of marks, not only ticks on the axis) */
		set = r == 0 && c->fr->ylo == 0 &&
		    bands[0].kind == TL_PICK_SET && bands[0].hi > 0;
		if (mid < (double)top) {
			b = set ? &bands[0] : &bands[j];
			cellbuf_put(c->cb, x, c->ybot - r, tl_band_glyph(v, b),
			    tl_band_color(b), 0);
		} else {
			int e8 = (int)(((double)top - lo) * 8 / rb);
			uint32_t g;

			if (e8 <= 0 && !set)
				continue;
			if (e8 <= 0)
				e8 = 1;
			b = set ? &bands[0] : &bands[n - 1];
			if (set)
				g = tl_band_glyph(v, b); /* a mark, whole */
			else if (v->utf8)
				g = eighths[e8 > 8 ? 8 : e8];
			else
				g = e8 >= 4 ? tl_band_glyph(v, b) : '_';
			cellbuf_put(c->cb, x, c->ybot - r, g, tl_band_color(b),
			    0);
		}
		shown |= b->hilite;
	}
	return shown;
}

/* Row of byte level y in the plot, or -1 when outside it. */
static int
row_of(const struct tl_frame *fr, double y)
{
	int r;

	if (y < (double)fr->ylo || y >= (double)fr->yhi || fr->row_bytes <= 0)
		return -1;
	r = (int)((y - (double)fr->ylo) / fr->row_bytes);
	return r < fr->ph ? r : fr->ph - 1;
}

/* Draws column x for the state after event ev, whose stacked total is
 * top; returns 1 when the picked band is in it. */
static int
draw_column(struct col_ctx *c, int x, int64_t ev, uint64_t top,
    uint64_t res)
{
	const struct tl_view *v = c->v;
	int n = tl_bands_total(c->m, v, c->fr, ev, top, c->bands,
	    TL_MAX_COL_BANDS);
	int shown = fill_cells(c, x, c->bands, n), i, r, present = 0;
	struct cell *cell;

	for (i = 0; i < n; i++) {
		if (!c->bands[i].hilite)
			continue;
		present = 1;
		/* thinner than a cell: a hairline at its level */
		r = row_of(c->fr, ((double)c->bands[i].lo +
		    (double)c->bands[i].hi) / 2);
		if (!shown && r >= 0)
			cellbuf_put(c->cb, x, c->ybot - r, v->utf8 ?
			    G_HAIR_UTF8 : '=', UIC_HILITE, 0);
	}
	/* over reserved memory the set is drawn on top, from the bottom */
	if (v->stack == TL_STACK_SEGMENT && v->hl != NULL) {
		uint64_t set = tl_hilite_bytes(v->hl, ev);
		struct tl_band sb = {0, set, TL_PICK_SET, 0, 0, 0, 0, 0, 0, 0};

		for (r = 0; r < c->fr->ph; r++)
			if ((double)c->fr->ylo + (r + 0.5) * c->fr->row_bytes <
			    (double)set)
				cellbuf_put(c->cb, x, c->ybot - r,
				    tl_band_glyph(v, &sb), UIC_LEAK, 0);
	}
	/* the reserved line, one unbroken line over the bands' cells at its
	 * level (the summary's shade, a band's top): only the picked band
	 * and the leaked set stay above it. In the segment mode it is the
	 * top of the stack: drawn over empty and partly filled cells only. */
	r = row_of(c->fr, (double)res);
	if (res == c->fr->yhi && res > c->fr->ylo)
		r = c->fr->ph - 1;
	if (res > 0 && r >= 0 && (cell = cellbuf_at(c->cb, x, c->ybot - r)) &&
	    (cell->ch == ' ' || (cell->ch >= 0x2581 && cell->ch < 0x2588) ||
	    cell->ch == '_' || (v->stack != TL_STACK_SEGMENT &&
	    cell->color != UIC_HILITE && cell->color != UIC_LEAK)))
		cellbuf_put(c->cb, x, c->ybot - r, v->utf8 ? 0x2500 : '-',
		    UIC_RESERVED, 0);
	return present;
}

/* ---- axes ---------------------------------------------------------------- */

static void
label_for(const struct tl_model *m, const struct tl_view *v, int64_t ev,
    char *buf, size_t size)
{
	if (tl_use_time(m, v) && ev >= 0)
		fmt_duration(buf, size, tl_time_of(m, ev) - tl_time_of(m, 0));
	else
		fmt_event(buf, size, ev);
}

/* Marks (tl_view.marks) in the view on the x axis row at (px, y). */
static void
draw_marks(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int px, int y, int pw)
{
	uint64_t i;
	int sel = -1, c;

	if (v->marks == NULL)
		return;
	for (i = sv_count_le_i64(v->marks, v->n_marks, v->ev0 - 1);
	    i < v->n_marks && v->marks[i] < v->ev1; i++) {
		c = tl_event_col(m, v, pw, v->marks[i]);
		if (c < 0)
			continue;
		if (v->marks[i] == v->mark_sel)
			sel = c;
		cellbuf_put(cb, px + c, y, v->utf8 ? 0x25b2 : '^', UIC_MARK, 0);
	}
	if (sel >= 0)
		cellbuf_put(cb, px + sel, y, v->utf8 ? 0x25b2 : '^', UIC_HILITE,
		    0);
}

/* First annotation at or after event ev. */
static uint64_t
annot_from(const struct tl_model *m, int64_t ev)
{
	uint64_t lo = 0, hi = m->n_annots;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (m->annots[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Annotations column by column (O(columns x log annotations), however
 * many steps the trace has): on the axis row ┬ where one starts in the
 * column (else ┴ where one ends); on the names row (y_names >= 0) the
 * name of the first that starts in it, when the row is free there. */
static void
draw_annots(const struct tl_model *m, const struct tl_view *v,
    const struct tl_cols *cols, struct cellbuf *cb, int px, int y_axis,
    int y_names, int pw)
{
	char esc[256];
	const char *name;
	uint64_t i;
	int c, end = 0, start;
	int64_t lo, hi;

	if (m->n_annots == 0)
		return;
	for (c = 0; c < pw; c++) {
		lo = cols->lo[c];
		hi = cols->lo[c + 1];
		if (hi <= lo)
			continue;
		start = -1;
		for (i = annot_from(m, lo); i < m->n_annots &&
		    m->annots[i].ev < hi; i++)
			if (m->annots[i].stage == SNAP_STAGE_START) {
				start = (int)i;
				break;
			}
		i = annot_from(m, lo);
		if (i >= m->n_annots || m->annots[i].ev >= hi)
			continue;
		cellbuf_put(cb, px + c, y_axis, start >= 0 ? (v->utf8 ?
		    0x252c : '[') : (v->utf8 ? 0x2534 : ']'), UIC_MARK, 0);
		if (start < 0 || y_names < 0 || c < end)
			continue;
		name = snap_str(m->snap, m->annots[start].name);
		sv_escape(esc, sizeof esc, name, strlen(name));
		end = c + cellbuf_puts(cb, px + c, y_names, esc, pw - c,
		    UIC_MARK, 0) + 1;
	}
}

/* Columns of the picked element's lifetime, or of every column where
 * the picked band is present. */
static void
draw_lifetime(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int px, int y, int pw, const uint8_t *present)
{
	uint64_t k = v->pick.kind == TL_PICK_ELEM ? v->pick.id : v->sel_elem;
	uint64_t n = v->stack == TL_STACK_SEGMENT ? m->segs.n : m->tl->n_elems;
	int c;

	if (v->pick.kind != TL_PICK_NONE && v->pick.kind != TL_PICK_ELEM) {
		for (c = 0; c < pw; c++)
			if (present[c])
				cellbuf_put(cb, px + c, y, v->utf8 ? 0x2501 :
				    '=', UIC_HILITE, 0);
		return;
	}
	if (k != TL_NO_ELEM && k < n &&
	    (v->pick.kind == TL_PICK_ELEM || v->stack != TL_STACK_SEGMENT)) {
		int64_t a, f;
		int ca, cf;

		tl_layer_life(m, v->stack, k, &a, &f);
		a = a < v->ev0 ? v->ev0 : a;
		f = f < 0 || f >= v->ev1 ? v->ev1 - 1 : f;
		ca = tl_event_col(m, v, pw, a);
		cf = tl_event_col(m, v, pw, f);

		if (a <= f && ca >= 0 && cf >= 0)
			cellbuf_fill(cb, px + ca, y, cf - ca + 1, 1,
			    v->utf8 ? 0x2501 : '=', UIC_HILITE, 0);
	}
}

/* The picked band's level at the cursor, on the y axis. */
static void
draw_pick_marker(const struct tl_model *m, const struct tl_view *v,
    const struct tl_frame *fr, struct cellbuf *cb, int px, int ybot,
    struct tl_band *bands)
{
	int n, i, r;

	if (v->pick.kind == TL_PICK_NONE || v->cursor < 0)
		return;
	n = tl_bands_at(m, v, fr, v->cursor, bands, TL_MAX_COL_BANDS);
	for (i = 0; i < n; i++) {
		if (!bands[i].hilite || (bands[i].kind == TL_PICK_ELEM &&
		    v->pick.kind != TL_PICK_ELEM))
			continue;
		r = row_of(fr, ((double)bands[i].lo + (double)bands[i].hi) / 2);
		if (r >= 0)
			cellbuf_put(cb, px - 1, ybot - r, v->utf8 ?
			    G_MARKER_UTF8 : '>', UIC_HILITE, 0);
		return;
	}
}

static void
draw_yaxis(const struct tl_view *v, const struct tl_frame *fr,
    struct cellbuf *cb, int x, int y)
{
	char buf[FMT_BUF];
	int r, ph = fr->ph;

	for (r = 0; r < ph; r++)
		cellbuf_put(cb, x + TL_YAXIS_W - 1, y + r, v->utf8 ? 0x2595 :
		    '|', UIC_AXIS, 0);
	fmt_size_short(buf, sizeof buf, fr->yhi);
	cellbuf_printf(cb, x, y, TL_YAXIS_W - 1, UIC_AXIS, 0, "%5s", buf);
	if (ph >= 5) {
		fmt_size_short(buf, sizeof buf, fr->ylo + (fr->yhi -
		    fr->ylo) / 2);
		cellbuf_printf(cb, x, y + ph / 2, TL_YAXIS_W - 1, UIC_AXIS, 0,
		    "%5s", buf);
	}
	if (ph >= 2) {
		if (fr->ylo > 0)
			fmt_size_short(buf, sizeof buf, fr->ylo);
		else
			snprintf(buf, sizeof buf, "0");
		cellbuf_printf(cb, x, y + ph - 1, TL_YAXIS_W - 1, UIC_AXIS, 0,
		    "%5s", buf);
	}
}

/* The label row: first event, last event, cursor. */
static void
draw_labels(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int px, int y, int pw, int cc)
{
	char buf[FMT_BUF], lab[FMT_BUF + 8];
	int len, pos, r;

	/* a cursor off the view (panned away) is marked at the end it
	 * went past, with its event, in the place of that end's label */
	if (cc < 0 && v->cursor >= 0 && v->cursor < v->ev0) {
		label_for(m, v, v->cursor, buf, sizeof buf);
		snprintf(lab, sizeof lab, "%s%s", v->utf8 ? "\xe2\x97\x82" :
		    "<", buf);
		len = cellbuf_puts(cb, px, y, lab, pw, UIC_CURSOR, 0);
	} else {
		label_for(m, v, v->ev0, buf, sizeof buf);
		len = cellbuf_puts(cb, px, y, buf, pw, UIC_AXIS, 0);
	}
	if (cc < 0 && v->cursor >= v->ev1) {
		label_for(m, v, v->cursor, buf, sizeof buf);
		snprintf(lab, sizeof lab, "%s%s", buf, v->utf8 ?
		    "\xe2\x96\xb8" : ">");
		pos = px + pw - sv_utf8_cells(lab);
		if (pos > px + len + 1)
			cellbuf_puts(cb, pos, y, lab, pw, UIC_CURSOR, 0);
		else
			pos = px + pw;
	} else {
		label_for(m, v, v->ev1 - 1, buf, sizeof buf);
		pos = px + pw - (int)strlen(buf);
		if (pos > px + len + 1)
			cellbuf_puts(cb, pos, y, buf, pw, UIC_AXIS, 0);
		else
			pos = px + pw;
	}
	if (cc >= 0) {
		label_for(m, v, v->cursor, buf, sizeof buf);
		snprintf(lab, sizeof lab, "^%s", buf);
		r = (int)strlen(lab);
		if (px + cc + r >= pos)
			cc = pos - px - r - 1;
		if (px + cc > px + len)
			cellbuf_puts(cb, px + cc, y, lab, r, UIC_CURSOR, 0);
	}
}

/* The cursor column (reversed cells, a line through empty ones) and its
 * mark on the axis row; returns its column or -1. */
static int
draw_cursor(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int px, int y, int pw, int ph)
{
	int cc = tl_event_col(m, v, pw, v->cursor), r;

	if (cc < 0) {
		/* panned away: an arrow at the end of the axis it is past */
		if (v->cursor >= 0 && v->cursor < v->ev0)
			cellbuf_put(cb, px, y + ph, v->utf8 ? 0x25c2 : '<',
			    UIC_CURSOR, 0);
		else if (v->cursor >= v->ev1)
			cellbuf_put(cb, px + pw - 1, y + ph, v->utf8 ? 0x25b8 :
			    '>', UIC_CURSOR, 0);
		return -1;
	}
	for (r = 0; r < ph; r++) {
		struct cell *c = cellbuf_at(cb, px + cc, y + r);

		if (c == NULL)
			continue;
		if (c->ch == ' ')
			cellbuf_put(cb, px + cc, y + r, v->utf8 ? 0x2502 : '|',
			    UIC_CURSOR, 0);
		else
			c->attr |= CB_A_REVERSE;
	}
	cellbuf_put(cb, px + cc, y + ph, v->utf8 ? 0x253c : '+', UIC_CURSOR,
	    0);
	return cc;
}

/* ---- the frame ----------------------------------------------------------- */

/* Rows of the parts below the plot: *names (annotation names), *spans
 * (phase spans) and *leg (legend), shrunk until the plot has at least 3
 * rows when it can. */
static int
plot_rows(const struct tl_model *m, const struct tl_view *v, int w, int h,
    int *names, int *spans, int *leg)
{
	int ph;

	*names = m->n_annots > 0 && h >= 8;
	*spans = tl_phases_rows(v, h);
	*leg = tl_legend_rows(m, v, w, h);
	ph = h - 2 - *names - *spans - *leg;
	while (ph < 3 && *leg > 0) {
		(*leg)--;
		ph++;
	}
	if (ph < 3 && *spans) {
		*spans = 0;
		ph++;
	}
	if (ph < 3 && *names) {
		*names = 0;
		ph++;
	}
	return ph;
}

void
tl_render(const struct tl_model *m, const struct tl_view *v,
    struct cellbuf *cb, int x, int y, int w, int h, struct tl_frame *out)
{
	struct tl_frame local, *fr = out != NULL ? out : &local;
	int pw = tl_plot_width(w), ph, names, spans, leg, c, cc;
	int px = x + TL_YAXIS_W;
	const struct tl_cols *cols;
	uint8_t *present;
	struct col_ctx cx;

	if (out == NULL) {
		memset(&local, 0, sizeof local);
		local.rank_stack = -1;
	}
	cellbuf_fill(cb, x, y, w, h, ' ', UIC_DEFAULT, 0);
	ph = plot_rows(m, v, w, h, &names, &spans, &leg);
	fr->pw = pw;
	fr->ph = ph;
	fr->legend_rows = leg;
	if (pw < 2 || ph < 1 || v->ev1 <= v->ev0)
		return;
	present = xcalloc(pw, 1);
	cols = tl_columns(m, v, pw);
	fr->peak_ev = cols->peak_ev;
	fr->yfit = cols->yfit;
	if (v->ymax > v->ylo) {
		fr->ylo = v->ylo;
		fr->yhi = v->ymax;
	} else {
		fr->ylo = 0;
		fr->yhi = cols->yfit;
	}
	fr->row_bytes = (double)(fr->yhi - fr->ylo) / ph;
	tl_rank(m, v, fr);
	cx.m = m;
	cx.v = v;
	cx.fr = fr;
	cx.cb = cb;
	cx.ybot = y + ph - 1;
	/* not zeroed: a column's bands are written before they are read
	 * (push_band()), and zeroing this 192 KiB at every frame showed in
	 * a key's profile */
	cx.bands = xmalloc(TL_MAX_COL_BANDS * sizeof *cx.bands);
	for (c = 0; c < pw; c++)
		present[c] = (uint8_t)draw_column(&cx, px + c, cols->ev[c],
		    cols->top[c], cols->res[c]);
	if (v->overlay != NULL)
		tl_overlay_draw(v, fr, cols, cb, px, cx.ybot);
	draw_yaxis(v, fr, cb, x, y);
	cellbuf_fill(cb, px, y + ph, pw, 1, v->utf8 ? 0x2500 : '-', UIC_AXIS,
	    0);
	cellbuf_put(cb, px - 1, y + ph, v->utf8 ? 0x2514 : '+', UIC_AXIS, 0);
	draw_annots(m, v, cols, cb, px, y + ph, names ? y + ph + 1 : -1, pw);
	draw_lifetime(m, v, cb, px, y + ph, pw, present);
	draw_marks(m, v, cb, px, y + ph, pw);
	cc = draw_cursor(m, v, cb, px, y, pw, ph);
	draw_pick_marker(m, v, fr, cb, px, cx.ybot, cx.bands);
	if (spans)
		tl_phases_draw(v, cols, cb, px, y + ph + 1 + names, pw);
	draw_labels(m, v, cb, px, y + ph + 1 + names + spans, pw, cc);
	if (leg > 0)
		tl_legend_draw(m, v, fr, cb, x, y + ph + 2 + names + spans, w,
		    leg);
	free(cx.bands);
	free(present);
}
