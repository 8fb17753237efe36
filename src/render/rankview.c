/*
 * Sparklines and area charts of ranks over a shared axis. See
 * rankview.h.
 */
#include "config.h"

#include "render/rankview.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static const uint32_t eighths[] = {' ', 0x2581, 0x2582, 0x2583, 0x2584,
    0x2585, 0x2586, 0x2587, 0x2588};
static const char ascii_levels[] = ".,:-=+*#";

void
rv_cols_init(struct rv_cols *c, int w)
{
	int i;

	memset(c, 0, sizeof *c);
	c->w = w > 0 ? w : 0;
	c->val = xcalloc((size_t)c->w + 1, sizeof *c->val);
	c->arg = xcalloc((size_t)c->w + 1, sizeof *c->arg);
	c->has = xcalloc((size_t)c->w + 1, 1);
	for (i = 0; i < c->w; i++)
		c->arg[i] = -1;
	c->peak = -1;
}

void
rv_cols_free(struct rv_cols *c)
{
	free(c->val);
	free(c->arg);
	free(c->has);
	memset(c, 0, sizeof *c);
}

void
rv_cols_summary(struct rv_cols *c, const struct align *a,
    const struct align_trace *t, const struct an_sum_dev *d)
{
	uint32_t k;
	int col, c1;

	if (c->w == 0 || d->events == 0)
		return;
	for (k = 0; k < d->n_spark; k++) {
		int64_t e0, e1;
		uint64_t v = an_sum_spark_value(d, k);

		an_sum_sample_events(d, k, &e0, &e1);
		if (e1 < e0)
			continue;
		c1 = align_col(a, t, e1, c->w);
		for (col = align_col(a, t, e0, c->w); col <= c1; col++) {
			c->has[col] = 1;
			if (v > c->val[col])
				c->val[col] = v;
		}
	}
	if (d->peak_ev >= 0)
		c->peak = align_col(a, t, d->peak_ev, c->w);
}

void
rv_cols_timeline(struct rv_cols *c, const struct align *a,
    const struct align_trace *t, const struct idx_timeline *tl)
{
	int col;

	for (col = 0; col < c->w; col++) {
		int64_t e0, e1, e;

		align_col_events(a, t, col, c->w, &e0, &e1);
		for (e = e0; e <= e1; e++) {
			uint64_t v = idx_tl_total(tl, e);

			if (!c->has[col] || v > c->val[col]) {
				c->val[col] = v;
				c->arg[col] = e;
			}
			c->has[col] = 1;
		}
	}
	if (tl->peak_ev >= 0)
		c->peak = align_col(a, t, tl->peak_ev, c->w);
}

/* Eighths of a cell (0..8 * rows) for v against scale. */
static uint64_t
eighths_of(uint64_t v, uint64_t scale, int rows)
{
	if (scale == 0)
		return 0;
	if (v >= scale)
		return (uint64_t)rows * 8;
	return (uint64_t)((unsigned __int128)v * ((uint64_t)rows * 8) / scale);
}

void
rv_sparkline(struct cellbuf *cb, int x, int y, const struct rv_cols *c,
    uint64_t scale, int utf8)
{
	int i;

	for (i = 0; i < c->w; i++) {
		uint64_t e8 = eighths_of(c->val[i], scale, 1);
		uint32_t g;

		if (!c->has[i]) {
			cellbuf_put(cb, x + i, y, ' ', UIC_DEFAULT, 0);
			continue;
		}
		if (e8 == 0)
			e8 = 1; /* the trace is there, if low */
		g = utf8 ? eighths[e8] : (uint32_t)ascii_levels[e8 - 1];
		if (i == c->peak)
			cellbuf_put(cb, x + i, y, g, UIC_MARK, CB_A_REVERSE);
		else
			cellbuf_put(cb, x + i, y, g, UIC_BAND0, 0);
	}
}

void
rv_area(struct cellbuf *cb, int x, int y, int h, const struct rv_cols *c,
    uint64_t scale, int cursor, unsigned color, int utf8)
{
	int i, r;

	for (i = 0; i < c->w; i++) {
		uint64_t e8 = c->has[i] ? eighths_of(c->val[i], scale, h) : 0;
		unsigned attr = i == cursor ? CB_A_REVERSE : 0;

		if (c->has[i] && e8 == 0 && c->val[i] > 0)
			e8 = 1;
		for (r = 0; r < h; r++) {
			/* row r from the bottom holds eighths 8r .. 8r + 8 */
			uint64_t base = (uint64_t)r * 8;
			uint32_t g = ' ';

			if (e8 >= base + 8)
				g = utf8 ? 0x2588 : '#';
			else if (e8 > base)
				g = utf8 ? eighths[e8 - base] :
				    (e8 - base >= 4 ? '+' : '.');
			cellbuf_put(cb, x + i, y + h - 1 - r, g,
			    i == c->peak && g != ' ' ? UIC_MARK : color, attr);
		}
	}
}

void
rv_axis(struct cellbuf *cb, int x, int y, int w, const struct align *a,
    int cursor, int utf8)
{
	uint32_t u;
	int i;

	for (i = 0; i < w; i++)
		cellbuf_put(cb, x + i, y, utf8 ? 0x2500 : '-', UIC_AXIS, 0);
	if (a->by_step)
		for (u = 0; u <= a->units; u++) {
			int col = align_unit_col(a, u, w);

			if (col >= w)
				col = w - 1;
			cellbuf_put(cb, x + col, y, utf8 ? 0x253c : '+',
			    UIC_AXIS, 0);
		}
	if (cursor >= 0 && cursor < w)
		cellbuf_put(cb, x + cursor, y, '^', UIC_CURSOR, CB_A_BOLD);
}
